/* fmt.c: the formats table (rk_fmt.h) and native decoders of Linux md
 * superblocks (0.90 and 1.x), so that raid-examine can print what md wrote
 * as mdadm --examine does, without mdadm. */
#include "rk_fmt.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <uuid/uuid.h>

#include "rk_geom.h"
#include "rk_le.h"
#include "rk_print.h"
#include "rk_sb.h"
#include "rk_util.h"

/* ---------------- md 1.x ---------------- */

rk_err rk_md1_decode(struct rk_md1 *m, const uint8_t *b, size_t len, uint64_t at)
{
	if (len < 256)
		return rk_fail(RK_E_SHORT, "md 1.x superblock at %" PRIu64 ": only %zu bytes", at, len);
	if (rk_get_le32(b) != RK_MD_MAGIC || rk_get_le32(b + 4) != 1)
		return rk_fail(RK_E_NOSB, "no md 1.x superblock at %" PRIu64, at);
	memset(m, 0, sizeof *m);
	m->at = at;
	m->feature_map = rk_get_le32(b + 8);
	memcpy(m->set_uuid, b + 16, 16);
	memcpy(m->set_name, b + 32, 32);
	m->set_name[32] = 0;
	m->ctime = rk_get_le64(b + 64) & 0xffffffffffull;
	m->level = (int32_t)rk_get_le32(b + 72);
	m->layout = rk_get_le32(b + 76);
	m->size = rk_get_le64(b + 80);
	m->chunksize = rk_get_le32(b + 88);
	m->raid_disks = rk_get_le32(b + 92);
	m->new_level = rk_get_le32(b + 100);
	m->reshape_position = rk_get_le64(b + 104);
	m->delta_disks = rk_get_le32(b + 112);
	m->new_layout = rk_get_le32(b + 116);
	m->new_chunk = rk_get_le32(b + 120);
	m->data_offset = rk_get_le64(b + 128);
	m->data_size = rk_get_le64(b + 136);
	m->super_offset = rk_get_le64(b + 144);
	m->recovery_offset = rk_get_le64(b + 152);
	m->dev_number = rk_get_le32(b + 160);
	memcpy(m->device_uuid, b + 168, 16);
	m->utime = rk_get_le64(b + 192) & 0xffffffffffull;
	m->events = rk_get_le64(b + 200);
	m->resync_offset = rk_get_le64(b + 208);
	m->sb_csum = rk_get_le32(b + 216);
	m->max_dev = rk_get_le32(b + 220);
	if (m->max_dev > RK_MD1_MAX_DEV || 256 + (size_t)m->max_dev * 2 > len)
		return rk_fail(RK_E_CORRUPT, "md 1.x superblock at %" PRIu64 ": max_dev %u does not fit %zu bytes",
		               at, m->max_dev, len);
	/* mdadm's calc_sb_1_csum: 32-bit words over header + roles with the
	 * checksum field zero, a trailing 16-bit half word, carry folded once. */
	size_t size = 256 + (size_t)m->max_dev * 2;
	uint64_t sum = 0;
	size_t i = 0;
	for (; i + 4 <= size; i += 4)
		sum += i == 216 ? 0 : rk_get_le32(b + i);
	if (size - i == 2)
		sum += rk_get_le16(b + i);
	m->csum_calc = (uint32_t)((sum & 0xffffffffu) + (sum >> 32));
	m->csum_ok = m->csum_calc == m->sb_csum;
	for (uint32_t k = 0; k < m->max_dev; k++)
		m->dev_roles[k] = rk_get_le16(b + 256 + (size_t)k * 2);
	return RK_OK;
}

rk_err rk_md1_read(rk_dev *d, struct rk_md1 *m)
{
	uint64_t size = rk_dev_size(d);
	uint8_t *buf = malloc(4096);
	if (!buf)
		return rk_fail(RK_E_NOMEM, "out of memory");
	/* 1.2 at 4 KiB, 1.1 at 0, 1.0 at (sectors - 16) & ~7 sectors. */
	uint64_t end = size >= 8192 ? (((size >> 9) - 16) & ~(uint64_t)7) << 9 : 0;
	const struct { unsigned minor; uint64_t at; int ok; } where[3] = {
		{ 2, 4096, size >= 8192 }, { 1, 0, size >= 4096 }, { 0, end, size >= 8192 },
	};
	rk_err e = rk_fail(RK_E_NOSB, "%s: no md 1.x superblock", rk_dev_path(d));
	for (int k = 0; k < 3; k++) {
		if (!where[k].ok)
			continue;
		size_t len = size - where[k].at < 4096 ? (size_t)(size - where[k].at) : 4096;
		if (len < 256 || rk_dev_pread(d, buf, len, where[k].at) != RK_OK)
			continue;
		if (rk_get_le32(buf) != RK_MD_MAGIC || rk_get_le32(buf + 4) != 1)
			continue;
		e = rk_md1_decode(m, buf, len, where[k].at);
		if (e == RK_OK) {
			m->minor = where[k].minor;
			break;
		}
	}
	free(buf);
	return e;
}

