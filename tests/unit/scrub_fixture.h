/* scrub_fixture.h: what the scrub suites share (test_scrub.c,
 * test_scrub_unreadable.c): memory members written by the stripe engine,
 * corrupting them, collecting regions, the level table. */
#ifndef SCRUB_FIXTURE_H
#define SCRUB_FIXTURE_H

#include <check.h>
#include "helpers/rk_test.h"
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

#define FIXTURE static __attribute__((unused))

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

FIXTURE void arr_make(struct arr *a, int level, uint32_t layout, uint64_t chunk, uint32_t n, uint64_t msize)
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

FIXTURE void arr_free(struct arr *a)
{
	for (uint32_t r = 0; r < a->g.nroles; r++)
		rk_dev_close(a->devs[r]);
	free(a->vol);
}

/* Flips LEN bytes of ROLE's data area at member offset MOFF. */
FIXTURE void flip(struct arr *a, uint32_t role, uint64_t moff, uint64_t len)
{
	uint8_t *p = rk_dev_mem_data(a->devs[role]) + a->doff[role] + moff;
	for (uint64_t i = 0; i < len; i++)
		p[i] ^= (uint8_t)(1 + (rnd() % 255));
}

/* Flips LEN bytes of the data copy of volume byte VOFF; returns its role. */
FIXTURE uint32_t flip_vol(struct arr *a, uint64_t voff, uint64_t len)
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

FIXTURE void on_region(void *ctx, const struct rk_scrub_region *r)
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

FIXTURE rk_err scrub(struct arr *a, int repair, uint64_t first, uint64_t last, struct got *got,
                    struct rk_scrub_stats *st, uint64_t batch)
{
	memset(got, 0, sizeof *got);
	struct rk_scrub_opts o = { .repair = repair, .on_region = on_region, .ctx = got, .batch = batch };
	return rk_scrub_run(&a->g, a->devs, a->doff, first, last, &o, st);
}

FIXTURE void vol_equal(struct arr *a, int expect_equal)
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
FIXTURE int locatable(const struct rk_geom *g)
{
	return g->level == 6 || ((g->level == 1 || g->level == 10) && g->copies >= 3);
}

#endif
