/* test_hooks.c: maps the RAIDKIT_TEST_* environment of end-to-end cases onto
 * the library's test-only settings (rk_test_hooks.h).  The library itself
 * never reads the environment. */
#include "test_hooks.h"

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
	const char *jmax = getenv("RAIDKIT_TEST_JOURNAL_MAX");
	if (jmax && *jmax)
		rk_test_hooks_set_journal_max(strtoull(jmax, NULL, 0));
}
