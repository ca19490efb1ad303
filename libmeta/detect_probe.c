/* detect_probe.c: predictions a hypothesis makes about the file system it
 * puts together, checked by reading the volume through it: ext superblock
 * backups where their group says, inode tables where the group descriptors
 * say (plausible inodes), directories whose first entry "." names their own
 * inode, NTFS MFT records whose number matches their place, FAT's second
 * FAT and backup boot sector, exFAT's backup boot region and directories
 * (detect_exfat.c), XFS AGF headers, inode chunks and file tails
 * (detect_xfs.c), the btrfs superblock mirror and tree blocks
 * (detect_btrfs.c), the GPT backup header; ext's block bitmaps against
 * the blocks, and the last blocks of ext4 files (dt_tail_check).  Each prediction that
 * holds is a probe_ok, each that fails a probe_bad; places a hypothesis
 * cannot read (a role missing beyond repair) count as neither. */
#include <stdlib.h>
#include <string.h>

#include "detect_int.h"
#include "rk_le.h"
#include "rk_util.h"

#define PROBE_MAX 48u    /* predictions checked per kind */
#define TAIL_MAX 256u    /* files whose last block is checked, of the first 16 inode-table blocks */
#define SPREAD_BLOCKS 8u /* inode-table blocks read past those for tails (tails_spread), per group */
#define SPREAD_TAILS 64u /* and the tails checked there, per group */

struct pr { struct dt_ctx *c; struct dt_hyp *h; uint64_t base; uint32_t limit; };
static void dt_probe_at(struct pr *p);

static int vr(struct pr *p, uint64_t v, uint8_t *buf, size_t len)
{
	if (v > UINT64_MAX - p->base)
		return 1;
	if (p->limit && p->h->probe_ok + p->h->probe_bad >= p->limit)
		return 1;   /* a quick look only */
	return dt_vread(p->c, p->h, p->base + v, buf, len);
}

static void tally(struct pr *p, int ok) { if (ok) p->h->probe_ok++; else p->h->probe_bad++; }

/* What checks an ext4 inode's checksum (metadata_csum): the seed, 0 when
 * the file system keeps none. */
struct icsum { int on; uint32_t seed; };

/* 1 when inode IN (SZ bytes) of number INO carries the checksum of that
 * number (crc32c from the seed over the number, i_generation and the inode
 * with its checksum fields zeroed: the low half, and the high half where
 * i_extra_isize covers it). */
static int inode_csum_ok(const struct icsum *k, const uint8_t *in, size_t sz, uint32_t ino)
{
	uint8_t b[1024], le[4];
	if (sz > sizeof b)
		return 0;
	memcpy(b, in, sz);
	int hi = sz > 128 && rk_get_le16(in + 0x80) >= 4;
	uint32_t stored = rk_get_le16(in + 0x7C) | (hi ? (uint32_t)rk_get_le16(in + 0x82) << 16 : 0);
	memset(b + 0x7C, 0, 2);
	if (hi)
		memset(b + 0x82, 0, 2);
	rk_put_le32(le, ino);
	uint32_t c = dt_crc32c_raw(dt_crc32c_raw(k->seed, le, 4), in + 0x64, 4);
	c = dt_crc32c_raw(c, b, sz);
	return (hi ? c : c & 0xFFFF) == stored;
}

/* An inode (SZ bytes) that a file system in use could hold: 1 plausible,
 * 0 all zero (or, with checksums, an inode of another number: the reading
 * put another place's inodes here), -1 not an inode, -2 an inode of mode
 * 0 (freed, or reserved: inode 1 has times) whose checksum fails for this
 * number -- another place's, or damaged. */
static int inode_ok(const uint8_t *in, size_t sz, const struct icsum *k, uint32_t ino)
{
	if (rk_buf_is_zero(in, sz))
		return 0;
	uint16_t mode = rk_get_le16(in), t = mode >> 12;
	if (mode == 0)
		return !k->on || inode_csum_ok(k, in, sz, ino) ? 0 : -2;
	if (!(t == 1 || t == 2 || t == 4 || t == 6 || t == 8 || t == 0xA || t == 0xC))
		return -1;
	if ((rk_get_le32(in + 0x20) & 0x80000) && rk_get_le16(in + 0x28) != 0xF30A)
		return -1;
	return !k->on || inode_csum_ok(k, in, sz, ino);
}

