/* bench_scrub: scrub speed against plain reading of the same member files.
 *
 * Builds a RAID-6 and a RAID-5 of NMEM image files of SIZE MiB each (random
 * data, parity computed with the reference kernel) in a temporary folder,
 * reads them once so they sit in the page cache, then times, ROUNDS times
 * in alternating order, the reference and rk_scrub_run() over the same
 * files (members opened read-only, default options: one checker per CPU),
 * and the scrub with no_map (every block copied by pread).
 * Reference: every member file read at once, one `cat FILE > /dev/null`
 * process per file -- the least any scrub must do is read each member byte
 * once, and cat is the plain way to do that.
 * Prints the best time of each, its rate and the ratio reference-time /
 * scrub-time (1.0 = the scrub as fast as reading; target >= 0.9), and the
 * ratio of their CPU times (user + system), which other load on a shared
 * machine disturbs less than wall-clock times.  Ratios are what to
 * compare: on a shared machine absolute times vary.
 *
 * Usage: bench_scrub [SIZE_MIB [NMEM [ROUNDS]]]   (default 256 6 3)
 * RK_SCRUB_BENCH_DIR picks the folder (default $TMPDIR or /tmp).
 */
#include <fcntl.h>
#include <inttypes.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "rk_dev.h"
#include "rk_geom.h"
#include "rk_parity.h"
#include "rk_scrub.h"

extern char **environ;

#define CHUNK (512u * 1024u)

static double last_cpu;   /* CPU seconds of the last timed run */

/* Writes a consistent array of level LEVEL over the files. */
static int build(const char *const *paths, uint32_t n, int level, uint64_t size)
{
	struct rk_geom g;
	if (rk_geom_init(&g, level, RK_ALG_LEFT_SYMMETRIC, CHUNK, n, size)) {
		fprintf(stderr, "bench_scrub: %s\n", rk_errmsg());
		return -1;
	}
	int fd[64];
	uint8_t *blk[64];
	void *ptrs[66];
	uint32_t vol_role[64], slot[64];
	for (uint32_t r = 0; r < n; r++) {
		fd[r] = open(paths[r], O_RDWR | O_CREAT | O_TRUNC, 0600);
		blk[r] = malloc(CHUNK);
		if (fd[r] < 0 || !blk[r])
			return -1;
	}
	const struct rk_parity_algo *pa = rk_parity();
	for (uint64_t s = 0; s < g.nstripes; s++) {
		struct rk_stripe_map m = { .vol_role = vol_role, .slot = slot };
		if (rk_geom_stripe_map(&g, s, &m))
			return -1;
		for (uint32_t r = 0; r < n; r++) {
			if (r != m.p_role && r != m.q_role)
				fill(blk[r], CHUNK);
			ptrs[slot[r]] = blk[r];
		}
		if (level == 6)
			pa->gen((int)n, CHUNK, ptrs);
		else
			pa->xor_gen((int)n, CHUNK, ptrs);
		for (uint32_t r = 0; r < n; r++)
			if (pwrite(fd[r], blk[r], CHUNK, (off_t)(s * CHUNK)) != (ssize_t)CHUNK)
				return -1;
	}
	for (uint32_t r = 0; r < n; r++) {
		close(fd[r]);
		free(blk[r]);
	}
	return 0;
}

static double time_cat(char *const *paths, uint32_t n)
{
	static char cat[] = "cat";
	pid_t pid[64];
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	double c0 = cpu(RUSAGE_CHILDREN);
	double t0 = now();
	for (uint32_t r = 0; r < n; r++) {
		char *argv[] = { cat, paths[r], NULL };
		if (posix_spawnp(&pid[r], "cat", &fa, NULL, argv, environ))
			return -1;
	}
	for (uint32_t r = 0; r < n; r++)
		waitpid(pid[r], NULL, 0);
	double t = now() - t0;
	last_cpu = cpu(RUSAGE_CHILDREN) - c0;
	posix_spawn_file_actions_destroy(&fa);
	return t;
}

