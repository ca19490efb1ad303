#!/bin/sh
# make bench: installs the bench dependencies (ISA-L, the reference the
# parity kernels are measured against), then runs each benchmark in turn.
# O is the build folder.  Add a step per bench binary below.
set -eu
O=${O:-build}
cd "$(dirname "$0")/.."
scripts/install-deps bench

# Parity kernels (XOR, P+Q, two-erasure recovery) vs ISA-L, memory rates.
"$O"/bench/bench_parity

# Stripe engine: full-stripe write, read and degraded read over memory members.
"$O"/bench/bench_vol

# Scrub (RAID-6 and RAID-5 of 6 x 256 MiB image files in page cache).
# Reference: the same member files read at once, one `cat FILE > /dev/null`
# per file (a scrub must read every member byte once); ratio = reference
# time / scrub time, target >= 0.9; best of 5 runs taken in alternating order.
"$O"/bench/bench_scrub 256 6 5

# Rebuild of one member of a RAID-6 of 6 x 256 MiB image files in page cache
# (/dev/shm).  Reference: the 5 surviving files read at once (one cat each)
# while dd writes one member's bytes to a new file in the same folder --
# the least a rebuild must do; ratio = reference time / rebuild time (the
# ratio to reading alone is printed too); best of 5 runs, alternating.
"$O"/bench/bench_rebuild 256 6 5

# Write journal cost (spec/journal.md): full-stripe and random 4 KiB write
# throughput through rk_array with the journal on and off, member files on
# a real file system ($TMPDIR or /var/tmp).
"$O"/bench/bench_journal "${TMPDIR:-/var/tmp}" 64 400

# Reshape (raid-resize --add): RAID-5 4 -> RAID-6 5 against a plain copy
# of the same member files (cat), in /dev/shm; ratio = copy time / reshape
# time, target >= 0.9, best of 3 alternating; RAID-5 4 -> 5 and RAID-10
# 4 -> 5 once each for information.
scripts/bench-resize.sh 256

# Peak RSS of export, scrub, rebuild, reshape (RAID-6, RAID-5, RAID-0 of 5
# and 255 sparse members of 4 MiB; RAID-6 of 6 x 512 MiB) and --detect, each
# beside the target
# < 64 MiB.
scripts/bench-memory.sh