#define DIR_BLOCKS 8u   /* blocks checked per directory, its first included */

/* Whether D (BS bytes) is a linear block of directory inode IN, number
 * INO: its entries' record lengths (at least 12, multiples of 4, each
 * name inside its record) chain to its end exactly, and with
 * metadata_csum (CK) its checksum tail holds (dt_ext_dir_csum_ok) --
 * zeros, a file's data or another place's block fail. */
static int dir_block_ok(const uint8_t *d, uint32_t bs, const struct icsum *ck, uint32_t ino, const uint8_t *in)
{
	uint32_t end = bs;
	if (ck->on) {
		if (!dt_ext_dir_csum_ok(ck->seed, ino, in, d, bs))
			return 0;
		end = bs - 12;
	}
	uint32_t at = 0;
	while (at < end) {
		if (end - at < 12)
			return 0;   /* no room for a record's header */
		uint32_t rl = rk_get_le16(d + at + 4);
		if (rl < 12 || rl % 4 || rl > end - at || 8u + d[at + 6] > rl)
			return 0;
		at += rl;
	}
	return 1;
}

/* Directory DIR_INO (inode IN, extent-mapped, depth 0): its first block
 * must start with "." naming DIR_INO, and its next blocks (up to
 * DIR_BLOCKS, where its size reaches) must be directory blocks (seed
 * 3685: lost+found's third block, on a member otherwise all zeros, was
 * what told it from an empty one).  An htree directory's later blocks
 * are index nodes: only its first is checked.  BUF: BS bytes. */
static void probe_dir(struct pr *p, const uint8_t *in, uint32_t ino, uint32_t bs, const struct icsum *ck,
                      uint8_t *buf)
{
	if ((rk_get_le16(in) >> 12) != 4)
		return;
	uint64_t blk = dt_ext_extent_block(in, 0);
	uint8_t d[16];
	if (blk == DT_NONE || blk > UINT64_MAX / bs || vr(p, blk * bs, d, sizeof d))
		return;
	tally(p, rk_get_le32(d) == ino && rk_get_le16(d + 4) >= 12 && d[6] == 1 && d[8] == '.');
	uint64_t size = rk_get_le32(in + 4) | (uint64_t)rk_get_le32(in + 0x6C) << 32;
	if (!buf || (rk_get_le32(in + 0x20) & 0x1000u))
		return;   /* a quick look, or EXT4_INDEX_FL */
	for (uint64_t l = 1; l < DIR_BLOCKS && l < size / bs; l++) {
		blk = dt_ext_extent_block(in, l);
		if (blk == DT_NONE || blk > UINT64_MAX / bs || vr(p, blk * bs, buf, bs))
			continue;
		tally(p, dir_block_ok(buf, bs, ck, ino, in));
	}
}

/* See detect_int.h. */
int dt_tail_check(struct dt_ctx *c, struct dt_hyp *h, uint64_t at, uint32_t bs, uint64_t size, uint8_t *buf)
{
	uint32_t end = (uint32_t)(size % bs);
	if (!size || !end || bs - end < DT_TAIL_SLACK)
		return -1;
	uint32_t from = end > 64 ? end - 64 : 0;
	if (at > UINT64_MAX - bs || dt_vread(c, h, at + from, buf, bs - from))
		return -1;
	if (rk_buf_is_zero(buf, end - from))
		return -1;   /* a file of zeros, or a block never written */
	return rk_buf_is_zero(buf + (end - from), bs - end);
}

/* See detect_int.h. */
void dt_tails_count(struct dt_hyp *h, uint32_t ok, uint32_t n)
{
	if (n < DT_TAILS_MIN || (uint64_t)ok * 10 < (uint64_t)n * 9)
		return;
	h->probe_ok += ok;
	h->probe_bad += n - ok;
}

