/* test_detect_rebuilt.c: a boot sector on a missing member, rebuilt by
 * the scan (learn_rebuilt in libmeta/detect_sample.c).  A FAT16 volume of
 * 3 MiB whose boot sector sits in the first chunk and whose FATs (one
 * long chain: sectors of sequential entries, the scan's FAT-table
 * anchors) lie further on, striped as a RAID-5 of 4 (left-symmetric,
 * 64 KiB chunks); the member holding the first chunk is gone.  The three
 * others XOR to its bytes: the scan learns the FAT's parameters and the
 * table anchors resolve.  With the member present nothing is rebuilt
 * (the boot sector is seen); with an image of random bytes in its place
 * the XOR of every image but that one still rebuilds it. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "detect_int.h"
#include "rk_geom.h"
#include "rk_le.h"
#include "helpers/detect_hyp.h"
#include "helpers/rk_test.h"

#define NM 4u
#define CH (64u * 1024u)
#define VOL (3u << 20)
#define RES 256u      /* the FATs from 128 KiB: the third chunk, on another member */
#define FATSECS 32u
#define ROOTSECS 32u

static uint8_t *make_volume(void)
{
	const uint32_t secs = VOL / 512, data = RES + 2 * FATSECS + ROOTSECS, ncl = secs - data;
	uint8_t *v = calloc(1, VOL);
	RK_REQUIRE(v);
	dt_test_fat16(v, secs, RES, FATSECS, ROOTSECS);
	for (uint32_t f = 0; f < 2; f++) {
		uint8_t *fat = v + (RES + f * FATSECS) * 512;
		for (uint32_t k = 2; k < ncl + 1 && k < FATSECS * 256; k++)
			rk_put_le16(fat + 2 * k, (uint16_t)(k + 1));   /* one file over every cluster */
	}
	for (uint32_t k = 0; k < ncl; k++)
		rk_test_fill_seeded(v + (uint64_t)(data + k) * 512, 512, k + 1);
	return v;
}

/* Writes the RAID-5 of V to m0..m3; returns the role holding the first
 * chunk. */
static uint32_t write_members(const uint8_t *v)
{
	return dt_test_raid5_write(v, VOL, NM, CH, rk_test_members());
}

/* The anchors of KIND resolved (a volume offset known), in C. */
static uint32_t resolved(const struct dt_ctx *c, int kind)
{
	uint32_t n = 0;
	for (uint32_t k = 0; k < c->nanc; k++)
		n += c->anc[k].kind == kind && c->anc[k].voff != DT_NONE;
	return n;
}

/* The anchors of KIND found, resolved or not, in C. */
static uint32_t found(const struct dt_ctx *c, int kind)
{
	uint32_t n = 0;
	for (uint32_t k = 0; k < c->nanc; k++)
		n += c->anc[k].kind == kind;
	return n;
}

/* Writes the RAID-5 of V (freed), opens C over every member but the one
 * holding the first chunk and scans them; returns that member's role. */
static uint32_t scan_gone_first(uint8_t *v, struct dt_ctx *c)
{
	uint32_t first = write_members(v);
	free(v);
	char *paths[NM];
	uint32_t n = 0;
	for (uint32_t r = 0; r < NM; r++)
		if (r != first)
			paths[n++] = rk_test_members()[r];
	memset(c, 0, sizeof *c);
	RK_REQUIRE(!dt_open(c, paths, n));
	RK_REQUIRE(!dt_scan_all(c));
	return first;
}

START_TEST(t_rebuilt_boot)
{
	struct dt_ctx c;
	uint32_t first = scan_gone_first(make_volume(), &c);
	RK_REQUIRE_MSG(c.self.fat && c.self.fat_res == RES && c.self.fat_sz == FATSECS, "fat %d res %u", c.self.fat,
	               c.self.fat_res);
	RK_REQUIRE_MSG(resolved(&c, DT_FAT_TAB) >= 8, "%u table anchors resolved", resolved(&c, DT_FAT_TAB));
	dt_close(&c);
	/* an image of random bytes in the missing one's place */
	uint8_t *x = rk_test_random_bytes(VOL / (NM - 1), 5);
	rk_test_spit(rk_test_members()[first], x, VOL / (NM - 1));
	free(x);
	memset(&c, 0, sizeof c);
	RK_REQUIRE(!dt_open(&c, rk_test_members(), NM));
	RK_REQUIRE(!dt_scan_all(&c));
	RK_REQUIRE(c.self.fat && c.self.fat_res == RES);
	dt_close(&c);
}
END_TEST

#define XFS_BS 4096u
#define XFS_AGB 80u    /* AGs of 320 KiB, five chunks: ten in the volume, their AGFs on every member */
#define XFS_AGS ((VOL / XFS_BS + XFS_AGB - 1) / XFS_AGB)

/* An XFS v5 volume of VOL bytes reduced to what the scan reads: the
 * primary superblock at 0 (no secondary ones) and each AG's AGF in its
 * second sector, random bytes from its first AG's second block on (so
 * parity copies no header: the rows hold other data). */
static uint8_t *make_xfs(void)
{
	uint8_t *v = rk_test_random_bytes(VOL, 11);
	memset(v, 0, XFS_BS);
	for (uint32_t ag = 1; ag < XFS_AGS; ag++)
		memset(v + (uint64_t)ag * XFS_AGB * XFS_BS, 0, 1024);   /* no secondary superblock */
	memcpy(v, "XFSB", 4);
	rk_put_be32(v + 4, XFS_BS);
	rk_put_be64(v + 8, VOL / XFS_BS);
	rk_put_be32(v + 84, XFS_AGB);
	rk_put_be32(v + 88, XFS_AGS);
	rk_put_be16(v + 100, 0xB4A5);   /* version 5 */
	rk_put_be16(v + 102, 512);      /* sector */
	rk_put_be16(v + 104, 512);      /* inode size */
	rk_put_be16(v + 106, XFS_BS / 512);
	v[123] = 3;                     /* log2 inodes per block */
	v[124] = 7;                     /* log2 AG blocks, rounded up */
	for (uint32_t ag = 0; ag < XFS_AGS; ag++) {
		uint8_t *agf = v + (uint64_t)ag * XFS_AGB * XFS_BS + 512;
		memcpy(agf, "XAGF", 4);
		rk_put_be32(agf + 4, 1);
		rk_put_be32(agf + 8, ag);
	}
	return v;
}

/* The XFS superblock on the gone member is rebuilt from the others'
 * XOR: the scan learns the geometry and the AGF anchors resolve. */
START_TEST(t_rebuilt_xfs)
{
	struct dt_ctx c;
	scan_gone_first(make_xfs(), &c);
	RK_REQUIRE_MSG(c.fs.xfs && c.fs.xfs_agblocks == XFS_AGB && c.fs.xfs_bs == XFS_BS, "xfs %d agblocks %u, %u AGF anchors",
	               c.fs.xfs, c.fs.xfs_agblocks, found(&c, DT_XFS_AGF));
	RK_REQUIRE(c.self.xfs && c.self.xfs_agblocks == XFS_AGB);
	RK_REQUIRE_MSG(resolved(&c, DT_XFS_AGF) >= 6, "%u AGF anchors resolved", resolved(&c, DT_XFS_AGF));
	dt_close(&c);
}
END_TEST

RK_TEST_SUITE("detect_rebuilt", { "rebuilt", 60, rk_test_tmpdir_make, rk_test_tmpdir_remove, 0,
	  RK_TESTS(RK_TEST(t_rebuilt_boot), RK_TEST(t_rebuilt_xfs)) })
