/* test_scrub.c: rk_scrub_run over memory members written by the stripe
 * engine: clean arrays of every level report nothing; a corrupted block is
 * reported in the right stripe and byte range and, where the math allows,
 * with the right role (RAID-6 data, P and Q; mirror minority); repair then
 * re-scrub is clean and the volume reads back as written; RAID-5 repair
 * only makes parity consistent and says so; a degraded RAID-6 still finds
 * mismatches; ranges, column slicing, stop/resume and the checkpoint file. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "rk_dev.h"
#include "rk_geom.h"
#include "rk_parity.h"
#include "rk_scrub.h"
#include "rk_scrub_checkpoint.h"
#include "rk_vol.h"

#define REQ(c) do { if (!(c)) ck_abort_msg("%s:%d: %s", __FILE__, __LINE__, #c); } while (0)
#define DOFF 8192u
#define MAXR 8

static uint64_t rng_state = 88172645463325252ull;
static uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

struct arr {
	struct rk_geom g;
	rk_dev *devs[MAXR];
	uint64_t doff[MAXR];
	uint8_t *vol;            /* what was written */
};

static void arr_make(struct arr *a, int level, uint32_t layout, uint64_t chunk, uint32_t n, uint64_t msize)
{
	memset(a, 0, sizeof *a);
	REQ(rk_geom_init(&a->g, level, layout, chunk, n, msize) == RK_OK);
	for (uint32_t r = 0; r < n; r++) {
		char name[16];
		snprintf(name, sizeof name, "m%u", r);
		REQ(rk_dev_mem(&a->devs[r], name, DOFF + a->g.member_size) == RK_OK);
		a->doff[r] = DOFF;
	}
	a->vol = malloc(a->g.volume_size);
	REQ(a->vol);
	for (uint64_t i = 0; i < a->g.volume_size; i += 8) {
		uint64_t v = rnd();
		memcpy(a->vol + i, &v, a->g.volume_size - i < 8 ? a->g.volume_size - i : 8);
	}
	rk_vol *v;
	REQ(rk_vol_open(&v, &a->g, a->devs, a->doff) == RK_OK);
	REQ(rk_vol_write(v, a->vol, a->g.volume_size, 0) == RK_OK);
	REQ(rk_vol_flush(v) == RK_OK);
	rk_vol_close(v);
}

static void arr_free(struct arr *a)
{
	for (uint32_t r = 0; r < a->g.nroles; r++)
		rk_dev_close(a->devs[r]);
	free(a->vol);
}

/* Flips LEN bytes of ROLE's data area at member offset MOFF. */
static void flip(struct arr *a, uint32_t role, uint64_t moff, uint64_t len)
{
	uint8_t *p = rk_dev_mem_data(a->devs[role]) + a->doff[role] + moff;
	for (uint64_t i = 0; i < len; i++)
		p[i] ^= (uint8_t)(1 + (rnd() % 255));
}

/* Flips LEN bytes of the data copy of volume byte VOFF; returns its role. */
static uint32_t flip_vol(struct arr *a, uint64_t voff, uint64_t len)
{
	struct rk_loc l;
	uint64_t run;
	REQ(rk_geom_map(&a->g, voff, &l, &run) == RK_OK);
	REQ(run >= len);
	flip(a, l.role, l.member_off, len);
	return l.role;
}

#define MAXREG 64
struct got {
	uint32_t n;
	struct rk_scrub_region r[MAXREG];
	uint32_t fault[MAXREG][MAXR];
	uint32_t nlocs[MAXREG];
	char why[MAXREG][256];
};

static void on_region(void *ctx, const struct rk_scrub_region *r)
{
	struct got *g = ctx;
	if (g->n >= MAXREG)
		return;
	g->r[g->n] = *r;
	for (uint32_t i = 0; i < r->nfault && i < MAXR; i++)
		g->fault[g->n][i] = r->fault[i];
	g->nlocs[g->n] = r->nlocs;
	snprintf(g->why[g->n], sizeof g->why[0], "%s", r->why);
	g->n++;
}

static rk_err scrub(struct arr *a, int repair, uint64_t first, uint64_t last, struct got *got,
                    struct rk_scrub_stats *st, uint64_t batch)
{
	memset(got, 0, sizeof *got);
	struct rk_scrub_opts o = { .repair = repair, .on_region = on_region, .ctx = got, .batch = batch };
	return rk_scrub_run(&a->g, a->devs, a->doff, first, last, &o, st);
}

static void vol_equal(struct arr *a, int expect_equal)
{
	uint8_t *buf = malloc(a->g.volume_size);
	REQ(buf);
	rk_vol *v;
	REQ(rk_vol_open(&v, &a->g, a->devs, a->doff) == RK_OK);
	REQ(rk_vol_read(v, buf, a->g.volume_size, 0) == RK_OK);
	rk_vol_close(v);
	int eq = !memcmp(buf, a->vol, a->g.volume_size);
	free(buf);
	REQ(eq == expect_equal);
}

struct lv { int level; uint32_t layout; uint32_t n; uint64_t chunk; };
static const struct lv levels[] = {
	{ 1, 0, 2, 0 },
	{ 1, 0, 3, 0 },
	{ 4, 0, 4, 65536 },
	{ 5, RK_ALG_LEFT_SYMMETRIC, 4, 65536 },
	{ 5, RK_ALG_RIGHT_ASYMMETRIC, 5, 16384 },
	{ 6, RK_ALG_LEFT_SYMMETRIC, 6, 65536 },
	{ 6, RK_ALG_ROTATING_N_CONTINUE, 5, 32768 },
	{ 6, RK_ALG_LEFT_SYMMETRIC_6, 5, 32768 },
	{ 10, RK_R10_LAYOUT(2, 1, 0), 4, 65536 },
	{ 10, RK_R10_LAYOUT(1, 2, 0), 3, 65536 },
	{ 10, RK_R10_LAYOUT(1, 2, 1), 4, 65536 },
	{ 10, RK_R10_LAYOUT(3, 1, 0), 4, 65536 },
};
#define NLEVELS (sizeof levels / sizeof levels[0])
#define MSIZE (2u << 20)

