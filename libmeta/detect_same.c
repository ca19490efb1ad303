/* detect_same.c: whether two hypotheses export the same volume.  Two
 * geometries that map the volume differently may still read the same
 * bytes everywhere: members (or the parts of them) that hold only zeros
 * can swap places or start anywhere in their zeros, an unrelated image of
 * zeros can stand for a member of zeros.  Such hypotheses cannot be told
 * apart by any evidence, and need not be: either one's export is the
 * volume.  The test compares every byte (never a sample), so a "same"
 * answer is a proof; it gives up (not same) where the volume is larger
 * than the read budget allows. */
#include <stdlib.h>
#include <string.h>

#include "detect_int.h"

#define SAME_PIECE (1u << 20)

/* The bytes [V, V+N) of H into BUF; *IMG / *IOFF: where they sit when one
 * image holds them (*IMG = UINT32_MAX when they are rebuilt).  0 ok. */
static int piece_read(struct dt_ctx *c, const struct dt_hyp *h, uint64_t v, uint8_t *buf, size_t n, uint32_t *img,
                      uint64_t *ioff)
{
	uint32_t im[8];
	uint64_t io[8];
	*img = UINT32_MAX;
	if (dt_where(h, v, im, io, 8)) {
		*img = im[0];
		*ioff = io[0];
		return dt_read(c, im[0], io[0], buf, n);
	}
	dt_cache_trim(c);
	return dt_vread(c, h, v, buf, n) ? -1 : 0;
}

/* The bytes from V on that both A and B read from one place each: up to
 * the end of the current chunk (or run) of either, at most SAME_PIECE. */
static size_t piece_len(const struct dt_hyp *a, const struct dt_hyp *b, uint64_t v, uint64_t end)
{
	uint64_t n = end - v < SAME_PIECE ? end - v : SAME_PIECE;
	const struct dt_hyp *hs[2] = { a, b };
	for (int t = 0; t < 2; t++) {
		struct rk_loc loc;
		uint64_t run;
		if (rk_geom_map(&hs[t]->g, v, &loc, &run) || !run)
			return 0;
		if (run < n)
			n = run;
		uint64_t ch = hs[t]->g.chunk;
		if (ch && ch - v % ch < n)
			n = ch - v % ch;
	}
	return (size_t)n;
}

/* See detect_int.h. */
int dt_same_export(struct dt_ctx *c, const struct dt_hyp *a, const struct dt_hyp *b, uint64_t max, uint64_t upto,
                   uint64_t *budget)
{
	uint64_t end = a->g.volume_size < b->g.volume_size ? a->g.volume_size : b->g.volume_size;
	if (upto < end)
		end = upto;
	if (!end || end > max)
		return 0;
	uint8_t *x = malloc(SAME_PIECE), *y = malloc(SAME_PIECE);
	int same = x && y;
	for (uint64_t v = 0; same && v < end;) {
		size_t n = piece_len(a, b, v, end);
		uint32_t ia, ib;
		uint64_t oa = 0, ob = 0;
		if (!n)
			same = 0;
		else if (dt_where(a, v, &ia, &oa, 1) && dt_where(b, v, &ib, &ob, 1) && ia == ib && oa == ob)
			;   /* one place: the same bytes */
		else if (dt_where(a, v, &ia, &oa, 1) && dt_where(b, v, &ib, &ob, 1) && dt_zero_range(c, ia, oa, n) &&
		         dt_zero_range(c, ib, ob, n))
			;   /* zeros in both (detect_zero.c) */
		else if (*budget < 2 * (uint64_t)n)
			same = 0;
		else if ((*budget -= 2 * (uint64_t)n, 0) || piece_read(c, a, v, x, n, &ia, &oa) || piece_read(c, b, v, y, n, &ib, &ob) || memcmp(x, y, n))
			same = 0;
		v += n;
	}
	free(x);
	free(y);
	return same;
}
