/* detect_xfs.c: what an XFS superblock at a hypothesis's volume start
 * predicts, checked through the hypothesis: each AG's AGF header where
 * the geometry puts it; the inode chunks each AG's inode B+tree root
 * lists, whose inodes (v5) name their own number; and the last block of
 * each regular file those inodes map, which holds the file's last bytes
 * and zeros after them (dt_tail_check).  A reading that swaps two members'
 * chunks keeps every header but moves file blocks: the tails tell such
 * readings apart where nothing else does.  Every field read is hostile:
 * the geometry is checked before use and every product bounded. */
#include <stdlib.h>
#include <string.h>

#include "detect_int.h"
#include "rk_le.h"
#include "rk_util.h"

#define XF_AGS 48u        /* AGs probed */
#define XF_CHUNKS 8u      /* inode chunks read per AG */
#define XF_TAILS 256u     /* file tails checked */
#define XF_EXTENTS 32u    /* extent records looked at per inode */

struct xq {
	struct dt_ctx *c;
	struct dt_hyp *h;
	uint64_t base;
	uint32_t limit;
	uint32_t bs, ss, isz, agblocks, agcount, agblklog, inopblog, v5;
	uint32_t tails;
	uint8_t *blk;      /* bs bytes: a file's last block */
};

static void tally(struct xq *q, int ok) { if (ok) q->h->probe_ok++; else q->h->probe_bad++; }

/* Volume bytes [BASE + V, +LEN) through the hypothesis: 0 read; 1 not
 * available (unmapped, missing, or the quick look's limit reached). */
static int xr(struct xq *q, uint64_t v, uint8_t *buf, size_t len)
{
	if (v > UINT64_MAX - q->base || (q->limit && q->h->probe_ok + q->h->probe_bad >= q->limit))
		return 1;
	return dt_vread(q->c, q->h, q->base + v, buf, len) != 0;
}

static int pow2(uint32_t v) { return v && !(v & (v - 1)); }

/* The volume byte (from BASE) of AG AG's block AGBNO; UINT64_MAX outside
 * (xq_geometry bounds AGs times their blocks, so no product overflows). */
static uint64_t ag_byte(const struct xq *q, uint64_t ag, uint64_t agbno)
{
	if (ag >= q->agcount || agbno >= q->agblocks)
		return UINT64_MAX;
	return (ag * q->agblocks + agbno) * q->bs;   /* agcount, agblocks < 2^32, bs <= 2^16 */
}

/* The geometry of superblock SB into Q; 0 when implausible. */
static int xq_geometry(struct xq *q, const uint8_t *sb)
{
	q->bs = rk_get_be32(sb + 4);
	q->agblocks = rk_get_be32(sb + 84);
	q->agcount = rk_get_be32(sb + 88);
	q->ss = rk_get_be16(sb + 102);
	q->isz = rk_get_be16(sb + 104);
	q->inopblog = sb[123];
	q->agblklog = sb[124];
	q->v5 = (rk_get_be16(sb + 100) & 0xF) == 5;
	return pow2(q->bs) && q->bs >= 512 && q->bs <= 65536 && pow2(q->ss) && q->ss >= 512 && q->ss <= q->bs &&
	       q->agblocks && q->agcount && (uint64_t)q->agcount * q->agblocks <= (1ull << 47) &&   /* bytes < 2^63 */
	       q->agblklog < 32 && (1ull << q->agblklog) >= q->agblocks &&
	       pow2(q->isz) && q->isz >= 256 && q->isz <= q->bs && q->inopblog < 16 &&
	       (q->bs / q->isz) == (1u << q->inopblog);
}

/* See detect_int.h. */
int dt_xfs_last_block(const uint8_t *in, uint32_t isz, uint32_t bs, uint32_t agblklog, uint64_t *size, uint64_t *ag,
                      uint64_t *agbno)
{
	uint32_t fork = in[4] >= 3 ? 176 : 100;
	if ((rk_get_be16(in + 2) >> 12) != 8 || in[5] != 2 || !rk_get_be32(in + 16) || isz <= fork || !bs || agblklog >= 32)
		return 0;   /* not a regular file with its extents in the inode */
	*size = rk_get_be64(in + 56);
	uint32_t n = rk_get_be32(in + 76), room = (isz - fork) / 16;
	if (!*size || *size > (1ull << 56))
		return 0;
	uint64_t last = (*size - 1) / bs;
	for (uint32_t k = 0; k < n && k < room && k < XF_EXTENTS; k++) {
		uint64_t l0 = rk_get_be64(in + fork + 16 * k), l1 = rk_get_be64(in + fork + 16 * k + 8);
		uint64_t off = (l0 & ~(1ull << 63)) >> 9, fsb = (l0 & 0x1FF) << 43 | l1 >> 21, len = l1 & 0x1FFFFF;
		if (last < off || last - off >= len)
			continue;
		if (l0 >> 63)
			return 0;   /* unwritten: reads as zeros whatever the disk holds */
		*ag = fsb >> agblklog;
		*agbno = (fsb & ((1ull << agblklog) - 1)) + (last - off);
		return 1;
	}
	return 0;
}

