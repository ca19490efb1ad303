/* detect_lastblock.c: the last blocks of files, found on the images, as
 * anchors: the learnt ext4's (their inodes anchored), exFAT's (the
 * contiguous files whose entry sets the scan met), NTFS's (their MFT
 * records anchored), XFS's (their inodes anchored), FAT's (listed in its
 * root and anchored subdirectories) and btrfs's (listed in anchored
 * leaves).  Linux and the mkfs populators zero what follows a file's last
 * byte in its last block, so that block ends in a pattern the metadata
 * predicts: its last non-zero byte is the file's last, at size % block
 * size, zeros to the block's end.  Found at one place, it ties that image
 * offset to the volume byte the metadata names, as any anchor does.
 * Inodes and directories sit where the file system keeps its metadata,
 * often all on one member; files spread over every member (seed 2280: a
 * linear of 2 whose second member holds only files; seed 2311: a RAID-5
 * of 10 in 1 MiB chunks whose every other anchor lay in one image's first
 * chunk, so that every member count and chunk explained them alike, and
 * the true one was never tried).
 *
 * A tail is looked for only when no other known tail ends at the same
 * byte of its sector and its last 64 bytes hold 8 distinct values or more
 * (a bitmap's run of ones, an inode table's last inode, do not); it is
 * kept when found at one image offset only (one_place). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "detect_int.h"
#include "rk_le.h"
#include "rk_util.h"

#define TAIL_MAX 1024u   /* files whose tails are looked for */
#define TAIL_HITS 4u     /* places a tail may be found */
#define TAIL_MIN 64u     /* bytes a tail needs before its end (the distinct-value test reads them) */
#define TAIL_DISTINCT 8u
#define TAIL_BUF (4u << 20)

/* A file's last block or cluster: KIND and RAW the anchor's (its number,
 * or btrfs's logical bytenr), TAG the anchor's words (the inode, the MFT
 * record, the first cluster; btrfs's fsid), END the bytes of it the file
 * fills, BS its size; HITS the places found, NEXT the index chain. */
struct tail { uint64_t raw; uint32_t tag, end, bs, hits, next; uint8_t kind; };
struct tails {
	struct tail t[TAIL_MAX];
	uint32_t n, head[512];
	uint32_t bs;         /* the largest block of a tail or the map */
	uint8_t *map;        /* the resize inode's map block as mke2fs writes it (NULL: none) */
	uint32_t map_bs;     /* its size: the ext4's block */
	uint64_t map_blk;
	uint32_t map_first;  /* its first non-zero byte */
	uint32_t map_hits;
};

/* Adds T (its HITS and NEXT set here) to TS, once per (kind, raw), when
 * its end leaves room to tell: TAIL_MIN bytes before it, DT_TAIL_SLACK
 * after it in a block of 64 KiB at most. */
static void add_tail(struct tails *ts, struct tail t)
{
	if (ts->n == TAIL_MAX || t.bs > 65536 || t.end < TAIL_MIN || t.end > t.bs || t.bs - t.end < DT_TAIL_SLACK)
		return;
	for (uint32_t q = 0; q < ts->n; q++)
		if (ts->t[q].kind == t.kind && ts->t[q].raw == t.raw)
			return;
	t.hits = 0;
	t.next = UINT32_MAX;
	ts->t[ts->n++] = t;
}

/* Inode IN's (of number INO) last block and the bytes of it the file
 * fills, into *T: 0 when the file is not a live regular file with a
 * depth-0 extent there. */
static int tail_of(const struct dt_ext *e, const uint8_t *in, uint32_t ino, struct tail *t)
{
	if ((rk_get_le16(in) >> 12) != 8 || !rk_get_le16(in + 0x1A) || rk_get_le32(in + 0x14))
		return 0;
	uint64_t size = rk_get_le32(in + 4) | (uint64_t)rk_get_le32(in + 0x6C) << 32;
	if (!size)
		return 0;
	uint64_t blk = dt_ext_extent_block(in, (size - 1) / e->bs);
	if (blk == DT_NONE || blk >= e->blocks)
		return 0;
	*t = (struct tail){ blk, ino, (uint32_t)(size % e->bs), e->bs, 0, UINT32_MAX, DT_EXT_TAIL };
	return 1;
}

