/* scrub_mirror.c: checking and repairing RAID-1/10 copies: every live
 * copy of every chunk is compared; with three or more live copies a
 * strict majority names the copies at fault. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scrub_int.h"

int mirror_piece_dirty(const struct scrub_state *sc, const struct scrub_block *blocks, uint64_t a, uint64_t end)
{
	uint32_t first = UINT32_MAX;
	for (uint32_t c = 0; c < sc->width; c++) {
		if (!blocks[c].buf || a >= blocks[c].len)
			continue;
		uint64_t e = end < blocks[c].len ? end : blocks[c].len;
		if (first == UINT32_MAX)
			first = c;
		else if (memcmp(blocks[c].buf + a, blocks[first].buf + a, (size_t)(e - a)))
			return 1;
	}
	return 0;
}

/* Verdict of one sector over the live copies: LOCATED when a majority
 * exists (sc->copy_bad[] marks the minority, sc->fault their roles);
 * *source gets the index of a copy to copy from (the majority, else the
 * first live). */
static enum sector_verdict mirror_sector(struct scrub_state *sc, const struct scrub_block *blocks, size_t off,
                                         size_t z, uint32_t *source)
{
	uint32_t w = sc->width, nlive = 0, first = UINT32_MAX;
	int all_equal = 1;
	for (uint32_t c = 0; c < w; c++) {
		sc->copy_bad[c] = 0;
		if (!blocks[c].buf)
			continue;
		nlive++;
		if (first == UINT32_MAX)
			first = c;
		else if (memcmp(blocks[c].buf + off, blocks[first].buf + off, z))
			all_equal = 0;
	}
	*source = first;
	sc->nfault = 0;
	if (all_equal)
		return SECTOR_CLEAN;
	uint32_t best = first, best_votes = 0;
	for (uint32_t c = 0; c < w; c++) {
		if (!blocks[c].buf)
			continue;
		uint32_t votes = 0;
		for (uint32_t d = 0; d < w; d++)
			if (blocks[d].buf && !memcmp(blocks[c].buf + off, blocks[d].buf + off, z))
				votes++;
		if (votes > best_votes) {
			best_votes = votes;
			best = c;
		}
	}
	if (nlive < 3 || 2 * best_votes <= nlive)
		return SECTOR_UNLOCATED;
	*source = best;
	for (uint32_t c = 0; c < w; c++)
		if (blocks[c].buf && memcmp(blocks[c].buf + off, blocks[best].buf + off, z)) {
			sc->copy_bad[c] = 1;
			sc->fault[sc->nfault++] = blocks[c].role;
		}
	return SECTOR_LOCATED;
}

/* Where the run of sectors from A with VERDICT, SOURCE and the faults in
 * sc->fault (SAVED holds a copy) ends; sc->fault is left as it was. */
static uint64_t extend_mirror_run(struct scrub_state *sc, const struct scrub_block *blocks, uint64_t a, uint64_t cb,
                                  enum sector_verdict verdict, uint32_t source, uint32_t *saved)
{
	uint32_t nfault = sc->nfault;
	memcpy(saved, sc->fault, nfault * sizeof *saved);
	uint64_t end = a + sector_len(a, cb);
	while (end < cb) {
		size_t z = sector_len(end, cb);
		uint32_t next_source;
		enum sector_verdict next = mirror_sector(sc, blocks, (size_t)end, z, &next_source);
		int same = next == verdict && next_source == source && sc->nfault == nfault &&
		           !memcmp(sc->fault, saved, nfault * sizeof *saved);
		if (!same)
			break;
		end += z;
	}
	/* restore this run's verdict (the look-ahead overwrote it) */
	sc->nfault = nfault;
	memcpy(sc->fault, saved, nfault * sizeof *saved);
	return end;
}

/* Copies SOURCE's bytes [a, end) over every live copy that differs. */
static rk_err repair_mirror_run(struct scrub_state *sc, const struct scrub_block *blocks, uint32_t source, uint64_t a,
                                uint64_t end)
{
	const uint8_t *src = blocks[source].buf + a;
	for (uint32_t c = 0; c < sc->width; c++) {
		if (!blocks[c].buf || c == source || !memcmp(blocks[c].buf + a, src, (size_t)(end - a)))
			continue;
		rk_err e = scrub_write(sc, blocks[c].role, src, end - a, blocks[c].member_off + a);
		if (e)
			return e;
	}
	return RK_OK;
}

/* Sector by sector over [ca, cb) of a stripe whose copies differ there. */
static rk_err analyse_copies(struct scrub_state *sc, struct scrub_batch *b, uint32_t si, uint64_t ca, uint64_t cb,
                             uint32_t nlive, uint32_t *saved)
{
	const struct scrub_block *blocks = batch_stripe(b, si);
	for (uint64_t a = ca; a < cb;) {
		uint32_t source;
		enum sector_verdict verdict = mirror_sector(sc, blocks, (size_t)a, sector_len(a, cb), &source);
		if (verdict == SECTOR_CLEAN) {
			a += sector_len(a, cb);
			continue;
		}
		uint64_t end = extend_mirror_run(sc, blocks, a, cb, verdict, source, saved);
		char why[200];
		if (verdict == SECTOR_LOCATED)
			snprintf(why, sizeof why, "%u of %u copies agree; the others differ", nlive - sc->nfault, nlive);
		else
			snprintf(why, sizeof why, "the %u copies differ and no majority tells which is right", nlive);
		enum rk_scrub_fix fix = RK_SCRUB_FIX_NONE;
		if (sc->opts->repair && !sc->report_only) {
			rk_err e = repair_mirror_run(sc, blocks, source, a, end);
			if (e)
				return e;
			fix = verdict == SECTOR_LOCATED ? RK_SCRUB_FIX_PROVEN : RK_SCRUB_FIX_CONSISTENT;
		}
		if (verdict != SECTOR_LOCATED)
			sc->nfault = 0;
		scrub_add_run(sc, b->first_stripe + si, b->col_start + a, b->col_start + end, verdict, fix, why, blocks,
		              b->col_start);
		a = end;
	}
	return RK_OK;
}

/* As check_parity_range, for mirrors (bytes past a block's length are
 * outside the volume and never looked at). */
rk_err check_mirror_range(struct scrub_state *sc, struct scrub_batch *b, uint32_t si, uint64_t ca, uint64_t cb)
{
	const struct scrub_block *blocks = batch_stripe(b, si);
	uint32_t nlive = 0, first = UINT32_MAX;
	uint64_t len = 0;
	for (uint32_t c = 0; c < sc->width; c++)
		if (blocks[c].buf) {
			nlive++;
			if (first == UINT32_MAX)
				first = c;
			len = blocks[c].len;
		}
	if (nlive < 2)
		return RK_OK;
	if (cb > len)
		cb = len;
	int differ = 0;
	for (uint32_t c = first + 1; c < sc->width && !differ && ca < cb; c++)
		if (blocks[c].buf && memcmp(blocks[c].buf + ca, blocks[first].buf + ca, (size_t)(cb - ca)))
			differ = 1;
	if (!differ)
		return RK_OK;
	uint32_t *saved = malloc(sc->width * sizeof *saved);
	if (!saved)
		return rk_fail(RK_E_NOMEM, "scrub: out of memory");
	rk_err e = analyse_copies(sc, b, si, ca, cb, nlive, saved);
	free(saved);
	return e;
}
