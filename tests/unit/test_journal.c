/* test_journal.c: the journal record codec (libmeta/journal.c) as untrusted
 * input: a valid record round-trips; every field out of its bounds, every
 * flipped byte (CRC), torn and foreign records are refused; the replay
 * overlay device reads the lower device with its writes on top; the
 * mid-reshape records (kinds 3, 4) are decoded as untrusted input; the
 * log's version 2 records (group commit) carry their session, base and
 * commit, checked like every other field. */
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
	{ "version", 8, 3, 4, RK_E_CORRUPT },
	{ "version 2 without its commit fields", 8, 2, 4, RK_E_CORRUPT },
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

/* ---- the mid-reshape records as untrusted input ---- */

static const uint8_t uu[16] = { 9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 1, 2, 3, 4, 5, 6 };

static struct rk_jrec_ctx rs_ctx(void)
{
	return (struct rk_jrec_ctx){ .jsize = 512u * 1024u, .member_size = 1u << 20, .vol_size = 4u << 20,
	                             .nroles = 5, .role = 2, .array_uuid = uu, .reshaping = 1,
	                             .rs_pos = 786432, .rs_base = 786432, .rs_old = 1048576,
	                             .rs_new_size = 1u << 20, .rs_old_size = 1u << 20 };
}

START_TEST(t_records)
{
	struct rk_jrec h, d;
	memset(&h, 0, sizeof h);
	h.kind = RK_JREC_DATA_RS;
	h.role = 2;
	h.nroles = 5;
	h.seq = 7;
	memcpy(h.array_uuid, uu, 16);
	rk_jrec_set_part(&h, 2);
	rk_jrec_set_part(&h, 4);
	h.nsegs = 2;
	h.seg[0] = (struct rk_jseg){ 4096, 512 };                       /* new data area */
	h.seg[1] = (struct rk_jseg){ 262144 + (1u << 20) - 1024, 1024 }; /* the old one's end */
	h.payload = 1536;
	h.rs_pos = 786432;
	h.rs_base = 786432;
	h.rs_old = 1048576;
	uint8_t *rec = calloc(1, RK_JNL_HDR + 1536);
	ck_assert_ptr_nonnull(rec);
	for (int i = 0; i < 1536; i++)
		rec[RK_JNL_HDR + i] = (uint8_t)(i * 3);
	ck_assert_int_eq(rk_jrec_encode(&h, rec), RK_OK);
	struct rk_jrec_ctx c = rs_ctx();
	ck_assert_int_eq(rk_jrec_decode_ctx(&d, rec, &c), RK_OK);
	ck_assert_uint_eq(d.kind, RK_JREC_DATA_RS);
	ck_assert_uint_eq(d.rs_pos, 786432);
	ck_assert_uint_eq(d.rs_old, 1048576);
	ck_assert_uint_eq(d.seg[1].len, 1024);
	ck_assert(rk_jrec_verify(&d, rec));
	/* the tag lies at 3520 (spec/journal.md), inside the CRC */
	ck_assert_uint_eq(rec[3520 + 2], (786432 >> 16) & 0xff);
	rec[3520 + 24] ^= 1;   /* past the tag: covered by the CRC only */
	ck_assert_int_eq(rk_jrec_decode_ctx(&d, rec, &c), RK_OK);
	ck_assert(!rk_jrec_verify(&d, rec));
	rec[3520 + 24] ^= 1;
	/* another reshape state, or no reshape: no record for this array */
	c.rs_pos += 196608;
	ck_assert_int_eq(rk_jrec_decode_ctx(&d, rec, &c), RK_E_NOSB);
	c = rs_ctx();
	c.rs_old += 4096;
	ck_assert_int_eq(rk_jrec_decode_ctx(&d, rec, &c), RK_E_NOSB);
	c = rs_ctx();
	c.reshaping = 0;
	ck_assert_int_eq(rk_jrec_decode_ctx(&d, rec, &c), RK_E_NOSB);
	ck_assert_int_eq(rk_jrec_decode(&d, rec, c.jsize, c.member_size, c.vol_size, 5, 2, uu), RK_E_NOSB);
	/* a context that is no forward shift is refused */
	c = rs_ctx();
	c.rs_old = c.rs_base;
	ck_assert_int_eq(rk_jrec_decode_ctx(&d, rec, &c), RK_E_INVAL);
	/* segments: in the gap between the areas, past the old one, wrapping */
	c = rs_ctx();
	c.rs_new_size = 65536;
	c.rs_old_size = 1u << 20;
	static const struct rk_jseg bad_segs[] = {
		{ 65536, 512 },                      /* past the new area, before the old */
		{ 262144 - 256, 512 },               /* straddles the old area's start */
		{ 262144 + (1u << 20) - 256, 512 },  /* past the old area's end */
		{ UINT64_MAX - 100, 512 },           /* wraps */
		{ 4096, 0 },                         /* empty */
	};
	for (size_t i = 0; i < sizeof bad_segs / sizeof bad_segs[0]; i++) {
		struct rk_jrec x = h;
		x.nsegs = 1;
		x.seg[0] = bad_segs[i];
		x.payload = bad_segs[i].len;
		uint8_t *r2 = calloc(1, RK_JNL_HDR + 512);
		ck_assert_ptr_nonnull(r2);
		if (rk_jrec_encode(&x, r2) == RK_OK)
			ck_assert_msg(rk_jrec_decode_ctx(&d, r2, &c) == RK_E_CORRUPT, "bad segment %zu accepted", i);
		free(r2);
	}
	/* a plain DATA record is no record mid-reshape; INTENT_RS ranges are
	 * volume ranges */
	struct rk_jrec p = h;
	p.kind = RK_JREC_DATA;
	ck_assert_int_eq(rk_jrec_encode(&p, rec), RK_OK);
	c = rs_ctx();
	ck_assert_int_eq(rk_jrec_decode_ctx(&d, rec, &c), RK_E_NOSB);
	p.kind = RK_JREC_INTENT_RS;
	p.nsegs = 1;
	p.seg[0] = (struct rk_jseg){ 0, 4u << 20 };
	p.payload = 0;
	ck_assert_int_eq(rk_jrec_encode(&p, rec), RK_OK);
	ck_assert_int_eq(rk_jrec_decode_ctx(&d, rec, &c), RK_OK);
	ck_assert_uint_eq(d.kind, RK_JREC_INTENT_RS);
	p.seg[0].len++;
	ck_assert_int_eq(rk_jrec_encode(&p, rec), RK_OK);
	ck_assert_int_eq(rk_jrec_decode_ctx(&d, rec, &c), RK_E_CORRUPT);
	/* encoding a tag that is no forward shift is refused */
	p.rs_old = p.rs_base;
	ck_assert_int_eq(rk_jrec_encode(&p, rec), RK_E_INVAL);
	free(rec);
}
END_TEST

