/* vol_rebuild.c: making redundancy whole again.
 *
 * rk_vol_resync recomputes parity (or copies mirrors) over a stripe range;
 * rk_vol_rebuild reconstructs a down role onto a new device: parity levels
 * in stripe units (vol_rebuild_fast.c first tries the page cache), the
 * survivors read ahead and the target written on a writer thread; mirrors
 * in large batches read from the live copies.  The target is the volume's
 * extra device slot (index nroles); a mirror's writes go through the same
 * member I/O queue, overlapped with the next batch's reads.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "vol_int.h"
#include "rk_le.h"
#include "rk_pool.h"

#define MIRROR_PIECE (1u << 20)     /* resync of mirrors: bytes copied at a time */
#define REBUILD_BATCH (16u << 20)   /* member bytes per batch (mirrors) */
#define REBUILD_PIECE (4u << 20)    /* largest read from one copy (RAID-1 spreads over copies) */

/* ---- resync ---- */

/* Copies stripe S from its first live copy to every other live copy,
 * through TMP (MIRROR_PIECE bytes). */
static rk_err resync_mirror(rk_vol *v, uint64_t s, uint8_t *tmp)
{
	const struct rk_geom *g = &v->g;
	uint64_t a = s * g->stripe_data, b = a + g->stripe_data;
	if (b > g->volume_size)
		b = g->volume_size;
	rk_err e = RK_OK;
	for (uint64_t x = a; x < b && !e;) {
		uint64_t run;
		struct rk_loc first;
		if ((e = rk_geom_map(g, x, &first, &run)))
			break;
		uint64_t take = run < b - x ? run : b - x;
		if (take > MIRROR_PIECE)
			take = MIRROR_PIECE;
		if ((e = vol_direct_read(v, tmp, take, x)))
			break;
		uint32_t k = rk_geom_copies(g, x, v->locs, g->copies);
		for (uint32_t i = 0; i < k && !e; i++)
			if (!vol_is_down(v, v->locs[i].role))
				e = vol_queue(v, v->locs[i].role, 1, v->locs[i].member_off, tmp, (size_t)take);
		if (!e)
			e = vol_run(v);
		if (!e && !vol_readable(v))
			e = vol_too_few(v);
		x += take;
	}
	return e;
}

/* Parity levels: stripes from S (one unit, before LAST): every live role
 * read, lost data rebuilt, P/Q regenerated and written.  *STEP gets the
 * stripes done. */
static rk_err resync_parity_unit(rk_vol *v, uint64_t s, uint64_t last, uint64_t *step)
{
	const struct rk_geom *g = &v->g;
	struct stripe_unit unit;
	rk_err e = RK_OK;
	vol_unit_slice(v, &unit, s, last, 0);
	*step = unit.count;
	for (uint64_t c0 = 0; c0 < g->chunk && !e; c0 += v->unit_cols) {
		vol_unit_slice(v, &unit, s, last, c0);
		e = vol_unit_read_all(v, &unit, NULL, NULL);
		for (uint32_t u = 0; u < unit.count && !e; u++) {
			v->stripes[u].mode = WRITE_FULL;
			if ((e = vol_reconstruct(v, u)))
				break;
			vol_gen_parity(v, u, NULL);
		}
		/* parity only */
		if (!e)
			e = vol_queue_parity_writes(v, &unit);
		if (!e)
			e = vol_run(v);
		if (!e && !vol_readable(v))
			e = vol_too_few(v);
	}
	return e;
}

