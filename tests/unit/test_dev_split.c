/* test_dev_split.c: split raw images (engine/dev_split.c, spec/images.md):
 * the naming rules, reads across segment boundaries, gaps, writes refused,
 * later segments, identity, and names that only look like segments. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rk_dev.h"
#include "helpers/rk_test.h"

/* Segments NAME+suffix[i] of SIZES[i] bytes cut from one seeded image;
 * returns the image (free() it). */
static uint8_t *make_set(const char *name, const char *const *suf, const size_t *sizes, int n, uint64_t seed)
{
	size_t total = 0;
	for (int i = 0; i < n; i++)
		total += sizes[i];
	uint8_t *img = rk_test_random_bytes(total ? total : 1, seed);
	size_t at = 0;
	for (int i = 0; i < n; i++) {
		char p[256];
		snprintf(p, sizeof p, "%s%s", name, suf[i]);
		rk_test_spit(rk_test_path(p), img + at, sizes[i]);
		at += sizes[i];
	}
	return img;
}

/* Every read of D, at random places and lengths, equals IMG. */
static void reads_match(rk_dev *d, const uint8_t *img, uint64_t size)
{
	uint8_t buf[8192];
	rk_test_rnd_seed(5);
	for (int k = 0; k < 300; k++) {
		uint64_t off = rk_test_rnd_below(size);
		size_t len = (size_t)rk_test_rnd_below(sizeof buf) + 1;
		if (len > size - off)
			len = (size_t)(size - off);
		ck_assert_int_eq(rk_dev_pread(d, buf, len, off), RK_OK);
		ck_assert_mem_eq(buf, img + off, len);
	}
	uint8_t *all = malloc(size);
	ck_assert_ptr_nonnull(all);
	ck_assert_int_eq(rk_dev_pread(d, all, (size_t)size, 0), RK_OK);
	ck_assert_mem_eq(all, img, size);
	free(all);
	ck_assert_int_eq(rk_dev_pread(d, buf, 1, size), RK_E_RANGE);
}

/* NAME.001 ... of unequal sizes (an empty one in the middle): one device,
 * the first segment's path and identity, reads across every boundary. */
START_TEST(numeric_set)
{
	const char *suf[] = { ".001", ".002", ".003", ".004" };
	const size_t sizes[] = { 1000, 1536, 0, 700 };
	uint8_t *img = make_set("s", suf, sizes, 4, 1);
	rk_dev *d;
	ck_assert_int_eq(rk_dev_open(&d, rk_test_path("s.001"), RK_DEV_RDONLY), RK_OK);
	ck_assert_str_eq(rk_dev_backend(d), "split");
	ck_assert_str_eq(rk_dev_path(d), rk_test_path("s.001"));
	ck_assert_uint_eq(rk_dev_size(d), 3236);
	ck_assert_uint_eq(rk_dev_sector(d), 512);
	ck_assert_int_eq(rk_dev_writable(d), 0);
	ck_assert_uint_eq(rk_dev_segments(d), 4);
	ck_assert_str_eq(rk_dev_segment_path(d, 3), rk_test_path("s.004"));
	ck_assert_ptr_null(rk_dev_segment_path(d, 4));
	struct stat st;
	dev_t dn;
	ino_t ino;
	ck_assert_int_eq(stat(rk_test_path("s.001"), &st), 0);
	ck_assert_int_eq(rk_dev_identity(d, &dn, &ino), 1);
	ck_assert(dn == st.st_dev && ino == st.st_ino);
	reads_match(d, img, 3236);
	ck_assert_int_eq(rk_dev_pwrite(d, img, 1, 0), RK_E_READONLY);
	rk_dev_close(d);
	free(img);
}
END_TEST

/* .000 starts a set; four digits; letters (split's default) of two and
 * three; each opens from its first segment with the sizes summed. */