/* The last block of the regular file inode IN maps (extents in the inode). */
static void xfs_tail(struct xq *q, const uint8_t *in)
{
	uint64_t size, ag, agbno;
	if (!dt_xfs_last_block(in, q->isz, q->bs, q->agblklog, &size, &ag, &agbno))
		return;
	uint64_t at = ag_byte(q, ag, agbno);
	if (at == UINT64_MAX || at > UINT64_MAX - q->base)
		return;
	int r = dt_tail_check(q->c, q->h, q->base + at, q->bs, size, q->blk);
	if (r >= 0) {
		tally(q, r);
		q->tails++;
	}
	q->h->tail_bad += r == 0;
}

/* The 64 inodes of the chunk starting at AG inode AGINO of AG AG: each
 * 4 KiB read holds inodes ("IN"; v5: their own number), and the regular
 * files among them their tails. */
static void xfs_chunk(struct xq *q, uint64_t ag, uint32_t agino)
{
	uint64_t at = ag_byte(q, ag, agino >> q->inopblog);
	if (at == UINT64_MAX)
		return;
	at += (uint64_t)(agino & ((1u << q->inopblog) - 1)) * q->isz;
	uint8_t b[DT_BLK];
	uint32_t per = DT_BLK / q->isz ? DT_BLK / q->isz : 1, len = per * q->isz;
	for (uint32_t i = 0; i < 64; i += per) {
		if (len > sizeof b || xr(q, at + (uint64_t)i * q->isz, b, len))
			return;
		int good = 1;
		for (uint32_t k = 0; k < per && good; k++) {
			const uint8_t *in = b + k * q->isz;
			uint64_t ino = (ag << (q->agblklog + q->inopblog)) | (agino + i + k);
			good = !memcmp(in, "IN", 2) && (!q->v5 || in[4] < 3 || rk_get_be64(in + 152) == ino);
		}
		tally(q, good);
		if (!good || q->limit)
			continue;
		for (uint32_t k = 0; k < per && q->tails < XF_TAILS; k++)
			xfs_tail(q, b + k * q->isz);
	}
}

/* The inode chunks AG AG's inode B+tree root lists, when the root is a
 * leaf (small AGs; deeper trees are left alone). */
static void xfs_inodes(struct xq *q, uint64_t ag)
{
	uint64_t agi = ag_byte(q, ag, 0);
	uint8_t a[32];
	if (agi == UINT64_MAX || xr(q, agi + 2ull * q->ss, a, sizeof a) || memcmp(a, "XAGI", 4) ||
	    rk_get_be32(a + 24) != 1)
		return;
	uint64_t root = ag_byte(q, ag, rk_get_be32(a + 20));
	uint8_t r[56 + 16 * XF_CHUNKS];
	if (root == UINT64_MAX || xr(q, root, r, sizeof r))
		return;
	uint32_t hdr = !memcmp(r, "IAB3", 4) ? 56 : !memcmp(r, "IABT", 4) ? 16 : 0;
	if (!hdr || rk_get_be16(r + 4) != 0)
		return;
	uint32_t n = rk_get_be16(r + 6);
	for (uint32_t k = 0; k < n && k < XF_CHUNKS && hdr + 16 * (k + 1) <= sizeof r; k++)
		xfs_chunk(q, ag, rk_get_be32(r + hdr + 16 * k));
}

/* See detect_int.h. */
void dt_xfs_probe(struct dt_ctx *c, struct dt_hyp *h, uint64_t base, uint32_t limit, const uint8_t *sb)
{
	struct xq q = { .c = c, .h = h, .base = base, .limit = limit };
	if (!xq_geometry(&q, sb))
		return;
	uint8_t b[16];
	for (uint32_t a = 1; a < q.agcount && a <= XF_AGS; a++)
		if (!xr(&q, ag_byte(&q, a, 0) + q.ss, b, sizeof b))
			tally(&q, !memcmp(b, "XAGF", 4) && rk_get_be32(b + 8) == a);
	if (limit)
		return;   /* a quick look: the headers only */
	q.blk = malloc(q.bs);
	if (!q.blk)
		return;
	uint32_t step = q.agcount > XF_AGS ? q.agcount / XF_AGS : 1;
	for (uint64_t a = 0; a < q.agcount; a += step)
		xfs_inodes(&q, a);
	free(q.blk);
}
