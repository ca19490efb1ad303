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

# Scrub (RAID-6 and RAID-5 of 6 x 256 MiB image files in page cache) against
# reading the same files in parallel with cat; ratio = read time / scrub time.
"$O"/bench/bench_scrub 256 6 3

# Rebuild of one member of a RAID-6 of 6 x 256 MiB image files in page cache
# (/dev/shm) against reading the 5 surviving files in parallel with cat;
# ratio = read time / rebuild time.
"$O"/bench/bench_rebuild 256 6 3

# Write journal cost (spec/journal.md): full-stripe and random 4 KiB write
# throughput through rk_array with the journal on and off, member files on
# a real file system ($TMPDIR or /var/tmp).
"$O"/bench/bench_journal "${TMPDIR:-/var/tmp}" 64 400

# Reshape (raid-resize --add; RAID-5 4 -> 5 members, and 5 -> 6 with one
# added) against a plain copy of the same member files, in /dev/shm.
scripts/bench-resize.sh 256
