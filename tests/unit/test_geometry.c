/* test_geometry.c: arrays described by a geometry file (rk_geometry.h):
 * loading (a good file, every field refused with its name), the JSON round
 * trip, mdadm command lines for every level and layout md can express, and
 * the open over images without metadata: by path, by content after
 * renaming, degraded, and with a different data offset per member. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rk_array.h"
#include "rk_discover.h"
#include "rk_geom.h"
#include "rk_geometry.h"
#include "rk_json.h"
#include "helpers/rk_test.h"

static rk_err parse(const char *text, struct rk_geometry *g)
{
	return rk_geometry_parse("g.json", text, strlen(text), g);
}

#define GOOD "{\"found\": true, \"confidence\": 0.97, \"level\": \"5\", \"layout\": \"left-symmetric\", " \
	"\"chunk\": 65536, \"members_total\": 3, \"volume_size\": 2097152, \"evidence\": {\"x\": [1, 2]}, " \
	"\"members\": [{\"role\": 0, \"path\": \"a.img\", \"offset\": 1048576}, " \
	"{\"role\": 2, \"path\": null, \"offset\": 0}, {\"role\": 1, \"path\": \"b.img\", \"offset\": 4096, " \
	"\"fingerprint\": \"00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\"}]}"

START_TEST(t_load_good)
{
	struct rk_geometry g;
	ck_assert_msg(parse(GOOD, &g) == RK_OK, "%s", rk_errmsg());
	ck_assert_int_eq(g.level, 5);
	ck_assert_uint_eq(g.layout, RK_ALG_LEFT_SYMMETRIC);
	ck_assert_uint_eq(g.chunk, 65536);
	ck_assert_uint_eq(g.nroles, 3);
	ck_assert_uint_eq(g.volume_size, 2097152);
	ck_assert_uint_eq(g.member_size, 1048576);   /* derived: two data members hold the volume */
	ck_assert_str_eq(g.roles[0].path, "a.img");
	ck_assert_ptr_null(g.roles[2].path);
	ck_assert_uint_eq(g.roles[1].offset, 4096);
	ck_assert_int_eq(g.roles[1].have_fp, 1);
	ck_assert_uint_eq(g.roles[1].fp[31], 0xff);
	ck_assert_int_eq(g.roles[0].have_fp, 0);
	ck_assert(g.confidence > 0.96 && g.confidence < 0.98);
	rk_geometry_free(&g);
}
END_TEST

