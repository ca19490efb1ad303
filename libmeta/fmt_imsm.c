/* fmt_imsm.c: Intel IMSM (Matrix Storage / RST / VROC) metadata: the MPB
 * decoder (bounds-checked, little-endian, checksum verified), which disk a
 * member is, printing as mdadm --examine does, and one view per volume the
 * member serves (rk_fmt.h "Views").  spec/imsm.md has the layout. */
#include <ctype.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <uuid/uuid.h>

#include "fmt_int.h"
#include "rk_fmt_imsm.h"
#include "rk_geom.h"
#include "rk_le.h"
#include "rk_print.h"
#include "rk_util.h"

/* ---------------- SHA-1 (mdadm's UUIDs of IMSM sets and volumes) ---------------- */

struct sha1 { uint32_t h[5]; uint64_t n; uint8_t buf[64]; };

/* Rotates X left by K bits (0 < K < 32). */
static uint32_t rol(uint32_t x, int k) { return x << k | x >> (32 - k); }

/* One 64-byte block into S. */
static void sha1_block(struct sha1 *s, const uint8_t *p)
{
	uint32_t w[80], a = s->h[0], b = s->h[1], c = s->h[2], d = s->h[3], e = s->h[4];
	for (int i = 0; i < 16; i++)
		w[i] = rk_get_be32(p + 4 * i);
	for (int i = 16; i < 80; i++)
		w[i] = rol(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
	for (int i = 0; i < 80; i++) {
		uint32_t f, k;
		if (i < 20) { f = (b & c) | (~b & d); k = 0x5a827999u; }
		else if (i < 40) { f = b ^ c ^ d; k = 0x6ed9eba1u; }
		else if (i < 60) { f = (b & c) | (b & d) | (c & d); k = 0x8f1bbcdcu; }
		else { f = b ^ c ^ d; k = 0xca62c1d6u; }
		uint32_t t = rol(a, 5) + f + e + k + w[i];
		e = d; d = c; c = rol(b, 30); b = a; a = t;
	}
	s->h[0] += a; s->h[1] += b; s->h[2] += c; s->h[3] += d; s->h[4] += e;
}

/* A fresh SHA-1 state. */
static void sha1_init(struct sha1 *s)
{
	static const uint32_t h0[5] = { 0x67452301u, 0xefcdab89u, 0x98badcfeu, 0x10325476u, 0xc3d2e1f0u };
	memcpy(s->h, h0, sizeof h0);
	s->n = 0;
}

/* LEN more bytes of DATA into S. */
static void sha1_add(struct sha1 *s, const void *data, size_t len)
{
	const uint8_t *p = data;
	for (size_t i = 0; i < len; i++) {
		s->buf[s->n % 64] = p[i];
		if (++s->n % 64 == 0)
			sha1_block(s, s->buf);
	}
}

/* The first 16 bytes of the digest (all mdadm keeps), each 4-byte group
 * backwards so that rk_fmt_md_uuid_colons prints what mdadm prints. */
static void sha1_uuid(struct sha1 *s, uint8_t out[16])
{
	uint64_t bits = s->n * 8;
	uint8_t pad = 0x80, len[8];
	sha1_add(s, &pad, 1);
	pad = 0;
	while (s->n % 64 != 56)
		sha1_add(s, &pad, 1);
	for (int i = 0; i < 8; i++)
		len[i] = (uint8_t)(bits >> (56 - 8 * i));
	sha1_add(s, len, 8);
	for (int i = 0; i < 4; i++)
		for (int k = 0; k < 4; k++)
			out[4 * i + k] = (uint8_t)(s->h[i] >> (8 * k));   /* mdadm prints each word's bytes backwards */
}

/* mdadm's uuid_from_super_imsm: SHA-1 of the signature, the original
 * family number (the family number when that is 0), and for a volume its
 * index (32-bit) and its 16-byte name. */
static void imsm_uuid(const struct rk_imsm *m, int vol, uint8_t out[16])
{
	struct sha1 s;
	uint8_t le[4];
	sha1_init(&s);
	sha1_add(&s, RK_IMSM_SIG, RK_IMSM_SIG_LEN);
	rk_put_le32(le, m->orig_family_num ? m->orig_family_num : m->family_num);
	sha1_add(&s, le, 4);
	if (vol >= 0) {
		rk_put_le32(le, (uint32_t)vol);
		sha1_add(&s, le, 4);
		sha1_add(&s, m->vols[vol].volume, RK_IMSM_SERIAL_LEN);
	}
	sha1_uuid(&s, out);
}

/* ---------------- decoding the MPB ---------------- */

/* The header's fields (bytes 0 to 0xd7). */
static void imsm_header(struct rk_imsm *m, const uint8_t *b)
{
	memcpy(m->version, b + RK_IMSM_SIG_LEN, 8);
	m->version[8] = 0;
	m->check_sum = rk_get_le32(b + 0x20);
	m->mpb_size = rk_get_le32(b + 0x24);
	m->family_num = rk_get_le32(b + 0x28);
	m->generation_num = rk_get_le32(b + 0x2c);
	m->error_log_size = rk_get_le32(b + 0x30);
	m->attributes = rk_get_le32(b + 0x34);
	m->num_disks = b[0x38];
	m->num_raid_devs = b[0x39];
	m->error_log_pos = b[0x3a];
	m->cache_size = rk_get_le32(b + 0x3c);
	m->orig_family_num = rk_get_le32(b + 0x40);
	m->pwr_cycle_count = rk_get_le32(b + 0x44);
	m->bbm_log_size = rk_get_le32(b + 0x48);
	m->num_raid_devs_created = rk_get_le16(b + 0x4c);
	m->creation_time = rk_get_le64(b + 0x50);
}

/* One map at B (AVAIL bytes left in the MPB): *LEN its size. */
static rk_err imsm_map(struct rk_imsm_map *p, const uint8_t *b, size_t avail, size_t *len, unsigned vol, int which)
{
	if (avail < RK_IMSM_MAP_HDR)
		return rk_fail(RK_E_CORRUPT, "IMSM volume %u: map %d runs past the MPB", vol, which);
	p->pba_of_lba0 = rk_get_le32(b) | (uint64_t)rk_get_le32(b + 20) << 32;
	p->blocks_per_member = rk_get_le32(b + 4) | (uint64_t)rk_get_le32(b + 24) << 32;
	p->num_data_stripes = rk_get_le32(b + 8) | (uint64_t)rk_get_le32(b + 28) << 32;
	p->blocks_per_strip = rk_get_le16(b + 12);
	p->map_state = b[14];
	p->raid_level = b[15];
	p->num_members = b[16];
	p->num_domains = b[17];
	p->failed_disk_num = b[18];
	p->ddf = b[19];
	if (p->num_members == 0)
		return rk_fail(RK_E_CORRUPT, "IMSM volume %u: map %d has no members", vol, which);
	*len = RK_IMSM_MAP_HDR + 4u * p->num_members;
	if (*len > avail)
		return rk_fail(RK_E_CORRUPT, "IMSM volume %u: map %d's %u members run past the MPB", vol, which,
		               p->num_members);
	for (unsigned i = 0; i < p->num_members; i++)
		p->ord[i] = rk_get_le32(b + RK_IMSM_MAP_HDR + 4 * i);
	return RK_OK;
}

/* Volume V at MPB offset OFF: its fields and maps; *END the offset after it. */
static rk_err imsm_dev(struct rk_imsm *m, unsigned v, const uint8_t *mpb, size_t lim, size_t off, size_t *end)
{
	struct rk_imsm_dev *d = &m->vols[v];
	if (off > lim || lim - off < RK_IMSM_DEV_HDR + RK_IMSM_VOL_HDR)
		return rk_fail(RK_E_CORRUPT, "IMSM volume %u at MPB byte %zu runs past the MPB's %zu", v, off, lim);
	const uint8_t *b = mpb + off;
	memcpy(d->volume, b, RK_IMSM_SERIAL_LEN);
	d->size = rk_get_le32(b + 16) | (uint64_t)rk_get_le32(b + 20) << 32;
	d->status = rk_get_le32(b + 24);
	d->reserved_blocks = rk_get_le32(b + 28);
	d->my_vol_raid_dev_num = rk_get_le16(b + 40);
	d->rwh_policy = b[50];
	const uint8_t *vb = b + RK_IMSM_DEV_HDR;
	d->curr_migr_unit = rk_get_le32(vb) | (uint64_t)rk_get_le32(vb + 16) << 32;
	d->checkpoint_id = rk_get_le32(vb + 4);
	d->migr_state = vb[8];
	d->migr_type = vb[9];
	d->dirty = vb[10];
	d->fs_state = vb[11];
	d->verify_errors = rk_get_le16(vb + 12);
	d->bad_blocks = rk_get_le16(vb + 14);
	size_t at = off + RK_IMSM_DEV_HDR + RK_IMSM_VOL_HDR, len = 0;
	for (int k = 0; k < (d->migr_state ? 2 : 1); k++) {
		rk_err e = imsm_map(&d->map[k], mpb + at, lim - at, &len, v, k);
		if (e)
			return e;
		at += len;
	}
	d->off = (uint32_t)off;
	d->len = (uint32_t)(at - off);
	*end = at;
	return RK_OK;
}

/* The disk table: NUM_DISKS entries of 48 bytes after the header. */
static rk_err imsm_disks(struct rk_imsm *m, const uint8_t *mpb, size_t lim)
{
	size_t need = RK_IMSM_HDR_SIZE + (size_t)m->num_disks * RK_IMSM_DISK_SIZE;
	if (need > lim)
		return rk_fail(RK_E_CORRUPT, "IMSM: %u disks need %zu bytes, the MPB has %zu", m->num_disks, need, lim);
	for (unsigned i = 0; i < m->num_disks; i++) {
		const uint8_t *b = mpb + RK_IMSM_HDR_SIZE + (size_t)i * RK_IMSM_DISK_SIZE;
		struct rk_imsm_disk *k = &m->disks[i];
		memcpy(k->serial, b, RK_IMSM_SERIAL_LEN);
		k->total_blocks = rk_get_le32(b + 16) | (uint64_t)rk_get_le32(b + 32) << 32;
		k->scsi_id = rk_get_le32(b + 20);
		k->status = rk_get_le32(b + 24);
		k->owner_cfg_num = rk_get_le32(b + 28);
	}
	return RK_OK;
}

/* The bad-block log: the last bbm_log_size bytes of the MPB, after the
 * volumes (END); noticed, not used. */
static rk_err imsm_bbm(struct rk_imsm *m, const uint8_t *mpb, size_t end)
{
	if (m->bbm_log_size == 0)
		return RK_OK;
	if (m->bbm_log_size > m->mpb_size || m->mpb_size - m->bbm_log_size < end || m->bbm_log_size < 8)
		return rk_fail(RK_E_CORRUPT, "IMSM: a bad-block log of %u bytes does not fit the MPB's %u after the volumes (%zu)",
		               m->bbm_log_size, m->mpb_size, end);
	m->bbm_off = m->mpb_size - m->bbm_log_size;
	m->bbm_present = 1;
	m->bbm_signature = rk_get_le32(mpb + m->bbm_off);
	m->bbm_entries = rk_get_le32(mpb + m->bbm_off + 4);
	if (m->bbm_entries > (m->bbm_log_size - 8) / 8)
		return rk_fail(RK_E_CORRUPT, "IMSM: bad-block log of %u bytes claims %u entries", m->bbm_log_size,
		               m->bbm_entries);
	return RK_OK;
}

/* mdadm's __gen_imsm_checksum: the 32-bit words of the MPB added, the
 * checksum field left out. */
static uint32_t imsm_checksum(const uint8_t *mpb, uint32_t size)
{
	uint32_t sum = 0;
	for (uint32_t i = 0; i + 4 <= size; i += 4)
		sum += i == 0x20 ? 0 : rk_get_le32(mpb + i);
	return sum;
}

rk_err rk_imsm_decode(struct rk_imsm *m, const uint8_t *mpb, size_t len, uint64_t at, uint64_t dev_size)
{
	memset(m, 0, sizeof *m);
	m->this_disk = -1;
	if (len < RK_IMSM_HDR_SIZE || memcmp(mpb, RK_IMSM_SIG, RK_IMSM_SIG_LEN))
		return rk_fail(RK_E_NOSB, "no IMSM signature at %" PRIu64, at);
	m->at = at;
	m->dev_size = dev_size;
	imsm_header(m, mpb);
	if (m->mpb_size < RK_IMSM_HDR_SIZE || m->mpb_size > len)
		return rk_fail(RK_E_CORRUPT, "IMSM: MPB size %u bytes (%zu read, at least %u)", m->mpb_size, len,
		               RK_IMSM_HDR_SIZE);
	m->csum_calc = imsm_checksum(mpb, m->mpb_size);
	m->csum_ok = m->csum_calc == m->check_sum;
	rk_err e = imsm_disks(m, mpb, m->mpb_size);
	if (e)
		return e;
	if (m->num_raid_devs > RK_IMSM_MAX_VOLS)
		return rk_fail(RK_E_CORRUPT, "IMSM: %u volumes (at most %u read)", m->num_raid_devs, RK_IMSM_MAX_VOLS);
	size_t off = RK_IMSM_HDR_SIZE + (size_t)m->num_disks * RK_IMSM_DISK_SIZE;
	for (unsigned v = 0; v < m->num_raid_devs; v++) {
		if ((e = imsm_dev(m, v, mpb, m->mpb_size, off, &off)))
			return e;
		m->nvols++;
		imsm_uuid(m, (int)v, m->vols[v].uuid);
	}
	imsm_uuid(m, -1, m->container_uuid);
	return imsm_bbm(m, mpb, off);
}

/* ---------------- reading a member ---------------- */

/* The MPB of D: the anchor at size - 1024, extended backwards over the
 * sectors before it when mpb_size says so (mdadm's load_imsm_mpb), into
 * *OUT (malloc'd) of *LEN bytes. */
static rk_err imsm_load(rk_dev *d, uint8_t **out, size_t *len, uint64_t *at)
{
	uint64_t size = rk_dev_size(d);
	*out = NULL;
	if (size < 1024 + 512)
		return rk_fail(RK_E_NOSB, "%s: too small for IMSM metadata", rk_dev_path(d));
	*at = size - 1024;
	uint8_t anchor[512];
	rk_err e = rk_dev_pread(d, anchor, 512, *at);
	if (e)
		return e;
	if (memcmp(anchor, RK_IMSM_SIG, RK_IMSM_SIG_LEN))
		return rk_fail(RK_E_NOSB, "%s: no IMSM metadata", rk_dev_path(d));
	uint32_t mpb_size = rk_get_le32(anchor + 0x24);
	uint64_t sectors = ((uint64_t)mpb_size + 511) / 512;
	if (mpb_size < RK_IMSM_HDR_SIZE || mpb_size > RK_IMSM_MPB_MAX || (sectors + 1) * 512 > size)
		return rk_fail(RK_E_CORRUPT, "%s: IMSM MPB size %u bytes (%u to %u, within the member's %" PRIu64 ")",
		               rk_dev_path(d), mpb_size, RK_IMSM_HDR_SIZE, RK_IMSM_MPB_MAX, size);
	uint8_t *buf = malloc(sectors * 512);
	if (!buf)
		return rk_fail(RK_E_NOMEM, "out of memory");
	memcpy(buf, anchor, 512);
	/* sectors 2.. of the MPB lie just before the anchor, in order */
	if (sectors > 1 && (e = rk_dev_pread(d, buf + 512, (sectors - 1) * 512, *at - (sectors - 1) * 512))) {
		free(buf);
		return e;
	}
	*out = buf;
	*len = mpb_size;
	return RK_OK;
}

/* mdadm's serial form: printable characters only, ':' as ';', the last 16. */
static void imsm_serial_form(const char *raw, size_t n, uint8_t out[RK_IMSM_SERIAL_LEN])
{
	char t[256];
	size_t k = 0;
	for (size_t i = 0; i < n && k < sizeof t; i++)
		if (isgraph((unsigned char)raw[i]))
			t[k++] = raw[i] == ':' ? ';' : raw[i];
	size_t from = k > RK_IMSM_SERIAL_LEN ? k - RK_IMSM_SERIAL_LEN : 0;
	memset(out, 0, RK_IMSM_SERIAL_LEN);
	memcpy(out, t + from, k - from);
}

/* The disk whose serial is SER (16 bytes), or -1. */
static int imsm_find_serial(const struct rk_imsm *m, const uint8_t ser[RK_IMSM_SERIAL_LEN])
{
	if (!ser[0])
		return -1;
	for (int i = 0; i < m->num_disks; i++)
		if (memcmp(m->disks[i].serial, ser, RK_IMSM_SERIAL_LEN) == 0)
			return i;
	return -1;
}

/* Whether KEY (N bytes, from rk_fmt_disk_serials) names PATH: a key with
 * a slash is a path (the same string, or the same file once both are
 * resolved), one without the file name alone. */
static int imsm_key_names(const char *key, size_t n, const char *path)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	if (!memchr(key, '/', n))
		return strlen(base) == n && memcmp(base, key, n) == 0;
	if (strlen(path) == n && memcmp(path, key, n) == 0)
		return 1;
	char k[4096], a[4096], b[4096];
	if (n >= sizeof k)
		return 0;
	memcpy(k, key, n);
	k[n] = 0;
	return realpath(k, a) && realpath(path, b) && strcmp(a, b) == 0;
}

