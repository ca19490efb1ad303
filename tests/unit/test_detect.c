/* test_detect.c: raid-recover --detect's engine (libmeta/rk_detect.h) on
 * arrays written here through the stripe engine (rk_vol) from a volume
 * holding a real ext4 file system (mkfs.ext4 -d at test time; SKIP when
 * missing), with no metadata at all on the members: every RAID-5 rotation
 * and RAID-4, RAID-6 with md's and DDF's Q, RAID-1, RAID-10 near/far/offset,
 * RAID-0, linear with members of zeros, missing members, shuffled names, different data starts, an
 * unrelated image among them, and a near-empty volume (ambiguous).  A pass
 * means the detected geometry reads back the volume byte for byte. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rk_detect.h"
#include "rk_dev.h"
#include "rk_geom.h"
#include "rk_vol.h"
#include "helpers/rk_test.h"

#define MEMBER (16ull << 20)

static int have_mkfs(void)
{
	return system("command -v mkfs.ext4 >/dev/null 2>&1") == 0;
}

/* A directory tree of files (random and text) to put in the volume: 8
 * folders of 6 sub-folders, NFILES files over them, 1 to 48 KiB each. */
static void make_tree(const char *dir, uint64_t seed, int nfiles)
{
	char p[700];
	rk_test_rnd_seed(seed);
	for (int d = 0; d < 48; d++) {
		if (d % 6 == 0) {
			snprintf(p, sizeof p, "%s/d%d", dir, d / 6);
			RK_REQUIRE(mkdir(p, 0755) == 0);
		}
		snprintf(p, sizeof p, "%s/d%d/s%d", dir, d / 6, d % 6);
		RK_REQUIRE(mkdir(p, 0755) == 0);
		for (int f = 0; f < nfiles / 48; f++) {
			size_t len = 1024 + (size_t)rk_test_rnd_below(48 * 1024);
			uint8_t *b = malloc(len);
			RK_REQUIRE(b);
			if (f % 2)
				rk_test_fill(b, len);
			else
				for (size_t k = 0; k < len; k++)
					b[k] = (uint8_t)("the quick brown fox jumps over the lazy dog\n"[k % 44]);
			snprintf(p, sizeof p, "%s/d%d/s%d/f%d", dir, d / 6, d % 6, f);
			rk_test_spit(p, b, len);
			free(b);
		}
	}
}

/* The volume file "vol" of SIZE bytes with an ext4 file system holding
 * NFILES files (none: zero but for a few bytes). */
static void make_volume(uint64_t size, int nfiles)
{
	const char *vol = rk_test_path("vol");
	rk_test_make_file(vol, size);
	if (!nfiles) {
		rk_test_write_at(vol, "x", 1, size / 3);
		return;
	}
	char tree[600], cmd[1400];
	snprintf(tree, sizeof tree, "%s/tree", rk_test_tmpdir());
	RK_REQUIRE(mkdir(tree, 0755) == 0);
	make_tree(tree, 42, nfiles);
	snprintf(cmd, sizeof cmd, "mkfs.ext4 -q -F -b 1024 -d '%s' '%s' >/dev/null 2>&1", tree, vol);
	RK_REQUIRE_MSG(system(cmd) == 0, "mkfs.ext4 failed");
}

struct arr {
	int32_t level;
	uint32_t layout;
	uint64_t chunk;
	uint32_t n;
	uint64_t off[8];
	struct rk_geom g;
};

/* Writes the array A from "vol" onto files m0..m{n-1} (each off + MEMBER
 * bytes, data start off), every role through the engine. */
static void write_array(struct arr *a)
{
	RK_REQUIRE(rk_geom_init(&a->g, a->level, a->layout, a->chunk, a->n, MEMBER) == RK_OK);
	rk_dev *devs[8];
	char name[16];
	for (uint32_t r = 0; r < 8; r++) {   /* the folder is shared by the suite's tests */
		snprintf(name, sizeof name, "m%u", r);
		unlink(rk_test_path(name));
	}
	unlink(rk_test_path("junk"));
	for (uint32_t r = 0; r < a->n; r++) {
		snprintf(name, sizeof name, "m%u", r);
		RK_REQUIRE(rk_dev_create(&devs[r], rk_test_path(name), a->off[r] + MEMBER) == RK_OK);
	}
	rk_vol *v;
	RK_REQUIRE(rk_vol_open(&v, &a->g, devs, a->off) == RK_OK);
	size_t vl;
	uint8_t *vd = rk_test_slurp(rk_test_path("vol"), &vl);
	RK_REQUIRE(vl <= a->g.volume_size);
	RK_REQUIRE(rk_vol_write(v, vd, vl, 0) == RK_OK);
	rk_vol_close(v);
	for (uint32_t r = 0; r < a->n; r++)
		rk_dev_close(devs[r]);
	free(vd);
}

/* Reads the volume back through the detected geometry and compares it with
 * "vol": 1 when byte for byte equal. */
static int exports_equal(const struct rk_detect_result *r)
{
	const struct rk_geometry *gg = &r->geom;
	struct rk_geom g;
	if (rk_geom_init(&g, gg->level, gg->layout, gg->chunk, gg->nroles, gg->member_size))
		return 0;
	rk_dev *devs[32] = { 0 };
	uint64_t offs[32];
	for (uint32_t k = 0; k < gg->nroles; k++) {
		offs[k] = gg->roles[k].offset;
		if (gg->roles[k].path)
			RK_REQUIRE(rk_dev_open(&devs[k], gg->roles[k].path, RK_DEV_RDONLY) == RK_OK);
	}
	rk_vol *v;
	int same = 0;
	size_t vl;
	uint8_t *vd = rk_test_slurp(rk_test_path("vol"), &vl);
	if (rk_vol_open(&v, &g, devs, offs) == RK_OK) {
		uint8_t *b = malloc(vl);
		same = vl <= g.volume_size && rk_vol_read(v, b, vl, 0) == RK_OK && !memcmp(b, vd, vl);
		free(b);
		rk_vol_close(v);
	}
	for (uint32_t k = 0; k < gg->nroles; k++)
		rk_dev_close(devs[k]);
	free(vd);
	return same;
}