/* The tails of the learnt ext4's files whose inodes were anchored (each
 * number once). */
static void collect_ext(struct dt_ctx *c, struct tails *ts)
{
	const struct dt_ext *e = &c->ext;
	if (!e->learnt || e->bs < 1024 || e->bs > 65536 || (e->bs & (e->bs - 1)))
		return;
	for (uint32_t k = 0; k < c->nanc && ts->n < TAIL_MAX; k++) {
		const struct dt_anchor *a = &c->anc[k];
		uint8_t in[128];
		struct tail t;
		if (a->kind == DT_EXT_INO && a->tag && !dt_read(c, a->img, a->ioff, in, sizeof in) && tail_of(e, in, a->tag, &t))
			add_tail(ts, t);
	}
}

/* The tails of the contiguous exFAT files whose entry sets the scan met
 * (dt_exfat_scan), in the cluster heap the learnt boot sector says. */
static void collect_exfat(struct dt_ctx *c, struct tails *ts)
{
	const struct dt_exf *x = &c->exf;
	if (!x->learnt || x->csize > 65536)
		return;
	for (uint32_t k = 0; k < x->nfiles && ts->n < TAIL_MAX; k++) {
		uint64_t len = x->files[k].len, last = x->files[k].first + (len - 1) / x->csize;
		if (last >= 2 && last - 2 < x->nclus)
			add_tail(ts, (struct tail){ last, 0, (uint32_t)(len % x->csize), (uint32_t)x->csize, 0, 0, DT_EXFAT_TAIL });
	}
}

/* The tails of the NTFS files whose MFT records were anchored (each
 * record once): the last cluster of their unnamed $DATA, neither
 * compressed nor sparse there, written to its end. */
static void collect_ntfs(struct dt_ctx *c, struct tails *ts)
{
	const struct dt_fs *fs = &c->fs;
	uint64_t clus = fs->ntfs_clus;
	if (!fs->ntfs || clus < 512 || clus > 65536 || fs->ntfs_rec < 512 || fs->ntfs_rec > 4096)
		return;
	uint8_t r[4096];
	for (uint32_t k = 0; k < c->nanc && ts->n < TAIL_MAX; k++) {
		const struct dt_anchor *a = &c->anc[k];
		struct dt_runs m;
		if (a->kind != DT_NTFS_MFT || a->voff == DT_NONE || a->raw < 16 || a->raw > UINT32_MAX)
			continue;   /* the system files' records are no one's data */
		if (dt_read(c, a->img, a->ioff, r, fs->ntfs_rec) || !dt_ntfs_fixup(r, fs->ntfs_rec) ||
		    (rk_get_le16(r + 0x16) & 3) != 1 || !dt_ntfs_data_runs(&m, r, fs->ntfs_rec) || (m.flags & 0x00FF) ||
		    !m.size || m.valid < m.size)
			continue;
		uint64_t lcn = dt_runs_lcn(&m, (m.size - 1) / clus);
		if (lcn != UINT64_MAX && lcn <= UINT64_MAX / clus - 1)
			add_tail(ts, (struct tail){ lcn, (uint32_t)a->raw, (uint32_t)(m.size % clus), (uint32_t)clus, 0, 0, DT_NTFS_TAIL });
	}
}

/* The tails of the XFS v5 files whose inodes were anchored (the learnt
 * file system's), their extents in the inode. */
static void collect_xfs(struct dt_ctx *c, struct tails *ts)
{
	const struct dt_self *s = &c->self;
	if (!s->xfs || s->xfs_bs < 1024 || s->xfs_bs > 65536 || s->xfs_isize < 256 || s->xfs_isize > 2048)
		return;
	uint8_t in[2048];
	for (uint32_t k = 0; k < c->nanc && ts->n < TAIL_MAX; k++) {
		const struct dt_anchor *a = &c->anc[k];
		uint64_t size, ag, agbno;
		if (a->kind != DT_XFS_INO || a->voff == DT_NONE || dt_read(c, a->img, a->ioff, in, s->xfs_isize) ||
		    !dt_xfs_last_block(in, s->xfs_isize, s->xfs_bs, s->xfs_agblklog, &size, &ag, &agbno) ||
		    ag >= s->xfs_agcount || agbno >= s->xfs_agblocks)
			continue;
		add_tail(ts, (struct tail){ ag * s->xfs_agblocks + agbno, (uint32_t)a->raw, (uint32_t)(size % s->xfs_bs), s->xfs_bs,
		                            0, 0, DT_XFS_TAIL });
	}
}

