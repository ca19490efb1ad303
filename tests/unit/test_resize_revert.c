/* test_resize_revert.c: reverting a reshape after data moved: in one go,
 * stopped half-way and continued, written mid-revert, at position 0, and
 * killed at every write of the revert. */
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

/* ---- revert after data moved ---- */

/* Case C on fresh members of DEVSZ, its reshape stopped at the first
 * checkpoint at or past PERMILLE thousandths of the volume (0: before any
 * data moved).  D gets every member (old ones by role, then the added);
 * returns the volume's bytes; *POS gets the checkpoint. */
static uint8_t *start_partial(const struct rs_case *c, rk_dev **d, uint64_t devsz, uint64_t batch,
                              uint64_t permille, uint64_t *vol, uint64_t *pos)
{
	uint8_t *data = resize_make_array(d, c->level, c->layout, c->chunk, c->nr, devsz, g_journal, vol);
	uint64_t at = permille ? *vol / 1000 * permille + 1 : 0;
	resize_add_members(d, c->nr, c->nadd, devsz);
	struct resize_stop st = { .flag = at == 0, .at = at };
	struct rk_resize_opts o = { .layout = RK_RESIZE_LAYOUT_KEEP, .batch_max = batch, .chunk = c->new_chunk,
	                            .progress = resize_stop_progress, .progress_ctx = &st, .stop = &st.flag };
	if (c->new_level != RS_KEEP_LEVEL) {
		o.set_level = 1;
		o.level = c->new_level;
	}
	struct rk_resize_result res;
	ck_assert_int_eq(rk_resize_reshape(d, c->nr, d + c->nr, c->nadd, &o, &res), RK_E_FAULT);
	ck_assert(strstr(rk_errmsg(), "interrupted"));
	struct rk_sb *s = rk_test_read_sb(d[0]);
	ck_assert(s->feat_incompat & RK_FEAT_INCOMPAT_RESHAPE);
	*pos = s->reshape_pos;
	ck_assert_uint_ge(*pos, at);
	ck_assert_uint_lt(*pos, *vol);
	free(s);
	return data;
}

/* After a revert: the old members (C->nr) hold the old geometry with DATA
 * (the volume exactly as before) and scrub clean (verify), the journal has
 * its size of before (JSIZE, 0 = none), and the added members carry no
 * superblock. */
static void verify_reverted(rk_dev **d, const struct rs_case *c, const uint8_t *data, uint64_t vol, uint64_t jsize)
{
	resize_verify(d, c->nr, data, vol);
	struct rk_sb *s = rk_test_read_sb(d[0]);
	ck_assert_int_eq(s->level, c->level);
	ck_assert_uint_eq(s->layout, c->layout);
	ck_assert_uint_eq(s->volume_size, vol);
	ck_assert_uint_eq(s->nentries, c->nr);
	ck_assert_uint_eq(s->data_offset, RK_DATA_OFFSET_DEFAULT);
	if (jsize)
		ck_assert_uint_eq(s->journal_size, jsize);
	free(s);
	for (uint32_t a = 0; a < c->nadd; a++) {
		struct rk_sb_read rd;
		rk_err e = rk_sb_read(d[c->nr + a], &rd);
		ck_assert_msg(e != RK_OK || rd.chosen < 0, "added member %u still has a superblock", a);
		rk_sb_read_free(&rd);
	}
}

/* Writes LEN random bytes at OFF through rk_array opened read-write on the
 * members D (N, mid-reshape or mid-revert: the write splits at the
 * checkpoint), and into DATA alike. */
