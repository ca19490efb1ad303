/* geom.c: array geometry, md's definitions (see spec/layouts.md).
 *
 * RAID-4/5/6 placement follows Linux md's raid5_compute_sector(): for stripe
 * s and data index i (volume order) it gives the P role (pd), the Q role (qd)
 * and the data role; the Q coefficient order follows md's raid6_d0() /
 * raid6_idx_to_slot().  RAID-10 follows md's raid10 __raid10_find_phys().
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <stdlib.h>
#include "rk_geom.h"
#include "rk_le.h"

static int is_striped(int32_t level)
{
	return level == 0 || level == 4 || level == 5 || level == 6;
}

static int is_ddf(const struct rk_geom *g)
{
	return g->level == 6 && g->layout >= 8 && g->layout <= 10;
}

uint32_t rk_level_min_roles(int32_t level)
{
	switch (level) {
	case RK_LEVEL_LINEAR: case 0: case 1: return 1;
	case 4: case 5: case 10: return 2;
	case 6: return 3;
	default: return 0;
	}
}

/* Checks level, layout, member count and chunk; rounds *MEMBER_SIZE down
 * to whole chunks on striped levels. */
static rk_err check_params(int32_t level, uint32_t layout, uint64_t chunk, uint32_t nroles, uint64_t *member_size)
{
	uint32_t minr = rk_level_min_roles(level);
	if (!minr)
		return rk_fail(RK_E_INVAL, "geometry: unknown RAID level %d", (int)level);
	if (!rk_layout_valid(level, layout))
		return rk_fail(RK_E_INVAL, "geometry: layout %u (0x%x) is not a RAID-%s layout", layout, layout,
		               rk_level_name(level));
	if (nroles < minr || nroles > RK_GEOM_MAX_ROLES)
		return rk_fail(RK_E_INVAL, "geometry: RAID-%s needs %u to %u members, not %u", rk_level_name(level), minr,
		               RK_GEOM_MAX_ROLES, nroles);
	int striped = is_striped(level) || level == 10;
	if (striped) {
		if (chunk == 0 || chunk % 512 || chunk > RK_GEOM_MAX_CHUNK)
			return rk_fail(RK_E_INVAL, "geometry: chunk %llu must be a non-zero multiple of 512 up to %llu",
			               (unsigned long long)chunk, (unsigned long long)RK_GEOM_MAX_CHUNK);
		*member_size -= *member_size % chunk;
	} else if (chunk > RK_GEOM_MAX_CHUNK) {
		return rk_fail(RK_E_INVAL, "geometry: chunk %llu exceeds %llu", (unsigned long long)chunk,
		               (unsigned long long)RK_GEOM_MAX_CHUNK);
	}
	if (*member_size == 0)
		return rk_fail(RK_E_RANGE, "geometry: member data size holds no %s", striped ? "whole chunk" : "byte");
	return RK_OK;
}

static rk_err overflow(const struct rk_geom *g)
{
	return rk_fail(RK_E_RANGE, "geometry: volume size overflows 64 bits (%u members of %llu bytes)", g->nroles,
	               (unsigned long long)g->member_size);
}

/* Linear and RAID-1: the stripe is a unit of volume bytes. */
static rk_err derive_unstriped(struct rk_geom *g, uint64_t *vol)
{
	g->stripe_data = g->chunk ? g->chunk : RK_GEOM_UNIT_DEFAULT;
	if (g->level == 1) {
		g->copies = g->nroles;
		*vol = g->member_size;
	} else if (rk_mul_ovf(g->member_size, g->nroles, vol)) {
		return overflow(g);
	}
	g->nstripes = *vol / g->stripe_data + (*vol % g->stripe_data != 0);
	return RK_OK;
}

