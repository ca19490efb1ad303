/* test_hooks.c: maps the RAIDKIT_TEST_* environment of end-to-end cases onto
 * the library's test-only settings (rk_test_hooks.h).  The library itself
 * never reads the environment. */
#include "test_hooks.h"

#include <stdint.h>
#include <stdlib.h>

#include "cli.h"
#include "rk_err.h"
#include "rk_test_hooks.h"

void cli_test_hooks_install(void)
{
	const char *fault = getenv("RAIDKIT_TEST_FAULT");
	if (fault && *fault) {
		struct rk_fault_spec spec;
		if (rk_fault_spec_parse(fault, &spec)) {
			cli_err("RAIDKIT_TEST_FAULT: %s", rk_errmsg());
			exit(EX_FAIL);
		}
		rk_test_hooks_set_fault(&spec);
	}
	/* raid-recover's older form: a kill at write N */
	const char *kill_at = getenv("RAIDKIT_TEST_KILL_AT_WRITE");
	if (kill_at && *kill_at) {
		struct rk_fault_spec spec = { .model = RK_FAULT_KILL };
		if (cli_parse_uint(kill_at, 0, UINT64_MAX, &spec.n))
			exit(cli_usage_error("RAIDKIT_TEST_KILL_AT_WRITE: not a number: %s", kill_at));
		rk_test_hooks_set_fault(&spec);
	}
	/* progress lines at once, so small test arrays show one */
	const char *pint = getenv("RAIDKIT_TEST_PROGRESS_INTERVAL");
	if (pint && *pint)
		cli_progress_set_interval(strtod(pint, NULL));
	const char *jmax = getenv("RAIDKIT_TEST_JOURNAL_MAX");
	if (jmax && *jmax)
		rk_test_hooks_set_journal_max(strtoull(jmax, NULL, 0));
}
