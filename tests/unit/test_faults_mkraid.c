/* test_faults_mkraid.c: crash safety of mkraid --from through the create
 * library's wrap_dev hook, proven by enumeration (the method: test_faults.c) */
#include "faults_fixture.h"

/* ---- mkraid --from through wrap_dev ---- */

static rk_err wrap_fault(void *ctx, uint32_t role, rk_dev **dev)
{
	struct wrap_ctx *w = ctx;
	return rk_dev_fault(dev, *dev, w->plan, (int)role);
}

/* One mkraid --from under SPEC; returns the writes issued. */
static uint64_t run_mkraid(struct run *R, const struct rk_fault_spec *spec, rk_err *last)
{
	const struct cfg *c = R->c;
	struct wrap_ctx w = { NULL };
	ck_assert_int_eq(rk_fault_plan_create(&w.plan, spec), RK_OK);
	struct rk_create_opts o;
	create_opts(c, from_path, &o);
	o.wrap_dev = wrap_fault;
	o.wrap_ctx = &w;
	*last = rk_create(&o, NULL);
	uint64_t n = rk_fault_writes(w.plan);
	if (spec->model == RK_FAULT_POWER_CUT)
		ck_assert_int_eq(rk_fault_crash(w.plan), RK_OK);
	rk_fault_plan_free(w.plan);
	return n;
}

/* After mkraid: nothing assembles, or the array holds FILE's bytes then zeros. */
static void verify_mkraid(struct run *R, const struct rk_fault_spec *spec, rk_err last)
{
	char why[600];
	int state;
	uint8_t *v = malloc(R->vsize);
	struct rk_discovery *d = discover_skip(R->c->n, 0);
	int any = d->narrays > 0;
	rk_discovery_free(d);
	if (!any) {
		if (last == RK_OK)
			violation(R, spec, "mkraid reported success but no array is found");
		goto out;
	}
	if (read_volume(R->c->n, 0, v, R->vsize, &state, why, sizeof why)) {
		if (state == RK_ASTATE_FAILED && last != RK_OK)
			goto out;   /* superblocks on too few members: nothing made */
		violation(R, spec, "mkraid left an array that does not read: %s", why);
		goto out;
	}
	for (uint64_t b = 0; b < R->vsize; b++) {
		uint8_t want = b < R->from_len ? R->newv[b] : 0;
		if (v[b] != want) {
			violation(R, spec, "mkraid left an array whose byte %llu is not the --from data", (unsigned long long)b);
			break;
		}
	}
	if (last == RK_OK && state != RK_ASTATE_CLEAN && spec->model != RK_FAULT_PULL &&
	    spec->model != RK_FAULT_READ_ERROR)
		violation(R, spec, "mkraid reported success but the array is %s", rk_astate_name(state));
out:
	free(v);
}

static void enumerate_mkraid(struct run *R)
{
	const struct cfg *c = R->c;
	memset(R, 0, sizeof *R);
	R->c = c;
	R->p = P_MKRAID;
	R->missing = -1;
	R->pulled = -1;
	create_plain(c, NULL);
	struct rk_discovery *d = discover_skip(c->n, 0);
	R->vsize = d->arrays[0].sb->volume_size;
	rk_discovery_free(d);
	R->newv = malloc(R->vsize);
	R->from_len = R->vsize - R->vsize / 5 - 123;
	fill(R->newv, R->vsize, 4242 + c->n);
	put_file(from_path, R->newv, (size_t)R->from_len);
	struct rk_fault_spec none = { .model = RK_FAULT_NONE };
	rk_err last;
	uint64_t W = run_mkraid(R, &none, &last);
	ck_assert_msg(last == RK_OK, "fault-free mkraid: %s", rk_errmsg());
	verify_mkraid(R, &none, last);
	/* mkraid writes few times and runs in seconds: an eighth of the sample
	 * under the sanitizers (over five points), not the sixteenth */
	uint64_t step = full_mode ? 1 : SAN_THIN > 1 ? 24 : 3;
	int seeds = full_mode ? 24 : 1;
	for (uint64_t n = 0; n <= W; n += step)
		for (int s = 0; s < seeds; s++) {
			struct rk_fault_spec sp = { .model = RK_FAULT_POWER_CUT, .n = n, .seed = n * 13 + (uint64_t)s * 101 + 5 };
			run_mkraid(R, &sp, &last);
			count_point(R, model_kind(sp.model));
			verify_mkraid(R, &sp, last);
		}
	for (uint64_t n = 1; n < W; n += step) {
		struct rk_fault_spec sp = { .model = RK_FAULT_KILL, .n = n };
		run_mkraid(R, &sp, &last);
		count_point(R, model_kind(sp.model));
		verify_mkraid(R, &sp, last);
	}
	uint64_t per = W / c->n + 4;
	for (uint32_t m = 0; m < c->n; m++)
		for (uint64_t n = m % step; n < per; n += step) {
			struct rk_fault_spec sp = { .model = RK_FAULT_PULL, .member = (int)m, .n = n };
			run_mkraid(R, &sp, &last);
			count_point(R, model_kind(sp.model));
			verify_mkraid(R, &sp, last);
		}
	/* sequences: mkraid cut short two to five times in a row (each run
	 * over what the last left), then checked as a single point is */
	uint64_t nseq = full_mode ? 300 : SAN_THIN > 1 ? 2 : 20;
	for (uint64_t i = 0; i < nseq; i++) {
		uint64_t x = (((uint64_t)c->level << 40) ^ ((uint64_t)c->n << 32) ^ i) * 0x9E3779B97F4A7C15ull + 3;
		uint32_t ncrash = 2 + (uint32_t)(rnd(&x) % 4);
		struct rk_fault_spec sp = { .model = RK_FAULT_NONE };
		count_point(R, K_SEQ_CRASHES);
		for (uint32_t k = 0; k < ncrash; k++) {
			sp = random_crash(&x, W + 1);
			run_mkraid(R, &sp, &last);
		}
		verify_mkraid(R, &sp, last);
	}
	free(R->newv);
	R->newv = NULL;
}

START_TEST(t_mkraid)
{
	struct run R;
	R.c = &cfgs[_i];
	enumerate_mkraid(&R);
	report(&R, "mkraid");
	ck_assert_uint_gt(R.points, 5);
	ck_assert_msg(R.violations == 0, "%llu violations (see above)", (unsigned long long)R.violations);
}
END_TEST

RK_TEST_SUITE("faults_mkraid", { "enumeration", 36000, setup, teardown, 0,
	  RK_TESTS(RK_TEST_LOOP(t_mkraid, 0, (int)NCFG)) })
