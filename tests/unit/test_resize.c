/* test_resize.c: raid-resize's library on memory members: size grow and
 * shrink (refusals over a file system), reshapes (add members to RAID-0/5/6,
 * 5 -> 6, 0 -> 5, 1 -> 5, RAID-1 mirrors, chunk change), each checked
 * against the original bytes and by a scrub of the new geometry; and
 * interruptions at every write (kill) and sampled power cuts over the
 * reshape path, resumed with rk_resize_continue. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rk_array.h"
#include "rk_dev.h"
#include "rk_geom.h"
#include "rk_resize.h"
#include "rk_sb.h"
#include "rk_scrub.h"
#include "rk_vol.h"
#include "helpers/rk_test.h"

#define MAXM 12
/* Every write; under the sanitizers (several times slower) every 4th. */
#ifdef __SANITIZE_ADDRESS__
#define KILL_STRIDE 4
#else
#define KILL_STRIDE 1
#endif

static uint64_t rng = 88172645463325252ull;
static int g_journal;   /* make_array adds a journal area (redundant levels) */
static uint64_t xr(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}
static void fill(uint8_t *b, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		b[i] = (uint8_t)(xr() >> 24);
}

/* Creates an array on NR fresh memory members of DEVSZ bytes, fills its
 * volume with random bytes and returns them (*vol gets the size). */
static uint8_t *make_array(rk_dev **d, int32_t level, uint32_t layout, uint64_t chunk, uint32_t nr,
                           uint64_t devsz, uint64_t *vol)
{
	struct rk_sb *sb = calloc(1, sizeof *sb);
	ck_assert_ptr_nonnull(sb);
	struct rk_sb_params p = { .level = level, .layout = layout, .chunk = chunk, .nroles = nr, .name = "t" };
	p.data_size = rk_sb_max_data_size(devsz, RK_DATA_OFFSET_DEFAULT, chunk);
	ck_assert_int_eq(rk_sb_init(sb, &p), RK_OK);
	if (g_journal && level != 0) {
		/* As mkraid makes it: the whole gap below the data is journal. */
		sb->feat_incompat |= RK_FEAT_INCOMPAT_JOURNAL;
		sb->journal_offset = RK_SB_PRIMARY_END;
		sb->journal_size = RK_DATA_OFFSET_DEFAULT - RK_SB_PRIMARY_END;
	}
	for (uint32_t r = 0; r < nr; r++) {
		char nm[16];
		snprintf(nm, sizeof nm, "m%u", r);
		ck_assert_int_eq(rk_dev_mem(&d[r], nm, devsz), RK_OK);
		ck_assert_int_eq(rk_sb_set_member(sb, r, devsz), RK_OK);
		ck_assert_int_eq(rk_sb_write(d[r], sb), RK_OK);
	}
	struct rk_geom g;
	ck_assert_int_eq(rk_geom_init(&g, level, layout, chunk, nr, sb->data_size), RK_OK);
	uint64_t offs[MAXM];
	for (uint32_t r = 0; r < nr; r++)
		offs[r] = sb->data_offset;
	rk_vol *v;
	ck_assert_int_eq(rk_vol_open(&v, &g, d, offs), RK_OK);
	*vol = sb->volume_size;
	uint8_t *data = malloc(*vol);
	ck_assert_ptr_nonnull(data);
	fill(data, *vol);
	ck_assert_int_eq(rk_vol_write(v, data, *vol, 0), RK_OK);
	rk_vol_close(v);
	free(sb);
	return data;
}

static struct rk_sb *read_sb(rk_dev *d)
{
	struct rk_sb_read rd;
	ck_assert_int_eq(rk_sb_read(d, &rd), RK_OK);
	struct rk_sb *s = malloc(sizeof *s);
	ck_assert_ptr_nonnull(s);
	memcpy(s, rd.copy[rd.chosen].sb, sizeof *s);
	rk_sb_read_free(&rd);
	return s;
}

/* The array on D (role order, N members) is in no reshape, agrees on
 * events, holds DATA in its first LEN bytes and zeros after, and scrubs
 * clean. */
