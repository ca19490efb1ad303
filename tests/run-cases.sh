#!/bin/bash
# Runs the end-to-end cases tests/cases/<tool>_<name>/.
# Each case has `script` (run by bash in a fresh temporary folder with
# BIN=<build>/bin, CASE=<case folder>, TOP=<source root>) and may have
# `expect`: the exact stdout (`expect.san` instead under the sanitizers,
# where a case may run a sample of its levels).  Exit 0 passes, 77 skips
# (the script prints "SKIP: why" first), anything else fails.  Last line:
# CASES pass fail skip.
set -u
O=${O:-build}
top=$(cd "$(dirname "$0")/.." && pwd)
# Foreign RAID members (other systems' metadata): the copies in the clone.
export RK_FIXTURES=${RK_FIXTURES:-$top/tests/fixtures/foreign}
bin=$top/$O/bin
# Tools built with the sanitizers: as tests/cases/lib.sh's san_build tells.
san=0
{ [ "${SAN:-}" = 1 ] || grep -q -a -m1 __asan_init "$bin/raid-assemble" 2>/dev/null; } && san=1
pass=0 fail=0 skip=0
only=${1:-}
res=$(mktemp -d "${TMPDIR:-/tmp}/rkcases.XXXXXX")
# The md driver's fixtures, unpacked once per run for every kernel case
# (tests/cases/kernel-lib.sh kfx_xz), or once for the whole of
# tests/run-all.sh when it passes its own cache.
export RK_KFX_CACHE=${RK_KFX_CACHE:-$res/kfx}
jobs=${RK_TEST_JOBS:-$(nproc 2>/dev/null || echo 2)}
# Cases find the system's python3 first where there is one: a version
# manager's shim (pyenv) starts about 25 processes a call, and the cases call
# python3 some 800 times a run (14000 of 35000 process starts were the shim's).
pypath=""
if [ -x /usr/bin/python3 ]; then
	mkdir -p "$res/py" && ln -sf /usr/bin/python3 "$res/py/python3" && pypath=$res/py:
fi

# One case: its verdict line into $res/<name>.res.
run_case() {
	local c=$1 name tmp rc exp
	name=$(basename "$c")
	exp=$c/expect
	[ "$san" = 1 ] && [ -f "$c/expect.san" ] && exp=$c/expect.san
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/rkcase.XXXXXX")
	local t0=$SECONDS
	( cd "$tmp" && BIN=$bin CASE=$c TOP=$top PATH=$bin:$pypath$PATH timeout 600 bash "$c/script" >"$tmp/.stdout" 2>"$tmp/.stderr" )
	rc=$?
	times >"$tmp/.times"
	local cpu; cpu=$("$top/tests/cpu-secs" "$tmp/.times")
	{
	if [ $rc -eq 77 ]; then
		echo "skip $name: $(grep -h -m1 '^SKIP' "$tmp/.stdout" "$tmp/.stderr" | head -n 1 | sed 's/^SKIP: *//')"
	elif [ $rc -eq 0 ] && { [ ! -f "$exp" ] || diff -u "$exp" "$tmp/.stdout" >"$tmp/.diff"; }; then
		echo "ok   case $name ($((SECONDS - t0))s, cpu ${cpu}s)"
	else
		echo "FAIL case $name (exit $rc)"
		[ -s "$tmp/.diff" ] && sed 's/^/    /' "$tmp/.diff" | head -n 40
		tail -n 15 "$tmp/.stderr" | sed 's/^/    stderr: /'
		mkdir -p "$top/$O/test-logs" && rm -rf "$top/$O/test-logs/case-$name" && cp -r "$tmp" "$top/$O/test-logs/case-$name" 2>/dev/null
	fi
	} >"$res/$name.res"
	rm -rf "$tmp"
}

# Cases run RK_TEST_JOBS at a time, the slowest first (tests/slow-first);
# verdicts are printed in name order.
mapfile -t order < <("$top"/tests/slow-first "$top"/tests/cases/*/)
for c in "${order[@]}"; do
	c=${c%/}; name=$(basename "$c")
	[ -f "$c/script" ] || continue
	[ -n "$only" ] && [[ "$name" != $only ]] && continue
	while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
	run_case "$c" &
done
wait
for r in "$res"/*.res; do
	[ -f "$r" ] || continue
	cat "$r"
	case "$(head -n 1 "$r")" in
		ok*) pass=$((pass + 1)) ;;
		skip*) skip=$((skip + 1)) ;;
		*) fail=$((fail + 1)) ;;
	esac
done
rm -rf "$res"
echo "CASES $pass $fail $skip"