static void array_write_mid(rk_dev **d, uint32_t n, uint8_t *data, uint64_t off, uint64_t len)
{
	rk_array *a;
	ck_assert_msg(resize_open_mid(&a, d, n, -1, -1, RK_ARRAY_RDWR) == RK_OK, "open mid-reshape: %s", rk_errmsg());
	ck_assert_int_eq(rk_array_reshaping(a, NULL), 1);
	uint8_t *b = malloc(len);
	ck_assert_ptr_nonnull(b);
	rk_test_fill(b, len);
	ck_assert_msg(rk_array_write(a, b, (size_t)len, off) == RK_OK, "write mid-reshape: %s", rk_errmsg());
	ck_assert_int_eq(rk_array_close(a), RK_OK);
	memcpy(data + off, b, (size_t)len);
	free(b);
}

/* RAID-5 +1, 5 -> 6, 0 -> 5, RAID-10 n2 4 -> 5, 3 -> 4, 1 -> 5, RAID-5 +1
 * with a chunk change, RAID-10 +1 with a chunk change */
static const int rv_cases[] = { 0, 4, 5, RS_R10, 13, 7, 8, 15 };

START_TEST(t_revert)
{
	const struct rs_case *c = &rs_cases[rv_cases[_i]];
	uint32_t n = c->nr + c->nadd;
	g_journal = _i % 2 == 0;
	uint64_t jsize = g_journal && c->level != 0 ? RK_DATA_OFFSET_DEFAULT - RK_SB_PRIMARY_END : 0;
	/* Stopped a third of the way, then reverted in one go. */
	rk_dev *d[RESIZE_MAX_MEMBERS];
	uint64_t vol, pos;
	uint8_t *data = start_partial(c, d, 3u << 20, 64 * 1024, 333, &vol, &pos);
	ck_assert_uint_gt(pos, 0);
	struct rk_resize_result res;
	struct rk_resize_opts o = { .layout = RK_RESIZE_LAYOUT_KEEP, .batch_max = 128 * 1024 };
	rk_dev *given[RESIZE_MAX_MEMBERS];
	for (uint32_t i = 0; i < n; i++)
		given[i] = d[n - 1 - i];   /* any order */
	ck_assert_msg(rk_resize_revert(given, n, &o, &res) == RK_OK, "revert: %s", rk_errmsg());
	ck_assert_uint_eq(res.moved, pos);
	ck_assert_uint_gt(res.checkpoints, 0);
	ck_assert(strstr(res.did, "reverted from volume byte"));
	verify_reverted(d, c, data, vol, jsize);
	/* The array reshapes again from there, to the end. */
	struct rk_resize_opts fo = { .layout = RK_RESIZE_LAYOUT_KEEP, .chunk = c->new_chunk };
	if (c->new_level != RS_KEEP_LEVEL) {
		fo.set_level = 1;
		fo.level = c->new_level;
	}
	ck_assert_msg(rk_resize_reshape(d, c->nr, d + c->nr, c->nadd, &fo, &res) == RK_OK, "reshape after revert: %s",
	              rk_errmsg());
	resize_verify(d, n, data, vol);
	rk_test_close_devs(d, n);
	free(data);

	/* Stopped two thirds of the way; the revert itself stopped half-way:
	 * the array reads as before, a forward reshape is refused, and
	 * continue finishes the revert, saying so. */
	data = start_partial(c, d, 3u << 20, 64 * 1024, 667, &vol, &pos);
	struct resize_stop st = { .at = pos / 2 };
	o.progress = resize_stop_progress;
	o.progress_ctx = &st;
	o.stop = &st.flag;
	ck_assert_int_eq(rk_resize_revert(d, n, &o, &res), RK_E_FAULT);
	struct rk_sb *s = rk_test_read_sb(d[0]);
	ck_assert(s->feat_incompat & RK_FEAT_INCOMPAT_RESHAPE);
	ck_assert(s->reshape_flags & RK_RESHAPE_REVERTING);
	ck_assert_uint_lt(s->reshape_pos, pos);
	ck_assert_uint_gt(s->reshape_pos, 0);
	free(s);
	uint8_t *b = malloc(vol);
	ck_assert_ptr_nonnull(b);
	ck_assert_int_eq(rk_resize_read(d, n, b, vol, 0, NULL), RK_OK);
	ck_assert(!memcmp(b, data, vol));
	free(b);
	resize_array_read_check(d, n, data, vol);
	ck_assert_int_eq(rk_resize_reshape(d, n, NULL, 0, &fo, &res), RK_E_CONFLICT);
	ck_assert_msg(strstr(rk_errmsg(), "being reverted"), "message: %s", rk_errmsg());
	ck_assert_int_eq(rk_resize_reshape(d, c->nr, NULL, 0, &fo, &res), RK_E_CONFLICT);
	/* Written mid-revert across the checkpoint (and inside the old row
	 * holding it): the revert carries the new bytes back. */
	s = rk_test_read_sb(d[0]);
	uint64_t cp = s->reshape_pos;
	free(s);
	array_write_mid(d, n, data, cp - cp / 4, cp / 2);
	array_write_mid(d, n, data, cp + 512, 4096);
	ck_assert_msg(rk_resize_continue(d, n, NULL, &res) == RK_OK, "continue: %s", rk_errmsg());
	ck_assert_msg(strstr(res.did, "revert"), "did: %s", res.did);
	verify_reverted(d, c, data, vol, jsize);
	ck_assert_int_eq(rk_resize_revert(d, c->nr, NULL, &res), RK_E_INVAL);
	rk_test_close_devs(d, n);
	free(data);

	/* Nothing moved yet (reshape_pos 0): superblocks only. */
	data = start_partial(c, d, 3u << 20, 64 * 1024, 0, &vol, &pos);
	ck_assert_uint_eq(pos, 0);
	ck_assert_msg(rk_resize_revert(d, n, NULL, &res) == RK_OK, "revert at 0: %s", rk_errmsg());
	ck_assert_uint_eq(res.moved, 0);
	verify_reverted(d, c, data, vol, jsize);
	rk_test_close_devs(d, n);
	free(data);
	g_journal = 0;
}
END_TEST

