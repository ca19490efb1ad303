/* test_faults_rebuild.c: crash safety of raid-recover --rebuild of one role
 * onto a new file (rk_recover_rebuild's wrap_dev hook), proven by
 * enumeration (the method: test_faults.c) */
#include "faults_fixture.h"

/* ---- raid-recover --rebuild ---- */

static rk_err wrap_rebuild(void *ctx, uint32_t idx, rk_dev **dev)
{
	struct wrap_ctx *w = ctx;
	return rk_dev_fault(dev, *dev, w->plan, (int)idx);
}

/* Rebuilds role R->rb_role of the array (its member left out) onto a new
 * file at its path under SPEC (NULL: no faults, a resume or a finish);
 * returns the writes issued. */
static uint64_t run_rebuild(struct run *R, const struct rk_fault_spec *spec, rk_err *last)
{
	uint32_t n = R->c->n, x = R->rb_role;
	char *mp[MAXM];
	uint32_t k = 0;
	for (uint32_t i = 0; i < n; i++)
		if (i != x)
			mp[k++] = paths[i];
	struct rk_fault_spec none = { .model = RK_FAULT_NONE };
	struct wrap_ctx w = { NULL };
	ck_assert_int_eq(rk_fault_plan_create(&w.plan, spec ? spec : &none), RK_OK);
	struct rk_rebuild_opts o;
	memset(&o, 0, sizeof o);
	o.role = -1;
	o.checkpoint_bytes = 2 * (R->c->chunk ? R->c->chunk : 4096);   /* many checkpoints */
	o.wrap_dev = wrap_rebuild;
	o.wrap_ctx = &w;
	struct rk_rebuild_result res;
	*last = rk_recover_rebuild(paths[x], mp, k, &o, &res);
	uint64_t wr = rk_fault_writes(w.plan);
	if (spec && spec->model == RK_FAULT_POWER_CUT)
		ck_assert_int_eq(rk_fault_crash(w.plan), RK_OK);
	rk_fault_plan_free(w.plan);
	return wr;
}

/* After the fault: the array assembles and reads the original volume; the
 * rebuild run again (unless it had finished) completes; then every role is
 * active, the superblock copies agree, the rebuilt member's data area
 * equals the lost one's, and with any member left out the volume reads the
 * same. */
static void verify_rebuild(struct run *R, const struct rk_fault_spec *spec, rk_err last)
{
	const struct cfg *c = R->c;
	uint32_t x = R->rb_role;
	char why[600];
	int state;
	uint8_t *v = malloc(R->vsize);
	check_in_step(R, spec, c->n, 1u << x);   /* (a): only the role being rebuilt may be out */
	if (read_volume(c->n, 0, v, R->vsize, &state, why, sizeof why)) {
		violation(R, spec, "after the fault: %s (the rebuild returned %s)", why, rk_strerror(last));
		goto out;
	}
	if (memcmp(v, R->oldv, R->vsize)) {
		violation(R, spec, "after the fault the volume differs (the rebuild returned %s)", rk_strerror(last));
		goto out;
	}
	struct rk_discovery *d = discover_skip(c->n, 0);
	int done = d->narrays == 1 && d->arrays[0].state == RK_ASTATE_CLEAN &&
	           d->arrays[0].roles[x].cls == RK_MEMBER_ACTIVE && d->arrays[0].roles[x].path;
	rk_discovery_free(d);
	if (last == RK_OK && !done) {
		violation(R, spec, "the rebuild reported success but the array is not whole");
		goto out;
	}
	if (!done) {
		rk_err l2;
		run_rebuild(R, NULL, &l2);
		if (l2) {
			violation(R, spec, "the rebuild run again fails: %s", rk_errmsg());
			goto out;
		}
	}
	/* a read-write open and close (as raid-assemble --write) brings a
	 * member one event behind, tolerated by discovery, back in step */
	d = discover_skip(c->n, 0);
	{
		rk_array *a = NULL;
		rk_err e = d->narrays == 1 ? rk_array_open(&a, &d->arrays[0], RK_ARRAY_RDWR) : RK_E_NOSB;
		if (!e)
			e = rk_array_close(a);
		rk_discovery_free(d);
		if (e) {
			violation(R, spec, "after the rebuild a read-write open fails: %s", rk_errmsg());
			goto out;
		}
	}
	if (check_copies(c->n, why, sizeof why)) {
		violation(R, spec, "after the rebuild: %s", why);
		goto out;
	}
	d = discover_skip(c->n, 0);
	done = d->narrays == 1 && d->arrays[0].state == RK_ASTATE_CLEAN;
	for (uint32_t r = 0; done && r < c->n; r++)
		done = d->arrays[0].roles[r].cls == RK_MEMBER_ACTIVE;
	rk_discovery_free(d);
	if (!done) {
		violation(R, spec, "after the rebuild ran again not every role is active");
		goto out;
	}
	{
		uint8_t *m = get_file(paths[x], MEMBER_BYTES);
		if (memcmp(m + RK_DATA_OFFSET_DEFAULT, R->base[x] + RK_DATA_OFFSET_DEFAULT, (size_t)R->data_size))
			violation(R, spec, "the rebuilt member's data area differs from the lost member's");
		free(m);
	}
	for (uint32_t y = 0; y < c->n; y++) {
		if (read_volume(c->n, 1u << y, v, R->vsize, &state, why, sizeof why) || memcmp(v, R->oldv, R->vsize)) {
			violation(R, spec, "after the rebuild, without role %u the volume differs", y);
			break;
		}
	}
out:
	free(v);
}

