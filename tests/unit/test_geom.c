/* test_geom.c: geometry known-answer tables (from the formulas and pictures
 * in spec/layouts.md), map/unmap round trips on every level and layout for
 * member counts 1..40, 255, 2032 and 2^50-byte members, and rejection of
 * invalid parameters. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "rk_geom.h"
#include "helpers/rk_test.h"

/* ---- known-answer tables ----
 * One row per stripe: a token per role, "Dk" = volume chunk k, "P", "Q".
 * QORD lists, per stripe, the volume chunks in Q coefficient order (g^0
 * first); NULL where Q order = volume order or there is no Q. */
struct kat {
	int32_t level;
	uint32_t layout;
	uint32_t n;
	const char *rows[6];
	const char *qord[6];
	int ddf;          /* Q coefficients follow role numbers */
};

static const struct kat kats[] = {
	/* RAID-5, 4 members */
	{ 5, 0, 4, { "D0 D1 D2 P", "D3 D4 P D5", "D6 P D7 D8", "P D9 D10 D11", "D12 D13 D14 P" }, {0}, 0 },
	{ 5, 1, 4, { "P D0 D1 D2", "D3 P D4 D5", "D6 D7 P D8", "D9 D10 D11 P", "P D12 D13 D14" }, {0}, 0 },
	{ 5, 2, 4, { "D0 D1 D2 P", "D4 D5 P D3", "D8 P D6 D7", "P D9 D10 D11", "D12 D13 D14 P" }, {0}, 0 },
	{ 5, 3, 4, { "P D0 D1 D2", "D5 P D3 D4", "D7 D8 P D6", "D9 D10 D11 P", "P D12 D13 D14" }, {0}, 0 },
	{ 5, 4, 4, { "P D0 D1 D2", "P D3 D4 D5", "P D6 D7 D8" }, {0}, 0 },
	{ 5, 5, 4, { "D0 D1 D2 P", "D3 D4 D5 P", "D6 D7 D8 P" }, {0}, 0 },
	/* RAID-5, 5 members, left-symmetric (mdadm's picture) */
	{ 5, 2, 5, { "D0 D1 D2 D3 P", "D5 D6 D7 P D4", "D10 D11 P D8 D9", "D15 P D12 D13 D14", "P D16 D17 D18 D19",
	             "D20 D21 D22 D23 P" }, {0}, 0 },
	/* RAID-4 */
	{ 4, 5, 4, { "D0 D1 D2 P", "D3 D4 D5 P" }, {0}, 0 },
	{ 4, 0, 3, { "D0 D1 P", "D2 D3 P" }, {0}, 0 },
	/* RAID-0 */
	{ 0, 0, 3, { "D0 D1 D2", "D3 D4 D5" }, {0}, 0 },
	/* RAID-6, 5 members */
	{ 6, 0, 5, { "Q D0 D1 D2 P", "D3 D4 D5 P Q", "D6 D7 P Q D8", "D9 P Q D10 D11", "P Q D12 D13 D14",
	             "Q D15 D16 D17 P" },
	           { "0 1 2", "3 4 5", "8 6 7", "10 11 9", "12 13 14", "15 16 17" }, 0 },
	{ 6, 1, 5, { "P Q D0 D1 D2", "D3 P Q D4 D5", "D6 D7 P Q D8", "D9 D10 D11 P Q", "Q D12 D13 D14 P" },
	           { "0 1 2", "4 5 3", "8 6 7", "9 10 11", "12 13 14" }, 0 },
	{ 6, 2, 5, { "Q D0 D1 D2 P", "D3 D4 D5 P Q", "D7 D8 P Q D6", "D11 P Q D9 D10", "P Q D12 D13 D14" },
	           { "0 1 2", "3 4 5", "6 7 8", "9 10 11", "12 13 14" }, 0 },
	{ 6, 3, 5, { "P Q D0 D1 D2", "D5 P Q D3 D4", "D7 D8 P Q D6", "D9 D10 D11 P Q", "Q D12 D13 D14 P" },
	           { "0 1 2", "3 4 5", "6 7 8", "9 10 11", "12 13 14" }, 0 },
	{ 6, 4, 5, { "P Q D0 D1 D2", "P Q D3 D4 D5" }, { "0 1 2", "3 4 5" }, 0 },
	{ 6, 5, 5, { "D0 D1 D2 P Q", "D3 D4 D5 P Q" }, { "0 1 2", "3 4 5" }, 0 },
	/* RAID-6, 4 members, left-symmetric */
	{ 6, 2, 4, { "Q D0 D1 P", "D2 D3 P Q", "D5 P Q D4", "P Q D6 D7" }, { "0 1", "2 3", "4 5", "6 7" }, 0 },
	/* RAID-6 DDF layouts, 5 members */
	{ 6, 8, 5, { "P Q D0 D1 D2", "D3 P Q D4 D5", "D6 D7 P Q D8", "D9 D10 D11 P Q", "Q D12 D13 D14 P" }, {0}, 1 },
	{ 6, 9, 5, { "D0 D1 D2 P Q", "D3 D4 P Q D5", "D6 P Q D7 D8", "P Q D9 D10 D11", "Q D12 D13 D14 P" }, {0}, 1 },
	{ 6, 10, 5, { "D0 D1 D2 Q P", "D4 D5 Q P D3", "D8 Q P D6 D7", "Q P D9 D10 D11", "P D12 D13 D14 Q" }, {0}, 1 },
	/* RAID-6 *_6 layouts, 5 members: RAID-5 over roles 0..3, Q on role 4 */
	{ 6, 16, 5, { "D0 D1 D2 P Q", "D3 D4 P D5 Q", "D6 P D7 D8 Q", "P D9 D10 D11 Q", "D12 D13 D14 P Q" },
	            { "0 1 2", "3 4 5", "6 7 8", "9 10 11", "12 13 14" }, 0 },
	{ 6, 17, 5, { "P D0 D1 D2 Q", "D3 P D4 D5 Q", "D6 D7 P D8 Q", "D9 D10 D11 P Q", "P D12 D13 D14 Q" },
	            { "0 1 2", "3 4 5", "6 7 8", "9 10 11", "12 13 14" }, 0 },
	{ 6, 18, 5, { "D0 D1 D2 P Q", "D4 D5 P D3 Q", "D8 P D6 D7 Q", "P D9 D10 D11 Q", "D12 D13 D14 P Q" },
	            { "0 1 2", "4 5 3", "8 6 7", "9 10 11", "12 13 14" }, 0 },
	{ 6, 19, 5, { "P D0 D1 D2 Q", "D5 P D3 D4 Q", "D7 D8 P D6 Q", "D9 D10 D11 P Q", "P D12 D13 D14 Q" },
	            { "0 1 2", "5 3 4", "7 8 6", "9 10 11", "12 13 14" }, 0 },
	{ 6, 20, 5, { "P D0 D1 D2 Q", "P D3 D4 D5 Q" }, { "0 1 2", "3 4 5" }, 0 },
};

