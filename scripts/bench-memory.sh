#!/bin/bash
# Peak memory of the tools a user waits on (make bench step): peak RSS
# (GNU time's %M, the kernel's ru_maxrss) of raid-assemble --export,
# raid-scrub, raid-recover --rebuild, raid-recover --detect and raid-resize
# (a reshape adding one member) for small and wide arrays, each printed
# beside the 64 MiB target (issue 13, part 6).  Members are sparse files
# in DIR (default /dev/shm): what is measured is what the tool allocates,
# which must not grow with the member count or the member size.
# Usage: bench-memory.sh [COUNTS [SIZE_MIB [DIR]]]  (COUNTS "5 255")
set -eu
O=${O:-build}
COUNTS=${1:-"5 255"}
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
# peak LABEL CMD...: runs CMD under GNU time, prints its peak RSS (exit
# statuses above OKRC, default 1, are failures).
peak() {
	local label=$1; shift
	local kb rc=0
	"$TIME" -f %M -o rss "$@" > /dev/null 2> err || rc=$?
	kb=$(tail -n1 rss)
	if [ "$rc" -gt "${OKRC:-1}" ]; then
		echo "  $label: failed (exit $rc): $(head -c 300 err)"
		fails=$((fails + 1))
		return
	fi
	[ "$kb" -gt "$worst" ] && worst=$kb
	awk -v l="$label" -v k="$kb" -v lim="$LIMIT_KB" 'BEGIN {
		printf "  %-40s peak RSS %7.1f MiB (target < %d MiB)%s\n", l, k / 1024, lim / 1024, k < lim ? "" : "  OVER"
	}'
}
# members N: m.000 .. m.N-1 (and spare n.new), SIZE MiB each, sparse.
members() {
	rm -f m_* n.* r.new out.img
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
	local tag="RAID-$lvl x$n"
	[ "$SIZE" -gt 64 ] && tag="$tag of $SIZE MiB"
	peak "$tag assemble --export" "$BIN/raid-assemble" --export out.img m_*
	rm -f out.img
	local set=(m_*)
	if [ "$lvl" != 0 ]; then
		peak "$tag scrub" "$BIN/raid-scrub" m_*
		# m_000 left out: its role rebuilt onto r.new
		truncate -s "${SIZE}M" r.new
		peak "$tag recover --rebuild" "$BIN/raid-recover" --rebuild r.new "${set[@]:1}"
		set=(r.new "${set[@]:1}")
	fi
	peak "$tag resize --add (reshape)" "$BIN/raid-resize" --add n.new "${set[@]}"
}
echo "peak memory ($SIZE MiB members in $DIR; target < 64 MiB for any count and size):"
for n in $COUNTS; do
	run_level 6 "$n" 64K
	run_level 5 "$n" 64K
	run_level 0 "$n" 64K
done
# the member size: six of 512 MiB (sparse but for the first write)
SIZE=512 run_level 6 6 512K
# --detect on a small array whose metadata is gone (the recover_detect
# case's recipe: an ext4 volume with files, both superblock copies of every
# member zeroed); its search reads at most 1 GiB of any image, so the
# members are then made 4 GiB (sparse) to show the size does not count.
# Exit 2 (nothing decided) still ran the whole search.
if command -v mkfs.ext4 > /dev/null; then
	rm -f m_* n.* r.new
	for d in 0 1 2 3 4 5 6 7; do
		mkdir -p tree/d$d
		for f in 0 1 2 3 4 5 6 7 8 9 10 11; do head -c $(((d * 12 + f) * 997 + 1500)) /dev/urandom > tree/d$d/f$f; done
	done
	truncate -s 48M vol
	mkfs.ext4 -q -F -b 1024 -d tree vol > /dev/null 2>&1
	"$BIN/mkraid" -l 6 -c 64K --create-size 17M --from vol m0 m1 m2 m3 m4 m5 > /dev/null
	bk=$(( $(stat -c %s m0) / 4096 * 4096 - 65536 ))
	for m in m0 m1 m2 m3 m4 m5; do
		dd if=/dev/zero of=$m bs=4096 seek=1 count=16 conv=notrunc status=none
		dd if=/dev/zero of=$m bs=4096 seek=$((bk / 4096)) count=16 conv=notrunc status=none
	done
	OKRC=2 peak "RAID-6 x6 (17 MiB) recover --detect" "$BIN/raid-recover" --detect m0 m1 m2 m3 m4 m5
	for m in m0 m1 m2 m3 m4 m5; do truncate -s 4G $m; done
	OKRC=2 peak "RAID-6 x6 (4 GiB) recover --detect" "$BIN/raid-recover" --detect m0 m1 m2 m3 m4 m5
else
	echo "  recover --detect: SKIP: mkfs.ext4 not installed"
fi
awk -v k="$worst" -v lim="$LIMIT_KB" -v f="$fails" 'BEGIN {
	printf "worst peak RSS %.1f MiB against the target < %d MiB: %s\n", k / 1024, lim / 1024,
	       f ? "FAILED RUNS" : (k < lim ? "met" : "NOT met")
}'
