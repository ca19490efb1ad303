#!/bin/bash
# Peak memory of the tools a user waits on (make bench step): peak RSS
# (GNU time's %M, the kernel's ru_maxrss) of raid-assemble --export,
# raid-scrub, raid-recover --rebuild, raid-recover --detect and raid-resize
# (a reshape adding one member) for small and wide arrays, each printed
# beside the 64 MiB target (issue 13, part 6).  Members are sparse files
# in DIR (default /dev/shm): what is measured is what the tool allocates,
# which must not grow with the member count or the member size.
# Usage: bench-memory.sh [COUNTS [SIZE_MIB [DIR]]]  (COUNTS "5 64 255")
set -eu
O=${O:-build}
COUNTS=${1:-"5 64 255"}
SIZE=${2:-4}
DIR=${3:-/dev/shm}
LIMIT_KB=$((64 * 1024))
BIN=$(cd "$(dirname "$0")/.." && pwd)/$O/bin
TIME=/usr/bin/time
if ! [ -x "$TIME" ]; then
	echo "bench-memory: SKIP: $TIME (GNU time) not installed"
	exit 0
fi
w=$(mktemp -d "$DIR/rkbench-mem.XXXXXX")
trap 'rm -rf "$w"' EXIT
cd "$w"
worst=0
fails=0
# peak LABEL CMD...: runs CMD under GNU time, prints its peak RSS.
peak() {
	local label=$1; shift
	local kb rc=0
	"$TIME" -f %M -o rss "$@" > /dev/null 2> err || rc=$?
	kb=$(tail -n1 rss)
	if [ "$rc" -gt 1 ]; then
		echo "  $label: failed (exit $rc): $(head -c 300 err)"
		fails=$((fails + 1))
		return
	fi
	[ "$kb" -gt "$worst" ] && worst=$kb
	awk -v l="$label" -v k="$kb" -v lim="$LIMIT_KB" 'BEGIN {
		printf "  %-34s peak RSS %7.1f MiB (target < %d MiB)%s\n", l, k / 1024, lim / 1024, k < lim ? "" : "  OVER"
	}'
}
# members N: m.000 .. m.N-1 (and spare n.new), SIZE MiB each, sparse.
members() {
	rm -f m_* n.* out.img
	for i in $(seq -f %03g 0 $(($1 - 1))); do truncate -s "${SIZE}M" "m_$i.img"; done
	truncate -s "${SIZE}M" n.new
}
run_level() {   # LEVEL N CHUNK
	local lvl=$1 n=$2 ch=$3
	members "$n"
	"$BIN/mkraid" -l "$lvl" -c "$ch" m_* > /dev/null
	# a first write leaves data to read (and the journal a write makes)
	head -c 1048576 /dev/urandom > blob
	"$BIN/raid-assemble" --write blob --at 0 m_* > /dev/null
	peak "RAID-$lvl x$n assemble --export" "$BIN/raid-assemble" --export out.img m_*
	rm -f out.img
	peak "RAID-$lvl x$n scrub" "$BIN/raid-scrub" m_*
	if [ "$lvl" != 0 ]; then
		local rest=(m_*)
		# m.000 left out: its role rebuilt onto a copy of n.new
		cp --sparse=always n.new r.new
		peak "RAID-$lvl x$n recover --rebuild" "$BIN/raid-recover" --rebuild r.new "${rest[@]:1}"
		rm -f r.new
	fi
	peak "RAID-$lvl x$n resize --add (reshape)" "$BIN/raid-resize" --add n.new m_*
}
echo "peak memory ($SIZE MiB members in $DIR; target < 64 MiB for any count and size):"
for n in $COUNTS; do
	run_level 6 "$n" 64K
	run_level 5 "$n" 64K
	run_level 0 "$n" 64K
done
# --detect (with --export) on a small array whose metadata is gone: an
# ext4 volume, both superblock copies of every member zeroed.
if command -v mkfs.ext4 > /dev/null; then
	rm -f m_* n.*
	truncate -s 12M vol
	mkfs.ext4 -q -F -b 1024 vol > /dev/null 2>&1
	"$BIN/mkraid" -l 6 -c 64K --create-size 5M --from vol m0 m1 m2 m3 m4 m5 > /dev/null
	bk=$(( $(stat -c %s m0) / 4096 * 4096 - 65536 ))
	for m in m0 m1 m2 m3 m4 m5; do
		dd if=/dev/zero of=$m bs=4096 seek=1 count=16 conv=notrunc status=none
		dd if=/dev/zero of=$m bs=4096 seek=$((bk / 4096)) count=16 conv=notrunc status=none
	done
	peak "RAID-6 x6 recover --detect --export" "$BIN/raid-recover" --detect --export out.img m0 m1 m2 m3 m4 m5
else
	echo "  recover --detect: SKIP: mkfs.ext4 not installed"
fi
awk -v k="$worst" -v lim="$LIMIT_KB" -v f="$fails" 'BEGIN {
	printf "worst peak RSS %.1f MiB against the target < %d MiB: %s\n", k / 1024, lim / 1024,
	       f ? "FAILED RUNS" : (k < lim ? "met" : "NOT met")
}'