/* Parses the tokens of ROW into kinds/blocks per role; returns the count. */
static uint32_t parse_row(const char *row, enum rk_blk_kind *kind, uint64_t *blk, uint32_t max)
{
	uint32_t k = 0;
	char buf[256];
	snprintf(buf, sizeof buf, "%s", row);
	for (char *save, *t = strtok_r(buf, " ", &save); t && k < max; t = strtok_r(NULL, " ", &save), k++) {
		if (t[0] == 'P') {
			kind[k] = RK_BLK_P;
		} else if (t[0] == 'Q') {
			kind[k] = RK_BLK_Q;
		} else {
			kind[k] = RK_BLK_DATA;
			blk[k] = strtoull(t + 1, NULL, 10);
		}
	}
	return k;
}

START_TEST(test_kat_parity)
{
	const uint64_t chunk = 4096;
	for (size_t t = 0; t < sizeof kats / sizeof kats[0]; t++) {
		const struct kat *K = &kats[t];
		uint32_t nrows = 0;
		while (nrows < 6 && K->rows[nrows])
			nrows++;
		struct rk_geom g;
		ck_assert_int_eq(rk_geom_init(&g, K->level, K->layout, chunk, K->n, chunk * 8 + 100), RK_OK);
		ck_assert_uint_eq(g.member_size, chunk * 8);
		ck_assert_uint_eq(g.nstripes, 8);
		for (uint32_t s = 0; s < nrows; s++) {
			enum rk_blk_kind kind[16];
			uint64_t blk[16];
			uint32_t cnt = parse_row(K->rows[s], kind, blk, 16);
			ck_assert_msg(cnt == K->n, "table %zu row %u has %u tokens", t, s, cnt);
			uint32_t vol_role[16], slot[16], data_role[16];
			struct rk_stripe_map m = { .vol_role = vol_role, .slot = slot };
			ck_assert_int_eq(rk_geom_stripe_map(&g, s, &m), RK_OK);
			ck_assert_uint_eq(m.member_off, s * chunk);
			for (uint32_t r = 0; r < K->n; r++) {
				uint64_t v;
				enum rk_blk_kind kd;
				uint64_t moff = s * chunk + 17;
				ck_assert_int_eq(rk_geom_unmap(&g, r, moff, &v, &kd), RK_OK);
				ck_assert_msg(kd == kind[r], "level %d layout %u stripe %u role %u: kind %d, table %d", K->level,
				              K->layout, s, r, kd, kind[r]);
				if (kind[r] == RK_BLK_P)
					ck_assert_uint_eq(m.p_role, r);
				if (kind[r] == RK_BLK_Q)
					ck_assert_uint_eq(m.q_role, r);
				if (kind[r] != RK_BLK_DATA)
					continue;
				ck_assert_msg(v == blk[r] * chunk + 17, "level %d layout %u stripe %u role %u: voff %llu, table D%llu",
				              K->level, K->layout, s, r, (unsigned long long)v, (unsigned long long)blk[r]);
				struct rk_loc loc;
				uint64_t run;
				ck_assert_int_eq(rk_geom_map(&g, blk[r] * chunk + 17, &loc, &run), RK_OK);
				ck_assert_uint_eq(loc.role, r);
				ck_assert_uint_eq(loc.stripe, s);
				ck_assert_uint_eq(loc.member_off, moff);
				ck_assert_uint_eq(run, chunk - 17);
				ck_assert_uint_eq(vol_role[blk[r] - (uint64_t)s * g.ndata], r);
			}
			if (K->level == 0)
				continue;
			/* Q order */
			struct rk_stripe_roles sr = { .data_role = data_role };
			ck_assert_int_eq(rk_geom_stripe(&g, s, &sr), RK_OK);
			ck_assert_uint_eq(sr.p_role, m.p_role);
			ck_assert_uint_eq(sr.q_role, m.q_role);
			ck_assert_uint_eq(slot[m.p_role], g.q_slots);
			if (K->level == 6)
				ck_assert_uint_eq(slot[m.q_role], g.q_slots + 1);
			if (K->ddf) {
				ck_assert_uint_eq(g.q_slots, K->n);
				for (uint32_t r = 0; r < K->n; r++)
					if (kind[r] == RK_BLK_DATA)
						ck_assert_uint_eq(slot[r], r);
				continue;
			}
			uint64_t qb[16];
			uint32_t nq = 0;
			if (K->qord[s]) {
				char buf[128];
				snprintf(buf, sizeof buf, "%s", K->qord[s]);
				for (char *save, *tk = strtok_r(buf, " ", &save); tk; tk = strtok_r(NULL, " ", &save))
					qb[nq++] = strtoull(tk, NULL, 10);
			} else {
				for (uint32_t i = 0; i < g.ndata; i++)
					qb[nq++] = (uint64_t)s * g.ndata + i;
			}
			ck_assert_uint_eq(nq, g.ndata);
			for (uint32_t i = 0; i < nq; i++) {
				uint32_t r = data_role[i];
				ck_assert_msg(kind[r] == RK_BLK_DATA && blk[r] == qb[i],
				              "level %d layout %u stripe %u: Q slot %u holds role %u", K->level, K->layout, s, i, r);
				ck_assert_uint_eq(slot[r], i);
			}
		}
	}
}
END_TEST

