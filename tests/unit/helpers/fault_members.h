/* fault_members.h: three memory members behind fault-injecting devices
 * sharing one plan, for the device-layer fault suites (test_dev_fault.c,
 * test_dev_power_cut.c). */
#ifndef FAULT_MEMBERS_H
#define FAULT_MEMBERS_H

#include <stdint.h>

#include "rk_dev.h"

#define FAULT_MEMBERS 3
#define FAULT_MEMBER_SIZE (64u << 10)

struct fault_members {
	rk_fault_plan *plan;
	rk_dev *wrapped[FAULT_MEMBERS];   /* the fault devices */
	rk_dev *lower[FAULT_MEMBERS];     /* the memory devices under them (owned by wrapped) */
};

/* Creates the plan of MODEL (N, MEMBER, SEED as in struct rk_fault_spec)
 * and members mem0, mem1, mem2 of FAULT_MEMBER_SIZE bytes under it. */
void fault_members_open(struct fault_members *a, enum rk_fault_model model, uint64_t n, int member,
                        uint64_t seed);
/* Frees the plan and closes every member. */
void fault_members_close(struct fault_members *a);

#endif
