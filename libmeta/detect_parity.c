/* detect_parity.c: the algebra of redundancy as a test of a hypothesis.
 * Over rows sampled across the whole members (DT_BLK bytes of every role at
 * one member offset): RAID-4/5 rows XOR to zero, RAID-6 rows satisfy P and
 * Q in the hypothesis's data order (md's or DDF's Q coefficients, so Q
 * fixes the order of the data blocks), mirror copies are identical.  A
 * parity block that is zero while a data block of its row is not tells the
 * parity is not where the hypothesis puts it ("placement"): that is what
 * fixes chunk and rotation when the volume is sparse. */
#include <stdlib.h>
#include <string.h>

#include "detect_int.h"
#include "rk_parity.h"
#include "rk_util.h"

static uint8_t zero_blk[DT_BLK];

#define QUICK_MIXED 16u    /* mixed rows (detect_rotation.c) a quick check adds */
#define FULL_MIXED 256u

#define FILL_DISTINCT 16u   /* byte values in a sector of a fill pattern, at most */

/* Whether the row's first non-zero data block of RB is no fill pattern in
 * its first sector.  Parity on a zero block while the data XOR to zero
 * means two data blocks are equal: a parity copy read as data (a wrong
 * rotation or order), but the row's own data when they are a fill pattern
 * (NTFS's $LogFile is 0xFF): seed 2516, a RAID-4 of 3 on the NTFS sample,
 * lost 12 points to its own equal chunks in the quick rows and was read
 * as RAID-5. */
static int not_fill(const struct rk_geom *g, const struct rk_stripe_map *sm, uint8_t *const *rb, size_t len)
{
	for (uint32_t r = 0; r < g->nroles; r++)
		if (r != sm->p_role && r != sm->q_role && rb[r] && !rk_buf_is_zero(rb[r], len))
			return dt_distinct_bytes(rb[r], len < 512 ? len : 512) > FILL_DISTINCT;
	return 0;
}

/* See detect_int.h. */
int dt_parity_row(struct dt_ctx *c, struct dt_hyp *h, uint64_t s, uint64_t j, size_t len)
{
	const struct rk_geom *g = &h->g;
	uint32_t vol_role[DT_MAX_ROLES], slot[DT_MAX_ROLES];
	struct rk_stripe_map sm = { .vol_role = vol_role, .slot = slot };
	if (rk_geom_stripe_map(g, s, &sm))
		return 1;
	uint8_t *rb[DT_MAX_ROLES], scratch[2][DT_BLK];
	uint32_t miss[2], nmiss = 0;
	int any_data = 0;
	for (uint32_t r = 0; r < g->nroles; r++) {
		if (h->role_img[r] < 0) {
			if (nmiss == 2)
				return 1;
			miss[nmiss] = r;
			rb[r] = scratch[nmiss++];
			continue;
		}
		const uint8_t *b = dt_block(c, (uint32_t)h->role_img[r], h->off[r] + sm.member_off + j);
		if (!b)
			return 1;
		rb[r] = (uint8_t *)(uintptr_t)b;
		if (r != sm.p_role && r != sm.q_role && !rk_buf_is_zero(b, len))
			any_data = 1;
	}
	if (nmiss >= g->nparity)
		return 1;   /* nothing left to check with */
	h->rows++;
	int nz = any_data;
	for (uint32_t r = 0; r < g->nroles && !nz; r++)
		if (h->role_img[r] >= 0 && !rk_buf_is_zero(rb[r], len))
			nz = 1;
	if (!nz)
		return 0;
	h->rows_nz++;
	int bad;
	if (g->level != 6) {
		void *ptrs[DT_MAX_ROLES];
		for (uint32_t r = 0; r < g->nroles; r++)
			ptrs[r] = rb[r];
		bad = rk_parity()->xor_check((int)g->nroles, len, ptrs);
	} else {
		void *ptrs[RK_PARITY_MAX_DISKS];
		uint32_t nslots = g->q_slots + 2;
		rk_parity_stripe_ptrs(ptrs, nslots, slot, g->nroles, rb, 0, zero_blk);
		if (nmiss) {
			int fa = (int)slot[miss[0]];
			rk_parity_recover((int)nslots, len, fa, -1, ptrs);
			/* the rebuilt block came from P (or the data for P/Q): Q or P checks it */
		}
		bad = rk_parity()->check((int)nslots, len, ptrs);
	}
	if (bad)
		h->rows_bad++;
	else
		h->rows_ok++;
	if (!bad && any_data && h->role_img[sm.p_role] >= 0 && rk_buf_is_zero(rb[sm.p_role], len) &&
	    not_fill(g, &sm, rb, len))
		h->place_bad++;
	return 0;
}

