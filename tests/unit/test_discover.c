/* test_discover.c: discovery over synthetic member sets written with the
 * library (rk_sb_init / rk_sb_set_member / rk_sb_write on sparse temp
 * files), and signature probing of the real foreign fixtures. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uuid/uuid.h>

#include "rk_dev.h"
#include "rk_discover.h"
#include "rk_fmt.h"
#include "rk_json.h"
#include "rk_print.h"
#include "rk_probe.h"
#include "rk_sb.h"
#include "helpers/rk_test.h"

#define DEV_SIZE (4ull << 20)

/* A template superblock of a fresh array. */
static struct rk_sb *new_array(int32_t level, uint32_t layout, uint64_t chunk, uint32_t nroles, const char *name)
{
	struct rk_sb *sb = calloc(1, sizeof *sb);
	ck_assert_ptr_nonnull(sb);
	struct rk_sb_params p = { .name = name, .level = level, .layout = layout, .chunk = chunk, .nroles = nroles };
	p.data_size = rk_sb_max_data_size(DEV_SIZE, RK_DATA_OFFSET_DEFAULT, chunk ? chunk : 4096);
	ck_assert_uint_gt(p.data_size, 0);
	rk_err e = rk_sb_init(sb, &p);
	ck_assert_msg(e == RK_OK, "rk_sb_init: %s", rk_errmsg());
	return sb;
}

/* Writes member ROLE of TMPL (with EVENTS) to a new file NAME. */
static void write_member(const char *name, const struct rk_sb *tmpl, uint32_t role, uint64_t events)
{
	struct rk_sb *s = malloc(sizeof *s);
	ck_assert_ptr_nonnull(s);
	memcpy(s, tmpl, sizeof *s);
	s->events = events;
	rk_err e = rk_sb_set_member(s, role, DEV_SIZE);
	ck_assert_msg(e == RK_OK, "set_member: %s", rk_errmsg());
	rk_dev *d = NULL;
	unlink(rk_test_path(name));
	e = rk_dev_create(&d, rk_test_path(name), DEV_SIZE);
	ck_assert_msg(e == RK_OK, "create %s: %s", name, rk_errmsg());
	e = rk_sb_write(d, s);
	ck_assert_msg(e == RK_OK, "write %s: %s", name, rk_errmsg());
	rk_dev_close(d);
	free(s);
}

/* Writes roles [FROM, TO) of TMPL (with EVENTS) to new files named a, b, c, ... by role. */
static void write_roles(const struct rk_sb *tmpl, uint32_t from, uint32_t to, uint64_t events)
{
	for (uint32_t r = from; r < to; r++) {
		char name[2] = { (char)('a' + r), 0 };
		write_member(name, tmpl, r, events);
	}
}

static void write_junk(const char *name, uint64_t size, int random)
{
	FILE *f = fopen(rk_test_path(name), "wb");
	ck_assert_ptr_nonnull(f);
	unsigned x = 12345;
	for (uint64_t i = 0; i < size; i++) {
		x = x * 1103515245u + 12345u;
		fputc(random ? (int)(x >> 16 & 0xff) : 0, f);
	}
	fclose(f);
}

