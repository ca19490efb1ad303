/* scrub_read.c: reading a scrub batch: its plan (every live block of the
 * batch as member extents, one buffer per role), the reader jobs on the
 * reader pool (one job per role), and page-cache peeking (ranges that
 * rk_dev_peek serves are checked in place). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rk_le.h"
#include "scrub_int.h"

rk_err batch_init(struct scrub_state *sc, struct scrub_batch *b, uint32_t max_stripes)
{
	b->sc = sc;
	b->blocks = calloc((size_t)max_stripes * sc->width, sizeof *b->blocks);
	b->dirty = calloc(max_stripes, 1);
	b->roles = calloc(sc->g->nroles, sizeof *b->roles);
	if (!b->blocks || !b->dirty || !b->roles)
		return rk_fail(RK_E_NOMEM, "scrub: out of memory");
	pthread_mutex_init(&b->err_lock, NULL);
	b->err_lock_ready = 1;
	return RK_OK;
}

void batch_free(struct scrub_state *sc, struct scrub_batch *b)
{
	for (uint32_t r = 0; b->roles && r < sc->g->nroles; r++) {
		free(b->roles[r].buf);
		free(b->roles[r].extents);
	}
	free(b->roles);
	free(b->blocks);
	free(b->dirty);
	if (b->err_lock_ready)
		pthread_mutex_destroy(&b->err_lock);
}

/* The blocks of stripe S, column [c0, c1): parity levels one per role,
 * mirrors one per copy. */
static rk_err plan_stripe(struct scrub_state *sc, struct scrub_block *out, uint64_t s, uint64_t c0, uint64_t c1)
{
	const struct rk_geom *g = sc->g;
	if (sc->family == SCRUB_PARITY) {
		struct rk_stripe_map m = { .vol_role = sc->analysis->vol_role, .slot = NULL };
		rk_err e = rk_geom_stripe_map(g, s, &m);
		if (e)
			return e;
		for (uint32_t r = 0; r < g->nroles; r++)
			out[r] = (struct scrub_block){ .role = r, .member_off = sc->data_offset[r] + m.member_off + c0,
			                               .len = c1 - c0 };
		return RK_OK;
	}
	uint64_t v = s * g->stripe_data + c0, len = c1 - c0;
	memset(out, 0, sc->width * sizeof *out);
	if (v >= g->volume_size)
		return RK_OK;
	if (len > g->volume_size - v)
		len = g->volume_size - v;
	uint32_t k = rk_geom_copies(g, v, sc->copy_locs, sc->width);
	for (uint32_t c = 0; c < k; c++) {
		uint32_t role = sc->copy_locs[c].role;
		out[c] = (struct scrub_block){ .role = role, .member_off = sc->data_offset[role] + sc->copy_locs[c].member_off,
		                               .len = len };
	}
	return RK_OK;
}

/* Gives each role a buffer for its blocks of the batch. */
static rk_err size_role_buffers(struct scrub_state *sc, struct scrub_batch *b)
{
	uint32_t n = sc->g->nroles;
	for (uint32_t r = 0; r < n; r++)
		b->roles[r].fill = 0;
	for (size_t i = 0; i < (size_t)b->nstripes * sc->width; i++) {
		struct scrub_block *k = &b->blocks[i];
		if (k->len && sc->devs[k->role])
			b->roles[k->role].fill += scrub_align_up(k->len);
	}
	for (uint32_t r = 0; r < n; r++) {
		struct role_io *io = &b->roles[r];
		if (io->fill > io->cap) {
			free(io->buf);
			if (!(io->buf = scrub_alloc_aligned((size_t)io->fill))) {
				io->cap = 0;
				return rk_fail(RK_E_NOMEM, "scrub: out of memory");
			}
			io->cap = io->fill;
		}
		io->fill = 0;
	}
	return RK_OK;
}

/* Appends block X to its role's extents (merged with the last one when
 * both the member bytes and the buffer follow on). */
static rk_err add_extent(struct scrub_batch *b, const struct scrub_block *x)
{
	struct role_io *io = &b->roles[x->role];
	struct read_extent *last = io->nextents ? &io->extents[io->nextents - 1] : NULL;
	if (last && last->member_off + last->len == x->member_off && last->buf + last->len == x->buf) {
		last->len += x->len;
		return RK_OK;
	}
	if (io->nextents == io->extent_cap) {
		uint32_t nc = io->extent_cap ? 2 * io->extent_cap : 8;
		struct read_extent *ne = realloc(io->extents, nc * sizeof *ne);
		if (!ne)
			return rk_fail(RK_E_NOMEM, "scrub: out of memory");
		io->extents = ne;
		io->extent_cap = nc;
	}
	io->extents[io->nextents++] = (struct read_extent){ .member_off = x->member_off, .len = x->len, .buf = x->buf };
	return RK_OK;
}

