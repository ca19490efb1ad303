#!/bin/bash
# bench-throttle.sh [SIZE_MIB [RATE_MBS [N]]]: the tools over members that
# behave like disks, each with its own bandwidth (make bench step, issue 13).
#
# N (default 6) loop devices of SIZE MiB (default 256) backed by files in
# /dev/shm, each read and written at most RATE MB/s (default 150, 10^6
# bytes) through a cgroup v1 blkio throttle (blkio.throttle.read_bps_device
# and write_bps_device per MAJ:MIN); every measured command runs inside
# that cgroup.  The page cache of the loop devices is dropped before each
# run (blockdev --flushbufs, only these devices), so every byte comes
# through the throttle.  First the throttle itself is measured: the N
# members read at once by dd (must not pass the limit).
#
# Each tool is timed against what the disks allow: every member reads the
# bytes it must read at RATE, in parallel, while every member written
# writes its bytes at RATE (read and write limits are separate); the
# reference time is the slowest member's max(read, write) time.  Ratio =
# reference time / measured time, target >= 0.9.  Beside it, in brackets:
# plain dd over the same members (each read whole, the new member of a
# rebuild written whole with direct I/O) timed just before or after the
# run, in alternating order -- what this machine's loop devices and CPUs
# deliver at that moment (under load they fall short of the limit too).
#   scrub, export: each member present read whole (S/RATE);
#   rebuild: the survivors read whole while the new member is written
#     whole (S/RATE);
#   reshape RAID-5 4 -> 5 (--add): what a reshape must move, per member:
#     each old member reads the old data it holds (3/4 of its data area:
#     the data chunks; parity is recomputed, never read) and every member
#     writes its whole new data area (the moved rows with their parity,
#     then the new space past them, which must read as zeros).  Reads and
#     writes are throttled separately, so the reference is the larger of
#     the two at RATE, from the data sizes the superblocks record before
#     and after (printed beside it, with what a disk that reads and writes
#     through one head would need: their sum).
# REPS (environment, default 2): runs of each case; the best is reported
# (a single run caught writeback of the benches before it).
# ONLY (environment): a regular expression; only the runs whose names match
# it (scrub, export, rebuild, reshape) are made.
# Prints SKIP with the reason when not root, without cgroup v1 blkio, or
# when loop devices cannot be set up.  Loop devices, cgroup and files are
# removed on every exit.
set -eu
O=${O:-build}
SIZE=${1:-256} RATE=${2:-150} N=${3:-6} REPS=${REPS:-2}
top=$(cd "$(dirname "$0")/.." && pwd)
BIN=$top/$O/bin
CGROOT=/sys/fs/cgroup/blkio
skip() { echo "bench-throttle: SKIP: $*"; exit 0; }
[ "$(id -u)" = 0 ] || skip "not root (loop devices and cgroups need it)"
[ -w "$CGROOT/cgroup.procs" ] && [ -e "$CGROOT/blkio.throttle.read_bps_device" ] ||
	skip "no writable cgroup v1 blkio throttle at $CGROOT"
command -v losetup > /dev/null && command -v blockdev > /dev/null || skip "losetup/blockdev not installed"
for t in mkraid raid-scrub raid-assemble raid-recover raid-resize; do
	[ -x "$BIN/$t" ] || { echo "bench-throttle: $BIN/$t not built (make all)" >&2; exit 2; }
done

