/* test_sb.c: the superblock codec, both copies, and the crash-safe write.
 *
 * Offsets are pinned with literal numbers (as e2fsprogs' tst_super_size.c
 * does) so that a change to the on-disk layout fails here before it ships;
 * spec/format.md lists the same numbers.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "rk_dev.h"
#include "rk_le.h"
#include "rk_sb.h"
#include "helpers/rk_test.h"

#define MiB (1024ull * 1024ull)
#define GiB (1024ull * MiB)

/* ---- helpers ---- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
	/* splitmix64: reproducible across runs and platforms */
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}
static uint64_t rndn(uint64_t n)
{
	return n ? rnd() % n : 0;
}
static void rnd_uuid(uint8_t *u)
{
	uint64_t a = rnd(), b = rnd();
	memcpy(u, &a, 8);
	memcpy(u + 8, &b, 8);
	u[0] |= 1;   /* never nil */
}

static struct rk_sb *sb_new(void)
{
	struct rk_sb *sb = calloc(1, sizeof *sb);
	ck_assert_ptr_nonnull(sb);
	return sb;
}

/* Recomputes the CRC of an encoded copy the way spec/format.md states it:
 * zlib crc32(0, ...) over sb_bytes with bytes 16..19 read as zero. */
static void fix_crc(uint8_t *buf)
{
	uint32_t n = rk_get_le32(buf + 12);
	rk_put_le32(buf + 16, 0);
	rk_put_le32(buf + 16, (uint32_t)crc32(0, buf, n));
}

/* A valid RAID-5 member: 4 roles + 1 spare, this member role 1. */
#define BASE_DEV (64 * MiB + 12345)
static struct rk_sb *make_base(void)
{
	struct rk_sb *sb = sb_new();
	struct rk_sb_params p = {
		.name = "base", .level = 5, .layout = 2, .chunk = 65536, .nroles = 4,
		.data_offset = 1 * MiB,
	};
	p.data_size = rk_sb_max_data_size(BASE_DEV, p.data_offset, p.chunk);
	ck_assert_uint_gt(p.data_size, 0);
	ck_assert_int_eq(rk_sb_init(sb, &p), RK_OK);
	sb->nentries = 5;
	sb->sb_bytes = rk_sb_bytes_for(5);
	sb->roles[4].state = RK_ROLE_SPARE;
	rnd_uuid(sb->roles[4].member_uuid);
	sb->events = 42;
	ck_assert_int_eq(rk_sb_set_member(sb, 1, BASE_DEV), RK_OK);
	return sb;
}

/* A random valid superblock: every level, role count, placement and
 * optional block. */
static void make_random(struct rk_sb *sb)
{
	static const int32_t levels[] = { -1, 0, 1, 4, 5, 6, 10 };
	memset(sb, 0, sizeof *sb);
	sb->version = RK_SB_VERSION;
	int32_t level = levels[rndn(7)];
	uint32_t minr = rk_sb_min_roles(level);
	uint32_t nroles = minr + (uint32_t)rndn(rndn(10) == 0 ? 300 : 12);
	uint32_t layout = 0;
	uint64_t chunk = 0;
	if (level == 4)
		layout = rndn(2) ? 5 : 0;
	if (level == 5)
		layout = (uint32_t)rndn(6);
	if (level == 6) {
		static const uint32_t l6[] = { 0, 1, 2, 3, 4, 5, 8, 9, 10, 16, 17, 18, 19, 20 };
		layout = l6[rndn(14)];
		if (nroles > 255)
			nroles = 255;
	}
	if (level == 10) {
		static const uint32_t l10[] = { 0x102, 0x201, 0x10201, 0x103, 0x202, 0x301, 0x20201, 0x40102 };
		do
			layout = l10[rndn(8)];
		while ((layout & 0xff) * ((layout >> 8) & 0xff) > nroles);
	}
	if (level != -1 && level != 1)
		chunk = 4096ull << rndn(13);
	int reshape = rndn(4) == 0, journal = rndn(3) == 0;
	uint32_t newroles = nroles + (uint32_t)rndn(3);
	if (newroles > RK_SB_MAX_ROLES)
		newroles = RK_SB_MAX_ROLES;
	uint32_t span = reshape && newroles > nroles ? newroles : nroles;
	uint32_t nentries = span + (uint32_t)rndn(4);
	if (rndn(50) == 0)
		nentries = RK_SB_MAX_ROLES;
	if (nentries > RK_SB_MAX_ROLES)
		nentries = RK_SB_MAX_ROLES;
	uint64_t unit = chunk ? chunk : 4096;
	uint64_t data_offset = RK_SB_PRIMARY_END + 4096 * rndn(512);
	uint64_t jsize = 4096 * (1 + rndn(64));
	if (journal)
		data_offset += jsize + 4096 * rndn(4);
	uint64_t data_size = unit * (1 + rndn(1000));
	if (rndn(8) == 0)
		data_size *= 1ull << rndn(20);          /* up to TB-sized members */
	uint64_t dev_size = data_offset + data_size + 4096 * rndn(100) + RK_SB_AREA + rndn(4096);
	sb->sb_bytes = rk_sb_bytes_for(nentries);
	rnd_uuid(sb->array_uuid);
	static const char *const parts[] = { "a", "Z9", "-", "é", "€", "\xf0\x9f\x98\x80", "md", " " };
	size_t nl = 0;
	for (uint64_t k = rndn(12); k > 0; k--) {
		const char *s = parts[rndn(8)];
		if (nl + strlen(s) > RK_SB_NAME_LEN)
			break;
		memcpy(sb->name + nl, s, strlen(s));
		nl += strlen(s);
	}
	sb->ctime = rnd();
	sb->utime = rnd();
	sb->level = level;
	sb->layout = layout;
	sb->chunk = chunk;
	sb->nroles = nroles;
	sb->nentries = nentries;
	sb->array_state = (uint32_t)rndn(2);
	sb->events = rnd();
	sb->data_offset = data_offset;
	sb->data_size = data_size;
	sb->dev_size = dev_size;
	sb->sb_offset = rndn(2) ? RK_SB_PRIMARY_OFF : rk_sb_backup_offset(dev_size);
	uint64_t vol, newvol;
	ck_assert_int_eq(rk_sb_volume_size(level, layout, chunk, nroles, data_size, &vol), RK_OK);
	sb->volume_size = vol;
	if (journal) {
		sb->feat_incompat |= RK_FEAT_INCOMPAT_JOURNAL;
		sb->journal_offset = data_offset - jsize;
		sb->journal_size = jsize;
	}
	if (reshape) {
		sb->feat_incompat |= RK_FEAT_INCOMPAT_RESHAPE;
		sb->reshape_new.level = level;
		sb->reshape_new.layout = layout;
		sb->reshape_new.chunk = chunk;
		sb->reshape_new.nroles = newroles;
		sb->reshape_new.data_offset = data_offset;
		sb->reshape_new.data_size = data_size;
		ck_assert_int_eq(rk_sb_volume_size(level, layout, chunk, newroles, data_size, &newvol), RK_OK);
		sb->volume_size = vol < newvol ? vol : newvol;
		sb->reshape_pos = rndn(sb->volume_size + 1);
		sb->reshape_flags = (uint32_t)rndn(2);
	}
	sb->scrub_pos = rndn(2) ? rndn(sb->volume_size + 1) : 0;
	for (uint32_t i = 0; i < nentries; i++) {
		struct rk_role *r = &sb->roles[i];
		if (i < span)
			r->state = (uint32_t)rndn(4);   /* empty, active, faulty, rebuilding */
		else
			r->state = rndn(2) ? RK_ROLE_SPARE : RK_ROLE_EMPTY;
		if (r->state != RK_ROLE_EMPTY || rndn(2))
			rnd_uuid(r->member_uuid);
		if (r->state == RK_ROLE_REBUILDING)
			r->checkpoint = rndn(data_size + 1);
	}
	uint32_t me = (uint32_t)rndn(nentries);
	if (sb->roles[me].state == RK_ROLE_EMPTY || rndn(10) == 0) {
		sb->this_role = RK_ROLE_NONE;
		rnd_uuid(sb->member_uuid);
		for (uint32_t i = 0; i < nentries; i++)   /* keep it out of the table */
			if (!memcmp(sb->roles[i].member_uuid, sb->member_uuid, 16))
				sb->roles[i].state = RK_ROLE_EMPTY, sb->roles[i].checkpoint = 0;
	} else {
		sb->this_role = me;
		memcpy(sb->member_uuid, sb->roles[me].member_uuid, 16);
	}
}

/* ---- sizes and placement ---- */

