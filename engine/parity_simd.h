/* parity_simd.h: the parity kernels written once over a vector type, and
 * included by each SIMD variant file (parity_ssse3.c, parity_avx2.c, ...)
 * after it has defined:
 *
 *   SIMD_NAME, SIMD_PRIO      suffix of the descriptor rk_parity_<NAME>, priority
 *   vec, VW                   the vector type and its width in bytes
 *   SIMD_U, SIMD_UG           columns of VW bytes per unrolled step in the
 *                             recovery / partial kernels and in xor / gen
 *   G_QSTEP, G_QSTEP2         (optional) the Q steps gen uses, if not v_qstep*
 *   V_HORNER                  1: Q by Horner (q = q*2 ^ D_z, from the top);
 *                             0: q ^= g^z * D_z (v_qstep multiplies)
 *   v_load v_store v_xor v_or v_xor3 v_zero
 *   v_qstep(q, x, z)          q after taking in data x of block z
 *   v_qstep2(q, x1, z1, x2, z2)  q after data x1 of block z1, then x2 of z2 = z1-1
 *   v_qskip(q, z)             q after a block z that counts as zero
 *   mulc_t, v_mulc_init(m, c), v_mulc(m, x)   multiplication by a constant
 *   simd_valid()
 *
 * Every kernel walks the blocks column by column (SIMD_U vectors per block
 * held in registers), so each input byte is read once and each output byte
 * written once; recovery is a single pass too.  Whole vectors use unaligned
 * loads; the last bytes (< VW) go to the reference kernels.  The kernels
 * read the block pointers from a local copy (d), which the compiler knows no
 * store into a block can change. */
#ifndef SIMD_NAME
#error "parity_simd.h is included by a variant file"
#endif

#include "parity_int.h"

#define SIMD_CAT2(a, b) a##b
#define SIMD_CAT(a, b) SIMD_CAT2(a, b)
#define INL static inline __attribute__((always_inline))
#define BLK(i) (d[i] + o)
#define UNROLL _Pragma("GCC unroll 16")
#ifndef G_QSTEP
#define G_QSTEP v_qstep
#define G_QSTEP2 v_qstep2
#endif
#define SIMD_UMAX (SIMD_U > SIMD_UG ? SIMD_U : SIMD_UG)

/* P[] = the XOR of blocks 0..n-1 (xor_gen, xor_check). */
INL void xor_sum_cols(int n, uint8_t *const *d, size_t o, int U, vec *p)
{
	UNROLL for (int u = 0; u < U; u++)
		p[u] = v_load(BLK(0) + u * VW);
	int z = 1;
	for (; z + 1 < n; z += 2)
		UNROLL for (int u = 0; u < U; u++)
			p[u] = v_xor3(p[u], v_load(BLK(z) + u * VW), v_load(BLK(z + 1) + u * VW));
	if (z < n)
		UNROLL for (int u = 0; u < U; u++)
			p[u] = v_xor(p[u], v_load(BLK(z) + u * VW));
}

INL void xor_cols(int nd, uint8_t *const *d, size_t o, int U)
{
	vec p[SIMD_UMAX];
	xor_sum_cols(nd, d, o, U, p);
	UNROLL for (int u = 0; u < U; u++)
		v_store(BLK(nd) + u * VW, p[u]);
}

/* The local copy of the block pointers. */
#define COPY_PTRS(n)                                \
	uint8_t *d[RK_PARITY_MAX_DISKS];            \
	for (int i_ = 0; i_ < (n); i_++)            \
		d[i_] = (uint8_t *)ptrs[i_]

/* The body of a generating kernel: COLS over whole vectors of ND data
 * blocks (SIMD_UG columns at a time, then one); the last bytes (< VW) go
 * to the reference kernel REF. */
#define GENERATE_WHOLE_VECTORS(cols, nd, ref)                        \
	size_t o = 0;                                                \
	COPY_PTRS(disks);                                            \
	for (; o + SIMD_UG * VW <= bytes; o += SIMD_UG * VW)         \
		cols(nd, d, o, SIMD_UG);                             \
	for (; o + VW <= bytes; o += VW)                             \
		cols(nd, d, o, 1);                                   \
	if (o < bytes)                                               \
		ref(disks, o, bytes - o, ptrs)

static void s_xor_gen(int disks, size_t bytes, void **ptrs)
{
	GENERATE_WHOLE_VECTORS(xor_cols, disks - 1, rk_ref_xor_at);
}

/* P and Q of blocks start..stop (skipping fa and fb, which count as zero)
 * into p[] and q[]; for Horner q still lacks the factor g^start.  Blocks
 * go two at a time where neither is lost (three-way XORs). */
