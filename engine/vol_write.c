/* vol_write.c: parity-level writes, a unit at a time.
 *
 * Each stripe of the unit gets a write mode (enum write_mode): full stripe
 * (parity from the new data alone), read-modify-write or reconstruct-write
 * (whichever reads fewer blocks), or degraded (every live role read, the
 * lost blocks rebuilt, parity regenerated).  The unit's reads run first; a
 * member failing meanwhile re-plans the unit.  Then the new data and parity
 * go out: data first, then P/Q, or, with a journal (rk_vol_set_journal),
 * through the journal hook in records of at most journal_max bytes a role.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "vol_int.h"

/* ---- planning ---- */

/* Chooses how to write unit stripe U (its touched columns already set). */
static enum write_mode choose_mode(const rk_vol *v, uint32_t u)
{
	const struct rk_geom *g = &v->g;
	const struct unit_stripe *st = &v->stripes[u];
	uint32_t nd = g->ndata;
	const uint32_t *from = v->block_from + (size_t)u * nd, *to = v->block_to + (size_t)u * nd;
	if (st->from >= st->to)
		return WRITE_NONE;
	if (vol_ndown(v))
		return WRITE_DEGRADED;
	uint32_t written = 0, partial = 0;
	for (uint32_t j = 0; j < nd; j++) {
		if (from[j] < to[j])
			written++;
		if (!(from[j] == st->from && to[j] == st->to))
			partial++;   /* not covering the stripe's columns: RCW must read it */
	}
	if (partial == 0)
		return WRITE_FULL;
	return written + g->nparity < partial ? WRITE_RMW : WRITE_RCW;
}

/* Queues a read of COLS [a, b) of ROLE in unit stripe U into its buffer. */
static rk_err queue_read(rk_vol *v, const struct stripe_unit *unit, uint32_t u, uint32_t role, uint32_t a, uint32_t b)
{
	return vol_queue(v, role, 0, vol_unit_member_off(v, unit, v->stripes[u].stripe, a), vol_role_buf(v, role, u) + a,
	                 b - a);
}

/* Queues the reads the mode of unit stripe U needs. */
static rk_err queue_mode_reads(rk_vol *v, const struct stripe_unit *unit, uint32_t u)
{
	uint32_t nd = v->g.ndata;
	struct unit_stripe *st = &v->stripes[u];
	const uint32_t *from = v->block_from + (size_t)u * nd, *to = v->block_to + (size_t)u * nd;
	const uint32_t *vr = v->vol_role + (size_t)u * nd;
	rk_err e = RK_OK;
	switch (st->mode) {
	case WRITE_DEGRADED:
		return vol_queue_all_live(v, unit, u);
	case WRITE_RMW:
		/* the old data under the new, and the old parity */
		for (uint32_t j = 0; j < nd && !e; j++)
			if (from[j] < to[j])
				e = queue_read(v, unit, u, vr[j], from[j], to[j]);
		if (!e)
			e = queue_read(v, unit, u, st->p_role, st->from, st->to);
		if (!e && v->g.level == 6)
			e = queue_read(v, unit, u, st->q_role, st->from, st->to);
		return e;
	case WRITE_RCW:
		/* the data blocks the write does not cover whole */
		for (uint32_t j = 0; j < nd && !e; j++)
			if (!(from[j] == st->from && to[j] == st->to))
				e = queue_read(v, unit, u, vr[j], st->from, st->to);
		return e;
	default:
		return RK_OK;
	}
}

/* Chooses how to write each stripe of the unit (CTX) and queues its reads. */
static rk_err plan_write_reads(rk_vol *v, void *ctx, uint32_t attempt)
{
	const struct stripe_unit *unit = ctx;
	for (uint32_t u = 0; u < unit->count; u++) {
		v->stripes[u].mode = choose_mode(v, u);
		rk_err e = queue_mode_reads(v, unit, u);
		if (e)
			return e;
	}
	return RK_OK;
}

/* ---- new parity ---- */

/* The RAID-6 syndrome pointer array of a read-modify-write: zero blocks in
 * every data slot, P and Q (the old parity, updated in place) in theirs. */
static void syndrome_ptrs_for_rmw(rk_vol *v, uint8_t *p, uint8_t *q)
{
	rk_parity_stripe_ptrs(v->ptrs, v->g.q_slots + 2, NULL, 0, NULL, 0, v->zero);   /* every slot zero */
	v->ptrs[v->g.q_slots] = p;
	v->ptrs[v->g.q_slots + 1] = q;
}

/* Read-modify-write of unit stripe U: parity -= old data, += new data
 * (SRC, the caller's data of the stripe's slice), block by block; the new
 * data then replaces the old in the role buffers. */
