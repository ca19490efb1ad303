/* fmt_md090.c: Linux md 0.90 superblocks: the decoder, printing as mdadm
 * --examine does, and the view discovery groups (rk_fmt.h). */
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

rk_err rk_md090_decode(struct rk_md090 *m, const uint8_t *b, size_t len, uint64_t at)
{
	if (len < 4096)
		return rk_fail(RK_E_SHORT, "md 0.90 superblock at %" PRIu64 ": only %zu bytes", at, len);
	/* the writer's byte order: the magic reads right in one of them */
	int be = rk_get_le32(b) != RK_MD_MAGIC;
	if (be && rk_get_be32(b) != RK_MD_MAGIC)
		return rk_fail(RK_E_NOSB, "no md 0.90 superblock at %" PRIu64, at);
#define W(i) (be ? rk_get_be32(b + 4 * (i)) : rk_get_le32(b + 4 * (i)))
	if (W(1) != 0)
		return rk_fail(RK_E_NOSB, "md superblock at %" PRIu64 ": major version %u, not 0", at, W(1));
	memset(m, 0, sizeof *m);
	m->at = at;
	m->big_endian = be;
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
	/* events_lo comes first on little-endian writers, events_hi on big */
	m->events = be ? (uint64_t)W(39) << 32 | W(40) : (uint64_t)W(40) << 32 | W(39);
	m->reshape_position = be ? (uint64_t)W(41) << 32 | W(42) : (uint64_t)W(42) << 32 | W(41);
	m->new_level = W(43);
	m->delta_disks = W(44);
	m->new_layout = W(45);
	m->new_chunk = W(46);
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
	rk_fmt_md_uuid_colons(m->uuid, u);
	fprintf(f, "%s    array UUID    : %s\n", ind, u);
	fprintf(f, "%s    raid level    : %s\n", ind, rk_fmt_md_level_name(m->level, lv, sizeof lv));
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
	rk_fmt_md_json_head(j, buf, m->at, m->csum_ok, m->sb_csum, m->uuid);
	rk_json_kstr(j, "level", rk_fmt_md_level_name(m->level, buf, sizeof buf));
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

static rk_err md090_read_obj(rk_dev *d, void *obj)
{
	return rk_md090_read(d, obj);
}

static rk_err md090_decode_ent(rk_dev *d, const char *path, void **out)
{
	return rk_fmt_read_new(d, sizeof(struct rk_md090), md090_read_obj, out);
}

static void md090_describe(const void *obj, struct rk_probe_result *r)
{
	const struct rk_md090 *m = obj;
	rk_fmt_md_found(r, m->uuid);
	snprintf(r->version, sizeof r->version, "%u.%02u.%u", m->major, m->minor, m->patch);
	snprintf(r->what, sizeof r->what, "an md %s member (linux_raid_member) of array UUID %s", r->version, r->uuid);
}

static rk_err md090_probe(rk_dev *d, const char *path, struct rk_probe_result *r)
{
	return rk_fmt_probe_via(d, path, r, md090_decode_ent, md090_describe, RK_E_SHORT);
}

/* ---------------- the view (rk_fmt.h "Views") ---------------- */

#define MD090_FAULTY  0x1u
#define MD090_ACTIVE  0x2u
#define MD090_SYNC    0x4u
#define MD090_REMOVED 0x8u

/* The role table from md's device table: each device numbered, with the
 * role (raid_disk) it serves while active and in sync; faulty devices go
 * past the roles, then spares. */
static rk_err md090_roles(const struct rk_md090 *m, struct rk_sb *v)
{
	uint32_t next = v->nroles;
	for (uint32_t r = 0; r < v->nroles; r++)
		v->roles[r].state = RK_ROLE_EMPTY;
	for (uint32_t k = 0; k < 27; k++) {
		const struct rk_md090_disk *d = &m->disks[k];
		uint32_t at, st = d->state;
		/* md numbers entry k as device k; past nr_disks only entries
		 * with a state (failed, removed) are used */
		if (d->number != k || (k >= m->nr_disks && !st))
			continue;
		if ((st & (MD090_ACTIVE | MD090_SYNC)) == (MD090_ACTIVE | MD090_SYNC) && !(st & MD090_FAULTY) &&
		    d->raid_disk < v->nroles) {
			at = d->raid_disk;
			if (v->roles[at].state != RK_ROLE_EMPTY)
				return rk_fail(RK_E_CORRUPT, "md 0.90: role %u held by two devices", at);
			v->roles[at].state = RK_ROLE_ACTIVE;
		} else if (st & MD090_FAULTY) {
			at = next++;
			v->roles[at].state = RK_ROLE_FAULTY;
		} else if (!(st & MD090_REMOVED)) {
			at = next++;
			v->roles[at].state = RK_ROLE_SPARE;
		} else
			continue;
		rk_view_slot_uuid(v->roles[at].member_uuid, d->number);
		if (d->number == m->this_disk.number)
			v->this_role = at;
	}
	v->nentries = next;
	return RK_OK;
}

static rk_err md090_views(const void *obj, uint64_t dev_size, struct rk_sb **out, uint32_t *n)
{
	const struct rk_md090 *m = obj;
	*out = NULL;
	*n = 0;
	if (!m->csum_ok)
		return rk_fail(RK_E_BADCRC, "md 0.90 superblock at %" PRIu64 ": checksum %08x, computed %08x", m->at,
		               m->sb_csum, m->csum_calc);
	if (m->minor == 91)
		return rk_fail(RK_E_NOTSUP, "md 0.91: an md 0.90 array in the middle of a reshape is not read yet");
	int32_t lv = m->level;
	if (!(lv == -1 || lv == 0 || lv == 1 || lv == 4 || lv == 5 || lv == 6 || lv == 10))
		return rk_fail(RK_E_NOTSUP, "md level %d: not served", lv);
	if (m->raid_disks < 1 || m->raid_disks > 27)
		return rk_fail(RK_E_CORRUPT, "md 0.90: %u raid devices (1 to 27)", m->raid_disks);
	struct rk_sb *v = rk_view_add(out, n);
	if (!v)
		return rk_fail(RK_E_NOMEM, "out of memory");
	rk_view_init(v, RK_ORIGIN_MD090, m->big_endian ? "md 0.90 (big-endian)" : "md 0.90");
	memcpy(v->array_uuid, m->uuid, 16);
	rk_view_slot_uuid(v->member_uuid, m->this_disk.number);
	v->ctime = m->ctime;
	v->utime = m->utime;
	v->level = lv;
	/* md ignores the layout of RAID-0 (one zone), RAID-1 and linear;
	 * the kernel writes -1 there in 0.90 RAID-0 */
	v->layout = lv == 0 || lv == 1 || lv == -1 ? 0 : m->layout;
	v->chunk = lv == 1 || lv == -1 ? 0 : m->chunk_size;
	v->nroles = m->raid_disks;
	v->events = m->events;
	v->array_state = (m->state & 1) ? RK_ARRAY_CLEAN : RK_ARRAY_ACTIVE;
	v->sb_offset = m->at;
	v->dev_size = dev_size;
	/* the data area is everything below the superblock; the redundant
	 * levels use size KiB of it, RAID-0 whole chunks of it */
	uint64_t used = (uint64_t)m->size_kib * 1024;
	if (lv == 0 || lv == -1)
		used = v->chunk && lv == 0 ? m->at / v->chunk * v->chunk : m->at;
	else if (used > m->at)
		return rk_fail(RK_E_CORRUPT, "md 0.90: used size %u KiB past the superblock at %" PRIu64, m->size_kib, m->at);
	v->data_size = used;
	rk_err e = md090_roles(m, v);
	if (e)
		return e;
	return rk_view_volume(v, &v->volume_size);
}

const struct rk_meta_fmt rk_fmt_md090 = {
	"md0.90", "Linux md 0.90 superblock", md090_probe, md090_decode_ent,
	md090_print_text, md090_print_json, free, md090_views,
};
