/* scrub_array.c: scrub an assembled array (see rk_scrub_array.h): the
 * members, the write protocol around a repair, the range and the resume
 * point, checkpoints, around rk_scrub_run. */
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <uuid/uuid.h>

#include "rk_array.h"
#include "rk_fmt.h"
#include "rk_part.h"
#include "rk_scrub_array.h"

rk_err rk_scrub_array_open_members(struct rk_scrub_members *m, const struct rk_array_info *ai, int writable,
                                   rk_scrub_wrap_fn wrap, void *wrap_ctx)
{
	memset(m, 0, sizeof *m);
	if (writable && ai->sb && ai->sb->origin != RK_ORIGIN_RAIDKIT)
		return rk_fail(RK_E_NOTSUP, "%s array: raidkit checks arrays other software made but does not repair "
		               "them; raid-assemble --export OUT makes a copy of the volume to work on",
		               rk_view_origin_name(ai->sb));
	m->tmpl = ai->sb;
	m->nroles = ai->nroles;
	m->owned = 1;
	m->devs = calloc(ai->nroles, sizeof *m->devs);
	m->sbs = m->owned_sbs = calloc(ai->nroles, sizeof *m->owned_sbs);
	if (!m->devs || !m->owned_sbs)
		return rk_fail(RK_E_NOMEM, "out of memory");
	for (uint32_t r = 0; r < ai->nroles; r++) {
		const struct rk_member *mb = &ai->roles[r];
		if (mb->cls != RK_MEMBER_ACTIVE || !mb->path || !mb->sb)
			continue;
		rk_err e = rk_member_open(&m->devs[r], mb->path, writable ? RK_DEV_RDWR : RK_DEV_RDONLY);
		if (!e && wrap)
			e = wrap(wrap_ctx, r, &m->devs[r]);
		if (e)
			return e;
		m->owned_sbs[r] = mb->sb;
		if (!m->first_path)
			m->first_path = mb->path;
	}
	return RK_OK;
}

void rk_scrub_array_use_members(struct rk_scrub_members *m, const struct rk_sb *tmpl, uint32_t nroles,
                                rk_dev **devs, const struct rk_sb *const *sbs)
{
	memset(m, 0, sizeof *m);
	m->tmpl = tmpl;
	m->nroles = nroles;
	m->devs = devs;
	m->sbs = sbs;
}

void rk_scrub_array_close_members(struct rk_scrub_members *m)
{
	if (!m || !m->owned)
		return;
	if (m->devs)
		for (uint32_t r = 0; r < m->nroles; r++)
			rk_dev_close(m->devs[r]);
	free(m->devs);
	free(m->owned_sbs);
	m->devs = NULL;
	m->sbs = m->owned_sbs = NULL;
	m->owned = 0;
}

/* One scrub of an array: what the callbacks of rk_scrub_run share. */
struct scrub_array_run {
	const struct rk_scrub_array_opts *opts;
	struct rk_scrub_array_result *res;
	rk_array *array;             /* repair only */
	struct rk_scrub_ckpt ckpt;   /* the checkpoint being kept */
	int ckpt_warned;
	time_t last_save;
	uint64_t done_base;          /* stripes of the range checked before this run */
};

/* Records the failure of STEP (the first one) with rk_errmsg(). */
static rk_err step_failed(struct rk_scrub_array_result *res, enum rk_scrub_array_step step, rk_err e)
{
	if (res->err == RK_OK) {
		res->failed = step;
		res->err = e;
		snprintf(res->errmsg, sizeof res->errmsg, "%s", rk_errmsg());
	}
	return e;
}

static void save_checkpoint(struct scrub_array_run *run, uint64_t next)
{
	struct rk_scrub_array_result *res = run->res;
	const struct rk_scrub_stats *st = &res->stats;
	if (!res->checkpoint[0])
		return;
	run->ckpt.next = next;
	run->ckpt.mismatches = res->before.mismatches + st->mismatches;
	run->ckpt.repaired = res->before.repaired + st->repaired;
	run->ckpt.unreadable = res->before.unreadable + st->unreadable;
	run->ckpt.unrecoverable = res->before.unrecoverable + st->unrecoverable + st->rewrite_failed;
	if (rk_scrub_ckpt_save(res->checkpoint, &run->ckpt) && !run->ckpt_warned) {
		run->ckpt_warned = 1;
		if (run->opts->on_checkpoint_error)
			run->opts->on_checkpoint_error(run->opts->ctx, rk_errmsg());
	}
}

