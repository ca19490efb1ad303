/* fmt_ddf.c: SNIA DDF containers (rk_fmt_ddf.h, spec/ddf.md): the decoder
 * of the anchor, both headers and the sections of the one in use, the
 * printing raid-examine shows (about what mdadm --examine shows), and one
 * view per virtual disk the member serves (rk_fmt.h "Views").  Facts from
 * the SNIA DDF specification and mdadm's super-ddf.c; the code is ours.
 * Every member is hostile: each count and offset is bounded against the
 * others and the device before it is used. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <uuid/uuid.h>
#include <zlib.h>

#include "fmt_int.h"
#include "rk_fmt_ddf.h"
#include "rk_geom.h"
#include "rk_le.h"
#include "rk_print.h"
#include "rk_util.h"

#define DDF_SECTOR 512u
/* DDF times count seconds from 1980-01-01 (mdadm's DECADE). */
#define DDF_EPOCH 315532800u
/* DDF primary RAID levels, qualifiers, secondary levels (the spec's). */
#define PRL_RAID0  0x00
#define PRL_RAID1  0x01
#define PRL_RAID3  0x03
#define PRL_RAID4  0x04
#define PRL_RAID5  0x05
#define PRL_RAID6  0x06
#define PRL_JBOD   0x0f
#define PRL_RAID1E 0x11
#define PRL_RAID5E 0x15
#define PRL_CONCAT 0x1f
#define PRL_RAID5EE 0x25
#define SRL_STRIPED 0x00
#define SRL_SPANNED 0x03

/* DDF's CRC of LEN bytes at B: zlib's CRC-32 with the stored field (bytes
 * 4..7) read as 0xffffffff, started from 0 and not inverted at the end. */
static uint32_t ddf_crc(const uint8_t *b, size_t len)
{
	static const uint8_t ff[4] = { 0xff, 0xff, 0xff, 0xff };
	uLong c = crc32(0xffffffffUL, b, 4);
	c = crc32(c, ff, 4);
	c = crc32(c, b + 8, (uInt)(len - 8));
	return (uint32_t)c ^ 0xffffffffu;
}

static void crc_check(struct rk_ddf_crc *c, const uint8_t *b, size_t len)
{
	c->read = 1;
	c->stored = rk_get_be32(b + 4);
	c->calc = ddf_crc(b, len);
	c->ok = c->stored == c->calc;
}

/* Records the first reason M cannot be used (later ones are dropped). */
__attribute__((format(printf, 3, 4)))
static void ddf_bad(struct rk_ddf *m, rk_err e, const char *fmt, ...)
{
	if (m->why[0])
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(m->why, sizeof m->why, fmt, ap);
	va_end(ap);
	m->err = e;
}

static int all_ff(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != 0xff)
			return 0;
	return 1;
}

/* mdadm's GUID form: 24 bytes as six groups of 8 hex digits (BUF >= 54). */
static const char *guid_hex(const uint8_t *g, char *buf)
{
	int o = 0;
	for (unsigned i = 0; i < RK_DDF_GUID_LEN; i++) {
		if (i && i % 4 == 0)
			buf[o++] = ':';
		o += sprintf(buf + o, "%02X", g[i]);
	}
	return buf;
}

const struct rk_ddf_header *rk_ddf_active(const struct rk_ddf *m)
{
	return m->active == 1 ? &m->primary : m->active == 2 ? &m->secondary : NULL;
}

/* ---------------- headers ---------------- */

/* The fields of the 512-byte header B read at sector LBA into H. */
static void header_parse(struct rk_ddf_header *h, const uint8_t *b, uint64_t lba)
{
	memset(h, 0, sizeof *h);
	h->lba = lba;
	h->found = rk_get_be32(b) == RK_DDF_HEADER_MAGIC;
	h->crc = rk_get_be32(b + 4);
	h->crc_calc = ddf_crc(b, DDF_SECTOR);
	h->crc_ok = h->crc == h->crc_calc;
	memcpy(h->guid, b + 8, RK_DDF_GUID_LEN);
	memcpy(h->revision, b + 32, 8);
	h->revision[8] = 0;
	h->seq = rk_get_be32(b + 40);
	h->timestamp = rk_get_be32(b + 44);
	h->openflag = b[48];
	h->foreignflag = b[49];
	h->enforcegroups = b[50];
	h->primary_lba = rk_get_be64(b + 96);
	h->secondary_lba = rk_get_be64(b + 104);
	h->type = b[112];
	h->workspace_len = rk_get_be32(b + 116);
	h->workspace_lba = rk_get_be64(b + 120);
	h->max_pd_entries = rk_get_be16(b + 128);
	h->max_vd_entries = rk_get_be16(b + 130);
	h->max_partitions = rk_get_be16(b + 132);
	h->config_record_len = rk_get_be16(b + 134);
	h->mppe = rk_get_be16(b + 136);
	for (unsigned s = 0; s < RK_DDF_NSECT; s++) {
		h->sect_off[s] = rk_get_be32(b + 192 + 8 * s);
		h->sect_len[s] = rk_get_be32(b + 196 + 8 * s);
	}
}

/* Revisions whose layout this decoder reads (DDF 1.0, 1.2, 2.0). */
static int revision_known(const char *r)
{
	return !strcmp(r, "01.00.00") || !strcmp(r, "01.02.00") || !strcmp(r, "02.00.00");
}

/* Reads the header of TYPE (1 primary, 2 secondary) at sector LBA into H
 * and judges it against the anchor's bytes ANCHOR as mdadm does: magic,
 * checksum, type, and the anchor's GUID, revision, LBAs and every byte
 * from the type on. */
static rk_err header_load(rk_dev *d, struct rk_ddf_header *h, uint64_t lba, uint8_t type, const uint8_t *anchor)
{
	uint8_t b[DDF_SECTOR];
	uint64_t sectors = rk_dev_size(d) / DDF_SECTOR;
	memset(h, 0, sizeof *h);
	h->lba = lba;
	if (lba == UINT64_MAX) {
		snprintf(h->why, sizeof h->why, "not recorded");
		return RK_OK;
	}
	if (sectors < 2 || lba >= sectors - 1) {
		snprintf(h->why, sizeof h->why, "sector %" PRIu64 " is past the member's %" PRIu64, lba, sectors);
		return RK_OK;
	}
	rk_err e = rk_dev_pread(d, b, sizeof b, lba * DDF_SECTOR);
	if (e)
		return e;
	header_parse(h, b, lba);
	if (!h->found)
		snprintf(h->why, sizeof h->why, "no DDF magic at sector %" PRIu64, lba);
	else if (!h->crc_ok)
		snprintf(h->why, sizeof h->why, "checksum %08x, computed %08x", h->crc, h->crc_calc);
	else if (h->type != type)
		snprintf(h->why, sizeof h->why, "type %u where %u was expected", h->type, type);
	else if (memcmp(b + 8, anchor + 8, 32) || memcmp(b + 96, anchor + 96, 16) || memcmp(b + 113, anchor + 113, 512 - 113))
		snprintf(h->why, sizeof h->why, "does not agree with the anchor (GUID, revision, LBAs or layout)");
	else
		h->usable = 1;
	return RK_OK;
}

/* mdadm's choice: the primary, unless it is unusable, or the secondary is
 * newer and closed, or as new and closed while the primary is open. */
static void header_choose(struct rk_ddf *m)
{
	const struct rk_ddf_header *p = &m->primary, *s = &m->secondary;
	m->active = p->usable ? 1 : 0;
	snprintf(m->active_why, sizeof m->active_why, "primary");
	if (s->usable && (!p->usable || (p->seq < s->seq && !s->openflag) ||
	                  (p->seq == s->seq && p->openflag && !s->openflag))) {
		m->active = 2;
		snprintf(m->active_why, sizeof m->active_why, "secondary: %s",
		         !p->usable ? "the primary is unusable" : "it is newer than the primary");
	}
	if (!m->active)
		ddf_bad(m, RK_E_CORRUPT, "DDF: no usable header (primary: %s; secondary: %s)", p->why, s->why);
}

