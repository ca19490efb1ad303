/* test_detect_rows.c: the rows dt_check_redundancy (libmeta/detect_parity.c)
 * samples.  A volume with fewer stripes than rows sampled must still be
 * checked over all its stripes, not only stripe 0 (where every rotation and
 * data order agree, so nothing tells them apart). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "detect_int.h"
#include "rk_geom.h"
#include "rk_le.h"
#include "rk_parity.h"
#include "rk_vol.h"
#include "helpers/detect_hyp.h"
#include "helpers/rk_test.h"

#define NM 4u
#define CHUNK (128u * 1024u)
#define MEMBER (2u * 1024u * 1024u)   /* 16 stripes: fewer than the rows sampled */

/* A RAID-5 (left-symmetric, 4 members) whose stripe 0 is all zeros and whose
 * other stripes hold random data and its parity, written as members m0..m3;
 * *G the geometry. */
static void write_members(struct rk_geom *g)
{
	RK_REQUIRE(!rk_geom_init(g, 5, RK_ALG_LEFT_SYMMETRIC, CHUNK, NM, MEMBER));
	uint8_t *m[NM];
	for (uint32_t r = 0; r < NM; r++)
		RK_REQUIRE((m[r] = calloc(1, MEMBER)) != NULL);
	for (uint64_t s = 1; s < g->nstripes; s++) {
		uint32_t vr[NM], slot[NM];
		struct rk_stripe_map sm = { .vol_role = vr, .slot = slot };
		RK_REQUIRE(!rk_geom_stripe_map(g, s, &sm));
		for (uint32_t r = 0; r < NM; r++)
			if (r != sm.p_role) {
				rk_test_fill_seeded(m[r] + sm.member_off, CHUNK, s * 16 + r + 1);
				for (uint32_t k = 0; k < CHUNK; k++)
					m[sm.p_role][sm.member_off + k] ^= m[r][sm.member_off + k];
			}
	}
	for (uint32_t r = 0; r < NM; r++) {
		rk_test_spit(rk_test_members()[r], m[r], MEMBER);
		free(m[r]);
	}
}

/* PATHS[0..N): the test folder's files PREFIX0, PREFIX1, ... (allocated:
 * free_paths). */
static void name_paths(const char *prefix, uint32_t n, char **paths)
{
	char name[16];
	for (uint32_t r = 0; r < n; r++) {
		snprintf(name, sizeof name, "%s%u", prefix, r);
		paths[r] = strdup(rk_test_path(name));
		RK_REQUIRE(paths[r]);
	}
}

static void free_paths(char **paths, uint32_t n)
{
	for (uint32_t r = 0; r < n; r++)
		free(paths[r]);
}

/* Writes D (LEN bytes) from volume byte 0 of G on the N devices DEVS (data
 * from OFFS) through the engine, and closes the devices. */
static void write_volume(const struct rk_geom *g, rk_dev **devs, const uint64_t *offs, uint32_t n, const uint8_t *d,
                         uint64_t len)
{
	rk_vol *v;
	RK_REQUIRE(rk_vol_open(&v, g, devs, offs) == RK_OK);
	RK_REQUIRE(rk_vol_write(v, d, (size_t)len, 0) == RK_OK);
	rk_vol_close(v);
	for (uint32_t r = 0; r < n; r++)
		rk_dev_close(devs[r]);
}

/* Writes random bytes (SEED) over the whole volume of G (write_volume). */
static void fill_volume(const struct rk_geom *g, rk_dev **devs, const uint64_t *offs, uint32_t n, uint64_t seed)
{
	uint8_t *d = rk_test_random_bytes((size_t)g->volume_size, seed);
	write_volume(g, devs, offs, n, d, g->volume_size);
	free(d);
}

/* The full check of the true hypothesis finds non-zero rows, all
 * consistent, in stripes past 0; a hypothesis with two roles swapped
 * puts parity where data is in some row (placement). */
START_TEST(t_rows_spread)
{
	struct rk_geom g;
	write_members(&g);
	struct dt_ctx c;
	memset(&c, 0, sizeof c);
	RK_REQUIRE(!dt_open(&c, rk_test_members(), NM));
	struct dt_hyp h;
	dt_test_hyp_roles(&h, &g, NM);
	dt_check_redundancy(&c, &h, 256, 0);
	RK_REQUIRE(h.checked);
	RK_REQUIRE_MSG(h.rows_nz >= 64, "only %llu non-zero rows sampled", (unsigned long long)h.rows_nz);
	RK_REQUIRE(h.rows_ok == h.rows_nz && h.rows_bad == 0);
	RK_REQUIRE(h.place_bad == 0);
	dt_close(&c);
}
END_TEST

/* The mixed rows: with stripe 0 zero and the others full, the rows are
 * not mixed; zeroing one data block of a row makes it mixed, and a
 * hypothesis that puts parity on that zero block is caught placing it
 * wrongly, while the truth is not. */
