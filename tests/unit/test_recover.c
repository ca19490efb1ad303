/* test_recover.c: rk_recover_rebuild and rk_recover_restore on temporary
 * files: every role kind (data, P, Q, mirror copy) rebuilt on every
 * redundant level equals the lost member's data area; rebuilds killed at
 * many writes (RK_FAULT_KILL) leave a readable array and resume to the same
 * result; refusals write nothing; superblock copies restored (primary,
 * backup, both gone) and members whose place is not certain left alone. */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "rk_array.h"
#include "rk_create.h"
#include "rk_dev.h"
#include "rk_discover.h"
#include "rk_geom.h"
#include "rk_recover.h"
#include "rk_sb.h"
#include "helpers/rk_test.h"

#define KIB 1024u
#define MIB (1024u * 1024u)
#define MAXM 8
#define MSIZE (3 * MIB)

static char *const *pp;   /* members, then NEW, then --from */

static void setup(void)
{
	rk_test_tmpdir_make();
	pp = rk_test_members();
}

/* Where the copy of original member I is kept. */
static const char *saved(uint32_t i)
{
	char name[32];
	snprintf(name, sizeof name, "orig%u.img", i);
	return rk_test_path(name);
}

struct cfg {
	int32_t level;
	uint32_t layout;   /* RK_CREATE_LAYOUT_DEFAULT for the default */
	uint32_t n;
	const char *what;
};

static const struct cfg cfgs[] = {
	{ 5, RK_CREATE_LAYOUT_DEFAULT, 4, "RAID-5 left-symmetric" },
	{ 4, RK_CREATE_LAYOUT_DEFAULT, 3, "RAID-4 (parity role fixed)" },
	{ 6, RK_CREATE_LAYOUT_DEFAULT, 5, "RAID-6 left-symmetric" },
	{ 6, RK_ALG_PARITY_N, 4, "RAID-6 parity-last (P and Q roles fixed)" },
	{ 6, RK_ALG_ROTATING_N_CONTINUE, 5, "RAID-6 ddf-N-continue" },
	{ 1, RK_CREATE_LAYOUT_DEFAULT, 3, "RAID-1" },
	{ 10, RK_R10_LAYOUT(2, 1, 0), 4, "RAID-10 n2" },
	{ 10, RK_R10_LAYOUT(1, 2, 0), 3, "RAID-10 f2" },
};

/* Creates the array of C on pp[0..n) filled with seeded data (also saved
 * as the reference), and keeps a copy of every member in saved[]. */
static struct rk_create_plan make_array(const struct cfg *c, unsigned seed, uint8_t **vol, uint64_t *vsize)
{
	for (uint32_t i = 0; i < c->n; i++)
		unlink(pp[i]);
	struct rk_create_opts o;
	memset(&o, 0, sizeof o);
	o.level = c->level;
	o.layout = c->layout;
	o.chunk = c->level == 1 ? 0 : 16 * KIB;
	o.nmembers = c->n;
	o.paths = (const char *const *)pp;
	o.create_size = MSIZE;
	struct rk_create_plan p;
	memset(&p, 0, sizeof p);
	ck_assert_msg(rk_create(&o, &p) == RK_OK, "%s: create: %s", c->what, rk_errmsg());
	/* data through the array (every block written: parity consistent) */
	*vsize = p.volume_size;
	*vol = rk_test_random_bytes(p.volume_size, seed);
	struct rk_discovery *d = NULL;
	ck_assert_int_eq(rk_discover(&d, pp, c->n, NULL), RK_OK);
	rk_array *a = NULL;
	ck_assert_int_eq(rk_array_open(&a, &d->arrays[0], RK_ARRAY_RDWR), RK_OK);
	ck_assert_int_eq(rk_array_write(a, *vol, (size_t)p.volume_size, 0), RK_OK);
	ck_assert_int_eq(rk_array_close(a), RK_OK);
	rk_discovery_free(d);
	for (uint32_t i = 0; i < c->n; i++)
		rk_test_copy_file(pp[i], saved(i));
	return p;
}