/* The anchor in the last sector, then both headers.  RK_E_NOSB without the
 * anchor's magic. */
static rk_err headers_load(rk_dev *d, const char *path, struct rk_ddf *m)
{
	uint8_t a[DDF_SECTOR];
	uint64_t size = rk_dev_size(d);
	if (size < 2 * DDF_SECTOR)
		return rk_fail(RK_E_NOSB, "%s: no DDF anchor (too small)", path);
	rk_err e = rk_dev_pread(d, a, sizeof a, size / DDF_SECTOR * DDF_SECTOR - DDF_SECTOR);
	if (e)
		return e;
	if (rk_get_be32(a) != RK_DDF_HEADER_MAGIC)
		return rk_fail(RK_E_NOSB, "%s: no DDF anchor", path);
	header_parse(&m->anchor, a, size / DDF_SECTOR - 1);
	if (!m->anchor.crc_ok) {
		ddf_bad(m, RK_E_BADCRC, "DDF anchor: checksum %08x, computed %08x", m->anchor.crc, m->anchor.crc_calc);
		return RK_OK;
	}
	m->anchor.usable = 1;
	if (!revision_known(m->anchor.revision)) {
		ddf_bad(m, RK_E_NOTSUP, "DDF revision \"%s\" is not read (01.00.00, 01.02.00, 02.00.00 are)",
		        m->anchor.revision);
		return RK_OK;
	}
	if ((e = header_load(d, &m->primary, m->anchor.primary_lba, 1, a)) ||
	    (e = header_load(d, &m->secondary, m->anchor.secondary_lba, 2, a)))
		return e;
	header_choose(m);
	return RK_OK;
}

/* ---------------- sections ---------------- */

/* Reads section S of the active header into a new buffer (*OUT, *LEN
 * bytes), bounded against the device and RK_DDF_MAX_SECT_SECTORS; NULL
 * with the reason recorded when it cannot be. */
static rk_err section_read(rk_dev *d, struct rk_ddf *m, unsigned s, const char *what, uint8_t **out, size_t *len)
{
	const struct rk_ddf_header *h = rk_ddf_active(m);
	uint64_t start, end, sectors = rk_dev_size(d) / DDF_SECTOR;
	*out = NULL;
	*len = 0;
	uint32_t n = h->sect_len[s];
	if (n == 0 || n == RK_DDF_NONE32 || h->sect_off[s] == RK_DDF_NONE32) {
		ddf_bad(m, RK_E_CORRUPT, "DDF: the %s section is not recorded", what);
		return RK_OK;
	}
	if (n > RK_DDF_MAX_SECT_SECTORS || rk_add_ovf(h->lba, h->sect_off[s], &start) ||
	    rk_add_ovf(start, n, &end) || end > sectors) {
		ddf_bad(m, RK_E_CORRUPT, "DDF: the %s section (%u sectors at %u past sector %" PRIu64
		        ") does not fit the member's %" PRIu64 " sectors (or this decoder's %u)",
		        what, n, h->sect_off[s], h->lba, sectors, RK_DDF_MAX_SECT_SECTORS);
		return RK_OK;
	}
	uint8_t *b = malloc((size_t)n * DDF_SECTOR);
	if (!b)
		return rk_fail(RK_E_NOMEM, "out of memory");
	rk_err e = rk_dev_pread(d, b, (size_t)n * DDF_SECTOR, start * DDF_SECTOR);
	if (e) {
		free(b);
		return e;
	}
	*out = b;
	*len = (size_t)n * DDF_SECTOR;
	return RK_OK;
}

/* Checks the magic of a section's first structure; records why not. */
static int magic_ok(struct rk_ddf *m, const uint8_t *b, uint32_t magic, const char *what)
{
	if (rk_get_be32(b) == magic)
		return 1;
	ddf_bad(m, RK_E_CORRUPT, "DDF: the %s section has magic %08x, not %08x", what, rk_get_be32(b), magic);
	return 0;
}

static void controller_parse(struct rk_ddf *m, const uint8_t *b)
{
	if (!magic_ok(m, b, RK_DDF_CTRL_MAGIC, "controller data"))
		return;
	crc_check(&m->crc_ctrl, b, DDF_SECTOR);
	memcpy(m->ctrl_guid, b + 8, RK_DDF_GUID_LEN);
	m->ctrl_vendor_id = rk_get_be16(b + 32);
	m->ctrl_device_id = rk_get_be16(b + 34);
	m->ctrl_sub_vendor_id = rk_get_be16(b + 36);
	m->ctrl_sub_device_id = rk_get_be16(b + 38);
	memcpy(m->ctrl_product_id, b + 40, 16);
	m->ctrl_product_id[16] = 0;
	/* the controller's checksum is shown, not needed for views */
}

/* The physical disk records: a 64-byte head, then max_pdes entries of 64
 * bytes; the used ones (refnum not all ones) are kept. */
static rk_err phys_parse(struct rk_ddf *m, const uint8_t *b, size_t len)
{
	const struct rk_ddf_header *h = rk_ddf_active(m);
	/* mdadm of 2010 (util-linux's ddf-raid test image) wrote the disk
	 * data's magic here; mdadm reads it, so does this, the CRC decides */
	if (rk_get_be32(b) != RK_DDF_DATA_MAGIC && !magic_ok(m, b, RK_DDF_PHYS_MAGIC, "physical disk records"))
		return RK_OK;
	crc_check(&m->crc_phys, b, len);
	if (!m->crc_phys.ok)
		ddf_bad(m, RK_E_BADCRC, "DDF physical disk records: checksum %08x, computed %08x", m->crc_phys.stored,
		        m->crc_phys.calc);
	m->pd_used = rk_get_be16(b + 8);
	m->pd_max = rk_get_be16(b + 10);
	if (m->pd_max > h->max_pd_entries || 64 + (size_t)m->pd_max * 64 > len) {
		ddf_bad(m, RK_E_CORRUPT, "DDF: %u physical disk entries do not fit the header's %u or the section's %zu bytes",
		        m->pd_max, h->max_pd_entries, len);
		return RK_OK;
	}
	m->pds = calloc(m->pd_max ? m->pd_max : 1, sizeof *m->pds);
	if (!m->pds)
		return rk_fail(RK_E_NOMEM, "out of memory");
	for (uint32_t i = 0; i < m->pd_max; i++) {
		const uint8_t *e = b + 64 + (size_t)i * 64;
		if (rk_get_be32(e + 24) == RK_DDF_NONE32)
			continue;
		struct rk_ddf_pd *p = &m->pds[m->npds++];
		p->index = i;
		memcpy(p->guid, e, RK_DDF_GUID_LEN);
		p->refnum = rk_get_be32(e + 24);
		p->type = rk_get_be16(e + 28);
		p->state = rk_get_be16(e + 30);
		p->config_size = rk_get_be64(e + 32);
		memcpy(p->path, e + 40, 18);
		p->path[18] = 0;
	}
	return RK_OK;
}

/* The virtual disk records: a 64-byte head, then max_vdes entries of 64
 * bytes; the used ones (GUID not all ones) are kept. */
