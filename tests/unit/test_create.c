/* test_create.c: rk_create on temporary files: superblocks, sizes, missing
 * members, refusal writing nothing, created files, old-content resync and
 * the --from fill (read back through the engine, also degraded). */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "rk_create.h"
#include "rk_dev.h"
#include "rk_geom.h"
#include "rk_sb.h"
#include "rk_vol.h"
#include "helpers/rk_test.h"

#define MIB (1024u * 1024u)
#define MAXM 8

static const char *const *pp;   /* the member paths */

static void setup(void)
{
	rk_test_tmpdir_make();
	pp = rk_test_member_paths();
}

/* Fills [off, off+len) of P with seeded pseudo-random bytes. */
static void junk(const char *p, uint64_t off, uint64_t len, unsigned seed)
{
	uint8_t *b = rk_test_random_bytes(len, seed);
	rk_test_write_at(p, b, len, off);
	free(b);
}

static void opts_init(struct rk_create_opts *o, int32_t level, uint32_t n)
{
	memset(o, 0, sizeof *o);
	o->level = level;
	o->layout = RK_CREATE_LAYOUT_DEFAULT;
	o->nmembers = n;
	o->paths = pp;
}

/* Opens the created array's volume over its members; role SKIP (or -1)
 * left out, to read degraded. */
static rk_vol *open_vol(const struct rk_create_plan *p, rk_dev **devs, int skip)
{
	struct rk_geom g;
	uint64_t doff[MAXM];
	ck_assert_int_eq(rk_geom_init(&g, p->level, p->layout, p->chunk, p->nroles, p->data_size), RK_OK);
	ck_assert_uint_eq(g.volume_size, p->volume_size);
	for (uint32_t i = 0; i < p->nroles; i++) {
		devs[i] = NULL;
		doff[i] = p->data_offset;
		if ((int)i == skip || !p->members[i].path)
			continue;
		ck_assert_int_eq(rk_dev_open(&devs[i], p->members[i].path, RK_DEV_RDONLY), RK_OK);
	}
	rk_vol *v = NULL;
	rk_err e = rk_vol_open(&v, &g, devs, doff);
	ck_assert_msg(e == RK_OK, "rk_vol_open: %s", rk_errmsg());
	return v;
}

static void close_vol(rk_vol *v, rk_dev **devs, uint32_t n)
{
	rk_vol_close(v);
	for (uint32_t i = 0; i < n; i++)
		rk_dev_close(devs[i]);
}

static uint8_t *read_volume(const struct rk_create_plan *p, int skip)
{
	rk_dev *devs[MAXM];
	rk_vol *v = open_vol(p, devs, skip);
	uint8_t *b = malloc(p->volume_size);
	ck_assert_ptr_nonnull(b);
	rk_err e = rk_vol_read(v, b, p->volume_size, 0);
	ck_assert_msg(e == RK_OK, "read (without role %d): %s", skip, rk_errmsg());
	close_vol(v, devs, p->nroles);
	return b;
}

/* Every role's superblock: same array, its role, events 1, the plan's sizes. */
static void check_sbs(const struct rk_create_plan *p)
{
	for (uint32_t i = 0; i < p->nroles; i++) {
		if (!p->members[i].path)
			continue;
		rk_dev *d = NULL;
		ck_assert_int_eq(rk_dev_open(&d, p->members[i].path, RK_DEV_RDONLY), RK_OK);
		struct rk_sb_read rd;
		rk_err e = rk_sb_read(d, &rd);
		ck_assert_msg(e == RK_OK, "%s: %s", p->members[i].path, rk_errmsg());
		ck_assert_int_eq(rd.copy[0].status, RK_COPY_OK);
		ck_assert_int_eq(rd.copy[1].status, RK_COPY_OK);
		const struct rk_sb *sb = rd.copy[rd.chosen].sb;
		ck_assert_mem_eq(sb->array_uuid, p->array_uuid, 16);
		ck_assert_mem_eq(sb->member_uuid, p->members[i].uuid, 16);
		ck_assert_uint_eq(sb->this_role, i);
		ck_assert_uint_eq(sb->events, 1);
		ck_assert_uint_eq(sb->nroles, p->nroles);
		ck_assert_int_eq(sb->level, p->level);
		ck_assert_uint_eq(sb->data_offset, RK_DATA_OFFSET_DEFAULT);
		ck_assert_uint_eq(sb->data_size, p->data_size);
		ck_assert_uint_eq(sb->volume_size, p->volume_size);
		ck_assert_uint_eq(sb->array_state, RK_ARRAY_CLEAN);
		for (uint32_t r = 0; r < p->nroles; r++)
			ck_assert_uint_eq(sb->roles[r].state, p->members[r].path ? RK_ROLE_ACTIVE : RK_ROLE_EMPTY);
		rk_sb_read_free(&rd);
		rk_dev_close(d);
	}
}

