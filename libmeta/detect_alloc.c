/* detect_alloc.c: a file system's allocation map where two readings of
 * the volume differ (dt_alloc_tiebreak).  Two hypotheses that place the
 * same images at the same starts but in other roles (two chunks of a
 * stripe swapped, another rotation) score alike on anchors that lie
 * elsewhere; where they differ, the map the volume holds says which of the
 * two places holds data: under the right reading the units it says are
 * used hold data more often than the free ones, under a wrong one the map
 * and the bytes are unrelated.  The map as each reading reads it: ext's
 * block bitmaps through the group descriptors, NTFS's $Bitmap through the
 * data runs of MFT record 6 (update sequence fixups applied), the first
 * FAT's entries.  Only where the readings differ, and only as a tie-break:
 * over the whole volume the fit is no evidence of its own (a used file
 * system keeps deleted data in free units, and a reading right about the
 * first chunk fits about as well as the truth: seed 2550, a RAID-1 of 3
 * read as a RAID-5 with a junk image at 0.71 while the fit counted in the
 * score).  Everything is read through the hypothesis and bounds-checked. */
#include <stdlib.h>
#include <string.h>

#include "detect_int.h"
#include "rk_le.h"
#include "rk_util.h"

#define AL_PEEK 256u       /* bytes of a cluster looked at */
#define AL_RUNS 64u        /* $Bitmap data runs kept */

