/* test_vol.c: the stripe engine over memory members against a flat model
 * volume: random reads and writes on every level and layout, healthy and
 * degraded at each level's limit, parity/mirror consistency checked with the
 * reference kernels, injected read errors reconstructed and reported, too
 * many missing members refused, and the I/O a full-stripe or small write
 * costs. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "rk_dev.h"
#include "rk_geom.h"
#include "rk_parity.h"
#include "rk_vol.h"
#include "helpers/rk_test.h"

/* ---- a counting pass-through device ---- */
struct cnt { rk_dev *lower; uint64_t reads, writes; };
static rk_err cnt_pread(rk_dev *d, void *buf, size_t len, uint64_t off)
{
	struct cnt *c = rk_dev_priv(d);
	c->reads++;
	return rk_dev_pread(c->lower, buf, len, off);
}
static rk_err cnt_pwrite(rk_dev *d, const void *buf, size_t len, uint64_t off)
{
	struct cnt *c = rk_dev_priv(d);
	c->writes++;
	return rk_dev_pwrite(c->lower, buf, len, off);
}
static rk_err cnt_flush(rk_dev *d)
{
	struct cnt *c = rk_dev_priv(d);
	return rk_dev_flush(c->lower);
}
static void cnt_close(rk_dev *d)
{
	struct cnt *c = rk_dev_priv(d);
	rk_dev_close(c->lower);
	free(c);
}
static const struct rk_dev_ops cnt_ops = { .name = "count", .pread = cnt_pread, .pwrite = cnt_pwrite, .flush = cnt_flush, .close = cnt_close };

/* ---- an array of memory members ---- */
struct arr {
	struct rk_geom g;
	uint32_t n;
	rk_dev **mem;       /* the memory devices */
	rk_dev **use;       /* what the volume sees (NULL = missing) */
	struct cnt **cnt;
	uint64_t *doff;
	rk_vol *v;
	uint8_t *model;
	uint32_t fails;
	uint32_t failed_role;
	uint32_t repairs;           /* rk_vol_on_repair */
	uint32_t rep_role;
	uint64_t rep_off, rep_len;
};

static void on_repair(void *ctx, uint32_t role, uint64_t off, uint64_t len)
{
	struct arr *a = ctx;
	a->repairs++;
	a->rep_role = role;
	a->rep_off = off;
	a->rep_len = len;
}

static void on_fail(void *ctx, uint32_t role, rk_err why)
{
	struct arr *a = ctx;
	a->fails++;
	a->failed_role = role;
	RK_REQUIRE(why == RK_E_IO);
}

static void arr_make(struct arr *a, int32_t level, uint32_t layout, uint64_t chunk, uint32_t n, uint64_t msize,
                     int counting)
{
	memset(a, 0, sizeof *a);
	ck_assert_int_eq(rk_geom_init(&a->g, level, layout, chunk, n, msize), RK_OK);
	a->n = n;
	a->mem = calloc(n, sizeof *a->mem);
	a->use = calloc(n, sizeof *a->use);
	a->cnt = calloc(n, sizeof *a->cnt);
	a->doff = calloc(n, sizeof *a->doff);
	for (uint32_t r = 0; r < n; r++) {
		a->doff[r] = 4096 + (r % 3) * 512;   /* data areas need not line up */
		char name[32];
		snprintf(name, sizeof name, "mem%u", r);
		rk_dev *m;
		ck_assert_int_eq(rk_dev_mem(&m, name, a->doff[r] + a->g.member_size + 1000), RK_OK);
		if (counting) {
			struct cnt *c = calloc(1, sizeof *c);
			c->lower = m;
			ck_assert_int_eq(rk_dev_new(&a->mem[r], &cnt_ops, c, name, rk_dev_size(m), 512, 1), RK_OK);
			a->cnt[r] = c;
		} else {
			a->mem[r] = m;
		}
		a->use[r] = a->mem[r];
	}
	a->model = calloc(1, a->g.volume_size);   /* members start zeroed: a consistent, all-zero volume */
	RK_REQUIRE(a->model != NULL);
}

static rk_err arr_open(struct arr *a)
{
	rk_err e = rk_vol_open(&a->v, &a->g, a->use, a->doff);
	if (!e) {
		rk_vol_on_fail(a->v, on_fail, a);
		rk_vol_on_repair(a->v, on_repair, a);
	}
	return e;
}

static void arr_free(struct arr *a)
{
	rk_vol_close(a->v);
	for (uint32_t r = 0; r < a->n; r++)
		if (a->use[r] && a->use[r] != a->mem[r])
			rk_dev_close(a->use[r]);
	for (uint32_t r = 0; r < a->n; r++)
		rk_dev_close(a->mem[r]);
	free(a->mem);
	free(a->use);
	free(a->cnt);
	free(a->doff);
	free(a->model);
}

static uint8_t *member_bytes(struct arr *a, uint32_t r)
{
	rk_dev *d = a->cnt[r] ? a->cnt[r]->lower : a->mem[r];
	return rk_dev_mem_data(d) + a->doff[r];
}

