/* test_parity_stripe.c: the stripe-level parity kernels (rk_parity.h):
 * rk_parity_stripe_ptrs against the definition of P and Q over the roles
 * rk_geom_stripe gives (coefficients g^i, or g^role for the DDF layouts),
 * and rk_parity_r6_locate against a brute-force reference (try every block
 * as the bad one, rebuild it from the rest, keep the one that makes the
 * stripe consistent), over random stripes of every RAID-6 layout, one
 * corrupted block at a time. */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include "rk_geom.h"
#include "rk_parity.h"
#include "helpers/rk_test.h"

#define SECTOR 512u
#define COL 64u            /* column offset the pointers are built at */
#define MAXR 12u


static void fill(uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)(rk_test_rnd() >> 32);
}

static const uint32_t r6_layouts[] = {
	RK_ALG_LEFT_ASYMMETRIC, RK_ALG_RIGHT_ASYMMETRIC, RK_ALG_LEFT_SYMMETRIC, RK_ALG_RIGHT_SYMMETRIC,
	RK_ALG_PARITY_0, RK_ALG_PARITY_N, RK_ALG_ROTATING_ZERO_RESTART, RK_ALG_ROTATING_N_RESTART,
	RK_ALG_ROTATING_N_CONTINUE, RK_ALG_LEFT_ASYMMETRIC_6, RK_ALG_RIGHT_ASYMMETRIC_6, RK_ALG_LEFT_SYMMETRIC_6,
	RK_ALG_RIGHT_SYMMETRIC_6, RK_ALG_PARITY_0_6,
};
#define NLAYOUTS (sizeof r6_layouts / sizeof r6_layouts[0])

/* One stripe: a buffer per role (COL bytes of lead-in, then a sector). */
struct stripe {
	struct rk_geom g;
	uint64_t s;
	uint32_t vol_role[MAXR], slot[MAXR], data_role[MAXR];
	struct rk_stripe_map m;
	struct rk_stripe_roles sr;
	uint8_t buf[MAXR][COL + SECTOR];
	uint8_t *role_buf[MAXR];
	uint8_t zero[COL + SECTOR];
};

static void stripe_init(struct stripe *st, int32_t level, uint32_t layout, uint32_t nroles)
{
	memset(st, 0, sizeof *st);
	ck_assert_int_eq(rk_geom_init(&st->g, level, layout, 4096, nroles, 64 * 4096), RK_OK);
	st->s = rk_test_rnd() % st->g.nstripes;
	st->m = (struct rk_stripe_map){ .vol_role = st->vol_role, .slot = st->slot };
	st->sr = (struct rk_stripe_roles){ .data_role = st->data_role };
	ck_assert_int_eq(rk_geom_stripe_map(&st->g, st->s, &st->m), RK_OK);
	ck_assert_int_eq(rk_geom_stripe(&st->g, st->s, &st->sr), RK_OK);
	for (uint32_t r = 0; r < nroles; r++) {
		fill(st->buf[r], sizeof st->buf[r]);
		st->role_buf[r] = st->buf[r];
	}
}

static uint32_t nslots_of(const struct rk_geom *g)
{
	return g->level == 6 ? g->q_slots + 2 : g->ndata + 1;
}

/* The coefficient exponent of data block i of the stripe (rk_geom.h). */
static unsigned coefficient(const struct stripe *st, uint32_t i)
{
	uint32_t l = st->g.layout;
	int ddf = l == RK_ALG_ROTATING_ZERO_RESTART || l == RK_ALG_ROTATING_N_RESTART || l == RK_ALG_ROTATING_N_CONTINUE;
	return ddf ? st->data_role[i] : i;
}

/* P and Q of the stripe by the definition. */
static void reference_pq(const struct stripe *st, uint8_t *p, uint8_t *q)
{
	memset(p, 0, SECTOR);
	memset(q, 0, SECTOR);
	for (uint32_t i = 0; i < st->g.ndata; i++) {
		const uint8_t *d = st->buf[st->data_role[i]] + COL;
		uint8_t c = rk_gf_exp(coefficient(st, i));
		for (size_t b = 0; b < SECTOR; b++) {
			p[b] ^= d[b];
			q[b] ^= rk_gf_mul(c, d[b]);
		}
	}
}