static rk_err virt_parse(struct rk_ddf *m, const uint8_t *b, size_t len)
{
	const struct rk_ddf_header *h = rk_ddf_active(m);
	if (!magic_ok(m, b, RK_DDF_VIRT_MAGIC, "virtual disk records"))
		return RK_OK;
	crc_check(&m->crc_virt, b, len);
	if (!m->crc_virt.ok)
		ddf_bad(m, RK_E_BADCRC, "DDF virtual disk records: checksum %08x, computed %08x", m->crc_virt.stored,
		        m->crc_virt.calc);
	m->vd_populated = rk_get_be16(b + 8);
	m->vd_max = rk_get_be16(b + 10);
	if (m->vd_max > h->max_vd_entries || 64 + (size_t)m->vd_max * 64 > len) {
		ddf_bad(m, RK_E_CORRUPT, "DDF: %u virtual disk entries do not fit the header's %u or the section's %zu bytes",
		        m->vd_max, h->max_vd_entries, len);
		return RK_OK;
	}
	m->vds = calloc(m->vd_max ? m->vd_max : 1, sizeof *m->vds);
	if (!m->vds)
		return rk_fail(RK_E_NOMEM, "out of memory");
	for (uint32_t i = 0; i < m->vd_max; i++) {
		const uint8_t *e = b + 64 + (size_t)i * 64;
		if (all_ff(e, RK_DDF_GUID_LEN))
			continue;
		struct rk_ddf_vd *v = &m->vds[m->nvds++];
		v->index = i;
		memcpy(v->guid, e, RK_DDF_GUID_LEN);
		v->unit = rk_get_be16(e + 24);
		v->guid_crc = rk_get_be16(e + 28);
		v->type = rk_get_be16(e + 30);
		v->state = e[32];
		v->init_state = e[33];
		memcpy(v->name, e + 48, 16);
		v->name[16] = 0;
	}
	return RK_OK;
}

/* The used entries of configuration record B (MPPE slots of refnums, then
 * MPPE 64-bit start LBAs): the first prim_elmnt_count used ones. */
static rk_err conf_refs(struct rk_ddf_conf *c, const uint8_t *b, uint32_t mppe)
{
	c->refnum = calloc(c->prim_elmnt_count, sizeof *c->refnum);
	c->lba = calloc(c->prim_elmnt_count, sizeof *c->lba);
	c->slot = calloc(c->prim_elmnt_count, sizeof *c->slot);
	if (!c->refnum || !c->lba || !c->slot)
		return rk_fail(RK_E_NOMEM, "out of memory");
	for (uint32_t i = 0; i < mppe && c->nrefs < c->prim_elmnt_count; i++) {
		uint32_t r = rk_get_be32(b + 512 + (size_t)i * 4);
		if (r == RK_DDF_NONE32)
			continue;
		c->refnum[c->nrefs] = r;
		c->lba[c->nrefs] = rk_get_be64(b + 512 + (size_t)mppe * 4 + (size_t)i * 8);
		c->slot[c->nrefs++] = i;
	}
	return RK_OK;
}

static void conf_free(struct rk_ddf_conf *c)
{
	free(c->refnum);
	free(c->lba);
	free(c->slot);
	memset(c, 0, sizeof *c);
}

/* One configuration record (LEN bytes at B, number REC) into C. */
static rk_err conf_parse(struct rk_ddf *m, struct rk_ddf_conf *c, const uint8_t *b, size_t len, uint32_t rec)
{
	uint32_t mppe = rk_ddf_active(m)->mppe;
	memset(c, 0, sizeof *c);
	c->record = rec;
	crc_check(&c->crc, b, len);
	memcpy(c->guid, b + 8, RK_DDF_GUID_LEN);
	c->timestamp = rk_get_be32(b + 32);
	c->seqnum = rk_get_be32(b + 36);
	c->prim_elmnt_count = rk_get_be16(b + 64);
	c->chunk_shift = b[66];
	c->prl = b[67];
	c->rlq = b[68];
	c->sec_elmnt_count = b[69];
	c->sec_elmnt_seq = b[70];
	c->srl = b[71];
	c->blocks = rk_get_be64(b + 72);
	c->array_blocks = rk_get_be64(b + 80);
	if (c->prim_elmnt_count == 0 || c->prim_elmnt_count > mppe) {
		ddf_bad(m, RK_E_CORRUPT, "DDF configuration record %u: %u members, the header allows 1 to %u", rec,
		        c->prim_elmnt_count, mppe);
		c->prim_elmnt_count = 0;
		return RK_OK;
	}
	if (!c->crc.ok)
		ddf_bad(m, RK_E_BADCRC, "DDF configuration record %u: checksum %08x, computed %08x", rec, c->crc.stored,
		        c->crc.calc);
	return conf_refs(c, b, mppe);
}

/* Keeps C unless a record of the same VD part (GUID, secondary sequence)
 * with a higher sequence number is kept already (mdadm keeps the newest). */
static void conf_keep(struct rk_ddf *m, struct rk_ddf_conf *c)
{
	for (uint32_t i = 0; i < m->nconfs; i++) {
		struct rk_ddf_conf *o = &m->confs[i];
		if (memcmp(o->guid, c->guid, RK_DDF_GUID_LEN) || o->sec_elmnt_seq != c->sec_elmnt_seq)
			continue;
		if (c->seqnum > o->seqnum) {
			conf_free(o);
			*o = *c;
		} else
			conf_free(c);
		return;
	}
	m->confs[m->nconfs++] = *c;
}

/* The configuration section: records of config_record_len sectors, each a
 * VD configuration, a spare assignment, unused (all ones) or vendor's. */
static rk_err config_parse(struct rk_ddf *m, const uint8_t *b, size_t len)
{
	const struct rk_ddf_header *h = rk_ddf_active(m);
	uint32_t crl = h->config_record_len, mppe = h->mppe;
	if (mppe == 0 || mppe > RK_DDF_MAX_MPPE || crl == 0 || (uint64_t)crl * DDF_SECTOR < 512 + (uint64_t)mppe * 12) {
		ddf_bad(m, RK_E_CORRUPT, "DDF: configuration records of %u sectors cannot hold %u members (1 to %u)",
		        crl, mppe, RK_DDF_MAX_MPPE);
		return RK_OK;
	}
	size_t rlen = (size_t)crl * DDF_SECTOR, nrec = len / rlen;
	m->confs = calloc(nrec < RK_DDF_MAX_CONFS ? nrec + 1 : RK_DDF_MAX_CONFS, sizeof *m->confs);
	if (!m->confs)
		return rk_fail(RK_E_NOMEM, "out of memory");
	for (size_t r = 0; r < nrec; r++) {
		const uint8_t *rb = b + r * rlen;
		uint32_t magic = rk_get_be32(rb);
		if (magic == RK_DDF_SPARE_MAGIC)
			m->nspare_records++;
		else if (magic != RK_DDF_CONF_MAGIC && magic != RK_DDF_NONE32)
			m->nother_records++;
		if (magic != RK_DDF_CONF_MAGIC)
			continue;
		if (m->nconfs >= RK_DDF_MAX_CONFS) {
			ddf_bad(m, RK_E_CORRUPT, "DDF: more than %u configuration records", RK_DDF_MAX_CONFS);
			return RK_OK;
		}
		struct rk_ddf_conf c;
		rk_err e = conf_parse(m, &c, rb, rlen, (uint32_t)r);
		if (e) {
			conf_free(&c);
			return e;
		}
		if (c.prim_elmnt_count)
			conf_keep(m, &c);
	}
	return RK_OK;
}

/* This disk's data: its GUID and reference number, found in the physical
 * disk records. */