START_TEST(t_mixed_rows)
{
	struct rk_geom g;
	write_members(&g);
	/* stripe 3: zero one data block of its first row, and its parity */
	uint32_t vr[NM], slot[NM];
	struct rk_stripe_map sm = { .vol_role = vr, .slot = slot };
	RK_REQUIRE(!rk_geom_stripe_map(&g, 3, &sm));
	uint32_t d = (sm.p_role + 1) % NM;
	uint8_t *b = malloc(DT_BLK), *pb = malloc(DT_BLK);
	RK_REQUIRE(b && pb);
	memset(b, 0, DT_BLK);
	FILE *f = fopen(rk_test_members()[sm.p_role], "rb");
	RK_REQUIRE(f && !fseek(f, (long)sm.member_off, SEEK_SET) && fread(pb, 1, DT_BLK, f) == DT_BLK);
	fclose(f);
	FILE *fd = fopen(rk_test_members()[d], "rb");
	uint8_t *db = malloc(DT_BLK);
	RK_REQUIRE(fd && db && !fseek(fd, (long)sm.member_off, SEEK_SET) && fread(db, 1, DT_BLK, fd) == DT_BLK);
	fclose(fd);
	for (uint32_t k = 0; k < DT_BLK; k++)
		pb[k] ^= db[k];   /* parity without block d */
	rk_test_write_at(rk_test_members()[d], b, DT_BLK, sm.member_off);
	rk_test_write_at(rk_test_members()[sm.p_role], pb, DT_BLK, sm.member_off);
	struct dt_ctx c;
	memset(&c, 0, sizeof c);
	RK_REQUIRE(!dt_open(&c, rk_test_members(), NM));
	c.ps5_mask = (1u << NM) - 1;
	c.ps5_lo = c.ps5_hi = NM;
	dt_rows_collect(&c);
	RK_REQUIRE_MSG(c.nmixed == 1 && c.mixed[0] == sm.member_off, "%u mixed rows", c.nmixed);
	struct dt_hyp h;
	dt_test_hyp_roles(&h, &g, NM);
	dt_check_mixed(&c, &h, 16);
	RK_REQUIRE(h.rows_nz == 1 && h.rows_ok == 1 && h.place_bad == 0);
	/* the same with the images of roles d and p swapped: parity on the zero block */
	h.role_img[d] = (int32_t)sm.p_role;
	h.role_img[sm.p_role] = (int32_t)d;
	h.rows = h.rows_nz = h.rows_ok = h.place_bad = 0;
	dt_check_mixed(&c, &h, 16);
	RK_REQUIRE(h.rows_nz == 1 && h.place_bad == 1);
	dt_close(&c);
	free(b);
	free(pb);
	free(db);
}
END_TEST

/* Stripe 3 of a geometry over NM members held in memory, zeroed: the
 * parity-copy tests write a few sectors into M, then pc_open. */
struct pc_fix {
	struct rk_geom g;
	uint32_t vr[NM], slot[NM];
	struct rk_stripe_map sm;
	uint8_t *m[NM];
	uint64_t at;   /* 8 KiB into the stripe's chunks */
};

static void pc_setup(struct pc_fix *f, int32_t level, uint32_t layout)
{
	RK_REQUIRE(!rk_geom_init(&f->g, level, layout, CHUNK, NM, MEMBER));
	f->sm = (struct rk_stripe_map){ .vol_role = f->vr, .slot = f->slot };
	RK_REQUIRE(!rk_geom_stripe_map(&f->g, 3, &f->sm));
	for (uint32_t r = 0; r < NM; r++)
		RK_REQUIRE((f->m[r] = calloc(1, MEMBER)) != NULL);
	f->at = f->sm.member_off + 8192;
}

/* Writes F's members to the test's member files (freeing them) and opens
 * C over them, H the hypothesis of F's geometry with image r in role r. */
static void pc_open(struct pc_fix *f, struct dt_ctx *c, struct dt_hyp *h)
{
	for (uint32_t r = 0; r < NM; r++) {
		rk_test_spit(rk_test_members()[r], f->m[r], MEMBER);
		free(f->m[r]);
	}
	memset(c, 0, sizeof *c);
	RK_REQUIRE(!dt_open(c, rk_test_members(), NM));
	dt_test_hyp_roles(h, &f->g, NM);
}

/* A parity block copying the one data block of its row that holds data
 * (dt_parity_copy): an anchor on it is proven a copy of its own data under
 * the true hypothesis, also with the copied member missing; not when the
 * row holds other data, nor under a hypothesis that puts the anchor's
 * volume byte in another row. */