/* The volume read through discovery + rk_array equals VOL. */
static void check_volume(char *const *mp, uint32_t n, const uint8_t *vol, uint64_t vsize, int want_state)
{
	struct rk_discovery *d = NULL;
	ck_assert_int_eq(rk_discover(&d, mp, n, NULL), RK_OK);
	ck_assert_uint_eq(d->narrays, 1);
	ck_assert_msg(d->arrays[0].state == RK_ASTATE_CLEAN || d->arrays[0].state == RK_ASTATE_DEGRADED,
	              "array state %s: %s", rk_astate_name(d->arrays[0].state), d->arrays[0].why);
	if (want_state >= 0)
		ck_assert_msg(d->arrays[0].state == want_state, "state %s, want %s: %s", rk_astate_name(d->arrays[0].state),
		              rk_astate_name(want_state), d->arrays[0].why);
	rk_array *a = NULL;
	ck_assert_msg(rk_array_open(&a, &d->arrays[0], RK_ARRAY_RDONLY) == RK_OK, "open: %s", rk_errmsg());
	uint8_t *got = malloc((size_t)vsize);
	ck_assert_ptr_nonnull(got);
	ck_assert_int_eq(rk_array_read(a, got, (size_t)vsize, 0), RK_OK);
	ck_assert_msg(memcmp(got, vol, (size_t)vsize) == 0, "volume differs");
	free(got);
	rk_array_close(a);
	rk_discovery_free(d);
}

/* Data areas of A and B equal over the geometry's member size. */
static void same_data_area(const char *a, const char *b, uint64_t doff, uint64_t len)
{
	ck_assert_msg(rk_test_files_equal(a, b, doff, len), "%s and %s differ in the data area", a, b);
}

static uint64_t member_bytes(const struct rk_create_plan *p)
{
	struct rk_geom g;
	ck_assert_int_eq(rk_geom_init(&g, p->level, p->layout, p->chunk, p->nroles, p->data_size), RK_OK);
	return g.member_size;
}

/* Every role of every redundant level, rebuilt onto a new file (created)
 * from the others, equals the lost member's data area; the array is then
 * clean with events moved on, and the volume is intact. */
START_TEST(t_rebuild_each_role)
{
	const struct cfg *c = &cfgs[_i];
	uint8_t *vol;
	uint64_t vsize;
	struct rk_create_plan p = make_array(c, 11 + (unsigned)_i, &vol, &vsize);
	uint64_t mb = member_bytes(&p);
	char *mp[MAXM];
	for (uint32_t r = 0; r < c->n; r++) {
		for (uint32_t i = 0; i < c->n; i++)
			rk_test_copy_file(saved(i), pp[i]);
		unlink(pp[MAXM]);
		/* role r lost: the others plus NEW */
		uint32_t k = 0;
		for (uint32_t i = 0; i < c->n; i++)
			if (i != r)
				mp[k++] = pp[i];
		struct rk_rebuild_opts o = { .role = -1, .checkpoint_bytes = 256 * KIB };
		struct rk_rebuild_result res;
		rk_err e = rk_recover_rebuild(pp[MAXM], mp, k, &o, &res);
		ck_assert_msg(e == RK_OK, "%s role %u: %s", c->what, r, rk_errmsg());
		ck_assert_uint_eq(res.role, r);
		ck_assert_int_eq(res.new_kind, RK_NEW_CREATED);
		ck_assert_int_eq(res.resumed, 0);
		ck_assert_uint_eq(res.total, mb);
		ck_assert_uint_gt(res.events_after, res.events_before);
		same_data_area(saved(r), pp[MAXM], p.data_offset, mb);
		mp[k++] = pp[MAXM];
		check_volume(mp, k, vol, vsize, RK_ASTATE_CLEAN);
		/* the old member, back, is stale (replaced) */
		rk_test_copy_file(saved(r), pp[r]);
		mp[k++] = pp[r];
		struct rk_discovery *d = NULL;
		ck_assert_int_eq(rk_discover(&d, mp, k, NULL), RK_OK);
		ck_assert_int_eq(d->arrays[0].state, RK_ASTATE_CLEAN);
		ck_assert_str_eq(d->arrays[0].roles[r].path, pp[MAXM]);
		ck_assert_uint_eq(d->nleft, 1);
		ck_assert_int_eq(d->left[0].cls, RK_MEMBER_STALE);
		rk_discovery_free(d);
	}
	free(vol);
	rk_create_plan_free(&p);
}
END_TEST

/* RAID-6 without two roles: --role is needed, each rebuilt in turn; the
 * stale member rebuilt in place (its own file) becomes active again. */
