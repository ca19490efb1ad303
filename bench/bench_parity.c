/* bench_parity.c: GB/s of data through the parity kernels (XOR, P+Q
 * generation, two-erasure recovery of 2 data blocks) for k = 4, 8, 16 data
 * blocks of 64 KiB and 1 MiB, hot in cache and rotating through a pool
 * larger than the last-level cache; the memory read and memcpy rates of the
 * same run; and ISA-L's xor_gen, pq_gen and ec_encode_data recovery with
 * ours/ISA-L ratios when libisal is installed.  ISA-L is loaded with
 * dlopen, so neither this binary nor the product links it.
 *
 *   bench_parity [--variant NAME] [--seconds S] [--pool MIB] [--quick]
 * (--seconds: least time of each of the 5 trials, whose best counts).
 */
#include <dlfcn.h>
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "rk_parity.h"

/* Time this thread spent on a CPU: on a shared machine, time the other
 * processes take the core away is not charged to the kernel measured. */
static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ISA-L, if present. */
static struct {
	int (*xor_gen)(int, int, void **);
	int (*pq_gen)(int, int, void **);
	void (*ec_init_tables)(int, int, unsigned char *, unsigned char *);
	void (*ec_encode_data)(int, int, int, unsigned char *, unsigned char **, unsigned char **);
	int (*gf_invert_matrix)(unsigned char *, unsigned char *, const int);
	int ok;
} isal;

static void isal_load(void)
{
	void *h = dlopen("libisal.so.2", RTLD_NOW);
	if (!h)
		h = dlopen("libisal.so", RTLD_NOW);
	if (!h)
		return;
	*(void **)&isal.xor_gen = dlsym(h, "xor_gen");
	*(void **)&isal.pq_gen = dlsym(h, "pq_gen");
	*(void **)&isal.ec_init_tables = dlsym(h, "ec_init_tables");
	*(void **)&isal.ec_encode_data = dlsym(h, "ec_encode_data");
	*(void **)&isal.gf_invert_matrix = dlsym(h, "gf_invert_matrix");
	isal.ok = isal.xor_gen && isal.pq_gen && isal.ec_init_tables && isal.ec_encode_data &&
		  isal.gf_invert_matrix;
}

enum op { OP_XOR, OP_PQ, OP_REC2 };
static const char *const op_name[] = { "xor", "p+q", "rec2" };

struct job {
	enum op op;
	int isal;                   /* 0: ours, 1: ISA-L */
	const struct rk_parity_algo *a;
	int k;
	size_t bs;
	uint8_t *base;              /* stripes of (k+2) blocks, back to back */
	size_t nstripes;            /* 1: hot */
	int fa, fb;
	unsigned char *gtbls;       /* ISA-L decode tables for (fa, fb) */
};

/* One operation on stripe s. */
static void run1(const struct job *j, size_t s)
{
	void *p[RK_PARITY_MAX_DISKS];
	uint8_t *b = j->base + s * (size_t)(j->k + 2) * j->bs;
	int d = j->k + 2;
	for (int i = 0; i < d; i++)
		p[i] = b + (size_t)i * j->bs;
	switch (j->op) {
	case OP_XOR:
		if (j->isal)
			isal.xor_gen(j->k + 1, (int)j->bs, p);
		else
			j->a->xor_gen(j->k + 1, j->bs, p);
		break;
	case OP_PQ:
		if (j->isal)
			isal.pq_gen(d, (int)j->bs, p);
		else
			j->a->gen(d, j->bs, p);
		break;
	case OP_REC2:
		if (j->isal) {
			unsigned char *src[RK_PARITY_MAX_DISKS], *out[2];
			int n = 0;
			for (int i = 0; i < d; i++)
				if (i != j->fa && i != j->fb)
					src[n++] = p[i];
			out[0] = p[j->fa];
			out[1] = p[j->fb];
			isal.ec_encode_data((int)j->bs, j->k, 2, j->gtbls, src, out);
		} else {
			j->a->rec_2data(d, j->bs, j->fa, j->fb, p);
		}
		break;
	}
}

static double min_seconds = 0.1;
static int trials = 5;

/* One trial of at least min_seconds from stripe *s on: GB/s of data. */
static double trial(const struct job *j, size_t *s)
{
	size_t n = 0;
	double t0 = now(), el;
	do {
		for (int r = 0; r < 4; r++, n++) {
			run1(j, *s);
			*s = *s + 1 < j->nstripes ? *s + 1 : 0;
		}
		el = now() - t0;
	} while (el < min_seconds);
	return (double)n * j->k * (double)j->bs / el / 1e9;
}

/* Best of interleaved trials of ours and ISA-L's (when j2 is given), so that
 * both see the same machine: other work on the cores only lowers rates. */
