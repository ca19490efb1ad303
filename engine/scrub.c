/* scrub.c: verify and repair redundancy (the contract is rk_scrub.h): the
 * run -- planning the batches, reading one while the one before is
 * checked, the checkers' pass, regions -- and rk_scrub_run.  How the work
 * is divided between the scrub's files: scrub_int.h. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rk_le.h"
#include "scrub_int.h"

void *scrub_alloc_aligned(size_t n)
{
	void *p = NULL;
	if (posix_memalign(&p, SCRUB_ALIGN, n ? n : SCRUB_ALIGN))
		return NULL;
	return p;
}

uint64_t scrub_align_up(uint64_t x)
{
	return (x + SCRUB_ALIGN - 1) & ~(uint64_t)(SCRUB_ALIGN - 1);
}

rk_err scrub_write(struct scrub_state *sc, uint32_t role, const void *buf, uint64_t len, uint64_t member_off)
{
	if (!sc->write_begun) {
		sc->write_begun = 1;
		if (sc->opts->on_begin_write) {
			rk_err e = sc->opts->on_begin_write(sc->opts->ctx);
			if (e)
				return e;
		}
	}
	return rk_dev_pwrite(sc->devs[role], buf, (size_t)len, member_off);
}

uint32_t scrub_absent(const struct scrub_state *sc, const struct scrub_block *blocks, uint32_t *missing)
{
	uint32_t nmissing = 0;
	*missing = RK_ROLE_NONE;
	for (uint32_t r = 0; r < sc->width; r++)
		if (!blocks[r].buf) {
			*missing = blocks[r].role;
			nmissing++;
		}
	return nmissing;
}

/* ---- regions ---- */

void scrub_flush_region(struct scrub_state *sc)
{
	struct pending_region *p = &sc->pending;
	if (!p->open)
		return;
	p->open = 0;
	const struct rk_geom *g = sc->g;
	struct rk_scrub_region region = {
		.stripe = p->stripe,
		.member_len = p->end - p->start,
		.nlocs = p->nlocs,
		.locs = p->locs,
		.nfault = p->verdict == SECTOR_LOCATED ? p->nfault : 0,
		.fault = p->fault,
		.verdict = p->verdict == SECTOR_LOCATED ? RK_SCRUB_LOCATED : RK_SCRUB_UNLOCATED,
		.fix = p->fix,
		.why = p->why,
	};
	uint64_t base = p->stripe * g->stripe_data;
	region.offset = base + p->start;
	region.length = p->end - p->start;
	if (sc->family == SCRUB_PARITY) {
		region.length = (uint64_t)(g->ndata - 1) * g->chunk + (p->end - p->start);
		if (region.nfault == 1 && p->vol_index != UINT32_MAX) {
			region.offset = base + (uint64_t)p->vol_index * g->chunk + p->start;
			region.length = p->end - p->start;
		}
	}
	sc->stats->mismatches++;
	if (region.verdict == RK_SCRUB_LOCATED)
		sc->stats->located++;
	if (region.fix != RK_SCRUB_FIX_NONE)
		sc->stats->repaired++;
	if (region.fix == RK_SCRUB_FIX_CONSISTENT)
		sc->stats->consistent++;
	if (sc->opts->on_region)
		sc->opts->on_region(sc->opts->ctx, &region);
}

void scrub_add_run(struct scrub_state *sc, uint64_t s, uint64_t start, uint64_t end, enum sector_verdict verdict,
                   enum rk_scrub_fix fix, const char *why, const struct scrub_block *blocks, uint64_t col_start)
{
	struct pending_region *p = &sc->pending;
	sc->runs_recorded++;
	if (p->open && p->stripe == s && p->end == start && p->verdict == verdict && p->fix == fix &&
	    p->nfault == sc->nfault && !memcmp(p->fault, sc->fault, sc->nfault * sizeof *sc->fault) &&
	    !strcmp(p->why, why)) {
		p->end = end;
		return;
	}
	scrub_flush_region(sc);
	p->open = 1;
	p->stripe = s;
	p->start = start;
	p->end = end;
	p->verdict = verdict;
	p->fix = fix;
	p->nfault = sc->nfault;
	memcpy(p->fault, sc->fault, sc->nfault * sizeof *sc->fault);
	snprintf(p->why, sizeof p->why, "%s", why);
	/* the analysis' vol_role is this stripe's map while it is being checked */
	p->vol_index = UINT32_MAX;
	if (sc->family == SCRUB_PARITY && verdict == SECTOR_LOCATED)
		for (uint32_t j = 0; j < sc->g->ndata; j++)
			if (sc->analysis->vol_role[j] == sc->fault[0])
				p->vol_index = j;
	p->nlocs = 0;
	for (uint32_t k = 0; k < sc->width; k++)
		if (blocks[k].buf)
			p->locs[p->nlocs++] = (struct rk_scrub_loc){ .role = blocks[k].role,
			                                             .member_off = blocks[k].member_off + (start - col_start) };
}

