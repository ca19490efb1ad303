/* test_detect_self.c: the pieces of raid-recover --detect that serve
 * striping without redundancy (libmeta/detect_self.c, detect_zero.c,
 * detect_stripe.c), on hand-made sectors: XFS v5 inodes and metadata
 * blocks resolve to the volume byte their fields name (and not when their
 * UUID is another file system's), FAT directories and FAT sectors of
 * chains resolve to their cluster's and entries' place (both FAT copies),
 * random bytes give none; the zero map tells zeros exactly to the byte at
 * a granule's edge; the linear first-member start is the one its anchors
 * agree on. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "detect_int.h"
#include "rk_le.h"
#include "helpers/rk_test.h"

static void be16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static void be32(uint8_t *p, uint32_t v) { be16(p, (uint16_t)(v >> 16)); be16(p + 2, (uint16_t)v); }
static void be64(uint8_t *p, uint64_t v) { be32(p, (uint32_t)(v >> 32)); be32(p + 4, (uint32_t)v); }

/* The anchor of KIND at image byte IOFF (NULL none). */
static const struct dt_anchor *find(const struct dt_ctx *c, uint8_t kind, uint64_t ioff)
{
	for (uint32_t k = 0; k < c->nanc; k++)
		if (c->anc[k].kind == kind && c->anc[k].ioff == ioff)
			return &c->anc[k];
	return NULL;
}

static const uint8_t UUID[16] = { 0x77, 0x7e, 0x23, 0xb4, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 };

/* An XFS v5 superblock: 4 KiB blocks, 4864 blocks per AG (agblklog 13),
 * 2 AGs, 512-byte inodes (8 per block). */
static void xfs_sb(uint8_t *p)
{
	memcpy(p, "XFSB", 4);
	be32(p + 4, 4096);
	be64(p + 8, 2 * 4864);
	memcpy(p + 32, UUID, 16);
	be32(p + 84, 4864);
	be32(p + 88, 2);
	be16(p + 100, 0xB4A5);   /* version 5 */
	be16(p + 102, 512);
	be16(p + 104, 512);
	be16(p + 106, 8);
	p[123] = 3;
	p[124] = 13;
}

/* C for one image and a zeroed buffer of LEN bytes to scan as its bytes. */
static uint8_t *one_image(struct dt_ctx *c, size_t len)
{
	memset(c, 0, sizeof *c);
	c->nimg = 1;
	uint8_t *b = calloc(1, len);
	RK_REQUIRE(b);
	return b;
}

START_TEST(t_xfs)
{
	struct dt_ctx c;
	uint8_t *b = one_image(&c, 64 * 1024);
	xfs_sb(b);
	/* inode 1 << 16 | 5 << 3: AG 1, block 5, slot 0 */
	uint64_t ino = (1ull << 16) | (5u << 3);
	uint8_t *in = b + 8192;
	in[0] = 'I'; in[1] = 'N'; in[4] = 3;
	be64(in + 152, ino);
	memcpy(in + 160, UUID, 16);
	/* the same inode of another file system: no anchor */
	uint8_t *other = b + 12288;
	memcpy(other, in, 512);
	other[163] ^= 1;
	/* a free-space btree block at sector 40 */
	uint8_t *bt = b + 16384;
	memcpy(bt, "AB3B", 4);
	be64(bt + 16, 40);
	memcpy(bt + 32, UUID, 16);
	/* a directory block at sector 4864 * 8 + 24 */
	uint8_t *db = b + 20480;
	memcpy(db, "XDB3", 4);
	be64(db + 8, 4864 * 8 + 24);
	memcpy(db + 24, UUID, 16);
	rk_test_fill(b + 32768, 32768);   /* random bytes: nothing */
	dt_scan_buf(&c, 0, 1 << 20, b, 64 * 1024);
	dt_resolve(&c);
	const struct dt_anchor *a = find(&c, DT_XFS_INO, (1 << 20) + 8192);
	RK_REQUIRE(a && a->voff == (4864ull + 5) * 4096);
	a = find(&c, DT_XFS_INO, (1 << 20) + 12288);
	RK_REQUIRE(a && a->voff == DT_NONE);
	a = find(&c, DT_XFS_BLK, (1 << 20) + 16384);
	RK_REQUIRE(a && a->voff == 40 * 512);
	a = find(&c, DT_XFS_BLK, (1 << 20) + 20480);
	RK_REQUIRE(a && a->voff == (4864ull * 8 + 24) * 512);
	for (uint32_t k = 0; k < c.nanc; k++)
		RK_REQUIRE_MSG(c.anc[k].ioff < (1 << 20) + 32768, "an anchor in random bytes at %llu",
		               (unsigned long long)c.anc[k].ioff);
	free(c.anc);
	free(b);
}
END_TEST

/* NTFS MFT records: one in use numbered 5 and the $MFT record (0, in use)
 * are anchors; a record not in use that says 0 (mkntfs leaves reserved
 * records unnumbered: seed 1516 had eight such "record 0" against the true
 * reading) is not; one not in use with its number is. */
