/* test_reshape_write.c: writing to an array in the middle of a reshape
 * (rk_array opened read-write mid-reshape, spec/journal.md "Mid-reshape").
 *
 * Reshapes (RAID-5 +1, RAID-6 +1, 5 -> 6, 0 -> 5, RAID-5 +1 made without a
 * journal) are stopped after a few checkpoints; writes below, above and
 * across the checkpoint and inside the old row holding it go through
 * rk_array_write; both geometries must then scrub clean over the rows in
 * use, the volume must read as written, and rk_resize_continue must finish
 * with exactly those bytes and a clean scrub.  Degraded writes (a member
 * missing, or pulled during the session) on RAID-5/6 must read back with
 * any further member left out.
 * (The mid-reshape journal records are decoded in test_journal.c.)
 * Crash safety: a kill at every write and power cuts at sampled
 * writes of a write session, each followed by an open (replay) and
 * rk_resize_continue: completed writes intact, the write in flight old or
 * new per sector, the read-only replay equal to the read-write one. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rk_array.h"
#include "rk_dev.h"
#include "rk_geom.h"
#include "rk_journal.h"
#include "rk_resize.h"
#include "rk_sb.h"
#include "rk_scrub.h"
#include "rk_vol.h"
#include "helpers/resize_cases.h"
#include "helpers/rk_test.h"

#define DEVSZ (3u << 20)
#define BATCH (64u * 1024u)
/* Kill points: every 2nd write in make check (every 24th under the
 * sanitizers, several times slower); RK_FAULTS=full, every write.  Power
 * cuts: at 50 points spread over the session (10 under the sanitizers). */
#ifdef __SANITIZE_ADDRESS__
#define KILL_STRIDE_SAMPLE 24
#define CUT_POINTS 10
#else
#define KILL_STRIDE_SAMPLE 2
#define CUT_POINTS 50
#endif
#define KILL_STRIDE (getenv("RK_FAULTS") && !strcmp(getenv("RK_FAULTS"), "full") ? 1 : KILL_STRIDE_SAMPLE)

struct mcase {
	const char *name;
	int32_t level;
	uint32_t layout, nr, nadd;
	uint64_t chunk;
	int32_t new_level;   /* -99: keep */
	int journal;         /* made with a journal area */
};

static const struct mcase mcases[] = {
	{ "RAID-5 +1", 5, 2, 3, 1, 65536, -99, 1 },
	{ "RAID-6 +1", 6, 2, 4, 1, 65536, -99, 1 },
	{ "5 -> 6", 5, 2, 4, 1, 65536, 6, 1 },
	{ "0 -> 5", 0, 0, 3, 1, 65536, 5, 0 },
	{ "RAID-5 +1, no journal before", 5, 2, 3, 1, 65536, -99, 0 },
	{ "RAID-10 n2 4 +1", 10, RK_R10_LAYOUT(2, 1, 0), 4, 1, 65536, -99, 1 },
};

/* An array of case C on fresh memory members (role order), its volume
 * filled with random bytes, returned (*vol: its size). */
static uint8_t *make_array(rk_dev **d, const struct mcase *c, uint64_t *vol)
{
	struct rk_test_mem_array a = { .level = c->level, .layout = c->layout, .chunk = c->chunk, .nroles = c->nr,
	                               .member_size = DEVSZ, .journal = c->journal, .name = "mw" };
	return rk_test_mem_array_make(d, &a, vol);
}

/* Starts the reshape of case C on D (the added members are created at
 * D[nr...]) and stops it after NCK checkpoints (0: before the first
 * batch); returns the checkpoint. */
static uint64_t start_mid(rk_dev **d, const struct mcase *c, int nck)
{
	resize_add_members(d, c->nr, c->nadd, DEVSZ);   /* junk must never show */
	struct resize_stop st = { .flag = nck <= 0, .checkpoints = nck };
	struct rk_resize_opts o = { .layout = RK_RESIZE_LAYOUT_KEEP, .batch_max = BATCH, .progress = resize_stop_progress,
	                            .progress_ctx = &st, .stop = &st.flag };
	if (c->new_level != -99) {
		o.set_level = 1;
		o.level = c->new_level;
	}
	struct rk_resize_result res;
	rk_err e = rk_resize_reshape(d, c->nr, d + c->nr, c->nadd, &o, &res);
	ck_assert_msg(e == RK_E_FAULT, "%s: the reshape was not stopped: %d %s", c->name, e, rk_errmsg());
	struct rk_sb *s = rk_test_read_sb(d[0]);
	ck_assert(s->feat_incompat & RK_FEAT_INCOMPAT_RESHAPE);
	uint64_t pos = s->reshape_pos;
	ck_assert(nck <= 0 ? pos == 0 : pos > 0);
	ck_assert_uint_lt(pos, s->volume_size);
	free(s);
	return pos;
}