/* Random writes and reads against the model. */
static void random_ops(struct arr *a, unsigned ops, uint64_t maxlen)
{
	uint64_t vs = a->g.volume_size;
	uint8_t *buf = malloc(maxlen);
	for (unsigned i = 0; i < ops; i++) {
		uint64_t len = 1 + rk_test_rnd_below(maxlen);
		if (rk_test_rnd() & 1)
			len = 1 + rk_test_rnd_below(a->g.chunk ? a->g.chunk * 2 : 4096);
		if (len > vs)
			len = vs;
		uint64_t off = rk_test_rnd_below(vs - len + 1);
		if ((rk_test_rnd() & 3) == 0 && a->g.stripe_data && a->g.stripe_data <= vs) {
			/* stripe-aligned: full-stripe writes */
			off = rk_test_rnd_below(vs / a->g.stripe_data) * a->g.stripe_data;
			if (off + len > vs)
				len = vs - off;
		}
		if (rk_test_rnd() % 3) {
			rk_test_fill(buf, len);
			rk_err e = rk_vol_write(a->v, buf, len, off);
			RK_REQUIRE_MSG(e == RK_OK, "write %llu@%llu: %s", (unsigned long long)len, (unsigned long long)off, rk_errmsg());
			memcpy(a->model + off, buf, len);
		} else {
			rk_err e = rk_vol_read(a->v, buf, len, off);
			RK_REQUIRE_MSG(e == RK_OK, "read %llu@%llu: %s", (unsigned long long)len, (unsigned long long)off, rk_errmsg());
			RK_REQUIRE_MSG(!memcmp(buf, a->model + off, len), "level %d layout %u n=%u: read %llu@%llu differs",
			        a->g.level, a->g.layout, a->n, (unsigned long long)len, (unsigned long long)off);
		}
	}
	free(buf);
}

static void read_all(struct arr *a)
{
	uint8_t *buf = malloc(a->g.volume_size);
	rk_err e = rk_vol_read(a->v, buf, a->g.volume_size, 0);
	RK_REQUIRE_MSG(e == RK_OK, "read all: %s", rk_errmsg());
	RK_REQUIRE_MSG(!memcmp(buf, a->model, a->g.volume_size), "level %d layout %u n=%u: volume differs from the model",
	        a->g.level, a->g.layout, a->n);
	free(buf);
}

/* Redundancy on the members as the reference kernels compute it. */
static void check_consistent(struct arr *a)
{
	const struct rk_geom *g = &a->g;
	if (g->level == 4 || g->level == 5 || g->level == 6) {
		uint32_t *dr = calloc(g->ndata, sizeof *dr), *vr = calloc(g->ndata, sizeof *vr);
		uint32_t slots = g->q_slots + 2;
		void **ptrs = calloc(slots, sizeof *ptrs);
		uint8_t *zero = calloc(1, g->chunk), *p = malloc(g->chunk), *q = malloc(g->chunk);
		for (uint64_t s = 0; s < g->nstripes; s++) {
			struct rk_stripe_roles sr = { .data_role = dr };
			RK_REQUIRE(rk_geom_stripe(g, s, &sr) == RK_OK);
			for (uint32_t i = 0; i < slots; i++)
				ptrs[i] = zero;
			int ddf = g->level == 6 && g->layout >= 8 && g->layout <= 10;
			for (uint32_t i = 0; i < g->ndata; i++)
				ptrs[ddf ? dr[i] : i] = member_bytes(a, dr[i]) + sr.member_off;
			if (g->level == 6) {
				ptrs[slots - 2] = p;
				ptrs[slots - 1] = q;
				rk_parity_ref.gen((int)slots, g->chunk, ptrs);
				RK_REQUIRE_MSG(!memcmp(q, member_bytes(a, sr.q_role) + sr.member_off, g->chunk),
				        "level 6 layout %u n=%u stripe %llu: Q mismatch", g->layout, a->n, (unsigned long long)s);
			} else {
				ptrs[g->ndata] = p;
				rk_parity_ref.xor_gen((int)g->ndata + 1, g->chunk, ptrs);
			}
			RK_REQUIRE_MSG(!memcmp(p, member_bytes(a, sr.p_role) + sr.member_off, g->chunk),
			        "level %d layout %u n=%u stripe %llu: P mismatch", g->level, g->layout, a->n,
			        (unsigned long long)s);
			/* and the data blocks hold the model's bytes */
			struct rk_stripe_map m = { .vol_role = vr };
			RK_REQUIRE(rk_geom_stripe_map(g, s, &m) == RK_OK);
			for (uint32_t j = 0; j < g->ndata; j++)
				RK_REQUIRE(!memcmp(member_bytes(a, vr[j]) + m.member_off, a->model + s * g->stripe_data + j * g->chunk,
				            g->chunk));
		}
		free(dr);
		free(vr);
		free(ptrs);
		free(zero);
		free(p);
		free(q);
		return;
	}
	/* every copy of every unit holds the model's bytes */
	struct rk_loc locs[64];
	uint64_t step = g->level == RK_LEVEL_LINEAR ? 1 : g->chunk ? g->chunk : 512;
	if (g->level == RK_LEVEL_LINEAR || g->level == 1)
		step = 512;
	for (uint64_t x = 0; x < g->volume_size; x += step) {
		uint64_t run;
		struct rk_loc l;
		RK_REQUIRE(rk_geom_map(g, x, &l, &run) == RK_OK);
		uint64_t len = run < step ? run : step;
		if (len > g->volume_size - x)
			len = g->volume_size - x;
		uint32_t k = rk_geom_copies(g, x, locs, 64);
		for (uint32_t i = 0; i < k; i++)
			RK_REQUIRE_MSG(!memcmp(member_bytes(a, locs[i].role) + locs[i].member_off, a->model + x, len),
			        "level %d n=%u: copy %u of %llu on role %u differs", g->level, a->n, i, (unsigned long long)x,
			        locs[i].role);
	}
}

