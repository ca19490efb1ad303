/* vol.c: the stripe engine: a volume over the members of an array.
 *
 * Linear, RAID-0, RAID-1 and RAID-10 move data straight between the caller's
 * buffer and the members.  RAID-4/5/6 work in units: a few whole stripes, or
 * for very wide stripes a column slice of one stripe, staged in one buffer
 * per role (memory stays near VOL_BUDGET whatever the array size).  Member
 * I/O of a step is a list of segments, merged per role into large requests
 * and run in parallel by a small thread pool (one job per role).
 *
 * A member whose read or write fails with RK_E_IO is marked down, reported
 * through the fail callback, and the operation carries on degraded where the
 * redundancy allows.  Other errors (RK_E_FAULT: the process is "dead";
 * RK_E_READONLY ...) stop the operation.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "rk_vol.h"
#include "rk_le.h"
#include "rk_parity.h"

#define VOL_BUDGET   (4u << 20)   /* bytes of role buffers per unit */
#define VOL_MIN_COLS 4096u        /* narrowest column slice */
#define VOL_MAX_THREADS 8
#define DIRECT_PIECE (4u << 20)   /* largest single request of the direct path */
#define DIRECT_BATCH (32u << 20)  /* volume bytes per direct-path batch */

enum { UP = 0, MISSING = 1, FAILED = 2, READERR = 3 };   /* READERR: down for the rest of one rk_vol_read, to be repaired */

struct seg {
	uint32_t role;
	uint32_t write;
	uint64_t off;        /* member data-area offset */
	uint8_t *buf;
	size_t   len;
	rk_err   err;
};

struct pool {
	pthread_t th[VOL_MAX_THREADS];
	int nth;
	pthread_mutex_t mu;
	pthread_cond_t go, done;
	int stop;
	struct seg *segs;
	uint32_t *gstart;     /* group g = segs[gstart[g] .. gstart[g+1]) */
	uint32_t ng, next, active;
	struct rk_vol *v;
};

/* Per stripe of a unit (parity levels). */
struct ustripe {
	uint64_t s;
	uint32_t p, q;
	uint32_t ua, ub;      /* column range the operation touches, relative to the slice */
	int lost;             /* needs reconstruction / degraded handling */
	int mode;             /* write: 0 none, 1 full, 2 rmw, 3 rcw, 4 degraded */
};

struct rk_vol {
	struct rk_geom g;
	uint32_t n;
	rk_dev **devs;
	uint64_t *doff;
	uint8_t *down;
	char (*msg)[160];     /* last I/O error per role (set by workers) */
	pthread_mutex_t mu;   /* down[], fail callback */
	pthread_mutex_t op;   /* one operation at a time: shared buffers */
	rk_vol_fail_fn fail_fn;
	void *fail_ctx;
	/* read-error repair (rk_vol_read on members opened read-write) */
	rk_vol_repair_fn rep_fn;
	void *rep_ctx;
	int rep_on;                 /* inside rk_vol_read */
	struct { uint32_t role; uint64_t off, len; } *rep;
	uint32_t nrep, caprep;
	const struct rk_parity_algo *pa;
	struct pool pool;
	int pool_on;
	/* segment list */
	struct seg *segs;
	uint32_t nsegs, capsegs;
	uint32_t *gstart;
	/* parity-level unit state */
	uint32_t ustripes;    /* B: stripes per unit */
	int zcopy;            /* healthy data moves straight between members and the caller */
	uint64_t ucols;       /* w: columns per slice */
	uint8_t **rb;         /* per role: ustripes * ucols bytes */
	uint8_t *rbmem;
	uint8_t *zero, *scratch;
	uint32_t *vrole, *slot;     /* per unit stripe: ndata / nroles entries */
	uint32_t *wa, *wb;          /* per unit stripe and data block: touched columns */
	struct ustripe *us;
	void **ptrs;                /* q_slots + 2 (or nroles + 2) */
	uint32_t *tmp_roles;
	struct rk_loc *locs;        /* g.copies entries */
	/* write journal (rk_vol_set_journal): parity-level unit commits */
	rk_vol_journal_fn jfn;
	void *jctx;
	uint64_t jmax;              /* bytes one record may hold per role */
	struct rk_vol_wseg *jsegs;
	uint32_t capj;
};

/* ---- member state ---- */

int rk_vol_role_down(const rk_vol *v, uint32_t role)
{
	if (role >= v->n)
		return 1;
	return __atomic_load_n(&v->down[role], __ATOMIC_ACQUIRE) != UP;
}

static int is_down(rk_vol *v, uint32_t role)
{
	return v->down[role] != UP;   /* only the operation thread changes it */
}

static uint32_t ndown(rk_vol *v)
{
	uint32_t c = 0;
	for (uint32_t r = 0; r < v->n; r++)
		c += v->down[r] != UP;
	return c;
}

/* Marks ROLE failed and tells the owner (once). */
static void fail_role(rk_vol *v, uint32_t role, rk_err why)
{
	pthread_mutex_lock(&v->mu);
	int was = v->down[role];
	if (was == UP)
		__atomic_store_n(&v->down[role], (uint8_t)FAILED, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&v->mu);
	if (was != UP)
		return;
	rk_fail(why, "%s", v->msg[role][0] ? v->msg[role] : "member I/O failed");
	if (v->fail_fn)
		v->fail_fn(v->fail_ctx, role, why);
}

void rk_vol_on_repair(rk_vol *v, rk_vol_repair_fn fn, void *ctx)
{
	pthread_mutex_lock(&v->mu);
	v->rep_fn = fn;
	v->rep_ctx = ctx;
	pthread_mutex_unlock(&v->mu);
}

/* A read of ROLE failed with RK_E_IO inside rk_vol_read: ROLE is down for
 * the rest of the read (its bytes are reconstructed) and the range is
 * remembered for repair_reads.  0 when it cannot be remembered. */
static int note_read_error(rk_vol *v, uint32_t role, uint64_t off, size_t len)
{
	if (v->nrep == v->caprep) {
		uint32_t nc = v->caprep ? v->caprep * 2 : 8;
		void *nr = realloc(v->rep, nc * sizeof *v->rep);
		if (!nr)
			return 0;
		v->rep = nr;
		v->caprep = nc;
	}
	v->rep[v->nrep].role = role;
	v->rep[v->nrep].off = off;
	v->rep[v->nrep].len = len;
	v->nrep++;
	if (v->down[role] == UP)
		__atomic_store_n(&v->down[role], (uint8_t)READERR, __ATOMIC_RELEASE);
	return 1;
}

void rk_vol_on_fail(rk_vol *v, rk_vol_fail_fn fn, void *ctx)
{
	pthread_mutex_lock(&v->mu);
	v->fail_fn = fn;
	v->fail_ctx = ctx;
	pthread_mutex_unlock(&v->mu);
}

uint64_t rk_vol_size(const rk_vol *v)
{
	return v->g.volume_size;
}

const struct rk_geom *rk_vol_geom(const rk_vol *v)
{
	return &v->g;
}

/* ---- segment I/O ---- */

static rk_err add_seg(rk_vol *v, uint32_t role, int write, uint64_t off, void *buf, size_t len)
{
	if (len == 0)
		return RK_OK;
	if (v->nsegs == v->capsegs) {
		uint32_t nc = v->capsegs ? v->capsegs * 2 : 256;
		struct seg *ns = realloc(v->segs, nc * sizeof *ns);
		uint32_t *ng = realloc(v->gstart, (nc + 1) * sizeof *ng);
		if (ns)
			v->segs = ns;
		if (ng)
			v->gstart = ng;
		if (!ns || !ng)
			return rk_fail(RK_E_NOMEM, "volume: out of memory");
		v->capsegs = nc;
	}
	v->segs[v->nsegs++] = (struct seg){ .role = role, .write = (uint32_t)write, .off = off, .buf = buf, .len = len };
	return RK_OK;
}

static void run_group(rk_vol *v, uint32_t gidx, struct seg *segs, const uint32_t *gs)
{
	rk_err prev = RK_OK;
	for (uint32_t i = gs[gidx]; i < gs[gidx + 1]; i++) {
		struct seg *s = &segs[i];
		if (prev) {
			s->err = prev;
			continue;
		}
		rk_dev *d = v->devs[s->role];
		uint64_t at = v->doff[s->role] + s->off;
		s->err = s->write ? rk_dev_pwrite(d, s->buf, s->len, at) : rk_dev_pread(d, s->buf, s->len, at);
		if (s->err) {
			snprintf(v->msg[s->role], sizeof v->msg[0], "%s", rk_errmsg());
			prev = s->err;
		}
	}
}

