/* test_detect_edge.c: content continuity at chunk edges (dt_edge_compare,
 * libmeta/detect_edge.c).  A RAID-0 of 4 with 16 KiB chunks holds "files"
 * of 24 to 96 KiB each of one kind (text, zeros, random bytes, a small
 * alphabet): the true order's chunk edges mostly fall inside a file, a
 * reading with two roles swapped puts another file's chunk after them.
 * The sign test must name the true order, by the threshold the search
 * uses, from either side; and it must not name one where the volume is
 * random bytes throughout (no continuity to see). */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "detect_int.h"
#include "rk_geom.h"
#include "helpers/detect_hyp.h"
#include "helpers/rk_test.h"

#define NM 4u
#define CHUNK (16u * 1024u)
#define MEMBER (4u * 1024u * 1024u)
#define EDGE_Z 4.0   /* as libmeta/detect_search.c breaks a tie */

/* N bytes of kind K at P (SEED varies them): 0 text, 1 zeros, 2 random,
 * 3 bytes of a 16-letter alphabet. */
static void fill_kind(uint8_t *p, size_t n, uint32_t k, uint64_t seed)
{
	static const char words[] = "the parity of a stripe holds the data of every member in one row ";
	rk_test_fill_seeded(p, n, seed);
	for (size_t i = 0; i < n; i++)
		p[i] = k == 0 ? (uint8_t)words[(p[i] + i) % (sizeof words - 1)] : k == 1 ? 0 : k == 2 ? p[i] : (uint8_t)('a' + p[i] % 16);
}

/* Writes members m0..m3 of a RAID-0 (CHUNK) whose volume holds files of
 * mixed kinds (RANDOM_ONLY: random bytes only); *G the geometry. */
static void write_array(struct rk_geom *g, int random_only)
{
	RK_REQUIRE(!rk_geom_init(g, 0, 0, CHUNK, NM, MEMBER));
	size_t vs = (size_t)g->volume_size;
	uint8_t *v = malloc(vs);
	RK_REQUIRE(v != NULL);
	rk_test_rnd_seed(4242);
	for (size_t at = 0; at < vs;) {
		size_t n = (24 + rk_test_rnd_below(73)) * 1024;
		if (n > vs - at)
			n = vs - at;
		fill_kind(v + at, n, random_only ? 2 : (uint32_t)rk_test_rnd_below(4), at + 1);
		at += n;
	}
	uint8_t *m[NM];
	for (uint32_t r = 0; r < NM; r++)
		RK_REQUIRE((m[r] = malloc(MEMBER)) != NULL);
	for (size_t c = 0; c < vs / CHUNK; c++)
		memcpy(m[c % NM] + c / NM * CHUNK, v + c * CHUNK, CHUNK);
	for (uint32_t r = 0; r < NM; r++) {
		rk_test_spit(rk_test_members()[r], m[r], MEMBER);
		free(m[r]);
	}
	free(v);
}

/* C opened over the array write_array makes (RANDOM_ONLY as there), *T
 * its true reading and *S that reading with roles 1 and 2 swapped. */
static void open_swapped(struct dt_ctx *c, struct dt_hyp *t, struct dt_hyp *s, int random_only)
{
	struct rk_geom g;
	write_array(&g, random_only);
	memset(c, 0, sizeof *c);
	RK_REQUIRE(!dt_open(c, rk_test_members(), NM));
	dt_test_hyp_roles(t, &g, NM);
	*s = *t;
	s->role_img[1] = 2;
	s->role_img[2] = 1;
}

/* The true order beats a reading with roles 1 and 2 swapped by the
 * search's threshold, seen from either side; a reading against itself
 * differs nowhere. */
START_TEST(t_edge_true_order)
{
	struct dt_ctx c;
	struct dt_hyp t, s;
	open_swapped(&c, &t, &s, 0);
	struct dt_edges e;
	RK_REQUIRE(dt_edge_compare(&c, &t, &s, &e));
	RK_REQUIRE_MSG(e.differ >= 64 && e.z >= EDGE_Z, "differ %u, wins %u/%u, z %.2f", e.differ, e.a_wins, e.b_wins, e.z);
	RK_REQUIRE(dt_edge_compare(&c, &s, &t, &e));
	RK_REQUIRE_MSG(e.z <= -EDGE_Z, "swapped first: wins %u/%u, z %.2f", e.a_wins, e.b_wins, e.z);
	RK_REQUIRE(dt_edge_compare(&c, &t, &t, &e));
	RK_REQUIRE(e.differ == 0 && e.z == 0);
	dt_close(&c);
}
END_TEST

/* Random bytes throughout: neither order is named; other chunk sizes
 * cannot be compared edge by edge at all. */
START_TEST(t_edge_random_null)
{
	struct dt_ctx c;
	struct dt_hyp t, s;
	open_swapped(&c, &t, &s, 1);
	struct dt_edges e;
	RK_REQUIRE(dt_edge_compare(&c, &t, &s, &e));
	RK_REQUIRE_MSG(e.differ >= 64 && e.z < EDGE_Z && e.z > -EDGE_Z, "differ %u, wins %u/%u, z %.2f", e.differ, e.a_wins,
	               e.b_wins, e.z);
	RK_REQUIRE(!rk_geom_init(&s.g, 0, 0, 2 * CHUNK, NM, MEMBER));
	RK_REQUIRE(!dt_edge_compare(&c, &t, &s, &e));
	dt_close(&c);
}
END_TEST

RK_TEST_SUITE("detect_edge", { "edge", 60, rk_test_tmpdir_make, rk_test_tmpdir_remove, 0,
	  RK_TESTS(RK_TEST(t_edge_true_order), RK_TEST(t_edge_random_null)) })