static void rmw_update_parity(rk_vol *v, uint32_t u, const uint8_t *src)
{
	const struct rk_geom *g = &v->g;
	const struct unit_stripe *st = &v->stripes[u];
	uint32_t nd = g->ndata;
	const uint32_t *from = v->block_from + (size_t)u * nd, *to = v->block_to + (size_t)u * nd;
	const uint32_t *vr = v->vol_role + (size_t)u * nd, *slot = v->slot + (size_t)u * v->nroles;
	for (uint32_t j = 0; j < nd; j++) {
		if (from[j] >= to[j])
			continue;
		size_t len = to[j] - from[j];
		uint8_t *old = vol_role_buf(v, vr[j], u) + from[j];
		const uint8_t *new_data = src + (uint64_t)j * g->chunk + from[j];
		uint8_t *p = vol_role_buf(v, st->p_role, u) + from[j];
		if (g->level != 6) {
			void *xor_ptrs[4] = { p, old, (void *)(uintptr_t)new_data, v->scratch };
			v->pa->xor_gen(4, len, xor_ptrs);
			memcpy(p, v->scratch, len);
		} else {
			uint32_t slots = g->q_slots + 2;
			syndrome_ptrs_for_rmw(v, p, vol_role_buf(v, st->q_role, u) + from[j]);
			int sj = (int)slot[vr[j]];
			v->ptrs[sj] = old;
			v->pa->gen_partial((int)slots, sj, sj, len, v->ptrs);
			v->ptrs[sj] = (void *)(uintptr_t)new_data;
			v->pa->gen_partial((int)slots, sj, sj, len, v->ptrs);
		}
		memcpy(old, new_data, len);
	}
}

/* The new data and parity of unit stripe U in the role buffers (or, for a
 * full stripe without staging, parity straight from the caller's SRC). */
static rk_err stage_stripe(rk_vol *v, uint32_t u, const uint8_t *src)
{
	const struct rk_geom *g = &v->g;
	struct unit_stripe *st = &v->stripes[u];
	uint32_t nd = g->ndata;
	const uint32_t *from = v->block_from + (size_t)u * nd, *to = v->block_to + (size_t)u * nd;
	const uint32_t *vr = v->vol_role + (size_t)u * nd;
	switch (st->mode) {
	case WRITE_NONE:
		return RK_OK;
	case WRITE_RMW:
		rmw_update_parity(v, u, src);
		return RK_OK;
	case WRITE_FULL:
		if (v->zero_copy) {
			vol_gen_parity(v, u, src);
			return RK_OK;
		}
		break;
	case WRITE_DEGRADED: {
		rk_err e = vol_reconstruct(v, u);
		if (e)
			return e;
		break;
	}
	case WRITE_RCW:
		break;
	}
	/* overlay the new data, regenerate parity over the stripe's columns */
	for (uint32_t j = 0; j < nd; j++)
		if (from[j] < to[j])
			memcpy(vol_role_buf(v, vr[j], u) + from[j], src + (uint64_t)j * g->chunk + from[j], to[j] - from[j]);
	vol_gen_parity(v, u, NULL);
	return RK_OK;
}

/* ---- commit ---- */

/* The caller's data of unit stripe U's slice (BUF holds volume byte OFF0). */
static const uint8_t *stripe_source(const rk_vol *v, const struct stripe_unit *unit, const uint8_t *buf, uint64_t off0,
                                    uint32_t u)
{
	return buf + (v->stripes[u].stripe * v->g.stripe_data + unit->col0 - off0);
}

/* Queues the data writes of unit stripe U within columns [x, y) (live
 * roles only). */
static rk_err queue_data_writes(rk_vol *v, const struct stripe_unit *unit, const uint8_t *buf, uint64_t off0, uint32_t u,
                                uint64_t x, uint64_t y)
{
	const struct rk_geom *g = &v->g;
	uint32_t nd = g->ndata;
	struct unit_stripe *st = &v->stripes[u];
	const uint8_t *src = stripe_source(v, unit, buf, off0, u);
	for (uint32_t j = 0; j < nd; j++) {
		size_t at = (size_t)u * nd + j;
		uint64_t a = v->block_from[at] > x ? v->block_from[at] : x, b = v->block_to[at] < y ? v->block_to[at] : y;
		uint32_t r = v->vol_role[at];
		if (a >= b || vol_is_down(v, r))
			continue;
		/* full stripes were not staged: their data is the caller's */
		uint8_t *from = st->mode == WRITE_FULL && v->zero_copy ? (uint8_t *)(uintptr_t)(src + (uint64_t)j * g->chunk + a)
		                                                       : vol_role_buf(v, r, u) + a;
		rk_err e = vol_queue(v, r, 1, vol_unit_member_off(v, unit, st->stripe, a), from, (size_t)(b - a));
		if (e)
			return e;
	}
	return RK_OK;
}

/* Hands the queued writes to the journal, drops the roles it failed, then
 * writes them in place (data and parity together: the record makes the
 * order irrelevant). */