rk_err scrub_check_range(struct scrub_state *sc, struct scrub_batch *b, uint32_t si, uint64_t ca, uint64_t cb)
{
	return sc->family == SCRUB_PARITY ? check_parity_range(sc, b, si, ca, cb) : check_mirror_range(sc, b, si, ca, cb);
}

/* ---- checking a batch ---- */

/* Counts stripe SI of B (once per stripe: with its first column slice) as
 * checked or, when too few of its blocks are there, unchecked. */
static void count_stripe(struct scrub_state *sc, const struct scrub_batch *b, uint32_t si)
{
	if (b->col_start != 0)
		return;
	uint32_t missing, nmissing = scrub_absent(sc, batch_stripe(b, si), &missing);
	int checked = sc->family == SCRUB_PARITY ? nmissing < sc->g->nparity : sc->width - nmissing >= 2;
	if (checked)
		sc->stats->stripes++;
	else
		sc->stats->unchecked++;
}

/* Checker job I: piece I % pieces of stripe I / pieces; marks the stripe
 * dirty when the piece is not clean (or holds bytes whose read failed). */
static void check_piece(void *ctx, uint32_t worker, uint32_t job)
{
	struct scrub_batch *b = ctx;
	struct scrub_state *sc = b->sc;
	uint32_t si = job / b->pieces;
	if (__atomic_load_n(&b->dirty[si], __ATOMIC_RELAXED))
		return;
	uint64_t len = b->col_end - b->col_start;
	uint64_t a = (uint64_t)(job % b->pieces) * CHECK_PIECE_BYTES;
	uint64_t end = a + CHECK_PIECE_BYTES < len ? a + CHECK_PIECE_BYTES : len;
	const struct scrub_block *blocks = batch_stripe(b, si);
	struct check_scratch *w = &sc->checker_scratch[worker];
	int dirty = 0, deferred = 0;
	for (uint32_t k = 0; k < sc->width && !dirty; k++) {
		dirty = blocks[k].read_failed;
		deferred |= blocks[k].deferred;
	}
	if (!dirty && deferred)
		dirty = staged_piece_dirty(sc, w, b, si, a, end);
	else if (!dirty)
		dirty = sc->family == SCRUB_PARITY ? parity_piece_dirty(sc, w, blocks, b->first_stripe + si, a, end)
		                                   : mirror_piece_dirty(sc, blocks, a, end);
	if (dirty)
		__atomic_store_n(&b->dirty[si], 1, __ATOMIC_RELAXED);
}

/* Every stripe of a read batch, in order: the checkers' pass, then the
 * full analysis of those not clean. */
static rk_err check_batch(struct scrub_state *sc, struct scrub_batch *b)
{
	uint64_t len = b->col_end - b->col_start;
	b->pieces = (uint32_t)((len + CHECK_PIECE_BYTES - 1) / CHECK_PIECE_BYTES);
	rk_pool_run(sc->checkers, b->nstripes * b->pieces, check_piece, b);
	for (uint32_t i = 0; i < b->nstripes; i++) {
		const struct scrub_block *blocks = batch_stripe(b, i);
		int read_failed = 0;
		rk_err fe = b->dirty[i] ? fetch_deferred(sc, b, i) : RK_OK;
		if (fe)
			return fe;
		for (uint32_t k = 0; k < sc->width; k++)
			read_failed |= blocks[k].read_failed;
		count_stripe(sc, b, i);
		rk_err e = RK_OK;
		if (read_failed)
			e = check_unreadable(sc, b, i);
		else if (b->dirty[i])
			e = scrub_check_range(sc, b, i, 0, len);
		if (e)
			return e;
	}
	return RK_OK;
}

/* ---- the run ---- */

