/* discover.c: members given in any order -> arrays, roles, and a reason for
 * every path.  Read-only: each path is opened RK_DEV_RDONLY, both superblock
 * copies are read, and the device is closed again before deciding.
 *
 * Order of decisions (each path gets exactly one class):
 *   0. a later segment of an image (disk.E02, disk.002) given beside its
 *      first segment is folded into it: no candidate (spec/images.md);
 *      files named like split segments that carry metadata of their own
 *      are separate members instead (rk_segnames.h; their reason says so);
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
#include "rk_fmt.h"
#include "rk_part.h"
#include "rk_geom.h"
#include "rk_le.h"
#include "rk_probe.h"
#include "rk_segnames.h"
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

/* The candidates while step 1 runs: one per path given, more where a path
 * is a whole disk (its partitions) or a container serving several arrays
 * (one per view).  Indexes stay valid; pointers do not survive cand_new. */
struct cand_vec {
	struct candidate *c;
	uint32_t n, cap;
};

/* A new candidate for PATH (given as argument ARGI); -1 when out of memory. */
static int64_t cand_new(struct cand_vec *v, const char *path, int32_t argi)
{
	if (v->n == v->cap) {
		uint32_t cap = v->cap ? v->cap * 2 : 8;
		struct candidate *nc = realloc(v->c, (size_t)cap * sizeof *nc);
		if (!nc)
			return -1;
		v->c = nc;
		v->cap = cap;
	}
	struct candidate *c = &v->c[v->n];
	memset(c, 0, sizeof *c);
	c->group = -1;
	c->same_as = -1;
	c->m.argi = argi;
	c->m.array_idx = -1;
	c->m.role = -1;
	c->m.rd.chosen = -1;
	if (!(c->m.path = strdup(path ? path : "")))
		return -1;
	return v->n++;
}

/* M takes superblock SB (a raidkit copy chosen in M->rd, or a view). */
static void take_sb(struct rk_member *m, struct rk_sb *sb)
{
	m->sb = sb;
	m->has_sb = 1;
	memcpy(m->array_uuid, sb->array_uuid, 16);
	memcpy(m->member_uuid, sb->member_uuid, 16);
	m->events = sb->events;
	/* A spare's this_role points at its spare entry (past nroles). */
	m->role = sb->this_role == RK_ROLE_NONE || sb->this_role >= sb->nroles ? -1 : (int64_t)sb->this_role;
}

/* M takes a copy of view V as its one superblock copy. */
static rk_err take_view(struct rk_member *m, const struct rk_sb *v)
{
	struct rk_sb *sb = malloc(sizeof *sb);
	if (!sb)
		return rk_fail(RK_E_NOMEM, "discovery: out of memory");
	memcpy(sb, v, sizeof *sb);
	memset(&m->rd, 0, sizeof m->rd);
	m->rd.copy[0] = (struct rk_sb_copy){ .offset = v->sb_offset, .status = RK_COPY_OK, .sb = sb };
	m->rd.copy[1] = (struct rk_sb_copy){ .status = RK_COPY_ABSENT, .err = RK_E_NOSB };
	m->rd.chosen = 0;
	snprintf(m->rd.why, sizeof m->rd.why, "%s metadata at %llu", v->origin_name, (unsigned long long)v->sb_offset);
	take_sb(m, sb);
	return RK_OK;
}

/* Candidate I cannot be used: class CLS, decided, with the reason. */
static void decide(struct cand_vec *v, int64_t i, enum rk_member_class cls)
{
	v->c[i].m.cls = cls;
	v->c[i].decided = 1;
}

/* Candidate I's reason when its device cannot be opened.  The device
 * layer's message starts with the path, which the report already prints
 * before the reason. */
static void open_failed(struct cand_vec *v, int64_t i)
{
	const char *msg = rk_errmsg();
	struct rk_member *m = &v->c[i].m;
	size_t pl = strlen(m->path);
	if (!strncmp(msg, m->path, pl) && !strncmp(msg + pl, ": ", 2))
		msg += pl + 2;
	rk_discover_set_reason(m, "%s", msg);
	decide(v, i, RK_MEMBER_UNKNOWN);
}

/* The same file or device as an earlier candidate: candidate I becomes its
 * duplicate (1), else 0. */
