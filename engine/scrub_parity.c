/* scrub_parity.c: checking and repairing RAID-4/5/6 stripes: the checkers'
 * read-only pass, the per-sector analysis (RAID-6 culprits located with
 * rk_parity_r6_locate), the repair of what it finds, and the rebuild of
 * unreadable blocks from the rest of the stripe. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scrub_int.h"

rk_err check_scratch_init(struct scrub_state *sc, struct check_scratch *w)
{
	const struct rk_geom *g = sc->g;
	w->p_calc = scrub_alloc_aligned(SLICE_BYTES);
	w->q_calc = scrub_alloc_aligned(SLICE_BYTES);
	w->rebuilt = scrub_alloc_aligned(SLICE_BYTES);
	w->ptrs = calloc(sc->nslots + 2, sizeof *w->ptrs);
	w->xor_ptrs = calloc(sc->nslots + 2, sizeof *w->xor_ptrs);
	w->vol_role = calloc(g->nroles, sizeof *w->vol_role);
	w->slot = calloc(g->nroles, sizeof *w->slot);
	w->role_buf = calloc(g->nroles, sizeof *w->role_buf);
	size_t piece = STAGE_BYTES / sc->width / 4096 * 4096;
	w->stage_piece = piece < 4096 ? 4096 : piece > STAGE_PIECE_MAX ? STAGE_PIECE_MAX : piece;
	w->stage = scrub_alloc_aligned(w->stage_piece * sc->width);
	w->stage_blocks = calloc(sc->width, sizeof *w->stage_blocks);
	if (!w->p_calc || !w->q_calc || !w->rebuilt || !w->ptrs || !w->xor_ptrs || !w->vol_role || !w->slot ||
	    !w->role_buf || !w->stage || !w->stage_blocks)
		return rk_fail(RK_E_NOMEM, "scrub: out of memory");
	return RK_OK;
}

void check_scratch_free(struct check_scratch *w)
{
	RK_FREE_ALL(w->p_calc, w->q_calc, w->rebuilt, w->ptrs, w->xor_ptrs, w->vol_role, w->slot, w->role_buf, w->stage,
	            w->stage_blocks);
}

/* W's role_buf gets the buffers of the stripe's blocks (NULL: missing). */
static void gather_role_bufs(const struct scrub_state *sc, struct check_scratch *w, const struct scrub_block *blocks)
{
	for (uint32_t r = 0; r < sc->g->nroles; r++)
		w->role_buf[r] = blocks[r].buf;
}

/* Which of the stored parity blocks differ from the recomputed ones. */
enum slice_diff {
	SLICE_CLEAN = 0,
	SLICE_P_DIFFERS = 1,     /* never set when the slice rebuilt a data block from P */
	SLICE_Q_DIFFERS = 2,
};

/* P (and Q) of column bytes [col, col+n) of a stripe with at most one block
 * missing (MISSING, or RK_ROLE_NONE) into W's p_calc and q_calc, a
 * missing data block rebuilt from P into W's rebuilt first.  W's slot and
 * role_buf hold the stripe's map and blocks. */
static int parity_slice(struct scrub_state *sc, struct check_scratch *w, const struct scrub_block *blocks,
                        const struct rk_stripe_map *m, uint32_t missing, uint64_t col, size_t n)
{
	const struct rk_geom *g = sc->g;
	const uint32_t nslots = sc->nslots, pslot = sc->pslot;
	int missing_data = missing != RK_ROLE_NONE && missing != m->p_role && missing != m->q_role;
	rk_parity_stripe_ptrs(w->ptrs, pslot, w->slot, g->nroles, w->role_buf, (size_t)col, sc->zero);
	const uint8_t *p = blocks[m->p_role].buf ? blocks[m->p_role].buf + col : NULL;
	const uint8_t *q = g->level == 6 && blocks[m->q_role].buf ? blocks[m->q_role].buf + col : NULL;
	if (missing_data) {
		/* rebuild the missing data block from P and the other data */
		uint32_t x = 0;
		for (uint32_t k = 0; k < pslot; k++)
			if (k != w->slot[missing])
				w->xor_ptrs[x++] = w->ptrs[k];
		w->xor_ptrs[x++] = (void *)(uintptr_t)p;
		w->xor_ptrs[x++] = w->rebuilt;
		sc->algo->xor_gen((int)x, n, w->xor_ptrs);
		w->ptrs[w->slot[missing]] = w->rebuilt;
	}
	w->ptrs[pslot] = w->p_calc;
	if (g->level == 6) {
		w->ptrs[pslot + 1] = w->q_calc;
		sc->algo->gen((int)nslots, n, w->ptrs);
	} else {
		sc->algo->xor_gen((int)nslots, n, w->ptrs);
	}
	return (p && !missing_data && memcmp(w->p_calc, p, n) ? SLICE_P_DIFFERS : SLICE_CLEAN) |
	       (q && memcmp(w->q_calc, q, n) ? SLICE_Q_DIFFERS : SLICE_CLEAN);
}