rk_err batch_plan(struct scrub_state *sc, struct scrub_batch *b, uint64_t s0, uint32_t ns, uint64_t c0, uint64_t c1)
{
	uint32_t w = sc->width;
	rk_err e;
	b->first_stripe = s0;
	b->nstripes = ns;
	b->col_start = c0;
	b->col_end = c1;
	memset(b->dirty, 0, ns);
	for (uint32_t r = 0; r < sc->g->nroles; r++)
		b->roles[r].nextents = 0;
	for (uint32_t i = 0; i < ns; i++)
		if ((e = plan_stripe(sc, &b->blocks[(size_t)i * w], s0 + i, c0, c1)))
			return e;
	if ((e = size_role_buffers(sc, b)))
		return e;
	/* Lay out role by role in (copy, stripe) order so that each role's
	 * blocks are consecutive on the member as well as in its buffer. */
	for (uint32_t k = 0; k < w; k++)
		for (uint32_t i = 0; i < ns; i++) {
			struct scrub_block *x = &b->blocks[(size_t)i * w + k];
			x->buf = NULL;
			x->read_failed = 0;
			if (!x->len || !sc->devs[x->role])
				continue;
			struct role_io *io = &b->roles[x->role];
			x->buf = io->buf + io->fill;
			if ((e = add_extent(b, x)))
				return e;
			io->fill += scrub_align_up(x->len);
			sc->stats->bytes_read += x->len;
		}
	return RK_OK;
}

/* After role R's extents of B were read or found in the page cache: asks
 * the device to read the READ_AHEAD_BATCHES batches' worth of bytes that
 * follow them on the member now (those not asked for before), so that the
 * member stays busy while the batch waits for the slowest member and is
 * checked (a disk with its own bandwidth loses what it idles).  Advice
 * only, into the page cache (no peek mapping); clamped to the member's
 * data. */
static void read_ahead(struct scrub_state *sc, const struct role_io *io, rk_dev *dev, uint32_t r)
{
	const struct read_extent *first = &io->extents[0], *last = &io->extents[io->nextents - 1];
	uint64_t from = last->member_off + last->len, end = sc->data_offset[r] + sc->g->member_size, span, len;
	if (last->member_off < first->member_off || from >= end)
		return;
	span = from - first->member_off;
	if (rk_mul_ovf(span, READ_AHEAD_BATCHES, &len) || len > end - from)
		len = end - from;
	uint64_t start = sc->ahead_end[r] > from && sc->ahead_end[r] < from + len ? sc->ahead_end[r] : from;
	if (sc->ahead_end[r] >= from + len)
		return;   /* asked for already */
	sc->ahead_end[r] = from + len;
	/* in pieces: the kernel reads at most its readahead window per call */
	for (uint64_t at = start; at < from + len; at += READ_AHEAD_PIECE)
		rk_dev_advise(dev, at, from + len - at < READ_AHEAD_PIECE ? from + len - at : READ_AHEAD_PIECE,
		              RK_DEV_ADV_READAHEAD);
}

/* After role R's extents of B were read: declares the member's bytes
 * before the batch ahead of B (which the checkers may still read) done
 * with, RK_DEV_DROP_STEP at a time, so that a block device's page cache is
 * dropped behind the reads instead of all at once at its close (advice
 * only; bytes read again later come from the device). */
static void drop_behind(struct scrub_state *sc, const struct role_io *io, rk_dev *dev, uint32_t r)
{
	const struct read_extent *first = &io->extents[0], *last = &io->extents[io->nextents - 1];
	uint64_t span = last->member_off + last->len - first->member_off;
	if (last->member_off < first->member_off || first->member_off < span)
		return;
	uint64_t to = first->member_off - span;
	if (sc->drop_end[r] < sc->data_offset[r])
		sc->drop_end[r] = sc->data_offset[r];
	if (to <= sc->drop_end[r] || to - sc->drop_end[r] < RK_DEV_DROP_STEP)
		return;
	rk_dev_advise(dev, sc->drop_end[r], to - sc->drop_end[r], RK_DEV_ADV_DONTNEED);
	sc->drop_end[r] = to;
}

/* Reader job: role R's extents of the batch. */
static void read_role(void *ctx, uint32_t worker, uint32_t r)
{
	struct scrub_batch *b = ctx;
	struct scrub_state *sc = b->sc;
	struct role_io *io = &b->roles[r];
	rk_dev *dev = sc->devs[r];
	uint32_t deferred = 0;
	(void)worker;
	for (uint32_t i = 0; i < io->nextents; i++) {
		struct read_extent *x = &io->extents[i];
		const uint8_t *mapped;
		x->deferred = 0;
		x->read_failed = 0;
		/* Page-cache data is left to the checkers, which read it in
		 * pieces that stay in the CPU cache while they are checked:
		 * copied here it would go to memory and back (and checked in
		 * place through the peek mapping every page costs a fault). */
		if (!sc->opts->no_map && rk_dev_peek(dev, x->member_off, x->len, &mapped)) {
			x->deferred = 1;
			deferred++;
			continue;
		}
		rk_err e = rk_dev_pread(dev, x->buf, (size_t)x->len, x->member_off);
		if (e == RK_E_IO) {
			/* a bad sector: the blocks are probed and checked around it */
			x->read_failed = 1;
		} else if (e) {
			pthread_mutex_lock(&b->err_lock);
			if (!b->err) {
				b->err = e;
				snprintf(b->errmsg, sizeof b->errmsg, "%s", rk_errmsg());
			}
			pthread_mutex_unlock(&b->err_lock);
			return;
		}
	}
	if (io->nextents) {
		/* all in the page cache: advice would only look every page up
		 * again (a tenth of a cached scrub's CPU time) */
		if (deferred < io->nextents)
			read_ahead(sc, io, dev, r);
		drop_behind(sc, io, dev, r);
	}
}