/* The serial the user gave PATH (rk_fmt_set_disk_serials:
 * "PATH=SERIAL,PATH=SERIAL"); 0 when none. */
static int imsm_user_serial(const char *path, uint8_t out[RK_IMSM_SERIAL_LEN])
{
	const char *env = rk_fmt_disk_serials();
	if (!env || !path)
		return 0;
	while (*env) {
		size_t n = strcspn(env, ","), eq = strcspn(env, "=");
		if (eq < n && imsm_key_names(env, eq, path)) {
			imsm_serial_form(env + eq + 1, n - eq - 1, out);
			return 1;
		}
		env += n + (env[n] == ',');
	}
	return 0;
}

/* A block device's own serial as mdadm reads it: SCSI VPD page 0x80 (its
 * 4-byte header skipped), else the serial file (NVMe); 0 when none. */
static int imsm_dev_serial(const char *path, uint8_t out[RK_IMSM_SERIAL_LEN])
{
	struct stat st;
	if (!path || stat(path, &st) || !S_ISBLK(st.st_mode))
		return 0;
	static const char *const files[2] = { "vpd_pg80", "serial" };
	for (int k = 0; k < 2; k++) {
		char p[128], raw[256];
		snprintf(p, sizeof p, "/sys/dev/block/%u:%u/device/%s", major(st.st_rdev), minor(st.st_rdev), files[k]);
		FILE *f = fopen(p, "rb");
		if (!f)
			continue;
		size_t n = fread(raw, 1, sizeof raw, f);
		fclose(f);
		size_t skip = k == 0 ? 4 : 0;
		if (n > skip) {
			imsm_serial_form(raw + skip, n - skip, out);
			if (out[0])
				return 1;
		}
	}
	return 0;
}