static void verify(rk_dev **d, uint32_t n, const uint8_t *data, uint64_t len)
{
	struct rk_sb *s = read_sb(d[0]);
	ck_assert_uint_eq(s->nroles, n);
	ck_assert(!(s->feat_incompat & RK_FEAT_INCOMPAT_RESHAPE));
	for (uint32_t r = 1; r < n; r++) {
		struct rk_sb *o = read_sb(d[r]);
		ck_assert_uint_eq(o->events, s->events);
		ck_assert_uint_eq(o->this_role, r);
		free(o);
	}
	uint64_t vsz = 0;
	uint8_t *b = malloc(s->volume_size);
	ck_assert_ptr_nonnull(b);
	ck_assert_int_eq(rk_resize_read(d, n, b, s->volume_size, 0, &vsz), RK_OK);
	ck_assert_uint_eq(vsz, s->volume_size);
	ck_assert_uint_ge(vsz, len);
	for (uint64_t i = 0; i < len; i++)
		if (b[i] != data[i])
			ck_abort_msg("volume byte %llu of %llu differs (events %llu, level %d)", (unsigned long long)i,
			             (unsigned long long)len, (unsigned long long)s->events, (int)s->level);
	for (uint64_t i = len; i < vsz; i++)
		if (b[i])
			ck_abort_msg("volume byte %llu past the old data is 0x%02x, not zero", (unsigned long long)i, b[i]);
	free(b);
	if (s->level != 0 && s->level != RK_LEVEL_LINEAR) {
		struct rk_geom g;
		ck_assert_int_eq(rk_geom_init(&g, s->level, s->layout, s->chunk, s->nroles, s->data_size), RK_OK);
		uint64_t offs[MAXM];
		for (uint32_t r = 0; r < n; r++)
			offs[r] = s->data_offset;
		struct rk_scrub_opts so = { 0 };
		struct rk_scrub_stats st;
		ck_assert_int_eq(rk_scrub_run(&g, d, offs, 0, g.nstripes, &so, &st), RK_OK);
		ck_assert_uint_eq(st.mismatches, 0);
		ck_assert_uint_eq(st.stripes, g.nstripes);
	}
	free(s);
}

static void close_all(rk_dev **d, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		rk_dev_close(d[i]);
}

/* ---- size ---- */

START_TEST(t_grow_size)
{
	static const int32_t lv[] = { 5, 6, 0, 1, 4, 10 };
	int32_t level = lv[_i];
	rk_dev *d[MAXM];
	uint64_t vol;
	uint32_t n = level == 1 ? 2 : 4;
	uint32_t layout = level == 10 ? RK_R10_LAYOUT(2, 1, 0) : rk_layout_default(level);
	uint64_t chunk = level == 1 ? 0 : 65536;
	uint8_t *data = make_array(d, level, layout, chunk, n, 3u << 20, &vol);
	/* Give the members room: mem devices cannot grow, so recreate bigger
	 * ones holding the same bytes (a disk swapped for a larger one). */
	rk_dev *big[MAXM];
	uint64_t bigsz = 5u << 20;
	for (uint32_t r = 0; r < n; r++) {
		ck_assert_int_eq(rk_dev_mem(&big[r], rk_dev_path(d[r]), bigsz), RK_OK);
		memcpy(rk_dev_mem_data(big[r]), rk_dev_mem_data(d[r]), 3u << 20);
		/* Stale bytes in the new area must not show through. */
		memset(rk_dev_mem_data(big[r]) + (3u << 20), 0xA5, bigsz - (3u << 20));
	}
	close_all(d, n);
	struct rk_resize_result res;
	/* Past the capacity: refused, nothing changes. */
	ck_assert_int_eq(rk_resize_size(big, n, 8u << 20, NULL, &res), RK_E_RANGE);
	ck_assert_int_eq(rk_resize_size(big, n, 0, NULL, &res), RK_OK);
	ck_assert_uint_eq(res.old_volume, vol);
	ck_assert_uint_gt(res.new_volume, vol);
	verify(big, n, data, vol);
	close_all(big, n);
	free(data);
}
END_TEST

/* Writes a minimal ext4 superblock (magic, block count, 4 KiB blocks) at
 * volume byte 1024. */
static void put_ext4(rk_dev **d, uint32_t n, uint64_t fs_bytes)
{
	struct rk_sb *s = read_sb(d[0]);
	struct rk_geom g;
	ck_assert_int_eq(rk_geom_init(&g, s->level, s->layout, s->chunk, s->nroles, s->data_size), RK_OK);
	uint64_t offs[MAXM];
	for (uint32_t r = 0; r < n; r++)
		offs[r] = s->data_offset;
	rk_vol *v;
	ck_assert_int_eq(rk_vol_open(&v, &g, d, offs), RK_OK);
	uint8_t sb[1024] = { 0 };
	uint32_t blocks = (uint32_t)(fs_bytes / 4096);
	memcpy(sb + 4, &blocks, 4);
	uint32_t lg = 2;
	memcpy(sb + 24, &lg, 4);
	sb[56] = 0x53;
	sb[57] = 0xEF;
	sb[0x60] = 0x40;   /* extents: "ext4" */
	ck_assert_int_eq(rk_vol_write(v, sb, sizeof sb, 1024), RK_OK);
	rk_vol_close(v);
	free(s);
}