/* An ext4 regular file's last block (inode IN, extent-mapped, depth 0,
 * block size BS): dt_tail_check, the kernel and mke2fs -d zeroing the
 * slack.  BUF: BS bytes. */
static void probe_tail(struct pr *p, const uint8_t *in, uint32_t bs, uint8_t *buf)
{
	if ((rk_get_le16(in) >> 12) != 8 || !rk_get_le16(in + 0x1A) || rk_get_le32(in + 0x14))
		return;   /* not a live regular file */
	uint64_t size = rk_get_le32(in + 4) | (uint64_t)rk_get_le32(in + 0x6C) << 32;
	uint64_t blk = size ? dt_ext_extent_block(in, (size - 1) / bs) : DT_NONE;
	if (blk == DT_NONE || blk > (UINT64_MAX - p->base) / bs - 1)
		return;
	int r = dt_tail_check(p->c, p->h, p->base + blk * bs, bs, size, buf);
	if (r >= 0)
		tally(p, r);
	p->h->tail_bad += r == 0;
}

/* The tails of files whose inodes lie past the 16 inode-table blocks
 * the probe reads: SPREAD_BLOCKS blocks spread over group G's used inodes
 * (up to its itable_unused, from descriptor D), the regular files there
 * checked (probe_tail) and nothing else, at most an even share of
 * SPREAD_TAILS by the end of each block (seed 4303: the first four
 * blocks of eight took all 64, and no tail on the second member of a
 * linear array of 2 was checked; its start 64 and 128 KiB on tied).
 * mke2fs -d numbers files in the order it lays out their data, so later
 * inodes' tails lie on the later
 * members of a linear array (seed 2548: its last two members, tied in
 * either order, held no tail of the first 256 inodes).  Returns the
 * tails looked at (at most SPREAD_TAILS).  BLK: DT_BLK scratch. */
static uint32_t tails_spread(struct pr *p, const struct icsum *ck, const uint8_t *d, uint32_t dsz, uint64_t g,
                             uint32_t ipg, uint32_t isz, uint32_t bs, uint8_t *blk, uint8_t *tail)
{
	uint64_t it = rk_get_le32(d + 8) | (dsz >= 64 ? (uint64_t)rk_get_le32(d + 0x28) << 32 : 0);
	uint32_t unused = rk_get_le16(d + 0x1C) | (dsz >= 64 ? (uint32_t)rk_get_le16(d + 0x32) << 16 : 0);
	uint32_t used = unused < ipg ? ipg - unused : ipg, per = DT_BLK / isz;
	uint32_t ublk = (uint32_t)(((uint64_t)used * isz + DT_BLK - 1) / DT_BLK), n = 0;
	if (ublk <= 16 || it > (UINT64_MAX - (uint64_t)ublk * DT_BLK) / bs)
		return 0;
	for (uint32_t k = 1; k <= SPREAD_BLOCKS && n < SPREAD_TAILS; k++) {
		uint32_t t = 16 + (uint32_t)((uint64_t)k * (ublk - 16) / (SPREAD_BLOCKS + 1));
		if (vr(p, it * bs + (uint64_t)t * DT_BLK, blk, DT_BLK))
			break;
		for (uint32_t q = 0; q < per && n < k * (SPREAD_TAILS / SPREAD_BLOCKS); q++) {
			uint32_t ino = (uint32_t)(g * ipg + t * per + q + 1);
			if (inode_ok(blk + q * isz, isz, ck, ino) <= 0)
				continue;
			uint32_t before = p->h->probe_ok + p->h->probe_bad;
			probe_tail(p, blk + q * isz, bs, tail);
			n += p->h->probe_ok + p->h->probe_bad != before;
		}
	}
	return n;
}

/* The allocation bitmaps against the blocks: sampled blocks of sampled
 * groups that hold data where the bitmap says used (bm_ok) or free (bm_bad:
 * a fresh or lightly used file system keeps free blocks zero; a wrong
 * geometry puts data where the bitmap has none).  BLK: DT_BLK scratch. */
