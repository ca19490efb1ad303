/* test_hooks.h: the tools' side of rk_test_hooks.h (tests only). */
#ifndef CLI_TEST_HOOKS_H
#define CLI_TEST_HOOKS_H

/* Reads the RAIDKIT_TEST_* variables of end-to-end cases
 * (RAIDKIT_TEST_FAULT, RAIDKIT_TEST_JOURNAL_MAX, RAIDKIT_TEST_PROGRESS_INTERVAL
 * (seconds between progress lines), and
 * RAIDKIT_TEST_KILL_AT_WRITE=N, short for RAIDKIT_TEST_FAULT="model=kill,n=N")
 * and installs them through rk_test_hooks.h.  Tools that open members
 * themselves (raid-scrub, raid-recover --rebuild) wrap them with
 * rk_test_hooks_fault()'s spec; rk_array_open does it for the rest.  Call once at the start of main(), after cli_init().
 * A malformed RAIDKIT_TEST_FAULT is reported and the tool exits EX_FAIL.
 * Unset variables change nothing. */
void cli_test_hooks_install(void);

#endif
