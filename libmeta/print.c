/* print.c: metadata in words and as JSON (see rk_print.h).  Nothing here
 * decides anything: it shows what the codec and discovery found.  Text a
 * member or a user supplied (names, labels, UUID texts, paths, and the
 * reasons that quote them) goes out in words through rk_esc_fprintf and in
 * JSON through rk_json_str, never raw. */
#include "rk_print.h"
#include "rk_fmt.h"

#include <inttypes.h>
#include <string.h>
#include <time.h>
#include <uuid/uuid.h>

#include "rk_geom.h"
#include "rk_util.h"

static const char *I(const char *ind) { return ind ? ind : ""; }

const char *rk_print_time(uint64_t epoch, char *buf, size_t len)
{
	struct tm tm;
	time_t t = (time_t)epoch;
	/* Far-future or negative after the cast: print the number. */
	if (epoch > 253402300799ull || (uint64_t)t != epoch || !gmtime_r(&t, &tm) ||
	    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		snprintf(buf, len, "@%" PRIu64, epoch);
	return buf;
}

const char *rk_size_words(uint64_t bytes, char *buf, size_t len)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	double v = (double)bytes;
	int u = 0;
	while (v >= 1024 && u < 6) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, len, "%" PRIu64 " B", bytes);
	else
		snprintf(buf, len, "%.1f %s", v, unit[u]);
	return buf;
}

static const char *uuid_txt(const uint8_t u[16], char buf[37])
{
	uuid_unparse_lower(u, buf);
	return buf;
}

static const char *layout_txt(const struct rk_sb *sb, char *buf, size_t len)
{
	const char *n = rk_layout_name(sb->level, sb->layout, buf, len);
	if (!n || !*n)
		snprintf(buf, len, "%u", sb->layout);
	return buf;
}

static const char *level_txt(int32_t level, char *buf, size_t len)
{
	const char *n = rk_level_name(level);
	if (!n || !*n)
		snprintf(buf, len, "%d", level);
	else if (level == RK_LEVEL_LINEAR)
		snprintf(buf, len, "linear");
	else
		snprintf(buf, len, "RAID-%s", n);
	return buf;
}

static void print_geom_text(FILE *f, const char *ind, const char *title, const struct rk_geom_desc *g)
{
	char lv[32], lay[48];
	const char *ln = rk_layout_name(g->level, g->layout, lay, sizeof lay);
	fprintf(f, "%s%-14s: %s, layout %s (%u), chunk %" PRIu64 ", %u roles, data offset %" PRIu64
	        ", data size %" PRIu64 "\n", ind, title, level_txt(g->level, lv, sizeof lv),
	        ln && *ln ? ln : "-", g->layout, g->chunk, g->nroles, g->data_offset, g->data_size);
}

