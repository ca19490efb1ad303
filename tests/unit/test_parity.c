/* test_parity.c: every parity variant against the reference and against the
 * definition (P = sum D_i, Q = sum 2^i D_i over GF(2^8)/0x11d), for lengths,
 * alignments, 1..255 data blocks and erasure pairs; GF tables; RK_PARITY. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "rk_parity.h"
#include "parity_int.h"
#include "helpers/rk_test.h"

/* Shift-and-add multiplication: independent of the library's tables. */
static uint8_t slow_mul(uint8_t a, uint8_t b)
{
	unsigned r = 0, x = a;
	for (; b; b >>= 1) {
		if (b & 1)
			r ^= x;
		x <<= 1;
		if (x & 0x100)
			x ^= 0x11d;
	}
	return (uint8_t)r;
}
static uint8_t slow_pow2(int i)
{
	uint8_t r = 1;
	while (i-- > 0)
		r = slow_mul(r, 2);
	return r;
}

/* A stripe of DISKS blocks of LEN bytes; each block starts OFF bytes past a
 * 64-byte boundary (OFF < 0: a random offset per block). */
struct stripe {
	int disks;
	size_t len;
	uint8_t *mem[RK_PARITY_MAX_DISKS];
	void *p[RK_PARITY_MAX_DISKS];
};
static struct stripe *st_new(int disks, size_t len, int off)
{
	struct stripe *s = calloc(1, sizeof(*s));
	ck_assert_ptr_nonnull(s);
	s->disks = disks;
	s->len = len;
	for (int i = 0; i < disks; i++) {
		/* The block ends where the allocation ends, so that ASan catches a
		 * kernel reading or writing past it. */
		size_t o = off < 0 ? rk_test_rnd() % 64 : (size_t)off;
		void *m = NULL;
		ck_assert_int_eq(posix_memalign(&m, 64, o + len), 0);
		s->mem[i] = m;
		s->p[i] = s->mem[i] + o;
		rk_test_fill(s->p[i], len);
	}
	return s;
}
static void st_free(struct stripe *s)
{
	for (int i = 0; i < s->disks; i++)
		free(s->mem[i]);
	free(s);
}
static uint8_t *dup_block(const void *b, size_t n)
{
	uint8_t *d = malloc(n ? n : 1);
	ck_assert_ptr_nonnull(d);
	memcpy(d, b, n);
	return d;
}

/* The variants this CPU runs. */
static const struct rk_parity_algo *const *variants(int *n)
{
	static const struct rk_parity_algo *v[32];
	const struct rk_parity_algo *const *all = rk_parity_algos();
	int k = 0;
	for (int i = 0; all[i] && k < 31; i++)
		if (all[i]->valid())
			v[k++] = all[i];
	v[k] = NULL;
	*n = k;
	return v;
}

/* Sizes covering the tail, one vector, the unrolled loop and page sizes. */
static const size_t lens[] = { 1, 7, 8, 15, 16, 31, 32, 63, 64, 65, 127, 128, 255,
	256, 257, 511, 512, 1000, 4096, 4096 + 17, 65536 };
#define NLENS (sizeof(lens) / sizeof(lens[0]))

/* P and Q computed straight from the definition, byte by byte. */
static void def_pq(const struct stripe *s, uint8_t *P, uint8_t *Q)
{
	int nd = s->disks - 2;
	for (size_t b = 0; b < s->len; b++) {
		uint8_t p = 0, q = 0;
		for (int z = 0; z < nd; z++) {
			uint8_t d = ((const uint8_t *)s->p[z])[b];
			p ^= d;
			q ^= slow_mul(slow_pow2(z % 255), d);
		}
		P[b] = p;
		Q[b] = q;
	}
}