/* RAID-10 pictures (md's documentation), 3 members, 4 chunk rows each.
 * Each cell is the volume chunk stored there, -1 for unused. */
START_TEST(test_kat_raid10)
{
	static const struct {
		const char *name;
		uint32_t n, rows;
		int64_t cell[4][4];
		uint64_t nstripes;
	} t[] = {
		{ "n2", 3, 4, { { 0, 0, 1 }, { 1, 2, 2 }, { 3, 3, 4 }, { 4, 5, 5 } }, 6 },
		{ "f2", 3, 4, { { 0, 1, 2 }, { 3, 4, 5 }, { 2, 0, 1 }, { 5, 3, 4 } }, 6 },
		{ "o2", 3, 4, { { 0, 1, 2 }, { 2, 0, 1 }, { 3, 4, 5 }, { 5, 3, 4 } }, 6 },
		{ "n2", 4, 2, { { 0, 0, 1, 1 }, { 2, 2, 3, 3 } }, 4 },
		{ "n3", 4, 3, { { 0, 0, 0, 1 }, { 1, 1, 2, 2 }, { 2, 3, 3, 3 } }, 4 },
		{ "f2", 4, 2, { { 0, 1, 2, 3 }, { 3, 0, 1, 2 } }, 4 },
		{ "n2f2", 4, 4, { { 0, 0, 1, 1 }, { 2, 2, 3, 3 }, { 1, 1, 0, 0 }, { 3, 3, 2, 2 } }, 4 },
	};
	const uint64_t chunk = 1024;
	for (size_t k = 0; k < sizeof t / sizeof t[0]; k++) {
		uint32_t layout;
		ck_assert_int_eq(rk_layout_parse(10, t[k].name, &layout), 0);
		struct rk_geom g;
		ck_assert_int_eq(rk_geom_init(&g, 10, layout, chunk, t[k].n, t[k].rows * chunk), RK_OK);
		ck_assert_uint_eq(g.nstripes, t[k].nstripes);
		ck_assert_uint_eq(g.volume_size, t[k].nstripes * chunk);
		/* every cell unmaps to its chunk; every chunk's copies are exactly the cells */
		uint32_t seen[8] = { 0 };
		for (uint32_t row = 0; row < t[k].rows; row++)
			for (uint32_t r = 0; r < t[k].n; r++) {
				uint64_t v;
				enum rk_blk_kind kd;
				ck_assert_int_eq(rk_geom_unmap(&g, r, row * chunk + 5, &v, &kd), RK_OK);
				int64_t want = t[k].cell[row][r];
				if (want < 0) {
					ck_assert_int_eq(kd, RK_BLK_UNUSED);
					continue;
				}
				ck_assert_msg(kd == RK_BLK_DATA && v == (uint64_t)want * chunk + 5, "%s n=%u row %u role %u: %llu",
				              t[k].name, t[k].n, row, r, (unsigned long long)(v / chunk));
				seen[want]++;
			}
		for (uint64_t c = 0; c < t[k].nstripes; c++) {
			struct rk_loc locs[8];
			uint32_t nc = rk_geom_copies(&g, c * chunk + 5, locs, 8);
			ck_assert_uint_eq(nc, g.copies);
			ck_assert_uint_eq(seen[c], g.copies);
			for (uint32_t i = 0; i < nc; i++) {
				ck_assert_uint_eq(locs[i].member_off % chunk, 5);
				ck_assert_int_eq(t[k].cell[locs[i].member_off / chunk][locs[i].role], (int64_t)c);
			}
			struct rk_loc l;
			ck_assert_int_eq(rk_geom_map(&g, c * chunk + 5, &l, NULL), RK_OK);
			ck_assert_uint_eq(l.role, locs[0].role);
			ck_assert_uint_eq(l.member_off, locs[0].member_off);
		}
	}
}
END_TEST