/* Mirror rows: every present copy of volume byte V equal. */
static void mirror_row(struct dt_ctx *c, struct dt_hyp *h, uint64_t v, size_t len)
{
	uint32_t img[8];
	uint64_t ioff[8];
	uint32_t n = dt_where(h, v, img, ioff, 8);
	if (n < 2)
		return;
	const uint8_t *b0 = dt_block(c, img[0], ioff[0]);
	if (!b0)
		return;
	h->rows++;
	int nz = !rk_buf_is_zero(b0, len), bad = 0;
	for (uint32_t k = 1; k < n; k++) {
		const uint8_t *b = dt_block(c, img[k], ioff[k]);
		if (!b)
			return;
		nz |= !rk_buf_is_zero(b, len);
		bad |= memcmp(b0, b, len) != 0;
	}
	if (!nz)
		return;
	h->rows_nz++;
	if (bad)
		h->rows_bad++;
	else
		h->rows_ok++;
}

/* See detect_int.h.  A row of zeros proves nothing: a full check (QUICK
 * 0) visits up to four times SAMPLES places until SAMPLES non-zero rows
 * are found (a sparse volume keeps its data in few places). */
void dt_check_redundancy(struct dt_ctx *c, struct dt_hyp *h, uint32_t samples, uint32_t quick)
{
	const struct rk_geom *g = &h->g;
	h->rows = h->rows_nz = h->rows_ok = h->rows_bad = h->place_bad = 0;
	h->checked = 0;
	size_t len = g->chunk && g->chunk < DT_BLK ? (size_t)g->chunk : DT_BLK;
	uint32_t ncand = quick ? samples : samples * 4;   /* quick checks stay cheap (the read budget) */
	for (uint32_t k = 0; k < ncand && h->rows_nz < samples; k++) {
		if (quick && h->rows_bad >= quick)
			break;
		dt_cache_trim(c);
		if (g->nparity) {
			/* every other row from the first stripes, where a file system
			 * keeps its metadata; the others spread over the members */
			uint64_t span = k % 2 ? (g->nstripes < 4096 ? g->nstripes : 4096) : g->nstripes;
			/* spread over the span even when it has fewer stripes than
			 * rows are sampled (span / ncand * k would put every row
			 * in stripe 0, where rotations and data orders agree) */
			uint64_t s = span * k / ncand + (k * 7919u) % (span / ncand + 1);
			if (s >= g->nstripes)
				s = g->nstripes - 1;
			uint64_t j = g->chunk > len ? (uint64_t)(k * 31u) % (g->chunk / len) * len : 0;
			dt_parity_row(c, h, s, j, len);
		} else if (g->level == 1 || g->level == 10) {
			uint64_t span = k % 2 && g->volume_size > (256ull << 20) ? 256ull << 20 : g->volume_size;
			uint64_t step = span / ncand;
			uint64_t v = (step * k + (uint64_t)(k * 7919u) * DT_BLK % (step + 1)) & ~(uint64_t)(DT_BLK - 1);
			if (v + len <= g->volume_size)
				mirror_row(c, h, v, len);
		}
	}
	dt_check_mixed(c, h, quick ? QUICK_MIXED : FULL_MIXED);
	h->checked = h->rows > 0;
}

/* The 512-byte sector of image I that holds byte OFF, through the cache
 * (4 KiB blocks at aligned offsets, so anchors close together share
 * reads).  OFF need not be sector-aligned: an anchor's ioff is the byte
 * of its signature, and 512 bytes read from there could leave the block. */
