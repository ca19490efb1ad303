#!/bin/bash
# Runs every test suite of raidkit and ends with one line
#   N passed, N failed[, N skipped]
# summing Check unit suites, fuzz corpus replays and end-to-end cases.
# Exits non-zero when anything failed.  O is the build dir (build or build/san).
set -u
O=${O:-build}
export CK_DEFAULT_TIMEOUT=${CK_DEFAULT_TIMEOUT:-300}
export CK_VERBOSITY=${CK_VERBOSITY:-normal}
# ASan's quarantine at 32 MiB, not 256: a use after free is still caught
# while the block is among the last 32 MiB freed, and the default kept every
# large buffer on fresh pages (page faults were a quarter of some suites).
export ASAN_OPTIONS=${ASAN_OPTIONS:-quarantine_size_mb=32:detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
top=$(cd "$(dirname "$0")/.." && pwd)
# Foreign RAID members (other systems' metadata): the copies in the clone.
export RK_FIXTURES=${RK_FIXTURES:-$top/tests/fixtures/foreign}
cd "$top"
log=$O/test-logs
mkdir -p "$log"
# The md driver's fixtures, unpacked once for the whole run: unit suites
# (rk_test_unpack_kernel) and cases (kernel-lib.sh kfx_xz) copy from here.
RK_KFX_CACHE=$(mktemp -d "${TMPDIR:-/tmp}/rkkfx.XXXXXX") || exit 1
export RK_KFX_CACHE
trap 'rm -rf "$RK_KFX_CACHE"' EXIT
pass=0 fail=0 skip=0
failed_names=()

# Unit suites: Check prints "NN%: Checks: N, Failures: F, Errors: E".
# A test that lacks what the machine has prints "SKIP: why" (counted skipped).
# Suites run RK_TEST_JOBS at a time (default: the number of CPUs); their
# results are read in name order below.
jobs=${RK_TEST_JOBS:-$(nproc 2>/dev/null || echo 2)}
# The longest suites start first (tests/slow-first), so that no long one
# runs alone at the end while the other CPU idles.
mapfile -t order < <(tests/slow-first "$O"/tests/test_*)
for t in "${order[@]}"; do
	[ -x "$t" ] || continue
	name=$(basename "$t")
	while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
	( t0=$SECONDS; "$t" >"$log/$name.log" 2>&1; echo $? >"$log/$name.rc"; echo $((SECONDS - t0)) >"$log/$name.secs"
	  times >"$log/$name.times"; tests/cpu-secs "$log/$name.times" >"$log/$name.cpu" ) &
done
wait
for t in "$O"/tests/test_*; do
	[ -x "$t" ] || continue
	name=$(basename "$t")
	out="$log/$name.log"
	rc=$(cat "$log/$name.rc" 2>/dev/null || echo 99)
	line=$(grep -E '^[0-9]+%: Checks: [0-9]+' "$out" | tail -n 1)
	if [ -z "$line" ]; then
		echo "FAIL $name (exit $rc, no Check summary; see $out)"
		tail -n 20 "$out" | sed 's/^/    /'
		fail=$((fail + 1)); failed_names+=("$name")
		continue
	fi
	n=$(sed -E 's/.*Checks: ([0-9]+).*/\1/' <<<"$line")
	f=$(sed -E 's/.*Failures: ([0-9]+).*/\1/' <<<"$line")
	e=$(sed -E 's/.*Errors: ([0-9]+).*/\1/' <<<"$line")
	s=$(grep -c '^SKIP' "$out")
	bad=$((f + e))
	good=$((n - bad - s))
	[ "$good" -lt 0 ] && good=0
	pass=$((pass + good)); fail=$((fail + bad)); skip=$((skip + s))
	if [ "$bad" -gt 0 ] || [ "$rc" -ne 0 ]; then
		echo "FAIL $name: $line (exit $rc)"
		grep -E ':[EF]:' "$out" | head -n 20 | sed 's/^/    /'
		[ "$bad" -eq 0 ] && { fail=$((fail + 1)); }
		failed_names+=("$name")
	else
		echo "ok   $name: $n checks${s:+, $s skipped} ($(cat "$log/$name.secs" 2>/dev/null)s, cpu $(cat "$log/$name.cpu" 2>/dev/null)s)"
	fi
	grep '^SKIP' "$out" | sed 's/^/    /'
done

# Fuzz harness replays over their seed corpora (one test per harness).
for f in "$O"/fuzz/fuzz_*; do
	[ -x "$f" ] || continue
	name=$(basename "$f"); corpus=fuzz/corpus/${name#fuzz_}
	out="$log/$name.log"
	if [ ! -d "$corpus" ]; then
		echo "FAIL $name: no corpus at $corpus"; fail=$((fail + 1)); failed_names+=("$name"); continue
	fi
	if "$f" "$corpus" >"$out" 2>&1; then
		echo "ok   $name: $(tail -n 1 "$out")"; pass=$((pass + 1))
	else
		echo "FAIL $name (see $out)"; tail -n 20 "$out" | sed 's/^/    /'
		fail=$((fail + 1)); failed_names+=("$name")
	fi
done

# End-to-end cases.
if [ -x tests/run-cases.sh ]; then
	O=$O tests/run-cases.sh >"$log/cases.summary" 2>&1
	cat "$log/cases.summary" | grep -v '^CASES '
	read -r _ cp cf cs < <(grep '^CASES ' "$log/cases.summary" | tail -n 1)
	pass=$((pass + ${cp:-0})); fail=$((fail + ${cf:-0})); skip=$((skip + ${cs:-0}))
	[ "${cf:-0}" -gt 0 ] && failed_names+=("cases")
	[ -z "${cp:-}" ] && { echo "FAIL cases: runner gave no summary"; fail=$((fail + 1)); }
fi

if [ ${#failed_names[@]} -gt 0 ]; then
	echo "failed: ${failed_names[*]}"
fi
if [ "$skip" -gt 0 ]; then
	echo "$pass passed, $fail failed, $skip skipped"
else
	echo "$pass passed, $fail failed"
fi
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