static void probe_bitmaps(struct pr *p, uint64_t ngroups, uint32_t bpg, uint32_t fdb, uint32_t bs, uint32_t dsz,
                          uint64_t blocks, uint8_t *blk)
{
	if (!ngroups)
		return;   /* a superblock of 0 blocks (fuzz_detect) */
	uint64_t gstep = ngroups > 16 ? ngroups / 16 : 1;
	/* 1024 blocks in all, however few the groups: a small file system's
	 * one group says as much as a large one's sixteen (seed 2832: a
	 * linear array of 2 holding one 103 MiB group, read also with an
	 * image of zeros between its members, 0.3 points behind on 64) */
	uint32_t per = ngroups >= 16 ? 64 : (uint32_t)(1024 / ngroups);
	for (uint64_t g = 0; g < ngroups; g += gstep) {
		uint8_t d[64];
		if (vr(p, (uint64_t)(fdb + 1) * bs + g * dsz, d, dsz < 64 ? 32 : 64))
			continue;
		uint64_t bb = rk_get_le32(d) | (dsz >= 64 ? (uint64_t)rk_get_le32(d + 0x20) << 32 : 0);
		uint32_t len = bs < DT_BLK ? bs : DT_BLK;
		if (!bb || bb >= blocks || (rk_get_le16(d + 0x12) & 2) || vr(p, bb * bs, blk, len))
			continue;   /* BLOCK_UNINIT: nothing written */
		uint32_t nb = bpg < len * 8 ? bpg : len * 8;
		for (uint32_t k = 0; k < per; k++) {
			uint32_t j = (uint32_t)(((uint64_t)k * nb + (k * 37u) % 61u) / per);
			uint64_t b = g * bpg + fdb + j;
			uint8_t x[256];
			if (j >= nb || b >= blocks || vr(p, b * bs, x, sizeof x) || rk_buf_is_zero(x, sizeof x))
				continue;
			if (blk[j / 8] & (1u << (j % 8)))
				p->h->bm_ok++;
			else
				p->h->bm_bad++;
		}
	}
}

/* Whether the file system in superblock SB has written far more than it
 * holds (s_kbytes_written over 3/2 of its used blocks): files were deleted
 * or rewritten, so its free blocks keep their old bytes and data there is
 * no sign of a wrong geometry.  The forensics ext4 sample wrote 35 MiB and
 * holds 15; 72 % of its free blocks hold data, 59 % of its used ones (seed
 * 2510: its true RAID-0 lost 98 points to them).  mkfs -d writes less than
 * it leaves used (the journal is not written). */
static int ext_free_stale(const uint8_t *sb, uint32_t bs, uint64_t blocks, int is64)
{
	uint64_t kbw = rk_get_le64(sb + 0x178);
	uint64_t freeb = rk_get_le32(sb + 0x0C) | (is64 ? (uint64_t)rk_get_le32(sb + 0x158) << 32 : 0);
	if (!kbw || freeb > blocks)
		return 0;
	return kbw / 3 > (blocks - freeb) * (bs / 1024) / 2;
}