static const char *md_level_name(int32_t level, char *buf, size_t len)
{
	switch (level) {
	case -1: return "linear";
	case -4: return "multipath";
	case -5: return "faulty";
	default: snprintf(buf, len, "raid%d", level); return buf;
	}
}

static const char *md1_role_words(const struct rk_md1 *m, char *buf, size_t len)
{
	if (m->dev_number >= m->max_dev)
		snprintf(buf, len, "unknown (dev_number %u past max_dev %u)", m->dev_number, m->max_dev);
	else {
		uint16_t r = m->dev_roles[m->dev_number];
		if (r == RK_MD_ROLE_SPARE)
			snprintf(buf, len, "spare");
		else if (r == RK_MD_ROLE_FAULTY)
			snprintf(buf, len, "faulty");
		else if (r == RK_MD_ROLE_JOURNAL)
			snprintf(buf, len, "journal");
		else
			snprintf(buf, len, "Active device %u", r);
	}
	return buf;
}

/* mdadm's "Array State": A for a role some device holds, '.' missing. */
static void md1_array_state(const struct rk_md1 *m, char *buf, size_t len)
{
	size_t o = 0;
	for (uint32_t r = 0; r < m->raid_disks && o + 1 < len; r++) {
		char c = '.';
		for (uint32_t k = 0; k < m->max_dev; k++)
			if (m->dev_roles[k] == r)
				c = 'A';
		buf[o++] = c;
	}
	buf[o] = 0;
}

static void md_uuid_colons(const uint8_t u[16], char *buf)
{
	/* mdadm's form: four 32-bit groups separated by colons. */
	for (int i = 0, o = 0; i < 16; i++) {
		o += sprintf(buf + o, "%02x", u[i]);
		if (i % 4 == 3 && i < 15)
			buf[o++] = ':';
	}
}

static void md1_print_text(FILE *f, const void *obj, const char *ind)
{
	const struct rk_md1 *m = obj;
	char u[40], lv[24], t[40], rs[2048], lay[48], role[64];
	ind = ind ? ind : "";
	fprintf(f, "%smd 1.%u superblock at %" PRIu64 " (checksum %08x, %s)\n", ind, m->minor, m->at,
	        m->sb_csum, m->csum_ok ? "correct" : "WRONG");
	md_uuid_colons(m->set_uuid, u);
	fprintf(f, "%s    array UUID    : %s\n", ind, u);
	rk_esc_fprintf(f, "%s    name          : %s\n", ind, m->set_name);
	fprintf(f, "%s    feature map   : 0x%x\n", ind, m->feature_map);
	fprintf(f, "%s    raid level    : %s\n", ind, md_level_name(m->level, lv, sizeof lv));
	fprintf(f, "%s    raid devices  : %u\n", ind, m->raid_disks);
	const char *ln = rk_layout_name(m->level, m->layout, lay, sizeof lay);
	fprintf(f, "%s    layout        : %s (%u)\n", ind, ln && *ln ? ln : "-", m->layout);
	fprintf(f, "%s    chunk         : %" PRIu64 " bytes\n", ind, (uint64_t)m->chunksize * 512);
	fprintf(f, "%s    events        : %" PRIu64 "\n", ind, m->events);
	fprintf(f, "%s    data offset   : %" PRIu64 " sectors\n", ind, m->data_offset);
	fprintf(f, "%s    data size     : %" PRIu64 " sectors\n", ind, m->data_size);
	fprintf(f, "%s    used size     : %" PRIu64 " sectors\n", ind, m->size);
	fprintf(f, "%s    super offset  : %" PRIu64 " sectors\n", ind, m->super_offset);
	md_uuid_colons(m->device_uuid, u);
	fprintf(f, "%s    device UUID   : %s\n", ind, u);
	fprintf(f, "%s    device role   : %s\n", ind, md1_role_words(m, role, sizeof role));
	md1_array_state(m, rs, sizeof rs);
	fprintf(f, "%s    array state   : %s\n", ind, rs);
	fprintf(f, "%s    state         : %s\n", ind,
	        m->resync_offset == UINT64_MAX ? "clean" : "active (resync needed)");
	fprintf(f, "%s    created       : %s\n", ind, rk_print_time(m->ctime, t, sizeof t));
	fprintf(f, "%s    updated       : %s\n", ind, rk_print_time(m->utime, t, sizeof t));
}

