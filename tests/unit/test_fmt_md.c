/* test_fmt_md.c: Linux md superblocks (fmt_md1.c, fmt_md090.c) read into
 * views, against arrays the Linux md driver made (tests/fixtures/kernel,
 * their manifest.json facts restated here), both byte orders of 0.90, and
 * hostile superblocks refused with a sentence. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rk_dev.h"
#include "rk_fmt.h"
#include "rk_le.h"
#include "helpers/rk_test.h"

/* One member's view as the fixture's manifest describes it. */
struct expect {
	const char *fixture, *member, *origin;
	int32_t level;
	uint32_t layout, nroles, role;
	uint64_t chunk, data_offset, volume_size, events;
};

static const struct expect cases[] = {
	{ "md12-raid5-ls-4x64k", "m2", "md 1.2", 5, 2, 4, 2, 65536, 1048576, 22020096, 37 },
	{ "md11-raid5-rs-4x64k", "m1", "md 1.1", 5, 3, 4, 1, 65536, 0, 0, 0 },
	{ "md10-raid5-la-4x32k", "m3", "md 1.0", 5, 0, 4, 3, 32768, 0, 0, 0 },
	{ "md12-raid10-o2-5x32k", "m4", "md 1.2", 10, 0x10201, 5, 4, 32768, 1048576, 0, 0 },
	{ "md12-linear-3x", "m1", "md 1.2", -1, 0, 3, 1, 0, 1048576, 22020096, 0 },
	{ "md090-raid6-ls-5x64k", "m3", "md 0.90", 6, 2, 5, 3, 65536, 0, 0, 0 },
	{ "md090-raid0-3x64k", "m2", "md 0.90", 0, 0, 3, 2, 65536, 0, 24969216, 0 },
};

/* The views of member PATH; fails the test when none. */
static void read_views(const char *path, struct rk_foreign_read *f)
{
	rk_dev *d;
	ck_assert_msg(rk_dev_open(&d, path, RK_DEV_RDONLY) == RK_OK, "%s: %s", path, rk_errmsg());
	ck_assert_msg(rk_foreign_read(d, path, f) == RK_OK, "%s: %s", path, rk_errmsg());
	rk_dev_close(d);
	ck_assert_msg(f->fmt && f->nviews == 1, "%s: %s", path, f->why);
}

START_TEST(t_fixture_views)
{
	const struct expect *x = &cases[_i];
	char img[700];
	if (!rk_test_unpack_kernel(x->fixture, x->member, img, sizeof img))
		return;
	struct rk_foreign_read f;
	read_views(img, &f);
	const struct rk_sb *v = &f.views[0];
	ck_assert_str_eq(rk_view_origin_name(v), x->origin);
	ck_assert_int_eq(v->level, x->level);
	ck_assert_uint_eq(v->layout, x->layout);
	ck_assert_uint_eq(v->nroles, x->nroles);
	ck_assert_uint_eq(v->this_role, x->role);
	ck_assert_uint_eq(v->chunk, x->chunk);
	if (x->data_offset)
		ck_assert_uint_eq(v->data_offset, x->data_offset);
	if (x->volume_size)
		ck_assert_uint_eq(v->volume_size, x->volume_size);
	if (x->events)
		ck_assert_uint_eq(v->events, x->events);
	ck_assert_uint_eq(v->roles[v->this_role].state, RK_ROLE_ACTIVE);
	ck_assert_mem_eq(v->roles[v->this_role].member_uuid, v->member_uuid, 16);
	ck_assert_uint_eq(v->array_state, RK_ARRAY_CLEAN);
	rk_foreign_read_free(&f);
	unlink(img);
}
END_TEST

/* The md 0.90 superblock of the member at PATH: its offset, bytes in SB. */
static uint64_t md090_sb(const char *path, uint8_t sb[4096], uint64_t *size)
{
	FILE *fp = fopen(path, "r+b");
	ck_assert(fp);
	ck_assert(fseek(fp, 0, SEEK_END) == 0);
	*size = (uint64_t)ftell(fp);
	uint64_t at = (*size & ~(uint64_t)65535) - 65536;
	ck_assert(fseek(fp, (long)at, SEEK_SET) == 0);
	ck_assert_uint_eq(fread(sb, 1, 4096, fp), 4096);
	fclose(fp);
	return at;
}

/* Writes SB back at AT of PATH. */
static void put_sb(const char *path, const uint8_t *sb, size_t len, uint64_t at)
{
	FILE *fp = fopen(path, "r+b");
	ck_assert(fp);
	ck_assert(fseek(fp, (long)at, SEEK_SET) == 0);
	ck_assert_uint_eq(fwrite(sb, 1, len, fp), len);
	fclose(fp);
}