static void scrub_free(struct scrub_state *sc)
{
	for (int i = 0; i < 2; i++)
		batch_free(sc, &sc->batches[i]);
	rk_pool_destroy(sc->readers);
	rk_pool_destroy(sc->checkers);
	for (uint32_t i = 0; i < sc->nchecker_scratch; i++)
		check_scratch_free(&sc->checker_scratch[i]);
	RK_FREE_ALL(sc->checker_scratch, sc->zero, sc->tmp, sc->slot_role, sc->copy_locs, sc->pending.fault,
	            sc->pending.locs, sc->fault, sc->copy_bad, sc->extent_cursor, sc->ahead_end, sc->drop_end, sc->unreadable_here,
	            sc->rewrite_fix, sc->dead_blocks, sc->probed, sc->outcomes);
}

rk_err rk_scrub_range(const struct rk_geom *g, uint64_t off, uint64_t len, uint64_t *first, uint64_t *last)
{
	uint64_t end;
	if (off > g->volume_size)
		return rk_fail(RK_E_RANGE, "scrub: offset %" PRIu64 " is past the end of the %" PRIu64 "-byte volume", off,
		               g->volume_size);
	if (len == 0)
		len = g->volume_size - off;
	if (rk_add_ovf(off, len, &end) || end > g->volume_size)
		return rk_fail(RK_E_RANGE, "scrub: %" PRIu64 " bytes from %" PRIu64 " go past the end of the %" PRIu64
		               "-byte volume", len, off, g->volume_size);
	*first = off / g->stripe_data;
	*last = end / g->stripe_data + (end % g->stripe_data != 0);
	if (*last > g->nstripes)
		*last = g->nstripes;
	return RK_OK;
}

/* Whether any stripe can be checked at all with the members present. */
static rk_err check_any_redundancy(const struct scrub_state *sc)
{
	const struct rk_geom *g = sc->g;
	uint8_t *down = calloc(g->nroles, 1);
	if (!down)
		return rk_fail(RK_E_NOMEM, "scrub: out of memory");
	for (uint32_t r = 0; r < g->nroles; r++)
		down[r] = !sc->devs[r];
	int checkable = rk_geom_checkable(g, down);
	free(down);
	if (!checkable)
		return rk_fail(RK_E_TOOFEW, "scrub: too many members missing: no redundancy left to check");
	return RK_OK;
}

/* The arguments' checks, before anything is allocated. */
static rk_err check_args(const struct rk_geom *g, rk_dev *const *devs, const uint64_t *data_offset, uint64_t first,
                         uint64_t last, const struct rk_scrub_opts *opts)
{
	if (g->level == 0 || g->level == RK_LEVEL_LINEAR)
		return rk_fail(RK_E_NOTSUP, "scrub: %s has no redundancy to verify",
		               g->level == 0 ? "RAID-0" : "a linear array");
	if (first > last || last > g->nstripes)
		return rk_fail(RK_E_RANGE, "scrub: stripes [%" PRIu64 ", %" PRIu64 ") are outside the array's %" PRIu64
		               " stripes", first, last, g->nstripes);
	for (uint32_t r = 0; r < g->nroles; r++) {
		uint64_t end;
		if (!devs[r])
			continue;
		if (rk_add_ovf(data_offset[r], g->member_size, &end) || end > rk_dev_size(devs[r]))
			return rk_fail(RK_E_RANGE, "%s: the member (%" PRIu64 " bytes) is smaller than its data area ends (%"
			               PRIu64 " + %" PRIu64 ")", rk_dev_path(devs[r]), rk_dev_size(devs[r]),
			               data_offset[r], g->member_size);
		if (opts->repair && !rk_dev_writable(devs[r]))
			return rk_fail(RK_E_READONLY, "%s: opened read-only, cannot repair", rk_dev_path(devs[r]));
	}
	return RK_OK;
}

/* Stripes per batch so that each member reads about batch_bytes. */
static uint32_t stripes_per_batch(const struct scrub_state *sc)
{
	const struct rk_geom *g = sc->g;
	uint64_t per = sc->unit;     /* bytes a role reads per stripe (parity, RAID-1) */
	if (g->level == 10)
		per = (sc->unit * g->copies + g->nroles - 1) / g->nroles;
	uint64_t ns = sc->unit > sc->batch_bytes ? 1 : sc->batch_bytes / per;
	if (ns < 1)
		ns = 1;
	if (ns > 65536)
		ns = 65536;
	return (uint32_t)ns;
}

/* The checker pool (the caller and one thread per further CPU) and the
 * reader pool (one thread per member up to RK_SCRUB_MAX_THREADS). */
