/* vol_read.c: the read path of the parity levels (RAID-4/5/6).
 *
 * Healthy: every wanted data block goes straight from its member into the
 * caller's buffer, READ_BATCH volume bytes per vol_run (as the direct path
 * of RAID-0 does), so a wide array reads like RAID-0 of its data members.
 * Degraded, or when a member goes down during a batch: unit by unit.  A
 * stripe with a wanted block on a down member reads its live data blocks
 * and only the parity the loss needs (P for one lost data block; Q too for
 * two, or with P down) in one pass, then reconstructs.  Where the stripe's
 * whole column range is wanted, its data blocks (read and rebuilt) live in
 * the caller's buffer and only parity is staged; edge stripes are staged
 * whole and copied out.  Runs of whole stripes go in "flat" units of up to
 * read_stripes stripes whose parity is staged side by side in the role
 * buffers' memory (nparity blocks per stripe instead of nroles), so a run
 * covers several times more stripes.
 */
#include <stdlib.h>
#include <string.h>
#include "rk_pool.h"
#include "rk_le.h"
#include "vol_int.h"

#define READ_BATCH (32u << 20)   /* volume bytes per healthy batch */

/* Where volume column A of data block J of unit stripe U sits in the
 * caller's buffer BUF (volume byte OFF0 at index 0). */
static uint8_t *caller_bytes(const rk_vol *v, const struct stripe_unit *unit, uint8_t *buf, uint64_t off0, uint32_t u,
                             uint32_t j, uint32_t a)
{
	return buf + (v->stripes[u].stripe * v->g.stripe_data + (uint64_t)j * v->g.chunk + unit->col0 + a - off0);
}

/* Queues reads of every data byte of [off, end) straight from the members
 * into BUF (volume byte OFF0 at index 0); no role is down. */
static rk_err queue_healthy(rk_vol *v, uint8_t *buf, uint64_t off0, uint64_t off, uint64_t end)
{
	const struct rk_geom *g = &v->g;
	uint64_t chunk = g->chunk;
	for (uint64_t s = off / g->stripe_data; s * g->stripe_data < end; s++) {
		struct rk_stripe_map m = { .vol_role = v->vol_role, .slot = v->slot };
		rk_geom_stripe_map(g, s, &m);   /* cannot fail: s < nstripes */
		uint64_t vs = s * g->stripe_data;
		for (uint32_t j = 0; j < g->ndata; j++) {
			uint64_t bs = vs + (uint64_t)j * chunk;
			uint64_t a = bs > off ? bs : off, b = bs + chunk < end ? bs + chunk : end;
			if (a >= b)
				continue;
			rk_err e = vol_queue(v, m.vol_role[j], 0, s * chunk + (a - bs), buf + (a - off0), (size_t)(b - a));
			if (e)
				return e;
		}
	}
	return RK_OK;
}

/* Whether every data block of unit stripe U is wanted over the stripe's
 * whole column range (its blocks can then live in the caller's buffer). */
static int stripe_full(const rk_vol *v, uint32_t u)
{
	const struct unit_stripe *st = &v->stripes[u];
	size_t at = (size_t)u * v->g.ndata;
	for (uint32_t j = 0; j < v->g.ndata; j++)
		if (v->block_from[at + j] != st->from || v->block_to[at + j] != st->to)
			return 0;
	return 1;
}

/* Flat units: parity block K (0 P, 1 Q) of unit stripe U. */
static uint8_t *flat_parity(const rk_vol *v, uint32_t u, uint32_t k)
{
	return v->role_buf_mem + ((size_t)u * v->g.nparity + k) * v->unit_cols;
}

/* Where role R's bytes of unit stripe U are staged (from the stripe's
 * first column): its role buffer, or in a FLAT unit its parity block. */
static uint8_t *staged(const rk_vol *v, uint32_t u, uint32_t r, int flat)
{
	const struct unit_stripe *st = &v->stripes[u];
	if (flat)
		return flat_parity(v, u, r == st->p_role ? 0 : 1);
	return vol_role_buf(v, r, u) + st->from;
}

/* The parity rebuilding LOST data blocks of a stripe reads (LOST > 0;
 * P_DOWN: its P role is down): bit 0 P, bit 1 Q. */
static unsigned parity_mask(const struct rk_geom *g, uint32_t lost, int p_down)
{
	return g->level != 6 || (lost == 1 && !p_down) ? 1u : 3u;
}

/* The parity reconstruction of unit stripe U needs: bit 0 P, bit 1 Q. */
static unsigned parity_needed(const rk_vol *v, uint32_t u)
{
	const struct unit_stripe *st = &v->stripes[u];
	const uint32_t *vr = v->vol_role + (size_t)u * v->g.ndata;
	uint32_t lost = 0;
	for (uint32_t j = 0; j < v->g.ndata; j++)
		lost += vol_is_down(v, vr[j]);
	return parity_mask(&v->g, lost, vol_is_down(v, st->p_role));
}