/* A 0.90 superblock as a big-endian host writes it: every word swapped,
 * 64-bit counters high word first, checksum in the same order. */
static void to_big_endian(uint8_t *sb)
{
	for (unsigned i = 0; i < 1024; i++) {
		uint32_t w = rk_get_le32(sb + 4 * i);
		sb[4 * i] = (uint8_t)(w >> 24);
		sb[4 * i + 1] = (uint8_t)(w >> 16);
		sb[4 * i + 2] = (uint8_t)(w >> 8);
		sb[4 * i + 3] = (uint8_t)w;
	}
	for (unsigned w = 39; w <= 41; w += 2) {   /* events, reshape_position */
		uint8_t t[4];
		memcpy(t, sb + 4 * w, 4);
		memcpy(sb + 4 * w, sb + 4 * (w + 1), 4);
		memcpy(sb + 4 * (w + 1), t, 4);
	}
}

START_TEST(t_md090_big_endian)
{
	char img[700];
	if (!rk_test_unpack_kernel("md090-raid6-ls-5x64k", "m1", img, sizeof img))
		return;
	struct rk_foreign_read le, be;
	read_views(img, &le);
	uint8_t sb[4096];
	uint64_t size, at = md090_sb(img, sb, &size);
	to_big_endian(sb);
	put_sb(img, sb, sizeof sb, at);
	read_views(img, &be);
	ck_assert_str_eq(rk_view_origin_name(&be.views[0]), "md 0.90 (big-endian)");
	/* the same array, member, role, counters and role table */
	ck_assert_mem_eq(be.views[0].array_uuid, le.views[0].array_uuid, 16);
	ck_assert_uint_eq(be.views[0].events, le.views[0].events);
	ck_assert_uint_eq(be.views[0].this_role, le.views[0].this_role);
	ck_assert_uint_eq(be.views[0].volume_size, le.views[0].volume_size);
	ck_assert_uint_eq(be.views[0].nentries, le.views[0].nentries);
	ck_assert_mem_eq(be.views[0].roles, le.views[0].roles, le.views[0].nentries * sizeof le.views[0].roles[0]);
	rk_foreign_read_free(&le);
	rk_foreign_read_free(&be);
	unlink(img);
}
END_TEST

/* md 1.x's checksum over SB (mdadm's calc_sb_1_csum). */
static void md1_csum(uint8_t *sb)
{
	rk_put_le32(sb + 216, rk_md1_csum(sb, 256 + (size_t)rk_get_le32(sb + 220) * 2));
}

/* The member's md 1.2 superblock changed by EDIT (checksum made right when
 * FIX) must be refused with a sentence holding WORDS. */
static void refused(void (*edit)(uint8_t *sb), int fix, const char *words)
{
	char img[700];
	if (!rk_test_unpack_kernel("md12-raid5-ls-4x64k", "m0", img, sizeof img))
		return;
	uint8_t sb[4096];
	FILE *fp = fopen(img, "rb");
	ck_assert(fp && fseek(fp, 4096, SEEK_SET) == 0 && fread(sb, 1, sizeof sb, fp) == sizeof sb);
	fclose(fp);
	edit(sb);
	if (fix)
		md1_csum(sb);
	put_sb(img, sb, sizeof sb, 4096);
	rk_dev *d;
	struct rk_foreign_read f;
	ck_assert(rk_dev_open(&d, img, RK_DEV_RDONLY) == RK_OK);
	ck_assert(rk_foreign_read(d, img, &f) == RK_OK);
	rk_dev_close(d);
	ck_assert_msg(f.fmt != NULL, "the md signature is still there");
	ck_assert_uint_eq(f.nviews, 0);
	ck_assert_msg(strstr(f.why, words), "'%s' lacks '%s'", f.why, words);
	rk_foreign_read_free(&f);
	unlink(img);
}

static void flip_level(uint8_t *sb) { sb[72] ^= 0x40; }
static void many_disks(uint8_t *sb) { rk_put_le32(sb + 92, 5000); }
static void huge_offset(uint8_t *sb) { rk_put_le64(sb + 128, UINT64_MAX / 256); }
static void two_in_role(uint8_t *sb) { rk_put_le16(sb + 256 + 2, 0); }

START_TEST(t_hostile)
{
	refused(flip_level, 0, "checksum");
	refused(many_disks, 1, "raid devices");
	refused(huge_offset, 1, "overflow");
	refused(two_in_role, 1, "two device slots");
}
END_TEST

RK_TEST_SUITE("fmt_md", { "md", 60, NULL, NULL, 0,
	  RK_TESTS(RK_TEST_LOOP(t_fixture_views, 0, (int)(sizeof cases / sizeof cases[0])),
	           RK_TEST(t_md090_big_endian), RK_TEST(t_hostile)) })