static rk_err start_pools(struct scrub_state *sc)
{
	const struct rk_scrub_opts *opts = sc->opts;
	uint32_t checkers = opts->checkers;
	if (!checkers) {
		long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
		checkers = ncpu < 1 ? 1 : (uint32_t)(ncpu > RK_SCRUB_MAX_THREADS ? RK_SCRUB_MAX_THREADS : ncpu);
	}
	if (checkers > RK_SCRUB_MAX_THREADS)
		checkers = RK_SCRUB_MAX_THREADS;
	rk_err e = rk_pool_create(&sc->checkers, checkers - 1);
	if (e)
		return e;
	uint32_t nw = rk_pool_workers(sc->checkers);
	if (!(sc->checker_scratch = calloc(nw, sizeof *sc->checker_scratch)))
		return rk_fail(RK_E_NOMEM, "scrub: out of memory");
	for (; sc->nchecker_scratch < nw; sc->nchecker_scratch++)
		if ((e = check_scratch_init(sc, &sc->checker_scratch[sc->nchecker_scratch])))
			return e;
	/* the caller's checker scratch is the analysis scratch (used one after the other) */
	sc->analysis = &sc->checker_scratch[nw - 1];
	uint32_t readers = opts->threads ? opts->threads : sc->g->nroles;
	if (readers > RK_SCRUB_MAX_THREADS)
		readers = RK_SCRUB_MAX_THREADS;
	if (readers > sc->g->nroles)
		readers = sc->g->nroles;
	return rk_pool_create(&sc->readers, readers);
}

/* The state of a run: sizes, pools, scratch, both batches. */
static rk_err scrub_setup(struct scrub_state *sc, uint32_t *batch_stripes, uint64_t *batch_cols)
{
	const struct rk_geom *g = sc->g;
	sc->algo = rk_parity();
	sc->family = g->level == 4 || g->level == 5 || g->level == 6 ? SCRUB_PARITY : SCRUB_MIRRORS;
	sc->width = sc->family == SCRUB_PARITY ? g->nroles : g->copies;
	sc->nslots = g->level == 6 ? g->q_slots + 2 : g->ndata + 1;
	sc->pslot = g->level == 6 ? g->q_slots : g->ndata;
	sc->unit = sc->family == SCRUB_PARITY || g->level == 10 ? g->chunk : g->stripe_data;
	sc->batch_bytes = sc->opts->batch ? sc->opts->batch : RK_SCRUB_BATCH;
	/* Two batches of one buffer per member: wide arrays read less per
	 * member so that memory stays near RK_SCRUB_MEM whatever the count. */
	if (!sc->opts->batch && sc->batch_bytes > RK_SCRUB_MEM / 2 / sc->width)
		sc->batch_bytes = RK_SCRUB_MEM / 2 / sc->width / 4096 * 4096 > SCRUB_MIN_BATCH
		                      ? RK_SCRUB_MEM / 2 / sc->width / 4096 * 4096 : SCRUB_MIN_BATCH;
	if (sc->batch_bytes < RK_SCRUB_SECTOR)
		sc->batch_bytes = RK_SCRUB_SECTOR;
	sc->batch_bytes -= sc->batch_bytes % RK_SCRUB_SECTOR;
	uint64_t cols = sc->unit < sc->batch_bytes ? sc->unit : sc->batch_bytes;
	*batch_cols = cols;
	*batch_stripes = stripes_per_batch(sc);
	sc->zero = scrub_alloc_aligned(SLICE_BYTES);
	sc->tmp = scrub_alloc_aligned(SLICE_BYTES > cols ? SLICE_BYTES : (size_t)cols);
	sc->slot_role = calloc(g->level == 6 ? g->q_slots + 2 : g->nroles + 2, sizeof *sc->slot_role);
	sc->copy_locs = calloc(sc->width, sizeof *sc->copy_locs);
	sc->pending.fault = calloc(sc->width, sizeof *sc->pending.fault);
	sc->pending.locs = calloc(sc->width, sizeof *sc->pending.locs);
	sc->fault = calloc(sc->width, sizeof *sc->fault);
	sc->copy_bad = calloc(sc->width, 1);
	sc->extent_cursor = calloc(g->nroles, sizeof *sc->extent_cursor);
	sc->ahead_end = calloc(g->nroles, sizeof *sc->ahead_end);
	sc->drop_end = calloc(g->nroles, sizeof *sc->drop_end);
	sc->unreadable_here = calloc(g->nroles, 1);
	sc->rewrite_fix = calloc(g->nroles, sizeof *sc->rewrite_fix);
	sc->dead_blocks = calloc(g->nroles, sizeof *sc->dead_blocks);
	if (!sc->extent_cursor || !sc->ahead_end || !sc->drop_end || !sc->unreadable_here || !sc->rewrite_fix || !sc->dead_blocks || !sc->zero ||
	    !sc->tmp || !sc->slot_role || !sc->copy_locs || !sc->pending.fault || !sc->pending.locs || !sc->fault ||
	    !sc->copy_bad)
		return rk_fail(RK_E_NOMEM, "scrub: out of memory");
	memset(sc->zero, 0, SLICE_BYTES);
	rk_err e = start_pools(sc);
	if (!e)
		e = batch_init(sc, &sc->batches[0], *batch_stripes);
	if (!e)
		e = batch_init(sc, &sc->batches[1], *batch_stripes);
	return e;
}

