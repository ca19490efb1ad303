# detect-lib.sh: helpers of the tests/cases/detect_*/ scripts (sourced; not
# a case itself): the shared ones from lib.sh, and these.
. "$CASE/../lib.sh"

# DETECT: the corpus tools (tests/detect: gencase, crosscheck, run-corpus).
DETECT=$TOP/tests/detect
# PY: python3 (tests/run-cases.sh puts the system's first in PATH, ahead
# of a version manager's shim).
PY=python3
command -v "$PY" >/dev/null 2>&1 || { echo "SKIP: python3 not installed"; exit 77; }

# no_wrong_answer SEED [found]: generates SEED of the detect corpus into g/
# and runs raid-recover --detect --export over its images; fails when the
# answer is found but exports another volume (the first volume_size bytes,
# as run-corpus compares) or the tool errs.  "Not found" passes, and is
# said -- unless "found" is asked: then the answer must be the volume.
# (The generator's bytes differ from run to run -- mkfs stamps times --
# but not the layout the case is about.)  A third argument "files": the
# case is about a file system filled with files; where the generator
# could not fill it (exFAT is filled through exfat-fuse, which needs a
# loop device and FUSE), the case is skipped, saying why.
no_wrong_answer() {
	"$PY" "$DETECT/gencase" --seed "$1" --out g >.gen 2>&1 || fail "gencase: $(tail -n 3 .gen)"
	# A FUSE fill made again says so; the log keeps it, as a failure's clue.
	grep -h "fill [0-9]" .gen >&2 || :
	if [ "${3:-}" = files ]; then
		why=$("$PY" -c 'import json; f=json.load(open("g/truth.json")).get("fs") or {}; print(f.get("empty_why", "") if not f.get("files_bytes", 1) else "")')
		[ -z "$why" ] || { echo "SKIP: the file system could not be filled: $why"; exit 77; }
	fi
	(
		cd g || fail "no case folder"
		files=$("$PY" -c 'import json; print(" ".join(json.load(open("truth.json"))["files"]))')
		"$BIN/raid-recover" --detect --json --export out $files >.out 2>.err
		rc=$?
		case $rc in
		0|1)
			want=$("$PY" -c 'import json; print(json.load(open("truth.json"))["volume_sha256"])')
			size=$("$PY" -c 'import json; print(json.load(open("truth.json"))["volume_size"])')
			[ "$(head -c "$size" out | sha256sum | cut -d' ' -f1)" = "$want" ] ||
				fail "found (exit $rc) but another volume: $(head -c 400 .out)" ;;
		2)
			[ "${2:-}" != found ] || fail "not found (exit 2): $(grep -o '"why": *"[^"]*"' .out | head -1)"
			echo "not found (exit 2): $(grep -o '"why": *"[^"]*"' .out | head -1)" ;;
		*)
			fail "exit $rc: $(cat .err)" ;;
		esac
	) || exit 1
}
