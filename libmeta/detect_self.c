/* detect_self.c: blocks that record their own place in the volume, found
 * all over the members (not only at the few places superblocks sit), so
 * that every member holding file-system metadata gets anchors that fix its
 * role, its data start and the chunk (spec/detect.md):
 *  - XFS v5: every inode carries its number (di_ino, which encodes AG,
 *    block and slot) and the file system's UUID; btree, directory and
 *    symlink blocks carry their own disk address (blkno) and the UUID.
 *    Only hits whose UUID is the superblock's count.
 *  - FAT: a sub-directory's first cluster starts with "." naming that very
 *    cluster, then ".."; a FAT sector of files written in one go holds
 *    chains k -> k + 1, so its entries tell which entries it holds.
 * Each kind is capped per image (the search's cost grows with anchors). */
#include <stdio.h>
#include <string.h>
#include <stdlib.h>

#include "detect_int.h"
#include "rk_le.h"

#define SELF_CAP 384u           /* anchors per image and kind */
#define SELF_MAX 40000u         /* anchors in all (detect_anchor.c's own cap is 60000) */

static int pow2(uint64_t v) { return v && !(v & (v - 1)); }

/* Adds a hit of KIND (index K into the per-image caps). */
static void add(struct dt_ctx *c, uint8_t kind, uint32_t i, uint64_t ioff, uint64_t raw, uint32_t tag)
{
	uint32_t k = kind - DT_XFS_INO;
	if (c->nanc >= SELF_MAX || i >= DT_MAX_ROLES + 8 || k >= 4 || c->self.nper[i][k] >= SELF_CAP)
		return;
	if (dt_anchor_push(c, &(struct dt_anchor){ kind, i, ioff, raw, DT_NONE, DT_NONE, tag }))
		c->self.nper[i][k]++;
}

/* See detect_int.h. */
void dt_self_xfs(struct dt_self *s, const uint8_t *p)
{
	uint32_t bs = rk_get_be32(p + 4), agb = rk_get_be32(p + 84), agc = rk_get_be32(p + 88);
	uint32_t isz = rk_get_be16(p + 104), inopb = rk_get_be16(p + 106);
	uint64_t dblocks = rk_get_be64(p + 8);
	if (s->xfs || (rk_get_be16(p + 100) & 0xF) != 5 || !pow2(bs) || bs < 512 || bs > 65536 || !agb || !agc ||
	    !pow2(isz) || isz < 256 || isz > bs || inopb != bs / isz || p[123] >= 16 || p[124] >= 32 ||
	    (1u << p[123]) != inopb || ((uint64_t)1 << p[124]) < agb || dblocks > (1ull << 40))
		return;
	s->xfs = 1;
	s->xfs_bs = bs;
	s->xfs_agblocks = agb;
	s->xfs_agcount = agc;
	s->xfs_isize = isz;
	s->xfs_inopblog = p[123];
	s->xfs_agblklog = p[124];
	s->xfs_bytes = dblocks * bs;
	/* metadata carries sb_meta_uuid when the META_UUID feature is set */
	s->xfs_tag = rk_get_le32((rk_get_be32(p + 216) & 4) ? p + 248 : p + 32);
}

/* XFS v5 hits at P: an inode (the first of each block of inodes), or a
 * metadata block holding blkno and the UUID at the offsets of its kind. */
static void xfs_hit(struct dt_ctx *c, uint32_t i, uint64_t at, const uint8_t *p, size_t left)
{
	static const struct { char m[5]; uint8_t blk, uuid; } kinds[] = {
		{ "AB3B", 16, 32 }, { "AB3C", 16, 32 }, { "IAB3", 16, 32 }, { "FIB3", 16, 32 },
		{ "RMB3", 16, 32 }, { "R3FC", 16, 32 }, { "BMA3", 24, 40 },
		{ "XDB3", 8, 24 }, { "XDD3", 8, 24 }, { "XDF3", 8, 24 }, { "XSLM", 40, 16 },
	};
	if (p[0] == 'I' && p[1] == 'N' && p[4] == 3 && left >= 176) {
		/* every inode: their places below 4 KiB tell chunks of 512 B to 2 KiB apart */
		add(c, DT_XFS_INO, i, at, rk_get_be64(p + 152), rk_get_le32(p + 160));
		return;
	}
	for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
		if (!memcmp(p, kinds[k].m, 4) && left >= 64) {
			add(c, DT_XFS_BLK, i, at, rk_get_be64(p + kinds[k].blk), rk_get_le32(p + kinds[k].uuid));
			return;
		}
}

/* See detect_int.h. */
void dt_fat_learn(struct dt_self *s, const uint8_t *p)
{
	if (s->fat || !((p[0] == 0xEB && p[2] == 0x90) || p[0] == 0xE9) || p[510] != 0x55 || p[511] != 0xAA ||
	    !memcmp(p + 3, "NTFS", 4) || !memcmp(p + 3, "EXFAT", 5))
		return;
	uint32_t bps = rk_get_le16(p + 0x0B), spc = p[0x0D], res = rk_get_le16(p + 0x0E), nf = p[0x10];
	uint32_t roots = rk_get_le16(p + 0x11), fsz = rk_get_le16(p + 0x16), f32 = 0;
	uint64_t tot = rk_get_le16(p + 0x13) ? rk_get_le16(p + 0x13) : rk_get_le32(p + 0x20);
	if (!fsz) {
		fsz = rk_get_le32(p + 0x24);
		f32 = 1;
	}
	if (!pow2(bps) || bps < 512 || bps > 4096 || !pow2(spc) || !res || nf < 1 || nf > 2 || !fsz || p[0x15] < 0xF0)
		return;
	uint64_t data = (uint64_t)res + (uint64_t)nf * fsz + ((uint64_t)roots * 32 + bps - 1) / bps;
	if (tot <= data)
		return;
	uint64_t nclus = (tot - data) / spc;
	if (nclus < 4085)
		return;   /* FAT12: entries of 12 bits, not read here */
	s->fat = 1;
	s->fat_bps = bps;
	s->fat_clus = bps * spc;
	s->fat_res = res;
	s->fat_nfats = nf;
	s->fat_sz = fsz;
	s->fat_32 = f32 || nclus >= 65525;
	s->fat_data = data * bps;
	s->fat_nclus = nclus;
}

