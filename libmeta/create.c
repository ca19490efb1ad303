/* create.c: creating an array (mkraid's library half): the plan (options,
 * members, data area, superblock) and the commit.  Finding old data and
 * making redundancy consistent is create_fill.c.  See rk_create.h for the
 * contract and the order of writes. */
#include "create_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <uuid/uuid.h>

#include "rk_print.h"
#include "rk_probe.h"
#include "rk_util.h"

/* ---- small helpers ---- */

void create_note(struct rk_create_plan *p, const char *fmt, ...)
{
	char line[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	size_t old = p->notes ? strlen(p->notes) : 0;
	char *n = realloc(p->notes, old + strlen(line) + 2);
	if (!n)
		return;              /* notes are informational only */
	memcpy(n + old, line, strlen(line));
	n[old + strlen(line)] = '\n';
	n[old + strlen(line) + 1] = '\0';
	p->notes = n;
}

static int is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

/* ---- prepare ---- */

static void plan_clear(struct rk_create_plan *p)
{
	if (!p)
		return;
	if (p->members)
		for (uint32_t i = 0; i < p->nroles; i++)
			free(p->members[i].path);
	free(p->members);
	free(p->notes);
	memset(p, 0, sizeof *p);
}

void rk_create_plan_free(struct rk_create_plan *p)
{
	plan_clear(p);
}

void rk_create_free(rk_creator *c)
{
	if (!c)
		return;
	for (uint32_t i = 0; i < c->plan.nroles; i++) {
		if (c->devs)
			rk_dev_close(c->devs[i]);
		if (c->wipe)
			free(c->wipe[i]);
	}
	if (c->from_fd >= 0)
		close(c->from_fd);
	RK_FREE_ALL(c->devs, c->wipe, c->tmpl, c->from);
	plan_clear(&c->plan);
	free(c);
}

const struct rk_create_plan *rk_create_get_plan(const rk_creator *c)
{
	return c ? &c->plan : NULL;
}

/* Checks the options that do not need the members. */
static rk_err check_opts(const struct rk_create_opts *o, uint64_t *chunk, uint32_t *layout)
{
	if (!o || !o->paths)
		return rk_fail(RK_E_INVAL, "no members given");
	if (!rk_level_name(o->level))
		return rk_fail(RK_E_INVAL, "level %d: not a level raidkit knows", (int)o->level);
	*chunk = o->chunk ? o->chunk : RK_CREATE_CHUNK_DEFAULT;
	if (!is_pow2(*chunk) || *chunk < RK_CHUNK_MIN || *chunk > RK_CHUNK_MAX)
		return rk_fail(RK_E_INVAL, "chunk %llu: must be a power of two from 4K to 16M",
		               (unsigned long long)*chunk);
	*layout = o->layout == RK_CREATE_LAYOUT_DEFAULT ? rk_layout_default(o->level) : o->layout;
	if (o->nmembers == 0)
		return rk_fail(RK_E_INVAL, "no members given");
	if (o->nmembers > RK_SB_MAX_ROLES)
		return rk_fail(RK_E_INVAL, "%u members: at most %u are possible", o->nmembers, RK_SB_MAX_ROLES);
	uint32_t minr = rk_level_min_roles(o->level);
	if (o->nmembers < minr)
		return rk_fail(RK_E_INVAL, "level %s needs at least %u members, %u given",
		               rk_level_name(o->level), minr, o->nmembers);
	if (o->name && strlen(o->name) > RK_SB_NAME_LEN)
		return rk_fail(RK_E_INVAL, "name \"%s\": at most %u bytes", o->name, RK_SB_NAME_LEN);
	return RK_OK;
}

/* Usable data bytes on a member of DEV_SIZE: from the data offset to the
 * backup superblock copy, in whole 4 KiB blocks; 0 when there is none. */
static uint64_t usable_of(uint64_t dev_size)
{
	return rk_sb_max_data_size(dev_size, RK_DATA_OFFSET_DEFAULT, 0);
}

/* Opens member I (present path) and records what is needed. */
static rk_err open_member(rk_creator *c, const struct rk_create_opts *o, uint32_t i)
{
	struct rk_create_member *m = &c->plan.members[i];
	const char *path = o->paths[i];
	struct stat st;

	if (stat(path, &st) != 0) {
		if (errno == ENOENT && o->create_size) {
			m->created = 1;
			m->dev_size = o->create_size;
			return RK_OK;
		}
		if (errno == ENOENT)
			return rk_fail(RK_E_OPEN, "%s: no such file (use --create-size to create member files)", path);
		return rk_fail(RK_E_OPEN, "%s: cannot open: %s", path, strerror(errno));
	}
	if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode))
		return rk_fail(RK_E_INVAL, "%s: not a regular file or block device", path);
	rk_err e = rk_dev_open(&c->devs[i], path, RK_DEV_RDWR);
	if (e)
		return e;
	m->dev_size = rk_dev_size(c->devs[i]);
	m->blockdev = rk_dev_is_blockdev(c->devs[i]);

	char what[256];
	int found;
	if ((e = rk_probe_occupant(path, o->force, what, sizeof what, &found)))
		return e;
	if (found) {
		snprintf(m->found, sizeof m->found, "%s", what);
		c->wipe[i] = strdup(path);
		if (!c->wipe[i])
			return rk_fail(RK_E_NOMEM, "%s: no memory", path);
		create_note(&c->plan, "%s: held %s; overwritten (--force)", path, what);
	}
	return RK_OK;
}

