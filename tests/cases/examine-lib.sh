# examine-lib.sh: helpers for the tests/cases/examine_*/ scripts (sourced;
# not a case itself).  Run in the case's temporary folder.
set -u

need_tools() {
	for t in "$@"; do
		[ -x "$BIN/$t" ] || { echo "SKIP: $t not built yet ($BIN/$t)"; exit 77; }
	done
}
need_cmds() {
	for t in "$@"; do
		command -v "$t" >/dev/null 2>&1 || { echo "SKIP: $t not installed"; exit 77; }
	done
}
fail() { echo "FAIL: $*" >&2; exit 1; }

# run EXPECTED_RC cmd...: stdout -> .out, stderr -> .err; checks the exit
# status; a signal (>= 128) is always a failure.
run() {
	local want=$1; shift
	"$@" >.out 2>.err
	local rc=$?
	if [ $rc -ge 128 ]; then
		cat .err >&2
		fail "crashed (exit $rc): $*"
	fi
	if [ "$want" != any ] && [ $rc -ne "$want" ]; then
		echo "--- stdout" >&2; head -n 40 .out >&2
		echo "--- stderr" >&2; head -n 40 .err >&2
		fail "exit $rc, expected $want: $*"
	fi
	return 0
}
# jget FILE EXPR: a value from a JSON document (EXPR over d), via python3.
jget() {
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}
# Reproducible pseudo-random bytes: gen SEED BYTES > file
gen() {
	python3 -c 'import random,sys; r=random.Random(sys.argv[1]); sys.stdout.buffer.write(r.randbytes(int(sys.argv[2])))' "$1" "$2"
}
hash_all() { sha256sum "$@" | sort -k2; }
has() { grep -q -- "$2" "$1" || { echo "--- $1" >&2; head -n 60 "$1" >&2; fail "$1 lacks '$2'"; }; }