START_TEST(t_shrink)
{
	rk_dev *d[MAXM];
	uint64_t vol;
	uint8_t *data = make_array(d, 5, 2, 65536, 4, 4u << 20, &vol);
	struct rk_sb *s0 = read_sb(d[0]);
	uint64_t ds = s0->data_size;
	struct rk_resize_result res;
	struct rk_resize_opts o = { .layout = RK_RESIZE_LAYOUT_KEEP };
	/* Nothing recognised and nothing stated: refused. */
	ck_assert_int_eq(rk_resize_size(d, 4, ds / 2, &o, &res), RK_E_EXISTS);
	struct rk_sb *s1 = read_sb(d[0]);
	ck_assert_uint_eq(s1->events, s0->events);
	free(s1);
	/* Stated, but more than the new volume: refused. */
	o.volume_size = vol;
	ck_assert_int_eq(rk_resize_size(d, 4, ds / 2, &o, &res), RK_E_EXISTS);
	/* Stated and fitting: done; the kept bytes are intact. */
	uint64_t newds = ds / 2 / 65536 * 65536;
	o.volume_size = 3 * newds;
	ck_assert_int_eq(rk_resize_size(d, 4, ds / 2, &o, &res), RK_OK);
	ck_assert_uint_eq(res.new_volume, 3 * newds);
	verify(d, 4, data, res.new_volume);
	/* An ext4 file system of 2 MiB: a shrink below it is refused without
	 * a stated size, and with a smaller stated one; above it, allowed. */
	put_ext4(d, 4, 2u << 20);
	o.volume_size = 0;
	ck_assert_int_eq(rk_resize_size(d, 4, 512 * 1024, &o, &res), RK_E_EXISTS);
	ck_assert(strstr(res.found, "ext4"));
	o.volume_size = 1u << 20;
	ck_assert_int_eq(rk_resize_size(d, 4, 512 * 1024, &o, &res), RK_E_EXISTS);
	o.volume_size = 0;
	ck_assert_int_eq(rk_resize_size(d, 4, 1u << 20, &o, &res), RK_OK);
	ck_assert_uint_eq(res.new_volume, 3u << 20);
	ck_assert_uint_eq(res.keep, 2u << 20);
	free(s0);
	close_all(d, 4);
	free(data);
}
END_TEST

static rk_err mem_read(void *ctx, void *buf, uint64_t len, uint64_t off)
{
	memcpy(buf, (const uint8_t *)ctx + off, (size_t)len);
	return RK_OK;
}

START_TEST(t_fs_probe_kinds)
{
	/* XFS and btrfs headers are recognised with their sizes; zeros are not. */
	static uint8_t img[256 * 1024];
	uint64_t ext = 0;
	char what[128];
	memset(img, 0, sizeof img);
	ck_assert_int_eq(rk_resize_fs_extent(mem_read, img, sizeof img, &ext, what, sizeof what), 0);
	memcpy(img, "XFSB", 4);
	img[6] = 0x10;                       /* blocksize 4096 (be32) */
	img[15] = 0x20;                      /* dblocks 32 (be64) */
	ck_assert_int_eq(rk_resize_fs_extent(mem_read, img, sizeof img, &ext, what, sizeof what), 1);
	ck_assert_uint_eq(ext, 32 * 4096);
	ck_assert(strstr(what, "XFS"));
	memset(img, 0, sizeof img);
	memcpy(img + 65536 + 64, "_BHRfS_M", 8);
	img[65536 + 0x70 + 2] = 0x30;        /* total_bytes 0x300000 */
	ck_assert_int_eq(rk_resize_fs_extent(mem_read, img, sizeof img, &ext, what, sizeof what), 1);
	ck_assert_uint_eq(ext, 0x300000);
	/* A volume too small to hold the probe area is read only as far as it goes. */
	ck_assert_int_eq(rk_resize_fs_extent(mem_read, img, 4096, &ext, what, sizeof what), 0);
}
END_TEST

/* ---- reshapes ---- */