int parity_piece_dirty(struct scrub_state *sc, struct check_scratch *w, const struct scrub_block *blocks,
                       uint64_t s, uint64_t a, uint64_t end)
{
	const struct rk_geom *g = sc->g;
	uint32_t missing, nmissing = scrub_absent(sc, blocks, &missing);
	if (nmissing >= g->nparity)
		return 0;   /* nothing left to check: counted as unchecked */
	struct rk_stripe_map m = { .vol_role = w->vol_role, .slot = w->slot };
	if (rk_geom_stripe_map(g, s, &m))
		return 1;   /* the analysis reports the error */
	gather_role_bufs(sc, w, blocks);
	for (uint64_t col = a; col < end; col += SLICE_BYTES) {
		size_t n = slice_len(col, end);
		if (nmissing) {
			if (parity_slice(sc, w, blocks, &m, missing, col, n))
				return 1;
			continue;
		}
		rk_parity_stripe_ptrs(w->ptrs, sc->nslots, w->slot, g->nroles, w->role_buf, (size_t)col, sc->zero);
		if (g->level == 6 ? sc->algo->check((int)sc->nslots, n, w->ptrs)
		                  : sc->algo->xor_check((int)sc->nslots, n, w->ptrs))
			return 1;
	}
	return 0;
}

/* One slice of a stripe under analysis. */
struct parity_slice_view {
	const struct rk_stripe_map *m;
	struct scrub_block *blocks;
	uint32_t missing, nmissing;
	int missing_data;
	const uint8_t *p, *q;            /* stored P and Q of the slice (NULL when missing) */
	const uint8_t *p_cmp, *q_cmp;    /* what the recomputed ones are compared with */
	uint64_t col;
	size_t n;
};

static int sector_differs(const struct scrub_state *sc, const struct parity_slice_view *v, size_t a, size_t z)
{
	const struct check_scratch *w = sc->analysis;
	return !((v->missing_data || !memcmp(w->p_calc + a, v->p_cmp + a, z)) && !memcmp(w->q_calc + a, v->q_cmp + a, z));
}

/* RAID-6 with every block there: the sector's culprit (*role at fault). */
static enum sector_verdict r6_sector(const struct scrub_state *sc, const struct parity_slice_view *v, size_t a,
                                     size_t z, uint32_t *role)
{
	const struct check_scratch *w = sc->analysis;
	uint32_t data_slot = 0;
	switch (rk_parity_r6_locate(w->p_calc + a, v->p_cmp + a, w->q_calc + a, v->q_cmp + a, z, sc->g->q_slots,
	                            &data_slot)) {
	case RK_CULPRIT_NONE:
		return SECTOR_CLEAN;
	case RK_CULPRIT_P:
		*role = v->m->p_role;
		return SECTOR_LOCATED;
	case RK_CULPRIT_Q:
		*role = v->m->q_role;
		return SECTOR_LOCATED;
	case RK_CULPRIT_DATA:
		if (sc->slot_role[data_slot] == RK_ROLE_NONE)
			return SECTOR_UNLOCATED;   /* a DDF slot without a block */
		*role = sc->slot_role[data_slot];
		return SECTOR_LOCATED;
	default:
		return SECTOR_UNLOCATED;
	}
}