static const char *imsm_str16(const uint8_t *s, char *buf);

/* The one disk whose serial (4 characters or more) PATH's file name
 * contains, or -1 (none, or several). */
static int imsm_serial_in_name(const struct rk_imsm *m, const char *path)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	int found = -1;
	for (int i = 0; i < m->num_disks; i++) {
		char s[RK_IMSM_SERIAL_LEN + 1];
		imsm_str16(m->disks[i].serial, s);
		if (strlen(s) < 4 || !strstr(base, s))
			continue;
		if (found >= 0)
			return -1;
		found = i;
	}
	return found;
}

/* Which disk of the table D (PATH) is, into m->this_disk and this_how. */
static void imsm_whoami(struct rk_imsm *m, const char *path)
{
	uint8_t ser[RK_IMSM_SERIAL_LEN];
	const char *how = NULL;
	if (imsm_user_serial(path, ser))
		how = "its serial as --disk-serial names it";
	else if (imsm_dev_serial(path, ser))
		how = "the device's own serial";
	if (how) {
		m->this_disk = imsm_find_serial(m, ser);
		snprintf(m->this_how, sizeof m->this_how, "%s%s", how, m->this_disk < 0 ? ", which is not in the disk table" : "");
		return;
	}
	if (path) {
		imsm_serial_form(path, strlen(path), ser);
		if ((m->this_disk = imsm_find_serial(m, ser)) >= 0) {
			snprintf(m->this_how, sizeof m->this_how, "its path, which the metadata names as a serial");
			return;
		}
		if ((m->this_disk = imsm_serial_in_name(m, path)) >= 0) {
			snprintf(m->this_how, sizeof m->this_how, "its file name, which holds the disk's serial");
			return;
		}
	}
	if (m->num_disks == 1) {
		m->this_disk = 0;
		snprintf(m->this_how, sizeof m->this_how, "the only disk of the table");
	} else
		snprintf(m->this_how, sizeof m->this_how, "no serial known for this member");
}

