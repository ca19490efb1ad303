/* test_journal.c: the journal record codec (libmeta/journal.c) as untrusted
 * input: a valid record round-trips; every field out of its bounds, every
 * flipped byte (CRC), torn and foreign records are refused; the replay
 * overlay device reads the lower device with its writes on top. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "rk_dev.h"
#include "rk_journal.h"
#include "rk_le.h"
#include "helpers/rk_test.h"

#define JOFF 69632u
#define JSIZE (956u * 1024u)
#define MSIZE (1u << 20)
#define VSIZE (3u << 20)

static const uint8_t uuid[16] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };

/* A DATA record for role 1 of 4 with two segments; returns its bytes. */
static uint8_t *make_rec(struct rk_jrec *h, size_t *len)
{
	memset(h, 0, sizeof *h);
	h->kind = RK_JREC_DATA;
	h->role = 1;
	h->nroles = 4;
	h->seq = 42;
	memcpy(h->array_uuid, uuid, 16);
	rk_jrec_set_part(h, 1);
	rk_jrec_set_part(h, 3);
	h->nsegs = 2;
	h->seg[0] = (struct rk_jseg){ 4096, 1000 };
	h->seg[1] = (struct rk_jseg){ MSIZE - 512, 512 };
	h->payload = 1512;
	*len = RK_JNL_HDR + 1512;
	uint8_t *b = calloc(1, *len);
	for (size_t i = 0; i < 1512; i++)
		b[RK_JNL_HDR + i] = (uint8_t)(i * 7 + 1);
	ck_assert_int_eq(rk_jrec_encode(h, b), RK_OK);
	return b;
}

static rk_err decode(const uint8_t *b, struct rk_jrec *out)
{
	return rk_jrec_decode(out, b, JSIZE, MSIZE, VSIZE, 4, 1, uuid);
}

START_TEST(t_roundtrip)
{
	struct rk_jrec h, d;
	size_t len;
	uint8_t *b = make_rec(&h, &len);
	ck_assert_int_eq(decode(b, &d), RK_OK);
	ck_assert_uint_eq(d.seq, 42);
	ck_assert_uint_eq(d.nsegs, 2);
	ck_assert_uint_eq(d.seg[1].off, MSIZE - 512);
	ck_assert(rk_jrec_part(&d, 3) && !rk_jrec_part(&d, 2));
	ck_assert(rk_jrec_verify(&d, b));
	/* the same record read through a device */
	rk_dev *dev;
	ck_assert_int_eq(rk_dev_mem(&dev, "m", JOFF + JSIZE), RK_OK);
	ck_assert_int_eq(rk_dev_pwrite(dev, b, len, JOFF), RK_OK);
	uint8_t *rec = NULL;
	ck_assert_int_eq(rk_jrec_read(dev, JOFF, JSIZE, MSIZE, VSIZE, 4, 1, uuid, &d, &rec), RK_OK);
	ck_assert_mem_eq(rec, b, len);
	free(rec);
	/* torn: only the header sector and part of the payload landed */
	uint8_t *torn = malloc(len);
	memcpy(torn, b, len);
	memset(torn + RK_JNL_HDR + 600, 0xEE, len - RK_JNL_HDR - 600);
	ck_assert_int_eq(rk_dev_pwrite(dev, torn, len, JOFF), RK_OK);
	ck_assert_int_eq(rk_jrec_read(dev, JOFF, JSIZE, MSIZE, VSIZE, 4, 1, uuid, &d, &rec), RK_E_NOSB);
	ck_assert_ptr_null(rec);
	/* an empty (invalidated) slot */
	memset(torn, 0, RK_JNL_HDR);
	ck_assert_int_eq(rk_dev_pwrite(dev, torn, RK_JNL_HDR, JOFF), RK_OK);
	ck_assert_int_eq(rk_jrec_read(dev, JOFF, JSIZE, MSIZE, VSIZE, 4, 1, uuid, &d, &rec), RK_E_NOSB);
	/* a slot that does not fit the member */
	ck_assert_int_eq(rk_jrec_read(dev, JOFF + 4096, JSIZE, MSIZE, VSIZE, 4, 1, uuid, &d, &rec), RK_E_CORRUPT);
	free(torn);
	rk_dev_close(dev);
	free(b);
}
END_TEST

/* Every single flipped byte of header or payload is refused: by a field
 * check or by the CRC. */
START_TEST(t_flip_every_byte)
{
	struct rk_jrec h, d;
	size_t len;
	uint8_t *b = make_rec(&h, &len);
	uint32_t refused = 0;
	for (size_t i = 0; i < len; i++) {
		b[i] ^= 0x5A;
		rk_err e = decode(b, &d);
		if (e || !rk_jrec_verify(&d, b))
			refused++;
		b[i] ^= 0x5A;
	}
	ck_assert_uint_eq(refused, len);
	free(b);
}
END_TEST