/* The whole volume of the array on D read through a read-only open. */
static uint8_t *read_vol(rk_dev **d, uint32_t n, int miss, int miss2, uint64_t vol, int *replayed)
{
	rk_array *a;
	rk_err e = resize_open_mid(&a, d, n, miss, miss2, RK_ARRAY_RDONLY);
	ck_assert_msg(e == RK_OK, "read-only open (missing %d, %d): %s", miss, miss2, rk_errmsg());
	ck_assert_uint_eq(rk_array_size(a), vol);
	if (replayed)
		*replayed = rk_array_replayed(a, NULL);
	uint8_t *b = malloc(vol);
	ck_assert_ptr_nonnull(b);
	ck_assert_int_eq(rk_array_read(a, b, vol, 0), RK_OK);
	ck_assert_int_eq(rk_array_close(a), RK_OK);
	return b;
}

static void same(const uint8_t *got, const uint8_t *want, uint64_t len, const char *what)
{
	for (uint64_t i = 0; i < len; i++)
		if (got[i] != want[i])
			ck_abort_msg("%s: volume byte %llu differs", what, (unsigned long long)i);
}

/* Scrubs what each geometry holds mid-reshape: the new one's rows below
 * the checkpoint, the old one's from the row holding it (its blocks below
 * the checkpoint are intact old copies, consistent with its parity). */
static void scrub_mid(rk_dev **d, uint32_t n)
{
	struct rk_sb *t = rk_test_read_sb(d[0]);
	ck_assert(t->feat_incompat & RK_FEAT_INCOMPAT_RESHAPE);
	rk_dev *byrole[RESIZE_MAX_MEMBERS] = { 0 };
	for (uint32_t i = 0; i < n; i++) {
		struct rk_sb *s = rk_test_read_sb(d[i]);
		byrole[s->this_role] = d[i];
		free(s);
	}
	const struct rk_geom_desc *nd = &t->reshape_new;
	struct rk_geom gn, go;
	ck_assert_int_eq(rk_geom_init(&gn, nd->level, nd->layout, nd->chunk, nd->nroles, nd->data_size), RK_OK);
	ck_assert_int_eq(rk_geom_init(&go, t->level, t->layout, t->chunk, t->nroles, t->data_size), RK_OK);
	uint64_t offs[RESIZE_MAX_MEMBERS];
	struct rk_scrub_opts so = { 0 };
	struct rk_scrub_stats st;
	for (uint32_t r = 0; r < RESIZE_MAX_MEMBERS; r++)
		offs[r] = nd->data_offset;
	uint64_t nrows = t->reshape_pos / gn.stripe_data;
	ck_assert_int_eq(rk_scrub_run(&gn, byrole, offs, 0, nrows, &so, &st), RK_OK);
	ck_assert_msg(st.mismatches == 0, "new geometry: %llu mismatches below the checkpoint",
	              (unsigned long long)st.mismatches);
	if (go.level != 0) {
		for (uint32_t r = 0; r < RESIZE_MAX_MEMBERS; r++)
			offs[r] = t->data_offset;
		uint64_t first = t->reshape_pos / go.stripe_data;
		ck_assert_int_eq(rk_scrub_run(&go, byrole, offs, first, go.nstripes, &so, &st), RK_OK);
		ck_assert_msg(st.mismatches == 0, "old geometry: %llu mismatches from the checkpoint's row",
		              (unsigned long long)st.mismatches);
	}
	free(t);
}

/* After the reshape: no reshape left, the volume is WANT (LEN bytes) then
 * zeros, and the new geometry scrubs clean. */
static void verify_final(rk_dev **d, uint32_t n, const uint8_t *want, uint64_t len)
{
	struct rk_sb *s = rk_test_read_sb(d[0]);
	ck_assert(!(s->feat_incompat & RK_FEAT_INCOMPAT_RESHAPE));
	ck_assert_uint_eq(s->nroles, n);
	uint64_t vsz = 0;
	uint8_t *b = malloc(s->volume_size);
	ck_assert_ptr_nonnull(b);
	ck_assert_int_eq(rk_resize_read(d, n, b, s->volume_size, 0, &vsz), RK_OK);
	ck_assert_uint_ge(vsz, len);
	same(b, want, len, "after rk_resize_continue");
	for (uint64_t i = len; i < vsz; i++)
		if (b[i])
			ck_abort_msg("volume byte %llu past the old volume is not zero", (unsigned long long)i);
	free(b);
	struct rk_geom g;
	ck_assert_int_eq(rk_geom_init(&g, s->level, s->layout, s->chunk, s->nroles, s->data_size), RK_OK);
	rk_dev *byrole[RESIZE_MAX_MEMBERS] = { 0 };
	uint64_t offs[RESIZE_MAX_MEMBERS];
	for (uint32_t i = 0; i < n; i++) {
		struct rk_sb *o = rk_test_read_sb(d[i]);
		byrole[o->this_role] = d[i];
		free(o);
		offs[i] = s->data_offset;
	}
	struct rk_scrub_opts so = { 0 };
	struct rk_scrub_stats st;
	ck_assert_int_eq(rk_scrub_run(&g, byrole, offs, 0, g.nstripes, &so, &st), RK_OK);
	ck_assert_msg(st.mismatches == 0, "%llu mismatches after the reshape", (unsigned long long)st.mismatches);
	free(s);
}