/* ext2/3/4 at volume offset base: superblock backups, inode tables, dirs. */
static void probe_ext(struct pr *p, const uint8_t *sb)
{
	static const uint32_t grp[] = { 1, 3, 5, 7, 9, 25, 27, 49, 81, 125, 243, 343 };
	uint32_t lbs = rk_get_le32(sb + 0x18);
	if (lbs > 6)
		return;   /* hostile or not ext: blocks of 1 to 64 KiB only */
	uint32_t bs = 1024u << lbs, bpg = rk_get_le32(sb + 0x20), fdb = rk_get_le32(sb + 0x14);
	uint32_t ipg = rk_get_le32(sb + 0x28), isz = rk_get_le16(sb + 0x58), inc = rk_get_le32(sb + 0x60);
	uint64_t blocks = rk_get_le32(sb + 4) | ((inc & 0x80) ? (uint64_t)rk_get_le32(sb + 0x150) << 32 : 0);
	uint32_t dsz = (inc & 0x80) ? rk_get_le16(sb + 0xFE) : 32;
	if (!bpg || !ipg || bs > 65536 || dsz < 32 || dsz > 1024 || rk_get_le32(sb + 0x4C) == 0)
		isz = 128;
	if (!bpg || !ipg || bs > 65536 || dsz < 32 || dsz > 1024 || isz < 128 || isz > bs)
		return;
	uint64_t ngroups = (blocks + bpg - 1) / bpg;
	struct icsum ck = { (rk_get_le32(sb + 0x64) & 0x400) != 0, 0 };   /* RO_COMPAT_METADATA_CSUM */
	ck.seed = (inc & 0x2000) ? rk_get_le32(sb + 0x270) : dt_crc32c_raw(0xFFFFFFFFu, sb + 0x68, 16);
	uint8_t b[1024];
	for (uint32_t k = 0; k < sizeof grp / sizeof grp[0] && grp[k] < ngroups; k++)
		if (!vr(p, ((uint64_t)grp[k] * bpg + fdb) * bs, b, 1024))
			tally(p, rk_get_le16(b + 0x38) == 0xEF53 && rk_get_le16(b + 0x5A) == grp[k]);
	uint8_t *blk = malloc(DT_BLK);
	if (!blk)
		return;
	if (!p->limit && !ext_free_stale(sb, bs, blocks, (inc & 0x80) != 0))
		probe_bitmaps(p, ngroups, bpg, fdb, bs, dsz, blocks, blk);
	uint8_t *tail = p->limit ? NULL : malloc(bs);   /* full probes only */
	uint32_t tails = 0;
	uint64_t step = ngroups > PROBE_MAX ? ngroups / PROBE_MAX : 1;   /* 64 bits: a hostile count of groups (fuzz_detect) */
	for (uint64_t g = 0; g < ngroups; g += step) {
		uint8_t d[64];
		if (vr(p, (uint64_t)(fdb + 1) * bs + g * dsz, d, dsz < 64 ? 32 : 64))
			continue;
		uint64_t it = rk_get_le32(d + 8) | (dsz >= 64 ? (uint64_t)rk_get_le32(d + 0x28) << 32 : 0);
		if (!it || it >= blocks || (rk_get_le16(d + 0x12) & 1))
			continue;   /* INODE_UNINIT groups hold nothing to check */
		uint32_t per = DT_BLK / isz, nblk = (uint32_t)(((uint64_t)ipg * isz + DT_BLK - 1) / DT_BLK);
		for (uint32_t t = 0; t < nblk && t < 16; t++) {
			if (vr(p, it * bs + (uint64_t)t * DT_BLK, blk, DT_BLK))
				break;
			int good = 0, badi = 0, bad0 = 0;
			for (uint32_t k = 0; k < per; k++) {
				uint32_t ino = (uint32_t)(g * ipg + t * per + k + 1);
				int r = inode_ok(blk + k * isz, isz, &ck, ino);
				good += r > 0;
				badi += r == -1;
				bad0 += r == -2;
				if (r > 0)
					probe_dir(p, blk + k * isz, ino, bs, &ck, tail);
				if (r > 0 && tail && tails < TAIL_MAX) {
					uint32_t before = p->h->probe_ok + p->h->probe_bad;
					probe_tail(p, blk + k * isz, bs, tail);
					tails += p->h->probe_ok + p->h->probe_bad != before;
				}
			}
			/* an inode of mode 0 that fails counts where the block's
			 * inodes in use prove its place: the reading damaged it
			 * (seed 4668: inode 1 read from the parity member, its
			 * times XORed with another block's bytes, inode 2 beside
			 * it intact); a block of another place's inodes is no
			 * evidence either way (t_ext_inode_probe) */
			if (good || badi)
				tally(p, badi == 0 && !(good && bad0));
			if (!good && !badi)
				break;   /* the used inodes come first */
		}
		if (tail)
			tails += tails_spread(p, &ck, d, dsz, g, ipg, isz, bs, blk, tail);
	}
	free(tail);
	free(blk);
}

