#!/bin/bash
# Reshape rate against a plain copy of the same bytes (make bench step).
# A RAID-5 of 4 members of SIZE MiB (default 256) in DIR (default /dev/shm,
# page cache: the figure is the tool's own cost, not the disk's) gains a
# fifth member with raid-resize --add; the plain copy is cat of the same
# four member files into one file.  Each byte of the old volume is read
# once and written once (plus parity), so the ratio copy/reshape says how
# close the reshape comes to moving the bytes once.
set -eu
O=${O:-build}
SIZE=${1:-256}
DIR=${2:-/dev/shm}
BIN=$(cd "$(dirname "$0")/.." && pwd)/$O/bin
w=$(mktemp -d "$DIR/rkbench-resize.XXXXXX")
trap 'rm -rf "$w"' EXIT
cd "$w"
now() { date +%s.%N; }
report() {   # what t0 t1 (reshape) copy-seconds vol
	awk -v what="$1" -v r0="$2" -v r1="$3" -v c="$4" -v v="$5" -v s="$SIZE" 'BEGIN {
		r = r1 - r0
		printf "%s: %.0f MiB of volume in %.2f s = %.0f MiB/s\n", what, v / 1048576, r, v / 1048576 / r
		printf "  plain copy of the 4 member files (%d MiB): %.2f s = %.0f MiB/s; ratio reshape/copy rate: %.2f\n",
		       4 * s, c, 4 * s / c, (v / 1048576 / r) / (4 * s / c)
	}'
}
# fresh LEVEL CHUNK K: members a..e of SIZE MiB, an array of LEVEL over
# a b c d filled with K members' worth of random bytes; vol gets its size.
fresh() {
	rm -f a b c d e; for m in a b c d e; do truncate -s "${SIZE}M" $m; done
	head -c $(( (SIZE - 2) * $3 * 1048576 )) /dev/urandom > data
	"$BIN/mkraid" -l "$1" -c "$2" --from data a b c d > /dev/null
	rm -f data
	vol=$("$BIN/raid-assemble" --json a b c d | sed -n 's/.*"volume_size": *\([0-9]*\).*/\1/p' | head -n1)
}
# reshape WHAT OPTION...: times raid-resize OPTION... --add e a b c d.
reshape() {
	local what=$1; shift
	t2=$(now); "$BIN/raid-resize" "$@" --add e a b c d > /dev/null; t3=$(now)
	report "$what" "$t2" "$t3" "$copy" "$vol"
}
fresh 5 512K 3
t0=$(now); cat a b c d > copy; sync copy 2>/dev/null || true; t1=$(now)
rm -f copy
copy=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')
reshape "reshape RAID-5 4 -> 5 members of $SIZE MiB"
# Level change with as many data members (5 -> 6, one added): the shift
# room stays fixed, so batches are small and checkpoints many.
fresh 5 64K 3
reshape "reshape RAID-5 4 -> RAID-6 5 members of $SIZE MiB" --level 6
# RAID-10 n2 over 4 -> 5 members: the volume moves once, every chunk
# written twice (its two copies); with more members the room grows, so
# batches get large as for RAID-5 +1.
fresh 10 512K 2
reshape "reshape RAID-10 n2 4 -> 5 members of $SIZE MiB"
