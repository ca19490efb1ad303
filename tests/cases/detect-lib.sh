# detect-lib.sh: helpers of the tests/cases/detect_*/ scripts (sourced; not
# a case itself): the shared ones from lib.sh, and these.
. "$CASE/../lib.sh"

# DETECT: the corpus tools (tests/detect: gencase, crosscheck, run-corpus).
DETECT=$TOP/tests/detect
# PY: the system's python3 when there is one (a pyenv shim costs a second
# a start).
PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3
command -v "$PY" >/dev/null 2>&1 || { echo "SKIP: python3 not installed"; exit 77; }