START_TEST(t_each_level)
{
	static const int32_t levels[] = {RK_LEVEL_LINEAR, 0, 1, 4, 5, 6, 10};
	int32_t level = levels[_i];
	uint32_t n = level == 6 ? 5 : 4;
	for (uint32_t i = 0; i < n; i++)
		rk_test_make_file(pp[i], 8 * MIB);
	struct rk_create_opts o;
	opts_init(&o, level, n);
	o.chunk = 64 * 1024;
	o.name = "test";
	struct rk_create_plan p;
	rk_err e = rk_create(&o, &p);
	ck_assert_msg(e == RK_OK, "level %d: %s", level, rk_errmsg());
	ck_assert_str_eq(p.name, "test");
	ck_assert_uint_eq(p.nroles, n);
	ck_assert_uint_eq(p.data_offset, RK_DATA_OFFSET_DEFAULT);
	/* 8 MiB - 1 MiB data offset - 64 KiB backup area, in whole chunks. */
	uint64_t expect = 8 * MIB - MIB - RK_SB_AREA;
	if (p.chunk)
		expect -= expect % p.chunk;
	ck_assert_uint_eq(p.data_size, expect);
	ck_assert_uint_eq(p.chunk, (level == RK_LEVEL_LINEAR || level == 1) ? 0 : 64 * 1024);
	uint64_t vs = 0;
	ck_assert_int_eq(rk_sb_volume_size(p.level, p.layout, p.chunk, n, p.data_size, &vs), RK_OK);
	ck_assert_uint_eq(p.volume_size, vs);
	check_sbs(&p);
	/* Fresh zero members: the volume reads zero. */
	uint8_t *b = read_volume(&p, -1);
	for (uint64_t i = 0; i < p.volume_size; i++)
		if (b[i])
			ck_abort_msg("level %d: volume byte %llu is %u", level, (unsigned long long)i, b[i]);
	free(b);
	ck_assert_uint_eq(p.stripes_resynced, 0);
	ck_assert_uint_eq(p.bytes_scanned, 0);   /* sparse: nothing read */
	rk_create_plan_free(&p);
}
END_TEST

START_TEST(t_refuse_existing_array_writes_nothing)
{
	for (int i = 0; i < 3; i++)
		rk_test_make_file(pp[i], 4 * MIB);
	struct rk_create_opts o;
	opts_init(&o, 5, 3);
	o.chunk = 4096;
	struct rk_create_plan p1;
	ck_assert_int_eq(rk_create(&o, &p1), RK_OK);
	/* A fourth, fresh member and the old three: refused, nothing changes. */
	rk_test_make_file(pp[3], 4 * MIB);
	uint32_t before[4];
	for (int i = 0; i < 4; i++)
		before[i] = rk_test_file_crc(pp[i]);
	const char *order[4] = {pp[3], pp[0], pp[1], pp[2]};
	o.paths = order;
	o.nmembers = 4;
	o.create_size = 4 * MIB;
	struct rk_create_plan p2;
	rk_err e = rk_create(&o, &p2);
	ck_assert_int_eq(e, RK_E_EXISTS);
	ck_assert_ptr_nonnull(strstr(rk_errmsg(), pp[0]));
	ck_assert_ptr_nonnull(strstr(rk_errmsg(), "--force"));
	for (int i = 0; i < 4; i++)
		ck_assert_uint_eq(rk_test_file_crc(pp[i]), before[i]);
	/* --force overrides: a new array with a new UUID. */
	o.force = 1;
	e = rk_create(&o, &p2);
	ck_assert_msg(e == RK_OK, "%s", rk_errmsg());
	ck_assert_mem_ne(p2.array_uuid, p1.array_uuid, 16);
	ck_assert_ptr_nonnull(p2.notes);
	ck_assert_ptr_nonnull(strstr(p2.notes, "--force"));
	check_sbs(&p2);
	rk_create_plan_free(&p1);
	rk_create_plan_free(&p2);
}
END_TEST

