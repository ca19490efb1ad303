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

/* In-place writes not yet flushed (a->journal_unflushed) made durable on
 * every live member. */
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

/* The log restarts at the start of every member's area: every in-place
 * write made so far is flushed first, so no record before the next one
 * (the new base) is needed again; an open intent window closes. */
static rk_err journal_checkpoint(rk_array *a)
{
	rk_err e = journal_flush_pending(a);
	if (e)
		return e;
	memset(a->jpos, 0, a->nroles * sizeof *a->jpos);
	a->jbase = a->journal_seq + 1;
	a->intent_open = 0;
	return RK_OK;
}

/* Bytes a record of PAYLOAD bytes takes in the log (the next one starts
 * on the next 4096-byte boundary). */
static uint64_t rec_span(uint64_t payload)
{
	return RK_JNL_HDR + (payload + 4095) / 4096 * 4096;
}

/* Encodes a->journal_hdr for role R (payload already in a->journal_buf)
 * and appends it to the role's log.  A member failing with RK_E_IO is
 * failed, not an error. */
static rk_err journal_put(rk_array *a, uint32_t r)
{
	struct rk_jrec *h = a->journal_hdr;
	h->role = r;
	rk_err e = rk_jrec_encode(h, a->journal_buf);
	if (e)
		return e;
	uint64_t at = a->sbs[r]->journal_offset + a->jpos[r];
	a->jpos[r] += rec_span(h->payload);
	e = rk_dev_pwrite(a->devs[r], a->journal_buf, (size_t)(RK_JNL_HDR + h->payload), at);
	if (e == RK_E_IO) {
		array_journal_member_failed(a, r, e);
		return RK_OK;
	}
	return e;
}

/* Makes the records just written durable on the members SKIP does not
 * leave out (a->flush_skip set by the caller), then records in the
 * superblocks any member that failed meanwhile, before a byte goes in
 * place. */
static rk_err journal_sync(rk_array *a)
{
	rk_err e = rk_dev_flush_set(a->devs, a->nroles, a->flush_skip, on_flush_failed, a);
	return e ? e : array_settle(a);
}

/* A new record header of KIND (DATA or INTENT; mid-reshape their _RS
 * forms, tagged with the reshape state), seq SEQ of the commit
 * [FIRST, LAST]. */
static void journal_new_header(rk_array *a, uint32_t kind, uint64_t seq, uint64_t first, uint64_t last)
{
	struct rk_jrec *h = a->journal_hdr;
	memset(h, 0, sizeof *h);
	h->version = 2;
	h->kind = kind;
	if (a->reshape) {
		h->kind = kind == RK_JREC_DATA ? RK_JREC_DATA_RS : RK_JREC_INTENT_RS;
		h->rs_pos = a->rs_pos;
		h->rs_base = a->rs_base;
		h->rs_old = a->rs_old;
	}
	h->nroles = a->nroles;
	h->seq = seq;
	h->nonce = a->jnonce;
	h->base_seq = a->jbase;
	h->first_seq = first;
	h->last_seq = last;
	memcpy(h->array_uuid, a->tmpl->array_uuid, 16);
}

/* Assigns each live segment of SEGS its record within the commit (IDX):
 * a role's segments in order, a new record when one holds RK_JNL_MAX_SEGS
 * or journal_max bytes.  NEED[r]: log bytes role r needs (scratch after
 * it: 2 * nroles more words).  Returns the number of records. */
static uint32_t plan_records(rk_array *a, const struct rk_vol_wseg *segs, uint32_t n, uint32_t *idx, uint64_t *need)
{
	uint64_t *bytes = need + a->nroles;
	uint32_t *cnt = (uint32_t *)(void *)(bytes + a->nroles), *cur = cnt + a->nroles, nrec = 0;
	memset(need, 0, a->nroles * (2 * sizeof(uint64_t) + 2 * sizeof(uint32_t)));
	for (uint32_t i = 0; i < n; i++) {
		uint32_t r = segs[i].role;
		idx[i] = UINT32_MAX;
		if (r >= a->nroles || !array_member_live(a, r))
			continue;
		if (cnt[r] && (cnt[r] == RK_JNL_MAX_SEGS || segs[i].len > a->journal_max - bytes[r])) {
			need[r] += rec_span(bytes[r]);
			cur[r]++;
			cnt[r] = 0;
			bytes[r] = 0;
		}
		cnt[r]++;
		bytes[r] += segs[i].len;
		idx[i] = cur[r];
		if (cur[r] + 1 > nrec)
			nrec = cur[r] + 1;
	}
	for (uint32_t r = 0; r < a->nroles; r++)
		if (cnt[r])
			need[r] += rec_span(bytes[r]);
	return nrec;
}

/* Writes record K of a commit [first, first + nrec) for every role with
 * segments in it. */
