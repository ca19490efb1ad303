/* rk_test.h: the set-up every unit suite shares (tests/unit/helpers/, linked
 * into every suite): the suite runner, a temporary folder with member paths,
 * deterministic data, whole files, the foreign fixtures, and arrays made on
 * files (through rk_create) or on memory members (superblocks written
 * directly).  Every function that can fail fails the running Check test
 * (ck_assert); none returns an error. */
#ifndef RK_TEST_H
#define RK_TEST_H

#include <check.h>
#include <stddef.h>
#include <stdint.h>

#include "rk_create.h"
#include "rk_dev.h"
#include "rk_sb.h"

#define RK_TEST_KIB 1024u
#define RK_TEST_MIB (1024u * 1024u)

/* An assertion that names the failed expression (with file and line). */
#define RK_REQUIRE(c) do { if (!(c)) ck_abort_msg("%s:%d: %s", __FILE__, __LINE__, #c); } while (0)
#define RK_REQUIRE_MSG(c, ...) do { if (!(c)) ck_abort_msg(__VA_ARGS__); } while (0)

/* ---- the suite runner ---- */

/* One row of a test table: TEST run once (RK_TEST) or for every loop index
 * in [start, end) (RK_TEST_LOOP; _i in the test). */
struct rk_test_entry {
	const TTest *test;
	int loop_start, loop_end;
};
#define RK_TEST(t) { (t), 0, 1 }
#define RK_TEST_LOOP(t, start, end) { (t), (start), (end) }
#define RK_TEST_END { NULL, 0, 0 }
/* A case's table in place: RK_TESTS(RK_TEST(a), RK_TEST_LOOP(b, 0, 4)). */
#define RK_TESTS(...) ((const struct rk_test_entry[]){ __VA_ARGS__, RK_TEST_END })
#define RK_TEST_CASES_END { NULL, 0, NULL, NULL, 0, NULL }

/* One Check test case: its tests (ending with RK_TEST_END), a timeout in
 * seconds (0: Check's default, CK_DEFAULT_TIMEOUT), and an optional
 * fixture: run around every test in its child (checked), or once around
 * the whole case in the runner's process when run_once is set. */
struct rk_test_case {
	const char *name;
	double timeout;
	void (*setup)(void);
	void (*teardown)(void);
	int run_once;
	const struct rk_test_entry *tests;
};

/* A suite's main(): RK_TEST_SUITE("name", { case }, ...) runs the cases
 * (struct rk_test_case rows) with rk_test_main. */
#define RK_TEST_SUITE(name, ...) \
	int main(void) \
	{ \
		const struct rk_test_case cases_[] = { __VA_ARGS__, RK_TEST_CASES_END }; \
		return rk_test_main(name, cases_); \
	}

/* Builds suite NAME from CASES (ending with a case whose name is NULL),
 * runs it with the output Check's CK_VERBOSITY asks for (default normal)
 * and returns the exit status for main(): EXIT_SUCCESS when every test
 * passed. */
int rk_test_main(const char *name, const struct rk_test_case *cases);

/* ---- the temporary folder ---- */

/* Creates a fresh folder $TMPDIR/rk-test.XXXXXX (TMPDIR default /tmp) and
 * makes it the current one for rk_test_path() and rk_test_members(); the
 * fixture's set-up. */
void rk_test_tmpdir_make(void);
/* Removes the current folder and everything in it; the fixture's
 * teardown.  Safe without a folder. */
void rk_test_tmpdir_remove(void);
/* The current folder. */
const char *rk_test_tmpdir(void);
/* TMPDIR/NAME; the string lives until 16 later calls. */
const char *rk_test_path(const char *name);

/* The member paths TMPDIR/m0.img .. m15.img (RK_TEST_MAX_MEMBERS), valid
 * from rk_test_tmpdir_make() on; the files are not created. */
#define RK_TEST_MAX_MEMBERS 16
char *const *rk_test_members(void);
/* The same paths as rk_create takes them. */
const char *const *rk_test_member_paths(void);

/* ---- deterministic data ---- */

/* The suite's shared pseudo-random stream (xorshift64*): reseeded with
 * rk_test_rnd_seed (0 is replaced by a fixed non-zero seed), so a test that
 * seeds first sees the same values every run. */