START_TEST(gf_tables)
{
	for (unsigned a = 0; a < 256; a++)
		for (unsigned b = 0; b < 256; b++)
			ck_assert_uint_eq(rk_gf_mul((uint8_t)a, (uint8_t)b), slow_mul((uint8_t)a, (uint8_t)b));
	ck_assert_int_eq(rk_gf_log(0), -1);
	uint8_t x = 1;
	int seen[256] = { 0 };
	for (unsigned i = 0; i < 255; i++) {
		ck_assert_uint_eq(rk_gf_exp(i), x);
		ck_assert_int_eq(rk_gf_log(x), (int)i);
		ck_assert_int_eq(seen[x]++, 0);   /* 2 generates the whole group */
		x = slow_mul(x, 2);
	}
	ck_assert_uint_eq(x, 1);
	ck_assert_uint_eq(rk_gf_exp(255), 1);
	/* The GFNI matrices, applied as GF2P8AFFINEQB does (output bit i is the
	 * parity of x AND byte 7-i), multiply in this field. */
	for (unsigned c = 0; c < 256; c++) {
		uint64_t m = rk_gf_affine((uint8_t)c);
		if (c)
			ck_assert_uint_eq(m, rk_gf_affine_pow2[rk_gf_log((uint8_t)c)]);
		for (unsigned v = 0; v < 256; v++) {
			unsigned r = 0;
			for (unsigned i = 0; i < 8; i++)
				r |= (unsigned)__builtin_parity((unsigned)(m >> (8 * (7 - i)) & 0xff) & v) << i;
			ck_assert_uint_eq(r, slow_mul((uint8_t)c, (uint8_t)v));
		}
	}
	ck_assert_uint_eq(rk_gf_exp(255 + 8), 0x1d);
	for (unsigned a = 1; a < 256; a++) {
		ck_assert_uint_eq(slow_mul((uint8_t)a, rk_gf_inv((uint8_t)a)), 1);
		ck_assert_uint_eq(rk_gf_exp((unsigned)(255 - rk_gf_log((uint8_t)a))), rk_gf_inv((uint8_t)a));
	}
}
END_TEST

/* Q pinned to md's definition with hand-checked vectors:
 * column 1 is 0x80 ^ 2*0x80 ^ 8*0x80 = 0x80 ^ 0x1d ^ 0x74 = 0xe9. */
START_TEST(known_answer)
{
	uint8_t D[4][4] = { { 0x01, 0x80, 0xff, 0x00 }, { 0x01, 0x80, 0x53, 0x10 },
		{ 0x01, 0x00, 0xca, 0x20 }, { 0x01, 0x80, 0x01, 0x30 } };
	const uint8_t eP[4] = { 0x00, 0x80, 0x67, 0x00 }, eQ[4] = { 0x0f, 0xe9, 0x5e, 0x3d };
	int nv;
	const struct rk_parity_algo *const *v = variants(&nv);
	for (int i = 0; i < nv; i++) {
		uint8_t P[4], Q[4];
		void *ptrs[6] = { D[0], D[1], D[2], D[3], P, Q };
		v[i]->gen(6, 4, ptrs);
		ck_assert_msg(!memcmp(P, eP, 4), "%s: P", v[i]->name);
		ck_assert_msg(!memcmp(Q, eQ, 4), "%s: Q", v[i]->name);
	}
	/* A single byte in block 8 gives Q = g^8 = 0x1d, block 254 g^254 = 0x8e. */
	struct stripe *s = st_new(257, 100, 0);
	for (int z = 0; z < 255; z++)
		memset(s->p[z], 0, 100);
	((uint8_t *)s->p[8])[99] = 1;
	((uint8_t *)s->p[254])[0] = 1;
	for (int i = 0; i < nv; i++) {
		v[i]->gen(257, 100, s->p);
		ck_assert_uint_eq(((uint8_t *)s->p[256])[99], 0x1d);
		ck_assert_uint_eq(((uint8_t *)s->p[256])[0], 0x8e);
		ck_assert_uint_eq(((uint8_t *)s->p[255])[0], 1);
		ck_assert_uint_eq(((uint8_t *)s->p[256])[50], 0);
	}
	st_free(s);
}
END_TEST

/* The reference against the byte-by-byte definition. */
START_TEST(ref_definition)
{
	rk_test_rnd_seed(11);
	for (int disks = 3; disks <= 40; disks += 37 / 7) {
		for (size_t li = 0; li < NLENS && lens[li] <= 4096 + 17; li++) {
			struct stripe *s = st_new(disks, lens[li], -1);
			uint8_t *P = malloc(lens[li]), *Q = malloc(lens[li]);
			def_pq(s, P, Q);
			rk_parity_ref.gen(disks, lens[li], s->p);
			ck_assert(!memcmp(P, s->p[disks - 2], lens[li]));
			ck_assert(!memcmp(Q, s->p[disks - 1], lens[li]));
			rk_parity_ref.xor_gen(disks - 1, lens[li], s->p);
			ck_assert(!memcmp(P, s->p[disks - 2], lens[li]));
			free(P);
			free(Q);
			st_free(s);
		}
	}
	/* 255 data blocks: g^i wraps nowhere. */
	struct stripe *s = st_new(257, 300, -1);
	uint8_t *P = malloc(300), *Q = malloc(300);
	def_pq(s, P, Q);
	rk_parity_ref.gen(257, 300, s->p);
	ck_assert(!memcmp(P, s->p[255], 300));
	ck_assert(!memcmp(Q, s->p[256], 300));
	free(P);
	free(Q);
	st_free(s);
}
END_TEST