rk_err rk_vol_resync(rk_vol *v, uint64_t first, uint64_t count,
                     void (*progress)(void *ctx, uint64_t done), void *ctx)
{
	const struct rk_geom *g = &v->g;
	uint64_t last;
	if (rk_add_ovf(first, count, &last) || last > g->nstripes)
		return rk_fail(RK_E_RANGE, "volume: stripes %llu+%llu pass the last stripe (%llu)", (unsigned long long)first,
		               (unsigned long long)count, (unsigned long long)g->nstripes);
	if (g->level == 0 || g->level == RK_LEVEL_LINEAR || count == 0)
		return RK_OK;   /* nothing redundant */
	uint8_t *tmp = NULL;
	if (!vol_parity_level(g) && !(tmp = malloc(MIRROR_PIECE)))
		return rk_fail(RK_E_NOMEM, "volume: out of memory");
	pthread_mutex_lock(&v->op_lock);
	rk_err e = RK_OK;
	uint64_t s = first;
	while (s < last && !e) {
		uint64_t step = 1;
		if (!vol_parity_level(g))
			e = resync_mirror(v, s, tmp);
		else
			e = resync_parity_unit(v, s, last, &step);
		s += step;
		if (!e && progress)
			progress(ctx, s - first);
	}
	v->nqueued = 0;
	pthread_mutex_unlock(&v->op_lock);
	free(tmp);
	return e;
}

/* ---- rebuild of parity levels ---- */

/* The target's writes run on a thread of their own, each followed by a
 * flush, while the survivors are read and the next stripes computed: a
 * disk with its own bandwidth is then writing all the time instead of
 * taking every byte at the checkpoint's flush, after the reads.  Rebuilt
 * bytes are gathered (they are contiguous on the target) in one of two
 * buffers of WRITE_BYTES; one is written while the other fills.  Only the
 * writer touches the target until target_writer_end, so its writes and
 * flushes keep one order. */
struct target_writer {
	rk_dev *dst;
	uint64_t dst_offset;
	uint8_t *buf[2];
	int cur;                  /* the buffer being filled */
	size_t fill, ramp;        /* ramp: the largest write so far, doubled per write */
	uint64_t end;             /* member offset past the last byte to be written */
	uint64_t off;             /* member offset of buf[cur][0] */
	pthread_t thread;
	int threaded, stop, busy; /* busy: the writer has buf[wbuf] */
	int wbuf;
	size_t wlen;
	uint64_t woff;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	rk_err err;
	char msg[256];
};

/* Writes LEN bytes of BUF at member offset OFF of the target, then flushes
 * it (the flush makes the disk take the bytes now, beside the reads); a
 * failure is kept in W (the first one; under W's lock when threaded). */
static void writer_io(struct target_writer *w, const uint8_t *buf, size_t len, uint64_t off)
{
	rk_err e = rk_dev_pwrite(w->dst, buf, len, w->dst_offset + off);
	if (!e)
		e = rk_dev_flush(w->dst);
	if (!e)
		return;
	char msg[sizeof w->msg];
	snprintf(msg, sizeof msg, "%s", rk_errmsg());
	if (w->threaded)
		pthread_mutex_lock(&w->mu);
	if (!w->err) {
		w->err = e;
		memcpy(w->msg, msg, sizeof msg);
	}
	if (w->threaded)
		pthread_mutex_unlock(&w->mu);
}