void rk_print_sb_text(FILE *f, const struct rk_sb *sb, const char *ind)
{
	char u[37], b1[64], b2[64], lv[32], t1[40], t2[40];
	ind = I(ind);
	fprintf(f, "%sarray UUID    : %s\n", ind, uuid_txt(sb->array_uuid, u));
	rk_esc_fprintf(f, "%sname          : %s\n", ind, sb->name[0] ? sb->name : "(none)");
	fprintf(f, "%smember UUID   : %s\n", ind, uuid_txt(sb->member_uuid, u));
	if (sb->this_role == RK_ROLE_NONE)
		fprintf(f, "%sthis role     : none (a spare)\n", ind);
	else
		fprintf(f, "%sthis role     : %u of %u\n", ind, sb->this_role, sb->nroles);
	fprintf(f, "%slevel         : %s\n", ind, level_txt(sb->level, lv, sizeof lv));
	fprintf(f, "%slayout        : %s (%u)\n", ind, layout_txt(sb, b1, sizeof b1), sb->layout);
	if (sb->chunk)
		fprintf(f, "%schunk         : %" PRIu64 " bytes (%s)\n", ind, sb->chunk,
		        rk_size_words(sb->chunk, b2, sizeof b2));
	else
		fprintf(f, "%schunk         : none (not striped)\n", ind);
	fprintf(f, "%sroles         : %u (table entries %u)\n", ind, sb->nroles, sb->nentries);
	fprintf(f, "%sevents        : %" PRIu64 "\n", ind, sb->events);
	fprintf(f, "%sarray state   : %s%s\n", ind, rk_array_state_name(sb->array_state),
	        sb->array_state == RK_ARRAY_ACTIVE ? " (open for writing: parity may lag)" : "");
	fprintf(f, "%sdata offset   : %" PRIu64 "\n", ind, sb->data_offset);
	fprintf(f, "%sdata size     : %" PRIu64 " bytes (%s) per member\n", ind, sb->data_size,
	        rk_size_words(sb->data_size, b1, sizeof b1));
	fprintf(f, "%svolume size   : %" PRIu64 " bytes (%s)\n", ind, sb->volume_size,
	        rk_size_words(sb->volume_size, b1, sizeof b1));
	fprintf(f, "%sdevice size   : %" PRIu64 " bytes when written\n", ind, sb->dev_size);
	fprintf(f, "%scopy offset   : %" PRIu64 " (%u bytes)\n", ind, sb->sb_offset, sb->sb_bytes);
	fprintf(f, "%screated       : %s\n", ind, rk_print_time(sb->ctime, t1, sizeof t1));
	fprintf(f, "%supdated       : %s\n", ind, rk_print_time(sb->utime, t2, sizeof t2));
	fprintf(f, "%sfeatures      : compat %s, ro_compat %s, incompat %s\n", ind,
	        rk_sb_feature_names(RK_FEAT_KIND_COMPAT, sb->feat_compat, b1, sizeof b1),
	        rk_sb_feature_names(RK_FEAT_KIND_RO_COMPAT, sb->feat_ro_compat, b2, sizeof b2),
	        rk_sb_feature_names(RK_FEAT_KIND_INCOMPAT, sb->feat_incompat, lv, sizeof lv));
	fprintf(f, "%sformat version: %u\n", ind, sb->version);
	if (sb->feat_incompat & RK_FEAT_INCOMPAT_JOURNAL)
		fprintf(f, "%sjournal       : offset %" PRIu64 ", %" PRIu64 " bytes\n", ind,
		        sb->journal_offset, sb->journal_size);
	if (sb->feat_incompat & RK_FEAT_INCOMPAT_RESHAPE) {
		print_geom_text(f, ind, "reshape to", &sb->reshape_new);
		fprintf(f, "%sreshape at    : %" PRIu64 " volume bytes done%s%s\n", ind, sb->reshape_pos,
		        sb->reshape_flags & RK_RESHAPE_BACKWARDS ? " (backwards, from the end)" : "",
		        sb->reshape_flags & RK_RESHAPE_REVERTING ? " (being reverted)" : "");
	}
	if (sb->scrub_pos)
		fprintf(f, "%sscrub resumes : at volume byte %" PRIu64 "\n", ind, sb->scrub_pos);
	fprintf(f, "%srole table    :\n", ind);
	uint32_t n = sb->nentries < RK_SB_MAX_ROLES ? sb->nentries : RK_SB_MAX_ROLES;
	for (uint32_t r = 0; r < n; r++) {
		const struct rk_role *e = &sb->roles[r];
		fprintf(f, "%s  %s%4u  %-10s  %s", ind, r == sb->this_role ? "*" : " ", r,
		        rk_role_state_name(e->state), uuid_txt(e->member_uuid, u));
		if (r >= sb->nroles)
			fprintf(f, "  (spare entry)");
		if (e->state == RK_ROLE_REBUILDING)
			fprintf(f, "  checkpoint %" PRIu64 " of %" PRIu64 " bytes", e->checkpoint, sb->data_size);
		if (e->flags)
			fprintf(f, "  flags 0x%x", e->flags);
		fputc('\n', f);
	}
}

