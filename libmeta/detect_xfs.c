/* detect_xfs.c: XFS v5 metadata that records its own place (anchors for
 * detect_anchor.c).  Every v5 btree block (free space, inodes, block maps,
 * reverse maps, reference counts), directory and attribute block carries
 * its disk address (bb_blkno / blkno, 512-byte units from the file
 * system's start) and the file system's UUID; every v3 inode carries its
 * own inode number, which the superblock's geometry turns into a place.  A
 * hit counts only when its UUID is the superblock's (a stale or foreign
 * XFS says nothing about this one).  Raw values carry a 16-bit digest of
 * the UUID over the 48-bit address, since the superblock may be read after
 * the hit. */
#include <string.h>

#include "detect_int.h"
#include "rk_le.h"

#define XFS_ADDR_MASK ((1ull << 48) - 1)

/* The 16-bit digest of the 16-byte UUID at U (FNV-1a, folded). */
static uint64_t uuid16(const uint8_t *u)
{
	uint32_t h = 2166136261u;
	for (int k = 0; k < 16; k++)
		h = (h ^ u[k]) * 16777619u;
	return (h ^ (h >> 16)) & 0xFFFF;
}

/* See detect_int.h. */
void dt_xfs_sb(struct dt_fs *fs, const uint8_t *p)
{
	if ((rk_get_be16(p + 100) & 0xF) != 5)
		return;   /* v4 blocks carry no address */
	fs->xfs_v5 = 1;
	fs->xfs_uuid16 = (uint16_t)uuid16(p + 32);
	fs->xfs_inodesize = rk_get_be16(p + 104);
	fs->xfs_inopblog = p[123];
	fs->xfs_agblklog = p[124];
}

/* See detect_int.h. */
int dt_xfs_self(const uint8_t *p, uint64_t *raw)
{
	static const char *const sbt[] = { "AB3B", "AB3C", "IAB3", "FIB3", "RMB3", "R3FC" };
	for (size_t k = 0; k < sizeof sbt / sizeof sbt[0]; k++)
		if (!memcmp(p, sbt[k], 4)) {   /* short-form btree: blkno at 16, uuid at 32 */
			*raw = uuid16(p + 32) << 48 | (rk_get_be64(p + 16) & XFS_ADDR_MASK);
			return DT_XFS_BLK;
		}
	if (!memcmp(p, "BMA3", 4)) {   /* long-form: blkno at 24, uuid at 40 */
		*raw = uuid16(p + 40) << 48 | (rk_get_be64(p + 24) & XFS_ADDR_MASK);
		return DT_XFS_BLK;
	}
	if (!memcmp(p, "XDB3", 4) || !memcmp(p, "XDD3", 4) || !memcmp(p, "XDF3", 4)) {   /* blkno at 8, uuid at 24 */
		*raw = uuid16(p + 24) << 48 | (rk_get_be64(p + 8) & XFS_ADDR_MASK);
		return DT_XFS_BLK;
	}
	uint16_t m = rk_get_be16(p + 8);
	if ((m == 0x3ebe || m == 0x3df1 || m == 0x3dff || m == 0x3bee) && !p[10] && !p[11]) {   /* da3 blkinfo */
		*raw = uuid16(p + 32) << 48 | (rk_get_be64(p + 16) & XFS_ADDR_MASK);
		return DT_XFS_BLK;
	}
	if (p[0] == 'I' && p[1] == 'N' && p[4] == 3) {   /* v3 inode: di_ino at 152, uuid at 160 */
		*raw = uuid16(p + 160) << 48 | (rk_get_be64(p + 152) & XFS_ADDR_MASK);
		return DT_XFS_INO;
	}
	return 0;
}

/* See detect_int.h. */
void dt_xfs_resolve(const struct dt_fs *fs, struct dt_anchor *a)
{
	if (!fs->xfs || !fs->xfs_v5 || a->raw >> 48 != fs->xfs_uuid16)
		return;
	uint64_t v = a->raw & XFS_ADDR_MASK;
	if (a->kind == DT_XFS_BLK) {
		if (v && v < (1ull << 40))
			a->voff = v * 512;
		return;
	}
	uint32_t ib = fs->xfs_inopblog, ab = fs->xfs_agblklog;
	if (!fs->xfs_inodesize || ib > 8 || ab > 31 || !v)
		return;
	uint64_t agno = v >> (ab + ib), agino = v & ((1ull << (ab + ib)) - 1);
	uint64_t agbno = agino >> ib, slot = agino & ((1ull << ib) - 1);
	if (agno >= fs->xfs_agcount || agbno >= fs->xfs_agblocks)
		return;
	a->voff = (agno * fs->xfs_agblocks + agbno) * fs->xfs_bs + slot * fs->xfs_inodesize;
}
