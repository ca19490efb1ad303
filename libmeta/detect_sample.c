/* detect_sample.c: opening the images read-only, the read budget, the
 * block cache, and the sampling plan of the anchor scan: the head of every
 * image, windows spread over the whole image, and windows where the file
 * system found in the head predicts its own copies (spec/detect.md). */
#include <stdlib.h>
#include <string.h>

#include "detect_int.h"
#include "rk_segnames.h"
#include "rk_util.h"

#define DT_TWIN (4ull << 20)       /* a targeted window */

/* Opens every image read-only; RK_E_OPEN names the one that fails. */
rk_err dt_open(struct dt_ctx *c, char *const *paths, uint32_t n)
{
	c->img = calloc(n ? n : 1, sizeof *c->img);
	if (!c->img)
		return rk_fail(RK_E_NOMEM, "out of memory");
	c->nimg = n;
	for (uint32_t i = 0; i < n; i++) {
		/* split-named disks with a GPT each: opened as the geometry file's opens do */
		rk_err e = rk_member_open_path(&c->img[i].dev, paths[i], RK_DEV_RDONLY);
		if (e)
			return e;
		c->img[i].path = paths[i];
		c->img[i].size = rk_dev_size(c->img[i].dev);
	}
	/* 4 KiB blocks: at most 3/4 of the slots filled (48 MiB), emptied at
	 * the next trim point once half are: the detector's whole memory
	 * stays under the 64 MiB peak RSS of issue 13 */
	c->ncache = 1u << 14;
	c->cache = calloc(c->ncache, sizeof *c->cache);
	if (!c->cache)
		return rk_fail(RK_E_NOMEM, "out of memory");
	return RK_OK;
}

static void cache_clear(struct dt_ctx *c)
{
	for (uint32_t k = 0; k < c->ncache; k++) {
		free(c->cache[k].data);
		c->cache[k].data = NULL;
	}
	c->ncached = 0;
}

/* Closes the images and frees the cache and anchors. */
void dt_close(struct dt_ctx *c)
{
	if (c->cache)
		cache_clear(c);
	free(c->cache);
	for (uint32_t i = 0; c->img && i < c->nimg; i++)
		rk_dev_close(c->img[i].dev);
	free(c->img);
	free(c->anc);
	free(c->anc_copy);
	free(c->exf.files);
	dt_zero_free(c);
	memset(c, 0, sizeof *c);
}

/* The XOR of the images in c->xmask over [OFF, OFF+LEN) into BUF. */
static int xor_read(struct dt_ctx *c, uint64_t off, uint8_t *buf, size_t len)
{
	uint8_t t[DT_BLK];
	memset(buf, 0, len);
	for (uint32_t j = 0; j < c->nimg && j < 64; j++)
		for (size_t p = 0; (c->xmask >> j & 1) && p < len; p += sizeof t) {
			size_t n = len - p < sizeof t ? len - p : sizeof t;
			if (off + p > UINT64_MAX - c->xoff[j] || dt_read(c, j, off + p + c->xoff[j], t, n))
				return -1;
			for (size_t k = 0; k < n; k++)
				buf[p + k] ^= t[k];
		}
	return c->xmask ? 0 : -1;
}

/* Budgeted read (see detect_int.h). */
int dt_read(struct dt_ctx *c, uint32_t i, uint64_t off, void *buf, size_t len)
{
	if (i == DT_XIMG)
		return xor_read(c, off, buf, len);
	struct dt_img *m = &c->img[i];
	if (off > m->size || len > m->size - off)
		return -1;
	if (m->nread + len > RK_DETECT_READ_MAX)
		return -1;
	m->nread += len;
	return rk_dev_pread(m->dev, buf, len, off) == RK_OK ? 0 : -1;
}

/* Cached block (see detect_int.h). */
const uint8_t *dt_block(struct dt_ctx *c, uint32_t i, uint64_t off)
{
	uint64_t h = (off / 512 * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)i * 0xC2B2AE3D27D4EB4Full);
	uint32_t k = (uint32_t)(h >> 40) & (c->ncache - 1);
	for (;; k = (k + 1) & (c->ncache - 1)) {
		struct dt_cblk *b = &c->cache[k];
		if (!b->data)
			break;
		if (b->img == i && b->off == off)
			return b->ok ? b->data : NULL;
	}
	if (c->ncached >= c->ncache / 4 * 3)
		return NULL;   /* full until the next dt_cache_trim */
	struct dt_cblk *b = &c->cache[k];
	b->data = malloc(DT_BLK);
	if (!b->data)
		return NULL;
	b->img = i;
	b->off = off;
	b->ok = dt_read(c, i, off, b->data, DT_BLK) == 0;
	c->ncached++;
	return b->ok ? b->data : NULL;
}

