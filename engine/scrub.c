/* scrub.c: verify and repair redundancy (the contract is rk_scrub.h).
 *
 * A batch is stripes [s0, s0+ns) by chunk columns [c0, c1): every live
 * block of it is planned as (role, member offset, length), blocks of one
 * role laid out back to back in that role's buffer so that a role reads its
 * part of the batch in one or a few large requests.  Reader threads (one
 * per role or group of roles) read; two buffer sets let the next batch be
 * read while this one is checked.
 *
 * Checking a batch: the checker threads (the caller's and one per further
 * CPU) share its stripes cut into pieces of CP column bytes and only mark
 * the stripes that are not clean, with the read-only kernels (check,
 * xor_check: P and Q recomputed and compared in one pass, nothing stored),
 * so the bulk of the work -- reading every byte once -- runs on every CPU.
 * The caller's thread then walks the stripes in order: clean ones are
 * counted, the others get the per-sector analysis, regions and repair. */
#include "rk_scrub.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rk_le.h"
#include "rk_parity.h"

#define VS 65536u        /* verify slice: scratch stays in cache */
#define CP (256u << 10)  /* checker work item: column bytes of one stripe */
#define PROBE (64u << 10)/* first re-read size of a block whose read failed */
#define DEAD_BLOCKS 2u   /* blocks with no readable sector before a member counts as dead */
#define ALIGN 64u

/* ---- one batch: plan and buffers ---- */

struct blk {             /* one block of the batch (a role's part of one stripe column) */
	uint32_t role;
	uint64_t moff;       /* absolute member offset */
	uint64_t len;        /* 0: nothing (missing role, past the volume) */
	uint8_t *buf;        /* NULL for a missing role */
	int ioerr;           /* its read failed: contents unknown until probed */
};

struct ext {             /* one read request */
	uint64_t moff, len;
	uint8_t *buf;
	const uint8_t *map;  /* set by the reader when served from the page cache mapping */
	int ioerr;           /* set by the reader: the request failed with RK_E_IO */
};

struct bset {
	uint64_t s0, c0, c1;
	uint32_t ns;
	struct blk *blk;     /* ns * width */
	uint8_t *dirty;      /* per stripe: a checker found it not clean */
	uint8_t **rbuf;      /* per role */
	uint64_t *rcap, *rneed;
	struct ext **ext;    /* per role */
	uint32_t *next, *ecap;
	struct span { uint64_t off, len; } **rel;   /* per role: ranges peeked with this set, to release */
	uint32_t *nrel, *crel;
	rk_err err;
	char errmsg[512];
};

/* Per-thread scratch of the slice computations. */
struct wk {
	uint8_t *pp, *qq, *dd;
	void **ptrs, **xptrs;
	uint32_t *vol_role, *slot;
};

/* ---- the reader pool ---- */

struct scrub;
struct pool {
	pthread_t th[RK_SCRUB_MAX_THREADS];
	uint32_t n, started;
	pthread_mutex_t mu;
	pthread_cond_t go, done;
	uint64_t gen;
	uint32_t pending;
	int quit;
	struct bset *job;
	struct scrub *S;
};

/* ---- the checker pool ---- */

struct cpool {
	pthread_t th[RK_SCRUB_MAX_THREADS];
	uint32_t n, started;             /* helper threads (the caller is one more checker) */
	pthread_mutex_t mu;
	pthread_cond_t go, done;
	uint64_t gen;
	uint32_t pending;
	int quit;
	struct bset *job;
	uint32_t nitems, per;            /* item i: stripe i / per, piece i % per */
	uint32_t item;                   /* next item (atomic) */
	struct scrub *S;
	struct wk w[RK_SCRUB_MAX_THREADS];
};

/* One unreadable run found while probing a stripe, or the outcome of one
 * segment of it. */
struct urun {
	uint32_t role;
	uint64_t a, b;           /* column bytes within the batch's columns */
	int recov;
	int conf;                /* 1 confirmed, 0 nothing left over to confirm it, -1 the rest disagrees */
	enum rk_scrub_ufix fix;
};

struct scrub {
	const struct rk_geom *g;
	rk_dev *const *devs;
	const uint64_t *doff;
	const struct rk_scrub_opts *o;
	struct rk_scrub_stats *st;
	const struct rk_parity_algo *pa;
	int parity;          /* 4, 5, 6 */
	uint32_t width;      /* blocks per stripe: nroles (parity) or copies (mirrors) */
	uint32_t nslots, pslot;
	uint64_t unit;       /* bytes per stripe per block: chunk (parity, RAID-10) or stripe_data (RAID-1) */
	uint64_t batch;
	struct bset bs[2];
	struct pool pool;
	struct cpool cp;
	int cp_started;
	int begun;
	uint32_t *ecur;
	/* verification scratch (the caller's thread) */
	struct wk w0;
	uint8_t *pp, *qq, *dd, *zero, *tmp;
	void **ptrs, **xptrs;
	uint32_t *vol_role, *slot, *slot_role;
	struct rk_loc *locs;
	/* the region being merged */
	int pend;
	uint64_t p_stripe, p_a, p_b;
	int p_code;                  /* 1 unlocated, 2 located */
	uint32_t p_nf, *p_f;
	struct rk_scrub_loc *p_locs;
	uint32_t p_nlocs;
	enum rk_scrub_fix p_fix;
	uint32_t p_vidx;             /* parity levels: volume index of the located data block, or UINT32_MAX */
	char p_why[256];
	/* the run being classified */
	uint32_t c_nf, *c_f;
	uint8_t *bad;                /* per copy: at fault in this sector */
	/* unreadable bytes of the stripe being handled */
	uint8_t *unr;                /* per role: unreadable in the current segment */
	uint32_t *dead;              /* per role: consecutive probed blocks without a readable sector */
	enum rk_scrub_ufix *ufix;    /* per role: outcome of the current segment's rewrite */
	struct urun *ur, *uo;        /* probed runs; segment outcomes */
	uint32_t nur, capur, nuo, capuo;
	int norepair;                /* checking beside unreadable bytes: report, never write */
	uint64_t nruns;              /* mismatch runs recorded (add_run calls) */
};

/* Points the blocks of extents served from a mapping into it, and marks
 * the blocks of extents whose read failed. */
static void fix_mapped(struct scrub *S, struct bset *b, uint32_t *ecur)
{
	uint32_t n = S->g->nroles, w = S->width;
	memset(ecur, 0, n * sizeof *ecur);
	for (uint32_t k = 0; k < w; k++)
		for (uint32_t i = 0; i < b->ns; i++) {
			struct blk *x = &b->blk[(size_t)i * w + k];
			x->ioerr = 0;
			if (!x->buf)
				continue;
			uint32_t r = x->role;
			while (ecur[r] < b->next[r] && x->buf >= b->ext[r][ecur[r]].buf + b->ext[r][ecur[r]].len)
				ecur[r]++;
			if (ecur[r] >= b->next[r])
				continue;
			struct ext *E = &b->ext[r][ecur[r]];
			if (E->map)
				x->buf = (uint8_t *)(uintptr_t)(E->map + (x->buf - E->buf));
			else if (E->ioerr)
				x->ioerr = 1;
		}
}

