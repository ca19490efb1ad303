/* bench_journal.c: what the write journal (spec/journal.md) costs: MB/s of
 * full-stripe sequential writes and 4 KiB random writes through rk_array,
 * journal on (the default) and off (rk_array_set_journal(a, 0), benchmarks
 * only), over member files in DIR (default $TMPDIR or /var/tmp: a real file
 * system, so flushes cost what they cost).  Each run ends with
 * rk_array_flush, so both sides pay for durability; "sync" flushes after
 * every random write (what a writer needing each write durable pays).
 * Each figure is the best of three runs after a warm-up pass.
 * Usage: bench_journal [DIR [member MiB [random writes]]] */
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

/* COUNT random 4 KiB writes (4 KiB aligned), each flushed when SYNC; MB/s
 * and writes/s. */
static double rand_write(char **paths, uint32_t n, int journal, uint32_t count, uint8_t *buf, int sync, double *iops)
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
	*iops = count / t;
	return (double)count * 4096 / t / 1e6;
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : getenv("TMPDIR") ? getenv("TMPDIR") : "/var/tmp";
	uint64_t mib = argc > 2 ? strtoull(argv[2], NULL, 10) : 32;
	uint32_t nrand = argc > 3 ? (uint32_t)strtoul(argv[3], NULL, 10) : 400;
	if (mib < 4)
		mib = 4;
	static const struct { const char *name; int32_t level; uint32_t n; uint64_t chunk; } cfg[] = {
		{ "raid5 4x 64K", 5, 4, 64 << 10 },
		{ "raid6 6x 64K", 6, 6, 64 << 10 },
		{ "raid1 2x", 1, 2, 0 },
		{ "raid10 4x 64K", 10, 4, 64 << 10 },
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
	printf("write journal cost: member files in %s (%llu MiB each), %u random 4 KiB writes\n", dir,
	       (unsigned long long)mib, nrand);
	printf("%-14s %8s %12s %12s %6s %11s %11s %6s %11s %11s %6s\n", "array", "request", "seq MB/s on", "seq MB/s off",
	       "cost", "rand/s on", "rand/s off", "cost", "sync/s on", "sync/s off", "cost");
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
		/* a warm-up pass allocates the files' blocks, then the best of
		 * three alternating runs each (the machine may be busy) */
		seq_write(paths, n, 0, req, buf);
		double on = 0, off = 0, ion = 0, ioff = 0, son = 0, soff = 0;
		for (int k = 0; k < 3; k++) {
			double x, y;
			if ((x = seq_write(paths, n, 1, req, buf)) > on)
				on = x;
			if ((x = seq_write(paths, n, 0, req, buf)) > off)
				off = x;
			rand_write(paths, n, 1, nrand, buf, 0, &y);
			ion = y > ion ? y : ion;
			rand_write(paths, n, 0, nrand, buf, 0, &y);
			ioff = y > ioff ? y : ioff;
			rand_write(paths, n, 1, nrand / 4 + 1, buf, 1, &y);
			son = y > son ? y : son;
			rand_write(paths, n, 0, nrand / 4 + 1, buf, 1, &y);
			soff = y > soff ? y : soff;
		}
		printf("%-14s %7lluK %12.1f %12.1f %5.0f%% %11.0f %11.0f %5.0f%% %11.0f %11.0f %5.0f%%\n", cfg[c].name,
		       (unsigned long long)(req >> 10), on, off, 100.0 * (1.0 - on / off), ion, ioff,
		       100.0 * (1.0 - ion / ioff), son, soff, 100.0 * (1.0 - son / soff));
		fflush(stdout);
	}
	for (int i = 0; i < MAXM; i++) {
		unlink(paths[i]);
		free(paths[i]);
	}
	rmdir(tmpl);
	free(buf);
	return 0;
}
