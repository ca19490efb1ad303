/* reshape_plan.c: the ordering rule of a reshape (spec/reshape.md): where
 * each geometry keeps volume bytes on its members, and so how many rows a
 * forward or revert batch may move without overwriting what is still to
 * be read. */
#include "rk_le.h"
#include "resize_int.h"

/* ---- reshape ---- */

/* Where a geometry keeps volume bytes on its members (offsets relative to
 * its data area), for the ordering rule of spec/reshape.md:
 *   reshape_geo_lo(g, p)  the lowest member offset holding any block (data, parity
 *                 or copy) of volume bytes >= p;
 *   reshape_geo_hi(g, q)  the end of the member offsets holding all blocks of
 *                 volume bytes < q.
 * Striped levels: whole rows of chunks; RAID-1: the byte itself; RAID-10
 * near (far 1, no offset; other layouts are refused before a reshape):
 * chunk c has copies at near-grid indexes c*near .. c*near+near-1, index x
 * on row x / nroles.  Results saturate at UINT64_MAX instead of wrapping. */
int reshape_geo_supported(const struct rk_geom *g)
{
	switch (g->level) {
	case 0: case 1: case 4: case 5: case 6:
		return 1;
	case 10:
		return g->r10_far == 1 && !g->r10_offset;
	default:
		return 0;
	}
}

static uint64_t sat_mul(uint64_t a, uint64_t b)
{
	uint64_t r;
	return rk_mul_ovf(a, b, &r) ? UINT64_MAX : r;
}

uint64_t reshape_geo_lo(const struct rk_geom *g, uint64_t p)
{
	if (g->level == 1)
		return p;
	if (g->level == 10)
		return sat_mul(sat_mul(p / g->chunk, g->r10_near) / g->nroles, g->chunk);
	return sat_mul(p / g->stripe_data, g->chunk);
}

uint64_t reshape_geo_hi(const struct rk_geom *g, uint64_t q)
{
	if (!q)
		return 0;
	if (g->level == 1)
		return q;
	if (g->level == 10) {
		uint64_t last = sat_mul((q - 1) / g->chunk + 1, g->r10_near) - 1;   /* the last copy's index */
		return sat_mul(last / g->nroles + 1, g->chunk);
	}
	return sat_mul((q - 1) / g->stripe_data + 1, g->chunk);
}

/* The largest Q, a multiple of g's stripe_data, with reshape_geo_hi(g, Q) <= L.
 * RAID-10: Q = floor(floor(L/chunk) * nroles / near) chunks (the last
 * copy of chunk Q/chunk - 1 then ends on row floor(L/chunk) - 1 at most). */
static uint64_t geo_hi_cap(const struct rk_geom *g, uint64_t l)
{
	if (g->level == 1)
		return l / g->stripe_data * g->stripe_data;
	if (g->level == 10)
		return sat_mul(sat_mul(l / g->chunk, g->nroles) / g->r10_near, g->chunk);
	return sat_mul(l / g->chunk, g->stripe_data);
}

/* Volume bytes per member row, as a fraction (num/den of a chunk's worth):
 * the new geometry packs the volume denser when its fraction is larger. */
int reshape_geo_denser(const struct rk_geom *gn, const struct rk_geom *go)
{
	uint64_t nn = gn->level == 10 ? gn->nroles : gn->ndata, nd = gn->level == 10 ? gn->r10_near : 1;
	uint64_t on = go->level == 10 ? go->nroles : go->ndata, od = go->level == 10 ? go->r10_near : 1;
	return nn * od > on * nd;
}

/* New stripes that may be written from P (a multiple of the new stripe):
 * batch [P, Q) only when reshape_geo_hi(new, Q) <= SHIFT + reshape_geo_lo(old, P), i.e.
 * every new block of bytes < Q lands below every old block of bytes >= P,
 * which are all still to be copied.  0: not even one stripe fits. */
uint64_t reshape_batch_rows(const struct rk_geom *go, const struct rk_geom *gn, uint64_t shift,
                           uint64_t oldvol, uint64_t p, uint64_t rows_max)
{
	uint64_t lw;
	if (rk_add_ovf(shift, reshape_geo_lo(go, p), &lw))
		lw = UINT64_MAX;
	uint64_t q = geo_hi_cap(gn, lw);
	if (q <= p)
		return 0;
	uint64_t k = (q - p) / gn->stripe_data;
	uint64_t left = (oldvol - p + gn->stripe_data - 1) / gn->stripe_data;
	if (k > left)
		k = left;
	if (k > rows_max)
		k = rows_max;
	return k;
}

/* Reverting from P (reshape_pos, > 0): the smallest Q, a multiple of the new
 * stripe, Q < P, Q >= P - rows_max stripes, with
 * reshape_geo_hi(new, P) <= SHIFT + reshape_geo_lo(old, Q): the old rows rewritten for
 * [Q, P) start at or above reshape_geo_lo(old, Q), so they never touch the new
 * blocks of bytes < P, which are still read until the checkpoint moves.
 * The condition only gets easier as Q grows; the stripe holding P-1 always
 * meets it when the forward plan was valid (spec/reshape.md).  Returns P
 * when no Q fits. */
uint64_t reshape_revert_from(const struct rk_geom *go, const struct rk_geom *gn, uint64_t shift, uint64_t p,
                            uint64_t rows_max)
{
	uint64_t sd = gn->stripe_data;
	uint64_t need = reshape_geo_hi(gn, p);
	need = need > shift ? need - shift : 0;
	uint64_t hi = (p - 1) / sd;                          /* largest candidate, in stripes */
	uint64_t lo = hi >= rows_max - 1 ? hi - (rows_max - 1) : 0;
	if (reshape_geo_lo(go, sat_mul(hi, sd)) < need)
		return p;
	while (lo < hi) {                                    /* the first stripe that meets it */
		uint64_t mid = lo + (hi - lo) / 2;
		if (reshape_geo_lo(go, sat_mul(mid, sd)) >= need)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo * sd;
}

/* The old rows a revert batch rewrites: [row_start(Q), row_end(P)) of the
 * old geometry, whole stripes (RAID-1: the bytes themselves), within the
 * old volume. */
uint64_t reshape_old_row_start(const struct rk_geom *g, uint64_t q)
{
	return g->level == 1 ? q : q / g->stripe_data * g->stripe_data;
}

uint64_t reshape_old_row_end(const struct rk_geom *g, uint64_t p, uint64_t vol)
{
	uint64_t e = g->level == 1 ? p : sat_mul((p + g->stripe_data - 1) / g->stripe_data, g->stripe_data);
	return e < vol ? e : vol;
}

void reshape_on_member_fail(void *ctx, uint32_t role, rk_err why)
{
	(void)role;
	(void)why;
	__atomic_store_n((int *)ctx, 1, __ATOMIC_RELEASE);
}