/* A creator for options O (checked: CHUNK, LAYOUT), the plan's array-wide
 * fields filled in; NULL when out of memory. */
static rk_creator *creator_new(const struct rk_create_opts *o, uint64_t chunk, uint32_t layout)
{
	rk_creator *c = calloc(1, sizeof *c);
	if (!c)
		return NULL;
	c->from_fd = -1;
	c->progress = o->progress;
	c->progress_ctx = o->progress_ctx;
	c->wrap_dev = o->wrap_dev;
	c->wrap_ctx = o->wrap_ctx;
	struct rk_create_plan *p = &c->plan;
	p->nroles = o->nmembers;
	p->members = calloc(o->nmembers, sizeof *p->members);
	c->devs = calloc(o->nmembers, sizeof *c->devs);
	c->wipe = calloc(o->nmembers, sizeof *c->wipe);
	if (!p->members || !c->devs || !c->wipe) {
		rk_create_free(c);
		return NULL;
	}
	p->level = o->level;
	p->layout = layout;
	/* Linear and RAID-1 have no stripe unit (the superblock records 0). */
	if (o->level == RK_LEVEL_LINEAR || o->level == 1) {
		if (o->chunk)
			create_note(p, "-c %llu ignored: level %s has no stripe unit", (unsigned long long)o->chunk,
			     rk_level_name(o->level));
		chunk = 0;
	}
	p->chunk = chunk;
	snprintf(p->name, sizeof p->name, "%s", o->name ? o->name : "");
	p->data_offset = RK_DATA_OFFSET_DEFAULT;
	p->ctime = (uint64_t)time(NULL);
	uuid_generate(p->array_uuid);
	return c;
}

/* Member I may not be given twice, by the same name or another name of the
 * same file or device (said before the second exclusive open fails as "in
 * use"). */
static rk_err check_not_twice(const struct rk_create_opts *o, uint32_t i)
{
	for (uint32_t k = 0; k < i; k++)
		if (o->paths[k] && !strcmp(o->paths[k], o->paths[i]))
			return rk_fail(RK_E_INVAL, "%s: given twice (roles %u and %u)", o->paths[i], k, i);
	for (uint32_t k = 0; k < i; k++)
		if (o->paths[k] && rk_path_same_object(o->paths[i], o->paths[k]))
			return rk_fail(RK_E_INVAL, "%s: the same member as %s (role %u)", o->paths[i], o->paths[k], k);
	return RK_OK;
}

