#!/bin/bash
# killloop.sh LEVEL N KILLS [DIR [SEED]]: the kill loop of issue 12.
#
# Creates a LEVEL array of N members (mkraid, member files of KL_SIZE,
# default 16M, chunk KL_CHUNK, default 64K) in DIR (default: a temporary
# folder, removed on success), then until KILLS writes were killed:
# `raid-assemble --write FILE --at OFF` with KL_MINW..KL_MAXW (4K..1M)
# random bytes at a random byte offset, SIGKILLed 0..KL_DELAY_US (20000)
# microseconds after it starts.  After each write:
#   - `raid-assemble --json` with all members must show one clean array,
#     every role active, no member stale or left out;
#   - the exported volume must equal the model (the previous export) outside
#     the write and, inside it, the new bytes (write exited 0) or per
#     512-byte sector old or new (killed); the export becomes the model.
# Every KL_EVERY (50) kills and at the end: one writing open (replays the
# journal), then raid-scrub must be clean, and the volume assembled without
# any one member must read the same as with all.
# The first failure prints the kill number, the JSON and every member's
# event counts (raid-examine), keeps DIR, and exits 1.  SEED (default:
# random, printed) makes sizes, offsets, bytes and delays reproducible (not
# the moment the kernel delivers the kill).  Ends with a summary line.
# BIN names the tools' folder (default: build/bin of this clone).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
BIN=${BIN:-$top/build/bin}
SIZE=${KL_SIZE:-16M} CHUNK=${KL_CHUNK:-64K}
MINW=${KL_MINW:-4096} MAXW=${KL_MAXW:-1048576}
DELAY_US=${KL_DELAY_US:-20000} EVERY=${KL_EVERY:-50}