/* Detects over the member files named in ORDER ("m2", "m0", ... NULL
 * terminated, some perhaps left out or replaced by "junk"). */
static struct rk_detect_result *detect(const char *const *order, const struct rk_detect_hints *h)
{
	char *paths[16] = { 0 };
	uint32_t n = 0;
	for (; order[n]; n++)
		paths[n] = strdup(rk_test_path(order[n]));
	struct rk_detect_result *r = NULL;
	rk_err e = rk_detect_run(paths, n, h, &r);
	RK_REQUIRE_MSG(e == RK_OK, "rk_detect_run: %s", rk_errmsg());
	for (uint32_t k = 0; k < n; k++)
		free(paths[k]);
	/* an answer is never called too sparse: the two exclude each other */
	RK_REQUIRE_MSG(!(r->found && r->sparse), "found, yet too sparse: %s", r->why);
	if (getenv("DETECT_DEBUG")) {   /* for whoever debugs a failure */
		char lay[32];
		fprintf(stderr, "found %d amb %d conf %.2f: %s %s chunk %llu n %u; anchors %u/%u probes %u/%u rows %llu/%llu/%llu: %s\n",
		        r->found, r->ambiguous, r->confidence, rk_level_name(r->geom.level),
		        rk_layout_name(r->geom.level, r->geom.layout, lay, sizeof lay), (unsigned long long)r->geom.chunk,
		        r->geom.nroles, r->anchors_agree, r->anchors_total, r->probes_ok, r->probes_bad,
		        (unsigned long long)r->rows_checked, (unsigned long long)r->rows_nonzero,
		        (unsigned long long)r->rows_consistent, r->why);
		for (uint32_t k = 0; k < r->geom.nroles; k++)
			fprintf(stderr, "  role %u: %s at %llu\n", k, r->geom.roles[k].path ? r->geom.roles[k].path : "-",
			        (unsigned long long)r->geom.roles[k].offset);
		for (uint32_t k = 0; k < r->nalts && k < 4; k++)
			fprintf(stderr, "  alt %s %s chunk %llu n %u score %.2f: %s\n", rk_level_name(r->alts[k].level),
			        rk_layout_name(r->alts[k].level, r->alts[k].layout, lay, sizeof lay),
			        (unsigned long long)r->alts[k].chunk, r->alts[k].members_total, r->alts[k].score, r->alts[k].why_lost);
		uint32_t na = 0;
		for (uint32_t k = 0; k < r->nanchors; k++)
			if (na++ < 12)
				fprintf(stderr, "  anchor %s img %u at %llu vol %llu %s\n", r->anchors[k].what, r->anchors[k].image,
				        (unsigned long long)r->anchors[k].image_off, (unsigned long long)r->anchors[k].volume_off,
				        r->anchors[k].agrees ? "agrees" : "");
		fprintf(stderr, "  %u anchors\n", r->nanchors);
	}
	return r;
}

/* The ext4 volume every array of the suite carries: made once (mkfs.ext4
 * -d is the slow part), copied into each test's folder. */
#define VOLUME (15ull << 20)
static char shared_vol[512];

/* Whether the suite's volume was made; says SKIP with the reason if not. */
static int have_vol(void)
{
	if (!shared_vol[0])
		printf("SKIP: mkfs.ext4 not installed\n");
	return shared_vol[0] != 0;
}

static void suite_setup(void)
{
	rk_test_tmpdir_make();
	if (!have_mkfs())
		return;
	make_volume(VOLUME, 240);
	snprintf(shared_vol, sizeof shared_vol, "/tmp/rk-detect-vol.%d", (int)getpid());
	rk_test_copy_file(rk_test_path("vol"), shared_vol);
}

static void suite_teardown(void)
{
	if (shared_vol[0])
		unlink(shared_vol);
	rk_test_tmpdir_remove();
}

/* Builds, detects over the members in a shuffled order (roles REMOVE left
 * out, -1 none; JUNK adds an unrelated image), checks the answer. */
static void roundtrip(struct arr a, int remove1, int remove2, int junk)
{
	if (!have_vol())
		return;
	rk_test_copy_file(shared_vol, rk_test_path("vol"));
	write_array(&a);
	static char names[10][16];
	const char *order[12];
	uint32_t k = 0;
	for (uint32_t i = 0; i < a.n; i++) {
		uint32_t r = (i * 3 + 1) % a.n;   /* shuffled */
		if (a.n % 3 == 0)
			r = a.n - 1 - i;
		if ((int)r == remove1 || (int)r == remove2)
			continue;
		snprintf(names[k], sizeof names[k], "m%u", r);
		order[k] = names[k];
		k++;
	}
	if (junk) {
		uint8_t *j = rk_test_random_bytes(1 << 20, 7);
		rk_test_make_file(rk_test_path("junk"), a.off[0] + MEMBER);
		rk_test_write_at(rk_test_path("junk"), j, 1 << 20, 3 << 20);
		free(j);
		order[k++] = "junk";
	}
	order[k] = NULL;
	struct rk_detect_result *r = detect(order, NULL);
	char lay[32];
	RK_REQUIRE_MSG(r->found, "level %s %s chunk %llu: not found: %s", rk_level_name(a.level),
	               rk_layout_name(a.level, a.layout, lay, sizeof lay), (unsigned long long)a.chunk, r->why);
	RK_REQUIRE_MSG(exports_equal(r), "level %s %s: detected %s %s chunk %llu n %u: volume differs",
	               rk_level_name(a.level), rk_layout_name(a.level, a.layout, lay, sizeof lay),
	               rk_level_name(r->geom.level), rk_layout_name(r->geom.level, r->geom.layout, lay + 16, 16),
	               (unsigned long long)r->geom.chunk, r->geom.nroles);
	/* with an unrelated image among them, an equivalent name is accepted
	 * (a RAID-5 read as a RAID-6 whose Q member is missing: the same bytes) */
	RK_REQUIRE(r->geom.nroles == a.n || a.level == 1 || junk);
	RK_REQUIRE(r->missing == (uint32_t)((remove1 >= 0) + (remove2 >= 0)) || a.level == 1 || junk);
	if (junk)
		RK_REQUIRE(r->image_role[k - 1] == -1);
	RK_REQUIRE(r->confidence > 0.5);
	RK_REQUIRE(r->max_read <= RK_DETECT_READ_MAX);
	rk_detect_free(r);
}

