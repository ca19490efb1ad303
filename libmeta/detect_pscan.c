/* detect_pscan.c: the parity scan, before any geometry is guessed.  Images
 * whose members share one data start put one stripe row at every image
 * offset, whatever the chunk, rotation and order; so rows taken at the same
 * image offset of every image show the level's algebra directly:
 *  - RAID-4/5 with every member present: the XOR of the members is zero;
 *  - RAID-6 with every member present: the XOR of all members is the row's
 *    Q block, so exactly one member equals the XOR of all (the Q holder).
 * An unrelated image among them is found as the one that, left out, makes
 * the rows vanish.  The member count found, and the data start (the end of
 * the last head sector where the algebra fails), steer stage 1 of the
 * search (detect_search.c); nothing is decided here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "detect_int.h"
#include "rk_parity.h"
#include "rk_util.h"

#define PS_ROWS 160u              /* rows sampled */
#define PS_MIN_NZ 12u             /* non-zero rows needed for a verdict */
#define PS_HEAD (4ull << 20)      /* where data starts lie: 512-byte steps searched for the start */
#define PS_HEAD_NZ 64u            /* head sectors with data that prove the algebra (pscan_head) */

static void xor_into(uint8_t *d, const uint8_t *s, size_t n)
{
	for (size_t k = 0; k + 8 <= n; k += 8) {
		uint64_t a, b;
		memcpy(&a, d + k, 8);
		memcpy(&b, s + k, 8);
		a ^= b;
		memcpy(d + k, &a, 8);
	}
}

/* Of the N non-zero blocks B, whether two disjoint pairs or more are
 * equal: mirrors' copies lined up, which parity never gives (RAID-5's and
 * RAID-6's copies of a lone data block are one pair, or three alike). */
static int two_pairs(const uint8_t *const *b, uint32_t n)
{
	uint64_t used = 0;
	uint32_t pairs = 0;
	for (uint32_t i = 0; i < n && pairs < 2; i++)
		for (uint32_t j = i + 1; j < n && !(used >> i & 1); j++)
			if (!(used >> j & 1) && !memcmp(b[i], b[j], DT_BLK)) {
				used |= 1ull << i | 1ull << j;
				pairs++;
			}
	return pairs >= 2;
}

/* Whether a row of three non-zero blocks of T (B; the caller counted
 * them, and asks for no other row), one of them the XOR
 * of all (so the other two are equal), is what RAID-6 gives for a lone
 * data block: its copy as P and g^j times it as Q, j a slot (below the
 * image count).  Two copies of a chunk beside another block pass the XOR
 * test whatever that block holds (seed 4901: a RAID-10 o3's copies lined
 * up at their starts).  1 yes, or when the row is not of that shape. */
static int lone_q_ok(struct dt_ctx *c, uint64_t t, const uint8_t *const *b)
{
	const uint8_t *nzb[3];
	uint32_t n = 0;
	for (uint32_t i = 0; i < c->nimg && n < 3; i++)
		if ((t >> i & 1) && !rk_buf_is_zero(b[i], DT_BLK))
			nzb[n++] = b[i];
	if (n != 3)
		return 1;
	const uint8_t *x, *y;   /* the pair's block, the other */
	if (!memcmp(nzb[0], nzb[1], DT_BLK))
		x = nzb[0], y = nzb[2];
	else if (!memcmp(nzb[0], nzb[2], DT_BLK))
		x = nzb[0], y = nzb[1];
	else if (!memcmp(nzb[1], nzb[2], DT_BLK))
		x = nzb[1], y = nzb[0];
	else
		return 1;
	uint32_t p = 0;
	while (p < DT_BLK && !x[p])
		p++;
	if (p == DT_BLK || !y[p])
		return 0;
	uint8_t r = rk_gf_mul(y[p], rk_gf_inv(x[p]));
	int j = rk_gf_log(r);
	if (j < 0 || (uint32_t)j >= c->nimg)
		return 0;
	for (uint32_t k = 0; k < DT_BLK; k++)
		if (y[k] != rk_gf_mul(r, x[k]))
			return 0;
	return 1;
}

