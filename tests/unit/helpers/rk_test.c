/* rk_test.c: the suite runner, the temporary folder, deterministic data,
 * whole files and the foreign fixtures (contracts in rk_test.h). */
#include "rk_test.h"

#include <fcntl.h>
#include <ftw.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

/* ---- the suite runner ---- */

/* Suites allocate and free member-sized buffers (memory devices, crash
 * copies) thousands of times.  glibc's adaptive thresholds gave each one
 * fresh mmap'd or re-grown pages, so page faults were most of some suites'
 * time (test_resize_kill: 52 -> 16 CPU-s with these).  ASan's allocator
 * ignores mallopt. */
static void keep_freed_memory(void)
{
	mallopt(M_MMAP_THRESHOLD, 32 << 20);
	mallopt(M_TRIM_THRESHOLD, 1 << 30);
}

int rk_test_main(const char *name, const struct rk_test_case *cases)
{
	keep_freed_memory();
	Suite *s = suite_create(name);
	for (const struct rk_test_case *c = cases; c->name; c++) {
		TCase *tc = tcase_create(c->name);
		if (c->setup || c->teardown) {
			if (c->run_once)
				tcase_add_unchecked_fixture(tc, c->setup, c->teardown);
			else
				tcase_add_checked_fixture(tc, c->setup, c->teardown);
		}
		if (c->timeout > 0)
			tcase_set_timeout(tc, c->timeout);
		for (const struct rk_test_entry *t = c->tests; t->test; t++)
			_tcase_add_test(tc, t->test, 0, 0, t->loop_start, t->loop_end);
		suite_add_tcase(s, tc);
	}
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_ENV);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* ---- the temporary folder ---- */

static char tmpdir[256];
static char member_buf[RK_TEST_MAX_MEMBERS][300];
static char *members[RK_TEST_MAX_MEMBERS];

void rk_test_tmpdir_make(void)
{
	const char *base = getenv("TMPDIR");
	snprintf(tmpdir, sizeof tmpdir, "%s/rk-test.XXXXXX", base && *base ? base : "/tmp");
	ck_assert_msg(mkdtemp(tmpdir) != NULL, "mkdtemp %s", tmpdir);
	for (int i = 0; i < RK_TEST_MAX_MEMBERS; i++) {
		snprintf(member_buf[i], sizeof member_buf[i], "%s/m%d.img", tmpdir, i);
		members[i] = member_buf[i];
	}
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	if (remove(path) != 0)
		fprintf(stderr, "cannot remove %s\n", path);
	return 0;
}

void rk_test_tmpdir_remove(void)
{
	if (!tmpdir[0])
		return;
	/* Depth first, not following links: a test's symlink is removed, not its target. */
	nftw(tmpdir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
	tmpdir[0] = '\0';
}

const char *rk_test_tmpdir(void)
{
	return tmpdir;
}

const char *rk_test_path(const char *name)
{
	static char buf[16][512];
	static unsigned next;
	char *b = buf[next++ % 16];
	snprintf(b, sizeof buf[0], "%s/%s", tmpdir, name);
	return b;
}

char *const *rk_test_members(void)
{
	return members;
}

const char *const *rk_test_member_paths(void)
{
	return (const char *const *)members;
}

/* ---- deterministic data ---- */

#define RK_TEST_SEED 0x9e3779b97f4a7c15ull
static uint64_t rng = RK_TEST_SEED;

static uint64_t xorshift(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

void rk_test_rnd_seed(uint64_t seed)
{
	rng = seed ? seed : RK_TEST_SEED;
}

/* xorshift64*: the multiplied output is good even from small seeds. */
uint64_t rk_test_rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545f4914f6cdd1dull;
}

uint64_t rk_test_rnd_below(uint64_t n)
{
	return n ? rk_test_rnd() % n : 0;
}

void rk_test_fill(void *buf, size_t n)
{
	uint8_t *b = buf;
	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)(rk_test_rnd() >> 40);
}

void rk_test_fill_seeded(void *buf, size_t n, uint64_t seed)
{
	uint8_t *b = buf;
	uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)xorshift(&x);
}