static void snap_restore(rk_dev **d, uint8_t *const *snap, uint32_t n, uint64_t devsz)
{
	for (uint32_t r = 0; r < n; r++) {
		char nm[16];
		snprintf(nm, sizeof nm, "m%u", r);
		ck_assert_int_eq(rk_dev_mem(&d[r], nm, devsz), RK_OK);
		memcpy(rk_dev_mem_data(d[r]), snap[r], devsz);
	}
}

/* A kill at every write of a revert (from a reshape stopped part-way),
 * each resumed with rk_resize_continue: a recorded revert resumes as one;
 * killed before the reverting flag was durable, continue finishes the
 * reshape forward instead (also fine: the user asked for nothing else yet). */
START_TEST(t_revert_kill_every_write)
{
	static const int cases[] = { 0, RS_R10 };   /* RAID-5 +1 with a journal, RAID-10 n2 4 -> 5 */
	const struct rs_case *c = &rs_cases[cases[_i]];
	uint32_t n = c->nr + c->nadd;
	uint64_t devsz = c->level == 10 ? 2u << 20 : 3u << 20, vol, pos;
	g_journal = _i == 0;
	uint64_t jsize = g_journal ? RK_DATA_OFFSET_DEFAULT - RK_SB_PRIMARY_END : 0;
	rk_dev *d[RESIZE_MAX_MEMBERS];
	uint8_t *data = start_partial(c, d, devsz, 256 * 1024, 750, &vol, &pos);
	uint8_t *snap[RESIZE_MAX_MEMBERS];
	for (uint32_t r = 0; r < n; r++) {
		snap[r] = malloc(devsz);
		ck_assert_ptr_nonnull(snap[r]);
		memcpy(snap[r], rk_dev_mem_data(d[r]), devsz);
	}
	rk_test_close_devs(d, n);
	struct rk_resize_opts o = { .layout = RK_RESIZE_LAYOUT_KEEP, .batch_max = 256 * 1024 };
	uint64_t total = 0, points = 0, as_revert = 0;
	for (uint64_t k = 0;; k += RESIZE_KILL_STRIDE) {
		rk_dev *w[RESIZE_MAX_MEMBERS], *after[RESIZE_MAX_MEMBERS];
		struct rk_fault_spec sp = { .model = k == 0 ? RK_FAULT_NONE : RK_FAULT_KILL, .n = k - 1, .seed = k };
		rk_fault_plan *plan;
		ck_assert_int_eq(rk_fault_plan_create(&plan, &sp), RK_OK);
		snap_restore(d, snap, n, devsz);
		for (uint32_t r = 0; r < n; r++)
			ck_assert_int_eq(rk_dev_fault(&w[r], d[r], plan, (int)r), RK_OK);
		struct rk_resize_result res;
		rk_err e = rk_resize_revert(w, n, &o, &res);
		if (k == 0) {
			ck_assert_msg(e == RK_OK, "revert: %s", rk_errmsg());
			total = rk_fault_writes(plan);
			ck_assert_uint_gt(total, 20);
		}
		ck_assert_int_eq(rk_fault_crash(plan), RK_OK);
		rk_test_crash_copies(plan, n, after);
		rk_test_close_devs(w, n);
		rk_fault_plan_free(plan);
		if (k) {
			/* The volume reads as before, through rk_resize_read and as an
			 * array (the added members may be wiped already). */
			uint8_t *b = malloc(vol);
			ck_assert_ptr_nonnull(b);
			rk_err re = rk_resize_read(after, n, b, vol, 0, NULL);
			if (re == RK_E_NOSB || re == RK_E_STALE)
				re = rk_resize_read(after, c->nr, b, vol, 0, NULL);
			ck_assert_msg(re == RK_OK, "read after kill at write %llu: %s", (unsigned long long)k - 1, rk_errmsg());
			ck_assert_msg(!memcmp(b, data, vol), "volume changed by a revert killed at write %llu",
			              (unsigned long long)k - 1);
			free(b);
			resize_array_read_check(after, n, data, vol);
			struct rk_sb *s = rk_test_read_sb(after[0]);
			int reverting = (s->feat_incompat & RK_FEAT_INCOMPAT_RESHAPE) && (s->reshape_flags & RK_RESHAPE_REVERTING);
			free(s);
			e = rk_resize_continue(after, n, NULL, &res);
			if (e == RK_E_NOSB)   /* the added members were wiped: the revert is done */
				e = rk_resize_continue(after, c->nr, NULL, &res);
			ck_assert_msg(e == RK_OK, "continue after kill at write %llu: %s", (unsigned long long)k - 1, rk_errmsg());
			if (reverting)
				ck_assert_msg(strstr(res.did, "revert"), "did: %s", res.did);
			s = rk_test_read_sb(after[0]);
			int forward = s->nroles == n;
			free(s);
			if (forward) {
				ck_assert(!reverting);
				resize_verify(after, n, data, vol);
			} else {
				verify_reverted(after, c, data, vol, jsize);
				as_revert++;
			}
			points++;
		} else {
			verify_reverted(after, c, data, vol, jsize);
		}
		rk_test_close_devs(after, n);
		if (k && k - 1 >= total)
			break;
	}
	fprintf(stderr, "resize: revert of case %d from %llu of %llu bytes: kill at each of %llu writes (%llu resumed "
	        "as a revert)\n", cases[_i], (unsigned long long)pos, (unsigned long long)vol, (unsigned long long)points,
	        (unsigned long long)as_revert);
	ck_assert_uint_gt(as_revert, points * 9 / 10);
	for (uint32_t r = 0; r < n; r++)
		free(snap[r]);
	free(data);
	g_journal = 0;
}
END_TEST

RK_TEST_SUITE("resize_revert", { "revert", 1200, NULL, NULL, 0,
	  RK_TESTS(RK_TEST_LOOP(t_revert, 0, (int)(sizeof rv_cases / sizeof rv_cases[0])),
	           RK_TEST_LOOP(t_revert_kill_every_write, 0, 2)) })