/* Whether the fault can be located on this geometry. */
static int locatable(const struct rk_geom *g)
{
	return g->level == 6 || ((g->level == 1 || g->level == 10) && g->copies >= 3);
}

START_TEST(test_clean)
{
	const struct lv *L = &levels[_i];
	struct arr a;
	arr_make(&a, L->level, L->layout, L->chunk, L->n, MSIZE);
	struct got got;
	struct rk_scrub_stats st;
	REQ(scrub(&a, 0, 0, a.g.nstripes, &got, &st, 0) == RK_OK);
	REQ(got.n == 0 && st.mismatches == 0);
	REQ(st.stripes == a.g.nstripes && st.unchecked == 0);
	REQ(st.next == a.g.nstripes && !st.stopped);
	/* every member byte of the data areas was read at least once */
	REQ(st.bytes_read >= a.g.volume_size);
	arr_free(&a);
}
END_TEST

START_TEST(test_flip_each_level)
{
	const struct lv *L = &levels[_i];
	struct arr a;
	arr_make(&a, L->level, L->layout, L->chunk, L->n, MSIZE);
	uint64_t unit = a.g.chunk ? a.g.chunk : RK_GEOM_UNIT_DEFAULT;
	/* a sector-aligned 4 KiB block inside one chunk, somewhere in the middle */
	uint64_t x = (a.g.volume_size / 3) / unit * unit + unit / 2;
	x -= x % 4096;
	uint32_t role = flip_vol(&a, x, 4096);
	uint8_t *snap[MAXR];
	for (uint32_t r = 0; r < a.g.nroles; r++) {
		snap[r] = malloc(rk_dev_size(a.devs[r]));
		memcpy(snap[r], rk_dev_mem_data(a.devs[r]), rk_dev_size(a.devs[r]));
	}
	struct got got;
	struct rk_scrub_stats st;
	REQ(scrub(&a, 0, 0, a.g.nstripes, &got, &st, 0) == RK_OK);
	REQ(got.n == 1 && st.mismatches == 1);
	const struct rk_scrub_region *r = &got.r[0];
	REQ(r->stripe == x / a.g.stripe_data);
	REQ(r->offset <= x && r->offset + r->length >= x + 4096);
	REQ(r->member_len == 4096);
	REQ(r->fix == RK_SCRUB_FIX_NONE);
	if (locatable(&a.g)) {
		REQ(r->verdict == RK_SCRUB_LOCATED);
		REQ(r->nfault == 1 && got.fault[0][0] == role);
		/* located data: the exact block */
		REQ(r->offset == x && r->length == 4096);
	} else {
		REQ(r->verdict == RK_SCRUB_UNLOCATED && r->nfault == 0);
	}
	/* plain scrub wrote nothing */
	for (uint32_t k = 0; k < a.g.nroles; k++) {
		REQ(!memcmp(snap[k], rk_dev_mem_data(a.devs[k]), rk_dev_size(a.devs[k])));
		free(snap[k]);
	}
	/* repair, then a second scrub is clean */
	REQ(scrub(&a, 1, 0, a.g.nstripes, &got, &st, 0) == RK_OK);
	REQ(got.n == 1 && st.repaired == 1);
	REQ(got.r[0].fix == (locatable(&a.g) ? RK_SCRUB_FIX_PROVEN : RK_SCRUB_FIX_CONSISTENT));
	REQ(st.consistent == (locatable(&a.g) ? 0u : 1u));
	REQ(scrub(&a, 0, 0, a.g.nstripes, &got, &st, 0) == RK_OK);
	REQ(got.n == 0);
	if (locatable(&a.g))
		vol_equal(&a, 1);
	arr_free(&a);
}
END_TEST

START_TEST(test_raid6_roles)
{
	struct arr a;
	arr_make(&a, 6, RK_ALG_LEFT_SYMMETRIC, 65536, 6, MSIZE);
	uint32_t vr[MAXR];
	struct rk_stripe_map m = { .vol_role = vr };
	/* stripe 3: P; stripe 7: Q; stripe 11: data block 2 */
	REQ(rk_geom_stripe_map(&a.g, 3, &m) == RK_OK);
	uint32_t p3 = m.p_role;
	flip(&a, p3, m.member_off + 1024, 1024);
	REQ(rk_geom_stripe_map(&a.g, 7, &m) == RK_OK);
	uint32_t q7 = m.q_role;
	flip(&a, q7, m.member_off, 512);
	REQ(rk_geom_stripe_map(&a.g, 11, &m) == RK_OK);
	uint32_t d11 = m.vol_role[2];
	flip(&a, d11, m.member_off + 8192, 3000);   /* not sector aligned */
	struct got got;
	struct rk_scrub_stats st;
	REQ(scrub(&a, 0, 0, a.g.nstripes, &got, &st, 0) == RK_OK);
	REQ(got.n == 3 && st.located == 3);
	REQ(got.r[0].stripe == 3 && got.fault[0][0] == p3 && got.r[0].member_len == 1024);
	REQ(got.r[0].offset == 3 * a.g.stripe_data + 1024);
	REQ(got.r[1].stripe == 7 && got.fault[1][0] == q7 && got.r[1].member_len == 512);
	REQ(got.r[2].stripe == 11 && got.fault[2][0] == d11);
	REQ(got.r[2].offset == 11 * a.g.stripe_data + 2 * 65536 + 8192 && got.r[2].member_len == 3072);
	REQ(strstr(got.why[0], "P") && strstr(got.why[1], "Q"));
	REQ(scrub(&a, 1, 0, a.g.nstripes, &got, &st, 0) == RK_OK);
	REQ(st.repaired == 3 && st.consistent == 0);
	REQ(scrub(&a, 0, 0, a.g.nstripes, &got, &st, 0) == RK_OK);
	REQ(got.n == 0);
	vol_equal(&a, 1);
	arr_free(&a);
}
END_TEST