/* The files LEN bytes of FAT directory entries at B list, as tails: a
 * file written in one go sits in consecutive clusters (mtools and
 * Windows on a fresh volume); one that does not is looked for at a place
 * its bytes are not, and found nowhere. */
static void fat_dir_tails(const struct dt_self *s, const uint8_t *b, size_t len, struct tails *ts)
{
	for (size_t o = 0; o + 32 <= len && b[o]; o += 32) {
		const uint8_t *e = b + o;
		if (e[0] == 0xE5 || e[0] < 0x20 || e[0] == '.' || e[11] == 0x0F || (e[11] & 0xD8))
			continue;   /* deleted, ".", "..", a long name, the label, a directory, not a name */
		uint64_t first = rk_get_le16(e + 26) | (s->fat_32 ? (uint32_t)rk_get_le16(e + 20) << 16 : 0);
		uint64_t size = rk_get_le32(e + 28), last = size ? first + (size - 1) / s->fat_clus : 0;
		if (first >= 2 && size && last - 2 < s->fat_nclus)
			add_tail(ts, (struct tail){ last, (uint32_t)first, (uint32_t)(size % s->fat_clus), s->fat_clus, 0, 0, DT_FAT_TAIL });
	}
}

/* The tails of the FAT16/32 files listed in the subdirectories anchored
 * (their "." entries) and in a FAT16 root directory, read where the
 * boot sector's image holds it (the first chunk: right behind the FATs). */
static void collect_fat(struct dt_ctx *c, struct tails *ts)
{
	const struct dt_self *s = &c->self;
	if (!s->fat || s->fat_clus > 65536 || !s->fat_bps)
		return;
	uint8_t *b = malloc(s->fat_clus > 16384 ? s->fat_clus : 16384);
	if (!b)
		return;
	uint64_t root = ((uint64_t)s->fat_res + (uint64_t)s->fat_nfats * s->fat_sz) * s->fat_bps;
	for (uint32_t k = 0; k < c->nanc && ts->n < TAIL_MAX; k++) {
		const struct dt_anchor *a = &c->anc[k];
		if (a->kind == DT_FAT_DIR && a->voff != DT_NONE && !dt_read(c, a->img, a->ioff, b, s->fat_clus))
			fat_dir_tails(s, b, s->fat_clus, ts);
		else if (a->kind == DT_FAT_BOOT && a->voff != DT_NONE && !s->fat_32 && s->fat_data > root) {
			size_t len = s->fat_data - root < 16384 ? (size_t)(s->fat_data - root) : 16384;
			if (!dt_read(c, a->img, a->ioff + root, b, len))
				fat_dir_tails(s, b, len, ts);
		}
	}
	free(b);
}

/* The tails of the btrfs files the anchored file-system-tree leaves list. */
static void collect_btrfs(struct dt_ctx *c, struct tails *ts)
{
	struct dt_bend *e = malloc(TAIL_MAX * sizeof *e);
	uint32_t n = e ? dt_btrfs_file_ends(c, e, TAIL_MAX) : 0;
	for (uint32_t k = 0; k < n; k++)
		add_tail(ts, (struct tail){ e[k].logical, e[k].tag, e[k].end, e[k].sect, 0, 0, DT_BTRFS_TAIL });
	free(e);
}

/* The tails to look for, those ending at a byte another shares left out,
 * indexed by their last byte within its sector. */