START_TEST(t_refuse_ext4_writes_nothing)
{
	rk_test_make_file(pp[0], 8 * MIB);
	rk_test_make_file(pp[1], 8 * MIB);
	char cmd[700];
	snprintf(cmd, sizeof cmd, "mkfs.ext4 -q -F '%s' >/dev/null 2>&1", pp[1]);
	if (system(cmd) != 0) {
		printf("SKIP: mkfs.ext4 not usable here\n");
		return;
	}
	uint32_t c0 = rk_test_file_crc(pp[0]), c1 = rk_test_file_crc(pp[1]);
	struct rk_create_opts o;
	opts_init(&o, 1, 2);
	struct rk_create_plan p;
	rk_err e = rk_create(&o, &p);
	ck_assert_int_eq(e, RK_E_EXISTS);
	ck_assert_msg(strstr(rk_errmsg(), "ext4") && strstr(rk_errmsg(), pp[1]), "%s", rk_errmsg());
	ck_assert_uint_eq(rk_test_file_crc(pp[0]), c0);
	ck_assert_uint_eq(rk_test_file_crc(pp[1]), c1);
	/* With force the old signature is wiped: the member no longer looks like ext4. */
	o.force = 1;
	e = rk_create(&o, &p);
	ck_assert_msg(e == RK_OK, "%s", rk_errmsg());
	ck_assert_ptr_nonnull(strstr(p.members[1].found, "ext4"));
	snprintf(cmd, sizeof cmd, "blkid -p -s TYPE -o value '%s' 2>/dev/null | grep -q ext4", pp[1]);
	ck_assert_int_ne(system(cmd), 0);
	check_sbs(&p);
	/* Mirrors made consistent: each side reads the same as the other. */
	uint8_t *a = read_volume(&p, 0), *b = read_volume(&p, 1);
	ck_assert_int_eq(memcmp(a, b, p.volume_size), 0);
	free(a);
	free(b);
	rk_create_plan_free(&p);
}
END_TEST

START_TEST(t_too_small_writes_nothing)
{
	rk_test_make_file(pp[0], 8 * MIB);
	rk_test_make_file(pp[1], 8 * MIB);
	rk_test_make_file(pp[2], MIB + 64 * 1024);       /* no room for data and backup */
	junk(pp[0], MIB, MIB, 1);
	uint32_t c[3];
	for (int i = 0; i < 3; i++)
		c[i] = rk_test_file_crc(pp[i]);
	struct rk_create_opts o;
	opts_init(&o, 5, 3);
	struct rk_create_plan p;
	rk_err e = rk_create(&o, &p);
	ck_assert_int_eq(e, RK_E_SHORT);
	ck_assert_ptr_nonnull(strstr(rk_errmsg(), pp[2]));
	for (int i = 0; i < 3; i++)
		ck_assert_uint_eq(rk_test_file_crc(pp[i]), c[i]);
}
END_TEST

START_TEST(t_sizes_differ_and_size_limit)
{
	rk_test_make_file(pp[0], 16 * MIB);
	rk_test_make_file(pp[1], 10 * MIB);
	rk_test_make_file(pp[2], 12 * MIB + 12345);
	struct rk_create_opts o;
	opts_init(&o, 5, 3);
	o.chunk = 256 * 1024;
	struct rk_create_plan p;
	ck_assert_int_eq(rk_create(&o, &p), RK_OK);
	uint64_t us = 10 * MIB - MIB - RK_SB_AREA;
	ck_assert_uint_eq(p.usable_min, us);
	ck_assert_uint_eq(p.usable_min_role, 1);
	ck_assert_uint_eq(p.usable_max_role, 0);
	ck_assert_uint_eq(p.data_size, us - us % (256 * 1024));
	ck_assert_ptr_nonnull(p.notes);
	ck_assert_ptr_nonnull(strstr(p.notes, "differ"));
	ck_assert_ptr_nonnull(strstr(p.notes, pp[1]));
	check_sbs(&p);
	rk_create_plan_free(&p);

	/* --size: only the start of each member; more than a member has is refused. */
	o.force = 1;
	o.size = 3 * MIB + 1000;
	ck_assert_int_eq(rk_create(&o, &p), RK_OK);
	ck_assert_uint_eq(p.data_size, 3 * MIB);
	ck_assert_uint_eq(p.volume_size, 6 * MIB);
	check_sbs(&p);
	rk_create_plan_free(&p);
	uint32_t c1 = rk_test_file_crc(pp[1]);
	o.size = 10 * MIB;
	ck_assert_int_eq(rk_create(&o, &p), RK_E_RANGE);
	ck_assert_ptr_nonnull(strstr(rk_errmsg(), "--size"));
	ck_assert_uint_eq(rk_test_file_crc(pp[1]), c1);
}
END_TEST

