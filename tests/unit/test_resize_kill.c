/* test_resize_kill.c: reshapes (RAID-5 +1, 5 -> 6, 0 -> 5, RAID-10 n2 4 -> 5)
 * killed at every write, read mid-reshape through rk_array and resumed with
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

START_TEST(t_kill_every_write)
{
	static const int cases[] = { 0, 4, 5, RS_R10 };   /* RAID-5 +1, 5 -> 6, 0 -> 5, RAID-10 n2 4 -> 5 */
	const struct rs_case *c = &rs_cases[cases[_i]];
	/* RAID-10: a smaller volume, as many batches */
	struct resize_interruption run = { .member_size = c->level == 10 ? 2u << 20 : 3u << 20, .journal = _i == 1,
	                                   .batch = 256 * 1024 };
	uint64_t total = 0;
	struct rk_fault_spec sp = { .model = RK_FAULT_NONE };
	resize_interrupted(c, &sp, &run, &total);
	ck_assert_uint_gt(total, 20);
	for (uint64_t n = 0; n < total; n += RESIZE_KILL_STRIDE) {
		sp.model = RK_FAULT_KILL;
		sp.n = n;
		sp.seed = n;
		resize_interrupted(c, &sp, &run, NULL);
	}
	fprintf(stderr, "resize: case %d: killed at %llu of its %llu writes (one in %llu; %llu opened mid-reshape by rk_array_open)\n",
	        cases[_i], (unsigned long long)run.points, (unsigned long long)total, (unsigned long long)RESIZE_KILL_STRIDE,
	        (unsigned long long)run.midreads);
	/* nearly every kill lands mid-reshape (the first and the last few
	 * writes fall before or after it) and was read there */
	ck_assert_uint_ge(run.midreads, 3);
	ck_assert_uint_ge(run.midreads * 4, run.points * 3);
}
END_TEST

RK_TEST_SUITE("resize_kill", { "kill", 1200, NULL, NULL, 0, RK_TESTS(RK_TEST_LOOP(t_kill_every_write, 0, 4)) })
