/* test_part.c: members inside whole disks (rk_part.h) and the slice
 * backend under them (rk_dev_slice): GPT and MBR images made with sfdisk,
 * their partitions listed, opened, read, refused for writing; a table
 * entry past the end of a truncated image; identities per partition. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rk_dev.h"
#include "rk_part.h"
#include "rk_probe.h"
#include "helpers/rk_test.h"

/* The GPT disk: three partitions like a NAS disk's (bytes). */
#define G_P1 (1u * RK_TEST_MIB)
#define G_P2 (3u * RK_TEST_MIB)
#define G_P3 (4u * RK_TEST_MIB)
#define G_P1_SIZE (2u * RK_TEST_MIB)
#define G_P2_SIZE (1u * RK_TEST_MIB)
#define G_P3_SIZE (3u * RK_TEST_MIB)

/* Runs shell command CMD; its exit status. */
static int sh(const char *cmd)
{
	int rc = system(cmd);
	return rc == -1 ? -1 : WEXITSTATUS(rc);
}

/* Whether sfdisk is there; prints SKIP when not. */
static int have_sfdisk(void)
{
	if (sh("command -v sfdisk >/dev/null 2>&1") == 0)
		return 1;
	printf("SKIP: sfdisk not installed (package fdisk)\n");
	return 0;
}

/* Makes IMG (SIZE bytes of holes) and writes the sfdisk SCRIPT onto it. */
static void make_disk(const char *img, uint64_t size, const char *script)
{
	char cmd[1024];
	rk_test_make_file(img, size);
	snprintf(cmd, sizeof cmd, "sfdisk --no-reread -q '%s' >/dev/null 2>&1 <<'EOF'\n%sEOF\n", img, script);
	RK_REQUIRE_MSG(sh(cmd) == 0, "sfdisk failed on %s", img);
}

static const char *make_gpt(void)
{
	const char *img = rk_test_path("gpt.img");
	make_disk(img, 8u * RK_TEST_MIB,
	          "label: gpt\n"
	          "start=2048, size=4096, type=A19D880F-05FC-4D3B-A006-743F0F84911E, name=\"system\"\n"
	          "start=6144, size=2048, type=0657FD6D-A4AB-43C4-84E5-0933C84B4F4F\n"
	          "start=8192, size=6144, type=A19D880F-05FC-4D3B-A006-743F0F84911E, name=\"data\"\n");
	return img;
}

/* p1 primary, p2 the extended container, logical p5 and p6 inside it. */
static const char *make_mbr(void)
{
	const char *img = rk_test_path("mbr.img");
	make_disk(img, 8u * RK_TEST_MIB,
	          "label: dos\n"
	          "start=2048, size=4096, type=83\n"
	          "start=6144, size=8192, type=5\n"
	          "start=8192, size=2048, type=fd\n"
	          "start=12288, size=2048, type=82\n");
	return img;
}

/* NAMES[0..n) are exactly IMG:pK for the K in WANT (0-terminated). */
static void check_names(char **names, uint32_t n, const char *img, const unsigned *want)
{
	uint32_t k = 0;
	for (; want[k]; k++) {
		char exp[512];
		snprintf(exp, sizeof exp, "%s:p%u", img, want[k]);
		RK_REQUIRE_MSG(k < n, "only %u partitions listed, %s missing", n, exp);
		ck_assert_str_eq(names[k], exp);
	}
	ck_assert_uint_eq(n, k);
}