/* RAID-0, 4, 5, 6: rows of chunks, ndata of them data. */
static rk_err derive_striped(struct rk_geom *g, uint64_t *vol)
{
	g->nparity = g->level == 0 ? 0 : g->level == 6 ? 2 : 1;
	g->ndata = g->nroles - g->nparity;
	if (g->level == 6) {
		int ddf = is_ddf(g);
		g->q_slots = ddf ? g->nroles : g->ndata;
		/* g^i must differ for every slot: at most 255 slots */
		if (g->q_slots > 255)
			return rk_fail(RK_E_INVAL, "geometry: RAID-6%s holds at most %u members (255 Q slots), not %u",
			               ddf ? " with a DDF layout" : "", ddf ? 255u : 257u, g->nroles);
	} else if (g->level != 0) {
		g->q_slots = g->ndata;
	}
	g->stripe_data = (uint64_t)g->ndata * g->chunk;   /* < 2^41 */
	g->nstripes = g->member_size / g->chunk;
	return rk_mul_ovf(g->nstripes, g->stripe_data, vol) ? overflow(g) : RK_OK;
}

/* RAID-10: md's near/far/offset copies and far sets. */
static rk_err derive_raid10(struct rk_geom *g, uint64_t *vol)
{
	uint32_t nroles = g->nroles, layout = g->layout;
	uint32_t nc = layout & 0xff, fc = (layout >> 8) & 0xff, mode = layout >> 17;
	if (nc * fc > nroles)
		return rk_fail(RK_E_INVAL, "geometry: RAID-10 layout with %u copies needs at least %u members, not %u",
		               nc * fc, nc * fc, nroles);
	g->r10_near = nc;
	g->r10_far = fc;
	g->r10_offset = (layout >> 16) & 1;
	g->r10_set = mode == 0 ? nroles : mode == 1 ? nroles / fc : fc * nc;
	if (g->r10_set == 0 || g->r10_set > nroles)
		return rk_fail(RK_E_INVAL, "geometry: RAID-10 far-set layout 0x%x does not fit %u members", layout, nroles);
	g->copies = nc * fc;
	uint64_t mc = g->member_size / g->chunk, per = mc / fc, rows;
	/* md's raid10_size(): (chunks per device / far) * disks / near */
	if (rk_mul_ovf(per, nroles, &rows))
		return overflow(g);
	g->nstripes = rows / nc;
	g->stripe_data = g->chunk;
	g->r10_stride = g->r10_offset ? g->chunk : per * g->chunk;
	return rk_mul_ovf(g->nstripes, g->chunk, vol) ? overflow(g) : RK_OK;
}

rk_err rk_geom_init(struct rk_geom *g, int32_t level, uint32_t layout, uint64_t chunk,
                    uint32_t nroles, uint64_t member_size)
{
	memset(g, 0, sizeof *g);
	rk_err e = check_params(level, layout, chunk, nroles, &member_size);
	if (e)
		return e;
	g->level = level;
	g->layout = layout;
	g->chunk = chunk;
	g->nroles = nroles;
	g->member_size = member_size;
	g->copies = 1;
	g->ndata = 1;
	uint64_t vol = 0;
	if (level == RK_LEVEL_LINEAR || level == 1)
		e = derive_unstriped(g, &vol);
	else if (level == 10)
		e = derive_raid10(g, &vol);
	else
		e = derive_striped(g, &vol);
	if (e)
		return e;
	if (vol == 0)
		return rk_fail(RK_E_RANGE, "geometry: the volume would hold no data");
	g->volume_size = vol;
	return RK_OK;
}

uint32_t rk_geom_redundancy(const struct rk_geom *g)
{
	switch (g->level) {
	case 1: return g->nroles - 1;
	case 4: case 5: return 1;
	case 6: return 2;
	case 10: return g->copies - 1;
	default: return 0;
	}
}

uint64_t rk_geom_pattern_period(const struct rk_geom *g)
{
	if (g->level != 10)
		return 1;
	/* near and far copies repeat within nroles chunks; far sets and the
	 * offset layout within nroles * copies: take the longer one */
	uint64_t lim = (uint64_t)g->nroles * g->copies;
	return lim < g->nstripes ? lim : g->nstripes;
}

