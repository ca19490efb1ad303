/* parity_ssse3.c: parity kernels on 16-byte SSE vectors (SSE2 for XOR and
 * the Q doubling, SSSE3 PSHUFB for multiplication by a constant). */
#include <immintrin.h>
#include "parity_int.h"

typedef __m128i vec;
#define VW 16
#define SIMD_U 4
#define SIMD_UG 4
#define V_HORNER 1
#define SIMD_NAME ssse3
#define SIMD_STR "ssse3"
#define SIMD_PRIO 10

static inline vec v_load(const void *p) { return _mm_loadu_si128((const __m128i *)p); }
static inline void v_store(void *p, vec v) { _mm_storeu_si128((__m128i *)p, v); }
static inline vec v_xor(vec a, vec b) { return _mm_xor_si128(a, b); }
static inline vec v_or(vec a, vec b) { return _mm_or_si128(a, b); }
static inline vec v_xor3(vec a, vec b, vec c) { return _mm_xor_si128(_mm_xor_si128(a, b), c); }
static inline vec v_zero(void) { return _mm_setzero_si128(); }

static inline vec v_mul2(vec q)
{
	vec m = _mm_cmpgt_epi8(_mm_setzero_si128(), q);   /* top bit set */
	return _mm_xor_si128(_mm_add_epi8(q, q), _mm_and_si128(m, _mm_set1_epi8(0x1d)));
}
static inline vec v_qstep(vec q, vec x, int z) { (void)z; return v_xor(v_mul2(q), x); }
static inline vec v_qskip(vec q, int z) { (void)z; return v_mul2(q); }

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
	m->lo = _mm_loadu_si128((const __m128i *)lo);
	m->hi = _mm_loadu_si128((const __m128i *)hi);
}
static inline vec v_mulc(const mulc_t *m, vec x)
{
	vec f = _mm_set1_epi8(0x0f);
	vec l = _mm_and_si128(x, f), h = _mm_and_si128(_mm_srli_epi16(x, 4), f);
	return _mm_xor_si128(_mm_shuffle_epi8(m->lo, l), _mm_shuffle_epi8(m->hi, h));
}

static int simd_valid(void)
{
	return __builtin_cpu_supports("ssse3");
}

#include "parity_simd.h"
