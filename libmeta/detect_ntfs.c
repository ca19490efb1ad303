/* detect_ntfs.c: NTFS as a hypothesis's volume reads it.  MFT records
 * (update sequence fixups, the runs of a record's unnamed $DATA) for the
 * allocation map (detect_alloc.c) and for the predictions here: records
 * numbered where they sit, the backup boot sector, and the last cluster
 * of each file the first records map, which holds the file's last bytes
 * followed by zeros (dt_tail_check) where the slack was zero before:
 * Windows zeroes it only to the sector's end, and a cluster's later
 * sectors keep what they held (dt_tails_count).  Every field read is
 * hostile: offsets are checked against the record before use. */
#include <stdlib.h>
#include <string.h>

#include "detect_int.h"
#include "rk_le.h"
#include "rk_util.h"

#define NT_RECORDS 48u    /* records checked for their numbers */
#define NT_FILES 512u     /* records looked at for files */
#define NT_TAILS 256u     /* file tails checked */

/* See detect_int.h. */
int dt_ntfs_fixup(uint8_t *r, size_t rec)
{
	uint32_t uo = rk_get_le16(r + 4), un = rk_get_le16(r + 6);
	if (un < 2 || uo + 2ull * un > rec || (un - 1) * 512ull > rec)
		return 0;
	for (uint32_t i = 1; i < un; i++) {
		uint8_t *end = r + i * 512 - 2;
		if (memcmp(end, r + uo, 2))
			return 0;   /* torn, or not a record */
		memcpy(end, r + uo + 2 * i, 2);
	}
	return 1;
}

