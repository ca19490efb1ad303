/* test_sb_codec.c: the superblock codec: sizes and placement, every field
 * at its pinned byte, random round trips, the init helpers, and the worked
 * example of spec/format.md.
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
#include "helpers/sb_samples.h"

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
	ck_assert_uint_eq(rk_level_min_roles(-1), 1);
	ck_assert_uint_eq(rk_level_min_roles(0), 1);
	ck_assert_uint_eq(rk_level_min_roles(1), 1);
	ck_assert_uint_eq(rk_level_min_roles(4), 2);
	ck_assert_uint_eq(rk_level_min_roles(5), 2);
	ck_assert_uint_eq(rk_level_min_roles(6), 3);
	ck_assert_uint_eq(rk_level_min_roles(10), 2);
	ck_assert_uint_eq(rk_level_min_roles(7), 0);
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
	struct rk_sb *sb = sb_sample_new();
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
	struct rk_sb *d = sb_sample_new();
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
	struct rk_sb *sb = sb_sample_new(), *d = sb_sample_new();
	uint8_t *b = malloc(65536), *b2 = malloc(65536);
	unsigned n_backup = 0, n_reshape = 0, n_big = 0;
	for (int it = 0; it < 600; it++) {
		sb_sample_random(sb);
		ck_assert_msg(rk_sb_validate(sb, sb->dev_size) == RK_OK, "iteration %d: %s", it, rk_errmsg());
		ck_assert_msg(rk_sb_encode(sb, b, 65536) == RK_OK, "iteration %d: %s", it, rk_errmsg());
		uint32_t n = rk_get_le32(b + 12);
		ck_assert_uint_eq(n, sb->sb_bytes);
		/* the device may have grown since */
		uint64_t dev = sb->dev_size + 4096 * rk_test_rnd_below(3);
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
	struct rk_sb *sb = sb_sample_base();
	uint8_t *b = malloc(65536);
	sb->sb_bytes = 0;   /* computed */
	ck_assert_int_eq(rk_sb_encode(sb, b, 65536), RK_OK);
	ck_assert_uint_eq(rk_get_le32(b + 12), 4096);
	ck_assert_int_eq(rk_sb_encode(sb, b, 4095), RK_E_RANGE);
	free(b);
	free(sb);
}
END_TEST

/* ---- init helpers ---- */

START_TEST(test_init)
{
	struct rk_sb *sb = sb_sample_new();
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
	struct rk_sb *sb2 = sb_sample_new();
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
	struct rk_sb *sb = sb_sample_new();
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

RK_TEST_SUITE("sb_codec", { "codec", 0, NULL, NULL, 0,
	  RK_TESTS(RK_TEST(test_sizes), RK_TEST(test_volume_size), RK_TEST(test_offsets),
	           RK_TEST(test_roundtrip_random), RK_TEST(test_encode_sb_bytes_zero),
	           RK_TEST(test_init), RK_TEST(test_spec_example)) })
