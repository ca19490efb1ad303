/* vol_unit.c: parity levels (RAID-4/5/6) in units: a few whole stripes, or
 * for very wide stripes a column slice of one stripe, staged in one buffer
 * per role.  The unit's maps, reconstruction of lost data blocks, parity
 * generation and the read path; writes are in vol_write.c.
 */
#include <string.h>
#include "vol_int.h"

void vol_unit_slice(const rk_vol *v, struct stripe_unit *unit, uint64_t first, uint64_t last, uint64_t col0)
{
	uint64_t left = last - first, chunk = v->g.chunk;
	unit->first = first;
	unit->count = left < v->unit_stripes ? (uint32_t)left : v->unit_stripes;
	unit->col0 = col0;
	unit->col1 = col0 + v->unit_cols < chunk ? col0 + v->unit_cols : chunk;
}

void vol_unit_setup(rk_vol *v, const struct stripe_unit *unit, uint64_t off, uint64_t end)
{
	const struct rk_geom *g = &v->g;
	uint32_t nd = g->ndata;
	for (uint32_t u = 0; u < unit->count; u++) {
		struct unit_stripe *st = &v->stripes[u];
		st->stripe = unit->first + u;
		struct rk_stripe_map m = { .vol_role = v->vol_role + (size_t)u * nd, .slot = v->slot + (size_t)u * v->nroles };
		rk_geom_stripe_map(g, st->stripe, &m);   /* cannot fail: s < nstripes */
		st->p_role = m.p_role;
		st->q_role = m.q_role;
		st->from = UINT32_MAX;
		st->to = 0;
		st->lost = 0;
		st->mode = WRITE_NONE;
		uint64_t vs = st->stripe * g->stripe_data;
		for (uint32_t j = 0; j < nd; j++) {
			uint64_t bs = vs + (uint64_t)j * g->chunk;
			uint64_t a = bs + unit->col0 > off ? bs + unit->col0 : off;
			uint64_t b = bs + unit->col1 < end ? bs + unit->col1 : end;
			uint32_t *from = &v->block_from[(size_t)u * nd + j], *to = &v->block_to[(size_t)u * nd + j];
			if (a >= b) {
				*from = *to = 0;
				continue;
			}
			*from = (uint32_t)(a - bs - unit->col0);
			*to = (uint32_t)(b - bs - unit->col0);
			if (*from < st->from)
				st->from = *from;
			if (*to > st->to)
				st->to = *to;
		}
		if (st->from >= st->to)
			st->from = st->to = 0;
	}
}


rk_err vol_queue_all_live(rk_vol *v, const struct stripe_unit *unit, uint32_t u)
{
	struct unit_stripe *st = &v->stripes[u];
	for (uint32_t r = 0; r < v->nroles; r++) {
		if (vol_is_down(v, r))
			continue;
		rk_err e = vol_queue(v, r, 0, vol_unit_member_off(v, unit, st->stripe, st->from), vol_role_buf(v, r, u) + st->from,
		                     st->to - st->from);
		if (e)
			return e;
	}
	return RK_OK;
}

struct unit_reads {
	const struct stripe_unit *unit;
	rk_err (*extra)(rk_vol *v, void *ctx);
	void *extra_ctx;
};

static rk_err queue_unit_reads(rk_vol *v, void *ctx, uint32_t attempt)
{
	struct unit_reads *reads = ctx;
	rk_err e = RK_OK;
	for (uint32_t u = 0; u < reads->unit->count && !e; u++)
		e = vol_queue_all_live(v, reads->unit, u);
	if (!e && reads->extra && attempt == 0)
		e = reads->extra(v, reads->extra_ctx);
	return e;
}

rk_err vol_unit_read_all(rk_vol *v, const struct stripe_unit *unit, rk_err (*extra)(rk_vol *v, void *ctx),
                         void *extra_ctx)
{
	const struct rk_geom *g = &v->g;
	struct unit_reads reads = { unit, extra, extra_ctx };
	/* every data block touched over the whole slice */
	vol_unit_setup(v, unit, unit->first * g->stripe_data, (unit->first + unit->count) * g->stripe_data);
	return vol_run_retrying(v, queue_unit_reads, &reads);
}

/* The RAID-6 syndrome pointer array of unit stripe U in md's slot order:
 * every role's buffer at its slot over the stripe's columns, zero blocks in
 * the slots without a role. */
static void syndrome_ptrs_from_role_bufs(rk_vol *v, uint32_t u)
{
	rk_parity_stripe_ptrs(v->ptrs, v->g.q_slots + 2, v->slot + (size_t)u * v->nroles, v->nroles, v->role_buf,
	                      (size_t)u * v->unit_cols + v->stripes[u].from, v->zero);
}

/* One lost data block with P live: the XOR of the other data blocks and P
 * over LEN bytes (BP: each role's bytes from the first column; PTRS scratch). */
static void reconstruct_from_p(const rk_vol *v, uint32_t u, uint32_t lost, uint8_t *const *bp, void **ptrs, size_t len)
{
	const struct unit_stripe *st = &v->stripes[u];
	uint32_t k = 0;
	for (uint32_t r = 0; r < v->nroles; r++)
		if (r != lost && r != st->q_role)
			ptrs[k++] = bp[r];
	ptrs[k++] = bp[lost];
	if (k == 2)
		memcpy(ptrs[1], ptrs[0], len);
	else
		v->pa->xor_gen((int)k, len, ptrs);
}

