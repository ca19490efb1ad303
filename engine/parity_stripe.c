/* parity_stripe.c: stripe-level parity kernels: the syndrome pointer array
 * of a stripe and the RAID-6 culprit of a mismatch (see rk_parity.h). */
#include "rk_parity.h"

void rk_parity_stripe_ptrs(void **ptrs, uint32_t nslots, const uint32_t *slot, uint32_t nroles,
                           uint8_t *const *role_buf, size_t col, const uint8_t *zero)
{
	for (uint32_t k = 0; k < nslots; k++)
		ptrs[k] = (void *)(uintptr_t)zero;
	for (uint32_t r = 0; r < nroles; r++)
		if (role_buf[r] && slot[r] < nslots)
			ptrs[slot[r]] = role_buf[r] + col;
}

enum rk_parity_culprit rk_parity_r6_locate(const uint8_t *p_calc, const uint8_t *p, const uint8_t *q_calc,
                                           const uint8_t *q, size_t bytes, uint32_t q_slots,
                                           uint32_t *data_slot)
{
	enum rk_parity_culprit found = RK_CULPRIT_NONE;
	int found_slot = -1;
	for (size_t i = 0; i < bytes; i++) {
		uint8_t pd = p_calc[i] ^ p[i], qd = q_calc[i] ^ q[i];
		enum rk_parity_culprit here;
		int here_slot = -1;
		if (!pd && !qd)
			continue;
		if (pd && !qd) {
			here = RK_CULPRIT_P;
		} else if (!pd) {
			here = RK_CULPRIT_Q;
		} else {
			here = RK_CULPRIT_DATA;
			here_slot = (rk_gf_log(qd) - rk_gf_log(pd) + 255) % 255;
		}
		if (found == RK_CULPRIT_NONE) {
			found = here;
			found_slot = here_slot;
		} else if (found != here || found_slot != here_slot) {
			return RK_CULPRIT_UNLOCATED;
		}
	}
	if (found == RK_CULPRIT_DATA) {
		if ((uint32_t)found_slot >= q_slots)
			return RK_CULPRIT_UNLOCATED;
		*data_slot = (uint32_t)found_slot;
	}
	return found;
}
