/* scrub_unreadable.c: blocks whose read failed: probing them for the bytes
 * that cannot be read, checking the rest of the stripe around those bytes
 * with the redundancy left, rebuilding and rewriting them (repair) and
 * reporting each unreadable range. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scrub_int.h"

static int same_outcome(const struct unreadable_run *x, const struct unreadable_run *y)
{
	return x->role == y->role && x->recoverable == y->recoverable && x->confirmation == y->confirmation &&
	       x->fix == y->fix;
}

/* Appends RUN to *V (merged into the last run when it follows on). */
static rk_err push_run(struct unreadable_run **v, uint32_t *n, uint32_t *cap, struct unreadable_run run)
{
	if (*n && (*v)[*n - 1].end == run.start && same_outcome(&(*v)[*n - 1], &run)) {
		(*v)[*n - 1].end = run.end;
		return RK_OK;
	}
	if (*n == *cap) {
		uint32_t nc = *cap ? 2 * *cap : 16;
		struct unreadable_run *nv = realloc(*v, nc * sizeof *nv);
		if (!nv)
			return rk_fail(RK_E_NOMEM, "scrub: out of memory");
		*v = nv;
		*cap = nc;
	}
	(*v)[(*n)++] = run;
	return RK_OK;
}

static rk_err push_probed(struct scrub_state *sc, uint32_t role, uint64_t start, uint64_t end)
{
	return push_run(&sc->probed, &sc->nprobed, &sc->probed_cap,
	                (struct unreadable_run){ .role = role, .start = start, .end = end });
}

/* Reads block X again to find its unreadable bytes: whole, then in
 * PROBE_BYTES pieces, then the failing pieces sector by sector.  Unreadable
 * sectors are zeroed in the buffer and appended to sc->probed (column
 * bytes).  A member whose last DEAD_BLOCKS probed blocks had no readable
 * sector at all (a dead or pulled drive) has its later failing blocks taken
 * as unreadable whole, without a read per sector. */
static rk_err probe_block(struct scrub_state *sc, struct scrub_block *x)
{
	rk_dev *d = sc->devs[x->role];
	uint64_t unit = rk_dev_sector(d) > RK_SCRUB_SECTOR ? rk_dev_sector(d) : RK_SCRUB_SECTOR;
	rk_err e = rk_dev_pread(d, x->buf, (size_t)x->len, x->member_off);
	if (e != RK_E_IO) {
		if (!e)
			sc->dead_blocks[x->role] = 0;
		return e;
	}
	if (sc->dead_blocks[x->role] >= DEAD_BLOCKS) {
		memset(x->buf, 0, (size_t)x->len);
		return push_probed(sc, x->role, 0, x->len);
	}
	int any_read = 0;
	for (uint64_t p = 0; p < x->len; p += PROBE_BYTES) {
		uint64_t pe = x->len - p < PROBE_BYTES ? x->len : p + PROBE_BYTES;
		e = rk_dev_pread(d, x->buf + p, (size_t)(pe - p), x->member_off + p);
		if (e != RK_E_IO) {
			if (e)
				return e;
			any_read = 1;
			continue;
		}
		for (uint64_t q = p; q < pe; q += unit) {
			uint64_t qe = pe - q < unit ? pe : q + unit;
			e = rk_dev_pread(d, x->buf + q, (size_t)(qe - q), x->member_off + q);
			if (e == RK_OK) {
				any_read = 1;
				continue;
			}
			if (e != RK_E_IO)
				return e;
			memset(x->buf + q, 0, (size_t)(qe - q));
			if ((e = push_probed(sc, x->role, q, qe)))
				return e;
		}
	}
	sc->dead_blocks[x->role] = any_read ? 0 : sc->dead_blocks[x->role] + 1;
	return RK_OK;
}

/* Whether block K is unreadable in the segment and still to be rewritten. */
static int to_rewrite(const struct scrub_state *sc, const struct scrub_block *k)
{
	return k->len && !k->buf && sc->unreadable_here[k->role] && sc->rewrite_fix[k->role] == RK_SCRUB_UFIX_REWRITTEN;
}