static void data_parse(struct rk_ddf *m, const uint8_t *b)
{
	if (!magic_ok(m, b, RK_DDF_DATA_MAGIC, "physical disk data"))
		return;
	crc_check(&m->crc_data, b, DDF_SECTOR);
	if (!m->crc_data.ok)
		ddf_bad(m, RK_E_BADCRC, "DDF physical disk data: checksum %08x, computed %08x", m->crc_data.stored,
		        m->crc_data.calc);
	memcpy(m->dd_guid, b + 8, RK_DDF_GUID_LEN);
	m->dd_refnum = rk_get_be32(b + 32);
	m->dd_forced_ref = b[36];
	m->dd_forced_guid = b[37];
	for (uint32_t i = 0; i < m->npds; i++)
		if (!memcmp(m->pds[i].guid, m->dd_guid, RK_DDF_GUID_LEN))
			m->this_pd = (int)i;
	if (m->this_pd < 0)
		ddf_bad(m, RK_E_CORRUPT, "DDF: this disk (refnum %08x) is not in the physical disk records", m->dd_refnum);
	else if (m->pds[m->this_pd].refnum != m->dd_refnum)
		ddf_bad(m, RK_E_CORRUPT, "DDF: this disk's refnum %08x is %08x in the physical disk records", m->dd_refnum,
		        m->pds[m->this_pd].refnum);
}

/* Reads and parses the sections of the active header, in the order each
 * needs the previous (the disk data needs the physical disk records). */
static rk_err sections_load(rk_dev *d, struct rk_ddf *m)
{
	static const struct { unsigned s; const char *what; } order[] = {
		{ RK_DDF_S_CONTROLLER, "controller data" }, { RK_DDF_S_PHYS, "physical disk records" },
		{ RK_DDF_S_VIRT, "virtual disk records" }, { RK_DDF_S_CONFIG, "configuration" },
		{ RK_DDF_S_DATA, "physical disk data" },
	};
	for (size_t k = 0; k < sizeof order / sizeof order[0]; k++) {
		uint8_t *b;
		size_t len;
		rk_err e = section_read(d, m, order[k].s, order[k].what, &b, &len);
		if (e)
			return e;
		if (!b)
			continue;
		switch (order[k].s) {
		case RK_DDF_S_CONTROLLER: controller_parse(m, b); break;
		case RK_DDF_S_PHYS: e = phys_parse(m, b, len); break;
		case RK_DDF_S_VIRT: e = virt_parse(m, b, len); break;
		case RK_DDF_S_CONFIG: e = config_parse(m, b, len); break;
		default: data_parse(m, b); break;
		}
		free(b);
		if (e)
			return e;
	}
	return RK_OK;
}

static void ddf_release(void *obj)
{
	struct rk_ddf *m = obj;
	if (!m)
		return;
	for (uint32_t i = 0; i < m->nconfs; i++)
		conf_free(&m->confs[i]);
	free(m->confs);
	free(m->pds);
	free(m->vds);
	free(m);
}

static rk_err ddf_decode(rk_dev *d, const char *path, void **out)
{
	*out = NULL;
	struct rk_ddf *m = calloc(1, sizeof *m);
	if (!m)
		return rk_fail(RK_E_NOMEM, "out of memory");
	m->dev_size = rk_dev_size(d);
	m->this_pd = -1;
	rk_err e = headers_load(d, path, m);
	if (!e && m->active)
		e = sections_load(d, m);
	if (e) {
		ddf_release(m);
		return e;
	}
	*out = m;
	return RK_OK;
}

/* ---------------- probing ---------------- */

static void ddf_describe(const void *obj, struct rk_probe_result *r)
{
	const struct rk_ddf *m = obj;
	uint8_t u[16];
	char g[60];
	rk_view_fold_uuid(u, m->anchor.guid, RK_DDF_GUID_LEN);
	r->found = 1;
	snprintf(r->type, sizeof r->type, "ddf_raid_member");
	snprintf(r->usage, sizeof r->usage, "raid");
	uuid_unparse_lower(u, r->uuid);
	snprintf(r->version, sizeof r->version, "%s", m->anchor.revision);
	snprintf(r->what, sizeof r->what, "a DDF container member (container GUID %s)", guid_hex(m->anchor.guid, g));
}

static rk_err ddf_probe(rk_dev *d, const char *path, struct rk_probe_result *r)
{
	memset(r, 0, sizeof *r);
	void *obj = NULL;
	rk_err e = ddf_decode(d, path, &obj);
	if (e == RK_OK) {
		ddf_describe(obj, r);
		ddf_release(obj);
	}
	return e == RK_E_NOSB ? RK_OK : e;
}

/* ---------------- levels ---------------- */

int rk_ddf_md_level(const struct rk_ddf_conf *c, int32_t *level, uint32_t *layout, uint32_t *nroles)
{
	uint32_t n = c->prim_elmnt_count;
	*layout = 0;
	*nroles = n;
	if (c->sec_elmnt_count > 1) {
		/* RAID-10 as mdadm writes it: RAID-1 legs striped or spanned */
		if (c->prl != PRL_RAID1 || (c->srl != SRL_STRIPED && c->srl != SRL_SPANNED))
			return -1;
		if (n == 2 && c->rlq == 0)
			*layout = 0x102;
		else if (n == 3 && c->rlq == 1)
			*layout = 0x103;
		else
			return -1;
		*level = 10;
		*nroles = n * c->sec_elmnt_count;
		return 0;
	}
	switch (c->prl) {
	case PRL_CONCAT: *level = -1; return 0;
	case PRL_RAID0: *level = 0; return c->rlq == 0 ? 0 : -1;
	case PRL_RAID1:
		*level = 1;
		return (c->rlq == 0 && n == 2) || (c->rlq == 1 && n == 3) ? 0 : -1;
	case PRL_RAID1E:
		*level = 10;
		*layout = c->rlq == 0 ? 0x102 : 0x201;   /* adjacent: near 2; offset: mdadm's 0x201 */
		return c->rlq <= 1 ? 0 : -1;
	case PRL_RAID4: *level = 4; return c->rlq == 1 ? 0 : -1;   /* parity in the last extent */
	case PRL_RAID5: {
		/* RLQ 0: 0 restart (right-asymmetric), 2: N restart (left-asymmetric), 3: N continue (left-symmetric) */
		static const int8_t r5[4] = { 1, -1, 0, 2 };
		*level = 5;
		if (c->rlq > 3 || r5[c->rlq] < 0)
			return -1;
		*layout = (uint32_t)r5[c->rlq];
		return 0;
	}
	case PRL_RAID6: {
		/* RLQ 1: zero restart (md 8), 2: N restart (9), 3: N continue (10) */
		*level = 6;
		if (c->rlq < 1 || c->rlq > 3)
			return -1;
		*layout = (uint32_t)(7 + c->rlq);
		return 0;
	}
	default: return -1;
	}
}

/* ---------------- views ---------------- */

/* The physical disk record of REFNUM, or NULL. */
static const struct rk_ddf_pd *pd_of(const struct rk_ddf *m, uint32_t refnum)
{
	for (uint32_t i = 0; i < m->npds; i++)
		if (m->pds[i].refnum == refnum)
			return &m->pds[i];
	return NULL;
}

/* A role's state from its physical disk's: failed and missing disks are
 * faulty (the others went on without them), one being rebuilt is
 * rebuilding (DDF records no checkpoint: nothing counts as done), one
 * neither online nor rebuilding is faulty. */
static uint32_t role_state(const struct rk_ddf_pd *p)
{
	if (!p)
		return RK_ROLE_EMPTY;
	if (p->state & (RK_DDF_PD_FAILED | RK_DDF_PD_MISSING))
		return RK_ROLE_FAULTY;
	if (p->state & RK_DDF_PD_REBUILDING)
		return RK_ROLE_REBUILDING;
	return p->state & RK_DDF_PD_ONLINE ? RK_ROLE_ACTIVE : RK_ROLE_FAULTY;
}

/* The roles one configuration record C (one BVD: a leg of a RAID-10)
 * gives: positions seq * prim_elmnt_count + i. */
