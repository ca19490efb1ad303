/* bench_rebuild: rebuild speed against plain reading of the member files.
 *
 * Creates a RAID-6 of NMEM image files of SIZE MiB each (chunk 512 KiB,
 * random data written through the array) in a temporary folder, drops one
 * member, reads the others once so they sit in the page cache, then times,
 * best of ROUNDS: the surviving members read in parallel by `cat` to
 * /dev/null, and rk_recover_rebuild() of the dropped role onto a new file
 * (which reads the same members and writes one more).  Prints both rates
 * and the ratio read-time / rebuild-time (1.0 = as fast as reading).
 *
 * The folder defaults to /dev/shm (page cache without a disk behind it, so
 * the rebuild's checkpoint flushes cost nothing and the CPU side is what is
 * measured); RK_REBUILD_BENCH_DIR picks another.
 *
 * Usage: bench_rebuild [SIZE_MIB [NMEM [ROUNDS]]]   (default 256 6 3)
 */
#include <fcntl.h>
#include <inttypes.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rk_array.h"
#include "rk_create.h"
#include "rk_discover.h"
#include "rk_recover.h"

extern char **environ;

#define MAXM 32

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t rs = 0x9e3779b97f4a7c15ull;
static void fill(uint8_t *p, size_t n)
{
	for (size_t i = 0; i + 8 <= n; i += 8) {
		rs ^= rs >> 12;
		rs ^= rs << 25;
		rs ^= rs >> 27;
		uint64_t v = rs * 0x2545f4914f6cdd1dull;
		memcpy(p + i, &v, 8);
	}
}

/* cat every path to /dev/null, all at once; seconds taken, < 0 on error. */
static double cat_all(char **paths, uint32_t n)
{
	pid_t pid[MAXM];
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	double t0 = now();
	for (uint32_t i = 0; i < n; i++) {
		char catname[] = "cat";
		char *argv[] = { catname, paths[i], NULL };
		if (posix_spawnp(&pid[i], "cat", &fa, NULL, argv, environ))
			return -1;
	}
	int bad = 0;
	for (uint32_t i = 0; i < n; i++) {
		int st;
		if (waitpid(pid[i], &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
			bad = 1;
	}
	double t = now() - t0;
	posix_spawn_file_actions_destroy(&fa);
	return bad ? -1 : t;
}

int main(int argc, char **argv)
{
	uint64_t mib = argc > 1 ? strtoull(argv[1], NULL, 10) : 256;
	uint32_t n = argc > 2 ? (uint32_t)strtoul(argv[2], NULL, 10) : 6;
	int rounds = argc > 3 ? atoi(argv[3]) : 3;
	if (mib < 8 || n < 4 || n > MAXM || rounds < 1) {
		fprintf(stderr, "usage: bench_rebuild [SIZE_MIB >= 8 [NMEM 4..%d [ROUNDS]]]\n", MAXM);
		return 64;
	}
	const char *base = getenv("RK_REBUILD_BENCH_DIR");
	struct stat st;
	if (!base || !*base)
		base = stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) ? "/dev/shm" : "/tmp";
	char dir[512];
	snprintf(dir, sizeof dir, "%s/rkbench_rebuild.XXXXXX", base);
	if (!mkdtemp(dir)) {
		perror("bench_rebuild: mkdtemp");
		return 2;
	}
	char *paths[MAXM + 1];
	for (uint32_t i = 0; i <= n; i++) {
		paths[i] = malloc(600);
		snprintf(paths[i], 600, "%s/m%u.img", dir, i);
	}
	int rc = 2;
	/* the array, filled through the engine */
	struct rk_create_opts o;
	memset(&o, 0, sizeof o);
	o.level = 6;
	o.layout = RK_CREATE_LAYOUT_DEFAULT;
	o.chunk = 512u << 10;
	o.nmembers = n;
	o.paths = (const char *const *)paths;
	o.create_size = mib << 20;
	struct rk_create_plan plan;
	memset(&plan, 0, sizeof plan);
	struct rk_discovery *d = NULL;
	rk_array *a = NULL;
	uint8_t *buf = malloc(32u << 20);
	if (!buf || rk_create(&o, &plan) || rk_discover(&d, paths, n, NULL) ||
	    rk_array_open(&a, &d->arrays[0], RK_ARRAY_RDWR)) {
		fprintf(stderr, "bench_rebuild: setup: %s\n", rk_errmsg());
		goto out;
	}
	for (uint64_t off = 0; off < plan.volume_size; off += 32u << 20) {
		uint64_t len = plan.volume_size - off < (32u << 20) ? plan.volume_size - off : (32u << 20);
		fill(buf, (size_t)len);
		if (rk_array_write(a, buf, (size_t)len, off)) {
			fprintf(stderr, "bench_rebuild: fill: %s\n", rk_errmsg());
			goto out;
		}
	}
	if (rk_array_close(a)) {
		a = NULL;
		fprintf(stderr, "bench_rebuild: %s\n", rk_errmsg());
		goto out;
	}
	a = NULL;
	/* drop role 1: the survivors are paths 0, 2..n-1; NEW is paths[n] */
	char *surv[MAXM];
	uint32_t ns = 0;
	for (uint32_t i = 0; i < n; i++)
		if (i != 1)
			surv[ns++] = paths[i];
	unlink(paths[1]);
	if (cat_all(surv, ns) < 0)   /* warm the page cache */
		goto out;
	double best_cat = 1e30, best_rb = 1e30;
	for (int r = 0; r < rounds; r++) {
		double t = cat_all(surv, ns);
		if (t < 0) {
			fprintf(stderr, "bench_rebuild: cat failed\n");
			goto out;
		}
		if (t < best_cat)
			best_cat = t;
		unlink(paths[n]);
		struct rk_rebuild_opts ro = { .role = -1 };
		struct rk_rebuild_result res;
		double t0 = now();
		if (rk_recover_rebuild(paths[n], surv, ns, &ro, &res)) {
			fprintf(stderr, "bench_rebuild: rebuild: %s\n", rk_errmsg());
			goto out;
		}
		t = now() - t0;
		if (t < best_rb)
			best_rb = t;
	}
	double bytes = (double)ns * (double)(mib << 20);
	printf("rebuild RAID-6 %u x %" PRIu64 " MiB (chunk 512 KiB) in %s: parallel cat of %u members %.2f s (%.0f MiB/s), "
	       "rebuild of one member %.2f s (%.0f MiB/s read), ratio %.2f\n",
	       n, mib, base, ns, best_cat, bytes / best_cat / 1048576.0, best_rb, bytes / best_rb / 1048576.0,
	       best_cat / best_rb);
	rc = 0;
out:
	if (a)
		rk_array_close(a);
	rk_discovery_free(d);
	rk_create_plan_free(&plan);
	free(buf);
	for (uint32_t i = 0; i <= n; i++) {
		unlink(paths[i]);
		free(paths[i]);
	}
	rmdir(dir);
	return rc;
}
