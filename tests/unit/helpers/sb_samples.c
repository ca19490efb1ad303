/* sb_samples.c: superblocks for the sb suites (contracts in sb_samples.h). */
#include "sb_samples.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "rk_le.h"
#include "rk_test.h"

void sb_sample_uuid(uint8_t *u)
{
	uint64_t a = rk_test_rnd(), b = rk_test_rnd();
	memcpy(u, &a, 8);
	memcpy(u + 8, &b, 8);
	u[0] |= 1;   /* never nil */
}

struct rk_sb *sb_sample_new(void)
{
	struct rk_sb *sb = calloc(1, sizeof *sb);
	ck_assert_ptr_nonnull(sb);
	return sb;
}

/* Recomputes the CRC of an encoded copy the way spec/format.md states it:
 * zlib crc32(0, ...) over sb_bytes with bytes 16..19 read as zero. */
void sb_sample_fix_crc(uint8_t *buf)
{
	uint32_t n = rk_get_le32(buf + 12);
	rk_put_le32(buf + 16, 0);
	rk_put_le32(buf + 16, (uint32_t)crc32(0, buf, n));
}

/* A valid RAID-5 member: 4 roles + 1 spare, this member role 1. */
struct rk_sb *sb_sample_base(void)
{
	struct rk_sb *sb = sb_sample_new();
	struct rk_sb_params p = {
		.name = "base", .level = 5, .layout = 2, .chunk = 65536, .nroles = 4,
		.data_offset = 1 * MiB,
	};
	p.data_size = rk_sb_max_data_size(SB_SAMPLE_BASE_DEV, p.data_offset, p.chunk);
	ck_assert_uint_gt(p.data_size, 0);
	ck_assert_int_eq(rk_sb_init(sb, &p), RK_OK);
	sb->nentries = 5;
	sb->sb_bytes = rk_sb_bytes_for(5);
	sb->roles[4].state = RK_ROLE_SPARE;
	sb_sample_uuid(sb->roles[4].member_uuid);
	sb->events = 42;
	ck_assert_int_eq(rk_sb_set_member(sb, 1, SB_SAMPLE_BASE_DEV), RK_OK);
	return sb;
}

/* A random valid superblock: every level, role count, placement and
 * optional block. */
