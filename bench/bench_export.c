/* bench_export: raid-assemble --export against the honest reference
 * (issue 13 part 1).
 *
 * Builds a RAID-6 of 6 member files of SIZE MiB (mkraid, then random data
 * written through rk_array) in DIR, and times, in alternating order, best
 * of ROUNDS:
 *   reference  every member file read at once, one reader thread each
 *              (advised sequential, as cat(1) does), the
 *              first four (the data members' worth of bytes) written into
 *              one output file in DIR, the other two only read;
 *   export     `raid-assemble --export OUT` over all members, over all but
 *              one (a member missing) and all but two.
 * Warm: members in the page cache.  Cold: caches dropped (as root, echo 3
 * > /proc/sys/vm/drop_caches) before every run, members on DIR's disk;
 * skipped with the reason when that is not permitted.  Prints each ratio
 * (reference time / export time) beside its target: >= 0.9 healthy, >= 0.8
 * with members missing.  The ratio of CPU times (user + system) is printed
 * beside it: other load on a shared machine disturbs it less.
 *
 * Usage: bench_export [DIR [SIZE_MIB [WARM_ROUNDS [COLD_ROUNDS [CASES]]]]]
 *        (default $TMPDIR or /var/tmp, 256, 5, 2, all cases); CASES picks
 *        rows by tag, comma-separated: w0 w1 w2 (warm; healthy, 1, 2
 *        missing), c0 c1 c2 (cold).  RK_BENCH_BIN: the folder of the
 *        raid-assemble to time (default the build's bin/).  RK_BENCH_KEEP=1
 *        keeps the member files and reuses them when all are there at the
 *        size (repeated runs while tuning; a build that was cut short is
 *        not detected).
 */
#include <fcntl.h>
#include <libgen.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_util.h"
#include "rk_array.h"
#include "rk_discover.h"

extern char **environ;

#define NMEM 6
#define NDATA 4
#define PIECE (8u << 20)

static char bindir[4096], asmdir[4096], member[NMEM][4096], out[4096];

static void die(const char *what)
{
	fprintf(stderr, "bench_export: %s: %s\n", what, rk_errmsg());
	exit(2);
}

/* Runs ARGV (stdout and stderr to /dev/null); its exit status or -1. */
static int run(char *const *argv)
{
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	pid_t pid;
	int st = -1;
	if (posix_spawn(&pid, argv[0], &fa, NULL, argv, environ) == 0 && waitpid(pid, &st, 0) == pid)
		st = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	posix_spawn_file_actions_destroy(&fa);
	return st;
}

/* Whether RK_BENCH_KEEP is set and every member file is there at MIB. */
static int reuse(uint64_t mib)
{
	const char *k = getenv("RK_BENCH_KEEP");
	if (!k || strcmp(k, "1"))
		return 0;
	for (int r = 0; r < NMEM; r++) {
		struct stat st;
		if (stat(member[r], &st) || (uint64_t)st.st_size != mib << 20)
			return 0;
	}
	return 1;
}

/* mkraid over the member files, then the whole volume written with
 * pseudo-random bytes through rk_array (parity consistent). */
static void build(uint64_t mib)
{
	if (reuse(mib))
		return;
	char tool[4200], size[32];
	snprintf(tool, sizeof tool, "%s/mkraid", bindir);
	snprintf(size, sizeof size, "%lluM", (unsigned long long)mib);
	static char o_l[] = "-l", o_6[] = "6", o_force[] = "--force", o_cs[] = "--create-size";
	char *argv[16] = { tool, o_l, o_6, o_force, o_cs, size };
	for (int r = 0; r < NMEM; r++) {
		unlink(member[r]);
		argv[6 + r] = member[r];
	}
	if (run(argv) != 0)
		die("mkraid failed");
	char *paths[NMEM];
	for (int r = 0; r < NMEM; r++)
		paths[r] = member[r];
	struct rk_discovery *d;
	rk_array *a;
	if (rk_discover(&d, paths, NMEM, NULL) || d->narrays != 1)
		die("discovery");
	if (rk_array_open(&a, &d->arrays[0], RK_ARRAY_RDWR))
		die("open");
	uint8_t *buf = malloc(PIECE);
	uint64_t vs = rk_array_size(a);
	for (uint64_t off = 0; buf && off < vs; off += PIECE) {
		size_t n = vs - off < PIECE ? (size_t)(vs - off) : PIECE;
		fill(buf, n);
		if (rk_array_write(a, buf, n, off))
			die("write");
	}
	if (!buf || rk_array_close(a))
		die("close");
	rk_discovery_free(d);
	free(buf);
}

struct ref_job {
	int idx, outfd;
};

/* One reference reader: member IDX read whole; a data member's bytes are
 * written to the output at IDX * its size. */
static void *ref_reader(void *arg)
{
	struct ref_job *j = arg;
	int fd = open(member[j->idx], O_RDONLY);
	uint8_t *buf = malloc(PIECE);
	off_t at = 0;
	ssize_t n;
	struct stat st;
	if (fd < 0 || !buf || fstat(fd, &st))
		exit(2);
	(void)posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);   /* as cat(1) does */
	while ((n = read(fd, buf, PIECE)) > 0) {
		if (j->idx < NDATA && pwrite(j->outfd, buf, (size_t)n, (off_t)j->idx * st.st_size + at) != n)
			exit(2);
		at += n;
	}
	close(fd);
	free(buf);
	return NULL;
}

