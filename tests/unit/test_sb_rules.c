/* test_sb_rules.c: every validation rule of the superblock, on encode and
 * on decode, feature bits, and bit flips in encoded copies. */
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
	uint64_t dev = SB_SAMPLE_BASE_DEV;
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
	else if (!strcmp(n, "dev shrank")) dev = SB_SAMPLE_BASE_DEV - 4096;
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
	struct rk_sb *sb = sb_sample_base();
	ck_assert_msg(rk_sb_validate(sb, SB_SAMPLE_BASE_DEV) == RK_OK, "%s", rk_errmsg());
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
	struct rk_sb *sb = sb_sample_base(), *d = sb_sample_new();
	uint8_t *b = malloc(65536), *t = malloc(65536);
	ck_assert_int_eq(rk_sb_encode(sb, b, 65536), RK_OK);
	ck_assert_int_eq(rk_sb_decode(d, b, 4096, 4096, SB_SAMPLE_BASE_DEV), RK_OK);

	ck_assert_int_eq(rk_sb_decode(d, b, 4, 4096, SB_SAMPLE_BASE_DEV), RK_E_NOSB);
	ck_assert_int_eq(rk_sb_decode(d, b, 300, 4096, SB_SAMPLE_BASE_DEV), RK_E_SHORT);
	ck_assert_int_eq(rk_sb_decode(d, b, 4095, 4096, SB_SAMPLE_BASE_DEV), RK_E_SHORT);
	ck_assert_ptr_nonnull(strstr(rk_errmsg(), "4095"));

	memcpy(t, b, 4096); t[7] = 'X';
	ck_assert_int_eq(rk_sb_decode(d, t, 4096, 4096, SB_SAMPLE_BASE_DEV), RK_E_NOSB);
	memcpy(t, b, 4096); rk_put_le32(t + 8, 2);
	ck_assert_int_eq(rk_sb_decode(d, t, 4096, 4096, SB_SAMPLE_BASE_DEV), RK_E_VERSION);
	memcpy(t, b, 4096); rk_put_le32(t + 12, 5000);
	ck_assert_int_eq(rk_sb_decode(d, t, 4096, 4096, SB_SAMPLE_BASE_DEV), RK_E_CORRUPT);
	ck_assert_ptr_nonnull(strstr(rk_errmsg(), "sb_bytes 5000"));
	memcpy(t, b, 4096); rk_put_le32(t + 12, 0);
	ck_assert_int_eq(rk_sb_decode(d, t, 4096, 4096, SB_SAMPLE_BASE_DEV), RK_E_CORRUPT);
	memcpy(t, b, 4096); t[100] ^= 1;
	ck_assert_int_eq(rk_sb_decode(d, t, 4096, 4096, SB_SAMPLE_BASE_DEV), RK_E_BADCRC);
	ck_assert_ptr_nonnull(strstr(rk_errmsg(), "crc"));
	/* nentries larger than sb_bytes holds: refused before the table is read */
	memcpy(t, b, 4096); rk_put_le32(t + 156, 200); sb_sample_fix_crc(t);
	ck_assert_int_eq(rk_sb_decode(d, t, 4096, 4096, SB_SAMPLE_BASE_DEV), RK_E_CORRUPT);
	ck_assert_ptr_nonnull(strstr(rk_errmsg(), "nentries 200"));
	memcpy(t, b, 4096); rk_put_le32(t + 156, 0xffffffffu); sb_sample_fix_crc(t);
	ck_assert_int_eq(rk_sb_decode(d, t, 4096, 4096, SB_SAMPLE_BASE_DEV), RK_E_CORRUPT);
	/* padding after the table */
	memcpy(t, b, 4096); t[4000] = 1; sb_sample_fix_crc(t);
	ck_assert_int_eq(rk_sb_decode(d, t, 4096, 4096, SB_SAMPLE_BASE_DEV), RK_E_CORRUPT);
	ck_assert_ptr_nonnull(strstr(rk_errmsg(), "padding"));
	/* name bytes after the NUL */
	memcpy(t, b, 4096); t[80 + 20] = 'q'; sb_sample_fix_crc(t);
	ck_assert_int_eq(rk_sb_decode(d, t, 4096, 4096, SB_SAMPLE_BASE_DEV), RK_E_CORRUPT);
	ck_assert_ptr_nonnull(strstr(rk_errmsg(), "name"));
	/* a full 32-byte name (no NUL on disk) is fine */
	memcpy(t, b, 4096); memset(t + 80, 'n', 32); sb_sample_fix_crc(t);
	ck_assert_int_eq(rk_sb_decode(d, t, 4096, 4096, SB_SAMPLE_BASE_DEV), RK_OK);
	ck_assert_uint_eq(strlen(d->name), 32);
	/* a copy found away from its recorded place */
	ck_assert_int_eq(rk_sb_decode(d, b, 4096, 8192, SB_SAMPLE_BASE_DEV), RK_E_CORRUPT);
	ck_assert_ptr_nonnull(strstr(rk_errmsg(), "found at byte 8192"));
	ck_assert_int_eq(rk_sb_decode(d, b, 4096, rk_sb_backup_offset(SB_SAMPLE_BASE_DEV), SB_SAMPLE_BASE_DEV), RK_E_CORRUPT);
	/* truncated device */
	ck_assert_int_eq(rk_sb_decode(d, b, 4096, 4096, SB_SAMPLE_BASE_DEV - 1), RK_E_SHORT);
	/* unknown incompat bits are named */
	memcpy(t, b, 4096); rk_put_le64(t + 40, 0x8000000000000100ull); sb_sample_fix_crc(t);
	ck_assert_int_eq(rk_sb_decode(d, t, 4096, 4096, SB_SAMPLE_BASE_DEV), RK_E_FEATURE);
	ck_assert_ptr_nonnull(strstr(rk_errmsg(), "0x8000000000000100"));
	free(b);
	free(t);
	free(d);
	free(sb);
}
END_TEST