static void geom_json(rk_json *j, const struct rk_geom_desc *g)
{
	char lay[48];
	rk_json_obj_begin(j);
	rk_json_kstr(j, "level", rk_level_name(g->level));
	rk_json_ku64(j, "layout", g->layout);
	const char *ln = rk_layout_name(g->level, g->layout, lay, sizeof lay);
	rk_json_kstr(j, "layout_name", ln && *ln ? ln : NULL);
	rk_json_ku64(j, "chunk", g->chunk);
	rk_json_ku64(j, "nroles", g->nroles);
	rk_json_ku64(j, "data_offset", g->data_offset);
	rk_json_ku64(j, "data_size", g->data_size);
	rk_json_obj_end(j);
}

void rk_print_sb_json(rk_json *j, const struct rk_sb *sb)
{
	char b[64], t[40];
	rk_json_obj_begin(j);
	rk_json_ku64(j, "version", sb->version);
	rk_json_key(j, "array_uuid");
	rk_json_uuid(j, sb->array_uuid);
	rk_json_key(j, "member_uuid");
	rk_json_uuid(j, sb->member_uuid);
	rk_json_kstr(j, "name", sb->name);
	rk_json_kstr(j, "level", rk_level_name(sb->level));
	rk_json_ki64(j, "level_number", sb->level);
	rk_json_ku64(j, "layout", sb->layout);
	rk_json_kstr(j, "layout_name", layout_txt(sb, b, sizeof b));
	rk_json_ku64(j, "chunk", sb->chunk);
	rk_json_ku64(j, "nroles", sb->nroles);
	rk_json_ku64(j, "nentries", sb->nentries);
	rk_json_key(j, "this_role");
	if (sb->this_role == RK_ROLE_NONE)
		rk_json_null(j);
	else
		rk_json_u64(j, sb->this_role);
	rk_json_ku64(j, "events", sb->events);
	rk_json_kstr(j, "array_state", rk_array_state_name(sb->array_state));
	rk_json_ku64(j, "data_offset", sb->data_offset);
	rk_json_ku64(j, "data_size", sb->data_size);
	rk_json_ku64(j, "volume_size", sb->volume_size);
	rk_json_ku64(j, "dev_size", sb->dev_size);
	rk_json_ku64(j, "sb_offset", sb->sb_offset);
	rk_json_ku64(j, "sb_bytes", sb->sb_bytes);
	rk_json_kstr(j, "ctime", rk_print_time(sb->ctime, t, sizeof t));
	rk_json_kstr(j, "utime", rk_print_time(sb->utime, t, sizeof t));
	rk_json_ku64(j, "ctime_epoch", sb->ctime);
	rk_json_ku64(j, "utime_epoch", sb->utime);
	rk_json_key(j, "features");
	rk_json_obj_begin(j);
	rk_json_ku64(j, "compat", sb->feat_compat);
	rk_json_ku64(j, "ro_compat", sb->feat_ro_compat);
	rk_json_ku64(j, "incompat", sb->feat_incompat);
	rk_json_kstr(j, "compat_names", rk_sb_feature_names(RK_FEAT_KIND_COMPAT, sb->feat_compat, b, sizeof b));
	rk_json_kstr(j, "ro_compat_names",
	             rk_sb_feature_names(RK_FEAT_KIND_RO_COMPAT, sb->feat_ro_compat, b, sizeof b));
	rk_json_kstr(j, "incompat_names",
	             rk_sb_feature_names(RK_FEAT_KIND_INCOMPAT, sb->feat_incompat, b, sizeof b));
	rk_json_obj_end(j);
	rk_json_ku64(j, "journal_offset", sb->journal_offset);
	rk_json_ku64(j, "journal_size", sb->journal_size);
	rk_json_key(j, "reshape");
	if (sb->feat_incompat & RK_FEAT_INCOMPAT_RESHAPE) {
		rk_json_obj_begin(j);
		rk_json_key(j, "new");
		geom_json(j, &sb->reshape_new);
		rk_json_ku64(j, "position", sb->reshape_pos);
		rk_json_ku64(j, "flags", sb->reshape_flags);
		rk_json_kbool(j, "backwards", !!(sb->reshape_flags & RK_RESHAPE_BACKWARDS));
		rk_json_kbool(j, "reverting", !!(sb->reshape_flags & RK_RESHAPE_REVERTING));
		rk_json_obj_end(j);
	} else {
		rk_json_null(j);
	}
	rk_json_ku64(j, "scrub_pos", sb->scrub_pos);
	rk_json_key(j, "roles");
	rk_json_arr_begin(j);
	uint32_t n = sb->nentries < RK_SB_MAX_ROLES ? sb->nentries : RK_SB_MAX_ROLES;
	for (uint32_t r = 0; r < n; r++) {
		const struct rk_role *e = &sb->roles[r];
		rk_json_obj_begin(j);
		rk_json_ku64(j, "role", r);
		rk_json_key(j, "member_uuid");
		rk_json_uuid(j, e->member_uuid);
		rk_json_kstr(j, "state", rk_role_state_name(e->state));
		rk_json_ku64(j, "checkpoint", e->checkpoint);
		rk_json_ku64(j, "flags", e->flags);
		rk_json_kbool(j, "spare_entry", r >= sb->nroles);
		rk_json_obj_end(j);
	}
	rk_json_arr_end(j);
	rk_json_obj_end(j);
}