/* Queues the reads of unit stripe U: wanted blocks straight to the caller
 * when none is lost; else the live data blocks (to the caller when the
 * stripe is full, else staged) and the parity the loss needs (staged). */
static rk_err queue_stripe_read(rk_vol *v, const struct stripe_unit *unit, uint8_t *buf, uint64_t off0, uint32_t u,
                                int flat)
{
	struct unit_stripe *st = &v->stripes[u];
	uint32_t nd = v->g.ndata;
	const uint32_t *vr = v->vol_role + (size_t)u * nd;
	size_t at = (size_t)u * nd;
	st->lost = 0;
	for (uint32_t j = 0; j < nd; j++)
		if (v->block_from[at + j] < v->block_to[at + j] && vol_is_down(v, vr[j]))
			st->lost = 1;
	rk_err e = RK_OK;
	if (!st->lost) {
		for (uint32_t j = 0; j < nd && !e; j++) {
			uint32_t a = v->block_from[at + j], b = v->block_to[at + j];
			if (a < b)
				e = vol_queue(v, vr[j], 0, vol_unit_member_off(v, unit, st->stripe, a),
				              caller_bytes(v, unit, buf, off0, u, j, a), b - a);
		}
		return e;
	}
	int full = flat || stripe_full(v, u);
	uint64_t moff = vol_unit_member_off(v, unit, st->stripe, st->from);
	size_t len = st->to - st->from;
	for (uint32_t j = 0; j < nd && !e; j++)
		if (!vol_is_down(v, vr[j]))
			e = vol_queue(v, vr[j], 0, moff,
			              full ? caller_bytes(v, unit, buf, off0, u, j, st->from) : vol_role_buf(v, vr[j], u) + st->from,
			              len);
	unsigned need = parity_needed(v, u);
	uint32_t prole[2] = { st->p_role, st->q_role };
	for (uint32_t k = 0; k < v->g.nparity && !e; k++)
		if ((need >> k & 1u) && !vol_is_down(v, prole[k]))
			e = vol_queue(v, prole[k], 0, moff, staged(v, u, prole[k], flat), len);
	return e;
}

/* Rebuilds the lost blocks of unit stripe U (read by queue_stripe_read)
 * and copies a staged stripe's wanted bytes to the caller. */
static rk_err finish_stripe(rk_vol *v, const struct stripe_unit *unit, uint8_t *buf, uint64_t off0, uint32_t u,
                            int flat)
{
	const struct unit_stripe *st = &v->stripes[u];
	if (!st->lost)
		return RK_OK;
	uint32_t nd = v->g.ndata;
	const uint32_t *vr = v->vol_role + (size_t)u * nd;
	size_t at = (size_t)u * nd;
	int full = flat || stripe_full(v, u);
	if (flat) {   /* every role is a data block or P/Q of the stripe */
		v->bptr[st->p_role] = flat_parity(v, u, 0);
		if (v->g.nparity > 1)
			v->bptr[st->q_role] = flat_parity(v, u, 1);
	} else {
		for (uint32_t r = 0; r < v->nroles; r++)
			v->bptr[r] = vol_role_buf(v, r, u) + st->from;
	}
	for (uint32_t j = 0; j < nd && full; j++)
		v->bptr[vr[j]] = caller_bytes(v, unit, buf, off0, u, j, st->from);
	rk_err e = vol_reconstruct_at(v, u, v->bptr);
	for (uint32_t j = 0; j < nd && !e && !full; j++) {
		uint32_t a = v->block_from[at + j], b = v->block_to[at + j];
		if (a < b)
			memcpy(caller_bytes(v, unit, buf, off0, u, j, a), vol_role_buf(v, vr[j], u) + a, b - a);
	}
	return e;
}

/* A flat unit run as one pool job per stripe (read, then rebuilt while
 * its blocks are still in the CPU cache); any failure sends the unit to
 * the queued path, which notes read errors and fails members.  Not split
 * into column pieces: tried for issue 13 (a stream batch is a one-stripe
 * unit, read on one thread), pieces on the pool cost the export 40% more
 * CPU (0.21 -> 0.30 s for RAID-6 of 6 x 256 MiB, 2 missing, page cache;
 * thread wake-ups per 2 MiB batch) and no wall time on 2 cores, where the
 * export's writer is the bound. */
struct flat_jobs {
	rk_vol *v;
	const struct stripe_unit *unit;
	uint8_t *buf;
	uint64_t off0;
	int failed;
};