START_TEST(t_missing_members)
{
	for (int i = 0; i < 5; i++)
		rk_test_make_file(pp[i], 8 * MIB);
	const char *m[5] = {pp[0], NULL, pp[2], NULL, pp[4]};
	struct rk_create_opts o;
	opts_init(&o, 6, 5);
	o.paths = m;
	struct rk_create_plan p;
	rk_err e = rk_create(&o, &p);
	ck_assert_msg(e == RK_OK, "%s", rk_errmsg());
	ck_assert_uint_eq(p.nmissing, 2);
	ck_assert_ptr_null(p.members[1].path);
	check_sbs(&p);
	rk_create_plan_free(&p);
	/* RAID-6 with three missing, RAID-5 with two, RAID-0 with one: refused. */
	const char *m3[5] = {pp[0], NULL, NULL, NULL, pp[4]};
	o.paths = m3;
	o.force = 1;
	uint32_t c0 = rk_test_file_crc(pp[0]);
	ck_assert_int_eq(rk_create(&o, &p), RK_E_TOOFEW);
	o.level = 5;
	o.paths = m;
	ck_assert_int_eq(rk_create(&o, &p), RK_E_TOOFEW);
	o.level = 0;
	const char *m1[2] = {pp[0], NULL};
	o.paths = m1;
	o.nmembers = 2;
	ck_assert_int_eq(rk_create(&o, &p), RK_E_TOOFEW);
	ck_assert_uint_eq(rk_test_file_crc(pp[0]), c0);
	/* RAID-1 with all but one missing is fine. */
	o.level = 1;
	ck_assert_int_eq(rk_create(&o, &p), RK_OK);
	rk_create_plan_free(&p);
}
END_TEST

START_TEST(t_create_size_and_rollback)
{
	struct rk_create_opts o;
	opts_init(&o, 5, 3);
	o.create_size = 64 * MIB;
	struct rk_create_plan p;
	/* Absent files without create_size: refused, naming the file. */
	o.create_size = 0;
	ck_assert_int_eq(rk_create(&o, &p), RK_E_OPEN);
	ck_assert_ptr_nonnull(strstr(rk_errmsg(), pp[0]));
	ck_assert_int_ne(access(pp[0], F_OK), 0);
	/* One refused member: no file is created. */
	rk_test_make_file(pp[2], 8 * MIB);
	char cmd[400];
	snprintf(cmd, sizeof cmd, "mkfs.ext4 -q -F '%s' >/dev/null 2>&1", pp[2]);
	int have_mkfs = system(cmd) == 0;
	o.create_size = 64 * MIB;
	if (have_mkfs) {
		ck_assert_int_eq(rk_create(&o, &p), RK_E_EXISTS);
		ck_assert_int_ne(access(pp[0], F_OK), 0);
		ck_assert_int_ne(access(pp[1], F_OK), 0);
	}
	unlink(pp[2]);
	ck_assert_int_eq(rk_create(&o, &p), RK_OK);
	for (int i = 0; i < 3; i++) {
		struct stat st;
		ck_assert_int_eq(stat(pp[i], &st), 0);
		ck_assert_int_eq(st.st_size, 64 * MIB);
		ck_assert_msg((uint64_t)st.st_blocks * 512 < 2 * MIB, "%s: %lld blocks: not sparse", pp[i],
		              (long long)st.st_blocks);
		ck_assert(p.members[i].created);
	}
	check_sbs(&p);
	rk_create_plan_free(&p);
}
END_TEST