/* Each bad file and the words its message must hold. */
static const struct { const char *text, *words; } bad[] = {
	{ "", "not JSON" },
	{ "[1]", "not a JSON object" },
	{ "{\"level\": \"5\"", "not JSON" },
	{ "{} x", "not JSON" },
	{ "{\"found\": false, \"level\": \"5\"}", "found: false" },
	{ "{\"layout\": \"left-symmetric\"}", "level: missing" },
	{ "{\"level\": \"7\"}", "level: '7'" },
	{ "{\"level\": 5.5}", "level: not a string" },
	{ "{\"level\": \"5\", \"chunk\": 65536}", "layout: missing" },
	{ "{\"level\": \"5\", \"layout\": \"n2\"}", "layout: 'n2'" },
	{ "{\"level\": \"5\", \"layout\": [1]}", "layout: value" },
	{ "{\"level\": \"5\", \"layout\": 2, \"chunk\": -1}", "chunk: -1 out of range" },
	{ "{\"level\": \"5\", \"layout\": 2, \"chunk\": \"64K\"}", "chunk: not an integer" },
	{ "{\"level\": \"5\", \"layout\": 2, \"chunk\": 1e9}", "chunk: not an integer" },
	{ "{\"level\": \"5\", \"layout\": 2, \"chunk\": 99999999999999999999}", "chunk" },
	{ "{\"level\": \"5\", \"layout\": 2, \"chunk\": 65536}", "members_total: missing" },
	{ "{\"level\": \"5\", \"layout\": 2, \"chunk\": 65536, \"members_total\": 0}", "members_total: 0" },
	{ "{\"level\": \"5\", \"layout\": 2, \"chunk\": 65536, \"members_total\": 3000}", "members_total: 3000 out of range" },
	{ "{\"level\": \"5\", \"layout\": 2, \"chunk\": 65536, \"members_total\": 3}", "volume_size: missing" },
	{ "{\"level\": \"5\", \"layout\": 2, \"chunk\": 65536, \"members_total\": 3, \"volume_size\": 0}", "volume_size: 0" },
	{ "{\"level\": \"5\", \"layout\": 2, \"chunk\": 65536, \"members_total\": 3, \"volume_size\": 1048576}",
	  "members: missing" },
	{ "{\"level\": \"5\", \"layout\": 2, \"chunk\": 65536, \"members_total\": 3, \"volume_size\": 1048576, "
	  "\"members\": {}}", "members: not an array" },
	{ "{\"level\": \"5\", \"layout\": 2, \"chunk\": 65536, \"members_total\": 1, \"volume_size\": 1048576, "
	  "\"members\": [{\"role\": 0}, {\"role\": 0}]}", "2 entries for members_total 1" },
	{ "{\"level\": \"5\", \"layout\": 2, \"chunk\": 65536, \"members_total\": 3, \"volume_size\": 1048576, "
	  "\"members\": [3]}", "members[0]: not an object" },
	{ "{\"level\": \"5\", \"layout\": 2, \"chunk\": 65536, \"members_total\": 3, \"volume_size\": 1048576, "
	  "\"members\": [{\"role\": 3}]}", "members[0].role: 3 out of range" },
	{ "{\"level\": \"5\", \"layout\": 2, \"chunk\": 65536, \"members_total\": 3, \"volume_size\": 1048576, "
	  "\"members\": [{\"role\": 1}, {\"role\": 1}]}", "members[1].role: role 1 listed twice" },
	{ "{\"level\": \"5\", \"layout\": 2, \"chunk\": 65536, \"members_total\": 3, \"volume_size\": 1048576, "
	  "\"members\": [{\"role\": 1, \"offset\": 100}]}", "members[0].offset: 100 is not a multiple of 512" },
	{ "{\"level\": \"5\", \"layout\": 2, \"chunk\": 65536, \"members_total\": 3, \"volume_size\": 1048576, "
	  "\"members\": [{\"role\": 1, \"offset\": 18446744073709550592}]}", "members[0].offset" },
	{ "{\"level\": \"5\", \"layout\": 2, \"chunk\": 65536, \"members_total\": 3, \"volume_size\": 1048576, "
	  "\"members\": [{\"role\": 1, \"path\": 7}]}", "members[0].path: not a string" },
	{ "{\"level\": \"5\", \"layout\": 2, \"chunk\": 65536, \"members_total\": 3, \"volume_size\": 1048576, "
	  "\"members\": [{\"role\": 1, \"path\": \"a\\u0000b\"}]}", "members[0].path: empty" },
	{ "{\"level\": \"5\", \"layout\": 2, \"chunk\": 65536, \"members_total\": 3, \"volume_size\": 1048576, "
	  "\"members\": [{\"role\": 1, \"path\": \"\"}]}", "members[0].path: empty" },
	{ "{\"level\": \"5\", \"layout\": 2, \"chunk\": 65536, \"members_total\": 3, \"volume_size\": 1048576, "
	  "\"members\": [{\"role\": 1, \"fingerprint\": \"abc\"}]}", "members[0].fingerprint: not 64 hex digits" },
	{ "{\"level\": \"5\", \"layout\": 2, \"chunk\": 65536, \"members_total\": 3, \"volume_size\": 1048576, "
	  "\"members\": [{\"role\": 1, \"fingerprint\": "
	  "\"g0112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\"}]}", "members[0].fingerprint" },
	{ "{\"level\": \"5\", \"layout\": 2, \"chunk\": 65536, \"members_total\": 3, \"volume_size\": 1048576, "
	  "\"confidence\": 2, \"members\": []}", "confidence: not in [0, 1]" },
	{ "{\"level\": \"5\", \"layout\": 2, \"chunk\": 65536, \"members_total\": 3, \"volume_size\": 1048576, "
	  "\"member_size\": 1024, \"members\": []}", "3 members of 1024 bytes" },
	{ "{\"level\": \"5\", \"layout\": 2, \"chunk\": 65536, \"members_total\": 3, \"volume_size\": 1048576, "
	  "\"member_size\": 131072, \"members\": []}", "volume_size: 1048576 bytes, the geometry holds 262144" },
	{ "{\"level\": \"5\", \"layout\": 2, \"chunk\": 65536, \"members_total\": 3, \"volume_size\": 1048576, "
	  "\"member_size\": 18446744073709549568, \"members\": [{\"role\": 0, \"offset\": 1048576}]}", "member_size" },
	{ "{\"level\": \"5\", \"layout\": 2, \"chunk\": 65536, \"members_total\": 1, \"volume_size\": 1048576, "
	  "\"members\": []}", "RAID-5 needs 2 to" },
	{ "{\"level\": \"6\", \"layout\": 2, \"chunk\": 6000, \"members_total\": 4, \"volume_size\": 1048576, "
	  "\"members\": []}", "chunk" },
	{ "{\"level\": \"10\", \"layout\": \"n3\", \"chunk\": 65536, \"members_total\": 2, \"volume_size\": 1048576, "
	  "\"members\": []}", "g.json" },
	{ "{\"level\": \"5\", \"layout\": 2, \"chunk\": 65536, \"members_total\": 3, \"volume_size\": 1048576, "
	  "\"members\": [{\"role\": 0, \"offset\": 18446744073709500000}]}", "members[0].offset" },
};

