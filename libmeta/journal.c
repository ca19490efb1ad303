/* journal.c: the write journal record codec (rk_journal.h, spec/journal.md);
 * the replay overlay device is engine/dev_overlay.c. */
#include "rk_journal.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "rk_le.h"
#include "rk_sb.h"

/* Header field offsets (spec/journal.md). */
enum {
	J_MAGIC = 0, J_VERSION = 8, J_KIND = 12, J_CRC = 16, J_ROLE = 20, J_NROLES = 24, J_NSEGS = 28,
	J_SEQ = 32, J_PAYLOAD = 40, J_UUID = 48, J_PARTS = 64, J_SEGS = 64 + RK_JNL_PARTS_BYTES,
	/* kinds 3, 4: the reshape tag, after the last possible segment */
	J_RS_POS = J_SEGS + RK_JNL_MAX_SEGS * 16, J_RS_BASE = J_RS_POS + 8, J_RS_OLD = J_RS_POS + 16,
	/* version 2 (the log, spec/journal.md "Group commit"): after the tag */
	J_NONCE = J_RS_POS + 24, J_BASE = J_NONCE + 8, J_FIRST = J_NONCE + 16, J_LAST = J_NONCE + 24,
	J_END = J_NONCE + 32,
};
#define J_VERSION_1 1u
#define J_VERSION_2 2u

_Static_assert(J_END <= RK_JNL_HDR, "journal header overflows");
_Static_assert(J_RS_POS == 3520, "spec/journal.md places the reshape tag at 3520");

static int kind_rs(uint32_t kind)
{
	return kind == RK_JREC_DATA_RS || kind == RK_JREC_INTENT_RS;
}

static int kind_known(uint32_t kind)
{
	return kind >= RK_JREC_DATA && kind <= RK_JREC_INTENT_RS;
}

static uint32_t rec_crc(const uint8_t *rec, uint64_t payload)
{
	uLong c = rk_crc32_field_zero(rec, RK_JNL_HDR, J_CRC);
	/* payloads are bounded by the journal size (< 4 GiB), but feed in pieces anyway */
	const uint8_t *p = rec + RK_JNL_HDR;
	while (payload) {
		uInt n = payload > (1u << 30) ? (1u << 30) : (uInt)payload;
		c = crc32(c, p, n);
		p += n;
		payload -= n;
	}
	return (uint32_t)c;
}

rk_err rk_jrec_encode(const struct rk_jrec *h, uint8_t *rec)
{
	if (h->nsegs > RK_JNL_MAX_SEGS || !kind_known(h->kind) || (kind_rs(h->kind) && h->rs_old <= h->rs_base))
		return rk_fail(RK_E_INVAL, "journal: bad record (%u segments, kind %u)", h->nsegs, h->kind);
	uint64_t sum = 0;
	for (uint32_t i = 0; i < h->nsegs; i++)
		if (rk_add_ovf(sum, h->seg[i].len, &sum))
			return rk_fail(RK_E_INVAL, "journal: segment lengths overflow");
	if (rk_jrec_is_data(h->kind) ? sum != h->payload : h->payload != 0)
		return rk_fail(RK_E_INVAL, "journal: payload %llu does not match the segments (%llu)",
		               (unsigned long long)h->payload, (unsigned long long)sum);
	memset(rec, 0, RK_JNL_HDR);
	memcpy(rec + J_MAGIC, RK_JNL_MAGIC, 8);
	rk_put_le32(rec + J_VERSION, h->version == J_VERSION_2 ? J_VERSION_2 : J_VERSION_1);
	rk_put_le32(rec + J_KIND, h->kind);
	rk_put_le32(rec + J_ROLE, h->role);
	rk_put_le32(rec + J_NROLES, h->nroles);
	rk_put_le32(rec + J_NSEGS, h->nsegs);
	rk_put_le64(rec + J_SEQ, h->seq);
	rk_put_le64(rec + J_PAYLOAD, h->payload);
	memcpy(rec + J_UUID, h->array_uuid, 16);
	memcpy(rec + J_PARTS, h->parts, RK_JNL_PARTS_BYTES);
	for (uint32_t i = 0; i < h->nsegs; i++) {
		rk_put_le64(rec + J_SEGS + 16 * i, h->seg[i].off);
		rk_put_le64(rec + J_SEGS + 16 * i + 8, h->seg[i].len);
	}
	if (kind_rs(h->kind)) {
		rk_put_le64(rec + J_RS_POS, h->rs_pos);
		rk_put_le64(rec + J_RS_BASE, h->rs_base);
		rk_put_le64(rec + J_RS_OLD, h->rs_old);
	}
	if (h->version == J_VERSION_2) {
		if (h->base_seq > h->first_seq || h->first_seq > h->seq || h->seq > h->last_seq)
			return rk_fail(RK_E_INVAL, "journal: record %llu outside its commit", (unsigned long long)h->seq);
		rk_put_le64(rec + J_NONCE, h->nonce);
		rk_put_le64(rec + J_BASE, h->base_seq);
		rk_put_le64(rec + J_FIRST, h->first_seq);
		rk_put_le64(rec + J_LAST, h->last_seq);
	}
	rk_put_le32(rec + J_CRC, rec_crc(rec, h->payload));
	return RK_OK;
}