/* The writes of a session mid-reshape at POS: below it, above it, across
 * it, inside the old row holding it, whole stripes on both sides. */
#define NW 8
struct wr {
	uint64_t off, len;
};
static uint32_t plan_writes(struct wr *w, rk_dev **d, uint64_t vol)
{
	struct rk_sb *t = rk_test_read_sb(d[0]);
	const struct rk_geom_desc *nd = &t->reshape_new;
	struct rk_geom gn, go;
	ck_assert_int_eq(rk_geom_init(&gn, nd->level, nd->layout, nd->chunk, nd->nroles, nd->data_size), RK_OK);
	ck_assert_int_eq(rk_geom_init(&go, t->level, t->layout, t->chunk, t->nroles, t->data_size), RK_OK);
	uint64_t pos = t->reshape_pos, sdo = go.stripe_data, sdn = gn.stripe_data;
	uint64_t orow = pos / sdo * sdo;   /* the old row holding the checkpoint */
	free(t);
	ck_assert_uint_gt(pos, 2 * sdn);
	uint32_t n = 0;
	w[n++] = (struct wr){ pos / 2 + 1000, 5000 };                       /* below, partial */
	w[n++] = (struct wr){ pos + 3 * sdo + 777, 3000 };                  /* above, partial */
	w[n++] = (struct wr){ pos - 3000, 9000 };                           /* across */
	w[n++] = (struct wr){ pos + 512, 1024 };                            /* the old row holding pos */
	w[n++] = (struct wr){ orow + sdo - 700, 1400 };                     /* its end, into the next row */
	w[n++] = (struct wr){ 0, 2 * sdn };                                 /* whole new stripes */
	w[n++] = (struct wr){ (pos + sdo - 1) / sdo * sdo + sdo, 2 * sdo + 100 };   /* whole old stripes */
	w[n++] = (struct wr){ pos - sdn - 100, 2 * sdn + sdo + 300 };       /* across, whole stripes both sides */
	for (uint32_t i = 0; i < n; i++)
		ck_assert_uint_le(w[i].off + w[i].len, vol);
	return n;
}

/* The bytes write I of a session writes (the same for every run). */
static uint8_t *write_bytes(uint32_t i, uint64_t len)
{
	uint8_t *b = malloc(len);
	ck_assert_ptr_nonnull(b);
	rk_test_fill_seeded(b, len, 1000 + i * 7919);
	return b;
}

/* ---- writes mid-reshape ---- */

START_TEST(t_write_mid)
{
	const struct mcase *c = &mcases[_i];
	rk_dev *d[RESIZE_MAX_MEMBERS];
	uint64_t vol;
	rk_test_rnd_seed(4242 + (uint64_t)_i);
	uint8_t *ref = make_array(d, c, &vol);
	uint32_t n = c->nr + c->nadd;
	uint64_t pos = start_mid(d, c, 3);
	struct rk_sb *before = rk_test_read_sb(d[0]);

	rk_array *a;
	rk_err e = resize_open_mid(&a, d, n, -1, -1, RK_ARRAY_RDWR);
	ck_assert_msg(e == RK_OK, "%s: read-write open mid-reshape: %s", c->name, rk_errmsg());
	uint64_t p = 0;
	ck_assert_int_eq(rk_array_reshaping(a, &p), 1);
	ck_assert_uint_eq(p, pos);
	ck_assert_ptr_null(rk_array_vol(a));
	struct wr w[NW];
	uint32_t nw = plan_writes(w, d, vol);
	for (uint32_t i = 0; i < nw; i++) {
		uint8_t *b = write_bytes(i, w[i].len);
		e = rk_array_write(a, b, (size_t)w[i].len, w[i].off);
		ck_assert_msg(e == RK_OK, "%s: write %u (%llu+%llu, checkpoint %llu): %s", c->name, i,
		              (unsigned long long)w[i].off, (unsigned long long)w[i].len, (unsigned long long)pos, rk_errmsg());
		memcpy(ref + w[i].off, b, w[i].len);
		free(b);
	}
	/* the reshape kept room for a journal (resize.c data_floor), so even
	 * an array that had none before gets one at this first write */
	ck_assert_int_eq(rk_array_journaled(a), 1);
	/* read back through the same open, across the checkpoint */
	uint8_t *b = malloc(vol);
	ck_assert_ptr_nonnull(b);
	ck_assert_int_eq(rk_array_read(a, b, vol, 0), RK_OK);
	same(b, ref, vol, "read back in the write session");
	free(b);
	ck_assert_int_eq(rk_array_close(a), RK_OK);

	/* the checkpoint did not move, the array is clean, both geometries
	 * consistent where they are in use */
	struct rk_sb *after = rk_test_read_sb(d[0]);
	ck_assert(after->feat_incompat & RK_FEAT_INCOMPAT_RESHAPE);
	ck_assert_uint_eq(after->reshape_pos, pos);
	ck_assert_uint_eq(after->array_state, RK_ARRAY_CLEAN);
	ck_assert_uint_gt(after->events, before->events);
	free(after);
	free(before);
	scrub_mid(d, n);
	b = read_vol(d, n, -1, -1, vol, NULL);
	same(b, ref, vol, "read-only open after the write session");
	free(b);

	struct rk_resize_result res;
	e = rk_resize_continue(d, n, NULL, &res);
	ck_assert_msg(e == RK_OK, "%s: continue: %s", c->name, rk_errmsg());
	verify_final(d, n, ref, vol);
	rk_test_close_devs(d, n);
	free(ref);
}
END_TEST