START_TEST(t_load_bad)
{
	struct rk_geometry g;
	rk_err e = parse(bad[_i].text, &g);
	ck_assert_msg(e != RK_OK, "case %d accepted: %s", _i, bad[_i].text);
	ck_assert_msg(strstr(rk_errmsg(), "g.json") && strstr(rk_errmsg(), bad[_i].words),
	              "case %d: '%s' lacks '%s'", _i, rk_errmsg(), bad[_i].words);
	ck_assert_ptr_null(g.roles);
}
END_TEST

START_TEST(t_load_file)
{
	rk_test_tmpdir_make();
	struct rk_geometry g;
	ck_assert(rk_geometry_load(rk_test_path("none.json"), &g) == RK_E_OPEN);
	ck_assert(strstr(rk_errmsg(), "none.json"));
	rk_test_spit(rk_test_path("g.json"), GOOD, strlen(GOOD));
	ck_assert_msg(rk_geometry_load(rk_test_path("g.json"), &g) == RK_OK, "%s", rk_errmsg());
	ck_assert_uint_eq(g.nroles, 3);
	rk_geometry_free(&g);
	rk_test_tmpdir_remove();
}
END_TEST

/* G written by rk_geometry_json inside an object, as a string (free()). */
static char *to_json(const struct rk_geometry *g)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	ck_assert(f);
	rk_json *j = rk_json_new(f);
	rk_json_obj_begin(j);
	rk_json_kbool(j, "found", 1);
	rk_geometry_json(j, g);
	rk_json_obj_end(j);
	rk_json_free(j);
	fclose(f);
	return text;
}

START_TEST(t_json_round_trip)
{
	struct rk_geometry g, h;
	ck_assert(parse(GOOD, &g) == RK_OK);
	g.roles[0].have_fp = 1;
	for (int i = 0; i < RK_GEOMETRY_FP_LEN; i++)
		g.roles[0].fp[i] = (uint8_t)(i * 7);
	char *text = to_json(&g);
	ck_assert_msg(strstr(text, "\"level\":\"5\"") && strstr(text, "\"layout\":\"left-symmetric\""), "%s", text);
	ck_assert_msg(parse(text, &h) == RK_OK, "%s: %s", text, rk_errmsg());
	ck_assert_int_eq(h.level, g.level);
	ck_assert_uint_eq(h.layout, g.layout);
	ck_assert_uint_eq(h.chunk, g.chunk);
	ck_assert_uint_eq(h.nroles, g.nroles);
	ck_assert_uint_eq(h.volume_size, g.volume_size);
	ck_assert_uint_eq(h.member_size, g.member_size);
	for (uint32_t r = 0; r < g.nroles; r++) {
		ck_assert_uint_eq(h.roles[r].offset, g.roles[r].offset);
		ck_assert_int_eq(h.roles[r].have_fp, g.roles[r].have_fp);
		ck_assert(!g.roles[r].have_fp || !memcmp(h.roles[r].fp, g.roles[r].fp, RK_GEOMETRY_FP_LEN));
		ck_assert((!h.roles[r].path && !g.roles[r].path) || !strcmp(h.roles[r].path, g.roles[r].path));
	}
	free(text);
	rk_geometry_free(&g);
	rk_geometry_free(&h);
}
END_TEST

