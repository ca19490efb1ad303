/* test_detect_alloc.c: a FAT's allocation map where two readings differ
 * (libmeta/detect_alloc.c, the tie-break): a hand-made FAT16 volume of 3
 * MiB (512-byte clusters, about half of them used and holding random
 * data, spread without a period; the free ones zeros) striped as a RAID-0
 * of 3 with 64 KiB chunks; the same with an exFAT and with the FAT16 in
 * an MBR's partition, with an XFS whose free space B+tree by block number
 * has two levels, and readings that differ in free clusters only. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "detect_int.h"
#include "rk_geom.h"
#include "rk_le.h"
#include "helpers/detect_hyp.h"
#include "helpers/rk_test.h"

#define VOL3 (3u << 20)                       /* 48 chunks: 16 per member */
#define CH (64u * 1024u)
#define RES 4u
#define FATSECS 32u
#define ROOTSECS 32u
#define DATA (RES + 2 * FATSECS + ROOTSECS)   /* sector 100: boot sector and FATs in the first chunk */

/* About half the clusters, by a hash of K (no period a stripe could match). */
static int used_cluster(uint32_t k)
{
	uint32_t h = (k + 1) * 0x9E3779B1u;
	h ^= h >> 15;
	h *= 0x85EBCA6Bu;
	h ^= h >> 13;
	return h & 1;
}

/* The volume of SIZE bytes: boot sector, two FATs, clusters of one
 * sector (FAT16: over 4085 of them); DIRTY puts random bytes in the free
 * clusters too. */
static uint8_t *make_volume(uint32_t size, int dirty)
{
	const uint32_t secs = size / 512, ncl = secs - DATA;
	uint8_t *v = calloc(1, size);
	RK_REQUIRE(v);
	dt_test_fat16(v, secs, RES, FATSECS, ROOTSECS);
	for (uint32_t f = 0; f < 2; f++) {
		uint8_t *fat = v + (RES + f * FATSECS) * 512;
		for (uint32_t k = 0; k < ncl; k++)
			if (used_cluster(k))
				rk_put_le16(fat + 2 * (k + 2), 0xFFFF);   /* a one-cluster file */
	}
	for (uint32_t k = 0; k < ncl; k++)
		if (used_cluster(k) || dirty)
			rk_test_fill_seeded(v + (DATA + k) * 512, 512, k + 1);
	return v;
}

/* Writes V (SIZE bytes) striped as a RAID-0 of N with CH chunks to the
 * members. */
static void write_members(const uint8_t *v, uint32_t size, uint32_t n)
{
	uint8_t *m[3];
	RK_REQUIRE(n <= 3 && size % (n * CH) == 0);
	for (uint32_t r = 0; r < n; r++)
		RK_REQUIRE((m[r] = malloc(size / n)) != NULL);
	for (uint32_t c = 0; c < size / CH; c++)
		memcpy(m[c % n] + (c / n) * CH, v + c * CH, CH);
	for (uint32_t r = 0; r < n; r++) {
		rk_test_spit(rk_test_members()[r], m[r], size / n);
		free(m[r]);
	}
}

/* V (SIZE bytes) striped as a RAID-0 of 3; the tie-break's fits there of
 * the true reading (*FR) and of the one with the second and third images
 * swapped (*FS), which must give a verdict. */
static void fits(const uint8_t *v, uint32_t size, double *fr, double *fs)
{
	write_members(v, size, 3);
	struct dt_ctx c;
	memset(&c, 0, sizeof c);
	RK_REQUIRE(!dt_open(&c, rk_test_members(), 3));
	struct rk_geom g;
	struct dt_hyp right, swapped;
	RK_REQUIRE(!rk_geom_init(&g, 0, 0, CH, 3, size / 3));
	dt_test_hyp_roles(&right, &g, 3);
	dt_test_hyp_roles(&swapped, &g, 3);
	swapped.role_img[1] = 2;
	swapped.role_img[2] = 1;
	RK_REQUIRE_MSG(dt_alloc_tiebreak(&c, &right, &swapped, fr, fs), "no verdict");
	dt_close(&c);
}

/* V (SIZE bytes, freed) striped as a RAID-0 of 3: the true reading's map
 * must fit its data where the swapped one's does not. */
static void clear_fit(uint8_t *v, uint32_t size)
{
	double fr, fs;
	fits(v, size, &fr, &fs);
	RK_REQUIRE_MSG(fr > 0.9 && fs < 0.3, "fits: true %.2f, swapped %.2f", fr, fs);
	free(v);
}

/* Two readings that place the same images at the same starts, tied on
 * everything else (dt_alloc_tiebreak): a RAID-0 of 3 and the same with the
 * second and third images swapped read the same boot sector and FATs
 * (the first chunk) and differ everywhere else; where they differ the
 * true one's used clusters hold data and its free ones none, the swapped
 * one's map and data are unrelated.  With deleted data in the free
 * clusters the true one still fits no worse. */