static void *pool_main(void *arg)
{
	struct pool *p = arg;
	pthread_mutex_lock(&p->mu);
	for (;;) {
		while (!p->stop && p->next >= p->ng)
			pthread_cond_wait(&p->go, &p->mu);
		if (p->stop)
			break;
		uint32_t g = p->next++;
		pthread_mutex_unlock(&p->mu);
		run_group(p->v, g, p->segs, p->gstart);
		pthread_mutex_lock(&p->mu);
		if (--p->active == 0)
			pthread_cond_signal(&p->done);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

static int seg_cmp(const void *a, const void *b)
{
	const struct seg *x = a, *y = b;
	if (x->role != y->role)
		return x->role < y->role ? -1 : 1;
	if (x->off != y->off)
		return x->off < y->off ? -1 : 1;
	return 0;
}

/* Runs the queued segments (one direction per call), members in parallel,
 * then empties the queue.  Members whose I/O failed with RK_E_IO are failed
 * (fail_role); any other error is returned. */
static rk_err run_segs(rk_vol *v)
{
	uint32_t n = v->nsegs;
	v->nsegs = 0;
	if (n == 0)
		return RK_OK;
	struct seg *s = v->segs;
	qsort(s, n, sizeof *s, seg_cmp);
	/* merge neighbours on a member into large requests */
	uint32_t m = 0;
	for (uint32_t i = 0; i < n; i++) {
		if (m && s[m - 1].role == s[i].role && s[m - 1].write == s[i].write &&
		    s[m - 1].off + s[m - 1].len == s[i].off && s[m - 1].buf + s[m - 1].len == s[i].buf &&
		    s[m - 1].len + s[i].len <= (64u << 20)) {
			s[m - 1].len += s[i].len;
			continue;
		}
		s[m++] = s[i];
	}
	uint32_t ng = 0;
	for (uint32_t i = 0; i < m; i++)
		if (i == 0 || s[i].role != s[i - 1].role)
			v->gstart[ng++] = i;
	v->gstart[ng] = m;
	if (!v->pool_on || ng == 1) {
		for (uint32_t g = 0; g < ng; g++)
			run_group(v, g, s, v->gstart);
	} else {
		struct pool *p = &v->pool;
		pthread_mutex_lock(&p->mu);
		p->segs = s;
		p->gstart = v->gstart;
		p->ng = ng;
		p->next = 0;
		p->active = ng;
		pthread_cond_broadcast(&p->go);
		while (p->next < p->ng) {
			uint32_t g = p->next++;
			pthread_mutex_unlock(&p->mu);
			run_group(v, g, s, v->gstart);
			pthread_mutex_lock(&p->mu);
			p->active--;
		}
		while (p->active)
			pthread_cond_wait(&p->done, &p->mu);
		p->ng = 0;
		pthread_mutex_unlock(&p->mu);
	}
	rk_err fatal = RK_OK;
	for (uint32_t i = 0; i < m; i++) {
		if (!s[i].err)
			continue;
		/* without redundancy a member is never dropped: a bad sector of
		 * a RAID-0 member fails that read, not the whole volume */
		if (s[i].err == RK_E_IO && s[i].role < v->n && rk_geom_redundancy(&v->g) > 0) {
			/* a read error inside rk_vol_read on a writable member: repaired
			 * afterwards (only the segment that really failed: later ones of
			 * its group were not tried) */
			if (!s[i].write && v->rep_on && v->down[s[i].role] != FAILED && rk_dev_writable(v->devs[s[i].role])) {
				if ((i > 0 && s[i - 1].role == s[i].role && s[i - 1].err) ||
				    note_read_error(v, s[i].role, s[i].off, s[i].len))
					continue;
			}
			fail_role(v, s[i].role, RK_E_IO);
		}
		else if (!fatal)
			fatal = rk_fail(s[i].err, "%s", v->msg[s[i].role]);
	}
	return fatal;
}

/* ---- open / close ---- */

/* Whether every volume chunk still has a live copy (RAID-10). */
static int r10_readable(rk_vol *v)
{
	uint64_t lim = v->g.nstripes < v->n ? v->g.nstripes : v->n;   /* the copy pattern repeats every n chunks */
	for (uint64_t c = 0; c < lim; c++) {
		uint32_t k = rk_geom_copies(&v->g, c * v->g.chunk, v->locs, v->g.copies), live = 0;
		for (uint32_t i = 0; i < k; i++)
			live += !is_down(v, v->locs[i].role);
		if (!live)
			return 0;
	}
	return 1;
}

/* Enough members to serve every byte? */
static int readable(rk_vol *v)
{
	uint32_t d = ndown(v);
	switch (v->g.level) {
	case 1: return d < v->n;
	case 10: return r10_readable(v);
	default: return d <= v->g.nparity;
	}
}

static rk_err too_few(rk_vol *v)
{
	return rk_fail(RK_E_TOOFEW, "volume: %u of %u members missing or failed; RAID-%s tolerates %u", ndown(v), v->n,
	               rk_level_name(v->g.level), rk_geom_redundancy(&v->g));
}

static void vol_free(rk_vol *v)
{
	if (!v)
		return;
	if (v->pool_on) {
		pthread_mutex_lock(&v->pool.mu);
		v->pool.stop = 1;
		pthread_cond_broadcast(&v->pool.go);
		pthread_mutex_unlock(&v->pool.mu);
		for (int i = 0; i < v->pool.nth; i++)
			pthread_join(v->pool.th[i], NULL);
		pthread_mutex_destroy(&v->pool.mu);
		pthread_cond_destroy(&v->pool.go);
		pthread_cond_destroy(&v->pool.done);
	}
	free(v->devs);
	free(v->doff);
	free(v->down);
	free(v->msg);
	free(v->segs);
	free(v->gstart);
	free(v->rb);
	free(v->rbmem);
	free(v->zero);
	free(v->scratch);
	free(v->vrole);
	free(v->slot);
	free(v->wa);
	free(v->wb);
	free(v->us);
	free(v->ptrs);
	free(v->tmp_roles);
	free(v->locs);
	free(v->jsegs);
	free(v->rep);
	pthread_mutex_destroy(&v->mu);
	pthread_mutex_destroy(&v->op);
	free(v);
}

void rk_vol_close(rk_vol *v)
{
	vol_free(v);
}

static int parity_level(const struct rk_geom *g)
{
	return g->level == 4 || g->level == 5 || g->level == 6;
}

rk_err rk_vol_open(rk_vol **out, const struct rk_geom *g, rk_dev *const *devs, const uint64_t *data_offset)
{
	*out = NULL;
	if (!g || !devs || !data_offset || g->nroles == 0 || g->nroles > RK_GEOM_MAX_ROLES || g->volume_size == 0)
		return rk_fail(RK_E_INVAL, "volume: invalid geometry or member list");
	/* re-derive: never trust a caller-filled struct */
	struct rk_geom chk;
	rk_err e = rk_geom_init(&chk, g->level, g->layout, g->chunk, g->nroles, g->member_size);
	if (e)
		return e;
	if (chk.volume_size != g->volume_size || chk.member_size != g->member_size)
		return rk_fail(RK_E_INVAL, "volume: geometry was not made by rk_geom_init");
	rk_vol *v = calloc(1, sizeof *v);
	if (!v)
		return rk_fail(RK_E_NOMEM, "volume: out of memory");
	pthread_mutex_init(&v->mu, NULL);
	pthread_mutex_init(&v->op, NULL);
	v->g = chk;
	uint32_t n = v->n = g->nroles;
	/* one slot past the roles: a rebuild's target (rk_vol_rebuild) */
	v->devs = calloc(n + 1, sizeof *v->devs);
	v->doff = calloc(n + 1, sizeof *v->doff);
	v->down = calloc(n, 1);
	v->msg = calloc(n + 1, sizeof *v->msg);
	v->locs = calloc(v->g.copies, sizeof *v->locs);
	if (!v->devs || !v->doff || !v->down || !v->msg || !v->locs)
		goto nomem;
	for (uint32_t r = 0; r < n; r++) {
		v->devs[r] = devs[r];
		v->doff[r] = data_offset[r];
		if (!devs[r]) {
			v->down[r] = MISSING;
			continue;
		}
		uint64_t end;
		if (rk_add_ovf(data_offset[r], v->g.member_size, &end) || end > rk_dev_size(devs[r])) {
			e = rk_fail(RK_E_SHORT, "%s: member is %llu bytes, the data area ends at %llu", rk_dev_path(devs[r]),
			            (unsigned long long)rk_dev_size(devs[r]), (unsigned long long)end);
			vol_free(v);
			return e;
		}
	}
	if (!readable(v)) {
		e = too_few(v);
		vol_free(v);
		return e;
	}
	v->pa = rk_parity();
	if (parity_level(&v->g)) {
		uint64_t chunk = v->g.chunk, row = (uint64_t)n * chunk;
		if (row <= VOL_BUDGET) {
			v->ucols = chunk;
			v->ustripes = (uint32_t)(VOL_BUDGET / row);
			if (v->ustripes > 64)
				v->ustripes = 64;
			if (v->ustripes > v->g.nstripes)
				v->ustripes = (uint32_t)v->g.nstripes;
		} else {
			uint64_t w = VOL_BUDGET / n;
			w -= w % VOL_MIN_COLS;
			if (w < VOL_MIN_COLS)
				w = VOL_MIN_COLS;
			v->ucols = w < chunk ? w : chunk;
			v->ustripes = 1;
		}
		/* staging merges a unit's stripes into one request per member: worth a
		 * copy only while chunks are small */
		v->zcopy = v->ustripes == 1 || chunk >= (256u << 10);
		size_t per = (size_t)v->ustripes * v->ucols, B = v->ustripes;
		uint32_t nd = v->g.ndata, slots = v->g.q_slots + 2;
		v->rb = calloc(n, sizeof *v->rb);
		v->rbmem = aligned_alloc(64, (per * n + 63) / 64 * 64);
		v->zero = aligned_alloc(64, (v->ucols + 63) / 64 * 64);
		v->scratch = aligned_alloc(64, (v->ucols + 63) / 64 * 64);
		v->vrole = calloc(B * nd, sizeof *v->vrole);
		v->slot = calloc(B * n, sizeof *v->slot);
		v->wa = calloc(B * nd, sizeof *v->wa);
		v->wb = calloc(B * nd, sizeof *v->wb);
		v->us = calloc(B, sizeof *v->us);
		v->ptrs = calloc(slots > n + 2 ? slots : n + 2, sizeof *v->ptrs);
		v->tmp_roles = calloc(n, sizeof *v->tmp_roles);
		if (!v->rb || !v->rbmem || !v->zero || !v->scratch || !v->vrole || !v->slot || !v->wa || !v->wb || !v->us ||
		    !v->ptrs || !v->tmp_roles)
			goto nomem;
		memset(v->zero, 0, v->ucols);
		for (uint32_t r = 0; r < n; r++)
			v->rb[r] = v->rbmem + per * r;
	}
	/* the pool: one thread per member up to a cap (the caller's thread is one) */
	int nth = (int)(n < VOL_MAX_THREADS ? n : VOL_MAX_THREADS) - 1;
	if (nth > 0) {
		struct pool *p = &v->pool;
		pthread_mutex_init(&p->mu, NULL);
		pthread_cond_init(&p->go, NULL);
		pthread_cond_init(&p->done, NULL);
		p->v = v;
		v->pool_on = 1;
		for (int i = 0; i < nth; i++) {
			if (pthread_create(&p->th[i], NULL, pool_main, p))
				break;
			p->nth++;
		}
	}
	*out = v;
	return RK_OK;
nomem:
	vol_free(v);
	return rk_fail(RK_E_NOMEM, "volume: out of memory");
}

/* ---- direct path: linear, 0, 1, 10 ---- */

/* Reads [off, off+len) (the caller checked the range). */
static rk_err direct_read(rk_vol *v, uint8_t *buf, uint64_t len, uint64_t off)
{
	const struct rk_geom *g = &v->g;
	uint64_t done = 0;
	uint64_t piece_no = 0;
	while (done < len) {
		/* plan a batch: one segment per piece, from the first live copy
		 * (RAID-1 rotates over copies so a large read spreads) */
		uint64_t bstart = done, bend = done;
		rk_err e;
		while (bend < len && bend - bstart < DIRECT_BATCH) {
			uint64_t voff = off + bend, run;
			uint32_t k = rk_geom_copies(g, voff, v->locs, g->copies);
			struct rk_loc l0;
			if ((e = rk_geom_map(g, voff, &l0, &run)))
				return e;
			uint64_t take = run < len - bend ? run : len - bend;
			if (take > DIRECT_PIECE)
				take = DIRECT_PIECE;
			uint32_t pick = k;
			for (uint32_t i = 0; i < k; i++) {
				uint32_t c = (uint32_t)((i + (g->level == 1 ? piece_no : 0)) % k);
				if (!is_down(v, v->locs[c].role)) {
					pick = c;
					break;
				}
			}
			if (pick == k)
				return k > 1 ? too_few(v)
				             : rk_fail(RK_E_IO, "volume: byte %llu lives on member %u, which has failed (RAID-%s has no redundancy)",
				                       (unsigned long long)voff, v->locs[0].role, rk_level_name(g->level));
			if ((e = add_seg(v, v->locs[pick].role, 0, v->locs[pick].member_off, buf + bend, (size_t)take)))
				return e;
			bend += take;
			piece_no++;
		}
		uint32_t before = ndown(v);
		if ((e = run_segs(v)))
			return e;
		if (ndown(v) != before) {
			if (!readable(v))
				return too_few(v);
			continue;   /* redo the batch from the surviving copies */
		}
		done = bend;
	}
	return RK_OK;
}

static rk_err direct_write(rk_vol *v, const uint8_t *buf, uint64_t len, uint64_t off)
{
	const struct rk_geom *g = &v->g;
	uint64_t done = 0;
	while (done < len) {
		uint64_t bend = done;
		rk_err e;
		while (bend < len && bend - done < DIRECT_BATCH) {
			uint64_t voff = off + bend, run;
			struct rk_loc l0;
			if ((e = rk_geom_map(g, voff, &l0, &run)))
				return e;
			uint64_t take = run < len - bend ? run : len - bend;
			if (take > DIRECT_PIECE)
				take = DIRECT_PIECE;
			uint32_t k = rk_geom_copies(g, voff, v->locs, g->copies), live = 0;
			for (uint32_t i = 0; i < k; i++) {
				if (is_down(v, v->locs[i].role))
					continue;
				live++;
				if ((e = add_seg(v, v->locs[i].role, 1, v->locs[i].member_off, (uint8_t *)(uintptr_t)(buf + bend),
				                 (size_t)take)))
					return e;
			}
			if (!live)
				return k > 1 ? too_few(v)
				             : rk_fail(RK_E_IO, "volume: byte %llu lives on member %u, which has failed",
				                       (unsigned long long)voff, v->locs[0].role);
			bend += take;
		}
		if ((e = run_segs(v)))
			return e;
		/* a failed copy is fine while another copy of every byte landed */
		if (!readable(v))
			return too_few(v);
		if (g->copies == 1 && ndown(v))
			return rk_fail(RK_E_IO, "volume: a member failed during the write: %s", rk_errmsg());
		done = bend;
	}
	return RK_OK;
}

/* ---- parity levels: units ---- */

/* Unit being processed: stripes [s0, s0+nst), columns [c0, c1) of each chunk. */
struct unit {
	uint64_t s0;
	uint32_t nst;
	uint64_t c0, c1;
};

#define RB(v, r, u) ((v)->rb[r] + (size_t)(u) * (v)->ucols)

/* Fills the stripe maps of the unit and the touched column range of each
 * data block for the volume range [off, end). */
static void unit_setup(rk_vol *v, const struct unit *U, uint64_t off, uint64_t end)
{
	const struct rk_geom *g = &v->g;
	uint32_t nd = g->ndata;
	for (uint32_t u = 0; u < U->nst; u++) {
		struct ustripe *st = &v->us[u];
		st->s = U->s0 + u;
		struct rk_stripe_map m = { .vol_role = v->vrole + (size_t)u * nd, .slot = v->slot + (size_t)u * v->n };
		rk_geom_stripe_map(g, st->s, &m);   /* cannot fail: s < nstripes */
		st->p = m.p_role;
		st->q = m.q_role;
		st->ua = UINT32_MAX;
		st->ub = 0;
		st->lost = 0;
		st->mode = 0;
		uint64_t vs = st->s * g->stripe_data;
		for (uint32_t j = 0; j < nd; j++) {
			uint64_t bs = vs + (uint64_t)j * g->chunk;
			uint64_t a = bs + U->c0 > off ? bs + U->c0 : off;
			uint64_t b = bs + U->c1 < end ? bs + U->c1 : end;
			uint32_t *wa = &v->wa[(size_t)u * nd + j], *wb = &v->wb[(size_t)u * nd + j];
			if (a >= b) {
				*wa = *wb = 0;
				continue;
			}
			*wa = (uint32_t)(a - bs - U->c0);
			*wb = (uint32_t)(b - bs - U->c0);
			if (*wa < st->ua)
				st->ua = *wa;
			if (*wb > st->ub)
				st->ub = *wb;
		}
		if (st->ua >= st->ub)
			st->ua = st->ub = 0;
	}
}

/* Member offset of column COL of stripe S in the unit. */
static uint64_t moff(rk_vol *v, const struct unit *U, uint64_t s, uint64_t col)
{
	return s * v->g.chunk + U->c0 + col;
}

/* Queues reads of every live role of stripe U over its [ua, ub). */
static rk_err queue_all_live(rk_vol *v, const struct unit *U, uint32_t u)
{
	struct ustripe *st = &v->us[u];
	for (uint32_t r = 0; r < v->n; r++) {
		if (is_down(v, r))
			continue;
		rk_err e = add_seg(v, r, 0, moff(v, U, st->s, st->ua), RB(v, r, u) + st->ua, st->ub - st->ua);
		if (e)
			return e;
	}
	return RK_OK;
}

/* Rebuilds in the role buffers every down data block of stripe U over
 * [ua, ub) from the live roles (already read there).  RK_E_TOOFEW when the
 * parity cannot cover the loss. */
static rk_err reconstruct(rk_vol *v, uint32_t u)
{
	const struct rk_geom *g = &v->g;
	struct ustripe *st = &v->us[u];
	const uint32_t *slot = v->slot + (size_t)u * v->n;
	size_t len = st->ub - st->ua;
	uint32_t lostd[2], nl = 0, nlost_all = 0;
	for (uint32_t r = 0; r < v->n; r++) {
		if (!is_down(v, r))
			continue;
		nlost_all++;
		if (r != st->p && r != st->q) {
			if (nl == 2)
				return too_few(v);
			lostd[nl++] = r;
		}
	}
	if (nl == 0 || len == 0)
		return RK_OK;
	if (nlost_all > g->nparity)
		return too_few(v);
	int p_ok = !is_down(v, st->p);
	if (nl == 1 && p_ok) {
		/* XOR of the other data blocks and P */
		uint32_t k = 0;
		for (uint32_t r = 0; r < v->n; r++)
			if (r != lostd[0] && r != st->q)
				v->ptrs[k++] = RB(v, r, u) + st->ua;
		v->ptrs[k++] = RB(v, lostd[0], u) + st->ua;
		if (k == 2)
			memcpy(v->ptrs[1], v->ptrs[0], len);
		else
			v->pa->xor_gen((int)k, len, v->ptrs);
		return RK_OK;
	}
	/* RAID-6 with Q: the syndrome pointer array in md's slot order */
	uint32_t slots = g->q_slots + 2;
	for (uint32_t i = 0; i < slots; i++)
		v->ptrs[i] = v->zero;
	for (uint32_t r = 0; r < v->n; r++)
		v->ptrs[slot[r]] = RB(v, r, u) + st->ua;
	if (nl == 1) {          /* data + P lost */
		v->pa->rec_datap((int)slots, len, (int)slot[lostd[0]], v->ptrs);
	} else {
		uint32_t a = slot[lostd[0]], b = slot[lostd[1]];
		v->pa->rec_2data((int)slots, len, (int)(a < b ? a : b), (int)(a < b ? b : a), v->ptrs);
	}
	return RK_OK;
}

/* Recomputes P (and Q) of stripe U over [ua, ub) from the data in the role
 * buffers. */
static void gen_parity(rk_vol *v, uint32_t u, const uint8_t *src)
{
	const struct rk_geom *g = &v->g;
	struct ustripe *st = &v->us[u];
	size_t len = st->ub - st->ua;
	if (len == 0)
		return;
	const uint32_t *vr = v->vrole + (size_t)u * g->ndata;
	if (g->level != 6) {
		for (uint32_t j = 0; j < g->ndata; j++)
			v->ptrs[j] = src ? (void *)(uintptr_t)(src + (uint64_t)j * g->chunk + st->ua) : RB(v, vr[j], u) + st->ua;
		v->ptrs[g->ndata] = RB(v, st->p, u) + st->ua;
		if (g->ndata == 1)
			memcpy(v->ptrs[1], v->ptrs[0], len);
		else
			v->pa->xor_gen((int)g->ndata + 1, len, v->ptrs);
		return;
	}
	const uint32_t *slot = v->slot + (size_t)u * v->n;
	uint32_t slots = g->q_slots + 2;
	for (uint32_t i = 0; i < slots; i++)
		v->ptrs[i] = v->zero;
	for (uint32_t r = 0; r < v->n; r++)
		v->ptrs[slot[r]] = RB(v, r, u) + st->ua;
	if (src)
		for (uint32_t j = 0; j < g->ndata; j++)
			v->ptrs[slot[vr[j]]] = (void *)(uintptr_t)(src + (uint64_t)j * g->chunk + st->ua);
	v->pa->gen((int)slots, len, v->ptrs);
}

/* Reads the volume range [off, end) that falls in unit U into BUF (which
 * holds volume byte OFF0 at index 0). */
static rk_err unit_read(rk_vol *v, const struct unit *U, uint8_t *buf, uint64_t off0, uint64_t off, uint64_t end)
{
	const struct rk_geom *g = &v->g;
	uint32_t nd = g->ndata;
	rk_err e;
	unit_setup(v, U, off, end);
	/* pass 1: the wanted blocks from their members */
	for (uint32_t u = 0; u < U->nst; u++)
		for (uint32_t j = 0; j < nd; j++) {
			uint32_t a = v->wa[(size_t)u * nd + j], b = v->wb[(size_t)u * nd + j], r = v->vrole[(size_t)u * nd + j];
			if (a >= b)
				continue;
			if (is_down(v, r)) {
				v->us[u].lost = 1;
				continue;
			}
			/* healthy blocks go straight to the caller's buffer (zcopy) */
			uint8_t *dst = v->zcopy ? buf + (v->us[u].s * g->stripe_data + (uint64_t)j * g->chunk + U->c0 + a - off0)
			                        : RB(v, r, u) + a;
			if ((e = add_seg(v, r, 0, moff(v, U, v->us[u].s, a), dst, b - a)))
				return e;
		}
	if ((e = run_segs(v)))
		return e;
	/* pass 2..: stripes with a wanted block on a down member */
	for (uint32_t tries = 0;; tries++) {
		uint32_t need = 0;
		for (uint32_t u = 0; u < U->nst; u++) {
			struct ustripe *st = &v->us[u];
			st->lost = 0;
			for (uint32_t j = 0; j < nd; j++) {
				uint32_t a = v->wa[(size_t)u * nd + j], b = v->wb[(size_t)u * nd + j];
				if (a < b && is_down(v, v->vrole[(size_t)u * nd + j]))
					st->lost = 1;
			}
			if (!st->lost)
				continue;
			need++;
			if ((e = queue_all_live(v, U, u)))
				return e;
		}
		if (!need)
			break;
		if (!readable(v) || tries > v->n)
			return too_few(v);
		uint32_t before = ndown(v);
		if ((e = run_segs(v)))
			return e;
		if (ndown(v) != before)
			continue;   /* another member failed meanwhile: read again */
		for (uint32_t u = 0; u < U->nst; u++)
			if (v->us[u].lost && (e = reconstruct(v, u)))
				return e;
		break;
	}
	/* copy out the stripes that were staged for reconstruction */
	for (uint32_t u = 0; u < U->nst; u++) {
		if (!v->us[u].lost && v->zcopy)
			continue;
		uint64_t vs = v->us[u].s * g->stripe_data;
		for (uint32_t j = 0; j < nd; j++) {
			uint32_t a = v->wa[(size_t)u * nd + j], b = v->wb[(size_t)u * nd + j];
			if (a < b)
				memcpy(buf + (vs + (uint64_t)j * g->chunk + U->c0 + a - off0),
				       RB(v, v->vrole[(size_t)u * nd + j], u) + a, b - a);
		}
	}
	return RK_OK;
}

/* Chooses how to write each stripe of the unit and queues its reads. */
static rk_err plan_write_reads(rk_vol *v, const struct unit *U)
{
	const struct rk_geom *g = &v->g;
	uint32_t nd = g->ndata;
	rk_err e;
	for (uint32_t u = 0; u < U->nst; u++) {
		struct ustripe *st = &v->us[u];
		if (st->ua >= st->ub) {
			st->mode = 0;
			continue;
		}
		const uint32_t *wa = v->wa + (size_t)u * nd, *wb = v->wb + (size_t)u * nd, *vr = v->vrole + (size_t)u * nd;
		int anydown = 0;
		for (uint32_t r = 0; r < v->n; r++)
			anydown |= is_down(v, r);
		if (anydown) {
			st->mode = 4;
			if ((e = queue_all_live(v, U, u)))
				return e;
			continue;
		}
		uint32_t written = 0, partial = 0;
		for (uint32_t j = 0; j < nd; j++) {
			if (wa[j] < wb[j])
				written++;
			if (!(wa[j] == st->ua && wb[j] == st->ub))
				partial++;   /* not covering U: RCW must read it */
		}
		if (partial == 0) {
			st->mode = 1;
			continue;
		}
		uint32_t rmw = written + g->nparity, rcw = partial;
		if (rmw < rcw) {
			st->mode = 2;
			for (uint32_t j = 0; j < nd; j++)
				if (wa[j] < wb[j] && (e = add_seg(v, vr[j], 0, moff(v, U, st->s, wa[j]), RB(v, vr[j], u) + wa[j],
				                                  wb[j] - wa[j])))
					return e;
			if ((e = add_seg(v, st->p, 0, moff(v, U, st->s, st->ua), RB(v, st->p, u) + st->ua, st->ub - st->ua)))
				return e;
			if (g->level == 6 &&
			    (e = add_seg(v, st->q, 0, moff(v, U, st->s, st->ua), RB(v, st->q, u) + st->ua, st->ub - st->ua)))
				return e;
		} else {
			st->mode = 3;
			for (uint32_t j = 0; j < nd; j++)
				if (!(wa[j] == st->ua && wb[j] == st->ub) &&
				    (e = add_seg(v, vr[j], 0, moff(v, U, st->s, st->ua), RB(v, vr[j], u) + st->ua, st->ub - st->ua)))
					return e;
		}
	}
	return RK_OK;
}

/* ---- journaled commit (rk_vol_set_journal) ---- */

/* Queues the writes of stripe U restricted to columns [x, y) of the slice. */
static rk_err queue_stripe_writes(rk_vol *v, const struct unit *U, const uint8_t *buf, uint64_t off0, uint32_t u,
                                  uint64_t x, uint64_t y)
{
	const struct rk_geom *g = &v->g;
	uint32_t nd = g->ndata;
	struct ustripe *st = &v->us[u];
	const uint8_t *src = buf + (st->s * g->stripe_data + U->c0 - off0);
	rk_err e;
	for (uint32_t j = 0; j < nd; j++) {
		uint64_t a = v->wa[(size_t)u * nd + j], b = v->wb[(size_t)u * nd + j];
		uint32_t r = v->vrole[(size_t)u * nd + j];
		if (a < x)
			a = x;
		if (b > y)
			b = y;
		if (a >= b || is_down(v, r))
			continue;
		uint8_t *from = st->mode == 1 && v->zcopy ? (uint8_t *)(uintptr_t)(src + (uint64_t)j * g->chunk + a) : RB(v, r, u) + a;
		if ((e = add_seg(v, r, 1, moff(v, U, st->s, a), from, (size_t)(b - a))))
			return e;
	}
	uint64_t a = st->ua > x ? st->ua : x, b = st->ub < y ? st->ub : y;
	uint32_t pr[2] = { st->p, st->q };
	for (uint32_t k = 0; k < g->nparity && a < b; k++)
		if (!is_down(v, pr[k]) && (e = add_seg(v, pr[k], 1, moff(v, U, st->s, a), RB(v, pr[k], u) + a, (size_t)(b - a))))
			return e;
	return RK_OK;
}

/* Hands the queued writes to the journal, drops the roles it failed, then
 * writes them in place (data and parity together: the record makes the
 * order irrelevant). */
static rk_err journal_run(rk_vol *v)
{
	uint32_t n = v->nsegs;
	if (n == 0)
		return RK_OK;
	if (n > v->capj) {
		struct rk_vol_wseg *nj = realloc(v->jsegs, (size_t)n * sizeof *nj);
		if (!nj) {
			v->nsegs = 0;
			return rk_fail(RK_E_NOMEM, "volume: out of memory");
		}
		v->jsegs = nj;
		v->capj = n;
	}
	for (uint32_t i = 0; i < n; i++)
		v->jsegs[i] = (struct rk_vol_wseg){ .role = v->segs[i].role, .off = v->segs[i].off,
		                                    .buf = v->segs[i].buf, .len = v->segs[i].len };
	rk_err e = v->jfn(v->jctx, v->jsegs, n);
	if (e) {
		v->nsegs = 0;
		return e;
	}
	uint32_t m = 0;
	for (uint32_t i = 0; i < n; i++)
		if (!is_down(v, v->segs[i].role))
			v->segs[m++] = v->segs[i];
	v->nsegs = m;
	if (!readable(v)) {
		v->nsegs = 0;
		return too_few(v);
	}
	if ((e = run_segs(v)))
		return e;
	return readable(v) ? RK_OK : too_few(v);
}

/* unit_commit with a journal: stripes grouped so that each role's share of
 * a record stays within jmax; a stripe wider than that goes in column
 * pieces (parity is column-wise, so each piece is consistent alone). */
static rk_err unit_commit_journal(rk_vol *v, const struct unit *U, const uint8_t *buf, uint64_t off0)
{
	uint64_t cap = v->jmax;
	rk_err e;
	uint32_t u = 0;
	while (u < U->nst) {
		struct ustripe *st = &v->us[u];
		if (!st->mode || st->ua >= st->ub) {
			u++;
			continue;
		}
		if (st->ub - st->ua > cap) {
			for (uint64_t x = st->ua; x < st->ub; x += cap) {
				uint64_t y = st->ub - x > cap ? x + cap : st->ub;
				if ((e = queue_stripe_writes(v, U, buf, off0, u, x, y)) || (e = journal_run(v)))
					return e;
			}
			u++;
			continue;
		}
		uint64_t used = 0;
		while (u < U->nst) {
			st = &v->us[u];
			uint64_t w = st->mode ? st->ub - st->ua : 0;
			if (w > cap || used + w > cap)
				break;
			if (w && (e = queue_stripe_writes(v, U, buf, off0, u, st->ua, st->ub)))
				return e;
			used += w;
			u++;
		}
		if ((e = journal_run(v)))
			return e;
	}
	return RK_OK;
}

void rk_vol_set_journal(rk_vol *v, rk_vol_journal_fn fn, void *ctx, uint64_t max_role_bytes)
{
	pthread_mutex_lock(&v->op);
	v->jfn = max_role_bytes ? fn : NULL;
	v->jctx = ctx;
	v->jmax = max_role_bytes;
	pthread_mutex_unlock(&v->op);
}

void rk_vol_fail_role(rk_vol *v, uint32_t role, rk_err why, const char *msg)
{
	if (role >= v->n)
		return;
	snprintf(v->msg[role], sizeof v->msg[0], "%s", msg ? msg : "member I/O failed");
	fail_role(v, role, why);
}

/* Writes the unit's new data and parity: data first, then parity (the
 * journal hooks in here later).  Only live roles are written. */
static rk_err unit_commit(rk_vol *v, const struct unit *U, const uint8_t *buf, uint64_t off0)
{
	const struct rk_geom *g = &v->g;
	uint32_t nd = g->ndata;
	rk_err e;
	if (v->jfn)
		return unit_commit_journal(v, U, buf, off0);
	for (uint32_t u = 0; u < U->nst; u++) {
		struct ustripe *st = &v->us[u];
		if (!st->mode)
			continue;
		const uint8_t *src = buf + (st->s * g->stripe_data + U->c0 - off0);
		for (uint32_t j = 0; j < nd; j++) {
			uint32_t a = v->wa[(size_t)u * nd + j], b = v->wb[(size_t)u * nd + j], r = v->vrole[(size_t)u * nd + j];
			/* full stripes were not staged: their data is the caller's */
			uint8_t *from = st->mode == 1 && v->zcopy ? (uint8_t *)(uintptr_t)(src + (uint64_t)j * g->chunk + a) : RB(v, r, u) + a;
			if (a < b && !is_down(v, r) && (e = add_seg(v, r, 1, moff(v, U, st->s, a), from, b - a)))
				return e;
		}
	}
	if ((e = run_segs(v)))
		return e;
	for (uint32_t u = 0; u < U->nst; u++) {
		struct ustripe *st = &v->us[u];
		if (!st->mode)
			continue;
		uint32_t pr[2] = { st->p, st->q };
		for (uint32_t k = 0; k < g->nparity; k++)
			if (!is_down(v, pr[k]) &&
			    (e = add_seg(v, pr[k], 1, moff(v, U, st->s, st->ua), RB(v, pr[k], u) + st->ua, st->ub - st->ua)))
				return e;
	}
	if ((e = run_segs(v)))
		return e;
	if (!readable(v))
		return too_few(v);
	return RK_OK;
}

/* Writes the part of [off, end) in unit U from BUF (volume byte OFF0 at 0). */
static rk_err unit_write(rk_vol *v, const struct unit *U, const uint8_t *buf, uint64_t off0, uint64_t off, uint64_t end)
{
	const struct rk_geom *g = &v->g;
	uint32_t nd = g->ndata;
	rk_err e;
	unit_setup(v, U, off, end);
	/* reads; a member failing meanwhile re-plans the unit */
	for (uint32_t tries = 0;; tries++) {
		if (!readable(v) || tries > v->n)
			return too_few(v);
		if ((e = plan_write_reads(v, U)))
			return e;
		uint32_t before = ndown(v);
		if ((e = run_segs(v)))
			return e;
		if (ndown(v) == before)
			break;
	}
	for (uint32_t u = 0; u < U->nst; u++) {
		struct ustripe *st = &v->us[u];
		if (!st->mode)
			continue;
		const uint32_t *wa = v->wa + (size_t)u * nd, *wb = v->wb + (size_t)u * nd, *vr = v->vrole + (size_t)u * nd;
		const uint8_t *src = buf + (st->s * g->stripe_data + U->c0 - off0);
		if (st->mode == 4 && (e = reconstruct(v, u)))
			return e;
		if (st->mode == 2) {
			/* parity -= old, += new, block by block */
			const uint32_t *slot = v->slot + (size_t)u * v->n;
			for (uint32_t j = 0; j < nd; j++) {
				if (wa[j] >= wb[j])
					continue;
				size_t len = wb[j] - wa[j];
				uint8_t *old = RB(v, vr[j], u) + wa[j];
				const uint8_t *nw = src + (uint64_t)j * g->chunk + wa[j];
				uint8_t *P = RB(v, st->p, u) + wa[j];
				if (g->level != 6) {
					void *p4[4] = { P, old, (void *)(uintptr_t)nw, v->scratch };
					v->pa->xor_gen(4, len, p4);
					memcpy(P, v->scratch, len);
				} else {
					uint32_t slots = g->q_slots + 2;
					for (uint32_t i = 0; i < slots; i++)
						v->ptrs[i] = v->zero;
					v->ptrs[g->q_slots] = P;
					v->ptrs[g->q_slots + 1] = RB(v, st->q, u) + wa[j];
					int sj = (int)slot[vr[j]];
					v->ptrs[sj] = old;
					v->pa->gen_partial((int)slots, sj, sj, len, v->ptrs);
					v->ptrs[sj] = (void *)(uintptr_t)nw;
					v->pa->gen_partial((int)slots, sj, sj, len, v->ptrs);
				}
				memcpy(old, nw, len);
			}
			continue;
		}
		if (st->mode == 1 && v->zcopy) {
			gen_parity(v, u, src);   /* straight from the caller's data */
			continue;
		}
		/* rcw, degraded: overlay the new data, regenerate parity over U */
		for (uint32_t j = 0; j < nd; j++)
			if (wa[j] < wb[j])
				memcpy(RB(v, vr[j], u) + wa[j], src + (uint64_t)j * g->chunk + wa[j], wb[j] - wa[j]);
		gen_parity(v, u, NULL);
	}
	return unit_commit(v, U, buf, off0);
}

/* Walks [off, off+len) of a parity volume unit by unit. */
static rk_err parity_io(rk_vol *v, uint8_t *buf, const uint8_t *cbuf, uint64_t len, uint64_t off)
{
	const struct rk_geom *g = &v->g;
	uint64_t end = off + len;
	uint64_t s = off / g->stripe_data, slast = (end - 1) / g->stripe_data;
	while (s <= slast) {
		struct unit U = { .s0 = s };
		uint64_t left = slast - s + 1;
		U.nst = left < v->ustripes ? (uint32_t)left : v->ustripes;
		for (uint64_t c0 = 0; c0 < g->chunk; c0 += v->ucols) {
			U.c0 = c0;
			U.c1 = c0 + v->ucols < g->chunk ? c0 + v->ucols : g->chunk;
			rk_err e = buf ? unit_read(v, &U, buf, off, off, end) : unit_write(v, &U, cbuf, off, off, end);
			if (e)
				return e;
		}
		s += U.nst;
	}
	return RK_OK;
}

/* ---- public I/O ---- */

static rk_err check_range(rk_vol *v, size_t len, uint64_t off)
{
	uint64_t end;
	if (rk_add_ovf(off, len, &end) || end > v->g.volume_size)
		return rk_fail(RK_E_RANGE, "volume: %zu bytes at %llu pass the end of the volume (%llu bytes)", len,
		               (unsigned long long)off, (unsigned long long)v->g.volume_size);
	return RK_OK;
}

static rk_err repair_reads(rk_vol *v, rk_err e);

rk_err rk_vol_read(rk_vol *v, void *buf, size_t len, uint64_t off)
{
	rk_err e = check_range(v, len, off);
	if (e || len == 0)
		return e;
	pthread_mutex_lock(&v->op);
	v->rep_on = 1;
	v->nrep = 0;
	if (parity_level(&v->g))
		e = parity_io(v, buf, NULL, len, off);
	else
		e = direct_read(v, buf, len, off);
	v->nsegs = 0;
	v->rep_on = 0;
	e = repair_reads(v, e);
	pthread_mutex_unlock(&v->op);
	return e;
}

rk_err rk_vol_write(rk_vol *v, const void *buf, size_t len, uint64_t off)
{
	rk_err e = check_range(v, len, off);
	if (e || len == 0)
		return e;
	pthread_mutex_lock(&v->op);
	if (parity_level(&v->g))
		e = parity_io(v, NULL, buf, len, off);
	else
		e = direct_write(v, buf, len, off);
	v->nsegs = 0;
	pthread_mutex_unlock(&v->op);
	return e;
}

rk_err rk_vol_flush(rk_vol *v)
{
	pthread_mutex_lock(&v->op);
	rk_err fatal = RK_OK;
	for (uint32_t r = 0; r < v->n; r++) {
		if (is_down(v, r))
			continue;
		rk_err e = rk_dev_flush(v->devs[r]);
		if (e == RK_E_IO) {
			snprintf(v->msg[r], sizeof v->msg[0], "%s", rk_errmsg());
			fail_role(v, r, e);
		} else if (e && !fatal) {
			fatal = e;
		}
	}
	if (!fatal && !readable(v))
		fatal = too_few(v);
	pthread_mutex_unlock(&v->op);
	return fatal;
}

/* ---- resync ---- */

#define MIRROR_PIECE (1u << 20)

/* Copies stripe S from its first live copy to every other live copy,
 * through TMP (MIRROR_PIECE bytes). */
static rk_err resync_mirror(rk_vol *v, uint64_t s, uint8_t *tmp)
{
	const struct rk_geom *g = &v->g;
	uint64_t a = s * g->stripe_data, b = a + g->stripe_data;
	const uint64_t piece = MIRROR_PIECE;
	if (b > g->volume_size)
		b = g->volume_size;
	rk_err e = RK_OK;
	for (uint64_t x = a; x < b && !e;) {
		uint64_t run;
		struct rk_loc l0;
		if ((e = rk_geom_map(g, x, &l0, &run)))
			break;
		uint64_t take = run < b - x ? run : b - x;
		if (take > piece)
			take = piece;
		if ((e = direct_read(v, tmp, take, x)))
			break;
		uint32_t k = rk_geom_copies(g, x, v->locs, g->copies);
		for (uint32_t i = 0; i < k && !e; i++)
			if (!is_down(v, v->locs[i].role))
				e = add_seg(v, v->locs[i].role, 1, v->locs[i].member_off, tmp, (size_t)take);
		if (!e)
			e = run_segs(v);
		if (!e && !readable(v))
			e = too_few(v);
		x += take;
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
	if (!parity_level(g) && !(tmp = malloc(MIRROR_PIECE)))
		return rk_fail(RK_E_NOMEM, "volume: out of memory");
	pthread_mutex_lock(&v->op);
	rk_err e = RK_OK;
	uint64_t s = first;
	while (s < last && !e) {
		uint64_t step = 1;
		if (!parity_level(g)) {
			e = resync_mirror(v, s, tmp);
		} else {
			struct unit U = { .s0 = s };
			uint64_t left = last - s;
			U.nst = left < v->ustripes ? (uint32_t)left : v->ustripes;
			step = U.nst;
			for (uint64_t c0 = 0; c0 < g->chunk && !e; c0 += v->ucols) {
				U.c0 = c0;
				U.c1 = c0 + v->ucols < g->chunk ? c0 + v->ucols : g->chunk;
				/* every data block touched over the whole slice */
				unit_setup(v, &U, s * g->stripe_data, (s + U.nst) * g->stripe_data);
				for (uint32_t tries = 0;; tries++) {
					if (!readable(v) || tries > v->n) {
						e = too_few(v);
						break;
					}
					for (uint32_t u = 0; u < U.nst && !e; u++)
						e = queue_all_live(v, &U, u);
					uint32_t before = ndown(v);
					if (e || (e = run_segs(v)))
						break;
					if (ndown(v) == before)
						break;
				}
				for (uint32_t u = 0; u < U.nst && !e; u++) {
					v->us[u].mode = 1;
					if ((e = reconstruct(v, u)))
						break;
					gen_parity(v, u, NULL);
				}
				/* parity only */
				for (uint32_t u = 0; u < U.nst && !e; u++) {
					struct ustripe *st = &v->us[u];
					uint32_t pr[2] = { st->p, st->q };
					for (uint32_t k = 0; k < g->nparity && !e; k++)
						if (!is_down(v, pr[k]))
							e = add_seg(v, pr[k], 1, moff(v, &U, st->s, st->ua), RB(v, pr[k], u) + st->ua,
							            st->ub - st->ua);
				}
				if (!e)
					e = run_segs(v);
				if (!e && !readable(v))
					e = too_few(v);
			}
		}
		s += step;
		if (!e && progress)
			progress(ctx, s - first);
	}
	v->nsegs = 0;
	pthread_mutex_unlock(&v->op);
	free(tmp);
	return e;
}

/* ---- rebuild of one role onto a new device ---- */

#define REBUILD_BATCH (16u << 20)   /* member bytes per batch (mirrors) */
#define REBUILD_PIECE (4u << 20)    /* largest read from one copy (RAID-1 spreads over copies) */

/* Parity levels: stripe units as resync reads them; the role's blocks are
 * reconstructed (data) or regenerated (P, Q) in the role buffers and written
 * to DST, one request per unit slice. */
static rk_err rebuild_parity(rk_vol *v, uint32_t role, uint64_t s0, uint64_t s1,
                             void (*progress)(void *ctx, uint64_t done), void *ctx)
{
	const struct rk_geom *g = &v->g;
	const uint32_t T = v->n;   /* the target's slot */
	rk_err e = RK_OK;
	uint64_t s = s0;
	/* The target write of a unit goes out with the next unit's reads (the
	 * role's buffer is never read into: the role is down). */
	uint32_t pend = 0;
	struct pwrite_rec { uint8_t *buf; size_t len; uint64_t off; } pw[64];
	while (s < s1 && !e) {
		struct unit U = { .s0 = s };
		uint64_t left = s1 - s;
		U.nst = left < v->ustripes ? (uint32_t)left : v->ustripes;
		for (uint64_t c0 = 0; c0 < g->chunk && !e; c0 += v->ucols) {
			U.c0 = c0;
			U.c1 = c0 + v->ucols < g->chunk ? c0 + v->ucols : g->chunk;
			unit_setup(v, &U, s * g->stripe_data, (s + U.nst) * g->stripe_data);
			for (uint32_t tries = 0;; tries++) {
				if (!readable(v) || tries > v->n) {
					e = too_few(v);
					break;
				}
				for (uint32_t u = 0; u < U.nst && !e; u++)
					e = queue_all_live(v, &U, u);
				for (uint32_t k = 0; k < pend && !e; k++)
					e = add_seg(v, T, 1, pw[k].off, pw[k].buf, pw[k].len);
				pend = 0;
				uint32_t before = ndown(v);
				if (e || (e = run_segs(v)))
					break;
				if (ndown(v) == before)
					break;
			}
			for (uint32_t u = 0; u < U.nst && !e; u++) {
				struct ustripe *st = &v->us[u];
				if ((e = reconstruct(v, u)))
					break;
				if (role == st->p || role == st->q)
					gen_parity(v, u, NULL);
			}
			if (e)
				break;
			/* the role's slices: contiguous on the target when a slice is a chunk */
			size_t w = (size_t)(U.c1 - U.c0);
			if (v->ucols == g->chunk) {
				pw[pend++] = (struct pwrite_rec){ RB(v, role, 0), (size_t)U.nst * w, s * g->chunk };
			} else {
				for (uint32_t u = 0; u < U.nst; u++)
					pw[pend++] = (struct pwrite_rec){ RB(v, role, u), w, (s + u) * g->chunk + U.c0 };
			}
		}
		s += U.nst;
		if (!e && progress && s < s1)
			progress(ctx, (s - s0) * g->chunk);   /* the last unit's write is still queued */
	}
	for (uint32_t k = 0; k < pend && !e; k++)
		e = add_seg(v, T, 1, pw[k].off, pw[k].buf, pw[k].len);
	if (!e)
		e = run_segs(v);
	if (!e && progress)
		progress(ctx, (s1 - s0) * g->chunk);
	return e;
}

/* Mirrors (1, 10): each piece of the role is read from a live copy (RAID-1
 * rotates over the copies so that the reads run in parallel), a batch at a
 * time, then written to DST. */
static rk_err rebuild_mirror(rk_vol *v, uint32_t role, uint64_t a, uint64_t b,
                             void (*progress)(void *ctx, uint64_t done), void *ctx)
{
	const struct rk_geom *g = &v->g;
	const uint32_t T = v->n;   /* the target's slot */
	uint64_t batch = b - a < REBUILD_BATCH ? b - a : REBUILD_BATCH;
	size_t cap = (size_t)(batch + 4095) / 4096 * 4096;
	/* two buffers: a batch's target write goes out with the next batch's reads */
	uint8_t *mem = aligned_alloc(4096, 2 * cap);
	if (!mem)
		return rk_fail(RK_E_NOMEM, "volume: out of memory");
	rk_err e = RK_OK;
	uint64_t x = a, npiece = 0, pend_off = 0, pend_len = 0;
	uint8_t *pend_buf = NULL;
	for (uint32_t bi = 0; x < b && !e; bi++) {
		uint8_t *tmp = mem + (size_t)(bi & 1) * cap;
		uint64_t bend = b - x < batch ? b : x + batch;
		for (uint32_t tries = 0;; tries++) {
			if (!readable(v) || tries > v->n) {
				e = too_few(v);
				break;
			}
			for (uint64_t y = x; y < bend && !e;) {
				uint64_t voff, take = bend - y;
				enum rk_blk_kind kind;
				if (g->chunk && take > g->chunk - y % g->chunk)
					take = g->chunk - y % g->chunk;
				if (take > REBUILD_PIECE)
					take = REBUILD_PIECE;
				if ((e = rk_geom_unmap(g, role, y, &voff, &kind)))
					break;
				uint8_t *to = tmp + (y - x);
				if (kind != RK_BLK_DATA) {
					memset(to, 0, (size_t)take);
				} else {
					uint32_t k = rk_geom_copies(g, voff, v->locs, g->copies), pick = k;
					for (uint32_t i = 0; i < k; i++) {
						uint32_t c = (uint32_t)((i + (g->level == 1 ? npiece : 0)) % k);
						if (v->locs[c].role != role && !is_down(v, v->locs[c].role)) {
							pick = c;
							break;
						}
					}
					if (pick == k) {
						e = too_few(v);
						break;
					}
					e = add_seg(v, v->locs[pick].role, 0, v->locs[pick].member_off, to, (size_t)take);
					npiece++;
				}
				y += take;
			}
			if (!e && pend_len) {
				e = add_seg(v, T, 1, pend_off, pend_buf, (size_t)pend_len);
				pend_len = 0;
			}
			uint32_t before = ndown(v);
			if (e || (e = run_segs(v)))
				break;
			if (ndown(v) == before)
				break;
		}
		if (e)
			break;
		pend_buf = tmp;
		pend_off = x;
		pend_len = bend - x;
		if (progress && x > a)
			progress(ctx, x - a);   /* batches before this one are on the target */
		x = bend;
	}
	if (!e && pend_len) {
		e = add_seg(v, T, 1, pend_off, pend_buf, (size_t)pend_len);
		if (!e)
			e = run_segs(v);
		if (!e && progress)
			progress(ctx, b - a);
	}
	v->nsegs = 0;
	free(mem);
	return e;
}

/* ---- rebuild from the page cache ---- */

#define FAST_BATCH (4u << 20)     /* member bytes per role per batch */
#define FAST_MAX_THREADS 4
#define FAST_PIECE (256u << 10)   /* target bytes computed and written at a time */

/* Parity rebuild with only the target role down and the survivors' data
 * resident: each batch of stripes is computed straight from read-only
 * mappings of the page cache (rk_dev_peek, no copy) into a buffer that is
 * written to the target; batches run on up to one thread per CPU.  Batches
 * that are not resident are left to rebuild_parity (in order). */
struct fast {
	rk_vol *v;
	uint32_t role;
	uint64_t s0, s1, nb, nbatch;  /* batch i: stripes s0 + i * nb, nb of them (fewer at s1) */
	uint8_t *state;               /* per batch: 0 pending, 1 written, 2 not resident */
	const uint8_t *zero;          /* a chunk of zeros for unused syndrome slots (or NULL) */
	pthread_mutex_t mu;
	uint64_t next;
	rk_err err;
	char msg[160];
};

/* Points SRC at the live roles' bytes of stripes [s, s+ns); 0 if one is not
 * resident.  The page tables of a resident range are filled in one call
 * first (RK_DEV_ADV_WILLNEED: cheaper than a fault per 16 pages). */
static int fast_peek(rk_vol *v, uint32_t role, uint64_t s, uint64_t ns, const uint8_t **src)
{
	uint64_t chunk = v->g.chunk, len = ns * chunk;
	for (uint32_t r = 0; r < v->n; r++) {
		if (r == role)
			continue;
		uint64_t at = v->doff[r] + s * chunk;
		rk_dev_advise(v->devs[r], at, len, RK_DEV_ADV_WILLNEED);
		if (!rk_dev_peek(v->devs[r], at, len, &src[r]))
			return 0;
	}
	return 1;
}

static void *fast_main(void *arg)
{
	struct fast *F = arg;
	rk_vol *v = F->v;
	const struct rk_geom *g = &v->g;
	const uint32_t n = v->n, nd = g->ndata, slots = g->q_slots + 2, role = F->role, six = g->level == 6;
	const uint64_t chunk = g->chunk;
	uint8_t *out = aligned_alloc(64, FAST_PIECE), *scratch = six ? aligned_alloc(64, FAST_PIECE) : NULL;
	const uint8_t **src = calloc(n, sizeof *src);
	uint32_t *vrole = calloc(nd, sizeof *vrole), *slot = calloc(n, sizeof *slot);
	void **ptrs = calloc(slots > n + 2 ? slots : n + 2, sizeof *ptrs);
	rk_err e = RK_OK;
	if (!out || (six && !scratch) || !src || !vrole || !slot || !ptrs)
		e = rk_fail(RK_E_NOMEM, "volume: out of memory");
	while (!e) {
		pthread_mutex_lock(&F->mu);
		uint64_t i = F->next++;
		int stop = F->err || i >= F->nbatch;
		pthread_mutex_unlock(&F->mu);
		if (stop)
			break;
		uint64_t s = F->s0 + i * F->nb, ns = F->s1 - s < F->nb ? F->s1 - s : F->nb;
		if (!fast_peek(v, role, s, ns, src)) {
			F->state[i] = 2;   /* read after the join */
			continue;
		}
		/* the batch's target bytes in pieces small enough to stay in cache
		 * between the kernel and the write */
		uint64_t total = ns * chunk, base = 0, fill = 0, cur = UINT64_MAX;
		struct rk_stripe_map m = { .vol_role = vrole, .slot = slot };
		for (uint64_t pos = 0; pos < total && !e;) {
			uint64_t u = pos / chunk, col = pos % chunk;
			size_t len = (size_t)(chunk - col < FAST_PIECE ? chunk - col : FAST_PIECE);
			if (fill + len > FAST_PIECE) {
				if ((e = rk_dev_pwrite(v->devs[n], out, (size_t)fill, v->doff[n] + s * chunk + base)))
					break;
				base += fill;
				fill = 0;
			}
			if (u != cur) {
				rk_geom_stripe_map(g, s + u, &m);   /* cannot fail: s < nstripes */
				cur = u;
			}
			size_t at = (size_t)(u * chunk + col);
			uint8_t *o = out + fill;
			uint32_t k = 0;
			if (six && role == m.q_role) {
				/* Q: generated with P into a scratch block */
				for (uint32_t x = 0; x < slots; x++)
					ptrs[x] = (void *)(uintptr_t)(F->zero + col);
				for (uint32_t r = 0; r < n; r++)
					if (r != role && r != m.p_role)
						ptrs[slot[r]] = (void *)(uintptr_t)(src[r] + at);
				ptrs[slot[m.p_role]] = scratch;
				ptrs[slot[role]] = o;
				v->pa->gen((int)slots, len, ptrs);
			} else {
				if (role == m.p_role) {
					/* P: XOR of the data */
					for (uint32_t j = 0; j < nd; j++)
						ptrs[k++] = (void *)(uintptr_t)(src[vrole[j]] + at);
				} else {
					/* one data block: XOR of the other data and P */
					for (uint32_t r = 0; r < n; r++)
						if (r != role && !(six && r == m.q_role))
							ptrs[k++] = (void *)(uintptr_t)(src[r] + at);
				}
				ptrs[k++] = o;
				if (k == 2)
					memcpy(o, ptrs[0], len);
				else
					v->pa->xor_gen((int)k, len, ptrs);
			}
			fill += len;
			pos += len;
		}
		if (!e && fill)
			e = rk_dev_pwrite(v->devs[n], out, (size_t)fill, v->doff[n] + s * chunk + base);
		/* done with the batch: drop its page tables here, in parallel, rather
		 * than all at once when the members are closed */
		for (uint32_t r = 0; r < n && !e; r++)
			if (r != role)
				rk_dev_advise(v->devs[r], v->doff[r] + s * chunk, ns * chunk, RK_DEV_ADV_DONTNEED);
		if (!e)
			F->state[i] = 1;
	}
	if (e) {
		pthread_mutex_lock(&F->mu);
		if (!F->err) {
			F->err = e;
			snprintf(F->msg, sizeof F->msg, "%s", rk_errmsg());
		}
		pthread_mutex_unlock(&F->mu);
	}
	free(out);
	free(scratch);
	free(src);
	free(vrole);
	free(slot);
	free(ptrs);
	return NULL;
}

static rk_err rebuild_parity_fast(rk_vol *v, uint32_t role, uint64_t s0, uint64_t s1,
                                  void (*progress)(void *ctx, uint64_t done), void *ctx)
{
	const struct rk_geom *g = &v->g;
	uint64_t chunk = g->chunk;
	if (s0 >= s1 || ndown(v) != 1 || chunk > (1u << 30))
		return rebuild_parity(v, role, s0, s1, progress, ctx);
	struct fast F = { .v = v, .role = role, .s0 = s0, .s1 = s1 };
	F.nb = FAST_BATCH / chunk ? FAST_BATCH / chunk : 1;
	F.nbatch = (s1 - s0 + F.nb - 1) / F.nb;
	/* nothing resident at the start (a disk, fault injection): the I/O path */
	const uint8_t **probe = calloc(v->n, sizeof *probe);
	if (!probe)
		return rk_fail(RK_E_NOMEM, "volume: out of memory");
	int ok = fast_peek(v, role, s0, s1 - s0 < F.nb ? s1 - s0 : F.nb, probe);
	free(probe);
	if (!ok)
		return rebuild_parity(v, role, s0, s1, progress, ctx);
	uint8_t *zero = NULL;
	if (g->q_slots + 2 > v->n && !(zero = calloc(1, (size_t)chunk)))
		return rk_fail(RK_E_NOMEM, "volume: out of memory");
	F.zero = zero;
	if (!(F.state = calloc((size_t)F.nbatch, 1))) {
		free(zero);
		return rk_fail(RK_E_NOMEM, "volume: out of memory");
	}
	pthread_mutex_init(&F.mu, NULL);
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	uint64_t nth = ncpu < 1 ? 1 : ncpu > FAST_MAX_THREADS ? FAST_MAX_THREADS : (uint64_t)ncpu;
	if (nth > F.nbatch)
		nth = F.nbatch;
	pthread_t th[FAST_MAX_THREADS];
	uint32_t started = 0;
	for (uint64_t t = 1; t < nth; t++)
		if (!pthread_create(&th[started], NULL, fast_main, &F))
			started++;
	fast_main(&F);
	for (uint32_t t = 0; t < started; t++)
		pthread_join(th[t], NULL);
	pthread_mutex_destroy(&F.mu);
	free(zero);
	rk_err e = F.err ? rk_fail(F.err, "%s", F.msg) : RK_OK;
	/* batches that were not resident, in order, through the I/O path */
	for (uint64_t i = 0; i < F.nbatch && !e;) {
		if (F.state[i] != 2) {
			i++;
			continue;
		}
		uint64_t j = i;
		while (j < F.nbatch && F.state[j] == 2)
			j++;
		uint64_t a = s0 + i * F.nb, b = s0 + j * F.nb < s1 ? s0 + j * F.nb : s1;
		e = rebuild_parity(v, role, a, b, NULL, NULL);
		i = j;
	}
	free(F.state);
	if (!e && progress)
		progress(ctx, (s1 - s0) * chunk);
	return e;
}

rk_err rk_vol_rebuild(rk_vol *v, uint32_t role, rk_dev *dst, uint64_t dst_offset, uint64_t off,
                      uint64_t len, void (*progress)(void *ctx, uint64_t done), void *ctx)
{
	const struct rk_geom *g = &v->g;
	uint64_t end, dend;
	if (!dst || role >= v->n)
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
	pthread_mutex_lock(&v->op);
	v->devs[v->n] = dst;
	v->doff[v->n] = dst_offset;
	v->msg[v->n][0] = 0;
	rk_err e = parity_level(g) ? rebuild_parity_fast(v, role, a / g->chunk, b / g->chunk, progress, ctx)
	                           : rebuild_mirror(v, role, a, b, progress, ctx);
	v->devs[v->n] = NULL;
	v->nsegs = 0;
	pthread_mutex_unlock(&v->op);
	return e;
}

/* ---- read-error repair (after rk_vol_read, the op lock held) ---- */

/* Reads [a, b) of ROLE's data area once (the rewrite took). */
static rk_err read_back(rk_vol *v, uint32_t role, uint64_t a, uint64_t b)
{
	size_t cap = b - a < (1u << 20) ? (size_t)(b - a) : (1u << 20);
	uint8_t *tmp = malloc(cap ? cap : 1);
	if (!tmp)
		return rk_fail(RK_E_NOMEM, "volume: out of memory");
	rk_err e = RK_OK;
	for (uint64_t at = a; at < b && !e; at += cap) {
		size_t n = b - at < cap ? (size_t)(b - at) : cap;
		e = rk_dev_pread(v->devs[role], tmp, n, v->doff[role] + at);
	}
	free(tmp);
	return e;
}

/* Rewrites [a, b) of ROLE from redundancy, as rk_vol_rebuild does but onto
 * the member itself, then reads it back once. */
static rk_err repair_one(rk_vol *v, uint32_t role, uint64_t a, uint64_t b)
{
	const struct rk_geom *g = &v->g;
	v->devs[v->n] = v->devs[role];
	v->doff[v->n] = v->doff[role];
	v->msg[v->n][0] = 0;
	rk_err e = parity_level(g) ? rebuild_parity(v, role, a / g->chunk, b / g->chunk, NULL, NULL)
	                           : rebuild_mirror(v, role, a, b, NULL, NULL);
	v->devs[v->n] = NULL;
	v->nsegs = 0;
	return e ? e : read_back(v, role, a, b);
}

/* Repairs the ranges whose reads failed during this rk_vol_read (E: how
 * the read ended): each range (whole chunks on striped levels) is probed
 * piece by piece (a chunk, or 64 KiB on RAID-1), the runs of pieces that
 * still fail are rewritten from redundancy and read back, and reported
 * (repair callback); a role whose rewrite or read-back fails with RK_E_IO
 * is failed.  Every role still marked READERR goes back up.  Returns the
 * read's result (or a fatal error of the repair). */
static rk_err repair_reads(rk_vol *v, rk_err e)
{
	const struct rk_geom *g = &v->g;
	uint32_t nrep = v->nrep;
	uint64_t piece = g->chunk ? g->chunk : 65536;
	v->nrep = 0;
	for (uint32_t i = 0; i < nrep && !e; i++) {
		uint32_t role = v->rep[i].role;
		uint64_t a = v->rep[i].off, b = a + v->rep[i].len;
		a -= a % piece;
		if (b % piece)
			b += piece - b % piece;
		if (b > g->member_size)
			b = g->member_size;
		uint64_t run = UINT64_MAX;   /* start of the current run of bad pieces */
		for (uint64_t at = a, pe; !e && v->down[role] == READERR; at = pe) {
			int last = at >= b;
			pe = last ? b : (b - at > piece ? at + piece : b);
			rk_err pr = last ? RK_OK : read_back(v, role, at, pe);
			if (pr == RK_E_IO) {
				if (run == UINT64_MAX)
					run = at;
				continue;
			}
			if (pr) {
				e = pr;
				break;
			}
			if (run == UINT64_MAX) {
				if (last)
					break;
				continue;
			}
			rk_err re = repair_one(v, role, run, at);
			if (re == RK_E_IO && v->down[role] == READERR) {
				snprintf(v->msg[role], sizeof v->msg[0], "member %u: read error at data-area bytes %llu+%llu, and the "
				         "rewrite from redundancy failed: %s", role, (unsigned long long)run,
				         (unsigned long long)(at - run), rk_errmsg());
				__atomic_store_n(&v->down[role], (uint8_t)UP, __ATOMIC_RELEASE);
				fail_role(v, role, RK_E_IO);
				if (!readable(v))
					e = too_few(v);
			} else if (re) {
				e = re;
			} else if (v->rep_fn) {
				v->rep_fn(v->rep_ctx, role, run, at - run);
			}
			run = UINT64_MAX;
			if (last)
				break;
		}
	}
	for (uint32_t r = 0; r < v->n; r++)
		if (v->down[r] == READERR)
			__atomic_store_n(&v->down[r], (uint8_t)UP, __ATOMIC_RELEASE);
	return e;
}
