/* detect_exfat.c: what an exFAT file system predicts about its own layout,
 * checked through a hypothesis (dt_probe): the root directory where the
 * boot sector says, holding the allocation bitmap and up-case table
 * entries; the up-case table's checksum; each subdirectory's first
 * cluster where its parent's stream extension says, holding entry sets
 * whose checksums hold; the last cluster of each contiguous file they list
 * (NoFatChain, valid to its end), holding its last bytes and then zeros
 * where the slack was zero (dt_tail_check, dt_tails_count).  exFAT has
 * no "." entries and writers keep files contiguous (no FAT chains), so
 * directories and files are the places spread over the volume that its
 * bytes can confirm.  All fields are read
 * little-endian and bounds-checked: the boot sector is the image's. */
#include <stdlib.h>
#include <string.h>

#include "detect_int.h"
#include "rk_le.h"
#include "rk_util.h"

#define EX_DIRS 48u                 /* directories visited, at most */
#define EX_DIR_READ (16u << 10)     /* bytes of a directory read: its first entry sets */
#define EX_UPCASE_MAX (128u << 10)  /* a larger up-case table is not checked */
#define EX_ENT 32u
#define EX_TAILS 256u               /* contiguous files whose last cluster is checked */
#define EX_TAIL_CLUS (64u << 10)    /* clusters larger than this are not read for tails */

struct exq {
	struct dt_ctx *c;
	struct dt_hyp *h;
	uint64_t base, heap, csize, nclus;
	uint32_t limit;
	uint32_t dirs[EX_DIRS];          /* first clusters queued */
	uint64_t dlen[EX_DIRS];          /* bytes to read there */
	uint32_t ndirs;
	uint32_t upcase, upsum;          /* the up-case table: cluster, checksum, length */
	uint64_t uplen;
	uint32_t tfirst[EX_TAILS];       /* contiguous files: first cluster and length (full probes) */
	uint64_t tlen[EX_TAILS];
	uint32_t ntails;
};

/* Volume bytes [BASE + V, +LEN) through the hypothesis: 0 read; 1 not
 * available (unmapped, missing, or the quick look's limit reached). */
static int ex_read(struct exq *q, uint64_t v, uint8_t *buf, size_t len)
{
	if (v > UINT64_MAX - q->base || (q->limit && q->h->probe_ok + q->h->probe_bad >= q->limit))
		return 1;
	return dt_vread(q->c, q->h, q->base + v, buf, len) != 0;
}

/* The volume byte (from BASE) of cluster K; UINT64_MAX outside the heap. */
static uint64_t cluster_at(const struct exq *q, uint64_t k)
{
	if (k < 2 || k - 2 >= q->nclus)
		return UINT64_MAX;
	return q->heap + (k - 2) * q->csize;
}

/* An entry set's checksum: every byte of its N entries but the checksum
 * field itself (bytes 2 and 3 of the first), rotated right and added. */
static uint16_t set_sum(const uint8_t *e, uint32_t n)
{
	uint16_t s = 0;
	for (uint32_t i = 0; i < n * EX_ENT; i++)
		if (i != 2 && i != 3)
			s = (uint16_t)(((s & 1) ? 0x8000u : 0) + (s >> 1) + e[i]);
	return s;
}

static void queue_dir(struct exq *q, uint32_t clus, uint64_t len)
{
	for (uint32_t k = 0; k < q->ndirs; k++)
		if (q->dirs[k] == clus)
			return;
	if (q->ndirs < EX_DIRS) {
		q->dirs[q->ndirs] = clus;
		q->dlen[q->ndirs++] = len;
	}
}

/* One file entry set at E (LEFT entries available): 1 its checksum and
 * secondary entries hold (a subdirectory's first cluster queued), -1 they
 * do not, 0 it runs past the bytes read.  *N: its entry count. */