START_TEST(test_kat_linear_raid1)
{
	struct rk_geom g;
	struct rk_loc l, locs[4];
	uint64_t run, v;
	enum rk_blk_kind kd;
	ck_assert_int_eq(rk_geom_init(&g, RK_LEVEL_LINEAR, 0, 0, 3, 1000), RK_OK);
	ck_assert_uint_eq(g.volume_size, 3000);
	ck_assert_int_eq(rk_geom_map(&g, 2500, &l, &run), RK_OK);
	ck_assert_uint_eq(l.role, 2);
	ck_assert_uint_eq(l.member_off, 500);
	ck_assert_uint_eq(run, 500);
	ck_assert_int_eq(rk_geom_unmap(&g, 1, 999, &v, &kd), RK_OK);
	ck_assert_uint_eq(v, 1999);
	ck_assert_int_eq(rk_geom_map(&g, 3000, &l, &run), RK_E_RANGE);

	ck_assert_int_eq(rk_geom_init(&g, 1, 0, 0, 3, 1000), RK_OK);
	ck_assert_uint_eq(g.volume_size, 1000);
	ck_assert_uint_eq(g.copies, 3);
	ck_assert_uint_eq(rk_geom_redundancy(&g), 2);
	ck_assert_uint_eq(rk_geom_copies(&g, 10, locs, 4), 3);
	for (uint32_t i = 0; i < 3; i++) {
		ck_assert_uint_eq(locs[i].role, i);
		ck_assert_uint_eq(locs[i].member_off, 10);
	}
	ck_assert_int_eq(rk_geom_map(&g, 10, &l, &run), RK_OK);
	ck_assert_uint_eq(l.role, 0);
	ck_assert_uint_eq(run, 990);
}
END_TEST

