/* test_faults_restore.c: crash safety of raid-recover --restore-superblock
 * (rk_recover_restore's wrap_dev hook), proven by enumeration (the method:
 * test_faults.c).  Two damages per configuration: the primary copy of one
 * member zeroed (a copy rewritten from the other), and both copies of one
 * member zeroed (the superblock rebuilt from the other members' role
 * table).  Every write of the restore is a fault point (power cut, kill),
 * and seeded sequences cut two to five restores short in a row.  After
 * each: the array assembles with the data it had and no member worse off
 * than the damage left it ((a): every member whose superblock was whole is
 * active); a restore run again without faults then leaves every member
 * active with both copies valid and equal, the data unchanged, and a
 * scrub clean. */
#include "faults_fixture.h"

enum damage { D_PRIMARY, D_BOTH };
static const char *const damage_names[] = { "restore-copy", "restore-role" };

static rk_err wrap_restore(void *ctx, uint32_t idx, rk_dev **dev)
{
	struct wrap_ctx *w = ctx;
	return rk_dev_fault(dev, *dev, w->plan, (int)idx);
}

/* The member images with role X's superblock damaged as DMG. */
static void put_damaged(const struct run *R, uint32_t x, enum damage dmg)
{
	restore_base(R);
	uint8_t *m = malloc(MEMBER_BYTES);
	memcpy(m, R->base[x], MEMBER_BYTES);
	memset(m + RK_SB_PRIMARY_OFF, 0, RK_SB_AREA);
	if (dmg == D_BOTH)
		memset(m + rk_sb_backup_offset(MEMBER_BYTES), 0, RK_SB_AREA);
	put_file(paths[x], m, MEMBER_BYTES);
	free(m);
}

/* One restore over every member under SPEC; returns the writes issued. */
static uint64_t run_restore(struct run *R, const struct rk_fault_spec *spec)
{
	struct wrap_ctx w = { NULL };
	ck_assert_int_eq(rk_fault_plan_create(&w.plan, spec), RK_OK);
	struct rk_restore_opts o = { .wrap_dev = wrap_restore, .wrap_ctx = &w };
	struct rk_restore_result *res = NULL;
	ck_assert_int_eq(rk_recover_restore(paths, R->c->n, &o, &res), RK_OK);
	rk_restore_result_free(res);
	uint64_t n = rk_fault_writes(w.plan);
	if (spec->model == RK_FAULT_POWER_CUT)
		ck_assert_int_eq(rk_fault_crash(w.plan), RK_OK);
	rk_fault_plan_free(w.plan);
	return n;
}

/* After the fault(s): as the header says. */
static void verify_restore(struct run *R, const struct rk_fault_spec *spec, uint32_t x)
{
	const struct cfg *c = R->c;
	char why[600];
	int state;
	uint8_t *v = malloc(R->vsize);
	check_in_step(R, spec, c->n, 1u << x);
	if (read_volume(c->n, 0, v, R->vsize, &state, why, sizeof why) || memcmp(v, R->oldv, R->vsize)) {
		violation(R, spec, "after the fault the array does not read its data (%s)", why);
		goto out;
	}
	struct rk_fault_spec none = { .model = RK_FAULT_NONE };
	run_restore(R, &none);
	check_in_step(R, spec, c->n, 0);
	if (check_copies(c->n, why, sizeof why))
		violation(R, spec, "after the restore run again: %s", why);
	if (read_volume(c->n, 0, v, R->vsize, &state, why, sizeof why) || memcmp(v, R->oldv, R->vsize) ||
	    state != RK_ASTATE_CLEAN)
		violation(R, spec, "after the restore run again the array is %s or its data differs (%s)",
		          rk_astate_name(state), why);
	check_scrub_clean(R, spec);
out:
	free(v);
}

static void enumerate_restore(struct run *R, enum damage dmg)
{
	const struct cfg *c = R->c;
	uint32_t x = (uint32_t)(dmg * 7 + c->n) % c->n;
	struct rk_fault_spec none = { .model = RK_FAULT_NONE };
	put_damaged(R, x, dmg);
	uint64_t W = run_restore(R, &none);
	ck_assert_uint_gt(W, 0);
	put_damaged(R, x, dmg);
	verify_restore(R, &none, x);
	int seeds = full_mode ? 32 : 2;
	for (uint64_t n = 0; n <= W; n++)
		for (int s = 0; s < seeds; s++) {
			struct rk_fault_spec sp = { .model = s & 1 ? RK_FAULT_KILL : RK_FAULT_POWER_CUT, .n = n,
			                            .seed = n * 29 + (uint64_t)s * 331 + 9 };
			put_damaged(R, x, dmg);
			run_restore(R, &sp);
			count_point(R, model_kind(sp.model));
			verify_restore(R, &sp, x);
		}
	uint64_t nseq = full_mode ? 500 : FEW(20);
	for (uint64_t i = 0; i < nseq; i++) {
		uint64_t seed = ((uint64_t)c->level << 40) ^ ((uint64_t)c->n << 32) ^ ((uint64_t)dmg << 24) ^ i;
		uint64_t r = seed * 0x9E3779B97F4A7C15ull + 5;
		uint32_t ncrash = 2 + (uint32_t)(rnd(&r) % 4);
		struct rk_fault_spec sp = none;
		put_damaged(R, x, dmg);
		count_point(R, K_SEQ_CRASHES);
		for (uint32_t k = 0; k < ncrash; k++) {
			sp = random_crash(&r, W + 1);
			run_restore(R, &sp);
		}
		sp.seed = seed;
		verify_restore(R, &sp, x);
	}
}

START_TEST(t_restore)
{
	const struct cfg *c = CFG(_i / 2);
	enum damage dmg = (enum damage)(_i % 2);
	struct run R;
	setup_run(&R, c, P_FULL);
	enumerate_restore(&R, dmg);
	finish_run(&R, damage_names[dmg]);
}
END_TEST

RK_TEST_SUITE("faults_restore", { "enumeration", 36000, setup, teardown, 0,
	  RK_TESTS(RK_TEST_LOOP(t_restore, 0, (int)NCFG_RUN * 2)) })
