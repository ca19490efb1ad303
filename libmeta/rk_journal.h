/* rk_journal.h: the write journal's on-disk record (spec/journal.md).  The
 * overlay device a read-only open replays it into is rk_dev_overlay
 * (rk_dev.h, engine/dev_overlay.c).
 *
 * Each member has one journal slot at its superblock's journal_offset.  A
 * record is a 4096-byte header, then the payload: for a DATA record the new
 * bytes of every segment this member is about to write in place, in segment
 * order; an INTENT record (mirrors) has no payload, its segments are volume
 * byte ranges to resync.  One CRC-32 (zlib) covers the header (CRC field
 * zeroed) and the payload, so a torn or partial record never validates.
 * Everything read back is untrusted: rk_jrec_decode bounds-checks every
 * field before the caller reads or replays a byte.
 */
#ifndef RK_JOURNAL_H
#define RK_JOURNAL_H

#include <stddef.h>
#include <stdint.h>
#include "rk_dev.h"
#include "rk_err.h"

#define RK_JNL_MAGIC      "RKJRNL01"
#define RK_JNL_HDR        4096u
#define RK_JNL_MAX_SEGS   200u
#define RK_JNL_PARTS_BYTES 256u          /* participant bitmap: 2048 roles */
#define RK_JNL_MIN_SIZE   (64u * 1024u)  /* smallest usable journal area */

/* Kinds 3 and 4 are written while the array is in the middle of a reshape
 * (spec/journal.md "Mid-reshape"): DATA_RS segments are member offsets from
 * the reshape's new (lower) data offset, so one base serves both
 * geometries; both carry a tag (reshape_pos and the two data offsets) and
 * are replayed only by an array in that very reshape state, never by one
 * outside a reshape (and kinds 1, 2 never by one inside). */
enum rk_jrec_kind { RK_JREC_DATA = 1, RK_JREC_INTENT = 2, RK_JREC_DATA_RS = 3, RK_JREC_INTENT_RS = 4 };

static inline int rk_jrec_is_data(uint32_t kind)
{
	return kind == RK_JREC_DATA || kind == RK_JREC_DATA_RS;
}

struct rk_jseg {
	uint64_t off;   /* DATA: member data-area offset (DATA_RS: from rs_base); INTENT: volume offset */
	uint64_t len;
};

struct rk_jrec {
	uint32_t version;               /* 1: one record a slot; 2: the log (0 encodes as 1) */
	uint32_t kind;
	uint32_t role;                  /* the member this record is for */
	uint32_t nroles;
	uint64_t seq;                   /* increases within a write session */
	uint8_t  array_uuid[16];
	uint8_t  parts[RK_JNL_PARTS_BYTES];  /* bit r: role r has a record of this seq */
	uint32_t nsegs;
	uint64_t payload;               /* DATA: sum of segment lengths; INTENT: 0 */
	struct rk_jseg seg[RK_JNL_MAX_SEGS];
	/* kinds 3, 4 only (0 otherwise): the reshape state it was written in */
	uint64_t rs_pos;                /* reshape_pos */
	uint64_t rs_base;               /* the new geometry's data offset (the lower one) */
	uint64_t rs_old;                /* the old geometry's data offset */
	/* version 2 only (version 1 decodes as base = first = last = seq):
	 * the log's session, the first record whose in-place writes may not be
	 * durable yet (base), and the records written with this one, all made
	 * durable by one flush (first..last) */
	uint64_t nonce, base_seq, first_seq, last_seq;
};

static inline int rk_jrec_part(const struct rk_jrec *h, uint32_t r)
{
	return r < RK_JNL_PARTS_BYTES * 8 && (h->parts[r / 8] >> (r % 8)) & 1;
}
static inline void rk_jrec_set_part(struct rk_jrec *h, uint32_t r)
{
	if (r < RK_JNL_PARTS_BYTES * 8)
		h->parts[r / 8] |= (uint8_t)(1u << (r % 8));
}

/* Encodes H into REC[0, RK_JNL_HDR) and computes the CRC over the header
 * and the H->payload bytes already at REC + RK_JNL_HDR.  H->payload must be
 * the sum of the segment lengths for DATA, 0 for INTENT; nsegs <= MAX.
 * Kinds 3, 4 also store the rs_* tag (rs_old > rs_base). */
rk_err rk_jrec_encode(const struct rk_jrec *h, uint8_t *rec);

/* Decodes the header in HDR (RK_JNL_HDR bytes) into H and checks it
 * against what it must describe: a journal of JSIZE bytes (the whole record
 * must fit), member data areas of MEMBER_SIZE bytes (DATA segments) or a
 * volume of VOL_SIZE bytes (INTENT segments), NROLES roles, ROLE the member
 * it was read from, ARRAY_UUID.  RK_E_NOSB for an empty or foreign slot
 * (no magic), RK_E_CORRUPT with a sentence otherwise.  The CRC is checked
 * by rk_jrec_verify once the payload is read. */
rk_err rk_jrec_decode(struct rk_jrec *h, const uint8_t *hdr, uint64_t jsize, uint64_t member_size,
                      uint64_t vol_size, uint32_t nroles, uint32_t role, const uint8_t *array_uuid);

/* What a record read from one member must describe (rk_jrec_decode_ctx).
 * Outside a reshape (reshaping 0) only kinds 1, 2 are records, as
 * rk_jrec_decode checks them.  Mid-reshape (reshaping 1) only kinds 3, 4
 * whose tag equals rs_pos, rs_base, rs_old (rs_old > rs_base); a DATA_RS
 * segment must lie inside the new data area [0, rs_new_size) or inside the
 * old one [rs_old - rs_base, + rs_old_size) (offsets from rs_base).  A
 * record of the other kind family or of another reshape state is no record
 * for this array (RK_E_NOSB). */
struct rk_jrec_ctx {
	uint64_t jsize;                 /* journal area bytes (the whole record must fit) */
	uint64_t member_size;           /* data area bytes (kind 1 segments) */
	uint64_t vol_size;              /* volume bytes (kinds 2, 4 segments) */
	uint32_t nroles, role;          /* roles the records name; the member read */
	const uint8_t *array_uuid;
	int reshaping;
	uint64_t rs_pos, rs_base, rs_old;
	uint64_t rs_new_size, rs_old_size;
};
rk_err rk_jrec_decode_ctx(struct rk_jrec *h, const uint8_t *hdr, const struct rk_jrec_ctx *c);

/* rk_jrec_read with a context (rk_jrec_decode_ctx); JOFF the slot's offset. */
rk_err rk_jrec_read_ctx(rk_dev *dev, uint64_t joff, const struct rk_jrec_ctx *c, struct rk_jrec *h, uint8_t **rec);

/* 1 when REC (RK_JNL_HDR + h->payload bytes, H decoded from it) carries a
 * valid CRC. */
int rk_jrec_verify(const struct rk_jrec *h, const uint8_t *rec);

/* Reads and validates the record in the slot at JOFF (JSIZE bytes) of DEV.
 * On RK_OK *REC holds the whole record (malloc'ed, RK_JNL_HDR + payload).
 * RK_E_NOSB: no valid record (empty, torn, foreign, stale); RK_E_IO etc.
 * on a read failure. */
rk_err rk_jrec_read(rk_dev *dev, uint64_t joff, uint64_t jsize, uint64_t member_size, uint64_t vol_size,
                    uint32_t nroles, uint32_t role, const uint8_t *array_uuid, struct rk_jrec *h, uint8_t **rec);

#endif