/* Every layout of every level. */
struct lvl_layout { int32_t level; uint32_t layout; };
static uint32_t all_layouts(struct lvl_layout *out)
{
	uint32_t k = 0;
	out[k++] = (struct lvl_layout){ RK_LEVEL_LINEAR, 0 };
	out[k++] = (struct lvl_layout){ 0, 0 };
	out[k++] = (struct lvl_layout){ 1, 0 };
	out[k++] = (struct lvl_layout){ 4, 5 };
	for (uint32_t a = 0; a <= 5; a++)
		out[k++] = (struct lvl_layout){ 5, a };
	for (uint32_t a = 0; a <= 20; a++)
		if (a <= 5 || (a >= 8 && a <= 10) || a >= 16)
			out[k++] = (struct lvl_layout){ 6, a };
	out[k++] = (struct lvl_layout){ 10, RK_R10_LAYOUT(2, 1, 0) };
	out[k++] = (struct lvl_layout){ 10, RK_R10_LAYOUT(3, 1, 0) };
	out[k++] = (struct lvl_layout){ 10, RK_R10_LAYOUT(1, 2, 0) };
	out[k++] = (struct lvl_layout){ 10, RK_R10_LAYOUT(1, 2, 1) };
	out[k++] = (struct lvl_layout){ 10, RK_R10_LAYOUT(2, 2, 0) };
	out[k++] = (struct lvl_layout){ 10, RK_R10_LAYOUT(1, 3, 1) };
	out[k++] = (struct lvl_layout){ 10, RK_R10_LAYOUT(2, 1, 0) | 2u << 17 };
	return k;
}

/* Checks map -> unmap and unmap -> map on ITER random offsets of G. */
static void round_trips(const struct rk_geom *g, unsigned iter)
{
	struct rk_loc locs[16];
	uint32_t *vr = malloc(g->nroles * sizeof *vr), *sl = malloc(g->nroles * sizeof *sl);
	RK_REQUIRE(vr != NULL);
	for (unsigned it = 0; it < iter; it++) {
		uint64_t voff = it == 0 ? 0 : it == 1 ? g->volume_size - 1 : rk_test_rnd_below(g->volume_size);
		struct rk_loc l;
		uint64_t run, v;
		enum rk_blk_kind kd;
		RK_REQUIRE(rk_geom_map(g, voff, &l, &run) == RK_OK);
		RK_REQUIRE((l.role) < (g->nroles));
		RK_REQUIRE((l.member_off) < (g->member_size));
		RK_REQUIRE((l.stripe) == (voff / g->stripe_data));
		RK_REQUIRE((run) >= (1));
		RK_REQUIRE((run) <= (g->volume_size - voff));
		RK_REQUIRE(rk_geom_unmap(g, l.role, l.member_off, &v, &kd) == RK_OK);
		RK_REQUIRE_MSG(kd == RK_BLK_DATA && v == voff, "level %d layout %u n=%u: %llu -> role %u +%llu -> %llu (%d)",
		              g->level, g->layout, g->nroles, (unsigned long long)voff, l.role,
		              (unsigned long long)l.member_off, (unsigned long long)v, kd);
		/* the last byte of the run is still contiguous */
		struct rk_loc l2;
		RK_REQUIRE(rk_geom_map(g, voff + run - 1, &l2, NULL) == RK_OK);
		RK_REQUIRE((l2.role) == (l.role));
		RK_REQUIRE((l2.member_off) == (l.member_off + run - 1));
		uint32_t nc = rk_geom_copies(g, voff, locs, 16);
		RK_REQUIRE((nc) == (g->copies < 16 ? g->copies : 16));
		RK_REQUIRE((locs[0].role) == (l.role));
		RK_REQUIRE((locs[0].member_off) == (l.member_off));
		for (uint32_t i = 0; i < nc; i++) {
			for (uint32_t j = 0; j < i; j++)
				RK_REQUIRE((locs[j].role) != (locs[i].role));   /* copies on distinct members */
			RK_REQUIRE(rk_geom_unmap(g, locs[i].role, locs[i].member_off, &v, &kd) == RK_OK);
			RK_REQUIRE((kd) == (RK_BLK_DATA));
			RK_REQUIRE((v) == (voff));
		}
		/* reverse: a random member byte */
		uint32_t role = (uint32_t)rk_test_rnd_below(g->nroles);
		uint64_t moff = rk_test_rnd_below(g->member_size);
		RK_REQUIRE(rk_geom_unmap(g, role, moff, &v, &kd) == RK_OK);
		if (kd == RK_BLK_DATA) {
			RK_REQUIRE((v) < (g->volume_size));
			nc = rk_geom_copies(g, v, locs, 16);
			int found = 0;
			for (uint32_t i = 0; i < nc; i++)
				found |= locs[i].role == role && locs[i].member_off == moff;
			RK_REQUIRE_MSG(found || g->copies > 16, "level %d layout %u n=%u: role %u +%llu -> %llu not a copy",
			              g->level, g->layout, g->nroles, role, (unsigned long long)moff, (unsigned long long)v);
		} else if (kd == RK_BLK_P || kd == RK_BLK_Q) {
			RK_REQUIRE((g->level) >= (4));
			RK_REQUIRE((v) == (moff / g->chunk * g->stripe_data));
		}
		/* stripe maps: a permutation consistent with map */
		if (g->level == 0 || g->level == 4 || g->level == 5 || g->level == 6) {
			struct rk_stripe_map m = { .vol_role = vr, .slot = sl };
			RK_REQUIRE(rk_geom_stripe_map(g, l.stripe, &m) == RK_OK);
			uint32_t j = (uint32_t)(voff % g->stripe_data / g->chunk);
			RK_REQUIRE((vr[j]) == (l.role));
			if (g->level != 0 && (it & 7) == 0) {
				/* slots: distinct, data below q_slots, P/Q at q_slots(+1) */
				uint8_t *used = calloc(g->q_slots + 2, 1);
				for (uint32_t r = 0; r < g->nroles; r++) {
					RK_REQUIRE((sl[r]) < (g->q_slots + 2));
					RK_REQUIRE(!used[sl[r]]);
					used[sl[r]] = 1;
				}
				RK_REQUIRE((sl[m.p_role]) == (g->q_slots));
				if (g->level == 6)
					RK_REQUIRE((sl[m.q_role]) == (g->q_slots + 1));
				free(used);
			}
		}
	}
	free(vr);
	free(sl);
}