static const uint32_t r5_layouts[] = { 0, 1, 2, 3, 4 };

START_TEST(t_raid5_layouts)
{
	struct arr a = { 5, r5_layouts[_i], 64 * 1024, 4, { 0 }, { 0 } };
	roundtrip(a, -1, -1, 0);
}
END_TEST

START_TEST(t_raid4)
{
	struct arr a = { 4, RK_ALG_PARITY_N, 32 * 1024, 3, { 0 }, { 0 } };
	roundtrip(a, -1, -1, 0);
}
END_TEST

static const uint32_t r6_layouts[] = { 2, 8, 0, 10, 18 };   /* first two: md's Q and DDF's */

START_TEST(t_raid6_layouts)
{
	struct arr a = { 6, r6_layouts[_i], 64 * 1024, 5, { 0 }, { 0 } };
	roundtrip(a, -1, -1, 0);
}
END_TEST

START_TEST(t_raid1)
{
	struct arr a = { 1, 0, 0, 2, { 1 << 20, 1 << 20 }, { 0 } };
	roundtrip(a, -1, -1, 0);
}
END_TEST

static const uint32_t r10_layouts[] = { 0x102, 0x201, 0x10201 };

START_TEST(t_raid10)
{
	struct arr a = { 10, r10_layouts[_i], 64 * 1024, 4, { 0 }, { 0 } };
	roundtrip(a, -1, -1, 0);
}
END_TEST

START_TEST(t_raid0)
{
	struct arr a = { 0, 0, 128 * 1024, 3, { 0 }, { 0 } };
	roundtrip(a, -1, -1, 0);
}
END_TEST

START_TEST(t_raid5_missing)
{
	struct arr a = { 5, RK_ALG_LEFT_SYMMETRIC, 64 * 1024, 4, { 0 }, { 0 } };
	roundtrip(a, 2, -1, 0);
}
END_TEST

/* Two roles gone: nothing left to check parity with, the anchors and the
 * file system (read through P+Q rebuilds) decide.  Data starts that differ
 * per member: the case recover_detect (a 48 MiB ext4, more anchors). */
START_TEST(t_raid6_two_missing_offsets)
{
	struct arr a = { 6, RK_ALG_LEFT_SYMMETRIC, 64 * 1024, 6, { 0 }, { 0 } };
	roundtrip(a, 0, 3, 0);
}
END_TEST

/* Two roles of a RAID-6 gone and an image left out that holds data: with
 * nothing to check parity against, that image may be a missing member (seed
 * 1049: a RAID-4 read as a RAID-6 of 6 with two roles missing, a member
 * left out, confidence 0.98), so the answer is held back, not given; an
 * image of random bytes is taken for junk (recover_detect's case). */
START_TEST(t_raid6_two_missing_left_out)
{
	if (!have_vol())
		return;
	struct arr a = { 6, RK_ALG_LEFT_SYMMETRIC, 64 * 1024, 4, { 0 }, { 0 } };
	rk_test_copy_file(shared_vol, rk_test_path("vol"));
	write_array(&a);
	const char *both[] = { "m3", "m1", NULL }, *with_junk[] = { "m3", "junk", "m1", NULL };
	struct rk_detect_result *r = detect(both, NULL);
	RK_REQUIRE_MSG(r->found && exports_equal(r), "two of four without a third image: %s", r->why);
	rk_detect_free(r);
	uint8_t *j = rk_test_random_bytes(1 << 20, 9);
	rk_test_make_file(rk_test_path("junk"), MEMBER);
	rk_test_write_at(rk_test_path("junk"), j, 1 << 20, 3 << 20);
	r = detect(with_junk, NULL);
	RK_REQUIRE_MSG(r->found && exports_equal(r), "with random bytes beside them: %s", r->why);
	rk_detect_free(r);
	for (size_t k = 0; k < 1 << 20; k++)   /* text: what a member of a file system holds */
		j[k] = (uint8_t)("the quick brown fox jumps over the lazy dog\n"[k % 44]);
	rk_test_write_at(rk_test_path("junk"), j, 1 << 20, 3 << 20);
	free(j);
	r = detect(with_junk, NULL);
	RK_REQUIRE_MSG(!r->found && strstr(r->why, "an image left out may be a missing member"), "with text: %s", r->why);
	rk_detect_free(r);
}
END_TEST

START_TEST(t_raid5_junk_offsets)
{
	struct arr a = { 5, RK_ALG_RIGHT_ASYMMETRIC, 16 * 1024, 4, { 0 }, { 0 } };
	roundtrip(a, -1, -1, 1);
}
END_TEST

/* A linear array whose last members hold only zeros: their order and
 * starts cannot be told, and need not be: every such answer exports the
 * same bytes (compared in full), so it is one answer, not a tie. */
START_TEST(t_linear_zeros)
{
	if (!have_vol())
		return;
	rk_test_copy_file(shared_vol, rk_test_path("vol"));
	struct arr a = { RK_LEVEL_LINEAR, 0, 0, 3, { 0 }, { 0 } };
	write_array(&a);
	const char *order[] = { "m2", "m0", "m1", NULL };
	struct rk_detect_result *r = detect(order, NULL);
	/* m1 and m2 swapped read the same: no tie (the confidence gate may
	 * still hold the answer back; a found one must be the volume) */
	RK_REQUIRE_MSG(!r->ambiguous, "members of zeros made a tie: %s", r->why);
	RK_REQUIRE(!r->found || exports_equal(r));
	rk_detect_free(r);
}
END_TEST

/* A linear array of 3 members of 4 MiB (an ext4 of 1 MiB groups) whose
 * data start at 64 KiB, 869 KiB and 128 KiB, with an unrelated image a
 * little smaller than them: each
 * member's start is found (seeds 2201 and 2280: the size the smaller image
 * gave, or two passes that had not settled, shifted the later members'
 * voted starts, and the export was wrong at 0.92 and 0.89). */
