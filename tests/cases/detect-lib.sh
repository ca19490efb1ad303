# detect-lib.sh: helpers of the tests/cases/detect_*/ scripts (sourced; not
# a case itself): the shared ones from lib.sh, and these.
. "$CASE/../lib.sh"

# DETECT: the corpus tools (tests/detect: gencase, crosscheck, run-corpus).
DETECT=$TOP/tests/detect
# PY: python3 (tests/run-cases.sh puts the system's first in PATH, ahead
# of a version manager's shim).
PY=python3
command -v "$PY" >/dev/null 2>&1 || { echo "SKIP: python3 not installed"; exit 77; }
