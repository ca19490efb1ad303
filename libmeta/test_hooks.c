/* test_hooks.c: the test-only settings of rk_test_hooks.h. */
#include "rk_test_hooks.h"

#include <stddef.h>

static struct rk_fault_spec fault_spec;
static int fault_on;
static uint64_t journal_max;

void rk_test_hooks_set_fault(const struct rk_fault_spec *spec)
{
	fault_on = spec && spec->model != RK_FAULT_NONE;
	if (fault_on)
		fault_spec = *spec;
}

void rk_test_hooks_set_journal_max(uint64_t bytes)
{
	journal_max = bytes;
}

const struct rk_fault_spec *rk_test_hooks_fault(void)
{
	return fault_on ? &fault_spec : NULL;
}

uint64_t rk_test_hooks_journal_max(void)
{
	return journal_max;
}
