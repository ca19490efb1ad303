/* fmt_md1.c: Linux md 1.0 / 1.1 / 1.2 superblocks: the decoder, printing
 * as mdadm --examine does, and the view discovery groups (rk_fmt.h). */
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

uint32_t rk_md1_csum(const uint8_t *b, size_t size)
{
	/* mdadm's calc_sb_1_csum: 32-bit words over header + roles with the
	 * checksum field zero, a trailing 16-bit half word, carry folded once. */
	uint64_t sum = 0;
	size_t i = 0;
	for (; i + 4 <= size; i += 4)
		sum += i == 216 ? 0 : rk_get_le32(b + i);
	if (size - i == 2)
		sum += rk_get_le16(b + i);
	return (uint32_t)((sum & 0xffffffffu) + (sum >> 32));
}

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
	m->new_offset = (int32_t)rk_get_le32(b + 124);
	m->bitmap_offset = (int32_t)rk_get_le32(b + 96);
	m->bblog_shift = b[185];
	m->bblog_size = rk_get_le16(b + 186);
	m->bblog_offset = (int32_t)rk_get_le32(b + 188);
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
	m->csum_calc = rk_md1_csum(b, 256 + (size_t)m->max_dev * 2);
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

/* The reshape's new data offset in sectors: data_offset plus the signed
 * new_offset (NEW_OFFSET feature), modulo 2^64 for hostile fields. */
static uint64_t md1_new_offset(const struct rk_md1 *m)
{
	uint64_t d = (m->feature_map & RK_MD_FEAT_NEW_OFFSET) ? (uint64_t)(int64_t)m->new_offset : 0;
	return m->data_offset + d;
}

/* What md 1.x keeps beside the data, in words (bitmap, bad-block log,
 * partial rebuild, reshape): printed by both printers. */
static void md1_extras_text(FILE *f, const struct rk_md1 *m, const char *ind)
{
	if (m->feature_map & RK_MD_FEAT_BITMAP)
		fprintf(f, "%s    bitmap        : internal, %d sectors from the superblock\n", ind, m->bitmap_offset);
	if (m->bblog_size)
		fprintf(f, "%s    bad block log : %u entries available at offset %d sectors\n", ind,
		        (unsigned)m->bblog_size * 512 / 8, m->bblog_offset);
	if (m->feature_map & RK_MD_FEAT_RECOVERY_OFFSET)
		fprintf(f, "%s    recovery      : rebuilt up to sector %" PRIu64 " (its data beyond is incomplete)\n",
		        ind, m->recovery_offset);
	if (m->feature_map & RK_MD_FEAT_PPL)
		fprintf(f, "%s    ppl           : partial parity log (not read)\n", ind);
	if (m->feature_map & RK_MD_FEAT_RESHAPE_ACTIVE) {
		fprintf(f, "%s    reshape pos   : %" PRIu64 " sectors%s\n", ind, m->reshape_position,
		        m->feature_map & RK_MD_FEAT_RESHAPE_BACKWARDS ? " (backwards)" : "");
		fprintf(f, "%s    delta devices : %d (%u->%u)\n", ind, (int32_t)m->delta_disks,
		        m->raid_disks - m->delta_disks, m->raid_disks);
		fprintf(f, "%s    new level     : %d, layout %u, chunk %" PRIu64 " bytes\n", ind, (int32_t)m->new_level,
		        m->new_layout, (uint64_t)m->new_chunk * 512);
		if (m->feature_map & RK_MD_FEAT_NEW_OFFSET)
			fprintf(f, "%s    new offset    : %" PRIu64 " sectors\n", ind, md1_new_offset(m));
	}
}

static void md1_extras_json(rk_json *j, const struct rk_md1 *m)
{
	rk_json_ku64(j, "used_size", m->size * 512);
	rk_json_ku64(j, "super_offset", m->super_offset * 512);
	rk_json_kbool(j, "clean", m->resync_offset == UINT64_MAX);
	rk_json_kbool(j, "bitmap", (m->feature_map & RK_MD_FEAT_BITMAP) != 0);
	rk_json_ku64(j, "bad_block_log_entries", (uint64_t)m->bblog_size * 512 / 8);
	rk_json_key(j, "recovery_offset");
	if (m->feature_map & RK_MD_FEAT_RECOVERY_OFFSET)
		rk_json_u64(j, m->recovery_offset * 512);
	else
		rk_json_null(j);
	rk_json_key(j, "reshape");
	if (!(m->feature_map & RK_MD_FEAT_RESHAPE_ACTIVE)) {
		rk_json_null(j);
		return;
	}
	rk_json_obj_begin(j);
	rk_json_ku64(j, "position", m->reshape_position * 512);
	rk_json_kbool(j, "backwards", (m->feature_map & RK_MD_FEAT_RESHAPE_BACKWARDS) != 0);
	rk_json_ki64(j, "delta_disks", (int32_t)m->delta_disks);
	rk_json_ki64(j, "new_level", (int32_t)m->new_level);
	rk_json_ku64(j, "new_layout", m->new_layout);
	rk_json_ku64(j, "new_chunk", (uint64_t)m->new_chunk * 512);
	uint64_t no = md1_new_offset(m);
	rk_json_key(j, "new_offset");
	if (no <= UINT64_MAX / 512)
		rk_json_u64(j, no * 512);
	else
		rk_json_null(j);   /* hostile fields: no byte offset */
	rk_json_obj_end(j);
}