static rk_err journal_run(rk_vol *v)
{
	uint32_t n = v->nqueued;
	if (n == 0)
		return RK_OK;
	if (n > v->cap_journal_segs) {
		struct rk_vol_wseg *nj = realloc(v->journal_segs, (size_t)n * sizeof *nj);
		if (!nj) {
			v->nqueued = 0;
			return rk_fail(RK_E_NOMEM, "volume: out of memory");
		}
		v->journal_segs = nj;
		v->cap_journal_segs = n;
	}
	for (uint32_t i = 0; i < n; i++)
		v->journal_segs[i] = (struct rk_vol_wseg){ .role = v->queue[i].role, .off = v->queue[i].off,
		                                           .buf = v->queue[i].buf, .len = v->queue[i].len };
	rk_err e = v->journal_fn(v->journal_ctx, v->journal_segs, n);
	if (e) {
		v->nqueued = 0;
		return e;
	}
	uint32_t m = 0;
	for (uint32_t i = 0; i < n; i++)
		if (!vol_is_down(v, v->queue[i].role))
			v->queue[m++] = v->queue[i];
	v->nqueued = m;
	if (!vol_readable(v)) {
		v->nqueued = 0;
		return vol_too_few(v);
	}
	if ((e = vol_run(v)))
		return e;
	return vol_readable(v) ? RK_OK : vol_too_few(v);
}

/* Queues data and parity of unit stripe U within columns [x, y) and hands
 * them to the journal. */
static rk_err journal_stripe(rk_vol *v, const struct stripe_unit *unit, const uint8_t *buf, uint64_t off0, uint32_t u,
                             uint64_t x, uint64_t y)
{
	rk_err e = queue_data_writes(v, unit, buf, off0, u, x, y);
	if (!e)
		e = vol_queue_stripe_parity(v, unit, u, x, y);
	return e;
}

/* unit_commit with a journal: stripes grouped so that each role's share of
 * a record stays within journal_max; a stripe wider than that goes in
 * column pieces (parity is column-wise, so each piece is consistent alone). */
static rk_err unit_commit_journal(rk_vol *v, const struct stripe_unit *unit, const uint8_t *buf, uint64_t off0)
{
	uint64_t cap = v->journal_max;
	rk_err e;
	uint32_t u = 0;
	while (u < unit->count) {
		struct unit_stripe *st = &v->stripes[u];
		if (st->mode == WRITE_NONE || st->from >= st->to) {
			u++;
			continue;
		}
		if (st->to - st->from > cap) {
			for (uint64_t x = st->from; x < st->to; x += cap) {
				uint64_t y = st->to - x > cap ? x + cap : st->to;
				if ((e = journal_stripe(v, unit, buf, off0, u, x, y)) || (e = journal_run(v)))
					return e;
			}
			u++;
			continue;
		}
		uint64_t used = 0;
		while (u < unit->count) {
			st = &v->stripes[u];
			uint64_t w = st->mode != WRITE_NONE ? st->to - st->from : 0;
			if (w > cap || used + w > cap)
				break;
			if (w && (e = journal_stripe(v, unit, buf, off0, u, st->from, st->to)))
				return e;
			used += w;
			u++;
		}
		if ((e = journal_run(v)))
			return e;
	}
	return RK_OK;
}

void rk_vol_set_journal(rk_vol *v, rk_vol_journal_fn fn, void *ctx, uint64_t max_role_bytes)
{
	pthread_mutex_lock(&v->op_lock);
	v->journal_fn = max_role_bytes ? fn : NULL;
	v->journal_ctx = ctx;
	v->journal_max = max_role_bytes;
	pthread_mutex_unlock(&v->op_lock);
}

void rk_vol_fail_role(rk_vol *v, uint32_t role, rk_err why, const char *msg)
{
	if (role >= v->nroles)
		return;
	snprintf(v->io_msg[role], sizeof v->io_msg[0], "%s", msg ? msg : "member I/O failed");
	vol_fail_role(v, role, why);
}

/* Writes the unit's new data and parity: data first, then parity, or all
 * through the journal when one is set.  Only live roles are written. */
static rk_err unit_commit(rk_vol *v, const struct stripe_unit *unit, const uint8_t *buf, uint64_t off0)
{
	rk_err e;
	if (v->journal_fn)
		return unit_commit_journal(v, unit, buf, off0);
	for (uint32_t u = 0; u < unit->count; u++)
		if (v->stripes[u].mode != WRITE_NONE && (e = queue_data_writes(v, unit, buf, off0, u, 0, UINT64_MAX)))
			return e;
	if ((e = vol_run(v)) || (e = vol_queue_parity_writes(v, unit)) || (e = vol_run(v)))
		return e;
	if (!vol_readable(v))
		return vol_too_few(v);
	return RK_OK;
}

rk_err vol_unit_write(rk_vol *v, const struct stripe_unit *unit, const uint8_t *buf, uint64_t off0, uint64_t off,
                      uint64_t end)
{
	vol_unit_setup(v, unit, off, end);
	/* reads; a member failing meanwhile re-plans the unit */
	rk_err e = vol_run_retrying(v, plan_write_reads, (void *)(uintptr_t)unit);
	if (e)
		return e;
	for (uint32_t u = 0; u < unit->count; u++)
		if ((e = stage_stripe(v, u, stripe_source(v, unit, buf, off0, u))))
			return e;
	return unit_commit(v, unit, buf, off0);
}