/* The verdict of a differing sector and the sentence that says why. */
static enum sector_verdict classify_sector(const struct scrub_state *sc, const struct parity_slice_view *v, size_t a,
                                           size_t z, uint32_t *role, char *why, size_t cap)
{
	const struct rk_geom *g = sc->g;
	if (v->nmissing) {
		snprintf(why, cap, "role %u is %s: the mismatch is found but cannot be located", v->missing,
		         sc->unreadable_here[v->missing] ? "unreadable here" : "missing");
		return SECTOR_UNLOCATED;
	}
	if (g->level != 6) {
		snprintf(why, cap, "parity disagrees with the data; RAID-%d parity cannot tell which block is wrong",
		         (int)g->level);
		return SECTOR_UNLOCATED;
	}
	enum sector_verdict verdict = r6_sector(sc, v, a, z, role);
	if (verdict == SECTOR_LOCATED && *role == v->m->p_role)
		snprintf(why, cap, "P disagrees with the data; Q agrees");
	else if (verdict == SECTOR_LOCATED && *role == v->m->q_role)
		snprintf(why, cap, "Q disagrees with the data; P agrees");
	else if (verdict == SECTOR_LOCATED)
		snprintf(why, cap, "P and Q syndromes both point at this data block");
	else
		snprintf(why, cap, "P and Q disagree in a way no single bad block explains");
	return verdict;
}

/* Where the run of sectors from A with VERDICT (and ROLE) ends. */
static size_t extend_run(const struct scrub_state *sc, const struct parity_slice_view *v, size_t a,
                         enum sector_verdict verdict, uint32_t role)
{
	size_t end = a + sector_len(a, v->n);
	while (end < v->n) {
		size_t z = sector_len(end, v->n);
		if (!sector_differs(sc, v, end, z))
			break;
		enum sector_verdict next = SECTOR_UNLOCATED;
		uint32_t next_role = role;
		if (!v->nmissing && sc->g->level == 6)
			next = r6_sector(sc, v, end, z, &next_role);
		if (next != verdict || (verdict == SECTOR_LOCATED && next_role != role))
			break;
		end += z;
	}
	return end;
}

/* Repairs sectors [a, end) of the slice: the located block gets its
 * proven content, else P (and Q) are recomputed from the data. */
static rk_err repair_run(struct scrub_state *sc, const struct parity_slice_view *v, enum sector_verdict verdict,
                         uint32_t role, size_t a, size_t end, enum rk_scrub_fix *fix)
{
	const struct check_scratch *w = sc->analysis;
	const struct rk_stripe_map *m = v->m;
	const struct scrub_block *blocks = v->blocks;
	size_t len = end - a;
	rk_err e;
	if (verdict == SECTOR_LOCATED) {
		const uint8_t *src;
		if (role == m->p_role) {
			src = w->p_calc + a;
		} else if (role == m->q_role) {
			src = w->q_calc + a;
		} else {
			/* D ^ Pd: P is right, the data block is off by the P syndrome */
			const uint8_t *d = blocks[role].buf + v->col + a;
			for (size_t i = 0; i < len; i++)
				sc->tmp[i] = d[i] ^ w->p_calc[a + i] ^ v->p_cmp[a + i];
			src = sc->tmp;
		}
		if ((e = scrub_write(sc, role, src, len, blocks[role].member_off + v->col + a)))
			return e;
		*fix = RK_SCRUB_FIX_PROVEN;
		return RK_OK;
	}
	if (v->p && !v->missing_data && memcmp(w->p_calc + a, v->p + a, len) &&
	    (e = scrub_write(sc, m->p_role, w->p_calc + a, len, blocks[m->p_role].member_off + v->col + a)))
		return e;
	if (v->q && memcmp(w->q_calc + a, v->q + a, len) &&
	    (e = scrub_write(sc, m->q_role, w->q_calc + a, len, blocks[m->q_role].member_off + v->col + a)))
		return e;
	*fix = RK_SCRUB_FIX_CONSISTENT;
	return RK_OK;
}