/* The writer thread: each buffer handed over, until stopped. */
static void *writer_main(void *arg)
{
	struct target_writer *w = arg;
	pthread_mutex_lock(&w->mu);
	for (;;) {
		while (!w->busy && !w->stop)
			pthread_cond_wait(&w->cv, &w->mu);
		if (!w->busy)
			break;
		int failed = w->err != RK_OK;
		pthread_mutex_unlock(&w->mu);
		if (!failed)
			writer_io(w, w->buf[w->wbuf], w->wlen, w->woff);
		pthread_mutex_lock(&w->mu);
		w->busy = 0;
		pthread_cond_broadcast(&w->cv);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

#define WRITE_BYTES (8u << 20)   /* target bytes per write (and flush), at most */
#define WRITE_MIN (1u << 20)     /* ... and at least, but for the last */

/* The bytes the buffer being filled takes before it is written: small at
 * the start and the end, so that the target's disk starts writing early
 * and the last write after the reads is short (a whole WRITE_BYTES there
 * costs a throttled rebuild a twentieth of its time); WRITE_BYTES in
 * between.  Whole pages. */
static size_t write_cap(const struct target_writer *w)
{
	uint64_t left = w->end > w->off ? (w->end - w->off) / 2 / 4096 * 4096 : 0;
	size_t cap = w->ramp;
	if (left < cap)
		cap = left > WRITE_MIN ? (size_t)left : WRITE_MIN;
	return cap;
}

/* Sets W up for the target DST (data at DST_OFFSET), to be written up to
 * member offset END; without a thread to be had the writes are made by the
 * caller. */
static rk_err target_writer_begin(struct target_writer *w, rk_dev *dst, uint64_t dst_offset, uint64_t end)
{
	memset(w, 0, sizeof *w);
	w->dst = dst;
	w->dst_offset = dst_offset;
	w->end = end;
	w->ramp = WRITE_MIN;
	for (int i = 0; i < 2; i++)
		if (!(w->buf[i] = aligned_alloc(4096, WRITE_BYTES))) {
			free(w->buf[0]);
			return rk_fail(RK_E_NOMEM, "volume: out of memory");
		}
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv, NULL);
	w->threaded = rk_thread_start(&w->thread, writer_main, w) == 0;
	return RK_OK;
}

/* Hands the filled buffer to the writer (after the one before is written). */
static void target_writer_submit(struct target_writer *w)
{
	if (!w->fill)
		return;
	if (!w->threaded) {
		writer_io(w, w->buf[w->cur], w->fill, w->off);
	} else {
		pthread_mutex_lock(&w->mu);
		while (w->busy)
			pthread_cond_wait(&w->cv, &w->mu);
		w->wbuf = w->cur;
		w->wlen = w->fill;
		w->woff = w->off;
		w->busy = 1;
		pthread_cond_broadcast(&w->cv);
		pthread_mutex_unlock(&w->mu);
		w->cur ^= 1;
	}
	w->off += w->fill;
	w->fill = 0;
	if (w->ramp < WRITE_BYTES)
		w->ramp *= 2;
}

/* Whether the writer has failed (read under its lock). */
static rk_err target_writer_failed(struct target_writer *w)
{
	pthread_mutex_lock(&w->mu);
	rk_err e = w->err;
	pthread_mutex_unlock(&w->mu);
	return e ? rk_fail(e, "%s", w->msg) : RK_OK;
}

/* Adds LEN rebuilt bytes of BUF for member offset OFF. */
static rk_err target_writer_add(struct target_writer *w, const uint8_t *buf, size_t len, uint64_t off)
{
	rk_err e;
	if ((e = target_writer_failed(w)))
		return e;
	while (len) {
		if (w->fill && (w->off + w->fill != off || w->fill >= write_cap(w)))
			target_writer_submit(w);
		if (!w->fill)
			w->off = off;
		size_t cap = write_cap(w);
		size_t take = cap - w->fill < len ? cap - w->fill : len;
		memcpy(w->buf[w->cur] + w->fill, buf, take);
		w->fill += take;
		buf += take;
		off += take;
		len -= take;
	}
	return RK_OK;
}

/* Writes what is left (unless E, the caller's failure, is set), stops the
 * writer and frees it; returns E or the writer's failure. */
static rk_err target_writer_end(struct target_writer *w, rk_err e)
{
	if (!e)
		target_writer_submit(w);
	if (w->threaded) {
		pthread_mutex_lock(&w->mu);
		w->stop = 1;
		pthread_cond_broadcast(&w->cv);
		pthread_mutex_unlock(&w->mu);
		pthread_join(w->thread, NULL);
	}
	if (!e && w->err)
		e = rk_fail(w->err, "%s", w->msg);
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->cv);
	free(w->buf[0]);
	free(w->buf[1]);
	return e;
}

