/* fuzz_detect.c: raid-recover --detect's decoders of file-system bytes
 * (libmeta/detect_anchor.c, detect_self.c, detect_btrfs.c, detect_exfat.c's
 * entry sets and detect_lastblock.c: the anchor scan; detect_probe.c, detect_btrfs.c's, detect_xfs.c's, detect_ntfs.c's
 * probes and detect_fat.c's file tails: what a hypothesis reads) over
 * arbitrary bytes.
 *
 * The input is an image of 1 MiB (zeros elsewhere): its first 4 KiB go to
 * 64 KiB (where a btrfs superblock sits), the rest from 68 KiB on.  So
 * that mutations reach past the checksums, the copy is sealed once as it
 * is and once with a crc32c recomputed over the superblock and over every
 * 4 KiB-aligned block from 68 KiB on that has a btrfs tree header (at the
 * superblock's nodesize when plausible, else 4 KiB).  The scan must add
 * anchors only inside the image; a btrfs anchor must resolve inside its
 * file system; the probes of a hypothesis reading the image as the
 * volume must stay bounded.  Then the input is the volume from byte 0
 * on, so the probes of the file systems that start there (and the
 * allocation maps of the tie-break) read it.  Anything else aborts. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "detect_int.h"
#include "rk_le.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define IMG (1u << 20)
#define SB (64u << 10)
#define REST (68u << 10)

/* Recomputes the crc32c of the superblock and of tree blocks in B. */
static void seal(uint8_t *b)
{
	uint8_t *s = b + SB;
	rk_put_le32(s, dt_crc32c(s + 32, 4096 - 32));
	uint32_t node = rk_get_le32(s + 0x94);
	if (node < 4096 || node > 65536 || (node & (node - 1)))
		node = 4096;
	for (uint32_t o = REST; o + node <= IMG; o += 4096)
		if (rk_get_le64(b + o + 0x38) >> 56 == 1)
			rk_put_le32(b + o, dt_crc32c(b + o + 32, node - 32));
}

/* Scans and probes image B as one member. */
static void one(const uint8_t *b)
{
	struct dt_ctx c;
	memset(&c, 0, sizeof c);
	c.img = calloc(1, sizeof *c.img);
	c.ncache = 1024;
	c.cache = calloc(c.ncache, sizeof *c.cache);
	if (!c.img || !c.cache || rk_dev_mem(&c.img[0].dev, "fuzz", IMG) != RK_OK) {
		free(c.img);
		free(c.cache);
		return;
	}
	c.nimg = 1;
	c.img[0].size = IMG;
	memcpy(rk_dev_mem_data(c.img[0].dev), b, IMG);
	dt_scan_buf(&c, 0, 0, b, IMG);
	dt_resolve(&c);
	dt_lastblocks(&c);   /* files' last blocks, looked for as the scan plan does */
	dt_resolve(&c);
	for (uint32_t k = 0; k < c.nanc; k++) {
		const struct dt_anchor *a = &c.anc[k];
		if (a->img != 0 || a->ioff >= IMG)
			abort();
		if (a->kind == DT_BTRFS_NODE && a->voff != DT_NONE && a->voff >= (1ull << 50))
			abort();
	}
	struct dt_hyp h;
	memset(&h, 0, sizeof h);
	for (uint32_t r = 0; r < DT_MAX_ROLES; r++)
		h.role_img[r] = -1;
	h.role_img[0] = 0;
	if (rk_geom_init(&h.g, RK_LEVEL_LINEAR, 0, 0, 1, IMG) == RK_OK) {
		dt_probe(&c, &h, 0);
		if (h.probe_ok + h.probe_bad > 100000)
			abort();
		(void)dt_fs_claim(&c, &h);
		if (dt_part_confirm(&c, &h) > 0 && !c.fs.base_fixed)   /* the partitions read through it */
			abort();
		dt_probe(&c, &h, 12);
		if (h.probe_ok + h.probe_bad > 12 + 16)   /* a quick look: about the limit */
			abort();
		/* the allocation maps, against a reading 4 KiB further on */
		struct dt_hyp h2 = h;
		double fa, fb;
		h2.off[0] = 4096;
		if (rk_geom_init(&h2.g, RK_LEVEL_LINEAR, 0, 0, 1, IMG - 4096) == RK_OK &&
		    dt_alloc_tiebreak(&c, &h, &h2, &fa, &fb) && (fa < -1.5 || fa > 1 || fb < -1.5 || fb > 1))
			abort();
	}
	dt_close(&c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > IMG - REST + 4096)
		return 0;
	uint8_t *b = calloc(1, IMG);
	if (!b)
		return 0;
	memcpy(b + SB, data, size < 4096 ? size : 4096);
	if (size > 4096)
		memcpy(b + REST, data + 4096, size - 4096);
	one(b);
	seal(b);
	one(b);
	/* the input as the volume's start: the probes of what sits at volume
	 * byte 0 (ext, NTFS, FAT, exFAT, XFS, GPT, MBR) and their allocation
	 * maps (detect_alloc.c) */
	memset(b, 0, IMG);
	memcpy(b, data, size);
	one(b);
	free(b);
	return 0;
}