/* One variant's xor_gen and gen against the reference on one stripe. */
static void cmp_gen(const struct rk_parity_algo *a, struct stripe *s)
{
	int d = s->disks;
	size_t n = s->len;
	rk_parity_ref.gen(d, n, s->p);
	uint8_t *P = dup_block(s->p[d - 2], n), *Q = dup_block(s->p[d - 1], n);
	rk_test_fill(s->p[d - 2], n);
	rk_test_fill(s->p[d - 1], n);
	a->gen(d, n, s->p);
	ck_assert_msg(!memcmp(P, s->p[d - 2], n), "%s gen P disks %d len %zu", a->name, d, n);
	ck_assert_msg(!memcmp(Q, s->p[d - 1], n), "%s gen Q disks %d len %zu", a->name, d, n);
	/* xor_gen over the data (and the P slot as destination). */
	rk_test_fill(s->p[d - 2], n);
	a->xor_gen(d - 1, n, s->p);
	ck_assert_msg(!memcmp(P, s->p[d - 2], n), "%s xor_gen disks %d len %zu", a->name, d - 1, n);
	/* xor_gen with every block but the last as data. */
	rk_parity_ref.xor_gen(d, n, s->p);
	memcpy(Q, s->p[d - 1], n);
	rk_test_fill(s->p[d - 1], n);
	a->xor_gen(d, n, s->p);
	ck_assert_msg(!memcmp(Q, s->p[d - 1], n), "%s xor_gen disks %d len %zu", a->name, d, n);
	free(P);
	free(Q);
}

START_TEST(gen_lengths)
{
	int nv;
	const struct rk_parity_algo *const *v = variants(&nv);
	rk_test_rnd_seed(22);
	for (int i = 0; i < nv; i++)
		for (size_t li = 0; li < NLENS; li++)
			for (int disks = 3; disks <= 12; disks += 3) {
				struct stripe *s = st_new(disks, lens[li], li & 1 ? -1 : 0);
				cmp_gen(v[i], s);
				st_free(s);
			}
	for (int r = 0; r < 40; r++) {
		size_t n = 1 + rk_test_rnd() % 20000;
		int disks = 3 + (int)(rk_test_rnd() % 30);
		struct stripe *s = st_new(disks, n, -1);
		for (int i = 0; i < nv; i++)
			cmp_gen(v[i], s);
		st_free(s);
	}
}
END_TEST

START_TEST(gen_alignments)
{
	int nv;
	const struct rk_parity_algo *const *v = variants(&nv);
	rk_test_rnd_seed(33);
	for (int off = 1; off < 64; off++)
		for (int i = 0; i < nv; i++) {
			struct stripe *s = st_new(7, 4096 + 17, off);
			cmp_gen(v[i], s);
			st_free(s);
			s = st_new(5, 300 + (size_t)off, -1);
			cmp_gen(v[i], s);
			st_free(s);
		}
}
END_TEST

START_TEST(gen_disks)
{
	int nv;
	const struct rk_parity_algo *const *v = variants(&nv);
	rk_test_rnd_seed(44);
	for (int disks = 3; disks <= RK_PARITY_MAX_DISKS; disks += disks < 40 ? 1 : 11) {
		struct stripe *s = st_new(disks, 64 * 5 + 9, -1);
		for (int i = 0; i < nv; i++)
			cmp_gen(v[i], s);
		st_free(s);
	}
	struct stripe *s = st_new(RK_PARITY_MAX_DISKS, 4096 + 17, -1);
	for (int i = 0; i < nv; i++)
		cmp_gen(v[i], s);
	st_free(s);
}
END_TEST

/* Read-modify-write: P/Q of the old data, minus old blocks start..stop, plus
 * the new ones, equal P/Q regenerated from the new data.  The pointers
 * outside start..stop are NULL, so a kernel reading them crashes. */
