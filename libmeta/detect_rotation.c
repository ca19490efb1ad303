/* detect_rotation.c: the rows that tell where parity sits.  With every
 * member present and their data starts known to each other (one start, or
 * the parity scan's differences), a row (DT_BLK bytes at one member
 * offset of every member) in which some members hold zeros and others data
 * says which members can hold its parity: a parity block is the XOR of its
 * row's data, so it is zero only where that XOR is.  Rows like that are
 * rare in a random sample of a sparse volume and common near its start
 * (where a file system keeps its metadata) and at the edges of files; the
 * scan here collects them once (dt_rows_collect), and every parity
 * hypothesis is checked over them (dt_check_mixed): a hypothesis that puts
 * parity on the zero blocks of such rows rotates it wrongly (chunk,
 * rotation or role order), whatever anchors it agrees with. */
#include <stdlib.h>
#include <string.h>

#include "detect_int.h"
#include "rk_util.h"

#define RT_BUDGET (96ull << 20)   /* bytes read over all members */
#define RT_DENSE (32ull << 20)    /* rows read one after another past the data start, per member at most */
#define RT_CAND 4096u             /* mixed rows found before thinning */

/* Where image I's rows sit past the others' (the parity scan's starts:
 * 0 for members of one start). */
static uint64_t row_shift(const struct dt_ctx *c, uint32_t i)
{
	return c->ps_has_ioff ? c->ps_ioff[i] : c->ps_has_rel ? c->ps_rel[i] : 0;
}

/* Whether the row at image offset X over the images of T is mixed: some
 * block zero, at least two not (a vanishing XOR needs two), and the XOR of
 * the row zero when V5 (RAID-4/5; RAID-6 rows are kept as they are).
 * -1: an image too short there. */
static int mixed_at(struct dt_ctx *c, uint64_t t, uint64_t x, int v5, uint8_t *acc)
{
	uint32_t nz = 0, z = 0;
	memset(acc, 0, DT_BLK);
	for (uint32_t i = 0; i < c->nimg; i++) {
		if (!(t >> i & 1))
			continue;
		const uint8_t *b = dt_block(c, i, x + row_shift(c, i));
		if (!b)
			return -1;
		if (rk_buf_is_zero(b, DT_BLK)) {
			z++;
			continue;
		}
		nz++;
		for (uint32_t k = 0; v5 && k < DT_BLK; k++)
			acc[k] ^= b[k];
	}
	return z && nz >= 2 && (!v5 || rk_buf_is_zero(acc, DT_BLK));
}

/* The row offsets to look at, in order: first the rows right past the data
 * start, then rows spread (hashed) over the whole span. */
static uint64_t rt_row(uint32_t k, uint32_t ndense, uint64_t start, uint64_t span)
{
	if (k < ndense)
		return start + (uint64_t)k * DT_BLK;
	uint64_t z = (k + 0x5bd1e995ull) * 0x9E3779B97F4A7C15ull;   /* splitmix64 */
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	z ^= z >> 31;
	uint64_t nblk = span > start ? (span - start) / DT_BLK : 0;
	return nblk ? start + z % nblk * DT_BLK : UINT64_MAX;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* See detect_int.h. */
void dt_rows_collect(struct dt_ctx *c)
{
	c->nmixed = 0;
	int v5 = c->ps5_mask && c->ps5_lo == c->ps5_hi && c->ps5_hi == (uint32_t)__builtin_popcountll(c->ps5_mask);
	int v6 = !v5 && c->ps6_mask && c->ps6_lo == c->ps6_hi && c->ps6_hi == (uint32_t)__builtin_popcountll(c->ps6_mask);
	if (!v5 && !v6)
		return;   /* no member set whose rows are known: nothing to collect */
	uint64_t t = v5 ? c->ps5_mask : c->ps6_mask, span = UINT64_MAX;
	uint32_t n = (uint32_t)__builtin_popcountll(t);
	for (uint32_t i = 0; i < c->nimg; i++) {
		uint64_t sh = row_shift(c, i), have = c->img[i].size > sh ? c->img[i].size - sh : 0;
		if ((t >> i & 1) && have < span)
			span = have;
	}
	uint64_t start = (c->ps_off + DT_BLK - 1) & ~(uint64_t)(DT_BLK - 1);
	uint64_t rows = RT_BUDGET / DT_BLK / n, dense = rows / 2;
	if (dense > RT_DENSE / DT_BLK)
		dense = RT_DENSE / DT_BLK;
	uint64_t *cand = malloc(RT_CAND * sizeof *cand);
	uint8_t *acc = malloc(DT_BLK);
	if (!cand || !acc || span <= start + DT_BLK) {
		free(cand);
		free(acc);
		return;
	}
	uint32_t nc = 0;
	for (uint32_t k = 0; k < rows && nc < RT_CAND; k++) {
		uint64_t x = rt_row(k, (uint32_t)dense, start, span - DT_BLK);
		if (x == UINT64_MAX || x + DT_BLK > span)
			continue;
		dt_cache_trim(c);
		if (mixed_at(c, t, x, v5, acc) == 1)
			cand[nc++] = x;
	}
	/* the hashed rows may repeat: sorted, once each, thinned evenly */
	qsort(cand, nc, sizeof *cand, u64_cmp);
	uint32_t w = 0;
	for (uint32_t k = 0; k < nc; k++)
		if (!w || cand[w - 1] != cand[k])
			cand[w++] = cand[k];
	nc = w;
	for (uint32_t k = 0; k < DT_MIXED && k < nc; k++)
		c->mixed[c->nmixed++] = cand[(uint64_t)k * nc / (nc < DT_MIXED ? nc : DT_MIXED)];
	free(cand);
	free(acc);
}

/* See detect_int.h. */
void dt_check_mixed(struct dt_ctx *c, struct dt_hyp *h, uint32_t max)
{
	const struct rk_geom *g = &h->g;
	if (!g->nparity || !c->nmixed || !g->chunk)
		return;
	uint64_t off = DT_NONE;   /* the mixed rows are offsets past each image's shift: the roles must share one start past it */
	for (uint32_t r = 0; r < g->nroles; r++) {
		if (h->role_img[r] < 0)
			continue;
		uint64_t sh = row_shift(c, (uint32_t)h->role_img[r]);
		if (h->off[r] < sh || (off != DT_NONE && h->off[r] - sh != off))
			return;
		off = h->off[r] - sh;
	}
	size_t len = g->chunk < DT_BLK ? (size_t)g->chunk : DT_BLK;
	uint32_t step = c->nmixed > max ? c->nmixed / max : 1;
	for (uint32_t k = 0, done = 0; k < c->nmixed && done < max; k += step, done++) {
		uint64_t x = c->mixed[k];
		if (off == DT_NONE || x < off || x - off >= g->member_size)
			continue;
		uint64_t m = x - off;
		if (m % g->chunk + len > g->chunk)
			continue;   /* a start off the block grid: the row crosses a chunk edge */
		dt_cache_trim(c);
		dt_parity_row(c, h, m / g->chunk, m % g->chunk, len);
	}
}
