/* test_array.c: the assembled array (libmeta/array.c): round trips at every
 * level, the superblock write protocol (dirty -> data -> clean, absent and
 * failed roles marked), read-only refusal, too-few messages, range checks,
 * members changed after discovery. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rk_array.h"
#include "rk_create.h"
#include "rk_discover.h"
#include "rk_sb.h"
#include "helpers/rk_test.h"

static void make_array(int32_t level, uint32_t n, uint64_t size)
{
	rk_test_create(level, RK_CREATE_LAYOUT_DEFAULT, 16384, n, size, NULL);
}

/* Discovers over the paths whose bit is set in MASK. */
static struct rk_discovery *discover(uint32_t n, uint32_t mask)
{
	char *p[16];
	uint32_t k = 0;
	for (uint32_t i = 0; i < n; i++)
		if (mask & (1u << i))
			p[k++] = rk_test_members()[i];
	struct rk_discovery *d = NULL;
	ck_assert_int_eq(rk_discover(&d, p, k, NULL), RK_OK);
	ck_assert_uint_eq(d->narrays, 1);
	return d;
}

static const struct { int32_t level; uint32_t n; } levels[] = {
	{ RK_LEVEL_LINEAR, 3 }, { 0, 3 }, { 1, 2 }, { 4, 4 }, { 5, 4 }, { 6, 5 }, { 10, 4 }, { 6, 4 },
};

START_TEST(t_roundtrip)
{
	make_array(levels[_i].level, levels[_i].n, 2u << 20);
	uint32_t all = (1u << levels[_i].n) - 1;
	struct rk_discovery *d = discover(levels[_i].n, all);
	uint64_t ev0 = d->arrays[0].sb->events;
	rk_array *a;
	ck_assert_msg(rk_array_open(&a, &d->arrays[0], RK_ARRAY_RDWR) == RK_OK, "%s", rk_errmsg());
	uint64_t size = rk_array_size(a);
	ck_assert_uint_gt(size, 0);
	uint8_t *w = malloc(size), *r = malloc(size);
	rk_test_fill_seeded(w, size, (uint32_t)_i);
	/* odd pieces, out of order */
	uint64_t cut = size / 3 + 7;
	ck_assert_int_eq(rk_array_write(a, w + cut, size - cut, cut), RK_OK);
	ck_assert_int_eq(rk_array_write(a, w, cut, 0), RK_OK);
	ck_assert_int_eq(rk_array_close(a), RK_OK);
	rk_discovery_free(d);

	d = discover(levels[_i].n, all);
	ck_assert_int_eq(d->arrays[0].state, RK_ASTATE_CLEAN);
	ck_assert_uint_eq(d->arrays[0].sb->events, ev0 + 2);
	ck_assert_uint_eq(d->arrays[0].sb->array_state, RK_ARRAY_CLEAN);
	ck_assert_int_eq(rk_array_open(&a, &d->arrays[0], RK_ARRAY_RDONLY), RK_OK);
	memset(r, 0, size);
	ck_assert_int_eq(rk_array_read(a, r, size, 0), RK_OK);
	ck_assert_msg(memcmp(r, w, size) == 0, "level %d: data differs", levels[_i].level);
	ck_assert_uint_eq(rk_array_events(a), ev0 + 2);
	ck_assert_int_eq(rk_array_close(a), RK_OK);
	rk_discovery_free(d);
	free(w);
	free(r);
}
END_TEST