W=$(mktemp -d /dev/shm/rkbench-throttle.XXXXXX)
CG=$CGROOT/rkbench-throttle.$$
LOOPS=()
cleanup() {
	local l
	set +e
	for l in "${LOOPS[@]}"; do losetup -d "$l" 2> /dev/null; done
	[ -d "$CG" ] && rmdir "$CG" 2> /dev/null
	rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Members M[0..N] (one spare for rebuild and reshape), each a loop device
# over a file; direct I/O to the backing file where the kernel allows it.
M=()
for i in $(seq 0 "$N"); do
	truncate -s "${SIZE}M" "$W/b$i"
	l=$(losetup --find --show --direct-io=on "$W/b$i" 2> /dev/null ||
		losetup --find --show "$W/b$i" 2> /dev/null) || skip "losetup cannot set up a loop device"
	LOOPS+=("$l")
	M+=("$l")
done
mkdir "$CG" 2> /dev/null || skip "cannot create a blkio cgroup under $CGROOT"
BPS=$((RATE * 1000000))
for l in "${M[@]}"; do
	mm=$(lsblk -dno MAJ:MIN "$l" | tr -d ' ')
	echo "$mm $BPS" > "$CG/blkio.throttle.read_bps_device" &&
		echo "$mm $BPS" > "$CG/blkio.throttle.write_bps_device" || skip "the kernel refuses blkio throttle limits"
done

now() { date +%s.%N; }
want() { [[ $1 =~ ${ONLY:-.} ]]; }
# incg CMD...: runs CMD inside the throttled cgroup (stdout, stderr to $W/out).
incg() { bash -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$CG" "$@" > "$W/out" 2>&1; }
# through: "READ WRITE" bytes the cgroup's throttle has passed so far.
through() {
	awk '$2 == "Read" { r += $3 } $2 == "Write" { w += $3 } END { printf "%.0f %.0f\n", r, w }' \
		"$CG/blkio.throttle.io_service_bytes"
}
# timed CMD...: T = wall seconds of CMD run in the cgroup, caches dropped
# first; THRU = "MiB read, MiB written" through the throttle meanwhile (the
# proof that the run's I/O was throttled).
timed() {
	local t0 rc=0 b0
	for l in "${M[@]}"; do blockdev --flushbufs "$l"; done
	b0=$(through)
	t0=$(now)
	incg "$@" || rc=$?
	T=$(awk -v a="$t0" -v b="$(now)" 'BEGIN { print b - a }')
	THRU=$(echo "$b0 $(through)" | awk '{ printf "%.0f MiB read, %.0f MiB written", ($3 - $1) / 1048576, ($4 - $2) / 1048576 }')
	[ "$rc" -le 1 ] || { echo "bench-throttle: failed (exit $rc): $*" >&2; cat "$W/out" >&2; exit 2; }
}
# plain READS -- WRITE: the plain readers' reference beside a run: dd reads
# each member of READS whole at once, while (WRITE not empty) dd writes
# that member whole with direct I/O.  DD gets its time.
plain() {
	local reads=() write
	while [ "$1" != -- ]; do reads+=("$1"); shift; done
	write=${2:-}
	timed bash -c 'w=$1; shift
		for m; do dd if="$m" of=/dev/null bs=1M status=none & done
		[ -z "$w" ] || dd if=/dev/zero of="$w" bs=4M count='$((SIZE / 4))' oflag=direct status=none &
		wait' _ "$write" "${reads[@]}"
	DD=$T
}
# measure WHAT NDISKS READS -- WRITE -- CMD...: CMD timed REPS times and
# its best time reported against the reference (each member read or written
# whole at RATE) and, in brackets, against the best of plain READS -- WRITE
# run just before or after each run (alternating), what this machine's loop
# devices deliver now.  PREP (environment), when set, is evaluated before
# each run (a reshape needs its array made again).
ORDER=0
measure() {
	local what=$1 n=$2 ref=() tool= thru= dd= rep
	shift 2
	while [ "$1" != -- ]; do ref+=("$1"); shift; done
	ref+=(--); shift
	[ "$1" = -- ] || { ref+=("$1"); shift; }
	shift
	for rep in $(seq "$REPS"); do
		[ -z "${PREP:-}" ] || eval "$PREP"
		ORDER=$((1 - ORDER))
		[ "$ORDER" = 1 ] && plain "${ref[@]}"
		timed "$@"
		if [ -z "$tool" ] || awk -v a="$T" -v b="$tool" 'BEGIN { exit !(a < b) }'; then tool=$T thru=$THRU; fi
		[ "$ORDER" = 0 ] && plain "${ref[@]}"
		if [ -z "$dd" ] || awk -v a="$DD" -v b="$dd" 'BEGIN { exit !(a < b) }'; then dd=$DD; fi
	done
	TOOL=$tool
	awk -v w="$what" -v n="$n" -v ref="$REF" -v t="$tool" -v r="$RATE" -v dd="$dd" -v thru="$thru" 'BEGIN {
		printf "  %-44s %6.2f s (reference %5.2f s: %d x %d MB/s): ratio %.2f (target >= 0.9)\n", w, t, ref, n, r, ref / t
		printf "  %-44s throttled: %s; plain dd beside it %.2f s: ratio %.2f\n", "", thru, dd, dd / t }'
}
# fill LEVEL K MEMBER...: a LEVEL array over MEMBERs holding K members' worth
# of the random bytes made once in $W/data.
fill() {
	local level=$1 k=$2; shift 2
	head -c $(( (SIZE - 4) * k ))M "$W/data" > "$W/from"
	"$BIN/mkraid" -l "$level" --force --from "$W/from" "$@" > /dev/null
	rm -f "$W/from"
}
S=$((SIZE * 1048576))
REF=$(awk -v s="$S" -v r="$BPS" 'BEGIN { print s / r }')   # one member read (or written) whole

sync   # the dirty pages of earlier benches are not written back during the runs
echo "throttled members: $N loop devices of $SIZE MiB, $RATE MB/s read and $RATE MB/s write each (cgroup v1 blkio), best of $REPS runs"
# The throttle itself: every member read at once by dd, cache dropped.
plain "${M[@]:0:N}" --
awk -v ref="$REF" -v t="$T" -v n="$N" -v r="$RATE" -v thru="$THRU" 'BEGIN {
	printf "  throttle check: %d x dd of a member at once: %.2f s (at the limit: %.2f s): %.0f MB/s a member (throttled: %s)\n",
	       n, t, ref, r * ref / t, thru
	exit !(ref / t > 1.5) }' && skip "the throttle does not hold (members read faster than the limit)"
