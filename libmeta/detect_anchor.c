/* detect_anchor.c: metadata that records its own position.  Each hit ties
 * an image offset to a volume offset: ext2/3/4 superblocks and their backups
 * (s_block_group_nr), GPT headers (my_lba), NTFS boot sectors and MFT
 * records (record number), FAT and exFAT boot sectors and their backups,
 * XFS AGF/AGI headers (seqno), btrfs superblocks (bytenr); detect_self.c
 * and detect_btrfs.c add blocks found anywhere.  Every field is
 * checked before it is believed; spec/detect.md lists them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "detect_int.h"
#include "rk_part.h"
#include "rk_le.h"

#define DT_MAX_ANCHORS 60000u

/* See detect_int.h. */
int dt_anchor_push(struct dt_ctx *c, const struct dt_anchor *a)
{
	if (c->nanc >= DT_MAX_ANCHORS)
		return 0;
	if (c->nanc == c->canc) {
		uint32_t nc = c->canc ? c->canc * 2 : 256;
		struct dt_anchor *na = realloc(c->anc, nc * sizeof *na);
		if (!na)
			return 0;
		c->anc = na;
		c->canc = nc;
	}
	c->anc[c->nanc++] = *a;
	return 1;
}

static void add(struct dt_ctx *c, uint8_t kind, uint32_t i, uint64_t ioff, uint64_t raw)
{
	dt_anchor_push(c, &(struct dt_anchor){ kind, i, ioff, raw, DT_NONE, DT_NONE, 0 });
}

/* An ext superblock, tagged with its file system's id (the first word of
 * s_uuid) so that one of another file system can be told apart. */
static void add_ext_sb(struct dt_ctx *c, uint32_t i, uint64_t ioff, const uint8_t *p)
{
	dt_anchor_push(c, &(struct dt_anchor){ DT_EXT_SB, i, ioff, rk_get_le16(p + 0x5A), DT_NONE, DT_NONE,
	                                        rk_get_le32(p + 0x68) });
}

/* See detect_int.h. */
int dt_in_own_partition(const struct dt_fs *fs, uint64_t woff)
{
	if (!fs->mbr_seen || fs->mbr_img != fs->at_img || fs->at_off < fs->mbr_at + woff)
		return 0;
	for (int k = 0; k < 4; k++)
		if (fs->mbr_start[k] && fs->mbr_start[k] == fs->at_off - woff - fs->mbr_at)
			return 1;
	return 0;
}

/* See detect_int.h. */
int dt_fs_ext(struct dt_fs *fs, const uint8_t *p)
{
	if (rk_get_le16(p + 0x38) != 0xEF53)
		return 0;
	uint32_t lbs = rk_get_le32(p + 0x18), bpg = rk_get_le32(p + 0x20), ipg = rk_get_le32(p + 0x28);
	uint32_t fdb = rk_get_le32(p + 0x14), rev = rk_get_le32(p + 0x4C);
	if (lbs > 6 || !bpg || bpg > (8192u << lbs) || !ipg || rev > 1 || rk_get_le16(p + 0x3A) > 7)
		return 0;
	if (fdb != (lbs == 0 ? 1u : 0u) || !rk_get_le32(p + 0x04))
		return 0;
	/* the superblock to learn from ranks by: group 0, spanning more than
	 * its image holds from its start (an array's), and not starting a
	 * partition of a table on its own image (a whole disk's); a higher
	 * rank replaces the one learnt (seed 2447: a sample disk's ext4,
	 * truncated, scanned after a RAID-4's, had replaced it) */
	uint64_t blocks = rk_get_le32(p + 0x04);
	if (rk_get_le32(p + 0x60) & 0x80)
		blocks |= (uint64_t)rk_get_le32(p + 0x150) << 32;
	int g0 = rk_get_le16(p + 0x5A) == 0;
	int spans = g0 && fs->at_size && fs->at_off >= 1024 && blocks < (1ull << 48) &&
	            (blocks << (10 + lbs)) > fs->at_size - (fs->at_off - 1024);
	int rank = g0 ? 1 + spans + !dt_in_own_partition(fs, 1024) : 0;
	if (!fs->ext || rank > fs->ext_rank) {
		fs->ext_rank = rank;
		fs->ext = 1;
		fs->ext_tag = rk_get_le32(p + 0x68);
		fs->ext_bs = 1024u << lbs;
		fs->ext_bpg = bpg;
		fs->ext_fdb = fdb;
		fs->ext_feat_incompat = rk_get_le32(p + 0x60);
		fs->ext_feat_ro = rk_get_le32(p + 0x64);
		fs->ext_blocks = rk_get_le32(p + 0x04);
		if (fs->ext_feat_incompat & 0x80)
			fs->ext_blocks |= (uint64_t)rk_get_le32(p + 0x150) << 32;
		fs->ext_desc = (fs->ext_feat_incompat & 0x80) ? rk_get_le16(p + 0xFE) : 32;
		if (fs->ext_desc < 32 || fs->ext_desc > 1024)
			fs->ext_desc = 32;
		dt_part_learnt(fs, DT_FSK_EXT, p);
	}
	return 1;
}