static const char *copy_status(enum rk_copy_status s)
{
	return s == RK_COPY_OK ? "ok" : s == RK_COPY_ABSENT ? "absent" : "bad";
}

void rk_print_copies_text(FILE *f, const struct rk_sb_read *rd, int with_sb, const char *ind)
{
	ind = I(ind);
	char sub[64];
	snprintf(sub, sizeof sub, "%s    ", ind);
	for (int k = 0; k < 2; k++) {
		const struct rk_sb_copy *c = &rd->copy[k];
		fprintf(f, "%s%s copy at %" PRIu64 ": %s%s", ind, k ? "backup" : "primary", c->offset,
		        c->status == RK_COPY_OK ? "valid" : copy_status(c->status),
		        rd->chosen == k ? " (chosen)" : "");
		if (c->status != RK_COPY_OK)
			rk_esc_fprintf(f, ": %s", c->why[0] ? c->why : rk_strerror(c->err));
		fputc('\n', f);
		if (c->status == RK_COPY_OK && c->sb && with_sb) {
			/* The unchosen copy in full only when it says something else. */
			if (k == 1 && rd->chosen == 0 && rd->copy[0].sb &&
			    rd->copy[0].sb->events == c->sb->events) {
				fprintf(f, "%s(same events as the primary; see above)\n", sub);
				continue;
			}
			rk_print_sb_text(f, c->sb, sub);
		}
	}
	rk_esc_fprintf(f, "%schoice: %s\n", ind, rd->why[0] ? rd->why : "none");
}

void rk_print_copies_json_keys(rk_json *j, const struct rk_sb_read *rd)
{
	rk_json_key(j, "copies");
	rk_json_arr_begin(j);
	for (int k = 0; k < 2; k++) {
		const struct rk_sb_copy *c = &rd->copy[k];
		rk_json_obj_begin(j);
		rk_json_kstr(j, "copy", k ? "backup" : "primary");
		rk_json_ku64(j, "offset", c->offset);
		rk_json_kstr(j, "status", copy_status(c->status));
		rk_json_kbool(j, "valid", c->status == RK_COPY_OK);
		rk_json_kbool(j, "chosen", rd->chosen == k);
		rk_json_key(j, "error");
		if (c->status == RK_COPY_OK)
			rk_json_null(j);
		else
			rk_json_str(j, rk_strerror(c->err));
		rk_json_kstr(j, "why", c->status == RK_COPY_OK ? "valid" : c->why);
		if (rk_json_key_or_null(j, "superblock", c->status == RK_COPY_OK && c->sb))
			rk_print_sb_json(j, c->sb);
		rk_json_obj_end(j);
	}
	rk_json_arr_end(j);
	if (rk_json_key_or_null(j, "chosen", rd->chosen >= 0))
		rk_json_str(j, rd->chosen ? "backup" : "primary");
	rk_json_kstr(j, "choice", rd->why);
}