START_TEST(t_duplicate_and_bad_options)
{
	rk_test_make_file(pp[0], 8 * MIB);
	rk_test_make_file(pp[1], 8 * MIB);
	struct rk_create_opts o;
	opts_init(&o, 1, 2);
	const char *d[2] = {pp[0], pp[0]};
	o.paths = d;
	struct rk_create_plan p;
	ck_assert_int_eq(rk_create(&o, &p), RK_E_INVAL);
	/* The same file under another name. */
	char other[400];
	snprintf(other, sizeof other, "%s/../%s/m0.img", rk_test_tmpdir(), strrchr(rk_test_tmpdir(), '/') + 1);
	const char *d2[2] = {pp[0], other};
	o.paths = d2;
	rk_err e = rk_create(&o, &p);
	ck_assert_msg(e == RK_E_INVAL && strstr(rk_errmsg(), "same member"), "%d %s", e, rk_errmsg());
	o.paths = pp;
	o.level = 5;
	o.chunk = 3000;
	ck_assert_int_eq(rk_create(&o, &p), RK_E_INVAL);
	o.chunk = 32 * MIB;
	ck_assert_int_eq(rk_create(&o, &p), RK_E_INVAL);
	o.chunk = 0;
	o.level = 7;
	ck_assert_int_eq(rk_create(&o, &p), RK_E_INVAL);
	o.level = 6;          /* needs 3 */
	ck_assert_int_eq(rk_create(&o, &p), RK_E_INVAL);
	o.level = 5;
	o.name = "a name that is much longer than thirty-two bytes";
	ck_assert_int_eq(rk_create(&o, &p), RK_E_INVAL);
	ck_assert_uint_eq(rk_test_file_crc(pp[0]), rk_test_file_crc(pp[1]));   /* both still all zero */
}
END_TEST

/* Members holding old data: parity is made consistent so every degraded
 * read equals the full read. */
START_TEST(t_old_content_resync)
{
	int32_t level = _i == 0 ? 5 : _i == 1 ? 6 : 10;
	uint32_t n = 4;
	for (uint32_t i = 0; i < n; i++)
		rk_test_make_file(pp[i], 6 * MIB);
	junk(pp[1], MIB + 100000, 700000, 7);     /* old data in a few stripes */
	junk(pp[3], 4 * MIB, 8192, 9);
	struct rk_create_opts o;
	opts_init(&o, level, n);
	o.chunk = 64 * 1024;
	struct rk_create_plan p;
	rk_err e = rk_create(&o, &p);
	ck_assert_msg(e == RK_OK, "%s", rk_errmsg());
	ck_assert(p.members[1].dirty);
	ck_assert(p.members[3].dirty);
	ck_assert(!p.members[0].dirty);
	ck_assert_uint_gt(p.stripes_resynced, 0);
	if (level != 10)   /* only the touched rows: fewer than all */
		ck_assert_uint_lt(p.stripes_resynced, p.data_size / p.chunk);
	uint8_t *full = read_volume(&p, -1);
	for (uint32_t r = 0; r < n; r++) {
		uint8_t *deg = read_volume(&p, (int)r);
		ck_assert_msg(memcmp(full, deg, p.volume_size) == 0, "level %d: reading without role %u differs",
		              level, r);
		free(deg);
	}
	free(full);
	rk_create_plan_free(&p);
}
END_TEST

/* A degraded RAID-6 over old data: P/Q of the present members made
 * consistent, so leaving out any second member reads the same. */
START_TEST(t_old_content_degraded_raid6)
{
	for (int i = 0; i < 5; i++) {
		rk_test_make_file(pp[i], 4 * MIB);
		junk(pp[i], MIB, 2 * MIB, 80 + (unsigned)i);
	}
	const char *m[5] = {pp[0], NULL, pp[2], pp[3], pp[4]};
	struct rk_create_opts o;
	opts_init(&o, 6, 5);
	o.paths = m;
	o.chunk = 16 * 1024;
	struct rk_create_plan p;
	rk_err e = rk_create(&o, &p);
	ck_assert_msg(e == RK_OK, "%s", rk_errmsg());
	ck_assert_uint_gt(p.stripes_resynced, 0);
	uint8_t *full = read_volume(&p, -1);
	for (int r = 0; r < 5; r++) {
		if (r == 1)
			continue;
		uint8_t *deg = read_volume(&p, r);
		ck_assert_msg(memcmp(full, deg, p.volume_size) == 0, "without roles 1 and %d: differs", r);
		free(deg);
	}
	free(full);
	rk_create_plan_free(&p);
}
END_TEST

