/* test_dev_ewf.c: E01 images (engine/dev_ewf.c, spec/images.md), made at
 * test time with ewfacquire (ewf-tools): a set of several segments reads
 * as its media (also from several threads), the stored MD5 verifies,
 * writes are refused, and truncated, corrupt or incomplete images are
 * refused with a sentence naming the file, never a crash. */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rk_dev.h"
#include "helpers/rk_test.h"

#define RAW (3u * RK_TEST_MIB + 64 * 1024)

static int have_ewfacquire(void)
{
	if (system("command -v ewfacquire >/dev/null 2>&1") == 0)
		return 1;
	printf("SKIP: ewfacquire (ewf-tools) not installed\n");
	return 0;
}

/* TARGET.E01 ... made by ewfacquire from RAW seeded bytes in segments of
 * SEG bytes (0: one segment); returns the raw bytes (free() them). */
static uint8_t *make_e01(const char *target, unsigned seg, uint64_t seed)
{
	uint8_t *raw = rk_test_random_bytes(RAW, seed);
	/* compressible halves: the chunks differ in size, as in real images */
	memset(raw + RAW / 2, 0, RAW / 4);
	char src[4096], cmd[9000], tg[4096];
	snprintf(src, sizeof src, "%s", rk_test_path("src.raw"));
	snprintf(tg, sizeof tg, "%s", rk_test_path(target));
	rk_test_spit(src, raw, RAW);
	char segopt[32] = "";
	if (seg)
		snprintf(segopt, sizeof segopt, "-S %u", seg);
	snprintf(cmd, sizeof cmd, "ewfacquire -u -q -t '%s' -c fast %s -C case-7 -e examiner-a '%s' >/dev/null 2>&1",
	         tg, segopt, src);
	ck_assert_int_eq(system(cmd), 0);
	unlink(src);
	return raw;
}

static const char *seg_path(const char *target, int n)
{
	char name[256];
	snprintf(name, sizeof name, "%s.E%02d", target, n);
	return rk_test_path(name);
}

struct reader {
	rk_dev *d;
	const uint8_t *raw;
	uint64_t seed;
	int bad;
};

/* Random reads of one thread, compared with the raw bytes. */
static void *read_many(void *arg)
{
	struct reader *r = arg;
	static __thread uint8_t buf[200000];
	uint64_t x = r->seed;
	for (int k = 0; k < 200; k++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		uint64_t off = (x >> 11) % RAW;
		size_t len = (size_t)((x >> 40) % sizeof buf) + 1;
		if (len > RAW - off)
			len = (size_t)(RAW - off);
		if (rk_dev_pread(r->d, buf, len, off) != RK_OK || memcmp(buf, r->raw + off, len) != 0)
			r->bad++;
	}
	return NULL;
}

/* Several segments: one device of the media's size, named and identified
 * by its first segment, reading the raw bytes, from four threads at once. */