/* The reshape's first checkpoint: single bytes on either side of the
 * split, a write past the end, and the whole volume in one write. */
START_TEST(t_write_edges)
{
	const struct mcase *c = &mcases[0];
	rk_dev *d[RESIZE_MAX_MEMBERS];
	uint64_t vol;
	rk_test_rnd_seed(777);
	uint8_t *ref = make_array(d, c, &vol);
	uint32_t n = c->nr + c->nadd;
	uint64_t pos = start_mid(d, c, 1);
	rk_array *a;
	ck_assert_int_eq(resize_open_mid(&a, d, n, -1, -1, RK_ARRAY_RDWR), RK_OK);
	/* the last byte below the checkpoint, the first above, and the whole
	 * volume in one write */
	uint8_t x = 0xC3, y = 0x3C;
	ck_assert_int_eq(rk_array_write(a, &x, 1, pos - 1), RK_OK);
	ck_assert_int_eq(rk_array_write(a, &y, 1, pos), RK_OK);
	ref[pos - 1] = x;
	ref[pos] = y;
	ck_assert_int_eq(rk_array_write(a, &x, 1, vol), RK_E_RANGE);
	ck_assert_uint_gt(pos, 0);
	ck_assert_int_eq(rk_array_close(a), RK_OK);
	uint8_t *b = read_vol(d, n, -1, -1, vol, NULL);
	same(b, ref, vol, "single bytes at the checkpoint");
	free(b);
	ck_assert_int_eq(resize_open_mid(&a, d, n, -1, -1, RK_ARRAY_RDWR), RK_OK);
	uint8_t *all = write_bytes(99, vol);
	ck_assert_int_eq(rk_array_write(a, all, vol, 0), RK_OK);
	ck_assert_int_eq(rk_array_close(a), RK_OK);
	scrub_mid(d, n);
	b = read_vol(d, n, -1, -1, vol, NULL);
	same(b, all, vol, "the whole volume written mid-reshape");
	free(b);
	struct rk_resize_result res;
	ck_assert_int_eq(rk_resize_continue(d, n, NULL, &res), RK_OK);
	verify_final(d, n, all, vol);
	rk_test_close_devs(d, n);
	free(all);
	free(ref);
}
END_TEST

/* Mid-revert (the reverting flag: the checkpoint falls back to 0, bytes
 * below it still in the new geometry): the same split, written alike;
 * the revert then finishes with the written bytes in the old geometry. */
