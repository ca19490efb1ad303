/* parity_avx512.c: parity kernels on 64-byte AVX-512BW vectors.  Q by
 * Horner; the doubling takes the top bits into a mask register, adds, and
 * folds the masked 0x1d and the data into one three-way XOR (VPTERNLOG).
 * Multiplication by a constant by PSHUFB nibble tables. */
#include <immintrin.h>

typedef __m512i vec;
#define VW 64
#define SIMD_U 4
#define SIMD_UG 2
#define V_HORNER 1
#define SIMD_NAME avx512
#define SIMD_STR "avx512"
#define SIMD_PRIO 30
#define SIMD_MM _mm512
#define SIMD_SI si512
#define SIMD_TERNLOG 1
#define SIMD_DOUBLING SIMD_DOUBLING_MASK
#define SIMD_BCAST128(x) _mm512_broadcast_i32x4(x)
#include "parity_simd_ops.h"

static int simd_valid(void)
{
	return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw");
}

#include "parity_simd.h"