struct rs_case {
	int32_t level;
	uint32_t layout, nr, nadd;
	uint64_t chunk;
	int32_t new_level;       /* -99: keep */
	uint64_t new_chunk;      /* 0 keep */
};
static const struct rs_case rs_cases[] = {
	{ 5, 2, 3, 1, 65536, -99, 0 },        /* RAID-5 +1 */
	{ 5, 2, 3, 2, 65536, -99, 0 },        /* RAID-5 +2 */
	{ 6, 2, 4, 1, 65536, -99, 0 },        /* RAID-6 +1 */
	{ 6, 2, 4, 2, 65536, -99, 0 },        /* RAID-6 +2 */
	{ 5, 2, 4, 1, 65536, 6, 0 },          /* 5 -> 6 with one added member */
	{ 0, 0, 3, 1, 65536, 5, 0 },          /* 0 -> 5 */
	{ 0, 0, 2, 2, 32768, -99, 0 },        /* RAID-0 +2 */
	{ 1, 0, 3, 0, 0, 5, 0 },              /* 1 -> 5 on the same members */
	{ 5, 0, 3, 1, 65536, -99, 32768 },    /* +1 with a new chunk */
	{ 4, 0, 3, 1, 131072, -99, 0 },       /* RAID-4 +1 */
	{ 1, 0, 2, 1, 0, -99, 0 },            /* RAID-1 gains a mirror */
	/* RAID-10 near: restriped; odd counts wrap copies across rows */
	{ 10, RK_R10_LAYOUT(2, 1, 0), 4, 1, 65536, -99, 0 },       /* 11: n2 4 -> 5 */
	{ 10, RK_R10_LAYOUT(2, 1, 0), 4, 2, 65536, -99, 0 },       /* 12: n2 4 -> 6 */
	{ 10, RK_R10_LAYOUT(2, 1, 0), 3, 1, 65536, -99, 0 },       /* 13: n2 3 -> 4 */
	{ 10, RK_R10_LAYOUT(3, 1, 0), 3, 1, 65536, -99, 0 },       /* 14: n3 3 -> 4 */
	{ 10, RK_R10_LAYOUT(2, 1, 0), 4, 1, 65536, -99, 32768 },   /* 15: n2 4 -> 5, chunk 64K -> 32K */
};
#define RS_R10 11

static void run_case(const struct rs_case *c, uint64_t batch)
{
	rk_dev *d[MAXM];
	uint64_t vol;
	uint8_t *data = make_array(d, c->level, c->layout, c->chunk, c->nr, 3u << 20, &vol);
	for (uint32_t a = 0; a < c->nadd; a++) {
		char nm[16];
		snprintf(nm, sizeof nm, "new%u", a);
		ck_assert_int_eq(rk_dev_mem(&d[c->nr + a], nm, 3u << 20), RK_OK);
		memset(rk_dev_mem_data(d[c->nr + a]), 0x5A, 3u << 20);   /* junk must not show */
	}
	struct rk_resize_opts o = { .layout = RK_RESIZE_LAYOUT_KEEP, .batch_max = batch, .chunk = c->new_chunk };
	if (c->new_level != -99) {
		o.set_level = 1;
		o.level = c->new_level;
	}
	struct rk_resize_result res;
	/* Members in a shuffled order: matched by UUID. */
	rk_dev *given[MAXM];
	for (uint32_t r = 0; r < c->nr; r++)
		given[r] = d[c->nr - 1 - r];
	rk_err e = rk_resize_reshape(given, c->nr, d + c->nr, c->nadd, &o, &res);
	ck_assert_msg(e == RK_OK, "reshape: %s", rk_errmsg());
	ck_assert_uint_eq(res.old_volume, vol);
	ck_assert_uint_ge(res.new_volume, vol);
	verify(d, c->nr + c->nadd, data, vol);
	close_all(d, c->nr + c->nadd);
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
	rk_dev *d[MAXM];
	uint64_t vol;
	uint8_t *data = make_array(d, 5, 2, 65536, 3, 3u << 20, &vol);
	ck_assert_int_eq(rk_dev_mem(&d[3], "small", 1u << 20), RK_OK);
	struct rk_resize_opts o = { .layout = RK_RESIZE_LAYOUT_KEEP };
	struct rk_resize_result res;
	struct rk_sb *s0 = read_sb(d[0]);
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
		struct rk_sb *s = read_sb(d[r]);
		ck_assert_uint_eq(s->events, s0->events);
		free(s);
	}
	ck_assert_int_eq(rk_resize_continue(d, 3, NULL, &res), RK_OK);
	ck_assert(strstr(res.did, "nothing"));
	ck_assert_int_eq(rk_resize_revert(d, 3, NULL, &res), RK_E_INVAL);
	verify(d, 3, data, vol);
	free(s0);
	close_all(d, 4);
	free(data);
}
END_TEST

/* ---- interruptions ---- */

static uint64_t g_points;   /* interruption points tested, for the report */
static uint64_t g_devsz = 3u << 20;   /* member size in interrupted() */
static uint64_t g_midread;  /* of them, opened mid-reshape through rk_array_open_devs */

/* The members D (N of them, any state an interruption left) open as an
 * array (rk_array_open_devs, read-only) whose volume is DATA (LEN bytes);
 * mid-reshape (or mid-revert) through the dual-geometry reader. */