/* Rows where images of T (bitmask; the others left out) XOR to zero
 * (*Z5), or where one image equals the XOR of all (*Z6, the Q holder;
 * lone_q_ok), or all are copies of one (*MIRROR), over rows with a
 * non-zero block (*NZ); with PAIRED, those holding two pairs of equal
 * blocks too (two_pairs).  X: DT_BLK scratch. */
static void row_tally(struct dt_ctx *c, uint64_t t, uint64_t x, uint8_t *acc, uint32_t *nz, uint32_t *z5,
                      uint32_t *z6, uint32_t *mirror, uint64_t *nzimg, const uint64_t *io, uint32_t *paired)
{
	const uint8_t *b[64];
	uint32_t any = 0;
	memset(acc, 0, DT_BLK);
	for (uint32_t i = 0; i < c->nimg; i++) {
		if (!(t >> i & 1))
			continue;
		if (!(b[i] = dt_block(c, i, x + (io ? io[i] : 0))))
			return;   /* an image too short: not a row of all */
		if (!rk_buf_is_zero(b[i], DT_BLK)) {
			any++;
			*nzimg |= 1ull << i;
		}
		xor_into(acc, b[i], DT_BLK);
	}
	if (!any)
		return;
	(*nz)++;
	if (paired) {
		const uint8_t *data[64];
		uint32_t n = 0;
		for (uint32_t i = 0; i < c->nimg; i++)
			if ((t >> i & 1) && !rk_buf_is_zero(b[i], DT_BLK))
				data[n++] = b[i];
		*paired += two_pairs(data, n);
	}
	int same = 1;   /* every image a copy of the first: a mirror, not parity */
	const uint8_t *first = NULL;
	for (uint32_t i = 0; i < c->nimg && same; i++)
		if (t >> i & 1) {
			if (!first)
				first = b[i];
			else
				same = !memcmp(first, b[i], DT_BLK);
		}
	if (same) {
		(*mirror)++;
		return;
	}
	if (rk_buf_is_zero(acc, DT_BLK)) {
		(*z5)++;
		return;
	}

	/* Q equals the XOR of all; a row of one block is trivially so, and
	 * a RAID-6 row with data holds at least data, P and Q */
	for (uint32_t i = 0; i < c->nimg && any >= 3; i++)
		if ((t >> i & 1) && !memcmp(b[i], acc, DT_BLK)) {
			if (any == 3 && !lone_q_ok(c, t, b))
				return;
			(*z6)++;
			return;
		}
}

/* The image offset of sampled row K: the even rows in the first 64 MiB
 * past the head (where a file system keeps most), the odd ones up to SPAN;
 * hashed, not strided (a stride aliases with the stripe period).  Images
 * under twice the head (many members of a small volume) are sampled from
 * an eighth of SPAN on: past the head there is little or nothing. */
static uint64_t row_at(uint32_t k, uint64_t span)
{
	uint64_t lo = span < 2 * PS_HEAD ? span / 8 / DT_BLK * DT_BLK : PS_HEAD;
	uint64_t hi = k % 2 == 0 && span > PS_HEAD + (64ull << 20) ? PS_HEAD + (64ull << 20) : span;
	if (hi <= lo + DT_BLK)
		return UINT64_MAX;
	uint64_t z = (k + 1) * 0x9E3779B97F4A7C15ull;   /* splitmix64 */
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	z ^= z >> 31;
	return lo + z % ((hi - lo) / DT_BLK) * DT_BLK;
}

/* The verdict for T: 5 (XOR vanishes), 6 (one equals the XOR), 1 (some
 * rows vanish), 0 none; *NZIMG: the images of T holding data in some
 * row; *SHARE: the share of rows that vanish; IO: each image's offset of
 * the rows (NULL: all 0); *PAIRED (NULL: not counted): the rows holding
 * two pairs of equal blocks (two_pairs). */
