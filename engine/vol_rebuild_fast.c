/* vol_rebuild_fast.c: parity rebuild straight from the page cache.
 *
 * With only the target role down and the survivors' data resident
 * (rk_dev_peek tells), each batch of stripes is computed piece by piece:
 * the survivors' bytes of a piece read (pread) into a per-worker stage
 * small enough to stay in the CPU cache, the target's bytes computed from
 * there into a buffer that is written to the target; the batches are jobs
 * on a thread pool of up to one thread per CPU.  (Computing from the peek
 * mapping instead costs a page fault per few pages, and on this project's
 * test machines that is several times the copy.)  Batches that are not
 * resident are left to vol_rebuild_parity (in order).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "vol_int.h"

#define FAST_BATCH (4u << 20)     /* member bytes per role per batch */
#define FAST_MAX_WORKERS 4u       /* threads computing batches, the caller included */
#define FAST_MAPPED (16u << 20)   /* peeked bytes of all batches in flight, about (they count in RSS) */
#define FAST_PIECE (256u << 10)   /* target bytes written at a time */
#define FAST_STAGE (768u << 10)   /* a worker's stage of survivor bytes, about: within its L2 cache (4 KiB a role at least) */

enum batch_state {
	BATCH_PENDING = 0,
	BATCH_WRITTEN,
	BATCH_NOT_RESIDENT,       /* left to the I/O path */
};

/* What one worker computes with. */
struct fast_scratch {
	uint8_t *out;             /* FAST_PIECE bytes of the target */
	uint8_t *p_scratch;       /* RAID-6: P computed along with Q */
	const uint8_t **src;      /* per role: its bytes of the piece being computed (in stage) */
	uint8_t *stage;           /* piece bytes per role */
	uint32_t *vol_role, *slot;
	void **ptrs;
};

struct fast_rebuild {
	rk_vol *v;
	uint32_t role;
	uint64_t s0, s1;          /* stripes to rebuild */
	uint64_t per_batch, nbatch;   /* batch i: stripes s0 + i * per_batch (fewer at s1) */
	uint64_t workers;         /* batches in flight at the most (FAST_MAPPED) */
	size_t piece;             /* column bytes computed at a time (per role in the stage) */
	uint8_t *state;           /* enum batch_state per batch */
	const uint8_t *zero;      /* a chunk of zeros for unused syndrome slots (or NULL) */
	struct fast_scratch *scratch;   /* per pool worker */
	pthread_mutex_t lock;     /* err, msg */
	rk_err err;
	char msg[160];
};

/* Whether the live roles' bytes of stripes [s, s+ns) are all resident. */
static int fast_peek(rk_vol *v, uint32_t role, uint64_t s, uint64_t ns)
{
	uint64_t chunk = v->g.chunk, len = ns * chunk;
	for (uint32_t r = 0; r < v->nroles; r++) {
		const uint8_t *mapped;
		if (r != role && !rk_dev_peek(v->devs[r], v->data_offset[r] + s * chunk, len, &mapped))
			return 0;
	}
	return 1;
}

/* Reads the live roles' LEN bytes at column COL of stripe S into WS's
 * stage and points WS's src at them. */
static rk_err fast_stage(const struct fast_rebuild *f, struct fast_scratch *ws, uint64_t s, uint64_t col, size_t len)
{
	rk_vol *v = f->v;
	for (uint32_t r = 0, k = 0; r < v->nroles; r++) {
		if (r == f->role)
			continue;
		uint8_t *buf = ws->stage + (size_t)k++ * f->piece;
		rk_err e = rk_dev_pread(v->devs[r], buf, len, v->data_offset[r] + s * v->g.chunk + col);
		if (e)
			return e;
		ws->src[r] = buf;
	}
	return RK_OK;
}

/* The RAID-6 syndrome pointer array for regenerating Q (OUT) of the
 * stripe mapped in M: the survivors' data at byte AT of their mappings,
 * P into scratch, zero blocks (at column COL) in the slots without a role. */
static void fast_syndrome_ptrs(const struct fast_rebuild *f, struct fast_scratch *ws, const struct rk_stripe_map *m,
                               size_t at, uint64_t col, uint8_t *out)
{
	uint32_t slots = f->v->g.q_slots + 2;
	if (f->zero)
		for (uint32_t x = 0; x < slots; x++)
			ws->ptrs[x] = (void *)(uintptr_t)(f->zero + col);
	for (uint32_t r = 0; r < f->v->nroles; r++)
		if (r != f->role && r != m->p_role)
			ws->ptrs[ws->slot[r]] = (void *)(uintptr_t)(ws->src[r] + at);
	ws->ptrs[ws->slot[m->p_role]] = ws->p_scratch;
	ws->ptrs[ws->slot[f->role]] = out;
}

/* Computes LEN target bytes at column COL of the stripe mapped in M (AT:
 * the same bytes' index in the mappings) into OUT. */