struct cfg { int32_t level; uint32_t layout; uint32_t n; uint64_t chunk; uint64_t chunks_per_member; };

static uint32_t configs(struct cfg *c)
{
	uint32_t k = 0;
	c[k++] = (struct cfg){ RK_LEVEL_LINEAR, 0, 3, 0, 0 };
	c[k++] = (struct cfg){ RK_LEVEL_LINEAR, 0, 1, 4096, 0 };
	c[k++] = (struct cfg){ 0, 0, 1, 4096, 8 };
	c[k++] = (struct cfg){ 0, 0, 4, 4096, 8 };
	c[k++] = (struct cfg){ 0, 0, 5, 1536, 9 };
	c[k++] = (struct cfg){ 1, 0, 1, 0, 0 };
	c[k++] = (struct cfg){ 1, 0, 2, 0, 0 };
	c[k++] = (struct cfg){ 1, 0, 3, 4096, 0 };
	c[k++] = (struct cfg){ 4, 5, 3, 4096, 8 };
	c[k++] = (struct cfg){ 4, 0, 5, 512, 16 };
	for (uint32_t l = 0; l <= 5; l++) {
		c[k++] = (struct cfg){ 5, l, 4, 4096, 8 };
		c[k++] = (struct cfg){ 5, l, 5 + l % 3, 1024, 11 };
	}
	c[k++] = (struct cfg){ 5, 2, 2, 4096, 8 };
	for (uint32_t l = 0; l <= 20; l++) {
		if (!(l <= 5 || (l >= 8 && l <= 10) || l >= 16))
			continue;
		c[k++] = (struct cfg){ 6, l, 5, 4096, 10 };
		c[k++] = (struct cfg){ 6, l, 4 + l % 4, 2048, 9 };
	}
	c[k++] = (struct cfg){ 6, 2, 3, 4096, 6 };
	/* big chunks: data moves straight between members and the caller */
	c[k++] = (struct cfg){ 5, 2, 4, 256 << 10, 3 };
	c[k++] = (struct cfg){ 6, 1, 5, 256 << 10, 3 };
	c[k++] = (struct cfg){ 6, 9, 6, 512 << 10, 2 };
	c[k++] = (struct cfg){ 10, 0x102, 2, 4096, 8 };
	c[k++] = (struct cfg){ 10, 0x102, 3, 4096, 8 };
	c[k++] = (struct cfg){ 10, 0x103, 4, 2048, 9 };
	c[k++] = (struct cfg){ 10, 0x201, 3, 4096, 8 };
	c[k++] = (struct cfg){ 10, 0x10201, 3, 4096, 8 };
	c[k++] = (struct cfg){ 10, 0x202, 4, 4096, 8 };
	return k;
}

static uint64_t cfg_msize(const struct cfg *c)
{
	return c->chunks_per_member ? c->chunk * c->chunks_per_member + 100 : 40000;
}

static uint32_t ncfg;
static struct cfg cfgs[128];

START_TEST(test_healthy)
{
	const struct cfg *c = &cfgs[_i];
	rk_test_rnd_seed(0x5eed0000 + (uint64_t)_i);
	struct arr a;
	arr_make(&a, c->level, c->layout, c->chunk, c->n, cfg_msize(c), 0);
	ck_assert_int_eq(arr_open(&a), RK_OK);
	uint64_t sd = a.g.stripe_data;
	random_ops(&a, 300, sd * 3 < a.g.volume_size ? sd * 3 : a.g.volume_size);
	read_all(&a);
	check_consistent(&a);
	ck_assert_uint_eq(a.fails, 0);
	ck_assert_int_eq(rk_vol_flush(a.v), RK_OK);
	arr_free(&a);
}
END_TEST

/* Roles to leave out at the level's limit (deterministic per seed). */
static uint32_t pick_missing(const struct arr *a, uint32_t *miss)
{
	const struct rk_geom *g = &a->g;
	uint32_t k = 0;
	switch (g->level) {
	case 1: k = a->n - 1; break;
	case 4: case 5: k = 1; break;
	case 6: k = 2; break;
	case 10: k = 1; break;
	default: return 0;
	}
	for (uint32_t i = 0; i < k; i++) {
		uint32_t r;
		int dup;
		do {
			r = (uint32_t)rk_test_rnd_below(a->n);
			dup = 0;
			for (uint32_t j = 0; j < i; j++)
				dup |= miss[j] == r;
		} while (dup);
		miss[i] = r;
	}
	return k;
}