/* GPT: three partitions listed by number, with offsets, types and names. */
START_TEST(gpt_list)
{
	if (!have_sfdisk())
		return;
	const char *img = make_gpt();
	char **names = NULL;
	uint32_t n = 0;
	ck_assert_int_eq(rk_part_list(img, &names, &n), RK_OK);
	check_names(names, n, img, (const unsigned[]){ 1, 2, 3, 0 });
	rk_part_list_free(names, n);

	struct rk_part_table t;
	ck_assert_int_eq(rk_part_table_read(img, &t), RK_OK);
	ck_assert_str_eq(t.type, "gpt");
	ck_assert_uint_eq(t.disk_size, 8u * RK_TEST_MIB);
	ck_assert_uint_eq(t.n, 3);
	ck_assert_uint_eq(t.parts[0].start, G_P1);
	ck_assert_uint_eq(t.parts[0].size, G_P1_SIZE);
	ck_assert_uint_eq(t.parts[2].start, G_P3);
	ck_assert_uint_eq(t.parts[2].size, G_P3_SIZE);
	ck_assert_str_eq(t.parts[0].type, "a19d880f-05fc-4d3b-a006-743f0f84911e");
	ck_assert_str_eq(t.parts[0].type_words, "Linux RAID");
	ck_assert_str_eq(t.parts[1].type_words, "Linux swap");
	ck_assert_str_eq(t.parts[0].label, "system");
	ck_assert_str_eq(t.parts[2].label, "data");
	for (uint32_t i = 0; i < t.n; i++)
		ck_assert_str_eq(t.parts[i].problem, "");
	rk_part_table_free(&t);
}
END_TEST

/* MBR: the logical partitions are listed, the extended container is not. */
START_TEST(mbr_logical)
{
	if (!have_sfdisk())
		return;
	const char *img = make_mbr();
	char **names = NULL;
	uint32_t n = 0;
	ck_assert_int_eq(rk_part_list(img, &names, &n), RK_OK);
	check_names(names, n, img, (const unsigned[]){ 1, 5, 6, 0 });
	rk_part_list_free(names, n);

	struct rk_part_table t;
	ck_assert_int_eq(rk_part_table_read(img, &t), RK_OK);
	ck_assert_str_eq(t.type, "dos");
	ck_assert_uint_eq(t.n, 3);
	ck_assert_str_eq(t.parts[0].type, "0x83");
	ck_assert_int_eq(t.parts[0].logical, 0);
	ck_assert_str_eq(t.parts[1].type, "0xfd");
	ck_assert_str_eq(t.parts[1].type_words, "Linux RAID autodetect");
	ck_assert_int_eq(t.parts[1].logical, 1);
	ck_assert_uint_eq(t.parts[1].start, 8192u * 512u);
	ck_assert_uint_eq(t.parts[1].size, 2048u * 512u);
	rk_part_table_free(&t);

	/* The logical partition opens with its bytes. */
	char name[512];
	snprintf(name, sizeof name, "%s:p5", img);
	uint8_t *pat = rk_test_random_bytes(4096, 5);
	rk_test_write_at(img, pat, 4096, 8192u * 512u + 1024u * 1024u - 4096u);
	rk_dev *d = NULL;
	ck_assert_int_eq(rk_member_open(&d, name, RK_DEV_RDONLY), RK_OK);
	ck_assert_uint_eq(rk_dev_size(d), 1024u * 1024u);
	uint8_t buf[4096];
	ck_assert_int_eq(rk_dev_pread(d, buf, sizeof buf, 1024u * 1024u - 4096u), RK_OK);
	ck_assert_mem_eq(buf, pat, sizeof buf);
	rk_dev_close(d);
	free(pat);
}
END_TEST

/* A pattern written into p3 with dd is what the partition reads, from its
 * first byte to its last, and nothing past it. */