START_TEST(t_ntfs_mft_numbers)
{
	struct dt_ctx c;
	uint8_t *b = one_image(&c, 16 * 1024);
	static const struct { uint32_t at, number; uint16_t flags; int anchor; } r[] = {
		{ 0, 0, 1, 1 }, { 1024, 5, 1, 1 }, { 2048, 0, 0, 0 }, { 3072, 40, 0, 1 },
	};
	for (size_t k = 0; k < sizeof r / sizeof r[0]; k++) {
		uint8_t *p = b + r[k].at;
		memcpy(p, "FILE", 4);
		rk_put_le16(p + 4, 0x30);
		rk_put_le16(p + 0x16, r[k].flags);
		rk_put_le32(p + 0x2C, r[k].number);
	}
	dt_scan_buf(&c, 0, 0, b, 16 * 1024);
	for (size_t k = 0; k < sizeof r / sizeof r[0]; k++) {
		const struct dt_anchor *a = find(&c, DT_NTFS_MFT, r[k].at);
		RK_REQUIRE_MSG(!a == !r[k].anchor, "record at %u: anchor %d, wanted %d", r[k].at, a != NULL, r[k].anchor);
		RK_REQUIRE(!a || a->raw == r[k].number);
	}
	free(c.anc);
	free(b);
}
END_TEST

/* A FAT16 boot sector: 512-byte sectors, 4 per cluster, 4 reserved, 2 FATs
 * of 128 sectors, 512 root entries (32 sectors), 131072 sectors: the data
 * area starts at sector 4 + 256 + 32 = 292. */
static void fat_boot(uint8_t *p)
{
	p[0] = 0xEB; p[1] = 0x3C; p[2] = 0x90;
	memcpy(p + 3, "mkfs.fat", 8);
	rk_put_le16(p + 0x0B, 512);
	p[0x0D] = 4;
	rk_put_le16(p + 0x0E, 4);
	p[0x10] = 2;
	rk_put_le16(p + 0x11, 512);
	rk_put_le16(p + 0x13, 0);
	p[0x15] = 0xF8;
	rk_put_le16(p + 0x16, 128);
	rk_put_le32(p + 0x20, 131072);
	p[510] = 0x55; p[511] = 0xAA;
}

START_TEST(t_fat)
{
	struct dt_ctx c;
	memset(&c, 0, sizeof c);
	c.nimg = 1;
	uint8_t *b = calloc(1, 16384);
	RK_REQUIRE(b);
	fat_boot(b);
	uint8_t *d = b + 4096;   /* the directory at cluster 77 */
	memcpy(d, ".          ", 11);
	d[11] = 0x10;
	rk_put_le16(d + 26, 77);
	memcpy(d + 32, "..         ", 11);
	d[43] = 0x10;
	uint8_t *f = b + 8192;   /* FAT sector of entries 256..511: chains k -> k + 1 */
	for (uint32_t j = 0; j < 256; j++)
		rk_put_le16(f + 2 * j, j % 50 == 49 ? 0xFFFF : (uint16_t)(256 + j + 1));
	dt_scan_buf(&c, 0, 0, b, 16384);
	dt_resolve(&c);
	const struct dt_anchor *a = find(&c, DT_FAT_DIR, 4096);
	RK_REQUIRE(a && a->voff == 292ull * 512 + (77 - 2) * 2048);
	a = find(&c, DT_FAT_TAB, 8192);
	RK_REQUIRE(a && a->voff == 4 * 512 + 256 * 2 && a->voff2 == a->voff + 128 * 512);
	free(c.anc);
	free(b);
}
END_TEST

START_TEST(t_zero_range)
{
	/* zeros but for one byte at 100000 (inside the granule 98304..114687) */
	rk_test_make_file(rk_test_path("z"), 1 << 20);
	rk_test_write_at(rk_test_path("z"), "x", 1, 100000);
	char *p[] = { strdup(rk_test_path("z")) };
	struct dt_ctx c;
	memset(&c, 0, sizeof c);
	RK_REQUIRE(dt_open(&c, p, 1) == RK_OK);
	RK_REQUIRE(dt_zero_range(&c, 0, 0, 98304));
	RK_REQUIRE(dt_zero_range(&c, 0, 0, 100000));          /* up to the byte: its granule's part is read */
	RK_REQUIRE(!dt_zero_range(&c, 0, 0, 100001));
	RK_REQUIRE(!dt_zero_range(&c, 0, 99999, 4096));
	RK_REQUIRE(dt_zero_range(&c, 0, 100001, 500000));
	RK_REQUIRE(!dt_zero_range(&c, 0, (1 << 20) - 512, 1024));  /* past the end: unknown */
	dt_close(&c);
	free(p[0]);
}
END_TEST

START_TEST(t_linear_start0)
{
	struct dt_ctx c;
	memset(&c, 0, sizeof c);
	struct dt_img im[2] = { { .size = 64 << 20 }, { .size = 64 << 20 } };
	struct dt_anchor an[4] = {
		{ .kind = DT_EXT_SB, .img = 1, .ioff = 131072 + 1024, .voff = 1024, .voff2 = DT_NONE },
		{ .kind = DT_FAT_DIR, .img = 1, .ioff = 131072 + 8192, .voff = 8192, .voff2 = DT_NONE },
		/* far into the volume: on a later member, its start unknown */
		{ .kind = DT_FAT_DIR, .img = 0, .ioff = 4096, .voff = 70ull << 20, .voff2 = DT_NONE },
		{ .kind = DT_FAT_DIR, .img = 0, .ioff = 65536 + 512, .voff = 512, .voff2 = DT_NONE },
	};
	c.img = im;
	c.nimg = 2;
	c.anc = an;
	c.nanc = 4;
	RK_REQUIRE(dt_linear_start0(&c) == 131072);
	c.nanc = 0;
	RK_REQUIRE(dt_linear_start0(&c) == 0);
}
END_TEST

RK_TEST_SUITE("detect_self", { "self", 60, rk_test_tmpdir_make, rk_test_tmpdir_remove, 0,
	  RK_TESTS(RK_TEST(t_xfs), RK_TEST(t_ntfs_mft_numbers), RK_TEST(t_fat), RK_TEST(t_zero_range), RK_TEST(t_linear_start0)) })
