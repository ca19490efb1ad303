/* parity_ref.c: the portable reference parity kernels, the oracle for every
 * SIMD variant.  Works column by column, 8 bytes at a time as packed bytes
 * in a uint64 (Linux lib/raid6 int.uc), with the last short column of a
 * block handled by the same code on a zero-padded word.  Obviously correct
 * first, fast second. */
#include <string.h>
#include "parity_int.h"

#define W 8u

/* Loads / stores the N (1..8) bytes at p as the low bytes of a word; the
 * padding reads as zero and is never stored. */
static inline uint64_t ldn(const void *p, size_t n)
{
	uint64_t v = 0;
	memcpy(&v, p, n);
	return v;
}
static inline void stn(void *p, uint64_t v, size_t n)
{
	memcpy(p, &v, n);
}

/* Each byte multiplied by g = 2: shift left, and reduce by 0x1d the bytes
 * whose top bit fell off.  m is 0xff in those bytes, 0 elsewhere. */
static inline uint64_t mul2(uint64_t v)
{
	uint64_t hi = v & 0x8080808080808080ull;
	uint64_t m = (hi << 1) - (hi >> 7);
	return ((v << 1) & 0xfefefefefefefefeull) ^ (m & 0x1d1d1d1d1d1d1d1dull);
}

/* Each byte looked up in the 256-entry table of a multiplication. */
static inline uint64_t mulc(uint64_t v, const uint8_t *t)
{
	uint64_t r = 0;
	for (unsigned b = 0; b < 64; b += 8)
		r |= (uint64_t)t[(v >> b) & 0xff] << b;
	return r;
}

static void mul_table(uint8_t c, uint8_t *t)
{
	for (unsigned i = 0; i < 256; i++)
		t[i] = rk_gf_mul(c, (uint8_t)i);
}

#define B(i) ((uint8_t *)ptrs[i] + o)

void rk_ref_xor_at(int disks, size_t off, size_t len, void **ptrs)
{
	int nd = disks - 1;
	for (size_t o = off; o < off + len; o += W) {
		size_t n = off + len - o < W ? off + len - o : W;
		uint64_t p = 0;
		for (int z = 0; z < nd; z++)
			p ^= ldn(B(z), n);
		stn(B(nd), p, n);
	}
}

/* P and Q of the N bytes (at most a word) at O of data blocks 0..nd-1:
 * Horner from the highest block down, Q = sum g^z D_z. */
static inline void pq_word(int nd, size_t o, size_t n, void **ptrs, uint64_t *pp, uint64_t *qq)
{
	uint64_t p = 0, q = 0;
	for (int z = nd - 1; z >= 0; z--) {
		uint64_t d = ldn(B(z), n);
		p ^= d;
		q = mul2(q) ^ d;
	}
	*pp = p;
	*qq = q;
}

void rk_ref_gen_at(int disks, size_t off, size_t len, void **ptrs)
{
	int nd = disks - 2;
	for (size_t o = off; o < off + len; o += W) {
		size_t n = off + len - o < W ? off + len - o : W;
		uint64_t p, q;
		pq_word(nd, o, n, ptrs, &p, &q);
		stn(B(nd), p, n);
		stn(B(nd + 1), q, n);
	}
}

void rk_ref_partial_at(int disks, int start, int stop, size_t off, size_t len, void **ptrs)
{
	int nd = disks - 2;
	for (size_t o = off; o < off + len; o += W) {
		size_t n = off + len - o < W ? off + len - o : W;
		uint64_t p = 0, q = 0;
		for (int z = stop; z >= start; z--) {
			uint64_t d = ldn(B(z), n);
			p ^= d;
			q = mul2(q) ^ d;
		}
		for (int z = start - 1; z >= 0; z--)   /* times g^start */
			q = mul2(q);
		stn(B(nd), ldn(B(nd), n) ^ p, n);
		stn(B(nd + 1), ldn(B(nd + 1), n) ^ q, n);
	}
}