START_TEST(test_degraded)
{
	const struct cfg *c = &cfgs[_i];
	if (rk_level_min_roles(c->level) == 0 || c->level == 0 || c->level == RK_LEVEL_LINEAR ||
	    (c->level == 1 && c->n == 1))
		return;   /* nothing can be missing */
	rk_test_rnd_seed(0xdead0000 + (uint64_t)_i);
	struct arr a;
	arr_make(&a, c->level, c->layout, c->chunk, c->n, cfg_msize(c), 0);
	ck_assert_int_eq(arr_open(&a), RK_OK);
	/* content written healthy */
	uint8_t *buf = malloc(a.g.volume_size);
	rk_test_fill(buf, a.g.volume_size);
	ck_assert_int_eq(rk_vol_write(a.v, buf, a.g.volume_size, 0), RK_OK);
	memcpy(a.model, buf, a.g.volume_size);
	free(buf);
	rk_vol_close(a.v);
	a.v = NULL;
	uint32_t miss[64];
	uint32_t k = pick_missing(&a, miss);
	for (uint32_t i = 0; i < k; i++)
		a.use[miss[i]] = NULL;
	ck_assert_int_eq(arr_open(&a), RK_OK);
	for (uint32_t i = 0; i < k; i++)
		ck_assert(rk_vol_role_down(a.v, miss[i]));
	read_all(&a);
	uint64_t sd = a.g.stripe_data;
	random_ops(&a, 300, sd * 3 < a.g.volume_size ? sd * 3 : a.g.volume_size);
	read_all(&a);
	/* reopened degraded, the writes are still there */
	rk_vol_close(a.v);
	a.v = NULL;
	ck_assert_int_eq(arr_open(&a), RK_OK);
	read_all(&a);
	rk_vol_close(a.v);
	a.v = NULL;
	ck_assert_uint_eq(a.fails, 0);
	arr_free(&a);
}
END_TEST

/* RAID-6 and RAID-5 written with one member missing: the survivors' P (and Q)
 * must describe the missing member, so a second loss is still readable. */
START_TEST(test_degraded_then_second_loss)
{
	static const struct cfg cs[] = {
		{ 6, 2, 5, 4096, 8 }, { 6, 0, 6, 2048, 8 }, { 6, 9, 5, 4096, 8 }, { 6, 18, 6, 4096, 8 }, { 6, 10, 4, 4096, 8 },
	};
	for (size_t t = 0; t < sizeof cs / sizeof cs[0]; t++) {
		const struct cfg *c = &cs[t];
		rk_test_rnd_seed(0x77 + t);
		struct arr a;
		arr_make(&a, c->level, c->layout, c->chunk, c->n, cfg_msize(c), 0);
		ck_assert_int_eq(arr_open(&a), RK_OK);
		random_ops(&a, 100, a.g.stripe_data * 2);
		rk_vol_close(a.v);
		a.v = NULL;
		uint32_t x = (uint32_t)rk_test_rnd_below(a.n);
		a.use[x] = NULL;
		ck_assert_int_eq(arr_open(&a), RK_OK);
		random_ops(&a, 200, a.g.stripe_data * 2);
		rk_vol_close(a.v);
		a.v = NULL;
		for (uint32_t y = 0; y < a.n; y++) {
			if (y == x)
				continue;
			a.use[y] = NULL;
			ck_assert_int_eq(arr_open(&a), RK_OK);
			read_all(&a);
			rk_vol_close(a.v);
			a.v = NULL;
			a.use[y] = a.mem[y];
		}
		arr_free(&a);
	}
}
END_TEST

/* Degraded reads of whole stripes in flat units (one stripe, as each of
 * an export's batches is, runs on the caller; two on the pool): every set
 * of one and two missing roles of a RAID-6 of 6 with 512 KiB chunks reads
 * one whole stripe, two, and a range from an odd offset with whole stripes
 * inside, byte for byte as written. */
START_TEST(test_degraded_flat)
{
	rk_test_rnd_seed(0x9e1ce5);
	struct arr a;
	arr_make(&a, 6, 2, 512 << 10, 6, (512 << 10) * 4, 0);
	ck_assert_int_eq(arr_open(&a), RK_OK);
	uint64_t vs = a.g.volume_size, sd = a.g.stripe_data;
	uint8_t *buf = malloc(vs);
	rk_test_fill(a.model, vs);
	ck_assert_int_eq(rk_vol_write(a.v, a.model, vs, 0), RK_OK);
	rk_vol_close(a.v);
	a.v = NULL;
	const uint64_t rd[][2] = { { sd, sd }, { 2 * sd, 2 * sd }, { 12345, 3 * sd + 4321 } };
	for (uint32_t x = 0; x < a.n; x++)
		for (uint32_t y = x; y < a.n; y++) {
			a.use[x] = a.use[y] = NULL;
			ck_assert_int_eq(arr_open(&a), RK_OK);
			for (size_t i = 0; i < sizeof rd / sizeof rd[0]; i++) {
				ck_assert_int_eq(rk_vol_read(a.v, buf, rd[i][1], rd[i][0]), RK_OK);
				ck_assert_msg(!memcmp(buf, a.model + rd[i][0], rd[i][1]), "roles %u,%u down: %llu@%llu differs", x,
				              y, (unsigned long long)rd[i][1], (unsigned long long)rd[i][0]);
			}
			rk_vol_close(a.v);
			a.v = NULL;
			a.use[x] = a.mem[x];
			a.use[y] = a.mem[y];
		}
	free(buf);
	arr_free(&a);
}
END_TEST

