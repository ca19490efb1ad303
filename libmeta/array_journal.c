/* array_journal.c: writing the journal of an open array (spec/journal.md):
 * emptying the slots at the first write, redo records through the engine's
 * commit hook (parity levels), write-intent records over windows (mirrors,
 * full stripes).  Replay after an unclean stop is array_replay.c. */
#include "array_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rk_test_hooks.h"

int array_geom_journaled(const struct rk_geom *g)
{
	int l = g->level;
	return (l == 1 || l == 10 || l == 4 || l == 5 || l == 6) && g->nroles >= 2;
}

/* Whether any geometry the array's volume is in has redundancy to journal
 * (mid-reshape RAID-0 -> 5: the new part only). */
int array_journal_level(const rk_array *a)
{
	if (!a->nparts)
		return array_geom_journaled(&a->g);
	for (uint32_t i = 0; i < a->nparts; i++)
		if (array_geom_journaled(a->part[i].g))
			return 1;
	return 0;
}

int array_part_parity(const struct array_part *p)
{
	return p->g->level == 4 || p->g->level == 5 || p->g->level == 6;
}

/* Whether a role of P's geometry is down (it writes degraded). */
int array_part_degraded(rk_array *a, const struct array_part *p)
{
	for (uint32_t r = 0; r < p->g->nroles; r++)
		if (!array_member_live(a, r))
			return 1;
	return 0;
}

/* A member failing journal I/O (a pulled cable): the engines stop using it
 * and the fail callback records it like any other member failure. */
void array_journal_member_failed(rk_array *a, uint32_t r, rk_err e)
{
	char msg[200];
	snprintf(msg, sizeof msg, "%s", rk_errmsg());
	array_fail_member(a, r, e, msg);
}

/* Marks in a->flush_skip the members a flush leaves out: those down and,
 * with PARTS, those the record does not name. */
static void mark_flush_skip(rk_array *a, const struct rk_jrec *parts)
{
	pthread_mutex_lock(&a->lock);
	for (uint32_t r = 0; r < a->nroles; r++)
		a->flush_skip[r] = a->down[r] != ARRAY_ROLE_UP || (parts && !rk_jrec_part(parts, r));
	pthread_mutex_unlock(&a->lock);
}

/* rk_dev_flush_set's callback: a member whose flush failed with RK_E_IO. */
static void on_flush_failed(void *ctx, uint32_t r, rk_err e)
{
	array_journal_member_failed(ctx, r, e);
}

/* Before a slot is reused, the in-place writes of its last record must be
 * durable: flush every live member. */
static rk_err journal_flush_pending(rk_array *a)
{
	if (!a->journal_unflushed)
		return RK_OK;
	mark_flush_skip(a, NULL);
	rk_err e = rk_dev_flush_set(a->devs, a->nroles, a->flush_skip, on_flush_failed, a);
	if (!e)
		a->journal_unflushed = 0;
	return e;
}

/* Encodes a->journal_hdr for ROLE (payload already in a->journal_buf) and writes it to the
 * role's slot.  A member failing with RK_E_IO is failed, not an error. */
rk_err array_journal_put(rk_array *a, uint32_t r)
{
	a->journal_hdr->role = r;
	rk_err e = rk_jrec_encode(a->journal_hdr, a->journal_buf);
	if (e)
		return e;
	e = rk_dev_pwrite(a->devs[r], a->journal_buf, (size_t)(RK_JNL_HDR + a->journal_hdr->payload), a->sbs[r]->journal_offset);
	if (e == RK_E_IO) {
		array_journal_member_failed(a, r, e);
		return RK_OK;
	}
	return e;
}

/* Makes the records just written durable, then records in the superblocks
 * any member that failed meanwhile, before a byte goes in place. */
rk_err array_journal_sync(rk_array *a)
{
	mark_flush_skip(a, a->journal_hdr);
	rk_err e = rk_dev_flush_set(a->devs, a->nroles, a->flush_skip, on_flush_failed, a);
	return e ? e : array_settle(a);
}

/* A new record header of KIND (DATA or INTENT; mid-reshape their _RS
 * forms, tagged with the reshape state). */