static int same_object(struct cand_vec *v, int64_t i, rk_dev *d)
{
	struct candidate *c = &v->c[i];
	if (!rk_dev_identity(d, &c->devno, &c->ino) || !(c->devno || c->ino))
		return 0;
	c->have_id = 1;
	for (int64_t k = 0; k < i; k++) {
		if (!v->c[k].have_id || v->c[k].devno != c->devno || v->c[k].ino != c->ino)
			continue;
		char disk[4096];
		uint32_t pn;
		const char *what = rk_part_name_parse(c->m.path, disk, sizeof disk, &pn) == 1 ? "partition"
		                 : rk_dev_is_blockdev(d) ? "device" : "file";
		rk_discover_set_reason(&c->m, "the same %s as %s, given twice", what, v->c[k].m.path);
		/* Same object: the earlier path stands for it. */
		c->same_as = k;
		decide(v, i, RK_MEMBER_DUPLICATE);
		return 1;
	}
	return 0;
}

/* Foreign metadata F found on candidate I: its views become candidates
 * (the first is I, more for a container serving several arrays); with no
 * usable view, I is foreign with the reason. */
static rk_err take_foreign(struct cand_vec *v, int64_t i, const struct rk_foreign_read *f)
{
	char what[96];
	snprintf(what, sizeof what, "%s", f->fmt->desc);
	if (f->nviews == 0) {
		const char *why = f->why[0] ? f->why : "it serves no array";
		size_t wl = strlen(what);
		if (!strncmp(why, what, wl) && !strncmp(why + wl, ": ", 2))
			why += wl + 2;   /* the format is named once */
		snprintf(v->c[i].m.foreign_type, sizeof v->c[i].m.foreign_type, "%s", f->fmt->name);
		rk_discover_set_reason(&v->c[i].m, "%s, not usable: %s", what, why);
		decide(v, i, RK_MEMBER_FOREIGN);
		return RK_OK;
	}
	for (uint32_t k = 0; k < f->nviews; k++) {
		int64_t at = i;
		if (k && (at = cand_new(v, v->c[i].m.path, v->c[i].m.argi)) < 0)
			return rk_fail(RK_E_NOMEM, "discovery: out of memory");
		rk_err e = take_view(&v->c[at].m, &f->views[k]);
		if (e)
			return e;
		snprintf(v->c[at].m.foreign_type, sizeof v->c[at].m.foreign_type, "%s", f->fmt->name);
	}
	return RK_OK;
}

/* No metadata of ours or of a format we read: libblkid names what it is. */
static void say_unknown(struct cand_vec *v, int64_t i)
{
	struct rk_member *m = &v->c[i].m;
	char copies[400] = "";
	for (int k = 0; k < 2; k++) {
		const struct rk_sb_copy *cp = &m->rd.copy[k];
		rk_strcatf(copies, sizeof copies, "%s%s copy at %llu: %s", k ? "; " : "",
		    k ? "backup" : "primary", (unsigned long long)cp->offset,
		    cp->why[0] ? cp->why : rk_strerror(cp->err ? cp->err : RK_E_NOSB));
	}
	struct rk_probe_result pr;
	memset(&pr, 0, sizeof pr);
	if (rk_probe_path(m->path, &pr) == RK_OK && pr.found && strcmp(pr.type, "raidkit") != 0) {
		snprintf(m->foreign_type, sizeof m->foreign_type, "%s", pr.type);
		if (strcmp(pr.usage, "raid") == 0) {
			rk_discover_set_reason(m, "foreign RAID metadata raidkit does not read: %s", pr.what);
			decide(v, i, RK_MEMBER_FOREIGN);
			return;
		}
		rk_discover_set_reason(m, "no valid raidkit superblock (%s); it holds %s", copies, pr.what);
	} else
		rk_discover_set_reason(m, "no valid raidkit superblock: %s", copies);
	decide(v, i, RK_MEMBER_UNKNOWN);
}

static rk_err examine_one(struct cand_vec *v, int64_t i, int look_inside);

/* A whole disk: its partitions replace it as candidates (the first takes
 * its place).  1 when it had any, 0 when not, -1 on error (set). */