/* Empties the cache when half full; only where no block pointer is held. */
void dt_cache_trim(struct dt_ctx *c)
{
	if (c->ncached >= c->ncache / 2)
		cache_clear(c);
}

/* Reads [OFF, OFF+LEN) of image I (clipped to the image) in pieces and
 * scans it for anchors. */
static void scan_range(struct dt_ctx *c, uint32_t i, uint64_t off, uint64_t len, uint8_t *buf, size_t bufsz)
{
	uint64_t size = c->img[i].size;
	off &= ~511ull;
	if (off >= size)
		return;
	if (len > size - off)
		len = size - off;
	while (len) {
		size_t n = len < bufsz ? (size_t)len : bufsz;
		n &= ~(size_t)511;
		if (!n || dt_read(c, i, off, buf, n))
			return;
		dt_scan_buf(c, i, off, buf, n);
		off += n;
		len -= n;
	}
}

/* Volume offsets where the file system found so far keeps copies of its
 * own metadata, far from the start: where targeted windows go.  Returns
 * how many were written to V (at most MAX). */
static uint32_t predicted_far(const struct dt_fs *fs, uint64_t *v, uint32_t max)
{
	static const uint32_t grp[] = { 1, 3, 5, 7, 9, 25, 27, 49, 81, 125, 243, 343, 625, 729, 2187, 2401 };
	uint32_t n = 0;
	if (fs->ext) {
		uint64_t gsz = (uint64_t)fs->ext_bpg * fs->ext_bs;
		uint64_t ngroups = gsz ? (fs->ext_blocks + fs->ext_bpg - 1) / fs->ext_bpg : 0;
		for (uint32_t k = 0; k < sizeof grp / sizeof grp[0] && n < max; k++)
			if (grp[k] < ngroups)
				v[n++] = fs->base[DT_FSK_EXT] + ((uint64_t)grp[k] * fs->ext_bpg + fs->ext_fdb) * fs->ext_bs;
	}
	if (fs->xfs)
		for (uint32_t a = 1; a < fs->xfs_agcount && a < 16 && n < max; a++)
			v[n++] = fs->base[DT_FSK_XFS] + (uint64_t)a * fs->xfs_agblocks * fs->xfs_bs;
	if (fs->btrfs && n + 2 <= max) {
		v[n++] = fs->base[DT_FSK_BTRFS] + (64ull << 20);
		v[n++] = fs->base[DT_FSK_BTRFS] + (256ull << 30);
	}
	if (fs->ntfs && n < max)
		v[n++] = fs->base[DT_FSK_NTFS] + fs->ntfs_sectors * fs->ntfs_bps;
	if (fs->gpt && n < max)
		v[n++] = fs->gpt_alt * 512;
	return n;
}

/* Whether anchors of a FAT (its tables, its directories), of an NTFS
 * (MFT records) or of an XFS (AG headers, v5 inodes and blocks) were seen
 * while the boot sector or superblock that places them was not. */
static int boot_unseen(const struct dt_ctx *c)
{
	for (uint32_t k = 0; k < c->nanc; k++) {
		uint8_t kd = c->anc[k].kind;
		if (((kd == DT_FAT_TAB || kd == DT_FAT_DIR) && !c->self.fat) || (kd == DT_NTFS_MFT && !c->fs.ntfs) ||
		    ((kd == DT_XFS_AGF || kd == DT_XFS_AGI || kd == DT_XFS_INO || kd == DT_XFS_BLK) && !c->fs.xfs))
			return 1;
	}
	return 0;
}

/* Whether the 512 bytes A XOR (B & M) start as a boot sector (its
 * signature and jump) or an XFS superblock ("XFSB"). */
static int rebuilt_head(const uint8_t *a, const uint8_t *b, uint8_t m)
{
	if ((a[0] ^ (b[0] & m)) == 'X' && (a[1] ^ (b[1] & m)) == 'F' && (a[2] ^ (b[2] & m)) == 'S' &&
	    (a[3] ^ (b[3] & m)) == 'B')
		return 1;
	return (a[510] ^ (b[510] & m)) == 0x55 && (a[511] ^ (b[511] & m)) == 0xAA &&
	       ((a[0] ^ (b[0] & m)) == 0xEB || (a[0] ^ (b[0] & m)) == 0xE9);
}

