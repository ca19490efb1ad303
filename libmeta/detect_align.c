/* detect_align.c: members whose data starts differ, told by the copies
 * redundancy leaves.  In a RAID-4/5/6 row whose other data blocks are zero
 * at some sector, the parity (P, and Q for data slot 0) holds a copy of
 * the lone data sector, at the same member offset: so the same 512 bytes
 * sit on two images at image offsets that differ by exactly the
 * difference of their data starts.  Sparse volumes hold many such
 * sectors; counted over the heads of every pair of images, one difference
 * dominates for members and none for unrelated images.  The differences
 * found here are relative (volume byte 0 is where the search puts it);
 * detect_pscan.c checks them with the rows' algebra before anything uses
 * them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "detect_int.h"
#include "rk_le.h"
#include "rk_util.h"

#define AL_WIN (16ull << 20)     /* bytes of each image's start looked at */
#define AL_PIECE (1u << 20)
#define AL_DISTINCT 24u          /* a sector with fewer distinct byte values is too common to pair */
#define AL_GROUP 4u              /* sectors found on more images are shared content, not copies */
#define AL_AGREE 8u              /* copies that must agree on a pair's difference, */
#define AL_REGIONS 4u            /* in this many runs of sectors of the first image (a duplicated
                                  * file's run agrees too, in one place) */

struct al_ent { uint64_t h; uint32_t img, sec; };
struct al_pair { uint32_t a, b; int64_t d; uint32_t sa; };

/* See detect_int.h. */
uint64_t dt_hash64(const uint8_t *p, size_t n)
{
	uint64_t h = 0x9E3779B97F4A7C15ull;
	for (size_t k = 0; k + 8 <= n; k += 8) {
		h ^= rk_get_le64(p + k);
		h *= 0xBF58476D1CE4E5B9ull;
		h ^= h >> 31;
	}
	return h;
}

static int ent_cmp(const void *x, const void *y)
{
	const struct al_ent *a = x, *b = y;
	if (a->h != b->h)
		return a->h < b->h ? -1 : 1;
	if (a->img != b->img)
		return a->img < b->img ? -1 : 1;
	return a->sec < b->sec ? -1 : a->sec > b->sec;
}

static int pair_cmp(const void *x, const void *y)
{
	const struct al_pair *a = x, *b = y;
	if (a->a != b->a)
		return a->a < b->a ? -1 : 1;
	if (a->b != b->b)
		return a->b < b->b ? -1 : 1;
	if (a->d != b->d)
		return a->d < b->d ? -1 : 1;
	return a->sa < b->sa ? -1 : a->sa > b->sa;
}

/* Appends the distinctive sectors of image I's first AL_WIN bytes to
 * E (*N of CAP); clears I's bit of *BLANK unless they are all zero.
 * 0 ok, -1 out of memory. */
static int hash_image(struct dt_ctx *c, uint32_t i, struct al_ent **e, size_t *n, size_t *cap, uint8_t *buf,
                      uint64_t *blank)
{
	*blank |= 1ull << i;
	uint64_t end = c->img[i].size < AL_WIN ? c->img[i].size : AL_WIN;
	for (uint64_t x = 0; x + 512 <= end; x += AL_PIECE) {
		size_t len = end - x < AL_PIECE ? (size_t)(end - x) / 512 * 512 : AL_PIECE;
		if (dt_read(c, i, x, buf, len))
			break;
		for (size_t o = 0; o < len; o += 512) {
			const uint8_t *p = buf + o;
			if (rk_buf_is_zero(p, 512))
				continue;
			*blank &= ~(1ull << i);
			if (dt_distinct_bytes(p, 512) < AL_DISTINCT)
				continue;
			if (*n == *cap) {
				size_t nc = *cap ? *cap * 2 : 65536;
				struct al_ent *ne = realloc(*e, nc * sizeof *ne);
				if (!ne)
					return -1;
				*e = ne;
				*cap = nc;
			}
			(*e)[(*n)++] = (struct al_ent){ dt_hash64(p, 512), i, (uint32_t)((x + o) / 512) };
		}
	}
	return 0;
}

/* The pairs of images holding each sector found on 2..AL_GROUP images
 * once each, with the difference of its sector numbers, into *P (*NP). */
static int pairs_of(const struct al_ent *e, size_t n, struct al_pair **p, size_t *np)
{
	size_t cap = 0;
	*np = 0;
	for (size_t k = 0; k < n;) {
		size_t j = k + 1;
		while (j < n && e[j].h == e[k].h)
			j++;
		int ok = j - k >= 2 && j - k <= AL_GROUP;
		for (size_t q = k + 1; q < j && ok; q++)
			ok = e[q].img != e[q - 1].img;   /* twice on one image: repeated content */
		for (size_t a = k; ok && a < j; a++)
			for (size_t b = a + 1; b < j; b++) {
				if (*np == cap) {
					size_t nc = cap ? cap * 2 : 4096;
					struct al_pair *x = realloc(*p, nc * sizeof *x);
					if (!x)
						return -1;
					*p = x;
					cap = nc;
				}
				(*p)[(*np)++] = (struct al_pair){ e[a].img, e[b].img, (int64_t)e[a].sec - (int64_t)e[b].sec, e[a].sec };
			}
		k = j;
	}
	return 0;
}

