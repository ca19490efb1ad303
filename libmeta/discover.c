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
 */
#include "rk_discover.h"

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

const char *rk_member_class_name(enum rk_member_class c)
{
	static const char *const n[RK_MEMBER__COUNT] = {
		"active", "missing", "stale", "duplicate", "foreign", "unknown", "spare",
	};
	return (unsigned)c < RK_MEMBER__COUNT ? n[c] : "invalid";
}

const char *rk_astate_name(int state)
{
	switch (state) {
	case RK_ASTATE_CLEAN: return "clean";
	case RK_ASTATE_DEGRADED: return "degraded";
	case RK_ASTATE_FAILED: return "failed";
	case RK_ASTATE_CONFLICT: return "conflict";
	default: return "invalid";
	}
}

/* Per-path working state. */
struct cand {
	struct rk_member m;
	dev_t devno;
	ino_t ino;
	int have_id;
	int decided;     /* class final (left over), not a role candidate any more */
	int grp;         /* array group index, -1 none */
	int in_role;     /* placed in roles[] */
	int64_t same_as; /* the same file as path index same_as (a duplicate), else -1 */
};

static const uint8_t nil_uuid[16];

static void unparse(const uint8_t u[16], char out[37])
{
	uuid_unparse_lower(u, out);
}

__attribute__((format(printf, 2, 3)))
static void set_reason(struct rk_member *m, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(m->reason, sizeof m->reason, fmt, ap);
	va_end(ap);
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

/* Step 1: open, identify, read both copies, or say why not. */
static void examine_path(struct cand *c, struct cand *all, uint32_t i)
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
		set_reason(m, "%s", msg);
		c->decided = 1;
		return;
	}
	if (rk_dev_identity(d, &c->devno, &c->ino) && (c->devno || c->ino)) {
		c->have_id = 1;
		for (uint32_t k = 0; k < i; k++) {
			if (all[k].have_id && all[k].devno == c->devno && all[k].ino == c->ino) {
				m->cls = RK_MEMBER_DUPLICATE;
				set_reason(m, "the same %s as %s, given twice",
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
		cat(copies, sizeof copies, "%s%s copy at %llu: %s", k ? "; " : "",
		    k ? "backup" : "primary", (unsigned long long)cp->offset,
		    cp->why[0] ? cp->why : rk_strerror(cp->err ? cp->err : RK_E_NOSB));
	}
	if (e != RK_E_NOSB && e != RK_OK) {
		m->cls = RK_MEMBER_UNKNOWN;
		set_reason(m, "cannot read the superblocks: %s", rk_errmsg());
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
				set_reason(m, "an md %s member (linux_raid_member)%s%s",
				           pr.version[0] ? pr.version : "", pr.uuid[0] ? " of array UUID " : "",
				           pr.uuid);
			else
				set_reason(m, "foreign RAID metadata: %s", pr.what);
		} else {
			m->cls = RK_MEMBER_UNKNOWN;
			set_reason(m, "no valid raidkit superblock (%s); it holds %s", copies, pr.what);
		}
	} else {
		m->cls = RK_MEMBER_UNKNOWN;
		set_reason(m, "no valid raidkit superblock: %s", copies);
	}
	c->decided = 1;
}

/* Does superblock S mark role R as out (faulty or missing) for a member with
 * uuid U?  An entry naming another member does not (that is a replacement,
 * judged by the freshest member alone). */
static int marks_out(const struct rk_sb *s, int64_t r, const uint8_t *u)
{
	if (r < 0 || (uint64_t)r >= s->nroles)
		return 0;
	const struct rk_role *e = &s->roles[r];
	if (e->state != RK_ROLE_FAULTY && e->state != RK_ROLE_EMPTY)
		return 0;
	return memcmp(e->member_uuid, u, 16) == 0 || memcmp(e->member_uuid, nil_uuid, 16) == 0;
}

/* F's view of member Y: 0 when F lists Y active at its role (or as a spare),
 * else 1 with the reason in WHY.  *MARKED is set when F marks Y faulty or
 * missing (not a replacement or a rebuild): only that can be split brain. */
static int judged_out(const struct rk_sb *f, const struct rk_member *y, char *why, size_t cap,
                      int *marked)
{
	*marked = 0;
	const struct rk_sb *s = y->sb;
	char u[37];
	if (y->role < 0) {
		for (uint32_t k = f->nroles; k < f->nentries && k < RK_SB_MAX_ROLES; k++)
			if (memcmp(f->roles[k].member_uuid, y->member_uuid, 16) == 0 &&
			    f->roles[k].state == RK_ROLE_SPARE)
				return 0;
		for (uint32_t k = 0; k < f->nroles && k < RK_SB_MAX_ROLES; k++)
			if (memcmp(f->roles[k].member_uuid, y->member_uuid, 16) == 0 &&
			    f->roles[k].state == RK_ROLE_ACTIVE) {
				snprintf(why, cap, "a spare here, but role %u at events %llu", k,
				         (unsigned long long)f->events);
				return 1;
			}
		return 0;   /* an unlisted spare: judged by events alone */
	}
	uint64_t r = (uint64_t)y->role;
	if (r >= f->nroles) {
		snprintf(why, cap, "role %llu, but the array has %u roles at events %llu",
		         (unsigned long long)r, f->nroles, (unsigned long long)f->events);
		return 1;
	}
	const struct rk_role *e = &f->roles[r];
	int same = memcmp(e->member_uuid, y->member_uuid, 16) == 0;
	if (!same && memcmp(e->member_uuid, nil_uuid, 16) != 0) {
		unparse(e->member_uuid, u);
		snprintf(why, cap, "role %llu belongs to member UUID %s in the members at events %llu (replaced)",
		         (unsigned long long)r, u, (unsigned long long)f->events);
		return 1;
	}
	switch (e->state) {
	case RK_ROLE_ACTIVE:
		if (same)
			break;
		/* fallthrough: an active entry without a UUID cannot be ours */
		snprintf(why, cap, "role %llu has no member UUID in the members at events %llu",
		         (unsigned long long)r, (unsigned long long)f->events);
		return 1;
	case RK_ROLE_FAULTY:
		*marked = 1;
		snprintf(why, cap, "marked faulty by members at events %llu (it has events %llu)",
		         (unsigned long long)f->events, (unsigned long long)y->events);
		return 1;
	case RK_ROLE_EMPTY:
		*marked = 1;
		snprintf(why, cap, "marked missing by members at events %llu (it has events %llu)",
		         (unsigned long long)f->events, (unsigned long long)y->events);
		return 1;
	case RK_ROLE_REBUILDING:
		snprintf(why, cap, "being rebuilt (%llu of %llu data bytes done at events %llu): its data is incomplete",
		         (unsigned long long)e->checkpoint, (unsigned long long)f->data_size,
		         (unsigned long long)f->events);
		return 1;
	default:
		snprintf(why, cap, "role %llu is in state %s at events %llu", (unsigned long long)r,
		         rk_role_state_name(e->state), (unsigned long long)f->events);
		return 1;
	}
	(void)s;
	return 0;
}

/* A member one event behind F that F still lists active under its own UUID
 * missed only the last superblock update: every writer (array writes,
 * rebuild) records a member it stops using as faulty before writing data,
 * so this is an update cut short by a crash between members.  Tolerated,
 * as md does (mdadm's event_margin of 1). */
static int one_behind(const struct rk_sb *f, const struct rk_member *m)
{
	if (m->events + 1 != f->events || m->role < 0 || (uint64_t)m->role >= f->nroles)
		return 0;
	const struct rk_role *e = &f->roles[m->role];
	return e->state == RK_ROLE_ACTIVE && memcmp(e->member_uuid, m->member_uuid, 16) == 0;
}

/* Same geometry as the freshest member (what the data layout depends on). */
static int same_geometry(const struct rk_sb *a, const struct rk_sb *b, char *why, size_t cap)
{
	if (a->level != b->level || a->layout != b->layout || a->chunk != b->chunk ||
	    a->nroles != b->nroles || a->volume_size != b->volume_size) {
		snprintf(why, cap, "its geometry (level %s, layout %u, chunk %llu, %u roles, volume %llu) "
		         "differs from the freshest members' (level %s, layout %u, chunk %llu, %u roles, volume %llu)",
		         rk_level_name(a->level), a->layout, (unsigned long long)a->chunk, a->nroles,
		         (unsigned long long)a->volume_size, rk_level_name(b->level), b->layout,
		         (unsigned long long)b->chunk, b->nroles, (unsigned long long)b->volume_size);
		return 0;
	}
	if (a->data_size < b->data_size) {
		snprintf(why, cap, "its data area (%llu bytes) is smaller than the array's (%llu bytes)",
		         (unsigned long long)a->data_size, (unsigned long long)b->data_size);
		return 0;
	}
	return 1;
}

/* Appends "0, 2, 3" (the roles flagged in SET) to BUF. */
static void list_roles(char *buf, size_t cap, const unsigned char *set, uint32_t n)
{
	int first = 1;
	for (uint32_t r = 0; r < n; r++)
		if (set[r]) {
			cat(buf, cap, "%s%u", first ? "" : ", ", r);
			first = 0;
		}
}

/* Is the data readable with the roles in PRESENT?  *TOL gets how many
 * missing roles the level tolerates in the best case. */
static int readable(const struct rk_sb *sb, const unsigned char *present, uint32_t nmissing,
                    uint32_t *tol)
{
	struct rk_geom g;
	memset(&g, 0, sizeof g);
	int gok = rk_geom_init(&g, sb->level, sb->layout, sb->chunk, sb->nroles, sb->data_size) == RK_OK;
	switch (sb->level) {
	case RK_LEVEL_LINEAR:
	case 0:
		*tol = 0;
		return nmissing == 0;
	case 1:
		*tol = sb->nroles ? sb->nroles - 1 : 0;
		return nmissing < sb->nroles;
	case 4:
	case 5:
		*tol = 1;
		return nmissing <= 1;
	case 6:
		*tol = 2;
		return nmissing <= 2;
	case 10:
		if (!gok) {
			*tol = 1;
			return nmissing == 0;
		}
		*tol = rk_geom_redundancy(&g);
		if (nmissing == 0)
			return 1;
		/* Every chunk of the first few rounds of the layout must keep a
		 * copy; the pattern repeats, so that decides it. */
		{
			uint64_t unit = g.chunk ? g.chunk : 1;
			uint64_t rounds = (uint64_t)g.nroles * (g.copies ? g.copies : 1) * 4;
			for (uint64_t k = 0; k < rounds; k++) {
				uint64_t voff;
				if (rk_mul_ovf(k, unit, &voff) || voff >= g.volume_size)
					break;
				struct rk_loc locs[16];
				uint32_t n = rk_geom_copies(&g, voff, locs, 16);
				int ok = 0;
				for (uint32_t q = 0; q < n; q++)
					if (locs[q].role < sb->nroles && present[locs[q].role])
						ok = 1;
				if (!ok)
					return 0;
			}
		}
		return 1;
	default:
		*tol = gok ? rk_geom_redundancy(&g) : 0;
		return nmissing <= *tol;
	}
}

/* Builds one array from the candidates of group GI. */
static rk_err build_array(struct cand *c, uint32_t n, int gi, struct rk_array_info *a, int32_t ai)
{
	/* 3. duplicates by member UUID. */
	for (uint32_t i = 0; i < n; i++) {
		if (c[i].grp != gi || c[i].decided)
			continue;
		for (uint32_t j = i + 1; j < n; j++) {
			if (c[j].grp != gi || c[j].decided ||
			    memcmp(c[i].m.member_uuid, c[j].m.member_uuid, 16) != 0)
				continue;
			uint32_t keep = i, drop = j;
			if (c[j].m.events > c[i].m.events) {
				keep = j;
				drop = i;
			}
			char u[37];
			unparse(c[drop].m.member_uuid, u);
			c[drop].m.cls = RK_MEMBER_DUPLICATE;
			if (c[keep].m.events != c[drop].m.events)
				set_reason(&c[drop].m, "another image of member UUID %s, as %s, which is fresher (events %llu, this one %llu)",
				           u, c[keep].m.path, (unsigned long long)c[keep].m.events,
				           (unsigned long long)c[drop].m.events);
			else
				set_reason(&c[drop].m, "another image of member UUID %s, as %s (same events %llu; the first given is used)",
				           u, c[keep].m.path, (unsigned long long)c[keep].m.events);
			c[drop].decided = 1;
			if (drop == i)
				break;
		}
	}
	/* 4. the freshest member: the most events; on a tie, one that no other
	 * equally fresh member marks out, then the first given. */
	int64_t fi = -1;
	uint64_t maxev = 0;
	for (uint32_t i = 0; i < n; i++)
		if (c[i].grp == gi && !c[i].decided && (fi < 0 || c[i].m.events > maxev)) {
			fi = i;
			maxev = c[i].m.events;
		}
	if (fi < 0)
		return RK_OK;   /* cannot happen: a group has a member */
	for (uint32_t i = 0; i < n; i++) {
		if (c[i].grp != gi || c[i].decided || c[i].m.events != maxev)
			continue;
		int marked_by_peer = 0;
		for (uint32_t k = 0; k < n && !marked_by_peer; k++)
			if (k != i && c[k].grp == gi && !c[k].decided && c[k].m.events == maxev &&
			    marks_out(c[k].m.sb, c[i].m.role, c[i].m.member_uuid))
				marked_by_peer = 1;
		if (!marked_by_peer) {
			fi = i;
			break;
		}
	}
	const struct rk_sb *f = c[fi].m.sb;
	memcpy(a->uuid, f->array_uuid, 16);
	snprintf(a->name, sizeof a->name, "%s", f->name);
	a->sb = c[fi].m.sb;
	a->nroles = f->nroles;
	a->roles = calloc(f->nroles ? f->nroles : 1, sizeof *a->roles);
	if (!a->roles)
		return rk_fail(RK_E_NOMEM, "discovery: out of memory");

	/* Judge every other member from F's table. */
	char *why = malloc((size_t)n * 512);
	unsigned char *out = calloc(n, 1), *marked = calloc(n, 1);
	unsigned char *present = calloc(f->nroles ? f->nroles : 1, 1);
	if (!why || !out || !marked || !present) {
		free(why); free(out); free(marked); free(present);
		return rk_fail(RK_E_NOMEM, "discovery: out of memory");
	}
	for (uint32_t i = 0; i < n; i++) {
		why[(size_t)i * 512] = 0;
		if (c[i].grp != gi || c[i].decided)
			continue;
		int mk = 0;
		out[i] = (unsigned char)judged_out(f, &c[i].m, why + (size_t)i * 512, 512, &mk);
		marked[i] = (unsigned char)mk;
	}
	/* Split brain: a member F marks out that marks F's side out in turn. */
	int conflict = 0;
	char side2[512] = "", side2_marks[256] = "", side1[512] = "", side1_marks[256] = "";
	unsigned char *s1m = calloc(f->nroles ? f->nroles : 1, 1), *s2m = calloc(f->nroles ? f->nroles : 1, 1);
	if (!s1m || !s2m) {
		free(why); free(out); free(marked); free(present); free(s1m); free(s2m);
		return rk_fail(RK_E_NOMEM, "discovery: out of memory");
	}
	for (uint32_t y = 0; y < n; y++) {
		if (c[y].grp != gi || c[y].decided || !out[y] || !marked[y])
			continue;
		int hits = 0;
		for (uint32_t x = 0; x < n; x++) {
			if (c[x].grp != gi || c[x].decided || out[x])
				continue;
			if (marks_out(c[y].m.sb, c[x].m.role, c[x].m.member_uuid)) {
				hits = 1;
				if (c[x].m.role >= 0 && (uint64_t)c[x].m.role < f->nroles)
					s2m[c[x].m.role] = 1;
			}
		}
		if (hits) {
			conflict = 1;
			cat(side2, sizeof side2, "%s%s (events %llu)", side2[0] ? ", " : "", c[y].m.path,
			    (unsigned long long)c[y].m.events);
			if (c[y].m.role >= 0 && (uint64_t)c[y].m.role < f->nroles)
				s1m[c[y].m.role] = 1;
			out[y] = 2;   /* the other side */
		}
	}
	if (conflict) {
		for (uint32_t x = 0; x < n; x++)
			if (c[x].grp == gi && !c[x].decided && !out[x])
				cat(side1, sizeof side1, "%s%s (events %llu)", side1[0] ? ", " : "",
				    c[x].m.path, (unsigned long long)c[x].m.events);
		list_roles(side1_marks, sizeof side1_marks, s1m, f->nroles);
		list_roles(side2_marks, sizeof side2_marks, s2m, f->nroles);
	}

	/* Classify. */
	int geom_conflict = 0;
	for (uint32_t i = 0; i < n; i++) {
		if (c[i].grp != gi || c[i].decided)
			continue;
		struct rk_member *m = &c[i].m;
		m->array_idx = ai;
		char g[512];
		if (out[i] == 2) {
			m->cls = RK_MEMBER_STALE;
			set_reason(m, "the other side of a split brain: %s; it marks role(s) %s faulty or missing",
			           why + (size_t)i * 512, side2_marks);
			c[i].decided = 1;
		} else if (out[i]) {
			m->cls = RK_MEMBER_STALE;
			set_reason(m, "%s", why + (size_t)i * 512);
			c[i].decided = 1;
		} else if (m->events < f->events && !one_behind(f, m)) {
			m->cls = RK_MEMBER_STALE;
			set_reason(m, "events %llu, the array is at %llu", (unsigned long long)m->events,
			           (unsigned long long)f->events);
			c[i].decided = 1;
		} else if ((int64_t)i != fi && !same_geometry(m->sb, f, g, sizeof g)) {
			m->cls = RK_MEMBER_STALE;
			set_reason(m, "%s", g);
			if (m->events == f->events)
				geom_conflict = 1;
			c[i].decided = 1;
		} else if (m->role < 0 && rk_member_reshape_added(f, m)) {
			/* a role of the new geometry only (rk_array_open_members
			 * opens it) */
			m->cls = RK_MEMBER_SPARE;
			set_reason(m, "serves role %u of the new geometry (added by the reshape in progress; events %llu)",
			           m->sb->this_role, (unsigned long long)m->events);
		} else if (m->role < 0) {
			m->cls = RK_MEMBER_SPARE;
			set_reason(m, "a spare of this array (events %llu)", (unsigned long long)m->events);
			c[i].decided = 1;
		} else if (present[m->role]) {
			/* Two different members claiming one role with the same events:
			 * F's table names one UUID, so judged_out() took the other. */
			m->cls = RK_MEMBER_DUPLICATE;
			set_reason(m, "role %lld is already served", (long long)m->role);
			c[i].decided = 1;
		} else {
			m->cls = RK_MEMBER_ACTIVE;
			if (m->events < f->events)
				set_reason(m, "role %lld, events %llu: one behind the array (%llu), a superblock update "
				           "cut short; tolerated", (long long)m->role, (unsigned long long)m->events,
				           (unsigned long long)f->events);
			else
				set_reason(m, "role %lld, events %llu", (long long)m->role, (unsigned long long)m->events);
			present[m->role] = 1;
			a->roles[m->role] = *m;
			c[i].in_role = 1;
			c[i].decided = 1;
			a->nactive++;
		}
	}
	/* 5. missing roles and the state. */
	uint32_t nmissing = 0;
	unsigned char *miss = calloc(f->nroles ? f->nroles : 1, 1);
	if (!miss) {
		free(why); free(out); free(marked); free(present); free(s1m); free(s2m);
		return rk_fail(RK_E_NOMEM, "discovery: out of memory");
	}
	for (uint32_t r = 0; r < f->nroles; r++) {
		if (present[r])
			continue;
		miss[r] = 1;
		nmissing++;
		struct rk_member *m = &a->roles[r];
		memset(m, 0, sizeof *m);
		m->path = NULL;
		m->role = r;
		m->cls = RK_MEMBER_MISSING;
		m->argi = -1;
		m->array_idx = ai;
		memcpy(m->member_uuid, f->roles[r].member_uuid, 16);
		const char *st = rk_role_state_name(f->roles[r].state);
		/* Name the path that would have served it, if one was given. */
		const char *lp = NULL, *lr = NULL;
		for (uint32_t i = 0; i < n; i++)
			if (c[i].grp == gi && !c[i].in_role && c[i].m.role == (int64_t)r &&
			    (c[i].m.cls == RK_MEMBER_STALE || c[i].m.cls == RK_MEMBER_DUPLICATE)) {
				lp = c[i].m.path;
				lr = c[i].m.reason;
				break;
			}
		if (lp)
			set_reason(m, "role %u: its member %s is not used (%s)", r, lp, lr);
		else
			set_reason(m, "role %u: no member given (%s at events %llu)", r, st,
			           (unsigned long long)f->events);
	}
	uint32_t tol = 0;
	char roles_txt[256] = "";
	list_roles(roles_txt, sizeof roles_txt, miss, f->nroles);
	if (conflict) {
		a->state = RK_ASTATE_CONFLICT;
		snprintf(a->why, sizeof a->why,
		         "split brain: %s mark role(s) %s faulty or missing, while %s mark role(s) %s "
		         "faulty or missing; each side ran without the other and the event counts "
		         "cannot order them, so raidkit refuses to guess which side is right",
		         side1, side1_marks, side2, side2_marks);
	} else if (geom_conflict) {
		a->state = RK_ASTATE_CONFLICT;
		snprintf(a->why, sizeof a->why,
		         "members with the same event count %llu disagree on the geometry; refusing to guess",
		         (unsigned long long)f->events);
	} else if (nmissing == 0) {
		a->state = RK_ASTATE_CLEAN;
		if (f->array_state == RK_ARRAY_ACTIVE)
			snprintf(a->why, sizeof a->why, "all %u roles present; the array was open for writing "
			         "(not shut down cleanly): redundancy may lag where a write was in flight", f->nroles);
		else
			snprintf(a->why, sizeof a->why, "all %u roles present", f->nroles);
	} else if (readable(f, present, nmissing, &tol)) {
		a->state = RK_ASTATE_DEGRADED;
		snprintf(a->why, sizeof a->why, "role%s %s missing (%u of %u); RAID-%s tolerates %u missing",
		         nmissing > 1 ? "s" : "", roles_txt, nmissing, f->nroles, rk_level_name(f->level), tol);
	} else {
		a->state = RK_ASTATE_FAILED;
		snprintf(a->why, sizeof a->why,
		         "too few members: role%s %s missing (%u of %u), RAID-%s tolerates %u missing%s",
		         nmissing > 1 ? "s" : "", roles_txt, nmissing, f->nroles, rk_level_name(f->level), tol,
		         f->level == 10 && nmissing <= tol ? " (and not these: both copies of some data are gone)" : "");
	}
	free(why); free(out); free(marked); free(present); free(s1m); free(s2m); free(miss);
	return RK_OK;
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
	if (!t || !m->sb || !(t->feat_incompat & RK_FEAT_INCOMPAT_RESHAPE) || m->sb->events != t->events ||
	    memcmp(m->sb->array_uuid, t->array_uuid, 16))
		return 0;
	uint32_t r = m->sb->this_role;
	return r >= t->nroles && r < t->reshape_new.nroles && r < t->nentries && t->roles[r].state == RK_ROLE_ACTIVE &&
	       !memcmp(t->roles[r].member_uuid, m->sb->member_uuid, 16);
}

rk_err rk_discover(struct rk_discovery **out, char *const *paths, uint32_t npaths, const uint8_t *uuid)
{
	if (!out || (npaths && !paths))
		return rk_fail(RK_E_INVAL, "rk_discover: no paths");
	*out = NULL;
	struct rk_discovery *d = calloc(1, sizeof *d);
	struct cand *c = calloc(npaths ? npaths : 1, sizeof *c);
	if (!d || !c) {
		free(d);
		free(c);
		return rk_fail(RK_E_NOMEM, "discovery: out of memory");
	}
	rk_err e = RK_OK;
	for (uint32_t i = 0; i < npaths; i++) {
		c[i].grp = -1;
		c[i].m.argi = (int32_t)i;
		c[i].m.array_idx = -1;
		c[i].m.role = -1;
		c[i].m.rd.chosen = -1;
		c[i].same_as = -1;
		c[i].m.path = strdup(paths[i] ? paths[i] : "");
		if (!c[i].m.path) {
			e = rk_fail(RK_E_NOMEM, "discovery: out of memory");
			goto fail;
		}
	}
	for (uint32_t i = 0; i < npaths; i++)
		examine_path(&c[i], c, i);

	/* 2. the --uuid filter, then groups by array UUID (first seen first). */
	uint8_t (*gu)[16] = calloc(npaths ? npaths : 1, 16);
	if (!gu) {
		e = rk_fail(RK_E_NOMEM, "discovery: out of memory");
		goto fail;
	}
	int ng = 0;
	for (uint32_t i = 0; i < npaths; i++) {
		if (c[i].decided)
			continue;
		if (uuid && memcmp(uuid, c[i].m.array_uuid, 16) != 0) {
			char a[37], b[37];
			unparse(c[i].m.array_uuid, a);
			unparse(uuid, b);
			c[i].m.cls = RK_MEMBER_FOREIGN;
			set_reason(&c[i].m, "a member of another array: UUID %s%s%s%s, not %s as asked", a,
			           c[i].m.sb->name[0] ? " (\"" : "", c[i].m.sb->name,
			           c[i].m.sb->name[0] ? "\")" : "", b);
			c[i].decided = 1;
			continue;
		}
		int g = -1;
		for (int k = 0; k < ng; k++)
			if (memcmp(gu[k], c[i].m.array_uuid, 16) == 0)
				g = k;
		if (g < 0) {
			memcpy(gu[ng], c[i].m.array_uuid, 16);
			g = ng++;
		}
		c[i].grp = g;
	}
	free(gu);
	d->arrays = calloc(ng ? (size_t)ng : 1, sizeof *d->arrays);
	if (!d->arrays) {
		e = rk_fail(RK_E_NOMEM, "discovery: out of memory");
		goto fail;
	}
	for (int g = 0; g < ng; g++) {
		e = build_array(c, npaths, g, &d->arrays[d->narrays], (int32_t)d->narrays);
		d->narrays++;
		if (e)
			goto fail;
	}
	/* A file given twice belongs with the array its first name went to. */
	for (uint32_t i = 0; i < npaths; i++)
		if (c[i].same_as >= 0) {
			c[i].m.array_idx = c[c[i].same_as].m.array_idx;
			c[i].m.role = c[c[i].same_as].m.role;
		}
	/* Left-over paths, in the order given. */
	d->left = calloc(npaths ? npaths : 1, sizeof *d->left);
	if (!d->left) {
		e = rk_fail(RK_E_NOMEM, "discovery: out of memory");
		goto fail;
	}
	for (uint32_t i = 0; i < npaths; i++) {
		if (c[i].in_role)
			continue;
		d->left[d->nleft++] = c[i].m;
		c[i].m.path = NULL;             /* moved */
		memset(&c[i].m.rd, 0, sizeof c[i].m.rd);
	}
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