/* Fewest and most live copies a RAID-10 chunk has with the roles DOWN
 * marks out, over one period of the copy pattern.  -1 when memory for a
 * layout of more than 64 copies cannot be had. */
static int r10_live_range(const struct rk_geom *g, const uint8_t *down, uint32_t *fewest, uint32_t *most)
{
	struct rk_loc few[64], *locs = few;
	if (g->copies > 64 && !(locs = malloc(g->copies * sizeof *locs)))
		return -1;
	uint64_t period = rk_geom_pattern_period(g);
	*fewest = UINT32_MAX;
	*most = 0;
	for (uint64_t c = 0; c < period; c++) {
		uint32_t k = rk_geom_copies(g, c * g->chunk, locs, g->copies), live = 0;
		for (uint32_t i = 0; i < k; i++)
			live += !down[locs[i].role];
		if (live < *fewest)
			*fewest = live;
		if (live > *most)
			*most = live;
	}
	if (*fewest == UINT32_MAX)
		*fewest = 0;
	if (locs != few)
		free(locs);
	return 0;
}

static uint32_t count_down(const struct rk_geom *g, const uint8_t *down)
{
	uint32_t n = 0;
	for (uint32_t r = 0; r < g->nroles; r++)
		n += down[r] != 0;
	return n;
}

int rk_geom_readable(const struct rk_geom *g, const uint8_t *down)
{
	uint32_t nd = count_down(g, down);
	switch (g->level) {
	case 1: return nd < g->nroles;
	case 4: case 5: case 6: return nd <= g->nparity;
	case 10: {
		uint32_t fewest, most;
		return nd == 0 || (r10_live_range(g, down, &fewest, &most) == 0 && fewest > 0);
	}
	default: return nd == 0;
	}
}

int rk_geom_checkable(const struct rk_geom *g, const uint8_t *down)
{
	uint32_t nd = count_down(g, down);
	switch (g->level) {
	case 1: return g->nroles - nd >= 2;
	case 4: case 5: case 6: return nd < g->nparity;
	case 10: {
		uint32_t fewest, most;
		return r10_live_range(g, down, &fewest, &most) == 0 && most >= 2;
	}
	default: return 0;
	}
}

/* ---- RAID-4/5/6 placement (md's raid5_compute_sector) ---- */

/* P and Q roles of stripe S. */
static void pq_roles(const struct rk_geom *g, uint64_t s, uint32_t *pd, uint32_t *qd)
{
	uint32_t n = g->nroles, dd = g->ndata;
	*qd = RK_ROLE_NONE;
	if (g->level == 4) {
		*pd = dd;
		return;
	}
	if (g->level == 5) {
		switch (g->layout) {
		case RK_ALG_LEFT_ASYMMETRIC: case RK_ALG_LEFT_SYMMETRIC:
			*pd = dd - (uint32_t)(s % n);
			return;
		case RK_ALG_RIGHT_ASYMMETRIC: case RK_ALG_RIGHT_SYMMETRIC:
			*pd = (uint32_t)(s % n);
			return;
		case RK_ALG_PARITY_0:
			*pd = 0;
			return;
		default:           /* PARITY_N */
			*pd = dd;
			return;
		}
	}
	/* RAID-6 */
	switch (g->layout) {
	case RK_ALG_LEFT_ASYMMETRIC:
	case RK_ALG_RIGHT_ASYMMETRIC:
	case RK_ALG_ROTATING_ZERO_RESTART:
	case RK_ALG_ROTATING_N_RESTART:
		if (g->layout == RK_ALG_LEFT_ASYMMETRIC)
			*pd = n - 1 - (uint32_t)(s % n);
		else if (g->layout == RK_ALG_ROTATING_N_RESTART)
			*pd = n - 1 - (uint32_t)((s % n + 1) % n);   /* (s+1) % n without overflow */
		else
			*pd = (uint32_t)(s % n);
		*qd = *pd == n - 1 ? 0 : *pd + 1;
		return;
	case RK_ALG_LEFT_SYMMETRIC:
	case RK_ALG_RIGHT_SYMMETRIC:
		*pd = g->layout == RK_ALG_LEFT_SYMMETRIC ? n - 1 - (uint32_t)(s % n) : (uint32_t)(s % n);
		*qd = (*pd + 1) % n;
		return;
	case RK_ALG_PARITY_0:
		*pd = 0;
		*qd = 1;
		return;
	case RK_ALG_PARITY_N:
		*pd = dd;
		*qd = dd + 1;
		return;
	case RK_ALG_ROTATING_N_CONTINUE:
		*pd = n - 1 - (uint32_t)(s % n);
		*qd = (*pd + n - 1) % n;
		return;
	case RK_ALG_LEFT_ASYMMETRIC_6: case RK_ALG_LEFT_SYMMETRIC_6:
		*pd = dd - (uint32_t)(s % (n - 1));
		*qd = n - 1;
		return;
	case RK_ALG_RIGHT_ASYMMETRIC_6: case RK_ALG_RIGHT_SYMMETRIC_6:
		*pd = (uint32_t)(s % (n - 1));
		*qd = n - 1;
		return;
	default:           /* PARITY_0_6 */
		*pd = 0;
		*qd = n - 1;
		return;
	}
}

