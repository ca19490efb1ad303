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
 * FAT's entries, exFAT's allocation bitmap, XFS's free-space B+tree by
 * block number (each AG's AGF); each at the volume's start or in an MBR's
 * first partition (seed 3521: the forensics ext4 sample, at 1 MiB).
 * Only where the readings differ, and only as a tie-break:
 * over the whole volume the fit is no evidence of its own (a used file
 * system keeps deleted data in free units, and a reading right about the
 * first chunk fits about as well as the truth: seed 2550, a RAID-1 of 3
 * read as a RAID-5 with a junk image at 0.71 while the fit counted in the
 * score).  Everything is read through the hypothesis and bounds-checked. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "detect_int.h"
#include "rk_le.h"
#include "rk_util.h"

#define AL_PEEK 256u        /* bytes of a unit looked at */
#define TB_SAMPLES 256u     /* differing units looked at, at most */
#define TB_TRIES 8192u      /* places tried to find them */
#define TB_MIN 8u           /* used (and free) units needed for a verdict */
#define TB_FREE_MIN 64u     /* free units needed for a verdict without used ones */

/* The allocation map a hypothesis reads for the file system at volume
 * byte 0; kind AM_NONE when none is known. */
enum { AM_NONE, AM_EXT, AM_NTFS, AM_FAT, AM_EXFAT, AM_XFS };
struct amap {
	int kind;
	uint64_t base;                  /* the file system's volume byte (its partition's start) */
	uint64_t unit, first, nunits;   /* allocation unit, the volume byte of unit 0, units */
	uint64_t table;                 /* ext: the group descriptors' volume byte; FAT: the first FAT's;
	                                   exFAT: the allocation bitmap's */
	uint32_t bpg, dsz;              /* ext: blocks per group, descriptor size */
	uint32_t fat32;                 /* FAT: 32-bit entries (else 16) */
	uint32_t agblocks, sect;        /* XFS: blocks per AG, sector size */
	struct dt_runs runs;            /* NTFS: $Bitmap's runs */
};

/* The volume byte holding bit K of M's map as H reads it (*BIT its bit
 * there); UINT64_MAX when it cannot be told (a sparse or absent run, a
 * group whose bitmap was never written). */
static uint64_t map_bit(struct dt_ctx *c, const struct dt_hyp *h, const struct amap *m, uint64_t k, uint32_t *bit)
{
	*bit = (uint32_t)(k % 8);
	if (m->kind == AM_EXFAT)
		return m->table + k / 8;
	if (m->kind == AM_NTFS) {
		uint64_t byte = k / 8, lcn = dt_runs_lcn(&m->runs, byte / m->unit);
		return lcn == UINT64_MAX ? UINT64_MAX : m->base + lcn * m->unit + byte % m->unit;
	}
	uint64_t g = k / m->bpg, j = k % m->bpg;   /* ext */
	uint8_t d[64];
	if (dt_vread(c, h, m->table + g * m->dsz, d, m->dsz < 64 ? 32 : 64))
		return UINT64_MAX;
	uint64_t bb = rk_get_le32(d) | (m->dsz >= 64 ? (uint64_t)rk_get_le32(d + 0x20) << 32 : 0);
	if (!bb || (rk_get_le16(d + 0x12) & 2) || bb > UINT64_MAX / m->unit / 2)
		return UINT64_MAX;   /* BLOCK_UNINIT: the bitmap was never written */
	*bit = (uint32_t)(j % 8);
	return m->base + bb * m->unit + j / 8;
}

#define XFS_LEVELS 8u   /* deeper free-space trees are taken for damage */

/* XFS block K's state in M as H reads it: free when a record of its AG's
 * free-space B+tree by block number (the AGF's bno root; short-form
 * blocks, "ABTB" or with v5's CRC header "AB3B") covers it.  1 used, 0
 * free, -1 unknown. */
static int xfs_used(struct dt_ctx *c, const struct dt_hyp *h, const struct amap *m, uint64_t k)
{
	uint64_t ag = k / m->agblocks, agbno = k % m->agblocks, agstart = m->base + ag * m->agblocks * m->unit;
	uint8_t agf[32], b[4096];
	if (dt_vread(c, h, agstart + m->sect, agf, sizeof agf) || memcmp(agf, "XAGF", 4) || rk_get_be32(agf + 8) != ag)
		return -1;
	uint64_t blk = rk_get_be32(agf + 16);
	uint32_t level = rk_get_be32(agf + 28);
	for (uint32_t depth = 0; depth < XFS_LEVELS; depth++) {
		if (blk >= m->agblocks || !level || level > XFS_LEVELS ||
		    dt_vread(c, h, agstart + blk * m->unit, b, (size_t)m->unit))
			return -1;
		uint32_t hdr = !memcmp(b, "AB3B", 4) ? 56 : !memcmp(b, "ABTB", 4) ? 16 : 0;
		uint32_t lv = rk_get_be16(b + 4), n = rk_get_be16(b + 6);
		uint32_t per = hdr ? (uint32_t)(m->unit - hdr) / (lv ? 12u : 8u) : 0;   /* records, or keys and pointers */
		if (!hdr || lv != level - 1 || !n || n > per)
			return -1;
		if (!lv) {
			for (uint32_t q = 0; q < n; q++) {
				uint64_t st = rk_get_be32(b + hdr + 8 * q), len = rk_get_be32(b + hdr + 8 * q + 4);
				if (agbno >= st && agbno - st < len)
					return 0;
			}
			return 1;
		}
		uint32_t q = 0;   /* the last key at or before AGBNO */
		while (q + 1 < n && rk_get_be32(b + hdr + 8 * (q + 1)) <= agbno)
			q++;
		blk = rk_get_be32(b + hdr + 8 * per + 4 * q);
		level = lv;
	}
	return -1;
}

/* Unit K's state in M as H reads it: 1 used, 0 free, -1 unknown. */
static int amap_used(struct dt_ctx *c, const struct dt_hyp *h, const struct amap *m, uint64_t k)
{
	if (m->kind == AM_XFS)
		return xfs_used(c, h, m, k);
	if (m->kind == AM_FAT) {   /* the entry of cluster k + 2: 0 is free */
		uint8_t e[4];
		if (dt_vread(c, h, m->table + (k + 2) * (m->fat32 ? 4 : 2), e, m->fat32 ? 4 : 2))
			return -1;
		return (m->fat32 ? rk_get_le32(e) & 0x0FFFFFFFu : rk_get_le16(e)) != 0;
	}
	uint32_t bit;
	uint8_t b;
	uint64_t at = map_bit(c, h, m, k, &bit);
	if (at == UINT64_MAX || dt_vread(c, h, at, &b, 1))
		return -1;
	return (b >> bit) & 1;
}

/* exFAT's allocation bitmap (bit K: cluster K + 2 in use), from the root
 * directory's bitmap entry as H reads it; kept contiguous by the writers
 * (mkfs.exfat, the kernel, exfat-fuse).  V: the boot sector at volume
 * byte BASE. */
static void exfat_map(struct dt_ctx *c, const struct dt_hyp *h, const uint8_t *v, uint64_t base, struct amap *m)
{
	uint32_t bsh = v[0x6C], csh = v[0x6D], root = rk_get_le32(v + 0x60);
	uint64_t nclus = rk_get_le32(v + 0x5C), heap = base + ((uint64_t)rk_get_le32(v + 0x58) << bsh);
	if (bsh < 9 || bsh > 12 || csh > 25 - bsh || !nclus || root < 2 || root - 2 >= nclus)
		return;
	uint64_t csize = 1ull << (bsh + csh);
	uint8_t d[1024];
	if (dt_vread(c, h, heap + (root - 2) * csize, d, sizeof d))
		return;
	for (uint32_t k = 0; k < sizeof d / 32 && d[32 * k]; k++) {
		const uint8_t *e = d + 32 * k;
		uint64_t first = rk_get_le32(e + 20), len = rk_get_le64(e + 24);
		if (e[0] != 0x81 || (e[1] & 1))
			continue;   /* the first allocation bitmap only */
		if (first < 2 || first - 2 >= nclus || len < (nclus + 7) / 8)
			return;
		*m = (struct amap){ .kind = AM_EXFAT, .unit = csize, .first = heap, .nunits = nclus,
		                    .table = heap + (first - 2) * csize };
		return;
	}
}

/* XFS's map from its superblock V (volume byte 0): blocks of 512 bytes
 * to 4 KiB (what xfs_used's buffer holds; Linux mounts no larger on 4
 * KiB pages), AGs of at least 16 blocks (XFS_MIN_AG_BLOCKS is 64), a
 * sector of 512 bytes up to the block size. */
static void xfs_map(const uint8_t *v, uint64_t base, struct amap *m)
{
	uint32_t bs = rk_get_be32(v + 4), agblocks = rk_get_be32(v + 0x54), agcount = rk_get_be32(v + 0x58);
	uint32_t sect = rk_get_be16(v + 0x66);
	uint64_t dblocks = rk_get_be64(v + 8);
	if (bs < 512 || bs > 4096 || (bs & (bs - 1)) || agblocks < 16 || !agcount || sect < 512 || sect > bs ||
	    (sect & (sect - 1)) || !dblocks || dblocks > (uint64_t)agblocks * agcount || dblocks > (1ull << 40))
		return;
	*m = (struct amap){ .kind = AM_XFS, .base = base, .unit = bs, .first = base, .nunits = dblocks, .agblocks = agblocks,
	                    .sect = sect };
}

/* M from what H reads at the volume's start (or its first partition's,
 * an MBR's), decoded as the scan decodes it (dt_fs_ext, dt_fs_ntfs,
 * dt_fat_learn), with the bounds the lookups need. */
static void amap_open(struct dt_ctx *c, const struct dt_hyp *h, struct amap *m)
{
	uint8_t v[2048];
	struct dt_fs fs;
	struct dt_self fat;
	memset(m, 0, sizeof *m);
	memset(&fs, 0, sizeof fs);
	memset(&fat, 0, sizeof fat);
	if (dt_vread(c, h, 0, v, sizeof v))
		return;
	uint64_t base = dt_mbr_first(v);
	if (base && dt_vread(c, h, base, v, sizeof v))
		return;
	if (!memcmp(v + 3, "EXFAT   ", 8)) {
		exfat_map(c, h, v, base, m);
		return;
	}
	if (!memcmp(v, "XFSB", 4)) {
		xfs_map(v, base, m);
		return;
	}
	if (dt_fs_ext(&fs, v + 1024)) {
		if (fs.ext_fdb > 1 || fs.ext_blocks <= fs.ext_fdb || fs.ext_blocks > (1ull << 40))
			return;
		*m = (struct amap){ .kind = AM_EXT, .base = base, .unit = fs.ext_bs, .first = base + (uint64_t)fs.ext_fdb * fs.ext_bs,
		                    .nunits = fs.ext_blocks - fs.ext_fdb, .table = base + (uint64_t)(fs.ext_fdb + 1) * fs.ext_bs,
		                    .bpg = fs.ext_bpg, .dsz = fs.ext_desc };
	} else if (dt_fs_ntfs(&fs, v)) {
		/* record 6 is $Bitmap; the MFT's first records are contiguous */
		uint8_t r[4096];
		uint64_t clus = fs.ntfs_clus, rec = fs.ntfs_rec, mft = fs.ntfs_mft_lcn;
		if (clus > (2u << 20) || rec < 512 || rec > sizeof r || mft > (1ull << 40) || fs.ntfs_sectors > (1ull << 48) ||
		    dt_vread(c, h, base + mft * clus + 6 * rec, r, (size_t)rec) || memcmp(r, "FILE", 4) ||
		    rk_get_le32(r + 0x2C) != 6 || !dt_ntfs_fixup(r, (size_t)rec) || !dt_ntfs_data_runs(&m->runs, r, (size_t)rec))
			return;
		m->kind = AM_NTFS;
		m->base = m->first = base;
		m->unit = clus;
		m->nunits = fs.ntfs_sectors * fs.ntfs_bps / clus;
	} else {
		dt_fat_learn(&fat, v);
		if (!fat.fat || (uint64_t)fat.fat_sz * fat.fat_bps < (fat.fat_nclus + 2) * (fat.fat_32 ? 4 : 2))
			return;   /* not FAT16/32, or a FAT too short for its clusters */
		*m = (struct amap){ .kind = AM_FAT, .base = base, .unit = fat.fat_clus, .first = base + fat.fat_data,
		                    .nunits = fat.fat_nclus, .table = base + (uint64_t)fat.fat_res * fat.fat_bps, .fat32 = fat.fat_32 };
	}
}

/* Whether A and B both read volume byte V from an image, from different
 * places.  Bytes either rebuilds are not compared: rebuilt bytes fit any
 * map (seed 2552: a RAID-5 with a role gone read with another rotation
 * fitted better there). */
static int differ_at(const struct dt_hyp *a, const struct dt_hyp *b, uint64_t v)
{
	uint32_t ia, ib;
	uint64_t oa, ob;
	uint32_t na = dt_where(a, v, &ia, &oa, 1), nb = dt_where(b, v, &ib, &ob, 1);
	return na && nb && (ia != ib || oa != ob);
}

/* Whether V lies in the learnt ext4's journal under map M: its blocks
 * are used, and zeros until logged to (seed 3521: the forensics ext4
 * sample's journal, 3 MiB of used zeros, gave the true order of a RAID-0
 * of 16 the worse fit, -0.74 against 0.37). */
static int in_ext_journal(const struct dt_ctx *c, const struct amap *m, uint64_t v)
{
	return m->kind == AM_EXT && m->base == c->fs.base[DT_FSK_EXT] && dt_ext_in_journal(c, v);
}

/* One hypothesis's tally over the sampled units: [free, used] read and
 * holding data. */
struct tb_tally { uint32_t n[2], data[2]; };

/* T's fit: the share of used units holding data less the free ones'; -2
 * no verdict.  Where the readings differ in free units only, 0 when none
 * holds data and -1 when TB_MIN do: two readings that permute the same
 * chunks over free space show the same bytes there, so one showing data
 * where the other shows none reads bytes the volume does not hold, such as
 * a parity block taken for data (seed 3459: a RAID-5 parity-last of 5
 * with a role gone, its P and last data image swapped, 316 of 1894 free
 * units holding data against none). */
static double tb_fit(const struct tb_tally *t)
{
	if (t->n[1] < TB_MIN)
		return t->n[0] < TB_FREE_MIN ? -2 : !t->data[0] ? 0 : t->data[0] >= TB_MIN ? -1 : -2;
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
	int ok = ma.kind != AM_NONE && ma.kind == mb.kind && ma.unit == mb.unit && ma.first == mb.first && ma.nunits;
	uint32_t got = 0;
	/* past TB_SAMPLES while neither has TB_MIN used units: a sparse
	 * file system's differing units are mostly free (seed 3551: 3 used
	 * of 256, the end of a linear array's XFS) */
	for (uint32_t t = 0; ok && t < TB_TRIES && (got < TB_SAMPLES || (ta.n[1] < TB_MIN && tbb.n[1] < TB_MIN)); t++) {
		uint64_t k = ((uint64_t)t * 0x9E3779B97F4A7C15ull >> 11) % ma.nunits;
		uint8_t xa[AL_PEEK], xb[AL_PEEK];
		if (k > (UINT64_MAX - ma.first) / ma.unit)
			continue;
		uint64_t v = ma.first + k * ma.unit;
		if (v >= vs || vs - v < AL_PEEK || in_ext_journal(c, &ma, v) || !differ_at(a, b, v))
			continue;
		int ua = amap_used(c, a, &ma, k), ub = amap_used(c, b, &mb, k);
		if (ua < 0 || ub < 0 || dt_vread(c, a, v, xa, sizeof xa) || dt_vread(c, b, v, xb, sizeof xb))
			continue;
		got++;
		ta.n[ua]++;
		ta.data[ua] += !rk_buf_is_zero(xa, sizeof xa);
		tbb.n[ub]++;
		tbb.data[ub] += !rk_buf_is_zero(xb, sizeof xb);
	}
	*fit_a = tb_fit(&ta);
	*fit_b = tb_fit(&tbb);
	if ((ta.n[1] < TB_MIN) != (tbb.n[1] < TB_MIN))
		*fit_a = *fit_b = -2;   /* the two fits are not on one scale */
#ifdef DT_DEBUG
	fprintf(stderr, "TALLY kind %d units %llu got %u a free %u/%u used %u/%u b free %u/%u used %u/%u\n", ma.kind,
	        (unsigned long long)ma.nunits, got, ta.data[0], ta.n[0], ta.data[1], ta.n[1], tbb.data[0], tbb.n[0], tbb.data[1], tbb.n[1]);
#endif
	return *fit_a > -2 && *fit_b > -2;
}

/* See detect_int.h. */
int dt_alloc_any_used(struct dt_ctx *c, const struct dt_hyp *h, const uint64_t *v, uint32_t n)
{
	struct amap m;
	if (!n)
		return 0;
	amap_open(c, h, &m);
	for (uint32_t k = 0; k < n && m.kind != AM_NONE && m.unit; k++)
		if (v[k] >= m.first && (v[k] - m.first) / m.unit < m.nunits && v[k] < h->g.volume_size &&
		    amap_used(c, h, &m, (v[k] - m.first) / m.unit) == 1)
			return 1;
	return 0;
}