START_TEST(t_linear_offsets)
{
	if (!have_vol())
		return;
	const uint64_t part = 4ull << 20, off[3] = { 64 << 10, 889856, 128 << 10 };
	/* 1 MiB groups without flex_bg: superblock backups and group tables
	 * on every member (groups 1, 3, 5, 7 and 9 keep backups) */
	char cmd[1200];
	const char *vol = rk_test_path("lvol");
	rk_test_make_file(vol, 3 * part);
	snprintf(cmd, sizeof cmd, "mkfs.ext4 -q -F -b 1024 -g 1024 -N 1024 -O ^flex_bg '%s' >/dev/null 2>&1", vol);
	RK_REQUIRE_MSG(system(cmd) == 0, "mkfs.ext4 failed");
	size_t vl;
	uint8_t *vd = rk_test_slurp(vol, &vl);
	RK_REQUIRE(vl >= 3 * part);
	static const char *names[3] = { "m0", "m1", "m2" };
	for (uint32_t r = 0; r < 3; r++) {
		unlink(rk_test_path(names[r]));
		rk_test_make_file(rk_test_path(names[r]), off[r] + part);
		rk_test_write_at(rk_test_path(names[r]), vd + r * part, (size_t)part, off[r]);
	}
	uint8_t *j = rk_test_random_bytes(1 << 20, 9);
	unlink(rk_test_path("junk"));
	rk_test_make_file(rk_test_path("junk"), part - (64 << 10));
	rk_test_write_at(rk_test_path("junk"), j, 1 << 20, 1 << 20);
	free(j);
	const char *order[] = { "m2", "junk", "m0", "m1", NULL };
	struct rk_detect_result *r = detect(order, NULL);
	RK_REQUIRE_MSG(r->found, "not found: %s", r->why);
	RK_REQUIRE(r->geom.level == RK_LEVEL_LINEAR && r->geom.nroles == 3);
	for (uint32_t k = 0; k < 3; k++) {   /* images m2 (2), m0 (0), m1 (1) at order 0, 2, 3 */
		uint32_t i = k == 0 ? 2 : k == 1 ? 3 : 0;
		RK_REQUIRE_MSG(r->image_role[i] == (int32_t)k, "image %u: role %d, want %u", i, r->image_role[i], k);
		RK_REQUIRE_MSG(r->geom.roles[k].offset == off[k], "role %u: data from %llu, want %llu", k,
		               (unsigned long long)r->geom.roles[k].offset, (unsigned long long)off[k]);
	}
	RK_REQUIRE(r->image_role[1] == -1);
	rk_detect_free(r);
	free(vd);
}
END_TEST

/* "vol": the shared volume made again as an ext4 of 1 MiB groups with the
 * mkfs.ext4 options OPTS; 0 (SKIP printed) without mkfs.ext4. */
static int remake_vol(const char *opts)
{
	if (!have_vol())
		return 0;
	char cmd[1400];
	rk_test_copy_file(shared_vol, rk_test_path("vol"));
	snprintf(cmd, sizeof cmd, "mkfs.ext4 -q -F -b 1024 -g 1024 %s '%s' 15M >/dev/null 2>&1", opts, rk_test_path("vol"));
	RK_REQUIRE_MSG(system(cmd) == 0, "mkfs.ext4 %s failed", opts);
	return 1;
}

/* A RAID-1 of 5 whose copies start 3251200 bytes in (seed 1415: a RAID-1
 * of 7 at that start read as a RAID-10 o2 of two of its images, the rest
 * left out): every copy is found as a member, and the volume read back. */
START_TEST(t_raid1_copies_odd_start)
{
	/* a superblock copy in every group of 1 MiB: anchors enough on every copy */
	if (!remake_vol("-O ^sparse_super,^resize_inode"))
		return;
	struct arr a = { 1, 0, 0, 5, { 3251200, 3251200, 3251200, 3251200, 3251200 }, { 0 } };
	write_array(&a);
	const char *order[] = { "m3", "m0", "m4", "m1", "m2", NULL };
	struct rk_detect_result *r = detect(order, NULL);
	RK_REQUIRE_MSG(r->found && exports_equal(r), "not found or another volume: %s", r->why);
	RK_REQUIRE_MSG(r->geom.level == 1 && r->geom.nroles == 5 && r->missing == 0, "level %d, %u roles, %u missing",
	               r->geom.level, r->geom.nroles, r->missing);
	for (uint32_t k = 0; k < 5; k++)
		RK_REQUIRE(r->geom.roles[k].offset == 3251200);
	rk_detect_free(r);
}
END_TEST

/* A RAID-1 of 4 at 1 MiB whose file system has few anchors (seed 2302: a
 * RAID-1 of 5 with 5 anchors was held back as a RAID-10 of one image, the
 * copies left out): superblock backups in groups 1, 3, 5, 7 and 9 only,
 * over the old volume's files (no discard).  The copies are told by
 * comparing them with the volume all over, and the answer is the RAID-1. */
START_TEST(t_raid1_sparse_copies)
{
	if (!remake_vol("-E nodiscard"))
		return;
	struct arr a = { 1, 0, 0, 4, { 1 << 20, 1 << 20, 1 << 20, 1 << 20 }, { 0 } };
	write_array(&a);
	const char *order[] = { "m2", "m0", "m3", "m1", NULL };
	struct rk_detect_result *r = detect(order, NULL);
	RK_REQUIRE_MSG(r->found && exports_equal(r), "not found or another volume: %s", r->why);
	RK_REQUIRE_MSG(r->geom.level == 1 && r->geom.nroles == 4 && r->missing == 0, "level %d, %u roles, %u missing",
	               r->geom.level, r->geom.nroles, r->missing);
	RK_REQUIRE_MSG(r->anchors_total < 12 * 4, "%u anchors over 4 images: not a sparse case", r->anchors_total);
	rk_detect_free(r);
}
END_TEST

