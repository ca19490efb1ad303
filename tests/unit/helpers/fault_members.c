/* fault_members.c: see fault_members.h. */
#include "fault_members.h"

#include <stdio.h>

#include "rk_test.h"

void fault_members_open(struct fault_members *a, enum rk_fault_model model, uint64_t n, int member,
                        uint64_t seed)
{
	struct rk_fault_spec s = { .model = model, .n = n, .member = member, .seed = seed };
	ck_assert_int_eq(rk_fault_plan_create(&a->plan, &s), RK_OK);
	for (int i = 0; i < FAULT_MEMBERS; i++) {
		char name[16];
		snprintf(name, sizeof name, "mem%d", i);
		ck_assert_int_eq(rk_dev_mem(&a->lower[i], name, FAULT_MEMBER_SIZE), RK_OK);
		ck_assert_int_eq(rk_dev_fault(&a->wrapped[i], a->lower[i], a->plan, i), RK_OK);
		ck_assert_str_eq(rk_dev_path(a->wrapped[i]), name);
	}
}

void fault_members_close(struct fault_members *a)
{
	rk_fault_plan_free(a->plan);
	for (int i = 0; i < FAULT_MEMBERS; i++)
		rk_dev_close(a->wrapped[i]);
}