/* FAT: the second FAT starts as the first; FAT32's backup boot sector. */
static void probe_fat(struct pr *p, const uint8_t *bt)
{
	uint32_t bps = rk_get_le16(bt + 0x0B), res = rk_get_le16(bt + 0x0E), nf = bt[0x10];
	uint32_t fsz = rk_get_le16(bt + 0x16) ? rk_get_le16(bt + 0x16) : rk_get_le32(bt + 0x24);
	uint8_t a[512], b[512];
	if (nf == 2 && fsz && !vr(p, (uint64_t)res * bps, a, 512) && !vr(p, ((uint64_t)res + fsz) * bps, b, 512))
		tally(p, !memcmp(a, b, 512));
	if (!rk_get_le16(bt + 0x16)) {
		uint32_t bk = rk_get_le16(bt + 0x32);
		if (bk && bk < res && !vr(p, (uint64_t)bk * bps, a, 512))
			tally(p, !memcmp(a, bt, 90));
	}
	if (!p->limit)
		dt_fat_tails(p->c, p->h, p->base, bt);
}

/* GPT: the backup header where the primary says; the file systems in the
 * first partitions (probed at their start). */
static void probe_gpt(struct pr *p, const uint8_t *hdr)
{
	uint64_t alt = rk_get_le64(hdr + 32), ents = rk_get_le64(hdr + 72);
	uint8_t b[512];
	if (alt < (1ull << 50) && !vr(p, alt * 512, b, 512))
		tally(p, !memcmp(b, "EFI PART", 8) && rk_get_le64(b + 24) == alt);
	uint8_t e[512];
	if (ents > (1ull << 40) || vr(p, ents * 512, e, 512))
		return;
	for (int k = 0; k < 4; k++) {
		uint64_t first = rk_get_le64(e + k * 128 + 32);
		if (!first || first > (1ull << 48) || p->base)
			continue;
		struct pr q = { p->c, p->h, first * 512, p->limit };
		dt_probe_at(&q);
	}
}

/* Everything predicted by what sits at volume offset P->base. */
static void dt_probe_at(struct pr *p)
{
	uint8_t v[4096];
	if (vr(p, 0, v, sizeof v))
		return;
	if (rk_get_le16(v + 1024 + 0x38) == 0xEF53)
		probe_ext(p, v + 1024);
	else if (!memcmp(v + 3, "NTFS    ", 8))
		dt_ntfs_probe(p->c, p->h, p->base, p->limit, v);
	else if (!memcmp(v + 3, "EXFAT   ", 8)) {
		uint32_t bps = 1u << (v[0x6C] >= 9 && v[0x6C] <= 12 ? v[0x6C] : 9);
		uint8_t b[512];
		if (!vr(p, 12ull * bps, b, 512)) {
			memset(b + 0x6A, 0, 2); b[0x70] = 0;
			uint8_t m[512];
			memcpy(m, v, 512);
			memset(m + 0x6A, 0, 2); m[0x70] = 0;
			tally(p, !memcmp(m, b, 512));
		}
		dt_exfat_probe(p->c, p->h, p->base, p->limit, v);
	} else if (v[510] == 0x55 && v[511] == 0xAA && (v[0] == 0xEB || v[0] == 0xE9) && v[0x0B] == 0 && v[0x10] && v[0x10] <= 2)
		probe_fat(p, v);
	else if (!memcmp(v, "XFSB", 4))
		dt_xfs_probe(p->c, p->h, p->base, p->limit, v);
	else if (!memcmp(v + 512, "EFI PART", 8))
		probe_gpt(p, v + 512);
	else if (!p->base && dt_mbr_first(v)) {   /* the file systems of the partitions */
		for (int k = 0; k < 4; k++) {
			uint32_t start = rk_get_le32(v + 446 + 16 * k + 8);
			if (!v[446 + 16 * k + 4] || !start)
				continue;
			struct pr q = { p->c, p->h, (uint64_t)start * 512, p->limit };
			dt_probe_at(&q);
		}
		return;
	}
	uint8_t s[0x50];
	if (!vr(p, 65536, s, sizeof s) && !memcmp(s + 0x40, "_BHRfS_M", 8)) {
		if (!vr(p, 64ull << 20, s, sizeof s))
			tally(p, !memcmp(s + 0x40, "_BHRfS_M", 8) && rk_get_le64(s + 0x30) == (64ull << 20));
		dt_btrfs_probe(p->c, p->h, p->base, p->limit);
	}
}

