/* detect_btrfs.c: btrfs tree blocks as anchors (spec/detect.md).
 *
 * Every btrfs tree block (node or leaf) starts with a header naming the
 * file system (fsid, or metadata_uuid) and its own logical address
 * (bytenr).  Logical is not the volume byte: the chunk tree maps logical
 * ranges to device offsets, and on a single-device btrfs the device offset
 * is the volume byte.  The map comes from two places found by the same
 * scan anywhere in the images:
 *  - the superblock's sys_chunk_array (the system chunk, which holds the
 *    chunk tree), and
 *  - chunk-tree leaves (owner 3) whose crc32c holds, i.e. that lie whole
 *    on one image (a chunk of 16 KiB or more), whose CHUNK_ITEMs map the
 *    metadata chunks.
 * A metadata chunk of profile DUP keeps each block twice: both places are
 * the anchor's volume bytes (voff, voff2).  Only single-device file
 * systems, and only profiles single and DUP, are mapped; hits whose file
 * system or chunk is not known resolve to nothing.  All fields are read
 * with explicit little-endian reads within the bytes given. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "detect_int.h"
#include "rk_le.h"

#define BT_HDR 0x65u            /* struct btrfs_header */
#define BT_ITEM 25u             /* struct btrfs_item: key (17) + offset + size */
#define BT_CHUNK 48u            /* struct btrfs_chunk without its stripes */
#define BT_STRIPE 32u           /* struct btrfs_stripe */
#define BT_SB_SIZE 4096u
#define BT_SYS_ARRAY 0x32Bu     /* sys_chunk_array in the superblock */
#define BT_CHUNK_ITEM 228u      /* key type of a chunk */
#define BT_CHUNK_TREE 3u        /* owner of chunk-tree blocks */
#define BT_META 6ull            /* block-group types SYSTEM | METADATA */
#define BT_DATA 1ull            /* block-group type DATA */
#define BT_FS_TREE 5u           /* owner of the first file-system tree */
#define BT_INODE_ITEM 1u
#define BT_EXTENT_DATA 108u
#define BT_DUP (1ull << 5)      /* block-group profile bits */
#define BT_PROFILES 0x7F8ull    /* RAID0 RAID1 DUP RAID10 RAID5 RAID6 RAID1C3 RAID1C4 */
#define BT_CAP 384u             /* anchors per image */
#define BT_PROBE_MAX 48u        /* tree blocks checked per hypothesis */
#define BT_CSUM_TREE 7u         /* owner of checksum-tree blocks */
#define BT_CSUM_OBJ 0xFFFFFFFFFFFFFFF6ull   /* EXTENT_CSUM_OBJECTID */
#define BT_EXTENT_CSUM 128u
#define BT_CSUM_MAX 32u         /* data sectors checked against their crc32c per hypothesis */

