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

# Stripe engine: full-stripe write, read and degraded read over memory
# members; then (issue 13 part 4) RAID-5 of 9 and RAID-6 of 10 reading
# against RAID-0 of 8 (same data members, 64 KiB chunks; target >= 0.9) and
# degraded reads against healthy ones (target >= 0.6), best of 7 alternating.
"$O"/bench/bench_vol 32 7

# Export (issue 13 part 1): raid-assemble --export of a RAID-6 of 6 x 256
# MiB member files in ${TMPDIR:-/var/tmp} (a real disk, for the cold cases)
# against the reference: every member read at once (one reader each), the
# data members' worth written into one output file.  Healthy, 1 and 2
# members missing; in page cache (best of 5) and with caches dropped
# before every run (root only, else SKIP; best of 2); alternating order.
# Targets: >= 0.9 healthy, >= 0.8 missing members.
"$O"/bench/bench_export "${TMPDIR:-/var/tmp}" 256 5 2

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
# throughput through rk_array with the journal on and off side by side,
# member files on a real file system ($TMPDIR or /var/tmp); each cost beside
# its target (group commit: unflushed random writes <= 15 %, flushed each
# <= 20 %, RAID-5/6/10), best of 3 runs in alternating order.
"$O"/bench/bench_journal "${TMPDIR:-/var/tmp}" 64 400 3

# Reshape (raid-resize --add): RAID-5 4 -> RAID-6 5 against a plain copy
# of the same member files (cat), in /dev/shm; ratio = copy time / reshape
# time, target >= 0.9, best of 3 alternating; RAID-5 4 -> 5 and RAID-10
# 4 -> 5 once each for information.
scripts/bench-resize.sh 256

# Peak RSS of export, scrub, rebuild, reshape (RAID-6, RAID-5, RAID-0 of 5
# and 255 sparse members of 4 MiB; RAID-6 of 6 x 512 MiB) and --detect, each
# beside the target < 64 MiB.
scripts/bench-memory.sh

# Members with a bandwidth of their own, like disks: 6 loop devices of 256
# MiB throttled to 150 MB/s each (cgroup v1 blkio; root).  raid-scrub,
# raid-assemble --export, raid-recover --rebuild and raid-resize --add
# against N x the per-member rate (each member read or written whole at its
# rate), plain dd over the same members beside each; SKIP without root or
# blkio.
scripts/bench-throttle.sh 256 150 6
