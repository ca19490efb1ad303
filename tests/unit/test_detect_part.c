/* test_detect_part.c: which partition each file system's anchors count
 * from (libmeta/detect_part.c).  The assignment by the start a file system
 * records, by the size only one partition fits (with the type's class),
 * and by the order the file systems were seen in; GPT entries; and the
 * check through a hypothesis that moves a base when the partition's own
 * bytes say so. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "detect_int.h"
#include "rk_le.h"
#include "helpers/detect_hyp.h"
#include "helpers/rk_test.h"

#define MiB (1ull << 20)

/* A context with partitions (start, size in MiB, class 0 any 1 Linux 2
 * Windows) and no anchors yet. */
static void ctx_parts(struct dt_ctx *c, const uint64_t (*p)[3], uint32_t n)
{
	memset(c, 0, sizeof *c);
	for (uint32_t k = 0; k < n; k++)
		c->fs.part[k] = (struct dt_part){ p[k][0] * MiB, p[k][1] * MiB, (uint8_t)p[k][2] };
	c->fs.nparts = n;
}

static void anchor(struct dt_ctx *c, uint8_t kind, uint64_t ioff, uint64_t raw)
{
	RK_REQUIRE(dt_anchor_push(c, &(struct dt_anchor){ kind, 0, ioff, raw, DT_NONE, DT_NONE, 0 }));
}

/* An NTFS that records its partition's start (hidden sectors) is put
 * there, though seen first and though its size fits the other too. */
START_TEST(t_assign_records)
{
	static const uint64_t p[][3] = { { 1, 40, 2 }, { 41, 40, 2 } };
	struct dt_ctx c;
	ctx_parts(&c, p, 2);
	c.fs.ntfs = 1;
	c.fs.ntfs_bps = 512;
	c.fs.ntfs_sectors = 40 * MiB / 512 - 1;
	c.fs.ntfs_hidden = 41 * MiB / 512;
	anchor(&c, DT_NTFS_BOOT, 4096, 0);
	dt_part_assign(&c);
	RK_REQUIRE_MSG(c.fs.base[DT_FSK_NTFS] == 41 * MiB, "base %llu", (unsigned long long)c.fs.base[DT_FSK_NTFS]);
	/* the same without the record: the first that fits (by order) */
	c.fs.ntfs_hidden = 0;
	dt_part_assign(&c);
	RK_REQUIRE(c.fs.base[DT_FSK_NTFS] == 1 * MiB);
	free(c.anc);
}
END_TEST

/* Two partitions of one size: the ext4 goes to the Linux one, the NTFS
 * to the Windows one, whatever order they were seen in. */
START_TEST(t_assign_size_class)
{
	static const uint64_t p[][3] = { { 1, 40, 2 }, { 41, 40, 1 }, { 81, 100, 0 } };
	struct dt_ctx c;
	ctx_parts(&c, p, 3);
	c.fs.ext = 1;
	c.fs.ext_bs = 4096;
	c.fs.ext_blocks = 40 * MiB / 4096;
	c.fs.ntfs = 1;
	c.fs.ntfs_bps = 512;
	c.fs.ntfs_sectors = 40 * MiB / 512 - 1;
	anchor(&c, DT_EXT_SB, 1024, 0);
	anchor(&c, DT_NTFS_MFT, 30 * MiB, 5);
	dt_part_assign(&c);
	RK_REQUIRE(c.fs.base[DT_FSK_EXT] == 41 * MiB);
	RK_REQUIRE(c.fs.base[DT_FSK_NTFS] == 1 * MiB);
	RK_REQUIRE(c.fs.base[DT_FSK_XFS] == 0);
	/* rebasing moves each kind by its own base, the table's own anchors not */
	struct dt_anchor a = { DT_EXT_SB, 0, 0, 0, 1024, DT_NONE, 0 }, m = { DT_MBR, 0, 0, 0, 0, DT_NONE, 0 };
	dt_part_rebase(&c.fs, &a);
	dt_part_rebase(&c.fs, &m);
	RK_REQUIRE(a.voff == 41 * MiB + 1024 && a.voff2 == DT_NONE && m.voff == 0);
	free(c.anc);
}
END_TEST

/* The forensics "multiple" sample: file systems larger than their
 * partitions (no size fits), two Linux and two Windows partitions; the
 * order the starts were seen in decides (btrfs before ext4). */
START_TEST(t_assign_order)
{
	static const uint64_t p[][3] = { { 1, 110, 1 }, { 111, 40, 1 }, { 151, 40, 2 }, { 191, 59, 2 } };
	struct dt_ctx c;
	ctx_parts(&c, p, 4);
	c.fs.ext = 1;
	c.fs.ext_bs = 1024;
	c.fs.ext_blocks = 142336;   /* 139 MiB in a partition of 40 */
	c.fs.btrfs = 1;
	c.fs.btrfs_total = 261095424;
	c.fs.ntfs = 1;
	c.fs.ntfs_bps = 512;
	c.fs.ntfs_sectors = 120831;   /* fits partition 4 */
	anchor(&c, DT_EXT_SB, 40 * MiB + 1024, 0);
	anchor(&c, DT_EXT_SB, 45 * MiB, 1);        /* a backup: not where it starts */
	anchor(&c, DT_BTRFS_SB, MiB + 65536, 65536);
	anchor(&c, DT_NTFS_MFT, 70 * MiB, 0);
	dt_part_assign(&c);
	RK_REQUIRE_MSG(c.fs.base[DT_FSK_BTRFS] == 1 * MiB && c.fs.base[DT_FSK_EXT] == 111 * MiB &&
	               c.fs.base[DT_FSK_NTFS] == 191 * MiB, "btrfs %llu ext %llu ntfs %llu",
	               (unsigned long long)c.fs.base[DT_FSK_BTRFS], (unsigned long long)c.fs.base[DT_FSK_EXT],
	               (unsigned long long)c.fs.base[DT_FSK_NTFS]);
	/* no table: every base 0 */
	c.fs.nparts = 0;
	dt_part_assign(&c);
	for (int k = 0; k < DT_FSK_N; k++)
		RK_REQUIRE(c.fs.base[k] == 0);
	free(c.anc);
}
END_TEST