/* The first entry a FAT sector at P holds, from chains k -> k + 1 (FAT16:
 * 256 entries, FAT32: 128): *BASE, 1 found.  At least a quarter of the
 * entries must agree and the rest be end marks, free or other chains'. */
static int fat_base(const uint8_t *p, int f32, uint64_t *base)
{
	uint32_t n = f32 ? 128 : 256, agree = 0, first = 1;
	uint64_t b = 0;
	for (uint32_t j = 0; j < n; j++) {
		uint32_t e = f32 ? rk_get_le32(p + 4 * j) & 0x0FFFFFFF : rk_get_le16(p + 2 * j);
		if (e < 2 || e >= (f32 ? 0x0FFFFFF0u : 0xFFF0u) || e <= j)
			continue;
		uint64_t x = e - j - 1;
		if (x % n)
			continue;   /* a sector holds entries n * k .. n * k + n - 1 */
		if (first) {
			b = x;
			first = 0;
		}
		agree += x == b;
	}
	if (first || agree < n / 4)
		return 0;
	if (b == 0 && (f32 ? (rk_get_le32(p) & 0x0FFFFFF8) != 0x0FFFFFF8 : rk_get_le16(p) < 0xFFF0))
		return 0;   /* the first sector starts with the media entry */
	*base = b;
	return 1;
}

/* FAT hits at P: a directory's "." and ".." entries, or a FAT sector. */
static void fat_hit(struct dt_ctx *c, uint32_t i, uint64_t at, const uint8_t *p)
{
	if (!memcmp(p, ".          ", 11) && (p[11] & 0x10) && !memcmp(p + 32, "..         ", 11) && (p[43] & 0x10)) {
		uint64_t cl = rk_get_le16(p + 26) | (uint64_t)rk_get_le16(p + 20) << 16;
		if (cl >= 2)
			add(c, DT_FAT_DIR, i, at, cl, 0);
		return;
	}
	uint64_t b;
	if (fat_base(p, 0, &b))
		add(c, DT_FAT_TAB, i, at, b, 0);
	else if (fat_base(p, 1, &b))
		add(c, DT_FAT_TAB, i, at, b | 1ull << 63, 0);
}

/* See detect_int.h. */
void dt_self_scan(struct dt_ctx *c, uint32_t i, uint64_t at, const uint8_t *p, size_t left)
{
	if (!memcmp(p, "XFSB", 4))
		dt_self_xfs(&c->self, p);
	else if (p[510] == 0x55 && p[511] == 0xAA)
		dt_fat_learn(&c->self, p);
	xfs_hit(c, i, at, p, left);
	fat_hit(c, i, at, p);
}

/* See detect_int.h. */
void dt_self_resolve(const struct dt_ctx *c, struct dt_anchor *a)
{
	const struct dt_self *s = &c->self;
	a->voff = a->voff2 = DT_NONE;
	if (a->kind == DT_XFS_INO && s->xfs && a->tag == s->xfs_tag) {
		uint64_t agno = a->raw >> (s->xfs_agblklog + s->xfs_inopblog);
		uint64_t agbno = (a->raw >> s->xfs_inopblog) & (((uint64_t)1 << s->xfs_agblklog) - 1);
		uint64_t slot = a->raw & ((1u << s->xfs_inopblog) - 1);
		if (agno < s->xfs_agcount && agbno < s->xfs_agblocks)
			a->voff = (agno * s->xfs_agblocks + agbno) * s->xfs_bs + slot * s->xfs_isize;
	} else if (a->kind == DT_XFS_BLK && s->xfs && a->tag == s->xfs_tag) {
		if (a->raw < s->xfs_bytes / 512)
			a->voff = a->raw * 512;
	} else if (a->kind == DT_FAT_DIR && s->fat) {
		if (a->raw < s->fat_nclus + 2)
			a->voff = s->fat_data + (a->raw - 2) * s->fat_clus;
	} else if (a->kind == DT_FAT_TAB && s->fat && (uint32_t)(a->raw >> 63) == s->fat_32) {
		uint64_t b = a->raw & ~(1ull << 63);
		if (b < s->fat_nclus + 2) {
			a->voff = (uint64_t)s->fat_res * s->fat_bps + b * (s->fat_32 ? 4 : 2);
			if (s->fat_nfats == 2)
				a->voff2 = a->voff + (uint64_t)s->fat_sz * s->fat_bps;
		}
	}
}

/* See detect_int.h. */
const char *dt_self_name(const struct dt_anchor *a, char *buf, size_t len)
{
	switch (a->kind) {
	case DT_XFS_INO: snprintf(buf, len, "XFS inode %llu", (unsigned long long)a->raw); break;
	case DT_XFS_BLK: snprintf(buf, len, "XFS block at sector %llu", (unsigned long long)a->raw); break;
	case DT_FAT_DIR: snprintf(buf, len, "FAT directory at cluster %llu", (unsigned long long)a->raw); break;
	case DT_FAT_TAB: snprintf(buf, len, "FAT sector of entry %llu", (unsigned long long)(a->raw & ~(1ull << 63))); break;
	default: return NULL;
	}
	return buf;
}
