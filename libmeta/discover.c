/* discover.c: members given in any order -> arrays, roles, and a reason for
 * every path.  Read-only: each path is opened RK_DEV_RDONLY, both superblock
 * copies are read, and the device is closed again before deciding.
 *
 * Order of decisions (each path gets exactly one class):
 *   1. cannot open / no valid copy -> unknown (or foreign when libblkid sees
 *      another RAID format); the same file under a second name -> duplicate;
 *   2. --uuid given and another array's member -> foreign;
 *   3. per array: two images of one member UUID -> the fresher is kept, the
 *      other is a duplicate (ties: the first given);
 *   4. the freshest member F speaks for the array: members it marks faulty,
 *      missing, replaced or rebuilding are stale; members with fewer events
 *      are stale; unless one of those marks F's side out in turn: split
 *      brain, state conflict;
 *   5. roles without an active member are missing; the state follows from
 *      what the level can do without them.
 * Steps 1 and 2 are here; 3 to 5 build one array each (discover_array.c).
 */
#include "discover_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <uuid/uuid.h>

#include "rk_dev.h"
#include "rk_geom.h"
#include "rk_le.h"
#include "rk_probe.h"
#include "rk_util.h"

const char *rk_member_class_name(enum rk_member_class c)
{
	static const char *const n[RK_MEMBER__COUNT] = {
		"active", "missing", "stale", "duplicate", "foreign", "unknown", "spare",
	};
	return (unsigned)c < RK_MEMBER__COUNT ? n[c] : "invalid";
}

const char *rk_astate_name(enum rk_astate state)
{
	switch (state) {
	case RK_ASTATE_CLEAN: return "clean";
	case RK_ASTATE_DEGRADED: return "degraded";
	case RK_ASTATE_FAILED: return "failed";
	case RK_ASTATE_CONFLICT: return "conflict";
	default: return "invalid";
	}
}

void rk_discover_set_reason(struct rk_member *m, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(m->reason, sizeof m->reason, fmt, ap);
	va_end(ap);
}

/* Step 1: open, identify, read both copies, or say why not. */
static void examine_path(struct candidate *c, struct candidate *all, uint32_t i)
{
	struct rk_member *m = &c->m;
	rk_dev *d = NULL;
	rk_err e = rk_dev_open(&d, m->path, RK_DEV_RDONLY);
	if (e) {
		m->cls = RK_MEMBER_UNKNOWN;
		/* The device layer's message starts with the path, which the
		 * report already prints before the reason. */
		const char *msg = rk_errmsg();
		size_t pl = strlen(m->path);
		if (!strncmp(msg, m->path, pl) && !strncmp(msg + pl, ": ", 2))
			msg += pl + 2;
		rk_discover_set_reason(m, "%s", msg);
		c->decided = 1;
		return;
	}
	if (rk_dev_identity(d, &c->devno, &c->ino) && (c->devno || c->ino)) {
		c->have_id = 1;
		for (uint32_t k = 0; k < i; k++) {
			if (all[k].have_id && all[k].devno == c->devno && all[k].ino == c->ino) {
				m->cls = RK_MEMBER_DUPLICATE;
				rk_discover_set_reason(m, "the same %s as %s, given twice",
				                       rk_dev_is_blockdev(d) ? "device" : "file", all[k].m.path);
				/* Same object: the earlier path stands for it. */
				c->decided = 1;
				c->same_as = k;
				rk_dev_close(d);
				return;
			}
		}
	}
	e = rk_sb_read(d, &m->rd);
	rk_dev_close(d);
	if (e == RK_OK && m->rd.chosen >= 0 && m->rd.chosen < 2 && m->rd.copy[m->rd.chosen].sb) {
		struct rk_sb *sb = m->rd.copy[m->rd.chosen].sb;
		m->sb = sb;
		m->has_sb = 1;
		memcpy(m->array_uuid, sb->array_uuid, 16);
		memcpy(m->member_uuid, sb->member_uuid, 16);
		m->events = sb->events;
		/* A spare's this_role points at its spare entry (past nroles). */
		m->role = sb->this_role == RK_ROLE_NONE || sb->this_role >= sb->nroles ? -1
		        : (int64_t)sb->this_role;
		return;
	}
	char copies[400] = "";
	for (int k = 0; k < 2; k++) {
		const struct rk_sb_copy *cp = &m->rd.copy[k];
		rk_strcatf(copies, sizeof copies, "%s%s copy at %llu: %s", k ? "; " : "",
		    k ? "backup" : "primary", (unsigned long long)cp->offset,
		    cp->why[0] ? cp->why : rk_strerror(cp->err ? cp->err : RK_E_NOSB));
	}
	if (e != RK_E_NOSB && e != RK_OK) {
		m->cls = RK_MEMBER_UNKNOWN;
		rk_discover_set_reason(m, "cannot read the superblocks: %s", rk_errmsg());
		c->decided = 1;
		return;
	}
	struct rk_probe_result pr;
	memset(&pr, 0, sizeof pr);
	if (rk_probe_path(m->path, &pr) == RK_OK && pr.found && strcmp(pr.type, "raidkit") != 0) {
		snprintf(m->foreign_type, sizeof m->foreign_type, "%s", pr.type);
		if (strcmp(pr.usage, "raid") == 0) {
			m->cls = RK_MEMBER_FOREIGN;
			if (strcmp(pr.type, "linux_raid_member") == 0)
				rk_discover_set_reason(m, "an md %s member (linux_raid_member)%s%s",
				           pr.version[0] ? pr.version : "", pr.uuid[0] ? " of array UUID " : "",
				           pr.uuid);
			else
				rk_discover_set_reason(m, "foreign RAID metadata: %s", pr.what);
		} else {
			m->cls = RK_MEMBER_UNKNOWN;
			rk_discover_set_reason(m, "no valid raidkit superblock (%s); it holds %s", copies, pr.what);
		}
	} else {
		m->cls = RK_MEMBER_UNKNOWN;
		rk_discover_set_reason(m, "no valid raidkit superblock: %s", copies);
	}
	c->decided = 1;
}