START_TEST(test_sizes)
{
	ck_assert_uint_eq(rk_sb_bytes_for(0), 4096);
	ck_assert_uint_eq(rk_sb_bytes_for(1), 4096);
	ck_assert_uint_eq(rk_sb_bytes_for(112), 4096);     /* 512 + 112 * 32 = 4096 */
	ck_assert_uint_eq(rk_sb_bytes_for(113), 8192);
	ck_assert_uint_eq(rk_sb_bytes_for(RK_SB_MAX_ROLES), 65536);
	ck_assert_uint_eq(rk_sb_bytes_for(RK_SB_MAX_ROLES + 1), 0);
	ck_assert_uint_eq(RK_SB_PRIMARY_END, 69632);
	ck_assert_uint_eq(rk_sb_primary_offset(69632), 4096);
	ck_assert_uint_eq(rk_sb_primary_offset(69631), 0);
	ck_assert_uint_eq(rk_sb_backup_offset(69632 + 65536), 69632);
	ck_assert_uint_eq(rk_sb_backup_offset(69632 + 65536 + 4095), 69632);
	ck_assert_uint_eq(rk_sb_backup_offset(69632 + 65535), 0);
	ck_assert_uint_eq(rk_sb_backup_offset(1 * GiB + 1), 1 * GiB - 65536);
	ck_assert_uint_eq(rk_sb_backup_offset(UINT64_MAX), UINT64_MAX - 4095 - 65536);
	ck_assert_uint_eq(rk_sb_max_data_size(1 * GiB, 1 * MiB, 65536), 1 * GiB - 65536 - 1 * MiB);
	ck_assert_uint_eq(rk_sb_max_data_size(1 * GiB, 1 * MiB, 1 * MiB), 1 * GiB - 2 * MiB);
	ck_assert_uint_eq(rk_sb_max_data_size(1 * MiB, 1 * MiB, 0), 0);
	ck_assert_uint_eq(rk_sb_max_data_size(100, 1 * MiB, 0), 0);
}
END_TEST

START_TEST(test_volume_size)
{
	uint64_t v;
	const uint64_t C = 65536, D = 10 * C + 4096;   /* data_size not a chunk multiple */
	ck_assert_int_eq(rk_sb_volume_size(-1, 0, 0, 3, D, &v), RK_OK);
	ck_assert_uint_eq(v, 3 * D);
	ck_assert_int_eq(rk_sb_volume_size(0, 0, C, 3, D, &v), RK_OK);
	ck_assert_uint_eq(v, 30 * C);
	ck_assert_int_eq(rk_sb_volume_size(1, 0, 0, 3, D, &v), RK_OK);
	ck_assert_uint_eq(v, D);
	ck_assert_int_eq(rk_sb_volume_size(4, 5, C, 3, D, &v), RK_OK);
	ck_assert_uint_eq(v, 20 * C);
	ck_assert_int_eq(rk_sb_volume_size(5, 2, C, 4, D, &v), RK_OK);
	ck_assert_uint_eq(v, 30 * C);
	ck_assert_int_eq(rk_sb_volume_size(5, 2, C, 2, D, &v), RK_OK);
	ck_assert_uint_eq(v, 10 * C);
	ck_assert_int_eq(rk_sb_volume_size(6, 2, C, 5, D, &v), RK_OK);
	ck_assert_uint_eq(v, 30 * C);
	ck_assert_int_eq(rk_sb_volume_size(6, 0, C, 3, D, &v), RK_OK);
	ck_assert_uint_eq(v, 10 * C);
	/* RAID-10 near-2 on 3 roles: 10 chunks * 3 / 2 = 15 chunks */
	ck_assert_int_eq(rk_sb_volume_size(10, 0x102, C, 3, D, &v), RK_OK);
	ck_assert_uint_eq(v, 15 * C);
	ck_assert_int_eq(rk_sb_volume_size(10, 0x102, C, 4, D, &v), RK_OK);
	ck_assert_uint_eq(v, 20 * C);
	/* far-2 on 3 roles: (10 / 2) chunks * 3 = 15 chunks; 11 chunks: 5 * 3 */
	ck_assert_int_eq(rk_sb_volume_size(10, 0x201, C, 3, D, &v), RK_OK);
	ck_assert_uint_eq(v, 15 * C);
	ck_assert_int_eq(rk_sb_volume_size(10, 0x201, C, 3, 11 * C, &v), RK_OK);
	ck_assert_uint_eq(v, 15 * C);
	ck_assert_int_eq(rk_sb_volume_size(10, 0x10201, C, 2, D, &v), RK_OK);
	ck_assert_uint_eq(v, 10 * C);
	ck_assert_int_eq(rk_sb_volume_size(10, 0x20201, C, 4, D, &v), RK_OK);   /* far-set mode 1 */
	ck_assert_uint_eq(v, 20 * C);
	ck_assert_int_eq(rk_sb_volume_size(6, 9, C, 255, D, &v), RK_OK);       /* DDF */
	ck_assert_uint_eq(v, 253 * 10 * C);
	ck_assert_int_eq(rk_sb_volume_size(6, 18, C, 257, D, &v), RK_OK);
	ck_assert_int_eq(rk_sb_volume_size(0, 2, C, 2, D, &v), RK_OK);
	ck_assert_uint_eq(v, 20 * C);
	/* minimums and refusals */
	ck_assert_uint_eq(rk_sb_min_roles(-1), 1);
	ck_assert_uint_eq(rk_sb_min_roles(0), 1);
	ck_assert_uint_eq(rk_sb_min_roles(1), 1);
	ck_assert_uint_eq(rk_sb_min_roles(4), 2);
	ck_assert_uint_eq(rk_sb_min_roles(5), 2);
	ck_assert_uint_eq(rk_sb_min_roles(6), 3);
	ck_assert_uint_eq(rk_sb_min_roles(10), 2);
	ck_assert_uint_eq(rk_sb_min_roles(7), 0);
	ck_assert_int_eq(rk_sb_volume_size(6, 0, C, 2, D, &v), RK_E_CORRUPT);
	ck_assert_ptr_nonnull(strstr(rk_errmsg(), "nroles 2"));
	ck_assert_int_eq(rk_sb_volume_size(5, 0, C, 1, D, &v), RK_E_CORRUPT);
	ck_assert_int_eq(rk_sb_volume_size(10, 0x102, C, 1, D, &v), RK_E_CORRUPT);
	ck_assert_int_eq(rk_sb_volume_size(1, 0, 0, 0, D, &v), RK_E_CORRUPT);
	ck_assert_int_eq(rk_sb_volume_size(0, 0, C, 1, C - 4096, &v), RK_E_CORRUPT);
	ck_assert_ptr_nonnull(strstr(rk_errmsg(), "empty"));
	ck_assert_int_eq(rk_sb_volume_size(-1, 0, 0, 4, UINT64_MAX / 2, &v), RK_E_CORRUPT);
	ck_assert_ptr_nonnull(strstr(rk_errmsg(), "overflow"));
	ck_assert_int_eq(rk_sb_volume_size(0, 0, C, 3, UINT64_MAX / 2, &v), RK_E_CORRUPT);
	ck_assert_int_eq(rk_sb_volume_size(10, 0x102, C, 4, UINT64_MAX - 1, &v), RK_E_CORRUPT);
	ck_assert_int_eq(rk_sb_volume_size(3, 0, C, 4, D, &v), RK_E_CORRUPT);
	ck_assert_ptr_nonnull(strstr(rk_errmsg(), "level 3"));
	ck_assert_uint_eq(v, 0);
}
END_TEST

/* ---- pinned offsets: every field at its literal byte ---- */

