# examine-lib.sh: helpers of the tests/cases/examine_*/ scripts (sourced;
# not a case itself): the shared ones from lib.sh.
. "$CASE/../lib.sh"