/* See detect_int.h. */
void dt_probe(struct dt_ctx *c, struct dt_hyp *h, uint32_t limit)
{
	h->probe_ok = h->probe_bad = h->bm_ok = h->bm_bad = h->tail_bad = h->mirr_bad = 0;
	struct pr p = { c, h, 0, limit };
	dt_probe_at(&p);
}

/* The bytes the structure in V (4 KiB read at a volume start) says it
 * spans: ext blocks count, NTFS / FAT / exFAT sector counts, XFS dblocks,
 * a GPT's backup header, an MBR's partitions' end; 0 when none is
 * recognised or its fields are implausible. */
static uint64_t claim_of(const uint8_t *v)
{
	const uint8_t *e = v + 1024;
	if (rk_get_le16(e + 0x38) == 0xEF53 && rk_get_le32(e + 0x18) <= 6) {
		uint64_t blocks = rk_get_le32(e + 0x04);
		if (rk_get_le32(e + 0x60) & 0x80)
			blocks |= (uint64_t)rk_get_le32(e + 0x150) << 32;
		return blocks < (1ull << 48) ? blocks << (10 + rk_get_le32(e + 0x18)) : 0;
	}
	if (!memcmp(v + 3, "NTFS    ", 8)) {   /* its backup boot sector follows the sectors it counts */
		uint64_t s = rk_get_le64(v + 0x28), bps = rk_get_le16(v + 0x0B);
		return s < (1ull << 48) && bps <= 4096 ? (s + 1) * bps : 0;
	}
	if (!memcmp(v + 3, "EXFAT   ", 8) && v[0x6C] >= 9 && v[0x6C] <= 12) {
		uint64_t s = rk_get_le64(v + 0x48);
		return s < (1ull << 48) ? s << v[0x6C] : 0;
	}
	if (!memcmp(v, "XFSB", 4)) {
		uint64_t d = rk_get_be64(v + 8), bs = rk_get_be32(v + 4);
		return d < (1ull << 48) && bs <= 65536 ? d * bs : 0;
	}
	if (!memcmp(v + 512, "EFI PART", 8)) {
		uint64_t alt = rk_get_le64(v + 512 + 32);
		return alt < (1ull << 48) ? (alt + 1) * 512 : 0;
	}
	if (v[510] == 0x55 && v[511] == 0xAA && (v[0] == 0xEB || v[0] == 0xE9) && v[0x10] && v[0x10] <= 2) {
		uint64_t bps = rk_get_le16(v + 0x0B), s = rk_get_le16(v + 0x13);
		if (!s)
			s = rk_get_le32(v + 0x20);
		return bps >= 512 && bps <= 4096 ? s * bps : 0;
	}
	if (dt_mbr_first(v)) {
		uint64_t end = 0;
		for (int k = 0; k < 4; k++) {
			const uint8_t *pe = v + 446 + 16 * k;
			uint64_t x = ((uint64_t)rk_get_le32(pe + 8) + rk_get_le32(pe + 12)) * 512;
			if (pe[4] && x > end)
				end = x;
		}
		return end;
	}
	return 0;
}

/* See detect_int.h. */
uint64_t dt_fs_claim(struct dt_ctx *c, const struct dt_hyp *h)
{
	uint8_t v[4096];
	if (h->g.volume_size < sizeof v || dt_vread(c, h, 0, v, sizeof v))
		return 0;
	uint64_t claim = claim_of(v);
	if (!memcmp(v + 3, "EXFAT   ", 8) || !memcmp(v + 3, "NTFS    ", 8) || rk_get_le16(v + 1024 + 0x38) == 0xEF53 ||
	    !memcmp(v, "XFSB", 4))
		return claim;
	uint8_t s[0x80];   /* btrfs: total_bytes of its superblock at 64 KiB */
	if (h->g.volume_size > 65536 + sizeof s && !dt_vread(c, h, 65536, s, sizeof s) && !memcmp(s + 0x40, "_BHRfS_M", 8) &&
	    rk_get_le64(s + 0x70) < (1ull << 48))
		return rk_get_le64(s + 0x70);
	return claim;
}