static int verdict(struct dt_ctx *c, uint64_t t, uint64_t span, uint8_t *acc, uint64_t *nzimg, double *share,
                   const uint64_t *io, uint32_t *paired)
{
	uint32_t nz = 0, z5 = 0, z6 = 0, mirror = 0;
	c->ps_rows_seen = 0;
	for (uint32_t k = 0; k < PS_ROWS; k++) {
		uint64_t x = row_at(k, span);
		if (x == UINT64_MAX)
			break;
		dt_cache_trim(c);
		row_tally(c, t, x, acc, &nz, &z5, &z6, &mirror, nzimg, io, paired);
	}
#ifdef DT_DEBUG
	fprintf(stderr, "VERDICT t %llx nz %u z5 %u z6 %u span %llu", (unsigned long long)t, nz, z5, z6, (unsigned long long)span);
	for (uint32_t i = 0; io && i < c->nimg; i++) fprintf(stderr, " %llu", (unsigned long long)io[i]);
	fprintf(stderr, "\n");
#endif
	c->ps_rows_seen = nz;
	if (mirror * 2 >= nz)
		return 0;   /* copies: the mirror checks find those */
	/* a row whose every block is the same (files of repeated bytes in all
	 * its data blocks, and their parity) says nothing either way: three
	 * of 25 kept seed 6109's true starts, a RAID-5 of 6 members from 0 to
	 * 2 MiB, from proving themselves, and one in ten called the whole
	 * set copies */
	nz -= mirror;
	if (nz < PS_MIN_NZ)
		return 0;   /* too little data */
	*share = (double)z5 / nz;
	if (z5 * 20 >= nz * 19)
		return 5;
	if ((z5 + z6) * 20 >= nz * 19 && z6 * 4 >= nz)
		return 6;
	/* some rows vanish, not all: parity with members missing (RAID-5's
	 * rows where the missing block is zero, RAID-6's where it is Q);
	 * striping without redundancy has no such rows */
	if (z5 >= 4 && z5 * 20 >= nz)
		return 1;
	return 0;
}

/* T6, all the images but one whose rows hold RAID-6's algebra, when
 * leaving out another one holds it as well: the image equal to the XOR
 * in every row is then one of two, a Q that stays on one member (the "-6"
 * layouts) or an unrelated image beside the members of P and data, whose
 * XOR vanishes (seed 3351: a sample slice taken for a RAID-6's Q, the true
 * Q left out of every reading).  Returns the images both sets share (the
 * members of P and data, one start proven), else T6. */
static uint64_t other_q(struct dt_ctx *c, uint64_t all, uint64_t t6, uint64_t span, uint8_t *acc)
{
	uint64_t out = t6;
	uint32_t seen = c->ps_rows_seen;
	/* the images before T6's left-out one were asked already (none gave 6) */
	for (uint32_t j = (uint32_t)__builtin_ctzll(all & ~t6) + 1; j < c->nimg; j++) {
		uint64_t t = all & ~(1ull << j), nz = 0;
		double sh = 0;
		if (verdict(c, t, span, acc, &nz, &sh, NULL, NULL) == 6)
			out &= t;
	}
	c->ps_rows_seen = seen;
	return out;
}

/* The 512 bytes at head offset X of each image in T into S: 0 when an
 * image is too short to hold them. */
static int head_sectors(struct dt_ctx *c, uint64_t t, uint64_t x, uint8_t (*s)[512])
{
	for (uint32_t i = 0; i < c->nimg; i++) {
		if (!(t >> i & 1))
			continue;
		const uint8_t *b = dt_block(c, i, x & ~(uint64_t)(DT_BLK - 1));
		if (!b)
			return 0;
		memcpy(s[i], b + (x & (DT_BLK - 1)), 512);
	}
	return 1;
}

