/* test_segnames.c: files named like the segments of a split raw image that
 * are separate members (libmeta/segnames.c, spec/images.md "Separate
 * members named like segments"): whole members named c.001 .. c.004 or
 * l.aa .. l.ad are read alone (also with one name missing); real splits of
 * a member stay one image (the backup copy at a segment's end, a split at
 * a 2 MiB boundary); a disk whose GPT spans the set stays one image even
 * when a later piece starts with a member of its own; RK_DEV_PLAIN opens
 * a segment as itself. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "rk_create.h"
#include "rk_dev.h"
#include "rk_le.h"
#include "rk_part.h"
#include "rk_segnames.h"
#include "helpers/rk_test.h"

#define MSZ (4u * RK_TEST_MIB)

/* A raidkit RAID-5 over m0.img .. m3.img (4 MiB each). */
static void make_members(void)
{
	rk_test_create(5, RK_CREATE_LAYOUT_DEFAULT, 65536, 4, MSZ, NULL);
}

/* Copies member m<I>.img to NAME in the test folder. */
static void member_as(int i, const char *name)
{
	char m[32];
	snprintf(m, sizeof m, "m%d.img", i);
	rk_test_copy_file(rk_test_path(m), rk_test_path(name));
}

/* Cuts member m<I>.img into pieces STEM.001 ... of SEG bytes. */
static void split_member(int i, const char *stem, size_t seg)
{
	char m[32], p[64];
	size_t len;
	snprintf(m, sizeof m, "m%d.img", i);
	uint8_t *b = rk_test_slurp(rk_test_path(m), &len);
	for (size_t at = 0, k = 1; at < len; at += seg, k++) {
		snprintf(p, sizeof p, "%s.%03zu", stem, k);
		rk_test_spit(rk_test_path(p), b + at, len - at < seg ? len - at : seg);
	}
	free(b);
}

/* The backend rk_member_open chooses for NAME ("file", "split"), or "". */
static const char *opened_as(const char *name, uint64_t *size)
{
	static char be[16];
	rk_dev *d = NULL;
	be[0] = 0;
	if (rk_member_open(&d, rk_test_path(name), RK_DEV_RDONLY) == RK_OK) {
		snprintf(be, sizeof be, "%s", rk_dev_backend(d));
		if (size)
			*size = rk_dev_size(d);
	}
	rk_dev_close(d);
	return be;
}

START_TEST(separate_members)
{
	char why[512];
	uint64_t size = 0;
	make_members();
	const char *num[] = { "c.001", "c.002", "c.003", "c.004" }, *let[] = { "l.aa", "l.ab", "l.ac", "l.ad" };
	for (int i = 0; i < 4; i++) {
		member_as(i, num[i]);
		member_as(i, let[i]);
	}
	/* the name alone makes one image of them */
	rk_dev *d;
	ck_assert_int_eq(rk_dev_open(&d, rk_test_path("c.001"), RK_DEV_RDONLY), RK_OK);
	ck_assert_uint_eq(rk_dev_size(d), 4ull * MSZ);
	rk_dev_close(d);
	ck_assert_int_eq(rk_split_separate(rk_test_path("c.001"), why, sizeof why), 1);
	ck_assert_msg(strstr(why, "c.002 carries its own raidkit superblock: read as a separate file, not a segment of "),
	              "%s", why);
	ck_assert_int_eq(rk_split_separate(rk_test_path("l.aa"), NULL, 0), 1);
	for (int i = 0; i < 4; i++) {
		ck_assert_int_eq(rk_member_plain(rk_test_path(num[i]), NULL, 0), 1);
		ck_assert_str_eq(opened_as(num[i], &size), "file");
		ck_assert_uint_eq(size, MSZ);
		ck_assert_str_eq(opened_as(let[i], &size), "file");
	}
	/* never written through that name */
	ck_assert_int_eq(rk_member_open(&d, rk_test_path("c.002"), RK_DEV_RDWR), RK_E_NOTSUP);
	ck_assert_ptr_nonnull(strstr(rk_errmsg(), "named like a segment"));
	/* PLAIN opens a segment as itself */
	ck_assert_int_eq(rk_dev_open(&d, rk_test_path("c.002"), RK_DEV_RDONLY | RK_DEV_PLAIN), RK_OK);
	ck_assert_uint_eq(rk_dev_size(d), MSZ);
	rk_dev_close(d);
	/* not folded into c.001 when given beside it */
	char g0[512], g1[512];
	snprintf(g0, sizeof g0, "%s", rk_test_path("c.001"));
	snprintf(g1, sizeof g1, "%s", rk_test_path("c.002"));
	char *given[] = { g0, g1 };
	ck_assert_int_eq(rk_dev_segment_given(given, 2, 1), 1);
	ck_assert_int_eq(rk_member_segment_given(given, 2, 1), 0);
	/* a name missing from the folder: the others still stand alone */
	ck_assert_int_eq(unlink(rk_test_path("c.002")), 0);
	ck_assert_int_eq(rk_split_separate(rk_test_path("c.001"), why, sizeof why), 1);
	ck_assert_ptr_nonnull(strstr(why, "c.003 carries"));
	ck_assert_str_eq(opened_as("c.004", NULL), "file");
}
END_TEST