static const uint8_t *sector_at(struct dt_ctx *c, uint32_t i, uint64_t off)
{
	off &= ~(uint64_t)511;
	uint64_t base = off & ~(uint64_t)(DT_BLK - 1);
	const uint8_t *b = dt_block(c, i, base);
	return b ? b + (off - base) : NULL;
}

/* The bytes of anchor A's sector that are its own: the sector, or an
 * ext4 inode's own bytes, checksummed -- the row's other data need be
 * zero there only (seed 2619: an inode table's first sector, inode 1's
 * times on one member, inode 2 on the parity). */
static void anchor_span(const struct dt_ctx *c, const struct dt_anchor *a, uint32_t *at, uint32_t *len)
{
	*at = 0;
	*len = 512;
	if (a->kind == DT_EXT_INO && c->ext.isz && a->ioff % 512 + c->ext.isz <= 512) {
		*at = (uint32_t)(a->ioff % 512);
		*len = c->ext.isz;
	}
}

/* Whether A and B (N bytes) hold zeros at the same places. */
static int same_zeros(const uint8_t *a, const uint8_t *b, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (!a[i] != !b[i])
			return 0;
	return 1;
}

/* Whether H rebuilds the volume sector at V with PB's bytes [AT, AT+LEN):
 * a RAID-6 that lost both the copied block's role and another data role
 * of its row reads both from P and Q, and so proves the copy -- P alone
 * could not (seed 3437: a RAID-6 of 4 that kept only P and Q, whose 76
 * anchors on P counted for readings of P as data only). */
static int rebuilt_copy(struct dt_ctx *c, const struct dt_hyp *h, uint64_t v, const uint8_t *pb, uint32_t at,
                        uint32_t len)
{
	uint8_t s[512];
	return h->g.nparity == 2 && !dt_vread(c, h, v, s, sizeof s) && !memcmp(s + at, pb + at, len);
}

/* See detect_int.h. */
int dt_parity_copy(struct dt_ctx *c, const struct dt_hyp *h, const struct dt_anchor *a, uint64_t m, int q)
{
	const struct rk_geom *g = &h->g;
	uint64_t vv[2] = { a->voff, a->voff2 };
	for (int t = 0; t < 2; t++) {
		struct rk_loc loc;
		if (vv[t] == DT_NONE || rk_geom_copies(g, vv[t], &loc, 1) != 1 || loc.member_off != m)
			continue;   /* not the data of this very row and place */
		uint32_t vol_role[DT_MAX_ROLES], slot[DT_MAX_ROLES];
		struct rk_stripe_map sm = { .vol_role = vol_role, .slot = slot };
		/* a file's last block on Q in another slot is that block scaled:
		 * its zeros where they were, which is all such an anchor says */
		int scaled = q && dt_lastblock_kind(a->kind);
		if (g->ndata > DT_MAX_ROLES || g->nroles > DT_MAX_ROLES || rk_geom_stripe_map(g, loc.stripe, &sm) ||
		    sm.p_role == loc.role || (q && !scaled && slot[loc.role] != 0))
			continue;
		scaled &= slot[loc.role] != 0;
		const uint8_t *pb = sector_at(c, a->img, a->ioff);
		int ok = pb != NULL, own = h->role_img[loc.role] >= 0;
		uint32_t at, len;
		anchor_span(c, a, &at, &len);
		/* P equals that data block when the row's other data blocks are
		 * zero: the present ones are read; a missing one is then zero by
		 * P itself when the copied block is present and equal, and
		 * unproven when the copied block is missing too */
		int unproven = 0;
		for (uint32_t d = 0; d < g->ndata && ok; d++) {
			uint32_t r = vol_role[d];
			if (h->role_img[r] < 0) {
				ok = r == loc.role || own;
				unproven |= !ok;
				continue;
			}
			const uint8_t *b = sector_at(c, (uint32_t)h->role_img[r], h->off[r] + m);
			ok = b && (r != loc.role ? rk_buf_is_zero(b + at, len) :
			           scaled ? same_zeros(b + at, pb + at, len) : !memcmp(b + at, pb + at, len));
		}
		if (ok || (unproven && pb && !scaled && rebuilt_copy(c, h, vv[t] - a->ioff % 512, pb, at, len)))
			return 1;
	}
	return 0;
}