uint8_t *rk_test_random_bytes(size_t len, uint64_t seed)
{
	uint8_t *b = malloc(len ? len : 1);
	ck_assert_ptr_nonnull(b);
	rk_test_fill_seeded(b, len, seed);
	return b;
}

/* ---- whole files ---- */

uint8_t *rk_test_slurp(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY);
	ck_assert_msg(fd >= 0, "open %s", path);
	struct stat st;
	ck_assert_int_eq(fstat(fd, &st), 0);
	uint8_t *b = malloc((size_t)st.st_size + 1);
	ck_assert_ptr_nonnull(b);
	size_t got = 0;
	while (got < (size_t)st.st_size) {
		ssize_t r = pread(fd, b + got, (size_t)st.st_size - got, (off_t)got);
		ck_assert_msg(r > 0, "read %s", path);
		got += (size_t)r;
	}
	close(fd);
	*len = got;
	return b;
}

void rk_test_spit(const char *path, const void *buf, size_t len)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	ck_assert_msg(fd >= 0, "create %s", path);
	ck_assert_int_eq(pwrite(fd, buf, len, 0), (ssize_t)len);
	close(fd);
}

void rk_test_make_file(const char *path, uint64_t size)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	ck_assert_msg(fd >= 0, "create %s", path);
	ck_assert_int_eq(ftruncate(fd, (off_t)size), 0);
	close(fd);
}

void rk_test_write_at(const char *path, const void *buf, size_t len, uint64_t off)
{
	int fd = open(path, O_RDWR);
	ck_assert_msg(fd >= 0, "open %s", path);
	void *zeros = buf ? NULL : calloc(1, len ? len : 1);
	ck_assert_int_eq(pwrite(fd, buf ? buf : zeros, len, (off_t)off), (ssize_t)len);
	free(zeros);
	close(fd);
}

/* Both copy and compare go through one reused buffer: a whole-file
 * buffer is fresh pages at every call under ASan, which made these helpers
 * the larger part of some suites' time there. */
static uint8_t file_buf[2][1 << 20];

void rk_test_copy_file(const char *from, const char *to)
{
	int in = open(from, O_RDONLY);
	ck_assert_msg(in >= 0, "open %s", from);
	int out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ck_assert_msg(out >= 0, "create %s", to);
	ssize_t r;
	while ((r = read(in, file_buf[0], sizeof file_buf[0])) > 0)
		ck_assert_msg(write(out, file_buf[0], (size_t)r) == r, "write %s", to);
	ck_assert_msg(r == 0, "read %s", from);
	close(in);
	close(out);
}

int rk_test_files_equal(const char *a, const char *b, uint64_t off, uint64_t len)
{
	int fa = open(a, O_RDONLY), fb = open(b, O_RDONLY);
	ck_assert_msg(fa >= 0, "open %s", a);
	ck_assert_msg(fb >= 0, "open %s", b);
	int same = 1;
	while (same && len) {
		size_t n = len < sizeof file_buf[0] ? (size_t)len : sizeof file_buf[0];
		ssize_t ra = pread(fa, file_buf[0], n, (off_t)off);
		ssize_t rb = pread(fb, file_buf[1], n, (off_t)off);
		ck_assert_msg(ra == (ssize_t)n, "%s is shorter than %llu bytes", a, (unsigned long long)(off + n));
		ck_assert_msg(rb == (ssize_t)n, "%s is shorter than %llu bytes", b, (unsigned long long)(off + n));
		same = memcmp(file_buf[0], file_buf[1], n) == 0;
		off += n;
		len -= n;
	}
	close(fa);
	close(fb);
	return same;
}

uint32_t rk_test_file_crc(const char *path)
{
	int fd = open(path, O_RDONLY);
	ck_assert_msg(fd >= 0, "open %s", path);
	static uint8_t buf[1 << 16];
	uLong c = crc32(0, NULL, 0);
	ssize_t r;
	while ((r = read(fd, buf, sizeof buf)) > 0)
		c = crc32(c, buf, (uInt)r);
	close(fd);
	return (uint32_t)c;
}

/* ---- the foreign fixtures ---- */

static int is_fixture_dir(const char *dir)
{
	char p[600];
	snprintf(p, sizeof p, "%s/mdraid-1.img.xz", dir);
	return access(p, R_OK) == 0;
}

