/* fuzz_journal.c: journal record decoding from arbitrary bytes
 * (spec/journal.md), the plain kinds and the mid-reshape ones.
 *
 * The input is a record as it lies in a member's slot (header, then
 * payload).  It is decoded against a plain context and against mid-reshape
 * contexts (one taken from the record's own tag, so the tag check passes
 * and the segment checks are reached, one fixed), with role, role count
 * and array UUID taken from the record itself.  Whatever decodes must obey
 * every bound the decoder promises, re-encode to a header that decodes to
 * the same record, and agree with rk_jrec_verify on the CRC; anything else
 * aborts.  The input is also read from a memory device with
 * rk_jrec_read_ctx.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rk_dev.h"
#include "rk_journal.h"
#include "rk_le.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define JSIZE (960u * 1024u)
#define JOFF  69632u

static struct rk_jrec h, again;

static void check(const struct rk_jrec_ctx *c, const uint8_t *rec, size_t have)
{
	if (rk_jrec_decode_ctx(&h, rec, c) != RK_OK)
		return;
	if (h.nsegs > RK_JNL_MAX_SEGS || h.payload > c->jsize - RK_JNL_HDR || !rk_jrec_part(&h, c->role) ||
	    h.role != c->role || h.nroles != c->nroles)
		abort();
	uint64_t sum = 0;
	for (uint32_t i = 0; i < h.nsegs; i++) {
		uint64_t end = h.seg[i].off + h.seg[i].len;
		if (!h.seg[i].len || end < h.seg[i].off)
			abort();
		if (h.kind == RK_JREC_DATA && end > c->member_size)
			abort();
		if ((h.kind == RK_JREC_INTENT || h.kind == RK_JREC_INTENT_RS) && end > c->vol_size)
			abort();
		if (h.kind == RK_JREC_DATA_RS) {
			uint64_t d = c->rs_old - c->rs_base;
			if (end > c->rs_new_size && (h.seg[i].off < d || end > d + c->rs_old_size))
				abort();
		}
		sum += h.seg[i].len;
	}
	if (rk_jrec_is_data(h.kind) ? sum != h.payload : h.payload != 0)
		abort();
	if ((h.kind == RK_JREC_DATA_RS || h.kind == RK_JREC_INTENT_RS) != !!c->reshaping)
		abort();
	/* re-encode (payload copied when the input holds it) and decode again */
	uint8_t *enc = calloc(1, (size_t)(RK_JNL_HDR + h.payload));
	if (!enc)
		return;
	int whole = have >= RK_JNL_HDR + h.payload;
	if (whole)
		memcpy(enc + RK_JNL_HDR, rec + RK_JNL_HDR, (size_t)h.payload);
	if (rk_jrec_encode(&h, enc) != RK_OK || rk_jrec_decode_ctx(&again, enc, c) != RK_OK)
		abort();
	if (memcmp(&h, &again, sizeof h) || !rk_jrec_verify(&again, enc))
		abort();
	/* where the input's header is the canonical encoding (nothing in the
	 * bytes the decoder skips), its CRC is right exactly when it is the
	 * re-encoded one */
	if (whole && !memcmp(rec, enc, 16) && !memcmp(rec + 20, enc + 20, RK_JNL_HDR - 20) &&
	    rk_jrec_verify(&h, rec) != !memcmp(rec + 16, enc + 16, 4))
		abort();
	free(enc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t n = size < RK_JNL_HDR ? RK_JNL_HDR : size;
	if (n > RK_JNL_HDR + JSIZE)
		n = RK_JNL_HDR + JSIZE;
	uint8_t *rec = calloc(1, n);
	if (!rec)
		return 0;
	memcpy(rec, data, size < n ? size : n);
	uint32_t role = rk_get_le32(rec + 20), nroles = rk_get_le32(rec + 24);
	if (nroles > RK_JNL_PARTS_BYTES * 8)
		nroles = RK_JNL_PARTS_BYTES * 8;
	struct rk_jrec_ctx c = { .jsize = JSIZE, .member_size = 1u << 20, .vol_size = 3u << 20, .nroles = nroles,
	                         .role = role, .array_uuid = rec + 48 };
	check(&c, rec, n);
	/* mid-reshape, the record's own tag (when it is a forward shift) */
	c.reshaping = 1;
	c.rs_pos = rk_get_le64(rec + 3520);
	c.rs_base = rk_get_le64(rec + 3528);
	c.rs_old = rk_get_le64(rec + 3536);
	c.rs_new_size = 2u << 20;
	c.rs_old_size = 1u << 20;
	if (c.rs_old > c.rs_base && c.rs_old - c.rs_base <= (1ull << 40))
		check(&c, rec, n);
	/* and a fixed reshape state: the tag decides */
	c.rs_pos = 786432;
	c.rs_base = 331776;
	c.rs_old = 1048576;
	check(&c, rec, n);

	/* the same bytes in a slot on a device */
	rk_dev *dev;
	if (rk_dev_mem(&dev, "slot", JOFF + RK_JNL_HDR + JSIZE) == RK_OK) {
		memcpy(rk_dev_mem_data(dev) + JOFF, rec, n);
		struct rk_jrec r;
		uint8_t *got = NULL;
		c.jsize = JSIZE;
		if (rk_jrec_read_ctx(dev, JOFF, &c, &r, &got) == RK_OK) {
			if (!rk_jrec_verify(&r, got))
				abort();
			free(got);
		}
		rk_dev_close(dev);
	}
	free(rec);
	return 0;
}