static struct rk_discovery *disc(const char *const *names, uint32_t n, const uint8_t *uuid)
{
	char **paths = calloc(n ? n : 1, sizeof *paths);
	ck_assert_ptr_nonnull(paths);
	for (uint32_t i = 0; i < n; i++)
		paths[i] = strdup(names[i][0] == '/' ? names[i] : rk_test_path(names[i]));
	struct rk_discovery *d = NULL;
	rk_err e = rk_discover(&d, paths, n, uuid);
	ck_assert_msg(e == RK_OK, "rk_discover: %s", rk_errmsg());
	ck_assert_ptr_nonnull(d);
	for (uint32_t i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
	/* Printing must work on every result (and must not crash). */
	FILE *f = fopen("/dev/null", "w");
	ck_assert_ptr_nonnull(f);
	rk_print_discovery_text(f, d);
	rk_json *j = rk_json_new(f);
	rk_print_discovery_json(j, d);
	rk_json_free(j);
	fclose(f);
	return d;
}

static const char *base(const char *p)
{
	const char *s = p ? strrchr(p, '/') : NULL;
	return s ? s + 1 : p;
}

static const struct rk_member *left_named(const struct rk_discovery *d, const char *name)
{
	for (uint32_t i = 0; i < d->nleft; i++)
		if (d->left[i].path && strcmp(base(d->left[i].path), name) == 0)
			return &d->left[i];
	return NULL;
}

static void assert_role(const struct rk_array_info *a, uint32_t r, const char *name)
{
	ck_assert_uint_lt(r, a->nroles);
	if (!name) {
		ck_assert_ptr_null(a->roles[r].path);
		ck_assert_int_eq(a->roles[r].cls, RK_MEMBER_MISSING);
	} else {
		ck_assert_ptr_nonnull(a->roles[r].path);
		ck_assert_str_eq(base(a->roles[r].path), name);
		ck_assert_int_eq(a->roles[r].cls, RK_MEMBER_ACTIVE);
		ck_assert_int_eq(a->roles[r].role, (int64_t)r);
	}
}

#define HAS(s, sub) ck_assert_msg(strstr((s), (sub)) != NULL, "'%s' lacks '%s'", (s), (sub))

/* Discovers NAMES (N of them, no UUID filter): one array, in STATE, with
 * the member named LEFT left over as stale for a reason holding WHY.
 * Returns the discovery (rk_discovery_free it). */
static struct rk_discovery *expect_stale(const char *const *names, uint32_t n, int state, const char *left,
                                         const char *why)
{
	struct rk_discovery *d = disc(names, n, NULL);
	ck_assert_uint_eq(d->narrays, 1);
	ck_assert_int_eq(d->arrays[0].state, state);
	const struct rk_member *m = left_named(d, left);
	ck_assert_ptr_nonnull(m);
	ck_assert_int_eq(m->cls, RK_MEMBER_STALE);
	HAS(m->reason, why);
	return d;
}

START_TEST(t_shuffled_clean)
{
	struct rk_sb *t = new_array(5, 2, 65536, 4, "shuf");
	write_roles(t, 0, 4, 9);
	const char *n[] = { "c", "a", "d", "b" };
	struct rk_discovery *d = disc(n, 4, NULL);
	ck_assert_uint_eq(d->narrays, 1);
	ck_assert_uint_eq(d->nleft, 0);
	const struct rk_array_info *a = &d->arrays[0];
	ck_assert_int_eq(a->state, RK_ASTATE_CLEAN);
	ck_assert_uint_eq(a->nroles, 4);
	ck_assert_uint_eq(a->nactive, 4);
	ck_assert_str_eq(a->name, "shuf");
	ck_assert_mem_eq(a->uuid, t->array_uuid, 16);
	assert_role(a, 0, "a");
	assert_role(a, 1, "b");
	assert_role(a, 2, "c");
	assert_role(a, 3, "d");
	ck_assert_int_eq(a->roles[0].argi, 1);
	ck_assert_uint_eq(a->roles[2].events, 9);
	ck_assert_ptr_nonnull(a->sb);
	ck_assert_uint_eq(a->sb->events, 9);
	rk_discovery_free(d);
	free(t);
}
END_TEST

START_TEST(t_stale_events)
{
	struct rk_sb *t = new_array(5, 2, 65536, 4, "st");
	write_roles(t, 0, 3, 9);
	write_member("d", t, 3, 5);
	const char *n[] = { "d", "b", "a", "c" };
	struct rk_discovery *d = disc(n, 4, NULL);
	ck_assert_uint_eq(d->narrays, 1);
	const struct rk_array_info *a = &d->arrays[0];
	ck_assert_int_eq(a->state, RK_ASTATE_DEGRADED);
	assert_role(a, 3, NULL);
	HAS(a->why, "3");
	ck_assert_uint_eq(d->nleft, 1);
	const struct rk_member *m = left_named(d, "d");
	ck_assert_ptr_nonnull(m);
	ck_assert_int_eq(m->cls, RK_MEMBER_STALE);
	ck_assert_int_eq(m->role, 3);
	ck_assert_int_eq(m->array_idx, 0);
	HAS(m->reason, "events 5, the array is at 9");
	/* The missing role names the stale path. */
	HAS(a->roles[3].reason, "not used");
	rk_discovery_free(d);
	free(t);
}
END_TEST

START_TEST(t_stale_marked_faulty)
{
	struct rk_sb *t = new_array(5, 2, 65536, 4, "mk");
	write_member("d", t, 3, 5);
	t->roles[3].state = RK_ROLE_FAULTY;
	write_roles(t, 0, 3, 6);
	const char *n[] = { "a", "b", "d", "c" };
	rk_discovery_free(expect_stale(n, 4, RK_ASTATE_DEGRADED, "d", "marked faulty by members at events 6"));
	free(t);
}
END_TEST

/* Marked faulty with the same event count: the mark still wins. */
START_TEST(t_stale_marked_same_events)
{
	struct rk_sb *t = new_array(6, 2, 65536, 5, "mk2");
	write_member("e", t, 4, 7);
	t->roles[4].state = RK_ROLE_FAULTY;
	write_roles(t, 0, 4, 7);
	const char *n[] = { "e", "a", "b", "c", "d" };
	rk_discovery_free(expect_stale(n, 5, RK_ASTATE_DEGRADED, "e", "faulty"));
	free(t);
}
END_TEST

START_TEST(t_stale_marked_missing)
{
	struct rk_sb *t = new_array(1, 0, 0, 3, "mir");
	write_member("c", t, 2, 2);
	t->roles[2].state = RK_ROLE_EMPTY;
	memset(t->roles[2].member_uuid, 0, 16);
	write_roles(t, 0, 2, 3);
	const char *n[] = { "c", "b", "a" };
	rk_discovery_free(expect_stale(n, 3, RK_ASTATE_DEGRADED, "c", "marked missing by members at events 3"));
	free(t);
}
END_TEST

START_TEST(t_replaced)
{
	struct rk_sb *t = new_array(5, 2, 65536, 3, "rep");
	write_member("old0", t, 0, 4);
	uuid_generate(t->roles[0].member_uuid);   /* role 0 rebuilt onto a new member */
	write_member("new0", t, 0, 8);
	write_roles(t, 1, 3, 8);
	const char *n[] = { "old0", "b", "c", "new0" };
	struct rk_discovery *d = expect_stale(n, 4, RK_ASTATE_CLEAN, "old0", "replaced");
	assert_role(&d->arrays[0], 0, "new0");
	rk_discovery_free(d);
	free(t);
}
END_TEST

START_TEST(t_rebuilding_not_used)
{
	struct rk_sb *t = new_array(5, 2, 65536, 3, "rb");
	t->roles[2].state = RK_ROLE_REBUILDING;
	t->roles[2].checkpoint = 65536;
	write_roles(t, 0, 3, 4);
	const char *n[] = { "a", "b", "c" };
	rk_discovery_free(expect_stale(n, 3, RK_ASTATE_DEGRADED, "c", "rebuilt"));
	free(t);
}
END_TEST

START_TEST(t_duplicate_uuid)
{
	struct rk_sb *t = new_array(5, 2, 65536, 3, "dup");
	write_member("a", t, 0, 9);
	write_member("b_old", t, 1, 3);
	write_roles(t, 1, 3, 9);
	const char *n[] = { "b_old", "a", "c", "b" };
	struct rk_discovery *d = disc(n, 4, NULL);
	const struct rk_array_info *a = &d->arrays[0];
	ck_assert_int_eq(a->state, RK_ASTATE_CLEAN);
	assert_role(a, 1, "b");
	const struct rk_member *m = left_named(d, "b_old");
	ck_assert_ptr_nonnull(m);
	ck_assert_int_eq(m->cls, RK_MEMBER_DUPLICATE);
	HAS(m->reason, "/b,");
	HAS(m->reason, "fresher");
	rk_discovery_free(d);

	/* A tie: the first given is used. */
	write_member("b2", t, 1, 9);
	const char *n2[] = { "b2", "a", "c", "b" };
	d = disc(n2, 4, NULL);
	a = &d->arrays[0];
	ck_assert_int_eq(a->state, RK_ASTATE_CLEAN);
	assert_role(a, 1, "b2");
	m = left_named(d, "b");
	ck_assert_ptr_nonnull(m);
	ck_assert_int_eq(m->cls, RK_MEMBER_DUPLICATE);
	HAS(m->reason, "b2");
	rk_discovery_free(d);
	free(t);
}
END_TEST

START_TEST(t_duplicate_same_file)
{
	struct rk_sb *t = new_array(1, 0, 0, 2, "same");
	write_roles(t, 0, 2, 1);
	ck_assert_int_eq(link(rk_test_path("a"), rk_test_path("a_link")), 0);
	char dotted[320];
	snprintf(dotted, sizeof dotted, "%s/./b", rk_test_tmpdir());
	const char *n[] = { "a", "b", "a_link", dotted };
	struct rk_discovery *d = disc(n, 4, NULL);
	const struct rk_array_info *a = &d->arrays[0];
	ck_assert_int_eq(a->state, RK_ASTATE_CLEAN);
	assert_role(a, 0, "a");
	assert_role(a, 1, "b");
	ck_assert_uint_eq(d->nleft, 2);
	const struct rk_member *m = left_named(d, "a_link");
	ck_assert_ptr_nonnull(m);
	ck_assert_int_eq(m->cls, RK_MEMBER_DUPLICATE);
	HAS(m->reason, "same file");
	HAS(m->reason, "/a");
	m = &d->left[1];
	ck_assert_int_eq(m->cls, RK_MEMBER_DUPLICATE);
	rk_discovery_free(d);
	free(t);
}
END_TEST

START_TEST(t_foreign_uuid_filter)
{
	struct rk_sb *x = new_array(5, 2, 65536, 3, "x");
	struct rk_sb *y = new_array(1, 0, 0, 2, "y");
	write_member("x0", x, 0, 2);
	write_member("x1", x, 1, 2);
	write_member("x2", x, 2, 2);
	write_member("y0", y, 0, 5);
	write_member("y1", y, 1, 5);
	const char *n[] = { "y1", "x2", "x0", "y0", "x1" };
	struct rk_discovery *d = disc(n, 5, NULL);
	ck_assert_uint_eq(d->narrays, 2);
	ck_assert_str_eq(d->arrays[0].name, "y");   /* first seen first */
	ck_assert_int_eq(d->arrays[0].state, RK_ASTATE_CLEAN);
	ck_assert_int_eq(d->arrays[1].state, RK_ASTATE_CLEAN);
	assert_role(&d->arrays[1], 2, "x2");
	rk_discovery_free(d);

	d = disc(n, 5, x->array_uuid);
	ck_assert_uint_eq(d->narrays, 1);
	ck_assert_mem_eq(d->arrays[0].uuid, x->array_uuid, 16);
	ck_assert_int_eq(d->arrays[0].state, RK_ASTATE_CLEAN);
	ck_assert_uint_eq(d->nleft, 2);
	char yu[37];
	uuid_unparse_lower(y->array_uuid, yu);
	for (uint32_t i = 0; i < d->nleft; i++) {
		ck_assert_int_eq(d->left[i].cls, RK_MEMBER_FOREIGN);
		HAS(d->left[i].reason, yu);
	}
	rk_discovery_free(d);

	/* A UUID nobody has: everything is foreign, no array. */
	uint8_t none[16];
	uuid_generate(none);
	d = disc(n, 5, none);
	ck_assert_uint_eq(d->narrays, 0);
	ck_assert_uint_eq(d->nleft, 5);
	rk_discovery_free(d);
	free(x);
	free(y);
}
END_TEST

START_TEST(t_unknown_junk)
{
	write_junk("zeros", 3 << 20, 0);
	write_junk("random", 3 << 20, 1);
	write_junk("tiny", 100, 1);
	write_junk("empty", 0, 0);
	const char *n[] = { "zeros", "random", "nonexistent", "tiny", "empty" };
	struct rk_discovery *d = disc(n, 5, NULL);
	ck_assert_uint_eq(d->narrays, 0);
	ck_assert_uint_eq(d->nleft, 5);
	for (uint32_t i = 0; i < 5; i++) {
		ck_assert_int_eq(d->left[i].cls, RK_MEMBER_UNKNOWN);
		ck_assert_int_eq(d->left[i].argi, (int32_t)i);
		ck_assert_int_eq(d->left[i].role, -1);
		ck_assert_uint_gt(strlen(d->left[i].reason), 10);
	}
	HAS(d->left[0].reason, "primary");
	HAS(d->left[0].reason, "backup");
	HAS(d->left[2].reason, "cannot open");
	rk_discovery_free(d);

	d = disc(NULL, 0, NULL);
	ck_assert_uint_eq(d->narrays, 0);
	ck_assert_uint_eq(d->nleft, 0);
	rk_discovery_free(d);
}
END_TEST

START_TEST(t_mixed_with_junk)
{
	struct rk_sb *t = new_array(6, 2, 65536, 4, "mix");
	write_member("p", t, 0, 1);
	write_member("q", t, 1, 1);
	write_member("r", t, 2, 1);
	write_member("s", t, 3, 1);
	write_junk("junk", 1 << 20, 1);
	const char *n[] = { "junk", "s", "q", "r", "p" };
	struct rk_discovery *d = disc(n, 5, NULL);
	ck_assert_uint_eq(d->narrays, 1);
	ck_assert_int_eq(d->arrays[0].state, RK_ASTATE_CLEAN);
	assert_role(&d->arrays[0], 0, "p");
	ck_assert_uint_eq(d->nleft, 1);
	ck_assert_int_eq(d->left[0].cls, RK_MEMBER_UNKNOWN);
	ck_assert_int_eq(d->left[0].array_idx, -1);
	rk_discovery_free(d);
	free(t);
}
END_TEST

START_TEST(t_missing_and_failed)
{
	struct rk_sb *t = new_array(5, 2, 65536, 4, "miss");
	write_roles(t, 0, 4, 1);
	const char *n1[] = { "d", "a", "c" };
	struct rk_discovery *d = disc(n1, 3, NULL);
	const struct rk_array_info *a = &d->arrays[0];
	ck_assert_int_eq(a->state, RK_ASTATE_DEGRADED);
	ck_assert_uint_eq(a->nactive, 3);
	assert_role(a, 1, NULL);
	ck_assert_int_eq(a->roles[1].role, 1);
	ck_assert_mem_eq(a->roles[1].member_uuid, t->roles[1].member_uuid, 16);
	HAS(a->why, "role 1 missing");
	rk_discovery_free(d);

	const char *n2[] = { "b", "a" };
	d = disc(n2, 2, NULL);
	a = &d->arrays[0];
	ck_assert_int_eq(a->state, RK_ASTATE_FAILED);
	HAS(a->why, "roles 2, 3 missing");
	HAS(a->why, "tolerates 1");
	rk_discovery_free(d);
	free(t);
}
END_TEST

START_TEST(t_levels_tolerance)
{
	/* RAID-6: two missing is degraded, three is failed. */
	struct rk_sb *t = new_array(6, 2, 65536, 5, "r6");
	for (uint32_t r = 0; r < 5; r++) {
		char nm[2] = { (char)('a' + r), 0 };
		write_member(nm, t, r, 1);
	}
	const char *n1[] = { "a", "c", "e" };
	struct rk_discovery *d = disc(n1, 3, NULL);
	ck_assert_int_eq(d->arrays[0].state, RK_ASTATE_DEGRADED);
	rk_discovery_free(d);
	const char *n2[] = { "a", "e" };
	d = disc(n2, 2, NULL);
	ck_assert_int_eq(d->arrays[0].state, RK_ASTATE_FAILED);
	HAS(d->arrays[0].why, "tolerates 2");
	rk_discovery_free(d);
	free(t);

	/* RAID-0: nothing may be missing. */
	t = new_array(0, 0, 65536, 2, "r0");
	write_member("z0", t, 0, 1);
	const char *n3[] = { "z0" };
	d = disc(n3, 1, NULL);
	ck_assert_int_eq(d->arrays[0].state, RK_ASTATE_FAILED);
	rk_discovery_free(d);
	free(t);

	/* RAID-10 near-2 over 4: roles 0 and 2 missing keeps a copy of
	 * everything, roles 0 and 1 (one mirror pair) does not. */
	t = new_array(10, 0x102, 65536, 4, "r10");
	write_member("m0", t, 0, 1);
	write_member("m1", t, 1, 1);
	write_member("m2", t, 2, 1);
	write_member("m3", t, 3, 1);
	const char *n4[] = { "m1", "m3" };
	d = disc(n4, 2, NULL);
	ck_assert_int_eq(d->arrays[0].state, RK_ASTATE_DEGRADED);
	rk_discovery_free(d);
	const char *n5[] = { "m2", "m3" };
	d = disc(n5, 2, NULL);
	ck_assert_int_eq(d->arrays[0].state, RK_ASTATE_FAILED);
	rk_discovery_free(d);
	free(t);

	/* RAID-1 over 3: one member is enough. */
	t = new_array(1, 0, 0, 3, "r1");
	write_member("o0", t, 0, 1);
	const char *n6[] = { "o0" };
	d = disc(n6, 1, NULL);
	ck_assert_int_eq(d->arrays[0].state, RK_ASTATE_DEGRADED);
	rk_discovery_free(d);
	free(t);
}
END_TEST

START_TEST(t_split_brain_mirror)
{
	struct rk_sb *t = new_array(1, 0, 0, 2, "sb");
	struct rk_sb *u = malloc(sizeof *u);
	ck_assert_ptr_nonnull(u);
	memcpy(u, t, sizeof *u);
	/* Side A ran without role 1 and wrote twice; side B ran without role 0. */
	t->roles[1].state = RK_ROLE_FAULTY;
	write_member("left", t, 0, 7);
	u->roles[0].state = RK_ROLE_FAULTY;
	write_member("right", u, 1, 6);
	const char *n[] = { "right", "left" };
	struct rk_discovery *d = disc(n, 2, NULL);
	ck_assert_uint_eq(d->narrays, 1);
	const struct rk_array_info *a = &d->arrays[0];
	ck_assert_int_eq(a->state, RK_ASTATE_CONFLICT);
	HAS(a->why, "split brain");
	HAS(a->why, "left");
	HAS(a->why, "right");
	const struct rk_member *m = left_named(d, "right");
	ck_assert_ptr_nonnull(m);
	ck_assert_int_eq(m->cls, RK_MEMBER_STALE);
	HAS(m->reason, "split brain");
	rk_discovery_free(d);
	free(t);
	free(u);
}
END_TEST

START_TEST(t_split_brain_raid5)
{
	struct rk_sb *t = new_array(5, 2, 65536, 4, "sb5");
	struct rk_sb *u = malloc(sizeof *u);
	ck_assert_ptr_nonnull(u);
	memcpy(u, t, sizeof *u);
	t->roles[3].state = RK_ROLE_FAULTY;   /* side 1: a, b, c without d */
	write_roles(t, 0, 3, 8);
	u->roles[2].state = RK_ROLE_FAULTY;   /* side 2: d (with copies of a, b) without c */
	write_member("d", u, 3, 9);
	const char *n[] = { "a", "b", "c", "d" };
	struct rk_discovery *d = disc(n, 4, NULL);
	const struct rk_array_info *a = &d->arrays[0];
	ck_assert_int_eq(a->state, RK_ASTATE_CONFLICT);
	HAS(a->why, "split brain");
	rk_discovery_free(d);

	/* Without the other side's member there is nothing to disagree on. */
	const char *n2[] = { "a", "b", "c" };
	d = disc(n2, 3, NULL);
	ck_assert_int_eq(d->arrays[0].state, RK_ASTATE_DEGRADED);
	rk_discovery_free(d);
	free(t);
	free(u);
}
END_TEST

/* A member dropped first, which marks an earlier dropped one faulty, is
 * stale, not split brain: the freshest members never lost the dropped
 * member's side. */
START_TEST(t_no_false_split_brain)
{
	struct rk_sb *t = new_array(6, 2, 65536, 5, "ok6");
	write_member("a", t, 0, 5);            /* a left at 5 */
	t->roles[0].state = RK_ROLE_FAULTY;
	write_member("d", t, 3, 6);            /* d left at 6, marking a */
	t->roles[3].state = RK_ROLE_FAULTY;
	write_roles(t, 1, 3, 7);
	write_member("e", t, 4, 7);
	const char *n[] = { "e", "d", "c", "b", "a" };
	struct rk_discovery *d = disc(n, 5, NULL);
	const struct rk_array_info *a = &d->arrays[0];
	ck_assert_int_eq(a->state, RK_ASTATE_DEGRADED);
	ck_assert_int_eq(left_named(d, "a")->cls, RK_MEMBER_STALE);
	ck_assert_int_eq(left_named(d, "d")->cls, RK_MEMBER_STALE);
	rk_discovery_free(d);
	free(t);
}
END_TEST

START_TEST(t_wiped_primary_and_backup)
{
	struct rk_sb *t = new_array(1, 0, 0, 2, "wipe");
	write_roles(t, 0, 2, 3);
	/* Overwrite a's primary: the backup identifies it. */
	FILE *f = fopen(rk_test_path("a"), "r+b");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fseek(f, RK_SB_PRIMARY_OFF, SEEK_SET), 0);
	for (int i = 0; i < 4096; i++)
		fputc(0xAA, f);
	fclose(f);
	/* Cut b short: its backup is gone, the primary still says who it is
	 * but the device is smaller than recorded. */
	ck_assert_int_eq(truncate(rk_test_path("b"), DEV_SIZE / 2), 0);
	const char *n[] = { "b", "a" };
	struct rk_discovery *d = disc(n, 2, NULL);
	ck_assert_uint_eq(d->narrays, 1);
	const struct rk_array_info *a = &d->arrays[0];
	assert_role(a, 0, "a");
	ck_assert_int_eq(a->roles[0].rd.chosen, 1);
	ck_assert_int_ne(a->roles[0].rd.copy[0].status, RK_COPY_OK);
	rk_discovery_free(d);
	free(t);
}
END_TEST