/* "vol": a disk of VOLUME bytes with a partition table (sfdisk LABEL "dos"
 * or "gpt"): an empty partition 1 of 2 MiB at 1 MiB, then partition 2 at
 * 3 MiB to the end holding an ext4 of the suite's files (1 MiB groups,
 * a superblock in each); 0 (SKIP printed)
 * without mkfs.ext4 or sfdisk. */
static int partitioned_vol(const char *label)
{
	if (!shared_vol[0] || system("command -v sfdisk >/dev/null 2>&1")) {
		printf("SKIP: mkfs.ext4 or sfdisk not installed\n");
		return 0;
	}
	const int gpt = !strcmp(label, "gpt");
	const uint64_t p2 = 6144, n2 = VOLUME / 512 - p2 - 34;   /* room for a GPT's backup */
	char cmd[1600];
	const char *vol = rk_test_path("vol"), *fs = rk_test_path("p2");
	unlink(vol);
	rk_test_make_file(vol, VOLUME);
	snprintf(cmd, sizeof cmd, "printf 'label: %s\\nstart=2048, size=4096, type=%s\\nstart=%llu, size=%llu, type=%s\\n' | "
	         "sfdisk -q '%s' >/dev/null 2>&1", label, gpt ? "EBD0A0A2-B9E5-4433-87C0-68B6B72699C7" : "c",
	         (unsigned long long)p2, (unsigned long long)n2, gpt ? "0FC63DAF-8483-4772-8E79-3D69D8477DE4" : "83", vol);
	RK_REQUIRE_MSG(system(cmd) == 0, "sfdisk failed: %s", cmd);
	unlink(fs);
	rk_test_make_file(fs, n2 * 512);
	/* a superblock copy in each group of 1 MiB: an anchor per group */
	snprintf(cmd, sizeof cmd, "mkfs.ext4 -q -F -b 1024 -g 1024 -O ^sparse_super,^resize_inode -d '%s/tree' '%s' >/dev/null 2>&1",
	         rk_test_tmpdir(), fs);
	RK_REQUIRE_MSG(system(cmd) == 0, "mkfs.ext4 failed");
	size_t len;
	uint8_t *b = rk_test_slurp(fs, &len);
	rk_test_write_at(vol, b, len, p2 * 512);
	free(b);
	return 1;
}

/* A RAID-0 of a partitioned disk whose file system is in its second
 * partition (the forensics "multiple" sample: btrfs, ext4, exFAT and NTFS
 * in four partitions; seeds 2329 and 2335 held back or tied): the ext4's
 * anchors count from partition 2's start, not from the first partition's,
 * and the volume is read back.  _i: MBR, GPT. */
START_TEST(t_partitioned)
{
	if (!partitioned_vol(_i ? "gpt" : "dos"))
		return;
	struct arr a = { 0, 0, 32 * 1024, 3, { 0, 65536, 0 }, { 0 } };
	write_array(&a);
	const char *order[] = { "m1", "m2", "m0", NULL };
	struct rk_detect_result *r = detect(order, NULL);
	RK_REQUIRE_MSG(r->found && exports_equal(r), "not found or another volume: %s", r->why);
	RK_REQUIRE_MSG(r->anchors_agree >= 10 && r->anchors_agree * 10 >= r->anchors_total * 9,
	               "%u of %u anchors agree", r->anchors_agree, r->anchors_total);
	rk_detect_free(r);
}
END_TEST

/* A RAID-0 of an unpartitioned ext4 beside an unrelated partitioned disk
 * holding an ext4 of its own, the disk scanned first (seed 2447: a sample
 * disk's MBR and ext4 put a RAID-4's ext4 anchors 1 MiB off, and its
 * superblock was learnt instead of the array's): the array's superblock
 * is learnt and its anchors count from the volume's start. */
START_TEST(t_partitioned_disk_beside)
{
	if (!partitioned_vol("dos"))
		return;
	RK_REQUIRE(rename(rk_test_path("vol"), rk_test_path("disk")) == 0);
	char opts[700];   /* a superblock per MiB: anchors on every member; files: predictions */
	snprintf(opts, sizeof opts, "-O ^sparse_super,^resize_inode -d '%s/tree'", rk_test_tmpdir());
	if (!remake_vol(opts))
		return;
	struct arr a = { 0, 0, 64 * 1024, 3, { 0 }, { 0 } };
	write_array(&a);
	const char *order[] = { "disk", "m1", "m2", "m0", NULL };
	struct rk_detect_result *r = detect(order, NULL);
	RK_REQUIRE_MSG(r->found && exports_equal(r), "not found or another volume: %s", r->why);
	RK_REQUIRE(r->image_role[0] == -1);
	uint32_t on_members = 0;
	for (uint32_t k = 0; k < r->nanchors; k++)
		if (r->anchors[k].image != 0) {
			on_members++;
			RK_REQUIRE_MSG(r->anchors[k].agrees, "anchor %s on image %u disagrees", r->anchors[k].what, r->anchors[k].image);
		}
	RK_REQUIRE(on_members >= 2);
	rk_detect_free(r);
}
END_TEST

/* A RAID-0 of 3 beside an unrelated image of 2 MiB of random bytes (seed
 * 2216: a 16 MiB sample disk beside a RAID-0 of two 82 MiB members cut
 * the volume stage 1 votes on to 32 MiB, its btrfs anchors lay beyond,
 * and no hypothesis was left): the small image is no member and does not
 * size them. */
START_TEST(t_small_image_beside)
{
	if (!have_vol())
		return;
	rk_test_copy_file(shared_vol, rk_test_path("vol"));
	struct arr a = { 0, 0, 128 * 1024, 3, { 65536, 65536, 65536 }, { 0 } };
	write_array(&a);
	uint8_t *j = rk_test_random_bytes(2 << 20, 11);
	unlink(rk_test_path("junk"));
	rk_test_spit(rk_test_path("junk"), j, 2 << 20);
	free(j);
	const char *order[] = { "junk", "m1", "m2", "m0", NULL };
	struct rk_detect_result *r = detect(order, NULL);
	RK_REQUIRE_MSG(r->found && exports_equal(r), "not found or another volume: %s", r->why);
	RK_REQUIRE(r->image_role[0] == -1 && r->geom.nroles == 3);
	rk_detect_free(r);
}
END_TEST