START_TEST(t_from_fill)
{
	int32_t level = _i == 0 ? 5 : _i == 1 ? 6 : _i == 2 ? 0 : 10;
	uint32_t n = 4;
	for (uint32_t i = 0; i < n; i++) {
		rk_test_make_file(pp[i], 5 * MIB);
		junk(pp[i], MIB, 3 * MIB, 20 + i);    /* old data everywhere */
	}
	char from[300];
	snprintf(from, sizeof from, "%s/from.bin", rk_test_tmpdir());
	uint64_t flen = 2 * MIB + 12345;          /* not a whole number of stripes */
	rk_test_make_file(from, 0);
	junk(from, 0, flen, 99);
	struct rk_create_opts o;
	opts_init(&o, level, n);
	o.chunk = 32 * 1024;
	o.from = from;
	o.force = 1;
	struct rk_create_plan p;
	rk_err e = rk_create(&o, &p);
	ck_assert_msg(e == RK_OK, "%s", rk_errmsg());
	ck_assert_uint_eq(p.from_size, flen);
	int fd = open(from, O_RDONLY);
	uint8_t *want = malloc(flen);
	ck_assert_int_eq(pread(fd, want, flen, 0), (ssize_t)flen);
	close(fd);
	uint8_t *full = read_volume(&p, -1);
	ck_assert_int_eq(memcmp(full, want, flen), 0);
	if (level != 0) {
		for (uint32_t r = 0; r < n; r++) {
			uint8_t *deg = read_volume(&p, (int)r);
			ck_assert_msg(memcmp(full, deg, p.volume_size) == 0, "level %d: without role %u differs", level, r);
			free(deg);
		}
	}
	free(full);
	free(want);
	rk_create_plan_free(&p);

	/* A --from larger than the volume is refused before anything is written. */
	rk_test_make_file(from, 0);
	junk(from, 0, 16 * MIB, 3);
	uint32_t c0 = rk_test_file_crc(pp[0]);
	rk_creator *c = NULL;
	int big = 0;
	ck_assert_int_eq(rk_create_prepare(&c, &o, &big), RK_E_RANGE);
	ck_assert_int_eq(big, 1);
	ck_assert_ptr_null(c);
	ck_assert_uint_eq(rk_test_file_crc(pp[0]), c0);
}
END_TEST

/* A forced create that fails after writing began leaves no superblock, so
 * neither the old array nor a half-made new one assembles; created files
 * are removed. */
START_TEST(t_failed_commit_leaves_no_array)
{
	for (int i = 0; i < 3; i++)
		rk_test_make_file(pp[i], 8 * MIB);
	struct rk_create_opts o;
	opts_init(&o, 5, 3);
	o.chunk = 64 * 1024;
	struct rk_create_plan p;
	ck_assert_int_eq(rk_create(&o, &p), RK_OK);
	rk_create_plan_free(&p);

	char from[300];
	snprintf(from, sizeof from, "%s/from.bin", rk_test_tmpdir());
	rk_test_make_file(from, 0);
	junk(from, 0, 4 * MIB, 5);
	o.from = from;
	o.force = 1;
	o.nmembers = 4;
	o.create_size = 8 * MIB;      /* pp[3] is created by commit */
	rk_creator *c = NULL;
	ck_assert_int_eq(rk_create_prepare(&c, &o, NULL), RK_OK);
	ck_assert_int_eq(access(pp[3], F_OK), -1);
	/* The file shrinks between the check and the copy. */
	ck_assert_int_eq(truncate(from, MIB), 0);
	rk_err e = rk_create_commit(c);
	ck_assert_int_eq(e, RK_E_IO);
	ck_assert_ptr_nonnull(strstr(rk_errmsg(), "--from"));
	rk_create_free(c);
	ck_assert_int_eq(access(pp[3], F_OK), -1);
	for (int i = 0; i < 3; i++) {
		rk_dev *d = NULL;
		ck_assert_int_eq(rk_dev_open(&d, pp[i], RK_DEV_RDONLY), RK_OK);
		struct rk_sb_read rd;
		ck_assert_int_eq(rk_sb_read(d, &rd), RK_E_NOSB);
		rk_sb_read_free(&rd);
		rk_dev_close(d);
	}
}
END_TEST