static void array_read_check(rk_dev **d, uint32_t n, const uint8_t *data, uint64_t len)
{
	struct rk_sb *own[MAXM] = { 0 };
	uint32_t fresh = 0;
	for (uint32_t i = 0; i < n; i++) {
		struct rk_sb_read rd;
		if (rk_sb_read(d[i], &rd) == RK_OK && rd.chosen >= 0) {
			own[i] = malloc(sizeof *own[i]);
			ck_assert_ptr_nonnull(own[i]);
			memcpy(own[i], rd.copy[rd.chosen].sb, sizeof *own[i]);
		}
		rk_sb_read_free(&rd);
		if (own[i] && (!own[fresh] || own[i]->events > own[fresh]->events))
			fresh = i;
	}
	const struct rk_sb *t = own[fresh];
	ck_assert_ptr_nonnull(t);
	rk_dev *byrole[MAXM] = { 0 };
	const struct rk_sb *sbs[MAXM] = { 0 };
	uint32_t span = rk_resize_span(t);
	ck_assert_uint_le(span, MAXM);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t r = own[i] ? own[i]->this_role : RK_SB_MAX_ROLES;
		if (r >= span || t->roles[r].state != RK_ROLE_ACTIVE || memcmp(t->roles[r].member_uuid, own[i]->member_uuid, 16))
			continue;   /* an added member the freshest superblock does not list yet */
		byrole[r] = d[i];
		sbs[r] = own[i];
	}
	int mid = !!(t->feat_incompat & RK_FEAT_INCOMPAT_RESHAPE);
	rk_array *a;
	rk_err e = rk_array_open_devs(&a, t, byrole, sbs, RK_ARRAY_RDONLY);
	ck_assert_msg(e == RK_OK, "rk_array_open_devs (reshape %d, at %llu): %s", mid,
	              (unsigned long long)t->reshape_pos, rk_errmsg());
	uint64_t pos = 1;
	ck_assert_int_eq(rk_array_reshaping(a, &pos), mid);
	if (mid)
		ck_assert_uint_eq(pos, t->reshape_pos);
	ck_assert_uint_ge(rk_array_size(a), len);
	uint8_t *b = malloc(len);
	ck_assert_ptr_nonnull(b);
	/* in two pieces, split off the checkpoint, and one read across it */
	uint64_t cut = mid && t->reshape_pos && t->reshape_pos < len ? t->reshape_pos - 1 : len / 2;
	ck_assert_int_eq(rk_array_read(a, b, (size_t)cut, 0), RK_OK);
	ck_assert_int_eq(rk_array_read(a, b + cut, (size_t)(len - cut), cut), RK_OK);
	for (uint64_t i = 0; i < len; i++)
		if (b[i] != data[i])
			ck_abort_msg("rk_array_read (reshape %d at %llu, events %llu) differs from the original at byte %llu "
			             "(cut %llu)", mid, (unsigned long long)t->reshape_pos, (unsigned long long)t->events,
			             (unsigned long long)i, (unsigned long long)cut);
	ck_assert_int_eq(rk_array_read(a, b, 1, rk_array_size(a)), RK_E_RANGE);
	ck_assert_int_eq(rk_array_write(a, b, 1, 0), RK_E_READONLY);
	ck_assert_int_eq(rk_array_close(a), RK_OK);
	free(b);
	/* Writing mid-reshape is rk_array's (test_array); here only reads, so
	 * the state the interruption left is what continue resumes from. */
	if (mid)
		g_midread++;
	for (uint32_t i = 0; i < n; i++)
		free(own[i]);
}

/* One run of case C with fault SPEC (model, n, seed) over every member;
 * then continue on what the members hold and check everything. */