static int file_set(struct exq *q, const uint8_t *e, uint32_t left, uint32_t *n)
{
	uint32_t sc = e[1];
	*n = 1;
	if (sc < 2 || sc > 18)
		return -1;
	if (sc + 1 > left)
		return 0;
	*n = sc + 1;
	const uint8_t *st = e + EX_ENT;
	if (st[0] != 0xC0 || rk_get_le16(e + 2) != set_sum(e, sc + 1))
		return -1;
	for (uint32_t k = 2; k <= sc; k++)
		if ((e[k * EX_ENT] & 0xC0) != 0xC0)   /* in-use secondary entries */
			return -1;
	uint32_t first = rk_get_le32(st + 20);
	uint64_t dlen = rk_get_le64(st + 24);
	if ((rk_get_le16(e + 4) & 0x10) && (st[1] & 1) && first)
		queue_dir(q, first, (st[1] & 2) ? dlen : q->csize);
	else if (!q->limit && (st[1] & 3) == 3 && first && dlen && rk_get_le64(st + 8) == dlen && q->ntails < EX_TAILS) {
		q->tfirst[q->ntails] = first;   /* a contiguous file written to its end */
		q->tlen[q->ntails++] = dlen;
	}
	return 1;
}

/* Parses the directory bytes D (LEN): *SYS gets 1 for an allocation
 * bitmap entry, 2 for an up-case table entry; returns the entry sets
 * whose checksums hold, or -1 when an in-use entry is not exFAT's. */
static int parse_dir(struct exq *q, const uint8_t *d, size_t len, unsigned *sys)
{
	uint32_t n = (uint32_t)(len / EX_ENT), good = 0;
	for (uint32_t i = 0; i < n;) {
		const uint8_t *e = d + (size_t)i * EX_ENT;
		uint8_t t = e[0];
		uint32_t used = 1;
		if (t == 0)
			break;   /* the end of the directory */
		if (t == 0x81) {
			*sys |= 1;
		} else if (t == 0x82) {
			*sys |= 2;
			q->upcase = rk_get_le32(e + 20);
			q->upsum = rk_get_le32(e + 4);
			q->uplen = rk_get_le64(e + 24);
		} else if (t == 0x85) {
			int r = file_set(q, e, n - i, &used);
			if (r < 0)
				return -1;
			if (r == 0)
				break;
			good++;
		} else if ((t & 0x80) && t != 0x83 && t != 0xA0 && (t & 0xE0) != 0xA0) {
			return -1;   /* an in-use critical entry exFAT does not define here */
		}
		i += used;
	}
	return (int)good;
}

/* Reads and parses the directory at cluster K (LEN bytes at most): a
 * probe_ok when it holds valid entry sets (and, for the root, the
 * bitmap and up-case entries), a probe_bad when it holds anything else;
 * nothing for an empty one or one that cannot be read. */
static void probe_dir(struct exq *q, uint32_t k, uint64_t len, int root, uint8_t *buf)
{
	uint64_t v = cluster_at(q, k);
	size_t n = len < EX_DIR_READ ? (size_t)len : EX_DIR_READ;
	n = n / EX_ENT * EX_ENT;
	if (v == UINT64_MAX || !n || ex_read(q, v, buf, n))
		return;
	if (rk_buf_is_zero(buf, n))
		return;   /* empty, or never written: nothing to confirm */
	unsigned sys = 0;
	int good = parse_dir(q, buf, n, &sys);
	int ok = root ? good >= 0 && sys == 3 : good > 0;   /* the root always lists the bitmap and up-case table */
	if (ok)
		q->h->probe_ok++;
	else
		q->h->probe_bad++;
}

/* The up-case table's checksum where the root directory put it. */
static void probe_upcase(struct exq *q)
{
	uint64_t v = cluster_at(q, q->upcase);
	if (v == UINT64_MAX || q->uplen == 0 || q->uplen > EX_UPCASE_MAX)
		return;
	uint8_t *t = malloc((size_t)q->uplen);
	if (!t)
		return;
	if (!ex_read(q, v, t, (size_t)q->uplen)) {
		uint32_t s = 0;
		for (uint64_t i = 0; i < q->uplen; i++)
			s = ((s & 1) ? 0x80000000u : 0) + (s >> 1) + t[i];
		if (s == q->upsum)
			q->h->probe_ok++;
		else
			q->h->probe_bad++;
	}
	free(t);
}

/* The last cluster of each contiguous file the directories listed: its
 * last bytes, then zeros (dt_tail_check), counted by dt_tails_count. */