/* Sectors of the head: the data start is past the last one where the
 * algebra of kind K over T fails (0 when it holds everywhere: no junk
 * before the data to tell where it starts). */
static uint64_t data_start(struct dt_ctx *c, uint64_t t, int kind)
{
	uint8_t acc[512], s[64][512];
	uint64_t last = 0;
	for (uint64_t x = 0; x < PS_HEAD; x += 512) {
		if (!head_sectors(c, t, x, s))
			return 0;
		memset(acc, 0, sizeof acc);
		for (uint32_t i = 0; i < c->nimg; i++)
			if (t >> i & 1)
				xor_into(acc, s[i], 512);
		int ok = rk_buf_is_zero(acc, 512);
		for (uint32_t i = 0; i < c->nimg && !ok && kind == 6; i++)
			ok = (t >> i & 1) && !memcmp(s[i], acc, 512);
		if (!ok)
			last = x + 512;
		if ((x & (DT_BLK - 1)) == DT_BLK - 512)
			dt_cache_trim(c);
	}
	return last;
}

/* Whether the head sector S of each image in T (512 bytes; 1 first)
 * holds KIND's algebra, in *NZ the images holding data there (0 with
 * fewer than two, or every one a copy of the first: nothing proven or
 * refuted). */
static int head_sector(const uint8_t (*s)[512], uint64_t t, uint32_t nimg, int kind, uint64_t *nz)
{
	uint8_t acc[512];
	uint32_t n = 0, same = 1;
	const uint8_t *first = NULL;
	memset(acc, 0, sizeof acc);
	*nz = 0;
	for (uint32_t i = 0; i < nimg; i++) {
		if (!(t >> i & 1))
			continue;
		xor_into(acc, s[i], 512);
		if (rk_buf_is_zero(s[i], 512))
			continue;
		*nz |= 1ull << i;
		n++;
		if (!first)
			first = s[i];
		else
			same &= !memcmp(first, s[i], 512);
	}
	if (n < 2 || same)
		*nz = 0;   /* not even a failure counts: a lone block fails any algebra */
	if (rk_buf_is_zero(acc, 512))
		return 1;
	for (uint32_t i = 0; i < nimg && kind == 6 && n >= 3; i++)
		if ((t >> i & 1) && !memcmp(s[i], acc, 512))
			return 1;
	return 0;
}

/* The verdict for T over the head (the first PS_HEAD bytes) where the
 * rows past it hold too little data: a small, sparse volume keeps what
 * it holds in the first MiBs of each member (seed 2314: a RAID-5 of 12
 * at 14 % full, its data 2.1 to 3.3 MiB into each member, read as a
 * RAID-0 since no sampled row held data).  KIND when past the last head
 * sector where KIND's algebra fails (*START) PS_HEAD_NZ sectors or more
 * prove it (two images or more holding data, not copies), and a quarter
 * as many fail or fewer: junk before the data fails, but not most
 * sectors with data (a RAID-6 of 5 without its Q holder vanishes where
 * that one holds Q: a chunk in five); 0 else.  *NZIMG: the images
 * holding data there. */
static int head_verdict(struct dt_ctx *c, uint64_t t, int kind, uint64_t *start, uint64_t *nzimg)
{
	uint8_t s[64][512];
	uint64_t last = 0, proven = 0, imgs = 0, failed = 0;
	for (uint64_t x = 0; x < PS_HEAD; x += 512) {
		if (!head_sectors(c, t, x, s))
			return 0;
		uint64_t nz;
		if (!head_sector(s, t, c->nimg, kind, &nz)) {
			last = x + 512;
			proven = imgs = 0;
			failed += nz != 0;
		} else if (nz) {
			proven++;
			imgs |= nz;
		}
		if ((x & (DT_BLK - 1)) == DT_BLK - 512)
			dt_cache_trim(c);
	}
	*start = last;
	*nzimg = imgs;
	return proven >= PS_HEAD_NZ && proven * 4 >= failed ? kind : 0;
}

