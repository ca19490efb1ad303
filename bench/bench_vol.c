/* bench_vol.c: the stripe engine over memory members: GB/s of volume data
 * for sequential full-stripe writes, healthy reads and degraded reads
 * (reconstructing), RAID-0/5/6/10; then the ratios of issue 13 part 4, each
 * best of ROUNDS runs taken in alternating order beside its reference:
 * wide parity arrays against RAID-0 of the same data member count (target
 * >= 0.9) and degraded reads against healthy ones (target >= 0.6).
 * Usage: bench_vol [member MiB [rounds]] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include "rk_dev.h"
#include "rk_geom.h"
#include "rk_parity.h"
#include "rk_vol.h"

static void die(void)
{
	fprintf(stderr, "bench_vol: %s\n", rk_errmsg());
	exit(2);
}

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Streams the whole volume in REQ-byte requests until at least MIN bytes
 * moved; returns GB/s (1e9). */
static double stream(rk_vol *v, uint8_t *buf, size_t req, int write, uint64_t min)
{
	uint64_t vs = rk_vol_size(v), moved = 0;
	double t0 = now();
	while (moved < min) {
		for (uint64_t off = 0; off + req <= vs; off += req) {
			rk_err e = write ? rk_vol_write(v, buf, req, off) : rk_vol_read(v, buf, req, off);
			if (e) {
				fprintf(stderr, "bench_vol: %s\n", rk_errmsg());
				exit(2);
			}
			moved += req;
		}
	}
	return (double)moved / (now() - t0) / 1e9;
}

/* One array of the ratio section: members in memory, DOWN a mask of
 * missing roles. */
struct bvol {
	struct rk_geom g;
	rk_dev *devs[16];
	rk_vol *v;
};

/* Makes the array (members filled by a full-stripe write, so degraded
 * reads reconstruct real data), opened with the roles in DOWN missing. */
static void bvol_open(struct bvol *b, int32_t level, uint32_t n, uint64_t chunk, uint64_t member, unsigned down)
{
	uint64_t doff[16] = { 0 };
	rk_dev *use[16];
	if (rk_geom_init(&b->g, level, level == 0 ? 0 : 2, chunk, n, member))
		die();
	for (uint32_t r = 0; r < n; r++) {
		if (rk_dev_mem(&b->devs[r], "m", b->g.member_size))
			die();
		use[r] = b->devs[r];
	}
	rk_vol *w;
	size_t req = 8u << 20;
	uint8_t *buf = aligned_alloc(64, req);
	if (!buf || rk_vol_open(&w, &b->g, use, doff))
		die();
	for (uint64_t off = 0; off < rk_vol_size(w); off += req) {
		size_t len = rk_vol_size(w) - off < req ? (size_t)(rk_vol_size(w) - off) : req;
		for (size_t i = 0; i < len; i++)
			buf[i] = (uint8_t)((off + i) * 131 + 7);
		if (rk_vol_write(w, buf, len, off))
			die();
	}
	rk_vol_close(w);
	free(buf);
	for (uint32_t r = 0; r < n; r++)
		use[r] = (down >> r & 1u) ? NULL : b->devs[r];
	if (rk_vol_open(&b->v, &b->g, use, doff))
		die();
}

static void bvol_close(struct bvol *b)
{
	rk_vol_close(b->v);
	for (uint32_t r = 0; r < b->g.nroles; r++)
		rk_dev_close(b->devs[r]);
}

/* CPU seconds (user + system, every thread) of this process so far. */
static double cpu_self(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
	       ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) * 1e-6;
}

/* Seconds to read the whole volume once in 8 MiB requests; *CPU gets the
 * CPU seconds it took. */
static double read_once(rk_vol *v, uint8_t *buf, double *cpu)
{
	size_t req = 8u << 20;
	uint64_t vs = rk_vol_size(v);
	double t0 = now(), c0 = cpu_self();
	for (uint64_t off = 0; off < vs; off += req)
		if (rk_vol_read(v, buf, vs - off < req ? (size_t)(vs - off) : req, off))
			die();
	*cpu = cpu_self() - c0;
	return now() - t0;
}

/* Best-of-ROUNDS ratio ref time / test time, runs alternating (the
 * volumes hold the same volume bytes); *CPU_RATIO the same of the CPU
 * times, which other load on a shared machine disturbs less. */
static double ratio(rk_vol *ref, rk_vol *test, uint8_t *buf, int rounds, double *cpu_ratio)
{
	double bt = 1e30, br = 1e30, ct = 1e30, cr = 1e30;
	for (int i = 0; i < rounds; i++) {
		for (int k = 0; k < 2; k++) {
			double c, t;
			if ((i + k) & 1) {
				t = read_once(test, buf, &c);
				bt = t < bt ? t : bt;
				ct = c < ct ? c : ct;
			} else {
				t = read_once(ref, buf, &c);
				br = t < br ? t : br;
				cr = c < cr ? c : cr;
			}
		}
	}
	*cpu_ratio = cr / ct;
	return br / bt;
}