/* Sector by sector over a slice that differs: runs of one verdict. */
static rk_err analyse_slice(struct scrub_state *sc, struct scrub_batch *b, uint32_t si,
                            const struct parity_slice_view *v)
{
	for (size_t a = 0; a < v->n;) {
		size_t z = sector_len(a, v->n);
		if (!sector_differs(sc, v, a, z)) {
			a += z;
			continue;
		}
		char why[200];
		uint32_t role = RK_ROLE_NONE;
		enum sector_verdict verdict = classify_sector(sc, v, a, z, &role, why, sizeof why);
		size_t end = extend_run(sc, v, a, verdict, role);
		sc->nfault = 0;
		if (verdict == SECTOR_LOCATED) {
			sc->nfault = 1;
			sc->fault[0] = role;
		}
		enum rk_scrub_fix fix = RK_SCRUB_FIX_NONE;
		if (sc->opts->repair && !sc->report_only) {
			rk_err e = repair_run(sc, v, verdict, role, a, end, &fix);
			if (e)
				return e;
		}
		scrub_add_run(sc, b->first_stripe + si, b->col_start + v->col + a, b->col_start + v->col + end, verdict,
		              fix, why, v->blocks, b->col_start);
		a = end;
	}
	return RK_OK;
}

/* Full analysis of column bytes [ca, cb) (relative to the batch's
 * col_start) of stripe SI: per-sector verdicts, regions, repair.  Blocks
 * with a NULL buffer are missing here (absent, or unreadable). */
rk_err check_parity_range(struct scrub_state *sc, struct scrub_batch *b, uint32_t si, uint64_t ca, uint64_t cb)
{
	const struct rk_geom *g = sc->g;
	struct check_scratch *w = sc->analysis;
	struct rk_stripe_map m = { .vol_role = w->vol_role, .slot = w->slot };
	rk_err e = rk_geom_stripe_map(g, b->first_stripe + si, &m);
	if (e)
		return e;
	struct parity_slice_view v = { .m = &m, .blocks = batch_stripe(b, si) };
	v.nmissing = scrub_absent(sc, v.blocks, &v.missing);
	if (v.nmissing >= g->nparity)
		return RK_OK;
	for (uint32_t k = 0; k < g->q_slots; k++)
		sc->slot_role[k] = RK_ROLE_NONE;
	for (uint32_t r = 0; r < g->nroles; r++)
		if (w->slot[r] < g->q_slots)
			sc->slot_role[w->slot[r]] = r;
	v.missing_data = v.nmissing && v.missing != m.p_role && v.missing != m.q_role;
	gather_role_bufs(sc, w, v.blocks);
	for (uint64_t col = ca; col < cb; col += SLICE_BYTES) {
		v.col = col;
		v.n = slice_len(col, cb);
		if (!parity_slice(sc, w, v.blocks, &m, v.missing, col, v.n))
			continue;
		v.p = v.blocks[m.p_role].buf ? v.blocks[m.p_role].buf + col : NULL;
		v.q = g->level == 6 && v.blocks[m.q_role].buf ? v.blocks[m.q_role].buf + col : NULL;
		v.p_cmp = v.p ? v.p : w->p_calc;
		v.q_cmp = v.q ? v.q : w->q_calc;
		if ((e = analyse_slice(sc, b, si, &v)))
			return e;
	}
	return RK_OK;
}

const uint8_t *parity_rebuild_slice(struct scrub_state *sc, const struct scrub_block *blocks, uint32_t k,
                                    uint64_t col, size_t n)
{
	const struct rk_geom *g = sc->g;
	struct check_scratch *w = sc->analysis;
	if (g->level == 6) {
		/* every lost block (at most two) in slot order, as rk_parity_recover wants them */
		int fail[2] = { -1, -1 };
		uint8_t *out[2] = { w->p_calc, w->q_calc };
		uint32_t nlost = 0;
		gather_role_bufs(sc, w, blocks);
		rk_parity_stripe_ptrs(w->ptrs, sc->nslots, w->slot, g->nroles, w->role_buf, (size_t)col, sc->zero);
		for (uint32_t i = 0; i < sc->nslots && nlost < 2; i++)
			for (uint32_t r = 0; r < g->nroles; r++)
				if (!blocks[r].buf && w->slot[r] == i) {
					w->ptrs[i] = out[nlost];
					fail[nlost++] = (int)i;
				}
		rk_parity_recover((int)sc->nslots, n, fail[0], fail[1], w->ptrs);
		return w->ptrs[w->slot[k]];
	}
	uint32_t j = 0;
	for (uint32_t r = 0; r < g->nroles; r++)
		if (blocks[r].buf)
			w->xor_ptrs[j++] = blocks[r].buf + col;
	w->xor_ptrs[j++] = w->p_calc;
	sc->algo->xor_gen((int)j, n, w->xor_ptrs);
	return w->p_calc;
}