/* A GPT header at P (512 bytes) with a good CRC. */
static int gpt_hdr(struct dt_fs *fs, const uint8_t *p)
{
	if (!rk_gpt_header_ok(p))
		return 0;
	if (rk_get_le64(p + 24) == 1) {
		fs->gpt = 1;
		fs->gpt_alt = rk_get_le64(p + 32);
	}
	return 1;
}

static int pow2(uint32_t v) { return v && !(v & (v - 1)); }

/* See detect_int.h. */
int dt_fs_ntfs(struct dt_fs *fs, const uint8_t *p)
{
	if (memcmp(p + 3, "NTFS    ", 8) || p[510] != 0x55 || p[511] != 0xAA)
		return 0;
	uint32_t bps = rk_get_le16(p + 0x0B), spc = p[0x0D];
	if (!pow2(bps) || bps < 256 || bps > 4096)
		return 0;
	uint64_t clus = spc <= 0x80 ? (uint64_t)spc * bps : (spc >= 0xF4 ? (uint64_t)1 << (256 - spc) : 0);
	int8_t cpr = (int8_t)p[0x40];
	uint32_t rec = cpr < 0 ? (cpr >= -20 ? 1u << -cpr : 0) : (uint32_t)(cpr * clus);
	if (!clus || !pow2(spc <= 0x80 ? spc : 1) || rec < 256 || rec > 65536)
		return 0;
	fs->ntfs = 1;
	fs->ntfs_bps = bps;
	fs->ntfs_clus = clus;
	fs->ntfs_rec = rec;
	fs->ntfs_sectors = rk_get_le64(p + 0x28);
	fs->ntfs_mft_lcn = rk_get_le64(p + 0x30);
	fs->ntfs_mirr_lcn = rk_get_le64(p + 0x38);
	fs->ntfs_hidden = rk_get_le32(p + 0x1C);
	dt_part_learnt(fs, DT_FSK_NTFS, p);
	return 1;
}

/* A FAT12/16/32 boot sector at P: *backup = FAT32's backup sector (0 none). */
static int fat_boot(struct dt_fs *fs, const uint8_t *p, uint64_t *backup)
{
	if (!((p[0] == 0xEB && p[2] == 0x90) || p[0] == 0xE9) || p[510] != 0x55 || p[511] != 0xAA)
		return 0;
	uint32_t bps = rk_get_le16(p + 0x0B), spc = p[0x0D], res = rk_get_le16(p + 0x0E), nf = p[0x10];
	if (!pow2(bps) || bps < 512 || bps > 4096 || !pow2(spc) || !res || nf < 1 || nf > 2 || p[0x15] < 0xF0)
		return 0;
	if (!memcmp(p + 3, "NTFS", 4) || !memcmp(p + 3, "EXFAT", 5))
		return 0;
	uint32_t fsz = rk_get_le16(p + 0x16);
	*backup = 0;
	if (!fsz) {
		fsz = rk_get_le32(p + 0x24);
		*backup = rk_get_le16(p + 0x32);
		if (*backup >= res)
			*backup = 0;
	}
	if (!fsz)
		return 0;
	fs->fat_total = rk_get_le16(p + 0x13) ? rk_get_le16(p + 0x13) : rk_get_le32(p + 0x20);
	fs->fat_hidden = rk_get_le32(p + 0x1C);
	dt_part_learnt(fs, DT_FSK_FAT, p);
	fs->fat = 1;
	fs->fat_bps = bps;
	fs->fat_res = res;
	fs->fat_nfats = nf;
	fs->fat_sz = fsz;
	return 1;
}