START_TEST(t_write_reverting)
{
	const struct mcase *c = &mcases[_i == 0 ? 0 : 2];
	rk_dev *d[RESIZE_MAX_MEMBERS];
	uint64_t vol;
	rk_test_rnd_seed(8080 + (uint64_t)_i);
	uint8_t *ref = make_array(d, c, &vol);
	uint32_t n = c->nr + c->nadd;
	uint64_t pos = start_mid(d, c, 8);
	struct resize_stop st = { .checkpoints = 2 };
	struct rk_resize_opts o = { .layout = RK_RESIZE_LAYOUT_KEEP, .batch_max = BATCH, .progress = resize_stop_progress,
	                            .progress_ctx = &st, .stop = &st.flag };
	struct rk_resize_result res;
	rk_err e = rk_resize_revert(d, n, &o, &res);
	ck_assert_msg(e == RK_E_FAULT, "%s: the revert was not stopped: %d %s", c->name, e, rk_errmsg());
	struct rk_sb *t = rk_test_read_sb(d[0]);
	ck_assert(t->feat_incompat & RK_FEAT_INCOMPAT_RESHAPE);
	ck_assert(t->reshape_flags & RK_RESHAPE_REVERTING);
	ck_assert_uint_lt(t->reshape_pos, pos);
	pos = t->reshape_pos;
	free(t);
	rk_array *a;
	e = resize_open_mid(&a, d, n, -1, -1, RK_ARRAY_RDWR);
	ck_assert_msg(e == RK_OK, "%s: read-write open mid-revert: %s", c->name, rk_errmsg());
	struct wr w[NW];
	uint32_t nw = plan_writes(w, d, vol);
	for (uint32_t i = 0; i < nw; i++) {
		uint8_t *b = write_bytes(i, w[i].len);
		e = rk_array_write(a, b, (size_t)w[i].len, w[i].off);
		ck_assert_msg(e == RK_OK, "%s: write %u mid-revert: %s", c->name, i, rk_errmsg());
		memcpy(ref + w[i].off, b, w[i].len);
		free(b);
	}
	ck_assert_int_eq(rk_array_close(a), RK_OK);
	scrub_mid(d, n);
	uint8_t *b = read_vol(d, n, -1, -1, vol, NULL);
	same(b, ref, vol, "written mid-revert");
	free(b);
	e = rk_resize_revert(d, n, NULL, &res);
	ck_assert_msg(e == RK_OK, "%s: finishing the revert: %s", c->name, rk_errmsg());
	/* the old geometry on the old members, with the written bytes */
	struct rk_sb *s0 = rk_test_read_sb(d[0]);
	ck_assert(!(s0->feat_incompat & RK_FEAT_INCOMPAT_RESHAPE));
	ck_assert_uint_eq(s0->nroles, c->nr);
	ck_assert_uint_eq(s0->volume_size, vol);
	b = malloc(vol);
	ck_assert_ptr_nonnull(b);
	ck_assert_int_eq(rk_resize_read(d, c->nr, b, vol, 0, NULL), RK_OK);
	same(b, ref, vol, "after the revert");
	free(b);
	struct rk_geom g;
	ck_assert_int_eq(rk_geom_init(&g, s0->level, s0->layout, s0->chunk, s0->nroles, s0->data_size), RK_OK);
	uint64_t offs[RESIZE_MAX_MEMBERS];
	for (uint32_t r = 0; r < c->nr; r++)
		offs[r] = s0->data_offset;
	struct rk_scrub_opts so = { 0 };
	struct rk_scrub_stats sst;
	ck_assert_int_eq(rk_scrub_run(&g, d, offs, 0, g.nstripes, &so, &sst), RK_OK);
	ck_assert_uint_eq(sst.mismatches, 0);
	free(s0);
	rk_test_close_devs(d, n);
	free(ref);
}
END_TEST

/* The checkpoint at 0 (the reshape started, nothing moved: only the old
 * geometry is in use, the added member holds no data yet). */
START_TEST(t_write_pos0)
{
	const struct mcase *c = &mcases[_i == 0 ? 0 : 2];
	rk_dev *d[RESIZE_MAX_MEMBERS];
	uint64_t vol;
	rk_test_rnd_seed(555 + (uint64_t)_i);
	uint8_t *ref = make_array(d, c, &vol);
	uint32_t n = c->nr + c->nadd;
	ck_assert_uint_eq(start_mid(d, c, 0), 0);
	rk_array *a;
	ck_assert_int_eq(resize_open_mid(&a, d, n, -1, -1, RK_ARRAY_RDWR), RK_OK);
	uint64_t p = 1;
	ck_assert_int_eq(rk_array_reshaping(a, &p), 1);
	ck_assert_uint_eq(p, 0);
	uint8_t *b = write_bytes(5, 300000);
	ck_assert_int_eq(rk_array_write(a, b, 300000, 12345), RK_OK);
	memcpy(ref + 12345, b, 300000);
	free(b);
	ck_assert_int_eq(rk_array_close(a), RK_OK);
	b = read_vol(d, n, -1, -1, vol, NULL);
	same(b, ref, vol, "written at checkpoint 0");
	free(b);
	struct rk_resize_result res;
	ck_assert_int_eq(rk_resize_continue(d, n, NULL, &res), RK_OK);
	verify_final(d, n, ref, vol);
	rk_test_close_devs(d, n);
	free(ref);
}
END_TEST

/* Degraded: one role missing during the write session (an old role, or
 * the member the reshape added), the volume reads as written with it
 * missing and, on RAID-6, with any second role missing too (no write hole
 * in either geometry); the missing role is recorded faulty. */