START_TEST(t_degraded_write_protocol)
{
	make_array(6, 5, 2u << 20);
	struct rk_discovery *d = discover(5, 0x1F & ~(1u << 1) & ~(1u << 3));
	ck_assert_int_eq(d->arrays[0].state, RK_ASTATE_DEGRADED);
	uint64_t ev0 = d->arrays[0].sb->events;
	rk_array *a;
	ck_assert_int_eq(rk_array_open(&a, &d->arrays[0], RK_ARRAY_RDWR), RK_OK);
	ck_assert(rk_array_role_down(a, 1) && rk_array_role_down(a, 3) && !rk_array_role_down(a, 0));
	/* nothing written by opening */
	struct rk_sb *s = rk_test_read_sb_path(rk_test_members()[0]);
	ck_assert_uint_eq(s->events, ev0);
	free(s);
	ck_assert_int_eq(rk_array_begin_write(a), RK_OK);
	for (int i = 0; i < 5; i += 2) {
		s = rk_test_read_sb_path(rk_test_members()[i]);
		ck_assert_uint_eq(s->events, ev0 + 1);
		ck_assert_uint_eq(s->array_state, RK_ARRAY_ACTIVE);
		ck_assert_uint_eq(s->roles[1].state, RK_ROLE_FAULTY);
		ck_assert_uint_eq(s->roles[3].state, RK_ROLE_FAULTY);
		ck_assert_uint_eq(s->roles[0].state, RK_ROLE_ACTIVE);
		ck_assert_uint_eq(s->this_role, (uint32_t)i);
		free(s);
	}
	uint64_t size = rk_array_size(a);
	uint8_t *w = malloc(size), *r = malloc(size);
	rk_test_fill_seeded(w, size, 99);
	ck_assert_int_eq(rk_array_write(a, w, size, 0), RK_OK);
	ck_assert_int_eq(rk_array_close(a), RK_OK);
	for (int i = 0; i < 5; i++) {
		s = rk_test_read_sb_path(rk_test_members()[i]);
		if (i == 1 || i == 3) {
			ck_assert_uint_eq(s->events, ev0);   /* the absent members were not touched */
		} else {
			ck_assert_uint_eq(s->events, ev0 + 2);
			ck_assert_uint_eq(s->array_state, RK_ARRAY_CLEAN);
			ck_assert_uint_eq(s->roles[1].state, RK_ROLE_FAULTY);
		}
		free(s);
	}
	rk_discovery_free(d);
	/* They come back: stale, left out; the volume holds the write. */
	d = discover(5, 0x1F);
	ck_assert_int_eq(d->arrays[0].state, RK_ASTATE_DEGRADED);
	ck_assert_int_eq(d->arrays[0].roles[1].cls, RK_MEMBER_MISSING);
	uint32_t nstale = 0;
	for (uint32_t i = 0; i < d->nleft; i++)
		nstale += d->left[i].cls == RK_MEMBER_STALE;
	ck_assert_uint_eq(nstale, 2);
	ck_assert_int_eq(rk_array_open(&a, &d->arrays[0], RK_ARRAY_RDONLY), RK_OK);
	ck_assert_int_eq(rk_array_read(a, r, size, 0), RK_OK);
	ck_assert(memcmp(r, w, size) == 0);
	rk_array_close(a);
	rk_discovery_free(d);
	free(w);
	free(r);
}
END_TEST

START_TEST(t_readonly_untouched)
{
	make_array(5, 4, 2u << 20);
	size_t len[4];
	uint8_t *before[4];
	for (int i = 0; i < 4; i++)
		before[i] = rk_test_slurp(rk_test_members()[i], &len[i]);
	struct rk_discovery *d = discover(4, 0xF);
	rk_array *a;
	ck_assert_int_eq(rk_array_open(&a, &d->arrays[0], RK_ARRAY_RDONLY), RK_OK);
	uint8_t buf[4096];
	memset(buf, 0xAB, sizeof buf);
	ck_assert_int_eq(rk_array_write(a, buf, sizeof buf, 0), RK_E_READONLY);
	ck_assert_int_eq(rk_array_begin_write(a), RK_E_READONLY);
	ck_assert_int_eq(rk_array_read(a, buf, sizeof buf, 8192), RK_OK);
	ck_assert_int_eq(rk_array_close(a), RK_OK);
	rk_discovery_free(d);
	/* degraded read-only too */
	d = discover(4, 0xB);
	ck_assert_int_eq(rk_array_open(&a, &d->arrays[0], RK_ARRAY_RDONLY), RK_OK);
	ck_assert_int_eq(rk_array_read(a, buf, sizeof buf, 12345), RK_OK);
	ck_assert_int_eq(rk_array_close(a), RK_OK);
	rk_discovery_free(d);
	for (int i = 0; i < 4; i++) {
		size_t n;
		uint8_t *after = rk_test_slurp(rk_test_members()[i], &n);
		ck_assert_uint_eq(n, len[i]);
		ck_assert_msg(memcmp(after, before[i], n) == 0, "member %d changed", i);
		free(after);
		free(before[i]);
	}
}
END_TEST