const char *rk_test_fixtures(void)
{
	static char dir[512];
	const char *e = getenv("RK_FIXTURES");
	if (e && *e)
		return e;
	if (dir[0])
		return dir;
	/* The binary is <tree>/<build dir>/tests/test_x (build/ or build/san/). */
	char exe[400];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n > 0) {
		exe[n] = '\0';
		for (int up = 0; up < 4; up++) {
			char *slash = strrchr(exe, '/');
			if (!slash)
				break;
			*slash = '\0';
			snprintf(dir, sizeof dir, "%s/tests/fixtures/foreign", exe);
			if (is_fixture_dir(dir))
				return dir;
		}
	}
	snprintf(dir, sizeof dir, "tests/fixtures/foreign");
	return dir;
}

int rk_test_unpack_fixture(const char *name, char *out, size_t cap)
{
	if (system("command -v xz >/dev/null 2>&1") != 0) {
		printf("SKIP: xz is not installed: foreign fixtures cannot be unpacked\n");
		return 0;
	}
	char cmd[1400];
	snprintf(out, cap, "%s/%s.img", tmpdir, name);
	snprintf(cmd, sizeof cmd, "xz -dc '%s/%s.img.xz' > '%s' 2>/dev/null", rk_test_fixtures(), name, out);
	if (system(cmd) != 0) {
		printf("SKIP: cannot unpack %s/%s.img.xz\n", rk_test_fixtures(), name);
		return 0;
	}
	return 1;
}

const char *rk_test_kernel_fixtures(void)
{
	static char dir[600];
	if (!dir[0]) {
		/* tests/fixtures/kernel beside tests/fixtures/foreign */
		snprintf(dir, sizeof dir, "%s", rk_test_fixtures());
		char *slash = strrchr(dir, '/');
		size_t at = slash ? (size_t)(slash - dir) + 1 : 0;
		snprintf(dir + at, sizeof dir - at, "kernel");
	}
	return dir;
}

/* With RK_KFX_CACHE (tests/run-all.sh and run-cases.sh set a folder they
 * remove at the end) each fixture file is unpacked once per run, into
 * CACHE/FIXTURE-MEMBER.img (the name tests/cases/kernel-lib.sh uses too),
 * and copied from there: a copy costs a tenth of xz.  The file enters the
 * cache whole (renamed into place), so suites side by side never see half
 * of one.  Returns 1 with the cached file in CACHED. */
static int kernel_cached(const char *fixture, const char *member, char *cached, size_t cap)
{
	const char *cache = getenv("RK_KFX_CACHE");
	if (!cache || !*cache)
		return 0;
	snprintf(cached, cap, "%s/%s-%s.img", cache, fixture, member);
	if (access(cached, R_OK) == 0)
		return 1;
	char tmp[1200], cmd[3000];
	snprintf(tmp, sizeof tmp, "%s.%ld", cached, (long)getpid());
	snprintf(cmd, sizeof cmd, "mkdir -p '%s' && xz -dc '%s/%s/%s.img.xz' > '%s' 2>/dev/null", cache,
	         rk_test_kernel_fixtures(), fixture, member, tmp);
	if (system(cmd) != 0 || rename(tmp, cached) != 0) {
		unlink(tmp);
		return 0;
	}
	return 1;
}

int rk_test_unpack_kernel(const char *fixture, const char *member, char *out, size_t cap)
{
	if (system("command -v xz >/dev/null 2>&1") != 0) {
		printf("SKIP: xz is not installed: kernel fixtures cannot be unpacked\n");
		return 0;
	}
	char cmd[2000], cached[1000];
	snprintf(out, cap, "%s/%s-%s.img", tmpdir, fixture, member);
	if (kernel_cached(fixture, member, cached, sizeof cached)) {
		rk_test_copy_file(cached, out);
		return 1;
	}
	snprintf(cmd, sizeof cmd, "xz -dc '%s/%s/%s.img.xz' > '%s' 2>/dev/null", rk_test_kernel_fixtures(), fixture,
	         member, out);
	if (system(cmd) != 0) {
		printf("SKIP: cannot unpack %s/%s/%s.img.xz\n", rk_test_kernel_fixtures(), fixture, member);
		return 0;
	}
	return 1;
}
