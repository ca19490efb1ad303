/* bench_rebuild: rebuild speed against the least work a rebuild must do.
 *
 * Creates a RAID-6 of NMEM image files of SIZE MiB each (chunk 512 KiB,
 * random data written through the array) in a temporary folder, drops one
 * member, reads the others once so they sit in the page cache, then times,
 * ROUNDS times in alternating order:
 *   reference  the surviving member files read at once, one
 *              `cat FILE > /dev/null` per file, and at the same time one
 *              member's bytes (the size of the rebuilt file) written to a
 *              new file in the same folder by `dd if=/dev/zero bs=1M`:
 *              what any rebuild must at least do (read every survivor,
 *              write the new member);
 *   rebuild    rk_recover_rebuild() of the dropped role onto a new file.
 * Prints the best time of each and the ratio reference-time / rebuild-time
 * (1.0 = as fast as reading the survivors while writing the new member),
 * and the ratio of their CPU times (user + system), which other load on a
 * shared machine disturbs less.
 * Ratios are what to compare: on a shared machine absolute times vary.
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
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "rk_array.h"
#include "rk_create.h"
#include "rk_discover.h"
#include "rk_recover.h"

extern char **environ;

#define MAXM 32

static double last_cpu;   /* CPU seconds of the last timed run */

/* The reference: cat every path to /dev/null and, if WPATH, dd WBYTES of
 * zeros into WPATH (a new file), all at once; seconds taken, < 0 on error. */
static double reference(char **paths, uint32_t n, const char *wpath, uint64_t wbytes)
{
	pid_t pid[MAXM + 1];
	uint32_t np = 0;
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	char of[700], cnt[64];
	snprintf(of, sizeof of, "of=%s", wpath ? wpath : "");
	snprintf(cnt, sizeof cnt, "count=%" PRIu64, wbytes);
	if (wpath)
		unlink(wpath);
	double c0 = cpu(RUSAGE_CHILDREN);
	double t0 = now();
	for (uint32_t i = 0; i < n; i++) {
		char catname[] = "cat";
		char *argv[] = { catname, paths[i], NULL };
		if (posix_spawnp(&pid[np], "cat", &fa, NULL, argv, environ))
			return -1;
		np++;
	}
	if (wpath) {
		char dd[] = "dd", in[] = "if=/dev/zero", bs[] = "bs=1M", fl[] = "iflag=count_bytes", st[] = "status=none";
		char *argv[] = { dd, in, of, bs, cnt, fl, st, NULL };
		if (posix_spawnp(&pid[np], "dd", &fa, NULL, argv, environ))
			return -1;
		np++;
	}
	int bad = 0;
	for (uint32_t i = 0; i < np; i++) {
		int st;
		if (waitpid(pid[i], &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
			bad = 1;
	}
	double t = now() - t0;
	last_cpu = cpu(RUSAGE_CHILDREN) - c0;
	posix_spawn_file_actions_destroy(&fa);
	if (wpath)
		unlink(wpath);
	return bad ? -1 : t;
}

/* One rebuild of the dropped role onto NEWPATH (a new file); seconds. */
static double rebuild(const char *newpath, char **surv, uint32_t ns)
{
	unlink(newpath);
	struct rk_rebuild_opts ro = { .role = -1 };
	struct rk_rebuild_result res;
	double c0 = cpu(RUSAGE_SELF);
	double t0 = now();
	if (rk_recover_rebuild(newpath, surv, ns, &ro, &res)) {
		fprintf(stderr, "bench_rebuild: rebuild: %s\n", rk_errmsg());
		return -1;
	}
	double t = now() - t0;
	last_cpu = cpu(RUSAGE_SELF) - c0;
	return t;
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
	if (reference(surv, ns, NULL, 0) < 0)   /* warm the page cache */
		goto out;
	/* the reference writes as many bytes as the rebuild's new file holds */
	if (rebuild(paths[n], surv, ns) < 0 || stat(paths[n], &st) != 0)
		goto out;
	uint64_t wbytes = (uint64_t)st.st_size;
	char refpath[600];
	snprintf(refpath, sizeof refpath, "%s/ref.img", dir);
	double best_ref = 1e30, best_rb = 1e30, best_read = 1e30, cpu_ref = 1e30, cpu_rb = 1e30;
	for (int r = 0; r < rounds; r++) {
		double t, tr = 0, tread, cr = 0;
		if (r % 2 == 1 && (tr = rebuild(paths[n], surv, ns)) < 0)
			goto out;
		cr = last_cpu;
		if ((t = reference(surv, ns, refpath, wbytes)) < 0) {
			fprintf(stderr, "bench_rebuild: cat or dd failed\n");
			goto out;
		}
		keep_min(&cpu_ref, last_cpu);
		if ((tread = reference(surv, ns, NULL, 0)) < 0) {
			fprintf(stderr, "bench_rebuild: cat failed\n");
			goto out;
		}
		if (r % 2 == 0 && (tr = rebuild(paths[n], surv, ns)) < 0)
			goto out;
		if (r % 2 == 0)
			cr = last_cpu;
		keep_min(&cpu_rb, cr);
		keep_min(&best_ref, t);
		keep_min(&best_read, tread);
		keep_min(&best_rb, tr);
	}
	double bytes = (double)ns * (double)(mib << 20);
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	printf("rebuild of one member of a RAID-6 of %u x %" PRIu64 " MiB image files in the page cache (%s), chunk 512 "
	       "KiB, %ld CPUs, best of %d runs in alternating order\n", n, mib, base, ncpu, rounds);
	printf("reference: the %u surviving files read at once (one `cat FILE > /dev/null` each; GNU cat read(2)s into a "
	       "128 KiB buffer: every byte copied into user memory) while `dd if=/dev/zero bs=1M` writes %" PRIu64
	       " bytes (the rebuilt file's size) to a new file beside them\n", ns, wbytes);
	printf("  reference %.3f s (%.0f MiB/s read), rebuild %.3f s (%.0f MiB/s read): ratio %.2f (target >= 0.9)\n", best_ref,
	       bytes / best_ref / 1048576.0, best_rb, bytes / best_rb / 1048576.0, best_ref / best_rb);
	printf("  CPU time (user + system, least of the runs): reference %.3f s, rebuild %.3f s: ratio %.2f\n", cpu_ref,
	       cpu_rb, cpu_ref / cpu_rb);
	printf("  (reading alone, without the write: %.3f s, ratio %.2f)\n", best_read, best_read / best_rb);
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
