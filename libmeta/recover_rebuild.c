/* recover_rebuild.c: rebuilding a role onto a new member (raid-recover
 * --rebuild; rk_recover.h has the contract and the write order). */
#include "rk_recover.h"
#include "rk_fmt.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <uuid/uuid.h>

#include "rk_discover.h"
#include "rk_geom.h"
#include "rk_le.h"
#include "rk_parity.h"
#include "rk_probe.h"
#include "rk_segnames.h"
#include "rk_util.h"
#include "rk_vol.h"

const char *rk_new_kind_name(enum rk_new_kind k)
{
	switch (k) {
	case RK_NEW_BLANK: return "blank";
	case RK_NEW_CREATED: return "created";
	case RK_NEW_STALE: return "stale member";
	case RK_NEW_RESUME: return "interrupted rebuild";
	case RK_NEW_FORCED: return "overwritten";
	default: return "invalid";
	}
}

/* One rebuild: its members, the new member and the generation written. */
struct rebuild {
	const struct rk_rebuild_opts *o;
	struct rk_rebuild_result *res;
	const struct rk_array_info *info;
	uint32_t n, role;
	rk_dev **devs;           /* live members, role order (NULL = absent) */
	struct rk_sb **sbs;      /* their superblocks as read now */
	rk_dev *nd;              /* NEW */
	struct rk_sb *gen;       /* the generation being written (array-wide fields) */
	struct rk_sb *nsb;       /* NEW's own superblock */
	struct rk_sb *tmp;
	struct rk_geom g;
	rk_vol *v;
	uint64_t base, cur;      /* progress: this run's start, bytes done before the current batch */
	int member_failed;
};

/* Writes generation GEN to every live member (ONLY_BEHIND: those behind
 * it, rk_sb_behind), then (when WITH_NEW) to NEW. */
static rk_err write_members(struct rebuild *b, int only_behind, int with_new)
{
	for (uint32_t r = 0; r < b->n; r++) {
		if (!b->devs[r] || (only_behind && !rk_sb_behind(b->sbs[r], b->gen)))
			continue;
		rk_sb_member_copy(b->tmp, b->gen, b->sbs[r]);
		rk_err e = rk_sb_write(b->devs[r], b->tmp);
		if (e)
			return rk_fail(e, "%s: writing the superblock: %s", rk_dev_path(b->devs[r]), rk_errmsg());
		memcpy(b->sbs[r], b->tmp, sizeof *b->tmp);
	}
	if (!with_new)
		return RK_OK;
	rk_sb_member_copy(b->tmp, b->gen, b->nsb);
	rk_err e = rk_sb_write(b->nd, b->tmp);
	if (e)
		return rk_fail(e, "%s: writing the superblock: %s", rk_dev_path(b->nd), rk_errmsg());
	return RK_OK;
}

/* Writes generation GEN to every live member, then (when WITH_NEW) to NEW. */
static rk_err write_all(struct rebuild *b, int with_new)
{
	return write_members(b, 0, with_new);
}

static void rebuild_progress(void *ctx, uint64_t done)
{
	struct rebuild *b = ctx;
	if (b->o->progress)
		b->o->progress(b->o->progress_ctx, b->cur - b->base + done, b->res->total - b->base);
}

static void rebuild_member_failed(void *ctx, uint32_t role, rk_err why)
{
	struct rebuild *b = ctx;
	(void)role;
	(void)why;
	b->member_failed = 1;
}

/* Which role, what NEW is, where to start.  Reads NEW (read-only) and the
 * discovery result; writes nothing. */
