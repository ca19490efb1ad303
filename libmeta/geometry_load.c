/* geometry_load.c: reading a geometry file (spec/geometry.md) with json-c.
 * The file is hostile input: its size is bounded, every field's type and
 * range is checked, roles must be distinct, and the geometry must pass
 * rk_geom_init; every message names the file and the field. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "rk_geometry.h"
#include "rk_geom.h"
#include "rk_le.h"
#include "rk_sb.h"

#define GEOMETRY_MAX_FILE (16u << 20)   /* detect's evidence and alternatives fit easily */
#define GEOMETRY_MAX_PATH 4096u

/* The context of one load: the file's name for messages. */
struct ld {
	const char *file;
};

/* An unsigned integer field: JSON integer in [0, MAX] (INT64_MAX is
 * json-c's saturation: refused as too large). */
static rk_err get_u64(const struct ld *l, json_object *o, const char *field, uint64_t max, uint64_t *out)
{
	if (!o || json_object_get_type(o) != json_type_int)
		return rk_fail(RK_E_CORRUPT, "%s: %s: %s", l->file, field, o ? "not an integer" : "missing");
	errno = 0;
	int64_t v = json_object_get_int64(o);
	if (v < 0 || v == INT64_MAX || (uint64_t)v > max)
		return rk_fail(RK_E_CORRUPT, "%s: %s: %" PRId64 " out of range (0 to %" PRIu64 ")", l->file, field, v, max);
	*out = (uint64_t)v;
	return RK_OK;
}

/* level: "5", "raid5", "linear" or a number. */
static rk_err get_level(const struct ld *l, json_object *root, int32_t *level)
{
	json_object *o = NULL;
	json_object_object_get_ex(root, "level", &o);
	char num[24];
	const char *s = NULL;
	if (o && json_object_get_type(o) == json_type_string)
		s = json_object_get_string(o);
	else if (o && json_object_get_type(o) == json_type_int) {
		snprintf(num, sizeof num, "%" PRId64, json_object_get_int64(o));
		s = num;
	}
	if (!s)
		return rk_fail(RK_E_CORRUPT, "%s: level: %s", l->file, o ? "not a string" : "missing");
	if (!strcmp(s, "-1"))
		s = "linear";
	if (rk_level_parse(s, level))
		return rk_fail(RK_E_CORRUPT, "%s: level: '%.40s' is not one of linear, 0, 1, 4, 5, 6, 10", l->file, s);
	return RK_OK;
}

/* layout: a name rk_layout_parse knows, or a number; optional for the
 * levels without layouts. */
static rk_err get_layout(const struct ld *l, json_object *root, int32_t level, uint32_t *layout)
{
	json_object *o = NULL;
	json_object_object_get_ex(root, "layout", &o);
	*layout = 0;
	int none = level == 0 || level == 1 || level == RK_LEVEL_LINEAR;
	if (!o || json_object_get_type(o) == json_type_null) {
		if (none)
			return RK_OK;
		return rk_fail(RK_E_CORRUPT, "%s: layout: missing (RAID-%s needs one)", l->file, rk_level_name(level));
	}
	char num[24];
	const char *s = NULL;
	if (json_object_get_type(o) == json_type_string)
		s = json_object_get_string(o);
	else if (json_object_get_type(o) == json_type_int && json_object_get_int64(o) >= 0) {
		snprintf(num, sizeof num, "%" PRId64, json_object_get_int64(o));
		s = num;
	}
	if (!s || rk_layout_parse(level, s, layout))
		return rk_fail(RK_E_CORRUPT, "%s: layout: %s%.40s%s is not a layout of RAID-%s", l->file, s ? "'" : "",
		               s ? s : "value", s ? "'" : "", rk_level_name(level));
	if (none)
		*layout = 0;   /* md ignores RAID-0's zone layouts over one zone */
	return RK_OK;
}

