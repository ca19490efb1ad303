/* test_detect_align.c: members whose data starts differ, told by the
 * copies parity leaves (libmeta/detect_align.c) and proven by the parity
 * scan's rows (dt_pscan).  A sparse RAID-5 of 4 (one random sector per
 * chunk and data block, so every parity sector copies one data sector)
 * written behind zeros of four lengths, beside an image of zeros and one
 * of random bytes: the starts' differences are found, the zeros image
 * joins the members, the random one does not.  Members sharing one start
 * give nothing new (the rows at equal offsets say it), and images that
 * are no array give nothing, nor a RAID-10's copies one chunk apart. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "detect_int.h"
#include "rk_dev.h"
#include "rk_geom.h"
#include "rk_vol.h"
#include "helpers/rk_test.h"

#define NM 4u
#define CHUNK (64u * 1024u)
#define MEMBER (4u * 1024u * 1024u)

static const uint64_t varied[NM] = { 65536, 0, 3 * 4096 + 512, 1048576 + 1024 };
static const uint64_t same[NM] = { 8192, 8192, 8192, 8192 };

/* Writes the RAID-5's members to m0..m3, member r behind OFFS[r] zeros,
 * then m4 (zeros) and m5 (random bytes), MEMBER bytes each. */
static void write_images(const uint64_t *offs)
{
	struct rk_geom g;
	RK_REQUIRE(!rk_geom_init(&g, 5, RK_ALG_LEFT_SYMMETRIC, CHUNK, NM, MEMBER));
	uint8_t *m[NM];
	for (uint32_t r = 0; r < NM; r++)
		RK_REQUIRE((m[r] = calloc(1, offs[r] + MEMBER)) != NULL);
	for (uint64_t s = 0; s < g.nstripes; s++) {
		uint32_t vr[NM], slot[NM];
		struct rk_stripe_map sm = { .vol_role = vr, .slot = slot };
		RK_REQUIRE(!rk_geom_stripe_map(&g, s, &sm));
		for (uint32_t j = 0; j < g.ndata; j++) {
			uint64_t at = sm.member_off + (s * 7 + j * 3) % (CHUNK / 512) * 512;
			uint8_t *d = m[vr[j]] + offs[vr[j]] + at, *p = m[sm.p_role] + offs[sm.p_role] + at;
			rk_test_fill_seeded(d, 512, s * 8 + j + 1);
			for (uint32_t k = 0; k < 512; k++)
				p[k] ^= d[k];
		}
	}
	for (uint32_t r = 0; r < NM; r++) {
		rk_test_spit(rk_test_members()[r], m[r], offs[r] + MEMBER);
		free(m[r]);
	}
	rk_test_make_file(rk_test_members()[NM], MEMBER);
	uint8_t *x = rk_test_random_bytes(MEMBER, 99);
	rk_test_spit(rk_test_members()[NM + 1], x, MEMBER);
	free(x);
}

START_TEST(t_align)
{
	write_images(varied);
	struct dt_ctx c;
	memset(&c, 0, sizeof c);
	RK_REQUIRE(!dt_open(&c, rk_test_members(), NM + 2));
	uint64_t mask = 0, rel[64];
	uint64_t blank = 0;
	RK_REQUIRE(dt_align_starts(&c, &mask, rel, &blank));
	RK_REQUIRE_MSG(blank == 1u << NM, "blank %llx", (unsigned long long)blank);
	RK_REQUIRE_MSG(mask == 0xF, "mask %llx", (unsigned long long)mask);
	for (uint32_t r = 0; r < NM; r++)
		RK_REQUIRE_MSG(rel[r] == varied[r], "image %u: %llu, not %llu", r, (unsigned long long)rel[r],
		               (unsigned long long)varied[r]);
	/* the scan proves them by the rows: the members and the zeros image,
	 * 4 with data, 5 at most */
	dt_pscan(&c);
	RK_REQUIRE(c.ps_has_rel && !c.ps_has_ioff);
	RK_REQUIRE_MSG(c.ps5_mask == 0x1F && c.ps5_lo == 4 && c.ps5_hi == 5, "mask %llx lo %u hi %u",
	               (unsigned long long)c.ps5_mask, c.ps5_lo, c.ps5_hi);
	for (uint32_t r = 0; r < NM; r++)
		RK_REQUIRE(c.ps_rel[r] == varied[r]);
	dt_close(&c);
}
END_TEST

START_TEST(t_align_none)
{
	write_images(same);
	struct dt_ctx c;
	memset(&c, 0, sizeof c);
	RK_REQUIRE(!dt_open(&c, rk_test_members(), NM + 2));
	uint64_t mask = 0, rel[64], blank = 0;
	RK_REQUIRE(!dt_align_starts(&c, &mask, rel, &blank));   /* one start: nothing new */
	dt_pscan(&c);
	RK_REQUIRE(!c.ps_has_rel);
	dt_close(&c);
	/* the zeros image, the random one and a second random one: no array */
	uint8_t *x = rk_test_random_bytes(MEMBER, 98);
	rk_test_spit(rk_test_members()[0], x, MEMBER);
	free(x);
	char *const three[] = { rk_test_members()[0], rk_test_members()[NM], rk_test_members()[NM + 1] };
	memset(&c, 0, sizeof c);
	RK_REQUIRE(!dt_open(&c, three, 3));
	RK_REQUIRE(!dt_align_starts(&c, &mask, rel, &blank));
	dt_close(&c);
}
END_TEST

/* A RAID-10 o2 of 4 (each chunk's copy on the next member one chunk
 * on), data in every 4 KiB: its copies line up at starts one chunk
 * apart, and rows there vanish as parity's would; the scan sees the
 * pairs of copies in its rows and keeps no starts. */
START_TEST(t_align_mirror)
{
	struct rk_geom g;
	RK_REQUIRE(!rk_geom_init(&g, 10, 0x10201, CHUNK, NM, MEMBER));
	rk_dev *devs[NM];
	uint64_t offs[NM] = { 0, 0, 0, 0 };
	for (uint32_t r = 0; r < NM; r++)
		RK_REQUIRE(rk_dev_create(&devs[r], rk_test_members()[r], MEMBER) == RK_OK);
	rk_vol *v;
	RK_REQUIRE(rk_vol_open(&v, &g, devs, offs) == RK_OK);
	uint8_t *d = calloc(1, (size_t)g.volume_size);
	RK_REQUIRE(d);
	for (uint64_t at = 0; at + 512 <= g.volume_size; at += 4096 + 512)
		rk_test_fill_seeded(d + at, 512, at + 1);
	RK_REQUIRE(rk_vol_write(v, d, (size_t)g.volume_size, 0) == RK_OK);
	rk_vol_close(v);
	for (uint32_t r = 0; r < NM; r++)
		rk_dev_close(devs[r]);
	free(d);
	struct dt_ctx c;
	memset(&c, 0, sizeof c);
	RK_REQUIRE(!dt_open(&c, rk_test_members(), NM));
	dt_pscan(&c);
	RK_REQUIRE_MSG(!c.ps_has_rel, "starts %llu %llu %llu %llu", (unsigned long long)c.ps_rel[0],
	               (unsigned long long)c.ps_rel[1], (unsigned long long)c.ps_rel[2], (unsigned long long)c.ps_rel[3]);
	dt_close(&c);
}
END_TEST

RK_TEST_SUITE("detect_align", { "align", 60, rk_test_tmpdir_make, rk_test_tmpdir_remove, 0,
	  RK_TESTS(RK_TEST(t_align), RK_TEST(t_align_none), RK_TEST(t_align_mirror)) })