START_TEST(test_raid6_two_bad)
{
	/* two data blocks bad over the same bytes: found, not located */
	struct arr a;
	arr_make(&a, 6, RK_ALG_LEFT_SYMMETRIC, 65536, 6, MSIZE);
	uint32_t vr[MAXR];
	struct rk_stripe_map m = { .vol_role = vr };
	REQ(rk_geom_stripe_map(&a.g, 5, &m) == RK_OK);
	flip(&a, m.vol_role[0], m.member_off, 4096);
	flip(&a, m.vol_role[3], m.member_off, 4096);
	struct got got;
	struct rk_scrub_stats st;
	REQ(scrub(&a, 0, 0, a.g.nstripes, &got, &st, 0) == RK_OK);
	REQ(got.n == 1 && got.r[0].verdict == RK_SCRUB_UNLOCATED && got.r[0].nfault == 0);
	REQ(got.r[0].stripe == 5);
	/* repair makes it consistent only */
	REQ(scrub(&a, 1, 0, a.g.nstripes, &got, &st, 0) == RK_OK);
	REQ(got.r[0].fix == RK_SCRUB_FIX_CONSISTENT && st.consistent == 1);
	REQ(scrub(&a, 0, 0, a.g.nstripes, &got, &st, 0) == RK_OK);
	REQ(got.n == 0);
	vol_equal(&a, 0);
	arr_free(&a);
}
END_TEST

START_TEST(test_raid5_repair_unlocated)
{
	struct arr a;
	arr_make(&a, 5, RK_ALG_LEFT_SYMMETRIC, 65536, 4, MSIZE);
	uint64_t x = 5 * a.g.stripe_data + 65536 + 4096;
	flip_vol(&a, x, 4096);
	struct got got;
	struct rk_scrub_stats st;
	REQ(scrub(&a, 1, 0, a.g.nstripes, &got, &st, 0) == RK_OK);
	REQ(got.n == 1 && got.r[0].verdict == RK_SCRUB_UNLOCATED && got.r[0].fix == RK_SCRUB_FIX_CONSISTENT);
	REQ(got.r[0].offset <= x && got.r[0].offset + got.r[0].length >= x + 4096);
	REQ(st.consistent == 1);
	REQ(scrub(&a, 0, 0, a.g.nstripes, &got, &st, 0) == RK_OK);
	REQ(got.n == 0);
	vol_equal(&a, 0);   /* the bad data stays: parity now agrees with it */
	arr_free(&a);
}
END_TEST

START_TEST(test_raid6_degraded)
{
	struct arr a;
	arr_make(&a, 6, RK_ALG_LEFT_SYMMETRIC, 65536, 6, MSIZE);
	uint32_t vr[MAXR];
	struct rk_stripe_map m = { .vol_role = vr };
	REQ(rk_geom_stripe_map(&a.g, 9, &m) == RK_OK);
	/* lose one data role of stripe 9, corrupt another data block */
	uint32_t gone = m.vol_role[1], bad = m.vol_role[2];
	flip(&a, bad, m.member_off + 512, 512);
	rk_dev *keep = a.devs[gone];
	a.devs[gone] = NULL;
	struct got got;
	struct rk_scrub_stats st;
	REQ(scrub(&a, 0, 0, a.g.nstripes, &got, &st, 0) == RK_OK);
	REQ(got.n == 1 && got.r[0].stripe == 9 && got.r[0].verdict == RK_SCRUB_UNLOCATED);
	REQ(strstr(got.why[0], "missing"));
	REQ(got.nlocs[0] == 5);
	REQ(st.stripes == a.g.nstripes);
	/* also with P or Q as the missing role of that stripe */
	a.devs[gone] = keep;
	keep = a.devs[m.q_role];
	a.devs[m.q_role] = NULL;
	REQ(scrub(&a, 0, 9, 10, &got, &st, 0) == RK_OK);
	REQ(got.n == 1 && got.r[0].verdict == RK_SCRUB_UNLOCATED);
	a.devs[m.q_role] = keep;
	/* two missing: nothing left to check */
	rk_dev *k1 = a.devs[0], *k2 = a.devs[1];
	a.devs[0] = a.devs[1] = NULL;
	REQ(scrub(&a, 0, 0, a.g.nstripes, &got, &st, 0) == RK_E_TOOFEW);
	a.devs[0] = k1;
	a.devs[1] = k2;
	arr_free(&a);
}
END_TEST

START_TEST(test_mirror_majority)
{
	struct arr a;
	arr_make(&a, 1, 0, 0, 4, MSIZE);
	/* copy 2 bad in one place, copies 1 and 3 bad in another: 4 copies */
	flip(&a, 2, 100 * 512, 2048);
	flip(&a, 1, 1000 * 512, 512);
	flip(&a, 3, 1000 * 512, 512);
	struct got got;
	struct rk_scrub_stats st;
	REQ(scrub(&a, 0, 0, a.g.nstripes, &got, &st, 0) == RK_OK);
	REQ(got.n == 2);
	REQ(got.r[0].verdict == RK_SCRUB_LOCATED && got.r[0].nfault == 1 && got.fault[0][0] == 2);
	REQ(got.r[0].offset == 100 * 512 && got.r[0].length == 2048);
	/* 2 against 2: no majority */
	REQ(got.r[1].verdict == RK_SCRUB_UNLOCATED);
	/* one copy gone of three agreeing ones: still a majority of 2 of 3 */
	rk_dev *k = a.devs[1];
	a.devs[1] = NULL;
	REQ(scrub(&a, 0, 0, a.g.nstripes, &got, &st, 0) == RK_OK);
	REQ(got.n == 2 && got.r[0].verdict == RK_SCRUB_LOCATED && got.fault[0][0] == 2);
	REQ(got.r[1].verdict == RK_SCRUB_LOCATED && got.fault[1][0] == 3);
	a.devs[1] = k;
	arr_free(&a);
}
END_TEST