START_TEST(t_parity_copy)
{
	struct pc_fix f;
	pc_setup(&f, 5, RK_ALG_LEFT_SYMMETRIC);
	uint8_t **m = f.m;
	const uint32_t *vr = f.vr;
	uint64_t at = f.at;   /* a sector of stripe 3's data block 1, copied by P */
	uint32_t p = f.sm.p_role;
	rk_test_fill_seeded(m[vr[1]] + at, 512, 77);
	memcpy(m[p] + at, m[vr[1]] + at, 512);
	rk_test_fill_seeded(m[vr[2]] + at + 512, 512, 78);   /* the next sector: two blocks of data */
	for (uint32_t k = 0; k < 512; k++)
		m[p][at + 512 + k] = m[vr[2]][at + 512 + k];
	rk_test_fill_seeded(m[vr[0]] + at + 512, 512, 79);
	for (uint32_t k = 0; k < 512; k++)
		m[p][at + 512 + k] ^= m[vr[0]][at + 512 + k];
	struct dt_ctx c;
	struct dt_hyp h;
	pc_open(&f, &c, &h);
	uint64_t v = 3 * 3 * (uint64_t)CHUNK + CHUNK + 8192;   /* stripe 3, data block 1 */
	struct dt_anchor a = { DT_EXT_SB, p, at, 0, v, DT_NONE, 0 };
	RK_REQUIRE(dt_parity_copy(&c, &h, &a, at, 0));
	h.role_img[vr[1]] = -1;   /* the copied member missing: the others are zero */
	RK_REQUIRE(dt_parity_copy(&c, &h, &a, at, 0));
	h.role_img[vr[1]] = (int32_t)vr[1];
	a.voff = v + CHUNK;       /* block 2's byte: its block is zero, not a copy */
	RK_REQUIRE(!dt_parity_copy(&c, &h, &a, at, 0));
	a.voff = v + 3 * (uint64_t)CHUNK;   /* the next stripe's: another row */
	RK_REQUIRE(!dt_parity_copy(&c, &h, &a, at, 0));
	struct dt_anchor b = { DT_EXT_SB, p, at + 512, 0, v + CHUNK + 512, DT_NONE, 0 };
	RK_REQUIRE(!dt_parity_copy(&c, &h, &b, at + 512, 0));   /* P is the XOR of two blocks there */
	h.role_img[vr[0]] = -1;   /* block 0 missing: P may be that XOR, a copy unproven */
	h.role_img[vr[2]] = -1;
	RK_REQUIRE(!dt_parity_copy(&c, &h, &b, at + 512, 0));
	dt_close(&c);
}
END_TEST

/* The roles of F's stripe in Q's slots 0 and 1 (*D0, *D1) and their
 * places in the volume's order (*J0, *J1). */
static void slots01(const struct pc_fix *f, uint32_t *d0, uint32_t *d1, uint32_t *j0, uint32_t *j1)
{
	*d0 = *d1 = NM;
	*j0 = *j1 = 0;
	for (uint32_t j = 0; j < f->g.ndata; j++) {
		if (f->slot[f->vr[j]] == 0)
			*d0 = f->vr[j], *j0 = j;
		else if (f->slot[f->vr[j]] == 1)
			*d1 = f->vr[j], *j1 = j;
	}
	RK_REQUIRE(*d0 < NM && *d1 < NM);
}

/* RAID-6's Q copies the data block in the syndrome's first slot
 * (coefficient 1) when the row's other data is zero: an anchor on Q is
 * then proven a copy of its own data, also with that member missing (seed
 * 2276: the true left-asymmetric-6 reading lost 118 anchors on Q to a
 * RAID-5 reading Q as data).  Not a block in another slot: Q holds g times
 * it, so equal bytes there are no copy. */
START_TEST(t_q_copy)
{
	struct pc_fix f;
	pc_setup(&f, 6, RK_ALG_LEFT_ASYMMETRIC_6);
	uint32_t d0, d1, j0, j1;   /* the roles in slots 0 and 1, their volume order */
	slots01(&f, &d0, &d1, &j0, &j1);
	uint8_t **m = f.m;
	uint64_t at = f.at;
	uint32_t p = f.sm.p_role, q = f.sm.q_role;
	rk_test_fill_seeded(m[d0] + at, 512, 81);   /* Q = P = slot 0's sector */
	memcpy(m[q] + at, m[d0] + at, 512);
	memcpy(m[p] + at, m[d0] + at, 512);
	rk_test_fill_seeded(m[d1] + at + 512, 512, 82);   /* the next: slot 1's bytes, copied as they are */
	memcpy(m[q] + at + 512, m[d1] + at + 512, 512);
	memcpy(m[p] + at + 512, m[d1] + at + 512, 512);
	struct dt_ctx c;
	struct dt_hyp h;
	pc_open(&f, &c, &h);
	uint64_t row = 3 * (uint64_t)f.g.ndata * CHUNK;
	struct dt_anchor a = { DT_EXT_SB, q, at, 0, row + j0 * (uint64_t)CHUNK + 8192, DT_NONE, 0 };
	RK_REQUIRE(dt_parity_copy(&c, &h, &a, at, 1));
	h.role_img[d0] = -1;   /* the copied member missing: the others are zero */
	RK_REQUIRE(dt_parity_copy(&c, &h, &a, at, 1));
	h.role_img[d0] = (int32_t)d0;
	struct dt_anchor b = { DT_EXT_SB, q, at + 512, 0, row + j1 * (uint64_t)CHUNK + 8192 + 512, DT_NONE, 0 };
	RK_REQUIRE(!dt_parity_copy(&c, &h, &b, at + 512, 1));
	b.img = p;   /* the same bytes on P are a copy */
	RK_REQUIRE(dt_parity_copy(&c, &h, &b, at + 512, 0));
	dt_close(&c);
}
END_TEST

