/* array_batch.c: group commit of the write journal (spec/journal.md
 * "Group commit").  Small writes (inside one stripe on parity levels, up to
 * JB_MAXLEN on mirrors) are not written in place at once: parity levels
 * run the engine's read-modify-write with the journal hook collecting the
 * new data and parity bytes instead of letting them go in place, mirrors
 * keep the caller's bytes.  Reads see the pending writes on top of the
 * members.  The batch is committed by rk_array_flush, by any write that is
 * not batched, or when it is full: ONE record per member holding every
 * batched write's bytes (parity) or one intent record naming every range
 * (mirrors), one flush, then the in-place writes.  The protocol per batch
 * is the one of a single redo record (the slot's previous in-place writes
 * flushed first, records durable before any byte goes in place), so replay
 * is unchanged; a write not yet flushed by the caller may be lost on a
 * crash (it never reached a member), never half applied.  All calls hold
 * a->write_lock. */
#include "array_int.h"

#include <stdlib.h>
#include <string.h>

#define JB_MAXW    64u           /* writes per batch */
#define JB_MAXLEN  (64u << 10)   /* the largest write batched */
#define JB_VCAP    (1u << 20)    /* the batched writes' bytes (reads see them) */
#define JB_MAXSEGS 1024u         /* collected member segments */
#define JB_POOL    (2u << 20)    /* their bytes */

struct jb_write {
	uint64_t off, len, at;   /* volume range; its bytes at vdata + at */
	uint64_t stripe;         /* parity levels: its stripe (one batched write per stripe) */
};

struct jb_seg {
	uint32_t role;
	uint64_t off, len, at;   /* member data-area range; its bytes at pool + at */
};

struct array_batch {
	uint32_t nw, nseg;
	uint64_t vused, pused;
	int collecting;          /* the hook collects instead of letting bytes go in place */
	int collected;           /* it did (the engine's write stopped there) */
	int overflow;            /* the group did not fit: the write goes unbatched */
	struct jb_write w[JB_MAXW];
	struct jb_seg seg[JB_MAXSEGS];
	uint32_t *rsegs;         /* per role: segments in the batch */
	uint64_t *rbytes;        /* per role: payload bytes in the batch */
	uint8_t *vdata, *pool;
};

rk_err array_batch_setup(rk_array *a)
{
	if (a->jb)
		return RK_OK;
	size_t n = a->nroles;
	size_t sz = sizeof(struct array_batch) + n * (sizeof(uint32_t) + sizeof(uint64_t)) + JB_VCAP + JB_POOL + 16;
	struct array_batch *b = calloc(1, sz);
	if (!b)
		return rk_fail(RK_E_NOMEM, "array: out of memory");
	uint8_t *p = (uint8_t *)(b + 1);
	b->rbytes = (uint64_t *)(void *)p;
	p += n * sizeof(uint64_t);
	b->rsegs = (uint32_t *)(void *)p;
	p += n * sizeof(uint32_t);
	b->vdata = p;
	b->pool = p + JB_VCAP;
	a->jb = b;
	return RK_OK;
}

int array_batch_collecting(const rk_array *a)
{
	return a->jb && a->jb->collecting;
}

int array_batch_pending(const rk_array *a)
{
	return a->jb && __atomic_load_n(&a->jb->nw, __ATOMIC_ACQUIRE) != 0;
}

/* Drops every collected segment from index NSEG on (a write that is not
 * batched after all). */
static void batch_rollback(struct array_batch *b, uint32_t nseg, uint64_t pused)
{
	for (uint32_t i = nseg; i < b->nseg; i++) {
		b->rsegs[b->seg[i].role]--;
		b->rbytes[b->seg[i].role] -= b->seg[i].len;
	}
	b->nseg = nseg;
	b->pused = pused;
}

static void batch_clear(rk_array *a)
{
	struct array_batch *b = a->jb;
	memset(b->rsegs, 0, a->nroles * sizeof *b->rsegs);
	memset(b->rbytes, 0, a->nroles * sizeof *b->rbytes);
	b->nseg = 0;
	b->pused = b->vused = 0;
	__atomic_store_n(&b->nw, 0, __ATOMIC_RELEASE);
}

/* The journal hook while collecting: copies the group's live segments into
 * the batch and stops the engine's write before anything goes in place
 * (RK_E_BUSY, recognised by b->collected).  A group that does not fit
 * sets b->overflow. */