START_TEST(ptrs_match_definition)
{
	for (uint32_t li = 0; li < NLAYOUTS; li++)
		for (uint32_t n = 4; n <= 8; n++)
			for (int rep = 0; rep < 8; rep++) {
				struct stripe st;
				stripe_init(&st, 6, r6_layouts[li], n);
				void *ptrs[MAXR + 2];
				uint32_t ns = nslots_of(&st.g);
				rk_parity_stripe_ptrs(ptrs, ns, st.slot, n, st.role_buf, COL, st.zero);
				for (uint32_t k = 0; k < ns; k++)
					ck_assert_ptr_nonnull(ptrs[k]);
				ck_assert_ptr_eq(ptrs[st.g.q_slots], st.buf[st.m.p_role] + COL);
				ck_assert_ptr_eq(ptrs[st.g.q_slots + 1], st.buf[st.m.q_role] + COL);
				rk_parity()->gen((int)ns, SECTOR, ptrs);
				uint8_t p[SECTOR], q[SECTOR];
				reference_pq(&st, p, q);
				ck_assert_msg(!memcmp(p, st.buf[st.m.p_role] + COL, SECTOR), "layout %u n %u: P", r6_layouts[li], n);
				ck_assert_msg(!memcmp(q, st.buf[st.m.q_role] + COL, SECTOR), "layout %u n %u: Q", r6_layouts[li], n);
			}
}
END_TEST

START_TEST(ptrs_raid5_and_missing)
{
	for (uint32_t layout = RK_ALG_LEFT_ASYMMETRIC; layout <= RK_ALG_PARITY_N; layout++)
		for (uint32_t n = 3; n <= 7; n++) {
			struct stripe st;
			stripe_init(&st, 5, layout, n);
			void *ptrs[MAXR + 2];
			uint32_t ns = nslots_of(&st.g);
			/* a missing data role keeps the zero block: P is the others' XOR */
			uint32_t gone = st.vol_role[rk_test_rnd() % st.g.ndata];
			st.role_buf[gone] = NULL;
			rk_parity_stripe_ptrs(ptrs, ns, st.slot, n, st.role_buf, COL, st.zero);
			ck_assert_ptr_eq(ptrs[st.slot[gone]], st.zero);
			rk_parity()->xor_gen((int)ns, SECTOR, ptrs);
			uint8_t p[SECTOR];
			memset(p, 0, SECTOR);
			for (uint32_t j = 0; j < st.g.ndata; j++)
				if (st.vol_role[j] != gone)
					for (size_t b = 0; b < SECTOR; b++)
						p[b] ^= st.buf[st.vol_role[j]][COL + b];
			ck_assert(!memcmp(p, st.buf[st.m.p_role] + COL, SECTOR));
		}
}
END_TEST

/* Recomputes P and Q of the stripe's data as stored into PC and QC. */
static void recompute(struct stripe *st, uint8_t *pc, uint8_t *qc)
{
	void *ptrs[MAXR + 2];
	uint32_t ns = nslots_of(&st->g);
	rk_parity_stripe_ptrs(ptrs, ns, st->slot, st->g.nroles, st->role_buf, COL, st->zero);
	ptrs[st->g.q_slots] = pc;
	ptrs[st->g.q_slots + 1] = qc;
	rk_parity_ref.gen((int)ns, SECTOR, ptrs);
}

/* Brute force: the slot whose block, rebuilt from the others, makes the
 * stripe consistent; -1 when none or several do. */
static int brute_force_culprit(struct stripe *st)
{
	int found = -1, count = 0;
	uint8_t pc[SECTOR], qc[SECTOR], saved[SECTOR];
	for (uint32_t r = 0; r < st->g.nroles; r++) {
		uint8_t *blk = st->buf[r] + COL;
		memcpy(saved, blk, SECTOR);
		if (r == st->m.p_role || r == st->m.q_role) {
			recompute(st, pc, qc);
			memcpy(blk, r == st->m.p_role ? pc : qc, SECTOR);
		} else {
			/* rebuild the data block from P and the other data */
			memset(blk, 0, SECTOR);
			recompute(st, pc, qc);
			for (size_t b = 0; b < SECTOR; b++)
				blk[b] = pc[b] ^ st->buf[st->m.p_role][COL + b];
		}
		recompute(st, pc, qc);
		int consistent = !memcmp(pc, st->buf[st->m.p_role] + COL, SECTOR) &&
		                 !memcmp(qc, st->buf[st->m.q_role] + COL, SECTOR);
		memcpy(blk, saved, SECTOR);
		if (consistent) {
			found = (int)st->slot[r];
			count++;
		}
	}
	return count == 1 ? found : -1;
}

/* Corrupts some bytes (or all) of role R's sector. */
static void corrupt(struct stripe *st, uint32_t r)
{
	uint8_t *blk = st->buf[r] + COL;
	int all = rk_test_rnd() % 4 == 0;
	size_t nbytes = all ? SECTOR : 1 + rk_test_rnd() % 16;
	for (size_t i = 0; i < nbytes; i++) {
		uint8_t x = (uint8_t)(1 + rk_test_rnd() % 255);
		blk[all ? i : rk_test_rnd() % SECTOR] ^= x;
	}
}

