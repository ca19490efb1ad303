# scrub-lib.sh: helpers of the tests/cases/scrub_*/ scripts (sourced; not a
# case itself): the shared ones from lib.sh, and these.
. "$CASE/../lib.sh"

# mkarr LEVEL N PREFIX [mkraid options...]: an array of N 8 MiB members
# PREFIX0.. filled from ./data; the member names go to the array MS.
mkarr() {
	local level=$1 n=$2 pre=$3; shift 3
	MS=()
	for i in $(seq 0 $((n - 1))); do MS+=("$pre$i"); done
	run 0 "$BIN/mkraid" -l "$level" "$@" --create-size 8M --from data "${MS[@]}"
}

# flipvol OFFSET LEN MEMBER...: XORs LEN bytes of the member copy of volume
# byte OFFSET (found with raid-examine --map); prints "role stripe".
flipvol() {
	local off=$1 len=$2; shift 2
	run 0 "$BIN/raid-examine" --map "$off" --json "$@"
	python3 - "$len" <<'PY' || fail "cannot flip volume byte $off"
import json, sys
d = json.load(open(".out"))
n = int(sys.argv[1])
assert d["run"] >= n, d
with open(d["path"], "r+b") as f:
    f.seek(d["member_offset"])
    b = f.read(n)
    f.seek(d["member_offset"])
    f.write(bytes(x ^ 0xa5 for x in b))
print(d["role"], d["stripe"])
PY
}

# export_vol OUT MEMBER...: the volume through raid-assemble --export.
export_vol() {
	local out=$1; shift
	run any "$BIN/raid-assemble" --export "$out" "$@"
	[ -s "$out" ] || fail "export to $out failed"
}