START_TEST(open_bytes)
{
	if (!have_sfdisk())
		return;
	const char *img = make_gpt();
	const char *patf = rk_test_path("pattern");
	uint8_t *pat = rk_test_random_bytes(G_P3_SIZE, 33);
	rk_test_spit(patf, pat, G_P3_SIZE);
	char cmd[1024];
	snprintf(cmd, sizeof cmd, "dd if='%s' of='%s' bs=512 seek=%u conv=notrunc status=none", patf, img,
	         G_P3 / 512u);
	ck_assert_int_eq(sh(cmd), 0);
	char name[512];
	snprintf(name, sizeof name, "%s:p3", img);
	rk_dev *d = NULL;
	ck_assert_int_eq(rk_member_open(&d, name, RK_DEV_RDONLY), RK_OK);
	ck_assert_str_eq(rk_dev_path(d), name);
	ck_assert_str_eq(rk_dev_backend(d), "slice");
	ck_assert_uint_eq(rk_dev_size(d), G_P3_SIZE);
	ck_assert_int_eq(rk_dev_writable(d), 0);
	uint8_t *got = malloc(G_P3_SIZE);
	ck_assert_ptr_nonnull(got);
	ck_assert_int_eq(rk_dev_pread(d, got, G_P3_SIZE, 0), RK_OK);
	ck_assert_mem_eq(got, pat, G_P3_SIZE);
	/* Past the partition: refused, although the disk goes on. */
	ck_assert_int_eq(rk_dev_pread(d, got, 1, G_P3_SIZE), RK_E_RANGE);
	ck_assert_ptr_nonnull(strstr(rk_errmsg(), name));
	ck_assert_int_eq(rk_dev_pread(d, got, 2, G_P3_SIZE - 1), RK_E_RANGE);
	ck_assert_int_eq(rk_dev_pwrite(d, pat, 512, 0), RK_E_READONLY);
	rk_dev_close(d);
	/* p1 is zero: the pattern did not spill into it. */
	snprintf(name, sizeof name, "%s:p1", img);
	ck_assert_int_eq(rk_member_open(&d, name, RK_DEV_RDONLY), RK_OK);
	ck_assert_uint_eq(rk_dev_size(d), G_P1_SIZE);
	ck_assert_int_eq(rk_dev_pread(d, got, G_P1_SIZE, 0), RK_OK);
	for (uint32_t i = 0; i < G_P1_SIZE; i++)
		RK_REQUIRE_MSG(got[i] == 0, "p1 byte %u is %u", i, got[i]);
	rk_dev_close(d);
	free(got);
	free(pat);
}
END_TEST

/* Writable opens of a partition are refused with a sentence naming it,
 * and the image is untouched. */
START_TEST(refuse_writable)
{
	if (!have_sfdisk())
		return;
	const char *img = make_gpt();
	uint32_t crc = rk_test_file_crc(img);
	char name[512];
	snprintf(name, sizeof name, "%s:p3", img);
	rk_dev *d = (rk_dev *)1;
	ck_assert_int_eq(rk_member_open(&d, name, RK_DEV_RDWR), RK_E_NOTSUP);
	ck_assert_ptr_null(d);
	char want[600];
	snprintf(want, sizeof want, "%s: a partition of a whole disk is read only; "
	         "export the volume for a writable copy", name);
	ck_assert_str_eq(rk_errmsg(), want);
	ck_assert_int_eq(rk_member_open(&d, name, RK_DEV_RDWR | RK_DEV_CREATE), RK_E_NOTSUP);
	ck_assert_uint_eq(rk_test_file_crc(img), crc);
	/* The whole disk itself opens writable as before. */
	ck_assert_int_eq(rk_member_open(&d, img, RK_DEV_RDWR), RK_OK);
	ck_assert_str_eq(rk_dev_backend(d), "file");
	rk_dev_close(d);
}
END_TEST

/* A table entry past the end of a truncated image is never served (either
 * libblkid drops it or the open refuses it with a sentence); the other
 * partitions still open. */