START_TEST(t_write_degraded)
{
	static const struct {
		int mc;
		int miss;
	} dc[] = { { 0, 1 }, { 0, 3 }, { 1, 0 }, { 1, 4 }, { 2, 2 } };
	const struct mcase *c = &mcases[dc[_i].mc];
	int miss = dc[_i].miss;
	rk_dev *d[RESIZE_MAX_MEMBERS];
	uint64_t vol;
	rk_test_rnd_seed(99 + (uint64_t)_i);
	uint8_t *ref = make_array(d, c, &vol);
	uint32_t n = c->nr + c->nadd;
	start_mid(d, c, 3);
	rk_array *a;
	rk_err e = resize_open_mid(&a, d, n, miss, -1, RK_ARRAY_RDWR);
	ck_assert_msg(e == RK_OK, "%s missing role %d: %s", c->name, miss, rk_errmsg());
	ck_assert(rk_array_role_down(a, (uint32_t)miss));
	struct wr w[NW];
	uint32_t nw = plan_writes(w, d, vol);
	for (uint32_t i = 0; i < nw; i++) {
		uint8_t *b = write_bytes(i, w[i].len);
		e = rk_array_write(a, b, (size_t)w[i].len, w[i].off);
		ck_assert_msg(e == RK_OK, "%s missing role %d: write %u: %s", c->name, miss, i, rk_errmsg());
		memcpy(ref + w[i].off, b, w[i].len);
		free(b);
	}
	ck_assert_int_eq(rk_array_close(a), RK_OK);
	struct rk_sb *t = rk_test_read_sb(d[miss == 0 ? 1 : 0]);
	ck_assert_uint_eq(t->roles[miss].state, RK_ROLE_FAULTY);
	ck_assert_uint_eq(t->array_state, RK_ARRAY_CLEAN);
	uint32_t span = rk_resize_span(t);
	int raid6 = c->level == 6 && t->reshape_new.level == 6;
	free(t);
	/* the stale member is left out from now on */
	rk_dev *live[RESIZE_MAX_MEMBERS];
	uint32_t nl = 0;
	for (uint32_t i = 0; i < n; i++) {
		struct rk_sb *s = rk_test_read_sb(d[i]);
		if ((int)s->this_role != miss)
			live[nl++] = d[i];
		free(s);
	}
	uint8_t *b = read_vol(live, nl, -1, -1, vol, NULL);
	same(b, ref, vol, "degraded write, read degraded");
	free(b);
	for (uint32_t r = 0; raid6 && r < span; r++) {
		if ((int)r == miss)
			continue;
		b = read_vol(live, nl, (int)r, -1, vol, NULL);
		same(b, ref, vol, "degraded RAID-6 write, read with a second role left out");
		free(b);
	}
	/* The stale member given back is refused by name; without it the
	 * reshape goes on degraded (even cases) or is reverted degraded (odd
	 * ones), and the role stays faulty for raid-recover --rebuild. */
	struct rk_resize_result res;
	e = rk_resize_continue(d, n, NULL, &res);
	ck_assert_msg(e == RK_E_STALE, "%s: continue with the stale member: %d %s", c->name, e, rk_errmsg());
	int revert = _i & 1;
	e = revert ? rk_resize_revert(live, nl, NULL, &res) : rk_resize_continue(live, nl, NULL, &res);
	ck_assert_msg(e == RK_OK, "%s missing role %d: degraded %s: %s", c->name, miss, revert ? "revert" : "continue",
	              rk_errmsg());
	t = rk_test_read_sb(live[0]);
	ck_assert(!(t->feat_incompat & RK_FEAT_INCOMPAT_RESHAPE));
	if ((uint32_t)miss < t->nroles)
		ck_assert_uint_eq(t->roles[miss].state, RK_ROLE_FAULTY);
	uint64_t fsz = t->volume_size;
	free(t);
	b = malloc(fsz);
	ck_assert_ptr_nonnull(b);
	uint64_t got = 0;
	ck_assert_int_eq(rk_resize_read(live, nl, b, fsz, 0, &got), RK_OK);
	ck_assert_uint_ge(fsz, vol);
	same(b, ref, vol, revert ? "after a degraded revert" : "after a degraded continue");
	for (uint64_t i = vol; i < fsz; i++)
		if (b[i])
			ck_abort_msg("volume byte %llu past the old volume is not zero", (unsigned long long)i);
	free(b);
	rk_test_close_devs(d, n);
	free(ref);
}
END_TEST

/* A member pulled during the session (its I/O fails from its Kth on):
 * every write completes degraded, the member is recorded faulty on the
 * others before the session goes on, and the volume reads as written
 * without it, through both geometries. */