START_TEST(t_rebuild_two_and_in_place)
{
	const struct cfg *c = &cfgs[2];
	uint8_t *vol;
	uint64_t vsize;
	struct rk_create_plan p = make_array(c, 5, &vol, &vsize);
	uint64_t mb = member_bytes(&p);
	char *mp[MAXM + 2] = { pp[0], pp[2], pp[4] };
	struct rk_rebuild_opts o = { .role = -1 };
	struct rk_rebuild_result res;
	uint32_t c_before = rk_test_file_crc(pp[0]);
	ck_assert_int_eq(rk_recover_rebuild(pp[MAXM], mp, 3, &o, &res), RK_E_INVAL);
	ck_assert_ptr_nonnull(strstr(rk_errmsg(), "--role"));
	ck_assert_int_eq(access(pp[MAXM], F_OK), -1);      /* nothing created */
	ck_assert_uint_eq(rk_test_file_crc(pp[0]), c_before);       /* nothing written */
	o.role = 0;
	ck_assert_int_eq(rk_recover_rebuild(pp[MAXM], mp, 3, &o, &res), RK_E_INVAL);   /* role 0 has a member */
	o.role = 3;
	ck_assert_msg(rk_recover_rebuild(pp[MAXM], mp, 3, &o, &res) == RK_OK, "%s", rk_errmsg());
	same_data_area(saved(3), pp[MAXM], p.data_offset, mb);
	mp[3] = pp[MAXM];
	/* role 1 now: its old member m1 is stale (the rebuild moved events on) and is rebuilt in place */
	mp[4] = pp[1];
	o.role = -1;
	rk_test_write_at(pp[1], NULL, 64 * KIB, p.data_offset);     /* its data is damaged as well */
	ck_assert_msg(rk_recover_rebuild(pp[1], mp, 5, &o, &res) == RK_OK, "%s", rk_errmsg());
	ck_assert_int_eq(res.new_kind, RK_NEW_STALE);
	ck_assert_uint_eq(res.role, 1);
	same_data_area(saved(1), pp[1], p.data_offset, mb);
	check_volume(mp, 5, vol, vsize, RK_ASTATE_CLEAN);
	free(vol);
	rk_create_plan_free(&p);
}
END_TEST

/* Refusals write nothing: NEW holding another array, NEW an active member,
 * NEW too small, nothing missing, RAID-0. */
START_TEST(t_rebuild_refusals)
{
	const struct cfg *c = &cfgs[0];
	uint8_t *vol;
	uint64_t vsize;
	struct rk_create_plan p = make_array(c, 7, &vol, &vsize);
	char *mp[MAXM] = { pp[0], pp[1], pp[2] };
	struct rk_rebuild_opts o = { .role = -1 };
	struct rk_rebuild_result res;
	/* another array's member as NEW */
	char *other[2] = { pp[MAXM + 1], NULL };
	struct rk_create_opts co;
	memset(&co, 0, sizeof co);
	co.level = 1;
	co.nmembers = 1;
	co.paths = (const char *const *)other;
	co.create_size = MSIZE;
	co.layout = RK_CREATE_LAYOUT_DEFAULT;
	struct rk_create_plan p2;
	ck_assert_int_eq(rk_create(&co, &p2), RK_OK);
	rk_create_plan_free(&p2);
	uint32_t crc_other = rk_test_file_crc(pp[MAXM + 1]), crc0 = rk_test_file_crc(pp[0]);
	ck_assert_int_eq(rk_recover_rebuild(pp[MAXM + 1], mp, 3, &o, &res), RK_E_EXISTS);
	ck_assert_ptr_nonnull(strstr(rk_errmsg(), "--force"));
	ck_assert_uint_eq(rk_test_file_crc(pp[MAXM + 1]), crc_other);
	ck_assert_uint_eq(rk_test_file_crc(pp[0]), crc0);
	/* an active member as NEW */
	ck_assert_int_eq(rk_recover_rebuild(pp[1], mp, 3, &o, &res), RK_E_INVAL);
	ck_assert_uint_eq(rk_test_file_crc(pp[0]), crc0);
	/* too small */
	rk_test_spit(pp[MAXM], vol, 512 * KIB);
	uint32_t crc_small = rk_test_file_crc(pp[MAXM]);
	ck_assert_int_eq(rk_recover_rebuild(pp[MAXM], mp, 3, &o, &res), RK_E_SHORT);
	ck_assert_uint_eq(rk_test_file_crc(pp[MAXM]), crc_small);
	ck_assert_uint_eq(rk_test_file_crc(pp[0]), crc0);
	/* nothing missing */
	unlink(pp[MAXM]);
	mp[3] = pp[3];
	ck_assert_int_eq(rk_recover_rebuild(pp[MAXM], mp, 4, &o, &res), RK_E_INVAL);
	ck_assert_int_eq(access(pp[MAXM], F_OK), -1);
	/* with --force the other array's member is taken */
	o.force = 1;
	ck_assert_msg(rk_recover_rebuild(pp[MAXM + 1], mp, 3, &o, &res) == RK_OK, "%s", rk_errmsg());
	ck_assert_int_eq(res.new_kind, RK_NEW_FORCED);
	same_data_area(saved(3), pp[MAXM + 1], p.data_offset, member_bytes(&p));
	free(vol);
	rk_create_plan_free(&p);
}
END_TEST

