# lib.sh: helpers shared by the end-to-end case scripts (sourced through the
# tool's NAME-lib.sh, which every case sources first; not a case itself).  Run in the case's
# temporary folder with BIN, CASE and TOP set by tests/run-cases.sh.
set -u

# need_tools TOOL...: skip (exit 77) unless every tool is built in $BIN.
need_tools() {
	for t in "$@"; do
		[ -x "$BIN/$t" ] || { echo "SKIP: $t not built yet ($BIN/$t)"; exit 77; }
	done
}
# need_cmds CMD...: skip (exit 77) unless every command is installed.
need_cmds() {
	for t in "$@"; do
		command -v "$t" >/dev/null 2>&1 || { echo "SKIP: $t not installed"; exit 77; }
	done
}

# need_fixtures NAME...: skip unless the foreign fixtures NAME.img.xz are
# in $RK_FIXTURES (default: the clone's tests/fixtures/foreign); FX is set
# to that folder.
need_fixtures() {
	FX=${RK_FIXTURES:-$TOP/tests/fixtures/foreign}
	for n in "$@"; do
		[ -f "$FX/$n.img.xz" ] || { echo "SKIP: no fixture $n.img.xz at $FX"; exit 77; }
	done
}

fail() { echo "FAIL: $*" >&2; exit 1; }

# big_sha256sum [FILE...]: sha256sum's output ("HASH  NAME", "-" for
# stdin), through openssl where there is one: its SHA-NI code hashes about
# three times as fast, for the gigabytes of members the kernel cases hash.
# (openssl starts slower: small files keep coreutils' sha256sum.)
big_sha256sum() {
	command -v openssl >/dev/null 2>&1 || { sha256sum "$@"; return; }
	local n=$#
	openssl dgst -sha256 -r "$@" | while read -r h f; do
		f=${f#\*}
		[ "$n" = 0 ] && f=-
		printf '%s  %s\n' "$h" "$f"
	done
	return "${PIPESTATUS[0]}"
}

# san_build: true when the tools are built with sanitizers (make check
# SAN=1 passes SAN, or ASan symbols in raid-assemble): cases then run a
# sample of their rounds, since every tool runs several times slower.
san_build() {
	[ "${SAN:-}" = 1 ] && return 0
	grep -q -a -m1 __asan_init "$BIN/raid-assemble" 2>/dev/null
}

# san_skip I: true for odd I under the sanitizers: a loop over many specs
# runs every other one there (the plain run runs them all).
san_skip() { san_build && [ $(( $1 % 2 )) = 1 ]; }

# Under the sanitizers LeakSanitizer's scan at exit costs about 60 ms a
# process, and cases run the tools thousands of times (a third of the
# SAN=1 case time).  Leaks are therefore checked on the first run() of each
# tool in a case (and everywhere in the unit suites and fuzz replays, which
# run the library); other runs skip the exit scan.
if san_build; then
	RK_LEAK_CHECKED=" "
	export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"
fi

# run EXPECTED_RC cmd...: runs cmd with stdout -> .out, stderr -> .err and
# checks its exit status (EXPECTED_RC "any" takes every status); a signal
# (>= 128) is always a failure.
run() {
	local want=$1; shift
	local tool=${1##*/}
	if [ -n "${RK_LEAK_CHECKED:-}" ] && [[ "$RK_LEAK_CHECKED" != *" $tool "* ]]; then
		RK_LEAK_CHECKED+="$tool "
		ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=1" "$@" >.out 2>.err
	else
		"$@" >.out 2>.err
	fi
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

# has FILE REGEX: FILE has a line matching REGEX (grep), else fail showing it.
has() { grep -q -- "$2" "$1" || { echo "--- $1" >&2; head -n 60 "$1" >&2; fail "$1 lacks '$2'"; }; }

# jget FILE EXPR: a value from a JSON document (EXPR over d), via python3
# (no jq needed).
jget() {
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

# Reproducible pseudo-random bytes: gen SEED BYTES > file (python3).
# assemble-lib.sh replaces it with a faster openssl stream (other bytes).
gen() {
	python3 -c 'import random,sys; r=random.Random(sys.argv[1]); sys.stdout.buffer.write(r.randbytes(int(sys.argv[2])))' "$1" "$2"
}

# hash_all FILE...: their sha256 sums, sorted by name (compare before/after).
hash_all() { sha256sum "$@" | sort -k2; }