START_TEST(t_write_pull)
{
	const struct mcase *c = &mcases[1];   /* RAID-6 +1: redundant on both sides */
	rk_dev *d[RESIZE_MAX_MEMBERS], *fw[RESIZE_MAX_MEMBERS];
	uint64_t vol;
	rk_test_rnd_seed(2024);
	uint8_t *ref = make_array(d, c, &vol);
	uint32_t n = c->nr + c->nadd;
	start_mid(d, c, 3);
	struct wr w[NW];
	uint32_t nw = plan_writes(w, d, vol);
	for (uint32_t i = 0; i < nw; i++) {
		uint8_t *b = write_bytes(i, w[i].len);
		memcpy(ref + w[i].off, b, w[i].len);
		free(b);
	}
	static const struct {
		int member;
		uint64_t at;
	} pulls[] = { { 1, 6 }, { 1, 11 }, { 4, 7 }, { 2, 30 } };   /* after open_mid read the superblocks */
	for (size_t k = 0; k < sizeof pulls / sizeof pulls[0]; k++) {
		rk_dev *m[RESIZE_MAX_MEMBERS];
		for (uint32_t r = 0; r < n; r++) {
			ck_assert_int_eq(rk_dev_mem(&m[r], rk_dev_path(d[r]), DEVSZ), RK_OK);
			memcpy(rk_dev_mem_data(m[r]), rk_dev_mem_data(d[r]), DEVSZ);
		}
		struct rk_fault_spec sp = { .model = RK_FAULT_PULL, .member = pulls[k].member, .n = pulls[k].at };
		rk_fault_plan *plan;
		ck_assert_int_eq(rk_fault_plan_create(&plan, &sp), RK_OK);
		for (uint32_t r = 0; r < n; r++)
			ck_assert_int_eq(rk_dev_fault(&fw[r], m[r], plan, (int)r), RK_OK);
		rk_array *a;
		ck_assert_int_eq(resize_open_mid(&a, fw, n, -1, -1, RK_ARRAY_RDWR), RK_OK);
		for (uint32_t i = 0; i < nw; i++) {
			uint8_t *b = write_bytes(i, w[i].len);
			rk_err e = rk_array_write(a, b, (size_t)w[i].len, w[i].off);
			ck_assert_msg(e == RK_OK, "pull of %d at I/O %llu: write %u: %s", pulls[k].member,
			              (unsigned long long)pulls[k].at, i, rk_errmsg());
			free(b);
		}
		ck_assert(rk_fault_fired(plan));
		ck_assert_uint_eq(rk_array_nfailed(a), 1);
		ck_assert(rk_array_role_down(a, (uint32_t)pulls[k].member));
		ck_assert_int_eq(rk_array_close(a), RK_OK);
		rk_dev *live[RESIZE_MAX_MEMBERS];
		uint32_t nl = 0;
		for (uint32_t r = 0; r < n; r++)
			if ((int)r != pulls[k].member)
				live[nl++] = fw[r];
		struct rk_sb *t = rk_test_read_sb(live[0]);
		ck_assert_uint_eq(t->roles[pulls[k].member].state, RK_ROLE_FAULTY);
		ck_assert_uint_eq(t->array_state, RK_ARRAY_CLEAN);
		free(t);
		uint8_t *b = read_vol(live, nl, -1, -1, vol, NULL);
		same(b, ref, vol, "a member pulled during the write session");
		free(b);
		rk_test_close_devs(fw, n);
		rk_fault_plan_free(plan);
	}
	rk_test_close_devs(d, n);
	free(ref);
}
END_TEST

/* ---- crash safety of a write session mid-reshape ---- */

static uint64_t g_points, g_replay_data, g_replay_resync;

/* Runs the write session of case C over copies of BASE (N members at
 * checkpoint POS, volume ORIG) with fault SPEC; then opens what survived
 * (replay), continues the reshape and checks the volume.  Returns the
 * writes the session issued. */
