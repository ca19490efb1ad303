/* pool.c: the engine's thread pool (see rk_pool.h).
 *
 * Jobs are taken by an atomic counter, so an idle worker picks the next job
 * as soon as it finishes one; the batch ends when every job has finished. */
#include <pthread.h>
#include <stdlib.h>
#include "rk_pool.h"

struct rk_pool {
	pthread_t thread[RK_POOL_MAX_THREADS];
	uint32_t nthreads;
	pthread_mutex_t mu;
	pthread_cond_t go, done;
	uint64_t generation;     /* bumped per batch: wakes the threads */
	int quit;
	/* the batch */
	rk_pool_fn fn;
	void *ctx;
	uint32_t njobs;
	uint32_t next_job;       /* atomic */
	uint32_t unfinished;     /* jobs not finished yet, under mu */
	uint32_t helpers_out;    /* threads still inside the batch, under mu */
};

/* Runs jobs of the current batch until none is left; returns how many. */
static uint32_t take_jobs(rk_pool *p, uint32_t worker)
{
	uint32_t ran = 0;
	for (;;) {
		uint32_t j = __atomic_fetch_add(&p->next_job, 1, __ATOMIC_RELAXED);
		if (j >= p->njobs)
			return ran;
		p->fn(p->ctx, worker, j);
		ran++;
	}
}

static void finish_jobs(rk_pool *p, uint32_t ran)
{
	pthread_mutex_lock(&p->mu);
	p->unfinished -= ran;
	if (p->unfinished == 0)
		pthread_cond_broadcast(&p->done);
	pthread_mutex_unlock(&p->mu);
}

struct thread_arg {
	rk_pool *pool;
	uint32_t worker;
};

static void *thread_main(void *arg)
{
	struct thread_arg *ta = arg;
	rk_pool *p = ta->pool;
	uint32_t me = ta->worker;
	free(ta);
	uint64_t seen = 0;
	pthread_mutex_lock(&p->mu);
	for (;;) {
		while (p->generation == seen && !p->quit)
			pthread_cond_wait(&p->go, &p->mu);
		if (p->quit)
			break;
		seen = p->generation;
		pthread_mutex_unlock(&p->mu);
		uint32_t ran = take_jobs(p, me);
		pthread_mutex_lock(&p->mu);
		p->unfinished -= ran;
		p->helpers_out--;
		if (p->unfinished == 0 || p->helpers_out == 0)
			pthread_cond_broadcast(&p->done);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

rk_err rk_pool_create(rk_pool **out, uint32_t nthreads)
{
	*out = NULL;
	if (nthreads > RK_POOL_MAX_THREADS)
		nthreads = RK_POOL_MAX_THREADS;
	rk_pool *p = calloc(1, sizeof *p);
	if (!p)
		return rk_fail(RK_E_NOMEM, "thread pool: out of memory");
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->go, NULL);
	pthread_cond_init(&p->done, NULL);
	for (uint32_t i = 0; i < nthreads; i++) {
		struct thread_arg *ta = malloc(sizeof *ta);
		if (ta) {
			ta->pool = p;
			ta->worker = i;
		}
		if (!ta || pthread_create(&p->thread[i], NULL, thread_main, ta)) {
			free(ta);
			rk_pool_destroy(p);
			return rk_fail(RK_E_NOMEM, "thread pool: cannot start thread %u of %u", i + 1, nthreads);
		}
		p->nthreads++;
	}
	*out = p;
	return RK_OK;
}

void rk_pool_destroy(rk_pool *p)
{
	if (!p)
		return;
	rk_pool_wait(p);
	pthread_mutex_lock(&p->mu);
	p->quit = 1;
	pthread_cond_broadcast(&p->go);
	pthread_mutex_unlock(&p->mu);
	for (uint32_t i = 0; i < p->nthreads; i++)
		pthread_join(p->thread[i], NULL);
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->go);
	pthread_cond_destroy(&p->done);
	free(p);
}

uint32_t rk_pool_workers(const rk_pool *p)
{
	return p->nthreads + 1;
}

void rk_pool_submit(rk_pool *p, uint32_t njobs, rk_pool_fn fn, void *ctx)
{
	rk_pool_wait(p);   /* one batch at a time */
	pthread_mutex_lock(&p->mu);
	p->fn = fn;
	p->ctx = ctx;
	p->njobs = njobs;
	__atomic_store_n(&p->next_job, 0, __ATOMIC_RELAXED);
	p->unfinished = njobs;
	if (p->nthreads && njobs) {
		p->helpers_out = p->nthreads;
		p->generation++;
		pthread_cond_broadcast(&p->go);
	}
	pthread_mutex_unlock(&p->mu);
}

void rk_pool_wait(rk_pool *p)
{
	if (p->nthreads == 0 && p->unfinished)
		finish_jobs(p, take_jobs(p, 0));
	pthread_mutex_lock(&p->mu);
	/* every job done, and no thread still looking at this batch's fields */
	while (p->unfinished || p->helpers_out)
		pthread_cond_wait(&p->done, &p->mu);
	pthread_mutex_unlock(&p->mu);
}

void rk_pool_run(rk_pool *p, uint32_t njobs, rk_pool_fn fn, void *ctx)
{
	rk_pool_submit(p, njobs, fn, ctx);
	finish_jobs(p, take_jobs(p, p->nthreads));
	rk_pool_wait(p);
}
