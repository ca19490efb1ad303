/* dev_hash.c: digests (OpenSSL libcrypto EVP) and the hashing device
 * (rk_dev_hash in rk_dev.h): a read-only wrapper whose reads feed the digest
 * of the whole member while the command reads it, so that --hash costs no
 * second pass where the command reads the member in order. */
#include "rk_dev.h"
#include "rk_util.h"

#include <openssl/evp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HASH_PEND_MAX (8u << 20)     /* bytes kept of reads ahead of the prefix */
#define HASH_GAP_MAX  (64ull << 20)  /* reads further ahead than this wait for the catch-up */
#define HASH_STEP     (1u << 20)     /* the hash's own reads, in pieces */
#define HASH_SPARES   64             /* freed copies kept for reuse */

/* ---- digests ---- */

static const struct { const char *name; const EVP_MD *(*md)(void); } algs[] = {
	{ "sha256", EVP_sha256 }, { "sha1", EVP_sha1 }, { "md5", EVP_md5 },
};

/* The EVP digest named ALG, or NULL. */
static const EVP_MD *alg_md(const char *alg)
{
	for (size_t i = 0; alg && i < sizeof algs / sizeof algs[0]; i++)
		if (!strcmp(alg, algs[i].name))
			return algs[i].md();
	return NULL;
}

int rk_hash_alg_ok(const char *alg) { return alg_md(alg) != NULL; }

const char *rk_hash_alg_names(void) { return "sha256, sha1, md5"; }

struct rk_digest {
	EVP_MD_CTX *ctx;
	char alg[8];
	uint64_t bytes;
};

rk_err rk_digest_new(rk_digest **out, const char *alg)
{
	*out = NULL;
	const EVP_MD *md = alg_md(alg);
	if (!md)
		return rk_fail(RK_E_INVAL, "'%s' is not a digest (%s)", alg ? alg : "", rk_hash_alg_names());
	rk_digest *g = calloc(1, sizeof *g);
	if (!g || !(g->ctx = EVP_MD_CTX_new()) || EVP_DigestInit_ex(g->ctx, md, NULL) != 1) {
		rk_digest_free(g);
		return rk_fail(RK_E_NOMEM, "%s: cannot start the digest", alg);
	}
	snprintf(g->alg, sizeof g->alg, "%s", alg);
	*out = g;
	return RK_OK;
}

void rk_digest_update(rk_digest *g, const void *buf, size_t len)
{
	if (!g || !len)
		return;
	EVP_DigestUpdate(g->ctx, buf, len);   /* cannot fail for these digests once initialised */
	g->bytes += len;
}

rk_err rk_digest_final(rk_digest *g, struct rk_hash_result *res)
{
	unsigned n = 0;
	if (!g || !g->ctx || EVP_DigestFinal_ex(g->ctx, res->digest, &n) != 1)
		return rk_fail(RK_E_INVAL, "digest: cannot complete it");
	EVP_MD_CTX_free(g->ctx);
	g->ctx = NULL;
	snprintf(res->alg, sizeof res->alg, "%s", g->alg);
	res->len = n;
	rk_hex(res->digest, n, res->hex);
	res->size = g->bytes;
	res->done = 1;
	return RK_OK;
}

void rk_digest_free(rk_digest *g)
{
	if (!g)
		return;
	EVP_MD_CTX_free(g->ctx);
	free(g);
}

/* ---- the hashing device ---- */

struct pend {             /* a read ahead of the prefix, kept until it is reached */
	uint64_t off;
	size_t len;
	uint8_t *data;
	size_t cap;           /* bytes allocated at data */
};

struct hashdev {
	rk_dev *lower;
	int own;
	rk_digest *g;
	struct rk_hash_result *res;
	pthread_mutex_t mu;
	uint64_t prefix;      /* bytes [0, prefix) are in the digest */
	int finished;
	struct pend *p;
	size_t np, cap;
	uint64_t pend_bytes;
	struct pend spare[HASH_SPARES];   /* freed copies kept for reuse (data, len = capacity) */
	size_t nspare;
	uint64_t spare_bytes;  /* at most HASH_PEND_MAX */
	uint8_t *step;        /* HASH_STEP bytes for the hash's own reads (lazily) */
};