START_TEST(t_tiebreak)
{
	for (int dirty = 0; dirty < 2; dirty++) {
		uint8_t *v = make_volume(VOL3, dirty);
		double fr, fs;
		fits(v, VOL3, &fr, &fs);
		if (!dirty)
			RK_REQUIRE_MSG(fr > 0.9 && fs < 0.3, "fits: true %.2f, swapped %.2f", fr, fs);
		else
			RK_REQUIRE_MSG(fr >= fs - 0.1, "deleted data: true %.2f, swapped %.2f", fr, fs);
		free(v);
	}
}
END_TEST

#define XBASE (192u * 1024u)   /* the exFAT's partition: three chunks in, on the first member in both readings */
#define XHEAP (32u * 1024u)    /* its cluster heap: the bitmap, up-case table and root in the first chunk */
#define XCL 4096u

/* An exFAT of 3 MiB (4 KiB clusters) behind an MBR whose one partition
 * starts at XBASE, in a volume of SIZE bytes: cluster 2 the allocation
 * bitmap, 3 the up-case table, 4 the root directory listing both; about
 * half the other clusters used and holding random data, the free ones
 * zeros. */
static uint8_t *make_exfat(uint32_t size)
{
	const uint32_t ncl = (3u << 20) / XCL - XHEAP / XCL;
	uint8_t *v = calloc(1, size), *b = v + XBASE;
	RK_REQUIRE(v);
	v[446 + 4] = 0x07;
	rk_put_le32(v + 446 + 8, XBASE / 512);
	rk_put_le32(v + 446 + 12, (3u << 20) / 512);
	v[510] = 0x55; v[511] = 0xAA;
	b[0] = 0xEB; b[1] = 0x76; b[2] = 0x90;
	memcpy(b + 3, "EXFAT   ", 8);
	rk_put_le64(b + 0x40, XBASE / 512);
	rk_put_le64(b + 0x48, (3u << 20) / 512);
	rk_put_le32(b + 0x50, 8);
	rk_put_le32(b + 0x54, 8);
	rk_put_le32(b + 0x58, XHEAP / 512);
	rk_put_le32(b + 0x5C, ncl);
	rk_put_le32(b + 0x60, 4);
	b[0x6C] = 9; b[0x6D] = 3; b[0x6E] = 1;
	b[510] = 0x55; b[511] = 0xAA;
	uint8_t *bitmap = b + XHEAP, *root = b + XHEAP + 2 * XCL;
	root[0] = 0x81;
	rk_put_le32(root + 20, 2);
	rk_put_le64(root + 24, (ncl + 7) / 8);
	root[32] = 0x82;
	rk_put_le32(root + 32 + 20, 3);
	rk_put_le64(root + 32 + 24, 100);
	bitmap[0] = 7;   /* clusters 2, 3 and 4 */
	for (uint32_t k = 3; k < ncl; k++)
		if (used_cluster(k)) {
			bitmap[k / 8] |= (uint8_t)(1u << (k % 8));
			rk_test_fill_seeded(b + XHEAP + k * XCL, XCL, k + 1);
		}
	return v;
}

/* The same tie in an exFAT (its allocation bitmap, found through the root
 * directory), inside an MBR's partition. */
START_TEST(t_tiebreak_exfat)
{
	const uint32_t size = XBASE + (3u << 20);   /* 17 stripes of 3 chunks */
	clear_fit(make_exfat(size), size);
}
END_TEST

/* The FAT16 volume of t_tiebreak (VOL3 bytes) behind an MBR whose one
 * partition starts at XBASE: every map is read in the partition, not the
 * exFAT's alone (seed 3521: the forensics ext4 sample at 1 MiB had none). */
START_TEST(t_tiebreak_fat_partition)
{
	const uint32_t size = XBASE + VOL3;
	uint8_t *fat = make_volume(VOL3, 0), *v = calloc(1, size);
	RK_REQUIRE(v);
	v[446 + 4] = 0x06;
	rk_put_le32(v + 446 + 8, XBASE / 512);
	rk_put_le32(v + 446 + 12, VOL3 / 512);
	v[510] = 0x55; v[511] = 0xAA;
	memcpy(v + XBASE, fat, VOL3);
	rk_put_le32(v + XBASE + 0x1C, XBASE / 512);   /* hidden sectors: the partition's start */
	free(fat);
	clear_fit(v, size);
}
END_TEST

/* Two readings that differ in free clusters only: the true RAID-0 of 3
 * over a FAT16 with no cluster used, and the same with its third member
 * replaced by an image of random bytes (a parity block taken for data
 * shows so).  Free units holding data where the other reading's hold none
 * decide (seed 3459); with a few only, or data in both, there is no
 * verdict. */