#define READ_AHEAD (16u << 20)        /* survivor bytes asked for ahead of the stripes being rebuilt */
#define READ_AHEAD_PIECE (512u << 10) /* bytes per advice (the kernel caps one at its readahead window) */

/* Tells each live role that its stripes [*DONE_TO, S) are done with once
 * they are RK_DEV_DROP_STEP bytes (advice only: a block device's page cache is
 * dropped behind the reads instead of all at once at its close). */
static void survivors_done(rk_vol *v, uint64_t s, uint64_t *done_to)
{
	const struct rk_geom *g = &v->g;
	if (s <= *done_to || (s - *done_to) * g->chunk < RK_DEV_DROP_STEP)
		return;
	for (uint32_t r = 0; r < v->nroles; r++)
		if (!vol_is_down(v, r))
			rk_dev_advise(v->devs[r], v->data_offset[r] + *done_to * g->chunk, (s - *done_to) * g->chunk,
			              RK_DEV_ADV_DONTNEED);
	*done_to = s;
}

/* Keeps the survivors reading ahead: once stripe S comes within READ_AHEAD
 * of *RA_TO (the end of what was asked for), asks each live role for the
 * next READ_AHEAD bytes (page cache; advice only), so that its disk stays
 * busy while the stripes before are computed and written. */
static void survivors_read_ahead(rk_vol *v, uint64_t s, uint64_t *ra_to)
{
	const struct rk_geom *g = &v->g;
	uint64_t ahead = READ_AHEAD / g->chunk ? READ_AHEAD / g->chunk : 1;
	if (*ra_to < s)
		*ra_to = s;
	if (*ra_to >= g->nstripes || *ra_to - s > ahead)
		return;
	uint64_t to = *ra_to + ahead < g->nstripes ? *ra_to + ahead : g->nstripes;
	uint64_t len = (to - *ra_to) * g->chunk;
	/* in pieces: the kernel reads at most its readahead window per call */
	for (uint32_t r = 0; r < v->nroles; r++)
		for (uint64_t at = 0; at < len && !vol_is_down(v, r); at += READ_AHEAD_PIECE)
			rk_dev_advise(v->devs[r], v->data_offset[r] + *ra_to * g->chunk + at,
			              len - at < READ_AHEAD_PIECE ? len - at : READ_AHEAD_PIECE, RK_DEV_ADV_WILLNEED);
	*ra_to = to;
}

/* One unit slice of a parity rebuild: the role's blocks reconstructed
 * (data) or regenerated (P, Q) in its buffer and handed to W. */
static rk_err rebuild_parity_slice(rk_vol *v, uint32_t role, const struct stripe_unit *unit,
                                   struct target_writer *w)
{
	uint64_t chunk = v->g.chunk;
	rk_err e = vol_unit_read_all(v, unit, NULL, NULL);
	for (uint32_t u = 0; u < unit->count && !e; u++) {
		struct unit_stripe *st = &v->stripes[u];
		if ((e = vol_reconstruct(v, u)))
			break;
		if (role == st->p_role || role == st->q_role)
			vol_gen_parity(v, u, NULL);
	}
	if (e)
		return e;
	size_t wl = (size_t)(unit->col1 - unit->col0);
	if (v->unit_cols == chunk)
		return target_writer_add(w, vol_role_buf(v, role, 0), (size_t)unit->count * wl, unit->first * chunk);
	for (uint32_t u = 0; u < unit->count && !e; u++)
		e = target_writer_add(w, vol_role_buf(v, role, u), wl, (unit->first + u) * chunk + unit->col0);
	return e;
}