/* Opens an md superblock's JSON object with the keys both versions have. */
static void md_json_head(rk_json *j, const char *version, uint64_t at, int csum_ok, uint64_t csum,
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

static void md1_print_json(rk_json *j, const void *obj)
{
	const struct rk_md1 *m = obj;
	char buf[2048], lv[24];
	snprintf(buf, sizeof buf, "1.%u", m->minor);
	md_json_head(j, buf, m->at, m->csum_ok, m->sb_csum, m->set_uuid);
	rk_json_kstr(j, "name", m->set_name);
	rk_json_ku64(j, "feature_map", m->feature_map);
	rk_json_kstr(j, "level", md_level_name(m->level, lv, sizeof lv));
	rk_json_ki64(j, "level_number", m->level);
	rk_json_ku64(j, "layout", m->layout);
	rk_json_ku64(j, "chunk", (uint64_t)m->chunksize * 512);
	rk_json_ku64(j, "raid_disks", m->raid_disks);
	rk_json_ku64(j, "events", m->events);
	rk_json_ku64(j, "data_offset", m->data_offset * 512);
	rk_json_ku64(j, "data_size", m->data_size * 512);
	rk_json_ku64(j, "dev_number", m->dev_number);
	rk_json_key(j, "device_uuid");
	rk_json_uuid(j, m->device_uuid);
	rk_json_key(j, "role");
	if (m->dev_number < m->max_dev && m->dev_roles[m->dev_number] < RK_MD_ROLE_JOURNAL)
		rk_json_u64(j, m->dev_roles[m->dev_number]);
	else
		rk_json_null(j);
	rk_json_kstr(j, "device_role", md1_role_words(m, buf, sizeof buf));
	md1_array_state(m, buf, sizeof buf);
	rk_json_kstr(j, "array_state", buf);
	rk_json_kstr(j, "ctime", rk_print_time(m->ctime, lv, sizeof lv));
	rk_json_kstr(j, "utime", rk_print_time(m->utime, lv, sizeof lv));
	rk_json_obj_end(j);
}

/* ---------------- md 0.90 ---------------- */

rk_err rk_md090_decode(struct rk_md090 *m, const uint8_t *b, size_t len, uint64_t at)
{
	if (len < 4096)
		return rk_fail(RK_E_SHORT, "md 0.90 superblock at %" PRIu64 ": only %zu bytes", at, len);
	if (rk_get_le32(b) != RK_MD_MAGIC)
		return rk_fail(RK_E_NOSB, "no md 0.90 superblock at %" PRIu64, at);
#define W(i) rk_get_le32(b + 4 * (i))
	if (W(1) != 0)
		return rk_fail(RK_E_NOSB, "md superblock at %" PRIu64 ": major version %u, not 0", at, W(1));
	memset(m, 0, sizeof *m);
	m->at = at;
	m->major = W(1);
	m->minor = W(2);
	m->patch = W(3);
	/* The UUID as mdadm prints it: the four words, each most significant byte first. */
	const unsigned uw[4] = { 5, 13, 14, 15 };
	for (int k = 0; k < 4; k++) {
		uint32_t v = W(uw[k]);
		m->uuid[4 * k] = (uint8_t)(v >> 24);
		m->uuid[4 * k + 1] = (uint8_t)(v >> 16);
		m->uuid[4 * k + 2] = (uint8_t)(v >> 8);
		m->uuid[4 * k + 3] = (uint8_t)v;
	}
	m->ctime = W(6);
	m->level = (int32_t)W(7);
	m->size_kib = W(8);
	m->nr_disks = W(9);
	m->raid_disks = W(10);
	m->md_minor = W(11);
	m->utime = W(32);
	m->state = W(33);
	m->active = W(34);
	m->working = W(35);
	m->failed = W(36);
	m->spare = W(37);
	m->sb_csum = W(38);
	m->events = (uint64_t)W(40) << 32 | W(39);
	m->layout = W(64);
	m->chunk_size = W(65);
	for (int k = 0; k < 28; k++) {
		unsigned base = 128 + 32 * (unsigned)k;
		struct rk_md090_disk *dd = k < 27 ? &m->disks[k] : &m->this_disk;
		dd->number = W(base);
		dd->major = W(base + 1);
		dd->minor = W(base + 2);
		dd->raid_disk = W(base + 3);
		dd->state = W(base + 4);
	}
	uint64_t sum = 0;
	for (unsigned i = 0; i < 1024; i++)
		sum += i == 38 ? 0 : W(i);
#undef W
	m->csum_calc = (uint32_t)((sum & 0xffffffffu) + (sum >> 32));
	m->csum_ok = m->csum_calc == m->sb_csum;
	return RK_OK;
}

rk_err rk_md090_read(rk_dev *d, struct rk_md090 *m)
{
	uint64_t size = rk_dev_size(d);
	if (size < 131072)
		return rk_fail(RK_E_NOSB, "%s: too small for md 0.90", rk_dev_path(d));
	uint64_t at = (size & ~(uint64_t)65535) - 65536;
	uint8_t *buf = malloc(4096);
	if (!buf)
		return rk_fail(RK_E_NOMEM, "out of memory");
	rk_err e = rk_dev_pread(d, buf, 4096, at);
	if (e == RK_OK)
		e = rk_md090_decode(m, buf, 4096, at);
	free(buf);
	return e;
}

static void md090_disk_state(uint32_t s, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s%s", s & 1 ? "faulty " : "", s & 2 ? "active " : "",
	         s & 4 ? "sync " : "", s & 8 ? "removed " : "");
	size_t n = strlen(buf);
	if (n)
		buf[n - 1] = 0;
	else
		snprintf(buf, len, "spare");
}