rk_err rk_imsm_read(rk_dev *d, const char *path, struct rk_imsm *m)
{
	uint8_t *mpb = NULL;
	size_t len = 0;
	uint64_t at = 0;
	rk_err e = imsm_load(d, &mpb, &len, &at);
	if (e)
		return e;
	e = rk_imsm_decode(m, mpb, len, at, rk_dev_size(d));
	free(mpb);
	if (e) {
		char why[512];
		snprintf(why, sizeof why, "%s", rk_errmsg());
		return rk_fail(e, "%s: %s", path ? path : rk_dev_path(d), why);
	}
	imsm_whoami(m, path);
	return RK_OK;
}

/* The table's decode: a new struct rk_imsm (freed with free()). */
static rk_err imsm_decode_ent(rk_dev *d, const char *path, void **out)
{
	struct rk_imsm *m = malloc(sizeof *m);
	if (!m)
		return rk_fail(RK_E_NOMEM, "out of memory");
	rk_err e = rk_imsm_read(d, path, m);
	if (e) {
		free(m);
		return e;
	}
	*out = m;
	return RK_OK;
}

/* A member found, in the words probes report (libblkid's type name). */
static void imsm_describe(const void *obj, struct rk_probe_result *r)
{
	const struct rk_imsm *m = obj;
	char u[40];
	r->found = 1;
	snprintf(r->type, sizeof r->type, "isw_raid_member");
	snprintf(r->usage, sizeof r->usage, "raid");
	uuid_unparse_lower(m->container_uuid, r->uuid);
	snprintf(r->version, sizeof r->version, "%s", m->version);
	rk_fmt_md_uuid_colons(m->container_uuid, u);
	snprintf(r->what, sizeof r->what, "an Intel IMSM member (isw_raid_member) of container %s, %u volume%s",
	         u, m->nvols, m->nvols == 1 ? "" : "s");
}

/* The table's probe: found when an MPB decodes. */
static rk_err imsm_probe(rk_dev *d, const char *path, struct rk_probe_result *r)
{
	return rk_fmt_probe_via(d, path, r, imsm_decode_ent, imsm_describe, RK_E_CORRUPT);
}

/* ---------------- words ---------------- */

int rk_imsm_md_level(const struct rk_imsm_map *map, int32_t *level, uint32_t *layout)
{
	*layout = 0;
	switch (map->raid_level) {
	case 0: *level = 0; return 0;
	case 1:
	case 10:   /* mdadm: RAID-1 over 2 members, RAID-10 (near 2) over more */
		if (map->num_members == 2 && map->raid_level == 1) {
			*level = 1;
			return 0;
		}
		*level = 10;
		*layout = 0x102;
		return 0;
	case 5: *level = 5; return 0;   /* left-asymmetric: md's layout 0 */
	default: *level = -1; return -1;
	}
}

/* The level as mdadm prints it (0, 1, 10, 5; the raw number otherwise). */
static int imsm_level_shown(const struct rk_imsm_map *map)
{
	int32_t lv;
	uint32_t lay;
	return rk_imsm_md_level(map, &lv, &lay) ? map->raid_level : lv;
}

/* mdadm's words for a map_state. */
static const char *imsm_map_state(uint8_t s)
{
	static const char *const w[4] = { "normal", "uninitialized", "degraded", "failed" };
	return s < 4 ? w[s] : "unknown";
}

/* mdadm's migr_type(): a verify with DEV_VERIFY_AND_FIX is a repair. */
static unsigned imsm_migr_type(const struct rk_imsm_dev *d)
{
	if (d->migr_type == RK_IMSM_MIGR_VERIFY && (d->status & RK_IMSM_DEV_VERIFY_AND_FIX))
		return RK_IMSM_MIGR_REPAIR;
	return d->migr_type;
}

/* mdadm's "Migrate State": idle, or the migration's type. */
static const char *imsm_migr_words(const struct rk_imsm_dev *d)
{
	static const char *const w[6] = { "initialize", "rebuild", "check", "general migration", "state change", "repair" };
	unsigned t = imsm_migr_type(d);
	if (!d->migr_state)
		return "idle";
	return t < 6 ? w[t] : "unknown";
}

/* mdadm's "RWH Policy" (write-hole protection). */
static const char *imsm_rwh_words(uint8_t p)
{
	switch (p) {
	case 0: case 5: return "off";
	case 1: case 3: return "PPL distributed";
	case 2: case 4: return "PPL journaling drive";
	default: return "unknown";
	}
}

/* mdadm's imsm_check_attributes: only known attribute bits. */
static int imsm_attrs_supported(uint32_t a)
{
	const uint32_t supported = 0x80000000u | 0x20000000u | 0x100u | 0x1u | 0x2u | 0x4u | 0x10u | 0x40u | 0x200u;
	const uint32_t ignored = 0x04000000u;
	return (a & ~ignored & ~supported) == 0;
}

/* A 16-byte NUL-padded name or serial as a C string (BUF >= 17). */
static const char *imsm_str16(const uint8_t *s, char *buf)
{
	memcpy(buf, s, RK_IMSM_SERIAL_LEN);
	buf[RK_IMSM_SERIAL_LEN] = 0;
	return buf;
}