static rk_err rebuild_plan(struct rebuild *b, const char *newpath, int *create, struct rk_sb_read *nrd)
{
	const struct rk_array_info *a = b->info;
	const struct rk_sb *f = a->sb;
	struct rk_rebuild_result *res = b->res;
	const struct rk_rebuild_opts *o = b->o;
	int64_t new_role = -1;   /* NEW's own role in this array, if it was a member */
	struct stat st;
	*create = 0;

	for (uint32_t r = 0; r < a->nroles; r++)
		if (a->roles[r].cls == RK_MEMBER_ACTIVE && a->roles[r].path && rk_path_same_object(a->roles[r].path, newpath))
			return rk_fail(RK_E_INVAL, "%s: is the active member of role %u (as %s); name a new device or a stale member",
			               newpath, r, a->roles[r].path);
	if (stat(newpath, &st) != 0) {
		if (errno != ENOENT)
			return rk_fail(RK_E_OPEN, "%s: cannot stat: %s", newpath, strerror(errno));
		*create = 1;
		res->new_kind = RK_NEW_CREATED;
		snprintf(res->new_what, sizeof res->new_what, "did not exist: created as a sparse file of %llu bytes",
		         (unsigned long long)f->dev_size);
	} else {
		rk_dev *d = NULL;
		rk_err e = rk_member_open_path(&d, newpath, RK_DEV_RDONLY);
		if (e)
			return e;
		e = rk_sb_read(d, nrd);
		rk_dev_close(d);
		if (e && e != RK_E_NOSB)
			return e;
		const struct rk_sb *ns = nrd->chosen >= 0 ? nrd->copy[nrd->chosen].sb : NULL;
		char u[37];
		if (ns && memcmp(ns->array_uuid, a->uuid, 16) == 0) {
			for (uint32_t r = 0; r < a->nroles; r++)
				if (a->roles[r].cls == RK_MEMBER_ACTIVE && memcmp(a->roles[r].member_uuid, ns->member_uuid, 16) == 0)
					return rk_fail(RK_E_INVAL, "%s: is an image of the active member of role %u (%s)", newpath, r,
					               a->roles[r].path);
			if (ns->this_role < f->nroles)
				new_role = ns->this_role;
			const struct rk_role *fe = new_role >= 0 ? &f->roles[new_role] : NULL;
			uuid_unparse_lower(ns->member_uuid, u);
			if (fe && fe->state == RK_ROLE_REBUILDING && memcmp(fe->member_uuid, ns->member_uuid, 16) == 0) {
				res->new_kind = RK_NEW_RESUME;
				res->resumed = 1;
				snprintf(res->new_what, sizeof res->new_what,
				         "the member (UUID %s) of an interrupted rebuild of role %lld", u, (long long)new_role);
			} else {
				res->new_kind = RK_NEW_STALE;
				snprintf(res->new_what, sizeof res->new_what,
				         "an old member of this array (role %lld, UUID %s, events %llu; the array is at %llu): its superblock is replaced",
				         (long long)new_role, u, (unsigned long long)ns->events, (unsigned long long)f->events);
			}
		} else {
			char what[256];
			int found;
			if ((e = rk_probe_occupant(newpath, o->force, what, sizeof what, &found)))
				return e;
			if (found) {
				res->new_kind = RK_NEW_FORCED;
				snprintf(res->new_what, sizeof res->new_what, "held %s (overwritten: --force)", what);
			} else {
				res->new_kind = RK_NEW_BLANK;
				snprintf(res->new_what, sizeof res->new_what, "nothing recognised on it");
			}
		}
	}

	/* The role. */
	uint32_t nmiss = 0;
	char list[256] = "";
	for (uint32_t r = 0; r < a->nroles; r++)
		if (a->roles[r].cls != RK_MEMBER_ACTIVE) {
			rk_strcatf(list, sizeof list, "%s%u", nmiss ? ", " : "", r);
			nmiss++;
		}
	int64_t role = -1;
	if (o->role >= 0) {
		if ((uint64_t)o->role >= a->nroles)
			return rk_fail(RK_E_INVAL, "--role %lld: the array has roles 0 to %u", (long long)o->role, a->nroles - 1);
		if (a->roles[o->role].cls == RK_MEMBER_ACTIVE)
			return rk_fail(RK_E_INVAL, "--role %lld: served by %s; roles without a member: %s", (long long)o->role,
			               a->roles[o->role].path, nmiss ? list : "none");
		role = o->role;
	} else if (nmiss == 0) {
		return rk_fail(RK_E_INVAL, "nothing to rebuild: all %u roles have an active member", a->nroles);
	} else if (new_role >= 0 && a->roles[new_role].cls != RK_MEMBER_ACTIVE) {
		role = new_role;
	} else if (nmiss == 1) {
		for (uint32_t r = 0; r < a->nroles; r++)
			if (a->roles[r].cls != RK_MEMBER_ACTIVE)
				role = r;
	} else {
		return rk_fail(RK_E_INVAL, "roles %s have no member: choose the one to rebuild with --role N", list);
	}
	if (res->new_kind == RK_NEW_RESUME && role != new_role) {
		res->new_kind = RK_NEW_STALE;   /* a rebuild of another role: start afresh */
		res->resumed = 0;
	}
	b->role = (uint32_t)role;
	res->role = (uint32_t)role;
	return RK_OK;
}

