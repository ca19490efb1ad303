/* parity_simd_ops.h: the vector operations of parity_simd.h written once
 * for the x86 variants, whose intrinsics differ only in their prefix and
 * width (_mm_xor_si128, _mm256_xor_si256, _mm512_xor_si512).  A variant
 * file defines, then includes this before parity_simd.h:
 *
 *   vec, SIMD_MM, SIMD_SI     the vector type, the intrinsics' prefix
 *                             (_mm, _mm256, _mm512) and integer suffix
 *                             (si128, si256, si512)
 *   SIMD_TERNLOG              (optional) three-way XOR by VPTERNLOG
 *   SIMD_BCAST128(x)          (optional) broadcast of a 128-bit lane: the
 *                             PSHUFB nibble tables for mulc_t
 *   SIMD_DOUBLING             (optional) Q doubling (Horner variants, V_HORNER 1):
 *                             SIMD_DOUBLING_CMPGT (add, compare, masked
 *                             0x1d; Linux raid6 sse2/avx2) or
 *                             SIMD_DOUBLING_MASK (top bits to a mask
 *                             register, AVX-512BW); the mask step is also
 *                             there as mask_horner_step for variants that
 *                             are not Horner elsewhere. */
#ifndef RK_PARITY_SIMD_OPS_H
#define RK_PARITY_SIMD_OPS_H

#include <immintrin.h>
#include "parity_int.h"

#define SIMD_PASTE3(a, b, c) a##b##c
#define SIMD_FN3(a, b, c) SIMD_PASTE3(a, b, c)
#define SIMD_FN(op) SIMD_FN3(SIMD_MM, op, SIMD_SI)     /* SIMD_FN(_xor_) = _mm256_xor_si256 */
#define SIMD_FN8(op) SIMD_FN3(SIMD_MM, op, )           /* SIMD_FN8(_add_epi8) = _mm256_add_epi8 */

#define SIMD_DOUBLING_NONE 0
#define SIMD_DOUBLING_CMPGT 1
#define SIMD_DOUBLING_MASK 2
#ifndef SIMD_DOUBLING
#define SIMD_DOUBLING SIMD_DOUBLING_NONE
#endif

static inline vec v_load(const void *p) { return SIMD_FN(_loadu_)((const vec *)p); }
static inline void v_store(void *p, vec v) { SIMD_FN(_storeu_)((vec *)p, v); }
static inline vec v_xor(vec a, vec b) { return SIMD_FN(_xor_)(a, b); }
static inline vec v_or(vec a, vec b) { return SIMD_FN(_or_)(a, b); }
static inline vec v_zero(void) { return SIMD_FN(_setzero_)(); }
#ifdef SIMD_TERNLOG
static inline vec v_xor3(vec a, vec b, vec c) { return _mm512_ternarylogic_epi64(a, b, c, 0x96); }
#else
static inline vec v_xor3(vec a, vec b, vec c) { return v_xor(v_xor(a, b), c); }
#endif

#if SIMD_DOUBLING == SIMD_DOUBLING_CMPGT
static inline vec v_mul2(vec q)
{
	vec top = SIMD_FN8(_cmpgt_epi8)(v_zero(), q);   /* top bit set */
	return v_xor(SIMD_FN8(_add_epi8)(q, q), SIMD_FN(_and_)(top, SIMD_FN8(_set1_epi8)(0x1d)));
}
static inline vec v_qstep(vec q, vec x, int z) { (void)z; return v_xor(v_mul2(q), x); }
static inline vec v_qskip(vec q, int z) { (void)z; return v_mul2(q); }
#endif

#ifdef SIMD_TERNLOG
/* q*2 ^ x: the top bits into a mask register, the masked 0x1d and the data
 * folded into one three-way XOR. */
static inline vec mask_horner_step(vec q, vec x)
{
	__mmask64 top = _mm512_movepi8_mask(q);
	vec red = _mm512_maskz_mov_epi8(top, _mm512_set1_epi8(0x1d));
	return v_xor3(_mm512_add_epi8(q, q), red, x);
}
#endif

#if SIMD_DOUBLING == SIMD_DOUBLING_MASK
static inline vec v_qstep(vec q, vec x, int z) { (void)z; return mask_horner_step(q, x); }
static inline vec v_qskip(vec q, int z) { (void)z; return mask_horner_step(q, v_zero()); }
#endif

#if SIMD_DOUBLING != SIMD_DOUBLING_NONE
static inline vec v_qstep2(vec q, vec x1, int z1, vec x2, int z2)
{
	return v_qstep(v_qstep(q, x1, z1), x2, z2);
}
#endif

#ifdef SIMD_BCAST128
/* Multiplication by a constant by two 16-entry PSHUFB tables, one per
 * nibble (Linux recov_ssse3.c / recov_avx2.c). */
typedef struct { vec lo, hi; } mulc_t;
static inline void v_mulc_init(mulc_t *m, uint8_t c)
{
	uint8_t lo[16], hi[16];
	for (int i = 0; i < 16; i++) {
		lo[i] = rk_gf_mul(c, (uint8_t)i);
		hi[i] = rk_gf_mul(c, (uint8_t)(i << 4));
	}
	m->lo = SIMD_BCAST128(_mm_loadu_si128((const __m128i *)lo));
	m->hi = SIMD_BCAST128(_mm_loadu_si128((const __m128i *)hi));
}
static inline vec v_mulc(const mulc_t *m, vec x)
{
	vec f = SIMD_FN8(_set1_epi8)(0x0f);
	vec l = SIMD_FN(_and_)(x, f), h = SIMD_FN(_and_)(SIMD_FN8(_srli_epi16)(x, 4), f);
	return v_xor(SIMD_FN8(_shuffle_epi8)(m->lo, l), SIMD_FN8(_shuffle_epi8)(m->hi, h));
}
#endif

#endif
