/* resize.c: what raid-resize's library operations share: the member set as
 * found (loaded, checked, its superblocks committed), zeroing and flushing
 * members, engines over the old and new geometry; and reading mid-reshape.
 * Size changes are resize_size.c, reshapes reshape.c (their ordering rule
 * reshape_plan.c), reverts reshape_revert.c; spec/reshape.md has the why
 * of the order of writes, rk_resize.h the contracts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rk_array.h"
#include "rk_le.h"
#include "resize_int.h"
#include "rk_fmt.h"
#include "rk_pool.h"
#include "rk_util.h"

#define ZERO_BUF (1u << 20)

void resize_set_free(struct resize_set *s)
{
	if (s->sb)
		for (uint32_t r = 0; r < RK_SB_MAX_ROLES; r++)
			free(s->sb[r]);
	RK_FREE_ALL(s->sb, s->dev, s->doff, s->ws, s->left, s->t);
	memset(s, 0, sizeof *s);
}

/* Every role of the span must be given (and, as set_load checked, active). */
rk_err resize_set_need_all(const struct resize_set *s)
{
	for (uint32_t r = 0; r < s->span; r++)
		if (!s->dev[r])
			return rk_fail(RK_E_TOOFEW, "role %u is %s: every member of the array is needed", r,
			               s->t->roles[r].state == RK_ROLE_ACTIVE ? "not among the members given" : "missing");
	return RK_OK;
}

/* Mid-reshape, roles may be missing as long as both geometries can still
 * be read and written without them (a member lost, or left out by a
 * degraded write, in the middle of a reshape): the restripe reconstructs
 * their blocks and leaves them to raid-recover --rebuild afterwards.
 * Without a reshape in progress every role is needed. */
static rk_err set_need_reshape(const struct resize_set *s)
{
	const struct rk_sb *t = s->t;
	if (!(t->feat_incompat & RK_FEAT_INCOMPAT_RESHAPE))
		return resize_set_need_all(s);
	const struct rk_geom_desc *nd = &t->reshape_new;
	struct rk_geom go, gn;
	if (rk_geom_init(&go, t->level, t->layout, t->chunk, t->nroles, t->data_size) ||
	    rk_geom_init(&gn, nd->level, nd->layout, nd->chunk, nd->nroles, nd->data_size))
		return rk_fail(RK_E_CORRUPT, "the superblock's geometries do not hold: %s", rk_errmsg());
	uint32_t mo = 0, mn = 0;
	for (uint32_t r = 0; r < s->span; r++)
		if (!s->dev[r]) {
			mo += r < t->nroles;
			mn += r < nd->nroles;
		}
	if (mo > rk_geom_redundancy(&go) || mn > rk_geom_redundancy(&gn)) {
		rk_err e = resize_set_need_all(s);
		return rk_fail(e, "%s (too many missing for the reshape to go on degraded: %u of %u old roles, %u of %u "
		               "new)", rk_errmsg(), mo, t->nroles, mn, nd->nroles);
	}
	return RK_OK;
}

/* A member that a revert dropped: its own superblock (older than the
 * template T) is of a reshape that added it (its role past the old
 * nroles), while T, the freshest, has no reshape and an empty entry for
 * that role.  Only an interrupted revert leaves this: a forward reshape
 * lists the added members before and after it finishes. */
static int is_leftover(const struct rk_sb *t, const struct rk_sb *o)
{
	if ((t->feat_incompat & RK_FEAT_INCOMPAT_RESHAPE) || !(o->feat_incompat & RK_FEAT_INCOMPAT_RESHAPE))
		return 0;
	if (o->events >= t->events || o->nroles != t->nroles)
		return 0;
	if (o->this_role < t->nroles || o->this_role >= o->reshape_new.nroles)
		return 0;
	return o->this_role >= t->nentries || t->roles[o->this_role].state == RK_ROLE_EMPTY;
}

/* Reads every device's superblock and maps devices to roles (see the header
 * comment of rk_resize.h).  NEED_ALL 1: every role of the span must be
 * given and active; 2: mid-reshape, as many as both geometries need
 * (set_need_reshape); 0: no check.  KEEP_LEFT: members a revert dropped (is_leftover) go to
 * s->left instead of failing the load. */