static void probe_tails(struct exq *q)
{
	if (!q->ntails || q->csize > EX_TAIL_CLUS)
		return;
	uint8_t *buf = malloc(q->csize);
	uint32_t n = 0, ok = 0;
	for (uint32_t k = 0; buf && k < q->ntails; k++) {
		uint64_t last = q->tfirst[k] + (q->tlen[k] - 1) / q->csize, v = cluster_at(q, last);
		if (v == UINT64_MAX || v > UINT64_MAX - q->base)
			continue;
		int t = dt_tail_check(q->c, q->h, q->base + v, (uint32_t)q->csize, q->tlen[k], buf);
		n += t >= 0;
		ok += t > 0;
	}
	free(buf);
	dt_tails_count(q->h, ok, n);
}

/* See detect_int.h.  Only a sector's first 32-byte steps are looked at
 * whole: an entry set crossing into the next sector is seen from it. */
void dt_exfat_scan(struct dt_ctx *c, const uint8_t *p, size_t left)
{
	struct dt_exf *x = &c->exf;
	for (uint32_t o = 0; o < 512 && x->nfiles < DT_EXFILES; o += EX_ENT) {
		const uint8_t *e = p + o, *st = e + EX_ENT;
		uint32_t sc = e[0] == 0x85 ? e[1] : 0;
		if (sc < 2 || sc > 18 || o + (sc + 1) * EX_ENT > left || st[0] != 0xC0 || (st[1] & 3) != 3 ||
		    (rk_get_le16(e + 4) & 0x10) || rk_get_le16(e + 2) != set_sum(e, sc + 1))
			continue;   /* not a contiguous file's entry set, or its checksum fails */
		uint32_t first = rk_get_le32(st + 20);
		uint64_t len = rk_get_le64(st + 24);
		if (first < 2 || !len || rk_get_le64(st + 8) != len)
			continue;
		uint32_t k = 0;
		while (k < x->nfiles && !(x->files[k].first == first && x->files[k].len == len))
			k++;
		if (k < x->nfiles)
			continue;
		if (!x->files && !(x->files = malloc(DT_EXFILES * sizeof *x->files)))
			return;
		x->files[x->nfiles++] = (struct dt_exfile){ first, len };
	}
}

/* See detect_int.h. */
void dt_exfat_learn(struct dt_ctx *c)
{
	struct dt_exf *x = &c->exf;
	for (uint32_t k = 0; k < c->nanc && !x->learnt; k++) {
		uint8_t b[512];
		if (c->anc[k].kind != DT_EXFAT_BOOT || dt_read(c, c->anc[k].img, c->anc[k].ioff, b, sizeof b))
			continue;
		uint32_t bps_sh = b[0x6C], spc_sh = b[0x6D];
		if (bps_sh < 9 || bps_sh > 12 || spc_sh > 25 - bps_sh || !rk_get_le32(b + 0x5C))
			continue;
		x->heap = (uint64_t)rk_get_le32(b + 0x58) << bps_sh;
		x->csize = 1ull << (bps_sh + spc_sh);
		x->nclus = rk_get_le32(b + 0x5C);
		x->learnt = 1;
	}
}

/* See detect_int.h. */
void dt_exfat_probe(struct dt_ctx *c, struct dt_hyp *h, uint64_t base, uint32_t limit, const uint8_t *boot)
{
	uint32_t bps_sh = boot[0x6C], spc_sh = boot[0x6D];
	if (bps_sh < 9 || bps_sh > 12 || spc_sh > 25 - bps_sh)
		return;
	struct exq *q = calloc(1, sizeof *q);
	uint8_t *buf = malloc(EX_DIR_READ);
	if (!q || !buf)
		goto out;
	*q = (struct exq){ .c = c, .h = h, .base = base, .limit = limit,
	                   .heap = (uint64_t)rk_get_le32(boot + 0x58) << bps_sh,
	                   .csize = 1ull << (bps_sh + spc_sh), .nclus = rk_get_le32(boot + 0x5C) };
	probe_dir(q, rk_get_le32(boot + 0x60), q->csize, 1, buf);
	probe_upcase(q);
	for (uint32_t k = 0; k < q->ndirs; k++)
		probe_dir(q, q->dirs[k], q->dlen[k], 0, buf);
	probe_tails(q);
out:
	free(q);
	free(buf);
}