/* mdadm lines: a geometry in words and the line (or the error's words). */
static const struct { int32_t level; const char *layout; uint64_t chunk, member, off; uint32_t n; int miss;
                      const char *want; } md[] = {
	{ 0, "none", 65536, 1 << 20, 0, 3, -1, "mdadm --build /dev/md0 --level=0 --chunk=64K --raid-devices=3 d0 d1 d2" },
	{ -1, "none", 0, 1 << 20, 0, 2, -1, "mdadm --build /dev/md0 --level=linear --raid-devices=2 d0 d1" },
	{ 0, "none", 65536, 1 << 20, 1 << 20, 3, -1, "!has no data offset" },
	{ 0, "none", 65536, 1 << 20, 0, 3, 1, "!no redundancy" },
	{ 1, "none", 0, 1 << 20, 1 << 20, 2, 1, "mdadm --create /dev/md0 --assume-clean --metadata=1.2 "
	  "--data-offset=1024K --level=1 --size=1024K --raid-devices=2 d0 missing" },
	{ 4, "parity-last", 65536, 1 << 20, 2 << 20, 4, -1, "mdadm --create /dev/md0 --assume-clean --metadata=1.2 "
	  "--data-offset=2048K --level=4 --chunk=64K --size=1024K --raid-devices=4 d0 d1 d2 d3" },
	{ 5, "left-asymmetric", 16384, 1 << 20, 1 << 20, 3, 0, "--level=5 --chunk=16K --layout=left-asymmetric "
	  "--size=1024K --raid-devices=3 missing d1 d2" },
	{ 5, "right-asymmetric", 65536, 1 << 20, 1 << 20, 3, -1, "--layout=right-asymmetric " },
	{ 5, "left-symmetric", 65536, 1 << 20, 1 << 20, 3, -1, "--layout=left-symmetric " },
	{ 5, "right-symmetric", 65536, 1 << 20, 1 << 20, 3, -1, "--layout=right-symmetric " },
	{ 5, "parity-first", 65536, 1 << 20, 1 << 20, 3, -1, "--layout=parity-first " },
	{ 5, "parity-last", 65536, 1 << 20, 1 << 20, 3, -1, "--layout=parity-last " },
	{ 5, "left-symmetric", 65536, 1 << 20, 0, 3, -1, "mdadm --create /dev/md0 --assume-clean --metadata=1.0 "
	  "--level=5 --chunk=64K --layout=left-symmetric --size=1024K --raid-devices=3 d0 d1 d2" },
	{ 5, "left-symmetric", 65536, 1 << 20, 4096, 3, -1, "!at least 8 KiB" },
	{ 5, "left-symmetric", 65536, 1 << 20, 1536, 3, -1, "!multiple of 1 KiB" },
	{ 6, "left-symmetric", 65536, 1 << 20, 1 << 20, 5, -1, "--level=6 --chunk=64K --layout=left-symmetric " },
	{ 6, "ddf-zero-restart", 65536, 1 << 20, 1 << 20, 5, -1, "--layout=ddf-zero-restart " },
	{ 6, "ddf-N-restart", 65536, 1 << 20, 1 << 20, 5, -1, "--layout=ddf-N-restart " },
	{ 6, "ddf-N-continue", 65536, 1 << 20, 1 << 20, 5, -1, "--layout=ddf-N-continue " },
	{ 6, "left-asymmetric-6", 65536, 1 << 20, 1 << 20, 5, -1, "--layout=left-asymmetric-6 " },
	{ 6, "right-asymmetric-6", 65536, 1 << 20, 1 << 20, 5, -1, "--layout=right-asymmetric-6 " },
	{ 6, "left-symmetric-6", 65536, 1 << 20, 1 << 20, 5, -1, "--layout=left-symmetric-6 " },
	{ 6, "right-symmetric-6", 65536, 1 << 20, 1 << 20, 5, -1, "--layout=right-symmetric-6 " },
	{ 6, "parity-first-6", 65536, 1 << 20, 1 << 20, 5, -1, "--layout=parity-first-6 " },
	{ 10, "n2", 65536, 1 << 20, 1 << 20, 4, -1, "--level=10 --chunk=64K --layout=n2 --size=1024K --raid-devices=4 " },
	{ 10, "f2", 65536, 1 << 20, 1 << 20, 4, -1, "--layout=f2 " },
	{ 10, "o3", 65536, 1 << 20, 1 << 20, 4, -1, "--layout=o3 " },
	{ 10, "n2f2", 65536, 1 << 20, 1 << 20, 5, -1, "!not two kinds at once" },
};