/* A RAID-5 of 5 whose fifth member's data starts at 2305 KiB, where no
 * other member's does and md never puts it: the search leaves it out
 * with its role missing, and the block its parity rebuilds is found in
 * it at that start (seed 2405: a RAID-5 of 11, the left-out member at 2
 * MiB, the others at 0, 4 KiB, 128 KiB and 1 MiB). */
START_TEST(t_raid5_odd_start)
{
	struct arr a = { 5, RK_ALG_LEFT_SYMMETRIC, 64 * 1024, 5, { 0, 0, 0, 0, 2305 * 1024 }, { 0 } };
	roundtrip(a, -1, -1, 0);
}
END_TEST

/* A RAID-1 of 3 followed on each disk by random bytes of its own length:
 * all three copies are members and the volume reads back.  (Seed 2752, a
 * RAID-1 of 3 held back as a RAID-10 of two of them because the RAID-1
 * of all three failed its mirror rows in such bytes, is not reproduced
 * here: this array is found by the code before that change too.) */
START_TEST(t_raid1_trailing_differs)
{
	if (!remake_vol("-E nodiscard"))
		return;
	struct arr a = { 1, 0, 0, 3, { 65536, 65536, 65536 }, { 0 } };
	write_array(&a);
	static const char *names[3] = { "m0", "m1", "m2" };
	static const size_t trail[3] = { 1024 << 10, 1600 << 10, 1900 << 10 };
	for (uint32_t r = 0; r < 3; r++) {   /* behind each copy: its own random bytes, of its own length */
		uint8_t *j = rk_test_random_bytes(trail[r], 30 + r);
		rk_test_write_at(rk_test_path(names[r]), j, trail[r], 65536 + MEMBER);
		free(j);
	}
	const char *order[] = { "m2", "m0", "m1", NULL };
	struct rk_detect_result *r = detect(order, NULL);
	RK_REQUIRE_MSG(r->found && exports_equal(r), "not found or another volume: %s", r->why);
	RK_REQUIRE_MSG(r->geom.nroles == 3 && r->missing == 0, "level %d, %u roles", r->geom.level, r->geom.nroles);
	rk_detect_free(r);
}
END_TEST

/* "vol": an ext4 of 4 KiB blocks and SIZE bytes made by mkfs.ext4 -d from
 * a tree of NFILES files (make_tree, SEED) in the folder TREE of the test
 * folder. */
static void make_ext4_4k(const char *tree, uint64_t seed, int nfiles, uint64_t size)
{
	char dir[600], cmd[1400];
	snprintf(dir, sizeof dir, "%s/%s", rk_test_tmpdir(), tree);
	RK_REQUIRE(mkdir(dir, 0755) == 0);
	make_tree(dir, seed, nfiles);
	rk_test_make_file(rk_test_path("vol"), size);
	snprintf(cmd, sizeof cmd, "mkfs.ext4 -q -F -b 4096 -d '%s' '%s' >/dev/null 2>&1", dir, rk_test_path("vol"));
	RK_REQUIRE_MSG(system(cmd) == 0, "mkfs.ext4 failed");
}

/* A RAID-10 near of 4 whose members start at four places, on an ext4 of
 * 4 KiB blocks about 70% full: found as the RAID-10 of 4 with no role
 * missing.  (The shape of seed 2731, which the search read as the RAID-0
 * of one member of each pair and copies_of_members now mends; this
 * volume is found right by the search itself, before that change too.) */
START_TEST(t_raid10_starts_differ)
{
	if (!have_vol())
		return;
	make_ext4_4k("tree10", 9, 864, 2 * MEMBER - (1 << 20));
	struct arr a = { 10, 0x102, 256 * 1024, 4, { 131072, 4096, 1 << 20, 9728 }, { 0 } };
	write_array(&a);
	const char *order[] = { "m2", "m0", "m3", "m1", NULL };
	struct rk_detect_result *r = detect(order, NULL);
	RK_REQUIRE_MSG(r->found && exports_equal(r), "not found or another volume: %s", r->why);
	RK_REQUIRE_MSG(r->geom.level == 10 && r->geom.nroles == 4 && r->missing == 0, "level %d, %u roles, %u missing",
	               r->geom.level, r->geom.nroles, r->missing);
	rk_detect_free(r);
}
END_TEST

/* Two copies (a RAID-10 near of 2: each member the whole volume) at 1
 * MiB, one followed by 1.7 MiB more than the other (seed 2715): both are
 * used, as a RAID-1 or any reading that exports the volume, not the
 * longer one alone while the other holds anchors. */
START_TEST(t_two_copies_lengths_differ)
{
	if (!have_vol())
		return;
	/* an ext4 of one group (4 KiB blocks): its one superblock the only
	 * anchor on each copy, none learnt from a whole file system */
	make_ext4_4k("tree4k", 7, 96, VOLUME);
	struct arr a = { 10, 0x102, 4096, 2, { 1 << 20, 1 << 20 }, { 0 } };
	write_array(&a);
	uint8_t *j = rk_test_random_bytes(1700 << 10, 31);
	rk_test_write_at(rk_test_path("m1"), j, 1700 << 10, (1 << 20) + MEMBER);
	free(j);
	const char *order[] = { "m1", "m0", NULL };
	struct rk_detect_result *r = detect(order, NULL);
	RK_REQUIRE_MSG(r->found && exports_equal(r), "not found or another volume: %s", r->why);
	RK_REQUIRE_MSG(r->image_role[0] >= 0 && r->image_role[1] >= 0, "images used: %d %d", r->image_role[0],
	               r->image_role[1]);
	rk_detect_free(r);
}
END_TEST

/* "other": an ext4 of 1 KiB blocks, 4 MiB groups and 24 MiB, another
 * file system than "vol" (its own UUID; its backup superblocks in groups
 * 1, 3 and 5); cut to bytes FROM to FROM + LEN when LEN (a slice of an
 * unrelated image). */