rk_err resize_set_load(struct resize_set *s, rk_dev *const *devs, uint32_t n, enum resize_need need, int keep_left)
{
	rk_err e = RK_OK;
	memset(s, 0, sizeof *s);
	if (!n)
		return rk_fail(RK_E_INVAL, "no members given");
	struct rk_sb **own = calloc(n, sizeof *own);
	s->dev = calloc(RK_SB_MAX_ROLES, sizeof *s->dev);
	s->sb = calloc(RK_SB_MAX_ROLES, sizeof *s->sb);
	s->doff = calloc(RK_SB_MAX_ROLES, sizeof *s->doff);
	s->ws = calloc(RK_SB_MAX_ROLES, sizeof *s->ws);
	s->t = malloc(sizeof *s->t);
	s->left = calloc(n, sizeof *s->left);
	if (!own || !s->dev || !s->sb || !s->doff || !s->ws || !s->t || !s->left) {
		e = rk_fail(RK_E_NOMEM, "out of memory");
		goto out;
	}
	uint32_t fresh = 0;
	for (uint32_t i = 0; i < n; i++) {
		struct rk_sb_read rd;
		e = rk_sb_read(devs[i], &rd);
		if ((e == RK_E_NOSB || (!e && rd.chosen < 0)) && rk_foreign_refuse(devs[i], "resize")) {
			e = RK_E_NOTSUP;
			rk_sb_read_free(&rd);
			goto out;
		}
		if (e || rd.chosen < 0) {
			e = rk_fail(e ? e : RK_E_NOSB, "%s: no usable superblock: %s", rk_dev_path(devs[i]), rk_errmsg());
			rk_sb_read_free(&rd);
			goto out;
		}
		own[i] = malloc(sizeof *own[i]);
		if (!own[i]) {
			rk_sb_read_free(&rd);
			e = rk_fail(RK_E_NOMEM, "out of memory");
			goto out;
		}
		memcpy(own[i], rd.copy[rd.chosen].sb, sizeof *own[i]);
		rk_sb_read_free(&rd);
		if (own[i]->events > own[fresh]->events)
			fresh = i;
	}
	memcpy(s->t, own[fresh], sizeof *s->t);
	s->maxev = s->t->events;
	s->span = s->t->nroles;
	if ((s->t->feat_incompat & RK_FEAT_INCOMPAT_RESHAPE) && s->t->reshape_new.nroles > s->span)
		s->span = s->t->reshape_new.nroles;
	for (uint32_t i = 0; i < n; i++) {
		const char *path = rk_dev_path(devs[i]);
		if (memcmp(own[i]->array_uuid, s->t->array_uuid, 16)) {
			e = rk_fail(RK_E_CONFLICT, "%s: belongs to another array than %s", path, rk_dev_path(devs[fresh]));
			goto out;
		}
		uint32_t r;
		for (r = 0; r < s->t->nentries; r++)
			if (s->t->roles[r].state != RK_ROLE_EMPTY && !memcmp(s->t->roles[r].member_uuid, own[i]->member_uuid, 16))
				break;
		if (r >= s->span && keep_left && is_leftover(s->t, own[i])) {
			s->left[s->nleft++] = devs[i];
			continue;
		}
		if (r >= s->span) {
			e = rk_fail(RK_E_STALE, "%s: %s in the array at events %llu", path,
			            r < s->t->nentries ? "a spare, not a role" : "not a member",
			            (unsigned long long)s->maxev);
			goto out;
		}
		if (s->dev[r]) {
			e = rk_fail(RK_E_CONFLICT, "%s: serves role %u, as %s does (the same member given twice?)", path, r,
			            rk_dev_path(s->dev[r]));
			goto out;
		}
		if (s->t->roles[r].state != RK_ROLE_ACTIVE) {
			e = rk_fail(RK_E_STALE, "%s: role %u is %s at events %llu", path, r,
			            rk_role_state_name(s->t->roles[r].state), (unsigned long long)s->maxev);
			goto out;
		}
		if (own[i]->events != s->maxev)
			s->mixed = 1;
		s->dev[r] = devs[i];
		s->sb[r] = own[i];
		/* a member that missed the end of a reshape names the old offset */
		s->doff[r] = rk_sb_member_data_offset(s->t, own[i]);
		own[i] = NULL;
	}
	if (need == RESIZE_NEED_ALL)
		e = resize_set_need_all(s);
	else if (need == RESIZE_NEED_RESHAPE)
		e = set_need_reshape(s);
out:
	if (own)
		for (uint32_t i = 0; i < n; i++)
			free(own[i]);
	free(own);
	if (e)
		resize_set_free(s);
	return e;
}

