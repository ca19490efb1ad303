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
#include "rk_parity.h"

#include <stdlib.h>
#include <string.h>

#define JB_MAXW    512u          /* writes per batch */
#define JB_MAXLEN  (64u << 10)   /* the largest write batched */
#define JB_VCAP    (4u << 20)    /* the batched writes' bytes (reads see them) */
#define JB_MAXSEGS 4096u         /* collected member segments */
#define JB_POOL    (8u << 20)    /* their bytes (each member's share fits its log) */

struct jb_write {
	uint64_t off, len, at;   /* volume range; its bytes at vdata + at */
	uint64_t stripe;         /* parity levels: its stripe (one batched write per stripe) */
};

struct jb_seg {
	uint32_t role;
	int data;                /* data (1) or parity (0) */
	uint64_t off, len, at;   /* member data-area range; its bytes at pool + at */
};

struct array_batch {
	uint32_t nw, nseg;
	uint64_t vused, pused;
	int collecting;          /* the hook collects instead of letting bytes go in place */
	int collected;           /* it did (the engine's write stopped there) */
	int overflow;            /* the group did not fit: the write goes unbatched */
	int direct;              /* a write not batched since the last flush of the members */
	size_t size;             /* bytes allocated (with the buffers after the struct) */
	struct jb_write w[JB_MAXW];
	struct jb_seg seg[JB_MAXSEGS];
	uint32_t *rsegs;         /* per role: segments in the batch */
	uint64_t *rbytes;        /* per role: payload bytes in the batch */
	uint8_t *vdata, *pool;
};

/* One batch buffer kept from a closed array for the next (its pages stay
 * mapped: a program opening arrays one after another does not fault them
 * in again each time). */
static struct {
	pthread_mutex_t lock;
	void *buf;
	size_t size;
} spare = { PTHREAD_MUTEX_INITIALIZER, NULL, 0 };