START_TEST(t_toofew)
{
	make_array(5, 4, 2u << 20);
	struct rk_discovery *d = discover(4, 0x5);   /* roles 1 and 3 absent */
	rk_array *a = (rk_array *)1;
	ck_assert_int_eq(rk_array_open(&a, &d->arrays[0], RK_ARRAY_RDONLY), RK_E_TOOFEW);
	ck_assert_ptr_null(a);
	ck_assert_msg(strstr(rk_errmsg(), "1, 3") != NULL, "message: %s", rk_errmsg());
	rk_discovery_free(d);
}
END_TEST

START_TEST(t_ranges)
{
	make_array(1, 2, 2u << 20);
	struct rk_discovery *d = discover(2, 0x3);
	rk_array *a;
	ck_assert_int_eq(rk_array_open(&a, &d->arrays[0], RK_ARRAY_RDWR), RK_OK);
	uint64_t size = rk_array_size(a);
	uint8_t buf[16];
	ck_assert_int_eq(rk_array_read(a, buf, 16, size - 16), RK_OK);
	ck_assert_int_eq(rk_array_read(a, buf, 16, size - 15), RK_E_RANGE);
	ck_assert_int_eq(rk_array_read(a, buf, 1, UINT64_MAX), RK_E_RANGE);
	ck_assert_int_eq(rk_array_read(a, buf, 0, size), RK_OK);
	ck_assert_int_eq(rk_array_write(a, buf, 16, UINT64_MAX - 3), RK_E_RANGE);
	/* a refused write does not mark the array dirty */
	ck_assert_int_eq(rk_array_close(a), RK_OK);
	struct rk_sb *s = rk_test_read_sb_path(rk_test_members()[0]);
	ck_assert_uint_eq(s->events, d->arrays[0].sb->events);
	free(s);
	rk_discovery_free(d);
}
END_TEST

START_TEST(t_changed_since_discovery)
{
	make_array(5, 3, 2u << 20);
	struct rk_discovery *d = discover(3, 0x7);
	/* someone else writes a new generation to member 2 */
	struct rk_sb *s = rk_test_read_sb_path(rk_test_members()[2]);
	s->events += 5;
	rk_dev *dv;
	ck_assert_int_eq(rk_dev_open(&dv, rk_test_members()[2], RK_DEV_RDWR), RK_OK);
	ck_assert_int_eq(rk_sb_write(dv, s), RK_OK);
	rk_dev_close(dv);
	free(s);
	rk_array *a;
	ck_assert_int_eq(rk_array_open(&a, &d->arrays[0], RK_ARRAY_RDONLY), RK_E_CONFLICT);
	ck_assert_msg(strstr(rk_errmsg(), "m2") != NULL, "message: %s", rk_errmsg());
	rk_discovery_free(d);
}
END_TEST

/* A member pulled during a write: the engine carries on degraded and the
 * survivors' superblocks mark it faulty. */