/* Writes generation T to role I's device as its superblock: its UUID,
 * role, data offset (s->doff) and dev_size (its own, or the device size
 * where the data areas need more); s->sb[I] becomes it.  NSB is scratch.
 * The set holds the members for the whole run, so after the first update
 * the copies are not read again (rk_sb_write_known, s->ws[I]). */
static rk_err write_role(struct resize_set *s, const struct rk_sb *t, uint32_t i, struct rk_sb *nsb)
{
	memcpy(nsb, t, sizeof *nsb);
	memcpy(nsb->member_uuid, t->roles[i].member_uuid, 16);
	nsb->this_role = i;
	nsb->data_offset = s->doff[i];
	nsb->sb_offset = RK_SB_PRIMARY_OFF;
	nsb->dev_size = s->sb[i] ? s->sb[i]->dev_size : 0;
	if (nsb->dev_size && rk_sb_validate(nsb, rk_dev_size(s->dev[i])))
		nsb->dev_size = 0;   /* the member grew and the new areas need it */
	rk_err e = rk_sb_write_known(s->dev[i], nsb, &s->ws[i]);
	if (e)
		return rk_fail(e, "%s: writing the superblock: %s", rk_dev_path(s->dev[i]), rk_errmsg());
	if (!s->sb[i] && !(s->sb[i] = malloc(sizeof *nsb)))
		return rk_fail(RK_E_NOMEM, "out of memory");
	memcpy(s->sb[i], nsb, sizeof *nsb);
	s->sb[i]->dev_size = nsb->dev_size ? nsb->dev_size : rk_dev_size(s->dev[i]);
	return RK_OK;
}

/* The span of roles generation T covers (the reshape target's, if wider). */
static uint32_t gen_span(const struct rk_sb *t)
{
	uint32_t span = t->nroles;
	if ((t->feat_incompat & RK_FEAT_INCOMPAT_RESHAPE) && t->reshape_new.nroles > span)
		span = t->reshape_new.nroles;
	return span;
}

/* Writes template T (events = maxev+1) to every given role of its span:
 * first the members behind the current generation get it as it is
 * (rk_sb_behind: a member that only missed updates stays within one event
 * of the freshest), then T, the highest roles first, so members added by
 * a reshape carry it before the old members point at them. */
rk_err resize_commit(struct resize_set *s, struct rk_sb *t)
{
	uint64_t ev;
	if (rk_add_ovf(s->maxev, 1, &ev))
		return rk_fail(RK_E_RANGE, "event counter overflow");
	struct rk_sb *nsb = malloc(sizeof *nsb);
	if (!nsb)
		return rk_fail(RK_E_NOMEM, "out of memory");
	rk_err e = RK_OK;
	for (uint32_t i = gen_span(s->t); i-- > 0 && !e;)
		if (s->dev[i] && rk_sb_behind(s->sb[i], s->t))
			e = write_role(s, s->t, i, nsb);
	t->events = ev;
	t->utime = (uint64_t)time(NULL);
	for (uint32_t i = gen_span(t); i-- > 0 && !e;)
		if (s->dev[i])
			e = write_role(s, t, i, nsb);
	free(nsb);
	if (!e) {
		s->maxev = ev;
		s->mixed = 0;
		memcpy(s->t, t, sizeof *t);
	}
	return e;
}

/* One call of resize_par_roles: the role's job and its outcome. */
struct par_roles {
	struct resize_set *s;
	resize_role_fn fn;
	void *ctx;
	rk_err *err;
	char (*msg)[512];
};