static void md1_print_text(FILE *f, const void *obj, const char *ind)
{
	const struct rk_md1 *m = obj;
	char u[40], lv[24], t[40], rs[2048], lay[48], role[64];
	ind = ind ? ind : "";
	fprintf(f, "%smd 1.%u superblock at %" PRIu64 " (checksum %08x, %s)\n", ind, m->minor, m->at,
	        m->sb_csum, m->csum_ok ? "correct" : "WRONG");
	rk_fmt_md_uuid_colons(m->set_uuid, u);
	fprintf(f, "%s    array UUID    : %s\n", ind, u);
	rk_esc_fprintf(f, "%s    name          : %s\n", ind, m->set_name);
	fprintf(f, "%s    feature map   : 0x%x\n", ind, m->feature_map);
	fprintf(f, "%s    raid level    : %s\n", ind, rk_fmt_md_level_name(m->level, lv, sizeof lv));
	fprintf(f, "%s    raid devices  : %u\n", ind, m->raid_disks);
	const char *ln = rk_layout_name(m->level, m->layout, lay, sizeof lay);
	fprintf(f, "%s    layout        : %s (%u)\n", ind, ln && *ln ? ln : "-", m->layout);
	fprintf(f, "%s    chunk         : %" PRIu64 " bytes\n", ind, (uint64_t)m->chunksize * 512);
	fprintf(f, "%s    events        : %" PRIu64 "\n", ind, m->events);
	fprintf(f, "%s    data offset   : %" PRIu64 " sectors\n", ind, m->data_offset);
	fprintf(f, "%s    data size     : %" PRIu64 " sectors\n", ind, m->data_size);
	fprintf(f, "%s    used size     : %" PRIu64 " sectors\n", ind, m->size);
	fprintf(f, "%s    super offset  : %" PRIu64 " sectors\n", ind, m->super_offset);
	rk_fmt_md_uuid_colons(m->device_uuid, u);
	fprintf(f, "%s    device UUID   : %s\n", ind, u);
	fprintf(f, "%s    device role   : %s\n", ind, md1_role_words(m, role, sizeof role));
	md1_array_state(m, rs, sizeof rs);
	fprintf(f, "%s    array state   : %s\n", ind, rs);
	fprintf(f, "%s    state         : %s\n", ind,
	        m->resync_offset == UINT64_MAX ? "clean" : "active (resync needed)");
	fprintf(f, "%s    created       : %s\n", ind, rk_print_time(m->ctime, t, sizeof t));
	fprintf(f, "%s    updated       : %s\n", ind, rk_print_time(m->utime, t, sizeof t));
	md1_extras_text(f, m, ind);
}

static void md1_print_json(rk_json *j, const void *obj)
{
	const struct rk_md1 *m = obj;
	char buf[2048], lv[24];
	snprintf(buf, sizeof buf, "1.%u", m->minor);
	rk_fmt_md_json_head(j, buf, m->at, m->csum_ok, m->sb_csum, m->set_uuid);
	rk_json_kstr(j, "name", m->set_name);
	rk_json_ku64(j, "feature_map", m->feature_map);
	rk_json_kstr(j, "level", rk_fmt_md_level_name(m->level, lv, sizeof lv));
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
	md1_extras_json(j, m);
	rk_json_obj_end(j);
}

static rk_err md1_read_obj(rk_dev *d, void *obj)
{
	return rk_md1_read(d, obj);
}

static rk_err md1_decode_ent(rk_dev *d, const char *path, void **out)
{
	return rk_fmt_read_new(d, sizeof(struct rk_md1), md1_read_obj, out);
}

static void md1_describe(const void *obj, struct rk_probe_result *r)
{
	const struct rk_md1 *m = obj;
	rk_fmt_md_found(r, m->set_uuid);
	snprintf(r->label, sizeof r->label, "%s", m->set_name);
	snprintf(r->version, sizeof r->version, "1.%u", m->minor);
	snprintf(r->what, sizeof r->what, "an md 1.%u member (linux_raid_member) of array UUID %s", m->minor, r->uuid);
}

