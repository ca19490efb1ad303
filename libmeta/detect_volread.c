/* detect_volread.c: reading the volume as a hypothesis maps it, for the
 * file-system probes: through rk_geom_map, from the image that holds the
 * role, or rebuilt from the others (mirror copy, parity, P+Q) where the
 * role is missing, exactly as the engine would rebuild it. */
#include <stdlib.h>
#include <string.h>

#include "detect_int.h"
#include "rk_parity.h"

/* Where H puts VOFF (see detect_int.h). */
uint32_t dt_where(const struct dt_hyp *h, uint64_t voff, uint32_t *img, uint64_t *ioff, uint32_t max)
{
	struct rk_loc locs[8];
	uint32_t n = rk_geom_copies(&h->g, voff, locs, 8), k = 0;
	for (uint32_t j = 0; j < n && k < max; j++) {
		int32_t im = h->role_img[locs[j].role];
		if (im < 0)
			continue;
		img[k] = (uint32_t)im;
		ioff[k] = h->off[locs[j].role] + locs[j].member_off;
		k++;
	}
	/* a RAID-4/5 of two keeps a copy of each data block as its P (the
	 * XOR of one block), at the same member offset: the place of a
	 * block whose role is missing (seed 2553: the one image of such
	 * readings was compared byte by byte, every one, until the budget
	 * ran out) */
	uint32_t data_role[1];
	struct rk_stripe_roles sr = { .data_role = data_role };
	if (!k && n && max && (h->g.level == 4 || h->g.level == 5) && h->g.ndata == 1 &&
	    !rk_geom_stripe(&h->g, locs[0].stripe, &sr) && sr.p_role < h->g.nroles && h->role_img[sr.p_role] >= 0) {
		img[0] = (uint32_t)h->role_img[sr.p_role];
		ioff[0] = h->off[sr.p_role] + locs[0].member_off;
		k = 1;
	}
	return k;
}

/* Reads LEN (<= DT_BLK) bytes at member offset M of role R into BUF: 0 ok,
 * 1 missing role, -1 error. */
static int role_read(struct dt_ctx *c, const struct dt_hyp *h, uint32_t r, uint64_t m, uint8_t *buf, size_t len)
{
	if (h->role_img[r] < 0)
		return 1;
	uint32_t i = (uint32_t)h->role_img[r];
	uint64_t at = h->off[r] + m, base = at & ~(uint64_t)(DT_BLK - 1);
	if (at - base + len <= DT_BLK) {   /* through the cache: hypotheses share reads */
		const uint8_t *b = dt_block(c, i, base);
		if (b) {
			memcpy(buf, b + (at - base), len);
			return 0;
		}
	}
	return dt_read(c, i, at, buf, len) ? -1 : 0;
}

/* Rebuilds LEN bytes of a missing role's piece of stripe S at member offset
 * M from the other roles (RAID-4/5/6), every missing role of the stripe at
 * once; the piece of role WANT lands in OUT.  0 ok, 1 not rebuildable. */
static int rebuild(struct dt_ctx *c, const struct dt_hyp *h, uint64_t s, uint64_t m, uint32_t want,
                   uint8_t *out, size_t len)
{
	const struct rk_geom *g = &h->g;
	uint32_t vol_role[DT_MAX_ROLES], slot[DT_MAX_ROLES], miss[2], nmiss = 0;
	struct rk_stripe_map sm = { .vol_role = vol_role, .slot = slot };
	if (rk_geom_stripe_map(g, s, &sm))
		return 1;
	uint8_t *rb[DT_MAX_ROLES], *mem = calloc((size_t)g->nroles + 1, len);
	if (!mem)
		return 1;
	int rc = 0;
	for (uint32_t r = 0; r < g->nroles && !rc; r++) {
		rb[r] = mem + (size_t)r * len;
		int e = role_read(c, h, r, m, rb[r], len);
		if (e < 0)
			rc = 1;
		else if (e > 0) {
			if (nmiss == g->nparity)
				rc = 1;
			else
				miss[nmiss++] = r;
		}
	}
	if (!rc && g->level != 6) {
		memset(rb[miss[0]], 0, len);
		for (uint32_t r = 0; r < g->nroles; r++)
			if (r != miss[0])
				for (size_t b = 0; b < len; b++)
					rb[miss[0]][b] ^= rb[r][b];
	} else if (!rc) {
		uint32_t nslots = g->q_slots + 2;
		void *ptrs[RK_PARITY_MAX_DISKS];
		rk_parity_stripe_ptrs(ptrs, nslots, slot, g->nroles, rb, 0, mem + (size_t)g->nroles * len);
		int fa = (int)slot[miss[0]], fb = nmiss > 1 ? (int)slot[miss[1]] : -1;
		if (fb >= 0 && fb < fa) {
			int t = fa; fa = fb; fb = t;
		}
		rk_parity_recover((int)nslots, len, fa, fb, ptrs);
	}
	if (!rc)
		memcpy(out, rb[want], len);
	free(mem);
	return rc;
}

/* Volume read (see detect_int.h). */
int dt_vread(struct dt_ctx *c, const struct dt_hyp *h, uint64_t voff, uint8_t *buf, size_t len)
{
	while (len) {
		struct rk_loc loc;
		uint64_t run;
		if (rk_geom_map(&h->g, voff, &loc, &run))
			return 1;
		size_t n = len < DT_BLK ? len : DT_BLK;
		if (run < n)
			n = (size_t)run;
		int e = role_read(c, h, loc.role, loc.member_off, buf, n);
		if (e > 0) {
			struct rk_loc locs[8];
			uint32_t nc = rk_geom_copies(&h->g, voff, locs, 8);
			e = 1;
			for (uint32_t j = 1; j < nc && e > 0; j++)
				e = role_read(c, h, locs[j].role, locs[j].member_off, buf, n);
			if (e > 0 && h->g.nparity)
				e = rebuild(c, h, loc.stripe, loc.member_off, loc.role, buf, n);
		}
		if (e)
			return e;
		buf += n;
		voff += n;
		len -= n;
	}
	return 0;
}
