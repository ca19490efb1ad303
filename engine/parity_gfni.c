/* parity_gfni.c: parity kernels on 64-byte AVX-512 vectors with GFNI.
 * GF2P8AFFINEQB multiplies 64 bytes by any constant of GF(2^8)/0x11d in one
 * instruction (an 8x8 bit matrix, broadcast from memory), so Q is summed as
 * q ^= g^z * D_z with no Horner dependency chain in the recovery kernels,
 * and the two-erasure solution costs two multiplications per vector. */
#include <immintrin.h>

typedef __m512i vec;
#define VW 64
#define SIMD_U 4
#define SIMD_UG 2
#define V_HORNER 0
#define SIMD_NAME gfni
#define SIMD_STR "gfni"
#define SIMD_PRIO 40

#define SIMD_MM _mm512
#define SIMD_SI si512
#define SIMD_TERNLOG 1
#include "parity_simd_ops.h"

static inline vec mulpow(vec x, int z)
{
	return _mm512_gf2p8affine_epi64_epi8(x, _mm512_set1_epi64((long long)rk_gf_affine_pow2[z]), 0);
}
static inline vec v_qstep(vec q, vec x, int z)
{
	return z ? v_xor(q, mulpow(x, z)) : v_xor(q, x);   /* g^0 = 1 */
}
static inline vec v_qstep2(vec q, vec x1, int z1, vec x2, int z2)
{
	return v_xor3(q, mulpow(x1, z1), mulpow(x2, z2));
}
static inline vec v_qskip(vec q, int z)
{
	(void)z;
	return q;
}

/* gen is faster by Horner with the AVX-512BW doubling (measured: the
 * products cost more there than the dependency chain). */
static inline vec h_step(vec q, vec x, int z)
{
	(void)z;
	return mask_horner_step(q, x);
}
static inline vec h_step2(vec q, vec x1, int z1, vec x2, int z2)
{
	return h_step(h_step(q, x1, z1), x2, z2);
}
#define G_QSTEP h_step
#define G_QSTEP2 h_step2

typedef struct { vec m; } mulc_t;
static inline void v_mulc_init(mulc_t *m, uint8_t c)
{
	m->m = _mm512_set1_epi64((long long)rk_gf_affine(c));
}
static inline vec v_mulc(const mulc_t *m, vec x)
{
	return _mm512_gf2p8affine_epi64_epi8(x, m->m, 0);
}

static int simd_valid(void)
{
	return __builtin_cpu_supports("gfni") && __builtin_cpu_supports("avx512f") &&
	       __builtin_cpu_supports("avx512bw");
}

#include "parity_simd.h"