static int on_run_progress(void *ctx, uint64_t next, uint64_t done)
{
	struct scrub_array_run *run = ctx;
	const struct rk_scrub_array_opts *o = run->opts;
	int stop = 0;
	if (o->on_progress)
		stop = o->on_progress(o->ctx, next, (run->done_base + done) * run->res->geom.stripe_data);
	time_t now = time(NULL);
	if (stop || now != run->last_save) {
		run->last_save = now;
		save_checkpoint(run, next);
	}
	return stop;
}

static rk_err on_run_begin_write(void *ctx)
{
	struct scrub_array_run *run = ctx;
	return rk_array_begin_write(run->array);
}

static void on_run_region(void *ctx, const struct rk_scrub_region *r)
{
	struct scrub_array_run *run = ctx;
	run->opts->on_region(run->opts->ctx, r);
}

static void on_run_unreadable(void *ctx, const struct rk_scrub_unreadable *u)
{
	struct scrub_array_run *run = ctx;
	run->opts->on_unreadable(run->opts->ctx, u);
}

/* The checkpoint path: opts.checkpoint, or .raid-scrub-UUID in the folder
 * of the first member. */
static void checkpoint_path(const struct rk_scrub_members *m, const struct rk_scrub_array_opts *o,
                            struct rk_scrub_array_result *res)
{
	res->checkpoint[0] = 0;
	if (o->checkpoint_mode == RK_SCRUB_CKPT_PATH && o->checkpoint) {
		snprintf(res->checkpoint, sizeof res->checkpoint, "%s", o->checkpoint);
	} else if (o->checkpoint_mode == RK_SCRUB_CKPT_DEFAULT && m->first_path) {
		char *copy = strdup(m->first_path), u[37];
		if (!copy)
			return;
		uuid_unparse_lower(m->tmpl->array_uuid, u);
		snprintf(res->checkpoint, sizeof res->checkpoint, "%s/.raid-scrub-%s", dirname(copy), u);
		free(copy);
	}
}

/* The range, the checkpoint and (opts.resume) the point to resume from. */
static rk_err plan_range(struct scrub_array_run *run, const struct rk_scrub_members *m)
{
	const struct rk_scrub_array_opts *o = run->opts;
	struct rk_scrub_array_result *res = run->res;
	const struct rk_geom *g = &res->geom;
	rk_err e = rk_scrub_range(g, o->at, o->length, &res->first, &res->last);
	if (e)
		return step_failed(res, RK_SCRUB_STEP_RANGE, e);
	checkpoint_path(m, o, res);
	memcpy(run->ckpt.uuid, m->tmpl->array_uuid, 16);
	run->ckpt.first = res->first;
	run->ckpt.last = res->last;
	run->ckpt.repair = o->repair;
	res->start = res->first;
	struct rk_scrub_array_start start = { .checkpoint = res->checkpoint[0] ? res->checkpoint : NULL };
	if (o->resume) {
		struct rk_scrub_ckpt ck;
		e = res->checkpoint[0] ? rk_scrub_ckpt_load(res->checkpoint, &ck) : RK_E_OPEN;
		if (e == RK_E_OPEN) {
			start.resume_missing = 1;
		} else if (e) {
			return step_failed(res, RK_SCRUB_STEP_RESUME, e);
		} else if (memcmp(ck.uuid, m->tmpl->array_uuid, 16)) {
			return step_failed(res, RK_SCRUB_STEP_RESUME,
			                   rk_fail(RK_E_CONFLICT, "%s records another array's scrub", res->checkpoint));
		} else if (ck.last > g->nstripes) {
			return step_failed(res, RK_SCRUB_STEP_RESUME,
			                   rk_fail(RK_E_CORRUPT, "%s records stripes past the array's end", res->checkpoint));
		} else {
			res->first = run->ckpt.first = ck.first;
			res->last = run->ckpt.last = ck.last;
			res->start = ck.next;
			res->before = ck;
			res->resumed = 1;
		}
	}
	start.first = res->first;
	start.last = res->last;
	start.start = res->start;
	start.resumed = res->resumed;
	if (o->on_start)
		o->on_start(o->ctx, &start);
	return RK_OK;
}