START_TEST(test_features)
{
	struct rk_sb *sb = sb_sample_base(), *d = sb_sample_new();
	uint8_t *b = malloc(65536), *b2 = malloc(65536);
	/* unknown compat: decoded, kept, reserved bytes carried through */
	sb->feat_compat = 0x4000;
	sb->reserved[10] = 0x5a;
	sb->roles[0].flags = 7;
	ck_assert_int_eq(rk_sb_encode(sb, b, 65536), RK_OK);
	ck_assert_int_eq(rk_sb_decode(d, b, 4096, 4096, SB_SAMPLE_BASE_DEV), RK_OK);
	ck_assert_uint_eq(d->feat_compat, 0x4000);
	ck_assert_uint_eq(d->reserved[10], 0x5a);
	ck_assert_uint_eq(d->roles[0].flags, 7);
	ck_assert_int_eq(rk_sb_encode(d, b2, 65536), RK_OK);
	ck_assert_mem_eq(b, b2, 4096);
	/* without an unknown feature bit the same bytes are refused */
	rk_put_le64(b + 24, 0); sb_sample_fix_crc(b);
	ck_assert_int_eq(rk_sb_decode(d, b, 4096, 4096, SB_SAMPLE_BASE_DEV), RK_E_CORRUPT);
	/* unknown ro_compat: readable, not writable */
	sb->feat_compat = 0;
	sb->feat_ro_compat = 0x2;
	ck_assert_int_eq(rk_sb_encode(sb, b, 65536), RK_OK);
	ck_assert_int_eq(rk_sb_decode(d, b, 4096, 4096, SB_SAMPLE_BASE_DEV), RK_OK);
	rk_dev *dev;
	ck_assert_int_eq(rk_dev_mem(&dev, "m0", SB_SAMPLE_BASE_DEV), RK_OK);
	ck_assert_int_eq(rk_sb_write(dev, sb), RK_E_FEATURE);
	ck_assert_ptr_nonnull(strstr(rk_errmsg(), "ro_compat"));
	uint8_t *mem = rk_dev_mem_data(dev);
	for (size_t i = 0; i < 8; i++)
		ck_assert_uint_eq(mem[4096 + i], 0);   /* nothing written */
	rk_dev_close(dev);
	/* unknown incompat: refused by name */
	sb->feat_ro_compat = 0;
	sb->feat_incompat = 0x4;
	ck_assert_int_eq(rk_sb_validate(sb, SB_SAMPLE_BASE_DEV), RK_E_FEATURE);
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
	struct rk_sb *d = sb_sample_new();
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
	struct rk_sb *sb = sb_sample_base();
	flips_over(sb, SB_SAMPLE_BASE_DEV, all, 10);
	/* a larger table: 300 entries, 16 KiB copy, at the backup place */
	sb->nentries = 300;
	sb->sb_bytes = rk_sb_bytes_for(300);
	for (uint32_t i = 5; i < 300; i++) {
		sb->roles[i].state = RK_ROLE_SPARE;
		sb_sample_uuid(sb->roles[i].member_uuid);
	}
	sb->sb_offset = rk_sb_backup_offset(SB_SAMPLE_BASE_DEV);
	static const uint8_t some[] = { 0x01, 0x80, 0xff };
	flips_over(sb, SB_SAMPLE_BASE_DEV, some, 3);
	free(sb);
}
END_TEST

RK_TEST_SUITE("sb_rules", { "rules", 0, NULL, NULL, 0,
	  RK_TESTS(RK_TEST_LOOP(test_rules, 0, NRULES), RK_TEST(test_decode_rules),
	           RK_TEST(test_features), RK_TEST(test_flips)) })
