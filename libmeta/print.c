/* print.c: metadata in words and as JSON (see rk_print.h).  Nothing here
 * decides anything: it shows what the codec and discovery found. */
#include "rk_print.h"

#include <inttypes.h>
#include <string.h>
#include <time.h>
#include <uuid/uuid.h>

#include "rk_geom.h"

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

const char *rk_print_size(uint64_t bytes, char *buf, size_t len)
{
	static const char *const unit[] = { "bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	int u = 0;
	uint64_t v = bytes;
	while (v >= 1024 && u < 6) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, len, "%" PRIu64 " bytes", bytes);
	else {
		double d = (double)bytes;
		for (int k = 0; k < u; k++)
			d /= 1024.0;
		snprintf(buf, len, "%.1f %s", d, unit[u]);
	}
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

static void print_geom_text(FILE *f, const char *ind, const char *title, const struct rk_geom_desc *g,
                            uint32_t layout_fallback)
{
	char lv[32], lay[48];
	const char *ln = rk_layout_name(g->level, g->layout, lay, sizeof lay);
	(void)layout_fallback;
	fprintf(f, "%s%-14s: %s, layout %s (%u), chunk %" PRIu64 ", %u roles, data offset %" PRIu64
	        ", data size %" PRIu64 "\n", ind, title, level_txt(g->level, lv, sizeof lv),
	        ln && *ln ? ln : "-", g->layout, g->chunk, g->nroles, g->data_offset, g->data_size);
}

void rk_print_sb_text(FILE *f, const struct rk_sb *sb, const char *ind)
{
	char u[37], b1[64], b2[64], lv[32], t1[40], t2[40];
	ind = I(ind);
	fprintf(f, "%sarray UUID    : %s\n", ind, uuid_txt(sb->array_uuid, u));
	fprintf(f, "%sname          : %s\n", ind, sb->name[0] ? sb->name : "(none)");
	fprintf(f, "%smember UUID   : %s\n", ind, uuid_txt(sb->member_uuid, u));
	if (sb->this_role == RK_ROLE_NONE)
		fprintf(f, "%sthis role     : none (a spare)\n", ind);
	else
		fprintf(f, "%sthis role     : %u of %u\n", ind, sb->this_role, sb->nroles);
	fprintf(f, "%slevel         : %s\n", ind, level_txt(sb->level, lv, sizeof lv));
	fprintf(f, "%slayout        : %s (%u)\n", ind, layout_txt(sb, b1, sizeof b1), sb->layout);
	if (sb->chunk)
		fprintf(f, "%schunk         : %" PRIu64 " bytes (%s)\n", ind, sb->chunk,
		        rk_print_size(sb->chunk, b2, sizeof b2));
	else
		fprintf(f, "%schunk         : none (not striped)\n", ind);
	fprintf(f, "%sroles         : %u (table entries %u)\n", ind, sb->nroles, sb->nentries);
	fprintf(f, "%sevents        : %" PRIu64 "\n", ind, sb->events);
	fprintf(f, "%sarray state   : %s%s\n", ind, rk_array_state_name(sb->array_state),
	        sb->array_state == RK_ARRAY_ACTIVE ? " (open for writing: parity may lag)" : "");
	fprintf(f, "%sdata offset   : %" PRIu64 "\n", ind, sb->data_offset);
	fprintf(f, "%sdata size     : %" PRIu64 " bytes (%s) per member\n", ind, sb->data_size,
	        rk_print_size(sb->data_size, b1, sizeof b1));
	fprintf(f, "%svolume size   : %" PRIu64 " bytes (%s)\n", ind, sb->volume_size,
	        rk_print_size(sb->volume_size, b1, sizeof b1));
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
		print_geom_text(f, ind, "reshape to", &sb->reshape_new, sb->layout);
		fprintf(f, "%sreshape at    : %" PRIu64 " volume bytes done%s\n", ind, sb->reshape_pos,
		        sb->reshape_flags & RK_RESHAPE_BACKWARDS ? " (backwards, from the end)" : "");
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
			fprintf(f, ": %s", c->why[0] ? c->why : rk_strerror(c->err));
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
	fprintf(f, "%schoice: %s\n", ind, rd->why[0] ? rd->why : "none");
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
		rk_json_key(j, "superblock");
		if (c->status == RK_COPY_OK && c->sb)
			rk_print_sb_json(j, c->sb);
		else
			rk_json_null(j);
		rk_json_obj_end(j);
	}
	rk_json_arr_end(j);
	rk_json_key(j, "chosen");
	if (rd->chosen >= 0)
		rk_json_str(j, rd->chosen ? "backup" : "primary");
	else
		rk_json_null(j);
	rk_json_kstr(j, "choice", rd->why);
}