static void md090_print_text(FILE *f, const void *obj, const char *ind)
{
	const struct rk_md090 *m = obj;
	char u[40], lv[24], t[40], st[48];
	ind = ind ? ind : "";
	fprintf(f, "%smd %u.%02u.%02u superblock at %" PRIu64 " (checksum %08x, %s)\n", ind, m->major,
	        m->minor, m->patch, m->at, m->sb_csum, m->csum_ok ? "correct" : "WRONG");
	md_uuid_colons(m->uuid, u);
	fprintf(f, "%s    array UUID    : %s\n", ind, u);
	fprintf(f, "%s    raid level    : %s\n", ind, md_level_name(m->level, lv, sizeof lv));
	fprintf(f, "%s    raid devices  : %u (total %u, active %u, working %u, failed %u, spare %u)\n", ind,
	        m->raid_disks, m->nr_disks, m->active, m->working, m->failed, m->spare);
	fprintf(f, "%s    used size     : %u KiB\n", ind, m->size_kib);
	fprintf(f, "%s    layout        : %u\n", ind, m->layout);
	fprintf(f, "%s    chunk         : %u bytes\n", ind, m->chunk_size);
	fprintf(f, "%s    events        : %" PRIu64 "\n", ind, m->events);
	fprintf(f, "%s    state         : %s\n", ind, m->state & 1 ? "clean" : "active");
	fprintf(f, "%s    created       : %s\n", ind, rk_print_time(m->ctime, t, sizeof t));
	fprintf(f, "%s    updated       : %s\n", ind, rk_print_time(m->utime, t, sizeof t));
	md090_disk_state(m->this_disk.state, st, sizeof st);
	fprintf(f, "%s    this device   : number %u, raid device %u, %s\n", ind, m->this_disk.number,
	        m->this_disk.raid_disk, st);
	for (uint32_t k = 0; k < 27 && k < m->nr_disks; k++) {
		md090_disk_state(m->disks[k].state, st, sizeof st);
		fprintf(f, "%s    device %2u     : raid device %u, %s\n", ind, m->disks[k].number,
		        m->disks[k].raid_disk, st);
	}
}

