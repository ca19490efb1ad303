/* test_pool.c: the engine's thread pool (rk_pool.h): every job of a batch
 * runs exactly once, worker numbers stay below rk_pool_workers(), a pool
 * without threads runs everything on the caller, submit/wait lets the
 * caller work meanwhile, destroy waits for a pending batch, and many
 * batches run back to back on one pool. */
#include <check.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "rk_pool.h"
#include "helpers/rk_test.h"

#define MAX_JOBS 4096u

struct batch {
	uint32_t runs[MAX_JOBS];      /* per job: how often it ran (atomic) */
	uint32_t worker_of[MAX_JOBS]; /* per job: the worker number it ran on */
	uint32_t bad_worker;          /* a worker number >= this was seen (atomic flag) */
	uint32_t workers;
	pthread_t caller;
	uint32_t on_caller;           /* jobs that ran on the calling thread (atomic) */
	uint32_t spin;                /* busy work per job, to let the threads interleave */
};

static void count_job(void *ctx, uint32_t worker, uint32_t job)
{
	struct batch *b = ctx;
	__atomic_fetch_add(&b->runs[job], 1, __ATOMIC_RELAXED);
	b->worker_of[job] = worker;
	if (worker >= b->workers)
		__atomic_store_n(&b->bad_worker, 1, __ATOMIC_RELAXED);
	if (pthread_equal(pthread_self(), b->caller))
		__atomic_fetch_add(&b->on_caller, 1, __ATOMIC_RELAXED);
	volatile uint32_t x = 0;
	for (uint32_t i = 0; i < b->spin; i++)
		x += i;
	(void)x;
}

static struct batch *new_batch(const rk_pool *p, uint32_t spin)
{
	struct batch *b = calloc(1, sizeof *b);
	ck_assert_ptr_nonnull(b);
	b->workers = rk_pool_workers(p);
	b->caller = pthread_self();
	b->spin = spin;
	return b;
}

static void check_once(const struct batch *b, uint32_t njobs)
{
	for (uint32_t j = 0; j < njobs; j++)
		ck_assert_msg(b->runs[j] == 1, "job %u ran %u times", j, b->runs[j]);
	for (uint32_t j = njobs; j < MAX_JOBS; j++)
		ck_assert_msg(b->runs[j] == 0, "job %u past the batch ran", j);
	ck_assert_uint_eq(b->bad_worker, 0);
}

START_TEST(every_job_once)
{
	static const uint32_t threads[] = { 1, 2, 3, 7, RK_POOL_MAX_THREADS };
	static const uint32_t jobs[] = { 0, 1, 2, 5, 64, 1000, MAX_JOBS };
	for (unsigned t = 0; t < sizeof threads / sizeof threads[0]; t++) {
		rk_pool *p;
		ck_assert_int_eq(rk_pool_create(&p, threads[t]), RK_OK);
		ck_assert_uint_eq(rk_pool_workers(p), threads[t] + 1);
		for (unsigned j = 0; j < sizeof jobs / sizeof jobs[0]; j++) {
			struct batch *b = new_batch(p, 200);
			rk_pool_run(p, jobs[j], count_job, b);
			check_once(b, jobs[j]);
			free(b);
		}
		rk_pool_destroy(p);
	}
}
END_TEST

START_TEST(thread_count_capped)
{
	rk_pool *p;
	ck_assert_int_eq(rk_pool_create(&p, RK_POOL_MAX_THREADS + 100), RK_OK);
	ck_assert_uint_eq(rk_pool_workers(p), RK_POOL_MAX_THREADS + 1);
	struct batch *b = new_batch(p, 0);
	rk_pool_run(p, 500, count_job, b);
	check_once(b, 500);
	free(b);
	rk_pool_destroy(p);
	rk_pool_destroy(NULL);
}
END_TEST