/* ---- a device recording which chunks were read and which advised ---- */
struct rec { rk_dev *lower; uint64_t base, chunk; uint8_t *read, *advised; };
static void rec_mark(uint8_t *map, uint64_t chunk, uint64_t off, uint64_t len)
{
	for (uint64_t c = off / chunk; c * chunk < off + len; c++)
		__atomic_store_n(&map[c], 1, __ATOMIC_RELAXED);   /* pool threads read at once */
}
static rk_err rec_pread(rk_dev *d, void *buf, size_t len, uint64_t off)
{
	struct rec *r = rk_dev_priv(d);
	rec_mark(r->read, r->chunk, off - r->base, len);
	return rk_dev_pread(r->lower, buf, len, off);
}
static rk_err rec_pwrite(rk_dev *d, const void *buf, size_t len, uint64_t off)
{
	struct rec *r = rk_dev_priv(d);
	return rk_dev_pwrite(r->lower, buf, len, off);
}
static rk_err rec_flush(rk_dev *d)
{
	struct rec *r = rk_dev_priv(d);
	return rk_dev_flush(r->lower);
}
static void rec_advise(rk_dev *d, uint64_t off, uint64_t len, unsigned adv)
{
	struct rec *r = rk_dev_priv(d);
	ck_assert_uint_eq(adv, RK_DEV_ADV_READAHEAD);
	ck_assert_uint_eq((off - r->base) % r->chunk, 0);
	ck_assert_uint_eq(len % r->chunk, 0);
	rec_mark(r->advised, r->chunk, off - r->base, len);
}
static void rec_close(rk_dev *d)
{
	struct rec *r = rk_dev_priv(d);
	free(r->read);
	free(r->advised);
	free(r);
}
static const struct rk_dev_ops rec_ops = { .name = "rec", .pread = rec_pread, .pwrite = rec_pwrite, .flush = rec_flush,
	                                         .close = rec_close, .advise = rec_advise };

/* rk_vol_advise_read advises exactly the chunks the read of the same range
 * reads (parity only where a lost block needs it), for RAID-5 and RAID-6
 * healthy, one and two members missing (each set), over whole stripes. */
START_TEST(test_advise_read)
{
	static const struct { int32_t level; uint32_t n; } cs[] = { { 5, 4 }, { 6, 6 } };
	for (size_t t = 0; t < sizeof cs / sizeof cs[0]; t++) {
		struct arr a;
		arr_make(&a, cs[t].level, 2, 4096, cs[t].n, 4096 * 12, 0);
		uint64_t nch = a.g.member_size / 4096 + 2, sd = a.g.stripe_data;
		uint8_t *buf = malloc(a.g.volume_size);
		for (uint32_t x = 0; x <= a.n; x++)
			for (uint32_t y = x; y <= a.n; y++) {
				if (cs[t].level == 5 && y < a.n && x != y)
					continue;   /* RAID-5: one missing at most */
				rk_dev *devs[8], *made[8];
				struct rec *rc[8];
				for (uint32_t r = 0; r < a.n; r++) {
					rc[r] = calloc(1, sizeof *rc[r]);
					*rc[r] = (struct rec){ a.mem[r], a.doff[r], 4096, calloc(nch, 1), calloc(nch, 1) };
					ck_assert_int_eq(rk_dev_new(&made[r], &rec_ops, rc[r], "rec", rk_dev_size(a.mem[r]), 512, 0), RK_OK);
					devs[r] = made[r];
				}
				if (x < a.n)
					devs[x] = NULL;
				if (y < a.n)
					devs[y] = NULL;
				rk_vol *v;
				ck_assert_int_eq(rk_vol_open(&v, &a.g, devs, a.doff), RK_OK);
				ck_assert_int_eq(rk_vol_advise_read(v, sd, 5 * sd, RK_DEV_ADV_READAHEAD, NULL, NULL), 1);
				ck_assert_int_eq(rk_vol_read(v, buf, 5 * sd, sd), RK_OK);
				rk_vol_close(v);
				for (uint32_t r = 0; r < a.n; r++) {
					ck_assert_msg(!memcmp(rc[r]->read, rc[r]->advised, nch), "RAID-%d, %u,%u down: role %u",
					              cs[t].level, x, y, r);
					rk_dev_close(made[r]);
				}
			}
		free(buf);
		arr_free(&a);
	}
}
END_TEST

START_TEST(test_toofew)
{
	for (uint32_t i = 0; i < ncfg; i++) {
		const struct cfg *c = &cfgs[i];
		struct arr a;
		arr_make(&a, c->level, c->layout, c->chunk, c->n, cfg_msize(c), 0);
		uint32_t k = c->level == 1 ? c->n : c->level == 6 ? 3 : c->level == 10 ? c->n : (c->level == 4 || c->level == 5) ? 2 : 1;
		if (k > c->n)
			k = c->n;
		for (uint32_t r = 0; r < k; r++)
			a.use[r] = NULL;
		if (c->level == 10) {
			/* all members of one chunk's copies gone */
			struct rk_loc locs[8];
			for (uint32_t r = 0; r < a.n; r++)
				a.use[r] = a.mem[r];
			uint32_t nc = rk_geom_copies(&a.g, 0, locs, 8);
			for (uint32_t j = 0; j < nc; j++)
				a.use[locs[j].role] = NULL;
		}
		rk_err e = arr_open(&a);
		RK_REQUIRE_MSG(e == RK_E_TOOFEW, "level %d n=%u with %u missing: %d", c->level, c->n, k, e);
		arr_free(&a);
	}
}
END_TEST

