#!/bin/bash
# The crash-safety fault enumeration (issue 6, spec/journal.md).
#   tests/run-faults.sh [full|sample]
# full (make check-faults): every fault point of tests/unit/test_faults*.c,
# power cuts with four seeds; sample: the stride make check runs.  Prints
# every violation, then the total count of fault points and violations.
# Exits non-zero on any violation or failed check.  O is the build dir.
set -u
O=${O:-build}
mode=${1:-sample}
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
bin=$O/tests/test_faults
if [ ! -x "$bin" ]; then
	echo "run-faults: $bin is not built (make O=$O all first)" >&2
	exit 2
fi
log=$O/test-logs
mkdir -p "$log"
out=$log/faults-$mode.log
export CK_DEFAULT_TIMEOUT=${CK_DEFAULT_TIMEOUT:-3600}
[ "$mode" = full ] && export RK_FAULTS=full || unset RK_FAULTS
start=$(date +%s)
"$bin" >"$out" 2>&1
rc=$?
for b in "$bin"_*; do   # the suites split from test_faults (test_faults_mkraid, ...)
	[ -x "$b" ] || continue
	"$b" >>"$out" 2>&1 || rc=1
done
secs=$(( $(date +%s) - start ))
grep '^VIOLATION' "$out"
grep -E ':[EF]:' "$out" | sed 's/^/    /'
grep '^FAULTS' "$out" | sed 's/^FAULTS /  /'
read -r points viol < <(awk '/^FAULTS/{p+=$(NF-2); v+=$NF} END{print p+0, v+0}' "$out")
summary=$(grep -E '^[0-9]+%: Checks' "$out" | tail -n 1)
echo "fault points: $points ($mode), violations: $viol, ${secs}s; $summary"
[ "$rc" -eq 0 ] && [ "$viol" -eq 0 ] && [ "$points" -gt 0 ]