static double time_scrub(char *const *paths, uint32_t n, int level, uint64_t size, uint64_t *mism, int no_map)
{
	struct rk_geom g;
	rk_dev *devs[64];
	uint64_t doff[64] = { 0 };
	if (rk_geom_init(&g, level, RK_ALG_LEFT_SYMMETRIC, CHUNK, n, size))
		return -1;
	double c0 = cpu(RUSAGE_SELF);
	double t0 = now();
	for (uint32_t r = 0; r < n; r++)
		if (rk_dev_open(&devs[r], paths[r], RK_DEV_RDONLY))
			return -1;
	struct rk_scrub_opts o = { .no_map = no_map };
	struct rk_scrub_stats st;
	rk_err e = rk_scrub_run(&g, devs, doff, 0, g.nstripes, &o, &st);
	for (uint32_t r = 0; r < n; r++)
		rk_dev_close(devs[r]);
	double t = now() - t0;
	last_cpu = cpu(RUSAGE_SELF) - c0;
	if (e) {
		fprintf(stderr, "bench_scrub: %s\n", rk_errmsg());
		return -1;
	}
	*mism = st.mismatches;
	return t;
}

int main(int argc, char **argv)
{
	uint64_t mib = argc > 1 ? strtoull(argv[1], NULL, 10) : 256;
	uint32_t n = argc > 2 ? (uint32_t)strtoul(argv[2], NULL, 10) : 6;
	int rounds = argc > 3 ? atoi(argv[3]) : 3;
	if (mib < 1 || n < 3 || n > 64 || rounds < 1) {
		fprintf(stderr, "usage: bench_scrub [SIZE_MIB [NMEM(3..64) [ROUNDS]]]\n");
		return 64;
	}
	uint64_t size = mib << 20;
	const char *base = getenv("RK_SCRUB_BENCH_DIR");
	if (!base)
		base = getenv("TMPDIR");
	if (!base)
		base = "/tmp";
	char dir[4096];
	snprintf(dir, sizeof dir, "%s/bench_scrub.XXXXXX", base);
	if (!mkdtemp(dir)) {
		perror("bench_scrub: mkdtemp");
		return 2;
	}
	char *paths[64];
	for (uint32_t r = 0; r < n; r++) {
		paths[r] = malloc(strlen(dir) + 32);
		sprintf(paths[r], "%s/m%u.img", dir, r);
	}
	int rc = 0;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	printf("scrub against reading the members: RAID-6 and RAID-5 of %u x %" PRIu64 " MiB image files in the page "
	       "cache (%s), chunk %u KiB, %ld CPUs, best of %d runs in alternating order\n", n, mib, base, CHUNK / 1024,
	       ncpu, rounds);
	printf("reference: every member file read at once, one `cat FILE > /dev/null` per file (GNU cat read(2)s into a "
	       "128 KiB buffer, no splice or copy_file_range: every byte copied into user memory, as the scrub does)\n");
	for (int level = 6; level >= 5 && !rc; level--) {
		if (build((const char *const *)paths, n, level, size)) {
			fprintf(stderr, "bench_scrub: cannot build the members in %s\n", dir);
			rc = 2;
			break;
		}
		time_cat(paths, n);    /* warm the page cache */
		double tc = 1e9, ts = 1e9, tp = 1e9, cc = 1e9, cs = 1e9;
		uint64_t mism = 0, mism2 = 0;
		for (int i = 0; i < rounds; i++) {
			/* alternate which goes first, so neither always runs in the other's wake */
			double a = 0, b, c, ca = 0, cb;
			if (i % 2 == 0) {
				a = time_cat(paths, n);
				ca = last_cpu;
			}
			b = time_scrub(paths, n, level, size, &mism, 0);
			cb = last_cpu;
			if (i % 2 == 1) {
				a = time_cat(paths, n);
				ca = last_cpu;
			}
			c = time_scrub(paths, n, level, size, &mism2, 1);
			keep_min(&cc, ca);
			keep_min(&cs, cb);
			if (a < 0 || b < 0 || c < 0) {
				rc = 2;
				break;
			}
			mism += mism2;
			keep_min(&tc, a);
			keep_min(&ts, b);
			keep_min(&tp, c);
		}
		if (rc)
			break;
		double gb = (double)size * n / 1e9;
		printf("  RAID-%d: reference %.3f s (%.2f GB/s), scrub %.3f s (%.2f GB/s): ratio %.2f (target >= 0.90)%s\n",
		       level, tc, gb / tc, ts, gb / ts, tc / ts, mism ? "  (MISMATCHES: bench bug)" : "");
		printf("          CPU time (user + system, least of the runs): reference %.3f s, scrub %.3f s: ratio %.2f\n",
		       cc, cs, cc / cs);
		printf("          scrub copying every block (no_map) %.3f s (%.2f GB/s): ratio %.2f\n", tp, gb / tp, tc / tp);
		if (mism)
			rc = 1;
	}
	for (uint32_t r = 0; r < n; r++) {
		unlink(paths[r]);
		free(paths[r]);
	}
	rmdir(dir);
	return rc;
}