static void collect(struct dt_ctx *c, struct tails *ts)
{
	ts->n = 0;
	collect_ext(c, ts);
	collect_exfat(c, ts);
	collect_ntfs(c, ts);
	collect_xfs(c, ts);
	collect_fat(c, ts);
	collect_btrfs(c, ts);
	for (uint32_t k = 0; k < ts->n; k++)
		ts->bs = ts->t[k].bs > ts->bs ? ts->t[k].bs : ts->bs;
	/* ends alike within their sectors clash too: a block read 512 bytes
	 * off shows another file's tail at the other's place in the block
	 * (a btrfs of t_lastblock_btrfs: a tail ending 324 bytes into its
	 * block, zeros after, read as one ending 2884 bytes in) */
	for (uint32_t k = 0; k < 512; k++)
		ts->head[k] = 0;   /* first the tails per byte of a sector */
	for (uint32_t k = 0; k < ts->n; k++)
		ts->head[(ts->t[k].end - 1) % 512]++;
	uint32_t w = 0;
	for (uint32_t k = 0; k < ts->n; k++)
		if (ts->head[(ts->t[k].end - 1) % 512] == 1)
			ts->t[w++] = ts->t[k];
	ts->n = w;
	for (uint32_t k = 0; k < 512; k++)
		ts->head[k] = UINT32_MAX;
	for (uint32_t k = 0; k < ts->n; k++) {
		uint32_t e = (ts->t[k].end - 1) % 512;
		ts->t[k].next = ts->head[e];
		ts->head[e] = k;
	}
}

/* The last non-zero byte of the 512 at P, -1 when all are zero. */
static int last_nonzero(const uint8_t *p)
{
	for (int k = 511; k >= 0; k--)
		if (p[k])
			return k;
	return -1;
}

static int distinct_enough(const uint8_t *p, uint32_t len)
{
	uint8_t seen[256] = { 0 };
	uint32_t n = 0;
	for (uint32_t k = 0; k < len && n < TAIL_DISTINCT; k++)
		if (!seen[p[k]]++)
			n++;
	return n >= TAIL_DISTINCT;
}

/* Looks for the resize inode's map block in BUF at sector S. */
static void match_map(struct dt_ctx *c, struct tails *ts, uint32_t i, uint64_t base, const uint8_t *buf, uint32_t s,
                      uint32_t nsec)
{
	const uint8_t *b = buf + (size_t)s * 512;
	if (!ts->map || s + ts->map_bs / 512 > nsec || b[ts->map_first] != ts->map[ts->map_first] ||
	    memcmp(b, ts->map, ts->map_bs))
		return;
	ts->map_hits++;
	dt_anchor_push(c, &(struct dt_anchor){ DT_EXT_RMAP, i, base + (uint64_t)s * 512, ts->map_blk, DT_NONE, DT_NONE, 7 });
}

/* Looks for the tails (and the resize inode's map) in BUF (LEN bytes of
 * image I from image byte BASE), pushing an anchor per place found. */
static void match_buf(struct dt_ctx *c, struct tails *ts, uint32_t i, uint64_t base, const uint8_t *buf, size_t len)
{
	uint32_t nsec = (uint32_t)(len / 512);
	for (uint32_t s = 0; s < nsec; s++) {
		match_map(c, ts, i, base, buf, s, nsec);
		int e = last_nonzero(buf + (size_t)s * 512);
		if (e < 0 || ts->head[e] == UINT32_MAX)
			continue;
		for (uint32_t q = ts->head[e]; q != UINT32_MAX; q = ts->t[q].next) {
			struct tail *t = &ts->t[q];
			uint32_t j = (t->end - 1) / 512;   /* the tail's sector within its block */
			if (s < j || s - j + t->bs / 512 > nsec)
				continue;
			const uint8_t *blk = buf + (size_t)(s - j) * 512;
			if (!rk_buf_is_zero(blk + t->end, t->bs - t->end) ||
			    !distinct_enough(blk + t->end - TAIL_MIN, TAIL_MIN))
				continue;
			t->hits++;
			dt_anchor_push(c, &(struct dt_anchor){ t->kind, i, base + (uint64_t)(s - j) * 512, t->raw,
			                                        DT_NONE, DT_NONE, t->tag });
		}
	}
}

/* Reads [OFF, OFF+LEN) of image I (clipped) in pieces that overlap by a
 * block, matching the tails in each. */