/* An XFS superblock at P (primary or secondary: they repeat the
 * geometry): FS learns it, the first plausible one. */
static void xfs_super(struct dt_fs *fs, const uint8_t *p)
{
	uint32_t bs = rk_get_be32(p + 4), agb = rk_get_be32(p + 84), agc = rk_get_be32(p + 88);
	uint16_t ss = rk_get_be16(p + 102);
	if (pow2(bs) && bs >= 512 && bs <= 65536 && agb && agc && pow2(ss) && ss >= 512 && !fs->xfs) {
		fs->xfs = 1;
		fs->xfs_bs = bs;
		fs->xfs_agblocks = agb;
		fs->xfs_agcount = agc;
		fs->xfs_sect = ss;
		fs->xfs_dblocks = rk_get_be64(p + 8);
		dt_part_learnt(fs, DT_FSK_XFS, p);
	}
}

/* See detect_int.h. */
int dt_learn_boot(struct dt_ctx *c, const uint8_t *p)
{
	uint64_t bk;
	if (!memcmp(p, "XFSB", 4)) {
		if (!c->fs.xfs)
			xfs_super(&c->fs, p);
		dt_self_xfs(&c->self, p);
		return c->fs.xfs;
	}
	if (!c->self.fat && fat_boot(&c->fs, p, &bk)) {
		dt_fat_learn(&c->self, p);
		return c->self.fat;
	}
	return !c->fs.ntfs && dt_fs_ntfs(&c->fs, p);
}

/* See detect_int.h. */
uint64_t dt_mbr_first(const uint8_t *p)
{
	if (p[510] != 0x55 || p[511] != 0xAA || p[0] == 0xEB || p[0] == 0xE9)
		return 0;
	uint64_t first = 0;
	for (int k = 0; k < 4; k++) {
		const uint8_t *e = p + 446 + 16 * k;
		if (e[0] != 0 && e[0] != 0x80)
			return 0;
		uint32_t start = rk_get_le32(e + 8), n = rk_get_le32(e + 12);
		if (!e[4])
			continue;
		if (e[4] == 0xEE || !start || !n)
			return 0;   /* GPT's protective MBR, or nonsense */
		if (!first || (uint64_t)start * 512 < first)
			first = (uint64_t)start * 512;
	}
	return first;
}