rk_err vol_rebuild_parity(rk_vol *v, uint32_t role, uint64_t s0, uint64_t s1,
                          void (*progress)(void *ctx, uint64_t done), void *ctx)
{
	const struct rk_geom *g = &v->g;
	struct target_writer w;
	rk_err e = target_writer_begin(&w, v->devs[v->nroles], v->data_offset[v->nroles], s1 * g->chunk);
	if (e)
		return e;
	uint64_t s = s0, ra_to = s0, done_to = s0;
	while (s < s1 && !e) {
		struct stripe_unit unit;
		survivors_read_ahead(v, s, &ra_to);
		survivors_done(v, s, &done_to);
		vol_unit_slice(v, &unit, s, s1, 0);
		for (uint64_t c0 = 0; c0 < g->chunk && !e; c0 += v->unit_cols) {
			vol_unit_slice(v, &unit, s, s1, c0);
			e = rebuild_parity_slice(v, role, &unit, &w);
		}
		s += unit.count;
		if (!e && progress && s < s1)
			progress(ctx, (s - s0) * g->chunk);   /* the last bytes are still being written */
	}
	e = target_writer_end(&w, e);
	if (!e && progress)
		progress(ctx, (s1 - s0) * g->chunk);
	return e;
}

/* ---- rebuild of mirrors ---- */

/* A batch of a mirror rebuild: member bytes [from, to) of the role into
 * BUF, each piece read from a live copy (unused bytes zeroed), the previous
 * batch's target write (PENDING_LEN bytes, if any) sent along. */
struct mirror_batch {
	uint32_t role;
	uint64_t from, to;
	uint8_t *buf;
	uint64_t piece_no;         /* pieces so far: RAID-1 rotates over copies */
	uint8_t *pending_buf;
	uint64_t pending_off, pending_len;
};

static rk_err queue_mirror_batch(rk_vol *v, void *ctx, uint32_t attempt)
{
	const struct rk_geom *g = &v->g;
	struct mirror_batch *mb = ctx;
	rk_err e = RK_OK;
	for (uint64_t y = mb->from; y < mb->to && !e;) {
		uint64_t voff, take = mb->to - y;
		enum rk_blk_kind kind;
		if (g->chunk && take > g->chunk - y % g->chunk)
			take = g->chunk - y % g->chunk;
		if (take > REBUILD_PIECE)
			take = REBUILD_PIECE;
		if ((e = rk_geom_unmap(g, mb->role, y, &voff, &kind)))
			return e;
		uint8_t *to = mb->buf + (y - mb->from);
		if (kind != RK_BLK_DATA) {
			memset(to, 0, (size_t)take);
		} else {
			uint32_t k = rk_geom_copies(g, voff, v->locs, g->copies);
			uint32_t pick = vol_live_copy(v, k, mb->piece_no, mb->role);
			if (pick == k)
				return vol_too_few(v);
			e = vol_queue(v, v->locs[pick].role, 0, v->locs[pick].member_off, to, (size_t)take);
			mb->piece_no++;
		}
		y += take;
	}
	if (!e && mb->pending_len) {
		e = vol_queue(v, v->nroles, 1, mb->pending_off, mb->pending_buf, (size_t)mb->pending_len);
		mb->pending_len = 0;
	}
	return e;
}

/* Mirrors (1, 10): each piece of the role is read from a live copy (RAID-1
 * rotates over the copies so that the reads run in parallel), a batch at a
 * time, then written to the target. */