static void par_role_job(void *arg, uint32_t worker, uint32_t role)
{
	struct par_roles *pr = arg;
	if (!pr->s->dev[role])
		return;
	if ((pr->err[role] = pr->fn(pr->ctx, role, worker)))
		snprintf(pr->msg[role], sizeof pr->msg[role], "%s", rk_errmsg());
}

rk_err resize_par_roles(struct resize_set *s, uint32_t span, rk_pool *pool, resize_role_fn fn, void *ctx)
{
	struct par_roles pr = { .s = s, .fn = fn, .ctx = ctx, .err = calloc(span ? span : 1, sizeof *pr.err),
	                        .msg = calloc(span ? span : 1, sizeof *pr.msg) };
	rk_err e = RK_OK;
	if (!pr.err || !pr.msg) {
		e = rk_fail(RK_E_NOMEM, "out of memory");
		goto out;
	}
	if (pool) {
		rk_pool_run(pool, span, par_role_job, &pr);
	} else {
		for (uint32_t r = 0; r < span; r++)
			par_role_job(&pr, 0, r);
	}
	for (uint32_t r = 0; r < span && !e; r++)
		if (pr.err[r])
			e = rk_fail(pr.err[r], "%s", pr.msg[r]);
out:
	free(pr.err);
	free(pr.msg);
	return e;
}

/* The checkpoint generation, written to one role (resize_commit_par). */
struct commit_par {
	struct resize_set *s;
	const struct rk_sb *t;
	struct rk_sb *nsb;        /* scratch per worker */
};

static rk_err commit_role(void *ctx, uint32_t role, uint32_t worker)
{
	struct commit_par *cp = ctx;
	return write_role(cp->s, cp->t, role, &cp->nsb[worker]);
}

rk_err resize_commit_par(struct resize_set *s, struct rk_sb *t, rk_pool *pool)
{
	if (!pool || s->mixed || gen_span(t) != gen_span(s->t))
		return resize_commit(s, t);
	uint64_t ev;
	if (rk_add_ovf(s->maxev, 1, &ev))
		return rk_fail(RK_E_RANGE, "event counter overflow");
	for (uint32_t i = 0; i < gen_span(s->t); i++)
		if (s->dev[i] && rk_sb_behind(s->sb[i], s->t))
			return resize_commit(s, t);   /* a member to bring forward first: in order */
	struct commit_par cp = { .s = s, .t = t, .nsb = malloc(rk_pool_workers(pool) * sizeof *cp.nsb) };
	if (!cp.nsb)
		return rk_fail(RK_E_NOMEM, "out of memory");
	t->events = ev;
	t->utime = (uint64_t)time(NULL);
	/* Roles only the new geometry has go first, highest first, as
	 * resize_commit writes them, so an added member lags by at most one
	 * update when a kill stops the checkpoint half-way, in the same places
	 * the sequential commit allows (discover_array.c one_behind tolerates
	 * that).  The current geometry's roles may lag in any order: they go
	 * in parallel. */
	uint32_t listed = s->t->nroles < gen_span(t) ? s->t->nroles : gen_span(t);
	rk_err e = RK_OK;
	for (uint32_t i = gen_span(t); i-- > listed && !e;)
		if (s->dev[i])
			e = write_role(s, t, i, &cp.nsb[0]);
	if (!e)
		e = resize_par_roles(s, listed, pool, commit_role, &cp);
	free(cp.nsb);
	if (!e) {
		s->maxev = ev;
		s->mixed = 0;
		memcpy(s->t, t, sizeof *t);
	}
	return e;
}

rk_err resize_zero_range(rk_dev *d, uint64_t off, uint64_t len)
{
	static const uint8_t zeros[ZERO_BUF];
	while (len) {
		size_t k = len < ZERO_BUF ? (size_t)len : ZERO_BUF;
		rk_err e = rk_dev_pwrite(d, zeros, k, off);
		if (e)
			return rk_fail(e, "%s: zeroing: %s", rk_dev_path(d), rk_errmsg());
		off += k;
		len -= k;
	}
	return RK_OK;
}

