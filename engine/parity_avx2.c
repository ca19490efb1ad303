/* parity_avx2.c: parity kernels on 32-byte AVX2 vectors.  Q by Horner with
 * the doubling done as add + compare + masked 0x1d (Linux raid6 avx2.c);
 * multiplication by a constant by two 16-entry PSHUFB tables, one per
 * nibble (Linux recov_avx2.c). */
#include <immintrin.h>

typedef __m256i vec;
#define VW 32
#define SIMD_U 4
#define SIMD_UG 4
#define V_HORNER 1
#define SIMD_NAME avx2
#define SIMD_STR "avx2"
#define SIMD_PRIO 20
#define SIMD_MM _mm256
#define SIMD_SI si256
#define SIMD_DOUBLING SIMD_DOUBLING_CMPGT
#define SIMD_BCAST128(x) _mm256_broadcastsi128_si256(x)
#include "parity_simd_ops.h"

static int simd_valid(void)
{
	return __builtin_cpu_supports("avx2");
}

#include "parity_simd.h"