START_TEST(past_end)
{
	if (!have_sfdisk())
		return;
	const char *img = make_mbr();
	/* 8 MiB disk cut to 5 MiB: the extended partition (3 to 7 MiB) and
	 * logical p6 (6 to 7 MiB) now run past the end. */
	ck_assert_int_eq(truncate(img, 5u * RK_TEST_MIB), 0);
	char name[512];
	rk_dev *d = NULL;
	snprintf(name, sizeof name, "%s:p6", img);
	rk_err e = rk_member_open(&d, name, RK_DEV_RDONLY);
	ck_assert_int_ne(e, RK_OK);
	ck_assert_ptr_null(d);
	ck_assert_ptr_nonnull(strstr(rk_errmsg(), name));
	ck_assert_ptr_nonnull(strstr(rk_errmsg(), "past the end"));
	struct rk_part_table t;
	ck_assert_int_eq(rk_part_table_read(img, &t), RK_OK);
	for (uint32_t i = 0; i < t.n; i++)
		if (t.parts[i].number == 6) {
			/* listed: the open said why */
			ck_assert_int_eq(e, RK_E_RANGE);
			ck_assert_ptr_nonnull(strstr(t.parts[i].problem, "runs past the end"));
			ck_assert_ptr_nonnull(strstr(rk_errmsg(), "runs past the end"));
		}
	rk_part_table_free(&t);
	snprintf(name, sizeof name, "%s:p1", img);
	ck_assert_int_eq(rk_member_open(&d, name, RK_DEV_RDONLY), RK_OK);
	ck_assert_uint_eq(rk_dev_size(d), 2u * RK_TEST_MIB);
	rk_dev_close(d);

	/* GPT with the last partition cut in half: refused with a sentence
	 * (the primary table still speaks for the disk). */
	img = make_gpt();
	ck_assert_int_eq(truncate(img, G_P3 + G_P3_SIZE / 2), 0);
	snprintf(name, sizeof name, "%s:p3", img);
	e = rk_member_open(&d, name, RK_DEV_RDONLY);
	ck_assert_int_ne(e, RK_OK);
	ck_assert_ptr_null(d);
	ck_assert_ptr_nonnull(strstr(rk_errmsg(), name));
}
END_TEST

/* A hostile table (written by hand, not by sfdisk): an MBR entry whose
 * end lies far past the disk is refused, its sentence naming the bytes. */
START_TEST(hostile_mbr)
{
	const char *img = rk_test_path("hostile.img");
	uint8_t mbr[512];
	memset(mbr, 0, sizeof mbr);
	/* entry 1: type 0x83, start 2048, 16384 sectors (8 MiB) on a 2 MiB disk */
	uint8_t *e1 = mbr + 446;
	e1[4] = 0x83;
	e1[8] = 0x00; e1[9] = 0x08;                 /* LBA 2048, little-endian */
	e1[12] = 0x00; e1[13] = 0x40;               /* 16384 sectors */
	/* entry 2: type 0x83, start 0xffffff00 sectors, size 0xffffffff */
	uint8_t *e2 = mbr + 462;
	e2[4] = 0x83;
	memset(e2 + 8, 0xff, 8);
	e2[8] = 0x00;
	mbr[510] = 0x55;
	mbr[511] = 0xaa;
	rk_test_make_file(img, 2u * RK_TEST_MIB);
	rk_test_write_at(img, mbr, sizeof mbr, 0);
	char name[512];
	rk_dev *d = NULL;
	for (unsigned k = 1; k <= 2; k++) {
		snprintf(name, sizeof name, "%s:p%u", img, k);
		ck_assert_int_eq(rk_member_open(&d, name, RK_DEV_RDONLY), RK_E_RANGE);
		ck_assert_ptr_null(d);
		ck_assert_ptr_nonnull(strstr(rk_errmsg(), name));
		ck_assert_ptr_nonnull(strstr(rk_errmsg(), "runs past the end of"));
	}
	ck_assert_ptr_nonnull(strstr(rk_errmsg(), "(bytes 2199023124480 to 4398046379520)"));
	/* Listed all the same: discovery then reports why each is refused. */
	char **names = NULL;
	uint32_t n = 0;
	ck_assert_int_eq(rk_part_list(img, &names, &n), RK_OK);
	check_names(names, n, img, (const unsigned[]){ 1, 2, 0 });
	rk_part_list_free(names, n);
}
END_TEST

/* Identities: two partitions of one image differ from each other and from
 * the image; the same partition named twice is the same. */
