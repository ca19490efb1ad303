/* fmt.c: the formats table (rk_fmt.h): raidkit's own entry, libblkid's,
 * and what the decoders of other formats share (fmt_int.h).  Each foreign
 * format has its own file: fmt_md1.c, fmt_md090.c, fmt_ddf.c, fmt_imsm.c. */
#include "rk_fmt.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <uuid/uuid.h>

#include "fmt_int.h"
#include "rk_geom.h"
#include "rk_le.h"
#include "rk_print.h"
#include "rk_sb.h"
#include "rk_util.h"

const char *rk_fmt_md_level_name(int32_t level, char *buf, size_t len)
{
	switch (level) {
	case -1: return "linear";
	case -4: return "multipath";
	case -5: return "faulty";
	default: snprintf(buf, len, "raid%d", level); return buf;
	}
}

void rk_fmt_md_uuid_colons(const uint8_t u[16], char *buf)
{
	/* mdadm's form: four 32-bit groups separated by colons. */
	for (int i = 0, o = 0; i < 16; i++) {
		o += sprintf(buf + o, "%02x", u[i]);
		if (i % 4 == 3 && i < 15)
			buf[o++] = ':';
	}
}

void rk_fmt_md_json_head(rk_json *j, const char *version, uint64_t at, int csum_ok, uint64_t csum,
                         const uint8_t *uuid)
{
	rk_json_obj_begin(j);
	rk_json_kstr(j, "format", "md");
	rk_json_kstr(j, "version", version);
	rk_json_ku64(j, "sb_offset", at);
	rk_json_kbool(j, "checksum_ok", csum_ok);
	rk_json_ku64(j, "checksum", csum);
	rk_json_key(j, "array_uuid");
	rk_json_uuid(j, uuid);
}

/* ---------------- table entries ---------------- */

static rk_err rk_native_probe(rk_dev *d, const char *path, struct rk_probe_result *r)
{
	memset(r, 0, sizeof *r);
	struct rk_sb_read rd;
	rk_err e = rk_sb_read(d, &rd);
	if (e == RK_OK && rd.chosen >= 0) {
		const struct rk_sb *sb = rd.copy[rd.chosen].sb;
		r->found = 1;
		snprintf(r->type, sizeof r->type, "raidkit");
		snprintf(r->usage, sizeof r->usage, "raid");
		uuid_unparse_lower(sb->array_uuid, r->uuid);
		snprintf(r->label, sizeof r->label, "%s", sb->name);
		snprintf(r->version, sizeof r->version, "%u", sb->version);
		snprintf(r->what, sizeof r->what, "a raidkit member (events %" PRIu64 ") of array UUID %s",
		         sb->events, r->uuid);
	}
	rk_sb_read_free(&rd);
	return e == RK_E_NOSB ? RK_OK : e;
}

static rk_err rk_native_decode(rk_dev *d, const char *path, void **out)
{
	struct rk_sb_read *rd = malloc(sizeof *rd);
	if (!rd)
		return rk_fail(RK_E_NOMEM, "out of memory");
	rk_err e = rk_sb_read(d, rd);
	if (e) {
		rk_sb_read_free(rd);
		free(rd);
		return e;
	}
	*out = rd;
	return RK_OK;
}

static void rk_native_text(FILE *f, const void *obj, const char *ind)
{
	rk_print_copies_text(f, obj, 1, ind);
}

static void rk_native_json(rk_json *j, const void *obj)
{
	rk_json_obj_begin(j);
	rk_json_kstr(j, "format", "raidkit");
	rk_print_copies_json_keys(j, obj);
	rk_json_obj_end(j);
}

static void rk_native_release(void *obj)
{
	if (obj)
		rk_sb_read_free(obj);
	free(obj);
}

/* Reads an on-disk structure of SIZE bytes with READ into a new object
 * (*OUT, freed with free()). */