static void fast_piece(const struct fast_rebuild *f, struct fast_scratch *ws, const struct rk_stripe_map *m, size_t at,
                       uint64_t col, size_t len, uint8_t *out)
{
	rk_vol *v = f->v;
	const struct rk_geom *g = &v->g;
	int six = g->level == 6;
	uint32_t k = 0;
	if (six && f->role == m->q_role) {
		/* Q: generated with P into a scratch block */
		fast_syndrome_ptrs(f, ws, m, at, col, out);
		v->pa->gen((int)(g->q_slots + 2), len, ws->ptrs);
		return;
	}
	if (f->role == m->p_role) {
		/* P: XOR of the data */
		for (uint32_t j = 0; j < g->ndata; j++)
			ws->ptrs[k++] = (void *)(uintptr_t)(ws->src[ws->vol_role[j]] + at);
	} else {
		/* one data block: XOR of the other data and P */
		for (uint32_t r = 0; r < v->nroles; r++)
			if (r != f->role && !(six && r == m->q_role))
				ws->ptrs[k++] = (void *)(uintptr_t)(ws->src[r] + at);
	}
	ws->ptrs[k++] = out;
	if (k == 2)
		memcpy(out, ws->ptrs[0], len);
	else
		v->pa->xor_gen((int)k, len, ws->ptrs);
}

/* Rebuilds batch I from the page cache, or marks it not resident. */
static rk_err fast_batch(struct fast_rebuild *f, struct fast_scratch *ws, uint64_t i)
{
	rk_vol *v = f->v;
	const uint32_t n = v->nroles;
	const uint64_t chunk = v->g.chunk;
	uint64_t s = f->s0 + i * f->per_batch, ns = f->s1 - s < f->per_batch ? f->s1 - s : f->per_batch;
	if (!fast_peek(v, f->role, s, ns)) {
		f->state[i] = BATCH_NOT_RESIDENT;
		return RK_OK;
	}
	/* the batch's target bytes in pieces small enough to stay in cache
	 * from the survivors' read through the kernel to the write */
	uint64_t total = ns * chunk, base = 0, fill = 0, cur = UINT64_MAX;
	uint64_t at_target = v->data_offset[n] + s * chunk;
	struct rk_stripe_map m = { .vol_role = ws->vol_role, .slot = ws->slot };
	rk_err e = RK_OK;
	for (uint64_t pos = 0; pos < total;) {
		uint64_t u = pos / chunk, col = pos % chunk;
		size_t len = (size_t)(chunk - col < f->piece ? chunk - col : f->piece);
		if (fill + len > FAST_PIECE) {
			if ((e = rk_dev_pwrite(v->devs[n], ws->out, (size_t)fill, at_target + base)))
				return e;
			base += fill;
			fill = 0;
		}
		if (u != cur) {
			rk_geom_stripe_map(&v->g, s + u, &m);   /* cannot fail: s < nstripes */
			cur = u;
		}
		if ((e = fast_stage(f, ws, s + u, col, len)))
			return e;
		fast_piece(f, ws, &m, 0, col, len, ws->out + fill);
		fill += len;
		pos += len;
	}
	if (fill && (e = rk_dev_pwrite(v->devs[n], ws->out, (size_t)fill, at_target + base)))
		return e;
	f->state[i] = BATCH_WRITTEN;
	return RK_OK;
}

/* Pool job: batch JOB, unless an earlier batch failed. */
static void fast_job(void *ctx, uint32_t worker, uint32_t job)
{
	struct fast_rebuild *f = ctx;
	pthread_mutex_lock(&f->lock);
	int stop = f->err != RK_OK;
	pthread_mutex_unlock(&f->lock);
	if (stop)
		return;
	rk_err e = fast_batch(f, &f->scratch[worker], job);
	if (!e)
		return;
	pthread_mutex_lock(&f->lock);
	if (!f->err) {
		f->err = e;
		snprintf(f->msg, sizeof f->msg, "%s", rk_errmsg());
	}
	pthread_mutex_unlock(&f->lock);
}

static void free_scratch(struct fast_scratch *scratch, uint32_t workers)
{
	for (uint32_t w = 0; scratch && w < workers; w++) {
		free(scratch[w].out);
		free(scratch[w].p_scratch);
		free(scratch[w].src);
		free(scratch[w].stage);
		free(scratch[w].vol_role);
		free(scratch[w].slot);
		free(scratch[w].ptrs);
	}
	free(scratch);
}

static struct fast_scratch *alloc_scratch(const rk_vol *v, uint32_t workers, size_t piece)
{
	const struct rk_geom *g = &v->g;
	uint32_t n = v->nroles, slots = g->q_slots + 2;
	struct fast_scratch *scratch = calloc(workers, sizeof *scratch);
	for (uint32_t w = 0; scratch && w < workers; w++) {
		struct fast_scratch *ws = &scratch[w];
		ws->out = aligned_alloc(64, FAST_PIECE);
		ws->p_scratch = g->level == 6 ? aligned_alloc(64, FAST_PIECE) : NULL;
		ws->src = calloc(n, sizeof *ws->src);
		ws->stage = aligned_alloc(64, piece * (n - 1));
		ws->vol_role = calloc(g->ndata, sizeof *ws->vol_role);
		ws->slot = calloc(n, sizeof *ws->slot);
		ws->ptrs = calloc(slots > n + 2 ? slots : n + 2, sizeof *ws->ptrs);
		if (!ws->out || (g->level == 6 && !ws->p_scratch) || !ws->src || !ws->stage || !ws->vol_role || !ws->slot || !ws->ptrs) {
			free_scratch(scratch, workers);
			return NULL;
		}
	}
	return scratch;
}

