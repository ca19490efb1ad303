/* test_faults_seq.c: crash safety under sequences of faults (issue 12):
 * real failures come twice.  For the array write paths (full-stripe,
 * partial-stripe and degraded writes) and scrub repair, over every
 * configuration of faults_fixture.h, seeded random sequences of three
 * kinds:
 *   - seq-recovery: a crash, then a crash early in the next run (during
 *     the journal replay, the superblocks brought forward, the first write);
 *   - seq-crashes: two to five crashes in a row at random points (every
 *     other one then run to the end);
 *   - seq-crash-pull: a crash, then a member lost (left out of every later
 *     run), and up to two more crashes while the array runs degraded.
 * Each crash is a kill or a power cut (seeded post-crash image).  After a
 * sequence the same invariants as after a single fault are checked
 * (faults_writes.h verify_writes: (a) every member in step, (b) writes
 * intact, (c) any one member lost reads what the model allows, (d) scrub
 * clean after the next writing open, the write hole closed), with an op's
 * state the furthest any run got (every run writes the same bytes).
 * Sample mode (make check) runs 24 sequences of each kind per
 * configuration and path; RK_FAULTS=full (make check-faults) 480.  Check
 * (c) loses one member per sequence, in turn (every member after a single
 * fault).  A violation line names the kind and the seed of its sequence.
 * Sequences over mkraid, resize --continue and rebuild are in their own
 * suites (test_faults_mkraid.c, test_faults_resize.c, test_faults_rebuild.c). */
#include "faults_writes.h"

START_TEST(t_write_sequences)
{
	const struct cfg *c = CFG(_i / 3);
	enum path p = (enum path)(_i % 3);
	struct run R;
	if (p == P_DEGRADED)
		rk_test_hooks_set_journal_max(6144);   /* as test_faults.c */
	setup_run(&R, c, p);
	enumerate_sequences(&R, count_writes(&R));
	finish_run(&R, path_names[p]);
}
END_TEST

START_TEST(t_repair_sequences)
{
	const struct cfg *c = CFG(_i);
	if (c->level != 4 && c->level != 5 && c->level != 6)
		return;   /* as test_faults.c */
	struct run R;
	setup_run(&R, c, P_REPAIR);
	enumerate_sequences(&R, count_writes(&R));
	finish_run(&R, path_names[P_REPAIR]);
}
END_TEST

RK_TEST_SUITE("faults_seq", { "sequences", 36000, setup, teardown, 0,
	  RK_TESTS(RK_TEST_LOOP(t_write_sequences, 0, (int)NCFG_RUN * 3),
	           RK_TEST_LOOP(t_repair_sequences, 0, (int)NCFG_RUN)) })