/* The slot (map position) of disk IDX in MAP, or -1. */
static int imsm_slot(const struct rk_imsm_map *map, int idx)
{
	for (int i = 0; idx >= 0 && i < map->num_members; i++)
		if (RK_IMSM_ORD_IDX(map->ord[i]) == (uint32_t)idx)
			return i;
	return -1;
}

/* mdadm's "Slots : [UU_U]": U per position, _ where rebuilding. */
static void imsm_slots(const struct rk_imsm_map *map, char *buf)
{
	int i = 0;
	for (; i < map->num_members; i++)
		buf[i] = (map->ord[i] & RK_IMSM_ORD_REBUILD) ? '_' : 'U';
	buf[i] = 0;
}

/* Sectors the disk keeps past its volumes (mdadm's imsm_reserved_sectors,
 * for the "Usable Size" it prints): at most MPB_SECTOR_CNT +
 * IMSM_RESERVED_SECTORS, less when the last extent leaves less. */
static uint64_t imsm_reserved(const struct rk_imsm *m, int idx)
{
	uint64_t total = m->disks[idx].total_blocks, end = 0, res = 2210 + 8192;
	int member = 0;
	for (uint32_t v = 0; v < m->nvols; v++) {
		const struct rk_imsm_map *map = &m->vols[v].map[0];
		uint64_t e = map->pba_of_lba0 + map->num_data_stripes * map->blocks_per_strip *
		             (map->raid_level == 1 || map->raid_level == 10 ? 2 : 1);
		if (imsm_slot(map, idx) >= 0) {
			member = 1;
			end = e > end ? e : end;
		}
	}
	if (member) {
		uint64_t rem = (total > end ? total - end : 0) & ~(uint64_t)1;
		uint64_t mpbs = ((uint64_t)m->mpb_size + 511) / 512;
		rem = rem < mpbs ? mpbs : rem;
		res = res > rem ? rem : res;
	}
	return res;
}

/* ---------------- printing (as mdadm --examine) ---------------- */

/* One disk table entry. */
static void imsm_text_disk(FILE *f, const struct rk_imsm *m, int i, const char *ind)
{
	const struct rk_imsm_disk *k = &m->disks[i];
	char s[20];
	uint64_t res = imsm_reserved(m, i), usable = k->total_blocks > res ? k->total_blocks - res : 0;
	fputc('\n', f);
	rk_esc_fprintf(f, "%s  Disk%02d Serial : %s\n", ind, i, imsm_str16(k->serial, s));
	fprintf(f, "%s          State :%s%s%s%s\n", ind, k->status & RK_IMSM_DISK_SPARE ? " spare" : "",
	        k->status & RK_IMSM_DISK_CONFIGURED ? " active" : "", k->status & RK_IMSM_DISK_FAILED ? " failed" : "",
	        k->status & RK_IMSM_DISK_JOURNAL ? " journal" : "");
	fprintf(f, "%s             Id : %08x\n", ind, k->scsi_id);
	fprintf(f, "%s    Usable Size : %" PRIu64 " sectors\n", ind, usable);
}

/* The lines of map K of volume D ("value <-- source" during a migration). */
static void imsm_text_maps(FILE *f, const struct rk_imsm_dev *d, const char *ind)
{
	const struct rk_imsm_map *a = &d->map[0], *b = d->migr_state ? &d->map[1] : NULL;
	char sa[260], sb[260];
	imsm_slots(a, sa);
	fprintf(f, "%s     RAID Level : %d", ind, imsm_level_shown(a));
	if (b)
		fprintf(f, " <-- %d", imsm_level_shown(b));
	fprintf(f, "\n%s        Members : %u", ind, a->num_members);
	if (b)
		fprintf(f, " <-- %u", b->num_members);
	fprintf(f, "\n%s          Slots : [%s]", ind, sa);
	if (b) {
		imsm_slots(b, sb);
		fprintf(f, " <-- [%s]", sb);
	}
	fprintf(f, "\n%s    Failed disk : ", ind);
	if (a->failed_disk_num == 0xff)
		fprintf(f, "none\n");
	else
		fprintf(f, "%u\n", a->failed_disk_num);
}

/* Volume V. */
static void imsm_text_vol(FILE *f, const struct rk_imsm *m, uint32_t v, const char *ind)
{
	const struct rk_imsm_dev *d = &m->vols[v];
	const struct rk_imsm_map *a = &d->map[0];
	char s[20], u[40];
	fputc('\n', f);
	rk_esc_fprintf(f, "%s[%s]:\n", ind, imsm_str16(d->volume, s));
	fprintf(f, "%s       Subarray : %u\n", ind, v);
	rk_fmt_md_uuid_colons(d->uuid, u);
	fprintf(f, "%s           UUID : %s\n", ind, u);
	imsm_text_maps(f, d, ind);
	int slot = imsm_slot(a, m->this_disk);
	if (slot >= 0)
		fprintf(f, "%s      This Slot : %d%s\n", ind, slot, a->ord[slot] & RK_IMSM_ORD_REBUILD ? " (out-of-sync)" : "");
	else
		fprintf(f, "%s      This Slot : ?\n", ind);
	fprintf(f, "%s     Array Size : %" PRIu64 " sectors\n", ind, d->size);
	fprintf(f, "%s   Per Dev Size : %" PRIu64 " sectors\n", ind, a->blocks_per_member);
	fprintf(f, "%s  Sector Offset : %" PRIu64 "\n", ind, a->pba_of_lba0);
	fprintf(f, "%s    Num Stripes : %" PRIu64 "\n", ind, a->num_data_stripes);
	fprintf(f, "%s     Chunk Size : %u KiB", ind, a->blocks_per_strip / 2u);
	if (d->migr_state)
		fprintf(f, " <-- %u KiB", d->map[1].blocks_per_strip / 2u);
	fprintf(f, "\n%s       Reserved : %u\n", ind, d->reserved_blocks);
	fprintf(f, "%s  Migrate State : %s\n", ind, imsm_migr_words(d));
	fprintf(f, "%s      Map State : %s", ind, imsm_map_state(a->map_state));
	if (d->migr_state)
		fprintf(f, " <-- %s\n%s     Checkpoint : %" PRIu64, imsm_map_state(d->map[1].map_state), ind,
		        d->curr_migr_unit);
	fprintf(f, "\n%s    Dirty State : %s\n", ind, d->dirty & RK_IMSM_VOL_DIRTY ? "dirty" : "clean");
	fprintf(f, "%s     RWH Policy : %s\n", ind, imsm_rwh_words(d->rwh_policy));
	fprintf(f, "%s      Volume ID : %u\n", ind, d->my_vol_raid_dev_num);
}