START_TEST(test_round_trips)
{
	rk_test_rnd_seed(0x1234567 + (uint64_t)_i);
	struct lvl_layout L[64];
	uint32_t nl = all_layouts(L);
	static const uint64_t chunks[] = { 512, 4096, 65536, 3 * 512 };
	for (uint32_t k = 0; k < nl; k++) {
		for (uint32_t n = 1; n <= 40; n++) {
			uint64_t chunk = chunks[(n + k) % 4];
			uint64_t msize = chunk * (3 + rk_test_rnd_below(50)) + rk_test_rnd_below(chunk);
			struct rk_geom g;
			rk_err e = rk_geom_init(&g, L[k].level, L[k].layout, chunk, n, msize);
			if (n < rk_level_min_roles(L[k].level) ||
			    (L[k].level == 10 && (L[k].layout & 0xff) * ((L[k].layout >> 8) & 0xff) > n)) {
				ck_assert_int_eq(e, RK_E_INVAL);
				continue;
			}
			ck_assert_msg(e == RK_OK, "level %d layout %u n=%u: %s", L[k].level, L[k].layout, n, rk_errmsg());
			round_trips(&g, 1000);
		}
	}
}
END_TEST

START_TEST(test_large)
{
	rk_test_rnd_seed(0xabcdef);
	struct lvl_layout L[64];
	uint32_t nl = all_layouts(L);
	static const uint32_t counts[] = { 255, 257, 2032 };
	for (uint32_t k = 0; k < nl; k++)
		for (uint32_t c = 0; c < 3; c++) {
			uint32_t n = counts[c];
			struct rk_geom g;
			uint64_t msize = (1ull << 50) + 12345;
			rk_err e = rk_geom_init(&g, L[k].level, L[k].layout, 65536, n, msize);
			int ddf = L[k].level == 6 && L[k].layout >= 8 && L[k].layout <= 10;
			if (L[k].level == 6 && (n > 257 || (ddf && n > 255))) {
				ck_assert_int_eq(e, RK_E_INVAL);
				continue;
			}
			ck_assert_msg(e == RK_OK, "level %d layout %u n=%u: %s", L[k].level, L[k].layout, n, rk_errmsg());
			if (L[k].level != RK_LEVEL_LINEAR && L[k].level != 1)
				ck_assert_uint_eq(g.member_size % 65536, 0);
			if (L[k].level == 5)
				ck_assert_uint_eq(g.volume_size, (uint64_t)(n - 1) * (1ull << 50));
			if (L[k].level == 6)
				ck_assert_uint_eq(g.volume_size, (uint64_t)(n - 2) * (1ull << 50));
			if (L[k].level == 0)
				ck_assert_uint_eq(g.volume_size, (uint64_t)n * (1ull << 50));
			round_trips(&g, 1000);
		}
	/* overflow: 2032 members of 2^60 bytes */
	struct rk_geom g;
	ck_assert_int_eq(rk_geom_init(&g, 0, 0, 65536, 2032, 1ull << 60), RK_E_RANGE);
	ck_assert_int_eq(rk_geom_init(&g, RK_LEVEL_LINEAR, 0, 0, 2032, 1ull << 60), RK_E_RANGE);
	ck_assert_int_eq(rk_geom_init(&g, 5, 2, 65536, 2032, 1ull << 60), RK_E_RANGE);
	ck_assert_int_eq(rk_geom_init(&g, 1, 0, 0, 2032, UINT64_MAX), RK_OK);
	ck_assert_uint_eq(g.volume_size, UINT64_MAX);
	ck_assert_int_eq(rk_geom_init(&g, 10, 0x102, 65536, 2032, 1ull << 60), RK_E_RANGE);
}
END_TEST