START_TEST(test_offsets)
{
	const uint64_t dev = 1 * GiB + 12345, backup = 1 * GiB + 12288 - 65536;
	struct rk_sb *sb = sb_new();
	sb->version = 1;
	sb->sb_bytes = 4096;
	sb->feat_compat = 0x10;            /* unknown compat: reserved bytes may be used */
	sb->feat_ro_compat = 0x20;
	sb->feat_incompat = RK_FEAT_INCOMPAT_JOURNAL | RK_FEAT_INCOMPAT_RESHAPE;
	for (int i = 0; i < 16; i++) {
		sb->array_uuid[i] = (uint8_t)(0x10 + i);
		sb->member_uuid[i] = (uint8_t)(0xc2 + i);
	}
	strcpy(sb->name, "pinned-name");
	sb->ctime = 0x1112131415161718ull;
	sb->utime = 0x2122232425262728ull;
	sb->events = 0x0102030405060708ull;
	sb->level = 5;
	sb->layout = 2;
	sb->chunk = 65536;
	sb->nroles = 4;
	sb->nentries = 6;
	sb->this_role = 2;
	sb->array_state = 1;
	sb->data_offset = 2 * MiB;
	sb->data_size = 256 * MiB;
	sb->dev_size = dev;
	sb->sb_offset = backup;
	sb->journal_offset = 128 * 1024;
	sb->journal_size = 512 * 1024;
	sb->reshape_new.level = 6;
	sb->reshape_new.layout = 3;
	sb->reshape_new.chunk = 131072;
	sb->reshape_new.nroles = 5;
	sb->reshape_new.data_offset = 1536 * 1024;
	sb->reshape_new.data_size = 256 * MiB - 131072;
	sb->volume_size = 3 * 256 * MiB - 3 * 131072;  /* new: 3 data roles of 2047 chunks of 128K */
	sb->reshape_pos = 4096 * 12345;
	sb->reshape_flags = RK_RESHAPE_BACKWARDS;
	sb->scrub_pos = 4096 * 77;
	for (uint32_t i = 0; i < RK_SB_RESERVED_LEN; i++)
		sb->reserved[i] = (uint8_t)(i + 1);
	for (uint32_t i = 0; i < 6; i++) {
		struct rk_role *r = &sb->roles[i];
		memset(r->member_uuid, 0xa0 + i, 16);
		r->state = i < 5 ? RK_ROLE_ACTIVE : RK_ROLE_SPARE;
		r->flags = 0x1000 + i;
	}
	sb->roles[3].state = RK_ROLE_REBUILDING;
	sb->roles[3].checkpoint = 0x5000;
	memcpy(sb->roles[2].member_uuid, sb->member_uuid, 16);
	ck_assert_msg(rk_sb_validate(sb, dev) == RK_OK, "%s", rk_errmsg());

	uint8_t *b = calloc(1, 65536);
	ck_assert_int_eq(rk_sb_encode(sb, b, 65536), RK_OK);
	ck_assert_mem_eq(b + 0, "RAIDKIT\0", 8);
	ck_assert_uint_eq(rk_get_le32(b + 8), 1);
	ck_assert_uint_eq(rk_get_le32(b + 12), 4096);
	ck_assert_uint_eq(rk_get_le32(b + 20), 1);                  /* array_state */
	ck_assert_uint_eq(rk_get_le64(b + 24), 0x10);
	ck_assert_uint_eq(rk_get_le64(b + 32), 0x20);
	ck_assert_uint_eq(rk_get_le64(b + 40), 3);
	ck_assert_uint_eq(b[48], 0x10);
	ck_assert_uint_eq(b[63], 0x1f);
	ck_assert_uint_eq(b[64], 0xc2);
	ck_assert_uint_eq(b[79], 0xd1);
	ck_assert_mem_eq(b + 80, "pinned-name", 11);
	for (int i = 91; i < 112; i++)
		ck_assert_uint_eq(b[i], 0);
	ck_assert_uint_eq(rk_get_le64(b + 112), 0x1112131415161718ull);
	ck_assert_uint_eq(rk_get_le64(b + 120), 0x2122232425262728ull);
	ck_assert_uint_eq(rk_get_le64(b + 128), 0x0102030405060708ull);
	ck_assert_uint_eq(rk_get_le32(b + 136), 5);
	ck_assert_uint_eq(rk_get_le32(b + 140), 2);
	ck_assert_uint_eq(rk_get_le64(b + 144), 65536);
	ck_assert_uint_eq(rk_get_le32(b + 152), 4);
	ck_assert_uint_eq(rk_get_le32(b + 156), 6);
	ck_assert_uint_eq(rk_get_le32(b + 160), 2);
	ck_assert_uint_eq(rk_get_le32(b + 164), 1);                 /* reshape_flags */
	ck_assert_uint_eq(rk_get_le64(b + 168), 2 * MiB);
	ck_assert_uint_eq(rk_get_le64(b + 176), 256 * MiB);
	ck_assert_uint_eq(rk_get_le64(b + 184), 3 * 256 * MiB - 3 * 131072);
	ck_assert_uint_eq(rk_get_le64(b + 192), backup);
	ck_assert_uint_eq(rk_get_le64(b + 200), dev);
	ck_assert_uint_eq(rk_get_le64(b + 208), 128 * 1024);
	ck_assert_uint_eq(rk_get_le64(b + 216), 512 * 1024);
	ck_assert_uint_eq(rk_get_le64(b + 224), 4096 * 77);
	ck_assert_uint_eq(rk_get_le64(b + 232), 4096 * 12345);
	ck_assert_uint_eq(rk_get_le64(b + 240), 131072);
	ck_assert_uint_eq(rk_get_le64(b + 248), 1536 * 1024);
	ck_assert_uint_eq(rk_get_le64(b + 256), 256 * MiB - 131072);
	ck_assert_uint_eq(rk_get_le32(b + 264), 6);
	ck_assert_uint_eq(rk_get_le32(b + 268), 3);
	ck_assert_uint_eq(rk_get_le32(b + 272), 5);
	ck_assert_uint_eq(b[276], 1);
	ck_assert_uint_eq(b[511], 236);
	for (uint32_t i = 0; i < 6; i++) {
		const uint8_t *e = b + 512 + 32 * i;
		ck_assert_uint_eq(e[0], 0xa0 + i == 0xa2 ? 0xc2 : 0xa0 + i);
		ck_assert_uint_eq(rk_get_le32(e + 16), sb->roles[i].state);
		ck_assert_uint_eq(rk_get_le32(e + 20), 0x1000 + i);
		ck_assert_uint_eq(rk_get_le64(e + 24), i == 3 ? 0x5000 : 0);
	}
	for (int i = 512 + 6 * 32; i < 4096; i++)
		ck_assert_uint_eq(b[i], 0);
	/* The CRC convention, computed independently. */
	uint32_t crc = rk_get_le32(b + 16);
	rk_put_le32(b + 16, 0);
	ck_assert_uint_eq(crc, (uint32_t)crc32(0, b, 4096));
	ck_assert_uint_eq((uint32_t)crc32(0, (const uint8_t *)"123456789", 9), 0xcbf43926u);
	rk_put_le32(b + 16, crc);
	/* And it decodes to the same struct at its place. */
	struct rk_sb *d = sb_new();
	ck_assert_msg(rk_sb_decode(d, b, 4096, backup, dev) == RK_OK, "%s", rk_errmsg());
	ck_assert_mem_eq(d, sb, sizeof *sb);
	free(d);
	free(b);
	free(sb);
}
END_TEST

/* ---- round trips ---- */

START_TEST(test_roundtrip_random)
{
	struct rk_sb *sb = sb_new(), *d = sb_new();
	uint8_t *b = malloc(65536), *b2 = malloc(65536);
	unsigned n_backup = 0, n_reshape = 0, n_big = 0;
	for (int it = 0; it < 600; it++) {
		make_random(sb);
		ck_assert_msg(rk_sb_validate(sb, sb->dev_size) == RK_OK, "iteration %d: %s", it, rk_errmsg());
		ck_assert_msg(rk_sb_encode(sb, b, 65536) == RK_OK, "iteration %d: %s", it, rk_errmsg());
		uint32_t n = rk_get_le32(b + 12);
		ck_assert_uint_eq(n, sb->sb_bytes);
		/* the device may have grown since */
		uint64_t dev = sb->dev_size + 4096 * rndn(3);
		ck_assert_msg(rk_sb_decode(d, b, n, sb->sb_offset, dev) == RK_OK, "iteration %d: %s", it, rk_errmsg());
		ck_assert_mem_eq(d, sb, sizeof *sb);
		ck_assert_int_eq(rk_sb_encode(d, b2, 65536), RK_OK);
		ck_assert_mem_eq(b, b2, n);
		n_backup += sb->sb_offset != RK_SB_PRIMARY_OFF;
		n_reshape += !!(sb->feat_incompat & RK_FEAT_INCOMPAT_RESHAPE);
		n_big += n > 4096;
	}
	/* the generator covers what it claims to */
	ck_assert_uint_gt(n_backup, 100);
	ck_assert_uint_gt(n_reshape, 50);
	ck_assert_uint_gt(n_big, 10);
	free(sb);
	free(d);
	free(b);
	free(b2);
}
END_TEST

START_TEST(test_encode_sb_bytes_zero)
{
	struct rk_sb *sb = make_base();
	uint8_t *b = malloc(65536);
	sb->sb_bytes = 0;   /* computed */
	ck_assert_int_eq(rk_sb_encode(sb, b, 65536), RK_OK);
	ck_assert_uint_eq(rk_get_le32(b + 12), 4096);
	ck_assert_int_eq(rk_sb_encode(sb, b, 4095), RK_E_RANGE);
	free(b);
	free(sb);
}
END_TEST

/* ---- every validation rule ---- */

struct rule {
	const char *name;
	rk_err want;
	const char *says;     /* a word the sentence must contain */
};
static const struct rule rules[] = {
	{ "version", RK_E_VERSION, "version 2" },
	{ "incompat", RK_E_FEATURE, "0x40" },
	{ "nroles 0", RK_E_CORRUPT, "nroles 0" },
	{ "nroles max", RK_E_CORRUPT, "nroles 2033" },
	{ "nentries < nroles", RK_E_CORRUPT, "nentries 3" },
	{ "sb_bytes", RK_E_CORRUPT, "sb_bytes 8192" },
	{ "reserved", RK_E_CORRUPT, "offset 300" },
	{ "role flags", RK_E_CORRUPT, "role 2 flags" },
	{ "array uuid nil", RK_E_CORRUPT, "array_uuid" },
	{ "member uuid nil", RK_E_CORRUPT, "member_uuid" },
	{ "name control", RK_E_CORRUPT, "control" },
	{ "name utf8", RK_E_CORRUPT, "UTF-8" },
	{ "name overlong", RK_E_CORRUPT, "overlong" },
	{ "name padding", RK_E_CORRUPT, "NUL padding" },
	{ "array_state", RK_E_CORRUPT, "array_state 2" },
	{ "dev_size tiny", RK_E_CORRUPT, "dev_size 100000" },
	{ "dev shrank", RK_E_SHORT, "has only" },
	{ "sb_offset", RK_E_CORRUPT, "sb_offset 8192" },
	{ "level", RK_E_CORRUPT, "level 7" },
	{ "level min", RK_E_CORRUPT, "nroles 2" },
	{ "chunk pow2", RK_E_CORRUPT, "chunk 98304" },
	{ "chunk small", RK_E_CORRUPT, "chunk 2048" },
	{ "chunk large", RK_E_CORRUPT, "chunk 33554432" },
	{ "chunk raid1", RK_E_CORRUPT, "chunk 65536" },
	{ "layout 5", RK_E_CORRUPT, "layout 6" },
	{ "layout 0", RK_E_CORRUPT, "layout 3" },
	{ "layout 6", RK_E_CORRUPT, "layout 11" },
	{ "raid6 roles", RK_E_CORRUPT, "nroles 258" },
	{ "raid6 ddf roles", RK_E_CORRUPT, "at most 255" },
	{ "layout 4", RK_E_CORRUPT, "layout 3" },
	{ "layout 10 copies", RK_E_CORRUPT, "layout 0x101" },
	{ "layout 10 too many", RK_E_CORRUPT, "layout 0x105" },
	{ "layout 10 bits", RK_E_CORRUPT, "unknown bits" },
	{ "volume_size", RK_E_CORRUPT, "volume_size" },
	{ "data_offset align", RK_E_CORRUPT, "multiples" },
	{ "data_offset primary", RK_E_CORRUPT, "primary superblock" },
	{ "data_size 0", RK_E_CORRUPT, "data_size 0" },
	{ "data past backup", RK_E_CORRUPT, "backup superblock" },
	{ "data overflow", RK_E_CORRUPT, "backup superblock" },
	{ "volume empty", RK_E_CORRUPT, "empty volume" },
	{ "reshape no feature", RK_E_CORRUPT, "reshape fields" },
	{ "reshape level", RK_E_CORRUPT, "reshape target: level 9" },
	{ "reshape nroles", RK_E_CORRUPT, "new_nroles 6" },
	{ "reshape flags", RK_E_CORRUPT, "reshape_flags 0x6" },
	{ "reshape volume", RK_E_CORRUPT, "smaller of the old" },
	{ "reshape pos", RK_E_CORRUPT, "reshape_pos" },
	{ "reshape area", RK_E_CORRUPT, "new_data_offset" },
	{ "journal no feature", RK_E_CORRUPT, "journal incompat" },
	{ "journal overlap", RK_E_CORRUPT, "overlaps the data area" },
	{ "journal empty", RK_E_CORRUPT, "journal_size 0" },
	{ "scrub_pos", RK_E_CORRUPT, "scrub_pos" },
	{ "role state", RK_E_CORRUPT, "state 5" },
	{ "spare below nroles", RK_E_CORRUPT, "role 3 state spare" },
	{ "active past nroles", RK_E_CORRUPT, "role 4 state active" },
	{ "checkpoint active", RK_E_CORRUPT, "only a rebuilding" },
	{ "checkpoint past", RK_E_CORRUPT, "past data_size" },
	{ "role nil uuid", RK_E_CORRUPT, "nil member uuid" },
	{ "duplicate uuid", RK_E_CORRUPT, "roles 0 and 3" },
	{ "this_role range", RK_E_CORRUPT, "this_role 5" },
	{ "own entry empty", RK_E_CORRUPT, "own entry is empty" },
	{ "own entry uuid", RK_E_CORRUPT, "not this member's" },
	{ "none but listed", RK_E_CORRUPT, "this_role none" },
};
#define NRULES ((int)(sizeof rules / sizeof rules[0]))