INL void pq_cols(uint8_t *const *d, size_t o, int U, int start, int stop, int fa, int fb,
		 vec *p, vec *q)
{
	UNROLL for (int u = 0; u < U; u++)
		p[u] = q[u] = v_zero();
	int z = stop;
	while (z >= start) {
		if (z == fa || z == fb) {
			UNROLL for (int u = 0; u < U; u++)
				q[u] = v_qskip(q[u], z);
			z--;
		} else if (z > start && z - 1 != fa && z - 1 != fb) {
			UNROLL for (int u = 0; u < U; u++) {
				vec x1 = v_load(BLK(z) + u * VW), x2 = v_load(BLK(z - 1) + u * VW);
				p[u] = v_xor3(p[u], x1, x2);
				q[u] = v_qstep2(q[u], x1, z, x2, z - 1);
			}
			z -= 2;
		} else {
			UNROLL for (int u = 0; u < U; u++) {
				vec x = v_load(BLK(z) + u * VW);
				p[u] = v_xor(p[u], x);
				q[u] = v_qstep(q[u], x, z);
			}
			z--;
		}
	}
}

/* P[] and Q[] of data blocks 0..nd-1 (gen, check). */
INL void gen_pq_cols(int nd, uint8_t *const *d, size_t o, int U, vec *p, vec *q)
{
	/* The top block starts both sums (Horner: q = D_top; else its product). */
	UNROLL for (int u = 0; u < U; u++) {
		vec x = v_load(BLK(nd - 1) + u * VW);
		p[u] = x;
		q[u] = G_QSTEP(v_zero(), x, nd - 1);
	}
	int z = nd - 2;
	for (; z >= 1; z -= 2)
		UNROLL for (int u = 0; u < U; u++) {
			vec x1 = v_load(BLK(z) + u * VW), x2 = v_load(BLK(z - 1) + u * VW);
			p[u] = v_xor3(p[u], x1, x2);
			q[u] = G_QSTEP2(q[u], x1, z, x2, z - 1);
		}
	if (z == 0)
		UNROLL for (int u = 0; u < U; u++) {
			vec x = v_load(BLK(0) + u * VW);
			p[u] = v_xor(p[u], x);
			q[u] = G_QSTEP(q[u], x, 0);
		}
}

INL void gen_cols(int nd, uint8_t *const *d, size_t o, int U)
{
	vec p[SIMD_UMAX], q[SIMD_UMAX];
	gen_pq_cols(nd, d, o, U, p, q);
	UNROLL for (int u = 0; u < U; u++) {
		v_store(BLK(nd) + u * VW, p[u]);
		v_store(BLK(nd + 1) + u * VW, q[u]);
	}
}

static void s_gen(int disks, size_t bytes, void **ptrs)
{
	GENERATE_WHOLE_VECTORS(gen_cols, disks - 2, rk_ref_gen_at);
}

/* Whether any byte of the vectors is non-zero (once per call: a store). */
INL int any_set(const vec *acc, int U)
{
	vec a = acc[0];
	for (int u = 1; u < U; u++)
		a = v_or(a, acc[u]);
	uint64_t w[VW / 8], r = 0;
	v_store(w, a);
	for (unsigned i = 0; i < VW / 8; i++)
		r |= w[i];
	return r != 0;
}

/* The XOR of every block (data and P) ORed into acc. */
INL void xchk_cols(int disks, uint8_t *const *d, size_t o, int U, vec *acc)
{
	vec p[SIMD_UMAX];
	xor_sum_cols(disks, d, o, U, p);
	UNROLL for (int u = 0; u < U; u++)
		acc[u] = v_or(acc[u], p[u]);
}

/* The body of a checking kernel: COLS over whole vectors of ND blocks,
 * the differences ORed into acc; the last bytes (< VW) go to the reference
 * check REF when the vectors found none. */
#define CHECK_WHOLE_VECTORS(cols, nd, ref)                           \
	vec acc[SIMD_UMAX];                                          \
	size_t o = 0;                                                \
	COPY_PTRS(disks);                                            \
	UNROLL for (int u = 0; u < SIMD_UMAX; u++)                   \
		acc[u] = v_zero();                                   \
	for (; o + SIMD_UG * VW <= bytes; o += SIMD_UG * VW)         \
		cols(nd, d, o, SIMD_UG, acc);                        \
	for (; o + VW <= bytes; o += VW)                             \
		cols(nd, d, o, 1, acc);                              \
	if (any_set(acc, SIMD_UMAX))                                 \
		return 1;                                            \
	return o < bytes ? ref(disks, o, bytes - o, ptrs) : 0

static int s_xor_check(int disks, size_t bytes, void **ptrs)
{
	CHECK_WHOLE_VECTORS(xchk_cols, disks, rk_ref_xor_check_at);
}

/* gen_cols with the results compared to the stored P and Q instead of
 * stored: the differences ORed into acc. */
INL void chk_cols(int nd, uint8_t *const *d, size_t o, int U, vec *acc)
{
	vec p[SIMD_UMAX], q[SIMD_UMAX];
	gen_pq_cols(nd, d, o, U, p, q);
	UNROLL for (int u = 0; u < U; u++)
		acc[u] = v_or(acc[u], v_or(v_xor(p[u], v_load(BLK(nd) + u * VW)),
		                           v_xor(q[u], v_load(BLK(nd + 1) + u * VW))));
}