START_TEST(t_mdadm_lines)
{
	struct rk_geometry g;
	struct rk_geometry_member roles[8];
	static char names[8][4] = { "d0", "d1", "d2", "d3", "d4", "d5", "d6", "d7" };
	memset(&g, 0, sizeof g);
	memset(roles, 0, sizeof roles);
	g.level = md[_i].level;
	ck_assert(rk_layout_parse(g.level, md[_i].layout, &g.layout) == 0);
	g.chunk = md[_i].chunk;
	g.nroles = md[_i].n;
	g.member_size = md[_i].member;
	g.roles = roles;
	for (uint32_t r = 0; r < g.nroles; r++) {
		roles[r].path = (int)r == md[_i].miss ? NULL : names[r];
		roles[r].offset = md[_i].off;
	}
	char line[512];
	rk_err e = rk_geometry_mdadm_line(&g, line, sizeof line);
	if (md[_i].want[0] == '!') {
		ck_assert_msg(e == RK_E_NOTSUP, "case %d: '%s' accepted", _i, line);
		ck_assert_msg(strstr(rk_errmsg(), md[_i].want + 1), "case %d: '%s'", _i, rk_errmsg());
		return;
	}
	ck_assert_msg(e == RK_OK, "case %d: %s", _i, rk_errmsg());
	ck_assert_msg(strstr(line, md[_i].want), "case %d: '%s' lacks '%s'", _i, line, md[_i].want);
	/* offsets that differ per member: md cannot */
	roles[1].offset += 4096;
	ck_assert(rk_geometry_mdadm_line(&g, line, sizeof line) == RK_E_NOTSUP);
	ck_assert(strstr(rk_errmsg(), "role 1's data starts at"));
}
END_TEST

/* ---- open over images without metadata ---- */

#define NR 5
static const uint64_t offs[NR] = { 0, 4096, 1048576, 12288, 65536 };
static uint8_t *volume;
static uint64_t volume_size, member_size;
static char paths[NR][512];

/* A RAID-6 of NR memory members copied, data areas only, into files at a
 * different offset each (with a tail of junk after the data), and G
 * describing it (paths set, fingerprints when FP). */
static void make_images(struct rk_geometry *g, int fp)
{
	rk_dev *devs[NR];
	struct rk_test_mem_array a = { 6, RK_ALG_LEFT_SYMMETRIC, 16384, NR, 2 * RK_TEST_MIB, 0, NULL };
	rk_test_tmpdir_make();
	rk_test_rnd_seed(42);
	volume = rk_test_mem_array_make(devs, &a, &volume_size);
	memset(g, 0, sizeof *g);
	g->level = 6;
	g->layout = RK_ALG_LEFT_SYMMETRIC;
	g->chunk = 16384;
	g->nroles = NR;
	g->volume_size = volume_size;
	g->roles = calloc(NR, sizeof *g->roles);
	for (uint32_t r = 0; r < NR; r++) {
		struct rk_sb *sb = rk_test_read_sb(devs[r]);
		member_size = g->member_size = sb->data_size;
		snprintf(paths[r], sizeof paths[r], "%s", rk_test_path(r == 0 ? "m0.img" : r == 1 ? "m1.img" : r == 2 ? "m2.img" : r == 3 ? "m3.img" : "m4.img"));
		rk_test_make_file(paths[r], offs[r] + sb->data_size + 8192);
		rk_test_write_at(paths[r], rk_dev_mem_data(devs[r]) + sb->data_offset, sb->data_size, offs[r]);
		uint8_t junk[8192];
		rk_test_fill(junk, sizeof junk);
		rk_test_write_at(paths[r], junk, sizeof junk, offs[r] + sb->data_size);
		g->roles[r].path = strdup(paths[r]);
		g->roles[r].offset = offs[r];
		if (fp)
			ck_assert(rk_geometry_fingerprint(paths[r], offs[r], sb->data_size, g->roles[r].fp) == RK_OK);
		g->roles[r].have_fp = fp;
		free(sb);
	}
	rk_test_close_devs(devs, NR);
}

