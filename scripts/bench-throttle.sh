#!/bin/bash
# bench-throttle.sh [SIZE_MIB [RATE_MBS [N]]]: the tools over members that
# behave like disks, each with its own bandwidth (make bench step, issue 13).
#
# N (default 6) loop devices of SIZE MiB (default 384) backed by files in
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
# reference time / measured time, target >= 0.9.
#   scrub, export: each member present read whole (S/RATE);
#   rebuild: the survivors read whole while the new member is written
#     whole (S/RATE);
#   reshape RAID-5 4 -> 5 (--add): old members read whole, each of the 5
#     writes 3/4 of S (S/RATE).
# ONLY (environment): a regular expression; only the runs whose names match
# it (scrub, export, rebuild, reshape) are made.
# Prints SKIP with the reason when not root, without cgroup v1 blkio, or
# when loop devices cannot be set up.  Loop devices, cgroup and files are
# removed on every exit.
set -eu
O=${O:-build}
SIZE=${1:-384} RATE=${2:-150} N=${3:-6}
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
# timed CMD...: T = wall seconds of CMD run in the cgroup, caches dropped first.
timed() {
	local t0 rc=0
	for l in "${M[@]}"; do blockdev --flushbufs "$l"; done
	t0=$(now)
	incg "$@" || rc=$?
	T=$(awk -v a="$t0" -v b="$(now)" 'BEGIN { print b - a }')
	[ "$rc" -le 1 ] || { echo "bench-throttle: failed (exit $rc): $*" >&2; cat "$W/out" >&2; exit 2; }
}
# report WHAT NDISKS REF_SECONDS: one line, measured against the reference.
report() {
	awk -v w="$1" -v n="$2" -v ref="$3" -v t="$T" -v r="$RATE" 'BEGIN {
		printf "  %-46s %6.2f s (reference %5.2f s, %d x %d MB/s): ratio %.2f (target >= 0.9)\n",
		       w, t, ref, n, r, ref / t }'
}
# fill LEVEL K MEMBER...: a LEVEL array over MEMBERs holding K members' worth of random bytes.
fill() {
	local level=$1 k=$2; shift 2
	head -c $(( (SIZE - 4) * k ))M /dev/urandom > "$W/data"
	"$BIN/mkraid" -l "$level" --force --from "$W/data" "$@" > /dev/null
	rm -f "$W/data"
}
S=$((SIZE * 1048576))
REF=$(awk -v s="$S" -v r="$BPS" 'BEGIN { print s / r }')   # one member read (or written) whole

echo "throttled members: $N loop devices of $SIZE MiB, $RATE MB/s read and $RATE MB/s write each (cgroup v1 blkio)"
# The throttle itself: every member read at once by dd, cache dropped.
timed bash -c 'for m; do dd if="$m" of=/dev/null bs=1M status=none & done; wait' _ "${M[@]:0:N}"
report "throttle check: $N x dd of a member at once" "$N" "$REF"
awk -v ref="$REF" -v t="$T" 'BEGIN { exit !(ref / t > 1.5) }' &&
	skip "the throttle does not hold (members read faster than the limit)"

R6=("${M[@]:0:N}") NEW=${M[N]}
if want scrub || want export || want rebuild; then
	fill 6 $((N - 2)) "${R6[@]}"
	echo "RAID-6 of $N:"
fi
if want scrub; then
	timed "$BIN/raid-scrub" --no-checkpoint "${R6[@]}"
	report "raid-scrub, healthy" "$N" "$REF"
	timed "$BIN/raid-scrub" --no-checkpoint "${R6[@]:1}"
	report "raid-scrub, one member missing" $((N - 1)) "$REF"
fi
if want export; then
	timed "$BIN/raid-assemble" --export "$W/vol" "${R6[@]}"
	rm -f "$W/vol"
	report "raid-assemble --export, healthy" "$N" "$REF"
	timed "$BIN/raid-assemble" --export "$W/vol" "${R6[@]:1}"
	rm -f "$W/vol"
	report "raid-assemble --export, one member missing" $((N - 1)) "$REF"
fi
if want rebuild; then
	timed "$BIN/raid-recover" --rebuild "$NEW" --force "${R6[@]:1}"
	report "raid-recover --rebuild (reads $((N - 1)), writes 1)" "$N" "$REF"
fi

R5=("${M[@]:0:N-1}") NEW=${M[N-1]}
if want scrub || want rebuild; then
	fill 5 $((N - 2)) "${R5[@]}"
	echo "RAID-5 of $((N - 1)):"
fi
if want scrub; then
	timed "$BIN/raid-scrub" --no-checkpoint "${R5[@]}"
	report "raid-scrub, healthy" $((N - 1)) "$REF"
fi
if want rebuild; then
	timed "$BIN/raid-recover" --rebuild "$NEW" --force "${R5[@]:1}"
	report "raid-recover --rebuild (reads $((N - 2)), writes 1)" $((N - 1)) "$REF"
fi

if want reshape; then
	R4=("${M[@]:0:4}") NEW=${M[4]}
	fill 5 3 "${R4[@]}"
	echo "reshape:"
	timed "$BIN/raid-resize" --add "$NEW" --force "${R4[@]}"
	report "raid-resize RAID-5 4 -> 5 (--add)" 5 "$REF"
fi