rk_err array_batch_collect(rk_array *a, const struct array_part *pt, const struct rk_vol_wseg *segs, uint32_t n)
{
	struct array_batch *b = a->jb;
	if (b->collected) {   /* a second group: this write is not one group */
		b->overflow = 1;
		return RK_E_BUSY;
	}
	b->collected = 1;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t r = segs[i].role;
		if (r >= a->nroles || !array_member_live(a, r))
			continue;
		if (b->nseg == JB_MAXSEGS || segs[i].len > JB_POOL - b->pused || b->rsegs[r] == RK_JNL_MAX_SEGS ||
		    segs[i].len > a->journal_max - b->rbytes[r]) {
			b->overflow = 1;
			return RK_E_BUSY;
		}
		memcpy(b->pool + b->pused, segs[i].buf, segs[i].len);
		b->seg[b->nseg++] = (struct jb_seg){ .role = r, .off = pt->base + segs[i].off, .len = segs[i].len,
		                                     .at = b->pused };
		b->pused += segs[i].len;
		b->rsegs[r]++;
		b->rbytes[r] += segs[i].len;
	}
	return RK_E_BUSY;
}

/* Whether the segments from index FROM carry every data byte of volume
 * range [off, off+len) (the engine handed the whole write to one group). */
static int batch_covers(rk_array *a, const struct array_part *pt, uint32_t from, uint64_t off, uint64_t len)
{
	struct array_batch *b = a->jb;
	for (uint64_t x = off; x < off + len;) {
		struct rk_loc loc;
		uint64_t run = 0;
		if (rk_geom_map(pt->g, x, &loc, &run) || run == 0)
			return 0;
		uint64_t piece = off + len - x < run ? off + len - x : run;
		int found = 0;
		for (uint32_t i = from; i < b->nseg && !found; i++)
			found = b->seg[i].role == loc.role && b->seg[i].off <= loc.member_off &&
			        loc.member_off + piece <= b->seg[i].off + b->seg[i].len;
		if (!found)
			return 0;
		x += piece;
	}
	return 1;
}

/* Whether a write of LEN at OFF through part PT may be batched at all. */
static int batchable(rk_array *a, const struct array_part *pt, size_t len, uint64_t off)
{
	if (!a->jb || !a->journal_on || a->nparts != 1 || a->reshape || !array_geom_journaled(pt->g) || !len ||
	    len > JB_MAXLEN)
		return 0;
	if (!array_part_parity(pt))
		return 1;
	uint64_t sd = pt->g->stripe_data;
	return off / sd == (off + len - 1) / sd;
}

/* Whether the batch has room for one more such write (else commit it). */
static int batch_room(rk_array *a, const struct array_part *pt, size_t len, uint64_t off)
{
	struct array_batch *b = a->jb;
	if (b->nw == JB_MAXW || len > JB_VCAP - b->vused)
		return 0;
	if (!array_part_parity(pt))
		return 1;
	uint64_t stripe = off / pt->g->stripe_data, chunk = pt->g->chunk;
	for (uint32_t i = 0; i < b->nw; i++)
		if (b->w[i].stripe == stripe)
			return 0;   /* its read-modify-write must see the first one in place */
	if (b->nseg + a->nroles > JB_MAXSEGS || len + 2 * chunk > JB_POOL - b->pused)
		return 0;
	for (uint32_t r = 0; r < a->nroles; r++)
		if (b->rsegs[r] + 1 > RK_JNL_MAX_SEGS || b->rbytes[r] + chunk > a->journal_max)
			return 0;
	return 1;
}

/* Parity levels: runs the engine's read-modify-write of the write with the
 * hook collecting; 1 when the whole write went into the batch. */
static int batch_collect_write(rk_array *a, struct array_part *pt, const uint8_t *p, size_t len, uint64_t off,
                               rk_err *err)
{
	struct array_batch *b = a->jb;
	uint32_t nseg0 = b->nseg;
	uint64_t pused0 = b->pused;
	b->collecting = 1;
	b->collected = b->overflow = 0;
	rk_err e = rk_vol_write(pt->vol, p, len, off);
	b->collecting = 0;
	rk_err s = array_settle(a);
	if (b->collected && !b->overflow && batch_covers(a, pt, nseg0, off, len) && !s)
		return 1;
	batch_rollback(b, nseg0, pused0);
	if (!b->collected && (e || s)) {
		*err = e ? e : s;   /* the engine failed before any group (reads) */
		return -1;
	}
	return 0;
}

/* Adds the write of LEN bytes at OFF through part PT (the caller's bytes P)
 * to the batch when it may be batched: returns 1 (batched, *ERR set),
 * or 0 when the caller must write it itself (the batch already committed). */