/* Scans BUF (see detect_int.h). */
void dt_scan_buf(struct dt_ctx *c, uint32_t i, uint64_t base, const uint8_t *buf, size_t len)
{
	struct dt_fs *fs = &c->fs;
	for (size_t o = 0; o + 512 <= len; o += 512) {
		const uint8_t *p = buf + o;
		uint64_t at = base + o, bk;
		fs->at_img = i;
		fs->at_off = at;
		fs->at_size = c->img && i < c->nimg ? c->img[i].size : 0;
		if ((at == 0 || at == 4096) && c->img && i < c->nimg && rk_get_le32(p) == 0xA92B4EFCu && rk_get_le32(p + 4) == 1)
			c->img[i].md_floor = at + 512;   /* md 1.1 or 1.2 left its superblock: its data lies past it */
		dt_self_scan(c, i, at, p, len - o);
		dt_btrfs_scan(c, i, at, p, len - o);
		dt_ext_scan(c, i, at, p, len - o);
		dt_exfat_scan(c, p, len - o);
		if (o + 1024 <= len && dt_fs_ext(fs, p))
			add_ext_sb(c, i, at, p);
		else if (gpt_hdr(fs, p)) {
			dt_part_gpt(fs, p, len - o);
			add(c, DT_GPT, i, at, rk_get_le64(p + 24));
		}
		else if (dt_fs_ntfs(fs, p))
			add(c, DT_NTFS_BOOT, i, at, 0);
		else if (!memcmp(p, "FILE", 4) && rk_get_le16(p + 4) == 0x30 &&
		         ((rk_get_le16(p + 0x16) & 1) || rk_get_le32(p + 0x2C)))
			/* a record not in use that says 0 is a reserved one never
			 * numbered (seed 1516: records 29-36 all "record 0") */
			add(c, DT_NTFS_MFT, i, at, rk_get_le32(p + 0x2C));
		else if (!memcmp(p + 3, "EXFAT   ", 8) && p[510] == 0x55 && p[511] == 0xAA && p[0x6C] >= 9 && p[0x6C] <= 12) {
			fs->exfat = 1;
			fs->exfat_bps = 1u << p[0x6C];
			fs->exfat_len = rk_get_le64(p + 0x48);
			fs->exfat_poff = rk_get_le64(p + 0x40);
			dt_part_learnt(fs, DT_FSK_EXFAT, p);
			add(c, DT_EXFAT_BOOT, i, at, 0);
		} else if (fat_boot(fs, p, &bk))
			add(c, DT_FAT_BOOT, i, at, bk);
		else if (!memcmp(p, "XFSB", 4))
			xfs_super(fs, p);
		else if ((!memcmp(p, "XAGF", 4) || !memcmp(p, "XAGI", 4)) && rk_get_be32(p + 4) == 1)
			add(c, p[3] == 'F' ? DT_XFS_AGF : DT_XFS_AGI, i, at, rk_get_be32(p + 8));
		else if (dt_mbr_first(p)) {
			fs->mbr_seen = 1;
			fs->mbr_img = i;
			fs->mbr_at = at;
			for (int k = 0; k < 4; k++)
				fs->mbr_start[k] = p[446 + 16 * k + 4] ? (uint64_t)rk_get_le32(p + 446 + 16 * k + 8) * 512 : 0;
			dt_part_mbr(fs, p);
			add(c, DT_MBR, i, at, 0);
		} else if (o + 0x78 <= len && !memcmp(p + 0x40, "_BHRfS_M", 8)) {
			if (!fs->btrfs) {
				fs->btrfs_total = rk_get_le64(p + 0x70);
				dt_part_learnt(fs, DT_FSK_BTRFS, p);
			}
			fs->btrfs = 1;
			add(c, DT_BTRFS_SB, i, at, rk_get_le64(p + 0x30));
		}
	}
}

static int anc_cmp(const void *a, const void *b)
{
	const struct dt_anchor *x = a, *y = b;
	if (x->img != y->img)
		return x->img < y->img ? -1 : 1;
	if (x->ioff != y->ioff)
		return x->ioff < y->ioff ? -1 : 1;
	if (x->kind != y->kind)
		return (int)x->kind - (int)y->kind;
	return x->raw < y->raw ? -1 : x->raw > y->raw;   /* one place read twice: the same raw */
}

/* The volume offsets of one hit (DT_NONE when the parameters it needs are
 * unknown or the product overflows). */
