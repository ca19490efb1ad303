/* test_geom_roles.c: "which roles may be down" (rk_geom_readable,
 * rk_geom_checkable, rk_geom_pattern_period) on levels 0, linear, 1, 4, 5,
 * 6 and 10 (near, far, offset and far-set layouts), every set of down
 * roles on small arrays; RAID-10 answers compared with a brute-force walk
 * over every chunk of the volume. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "rk_geom.h"
#include "helpers/rk_test.h"

#define CHUNK 4096u

static void init_or_die(struct rk_geom *g, int32_t level, uint32_t layout, uint32_t n, uint64_t member)
{
	rk_err e = rk_geom_init(g, level, layout, level == 1 || level == RK_LEVEL_LINEAR ? 0 : CHUNK, n, member);
	ck_assert_msg(e == RK_OK, "geometry level %d layout 0x%x n %u: %s", (int)level, layout, n, rk_errmsg());
}

/* DOWN[r] = bit r of MASK. */
static void mask_to_down(uint32_t n, uint32_t mask, uint8_t *down)
{
	for (uint32_t r = 0; r < n; r++)
		down[r] = (mask >> r) & 1;
}

static uint32_t popcount(uint32_t x)
{
	uint32_t c = 0;
	for (; x; x &= x - 1)
		c++;
	return c;
}

/* ---- levels without copies ---- */

START_TEST(linear_and_raid0)
{
	static const int32_t levels[] = { RK_LEVEL_LINEAR, 0 };
	uint8_t down[8];
	for (unsigned li = 0; li < 2; li++)
		for (uint32_t n = 1; n <= 6; n++) {
			struct rk_geom g;
			init_or_die(&g, levels[li], 0, n, 64 * CHUNK);
			ck_assert_uint_eq(rk_geom_pattern_period(&g), 1);
			for (uint32_t mask = 0; mask < (1u << n); mask++) {
				mask_to_down(n, mask, down);
				ck_assert_int_eq(rk_geom_readable(&g, down), mask == 0);
				ck_assert_int_eq(rk_geom_checkable(&g, down), 0);
			}
		}
}
END_TEST

START_TEST(raid1)
{
	uint8_t down[8];
	for (uint32_t n = 1; n <= 8; n++) {
		struct rk_geom g;
		init_or_die(&g, 1, 0, n, 64 * CHUNK);
		ck_assert_uint_eq(rk_geom_pattern_period(&g), 1);
		for (uint32_t mask = 0; mask < (1u << n); mask++) {
			mask_to_down(n, mask, down);
			uint32_t live = n - popcount(mask);
			ck_assert_int_eq(rk_geom_readable(&g, down), live >= 1);
			ck_assert_int_eq(rk_geom_checkable(&g, down), live >= 2);
		}
	}
}
END_TEST

START_TEST(parity_levels)
{
	static const struct { int32_t level; uint32_t layout; uint32_t nparity; } lv[] = {
		{ 4, RK_ALG_PARITY_N, 1 }, { 5, RK_ALG_LEFT_SYMMETRIC, 1 }, { 5, RK_ALG_PARITY_0, 1 },
		{ 6, RK_ALG_LEFT_SYMMETRIC, 2 }, { 6, RK_ALG_ROTATING_N_CONTINUE, 2 }, { 6, RK_ALG_PARITY_0_6, 2 },
	};
	uint8_t down[8];
	for (unsigned i = 0; i < sizeof lv / sizeof lv[0]; i++)
		for (uint32_t n = rk_level_min_roles(lv[i].level); n <= 8; n++) {
			struct rk_geom g;
			init_or_die(&g, lv[i].level, lv[i].layout, n, 64 * CHUNK);
			ck_assert_uint_eq(rk_geom_pattern_period(&g), 1);
			for (uint32_t mask = 0; mask < (1u << n); mask++) {
				mask_to_down(n, mask, down);
				uint32_t nd = popcount(mask);
				ck_assert_msg(rk_geom_readable(&g, down) == (nd <= lv[i].nparity), "level %d n %u mask 0x%x",
				              (int)lv[i].level, n, mask);
				ck_assert_msg(rk_geom_checkable(&g, down) == (nd < lv[i].nparity), "level %d n %u mask 0x%x",
				              (int)lv[i].level, n, mask);
			}
		}
}
END_TEST

/* ---- RAID-10 against brute force ---- */

/* Over every chunk of the volume: *ALL_LIVE = every chunk keeps a live
 * copy, *SOME_TWO = some chunk has two live copies. */
static void r10_brute(const struct rk_geom *g, const uint8_t *down, int *all_live, int *some_two)
{
	struct rk_loc *locs = calloc(g->copies, sizeof *locs);
	ck_assert_ptr_nonnull(locs);
	*all_live = 1;
	*some_two = 0;
	for (uint64_t c = 0; c < g->nstripes; c++) {
		uint32_t k = rk_geom_copies(g, c * g->chunk, locs, g->copies), live = 0;
		ck_assert_uint_eq(k, g->copies);
		for (uint32_t i = 0; i < k; i++)
			live += !down[locs[i].role];
		if (live == 0)
			*all_live = 0;
		if (live >= 2)
			*some_two = 1;
	}
	free(locs);
}