START_TEST(t_spare)
{
	struct rk_sb *t = new_array(5, 2, 65536, 3, "sp");
	t->nentries = 4;
	t->sb_bytes = 0;
	t->sb_bytes = rk_sb_bytes_for(4);
	uuid_generate(t->roles[3].member_uuid);
	t->roles[3].state = RK_ROLE_SPARE;
	write_roles(t, 0, 3, 2);
	write_member("s", t, 3, 2);
	const char *n[] = { "s", "a", "b", "c" };
	struct rk_discovery *d = disc(n, 4, NULL);
	const struct rk_array_info *a = &d->arrays[0];
	ck_assert_int_eq(a->state, RK_ASTATE_CLEAN);
	const struct rk_member *m = left_named(d, "s");
	ck_assert_ptr_nonnull(m);
	ck_assert_int_eq(m->cls, RK_MEMBER_SPARE);
	ck_assert_int_eq(m->role, -1);
	rk_discovery_free(d);
	free(t);
}
END_TEST

/* ---- probing the foreign fixtures ---- */

/* Value of KEY= in a .blkid file ("" when absent). */
static void blkid_value(const char *file, const char *key, char *out, size_t cap)
{
	out[0] = 0;
	FILE *f = fopen(file, "r");
	if (!f)
		return;
	char line[512];
	size_t kl = strlen(key);
	while (fgets(line, sizeof line, f)) {
		if (strncmp(line, key, kl) == 0 && line[kl] == '=') {
			line[strcspn(line, "\n")] = 0;
			snprintf(out, cap, "%s", line + kl + 1);
		}
	}
	fclose(f);
}