/* Version 2 (the log): nonce, base and commit round-trip; a record
 * outside its own commit, or a base past the commit, is refused both ways;
 * a version 1 record decodes as a commit of one. */
START_TEST(t_log_fields)
{
	struct rk_jrec h, d;
	size_t len;
	uint8_t *b = make_rec(&h, &len);
	ck_assert_int_eq(decode(b, &d), RK_OK);
	ck_assert_uint_eq(d.version, 1);
	ck_assert(d.base_seq == 42 && d.first_seq == 42 && d.last_seq == 42);
	h.version = 2;
	h.nonce = 0x1122334455667788ull;
	h.base_seq = 30;
	h.first_seq = 40;
	h.last_seq = 44;
	ck_assert_int_eq(rk_jrec_encode(&h, b), RK_OK);
	ck_assert_int_eq(decode(b, &d), RK_OK);
	ck_assert_uint_eq(d.version, 2);
	ck_assert_uint_eq(d.nonce, 0x1122334455667788ull);
	ck_assert(d.base_seq == 30 && d.first_seq == 40 && d.seq == 42 && d.last_seq == 44);
	ck_assert(rk_jrec_verify(&d, b));
	/* encode refuses a record outside its commit */
	h.last_seq = 41;
	ck_assert_int_eq(rk_jrec_encode(&h, b), RK_E_INVAL);
	h.last_seq = 44;
	h.base_seq = 41;
	ck_assert_int_eq(rk_jrec_encode(&h, b), RK_E_INVAL);
	/* crafted with a good CRC: base past the commit's first record */
	h.base_seq = 30;
	ck_assert_int_eq(rk_jrec_encode(&h, b), RK_OK);
	rk_put_le64(b + 3544 + 8, 41);
	rk_put_le32(b + 16, 0);
	ck_assert_int_eq(decode(b, &d), RK_E_CORRUPT);
	free(b);
}
END_TEST

RK_TEST_SUITE("journal", { "codec", 0, NULL, NULL, 0,
	  RK_TESTS(RK_TEST(t_roundtrip), RK_TEST(t_flip_every_byte),
	           RK_TEST_LOOP(t_crafted, 0, (int)(sizeof bad / sizeof bad[0])),
	           RK_TEST(t_encode_refuses), RK_TEST(t_overlay), RK_TEST(t_records), RK_TEST(t_log_fields)) })