static void journal_new_header(rk_array *a, uint32_t kind)
{
	memset(a->journal_hdr, 0, sizeof *a->journal_hdr);
	a->journal_hdr->kind = kind;
	if (a->reshape) {
		a->journal_hdr->kind = kind == RK_JREC_DATA ? RK_JREC_DATA_RS : RK_JREC_INTENT_RS;
		a->journal_hdr->rs_pos = a->rs_pos;
		a->journal_hdr->rs_base = a->rs_base;
		a->journal_hdr->rs_old = a->rs_old;
	}
	a->journal_hdr->nroles = a->nroles;
	a->journal_hdr->seq = ++a->journal_seq;
	memcpy(a->journal_hdr->array_uuid, a->tmpl->array_uuid, 16);
}

/* Starts a record of KIND: the slot's previous in-place writes made
 * durable first (it is about to be reused), any open intent window closed,
 * a fresh header with the next seq.  NULL with *E set on a failure. */
struct rk_jrec *array_journal_start(rk_array *a, uint32_t kind, rk_err *e)
{
	if ((*e = journal_flush_pending(a)))
		return NULL;
	a->intent_open = 0;   /* the slot is about to hold this record instead */
	journal_new_header(a, kind);
	return a->journal_hdr;
}

/* The engine's hook (parity levels): one DATA record per member holding the
 * new bytes of every chunk it is about to write.  CTX is the part whose
 * engine writes; mid-reshape its offsets are moved to the new data offset's
 * base (DATA_RS). */
rk_err array_journal_hook(void *ctx, const struct rk_vol_wseg *segs, uint32_t n)
{
	struct array_part *pt = ctx;
	rk_array *a = pt->a;
	if (array_batch_collecting(a))
		return array_batch_collect(a, pt, segs, n);
	/* full stripes of a healthy array under an intent record: a crash is
	 * repaired by resyncing the range from data (spec/journal.md) */
	if (a->writing_full_stripes && a->intent_open && !array_part_degraded(a, pt))
		return RK_OK;
	rk_err e = RK_OK;
	struct rk_jrec *h = array_journal_start(a, RK_JREC_DATA, &e);
	if (!h)
		return e;
	for (uint32_t i = 0; i < n; i++)
		if (segs[i].role < a->nroles && array_member_live(a, segs[i].role))
			rk_jrec_set_part(h, segs[i].role);
	for (uint32_t r = 0; r < a->nroles; r++) {
		if (!rk_jrec_part(h, r) || !array_member_live(a, r))
			continue;
		h->nsegs = 0;
		h->payload = 0;
		for (uint32_t i = 0; i < n; i++) {
			if (segs[i].role != r)
				continue;
			if (h->nsegs == RK_JNL_MAX_SEGS || segs[i].len > a->journal_max - h->payload)
				return rk_fail(RK_E_INVAL, "journal: a commit group exceeds one record (%u segments, %llu bytes)",
				               h->nsegs, (unsigned long long)(h->payload + segs[i].len));
			memcpy(a->journal_buf + RK_JNL_HDR + h->payload, segs[i].buf, segs[i].len);
			h->seg[h->nsegs++] = (struct rk_jseg){ .off = pt->base + segs[i].off, .len = segs[i].len };
			h->payload += segs[i].len;
		}
		if ((e = array_journal_put(a, r)))
			return e;
	}
	if ((e = array_journal_sync(a)))
		return e;
	a->journal_unflushed = 1;
	return RK_OK;
}

/* A write-intent record naming the N volume ranges SEGS on every live
 * member, durable before the caller writes any of them. */
rk_err array_journal_intent_segs(rk_array *a, const struct rk_jseg *segs, uint32_t n)
{
	rk_err e = RK_OK;
	struct rk_jrec *h = array_journal_start(a, RK_JREC_INTENT, &e);
	if (!h)
		return e;
	for (uint32_t r = 0; r < a->nroles; r++)
		if (array_member_live(a, r))
			rk_jrec_set_part(h, r);
	for (uint32_t r = 0; r < a->nroles; r++) {
		if (!array_member_live(a, r))
			continue;
		h->nsegs = n;
		memcpy(h->seg, segs, n * sizeof *segs);
		h->payload = 0;
		if ((e = array_journal_put(a, r)))
			return e;
	}
	return array_journal_sync(a);
}

/* Mirrors: a write-intent record (the volume range) on every live member. */
static rk_err journal_write_intent(rk_array *a, uint64_t off, uint64_t len)
{
	struct rk_jseg seg = { .off = off, .len = len };
	rk_err e = array_journal_intent_segs(a, &seg, 1);
	if (e)
		return e;
	a->intent_open = 1;
	a->intent_lo = off;
	a->intent_hi = off + len;
	return RK_OK;
}