/* rk_scrub_run over [start, end), the checkpoint kept. */
static void run_scrub(struct scrub_array_run *run, const struct rk_scrub_members *m)
{
	const struct rk_scrub_array_opts *o = run->opts;
	struct rk_scrub_array_result *res = run->res;
	const struct rk_geom *g = &res->geom;
	uint64_t *doff = calloc(m->nroles ? m->nroles : 1, sizeof *doff);
	if (!doff) {
		step_failed(res, RK_SCRUB_STEP_RUN, rk_fail(RK_E_NOMEM, "out of memory"));
		return;
	}
	for (uint32_t r = 0; r < m->nroles; r++)
		doff[r] = m->sbs[r] ? rk_sb_member_data_offset(m->tmpl, m->sbs[r]) : 0;
	struct rk_scrub_opts so = {
		.repair = o->repair,
		.rewrite_unconfirmed = o->rewrite_unconfirmed,
		.no_map = o->no_map,
		.on_region = o->on_region ? on_run_region : NULL,
		.on_unreadable = o->on_unreadable ? on_run_unreadable : NULL,
		.on_progress = on_run_progress,
		.on_begin_write = o->repair ? on_run_begin_write : NULL,
		.ctx = run,
	};
	run->done_base = res->start - res->first;
	run->last_save = time(NULL);
	/* stop_after: a shorter run, then a stop like an interruption */
	uint64_t end = res->last;
	uint64_t stop_stripes = o->stop_after / g->stripe_data + (o->stop_after % g->stripe_data != 0);
	if (stop_stripes && stop_stripes < res->last - res->start)
		end = res->start + stop_stripes;
	rk_err e = rk_scrub_run(g, m->devs, doff, res->start, end, &so, &res->stats);
	free(doff);
	if (!e && !res->stats.stopped && end < res->last)
		res->stats.stopped = 1;
	if (e) {
		step_failed(res, RK_SCRUB_STEP_RUN, e);
		save_checkpoint(run, res->stats.next);
	} else if (res->stats.stopped) {
		save_checkpoint(run, res->stats.next);
	} else if (res->checkpoint[0]) {
		unlink(res->checkpoint);   /* finished: nothing to resume */
	}
}

rk_err rk_scrub_array(const struct rk_scrub_members *m, const struct rk_scrub_array_opts *opts,
                      struct rk_scrub_array_result *res)
{
	const struct rk_sb *sb = m->tmpl;
	memset(res, 0, sizeof *res);
	struct scrub_array_run run = { .opts = opts, .res = res };
	/* mid-reshape the bytes below the checkpoint are in the new geometry:
	 * checking (or worse, repairing) them as the old would be wrong */
	if (sb->feat_incompat & RK_FEAT_INCOMPAT_RESHAPE)
		return step_failed(res, RK_SCRUB_STEP_OPEN,
		                   rk_fail(RK_E_NOTSUP, "the array is in the middle of a reshape (%llu of %llu volume "
		                           "bytes moved): finish it with raid-resize --continue (or --revert) and "
		                           "scrub then", (unsigned long long)sb->reshape_pos,
		                           (unsigned long long)sb->volume_size));
	rk_err e = rk_geom_init(&res->geom, sb->level, sb->layout, sb->chunk, sb->nroles, sb->data_size);
	if (e)
		return step_failed(res, RK_SCRUB_STEP_OPEN, e);
	res->last = res->geom.nstripes;
	if (res->geom.level == 0 || res->geom.level == RK_LEVEL_LINEAR)
		return step_failed(res, RK_SCRUB_STEP_OPEN,
		                   rk_fail(RK_E_NOTSUP, "%s has no redundancy to verify",
		                           res->geom.level == 0 ? "RAID-0" : "a linear array"));
	if (opts->repair && (e = rk_array_open_devs(&run.array, sb, m->devs, m->sbs, RK_ARRAY_RDWR)))
		return step_failed(res, RK_SCRUB_STEP_OPEN, e);
	if (!plan_range(&run, m))
		run_scrub(&run, m);
	if (run.array && (res->close_err = rk_array_close(run.array)))
		snprintf(res->close_msg, sizeof res->close_msg, "%s", rk_errmsg());
	return res->err ? res->err : res->close_err;
}