void sb_sample_random(struct rk_sb *sb)
{
	static const int32_t levels[] = { -1, 0, 1, 4, 5, 6, 10 };
	memset(sb, 0, sizeof *sb);
	sb->version = RK_SB_VERSION;
	int32_t level = levels[rk_test_rnd_below(7)];
	uint32_t minr = rk_level_min_roles(level);
	uint32_t nroles = minr + (uint32_t)rk_test_rnd_below(rk_test_rnd_below(10) == 0 ? 300 : 12);
	uint32_t layout = 0;
	uint64_t chunk = 0;
	if (level == 4)
		layout = rk_test_rnd_below(2) ? 5 : 0;
	if (level == 5)
		layout = (uint32_t)rk_test_rnd_below(6);
	if (level == 6) {
		static const uint32_t l6[] = { 0, 1, 2, 3, 4, 5, 8, 9, 10, 16, 17, 18, 19, 20 };
		layout = l6[rk_test_rnd_below(14)];
		if (nroles > 255)
			nroles = 255;
	}
	if (level == 10) {
		static const uint32_t l10[] = { 0x102, 0x201, 0x10201, 0x103, 0x202, 0x301, 0x20201, 0x40102 };
		do
			layout = l10[rk_test_rnd_below(8)];
		while ((layout & 0xff) * ((layout >> 8) & 0xff) > nroles);
	}
	if (level != -1 && level != 1)
		chunk = 4096ull << rk_test_rnd_below(13);
	int reshape = rk_test_rnd_below(4) == 0, journal = rk_test_rnd_below(3) == 0;
	uint32_t newroles = nroles + (uint32_t)rk_test_rnd_below(3);
	if (newroles > RK_SB_MAX_ROLES)
		newroles = RK_SB_MAX_ROLES;
	uint32_t span = reshape && newroles > nroles ? newroles : nroles;
	uint32_t nentries = span + (uint32_t)rk_test_rnd_below(4);
	if (rk_test_rnd_below(50) == 0)
		nentries = RK_SB_MAX_ROLES;
	if (nentries > RK_SB_MAX_ROLES)
		nentries = RK_SB_MAX_ROLES;
	uint64_t unit = chunk ? chunk : 4096;
	uint64_t data_offset = RK_SB_PRIMARY_END + 4096 * rk_test_rnd_below(512);
	uint64_t jsize = 4096 * (1 + rk_test_rnd_below(64));
	if (journal)
		data_offset += jsize + 4096 * rk_test_rnd_below(4);
	uint64_t data_size = unit * (1 + rk_test_rnd_below(1000));
	if (rk_test_rnd_below(8) == 0)
		data_size *= 1ull << rk_test_rnd_below(20);          /* up to TB-sized members */
	uint64_t dev_size = data_offset + data_size + 4096 * rk_test_rnd_below(100) + RK_SB_AREA + rk_test_rnd_below(4096);
	sb->sb_bytes = rk_sb_bytes_for(nentries);
	sb_sample_uuid(sb->array_uuid);
	static const char *const parts[] = { "a", "Z9", "-", "é", "€", "\xf0\x9f\x98\x80", "md", " " };
	size_t nl = 0;
	for (uint64_t k = rk_test_rnd_below(12); k > 0; k--) {
		const char *s = parts[rk_test_rnd_below(8)];
		if (nl + strlen(s) > RK_SB_NAME_LEN)
			break;
		memcpy(sb->name + nl, s, strlen(s));
		nl += strlen(s);
	}
	sb->ctime = rk_test_rnd();
	sb->utime = rk_test_rnd();
	sb->level = level;
	sb->layout = layout;
	sb->chunk = chunk;
	sb->nroles = nroles;
	sb->nentries = nentries;
	sb->array_state = (uint32_t)rk_test_rnd_below(2);
	sb->events = rk_test_rnd();
	sb->data_offset = data_offset;
	sb->data_size = data_size;
	sb->dev_size = dev_size;
	sb->sb_offset = rk_test_rnd_below(2) ? RK_SB_PRIMARY_OFF : rk_sb_backup_offset(dev_size);
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
		sb->reshape_pos = rk_test_rnd_below(sb->volume_size + 1);
		sb->reshape_flags = (uint32_t)rk_test_rnd_below(2);
	}
	sb->scrub_pos = rk_test_rnd_below(2) ? rk_test_rnd_below(sb->volume_size + 1) : 0;
	for (uint32_t i = 0; i < nentries; i++) {
		struct rk_role *r = &sb->roles[i];
		if (i < span)
			r->state = (uint32_t)rk_test_rnd_below(4);   /* empty, active, faulty, rebuilding */
		else
			r->state = rk_test_rnd_below(2) ? RK_ROLE_SPARE : RK_ROLE_EMPTY;
		if (r->state != RK_ROLE_EMPTY || rk_test_rnd_below(2))
			sb_sample_uuid(r->member_uuid);
		if (r->state == RK_ROLE_REBUILDING)
			r->checkpoint = rk_test_rnd_below(data_size + 1);
	}
	uint32_t me = (uint32_t)rk_test_rnd_below(nentries);
	if (sb->roles[me].state == RK_ROLE_EMPTY || rk_test_rnd_below(10) == 0) {
		sb->this_role = RK_ROLE_NONE;
		sb_sample_uuid(sb->member_uuid);
		for (uint32_t i = 0; i < nentries; i++)   /* keep it out of the table */
			if (!memcmp(sb->roles[i].member_uuid, sb->member_uuid, 16))
				sb->roles[i].state = RK_ROLE_EMPTY, sb->roles[i].checkpoint = 0;
	} else {
		sb->this_role = me;
		memcpy(sb->member_uuid, sb->roles[me].member_uuid, 16);
	}
}