/* The head's verdict of KIND for T into c->ps5_* or ps6_* and ps_off:
 * 1 when it holds. */
static int head_set(struct dt_ctx *c, uint64_t t, int kind)
{
	uint64_t st, nz;
	if (!head_verdict(c, t, kind, &st, &nz))
		return 0;
	uint32_t hi = (uint32_t)__builtin_popcountll(t), lo = (uint32_t)__builtin_popcountll(t & nz);
	if (kind == 5)
		c->ps5_mask = t, c->ps5_hi = hi, c->ps5_lo = lo;
	else
		c->ps6_mask = t, c->ps6_hi = hi, c->ps6_lo = lo;
	c->ps_off = st;
	return 1;
}

/* Where no set of images gave a verdict for lack of data past the head,
 * the head's, in the order dt_pscan asks the rows: every image (RAID-5,
 * then RAID-6), every image but one (RAID-5: an unrelated image among
 * them reads as a Q holder too, so both stay candidates), then RAID-6
 * without one.  1 when one held. */
static int pscan_head(struct dt_ctx *c, uint64_t all)
{
	if (head_set(c, all, 5))
		return 1;
	int six = head_set(c, all, 6);
	uint64_t off6 = c->ps_off;
	for (uint32_t j = 0; j < c->nimg && c->nimg >= 4; j++)
		if (head_set(c, all & ~(1ull << j), 5))
			return 1;
	c->ps_off = off6;
	for (uint32_t j = 0; j < c->nimg && c->nimg >= 4 && !six; j++)
		if (head_set(c, all & ~(1ull << j), 6))
			return 1;
	return six;
}

/* See detect_int.h. */
uint32_t dt_distinct_bytes(const uint8_t *p, size_t n)
{
	uint32_t seen[8] = { 0 }, distinct = 0;
	for (size_t k = 0; k < n; k++)
		if (!(seen[p[k] >> 5] >> (p[k] & 31) & 1)) {
			seen[p[k] >> 5] |= 1u << (p[k] & 31);
			distinct++;
		}
	return distinct;
}

/* Where the junk before image I's data ends: past the last 512-byte
 * sector of its first 4 MiB that looks random (160 or more distinct byte
 * values), 0 when none does; *LEAD: past the run of such sectors from
 * byte 0 (the end of the junk when the data holds random files too: a
 * member's first chunk holds the file system's metadata or its parity).  Read past the block cache: these blocks are
 * looked at once, and cached they would hold 4 MiB an image until the
 * cache is next trimmed (the search's peak memory). */
static uint64_t junk_end(struct dt_ctx *c, uint32_t i, uint64_t *lead)
{
	uint64_t last = 0;
	int run = 1;
	uint8_t *b = malloc(DT_BLK);
	*lead = 0;
	for (uint64_t x = 0; b && x < PS_HEAD; x += DT_BLK) {
		if (dt_read(c, i, x, b, DT_BLK))
			break;
		for (uint32_t q = 0; q < DT_BLK / 512; q++)
			if (dt_distinct_bytes(b + q * 512, 512) >= DT_RANDOM_DISTINCT) {
				last = x + (q + 1) * 512;
				if (run)
					*lead = last;
			} else
				run = 0;
	}
	free(b);
	return last;
}

/* See detect_int.h. */
uint64_t dt_junk_lead(struct dt_ctx *c, uint32_t i)
{
	uint64_t lead;
	junk_end(c, i, &lead);
	return lead;
}

/* The rows at image offsets IO over T, as pscan_starts tries them: 1 when
 * they vanish (c->ps5_* filled). */