/* How a layout orders the data blocks of a stripe with P at PD; one
 * description serves both directions (data_role, data_index). */
enum data_order_kind {
	ORDER_SHIFTED,    /* role = i + shift: data after fixed parity roles */
	ORDER_SKIPPING,   /* role = i, or i + shift from PD on: parity roles skipped in place */
	ORDER_ROTATING,   /* role = (PD + shift + i) % modulus: data starts after parity */
};
struct data_order {
	enum data_order_kind kind;
	uint32_t shift;
	uint32_t modulus;     /* ORDER_ROTATING */
};

static struct data_order data_order(const struct rk_geom *g, uint32_t pd)
{
	uint32_t n = g->nroles;
	if (g->level == 4)
		return (struct data_order){ ORDER_SHIFTED, 0, 0 };
	if (g->level == 5) {
		switch (g->layout) {
		case RK_ALG_LEFT_ASYMMETRIC: case RK_ALG_RIGHT_ASYMMETRIC:
			return (struct data_order){ ORDER_SKIPPING, 1, 0 };
		case RK_ALG_LEFT_SYMMETRIC: case RK_ALG_RIGHT_SYMMETRIC:
			return (struct data_order){ ORDER_ROTATING, 1, n };
		case RK_ALG_PARITY_0:
			return (struct data_order){ ORDER_SHIFTED, 1, 0 };
		default:
			return (struct data_order){ ORDER_SHIFTED, 0, 0 };
		}
	}
	switch (g->layout) {
	case RK_ALG_LEFT_ASYMMETRIC: case RK_ALG_RIGHT_ASYMMETRIC:
	case RK_ALG_ROTATING_ZERO_RESTART: case RK_ALG_ROTATING_N_RESTART:
		if (pd == n - 1)
			return (struct data_order){ ORDER_SHIFTED, 1, 0 };   /* Q D D D P */
		return (struct data_order){ ORDER_SKIPPING, 2, 0 };      /* D D P Q D */
	case RK_ALG_LEFT_SYMMETRIC: case RK_ALG_RIGHT_SYMMETRIC:
		return (struct data_order){ ORDER_ROTATING, 2, n };
	case RK_ALG_PARITY_0:
		return (struct data_order){ ORDER_SHIFTED, 2, 0 };
	case RK_ALG_PARITY_N:
		return (struct data_order){ ORDER_SHIFTED, 0, 0 };
	case RK_ALG_ROTATING_N_CONTINUE:
		return (struct data_order){ ORDER_ROTATING, 1, n };
	case RK_ALG_LEFT_ASYMMETRIC_6: case RK_ALG_RIGHT_ASYMMETRIC_6:
		return (struct data_order){ ORDER_SKIPPING, 1, 0 };
	case RK_ALG_LEFT_SYMMETRIC_6: case RK_ALG_RIGHT_SYMMETRIC_6:
		return (struct data_order){ ORDER_ROTATING, 1, n - 1 };
	default:           /* PARITY_0_6 */
		return (struct data_order){ ORDER_SHIFTED, 1, 0 };
	}
}

