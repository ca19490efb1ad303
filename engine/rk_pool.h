/* rk_pool.h: the one thread pool of the engine (stripe engine, scrub).
 *
 * A pool runs one batch of jobs at a time: jobs 0..njobs-1 of one function,
 * each job exactly once, on the pool's threads (worker numbers 0..nthreads-1)
 * and, with rk_pool_run, on the caller too (worker number nthreads), so a
 * per-worker scratch array needs rk_pool_workers() entries.  Jobs must not
 * submit to the same pool.  A pool of 0 threads runs every job on the
 * caller (in rk_pool_run, or in rk_pool_wait after rk_pool_submit).
 */
#ifndef RK_POOL_H
#define RK_POOL_H

#include <pthread.h>
#include <stdint.h>
#include "rk_err.h"

typedef struct rk_pool rk_pool;
typedef void (*rk_pool_fn)(void *ctx, uint32_t worker, uint32_t job);

#define RK_POOL_MAX_THREADS 64u

/* Starts NTHREADS threads (at most RK_POOL_MAX_THREADS).  RK_E_NOMEM when
 * memory or threads cannot be had (no thread is left running then). */
rk_err   rk_pool_create(rk_pool **out, uint32_t nthreads);
/* Waits for a batch still running, stops the threads and frees; NULL ok. */
void     rk_pool_destroy(rk_pool *p);
/* Threads + 1: the size of a per-worker scratch array. */
uint32_t rk_pool_workers(const rk_pool *p);
/* Hands the batch to the threads and returns at once (the caller may work
 * on something else meanwhile); rk_pool_wait ends it. */
void     rk_pool_submit(rk_pool *p, uint32_t njobs, rk_pool_fn fn, void *ctx);
/* Waits until every job of the submitted batch has run (a pool without
 * threads runs them here, as worker 0). */
void     rk_pool_wait(rk_pool *p);
/* Submit, run jobs on the caller as well, wait: a parallel for-loop. */
void     rk_pool_run(rk_pool *p, uint32_t njobs, rk_pool_fn fn, void *ctx);

/* Every thread raidkit starts gets a stack of this size, not the 8 MiB
 * default: none keeps large arrays on its stack, and under ASan the
 * shadow of a thread's whole stack is cleared at each start and join. */
#define RK_THREAD_STACK (1u << 20)

/* pthread_create with an RK_THREAD_STACK stack; returns its result (0 ok). */
int      rk_thread_start(pthread_t *t, void *(*fn)(void *), void *arg);

#endif