static void rebuild_point(struct run *R, const struct rk_fault_spec *spec)
{
	rk_err last;
	restore_base(R);
	unlink(paths[R->rb_role]);   /* the lost member: NEW is created at its path */
	run_rebuild(R, spec, &last);
	count_point(R, model_kind(spec->model));
	verify_rebuild(R, spec, last);
}

/* A sequence: the rebuild cut short by two to five random crashes in a
 * row, each run resuming the last (a crash during the recovery of a
 * crash), then checked as a single point is. */
static void rebuild_sequence(struct run *R, uint64_t W, uint64_t seed)
{
	uint64_t x = seed * 0x9E3779B97F4A7C15ull + 7;
	uint32_t ncrash = 2 + (uint32_t)(rnd(&x) % 4);
	struct rk_fault_spec sp = { .model = RK_FAULT_NONE };
	rk_err last = RK_OK;
	restore_base(R);
	unlink(paths[R->rb_role]);
	count_point(R, K_SEQ_CRASHES);
	for (uint32_t i = 0; i < ncrash; i++) {
		sp = random_crash(&x, W + W / 4 + 1);
		run_rebuild(R, &sp, &last);
	}
	sp.seed = seed;
	verify_rebuild(R, &sp, last);
}

static void enumerate_rebuild(struct run *R)
{
	const struct cfg *c = R->c;
	struct rk_fault_spec none = { .model = RK_FAULT_NONE };
	rk_err last;
	restore_base(R);
	unlink(paths[R->rb_role]);
	uint64_t W = run_rebuild(R, &none, &last);
	ck_assert_msg(last == RK_OK, "fault-free rebuild: %s", rk_errmsg());
	verify_rebuild(R, &none, last);
	uint64_t step = full_mode ? 1 : THIN(6);
	int seeds = full_mode ? 4 : 1;
	for (uint64_t n = R->rb_role % step; n <= W; n += step)
		for (int sd = 0; sd < seeds; sd++) {
			struct rk_fault_spec sp = { .model = RK_FAULT_POWER_CUT, .n = n, .seed = n * 23 + (uint64_t)sd * 577 + c->n };
			rebuild_point(R, &sp);
		}
	for (uint64_t n = 1 + R->rb_role % step; n < W; n += step) {
		struct rk_fault_spec sp = { .model = RK_FAULT_KILL, .n = n };
		rebuild_point(R, &sp);
	}
	uint64_t nseq = full_mode ? 500 : FEW(30);
	for (uint64_t i = 0; i < nseq; i++)
		rebuild_sequence(R, W, ((uint64_t)c->level << 40) ^ ((uint64_t)c->n << 32) ^ i);
}

START_TEST(t_rebuild)
{
	const struct cfg *c = CFG(_i);
	struct run R;
	setup_run(&R, c, P_FULL);
	R.p = P_REBUILD;
	R.rb_role = (uint32_t)_i % c->n;   /* data, parity and mirror roles over the configurations */
	enumerate_rebuild(&R);
	finish_run(&R, path_names[P_REBUILD]);
}
END_TEST

RK_TEST_SUITE("faults_rebuild", { "enumeration", 36000, setup, teardown, 0,
	  RK_TESTS(RK_TEST_LOOP(t_rebuild, 0, (int)NCFG_RUN)) })