void batch_read_submit(struct scrub_state *sc, struct scrub_batch *b)
{
	b->err = RK_OK;
	b->errmsg[0] = 0;
	rk_pool_submit(sc->readers, sc->g->nroles, read_role, b);
}

/* Marks the blocks of extents left in the page cache (deferred) and of
 * extents whose read failed. */
static void mark_blocks(struct scrub_state *sc, struct scrub_batch *b)
{
	uint32_t *cursor = sc->extent_cursor, w = sc->width;
	memset(cursor, 0, sc->g->nroles * sizeof *cursor);
	for (uint32_t k = 0; k < w; k++)
		for (uint32_t i = 0; i < b->nstripes; i++) {
			struct scrub_block *x = &b->blocks[(size_t)i * w + k];
			x->read_failed = 0;
			x->deferred = 0;
			if (!x->buf)
				continue;
			uint32_t r = x->role;
			const struct role_io *io = &b->roles[r];
			while (cursor[r] < io->nextents && x->buf >= io->extents[cursor[r]].buf + io->extents[cursor[r]].len)
				cursor[r]++;
			if (cursor[r] >= io->nextents)
				continue;
			const struct read_extent *ext = &io->extents[cursor[r]];
			if (ext->deferred)
				x->deferred = 1;
			else if (ext->read_failed)
				x->read_failed = 1;
		}
}

rk_err batch_read_wait(struct scrub_state *sc, struct scrub_batch *b)
{
	rk_pool_wait(sc->readers);
	if (b->err)
		return rk_fail(b->err, "%s", b->errmsg);
	mark_blocks(sc, b);
	return RK_OK;
}

/* W's stage_blocks: BLOCKS' column bytes [a, a+n), those deferred read
 * into W's stage; 0, or 1 when a read failed (the analysis rereads). */
static int stage_blocks(struct scrub_state *sc, struct check_scratch *w, const struct scrub_block *blocks, uint64_t a,
                        size_t n)
{
	for (uint32_t k = 0; k < sc->width; k++) {
		const struct scrub_block *x = &blocks[k];
		struct scrub_block *y = &w->stage_blocks[k];
		*y = *x;
		y->len = 0;
		if (!x->buf || a >= x->len)
			continue;   /* missing, or (a mirror's last stripe) past its bytes */
		y->len = x->len - a < n ? x->len - a : n;
		y->member_off = x->member_off + a;
		y->deferred = 0;
		if (!x->deferred) {
			y->buf = x->buf + a;
			continue;
		}
		y->buf = w->stage + (size_t)k * w->stage_piece;
		if (rk_dev_pread(sc->devs[x->role], y->buf, (size_t)y->len, y->member_off))
			return 1;
	}
	return 0;
}

int staged_piece_dirty(struct scrub_state *sc, struct check_scratch *w, const struct scrub_batch *b, uint32_t si,
                       uint64_t a, uint64_t end)
{
	const struct scrub_block *blocks = batch_stripe(b, si);
	for (uint64_t at = a; at < end; at += w->stage_piece) {
		size_t n = end - at < w->stage_piece ? (size_t)(end - at) : w->stage_piece;
		if (stage_blocks(sc, w, blocks, at, n))
			return 1;
		int dirty = sc->family == SCRUB_PARITY
		                ? parity_piece_dirty(sc, w, w->stage_blocks, b->first_stripe + si, 0, n)
		                : mirror_piece_dirty(sc, w->stage_blocks, 0, n);
		if (dirty)
			return 1;
	}
	return 0;
}

rk_err fetch_deferred(struct scrub_state *sc, struct scrub_batch *b, uint32_t si)
{
	struct scrub_block *blocks = batch_stripe(b, si);
	for (uint32_t k = 0; k < sc->width; k++) {
		struct scrub_block *x = &blocks[k];
		if (!x->deferred)
			continue;
		x->deferred = 0;
		rk_err e = x->len ? rk_dev_pread(sc->devs[x->role], x->buf, (size_t)x->len, x->member_off) : RK_OK;
		if (e == RK_E_IO)
			x->read_failed = 1;   /* probed like any failed read */
		else if (e)
			return e;
	}
	return RK_OK;
}