head -c $(( (SIZE - 4) * (N - 2) ))M /dev/urandom > "$W/data"

R6=("${M[@]:0:N}") NEW=${M[N]}
if want scrub || want export || want rebuild; then
	fill 6 $((N - 2)) "${R6[@]}"
	echo "RAID-6 of $N:"
fi
if want scrub; then
	measure "raid-scrub, healthy" "$N" "${R6[@]}" -- -- "$BIN/raid-scrub" --no-checkpoint "${R6[@]}"
	measure "raid-scrub, one member missing" $((N - 1)) "${R6[@]:1}" -- -- \
		"$BIN/raid-scrub" --no-checkpoint "${R6[@]:1}"
fi
if want export; then
	measure "raid-assemble --export, healthy" "$N" "${R6[@]}" -- -- "$BIN/raid-assemble" --export "$W/vol" "${R6[@]}"
	rm -f "$W/vol"
	measure "raid-assemble --export, one member missing" $((N - 1)) "${R6[@]:1}" -- -- \
		"$BIN/raid-assemble" --export "$W/vol" "${R6[@]:1}"
	rm -f "$W/vol"
fi
if want rebuild; then
	measure "raid-recover --rebuild (reads $((N - 1)), writes 1)" "$N" "${R6[@]:1}" -- "$NEW" -- \
		"$BIN/raid-recover" --rebuild "$NEW" --force "${R6[@]:1}"
fi

R5=("${M[@]:0:N-1}") NEW=${M[N-1]}
if want scrub || want rebuild; then
	fill 5 $((N - 2)) "${R5[@]}"
	echo "RAID-5 of $((N - 1)):"
fi
if want scrub; then
	measure "raid-scrub, healthy" $((N - 1)) "${R5[@]}" -- -- "$BIN/raid-scrub" --no-checkpoint "${R5[@]}"
fi
if want rebuild; then
	measure "raid-recover --rebuild (reads $((N - 2)), writes 1)" $((N - 1)) "${R5[@]:1}" -- "$NEW" -- \
		"$BIN/raid-recover" --rebuild "$NEW" --force "${R5[@]:1}"
fi

# sbnum FIELD MEMBER: a number from the member's superblock (raid-examine --json).
sbnum() { "$BIN/raid-examine" --json "$2" | tr ',' '\n' | sed -n "s/.*\"$1\":\([0-9]*\).*/\1/p" | head -n1; }
if want reshape; then
	R4=("${M[@]:0:4}") NEW=${M[4]}
	fill 5 3 "${R4[@]}"
	echo "reshape:"
	ds=$(sbnum data_size "${R4[0]}")
	# each run reshapes the array made again (the first run's is this one)
	PREP='[ "$rep" = 1 ] || fill 5 3 "${R4[@]}"'
	# the plain reference only reads (writing would destroy the array)
	REF0=$REF REF=1
	measure "raid-resize RAID-5 4 -> 5 (--add)" 5 "${R4[@]}" -- -- "$BIN/raid-resize" --add "$NEW" --force "${R4[@]}" > "$W/line"
	nds=$(sbnum data_size "$NEW")
	REF=$(awk -v ds="$ds" -v nds="$nds" -v r="$BPS" 'BEGIN { rd = ds * 3 / 4; print (rd > nds ? rd : nds) / r }')
	awk -v ds="$ds" -v nds="$nds" -v r="$BPS" -v ref="$REF" -v t="$TOOL" 'BEGIN {
		printf "  %-44s %6.2f s (reference %5.2f s): ratio %.2f (target >= 0.9)\n", "raid-resize RAID-5 4 -> 5 (--add)", t, ref, ref / t
		printf "  %-44s reference: each old member reads its data (%.0f MiB), each of the 5 writes its new data area\n", "", ds * 3 / 4 / 1048576
		printf "  %-44s (%.0f MiB: rows and parity, then the new space zeroed) at %d MB/s, reads beside writes; one head\n", "", nds / 1048576, r / 1000000
		printf "  %-44s reading and writing in turn would need %.2f s (ratio %.2f)\n", "", (ds * 3 / 4 + nds) / r, (ds * 3 / 4 + nds) / r / t }'
	sed -n 2p "$W/line"
	REF=$REF0 PREP=
fi