static rk_err roles_of_conf(const struct rk_ddf *m, const struct rk_ddf_conf *c, struct rk_sb *v)
{
	uint32_t base = (uint32_t)c->sec_elmnt_seq * c->prim_elmnt_count;
	if (base + c->prim_elmnt_count > v->nroles)
		return rk_fail(RK_E_CORRUPT, "DDF configuration record %u: secondary position %u of %u", c->record,
		               c->sec_elmnt_seq, c->sec_elmnt_count);
	for (uint32_t i = 0; i < c->prim_elmnt_count; i++) {
		struct rk_role *r = &v->roles[base + i];
		memset(r, 0, sizeof *r);
		r->state = RK_ROLE_EMPTY;
		if (i >= c->nrefs)
			continue;
		const struct rk_ddf_pd *p = pd_of(m, c->refnum[i]);
		r->state = role_state(p);
		if (p)
			rk_view_fold_uuid(r->member_uuid, p->guid, RK_DDF_GUID_LEN);
	}
	return RK_OK;
}

/* Spares past the roles: disks typed global or dedicated spare, not
 * active in a VD. */
static void roles_spares(const struct rk_ddf *m, struct rk_sb *v)
{
	v->nentries = v->nroles;
	for (uint32_t i = 0; i < m->npds && v->nentries < RK_SB_MAX_ROLES; i++) {
		const struct rk_ddf_pd *p = &m->pds[i];
		if (!(p->type & (RK_DDF_PD_GLOBAL_SPARE | RK_DDF_PD_SPARE)) || (p->type & RK_DDF_PD_ACTIVE_IN_VD))
			continue;
		struct rk_role *r = &v->roles[v->nentries++];
		memset(r, 0, sizeof *r);
		r->state = RK_ROLE_SPARE;
		rk_view_fold_uuid(r->member_uuid, p->guid, RK_DDF_GUID_LEN);
	}
}

/* The whole role table of the VD of configuration C (this disk's part of
 * it).  Legs of a RAID-10 that this disk holds no record of are listed
 * active without a member identity: only their own members know them. */
static rk_err view_roles(const struct rk_ddf *m, const struct rk_ddf_conf *c, struct rk_sb *v)
{
	for (uint32_t r = 0; r < v->nroles; r++) {
		memset(&v->roles[r], 0, sizeof v->roles[r]);
		v->roles[r].state = RK_ROLE_ACTIVE;
	}
	for (uint32_t i = 0; i < m->nconfs; i++) {
		const struct rk_ddf_conf *o = &m->confs[i];
		if (memcmp(o->guid, c->guid, RK_DDF_GUID_LEN))
			continue;
		if (o->prim_elmnt_count != c->prim_elmnt_count || o->sec_elmnt_count != c->sec_elmnt_count)
			return rk_fail(RK_E_CORRUPT, "DDF: configuration records %u and %u of one virtual disk disagree",
			               c->record, o->record);
		rk_err e = roles_of_conf(m, o, v);
		if (e)
			return e;
	}
	roles_spares(m, v);
	return RK_OK;
}

/* The VD record of GUID, or NULL. */
static const struct rk_ddf_vd *vd_of(const struct rk_ddf *m, const uint8_t *guid)
{
	for (uint32_t i = 0; i < m->nvds; i++)
		if (!memcmp(m->vds[i].guid, guid, RK_DDF_GUID_LEN))
			return &m->vds[i];
	return NULL;
}

/* Sectors to bytes, refusing what does not fit 64 bits. */
static int ddf_bytes(uint64_t sectors, uint64_t *out)
{
	if (sectors > UINT64_MAX / DDF_SECTOR)
		return -1;
	*out = sectors * DDF_SECTOR;
	return 0;
}

/* Level, layout, chunk, sizes and this disk's place of configuration C in
 * V.  K: this disk's entry in C. */
static rk_err view_geometry(const struct rk_ddf_conf *c, uint32_t k, struct rk_sb *v)
{
	if (c->sec_elmnt_count == 0 || c->sec_elmnt_seq >= c->sec_elmnt_count)
		return rk_fail(RK_E_CORRUPT, "DDF configuration record %u: secondary position %u of %u", c->record,
		               c->sec_elmnt_seq, c->sec_elmnt_count);
	if (rk_ddf_md_level(c, &v->level, &v->layout, &v->nroles))
		return rk_fail(RK_E_NOTSUP, "DDF configuration record %u: RAID level 0x%02x, qualifier %u, secondary "
		               "level %u over %u x %u members has no md equivalent served here", c->record, c->prl,
		               c->rlq, c->srl, c->prim_elmnt_count, c->sec_elmnt_count);
	if (v->nroles > RK_SB_MAX_ROLES)
		return rk_fail(RK_E_CORRUPT, "DDF: %u members", v->nroles);
	v->chunk = 0;
	if (v->level != 1 && v->level != -1) {
		if (c->chunk_shift > 15)
			return rk_fail(RK_E_CORRUPT, "DDF configuration record %u: chunk of 2^%u sectors", c->record,
			               c->chunk_shift);
		v->chunk = (uint64_t)DDF_SECTOR << c->chunk_shift;
	}
	if (ddf_bytes(c->lba[k], &v->data_offset) || ddf_bytes(c->blocks, &v->data_size) ||
	    ddf_bytes(c->array_blocks, &v->volume_size))
		return rk_fail(RK_E_CORRUPT, "DDF configuration record %u: start, size or array size overflows", c->record);
	v->this_role = (uint32_t)c->sec_elmnt_seq * c->prim_elmnt_count + k;
	return RK_OK;
}

/* The VD's state as a view's: clean when consistent and fully
 * initialised (mdadm's resync_start); a VD being reshaped ("morphing")
 * is not read. */
static rk_err view_state(const struct rk_ddf_vd *vd, struct rk_sb *v)
{
	if (vd->state & 0x08)
		return rk_fail(RK_E_NOTSUP, "DDF virtual disk %u is being reshaped (morphing): not read", vd->index);
	v->array_state = !(vd->state & 0x10) && (vd->init_state & 0x03) == 0x02 ? RK_ARRAY_CLEAN : RK_ARRAY_ACTIVE;
	memcpy(v->name, vd->name, 16);
	v->name[16] = 0;
	for (int i = 15; i >= 0 && (v->name[i] == ' ' || v->name[i] == 0); i--)
		v->name[i] = 0;
	return RK_OK;
}

/* The view of the VD of configuration C that this disk serves. */
static rk_err view_one(const struct rk_ddf *m, const struct rk_ddf_conf *c, uint64_t dev_size, struct rk_sb *v)
{
	const struct rk_ddf_pd *me = &m->pds[m->this_pd];
	const struct rk_ddf_vd *vd = vd_of(m, c->guid);
	char g[60];
	rk_view_init(v, RK_ORIGIN_DDF, "DDF");
	if (!vd)
		return rk_fail(RK_E_CORRUPT, "DDF configuration record %u: virtual disk %s is not in the virtual disk records",
		               c->record, guid_hex(c->guid, g));
	uint32_t k = 0;
	while (k < c->nrefs && c->refnum[k] != me->refnum)
		k++;
	if (k == c->nrefs)
		return rk_fail(RK_E_CORRUPT, "DDF configuration record %u on this disk (refnum %08x) does not list it",
		               c->record, me->refnum);
	rk_err e = view_geometry(c, k, v);
	if (!e)
		e = view_state(vd, v);
	if (!e)
		e = view_roles(m, c, v);
	if (e)
		return e;
	rk_view_fold_uuid(v->array_uuid, c->guid, RK_DDF_GUID_LEN);
	rk_view_fold_uuid(v->member_uuid, me->guid, RK_DDF_GUID_LEN);
	v->ctime = (uint64_t)rk_get_be32(c->guid + 16) + DDF_EPOCH;   /* mdadm: the GUID's time stamp */
	v->utime = (uint64_t)c->timestamp + DDF_EPOCH;
	v->events = rk_ddf_active(m)->seq;
	v->sb_offset = rk_ddf_active(m)->lba * DDF_SECTOR;
	v->dev_size = dev_size;
	if ((e = rk_view_check(v, dev_size))) {
		char why[256];
		snprintf(why, sizeof why, "%s", rk_errmsg());   /* rk_fail reuses the buffer */
		return rk_fail(e, "DDF virtual disk %u: %s", vd->index, why);
	}
	return RK_OK;
}