/* Whether [off, off+len) (offsets from rs_base) lies inside one of the two
 * data areas of a reshape. */
static int rs_seg_ok(const struct rk_jrec_ctx *c, uint64_t off, uint64_t end)
{
	if (end <= c->rs_new_size)
		return 1;
	uint64_t d = c->rs_old - c->rs_base, oend;
	return !rk_add_ovf(d, c->rs_old_size, &oend) && off >= d && end <= oend;
}

rk_err rk_jrec_decode_ctx(struct rk_jrec *h, const uint8_t *hdr, const struct rk_jrec_ctx *c)
{
	memset(h, 0, sizeof *h);
	if (memcmp(hdr + J_MAGIC, RK_JNL_MAGIC, 8))
		return rk_fail(RK_E_NOSB, "journal: no record");
	h->version = rk_get_le32(hdr + J_VERSION);
	if (h->version != J_VERSION_1 && h->version != J_VERSION_2)
		return rk_fail(RK_E_CORRUPT, "journal: record version %u unknown", h->version);
	h->seq = rk_get_le64(hdr + J_SEQ);
	if (h->version == J_VERSION_2) {
		h->nonce = rk_get_le64(hdr + J_NONCE);
		h->base_seq = rk_get_le64(hdr + J_BASE);
		h->first_seq = rk_get_le64(hdr + J_FIRST);
		h->last_seq = rk_get_le64(hdr + J_LAST);
		if (h->base_seq > h->first_seq || h->first_seq > h->seq || h->seq > h->last_seq)
			return rk_fail(RK_E_CORRUPT, "journal: record %llu outside its commit %llu..%llu (base %llu)",
			               (unsigned long long)h->seq, (unsigned long long)h->first_seq,
			               (unsigned long long)h->last_seq, (unsigned long long)h->base_seq);
	} else {
		h->base_seq = h->first_seq = h->last_seq = h->seq;
	}
	h->kind = rk_get_le32(hdr + J_KIND);
	h->role = rk_get_le32(hdr + J_ROLE);
	h->nroles = rk_get_le32(hdr + J_NROLES);
	h->nsegs = rk_get_le32(hdr + J_NSEGS);
	h->payload = rk_get_le64(hdr + J_PAYLOAD);
	memcpy(h->array_uuid, hdr + J_UUID, 16);
	memcpy(h->parts, hdr + J_PARTS, RK_JNL_PARTS_BYTES);
	if (!kind_known(h->kind))
		return rk_fail(RK_E_CORRUPT, "journal: record kind %u unknown", h->kind);
	if (memcmp(h->array_uuid, c->array_uuid, 16))
		return rk_fail(RK_E_NOSB, "journal: record of another array");
	/* a record of the other family belongs to another geometry (before,
	 * after or outside a reshape): never replayed with the wrong base */
	if (kind_rs(h->kind) != !!c->reshaping)
		return rk_fail(RK_E_NOSB, "journal: record kind %u written %s a reshape, the array is %s one", h->kind,
		               kind_rs(h->kind) ? "during" : "outside", c->reshaping ? "in" : "not in");
	if (kind_rs(h->kind)) {
		h->rs_pos = rk_get_le64(hdr + J_RS_POS);
		h->rs_base = rk_get_le64(hdr + J_RS_BASE);
		h->rs_old = rk_get_le64(hdr + J_RS_OLD);
		if (c->rs_old <= c->rs_base)
			return rk_fail(RK_E_INVAL, "journal: reshape data offsets %llu -> %llu are not a forward shift",
			               (unsigned long long)c->rs_old, (unsigned long long)c->rs_base);
		if (h->rs_pos != c->rs_pos || h->rs_base != c->rs_base || h->rs_old != c->rs_old)
			return rk_fail(RK_E_NOSB, "journal: record of another reshape state (position %llu, data offsets "
			               "%llu/%llu; the array is at %llu, %llu/%llu)", (unsigned long long)h->rs_pos,
			               (unsigned long long)h->rs_base, (unsigned long long)h->rs_old,
			               (unsigned long long)c->rs_pos, (unsigned long long)c->rs_base,
			               (unsigned long long)c->rs_old);
	}
	if (h->role != c->role || h->nroles != c->nroles)
		return rk_fail(RK_E_CORRUPT, "journal: record for role %u of %u, read from role %u of %u", h->role,
		               h->nroles, c->role, c->nroles);
	if (h->nsegs > RK_JNL_MAX_SEGS)
		return rk_fail(RK_E_CORRUPT, "journal: %u segments (at most %u)", h->nsegs, RK_JNL_MAX_SEGS);
	if (c->jsize < RK_JNL_HDR || h->payload > c->jsize - RK_JNL_HDR)
		return rk_fail(RK_E_CORRUPT, "journal: payload %llu does not fit the %llu-byte journal",
		               (unsigned long long)h->payload, (unsigned long long)c->jsize);
	if (!rk_jrec_part(h, c->role))
		return rk_fail(RK_E_CORRUPT, "journal: record does not list its own role %u", c->role);
	for (uint32_t r = c->nroles; r < RK_JNL_PARTS_BYTES * 8; r++)
		if (rk_jrec_part(h, r))
			return rk_fail(RK_E_CORRUPT, "journal: participant %u past the %u roles", r, c->nroles);
	int data = rk_jrec_is_data(h->kind);
	uint64_t sum = 0, lim = h->kind == RK_JREC_DATA ? c->member_size : data ? UINT64_MAX : c->vol_size;
	for (uint32_t i = 0; i < h->nsegs; i++) {
		uint64_t off = rk_get_le64(hdr + J_SEGS + 16 * i), len = rk_get_le64(hdr + J_SEGS + 16 * i + 8), end;
		if (len == 0 || rk_add_ovf(off, len, &end) || end > lim || rk_add_ovf(sum, len, &sum) ||
		    (h->kind == RK_JREC_DATA_RS && !rs_seg_ok(c, off, end)))
			return rk_fail(RK_E_CORRUPT, "journal: segment %u (%llu+%llu) outside the %s", i,
			               (unsigned long long)off, (unsigned long long)len,
			               data ? "data areas" : "volume");
		h->seg[i].off = off;
		h->seg[i].len = len;
	}
	if (data ? sum != h->payload : h->payload != 0)
		return rk_fail(RK_E_CORRUPT, "journal: payload %llu does not match the segments (%llu)",
		               (unsigned long long)h->payload, (unsigned long long)sum);
	return RK_OK;
}