/* A 64-digit hex fingerprint into FP. */
static rk_err get_fp(const struct ld *l, json_object *o, const char *field, uint8_t *fp)
{
	if (json_object_get_type(o) != json_type_string || json_object_get_string_len(o) != 2 * RK_GEOMETRY_FP_LEN)
		return rk_fail(RK_E_CORRUPT, "%s: %s: not %u hex digits", l->file, field, 2 * RK_GEOMETRY_FP_LEN);
	const char *s = json_object_get_string(o);
	for (unsigned i = 0; i < 2 * RK_GEOMETRY_FP_LEN; i++) {
		char c = s[i];
		int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
		if (v < 0)
			return rk_fail(RK_E_CORRUPT, "%s: %s: not %u hex digits", l->file, field, 2 * RK_GEOMETRY_FP_LEN);
		fp[i / 2] = (uint8_t)(i % 2 ? fp[i / 2] | v : v << 4);
	}
	return RK_OK;
}

/* members[I]: {role, path (string or null), offset, fingerprint}. */
static rk_err get_member(const struct ld *l, json_object *o, uint32_t i, struct rk_geometry *g, uint8_t *seen)
{
	char f[64];
	json_object *v = NULL;
	uint64_t role, off = 0;
	rk_err e;
	snprintf(f, sizeof f, "members[%u]", i);
	if (json_object_get_type(o) != json_type_object)
		return rk_fail(RK_E_CORRUPT, "%s: %s: not an object", l->file, f);
	snprintf(f, sizeof f, "members[%u].role", i);
	json_object_object_get_ex(o, "role", &v);
	if ((e = get_u64(l, v, f, g->nroles - 1, &role)))
		return e;
	if (seen[role]++)
		return rk_fail(RK_E_CORRUPT, "%s: %s: role %" PRIu64 " listed twice", l->file, f, role);
	struct rk_geometry_member *m = &g->roles[role];
	snprintf(f, sizeof f, "members[%u].offset", i);
	if (json_object_object_get_ex(o, "offset", &v) && (e = get_u64(l, v, f, UINT64_MAX, &off)))
		return e;
	if (off % 512)
		return rk_fail(RK_E_CORRUPT, "%s: %s: %" PRIu64 " is not a multiple of 512", l->file, f, off);
	m->offset = off;
	snprintf(f, sizeof f, "members[%u].fingerprint", i);
	if (json_object_object_get_ex(o, "fingerprint", &v) && json_object_get_type(v) != json_type_null) {
		if ((e = get_fp(l, v, f, m->fp)))
			return e;
		m->have_fp = 1;
	}
	snprintf(f, sizeof f, "members[%u].path", i);
	if (!json_object_object_get_ex(o, "path", &v) || json_object_get_type(v) == json_type_null)
		return RK_OK;
	if (json_object_get_type(v) != json_type_string)
		return rk_fail(RK_E_CORRUPT, "%s: %s: not a string or null", l->file, f);
	size_t len = (size_t)json_object_get_string_len(v);
	const char *s = json_object_get_string(v);
	if (len == 0 || len > GEOMETRY_MAX_PATH || strlen(s) != len)
		return rk_fail(RK_E_CORRUPT, "%s: %s: empty, longer than %u bytes or holding a NUL", l->file, f,
		               GEOMETRY_MAX_PATH);
	if (!(m->path = strdup(s)))
		return rk_fail(RK_E_NOMEM, "%s: out of memory", l->file);
	return RK_OK;
}

/* The smallest data size per member (whole 512-byte sectors; whole chunks
 * where striped) whose geometry holds VOLUME bytes: the volume grows with
 * the member size, so a binary search finds it. */
static rk_err derive_member_size(const struct ld *l, struct rk_geometry *g)
{
	struct rk_geom geo;
	uint64_t unit = g->chunk && g->level != 1 && g->level != RK_LEVEL_LINEAR ? g->chunk : 512;
	uint64_t lo = 1, hi = (UINT64_MAX / 4) / unit;
	if (rk_geom_init(&geo, g->level, g->layout, g->chunk, g->nroles, hi * unit)) {
		char why[256];
		snprintf(why, sizeof why, "%s", rk_errmsg());
		return rk_fail(RK_E_CORRUPT, "%s: level %s, layout %u, chunk %" PRIu64 ", %u members: %s", l->file,
		               rk_level_name(g->level), g->layout, g->chunk, g->nroles, why);
	}
	if (geo.volume_size < g->volume_size)
		return rk_fail(RK_E_CORRUPT, "%s: volume_size %" PRIu64 ": the geometry cannot hold it", l->file, g->volume_size);
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (rk_geom_init(&geo, g->level, g->layout, g->chunk, g->nroles, mid * unit) == RK_OK &&
		    geo.volume_size >= g->volume_size)
			hi = mid;
		else
			lo = mid + 1;
	}
	g->member_size = lo * unit;
	return RK_OK;
}