void rk_print_probe_text(FILE *f, const struct rk_probe_result *r, const char *ind)
{
	ind = I(ind);
	if (!r->found) {
		fprintf(f, "%sno known signature\n", ind);
		return;
	}
	rk_esc_fprintf(f, "%s%s\n", ind, r->what);
	rk_esc_fprintf(f, "%s  type %s, usage %s%s%s%s%s%s%s\n", ind, r->type, r->usage[0] ? r->usage : "-",
	               r->version[0] ? ", version " : "", r->version, r->uuid[0] ? ", UUID " : "", r->uuid,
	               r->label[0] ? ", label " : "", r->label);
}

void rk_print_probe_json(rk_json *j, const struct rk_probe_result *r)
{
	rk_json_obj_begin(j);
	rk_json_kbool(j, "found", r->found);
	rk_json_kstr(j, "type", r->found ? r->type : NULL);
	rk_json_kstr(j, "usage", r->usage[0] ? r->usage : NULL);
	rk_json_kstr(j, "uuid", r->uuid[0] ? r->uuid : NULL);
	rk_json_kstr(j, "label", r->label[0] ? r->label : NULL);
	rk_json_kstr(j, "version", r->version[0] ? r->version : NULL);
	rk_json_kstr(j, "what", r->found ? r->what : NULL);
	rk_json_obj_end(j);
}

/* ---- a reshape in progress ---- */

void rk_print_reshape_text(FILE *f, const struct rk_sb *sb, const char *ind)
{
	if (!sb || !(sb->feat_incompat & RK_FEAT_INCOMPAT_RESHAPE))
		return;
	ind = I(ind);
	if (sb->origin != RK_ORIGIN_RAIDKIT)
		rk_esc_fprintf(f, "%sreshape in progress at %" PRIu64 " of %" PRIu64 " volume bytes (to RAID-%s, %u roles), "
		               "stopped by %s: readable (the new geometry below that point, the old above); raidkit "
		               "does not continue it\n", ind, sb->reshape_pos, sb->volume_size,
		               rk_level_name(sb->reshape_new.level), sb->reshape_new.nroles, rk_view_origin_name(sb));
	else if (sb->reshape_flags & RK_RESHAPE_REVERTING)
		fprintf(f, "%sreshape being reverted at %" PRIu64 " of %" PRIu64 " volume bytes (back to RAID-%s, %u roles), "
		        "finish with raid-resize --continue or --revert; readable and writable meanwhile\n", ind,
		        sb->reshape_pos, sb->volume_size, rk_level_name(sb->level), sb->nroles);
	else
		fprintf(f, "%sreshape in progress at %" PRIu64 " of %" PRIu64 " volume bytes (to RAID-%s, %u roles), "
		        "finish with raid-resize --continue; readable and writable meanwhile\n", ind, sb->reshape_pos,
		        sb->volume_size, rk_level_name(sb->reshape_new.level), sb->reshape_new.nroles);
}