/* A little-endian integer of N (0..8) bytes at P; signed when SIGNED. */
static int64_t le_n(const uint8_t *p, uint32_t n, int sgn)
{
	uint64_t v = 0;
	for (uint32_t i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	if (sgn && n && n < 8 && (p[n - 1] & 0x80))
		v |= ~0ull << (8 * n);
	return (int64_t)v;
}

/* Decodes the runlist at R[OFF..END) into M (1 when any). */
static int runs_decode(struct dt_runs *m, const uint8_t *r, uint32_t off, uint32_t end)
{
	uint64_t vcn = 0;
	int64_t lcn = 0;
	m->n = 0;
	while (off < end && r[off] && m->n < DT_RUNS) {
		uint32_t ln = r[off] & 15, on = r[off] >> 4;
		if (!ln || ln > 8 || on > 8 || off + 1 + ln + on > end)
			return 0;
		uint64_t len = (uint64_t)le_n(r + off + 1, ln, 0);
		int64_t d = le_n(r + off + 1 + ln, on, 1);
		if (!len || len > (1ull << 40))
			return 0;
		lcn += d;
		if (on && (lcn < 0 || (uint64_t)lcn > (1ull << 40)))
			return 0;
		m->vcn[m->n] = vcn;
		m->len[m->n] = len;
		m->lcn[m->n] = on ? (uint64_t)lcn : UINT64_MAX;
		m->n++;
		vcn += len;
		off += 1 + ln + on;
	}
	return m->n > 0;
}

/* See detect_int.h. */
int dt_ntfs_data_runs(struct dt_runs *m, const uint8_t *r, size_t rec)
{
	uint32_t at = rk_get_le16(r + 0x14);
	for (int guard = 0; guard < 32 && at + 16 <= rec; guard++) {
		uint32_t type = rk_get_le32(r + at), len = rk_get_le32(r + at + 4);
		if (type == 0xFFFFFFFFu || len < 16 || len > rec - at)
			return 0;
		if (type == 0x80 && r[at + 8] == 1 && r[at + 9] == 0 && len >= 0x40) {
			uint32_t ro = rk_get_le16(r + at + 0x20);
			m->flags = rk_get_le16(r + at + 0x0C);
			m->size = rk_get_le64(r + at + 0x30);
			m->valid = rk_get_le64(r + at + 0x38);
			return rk_get_le64(r + at + 0x10) == 0 && ro < len && runs_decode(m, r, at + ro, at + len);
		}
		at += len;
	}
	return 0;
}

/* See detect_int.h. */
uint64_t dt_ntfs_record_at(const struct dt_fs *fs, uint64_t n)
{
	if (!fs->ntfs || !fs->ntfs_clus || fs->ntfs_mft_lcn >= (1ull << 40) || n >= (1ull << 32))
		return DT_NONE;
	uint64_t b = n * fs->ntfs_rec;
	if (!fs->ntfs_mft_recs)   /* $MFT unread: one run from the boot sector's cluster */
		return fs->ntfs_mft_lcn * fs->ntfs_clus + b;
	if (n >= fs->ntfs_mft_recs)
		return DT_NONE;
	uint64_t lcn = dt_runs_lcn(&fs->ntfs_mft_runs, b / fs->ntfs_clus);
	return lcn < (1ull << 40) ? lcn * fs->ntfs_clus + b % fs->ntfs_clus : DT_NONE;
}

/* See detect_int.h. */
void dt_ntfs_learn_mft(struct dt_ctx *c)
{
	struct dt_fs *fs = &c->fs;
	uint32_t rec = fs->ntfs_rec;
	fs->ntfs_mft_recs = 0;
	if (!fs->ntfs || rec < 512 || rec > 4096 || rec % 512)
		return;
	uint8_t r[4096];
	struct dt_runs m;
	for (uint32_t k = 0; k < c->nanc; k++) {
		const struct dt_anchor *a = &c->anc[k];
		if (a->kind != DT_NTFS_MFT || a->raw || a->ioff % 512 || dt_read(c, a->img, a->ioff, r, rec) ||
		    !dt_ntfs_fixup(r, rec) || !dt_ntfs_data_runs(&m, r, rec) || m.lcn[0] != fs->ntfs_mft_lcn ||
		    m.size < 16ull * rec)
			continue;
		fs->ntfs_mft_recs = m.size / rec;
		fs->ntfs_mft_runs = m;
		return;
	}
}

/* See detect_int.h. */
uint64_t dt_runs_lcn(const struct dt_runs *m, uint64_t vcn)
{
	for (uint32_t i = 0; i < m->n; i++)
		if (vcn >= m->vcn[i] && vcn - m->vcn[i] < m->len[i])
			return m->lcn[i] == UINT64_MAX ? UINT64_MAX : m->lcn[i] + (vcn - m->vcn[i]);
	return UINT64_MAX;
}

struct nq { struct dt_ctx *c; struct dt_hyp *h; uint64_t base; uint32_t limit; };

static int nr(struct nq *q, uint64_t v, uint8_t *buf, size_t len)
{
	if (v > UINT64_MAX - q->base || (q->limit && q->h->probe_ok + q->h->probe_bad >= q->limit))
		return 1;
	return dt_vread(q->c, q->h, q->base + v, buf, len) != 0;
}

/* The last cluster of the file in record R (REC bytes, fixed up; clusters
 * of CLUS bytes): dt_tail_check's verdict, -1 when there is none to take. */
static int ntfs_tail(struct nq *q, const uint8_t *r, size_t rec, uint64_t clus, uint8_t *buf)
{
	struct dt_runs m;
	if ((rk_get_le16(r + 0x16) & 3) != 1 || !dt_ntfs_data_runs(&m, r, rec) || (m.flags & 0x00FF) ||
	    !m.size || m.valid < m.size)
		return -1;   /* not a file in use, compressed, or its end never written */
	uint64_t lcn = dt_runs_lcn(&m, (m.size - 1) / clus);
	if (lcn == UINT64_MAX || lcn > (UINT64_MAX - q->base) / clus - 1)
		return -1;
	return dt_tail_check(q->c, q->h, q->base + lcn * clus, (uint32_t)clus, m.size, buf);
}

/* Where record N of the $MFT at cluster MFT (clusters of CLUS bytes,
 * records of REC) lies in the file system: through the $MFT's own runs
 * when they were learnt for this one (dt_ntfs_learn_mft), else as one
 * run; DT_NONE past the $MFT's end.  A full NTFS grows its $MFT in more
 * runs (seed 5031: 87% full, records past 123 in two runs elsewhere; 16
 * predictions failed on the true RAID-10 f2 of 2, which was held back). */
static uint64_t record_at(const struct dt_fs *fs, uint64_t mft, uint64_t clus, uint64_t rec, uint32_t n)
{
	if (fs->ntfs && fs->ntfs_mft_recs && fs->ntfs_mft_lcn == mft && fs->ntfs_clus == clus && fs->ntfs_rec == rec)
		return dt_ntfs_record_at(fs, n);
	return mft * clus + n * rec;
}

/* See detect_int.h. */
void dt_ntfs_probe(struct dt_ctx *c, struct dt_hyp *h, uint64_t base, uint32_t limit, const uint8_t *bt)
{
	struct nq q = { c, h, base, limit };
	uint32_t bps = rk_get_le16(bt + 0x0B), spc = bt[0x0D];
	uint64_t clus = spc <= 0x80 ? (uint64_t)spc * bps : 0;
	int8_t cpr = (int8_t)bt[0x40];
	uint64_t rec = cpr < 0 ? (cpr >= -20 ? 1ull << -cpr : 0) : (uint64_t)cpr * clus;
	uint64_t mft = rk_get_le64(bt + 0x30), secs = rk_get_le64(bt + 0x28);
	if (!clus || rec < 256 || rec > 65536 || mft > (1ull << 40))
		return;
	uint8_t r[64];
	for (uint32_t k = 0; k < NT_RECORDS; k++) {
		uint32_t n = k < 16 ? k : 16 + (k - 16) * 7;
		uint64_t at = record_at(&c->fs, mft, clus, rec, n);
		if (at == DT_NONE || nr(&q, at, r, sizeof r) || rk_buf_is_zero(r, sizeof r))
			continue;
		if (!memcmp(r, "FILE", 4) && !(rk_get_le16(r + 0x16) & 1) && !rk_get_le32(r + 0x2C))
			continue;   /* a free record mkntfs formatted (16 to 23) carries no number */
		if (!memcmp(r, "FILE", 4) && rk_get_le32(r + 0x2C) == n)
			h->probe_ok++;
		else
			h->probe_bad++;
	}
	/* $MFTMirr: records 0-3 again, numbered (seed 2861: a RAID-6 of 4 with
	 * a member gone read as a RAID-5 of 3 rebuilt the mirror from an
	 * XOR of other data; ntfsfix said so, no prediction did) */
	uint64_t mirr = rk_get_le64(bt + 0x38);
	for (uint32_t k = 0; k < 4 && mirr < (1ull << 40); k++) {
		if (nr(&q, mirr * clus + k * rec, r, sizeof r) || rk_buf_is_zero(r, sizeof r))
			continue;
		if (!memcmp(r, "FILE", 4) && rk_get_le32(r + 0x2C) == k)
			h->probe_ok++;
		else {
			h->probe_bad++;
			h->mirr_bad++;
		}
	}
	uint8_t b[512];
	if (secs < (1ull << 48) && !nr(&q, secs * bps, b, 512)) {
		if (!memcmp(b, bt, 512))
			h->probe_ok++;
		else
			h->probe_bad++;
	}
	if (limit || clus > 65536 || rec > 4096)
		return;   /* a quick look; clusters and records this large are left alone */
	uint8_t *buf = malloc(clus), *fr = malloc(rec);
	uint32_t tails = 0, oks = 0;
	for (uint32_t n = 16; buf && fr && n < NT_FILES && tails < NT_TAILS; n++) {
		uint64_t at = record_at(&c->fs, mft, clus, rec, n);
		if (at == DT_NONE || nr(&q, at, fr, rec) || memcmp(fr, "FILE", 4) || rk_get_le32(fr + 0x2C) != n ||
		    !dt_ntfs_fixup(fr, rec))
			continue;
		int t = ntfs_tail(&q, fr, rec, clus, buf);
		tails += t >= 0;
		oks += t > 0;
	}
	dt_tails_count(h, oks, tails);
	free(fr);
	free(buf);
}
