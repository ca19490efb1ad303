/* test_resize_power_cut.c: reshapes (RAID-6 +1, RAID-5 +2) cut at sampled
 * writes by a power cut, read mid-reshape through rk_array and resumed with
 * rk_resize_continue. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rk_array.h"
#include "rk_dev.h"
#include "rk_geom.h"
#include "rk_resize.h"
#include "rk_sb.h"
#include "rk_vol.h"
#include "helpers/resize_cases.h"
#include "helpers/rk_test.h"

/* Points per reshape: under the sanitizers (several times slower) a sixth. */
#ifdef __SANITIZE_ADDRESS__
#define CUT_POINTS 10
#else
#define CUT_POINTS 60
#endif

START_TEST(t_power_cut)
{
	const struct rs_case *c = &rs_cases[_i == 0 ? 2 : 1];   /* RAID-6 +1, RAID-5 +2 */
	struct resize_interruption run = { .member_size = 3u << 20, .batch = 256 * 1024 };
	uint64_t total = 0;
	struct rk_fault_spec sp = { .model = RK_FAULT_NONE };
	resize_interrupted(c, &sp, &run, &total);
	uint64_t step = total / CUT_POINTS + 1;
	for (uint64_t n = 0; n < total; n += step) {
		sp.model = RK_FAULT_POWER_CUT;
		sp.n = n;
		sp.seed = n * 7 + 1;
		resize_interrupted(c, &sp, &run, NULL);
	}
	fprintf(stderr, "resize: power cuts at %llu points\n", (unsigned long long)run.points);
}
END_TEST

RK_TEST_SUITE("resize_power_cut", { "power cut", 1200, NULL, NULL, 0, RK_TESTS(RK_TEST_LOOP(t_power_cut, 0, 2)) })