static int s_check(int disks, size_t bytes, void **ptrs)
{
	CHECK_WHOLE_VECTORS(chk_cols, disks - 2, rk_ref_check_at);
}

INL void partial_cols(int nd, int start, int stop, uint8_t *const *d, size_t o, int U,
		      const mulc_t *gs)
{
	vec p[SIMD_UMAX], q[SIMD_UMAX];
	pq_cols(d, o, U, start, stop, -1, -1, p, q);
	UNROLL for (int u = 0; u < U; u++) {
		if (V_HORNER && start)
			q[u] = v_mulc(gs, q[u]);
		v_store(BLK(nd) + u * VW, v_xor(p[u], v_load(BLK(nd) + u * VW)));
		v_store(BLK(nd + 1) + u * VW, v_xor(q[u], v_load(BLK(nd + 1) + u * VW)));
	}
}

static void s_partial(int disks, int start, int stop, size_t bytes, void **ptrs)
{
	mulc_t gs;
	size_t o = 0;
	uint8_t *d[RK_PARITY_MAX_DISKS] = { 0 };
	/* Only start..stop, P and Q: the other pointers may be anything. */
	for (int i = start; i <= stop; i++)
		d[i] = (uint8_t *)ptrs[i];
	d[disks - 2] = (uint8_t *)ptrs[disks - 2];
	d[disks - 1] = (uint8_t *)ptrs[disks - 1];
	v_mulc_init(&gs, rk_gf_exp((unsigned)start));
	for (; o + SIMD_U * VW <= bytes; o += SIMD_U * VW)
		partial_cols(disks - 2, start, stop, d, o, SIMD_U, &gs);
	for (; o + VW <= bytes; o += VW)
		partial_cols(disks - 2, start, stop, d, o, 1, &gs);
	if (o < bytes)
		rk_ref_partial_at(disks, start, stop, o, bytes - o, ptrs);
}

INL void rec2_cols(int nd, int fa, int fb, uint8_t *const *d, size_t o, int U,
		   const mulc_t *mp, const mulc_t *mq)
{
	vec p[SIMD_UMAX], q[SIMD_UMAX];
	pq_cols(d, o, U, 0, nd - 1, fa, fb, p, q);
	UNROLL for (int u = 0; u < U; u++) {
		vec dp = v_xor(p[u], v_load(BLK(nd) + u * VW));
		vec dq = v_xor(q[u], v_load(BLK(nd + 1) + u * VW));
		vec dx = v_xor(v_mulc(mp, dp), v_mulc(mq, dq));
		v_store(BLK(fa) + u * VW, dx);
		v_store(BLK(fb) + u * VW, v_xor(dp, dx));
	}
}

static void s_rec2(int disks, size_t bytes, int fa, int fb, void **ptrs)
{
	mulc_t mp, mq;
	uint8_t cp, cq;
	size_t o = 0;
	COPY_PTRS(disks);
	rk_rec2_consts(fa, fb, &cp, &cq);
	v_mulc_init(&mp, cp);
	v_mulc_init(&mq, cq);
	for (; o + SIMD_U * VW <= bytes; o += SIMD_U * VW)
		rec2_cols(disks - 2, fa, fb, d, o, SIMD_U, &mp, &mq);
	for (; o + VW <= bytes; o += VW)
		rec2_cols(disks - 2, fa, fb, d, o, 1, &mp, &mq);
	if (o < bytes)
		rk_ref_rec2_at(disks, o, bytes - o, fa, fb, ptrs);
}

INL void recp_cols(int nd, int fa, uint8_t *const *d, size_t o, int U, const mulc_t *mx)
{
	vec p[SIMD_UMAX], q[SIMD_UMAX];
	pq_cols(d, o, U, 0, nd - 1, fa, -1, p, q);
	UNROLL for (int u = 0; u < U; u++) {
		vec dx = v_mulc(mx, v_xor(q[u], v_load(BLK(nd + 1) + u * VW)));
		v_store(BLK(fa) + u * VW, dx);
		v_store(BLK(nd) + u * VW, v_xor(p[u], dx));
	}
}

static void s_recp(int disks, size_t bytes, int fa, void **ptrs)
{
	mulc_t mx;
	size_t o = 0;
	COPY_PTRS(disks);
	v_mulc_init(&mx, rk_gf_inv(rk_gf_exp((unsigned)fa)));
	for (; o + SIMD_U * VW <= bytes; o += SIMD_U * VW)
		recp_cols(disks - 2, fa, d, o, SIMD_U, &mx);
	for (; o + VW <= bytes; o += VW)
		recp_cols(disks - 2, fa, d, o, 1, &mx);
	if (o < bytes)
		rk_ref_recp_at(disks, o, bytes - o, fa, ptrs);
}

const struct rk_parity_algo SIMD_CAT(rk_parity_, SIMD_NAME) = {
	.name = SIMD_STR, .valid = simd_valid, .priority = SIMD_PRIO,
	.xor_gen = s_xor_gen, .gen = s_gen, .gen_partial = s_partial,
	.rec_2data = s_rec2, .rec_datap = s_recp,
	.xor_check = s_xor_check, .check = s_check,
};
