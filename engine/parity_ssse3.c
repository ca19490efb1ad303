/* parity_ssse3.c: parity kernels on 16-byte SSE vectors (SSE2 for XOR and
 * the Q doubling, SSSE3 PSHUFB for multiplication by a constant). */
#include <immintrin.h>

typedef __m128i vec;
#define VW 16
#define SIMD_U 4
#define SIMD_UG 4
#define V_HORNER 1
#define SIMD_NAME ssse3
#define SIMD_STR "ssse3"
#define SIMD_PRIO 10
#define SIMD_MM _mm
#define SIMD_SI si128
#define SIMD_DOUBLING SIMD_DOUBLING_CMPGT
#define SIMD_BCAST128(x) (x)
#include "parity_simd_ops.h"

static int simd_valid(void)
{
	return __builtin_cpu_supports("ssse3");
}

#include "parity_simd.h"