static void match_range(struct dt_ctx *c, struct tails *ts, uint32_t i, uint64_t off, uint64_t len, uint8_t *buf)
{
	uint64_t size = c->img[i].size;
	if (off >= size)
		return;
	if (len > size - off)
		len = size - off;
	uint64_t end = off + len;
	while (off < end) {
		size_t n = end - off < TAIL_BUF ? (size_t)(end - off) : TAIL_BUF;
		n &= ~(size_t)511;
		if (!n || dt_read(c, i, off, buf, n))
			return;
		match_buf(c, ts, i, off, buf, n);
		if (off + n >= end)
			return;
		off += n - ts->bs + 512;   /* a block across the seam is whole in the next piece, and only there */
	}
}

/* Whether tail T, its hits among the anchors from N0 on, was found at one
 * image offset only (on one image, or on several as mirrors and parity
 * copies sharing a data start leave it): another place is another file's
 * tail that ends at the same byte (a copy of the file, or a file whose
 * inode was not anchored; seed 2241: a RAID-0 of an 87 % full ext4, 84
 * of 237 tails found twice or more, the true reading lost). */
static int one_place(const struct dt_ctx *c, uint32_t n0, const struct tail *t)
{
	uint64_t at = DT_NONE;
	if (t->hits > TAIL_HITS)
		return 0;
	for (uint32_t k = n0; k < c->nanc; k++) {
		if (c->anc[k].kind != t->kind || c->anc[k].raw != t->raw)
			continue;
		if (at != DT_NONE && c->anc[k].ioff != at)
			return 0;
		at = c->anc[k].ioff;
	}
	return 1;
}

/* The same for the resize inode's map block, found HITS times. */
static int map_one_place(const struct dt_ctx *c, uint32_t n0, uint32_t hits)
{
	uint64_t at = DT_NONE;
	if (hits > TAIL_HITS)
		return 0;
	for (uint32_t k = n0; k < c->nanc; k++) {
		if (c->anc[k].kind != DT_EXT_RMAP)
			continue;
		if (at != DT_NONE && c->anc[k].ioff != at)
			return 0;
		at = c->anc[k].ioff;
	}
	return 1;
}

/* The resize inode's map of the learnt ext4 into TS (map NULL: none). */
static void load_map(struct dt_ctx *c, struct tails *ts)
{
	const struct dt_ext *e = &c->ext;
	ts->map_bs = e->bs;
	ts->map_hits = 0;
	ts->map = e->learnt && e->bs >= 1024 && e->bs <= 65536 ? malloc(e->bs) : NULL;
	if (ts->map && !dt_ext_resize_map(c, &ts->map_blk, ts->map)) {
		free(ts->map);
		ts->map = NULL;
	}
	if (ts->map && ts->map_bs > ts->bs)
		ts->bs = ts->map_bs;
	for (ts->map_first = 0; ts->map && !ts->map[ts->map_first]; ts->map_first++)
		;   /* dt_ext_resize_map wrote at least one entry */
}

#ifdef DT_DEBUG
static void debug_tails(const struct tails *ts)
{
	uint32_t hist[6] = { 0 };
	for (uint32_t q = 0; q < ts->n; q++)
		hist[ts->t[q].hits < 5 ? ts->t[q].hits : 5]++;
	fprintf(stderr, "TAILS %u looked for, found 0:%u 1:%u 2:%u 3:%u 4:%u more:%u\n", ts->n, hist[0], hist[1], hist[2],
	        hist[3], hist[4], hist[5]);
	for (uint32_t q = 0; getenv("DT_TAILS") && q < ts->n; q++)
		fprintf(stderr, "TAIL kind %u raw %llu tag %u end %u bs %u hits %u\n", ts->t[q].kind,
		        (unsigned long long)ts->t[q].raw, ts->t[q].tag, ts->t[q].end, ts->t[q].bs, ts->t[q].hits);
}
#endif

/* Keeps of the anchors from N0 on those found at one place (one_place,
 * map_one_place), decided over the whole list before it is compacted. */