/* Reads and checks stripes [first, last) in batches of NS stripes by COLS
 * column bytes, the next batch read while the one before is checked. */
static rk_err run_batches(struct scrub_state *sc, uint64_t first, uint64_t last, uint32_t ns, uint64_t cols)
{
	const struct rk_scrub_opts *opts = sc->opts;
	struct scrub_batch *cur = &sc->batches[0], *next = &sc->batches[1];
	rk_err e = batch_plan(sc, cur, first, last - first < ns ? (uint32_t)(last - first) : ns, 0, cols);
	if (e)
		return e;
	batch_read_submit(sc, cur);
	for (;;) {
		if ((e = batch_read_wait(sc, cur)))
			return e;
		/* the next batch: the next columns of these stripes, or the next stripes */
		uint64_t c0 = cur->col_end, s = cur->first_stripe;
		if (c0 >= sc->unit) {
			c0 = 0;
			s += cur->nstripes;
		}
		int more = s < last;
		if (more) {
			uint64_t c1 = c0 + cols < sc->unit ? c0 + cols : sc->unit;
			if ((e = batch_plan(sc, next, s, last - s < ns ? (uint32_t)(last - s) : ns, c0, c1)))
				return e;
			batch_read_submit(sc, next);
		}
		if ((e = check_batch(sc, cur))) {
			if (more)
				rk_pool_wait(sc->readers);
			return e;
		}
		int stripes_done = cur->col_end >= sc->unit;
		uint64_t next_stripe = stripes_done ? cur->first_stripe + cur->nstripes : cur->first_stripe;
		sc->stats->next = next_stripe;
		if (stripes_done)
			scrub_flush_region(sc);   /* a region never spans stripes: emit before the checkpoint */
		if (opts->on_progress && (stripes_done || !more) &&
		    opts->on_progress(opts->ctx, next_stripe, next_stripe - first) && more) {
			sc->stats->stopped = 1;
			rk_pool_wait(sc->readers);
			return RK_OK;
		}
		if (!more)
			return RK_OK;
		struct scrub_batch *t = cur;
		cur = next;
		next = t;
	}
}

/* A member's flush failed with RK_E_IO: the first such error is the run's
 * (the other members are flushed all the same). */
static void note_flush_error(void *ctx, uint32_t index, rk_err why)
{
	rk_err *first_io = ctx;
	(void)index;
	if (!*first_io)
		*first_io = why;
}

rk_err rk_scrub_run(const struct rk_geom *g, rk_dev *const *devs, const uint64_t *data_offset,
                    uint64_t first, uint64_t last, const struct rk_scrub_opts *opts,
                    struct rk_scrub_stats *stats)
{
	memset(stats, 0, sizeof *stats);
	stats->next = first;
	rk_err e = check_args(g, devs, data_offset, first, last, opts);
	if (e)
		return e;
	struct scrub_state state, *sc = &state;
	memset(sc, 0, sizeof *sc);
	sc->g = g;
	sc->devs = devs;
	sc->data_offset = data_offset;
	sc->opts = opts;
	sc->stats = stats;
	uint32_t ns;
	uint64_t cols;
	e = scrub_setup(sc, &ns, &cols);
	if (!e)
		e = check_any_redundancy(sc);
	if (!e && first < last) {
		e = run_batches(sc, first, last, ns, cols);
		scrub_flush_region(sc);
	}
	if (sc->write_begun) {
		rk_err first_io = RK_OK;
		rk_err fe = rk_dev_flush_set(devs, g->nroles, NULL, note_flush_error, &first_io);
		if (!fe)
			fe = first_io;
		if (fe && !e)
			e = fe;
	}
	scrub_free(sc);
	return e;
}