/* The MPB as mdadm --examine shows it, lines prefixed with IND. */
static void imsm_print_text(FILE *f, const void *obj, const char *ind)
{
	const struct rk_imsm *m = obj;
	char u[40], t[40];
	ind = ind ? ind : "";
	fprintf(f, "%sIntel IMSM metadata at %" PRIu64 "\n", ind, m->at);
	fprintf(f, "%s          Magic : %s\n", ind, RK_IMSM_SIG);
	rk_esc_fprintf(f, "%s        Version : %s\n", ind, m->version);
	fprintf(f, "%s    Orig Family : %08x\n", ind, m->orig_family_num);
	fprintf(f, "%s         Family : %08x\n", ind, m->family_num);
	fprintf(f, "%s     Generation : %08x\n", ind, m->generation_num);
	fprintf(f, "%s  Creation Time : %s\n", ind, m->creation_time ? rk_print_time(m->creation_time, t, sizeof t) : "Unknown");
	fprintf(f, "%s     Attributes : %s (0x%08x)\n", ind, imsm_attrs_supported(m->attributes) ? "All supported" : "not supported",
	        m->attributes);
	rk_fmt_md_uuid_colons(m->container_uuid, u);
	fprintf(f, "%s           UUID : %s\n", ind, u);
	fprintf(f, "%s       Checksum : %08x %s\n", ind, m->check_sum, m->csum_ok ? "correct" : "incorrect");
	fprintf(f, "%s    MPB Sectors : %u\n", ind, (m->mpb_size + 511) / 512);
	fprintf(f, "%s          Disks : %u\n", ind, m->num_disks);
	fprintf(f, "%s   RAID Devices : %u\n", ind, m->num_raid_devs);
	fprintf(f, "%s      This Disk : %d (%s)\n", ind, m->this_disk, m->this_how);
	if (m->this_disk >= 0)
		imsm_text_disk(f, m, m->this_disk, ind);
	if (m->bbm_present)
		fprintf(f, "\n%sBad Block Management Log:\n%s       Log Size : %u\n%s      Signature : %x\n%s    Entry Count : %u\n",
		        ind, ind, m->bbm_log_size, ind, m->bbm_signature, ind, m->bbm_entries);
	for (uint32_t v = 0; v < m->nvols; v++)
		imsm_text_vol(f, m, v, ind);
	for (int i = 0; i < m->num_disks; i++)
		if (i != m->this_disk)
			imsm_text_disk(f, m, i, ind);
}

/* Disk table entry I as a JSON object. */
static void imsm_json_disk(rk_json *j, const struct rk_imsm *m, int i)
{
	const struct rk_imsm_disk *k = &m->disks[i];
	char s[20];
	uint64_t res = imsm_reserved(m, i);
	rk_json_obj_begin(j);
	rk_json_ku64(j, "index", (uint64_t)i);
	rk_json_kstr(j, "serial", imsm_str16(k->serial, s));
	rk_json_key(j, "state");
	rk_json_arr_begin(j);
	static const struct { uint32_t bit; const char *w; } st[4] = {
		{ RK_IMSM_DISK_SPARE, "spare" }, { RK_IMSM_DISK_CONFIGURED, "active" },
		{ RK_IMSM_DISK_FAILED, "failed" }, { RK_IMSM_DISK_JOURNAL, "journal" } };
	for (int b = 0; b < 4; b++)
		if (k->status & st[b].bit)
			rk_json_str(j, st[b].w);
	rk_json_arr_end(j);
	rk_json_ku64(j, "status", k->status);
	rk_json_ku64(j, "id", k->scsi_id);
	rk_json_ku64(j, "total_size", k->total_blocks * 512);
	rk_json_ku64(j, "usable_size", (k->total_blocks > res ? k->total_blocks - res : 0) * 512);
	rk_json_kbool(j, "this_disk", i == m->this_disk);
	rk_json_obj_end(j);
}

/* A map's own fields (keys inside the caller's object). */
static void imsm_json_map(rk_json *j, const struct rk_imsm_map *a)
{
	char sl[260];
	int32_t lv;
	uint32_t lay;
	rk_json_ku64(j, "raid_level", imsm_level_shown(a));
	if (rk_json_key_or_null(j, "md_level", rk_imsm_md_level(a, &lv, &lay) == 0)) {
		rk_json_i64(j, lv);
		rk_json_ku64(j, "md_layout", lay);
	}
	rk_json_ku64(j, "members", a->num_members);
	imsm_slots(a, sl);
	rk_json_kstr(j, "slots", sl);
	if (rk_json_key_or_null(j, "failed_disk", a->failed_disk_num != 0xff))
		rk_json_u64(j, a->failed_disk_num);
	rk_json_ku64(j, "per_dev_size", a->blocks_per_member * 512);
	rk_json_ku64(j, "data_offset", a->pba_of_lba0 * 512);
	rk_json_ku64(j, "num_stripes", a->num_data_stripes);
	rk_json_ku64(j, "chunk_size", (uint64_t)a->blocks_per_strip * 512);
	rk_json_kstr(j, "map_state", imsm_map_state(a->map_state));
	rk_json_ku64(j, "num_domains", a->num_domains);
	rk_json_key(j, "disk_ord_tbl");
	rk_json_arr_begin(j);
	for (int i = 0; i < a->num_members; i++) {
		rk_json_obj_begin(j);
		rk_json_ku64(j, "disk", RK_IMSM_ORD_IDX(a->ord[i]));
		rk_json_kbool(j, "rebuild", (a->ord[i] & RK_IMSM_ORD_REBUILD) != 0);
		rk_json_obj_end(j);
	}
	rk_json_arr_end(j);
}