/* Reads back once what was rewritten in [x, y). */
static rk_err read_back(struct scrub_state *sc, const struct scrub_block *blocks, uint64_t x, uint64_t y)
{
	for (uint32_t k = 0; k < sc->width; k++) {
		uint32_t r = blocks[k].role;
		if (!to_rewrite(sc, &blocks[k]))
			continue;
		for (uint64_t col = x; col < y; col += SLICE_BYTES) {
			rk_err e = rk_dev_pread(sc->devs[r], sc->tmp, slice_len(col, y), blocks[k].member_off + col);
			if (e == RK_E_IO) {
				sc->rewrite_fix[r] = RK_SCRUB_UFIX_FAILED;
				break;
			}
			if (e)
				return e;
		}
	}
	return RK_OK;
}

/* Rebuilds column bytes [x, y) of every block of stripe SI with a NULL
 * buffer (unreadable here, or absent) from the others, and writes them to
 * the unreadable ones, then reads those back once.  sc->rewrite_fix[r]
 * gets each unreadable role's outcome.  Needs at most nparity blocks lost
 * (parity) or one readable copy (mirrors). */
static rk_err rewrite_range(struct scrub_state *sc, struct scrub_batch *b, uint32_t si, uint64_t x, uint64_t y)
{
	struct scrub_block *blocks = batch_stripe(b, si);
	struct rk_stripe_map m = { .vol_role = sc->analysis->vol_role, .slot = sc->analysis->slot };
	rk_err e;
	for (uint32_t k = 0; k < sc->width; k++)
		if (blocks[k].len && sc->unreadable_here[blocks[k].role])
			sc->rewrite_fix[blocks[k].role] = RK_SCRUB_UFIX_REWRITTEN;
	if (sc->family == SCRUB_PARITY && (e = rk_geom_stripe_map(sc->g, b->first_stripe + si, &m)))
		return e;
	uint32_t src = UINT32_MAX;   /* mirrors: the first readable copy */
	for (uint32_t c = 0; c < sc->width && src == UINT32_MAX; c++)
		if (blocks[c].buf)
			src = c;
	for (uint64_t col = x; col < y; col += SLICE_BYTES) {
		size_t n = slice_len(col, y);
		for (uint32_t k = 0; k < sc->width; k++) {
			/* parity levels: k is the role */
			if (!to_rewrite(sc, &blocks[k]))
				continue;
			const uint8_t *from = sc->family == SCRUB_PARITY ? parity_rebuild_slice(sc, blocks, k, col, n)
			                                                 : blocks[src].buf + col;
			rk_err we = scrub_write(sc, blocks[k].role, from, n, blocks[k].member_off + col);
			if (we == RK_E_IO)
				sc->rewrite_fix[blocks[k].role] = RK_SCRUB_UFIX_FAILED;
			else if (we)
				return we;
		}
	}
	return read_back(sc, blocks, x, y);
}