/* A buffer of at least LEN bytes for a kept read: a spare one when it fits
 * (reads are mostly chunk-sized: fresh large allocations would fault their
 * pages in again and again), else a new one; *CAP gets its capacity. */
static uint8_t *buf_get(struct hashdev *h, size_t len, size_t *cap)
{
	for (size_t i = 0; i < h->nspare; i++)
		if (h->spare[i].len >= len) {
			uint8_t *b = h->spare[i].data;
			*cap = h->spare[i].len;
			h->spare_bytes -= *cap;
			h->spare[i] = h->spare[--h->nspare];
			return b;
		}
	*cap = len;
	return malloc(len);
}

/* Gives back a kept read's buffer of capacity CAP. */
static void buf_put(struct hashdev *h, uint8_t *b, size_t cap)
{
	if (h->nspare < HASH_SPARES && h->spare_bytes + cap <= HASH_PEND_MAX) {
		h->spare[h->nspare++] = (struct pend){ 0, cap, b, cap };
		h->spare_bytes += cap;
	} else {
		free(b);
	}
}

/* Hashes BUF's part past the prefix (BUF holds [OFF, OFF+LEN), OFF <=
 * prefix); ALONG: the bytes came from the command's reads. */
static void take(struct hashdev *h, const uint8_t *buf, size_t len, uint64_t off, int along)
{
	if (off + len <= h->prefix)
		return;
	size_t skip = (size_t)(h->prefix - off), n = len - skip;
	rk_digest_update(h->g, buf + skip, n);
	h->prefix += n;
	h->res->size = h->prefix;
	if (along)
		h->res->along += n;
	else
		h->res->extra += n;
}

/* Hashes the kept reads the prefix has reached, and frees them. */
static void drain(struct hashdev *h)
{
	for (int again = 1; again;) {
		again = 0;
		for (size_t i = 0; i < h->np; i++) {
			struct pend *q = &h->p[i];
			if (q->off > h->prefix)
				continue;
			take(h, q->data, q->len, q->off, 1);
			buf_put(h, q->data, q->cap);
			h->pend_bytes -= q->len;
			h->p[i] = h->p[--h->np];
			again = 1;
			break;
		}
	}
}

/* The lowest offset of a kept read, or UINT64_MAX. */
static uint64_t first_pending(const struct hashdev *h)
{
	uint64_t lo = UINT64_MAX;
	for (size_t i = 0; i < h->np; i++)
		lo = h->p[i].off < lo ? h->p[i].off : lo;
	return lo;
}

/* The hash reads [prefix, TO) of the lower device itself (TO <= size),
 * taking kept reads as the prefix reaches them. */
static rk_err fill_to(struct hashdev *h, uint64_t to)
{
	if (!h->step && !(h->step = malloc(HASH_STEP)))
		return rk_fail(RK_E_NOMEM, "%s: hash: out of memory", rk_dev_path(h->lower));
	drain(h);
	while (h->prefix < to) {
		uint64_t end = to, fp = first_pending(h);
		end = fp > h->prefix && fp < end ? fp : end;
		end = end - h->prefix > HASH_STEP ? h->prefix + HASH_STEP : end;
		rk_err e = rk_dev_pread(h->lower, h->step, (size_t)(end - h->prefix), h->prefix);
		if (e)
			return e;
		take(h, h->step, (size_t)(end - h->prefix), h->prefix, 0);
		drain(h);
	}
	return RK_OK;
}

/* Keeps a copy of a read ahead of the prefix; 0, or -1 when out of memory
 * (the catch-up reads it then). */
static int keep(struct hashdev *h, const void *buf, size_t len, uint64_t off)
{
	if (h->np == h->cap) {
		size_t nc = h->cap ? h->cap * 2 : 16;
		struct pend *np = realloc(h->p, nc * sizeof *np);
		if (!np)
			return -1;
		h->p = np;
		h->cap = nc;
	}
	size_t cap;
	uint8_t *copy = buf_get(h, len, &cap);
	if (!copy)
		return -1;
	memcpy(copy, buf, len);
	h->p[h->np++] = (struct pend){ off, len, copy, cap };
	h->pend_bytes += len;
	return 0;
}

/* What a read of [OFF, OFF+LEN) that returned BUF gives the digest (with
 * the lock held).  A failing gap read is left to the catch-up. */