/* Every set of down roles of G (n <= 10) against brute force. */
static void r10_compare_all(const struct rk_geom *g)
{
	uint8_t down[16];
	uint64_t period = rk_geom_pattern_period(g);
	ck_assert_uint_ge(period, 1);
	ck_assert_uint_le(period, g->nstripes);
	for (uint32_t mask = 0; mask < (1u << g->nroles); mask++) {
		int all_live, some_two;
		mask_to_down(g->nroles, mask, down);
		r10_brute(g, down, &all_live, &some_two);
		ck_assert_msg(rk_geom_readable(g, down) == all_live, "RAID-10 layout 0x%x n %u chunks %llu down 0x%x: readable",
		              g->layout, g->nroles, (unsigned long long)g->nstripes, mask);
		ck_assert_msg(rk_geom_checkable(g, down) == some_two, "RAID-10 layout 0x%x n %u chunks %llu down 0x%x: checkable",
		              g->layout, g->nroles, (unsigned long long)g->nstripes, mask);
	}
}

START_TEST(raid10_layouts_brute_force)
{
	static const uint32_t layouts[] = {
		RK_R10_LAYOUT(2, 1, 0), RK_R10_LAYOUT(3, 1, 0),                   /* near */
		RK_R10_LAYOUT(1, 2, 0), RK_R10_LAYOUT(1, 3, 0),                   /* far */
		RK_R10_LAYOUT(1, 2, 1), RK_R10_LAYOUT(1, 3, 1),                   /* offset */
		RK_R10_LAYOUT(2, 2, 0), RK_R10_LAYOUT(2, 2, 1),                   /* near + far / offset */
		RK_R10_LAYOUT(1, 2, 0) | 1u << 17, RK_R10_LAYOUT(1, 2, 0) | 2u << 17,   /* far sets */
		RK_R10_LAYOUT(2, 2, 0) | 1u << 17, RK_R10_LAYOUT(1, 3, 1) | 2u << 17,
	};
	/* member sizes: long volumes (many periods), and ones shorter than a period */
	static const uint64_t member_chunks[] = { 48, 7, 3 };
	uint32_t tried = 0;
	for (unsigned li = 0; li < sizeof layouts / sizeof layouts[0]; li++)
		for (uint32_t n = 2; n <= 9; n++)
			for (unsigned mi = 0; mi < sizeof member_chunks / sizeof member_chunks[0]; mi++) {
				struct rk_geom g;
				if (rk_geom_init(&g, 10, layouts[li], CHUNK, n, member_chunks[mi] * CHUNK) != RK_OK)
					continue;   /* too few members or chunks for the layout */
				r10_compare_all(&g);
				tried++;
			}
	ck_assert_uint_ge(tried, 100);
}
END_TEST

/* Layouts of more copies than fit the functions' stack arrays. */
START_TEST(raid10_many_copies)
{
	struct rk_geom g;
	uint8_t *down = calloc(300, 1);
	ck_assert_ptr_nonnull(down);
	/* 70 far copies over 100 roles: random down sets against brute force */
	init_or_die(&g, 10, RK_R10_LAYOUT(1, 70, 0), 100, 2 * 70 * CHUNK);
	ck_assert_uint_eq(g.copies, 70);
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	for (int round = 0; round < 40; round++) {
		for (uint32_t r = 0; r < g.nroles; r++) {
			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			down[r] = (seed >> 60) < (uint64_t)(round % 16);   /* from none down to nearly all */
		}
		int all_live, some_two;
		r10_brute(&g, down, &all_live, &some_two);
		ck_assert_int_eq(rk_geom_readable(&g, down), all_live);
		ck_assert_int_eq(rk_geom_checkable(&g, down), some_two);
	}
	/* 300 copies (every chunk on every role): one live role keeps it
	 * readable, whichever copy of chunk 0 that role holds */
	init_or_die(&g, 10, RK_R10_LAYOUT(2, 150, 0), 300, 150 * CHUNK);
	ck_assert_uint_eq(g.copies, 300);
	struct rk_loc *locs = calloc(g.copies, sizeof *locs);
	ck_assert_ptr_nonnull(locs);
	ck_assert_uint_eq(rk_geom_copies(&g, 0, locs, g.copies), 300);
	memset(down, 1, g.nroles);
	down[locs[299].role] = 0;
	ck_assert_int_eq(rk_geom_readable(&g, down), 1);
	ck_assert_int_eq(rk_geom_checkable(&g, down), 0);
	down[locs[0].role] = 0;
	ck_assert_int_eq(rk_geom_checkable(&g, down), 1);
	memset(down, 1, g.nroles);
	ck_assert_int_eq(rk_geom_readable(&g, down), 0);
	free(locs);
	free(down);
}
END_TEST

RK_TEST_SUITE("geom_roles", { "roles", 120, NULL, NULL, 0,
	  RK_TESTS(RK_TEST(linear_and_raid0),
	           RK_TEST(raid1),
	           RK_TEST(parity_levels),
	           RK_TEST(raid10_layouts_brute_force),
	           RK_TEST(raid10_many_copies)) })