static double last_cpu;   /* CPU seconds of the last run (its threads or child) */

/* Seconds of one reference run. */
static double reference(void)
{
	double t0 = now(), c0 = cpu(RUSAGE_SELF);
	int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	pthread_t th[NMEM];
	struct ref_job j[NMEM];
	for (int r = 0; r < NMEM; r++) {
		j[r] = (struct ref_job){ r, fd };
		pthread_create(&th[r], NULL, ref_reader, &j[r]);
	}
	for (int r = 0; r < NMEM; r++)
		pthread_join(th[r], NULL);
	close(fd);
	double t = now() - t0;
	last_cpu = cpu(RUSAGE_SELF) - c0;
	unlink(out);
	return t;
}

/* Seconds of one export with the members whose bit is set in MISSING left
 * out. */
static double export_run(unsigned missing)
{
	char tool[4200];
	snprintf(tool, sizeof tool, "%s/raid-assemble", asmdir);
	static char o_export[] = "--export";
	char *argv[16] = { tool, o_export, out };
	int k = 3;
	for (int r = 0; r < NMEM; r++)
		if (!(missing >> r & 1u))
			argv[k++] = member[r];
	double t0 = now(), c0 = cpu(RUSAGE_CHILDREN);
	int st = run(argv);
	double t = now() - t0;
	last_cpu = cpu(RUSAGE_CHILDREN) - c0;
	unlink(out);
	if (st != 0 && st != 1) {
		fprintf(stderr, "bench_export: raid-assemble --export exited %d\n", st);
		exit(2);
	}
	return t;
}

/* Drops the page cache; 0 when permitted. */
static int drop_caches(void)
{
	sync();
	int fd = open("/proc/sys/vm/drop_caches", O_WRONLY);
	int ok = fd >= 0 && write(fd, "3\n", 2) == 2;
	if (fd >= 0)
		close(fd);
	return ok ? 0 : -1;
}

static const char *cases;   /* the rows to run (NULL: all) */

/* Best-of-ROUNDS ratio reference time / export time, alternating, caches
 * dropped before each run when COLD; only the rows whose TAG CASES names. */
static void compare(const char *tag, const char *name, unsigned missing, int cold, int rounds, double target)
{
	if (cases) {
		char list[256];
		snprintf(list, sizeof list, ",%s,", cases);
		char want[8];
		snprintf(want, sizeof want, ",%s,", tag);
		if (!strstr(list, want))
			return;
	}
	double br = 1e30, be = 1e30, cr = 1e30, ce = 1e30;
	for (int i = 0; i < rounds; i++)
		for (int k = 0; k < 2; k++) {
			if (cold && drop_caches())
				return;
			if ((i + k) & 1) {
				keep_min(&be, export_run(missing));
				keep_min(&ce, last_cpu);
			} else {
				keep_min(&br, reference());
				keep_min(&cr, last_cpu);
			}
		}
	double q = br / be;
	printf("%-32s %9.2f %9.2f %7.2f   >= %.1f %9.2f%s\n", name, br, be, q, target, cr / ce,
	       q >= target ? "" : "  MISSED");
	fflush(stdout);
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : getenv("TMPDIR") ? getenv("TMPDIR") : "/var/tmp";
	uint64_t mib = argc > 2 ? strtoull(argv[2], NULL, 10) : 256;
	int warm = argc > 3 ? atoi(argv[3]) : 5, cold = argc > 4 ? atoi(argv[4]) : 2;
	cases = argc > 5 ? argv[5] : NULL;
	char self[4096];
	snprintf(self, sizeof self, "%s", argv[0]);
	snprintf(bindir, sizeof bindir, "%s/../bin", dirname(self));
	/* another build's raid-assemble (before/after comparisons) */
	snprintf(asmdir, sizeof asmdir, "%s", getenv("RK_BENCH_BIN") ? getenv("RK_BENCH_BIN") : bindir);
	for (int r = 0; r < NMEM; r++)
		snprintf(member[r], sizeof member[r], "%s/rk-bench-export.m%d", dir, r);
	snprintf(out, sizeof out, "%s/rk-bench-export.out", dir);
	build(mib < 16 ? 16 : mib);
	printf("raid-assemble --export, RAID-6 of %d x %llu MiB in %s, best of %d (warm) / %d (cold) alternating\n",
	       NMEM, (unsigned long long)mib, dir, warm, cold);
	printf("%-32s %9s %9s %7s   %-6s %9s\n", "case", "ref s", "export s", "ratio", "target", "cpu ratio");
	reference();   /* the members into the page cache */
	compare("w0", "healthy, in page cache", 0, 0, warm, 0.9);
	compare("w1", "1 missing, in page cache", 0x2, 0, warm, 0.8);
	compare("w2", "2 missing, in page cache", 0x6, 0, warm, 0.8);
	if (cold > 0 && drop_caches()) {
		printf("cold cases: SKIP (cannot drop caches: /proc/sys/vm/drop_caches needs root)\n");
	} else if (cold > 0) {
		compare("c0", "healthy, caches dropped", 0, 1, cold, 0.9);
		compare("c1", "1 missing, caches dropped", 0x2, 1, cold, 0.8);
		compare("c2", "2 missing, caches dropped", 0x6, 1, cold, 0.8);
	}
	int keep = reuse(mib < 16 ? 16 : mib);
	for (int r = 0; r < NMEM && !keep; r++)
		unlink(member[r]);
	return 0;
}