static uint32_t crc_tab[256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

/* Fills the table of crc32c (Castagnoli, reflected 0x82F63B78). */
static void crc_init(void)
{
	for (uint32_t n = 0; n < 256; n++) {
		uint32_t c = n;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0x82F63B78u : c >> 1;
		crc_tab[n] = c;
	}
}

/* See detect_int.h. */
uint32_t dt_crc32c_raw(uint32_t c, const uint8_t *p, size_t n)
{
	pthread_once(&crc_once, crc_init);
	for (size_t k = 0; k < n; k++)
		c = crc_tab[(c ^ p[k]) & 0xFF] ^ (c >> 8);
	return c;
}

/* See detect_int.h. */
uint32_t dt_crc32c(const uint8_t *p, size_t n)
{
	return dt_crc32c_raw(0xFFFFFFFFu, p, n) ^ 0xFFFFFFFFu;
}

static int pow2(uint64_t v) { return v && !(v & (v - 1)); }

/* 1 when the crc32c of block P of N bytes (after its 32-byte csum field)
 * is the one it records (btrfs stores it little-endian at byte 0). */
static int csum_ok(const uint8_t *p, size_t n)
{
	return n > 32 && dt_crc32c(p + 32, n - 32) == rk_get_le32(p);
}

/* The file system of TAG (index into b->fs), -1 when not learnt. */
static int fs_of(const struct dt_btrfs *b, uint32_t tag)
{
	for (uint32_t k = 0; k < b->nfs; k++)
		if (b->fs[k].tag == tag)
			return (int)k;
	return -1;
}

/* Adds the mapping of the chunk item CH (LEN bytes readable) at logical
 * LOGICAL for file system TAG, learnt from a block of generation GEN: only
 * profiles single (1 stripe) and DUP (2) are kept.  A chunk already known
 * with another mapping is replaced only by a newer generation's. */
static void map_add(struct dt_btrfs *b, uint32_t tag, uint64_t logical, const uint8_t *ch, size_t len, uint64_t gen)
{
	if (len < BT_CHUNK)
		return;
	uint64_t length = rk_get_le64(ch), type = rk_get_le64(ch + 24);
	uint32_t ns = rk_get_le16(ch + 44);
	if (!length || (length & 4095) || (logical & 4095) || logical + length < logical || ns < 1 || ns > 2 ||
	    len < BT_CHUNK + (size_t)ns * BT_STRIPE || (type & BT_PROFILES) != (ns == 2 ? BT_DUP : 0))
		return;
	if (type == BT_DATA && ns == 1) {   /* files' data: only their last blocks are looked for */
		uint64_t ph = rk_get_le64(ch + BT_CHUNK + 8);
		if ((ph & 511) || ph + length < ph || ph + length > (1ull << 50) || b->ndmap == DT_BT_MAPS)
			return;
		for (uint32_t k = 0; k < b->ndmap; k++)
			if (b->dmap[k].tag == tag && b->dmap[k].logical == logical)
				return;
		b->dmap[b->ndmap++] = (struct dt_bmap){ tag, logical, length, { ph, DT_NONE }, gen };
		return;
	}
	if (!(type & BT_META))
		return;   /* tree blocks live in system and metadata chunks only */
	uint64_t ph[2] = { rk_get_le64(ch + BT_CHUNK + 8), ns == 2 ? rk_get_le64(ch + BT_CHUNK + BT_STRIPE + 8) : DT_NONE };
	if (rk_get_le64(ch + BT_CHUNK) != (ns == 2 ? rk_get_le64(ch + BT_CHUNK + BT_STRIPE) : rk_get_le64(ch + BT_CHUNK)))
		return;   /* DUP keeps both copies on one device */
	for (uint32_t k = 0; k < 2; k++)
		if (ph[k] != DT_NONE && (ph[k] & 511 || ph[k] + length < ph[k] || ph[k] + length > (1ull << 50)))
			return;
	for (uint32_t k = 0; k < b->nmap; k++) {
		struct dt_bmap *m = &b->map[k];
		if (m->tag != tag || logical >= m->logical + m->length || m->logical >= logical + length)
			continue;
		if (m->logical == logical && m->length == length && m->phys[0] == ph[0] && m->phys[1] == ph[1])
			return;
		if (gen <= m->gen)
			return;
		*m = (struct dt_bmap){ tag, logical, length, { ph[0], ph[1] }, gen };
		return;
	}
	if (b->nmap < DT_BT_MAPS)
		b->map[b->nmap++] = (struct dt_bmap){ tag, logical, length, { ph[0], ph[1] }, gen };
}

/* A superblock at P (BT_SB_SIZE bytes readable) whose crc32c holds:
 * learns the file system (single device only) and its sys_chunk_array. */
static void sb_learn(struct dt_btrfs *b, const uint8_t *p)
{
	uint64_t bytenr = rk_get_le64(p + 0x30), gen = rk_get_le64(p + 0x48);
	uint32_t sect = rk_get_le32(p + 0x90), node = rk_get_le32(p + 0x94), sys = rk_get_le32(p + 0xA0);
	uint64_t incompat = rk_get_le64(p + 0xBC);
	if (rk_get_le16(p + 0xC4) != 0 || !csum_ok(p, BT_SB_SIZE) || rk_get_le64(p + 0x88) != 1 ||
	    (bytenr != (64ull << 10) && bytenr != (64ull << 20) && bytenr != (256ull << 30)) ||
	    !pow2(sect) || sect < 4096 || sect > 65536 || !pow2(node) || node < sect || node > 65536 || sys > 2048)
		return;
	/* tree blocks carry metadata_uuid when the METADATA_UUID feature is set */
	uint32_t tag = rk_get_le32((incompat & (1u << 10)) ? p + 0x23B : p + 0x20);
	if (fs_of(b, tag) < 0) {
		if (b->nfs == DT_BT_FS)
			return;
		b->fs[b->nfs++] = (struct dt_bfs){ tag, node, sect, rk_get_le64(p + 0x70) };
	}
	/* sys_chunk_array: (key, chunk) pairs */
	const uint8_t *a = p + BT_SYS_ARRAY;
	for (uint32_t o = 0; o + 17 + BT_CHUNK <= sys;) {
		uint32_t ns = rk_get_le16(a + o + 17 + 44), sz = BT_CHUNK + ns * BT_STRIPE;
		if (a[o + 8] != BT_CHUNK_ITEM || !ns || o + 17 + sz > sys)
			return;
		map_add(b, tag, rk_get_le64(a + o + 9), a + o + 17, sz, gen);
		o += 17 + sz;
	}
}

/* A chunk-tree leaf at P of NODE bytes whose crc32c holds: its CHUNK_ITEMs. */
static void leaf_learn(struct dt_btrfs *b, const uint8_t *p, uint32_t node)
{
	uint32_t n = rk_get_le32(p + 0x60), tag = rk_get_le32(p + 0x20);
	uint64_t gen = rk_get_le64(p + 0x50);
	if (n > (node - BT_HDR) / BT_ITEM)
		return;
	for (uint32_t k = 0; k < n; k++) {
		const uint8_t *it = p + BT_HDR + k * BT_ITEM;
		uint32_t off = rk_get_le32(it + 17), sz = rk_get_le32(it + 21);
		if (it[8] != BT_CHUNK_ITEM || off > node - BT_HDR || sz > node - BT_HDR - off)
			continue;
		map_add(b, tag, rk_get_le64(it + 9), p + BT_HDR + off, sz, gen);
	}
}

/* 1 when P looks like a tree block's header: flags WRITTEN (RELOC
 * allowed) with backref revision 1, a level below 8, a bytenr of whole
 * 4 KiB.  (A superblock's flags have no revision byte.) */
static int header_ok(const uint8_t *p)
{
	uint64_t flags = rk_get_le64(p + 0x38), bytenr = rk_get_le64(p + 0x30);
	return (flags == (1ull << 56 | 1) || flags == (1ull << 56 | 3)) && p[0x64] < 8 && bytenr && !(bytenr & 4095);
}

/* See detect_int.h. */
void dt_btrfs_scan(struct dt_ctx *c, uint32_t i, uint64_t at, const uint8_t *p, size_t left)
{
	struct dt_btrfs *b = &c->btrfs;
	if (left >= BT_SB_SIZE && !memcmp(p + 0x40, "_BHRfS_M", 8)) {
		sb_learn(b, p);
		return;
	}
	if (left < BT_HDR || !header_ok(p))
		return;
	if (rk_get_le64(p + 0x58) == BT_CHUNK_TREE && p[0x64] == 0)
		for (uint32_t node = 4096; node <= 65536 && node <= left; node <<= 1)
			if (csum_ok(p, node)) {
				leaf_learn(b, p, node);
				break;
			}
	if (i < DT_MAX_ROLES + 8 && b->nper[i] < BT_CAP &&
	    dt_anchor_push(c, &(struct dt_anchor){ DT_BTRFS_NODE, i, at, rk_get_le64(p + 0x30), DT_NONE, DT_NONE,
	                                           rk_get_le32(p + 0x20) }))
		b->nper[i]++;
}

/* A's volume bytes through B's map (DT_NONE when its file system or
 * chunk is not known, or the block would end past the file system). */
static void map_resolve(const struct dt_btrfs *b, struct dt_anchor *a)
{
	a->voff = a->voff2 = DT_NONE;
	int f = fs_of(b, a->tag);
	if (a->kind != DT_BTRFS_NODE || f < 0)
		return;
	uint64_t node = b->fs[f].nodesize, total = b->fs[f].total_bytes;
	for (uint32_t k = 0; k < b->nmap; k++) {
		const struct dt_bmap *m = &b->map[k];
		if (m->tag != a->tag || a->raw < m->logical || a->raw - m->logical > m->length ||
		    m->length - (a->raw - m->logical) < node)
			continue;
		uint64_t d = a->raw - m->logical;
		if (m->phys[0] + d + node <= total)
			a->voff = m->phys[0] + d;
		if (m->phys[1] != DT_NONE && m->phys[1] + d + node <= total)
			a->voff2 = m->phys[1] + d;
		if (a->voff == DT_NONE) {
			a->voff = a->voff2;
			a->voff2 = DT_NONE;
		}
		return;
	}
}

/* See detect_int.h. */
void dt_btrfs_resolve(const struct dt_ctx *c, struct dt_anchor *a)
{
	map_resolve(&c->btrfs, a);
}

/* See detect_int.h. */
void dt_btrfs_far(const struct dt_ctx *c, uint64_t *v, uint32_t *n, uint32_t max)
{
	const struct dt_btrfs *b = &c->btrfs;
	for (uint32_t k = 0; k < b->nmap && *n < max; k++)
		for (uint32_t s = 0; s < 2 && *n < max; s++)
			if (b->map[k].phys[s] != DT_NONE && fs_of(b, b->map[k].tag) >= 0)
				v[(*n)++] = b->map[k].phys[s];
}

/* Words for a DT_BTRFS_NODE anchor (NULL for other kinds). */
const char *dt_btrfs_name(const struct dt_anchor *a, char *buf, size_t len)
{
	if (a->kind != DT_BTRFS_NODE)
		return NULL;
	snprintf(buf, len, "btrfs tree block at logical %llu", (unsigned long long)a->raw);
	return buf;
}

/* The files' last blocks leaf P (NODE bytes, checked) lists, into OUT
 * from *N on (MAX at most): per item, the sizes of the inodes seen so
 * far in the leaf (an INODE_ITEM precedes its inode's extents). */
static void leaf_file_ends(const uint8_t *p, uint32_t node, uint32_t sect, struct dt_bend *out, uint32_t *n,
                           uint32_t max)
{
	uint64_t ino[64], size[64];
	uint32_t nino = 0, items = rk_get_le32(p + 0x60), tag = rk_get_le32(p + 0x20);
	for (uint32_t k = 0; k < items && k < (node - BT_HDR) / BT_ITEM && *n < max; k++) {
		const uint8_t *it = p + BT_HDR + k * BT_ITEM, *d;
		uint32_t off = rk_get_le32(it + 17), sz = rk_get_le32(it + 21);
		uint64_t obj = rk_get_le64(it), key = rk_get_le64(it + 9);
		if (off > node - BT_HDR || sz > node - BT_HDR - off)
			continue;
		d = p + BT_HDR + off;
		if (it[8] == BT_INODE_ITEM && sz >= 24 && nino < 64) {
			ino[nino] = obj;
			size[nino++] = rk_get_le64(d + 16);
			continue;
		}
		if (it[8] != BT_EXTENT_DATA || sz < 53 || d[16] || d[20] != 1 || !rk_get_le64(d + 21))
			continue;   /* compressed, inline, preallocated, or a hole */
		uint32_t q = 0;
		while (q < nino && ino[q] != obj)
			q++;
		uint64_t len = rk_get_le64(d + 45), at = rk_get_le64(d + 21), eoff = rk_get_le64(d + 37);
		if (q == nino || !size[q] || size[q] - 1 < key || size[q] - 1 - key >= len ||
		    at > UINT64_MAX - eoff - (size[q] - 1 - key))
			continue;   /* not the extent over the file's last byte */
		uint64_t l = at + eoff + (size[q] - 1 - key);
		out[(*n)++] = (struct dt_bend){ l - l % sect, obj, tag, (uint32_t)(size[q] % sect), sect };
	}
}

/* See detect_int.h. */
uint32_t dt_btrfs_file_ends(struct dt_ctx *c, struct dt_bend *out, uint32_t max)
{
	const struct dt_btrfs *b = &c->btrfs;
	uint8_t *p = malloc(65536);
	uint32_t n = 0;
	for (uint32_t k = 0; p && k < c->nanc && n < max; k++) {
		const struct dt_anchor *a = &c->anc[k];
		int f = a->kind == DT_BTRFS_NODE && a->voff != DT_NONE ? fs_of(b, a->tag) : -1;
		if (f < 0 || b->fs[f].nodesize > 65536 || dt_read(c, a->img, a->ioff, p, b->fs[f].nodesize) ||
		    p[0x64] != 0 || (rk_get_le64(p + 0x58) != BT_FS_TREE && rk_get_le64(p + 0x58) < 256) ||
		    rk_get_le64(p + 0x58) > (1ull << 48) || !csum_ok(p, b->fs[f].nodesize))
			continue;   /* not a file-system tree's leaf, or torn */
		leaf_file_ends(p, b->fs[f].nodesize, b->fs[f].sect, out, &n, max);
	}
	free(p);
	/* seed 2234's kind: mkfs.btrfs --rootdir leaves earlier copies of
	 * leaves whose inodes held a part of the file */
	uint8_t *bad = calloc(n ? n : 1, 1);
	for (uint32_t k = 0; bad && k < n; k++)
		for (uint32_t q = 0; q < n; q++)
			bad[k] |= out[q].obj == out[k].obj && out[q].tag == out[k].tag &&
			          (out[q].logical != out[k].logical || out[q].end != out[k].end);
	uint32_t w = 0;
	for (uint32_t k = 0; bad && k < n; k++)
		if (!bad[k])
			out[w++] = out[k];
	free(bad);
	return w;
}

/* See detect_int.h. */
uint64_t dt_btrfs_data_voff(const struct dt_ctx *c, uint32_t tag, uint64_t l)
{
	const struct dt_btrfs *b = &c->btrfs;
	int f = fs_of(b, tag);
	for (uint32_t k = 0; f >= 0 && k < b->ndmap; k++) {
		const struct dt_bmap *m = &b->dmap[k];
		if (m->tag == tag && l >= m->logical && l - m->logical < m->length && m->phys[0] + (l - m->logical) < b->fs[f].total_bytes)
			return m->phys[0] + (l - m->logical);
	}
	return DT_NONE;
}

/* Probing one hypothesis: the superblock at BASE + 64 KiB read through it,
 * then tree blocks found through the chunk map its own reads give. */
struct bprobe {
	struct dt_ctx *c;
	struct dt_hyp *h;
	uint64_t base, total;
	uint32_t limit, tag, node;
	struct dt_btrfs map;           /* the chunks read through H */
	uint64_t queued[BT_PROBE_MAX]; /* logical addresses of tree blocks to check, a work list */
	uint32_t nqueued;
	uint32_t sect, ncsum;          /* the data sector size; sectors checked against their checksums */
	uint8_t *data;                 /* one sector */
};

/* Reads volume bytes [BASE + V, + LEN) through the hypothesis: 0 read, 1
 * not (unreadable, or the quick look's predictions are spent). */
static int bp_read(struct bprobe *q, uint64_t v, uint8_t *buf, size_t len)
{
	if (v > UINT64_MAX - q->base || (q->limit && q->h->probe_ok + q->h->probe_bad >= q->limit))
		return 1;
	return dt_vread(q->c, q->h, q->base + v, buf, len) != 0;
}

/* Queues the block at logical L (once). */
static void bp_push(struct bprobe *q, uint64_t l)
{
	for (uint32_t k = 0; k < q->nqueued; k++)
		if (q->queued[k] == l)
			return;
	if (q->nqueued < BT_PROBE_MAX)
		q->queued[q->nqueued++] = l;
}

/* The block at logical L read through the map and the hypothesis into B
 * (q->node bytes), checked: 1 it holds (crc32c, bytenr, file system), 0 it
 * does not, -1 not read (not mapped, or unreadable).  Each copy of a DUP
 * chunk is a prediction of its own. */
static int bp_block(struct bprobe *q, uint64_t l, uint8_t *b)
{
	struct dt_anchor a = { DT_BTRFS_NODE, 0, 0, l, DT_NONE, DT_NONE, q->tag };
	map_resolve(&q->map, &a);
	int got = -1;
	uint64_t vv[2] = { a.voff, a.voff2 };
	for (int t = 0; t < 2; t++) {
		if (vv[t] == DT_NONE || bp_read(q, vv[t], b, q->node))
			continue;
		int ok = csum_ok(b, q->node) && rk_get_le64(b + 0x30) == l && rk_get_le32(b + 0x20) == q->tag;
		if (ok)
			q->h->probe_ok++;
		else
			q->h->probe_bad++;
		got = got == 1 ? 1 : ok;
	}
	return got;
}

/* The data sector at logical L read through the data chunks the
 * hypothesis's own chunk tree gave, against its crc32c CS: 1 holds, 0
 * not, -1 not read. */
static int bp_sector(struct bprobe *q, uint64_t l, uint32_t cs)
{
	for (uint32_t k = 0; k < q->map.ndmap; k++) {
		const struct dt_bmap *m = &q->map.dmap[k];
		if (m->tag != q->tag || m->length < q->sect || l < m->logical || l - m->logical > m->length - q->sect ||
		    m->phys[0] + (l - m->logical) > q->total - q->sect)
			continue;
		if (bp_read(q, m->phys[0] + (l - m->logical), q->data, q->sect))
			return -1;
		return dt_crc32c(q->data, q->sect) == cs;
	}
	return -1;
}

/* A checksum-tree leaf B (checked): files' data sectors against the
 * crc32c the file system keeps of each -- the first, middle and last of
 * each EXTENT_CSUM item, up to BT_CSUM_MAX in all.  Data is where
 * readings of an array that lost members differ most, and tree blocks
 * say nothing of it (seeds 3437, 3673: RAID-6 arrays of 4 with two
 * members gone, read alike by every rotation at their tree blocks). */
static void bp_csums(struct bprobe *q, const uint8_t *b)
{
	uint32_t n = rk_get_le32(b + 0x60);
	for (uint32_t k = 0; k < n && k < (q->node - BT_HDR) / BT_ITEM && q->ncsum < BT_CSUM_MAX; k++) {
		const uint8_t *it = b + BT_HDR + k * BT_ITEM;
		uint32_t off = rk_get_le32(it + 17), sz = rk_get_le32(it + 21), ns = sz / 4;
		if (rk_get_le64(it) != BT_CSUM_OBJ || it[8] != BT_EXTENT_CSUM || off > q->node - BT_HDR ||
		    sz > q->node - BT_HDR - off || !ns)
			continue;
		uint64_t l0 = rk_get_le64(it + 9);
		uint32_t pick[3] = { 0, ns / 2, ns - 1 };
		for (uint32_t j = 0; j < 3 && q->ncsum < BT_CSUM_MAX; j++) {
			if (j && pick[j] == pick[j - 1])
				continue;
			uint64_t l = l0 + (uint64_t)pick[j] * q->sect;
			if (l < l0)
				break;
			int r = bp_sector(q, l, rk_get_le32(b + BT_HDR + off + 4 * pick[j]));
			if (r < 0)
				continue;
			q->ncsum++;
			if (r)
				q->h->probe_ok++;
			else
				q->h->probe_bad++;
		}
	}
}

/* Queues what block B (checked, q->node bytes) points to: a node's
 * children, a root-tree leaf's trees (ROOT_ITEM's bytenr); a chunk-tree
 * leaf's chunks go into the map. */
static void bp_follow(struct bprobe *q, const uint8_t *b)
{
	uint32_t n = rk_get_le32(b + 0x60), level = b[0x64];
	uint64_t owner = rk_get_le64(b + 0x58);
	if (level) {
		for (uint32_t k = 0; k < n && k < (q->node - BT_HDR) / 33; k++)
			bp_push(q, rk_get_le64(b + BT_HDR + 33 * k + 17));
		return;
	}
	if (owner == BT_CHUNK_TREE) {
		leaf_learn(&q->map, b, q->node);
		return;
	}
	if (owner == BT_CSUM_TREE) {
		bp_csums(q, b);
		return;
	}
	for (uint32_t k = 0; owner == 1 && k < n && k < (q->node - BT_HDR) / BT_ITEM; k++) {
		const uint8_t *it = b + BT_HDR + k * BT_ITEM;
		uint32_t off = rk_get_le32(it + 17), sz = rk_get_le32(it + 21);
		if (it[8] == 132 && sz >= 184 && off <= q->node - BT_HDR && sz <= q->node - BT_HDR - off)
			bp_push(q, rk_get_le64(b + BT_HDR + off + 176));   /* ROOT_ITEM: the tree's root block */
	}
}

/* See detect_int.h. */
void dt_btrfs_probe(struct dt_ctx *c, struct dt_hyp *h, uint64_t base, uint32_t limit)
{
	struct bprobe *q = calloc(1, sizeof *q);
	uint8_t *sb = malloc(BT_SB_SIZE), *b = malloc(65536);
	if (!q || !sb || !b)
		goto out;
	*q = (struct bprobe){ .c = c, .h = h, .base = base, .limit = limit };
	if (bp_read(q, 65536, sb, BT_SB_SIZE))
		goto out;
	sb_learn(&q->map, sb);
	if (q->map.nfs != 1 || rk_get_le64(sb + 0x30) != 65536) {
		h->probe_bad++;   /* the superblock's magic without its checksum: torn apart */
		goto out;
	}
	h->probe_ok++;
	q->tag = q->map.fs[0].tag;
	q->node = q->map.fs[0].nodesize;
	q->sect = q->map.fs[0].sect;
	q->total = q->map.fs[0].total_bytes;
	if (q->total < q->sect || !(q->data = malloc(q->sect)))
		goto out;
	bp_push(q, rk_get_le64(sb + 0x58));   /* the chunk tree first: it maps the rest */
	bp_push(q, rk_get_le64(sb + 0x50));
	for (uint32_t k = 0; k < q->nqueued; k++)
		if (bp_block(q, q->queued[k], b) == 1)
			bp_follow(q, b);
out:
	if (q)
		free(q->data);
	free(q);
	free(sb);
	free(b);
}