/* Crash safety: a power cut at every write of a forced re-create (old
 * array A, new array B filled --from) leaves, on every member, either A's
 * superblock with A's data readable from the members that still carry it,
 * no superblock, or B's superblock with B's data readable. */
/* Reads the first LEN bytes of the array described by G from the members
 * whose chosen superblock belongs to it; compares with WANT when enough of
 * them are there.  Returns how many members carry it. */
static uint32_t check_array_data(const struct rk_create_plan *g, const uint8_t *want, uint64_t len)
{
	rk_dev *devs[MAXM] = {0};
	uint64_t doff[MAXM];
	uint32_t have = 0;
	for (uint32_t i = 0; i < g->nroles; i++) {
		doff[i] = g->data_offset;
		rk_dev *d = NULL;
		ck_assert_int_eq(rk_dev_open(&d, pp[i], RK_DEV_RDONLY), RK_OK);
		struct rk_sb_read rd;
		if (rk_sb_read(d, &rd) == RK_OK && !memcmp(rd.copy[rd.chosen].sb->array_uuid, g->array_uuid, 16)) {
			ck_assert_uint_eq(rd.copy[rd.chosen].sb->this_role, i);
			devs[i] = d;
			have++;
		} else {
			rk_dev_close(d);
		}
		rk_sb_read_free(&rd);
	}
	struct rk_geom geo;
	ck_assert_int_eq(rk_geom_init(&geo, g->level, g->layout, g->chunk, g->nroles, g->data_size), RK_OK);
	if (have && have + rk_geom_redundancy(&geo) >= g->nroles) {
		rk_vol *v = NULL;
		ck_assert_int_eq(rk_vol_open(&v, &geo, devs, doff), RK_OK);
		uint8_t *b = malloc(len);
		ck_assert_int_eq(rk_vol_read(v, b, len, 0), RK_OK);
		ck_assert_msg(memcmp(b, want, len) == 0, "array data differs with %u of %u members", have, g->nroles);
		free(b);
		rk_vol_close(v);
	}
	for (uint32_t i = 0; i < g->nroles; i++)
		rk_dev_close(devs[i]);
	return have;
}

static uint8_t *slurp(const char *path, uint64_t len)
{
	uint8_t *b = malloc(len);
	int fd = open(path, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pread(fd, b, len, 0), (ssize_t)len);
	close(fd);
	return b;
}

