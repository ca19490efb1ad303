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
 * Sample mode (the default, make check) strides over the points; RK_FAULTS=full
 * (make check-faults) runs every point, power cuts with four seeds.  Each
 * test prints "FAULTS <name> points N violations V" for tests/run-faults.sh.
 * This suite: the array write paths and scrub repair; mkraid, resize and
 * rebuild: test_faults_mkraid.c, test_faults_resize.c, test_faults_rebuild.c;
 * the harness: faults_fixture.h.
 */
#include "faults_fixture.h"

/* raid-scrub --repair as the tool runs it: the library operation over the
 * members (it opens the array for writing around the repair). */
static rk_err run_repair(const struct run *R, const struct rk_sb *tmpl, rk_dev **devs, struct rk_sb **sbs)
{
	struct rk_scrub_members m;
	rk_scrub_array_use_members(&m, tmpl, R->c->n, devs, (const struct rk_sb *const *)sbs);
	struct rk_scrub_array_opts so = { .repair = 1, .no_map = 1, .checkpoint_mode = RK_SCRUB_CKPT_NONE };
	struct rk_scrub_array_result res;
	return rk_scrub_array(&m, &so, &res);
}

/* Runs the path's writes under SPEC; returns the writes issued. */
static uint64_t run_writes(struct run *R, const struct rk_fault_spec *spec, rk_err *last, int *fired)
{
	const struct cfg *c = R->c;
	rk_fault_plan *plan = NULL;
	ck_assert_int_eq(rk_fault_plan_create(&plan, spec), RK_OK);
	rk_dev *devs[MAXM] = { 0 };
	struct rk_sb *sbs[MAXM] = { 0 };
	struct rk_sb tmpl;
	int have = 0;
	for (uint32_t r = 0; r < c->n; r++) {
		if ((int)r == R->missing)
			continue;
		rk_dev *d = NULL;
		ck_assert_int_eq(rk_dev_open(&d, paths[r], RK_DEV_RDWR), RK_OK);
		ck_assert_int_eq(rk_dev_fault(&devs[r], d, plan, (int)r), RK_OK);
		struct rk_sb_read rd;
		rk_err e = rk_sb_read(devs[r], &rd);
		if (e == RK_OK) {
			sbs[r] = malloc(sizeof *sbs[r]);
			memcpy(sbs[r], rd.copy[rd.chosen].sb, sizeof *sbs[r]);
			if (!have) {
				memcpy(&tmpl, sbs[r], sizeof tmpl);
				have = 1;
			}
		}
		rk_sb_read_free(&rd);
		if (e) {   /* a pull or read error while reading the superblock: leave it out */
			rk_dev_close(devs[r]);
			devs[r] = NULL;
		}
	}
	for (uint32_t i = 0; i < R->nops; i++)
		R->ops[i].state = 0;
	*last = RK_OK;
	rk_array *a = NULL;
	rk_err e = !have ? RK_E_TOOFEW
	         : R->p == P_REPAIR ? run_repair(R, &tmpl, devs, sbs)
	         : rk_array_open_devs(&a, &tmpl, devs, (const struct rk_sb *const *)sbs, RK_ARRAY_RDWR);
	if (e == RK_OK && a) {
		/* RK_FAULTS_NOJOURNAL=1: shows what the harness finds without the journal */
		if (getenv("RK_FAULTS_NOJOURNAL"))
			rk_array_set_journal(a, 0);
		for (uint32_t i = 0; i < R->nops; i++) {
			R->ops[i].state = 1;
			e = rk_array_write(a, R->newv + R->ops[i].off, (size_t)R->ops[i].len, R->ops[i].off);
			if (!e)
				e = rk_array_flush(a);
			if (e)
				break;
			R->ops[i].state = 2;
		}
		/* a read error met by a read through the writable array is
		 * repaired in place: the member stays, the next read is clean */
		R->re_kept = 0;
		if (spec->model == RK_FAULT_READ_ERROR && !e) {
			uint32_t f0 = rk_array_nfailed(a);
			uint8_t *chk = malloc(R->vsize);
			char why[300];
			rk_err re = rk_array_read(a, chk, R->vsize, 0);
			if (re == RK_E_TOOFEW && R->missing >= 0)
				;   /* degraded: where no redundancy is left a bad block cannot be rebuilt */
			else if (re)
				violation(R, spec, "a read through the writable array fails: %s", rk_errmsg());
			else if (check_model(R, chk, why, sizeof why))
				violation(R, spec, "a read through the writable array: %s", why);
			else if (rk_array_nfailed(a) != f0)
				violation(R, spec, "the read error failed a member instead of repairing it");
			else {
				uint64_t n1 = rk_array_nrepaired(a, NULL);
				if ((re = rk_array_read(a, chk, R->vsize, 0)) || rk_array_nrepaired(a, NULL) != n1 ||
				    rk_array_nfailed(a) != f0)
					violation(R, spec, "after the repair a second read meets the error again (%s)",
					          re ? rk_errmsg() : "repaired twice");
				R->re_kept = f0 == 0;
			}
			free(chk);
		}
		rk_err ce = rk_array_close(a);
		if (!e)
			e = ce;
	}
	*last = e;
	uint64_t w = rk_fault_writes(plan);
	*fired = rk_fault_fired(plan);
	if (spec->model == RK_FAULT_POWER_CUT)
		ck_assert_int_eq(rk_fault_crash(plan), RK_OK);
	for (uint32_t r = 0; r < c->n; r++) {
		rk_dev_close(devs[r]);
		free(sbs[r]);
	}
	rk_fault_plan_free(plan);
	return w;
}