START_TEST(t_member_fails_during_write)
{
	make_array(5, 4, 2u << 20);
	struct rk_discovery *d = discover(4, 0xF);
	struct rk_array_info *ai = &d->arrays[0];
	struct rk_fault_spec fs;
	memset(&fs, 0, sizeof fs);
	fs.model = RK_FAULT_PULL;
	fs.member = 2;
	fs.n = 0;
	rk_fault_plan *plan;
	ck_assert_int_eq(rk_fault_plan_create(&plan, &fs), RK_OK);
	rk_dev *devs[4];
	const struct rk_sb *sbs[4];
	for (int i = 0; i < 4; i++) {
		rk_dev *lower;
		ck_assert_int_eq(rk_dev_open(&lower, rk_test_members()[i], RK_DEV_RDWR), RK_OK);
		ck_assert_int_eq(rk_dev_fault(&devs[i], lower, plan, i), RK_OK);
		sbs[i] = ai->roles[i].sb;
	}
	/* role 2 fails from its first I/O: the dirty superblock write itself */
	rk_array *a;
	ck_assert_int_eq(rk_array_open_devs(&a, ai->sb, devs, sbs, RK_ARRAY_RDWR), RK_OK);
	uint64_t size = rk_array_size(a);
	uint8_t *w = malloc(size), *r = malloc(size);
	rk_test_fill_seeded(w, size, 7);
	rk_err e = rk_array_write(a, w, size, 0);
	ck_assert_msg(e == RK_OK || rk_array_role_down(a, 2), "%s", rk_errmsg());
	ck_assert(rk_array_role_down(a, 2));
	ck_assert_uint_eq(rk_array_nfailed(a), 1);
	ck_assert_str_ne(rk_array_fail_reason(a, 2), "");
	ck_assert_str_eq(rk_array_fail_reason(a, 1), "");
	/* the write may have been refused when the failure hit the dirty mark:
	 * write again, now degraded */
	ck_assert_int_eq(rk_array_write(a, w, size, 0), RK_OK);
	rk_array_close(a);
	for (int i = 0; i < 4; i++)
		rk_dev_close(devs[i]);
	rk_fault_plan_free(plan);
	rk_discovery_free(d);
	struct rk_sb *s = rk_test_read_sb_path(rk_test_members()[0]);
	ck_assert_uint_eq(s->roles[2].state, RK_ROLE_FAULTY);
	ck_assert_uint_eq(s->array_state, RK_ARRAY_CLEAN);
	free(s);
	d = discover(4, 0xF);
	ck_assert_int_eq(d->arrays[0].state, RK_ASTATE_DEGRADED);
	ck_assert_int_eq(rk_array_open(&a, &d->arrays[0], RK_ARRAY_RDONLY), RK_OK);
	ck_assert_int_eq(rk_array_read(a, r, size, 0), RK_OK);
	ck_assert(memcmp(r, w, size) == 0);
	rk_array_close(a);
	rk_discovery_free(d);
	free(w);
	free(r);
}
END_TEST

/* A read error on one member: the read is reconstructed; read-only the
 * member is failed for this open (reported, nothing written); read-write
 * the bad range is rewritten from redundancy (repaired, reported, the
 * member stays active and the next read is clean). */