/* An ext4 inode on P is a copy of its row's data when the row's other
 * data is zero in the inode's own bytes, whatever the rest of its sector
 * holds (seed 2619: inode 1's times on one member, inode 2 on P). */
START_TEST(t_parity_copy_inode)
{
	struct pc_fix f;
	pc_setup(&f, 5, RK_ALG_LEFT_SYMMETRIC);
	uint8_t **m = f.m;
	const uint32_t *vr = f.vr;
	uint64_t at = f.at;
	uint32_t p = f.sm.p_role;
	rk_test_fill_seeded(m[vr[1]] + at + 128, 128, 83);   /* the inode: 128 bytes at +128 */
	rk_test_fill_seeded(m[vr[0]] + at, 12, 84);          /* another member's bytes before it */
	for (uint32_t k = 0; k < 512; k++)
		m[p][at + k] = m[vr[0]][at + k] ^ m[vr[1]][at + k];
	struct dt_ctx c;
	struct dt_hyp h;
	pc_open(&f, &c, &h);
	c.ext.isz = 128;
	uint64_t v = 3 * 3 * (uint64_t)CHUNK + CHUNK + 8192 + 128;   /* stripe 3, data block 1 */
	struct dt_anchor a = { DT_EXT_INO, p, at + 128, 0, v, DT_NONE, 0 };
	RK_REQUIRE(dt_parity_copy(&c, &h, &a, at + 128, 0));
	h.role_img[vr[1]] = -1;   /* its member missing too */
	RK_REQUIRE(dt_parity_copy(&c, &h, &a, at + 128, 0));
	h.role_img[vr[1]] = (int32_t)vr[1];
	a.kind = DT_EXT_SB;       /* another kind: its whole sector must be a copy */
	RK_REQUIRE(!dt_parity_copy(&c, &h, &a, at + 128, 0));
	dt_close(&c);
}
END_TEST

/* Parity on a zero block (placement) where the row's data XOR to zero:
 * two data blocks equal to each other.  Random equal blocks are what a
 * parity copy read as data looks like, and count; a fill pattern (0xFF,
 * as NTFS's $LogFile holds) is the row's own data and does not (seed 2516:
 * a RAID-4 of 3 lost to a RAID-5 reading over such rows).  A RAID-5 of 3
 * whose two data blocks are equal in every row and whose parity is zero. */
START_TEST(t_placement_fill)
{
	for (int fill = 0; fill < 2; fill++) {
		struct rk_geom g;
		RK_REQUIRE(!rk_geom_init(&g, 5, RK_ALG_LEFT_SYMMETRIC, CHUNK, 3, MEMBER));
		uint8_t *m[3];
		for (uint32_t r = 0; r < 3; r++)
			RK_REQUIRE((m[r] = calloc(1, MEMBER)) != NULL);
		for (uint64_t st = 0; st < g.nstripes; st++) {
			uint32_t vr[3], slot[3];
			struct rk_stripe_map sm = { .vol_role = vr, .slot = slot };
			RK_REQUIRE(!rk_geom_stripe_map(&g, st, &sm));
			if (fill)
				memset(m[vr[0]] + sm.member_off, 0xFF, CHUNK);
			else
				rk_test_fill_seeded(m[vr[0]] + sm.member_off, CHUNK, st + 1);
			memcpy(m[vr[1]] + sm.member_off, m[vr[0]] + sm.member_off, CHUNK);
		}
		for (uint32_t r = 0; r < 3; r++) {
			rk_test_spit(rk_test_members()[r], m[r], MEMBER);
			free(m[r]);
		}
		struct dt_ctx c;
		memset(&c, 0, sizeof c);
		RK_REQUIRE(!dt_open(&c, rk_test_members(), 3));
		struct dt_hyp h;
		dt_test_hyp_roles(&h, &g, 3);
		dt_check_redundancy(&c, &h, 64, 0);
		RK_REQUIRE(h.rows_nz > 0 && h.rows_ok == h.rows_nz);
		RK_REQUIRE_MSG(fill ? h.place_bad == 0 : h.place_bad == h.rows_nz, "%s: %llu of %llu rows placed wrongly",
		               fill ? "fill" : "random", (unsigned long long)h.place_bad, (unsigned long long)h.rows_nz);
		dt_close(&c);
	}
}
END_TEST