int array_batch_write(rk_array *a, struct array_part *pt, const uint8_t *p, size_t len, uint64_t off, rk_err *err)
{
	*err = RK_OK;
	if (!batchable(a, pt, len, off))
		return (*err = array_batch_commit(a)) ? 1 : 0;
	struct array_batch *b = a->jb;
	if (!batch_room(a, pt, len, off) && (*err = array_batch_commit(a)))
		return 1;
	if (array_part_parity(pt)) {
		int got = batch_collect_write(a, pt, p, len, off, err);
		if (got < 0)
			return 1;
		if (!got)
			return (*err = array_batch_commit(a)) ? 1 : 0;
	}
	memcpy(b->vdata + b->vused, p, len);
	b->w[b->nw] = (struct jb_write){ .off = off, .len = len, .at = b->vused, .stripe = off / pt->g->stripe_data };
	b->vused += len;
	__atomic_store_n(&b->nw, b->nw + 1, __ATOMIC_RELEASE);
	return 1;
}

/* Applies the batched writes overlapping [off, off+len) to BUF (a read of
 * the members), in the order they were made. */
void array_batch_overlay(rk_array *a, uint8_t *buf, size_t len, uint64_t off)
{
	struct array_batch *b = a->jb;
	for (uint32_t i = 0; b && i < b->nw; i++) {
		uint64_t lo = b->w[i].off > off ? b->w[i].off : off;
		uint64_t we = b->w[i].off + b->w[i].len, hi = we < off + len ? we : off + len;
		if (lo < hi)
			memcpy(buf + (lo - off), b->vdata + b->w[i].at + (lo - b->w[i].off), (size_t)(hi - lo));
	}
}

/* Parity levels: one DATA record per member with every collected segment
 * of that member, durable, then the segments in place. */
static rk_err commit_parity(rk_array *a)
{
	struct array_batch *b = a->jb;
	rk_err e = RK_OK;
	struct rk_jrec *h = array_journal_start(a, RK_JREC_DATA, &e);
	if (!h)
		return e;
	for (uint32_t i = 0; i < b->nseg; i++)
		if (array_member_live(a, b->seg[i].role))
			rk_jrec_set_part(h, b->seg[i].role);
	for (uint32_t r = 0; r < a->nroles; r++) {
		if (!rk_jrec_part(h, r) || !array_member_live(a, r))
			continue;
		h->nsegs = 0;
		h->payload = 0;
		for (uint32_t i = 0; i < b->nseg; i++) {
			const struct jb_seg *s = &b->seg[i];
			if (s->role != r)
				continue;
			memcpy(a->journal_buf + RK_JNL_HDR + h->payload, b->pool + s->at, (size_t)s->len);
			h->seg[h->nsegs++] = (struct rk_jseg){ .off = s->off, .len = s->len };
			h->payload += s->len;
		}
		if ((e = array_journal_put(a, r)))
			return e;
	}
	if ((e = array_journal_sync(a)))
		return e;
	a->journal_unflushed = 1;
	for (uint32_t i = 0; i < b->nseg; i++) {
		const struct jb_seg *s = &b->seg[i];
		if (!array_member_live(a, s->role))
			continue;
		e = rk_dev_pwrite(a->devs[s->role], b->pool + s->at, (size_t)s->len, a->data_off[s->role] + s->off);
		if (e == RK_E_IO)
			array_journal_member_failed(a, s->role, e);
		else if (e)
			return e;
	}
	if (!rk_geom_readable(&a->g, a->down))
		return rk_fail(RK_E_TOOFEW, "array: too few members left to write (members failed during the write)");
	return RK_OK;
}

/* Mirrors: one intent record naming every batched range, then the writes. */
static rk_err commit_mirror(rk_array *a)
{
	struct array_batch *b = a->jb;
	struct rk_jseg segs[JB_MAXW];
	for (uint32_t i = 0; i < b->nw; i++)
		segs[i] = (struct rk_jseg){ .off = b->w[i].off, .len = b->w[i].len };
	rk_err e = array_journal_intent_segs(a, segs, b->nw);
	for (uint32_t i = 0; i < b->nw && !e; i++) {
		e = rk_vol_write(a->part[0].vol, b->vdata + b->w[i].at, (size_t)b->w[i].len, b->w[i].off);
		a->journal_unflushed = 1;
		rk_err s = array_settle(a);
		e = e ? e : s;
	}
	return e;
}

rk_err array_batch_commit(rk_array *a)
{
	struct array_batch *b = a->jb;
	if (!b || !b->nw)
		return RK_OK;
	rk_err e = array_part_parity(&a->part[0]) ? commit_parity(a) : commit_mirror(a);
	batch_clear(a);
	rk_err s = array_settle(a);
	return e ? e : s;
}