static void interrupted(const struct rs_case *c, const struct rk_fault_spec *spec, uint64_t batch, uint64_t *writes)
{
	rk_dev *d[MAXM], *w[MAXM];
	uint64_t vol;
	rng = 12345;   /* same data each run */
	uint8_t *data = make_array(d, c->level, c->layout, c->chunk, c->nr, g_devsz, &vol);
	uint32_t n = c->nr + c->nadd;
	for (uint32_t a = 0; a < c->nadd; a++)
		ck_assert_int_eq(rk_dev_mem(&d[c->nr + a], "new", g_devsz), RK_OK);
	rk_fault_plan *plan;
	ck_assert_int_eq(rk_fault_plan_create(&plan, spec), RK_OK);
	for (uint32_t r = 0; r < n; r++)
		ck_assert_int_eq(rk_dev_fault(&w[r], d[r], plan, (int)r), RK_OK);
	if (spec->model == RK_FAULT_NONE) {
		verify(d, c->nr, data, vol);
		verify(w, c->nr, data, vol);
	}
	struct rk_resize_opts o = { .layout = RK_RESIZE_LAYOUT_KEEP, .batch_max = batch };
	if (c->new_level != -99) {
		o.set_level = 1;
		o.level = c->new_level;
	}
	struct rk_resize_result res;
	rk_err e = rk_resize_reshape(w, c->nr, w + c->nr, c->nadd, &o, &res);
	if (writes)
		*writes = rk_fault_writes(plan);
	if (spec->model == RK_FAULT_NONE)
		verify(w, n, data, vol);
	ck_assert_int_eq(rk_fault_crash(plan), RK_OK);
	/* What survived, on fresh devices. */
	rk_dev *after[MAXM];
	for (uint32_t r = 0; r < n; r++) {
		rk_dev *lo = rk_fault_lower(plan, (int)r);
		ck_assert_ptr_nonnull(lo);
		ck_assert_int_eq(rk_dev_mem(&after[r], rk_dev_path(lo), rk_dev_size(lo)), RK_OK);
		memcpy(rk_dev_mem_data(after[r]), rk_dev_mem_data(lo), rk_dev_size(lo));
	}
	close_all(w, n);
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
		array_read_check(after, n, data, vol);
		e = rk_resize_continue(after, n, NULL, &res);
		if (e == RK_E_NOSB || e == RK_E_STALE) {
			/* The added members were never written (or listed): the old
			 * array is intact; start again. */
			e = rk_resize_continue(after, c->nr, NULL, &res);
			ck_assert_msg(e == RK_OK, "continue (old members): %s", rk_errmsg());
			struct rk_sb *s = read_sb(after[0]);
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
	verify(after, n, data, vol);
	close_all(after, n);
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
	for (uint64_t n = 0; n < total; n += KILL_STRIDE) {
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

/* ---- RAID-10 refusals ---- */

START_TEST(t_r10_refusals)
{
	/* far and offset copies sit where the member size puts them: refused,
	 * naming the layout; a RAID-10 reshape keeps level 10 */
	static const uint32_t lays[] = { RK_R10_LAYOUT(1, 2, 0), RK_R10_LAYOUT(1, 2, 1), RK_R10_LAYOUT(2, 2, 0) };
	for (unsigned i = 0; i <= 3; i++) {
		rk_dev *d[MAXM];
		uint64_t vol;
		uint32_t lay = i < 3 ? lays[i] : RK_R10_LAYOUT(2, 1, 0);
		uint8_t *data = make_array(d, 10, lay, 65536, 4, 3u << 20, &vol);
		ck_assert_int_eq(rk_dev_mem(&d[4], "new", 3u << 20), RK_OK);
		struct rk_sb *s0 = read_sb(d[0]);
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
			struct rk_sb *sb = read_sb(d[r]);
			ck_assert_uint_eq(sb->events, s0->events);
			free(sb);
		}
		struct rk_sb_read rd;
		ck_assert(rk_sb_read(d[4], &rd) != RK_OK || rd.chosen < 0);
		rk_sb_read_free(&rd);
		verify(d, 4, data, vol);
		free(s0);
		close_all(d, 5);
		free(data);
	}
	/* near into a near layout of more copies (n2 -> n3 on 4 -> 6): allowed */
	rk_dev *d[MAXM];
	uint64_t vol;
	uint8_t *data = make_array(d, 10, RK_R10_LAYOUT(2, 1, 0), 65536, 4, 3u << 20, &vol);
	for (uint32_t a = 0; a < 2; a++)
		ck_assert_int_eq(rk_dev_mem(&d[4 + a], "new", 3u << 20), RK_OK);
	struct rk_resize_opts o = { .layout = RK_R10_LAYOUT(3, 1, 0), .set_level = 1, .level = 10 };
	struct rk_resize_result res;
	ck_assert_msg(rk_resize_reshape(d, 4, d + 4, 2, &o, &res) == RK_OK, "n2 -> n3: %s", rk_errmsg());
	verify(d, 6, data, vol);
	close_all(d, 6);
	free(data);
}
END_TEST

/* ---- revert after data moved ---- */

struct stop_at {
	volatile int flag;
	uint64_t at;
};
static void stop_cb(void *ctx, uint64_t done, uint64_t total)
{
	struct stop_at *st = ctx;
	(void)total;
	if (done >= st->at)
		st->flag = 1;
}

/* Case C on fresh members of DEVSZ, its reshape stopped at the first
 * checkpoint at or past PERMILLE thousandths of the volume (0: before any
 * data moved).  D gets every member (old ones by role, then the added);
 * returns the volume's bytes; *POS gets the checkpoint. */
static uint8_t *start_partial(const struct rs_case *c, rk_dev **d, uint64_t devsz, uint64_t batch,
                              uint64_t permille, uint64_t *vol, uint64_t *pos)
{
	uint8_t *data = make_array(d, c->level, c->layout, c->chunk, c->nr, devsz, vol);
	uint64_t at = permille ? *vol / 1000 * permille + 1 : 0;
	for (uint32_t a = 0; a < c->nadd; a++) {
		char nm[16];
		snprintf(nm, sizeof nm, "new%u", a);
		ck_assert_int_eq(rk_dev_mem(&d[c->nr + a], nm, devsz), RK_OK);
		memset(rk_dev_mem_data(d[c->nr + a]), 0x5A, devsz);
	}
	struct stop_at st = { .flag = at == 0, .at = at };
	struct rk_resize_opts o = { .layout = RK_RESIZE_LAYOUT_KEEP, .batch_max = batch, .chunk = c->new_chunk,
	                            .progress = stop_cb, .progress_ctx = &st, .stop = &st.flag };
	if (c->new_level != -99) {
		o.set_level = 1;
		o.level = c->new_level;
	}
	struct rk_resize_result res;
	ck_assert_int_eq(rk_resize_reshape(d, c->nr, d + c->nr, c->nadd, &o, &res), RK_E_FAULT);
	ck_assert(strstr(rk_errmsg(), "interrupted"));
	struct rk_sb *s = read_sb(d[0]);
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
	verify(d, c->nr, data, vol);
	struct rk_sb *s = read_sb(d[0]);
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
	struct rk_sb *own[MAXM] = { 0 };
	uint32_t fresh = 0;
	for (uint32_t i = 0; i < n; i++) {
		own[i] = read_sb(d[i]);
		if (own[i]->events > own[fresh]->events)
			fresh = i;
	}
	const struct rk_sb *t = own[fresh];
	rk_dev *byrole[MAXM] = { 0 };
	const struct rk_sb *sbs[MAXM] = { 0 };
	for (uint32_t i = 0; i < n; i++) {
		ck_assert_uint_lt(own[i]->this_role, MAXM);
		byrole[own[i]->this_role] = d[i];
		sbs[own[i]->this_role] = own[i];
	}
	rk_array *a;
	ck_assert_msg(rk_array_open_devs(&a, t, byrole, sbs, RK_ARRAY_RDWR) == RK_OK, "open mid-reshape: %s", rk_errmsg());
	ck_assert_int_eq(rk_array_reshaping(a, NULL), 1);
	uint8_t *b = malloc(len);
	ck_assert_ptr_nonnull(b);
	fill(b, len);
	ck_assert_msg(rk_array_write(a, b, (size_t)len, off) == RK_OK, "write mid-reshape: %s", rk_errmsg());
	ck_assert_int_eq(rk_array_close(a), RK_OK);
	memcpy(data + off, b, (size_t)len);
	free(b);
	for (uint32_t i = 0; i < n; i++)
		free(own[i]);
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
	rk_dev *d[MAXM];
	uint64_t vol, pos;
	uint8_t *data = start_partial(c, d, 3u << 20, 64 * 1024, 333, &vol, &pos);
	ck_assert_uint_gt(pos, 0);
	struct rk_resize_result res;
	struct rk_resize_opts o = { .layout = RK_RESIZE_LAYOUT_KEEP, .batch_max = 128 * 1024 };
	rk_dev *given[MAXM];
	for (uint32_t i = 0; i < n; i++)
		given[i] = d[n - 1 - i];   /* any order */
	ck_assert_msg(rk_resize_revert(given, n, &o, &res) == RK_OK, "revert: %s", rk_errmsg());
	ck_assert_uint_eq(res.moved, pos);
	ck_assert_uint_gt(res.checkpoints, 0);
	ck_assert(strstr(res.did, "reverted from volume byte"));
	verify_reverted(d, c, data, vol, jsize);
	/* The array reshapes again from there, to the end. */
	struct rk_resize_opts fo = { .layout = RK_RESIZE_LAYOUT_KEEP, .chunk = c->new_chunk };
	if (c->new_level != -99) {
		fo.set_level = 1;
		fo.level = c->new_level;
	}
	ck_assert_msg(rk_resize_reshape(d, c->nr, d + c->nr, c->nadd, &fo, &res) == RK_OK, "reshape after revert: %s",
	              rk_errmsg());
	verify(d, n, data, vol);
	close_all(d, n);
	free(data);

	/* Stopped two thirds of the way; the revert itself stopped half-way:
	 * the array reads as before, a forward reshape is refused, and
	 * continue finishes the revert, saying so. */
	data = start_partial(c, d, 3u << 20, 64 * 1024, 667, &vol, &pos);
	struct stop_at st = { .at = pos / 2 };
	o.progress = stop_cb;
	o.progress_ctx = &st;
	o.stop = &st.flag;
	ck_assert_int_eq(rk_resize_revert(d, n, &o, &res), RK_E_FAULT);
	struct rk_sb *s = read_sb(d[0]);
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
	array_read_check(d, n, data, vol);
	ck_assert_int_eq(rk_resize_reshape(d, n, NULL, 0, &fo, &res), RK_E_CONFLICT);
	ck_assert_msg(strstr(rk_errmsg(), "being reverted"), "message: %s", rk_errmsg());
	ck_assert_int_eq(rk_resize_reshape(d, c->nr, NULL, 0, &fo, &res), RK_E_CONFLICT);
	/* Written mid-revert across the checkpoint (and inside the old row
	 * holding it): the revert carries the new bytes back. */
	s = read_sb(d[0]);
	uint64_t cp = s->reshape_pos;
	free(s);
	array_write_mid(d, n, data, cp - cp / 4, cp / 2);
	array_write_mid(d, n, data, cp + 512, 4096);
	ck_assert_msg(rk_resize_continue(d, n, NULL, &res) == RK_OK, "continue: %s", rk_errmsg());
	ck_assert_msg(strstr(res.did, "revert"), "did: %s", res.did);
	verify_reverted(d, c, data, vol, jsize);
	ck_assert_int_eq(rk_resize_revert(d, c->nr, NULL, &res), RK_E_INVAL);
	close_all(d, n);
	free(data);

	/* Nothing moved yet (reshape_pos 0): superblocks only. */
	data = start_partial(c, d, 3u << 20, 64 * 1024, 0, &vol, &pos);
	ck_assert_uint_eq(pos, 0);
	ck_assert_msg(rk_resize_revert(d, n, NULL, &res) == RK_OK, "revert at 0: %s", rk_errmsg());
	ck_assert_uint_eq(res.moved, 0);
	verify_reverted(d, c, data, vol, jsize);
	close_all(d, n);
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
	rk_dev *d[MAXM];
	uint8_t *data = start_partial(c, d, devsz, 256 * 1024, 750, &vol, &pos);
	uint8_t *snap[MAXM];
	for (uint32_t r = 0; r < n; r++) {
		snap[r] = malloc(devsz);
		ck_assert_ptr_nonnull(snap[r]);
		memcpy(snap[r], rk_dev_mem_data(d[r]), devsz);
	}
	close_all(d, n);
	struct rk_resize_opts o = { .layout = RK_RESIZE_LAYOUT_KEEP, .batch_max = 256 * 1024 };
	uint64_t total = 0, points = 0, as_revert = 0;
	for (uint64_t k = 0;; k += KILL_STRIDE) {
		rk_dev *w[MAXM], *after[MAXM];
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
		for (uint32_t r = 0; r < n; r++) {
			rk_dev *lo = rk_fault_lower(plan, (int)r);
			ck_assert_ptr_nonnull(lo);
			ck_assert_int_eq(rk_dev_mem(&after[r], rk_dev_path(lo), devsz), RK_OK);
			memcpy(rk_dev_mem_data(after[r]), rk_dev_mem_data(lo), devsz);
		}
		close_all(w, n);
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
			array_read_check(after, n, data, vol);
			struct rk_sb *s = read_sb(after[0]);
			int reverting = (s->feat_incompat & RK_FEAT_INCOMPAT_RESHAPE) && (s->reshape_flags & RK_RESHAPE_REVERTING);
			free(s);
			e = rk_resize_continue(after, n, NULL, &res);
			if (e == RK_E_NOSB)   /* the added members were wiped: the revert is done */
				e = rk_resize_continue(after, c->nr, NULL, &res);
			ck_assert_msg(e == RK_OK, "continue after kill at write %llu: %s", (unsigned long long)k - 1, rk_errmsg());
			if (reverting)
				ck_assert_msg(strstr(res.did, "revert"), "did: %s", res.did);
			s = read_sb(after[0]);
			int forward = s->nroles == n;
			free(s);
			if (forward) {
				ck_assert(!reverting);
				verify(after, n, data, vol);
			} else {
				verify_reverted(after, c, data, vol, jsize);
				as_revert++;
			}
			points++;
		} else {
			verify_reverted(after, c, data, vol, jsize);
		}
		close_all(after, n);
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

int main(void)
{
	const struct rk_test_entry tests_resize[] = {
		RK_TEST_LOOP(t_grow_size, 0, 6), RK_TEST(t_shrink), RK_TEST(t_fs_probe_kinds),
		RK_TEST_LOOP(t_reshape, 0, (int)(sizeof rs_cases / sizeof rs_cases[0])),
		RK_TEST(t_refusals), RK_TEST_LOOP(t_kill_every_write, 0, 4),
		RK_TEST_LOOP(t_power_cut, 0, 2), RK_TEST(t_r10_refusals),
		RK_TEST_LOOP(t_revert, 0, (int)(sizeof rv_cases / sizeof rv_cases[0])),
		RK_TEST_LOOP(t_revert_kill_every_write, 0, 2), RK_TEST_END,
	};
	const struct rk_test_case cases[] = {
		{ "resize", 600, NULL, NULL, 0, tests_resize },
		RK_TEST_CASES_END,
	};
	return rk_test_main("resize", cases);
}