/* Role of volume data block I (0 <= i < ndata) of a stripe with P at PD. */
static uint32_t data_role(const struct rk_geom *g, uint32_t pd, uint32_t i)
{
	struct data_order o = data_order(g, pd);
	switch (o.kind) {
	case ORDER_SHIFTED: return i + o.shift;
	case ORDER_SKIPPING: return i >= pd ? i + o.shift : i;
	default: return (uint32_t)(((uint64_t)pd + o.shift + i) % o.modulus);
	}
}

/* Inverse of data_role: the volume data index held by data role R (R is
 * neither P nor Q). */
static uint32_t data_index(const struct rk_geom *g, uint32_t pd, uint32_t r)
{
	struct data_order o = data_order(g, pd);
	switch (o.kind) {
	case ORDER_SHIFTED: return r - o.shift;
	case ORDER_SKIPPING: return r > pd ? r - o.shift : r;
	default: return (r + 2 * o.modulus - pd - o.shift) % o.modulus;
	}
}

/* ---- RAID-10 (md's raid10.c) ---- */

/* One far-copy step of device D, as __raid10_find_phys moves it. */
static uint32_t r10_far_step(const struct rk_geom *g, uint32_t d)
{
	uint32_t n = g->nroles, fs = g->r10_set, nc = g->r10_near;
	uint32_t last_start = (n / fs - 1) * fs, last_size = fs + n % fs;
	uint32_t set = d / fs;
	d += nc;
	if ((n % fs) && d > last_start) {
		d -= last_start;
		d %= last_size;
		d += last_start;
	} else {
		d %= fs;
		d += fs * set;
	}
	return d;
}

/* Copies of volume chunk VC at in-chunk offset IN, in md's order. */
static uint32_t r10_copies(const struct rk_geom *g, uint64_t vc, uint64_t in, struct rk_loc *locs, uint32_t max)
{
	uint32_t n = g->nroles, cnt = 0;
	uint64_t idx = vc * g->r10_near;      /* < nstripes*near <= rows: no overflow */
	uint64_t row = idx / n;
	uint32_t dev = (uint32_t)(idx % n);
	if (g->r10_offset)
		row *= g->r10_far;
	uint64_t off = row * g->chunk + in;
	for (uint32_t k = 0; k < g->r10_near; k++) {
		uint32_t d = dev;
		uint64_t s = off;
		if (cnt < max)
			locs[cnt] = (struct rk_loc){ .stripe = vc, .role = d, .member_off = s };
		cnt++;
		for (uint32_t f = 1; f < g->r10_far; f++) {
			d = r10_far_step(g, d);
			s += g->r10_stride;
			if (cnt < max)
				locs[cnt] = (struct rk_loc){ .stripe = vc, .role = d, .member_off = s };
			cnt++;
		}
		if (++dev >= n) {
			dev = 0;
			off += g->chunk;
		}
	}
	return cnt < max ? cnt : max;
}