/* Undoes udev's *_ENC escaping (\xNN for a byte) in place: the bytes blkid
 * found, which rk_probe_result keeps as they are. */
static void udev_decode(char *s)
{
	char *o = s;
	for (const char *p = s; *p; o++) {
		unsigned v;
		if (p[0] == '\\' && p[1] == 'x' && sscanf(p + 2, "%2x", &v) == 1) {
			*o = (char)v;
			p += 4;
		} else {
			*o = *p++;
		}
	}
	*o = 0;
}

static const char *const fixtures[] = {
	"adaptec-raid", "ddf-raid", "hpt37x-raid", "hpt45x-raid", "isw-raid", "jmicron-raid",
	"lsi-raid", "mdraid-1", "mdraid", "nvidia-raid", "promise-raid", "silicon-raid", "via-raid",
};
#define NFIX (sizeof fixtures / sizeof fixtures[0])

static int have_fixtures(void)
{
	if (system("command -v xz >/dev/null 2>&1") != 0) {
		printf("SKIP: xz is not installed: foreign fixtures cannot be unpacked\n");
		return 0;
	}
	char p[512];
	snprintf(p, sizeof p, "%s/mdraid-1.img.xz", rk_test_fixtures());
	if (access(p, R_OK) != 0) {
		printf("SKIP: no foreign fixtures at %s\n", rk_test_fixtures());
		return 0;
	}
	return 1;
}