/* Issue 13 part 4: wide arrays vs RAID-0, degraded vs healthy. */
static void ratios(uint64_t mib, int rounds)
{
	static const struct { const char *name; int32_t level; uint32_t n; unsigned down; } t[] = {
		{ "raid5 9x", 5, 9, 0 }, { "raid6 10x", 6, 10, 0 },
	};
	static const struct { const char *name; int32_t level; uint32_t n; uint64_t chunk; unsigned down; } d[] = {
		{ "raid5 5x, 1 missing", 5, 5, 512 << 10, 0x2 },  { "raid5 9x, 1 missing", 5, 9, 64 << 10, 0x2 },
		{ "raid6 6x, 1 missing", 6, 6, 512 << 10, 0x2 },  { "raid6 6x, 2 missing", 6, 6, 512 << 10, 0x6 },
		{ "raid6 10x, 1 missing", 6, 10, 64 << 10, 0x2 }, { "raid6 10x, 2 missing", 6, 10, 64 << 10, 0x6 },
	};
	uint64_t member = mib << 20;
	uint8_t *buf = aligned_alloc(64, 8u << 20);
	if (!buf)
		die();
	printf("\nratios, best of %d alternating runs (reading the whole volume in 8 MiB requests)\n", rounds);
	printf("%-34s %8s %8s %9s\n", "test / reference", "ratio", "target", "cpu ratio");
	struct bvol r0;
	bvol_open(&r0, 0, 8, 64 << 10, member, 0);
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		struct bvol b;
		bvol_open(&b, t[i].level, t[i].n, 64 << 10, member, t[i].down);
		double c, q = ratio(r0.v, b.v, buf, rounds, &c);
		printf("%-14s / raid0 8x (64 KiB) %11.2f %8s %9.2f%s\n", t[i].name, q, ">= 0.9", c, q >= 0.9 ? "" : "  MISSED");
		bvol_close(&b);
	}
	bvol_close(&r0);
	for (size_t i = 0; i < sizeof d / sizeof d[0]; i++) {
		struct bvol h, b;
		bvol_open(&h, d[i].level, d[i].n, d[i].chunk, member, 0);
		bvol_open(&b, d[i].level, d[i].n, d[i].chunk, member, d[i].down);
		double c, q = ratio(h.v, b.v, buf, rounds, &c);
		printf("%-22s / healthy %11.2f %8s %9.2f%s\n", d[i].name, q, ">= 0.6", c, q >= 0.6 ? "" : "  MISSED");
		bvol_close(&b);
		bvol_close(&h);
	}
	free(buf);
}

int main(int argc, char **argv)
{
	uint64_t mib = argc > 1 ? strtoull(argv[1], NULL, 10) : 64;
	int rounds = argc > 2 ? atoi(argv[2]) : 5;
	if (mib < 8)
		mib = 8;
	if (rounds < 1)
		rounds = 1;
	static const struct { const char *name; int32_t level; uint32_t layout; uint32_t n; uint64_t chunk; } cfg[] = {
		{ "raid0 4x", 0, 0, 4, 512 << 10 },
		{ "raid0 8x", 0, 0, 8, 64 << 10 },
		{ "raid5 5x ls", 5, 2, 5, 512 << 10 },
		{ "raid5 9x ls", 5, 2, 9, 64 << 10 },
		{ "raid6 6x ls", 6, 2, 6, 512 << 10 },
		{ "raid6 10x ls", 6, 2, 10, 64 << 10 },
		{ "raid10 4x n2", 10, 0x102, 4, 512 << 10 },
	};
	printf("stripe engine over memory members (%llu MiB each), parity variant %s\n", (unsigned long long)mib,
	       rk_parity()->name);
	printf("%-14s %10s %12s %12s %14s\n", "array", "request", "write GB/s", "read GB/s", "degraded GB/s");
	for (size_t c = 0; c < sizeof cfg / sizeof cfg[0]; c++) {
		struct rk_geom g;
		uint32_t n = cfg[c].n;
		if (rk_geom_init(&g, cfg[c].level, cfg[c].layout, cfg[c].chunk, n, mib << 20)) {
			fprintf(stderr, "bench_vol: %s\n", rk_errmsg());
			return 2;
		}
		rk_dev *devs[16], *use[16];
		uint64_t doff[16];
		for (uint32_t r = 0; r < n; r++) {
			doff[r] = 0;
			if (rk_dev_mem(&devs[r], "m", g.member_size)) {
				fprintf(stderr, "bench_vol: %s\n", rk_errmsg());
				return 2;
			}
			memset(rk_dev_mem_data(devs[r]), 0, g.member_size);   /* fault the pages in */
			use[r] = devs[r];
		}
		/* requests of whole stripes, about 8 MiB */
		size_t req = (size_t)g.stripe_data * (size_t)((8u << 20) / g.stripe_data ? (8u << 20) / g.stripe_data : 1);
		uint8_t *buf = aligned_alloc(64, req);
		for (size_t i = 0; i < req; i++)
			buf[i] = (uint8_t)(i * 131 + 7);
		rk_vol *v;
		if (rk_vol_open(&v, &g, use, doff)) {
			fprintf(stderr, "bench_vol: %s\n", rk_errmsg());
			return 2;
		}
		uint64_t min = 512ull << 20;
		double w = stream(v, buf, req, 1, min);
		double r = stream(v, buf, req, 0, min);
		rk_vol_close(v);
		use[1] = NULL;
		double d = 0;
		if (rk_geom_redundancy(&g) > 0 && rk_vol_open(&v, &g, use, doff) == RK_OK) {
			d = stream(v, buf, req, 0, min);
			rk_vol_close(v);
		}
		printf("%-14s %8zuKi %12.2f %12.2f %14.2f\n", cfg[c].name, req >> 10, w, r, d);
		free(buf);
		for (uint32_t k = 0; k < n; k++)
			rk_dev_close(devs[k]);
	}
	ratios(mib, rounds);
	return 0;
}
