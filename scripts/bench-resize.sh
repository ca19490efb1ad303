#!/bin/bash
# Reshape rate against a plain copy of the same members (make bench step).
# A RAID-5 of 4 members of SIZE MiB (default 256) in DIR (default /dev/shm,
# page cache: the figure is the tool's own cost, not the disk's) gains a
# fifth member with raid-resize --add; the reference is cat of the same
# four member files into one file, timed beside it.  The target (issue 13,
# part 5): RAID-5 4 -> RAID-6 5 in at most 1/0.9 of the copy's time, i.e.
# copy time / reshape time >= 0.9, best of ROUNDS (default 3) with the
# order of copy and reshape alternating.  The reshape reads the volume
# once (3 members' worth) and writes it once with P and Q (5 members'
# worth): about the bytes the copy reads and writes (4 + 4).  Also printed:
# the volume rate against the copy's member rate (the older figure, which
# counts only the volume's bytes for the reshape), and one run each of
# RAID-5 4 -> 5 and RAID-10 n2 4 -> 5 for information.
set -eu
O=${O:-build}
SIZE=${1:-256}
DIR=${2:-/dev/shm}
ROUNDS=${ROUNDS:-3}
BIN=$(cd "$(dirname "$0")/.." && pwd)/$O/bin
w=$(mktemp -d "$DIR/rkbench-resize.XXXXXX")
trap 'rm -rf "$w"' EXIT
cd "$w"
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { print b - a }'; }
# fresh LEVEL CHUNK K: members a..e of SIZE MiB, an array of LEVEL over
# a b c d filled with K members' worth of random bytes; vol gets its size;
# pristine copies p.a .. p.d kept for the next round.
fresh() {
	rm -f a b c d e p.*; for m in a b c d e; do truncate -s "${SIZE}M" $m; done
	head -c $(( (SIZE - 2) * $3 * 1048576 )) /dev/urandom > data
	"$BIN/mkraid" -l "$1" -c "$2" --from data a b c d > /dev/null
	rm -f data
	vol=$("$BIN/raid-assemble" --json a b c d | sed -n 's/.*"volume_size": *\([0-9]*\).*/\1/p' | head -n1)
	for m in a b c d; do cp $m p.$m; done
}
restore() { rm -f e; truncate -s "${SIZE}M" e; for m in a b c d; do cp p.$m $m; done; }
copy_time() { local t=$(now); cat a b c d > copy; since "$t"; rm -f copy; }
reshape_time() { local t=$(now); "$BIN/raid-resize" "$@" --add e a b c d > /dev/null; since "$t"; }
# line WHAT COPY_S RESHAPE_S [TARGET]
line() {
	awk -v what="$1" -v c="$2" -v r="$3" -v tg="${4:-}" -v v="$vol" -v s="$SIZE" 'BEGIN {
		printf "%s: %.0f MiB of volume in %.2f s = %.0f MiB/s; plain copy of the 4 members (%d MiB) %.2f s\n",
		       what, v / 1048576, r, v / 1048576 / r, 4 * s, c
		printf "  ratio copy time / reshape time: %.2f%s; volume rate / copy rate: %.2f\n", c / r,
		       tg != "" ? sprintf(" (target >= %s: %s)", tg, c / r >= tg ? "met" : "NOT met") : "",
		       (v / 1048576 / r) / (4 * s / c)
	}'
}
# The target: best of ROUNDS, copy and reshape alternating.
fresh 5 64K 3
bc=999999 br=999999
for i in $(seq 1 "$ROUNDS"); do
	[ "$i" -gt 1 ] && restore
	if [ $((i % 2)) = 1 ]; then
		c=$(copy_time); r=$(reshape_time --level 6)
	else
		r=$(reshape_time --level 6); c=$(copy_time)
	fi
	bc=$(awk -v a="$bc" -v b="$c" 'BEGIN { print (b < a ? b : a) }')
	br=$(awk -v a="$br" -v b="$r" 'BEGIN { print (b < a ? b : a) }')
done
line "reshape RAID-5 4 -> RAID-6 5 members of $SIZE MiB (best of $ROUNDS)" "$bc" "$br" 0.9
# For information, one run each: more data members (5 -> 6 plus one: the
# room grows as the reshape goes) and RAID-10 (every chunk written twice).
fresh 5 512K 3
c=$(copy_time); r=$(reshape_time)
line "reshape RAID-5 4 -> 5 members of $SIZE MiB" "$c" "$r"
fresh 10 512K 2
c=$(copy_time); r=$(reshape_time)
line "reshape RAID-10 n2 4 -> 5 members of $SIZE MiB" "$c" "$r"