/* blkid types whose metadata raidkit reads into arrays (rk_fmt.h). */
static int read_natively(const char *type)
{
	return !strcmp(type, "linux_raid_member") || !strcmp(type, "ddf_raid_member") || !strcmp(type, "isw_raid_member");
}

START_TEST(t_probe_fixtures)
{
	if (!have_fixtures())
		return;
	for (size_t i = 0; i < NFIX; i++) {
		char img[512], bl[512], type[128], usage[64], version[64], uuid[128], label[128];
		ck_assert_msg(rk_test_unpack_fixture(fixtures[i], img, sizeof img), "unpack %s", fixtures[i]);
		snprintf(bl, sizeof bl, "%s/%s.blkid", rk_test_fixtures(), fixtures[i]);
		blkid_value(bl, "ID_FS_TYPE", type, sizeof type);
		blkid_value(bl, "ID_FS_USAGE", usage, sizeof usage);
		blkid_value(bl, "ID_FS_VERSION", version, sizeof version);
		blkid_value(bl, "ID_FS_UUID_ENC", uuid, sizeof uuid);
		blkid_value(bl, "ID_FS_LABEL_ENC", label, sizeof label);
		struct rk_probe_result r;
		rk_err e = rk_probe_path(img, &r);
		ck_assert_msg(e == RK_OK, "%s: %s", fixtures[i], rk_errmsg());
		ck_assert_msg(r.found, "%s: nothing found", fixtures[i]);
		ck_assert_str_eq(r.type, type);
		ck_assert_str_eq(r.usage, usage);
		ck_assert_str_eq(r.version, version);
		/* The bytes blkid found (a DDF GUID is binary), as ID_FS_*_ENC has them. */
		udev_decode(uuid);
		udev_decode(label);
		ck_assert_str_eq(r.uuid, uuid);
		ck_assert_str_eq(r.label, label);
		HAS(r.what, type);
		const char *n[] = { img };
		struct rk_discovery *d = disc(n, 1, NULL);
		if (read_natively(type)) {
			/* A format raidkit reads: an array of that origin (one
			 * member of it), or foreign with the reason its metadata
			 * is not usable. */
			if (d->narrays == 1)
				ck_assert_uint_ne(d->arrays[0].sb->origin, RK_ORIGIN_RAIDKIT);
			else {
				ck_assert_uint_eq(d->nleft, 1);
				ck_assert_int_eq(d->left[0].cls, RK_MEMBER_FOREIGN);
				ck_assert_msg(strstr(d->left[0].reason, "not usable") || strstr(d->left[0].reason, type),
				              "%s: %s", fixtures[i], d->left[0].reason);
			}
		} else {
			/* Discovery calls it foreign and names it. */
			ck_assert_uint_eq(d->narrays, 0);
			ck_assert_uint_eq(d->nleft, 1);
			ck_assert_int_eq(d->left[0].cls, RK_MEMBER_FOREIGN);
			ck_assert_str_eq(d->left[0].foreign_type, type);
			HAS(d->left[0].reason, type);
		}
		rk_discovery_free(d);
		unlink(img);
	}
}
END_TEST