static void check_partial(const struct rk_parity_algo *a, struct stripe *s, int start, int stop)
{
	int d = s->disks;
	size_t n = s->len;
	void *t[RK_PARITY_MAX_DISKS];
	rk_parity_ref.gen(d, n, s->p);
	for (int i = 0; i < d; i++)
		t[i] = (i >= start && i <= stop) || i >= d - 2 ? s->p[i] : NULL;
	a->gen_partial(d, start, stop, n, t);            /* remove old */
	for (int i = start; i <= stop; i++)
		rk_test_fill(s->p[i], n);
	a->gen_partial(d, start, stop, n, t);            /* add new */
	uint8_t *P = dup_block(s->p[d - 2], n), *Q = dup_block(s->p[d - 1], n);
	rk_parity_ref.gen(d, n, s->p);
	ck_assert_msg(!memcmp(P, s->p[d - 2], n), "%s partial P disks %d %d..%d len %zu",
		      a->name, d, start, stop, n);
	ck_assert_msg(!memcmp(Q, s->p[d - 1], n), "%s partial Q disks %d %d..%d len %zu",
		      a->name, d, start, stop, n);
	free(P);
	free(Q);
}

START_TEST(gen_partial)
{
	int nv;
	const struct rk_parity_algo *const *v = variants(&nv);
	rk_test_rnd_seed(55);
	for (int i = 0; i < nv; i++) {
		for (int disks = 3; disks <= 10; disks++)
			for (int a = 0; a < disks - 2; a++)
				for (int b = a; b < disks - 2; b++) {
					struct stripe *s = st_new(disks, 64 * 9 + 13, -1);
					check_partial(v[i], s, a, b);
					st_free(s);
				}
		for (size_t li = 0; li < NLENS; li++) {
			struct stripe *s = st_new(8, lens[li], -1);
			check_partial(v[i], s, (int)(rk_test_rnd() % 6), 5);
			st_free(s);
		}
		struct stripe *s = st_new(RK_PARITY_MAX_DISKS, 1000, -1);
		check_partial(v[i], s, 0, 254);
		check_partial(v[i], s, 254, 254);
		check_partial(v[i], s, 100, 200);
		st_free(s);
	}
}
END_TEST

/* Loses data blocks x < y (garbage written over them), recovers, compares
 * with the original. */
static void check_rec2(const struct rk_parity_algo *a, struct stripe *s, int x, int y)
{
	size_t n = s->len;
	uint8_t *X = dup_block(s->p[x], n), *Y = dup_block(s->p[y], n);
	rk_test_fill(s->p[x], n);
	rk_test_fill(s->p[y], n);
	a->rec_2data(s->disks, n, x, y, s->p);
	ck_assert_msg(!memcmp(X, s->p[x], n), "%s rec_2data disks %d (%d,%d) len %zu: x",
		      a->name, s->disks, x, y, n);
	ck_assert_msg(!memcmp(Y, s->p[y], n), "%s rec_2data disks %d (%d,%d) len %zu: y",
		      a->name, s->disks, x, y, n);
	free(X);
	free(Y);
}
static void check_recp(const struct rk_parity_algo *a, struct stripe *s, int x)
{
	size_t n = s->len;
	int d = s->disks;
	uint8_t *X = dup_block(s->p[x], n), *P = dup_block(s->p[d - 2], n);
	rk_test_fill(s->p[x], n);
	rk_test_fill(s->p[d - 2], n);
	a->rec_datap(d, n, x, s->p);
	ck_assert_msg(!memcmp(X, s->p[x], n), "%s rec_datap disks %d %d len %zu: data",
		      a->name, d, x, n);
	ck_assert_msg(!memcmp(P, s->p[d - 2], n), "%s rec_datap disks %d %d len %zu: P",
		      a->name, d, x, n);
	free(X);
	free(P);
}

/* Every pair for k = 2..32 data blocks. */
START_TEST(rec_pairs_small)
{
	int nv;
	const struct rk_parity_algo *const *v = variants(&nv);
	rk_test_rnd_seed(66);
	for (int k = 1; k <= 32; k++) {
		struct stripe *s = st_new(k + 2, 64 * 5 + 17, -1);
		rk_parity_ref.gen(k + 2, s->len, s->p);
		for (int i = 0; i < nv; i++) {
			for (int x = 0; x < k; x++) {
				for (int y = x + 1; y < k; y++)
					check_rec2(v[i], s, x, y);
				check_recp(v[i], s, x);
			}
		}
		st_free(s);
	}
}
END_TEST

