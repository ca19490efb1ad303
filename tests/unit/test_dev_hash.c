/* test_dev_hash.c: digests (known vectors) and the hashing device: its
 * digest equals libcrypto's one-shot digest of the whole device whatever
 * order, coverage and pieces the reads came in. */
#include <check.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rk_dev.h"
#include "helpers/rk_test.h"

#define DEV_SIZE (3u * RK_TEST_MIB + 12345u)   /* not a multiple of any piece */

/* The hex of EVP's one-shot digest ALG over BUF. */
static void one_shot(const char *alg, const uint8_t *buf, size_t n, char *hex)
{
	uint8_t md[EVP_MAX_MD_SIZE];
	unsigned len = 0;
	RK_REQUIRE(EVP_Digest(buf, n, md, &len, EVP_get_digestbyname(alg), NULL) == 1);
	for (unsigned i = 0; i < len; i++)
		sprintf(hex + 2 * i, "%02x", md[i]);
}

/* A memory device of DEV_SIZE seeded bytes; *DATA its memory. */
static rk_dev *seeded_mem(uint8_t **data)
{
	rk_dev *m;
	ck_assert_int_eq(rk_dev_mem(&m, "m0", DEV_SIZE), RK_OK);
	*data = rk_dev_mem_data(m);
	rk_test_fill_seeded(*data, DEV_SIZE, 14);
	return m;
}

/* Finishes D (a hashing device over DATA), checks RES against the one-shot
 * digest, closes D and checks open drops to 0. */
static void check_digest(rk_dev *d, struct rk_hash_result *res, const uint8_t *data, const char *alg)
{
	char want[2 * EVP_MAX_MD_SIZE + 1];
	one_shot(alg, data, DEV_SIZE, want);
	ck_assert_int_eq(rk_dev_hash_finish(d), RK_OK);
	ck_assert_int_eq(res->done, 1);
	ck_assert_str_eq(res->hex, want);
	ck_assert_uint_eq(res->size, DEV_SIZE);
	ck_assert_uint_eq(res->along + res->extra, DEV_SIZE);
	ck_assert_int_eq(res->open, 1);
	rk_dev_close(d);
	ck_assert_int_eq(res->open, 0);
}