/* See detect_int.h. */
int dt_parity_alone(struct dt_ctx *c, const struct dt_hyp *h, const struct dt_anchor *a, uint32_t r, uint64_t m)
{
	const struct rk_geom *g = &h->g;
	uint32_t vol_role[DT_MAX_ROLES], slot[DT_MAX_ROLES];
	struct rk_stripe_map sm = { .vol_role = vol_role, .slot = slot };
	if (!g->chunk || g->ndata > DT_MAX_ROLES || g->nroles > DT_MAX_ROLES || rk_geom_stripe_map(g, m / g->chunk, &sm) ||
	    (sm.p_role != r && sm.q_role != r))
		return 0;
	uint32_t at, len;
	anchor_span(c, a, &at, &len);
	for (uint32_t d = 0; d < g->ndata; d++) {
		uint32_t q = vol_role[d];
		if (h->role_img[q] < 0)
			continue;
		const uint8_t *b = sector_at(c, (uint32_t)h->role_img[q], h->off[q] + m);
		if (!b || !rk_buf_is_zero(b + at, len))
			return 0;
	}
	return 1;
}

#define FIND_SPAN (8u << 20)   /* the data starts searched: 0 to 8 MiB */
#define FIND_PIECE (1u << 20)  /* read at a time */
#define FIND_ROWS 24u

/* The block role R holds at member offset M under H, rebuilt from the
 * other roles through P (into E); 0 when a block is unreadable, R is Q
 * there, or the block is zero or a fill pattern (found everywhere). */
static int rebuilt_block(struct dt_ctx *c, const struct dt_hyp *h, uint32_t r, uint64_t m, uint8_t *e)
{
	uint64_t v;
	enum rk_blk_kind kind;
	if (rk_geom_unmap(&h->g, r, m, &v, &kind) || kind == RK_BLK_Q || kind == RK_BLK_UNUSED)
		return 0;
	memset(e, 0, DT_BLK);
	for (uint32_t q = 0; q < h->g.nroles; q++) {
		if (q == r)
			continue;
		if (rk_geom_unmap(&h->g, q, m, &v, &kind) || kind == RK_BLK_UNUSED || h->role_img[q] < 0)
			return 0;
		if (kind == RK_BLK_Q)
			continue;
		const uint8_t *b = dt_block(c, (uint32_t)h->role_img[q], h->off[q] + m);
		if (!b)
			return 0;
		for (uint32_t k = 0; k < DT_BLK; k++)
			e[k] ^= b[k];
	}
	return !rk_buf_is_zero(e, DT_BLK) && dt_distinct_bytes(e, 512) > FILL_DISTINCT;
}

/* See detect_int.h. */
int dt_rebuilt_start(struct dt_ctx *c, const struct dt_hyp *h, uint32_t r, uint32_t i, uint64_t *start)
{
	if (!h->g.nparity || h->missing != 1 || h->role_img[r] >= 0)
		return 0;
	uint8_t *e = malloc(DT_BLK), *w = malloc(FIND_PIECE + DT_BLK);
	int found = 0, reads = 0;
	uint64_t span = h->g.member_size < (64ull << 20) ? h->g.member_size : 64ull << 20;
	for (uint32_t t = 0; e && w && t < FIND_ROWS && !found && reads < 2; t++) {
		uint64_t m = span / FIND_ROWS * t / DT_BLK * DT_BLK;
		dt_cache_trim(c);
		if (!rebuilt_block(c, h, r, m, e))
			continue;
		reads++;
		/* in pieces (the memory bound), each overlapping the next by a block */
		for (uint64_t at = 0; at < FIND_SPAN && !found; at += FIND_PIECE) {
			uint64_t len = c->img[i].size > m + at ? c->img[i].size - m - at : 0;
			if (len > FIND_PIECE + DT_BLK)
				len = FIND_PIECE + DT_BLK;
			if (len < DT_BLK || dt_read(c, i, m + at, w, len))
				break;
			for (uint64_t p = 0; p + DT_BLK <= len && !found; p += 512)
				if (!memcmp(w + p, e, DT_BLK)) {
					*start = at + p;
					found = 1;
				}
		}
	}
	free(e);
	free(w);
	return found;
}