/* A rebuild killed at write N (counted over every member and NEW) leaves an
 * array that assembles with the volume intact; running it again finishes
 * (resuming from the checkpoint once one was recorded) with NEW equal to
 * the lost member.  Cut points cover the superblock steps, the batches and
 * the final commit. */
static void kill_and_resume(const struct cfg *c, uint32_t lost)
{
	uint8_t *vol;
	uint64_t vsize;
	struct rk_create_plan p = make_array(c, 23, &vol, &vsize);
	uint64_t mb = member_bytes(&p);
	char *mp[MAXM];
	uint32_t k = 0;
	for (uint32_t i = 0; i < c->n; i++)
		if (i != lost)
			mp[k++] = pp[i];
	/* count the writes of a whole run */
	rk_fault_plan *plan = NULL;
	struct rk_fault_spec spec = { .model = RK_FAULT_NONE };
	ck_assert_int_eq(rk_fault_plan_create(&plan, &spec), RK_OK);
	struct rk_rebuild_opts o = { .role = -1, .checkpoint_bytes = 128 * KIB, .wrap_dev = rk_test_wrap_fault,
	                             .wrap_ctx = plan };
	struct rk_rebuild_result res;
	ck_assert_int_eq(rk_recover_rebuild(pp[MAXM], mp, k, &o, &res), RK_OK);
	uint64_t W = rk_fault_writes(plan);
	rk_fault_plan_free(plan);
	ck_assert_uint_gt(W, 20);
	uint64_t cuts[] = { 0, 1, 2, 3, 5, 8, 13, W / 4, W / 2, (3 * W) / 4, W - 9, W - 5, W - 3, W - 2, W - 1 };
	int resumed_seen = 0;
	for (size_t ci = 0; ci < sizeof cuts / sizeof cuts[0]; ci++) {
		for (uint32_t i = 0; i < c->n; i++)
			if (i != lost)
				rk_test_copy_file(saved(i), pp[i]);
		unlink(pp[MAXM]);
		struct rk_fault_spec ks = { .model = RK_FAULT_KILL, .n = cuts[ci] };
		ck_assert_int_eq(rk_fault_plan_create(&plan, &ks), RK_OK);
		o.wrap_ctx = plan;
		rk_err e = rk_recover_rebuild(pp[MAXM], mp, k, &o, &res);
		rk_fault_plan_free(plan);
		ck_assert_msg(e == RK_E_FAULT, "cut %llu of %llu: %d %s", (unsigned long long)cuts[ci], (unsigned long long)W,
		              e, rk_errmsg());
		/* readable meanwhile, with or without NEW */
		check_volume(mp, k, vol, vsize, -1);
		mp[k] = pp[MAXM];
		check_volume(mp, k + 1, vol, vsize, -1);
		/* the same command again finishes */
		struct rk_rebuild_opts o2 = { .role = -1, .checkpoint_bytes = 128 * KIB };
		e = rk_recover_rebuild(pp[MAXM], mp, k, &o2, &res);
		ck_assert_msg(e == RK_OK, "cut %llu: resume: %s", (unsigned long long)cuts[ci], rk_errmsg());
		ck_assert_uint_eq(res.role, lost);
		if (res.resumed && res.start > 0)
			resumed_seen = 1;
		same_data_area(saved(lost), pp[MAXM], p.data_offset, mb);
		check_volume(mp, k + 1, vol, vsize, RK_ASTATE_CLEAN);
	}
	ck_assert_msg(resumed_seen, "no cut point resumed past 0");
	free(vol);
	rk_create_plan_free(&p);
}