START_TEST(t_read_error)
{
	make_array(6, 4, 2u << 20);
	struct rk_discovery *d = discover(4, 0xF);
	struct rk_array_info *ai = &d->arrays[0];
	rk_array *a;
	/* known content first */
	ck_assert_int_eq(rk_array_open(&a, ai, RK_ARRAY_RDWR), RK_OK);
	uint64_t size = rk_array_size(a);
	uint8_t *w = malloc(size), *r = malloc(size);
	rk_test_fill_seeded(w, size, 3);
	ck_assert_int_eq(rk_array_write(a, w, size, 0), RK_OK);
	ck_assert_int_eq(rk_array_close(a), RK_OK);
	rk_discovery_free(d);
	d = discover(4, 0xF);
	ai = &d->arrays[0];
	uint64_t ev = ai->sb->events;
	for (int rw = 0; rw < 2; rw++) {
		struct rk_fault_spec fs;
		memset(&fs, 0, sizeof fs);
		fs.model = RK_FAULT_READ_ERROR;
		fs.member = 1;
		fs.off = ai->roles[1].sb->data_offset;
		fs.len = 65536;
		rk_fault_plan *plan;
		ck_assert_int_eq(rk_fault_plan_create(&plan, &fs), RK_OK);
		rk_dev *devs[4];
		const struct rk_sb *sbs[4];
		for (int i = 0; i < 4; i++) {
			rk_dev *lower;
			ck_assert_int_eq(rk_dev_open(&lower, rk_test_members()[i], rw ? RK_DEV_RDWR : RK_DEV_RDONLY), RK_OK);
			ck_assert_int_eq(rk_dev_fault(&devs[i], lower, plan, i), RK_OK);
			sbs[i] = ai->roles[i].sb;
		}
		ck_assert_int_eq(rk_array_open_devs(&a, ai->sb, devs, sbs, rw ? RK_ARRAY_RDWR : RK_ARRAY_RDONLY), RK_OK);
		memset(r, 0, size);
		ck_assert_msg(rk_array_read(a, r, size, 0) == RK_OK, "%s", rk_errmsg());
		ck_assert(memcmp(r, w, size) == 0);
		if (!rw) {
			ck_assert_uint_eq(rk_array_nfailed(a), 1);
			ck_assert(rk_array_role_down(a, 1));
			ck_assert_str_ne(rk_array_fail_reason(a, 1), "");
			ck_assert_uint_eq(rk_array_nrepaired(a, NULL), 0);
		} else {
			uint64_t bytes = 0;
			ck_assert_uint_eq(rk_array_nfailed(a), 0);
			ck_assert(!rk_array_role_down(a, 1));
			ck_assert_uint_ge(rk_array_nrepaired(a, &bytes), 1);
			/* the data chunks of the bad range the read met (parity is not
			 * read), never more than the range: not the whole member */
			ck_assert_uint_ge(bytes, 4096);
			ck_assert_uint_le(bytes, 65536);
			/* healed: a second read is clean */
			uint64_t n1 = rk_array_nrepaired(a, NULL);
			memset(r, 0, size);
			ck_assert_int_eq(rk_array_read(a, r, size, 0), RK_OK);
			ck_assert(memcmp(r, w, size) == 0);
			ck_assert_uint_eq(rk_array_nrepaired(a, NULL), n1);
			ck_assert_uint_eq(rk_array_nfailed(a), 0);
		}
		ck_assert_int_eq(rk_array_close(a), RK_OK);
		for (int i = 0; i < 4; i++)
			rk_dev_close(devs[i]);
		rk_fault_plan_free(plan);
		struct rk_sb *s = rk_test_read_sb_path(rk_test_members()[0]);
		if (!rw) {
			ck_assert_uint_eq(s->events, ev);               /* read-only: nothing written */
			ck_assert_uint_eq(s->roles[1].state, RK_ROLE_ACTIVE);
		} else {
			ck_assert_uint_eq(s->roles[1].state, RK_ROLE_ACTIVE);   /* repaired, not failed */
			ck_assert_uint_eq(s->array_state, RK_ARRAY_CLEAN);
		}
		free(s);
	}
	rk_discovery_free(d);
	free(w);
	free(r);
}
END_TEST

RK_TEST_SUITE("array", { "array", 120, rk_test_tmpdir_make, rk_test_tmpdir_remove, 0,
	  RK_TESTS(RK_TEST_LOOP(t_roundtrip, 0, (int)(sizeof levels / sizeof levels[0])),
	           RK_TEST(t_degraded_write_protocol), RK_TEST(t_readonly_untouched),
	           RK_TEST(t_toofew), RK_TEST(t_ranges), RK_TEST(t_changed_since_discovery),
	           RK_TEST(t_member_fails_during_write), RK_TEST(t_read_error)) })