static rk_err rebuild_mirror(rk_vol *v, uint32_t role, uint64_t a, uint64_t b,
                             void (*progress)(void *ctx, uint64_t done), void *ctx)
{
	uint64_t batch = b - a < REBUILD_BATCH ? b - a : REBUILD_BATCH;
	size_t cap = (size_t)(batch + 4095) / 4096 * 4096;
	/* two buffers: a batch's target write goes out with the next batch's reads */
	uint8_t *mem = aligned_alloc(4096, 2 * cap);
	if (!mem)
		return rk_fail(RK_E_NOMEM, "volume: out of memory");
	rk_err e = RK_OK;
	struct mirror_batch mb = { .role = role, .from = a };
	for (uint32_t bi = 0; mb.from < b && !e; bi++) {
		mb.buf = mem + (size_t)(bi & 1) * cap;
		mb.to = b - mb.from < batch ? b : mb.from + batch;
		if ((e = vol_run_retrying(v, queue_mirror_batch, &mb)))
			break;
		mb.pending_buf = mb.buf;
		mb.pending_off = mb.from;
		mb.pending_len = mb.to - mb.from;
		if (progress && mb.from > a)
			progress(ctx, mb.from - a);   /* batches before this one are on the target */
		mb.from = mb.to;
	}
	if (!e && mb.pending_len) {
		e = vol_queue(v, v->nroles, 1, mb.pending_off, mb.pending_buf, (size_t)mb.pending_len);
		if (!e)
			e = vol_run(v);
		if (!e && progress)
			progress(ctx, b - a);
	}
	v->nqueued = 0;
	free(mem);
	return e;
}

/* ---- rebuild onto a device ---- */

rk_err vol_rebuild_onto(rk_vol *v, uint32_t role, rk_dev *dst, uint64_t dst_offset, uint64_t a, uint64_t b,
                        int from_cache, void (*progress)(void *ctx, uint64_t done), void *ctx)
{
	const struct rk_geom *g = &v->g;
	v->devs[v->nroles] = dst;
	v->data_offset[v->nroles] = dst_offset;
	v->io_msg[v->nroles][0] = 0;
	rk_err e;
	if (!vol_parity_level(g))
		e = rebuild_mirror(v, role, a, b, progress, ctx);
	else if (from_cache)
		e = vol_rebuild_parity_fast(v, role, a / g->chunk, b / g->chunk, progress, ctx);
	else
		e = vol_rebuild_parity(v, role, a / g->chunk, b / g->chunk, progress, ctx);
	v->devs[v->nroles] = NULL;
	v->nqueued = 0;
	return e;
}

rk_err rk_vol_rebuild(rk_vol *v, uint32_t role, rk_dev *dst, uint64_t dst_offset, uint64_t off,
                      uint64_t len, void (*progress)(void *ctx, uint64_t done), void *ctx)
{
	const struct rk_geom *g = &v->g;
	uint64_t end, dend;
	if (!dst || role >= v->nroles)
		return rk_fail(RK_E_INVAL, "volume: rebuild of role %u: no such role or no target", role);
	if (g->level == 0 || g->level == RK_LEVEL_LINEAR)
		return rk_fail(RK_E_NOTSUP, "volume: RAID-%s has no redundancy to rebuild a member from",
		               rk_level_name(g->level));
	if (rk_add_ovf(off, len, &end) || end > g->member_size)
		return rk_fail(RK_E_RANGE, "volume: rebuild of bytes %llu+%llu passes the member data size (%llu)",
		               (unsigned long long)off, (unsigned long long)len, (unsigned long long)g->member_size);
	if (!rk_vol_role_down(v, role))
		return rk_fail(RK_E_INVAL, "volume: role %u is live; a rebuild needs it opened missing", role);
	if (len == 0)
		return RK_OK;
	uint64_t a = off, b = end;
	if (g->chunk) {
		a -= a % g->chunk;
		if (b % g->chunk)
			b += g->chunk - b % g->chunk;   /* member_size is whole chunks on striped levels */
		if (b > g->member_size)
			b = g->member_size;
	}
	if (rk_add_ovf(dst_offset, b, &dend) || dend > rk_dev_size(dst))
		return rk_fail(RK_E_SHORT, "%s: %llu bytes, the rebuilt data area would end at %llu", rk_dev_path(dst),
		               (unsigned long long)rk_dev_size(dst), (unsigned long long)dend);
	pthread_mutex_lock(&v->op_lock);
	rk_err e = vol_rebuild_onto(v, role, dst, dst_offset, a, b, 1, progress, ctx);
	pthread_mutex_unlock(&v->op_lock);
	return e;
}