static void measure2(const struct job *j1, const struct job *j2, double *r1, double *r2)
{
	size_t s1 = 0, s2 = 0;
	*r1 = *r2 = 0;
	for (int t = 0; t < trials; t++) {
		double r = trial(j1, &s1);
		*r1 = r > *r1 ? r : *r1;
		if (j2) {
			r = trial(j2, &s2);
			*r2 = r > *r2 ? r : *r2;
		}
	}
}
static double measure(const struct job *j)
{
	double r, unused;
	measure2(j, NULL, &r, &unused);
	return r;
}

/* Decode matrix of the RAID-6 code (rows: identity, all ones, g^i) for lost
 * data fa, fb: rows fa and fb of the inverse of the surviving rows. */
static int isal_decode_tables(int k, int fa, int fb, unsigned char *gtbls)
{
	unsigned char *enc = calloc((size_t)(k + 2) * k, 1), *b = malloc((size_t)k * k),
		      *inv = malloc((size_t)k * k), dec[2 * 255];
	int r = 0, rc;
	for (int i = 0; i < k; i++) {
		enc[i * k + i] = 1;
		enc[k * k + i] = 1;
		enc[(k + 1) * k + i] = rk_gf_exp((unsigned)i);
	}
	for (int i = 0; i < k + 2; i++)
		if (i != fa && i != fb)
			memcpy(b + (size_t)(r++) * k, enc + (size_t)i * k, (size_t)k);
	rc = isal.gf_invert_matrix(b, inv, k);
	memcpy(dec, inv + (size_t)fa * k, (size_t)k);
	memcpy(dec + k, inv + (size_t)fb * k, (size_t)k);
	isal.ec_init_tables(k, 2, dec, gtbls);
	free(enc);
	free(b);
	free(inv);
	return rc;
}

/* Checks once that ISA-L computes the same P, Q and recovery as we do. */
static int isal_agrees(const struct rk_parity_algo *a, int k, size_t bs, uint8_t *buf,
		       unsigned char *gtbls, int fa, int fb)
{
	int d = k + 2, ok = 1;
	void *p[RK_PARITY_MAX_DISKS];
	uint8_t *ref = malloc((size_t)d * bs);
	for (int i = 0; i < d; i++)
		p[i] = buf + (size_t)i * bs;
	for (size_t i = 0; i < (size_t)k * bs; i++)
		buf[i] = (uint8_t)(rand() >> 7);
	a->gen(d, bs, p);
	memcpy(ref, buf, (size_t)d * bs);
	isal.pq_gen(d, (int)bs, p);
	ok &= !memcmp(ref, buf, (size_t)d * bs);
	struct job j = { .op = OP_REC2, .isal = 1, .k = k, .bs = bs, .base = buf, .nstripes = 1,
			 .fa = fa, .fb = fb, .gtbls = gtbls };
	memset(p[fa], 0xa5, bs);
	memset(p[fb], 0x5a, bs);
	run1(&j, 0);
	ok &= !memcmp(ref, buf, (size_t)d * bs);
	free(ref);
	return ok;
}

/* Reads the pool as 16 interleaved streams (as the kernels read k blocks),
 * XORing 32-byte loads. */
__attribute__((target("avx2"))) static double read_rate(const uint8_t *pool, size_t n)
{
	enum { S = 16 };
	size_t part = n / S / 64 * 64;
	double best = 0;
	volatile long long sink;
	for (int t = 0; t < 3; t++) {
		__m256i a0 = _mm256_setzero_si256(), a1 = a0;
		double t0 = now();
		for (size_t o = 0; o + 64 <= part; o += 64)
			for (int i = 0; i < S; i++) {
				const uint8_t *p = pool + (size_t)i * part + o;
				a0 = _mm256_xor_si256(a0, _mm256_load_si256((const __m256i *)p));
				a1 = _mm256_xor_si256(a1, _mm256_load_si256((const __m256i *)(p + 32)));
			}
		double el = now() - t0;
		sink = _mm256_extract_epi64(_mm256_xor_si256(a0, a1), 0);
		(void)sink;
		if (part * S / el / 1e9 > best)
			best = part * S / el / 1e9;
	}
	return best;
}

static double copy_rate(uint8_t *pool, size_t n)
{
	double best = 0;
	for (int t = 0; t < 3; t++) {
		double t0 = now();
		memcpy(pool + n / 2, pool, n / 2);
		double el = now() - t0;
		if (n / 2 / el / 1e9 > best)
			best = n / 2 / el / 1e9;
	}
	return best;
}