/* A read error on one member is reconstructed and reported; on a member
 * opened read-write the range is rewritten in place (repaired, the member
 * stays), on a read-only one the member is failed (nothing written). */
START_TEST(test_read_error)
{
	for (int ro = 0; ro < 2; ro++) {
	static const struct cfg cs[] = {
		{ 5, 2, 4, 4096, 8 }, { 6, 2, 5, 4096, 8 }, { 6, 0, 6, 4096, 8 }, { 4, 5, 3, 4096, 8 },
		{ 1, 0, 2, 0, 0 }, { 10, 0x102, 3, 4096, 8 }, { 10, 0x201, 4, 4096, 8 }, { 0, 0, 3, 4096, 8 },
		{ 5, 2, 255, 65536, 2 },
	};
	for (size_t t = 0; t < sizeof cs / sizeof cs[0]; t++) {
		const struct cfg *c = &cs[t];
		rk_test_rnd_seed(0x99 + t);
		struct arr a;
		arr_make(&a, c->level, c->layout, c->chunk, c->n, cfg_msize(c), 0);
		ck_assert_int_eq(arr_open(&a), RK_OK);
		uint8_t *buf = malloc(a.g.volume_size);
		rk_test_fill(buf, a.g.volume_size);
		ck_assert_int_eq(rk_vol_write(a.v, buf, a.g.volume_size, 0), RK_OK);
		memcpy(a.model, buf, a.g.volume_size);
		rk_vol_close(a.v);
		a.v = NULL;
		/* a read error on the member the engine reads a random volume byte from */
		struct rk_loc loc;
		ck_assert_int_eq(rk_geom_map(&a.g, rk_test_rnd_below(a.g.volume_size), &loc, NULL), RK_OK);
		uint32_t bad = loc.role;
		rk_fault_plan *plan;
		struct rk_fault_spec spec = { .model = RK_FAULT_READ_ERROR, .member = (int)bad,
		                              .off = a.doff[bad] + loc.member_off, .len = 1, .seed = 1 };
		ck_assert_int_eq(rk_fault_plan_create(&plan, &spec), RK_OK);
		rk_dev *lowerless;
		rk_dev *mem_copy;
		/* the fault device takes ownership of its lower: give it a fresh mem device with the same bytes */
		ck_assert_int_eq(rk_dev_mem(&mem_copy, "faulty", rk_dev_size(a.mem[bad])), RK_OK);
		memcpy(rk_dev_mem_data(mem_copy), rk_dev_mem_data(a.mem[bad]), rk_dev_size(a.mem[bad]));
		ck_assert_int_eq(rk_dev_fault(&lowerless, mem_copy, plan, (int)bad), RK_OK);
		if (ro) {   /* the same device seen read-only */
			struct cnt *cc = calloc(1, sizeof *cc);
			cc->lower = lowerless;
			ck_assert_int_eq(rk_dev_new(&lowerless, &cnt_ops, cc, "faulty-ro", rk_dev_size(mem_copy), 512, 0), RK_OK);
		}
		a.use[bad] = lowerless;
		ck_assert_int_eq(arr_open(&a), RK_OK);
		rk_err e = rk_vol_read(a.v, buf, a.g.volume_size, 0);
		if (c->level == 0) {
			ck_assert_int_eq(e, RK_E_IO);
			ck_assert_uint_eq(a.fails, 0);
			ck_assert_uint_eq(a.repairs, 0);
		} else if (!ro) {
			ck_assert_msg(e == RK_OK, "level %d: %s", c->level, rk_errmsg());
			ck_assert(!memcmp(buf, a.model, a.g.volume_size));
			ck_assert_uint_eq(a.fails, 0);
			ck_assert_uint_eq(a.repairs, 1);
			ck_assert_uint_eq(a.rep_role, bad);
			ck_assert(a.rep_off <= loc.member_off && loc.member_off < a.rep_off + a.rep_len);
			if (a.g.chunk && c->level != 1)
				ck_assert_uint_eq(a.rep_off % a.g.chunk, 0);
			ck_assert(!rk_vol_role_down(a.v, bad));
			/* the member was rewritten with what it held: the same bytes */
			ck_assert(!memcmp(rk_dev_mem_data(mem_copy), rk_dev_mem_data(a.mem[bad]), rk_dev_size(a.mem[bad])));
			/* healed: the next read meets no error */
			memset(buf, 0, a.g.volume_size);
			ck_assert_int_eq(rk_vol_read(a.v, buf, a.g.volume_size, 0), RK_OK);
			ck_assert(!memcmp(buf, a.model, a.g.volume_size));
			ck_assert_uint_eq(a.repairs, 1);
			ck_assert_uint_eq(a.fails, 0);
			random_ops(&a, 50, 3 * a.g.stripe_data < a.g.volume_size ? 3 * a.g.stripe_data : a.g.volume_size);
			read_all(&a);
			ck_assert(!rk_vol_role_down(a.v, bad));
		} else {
			ck_assert_uint_eq(a.repairs, 0);
			ck_assert_msg(e == RK_OK, "level %d: %s", c->level, rk_errmsg());
			ck_assert(!memcmp(buf, a.model, a.g.volume_size));
			ck_assert_uint_eq(a.fails, 1);
			ck_assert_uint_eq(a.failed_role, bad);
			ck_assert(rk_vol_role_down(a.v, bad));
			/* writes go on degraded */
			random_ops(&a, 50, 3 * a.g.stripe_data < a.g.volume_size ? 3 * a.g.stripe_data : a.g.volume_size);
			read_all(&a);
		}
		rk_fault_plan_free(plan);
		free(buf);
		arr_free(&a);
	}
	}
}
END_TEST