/* GPT entries following the header: starts, sizes and classes; a GPT
 * replaces the protective MBR's table; entries past the buffer are not
 * read. */
START_TEST(t_gpt_entries)
{
	static const uint8_t linux_guid[16] = { 0xAF, 0x3D, 0xC6, 0x0F, 0x83, 0x84, 0x72, 0x47,
	                                        0x8E, 0x79, 0x3D, 0x69, 0xD8, 0x47, 0x7D, 0xE4 };
	uint8_t b[512 + 4 * 128];
	memset(b, 0, sizeof b);
	memcpy(b, "EFI PART", 8);
	rk_put_le64(b + 24, 1);
	rk_put_le64(b + 72, 2);
	rk_put_le32(b + 80, 128);
	rk_put_le32(b + 84, 128);
	rk_put_le64(b + 512 + 32, 2048);
	rk_put_le64(b + 512 + 40, 4095);
	memcpy(b + 512 + 128, linux_guid, 16);
	rk_put_le64(b + 512 + 128 + 32, 4096);
	rk_put_le64(b + 512 + 128 + 40, 8191);
	struct dt_fs fs;
	memset(&fs, 0, sizeof fs);
	uint8_t mbr[512] = { 0 };
	mbr[446 + 4] = 0x83;
	rk_put_le32(mbr + 446 + 8, 63);
	rk_put_le32(mbr + 446 + 12, 100);
	dt_part_mbr(&fs, mbr);
	RK_REQUIRE(fs.nparts == 1 && fs.part[0].start == 63 * 512 && fs.part[0].cls == 1);
	dt_part_gpt(&fs, b, sizeof b);
	RK_REQUIRE_MSG(fs.nparts == 2, "%u partitions", fs.nparts);
	RK_REQUIRE(fs.part[0].start == MiB && fs.part[0].size == MiB && fs.part[0].cls == 0);
	RK_REQUIRE(fs.part[1].start == 2 * MiB && fs.part[1].size == 2 * MiB && fs.part[1].cls == 1);
	/* a header whose entries do not follow within the bytes given */
	rk_put_le64(b + 72, 40);
	dt_part_gpt(&fs, b, sizeof b);
	RK_REQUIRE(fs.nparts == 0);
}
END_TEST

/* A disk image with an MBR (two Linux partitions at 1 and 3 MiB) and an
 * ext superblock at partition 2's start: anchors assigned to partition 1
 * are moved by reading through the hypothesis, once; a superblock of
 * another file system (another UUID) moves nothing. */
START_TEST(t_confirm)
{
	const uint64_t size = 8 * MiB;
	uint8_t mbr[512] = { 0 }, sb[1024] = { 0 };
	for (int k = 0; k < 2; k++) {
		mbr[446 + 16 * k + 4] = 0x83;
		rk_put_le32(mbr + 446 + 16 * k + 8, k ? 6144 : 2048);
		rk_put_le32(mbr + 446 + 16 * k + 12, 4096);
	}
	mbr[510] = 0x55;
	mbr[511] = 0xAA;
	rk_put_le16(sb + 0x38, 0xEF53);
	memcpy(sb + 0x68, "0123456789abcdef", 16);
	const char *img = rk_test_path("disk");
	rk_test_make_file(img, size);
	rk_test_write_at(img, mbr, sizeof mbr, 0);
	rk_test_write_at(img, sb, sizeof sb, 3 * MiB + 1024);
	struct dt_ctx c;
	dt_test_open_one(&c, img);
	dt_part_mbr(&c.fs, mbr);
	RK_REQUIRE(c.fs.nparts == 2);
	struct dt_hyp h;
	dt_test_hyp_linear(&h, 0, size);
	/* another file system's identity: nothing known at the partitions */
	uint8_t other[1024];
	memset(other, 'x', sizeof other);
	dt_part_learnt(&c.fs, DT_FSK_EXT, other);
	c.fs.base[DT_FSK_EXT] = MiB;
	RK_REQUIRE(dt_part_confirm(&c, &h) == -1 && c.fs.base[DT_FSK_EXT] == MiB && !c.fs.base_fixed);
	/* its own: moved to partition 2, then kept */
	dt_part_learnt(&c.fs, DT_FSK_EXT, sb);
	RK_REQUIRE(dt_part_confirm(&c, &h) == 1 && c.fs.base[DT_FSK_EXT] == 3 * MiB && c.fs.base_fixed);
	dt_part_assign(&c);
	RK_REQUIRE(c.fs.base[DT_FSK_EXT] == 3 * MiB);
	RK_REQUIRE(dt_part_confirm(&c, &h) == -1);
	/* already right: confirmed, nothing moves */
	c.fs.base_fixed = 0;
	RK_REQUIRE(dt_part_confirm(&c, &h) == 0 && c.fs.base[DT_FSK_EXT] == 3 * MiB);
	dt_test_close_one(&c);
}
END_TEST

RK_TEST_SUITE("detect_part", { "part", 60, rk_test_tmpdir_make, rk_test_tmpdir_remove, 0,
	  RK_TESTS(RK_TEST(t_assign_records), RK_TEST(t_assign_size_class), RK_TEST(t_assign_order), RK_TEST(t_gpt_entries),
	           RK_TEST(t_confirm)) })
