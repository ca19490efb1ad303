/* test_faults_resize.c: crash safety of raid-resize adding a member
 * (rk_resize_reshape, then --continue), proven by enumeration (the method:
 * test_faults.c); sequences: crashes in a row over the reshape and its
 * --continue, and over the reshape and its --revert. */
#include "faults_fixture.h"

/* ---- raid-resize: adding a member (a reshape) ---- */

/* Which raid-resize operation a run does. */
enum resize_op { OP_RESHAPE, OP_CONTINUE, OP_REVERT };

/* One raid-resize operation over the first K member files under SPEC (the
 * reshape: the n-member array onto paths[n]); *LAST gets its error.
 * Returns the writes issued. */
static uint64_t run_op(struct run *R, enum resize_op op, const struct rk_fault_spec *spec, uint32_t k, rk_err *last)
{
	uint32_t n = R->c->n;
	rk_fault_plan *plan = NULL;
	ck_assert_int_eq(rk_fault_plan_create(&plan, spec), RK_OK);
	rk_dev *devs[MAXM + 1] = { 0 };
	for (uint32_t r = 0; r < k; r++) {
		rk_dev *d = NULL;
		ck_assert_int_eq(rk_dev_open(&d, paths[r], RK_DEV_RDWR), RK_OK);
		ck_assert_int_eq(rk_dev_fault(&devs[r], d, plan, (int)r), RK_OK);
	}
	struct rk_resize_opts o;
	memset(&o, 0, sizeof o);
	o.layout = RK_RESIZE_LAYOUT_KEEP;
	o.batch_max = 2 * R->stripe_data;   /* many checkpoints */
	struct rk_resize_result res;
	*last = op == OP_RESHAPE ? rk_resize_reshape(devs, n, &devs[n], 1, &o, &res)
	      : op == OP_CONTINUE ? rk_resize_continue(devs, k, &o, &res)
	      : rk_resize_revert(devs, k, &o, &res);
	uint64_t w = rk_fault_writes(plan);
	if (spec->model == RK_FAULT_POWER_CUT)
		ck_assert_int_eq(rk_fault_crash(plan), RK_OK);
	for (uint32_t r = 0; r < k; r++)
		rk_dev_close(devs[r]);
	rk_fault_plan_free(plan);
	return w;
}

/* One reshape of the n-member array onto paths[n] under SPEC. */
static uint64_t run_resize(struct run *R, const struct rk_fault_spec *spec, rk_err *last)
{
	return run_op(R, OP_RESHAPE, spec, R->c->n + 1, last);
}

/* raid-resize --continue on the n+1 members under SPEC (a crash while
 * the reshape is resumed). */
static void run_continue(struct run *R, const struct rk_fault_spec *spec)
{
	rk_err e;
	run_op(R, OP_CONTINUE, spec, R->c->n + 1, &e);
}

/* raid-resize --revert on the first N member files under SPEC; returns
 * its error. */
static rk_err run_revert(struct run *R, const struct rk_fault_spec *spec, uint32_t n)
{
	rk_err e;
	run_op(R, OP_REVERT, spec, n, &e);
	return e;
}

/* After the fault: raid-resize --continue on the members as left (with and
 * then without the new one), then the volume holds the old data, and with
 * any member left out reads the same. */