START_TEST(test_range_and_slices)
{
	struct arr a;
	arr_make(&a, 6, RK_ALG_LEFT_SYMMETRIC, 65536, 5, MSIZE);
	uint64_t x = 6 * a.g.stripe_data + 20000 / 512 * 512;
	uint32_t role = flip_vol(&a, x, 16384);
	struct got got;
	struct rk_scrub_stats st;
	REQ(scrub(&a, 0, 0, 6, &got, &st, 0) == RK_OK);
	REQ(got.n == 0 && st.stripes == 6 && st.next == 6);
	REQ(scrub(&a, 0, 7, a.g.nstripes, &got, &st, 0) == RK_OK);
	REQ(got.n == 0);
	REQ(scrub(&a, 0, 6, 7, &got, &st, 0) == RK_OK);
	REQ(got.n == 1 && got.fault[0][0] == role);
	/* tiny batches: columns sliced below the chunk, the region still one */
	REQ(scrub(&a, 0, 0, a.g.nstripes, &got, &st, 4096) == RK_OK);
	REQ(got.n == 1 && got.r[0].offset == x && got.r[0].length == 16384 && got.fault[0][0] == role);
	REQ(st.stripes == a.g.nstripes);
	uint64_t f, l;
	REQ(rk_scrub_range(&a.g, x, 1, &f, &l) == RK_OK && f == 6 && l == 7);
	REQ(rk_scrub_range(&a.g, 0, 0, &f, &l) == RK_OK && f == 0 && l == a.g.nstripes);
	REQ(rk_scrub_range(&a.g, a.g.volume_size, 1, &f, &l) == RK_E_RANGE);
	REQ(rk_scrub_range(&a.g, 1, UINT64_MAX, &f, &l) == RK_E_RANGE);
	REQ(scrub(&a, 0, 0, a.g.nstripes + 1, &got, &st, 0) == RK_E_RANGE);
	arr_free(&a);
}
END_TEST

struct stopper { uint64_t calls, stop_at; };
static int stop_cb(void *ctx, uint64_t next, uint64_t done)
{
	struct stopper *s = ctx;
	(void)next;
	(void)done;
	return ++s->calls >= s->stop_at;
}

START_TEST(test_stop_resume)
{
	struct arr a;
	arr_make(&a, 5, RK_ALG_LEFT_SYMMETRIC, 65536, 4, MSIZE);
	uint64_t x = (a.g.nstripes - 2) * a.g.stripe_data;
	flip_vol(&a, x, 512);
	struct stopper sp = { 0, 1 };
	struct rk_scrub_opts o = { .on_progress = stop_cb, .ctx = &sp, .batch = 4 * 65536 };
	struct rk_scrub_stats st;
	REQ(rk_scrub_run(&a.g, a.devs, a.doff, 0, a.g.nstripes, &o, &st) == RK_OK);
	REQ(st.stopped && st.next == 4 && st.mismatches == 0);
	struct rk_scrub_ckpt c = { .first = 0, .last = a.g.nstripes, .next = st.next, .repair = 0, .unreadable = 3,
	                           .unrecoverable = 1 }, c2;
	memset(c.uuid, 0xab, 16);
	char path[] = "/tmp/test_scrub_ckpt.XXXXXX";
	int fd = mkstemp(path);
	REQ(fd >= 0);
	close(fd);
	REQ(rk_scrub_ckpt_save(path, &c) == RK_OK);
	REQ(rk_scrub_ckpt_load(path, &c2) == RK_OK);
	REQ(c2.next == 4 && c2.last == a.g.nstripes && c2.uuid[15] == 0xab && !c2.repair);
	REQ(c2.unreadable == 3 && c2.unrecoverable == 1);
	struct got got;
	REQ(scrub(&a, 0, c2.next, c2.last, &got, &st, 0) == RK_OK);
	REQ(got.n == 1 && got.r[0].stripe == a.g.nstripes - 2);
	/* a file of an older version (no unreadable counts) loads with zeros */
	FILE *f = fopen(path, "w");
	REQ(f);
	fputs("raid-scrub checkpoint 1\nuuid abababababababababababababababab\nfirst 0\nlast 9\nnext 4\n"
	      "mismatches 2\nrepaired 0\nrepair 0\n", f);
	fclose(f);
	REQ(rk_scrub_ckpt_load(path, &c2) == RK_OK && c2.mismatches == 2 && c2.unreadable == 0 && c2.unrecoverable == 0);
	/* a damaged checkpoint is refused */
	f = fopen(path, "w");
	REQ(f);
	fputs("raid-scrub checkpoint 1\nnext 5\n", f);
	fclose(f);
	REQ(rk_scrub_ckpt_load(path, &c2) == RK_E_CORRUPT);
	unlink(path);
	REQ(rk_scrub_ckpt_load(path, &c2) == RK_E_OPEN);
	arr_free(&a);
}
END_TEST

START_TEST(test_no_redundancy)
{
	struct arr a;
	arr_make(&a, 0, 0, 65536, 3, MSIZE);
	struct got got;
	struct rk_scrub_stats st;
	REQ(scrub(&a, 0, 0, a.g.nstripes, &got, &st, 0) == RK_E_NOTSUP);
	arr_free(&a);
	arr_make(&a, 5, RK_ALG_LEFT_SYMMETRIC, 65536, 3, MSIZE);
	rk_dev *k = a.devs[2];
	a.devs[2] = NULL;
	REQ(scrub(&a, 0, 0, a.g.nstripes, &got, &st, 0) == RK_E_TOOFEW);
	a.devs[2] = k;
	arr_free(&a);
}
END_TEST

/* Members as temporary files: cached ranges are checked through the
 * read-only mapping, a repair's pwrite is seen by the next check, and the
 * copying path (no_map) agrees. */