/* Two gates of the answer (seeds 1165 and 1049): a linear member of random
 * bytes and no anchor; an image left out that holds text while a role is
 * missing and nothing was checked.  Images: text, random, zeros, text. */
START_TEST(t_gates_left_out)
{
	for (uint32_t i = 0; i < NM; i++) {
		uint8_t *b = calloc(1, MEMBER);
		RK_REQUIRE(b != NULL);
		for (uint32_t k = 0; i != 2 && k < MEMBER; k++)
			b[k] = (uint8_t)("the quick brown fox jumps over the lazy dog\n"[k % 44]);
		if (i == 1)
			rk_test_fill_seeded(b, MEMBER, 5);
		rk_test_spit(rk_test_members()[i], b, MEMBER);
		free(b);
	}
	struct dt_ctx c;
	memset(&c, 0, sizeof c);
	RK_REQUIRE(!dt_open(&c, rk_test_members(), NM));
	struct rk_geom g;
	struct dt_hyp h;
	RK_REQUIRE(!rk_geom_init(&g, RK_LEVEL_LINEAR, 0, 0, 2, MEMBER));
	dt_test_hyp_roles(&h, &g, 2);        /* text, random */
	RK_REQUIRE(dt_linear_member_unproven(&c, &h));
	h.role_img[1] = 3;                   /* text, text */
	RK_REQUIRE(!dt_linear_member_unproven(&c, &h));
	h.role_img[1] = 2;                   /* text, zeros: a sparse volume's end */
	RK_REQUIRE(!dt_linear_member_unproven(&c, &h));
	h.role_img[1] = 1;
	dt_anchor_push(&c, &(struct dt_anchor){ DT_EXT_SB, 1, 4096, 0, 4096, DT_NONE, 0 });
	RK_REQUIRE(!dt_linear_member_unproven(&c, &h));   /* an anchor ties it */
	/* two roles missing: an image left out is never refuted (one is:
	 * t_gate_refuted) */
	RK_REQUIRE(!rk_geom_init(&g, 6, RK_ALG_LEFT_SYMMETRIC, CHUNK, 4, MEMBER));
	dt_test_hyp_roles(&h, &g, 2);        /* text, random, missing, missing; left out: zeros, text */
	h.missing = 2;
	RK_REQUIRE(dt_unchecked_left_out(&c, &h));
	h.checked = 1;
	h.rows_nz = 8;                       /* redundancy verified: nothing to fear */
	RK_REQUIRE(!dt_unchecked_left_out(&c, &h));
	h.checked = 0;
	h.rows_nz = 0;
	h.role_img[1] = 3;                   /* left out: random (with the anchor pushed above), zeros */
	RK_REQUIRE(dt_unchecked_left_out(&c, &h));   /* an anchor is structure (seed 1505) */
	c.nanc = 0;
	RK_REQUIRE(!dt_unchecked_left_out(&c, &h));   /* random bytes and zeros alone: junk */
	dt_close(&c);
}
END_TEST

/* The gate on an image left out while a role is missing and nothing
 * checks the answer, with one role missing: the true member left out
 * fits the role (parity holds with it there) and holds the answer back;
 * text in its place (a slice of another disk: seed 2504) is refuted --
 * no rebuilt block of the role in it, parity fails with it there at
 * every start it may have -- and does not. */
START_TEST(t_gate_refuted)
{
	struct rk_geom g;
	RK_REQUIRE(!rk_geom_init(&g, 5, RK_ALG_LEFT_SYMMETRIC, CHUNK, NM, MEMBER));
	rk_dev *devs[NM];
	uint64_t offs[NM] = { 0 };
	for (uint32_t r = 0; r < NM; r++)
		RK_REQUIRE(rk_dev_create(&devs[r], rk_test_members()[r], MEMBER) == RK_OK);
	rk_vol *v;
	RK_REQUIRE(rk_vol_open(&v, &g, devs, offs) == RK_OK);
	size_t vl = (size_t)g.volume_size;
	char *d = malloc(vl + 32);
	RK_REQUIRE(d);
	for (size_t k = 0; k < vl; k += 24)   /* numbered lines of text: structured, every row different */
		snprintf(d + k, 25, "line %09u: text...\n", (unsigned)(k / 24 % 1000000000u));
	RK_REQUIRE(rk_vol_write(v, d, vl, 0) == RK_OK);
	rk_vol_close(v);
	for (uint32_t r = 0; r < NM; r++)
		rk_dev_close(devs[r]);
	for (size_t k = 0; k < vl; k++)
		d[k] = "the quick brown fox jumps over the lazy dog\n"[k % 44];
	rk_test_spit(rk_test_members()[NM], d, MEMBER);
	free(d);
	for (int text = 0; text < 2; text++) {
		/* images: the members 0..2, then (left out) member 3 or the text */
		char *paths[NM];
		for (uint32_t i = 0; i < NM; i++)
			paths[i] = rk_test_members()[i == NM - 1 && text ? NM : i];
		struct dt_ctx c;
		memset(&c, 0, sizeof c);
		RK_REQUIRE(!dt_open(&c, paths, NM));
		struct dt_hyp h;
		dt_test_hyp_roles(&h, &g, NM - 1);   /* role 3 missing */
		h.missing = 1;
		RK_REQUIRE_MSG(dt_unchecked_left_out(&c, &h) == !text, "%s left out: gate %s", text ? "text" : "the member",
		               text ? "holds" : "does not hold");
		dt_close(&c);
	}
}
END_TEST