static void feed(struct hashdev *h, const void *buf, size_t len, uint64_t off)
{
	if (h->finished || off + len <= h->prefix)
		return;
	if (off > h->prefix && off - h->prefix > HASH_GAP_MAX)
		return;
	if (off > h->prefix && len <= HASH_PEND_MAX && h->pend_bytes + len <= HASH_PEND_MAX) {
		keep(h, buf, len, off);
		return;
	}
	if (off > h->prefix && fill_to(h, off) != RK_OK)
		return;
	take(h, buf, len, off, 1);
	drain(h);
}

static rk_err hd_pread(rk_dev *d, void *buf, size_t len, uint64_t off)
{
	struct hashdev *h = rk_dev_priv(d);
	rk_err e = rk_dev_pread(h->lower, buf, len, off);
	if (e)
		return e;
	pthread_mutex_lock(&h->mu);
	feed(h, buf, len, off);
	pthread_mutex_unlock(&h->mu);
	return RK_OK;
}

static rk_err hd_pwrite(rk_dev *d, const void *buf, size_t len, uint64_t off)
{
	return rk_fail(RK_E_READONLY, "%s: opened read-only (hashing)", rk_dev_path(d));
}

static void hd_advise(rk_dev *d, uint64_t off, uint64_t len, unsigned adv)
{
	struct hashdev *h = rk_dev_priv(d);
	rk_dev_advise(h->lower, off, len, adv);
}

/* Frees the hashing state (not the lower device). */
static void hd_free(struct hashdev *h)
{
	for (size_t i = 0; i < h->np; i++)
		free(h->p[i].data);
	for (size_t i = 0; i < h->nspare; i++)
		free(h->spare[i].data);
	free(h->p);
	free(h->step);
	rk_digest_free(h->g);
	pthread_mutex_destroy(&h->mu);
	free(h);
}

static void hd_close(rk_dev *d)
{
	struct hashdev *h = rk_dev_priv(d);
	if (h->res)
		h->res->open = 0;
	if (h->own)
		rk_dev_close(h->lower);
	hd_free(h);
}

static const struct rk_dev_ops hash_ops = {
	.name = "hash", .pread = hd_pread, .pwrite = hd_pwrite, .close = hd_close, .advise = hd_advise,
};

rk_err rk_dev_hash(rk_dev **out, rk_dev *lower, const char *alg, struct rk_hash_result *res, int own_lower)
{
	*out = NULL;
	struct hashdev *h = calloc(1, sizeof *h);
	rk_err e = h ? rk_digest_new(&h->g, alg) : rk_fail(RK_E_NOMEM, "%s: hash: out of memory", rk_dev_path(lower));
	if (e || pthread_mutex_init(&h->mu, NULL)) {
		if (h)
			rk_digest_free(h->g);
		free(h);
		if (own_lower)
			rk_dev_close(lower);
		return e ? e : rk_fail(RK_E_NOMEM, "%s: hash: cannot make a lock", rk_dev_path(lower));
	}
	h->lower = lower;
	h->own = own_lower;
	h->res = res;
	memset(res, 0, sizeof *res);
	snprintf(res->alg, sizeof res->alg, "%s", alg);
	res->open = 1;
	if ((e = rk_dev_new(out, &hash_ops, h, rk_dev_path(lower), rk_dev_size(lower), rk_dev_sector(lower), 0)))
		return e;   /* hd_close ran: LOWER closed when owned */
	dev_t dn;
	ino_t ino;
	if (rk_dev_identity(lower, &dn, &ino))
		rk_dev_set_identity(*out, dn, ino, rk_dev_is_blockdev(lower));
	return RK_OK;
}

rk_err rk_dev_hash_finish(rk_dev *d)
{
	if (!rk_dev_has_ops(d, &hash_ops))
		return rk_fail(RK_E_INVAL, "%s: not a hashing device", rk_dev_path(d));
	struct hashdev *h = rk_dev_priv(d);
	pthread_mutex_lock(&h->mu);
	rk_err e = RK_OK;
	if (!h->finished) {
		e = fill_to(h, rk_dev_size(h->lower));
		if (!e) {
			struct rk_hash_result *r = h->res;
			uint64_t along = r->along, extra = r->extra;
			e = rk_digest_final(h->g, r);
			r->along = along;
			r->extra = extra;
			r->open = 1;
			h->finished = !e;
		}
	}
	pthread_mutex_unlock(&h->mu);
	return e;
}