int main(int argc, char **argv)
{
	const struct rk_parity_algo *a = rk_parity();
	size_t pool_mib = 512;
	int quick = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--variant") && i + 1 < argc) {
			a = rk_parity_find(argv[++i]);
			if (!a || !a->valid()) {
				fprintf(stderr, "bench_parity: --variant %s: unknown or not runnable here\n", argv[i]);
				return 64;
			}
		} else if (!strcmp(argv[i], "--seconds") && i + 1 < argc) {
			min_seconds = atof(argv[++i]);
		} else if (!strcmp(argv[i], "--pool") && i + 1 < argc) {
			pool_mib = strtoull(argv[++i], NULL, 10);
		} else if (!strcmp(argv[i], "--quick")) {
			quick = 1;
			min_seconds = 0.05;
			trials = 3;
		} else {
			fprintf(stderr, "usage: bench_parity [--variant NAME] [--seconds S] [--pool MIB] [--quick]\n");
			return 64;
		}
	}
	if (pool_mib < 64)
		pool_mib = 64;
	isal_load();
	size_t pool_n = pool_mib << 20;
	uint8_t *pool = aligned_alloc(4096, pool_n);
	if (!pool) {
		fprintf(stderr, "bench_parity: cannot allocate a %zu MiB pool\n", pool_mib);
		return 2;
	}
	for (size_t i = 0; i < pool_n; i += 8)
		memcpy(pool + i, &(uint64_t){ i * 0x9e3779b97f4a7c15ull }, 8);

	printf("raidkit parity bench: variant %s; ISA-L %s; pool %zu MiB\n", a->name,
	       isal.ok ? "loaded (libisal.so.2)" : "not installed (scripts/install-deps bench)",
	       pool_mib);
	printf("memory read %.2f GB/s, memcpy %.2f GB/s (copied bytes), over the pool\n",
	       read_rate(pool, pool_n), copy_rate(pool, pool_n));
	printf("GB/s of data (k blocks per stripe) per second of CPU time, best of %d "
	       "interleaved trials;\nrec2 = two data blocks lost; ratio = ours / ISA-L\n\n", trials);
	printf("%-5s %3s %6s %-5s %10s %10s %7s\n", "op", "k", "block", "cache", "ours", "isa-l", "ratio");

	static const int ks[] = { 4, 8, 16 };
	static const size_t bss[] = { 64 << 10, 1 << 20 };
	unsigned char *gtbls = malloc(32 * 2 * 255);
	int disagree = 0;
	for (int op = OP_XOR; op <= OP_REC2; op++)
		for (int bi = 0; bi < 2; bi++)
			for (int ki = 0; ki < 3; ki++)
				for (int cold = 0; cold < 2; cold++) {
					int k = ks[ki];
					size_t bs = bss[bi], stripe = (size_t)(k + 2) * bs;
					struct job j = { .op = op, .a = a, .k = k, .bs = bs, .base = pool,
							 .nstripes = cold ? pool_n / stripe : 1,
							 .fa = 1, .fb = k - 2 };
					if (quick && (cold || bi))
						continue;
					if (isal.ok && op == OP_REC2) {
						isal_decode_tables(k, j.fa, j.fb, gtbls);
						j.gtbls = gtbls;
						if (!cold && !isal_agrees(a, k, bs, pool, gtbls, j.fa, j.fb))
							disagree = 1;
					}
					struct job ji = j;
					double ours, theirs;
					ji.isal = 1;
					measure2(&j, isal.ok ? &ji : NULL, &ours, &theirs);
					printf("%-5s %3d %5zuK %-5s %10.2f ", op_name[op], k, bs >> 10,
					       cold ? "pool" : "hot", ours);
					if (isal.ok)
						printf("%10.2f %7.2f\n", theirs, ours / theirs);
					else
						printf("%10s %7s\n", "-", "-");
					fflush(stdout);
				}
	if (disagree)
		printf("\nWARNING: ISA-L's P/Q or recovery differ from ours\n");
	else if (isal.ok)
		printf("\nISA-L's pq_gen and recovery give the same bytes as ours (checked)\n");

	/* Every variant on one hot shape. */
	printf("\nvariants, hot, k 8, 64K blocks (GB/s):\n%-8s %8s %8s %8s\n", "variant", "xor", "p+q", "rec2");
	for (const struct rk_parity_algo *const *v = rk_parity_algos(); *v; v++) {
		if (!(*v)->valid())
			continue;
		printf("%-8s", (*v)->name);
		for (int op = OP_XOR; op <= OP_REC2; op++) {
			struct job j = { .op = op, .a = *v, .k = 8, .bs = 64 << 10, .base = pool,
					 .nstripes = 1, .fa = 1, .fb = 6 };
			printf(" %8.2f", measure(&j));
		}
		printf("\n");
		fflush(stdout);
	}
	free(gtbls);
	free(pool);
	return disagree ? 1 : 0;
}