static int take_partitions(struct cand_vec *v, int64_t i)
{
	char **names = NULL;
	uint32_t n = 0;
	if (rk_part_list(v->c[i].m.path, &names, &n))
		return -1;
	rk_err e = RK_OK;
	for (uint32_t k = 0; k < n && !e; k++) {
		int64_t at = i;
		if (k == 0) {
			/* the first partition takes the disk's place, afresh */
			free(v->c[i].m.path);
			rk_sb_read_free(&v->c[i].m.rd);
			v->c[i].m.path = names[0];
			v->c[i].have_id = 0;
			names[0] = NULL;
		} else if ((at = cand_new(v, names[k], v->c[i].m.argi)) < 0)
			e = rk_fail(RK_E_NOMEM, "discovery: out of memory");
		if (!e)
			e = examine_one(v, at, 0);
	}
	rk_part_list_free(names, n);
	return e ? -1 : n > 0;
}

/* Whether metadata F read from the whole of PATH, which may hold a
 * partition table too, is the whole disk's own: md 1.0 and 0.90 keep
 * theirs at the end and md 1.1 at the start, where a partition ending (or
 * starting) there would show the same bytes.  It is the disk's own unless
 * one of its partitions carries the same member of the same array. */
static int whole_disk_member(const char *path, const struct rk_foreign_read *f)
{
	if (!f->fmt || !f->nviews)
		return 0;
	char **names = NULL;
	uint32_t n = 0;
	if (rk_part_list(path, &names, &n) || n == 0) {
		rk_part_list_free(names, n);
		return 1;
	}
	int own = 1;
	for (uint32_t k = 0; k < n && own; k++) {
		rk_dev *pd = NULL;
		struct rk_foreign_read pf;
		if (rk_member_open(&pd, names[k], RK_DEV_RDONLY))
			continue;
		if (rk_foreign_read(pd, names[k], &pf) == RK_OK)
			for (uint32_t j = 0; j < pf.nviews && own; j++)
				if (!memcmp(pf.views[j].array_uuid, f->views[0].array_uuid, 16) &&
				    !memcmp(pf.views[j].member_uuid, f->views[0].member_uuid, 16) &&
				    pf.views[j].events == f->views[0].events)
					own = 0;
		rk_foreign_read_free(&pf);
		rk_dev_close(pd);
	}
	rk_part_list_free(names, n);
	return own;
}

/* The unchosen copy shares the chosen one's superblock struct when both
 * say the same (only where they live differs, which copy[].offset keeps):
 * a superblock holds a role table of RK_SB_MAX_ROLES entries (64 KiB), and
 * keeping both doubled discovery's memory on wide arrays (issue 13, peak
 * RSS).  rk_sb_read_free frees a shared struct once. */
static void share_twin(struct rk_sb_read *rd)
{
	struct rk_sb *c = rd->copy[rd->chosen].sb, *o = rd->copy[!rd->chosen].sb;
	if (!o || rd->copy[!rd->chosen].status != RK_COPY_OK)
		return;
	uint64_t off = o->sb_offset;
	o->sb_offset = c->sb_offset;   /* decoded structs are zeroed, padding included */
	int same = memcmp(c, o, sizeof *c) == 0;
	o->sb_offset = off;
	if (same) {
		free(o);
		rd->copy[!rd->chosen].sb = c;
	}
}

/* Step 1 for candidate I: open, identify, read raidkit's copies, else look
 * into a partition table (LOOK_INSIDE), else foreign formats, else say what
 * it is.  Errors only for memory. */
