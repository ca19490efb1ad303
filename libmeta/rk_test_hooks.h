/* rk_test_hooks.h: FOR TESTS ONLY.  The one way a test changes how library
 * operations treat the members they open, so that faults can be injected
 * under the real code paths without the library reading the environment.
 *
 * Process-wide settings, off by default; set them before the operation
 * (they are read when an array is opened or first written, not locked).
 * Unit tests call the setters directly.  The tools map the environment onto
 * them once, at the start of main() (tools/cli/test_hooks.c,
 * cli_test_hooks_install):
 *   RAIDKIT_TEST_FAULT="model=M,n=N[,member=K][,seed=S][,off=O,len=L]"
 *       -> rk_test_hooks_set_fault (rk_fault_spec_parse's form)
 *   RAIDKIT_TEST_JOURNAL_MAX=BYTES -> rk_test_hooks_set_journal_max
 * Never set any of them for real use.
 */
#ifndef RK_TEST_HOOKS_H
#define RK_TEST_HOOKS_H

#include <stdint.h>
#include "rk_dev.h"

/* Wraps every member rk_array_open() / rk_array_open_members() opens
 * read-write in the fault-injecting backend (rk_dev_fault), one plan per
 * array made from SPEC (so write numbers count across its members in
 * issue order); with RK_FAULT_POWER_CUT the post-crash image is applied
 * when the array is freed (rk_array_close).  SPEC is copied; NULL (or
 * model RK_FAULT_NONE) turns wrapping off. */
void rk_test_hooks_set_fault(const struct rk_fault_spec *spec);

/* Caps the payload one journal record carries per member at BYTES when it
 * is at least 512 and below the bound the journal area sets (smaller
 * records exercise grouping and column pieces); 0 removes the cap. */
void rk_test_hooks_set_journal_max(uint64_t bytes);

/* The settings as the library reads them: the fault spec to wrap members
 * with (NULL when off) and the journal record cap (0 when none). */
const struct rk_fault_spec *rk_test_hooks_fault(void);
uint64_t rk_test_hooks_journal_max(void);

#endif