static rk_err md1_probe(rk_dev *d, const char *path, struct rk_probe_result *r)
{
	return rk_fmt_probe_via(d, path, r, md1_decode_ent, md1_describe, RK_E_CORRUPT);
}

/* ---------------- the view (rk_fmt.h "Views") ---------------- */

/* Sectors to bytes, refusing what does not fit 64 bits. */
static int md_bytes(uint64_t sectors, uint64_t *out)
{
	if (sectors > UINT64_MAX / 512)
		return -1;
	*out = sectors * 512;
	return 0;
}

/* Levels raidkit's engine serves. */
static int md_level_served(int32_t level)
{
	return level == -1 || level == 0 || level == 1 || level == 4 || level == 5 || level == 6 || level == 10;
}

/* Bytes per member the array uses: md's size field for the redundant
 * levels; RAID-0 and linear record 0 there and use the data area, whole
 * chunks of it for RAID-0. */
static rk_err md1_used_size(const struct rk_md1 *m, uint64_t chunk, uint64_t *used)
{
	uint64_t size, avail;
	if (md_bytes(m->size, &size) || md_bytes(m->data_size, &avail))
		return rk_fail(RK_E_CORRUPT, "md 1.x: size %" PRIu64 " or data size %" PRIu64 " sectors overflows",
		               m->size, m->data_size);
	if (m->level == 0 || m->level == -1) {
		*used = chunk && m->level == 0 ? avail / chunk * chunk : avail;
		return RK_OK;
	}
	if (size > avail)
		return rk_fail(RK_E_CORRUPT, "md 1.x: used size %" PRIu64 " sectors exceeds the data area's %" PRIu64,
		               m->size, m->data_size);
	*used = size;
	return RK_OK;
}

/* The role table: md lists device slots with their roles; a view lists
 * roles with the member (slot) serving each.  Faulty slots go past the
 * roles (their role is no longer recorded), then spares. */
static rk_err md1_roles(const struct rk_md1 *m, struct rk_sb *v, uint32_t span)
{
	uint32_t next = span;
	for (uint32_t r = 0; r < span; r++)
		v->roles[r].state = RK_ROLE_EMPTY;
	for (uint32_t k = 0; k < m->max_dev; k++) {
		uint16_t role = m->dev_roles[k];
		uint32_t at;
		if (role < span) {
			if (v->roles[role].state != RK_ROLE_EMPTY)
				return rk_fail(RK_E_CORRUPT, "md 1.x: role %u held by two device slots", role);
			at = role;
			v->roles[at].state = RK_ROLE_ACTIVE;
		} else if (role == RK_MD_ROLE_SPARE || role == RK_MD_ROLE_FAULTY) {
			/* slots past the devices md counts are unused (spare is
			 * also md's word for "never used") unless it is this one */
			if (role == RK_MD_ROLE_SPARE && k != m->dev_number)
				continue;
			if (next >= RK_SB_MAX_ROLES)
				continue;
			at = next++;
			v->roles[at].state = role == RK_MD_ROLE_SPARE ? RK_ROLE_SPARE : RK_ROLE_FAULTY;
		} else
			continue;   /* journal devices, unknown codes: not data members */
		rk_view_slot_uuid(v->roles[at].member_uuid, k);
		if (k == m->dev_number)
			v->this_role = at;
	}
	v->nentries = next;
	return RK_OK;
}

/* A member rebuilt part way (recovery_offset) serves its role only below
 * the checkpoint: its own entry says so. */
static void md1_own_progress(const struct rk_md1 *m, struct rk_sb *v, uint32_t span)
{
	uint64_t done;
	if (!(m->feature_map & RK_MD_FEAT_RECOVERY_OFFSET) || v->this_role >= span || md_bytes(m->recovery_offset, &done))
		return;
	v->roles[v->this_role].state = RK_ROLE_REBUILDING;
	v->roles[v->this_role].checkpoint = done;
}

/* The reshape in progress: md keeps the new member count in raid_disks
 * and the old level, layout and chunk; reshape_position is the volume
 * sector the reshape reached (below it: the new geometry). */
