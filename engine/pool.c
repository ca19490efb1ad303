/* pool.c: the engine's thread pool (see rk_pool.h).
 *
 * Jobs are taken from one atomic counter that also carries the batch's tag
 * (tag << 32 | next job), so an idle worker picks the next job as soon as
 * it finishes one, and a thread that wakes late, after its batch ended,
 * can never take a job of the next batch with the old batch's function.
 * A batch therefore ends when its last job has finished: the caller never
 * waits for threads that took no job (on a busy machine a wake-up can take
 * a time slice). */
#include <pthread.h>
#include <stdlib.h>
#include "rk_pool.h"

struct rk_pool {
	pthread_t thread[RK_POOL_MAX_THREADS];
	uint32_t nthreads;
	pthread_mutex_t mu;
	pthread_cond_t go, done;
	uint64_t generation;     /* bumped per batch, under mu: wakes the threads */
	int quit;
	/* the batch, set under mu */
	rk_pool_fn fn;
	void *ctx;
	uint32_t njobs;
	uint64_t next_job;       /* atomic: (uint32_t)generation << 32 | next job */
	uint32_t unfinished;     /* jobs not finished yet, under mu */
};

/* One batch as a thread saw it when it woke. */
struct batch_view {
	uint32_t tag;
	rk_pool_fn fn;
	void *ctx;
	uint32_t njobs;
};

/* Runs jobs of batch B until none is left (or another batch began);
 * returns how many. */
static uint32_t take_jobs(rk_pool *p, uint32_t worker, const struct batch_view *b)
{
	uint32_t ran = 0;
	uint64_t cur = __atomic_load_n(&p->next_job, __ATOMIC_ACQUIRE);
	for (;;) {
		if ((uint32_t)(cur >> 32) != b->tag || (uint32_t)cur >= b->njobs)
			return ran;
		if (!__atomic_compare_exchange_n(&p->next_job, &cur, cur + 1, 1, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			continue;   /* CUR now holds the counter's value */
		b->fn(b->ctx, worker, (uint32_t)cur);
		ran++;
		cur = __atomic_load_n(&p->next_job, __ATOMIC_ACQUIRE);
	}
}

/* Counts RAN jobs finished (under mu). */
static void jobs_finished(rk_pool *p, uint32_t ran)
{
	if (!ran)
		return;
	p->unfinished -= ran;
	if (p->unfinished == 0)
		pthread_cond_broadcast(&p->done);
}

/* The current batch (under mu). */
static struct batch_view current_batch(const rk_pool *p)
{
	return (struct batch_view){ (uint32_t)p->generation, p->fn, p->ctx, p->njobs };
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
	uint64_t seen = 0;   /* batches start at 1: one submitted before this thread ran is taken too */
	pthread_mutex_lock(&p->mu);
	for (;;) {
		while (p->generation == seen && !p->quit)
			pthread_cond_wait(&p->go, &p->mu);
		if (p->quit)
			break;
		seen = p->generation;
		struct batch_view b = current_batch(p);
		pthread_mutex_unlock(&p->mu);
		uint32_t ran = take_jobs(p, me, &b);
		pthread_mutex_lock(&p->mu);
		jobs_finished(p, ran);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

int rk_thread_start(pthread_t *t, void *(*fn)(void *), void *arg)
{
	pthread_attr_t attr;
	int e = pthread_attr_init(&attr);
	if (e)
		return e;
	e = pthread_attr_setstacksize(&attr, RK_THREAD_STACK);
	if (!e)
		e = pthread_create(t, &attr, fn, arg);
	pthread_attr_destroy(&attr);
	return e;
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
		if (!ta || rk_thread_start(&p->thread[i], thread_main, ta)) {
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

/* rk_pool_submit; returns the batch as the caller runs it. */
static struct batch_view submit_batch(rk_pool *p, uint32_t njobs, rk_pool_fn fn, void *ctx)
{
	rk_pool_wait(p);   /* one batch at a time */
	pthread_mutex_lock(&p->mu);
	p->fn = fn;
	p->ctx = ctx;
	p->njobs = njobs;
	p->unfinished = njobs;
	p->generation++;
	__atomic_store_n(&p->next_job, (uint64_t)(uint32_t)p->generation << 32, __ATOMIC_RELEASE);
	struct batch_view b = current_batch(p);
	if (p->nthreads && njobs)
		pthread_cond_broadcast(&p->go);
	pthread_mutex_unlock(&p->mu);
	return b;
}

void rk_pool_submit(rk_pool *p, uint32_t njobs, rk_pool_fn fn, void *ctx)
{
	submit_batch(p, njobs, fn, ctx);
}

void rk_pool_wait(rk_pool *p)
{
	pthread_mutex_lock(&p->mu);
	if (p->nthreads == 0 && p->unfinished) {
		/* no threads: the batch runs here, as worker 0 */
		struct batch_view b = current_batch(p);
		pthread_mutex_unlock(&p->mu);
		uint32_t ran = take_jobs(p, 0, &b);
		pthread_mutex_lock(&p->mu);
		jobs_finished(p, ran);
	}
	while (p->unfinished)
		pthread_cond_wait(&p->done, &p->mu);
	pthread_mutex_unlock(&p->mu);
}

void rk_pool_run(rk_pool *p, uint32_t njobs, rk_pool_fn fn, void *ctx)
{
	struct batch_view b = submit_batch(p, njobs, fn, ctx);
	uint32_t ran = take_jobs(p, p->nthreads, &b);
	pthread_mutex_lock(&p->mu);
	jobs_finished(p, ran);
	pthread_mutex_unlock(&p->mu);
	rk_pool_wait(p);
}