/* Whether configuration I is the first of its VD on this disk (a VD gives
 * one view, however many of its parts this disk holds records of). */
static int conf_first_of_vd(const struct rk_ddf *m, uint32_t i)
{
	for (uint32_t j = 0; j < i; j++)
		if (!memcmp(m->confs[j].guid, m->confs[i].guid, RK_DDF_GUID_LEN))
			return 0;
	return 1;
}

/* This disk's entry in the records of the VD of configuration I: the
 * record that lists it (a disk sits in one part of a VD). */
static const struct rk_ddf_conf *conf_with_me(const struct rk_ddf *m, uint32_t i)
{
	uint32_t me = m->pds[m->this_pd].refnum;
	for (uint32_t j = i; j < m->nconfs; j++) {
		const struct rk_ddf_conf *c = &m->confs[j];
		if (memcmp(c->guid, m->confs[i].guid, RK_DDF_GUID_LEN))
			continue;
		for (uint32_t k = 0; k < c->nrefs; k++)
			if (c->refnum[k] == me)
				return c;
	}
	return &m->confs[i];
}

static rk_err ddf_views(const void *obj, uint64_t dev_size, struct rk_sb **out, uint32_t *n)
{
	const struct rk_ddf *m = obj;
	*out = NULL;
	*n = 0;
	if (m->why[0])
		return rk_fail(m->err ? m->err : RK_E_CORRUPT, "%s", m->why);
	if (m->this_pd < 0)
		return rk_fail(RK_E_CORRUPT, "DDF: this disk is not in the physical disk records");
	rk_err first = RK_OK;
	char why[400] = "";
	for (uint32_t i = 0; i < m->nconfs; i++) {
		if (!conf_first_of_vd(m, i))
			continue;
		struct rk_sb *v = rk_view_add(out, n);
		if (!v) {
			free(*out);
			*out = NULL;
			*n = 0;
			return rk_fail(RK_E_NOMEM, "out of memory");
		}
		rk_err e = view_one(m, conf_with_me(m, i), dev_size, v);
		if (e == RK_E_NOTSUP) {
			/* a VD of a level not served: the others still are */
			if (!first)
				snprintf(why, sizeof why, "%s", rk_errmsg());
			first = e;
			(*n)--;
			continue;
		}
		if (e) {
			free(*out);
			*out = NULL;
			*n = 0;
			return e;
		}
	}
	if (*n == 0) {
		/* VDs dropped as not served (or none at all): nothing returned */
		free(*out);
		*out = NULL;
		if (first)
			return rk_fail(first, "%s", why);
	}
	return RK_OK;
}

/* ---------------- printing ---------------- */

static const char *vd_state_word(uint8_t s)
{
	static const char *const w[8] = { "Optimal", "Degraded", "Deleted", "Missing", "Failed", "Partially Optimal",
	                                  "-reserved-", "-reserved-" };
	return w[s & 7];
}

static const char *vd_init_word(uint8_t s)
{
	static const char *const w[4] = { "Not Initialised", "QuickInit in Progress", "Fully Initialised", "*UNKNOWN*" };
	return w[s & 3];
}

static const char *vd_access_word(uint8_t s)
{
	static const char *const w[4] = { "Read/Write", "Reserved", "Read Only", "Blocked (no access)" };
	return w[(s >> 6) & 3];
}

/* mdadm's state words of a VD: "Optimal, Consistent" and the like. */
static const char *vd_state_text(uint8_t s, char *buf, size_t len)
{
	snprintf(buf, len, "%s, %s%s", vd_state_word(s), (s & 0x08) ? "Morphing, " : "",
	         (s & 0x10) ? "Not Consistent" : "Consistent");
	return buf;
}

static const char *ddf_level_word(uint8_t prl)
{
	switch (prl) {
	case PRL_RAID0: return "RAID0";
	case PRL_RAID1: return "RAID1";
	case PRL_RAID3: return "RAID3";
	case PRL_RAID4: return "RAID4";
	case PRL_RAID5: return "RAID5";
	case PRL_RAID1E: return "RAID1E";
	case PRL_JBOD: return "JBOD";
	case PRL_CONCAT: return "CONCAT";
	case PRL_RAID5E: return "RAID5E";
	case PRL_RAID5EE: return "RAID5EE";
	case PRL_RAID6: return "RAID6";
	default: return "-unknown-";
	}
}

static const char *ddf_sec_level_word(uint8_t srl)
{
	static const char *const w[4] = { "Striped", "Mirrored", "Concat", "Spanned" };
	return srl < 4 ? w[srl] : "-unknown-";
}

/* mdadm's words of a PD's type and state: "active/Online". */
static const char *pd_words(const struct rk_ddf_pd *p, char *buf, size_t len)
{
	unsigned t = p->type, s = p->state;
	if (s & RK_DDF_PD_FAILED)
		s &= ~(unsigned)(RK_DDF_PD_ONLINE | RK_DDF_PD_REBUILDING | RK_DDF_PD_TRANSITION);
	snprintf(buf, len, "%s%s%s%s%s/%s%s%s%s%s%s%s", (t & 2) ? "active" : "", (t & 4) ? "Global-Spare" : "",
	         (t & 8) ? "spare" : "", (t & 16) ? ", foreign" : "", (t & 32) ? "pass-through" : "",
	         (s & 1) ? "Online" : "Offline", (s & 2) ? ", Failed" : "", (s & 4) ? ", Rebuilding" : "",
	         (s & 8) ? ", in-transition" : "", (s & 16) ? ", SMART-errors" : "",
	         (s & 32) ? ", Unrecovered-Read-Errors" : "", (s & 64) ? ", Missing" : "");
	return buf;
}

/* The PD number (index in the records) of REFNUM, -1 when not listed. */
static int64_t pd_number(const struct rk_ddf *m, uint32_t refnum)
{
	const struct rk_ddf_pd *p = pd_of(m, refnum);
	return p ? (int64_t)p->index : -1;
}

static const char *crc_word(const struct rk_ddf_crc *c)
{
	return !c->read ? "not read" : c->ok ? "correct" : "WRONG";
}

static void text_header(FILE *f, const char *ind, const char *what, const struct rk_ddf_header *h)
{
	if (!h->found && h->why[0]) {
		fprintf(f, "%s    %-15s: sector %" PRIu64 ", %s\n", ind, what, h->lba, h->why);
		return;
	}
	fprintf(f, "%s    %-15s: sector %" PRIu64 ", seq %08x, %s, checksum %08x (%s)%s%s\n", ind, what, h->lba, h->seq,
	        h->openflag ? "open" : "closed", h->crc, h->crc_ok ? "correct" : "WRONG", h->usable ? "" : ", unusable: ",
	        h->usable ? "" : h->why);
}