static int make_other(uint64_t from, uint64_t len)
{
	const char *o = rk_test_path("other");
	char cmd[800];
	unlink(o);
	rk_test_make_file(o, 24ull << 20);
	snprintf(cmd, sizeof cmd, "mkfs.ext4 -q -F -b 1024 -g 4096 -U 0badc0de-0000-4000-8000-000000000001 '%s' >/dev/null 2>&1", o);
	RK_REQUIRE_MSG(system(cmd) == 0, "mkfs.ext4 failed");
	if (len) {
		size_t n;
		uint8_t *b = rk_test_slurp(o, &n);
		RK_REQUIRE(from + len <= n);
		unlink(o);
		rk_test_spit(o, b + from, len);
		free(b);
	}
	return 1;
}

/* The one member of a RAID-10 near of 2 beside the last 16 MiB of
 * another ext4 (seed 2298: a slice of a forensic sample): the slice holds
 * that file system's backup superblocks of groups 3 and 5 (none that a
 * reading could take for the volume's: an 8 MiB group 1 might be) but no
 * whole file system, so the member alone is the answer.  Beside the
 * whole other ext4 instead, the answer is held back: either image may be
 * the array (seed 2650). */
START_TEST(t_foreign_slice_beside)
{
	if (!have_vol())
		return;
	rk_test_copy_file(shared_vol, rk_test_path("vol"));
	struct arr a = { 10, 0x102, 64 * 1024, 2, { 4096, 4096 }, { 0 } };
	write_array(&a);
	make_other(8ull << 20, 16ull << 20);
	const char *order[] = { "other", "m0", NULL };
	struct rk_detect_result *r = detect(order, NULL);
	RK_REQUIRE_MSG(r->found && exports_equal(r), "not found or another volume: %s", r->why);
	RK_REQUIRE(r->image_role[0] == -1 && r->image_role[1] >= 0);
	rk_detect_free(r);
	make_other(0, 0);
	r = detect(order, NULL);
	RK_REQUIRE_MSG(!r->found, "the one image named the array beside a whole other file system: %s", r->why);
	rk_detect_free(r);
}
END_TEST

/* A RAID-5 of 5 with a member gone, beside a whole ext4 of another UUID
 * named first (seed 2427: a RAID-10 of 11 beside a plain ext4 image): the
 * array's superblocks, on two members (groups 0 and 1: chunks 0 and 128),
 * are learnt rather than the plain image's on one, and no member of the
 * array holds a whole other file system, so that is not taken for the
 * missing member and the answer stands. */
START_TEST(t_foreign_fs_not_missing_member)
{
	if (!have_vol())
		return;
	rk_test_copy_file(shared_vol, rk_test_path("vol"));
	struct arr a = { 5, RK_ALG_LEFT_SYMMETRIC, 64 * 1024, 5, { 0 }, { 0 } };
	write_array(&a);
	make_other(0, 0);
	const char *order[] = { "other", "m2", "m0", "m4", "m3", NULL };
	struct rk_detect_result *r = detect(order, NULL);
	RK_REQUIRE_MSG(r->found && exports_equal(r), "not found or another volume: %s", r->why);
	RK_REQUIRE(r->image_role[0] == -1 && r->missing == 1);
	rk_detect_free(r);
}
END_TEST

/* The one member left of a RAID-10 offset of 2 (role 0: the volume in
 * order) beside an image of zeros as long (seed 2553): readings that
 * append the zeros (linear, or striped in large chunks) export the same
 * bytes over the file system and tie; the answer is the one whose volume
 * fits the file system, not the longest, and readings of the member as
 * a RAID-5 of 2 (each P block a copy of its data) are the same answer. */
START_TEST(t_member_beside_zeros)
{
	if (!have_vol())
		return;
	rk_test_copy_file(shared_vol, rk_test_path("vol"));
	struct arr a = { 10, 0x10201, 64 * 1024, 2, { 1 << 20, 1 << 20 }, { 0 } };
	write_array(&a);
	unlink(rk_test_path("zeros"));
	rk_test_make_file(rk_test_path("zeros"), MEMBER);
	const char *order[] = { "zeros", "m0", NULL };
	struct rk_detect_result *r = detect(order, NULL);
	RK_REQUIRE_MSG(r->found && exports_equal(r), "not found or another volume: %s", r->why);
	RK_REQUIRE_MSG(r->image_role[0] == -1 && r->geom.volume_size <= MEMBER, "zeros used: %d, volume %llu",
	               r->image_role[0], (unsigned long long)r->geom.volume_size);
	rk_detect_free(r);
}
END_TEST

/* A whole ext4 image beside the two members left of a RAID-4 of 3 whose
 * first role is gone, its volume text with no file system to anchor
 * (seed 2457: a vfat whose boot sector went with that role): the ext4
 * image read as the one member of a mirror explains none of the other
 * two images' data, so it is not named the array. */
START_TEST(t_plain_fs_beside_array)
{
	if (!have_vol())
		return;
	size_t len = 15u << 20;
	char *t = malloc(len);
	RK_REQUIRE(t);
	for (size_t k = 0; k < len; k++)
		t[k] = "Lorem ipsum dolor sit amet, consectetur adipiscing elit.\n"[k % 57];
	unlink(rk_test_path("vol"));
	rk_test_spit(rk_test_path("vol"), t, len);
	free(t);
	struct arr a = { 4, RK_ALG_PARITY_N, 64 * 1024, 3, { 0 }, { 0 } };
	write_array(&a);
	char cmd[1400];   /* the plain image: an ext4 with files (predictions enough for an answer) */
	unlink(rk_test_path("other"));
	rk_test_make_file(rk_test_path("other"), 24ull << 20);
	snprintf(cmd, sizeof cmd, "mkfs.ext4 -q -F -b 1024 -d '%s/tree' '%s' >/dev/null 2>&1", rk_test_tmpdir(),
	         rk_test_path("other"));
	RK_REQUIRE_MSG(system(cmd) == 0, "mkfs.ext4 failed");
	const char *order[] = { "m2", "other", "m1", NULL };
	struct rk_detect_result *r = detect(order, NULL);
	RK_REQUIRE_MSG(!r->found, "found %s of %u roles, the plain image in role %d", rk_level_name(r->geom.level),
	               r->geom.nroles, r->image_role[1]);
	rk_detect_free(r);
}
END_TEST