static rk_err examine_one(struct cand_vec *v, int64_t i, int look_inside)
{
	rk_dev *d = NULL;
	if (rk_member_open(&d, v->c[i].m.path, RK_DEV_RDONLY)) {
		open_failed(v, i);
		return RK_OK;
	}
	if (same_object(v, i, d)) {
		rk_dev_close(d);
		return RK_OK;
	}
	struct rk_member *m = &v->c[i].m;
	rk_err e = rk_sb_read(d, &m->rd);
	if (e == RK_OK && m->rd.chosen >= 0 && m->rd.chosen < 2 && m->rd.copy[m->rd.chosen].sb) {
		rk_dev_close(d);
		take_sb(m, m->rd.copy[m->rd.chosen].sb);
		share_twin(&m->rd);
		return RK_OK;
	}
	if (e != RK_E_NOSB && e != RK_OK) {
		rk_dev_close(d);
		rk_discover_set_reason(m, "cannot read the superblocks: %s", rk_errmsg());
		decide(v, i, RK_MEMBER_UNKNOWN);
		return e == RK_E_NOMEM ? e : RK_OK;
	}
	struct rk_foreign_read f;
	e = rk_foreign_read(d, m->path, &f);
	rk_dev_close(d);
	int parts = 0;
	if (e == RK_OK && look_inside && !whole_disk_member(m->path, &f) && (parts = take_partitions(v, i)) != 0) {
		rk_foreign_read_free(&f);
		return parts < 0 ? rk_fail(RK_E_NOMEM, "discovery: out of memory") : RK_OK;
	}
	if (e == RK_OK && f.fmt)
		e = take_foreign(v, i, &f);
	else if (e == RK_OK)
		say_unknown(v, i);
	else if (e != RK_E_NOMEM) {
		rk_discover_set_reason(&v->c[i].m, "cannot read its metadata: %s", rk_errmsg());
		decide(v, i, RK_MEMBER_UNKNOWN);
		e = RK_OK;
	}
	rk_foreign_read_free(&f);
	return e;
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

/* Step 1 over every path given: the candidates into V.  Errors only for
 * memory. */
static rk_err examine_paths(struct cand_vec *v, char *const *paths, uint32_t npaths)
{
	for (uint32_t i = 0; i < npaths; i++) {
		/* disk.E02 beside disk.E01: read as part of it (spec/images.md) */
		if (rk_member_segment_given(paths, npaths, i))
			continue;
		int64_t at = cand_new(v, paths[i], (int32_t)i);
		if (at < 0)
			return rk_fail(RK_E_NOMEM, "discovery: out of memory");
		rk_err e = examine_one(v, at, 1);
		if (e)
			return e;
	}
	return RK_OK;
}

/* M, a file named like a segment of a split raw image read as a separate
 * file (spec/images.md): its reason says why; the first segment of a set
 * read as one image that carries nothing a member would: the reason says
 * how separate disks so named are read apart. */
static void note_separate(struct rk_member *m)
{
	char why[400], first[4096];
	uint32_t num;
	size_t l = strlen(m->reason);
	if (!m->path)
		return;
	if (rk_member_plain(m->path, why, sizeof why))
		snprintf(m->reason + l, sizeof m->reason - l, "%s%s", l ? "; " : "", why);
	else if (m->cls == RK_MEMBER_UNKNOWN && rk_dev_split_of(m->path, first, sizeof first, &num) && num == 1)
		/* nothing tells: the name made one image of the files */
		snprintf(m->reason + l, sizeof m->reason - l, "%sread as one split raw image by its name: if its "
		         "files are separate disks, give them other names", l ? "; " : "");
}

rk_err rk_discover(struct rk_discovery **out, char *const *paths, uint32_t npaths, const uint8_t *uuid)
{
	if (!out || (npaths && !paths))
		return rk_fail(RK_E_INVAL, "rk_discover: no paths");
	*out = NULL;
	struct rk_discovery *d = calloc(1, sizeof *d);
	struct cand_vec v = { 0 };
	if (!d)
		return rk_fail(RK_E_NOMEM, "discovery: out of memory");
	rk_err e = examine_paths(&v, paths, npaths);
	struct candidate *c = v.c;
	uint32_t n = v.n;
	if (e)
		goto fail;
	int ngroups = group_by_array(c, n, uuid);
	if (ngroups >= 0)
		d->arrays = calloc(ngroups ? (size_t)ngroups : 1, sizeof *d->arrays);
	if (ngroups < 0 || !d->arrays) {
		e = rk_fail(RK_E_NOMEM, "discovery: out of memory");
		goto fail;
	}
	for (int g = 0; g < ngroups; g++) {
		e = rk_discover_build_array(c, n, g, &d->arrays[d->narrays], (int32_t)d->narrays);
		d->narrays++;
		if (e)
			goto fail;
	}
	e = collect_left(d, c, n);
	if (e)
		goto fail;
	for (uint32_t a = 0; a < d->narrays; a++)
		for (uint32_t r = 0; r < d->arrays[a].nroles; r++)
			note_separate(&d->arrays[a].roles[r]);
	for (uint32_t i = 0; i < d->nleft; i++)
		note_separate(&d->left[i]);
	free(c);
	*out = d;
	return RK_OK;
fail:
	for (uint32_t i = 0; i < n; i++)
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