void rk_print_reshape_json_key(rk_json *j, const struct rk_sb *sb)
{
	if (!sb || !(sb->feat_incompat & RK_FEAT_INCOMPAT_RESHAPE))
		return;
	rk_json_key(j, "reshape");
	rk_json_obj_begin(j);
	rk_json_ku64(j, "position", sb->reshape_pos);
	rk_json_ku64(j, "volume_size", sb->volume_size);
	rk_json_ki64(j, "new_level", sb->reshape_new.level);
	rk_json_ku64(j, "new_roles", sb->reshape_new.nroles);
	rk_json_kstr(j, "state", sb->origin != RK_ORIGIN_RAIDKIT ? "reshape in progress: readable; raidkit does not continue it"
	                         : (sb->reshape_flags & RK_RESHAPE_REVERTING)
	                         ? "reshape being reverted: finish with raid-resize --continue"
	                         : "reshape in progress: finish with raid-resize --continue");
	rk_json_obj_end(j);
}

/* ---- discovery: members, arrays, the whole set (the raid-assemble report) ---- */

int rk_print_lists_left(const struct rk_discovery *d, uint32_t a, const struct rk_member *m)
{
	if (!m->path)
		return 0;
	if (m->array_idx >= 0 && (uint32_t)m->array_idx < d->narrays)
		return (uint32_t)m->array_idx == a;
	if (m->has_sb) {
		int i = rk_discovery_find_uuid(d, m->array_uuid);
		if (i >= 0 && (uint32_t)i != a)
			return 0;
	}
	return 1;
}

/* "clean|degraded|failed" as the contract has it; a conflict cannot run. */
static const char *state_word(const struct rk_array_info *a)
{
	switch (a->state) {
	case RK_ASTATE_CLEAN: return "clean";
	case RK_ASTATE_DEGRADED: return "degraded";
	default: return "failed";
	}
}

/* One member object; DETAIL adds what only an examination wants (the
 * array it names, the foreign metadata type). */
static void member_json(rk_json *j, const struct rk_member *m, int64_t role, const char *state,
                        const char *reason, int detail)
{
	rk_json_obj_begin(j);
	if (rk_json_key_or_null(j, "role", role >= 0))
		rk_json_i64(j, role);
	rk_json_kstr(j, "path", m->path);
	if (rk_json_key_or_null(j, "uuid", m->sb && !rk_buf_is_zero(m->member_uuid, 16)))
		rk_json_uuid(j, m->member_uuid);
	if (rk_json_key_or_null(j, "events", m->sb != NULL))
		rk_json_u64(j, m->events);
	rk_json_kstr(j, "state", state);
	rk_json_kstr(j, "reason", reason && *reason ? reason : NULL);
	if (detail && m->has_sb) {
		rk_json_key(j, "array_uuid");
		rk_json_uuid(j, m->array_uuid);
	}
	if (detail && m->foreign_type[0])
		rk_json_kstr(j, "foreign_type", m->foreign_type);
	rk_json_obj_end(j);
}

/* A role with no usable member: its UUID as the array's table has it. */
static void missing_json(rk_json *j, const struct rk_array_info *a, uint32_t r)
{
	const struct rk_sb *sb = a->sb;
	rk_json_obj_begin(j);
	rk_json_ki64(j, "role", r);
	rk_json_kstr(j, "path", NULL);
	if (rk_json_key_or_null(j, "uuid", sb && r < sb->nentries && !rk_buf_is_zero(sb->roles[r].member_uuid, 16)))
		rk_json_uuid(j, sb->roles[r].member_uuid);
	rk_json_key(j, "events");
	rk_json_null(j);
	rk_json_kstr(j, "state", "missing");
	rk_json_kstr(j, "reason", a->roles[r].reason[0] ? a->roles[r].reason : NULL);
	rk_json_obj_end(j);
}

void rk_print_member_json(rk_json *j, const struct rk_member *m)
{
	member_json(j, m, m->role, rk_member_class_name(m->cls), m->reason, 1);
}

static void left_line(FILE *f, const char *ind, const char *path, const char *state, const char *reason)
{
	rk_esc_fprintf(f, "%s%s: %s%s%s\n", ind, path, state, *reason ? ": " : "", reason);
}

void rk_print_member_text(FILE *f, const struct rk_member *m, const char *ind)
{
	left_line(f, I(ind), m->path ? m->path : "(none)", rk_member_class_name(m->cls), m->reason);
}