/* A RAID-10 far of 2 whose members' data starts at 128 KiB and 2 MiB
 * (seeds 2323, 2512): the member size first guessed from the whole image
 * moves the far copies' places, so their votes for the starts are left
 * out until the near copies have placed the members. */
START_TEST(t_raid10_far_starts)
{
	struct arr a = { 10, 0x201, 64 * 1024, 2, { 131072, 2 << 20 }, { 0 } };
	roundtrip(a, -1, -1, 0);
}
END_TEST

/* With a role missing, parity cannot tell RAID-5 layouts apart: a RAID-5
 * of 3 with its first role gone, each md rotation (seed 1377: left-
 * asymmetric read as left-symmetric with the images swapped, the anchors
 * on P blocks counted for the wrong reading only). */
START_TEST(t_raid5_of3_first_missing)
{
	struct arr a = { 5, (uint32_t)_i, 512 * 1024, 3, { 0 }, { 0 } };
	roundtrip(a, 0, -1, 0);
}
END_TEST

/* A volume with almost nothing on it cannot tell its geometry. */
START_TEST(t_near_empty)
{
	struct arr a = { 0, 0, 64 * 1024, 3, { 0 }, { 0 } };
	make_volume(VOLUME, 0);
	write_array(&a);
	const char *order[] = { "m1", "m2", "m0", NULL };
	struct rk_detect_result *r = detect(order, NULL);
	RK_REQUIRE_MSG(!r->found, "found a geometry in an empty volume: %s", r->why);
	/* and it says why: the evidence counted against what an answer needs */
	RK_REQUIRE_MSG(r->sparse && !strncmp(r->why, "too sparse to tell: ", 20) && strstr(r->why, "(12 needed)"),
	               "not called too sparse: %s", r->why);
	rk_detect_free(r);
}
END_TEST

/* A RAID-0 of two (the level given) beside a third image that holds the
 * first member's bytes 1 MiB further in: the answer leaves out a copy of
 * its own anchored sectors at another place -- redundancy it does not
 * use, so it is held back (seed 2478: a far RAID-10 of five read as a
 * RAID-0 of far and near halves and an image of zeros, at 0.79). */
START_TEST(t_raid0_copy_left_out)
{
	if (!have_vol())
		return;
	rk_test_copy_file(shared_vol, rk_test_path("vol"));
	struct arr a = { 0, 0, 64 * 1024, 2, { 0 }, { 0 } };
	write_array(&a);
	size_t len;
	uint8_t *m0 = rk_test_slurp(rk_test_path("m0"), &len);
	unlink(rk_test_path("shifted"));
	rk_test_make_file(rk_test_path("shifted"), len + (1 << 20));
	rk_test_write_at(rk_test_path("shifted"), m0, len, 1 << 20);
	free(m0);
	const char *order[] = { "m1", "shifted", "m0", NULL };
	struct rk_detect_hints h = { .have_level = 1, .level = 0 };
	struct rk_detect_result *r = detect(order, &h);
	RK_REQUIRE_MSG(!r->found && strstr(r->why, "copy of the answer's blocks"), "found %d: %s", r->found, r->why);
	rk_detect_free(r);
}
END_TEST

/* Hints that contradict: bad usage. */
START_TEST(t_bad_hints)
{
	rk_test_make_file(rk_test_path("a"), 1 << 20);
	char *p[] = { strdup(rk_test_path("a")) };
	struct rk_detect_hints h = { .chunk = 1000 };
	struct rk_detect_result *r = NULL;
	RK_REQUIRE(rk_detect_run(p, 1, &h, &r) == RK_E_INVAL && !r);
	RK_REQUIRE(strstr(rk_errmsg(), "--chunk"));
	free(p[0]);
}
END_TEST

/* Under the sanitizers (several times slower) the first layout each of
 * RAID-5 and RAID-6 (md's Q order; plain make check runs DDF's too):
 * the others run the same code with other numbers. */
#ifdef __SANITIZE_ADDRESS__
#define NLAYOUTS 1
#else
#define NLAYOUTS 5
#endif

RK_TEST_SUITE("detect", { "detect", 300, suite_setup, suite_teardown, 1,
	  RK_TESTS(RK_TEST_LOOP(t_raid5_layouts, 0, NLAYOUTS), RK_TEST(t_raid4), RK_TEST_LOOP(t_raid6_layouts, 0, NLAYOUTS),
	           RK_TEST(t_raid1), RK_TEST(t_raid1_copies_odd_start), RK_TEST_LOOP(t_raid10, 0, 3), RK_TEST(t_raid0), RK_TEST(t_raid5_missing), RK_TEST(t_raid6_two_missing_left_out),
	           RK_TEST(t_raid6_two_missing_offsets), RK_TEST(t_raid5_junk_offsets), RK_TEST(t_linear_zeros), RK_TEST(t_linear_offsets), RK_TEST(t_raid1_sparse_copies), RK_TEST(t_raid1_trailing_differs), RK_TEST_LOOP(t_raid5_of3_first_missing, 0, 4),
	           RK_TEST_LOOP(t_partitioned, 0, 2), RK_TEST(t_raid5_odd_start),
	           RK_TEST(t_partitioned_disk_beside), RK_TEST(t_small_image_beside), RK_TEST(t_two_copies_lengths_differ), RK_TEST(t_raid10_starts_differ),
	           RK_TEST(t_foreign_slice_beside), RK_TEST(t_foreign_fs_not_missing_member), RK_TEST(t_member_beside_zeros), RK_TEST(t_plain_fs_beside_array), RK_TEST(t_raid10_far_starts), RK_TEST(t_raid0_copy_left_out),
	           RK_TEST(t_bad_hints)) },
	{ "empty", 60, rk_test_tmpdir_make, rk_test_tmpdir_remove, 0, RK_TESTS(RK_TEST(t_near_empty)) })
