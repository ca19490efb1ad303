/* bench_journal.c: what the write journal (spec/journal.md) costs: MB/s of
 * full-stripe sequential writes and 4 KiB random writes through rk_array,
 * journal on (the default) and off (rk_array_set_journal(a, 0), benchmarks
 * only), over member files in DIR (default $TMPDIR or /var/tmp: a real file
 * system, so flushes cost what they cost).  Each run ends with
 * rk_array_flush, so both sides pay for durability (journal on: the
 * records are durable then, the in-place bytes follow at the next
 * checkpoint or close); "sync" flushes after every random write (what a
 * writer needing each write durable pays).  The cost of random writes is
 * printed beside its target (issue 13: unflushed <= 15 %, flushed <= 20 %
 * on RAID-5/6/10), and, for the unflushed run, also counted up to the end
 * of rk_array_close (every byte in place and flushed, the array clean).
 * Each figure is the best of N runs (default 3), alternating which side
 * runs first, after a warm-up pass.
 * Usage: bench_journal [DIR [member MiB [random writes [N]]]] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "rk_array.h"
#include "rk_create.h"
#include "rk_discover.h"

#define MAXM 8

static void die(const char *what)
{
	fprintf(stderr, "bench_journal: %s: %s\n", what, rk_errmsg());
	exit(2);
}

static rk_array *open_array(char **paths, uint32_t n, int journal)
{
	struct rk_discovery *d = NULL;
	if (rk_discover(&d, paths, n, NULL) || d->narrays != 1)
		die("discover");
	rk_array *a = NULL;
	if (rk_array_open(&a, &d->arrays[0], RK_ARRAY_RDWR))
		die("open");
	rk_discovery_free(d);
	rk_array_set_journal(a, journal);
	return a;
}

/* Sequential writes of whole stripe groups over the volume; MB/s. */
static double seq_write(char **paths, uint32_t n, int journal, uint64_t req, uint8_t *buf)
{
	rk_array *a = open_array(paths, n, journal);
	uint64_t vs = rk_array_size(a) / req * req, moved = 0;
	double t0 = now();
	for (uint64_t off = 0; off < vs; off += req) {
		if (rk_array_write(a, buf, (size_t)req, off))
			die("write");
		moved += req;
	}
	if (rk_array_flush(a))
		die("flush");
	double t = now() - t0;
	if (rk_array_close(a))
		die("close");
	return (double)moved / t / 1e6;
}

/* COUNT random 4 KiB writes (4 KiB aligned), each flushed when SYNC;
 * writes/s up to the last rk_array_flush, and in *TO_CLOSE up to the end
 * of rk_array_close. */
static double rand_write(char **paths, uint32_t n, int journal, uint32_t count, uint8_t *buf, int sync,
                         double *to_close)
{
	rk_array *a = open_array(paths, n, journal);
	uint64_t blocks = rk_array_size(a) / 4096, x = 88172645463325252ull;
	double t0 = now();
	for (uint32_t i = 0; i < count; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		if (rk_array_write(a, buf, 4096, (x % blocks) * 4096))
			die("write");
		if (sync && rk_array_flush(a))
			die("flush");
	}
	if (rk_array_flush(a))
		die("flush");
	double t = now() - t0;
	if (rk_array_close(a))
		die("close");
	*to_close = count / (now() - t0);
	return count / t;
}

static double maxd(double a, double b)
{
	return a > b ? a : b;
}

/* The best of N alternating runs of one configuration (C: 0 seq, 1
 * unflushed, 2 flushed): R[0] journal on, R[1] off; R[2], R[3] the
 * unflushed runs counted to the end of close. */
static void best_of(char **paths, uint32_t n, int c, uint64_t req, uint32_t nrand, uint8_t *buf, int runs, double *r)
{
	r[0] = r[1] = r[2] = r[3] = 0;
	for (int k = 0; k < runs; k++)
		for (int j = 0; j < 2; j++) {
			int on = (k + j) % 2 == 0;   /* alternate which side goes first */
			double v, cl = 0;
			if (c == 0)
				v = seq_write(paths, n, on, req, buf);
			else
				v = rand_write(paths, n, on, c == 1 ? nrand : nrand / 4 + 1, buf, c == 2, &cl);
			r[on ? 0 : 1] = maxd(r[on ? 0 : 1], v);
			r[on ? 2 : 3] = maxd(r[on ? 2 : 3], cl);
		}
}