/* The invariants after one fault point of a write path. */
static void verify_writes(struct run *R, const struct rk_fault_spec *spec, rk_err last, int fired)
{
	const struct cfg *c = R->c;
	char why[600];
	uint8_t *v = malloc(R->vsize), *w = malloc(R->vsize);
	int state;
	/* the pulled member must never be used again */
	if (spec->model == RK_FAULT_PULL && fired) {
		struct rk_discovery *d = discover_skip(c->n, 0);
		/* unless it was the last one standing: then the write stopped (too few) */
		if (last != RK_E_TOOFEW && d->narrays == 1 && d->arrays[0].roles[spec->member].cls == RK_MEMBER_ACTIVE &&
		    d->arrays[0].roles[spec->member].path)
			violation(R, spec, "the pulled member is still active (%s; the write returned %s)", d->arrays[0].why,
			          rk_strerror(last));
		rk_discovery_free(d);
	}
	if (spec->model == RK_FAULT_READ_ERROR && R->re_kept) {
		struct rk_discovery *d = discover_skip(c->n, 0);
		if (d->narrays != 1 || d->arrays[0].roles[spec->member].cls != RK_MEMBER_ACTIVE)
			violation(R, spec, "the member with the repaired read error is not active");
		rk_discovery_free(d);
	}
	if (read_volume(c->n, 0, v, R->vsize, &state, why, sizeof why)) {
		/* a pull on a degraded array may leave too few: then the write must have said so */
		if (spec->model == RK_FAULT_PULL && R->missing >= 0 && c->level != 6 && state == RK_ASTATE_FAILED &&
		    last == RK_E_TOOFEW)
			goto out;
		violation(R, spec, "does not assemble: %s (write returned %s)", why, rk_strerror(last));
		goto out;
	}
	if (check_model(R, v, why, sizeof why)) {
		violation(R, spec, "read-only (replay in memory): %s", why);
		goto out;
	}
	/* read-write open: the replay goes to the members; the array ends clean */
	{
		struct rk_discovery *d = discover_skip(c->n, 0);
		rk_array *a = NULL;
		rk_err e = d->narrays == 1 ? rk_array_open(&a, &d->arrays[0], RK_ARRAY_RDWR) : RK_E_NOSB;
		if (e)
			violation(R, spec, "read-write open: %s", rk_errmsg());
		else if ((e = rk_array_close(a)))
			violation(R, spec, "close after replay: %s", rk_errmsg());
		rk_discovery_free(d);
		if (e)
			goto out;
	}
	if (check_copies(c->n, why, sizeof why))
		violation(R, spec, "%s", why);
	if (read_volume(c->n, 0, w, R->vsize, &state, why, sizeof why)) {
		violation(R, spec, "after replay: %s", why);
		goto out;
	}
	if (memcmp(v, w, R->vsize)) {
		violation(R, spec, "replay on the members reads differently from the replay in memory");
		goto out;
	}
	if (R->p == P_REPAIR) {
		/* what the interrupted repair left, a second repair finishes */
		struct rk_fault_spec none = { .model = RK_FAULT_NONE };
		rk_err l2;
		int f2;
		run_writes(R, &none, &l2, &f2);
		if (l2 && l2 != RK_E_TOOFEW)
			violation(R, spec, "the repair run again fails: %s", rk_strerror(l2));
		if (read_volume(c->n, 0, w, R->vsize, &state, why, sizeof why) || memcmp(v, w, R->vsize)) {
			violation(R, spec, "the second repair changed the volume");
			goto out;
		}
	}
	/* the write hole: any member (any two on RAID-6) left out reads the same */
	{
		struct rk_discovery *d = discover_skip(c->n, 0);
		uint32_t active = 0;
		for (uint32_t r = 0; r < c->n; r++)
			if (d->arrays[0].roles[r].cls == RK_MEMBER_ACTIVE)
				active |= 1u << r;
		rk_discovery_free(d);
		for (uint32_t x = 0; x < c->n; x++) {
			for (uint32_t y = x; y < c->n; y++) {
				if (y != x && c->level != 6)
					continue;
				uint32_t skip = (1u << x) | (1u << y);
				if ((skip & active) != skip)
					continue;
				/* stale members stay out too: alone they would look fresh */
				if (read_volume(c->n, skip | (~active & ((1u << c->n) - 1)), w, R->vsize, &state, why, sizeof why))
					continue;   /* too few once these are left out */
				if (memcmp(v, w, R->vsize)) {
					uint64_t b = 0;
					while (b < R->vsize && v[b] == w[b])
						b++;
					violation(R, spec, "write hole: without role%s %u%s%.0u the volume differs at byte %llu",
					          x == y ? "" : "s", x, x == y ? "" : ",", x == y ? 0 : y, (unsigned long long)b);
					goto out;
				}
			}
		}
	}
out:
	free(v);
	free(w);
}