static void resolve_one(const struct dt_fs *fs, struct dt_anchor *a)
{
	a->voff = a->voff2 = DT_NONE;
	switch (a->kind) {
	case DT_EXT_SB:
		if (fs->ext)
			a->voff = a->raw == 0 ? 1024 : (a->raw * fs->ext_bpg + fs->ext_fdb) * fs->ext_bs;
		break;
	case DT_GPT:
		if (a->raw < (1ull << 50))
			a->voff = a->raw * 512;
		break;
	case DT_NTFS_BOOT:
		a->voff = 0;
		if (fs->ntfs && fs->ntfs_sectors < (1ull << 48))
			a->voff2 = fs->ntfs_sectors * fs->ntfs_bps;
		break;
	case DT_NTFS_MFT:
		if (fs->ntfs && fs->ntfs_mft_lcn < (1ull << 40)) {
			a->voff = dt_ntfs_record_at(fs, a->raw);
			if (a->raw < 4 && fs->ntfs_mirr_lcn < (1ull << 40))
				a->voff2 = fs->ntfs_mirr_lcn * fs->ntfs_clus + a->raw * fs->ntfs_rec;
		}
		break;
	case DT_FAT_BOOT:
		a->voff = 0;
		if (a->raw && fs->fat)
			a->voff2 = a->raw * fs->fat_bps;
		break;
	case DT_EXFAT_BOOT:
		a->voff = 0;
		a->voff2 = 12ull * (fs->exfat_bps ? fs->exfat_bps : 512);
		break;
	case DT_XFS_AGF: case DT_XFS_AGI:
		if (fs->xfs && a->raw < fs->xfs_agcount)
			a->voff = a->raw * fs->xfs_agblocks * fs->xfs_bs + (a->kind == DT_XFS_AGF ? 1u : 2u) * fs->xfs_sect;
		break;
	case DT_MBR:
		a->voff = 0;
		break;
	case DT_BTRFS_SB:
		if (a->raw == (64ull << 10) || a->raw == (64ull << 20) || a->raw == (256ull << 30))
			a->voff = a->raw;
		break;
	}
}

/* The images holding superblocks of the ext file system tagged TAG. */
static uint32_t ext_images(const struct dt_ctx *c, uint32_t tag)
{
	uint64_t seen[4] = { 0 };
	uint32_t n = 0;
	for (uint32_t k = 0; k < c->nanc; k++) {
		const struct dt_anchor *a = &c->anc[k];
		uint32_t i = a->img % 256;
		if (a->kind == DT_EXT_SB && a->tag == tag && !(seen[i / 64] >> (i % 64) & 1)) {
			seen[i / 64] |= 1ull << (i % 64);
			n++;
		}
	}
	return n;
}

/* Of two ext file systems, the one whose superblocks lie on more images,
 * whatever dt_fs_ext ranked first: an array's spread over its members (or
 * its mirrors), a plain disk's or a slice's stay on it (a whole ext4 image
 * named before a RAID-5's members had its superblock learnt, and the
 * array's anchors read through it disagreed; seed 2416: the journal's
 * copy of a sample slice's first superblock, which says more than the
 * slice holds, ranked above a RAID-1's). */
static void ext_prefer_spread(struct dt_ctx *c)
{
	struct dt_fs *fs = &c->fs;
	if (!fs->ext)
		return;
	uint32_t most = ext_images(c, fs->ext_tag);
	const struct dt_anchor *pick = NULL;
	for (uint32_t k = 0; k < c->nanc; k++) {
		const struct dt_anchor *a = &c->anc[k];
		uint32_t n;
		if (a->kind == DT_EXT_SB && a->raw == 0 && a->tag != fs->ext_tag && a->img < c->nimg &&
		    (n = ext_images(c, a->tag)) > most) {
			most = n;
			pick = a;
		}
	}
	uint8_t p[1024];
	if (!pick || dt_read(c, pick->img, pick->ioff, p, sizeof p))
		return;
	struct dt_fs was = *fs;
	fs->at_img = pick->img;
	fs->at_off = pick->ioff;
	fs->at_size = c->img[pick->img].size;
	fs->ext = 0;
	if (!dt_fs_ext(fs, p))
		*fs = was;
}