START_TEST(identity)
{
	if (!have_sfdisk())
		return;
	const char *img = make_gpt();
	char n1[512], n3[512];
	snprintf(n1, sizeof n1, "%s:p1", img);
	snprintf(n3, sizeof n3, "%s:p3", img);
	rk_dev *a, *b, *c, *w;
	ck_assert_int_eq(rk_member_open(&a, n1, RK_DEV_RDONLY), RK_OK);
	ck_assert_int_eq(rk_member_open(&b, n3, RK_DEV_RDONLY), RK_OK);
	ck_assert_int_eq(rk_member_open(&c, n3, RK_DEV_RDONLY), RK_OK);
	ck_assert_int_eq(rk_member_open(&w, img, RK_DEV_RDONLY), RK_OK);
	dev_t da, db, dc, dw;
	ino_t ia, ib, ic, iw;
	ck_assert_int_eq(rk_dev_identity(a, &da, &ia), 1);
	ck_assert_int_eq(rk_dev_identity(b, &db, &ib), 1);
	ck_assert_int_eq(rk_dev_identity(c, &dc, &ic), 1);
	ck_assert_int_eq(rk_dev_identity(w, &dw, &iw), 1);
	ck_assert(!(da == db && ia == ib));
	ck_assert(db == dc && ib == ic);
	ck_assert(!(da == dw && ia == iw));
	ck_assert(!(db == dw && ib == iw));
	/* A copy of the image: its partitions are other objects. */
	const char *cp = rk_test_path("copy.img");
	rk_test_copy_file(img, cp);
	char n3c[512];
	snprintf(n3c, sizeof n3c, "%s:p3", cp);
	rk_dev *e;
	ck_assert_int_eq(rk_member_open(&e, n3c, RK_DEV_RDONLY), RK_OK);
	dev_t de;
	ino_t ie;
	ck_assert_int_eq(rk_dev_identity(e, &de, &ie), 1);
	ck_assert(!(de == db && ie == ib));
	rk_dev_close(e);
	rk_dev_close(a);
	rk_dev_close(b);
	rk_dev_close(c);
	rk_dev_close(w);
}
END_TEST

/* Names: what is PATH:pN. */
START_TEST(name_forms)
{
	char path[64];
	uint32_t no = 0;
	ck_assert_int_eq(rk_part_name_parse("disk.img:p3", path, sizeof path, &no), 1);
	ck_assert_str_eq(path, "disk.img");
	ck_assert_uint_eq(no, 3);
	ck_assert_int_eq(rk_part_name_parse("a:b:p12", path, sizeof path, &no), 1);
	ck_assert_str_eq(path, "a:b");
	ck_assert_uint_eq(no, 12);
	const char *bad[] = { "disk.img", "disk.img:p", "disk.img:p0", "disk.img:p03", ":p1",
	                      "disk.img:3", "disk.img:p3x", "disk.img:p99999999999", NULL };
	for (int i = 0; bad[i]; i++)
		RK_REQUIRE_MSG(rk_part_name_parse(bad[i], path, sizeof path, &no) == 0, "%s parsed", bad[i]);
	ck_assert_int_eq(rk_part_name_parse("a-rather-long-path-name-here.img:p1", path, 8, &no), 0);
}
END_TEST

/* What exists is a path; what lacks a table or a partition is refused
 * with a sentence. */
