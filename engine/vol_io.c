/* vol_io.c: the stripe engine's member I/O queue.
 *
 * A step of an operation queues its member requests; vol_run sorts them by
 * role and offset, merges neighbours into large requests and runs one job
 * per role on the shared thread pool (the caller runs jobs too), then
 * handles the failures: RK_E_IO fails the member (or, inside rk_vol_read,
 * notes the range for repair), anything else ends the operation.
 */
#include <stdio.h>
#include <stdlib.h>
#include "vol_int.h"

#define MERGE_LIMIT (64u << 20)   /* largest merged request */

rk_err vol_queue(rk_vol *v, uint32_t role, int is_write, uint64_t off, void *buf, size_t len)
{
	if (len == 0)
		return RK_OK;
	if (v->nqueued == v->cap_queue) {
		uint32_t nc = v->cap_queue ? v->cap_queue * 2 : 256;
		struct member_io *nq = realloc(v->queue, nc * sizeof *nq);
		uint32_t *ng = realloc(v->group_start, (nc + 1) * sizeof *ng);
		if (nq)
			v->queue = nq;
		if (ng)
			v->group_start = ng;
		if (!nq || !ng)
			return rk_fail(RK_E_NOMEM, "volume: out of memory");
		v->cap_queue = nc;
	}
	v->queue[v->nqueued++] = (struct member_io){ .role = role, .is_write = (uint32_t)is_write, .off = off,
	                                             .buf = buf, .len = len };
	return RK_OK;
}

void vol_pool_start(rk_vol *v)
{
	uint32_t n = v->nroles < VOL_MAX_THREADS ? v->nroles : VOL_MAX_THREADS;
	/* without threads (one member, or none to be had) the caller runs the I/O */
	if (n > 1 && rk_pool_create(&v->pool, n - 1) != RK_OK)
		v->pool = NULL;
}

/* Whether a read error of ROLE inside rk_vol_read is to be repaired
 * rather than fail the member (see rk_vol_on_repair). */
static int repairs_reads(const rk_vol *v, uint32_t role)
{
	return v->in_read && role < v->nroles && rk_geom_redundancy(&v->g) > 0 && v->role_state[role] != ROLE_FAILED &&
	       rk_dev_writable(v->devs[role]);
}

/* Runs the requests of group (role) JOB in order; after a failure the rest
 * of the group is not tried and carries the same error (marked untried),
 * except read errors to be repaired: every request is tried, so each bad
 * range is noted, however the reads were split. */
static void run_group(void *ctx, uint32_t worker, uint32_t job)
{
	rk_vol *v = ctx;
	rk_err prev = RK_OK;
	int wrote = 0;
	for (uint32_t i = v->group_start[job]; i < v->group_start[job + 1]; i++) {
		struct member_io *io = &v->queue[i];
		io->untried = 0;
		if (prev && !(prev == RK_E_IO && !io->is_write && repairs_reads(v, io->role))) {
			io->err = prev;
			io->untried = 1;
			continue;
		}
		rk_dev *d = v->devs[io->role];
		uint64_t at = v->data_offset[io->role] + io->off;
		io->err = io->is_write ? rk_dev_pwrite(d, io->buf, io->len, at) : rk_dev_pread(d, io->buf, io->len, at);
		wrote |= io->is_write;
		if (io->err) {
			snprintf(v->io_msg[io->role], sizeof v->io_msg[0], "%s", rk_errmsg());
			prev = io->err;
		}
	}
	/* rk_vol_write_flush: the group's last request carries the flush's outcome */
	uint32_t last = v->group_start[job + 1] - 1;
	if (v->flush_writes && wrote && !prev && (v->queue[last].err = rk_dev_flush(v->devs[v->queue[last].role])))
		snprintf(v->io_msg[v->queue[last].role], sizeof v->io_msg[0], "%s", rk_errmsg());
}

static int io_cmp(const void *a, const void *b)
{
	const struct member_io *x = a, *y = b;
	if (x->role != y->role)
		return x->role < y->role ? -1 : 1;
	if (x->off != y->off)
		return x->off < y->off ? -1 : 1;
	return 0;
}

/* Sorts the N queued requests, merges neighbours on a member (adjacent on
 * the member and in memory) and groups them by role; returns the number of
 * requests left (v->group_start gets the groups). */
static uint32_t merge_and_group(rk_vol *v, uint32_t n, uint32_t *ngroups)
{
	struct member_io *q = v->queue;
	qsort(q, n, sizeof *q, io_cmp);
	uint32_t m = 0;
	for (uint32_t i = 0; i < n; i++) {
		struct member_io *last = m ? &q[m - 1] : NULL;
		if (last && last->role == q[i].role && last->is_write == q[i].is_write && last->off + last->len == q[i].off &&
		    last->buf + last->len == q[i].buf && last->len + q[i].len <= MERGE_LIMIT) {
			last->len += q[i].len;
			continue;
		}
		q[m++] = q[i];
	}
	uint32_t ng = 0;
	for (uint32_t i = 0; i < m; i++)
		if (i == 0 || q[i].role != q[i - 1].role)
			v->group_start[ng++] = i;
	v->group_start[ng] = m;
	*ngroups = ng;
	return m;
}

/* After the run: fails members on RK_E_IO, returns the first other error. */
static rk_err handle_errors(rk_vol *v, uint32_t m)
{
	struct member_io *q = v->queue;
	rk_err fatal = RK_OK;
	for (uint32_t i = 0; i < m; i++) {
		if (!q[i].err)
			continue;
		/* without redundancy a member is never dropped: a bad sector of
		 * a RAID-0 member fails that read, not the whole volume */
		if (q[i].err == RK_E_IO && q[i].role < v->nroles && rk_geom_redundancy(&v->g) > 0) {
			/* a read error inside rk_vol_read on a writable member: repaired
			 * afterwards (only the request that really failed: later ones of
			 * its group were not tried) */
			if (!q[i].is_write && repairs_reads(v, q[i].role)) {
				if (q[i].untried || vol_note_read_error(v, q[i].role, q[i].off, q[i].len))
					continue;
			}
			vol_fail_role(v, q[i].role, RK_E_IO);
		} else if (!fatal) {
			fatal = rk_fail(q[i].err, "%s", v->io_msg[q[i].role]);
		}
	}
	return fatal;
}

rk_err vol_run(rk_vol *v)
{
	uint32_t n = v->nqueued, ng;
	v->nqueued = 0;
	if (n == 0)
		return RK_OK;
	uint32_t m = merge_and_group(v, n, &ng);
	if (!v->pool || v->serial || ng == 1) {
		for (uint32_t g = 0; g < ng; g++)
			run_group(v, 0, g);
	} else {
		rk_pool_run(v->pool, ng, run_group, v);
	}
	return handle_errors(v, m);
}

rk_err vol_run_retrying(rk_vol *v, rk_err (*queue_step)(rk_vol *v, void *ctx, uint32_t attempt), void *ctx)
{
	for (uint32_t attempt = 0;; attempt++) {
		if (!vol_readable(v) || attempt > v->nroles)
			return vol_too_few(v);
		rk_err e = queue_step(v, ctx, attempt);
		uint32_t before = vol_ndown(v);
		if (e || (e = vol_run(v)))
			return e;
		if (vol_ndown(v) == before)
			return RK_OK;
	}
}