/* Makes sure an intent record covers [off, off+len) (at most
 * JNL_INTENT_PIECE bytes), writing one for a window from OFF when not;
 * STEP rounds the window (stripes).  The window stays inside P's range:
 * mid-reshape it names bytes of one geometry. */
rk_err array_journal_cover(rk_array *a, const struct array_part *p, uint64_t off, uint64_t len, uint64_t step)
{
	if (a->intent_open && off >= a->intent_lo && off + len <= a->intent_hi)
		return RK_OK;
	uint64_t hi = off + (len > JNL_INTENT_PIECE ? len : JNL_INTENT_PIECE);
	if (hi > p->hi)
		hi = p->hi;
	if (step > 1 && hi % step && hi < p->hi)
		hi -= hi % step;
	if (hi < off + len)
		hi = off + len;
	return journal_write_intent(a, off, hi - off);
}

/* Where a journal area below the data must end on a member with
 * superblock SB: its data offset; mid-reshape the new geometry's, which is
 * lower (a reshape keeps the journal below it). */
static uint64_t journal_area_end(const rk_array *a, const struct rk_sb *sb)
{
	return a->reshape && a->rs_base < sb->data_offset ? a->rs_base : sb->data_offset;
}

/* At the first write of an open: sets the journal up (adding it to an array
 * made without one when the metadata area has room) and empties every
 * member's slot, durably, before the superblocks say ACTIVE: from then on
 * every valid record in a slot belongs to this write session. */
rk_err array_journal_begin(rk_array *a)
{
	a->journal_on = 0;
	if (a->journal_off_by_user || !array_journal_level(a))
		return RK_OK;
	int have = (a->tmpl->feat_incompat & RK_FEAT_INCOMPAT_JOURNAL) != 0;
	uint64_t jmax = 4u << 20;   /* bounds the record buffer */
	for (uint32_t r = 0; r < a->nroles; r++) {
		if (!array_member_live(a, r))
			continue;
		const struct rk_sb *sb = a->sbs[r];
		uint64_t room = have ? sb->journal_size : (journal_area_end(a, sb) >= RK_SB_PRIMARY_END
		                                           ? (journal_area_end(a, sb) - RK_SB_PRIMARY_END) / 4096 * 4096 : 0);
		if (room < RK_JNL_MIN_SIZE)
			return RK_OK;   /* no room: unprotected (spec/journal.md) */
		if (room - RK_JNL_HDR < jmax)
			jmax = room - RK_JNL_HDR;
	}
	/* tests: a smaller record bound exercises grouping and column pieces */
	uint64_t test_max = rk_test_hooks_journal_max();
	if (test_max >= 512 && test_max < jmax)
		jmax = test_max;
	if (!have) {
		for (uint32_t r = 0; r < a->nroles; r++) {
			if (!a->devs[r] || !a->sbs[r])
				continue;
			a->sbs[r]->journal_offset = RK_SB_PRIMARY_END;
			a->sbs[r]->journal_size = (journal_area_end(a, a->sbs[r]) - RK_SB_PRIMARY_END) / 4096 * 4096;
		}
		a->tmpl->feat_incompat |= RK_FEAT_INCOMPAT_JOURNAL;
		a->tmpl->journal_offset = RK_SB_PRIMARY_END;
		a->tmpl->journal_size = (journal_area_end(a, a->tmpl) - RK_SB_PRIMARY_END) / 4096 * 4096;
	}
	if (!a->journal_hdr && !(a->journal_hdr = malloc(sizeof *a->journal_hdr)))
		return rk_fail(RK_E_NOMEM, "array: out of memory");
	free(a->journal_buf);
	if (!(a->journal_buf = malloc((size_t)(RK_JNL_HDR + jmax))))
		return rk_fail(RK_E_NOMEM, "array: out of memory");
	memset(a->journal_buf, 0, RK_JNL_HDR);
	for (uint32_t r = 0; r < a->nroles; r++) {
		if (!array_member_live(a, r))
			continue;
		rk_err e = rk_dev_pwrite(a->devs[r], a->journal_buf, RK_JNL_HDR, a->sbs[r]->journal_offset);
		if (e == RK_E_IO)
			array_journal_member_failed(a, r, e);
		else if (e)
			return e;
	}
	mark_flush_skip(a, NULL);
	rk_err e = rk_dev_flush_set(a->devs, a->nroles, a->flush_skip, on_flush_failed, a);
	if (e)
		return e;
	a->journal_max = jmax;
	a->journal_seq = 0;
	a->journal_unflushed = 0;
	a->journal_on = 1;
	return RK_OK;
}