rk_err resize_flush_all(struct resize_set *s, uint32_t span)
{
	return rk_dev_flush_set(s->dev, span, NULL, NULL, NULL);
}

static rk_err flush_role(void *ctx, uint32_t role, uint32_t worker)
{
	struct resize_set *s = ctx;
	(void)worker;
	rk_err e = rk_dev_flush(s->dev[role]);
	return e ? rk_fail(e, "%s: flush: %s", rk_dev_path(s->dev[role]), rk_errmsg()) : RK_OK;
}

rk_err resize_flush_par(struct resize_set *s, uint32_t span, rk_pool *pool)
{
	return resize_par_roles(s, span, pool, flush_role, s);
}

struct resize_flush_bg {
	struct par_roles pr;
	uint32_t span;
	rk_pool *pool;
	int busy;
};

rk_err resize_flush_bg_new(struct resize_flush_bg **out, struct resize_set *s, uint32_t span, rk_pool *pool)
{
	struct resize_flush_bg *f = calloc(1, sizeof *f);
	*out = NULL;
	if (!f)
		return rk_fail(RK_E_NOMEM, "out of memory");
	f->pr = (struct par_roles){ .s = s, .fn = flush_role, .ctx = s, .err = calloc(span ? span : 1, sizeof *f->pr.err),
	                            .msg = calloc(span ? span : 1, sizeof *f->pr.msg) };
	f->span = span;
	f->pool = pool;
	if (!f->pr.err || !f->pr.msg) {
		resize_flush_bg_free(f);
		return rk_fail(RK_E_NOMEM, "out of memory");
	}
	*out = f;
	return RK_OK;
}

void resize_flush_start(struct resize_flush_bg *f)
{
	memset(f->pr.err, 0, f->span * sizeof *f->pr.err);
	f->busy = 1;
	rk_pool_submit(f->pool, f->span, par_role_job, &f->pr);
}

rk_err resize_flush_wait(struct resize_flush_bg *f)
{
	if (!f->busy)
		return RK_OK;
	rk_pool_wait(f->pool);
	f->busy = 0;
	for (uint32_t r = 0; r < f->span; r++)
		if (f->pr.err[r])
			return rk_fail(f->pr.err[r], "%s", f->pr.msg[r]);
	return RK_OK;
}

void resize_flush_bg_free(struct resize_flush_bg *f)
{
	if (!f)
		return;
	if (f->busy)
		rk_pool_wait(f->pool);
	free(f->pr.err);
	free(f->pr.msg);
	free(f);
}

/* An array stopped unclean in the middle of a reshape (written through
 * rk_array mid-reshape, then killed): its journal is replayed by opening
 * it read-write and closing it (clean), then the set is read again, so the
 * reshape copies what the last write left. */
static rk_err settle_unclean(struct resize_set *s, rk_dev *const *devs, uint32_t n)
{
	if (!(s->t->feat_incompat & RK_FEAT_INCOMPAT_RESHAPE) || s->t->array_state == RK_ARRAY_CLEAN)
		return RK_OK;
	rk_array *a = NULL;
	rk_err e = rk_array_open_devs(&a, s->t, s->dev, (const struct rk_sb *const *)s->sb, RK_ARRAY_RDWR);
	if (e)
		return rk_fail(e, "the array was not closed cleanly and its journal could not be replayed: %s", rk_errmsg());
	if ((e = rk_array_close(a)))
		return rk_fail(e, "the array was not closed cleanly; replaying its journal: %s", rk_errmsg());
	resize_set_free(s);
	return resize_set_load(s, devs, n, RESIZE_NEED_RESHAPE, 1);
}

/* A reshape going on degraded: roles not given are recorded FAULTY in the
 * superblocks of the others before anything moves, so a member that comes
 * back later is stale (its blocks were not written meanwhile), never taken
 * for one that missed a checkpoint update. */