/* A configuration record as mdadm's examine_vd shows it. */
static void text_conf(FILE *f, const char *ind, const struct rk_ddf *m, const struct rk_ddf_conf *c)
{
	int32_t lv;
	uint32_t lay, nr;
	char lw[24], ln[48];
	fprintf(f, "%s      config record %u: seq %08x, checksum %08x (%s)\n", ind, c->record, c->seqnum, c->crc.stored,
	        crc_word(&c->crc));
	fprintf(f, "%s        raid devices  : %u (", ind, c->prim_elmnt_count);
	for (uint32_t i = 0; i < c->nrefs; i++) {
		int64_t pd = pd_number(m, c->refnum[i]);
		if (pd < 0)
			fprintf(f, "%s--@%" PRIu64 "K", i ? " " : "", c->lba[i] / 2);
		else
			fprintf(f, "%s%" PRId64 "@%" PRIu64 "K", i ? " " : "", pd, c->lba[i] / 2);
	}
	fprintf(f, ")\n");
	if (c->chunk_shift != 255)
		fprintf(f, "%s        chunk size    : %u sectors\n", ind, c->chunk_shift < 32 ? 1u << c->chunk_shift : 0u);
	fprintf(f, "%s        raid level    : %s\n", ind, ddf_level_word(c->prl));
	if (c->sec_elmnt_count != 1) {
		fprintf(f, "%s        secondary     : position %u of %u, %s\n", ind, c->sec_elmnt_seq, c->sec_elmnt_count,
		        ddf_sec_level_word(c->srl));
	}
	if (rk_ddf_md_level(c, &lv, &lay, &nr) == 0) {
		const char *lname = rk_layout_name(lv, lay, ln, sizeof ln);
		fprintf(f, "%s        as md         : %s, layout %s (%u), %u members\n", ind,
		        rk_fmt_md_level_name(lv, lw, sizeof lw), lname && *lname ? lname : "-", lay, nr);
	} else
		fprintf(f, "%s        as md         : none\n", ind);
	fprintf(f, "%s        device size   : %" PRIu64 " KiB\n", ind, c->blocks / 2);
	fprintf(f, "%s        array size    : %" PRIu64 " KiB\n", ind, c->array_blocks / 2);
}

static void text_vds(FILE *f, const char *ind, const struct rk_ddf *m)
{
	char g[60], st[64], t[40];
	fprintf(f, "%s    virtual disks  : %u (of %u entries)\n", ind, m->vd_populated, m->vd_max);
	for (uint32_t i = 0; i < m->nvds; i++) {
		const struct rk_ddf_vd *v = &m->vds[i];
		fprintf(f, "%s    VD %u GUID       : %s\n", ind, v->index, guid_hex(v->guid, g));
		fprintf(f, "%s      created      : %s\n", ind, rk_print_time((uint64_t)rk_get_be32(v->guid + 16) + DDF_EPOCH, t, sizeof t));
		fprintf(f, "%s      unit         : %u\n", ind, v->unit);
		fprintf(f, "%s      state        : %s\n", ind, vd_state_text(v->state, st, sizeof st));
		fprintf(f, "%s      init state   : %s\n", ind, vd_init_word(v->init_state));
		fprintf(f, "%s      access       : %s\n", ind, vd_access_word(v->init_state));
		rk_esc_fprintf(f, "%s      name         : %.16s\n", ind, v->name);
		for (uint32_t k = 0; k < m->nconfs; k++)
			if (!memcmp(m->confs[k].guid, v->guid, RK_DDF_GUID_LEN))
				text_conf(f, ind, m, &m->confs[k]);
	}
}

static void text_pds(FILE *f, const char *ind, const struct rk_ddf *m)
{
	char w[160], g[60];
	fprintf(f, "%s    physical disks : %u used of %u entries (checksum %s)\n", ind, m->pd_used, m->pd_max,
	        crc_word(&m->crc_phys));
	fprintf(f, "%s      Number    RefNo      Size       Type/State\n", ind);
	for (uint32_t i = 0; i < m->npds; i++) {
		const struct rk_ddf_pd *p = &m->pds[i];
		fprintf(f, "%s       %4u    %08x  %8" PRIu64 "K  %s%s\n", ind, p->index, p->refnum, p->config_size >> 1,
		        pd_words(p, w, sizeof w), (int)i == m->this_pd ? "  (this disk)" : "");
	}
	fprintf(f, "%s    this disk      : GUID %s, refnum %08x, checksum %s\n", ind, guid_hex(m->dd_guid, g),
	        m->dd_refnum, crc_word(&m->crc_data));
}

static void ddf_text(FILE *f, const void *obj, const char *ind)
{
	const struct rk_ddf *m = obj;
	const struct rk_ddf_header *h = rk_ddf_active(m);
	char g[60], t[40];
	ind = ind ? ind : "";
	fprintf(f, "%sDDF anchor at sector %" PRIu64 " (magic %08x, checksum %08x, %s)\n", ind, m->anchor.lba,
	        RK_DDF_HEADER_MAGIC, m->anchor.crc, m->anchor.crc_ok ? "correct" : "WRONG");
	rk_esc_fprintf(f, "%s    version        : %s\n", ind, m->anchor.revision);
	fprintf(f, "%s    container GUID : %s\n", ind, guid_hex(m->anchor.guid, g));
	fprintf(f, "%s    created        : %s\n", ind,
	        rk_print_time((uint64_t)rk_get_be32(m->anchor.guid + 16) + DDF_EPOCH, t, sizeof t));
	if (m->anchor.usable) {
		text_header(f, ind, "primary", &m->primary);
		text_header(f, ind, "secondary", &m->secondary);
	}
	if (h) {
		fprintf(f, "%s    header used    : %s\n", ind, m->active_why);
		fprintf(f, "%s    seq            : %08x\n", ind, h->seq);
		fprintf(f, "%s    redundant hdr  : %s\n", ind, m->secondary.found ? "yes" : "no");
		fprintf(f, "%s    controller GUID: %s (checksum %s)\n", ind, guid_hex(m->ctrl_guid, g), crc_word(&m->crc_ctrl));
		rk_esc_fprintf(f, "%s    controller     : %04x:%04x %.16s\n", ind, m->ctrl_vendor_id, m->ctrl_device_id,
		               m->ctrl_product_id);
		fprintf(f, "%s    limits         : %u PDs, %u VDs, %u partitions, %u members per VD part\n", ind,
		        h->max_pd_entries, h->max_vd_entries, h->max_partitions, h->mppe);
		text_vds(f, ind, m);
		text_pds(f, ind, m);
	}
	/* the reason may quote member bytes (a revision): in words form */
	rk_esc_fprintf(f, "%s    usable         : %s\n", ind, m->why[0] ? m->why : "yes");
}

/* ---------------- JSON ---------------- */

static void json_guid(rk_json *j, const char *k, const uint8_t *g)
{
	char b[60];
	rk_json_kstr(j, k, guid_hex(g, b));
}

static void json_crc(rk_json *j, const char *k, const struct rk_ddf_crc *c)
{
	rk_json_key(j, k);
	if (!c->read) {
		rk_json_null(j);
		return;
	}
	rk_json_obj_begin(j);
	rk_json_ku64(j, "stored", c->stored);
	rk_json_ku64(j, "computed", c->calc);
	rk_json_kbool(j, "ok", c->ok);
	rk_json_obj_end(j);
}

static void json_header(rk_json *j, const char *k, const struct rk_ddf_header *h)
{
	rk_json_key(j, k);
	rk_json_obj_begin(j);
	rk_json_ku64(j, "lba", h->lba);
	rk_json_kbool(j, "found", h->found);
	rk_json_kbool(j, "checksum_ok", h->crc_ok);
	rk_json_kbool(j, "usable", h->usable);
	rk_json_kstr(j, "why", h->usable ? NULL : h->why);
	if (h->found) {
		rk_json_ku64(j, "checksum", h->crc);
		rk_json_ku64(j, "seq", h->seq);
		rk_json_ku64(j, "timestamp", (uint64_t)h->timestamp + DDF_EPOCH);
		rk_json_kbool(j, "open", h->openflag != 0);
		rk_json_ku64(j, "type", h->type);
	}
	rk_json_obj_end(j);
}