/* Known vectors of the three digests ("abc", FIPS 180 / RFC 1321). */
START_TEST(vectors)
{
	static const struct { const char *alg, *hex; } v[] = {
		{ "sha256", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" },
		{ "sha1", "a9993e364706816aba3e25717850c26c9cd0d89d" },
		{ "md5", "900150983cd24fb0d6963f7d28e17f72" },
	};
	for (size_t i = 0; i < 3; i++) {
		rk_digest *g;
		struct rk_hash_result r;
		memset(&r, 0, sizeof r);
		ck_assert_int_eq(rk_digest_new(&g, v[i].alg), RK_OK);
		rk_digest_update(g, "a", 1);
		rk_digest_update(g, "bc", 2);
		ck_assert_int_eq(rk_digest_final(g, &r), RK_OK);
		ck_assert_str_eq(r.hex, v[i].hex);
		ck_assert_str_eq(r.alg, v[i].alg);
		ck_assert_uint_eq(r.size, 3);
		rk_digest_free(g);
		ck_assert_int_eq(rk_hash_alg_ok(v[i].alg), 1);
	}
	rk_digest *g = NULL;
	ck_assert_int_eq(rk_digest_new(&g, "sha3"), RK_E_INVAL);
	ck_assert_ptr_null(g);
	ck_assert_int_eq(rk_hash_alg_ok("SHA256"), 0);
	ck_assert_int_eq(rk_hash_alg_ok(NULL), 0);
}
END_TEST

/* Reads in order, in odd pieces, over the whole device: no extra read. */
START_TEST(in_order)
{
	uint8_t *data, *buf = malloc(70000);
	rk_dev *d, *m = seeded_mem(&data);
	struct rk_hash_result res;
	ck_assert_int_eq(rk_dev_hash(&d, m, "sha256", &res, 1), RK_OK);
	ck_assert_uint_eq(rk_dev_size(d), DEV_SIZE);
	for (uint64_t off = 0; off < DEV_SIZE; off += 70000) {
		size_t n = DEV_SIZE - off < 70000 ? (size_t)(DEV_SIZE - off) : 70000;
		ck_assert_int_eq(rk_dev_pread(d, buf, n, off), RK_OK);
		ck_assert_mem_eq(buf, data + off, n);
	}
	ck_assert_uint_eq(res.along, DEV_SIZE);
	check_digest(d, &res, data, "sha256");
	ck_assert_uint_eq(res.extra, 0);
	free(buf);
}
END_TEST

/* Reads out of order (pieces swapped pairwise, some read twice, overlaps):
 * the kept copies put them in order, nothing read by the hash. */
START_TEST(out_of_order)
{
	uint8_t *data, *buf = malloc(65536);
	rk_dev *d, *m = seeded_mem(&data);
	struct rk_hash_result res;
	ck_assert_int_eq(rk_dev_hash(&d, m, "sha1", &res, 1), RK_OK);
	uint64_t n = (DEV_SIZE + 65535) / 65536;
	for (uint64_t k = 0; k < n; k++) {
		uint64_t i = k ^ 1;                 /* 1, 0, 3, 2, ... */
		if (i >= n)
			i = k;
		uint64_t off = i * 65536, len = DEV_SIZE - off < 65536 ? DEV_SIZE - off : 65536;
		ck_assert_int_eq(rk_dev_pread(d, buf, (size_t)len, off), RK_OK);
		ck_assert_int_eq(rk_dev_pread(d, buf, (size_t)(len / 2), off + len / 4), RK_OK);  /* overlap */
	}
	ck_assert_uint_eq(res.along, DEV_SIZE);
	check_digest(d, &res, data, "sha1");
	ck_assert_uint_eq(res.extra, 0);
	free(buf);
}
END_TEST

/* Partial reads (a parity chunk skipped every fourth piece, the last MiB
 * never read, a read far past the end of the prefix): gaps are read by
 * the hash, the rest by the catch-up. */
START_TEST(partial)
{
	uint8_t *data, *buf = malloc(65536);
	rk_dev *d, *m = seeded_mem(&data);
	struct rk_hash_result res;
	ck_assert_int_eq(rk_dev_hash(&d, m, "md5", &res, 1), RK_OK);
	ck_assert_int_eq(rk_dev_pread(d, buf, 4096, DEV_SIZE - 4096), RK_OK);   /* far ahead: kept */
	for (uint64_t off = 0; off + 65536 <= 2 * RK_TEST_MIB; off += 65536)
		if ((off / 65536) % 4 != 3)
			ck_assert_int_eq(rk_dev_pread(d, buf, 65536, off), RK_OK);
	ck_assert_uint_lt(res.size, 2 * RK_TEST_MIB);
	check_digest(d, &res, data, "md5");
	ck_assert_uint_gt(res.extra, RK_TEST_MIB);
	ck_assert_uint_ge(res.along, 3 * RK_TEST_MIB / 2 - 65536);
	free(buf);
}
END_TEST

/* Nothing read (a report-only run): the catch-up reads it all; finishing
 * twice is harmless and reads afterwards still work; writes are refused. */
START_TEST(catch_up)
{
	uint8_t *data, b[16];
	rk_dev *d, *m = seeded_mem(&data);
	struct rk_hash_result res;
	ck_assert_int_eq(rk_dev_hash(&d, m, "sha256", &res, 0), RK_OK);
	ck_assert_int_eq(rk_dev_pwrite(d, b, sizeof b, 0), RK_E_READONLY);
	ck_assert_int_eq(rk_dev_hash_finish(d), RK_OK);
	ck_assert_int_eq(rk_dev_hash_finish(d), RK_OK);
	ck_assert_int_eq(rk_dev_pread(d, b, sizeof b, 100), RK_OK);
	ck_assert_mem_eq(b, data + 100, sizeof b);
	ck_assert_uint_eq(res.extra, DEV_SIZE);
	ck_assert_uint_eq(res.along, 0);
	check_digest(d, &res, data, "sha256");
	ck_assert_int_eq(rk_dev_hash_finish(m), RK_E_INVAL);
	rk_dev_close(m);   /* not owned */
	rk_dev *x = NULL;
	ck_assert_int_eq(rk_dev_mem(&m, "m1", 512), RK_OK);
	ck_assert_int_eq(rk_dev_hash(&x, m, "whirlpool", &res, 1), RK_E_INVAL);   /* M closed */
	ck_assert_ptr_null(x);
}
END_TEST

struct reader {
	rk_dev *d;
	int first;
};

/* Reads every other 64 KiB piece from FIRST on (two threads cover it all). */
static void *read_half(void *arg)
{
	struct reader *r = arg;
	uint8_t *buf = malloc(65536);
	for (uint64_t off = (uint64_t)r->first * 65536; off < DEV_SIZE; off += 2 * 65536) {
		uint64_t len = DEV_SIZE - off < 65536 ? DEV_SIZE - off : 65536;
		if (rk_dev_pread(r->d, buf, (size_t)len, off))
			abort();
	}
	free(buf);
	return NULL;
}

/* Two threads reading at once (as the engine's pool does). */
START_TEST(threads)
{
	uint8_t *data;
	rk_dev *d, *m = seeded_mem(&data);
	struct rk_hash_result res;
	ck_assert_int_eq(rk_dev_hash(&d, m, "sha256", &res, 1), RK_OK);
	pthread_t t[2];
	struct reader r[2] = { { d, 0 }, { d, 1 } };
	for (int i = 0; i < 2; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, read_half, &r[i]), 0);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	check_digest(d, &res, data, "sha256");
}
END_TEST

RK_TEST_SUITE("dev_hash", { "hash", 0, NULL, NULL, 0,
	  RK_TESTS(RK_TEST(vectors), RK_TEST(in_order), RK_TEST(out_of_order), RK_TEST(partial),
	           RK_TEST(catch_up), RK_TEST(threads)) })