START_TEST(ewf_segments_read)
{
	if (!have_ewfacquire())
		return;
	uint8_t *raw = make_e01("img", 1048576, 1);
	rk_dev *d;
	ck_assert_int_eq(rk_dev_open(&d, seg_path("img", 1), RK_DEV_RDONLY), RK_OK);
	ck_assert_str_eq(rk_dev_backend(d), "ewf");
	ck_assert_str_eq(rk_dev_path(d), seg_path("img", 1));
	ck_assert_uint_eq(rk_dev_size(d), RAW);
	ck_assert_uint_eq(rk_dev_sector(d), 512);
	ck_assert_uint_ge(rk_dev_segments(d), 3);
	ck_assert_str_eq(rk_dev_segment_path(d, 1), seg_path("img", 2));
	struct stat st;
	dev_t dn;
	ino_t ino;
	ck_assert_int_eq(stat(seg_path("img", 1), &st), 0);
	ck_assert_int_eq(rk_dev_identity(d, &dn, &ino), 1);
	ck_assert(dn == st.st_dev && ino == st.st_ino);
	struct reader r[4];
	pthread_t t[4];
	for (int i = 0; i < 4; i++) {
		r[i] = (struct reader){ d, raw, 1000 + (uint64_t)i, 0 };
		ck_assert_int_eq(pthread_create(&t[i], NULL, read_many, &r[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		ck_assert_int_eq(r[i].bad, 0);
	}
	uint8_t b[16];
	ck_assert_int_eq(rk_dev_pread(d, b, 1, RAW), RK_E_RANGE);
	ck_assert_int_eq(rk_dev_pwrite(d, b, 1, 0), RK_E_READONLY);
	rk_dev_close(d);
	free(raw);
}
END_TEST

/* What libewf says, and the stored MD5 verified against the media. */
START_TEST(ewf_info_verify)
{
	if (!have_ewfacquire())
		return;
	free(make_e01("one", 0, 2));
	rk_dev *d;
	ck_assert_int_eq(rk_dev_open(&d, seg_path("one", 1), RK_DEV_RDONLY), RK_OK);
	struct rk_ewf_info info;
	ck_assert_int_eq(rk_dev_ewf_info(d, &info), RK_OK);
	ck_assert_uint_eq(info.segments, 1);
	ck_assert_uint_eq(info.media_size, RAW);
	ck_assert_uint_eq(info.bytes_per_sector, 512);
	ck_assert_int_eq(info.has_md5, 1);
	ck_assert_str_eq(info.case_number, "case-7");
	ck_assert_str_eq(info.examiner, "examiner-a");
	ck_assert_str_eq(info.format, "EnCase 6");
	struct rk_ewf_verify v;
	ck_assert_int_eq(rk_dev_ewf_verify(d, &v, NULL, NULL), RK_OK);
	ck_assert_int_eq(v.md5_stored, 1);
	ck_assert_int_eq(v.md5_match, 1);
	ck_assert_str_eq(v.md5, v.md5_stored_hex);
	rk_dev_close(d);
	/* not an E01: refused */
	rk_test_spit(rk_test_path("plain.img"), "x", 1);
	ck_assert_int_eq(rk_dev_open(&d, rk_test_path("plain.img"), RK_DEV_RDONLY), RK_OK);
	ck_assert_int_eq(rk_dev_ewf_info(d, &info), RK_E_INVAL);
	ck_assert_int_eq(rk_dev_ewf_verify(d, &v, NULL, NULL), RK_E_INVAL);
	rk_dev_close(d);
}
END_TEST

/* Writing opens refused with the sentence; a later segment alone refused
 * naming the first; a renamed single-segment image still opens. */
START_TEST(ewf_refusals)
{
	if (!have_ewfacquire())
		return;
	free(make_e01("w", 1048576, 3));
	uint32_t crc = rk_test_file_crc(seg_path("w", 1));
	rk_dev *d;
	char want[4096];
	ck_assert_int_eq(rk_dev_open(&d, seg_path("w", 1), RK_DEV_RDWR), RK_E_NOTSUP);
	snprintf(want, sizeof want, "%s is an E01 image: raidkit reads it but never writes to it", seg_path("w", 1));
	ck_assert_str_eq(rk_errmsg(), want);
	ck_assert_int_eq(rk_dev_open(&d, seg_path("w", 2), RK_DEV_RDONLY), RK_E_OPEN);
	snprintf(want, sizeof want, "segment 2 of an E01 image: give its first segment %s", seg_path("w", 1));
	ck_assert_ptr_nonnull(strstr(rk_errmsg(), want));
	ck_assert_uint_eq(rk_test_file_crc(seg_path("w", 1)), crc);
	/* the first segment of a set linked under another base name: no
	 * further segment found, and the sentence says where it looked */
	ck_assert_int_eq(symlink(seg_path("w", 1), rk_test_path("evidence.E01")), 0);
	ck_assert_int_eq(rk_dev_open(&d, rk_test_path("evidence.E01"), RK_DEV_RDONLY), RK_E_CORRUPT);
	snprintf(want, sizeof want, "segment 2 is missing; looked for as %s next to the name given",
	         rk_test_path("evidence.E02"));
	ck_assert_msg(strstr(rk_errmsg(), want), "%s", rk_errmsg());
	free(make_e01("s", 0, 4));
	ck_assert_int_eq(rename(seg_path("s", 1), rk_test_path("renamed.img")), 0);
	ck_assert_int_eq(rk_dev_open(&d, rk_test_path("renamed.img"), RK_DEV_RDONLY), RK_OK);
	ck_assert_uint_eq(rk_dev_size(d), RAW);
	rk_dev_close(d);
}
END_TEST

/* Opens PATH expecting a refusal or reads failing cleanly: returns the
 * open's error, RK_E_IO when a read failed, RK_OK when all read; no crash,
 * and a message naming NAME. */
static rk_err open_hostile(const char *path, const char *name)
{
	rk_dev *d = NULL;
	rk_err e = rk_dev_open(&d, path, RK_DEV_RDONLY);
	if (e) {
		ck_assert_msg(e == RK_E_CORRUPT || e == RK_E_IO || e == RK_E_OPEN, "%s: %d %s", path, e, rk_errmsg());
		ck_assert_msg(strstr(rk_errmsg(), name) != NULL, "message does not name %s: %s", name, rk_errmsg());
		return e;
	}
	uint8_t *b = malloc(65536);
	ck_assert_ptr_nonnull(b);
	for (uint64_t off = 0; off < rk_dev_size(d); off += 65536) {
		uint64_t n = rk_dev_size(d) - off < 65536 ? rk_dev_size(d) - off : 65536;
		rk_err r = rk_dev_pread(d, b, (size_t)n, off);
		if (r) {
			ck_assert_int_eq(r, RK_E_IO);
			ck_assert_msg(strstr(rk_errmsg(), name) != NULL, "message does not name %s: %s", name, rk_errmsg());
			e = r;
			break;
		}
	}
	free(b);
	rk_dev_close(d);
	return e;
}

/* Truncated first and last segments, a segment missing, junk behind the
 * signature, a flipped byte in the compressed data: each refused (or read
 * errors) with a message naming the image, never a crash. */
START_TEST(ewf_hostile)
{
	if (!have_ewfacquire())
		return;
	uint8_t *raw = make_e01("h", 1048576, 5);
	size_t len;
	uint8_t *first = rk_test_slurp(seg_path("h", 1), &len);
	/* first segment cut inside its header */
	rk_test_spit(rk_test_path("t1.E01"), first, 50);
	ck_assert_int_eq(open_hostile(rk_test_path("t1.E01"), "t1.E01"), RK_E_CORRUPT);
	/* first segment cut in half (a single-segment image) */
	rk_test_spit(rk_test_path("t2.E01"), first, len / 2);
	ck_assert_int_eq(open_hostile(rk_test_path("t2.E01"), "t2.E01"), RK_E_CORRUPT);
	/* the signature then junk */
	uint8_t *junk = rk_test_random_bytes(100000, 9);
	memcpy(junk, first, 13);
	rk_test_spit(rk_test_path("j.E01"), junk, 100000);
	ck_assert_int_eq(open_hostile(rk_test_path("j.E01"), "j.E01"), RK_E_CORRUPT);
	/* a byte flipped in the middle of the first segment's chunks */
	first[len / 2] ^= 0x5a;
	rk_test_spit(rk_test_path("f.E01"), first, len);
	rk_test_copy_file(seg_path("h", 2), rk_test_path("f.E02"));
	rk_test_copy_file(seg_path("h", 3), rk_test_path("f.E03"));
	for (int i = 4; access(seg_path("h", i), F_OK) == 0; i++) {
		char nm[32];
		snprintf(nm, sizeof nm, "f.E%02d", i);
		rk_test_copy_file(seg_path("h", i), rk_test_path(nm));
	}
	ck_assert_int_eq(open_hostile(rk_test_path("f.E01"), "f.E01"), RK_E_IO);
	/* the last segment cut short, then the middle one missing */
	int last = 3;
	while (access(seg_path("h", last + 1), F_OK) == 0)
		last++;
	ck_assert_int_eq(truncate(seg_path("h", last), 4000), 0);
	ck_assert_int_ne(open_hostile(seg_path("h", 1), "h.E01"), RK_OK);
	ck_assert_int_eq(unlink(seg_path("h", 2)), 0);
	ck_assert_int_ne(open_hostile(seg_path("h", 1), "h.E01"), RK_OK);
	free(junk);
	free(first);
	free(raw);
}
END_TEST

RK_TEST_SUITE("dev_ewf", { "ewf", 60, rk_test_tmpdir_make, rk_test_tmpdir_remove, 0,
	  RK_TESTS(RK_TEST(ewf_segments_read), RK_TEST(ewf_info_verify), RK_TEST(ewf_refusals),
	           RK_TEST(ewf_hostile)) })