/* Opens the live members and NEW read-write, checks nothing moved since
 * discovery, and prepares NEW's superblock. */
static rk_err rebuild_open(struct rebuild *b, const char *newpath, int create, const struct rk_sb_read *nrd)
{
	const struct rk_array_info *a = b->info;
	const struct rk_sb *f = a->sb;
	rk_err e;
	for (uint32_t r = 0; r < b->n; r++) {
		const struct rk_member *m = &a->roles[r];
		if (m->cls != RK_MEMBER_ACTIVE || !m->path)
			continue;
		if ((e = rk_member_open_path(&b->devs[r], m->path, RK_DEV_RDWR)))
			return e;
		if (b->o->wrap_dev && (e = b->o->wrap_dev(b->o->wrap_ctx, r, &b->devs[r])))
			return e;
		struct rk_sb_read rd;
		memset(&rd, 0, sizeof rd);
		if ((e = rk_sb_read(b->devs[r], &rd))) {
			rk_sb_read_free(&rd);
			return rk_fail(RK_E_CONFLICT, "%s: superblock no longer readable: %s", m->path, rk_errmsg());
		}
		const struct rk_sb *now = rd.copy[rd.chosen].sb;
		if (memcmp(now->array_uuid, a->uuid, 16) || memcmp(now->member_uuid, m->member_uuid, 16) ||
		    now->events != m->events || now->this_role != r) {
			rk_sb_read_free(&rd);
			return rk_fail(RK_E_CONFLICT, "%s: changed since it was examined", m->path);
		}
		if (!(b->sbs[r] = malloc(sizeof *b->sbs[r]))) {
			rk_sb_read_free(&rd);
			return rk_fail(RK_E_NOMEM, "rebuild: out of memory");
		}
		memcpy(b->sbs[r], now, sizeof *now);
		rk_sb_read_free(&rd);
		if (b->sbs[r]->feat_ro_compat & ~RK_FEAT_RO_COMPAT_SUPP)
			return rk_fail(RK_E_FEATURE, "%s: unknown read-only-compatible features: refusing to write", m->path);
	}
	if (create) {
		if ((e = rk_dev_create(&b->nd, newpath, f->dev_size)))
			return e;
	} else if ((e = rk_dev_open(&b->nd, newpath, RK_DEV_RDWR))) {
		return e;
	}
	if (b->o->wrap_dev && (e = b->o->wrap_dev(b->o->wrap_ctx, b->n, &b->nd)))
		return e;
	b->res->new_size = rk_dev_size(b->nd);

	/* NEW's own superblock: the array's, as the member of ROLE. */
	struct rk_sb *ns = b->nsb;
	memcpy(ns, f, sizeof *ns);
	ns->this_role = b->role;
	ns->dev_size = rk_dev_size(b->nd);
	ns->sb_offset = rk_sb_primary_offset(ns->dev_size);
	ns->data_offset = f->data_offset;
	if (b->res->new_kind == RK_NEW_RESUME)
		memcpy(ns->member_uuid, nrd->copy[nrd->chosen].sb->member_uuid, 16);
	else
		uuid_generate(ns->member_uuid);
	memcpy(b->res->member_uuid, ns->member_uuid, 16);
	/* Validate with the role entry NEW will carry. */
	memcpy(b->tmp, ns, sizeof *ns);
	memcpy(b->tmp->roles[b->role].member_uuid, ns->member_uuid, 16);
	b->tmp->roles[b->role].state = RK_ROLE_REBUILDING;
	b->tmp->roles[b->role].checkpoint = 0;
	uint64_t need = 0;
	if (rk_add_ovf(f->data_offset, f->data_size, &need) || rk_add_ovf(need, RK_SB_AREA, &need) ||
	    ns->dev_size < need || rk_sb_backup_offset(ns->dev_size) < f->data_offset + f->data_size)
		return rk_fail(RK_E_SHORT, "%s: %llu bytes is too small: the data area ends at %llu and the backup superblock needs %u bytes after it",
		               newpath, (unsigned long long)ns->dev_size, (unsigned long long)(f->data_offset + f->data_size),
		               RK_SB_AREA);
	if ((e = rk_sb_validate(b->tmp, ns->dev_size)))
		return rk_fail(e, "%s: the new superblock does not validate: %s", newpath, rk_errmsg());
	return RK_OK;
}