static rk_err put_commit_record(rk_array *a, uint32_t kind, const struct rk_vol_wseg *segs, uint32_t n,
                                const uint32_t *idx, uint32_t k, uint64_t first, uint32_t nrec, uint64_t base)
{
	journal_new_header(a, kind, first + k, first, first + nrec - 1);
	struct rk_jrec *h = a->journal_hdr;
	for (uint32_t i = 0; i < n; i++)
		if (idx[i] == k)
			rk_jrec_set_part(h, segs[i].role);
	for (uint32_t r = 0; r < a->nroles; r++) {
		if (!rk_jrec_part(h, r))
			continue;
		h->nsegs = 0;
		h->payload = 0;
		for (uint32_t i = 0; i < n; i++) {
			if (idx[i] != k || segs[i].role != r)
				continue;
			memcpy(a->journal_buf + RK_JNL_HDR + h->payload, segs[i].buf, segs[i].len);
			h->seg[h->nsegs++] = (struct rk_jseg){ .off = base + segs[i].off, .len = segs[i].len };
			h->payload += segs[i].len;
		}
		if (array_member_live(a, r)) {
			a->flush_skip[r] = 0;
			rk_err e = journal_put(a, r);
			if (e)
				return e;
		}
	}
	return RK_OK;
}

/* One commit of DATA records holding the N segments SEGS (member data-area
 * offsets from BASE): appended to each member's log (a checkpoint first
 * when a log has no room), then made durable by one flush.  Any open
 * intent window closes: a later whole-stripe write needs a new one, whose
 * checkpoint keeps these records from being replayed over it. */
rk_err array_journal_data(rk_array *a, const struct rk_vol_wseg *segs, uint32_t n, uint64_t base)
{
	size_t scratch = (size_t)n * sizeof(uint32_t) + a->nroles * (2 * sizeof(uint64_t) + 2 * sizeof(uint32_t));
	uint64_t *need = malloc(scratch);
	if (!need)
		return rk_fail(RK_E_NOMEM, "array: out of memory");
	uint32_t *idx = (uint32_t *)(void *)((uint8_t *)need + a->nroles * (2 * sizeof(uint64_t) + 2 * sizeof(uint32_t)));
	uint32_t nrec = plan_records(a, segs, n, idx, need);
	rk_err e = RK_OK;
	int full = 0;
	for (uint32_t r = 0; r < a->nroles; r++)
		full |= array_member_live(a, r) && need[r] > a->sbs[r]->journal_size - a->jpos[r];
	if (full && !(e = journal_checkpoint(a)))
		for (uint32_t r = 0; r < a->nroles && !e; r++)
			if (array_member_live(a, r) && need[r] > a->sbs[r]->journal_size)
				e = rk_fail(RK_E_INVAL, "journal: a commit of %llu bytes exceeds the %llu-byte journal",
				            (unsigned long long)need[r], (unsigned long long)a->sbs[r]->journal_size);
	a->intent_open = 0;
	uint64_t first = a->journal_seq + 1;
	if (!e && nrec) {
		memset(a->flush_skip, 1, a->nroles);
		for (uint32_t k = 0; k < nrec && !e; k++)
			e = put_commit_record(a, RK_JREC_DATA, segs, n, idx, k, first, nrec, base);
		a->journal_seq = first + nrec - 1;
		if (!e) {
			for (uint32_t r = 0; r < a->nroles; r++)
				a->flush_skip[r] |= !array_member_live(a, r);
			e = journal_sync(a);
		}
	}
	free(need);
	return e;
}

/* The engine's hook (parity levels): a commit of DATA records holding the
 * new bytes of every chunk the members are about to write.  CTX is the
 * part whose engine writes; mid-reshape its offsets are moved to the new
 * data offset's base (DATA_RS). */
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
	rk_err e = array_journal_data(a, segs, n, pt->base);
	if (!e)
		a->journal_unflushed = 1;
	return e;
}

/* A write-intent record naming the volume range [off, off+len) on every
 * live member, durable before the caller writes any of it.  A checkpoint
 * first: no DATA record written before may be replayed over the window's
 * writes (they are not in any record). */
static rk_err journal_write_intent(rk_array *a, uint64_t off, uint64_t len)
{
	rk_err e = journal_checkpoint(a);
	if (e)
		return e;
	uint64_t seq = ++a->journal_seq;
	journal_new_header(a, RK_JREC_INTENT, seq, seq, seq);
	struct rk_jrec *h = a->journal_hdr;
	for (uint32_t r = 0; r < a->nroles; r++)
		if (array_member_live(a, r))
			rk_jrec_set_part(h, r);
	for (uint32_t r = 0; r < a->nroles; r++) {
		if (!array_member_live(a, r))
			continue;
		h->nsegs = 1;
		h->seg[0] = (struct rk_jseg){ .off = off, .len = len };
		h->payload = 0;
		if ((e = journal_put(a, r)))
			return e;
	}
	mark_flush_skip(a, h);
	if ((e = journal_sync(a)))
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

/* The write session's log state once the slots are empty: every log
 * from its start, the session's nonce, records of at most JMAX bytes. */
static rk_err journal_session(rk_array *a, uint64_t jmax)
{
	if (!a->jpos && !(a->jpos = calloc(a->nroles, sizeof *a->jpos)))
		return rk_fail(RK_E_NOMEM, "array: out of memory");
	memset(a->jpos, 0, a->nroles * sizeof *a->jpos);
	a->journal_max = jmax;
	a->journal_seq = 0;
	a->jbase = 1;
	a->jnonce = a->tmpl->events;   /* grows with every session: the log's session mark */
	a->journal_unflushed = 0;
	a->journal_on = 1;
	/* version 2 records (the log): readers that only know one record a
	 * slot must refuse the array until it is clean again */
	a->tmpl->feat_incompat |= RK_FEAT_INCOMPAT_JLOG;
	return RK_OK;
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
	return journal_session(a, jmax);
}
