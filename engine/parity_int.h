/* parity_int.h: what the parity variants share inside libraidkit (not
 * installed).  The reference kernels on a byte range [off, off+len) of every
 * block, so a SIMD variant hands its unaligned tail to the oracle. */
#ifndef RK_PARITY_INT_H
#define RK_PARITY_INT_H

#include <stddef.h>
#include <stdint.h>
#include "rk_parity.h"

void rk_ref_xor_at(int disks, size_t off, size_t len, void **ptrs);
void rk_ref_gen_at(int disks, size_t off, size_t len, void **ptrs);
void rk_ref_partial_at(int disks, int start, int stop, size_t off, size_t len, void **ptrs);
void rk_ref_rec2_at(int disks, size_t off, size_t len, int faila, int failb, void **ptrs);
void rk_ref_recp_at(int disks, size_t off, size_t len, int faila, void **ptrs);
/* Non-zero when the range fails the check (see xor_check, check). */
int  rk_ref_xor_check_at(int disks, size_t off, size_t len, void **ptrs);
int  rk_ref_check_at(int disks, size_t off, size_t len, void **ptrs);

/* Constants of the two-erasure solution: with dp = P ^ P', dq = Q ^ Q' (P', Q'
 * the syndromes of the surviving data), Dx = cp*dp ^ cq*dq and Dy = dp ^ Dx. */
void rk_rec2_consts(int faila, int failb, uint8_t *cp, uint8_t *cq);

/* The 8x8 bit matrix for GF2P8AFFINEQB that multiplies a byte by C in
 * GF(2^8)/0x11d (GF2P8MULB uses 0x11b, the AES field, so it cannot). */
uint64_t rk_gf_affine(uint8_t c);
/* rk_gf_affine(g^i) for i = 0..254. */
extern const uint64_t rk_gf_affine_pow2[255];

/* Variants compiled in this build (parity_<isa>.c). */
extern const struct rk_parity_algo rk_parity_ssse3;
extern const struct rk_parity_algo rk_parity_avx2;
extern const struct rk_parity_algo rk_parity_avx512;
extern const struct rk_parity_algo rk_parity_gfni;

#endif
