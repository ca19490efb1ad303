/* test_resize_reshape.c: reshapes on memory members (add members to
 * RAID-0/4/5/6/10, 5 -> 6, 0 -> 5, 1 -> 5, RAID-1 mirrors, chunk change),
 * each checked against the original bytes and by a scrub of the new
 * geometry, and the reshapes refused. */
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

/* ---- reshapes ---- */

static void run_case(const struct rs_case *c, uint64_t batch)
{
	rk_dev *d[RESIZE_MAX_MEMBERS];
	uint64_t vol;
	uint8_t *data = resize_make_array(d, c->level, c->layout, c->chunk, c->nr, 3u << 20, g_journal, &vol);
	resize_add_members(d, c->nr, c->nadd, 3u << 20);
	struct rk_resize_opts o = { .layout = RK_RESIZE_LAYOUT_KEEP, .batch_max = batch, .chunk = c->new_chunk };
	if (c->new_level != RS_KEEP_LEVEL) {
		o.set_level = 1;
		o.level = c->new_level;
	}
	struct rk_resize_result res;
	/* Members in a shuffled order: matched by UUID. */
	rk_dev *given[RESIZE_MAX_MEMBERS];
	for (uint32_t r = 0; r < c->nr; r++)
		given[r] = d[c->nr - 1 - r];
	rk_err e = rk_resize_reshape(given, c->nr, d + c->nr, c->nadd, &o, &res);
	ck_assert_msg(e == RK_OK, "reshape: %s", rk_errmsg());
	ck_assert_uint_eq(res.old_volume, vol);
	ck_assert_uint_ge(res.new_volume, vol);
	resize_verify(d, c->nr + c->nadd, data, vol);
	rk_test_close_devs(d, c->nr + c->nadd);
	free(data);
}

START_TEST(t_reshape)
{
	g_journal = 1;   /* the journal gives up part of its area to the shift */
	run_case(&rs_cases[_i], 0);
	g_journal = 0;
	run_case(&rs_cases[_i], 0);
	run_case(&rs_cases[_i], 64 * 1024);   /* many small checkpoints */
	run_case(&rs_cases[_i], 256 * 1024);
}
END_TEST

START_TEST(t_refusals)
{
	rk_dev *d[RESIZE_MAX_MEMBERS];
	uint64_t vol;
	uint8_t *data = resize_make_array(d, 5, 2, 65536, 3, 3u << 20, g_journal, &vol);
	ck_assert_int_eq(rk_dev_mem(&d[3], "small", 1u << 20), RK_OK);
	struct rk_resize_opts o = { .layout = RK_RESIZE_LAYOUT_KEEP };
	struct rk_resize_result res;
	struct rk_sb *s0 = rk_test_read_sb(d[0]);
	/* Too small a new member, a member missing, level not supported. */
	ck_assert_int_eq(rk_resize_reshape(d, 3, d + 3, 1, &o, &res), RK_E_RANGE);
	ck_assert_int_eq(rk_resize_reshape(d, 2, d + 3, 1, &o, &res), RK_E_TOOFEW);
	o.set_level = 1;
	o.level = 10;
	ck_assert_int_eq(rk_resize_reshape(d, 3, NULL, 0, &o, &res), RK_E_NOTSUP);
	/* 5 -> 6 without a new member would shrink the volume. */
	o.level = 6;
	ck_assert_int_eq(rk_resize_reshape(d, 3, NULL, 0, &o, &res), RK_E_NOTSUP);
	/* Nothing was written. */
	for (uint32_t r = 0; r < 3; r++) {
		struct rk_sb *s = rk_test_read_sb(d[r]);
		ck_assert_uint_eq(s->events, s0->events);
		free(s);
	}
	ck_assert_int_eq(rk_resize_continue(d, 3, NULL, &res), RK_OK);
	ck_assert(strstr(res.did, "nothing"));
	ck_assert_int_eq(rk_resize_revert(d, 3, NULL, &res), RK_E_INVAL);
	resize_verify(d, 3, data, vol);
	free(s0);
	rk_test_close_devs(d, 4);
	free(data);
}
END_TEST

/* ---- RAID-10 refusals ---- */

START_TEST(t_r10_refusals)
{
	/* far and offset copies sit where the member size puts them: refused,
	 * naming the layout; a RAID-10 reshape keeps level 10 */
	static const uint32_t lays[] = { RK_R10_LAYOUT(1, 2, 0), RK_R10_LAYOUT(1, 2, 1), RK_R10_LAYOUT(2, 2, 0) };
	for (unsigned i = 0; i <= 3; i++) {
		rk_dev *d[RESIZE_MAX_MEMBERS];
		uint64_t vol;
		uint32_t lay = i < 3 ? lays[i] : RK_R10_LAYOUT(2, 1, 0);
		uint8_t *data = resize_make_array(d, 10, lay, 65536, 4, 3u << 20, g_journal, &vol);
		ck_assert_int_eq(rk_dev_mem(&d[4], "new", 3u << 20), RK_OK);
		struct rk_sb *s0 = rk_test_read_sb(d[0]);
		struct rk_resize_opts o = { .layout = RK_RESIZE_LAYOUT_KEEP };
		if (i == 3) {
			o.set_level = 1;
			o.level = 5;
		}
		struct rk_resize_result res;
		ck_assert_int_eq(rk_resize_reshape(d, 4, d + 4, 1, &o, &res), RK_E_NOTSUP);
		ck_assert_msg(strstr(rk_errmsg(), i < 3 ? "only near layouts" : "keeps level 10"), "message: %s",
		              rk_errmsg());
		for (uint32_t r = 0; r < 4; r++) {
			struct rk_sb *sb = rk_test_read_sb(d[r]);
			ck_assert_uint_eq(sb->events, s0->events);
			free(sb);
		}
		struct rk_sb_read rd;
		ck_assert(rk_sb_read(d[4], &rd) != RK_OK || rd.chosen < 0);
		rk_sb_read_free(&rd);
		resize_verify(d, 4, data, vol);
		free(s0);
		rk_test_close_devs(d, 5);
		free(data);
	}
	/* near into a near layout of more copies (n2 -> n3 on 4 -> 6): allowed */
	rk_dev *d[RESIZE_MAX_MEMBERS];
	uint64_t vol;
	uint8_t *data = resize_make_array(d, 10, RK_R10_LAYOUT(2, 1, 0), 65536, 4, 3u << 20, g_journal, &vol);
	for (uint32_t a = 0; a < 2; a++)
		ck_assert_int_eq(rk_dev_mem(&d[4 + a], "new", 3u << 20), RK_OK);
	struct rk_resize_opts o = { .layout = RK_R10_LAYOUT(3, 1, 0), .set_level = 1, .level = 10 };
	struct rk_resize_result res;
	ck_assert_msg(rk_resize_reshape(d, 4, d + 4, 2, &o, &res) == RK_OK, "n2 -> n3: %s", rk_errmsg());
	resize_verify(d, 6, data, vol);
	rk_test_close_devs(d, 6);
	free(data);
}
END_TEST

RK_TEST_SUITE("resize_reshape", { "reshape", 600, NULL, NULL, 0,
	  RK_TESTS(RK_TEST_LOOP(t_reshape, 0, (int)rs_ncases), RK_TEST(t_refusals),
	           RK_TEST(t_r10_refusals)) })
