/* rk_parity.h: parity kernels (XOR P, RAID-6 P+Q over GF(2^8)).
 *
 * GF(2^8) with polynomial 0x11d and generator 2, as Linux md: for data
 * blocks D_0..D_{k-1},  P = sum D_i,  Q = sum g^i * D_i.
 * One file per variant (parity_ref.c, parity_sse2.c, parity_avx2.c,
 * parity_avx512.c, parity_gfni.c, ...), each exporting a const descriptor;
 * parity.c holds the one table and picks the best valid variant at first
 * use, or the one named by the environment variable RK_PARITY.
 * The portable reference (parity_ref.c) is always built and is the oracle.
 *
 * Pointer-array convention (as Linux raid6_call): ptrs has DISKS entries;
 * data blocks are ptrs[0 .. disks-3], P is ptrs[disks-2], Q is ptrs[disks-1].
 * For xor_gen data is ptrs[0 .. disks-2] and P is ptrs[disks-1].
 * BYTES may be any length and the buffers any alignment; kernels are
 * fastest with 64-byte aligned buffers and lengths that are multiples of 64.
 * DISKS is at most RK_PARITY_MAX_DISKS (255 data blocks + P + Q: g^i must
 * stay distinct for Q to be decodable).  Output buffers must not overlap
 * inputs; a kernel never reads the contents of the blocks it recovers.
 */
#ifndef RK_PARITY_H
#define RK_PARITY_H

#include <stddef.h>
#include <stdint.h>

#define RK_PARITY_MAX_DISKS 257

struct rk_parity_algo {
	const char *name;
	int  (*valid)(void);     /* 1 when this CPU can run it */
	int  priority;           /* higher wins among valid variants */
	/* P = XOR of data. disks >= 2 (one data block copies). */
	void (*xor_gen)(int disks, size_t bytes, void **ptrs);
	/* P and Q from data.  disks >= 3. */
	void (*gen)(int disks, size_t bytes, void **ptrs);
	/* Read-modify-write: XORs into P and Q the contribution of data blocks
	 * start..stop (inclusive) found in ptrs; other data pointers are ignored.
	 * Calling it with old data then new data updates P and Q. */
	void (*gen_partial)(int disks, int start, int stop, size_t bytes, void **ptrs);
	/* Recovers data blocks faila < failb in place from the others, P and Q. */
	void (*rec_2data)(int disks, size_t bytes, int faila, int failb, void **ptrs);
	/* Recovers data block faila and P in place from the other data and Q. */
	void (*rec_datap)(int disks, size_t bytes, int faila, void **ptrs);
	/* Checks, reading only (scrub): non-zero when the XOR of all DISKS
	 * blocks (the data and P, ptrs as xor_gen) is not zero anywhere. */
	int  (*xor_check)(int disks, size_t bytes, void **ptrs);
	/* Non-zero when P or Q (ptrs as gen) differs from the data's anywhere:
	 * gen and a compare in one pass, with no output buffers. */
	int  (*check)(int disks, size_t bytes, void **ptrs);
};

/* The variant in use (chosen once, thread-safe): rk_parity_select() of the
 * environment variable RK_PARITY. */
const struct rk_parity_algo *rk_parity(void);
/* The variant RK_PARITY=NAME selects: NULL or "" gives the valid variant of
 * highest priority; an unknown name, or one this CPU cannot run, prints a
 * line saying so on stderr and gives the best valid variant.  Never NULL. */
const struct rk_parity_algo *rk_parity_select(const char *name);
/* All compiled variants, NULL-terminated, reference first. */
const struct rk_parity_algo *const *rk_parity_algos(void);
const struct rk_parity_algo *rk_parity_find(const char *name);
extern const struct rk_parity_algo rk_parity_ref;

/* Recovers any one or two lost blocks of a RAID-6 stripe in place with
 * rk_parity(): FAILA < FAILB are indexes into ptrs (data 0..disks-3, P
 * disks-2, Q disks-1); FAILB = -1 when only FAILA is lost.  Data+data and
 * data+P use the kernels; data+Q rebuilds the data from P then Q; P and/or
 * Q alone are regenerated from the data (a lone lost P or Q leaves the
 * other parity block unchanged).  disks >= 3 (>= 4 for two lost data). */
void rk_parity_recover(int disks, size_t bytes, int faila, int failb, void **ptrs);

/* GF(2^8) arithmetic (0x11d), for scrub's error location and tests. */
uint8_t rk_gf_mul(uint8_t a, uint8_t b);
uint8_t rk_gf_inv(uint8_t a);          /* a != 0 */
uint8_t rk_gf_exp(unsigned i);         /* g^i, i taken mod 255 */
int     rk_gf_log(uint8_t a);          /* -1 for 0 */

/* ---- stripe-level kernels (as SnapRAID's raid_scan, Linux lib/raid6) ---- */

/* Fills the syndrome pointer array PTRS of one stripe, NSLOTS entries
 * (RAID-6: q_slots+2, data < q_slots, P q_slots, Q q_slots+1; RAID-4/5:
 * ndata+1, P ndata), from per-role buffers: every slot first points at
 * ZERO (a zero block: the DDF layouts' slots without a role, and missing
 * roles), then for each role r < NROLES with ROLE_BUF[r] not NULL and
 * SLOT[r] < NSLOTS (SLOT as rk_geom_stripe_map gives it), slot SLOT[r]
 * points at ROLE_BUF[r] + COL.  ZERO must hold as many bytes as the
 * kernel is then asked for. */
void rk_parity_stripe_ptrs(void **ptrs, uint32_t nslots, const uint32_t *slot, uint32_t nroles,
                           uint8_t *const *role_buf, size_t col, const uint8_t *zero);

/* Which single block of a RAID-6 stripe is bad, from the syndromes (as
 * mdadm's raid6check): P_CALC and Q_CALC are P and Q recomputed from the
 * data as stored, P and Q the stored ones, BYTES long.  Per byte, with
 * Pd = P_CALC ^ P and Qd = Q_CALC ^ Q: only Pd set names P, only Qd names Q,
 * both name data slot log(Qd) - log(Pd); when every differing byte names
 * the same block that block is the culprit, otherwise none is.  A data
 * slot at or past Q_SLOTS is not a data block: not located.  A located
 * data block's content is D ^ Pd. */
enum rk_parity_culprit {
	RK_CULPRIT_NONE = 0,      /* P and Q agree with the data */
	RK_CULPRIT_DATA,          /* *DATA_SLOT is the bad data block */
	RK_CULPRIT_P,             /* P is bad; Q agrees */
	RK_CULPRIT_Q,             /* Q is bad; P agrees */
	RK_CULPRIT_UNLOCATED,     /* no single bad block explains the syndromes */
};
enum rk_parity_culprit rk_parity_r6_locate(const uint8_t *p_calc, const uint8_t *p, const uint8_t *q_calc,
                                           const uint8_t *q, size_t bytes, uint32_t q_slots,
                                           uint32_t *data_slot);

#endif