START_TEST(t_rebuild_killed_raid6) { kill_and_resume(&cfgs[2], 2); }
END_TEST
START_TEST(t_rebuild_killed_raid10) { kill_and_resume(&cfgs[6], 1); }
END_TEST

/* Restoring copies: nothing to do writes nothing; a wiped primary and a
 * wiped backup are rewritten from the other copy; a member with both
 * copies gone gets its superblock back from the role table, after its data
 * was checked in place. */
static void restore_case(const struct cfg *c)
{
	uint8_t *vol;
	uint64_t vsize;
	struct rk_create_plan p = make_array(c, 31, &vol, &vsize);
	uint32_t crcs[MAXM];
	for (uint32_t i = 0; i < c->n; i++)
		crcs[i] = rk_test_file_crc(pp[i]);
	struct rk_restore_result *r = NULL;
	ck_assert_int_eq(rk_recover_restore(pp, c->n, NULL, &r), RK_OK);
	ck_assert_uint_eq(r->nrepaired, 0);
	ck_assert_uint_eq(r->ncannot, 0);
	for (uint32_t i = 0; i < c->n; i++) {
		ck_assert_int_eq(r->m[i].action, RK_RESTORE_OK);
		ck_assert_uint_eq(rk_test_file_crc(pp[i]), crcs[i]);
	}
	rk_restore_result_free(r);

	/* primary of m0, backup of m1 wiped; both of m2 */
	uint64_t bk = rk_sb_backup_offset(MSIZE);
	rk_test_write_at(pp[0], NULL, RK_SB_AREA, RK_SB_PRIMARY_OFF);
	rk_test_write_at(pp[1], NULL, RK_SB_AREA, bk);
	rk_test_write_at(pp[2], NULL, RK_SB_AREA, RK_SB_PRIMARY_OFF);
	rk_test_write_at(pp[2], NULL, RK_SB_AREA, MSIZE - RK_SB_AREA);
	ck_assert_int_eq(rk_recover_restore(pp, c->n, NULL, &r), RK_OK);
	ck_assert_uint_eq(r->ncannot, 0);
	ck_assert_uint_eq(r->nrepaired, 3);
	ck_assert_int_eq(r->m[0].action, RK_RESTORE_COPY);
	ck_assert_int_eq(r->m[0].copies, 1);
	ck_assert_ptr_nonnull(strstr(r->m[0].what, "primary"));
	ck_assert_int_eq(r->m[1].action, RK_RESTORE_COPY);
	ck_assert_int_eq(r->m[1].copies, 2);
	ck_assert_int_eq(r->m[2].action, RK_RESTORE_ROLE);
	ck_assert_int_eq(r->m[2].role, 2);
	ck_assert_ptr_nonnull(strstr(r->m[2].what, "sampled"));
	rk_restore_result_free(r);
	/* every member is byte-identical to before (the same superblock contents) */
	for (uint32_t i = 0; i < c->n; i++)
		ck_assert_msg(rk_test_file_crc(pp[i]) == crcs[i], "%s: member %u differs after restore", c->what, i);
	check_volume(pp, c->n, vol, vsize, RK_ASTATE_CLEAN);

	/* both gone, but the data in the file is not the role's: not restored */
	rk_test_write_at(pp[1], NULL, RK_SB_AREA, RK_SB_PRIMARY_OFF);
	rk_test_write_at(pp[1], NULL, RK_SB_AREA, bk);
	{
		uint8_t *j = rk_test_random_bytes(256 * KIB, 99);
		int fd = open(pp[1], O_RDWR);
		ck_assert_int_ge(fd, 0);
		for (uint64_t at = p.data_offset; at + 256 * KIB <= p.data_offset + p.data_size; at += 256 * KIB)
			ck_assert_int_eq(pwrite(fd, j, 256 * KIB, (off_t)at), (ssize_t)(256 * KIB));
		close(fd);
		free(j);
	}
	uint32_t crc1 = rk_test_file_crc(pp[1]);
	ck_assert_int_eq(rk_recover_restore(pp, c->n, NULL, &r), RK_OK);
	ck_assert_int_eq(r->m[1].action, RK_RESTORE_CANNOT);
	ck_assert_uint_eq(r->ncannot, 1);
	ck_assert_msg(strstr(r->m[1].what, "disagree") || strstr(r->m[1].what, "differ"), "%s", r->m[1].what);
	rk_restore_result_free(r);
	ck_assert_uint_eq(rk_test_file_crc(pp[1]), crc1);

	/* two members without superblocks: no single place is certain */
	rk_test_copy_file(saved(1), pp[1]);
	rk_test_write_at(pp[1], NULL, RK_SB_AREA, RK_SB_PRIMARY_OFF);
	rk_test_write_at(pp[1], NULL, RK_SB_AREA, bk);
	rk_test_write_at(pp[0], NULL, RK_SB_AREA, RK_SB_PRIMARY_OFF);
	rk_test_write_at(pp[0], NULL, RK_SB_AREA, bk);
	uint32_t crc0 = rk_test_file_crc(pp[0]);
	crc1 = rk_test_file_crc(pp[1]);
	ck_assert_int_eq(rk_recover_restore(pp, c->n, NULL, &r), RK_OK);
	ck_assert_int_eq(r->m[0].action, RK_RESTORE_CANNOT);
	ck_assert_int_eq(r->m[1].action, RK_RESTORE_CANNOT);
	rk_restore_result_free(r);
	ck_assert_uint_eq(rk_test_file_crc(pp[0]), crc0);
	ck_assert_uint_eq(rk_test_file_crc(pp[1]), crc1);
	free(vol);
	rk_create_plan_free(&p);
}