START_TEST(t_tiebreak_free_only)
{
	uint8_t *v = calloc(1, VOL3), *junk = malloc(VOL3 / 3);
	RK_REQUIRE(v && junk);
	dt_test_fat16(v, VOL3 / 512, RES, FATSECS, ROOTSECS);
	write_members(v, VOL3, 3);
	rk_test_fill_seeded(junk, VOL3 / 3, 7);
	rk_test_spit(rk_test_members()[3], junk, VOL3 / 3);
	struct dt_ctx c;
	memset(&c, 0, sizeof c);
	RK_REQUIRE(!dt_open(&c, rk_test_members(), 4));
	struct rk_geom g;
	struct dt_hyp right, other;
	double fr, fo;
	RK_REQUIRE(!rk_geom_init(&g, 0, 0, CH, 3, VOL3 / 3));
	dt_test_hyp_roles(&right, &g, 3);
	dt_test_hyp_roles(&other, &g, 3);
	other.role_img[2] = 3;
	RK_REQUIRE_MSG(dt_alloc_tiebreak(&c, &right, &other, &fr, &fo), "no verdict");
	RK_REQUIRE_MSG(fr == 0 && fo == -1, "fits: true %.2f, junk %.2f", fr, fo);
	dt_close(&c);
	free(junk);
	free(v);
}
END_TEST

#define XFS_BS 4096u
#define XFS_LEAF_HDR 16u   /* a v4 short-form B+tree block's header ("ABTB") */

/* Appends to the leaf at L (v4 short form) the free extent START, LEN. */
static void xfs_free_extent(uint8_t *l, uint32_t start, uint32_t len)
{
	uint32_t n = rk_get_be16(l + 6);
	RK_REQUIRE(XFS_LEAF_HDR + 8 * (n + 1) <= XFS_BS);
	rk_put_be32(l + XFS_LEAF_HDR + 8 * n, start);
	rk_put_be32(l + XFS_LEAF_HDR + 8 * n + 4, len);
	rk_put_be16(l + 6, (uint16_t)(n + 1));
}

/* An XFS of SIZE bytes (4 KiB blocks, one AG): the superblock and AGF in
 * block 0, the free space tree by block number in blocks 1-3 (a root of
 * two keys over two leaves, the second from block NBLK / 2 on); about half
 * the other blocks used and holding random data, the runs of free ones
 * zeros and in the leaves. */
static uint8_t *make_xfs(uint32_t size)
{
	const uint32_t nblk = size / XFS_BS, half = nblk / 2;
	uint8_t *v = calloc(1, size), *agf = v + 512, *root = v + XFS_BS;
	RK_REQUIRE(v);
	memcpy(v, "XFSB", 4);
	rk_put_be32(v + 4, XFS_BS);
	rk_put_be64(v + 8, nblk);
	rk_put_be32(v + 0x54, nblk);   /* agblocks */
	rk_put_be32(v + 0x58, 1);      /* agcount */
	rk_put_be16(v + 0x66, 512);    /* sectsize */
	memcpy(agf, "XAGF", 4);
	rk_put_be32(agf + 4, 1);
	rk_put_be32(agf + 12, nblk);
	rk_put_be32(agf + 16, 1);      /* bno root */
	rk_put_be32(agf + 28, 2);      /* its levels */
	for (uint32_t b = 1; b < 4; b++) {
		uint8_t *t = v + b * XFS_BS;
		memcpy(t, "ABTB", 4);
		rk_put_be16(t + 4, b == 1);
		rk_put_be32(t + 8, 0xFFFFFFFFu);
		rk_put_be32(t + 12, 0xFFFFFFFFu);
	}
	const uint32_t per = (XFS_BS - XFS_LEAF_HDR) / 12;   /* a node's keys, then its pointers */
	rk_put_be16(root + 6, 2);
	rk_put_be32(root + XFS_LEAF_HDR, 4);
	rk_put_be32(root + XFS_LEAF_HDR + 8, half);
	rk_put_be32(root + XFS_LEAF_HDR + 8 * per, 2);
	rk_put_be32(root + XFS_LEAF_HDR + 8 * per + 4, 3);
	uint32_t run = 0;   /* the free run ending before block k, cut at the leaves' split */
	for (uint32_t k = 4; k <= nblk; k++) {
		int used = k == nblk || k == half || used_cluster(k);
		if (!used) {
			run++;
			continue;
		}
		if (run)
			xfs_free_extent(v + (k - run < half ? 2 : 3) * XFS_BS, k - run, run);
		run = 0;
		if (k < nblk && k != half)
			rk_test_fill_seeded(v + (size_t)k * XFS_BS, XFS_BS, k + 1);
	}
	return v;
}

/* The same tie in an XFS (its free-space B+tree by block number, found
 * through the AGF): a node over two leaves. */
START_TEST(t_tiebreak_xfs)
{
	clear_fit(make_xfs(VOL3), VOL3);
}
END_TEST

RK_TEST_SUITE("detect_alloc", { "alloc", 60, rk_test_tmpdir_make, rk_test_tmpdir_remove, 0,
	  RK_TESTS(RK_TEST(t_tiebreak), RK_TEST(t_tiebreak_exfat), RK_TEST(t_tiebreak_fat_partition),
	           RK_TEST(t_tiebreak_free_only), RK_TEST(t_tiebreak_xfs)) })