/* Readings alike or not (dt_equivalent): a RAID-5 of 3 with a role gone,
 * left-asymmetric and left-symmetric with the images placed as seed 1571
 * had them, rebuild different bytes (not alike); a RAID-5 of 3 and a
 * RAID-6 of 4 keeping its Q on the last member, Q and the same data role
 * gone, rebuild by the same XOR (alike). */
START_TEST(t_equivalent_rebuilds)
{
	struct rk_geom g5a, g5s, g6;
	struct dt_hyp a, b, q;
	RK_REQUIRE(!rk_geom_init(&g5a, 5, RK_ALG_LEFT_ASYMMETRIC, CHUNK, 3, MEMBER));
	RK_REQUIRE(!rk_geom_init(&g5s, 5, RK_ALG_LEFT_SYMMETRIC, CHUNK, 3, MEMBER));
	RK_REQUIRE(!rk_geom_init(&g6, 6, RK_ALG_LEFT_SYMMETRIC_6, CHUNK, 4, MEMBER));
	dt_test_hyp_roles(&a, &g5a, 2);      /* images 0, 1, role 2 gone */
	a.missing = 1;
	dt_test_hyp_roles(&b, &g5s, 0);      /* role 0 gone, image 1, image 0 */
	b.role_img[1] = 1;
	b.role_img[2] = 0;
	b.missing = 1;
	RK_REQUIRE(dt_equivalent(&a, &a));
	RK_REQUIRE(!dt_equivalent(&a, &b));
	dt_test_hyp_roles(&a, &g5s, 2);      /* left-symmetric: images 0, 1, role 2 gone */
	a.missing = 1;
	dt_test_hyp_roles(&q, &g6, 2);       /* the same, and Q (role 3) gone */
	q.missing = 2;
	RK_REQUIRE(dt_equivalent(&a, &q));
	RK_REQUIRE(dt_equivalent(&q, &a));
}
END_TEST

/* The parity scan over a RAID-6 of 5 (random data, every member present)
 * and an image of random bytes as large: with all six the rows hold
 * nothing, with the sixth left out they hold P and Q, and that is what
 * the scan reports -- a RAID-6 of 5 (make check's seed 105, a sample
 * disk beside a RAID-6 of 5, was read as a RAID-6 of 6 with two members
 * gone: the scan kept only RAID-5 verdicts with an image left out). */
START_TEST(t_pscan_raid6_beside)
{
	struct rk_geom g;
	RK_REQUIRE(!rk_geom_init(&g, 6, RK_ALG_LEFT_SYMMETRIC, 64 * 1024, 5, 12u << 20));
	rk_dev *devs[5];
	uint64_t offs[5] = { 0 };
	char *paths[6];
	name_paths("r", 6, paths);
	for (uint32_t r = 0; r < 5; r++)
		RK_REQUIRE(rk_dev_create(&devs[r], paths[r], 12u << 20) == RK_OK);
	fill_volume(&g, devs, offs, 5, 21);
	uint8_t *j = rk_test_random_bytes(12u << 20, 22);
	rk_test_spit(paths[5], j, 12u << 20);
	free(j);
	struct dt_ctx c;
	memset(&c, 0, sizeof c);
	RK_REQUIRE(!dt_open(&c, paths, 6));
	dt_pscan(&c);
	RK_REQUIRE_MSG(c.ps6_mask == 0x1f && c.ps6_lo == 5 && c.ps6_hi == 5, "RAID-6 rows over images %llx, %u..%u members",
	               (unsigned long long)c.ps6_mask, c.ps6_lo, c.ps6_hi);
	dt_close(&c);
	free_paths(paths, 6);
}
END_TEST

/* Rows whose every block is the same say nothing either way (seed 6109:
 * files of repeated bytes in every data chunk of a row, and their
 * parity, on all 6 members).  A RAID-5 of 6 whose every fifth stripe
 * holds one block five times (so its parity is that block too): the scan
 * still finds the six members' XOR vanishing; with the copies counted,
 * one such row in ten called the set copies. */