/* Reads LEN bytes of ROLE at data-area offset MOFF into DST; 0 or -1. */
static int job_read(const rk_vol *v, uint32_t role, uint64_t moff, uint8_t *dst, size_t len)
{
	return rk_dev_pread(v->devs[role], dst, len, v->data_offset[role] + moff) ? -1 : 0;
}

/* Pool job: flat unit stripe U, read and (when lost) rebuilt; WORKER
 * picks the scratch pointer arrays. */
static void flat_stripe_job(void *ctx, uint32_t worker, uint32_t u)
{
	struct flat_jobs *fj = ctx;
	const rk_vol *v = fj->v;
	const struct unit_stripe *st = &v->stripes[u];
	uint32_t nd = v->g.ndata, n = v->nroles;
	const uint32_t *vr = v->vol_role + (size_t)u * nd;
	uint64_t moff = vol_unit_member_off(v, fj->unit, st->stripe, st->from);
	size_t len = st->to - st->from;
	uint8_t **bp = v->job_bptr + (size_t)worker * n;
	int bad = 0;
	for (uint32_t j = 0; j < nd && !bad; j++) {
		bp[vr[j]] = caller_bytes(v, fj->unit, fj->buf, fj->off0, u, j, st->from);
		if (!vol_is_down(v, vr[j]))
			bad = job_read(v, vr[j], moff, bp[vr[j]], len);
	}
	if (!bad && st->lost) {
		unsigned need = parity_needed(v, u);
		uint32_t prole[2] = { st->p_role, st->q_role };
		for (uint32_t k = 0; k < v->g.nparity && !bad; k++) {
			bp[prole[k]] = flat_parity(v, u, k);
			if ((need >> k & 1u) && !vol_is_down(v, prole[k]))
				bad = job_read(v, prole[k], moff, bp[prole[k]], len);
		}
		if (!bad)
			bad = vol_reconstruct_with(v, u, bp, v->job_ptrs + (size_t)worker * v->nptrs, len);
	}
	if (bad)
		__atomic_store_n(&fj->failed, 1, __ATOMIC_RELAXED);
}

/* Runs the flat UNIT (set up) as stripe jobs: 0 done, -1 when anything
 * failed (the caller reads it again the queued way). */
static int flat_run_jobs(rk_vol *v, const struct stripe_unit *unit, uint8_t *buf, uint64_t off0)
{
	uint32_t nd = v->g.ndata;
	for (uint32_t u = 0; u < unit->count; u++) {
		const uint32_t *vr = v->vol_role + (size_t)u * nd;
		v->stripes[u].lost = 0;
		for (uint32_t j = 0; j < nd; j++)
			v->stripes[u].lost |= vol_is_down(v, vr[j]);
	}
	struct flat_jobs fj = { v, unit, buf, off0, 0 };
	if (v->pool && !v->serial && unit->count > 1)
		rk_pool_run(v->pool, unit->count, flat_stripe_job, &fj);
	else
		for (uint32_t u = 0; u < unit->count; u++)
			flat_stripe_job(&fj, 0, u);
	return fj.failed ? -1 : 0;
}

/* Reads the part of [off, end) in UNIT into BUF (volume byte OFF0 at 0),
 * again while members go down during the reads; FLAT: UNIT is whole
 * stripes inside the range, staged flat. */
static rk_err unit_read(rk_vol *v, const struct stripe_unit *unit, uint8_t *buf, uint64_t off0, uint64_t off, uint64_t end,
                        int flat)
{
	vol_unit_setup(v, unit, off, end);
	if (flat && flat_run_jobs(v, unit, buf, off0) == 0)
		return RK_OK;
	for (uint32_t tries = 0;; tries++) {
		if (!vol_readable(v) || tries > v->nroles)
			return vol_too_few(v);
		rk_err e = RK_OK;
		for (uint32_t u = 0; u < unit->count && !e; u++)
			e = queue_stripe_read(v, unit, buf, off0, u, flat);
		uint32_t before = vol_ndown(v);
		if (e || (e = vol_run(v)))
			return e;
		if (vol_ndown(v) == before)
			break;
	}
	for (uint32_t u = 0; u < unit->count; u++) {
		rk_err e = finish_stripe(v, unit, buf, off0, u, flat);
		if (e)
			return e;
	}
	return RK_OK;
}

/* [off, end) unit by unit (BUF holds volume byte OFF0 at index 0): the
 * whole stripes inside in flat units where the units are whole chunks,
 * the partial stripes at the edges in ordinary ones. */
