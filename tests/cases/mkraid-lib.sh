# mkraid-lib.sh: helpers of the tests/cases/mkraid_*/ scripts (sourced; not
# a case itself): the shared ones from lib.sh; every case needs mkraid.
. "$CASE/../lib.sh"
need_tools mkraid