START_TEST(test_invalid)
{
	struct rk_geom g;
	ck_assert_int_eq(rk_geom_init(&g, 3, 0, 4096, 4, 1 << 20), RK_E_INVAL);         /* level */
	ck_assert_int_eq(rk_geom_init(&g, 5, 6, 4096, 4, 1 << 20), RK_E_INVAL);         /* layout */
	ck_assert_int_eq(rk_geom_init(&g, 5, 8, 4096, 4, 1 << 20), RK_E_INVAL);         /* RAID-6 only */
	ck_assert_int_eq(rk_geom_init(&g, 6, 7, 4096, 4, 1 << 20), RK_E_INVAL);
	ck_assert_int_eq(rk_geom_init(&g, 6, 21, 4096, 4, 1 << 20), RK_E_INVAL);
	ck_assert_int_eq(rk_geom_init(&g, 4, 2, 4096, 4, 1 << 20), RK_E_INVAL);
	ck_assert_int_eq(rk_geom_init(&g, 1, 1, 0, 2, 1 << 20), RK_E_INVAL);
	ck_assert_int_eq(rk_geom_init(&g, 5, 2, 0, 4, 1 << 20), RK_E_INVAL);            /* chunk 0 */
	ck_assert_int_eq(rk_geom_init(&g, 5, 2, 1000, 4, 1 << 20), RK_E_INVAL);         /* not 512-aligned */
	ck_assert_int_eq(rk_geom_init(&g, 0, 0, 1ull << 31, 4, 1ull << 40), RK_E_INVAL);
	ck_assert_int_eq(rk_geom_init(&g, 5, 2, 4096, 1, 1 << 20), RK_E_INVAL);         /* too few */
	ck_assert_int_eq(rk_geom_init(&g, 6, 2, 4096, 2, 1 << 20), RK_E_INVAL);
	ck_assert_int_eq(rk_geom_init(&g, 10, 0x102, 4096, 1, 1 << 20), RK_E_INVAL);
	ck_assert_int_eq(rk_geom_init(&g, 0, 0, 4096, 0, 1 << 20), RK_E_INVAL);
	ck_assert_int_eq(rk_geom_init(&g, 0, 0, 4096, 2033, 1 << 20), RK_E_INVAL);      /* too many */
	ck_assert_int_eq(rk_geom_init(&g, 6, 2, 4096, 258, 1 << 20), RK_E_INVAL);
	ck_assert_int_eq(rk_geom_init(&g, 6, 8, 4096, 256, 1 << 20), RK_E_INVAL);
	ck_assert_int_eq(rk_geom_init(&g, 6, 2, 4096, 257, 1 << 20), RK_OK);
	ck_assert_int_eq(rk_geom_init(&g, 10, 0x103, 4096, 2, 1 << 20), RK_E_INVAL);    /* 3 copies, 2 members */
	ck_assert_int_eq(rk_geom_init(&g, 10, 0x101, 4096, 2, 1 << 20), RK_E_INVAL);    /* 1 copy */
	ck_assert_int_eq(rk_geom_init(&g, 10, 0x002, 4096, 2, 1 << 20), RK_E_INVAL);    /* far 0 */
	ck_assert_int_eq(rk_geom_init(&g, 10, 0x102 | 3u << 17, 4096, 4, 1 << 20), RK_E_INVAL);
	ck_assert_int_eq(rk_geom_init(&g, 5, 2, 4096, 4, 4095), RK_E_RANGE);            /* no whole chunk */
	ck_assert_int_eq(rk_geom_init(&g, 1, 0, 0, 2, 0), RK_E_RANGE);
	ck_assert_int_eq(rk_geom_init(&g, 10, 0x201, 4096, 2, 4096), RK_E_RANGE);       /* f2: 1 chunk/2 */

	ck_assert_int_eq(rk_geom_init(&g, 5, 2, 4096, 4, 1 << 20), RK_OK);
	struct rk_loc l;
	uint64_t v;
	enum rk_blk_kind kd;
	uint32_t roles[4];
	struct rk_stripe_roles sr = { .data_role = roles };
	ck_assert_int_eq(rk_geom_map(&g, g.volume_size, &l, NULL), RK_E_RANGE);
	ck_assert_int_eq(rk_geom_map(&g, UINT64_MAX, &l, NULL), RK_E_RANGE);
	ck_assert_uint_eq(rk_geom_copies(&g, g.volume_size, &l, 1), 0);
	ck_assert_int_eq(rk_geom_unmap(&g, 4, 0, &v, &kd), RK_E_RANGE);
	ck_assert_int_eq(rk_geom_unmap(&g, 0, 1 << 20, &v, &kd), RK_E_RANGE);
	ck_assert_int_eq(rk_geom_stripe(&g, g.nstripes, &sr), RK_E_RANGE);
	ck_assert_int_eq(rk_geom_init(&g, 1, 0, 0, 2, 1 << 20), RK_OK);
	ck_assert_int_eq(rk_geom_stripe(&g, 0, &sr), RK_E_INVAL);
}
END_TEST