static int starts_vanish(struct dt_ctx *c, uint64_t t, const uint64_t *io, uint64_t span, uint8_t *acc)
{
	uint64_t nz = 0, top = 0, bottom = UINT64_MAX;
	double sh = 0;
	for (uint32_t i = 0; i < c->nimg; i++)
		if (t >> i & 1) {
			top = io[i] > top ? io[i] : top;
			bottom = io[i] < bottom ? io[i] : bottom;
		}
	if (top == bottom && !top)
		return 0;   /* one start, 0: the rows at equal offsets, which say nothing of where (seed 3228) */
	/* rows past the latest start: PS_HEAD short of the images' end, or
	 * on small images (a small volume) all there are, a MiB at least */
	uint64_t len = span >= PS_HEAD * 2 ? span - PS_HEAD : span > top + (1u << 20) ? span - top : 0;
	if (top > span || !len || verdict(c, t, len, acc, &nz, &sh, io, NULL) != 5)
		return 0;
	c->ps5_mask = t;
	c->ps5_hi = (uint32_t)__builtin_popcountll(t);
	c->ps5_lo = (uint32_t)__builtin_popcountll(t & nz);
	memcpy(c->ps_ioff, io, c->nimg * sizeof *io);
	c->ps_has_ioff = 1;
	return 1;
}

/* Members whose data starts differ, or that hold junk before it: the
 * rows at each image's end of junk (junk_end; or 0 for one of them, whose
 * own data may look random; then the ends of the junk runs from byte 0),
 * every image or every image but one; a
 * vanishing XOR there proves both the members and their starts.  Fills
 * c->ps5_* and ps_ioff. */
static void pscan_starts(struct dt_ctx *c, uint64_t all, uint64_t span, uint8_t *acc)
{
	uint64_t je[2][64] = { { 0 } }, io[64];
	int differ = 0, leads = 0;
	if (c->nimg > 12)
		return;   /* (images + 1)^2 tries */
	for (uint32_t i = 0; i < c->nimg; i++) {
		je[0][i] = junk_end(c, i, &je[1][i]);
#ifdef DT_DEBUG
		fprintf(stderr, "JUNK img %u end %llu lead %llu\n", i, (unsigned long long)je[0][i], (unsigned long long)je[1][i]);
#endif
		differ |= je[0][i] != je[0][0];
		leads |= je[1][i] != je[0][i];
	}
	if (!differ && !je[0][0])
		return;   /* the same start and no junk: the rows at equal offsets said it all */
	for (int w = 0; w < 1 + leads; w++)
		for (uint32_t v = 0; v <= c->nimg; v++) {
			if (v && !je[w][v - 1])
				continue;
			memcpy(io, je[w], c->nimg * sizeof *io);
			if (v)
				io[v - 1] = 0;
			for (uint32_t j = 0; j <= c->nimg && (j == 0 || c->nimg >= 4); j++)
				if (starts_vanish(c, j == 0 ? all : all & ~(1ull << (j - 1)), io, span, acc))
					return;
		}
}

/* Members whose starts differ with no junk before their data to show
 * where (pscan_starts needs junk): the differences the copies on parity
 * show (detect_align.c), over every image but one at most (an unrelated
 * one; images of zeros fit any start), checked by the rows at those
 * offsets: all vanish (RAID-4/5) or equal one image (RAID-6); some
 * vanish (members missing) only where every image was placed.  Fills
 * c->ps_* and ps_rel; 1 when the rows hold. */