rk_err rk_geom_map(const struct rk_geom *g, uint64_t voff, struct rk_loc *loc, uint64_t *run)
{
	if (voff >= g->volume_size)
		return rk_fail(RK_E_RANGE, "volume offset %llu is past the end of the volume (%llu bytes)",
		               (unsigned long long)voff, (unsigned long long)g->volume_size);
	uint64_t r = 0;
	switch (g->level) {
	case RK_LEVEL_LINEAR:
		loc->stripe = voff / g->stripe_data;
		loc->role = (uint32_t)(voff / g->member_size);
		loc->member_off = voff % g->member_size;
		r = g->member_size - loc->member_off;
		break;
	case 1:
		loc->stripe = voff / g->stripe_data;
		loc->role = 0;
		loc->member_off = voff;
		r = g->volume_size - voff;
		break;
	case 10: {
		struct rk_loc l;
		uint64_t in = voff % g->chunk;
		r10_copies(g, voff / g->chunk, in, &l, 1);
		*loc = l;
		r = g->chunk - in;
		break;
	}
	default: {
		uint64_t s = voff / g->stripe_data, in = voff % g->stripe_data;
		uint32_t i = (uint32_t)(in / g->chunk);
		uint64_t co = in % g->chunk;
		loc->stripe = s;
		loc->member_off = s * g->chunk + co;
		if (g->level == 0) {
			loc->role = i;
		} else {
			uint32_t pd, qd;
			pq_roles(g, s, &pd, &qd);
			loc->role = data_role(g, pd, i);
		}
		r = g->chunk - co;
		break;
	}
	}
	if (run)
		*run = r;
	return RK_OK;
}

uint32_t rk_geom_copies(const struct rk_geom *g, uint64_t voff, struct rk_loc *locs, uint32_t max)
{
	if (voff >= g->volume_size || max == 0)
		return 0;
	if (g->level == 1) {
		uint32_t n = g->nroles < max ? g->nroles : max;
		for (uint32_t k = 0; k < n; k++)
			locs[k] = (struct rk_loc){ .stripe = voff / g->stripe_data, .role = k, .member_off = voff };
		return n;
	}
	if (g->level == 10)
		return r10_copies(g, voff / g->chunk, voff % g->chunk, locs, max);
	return rk_geom_map(g, voff, &locs[0], NULL) == RK_OK ? 1 : 0;
}

rk_err rk_geom_stripe_map(const struct rk_geom *g, uint64_t stripe, struct rk_stripe_map *m)
{
	if (!is_striped(g->level))
		return rk_fail(RK_E_INVAL, "geometry: RAID-%s has no parity stripes", rk_level_name(g->level));
	if (stripe >= g->nstripes)
		return rk_fail(RK_E_RANGE, "stripe %llu is past the last stripe (%llu)", (unsigned long long)stripe,
		               (unsigned long long)g->nstripes);
	uint32_t n = g->nroles, pd = RK_ROLE_NONE, qd = RK_ROLE_NONE;
	m->member_off = stripe * g->chunk;
	if (g->level == 0) {
		for (uint32_t i = 0; i < n; i++) {
			m->vol_role[i] = i;
			if (m->slot)
				m->slot[i] = i;
		}
		m->p_role = m->q_role = RK_ROLE_NONE;
		return RK_OK;
	}
	pq_roles(g, stripe, &pd, &qd);
	m->p_role = pd;
	m->q_role = qd;
	for (uint32_t i = 0; i < g->ndata; i++)
		m->vol_role[i] = data_role(g, pd, i);
	if (!m->slot)
		return RK_OK;
	if (g->level != 6) {
		/* RAID-4/5: slots in volume order, then P */
		for (uint32_t i = 0; i < g->ndata; i++)
			m->slot[m->vol_role[i]] = i;
		m->slot[pd] = g->ndata;
		return RK_OK;
	}
	/* md's raid6_d0 / raid6_idx_to_slot walk */
	int ddf = is_ddf(g);
	uint32_t d0 = ddf ? 0 : (qd == n - 1 ? 0 : qd + 1), cnt = 0, d = d0;
	do {
		uint32_t slot = cnt;
		if (ddf)
			cnt++;
		if (d == pd)
			slot = g->q_slots;
		else if (d == qd)
			slot = g->q_slots + 1;
		else if (!ddf)
			cnt++;
		m->slot[d] = slot;
		d = d + 1 < n ? d + 1 : 0;
	} while (d != d0);
	return RK_OK;
}

