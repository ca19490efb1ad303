/* array_write.c: reading and writing an open array's volume: range checks,
 * the first write's superblock step, writes split by geometry mid-reshape
 * and put under the journal as the level needs (spec/journal.md). */
#include "array_int.h"

#include <stdlib.h>

#include "rk_le.h"

static rk_err check_range(const rk_array *a, size_t len, uint64_t off)
{
	uint64_t end;
	if (rk_add_ovf(off, (uint64_t)len, &end) || end > a->size)
		return rk_fail(RK_E_RANGE, "array: bytes [%llu, +%zu) are outside the %llu-byte volume",
		               (unsigned long long)off, len, (unsigned long long)a->size);
	return RK_OK;
}

rk_err rk_array_read(rk_array *a, void *buf, size_t len, uint64_t off)
{
	rk_err e = check_range(a, len, off);
	if (e || !len)
		return e;
	/* batched writes not yet in place are read on top of the members:
	 * under the write lock, so none goes in place (and leaves the batch)
	 * between the two */
	int batched = array_batch_pending(a);
	if (batched)
		pthread_mutex_lock(&a->write_lock);
	e = a->reshape ? rk_resize_reader_read(a->reshape, buf, len, off) : rk_vol_read(a->vol, buf, len, off);
	if (batched) {
		if (!e)
			array_batch_overlay(a, buf, len, off);
		pthread_mutex_unlock(&a->write_lock);
	}
	rk_err s = array_settle(a);
	return e ? e : s;
}

static rk_err begin_write(rk_array *a)
{
	if (!(a->flags & RK_ARRAY_RDWR))
		return rk_fail(RK_E_READONLY, "array: opened read-only");
	if (a->dirty)
		return RK_OK;
	rk_err e = array_journal_begin(a);
	if (!e && a->journal_on && !a->reshape)
		e = array_batch_setup(a);
	if (!e)
		e = array_commit(a, RK_ARRAY_ACTIVE);
	if (e)
		return e;
	a->dirty = 1;
	for (uint32_t i = 0; i < a->nparts; i++)
		if (a->journal_on && array_part_parity(&a->part[i]) && array_geom_journaled(a->part[i].g))
			rk_vol_set_journal(a->part[i].vol, array_journal_hook, &a->part[i], a->journal_max);
	return RK_OK;
}

rk_err rk_array_begin_write(rk_array *a)
{
	pthread_mutex_lock(&a->write_lock);
	rk_err e = begin_write(a);
	pthread_mutex_unlock(&a->write_lock);
	return e;
}

/* Writes [off, off+len) inside part P's range through its engine, under
 * the journal as its level needs (spec/journal.md). */
static rk_err part_write(rk_array *a, struct array_part *pt, const uint8_t *p, size_t len, uint64_t off)
{
	rk_err e;
	int journaled = a->journal_on && array_geom_journaled(pt->g);
	if (journaled && !array_part_parity(pt)) {
		/* mirrors: under an intent record, a bounded piece at a time */
		for (size_t done = 0; done < len;) {
			size_t piece = len - done < JNL_INTENT_PIECE ? len - done : JNL_INTENT_PIECE;
			if ((e = array_journal_cover(a, pt, off + done, piece, 1)))
				return e;
			e = rk_vol_write(pt->vol, p + done, piece, off + done);
			a->journal_unflushed = 1;
			rk_err s = array_settle(a);
			if (e || s)
				return e ? e : s;
			done += piece;
		}
		return RK_OK;
	}
	if (journaled && !array_part_degraded(a, pt)) {
		/* parity, healthy: whole stripes go under an intent record, the
		 * partial stripes at either end through redo records (the hook) */
		uint64_t sd = pt->g->stripe_data, end = off + len;
		uint64_t fs = (off + sd - 1) / sd * sd, fe = end / sd * sd;
		if (fe > fs) {
			if (fs > off) {
				e = rk_vol_write(pt->vol, p, (size_t)(fs - off), off);
				rk_err s = array_settle(a);
				if (e || s)
					return e ? e : s;
			}
			for (uint64_t x = fs; x < fe;) {
				uint64_t piece = fe - x < JNL_INTENT_PIECE ? fe - x : JNL_INTENT_PIECE;
				if (piece > sd && piece % sd)
					piece -= piece % sd;
				if (!array_part_degraded(a, pt) && (e = array_journal_cover(a, pt, x, piece, sd)))
					return e;
				a->writing_full_stripes = 1;
				e = rk_vol_write(pt->vol, p + (x - off), (size_t)piece, x);
				a->writing_full_stripes = 0;
				a->journal_unflushed = 1;
				rk_err s = array_settle(a);
				if (e || s)
					return e ? e : s;
				x += piece;
			}
			if (end > fe) {
				e = rk_vol_write(pt->vol, p + (fe - off), (size_t)(end - fe), fe);
				rk_err s = array_settle(a);
				if (e || s)
					return e ? e : s;
			}
			return RK_OK;
		}
	}
	e = rk_vol_write(pt->vol, p, len, off);
	rk_err s = array_settle(a);
	return e ? e : s;
}

