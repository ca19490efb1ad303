/* bench_util.h: clocks and data shared by the benchmarks (header-only: each
 * bench/bench_*.c is its own program). */
#ifndef RK_BENCH_UTIL_H
#define RK_BENCH_UTIL_H

#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

/* Wall-clock seconds (monotonic). */
static inline double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* CPU seconds (user + system) of this process (RUSAGE_SELF) or of its
 * waited-for children (RUSAGE_CHILDREN). */
static inline double cpu(int who)
{
	struct rusage ru;
	getrusage(who, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
	       ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) * 1e-6;
}

/* Keeps in *BEST the least of the values seen (best-of-N timings). */
static inline void keep_min(double *best, double x)
{
	if (x < *best)
		*best = x;
}

/* Pseudo-random bytes (xorshift64*), whole 8-byte words of P[0, N). */
static uint64_t bench_rs = 0x9e3779b97f4a7c15ull;
static inline void fill(uint8_t *p, size_t n)
{
	for (size_t i = 0; i + 8 <= n; i += 8) {
		bench_rs ^= bench_rs >> 12;
		bench_rs ^= bench_rs << 25;
		bench_rs ^= bench_rs >> 27;
		uint64_t v = bench_rs * 0x2545f4914f6cdd1dull;
		memcpy(p + i, &v, 8);
	}
}

#endif