START_TEST(t_power_cut_every_write)
{
	const uint32_t n = 3;
	char fa[300], fb[300];
	snprintf(fa, sizeof fa, "%s/from.bin", rk_test_tmpdir());
	snprintf(fb, sizeof fb, "%s/m7.img", rk_test_tmpdir());     /* pp[7]: B's data */
	const uint64_t la = 300000, lb = 200000;
	rk_test_make_file(fa, 0);
	junk(fa, 0, la, 41);
	rk_test_make_file(fb, 0);
	junk(fb, 0, lb, 42);
	uint8_t *da = slurp(fa, la), *db = slurp(fb, lb);
	uint64_t total = 0;
	int seen_a = 0, seen_b = 0, seen_none = 0;
	for (uint64_t cut = 0;; cut++) {
		for (uint32_t i = 0; i < n; i++) {
			rk_test_make_file(pp[i], 3 * MIB);
			junk(pp[i], MIB, MIB, 60 + i);
		}
		struct rk_create_opts o;
		opts_init(&o, 5, n);
		o.chunk = 16 * 1024;
		o.from = fa;
		struct rk_create_plan pa;
		ck_assert_int_eq(rk_create(&o, &pa), RK_OK);

		struct rk_fault_spec spec = {.model = cut == 0 && total == 0 ? RK_FAULT_NONE : RK_FAULT_POWER_CUT,
		                             .n = cut, .seed = cut * 7 + 1};
		rk_fault_plan *plan = NULL;
		ck_assert_int_eq(rk_fault_plan_create(&plan, &spec), RK_OK);
		o.from = fb;
		o.force = 1;
		o.chunk = 32 * 1024;
		o.wrap_dev = rk_test_wrap_fault;
		o.wrap_ctx = plan;
		rk_creator *c = NULL;
		ck_assert_int_eq(rk_create_prepare(&c, &o, NULL), RK_OK);
		struct rk_create_plan pb = *rk_create_get_plan(c);
		pb.members = NULL;
		pb.notes = NULL;
		rk_err e = rk_create_commit(c);
		rk_create_free(c);
		if (spec.model == RK_FAULT_NONE) {
			ck_assert_msg(e == RK_OK, "%s", rk_errmsg());
			total = rk_fault_writes(plan);
			ck_assert_uint_gt(total, 3);
			rk_fault_plan_free(plan);
			rk_create_plan_free(&pa);
			cut = (uint64_t)-1;      /* the loop's cut++ makes it 0 */
			continue;
		}
		ck_assert_int_eq(rk_fault_crash(plan), RK_OK);
		rk_fault_plan_free(plan);
		uint32_t ha = check_array_data(&pa, da, la);
		uint32_t hb = check_array_data(&pb, db, lb);
		seen_a += ha > 0;
		seen_b += hb > 0;
		seen_none += ha == 0 && hb == 0;
		if (cut >= total) {
			/* The cut came after the last write: B is whole. */
			ck_assert_int_eq(e, RK_OK);
			ck_assert_uint_eq(hb, n);
		}
		rk_create_plan_free(&pa);
		if (cut >= total)
			break;
	}
	/* Each outcome was met somewhere along the way. */
	ck_assert_int_gt(seen_a, 0);
	ck_assert_int_gt(seen_b, 0);
	ck_assert_int_gt(seen_none, 0);
	free(da);
	free(db);
}
END_TEST

START_TEST(t_range_is_zero_sparse)
{
	rk_test_make_file(pp[0], 64 * MIB);
	int z = 0;
	uint64_t at = 0, scanned = 0;
	ck_assert_int_eq(rk_probe_range_is_zero(pp[0], 0, 64 * MIB, &z, &at, &scanned), RK_OK);
	ck_assert_int_eq(z, 1);
	ck_assert_uint_lt(scanned, MIB);       /* holes are not read */
	/* A written block of zeros is still zero; a byte after it is found. */
	int fd = open(pp[0], O_RDWR);
	uint8_t zero[8192] = {0}, one = 0x5a;
	ck_assert_int_eq(pwrite(fd, zero, sizeof zero, 40 * MIB), (ssize_t)sizeof zero);
	ck_assert_int_eq(pwrite(fd, &one, 1, 50 * MIB + 77), 1);
	close(fd);
	ck_assert_int_eq(rk_probe_range_is_zero(pp[0], 0, 50 * MIB, &z, &at, NULL), RK_OK);
	ck_assert_int_eq(z, 1);
	ck_assert_int_eq(rk_probe_range_is_zero(pp[0], 0, 64 * MIB, &z, &at, NULL), RK_OK);
	ck_assert_int_eq(z, 0);
	ck_assert_uint_eq(at, 50 * MIB + 77);
	ck_assert_int_eq(rk_probe_range_is_zero(pp[0], 50 * MIB + 78, MIB, &z, &at, NULL), RK_OK);
	ck_assert_int_eq(z, 1);
}
END_TEST

RK_TEST_SUITE("create", { "create", 120, setup, rk_test_tmpdir_remove, 0,
	  RK_TESTS(RK_TEST_LOOP(t_each_level, 0, 7),
	           RK_TEST(t_refuse_existing_array_writes_nothing),
	           RK_TEST(t_refuse_ext4_writes_nothing),
	           RK_TEST(t_too_small_writes_nothing),
	           RK_TEST(t_sizes_differ_and_size_limit), RK_TEST(t_missing_members),
	           RK_TEST(t_create_size_and_rollback),
	           RK_TEST(t_duplicate_and_bad_options),
	           RK_TEST_LOOP(t_old_content_resync, 0, 3),
	           RK_TEST(t_old_content_degraded_raid6), RK_TEST_LOOP(t_from_fill, 0, 4),
	           RK_TEST(t_failed_commit_leaves_no_array),
	           RK_TEST(t_power_cut_every_write), RK_TEST(t_range_is_zero_sparse)) })