START_TEST(name_open)
{
	/* A plain file: no partitions, and NAME:p1 is refused saying so. */
	const char *plain = rk_test_path("plain.img");
	rk_test_make_file(plain, RK_TEST_MIB);
	char **names = NULL;
	uint32_t n = 7;
	ck_assert_int_eq(rk_part_list(plain, &names, &n), RK_OK);
	ck_assert_uint_eq(n, 0);
	ck_assert_ptr_null(names);
	char name[512];
	snprintf(name, sizeof name, "%s:p1", plain);
	rk_dev *d = NULL;
	ck_assert_int_eq(rk_member_open(&d, name, RK_DEV_RDONLY), RK_E_OPEN);
	ck_assert_ptr_nonnull(strstr(rk_errmsg(), "holds no partition table libblkid recognises"));
	/* A file whose own name looks like a partition is that file. */
	snprintf(name, sizeof name, "%s:p1", rk_test_path("odd"));
	rk_test_make_file(name, 4096);
	ck_assert_int_eq(rk_member_open(&d, name, RK_DEV_RDONLY), RK_OK);
	ck_assert_str_eq(rk_dev_backend(d), "file");
	rk_dev_close(d);
	/* Neither the name nor its disk exists: the open's own message. */
	ck_assert_int_eq(rk_member_open(&d, rk_test_path("none.img:p1"), RK_DEV_RDONLY), RK_E_OPEN);
	ck_assert_ptr_nonnull(strstr(rk_errmsg(), "none.img:p1"));
	ck_assert_int_eq(rk_part_list(rk_test_path("none.img"), &names, &n), RK_OK);
	ck_assert_uint_eq(n, 0);
	if (!have_sfdisk())
		return;
	const char *img = make_gpt();
	snprintf(name, sizeof name, "%s:p4", img);
	ck_assert_int_eq(rk_member_open(&d, name, RK_DEV_RDONLY), RK_E_OPEN);
	ck_assert_ptr_nonnull(strstr(rk_errmsg(), "has no partition 4 (it has 1, 2, 3;"));
	char *pp = NULL;
	uint64_t off = 0, size = 0;
	ck_assert_int_eq(rk_part_locate(name, &pp, &off, &size), 0);
	snprintf(name, sizeof name, "%s:p2", img);
	ck_assert_int_eq(rk_part_locate(name, &pp, &off, &size), 1);
	ck_assert_str_eq(pp, img);
	ck_assert_uint_eq(off, G_P2);
	ck_assert_uint_eq(size, G_P2_SIZE);
	free(pp);
	ck_assert_int_eq(rk_part_locate(img, &pp, &off, &size), 0);
}
END_TEST

/* The slice backend on its own: a window of a memory device, bounds and
 * overflow refused, a parent kept or owned. */
START_TEST(slice_backend)
{
	rk_dev *m = NULL, *s = NULL;
	ck_assert_int_eq(rk_dev_mem(&m, "mem", 65536), RK_OK);
	uint8_t *data = rk_dev_mem_data(m);
	for (uint32_t i = 0; i < 65536; i++)
		data[i] = (uint8_t)(i * 7 + (i >> 8));
	ck_assert_int_eq(rk_dev_slice(&s, m, 4096, 8192, "mem:p1", 0), RK_OK);
	ck_assert_uint_eq(rk_dev_size(s), 8192);
	ck_assert_uint_eq(rk_dev_sector(s), rk_dev_sector(m));
	uint8_t buf[8192];
	ck_assert_int_eq(rk_dev_pread(s, buf, sizeof buf, 0), RK_OK);
	ck_assert_mem_eq(buf, data + 4096, sizeof buf);
	ck_assert_int_eq(rk_dev_pread(s, buf, 1, 8192), RK_E_RANGE);
	ck_assert_int_eq(rk_dev_pread(s, buf, 16, UINT64_MAX - 8), RK_E_RANGE);
	ck_assert_int_eq(rk_dev_pwrite(s, buf, 1, 0), RK_E_READONLY);
	rk_dev_close(s);   /* not owned: the parent lives on */
	ck_assert_int_eq(rk_dev_pread(m, buf, 16, 0), RK_OK);
	/* Windows past the parent's end, or overflowing, are refused. */
	ck_assert_int_eq(rk_dev_slice(&s, m, 65536 - 100, 101, "x", 0), RK_E_RANGE);
	ck_assert_ptr_null(s);
	ck_assert_ptr_nonnull(strstr(rk_errmsg(), "past the end of mem"));
	ck_assert_int_eq(rk_dev_slice(&s, m, UINT64_MAX - 10, 20, "x", 0), RK_E_RANGE);
	ck_assert_int_eq(rk_dev_slice(&s, m, 65536, 0, "x", 0), RK_OK);
	ck_assert_uint_eq(rk_dev_size(s), 0);
	rk_dev_close(s);
	/* Owned: closing the slice closes the parent (ASan would see a leak). */
	ck_assert_int_eq(rk_dev_slice(&s, m, 0, 512, NULL, 1), RK_OK);
	ck_assert_str_eq(rk_dev_path(s), "mem");
	rk_dev_close(s);
	/* Owned and refused: the parent is closed too. */
	ck_assert_int_eq(rk_dev_mem(&m, "mem2", 4096), RK_OK);
	ck_assert_int_eq(rk_dev_slice(&s, m, 0, 8192, "y", 1), RK_E_RANGE);
}
END_TEST