/* A boot sector on a missing member, rebuilt: members of a RAID-5 (or
 * RAID-6 without Q) that share one start XOR to the missing one's bytes
 * at every image offset.  Over the first 4 MiB, the XOR of every image,
 * and of every image but one (an unrelated one among them), is read for
 * a FAT or NTFS boot sector, or an XFS superblock, whose parameters the
 * scan lacks (dt_learn_boot): the file system's anchors need them (seed
 * 2401: a RAID-5 of 8 whose missing member held the FAT32 boot sector
 * and its backup; 600 FAT-table anchors placed nothing; seed 5675: a
 * RAID-5 of 5 whose missing member held the only XFS superblock of a
 * one-AG file system).  Parameters only: a wrong XOR teaches wrong ones,
 * which anchors then fail to fit. */
static void learn_rebuilt(struct dt_ctx *c, uint8_t *buf, size_t bufsz)
{
	if (c->nimg < 2 || c->nimg > 16 || bufsz < (size_t)(c->nimg + 1) * DT_BLK || !boot_unseen(c))
		return;
	uint8_t *all = buf + (size_t)c->nimg * DT_BLK, x[512];
	for (uint64_t off = 0; off < (4ull << 20); off += DT_BLK) {
		memset(all, 0, DT_BLK);
		for (uint32_t i = 0; i < c->nimg; i++) {
			uint8_t *b = buf + (size_t)i * DT_BLK;
			if (dt_read(c, i, off, b, DT_BLK))
				memset(b, 0, DT_BLK);
			for (uint32_t k = 0; k < DT_BLK; k++)
				all[k] ^= b[k];
		}
		for (uint32_t j = 0; j <= c->nimg; j++)   /* j == nimg: every image */
			for (uint32_t q = 0; q < DT_BLK; q += 512) {
				const uint8_t *a = all + q, *b = buf + (size_t)j * DT_BLK + q;
				uint8_t m = j < c->nimg ? 0xFF : 0;   /* every image: B left out of the XOR */
				if (!rebuilt_head(a, b, m))
					continue;   /* no boot sector's signature: not rebuilt in full */
				for (uint32_t k = 0; k < 512; k++)
					x[k] = a[k] ^ (b[k] & m);
				if (dt_learn_boot(c, x) && !boot_unseen(c))
					return;
			}
	}
}

/* The scan plan (see detect_int.h): head, spread windows, then targeted
 * windows at v/k for every predicted copy v and every data-member count k. */
rk_err dt_scan_all(struct dt_ctx *c)
{
	size_t bufsz = 4u << 20;
	uint8_t *buf = malloc(bufsz);
	if (!buf)
		return rk_fail(RK_E_NOMEM, "out of memory");
	for (uint32_t i = 0; i < c->nimg; i++) {
		uint64_t size = c->img[i].size;
		scan_range(c, i, 0, DT_HEAD, buf, bufsz);
		if (size > DT_HEAD + DT_WIN)
			for (uint32_t w = 1; w <= DT_NSPREAD; w++)
				scan_range(c, i, DT_HEAD + (size - DT_HEAD - DT_WIN) / DT_NSPREAD * w, DT_WIN, buf, bufsz);
	}
	dt_resolve(c);
	uint64_t v[40];
	uint32_t nv = predicted_far(&c->fs, v, 40);
	dt_btrfs_far(c, v, &nv, 40);
	uint32_t kmax = c->nimg + 2 > DT_MAX_ROLES ? DT_MAX_ROLES : c->nimg + 2;
	for (uint32_t i = 0; i < c->nimg; i++)
		for (uint32_t a = 0; a < nv; a++)
			for (uint32_t k = 1; k <= kmax; k++) {
				uint64_t m = v[a] / k;
				if (m + DT_TWIN / 2 <= DT_HEAD)
					continue;   /* inside the head: scanned */
				m = m > DT_TWIN / 2 ? m - DT_TWIN / 2 : 0;
				scan_range(c, i, m, DT_TWIN, buf, bufsz);
			}
	learn_rebuilt(c, buf, bufsz);
	dt_ext_learn_rebuilt(c);
	free(buf);
	dt_resolve(c);
	dt_lastblocks(c);
	dt_resolve(c);   /* the tails count in dt_ext_settle */
	return RK_OK;
}