static double cost(double on, double off)
{
	return 100.0 * (1.0 - on / off);
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : getenv("TMPDIR") ? getenv("TMPDIR") : "/var/tmp";
	uint64_t mib = argc > 2 ? strtoull(argv[2], NULL, 10) : 32;
	uint32_t nrand = argc > 3 ? (uint32_t)strtoul(argv[3], NULL, 10) : 400;
	int runs = argc > 4 ? atoi(argv[4]) : 3;
	if (mib < 4)
		mib = 4;
	if (runs < 1)
		runs = 1;
	static const struct { const char *name; int32_t level; uint32_t n; uint64_t chunk; } cfg[] = {
		{ "raid5 4x 64K", 5, 4, 64 << 10 },
		{ "raid6 6x 64K", 6, 6, 64 << 10 },
		{ "raid10 4x 64K", 10, 4, 64 << 10 },
		{ "raid1 2x", 1, 2, 0 },
	};
	char tmpl[512];
	snprintf(tmpl, sizeof tmpl, "%s/rk-bench-journal.XXXXXX", dir);
	if (!mkdtemp(tmpl)) {
		perror("bench_journal: mkdtemp");
		return 2;
	}
	char *paths[MAXM];
	for (int i = 0; i < MAXM; i++) {
		paths[i] = malloc(600);
		snprintf(paths[i], 600, "%s/m%d", tmpl, i);
	}
	uint8_t *buf = aligned_alloc(4096, 16u << 20);
	for (size_t i = 0; i < (16u << 20); i++)
		buf[i] = (uint8_t)(i * 131 + 7);
	printf("write journal cost: member files in %s (%llu MiB each), %u random 4 KiB writes, best of %d\n", dir,
	       (unsigned long long)mib, nrand, runs);
	printf("%-13s %8s %8s %5s | %8s %8s %5s %6s %4s %7s | %8s %8s %5s %6s %4s\n", "array", "seq MB/s", "off",
	       "cost", "rand/s", "off", "cost", "target", "", "+close", "sync/s", "off", "cost", "target", "");
	for (size_t c = 0; c < sizeof cfg / sizeof cfg[0]; c++) {
		uint32_t n = cfg[c].n;
		for (uint32_t i = 0; i < n; i++)
			unlink(paths[i]);
		struct rk_create_opts o;
		memset(&o, 0, sizeof o);
		o.level = cfg[c].level;
		o.layout = RK_CREATE_LAYOUT_DEFAULT;
		o.chunk = cfg[c].chunk;
		o.create_size = (mib + 2) << 20;
		o.nmembers = n;
		o.paths = (const char *const *)paths;
		if (rk_create(&o, NULL))
			die("create");
		uint32_t nd = cfg[c].level == 5 ? n - 1 : cfg[c].level == 6 ? n - 2 : 1;
		uint64_t req = cfg[c].chunk ? (uint64_t)nd * cfg[c].chunk * 4 : (1u << 20);
		if (req > (16u << 20))
			req = 16u << 20;
		/* a warm-up pass allocates the files' blocks */
		seq_write(paths, n, 0, req, buf);
		double sq[4], ra[4], sy[4];
		best_of(paths, n, 0, req, nrand, buf, runs, sq);
		best_of(paths, n, 1, req, nrand, buf, runs, ra);
		best_of(paths, n, 2, req, nrand, buf, runs, sy);
		double cr = cost(ra[0], ra[1]), cs = cost(sy[0], sy[1]);
		printf("%-13s %8.1f %8.1f %4.0f%% | %8.0f %8.0f %4.0f%% %6s %4s %6.0f%% | %8.0f %8.0f %4.0f%% %6s %4s\n",
		       cfg[c].name, sq[0], sq[1], cost(sq[0], sq[1]), ra[0], ra[1], cr, "<=15%", cr <= 15 ? "met" : "NOT",
		       cost(ra[2], ra[3]), sy[0], sy[1], cs, "<=20%", cs <= 20 ? "met" : "NOT");
		fflush(stdout);
	}
	printf("(+close: the unflushed runs timed to the end of rk_array_close, every byte in place and flushed)\n");
	for (int i = 0; i < MAXM; i++) {
		unlink(paths[i]);
		free(paths[i]);
	}
	rmdir(tmpl);
	free(buf);
	return 0;
}