static void done_images(struct rk_geometry *g)
{
	rk_geometry_free(g);
	free(volume);
	volume = NULL;
	rk_test_tmpdir_remove();
}

/* The array opened over PATHS reads back the volume. */
static void check_volume(const struct rk_geometry *g, char *const *p, uint32_t n)
{
	rk_array *arr;
	ck_assert_msg(rk_geometry_open(&arr, g, p, n) == RK_OK, "%s", rk_errmsg());
	ck_assert_uint_eq(rk_array_size(arr), volume_size);
	uint8_t *buf = malloc(volume_size);
	ck_assert(rk_array_read(arr, buf, volume_size, 0) == RK_OK);
	ck_assert_msg(!memcmp(buf, volume, volume_size), "the volume read differs");
	free(buf);
	ck_assert(rk_array_close(arr) == RK_OK);
}

START_TEST(t_open_by_path)
{
	struct rk_geometry g;
	make_images(&g, 0);
	check_volume(&g, NULL, 0);   /* the file's own paths */
	struct rk_discovery *d;
	ck_assert(rk_geometry_discover(&d, &g, NULL, 0) == RK_OK);
	ck_assert_int_eq(d->arrays[0].state, RK_ASTATE_CLEAN);
	ck_assert_str_eq(d->arrays[0].sb->origin_name, "geometry file");
	ck_assert(strstr(d->arrays[0].roles[2].reason, "by path"));
	/* never written through */
	rk_array *arr;
	ck_assert(rk_array_open(&arr, &d->arrays[0], RK_ARRAY_RDWR) == RK_E_NOTSUP);
	ck_assert_msg(strstr(rk_errmsg(), "geometry file"), "%s", rk_errmsg());
	rk_discovery_free(d);
	/* the same path twice: a duplicate; an image too small for its role:
	 * left out, the role missing */
	char *p[NR + 1] = { paths[0], paths[1], paths[2], paths[3], paths[4], paths[1] };
	rk_test_make_file(paths[3], offs[3] + member_size - 4096);
	ck_assert(rk_geometry_discover(&d, &g, p, NR + 1) == RK_OK);
	ck_assert_int_eq(d->arrays[0].state, RK_ASTATE_DEGRADED);
	ck_assert_int_eq(d->arrays[0].roles[3].cls, RK_MEMBER_MISSING);
	ck_assert_uint_eq(d->nleft, 2);
	ck_assert_msg(strstr(d->left[0].reason, "cannot serve it"), "%s", d->left[0].reason);
	ck_assert_int_eq(d->left[1].cls, RK_MEMBER_DUPLICATE);
	ck_assert_msg(strstr(d->left[1].reason, "already serves"), "%s", d->left[1].reason);
	rk_discovery_free(d);
	done_images(&g);
}
END_TEST

START_TEST(t_open_by_content)
{
	struct rk_geometry g;
	make_images(&g, 1);
	/* the names rotate: m0 holds role 1 now, ..., m4 role 0; plus junk */
	char tmp[600], *p[NR + 1];
	snprintf(tmp, sizeof tmp, "%s", rk_test_path("t.img"));
	ck_assert(rename(paths[0], tmp) == 0);
	for (uint32_t r = 1; r < NR; r++)
		ck_assert(rename(paths[r], paths[r - 1]) == 0);
	ck_assert(rename(tmp, paths[NR - 1]) == 0);
	char junk[600];
	snprintf(junk, sizeof junk, "%s", rk_test_path("junk.img"));
	uint8_t *j = rk_test_random_bytes(3 << 20, 7);
	rk_test_spit(junk, j, 3 << 20);
	free(j);
	p[0] = junk;
	for (uint32_t r = 0; r < NR; r++)
		p[r + 1] = paths[NR - 1 - r];
	check_volume(&g, p, NR + 1);
	struct rk_discovery *d;
	ck_assert(rk_geometry_discover(&d, &g, p, NR + 1) == RK_OK);
	for (uint32_t r = 0; r < NR; r++) {
		ck_assert_str_eq(d->arrays[0].roles[r].path, paths[(r + NR - 1) % NR]);
		ck_assert(strstr(d->arrays[0].roles[r].reason, "by content"));
	}
	ck_assert_uint_eq(d->nleft, 1);
	ck_assert_str_eq(d->left[0].path, junk);
	ck_assert_int_eq(d->left[0].cls, RK_MEMBER_UNKNOWN);
	ck_assert(strstr(d->left[0].reason, "matches no role"));
	rk_discovery_free(d);
	done_images(&g);
}
END_TEST