/* The smallest checkpoint recorded for ROLE under NEW's UUID, by the live
 * members and NEW itself (a crash may have left them apart). */
static uint64_t resume_point(struct rebuild *b, const struct rk_sb_read *nrd)
{
	uint64_t cp = UINT64_MAX;
	for (uint32_t r = 0; r < b->n; r++) {
		if (!b->devs[r])
			continue;
		const struct rk_role *e = &b->sbs[r]->roles[b->role];
		if (e->state != RK_ROLE_REBUILDING || memcmp(e->member_uuid, b->nsb->member_uuid, 16))
			return 0;
		if (e->checkpoint < cp)
			cp = e->checkpoint;
	}
	for (int k = 0; k < 2; k++) {
		const struct rk_sb *s = nrd->copy[k].sb;
		if (nrd->copy[k].status != RK_COPY_OK || !s)
			continue;
		const struct rk_role *e = &s->roles[b->role];
		if (e->state == RK_ROLE_REBUILDING && e->checkpoint < cp)
			cp = e->checkpoint;
	}
	if (cp == UINT64_MAX)
		cp = 0;
	if (b->g.chunk)
		cp -= cp % b->g.chunk;
	return cp > b->g.member_size ? 0 : cp;
}

static rk_err rebuild_run(struct rebuild *b, const struct rk_sb_read *nrd)
{
	const struct rk_sb *f = b->info->sb;
	struct rk_rebuild_result *res = b->res;
	rk_err e;
	if ((e = rk_geom_init(&b->g, f->level, f->layout, f->chunk, f->nroles, f->data_size)))
		return rk_fail(RK_E_CORRUPT, "rebuild: the geometry in the superblock is not usable: %s", rk_errmsg());
	res->total = b->g.member_size;
	uint64_t *doff = calloc(b->n, sizeof *doff);
	if (!doff)
		return rk_fail(RK_E_NOMEM, "rebuild: out of memory");
	for (uint32_t r = 0; r < b->n; r++)
		doff[r] = b->sbs[r] ? rk_sb_member_data_offset(f, b->sbs[r]) : f->data_offset;
	e = rk_vol_open(&b->v, &b->g, b->devs, doff);
	free(doff);
	if (e)
		return e;
	rk_vol_on_fail(b->v, rebuild_member_failed, b);

	uint64_t step = b->o->checkpoint_bytes ? b->o->checkpoint_bytes : RK_REBUILD_CHECKPOINT_DEFAULT;
	if (b->g.chunk && step % b->g.chunk)
		step += b->g.chunk - step % b->g.chunk;

	memcpy(b->gen, f, sizeof *b->gen);
	/* members behind it (an update cut short) get it first, so the
	 * events+1 written next leaves none more than one behind */
	if ((e = write_members(b, 1, 0)))
		return e;
	uint64_t pos = 0, ev;
	if (res->new_kind == RK_NEW_RESUME) {
		pos = resume_point(b, nrd);
		res->start = pos;
		if (b->o->on_plan)
			b->o->on_plan(b->o->progress_ctx, res);
		/* NEW may be one generation behind (a crash in step 2): bring it level. */
		b->gen->roles[b->role].checkpoint = pos;
		if ((e = write_all(b, 1)))
			return e;
	} else {
		res->start = 0;
		if (b->o->on_plan)
			b->o->on_plan(b->o->progress_ctx, res);
		/* Roles absent without being marked are failed from here on, as
		 * an array write would record. */
		for (uint32_t r = 0; r < b->n; r++)
			if (r != b->role && !b->devs[r] &&
			    (b->gen->roles[r].state == RK_ROLE_ACTIVE || b->gen->roles[r].state == RK_ROLE_REBUILDING)) {
				b->gen->roles[r].state = RK_ROLE_FAULTY;
				b->gen->roles[r].checkpoint = 0;
			}
		memcpy(b->gen->roles[b->role].member_uuid, b->nsb->member_uuid, 16);
		b->gen->roles[b->role].state = RK_ROLE_REBUILDING;
		b->gen->roles[b->role].checkpoint = 0;
		b->gen->utime = (uint64_t)time(NULL);
		/* 1. NEW at the current events: never fresher than the members. */
		rk_sb_member_copy(b->tmp, b->gen, b->nsb);
		if ((e = rk_sb_write(b->nd, b->tmp)))
			return rk_fail(e, "%s: writing the superblock: %s", rk_dev_path(b->nd), rk_errmsg());
		/* 2. the members, then NEW, at events + 1. */
		if (rk_add_ovf(b->gen->events, 1, &ev))
			return rk_fail(RK_E_RANGE, "rebuild: event counter overflow");
		b->gen->events = ev;
		if ((e = write_all(b, 1)))
			return e;
	}
	/* 3. batches and checkpoints. */
	b->base = pos;
	while (pos < b->g.member_size) {
		uint64_t n = b->g.member_size - pos < step ? b->g.member_size - pos : step;
		b->cur = pos;
		if ((e = rk_vol_rebuild(b->v, b->role, b->nd, b->nsb->data_offset, pos, n, rebuild_progress, b)))
			return e;
		if (b->member_failed)
			return rk_fail(RK_E_IO, "rebuild: a member failed while being read (%s); the rebuild stopped at %llu and resumes there",
			               rk_errmsg(), (unsigned long long)pos);
		if ((e = rk_dev_flush(b->nd)))
			return rk_fail(e, "%s: flush: %s", rk_dev_path(b->nd), rk_errmsg());
		pos += n;
		b->gen->roles[b->role].checkpoint = pos;
		if ((e = write_all(b, 1)))
			return e;
		res->done = pos;
	}
	/* 4. active on the members first, then on NEW. */
	if (rk_add_ovf(b->gen->events, 1, &ev))
		return rk_fail(RK_E_RANGE, "rebuild: event counter overflow");
	b->gen->events = ev;
	b->gen->roles[b->role].state = RK_ROLE_ACTIVE;
	b->gen->roles[b->role].checkpoint = 0;
	b->gen->utime = (uint64_t)time(NULL);
	if ((e = write_all(b, 1)))
		return e;
	res->events_after = ev;
	res->done = b->g.member_size;
	return RK_OK;
}

