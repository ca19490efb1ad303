#!/bin/bash
# The crash-safety fault enumeration (issues 6 and 12, spec/journal.md).
#   tests/run-faults.sh [full|sample]
# full (make check-faults): every fault point of tests/unit/test_faults*.c,
# power cuts with four seeds, and the full set of fault sequences; sample:
# the stride make check runs.  Prints every violation, the count of points
# by path and fault kind, the known double fault (spec/journal.md
# "Limits"), then the total count of fault points and violations.
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
export CK_DEFAULT_TIMEOUT=${CK_DEFAULT_TIMEOUT:-36000}
[ "$mode" = full ] && export RK_FAULTS=full || unset RK_FAULTS
start=$(date +%s)
# the suites split from test_faults (test_faults_mkraid, ...) run beside it
# (in full mode the sequences, the longest, in as many shards as CPUs)
rc=0
pids=()
jobs=${RK_TEST_JOBS:-$(nproc 2>/dev/null || echo 2)}
rm -f "$log"/faults-$mode-test_faults*.log
runs=()
shards=1
[ "$mode" = full ] && shards=$jobs
if [ -x "$bin"_seq ]; then
	for ((i = 0; i < shards; i++)); do runs+=("$bin"_seq" $i/$shards"); done
fi
for b in "$bin" "$bin"_*; do
	[ -x "$b" ] && [ "$b" != "$bin"_seq ] && runs+=("$b -")
done
for r in "${runs[@]}"; do
	read -r b shard <<<"$r"
	name=$(basename "$b")${shard/\//of}
	[ "$shard" = - ] && name=$(basename "$b")
	RK_FAULTS_SHARD=$shard "$b" >"$log/faults-$mode-$name.log" 2>&1 &
	pids+=($!)
	while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
done
for p in "${pids[@]}"; do wait "$p" || rc=1; done
cat "$log"/faults-$mode-test_faults*.log >"$out"
secs=$(( $(date +%s) - start ))
grep '^VIOLATION' "$out"
grep -E ':[EF]:' "$out" | sed 's/^/    /'
grep '^FAULTS' "$out" | sed 's/^FAULTS /  /'
echo "fault points by path and kind:"
awk '/^FAULTKIND/{n[$2" "$3]+=$4; p[$2]=1; k[$3]=1}
     END{printf "  %-10s", "path"; for (j in k) printf " %14s", j; printf "\n";
         for (i in p) {printf "  %-10s", i; for (j in k) printf " %14d", n[i" "j]; printf "\n"}}' "$out"
awk '/^FAULTKIND/{ if ($3 ~ /^seq-/) s+=$4 } END{print "  in sequences: " s+0}' "$out"
awk '/^DOUBLEFAULT/{d+=$(NF-2); q+=$NF} END{if (d) print "known double fault (crash in a write-intent window, then a member lost): " d " points, " q " of them not told by the open that found it"}' "$out"
read -r points viol < <(awk '/^FAULTS/{p+=$(NF-2); v+=$NF} END{print p+0, v+0}' "$out")
summary=$(grep -E '^[0-9]+%: Checks' "$out" | awk -F'[:,]' '{c+=$3; f+=$5; e+=$7} END{print "Checks: " c ", Failures: " f ", Errors: " e}')
echo "fault points: $points ($mode), violations: $viol, ${secs}s; $summary"
[ "$rc" -eq 0 ] && [ "$viol" -eq 0 ] && [ "$points" -gt 0 ]