static rk_err array_write(rk_array *a, const void *buf, size_t len, uint64_t off)
{
	rk_err e = check_range(a, len, off);
	if (e)
		return e;
	if ((e = begin_write(a)) || !len)
		return e;
	/* mid-reshape the bytes below the checkpoint go through the new
	 * geometry, the rest through the old (one fixed split per open) */
	const uint8_t *p = buf;
	uint64_t end = off + len;
	for (uint32_t i = 0; i < a->nparts && !e; i++) {
		struct array_part *pt = &a->part[i];
		uint64_t lo = off > pt->lo ? off : pt->lo, hi = end < pt->hi ? end : pt->hi;
		/* small writes wait in the batch (group commit); any other write
		 * commits the batch first, so writes reach the members in order */
		if (lo < hi && !(a->journal_on && array_geom_journaled(pt->g) &&
		                 array_batch_write(a, pt, p + (lo - off), (size_t)(hi - lo), lo, &e)))
			e = part_write(a, pt, p + (lo - off), (size_t)(hi - lo), lo);
	}
	return e;
}

rk_err rk_array_write(rk_array *a, const void *buf, size_t len, uint64_t off)
{
	pthread_mutex_lock(&a->write_lock);
	rk_err e = array_write(a, buf, len, off);
	pthread_mutex_unlock(&a->write_lock);
	return e;
}

/* Commits the batch, then flushes the members unless ALL is 0 and every
 * write since the last flush went through the batch: its records are
 * durable then, so its writes are (a crash replays them); their in-place
 * bytes are flushed before the log restarts (journal_checkpoint) or at
 * close. */
static rk_err array_flush(rk_array *a, int all)
{
	if (!(a->flags & RK_ARRAY_RDWR))
		return RK_OK;
	pthread_mutex_lock(&a->write_lock);
	rk_err e = array_batch_commit(a);
	if (e || (!all && a->journal_on && !array_batch_direct(a))) {
		pthread_mutex_unlock(&a->write_lock);
		return e;
	}
	/* mid-reshape the new geometry's engine spans every member: one flush
	 * each (a failure reaches the other engine through array_on_member_fail) */
	uint32_t w = 0;
	for (uint32_t i = 1; i < a->nparts; i++)
		if (a->part[i].g->nroles > a->part[w].g->nroles)
			w = i;
	e = a->nparts ? rk_vol_flush(a->part[w].vol) : RK_OK;
	if (!e) {
		a->journal_unflushed = 0;
		array_batch_flushed(a);
	}
	rk_err s = array_settle(a);
	pthread_mutex_unlock(&a->write_lock);
	return e ? e : s;
}

rk_err rk_array_flush(rk_array *a)
{
	return array_flush(a, 0);
}

rk_err array_flush_all(rk_array *a)
{
	return array_flush(a, 1);
}