/* Breaks SB as rule I says; returns the device size to validate against. */
static uint64_t break_rule(struct rk_sb *sb, int i)
{
	uint64_t dev = BASE_DEV;
	const char *n = rules[i].name;
	if (!strcmp(n, "version")) sb->version = 2;
	else if (!strcmp(n, "incompat")) sb->feat_incompat = 0x41;
	else if (!strcmp(n, "nroles 0")) sb->nroles = 0;
	else if (!strcmp(n, "nroles max")) sb->nroles = 2033;
	else if (!strcmp(n, "nentries < nroles")) sb->nentries = 3;
	else if (!strcmp(n, "sb_bytes")) sb->sb_bytes = 8192;
	else if (!strcmp(n, "reserved")) sb->reserved[300 - RK_SB_RESERVED_OFF] = 1;
	else if (!strcmp(n, "role flags")) sb->roles[2].flags = 4;
	else if (!strcmp(n, "array uuid nil")) memset(sb->array_uuid, 0, 16);
	else if (!strcmp(n, "member uuid nil")) memset(sb->member_uuid, 0, 16);
	else if (!strcmp(n, "name control")) strncpy(sb->name, "a\tb", sizeof sb->name);
	else if (!strcmp(n, "name utf8")) strncpy(sb->name, "ab\xc3", sizeof sb->name);
	else if (!strcmp(n, "name overlong")) strncpy(sb->name, "\xc0\xaf", sizeof sb->name);
	else if (!strcmp(n, "name padding")) { memset(sb->name, 0, sizeof sb->name); sb->name[0] = 'x'; sb->name[5] = 'y'; }
	else if (!strcmp(n, "array_state")) sb->array_state = 2;
	else if (!strcmp(n, "dev_size tiny")) sb->dev_size = 100000;
	else if (!strcmp(n, "dev shrank")) dev = BASE_DEV - 4096;
	else if (!strcmp(n, "sb_offset")) sb->sb_offset = 8192;
	else if (!strcmp(n, "level")) sb->level = 7;
	else if (!strcmp(n, "level min")) { sb->level = 6; sb->nroles = 2; sb->nentries = 2; sb->roles[2].state = 0; }
	else if (!strcmp(n, "chunk pow2")) sb->chunk = 98304;
	else if (!strcmp(n, "chunk small")) sb->chunk = 2048;
	else if (!strcmp(n, "chunk large")) sb->chunk = 32 * MiB;
	else if (!strcmp(n, "chunk raid1")) sb->level = 1;
	else if (!strcmp(n, "layout 5")) sb->layout = 6;
	else if (!strcmp(n, "layout 0")) { sb->level = 0; sb->layout = 3; }
	else if (!strcmp(n, "layout 6")) { sb->level = 6; sb->layout = 11; }
	else if (!strcmp(n, "raid6 roles")) { sb->level = 6; sb->nroles = sb->nentries = 258; sb->sb_bytes = rk_sb_bytes_for(258); }
	else if (!strcmp(n, "raid6 ddf roles")) { sb->level = 6; sb->layout = 9; sb->nroles = sb->nentries = 256; sb->sb_bytes = rk_sb_bytes_for(256); }
	else if (!strcmp(n, "layout 4")) { sb->level = 4; sb->layout = 3; }
	else if (!strcmp(n, "layout 10 copies")) { sb->level = 10; sb->layout = 0x101; }
	else if (!strcmp(n, "layout 10 too many")) { sb->level = 10; sb->layout = 0x105; }
	else if (!strcmp(n, "layout 10 bits")) { sb->level = 10; sb->layout = 0x60102; }
	else if (!strcmp(n, "volume_size")) sb->volume_size -= sb->chunk;
	else if (!strcmp(n, "data_offset align")) sb->data_offset += 512;
	else if (!strcmp(n, "data_offset primary")) sb->data_offset = 65536;
	else if (!strcmp(n, "data_size 0")) { sb->data_size = 0; sb->level = 1; sb->layout = 0; sb->chunk = 0; sb->volume_size = 0; }
	else if (!strcmp(n, "data past backup")) { sb->data_size += sb->chunk; sb->volume_size += 3 * sb->chunk; }
	else if (!strcmp(n, "data overflow")) sb->data_offset = UINT64_MAX - 4095;
	else if (!strcmp(n, "volume empty")) { sb->data_size = 32768; sb->volume_size = 0; }
	else if (!strcmp(n, "reshape no feature")) sb->reshape_pos = 4096;
	else if (!strcmp(n, "journal no feature")) sb->journal_size = 4096;
	else if (!strcmp(n, "scrub_pos")) sb->scrub_pos = sb->volume_size + 1;
	else if (!strcmp(n, "role state")) sb->roles[0].state = 5;
	else if (!strcmp(n, "spare below nroles")) sb->roles[3].state = RK_ROLE_SPARE;
	else if (!strcmp(n, "active past nroles")) sb->roles[4].state = RK_ROLE_ACTIVE;
	else if (!strcmp(n, "checkpoint active")) sb->roles[0].checkpoint = 4096;
	else if (!strcmp(n, "checkpoint past")) { sb->roles[0].state = RK_ROLE_REBUILDING; sb->roles[0].checkpoint = sb->data_size + 1; }
	else if (!strcmp(n, "role nil uuid")) memset(sb->roles[3].member_uuid, 0, 16);
	else if (!strcmp(n, "duplicate uuid")) memcpy(sb->roles[3].member_uuid, sb->roles[0].member_uuid, 16);
	else if (!strcmp(n, "this_role range")) sb->this_role = 5;
	else if (!strcmp(n, "own entry empty")) sb->roles[1].state = RK_ROLE_EMPTY;
	else if (!strcmp(n, "own entry uuid")) sb->member_uuid[3] ^= 1;
	else if (!strcmp(n, "none but listed")) sb->this_role = RK_ROLE_NONE;
	else if (!strncmp(n, "reshape ", 8) || !strncmp(n, "journal ", 8)) {
		/* start from a valid reshape (4 -> 5 roles) with a journal */
		uint64_t vol, newvol;
		sb->feat_incompat = RK_FEAT_INCOMPAT_RESHAPE | RK_FEAT_INCOMPAT_JOURNAL;
		sb->journal_offset = 512 * 1024;
		sb->journal_size = 256 * 1024;
		sb->reshape_new.level = 5;
		sb->reshape_new.layout = 2;
		sb->reshape_new.chunk = sb->chunk;
		sb->reshape_new.nroles = 5;
		sb->reshape_new.data_offset = sb->data_offset;
		sb->reshape_new.data_size = sb->data_size;
		sb->roles[4].state = RK_ROLE_REBUILDING;
		ck_assert_int_eq(rk_sb_volume_size(5, 2, sb->chunk, 4, sb->data_size, &vol), RK_OK);
		ck_assert_int_eq(rk_sb_volume_size(5, 2, sb->chunk, 5, sb->data_size, &newvol), RK_OK);
		sb->volume_size = vol < newvol ? vol : newvol;
		sb->reshape_pos = sb->volume_size / 2;
		ck_assert_msg(rk_sb_validate(sb, dev) == RK_OK, "reshape base: %s", rk_errmsg());
		if (!strcmp(n, "reshape level")) sb->reshape_new.level = 9;
		else if (!strcmp(n, "reshape nroles")) sb->reshape_new.nroles = 6;
		else if (!strcmp(n, "reshape flags")) sb->reshape_flags = 6;
		else if (!strcmp(n, "reshape volume")) sb->volume_size = newvol;
		else if (!strcmp(n, "reshape pos")) sb->reshape_pos = sb->volume_size + 1;
		else if (!strcmp(n, "reshape area")) sb->reshape_new.data_offset = 4096;
		else if (!strcmp(n, "journal overlap")) sb->journal_offset = sb->data_offset - 128 * 1024;
		else if (!strcmp(n, "journal empty")) sb->journal_size = 0;
		else ck_abort_msg("no such rule %s", n);
	} else
		ck_abort_msg("no such rule %s", n);
	return dev;
}