START_TEST(no_threads_runs_on_caller)
{
	rk_pool *p;
	ck_assert_int_eq(rk_pool_create(&p, 0), RK_OK);
	ck_assert_uint_eq(rk_pool_workers(p), 1);
	/* rk_pool_run */
	struct batch *b = new_batch(p, 0);
	rk_pool_run(p, 300, count_job, b);
	check_once(b, 300);
	ck_assert_uint_eq(b->on_caller, 300);
	for (uint32_t j = 0; j < 300; j++)
		ck_assert_uint_eq(b->worker_of[j], 0);
	free(b);
	/* submit runs nothing yet; wait runs it all, as worker 0 */
	b = new_batch(p, 0);
	rk_pool_submit(p, 77, count_job, b);
	for (uint32_t j = 0; j < 77; j++)
		ck_assert_uint_eq(b->runs[j], 0);
	rk_pool_wait(p);
	check_once(b, 77);
	ck_assert_uint_eq(b->on_caller, 77);
	free(b);
	rk_pool_destroy(p);
}
END_TEST

/* A job that waits until the caller says go: proves the caller gets
 * control back from rk_pool_submit while the batch is still running. */
struct gate {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int open;
	uint32_t ran;
};

static void gated_job(void *ctx, uint32_t worker, uint32_t job)
{
	struct gate *g = ctx;
	pthread_mutex_lock(&g->mu);
	while (!g->open)
		pthread_cond_wait(&g->cv, &g->mu);
	g->ran++;
	pthread_mutex_unlock(&g->mu);
}

START_TEST(submit_then_wait_overlaps)
{
	rk_pool *p;
	ck_assert_int_eq(rk_pool_create(&p, 2), RK_OK);
	struct gate g = { .open = 0 };
	pthread_mutex_init(&g.mu, NULL);
	pthread_cond_init(&g.cv, NULL);
	rk_pool_submit(p, 6, gated_job, &g);
	/* back on the caller with the batch blocked: work here, then open */
	pthread_mutex_lock(&g.mu);
	ck_assert_uint_eq(g.ran, 0);
	g.open = 1;
	pthread_cond_broadcast(&g.cv);
	pthread_mutex_unlock(&g.mu);
	rk_pool_wait(p);
	ck_assert_uint_eq(g.ran, 6);
	rk_pool_wait(p);   /* a second wait returns at once */
	/* a new submit after wait starts a new batch */
	struct batch *b = new_batch(p, 100);
	rk_pool_submit(p, 200, count_job, b);
	rk_pool_wait(p);
	check_once(b, 200);
	ck_assert_uint_eq(b->on_caller, 0);   /* submit + wait: only the threads run jobs */
	free(b);
	rk_pool_destroy(p);
	pthread_mutex_destroy(&g.mu);
	pthread_cond_destroy(&g.cv);
}
END_TEST

START_TEST(destroy_with_batch_pending)
{
	for (uint32_t threads = 0; threads <= 3; threads++) {
		rk_pool *p;
		ck_assert_int_eq(rk_pool_create(&p, threads), RK_OK);
		struct batch *b = new_batch(p, 1000);
		rk_pool_submit(p, 1500, count_job, b);
		rk_pool_destroy(p);   /* waits for (or, without threads, runs) the batch */
		check_once(b, 1500);
		free(b);
	}
}
END_TEST

START_TEST(many_batches)
{
	rk_pool *p;
	ck_assert_int_eq(rk_pool_create(&p, 3), RK_OK);
	struct batch *b = new_batch(p, 0);
	for (uint32_t round = 0; round < 300; round++) {
		uint32_t n = round % 37;
		memset(b->runs, 0, sizeof b->runs);
		if (round % 3 == 0) {
			rk_pool_submit(p, n, count_job, b);
			rk_pool_wait(p);
		} else {
			rk_pool_run(p, n, count_job, b);
		}
		check_once(b, n);
	}
	free(b);
	rk_pool_destroy(p);
}
END_TEST

RK_TEST_SUITE("pool", { "pool", 60, NULL, NULL, 0,
	  RK_TESTS(RK_TEST(every_job_once),
	           RK_TEST(thread_count_capped),
	           RK_TEST(no_threads_runs_on_caller),
	           RK_TEST(submit_then_wait_overlaps),
	           RK_TEST(destroy_with_batch_pending),
	           RK_TEST(many_batches)) })