/* k up to 255: sampled pairs, including the ends. */
START_TEST(rec_pairs_large)
{
	int nv;
	const struct rk_parity_algo *const *v = variants(&nv);
	rk_test_rnd_seed(77);
	for (int k = 33; k <= 255; k += k < 64 ? 7 : 37) {
		struct stripe *s = st_new(k + 2, 64 * 4 + 5, -1);
		rk_parity_ref.gen(k + 2, s->len, s->p);
		for (int i = 0; i < nv; i++) {
			check_rec2(v[i], s, 0, 1);
			check_rec2(v[i], s, 0, k - 1);
			check_rec2(v[i], s, k - 2, k - 1);
			check_recp(v[i], s, 0);
			check_recp(v[i], s, k - 1);
			for (int r = 0; r < 12; r++) {
				int x = (int)(rk_test_rnd() % (unsigned)k), y = (int)(rk_test_rnd() % (unsigned)k);
				if (x == y)
					continue;
				check_rec2(v[i], s, x < y ? x : y, x < y ? y : x);
				check_recp(v[i], s, x);
			}
		}
		st_free(s);
	}
	/* 255 data blocks: every data block with P, and pairs with the last. */
	struct stripe *s = st_new(257, 130, -1);
	rk_parity_ref.gen(257, s->len, s->p);
	for (int i = 0; i < nv; i++)
		for (int x = 0; x < 255; x++) {
			check_recp(v[i], s, x);
			if (x < 254)
				check_rec2(v[i], s, x, 254);
		}
	st_free(s);
}
END_TEST

START_TEST(rec_lengths)
{
	int nv;
	const struct rk_parity_algo *const *v = variants(&nv);
	rk_test_rnd_seed(88);
	for (size_t li = 0; li < NLENS; li++) {
		for (int off = 0; off < 2; off++) {
			struct stripe *s = st_new(10, lens[li], off ? -1 : 0);
			rk_parity_ref.gen(10, s->len, s->p);
			for (int i = 0; i < nv; i++) {
				check_rec2(v[i], s, 0, 7);
				check_rec2(v[i], s, 3, 4);
				check_recp(v[i], s, 5);
				check_recp(v[i], s, 0);
			}
			st_free(s);
		}
	}
	for (int off = 1; off < 64; off++) {
		struct stripe *s = st_new(6, 1024 + 33, off);
		rk_parity_ref.gen(6, s->len, s->p);
		for (int i = 0; i < nv; i++) {
			check_rec2(v[i], s, 1, 3);
			check_recp(v[i], s, 2);
		}
		st_free(s);
	}
	for (int r = 0; r < 30; r++) {
		int k = 2 + (int)(rk_test_rnd() % 20);
		struct stripe *s = st_new(k + 2, 1 + rk_test_rnd() % 20000, -1);
		rk_parity_ref.gen(k + 2, s->len, s->p);
		for (int i = 0; i < nv; i++) {
			int x = (int)(rk_test_rnd() % (unsigned)(k - 1));
			check_rec2(v[i], s, x, x + 1 + (int)(rk_test_rnd() % (unsigned)(k - 1 - x)));
			check_recp(v[i], s, (int)(rk_test_rnd() % (unsigned)k));
		}
		st_free(s);
	}
}
END_TEST

/* rk_parity_recover: every one or two lost blocks, P and Q included. */
START_TEST(recover_any)
{
	rk_test_rnd_seed(99);
	for (int k = 1; k <= 9; k++) {
		int d = k + 2;
		struct stripe *s = st_new(d, 64 * 3 + 11, -1);
		rk_parity_ref.gen(d, s->len, s->p);
		uint8_t *orig[RK_PARITY_MAX_DISKS];
		for (int i = 0; i < d; i++)
			orig[i] = dup_block(s->p[i], s->len);
		for (int a = 0; a < d; a++)
			for (int b = a; b < d; b++) {
				if (b > a && a < k && b < k && k < 2)
					continue;
				rk_test_fill(s->p[a], s->len);
				if (b > a)
					rk_test_fill(s->p[b], s->len);
				rk_parity_recover(d, s->len, a, b > a ? b : -1, s->p);
				for (int i = 0; i < d; i++)
					ck_assert_msg(!memcmp(orig[i], s->p[i], s->len),
						      "recover k %d lost %d,%d: block %d", k, a, b, i);
			}
		/* A lone lost Q leaves P as it is (even when P is wrong). */
		rk_test_fill(s->p[d - 2], s->len);
		uint8_t *badp = dup_block(s->p[d - 2], s->len);
		rk_parity_recover(d, s->len, d - 1, -1, s->p);
		ck_assert(!memcmp(badp, s->p[d - 2], s->len));
		ck_assert(!memcmp(orig[d - 1], s->p[d - 1], s->len));
		free(badp);
		for (int i = 0; i < d; i++)
			free(orig[i]);
		st_free(s);
	}
}
END_TEST

