/* test_resize_interrupt.c: reshapes interrupted at every write (kill)
 * and at sampled power cuts, read mid-reshape through rk_array and resumed
 * with rk_resize_continue. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rk_array.h"
#include "rk_dev.h"
#include "rk_geom.h"
#include "rk_resize.h"
#include "rk_sb.h"
#include "rk_vol.h"
#include "helpers/resize_cases.h"
#include "helpers/rk_test.h"

static int g_journal;   /* resize_make_array adds a journal area */

/* ---- interruptions ---- */

static uint64_t g_points;   /* interruption points tested, for the report */
static uint64_t g_devsz = 3u << 20;   /* member size in interrupted() */
static uint64_t g_midread;  /* of them, opened mid-reshape through rk_array_open_devs */

/* One run of case C with fault SPEC (model, n, seed) over every member;
 * then continue on what the members hold and check everything. */
static void interrupted(const struct rs_case *c, const struct rk_fault_spec *spec, uint64_t batch, uint64_t *writes)
{
	rk_dev *d[RESIZE_MAX_MEMBERS], *w[RESIZE_MAX_MEMBERS];
	uint64_t vol;
	rk_test_rnd_seed(12345);   /* same data each run */
	uint8_t *data = resize_make_array(d, c->level, c->layout, c->chunk, c->nr, g_devsz, g_journal, &vol);
	uint32_t n = c->nr + c->nadd;
	for (uint32_t a = 0; a < c->nadd; a++)
		ck_assert_int_eq(rk_dev_mem(&d[c->nr + a], "new", g_devsz), RK_OK);
	rk_fault_plan *plan;
	ck_assert_int_eq(rk_fault_plan_create(&plan, spec), RK_OK);
	for (uint32_t r = 0; r < n; r++)
		ck_assert_int_eq(rk_dev_fault(&w[r], d[r], plan, (int)r), RK_OK);
	if (spec->model == RK_FAULT_NONE) {
		resize_verify(d, c->nr, data, vol);
		resize_verify(w, c->nr, data, vol);
	}
	struct rk_resize_opts o = { .layout = RK_RESIZE_LAYOUT_KEEP, .batch_max = batch };
	if (c->new_level != RS_KEEP_LEVEL) {
		o.set_level = 1;
		o.level = c->new_level;
	}
	struct rk_resize_result res;
	rk_err e = rk_resize_reshape(w, c->nr, w + c->nr, c->nadd, &o, &res);
	if (writes)
		*writes = rk_fault_writes(plan);
	if (spec->model == RK_FAULT_NONE)
		resize_verify(w, n, data, vol);
	ck_assert_int_eq(rk_fault_crash(plan), RK_OK);
	/* What survived, on fresh devices. */
	rk_dev *after[RESIZE_MAX_MEMBERS];
	for (uint32_t r = 0; r < n; r++) {
		rk_dev *lo = rk_fault_lower(plan, (int)r);
		ck_assert_ptr_nonnull(lo);
		ck_assert_int_eq(rk_dev_mem(&after[r], rk_dev_path(lo), rk_dev_size(lo)), RK_OK);
		memcpy(rk_dev_mem_data(after[r]), rk_dev_mem_data(lo), rk_dev_size(lo));
	}
	rk_test_close_devs(w, n);
	rk_fault_plan_free(plan);
	if (spec->model != RK_FAULT_NONE) {
		/* Mid-reshape the volume reads as before (old members suffice
		 * when the reshape never got recorded). */
		uint8_t *b = malloc(vol);
		ck_assert_ptr_nonnull(b);
		uint64_t vsz;
		rk_err re = rk_resize_read(after, n, b, vol, 0, &vsz);
		if (re == RK_E_STALE || re == RK_E_NOSB)   /* new members never got a superblock */
			re = rk_resize_read(after, c->nr, b, vol, 0, &vsz);
		ck_assert_msg(re == RK_OK, "read after kill: %s", rk_errmsg());
		ck_assert_msg(!memcmp(b, data, vol), "volume changed by an interrupted reshape (%s)", rk_errmsg());
		free(b);
		/* and as an assembled array (read-only mid-reshape) */
		if (resize_array_read_check(after, n, data, vol))
			g_midread++;
		e = rk_resize_continue(after, n, NULL, &res);
		if (e == RK_E_NOSB || e == RK_E_STALE) {
			/* The added members were never written (or listed): the old
			 * array is intact; start again. */
			e = rk_resize_continue(after, c->nr, NULL, &res);
			ck_assert_msg(e == RK_OK, "continue (old members): %s", rk_errmsg());
			struct rk_sb *s = rk_test_read_sb(after[0]);
			int started = !!(s->feat_incompat & RK_FEAT_INCOMPAT_RESHAPE) || s->nroles != c->nr;
			free(s);
			if (!started)
				e = rk_resize_reshape(after, c->nr, after + c->nr, c->nadd, &o, &res);
		}
		ck_assert_msg(e == RK_OK, "continue: %s", rk_errmsg());
		g_points++;
	} else {
		ck_assert_int_eq(e, RK_OK);
	}
	resize_verify(after, n, data, vol);
	rk_test_close_devs(after, n);
	free(data);
}

START_TEST(t_kill_every_write)
{
	static const int cases[] = { 0, 4, 5, RS_R10 };   /* RAID-5 +1, 5 -> 6, 0 -> 5, RAID-10 n2 4 -> 5 */
	const struct rs_case *c = &rs_cases[cases[_i]];
	uint64_t total = 0;
	struct rk_fault_spec sp = { .model = RK_FAULT_NONE };
	g_journal = _i == 1;
	g_devsz = c->level == 10 ? 2u << 20 : 3u << 20;   /* RAID-10: a smaller volume, as many batches */
	interrupted(c, &sp, 256 * 1024, &total);
	ck_assert_uint_gt(total, 20);
	uint64_t before = g_points;
	for (uint64_t n = 0; n < total; n += RESIZE_KILL_STRIDE) {
		sp.model = RK_FAULT_KILL;
		sp.n = n;
		sp.seed = n;
		interrupted(c, &sp, 256 * 1024, NULL);
	}
	fprintf(stderr, "resize: case %d: kill at each of %llu writes (%llu opened mid-reshape by rk_array_open)\n",
	        cases[_i], (unsigned long long)(g_points - before), (unsigned long long)g_midread);
	ck_assert_uint_gt(g_midread, 10);
}
END_TEST

START_TEST(t_power_cut)
{
	const struct rs_case *c = &rs_cases[_i == 0 ? 2 : 1];   /* RAID-6 +1, RAID-5 +2 */
	uint64_t total = 0;
	g_devsz = 3u << 20;
	struct rk_fault_spec sp = { .model = RK_FAULT_NONE };
	interrupted(c, &sp, 256 * 1024, &total);
	uint64_t step = total / 60 + 1, before = g_points;
	for (uint64_t n = 0; n < total; n += step) {
		sp.model = RK_FAULT_POWER_CUT;
		sp.n = n;
		sp.seed = n * 7 + 1;
		interrupted(c, &sp, 256 * 1024, NULL);
	}
	fprintf(stderr, "resize: power cuts at %llu points\n", (unsigned long long)(g_points - before));
}
END_TEST

int main(void)
{
	const struct rk_test_case cases[] = {
		{ "interrupt", 600, NULL, NULL, 0,
		  RK_TESTS(RK_TEST_LOOP(t_kill_every_write, 0, 4), RK_TEST_LOOP(t_power_cut, 0, 2)) },
		RK_TEST_CASES_END,
	};
	return rk_test_main("resize_interrupt", cases);
}
