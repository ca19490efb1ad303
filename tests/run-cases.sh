#!/bin/bash
# Runs the end-to-end cases tests/cases/<tool>_<name>/.
# Each case has `script` (run by bash in a fresh temporary folder with
# BIN=<build>/bin, CASE=<case folder>, TOP=<source root>) and may have
# `expect`: the exact stdout.  Exit 0 passes, 77 skips (the script prints
# "SKIP: why" first), anything else fails.  Last line: CASES pass fail skip.
set -u
O=${O:-build}
top=$(cd "$(dirname "$0")/.." && pwd)
bin=$top/$O/bin
pass=0 fail=0 skip=0
only=${1:-}
for c in "$top"/tests/cases/*/; do
	c=${c%/}; name=$(basename "$c")
	[ -f "$c/script" ] || continue
	[ -n "$only" ] && [[ "$name" != $only ]] && continue
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/rkcase.XXXXXX")
	( cd "$tmp" && BIN=$bin CASE=$c TOP=$top PATH=$bin:$PATH timeout 600 bash "$c/script" >"$tmp/.stdout" 2>"$tmp/.stderr" )
	rc=$?
	if [ $rc -eq 77 ]; then
		echo "skip $name: $(grep -m1 '^SKIP' "$tmp/.stdout" "$tmp/.stderr" | sed 's/^[^:]*:SKIP: *//')"
		skip=$((skip + 1))
	elif [ $rc -eq 0 ] && { [ ! -f "$c/expect" ] || diff -u "$c/expect" "$tmp/.stdout" >"$tmp/.diff"; }; then
		echo "ok   case $name"; pass=$((pass + 1))
	else
		echo "FAIL case $name (exit $rc)"
		[ -s "$tmp/.diff" ] && sed 's/^/    /' "$tmp/.diff" | head -n 40
		tail -n 15 "$tmp/.stderr" | sed 's/^/    stderr: /'
		fail=$((fail + 1))
		cp -r "$tmp" "$top/$O/test-logs/case-$name" 2>/dev/null
	fi
	rm -rf "$tmp"
done
echo "CASES $pass $fail $skip"