/* Calls FN for every active member of the other arrays of D: a path given
 * with array A that serves another array, reported under A as foreign. */
typedef void foreign_fn(void *ctx, const struct rk_member *m, const char *why);
static void each_foreign(const struct rk_discovery *d, uint32_t a, foreign_fn *fn, void *ctx)
{
	for (uint32_t b = 0; b < d->narrays; b++) {
		if (b == a)
			continue;
		char u[37], why[128];
		uuid_txt(d->arrays[b].uuid, u);
		for (uint32_t r = 0; r < d->arrays[b].nroles; r++) {
			const struct rk_member *m = &d->arrays[b].roles[r];
			if (m->cls != RK_MEMBER_ACTIVE || !m->path)
				continue;
			snprintf(why, sizeof why, "member of array %s, role %u", u, r);
			fn(ctx, m, why);
		}
	}
}

static void foreign_json(void *ctx, const struct rk_member *m, const char *why)
{
	member_json(ctx, m, -1, "foreign", why, 0);
}

void rk_print_array_json(rk_json *j, const struct rk_discovery *d, uint32_t ai)
{
	const struct rk_array_info *a = &d->arrays[ai];
	const struct rk_sb *sb = a->sb;
	char buf[64];
	rk_json_obj_begin(j);
	rk_json_key(j, "uuid");
	rk_json_uuid(j, a->uuid);
	rk_json_kstr(j, "name", a->name);
	if (sb) {
		rk_json_kstr(j, "metadata", rk_view_origin_name(sb));
		rk_json_kstr(j, "level", rk_level_name(sb->level));
		rk_json_kstr(j, "layout", rk_layout_name(sb->level, sb->layout, buf, sizeof buf));
		rk_json_ku64(j, "chunk", sb->chunk);
		rk_json_ku64(j, "volume_size", sb->volume_size);
		rk_json_ku64(j, "events", sb->events);
		rk_json_kbool(j, "unclean", sb->array_state == RK_ARRAY_ACTIVE);
	}
	rk_json_ku64(j, "members_total", a->nroles);
	rk_json_ku64(j, "members_active", a->nactive);
	rk_json_kstr(j, "state", state_word(a));
	rk_json_kbool(j, "conflict", a->state == RK_ASTATE_CONFLICT);
	rk_json_kstr(j, "why", a->why[0] ? a->why : NULL);
	rk_json_key(j, "members");
	rk_json_arr_begin(j);
	for (uint32_t r = 0; r < a->nroles; r++) {
		const struct rk_member *m = &a->roles[r];
		if (m->cls == RK_MEMBER_ACTIVE && m->path)
			member_json(j, m, r, "active", m->reason, 0);
		else
			missing_json(j, a, r);
	}
	for (uint32_t i = 0; i < d->nleft; i++) {
		const struct rk_member *m = &d->left[i];
		if (rk_print_lists_left(d, ai, m))
			member_json(j, m, m->role, rk_member_class_name(m->cls), m->reason, 0);
	}
	each_foreign(d, ai, foreign_json, j);
	rk_json_arr_end(j);
	rk_json_obj_end(j);
}

struct left_text {
	FILE *f;
	const char *ind;
	int header;
};

static void left_text(struct left_text *lt, const char *path, const char *state, const char *reason)
{
	if (!lt->header++)
		fprintf(lt->f, "%s  left out:\n", lt->ind);
	char sub[64];
	snprintf(sub, sizeof sub, "%s    ", lt->ind);
	left_line(lt->f, sub, path, state, reason);
}

static void foreign_text(void *ctx, const struct rk_member *m, const char *why)
{
	left_text(ctx, m->path, "foreign", why);
}