START_TEST(t_restore_raid5) { restore_case(&cfgs[0]); }
END_TEST
START_TEST(t_restore_raid6) { restore_case(&cfgs[2]); }
END_TEST
START_TEST(t_restore_raid1) { restore_case(&cfgs[5]); }
END_TEST
START_TEST(t_restore_raid10) { restore_case(&cfgs[6]); }
END_TEST

/* A member marked faulty by the others is not given its place back by
 * restore (its data is stale): that is a rebuild's job. */
START_TEST(t_restore_refuses_faulty_role)
{
	const struct cfg *c = &cfgs[0];
	uint8_t *vol;
	uint64_t vsize;
	struct rk_create_plan p = make_array(c, 41, &vol, &vsize);
	/* a degraded write while m3 is away marks role 3 faulty */
	struct rk_discovery *d = NULL;
	ck_assert_int_eq(rk_discover(&d, pp, 3, NULL), RK_OK);
	rk_array *a = NULL;
	ck_assert_int_eq(rk_array_open(&a, &d->arrays[0], RK_ARRAY_RDWR), RK_OK);
	ck_assert_int_eq(rk_array_write(a, vol + 4096, 4096, 0), RK_OK);
	ck_assert_int_eq(rk_array_close(a), RK_OK);
	rk_discovery_free(d);
	rk_test_write_at(pp[3], NULL, RK_SB_AREA, RK_SB_PRIMARY_OFF);
	rk_test_write_at(pp[3], NULL, RK_SB_AREA, rk_sb_backup_offset(MSIZE));
	uint32_t crc3 = rk_test_file_crc(pp[3]);
	struct rk_restore_result *r = NULL;
	ck_assert_int_eq(rk_recover_restore(pp, 4, NULL, &r), RK_OK);
	ck_assert_int_eq(r->m[3].action, RK_RESTORE_CANNOT);
	ck_assert_ptr_nonnull(strstr(r->m[3].what, "faulty"));
	rk_restore_result_free(r);
	ck_assert_uint_eq(rk_test_file_crc(pp[3]), crc3);
	free(vol);
	rk_create_plan_free(&p);
}
END_TEST

RK_TEST_SUITE("recover", { "rebuild", 600, setup, rk_test_tmpdir_remove, 0,
	  RK_TESTS(RK_TEST_LOOP(t_rebuild_each_role, 0, (int)(sizeof cfgs / sizeof cfgs[0])),
	           RK_TEST(t_rebuild_two_and_in_place), RK_TEST(t_rebuild_refusals),
	           RK_TEST(t_rebuild_killed_raid6), RK_TEST(t_rebuild_killed_raid10)) },
	{ "restore", 600, setup, rk_test_tmpdir_remove, 0,
	  RK_TESTS(RK_TEST(t_restore_raid5), RK_TEST(t_restore_raid6),
	           RK_TEST(t_restore_raid1), RK_TEST(t_restore_raid10),
	           RK_TEST(t_restore_refuses_faulty_role)) })
