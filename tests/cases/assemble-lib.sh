# assemble-lib.sh: helpers shared by the tests/cases/assemble_*/ scripts
# (sourced; not a case itself).  Run in the case's temporary folder.
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

# Reproducible pseudo-random bytes: gen SEED BYTES > file
gen() {
	openssl enc -aes-128-ctr -nosalt -pass "pass:$1" -pbkdf2 -iter 1 </dev/zero 2>/dev/null | head -c "$2"
}

# run EXPECTED_RC cmd...: runs cmd with stdout -> .out, stderr -> .err and
# checks its exit status; a signal (>= 128) is always a failure.
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

# The exported volume starts with FILE and is zero after it.
same_prefix_zero_tail() {
	local data=$1 vol=$2 n
	n=$(stat -c %s "$data")
	cmp -n "$n" "$data" "$vol" >/dev/null || fail "$vol: first $n bytes differ from $data"
	[ "$(tail -c +$((n + 1)) "$vol" | tr -d '\0' | head -c 1 | wc -c)" -eq 0 ] ||
		fail "$vol: non-zero bytes after the data"
}

# jq-free JSON queries through python: jget FILE EXPR (EXPR over d).
jget() {
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

hash_all() { sha256sum "$@" | sort -k2; }