START_TEST(t_pscan_same_rows)
{
	struct rk_geom g;
	RK_REQUIRE(!rk_geom_init(&g, 5, RK_ALG_LEFT_SYMMETRIC, 64 * 1024, 6, 12u << 20));
	rk_dev *devs[6];
	uint64_t offs[6] = { 0 };
	char *paths[6];
	name_paths("s", 6, paths);
	for (uint32_t r = 0; r < 6; r++)
		RK_REQUIRE(rk_dev_create(&devs[r], paths[r], 12u << 20) == RK_OK);
	uint8_t *d = rk_test_random_bytes((size_t)g.volume_size, 61);
	for (uint64_t s = 0; s < g.nstripes; s += 5)
		for (uint32_t k = 1; k < g.ndata; k++)
			memcpy(d + (s * g.ndata + k) * g.chunk, d + s * g.ndata * g.chunk, g.chunk);
	write_volume(&g, devs, offs, 6, d, g.volume_size);
	free(d);
	struct dt_ctx c;
	memset(&c, 0, sizeof c);
	RK_REQUIRE(!dt_open(&c, paths, 6));
	dt_pscan(&c);
	RK_REQUIRE_MSG(c.ps5_mask == 0x3f && c.ps5_lo == 6 && c.ps5_hi == 6, "RAID-5 rows over images %llx, %u..%u members",
	               (unsigned long long)c.ps5_mask, c.ps5_lo, c.ps5_hi);
	dt_close(&c);
	free_paths(paths, 6);
}
END_TEST

/* Pscans three 12 MiB images, the second a copy of the first and the
 * third THIRD(first byte) for each byte: the RAID-6 images the scan sees. */
static uint64_t pscan_copy_pair(uint8_t (*third)(uint8_t))
{
	const size_t n = 12u << 20;
	char *paths[3];
	uint8_t *x = rk_test_random_bytes(n, 31), *y = malloc(n);
	RK_REQUIRE(x && y);
	for (size_t k = 0; k < n; k++)
		y[k] = third(x[k]);
	name_paths("cp", 3, paths);
	for (uint32_t r = 0; r < 3; r++)
		rk_test_spit(paths[r], r < 2 ? x : y, n);
	free(x);
	free(y);
	struct dt_ctx c;
	memset(&c, 0, sizeof c);
	RK_REQUIRE(!dt_open(&c, paths, 3));
	dt_pscan(&c);
	uint64_t m = c.ps6_mask;
	dt_close(&c);
	free_paths(paths, 3);
	return m;
}

static uint8_t times_g(uint8_t b) { return rk_gf_mul(b, 2); }
static uint8_t other_bytes(uint8_t b) { return (uint8_t)(b * 7u + 13u); }

/* Two copies of a block and a third block pass the XOR test for Q (the
 * third is the XOR of all) whatever the third holds; RAID-6 gives that
 * row only for a lone data block, its Q g^j times it (seed 4901: a
 * RAID-10 o3 of 4's copies lined up by the scan were read as RAID-6 and
 * only RAID-6 geometries got the scan's bonus). */
START_TEST(t_pscan_copies_not_q)
{
	RK_REQUIRE_MSG(pscan_copy_pair(times_g) == 0x7, "a lone block's P and Q (g times it) not read as RAID-6");
	RK_REQUIRE_MSG(pscan_copy_pair(other_bytes) == 0, "two copies beside unrelated bytes read as RAID-6");
}
END_TEST

/* A RAID-5 of 6 whose members each hold 1.5 MiB of random junk before
 * the data (one start for all), on images of 5 MiB (a small volume), the
 * data random too: the rows in the junk fail, so over the whole images
 * only some vanish, which reads as members missing (seed 2311: a RAID-5
 * of 10 read as one of 11 with a member gone).  Past the last head
 * sector where the rows fail, every row vanishes: 6 members, none
 * missing, starting there.  (Each image's end of junk would not do:
 * random data looks like junk to the end of the head.) */
START_TEST(t_pscan_junk_head)
{
	const uint64_t junk = 1536u << 10, member = 3584u << 10;
	struct rk_geom g;
	RK_REQUIRE(!rk_geom_init(&g, 5, RK_ALG_LEFT_SYMMETRIC, 64 * 1024, 6, member));
	rk_dev *devs[6];
	uint64_t offs[6];
	char *paths[6];
	name_paths("j", 6, paths);
	for (uint32_t r = 0; r < 6; r++) {
		uint8_t *j = rk_test_random_bytes((size_t)junk, 40 + r);
		rk_test_make_file(paths[r], junk + member);
		rk_test_write_at(paths[r], j, (size_t)junk, 0);
		free(j);
		RK_REQUIRE(rk_dev_open(&devs[r], paths[r], RK_DEV_RDWR) == RK_OK);
		offs[r] = junk;
	}
	fill_volume(&g, devs, offs, 6, 23);
	struct dt_ctx c;
	memset(&c, 0, sizeof c);
	RK_REQUIRE(!dt_open(&c, paths, 6));
	dt_pscan(&c);
	RK_REQUIRE_MSG(c.ps5_mask == 0x3f && c.ps5_lo == 6 && c.ps5_hi == 6 && c.ps_has_ioff,
	               "RAID-5 rows over images %llx, %u..%u members, starts %s", (unsigned long long)c.ps5_mask, c.ps5_lo,
	               c.ps5_hi, c.ps_has_ioff ? "found" : "not found");
	for (uint32_t r = 0; r < 6; r++)
		RK_REQUIRE_MSG(c.ps_ioff[r] == junk, "image %u: data start %llu", r, (unsigned long long)c.ps_ioff[r]);
	dt_close(&c);
	free_paths(paths, 6);
}
END_TEST