START_TEST(test_rules)
{
	struct rk_sb *sb = make_base();
	ck_assert_msg(rk_sb_validate(sb, BASE_DEV) == RK_OK, "%s", rk_errmsg());
	uint64_t dev = break_rule(sb, _i);
	rk_err e = rk_sb_validate(sb, dev);
	ck_assert_msg(e == rules[_i].want, "rule \"%s\": got %d (%s), want %d", rules[_i].name, e,
	              rk_errmsg(), rules[_i].want);
	ck_assert_msg(strstr(rk_errmsg(), rules[_i].says), "rule \"%s\": sentence \"%s\" lacks \"%s\"",
	              rules[_i].name, rk_errmsg(), rules[_i].says);
	/* The encoder refuses what the validator refuses (device size aside). */
	uint8_t *b = malloc(65536);
	if (rules[_i].want != RK_E_SHORT)
		ck_assert_int_ne(rk_sb_encode(sb, b, 65536), RK_OK);
	free(b);
	free(sb);
}
END_TEST

/* Decoder-only rules: the bytes before the fields can be trusted. */
START_TEST(test_decode_rules)
{
	struct rk_sb *sb = make_base(), *d = sb_new();
	uint8_t *b = malloc(65536), *t = malloc(65536);
	ck_assert_int_eq(rk_sb_encode(sb, b, 65536), RK_OK);
	ck_assert_int_eq(rk_sb_decode(d, b, 4096, 4096, BASE_DEV), RK_OK);

	ck_assert_int_eq(rk_sb_decode(d, b, 4, 4096, BASE_DEV), RK_E_NOSB);
	ck_assert_int_eq(rk_sb_decode(d, b, 300, 4096, BASE_DEV), RK_E_SHORT);
	ck_assert_int_eq(rk_sb_decode(d, b, 4095, 4096, BASE_DEV), RK_E_SHORT);
	ck_assert_ptr_nonnull(strstr(rk_errmsg(), "4095"));

	memcpy(t, b, 4096); t[7] = 'X';
	ck_assert_int_eq(rk_sb_decode(d, t, 4096, 4096, BASE_DEV), RK_E_NOSB);
	memcpy(t, b, 4096); rk_put_le32(t + 8, 2);
	ck_assert_int_eq(rk_sb_decode(d, t, 4096, 4096, BASE_DEV), RK_E_VERSION);
	memcpy(t, b, 4096); rk_put_le32(t + 12, 5000);
	ck_assert_int_eq(rk_sb_decode(d, t, 4096, 4096, BASE_DEV), RK_E_CORRUPT);
	ck_assert_ptr_nonnull(strstr(rk_errmsg(), "sb_bytes 5000"));
	memcpy(t, b, 4096); rk_put_le32(t + 12, 0);
	ck_assert_int_eq(rk_sb_decode(d, t, 4096, 4096, BASE_DEV), RK_E_CORRUPT);
	memcpy(t, b, 4096); t[100] ^= 1;
	ck_assert_int_eq(rk_sb_decode(d, t, 4096, 4096, BASE_DEV), RK_E_BADCRC);
	ck_assert_ptr_nonnull(strstr(rk_errmsg(), "crc"));
	/* nentries larger than sb_bytes holds: refused before the table is read */
	memcpy(t, b, 4096); rk_put_le32(t + 156, 200); fix_crc(t);
	ck_assert_int_eq(rk_sb_decode(d, t, 4096, 4096, BASE_DEV), RK_E_CORRUPT);
	ck_assert_ptr_nonnull(strstr(rk_errmsg(), "nentries 200"));
	memcpy(t, b, 4096); rk_put_le32(t + 156, 0xffffffffu); fix_crc(t);
	ck_assert_int_eq(rk_sb_decode(d, t, 4096, 4096, BASE_DEV), RK_E_CORRUPT);
	/* padding after the table */
	memcpy(t, b, 4096); t[4000] = 1; fix_crc(t);
	ck_assert_int_eq(rk_sb_decode(d, t, 4096, 4096, BASE_DEV), RK_E_CORRUPT);
	ck_assert_ptr_nonnull(strstr(rk_errmsg(), "padding"));
	/* name bytes after the NUL */
	memcpy(t, b, 4096); t[80 + 20] = 'q'; fix_crc(t);
	ck_assert_int_eq(rk_sb_decode(d, t, 4096, 4096, BASE_DEV), RK_E_CORRUPT);
	ck_assert_ptr_nonnull(strstr(rk_errmsg(), "name"));
	/* a full 32-byte name (no NUL on disk) is fine */
	memcpy(t, b, 4096); memset(t + 80, 'n', 32); fix_crc(t);
	ck_assert_int_eq(rk_sb_decode(d, t, 4096, 4096, BASE_DEV), RK_OK);
	ck_assert_uint_eq(strlen(d->name), 32);
	/* a copy found away from its recorded place */
	ck_assert_int_eq(rk_sb_decode(d, b, 4096, 8192, BASE_DEV), RK_E_CORRUPT);
	ck_assert_ptr_nonnull(strstr(rk_errmsg(), "found at byte 8192"));
	ck_assert_int_eq(rk_sb_decode(d, b, 4096, rk_sb_backup_offset(BASE_DEV), BASE_DEV), RK_E_CORRUPT);
	/* truncated device */
	ck_assert_int_eq(rk_sb_decode(d, b, 4096, 4096, BASE_DEV - 1), RK_E_SHORT);
	/* unknown incompat bits are named */
	memcpy(t, b, 4096); rk_put_le64(t + 40, 0x8000000000000100ull); fix_crc(t);
	ck_assert_int_eq(rk_sb_decode(d, t, 4096, 4096, BASE_DEV), RK_E_FEATURE);
	ck_assert_ptr_nonnull(strstr(rk_errmsg(), "0x8000000000000100"));
	free(b);
	free(t);
	free(d);
	free(sb);
}
END_TEST

START_TEST(test_features)
{
	struct rk_sb *sb = make_base(), *d = sb_new();
	uint8_t *b = malloc(65536), *b2 = malloc(65536);
	/* unknown compat: decoded, kept, reserved bytes carried through */
	sb->feat_compat = 0x4000;
	sb->reserved[10] = 0x5a;
	sb->roles[0].flags = 7;
	ck_assert_int_eq(rk_sb_encode(sb, b, 65536), RK_OK);
	ck_assert_int_eq(rk_sb_decode(d, b, 4096, 4096, BASE_DEV), RK_OK);
	ck_assert_uint_eq(d->feat_compat, 0x4000);
	ck_assert_uint_eq(d->reserved[10], 0x5a);
	ck_assert_uint_eq(d->roles[0].flags, 7);
	ck_assert_int_eq(rk_sb_encode(d, b2, 65536), RK_OK);
	ck_assert_mem_eq(b, b2, 4096);
	/* without an unknown feature bit the same bytes are refused */
	rk_put_le64(b + 24, 0); fix_crc(b);
	ck_assert_int_eq(rk_sb_decode(d, b, 4096, 4096, BASE_DEV), RK_E_CORRUPT);
	/* unknown ro_compat: readable, not writable */
	sb->feat_compat = 0;
	sb->feat_ro_compat = 0x2;
	ck_assert_int_eq(rk_sb_encode(sb, b, 65536), RK_OK);
	ck_assert_int_eq(rk_sb_decode(d, b, 4096, 4096, BASE_DEV), RK_OK);
	rk_dev *dev;
	ck_assert_int_eq(rk_dev_mem(&dev, "m0", BASE_DEV), RK_OK);
	ck_assert_int_eq(rk_sb_write(dev, sb), RK_E_FEATURE);
	ck_assert_ptr_nonnull(strstr(rk_errmsg(), "ro_compat"));
	uint8_t *mem = rk_dev_mem_data(dev);
	for (size_t i = 0; i < 8; i++)
		ck_assert_uint_eq(mem[4096 + i], 0);   /* nothing written */
	rk_dev_close(dev);
	/* unknown incompat: refused by name */
	sb->feat_ro_compat = 0;
	sb->feat_incompat = 0x4;
	ck_assert_int_eq(rk_sb_validate(sb, BASE_DEV), RK_E_FEATURE);
	ck_assert_ptr_nonnull(strstr(rk_errmsg(), "0x4"));
	/* names */
	char nb[64];
	ck_assert_str_eq(rk_sb_feature_names(RK_FEAT_KIND_INCOMPAT, 3, nb, sizeof nb), "journal,reshape");
	ck_assert_str_eq(rk_sb_feature_names(RK_FEAT_KIND_INCOMPAT, 0x12, nb, sizeof nb), "reshape,0x10");
	ck_assert_str_eq(rk_sb_feature_names(RK_FEAT_KIND_COMPAT, 0, nb, sizeof nb), "none");
	ck_assert_str_eq(rk_sb_feature_names(RK_FEAT_KIND_COMPAT, 1, nb, sizeof nb), "0x1");
	ck_assert_str_eq(rk_role_state_name(RK_ROLE_REBUILDING), "rebuilding");
	ck_assert_str_eq(rk_role_state_name(9), "unknown");
	ck_assert_str_eq(rk_array_state_name(RK_ARRAY_ACTIVE), "active");
	free(b);
	free(b2);
	free(d);
	free(sb);
}
END_TEST

