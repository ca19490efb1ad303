/* discover_array.c: one array from the members discovery grouped under
 * its UUID (steps 3 to 5 of discover.c): duplicates by member UUID, the
 * freshest member, every other member judged from its role table (split
 * brain included), missing roles and the state; and --force's stale
 * members filling roles the array cannot run without. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uuid/uuid.h>

#include "discover_int.h"

#include "rk_fmt.h"
#include "rk_geom.h"
#include "rk_util.h"

/* A member's standing in the freshest member's view. */
enum member_verdict {
	VERDICT_IN = 0,          /* listed active at its role (or as a spare) */
	VERDICT_OUT,             /* marked out, replaced, rebuilding, ... */
	VERDICT_OTHER_SIDE,      /* out, and it marks the freshest side out in turn: split brain */
};

/* One candidate as the freshest member's table sees it. */
struct judgement {
	enum member_verdict verdict;
	int marked;              /* marked faulty or missing (not replaced): only that can be split brain */
	char why[512];           /* why it is out */
};

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
	return memcmp(e->member_uuid, u, 16) == 0 || rk_buf_is_zero(e->member_uuid, 16);
}

/* Formats whose role tables name a failed member apart from the roles
 * (md): does F list member U as faulty there? */
static int listed_faulty(const struct rk_sb *f, const uint8_t *u)
{
	for (uint32_t k = f->nroles; k < f->nentries && k < RK_SB_MAX_ROLES; k++)
		if (f->roles[k].state == RK_ROLE_FAULTY && memcmp(f->roles[k].member_uuid, u, 16) == 0)
			return 1;
	return 0;
}

/* Foreign formats record a partial rebuild in the member's own metadata
 * only (md's recovery_offset): such a member's data is incomplete whatever
 * the others' tables say.  1 with the reason in WHY. */
static int own_rebuilding(const struct rk_member *y, char *why, size_t cap)
{
	const struct rk_sb *s = y->sb;
	if (!s || s->origin == RK_ORIGIN_RAIDKIT || y->role < 0 || (uint64_t)y->role >= s->nroles ||
	    s->roles[y->role].state != RK_ROLE_REBUILDING)
		return 0;
	snprintf(why, cap, "being rebuilt by %s (%llu of %llu data bytes done): its data is incomplete",
	         s->origin_name, (unsigned long long)s->roles[y->role].checkpoint, (unsigned long long)s->data_size);
	return 1;
}

/* A foreign array's role F's metadata lists active without saying who
 * serves it (rk_fmt.h "Views": DDF RAID-10, where each disk keeps its own
 * leg's record): a member claiming that role at F's events is taken. */