static void *pool_main(void *arg)
{
	struct pool *p = arg;
	uint32_t me;
	pthread_mutex_lock(&p->mu);
	me = p->started++;
	uint64_t seen = 0;
	for (;;) {
		while (p->gen == seen && !p->quit)
			pthread_cond_wait(&p->go, &p->mu);
		if (p->quit)
			break;
		seen = p->gen;
		struct bset *b = p->job;
		struct scrub *S = p->S;
		pthread_mutex_unlock(&p->mu);
		rk_err e = RK_OK;
		char msg[512] = "";
		for (uint32_t r = me; r < S->g->nroles && !e; r += p->n) {
			/* the page tables of the batch this set held before are dropped
			 * here, beside the checking, not all at once at the close */
			for (uint32_t i = 0; i < b->nrel[r]; i++)
				rk_dev_advise(S->devs[r], b->rel[r][i].off, b->rel[r][i].len, RK_DEV_ADV_DONTNEED);
			b->nrel[r] = 0;
			for (uint32_t i = 0; i < b->next[r] && !e; i++) {
				struct ext *x = &b->ext[r][i];
				x->map = NULL;
				x->ioerr = 0;
				/* Page-cache data is checked in place (see rk_dev_peek). */
				if (!S->o->no_map && rk_dev_peek(S->devs[r], x->moff, x->len, &x->map)) {
					if (b->nrel[r] == b->crel[r]) {
						uint32_t nc = b->crel[r] ? 2 * b->crel[r] : 8;
						struct span *nv = realloc(b->rel[r], nc * sizeof *nv);
						if (!nv)
							continue;   /* released at the close instead */
						b->rel[r] = nv;
						b->crel[r] = nc;
					}
					b->rel[r][b->nrel[r]++] = (struct span){ x->moff, x->len };
					continue;
				}
				e = rk_dev_pread(S->devs[r], x->buf, (size_t)x->len, x->moff);
				if (e == RK_E_IO) {
					/* a bad sector: the blocks are probed and checked around it */
					x->ioerr = 1;
					e = RK_OK;
				} else if (e) {
					snprintf(msg, sizeof msg, "%s", rk_errmsg());
				}
			}
		}
		pthread_mutex_lock(&p->mu);
		if (e && !b->err) {
			b->err = e;
			memcpy(b->errmsg, msg, sizeof msg);
		}
		if (--p->pending == 0)
			pthread_cond_signal(&p->done);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

static void pool_submit(struct pool *p, struct bset *b)
{
	pthread_mutex_lock(&p->mu);
	b->err = RK_OK;
	b->errmsg[0] = 0;
	p->job = b;
	p->pending = p->n;
	p->gen++;
	pthread_cond_broadcast(&p->go);
	pthread_mutex_unlock(&p->mu);
}

static rk_err pool_wait(struct pool *p, struct bset *b)
{
	pthread_mutex_lock(&p->mu);
	while (p->pending)
		pthread_cond_wait(&p->done, &p->mu);
	pthread_mutex_unlock(&p->mu);
	if (b->err)
		return rk_fail(b->err, "%s", b->errmsg);
	return RK_OK;
}

static void pool_stop(struct pool *p)
{
	pthread_mutex_lock(&p->mu);
	p->quit = 1;
	pthread_cond_broadcast(&p->go);
	pthread_mutex_unlock(&p->mu);
	for (uint32_t i = 0; i < p->n; i++)
		pthread_join(p->th[i], NULL);
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->go);
	pthread_cond_destroy(&p->done);
}

/* ---- planning ---- */

static uint64_t al(uint64_t x)
{
	return (x + ALIGN - 1) & ~(uint64_t)(ALIGN - 1);
}

static void *amalloc(size_t n)
{
	void *p = NULL;
	if (posix_memalign(&p, ALIGN, n ? n : ALIGN))
		return NULL;
	return p;
}

static rk_err bset_init(struct scrub *S, struct bset *b, uint32_t maxns)
{
	uint32_t n = S->g->nroles;
	b->blk = calloc((size_t)maxns * S->width, sizeof *b->blk);
	b->dirty = calloc(maxns, 1);
	b->rbuf = calloc(n, sizeof *b->rbuf);
	b->rcap = calloc(n, sizeof *b->rcap);
	b->rneed = calloc(n, sizeof *b->rneed);
	b->ext = calloc(n, sizeof *b->ext);
	b->next = calloc(n, sizeof *b->next);
	b->ecap = calloc(n, sizeof *b->ecap);
	b->rel = calloc(n, sizeof *b->rel);
	b->nrel = calloc(n, sizeof *b->nrel);
	b->crel = calloc(n, sizeof *b->crel);
	if (!b->rel || !b->nrel || !b->crel || !b->blk || !b->dirty || !b->rbuf || !b->rcap || !b->rneed || !b->ext || !b->next || !b->ecap)
		return rk_fail(RK_E_NOMEM, "scrub: out of memory");
	return RK_OK;
}

static void bset_free(struct scrub *S, struct bset *b)
{
	if (b->rbuf)
		for (uint32_t r = 0; r < S->g->nroles; r++)
			free(b->rbuf[r]);
	if (b->ext)
		for (uint32_t r = 0; r < S->g->nroles; r++)
			free(b->ext[r]);
	if (b->rel)
		for (uint32_t r = 0; r < S->g->nroles; r++)
			free(b->rel[r]);
	free(b->rel);
	free(b->nrel);
	free(b->crel);
	free(b->blk);
	free(b->dirty);
	free(b->rbuf);
	free(b->rcap);
	free(b->rneed);
	free(b->ext);
	free(b->next);
	free(b->ecap);
}

/* The blocks of stripe S, column [c0, c1): parity levels one per role,
 * mirrors one per copy. */
static rk_err plan_stripe(struct scrub *S, struct blk *out, uint64_t s, uint64_t c0, uint64_t c1)
{
	const struct rk_geom *g = S->g;
	if (S->parity) {
		struct rk_stripe_map m = { .vol_role = S->vol_role, .slot = NULL };
		rk_err e = rk_geom_stripe_map(g, s, &m);
		if (e)
			return e;
		for (uint32_t r = 0; r < g->nroles; r++)
			out[r] = (struct blk){ .role = r, .moff = S->doff[r] + m.member_off + c0, .len = c1 - c0 };
		return RK_OK;
	}
	uint64_t v = s * g->stripe_data + c0, len = c1 - c0;
	memset(out, 0, S->width * sizeof *out);
	if (v >= g->volume_size)
		return RK_OK;
	if (len > g->volume_size - v)
		len = g->volume_size - v;
	uint32_t k = rk_geom_copies(g, v, S->locs, S->width);
	for (uint32_t c = 0; c < k; c++)
		out[c] = (struct blk){ .role = S->locs[c].role, .moff = S->doff[S->locs[c].role] + S->locs[c].member_off,
		                       .len = len };
	return RK_OK;
}

static rk_err plan(struct scrub *S, struct bset *b, uint64_t s0, uint32_t ns, uint64_t c0, uint64_t c1)
{
	uint32_t n = S->g->nroles, w = S->width;
	rk_err e;
	b->s0 = s0;
	b->ns = ns;
	b->c0 = c0;
	b->c1 = c1;
	memset(b->dirty, 0, ns);
	memset(b->rneed, 0, n * sizeof *b->rneed);
	memset(b->next, 0, n * sizeof *b->next);
	for (uint32_t i = 0; i < ns; i++)
		if ((e = plan_stripe(S, &b->blk[(size_t)i * w], s0 + i, c0, c1)))
			return e;
	for (size_t i = 0; i < (size_t)ns * w; i++) {
		struct blk *k = &b->blk[i];
		if (k->len && S->devs[k->role])
			b->rneed[k->role] += al(k->len);
	}
	for (uint32_t r = 0; r < n; r++)
		if (b->rneed[r] > b->rcap[r]) {
			free(b->rbuf[r]);
			if (!(b->rbuf[r] = amalloc((size_t)b->rneed[r]))) {
				b->rcap[r] = 0;
				return rk_fail(RK_E_NOMEM, "scrub: out of memory");
			}
			b->rcap[r] = b->rneed[r];
		}
	/* Lay out role by role in (copy, stripe) order so that each role's
	 * blocks are consecutive on the member as well as in its buffer. */
	memset(b->rneed, 0, n * sizeof *b->rneed);
	for (uint32_t k = 0; k < w; k++)
		for (uint32_t i = 0; i < ns; i++) {
			struct blk *x = &b->blk[(size_t)i * w + k];
			x->buf = NULL;
			x->ioerr = 0;
			if (!x->len || !S->devs[x->role])
				continue;
			uint32_t r = x->role;
			x->buf = b->rbuf[r] + b->rneed[r];
			struct ext *last = b->next[r] ? &b->ext[r][b->next[r] - 1] : NULL;
			if (last && last->moff + last->len == x->moff && last->buf + last->len == x->buf) {
				last->len += x->len;
			} else {
				if (b->next[r] == b->ecap[r]) {
					uint32_t nc = b->ecap[r] ? 2 * b->ecap[r] : 8;
					struct ext *ne = realloc(b->ext[r], nc * sizeof *ne);
					if (!ne)
						return rk_fail(RK_E_NOMEM, "scrub: out of memory");
					b->ext[r] = ne;
					b->ecap[r] = nc;
				}
				b->ext[r][b->next[r]++] = (struct ext){ .moff = x->moff, .len = x->len, .buf = x->buf };
			}
			b->rneed[r] += al(x->len);
			S->st->bytes_read += x->len;
		}
	return RK_OK;
}

/* ---- regions ---- */

static void flush_region(struct scrub *S)
{
	if (!S->pend)
		return;
	S->pend = 0;
	const struct rk_geom *g = S->g;
	struct rk_scrub_region R = {
		.stripe = S->p_stripe,
		.member_len = S->p_b - S->p_a,
		.nlocs = S->p_nlocs,
		.locs = S->p_locs,
		.nfault = S->p_code == 2 ? S->p_nf : 0,
		.fault = S->p_f,
		.verdict = S->p_code == 2 ? RK_SCRUB_LOCATED : RK_SCRUB_UNLOCATED,
		.fix = S->p_fix,
		.why = S->p_why,
	};
	uint64_t base = S->p_stripe * g->stripe_data;
	if (S->parity) {
		R.offset = base + S->p_a;
		R.length = (uint64_t)(g->ndata - 1) * g->chunk + (S->p_b - S->p_a);
		if (R.nfault == 1 && S->p_vidx != UINT32_MAX) {
			R.offset = base + (uint64_t)S->p_vidx * g->chunk + S->p_a;
			R.length = S->p_b - S->p_a;
		}
	} else {
		R.offset = base + S->p_a;
		R.length = S->p_b - S->p_a;
	}
	S->st->mismatches++;
	if (R.verdict == RK_SCRUB_LOCATED)
		S->st->located++;
	if (R.fix != RK_SCRUB_FIX_NONE)
		S->st->repaired++;
	if (R.fix == RK_SCRUB_FIX_CONSISTENT)
		S->st->consistent++;
	if (S->o->on_region)
		S->o->on_region(S->o->ctx, &R);
}

/* Records a run of sectors [a, b) (chunk column bytes) of stripe s with the
 * verdict in S->c_*; blocks are the stripe's planned blocks (for locs). */
static void add_run(struct scrub *S, uint64_t s, uint64_t a, uint64_t b, int code, enum rk_scrub_fix fix,
                    const char *why, const struct blk *blks, uint64_t c0)
{
	S->nruns++;
	if (S->pend && S->p_stripe == s && S->p_b == a && S->p_code == code && S->p_fix == fix &&
	    S->p_nf == S->c_nf && !memcmp(S->p_f, S->c_f, S->c_nf * sizeof *S->c_f) && !strcmp(S->p_why, why)) {
		S->p_b = b;
		return;
	}
	flush_region(S);
	S->pend = 1;
	S->p_stripe = s;
	S->p_a = a;
	S->p_b = b;
	S->p_code = code;
	S->p_fix = fix;
	S->p_nf = S->c_nf;
	memcpy(S->p_f, S->c_f, S->c_nf * sizeof *S->c_f);
	snprintf(S->p_why, sizeof S->p_why, "%s", why);
	/* S->vol_role is this stripe's map while it is being checked */
	S->p_vidx = UINT32_MAX;
	if (S->parity && code == 2)
		for (uint32_t j = 0; j < S->g->ndata; j++)
			if (S->vol_role[j] == S->c_f[0])
				S->p_vidx = j;
	S->p_nlocs = 0;
	for (uint32_t k = 0; k < S->width; k++)
		if (blks[k].buf)
			S->p_locs[S->p_nlocs++] = (struct rk_scrub_loc){ .role = blks[k].role,
			                                                 .member_off = blks[k].moff + (a - c0) };
}

static rk_err do_write(struct scrub *S, uint32_t role, const void *buf, uint64_t len, uint64_t moff)
{
	if (!S->begun) {
		S->begun = 1;
		if (S->o->on_begin_write) {
			rk_err e = S->o->on_begin_write(S->o->ctx);
			if (e)
				return e;
		}
	}
	return rk_dev_pwrite(S->devs[role], buf, (size_t)len, moff);
}

/* ---- parity levels ---- */

/* Verdict of one sector for a full RAID-6 stripe: 0 ok, 1 unlocated,
 * 2 located (S->c_f[0] the role). */
static int r6_sector(struct scrub *S, const uint8_t *pd0, const uint8_t *p, const uint8_t *qd0, const uint8_t *q,
                     size_t n, uint32_t prole, uint32_t qrole)
{
	int kind = -1;   /* -1 none yet, -2 P, -3 Q, >= 0 slot */
	for (size_t i = 0; i < n; i++) {
		uint8_t pd = pd0[i] ^ p[i], qd = qd0[i] ^ q[i];
		int k;
		if (!pd && !qd)
			continue;
		if (pd && !qd)
			k = -2;
		else if (!pd)
			k = -3;
		else
			k = (rk_gf_log(qd) - rk_gf_log(pd) + 255) % 255;
		if (kind == -1)
			kind = k;
		else if (kind != k)
			return 1;
	}
	if (kind == -1)
		return 0;
	S->c_nf = 1;
	if (kind == -2) {
		S->c_f[0] = prole;
	} else if (kind == -3) {
		S->c_f[0] = qrole;
	} else {
		if ((uint32_t)kind >= S->g->q_slots || S->slot_role[kind] == RK_ROLE_NONE_GEOM)
			return 1;
		S->c_f[0] = S->slot_role[kind];
	}
	return 2;
}

/* P (and Q) of column bytes [col, col+n) of a stripe with at most one block
 * missing (MISSING, or RK_ROLE_NONE_GEOM) into W's pp and qq, a missing data
 * block rebuilt from P into dd first.  W's slot holds the stripe's map.
 * Returns bit 0 when the stored P differs (never tested when it rebuilt the
 * data), bit 1 when the stored Q does. */
static int parity_slice(struct scrub *S, struct wk *W, const struct blk *blks, const struct rk_stripe_map *m,
                        uint32_t missing, uint64_t col, size_t n)
{
	const struct rk_geom *g = S->g;
	const uint32_t nslots = S->nslots, pslot = S->pslot;
	int miss_data = missing != RK_ROLE_NONE_GEOM && missing != m->p_role && missing != m->q_role;
	for (uint32_t k = 0; k < nslots; k++)
		W->ptrs[k] = S->zero;
	for (uint32_t r = 0; r < g->nroles; r++)
		if (blks[r].buf && W->slot[r] < pslot)
			W->ptrs[W->slot[r]] = blks[r].buf + col;
	const uint8_t *P = blks[m->p_role].buf ? blks[m->p_role].buf + col : NULL;
	const uint8_t *Q = g->level == 6 && blks[m->q_role].buf ? blks[m->q_role].buf + col : NULL;
	if (miss_data) {
		/* rebuild the missing data block from P and the other data */
		uint32_t x = 0;
		for (uint32_t k = 0; k < pslot; k++)
			if (k != W->slot[missing])
				W->xptrs[x++] = W->ptrs[k];
		W->xptrs[x++] = (void *)(uintptr_t)P;
		W->xptrs[x++] = W->dd;
		S->pa->xor_gen((int)x, n, W->xptrs);
		W->ptrs[W->slot[missing]] = W->dd;
	}
	W->ptrs[pslot] = W->pp;
	if (g->level == 6) {
		W->ptrs[pslot + 1] = W->qq;
		S->pa->gen((int)nslots, n, W->ptrs);
	} else {
		S->pa->xor_gen((int)nslots, n, W->ptrs);
	}
	return (P && !miss_data && memcmp(W->pp, P, n) ? 1 : 0) | (Q && memcmp(W->qq, Q, n) ? 2 : 0);
}

/* Absent members of a stripe (no block: missing role); *missing gets one. */
static uint32_t absent(const struct scrub *S, const struct blk *blks, uint32_t *missing)
{
	uint32_t nm = 0;
	*missing = RK_ROLE_NONE_GEOM;
	for (uint32_t r = 0; r < S->width; r++)
		if (!blks[r].buf) {
			*missing = blks[r].role;
			nm++;
		}
	return nm;
}

/* Checker: whether column bytes [a, b) of stripe SI of batch B are clean
 * (0) or need the full analysis (1).  Stripes with nothing left to check
 * are clean here (the caller counts them as unchecked). */
static int piece_dirty(struct scrub *S, struct wk *W, struct bset *b, uint32_t si, uint64_t a, uint64_t bend)
{
	const struct rk_geom *g = S->g;
	const struct blk *blks = &b->blk[(size_t)si * S->width];
	for (uint32_t k = 0; k < S->width; k++)
		if (blks[k].ioerr)
			return 1;
	if (!S->parity) {
		uint32_t first = UINT32_MAX;
		for (uint32_t c = 0; c < S->width; c++) {
			if (!blks[c].buf || a >= blks[c].len)
				continue;
			uint64_t e = bend < blks[c].len ? bend : blks[c].len;
			if (first == UINT32_MAX)
				first = c;
			else if (memcmp(blks[c].buf + a, blks[first].buf + a, (size_t)(e - a)))
				return 1;
		}
		return 0;
	}
	uint32_t missing, nm = absent(S, blks, &missing);
	if (nm >= g->nparity)
		return 0;
	struct rk_stripe_map m = { .vol_role = W->vol_role, .slot = W->slot };
	if (rk_geom_stripe_map(g, b->s0 + si, &m))
		return 1;   /* the analysis reports the error */
	for (uint64_t col = a; col < bend; col += VS) {
		size_t n = (size_t)(bend - col < VS ? bend - col : VS);
		if (nm) {
			if (parity_slice(S, W, blks, &m, missing, col, n))
				return 1;
			continue;
		}
		for (uint32_t k = 0; k < S->nslots; k++)
			W->ptrs[k] = S->zero;
		for (uint32_t r = 0; r < g->nroles; r++)
			W->ptrs[W->slot[r]] = blks[r].buf + col;
		if (g->level == 6 ? S->pa->check((int)S->nslots, n, W->ptrs)
		                  : S->pa->xor_check((int)S->nslots, n, W->ptrs))
			return 1;
	}
	return 0;
}

static void cpool_items(struct cpool *p, struct wk *W)
{
	struct scrub *S = p->S;
	struct bset *b = p->job;
	uint64_t len = b->c1 - b->c0;
	for (;;) {
		uint32_t i = __atomic_fetch_add(&p->item, 1, __ATOMIC_RELAXED);
		if (i >= p->nitems)
			break;
		uint32_t si = i / p->per;
		if (__atomic_load_n(&b->dirty[si], __ATOMIC_RELAXED))
			continue;
		uint64_t a = (uint64_t)(i % p->per) * CP, e = a + CP < len ? a + CP : len;
		if (piece_dirty(S, W, b, si, a, e))
			__atomic_store_n(&b->dirty[si], 1, __ATOMIC_RELAXED);
	}
}

static void *cpool_main(void *arg)
{
	struct cpool *p = arg;
	pthread_mutex_lock(&p->mu);
	uint32_t me = ++p->started;   /* w[0] is the caller's */
	uint64_t seen = 0;
	for (;;) {
		while (p->gen == seen && !p->quit)
			pthread_cond_wait(&p->go, &p->mu);
		if (p->quit)
			break;
		seen = p->gen;
		pthread_mutex_unlock(&p->mu);
		cpool_items(p, &p->w[me]);
		pthread_mutex_lock(&p->mu);
		if (--p->pending == 0)
			pthread_cond_signal(&p->done);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

/* Marks the stripes of B that are not clean, on every checker. */
static void cpool_run(struct cpool *p, struct bset *b)
{
	uint64_t len = b->c1 - b->c0;
	pthread_mutex_lock(&p->mu);
	p->job = b;
	p->per = (uint32_t)((len + CP - 1) / CP);
	p->nitems = b->ns * p->per;
	__atomic_store_n(&p->item, 0, __ATOMIC_RELAXED);
	p->pending = p->n;
	p->gen++;
	pthread_cond_broadcast(&p->go);
	pthread_mutex_unlock(&p->mu);
	cpool_items(p, &p->w[0]);
	pthread_mutex_lock(&p->mu);
	while (p->pending)
		pthread_cond_wait(&p->done, &p->mu);
	pthread_mutex_unlock(&p->mu);
}

static void cpool_stop(struct cpool *p)
{
	pthread_mutex_lock(&p->mu);
	p->quit = 1;
	pthread_cond_broadcast(&p->go);
	pthread_mutex_unlock(&p->mu);
	for (uint32_t i = 0; i < p->n; i++)
		pthread_join(p->th[i], NULL);
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->go);
	pthread_cond_destroy(&p->done);
}

static rk_err wk_init(struct scrub *S, struct wk *W)
{
	const struct rk_geom *g = S->g;
	W->pp = amalloc(VS);
	W->qq = amalloc(VS);
	W->dd = amalloc(VS);
	W->ptrs = calloc(S->nslots + 2, sizeof *W->ptrs);
	W->xptrs = calloc(S->nslots + 2, sizeof *W->xptrs);
	W->vol_role = calloc(g->nroles, sizeof *W->vol_role);
	W->slot = calloc(g->nroles, sizeof *W->slot);
	if (!W->pp || !W->qq || !W->dd || !W->ptrs || !W->xptrs || !W->vol_role || !W->slot)
		return rk_fail(RK_E_NOMEM, "scrub: out of memory");
	return RK_OK;
}

static void wk_free(struct wk *W)
{
	free(W->pp);
	free(W->qq);
	free(W->dd);
	free(W->ptrs);
	free(W->xptrs);
	free(W->vol_role);
	free(W->slot);
}

/* Full analysis of column bytes [ca, cb) (relative to the batch's c0) of
 * stripe SI: per-sector verdicts, regions, repair.  Blocks with a NULL
 * buffer are missing here (absent, or unreadable: S->unr). */
static rk_err check_parity_range(struct scrub *S, struct bset *b, uint32_t si, uint64_t ca, uint64_t cb)
{
	const struct rk_geom *g = S->g;
	uint64_t s = b->s0 + si;
	struct blk *blks = &b->blk[(size_t)si * S->width];
	struct rk_stripe_map m = { .vol_role = S->vol_role, .slot = S->slot };
	rk_err e = rk_geom_stripe_map(g, s, &m);
	if (e)
		return e;
	uint32_t missing, nmissing = absent(S, blks, &missing);
	if (nmissing >= g->nparity)
		return RK_OK;
	for (uint32_t k = 0; k < g->q_slots; k++)
		S->slot_role[k] = RK_ROLE_NONE_GEOM;
	for (uint32_t r = 0; r < g->nroles; r++)
		if (S->slot[r] < g->q_slots)
			S->slot_role[S->slot[r]] = r;
	int miss_data = nmissing && missing != m.p_role && missing != m.q_role;
	for (uint64_t col = ca; col < cb; col += VS) {
		size_t n = (size_t)(cb - col < VS ? cb - col : VS);
		if (!parity_slice(S, &S->w0, blks, &m, missing, col, n))
			continue;
		const uint8_t *P = blks[m.p_role].buf ? blks[m.p_role].buf + col : NULL;
		const uint8_t *Q = g->level == 6 && blks[m.q_role].buf ? blks[m.q_role].buf + col : NULL;
		/* sector by sector: runs of one verdict */
		const uint8_t *Pc = P ? P : S->pp, *Qc = Q ? Q : S->qq;
		for (size_t a = 0; a < n;) {
			size_t z = n - a < RK_SCRUB_SECTOR ? n - a : RK_SCRUB_SECTOR;
			int code;
			const char *why;
			char wbuf[200];
			S->c_nf = 0;
			if ((miss_data || !memcmp(S->pp + a, Pc + a, z)) && !memcmp(S->qq + a, Qc + a, z)) {
				a += z;
				continue;
			}
			if (nmissing) {
				code = 1;
				snprintf(wbuf, sizeof wbuf, "role %u is %s: the mismatch is found but cannot be located",
				         missing, S->unr[missing] ? "unreadable here" : "missing");
				why = wbuf;
			} else if (g->level != 6) {
				code = 1;
				snprintf(wbuf, sizeof wbuf, "parity disagrees with the data; RAID-%d parity cannot tell which block is wrong",
				         (int)g->level);
				why = wbuf;
			} else {
				code = r6_sector(S, S->pp + a, Pc + a, S->qq + a, Qc + a, z, m.p_role, m.q_role);
				if (code == 2 && S->c_f[0] == m.p_role)
					why = "P disagrees with the data; Q agrees";
				else if (code == 2 && S->c_f[0] == m.q_role)
					why = "Q disagrees with the data; P agrees";
				else if (code == 2)
					why = "P and Q syndromes both point at this data block";
				else
					why = "P and Q disagree in a way no single bad block explains";
			}
			/* extend the run over following sectors with the same verdict */
			size_t end = a + z;
			uint32_t nf0 = S->c_nf, f0 = S->c_f[0];
			while (end < n) {
				size_t z2 = n - end < RK_SCRUB_SECTOR ? n - end : RK_SCRUB_SECTOR;
				if ((miss_data || !memcmp(S->pp + end, Pc + end, z2)) && !memcmp(S->qq + end, Qc + end, z2))
					break;
				int c2 = 1;
				if (!nmissing && g->level == 6)
					c2 = r6_sector(S, S->pp + end, Pc + end, S->qq + end, Qc + end, z2, m.p_role, m.q_role);
				int same = c2 == code && (code != 2 || S->c_f[0] == f0);
				S->c_nf = nf0;
				S->c_f[0] = f0;
				if (!same)
					break;
				end += z2;
			}
			if (code != 2)
				S->c_nf = 0;
			size_t rl = end - a;
			enum rk_scrub_fix fix = RK_SCRUB_FIX_NONE;
			if (S->o->repair && !S->norepair) {
				if (code == 2) {
					uint32_t r = S->c_f[0];
					const uint8_t *src;
					if (r == m.p_role) {
						src = S->pp + a;
					} else if (r == m.q_role) {
						src = S->qq + a;
					} else {
						/* D ^ Pd: P is right, the data block is off by the P syndrome */
						const uint8_t *d = blks[r].buf + col + a;
						for (size_t i = 0; i < rl; i++)
							S->tmp[i] = d[i] ^ S->pp[a + i] ^ Pc[a + i];
						src = S->tmp;
					}
					if ((e = do_write(S, r, src, rl, blks[r].moff + col + a)))
						return e;
					fix = RK_SCRUB_FIX_PROVEN;
				} else {
					if (P && !miss_data && memcmp(S->pp + a, P + a, rl) &&
					    (e = do_write(S, m.p_role, S->pp + a, rl, blks[m.p_role].moff + col + a)))
						return e;
					if (Q && memcmp(S->qq + a, Q + a, rl) &&
					    (e = do_write(S, m.q_role, S->qq + a, rl, blks[m.q_role].moff + col + a)))
						return e;
					fix = RK_SCRUB_FIX_CONSISTENT;
				}
			}
			add_run(S, s, b->c0 + col + a, b->c0 + col + end, code, fix, why, blks, b->c0);
			a = end;
		}
	}
	return RK_OK;
}

/* ---- mirrors ---- */

/* Verdict of one sector over the live copies: 0 ok, 1 no majority,
 * 2 majority (S->bad[] marks the minority, S->c_f their roles); *maj gets
 * the index of a copy to copy from (the majority, else the first live). */
static int mirror_sector(struct scrub *S, const struct blk *blks, size_t off, size_t z, uint32_t *maj)
{
	uint32_t w = S->width, nlive = 0, first = UINT32_MAX;
	int alleq = 1;
	for (uint32_t c = 0; c < w; c++) {
		S->bad[c] = 0;
		if (!blks[c].buf)
			continue;
		nlive++;
		if (first == UINT32_MAX)
			first = c;
		else if (memcmp(blks[c].buf + off, blks[first].buf + off, z))
			alleq = 0;
	}
	*maj = first;
	S->c_nf = 0;
	if (alleq)
		return 0;
	uint32_t best = first, bestn = 0;
	for (uint32_t c = 0; c < w; c++) {
		if (!blks[c].buf)
			continue;
		uint32_t k = 0;
		for (uint32_t d = 0; d < w; d++)
			if (blks[d].buf && !memcmp(blks[c].buf + off, blks[d].buf + off, z))
				k++;
		if (k > bestn) {
			bestn = k;
			best = c;
		}
	}
	if (nlive < 3 || 2 * bestn <= nlive)
		return 1;
	*maj = best;
	for (uint32_t c = 0; c < w; c++)
		if (blks[c].buf && memcmp(blks[c].buf + off, blks[best].buf + off, z)) {
			S->bad[c] = 1;
			S->c_f[S->c_nf++] = blks[c].role;
		}
	return 2;
}

/* As check_parity_range, for mirrors (bytes past a block's length are
 * outside the volume and never looked at). */
static rk_err check_mirror_range(struct scrub *S, struct bset *b, uint32_t si, uint64_t ca, uint64_t cb)
{
	uint64_t s = b->s0 + si;
	struct blk *blks = &b->blk[(size_t)si * S->width];
	uint32_t nlive = 0, first = UINT32_MAX;
	uint64_t len = 0;
	for (uint32_t c = 0; c < S->width; c++)
		if (blks[c].buf) {
			nlive++;
			if (first == UINT32_MAX)
				first = c;
			len = blks[c].len;
		}
	if (nlive < 2)
		return RK_OK;
	if (cb > len)
		cb = len;
	int diff = 0;
	for (uint32_t c = first + 1; c < S->width && !diff && ca < cb; c++)
		if (blks[c].buf && memcmp(blks[c].buf + ca, blks[first].buf + ca, (size_t)(cb - ca)))
			diff = 1;
	if (!diff)
		return RK_OK;
	uint32_t *f_save = malloc(S->width * sizeof *f_save);
	if (!f_save)
		return rk_fail(RK_E_NOMEM, "scrub: out of memory");
	rk_err e = RK_OK;
	for (uint64_t a = ca; a < cb && !e;) {
		size_t z = (size_t)(cb - a < RK_SCRUB_SECTOR ? cb - a : RK_SCRUB_SECTOR);
		uint32_t maj;
		int code = mirror_sector(S, blks, (size_t)a, z, &maj);
		if (!code) {
			a += z;
			continue;
		}
		uint32_t nf = S->c_nf;
		memcpy(f_save, S->c_f, nf * sizeof *f_save);
		uint64_t end = a + z;
		while (end < cb) {
			size_t z2 = (size_t)(cb - end < RK_SCRUB_SECTOR ? cb - end : RK_SCRUB_SECTOR);
			uint32_t maj2;
			int c2 = mirror_sector(S, blks, (size_t)end, z2, &maj2);
			int same = c2 == code && maj2 == maj && S->c_nf == nf && !memcmp(S->c_f, f_save, nf * sizeof *f_save);
			if (!same)
				break;
			end += z2;
		}
		/* restore this run's verdict (the look-ahead overwrote it) */
		S->c_nf = nf;
		memcpy(S->c_f, f_save, nf * sizeof *f_save);
		char why[200];
		if (code == 2)
			snprintf(why, sizeof why, "%u of %u copies agree; the others differ", nlive - nf, nlive);
		else
			snprintf(why, sizeof why, "the %u copies differ and no majority tells which is right", nlive);
		enum rk_scrub_fix fix = RK_SCRUB_FIX_NONE;
		if (S->o->repair && !S->norepair) {
			const uint8_t *src = blks[maj].buf + a;
			for (uint32_t c = 0; c < S->width && !e; c++) {
				if (!blks[c].buf || c == maj || !memcmp(blks[c].buf + a, src, (size_t)(end - a)))
					continue;
				e = do_write(S, blks[c].role, src, end - a, blks[c].moff + a);
			}
			if (e)
				break;
			fix = code == 2 ? RK_SCRUB_FIX_PROVEN : RK_SCRUB_FIX_CONSISTENT;
		}
		if (code != 2)
			S->c_nf = 0;
		add_run(S, s, b->c0 + a, b->c0 + end, code, fix, why, blks, b->c0);
		a = end;
	}
	free(f_save);
	return e;
}

static rk_err check_range(struct scrub *S, struct bset *b, uint32_t si, uint64_t ca, uint64_t cb)
{
	return S->parity ? check_parity_range(S, b, si, ca, cb) : check_mirror_range(S, b, si, ca, cb);
}

/* Counts stripe SI of B (once per stripe: with its first column slice) as
 * checked or, when too few of its blocks are there, unchecked. */
static void count_stripe(struct scrub *S, const struct bset *b, uint32_t si)
{
	if (b->c0 != 0)
		return;
	const struct blk *blks = &b->blk[(size_t)si * S->width];
	uint32_t missing, nm = absent(S, blks, &missing);
	int checked = S->parity ? nm < S->g->nparity : S->width - nm >= 2;
	if (checked)
		S->st->stripes++;
	else
		S->st->unchecked++;
}

/* ---- unreadable blocks ---- */

static rk_err push_run(struct urun **v, uint32_t *n, uint32_t *cap, struct urun r)
{
	if (*n && (*v)[*n - 1].role == r.role && (*v)[*n - 1].b == r.a && (*v)[*n - 1].recov == r.recov &&
	    (*v)[*n - 1].conf == r.conf && (*v)[*n - 1].fix == r.fix) {
		(*v)[*n - 1].b = r.b;
		return RK_OK;
	}
	if (*n == *cap) {
		uint32_t nc = *cap ? 2 * *cap : 16;
		struct urun *nv = realloc(*v, nc * sizeof *nv);
		if (!nv)
			return rk_fail(RK_E_NOMEM, "scrub: out of memory");
		*v = nv;
		*cap = nc;
	}
	(*v)[(*n)++] = r;
	return RK_OK;
}

/* Reads block X again to find its unreadable bytes: whole, then in PROBE
 * pieces, then the failing pieces sector by sector.  Unreadable sectors
 * are zeroed in the buffer and appended to S->ur (column bytes).  A member
 * whose last DEAD_BLOCKS probed blocks had no readable sector at all (a
 * dead or pulled drive) has its later failing blocks taken as unreadable
 * whole, without a read per sector. */
static rk_err probe_block(struct scrub *S, struct blk *x)
{
	rk_dev *d = S->devs[x->role];
	uint64_t unit = rk_dev_sector(d) > RK_SCRUB_SECTOR ? rk_dev_sector(d) : RK_SCRUB_SECTOR;
	rk_err e = rk_dev_pread(d, x->buf, (size_t)x->len, x->moff);
	if (e != RK_E_IO) {
		if (!e)
			S->dead[x->role] = 0;
		return e;
	}
	if (S->dead[x->role] >= DEAD_BLOCKS) {
		memset(x->buf, 0, (size_t)x->len);
		return push_run(&S->ur, &S->nur, &S->capur, (struct urun){ .role = x->role, .a = 0, .b = x->len });
	}
	int any = 0;
	for (uint64_t p = 0; p < x->len; p += PROBE) {
		uint64_t pe = x->len - p < PROBE ? x->len : p + PROBE;
		e = rk_dev_pread(d, x->buf + p, (size_t)(pe - p), x->moff + p);
		if (e != RK_E_IO) {
			if (e)
				return e;
			any = 1;
			continue;
		}
		for (uint64_t q = p; q < pe; q += unit) {
			uint64_t qe = pe - q < unit ? pe : q + unit;
			e = rk_dev_pread(d, x->buf + q, (size_t)(qe - q), x->moff + q);
			if (e == RK_OK) {
				any = 1;
				continue;
			}
			if (e != RK_E_IO)
				return e;
			memset(x->buf + q, 0, (size_t)(qe - q));
			if ((e = push_run(&S->ur, &S->nur, &S->capur, (struct urun){ .role = x->role, .a = q, .b = qe })))
				return e;
		}
	}
	S->dead[x->role] = any ? 0 : S->dead[x->role] + 1;
	return RK_OK;
}

/* Rebuilds column bytes [x, y) of every block of stripe SI with a NULL
 * buffer (unreadable here: S->unr, or absent) from the others, and writes
 * them to the unreadable ones, then reads those back once.  S->ufix[r] gets
 * each unreadable role's outcome.  Needs at most nparity blocks lost
 * (parity) or one readable copy (mirrors). */
static rk_err rewrite_range(struct scrub *S, struct bset *b, uint32_t si, uint64_t x, uint64_t y)
{
	const struct rk_geom *g = S->g;
	struct blk *blks = &b->blk[(size_t)si * S->width];
	struct rk_stripe_map m = { .vol_role = S->vol_role, .slot = S->slot };
	rk_err e;
	for (uint32_t k = 0; k < S->width; k++)
		if (blks[k].len && S->unr[blks[k].role])
			S->ufix[blks[k].role] = RK_SCRUB_UFIX_REWRITTEN;
	if (S->parity && (e = rk_geom_stripe_map(g, b->s0 + si, &m)))
		return e;
	uint32_t src = UINT32_MAX;   /* mirrors: the first readable copy */
	for (uint32_t c = 0; c < S->width && src == UINT32_MAX; c++)
		if (blks[c].buf)
			src = c;
	for (uint64_t col = x; col < y; col += VS) {
		size_t n = (size_t)(y - col < VS ? y - col : VS);
		for (uint32_t k = 0; k < S->width; k++) {
			/* parity levels: k is the role */
			const uint8_t *from = NULL;
			if (!blks[k].len || blks[k].buf || !S->unr[blks[k].role] ||
			    S->ufix[blks[k].role] != RK_SCRUB_UFIX_REWRITTEN)
				continue;
			if (!S->parity) {
				from = blks[src].buf + col;
			} else if (g->level == 6) {
				/* every lost block (at most two) in slot order, as rk_parity_recover wants them */
				int fi[2] = { -1, -1 };
				uint8_t *out[2] = { S->pp, S->qq };
				uint32_t nl = 0;
				for (uint32_t i = 0; i < S->nslots; i++)
					S->ptrs[i] = S->zero;
				for (uint32_t r = 0; r < g->nroles; r++)
					if (blks[r].buf)
						S->ptrs[S->slot[r]] = blks[r].buf + col;
				for (uint32_t i = 0; i < S->nslots && nl < 2; i++)
					for (uint32_t r = 0; r < g->nroles; r++)
						if (!blks[r].buf && S->slot[r] == i) {
							S->ptrs[i] = out[nl];
							fi[nl++] = (int)i;
						}
				rk_parity_recover((int)S->nslots, n, fi[0], fi[1], S->ptrs);
				from = S->ptrs[S->slot[k]];
			} else {
				uint32_t j = 0;
				for (uint32_t r = 0; r < g->nroles; r++)
					if (blks[r].buf)
						S->xptrs[j++] = blks[r].buf + col;
				S->xptrs[j++] = S->pp;
				S->pa->xor_gen((int)j, n, S->xptrs);
				from = S->pp;
			}
			rk_err we = do_write(S, blks[k].role, from, n, blks[k].moff + col);
			if (we == RK_E_IO)
				S->ufix[blks[k].role] = RK_SCRUB_UFIX_FAILED;
			else if (we)
				return we;
		}
	}
	/* read back once what was rewritten */
	for (uint32_t k = 0; k < S->width; k++) {
		uint32_t r = blks[k].role;
		if (!blks[k].len || blks[k].buf || !S->unr[r] || S->ufix[r] != RK_SCRUB_UFIX_REWRITTEN)
			continue;
		for (uint64_t col = x; col < y; col += VS) {
			size_t n = (size_t)(y - col < VS ? y - col : VS);
			rk_err re = rk_dev_pread(S->devs[r], S->tmp, n, blks[k].moff + col);
			if (re == RK_E_IO) {
				S->ufix[r] = RK_SCRUB_UFIX_FAILED;
				break;
			}
			if (re)
				return re;
		}
	}
	return RK_OK;
}

static int urun_cmp(const void *a, const void *b)
{
	const struct urun *x = a, *y = b;
	if (x->role != y->role)
		return x->role < y->role ? -1 : 1;
	return x->a < y->a ? -1 : x->a > y->a;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Reports the outcomes in S->uo (sorted, merged) for stripe SI. */
static void emit_unreadable(struct scrub *S, struct bset *b, uint32_t si)
{
	const struct rk_geom *g = S->g;
	const struct blk *blks = &b->blk[(size_t)si * S->width];
	uint64_t s = b->s0 + si, base = s * g->stripe_data;
	struct rk_stripe_map m = { .vol_role = S->vol_role, .slot = S->slot };
	if (S->parity && rk_geom_stripe_map(g, s, &m))
		return;   /* cannot fail: the stripe was mapped before */
	qsort(S->uo, S->nuo, sizeof *S->uo, urun_cmp);
	uint32_t n = 0;
	for (uint32_t i = 0; i < S->nuo; i++) {
		struct urun *u = &S->uo[i];
		if (n && S->uo[n - 1].role == u->role && S->uo[n - 1].b == u->a && S->uo[n - 1].recov == u->recov &&
		    S->uo[n - 1].conf == u->conf && S->uo[n - 1].fix == u->fix)
			S->uo[n - 1].b = u->b;
		else
			S->uo[n++] = *u;
	}
	S->nuo = n;
	for (uint32_t i = 0; i < S->nuo; i++) {
		const struct urun *u = &S->uo[i];
		struct rk_scrub_unreadable U = { .stripe = s, .role = u->role, .member_len = u->b - u->a,
		                                 .recoverable = u->recov, .confirmed = u->conf > 0,
		                                 .disputed = u->conf < 0, .fix = u->fix };
		for (uint32_t k = 0; k < S->width; k++)
			if (blks[k].role == u->role && blks[k].len)
				U.member_off = blks[k].moff + u->a;
		char why[300];
		const char *how = !u->recov ? "" : u->conf > 0 ? "; the redundancy left over confirms the rebuilt bytes"
		                : u->conf < 0 ? "; but the rest of the stripe disagrees with itself there, so the rebuilt "
		                                "bytes are not certain"
		                : "; nothing is left over to confirm the rebuilt bytes";
		if (S->parity) {
			U.offset = base + b->c0 + u->a;
			U.length = (uint64_t)(g->ndata - 1) * g->chunk + (u->b - u->a);
			const char *what = u->role == m.p_role ? "P" : u->role == m.q_role ? "Q" : "data";
			for (uint32_t j = 0; j < g->ndata; j++)
				if (S->vol_role[j] == u->role) {
					U.is_data = 1;
					U.offset = base + (uint64_t)j * g->chunk + b->c0 + u->a;
					U.length = u->b - u->a;
				}
			if (u->recov)
				snprintf(why, sizeof why, "read error in the %s block; the rest of the stripe can rebuild it%s",
				         what, how);
			else
				snprintf(why, sizeof why, "read error in the %s block, and too many other blocks of the stripe "
				         "are missing or unreadable to rebuild it", what);
		} else {
			U.is_data = 1;
			U.offset = base + b->c0 + u->a;
			U.length = u->b - u->a;
			snprintf(why, sizeof why, "%s%s", u->recov ? "read error; another copy is readable"
			                                           : "read error, and no other copy is readable", how);
		}
		U.why = why;
		S->st->unreadable++;
		if (!U.recoverable)
			S->st->unrecoverable++;
		if (U.fix == RK_SCRUB_UFIX_REWRITTEN)
			S->st->rewritten++;
		else if (U.fix == RK_SCRUB_UFIX_FAILED)
			S->st->rewrite_failed++;
		if (S->o->on_unreadable)
			S->o->on_unreadable(S->o->ctx, &U);
	}
	S->nuo = 0;
}

/* Stripe SI has blocks whose read failed: probe them, then take the stripe
 * in segments of constant unreadable roles; each segment's unreadable
 * blocks count as missing there: the rest is checked with the redundancy
 * left, and (repair) the unreadable bytes are rebuilt and rewritten. */
static rk_err check_unreadable(struct scrub *S, struct bset *b, uint32_t si)
{
	struct blk *blks = &b->blk[(size_t)si * S->width];
	uint64_t len = 0;
	rk_err e;
	S->nur = 0;
	for (uint32_t k = 0; k < S->width; k++) {
		if (blks[k].len > len)
			len = blks[k].len;
		if (!blks[k].ioerr)
			continue;
		if ((e = probe_block(S, &blks[k])))
			return e;
		blks[k].ioerr = 0;
	}
	if (!S->nur)
		return check_range(S, b, si, 0, len);
	/* segment bounds: every run's ends */
	uint64_t *cut = malloc((2 * (size_t)S->nur + 2) * sizeof *cut);
	uint8_t **save = calloc(S->width, sizeof *save);
	if (!cut || !save) {
		free(cut);
		free(save);
		return rk_fail(RK_E_NOMEM, "scrub: out of memory");
	}
	uint32_t nc = 0;
	cut[nc++] = 0;
	cut[nc++] = len;
	for (uint32_t i = 0; i < S->nur; i++) {
		cut[nc++] = S->ur[i].a;
		cut[nc++] = S->ur[i].b;
	}
	qsort(cut, nc, sizeof *cut, u64_cmp);
	e = RK_OK;
	for (uint32_t c = 0; c + 1 < nc && !e; c++) {
		uint64_t x = cut[c], y = cut[c + 1];
		if (x == y)
			continue;
		uint32_t nu = 0, nlost = 0, nread = 0;
		for (uint32_t k = 0; k < S->width; k++) {
			uint32_t r = blks[k].role;
			save[k] = blks[k].buf;
			for (uint32_t i = 0; i < S->nur; i++)
				if (S->ur[i].role == r && S->ur[i].a <= x && S->ur[i].b >= y && blks[k].buf) {
					S->unr[r] = 1;
					blks[k].buf = NULL;
					nu++;
				}
			if (!blks[k].len)
				continue;
			if (blks[k].buf)
				nread++;
			else
				nlost++;
		}
		if (!nu) {
			e = check_range(S, b, si, x, y);
		} else {
			/* Redundancy left over checks the rest (and so the bytes that
			 * rebuild the unreadable ones); nothing is repaired there, as
			 * every fix would build on a block that cannot be read.  The
			 * unreadable bytes are rewritten when that check confirms what
			 * rebuilds them, or (rewrite_unconfirmed) when nothing is left
			 * to check: from stale parity that would write wrong data. */
			int recov = S->parity ? nlost <= S->g->nparity : nread >= 1;
			int spare = S->parity ? nlost < S->g->nparity : nread >= 2;
			int conf = 0;
			for (uint32_t k = 0; k < S->width; k++)
				S->ufix[blks[k].role] = RK_SCRUB_UFIX_NONE;
			if (spare) {
				uint64_t runs = S->nruns;
				S->norepair = 1;
				e = check_range(S, b, si, x, y);
				S->norepair = 0;
				conf = S->nruns == runs ? 1 : -1;
			}
			if (!e && recov && S->o->repair && (conf > 0 || (!conf && S->o->rewrite_unconfirmed)))
				e = rewrite_range(S, b, si, x, y);
			for (uint32_t k = 0; k < S->width && !e; k++) {
				uint32_t r = blks[k].role;
				if (S->unr[r] && !blks[k].buf && blks[k].len)
					e = push_run(&S->uo, &S->nuo, &S->capuo,
					             (struct urun){ .role = r, .a = x, .b = y, .recov = recov, .conf = recov ? conf : 0,
					                            .fix = S->ufix[r] });
			}
		}
		for (uint32_t k = 0; k < S->width; k++) {
			blks[k].buf = save[k];
			S->unr[blks[k].role] = 0;
		}
	}
	free(cut);
	free(save);
	if (e)
		return e;
	flush_region(S);
	emit_unreadable(S, b, si);
	return RK_OK;
}

/* ---- the run ---- */

static void scrub_free(struct scrub *S)
{
	for (int i = 0; i < 2; i++)
		bset_free(S, &S->bs[i]);
	for (uint32_t i = 1; i < RK_SCRUB_MAX_THREADS; i++)
		wk_free(&S->cp.w[i]);
	free(S->pp);
	free(S->qq);
	free(S->dd);
	free(S->zero);
	free(S->tmp);
	free(S->ptrs);
	free(S->xptrs);
	free(S->vol_role);
	free(S->slot);
	free(S->slot_role);
	free(S->locs);
	free(S->p_f);
	free(S->p_locs);
	free(S->c_f);
	free(S->bad);
	free(S->ecur);
	free(S->unr);
	free(S->ufix);
	free(S->dead);
	free(S->ur);
	free(S->uo);
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
static int any_redundancy(const struct scrub *S)
{
	const struct rk_geom *g = S->g;
	uint32_t missing = 0;
	for (uint32_t r = 0; r < g->nroles; r++)
		missing += !S->devs[r];
	if (S->parity)
		return missing < g->nparity;
	if (g->level == 1)
		return g->nroles - missing >= 2;
	/* RAID-10: some chunk keeps two live copies; look at one full cycle
	 * of the layout (it repeats every nroles chunks, far copies included
	 * for at most copies * nroles of them). */
	uint64_t lim = (uint64_t)g->nroles * g->copies;
	if (lim > g->nstripes)
		lim = g->nstripes;
	for (uint64_t vc = 0; vc < lim; vc++) {
		uint32_t k = rk_geom_copies(g, vc * g->chunk, S->locs, S->width), live = 0;
		for (uint32_t c = 0; c < k; c++)
			live += S->devs[S->locs[c].role] != NULL;
		if (live >= 2)
			return 1;
	}
	return 0;
}

/* Every stripe of a read batch, in order: the checkers' pass, then the
 * full analysis of those not clean. */
static rk_err check_batch(struct scrub *S, struct bset *b)
{
	cpool_run(&S->cp, b);
	for (uint32_t i = 0; i < b->ns; i++) {
		const struct blk *blks = &b->blk[(size_t)i * S->width];
		int ioerr = 0;
		for (uint32_t k = 0; k < S->width; k++)
			ioerr |= blks[k].ioerr;
		count_stripe(S, b, i);
		rk_err e = RK_OK;
		if (ioerr)
			e = check_unreadable(S, b, i);
		else if (b->dirty[i])
			e = check_range(S, b, i, 0, b->c1 - b->c0);
		if (e)
			return e;
	}
	return RK_OK;
}

rk_err rk_scrub_run(const struct rk_geom *g, rk_dev *const *devs, const uint64_t *data_offset,
                    uint64_t first, uint64_t last, const struct rk_scrub_opts *opts,
                    struct rk_scrub_stats *stats)
{
	memset(stats, 0, sizeof *stats);
	stats->next = first;
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
	struct scrub S0, *S = &S0;
	memset(S, 0, sizeof *S);
	S->g = g;
	S->devs = devs;
	S->doff = data_offset;
	S->o = opts;
	S->st = stats;
	S->pa = rk_parity();
	S->parity = g->level == 4 || g->level == 5 || g->level == 6;
	S->width = S->parity ? g->nroles : g->copies;
	S->nslots = g->level == 6 ? g->q_slots + 2 : g->ndata + 1;
	S->pslot = g->level == 6 ? g->q_slots : g->ndata;
	S->unit = S->parity || g->level == 10 ? g->chunk : g->stripe_data;
	S->batch = opts->batch ? opts->batch : RK_SCRUB_BATCH;
	if (S->batch < RK_SCRUB_SECTOR)
		S->batch = RK_SCRUB_SECTOR;
	S->batch -= S->batch % RK_SCRUB_SECTOR;

	/* stripes per batch so that each member reads about S->batch bytes */
	uint64_t col = S->unit < S->batch ? S->unit : S->batch;
	uint64_t per = S->unit;                       /* bytes a role reads per stripe (parity, RAID-1) */
	if (g->level == 10)
		per = (S->unit * g->copies + g->nroles - 1) / g->nroles;
	uint64_t ns64 = S->unit > S->batch ? 1 : S->batch / per;
	if (ns64 < 1)
		ns64 = 1;
	if (ns64 > 65536)
		ns64 = 65536;
	uint32_t ns = (uint32_t)ns64;

	uint32_t nslots = g->level == 6 ? g->q_slots + 2 : g->nroles + 2;
	rk_err e = RK_OK;
	S->pp = amalloc(VS);
	S->qq = amalloc(VS);
	S->dd = amalloc(VS);
	S->zero = amalloc(VS);
	S->tmp = amalloc(VS > col ? VS : (size_t)col);
	S->ptrs = calloc(nslots + 2, sizeof *S->ptrs);
	S->xptrs = calloc(nslots + 2, sizeof *S->xptrs);
	S->vol_role = calloc(g->nroles, sizeof *S->vol_role);
	S->slot = calloc(g->nroles, sizeof *S->slot);
	S->slot_role = calloc(nslots, sizeof *S->slot_role);
	S->locs = calloc(S->width, sizeof *S->locs);
	S->p_f = calloc(S->width, sizeof *S->p_f);
	S->p_locs = calloc(S->width, sizeof *S->p_locs);
	S->c_f = calloc(S->width, sizeof *S->c_f);
	S->bad = calloc(S->width, 1);
	S->ecur = calloc(g->nroles, sizeof *S->ecur);
	S->unr = calloc(g->nroles, 1);
	S->ufix = calloc(g->nroles, sizeof *S->ufix);
	S->dead = calloc(g->nroles, sizeof *S->dead);
	if (!S->ecur || !S->unr || !S->ufix || !S->dead ||
	    !S->pp || !S->qq || !S->dd || !S->zero || !S->tmp || !S->ptrs || !S->xptrs || !S->vol_role || !S->slot ||
	    !S->slot_role || !S->locs || !S->p_f || !S->p_locs || !S->c_f || !S->bad) {
		e = rk_fail(RK_E_NOMEM, "scrub: out of memory");
		goto out;
	}
	/* the caller's checker scratch is the analysis scratch (used one after the other) */
	S->w0 = (struct wk){ .pp = S->pp, .qq = S->qq, .dd = S->dd, .ptrs = S->ptrs, .xptrs = S->xptrs,
	                     .vol_role = S->vol_role, .slot = S->slot };
	memset(S->zero, 0, VS);
	if ((e = bset_init(S, &S->bs[0], ns)) || (e = bset_init(S, &S->bs[1], ns)))
		goto out;
	if (!any_redundancy(S)) {
		e = rk_fail(RK_E_TOOFEW, "scrub: too many members missing: no redundancy left to check");
		goto out;
	}
	if (first == last)
		goto out;

	/* checkers: the caller and one per further CPU */
	struct cpool *cp = &S->cp;
	uint32_t nc = opts->checkers;
	if (!nc) {
		long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
		nc = ncpu < 1 ? 1 : (uint32_t)(ncpu > RK_SCRUB_MAX_THREADS ? RK_SCRUB_MAX_THREADS : ncpu);
	}
	if (nc > RK_SCRUB_MAX_THREADS)
		nc = RK_SCRUB_MAX_THREADS;
	cp->S = S;
	cp->w[0] = S->w0;
	for (uint32_t i = 1; i < nc; i++)
		if ((e = wk_init(S, &cp->w[i])))
			goto out;
	pthread_mutex_init(&cp->mu, NULL);
	pthread_cond_init(&cp->go, NULL);
	pthread_cond_init(&cp->done, NULL);
	S->cp_started = 1;
	for (cp->n = 0; cp->n + 1 < nc; cp->n++)
		if (pthread_create(&cp->th[cp->n], NULL, cpool_main, cp))
			break;   /* fewer helpers: the caller checks the rest */

	/* reader threads */
	struct pool *p = &S->pool;
	uint32_t nt = opts->threads ? opts->threads : g->nroles;
	if (nt > RK_SCRUB_MAX_THREADS)
		nt = RK_SCRUB_MAX_THREADS;
	if (nt > g->nroles)
		nt = g->nroles;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->go, NULL);
	pthread_cond_init(&p->done, NULL);
	p->S = S;
	for (p->n = 0; p->n < nt; p->n++)
		if (pthread_create(&p->th[p->n], NULL, pool_main, p))
			break;
	if (p->n == 0) {
		pool_stop(p);
		e = rk_fail(RK_E_NOMEM, "scrub: cannot start reader threads");
		goto out;
	}

	/* batches: (s0, ns, c0, c1), columns sliced when a unit is above the batch */
	uint64_t s = first, c0 = 0;
	struct bset *cur = &S->bs[0], *nxt = &S->bs[1];
	uint32_t n0 = last - s < ns ? (uint32_t)(last - s) : ns;
	if ((e = plan(S, cur, s, n0, 0, col)))
		goto stop;
	pool_submit(p, cur);
	for (;;) {
		e = pool_wait(p, cur);
		if (e)
			break;
		fix_mapped(S, cur, S->ecur);
		/* next batch */
		c0 = cur->c1;
		s = cur->s0;
		uint32_t cns = cur->ns;
		if (c0 >= S->unit) {
			c0 = 0;
			s += cns;
		}
		int more = s < last;
		if (more) {
			uint32_t nn = last - s < ns ? (uint32_t)(last - s) : ns;
			uint64_t c1 = c0 + col < S->unit ? c0 + col : S->unit;
			if ((e = plan(S, nxt, s, nn, c0, c1)))
				break;
			pool_submit(p, nxt);
		}
		e = check_batch(S, cur);
		if (e) {
			if (more)
				pool_wait(p, nxt);
			break;
		}
		uint64_t next_stripe = cur->c1 >= S->unit ? cur->s0 + cur->ns : cur->s0;
		stats->next = next_stripe;
		if (cur->c1 >= S->unit)
			flush_region(S);   /* a region never spans stripes: emit before the checkpoint */
		if (opts->on_progress && (cur->c1 >= S->unit || !more) &&
		    opts->on_progress(opts->ctx, next_stripe, next_stripe - first) && more) {
			stats->stopped = 1;
			pool_wait(p, nxt);
			break;
		}
		if (!more)
			break;
		struct bset *t = cur;
		cur = nxt;
		nxt = t;
	}
stop:
	flush_region(S);
	pool_stop(p);
out:
	if (S->cp_started)
		cpool_stop(&S->cp);
	if (S->begun) {
		for (uint32_t r = 0; r < g->nroles; r++)
			if (devs[r]) {
				rk_err fe = rk_dev_flush(devs[r]);
				if (fe && !e)
					e = fe;
			}
	}
	scrub_free(S);
	return e;
}

/* ---- checkpoint file ---- */

rk_err rk_scrub_ckpt_save(const char *path, const struct rk_scrub_ckpt *c)
{
	char tmp[4096];
	if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp)
		return rk_fail(RK_E_INVAL, "%s: checkpoint path too long", path);
	FILE *f = fopen(tmp, "w");
	if (!f)
		return rk_fail(RK_E_OPEN, "%s: cannot write the checkpoint: %s", tmp, strerror(errno));
	fprintf(f, "raid-scrub checkpoint 1\nuuid ");
	for (int i = 0; i < 16; i++)
		fprintf(f, "%02x", c->uuid[i]);
	fprintf(f, "\nfirst %" PRIu64 "\nlast %" PRIu64 "\nnext %" PRIu64 "\nmismatches %" PRIu64
	        "\nrepaired %" PRIu64 "\nrepair %d\nunreadable %" PRIu64 "\nunrecoverable %" PRIu64 "\n", c->first,
	        c->last, c->next, c->mismatches, c->repaired, c->repair ? 1 : 0, c->unreadable, c->unrecoverable);
	int bad = fflush(f) != 0 || ferror(f) != 0 || fsync(fileno(f)) != 0;
	bad |= fclose(f) != 0;
	if (bad || rename(tmp, path)) {
		int er = errno;
		unlink(tmp);
		return rk_fail(RK_E_IO, "%s: cannot write the checkpoint: %s", path, strerror(er));
	}
	return RK_OK;
}

rk_err rk_scrub_ckpt_load(const char *path, struct rk_scrub_ckpt *c)
{
	memset(c, 0, sizeof *c);
	FILE *f = fopen(path, "r");
	if (!f)
		return rk_fail(RK_E_OPEN, "%s: cannot open the checkpoint: %s", path, strerror(errno));
	char line[256], uuid[64] = "";
	int have = 0, ver = 0;
	if (fgets(line, sizeof line, f) && sscanf(line, "raid-scrub checkpoint %d", &ver) == 1 && ver == 1)
		have |= 1;
	while (fgets(line, sizeof line, f)) {
		if (sscanf(line, "uuid %40s", uuid) == 1)
			have |= 2;
		else if (sscanf(line, "first %" SCNu64, &c->first) == 1)
			have |= 4;
		else if (sscanf(line, "last %" SCNu64, &c->last) == 1)
			have |= 8;
		else if (sscanf(line, "next %" SCNu64, &c->next) == 1)
			have |= 16;
		else if (sscanf(line, "mismatches %" SCNu64, &c->mismatches) == 1)
			have |= 32;
		else if (sscanf(line, "repaired %" SCNu64, &c->repaired) == 1)
			have |= 64;
		else if (sscanf(line, "repair %d", &c->repair) == 1)
			have |= 128;
		else if (sscanf(line, "unreadable %" SCNu64, &c->unreadable) == 1 ||
		         sscanf(line, "unrecoverable %" SCNu64, &c->unrecoverable) == 1)
			continue;
	}
	fclose(f);
	if (have != 255 || strlen(uuid) != 32 || c->first > c->last || c->next < c->first || c->next > c->last)
		return rk_fail(RK_E_CORRUPT, "%s: not a raid-scrub checkpoint (or damaged)", path);
	for (int i = 0; i < 16; i++) {
		unsigned v;
		if (sscanf(uuid + 2 * i, "%2x", &v) != 1)
			return rk_fail(RK_E_CORRUPT, "%s: bad uuid in checkpoint", path);
		c->uuid[i] = (uint8_t)v;
	}
	return RK_OK;
}