/* Volume bytes [BASE + V, +LEN) through H: 0 read. */
static int al_read(struct dt_ctx *c, struct dt_hyp *h, uint64_t base, uint64_t v, uint8_t *buf, size_t len)
{
	if (v > UINT64_MAX - base)
		return 1;
	return dt_vread(c, h, base + v, buf, len);
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

/* ---- where two readings differ ---- */

#define TB_SAMPLES 256u     /* differing units looked at, at most */
#define TB_TRIES 8192u      /* places tried to find them */
#define TB_MIN 8u           /* used (and free) units needed for a verdict */

/* The allocation map H reads for the file system at volume byte 0; kind 0
 * when none is known. */
struct amap {
	int kind;                        /* 0 none, 1 ext, 2 NTFS, 3 FAT */
	uint64_t unit, first, nunits;    /* allocation unit, the volume byte of unit 0, units */
	uint32_t ext_bpg, ext_dsz;       /* ext: blocks per group, descriptor size */
	uint64_t ext_gdt;                /* ext: the group descriptors' volume byte */
	struct al_ntfs *ntfs;
	struct al_fat fat;
};

static int ext_used(struct dt_ctx *c, struct dt_hyp *h, const struct amap *m, uint64_t k)
{
	uint64_t g = k / m->ext_bpg, j = k % m->ext_bpg;
	uint8_t d[64], b;
	if (al_read(c, h, 0, m->ext_gdt + g * m->ext_dsz, d, m->ext_dsz < 64 ? 32 : 64))
		return -1;
	uint64_t bb = rk_get_le32(d) | (m->ext_dsz >= 64 ? (uint64_t)rk_get_le32(d + 0x20) << 32 : 0);
	if (!bb || (rk_get_le16(d + 0x12) & 2) || bb > UINT64_MAX / m->unit)
		return -1;   /* BLOCK_UNINIT: the bitmap was never written */
	if (al_read(c, h, 0, bb * m->unit + j / 8, &b, 1))
		return -1;
	return (b >> (j % 8)) & 1;
}

/* Unit K's state in M as H reads it: 1 used, 0 free, -1 unknown. */
static int amap_used(struct dt_ctx *c, struct dt_hyp *h, struct amap *m, uint64_t k)
{
	switch (m->kind) {
	case 1: return ext_used(c, h, m, k);
	case 2: m->ntfs->h = h; return ntfs_used(m->ntfs, k);
	case 3: m->fat.h = h; return fat_used(&m->fat, k);
	}
	return -1;
}

/* M from what H reads at the volume's start (ext superblock, NTFS, FAT). */
static void amap_open(struct dt_ctx *c, struct dt_hyp *h, struct amap *m)
{
	uint8_t v[2048];
	memset(m, 0, sizeof *m);
	if (al_read(c, h, 0, 0, v, sizeof v))
		return;
	const uint8_t *sb = v + 1024;
	if (rk_get_le16(sb + 0x38) == 0xEF53 && rk_get_le32(sb + 0x18) <= 6) {
		uint32_t bs = 1024u << rk_get_le32(sb + 0x18), bpg = rk_get_le32(sb + 0x20), fdb = rk_get_le32(sb + 0x14);
		uint32_t inc = rk_get_le32(sb + 0x60), dsz = (inc & 0x80) ? rk_get_le16(sb + 0xFE) : 32;
		uint64_t blocks = rk_get_le32(sb + 4) | ((inc & 0x80) ? (uint64_t)rk_get_le32(sb + 0x150) << 32 : 0);
		if (!bpg || dsz < 32 || dsz > 1024 || fdb > 1 || blocks <= fdb || blocks > (1ull << 40))
			return;
		*m = (struct amap){ .kind = 1, .unit = bs, .first = (uint64_t)fdb * bs, .nunits = blocks - fdb,
		                    .ext_bpg = bpg, .ext_dsz = dsz, .ext_gdt = (uint64_t)(fdb + 1) * bs };
	} else if (!memcmp(v + 3, "NTFS    ", 8)) {
		uint32_t bps = rk_get_le16(v + 0x0B), spc = v[0x0D];
		uint64_t clus = spc <= 0x80 ? (uint64_t)spc * bps : 0;
		int8_t cpr = (int8_t)v[0x40];
		uint64_t rec = cpr < 0 ? (cpr >= -20 ? 1ull << -cpr : 0) : (uint64_t)cpr * clus;
		uint64_t mft = rk_get_le64(v + 0x30), secs = rk_get_le64(v + 0x28);
		uint8_t r[4096];
		if (!clus || clus > (2u << 20) || bps < 512 || bps > 4096 || rec < 512 || rec > 4096 || mft > (1ull << 40) ||
		    secs > (1ull << 48) || !(m->ntfs = calloc(1, sizeof *m->ntfs)))
			return;
		*m->ntfs = (struct al_ntfs){ .c = c, .h = h, .clus = clus };
		if (al_read(c, h, 0, mft * clus + 6 * rec, r, (size_t)rec) || memcmp(r, "FILE", 4) ||
		    rk_get_le32(r + 0x2C) != 6 || !ntfs_fixup(r, (size_t)rec) || !ntfs_data_runs(m->ntfs, r, (size_t)rec)) {
			free(m->ntfs);
			m->ntfs = NULL;
			return;
		}
		m->kind = 2;
		m->unit = clus;
		m->nunits = secs * bps / clus;
	} else if (v[510] == 0x55 && v[511] == 0xAA && (v[0] == 0xEB || v[0] == 0xE9) && v[0x10] && v[0x10] <= 2) {
		uint32_t bps = rk_get_le16(v + 0x0B), spc = v[0x0D], res = rk_get_le16(v + 0x0E), nf = v[0x10];
		uint64_t fsz = rk_get_le16(v + 0x16) ? rk_get_le16(v + 0x16) : rk_get_le32(v + 0x24);
		uint64_t total = rk_get_le16(v + 0x13) ? rk_get_le16(v + 0x13) : rk_get_le32(v + 0x20);
		if (bps < 512 || bps > 4096 || (bps & (bps - 1)) || !spc || (spc & (spc - 1)) || !fsz)
			return;
		uint64_t data = res + nf * fsz + ((uint64_t)rk_get_le16(v + 0x11) * 32 + bps - 1) / bps;
		if (total <= data)
			return;
		uint64_t ncl = (total - data) / spc;
		uint32_t bits = !rk_get_le16(v + 0x16) ? 32 : ncl < 4085 ? 12 : 16;   /* as dt_alloc_fat */
		if ((bits == 12 ? (ncl + 2) * 3 / 2 + 2 : (ncl + 2) * (bits / 8)) > fsz * bps)
			return;
		*m = (struct amap){ .kind = 3, .unit = (uint64_t)spc * bps, .first = data * bps, .nunits = ncl,
		                    .fat = { c, h, 0, (uint64_t)res * bps, bits } };
	}
}

/* Whether A and B read volume byte V from different places (one of them
 * rebuilding it counts as different). */
static int differ_at(const struct dt_hyp *a, const struct dt_hyp *b, uint64_t v)
{
	uint32_t ia, ib;
	uint64_t oa, ob;
	uint32_t na = dt_where(a, v, &ia, &oa, 1), nb = dt_where(b, v, &ib, &ob, 1);
	return !na || !nb || ia != ib || oa != ob;
}

/* One hypothesis's tally over the sampled units: [free, used] read and
 * holding data. */
struct tb_tally { uint32_t n[2], data[2]; };

static double tb_fit(const struct tb_tally *t)
{
	if (t->n[1] < TB_MIN)
		return -2;   /* no verdict */
	double used = (double)t->data[1] / t->n[1];
	return t->n[0] >= TB_MIN ? used - (double)t->data[0] / t->n[0] : used - 0.5;
}

/* See detect_int.h. */
int dt_alloc_tiebreak(struct dt_ctx *c, struct dt_hyp *a, struct dt_hyp *b, double *fit_a, double *fit_b)
{
	struct amap ma, mb;
	struct tb_tally ta = { { 0, 0 }, { 0, 0 } }, tbb = { { 0, 0 }, { 0, 0 } };
	uint64_t vs = a->g.volume_size < b->g.volume_size ? a->g.volume_size : b->g.volume_size;
	amap_open(c, a, &ma);
	amap_open(c, b, &mb);
	int ok = ma.kind && ma.kind == mb.kind && ma.unit == mb.unit && ma.first == mb.first && ma.nunits;
	uint32_t got = 0;
	for (uint32_t t = 0; ok && t < TB_TRIES && got < TB_SAMPLES; t++) {
		uint64_t k = ((uint64_t)t * 0x9E3779B97F4A7C15ull >> 11) % ma.nunits;
		uint8_t xa[AL_PEEK], xb[AL_PEEK];
		if (k > (UINT64_MAX - ma.first) / ma.unit)
			continue;
		uint64_t v = ma.first + k * ma.unit;
		if (v >= vs || vs - v < AL_PEEK || !differ_at(a, b, v))
			continue;
		int ua = amap_used(c, a, &ma, k), ub = amap_used(c, b, &mb, k);
		if (ua < 0 || ub < 0 || al_read(c, a, 0, v, xa, sizeof xa) || al_read(c, b, 0, v, xb, sizeof xb))
			continue;
		got++;
		ta.n[ua]++;
		ta.data[ua] += !rk_buf_is_zero(xa, sizeof xa);
		tbb.n[ub]++;
		tbb.data[ub] += !rk_buf_is_zero(xb, sizeof xb);
	}
	free(ma.ntfs);
	free(mb.ntfs);
	*fit_a = tb_fit(&ta);
	*fit_b = tb_fit(&tbb);
	return *fit_a > -2 && *fit_b > -2;
}