/* Runs every batch on a pool of up to one thread per CPU. */
static rk_err fast_run(struct fast_rebuild *f)
{
	uint64_t workers = f->workers;
	if (workers > f->nbatch)
		workers = f->nbatch;
	rk_pool *pool;
	/* without threads to be had the caller computes every batch */
	if (rk_pool_create(&pool, (uint32_t)workers - 1) != RK_OK && rk_pool_create(&pool, 0) != RK_OK)
		return rk_lasterr();
	uint32_t nworkers = rk_pool_workers(pool);
	if (!(f->scratch = alloc_scratch(f->v, nworkers, f->piece))) {
		rk_pool_destroy(pool);
		return rk_fail(RK_E_NOMEM, "volume: out of memory");
	}
	pthread_mutex_init(&f->lock, NULL);
	rk_pool_run(pool, (uint32_t)f->nbatch, fast_job, f);
	rk_pool_destroy(pool);
	pthread_mutex_destroy(&f->lock);
	free_scratch(f->scratch, nworkers);
	return f->err ? rk_fail(f->err, "%s", f->msg) : RK_OK;
}

rk_err vol_rebuild_parity_fast(rk_vol *v, uint32_t role, uint64_t s0, uint64_t s1,
                               void (*progress)(void *ctx, uint64_t done), void *ctx)
{
	const struct rk_geom *g = &v->g;
	uint64_t chunk = g->chunk;
	if (s0 >= s1 || vol_ndown(v) != 1 || chunk > RK_GEOM_MAX_CHUNK)
		return vol_rebuild_parity(v, role, s0, s1, progress, ctx);
	struct fast_rebuild f = { .v = v, .role = role, .s0 = s0, .s1 = s1 };
	/* wide arrays: fewer bytes per role, so that the pages mapped at once
	 * stay near FAST_MAPPED whatever the member count */
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	uint64_t nw = ncpu < 1 ? 1 : ncpu > FAST_MAX_WORKERS ? FAST_MAX_WORKERS : (uint64_t)ncpu;
	uint64_t per_role = FAST_MAPPED / nw / v->nroles < FAST_BATCH ? FAST_MAPPED / nw / v->nroles : FAST_BATCH;
	f.per_batch = per_role / chunk ? per_role / chunk : 1;
	/* a batch of one chunk per role may alone pass the share: fewer workers */
	uint64_t batch_bytes = f.per_batch * chunk * v->nroles;
	f.workers = FAST_MAPPED / batch_bytes < nw ? FAST_MAPPED / batch_bytes : nw;
	if (!f.workers)
		f.workers = 1;
	f.nbatch = (s1 - s0 + f.per_batch - 1) / f.per_batch;
	size_t piece = FAST_STAGE / (v->nroles - 1) / 4096 * 4096;
	f.piece = piece < 4096 ? 4096 : piece > FAST_PIECE ? FAST_PIECE : piece;
	if (f.nbatch > UINT32_MAX)   /* more pool jobs than one batch can name */
		return vol_rebuild_parity(v, role, s0, s1, progress, ctx);
	/* nothing resident at the start (a disk, fault injection): the I/O path */
	if (!fast_peek(v, role, s0, s1 - s0 < f.per_batch ? s1 - s0 : f.per_batch))
		return vol_rebuild_parity(v, role, s0, s1, progress, ctx);
	uint8_t *zero = NULL;
	if (g->q_slots + 2 > v->nroles && !(zero = calloc(1, (size_t)chunk)))
		return rk_fail(RK_E_NOMEM, "volume: out of memory");
	f.zero = zero;
	if (!(f.state = calloc((size_t)f.nbatch, 1))) {
		free(zero);
		return rk_fail(RK_E_NOMEM, "volume: out of memory");
	}
	rk_err e = fast_run(&f);
	free(zero);
	/* batches that were not resident, in order, through the I/O path */
	for (uint64_t i = 0; i < f.nbatch && !e;) {
		if (f.state[i] != BATCH_NOT_RESIDENT) {
			i++;
			continue;
		}
		uint64_t j = i;
		while (j < f.nbatch && f.state[j] == BATCH_NOT_RESIDENT)
			j++;
		uint64_t a = s0 + i * f.per_batch, b = s0 + j * f.per_batch < s1 ? s0 + j * f.per_batch : s1;
		e = vol_rebuild_parity(v, role, a, b, NULL, NULL);
		i = j;
	}
	free(f.state);
	if (!e && progress)
		progress(ctx, (s1 - s0) * chunk);
	return e;
}
