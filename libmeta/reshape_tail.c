/* reshape_tail.c: the new space of a forward reshape zeroed while the copy
 * goes on.  Member rows of the new geometry from hi_new(end) on (`end` =
 * the old volume rounded up to a new stripe) hold nothing copied and are
 * zeroed before the new geometry is published (spec/reshape.md, "Order of
 * writes" 3).  Once checkpoint P is durable, the part of them below the
 * old blocks still to be read is free:
 *
 *     [hi_new(end), shift + lo_old(P))     (offsets from the new data area)
 *
 * no new block of a volume byte lies there (all end by hi_new(end)) and
 * every old block of bytes >= P lies at or above shift + lo_old(P); a
 * later checkpoint only moves that bound up.  So after each checkpoint the
 * newly freed part is zeroed on every member by a pool of its own, while
 * the writer writes the next window and the reader reads ahead: the
 * members' write bandwidth, not the order, bounds the tail.  What a crash
 * leaves there is never read (the next run zeroes the whole tail again).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rk_util.h"
#include "resize_int.h"

struct reshape_tail {
	struct resize_set *s;
	rk_pool *pool;
	uint32_t span;
	uint64_t doff;             /* the new data offset */
	uint64_t done, end;        /* [done, end) still to zero (new-relative) */
	uint64_t a, b;             /* the batch under way: [a, b) */
	int busy;
	rk_err *err;               /* by role */
	char (*msg)[512];
};

#define TAIL_THREADS 8u   /* members zeroed at once, at most (each thread costs memory: 255 members stay < 64 MiB) */

rk_err reshape_tail_start(struct reshape_tail **out, struct resize_set *s, uint64_t doff, uint64_t from,
                          uint64_t end)
{
	struct reshape_tail *z = calloc(1, sizeof *z);
	*out = NULL;
	if (!z)
		return rk_fail(RK_E_NOMEM, "out of memory");
	z->s = s;
	z->span = s->span;
	z->doff = doff;
	z->done = from < end ? from : end;
	z->end = end;
	z->err = calloc(z->span ? z->span : 1, sizeof *z->err);
	z->msg = calloc(z->span ? z->span : 1, sizeof *z->msg);
	rk_err e = z->err && z->msg ? RK_OK : rk_fail(RK_E_NOMEM, "out of memory");
	if (!e && z->done < z->end)   /* no tail: no threads */
		e = rk_pool_create(&z->pool, z->span < TAIL_THREADS ? z->span : TAIL_THREADS);
	if (e) {
		reshape_tail_stop(z);
		return e;
	}
	*out = z;
	return RK_OK;
}

static void tail_job(void *ctx, uint32_t worker, uint32_t role)
{
	struct reshape_tail *z = ctx;
	(void)worker;
	if (!z->s->dev[role])
		return;
	if ((z->err[role] = resize_zero_range(z->s->dev[role], z->doff + z->a, z->b - z->a)))
		snprintf(z->msg[role], sizeof z->msg[role], "%s", rk_errmsg());
}

rk_err reshape_tail_wait(struct reshape_tail *z)
{
	if (!z || !z->busy)
		return RK_OK;
	rk_pool_wait(z->pool);
	z->busy = 0;
	for (uint32_t r = 0; r < z->span; r++)
		if (z->err[r])
			return rk_fail(z->err[r], "%s", z->msg[r]);
	z->done = z->b;
	return RK_OK;
}

rk_err reshape_tail_free_to(struct reshape_tail *z, uint64_t upto)
{
	if (!z || !z->pool)
		return RK_OK;
	rk_err e = reshape_tail_wait(z);
	if (e)
		return e;
	if (upto > z->end)
		upto = z->end;
	if (upto <= z->done)
		return RK_OK;
	z->a = z->done;
	z->b = upto;
	z->busy = 1;
	rk_pool_submit(z->pool, z->span, tail_job, z);
	return RK_OK;
}

uint64_t reshape_tail_done(const struct reshape_tail *z)
{
	return z->done;
}

void reshape_tail_stop(struct reshape_tail *z)
{
	if (!z)
		return;
	rk_pool_destroy(z->pool);   /* waits for a batch under way */
	free(z->err);
	free(z->msg);
	free(z);
}