static int pscan_align(struct dt_ctx *c, uint64_t all, uint64_t span, uint8_t *acc)
{
	uint64_t t, rel[64], nz = 0, blank;
	uint32_t paired = 0;
	double sh = 0;
	if (!dt_align_starts(c, &t, rel, &blank))
		return 0;
	t |= blank;
	if (__builtin_popcountll(all & ~t) > 1)
		return 0;
	int k = verdict(c, t, span, acc, &nz, &sh, rel, &paired);
	if (k == 1 && t != all)
		k = 0;
	if (k && paired * 4 >= c->ps_rows_seen)
		k = 0;   /* a RAID-10's copies one chunk on, read as starts one chunk apart (seed 3006) */
#ifdef DT_DEBUG
	fprintf(stderr, "ALIGN t %llx verdict %d:", (unsigned long long)t, k);
	for (uint32_t i = 0; i < c->nimg; i++)
		fprintf(stderr, " %llu", (unsigned long long)rel[i]);
	fprintf(stderr, "\n");
#endif
	if (!k)
		return 0;
	uint32_t n = (uint32_t)__builtin_popcountll(t), lo = (uint32_t)__builtin_popcountll(t & nz);
	if (k == 5)
		c->ps5_mask = t, c->ps5_lo = lo, c->ps5_hi = n;
	else if (k == 6)
		c->ps6_mask = t, c->ps6_lo = lo, c->ps6_hi = n;
	else {   /* some rows vanish: one member missing (RAID-5, 6) or two (RAID-6) */
		c->ps5_mask = c->ps6_mask = t;
		c->ps5_lo = c->ps6_lo = lo + 1;
		c->ps5_hi = n + 1;
		c->ps6_hi = n + 2;
	}
	memcpy(c->ps_rel, rel, c->nimg * sizeof *rel);
	c->ps_has_rel = 1;
	return 1;
}