void rk_ref_rec2_at(int disks, size_t off, size_t len, int faila, int failb, void **ptrs)
{
	int nd = disks - 2;
	uint8_t cp, cq, tp[256], tq[256];
	rk_rec2_consts(faila, failb, &cp, &cq);
	mul_table(cp, tp);
	mul_table(cq, tq);
	for (size_t o = off; o < off + len; o += W) {
		size_t n = off + len - o < W ? off + len - o : W;
		uint64_t p = 0, q = 0;
		/* Syndromes of the survivors: the lost blocks count as zero. */
		for (int z = nd - 1; z >= 0; z--) {
			uint64_t d = (z == faila || z == failb) ? 0 : ldn(B(z), n);
			p ^= d;
			q = mul2(q) ^ d;
		}
		uint64_t dp = p ^ ldn(B(nd), n), dq = q ^ ldn(B(nd + 1), n);
		uint64_t dx = mulc(dp, tp) ^ mulc(dq, tq);
		stn(B(faila), dx, n);
		stn(B(failb), dp ^ dx, n);
	}
}

void rk_ref_recp_at(int disks, size_t off, size_t len, int faila, void **ptrs)
{
	int nd = disks - 2;
	uint8_t t[256];
	/* Q ^ Q' = g^x Dx, so Dx = g^-x (Q ^ Q'). */
	mul_table(rk_gf_inv(rk_gf_exp((unsigned)faila)), t);
	for (size_t o = off; o < off + len; o += W) {
		size_t n = off + len - o < W ? off + len - o : W;
		uint64_t p = 0, q = 0;
		for (int z = nd - 1; z >= 0; z--) {
			uint64_t d = z == faila ? 0 : ldn(B(z), n);
			p ^= d;
			q = mul2(q) ^ d;
		}
		uint64_t dx = mulc(q ^ ldn(B(nd + 1), n), t);
		stn(B(faila), dx, n);
		stn(B(nd), p ^ dx, n);
	}
}

int rk_ref_xor_check_at(int disks, size_t off, size_t len, void **ptrs)
{
	uint64_t acc = 0;
	for (size_t o = off; o < off + len; o += W) {
		size_t n = off + len - o < W ? off + len - o : W;
		uint64_t p = 0;
		for (int z = 0; z < disks; z++)
			p ^= ldn(B(z), n);
		acc |= p;
	}
	return acc != 0;
}

int rk_ref_check_at(int disks, size_t off, size_t len, void **ptrs)
{
	int nd = disks - 2;
	uint64_t acc = 0;
	for (size_t o = off; o < off + len; o += W) {
		size_t n = off + len - o < W ? off + len - o : W;
		uint64_t p, q;
		pq_word(nd, o, n, ptrs, &p, &q);
		acc |= (p ^ ldn(B(nd), n)) | (q ^ ldn(B(nd + 1), n));
	}
	return acc != 0;
}

static void ref_xor_gen(int disks, size_t bytes, void **ptrs)
{
	rk_ref_xor_at(disks, 0, bytes, ptrs);
}
static void ref_gen(int disks, size_t bytes, void **ptrs)
{
	rk_ref_gen_at(disks, 0, bytes, ptrs);
}
static void ref_partial(int disks, int start, int stop, size_t bytes, void **ptrs)
{
	rk_ref_partial_at(disks, start, stop, 0, bytes, ptrs);
}
static void ref_rec2(int disks, size_t bytes, int faila, int failb, void **ptrs)
{
	rk_ref_rec2_at(disks, 0, bytes, faila, failb, ptrs);
}
static void ref_recp(int disks, size_t bytes, int faila, void **ptrs)
{
	rk_ref_recp_at(disks, 0, bytes, faila, ptrs);
}
static int ref_xor_check(int disks, size_t bytes, void **ptrs)
{
	return rk_ref_xor_check_at(disks, 0, bytes, ptrs);
}
static int ref_check(int disks, size_t bytes, void **ptrs)
{
	return rk_ref_check_at(disks, 0, bytes, ptrs);
}
static int ref_valid(void)
{
	return 1;
}

const struct rk_parity_algo rk_parity_ref = {
	.name = "ref", .valid = ref_valid, .priority = 0,
	.xor_gen = ref_xor_gen, .gen = ref_gen, .gen_partial = ref_partial,
	.rec_2data = ref_rec2, .rec_datap = ref_recp,
	.xor_check = ref_xor_check, .check = ref_check,
};