static void member_free(struct rk_member *m)
{
	free(m->path);
	rk_sb_read_free(&m->rd);
	m->path = NULL;
	m->sb = NULL;
}

void rk_discovery_free(struct rk_discovery *d)
{
	if (!d)
		return;
	for (uint32_t a = 0; a < d->narrays; a++) {
		for (uint32_t r = 0; r < d->arrays[a].nroles; r++)
			if (d->arrays[a].roles[r].path)
				member_free(&d->arrays[a].roles[r]);
		free(d->arrays[a].roles);
	}
	free(d->arrays);
	for (uint32_t i = 0; i < d->nleft; i++)
		member_free(&d->left[i]);
	free(d->left);
	free(d);
}

int rk_member_reshape_added(const struct rk_sb *t, const struct rk_member *m)
{
	/* in step: at the array's events or one behind (spec/discovery.md "In step") */
	if (!t || !m->sb || !(t->feat_incompat & RK_FEAT_INCOMPAT_RESHAPE) || m->sb->events > t->events ||
	    m->sb->events + 1 < t->events ||
	    memcmp(m->sb->array_uuid, t->array_uuid, 16))
		return 0;
	uint32_t r = m->sb->this_role;
	return r >= t->nroles && r < t->reshape_new.nroles && r < t->nentries && t->roles[r].state == RK_ROLE_ACTIVE &&
	       !memcmp(t->roles[r].member_uuid, m->sb->member_uuid, 16);
}

/* Every path a candidate with its own copy of the path. */
static rk_err init_candidates(struct candidate *c, char *const *paths, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		c[i].group = -1;
		c[i].m.argi = (int32_t)i;
		c[i].m.array_idx = -1;
		c[i].m.role = -1;
		c[i].m.rd.chosen = -1;
		c[i].same_as = -1;
		c[i].m.path = strdup(paths[i] ? paths[i] : "");
		if (!c[i].m.path)
			return rk_fail(RK_E_NOMEM, "discovery: out of memory");
	}
	return RK_OK;
}

/* Step 2: the --uuid filter (members of other arrays are foreign), then
 * groups by array UUID, first seen first.  The number of groups, or -1
 * when out of memory. */