rk_err array_batch_setup(rk_array *a)
{
	if (a->jb)
		return RK_OK;
	size_t n = a->nroles;
	size_t head = sizeof(struct array_batch) + n * (sizeof(uint32_t) + sizeof(uint64_t));
	size_t size = head + JB_VCAP + JB_POOL;
	struct array_batch *b = NULL;
	pthread_mutex_lock(&spare.lock);
	if (spare.buf && spare.size >= size) {
		b = spare.buf;
		size = spare.size;
		spare.buf = NULL;
	}
	pthread_mutex_unlock(&spare.lock);
	/* the byte buffers are not cleared: pages are touched only as used */
	if (!b && !(b = malloc(size)))
		return rk_fail(RK_E_NOMEM, "array: out of memory");
	memset(b, 0, head);
	b->size = size;
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

void array_batch_free(rk_array *a)
{
	struct array_batch *b = a->jb;
	a->jb = NULL;
	if (!b)
		return;
	pthread_mutex_lock(&spare.lock);
	if (!spare.buf) {
		spare.buf = b;
		spare.size = b->size;
		b = NULL;
	}
	pthread_mutex_unlock(&spare.lock);
	free(b);
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
		if (b->nseg == JB_MAXSEGS || segs[i].len > JB_POOL - b->pused || segs[i].len > a->journal_max) {
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
 * range [off, off+len) (the engine handed the whole write to one group);
 * marks those segments as data. */
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
			if (b->seg[i].role == loc.role && b->seg[i].off <= loc.member_off &&
			    loc.member_off + piece <= b->seg[i].off + b->seg[i].len)
				found = b->seg[i].data = 1;
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

/* Whether the batch has room for one more write of LEN bytes: its bytes,
 * its segments and each member's share of the log (else commit first). */
static int batch_room(rk_array *a, const struct array_part *pt, size_t len)
{
	struct array_batch *b = a->jb;
	/* a member's most from this write: its column range in the chunk */
	uint64_t chunk = pt->g->chunk > len + 8192 ? len + 8192 : pt->g->chunk > len ? pt->g->chunk : len;
	if (b->nw == JB_MAXW || len > JB_VCAP - b->vused || b->nseg + 2 * a->nroles + 2 > JB_MAXSEGS ||
	    (uint64_t)len * a->nroles + 2 * chunk > JB_POOL - b->pused)
		return 0;
	for (uint32_t r = 0; r < a->nroles; r++) {
		if (!a->sbs[r] || !array_member_live(a, r))
			continue;
		uint64_t hdrs = ((uint64_t)b->rsegs[r] / RK_JNL_MAX_SEGS + 2) * 2 * RK_JNL_HDR;
		if (b->rbytes[r] + hdrs + 2 * chunk > a->sbs[r]->journal_size)
			return 0;
	}
	return 1;
}

/* Whether segment S overlaps [off, off+len) of the same role. */
static int seg_overlaps(const struct jb_seg *s, uint32_t role, uint64_t off, uint64_t len)
{
	return s->role == role && s->off < off + len && off < s->off + s->len;
}

/* VIEW (LEN bytes of role R's member data area at OFF, read from the
 * member) with the batch's segments [0, N) of that role and kind DATA
 * laid over it in order (the latest wins).  Returns whether any did. */
static int overlay_segs(const struct array_batch *b, uint32_t n, uint32_t r, int data, uint8_t *view, uint64_t off,
                        uint64_t len)
{
	int any = 0;
	for (uint32_t i = 0; i < n; i++) {
		const struct jb_seg *o = &b->seg[i];
		if (o->data != data || !seg_overlaps(o, r, off, len))
			continue;
		uint64_t lo = o->off > off ? o->off : off, hi = o->off + o->len < off + len ? o->off + o->len : off + len;
		memcpy(view + (lo - off), b->pool + o->at + (lo - o->off), (size_t)(hi - lo));
		any = 1;
	}
	return any;
}

/* Reads LEN bytes of role R at member data-area offset OFF into DISK and
 * makes VIEW the same bytes with the batch's first N segments of kind DATA
 * over them.  *ANY: some segment did. */
static rk_err disk_and_view(rk_array *a, uint32_t n, uint32_t r, int data, uint64_t off, uint64_t len, uint8_t *disk,
                            uint8_t *view, int *any)
{
	rk_err e = rk_dev_pread(a->devs[r], disk, (size_t)len, a->data_off[r] + off);
	if (e == RK_E_IO)   /* a pulled member: failed; the write goes unbatched */
		array_journal_member_failed(a, r, e);
	if (e)
		return e;
	memcpy(view, disk, (size_t)len);
	*any = overlay_segs(a->jb, n, r, data, view, off, len);
	return RK_OK;
}

/* Q's coefficient of data role B in the stripe holding member byte OFF
 * (g^slot, as md builds the syndrome); 1 for P. */
static uint8_t parity_coef(rk_array *a, const struct rk_geom *g, uint32_t p, uint32_t b, uint64_t off)
{
	uint64_t voff;
	enum rk_blk_kind kind;
	if (rk_geom_unmap(g, p, off, &voff, &kind) || kind != RK_BLK_Q)
		return 1;
	uint32_t *slot = calloc(2 * (size_t)a->nroles, sizeof *slot);
	struct rk_stripe_map m = { .vol_role = slot + a->nroles, .slot = slot };
	uint8_t c = 1;
	if (slot && !rk_geom_stripe_map(g, voff / g->stripe_data, &m) && b < a->nroles)
		c = rk_gf_exp(slot[b]);
	free(slot);
	return c;
}

/* The member bytes [*lo, *hi) of ROLE that volume range [off, off+len)
 * (inside one stripe: one piece a role) writes; empty when none. */
static void written_range(const struct rk_geom *g, uint64_t off, uint64_t len, uint32_t role, uint64_t *lo,
                          uint64_t *hi)
{
	*lo = *hi = 0;
	for (uint64_t x = off; x < off + len;) {
		struct rk_loc loc;
		uint64_t run = 0;
		if (rk_geom_map(g, x, &loc, &run) || !run)
			return;
		uint64_t piece = off + len - x < run ? off + len - x : run;
		if (loc.role == role) {
			*lo = loc.member_off;
			*hi = loc.member_off + piece;
			return;
		}
		x += piece;
	}
}

/* A parity segment the engine computed from the members (index K; the new
 * write's segments are [nseg0, nseg), its volume range [off, off+len))
 * made to include the batched writes not yet in place.  Parity is linear
 * (XOR; Q multiplies each data block by its coefficient), so the right
 * bytes are the engine's, XOR the batch's change of that parity (batched
 * parity XOR member parity), XOR the part of that change made by batched
 * data the new write overwrites (the engine read the member's old bytes
 * there, not the batch's). */
static rk_err fix_parity(rk_array *a, const struct rk_geom *g, uint32_t k, uint32_t nseg0, uint64_t off, uint64_t len)
{
	struct array_batch *b = a->jb;
	const struct jb_seg ns = b->seg[k];
	uint8_t *disk = malloc((size_t)ns.len * 2), *view = disk + ns.len, *p = b->pool + ns.at;
	if (!disk)
		return rk_fail(RK_E_NOMEM, "array: out of memory");
	int any = 0;
	rk_err e = disk_and_view(a, nseg0, ns.role, 0, ns.off, ns.len, disk, view, &any);
	for (uint64_t x = 0; any && !e && x < ns.len; x++)
		p[x] ^= view[x] ^ disk[x];
	for (uint32_t d = nseg0; d < b->nseg && !e; d++) {
		const struct jb_seg *ds = &b->seg[d];
		uint64_t wlo, whi;
		written_range(g, off, len, ds->role, &wlo, &whi);
		uint64_t lo = wlo > ns.off ? wlo : ns.off, hi = whi < ns.off + ns.len ? whi : ns.off + ns.len;
		if (!ds->data || lo >= hi)
			continue;
		e = disk_and_view(a, nseg0, ds->role, 1, lo, hi - lo, disk, view, &any);
		uint8_t c = any ? parity_coef(a, g, ns.role, ds->role, ns.off) : 1;
		for (uint64_t x = 0; any && !e && x < hi - lo; x++)
			p[lo - ns.off + x] ^= rk_gf_mul(c, view[x] ^ disk[x]);
	}
	free(disk);
	return e;
}

/* A data segment of the new write (index D) whose bytes outside the
 * write itself (the engine's rounding, read from the member) were changed
 * by the batch: those bytes become the batch's (the engine's parity left
 * them unchanged, and the batch's parity change already counts them). */
static rk_err fix_data(rk_array *a, const struct rk_geom *g, uint32_t d, uint32_t nseg0, uint64_t off, uint64_t len)
{
	struct array_batch *b = a->jb;
	const struct jb_seg ds = b->seg[d];
	uint8_t *view = malloc((size_t)ds.len);
	if (!view)
		return rk_fail(RK_E_NOMEM, "array: out of memory");
	uint64_t wlo, whi;
	written_range(g, off, len, ds.role, &wlo, &whi);
	memcpy(view, b->pool + ds.at, (size_t)ds.len);
	overlay_segs(b, nseg0, ds.role, 1, view, ds.off, ds.len);
	for (uint64_t x = ds.off; x < ds.off + ds.len; x++)
		if (x < wlo || x >= whi)
			b->pool[ds.at + (x - ds.off)] = view[x - ds.off];
	free(view);
	return RK_OK;
}

/* After collecting a write (volume range [off, off+len)): its segments
 * corrected for the batch (fix_parity, fix_data).  0 with *ERR on a
 * failure. */
static int merge_parity(rk_array *a, const struct rk_geom *g, uint32_t nseg0, uint64_t off, uint64_t len, rk_err *err)
{
	struct array_batch *b = a->jb;
	if (!nseg0)
		return 1;
	for (uint32_t k = nseg0; k < b->nseg && !*err; k++)
		*err = b->seg[k].data ? RK_OK : fix_parity(a, g, k, nseg0, off, len);
	for (uint32_t k = nseg0; k < b->nseg && !*err; k++)
		*err = b->seg[k].data ? fix_data(a, g, k, nseg0, off, len) : RK_OK;
	return !*err;
}

/* Parity levels: runs the engine's read-modify-write of the write with the
 * hook collecting.  1 when the whole write went into the batch; 0 when it
 * did not (nothing collected kept); -1 on an error (*ERR). */
static int batch_collect_parity(rk_array *a, struct array_part *pt, const uint8_t *p, size_t len, uint64_t off,
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
	if (b->collected && !b->overflow && !s && batch_covers(a, pt, nseg0, off, len) &&
	    merge_parity(a, pt->g, nseg0, off, len, err))
		return 1;
	batch_rollback(b, nseg0, pused0);
	if (*err == RK_E_IO)
		*err = RK_OK;   /* the member is failed: written unbatched, degraded */
	if (*err || (!b->collected && (e || s))) {
		*err = *err ? *err : e ? e : s;   /* the engine failed before any group (reads) */
		return -1;
	}
	return 0;
}

/* Mirrors: the write's bytes for every live copy, from the geometry. */
static int batch_collect_mirror(rk_array *a, const struct array_part *pt, const uint8_t *p, size_t len, uint64_t off)
{
	struct array_batch *b = a->jb;
	uint32_t nseg0 = b->nseg;
	uint64_t pused0 = b->pused;
	struct rk_loc locs[16];
	for (uint64_t x = off; x < off + len;) {
		struct rk_loc loc;
		uint64_t run = 0;
		if (rk_geom_map(pt->g, x, &loc, &run) || !run)
			break;
		uint64_t piece = off + len - x < run ? off + len - x : run;
		uint32_t nc = rk_geom_copies(pt->g, x, locs, 16), live = 0;
		for (uint32_t c = 0; c < nc; c++) {
			uint32_t r = locs[c].role;
			if (r >= a->nroles || !array_member_live(a, r))
				continue;
			if (b->nseg == JB_MAXSEGS || piece > JB_POOL - b->pused || piece > a->journal_max)
				goto undo;
			memcpy(b->pool + b->pused, p + (x - off), (size_t)piece);
			b->seg[b->nseg++] = (struct jb_seg){ .role = r, .data = 1, .off = locs[c].member_off, .len = piece,
			                                     .at = b->pused };
			b->pused += piece;
			b->rsegs[r]++;
			b->rbytes[r] += piece;
			live++;
		}
		if (!live || nc == 16)
			goto undo;
		x += piece;
	}
	return 1;
undo:
	batch_rollback(b, nseg0, pused0);
	return 0;
}

/* Collects the write into the batch: 1 done, 0 not batchable after all,
 * -1 error. */
static int batch_collect(rk_array *a, struct array_part *pt, const uint8_t *p, size_t len, uint64_t off, rk_err *err)
{
	if (!array_part_parity(pt))
		return batch_collect_mirror(a, pt, p, len, off);
	return batch_collect_parity(a, pt, p, len, off, err);
}

/* Adds the write of LEN bytes at OFF through part PT (the caller's bytes P)
 * to the batch when it may be batched: returns 1 (batched, or failed with
 * *ERR), or 0 when the caller must write it itself (any batch committed
 * first). */
int array_batch_write(rk_array *a, struct array_part *pt, const uint8_t *p, size_t len, uint64_t off, rk_err *err)
{
	*err = RK_OK;
	if (!batchable(a, pt, len, off)) {
		if (a->jb)
			a->jb->direct = 1;
		return (*err = array_batch_commit(a)) ? 1 : 0;
	}
	struct array_batch *b = a->jb;
	if (!batch_room(a, pt, len) && (*err = array_batch_commit(a)))
		return 1;
	int got = batch_collect(a, pt, p, len, off, err);
	if (got == 0 && b->nw) {   /* it touches data the batch changed: commit, then once more */
		if ((*err = array_batch_commit(a)))
			return 1;
		got = batch_collect(a, pt, p, len, off, err);
	}
	if (got < 0)
		return 1;
	if (got == 0) {
		b->direct = 1;
		return 0;
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

/* The batch's segments journaled (one commit: a record a member, more
 * when one would exceed a record's bounds; one flush), then written in
 * place in the order collected. */
static rk_err commit_segs(rk_array *a)
{
	struct array_batch *b = a->jb;
	struct rk_vol_wseg *ws = malloc((size_t)b->nseg * sizeof *ws);
	if (!ws)
		return rk_fail(RK_E_NOMEM, "array: out of memory");
	for (uint32_t i = 0; i < b->nseg; i++)
		ws[i] = (struct rk_vol_wseg){ .role = b->seg[i].role, .off = b->seg[i].off, .buf = b->pool + b->seg[i].at,
		                              .len = (size_t)b->seg[i].len };
	rk_err e = array_journal_data(a, ws, b->nseg, 0);
	free(ws);
	if (e)
		return e;
	/* members lost meanwhile and too few left: nothing goes in place */
	if (!rk_geom_readable(&a->g, a->down))
		return rk_fail(RK_E_TOOFEW, "array: too few members left to write (members failed during the write)");
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

rk_err array_batch_commit(rk_array *a)
{
	struct array_batch *b = a->jb;
	if (!b || !b->nw)
		return RK_OK;
	/* too few members left (not recorded in the superblocks): nothing of
	 * the batch may reach a member, not even a record */
	rk_err e = rk_geom_readable(&a->g, a->down) ? commit_segs(a)
	         : rk_fail(RK_E_TOOFEW, "array: too few members left to write (members failed during the write)");
	batch_clear(a);
	rk_err s = array_settle(a);
	return e ? e : s;
}

int array_batch_direct(const rk_array *a)
{
	return !a->jb || a->jb->direct;
}

void array_batch_flushed(rk_array *a)
{
	if (a->jb)
		a->jb->direct = 0;
}
