/* recover.c: rebuild of a role onto a new member, and restoring superblock
 * copies (rk_recover.h has the contracts and the rebuild's write order). */
#include "rk_recover.h"

#include <errno.h>
#include <stdarg.h>
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
#include "rk_vol.h"

static const uint8_t nil_uuid[16];

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

const char *rk_restore_action_name(enum rk_restore_action a)
{
	switch (a) {
	case RK_RESTORE_OK: return "ok";
	case RK_RESTORE_COPY: return "copy rewritten";
	case RK_RESTORE_ROLE: return "superblock rebuilt";
	case RK_RESTORE_CANNOT: return "not repaired";
	case RK_RESTORE_SKIPPED: return "skipped";
	default: return "invalid";
	}
}

/* Appends to a fixed buffer, never overflowing. */
__attribute__((format(printf, 3, 4)))
static void cat(char *buf, size_t cap, const char *fmt, ...)
{
	size_t n = strnlen(buf, cap);
	if (n + 1 >= cap)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf + n, cap - n, fmt, ap);
	va_end(ap);
}

/* The same file or block device? */
static int same_object(const char *a, const char *b)
{
	struct stat x, y;
	if (stat(a, &x) || stat(b, &y))
		return 0;
	if (S_ISBLK(x.st_mode) && S_ISBLK(y.st_mode))
		return x.st_rdev == y.st_rdev;
	return x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

/* A member's superblock of generation TMPL: the array-wide fields from
 * TMPL, the member's own (uuid, role, offsets, size) from OWN. */
static void member_sb(struct rk_sb *out, const struct rk_sb *tmpl, const struct rk_sb *own)
{
	memcpy(out, tmpl, sizeof *out);
	memcpy(out->member_uuid, own->member_uuid, 16);
	out->this_role = own->this_role;
	out->sb_offset = own->sb_offset;
	out->dev_size = own->dev_size;
	out->data_offset = own->data_offset;
	out->journal_offset = own->journal_offset;
	out->journal_size = own->journal_size;
}

/* ---- rebuild ---- */

struct rb {
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

/* Writes generation GEN to every live member, then (when WITH_NEW) to NEW. */
static rk_err write_all(struct rb *b, int with_new)
{
	for (uint32_t r = 0; r < b->n; r++) {
		if (!b->devs[r])
			continue;
		member_sb(b->tmp, b->gen, b->sbs[r]);
		rk_err e = rk_sb_write(b->devs[r], b->tmp);
		if (e)
			return rk_fail(e, "%s: writing the superblock: %s", rk_dev_path(b->devs[r]), rk_errmsg());
		memcpy(b->sbs[r], b->tmp, sizeof *b->tmp);
	}
	if (!with_new)
		return RK_OK;
	member_sb(b->tmp, b->gen, b->nsb);
	rk_err e = rk_sb_write(b->nd, b->tmp);
	if (e)
		return rk_fail(e, "%s: writing the superblock: %s", rk_dev_path(b->nd), rk_errmsg());
	return RK_OK;
}

static void rb_progress(void *ctx, uint64_t done)
{
	struct rb *b = ctx;
	if (b->o->progress)
		b->o->progress(b->o->progress_ctx, b->cur - b->base + done, b->res->total - b->base);
}

static void rb_fail(void *ctx, uint32_t role, rk_err why)
{
	struct rb *b = ctx;
	(void)role;
	(void)why;
	b->member_failed = 1;
}

/* Which role, what NEW is, where to start.  Reads NEW (read-only) and the
 * discovery result; writes nothing. */
static rk_err rb_plan(struct rb *b, const char *newpath, int *create, struct rk_sb_read *nrd)
{
	const struct rk_array_info *a = b->info;
	const struct rk_sb *f = a->sb;
	struct rk_rebuild_result *res = b->res;
	const struct rk_rebuild_opts *o = b->o;
	int64_t new_role = -1;   /* NEW's own role in this array, if it was a member */
	struct stat st;
	*create = 0;

	for (uint32_t r = 0; r < a->nroles; r++)
		if (a->roles[r].cls == RK_MEMBER_ACTIVE && a->roles[r].path && same_object(a->roles[r].path, newpath))
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
		rk_err e = rk_dev_open(&d, newpath, RK_DEV_RDONLY);
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
			struct rk_probe_result pr;
			memset(&pr, 0, sizeof pr);
			e = rk_probe_path(newpath, &pr);
			if (e)
				return e;
			if (pr.found) {
				if (!o->force)
					return rk_fail(RK_E_EXISTS, "%s: holds %s; use --force to overwrite it", newpath, pr.what);
				res->new_kind = RK_NEW_FORCED;
				snprintf(res->new_what, sizeof res->new_what, "held %s (overwritten: --force)", pr.what);
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
			cat(list, sizeof list, "%s%u", nmiss ? ", " : "", r);
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
static rk_err rb_open(struct rb *b, const char *newpath, int create, const struct rk_sb_read *nrd)
{
	const struct rk_array_info *a = b->info;
	const struct rk_sb *f = a->sb;
	rk_err e;
	for (uint32_t r = 0; r < b->n; r++) {
		const struct rk_member *m = &a->roles[r];
		if (m->cls != RK_MEMBER_ACTIVE || !m->path)
			continue;
		if ((e = rk_dev_open(&b->devs[r], m->path, RK_DEV_RDWR)))
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
static uint64_t resume_point(struct rb *b, const struct rk_sb_read *nrd)
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

static rk_err rb_run(struct rb *b, const struct rk_sb_read *nrd)
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
		doff[r] = b->sbs[r] ? b->sbs[r]->data_offset : f->data_offset;
	e = rk_vol_open(&b->v, &b->g, b->devs, doff);
	free(doff);
	if (e)
		return e;
	rk_vol_on_fail(b->v, rb_fail, b);

	uint64_t step = b->o->checkpoint_bytes ? b->o->checkpoint_bytes : RK_REBUILD_CHECKPOINT_DEFAULT;
	if (b->g.chunk && step % b->g.chunk)
		step += b->g.chunk - step % b->g.chunk;

	memcpy(b->gen, f, sizeof *b->gen);
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
		member_sb(b->tmp, b->gen, b->nsb);
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
		if ((e = rk_vol_rebuild(b->v, b->role, b->nd, b->nsb->data_offset, pos, n, rb_progress, b)))
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
	struct rb b;
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
	if ((e = rb_plan(&b, newpath, &create, &nrd)))
		goto out;
	if ((e = rb_open(&b, newpath, create, &nrd)))
		goto out;
	if (res->was_unclean)
		cat(res->notes, sizeof res->notes, "the array was not shut down cleanly: where a write was in flight, "
		    "parity may lag the data and the rebuilt member with it\n");
	e = rb_run(&b, &nrd);
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

/* ---- restore-superblock ---- */

#define SAMPLE_DEFAULT 256u
#define SAMPLE_BYTES   (64u << 10)   /* bytes compared per sampled stripe or piece */

/* Both copies of SB encoded at the same place compare equal? */
static int same_copy(const struct rk_sb *x, const struct rk_sb *y, struct rk_sb *tmp, uint8_t *ba, uint8_t *bb)
{
	memcpy(tmp, x, sizeof *tmp);
	tmp->sb_offset = y->sb_offset;
	if (rk_sb_encode(tmp, ba, RK_SB_AREA) || rk_sb_encode(y, bb, RK_SB_AREA))
		return 0;
	return memcmp(ba, bb, y->sb_bytes ? y->sb_bytes : RK_SB_AREA) == 0;
}

static int all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

/* Does the data of candidate CAND (in role ROLE) agree with the other
 * members?  DEVS/DOFF: every role's device and data offset (CAND at ROLE).
 * Sentence in WHY; 1 when certain. */
static int verify_place(const struct rk_sb *f, rk_dev *const *devs, const uint64_t *doff, uint32_t role,
                        uint32_t sample, char *why, size_t cap)
{
	struct rk_geom g;
	if (rk_geom_init(&g, f->level, f->layout, f->chunk, f->nroles, f->data_size)) {
		snprintf(why, cap, "the array's geometry is not usable: %s", rk_errmsg());
		return 0;
	}
	uint32_t n = g.nroles;
	uint64_t L = g.chunk && g.chunk < SAMPLE_BYTES ? g.chunk : SAMPLE_BYTES;
	uint8_t *mem = aligned_alloc(64, (size_t)L * (n + 2));
	void **ptrs = calloc(g.q_slots + 2 > n + 2 ? g.q_slots + 2 : n + 2, sizeof *ptrs);
	uint32_t *vrole = calloc(n, sizeof *vrole), *slot = calloc(n, sizeof *slot);
	uint8_t *zero = calloc(1, (size_t)L);
	struct rk_loc *locs = calloc(g.copies, sizeof *locs);
	int ok = 0;
	uint64_t checked = 0, agree = 0, nonzero = 0;
	char first_bad[160] = "";
	if (!mem || !ptrs || !vrole || !slot || !zero || !locs) {
		snprintf(why, cap, "out of memory");
		goto out;
	}
#define BLK(i) (mem + (size_t)(i) * L)
	if (g.level == 4 || g.level == 5 || g.level == 6) {
		uint64_t ns = g.nstripes, cnt = ns < sample ? ns : sample;
		for (uint64_t i = 0; i < cnt; i++) {
			uint64_t s = cnt > 1 ? i * (ns - 1) / (cnt - 1) : 0;
			struct rk_stripe_map m = { .vol_role = vrole, .slot = slot };
			if (rk_geom_stripe_map(&g, s, &m))
				continue;
			int rd_ok = 1;
			for (uint32_t r = 0; r < n && rd_ok; r++)
				if (rk_dev_pread(devs[r], BLK(r), (size_t)L, doff[r] + s * g.chunk))
					rd_ok = 0;
			if (!rd_ok) {
				snprintf(why, cap, "cannot read stripe %llu: %s", (unsigned long long)s, rk_errmsg());
				goto out;
			}
			checked++;
			int nz = 0;
			for (uint32_t r = 0; r < n; r++)
				nz |= !all_zero(BLK(r), (size_t)L);
			nonzero += nz;
			int good;
			uint8_t *P = BLK(n), *Q = BLK(n + 1);
			if (g.level != 6) {
				for (uint32_t j = 0; j < g.ndata; j++)
					ptrs[j] = BLK(vrole[j]);
				ptrs[g.ndata] = P;
				if (g.ndata == 1)
					memcpy(P, BLK(vrole[0]), (size_t)L);
				else
					rk_parity()->xor_gen((int)g.ndata + 1, (size_t)L, ptrs);
				good = memcmp(P, BLK(m.p_role), (size_t)L) == 0;
			} else {
				uint32_t slots = g.q_slots + 2;
				for (uint32_t k = 0; k < slots; k++)
					ptrs[k] = zero;
				for (uint32_t j = 0; j < g.ndata; j++)
					ptrs[slot[vrole[j]]] = BLK(vrole[j]);
				ptrs[g.q_slots] = P;
				ptrs[g.q_slots + 1] = Q;
				rk_parity()->gen((int)slots, (size_t)L, ptrs);
				good = memcmp(P, BLK(m.p_role), (size_t)L) == 0 && memcmp(Q, BLK(m.q_role), (size_t)L) == 0;
			}
			agree += good;
			if (!good && !first_bad[0])
				snprintf(first_bad, sizeof first_bad, "stripe %llu", (unsigned long long)s);
		}
		if (checked && agree == checked && nonzero) {
			snprintf(why, cap, "parity%s of %llu sampled stripes (%llu holding data) agrees with it in role %u",
			         g.level == 6 ? " (P and Q)" : "", (unsigned long long)checked, (unsigned long long)nonzero, role);
			ok = 1;
		} else if (checked && agree == checked) {
			snprintf(why, cap, "every one of %llu sampled stripes holds only zeros: nothing shows it belongs in role %u "
			         "(raid-recover --rebuild can rebuild it)", (unsigned long long)checked, role);
		} else {
			snprintf(why, cap, "parity of %llu of %llu sampled stripes disagrees with it in role %u (first: %s)",
			         (unsigned long long)(checked - agree), (unsigned long long)checked, role, first_bad);
		}
	} else if (g.level == 1 || g.level == 10) {
		uint64_t unit = g.chunk ? g.chunk : L, npieces = g.member_size / unit, cnt = npieces < sample ? npieces : sample;
		uint64_t used = L < unit ? L : unit;
		for (uint64_t i = 0; i < cnt; i++) {
			uint64_t moff = (cnt > 1 ? i * (npieces - 1) / (cnt - 1) : 0) * unit, voff;
			enum rk_blk_kind kind;
			if (rk_geom_unmap(&g, role, moff, &voff, &kind) || kind != RK_BLK_DATA)
				continue;
			uint32_t k = rk_geom_copies(&g, voff, locs, g.copies), other = k;
			for (uint32_t c = 0; c < k; c++)
				if (locs[c].role != role && devs[locs[c].role]) {
					other = c;
					break;
				}
			if (other == k)
				continue;
			if (rk_dev_pread(devs[role], BLK(0), (size_t)used, doff[role] + moff) ||
			    rk_dev_pread(devs[locs[other].role], BLK(1), (size_t)used, doff[locs[other].role] + locs[other].member_off)) {
				snprintf(why, cap, "cannot read the sample at %llu: %s", (unsigned long long)moff, rk_errmsg());
				goto out;
			}
			checked++;
			nonzero += !all_zero(BLK(1), (size_t)used);
			int good = memcmp(BLK(0), BLK(1), (size_t)used) == 0;
			agree += good;
			if (!good && !first_bad[0])
				snprintf(first_bad, sizeof first_bad, "member byte %llu against role %u", (unsigned long long)moff,
				         locs[other].role);
		}
		if (checked && agree == checked && nonzero) {
			snprintf(why, cap, "%llu sampled pieces (%llu holding data) equal another copy's", (unsigned long long)checked,
			         (unsigned long long)nonzero);
			ok = 1;
		} else if (checked && agree == checked) {
			snprintf(why, cap, "every one of %llu sampled pieces holds only zeros: nothing shows it belongs in role %u "
			         "(raid-recover --rebuild can rebuild it)", (unsigned long long)checked, role);
		} else if (checked) {
			snprintf(why, cap, "%llu of %llu sampled pieces differ from another copy (first: %s)",
			         (unsigned long long)(checked - agree), (unsigned long long)checked, first_bad);
		} else {
			snprintf(why, cap, "no other copy to compare with");
		}
	} else {
		snprintf(why, cap, "RAID-%s has no redundancy to check a member's place against", rk_level_name(g.level));
	}
#undef BLK
out:
	free(mem);
	free(ptrs);
	free(vrole);
	free(slot);
	free(zero);
	free(locs);
	return ok;
}

void rk_restore_result_free(struct rk_restore_result *r)
{
	if (!r)
		return;
	free(r->m);
	free(r);
}

/* Opens PATH read-write through the test hook. */
static rk_err open_rw(const struct rk_restore_opts *o, uint32_t idx, const char *path, rk_dev **d)
{
	rk_err e = rk_dev_open(d, path, RK_DEV_RDWR);
	if (!e && o && o->wrap_dev)
		e = o->wrap_dev(o->wrap_ctx, idx, d);
	return e;
}

/* Step 1: a member with one good copy gets the other rewritten from it. */
static void restore_copies(const struct rk_restore_opts *o, uint32_t i, struct rk_restore_member *m,
                           int *pending, struct rk_sb *tmp, uint8_t *ba, uint8_t *bb)
{
	rk_dev *d = NULL;
	struct rk_sb_read rd;
	memset(&rd, 0, sizeof rd);
	rd.chosen = -1;
	rk_err e = rk_dev_open(&d, m->path, RK_DEV_RDONLY);
	if (e) {
		m->action = RK_RESTORE_CANNOT;
		snprintf(m->what, sizeof m->what, "cannot open: %s", rk_errmsg());
		return;
	}
	e = rk_sb_read(d, &rd);
	rk_dev_close(d);
	if (e == RK_E_NOSB || (e == RK_OK && rd.chosen < 0)) {
		*pending = 1;
		m->action = RK_RESTORE_SKIPPED;
		snprintf(m->what, sizeof m->what, "no valid superblock copy (primary: %s; backup: %s)",
		         rd.copy[0].why[0] ? rd.copy[0].why : rk_strerror(rd.copy[0].err),
		         rd.copy[1].why[0] ? rd.copy[1].why : rk_strerror(rd.copy[1].err));
		rk_sb_read_free(&rd);
		return;
	}
	if (e) {
		m->action = RK_RESTORE_CANNOT;
		snprintf(m->what, sizeof m->what, "cannot read the superblocks: %s", rk_errmsg());
		rk_sb_read_free(&rd);
		return;
	}
	int c = rd.chosen, oth = 1 - c;
	const struct rk_sb *good = rd.copy[c].sb;
	const struct rk_sb_copy *bad = &rd.copy[oth];
	const char *cname = c ? "backup" : "primary", *oname = oth ? "backup" : "primary";
	m->role = good->this_role == RK_ROLE_NONE ? -1 : (int64_t)good->this_role;
	m->events = good->events;
	char reason[400];
	if (bad->status != RK_COPY_OK || !bad->sb) {
		snprintf(reason, sizeof reason, "the %s copy at %llu is %s (%s)", oname, (unsigned long long)bad->offset,
		         bad->status == RK_COPY_ABSENT ? "missing" : "damaged",
		         bad->why[0] ? bad->why : rk_strerror(bad->err));
	} else if (bad->sb->events != good->events) {
		snprintf(reason, sizeof reason, "the %s copy is older (events %llu, the %s copy has %llu)", oname,
		         (unsigned long long)bad->sb->events, cname, (unsigned long long)good->events);
	} else if (!same_copy(good, bad->sb, tmp, ba, bb)) {
		snprintf(reason, sizeof reason, "the %s copy differs from the %s copy at the same events %llu", oname, cname,
		         (unsigned long long)good->events);
	} else {
		m->action = RK_RESTORE_OK;
		snprintf(m->what, sizeof m->what, "both copies good (role %lld, events %llu)", (long long)m->role,
		         (unsigned long long)m->events);
		rk_sb_read_free(&rd);
		return;
	}
	/* Same contents, events unchanged: the member stays in step with the
	 * others; rk_sb_write rewrites the untrusted copy first. */
	e = open_rw(o, i, m->path, &d);
	if (!e) {
		e = rk_sb_write(d, good);
		if (e)
			e = rk_fail(e, "%s", rk_errmsg());
	}
	rk_dev_close(d);
	if (e) {
		m->action = RK_RESTORE_CANNOT;
		snprintf(m->what, sizeof m->what, "%s; rewriting it failed: %s", reason, rk_errmsg());
	} else {
		m->action = RK_RESTORE_COPY;
		m->copies = 1 << oth;
		snprintf(m->what, sizeof m->what, "%s: rewrote it from the %s copy (role %lld, events %llu)", reason, cname,
		         (long long)m->role, (unsigned long long)m->events);
	}
	rk_sb_read_free(&rd);
}

/* Step 2: members with neither copy, placed from the other members' table. */
static void restore_roles(char *const *paths, uint32_t npaths, const struct rk_restore_opts *o,
                          struct rk_restore_result *res)
{
	struct rk_discovery *d = NULL;
	if (rk_discover(&d, paths, npaths, NULL)) {
		for (uint32_t i = 0; i < npaths; i++)
			if (res->m[i].action == RK_RESTORE_SKIPPED)
				cat(res->m[i].what, sizeof res->m[i].what, "; cannot place it: %s", rk_errmsg());
		return;
	}
	/* Candidate arrays: one role without any member given, ACTIVE in the
	 * freshest table, and no stale image of it given. */
	int64_t cand_a = -1, cand_r = -1;
	uint32_t ncand = 0;
	char whynot[512] = "";
	for (uint32_t ai = 0; ai < d->narrays; ai++) {
		const struct rk_array_info *a = &d->arrays[ai];
		uint32_t nmiss = 0;
		int64_t mr = -1;
		for (uint32_t r = 0; r < a->nroles; r++)
			if (a->roles[r].cls != RK_MEMBER_ACTIVE) {
				nmiss++;
				mr = r;
			}
		if (nmiss != 1 || a->state == RK_ASTATE_CONFLICT) {
			if (nmiss > 1)
				cat(whynot, sizeof whynot, "%sarray %s has %u roles without a member", whynot[0] ? "; " : "",
				    a->name[0] ? a->name : "(unnamed)", nmiss);
			continue;
		}
		const struct rk_role *fe = &a->sb->roles[mr];
		int stale_given = 0;
		for (uint32_t k = 0; k < d->nleft; k++)
			if (d->left[k].array_idx == (int32_t)ai && d->left[k].role == mr)
				stale_given = 1;
		if (fe->state != RK_ROLE_ACTIVE || memcmp(fe->member_uuid, nil_uuid, 16) == 0) {
			cat(whynot, sizeof whynot, "%srole %lld is %s in the members' table: rebuild it with --rebuild",
			    whynot[0] ? "; " : "", (long long)mr, rk_role_state_name(fe->state));
			continue;
		}
		if (stale_given) {
			cat(whynot, sizeof whynot, "%sa stale member of role %lld is given", whynot[0] ? "; " : "", (long long)mr);
			continue;
		}
		ncand++;
		cand_a = ai;
		cand_r = mr;
	}
	if (ncand != 1) {
		for (uint32_t i = 0; i < npaths; i++)
			if (res->m[i].action == RK_RESTORE_SKIPPED) {
				if (ncand > 1)
					cat(res->m[i].what, sizeof res->m[i].what,
					    "; its place is not certain: %u arrays each lack one member", ncand);
				else if (d->narrays == 0)
					cat(res->m[i].what, sizeof res->m[i].what,
					    "; no member of any array is given to take a role table from");
				else
					cat(res->m[i].what, sizeof res->m[i].what, "; no role is waiting for it%s%s",
					    whynot[0] ? ": " : "", whynot);
				if (d->narrays)
					res->m[i].action = RK_RESTORE_CANNOT;
			}
		rk_discovery_free(d);
		return;
	}
	const struct rk_array_info *a = &d->arrays[cand_a];
	const struct rk_sb *f = a->sb;
	uint32_t role = (uint32_t)cand_r;
	/* The unknown paths whose size matches a member's. */
	uint32_t nsize = 0, pick = 0;
	for (uint32_t i = 0; i < npaths; i++) {
		if (res->m[i].action != RK_RESTORE_SKIPPED)
			continue;
		res->m[i].action = RK_RESTORE_CANNOT;
		rk_dev *dv = NULL;
		uint64_t size = 0;
		if (rk_dev_open(&dv, paths[i], RK_DEV_RDONLY) == RK_OK)
			size = rk_dev_size(dv);
		rk_dev_close(dv);
		int match = 0;
		for (uint32_t r = 0; r < a->nroles; r++)
			if (a->roles[r].cls == RK_MEMBER_ACTIVE && a->roles[r].sb && a->roles[r].sb->dev_size == size)
				match = 1;
		if (!match) {
			cat(res->m[i].what, sizeof res->m[i].what, "; its size (%llu bytes) is no member's size", (unsigned long long)size);
			continue;
		}
		nsize++;
		pick = i;
	}
	if (nsize != 1) {
		for (uint32_t i = 0; i < npaths; i++)
			if (res->m[i].action == RK_RESTORE_CANNOT && nsize > 1 && !strstr(res->m[i].what, "no member's size"))
				cat(res->m[i].what, sizeof res->m[i].what,
				    "; %u files without a superblock could be role %u: not certain which", nsize, role);
		rk_discovery_free(d);
		return;
	}
	struct rk_restore_member *m = &res->m[pick];
	/* Verify the data with the file in ROLE. */
	uint32_t n = a->nroles;
	rk_dev **devs = calloc(n, sizeof *devs);
	uint64_t *doff = calloc(n, sizeof *doff);
	struct rk_sb *nsb = malloc(sizeof *nsb);
	char vwhy[512] = "";
	int ok = 0;
	rk_err e = RK_OK;
	if (!devs || !doff || !nsb) {
		cat(m->what, sizeof m->what, "; out of memory");
		goto done;
	}
	for (uint32_t r = 0; r < n && !e; r++) {
		const char *p = r == role ? paths[pick] : a->roles[r].path;
		if (!p)
			continue;
		e = rk_dev_open(&devs[r], p, RK_DEV_RDONLY);
		doff[r] = r == role ? f->data_offset : a->roles[r].sb->data_offset;
	}
	if (e) {
		cat(m->what, sizeof m->what, "; %s", rk_errmsg());
		goto done;
	}
	ok = verify_place(f, devs, doff, role, o && o->sample ? o->sample : SAMPLE_DEFAULT, vwhy, sizeof vwhy);
	for (uint32_t r = 0; r < n; r++) {
		rk_dev_close(devs[r]);
		devs[r] = NULL;
	}
	if (!ok) {
		cat(m->what, sizeof m->what, "; role %u is the one without a member, but %s: not restored", role, vwhy);
		goto done;
	}
	/* The freshest member's superblock, as the member of ROLE. */
	memcpy(nsb, f, sizeof *nsb);
	memcpy(nsb->member_uuid, f->roles[role].member_uuid, 16);
	nsb->this_role = role;
	nsb->dev_size = 0;   /* the device's size */
	nsb->data_offset = f->data_offset;
	rk_dev *dv = NULL;
	e = open_rw(o, pick, paths[pick], &dv);
	if (!e) {
		nsb->dev_size = rk_dev_size(dv);
		nsb->sb_offset = rk_sb_primary_offset(nsb->dev_size);
		e = rk_sb_write(dv, nsb);
	}
	rk_dev_close(dv);
	if (e) {
		cat(m->what, sizeof m->what, "; writing its superblock failed: %s", rk_errmsg());
		goto done;
	}
	char u[37];
	uuid_unparse_lower(nsb->member_uuid, u);
	m->action = RK_RESTORE_ROLE;
	m->copies = 3;
	m->role = role;
	m->events = nsb->events;
	cat(m->what, sizeof m->what, "; it is role %u (the only role without a member; %s): wrote both copies from the "
	    "other members' role table (member UUID %s, events %llu)", role, vwhy, u, (unsigned long long)nsb->events);
done:
	if (devs)
		for (uint32_t r = 0; r < n; r++)
			rk_dev_close(devs[r]);
	free(devs);
	free(doff);
	free(nsb);
	rk_discovery_free(d);
}

rk_err rk_recover_restore(char *const *paths, uint32_t npaths, const struct rk_restore_opts *o,
                          struct rk_restore_result **out)
{
	if (!out || (npaths && !paths))
		return rk_fail(RK_E_INVAL, "restore: bad arguments");
	*out = NULL;
	struct rk_restore_result *res = calloc(1, sizeof *res);
	struct rk_sb *tmp = malloc(sizeof *tmp);
	uint8_t *ba = malloc(RK_SB_AREA), *bb = malloc(RK_SB_AREA);
	if (res)
		res->m = calloc(npaths ? npaths : 1, sizeof *res->m);
	if (!res || !res->m || !tmp || !ba || !bb) {
		rk_restore_result_free(res);
		free(tmp);
		free(ba);
		free(bb);
		return rk_fail(RK_E_NOMEM, "restore: out of memory");
	}
	res->n = npaths;
	int pending = 0;
	for (uint32_t i = 0; i < npaths; i++) {
		res->m[i].path = paths[i];
		res->m[i].role = -1;
		restore_copies(o, i, &res->m[i], &pending, tmp, ba, bb);
	}
	free(tmp);
	free(ba);
	free(bb);
	if (pending)
		restore_roles(paths, npaths, o, res);
	for (uint32_t i = 0; i < npaths; i++) {
		if (res->m[i].action == RK_RESTORE_COPY || res->m[i].action == RK_RESTORE_ROLE)
			res->nrepaired++;
		if (res->m[i].action == RK_RESTORE_CANNOT)
			res->ncannot++;
	}
	*out = res;
	return RK_OK;
}