rk_err rk_recover_rebuild(const char *newpath, char *const *paths, uint32_t npaths,
                          const struct rk_rebuild_opts *o, struct rk_rebuild_result *res)
{
	if (!newpath || !o || !res || (npaths && !paths))
		return rk_fail(RK_E_INVAL, "rebuild: bad arguments");
	memset(res, 0, sizeof *res);
	struct rk_discovery *d = NULL;
	rk_err e = rk_discover(&d, paths, npaths, NULL);
	if (e)
		return e;
	struct rebuild b;
	memset(&b, 0, sizeof b);
	struct rk_sb_read nrd;
	memset(&nrd, 0, sizeof nrd);
	nrd.chosen = -1;
	b.o = o;
	b.res = res;
	int create = 0;
	if (d->narrays == 0) {
		e = rk_fail(RK_E_NOSB, "no array found among the %u member(s) given", npaths);
		goto out;
	}
	if (d->narrays > 1) {
		char u[37];
		uuid_unparse_lower(d->arrays[1].uuid, u);
		e = rk_fail(RK_E_INVAL, "members of %u arrays given (also %s); give the members of one array", d->narrays, u);
		goto out;
	}
	const struct rk_array_info *a = &d->arrays[0];
	b.info = a;
	b.n = a->nroles;
	memcpy(res->array_uuid, a->uuid, 16);
	snprintf(res->name, sizeof res->name, "%s", a->name);
	res->level = a->sb->level;
	res->nroles = a->nroles;
	res->events_before = a->sb->events;
	res->was_unclean = a->sb->array_state == RK_ARRAY_ACTIVE;
	if (a->sb->origin != RK_ORIGIN_RAIDKIT) {
		e = rk_fail(RK_E_NOTSUP, "%s array: raidkit does not rebuild members of arrays other software made; "
		            "raid-assemble --export OUT makes a copy of the volume to work on", rk_view_origin_name(a->sb));
		goto out;
	}
	if (a->state == RK_ASTATE_CONFLICT) {
		e = rk_fail(RK_E_CONFLICT, "conflicting metadata: %s", a->why);
		goto out;
	}
	if (a->state == RK_ASTATE_FAILED) {
		e = rk_fail(RK_E_TOOFEW, "cannot rebuild: %s", a->why);
		goto out;
	}
	if (a->sb->level == 0 || a->sb->level == RK_LEVEL_LINEAR) {
		e = rk_fail(RK_E_NOTSUP, "RAID-%s has no redundancy: a lost member cannot be rebuilt",
		            rk_level_name(a->sb->level));
		goto out;
	}
	if (a->sb->feat_incompat & RK_FEAT_INCOMPAT_RESHAPE) {
		e = rk_fail(RK_E_NOTSUP, "a reshape is in progress: finish it with raid-resize --continue first");
		goto out;
	}
	b.devs = calloc(b.n, sizeof *b.devs);
	b.sbs = calloc(b.n, sizeof *b.sbs);
	b.gen = malloc(sizeof *b.gen);
	b.nsb = malloc(sizeof *b.nsb);
	b.tmp = malloc(sizeof *b.tmp);
	if (!b.devs || !b.sbs || !b.gen || !b.nsb || !b.tmp) {
		e = rk_fail(RK_E_NOMEM, "rebuild: out of memory");
		goto out;
	}
	if ((e = rebuild_plan(&b, newpath, &create, &nrd)))
		goto out;
	if ((e = rebuild_open(&b, newpath, create, &nrd)))
		goto out;
	if (res->was_unclean)
		rk_strcatf(res->notes, sizeof res->notes, "the array was not shut down cleanly: where a write was in flight, "
		    "parity may lag the data and the rebuilt member with it\n");
	e = rebuild_run(&b, &nrd);
out:
	rk_vol_close(b.v);
	if (b.devs)
		for (uint32_t r = 0; r < b.n; r++)
			rk_dev_close(b.devs[r]);
	if (b.sbs)
		for (uint32_t r = 0; r < b.n; r++)
			free(b.sbs[r]);
	rk_dev_close(b.nd);
	free(b.devs);
	free(b.sbs);
	free(b.gen);
	free(b.nsb);
	free(b.tmp);
	rk_sb_read_free(&nrd);
	rk_discovery_free(d);
	return e;
}