static rk_err units_read(rk_vol *v, uint8_t *buf, uint64_t off0, uint64_t off, uint64_t end)
{
	const struct rk_geom *g = &v->g;
	uint64_t sd = g->stripe_data, s = off / sd, last = (end - 1) / sd + 1;
	uint64_t fa = (off + sd - 1) / sd, fb = end / sd;   /* whole stripes [fa, fb) */
	int flat_ok = v->unit_cols == g->chunk;
	while (s < last) {
		struct stripe_unit unit;
		rk_err e;
		if (flat_ok && s >= fa && s < fb) {
			uint64_t left = fb - s;
			unit = (struct stripe_unit){ .first = s, .count = left < v->read_stripes ? (uint32_t)left : v->read_stripes,
			                             .col0 = 0, .col1 = g->chunk };
			if ((e = unit_read(v, &unit, buf, off0, off, end, 1)))
				return e;
			s += unit.count;
			continue;
		}
		uint64_t lim = flat_ok && s < fa ? fa : last;   /* a head edge stays out of the flat run */
		for (uint64_t c0 = 0; c0 < g->chunk; c0 += v->unit_cols) {
			vol_unit_slice(v, &unit, s, lim > s ? lim : s + 1, c0);
			if ((e = unit_read(v, &unit, buf, off0, off, end, 0)))
				return e;
		}
		s += unit.count;
	}
	return RK_OK;
}

rk_err vol_parity_read(rk_vol *v, uint8_t *buf, uint64_t len, uint64_t off)
{
	uint64_t end = off + len;
	for (uint64_t at = off; at < end;) {
		uint64_t bend = end - at > READ_BATCH ? at + READ_BATCH : end;
		rk_err e;
		if (vol_ndown(v) == 0) {
			if ((e = queue_healthy(v, buf, off, at, bend)) || (e = vol_run(v)))
				return e;
			if (vol_ndown(v) == 0) {
				at = bend;
				continue;
			}
			/* a member went down during the batch: again, reconstructing */
		}
		if ((e = units_read(v, buf, off, at, bend)))
			return e;
		at = bend;
	}
	return RK_OK;
}

/* What rk_vol_advise_read advises: ADV to DEVS[role] at DOFF[role] +. */
struct advice {
	rk_dev *const *devs;
	const uint64_t *doff;
	unsigned adv;
	uint64_t *run;    /* per role: the pending member data-area range */
};

/* Extends ROLE's pending run by [a, b), advising the pending run first
 * when [a, b) does not continue it. */
static void advise_run(const struct advice *ad, uint32_t role, uint64_t a, uint64_t b)
{
	uint64_t *r = ad->run + 2 * (size_t)role;
	if (r[1] == a && r[1] > r[0]) {
		r[1] = b;
		return;
	}
	if (r[1] > r[0] && ad->devs[role])
		rk_dev_advise(ad->devs[role], ad->doff[role] + r[0], r[1] - r[0], ad->adv);
	r[0] = a;
	r[1] = b;
}

int rk_vol_advise_read(rk_vol *v, uint64_t off, uint64_t len, unsigned adv, rk_dev *const *devs,
                       const uint64_t *doff)
{
	const struct rk_geom *g = &v->g;
	uint64_t end;
	if (!vol_parity_level(g) || len == 0 || rk_add_ovf(off, len, &end) || end > g->volume_size)
		return vol_parity_level(g);
	struct advice ad = { devs ? devs : v->devs, devs ? doff : v->data_offset, adv,
		             calloc((size_t)v->nroles * 2, sizeof *ad.run) };
	if (!ad.run)
		return 1;   /* advice only */
	uint32_t nd = g->ndata;
	pthread_mutex_lock(&v->op_lock);   /* the stripe map arrays */
	for (uint64_t s = off / g->stripe_data; s * g->stripe_data < end; s++) {
		struct rk_stripe_map m = { .vol_role = v->vol_role, .slot = v->slot };
		rk_geom_stripe_map(g, s, &m);   /* cannot fail: s < nstripes */
		uint64_t a = m.member_off, b = a + g->chunk;
		uint32_t lost = 0;
		for (uint32_t j = 0; j < nd; j++)
			lost += vol_is_down(v, m.vol_role[j]);
		for (uint32_t j = 0; j < nd; j++)
			if (!vol_is_down(v, m.vol_role[j]))
				advise_run(&ad, m.vol_role[j], a, b);
		/* the parity queue_stripe_read reads for lost blocks (parity_mask) */
		unsigned need = lost ? parity_mask(g, lost, vol_is_down(v, m.p_role)) : 0;
		if ((need & 1) && !vol_is_down(v, m.p_role))
			advise_run(&ad, m.p_role, a, b);
		if ((need & 2) && !vol_is_down(v, m.q_role))
			advise_run(&ad, m.q_role, a, b);
	}
	for (uint32_t r = 0; r < v->nroles; r++)
		advise_run(&ad, r, 0, 0);   /* flushes the pending run */
	pthread_mutex_unlock(&v->op_lock);
	free(ad.run);
	return 1;
}