/* Volume V as a JSON object (its map 0 inline, map 1 as migration_source). */
static void imsm_json_vol(rk_json *j, const struct rk_imsm *m, uint32_t v)
{
	const struct rk_imsm_dev *d = &m->vols[v];
	char s[20], u[40];
	rk_json_obj_begin(j);
	rk_json_ku64(j, "subarray", v);
	rk_json_kstr(j, "name", imsm_str16(d->volume, s));
	rk_fmt_md_uuid_colons(d->uuid, u);
	rk_json_kstr(j, "uuid", u);
	imsm_json_map(j, &d->map[0]);
	int slot = imsm_slot(&d->map[0], m->this_disk);
	if (rk_json_key_or_null(j, "this_slot", slot >= 0))
		rk_json_u64(j, (uint64_t)slot);
	rk_json_ku64(j, "array_size", d->size * 512);
	rk_json_ku64(j, "reserved", (uint64_t)d->reserved_blocks * 512);
	rk_json_kstr(j, "migrate_state", imsm_migr_words(d));
	rk_json_ku64(j, "checkpoint", d->curr_migr_unit);
	rk_json_kstr(j, "dirty_state", d->dirty & RK_IMSM_VOL_DIRTY ? "dirty" : "clean");
	rk_json_kstr(j, "rwh_policy", imsm_rwh_words(d->rwh_policy));
	rk_json_ku64(j, "volume_id", d->my_vol_raid_dev_num);
	rk_json_ku64(j, "status", d->status);
	if (rk_json_key_or_null(j, "migration_source", d->migr_state != 0)) {
		rk_json_obj_begin(j);
		imsm_json_map(j, &d->map[1]);
		rk_json_obj_end(j);
	}
	rk_json_obj_end(j);
}

/* The MPB as JSON: mdadm --examine's fields in snake_case, sizes and
 * offsets in bytes (raidkit's JSON unit), identifiers as numbers. */
static void imsm_print_json(rk_json *j, const void *obj)
{
	const struct rk_imsm *m = obj;
	char b[40];
	rk_json_obj_begin(j);
	rk_json_kstr(j, "format", "imsm");
	rk_json_ku64(j, "sb_offset", m->at);
	rk_json_kstr(j, "magic", RK_IMSM_SIG);
	rk_json_kstr(j, "version", m->version);
	rk_json_ku64(j, "orig_family", m->orig_family_num);
	rk_json_ku64(j, "family", m->family_num);
	rk_json_ku64(j, "generation", m->generation_num);
	rk_json_kstr(j, "creation_time", m->creation_time ? rk_print_time(m->creation_time, b, sizeof b) : "Unknown");
	rk_json_ku64(j, "attributes", m->attributes);
	rk_json_kbool(j, "attributes_supported", imsm_attrs_supported(m->attributes));
	rk_fmt_md_uuid_colons(m->container_uuid, b);
	rk_json_kstr(j, "uuid", b);
	rk_json_ku64(j, "checksum", m->check_sum);
	rk_json_ku64(j, "checksum_computed", m->csum_calc);
	rk_json_kbool(j, "checksum_ok", m->csum_ok);
	rk_json_ku64(j, "mpb_size", m->mpb_size);
	rk_json_ku64(j, "mpb_sectors", (m->mpb_size + 511) / 512);
	rk_json_ku64(j, "num_disks", m->num_disks);
	rk_json_ku64(j, "num_volumes", m->num_raid_devs);
	if (rk_json_key_or_null(j, "this_disk", m->this_disk >= 0))
		rk_json_u64(j, (uint64_t)m->this_disk);
	rk_json_kstr(j, "this_disk_how", m->this_how);
	if (rk_json_key_or_null(j, "bad_block_log", m->bbm_present)) {
		rk_json_obj_begin(j);
		rk_json_ku64(j, "size", m->bbm_log_size);
		rk_json_ku64(j, "signature", m->bbm_signature);
		rk_json_ku64(j, "entries", m->bbm_entries);
		rk_json_obj_end(j);
	}
	rk_json_key(j, "disks");
	rk_json_arr_begin(j);
	for (int i = 0; i < m->num_disks; i++)
		imsm_json_disk(j, m, i);
	rk_json_arr_end(j);
	rk_json_key(j, "volumes");
	rk_json_arr_begin(j);
	for (uint32_t v = 0; v < m->nvols; v++)
		imsm_json_vol(j, m, v);
	rk_json_arr_end(j);
	rk_json_obj_end(j);
}

/* ---------------- views (rk_fmt.h "Views") ---------------- */

/* Members holding data (mdadm's imsm_num_data_members). */
static uint32_t imsm_data_members(int32_t level, uint32_t n)
{
	return level == 1 || level == 10 ? n / 2 : level == 5 ? n - 1 : n;
}

/* Sectors of each member the volume uses (mdadm's calc_component_size):
 * num_data_stripes whole strips (twice that for the mirrored levels),
 * unless that disagrees with the volume's size by more than the 1 MiB
 * per member mdadm rounds to, when the volume's size decides. */
static rk_err imsm_component(const struct rk_imsm_dev *d, int32_t level, uint64_t *sectors)
{
	const struct rk_imsm_map *a = &d->map[0];
	uint32_t dm = imsm_data_members(level, a->num_members);
	uint64_t comp, all;
	if (dm == 0)
		return rk_fail(RK_E_CORRUPT, "IMSM volume: RAID-%d over %u members", level, a->num_members);
	if (rk_mul_ovf(a->num_data_stripes, a->blocks_per_strip, &comp) ||
	    ((level == 1 || level == 10) && rk_mul_ovf(comp, 2, &comp)) || rk_mul_ovf(comp, dm, &all))
		return rk_fail(RK_E_CORRUPT, "IMSM volume: %" PRIu64 " stripes of %u sectors overflow",
		               a->num_data_stripes, a->blocks_per_strip);
	uint64_t diff = all > d->size ? all - d->size : d->size - all;
	if (diff > 2048ull * dm)
		comp = d->size / dm;
	if (comp > a->blocks_per_member)
		return rk_fail(RK_E_CORRUPT, "IMSM volume: %" PRIu64 " sectors used per member, past its extent of %" PRIu64,
		               comp, a->blocks_per_member);
	*sectors = comp;
	return RK_OK;
}

/* Role POS of map A: the disk its ord entry names, in the view's terms.
 * SRC (the migration's source map, or NULL) marks a disk being rebuilt. */
static void imsm_role(const struct rk_imsm *m, const struct rk_imsm_map *a, const struct rk_imsm_map *src,
                      uint32_t pos, struct rk_role *r)
{
	uint32_t idx = RK_IMSM_ORD_IDX(a->ord[pos]);
	memset(r, 0, sizeof *r);
	if (idx >= m->num_disks) {
		r->state = RK_ROLE_EMPTY;   /* the disk is not in the table: missing */
		return;
	}
	rk_view_fold_uuid(r->member_uuid, m->disks[idx].serial, RK_IMSM_SERIAL_LEN);
	if (m->disks[idx].status & RK_IMSM_DISK_FAILED)
		r->state = RK_ROLE_FAULTY;
	else if ((a->ord[pos] & RK_IMSM_ORD_REBUILD) || (src && pos < src->num_members && (src->ord[pos] & RK_IMSM_ORD_REBUILD)))
		r->state = RK_ROLE_REBUILDING;   /* checkpoint 0: nothing of it trusted */
	else
		r->state = RK_ROLE_ACTIVE;
}