static enum rk_parity_culprit locate(struct stripe *st, uint32_t *slot)
{
	uint8_t pc[SECTOR], qc[SECTOR];
	recompute(st, pc, qc);
	return rk_parity_r6_locate(pc, st->buf[st->m.p_role] + COL, qc, st->buf[st->m.q_role] + COL, SECTOR,
	                           st->g.q_slots, slot);
}

START_TEST(locate_one_bad_block)
{
	for (uint32_t li = 0; li < NLAYOUTS; li++)
		for (uint32_t n = 4; n <= 8; n++)
			for (int rep = 0; rep < 3; rep++) {
				struct stripe st;
				stripe_init(&st, 6, r6_layouts[li], n);
				uint8_t pc[SECTOR], qc[SECTOR];
				recompute(&st, pc, qc);
				memcpy(st.buf[st.m.p_role] + COL, pc, SECTOR);
				memcpy(st.buf[st.m.q_role] + COL, qc, SECTOR);
				uint32_t slot = UINT32_MAX;
				ck_assert_int_eq(locate(&st, &slot), RK_CULPRIT_NONE);
				for (uint32_t r = 0; r < n; r++) {
					uint8_t keep[SECTOR];
					memcpy(keep, st.buf[r] + COL, SECTOR);
					corrupt(&st, r);
					int ref = brute_force_culprit(&st);
					ck_assert_int_eq(ref, (int)st.slot[r]);
					enum rk_parity_culprit c = locate(&st, &slot);
					if ((uint32_t)ref == st.g.q_slots) {
						ck_assert_int_eq(c, RK_CULPRIT_P);
					} else if ((uint32_t)ref == st.g.q_slots + 1) {
						ck_assert_int_eq(c, RK_CULPRIT_Q);
					} else {
						ck_assert_msg(c == RK_CULPRIT_DATA, "layout %u n %u role %u: verdict %d",
						              r6_layouts[li], n, r, (int)c);
						ck_assert_uint_eq(slot, (uint32_t)ref);
					}
					memcpy(st.buf[r] + COL, keep, SECTOR);
				}
			}
}
END_TEST

START_TEST(locate_two_bad_blocks)
{
	int unlocated = 0;
	for (uint32_t li = 0; li < NLAYOUTS; li++)
		for (uint32_t n = 4; n <= 8; n++) {
			struct stripe st;
			stripe_init(&st, 6, r6_layouts[li], n);
			uint8_t pc[SECTOR], qc[SECTOR];
			recompute(&st, pc, qc);
			memcpy(st.buf[st.m.p_role] + COL, pc, SECTOR);
			memcpy(st.buf[st.m.q_role] + COL, qc, SECTOR);
			uint32_t a = st.vol_role[0], b = st.vol_role[1];
			for (size_t i = 0; i < SECTOR; i++) {
				st.buf[a][COL + i] ^= (uint8_t)(1 + rk_test_rnd() % 255);
				st.buf[b][COL + i] ^= (uint8_t)(1 + rk_test_rnd() % 255);
			}
			uint32_t slot;
			int ref = brute_force_culprit(&st);
			enum rk_parity_culprit c = locate(&st, &slot);
			if (ref < 0) {
				ck_assert_int_eq(c, RK_CULPRIT_UNLOCATED);
				unlocated++;
			}
		}
	ck_assert_int_gt(unlocated, 0);
}
END_TEST

START_TEST(locate_slot_past_q_slots)
{
	/* every byte names data slot 5, but only 4 data slots exist */
	uint8_t pc[8], p[8], qc[8], q[8];
	for (int i = 0; i < 8; i++) {
		uint8_t pd = (uint8_t)(i + 1);
		p[i] = 0;
		pc[i] = pd;
		q[i] = 0;
		qc[i] = rk_gf_mul(rk_gf_exp(5), pd);
	}
	uint32_t slot = 77;
	ck_assert_int_eq(rk_parity_r6_locate(pc, p, qc, q, 8, 6, &slot), RK_CULPRIT_DATA);
	ck_assert_uint_eq(slot, 5);
	ck_assert_int_eq(rk_parity_r6_locate(pc, p, qc, q, 8, 4, &slot), RK_CULPRIT_UNLOCATED);
}
END_TEST

RK_TEST_SUITE("parity_stripe", { "parity_stripe", 300, NULL, NULL, 0,
	  RK_TESTS(RK_TEST(ptrs_match_definition),
	           RK_TEST(ptrs_raid5_and_missing),
	           RK_TEST(locate_one_bad_block),
	           RK_TEST(locate_two_bad_blocks),
	           RK_TEST(locate_slot_past_q_slots)) })