rk_err rk_fmt_read_new(rk_dev *d, size_t size, rk_err (*read)(rk_dev *d, void *obj), void **out)
{
	void *m = malloc(size);
	if (!m)
		return rk_fail(RK_E_NOMEM, "out of memory");
	rk_err e = read(d, m);
	if (e) {
		free(m);
		return e;
	}
	*out = m;
	return RK_OK;
}

void rk_fmt_md_found(struct rk_probe_result *r, const uint8_t *uuid)
{
	r->found = 1;
	snprintf(r->type, sizeof r->type, "linux_raid_member");
	snprintf(r->usage, sizeof r->usage, "raid");
	uuid_unparse_lower(uuid, r->uuid);
}

/* Probes D through DECODE (a *_decode_ent); a member found is described by
 * DESCRIBE.  NOSB, and NOT_MINE (the format's "not one of ours"), mean
 * nothing found. */
rk_err rk_fmt_probe_via(rk_dev *d, const char *path, struct rk_probe_result *r,
                       rk_err (*decode)(rk_dev *d, const char *path, void **out),
                       void (*describe)(const void *obj, struct rk_probe_result *r), rk_err not_mine)
{
	memset(r, 0, sizeof *r);
	void *obj = NULL;
	rk_err e = decode(d, path, &obj);
	if (e == RK_OK && obj) {
		describe(obj, r);
		free(obj);
	}
	return e == RK_E_NOSB || e == not_mine ? RK_OK : e;
}

static rk_err blkid_probe_ent(rk_dev *d, const char *path, struct rk_probe_result *r)
{
	return rk_probe_foreign(path, r);
}

static rk_err blkid_decode_ent(rk_dev *d, const char *path, void **out)
{
	struct rk_probe_result *r = malloc(sizeof *r);
	if (!r)
		return rk_fail(RK_E_NOMEM, "out of memory");
	rk_err e = rk_probe_foreign(path, r);
	if (e == RK_OK && !r->found)
		e = rk_fail(RK_E_NOSB, "%s: libblkid recognises nothing", path);
	if (e) {
		free(r);
		return e;
	}
	*out = r;
	return RK_OK;
}

static void blkid_text(FILE *f, const void *obj, const char *ind)
{
	rk_print_probe_text(f, obj, ind);
}

static void blkid_json(rk_json *j, const void *obj)
{
	rk_print_probe_json(j, obj);
}

static const struct rk_meta_fmt fmt_raidkit = {
	"raidkit", "raidkit superblock (both copies)", rk_native_probe, rk_native_decode,
	rk_native_text, rk_native_json, rk_native_release, NULL,
};
static const struct rk_meta_fmt fmt_blkid = {
	"blkid", "signatures libblkid knows (DDF, IMSM, firmware RAID, file systems, partition tables)",
	blkid_probe_ent, blkid_decode_ent, blkid_text, blkid_json, free, NULL,
};

const struct rk_meta_fmt *const rk_meta_fmts[] = {
	&fmt_raidkit, &rk_fmt_md1, &rk_fmt_md090, &rk_fmt_ddf, &rk_fmt_imsm, &fmt_blkid, NULL,
};

const struct rk_meta_fmt *rk_meta_fmt_find(const char *name)
{
	for (int i = 0; rk_meta_fmts[i]; i++)
		if (name && strcmp(rk_meta_fmts[i]->name, name) == 0)
			return rk_meta_fmts[i];
	return NULL;
}

/* The disk serials a user gave (rk_fmt_set_disk_serials), process-wide. */
static char *disk_serials;

rk_err rk_fmt_set_disk_serials(const char *spec)
{
	char *copy = NULL;
	if (spec && *spec && !(copy = strdup(spec)))
		return rk_fail(RK_E_NOMEM, "out of memory");
	free(disk_serials);
	disk_serials = copy;
	return RK_OK;
}

const char *rk_fmt_disk_serials(void)
{
	return disk_serials;
}