void rk_test_rnd_seed(uint64_t seed);
uint64_t rk_test_rnd(void);
/* Uniform in [0, n); 0 when n is 0. */
uint64_t rk_test_rnd_below(uint64_t n);
/* N bytes of the shared stream. */
void rk_test_fill(void *buf, size_t n);
/* N bytes that depend on SEED only (not on the shared stream). */
void rk_test_fill_seeded(void *buf, size_t n, uint64_t seed);
/* A new buffer of LEN bytes filled as rk_test_fill_seeded; free() it. */
uint8_t *rk_test_random_bytes(size_t len, uint64_t seed);

/* ---- whole files ---- */

/* The whole file PATH in a new buffer (one spare byte; free() it); *len its size. */
uint8_t *rk_test_slurp(const char *path, size_t *len);
/* Writes LEN bytes to PATH at offset 0, creating or truncating it. */
void rk_test_spit(const char *path, const void *buf, size_t len);
/* Creates or truncates PATH to SIZE bytes of holes. */
void rk_test_make_file(const char *path, uint64_t size);
/* Writes LEN bytes at OFF of an existing PATH (zeros when BUF is NULL). */
void rk_test_write_at(const char *path, const void *buf, size_t len, uint64_t off);
/* Copies the whole file FROM to TO (created or truncated). */
void rk_test_copy_file(const char *from, const char *to);
/* 1 when files A and B hold the same LEN bytes at OFF, 0 when they differ;
 * fails the test when either is shorter. */
int rk_test_files_equal(const char *a, const char *b, uint64_t off, uint64_t len);
/* The CRC-32 of the whole file. */
uint32_t rk_test_file_crc(const char *path);

/* ---- the foreign fixtures (tests/fixtures/foreign) ---- */

/* $RK_FIXTURES, else tests/fixtures/foreign of the source tree this suite
 * was built from (found from the binary's location or the current
 * folder). */
const char *rk_test_fixtures(void);
/* Unpacks fixture NAME (NAME.img.xz) into the temporary folder, its path
 * into OUT; 0 (after printing "SKIP: why") when xz or the fixture is
 * missing. */
int rk_test_unpack_fixture(const char *name, char *out, size_t cap);

/* ---- arrays made by the Linux md driver (tests/fixtures/kernel) ---- */

/* tests/fixtures/kernel beside rk_test_fixtures(). */
const char *rk_test_kernel_fixtures(void);
/* Unpacks MEMBER ("m0") of FIXTURE ("md12-raid5-ls-4x64k") into the
 * temporary folder, its path into OUT; 0 (after printing "SKIP: why") when
 * xz or the file is missing. */
int rk_test_unpack_kernel(const char *fixture, const char *member, char *out, size_t cap);

/* ---- arrays ---- */

/* Creates an array of LEVEL (layout RK_CREATE_LAYOUT_DEFAULT unless
 * LAYOUT) over the first N member paths with rk_create; CHUNK 0 picks the
 * default, SIZE 0 creates no files (they must exist).  PLAN may be NULL. */
void rk_test_create(int32_t level, uint32_t layout, uint64_t chunk, uint32_t n, uint64_t size,
                    struct rk_create_plan *plan);

/* An array made directly on memory members. */
struct rk_test_mem_array {
	int32_t level;
	uint32_t layout;
	uint64_t chunk;
	uint32_t nroles;
	uint64_t member_size;   /* bytes of each memory member */
	int journal;            /* a journal in the whole gap below the data, as mkraid makes it */
	const char *name;       /* the array name (NULL: "t") */
};
/* Writes the superblocks of A onto fresh memory members DEVS[0..nroles)
 * named m0, m1, ..., fills the volume with the shared random stream
 * through the stripe engine and returns those bytes (*volume_size: their
 * count; free() them). */
uint8_t *rk_test_mem_array_make(rk_dev **devs, const struct rk_test_mem_array *a, uint64_t *volume_size);

/* The chosen superblock of D, a new copy (free() it). */
struct rk_sb *rk_test_read_sb(rk_dev *d);
/* The chosen superblock of the member file PATH. */
struct rk_sb *rk_test_read_sb_path(const char *path);
/* A wrap_dev callback (rk_create_opts, rk_rebuild_opts): wraps *DEV of
 * ROLE in a fault device of the plan CTX (an rk_fault_plan). */
rk_err rk_test_wrap_fault(void *ctx, uint32_t role, rk_dev **dev);
/* What survived a crash: fresh memory copies OUT[0..n) (same names and
 * sizes) of the members 0..n-1 under PLAN, after rk_fault_crash. */
void rk_test_crash_copies(rk_fault_plan *plan, uint32_t n, rk_dev **out);
/* Closes DEVS[0..n) (NULL entries skipped). */
void rk_test_close_devs(rk_dev **devs, uint32_t n);

#endif