static void md090_print_json(rk_json *j, const void *obj)
{
	const struct rk_md090 *m = obj;
	char buf[48];
	snprintf(buf, sizeof buf, "%u.%02u.%02u", m->major, m->minor, m->patch);
	md_json_head(j, buf, m->at, m->csum_ok, m->sb_csum, m->uuid);
	rk_json_kstr(j, "level", md_level_name(m->level, buf, sizeof buf));
	rk_json_ki64(j, "level_number", m->level);
	rk_json_ku64(j, "layout", m->layout);
	rk_json_ku64(j, "chunk", m->chunk_size);
	rk_json_ku64(j, "raid_disks", m->raid_disks);
	rk_json_ku64(j, "events", m->events);
	rk_json_ku64(j, "used_size", (uint64_t)m->size_kib * 1024);
	rk_json_key(j, "role");
	rk_json_u64(j, m->this_disk.raid_disk);
	md090_disk_state(m->this_disk.state, buf, sizeof buf);
	rk_json_kstr(j, "device_state", buf);
	rk_json_kstr(j, "ctime", rk_print_time(m->ctime, buf, sizeof buf));
	rk_json_kstr(j, "utime", rk_print_time(m->utime, buf, sizeof buf));
	rk_json_obj_end(j);
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
static rk_err read_new(rk_dev *d, size_t size, rk_err (*read)(rk_dev *d, void *obj), void **out)
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

static rk_err md1_read_obj(rk_dev *d, void *obj)
{
	return rk_md1_read(d, obj);
}

static rk_err md090_read_obj(rk_dev *d, void *obj)
{
	return rk_md090_read(d, obj);
}

static rk_err md1_decode_ent(rk_dev *d, const char *path, void **out)
{
	return read_new(d, sizeof(struct rk_md1), md1_read_obj, out);
}

static rk_err md090_decode_ent(rk_dev *d, const char *path, void **out)
{
	return read_new(d, sizeof(struct rk_md090), md090_read_obj, out);
}

/* An md member found: what md1 and md0.90 report alike. */
static void md_found(struct rk_probe_result *r, const uint8_t *uuid)
{
	r->found = 1;
	snprintf(r->type, sizeof r->type, "linux_raid_member");
	snprintf(r->usage, sizeof r->usage, "raid");
	uuid_unparse_lower(uuid, r->uuid);
}

/* Probes D through DECODE (a *_decode_ent); a member found is described by
 * DESCRIBE.  NOSB, and NOT_MINE (the format's "not one of ours"), mean
 * nothing found. */
static rk_err md_probe(rk_dev *d, const char *path, struct rk_probe_result *r,
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

static void md1_describe(const void *obj, struct rk_probe_result *r)
{
	const struct rk_md1 *m = obj;
	md_found(r, m->set_uuid);
	snprintf(r->label, sizeof r->label, "%s", m->set_name);
	snprintf(r->version, sizeof r->version, "1.%u", m->minor);
	snprintf(r->what, sizeof r->what, "an md 1.%u member (linux_raid_member) of array UUID %s", m->minor, r->uuid);
}

static void md090_describe(const void *obj, struct rk_probe_result *r)
{
	const struct rk_md090 *m = obj;
	md_found(r, m->uuid);
	snprintf(r->version, sizeof r->version, "%u.%02u.%u", m->major, m->minor, m->patch);
	snprintf(r->what, sizeof r->what, "an md %s member (linux_raid_member) of array UUID %s", r->version, r->uuid);
}

static rk_err md1_probe(rk_dev *d, const char *path, struct rk_probe_result *r)
{
	return md_probe(d, path, r, md1_decode_ent, md1_describe, RK_E_CORRUPT);
}

static rk_err md090_probe(rk_dev *d, const char *path, struct rk_probe_result *r)
{
	return md_probe(d, path, r, md090_decode_ent, md090_describe, RK_E_SHORT);
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
	rk_native_text, rk_native_json, rk_native_release,
};
static const struct rk_meta_fmt fmt_md1 = {
	"md1", "Linux md 1.0/1.1/1.2 superblock", md1_probe, md1_decode_ent,
	md1_print_text, md1_print_json, free,
};
static const struct rk_meta_fmt fmt_md090 = {
	"md0.90", "Linux md 0.90 superblock", md090_probe, md090_decode_ent,
	md090_print_text, md090_print_json, free,
};
static const struct rk_meta_fmt fmt_blkid = {
	"blkid", "signatures libblkid knows (DDF, IMSM, firmware RAID, file systems, partition tables)",
	blkid_probe_ent, blkid_decode_ent, blkid_text, blkid_json, free,
};

const struct rk_meta_fmt *const rk_meta_fmts[] = {
	&fmt_raidkit, &fmt_md1, &fmt_md090, &fmt_blkid, NULL,
};

const struct rk_meta_fmt *rk_meta_fmt_find(const char *name)
{
	for (int i = 0; rk_meta_fmts[i]; i++)
		if (name && strcmp(rk_meta_fmts[i]->name, name) == 0)
			return rk_meta_fmts[i];
	return NULL;
}