/* Runs rk_parity() in a fresh child with RK_PARITY=NAME; returns the chosen
 * name in out and what was said on stderr in err. */
static void run_override(const char *name, char *out, size_t on, char *err, size_t en)
{
	int po[2], pe[2];
	ck_assert_int_eq(pipe(po), 0);
	ck_assert_int_eq(pipe(pe), 0);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		dup2(pe[1], 2);
		if (name)
			setenv("RK_PARITY", name, 1);
		else
			unsetenv("RK_PARITY");
		const char *n = rk_parity()->name;
		ssize_t w = write(po[1], n, strlen(n));
		_exit(w == (ssize_t)strlen(n) ? 0 : 1);
	}
	close(po[1]);
	close(pe[1]);
	ssize_t r = read(po[0], out, on - 1);
	out[r > 0 ? r : 0] = 0;
	size_t got = 0;
	while (got < en - 1 && (r = read(pe[0], err + got, en - 1 - got)) > 0)
		got += (size_t)r;
	err[got] = 0;
	int st;
	waitpid(pid, &st, 0);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	close(po[0]);
	close(pe[0]);
}

START_TEST(override)
{
	const struct rk_parity_algo *const *all = rk_parity_algos();
	const struct rk_parity_algo *b = rk_parity_select(NULL);
	char out[64], err[512];
	ck_assert_ptr_eq(all[0], &rk_parity_ref);
	ck_assert(b->valid());
	for (int i = 0; all[i]; i++) {
		ck_assert_ptr_eq(rk_parity_find(all[i]->name), all[i]);
		if (all[i]->valid())
			ck_assert_int_le(all[i]->priority, b->priority);
	}
	ck_assert_ptr_eq(rk_parity_select(""), b);
	/* Each runnable variant can be forced. */
	for (int i = 0; all[i]; i++) {
		if (!all[i]->valid()) {
			run_override(all[i]->name, out, sizeof(out), err, sizeof(err));
			ck_assert_str_eq(out, b->name);
			ck_assert_ptr_nonnull(strstr(err, "cannot run"));
			continue;
		}
		ck_assert_ptr_eq(rk_parity_select(all[i]->name), all[i]);
		run_override(all[i]->name, out, sizeof(out), err, sizeof(err));
		ck_assert_str_eq(out, all[i]->name);
		ck_assert_str_eq(err, "");
	}
	run_override(NULL, out, sizeof(out), err, sizeof(err));
	ck_assert_str_eq(out, b->name);
	ck_assert_str_eq(err, "");
	/* An unknown name: a message naming it, then the best. */
	run_override("nosuch", out, sizeof(out), err, sizeof(err));
	ck_assert_str_eq(out, b->name);
	ck_assert_ptr_nonnull(strstr(err, "RK_PARITY=nosuch"));
	ck_assert_ptr_null(rk_parity_find("nosuch"));
}
END_TEST

/* Which variants this CPU cannot run (a SKIP line each). */
START_TEST(variants_present)
{
	const struct rk_parity_algo *const *all = rk_parity_algos();
	int n = 0;
	for (int i = 0; all[i]; i++, n++)
		if (!all[i]->valid())
			printf("SKIP: parity variant %s: this CPU lacks its instructions\n", all[i]->name);
	ck_assert_int_ge(n, 1);
	fflush(stdout);
}
END_TEST

RK_TEST_SUITE("parity", { "parity", 300, NULL, NULL, 0,
	  RK_TESTS(RK_TEST(variants_present), RK_TEST(gf_tables), RK_TEST(known_answer),
	           RK_TEST(ref_definition), RK_TEST(gen_lengths), RK_TEST(gen_alignments),
	           RK_TEST(gen_disks), RK_TEST(gen_partial), RK_TEST(rec_pairs_small),
	           RK_TEST(rec_pairs_large), RK_TEST(rec_lengths), RK_TEST(recover_any),
	           RK_TEST(override)) })