static void verify_resize(struct run *R, const struct rk_fault_spec *spec, rk_err last)
{
	uint32_t n = R->c->n;
	char why[600];
	int state;
	rk_err e = RK_OK;
	/* (a): a crash leaves every member in step (a pull: the pulled one out) */
	check_in_step(R, spec, n + 1, spec->model == RK_FAULT_PULL ? 1u << spec->member : 0);
	for (uint32_t k = n + 1; k >= n; k--) {
		rk_dev *devs[MAXM + 1] = { 0 };
		for (uint32_t r = 0; r < k; r++)
			ck_assert_int_eq(rk_dev_open(&devs[r], paths[r], RK_DEV_RDWR), RK_OK);
		struct rk_resize_opts o;
		memset(&o, 0, sizeof o);
		o.layout = RK_RESIZE_LAYOUT_KEEP;
		struct rk_resize_result res;
		e = rk_resize_continue(devs, k, &o, &res);
		for (uint32_t r = 0; r < k; r++)
			rk_dev_close(devs[r]);
		if (!e)
			break;
	}
	if (e) {
		violation(R, spec, "raid-resize --continue fails: %s (the reshape returned %s)", rk_errmsg(), rk_strerror(last));
		return;
	}
	struct rk_discovery *d = discover_skip(n + 1, 0);
	uint64_t vs = d->narrays ? d->arrays[0].sb->volume_size : 0;
	uint32_t used = d->narrays ? d->arrays[0].nroles : 0;
	rk_discovery_free(d);
	if (vs < R->vsize) {
		violation(R, spec, "after --continue the volume is %llu bytes (was %llu)", (unsigned long long)vs,
		          (unsigned long long)R->vsize);
		return;
	}
	uint8_t *v = malloc(vs), *w = malloc(vs);
	if (read_volume(n + 1, 0, v, vs, &state, why, sizeof why)) {
		violation(R, spec, "after --continue: %s", why);
		goto out;
	}
	if (memcmp(v, R->oldv, R->vsize)) {
		violation(R, spec, "the reshape changed the data");
		goto out;
	}
	for (uint32_t x = 0; x < used; x++) {
		if (read_volume(n + 1, 1u << x, w, vs, &state, why, sizeof why))
			continue;
		if (memcmp(v, w, vs)) {
			violation(R, spec, "after the reshape, without role %u the volume differs", x);
			goto out;
		}
	}
out:
	free(v);
	free(w);
}

/* A sequence: the reshape cut short by a crash, then --continue cut
 * short by one to four more (a crash during the recovery of a crash),
 * then checked as a single point is (whose --continue finishes it). */
static void resize_sequence(struct run *R, uint64_t W, uint64_t seed)
{
	static uint8_t zero[MEMBER_BYTES];
	uint64_t x = seed * 0x9E3779B97F4A7C15ull + 11;
	uint32_t ncrash = 2 + (uint32_t)(rnd(&x) % 4);
	rk_err last = RK_OK;
	restore_base(R);
	put_file(paths[R->c->n], zero, MEMBER_BYTES);
	count_point(R, K_SEQ_CRASHES);
	struct rk_fault_spec sp = random_crash(&x, W + 1);
	run_resize(R, &sp, &last);
	for (uint32_t i = 1; i < ncrash; i++) {
		sp = random_crash(&x, W + 1);
		run_continue(R, &sp);
	}
	sp.seed = seed;
	verify_resize(R, &sp, last);
}

/* A revert sequence: the reshape cut short by a crash, then --revert cut
 * short by one to three more; then --revert without faults (or, when the
 * reshape had finished before the first crash, nothing to revert) leaves
 * every member in step, the old data, and a scrub clean. */
static void revert_sequence(struct run *R, uint64_t W, uint64_t seed)
{
	static uint8_t zero[MEMBER_BYTES];
	const struct cfg *c = R->c;
	uint64_t x = seed * 0x9E3779B97F4A7C15ull + 13;
	uint32_t ncrash = 1 + (uint32_t)(rnd(&x) % 3);
	const char *only = getenv("RK_FAULTS_SEED");   /* replay one sequence, traced */
	if (only && strtoull(only, NULL, 0) != seed)
		return;
	rk_err last = RK_OK;
	char why[600];
	int state;
	restore_base(R);
	put_file(paths[c->n], zero, MEMBER_BYTES);
	R->kind = K_SEQ_CRASHES;
	count_point(R, K_SEQ_CRASHES);
	struct rk_fault_spec sp = random_crash(&x, W);
	run_resize(R, &sp, &last);
	if (only)
		printf("seq %llu: reshape crash %s at %llu: %s\n", (unsigned long long)seed, model_names[sp.model],
		       (unsigned long long)sp.n, rk_strerror(last));
	for (uint32_t i = 0; i < ncrash; i++) {
		sp = random_crash(&x, W + 1);
		rk_err re = run_revert(R, &sp, c->n + 1);
		if (only)
			printf("  revert crash %s at %llu: %s\n", model_names[sp.model], (unsigned long long)sp.n,
			       rk_strerror(re));
	}
	sp.seed = seed;
	struct rk_fault_spec none = { .model = RK_FAULT_NONE };
	/* a finished revert wiped the added member (or the reshape never
	 * wrote it): then the old members are the array */
	rk_err e = run_revert(R, &none, c->n + 1);
	if (e == RK_E_NOSB)
		e = run_revert(R, &none, c->n);
	if (e && e != RK_E_INVAL) {
		violation(R, &sp, "--revert after the crashes fails: %s", rk_strerror(e));
		return;
	}
	check_in_step(R, &sp, c->n + 1, 0);
	struct rk_discovery *d = discover_skip(c->n + 1, 0);
	uint64_t vs = d->narrays ? d->arrays[0].sb->volume_size : 0;
	rk_discovery_free(d);
	uint8_t *v = malloc(vs ? vs : 1);
	if (vs < R->vsize || read_volume(c->n + 1, 0, v, vs, &state, why, sizeof why) ||
	    memcmp(v, R->oldv, R->vsize))
		violation(R, &sp, "after the revert the array does not read the old data (%s)", why);
	else
		check_scrub_clean_n(R, &sp, c->n + 1);
	free(v);
}