/* Opens and probes every present member. */
static rk_err open_members(rk_creator *c, const struct rk_create_opts *o)
{
	struct rk_create_plan *p = &c->plan;
	uint32_t present = 0;
	for (uint32_t i = 0; i < o->nmembers; i++) {
		struct rk_create_member *m = &p->members[i];
		m->role = i;
		if (!o->paths[i]) {
			p->nmissing++;
			continue;
		}
		present++;
		if (!(m->path = strdup(o->paths[i])))
			return rk_fail(RK_E_NOMEM, "no memory");
		rk_err e = check_not_twice(o, i);
		if (e || (e = open_member(c, o, i)))
			return e;
	}
	if (present == 0)
		return rk_fail(RK_E_TOOFEW, "every member is missing");
	return RK_OK;
}

/* The data area: the smallest member's usable space (in UNIT multiples),
 * limited by --size; *DSIZE gets it. */
static rk_err size_data_area(rk_creator *c, const struct rk_create_opts *o, uint64_t unit, uint64_t *dsize)
{
	struct rk_create_plan *p = &c->plan;
	char b1[32], b2[32];
	uint64_t umin = UINT64_MAX, umax = 0;
	for (uint32_t i = 0; i < o->nmembers; i++) {
		struct rk_create_member *m = &p->members[i];
		if (!m->path)
			continue;
		uint64_t u = usable_of(m->dev_size);
		uint64_t need = RK_DATA_OFFSET_DEFAULT + unit + RK_SB_AREA + RK_SB_ALIGN;
		if (u < unit)
			return rk_fail(RK_E_SHORT, "%s: too small (%s); a member needs at least %s", o->paths[i],
			               rk_size_words(m->dev_size, b1, sizeof b1), rk_size_words(need, b2, sizeof b2));
		if (u < umin) {
			umin = u;
			p->usable_min_role = i;
		}
		if (u > umax) {
			umax = u;
			p->usable_max_role = i;
		}
	}
	p->usable_min = umin;
	p->usable_max = umax;
	*dsize = umin;
	if (o->size) {
		if (o->size > umin)
			return rk_fail(RK_E_RANGE, "--size %llu: more than %s offers (%llu usable bytes)",
			               (unsigned long long)o->size, p->members[p->usable_min_role].path,
			               (unsigned long long)umin);
		*dsize = o->size;
	}
	*dsize -= *dsize % unit;
	if (*dsize < unit)
		return rk_fail(RK_E_RANGE, "--size %llu: less than one chunk (%llu bytes)",
		               (unsigned long long)o->size, (unsigned long long)unit);
	if (umax - umin >= unit)
		create_note(p, "members differ in size: %s has %s usable, %s has %s; using %s of each",
		     p->members[p->usable_min_role].path, rk_size_words(umin, b1, sizeof b1),
		     p->members[p->usable_max_role].path, rk_size_words(umax, b2, sizeof b2),
		     rk_size_words(*dsize, (char[32]){0}, 32));
	if (o->size)
		create_note(p, "using %s of each member (--size), the start of the member first",
		     rk_size_words(*dsize, b1, sizeof b1));
	return RK_OK;
}

/* The superblock every member gets (member fields set at commit), over the
 * geometry already in c->g. */
static rk_err make_template(rk_creator *c, const struct rk_create_opts *o)
{
	struct rk_create_plan *p = &c->plan;
	unsigned char *missing = calloc(o->nmembers, 1);
	c->tmpl = malloc(sizeof *c->tmpl);
	if (!missing || !c->tmpl) {
		free(missing);
		return rk_fail(RK_E_NOMEM, "no memory");
	}
	for (uint32_t i = 0; i < o->nmembers; i++)
		missing[i] = !o->paths[i];
	struct rk_sb_params sp = {
		.array_uuid = p->array_uuid, .name = p->name, .level = o->level, .layout = p->layout,
		.chunk = p->chunk, .nroles = o->nmembers, .missing = missing,
		.data_offset = RK_DATA_OFFSET_DEFAULT, .data_size = c->g.member_size,
	};
	rk_err e = rk_sb_init(c->tmpl, &sp);
	free(missing);
	if (e)
		return e;
	c->tmpl->events = 1;
	c->tmpl->ctime = c->tmpl->utime = p->ctime;
	for (uint32_t i = 0; i < o->nmembers; i++)
		memcpy(p->members[i].uuid, c->tmpl->roles[i].member_uuid, 16);
	p->data_size = c->tmpl->data_size;
	p->volume_size = c->tmpl->volume_size;
	if (p->volume_size != c->g.volume_size)
		return rk_fail(RK_E_CORRUPT, "internal: the engine's volume size %llu differs from the superblock's %llu",
		               (unsigned long long)c->g.volume_size, (unsigned long long)p->volume_size);
	return RK_OK;
}