static rk_err md1_reshape(const struct rk_md1 *m, struct rk_sb *v, uint32_t nroles_new)
{
	if (m->feature_map & RK_MD_FEAT_RESHAPE_BACKWARDS)
		return rk_fail(RK_E_NOTSUP, "md 1.x: a reshape running backwards (shrinking) is not read yet");
	struct rk_geom_desc *n = &v->reshape_new;
	n->level = (int32_t)m->new_level;
	n->layout = m->new_layout;
	n->nroles = nroles_new;
	if (md_bytes(m->new_chunk, &n->chunk) || md_bytes(m->reshape_position, &v->reshape_pos))
		return rk_fail(RK_E_CORRUPT, "md 1.x: reshape fields overflow");
	if (n->level == 1 || n->level == -1)
		n->chunk = 0;
	if (m->data_offset > (uint64_t)INT64_MAX / 512)
		return rk_fail(RK_E_CORRUPT, "md 1.x: data offset %" PRIu64 " sectors", m->data_offset);
	int64_t off = (int64_t)m->data_offset + ((m->feature_map & RK_MD_FEAT_NEW_OFFSET) ? m->new_offset : 0);
	if (off < 0 || (uint64_t)off > UINT64_MAX / 512)
		return rk_fail(RK_E_CORRUPT, "md 1.x: new data offset %" PRId64 " sectors", off);
	n->data_offset = (uint64_t)off * 512;
	n->data_size = v->data_size;
	if (n->chunk && n->level != 1)
		n->data_size = n->data_size / n->chunk * n->chunk;
	v->feat_incompat |= RK_FEAT_INCOMPAT_RESHAPE;
	return RK_OK;
}

static rk_err md1_views(const void *obj, uint64_t dev_size, struct rk_sb **out, uint32_t *n)
{
	const struct rk_md1 *m = obj;
	*out = NULL;
	*n = 0;
	if (!m->csum_ok)
		return rk_fail(RK_E_BADCRC, "md 1.%u superblock at %" PRIu64 ": checksum %08x, computed %08x",
		               m->minor, m->at, m->sb_csum, m->csum_calc);
	if (!md_level_served(m->level))
		return rk_fail(RK_E_NOTSUP, "md level %d: not served", m->level);
	if (m->feature_map & (RK_MD_FEAT_CLUSTERED | RK_MD_FEAT_JOURNAL))
		return rk_fail(RK_E_NOTSUP, "md 1.x feature map 0x%x: %s arrays are not read", m->feature_map,
		               m->feature_map & RK_MD_FEAT_CLUSTERED ? "clustered" : "journalled (write journal device)");
	int reshaping = (m->feature_map & RK_MD_FEAT_RESHAPE_ACTIVE) != 0;
	int64_t old = reshaping ? (int64_t)m->raid_disks - (int32_t)m->delta_disks : (int64_t)m->raid_disks;
	if (old < 1 || old > RK_SB_MAX_ROLES || m->raid_disks < 1 || m->raid_disks > RK_SB_MAX_ROLES)
		return rk_fail(RK_E_CORRUPT, "md 1.x: %u raid devices (delta %d)", m->raid_disks, (int32_t)m->delta_disks);
	struct rk_sb *v = rk_view_add(out, n);
	if (!v)
		return rk_fail(RK_E_NOMEM, "out of memory");
	char on[24];
	snprintf(on, sizeof on, "md 1.%u", m->minor);
	rk_view_init(v, RK_ORIGIN_MD1, on);
	memcpy(v->array_uuid, m->set_uuid, 16);
	rk_view_slot_uuid(v->member_uuid, m->dev_number);
	memcpy(v->name, m->set_name, 32);
	v->name[32] = 0;
	v->ctime = m->ctime;
	v->utime = m->utime;
	v->level = m->level;
	/* md ignores the layout of RAID-1 and linear, and of RAID-0 over
	 * members of one size (one zone) */
	v->layout = m->level == 0 || m->level == 1 || m->level == -1 ? 0 : m->layout;
	v->nroles = (uint32_t)old;
	v->events = m->events;
	v->array_state = m->resync_offset == UINT64_MAX ? RK_ARRAY_CLEAN : RK_ARRAY_ACTIVE;
	v->sb_offset = m->at;
	v->dev_size = dev_size;
	rk_err e;
	if (md_bytes(m->chunksize, &v->chunk) || md_bytes(m->data_offset, &v->data_offset))
		return rk_fail(RK_E_CORRUPT, "md 1.x: chunk or data offset overflows");
	if (m->level == 1 || m->level == -1)
		v->chunk = 0;
	if ((e = md1_used_size(m, v->chunk, &v->data_size)))
		return e;
	uint32_t span = m->raid_disks > v->nroles ? m->raid_disks : v->nroles;
	if (m->dev_number >= m->max_dev)
		return rk_fail(RK_E_CORRUPT, "md 1.x: dev_number %u past max_dev %u", m->dev_number, m->max_dev);
	if ((e = md1_roles(m, v, span)))
		return e;
	md1_own_progress(m, v, span);
	if (reshaping && (e = md1_reshape(m, v, m->raid_disks)))
		return e;
	return rk_view_volume(v, &v->volume_size);
}

const struct rk_meta_fmt rk_fmt_md1 = {
	"md1", "Linux md 1.0/1.1/1.2 superblock", md1_probe, md1_decode_ent,
	md1_print_text, md1_print_json, free, md1_views,
};