/* What writes cost: a full stripe reads nothing, a small write on a wide
 * RAID-5 reads old data and P (read-modify-write), a large partial stripe
 * reads the untouched data (reconstruct-write). */
START_TEST(test_write_costs)
{
	struct arr a;
	arr_make(&a, 5, 2, 4096, 8, 4096 * 8, 1);
	ck_assert_int_eq(arr_open(&a), RK_OK);
	uint64_t sd = a.g.stripe_data;
	uint8_t *buf = malloc(sd * 2);
	rk_test_fill(buf, sd * 2);
	for (uint32_t r = 0; r < a.n; r++)
		a.cnt[r]->reads = a.cnt[r]->writes = 0;
	ck_assert_int_eq(rk_vol_write(a.v, buf, sd * 2, sd), RK_OK);
	memcpy(a.model + sd, buf, sd * 2);
	uint64_t reads = 0, writes = 0;
	for (uint32_t r = 0; r < a.n; r++) {
		reads += a.cnt[r]->reads;
		writes += a.cnt[r]->writes;
		a.cnt[r]->reads = a.cnt[r]->writes = 0;
	}
	ck_assert_uint_eq(reads, 0);
	/* one merged request per member for both stripes, except the two roles
	 * that are data in one stripe and P in the other: data goes before parity */
	ck_assert_uint_eq(writes, a.n + 2);
	/* 100 bytes in one chunk: RMW reads data + P */
	ck_assert_int_eq(rk_vol_write(a.v, buf, 100, 3 * sd + 5000), RK_OK);
	memcpy(a.model + 3 * sd + 5000, buf, 100);
	reads = writes = 0;
	for (uint32_t r = 0; r < a.n; r++) {
		reads += a.cnt[r]->reads;
		writes += a.cnt[r]->writes;
		a.cnt[r]->reads = a.cnt[r]->writes = 0;
	}
	ck_assert_uint_eq(reads, 2);
	ck_assert_uint_eq(writes, 2);
	/* 6 of 7 chunks: RCW reads the one untouched chunk */
	ck_assert_int_eq(rk_vol_write(a.v, buf, 6 * 4096, 4 * sd), RK_OK);
	memcpy(a.model + 4 * sd, buf, 6 * 4096);
	reads = writes = 0;
	for (uint32_t r = 0; r < a.n; r++) {
		reads += a.cnt[r]->reads;
		writes += a.cnt[r]->writes;
	}
	ck_assert_uint_eq(reads, 1);
	ck_assert_uint_eq(writes, 7);
	read_all(&a);
	check_consistent(&a);
	free(buf);
	arr_free(&a);
}
END_TEST

/* Stripes wider than the unit budget are processed in column slices. */
START_TEST(test_wide)
{
	static const struct cfg cs[] = { { 5, 2, 255, 65536, 2 }, { 6, 0, 257, 65536, 2 }, { 6, 10, 100, 65536, 2 } };
	for (size_t t = 0; t < sizeof cs / sizeof cs[0]; t++) {
		const struct cfg *c = &cs[t];
		rk_test_rnd_seed(0x1000 + t);
		struct arr a;
		arr_make(&a, c->level, c->layout, c->chunk, c->n, cfg_msize(c), 0);
		ck_assert_int_eq(arr_open(&a), RK_OK);
		random_ops(&a, 40, a.g.stripe_data + 100000);
		read_all(&a);
		check_consistent(&a);
		rk_vol_close(a.v);
		a.v = NULL;
		a.use[3] = NULL;
		a.use[c->n - 1] = NULL;
		if (c->level == 5)
			a.use[c->n - 1] = a.mem[c->n - 1];
		ck_assert_int_eq(arr_open(&a), RK_OK);
		random_ops(&a, 20, a.g.stripe_data + 100000);
		read_all(&a);
		arr_free(&a);
	}
}
END_TEST

/* Resync makes parity and mirrors consistent with member content written
 * behind the engine's back (mkraid over old content). */
START_TEST(test_resync)
{
	for (uint32_t i = 0; i < ncfg; i++) {
		const struct cfg *c = &cfgs[i];
		if (c->level == 0 || c->level == RK_LEVEL_LINEAR)
			continue;
		rk_test_rnd_seed(0x4e5 + i);
		struct arr a;
		arr_make(&a, c->level, c->layout, c->chunk, c->n, cfg_msize(c), 0);
		for (uint32_t r = 0; r < a.n; r++)
			rk_test_fill(member_bytes(&a, r), a.g.member_size);
		ck_assert_int_eq(arr_open(&a), RK_OK);
		ck_assert_int_eq(rk_vol_resync(a.v, 0, a.g.nstripes, NULL, NULL), RK_OK);
		/* the model is what the data copies say now */
		ck_assert_int_eq(rk_vol_read(a.v, a.model, a.g.volume_size, 0), RK_OK);
		check_consistent(&a);
		ck_assert_int_eq(rk_vol_resync(a.v, a.g.nstripes, 1, NULL, NULL), RK_E_RANGE);
		arr_free(&a);
	}
}
END_TEST