START_TEST(t_probe_md_words)
{
	if (!have_fixtures())
		return;
	char img[512], u[37];
	ck_assert(rk_test_unpack_fixture("mdraid-1", img, sizeof img));
	const char *n[] = { img };
	struct rk_discovery *d = disc(n, 1, NULL);
	/* md's own array, named by its UUID, its members by md's slots */
	ck_assert_uint_eq(d->narrays, 1);
	uuid_unparse_lower(d->arrays[0].uuid, u);
	ck_assert_str_eq(u, "77e61baf-c0b5-d7d0-39cf-575b64d4878c");
	ck_assert_str_eq(rk_view_origin_name(d->arrays[0].sb), "md 1.2");
	rk_discovery_free(d);
}
END_TEST

START_TEST(t_probe_native_and_fs)
{
	struct rk_sb *t = new_array(1, 0, 0, 2, "nat");
	write_member("a", t, 0, 4);
	struct rk_probe_result r;
	ck_assert_int_eq(rk_probe_path(rk_test_path("a"), &r), RK_OK);
	ck_assert_int_eq(r.found, 1);
	ck_assert_str_eq(r.type, "raidkit");
	ck_assert_str_eq(r.label, "nat");
	char u[37];
	uuid_unparse_lower(t->array_uuid, u);
	ck_assert_str_eq(r.uuid, u);
	HAS(r.what, "role 0 of 2");
	write_junk("z", 1 << 20, 0);
	ck_assert_int_eq(rk_probe_path(rk_test_path("z"), &r), RK_OK);
	ck_assert_int_eq(r.found, 0);
	ck_assert_int_ne(rk_probe_path(rk_test_path("nonexistent"), &r), RK_OK);
	/* A file system, when mkfs.ext4 is there. */
	char cmd[600];
	snprintf(cmd, sizeof cmd, "command -v mkfs.ext4 >/dev/null && truncate -s 8M '%s' && "
	         "mkfs.ext4 -q -F -L fslabel '%s' >/dev/null 2>&1", rk_test_path("fs"), rk_test_path("fs"));
	if (system(cmd) != 0) {
		printf("SKIP: mkfs.ext4 unavailable: file system probe not tested\n");
		free(t);
		return;
	}
	ck_assert_int_eq(rk_probe_path(rk_test_path("fs"), &r), RK_OK);
	ck_assert_int_eq(r.found, 1);
	ck_assert_str_eq(r.type, "ext4");
	ck_assert_str_eq(r.usage, "filesystem");
	ck_assert_str_eq(r.label, "fslabel");
	HAS(r.what, "ext4 file system");
	const char *n[] = { "fs" };
	struct rk_discovery *d = disc(n, 1, NULL);
	ck_assert_int_eq(d->left[0].cls, RK_MEMBER_UNKNOWN);
	HAS(d->left[0].reason, "ext4");
	rk_discovery_free(d);
	free(t);
}
END_TEST