START_TEST(test_files_mapped)
{
	struct rk_geom g;
	REQ(rk_geom_init(&g, 6, RK_ALG_LEFT_SYMMETRIC, 65536, 5, MSIZE) == RK_OK);
	char dir[] = "/tmp/test_scrub.XXXXXX";
	REQ(mkdtemp(dir));
	rk_dev *devs[MAXR];
	uint64_t doff[MAXR];
	char path[MAXR][64];
	for (uint32_t r = 0; r < 5; r++) {
		snprintf(path[r], sizeof path[r], "%s/m%u", dir, r);
		REQ(rk_dev_create(&devs[r], path[r], DOFF + g.member_size) == RK_OK);
		doff[r] = DOFF;
	}
	uint8_t *vol = malloc(g.volume_size), *back = malloc(g.volume_size);
	REQ(vol && back);
	for (uint64_t i = 0; i < g.volume_size; i++)
		vol[i] = (uint8_t)rnd();
	rk_vol *v;
	REQ(rk_vol_open(&v, &g, devs, doff) == RK_OK);
	REQ(rk_vol_write(v, vol, g.volume_size, 0) == RK_OK);
	rk_vol_close(v);
	struct rk_loc l;
	uint64_t x = 9 * g.stripe_data + 3 * 65536 + 4096;
	REQ(rk_geom_map(&g, x, &l, NULL) == RK_OK);
	uint8_t blk[2048];
	REQ(rk_dev_pread(devs[l.role], blk, sizeof blk, DOFF + l.member_off) == RK_OK);
	for (size_t i = 0; i < sizeof blk; i++)
		blk[i] ^= 0x3c;
	REQ(rk_dev_pwrite(devs[l.role], blk, sizeof blk, DOFF + l.member_off) == RK_OK);
	for (int no_map = 0; no_map < 2; no_map++) {
		struct got got;
		struct rk_scrub_stats st;
		struct rk_scrub_opts o = { .on_region = on_region, .ctx = &got, .no_map = no_map };
		memset(&got, 0, sizeof got);
		REQ(rk_scrub_run(&g, devs, doff, 0, g.nstripes, &o, &st) == RK_OK);
		REQ(got.n == 1 && got.r[0].offset == x && got.r[0].length == sizeof blk && got.fault[0][0] == l.role);
	}
	struct got got;
	struct rk_scrub_stats st;
	struct rk_scrub_opts o = { .repair = 1, .on_region = on_region, .ctx = &got };
	memset(&got, 0, sizeof got);
	REQ(rk_scrub_run(&g, devs, doff, 0, g.nstripes, &o, &st) == RK_OK && st.repaired == 1);
	o.repair = 0;
	memset(&got, 0, sizeof got);
	REQ(rk_scrub_run(&g, devs, doff, 0, g.nstripes, &o, &st) == RK_OK && got.n == 0);
	REQ(rk_vol_open(&v, &g, devs, doff) == RK_OK);
	REQ(rk_vol_read(v, back, g.volume_size, 0) == RK_OK);
	rk_vol_close(v);
	REQ(!memcmp(vol, back, g.volume_size));
	for (uint32_t r = 0; r < 5; r++) {
		rk_dev_close(devs[r]);
		unlink(path[r]);
	}
	rmdir(dir);
	free(vol);
	free(back);
}
END_TEST

/* The read-only check kernels of every variant this CPU runs agree with
 * gen / xor_gen and a compare: clean stripes pass, one changed byte in any
 * block (data, P, Q), at any length and alignment, is seen. */
START_TEST(test_check_kernels)
{
	const struct rk_parity_algo *const *al = rk_parity_algos();
	static const size_t lens[] = { 1, 7, 63, 64, 65, 127, 128, 129, 191, 255, 256, 257, 1000, 4096, 65536 + 67 };
	for (size_t v = 0; al[v]; v++) {
		const struct rk_parity_algo *a = al[v];
		if (!a->valid())
			continue;
		REQ(a->check && a->xor_check);
		for (int disks = 3; disks <= 20; disks += disks < 8 ? 1 : 6)
			for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
				size_t n = lens[li], mis = (size_t)(disks * 7 + li) % 64;   /* unaligned starts */
				uint8_t *mem[24];
				void *p[24];
				for (int i = 0; i < disks; i++) {
					REQ(mem[i] = malloc(n + 64));
					p[i] = mem[i] + mis;
					for (size_t k = 0; k < n; k++)
						((uint8_t *)p[i])[k] = (uint8_t)rnd();
				}
				rk_parity_ref.gen(disks, n, p);
				REQ(a->check(disks, n, p) == 0);
				size_t at = (size_t)(rnd() % n);
				int blk = (int)(rnd() % (uint64_t)disks);
				uint8_t *b = (uint8_t *)p[blk] + at, old = *b;
				*b ^= (uint8_t)(1 + rnd() % 255);
				REQ(a->check(disks, n, p) != 0);
				*b = old;
				/* P as the XOR of the first disks-1 blocks */
				rk_parity_ref.xor_gen(disks, n, p);
				REQ(a->xor_check(disks, n, p) == 0);
				b = (uint8_t *)p[blk] + at;
				*b ^= (uint8_t)(1 + rnd() % 255);
				REQ(a->xor_check(disks, n, p) != 0);
				for (int i = 0; i < disks; i++)
					free(mem[i]);
			}
	}
}
END_TEST

/* The checker threads only sort clean stripes from the others: any number
 * of them (and any batch size) gives the same regions in the same order as
 * the caller's thread alone, on full and degraded parity arrays and on
 * mirrors, with bad blocks in many stripes. */
START_TEST(test_checkers_agree)
{
	static const struct lv geo[] = {
		{ 6, RK_ALG_LEFT_SYMMETRIC, 6, 16384 },
		{ 5, RK_ALG_LEFT_SYMMETRIC, 4, 16384 },
		{ 1, 0, 3, 0 },
		{ 10, RK_R10_LAYOUT(3, 1, 0), 4, 16384 },
	};
	for (size_t gi = 0; gi < sizeof geo / sizeof geo[0]; gi++)
		for (int degraded = 0; degraded < 2; degraded++) {
			const struct lv *L = &geo[gi];
			if (degraded && L->level != 6)
				continue;
			struct arr a;
			arr_make(&a, L->level, L->layout, L->chunk, L->n, MSIZE);
			for (int k = 0; k < 24; k++) {
				uint64_t x = rnd() % (a.g.volume_size - 4096);
				x -= x % 512;
				struct rk_loc l;
				uint64_t run;
				REQ(rk_geom_map(&a.g, x, &l, &run) == RK_OK);
				flip(&a, l.role, l.member_off, run < 1024 ? run / 512 * 512 : 1024);
			}
			rk_dev *gone = NULL;
			if (degraded) {
				gone = a.devs[1];
				a.devs[1] = NULL;
			}
			static struct got ref, got;
			struct rk_scrub_stats st0, st;
			struct rk_scrub_opts o = { .on_region = on_region, .ctx = &ref, .checkers = 1 };
			memset(&ref, 0, sizeof ref);
			REQ(rk_scrub_run(&a.g, a.devs, a.doff, 0, a.g.nstripes, &o, &st0) == RK_OK);
			REQ(ref.n >= 10 && st0.mismatches == ref.n);
			static const uint32_t nc[] = { 2, 3, 8 };
			static const uint64_t batch[] = { 0, 16384, 3 * 16384 };
			for (size_t i = 0; i < 3; i++) {
				o = (struct rk_scrub_opts){ .on_region = on_region, .ctx = &got, .checkers = nc[i], .batch = batch[i] };
				memset(&got, 0, sizeof got);
				REQ(rk_scrub_run(&a.g, a.devs, a.doff, 0, a.g.nstripes, &o, &st) == RK_OK);
				REQ(got.n == ref.n && st.stripes == st0.stripes && st.unchecked == st0.unchecked);
				for (uint32_t j = 0; j < got.n; j++) {
					REQ(got.r[j].stripe == ref.r[j].stripe && got.r[j].offset == ref.r[j].offset);
					REQ(got.r[j].length == ref.r[j].length && got.r[j].verdict == ref.r[j].verdict);
					REQ(got.r[j].nfault == ref.r[j].nfault);
					REQ(!memcmp(got.fault[j], ref.fault[j], sizeof got.fault[j]));
				}
			}
			if (degraded)
				a.devs[1] = gone;
			arr_free(&a);
		}
}
END_TEST

