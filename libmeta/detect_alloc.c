/* detect_alloc.c: a file system's allocation map against the bytes a
 * hypothesis reads (dt_probe, full probes only).  Of clusters sampled over
 * the whole volume, those the map says are in use hold data (their first
 * bytes are not all zero) more often than the free ones under the right
 * geometry; under a wrong one (data chunks of a stripe in the wrong
 * order, a wrong rotation) the map and the bytes are unrelated, and both
 * shares are alike.  The difference of the two shares is the evidence
 * (h->alloc): a fresh file system keeps free space zero (about the used
 * share), a used one keeps deleted data there (a smaller difference, but
 * still not below a wrong geometry's) -- counting "data where free" or
 * "zeros where used" alone held back right answers on the forensics
 * samples and on NTFS's zeroed system files.  NTFS ($Bitmap, found
 * through MFT record 6), FAT (the first FAT's entries) and exFAT (its
 * allocation bitmap); ext's block bitmaps are checked in detect_probe.c.
 * Everything is read through the hypothesis and bounds-checked. */
#include <stdlib.h>
#include <string.h>

#include "detect_int.h"
#include "rk_le.h"
#include "rk_util.h"

#define AL_SAMPLES 256u    /* clusters sampled per volume */
#define AL_PEEK 256u       /* bytes of a cluster looked at */
#define AL_RUNS 64u        /* $Bitmap data runs kept */
#define AL_MIN 16u         /* used and free clusters read, at least each */

/* Volume bytes [BASE + V, +LEN) through H: 0 read. */
static int al_read(struct dt_ctx *c, struct dt_hyp *h, uint64_t base, uint64_t v, uint8_t *buf, size_t len)
{
	if (v > UINT64_MAX - base)
		return 1;
	return dt_vread(c, h, base + v, buf, len);
}

/* Whether allocation unit K is in use: 1, 0, or -1 when that cannot be
 * read (the map's own bytes unreadable or out of range). */
typedef int (*al_used_fn)(void *ctx, uint64_t k);

/* Samples AL_SAMPLES of the NUNITS units of UNIT bytes from volume byte
 * FIRST (from BASE), each "holding data" when its first AL_PEEK bytes are
 * not all zero, and sets H's alloc to the share of those USED says are in
 * use holding data less the share of the free ones holding data, when at
 * least AL_MIN of each were read. */
static void al_sample(struct dt_ctx *c, struct dt_hyp *h, uint64_t base, uint64_t first, uint64_t nunits,
                      uint64_t unit, al_used_fn used, void *ctx)
{
	uint8_t x[AL_PEEK];
	uint32_t n[2] = { 0, 0 }, data[2] = { 0, 0 };   /* [free, used] */
	for (uint32_t s = 0; s < AL_SAMPLES && nunits; s++) {
		uint64_t k = nunits > AL_SAMPLES ? (uint64_t)s * (nunits / AL_SAMPLES) + (s * 37u) % 61u % (nunits / AL_SAMPLES)
		                                 : s;
		int u;
		if (k >= nunits || k > (UINT64_MAX - first) / unit || (u = used(ctx, k)) < 0 ||
		    al_read(c, h, base, first + k * unit, x, sizeof x))
			continue;
		n[u]++;
		data[u] += !rk_buf_is_zero(x, sizeof x);
	}
	if (n[0] >= AL_MIN && n[1] >= AL_MIN)
		h->alloc = (double)data[1] / n[1] - (double)data[0] / n[0];
}

/* ---- NTFS ---- */

struct al_ntfs {
	struct dt_ctx *c;
	struct dt_hyp *h;
	uint64_t base, clus;
	uint64_t vcn[AL_RUNS], len[AL_RUNS], lcn[AL_RUNS];   /* the $Bitmap's runs (lcn UINT64_MAX: sparse) */
	uint32_t nruns;
};

/* Applies the update sequence fixups of the REC bytes at R (1 ok). */
static int ntfs_fixup(uint8_t *r, size_t rec)
{
	uint32_t uo = rk_get_le16(r + 4), un = rk_get_le16(r + 6);
	if (un < 2 || uo + 2ull * un > rec || (un - 1) * 512ull > rec)
		return 0;
	for (uint32_t i = 1; i < un; i++) {
		uint8_t *end = r + i * 512 - 2;
		if (memcmp(end, r + uo, 2))
			return 0;   /* torn, or not a record */
		memcpy(end, r + uo + 2 * i, 2);
	}
	return 1;
}