static int unrecorded_part(const struct rk_sb *f, const struct rk_role *e, const struct rk_member *y)
{
	return f->origin != RK_ORIGIN_RAIDKIT && rk_buf_is_zero(e->member_uuid, 16) && y->events == f->events;
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
		if (listed_faulty(f, y->member_uuid)) {
			*marked = 1;
			snprintf(why, cap, "marked faulty by members at events %llu (it has events %llu)",
			         (unsigned long long)f->events, (unsigned long long)y->events);
			return 1;
		}
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
	if (!same && !rk_buf_is_zero(e->member_uuid, 16)) {
		uuid_unparse_lower(e->member_uuid, u);
		snprintf(why, cap, "role %llu belongs to member UUID %s in the members at events %llu (replaced)",
		         (unsigned long long)r, u, (unsigned long long)f->events);
		return 1;
	}
	if (same && e->state == RK_ROLE_ACTIVE && own_rebuilding(y, why, cap))
		return 1;
	switch (e->state) {
	case RK_ROLE_ACTIVE:
		if (same || unrecorded_part(f, e, y))
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
		snprintf(why, cap, "marked %s by members at events %llu (it has events %llu)",
		         listed_faulty(f, y->member_uuid) ? "faulty" : "missing",
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

/* The in-step rule (spec/discovery.md, "In step").  F, the freshest,
 * lists member M active under M's own UUID, so no data was written
 * without M: every writer records a member it stops using as faulty
 * before writing data.  M missed at most superblock updates, and writers
 * bring a member behind forward before writing a newer generation
 * (rk_sb_behind), so a member that only missed updates is never more than
 * one event behind.  In step: listed active and at most one behind (md's
 * margin of one, which the writers' order makes sufficient). */
static int listed_in_step(const struct rk_sb *f, const struct rk_member *m)
{
	if (m->role < 0 || (uint64_t)m->role >= f->nroles)
		return 0;
	const struct rk_role *e = &f->roles[m->role];
	return e->state == RK_ROLE_ACTIVE && memcmp(e->member_uuid, m->member_uuid, 16) == 0;
}

/* One behind F and in step: listed active by F, or a role only the new
 * geometry of F's reshape has (rk_member_reshape_added: the reshape writes
 * its data before each checkpoint, so it too misses at most that update). */
static int one_behind(const struct rk_sb *f, const struct rk_member *m)
{
	return m->events + 1 == f->events && (listed_in_step(f, m) || rk_member_reshape_added(f, m));
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

/* M missed only the superblock update that ended a reshape (or a revert):
 * in step with F (one behind, listed active), its own superblock still
 * records the reshape, whose target (a revert: whose current geometry) is
 * F's geometry.  Its data is where F says: the reshape had moved it all. */
static int missed_reshape_end(const struct rk_sb *f, const struct rk_member *m)
{
	const struct rk_sb *s = m->sb;
	if (!one_behind(f, m) || !(s->feat_incompat & RK_FEAT_INCOMPAT_RESHAPE) ||
	    (f->feat_incompat & RK_FEAT_INCOMPAT_RESHAPE))
		return 0;
	const struct rk_geom_desc *t = &s->reshape_new;
	return t->level == f->level && t->layout == f->layout && t->chunk == f->chunk && t->nroles == f->nroles &&
	       t->data_size == f->data_size;
}

/* What discovery notes about a role of the array being built (bits). */
enum role_flag {
	ROLE_PRESENT = 1,        /* served by an active member */
	ROLE_MISSING = 2,        /* no active member */
	ROLE_SIDE1 = 4,          /* the other side of a split brain marks its member out */
	ROLE_SIDE2 = 8,          /* its member is on the other side */
};

/* Appends "0, 2, 3" (the roles of the N in FLAGS with FLAG set) to BUF. */
static void list_roles(char *buf, size_t cap, const unsigned char *flags, uint32_t n, enum role_flag flag)
{
	int first = 1;
	for (uint32_t r = 0; r < n; r++)
		if (flags[r] & flag) {
			rk_strcatf(buf, cap, "%s%u", first ? "" : ", ", r);
			first = 0;
		}
}


/* Is the data readable without the roles missing from PRESENT?  *TOL gets
 * how many missing roles the level tolerates in the best case.  Where the
 * superblock's geometry does not init, the level alone answers. */
static int still_readable(const struct rk_sb *sb, const unsigned char *flags, uint32_t nmissing, uint32_t *tol)
{
	struct rk_geom g;
	if (rk_geom_init(&g, sb->level, sb->layout, sb->chunk, sb->nroles, sb->data_size) == RK_OK) {
		*tol = rk_geom_redundancy(&g);
		uint8_t down[RK_SB_MAX_ROLES];
		for (uint32_t r = 0; r < sb->nroles && r < RK_SB_MAX_ROLES; r++)
			down[r] = !(flags[r] & ROLE_PRESENT);
		return rk_geom_readable(&g, down);
	}
	switch (sb->level) {
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
		*tol = 1;
		return nmissing == 0;
	default:   /* linear, 0, unknown */
		*tol = 0;
		return nmissing == 0;
	}
}

/* The work of building one array. */
struct array_build {
	struct candidate *c;
	uint32_t n;
	int group;
	int32_t index;               /* the array's index in the discovery */
	struct rk_array_info *a;
	int64_t freshest;            /* candidate index of F, the freshest member */
	const struct rk_sb *f;       /* F's superblock: its table judges the others */
	struct judgement *judged;    /* n: each candidate in F's view */
	unsigned char *roles;        /* nroles: enum role_flag bits */
	uint32_t nmissing;
	int conflict;                /* split brain */
	int geometry_conflict;       /* equally fresh members disagree on the geometry */
	char side1[512], side1_marks[256], side2[512], side2_marks[256];
};

/* Candidate I still to be placed in this group? */
static int open_in_group(const struct array_build *b, uint32_t i)
{
	return b->c[i].group == b->group && !b->c[i].decided;
}

/* Step 3: two images of one member UUID: the fresher is kept (ties: the
 * first given), the other is a duplicate. */
static void drop_duplicate_images(struct array_build *b)
{
	struct candidate *c = b->c;
	for (uint32_t i = 0; i < b->n; i++) {
		if (!open_in_group(b, i))
			continue;
		for (uint32_t j = i + 1; j < b->n; j++) {
			if (!open_in_group(b, j) || memcmp(c[i].m.member_uuid, c[j].m.member_uuid, 16) != 0)
				continue;
			uint32_t keep = i, drop = j;
			if (c[j].m.events > c[i].m.events) {
				keep = j;
				drop = i;
			}
			char u[37];
			uuid_unparse_lower(c[drop].m.member_uuid, u);
			c[drop].m.cls = RK_MEMBER_DUPLICATE;
			if (c[keep].m.events != c[drop].m.events)
				rk_discover_set_reason(&c[drop].m, "another image of member UUID %s, as %s, which is fresher (events %llu, this one %llu)",
				                       u, c[keep].m.path, (unsigned long long)c[keep].m.events,
				                       (unsigned long long)c[drop].m.events);
			else
				rk_discover_set_reason(&c[drop].m, "another image of member UUID %s, as %s (same events %llu; the first given is used)",
				                       u, c[keep].m.path, (unsigned long long)c[keep].m.events);
			c[drop].decided = 1;
			if (drop == i)
				break;
		}
	}
}

/* Step 4: the freshest member: the most events; on a tie, one that no
 * other equally fresh member marks out, then the first given.  -1 when the
 * group has none left (cannot happen). */
static int64_t pick_freshest(const struct array_build *b)
{
	const struct candidate *c = b->c;
	int64_t fi = -1;
	uint64_t maxev = 0;
	for (uint32_t i = 0; i < b->n; i++)
		if (open_in_group(b, i) && (fi < 0 || c[i].m.events > maxev)) {
			fi = i;
			maxev = c[i].m.events;
		}
	if (fi < 0)
		return -1;
	for (uint32_t i = 0; i < b->n; i++) {
		if (!open_in_group(b, i) || c[i].m.events != maxev)
			continue;
		int marked_by_peer = 0;
		for (uint32_t k = 0; k < b->n && !marked_by_peer; k++)
			if (k != i && open_in_group(b, k) && c[k].m.events == maxev &&
			    marks_out(c[k].m.sb, c[i].m.role, c[i].m.member_uuid))
				marked_by_peer = 1;
		if (!marked_by_peer)
			return i;
	}
	return fi;
}

static void free_build(struct array_build *b)
{
	free(b->judged);
	free(b->roles);
}

/* The array takes F's identity; the work arrays.  Errors only for memory. */
static rk_err start_array(struct array_build *b)
{
	const struct rk_sb *f = b->f;
	size_t nr = f->nroles ? f->nroles : 1;
	memcpy(b->a->uuid, f->array_uuid, 16);
	snprintf(b->a->name, sizeof b->a->name, "%s", f->name);
	b->a->sb = b->c[b->freshest].m.sb;
	b->a->nroles = f->nroles;
	b->a->roles = calloc(nr, sizeof *b->a->roles);
	b->judged = calloc(b->n ? b->n : 1, sizeof *b->judged);
	b->roles = calloc(nr, 1);
	if (!b->a->roles || !b->judged || !b->roles)
		return rk_fail(RK_E_NOMEM, "discovery: out of memory");
	return RK_OK;
}

/* Every other member judged from F's table. */
static void judge_members(struct array_build *b)
{
	for (uint32_t i = 0; i < b->n; i++) {
		if (!open_in_group(b, i))
			continue;
		struct judgement *jd = &b->judged[i];
		jd->verdict = judged_out(b->f, &b->c[i].m, jd->why, sizeof jd->why, &jd->marked) ? VERDICT_OUT : VERDICT_IN;
	}
}

/* Split brain: a member F marks out that marks F's side out in turn. */
static void find_split_brain(struct array_build *b)
{
	const struct candidate *c = b->c;
	uint32_t nroles = b->f->nroles;
	for (uint32_t y = 0; y < b->n; y++) {
		if (!open_in_group(b, y) || b->judged[y].verdict == VERDICT_IN || !b->judged[y].marked)
			continue;
		int hits = 0;
		for (uint32_t x = 0; x < b->n; x++) {
			if (!open_in_group(b, x) || b->judged[x].verdict != VERDICT_IN)
				continue;
			if (marks_out(c[y].m.sb, c[x].m.role, c[x].m.member_uuid)) {
				hits = 1;
				if (c[x].m.role >= 0 && (uint64_t)c[x].m.role < nroles)
					b->roles[c[x].m.role] |= ROLE_SIDE2;
			}
		}
		if (hits) {
			b->conflict = 1;
			rk_strcatf(b->side2, sizeof b->side2, "%s%s (events %llu)", b->side2[0] ? ", " : "", c[y].m.path,
			           (unsigned long long)c[y].m.events);
			if (c[y].m.role >= 0 && (uint64_t)c[y].m.role < nroles)
				b->roles[c[y].m.role] |= ROLE_SIDE1;
			b->judged[y].verdict = VERDICT_OTHER_SIDE;
		}
	}
	if (!b->conflict)
		return;
	for (uint32_t x = 0; x < b->n; x++)
		if (open_in_group(b, x) && b->judged[x].verdict == VERDICT_IN)
			rk_strcatf(b->side1, sizeof b->side1, "%s%s (events %llu)", b->side1[0] ? ", " : "", c[x].m.path,
			           (unsigned long long)c[x].m.events);
	list_roles(b->side1_marks, sizeof b->side1_marks, b->roles, nroles, ROLE_SIDE1);
	list_roles(b->side2_marks, sizeof b->side2_marks, b->roles, nroles, ROLE_SIDE2);
}

/* Candidate I's class: stale, spare, duplicate or active (placed in its
 * role).  Decided, except a member the reshape in progress added. */
static void classify_member(struct array_build *b, uint32_t i)
{
	struct candidate *c = &b->c[i];
	struct rk_member *m = &c->m;
	const struct rk_sb *f = b->f;
	char geometry_why[512];
	m->array_idx = b->index;
	c->decided = 1;
	const struct judgement *jd = &b->judged[i];
	if (jd->verdict == VERDICT_OTHER_SIDE) {
		m->cls = RK_MEMBER_STALE;
		rk_discover_set_reason(m, "the other side of a split brain: %s; it marks role(s) %s faulty or missing",
		                       jd->why, b->side2_marks);
	} else if (jd->verdict == VERDICT_OUT) {
		m->cls = RK_MEMBER_STALE;
		rk_discover_set_reason(m, "%s", jd->why);
	} else if (m->events < f->events && !one_behind(f, m)) {
		m->cls = RK_MEMBER_STALE;
		if (listed_in_step(f, m))
			rk_discover_set_reason(m, "events %llu, the array is at %llu: an older image of this member "
			                       "(one that only missed superblock updates is at most one behind)", (unsigned long long)m->events,
			                       (unsigned long long)f->events);
		else
			rk_discover_set_reason(m, "events %llu, the array is at %llu", (unsigned long long)m->events,
			                       (unsigned long long)f->events);
	} else if ((int64_t)i != b->freshest && !same_geometry(m->sb, f, geometry_why, sizeof geometry_why) &&
	           !missed_reshape_end(f, m)) {
		m->cls = RK_MEMBER_STALE;
		rk_discover_set_reason(m, "%s", geometry_why);
		if (m->events == f->events)
			b->geometry_conflict = 1;
	} else if (m->role < 0 && rk_member_reshape_added(f, m)) {
		/* a role of the new geometry only (rk_array_open_members opens it) */
		m->cls = RK_MEMBER_SPARE;
		rk_discover_set_reason(m, "serves role %u of the new geometry (added by the reshape in progress; events %llu)",
		                       m->sb->this_role, (unsigned long long)m->events);
		c->decided = 0;
	} else if (m->role < 0) {
		m->cls = RK_MEMBER_SPARE;
		rk_discover_set_reason(m, "a spare of this array (events %llu)", (unsigned long long)m->events);
	} else if (b->roles[m->role] & ROLE_PRESENT) {
		/* Two different members claiming one role with the same events:
		 * F's table names one UUID, so judged_out() took the other. */
		m->cls = RK_MEMBER_DUPLICATE;
		rk_discover_set_reason(m, "role %lld is already served", (long long)m->role);
	} else {
		m->cls = RK_MEMBER_ACTIVE;
		if (m->events < f->events)
			rk_discover_set_reason(m, "role %lld, events %llu: one behind the array (%llu), a superblock update "
			                       "cut short; tolerated", (long long)m->role, (unsigned long long)m->events,
			                       (unsigned long long)f->events);
		else
			rk_discover_set_reason(m, "role %lld, events %llu", (long long)m->role, (unsigned long long)m->events);
		b->roles[m->role] |= ROLE_PRESENT;
		b->a->roles[m->role] = *m;
		c->in_role = 1;
		b->a->nactive++;
	}
}

/* Step 5: a role without an active member is missing; its reason names the
 * path that would have served it, if one was given. */
static void mark_missing_roles(struct array_build *b)
{
	const struct rk_sb *f = b->f;
	for (uint32_t r = 0; r < f->nroles; r++) {
		if (b->roles[r] & ROLE_PRESENT)
			continue;
		b->roles[r] |= ROLE_MISSING;
		b->nmissing++;
		struct rk_member *m = &b->a->roles[r];
		memset(m, 0, sizeof *m);
		m->path = NULL;
		m->role = r;
		m->cls = RK_MEMBER_MISSING;
		m->argi = -1;
		m->array_idx = b->index;
		memcpy(m->member_uuid, f->roles[r].member_uuid, 16);
		const struct rk_member *would = NULL;
		for (uint32_t i = 0; i < b->n && !would; i++) {
			const struct candidate *c = &b->c[i];
			if (c->group == b->group && !c->in_role && c->m.role == (int64_t)r &&
			    (c->m.cls == RK_MEMBER_STALE || c->m.cls == RK_MEMBER_DUPLICATE))
				would = &c->m;
		}
		if (would)
			rk_discover_set_reason(m, "role %u: its member %s is not used (%s)", r, would->path, would->reason);
		else
			rk_discover_set_reason(m, "role %u: no member given (%s at events %llu)", r,
			                       rk_role_state_name(f->roles[r].state), (unsigned long long)f->events);
	}
}

/* The array's state and why, from the roles present. */
static void set_state(struct array_build *b)
{
	struct rk_array_info *a = b->a;
	const struct rk_sb *f = b->f;
	uint32_t tol = 0, nmissing = b->nmissing;
	char roles_txt[256] = "";
	list_roles(roles_txt, sizeof roles_txt, b->roles, f->nroles, ROLE_MISSING);
	if (b->conflict) {
		a->state = RK_ASTATE_CONFLICT;
		a->why[0] = 0;
		rk_strcatf(a->why, sizeof a->why,
		           "split brain: %s mark role(s) %s faulty or missing, while %s mark role(s) %s "
		           "faulty or missing; each side ran without the other and the event counts "
		           "cannot order them, so raidkit refuses to guess which side is right",
		           b->side1, b->side1_marks, b->side2, b->side2_marks);
	} else if (b->geometry_conflict) {
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
	} else if (still_readable(f, b->roles, nmissing, &tol)) {
		a->state = RK_ASTATE_DEGRADED;
		snprintf(a->why, sizeof a->why, "role%s %s missing (%u of %u); RAID-%s tolerates %u missing",
		         nmissing > 1 ? "s" : "", roles_txt, nmissing, f->nroles, rk_level_name(f->level), tol);
		/* raidkit's journal makes its own arrays safe here; other
		 * formats' parity may lag where a write was in flight */
		if (f->array_state == RK_ARRAY_ACTIVE && f->origin != RK_ORIGIN_RAIDKIT &&
		    (f->level == 4 || f->level == 5 || f->level == 6))
			rk_strcatf(a->why, sizeof a->why, "; not shut down cleanly: blocks rebuilt from parity in "
			           "stripes being written at the stop may be wrong (md starts such an array only "
			           "with --force)");
	} else {
		a->state = RK_ASTATE_FAILED;
		snprintf(a->why, sizeof a->why,
		         "too few members: role%s %s missing (%u of %u), RAID-%s tolerates %u missing%s",
		         nmissing > 1 ? "s" : "", roles_txt, nmissing, f->nroles, rk_level_name(f->level), tol,
		         f->level == 10 && nmissing <= tol ? " (and not these: both copies of some data are gone)" : "");
	}
}

/* Whether a member the reshape added to role R was given (it is listed
 * apart, as a spare serving that role). */
static int added_member_given(const struct array_build *b, uint32_t r)
{
	for (uint32_t i = 0; i < b->n; i++)
		if (b->c[i].group == b->group && b->c[i].m.sb && b->c[i].m.sb->this_role == r &&
		    rk_member_reshape_added(b->f, &b->c[i].m))
			return 1;
	return 0;
}

/* Mid-reshape, the volume's first reshape_pos bytes lie on the new
 * geometry, whose added roles are not among the array's roles: without
 * their members that part is degraded (or lost), whatever the old roles
 * say. */
static void check_reshape_part(struct array_build *b)
{
	const struct rk_sb *f = b->f;
	const struct rk_geom_desc *n = &f->reshape_new;
	struct rk_array_info *a = b->a;
	struct rk_geom g;
	if (a->state == RK_ASTATE_CONFLICT || a->state == RK_ASTATE_FAILED || !(f->feat_incompat & RK_FEAT_INCOMPAT_RESHAPE) ||
	    !f->reshape_pos || n->nroles <= f->nroles || n->nroles > RK_SB_MAX_ROLES ||
	    rk_geom_init(&g, n->level, n->layout, n->chunk, n->nroles, n->data_size))
		return;
	uint8_t down[RK_SB_MAX_ROLES];
	char list[128] = "";
	uint32_t lost = 0;
	for (uint32_t r = 0; r < n->nroles; r++) {
		down[r] = r < f->nroles ? !(b->roles[r] & ROLE_PRESENT) : !added_member_given(b, r);
		if (r >= f->nroles && down[r] && ++lost)
			rk_strcatf(list, sizeof list, "%s%u", lost > 1 ? ", " : "", r);
	}
	if (!lost)
		return;
	int readable = rk_geom_readable(&g, down);
	a->state = readable ? RK_ASTATE_DEGRADED : RK_ASTATE_FAILED;
	rk_strcatf(a->why, sizeof a->why, "; the reshape's new role%s %s missing (no member given): the volume's "
	           "first %llu bytes, already in the new geometry, %s", lost > 1 ? "s" : "", list,
	           (unsigned long long)f->reshape_pos, readable ? "are read degraded" : "cannot be read");
}

rk_err rk_discover_build_array(struct candidate *c, uint32_t n, int group, struct rk_array_info *a, int32_t index)
{
	struct array_build b = { .c = c, .n = n, .group = group, .index = index, .a = a };
	drop_duplicate_images(&b);
	b.freshest = pick_freshest(&b);
	if (b.freshest < 0)
		return RK_OK;   /* cannot happen: a group has a member */
	b.f = c[b.freshest].m.sb;
	rk_err e = start_array(&b);
	if (e == RK_OK) {
		judge_members(&b);
		find_split_brain(&b);
		for (uint32_t i = 0; i < n; i++)
			if (open_in_group(&b, i))
				classify_member(&b, i);
		mark_missing_roles(&b);
		set_state(&b);
		check_reshape_part(&b);
	}
	free_build(&b);
	return e;
}

/* ---- --force ---- */

static uint32_t count_missing(const struct rk_array_info *a)
{
	uint32_t missing = 0;
	for (uint32_t r = 0; r < a->nroles; r++)
		missing += a->roles[r].cls != RK_MEMBER_ACTIVE;
	return missing;
}

/* The freshest stale member of D->left that can serve a role A lacks, or -1. */
static int64_t freshest_stale(const struct rk_discovery *d, const struct rk_array_info *a)
{
	int64_t best = -1;
	for (uint32_t i = 0; i < d->nleft; i++) {
		const struct rk_member *m = &d->left[i];
		if (m->cls != RK_MEMBER_STALE || !m->sb || !m->path || memcmp(m->sb->array_uuid, a->uuid, 16) ||
		    m->sb->this_role >= a->nroles || a->roles[m->sb->this_role].cls == RK_MEMBER_ACTIVE)
			continue;
		if (best < 0 || m->events > d->left[best].events)
			best = i;
	}
	return best;
}

uint32_t rk_discovery_force_stale(struct rk_discovery *d, uint32_t ai, rk_forced_fn *forced, void *ctx)
{
	struct rk_array_info *a = &d->arrays[ai];
	if (a->state != RK_ASTATE_FAILED || !a->sb)
		return 0;
	struct rk_geom g;
	if (rk_geom_init(&g, a->sb->level, a->sb->layout, a->sb->chunk, a->sb->nroles, a->sb->data_size))
		return 0;
	uint32_t tolerated = rk_geom_redundancy(&g), nforced = 0;
	int64_t best;
	while (count_missing(a) > tolerated && (best = freshest_stale(d, a)) >= 0) {
		struct rk_member *m = &d->left[best];
		uint32_t r = m->sb->this_role;
		/* Swap so that each entry stays owned exactly once. */
		struct rk_member tmp = a->roles[r];
		a->roles[r] = *m;
		*m = tmp;
		a->roles[r].cls = RK_MEMBER_ACTIVE;
		a->roles[r].role = r;
		rk_discover_set_reason(&a->roles[r], "forced in (stale: events %llu)",
		                       (unsigned long long)a->roles[r].events);
		a->nactive++;
		nforced++;
		if (forced)
			forced(ctx, a, r);
	}
	uint32_t missing = count_missing(a);
	if (missing <= tolerated) {
		a->state = missing ? RK_ASTATE_DEGRADED : RK_ASTATE_CLEAN;
		snprintf(a->why, sizeof a->why, "forced with stale members; %u role%s missing", missing,
		         missing == 1 ? "" : "s");
	}
	return nforced;
}