/* ---- unreadable blocks (the read-error fault model) ---- */

#define MAXU 16
struct both {
	struct got g;                /* first: on_region takes the context as a struct got */
	uint32_t nu;
	struct rk_scrub_unreadable u[MAXU];
	uint64_t total, whole;       /* every report, also past MAXU; of which a whole 64 KiB block */
};

static void on_unr(void *ctx, const struct rk_scrub_unreadable *u)
{
	struct both *b = ctx;
	b->total++;
	b->whole += u->member_len == 65536;
	if (b->nu >= MAXU)
		return;
	b->u[b->nu] = *u;
	b->u[b->nu].why = NULL;
	b->nu++;
}

/* REPAIR 2: repair with rewrite_unconfirmed. */
static rk_err scrub_u(struct arr *a, int repair, struct both *b, struct rk_scrub_stats *st, uint64_t batch)
{
	memset(b, 0, sizeof *b);
	struct rk_scrub_opts o = { .repair = repair != 0, .rewrite_unconfirmed = repair == 2, .on_region = on_region,
	                           .on_unreadable = on_unr, .ctx = b, .batch = batch };
	return rk_scrub_run(&a->g, a->devs, a->doff, 0, a->g.nstripes, &o, st);
}

/* Member ROLE of A behind a plan whose reads of member bytes [OFF, OFF+LEN)
 * fail with RK_E_IO (a write heals them). */
static rk_fault_plan *bad_range(struct arr *a, uint32_t role, uint64_t off, uint64_t len)
{
	struct rk_fault_spec sp = { .model = RK_FAULT_READ_ERROR, .member = (int)role, .off = off, .len = len };
	rk_fault_plan *p;
	REQ(rk_fault_plan_create(&p, &sp) == RK_OK);
	rk_dev *w;
	REQ(rk_dev_fault(&w, a->devs[role], p, (int)role) == RK_OK);
	a->devs[role] = w;
	return p;
}

/* Garbles member bytes under a plan: what an unreadable sector would give
 * back if it could be read at all. */
static void garble(rk_fault_plan *p, uint32_t role, uint64_t off, uint64_t len)
{
	uint8_t *d = rk_dev_mem_data(rk_fault_lower(p, (int)role));
	REQ(d);
	for (uint64_t i = 0; i < len; i++)
		d[off + i] ^= (uint8_t)(1 + rnd() % 255);
}

/* RAID-6: a read error inside a data block (not sector-piece aligned) is
 * reported to the sector with its role, member and volume bytes, the rest
 * of the array is checked, nothing is written; Q confirms what P rebuilds,
 * so --repair rebuilds the bytes (garbled underneath), writes and reads
 * them back, and the volume reads as written.  Column-sliced batches
 * report the same bytes. */
START_TEST(test_unreadable_raid6)
{
	struct arr a;
	arr_make(&a, 6, RK_ALG_LEFT_SYMMETRIC, 65536, 6, MSIZE);
	uint32_t vr[MAXR];
	struct rk_stripe_map m = { .vol_role = vr };
	REQ(rk_geom_stripe_map(&a.g, 5, &m) == RK_OK);
	uint32_t role = vr[2];
	uint64_t col = 8192 + 512, len = 4096 + 512, moff = DOFF + m.member_off + col;
	rk_fault_plan *p = bad_range(&a, role, moff, len);
	static struct both b;
	struct rk_scrub_stats st;
	REQ(scrub_u(&a, 0, &b, &st, 0) == RK_OK);
	REQ(b.g.n == 0 && st.mismatches == 0 && st.stripes == a.g.nstripes);
	REQ(b.nu == 1 && st.unreadable == 1 && st.unrecoverable == 0 && st.rewritten == 0);
	const struct rk_scrub_unreadable *u = &b.u[0];
	REQ(u->stripe == 5 && u->role == role && u->member_off == moff && u->member_len == len);
	REQ(u->is_data && u->offset == 5 * a.g.stripe_data + 2 * 65536 + col && u->length == len);
	REQ(u->recoverable && u->confirmed && u->fix == RK_SCRUB_UFIX_NONE);
	REQ(rk_fault_writes(p) == 0);
	/* small batches slice the chunk: the same bytes, in pieces that join up */
	REQ(scrub_u(&a, 0, &b, &st, 4096) == RK_OK);
	REQ(b.nu >= 1 && b.g.n == 0);
	uint64_t at = moff;
	for (uint32_t i = 0; i < b.nu; i++) {
		REQ(b.u[i].role == role && b.u[i].member_off == at && b.u[i].recoverable);
		at += b.u[i].member_len;
	}
	REQ(at == moff + len);
	/* repair: the bytes under the bad sectors are garbage; they come back */
	garble(p, role, moff, len);
	REQ(scrub_u(&a, 1, &b, &st, 0) == RK_OK);
	REQ(b.nu == 1 && b.u[0].fix == RK_SCRUB_UFIX_REWRITTEN && st.rewritten == 1 && st.rewrite_failed == 0);
	REQ(rk_fault_writes(p) >= 1);
	REQ(scrub_u(&a, 0, &b, &st, 0) == RK_OK);
	REQ(b.nu == 0 && b.g.n == 0);
	vol_equal(&a, 1);
	rk_fault_plan_free(p);
	arr_free(&a);
}
END_TEST