RK_TEST_SUITE("discover", { "discover", 120, rk_test_tmpdir_make, rk_test_tmpdir_remove, 0,
	  RK_TESTS(RK_TEST(t_shuffled_clean), RK_TEST(t_stale_events),
	           RK_TEST(t_stale_marked_faulty), RK_TEST(t_stale_marked_same_events),
	           RK_TEST(t_stale_marked_missing), RK_TEST(t_replaced),
	           RK_TEST(t_rebuilding_not_used), RK_TEST(t_duplicate_uuid),
	           RK_TEST(t_duplicate_same_file), RK_TEST(t_foreign_uuid_filter),
	           RK_TEST(t_unknown_junk), RK_TEST(t_mixed_with_junk),
	           RK_TEST(t_missing_and_failed), RK_TEST(t_levels_tolerance),
	           RK_TEST(t_split_brain_mirror), RK_TEST(t_split_brain_raid5),
	           RK_TEST(t_no_false_split_brain), RK_TEST(t_wiped_primary_and_backup),
	           RK_TEST(t_spare)) },
	{ "probe", 120, rk_test_tmpdir_make, rk_test_tmpdir_remove, 0,
	  RK_TESTS(RK_TEST(t_probe_fixtures), RK_TEST(t_probe_md_words),
	           RK_TEST(t_probe_native_and_fs)) })