static void keep_one_place(struct dt_ctx *c, const struct tails *ts, uint32_t n0)
{
	uint8_t *keep = calloc(c->nanc - n0 + 1, 1);
	for (uint32_t k = n0; keep && k < c->nanc; k++) {
		uint32_t q = 0;
		if (c->anc[k].kind == DT_EXT_RMAP) {   /* copies of one block: kept where they share a place */
			keep[k - n0] = (uint8_t)map_one_place(c, n0, ts->map_hits);
			continue;
		}
		while (q < ts->n && !(ts->t[q].kind == c->anc[k].kind && ts->t[q].raw == c->anc[k].raw))
			q++;
		keep[k - n0] = q < ts->n && one_place(c, n0, &ts->t[q]);
	}
	uint32_t w = n0;
	for (uint32_t k = n0; k < c->nanc; k++)
		if (keep && keep[k - n0])
			c->anc[w++] = c->anc[k];
	c->nanc = w;
	free(keep);
}

/* See detect_int.h.  The parts of each image the scan plan's first two
 * steps read (detect_sample.c). */
void dt_lastblocks(struct dt_ctx *c)
{
	dt_exfat_learn(c);
	struct tails *ts = malloc(sizeof *ts);
	uint8_t *buf = malloc(TAIL_BUF);
	if (!ts || !buf) {
		free(ts);
		free(buf);
		return;
	}
	ts->bs = 0;
	collect(c, ts);
	load_map(c, ts);
	uint32_t n0 = c->nanc;
	for (uint32_t i = 0; i < c->nimg && (ts->n || ts->map); i++) {
		uint64_t size = c->img[i].size;
		match_range(c, ts, i, 0, DT_HEAD, buf);
		if (size > DT_HEAD + DT_WIN)
			for (uint32_t w = 1; w <= DT_NSPREAD; w++)
				match_range(c, ts, i, DT_HEAD + (size - DT_HEAD - DT_WIN) / DT_NSPREAD * w, DT_WIN, buf);
	}
#ifdef DT_DEBUG
	debug_tails(ts);
#endif
	keep_one_place(c, ts, n0);
	free(ts->map);
	free(ts);
	free(buf);
}

/* See detect_int.h. */
int dt_lastblock_kind(uint8_t kind)
{
	return kind == DT_EXT_TAIL || kind == DT_EXT_RMAP || kind == DT_EXFAT_TAIL || kind == DT_NTFS_TAIL ||
	       kind == DT_XFS_TAIL || kind == DT_FAT_TAIL || kind == DT_BTRFS_TAIL;
}

/* See detect_int.h. */
void dt_resolve_lastblock(const struct dt_ctx *c, struct dt_anchor *a)
{
	const struct dt_exf *x = &c->exf;
	a->voff = a->voff2 = DT_NONE;
	if (a->kind == DT_NTFS_TAIL) {
		if (c->fs.ntfs && c->fs.ntfs_clus && a->raw <= UINT64_MAX / c->fs.ntfs_clus)
			a->voff = a->raw * c->fs.ntfs_clus;
	} else if (a->kind == DT_XFS_TAIL) {
		if (c->self.xfs && a->raw < (uint64_t)c->self.xfs_agcount * c->self.xfs_agblocks)
			a->voff = a->raw * c->self.xfs_bs;
	} else if (a->kind == DT_BTRFS_TAIL) {
		a->voff = dt_btrfs_data_voff(c, a->tag, a->raw);
	} else if (a->kind == DT_FAT_TAIL) {
		if (c->self.fat && a->raw >= 2 && a->raw - 2 < c->self.fat_nclus)
			a->voff = c->self.fat_data + (a->raw - 2) * c->self.fat_clus;
	} else if (a->kind != DT_EXFAT_TAIL && c->ext.learnt && c->ext.bs && a->raw < c->ext.blocks &&
	    a->raw <= UINT64_MAX / c->ext.bs)
		a->voff = a->raw * c->ext.bs;
	else if (a->kind == DT_EXFAT_TAIL && x->learnt && a->raw >= 2 && a->raw - 2 < x->nclus)
		a->voff = x->heap + (a->raw - 2) * x->csize;
}