static int run_order(const void *a, const void *b)
{
	const struct unreadable_run *x = a, *y = b;
	if (x->role != y->role)
		return x->role < y->role ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

static int u64_order(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Sorts sc->outcomes and merges runs that follow on with one outcome. */
static void merge_outcomes(struct scrub_state *sc)
{
	qsort(sc->outcomes, sc->noutcomes, sizeof *sc->outcomes, run_order);
	uint32_t n = 0;
	for (uint32_t i = 0; i < sc->noutcomes; i++) {
		struct unreadable_run *u = &sc->outcomes[i];
		if (n && sc->outcomes[n - 1].end == u->start && same_outcome(&sc->outcomes[n - 1], u))
			sc->outcomes[n - 1].end = u->end;
		else
			sc->outcomes[n++] = *u;
	}
	sc->noutcomes = n;
}

/* Volume bytes and sentence of one unreadable outcome of a parity stripe. */
static void describe_parity_unreadable(const struct scrub_state *sc, const struct rk_stripe_map *m,
                                       const struct unreadable_run *u, uint64_t base, uint64_t col_start,
                                       const char *how, struct rk_scrub_unreadable *out, char *why, size_t cap)
{
	const struct rk_geom *g = sc->g;
	out->offset = base + col_start + u->start;
	out->length = (uint64_t)(g->ndata - 1) * g->chunk + (u->end - u->start);
	const char *what = u->role == m->p_role ? "P" : u->role == m->q_role ? "Q" : "data";
	for (uint32_t j = 0; j < g->ndata; j++)
		if (m->vol_role[j] == u->role) {
			out->is_data = 1;
			out->offset = base + (uint64_t)j * g->chunk + col_start + u->start;
			out->length = u->end - u->start;
		}
	if (u->recoverable)
		snprintf(why, cap, "read error in the %s block; the rest of the stripe can rebuild it%s", what, how);
	else
		snprintf(why, cap, "read error in the %s block, and too many other blocks of the stripe "
		         "are missing or unreadable to rebuild it", what);
}

static void count_unreadable(struct scrub_state *sc, const struct rk_scrub_unreadable *u)
{
	sc->stats->unreadable++;
	if (!u->recoverable)
		sc->stats->unrecoverable++;
	if (u->fix == RK_SCRUB_UFIX_REWRITTEN)
		sc->stats->rewritten++;
	else if (u->fix == RK_SCRUB_UFIX_FAILED)
		sc->stats->rewrite_failed++;
	if (sc->opts->on_unreadable)
		sc->opts->on_unreadable(sc->opts->ctx, u);
}

/* Reports the outcomes in sc->outcomes (sorted, merged) for stripe SI. */
static void emit_unreadable(struct scrub_state *sc, struct scrub_batch *b, uint32_t si)
{
	const struct rk_geom *g = sc->g;
	const struct scrub_block *blocks = batch_stripe(b, si);
	uint64_t s = b->first_stripe + si, base = s * g->stripe_data;
	struct rk_stripe_map m = { .vol_role = sc->analysis->vol_role, .slot = sc->analysis->slot };
	if (sc->family == SCRUB_PARITY && rk_geom_stripe_map(g, s, &m))
		return;   /* cannot fail: the stripe was mapped before */
	merge_outcomes(sc);
	for (uint32_t i = 0; i < sc->noutcomes; i++) {
		const struct unreadable_run *u = &sc->outcomes[i];
		struct rk_scrub_unreadable out = { .stripe = s, .role = u->role, .member_len = u->end - u->start,
		                                   .recoverable = u->recoverable,
		                                   .confirmed = u->confirmation == REBUILD_CONFIRMED,
		                                   .disputed = u->confirmation == REBUILD_DISPUTED, .fix = u->fix };
		for (uint32_t k = 0; k < sc->width; k++)
			if (blocks[k].role == u->role && blocks[k].len)
				out.member_off = blocks[k].member_off + u->start;
		char why[300];
		const char *how = !u->recoverable ? ""
		                : u->confirmation == REBUILD_CONFIRMED ? "; the redundancy left over confirms the rebuilt bytes"
		                : u->confirmation == REBUILD_DISPUTED ? "; but the rest of the stripe disagrees with itself "
		                                                        "there, so the rebuilt bytes are not certain"
		                : "; nothing is left over to confirm the rebuilt bytes";
		if (sc->family == SCRUB_PARITY) {
			describe_parity_unreadable(sc, &m, u, base, b->col_start, how, &out, why, sizeof why);
		} else {
			out.is_data = 1;
			out.offset = base + b->col_start + u->start;
			out.length = u->end - u->start;
			snprintf(why, sizeof why, "%s%s", u->recoverable ? "read error; another copy is readable"
			                                                 : "read error, and no other copy is readable", how);
		}
		out.why = why;
		count_unreadable(sc, &out);
	}
	sc->noutcomes = 0;
}

/* Segment [x, y) of stripe SI, whose unreadable blocks (NUNREADABLE of
 * them) count as missing there: redundancy left over checks the rest (and
 * so the bytes that rebuild the unreadable ones); nothing is repaired
 * there, as every fix would build on a block that cannot be read.  The
 * unreadable bytes are rewritten when that check confirms what rebuilds
 * them, or (rewrite_unconfirmed) when nothing is left to check: from stale
 * parity that would write wrong data. */
static rk_err handle_segment(struct scrub_state *sc, struct scrub_batch *b, uint32_t si, uint64_t x, uint64_t y,
                             uint32_t nlost, uint32_t nreadable)
{
	struct scrub_block *blocks = batch_stripe(b, si);
	int parity = sc->family == SCRUB_PARITY;
	int recoverable = parity ? nlost <= sc->g->nparity : nreadable >= 1;
	int spare = parity ? nlost < sc->g->nparity : nreadable >= 2;
	enum rebuild_confirmation confirmation = REBUILD_UNCONFIRMED;
	rk_err e = RK_OK;
	for (uint32_t k = 0; k < sc->width; k++)
		sc->rewrite_fix[blocks[k].role] = RK_SCRUB_UFIX_NONE;
	if (spare) {
		uint64_t runs = sc->runs_recorded;
		sc->report_only = 1;
		e = scrub_check_range(sc, b, si, x, y);
		sc->report_only = 0;
		confirmation = sc->runs_recorded == runs ? REBUILD_CONFIRMED : REBUILD_DISPUTED;
	}
	if (!e && recoverable && sc->opts->repair &&
	    (confirmation == REBUILD_CONFIRMED || (confirmation == REBUILD_UNCONFIRMED && sc->opts->rewrite_unconfirmed)))
		e = rewrite_range(sc, b, si, x, y);
	for (uint32_t k = 0; k < sc->width && !e; k++) {
		uint32_t r = blocks[k].role;
		if (sc->unreadable_here[r] && !blocks[k].buf && blocks[k].len)
			e = push_run(&sc->outcomes, &sc->noutcomes, &sc->outcomes_cap,
			             (struct unreadable_run){ .role = r, .start = x, .end = y, .recoverable = recoverable,
			                                      .confirmation = recoverable ? confirmation : REBUILD_UNCONFIRMED,
			                                      .fix = sc->rewrite_fix[r] });
	}
	return e;
}

/* Takes the blocks unreadable over all of [x, y) out of stripe SI (their
 * buffers saved in SAVED) and checks or handles the segment. */
static rk_err check_segment(struct scrub_state *sc, struct scrub_batch *b, uint32_t si, uint64_t x, uint64_t y,
                            uint8_t **saved)
{
	struct scrub_block *blocks = batch_stripe(b, si);
	uint32_t nunreadable = 0, nlost = 0, nreadable = 0;
	for (uint32_t k = 0; k < sc->width; k++) {
		uint32_t r = blocks[k].role;
		saved[k] = blocks[k].buf;
		for (uint32_t i = 0; i < sc->nprobed; i++)
			if (sc->probed[i].role == r && sc->probed[i].start <= x && sc->probed[i].end >= y && blocks[k].buf) {
				sc->unreadable_here[r] = 1;
				blocks[k].buf = NULL;
				nunreadable++;
			}
		if (!blocks[k].len)
			continue;
		if (blocks[k].buf)
			nreadable++;
		else
			nlost++;
	}
	rk_err e = nunreadable ? handle_segment(sc, b, si, x, y, nlost, nreadable) : scrub_check_range(sc, b, si, x, y);
	for (uint32_t k = 0; k < sc->width; k++) {
		blocks[k].buf = saved[k];
		sc->unreadable_here[blocks[k].role] = 0;
	}
	return e;
}

/* Stripe SI has blocks whose read failed: probe them, then take the stripe
 * in segments of constant unreadable roles; each segment's unreadable
 * blocks count as missing there: the rest is checked with the redundancy
 * left, and (repair) the unreadable bytes are rebuilt and rewritten. */
rk_err check_unreadable(struct scrub_state *sc, struct scrub_batch *b, uint32_t si)
{
	struct scrub_block *blocks = batch_stripe(b, si);
	uint64_t len = 0;
	rk_err e;
	sc->nprobed = 0;
	for (uint32_t k = 0; k < sc->width; k++) {
		if (blocks[k].len > len)
			len = blocks[k].len;
		if (!blocks[k].read_failed)
			continue;
		if ((e = probe_block(sc, &blocks[k])))
			return e;
		blocks[k].read_failed = 0;
	}
	if (!sc->nprobed)
		return scrub_check_range(sc, b, si, 0, len);
	/* segment bounds: every run's ends */
	uint64_t *cut = malloc((2 * (size_t)sc->nprobed + 2) * sizeof *cut);
	uint8_t **saved = calloc(sc->width, sizeof *saved);
	if (!cut || !saved) {
		free(cut);
		free(saved);
		return rk_fail(RK_E_NOMEM, "scrub: out of memory");
	}
	uint32_t ncut = 0;
	cut[ncut++] = 0;
	cut[ncut++] = len;
	for (uint32_t i = 0; i < sc->nprobed; i++) {
		cut[ncut++] = sc->probed[i].start;
		cut[ncut++] = sc->probed[i].end;
	}
	qsort(cut, ncut, sizeof *cut, u64_order);
	e = RK_OK;
	for (uint32_t c = 0; c + 1 < ncut && !e; c++)
		if (cut[c] != cut[c + 1])
			e = check_segment(sc, b, si, cut[c], cut[c + 1], saved);
	free(cut);
	free(saved);
	if (e)
		return e;
	scrub_flush_region(sc);
	emit_unreadable(sc, b, si);
	return RK_OK;
}
