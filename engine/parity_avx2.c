/* parity_avx2.c: parity kernels on 32-byte AVX2 vectors.  Q by Horner with
 * the doubling done as add + compare + masked 0x1d (Linux raid6 avx2.c);
 * multiplication by a constant by two 16-entry PSHUFB tables, one per
 * nibble (Linux recov_avx2.c). */
#include <immintrin.h>
#include "parity_int.h"

typedef __m256i vec;
#define VW 32
#define SIMD_U 4
#define SIMD_UG 4
#define V_HORNER 1
#define SIMD_NAME avx2
#define SIMD_STR "avx2"
#define SIMD_PRIO 20

static inline vec v_load(const void *p) { return _mm256_loadu_si256((const __m256i *)p); }
static inline void v_store(void *p, vec v) { _mm256_storeu_si256((__m256i *)p, v); }
static inline vec v_xor(vec a, vec b) { return _mm256_xor_si256(a, b); }
static inline vec v_or(vec a, vec b) { return _mm256_or_si256(a, b); }
static inline vec v_xor3(vec a, vec b, vec c) { return _mm256_xor_si256(_mm256_xor_si256(a, b), c); }
static inline vec v_zero(void) { return _mm256_setzero_si256(); }

static inline vec v_mul2(vec q)
{
	vec m = _mm256_cmpgt_epi8(_mm256_setzero_si256(), q);   /* top bit set */
	return _mm256_xor_si256(_mm256_add_epi8(q, q),
				_mm256_and_si256(m, _mm256_set1_epi8(0x1d)));
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
	m->lo = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)lo));
	m->hi = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)hi));
}
static inline vec v_mulc(const mulc_t *m, vec x)
{
	vec f = _mm256_set1_epi8(0x0f);
	vec l = _mm256_and_si256(x, f), h = _mm256_and_si256(_mm256_srli_epi16(x, 4), f);
	return _mm256_xor_si256(_mm256_shuffle_epi8(m->lo, l), _mm256_shuffle_epi8(m->hi, h));
}

static int simd_valid(void)
{
	return __builtin_cpu_supports("avx2");
}

#include "parity_simd.h"