/* --from: the file or device whose bytes become the volume's start; it must
 * fit (*FROM_TOO_BIG 1 when it does not). */
static rk_err open_from(rk_creator *c, const char *from, int *from_too_big)
{
	struct rk_create_plan *p = &c->plan;
	int fd = open(from, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return rk_fail(RK_E_OPEN, "--from %s: cannot open: %s", from, strerror(errno));
	c->from_fd = fd;
	if (!(c->from = strdup(from)))
		return rk_fail(RK_E_NOMEM, "no memory");
	int is_reg;
	uint64_t fs;
	if (rk_probe_fd_size(fd, &fs, &is_reg) != 0)
		return rk_fail(RK_E_INVAL, "--from %s: not a regular file or block device", from);
	p->from_size = fs;
	if (fs > p->volume_size) {
		if (from_too_big)
			*from_too_big = 1;
		return rk_fail(RK_E_RANGE, "--from %s: %llu bytes do not fit the volume of %llu bytes",
		               from, (unsigned long long)fs, (unsigned long long)p->volume_size);
	}
	return RK_OK;
}

/* The steps of prepare after the options are checked. */
static rk_err prepare_steps(rk_creator *c, const struct rk_create_opts *o, int *from_too_big)
{
	struct rk_create_plan *p = &c->plan;
	uint64_t unit = p->chunk ? p->chunk : RK_SB_ALIGN;    /* data_size granularity */
	uint64_t dsize = 0;
	rk_err e = open_members(c, o);
	if (e || (e = size_data_area(c, o, unit, &dsize)))
		return e;
	if ((e = rk_geom_init(&c->g, o->level, p->layout, p->chunk, o->nmembers, dsize)))
		return e;
	if (p->nmissing > rk_geom_redundancy(&c->g))
		return rk_fail(RK_E_TOOFEW, "%u members missing: level %s survives at most %u",
		               p->nmissing, rk_level_name(o->level), rk_geom_redundancy(&c->g));
	if ((e = make_template(c, o)))
		return e;
	return o->from ? open_from(c, o->from, from_too_big) : RK_OK;
}

rk_err rk_create_prepare(rk_creator **out, const struct rk_create_opts *o, int *from_too_big)
{
	uint64_t chunk = 0;
	uint32_t layout = 0;
	if (from_too_big)
		*from_too_big = 0;
	if (!out)
		return rk_fail(RK_E_INVAL, "rk_create_prepare: no output");
	*out = NULL;
	rk_err e = check_opts(o, &chunk, &layout);
	if (e)
		return e;
	rk_creator *c = creator_new(o, chunk, layout);
	if (!c)
		return rk_fail(RK_E_NOMEM, "no memory");
	if ((e = prepare_steps(c, o, from_too_big))) {
		rk_create_free(c);
		return e;
	}
	*out = c;
	return RK_OK;
}

/* ---- commit ---- */

/* Invalidates an old raidkit superblock (both copies) before data is
 * written (force only): a crash in the middle then leaves a member with no
 * superblock, never an old array that would assemble over rewritten data. */
static rk_err wipe_old_superblocks(rk_dev *d)
{
	struct rk_sb_read rd;
	rk_err e = RK_OK;
	uint8_t *zero = calloc(1, RK_SB_ALIGN);
	if (!zero)
		return rk_fail(RK_E_NOMEM, "%s: no memory", rk_dev_path(d));
	(void)rk_sb_read(d, &rd);     /* NOSB is fine: look at each copy */
	for (int k = 0; k < 2 && !e; k++) {
		uint64_t off = rd.copy[k].offset;
		if (rd.copy[k].status == RK_COPY_ABSENT || off == 0 || off > rk_dev_size(d) ||
		    rk_dev_size(d) - off < RK_SB_ALIGN)
			continue;
		e = rk_dev_pwrite(d, zero, RK_SB_ALIGN, off);
	}
	rk_sb_read_free(&rd);
	free(zero);
	if (!e)
		e = rk_dev_flush(d);
	return e;
}

rk_err rk_create_commit(rk_creator *c)
{
	if (!c || c->committed)
		return rk_fail(RK_E_INVAL, "rk_create_commit: nothing prepared or committed twice");
	c->committed = 1;
	struct rk_create_plan *p = &c->plan;
	rk_err e = RK_OK;
	uint32_t i;

	/* 1. new member files (sparse). */
	for (i = 0; i < p->nroles && !e; i++) {
		struct rk_create_member *m = &p->members[i];
		if (m->path && m->created && !c->devs[i])
			e = rk_dev_create(&c->devs[i], m->path, m->dev_size);
	}
	for (i = 0; i < p->nroles && !e && c->wrap_dev; i++)
		if (c->devs[i])
			e = c->wrap_dev(c->wrap_ctx, i, &c->devs[i]);
	/* 2. foreign signatures (force). */
	for (i = 0; i < p->nroles && !e; i++) {
		if (!c->wipe[i])
			continue;
		e = rk_probe_wipe_signatures(c->wipe[i]);
		if (!e && c->devs[i])
			e = wipe_old_superblocks(c->devs[i]);
	}

	/* 3 and 4: through the engine, only when there is something to do. */
	if (!e) {
		rk_vol *v = NULL;
		e = create_make_consistent(c, &v);
		if (!e && c->from_fd >= 0 && p->from_size > 0) {
			e = create_vol_get(c, &v);
			if (!e)
				e = create_fill_from(c, v, c->from);
		}
		if (!e && v)
			e = rk_vol_flush(v);
		rk_vol_close(v);
	}
	if (e) {
		/* Nothing of ours is on the members yet: take back the files we made. */
		rk_err keep = e;
		char msg[512];
		snprintf(msg, sizeof msg, "%s", rk_errmsg());
		for (i = 0; i < p->nroles; i++) {
			if (p->members[i].created && c->devs[i]) {
				rk_dev_close(c->devs[i]);
				c->devs[i] = NULL;
				unlink(p->members[i].path);
			}
		}
		return rk_fail(keep, "%s", msg);
	}

	/* 5. superblocks last (see rk_create.h for why), then flush. */
	struct rk_sb *sb = malloc(sizeof *sb);
	if (!sb)
		return rk_fail(RK_E_NOMEM, "no memory for a superblock");
	for (i = 0; i < p->nroles && !e; i++) {
		if (!c->devs[i])
			continue;
		memcpy(sb, c->tmpl, sizeof *sb);
		e = rk_sb_set_member(sb, i, p->members[i].dev_size);
		if (!e)
			e = rk_sb_write(c->devs[i], sb);
	}
	if (!e)
		e = rk_dev_flush_set(c->devs, p->nroles, NULL, NULL, NULL);
	free(sb);
	return e;
}

rk_err rk_create(const struct rk_create_opts *o, struct rk_create_plan *plan)
{
	rk_creator *c = NULL;
	if (plan)
		memset(plan, 0, sizeof *plan);
	rk_err e = rk_create_prepare(&c, o, NULL);
	if (e)
		return e;
	e = rk_create_commit(c);
	if (plan) {
		/* Hand the plan over instead of copying it. */
		*plan = c->plan;
		memset(&c->plan.members, 0, sizeof c->plan.members);
		c->plan.notes = NULL;
		uint32_t n = c->plan.nroles;
		c->plan.nroles = 0;
		/* devs and wipe still need closing with their count. */
		for (uint32_t i = 0; i < n; i++) {
			rk_dev_close(c->devs[i]);
			c->devs[i] = NULL;
			free(c->wipe[i]);
			c->wipe[i] = NULL;
		}
	}
	/* rk_create_free must not clobber the caller's error detail. */
	char msg[512];
	snprintf(msg, sizeof msg, "%s", rk_errmsg());
	rk_create_free(c);
	if (e)
		return rk_fail(e, "%s", msg);
	return RK_OK;
}