START_TEST(t_open_degraded)
{
	struct rk_geometry g;
	make_images(&g, 1);
	char *p[NR] = { paths[4], paths[0], paths[2] };
	struct rk_discovery *d;
	ck_assert(rk_geometry_discover(&d, &g, p, 3) == RK_OK);
	ck_assert_int_eq(d->arrays[0].state, RK_ASTATE_DEGRADED);
	ck_assert_int_eq(d->arrays[0].roles[1].cls, RK_MEMBER_MISSING);
	ck_assert_ptr_null(d->arrays[0].roles[3].path);
	rk_discovery_free(d);
	check_volume(&g, p, 3);
	/* one more gone: too few */
	rk_array *arr;
	ck_assert(rk_geometry_open(&arr, &g, p, 2) == RK_E_TOOFEW);
	ck_assert_msg(strstr(rk_errmsg(), "too few"), "%s", rk_errmsg());
	/* a duplicate and a changed image */
	char *q[NR + 1] = { paths[0], paths[1], paths[2], paths[3], paths[4], NULL };
	char dup[600];
	snprintf(dup, sizeof dup, "%s", rk_test_path("dup.img"));
	rk_test_copy_file(paths[2], dup);
	q[5] = dup;
	rk_test_write_at(paths[3], NULL, 4096, offs[3]);   /* a sampled block zeroed */
	ck_assert(rk_geometry_discover(&d, &g, q, NR + 1) == RK_OK);
	ck_assert_int_eq(d->arrays[0].state, RK_ASTATE_DEGRADED);
	ck_assert_uint_eq(d->nleft, 2);
	ck_assert_msg(strstr(d->left[0].reason, "does not have the role's fingerprint"), "%s", d->left[0].reason);
	ck_assert_int_eq(d->left[1].cls, RK_MEMBER_DUPLICATE);
	rk_discovery_free(d);
	done_images(&g);
}
END_TEST

START_TEST(t_fingerprint)
{
	struct rk_geometry g;
	make_images(&g, 1);
	uint8_t fp[RK_GEOMETRY_FP_LEN];
	/* the same area, size 0 = to the end: differs (the junk tail is sampled) */
	ck_assert(rk_geometry_fingerprint(paths[1], offs[1], 0, fp) == RK_OK);
	ck_assert(memcmp(fp, g.roles[1].fp, sizeof fp));
	ck_assert(rk_geometry_fingerprint(paths[1], offs[1], member_size, fp) == RK_OK);
	ck_assert(!memcmp(fp, g.roles[1].fp, sizeof fp));
	ck_assert(rk_geometry_fingerprint(paths[1], offs[1], member_size + 1 + 8192, fp) == RK_E_SHORT);
	ck_assert(rk_geometry_fingerprint(rk_test_path("nothing"), 0, 0, fp) == RK_E_OPEN);
	done_images(&g);
}
END_TEST

RK_TEST_SUITE("geometry",
	{ "load", 30, NULL, NULL, 0,
	  RK_TESTS(RK_TEST(t_load_good), RK_TEST_LOOP(t_load_bad, 0, (int)(sizeof bad / sizeof bad[0])),
	           RK_TEST(t_load_file), RK_TEST(t_json_round_trip)) },
	{ "mdadm", 30, NULL, NULL, 0, RK_TESTS(RK_TEST_LOOP(t_mdadm_lines, 0, (int)(sizeof md / sizeof md[0]))) },
	{ "open", 60, NULL, NULL, 0,
	  RK_TESTS(RK_TEST(t_open_by_path), RK_TEST(t_open_by_content), RK_TEST(t_open_degraded),
	           RK_TEST(t_fingerprint)) })