rk_err rk_jrec_decode(struct rk_jrec *h, const uint8_t *hdr, uint64_t jsize, uint64_t member_size,
                      uint64_t vol_size, uint32_t nroles, uint32_t role, const uint8_t *array_uuid)
{
	struct rk_jrec_ctx c = { .jsize = jsize, .member_size = member_size, .vol_size = vol_size, .nroles = nroles,
	                         .role = role, .array_uuid = array_uuid };
	return rk_jrec_decode_ctx(h, hdr, &c);
}

int rk_jrec_verify(const struct rk_jrec *h, const uint8_t *rec)
{
	return rk_get_le32(rec + J_CRC) == rec_crc(rec, h->payload);
}

rk_err rk_jrec_read_ctx(rk_dev *dev, uint64_t joff, const struct rk_jrec_ctx *c, struct rk_jrec *h, uint8_t **rec)
{
	*rec = NULL;
	uint64_t end, jsize = c->jsize;
	if (jsize < RK_JNL_HDR || rk_add_ovf(joff, jsize, &end) || end > rk_dev_size(dev))
		return rk_fail(RK_E_CORRUPT, "%s: journal area %llu+%llu is not on the member", rk_dev_path(dev),
		               (unsigned long long)joff, (unsigned long long)jsize);
	uint8_t *hdr = malloc(RK_JNL_HDR);
	if (!hdr)
		return rk_fail(RK_E_NOMEM, "journal: out of memory");
	rk_err e = rk_dev_pread(dev, hdr, RK_JNL_HDR, joff);
	if (!e)
		e = rk_jrec_decode_ctx(h, hdr, c);
	if (e) {
		free(hdr);
		return e;
	}
	uint8_t *full = realloc(hdr, (size_t)(RK_JNL_HDR + h->payload));
	if (!full) {
		free(hdr);
		return rk_fail(RK_E_NOMEM, "journal: out of memory");
	}
	if (h->payload && (e = rk_dev_pread(dev, full + RK_JNL_HDR, (size_t)h->payload, joff + RK_JNL_HDR))) {
		free(full);
		return e;
	}
	if (!rk_jrec_verify(h, full)) {
		free(full);
		return rk_fail(RK_E_NOSB, "%s: journal record %llu fails its CRC (torn or partial)", rk_dev_path(dev),
		               (unsigned long long)h->seq);
	}
	*rec = full;
	return RK_OK;
}

rk_err rk_jrec_read(rk_dev *dev, uint64_t joff, uint64_t jsize, uint64_t member_size, uint64_t vol_size,
                    uint32_t nroles, uint32_t role, const uint8_t *array_uuid, struct rk_jrec *h, uint8_t **rec)
{
	struct rk_jrec_ctx c = { .jsize = jsize, .member_size = member_size, .vol_size = vol_size, .nroles = nroles,
	                         .role = role, .array_uuid = array_uuid };
	return rk_jrec_read_ctx(dev, joff, &c, h, rec);
}