/* The top-level numbers: level, layout, chunk, members_total,
 * volume_size, member_size, found, confidence. */
static rk_err get_numbers(const struct ld *l, json_object *root, struct rk_geometry *g)
{
	json_object *o = NULL;
	uint64_t v;
	rk_err e;
	if (json_object_object_get_ex(root, "found", &o) && json_object_get_type(o) == json_type_boolean &&
	    !json_object_get_boolean(o))
		return rk_fail(RK_E_CORRUPT, "%s: found: false (detection gave no single answer; pick one of its "
		               "alternatives and write it as the geometry)", l->file);
	if ((e = get_level(l, root, &g->level)) || (e = get_layout(l, root, g->level, &g->layout)))
		return e;
	json_object_object_get_ex(root, "chunk", &o);
	if ((e = get_u64(l, o, "chunk", RK_CHUNK_MAX, &g->chunk)))
		return e;
	if (g->level == 1 || g->level == RK_LEVEL_LINEAR)
		g->chunk = 0;
	json_object_object_get_ex(root, "members_total", &o);
	if ((e = get_u64(l, o, "members_total", RK_SB_MAX_ROLES, &v)))
		return e;
	if (!v)
		return rk_fail(RK_E_CORRUPT, "%s: members_total: 0", l->file);
	g->nroles = (uint32_t)v;
	json_object_object_get_ex(root, "volume_size", &o);
	if ((e = get_u64(l, o, "volume_size", UINT64_MAX, &g->volume_size)))
		return e;
	if (!g->volume_size)
		return rk_fail(RK_E_CORRUPT, "%s: volume_size: 0", l->file);
	if (json_object_object_get_ex(root, "member_size", &o) && json_object_get_type(o) != json_type_null &&
	    (e = get_u64(l, o, "member_size", UINT64_MAX, &g->member_size)))
		return e;
	if (json_object_object_get_ex(root, "confidence", &o) && json_object_get_type(o) != json_type_null) {
		if (json_object_get_type(o) != json_type_double && json_object_get_type(o) != json_type_int)
			return rk_fail(RK_E_CORRUPT, "%s: confidence: not a number", l->file);
		g->confidence = json_object_get_double(o);
		if (!(g->confidence >= 0 && g->confidence <= 1))
			return rk_fail(RK_E_CORRUPT, "%s: confidence: not in [0, 1]", l->file);
	}
	return RK_OK;
}

/* The geometry as a whole: the engine takes it and it holds the volume. */
static rk_err check_geometry(const struct ld *l, struct rk_geometry *g)
{
	struct rk_geom geo;
	rk_err e;
	if (!g->member_size && (e = derive_member_size(l, g)))
		return e;
	if (rk_geom_init(&geo, g->level, g->layout, g->chunk, g->nroles, g->member_size)) {
		char why[256];
		snprintf(why, sizeof why, "%s", rk_errmsg());
		return rk_fail(RK_E_CORRUPT, "%s: level %s, layout %u, chunk %" PRIu64 ", %u members of %" PRIu64
		               " bytes: %s", l->file, rk_level_name(g->level), g->layout, g->chunk, g->nroles,
		               g->member_size, why);
	}
	if (g->volume_size > geo.volume_size)
		return rk_fail(RK_E_CORRUPT, "%s: volume_size: %" PRIu64 " bytes, the geometry holds %" PRIu64, l->file,
		               g->volume_size, geo.volume_size);
	g->member_size = geo.member_size;   /* whole chunks */
	for (uint32_t r = 0; r < g->nroles; r++) {
		uint64_t end;
		if (rk_add_ovf(g->roles[r].offset, g->member_size, &end))
			return rk_fail(RK_E_CORRUPT, "%s: members: role %u's data area overflows 64 bits", l->file, r);
	}
	return RK_OK;
}

