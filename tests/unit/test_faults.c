/* test_faults.c: crash safety proven by enumeration (issue 6).
 *
 * For small arrays of every redundant level (1, 4, 5, 6, 10) and every
 * writing path (full-stripe and partial-stripe rk_array_write, writes on a
 * degraded array, mkraid --from through the create library's wrap_dev hook,
 * raid-scrub --repair through the library operation the tool runs (rk_scrub_array) on parity levels,
 * raid-resize adding a member (rk_resize_reshape, then --continue),
 * raid-recover --rebuild of one role onto a new file (rk_recover_rebuild's
 * wrap_dev hook; after a power cut or kill the array reads the original
 * volume, and the rebuild run again finishes with the rebuilt member equal
 * to the lost one))
 * the harness first counts the writes the path issues, then runs it again
 * once per fault point: a power cut at write N (seeded post-crash image), a
 * kill at write N, a cable pull of member M at its I/O N, a read error on
 * each 4 KiB block of each member's data area.  After each it checks, on
 * the member files as they are left (discovery + rk_array_open):
 *   - the array assembles (degraded where a member was pulled; the pulled
 *     member is never used again), or, for a pull that leaves too few
 *     members, the write failed with a message;
 *   - every write reported complete (write + flush returned) reads back;
 *     bytes outside the writes never change; a write in flight holds old or
 *     new data per 512-byte sector;
 *   - a read-write open (journal replay) and close leaves both superblock
 *     copies of every member valid and equal, and the same volume;
 *   - the write hole: with any one member left out (any two on RAID-6) the
 *     degraded volume reads exactly the same bytes;
 *   - read errors: a read through the writable array meets the bad block,
 *     returns the right bytes, repairs it in place (the member stays active)
 *     and a second read is clean.
 * Issue 12 added, after every point: (a) with every member given, every
 * role active and none marked out unless a member was deliberately failed
 * (a crash alone never costs redundancy); (c) before anything replays on
 * the members, any one member lost reads what the model allows (the known
 * double fault of spec/journal.md "Limits" counted apart, and told);
 * (d) a scrub after the next writing open finds nothing.  Sequences of
 * faults: test_faults_seq.c.
 * Sample mode (the default, make check) strides over the points; RK_FAULTS=full
 * (make check-faults) runs every point, power cuts with twelve seeds.  Each
 * test prints "FAULTS <name> points N violations V" for tests/run-faults.sh.
 * This suite: the array write paths and scrub repair; mkraid, resize and
 * rebuild: test_faults_mkraid.c, test_faults_resize.c, test_faults_rebuild.c;
 * the harness: faults_fixture.h and faults_writes.h.
 */
#include "faults_writes.h"

static void enumerate_writes(struct run *R)
{
	const struct cfg *c = R->c;
	uint64_t W = count_writes(R);
	uint64_t step = full_mode ? 1 : THIN(4);
	int seeds = full_mode ? 12 : 1;
	/* power cut and kill at every write (and once past the last) */
	for (uint64_t n = 0; n <= W; n += step)
		for (int s = 0; s < seeds; s++) {
			struct rk_fault_spec sp = { .model = RK_FAULT_POWER_CUT, .n = n, .seed = n * 31 + (uint64_t)s * 7919 + 1 };
			point(R, &sp);
		}
	for (uint64_t n = (step > 1 ? 2 : 0); n < W; n += step) {
		struct rk_fault_spec sp = { .model = RK_FAULT_KILL, .n = n, .seed = n };
		point(R, &sp);
	}
	/* cable pulls: each member, at each of its I/Os (bounded by the writes).
	 * Not under repair: the array starts with bad parity there, and a
	 * member lost before the repair reached it is rebuilt from that parity
	 * (two faults: the bad parity and the pull) */
	uint64_t per = W / c->n + 12;
	for (uint32_t m = 0; m < c->n && R->p != P_REPAIR; m++) {
		if ((int)m == R->missing)
			continue;
		for (uint64_t n = m % step; n < per; n += step) {
			struct rk_fault_spec sp = { .model = RK_FAULT_PULL, .n = n, .member = (int)m, .seed = n };
			point(R, &sp);
		}
	}
	/* read errors: each 4 KiB block of each member's data area */
	uint64_t bstep = full_mode ? 1 : THIN(6);
	for (uint32_t m = 0; m < c->n; m++) {
		if ((int)m == R->missing)
			continue;
		for (uint64_t b = m % bstep; b < DATA_BYTES / 4096; b += bstep) {
			struct rk_fault_spec sp = { .model = RK_FAULT_READ_ERROR, .member = (int)m,
			                            .off = RK_DATA_OFFSET_DEFAULT + b * 4096, .len = 4096, .seed = b };
			point(R, &sp);
		}
	}
}

START_TEST(t_writes)
{
	const struct cfg *c = CFG(_i / 3);
	enum path p = (enum path)(_i % 3);
	struct run R;
	/* degraded writes go through redo records only: bound them small so
	 * that stripes group and wide stripes split into column pieces */
	if (p == P_DEGRADED)
		rk_test_hooks_set_journal_max(6144);
	setup_run(&R, c, p);
	enumerate_writes(&R);
	finish_run(&R, path_names[p]);
}
END_TEST

START_TEST(t_repair)
{
	const struct cfg *c = CFG(_i);
	if (c->level != 4 && c->level != 5 && c->level != 6)
		return;   /* mirrors: reads may come from the bad copy; covered by the scrub suite */
	struct run R;
	setup_run(&R, c, P_REPAIR);
	enumerate_writes(&R);
	finish_run(&R, path_names[P_REPAIR]);
}
END_TEST

RK_TEST_SUITE("faults", { "enumeration", 36000, setup, teardown, 0,
	  RK_TESTS(RK_TEST_LOOP(t_writes, 0, (int)NCFG_RUN * 3),
	           RK_TEST_LOOP(t_repair, 0, (int)NCFG_RUN)) })