/* Redundancy left decides, sector by sector: RAID-6 with a member absent
 * can rebuild an unreadable block (two lost of two) but nothing confirms
 * it: rewritten only with rewrite_unconfirmed; two unreadable blocks in
 * one stripe with a member absent cannot be rebuilt (reported, nothing
 * written); RAID-5 rebuilds one unreadable block per stripe, not two. */
START_TEST(test_unreadable_degraded)
{
	struct arr a;
	arr_make(&a, 6, RK_ALG_LEFT_SYMMETRIC, 65536, 6, MSIZE);
	uint32_t vr[MAXR];
	struct rk_stripe_map m = { .vol_role = vr };
	REQ(rk_geom_stripe_map(&a.g, 7, &m) == RK_OK);
	uint32_t bad = vr[0], bad2 = m.q_role, gone = vr[3];
	uint64_t moff = DOFF + m.member_off + 4096;
	rk_fault_plan *p = bad_range(&a, bad, moff, 8192);
	garble(p, bad, moff, 8192);
	rk_dev *keep = a.devs[gone];
	a.devs[gone] = NULL;
	static struct both b;
	struct rk_scrub_stats st;
	/* two blocks lost of two: rebuildable, but nothing confirms it */
	REQ(scrub_u(&a, 1, &b, &st, 0) == RK_OK);
	REQ(b.nu == 1 && b.u[0].role == bad && b.u[0].recoverable && !b.u[0].confirmed);
	REQ(b.u[0].fix == RK_SCRUB_UFIX_NONE && rk_fault_writes(p) == 0 && b.g.n == 0);
	REQ(scrub_u(&a, 2, &b, &st, 0) == RK_OK);
	REQ(b.nu == 1 && b.u[0].role == bad && b.u[0].fix == RK_SCRUB_UFIX_REWRITTEN);
	REQ(b.g.n == 0);
	vol_equal(&a, 1);   /* read degraded: the rewritten bytes are right */
	/* a second unreadable block in the stripe (Q) with the member absent */
	rk_fault_plan *p2 = bad_range(&a, bad2, moff, 4096);
	rk_fault_plan_free(p);
	p = bad_range(&a, bad, moff, 4096);   /* again unreadable (the rewrite healed it) */
	uint64_t w0 = rk_fault_writes(p) + rk_fault_writes(p2);
	REQ(scrub_u(&a, 2, &b, &st, 0) == RK_OK);
	REQ(b.nu == 2 && st.unrecoverable == 2 && st.rewritten == 0);
	for (uint32_t i = 0; i < 2; i++)
		REQ(!b.u[i].recoverable && b.u[i].fix == RK_SCRUB_UFIX_NONE && b.u[i].stripe == 7);
	REQ(b.u[0].role == (bad < bad2 ? bad : bad2) && b.u[0].member_len == 4096);
	REQ(rk_fault_writes(p) + rk_fault_writes(p2) == w0);
	a.devs[gone] = keep;
	rk_fault_plan_free(p);
	rk_fault_plan_free(p2);
	arr_free(&a);

	/* RAID-5: two unreadable blocks in one stripe are one too many */
	arr_make(&a, 5, RK_ALG_LEFT_SYMMETRIC, 65536, 4, MSIZE);
	REQ(rk_geom_stripe_map(&a.g, 3, &m) == RK_OK);
	moff = DOFF + m.member_off;
	p = bad_range(&a, vr[1], moff, 1024);
	p2 = bad_range(&a, m.p_role, moff + 512, 1024);
	REQ(scrub_u(&a, 1, &b, &st, 0) == RK_OK);
	REQ(b.nu == 4 && st.unrecoverable == 2 && st.rewritten == 0);
	REQ(rk_fault_writes(p) == 0 && rk_fault_writes(p2) == 0);
	REQ(scrub_u(&a, 2, &b, &st, 0) == RK_OK);
	/* vr[1]: sector 0 rebuildable, sector 1 not; P: sector 1 not, sector 2 rebuildable */
	REQ(b.nu == 4 && st.unrecoverable == 2 && st.rewritten == 2 && st.unreadable == 4);
	for (uint32_t i = 0; i < 4; i++) {
		const struct rk_scrub_unreadable *u = &b.u[i];
		REQ(u->member_len == 512 && u->stripe == 3);
		int both = u->member_off == moff + 512;
		REQ(u->recoverable == !both);
		REQ(u->fix == (both ? RK_SCRUB_UFIX_NONE : RK_SCRUB_UFIX_REWRITTEN));
	}
	REQ(st.stripes == a.g.nstripes && st.mismatches == 0);
	rk_fault_plan_free(p);
	rk_fault_plan_free(p2);
	arr_free(&a);
}
END_TEST

/* A read error on P is reported as parity (the stripe's span) and, as
 * nothing confirms a RAID-5 rebuild, rewritten only with
 * rewrite_unconfirmed; on RAID-6 a read error beside a corrupted data block
 * still lets Q find the mismatch (not located: the unreadable block counts
 * as missing), and repair writes nothing there. */