START_TEST(other_series)
{
	static const struct { const char *name, *suf[3]; } sets[] = {
		{ "z", { ".000", ".001", ".002" } },
		{ "f", { ".0001", ".0002", ".0003" } },
		{ "a", { ".aa", ".ab", ".ac" } },
		{ "b", { ".aaa", ".aab", ".aac" } },
	};
	const size_t sizes[] = { 4096, 4096, 100 };
	for (int i = 0; i < 4; i++) {
		uint8_t *img = make_set(sets[i].name, sets[i].suf, sizes, 3, 10 + (uint64_t)i);
		char first[64];
		snprintf(first, sizeof first, "%s%s", sets[i].name, sets[i].suf[0]);
		rk_dev *d;
		ck_assert_int_eq(rk_dev_open(&d, rk_test_path(first), RK_DEV_RDONLY), RK_OK);
		ck_assert_str_eq(rk_dev_backend(d), "split");
		ck_assert_uint_eq(rk_dev_size(d), 8292);
		reads_match(d, img, 8292);
		rk_dev_close(d);
		free(img);
	}
}
END_TEST

/* A later segment alone is refused naming the first; rk_dev_segment_of
 * and rk_dev_segment_given say what the folding needs. */
START_TEST(later_segment)
{
	const char *suf[] = { ".001", ".002", ".003" };
	const size_t sizes[] = { 512, 512, 512 };
	free(make_set("l", suf, sizes, 3, 2));
	rk_dev *d;
	char first[4096], want[4096];
	uint32_t n = 0;
	ck_assert_int_eq(rk_dev_open(&d, rk_test_path("l.003"), RK_DEV_RDONLY), RK_E_OPEN);
	snprintf(want, sizeof want, "segment 3 of a split raw image: give its first segment %s", rk_test_path("l.001"));
	ck_assert_ptr_nonnull(strstr(rk_errmsg(), want));
	ck_assert_int_eq(rk_dev_segment_of(rk_test_path("l.002"), first, sizeof first, &n), 1);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(first, rk_test_path("l.001"));
	ck_assert_int_eq(rk_dev_segment_of(rk_test_path("l.001"), first, sizeof first, &n), 0);
	char p0[4096], p1[4096], p2[4096];
	snprintf(p0, sizeof p0, "%s", rk_test_path("l.002"));
	snprintf(p1, sizeof p1, "%s", rk_test_path("l.001"));
	snprintf(p2, sizeof p2, "%s", rk_test_path("l.003"));
	char *const given[] = { p0, p1, p2 };
	ck_assert_int_eq(rk_dev_segment_given(given, 3, 0), 1);
	ck_assert_int_eq(rk_dev_segment_given(given, 3, 1), 0);
	ck_assert_int_eq(rk_dev_segment_given(given, 3, 2), 1);
	ck_assert_int_eq(rk_dev_segment_given(given, 1, 0), 0);   /* its first not given */
}
END_TEST

/* A segment missing in the middle: an error naming it; a first segment
 * missing: the later ones are refused saying so. */
START_TEST(gaps)
{
	const char *suf[] = { ".001", ".002", ".004", ".005" };
	const size_t sizes[] = { 512, 512, 512, 512 };
	free(make_set("g", suf, sizes, 4, 3));
	rk_dev *d;
	ck_assert_int_eq(rk_dev_open(&d, rk_test_path("g.001"), RK_DEV_RDONLY), RK_E_CORRUPT);
	ck_assert_ptr_nonnull(strstr(rk_errmsg(), "g.003"));
	ck_assert_ptr_nonnull(strstr(rk_errmsg(), "missing"));
	const char *suf2[] = { ".ab", ".ac" };
	free(make_set("h", suf2, sizes, 2, 4));
	/* no h.aa: h.ab is an ordinary file */
	ck_assert_int_eq(rk_dev_open(&d, rk_test_path("h.ab"), RK_DEV_RDONLY), RK_OK);
	ck_assert_str_eq(rk_dev_backend(d), "file");
	rk_dev_close(d);
	ck_assert_int_eq(unlink(rk_test_path("g.001")), 0);
	ck_assert_int_eq(rk_dev_open(&d, rk_test_path("g.002"), RK_DEV_RDONLY), RK_OK);
	ck_assert_str_eq(rk_dev_backend(d), "file");   /* no g.001 nor g.000: not a set */
	rk_dev_close(d);
}
END_TEST