/* The images r0..r{N-1} of a fresh array of LEVEL (left-symmetric, 64
 * KiB chunks, members of 12 MiB) whose volume holds random bytes in its
 * first LEN bytes only, and r{N}: 8 MiB of random bytes, no member. */
static void sparse_array(int level, uint32_t n, uint64_t len, char **paths)
{
	struct rk_geom g;
	RK_REQUIRE(!rk_geom_init(&g, level, RK_ALG_LEFT_SYMMETRIC, 64 * 1024, n, 12u << 20));
	rk_dev *devs[8];
	uint64_t offs[8] = { 0 };
	name_paths("r", n + 1, paths);
	for (uint32_t r = 0; r <= n; r++)
		unlink(paths[r]);
	for (uint32_t r = 0; r < n; r++)
		RK_REQUIRE(rk_dev_create(&devs[r], paths[r], 12u << 20) == RK_OK);
	uint8_t *d = rk_test_random_bytes((size_t)len, 50 + n);
	write_volume(&g, devs, offs, n, d, len);
	free(d);
	uint8_t *j = rk_test_random_bytes(8u << 20, 51);
	rk_test_spit(paths[n], j, 8u << 20);
	free(j);
}

/* A sparse volume keeps its data in the head of each member, where the
 * rows are not sampled (seed 2314: a RAID-5 of 12 at 14 % full beside 8
 * MiB of random bytes, read as a RAID-0: no sampled row held data).  A
 * RAID-5 of 6 with data in its first 7.5 MiB (1.5 MiB a member) beside
 * such an image: its head shows the 6 members' XOR vanishing.  A RAID-6
 * of 5 so, its members alone: the head shows Q, and not RAID-5 (without
 * one member a RAID-6's rows vanish where that one holds Q, a chunk in
 * five: t_raid6_layouts read as RAID-5 of 4 before the head's verdict
 * weighed the sectors that fail). */
START_TEST(t_pscan_sparse_head)
{
	char *paths[8];
	sparse_array(5, 6, 7680u << 10, paths);
	struct dt_ctx c;
	memset(&c, 0, sizeof c);
	RK_REQUIRE(!dt_open(&c, paths, 7));
	dt_pscan(&c);
	RK_REQUIRE_MSG(c.ps5_mask == 0x3f && c.ps5_lo == 6 && c.ps5_hi == 6, "RAID-5 rows over images %llx, %u..%u members",
	               (unsigned long long)c.ps5_mask, c.ps5_lo, c.ps5_hi);
	dt_close(&c);
	free_paths(paths, 7);
	sparse_array(6, 5, 4608u << 10, paths);
	memset(&c, 0, sizeof c);
	RK_REQUIRE(!dt_open(&c, paths, 5));   /* the members alone */
	dt_pscan(&c);
	RK_REQUIRE_MSG(c.ps6_mask == 0x1f && c.ps6_lo == 5 && c.ps6_hi == 5 && !c.ps5_mask,
	               "RAID-6 rows over images %llx, %u..%u members; RAID-5 over %llx", (unsigned long long)c.ps6_mask,
	               c.ps6_lo, c.ps6_hi, (unsigned long long)c.ps5_mask);
	dt_close(&c);
	free_paths(paths, 6);
}
END_TEST

RK_TEST_SUITE("detect_rows", { "rows", 60, rk_test_tmpdir_make, rk_test_tmpdir_remove, 0,
	  RK_TESTS(RK_TEST(t_rows_spread), RK_TEST(t_mixed_rows), RK_TEST(t_parity_copy), RK_TEST(t_q_copy), RK_TEST(t_parity_copy_inode), RK_TEST(t_gates_left_out), RK_TEST(t_equivalent_rebuilds), RK_TEST(t_placement_fill), RK_TEST(t_pscan_raid6_beside), RK_TEST(t_pscan_copies_not_q), RK_TEST(t_pscan_junk_head), RK_TEST(t_pscan_sparse_head), RK_TEST(t_pscan_same_rows),
	           RK_TEST(t_gate_refuted)) })