usage() { echo "usage: killloop.sh LEVEL N KILLS [DIR [SEED]]" >&2; exit 64; }
[ $# -ge 3 ] && [ $# -le 5 ] || usage
LEVEL=$1 N=$2 KILLS=$3 DIR=${4:-} SEED=${5:-$(( (RANDOM << 15) | RANDOM ))}
[[ $N =~ ^[0-9]+$ && $KILLS =~ ^[0-9]+$ && $SEED =~ ^[0-9]+$ ]] || usage
for t in mkraid raid-assemble raid-examine raid-scrub; do
	[ -x "$BIN/$t" ] || { echo "killloop: $BIN/$t not built (make all)" >&2; exit 2; }
done
for c in python3 openssl; do
	command -v "$c" >/dev/null || { echo "killloop: $c not installed" >&2; exit 2; }
done
# The interpreter itself, once: a version manager's python3 shim can cost
# half a second a call, more than the rest of a round.
PY=$(python3 -c 'import sys; print(sys.executable)')
keep=1
[ -n "$DIR" ] || { DIR=$(mktemp -d "${TMPDIR:-/tmp}/killloop.XXXXXX"); keep=0; }
mkdir -p "$DIR" && cd "$DIR" || exit 2
M=()
for i in $(seq 0 $((N - 1))); do M+=("m$i"); done
RANDOM=$SEED
kill_no=0 iter=0 completed=0 t0=$SECONDS OLDS=0 NEWS=0 MIXED=0

# die MSG: reports the failure at the current kill with the members' event
# counts, keeps DIR, exits 1.
die() {
	echo "killloop: FAIL at kill $kill_no (write $iter; level $LEVEL x$N, seed $SEED): $*" >&2
	echo "--- raid-examine events per member" >&2
	"$BIN/raid-examine" --json "${M[@]}" 2>/dev/null | "$PY" -c '
import json, sys
for m in json.load(sys.stdin).get("members", []):
    cp = ["%s events %s %s" % (c["copy"], (c.get("superblock") or {}).get("events"),
          (c.get("superblock") or {}).get("array_state")) for c in m.get("copies", [])]
    d = m.get("discovery") or {}
    print("%s: role %s, %s (%s); %s" % (m["path"], d.get("role"), d.get("state"),
          d.get("reason"), ", ".join(cp)))' >&2
	echo "members and files kept in $DIR" >&2
	exit 1
}

# rnd30: R = a pseudo-random number 0 .. 2^30-1 (bash RANDOM, seeded by
# SEED; not in a subshell, which would not advance the sequence).
rnd30() { R=$(( (RANDOM << 15) | RANDOM )); }

# gen TAG BYTES > file: reproducible random bytes from SEED and TAG.
gen() {
	openssl enc -aes-128-ctr -nosalt -pass "pass:$SEED-$1" -pbkdf2 -iter 1 \
		</dev/zero 2>/dev/null | head -c "$2"
}

# check_clean: `raid-assemble --json` of all members shows one clean array
# with every role active and nothing stale or left out; else die.
check_clean() {
	"$BIN/raid-assemble" --json "${M[@]}" >asm.json 2>asm.err
	local rc=$? j all act
	# the usual answer told by counting strings in bash (no process start):
	# N+1 states, N of them active, the array clean, nothing unused
	read -r -d '' j <asm.json
	all=${j//'"state":"'/} act=${j//'"state":"active"'/}
	[ $(( (${#j} - ${#all}) / 9 )) -eq $((N + 1)) ] && [ $(( (${#j} - ${#act}) / 16 )) -eq "$N" ] &&
		[[ $j == *'"state":"clean"'* && $j == *'"unused":[]'* ]] && return 0
	"$PY" - "$N" asm.json >asm.why <<'PY' && return 0
import json, sys
n = int(sys.argv[1])
try:
    d = json.load(open(sys.argv[2]))
except Exception as e:
    print("no JSON: %s" % e); sys.exit(1)
bad = []
if len(d.get("arrays", [])) != 1: bad.append("%d arrays" % len(d.get("arrays", [])))
for a in d.get("arrays", []):
    if a.get("state") != "clean": bad.append("state %s (%s)" % (a.get("state"), a.get("why")))
    roles = sorted(m["role"] for m in a["members"] if m.get("state") == "active" and m.get("role") is not None)
    if roles != list(range(n)): bad.append("active roles %s" % roles)
    bad += ["role %s %s: %s" % (m.get("role"), m.get("state"), m.get("reason"))
            for m in a["members"] if m.get("state") != "active"]
bad += ["unused %s: %s" % (u.get("path"), u.get("state")) for u in d.get("unused", [])]
print("; ".join(bad)); sys.exit(1 if bad else 0)
PY
	echo "--- raid-assemble --json (exit $rc)" >&2
	"$PY" -m json.tool asm.json >&2 2>/dev/null || cat asm.json asm.err >&2
	die "not every member active: $(cat asm.why)"
}

# check_bytes AT LEN MODE: export the volume; outside [AT, AT+LEN) it must
# equal the model, inside it the write's bytes w (MODE complete) or per
# 512-byte sector old or new (MODE flight).  All old or all new is told by
# cmp (fast on tens of MiB); a mix is checked per sector by python.  The
# export becomes the model.
check_bytes() {
	local at=$1 len=$2 mode=$3
	"$BIN/raid-assemble" --export vol "${M[@]}" >/dev/null 2>exp.err ||
		[ -s vol ] || die "export failed: $(cat exp.err)"
	if cmp -s model vol; then
		[ "$mode" = flight ] || die "a completed write at $AT ($len bytes) does not read back"
		OLDS=$((OLDS + 1))
	elif cmp -s -n "$len" -i "$at:0" vol w && cmp -s -n "$at" model vol &&
		cmp -s -i $((at + len)) model vol; then
		NEWS=$((NEWS + 1))
	else
		check_mixed "$at" "$mode"
		MIXED=$((MIXED + 1))
	fi
	mv vol model
}

# check_mixed AT MODE: vol is model outside the write of w at AT and, per
# sector inside it, old or new (new only in MODE complete); else die.
check_mixed() {
	local at=$1 end
	end=$((at + $(stat -c %s w)))
	[ "$(stat -c %s vol)" = "$(stat -c %s model)" ] || die "the volume changed size"
	if [ "$at" -gt 0 ]; then
		cmp -n "$at" model vol >cmp.out 2>&1 || die "before the write at $at: $(cat cmp.out)"
	fi
	cmp -i "$end" model vol >cmp.out 2>&1 || die "after the write's end $end: $(cat cmp.out) (offsets from $end)"
	"$PY" - model w vol "$at" "$2" >bytes.why <<'PY' || die "bytes: $(cat bytes.why)"
import sys
at, mode = int(sys.argv[4]), sys.argv[5]
new = open(sys.argv[2], 'rb').read()
end = at + len(new)
s0 = at - at % 512
def span(path):
    with open(path, 'rb') as f:
        f.seek(s0); return f.read(end - s0)
old, vol = span(sys.argv[1]), span(sys.argv[3])
s = s0
while s < end:
    a, b = max(s, at), min(s + 512, end)
    v = vol[a - s0:b - s0]
    if v != new[a - at:b - at] and (mode == 'complete' or v != old[a - s0:b - s0]):
        print('sector at %d is neither old nor new (%s write at %d, %d bytes)' % (s, mode, at, len(new)))
        sys.exit(1)
    s += 512
PY
}

# check_deep: a writing open (1 byte, the model's own, at 0) replays the
# journal; then raid-scrub is clean, the volume is the model, and without
# any one member the volume reads the same.
check_deep() {
	head -c 1 model >one
	"$BIN/raid-assemble" --write one --at 0 "${M[@]}" >/dev/null 2>rw.err ||
		die "writing open failed: $(cat rw.err)"
	"$BIN/raid-scrub" --json --no-checkpoint "${M[@]}" >scrub.json 2>scrub.err ||
		die "raid-scrub not clean (exit $?): $(cat scrub.json scrub.err)"
	[ "$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["mismatches"])' scrub.json)" = 0 ] ||
		die "raid-scrub mismatches: $(cat scrub.json)"
	"$BIN/raid-assemble" --export vol "${M[@]}" >/dev/null 2>exp.err
	cmp -s vol model || die "after the writing open the volume differs from the model"
	local i j use
	for i in "${!M[@]}"; do
		use=()
		for j in "${!M[@]}"; do [ "$j" = "$i" ] || use+=("${M[$j]}"); done
		rm -f lo.vol
		"$BIN/raid-assemble" --export lo.vol "${use[@]}" >/dev/null 2>lo.err
		[ -s lo.vol ] || die "without ${M[$i]} the array does not assemble: $(cat lo.err)"
		cmp -s lo.vol model || die "without ${M[$i]} the volume reads differently (write hole)"
	done
	rm -f lo.vol vol one
}

# A pipe that never delivers: `read -t` on it sleeps fractions of a second
# without starting a process (which costs tens of ms on a busy machine).
exec {NAP}<> <(:)

# one_write: a random write of LEN bytes at AT, killed after a random delay;
# sets AT, LEN and RC (137 when the kill ended it).
one_write() {
	local us
	rnd30; LEN=$(( MINW + R % (MAXW - MINW + 1) ))
	rnd30; AT=$(( R % (VSIZE - LEN + 1) ))
	rnd30; us=$(( R % (DELAY_US + 1) ))
	gen "w$iter" "$LEN" >w
	"$BIN/raid-assemble" --write w --at "$AT" "${M[@]}" >/dev/null 2>write.err &
	local pid=$!
	[ "$us" -gt 0 ] && read -r -t "$(printf '%d.%06d' $((us / 1000000)) $((us % 1000000)))" -u "$NAP"
	kill -KILL "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	RC=$?
}

echo "killloop: level $LEVEL x$N, $SIZE members, chunk $CHUNK, $KILLS kills, seed $SEED, in $DIR"
"$BIN/mkraid" -l "$LEVEL" -c "$CHUNK" --create-size "$SIZE" "${M[@]}" >mkraid.out 2>&1 ||
	{ cat mkraid.out >&2; exit 2; }
"$BIN/raid-assemble" --export model "${M[@]}" >/dev/null 2>exp.err || die "fresh array does not export"
VSIZE=$(stat -c %s model)
check_clean
while [ "$kill_no" -lt "$KILLS" ]; do
	iter=$((iter + 1))
	one_write
	case $RC in
		0) completed=$((completed + 1)); mode=complete ;;
		137) kill_no=$((kill_no + 1)); mode=flight ;;
		*) die "write exited $RC: $(cat write.err)" ;;
	esac
	check_clean
	check_bytes "$AT" "$LEN" "$mode"
	if [ "$mode" = flight ] && [ $((kill_no % EVERY)) -eq 0 ]; then check_deep; fi
done
[ $((kill_no % EVERY)) -eq 0 ] || check_deep
echo "killloop: level $LEVEL x$N: $kill_no kills, $completed writes completed, every member active after each, bytes old-or-new, scrub clean; $((SECONDS - t0)) s (seed $SEED)"
echo "killloop: the writes read back all old $OLDS, all new $NEWS, old-or-new per sector $MIXED"
[ "$keep" = 1 ] || { cd / && rm -rf "$DIR"; }
exit 0