/* Resolves and de-duplicates (see detect_int.h). */
void dt_resolve(struct dt_ctx *c)
{
	if (!c->nanc)
		return;
	ext_prefer_spread(c);
	dt_ext_learn(c);
	dt_ntfs_learn_mft(c);
	qsort(c->anc, c->nanc, sizeof *c->anc, anc_cmp);
	dt_part_assign(c);
	uint32_t w = 0;
	for (uint32_t k = 0; k < c->nanc; k++) {
		if (w && !anc_cmp(&c->anc[w - 1], &c->anc[k]))
			continue;
		c->anc[w] = c->anc[k];
		resolve_one(&c->fs, &c->anc[w]);
		if (c->anc[w].kind == DT_EXT_INO)
			dt_ext_resolve(c, &c->anc[w]);
		else if (c->anc[w].kind == DT_EXT_DIR)
			;   /* below, once every inode is */
		else if (dt_lastblock_kind(c->anc[w].kind))
			dt_resolve_lastblock(c, &c->anc[w]);
		else if (c->anc[w].kind == DT_BTRFS_NODE)
			dt_btrfs_resolve(c, &c->anc[w]);
		else if (c->anc[w].kind >= DT_XFS_INO)
			dt_self_resolve(c, &c->anc[w]);
		dt_part_rebase(&c->fs, &c->anc[w]);
		w++;
	}
	c->nanc = w;
	for (uint32_t k = 0; k < c->nanc; k++)
		if (c->anc[k].kind == DT_EXT_DIR) {
			dt_ext_resolve_dir(c, &c->anc[k]);
			dt_part_rebase(&c->fs, &c->anc[k]);
		}
	dt_ext_settle(c);
	dt_ext_journal(c);
#ifdef DT_DEBUG
	for (uint32_t k = 0; getenv("DT_ANCS") && k < c->nanc; k++)
		fprintf(stderr, "ANC img %u kind %d ioff %llu voff %lld raw %llu\n", c->anc[k].img, (int)c->anc[k].kind,
		        (unsigned long long)c->anc[k].ioff, (long long)(c->anc[k].voff == DT_NONE ? -1 : (long long)c->anc[k].voff),
		        (unsigned long long)c->anc[k].raw);
#endif
}

/* Words for an anchor, e.g. "ext superblock of group 3". */
const char *dt_kind_name(const struct dt_anchor *a, char *buf, size_t len)
{
	if (dt_self_name(a, buf, len) || dt_btrfs_name(a, buf, len) || dt_ext_name(a, buf, len))
		return buf;
	switch (a->kind) {
	case DT_EXT_SB: snprintf(buf, len, "ext superblock group %llu", (unsigned long long)a->raw); break;
	case DT_GPT: snprintf(buf, len, "GPT header at LBA %llu", (unsigned long long)a->raw); break;
	case DT_NTFS_BOOT: snprintf(buf, len, "NTFS boot sector"); break;
	case DT_NTFS_MFT: snprintf(buf, len, "NTFS MFT record %llu", (unsigned long long)a->raw); break;
	case DT_FAT_BOOT: snprintf(buf, len, "FAT boot sector"); break;
	case DT_EXFAT_BOOT: snprintf(buf, len, "exFAT boot sector"); break;
	case DT_XFS_AGF: snprintf(buf, len, "XFS AGF of AG %llu", (unsigned long long)a->raw); break;
	case DT_XFS_AGI: snprintf(buf, len, "XFS AGI of AG %llu", (unsigned long long)a->raw); break;
	case DT_BTRFS_SB: snprintf(buf, len, "btrfs superblock at %llu", (unsigned long long)a->raw); break;
	case DT_MBR: snprintf(buf, len, "MBR partition table"); break;
	case DT_EXFAT_TAIL: snprintf(buf, len, "exFAT last cluster %llu", (unsigned long long)a->raw); break;
	case DT_NTFS_TAIL: snprintf(buf, len, "NTFS last cluster of record %u", a->tag); break;
	case DT_XFS_TAIL: snprintf(buf, len, "XFS last block of inode %u", a->tag); break;
	case DT_FAT_TAIL: snprintf(buf, len, "FAT last cluster of a file at %u", a->tag); break;
	case DT_BTRFS_TAIL: snprintf(buf, len, "btrfs last block at logical %llu", (unsigned long long)a->raw); break;
	default: snprintf(buf, len, "anchor"); break;
	}
	return buf;
}