static void json_conf(rk_json *j, const struct rk_ddf *m, const struct rk_ddf_conf *c)
{
	int32_t lv;
	uint32_t lay, nr;
	char lw[24];
	rk_json_obj_begin(j);
	rk_json_ku64(j, "record", c->record);
	json_crc(j, "checksum", &c->crc);
	rk_json_ku64(j, "seqnum", c->seqnum);
	rk_json_ku64(j, "timestamp", (uint64_t)c->timestamp + DDF_EPOCH);
	rk_json_kstr(j, "raid_level_ddf", ddf_level_word(c->prl));
	rk_json_ku64(j, "prl", c->prl);
	rk_json_ku64(j, "rlq", c->rlq);
	rk_json_ku64(j, "srl", c->srl);
	rk_json_kstr(j, "secondary_level", c->sec_elmnt_count != 1 ? ddf_sec_level_word(c->srl) : NULL);
	rk_json_ku64(j, "prim_elmnt_count", c->prim_elmnt_count);
	rk_json_ku64(j, "sec_elmnt_count", c->sec_elmnt_count);
	rk_json_ku64(j, "sec_elmnt_seq", c->sec_elmnt_seq);
	rk_json_ku64(j, "chunk_sectors", c->chunk_shift < 32 ? 1ull << c->chunk_shift : 0);
	int ok = rk_ddf_md_level(c, &lv, &lay, &nr) == 0;
	rk_json_kstr(j, "level", ok ? rk_fmt_md_level_name(lv, lw, sizeof lw) : NULL);
	rk_json_key(j, "layout");
	if (ok)
		rk_json_u64(j, lay);
	else
		rk_json_null(j);
	rk_json_ku64(j, "blocks", c->blocks);
	rk_json_ku64(j, "array_blocks", c->array_blocks);
	/* this disk's role in the VD: its leg's base plus its place in the list */
	rk_json_key(j, "role");
	uint32_t k = 0;
	while (k < c->nrefs && c->refnum[k] != m->dd_refnum)
		k++;
	if (k < c->nrefs)
		rk_json_u64(j, (uint64_t)c->sec_elmnt_seq * c->prim_elmnt_count + k);
	else
		rk_json_null(j);
	rk_json_key(j, "members");
	rk_json_arr_begin(j);
	for (uint32_t i = 0; i < c->nrefs; i++) {
		rk_json_obj_begin(j);
		rk_json_ku64(j, "refnum", c->refnum[i]);
		rk_json_key(j, "pd");
		int64_t pd = pd_number(m, c->refnum[i]);
		if (pd < 0)
			rk_json_null(j);
		else
			rk_json_u64(j, (uint64_t)pd);
		rk_json_ku64(j, "lba", c->lba[i]);
		rk_json_obj_end(j);
	}
	rk_json_arr_end(j);
	rk_json_obj_end(j);
}

static void json_vds(rk_json *j, const struct rk_ddf *m)
{
	char st[64];
	rk_json_key(j, "virtual_disks");
	rk_json_arr_begin(j);
	for (uint32_t i = 0; i < m->nvds; i++) {
		const struct rk_ddf_vd *v = &m->vds[i];
		rk_json_obj_begin(j);
		rk_json_ku64(j, "index", v->index);
		json_guid(j, "guid", v->guid);
		rk_json_ku64(j, "unit", v->unit);
		rk_json_kstr(j, "state", vd_state_text(v->state, st, sizeof st));
		rk_json_kstr(j, "init_state", vd_init_word(v->init_state));
		rk_json_kstr(j, "access", vd_access_word(v->init_state));
		rk_json_key(j, "name");
		rk_json_str(j, v->name);
		rk_json_key(j, "configs");
		rk_json_arr_begin(j);
		for (uint32_t k = 0; k < m->nconfs; k++)
			if (!memcmp(m->confs[k].guid, v->guid, RK_DDF_GUID_LEN))
				json_conf(j, m, &m->confs[k]);
		rk_json_arr_end(j);
		rk_json_obj_end(j);
	}
	rk_json_arr_end(j);
}

static void json_pds(rk_json *j, const struct rk_ddf *m)
{
	char w[160];
	rk_json_key(j, "physical_disks");
	rk_json_arr_begin(j);
	for (uint32_t i = 0; i < m->npds; i++) {
		const struct rk_ddf_pd *p = &m->pds[i];
		rk_json_obj_begin(j);
		rk_json_ku64(j, "index", p->index);
		json_guid(j, "guid", p->guid);
		rk_json_ku64(j, "refnum", p->refnum);
		rk_json_ku64(j, "type", p->type);
		rk_json_ku64(j, "state", p->state);
		rk_json_kstr(j, "type_state", pd_words(p, w, sizeof w));
		rk_json_ku64(j, "size", p->config_size > UINT64_MAX / 512 ? UINT64_MAX : p->config_size * 512);
		rk_json_kbool(j, "this_disk", (int)i == m->this_pd);
		rk_json_obj_end(j);
	}
	rk_json_arr_end(j);
}

/* The keys that need the active header. */
static void json_body(rk_json *j, const struct rk_ddf *m, const struct rk_ddf_header *h)
{
	rk_json_kstr(j, "header_used", m->active_why);
	rk_json_ku64(j, "seq", h->seq);
	rk_json_kbool(j, "redundant_header", m->secondary.found);
	json_guid(j, "controller_guid", m->ctrl_guid);
	json_crc(j, "controller_checksum", &m->crc_ctrl);
	rk_json_ku64(j, "controller_vendor_id", m->ctrl_vendor_id);
	rk_json_ku64(j, "controller_device_id", m->ctrl_device_id);
	rk_json_kstr(j, "controller_product_id", m->ctrl_product_id);
	rk_json_ku64(j, "max_pd_entries", h->max_pd_entries);
	rk_json_ku64(j, "max_vd_entries", h->max_vd_entries);
	rk_json_ku64(j, "max_partitions", h->max_partitions);
	rk_json_ku64(j, "max_primary_element_entries", h->mppe);
	rk_json_ku64(j, "config_record_len", h->config_record_len);
	json_crc(j, "physical_disks_checksum", &m->crc_phys);
	json_crc(j, "virtual_disks_checksum", &m->crc_virt);
	rk_json_ku64(j, "pd_used", m->pd_used);
	rk_json_ku64(j, "pd_max", m->pd_max);
	rk_json_ku64(j, "vd_populated", m->vd_populated);
	rk_json_ku64(j, "vd_max", m->vd_max);
	json_vds(j, m);
	json_pds(j, m);
	json_guid(j, "this_disk_guid", m->dd_guid);
	rk_json_ku64(j, "this_disk_refnum", m->dd_refnum);
	json_crc(j, "this_disk_checksum", &m->crc_data);
	rk_json_ku64(j, "spare_records", m->nspare_records);
	rk_json_ku64(j, "other_records", m->nother_records);
}

static void ddf_json(rk_json *j, const void *obj)
{
	const struct rk_ddf *m = obj;
	const struct rk_ddf_header *h = rk_ddf_active(m);
	char t[40];
	rk_json_obj_begin(j);
	rk_json_kstr(j, "format", "ddf");
	rk_json_key(j, "version");
	rk_json_str(j, m->anchor.revision);
	rk_json_ku64(j, "sb_offset", m->anchor.lba * DDF_SECTOR);
	rk_json_kbool(j, "checksum_ok", m->anchor.crc_ok);
	rk_json_ku64(j, "checksum", m->anchor.crc);
	json_guid(j, "container_guid", m->anchor.guid);
	rk_json_kstr(j, "created", rk_print_time((uint64_t)rk_get_be32(m->anchor.guid + 16) + DDF_EPOCH, t, sizeof t));
	json_header(j, "primary", &m->primary);
	json_header(j, "secondary", &m->secondary);
	if (h)
		json_body(j, m, h);
	rk_json_kbool(j, "usable", !m->why[0]);
	rk_json_kstr(j, "why", m->why[0] ? m->why : NULL);
	rk_json_obj_end(j);
}

const struct rk_meta_fmt rk_fmt_ddf = {
	"ddf", "DDF", ddf_probe, ddf_decode, ddf_text, ddf_json, ddf_release, ddf_views,
};