START_TEST(test_names)
{
	struct lvl_layout L[64];
	uint32_t nl = all_layouts(L);
	char buf[64];
	for (uint32_t k = 0; k < nl; k++) {
		uint32_t back = 0xdead;
		const char *n = rk_layout_name(L[k].level, L[k].layout, buf, sizeof buf);
		ck_assert_msg(rk_layout_parse(L[k].level, n, &back) == 0, "level %d layout %u: '%s'", L[k].level,
		              L[k].layout, n);
		ck_assert_uint_eq(back, L[k].layout);
		int32_t lv;
		ck_assert_int_eq(rk_level_parse(rk_level_name(L[k].level), &lv), 0);
		ck_assert_int_eq(lv, L[k].level);
	}
	uint32_t lay;
	int32_t lv;
	ck_assert_int_eq(rk_level_parse("raid5", &lv), 0);
	ck_assert_int_eq(lv, 5);
	ck_assert_int_eq(rk_level_parse("RAID10", &lv), 0);
	ck_assert_int_eq(lv, 10);
	ck_assert_int_eq(rk_level_parse("7", &lv), -1);
	ck_assert_int_eq(rk_level_parse("", &lv), -1);
	ck_assert_int_eq(rk_layout_parse(5, "ls", &lay), 0);
	ck_assert_uint_eq(lay, RK_ALG_LEFT_SYMMETRIC);
	ck_assert_int_eq(rk_layout_parse(5, "default", &lay), 0);
	ck_assert_uint_eq(lay, 2);
	ck_assert_int_eq(rk_layout_parse(6, "ddf-N-continue", &lay), 0);
	ck_assert_uint_eq(lay, 10);
	ck_assert_int_eq(rk_layout_parse(5, "ddf-N-continue", &lay), -1);
	ck_assert_int_eq(rk_layout_parse(5, "left-symmetric-6", &lay), -1);
	ck_assert_int_eq(rk_layout_parse(10, "n2", &lay), 0);
	ck_assert_uint_eq(lay, 0x102);
	ck_assert_int_eq(rk_layout_parse(10, "f2", &lay), 0);
	ck_assert_uint_eq(lay, 0x201);
	ck_assert_int_eq(rk_layout_parse(10, "o2", &lay), 0);
	ck_assert_uint_eq(lay, 0x10201);
	ck_assert_int_eq(rk_layout_parse(10, "n1", &lay), -1);
	ck_assert_int_eq(rk_layout_parse(10, "x2", &lay), -1);
	ck_assert_int_eq(rk_layout_parse(10, "n2n2", &lay), -1);
	ck_assert_int_eq(rk_layout_parse(10, "n", &lay), -1);
	ck_assert_int_eq(rk_layout_parse(5, "bogus", &lay), -1);
	ck_assert_int_eq(rk_layout_parse(5, "9", &lay), -1);
	ck_assert_int_eq(rk_layout_parse(4, "parity-last", &lay), 0);
	ck_assert_uint_eq(lay, 5);
	ck_assert_uint_eq(rk_layout_default(10), 0x102);
	ck_assert_uint_eq(rk_layout_default(6), 2);
	ck_assert_str_eq(rk_layout_name(6, 99, buf, sizeof buf), "0x63");
}
END_TEST

RK_TEST_SUITE("geom", { "core", 120, NULL, NULL, 0,
	  RK_TESTS(RK_TEST(test_kat_parity), RK_TEST(test_kat_raid10),
	           RK_TEST(test_kat_linear_raid1), RK_TEST_LOOP(test_round_trips, 0, 2),
	           RK_TEST(test_large), RK_TEST(test_invalid), RK_TEST(test_names)) })
