/* bench_vol.c: the stripe engine over memory members: GB/s of volume data
 * for sequential full-stripe writes, healthy reads and degraded reads
 * (reconstructing), RAID-0/5/6/10.  Usage: bench_vol [member MiB] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "rk_dev.h"
#include "rk_geom.h"
#include "rk_parity.h"
#include "rk_vol.h"

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

int main(int argc, char **argv)
{
	uint64_t mib = argc > 1 ? strtoull(argv[1], NULL, 10) : 64;
	if (mib < 8)
		mib = 8;
	static const struct { const char *name; int32_t level; uint32_t layout; uint32_t n; uint64_t chunk; } cfg[] = {
		{ "raid0 4x", 0, 0, 4, 512 << 10 },
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
		uint64_t min = 2ull << 30;
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
	return 0;
}