/* The role table of volume D; two roles naming one disk are refused. */
static rk_err imsm_roles(const struct rk_imsm *m, const struct rk_imsm_dev *d, struct rk_sb *v)
{
	const struct rk_imsm_map *a = &d->map[0];
	const struct rk_imsm_map *src = d->migr_state && d->migr_type == RK_IMSM_MIGR_REBUILD ? &d->map[1] : NULL;
	for (uint32_t i = 0; i < a->num_members; i++) {
		imsm_role(m, a, src, i, &v->roles[i]);
		for (uint32_t k = 0; k < i; k++)
			if (v->roles[i].state != RK_ROLE_EMPTY && RK_IMSM_ORD_IDX(a->ord[k]) == RK_IMSM_ORD_IDX(a->ord[i]))
				return rk_fail(RK_E_CORRUPT, "IMSM volume: slots %u and %u both name disk %u", k, i,
				               RK_IMSM_ORD_IDX(a->ord[i]));
	}
	v->nroles = v->nentries = a->num_members;
	v->this_role = (uint32_t)imsm_slot(a, m->this_disk);
	return RK_OK;
}

/* Whether volume D can be read as a view: a migration raidkit cannot
 * express, or a level it does not serve, is refused with a sentence. */
static rk_err imsm_servable(const struct rk_imsm_dev *d, const char *name, int32_t *level, uint32_t *layout)
{
	if (d->migr_state && imsm_migr_type(d) == RK_IMSM_MIGR_GEN) {
		const struct rk_imsm_map *a = &d->map[0], *b = &d->map[1];
		return rk_fail(RK_E_NOTSUP, "IMSM volume %s: a general migration (RAID level %u over %u members, chunk %u KiB, "
		               "becoming RAID level %u over %u, chunk %u KiB) is in progress; raidkit does not read a volume "
		               "mid-migration yet", name, b->raid_level, b->num_members, b->blocks_per_strip / 2u,
		               a->raid_level, a->num_members, a->blocks_per_strip / 2u);
	}
	if (d->migr_state && imsm_migr_type(d) > RK_IMSM_MIGR_REPAIR)
		return rk_fail(RK_E_NOTSUP, "IMSM volume %s: migration type %u is not known", name, d->migr_type);
	if (rk_imsm_md_level(&d->map[0], level, layout))
		return rk_fail(RK_E_NOTSUP, "IMSM volume %s: RAID level %u is not served", name, d->map[0].raid_level);
	return RK_OK;
}

/* The view of volume V (this disk serves it) into OUT. */
static rk_err imsm_view(const struct rk_imsm *m, uint32_t vi, uint64_t dev_size, struct rk_sb *v)
{
	const struct rk_imsm_dev *d = &m->vols[vi];
	const struct rk_imsm_map *a = &d->map[0];
	char name[20];
	imsm_str16(d->volume, name);
	rk_view_init(v, RK_ORIGIN_IMSM, "IMSM");   /* as "DDF": the report says "metadata IMSM" */
	rk_err e = imsm_servable(d, name, &v->level, &v->layout);
	if (e)
		return e;
	memcpy(v->array_uuid, d->uuid, 16);
	rk_view_fold_uuid(v->member_uuid, m->disks[m->this_disk].serial, RK_IMSM_SERIAL_LEN);
	memcpy(v->name, name, RK_IMSM_SERIAL_LEN + 1);
	v->ctime = m->creation_time;
	v->events = m->generation_num;
	v->chunk = v->level == 1 ? 0 : (uint64_t)a->blocks_per_strip * 512;
	v->sb_offset = m->at;
	v->dev_size = dev_size;
	int resync = d->migr_state && (d->migr_type == RK_IMSM_MIGR_INIT || d->migr_type == RK_IMSM_MIGR_VERIFY);
	v->array_state = (d->dirty & RK_IMSM_VOL_DIRTY) || resync || a->map_state == RK_IMSM_MAP_UNINIT
	                 ? RK_ARRAY_ACTIVE : RK_ARRAY_CLEAN;
	uint64_t comp = 0;
	char why[512];
	if ((e = imsm_component(d, v->level, &comp))) {
		snprintf(why, sizeof why, "%s", rk_errmsg());
		return rk_fail(e, "IMSM volume %s: %s", name, why);
	}
	if (a->pba_of_lba0 > UINT64_MAX / 512 || d->size > UINT64_MAX / 512)
		return rk_fail(RK_E_CORRUPT, "IMSM volume %s: offset %" PRIu64 " or size %" PRIu64 " sectors overflows",
		               name, a->pba_of_lba0, d->size);
	v->data_offset = a->pba_of_lba0 * 512;
	v->data_size = comp * 512;
	v->volume_size = d->size * 512;
	if ((e = imsm_roles(m, d, v))) {
		snprintf(why, sizeof why, "%s", rk_errmsg());
		return rk_fail(e, "%s (volume %s)", why, name);
	}
	return RK_OK;
}

/* The table's views: one per volume whose map 0 lists this disk; none
 * with a wrong checksum or when this disk is not known. */
static rk_err imsm_views(const void *obj, uint64_t dev_size, struct rk_sb **out, uint32_t *n)
{
	const struct rk_imsm *m = obj;
	*out = NULL;
	*n = 0;
	if (!m->csum_ok)
		return rk_fail(RK_E_BADCRC, "IMSM MPB at %" PRIu64 ": checksum %08x, computed %08x", m->at, m->check_sum,
		               m->csum_calc);
	if (m->nvols == 0)
		return RK_OK;
	if (m->this_disk < 0)
		return rk_fail(RK_E_NOTSUP, "IMSM: this member is one of the %u disks its metadata lists, but which one cannot "
		               "be told (%s): IMSM names a disk only by its serial, which a disk image does not carry; name it "
		               "with --disk-serial FILE=SERIAL,... (the serials are in raid-examine's output)",
		               m->num_disks, m->this_how);
	for (uint32_t vi = 0; vi < m->nvols; vi++) {
		if (imsm_slot(&m->vols[vi].map[0], m->this_disk) < 0)
			continue;   /* a volume on other disks of the container */
		struct rk_sb *v = rk_view_add(out, n);
		rk_err e = v ? imsm_view(m, vi, dev_size, v) : rk_fail(RK_E_NOMEM, "out of memory");
		if (e) {
			free(*out);
			*out = NULL;
			*n = 0;
			return e;
		}
	}
	return RK_OK;
}

const struct rk_meta_fmt rk_fmt_imsm = {
	"imsm", "IMSM", imsm_probe, imsm_decode_ent,
	imsm_print_text, imsm_print_json, free, imsm_views,
};