static void enumerate_resize(struct run *R)
{
	const struct cfg *c = R->c;
	static uint8_t zero[MEMBER_BYTES];
	struct rk_fault_spec none = { .model = RK_FAULT_NONE };
	rk_err last;
	restore_base(R);
	put_file(paths[c->n], zero, MEMBER_BYTES);
	uint64_t W = run_resize(R, &none, &last);
	ck_assert_msg(last == RK_OK, "fault-free reshape: %s", rk_errmsg());
	verify_resize(R, &none, last);
	uint64_t step = full_mode ? 1 : THIN(16);
	int seeds = full_mode ? 2 : 1;
	for (uint64_t n = 0; n <= W; n += step)
		for (int sd = 0; sd < seeds; sd++) {
			struct rk_fault_spec sp = { .model = RK_FAULT_POWER_CUT, .n = n, .seed = n * 17 + (uint64_t)sd * 313 + 3 };
			restore_base(R);
			put_file(paths[c->n], zero, MEMBER_BYTES);
			run_resize(R, &sp, &last);
			count_point(R, model_kind(sp.model));
			verify_resize(R, &sp, last);
		}
	for (uint64_t n = 1; n < W; n += step) {
		struct rk_fault_spec sp = { .model = RK_FAULT_KILL, .n = n };
		restore_base(R);
		put_file(paths[c->n], zero, MEMBER_BYTES);
		run_resize(R, &sp, &last);
		count_point(R, model_kind(sp.model));
		verify_resize(R, &sp, last);
	}
	uint64_t per = W / (c->n + 1) + 8;
	for (uint32_t m = 0; m <= c->n; m++)
		for (uint64_t n = m % step; n < per; n += step) {
			struct rk_fault_spec sp = { .model = RK_FAULT_PULL, .member = (int)m, .n = n };
			restore_base(R);
			put_file(paths[c->n], zero, MEMBER_BYTES);
			run_resize(R, &sp, &last);
			count_point(R, model_kind(sp.model));
			verify_resize(R, &sp, last);
		}
	uint64_t nseq = full_mode ? 400 : FEW(30);
	for (uint64_t i = 0; i < nseq; i++) {
		resize_sequence(R, W, ((uint64_t)c->level << 40) ^ ((uint64_t)c->n << 32) ^ i);
		revert_sequence(R, W, ((uint64_t)c->level << 40) ^ ((uint64_t)c->n << 32) ^ (1u << 20) ^ i);
	}
}

START_TEST(t_resize)
{
	const struct cfg *c = &cfgs[_i];
	if ((c->level != 4 && c->level != 5 && c->level != 6) || c->n + 1 > MAXM)
		return;
	struct run R;
	setup_run(&R, c, P_FULL);
	R.p = P_RESIZE;
	enumerate_resize(&R);
	finish_run(&R, path_names[P_RESIZE]);
}
END_TEST

RK_TEST_SUITE("faults_resize", { "enumeration", 36000, setup, teardown, 0,
	  RK_TESTS(RK_TEST_LOOP(t_resize, 0, (int)NCFG)) })