START_TEST(test_bounds)
{
	struct arr a;
	arr_make(&a, 5, 2, 4096, 4, 4096 * 4, 0);
	ck_assert_int_eq(arr_open(&a), RK_OK);
	uint8_t b[16];
	ck_assert_int_eq(rk_vol_read(a.v, b, 16, a.g.volume_size - 8), RK_E_RANGE);
	ck_assert_int_eq(rk_vol_write(a.v, b, 16, UINT64_MAX - 4), RK_E_RANGE);
	ck_assert_int_eq(rk_vol_read(a.v, b, 0, a.g.volume_size), RK_OK);
	ck_assert_uint_eq(rk_vol_size(a.v), a.g.volume_size);
	rk_vol_close(a.v);
	a.v = NULL;
	/* a member too small for its data area */
	rk_dev *small;
	ck_assert_int_eq(rk_dev_mem(&small, "small", 4096), RK_OK);
	a.use[1] = small;
	ck_assert_int_eq(arr_open(&a), RK_E_SHORT);
	a.use[1] = a.mem[1];
	rk_dev_close(small);
	arr_free(&a);
}
END_TEST

/* Rebuild from members in the page cache (vol_rebuild_fast.c: survivors
 * read in staged pieces): every role of a RAID-6 of 5 and a RAID-5 of 4
 * over temporary files, rebuilt onto a memory device, equals the member's
 * data area (data, P and Q roles alike). */
START_TEST(test_rebuild_page_cache)
{
	static const struct { int32_t level; uint32_t n; } t[] = { { 6, 5 }, { 5, 4 } };
	for (size_t c = 0; c < sizeof t / sizeof t[0]; c++) {
		struct rk_geom g;
		ck_assert(rk_geom_init(&g, t[c].level, RK_ALG_LEFT_SYMMETRIC, 65536, t[c].n, 2u << 20) == RK_OK);
		char dir[] = "/tmp/test_vol.XXXXXX", path[8][64];
		ck_assert(mkdtemp(dir) != NULL);
		rk_dev *devs[8], *use[8];
		uint64_t doff[8] = { 0 };
		for (uint32_t r = 0; r < t[c].n; r++) {
			snprintf(path[r], sizeof path[r], "%s/m%u", dir, r);
			ck_assert(rk_dev_create(&devs[r], path[r], g.member_size) == RK_OK);
			use[r] = devs[r];
		}
		uint8_t *vol = malloc(g.volume_size), *want = malloc(g.member_size), *got = malloc(g.member_size);
		ck_assert(vol && want && got);
		for (uint64_t i = 0; i < g.volume_size; i++)
			vol[i] = (uint8_t)(i * 2654435761u >> 13);
		rk_vol *v;
		ck_assert(rk_vol_open(&v, &g, use, doff) == RK_OK);
		ck_assert(rk_vol_write(v, vol, g.volume_size, 0) == RK_OK);
		rk_vol_close(v);
		for (uint32_t role = 0; role < t[c].n; role++) {
			rk_dev *dst;
			ck_assert(rk_dev_mem(&dst, "dst", g.member_size) == RK_OK);
			for (uint32_t r = 0; r < t[c].n; r++)
				use[r] = r == role ? NULL : devs[r];
			ck_assert(rk_vol_open(&v, &g, use, doff) == RK_OK);
			ck_assert(rk_vol_rebuild(v, role, dst, 0, 0, g.member_size, NULL, NULL) == RK_OK);
			rk_vol_close(v);
			ck_assert(rk_dev_pread(devs[role], want, g.member_size, 0) == RK_OK);
			ck_assert(rk_dev_pread(dst, got, g.member_size, 0) == RK_OK);
			ck_assert_msg(!memcmp(want, got, g.member_size), "RAID-%d role %u rebuilt wrong", t[c].level, role);
			rk_dev_close(dst);
		}
		for (uint32_t r = 0; r < t[c].n; r++) {
			rk_dev_close(devs[r]);
			unlink(path[r]);
		}
		rmdir(dir);
		free(vol);
		free(want);
		free(got);
	}
}
END_TEST

int main(void)
{
	ncfg = configs(cfgs);
	const struct rk_test_case cases[] = {
		{ "core", 300, NULL, NULL, 0,
		  RK_TESTS(RK_TEST_LOOP(test_healthy, 0, (int)ncfg),
		           RK_TEST_LOOP(test_degraded, 0, (int)ncfg),
		           RK_TEST(test_degraded_then_second_loss), RK_TEST(test_degraded_flat), RK_TEST(test_advise_read),
		           RK_TEST(test_toofew),
		           RK_TEST(test_read_error), RK_TEST(test_write_costs), RK_TEST(test_wide),
		           RK_TEST(test_resync), RK_TEST(test_bounds), RK_TEST(test_rebuild_page_cache)) },
		RK_TEST_CASES_END,
	};
	return rk_test_main("vol", cases);
}