START_TEST(real_splits)
{
	char g0[512], g1[512];
	make_members();
	split_member(0, "s", 1000000);        /* an arbitrary boundary */
	split_member(1, "t", 2 * RK_TEST_MIB); /* aligned: the backup copy at t.002's own end offset */
	ck_assert_int_eq(rk_split_separate(rk_test_path("s.001"), NULL, 0), 0);
	ck_assert_int_eq(rk_split_separate(rk_test_path("t.001"), NULL, 0), 0);
	uint64_t size = 0;
	ck_assert_str_eq(opened_as("s.001", &size), "split");
	ck_assert_uint_eq(size, MSZ);
	ck_assert_str_eq(opened_as("t.001", &size), "split");
	ck_assert_str_eq(opened_as("t.002", NULL), "");   /* a later segment alone: refused */
	/* t.002 read alone: the backup copy's bytes sit at its own backup
	 * offset, but the copy records the member's offset and size */
	rk_dev *d;
	char what[128];
	ck_assert_int_eq(rk_dev_open(&d, rk_test_path("t.002"), RK_DEV_RDONLY | RK_DEV_PLAIN), RK_OK);
	ck_assert_int_eq(rk_member_carries_own(d, what, sizeof what), 0);
	rk_dev_close(d);
	ck_assert_int_eq(rk_dev_open(&d, rk_test_path("t.001"), RK_DEV_RDONLY | RK_DEV_PLAIN), RK_OK);
	ck_assert_int_eq(rk_member_carries_own(d, what, sizeof what), 0);
	rk_dev_close(d);
	snprintf(g0, sizeof g0, "%s", rk_test_path("t.001"));
	snprintf(g1, sizeof g1, "%s", rk_test_path("t.002"));
	char *given[] = { g0, g1 };
	ck_assert_int_eq(rk_member_segment_given(given, 2, 1), 1);
	/* segment 1 blank (no metadata), segment 2 a whole member: separate */
	rk_test_make_file(rk_test_path("z.001"), MSZ);
	member_as(2, "z.002");
	ck_assert_int_eq(rk_split_separate(rk_test_path("z.001"), NULL, 0), 1);
}
END_TEST

/* A GPT header (92 bytes, CRC set) at LBA MY naming ALT into P. */
static void gpt_header(uint8_t *p, uint64_t my, uint64_t alt)
{
	memset(p, 0, 512);
	memcpy(p, "EFI PART", 8);
	rk_put_le32(p + 8, 0x00010000);
	rk_put_le32(p + 12, 92);
	rk_put_le64(p + 24, my);
	rk_put_le64(p + 32, alt);
	rk_put_le32(p + 16, (uint32_t)crc32(0, p, 92));
}

/* One disk with a GPT over the set (g.001 its start, g.003 its end) whose
 * middle piece g.002 happens to be a whole member (a partition starting at
 * the split boundary): one image, since g.001 alone carries nothing and
 * the set carries the GPT.  The same layout as separate disks (each with
 * its own GPT) is separate. */
START_TEST(gpt_spanning_set)
{
	uint8_t h[512];
	make_members();
	uint64_t total = 2 * RK_TEST_MIB + MSZ, last = total / 512 - 1;
	rk_test_make_file(rk_test_path("g.001"), RK_TEST_MIB);
	gpt_header(h, 1, last);
	rk_test_write_at(rk_test_path("g.001"), h, sizeof h, 512);
	member_as(3, "g.002");
	rk_test_make_file(rk_test_path("g.003"), RK_TEST_MIB);
	gpt_header(h, last, 1);
	rk_test_write_at(rk_test_path("g.003"), h, sizeof h, RK_TEST_MIB - 512);
	ck_assert_int_eq(rk_split_separate(rk_test_path("g.001"), NULL, 0), 0);
	ck_assert_str_eq(opened_as("g.001", NULL), "split");
	/* whole disks each with a GPT of its own size */
	char why[512];
	for (int i = 1; i <= 2; i++) {
		char n[16];
		snprintf(n, sizeof n, "w.%03d", i);
		rk_test_make_file(rk_test_path(n), RK_TEST_MIB);
		gpt_header(h, 1, RK_TEST_MIB / 512 - 1);
		rk_test_write_at(rk_test_path(n), h, sizeof h, 512);
	}
	ck_assert_int_eq(rk_split_separate(rk_test_path("w.001"), why, sizeof why), 1);
	ck_assert_ptr_nonnull(strstr(why, "GPT"));
}
END_TEST

RK_TEST_SUITE("segnames", { "segnames", 0, rk_test_tmpdir_make, rk_test_tmpdir_remove, 0,
	  RK_TESTS(RK_TEST(separate_members), RK_TEST(real_splits), RK_TEST(gpt_spanning_set)) })