static rk_err mark_missing(struct resize_set *s)
{
	if (!(s->t->feat_incompat & RK_FEAT_INCOMPAT_RESHAPE))
		return RK_OK;
	int any = 0;
	for (uint32_t r = 0; r < s->span; r++)
		any |= !s->dev[r] && s->t->roles[r].state == RK_ROLE_ACTIVE;
	if (!any)
		return RK_OK;
	struct rk_sb *nt = malloc(sizeof *nt);
	if (!nt)
		return rk_fail(RK_E_NOMEM, "out of memory");
	memcpy(nt, s->t, sizeof *nt);
	for (uint32_t r = 0; r < s->span; r++)
		if (!s->dev[r] && nt->roles[r].state == RK_ROLE_ACTIVE)
			nt->roles[r].state = RK_ROLE_FAULTY;
	rk_err e = resize_commit(s, nt);
	free(nt);
	return e;
}

/* Roles of the array's current geometry not active (after a degraded
 * continue or revert: for raid-recover --rebuild). */
uint32_t resize_count_missing(const struct resize_set *s)
{
	uint32_t m = 0;
	for (uint32_t r = 0; r < s->t->nroles && r < s->t->nentries; r++)
		m += s->t->roles[r].state != RK_ROLE_ACTIVE;
	return m;
}

/* Continue and revert start alike: the members loaded (mid-reshape some
 * may be missing, set_need_reshape), the journal of an unclean stop
 * replayed, missing roles recorded faulty.  On error S is freed. */
rk_err resize_load_resume(struct resize_set *s, rk_dev *const *devs, uint32_t n)
{
	rk_err e = resize_set_load(s, devs, n, RESIZE_NEED_RESHAPE, 1);
	if (e)
		return e;
	if ((e = settle_unclean(s, devs, n)) || (e = mark_missing(s)))
		resize_set_free(s);
	return e;
}

rk_err resize_run(rk_dev *const *devs, uint32_t n, enum resize_load load, resize_step_fn step, const void *args,
                  struct rk_resize_result *res)
{
	struct rk_resize_result dummy;
	if (!res)
		res = &dummy;
	memset(res, 0, sizeof *res);
	struct resize_set s;
	rk_err e = load == RESIZE_LOAD_RESUME ? resize_load_resume(&s, devs, n)
	                                      : resize_set_load(&s, devs, n, load == RESIZE_LOAD_ALL ? RESIZE_NEED_ALL : RESIZE_NEED_ANY, 0);
	if (e)
		return e;
	e = step(&s, args, res);
	resize_set_free(&s);
	return e;
}

/* ---- volumes over the current (old) and reshape target (new) geometry ---- */

static rk_err open_vol(rk_vol **v, struct rk_geom *g, struct resize_set *s, int32_t level, uint32_t layout,
                       uint64_t chunk, uint32_t nroles, uint64_t ds, uint64_t doff)
{
	return rk_resize_geom_vol(v, g, s->dev, level, layout, chunk, nroles, ds, doff);
}

rk_err resize_open_old(rk_vol **v, struct rk_geom *g, struct resize_set *s)
{
	const struct rk_sb *t = s->t;
	return open_vol(v, g, s, t->level, t->layout, t->chunk, t->nroles, t->data_size, t->data_offset);
}

rk_err resize_open_new(rk_vol **v, struct rk_geom *g, struct resize_set *s)
{
	const struct rk_geom_desc *n = &s->t->reshape_new;
	return open_vol(v, g, s, n->level, n->layout, n->chunk, n->nroles, n->data_size, n->data_offset);
}

rk_err resize_vol_read(void *ctx, void *buf, uint64_t len, uint64_t off)
{
	return rk_vol_read(ctx, buf, (size_t)len, off);
}


rk_err rk_resize_read(rk_dev *const *devs, uint32_t n, void *buf, uint64_t len, uint64_t off, uint64_t *size)
{
	struct resize_set s;
	rk_err e = resize_set_load(&s, devs, n, RESIZE_NEED_ANY, 0);
	if (e)
		return e;
	rk_resize_reader *rd = NULL;
	if (size)
		*size = s.t->volume_size;
	if (!(e = rk_resize_reader_open(&rd, s.t, s.dev, NULL, NULL)))
		e = rk_resize_reader_read(rd, buf, len, off);
	rk_resize_reader_close(rd);
	resize_set_free(&s);
	return e;
}