/* Reads the file into a NUL-terminated buffer (at most GEOMETRY_MAX_FILE). */
static rk_err slurp(const char *file, char **out, size_t *len)
{
	FILE *f = fopen(file, "rb");
	if (!f)
		return rk_fail(RK_E_OPEN, "%s: cannot open: %s", file, strerror(errno));
	char *buf = malloc(GEOMETRY_MAX_FILE + 1);
	size_t n = buf ? fread(buf, 1, GEOMETRY_MAX_FILE + 1, f) : 0;
	int err = ferror(f);
	fclose(f);
	if (!buf)
		return rk_fail(RK_E_NOMEM, "%s: out of memory", file);
	if (err || n > GEOMETRY_MAX_FILE) {
		free(buf);
		return rk_fail(err ? RK_E_IO : RK_E_CORRUPT, "%s: %s", file,
		               err ? "read failed" : "larger than 16 MiB: not a geometry file");
	}
	buf[n] = 0;
	*out = buf;
	*len = n;
	return RK_OK;
}

rk_err rk_geometry_parse(const char *name, const char *text, size_t len, struct rk_geometry *g)
{
	struct ld l = { name ? name : "geometry" };
	memset(g, 0, sizeof *g);
	json_tokener *tok = json_tokener_new_ex(64);
	if (!tok)
		return rk_fail(RK_E_NOMEM, "%s: out of memory", l.file);
	json_object *root = len > INT32_MAX ? NULL : json_tokener_parse_ex(tok, text, (int)len);
	enum json_tokener_error je = json_tokener_get_error(tok);
	if (root && (je != json_tokener_success || (size_t)json_tokener_get_parse_end(tok) < len)) {
		/* trailing bytes after the document: only white space is allowed */
		for (size_t i = json_tokener_get_parse_end(tok); i < len; i++)
			if (!strchr(" \t\r\n", text[i])) {
				json_object_put(root);
				root = NULL;
				je = json_tokener_error_parse_unexpected;
				break;
			}
	}
	json_tokener_free(tok);
	if (!root)
		return rk_fail(RK_E_CORRUPT, "%s: not JSON: %s", l.file,
		               je == json_tokener_continue ? "unexpected end" : json_tokener_error_desc(je));
	rk_err e = RK_OK;
	json_object *mem = NULL;
	uint8_t *seen = NULL;
	if (json_object_get_type(root) != json_type_object)
		e = rk_fail(RK_E_CORRUPT, "%s: not a JSON object", l.file);
	if (!e)
		e = get_numbers(&l, root, g);
	if (!e && (!json_object_object_get_ex(root, "members", &mem) || json_object_get_type(mem) != json_type_array))
		e = rk_fail(RK_E_CORRUPT, "%s: members: %s", l.file, mem ? "not an array" : "missing");
	if (!e && json_object_array_length(mem) > g->nroles)
		e = rk_fail(RK_E_CORRUPT, "%s: members: %zu entries for members_total %u", l.file,
		            json_object_array_length(mem), g->nroles);
	if (!e && (!(g->roles = calloc(g->nroles, sizeof *g->roles)) || !(seen = calloc(g->nroles, 1))))
		e = rk_fail(RK_E_NOMEM, "%s: out of memory", l.file);
	for (size_t i = 0; !e && i < json_object_array_length(mem); i++)
		e = get_member(&l, json_object_array_get_idx(mem, i), (uint32_t)i, g, seen);
	if (!e)
		e = check_geometry(&l, g);
	free(seen);
	json_object_put(root);
	if (e)
		rk_geometry_free(g);
	return e;
}

rk_err rk_geometry_load(const char *file, struct rk_geometry *g)
{
	char *text = NULL;
	size_t len = 0;
	memset(g, 0, sizeof *g);
	rk_err e = slurp(file, &text, &len);
	if (e)
		return e;
	e = rk_geometry_parse(file, text, len, g);
	free(text);
	return e;
}