void rk_print_probe_text(FILE *f, const struct rk_probe_result *r, const char *ind)
{
	ind = I(ind);
	if (!r->found) {
		fprintf(f, "%sno known signature\n", ind);
		return;
	}
	fprintf(f, "%s%s\n", ind, r->what);
	fprintf(f, "%s  type %s, usage %s%s%s%s%s%s%s\n", ind, r->type, r->usage[0] ? r->usage : "-",
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

void rk_print_member_text(FILE *f, const struct rk_member *m, const char *ind)
{
	char role[32];
	if (m->role >= 0)
		snprintf(role, sizeof role, "role %lld", (long long)m->role);
	else
		snprintf(role, sizeof role, "no role");
	fprintf(f, "%s%-9s %-9s %s: %s\n", I(ind), rk_member_class_name(m->cls), role,
	        m->path ? m->path : "(none)", m->reason);
}

void rk_print_member_json(rk_json *j, const struct rk_member *m)
{
	rk_json_obj_begin(j);
	rk_json_key(j, "role");
	if (m->role >= 0)
		rk_json_i64(j, m->role);
	else
		rk_json_null(j);
	rk_json_kstr(j, "path", m->path);
	rk_json_key(j, "uuid");
	if (m->has_sb || m->cls == RK_MEMBER_MISSING)
		rk_json_uuid(j, m->member_uuid);
	else
		rk_json_null(j);
	rk_json_key(j, "events");
	if (m->has_sb)
		rk_json_u64(j, m->events);
	else
		rk_json_null(j);
	rk_json_kstr(j, "state", rk_member_class_name(m->cls));
	rk_json_kstr(j, "reason", m->reason);
	if (m->has_sb) {
		rk_json_key(j, "array_uuid");
		rk_json_uuid(j, m->array_uuid);
	}
	if (m->foreign_type[0])
		rk_json_kstr(j, "foreign_type", m->foreign_type);
	rk_json_obj_end(j);
}

/* Paths of D not used by array AI: its own left-overs and the unrelated. */
static int left_for(const struct rk_member *m, uint32_t ai)
{
	return m->array_idx < 0 || (uint32_t)m->array_idx == ai;
}

void rk_print_array_text(FILE *f, const struct rk_discovery *d, uint32_t ai, const char *ind)
{
	const struct rk_array_info *a = &d->arrays[ai];
	char u[37], lv[32], lay[48], sz[32];
	ind = I(ind);
	fprintf(f, "%sarray %s%s%s%s\n", ind, uuid_txt(a->uuid, u), a->name[0] ? " \"" : "", a->name,
	        a->name[0] ? "\"" : "");
	if (a->sb) {
		fprintf(f, "%s  %s, layout %s, chunk %" PRIu64 ", %u roles, volume %" PRIu64 " bytes (%s), events %" PRIu64 "\n",
		        ind, level_txt(a->sb->level, lv, sizeof lv), layout_txt(a->sb, lay, sizeof lay),
		        a->sb->chunk, a->nroles, a->sb->volume_size,
		        rk_print_size(a->sb->volume_size, sz, sizeof sz), a->sb->events);
	}
	fprintf(f, "%s  state %s: %s\n", ind, rk_astate_name(a->state), a->why);
	char sub[64];
	snprintf(sub, sizeof sub, "%s  ", ind);
	for (uint32_t r = 0; r < a->nroles; r++)
		rk_print_member_text(f, &a->roles[r], sub);
	for (uint32_t i = 0; i < d->nleft; i++)
		if (left_for(&d->left[i], ai))
			rk_print_member_text(f, &d->left[i], sub);
}

void rk_print_array_json(rk_json *j, const struct rk_discovery *d, uint32_t ai)
{
	const struct rk_array_info *a = &d->arrays[ai];
	char lay[48];
	rk_json_obj_begin(j);
	rk_json_key(j, "uuid");
	rk_json_uuid(j, a->uuid);
	rk_json_kstr(j, "name", a->name);
	if (a->sb) {
		rk_json_kstr(j, "level", rk_level_name(a->sb->level));
		rk_json_kstr(j, "layout", layout_txt(a->sb, lay, sizeof lay));
		rk_json_ku64(j, "chunk", a->sb->chunk);
		rk_json_ku64(j, "volume_size", a->sb->volume_size);
		rk_json_ku64(j, "events", a->sb->events);
	}
	rk_json_ku64(j, "members_total", a->nroles);
	rk_json_ku64(j, "members_active", a->nactive);
	rk_json_kstr(j, "state", rk_astate_name(a->state));
	rk_json_kstr(j, "why", a->why);
	rk_json_key(j, "members");
	rk_json_arr_begin(j);
	for (uint32_t r = 0; r < a->nroles; r++)
		rk_print_member_json(j, &a->roles[r]);
	for (uint32_t i = 0; i < d->nleft; i++)
		if (left_for(&d->left[i], ai))
			rk_print_member_json(j, &d->left[i]);
	rk_json_arr_end(j);
	rk_json_obj_end(j);
}

void rk_print_discovery_text(FILE *f, const struct rk_discovery *d)
{
	for (uint32_t a = 0; a < d->narrays; a++)
		rk_print_array_text(f, d, a, "");
	if (d->narrays == 0) {
		fprintf(f, "no raidkit array found\n");
		for (uint32_t i = 0; i < d->nleft; i++)
			rk_print_member_text(f, &d->left[i], "  ");
	}
}

void rk_print_discovery_json(rk_json *j, const struct rk_discovery *d)
{
	rk_json_obj_begin(j);
	rk_json_key(j, "arrays");
	rk_json_arr_begin(j);
	for (uint32_t a = 0; a < d->narrays; a++)
		rk_print_array_json(j, d, a);
	rk_json_arr_end(j);
	rk_json_key(j, "unused");
	rk_json_arr_begin(j);
	for (uint32_t i = 0; i < d->nleft; i++)
		if (d->left[i].array_idx < 0)
			rk_print_member_json(j, &d->left[i]);
	rk_json_arr_end(j);
	rk_json_obj_end(j);
}