static void point(struct run *R, const struct rk_fault_spec *spec)
{
	restore_base(R);
	rk_err last;
	int fired = 0;
	R->points++;
	run_writes(R, spec, &last, &fired);
	verify_writes(R, spec, last, fired);
}

static void enumerate_writes(struct run *R)
{
	const struct cfg *c = R->c;
	struct rk_fault_spec none = { .model = RK_FAULT_NONE };
	restore_base(R);
	rk_err last;
	int fired;
	uint64_t W = run_writes(R, &none, &last, &fired);
	ck_assert_msg(last == RK_OK, "fault-free run: %s", rk_errmsg());
	ck_assert_uint_gt(W, 4);
	verify_writes(R, &none, last, 0);
	for (uint32_t i = 0; i < R->nops; i++)
		ck_assert_int_eq(R->ops[i].state, 2);
	uint64_t step = full_mode ? 1 : 4;
	int seeds = full_mode ? 4 : 1;
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
	uint64_t bstep = full_mode ? 1 : 6;
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
	const struct cfg *c = &cfgs[_i / 3];
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
	const struct cfg *c = &cfgs[_i];
	if (c->level != 4 && c->level != 5 && c->level != 6)
		return;   /* mirrors: reads may come from the bad copy; covered by the scrub suite */
	struct run R;
	setup_run(&R, c, P_REPAIR);
	enumerate_writes(&R);
	finish_run(&R, path_names[P_REPAIR]);
}
END_TEST

RK_TEST_SUITE("faults", { "enumeration", 3600, setup, teardown, 0,
	  RK_TESTS(RK_TEST_LOOP(t_writes, 0, (int)NCFG * 3),
	           RK_TEST_LOOP(t_repair, 0, (int)NCFG)) })