rk_err rk_geom_stripe(const struct rk_geom *g, uint64_t stripe, struct rk_stripe_roles *sr)
{
	if (g->level != 4 && g->level != 5 && g->level != 6)
		return rk_fail(RK_E_INVAL, "geometry: RAID-%s has no parity", rk_level_name(g->level));
	if (stripe >= g->nstripes)
		return rk_fail(RK_E_RANGE, "stripe %llu is past the last stripe (%llu)", (unsigned long long)stripe,
		               (unsigned long long)g->nstripes);
	uint32_t n = g->nroles, pd, qd;
	pq_roles(g, stripe, &pd, &qd);
	sr->member_off = stripe * g->chunk;
	sr->p_role = pd;
	sr->q_role = qd;
	if (g->level != 6) {
		for (uint32_t i = 0; i < g->ndata; i++)
			sr->data_role[i] = data_role(g, pd, i);
		return RK_OK;
	}
	/* data roles in Q slot order: walk from md's d0 skipping P and Q */
	uint32_t d0 = is_ddf(g) ? 0 : (qd == n - 1 ? 0 : qd + 1), d = d0, k = 0;
	do {
		if (d != pd && d != qd)
			sr->data_role[k++] = d;
		d = d + 1 < n ? d + 1 : 0;
	} while (d != d0);
	return RK_OK;
}

rk_err rk_geom_unmap(const struct rk_geom *g, uint32_t role, uint64_t member_off,
                     uint64_t *voff, enum rk_blk_kind *kind)
{
	if (role >= g->nroles || member_off >= g->member_size)
		return rk_fail(RK_E_RANGE, "role %u byte %llu is outside the geometry (%u roles of %llu bytes)", role,
		               (unsigned long long)member_off, g->nroles, (unsigned long long)g->member_size);
	*voff = 0;
	*kind = RK_BLK_DATA;
	switch (g->level) {
	case RK_LEVEL_LINEAR:
		*voff = (uint64_t)role * g->member_size + member_off;
		return RK_OK;
	case 1:
		*voff = member_off;
		return RK_OK;
	case 10: {
		uint64_t R = member_off / g->chunk, in = member_off % g->chunk, r;
		uint32_t f;
		if (g->r10_offset) {
			f = (uint32_t)(R % g->r10_far);
			r = R / g->r10_far;
		} else {
			uint64_t per = g->r10_stride / g->chunk;
			if (R / per >= g->r10_far) {
				*kind = RK_BLK_UNUSED;
				return RK_OK;
			}
			f = (uint32_t)(R / per);
			r = R % per;
		}
		/* undo F far steps: find the device whose F-th step lands on ROLE */
		uint32_t d = role;
		for (uint32_t k = 0; k < f; k++) {
			uint32_t found = RK_ROLE_NONE;
			for (uint32_t c = 0; c < g->nroles; c++)
				if (r10_far_step(g, c) == d) {
					found = c;
					break;
				}
			if (found == RK_ROLE_NONE) {
				*kind = RK_BLK_UNUSED;
				return RK_OK;
			}
			d = found;
		}
		uint64_t idx, vc;
		if (rk_mul_ovf(r, g->nroles, &idx) || rk_add_ovf(idx, d, &idx)) {
			*kind = RK_BLK_UNUSED;
			return RK_OK;
		}
		vc = idx / g->r10_near;
		if (vc >= g->nstripes) {
			*kind = RK_BLK_UNUSED;
			return RK_OK;
		}
		*voff = vc * g->chunk + in;
		return RK_OK;
	}
	default: {
		uint64_t s = member_off / g->chunk, in = member_off % g->chunk;
		if (s >= g->nstripes) {
			*kind = RK_BLK_UNUSED;
			return RK_OK;
		}
		if (g->level == 0) {
			*voff = s * g->stripe_data + (uint64_t)role * g->chunk + in;
			return RK_OK;
		}
		uint32_t pd, qd;
		pq_roles(g, s, &pd, &qd);
		if (role == pd || role == qd) {
			*kind = role == pd ? RK_BLK_P : RK_BLK_Q;
			*voff = s * g->stripe_data;
			return RK_OK;
		}
		*voff = s * g->stripe_data + (uint64_t)data_index(g, pd, role) * g->chunk + in;
		return RK_OK;
	}
	}
}
