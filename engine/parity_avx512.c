/* parity_avx512.c: parity kernels on 64-byte AVX-512BW vectors.  Q by
 * Horner; the doubling takes the top bits into a mask register, adds, and
 * folds the masked 0x1d and the data into one three-way XOR (VPTERNLOG).
 * Multiplication by a constant by PSHUFB nibble tables. */
#include <immintrin.h>
#include "parity_int.h"

typedef __m512i vec;
#define VW 64
#define SIMD_U 4
#define SIMD_UG 2
#define V_HORNER 1
#define SIMD_NAME avx512
#define SIMD_STR "avx512"
#define SIMD_PRIO 30

static inline vec v_load(const void *p) { return _mm512_loadu_si512(p); }
static inline void v_store(void *p, vec v) { _mm512_storeu_si512(p, v); }
static inline vec v_xor(vec a, vec b) { return _mm512_xor_si512(a, b); }
static inline vec v_or(vec a, vec b) { return _mm512_or_si512(a, b); }
static inline vec v_xor3(vec a, vec b, vec c) { return _mm512_ternarylogic_epi64(a, b, c, 0x96); }
static inline vec v_zero(void) { return _mm512_setzero_si512(); }

static inline vec v_qstep(vec q, vec x, int z)
{
	(void)z;
	__mmask64 top = _mm512_movepi8_mask(q);
	vec red = _mm512_maskz_mov_epi8(top, _mm512_set1_epi8(0x1d));
	return v_xor3(_mm512_add_epi8(q, q), red, x);
}
static inline vec v_qskip(vec q, int z)
{
	return v_qstep(q, v_zero(), z);
}

static inline vec v_qstep2(vec q, vec x1, int z1, vec x2, int z2)
{
	return v_qstep(v_qstep(q, x1, z1), x2, z2);
}

typedef struct { vec lo, hi; } mulc_t;
static inline void v_mulc_init(mulc_t *m, uint8_t c)
{
	uint8_t lo[16], hi[16];
	for (int i = 0; i < 16; i++) {
		lo[i] = rk_gf_mul(c, (uint8_t)i);
		hi[i] = rk_gf_mul(c, (uint8_t)(i << 4));
	}
	m->lo = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)lo));
	m->hi = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)hi));
}
static inline vec v_mulc(const mulc_t *m, vec x)
{
	vec f = _mm512_set1_epi8(0x0f);
	vec l = _mm512_and_si512(x, f), h = _mm512_and_si512(_mm512_srli_epi16(x, 4), f);
	return _mm512_xor_si512(_mm512_shuffle_epi8(m->lo, l), _mm512_shuffle_epi8(m->hi, h));
}

static int simd_valid(void)
{
	return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw");
}

#include "parity_simd.h"