/* libblkid's probes look into a partition by its name: a swap area made
 * in p2 is found there, not on p1 or the whole disk (the GPT). */
START_TEST(probe_partition)
{
	if (!have_sfdisk())
		return;
	if (sh("command -v mkswap >/dev/null 2>&1") != 0) {
		printf("SKIP: mkswap not installed\n");
		return;
	}
	const char *img = make_gpt();
	char cmd[1024], name[512];
	const char *sw = rk_test_path("swap");
	rk_test_make_file(sw, G_P2_SIZE);
	snprintf(cmd, sizeof cmd, "mkswap '%s' >/dev/null 2>&1 && dd if='%s' of='%s' bs=512 seek=%u "
	         "conv=notrunc status=none", sw, sw, img, G_P2 / 512u);
	ck_assert_int_eq(sh(cmd), 0);
	struct rk_probe_result r;
	snprintf(name, sizeof name, "%s:p2", img);
	ck_assert_int_eq(rk_probe_path(name, &r), RK_OK);
	ck_assert_int_eq(r.found, 1);
	ck_assert_str_eq(r.type, "swap");
	ck_assert_int_eq(rk_probe_foreign(name, &r), RK_OK);
	ck_assert_str_eq(r.type, "swap");
	snprintf(name, sizeof name, "%s:p1", img);
	ck_assert_int_eq(rk_probe_path(name, &r), RK_OK);
	ck_assert_int_eq(r.found, 0);
	ck_assert_int_eq(rk_probe_path(img, &r), RK_OK);
	ck_assert_str_eq(r.type, "gpt");
	snprintf(name, sizeof name, "%s:p9", img);
	ck_assert_int_ne(rk_probe_path(name, &r), RK_OK);
}
END_TEST

/* rk_part_list lists the table whatever else the path carries (a raidkit
 * member with an MBR left in its first sector): deciding which counts is
 * discovery's; the partition stays reachable by name. */
START_TEST(table_on_member)
{
	if (!have_sfdisk())
		return;
	rk_test_create(1, RK_CREATE_LAYOUT_DEFAULT, 0, 2, 4u * RK_TEST_MIB, NULL);
	const char *m0 = rk_test_members()[0];
	const char *img = make_mbr();
	size_t len = 0;
	uint8_t *disk = rk_test_slurp(img, &len);
	rk_test_write_at(m0, disk, 512, 0);
	free(disk);
	char **names = NULL;
	uint32_t n = 0;
	ck_assert_int_eq(rk_part_list(m0, &names, &n), RK_OK);
	check_names(names, n, m0, (const unsigned[]){ 1, 0 });   /* the logical ones lie past its 4 MiB */
	rk_part_list_free(names, n);
	char name[512];
	snprintf(name, sizeof name, "%s:p1", m0);
	rk_dev *d = NULL;
	ck_assert_int_eq(rk_member_open(&d, name, RK_DEV_RDONLY), RK_OK);
	ck_assert_uint_eq(rk_dev_size(d), 2u * RK_TEST_MIB);
	rk_dev_close(d);
	/* the member itself still reads as before */
	struct rk_sb *sb = rk_test_read_sb_path(m0);
	ck_assert_ptr_nonnull(sb);
	free(sb);
}
END_TEST

RK_TEST_SUITE("part", { "part", 0, rk_test_tmpdir_make, rk_test_tmpdir_remove, 0,
	  RK_TESTS(RK_TEST(gpt_list), RK_TEST(mbr_logical), RK_TEST(open_bytes), RK_TEST(refuse_writable),
	           RK_TEST(past_end), RK_TEST(hostile_mbr), RK_TEST(identity), RK_TEST(name_forms), RK_TEST(name_open), RK_TEST(probe_partition), RK_TEST(table_on_member),
	           RK_TEST(slice_backend)) })