/* Every single-byte change across sb_bytes is caught. */
static void flips_over(struct rk_sb *sb, uint64_t dev, const uint8_t *pats, int npat)
{
	struct rk_sb *d = sb_new();
	uint8_t *b = malloc(65536);
	ck_assert_int_eq(rk_sb_encode(sb, b, 65536), RK_OK);
	uint32_t n = rk_get_le32(b + 12);
	for (uint32_t i = 0; i < n; i++)
		for (int k = 0; k < npat; k++) {
			b[i] ^= pats[k];
			rk_err e = rk_sb_decode(d, b, n, sb->sb_offset, dev);
			ck_assert_msg(e != RK_OK, "flip 0x%02x at byte %u of %u not caught", pats[k], i, n);
			b[i] ^= pats[k];
		}
	ck_assert_int_eq(rk_sb_decode(d, b, n, sb->sb_offset, dev), RK_OK);
	free(b);
	free(d);
}

START_TEST(test_flips)
{
	static const uint8_t all[] = { 0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80, 0xff, 0x5a };
	struct rk_sb *sb = make_base();
	flips_over(sb, BASE_DEV, all, 10);
	/* a larger table: 300 entries, 16 KiB copy, at the backup place */
	sb->nentries = 300;
	sb->sb_bytes = rk_sb_bytes_for(300);
	for (uint32_t i = 5; i < 300; i++) {
		sb->roles[i].state = RK_ROLE_SPARE;
		rnd_uuid(sb->roles[i].member_uuid);
	}
	sb->sb_offset = rk_sb_backup_offset(BASE_DEV);
	static const uint8_t some[] = { 0x01, 0x80, 0xff };
	flips_over(sb, BASE_DEV, some, 3);
	free(sb);
}
END_TEST

/* ---- init helpers ---- */

START_TEST(test_init)
{
	struct rk_sb *sb = sb_new();
	unsigned char missing[3] = { 0, 1, 0 };
	uint8_t au[16];
	memset(au, 0x77, 16);
	struct rk_sb_params p = {
		.array_uuid = au, .name = "données", .level = 5, .layout = 2, .chunk = 512 * 1024,
		.nroles = 3, .missing = missing, .data_size = 100 * MiB,
	};
	ck_assert_int_eq(rk_sb_init(sb, &p), RK_OK);
	ck_assert_mem_eq(sb->array_uuid, au, 16);
	ck_assert_str_eq(sb->name, "données");
	ck_assert_uint_eq(sb->data_offset, RK_DATA_OFFSET_DEFAULT);
	ck_assert_uint_eq(sb->volume_size, 200 * MiB);
	ck_assert_uint_eq(sb->roles[1].state, RK_ROLE_EMPTY);
	ck_assert_uint_eq(sb->roles[0].state, RK_ROLE_ACTIVE);
	ck_assert_int_ne(memcmp(sb->roles[0].member_uuid, sb->roles[2].member_uuid, 16), 0);
	ck_assert_uint_eq(sb->this_role, RK_ROLE_NONE);
	ck_assert_int_eq(rk_sb_set_member(sb, 1, 200 * MiB), RK_E_INVAL);   /* a missing role */
	ck_assert_int_eq(rk_sb_set_member(sb, 3, 200 * MiB), RK_E_INVAL);
	ck_assert_int_eq(rk_sb_set_member(sb, 2, 50 * MiB), RK_E_CORRUPT);  /* too small for the data */
	ck_assert_int_eq(rk_sb_set_member(sb, 2, 200 * MiB), RK_OK);
	ck_assert_mem_eq(sb->member_uuid, sb->roles[2].member_uuid, 16);
	ck_assert_uint_eq(sb->sb_offset, 4096);
	/* fresh array uuids differ */
	struct rk_sb *sb2 = sb_new();
	p.array_uuid = NULL;
	ck_assert_int_eq(rk_sb_init(sb2, &p), RK_OK);
	ck_assert_int_ne(memcmp(sb2->array_uuid, au, 16), 0);
	p.name = "this name is far too long for the field";
	ck_assert_int_eq(rk_sb_init(sb2, &p), RK_E_INVAL);
	p.name = "bad\x01";
	ck_assert_int_eq(rk_sb_init(sb2, &p), RK_E_INVAL);
	p.name = NULL;
	p.chunk = 0;
	ck_assert_int_eq(rk_sb_init(sb2, &p), RK_E_INVAL);
	ck_assert_ptr_nonnull(strstr(rk_errmsg(), "chunk 0"));
	free(sb2);
	free(sb);
}
END_TEST

/* ---- both copies on a device ---- */

#define DEV_SZ (8 * MiB + 5000)
static struct rk_sb *small_member(uint64_t events)
{
	struct rk_sb *sb = sb_new();
	struct rk_sb_params p = { .name = "pair", .level = 1, .nroles = 2, .data_size = 4 * MiB };
	ck_assert_int_eq(rk_sb_init(sb, &p), RK_OK);
	ck_assert_int_eq(rk_sb_set_member(sb, 0, DEV_SZ), RK_OK);
	sb->events = events;
	return sb;
}

static void put_copy(uint8_t *mem, const struct rk_sb *sb, uint64_t off)
{
	struct rk_sb *t = sb_new();
	*t = *sb;
	t->sb_offset = off;
	ck_assert_msg(rk_sb_encode(t, mem + off, 65536) == RK_OK, "%s", rk_errmsg());
	free(t);
}

START_TEST(test_read_choose)
{
	rk_dev *d;
	struct rk_sb_read r;
	const uint64_t B = rk_sb_backup_offset(DEV_SZ);
	ck_assert_int_eq(rk_dev_mem(&d, "m1", DEV_SZ), RK_OK);
	uint8_t *mem = rk_dev_mem_data(d);
	struct rk_sb *sb = small_member(5);

	/* nothing at all */
	ck_assert_int_eq(rk_sb_read(d, &r), RK_E_NOSB);
	ck_assert_int_eq(r.chosen, -1);
	ck_assert_int_eq(r.copy[0].status, RK_COPY_ABSENT);
	ck_assert_int_eq(r.copy[1].status, RK_COPY_ABSENT);
	ck_assert_ptr_nonnull(strstr(rk_errmsg(), "m1"));
	rk_sb_read_free(&r);

	/* both good and identical */
	ck_assert_int_eq(rk_sb_write(d, sb), RK_OK);
	ck_assert_int_eq(rk_sb_read(d, &r), RK_OK);
	ck_assert_int_eq(r.chosen, 0);
	ck_assert_uint_eq(r.copy[0].offset, 4096);
	ck_assert_uint_eq(r.copy[1].offset, B);
	ck_assert_int_eq(r.copy[1].status, RK_COPY_OK);
	ck_assert_ptr_nonnull(strstr(r.why, "identical"));
	ck_assert_uint_eq(r.copy[1].sb->sb_offset, B);
	rk_sb_read_free(&r);

	/* primary torn: backup chosen */
	mem[4096 + 700] ^= 0x10;
	ck_assert_int_eq(rk_sb_read(d, &r), RK_OK);
	ck_assert_int_eq(r.chosen, 1);
	ck_assert_int_eq(r.copy[0].status, RK_COPY_BAD);
	ck_assert_int_eq(r.copy[0].err, RK_E_BADCRC);
	ck_assert_ptr_nonnull(strstr(r.why, "backup copy chosen"));
	rk_sb_read_free(&r);
	mem[4096 + 700] ^= 0x10;

	/* backup torn: primary chosen */
	mem[B + 100] ^= 0x01;
	ck_assert_int_eq(rk_sb_read(d, &r), RK_OK);
	ck_assert_int_eq(r.chosen, 0);
	ck_assert_int_eq(r.copy[1].status, RK_COPY_BAD);
	ck_assert_ptr_nonnull(strstr(r.why, "backup copy at"));
	rk_sb_read_free(&r);

	/* both bad */
	mem[4096 + 9] ^= 0xff;
	ck_assert_int_eq(rk_sb_read(d, &r), RK_E_NOSB);
	ck_assert_int_eq(r.chosen, -1);
	ck_assert_ptr_nonnull(strstr(r.why, "no valid"));
	rk_sb_read_free(&r);

	/* different events: the higher wins, either way round */
	put_copy(mem, sb, 4096);
	sb->events = 9;
	put_copy(mem, sb, B);
	ck_assert_int_eq(rk_sb_read(d, &r), RK_OK);
	ck_assert_int_eq(r.chosen, 1);
	ck_assert_uint_eq(r.copy[r.chosen].sb->events, 9);
	ck_assert_ptr_nonnull(strstr(r.why, "older"));
	rk_sb_read_free(&r);
	sb->events = 11;
	put_copy(mem, sb, 4096);
	ck_assert_int_eq(rk_sb_read(d, &r), RK_OK);
	ck_assert_int_eq(r.chosen, 0);
	ck_assert_uint_eq(r.copy[0].sb->events, 11);
	rk_sb_read_free(&r);

	/* equal events, different contents: primary, with a note */
	sb->events = 11;
	sb->array_state = RK_ARRAY_ACTIVE;
	put_copy(mem, sb, B);
	ck_assert_int_eq(rk_sb_read(d, &r), RK_OK);
	ck_assert_int_eq(r.chosen, 0);
	ck_assert_ptr_nonnull(strstr(r.why, "disagree"));
	rk_sb_read_free(&r);

	/* a copy moved: the backup's bytes at the primary place are refused */
	memcpy(mem + 4096, mem + B, 65536);
	ck_assert_int_eq(rk_sb_read(d, &r), RK_OK);
	ck_assert_int_eq(r.chosen, 1);
	ck_assert_int_eq(r.copy[0].status, RK_COPY_BAD);
	ck_assert_int_eq(r.copy[0].err, RK_E_CORRUPT);
	ck_assert_ptr_nonnull(strstr(r.copy[0].why, "sb_offset"));
	rk_sb_read_free(&r);
	/* and the primary's bytes at the backup place too */
	put_copy(mem, sb, 4096);
	memcpy(mem + B, mem + 4096, 65536);
	ck_assert_int_eq(rk_sb_read(d, &r), RK_OK);
	ck_assert_int_eq(r.chosen, 0);
	ck_assert_int_eq(r.copy[1].err, RK_E_CORRUPT);
	rk_sb_read_free(&r);
	rk_dev_close(d);
	free(sb);
}
END_TEST