static int group_by_array(struct candidate *c, uint32_t n, const uint8_t *uuid)
{
	uint8_t (*group_uuid)[16] = calloc(n ? n : 1, 16);
	if (!group_uuid)
		return -1;
	int ngroups = 0;
	for (uint32_t i = 0; i < n; i++) {
		if (c[i].decided)
			continue;
		if (uuid && memcmp(uuid, c[i].m.array_uuid, 16) != 0) {
			char theirs[37], asked[37];
			uuid_unparse_lower(c[i].m.array_uuid, theirs);
			uuid_unparse_lower(uuid, asked);
			c[i].m.cls = RK_MEMBER_FOREIGN;
			rk_discover_set_reason(&c[i].m, "a member of another array: UUID %s%s%s%s, not %s as asked", theirs,
			                       c[i].m.sb->name[0] ? " (\"" : "", c[i].m.sb->name,
			                       c[i].m.sb->name[0] ? "\")" : "", asked);
			c[i].decided = 1;
			continue;
		}
		int g = -1;
		for (int k = 0; k < ngroups; k++)
			if (memcmp(group_uuid[k], c[i].m.array_uuid, 16) == 0)
				g = k;
		if (g < 0) {
			memcpy(group_uuid[ngroups], c[i].m.array_uuid, 16);
			g = ngroups++;
		}
		c[i].group = g;
	}
	free(group_uuid);
	return ngroups;
}

/* The paths no role took, into D->left in the order given (moved out of
 * the candidates). */
static rk_err collect_left(struct rk_discovery *d, struct candidate *c, uint32_t n)
{
	/* A file given twice belongs with the array its first name went to. */
	for (uint32_t i = 0; i < n; i++)
		if (c[i].same_as >= 0) {
			c[i].m.array_idx = c[c[i].same_as].m.array_idx;
			c[i].m.role = c[c[i].same_as].m.role;
		}
	d->left = calloc(n ? n : 1, sizeof *d->left);
	if (!d->left)
		return rk_fail(RK_E_NOMEM, "discovery: out of memory");
	for (uint32_t i = 0; i < n; i++) {
		if (c[i].in_role)
			continue;
		d->left[d->nleft++] = c[i].m;
		c[i].m.path = NULL;             /* moved */
		memset(&c[i].m.rd, 0, sizeof c[i].m.rd);
	}
	return RK_OK;
}

rk_err rk_discover(struct rk_discovery **out, char *const *paths, uint32_t npaths, const uint8_t *uuid)
{
	if (!out || (npaths && !paths))
		return rk_fail(RK_E_INVAL, "rk_discover: no paths");
	*out = NULL;
	struct rk_discovery *d = calloc(1, sizeof *d);
	struct candidate *c = calloc(npaths ? npaths : 1, sizeof *c);
	if (!d || !c) {
		free(d);
		free(c);
		return rk_fail(RK_E_NOMEM, "discovery: out of memory");
	}
	rk_err e = init_candidates(c, paths, npaths);
	if (e)
		goto fail;
	for (uint32_t i = 0; i < npaths; i++)
		examine_path(&c[i], c, i);
	int ngroups = group_by_array(c, npaths, uuid);
	if (ngroups >= 0)
		d->arrays = calloc(ngroups ? (size_t)ngroups : 1, sizeof *d->arrays);
	if (ngroups < 0 || !d->arrays) {
		e = rk_fail(RK_E_NOMEM, "discovery: out of memory");
		goto fail;
	}
	for (int g = 0; g < ngroups; g++) {
		e = rk_discover_build_array(c, npaths, g, &d->arrays[d->narrays], (int32_t)d->narrays);
		d->narrays++;
		if (e)
			goto fail;
	}
	e = collect_left(d, c, npaths);
	if (e)
		goto fail;
	free(c);
	*out = d;
	return RK_OK;
fail:
	for (uint32_t i = 0; i < npaths; i++)
		if (!c[i].in_role)
			member_free(&c[i].m);
	free(c);
	rk_discovery_free(d);
	return e;
}

/* ---- questions about a discovery ---- */

int rk_discovery_find_uuid(const struct rk_discovery *d, const uint8_t *uuid)
{
	for (uint32_t i = 0; i < d->narrays; i++)
		if (!memcmp(d->arrays[i].uuid, uuid, 16))
			return (int)i;
	return -1;
}

int rk_discovery_pick(const struct rk_discovery *d, const uint8_t *uuid)
{
	if (uuid)
		return rk_discovery_find_uuid(d, uuid);
	return d->narrays == 1 ? 0 : -1;
}

const struct rk_member *rk_discovery_find_path(const struct rk_discovery *d, int32_t argi)
{
	for (uint32_t a = 0; a < d->narrays; a++)
		for (uint32_t r = 0; r < d->arrays[a].nroles; r++)
			if (d->arrays[a].roles[r].path && d->arrays[a].roles[r].argi == argi)
				return &d->arrays[a].roles[r];
	for (uint32_t i = 0; i < d->nleft; i++)
		if (d->left[i].argi == argi)
			return &d->left[i];
	return NULL;
}