/* A little-endian integer of N (0..8) bytes at P; signed when SIGNED. */
static int64_t le_n(const uint8_t *p, uint32_t n, int sgn)
{
	uint64_t v = 0;
	for (uint32_t i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	if (sgn && n && n < 8 && (p[n - 1] & 0x80))
		v |= ~0ull << (8 * n);
	return (int64_t)v;
}

/* Decodes the runlist at R[OFF..END) into A's runs (1 when any). */
static int ntfs_runs(struct al_ntfs *a, const uint8_t *r, uint32_t off, uint32_t end)
{
	uint64_t vcn = 0;
	int64_t lcn = 0;
	while (off < end && r[off] && a->nruns < AL_RUNS) {
		uint32_t ln = r[off] & 15, on = r[off] >> 4;
		if (!ln || ln > 8 || on > 8 || off + 1 + ln + on > end)
			return 0;
		uint64_t len = (uint64_t)le_n(r + off + 1, ln, 0);
		int64_t d = le_n(r + off + 1 + ln, on, 1);
		if (!len || len > (1ull << 40))
			return 0;
		lcn += d;
		if (on && (lcn < 0 || (uint64_t)lcn > (1ull << 40)))
			return 0;
		a->vcn[a->nruns] = vcn;
		a->len[a->nruns] = len;
		a->lcn[a->nruns] = on ? (uint64_t)lcn : UINT64_MAX;
		a->nruns++;
		vcn += len;
		off += 1 + ln + on;
	}
	return a->nruns > 0;
}

/* The runs of the unnamed, non-resident $DATA attribute of MFT record R
 * (REC bytes, fixed up). */
static int ntfs_data_runs(struct al_ntfs *a, const uint8_t *r, size_t rec)
{
	uint32_t at = rk_get_le16(r + 0x14);
	for (int guard = 0; guard < 32 && at + 16 <= rec; guard++) {
		uint32_t type = rk_get_le32(r + at), len = rk_get_le32(r + at + 4);
		if (type == 0xFFFFFFFFu || len < 16 || len > rec - at)
			return 0;
		if (type == 0x80 && r[at + 8] == 1 && r[at + 9] == 0 && len >= 0x40) {
			uint32_t ro = rk_get_le16(r + at + 0x20);
			return ro < len && ntfs_runs(a, r, at + ro, at + len);
		}
		at += len;
	}
	return 0;
}

static int ntfs_used(void *ctx, uint64_t k)
{
	struct al_ntfs *a = ctx;
	uint64_t byte = k / 8, vcn = byte / a->clus;
	for (uint32_t i = 0; i < a->nruns; i++) {
		if (vcn < a->vcn[i] || vcn - a->vcn[i] >= a->len[i])
			continue;
		if (a->lcn[i] == UINT64_MAX)
			return -1;
		uint8_t b;
		uint64_t v = (a->lcn[i] + (vcn - a->vcn[i])) * a->clus + byte % a->clus;
		if (al_read(a->c, a->h, a->base, v, &b, 1))
			return -1;
		return (b >> (k % 8)) & 1;
	}
	return -1;
}

void dt_alloc_ntfs(struct dt_ctx *c, struct dt_hyp *h, uint64_t base, const uint8_t *bt)
{
	uint32_t bps = rk_get_le16(bt + 0x0B), spc = bt[0x0D];
	uint64_t clus = spc <= 0x80 ? (uint64_t)spc * bps : 0;
	int8_t cpr = (int8_t)bt[0x40];
	uint64_t rec = cpr < 0 ? (cpr >= -20 ? 1ull << -cpr : 0) : (uint64_t)cpr * clus;
	uint64_t mft = rk_get_le64(bt + 0x30), secs = rk_get_le64(bt + 0x28);
	if (!clus || clus > (2u << 20) || bps < 512 || bps > 4096 || rec < 512 || rec > 4096 || mft > (1ull << 40) || secs > (1ull << 48))
		return;
	struct al_ntfs *a = calloc(1, sizeof *a);
	uint8_t r[4096];
	if (!a)
		return;
	*a = (struct al_ntfs){ .c = c, .h = h, .base = base, .clus = clus };
	/* record 6 is $Bitmap; the MFT's first records are contiguous */
	if (!al_read(c, h, base, mft * clus + 6 * rec, r, (size_t)rec) && !memcmp(r, "FILE", 4) &&
	    rk_get_le32(r + 0x2C) == 6 && ntfs_fixup(r, (size_t)rec) && ntfs_data_runs(a, r, (size_t)rec))
		al_sample(c, h, base, 0, secs * bps / clus, clus, ntfs_used, a);
	free(a);
}

/* ---- FAT ---- */

struct al_fat {
	struct dt_ctx *c;
	struct dt_hyp *h;
	uint64_t base, fat;   /* the first FAT's volume byte */
	uint32_t bits;        /* 12, 16 or 32 */
};

static int fat_used(void *ctx, uint64_t k)
{
	struct al_fat *a = ctx;
	uint64_t n = k + 2, at = a->bits == 12 ? n * 3 / 2 : n * (a->bits / 8);
	uint8_t e[4];
	if (al_read(a->c, a->h, a->base, a->fat + at, e, a->bits == 32 ? 4 : 2))
		return -1;
	uint32_t v = a->bits == 32 ? rk_get_le32(e) & 0x0FFFFFFFu : rk_get_le16(e);
	if (a->bits == 12)
		v = (n & 1) ? v >> 4 : v & 0xFFF;
	return v != 0;
}

void dt_alloc_fat(struct dt_ctx *c, struct dt_hyp *h, uint64_t base, const uint8_t *bt)
{
	uint32_t bps = rk_get_le16(bt + 0x0B), spc = bt[0x0D], res = rk_get_le16(bt + 0x0E), nf = bt[0x10];
	uint32_t rootents = rk_get_le16(bt + 0x11);
	uint64_t fsz = rk_get_le16(bt + 0x16) ? rk_get_le16(bt + 0x16) : rk_get_le32(bt + 0x24);
	uint64_t total = rk_get_le16(bt + 0x13) ? rk_get_le16(bt + 0x13) : rk_get_le32(bt + 0x20);
	if (bps < 512 || bps > 4096 || (bps & (bps - 1)) || !spc || (spc & (spc - 1)) || !nf || nf > 2 || !fsz)
		return;
	uint64_t data = res + nf * fsz + ((uint64_t)rootents * 32 + bps - 1) / bps;
	if (total <= data)
		return;
	uint64_t ncl = (total - data) / spc;
	struct al_fat a = { c, h, base, (uint64_t)res * bps, ncl < 4085 ? 12 : ncl < 65525 ? 16 : 32 };
	/* the FAT must cover every cluster it is asked about */
	uint64_t need = a.bits == 12 ? (ncl + 2) * 3 / 2 + 2 : (ncl + 2) * (a.bits / 8);
	if (need > fsz * bps)
		return;
	al_sample(c, h, base, data * bps, ncl, (uint64_t)spc * bps, fat_used, &a);
}

/* ---- exFAT ---- */

struct al_exfat {
	struct dt_ctx *c;
	struct dt_hyp *h;
	uint64_t base, bitmap;   /* the bitmap's volume byte (contiguous, as mkfs.exfat lays it) */
};

static int exfat_used(void *ctx, uint64_t k)
{
	struct al_exfat *a = ctx;
	uint8_t b;
	if (al_read(a->c, a->h, a->base, a->bitmap + k / 8, &b, 1))
		return -1;
	return (b >> (k % 8)) & 1;
}

void dt_alloc_exfat(struct dt_ctx *c, struct dt_hyp *h, uint64_t base, uint64_t heap, uint64_t csize,
                    uint64_t nclus, uint64_t bitmap, uint64_t bitmap_len)
{
	if (!csize || bitmap == UINT64_MAX || bitmap_len < (nclus + 7) / 8)
		return;
	struct al_exfat a = { c, h, base, bitmap };
	al_sample(c, h, base, heap, nclus, csize, exfat_used, &a);
}