START_TEST(test_read_resized)
{
	rk_dev *d;
	struct rk_sb_read r;
	struct rk_sb *sb = small_member(3);
	const uint64_t B = rk_sb_backup_offset(DEV_SZ);
	/* the image grew by 1 MiB: the backup is found where dev_size put it */
	ck_assert_int_eq(rk_dev_mem(&d, "grown", DEV_SZ + MiB), RK_OK);
	uint8_t *mem = rk_dev_mem_data(d);
	put_copy(mem, sb, 4096);
	put_copy(mem, sb, B);
	ck_assert_int_eq(rk_sb_read(d, &r), RK_OK);
	ck_assert_int_eq(r.copy[1].status, RK_COPY_OK);
	ck_assert_uint_eq(r.copy[1].offset, B);
	ck_assert_ptr_nonnull(strstr(r.copy[1].why, "recorded dev_size"));
	rk_sb_read_free(&r);
	/* a write on the grown device keeps the recorded size and place */
	sb->events = 4;
	ck_assert_int_eq(rk_sb_write(d, sb), RK_OK);
	ck_assert_uint_eq(rk_get_le64(mem + B + 128), 4);
	rk_dev_close(d);
	/* the image shrank: the primary says so, the backup is gone */
	ck_assert_int_eq(rk_dev_mem(&d, "cut", DEV_SZ - 70000), RK_OK);
	mem = rk_dev_mem_data(d);
	put_copy(mem, sb, 4096);
	ck_assert_int_eq(rk_sb_read(d, &r), RK_E_NOSB);
	ck_assert_int_eq(r.copy[0].err, RK_E_SHORT);
	ck_assert_ptr_nonnull(strstr(r.copy[0].why, "has only"));
	rk_sb_read_free(&r);
	/* writing a dev_size larger than the device is refused */
	ck_assert_int_eq(rk_sb_write(d, sb), RK_E_SHORT);
	rk_dev_close(d);
	/* devices too small for any copy */
	ck_assert_int_eq(rk_dev_mem(&d, "tiny", 4096), RK_OK);
	ck_assert_int_eq(rk_sb_read(d, &r), RK_E_NOSB);
	ck_assert_int_eq(r.copy[0].status, RK_COPY_ABSENT);
	ck_assert_int_eq(r.copy[1].status, RK_COPY_ABSENT);
	rk_sb_read_free(&r);
	rk_dev_close(d);
	ck_assert_int_eq(rk_dev_mem(&d, "small", 4096 + 2000), RK_OK);
	put_copy(mem = malloc(DEV_SZ), sb, 4096);
	memcpy(rk_dev_mem_data(d) + 4096, mem + 4096, 2000);
	free(mem);
	ck_assert_int_eq(rk_sb_read(d, &r), RK_E_NOSB);
	ck_assert_int_eq(r.copy[0].status, RK_COPY_BAD);
	ck_assert_int_eq(r.copy[0].err, RK_E_SHORT);
	rk_sb_read_free(&r);
	rk_dev_close(d);
	free(sb);
}
END_TEST

START_TEST(test_write_invalid)
{
	rk_dev *d;
	struct rk_sb *sb = small_member(1);
	/* an invalid superblock is refused before anything is written */
	ck_assert_int_eq(rk_dev_mem(&d, "ro", DEV_SZ), RK_OK);
	sb->nroles = 0;   /* invalid: nothing is written */
	ck_assert_int_eq(rk_sb_write(d, sb), RK_E_CORRUPT);
	ck_assert_ptr_nonnull(strstr(rk_errmsg(), "refusing to write"));
	for (size_t i = 0; i < DEV_SZ; i++)
		if (rk_dev_mem_data(d)[i])
			ck_abort_msg("byte %zu written", i);
	rk_dev_close(d);
	free(sb);
}
END_TEST


/* Through a real image file: both copies land where the spec says. */
START_TEST(test_file_device)
{
	char dir[] = "/tmp/test_sb.XXXXXX", path[64];
	if (!mkdtemp(dir)) {
		printf("SKIP: cannot make a temporary directory in /tmp\n");
		return;
	}
	snprintf(path, sizeof path, "%s/m0.img", dir);
	struct rk_sb *sb = small_member(12);
	rk_dev *d;
	ck_assert_msg(rk_dev_create(&d, path, DEV_SZ) == RK_OK, "%s", rk_errmsg());
	ck_assert_msg(rk_sb_write(d, sb) == RK_OK, "%s", rk_errmsg());
	rk_dev_close(d);
	FILE *f = fopen(path, "rb");
	ck_assert_ptr_nonnull(f);
	uint8_t m[16];
	const uint64_t B = rk_sb_backup_offset(DEV_SZ);
	ck_assert_int_eq(fseeko(f, 4096, SEEK_SET), 0);
	ck_assert_uint_eq(fread(m, 1, 16, f), 16);
	ck_assert_mem_eq(m, "RAIDKIT\0\1\0\0\0", 12);
	ck_assert_int_eq(fseeko(f, (off_t)B, SEEK_SET), 0);
	ck_assert_uint_eq(fread(m, 1, 16, f), 16);
	ck_assert_mem_eq(m, "RAIDKIT\0", 8);
	ck_assert_int_eq(fseeko(f, 0, SEEK_SET), 0);
	uint8_t head[4096];
	ck_assert_uint_eq(fread(head, 1, sizeof head, f), sizeof head);
	for (size_t i = 0; i < sizeof head; i++)
		ck_assert_uint_eq(head[i], 0);     /* the first 4 KiB is left alone */
	fclose(f);
	struct rk_sb_read r;
	ck_assert_int_eq(rk_dev_open(&d, path, RK_DEV_RDONLY), RK_OK);
	ck_assert_int_eq(rk_sb_read(d, &r), RK_OK);
	ck_assert_int_eq(r.chosen, 0);
	ck_assert_uint_eq(r.copy[0].sb->events, 12);
	ck_assert_int_eq(r.copy[1].status, RK_COPY_OK);
	rk_sb_read_free(&r);
	/* read-only: writing is refused by the device layer, named */
	ck_assert_int_eq(rk_sb_write(d, sb), RK_E_READONLY);
	rk_dev_close(d);
	unlink(path);
	rmdir(dir);
	free(sb);
}
END_TEST

/* ---- crash-safe write order ---- */

/* A backend over a caller's buffer that tears write number fail_at (its
 * first `keep` bytes land) and then fails every later write, as a crash. */
struct torn {
	uint8_t *mem;
	uint64_t writes, fail_at;
	size_t keep;
	int dead;
};
static rk_err torn_pread(rk_dev *d, void *buf, size_t len, uint64_t off)
{
	struct torn *t = rk_dev_priv(d);
	memcpy(buf, t->mem + off, len);
	return RK_OK;
}
static rk_err torn_pwrite(rk_dev *d, const void *buf, size_t len, uint64_t off)
{
	struct torn *t = rk_dev_priv(d);
	if (t->dead)
		return rk_fail(RK_E_FAULT, "dead");
	if (t->writes++ == t->fail_at) {
		memcpy(t->mem + off, buf, t->keep < len ? t->keep : len);
		t->dead = 1;
		return rk_fail(RK_E_FAULT, "torn write");
	}
	memcpy(t->mem + off, buf, len);
	return RK_OK;
}
static rk_err torn_flush(rk_dev *d)
{
	struct torn *t = rk_dev_priv(d);
	return t->dead ? rk_fail(RK_E_FAULT, "dead") : RK_OK;
}
static void torn_close(rk_dev *d)
{
	free(rk_dev_priv(d));
}
static const struct rk_dev_ops torn_ops = { "torn", torn_pread, torn_pwrite, torn_flush, torn_close };

/* Initial states: 0 both copies old, 1 primary bad, 2 backup bad, 3 nothing. */
static void set_initial(uint8_t *mem, const struct rk_sb *old, int state)
{
	const uint64_t B = rk_sb_backup_offset(DEV_SZ);
	memset(mem, 0, DEV_SZ);
	if (state == 3)
		return;
	put_copy(mem, old, 4096);
	put_copy(mem, old, B);
	if (state == 1)
		mem[4096 + 130] ^= 1;
	if (state == 2)
		mem[B + 3000] ^= 1;
}