rk_err vol_reconstruct_at(rk_vol *v, uint32_t u, uint8_t *const *bp)
{
	const struct unit_stripe *st = &v->stripes[u];
	return vol_reconstruct_with(v, u, bp, v->ptrs, st->to - st->from) ? vol_too_few(v) : RK_OK;
}

int vol_reconstruct_with(const rk_vol *v, uint32_t u, uint8_t *const *bp, void **ptrs, size_t len)
{
	const struct rk_geom *g = &v->g;
	const struct unit_stripe *st = &v->stripes[u];
	const uint32_t *slot = v->slot + (size_t)u * v->nroles;
	uint32_t lost_data[2], nlost_data = 0, nlost = 0;
	for (uint32_t r = 0; r < v->nroles; r++) {
		if (!vol_is_down(v, r))
			continue;
		nlost++;
		if (r != st->p_role && r != st->q_role) {
			if (nlost_data == 2)
				return -1;
			lost_data[nlost_data++] = r;
		}
	}
	if (nlost_data == 0 || len == 0)
		return 0;
	if (nlost > g->nparity)
		return -1;
	if (nlost_data == 1 && !vol_is_down(v, st->p_role)) {
		reconstruct_from_p(v, u, lost_data[0], bp, ptrs, len);
		return 0;
	}
	/* RAID-6 with Q */
	uint32_t slots = g->q_slots + 2;
	rk_parity_stripe_ptrs(ptrs, slots, slot, v->nroles, bp, 0, v->zero);
	if (nlost_data == 1) {          /* data + P lost */
		v->pa->rec_datap((int)slots, len, (int)slot[lost_data[0]], ptrs);
	} else {
		uint32_t a = slot[lost_data[0]], b = slot[lost_data[1]];
		v->pa->rec_2data((int)slots, len, (int)(a < b ? a : b), (int)(a < b ? b : a), ptrs);
	}
	return 0;
}

rk_err vol_reconstruct(rk_vol *v, uint32_t u)
{
	for (uint32_t r = 0; r < v->nroles; r++)
		v->bptr[r] = vol_role_buf(v, r, u) + v->stripes[u].from;
	return vol_reconstruct_at(v, u, v->bptr);
}

void vol_gen_parity(rk_vol *v, uint32_t u, const uint8_t *src)
{
	const struct rk_geom *g = &v->g;
	struct unit_stripe *st = &v->stripes[u];
	size_t len = st->to - st->from;
	if (len == 0)
		return;
	const uint32_t *vr = v->vol_role + (size_t)u * g->ndata;
	if (g->level != 6) {
		for (uint32_t j = 0; j < g->ndata; j++)
			v->ptrs[j] = src ? (void *)(uintptr_t)(src + (uint64_t)j * g->chunk + st->from)
			                 : vol_role_buf(v, vr[j], u) + st->from;
		v->ptrs[g->ndata] = vol_role_buf(v, st->p_role, u) + st->from;
		if (g->ndata == 1)
			memcpy(v->ptrs[1], v->ptrs[0], len);
		else
			v->pa->xor_gen((int)g->ndata + 1, len, v->ptrs);
		return;
	}
	const uint32_t *slot = v->slot + (size_t)u * v->nroles;
	syndrome_ptrs_from_role_bufs(v, u);
	if (src)
		for (uint32_t j = 0; j < g->ndata; j++)
			v->ptrs[slot[vr[j]]] = (void *)(uintptr_t)(src + (uint64_t)j * g->chunk + st->from);
	v->pa->gen((int)(g->q_slots + 2), len, v->ptrs);
}

rk_err vol_queue_stripe_parity(rk_vol *v, const struct stripe_unit *unit, uint32_t u, uint64_t x, uint64_t y)
{
	struct unit_stripe *st = &v->stripes[u];
	uint64_t a = st->from > x ? st->from : x, b = st->to < y ? st->to : y;
	uint32_t parity_role[2] = { st->p_role, st->q_role };
	for (uint32_t k = 0; k < v->g.nparity && a < b; k++) {
		if (vol_is_down(v, parity_role[k]))
			continue;
		rk_err e = vol_queue(v, parity_role[k], 1, vol_unit_member_off(v, unit, st->stripe, a),
		                     vol_role_buf(v, parity_role[k], u) + a, (size_t)(b - a));
		if (e)
			return e;
	}
	return RK_OK;
}

rk_err vol_queue_parity_writes(rk_vol *v, const struct stripe_unit *unit)
{
	for (uint32_t u = 0; u < unit->count; u++) {
		rk_err e = v->stripes[u].mode == WRITE_NONE ? RK_OK : vol_queue_stripe_parity(v, unit, u, 0, UINT64_MAX);
		if (e)
			return e;
	}
	return RK_OK;
}

rk_err vol_parity_io(rk_vol *v, uint8_t *buf, const uint8_t *cbuf, uint64_t len, uint64_t off)
{
	if (buf)
		return vol_parity_read(v, buf, len, off);
	const struct rk_geom *g = &v->g;
	uint64_t end = off + len;
	uint64_t s = off / g->stripe_data, last = (end - 1) / g->stripe_data + 1;
	while (s < last) {
		struct stripe_unit unit;
		for (uint64_t c0 = 0; c0 < g->chunk; c0 += v->unit_cols) {
			vol_unit_slice(v, &unit, s, last, c0);
			rk_err e = vol_unit_write(v, &unit, cbuf, off, off, end);
			if (e)
				return e;
		}
		s += unit.count;
	}
	return RK_OK;
}