/* For each pair of images, the difference most of its copies agree on
 * (AL_AGREE at least, in AL_REGIONS runs, three times the next and
 * more than half of all): D[a][b] (sectors, image a's minus b's) with
 * W[a][b] its count, 0 none. */
static void dominant(struct al_pair *p, size_t np, uint32_t nimg, int64_t *d, uint32_t *w)
{
	if (np)
		qsort(p, np, sizeof *p, pair_cmp);
	for (size_t k = 0; k < np;) {
		size_t j = k, tot = 0, best = 0, second = 0, regions = 0;
		int64_t bd = 0;
		while (j < np && p[j].a == p[k].a && p[j].b == p[k].b) {
			size_t r = j + 1, reg = 1;
			while (r < np && p[r].a == p[j].a && p[r].b == p[j].b && p[r].d == p[j].d) {
				reg += p[r].sa != p[r - 1].sa + 1;
				r++;
			}
			size_t cnt = r - j;
			tot += cnt;
			if (cnt > best)
				second = best, best = cnt, bd = p[j].d, regions = reg;
			else if (cnt > second)
				second = cnt;
			j = r;
		}
#ifdef DT_DEBUG
		fprintf(stderr, "ALPAIR %u %u d %lld best %zu second %zu tot %zu regions %zu\n", p[k].a, p[k].b, (long long)bd, best, second,
		        tot, regions);
#endif
		if (best >= AL_AGREE && regions >= AL_REGIONS && best >= 3 * second && best * 2 > tot) {
			d[p[k].a * nimg + p[k].b] = bd;
			w[p[k].a * nimg + p[k].b] = (uint32_t)best;
		}
		k = j;
	}
}

/* The images joined to the one with most agreeing copies, each's start
 * relative to it (bytes, the smallest 0), into *MASK and REL: the
 * strongest pair first from the images joined so far (a weak pair that
 * agrees on a wrong difference loses to strong ones).  1 when three
 * images or more are joined and their starts are not all equal. */
static int join(uint32_t nimg, const int64_t *d, const uint32_t *w, uint64_t *mask, uint64_t *rel)
{
	uint64_t sum[64] = { 0 };
	int64_t at[64];
	uint32_t root = 0, n = 1;
	for (uint32_t a = 0; a < nimg; a++)
		for (uint32_t b = a + 1; b < nimg; b++)
			sum[a] += w[a * nimg + b], sum[b] += w[a * nimg + b];
	for (uint32_t a = 1; a < nimg; a++)
		if (sum[a] > sum[root])
			root = a;
	if (!sum[root])
		return 0;
	*mask = 1ull << root;
	at[root] = 0;
	for (;;) {
		uint32_t bw = 0, ba = 0, bb = 0;
		for (uint32_t a = 0; a < nimg; a++)
			for (uint32_t b = 0; b < nimg && (*mask >> a & 1); b++) {
				uint32_t lo = a < b ? a : b, hi = a < b ? b : a;
				if (!(*mask >> b & 1) && w[lo * nimg + hi] > bw)
					bw = w[lo * nimg + hi], ba = a, bb = b;
			}
		if (!bw)
			break;
		/* D[lo][hi] = start(lo) - start(hi) */
		uint32_t lo = ba < bb ? ba : bb, hi = ba < bb ? bb : ba;
		at[bb] = ba == lo ? at[ba] - d[lo * nimg + hi] : at[ba] + d[lo * nimg + hi];
		*mask |= 1ull << bb;
		n++;
	}
	int64_t min = 0, max = 0;
	for (uint32_t i = 0; i < nimg; i++)
		if (*mask >> i & 1) {
			min = at[i] < min ? at[i] : min;
			max = at[i] > max ? at[i] : max;
		}
	for (uint32_t i = 0; i < nimg; i++)
		rel[i] = (*mask >> i & 1) ? (uint64_t)(at[i] - min) * 512 : 0;
	return n >= 3 && max != min;
}

/* See detect_int.h. */
int dt_align_starts(struct dt_ctx *c, uint64_t *mask, uint64_t *rel, uint64_t *blank)
{
	*blank = 0;
	uint32_t nimg = c->nimg;
	if (nimg < 3 || nimg > 64)
		return 0;
	struct al_ent *e = NULL;
	struct al_pair *p = NULL;
	size_t n = 0, cap = 0, np = 0;
	uint8_t *buf = malloc(AL_PIECE);
	int64_t *d = calloc((size_t)nimg * nimg, sizeof *d);
	uint32_t *w = calloc((size_t)nimg * nimg, sizeof *w);
	int found = 0;
	if (!buf || !d || !w)
		goto out;
	for (uint32_t i = 0; i < nimg; i++)
		if (hash_image(c, i, &e, &n, &cap, buf, blank))
			goto out;
	if (n)
		qsort(e, n, sizeof *e, ent_cmp);
	if (pairs_of(e, n, &p, &np))
		goto out;
	dominant(p, np, nimg, d, w);
	found = join(nimg, d, w, mask, rel);
out:
	free(e);
	free(p);
	free(buf);
	free(d);
	free(w);
	return found;
}