/* See detect_int.h. */
void dt_pscan(struct dt_ctx *c)
{
	c->ps5_lo = c->ps5_hi = c->ps6_lo = c->ps6_hi = 0;
	c->ps_off = c->ps5_mask = c->ps6_mask = 0;
	c->ps_has_ioff = c->ps_has_rel = 0;
	if (c->nimg < 3 || c->nimg > 64)
		return;
	uint64_t all = c->nimg == 64 ? UINT64_MAX : (1ull << c->nimg) - 1, span = UINT64_MAX;
	for (uint32_t i = 0; i < c->nimg; i++)
		if (c->img[i].size >= (8ull << 20) && c->img[i].size < span)
			span = c->img[i].size;
	for (uint32_t i = 0; i < c->nimg && span == UINT64_MAX; i++)
		if (c->img[i].size >= (1ull << 20)) {   /* every image small: a small volume over many members */
			span = c->img[i].size;
			for (uint32_t j = 0; j < c->nimg; j++)
				if (c->img[j].size >= (1ull << 20) && c->img[j].size < span)
					span = c->img[j].size;
		}
	uint8_t *acc = malloc(DT_BLK);
	if (!acc || span == UINT64_MAX) {
		free(acc);
		return;
	}
	/* every image, then every image but one: an unrelated image, or the Q
	 * of a RAID-6 that keeps Q on one member (both stay candidates); images
	 * of zeros fit any row, so the member count lies between the images
	 * holding data and all of them */
	uint64_t nzimg = 0, t5 = 0, t6 = 0, t1 = 0, nz1 = 0;
	double sh = 0, best1 = 0;
	int k = verdict(c, all, span, acc, &nzimg, &sh, NULL, NULL);
	uint32_t fewest_rows = c->ps_rows_seen;   /* an unrelated image of random bytes fills every row */
	if (k == 5)
		t5 = all;
	if (k == 6)
		t6 = all;
	if (k == 1)
		t1 = all, nz1 = nzimg, best1 = sh;
	if (t5 || t6) {
		uint64_t t = t5 ? t5 : t6;
		uint32_t *lo = t5 ? &c->ps5_lo : &c->ps6_lo, *hi = t5 ? &c->ps5_hi : &c->ps6_hi;
		*hi = (uint32_t)__builtin_popcountll(t);
		*lo = (uint32_t)__builtin_popcountll(t & nzimg);
	}
	for (uint32_t j = 0; !t5 && (!t6 || t6 == all) && c->nimg >= 4 && j < c->nimg; j++) {
		uint64_t t = all & ~(1ull << j), nz = 0;
		sh = 0;
		k = verdict(c, t, span, acc, &nz, &sh, NULL, NULL);
		if (c->ps_rows_seen < fewest_rows)
			fewest_rows = c->ps_rows_seen;
		if (k == 5) {
			t5 = t;
			c->ps5_hi = (uint32_t)__builtin_popcountll(t);
			c->ps5_lo = (uint32_t)__builtin_popcountll(t & nz);
		} else if (k == 6 && !t6) {   /* a RAID-6 beside an unrelated image (make check's seed 105:
		                               * read as a RAID-6 of 6 with two members gone) */
			t6 = t;
			c->ps6_hi = (uint32_t)__builtin_popcountll(t);
			c->ps6_lo = (uint32_t)__builtin_popcountll(t & nz);
		} else if (k == 1 && sh > best1 * 1.25)   /* an unrelated image among them dilutes the share */
			t1 = t, nz1 = nz, best1 = sh;
	}
	if (t6 && t6 != all && !t5)
		t6 = other_q(c, all, t6, span, acc);
	if (!t5 && !t6 && t1 && c->nimg <= 12) {
		/* junk before the data (the same length on every image, or not)
		 * fails the rows there: past it they may all vanish (seed 2311:
		 * a RAID-5 of 10, every member 1.7 MiB of junk first, was read
		 * as one with a member missing).  The same start: past the last
		 * head sector where the rows fail (junk_end reads random files
		 * as junk too); else each image's junk end */
		uint64_t io[64], st = data_start(c, all, 5);
		for (uint32_t i = 0; i < c->nimg; i++)
			io[i] = st;
		if (!st || !starts_vanish(c, all, io, span, acc))
			pscan_starts(c, all, span, acc);
		if (c->ps_has_ioff || pscan_align(c, all, span, acc)) {
			free(acc);
			return;
		}
	}
	if (!t5 && !t6 && t1) {   /* members missing: one (RAID-5, 6) or two (RAID-6) */
		uint32_t n = (uint32_t)__builtin_popcountll(t1), lo = (uint32_t)__builtin_popcountll(t1 & nz1);
		t5 = t6 = t1;
		c->ps5_lo = lo + 1;
		c->ps5_hi = n + 1;
		c->ps6_lo = lo + 1;
		c->ps6_hi = n + 2;
		c->ps5_mask = c->ps6_mask = t1;
		free(acc);
		return;   /* no start: the rows do not all vanish */
	}
	if (!t5 && !t6 && !t1) {
		pscan_starts(c, all, span, acc);
		if (!c->ps_has_ioff && pscan_align(c, all, span, acc)) {
			free(acc);
			return;
		}
	}
	free(acc);
	if (c->ps_has_ioff)
		return;
	if (!t5 && !t6 && !t1 && fewest_rows < PS_MIN_NZ && c->nimg <= 16 && pscan_head(c, all)) {
#ifdef DT_DEBUG
		fprintf(stderr, "PSCAN head 5: %u..%u mask %llx, 6: %u..%u mask %llx, off %llu\n", c->ps5_lo, c->ps5_hi,
		        (unsigned long long)c->ps5_mask, c->ps6_lo, c->ps6_hi, (unsigned long long)c->ps6_mask,
		        (unsigned long long)c->ps_off);
#endif
		return;
	}
	c->ps5_mask = t5;
	c->ps6_mask = t6;
	if (t5 || t6)
		c->ps_off = data_start(c, t5 ? t5 : t6, t5 ? 5 : 6);
#ifdef DT_DEBUG
	fprintf(stderr, "PSCAN 5: %u..%u mask %llx, 6: %u..%u mask %llx, off %llu\n", c->ps5_lo, c->ps5_hi, (unsigned long long)t5,
	        c->ps6_lo, c->ps6_hi, (unsigned long long)t6, (unsigned long long)c->ps_off);
#endif
}