/* Fields out of bounds, with a correct CRC (a crafted record). */
static const struct {
	const char *name;
	size_t off;
	uint64_t val;
	int width;
	rk_err want;
} bad[] = {
	{ "magic", 0, 0x4c4e524a4b52ull, 8, RK_E_NOSB },
	{ "version", 8, 2, 4, RK_E_CORRUPT },
	{ "kind", 12, 9, 4, RK_E_CORRUPT },
	{ "role", 20, 2, 4, RK_E_CORRUPT },
	{ "nroles", 24, 5, 4, RK_E_CORRUPT },
	{ "nsegs", 28, RK_JNL_MAX_SEGS + 1, 4, RK_E_CORRUPT },
	{ "payload huge", 40, ~0ull, 8, RK_E_CORRUPT },
	{ "payload mismatch", 40, 1513, 8, RK_E_CORRUPT },
	{ "uuid", 48, 0, 8, RK_E_NOSB },
	{ "own role not a participant", 64, 0x08, 1, RK_E_CORRUPT },
	{ "participant past nroles", 64, 0x0a | 0x20, 1, RK_E_CORRUPT },
	{ "segment past the member", 320 + 16, MSIZE - 511, 8, RK_E_CORRUPT },
	{ "segment offset overflow", 320 + 16, ~0ull - 100, 8, RK_E_CORRUPT },
	{ "segment empty", 320 + 8, 0, 8, RK_E_CORRUPT },
};

START_TEST(t_crafted)
{
	struct rk_jrec h, d;
	size_t len;
	uint8_t *b = make_rec(&h, &len);
	uint8_t *c = malloc(len);
	memcpy(c, b, len);
	if (bad[_i].width == 8)
		rk_put_le64(c + bad[_i].off, bad[_i].val);
	else if (bad[_i].width == 4)
		rk_put_le32(c + bad[_i].off, (uint32_t)bad[_i].val);
	else
		c[bad[_i].off] = (uint8_t)bad[_i].val;
	/* the field checks come before the CRC: a crafter can always re-sign */
	rk_err e = decode(c, &d);
	ck_assert_msg(e == bad[_i].want, "%s: got %s (%s)", bad[_i].name, rk_strerror(e), rk_errmsg());
	free(c);
	free(b);
}
END_TEST

START_TEST(t_encode_refuses)
{
	struct rk_jrec h;
	size_t len;
	uint8_t *b = make_rec(&h, &len);
	h.payload = 10;
	ck_assert_int_eq(rk_jrec_encode(&h, b), RK_E_INVAL);
	h.payload = 1512;
	h.nsegs = RK_JNL_MAX_SEGS + 1;
	ck_assert_int_eq(rk_jrec_encode(&h, b), RK_E_INVAL);
	h.nsegs = 2;
	h.kind = 7;
	ck_assert_int_eq(rk_jrec_encode(&h, b), RK_E_INVAL);
	h.kind = RK_JREC_INTENT;
	ck_assert_int_eq(rk_jrec_encode(&h, b), RK_E_INVAL);   /* intent carries no payload */
	h.payload = 0;
	h.nsegs = 1;
	h.seg[0] = (struct rk_jseg){ VSIZE - 100, 100 };
	ck_assert_int_eq(rk_jrec_encode(&h, b), RK_OK);
	struct rk_jrec d;
	ck_assert_int_eq(decode(b, &d), RK_OK);
	ck_assert_uint_eq(d.kind, RK_JREC_INTENT);
	h.seg[0] = (struct rk_jseg){ VSIZE - 100, 101 };   /* past the volume */
	ck_assert_int_eq(rk_jrec_encode(&h, b), RK_OK);
	ck_assert_int_eq(decode(b, &d), RK_E_CORRUPT);
	free(b);
}
END_TEST

START_TEST(t_overlay)
{
	rk_dev *lo, *ov;
	ck_assert_int_eq(rk_dev_mem(&lo, "lower", 1 << 16), RK_OK);
	uint8_t *m = rk_dev_mem_data(lo);
	for (int i = 0; i < 1 << 16; i++)
		m[i] = (uint8_t)i;
	ck_assert_int_eq(rk_dev_overlay(&ov, lo), RK_OK);
	ck_assert_uint_eq(rk_dev_size(ov), 1 << 16);
	ck_assert(rk_dev_writable(ov));
	uint8_t a[300], r[1000];
	memset(a, 0xAA, sizeof a);
	ck_assert_int_eq(rk_dev_pwrite(ov, a, 300, 100), RK_OK);
	memset(a, 0xBB, sizeof a);
	ck_assert_int_eq(rk_dev_pwrite(ov, a, 100, 350), RK_OK);   /* later wins where they overlap */
	ck_assert_int_eq(rk_dev_pread(ov, r, 1000, 0), RK_OK);
	for (int i = 0; i < 1000; i++) {
		uint8_t want = i >= 350 && i < 450 ? 0xBB : i >= 100 && i < 400 ? 0xAA : (uint8_t)i;
		ck_assert_uint_eq(r[i], want);
	}
	/* nothing reached the lower device */
	for (int i = 0; i < 1000; i++)
		ck_assert_uint_eq(m[i], (uint8_t)i);
	ck_assert_int_eq(rk_dev_flush(ov), RK_OK);
	ck_assert_int_eq(rk_dev_pread(ov, r, 10, (1 << 16) - 5), RK_E_RANGE);
	rk_dev_close(ov);
	rk_dev_close(lo);
}
END_TEST

int main(void)
{
	const struct rk_test_entry tests_codec[] = {
		RK_TEST(t_roundtrip), RK_TEST(t_flip_every_byte),
		RK_TEST_LOOP(t_crafted, 0, (int)(sizeof bad / sizeof bad[0])),
		RK_TEST(t_encode_refuses), RK_TEST(t_overlay), RK_TEST_END,
	};
	const struct rk_test_case cases[] = {
		{ "codec", 0, NULL, NULL, 0, tests_codec },
		RK_TEST_CASES_END,
	};
	return rk_test_main("journal", cases);
}