static uint64_t session(rk_dev **base, uint32_t n, const uint8_t *orig, uint64_t vol, const struct wr *w,
                        uint32_t nw, const struct rk_fault_spec *spec)
{
	rk_dev *d[RESIZE_MAX_MEMBERS], *fw[RESIZE_MAX_MEMBERS];
	rk_fault_plan *plan;
	ck_assert_int_eq(rk_fault_plan_create(&plan, spec), RK_OK);
	for (uint32_t r = 0; r < n; r++) {
		ck_assert_int_eq(rk_dev_mem(&d[r], rk_dev_path(base[r]), rk_dev_size(base[r])), RK_OK);
		memcpy(rk_dev_mem_data(d[r]), rk_dev_mem_data(base[r]), rk_dev_size(base[r]));
		ck_assert_int_eq(rk_dev_fault(&fw[r], d[r], plan, (int)r), RK_OK);
	}
	uint32_t done = 0;
	rk_array *a = NULL;
	if (resize_open_mid(&a, fw, n, -1, -1, RK_ARRAY_RDWR) == RK_OK) {
		for (; done < nw; done++) {
			uint8_t *b = write_bytes(done, w[done].len);
			rk_err e = rk_array_write(a, b, (size_t)w[done].len, w[done].off);
			free(b);
			if (e || rk_array_flush(a))
				break;
		}
		rk_err ce = rk_array_close(a);
		if (spec->model == RK_FAULT_NONE)
			ck_assert_int_eq(ce, RK_OK);
	}
	uint64_t writes = rk_fault_writes(plan);
	ck_assert_int_eq(rk_fault_crash(plan), RK_OK);
	rk_dev *after[RESIZE_MAX_MEMBERS];
	rk_test_crash_copies(plan, n, after);
	rk_test_close_devs(fw, n);
	rk_fault_plan_free(plan);
	if (spec->model == RK_FAULT_NONE)
		ck_assert_uint_eq(done, nw);

	/* what must be there: writes [0, done) whole, write `done` old or new
	 * per sector, nothing else changed */
	uint8_t *want = malloc(vol);
	ck_assert_ptr_nonnull(want);
	memcpy(want, orig, vol);
	for (uint32_t i = 0; i < done; i++) {
		uint8_t *b = write_bytes(i, w[i].len);
		memcpy(want + w[i].off, b, w[i].len);
		free(b);
	}
	int replayed = 0;
	uint8_t *got = read_vol(after, n, -1, -1, vol, &replayed);
	g_replay_data += replayed == RK_ARRAY_REPLAY_DATA;
	g_replay_resync += replayed == RK_ARRAY_REPLAY_RESYNC;
	/* the volume with the write in flight landed */
	uint8_t *landed = malloc(vol);
	ck_assert_ptr_nonnull(landed);
	memcpy(landed, want, vol);
	if (done < nw) {
		uint8_t *b = write_bytes(done, w[done].len);
		memcpy(landed + w[done].off, b, w[done].len);
		free(b);
	}
	for (uint64_t s = 0; s < vol; s += 512) {
		uint64_t k = vol - s < 512 ? vol - s : 512;
		ck_assert_msg(!memcmp(got + s, want + s, k) || !memcmp(got + s, landed + s, k),
		              "fault model %d at write %llu: sector at volume byte %llu is neither old nor new "
		              "(%u writes completed)", spec->model, (unsigned long long)spec->n, (unsigned long long)s, done);
	}
	free(landed);
	/* the checkpoint never moved */
	struct rk_sb *t = rk_test_read_sb(after[0]);
	ck_assert(t->feat_incompat & RK_FEAT_INCOMPAT_RESHAPE);
	free(t);
	/* continue replays (read-write) and finishes: the same bytes */
	struct rk_resize_result res;
	rk_err e = rk_resize_continue(after, n, NULL, &res);
	ck_assert_msg(e == RK_OK, "fault model %d at write %llu: continue: %s", spec->model, (unsigned long long)spec->n,
	              rk_errmsg());
	verify_final(after, n, got, vol);
	rk_test_close_devs(after, n);
	free(got);
	free(want);
	if (spec->model != RK_FAULT_NONE)
		g_points++;
	return writes;
}

START_TEST(t_crash)
{
	/* kill at every write: RAID-5 +1, 5 -> 6; power cuts: RAID-6 +1 */
	static const int mc[] = { 0, 2, 1 };
	const struct mcase *c = &mcases[mc[_i]];
	int cut = _i == 2;
	rk_dev *d[RESIZE_MAX_MEMBERS];
	uint64_t vol;
	rk_test_rnd_seed(31337 + (uint64_t)_i);
	uint8_t *orig = make_array(d, c, &vol);
	uint32_t n = c->nr + c->nadd;
	start_mid(d, c, 3);
	struct wr w[NW];
	uint32_t nw = plan_writes(w, d, vol);
	struct rk_fault_spec sp = { .model = RK_FAULT_NONE };
	uint64_t total = session(d, n, orig, vol, w, nw, &sp);
	ck_assert_uint_gt(total, 40);
	uint64_t before = g_points, step = cut ? total / CUT_POINTS + 1 : KILL_STRIDE;
	for (uint64_t k = 0; k < total; k += step) {
		sp.model = cut ? RK_FAULT_POWER_CUT : RK_FAULT_KILL;
		sp.n = k;
		sp.seed = k * 7 + 1;
		session(d, n, orig, vol, w, nw, &sp);
	}
	fprintf(stderr, "reshape_write: %s: %s at %llu of %llu writes; replays so far: %llu redo, %llu resync\n", c->name,
	        cut ? "power cut" : "kill", (unsigned long long)(g_points - before), (unsigned long long)total,
	        (unsigned long long)g_replay_data, (unsigned long long)g_replay_resync);
	/* the kill enumeration met both kinds of mid-reshape record in flight */
	if (!cut) {
		ck_assert_uint_gt(g_replay_data, 0);
		ck_assert_uint_gt(g_replay_resync, 0);
	}
	rk_test_close_devs(d, n);
	free(orig);
}
END_TEST

RK_TEST_SUITE("reshape_write", { "reshape_write", 300, NULL, NULL, 0,
	  RK_TESTS(RK_TEST_LOOP(t_write_mid, 0, (int)(sizeof mcases / sizeof mcases[0])),
	           RK_TEST(t_write_edges), RK_TEST_LOOP(t_write_pos0, 0, 2),
	           RK_TEST_LOOP(t_write_reverting, 0, 2),
	           RK_TEST_LOOP(t_write_degraded, 0, 5), RK_TEST(t_write_pull),
	           RK_TEST_LOOP(t_crash, 0, 3)) })