START_TEST(test_unreadable_parity_and_mismatch)
{
	struct arr a;
	arr_make(&a, 5, RK_ALG_LEFT_SYMMETRIC, 65536, 4, MSIZE);
	uint32_t vr[MAXR];
	struct rk_stripe_map m = { .vol_role = vr };
	REQ(rk_geom_stripe_map(&a.g, 2, &m) == RK_OK);
	rk_fault_plan *p = bad_range(&a, m.p_role, DOFF + m.member_off + 1024, 1024);
	static struct both b;
	struct rk_scrub_stats st;
	REQ(scrub_u(&a, 0, &b, &st, 0) == RK_OK);
	REQ(b.nu == 1 && !b.u[0].is_data && b.u[0].role == m.p_role && b.u[0].recoverable && !b.u[0].confirmed);
	REQ(b.u[0].offset == 2 * a.g.stripe_data + 1024 && b.u[0].length == 2 * 65536 + 1024);
	REQ(scrub_u(&a, 1, &b, &st, 0) == RK_OK && st.rewritten == 0 && rk_fault_writes(p) == 0);
	REQ(scrub_u(&a, 2, &b, &st, 0) == RK_OK && st.rewritten == 1);
	REQ(scrub_u(&a, 0, &b, &st, 0) == RK_OK && b.nu == 0 && b.g.n == 0);
	rk_fault_plan_free(p);
	arr_free(&a);

	arr_make(&a, 6, RK_ALG_LEFT_SYMMETRIC, 65536, 6, MSIZE);
	REQ(rk_geom_stripe_map(&a.g, 4, &m) == RK_OK);
	flip(&a, vr[1], m.member_off + 16384, 512);
	p = bad_range(&a, vr[0], DOFF + m.member_off, 65536);
	REQ(scrub_u(&a, 0, &b, &st, 0) == RK_OK);
	REQ(b.nu == 1 && b.u[0].role == vr[0] && b.u[0].member_len == 65536 && b.u[0].recoverable);
	REQ(b.g.n == 1 && b.g.r[0].stripe == 4 && b.g.r[0].verdict == RK_SCRUB_UNLOCATED);
	REQ(strstr(b.g.why[0], "unreadable"));
	REQ(b.g.r[0].member_len == 512 && b.g.nlocs[0] == 5);
	REQ(!b.u[0].confirmed);
	/* with --repair: neither the mismatch nor the unreadable block is
	 * written (each would build on the other) */
	REQ(scrub_u(&a, 2, &b, &st, 0) == RK_OK);
	REQ(b.nu == 1 && b.u[0].fix == RK_SCRUB_UFIX_NONE && b.g.n == 1 && b.g.r[0].fix == RK_SCRUB_FIX_NONE);
	REQ(rk_fault_writes(p) == 0 && st.repaired == 0);
	rk_fault_plan_free(p);
	arr_free(&a);
}
END_TEST

/* Mirrors: another readable copy rebuilds the unreadable one (confirmed by
 * a third copy, else only with rewrite_unconfirmed); a member that is
 * pulled mid-scrub makes every later block of it unreadable and the run
 * still ends, everything recoverable. */
START_TEST(test_unreadable_mirror_and_pull)
{
	struct arr a;
	arr_make(&a, 1, 0, 0, 2, MSIZE);
	rk_fault_plan *p = bad_range(&a, 1, DOFF + 300000, 5000);
	garble(p, 1, DOFF + 300000, 5000);
	static struct both b;
	struct rk_scrub_stats st;
	REQ(scrub_u(&a, 0, &b, &st, 0) == RK_OK);
	/* sector-rounded: 300000 is in sector 585, 304999 in sector 595 */
	REQ(b.nu == 1 && b.u[0].member_off == DOFF + 585 * 512 && b.u[0].member_len == 11 * 512);
	REQ(b.u[0].offset == 585 * 512 && b.u[0].is_data && b.u[0].recoverable && !b.u[0].confirmed);
	REQ(scrub_u(&a, 1, &b, &st, 0) == RK_OK && st.rewritten == 0);
	REQ(scrub_u(&a, 2, &b, &st, 0) == RK_OK && st.rewritten == 1);
	vol_equal(&a, 1);
	rk_fault_plan_free(p);
	arr_free(&a);
	/* three copies: the two readable ones agree and confirm the third */
	arr_make(&a, 1, 0, 0, 3, MSIZE);
	p = bad_range(&a, 2, DOFF + 4096, 4096);
	garble(p, 2, DOFF + 4096, 4096);
	REQ(scrub_u(&a, 1, &b, &st, 0) == RK_OK);
	REQ(b.nu == 1 && b.u[0].confirmed && b.u[0].fix == RK_SCRUB_UFIX_REWRITTEN && st.rewritten == 1);
	vol_equal(&a, 1);
	REQ(scrub_u(&a, 0, &b, &st, 0) == RK_OK && b.nu == 0 && b.g.n == 0);
	rk_fault_plan_free(p);
	arr_free(&a);

	arr_make(&a, 6, RK_ALG_LEFT_SYMMETRIC, 65536, 5, MSIZE);
	struct rk_fault_spec sp = { .model = RK_FAULT_PULL, .member = 2, .n = 3 };
	REQ(rk_fault_plan_create(&p, &sp) == RK_OK);
	rk_dev *w;
	REQ(rk_dev_fault(&w, a.devs[2], p, 2) == RK_OK);
	a.devs[2] = w;
	REQ(scrub_u(&a, 0, &b, &st, 4 * 65536) == RK_OK);
	REQ(rk_fault_fired(p) && st.unreadable > 0 && st.unrecoverable == 0);
	REQ(st.stripes == a.g.nstripes && st.mismatches == 0);
	/* from its I/O #3 (the fourth batch of 4 stripes) nothing of role 2
	 * reads: every later chunk of it is reported whole (probed sector by
	 * sector at first, then taken whole once the member looks dead) */
	REQ(b.total == st.unreadable && b.whole == st.unreadable && b.whole == a.g.nstripes - 3 * 4);
	rk_fault_plan_free(p);
	arr_free(&a);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("scrub");
	TCase *t = tcase_create("scrub");
	tcase_set_timeout(t, 120);
	tcase_add_loop_test(t, test_clean, 0, NLEVELS);
	tcase_add_loop_test(t, test_flip_each_level, 0, NLEVELS);
	tcase_add_test(t, test_raid6_roles);
	tcase_add_test(t, test_raid6_two_bad);
	tcase_add_test(t, test_raid5_repair_unlocated);
	tcase_add_test(t, test_raid6_degraded);
	tcase_add_test(t, test_mirror_majority);
	tcase_add_test(t, test_range_and_slices);
	tcase_add_test(t, test_stop_resume);
	tcase_add_test(t, test_no_redundancy);
	tcase_add_test(t, test_files_mapped);
	tcase_add_test(t, test_check_kernels);
	tcase_add_test(t, test_checkers_agree);
	tcase_add_test(t, test_unreadable_raid6);
	tcase_add_test(t, test_unreadable_degraded);
	tcase_add_test(t, test_unreadable_parity_and_mismatch);
	tcase_add_test(t, test_unreadable_mirror_and_pull);
	suite_add_tcase(s, t);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