/* After any interruption: a copy is trusted and it is the old or the new
 * superblock, whole. */
static void check_after(uint8_t *mem, const struct rk_sb *old, const struct rk_sb *nw, int state,
                        const char *what)
{
	rk_dev *d;
	struct rk_sb_read r;
	ck_assert_int_eq(rk_dev_mem(&d, "after", DEV_SZ), RK_OK);
	memcpy(rk_dev_mem_data(d), mem, DEV_SZ);
	rk_err e = rk_sb_read(d, &r);
	if (state == 3 && e == RK_E_NOSB) {   /* a first write may leave nothing yet */
		rk_sb_read_free(&r);
		rk_dev_close(d);
		return;
	}
	ck_assert_msg(e == RK_OK, "%s: no good copy left: %s", what, r.why);
	struct rk_sb *c = r.copy[r.chosen].sb;
	uint64_t off = c->sb_offset;
	c->sb_offset = old->sb_offset;
	int is_old = state != 3 && !memcmp(c, old, sizeof *c);
	c->sb_offset = nw->sb_offset;
	int is_new = !memcmp(c, nw, sizeof *c);
	c->sb_offset = off;
	ck_assert_msg(is_old || is_new, "%s: the trusted copy is neither old nor new (%s)", what, r.why);
	rk_sb_read_free(&r);
	rk_dev_close(d);
}

START_TEST(test_write_torn)
{
	static const size_t keeps[] = { 0, 1, 16, 512, 4095, 4096, 8192, 65535 };
	struct rk_sb *old = small_member(5), *nw = small_member(6);
	memcpy(nw->array_uuid, old->array_uuid, 16);
	memcpy(nw->member_uuid, old->member_uuid, 16);
	memcpy(nw->roles, old->roles, sizeof old->roles);
	nw->utime = old->utime + 10;
	nw->array_state = RK_ARRAY_ACTIVE;
	uint8_t *mem = malloc(DEV_SZ);
	unsigned cases = 0;
	for (int state = 0; state < 4; state++)
		for (uint64_t n = 0; n < 3; n++)
			for (size_t k = 0; k < sizeof keeps / sizeof keeps[0]; k++) {
				set_initial(mem, old, state);
				struct torn *t = calloc(1, sizeof *t);
				t->mem = mem;
				t->fail_at = n;
				t->keep = keeps[k];
				rk_dev *d;
				ck_assert_int_eq(rk_dev_new(&d, &torn_ops, t, "torn", DEV_SZ, 512, 1), RK_OK);
				rk_err e = rk_sb_write(d, nw);
				uint64_t writes = t->writes;
				rk_dev_close(d);
				char what[96];
				snprintf(what, sizeof what, "state %d, write %llu torn after %zu bytes", state,
				         (unsigned long long)n, keeps[k]);
				if (n >= 2) {   /* two writes: the third never comes */
					ck_assert_int_eq(e, RK_OK);
					ck_assert_uint_eq(writes, 2);
				} else {
					ck_assert_int_ne(e, RK_OK);
				}
				check_after(mem, old, nw, state, what);
				cases++;
			}
	ck_assert_uint_eq(cases, 96);
	free(mem);
	free(old);
	free(nw);
}
END_TEST

/* The same with the shared fault backend's power cut (buffered writes that
 * persist as a seeded subset), over every write and many seeds. */
START_TEST(test_write_power_cut)
{
	struct rk_sb *old = small_member(5), *nw = small_member(6);
	memcpy(nw->array_uuid, old->array_uuid, 16);
	memcpy(nw->member_uuid, old->member_uuid, 16);
	memcpy(nw->roles, old->roles, sizeof old->roles);
	nw->array_state = RK_ARRAY_ACTIVE;
	uint8_t *mem = malloc(DEV_SZ);
	for (int state = 0; state < 4; state++)
		for (uint64_t n = 0; n < 3; n++)
			for (uint64_t seed = 1; seed <= 12; seed++) {
				rk_dev *lower, *d;
				rk_fault_plan *p;
				struct rk_fault_spec fs = { .model = RK_FAULT_POWER_CUT, .n = n, .seed = seed };
				ck_assert_int_eq(rk_dev_mem(&lower, "pc", DEV_SZ), RK_OK);
				set_initial(rk_dev_mem_data(lower), old, state);
				ck_assert_int_eq(rk_fault_plan_create(&p, &fs), RK_OK);
				ck_assert_int_eq(rk_dev_fault(&d, lower, p, 0), RK_OK);
				(void)rk_sb_write(d, nw);
				ck_assert_int_eq(rk_fault_crash(p), RK_OK);
				rk_dev *low = rk_fault_lower(p, 0);
				ck_assert_ptr_nonnull(low);
				memcpy(mem, rk_dev_mem_data(low), DEV_SZ);
				rk_dev_close(d);
				rk_fault_plan_free(p);
				char what[96];
				snprintf(what, sizeof what, "state %d, power cut at write %llu, seed %llu", state,
				         (unsigned long long)n, (unsigned long long)seed);
				check_after(mem, old, nw, state, what);
			}
	free(mem);
	free(old);
	free(nw);
}
END_TEST


/* ---- the worked example of spec/format.md ---- */

/* Rebuilds the example superblock and compares it with the hex dump in
 * spec/format.md, so the document cannot drift from the code. */
START_TEST(test_spec_example)
{
	FILE *f = fopen("spec/format.md", "r");
	if (!f) {
		printf("SKIP: spec/format.md not found from %s (run from the source tree)\n", "the current directory");
		return;
	}
	uint8_t want[512];
	size_t nwant = 0;
	char line[256];
	int in = 0;
	while (fgets(line, sizeof line, f)) {
		if (strstr(line, "<!-- example-hexdump"))
			in = 1;
		else if (strstr(line, "<!-- end-example-hexdump"))
			in = 0;
		else if (in && strlen(line) > 50 && line[8] == ':') {
			/* xxd: "00000010: 65a7 d8a6 ...  text" */
			unsigned long addr = strtoul(line, NULL, 16);
			ck_assert_uint_eq(addr, nwant);
			const char *q = line + 10;
			for (int k = 0; k < 16; k++) {
				unsigned v;
				while (*q == ' ')
					q++;
				ck_assert_int_eq(sscanf(q, "%2x", &v), 1);
				want[nwant++] = (uint8_t)v;
				q += 2;
			}
		}
	}
	fclose(f);
	ck_assert_uint_ge(nwant, 128);

	static const uint8_t au[16] = { 0x6b, 0x1e, 0x2f, 0x9a, 0x43, 0xc0, 0x4d, 0x11,
	                                0x9e, 0x5b, 0x0c, 0x7e, 0x21, 0x88, 0x3a, 0xf4 };
	static const uint8_t mu[16] = { 0xd2, 0x4a, 0x70, 0x01, 0x5c, 0x3e, 0x4b, 0x8f,
	                                0xa1, 0x07, 0x93, 0x6d, 0xe0, 0x2b, 0x55, 0x00 };
	struct rk_sb *sb = sb_new();
	struct rk_sb_params p = { .array_uuid = au, .name = "example", .level = 5, .layout = 2,
	                          .chunk = 65536, .nroles = 4 };
	const uint64_t dev = 1 * GiB;
	p.data_size = rk_sb_max_data_size(dev, 1 * MiB, 65536);
	ck_assert_int_eq(rk_sb_init(sb, &p), RK_OK);
	for (int i = 0; i < 4; i++) {
		memcpy(sb->roles[i].member_uuid, mu, 16);
		sb->roles[i].member_uuid[15] = (uint8_t)(0x10 + i);
	}
	sb->ctime = 1732900000;
	sb->utime = 1732900042;
	sb->events = 7;
	ck_assert_int_eq(rk_sb_set_member(sb, 2, dev), RK_OK);
	uint8_t *b = malloc(65536);
	ck_assert_int_eq(rk_sb_encode(sb, b, 65536), RK_OK);
	for (size_t i = 0; i < nwant; i++)
		ck_assert_msg(b[i] == want[i], "spec/format.md example byte 0x%zx: spec 0x%02x, library 0x%02x",
		              i, want[i], b[i]);
	free(b);
	free(sb);
}
END_TEST

int main(void)
{
	const struct rk_test_entry tests_codec[] = {
		RK_TEST(test_sizes), RK_TEST(test_volume_size), RK_TEST(test_offsets),
		RK_TEST(test_roundtrip_random), RK_TEST(test_encode_sb_bytes_zero),
		RK_TEST_LOOP(test_rules, 0, NRULES), RK_TEST(test_decode_rules),
		RK_TEST(test_features), RK_TEST(test_flips), RK_TEST(test_init),
		RK_TEST(test_spec_example), RK_TEST_END,
	};
	const struct rk_test_entry tests_copies[] = {
		RK_TEST(test_read_choose), RK_TEST(test_read_resized), RK_TEST(test_write_invalid),
		RK_TEST(test_file_device), RK_TEST(test_write_torn), RK_TEST(test_write_power_cut), RK_TEST_END,
	};
	const struct rk_test_case cases[] = {
		{ "codec", 0, NULL, NULL, 0, tests_codec },
		{ "copies", 0, NULL, NULL, 0, tests_copies },
		RK_TEST_CASES_END,
	};
	return rk_test_main("sb", cases);
}