void rk_print_array_text(FILE *f, const struct rk_discovery *d, uint32_t ai, const char *ind)
{
	const struct rk_array_info *a = &d->arrays[ai];
	const struct rk_sb *sb = a->sb;
	char u[37], lv[32], lay[64], vs[32], ch[32];
	ind = I(ind);
	fprintf(f, "%sarray %s", ind, uuid_txt(a->uuid, u));
	if (a->name[0])
		rk_esc_fprintf(f, " \"%s\"", a->name);
	fputc('\n', f);
	if (sb)
		fprintf(f, "%s  %s %s, chunk %s, %u roles, volume %" PRIu64 " bytes (%s), events %" PRIu64 "\n", ind,
		        level_txt(sb->level, lv, sizeof lv), rk_layout_name(sb->level, sb->layout, lay, sizeof lay),
		        rk_size_words(sb->chunk, ch, sizeof ch), a->nroles, sb->volume_size,
		        rk_size_words(sb->volume_size, vs, sizeof vs), sb->events);
	if (sb && sb->origin != RK_ORIGIN_RAIDKIT)
		rk_esc_fprintf(f, "%s  metadata %s (read-only: raidkit does not write to it)\n", ind, rk_view_origin_name(sb));
	fprintf(f, "%s  state %s", ind, a->state == RK_ASTATE_CONFLICT ? "failed (conflicting metadata)" : state_word(a));
	if (a->why[0])
		rk_esc_fprintf(f, ": %s", a->why);
	fputc('\n', f);
	if (sb && sb->array_state == RK_ARRAY_ACTIVE)
		fprintf(f, "%s  note: the array was not shut down cleanly (a write may have been in flight)\n", ind);
	for (uint32_t r = 0; r < a->nroles; r++) {
		const struct rk_member *m = &a->roles[r];
		if (m->cls == RK_MEMBER_ACTIVE && m->path) {
			rk_esc_fprintf(f, "%s  role %-3u %s (events %" PRIu64 ")\n", ind, r, m->path, m->events);
		} else {
			/* discovery's sentence starts "role N: "; the line says it already */
			const char *why = m->reason;
			char pre[32];
			int k = snprintf(pre, sizeof pre, "role %u: ", r);
			if (k > 0 && !strncmp(why, pre, (size_t)k))
				why += k;
			rk_esc_fprintf(f, "%s  role %-3u missing%s%s\n", ind, r, *why ? ": " : "", why);
		}
	}
	struct left_text lt = { f, ind, 0 };
	for (uint32_t i = 0; i < d->nleft; i++) {
		const struct rk_member *m = &d->left[i];
		if (rk_print_lists_left(d, ai, m))
			left_text(&lt, m->path, rk_member_class_name(m->cls), m->reason);
	}
	each_foreign(d, ai, foreign_text, &lt);
}

void rk_print_discovery_text(FILE *f, const struct rk_discovery *d)
{
	for (uint32_t a = 0; a < d->narrays; a++) {
		if (a)
			fputc('\n', f);
		rk_print_array_text(f, d, a, "");
	}
	if (!d->narrays) {
		fprintf(f, "no array found\n");
		for (uint32_t i = 0; i < d->nleft; i++)
			if (d->left[i].path)
				rk_print_member_text(f, &d->left[i], "  ");
	}
}

void rk_print_discovery_json_keys(rk_json *j, const struct rk_discovery *d)
{
	rk_json_key(j, "arrays");
	rk_json_arr_begin(j);
	for (uint32_t a = 0; a < d->narrays; a++)
		rk_print_array_json(j, d, a);
	rk_json_arr_end(j);
	rk_json_key(j, "unused");
	rk_json_arr_begin(j);
	for (uint32_t i = 0; i < d->nleft; i++) {
		const struct rk_member *m = &d->left[i];
		if (m->path)
			member_json(j, m, m->role, rk_member_class_name(m->cls), m->reason, 0);
	}
	rk_json_arr_end(j);
}

void rk_print_discovery_json(rk_json *j, const struct rk_discovery *d)
{
	rk_json_obj_begin(j);
	rk_print_discovery_json_keys(j, d);
	rk_json_obj_end(j);
}