/* Writing opens are refused with the sentence, on first and later segments. */
START_TEST(write_refused)
{
	const char *suf[] = { ".001", ".002" };
	const size_t sizes[] = { 1024, 1024 };
	free(make_set("w", suf, sizes, 2, 5));
	uint32_t crc = rk_test_file_crc(rk_test_path("w.001"));
	rk_dev *d;
	char want[4096];
	ck_assert_int_eq(rk_dev_open(&d, rk_test_path("w.001"), RK_DEV_RDWR), RK_E_NOTSUP);
	snprintf(want, sizeof want, "%s is a split raw image: raidkit reads it but never writes to it",
	         rk_test_path("w.001"));
	ck_assert_str_eq(rk_errmsg(), want);
	ck_assert_int_eq(rk_dev_open(&d, rk_test_path("w.002"), RK_DEV_RDWR), RK_E_NOTSUP);
	ck_assert_int_eq(rk_dev_open(&d, rk_test_path("w.001"), RK_DEV_RDWR | RK_DEV_CREATE), RK_E_NOTSUP);
	ck_assert_uint_eq(rk_test_file_crc(rk_test_path("w.001")), crc);
}
END_TEST

/* Names that only look like segments stay ordinary files: a lone x.001,
 * two digits, mixed suffixes, capitals, a dot first, an extension word
 * whose letters would be a suffix, a suffix too long. */
START_TEST(hostile_names)
{
	static const char *const lone[] = {
		"x.001", "y.01", "y.02", "c.00a", "c.00b", "C.AA", "C.AB", ".001", ".002", "disk.img",
		"disk.imh", "n.0000000001", "n.0000000002", "k.a", "k.b",
	};
	uint8_t b[512];
	memset(b, 7, sizeof b);
	for (size_t i = 0; i < sizeof lone / sizeof lone[0]; i++)
		rk_test_spit(rk_test_path(lone[i]), b, sizeof b);
	for (size_t i = 0; i < sizeof lone / sizeof lone[0]; i++) {
		rk_dev *d;
		ck_assert_msg(rk_dev_open(&d, rk_test_path(lone[i]), RK_DEV_RDONLY) == RK_OK, "%s", lone[i]);
		ck_assert_msg(!strcmp(rk_dev_backend(d), "file"), "%s: %s", lone[i], rk_dev_backend(d));
		ck_assert_uint_eq(rk_dev_size(d), 512);
		rk_dev_close(d);
	}
	/* a lone x.001 stays writable */
	rk_dev *w;
	ck_assert_int_eq(rk_dev_open(&w, rk_test_path("x.001"), RK_DEV_RDWR), RK_OK);
	rk_dev_close(w);
	/* a folder named like a segment is no segment: the set stops before it */
	const char *suf[] = { ".001", ".002" };
	const size_t sizes[] = { 512, 512 };
	free(make_set("q", suf, sizes, 2, 6));
	ck_assert_int_eq(mkdir(rk_test_path("q.003"), 0700), 0);
	rk_dev *d;
	ck_assert_int_eq(rk_dev_open(&d, rk_test_path("q.001"), RK_DEV_RDONLY), RK_E_OPEN);
	ck_assert_ptr_nonnull(strstr(rk_errmsg(), "q.003"));
}
END_TEST

/* A segment that shrinks after the open: a read error naming it, no crash. */
START_TEST(shrunk_segment)
{
	const char *suf[] = { ".001", ".002" };
	const size_t sizes[] = { 4096, 4096 };
	free(make_set("r", suf, sizes, 2, 7));
	rk_dev *d;
	uint8_t b[1024];
	ck_assert_int_eq(rk_dev_open(&d, rk_test_path("r.001"), RK_DEV_RDONLY), RK_OK);
	ck_assert_int_eq(truncate(rk_test_path("r.002"), 100), 0);
	rk_err e = rk_dev_pread(d, b, sizeof b, 6000);
	ck_assert(e == RK_E_RANGE || e == RK_E_IO);
	ck_assert_ptr_nonnull(strstr(rk_errmsg(), "r.002"));
	ck_assert_int_eq(rk_dev_pread(d, b, sizeof b, 0), RK_OK);
	rk_dev_close(d);
}
END_TEST

RK_TEST_SUITE("dev_split", { "split", 0, rk_test_tmpdir_make, rk_test_tmpdir_remove, 0,
	  RK_TESTS(RK_TEST(numeric_set), RK_TEST(other_series), RK_TEST(later_segment), RK_TEST(gaps),
	           RK_TEST(write_refused), RK_TEST(hostile_names), RK_TEST(shrunk_segment)) })
