/* test_detect_btrfs.c: btrfs tree blocks as anchors and probes
 * (libmeta/detect_btrfs.c).  crc32c against its check value; a hand-made
 * btrfs (superblock with a DUP system chunk, a chunk-tree leaf mapping a
 * DUP metadata chunk, a root-tree leaf naming an fs tree): every tree
 * block resolves to both of its copies' volume bytes, a block of another
 * file system or outside every chunk to none, a chunk leaf whose crc32c
 * fails teaches nothing; the probe walks the trees through a hypothesis
 * that reads the image as the volume (every block holds) and finds
 * nothing through one off by a sector.  Where mkfs.btrfs is installed, a
 * real file system: every tree block found resolves to its own place, the
 * probe checks files' data sectors against the checksum tree, and one
 * sector altered fails. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "detect_int.h"
#include "rk_le.h"
#include "helpers/detect_hyp.h"
#include "helpers/rk_test.h"

#define KiB 1024u
#define NODE (16 * KiB)
#define IMG (256 * KiB)
#define SYS_L (1u << 20)       /* system chunk: logical 1 MiB, 32 KiB, copies at 80 and 176 KiB */
#define META_L (2u << 20)      /* metadata chunk: logical 2 MiB, 48 KiB, copies at 96 and 192 KiB */

static const uint8_t FSID[16] = { 0xa2, 0x16, 0xa6, 0x10, 0x8a, 0x2d, 0x43, 0xb9, 1, 2, 3, 4, 5, 6, 7, 8 };

/* A chunk (48 bytes + 2 DUP stripes) of TYPE at P. */
static void chunk(uint8_t *p, uint64_t len, uint64_t type, uint64_t ph0, uint64_t ph1)
{
	rk_put_le64(p, len);
	rk_put_le64(p + 8, 2);
	rk_put_le64(p + 16, 65536);
	rk_put_le64(p + 24, type);
	rk_put_le32(p + 32, 65536);
	rk_put_le32(p + 36, 65536);
	rk_put_le32(p + 40, 4096);
	rk_put_le16(p + 44, 2);
	rk_put_le16(p + 46, 1);
	rk_put_le64(p + 48, 1);
	rk_put_le64(p + 56, ph0);
	rk_put_le64(p + 80, 1);
	rk_put_le64(p + 88, ph1);
}

/* The superblock (its crc32c sealed). */
static void superblock(uint8_t *p)
{
	memset(p, 0, 4096);
	memcpy(p + 0x20, FSID, 16);
	rk_put_le64(p + 0x30, 65536);
	memcpy(p + 0x40, "_BHRfS_M", 8);
	rk_put_le64(p + 0x48, 7);
	rk_put_le64(p + 0x50, META_L);          /* root tree */
	rk_put_le64(p + 0x58, SYS_L);           /* chunk tree */
	rk_put_le64(p + 0x70, IMG);
	rk_put_le64(p + 0x88, 1);
	rk_put_le32(p + 0x90, 4096);
	rk_put_le32(p + 0x94, NODE);
	rk_put_le32(p + 0xA0, 17 + 112);
	uint8_t *a = p + 0x32B;                 /* key (256, CHUNK_ITEM, SYS_L), then the chunk */
	rk_put_le64(a, 256);
	a[8] = 228;
	rk_put_le64(a + 9, SYS_L);
	chunk(a + 17, 32 * KiB, 2 | 32, 80 * KiB, 176 * KiB);
	rk_put_le32(p, dt_crc32c(p + 32, 4096 - 32));
}

/* A tree block's header at P: bytenr, owner, level 0, N items. */
static void header(uint8_t *p, uint64_t bytenr, uint64_t owner, uint32_t n, const uint8_t *fsid)
{
	memcpy(p + 0x20, fsid, 16);
	rk_put_le64(p + 0x30, bytenr);
	rk_put_le64(p + 0x38, 1ull << 56 | 1);
	rk_put_le64(p + 0x50, 7);
	rk_put_le64(p + 0x58, owner);
	rk_put_le32(p + 0x60, n);
}

/* Item K of leaf P: key (OBJ, TYPE, OFF), data of SZ bytes at OFFSET. */
static uint8_t *item(uint8_t *p, uint32_t k, uint64_t obj, uint8_t type, uint64_t off, uint32_t offset, uint32_t sz)
{
	uint8_t *it = p + 0x65 + 25 * k;
	rk_put_le64(it, obj);
	it[8] = type;
	rk_put_le64(it + 9, off);
	rk_put_le32(it + 17, offset);
	rk_put_le32(it + 21, sz);
	return p + 0x65 + offset;
}

static void seal(uint8_t *p) { rk_put_le32(p, dt_crc32c(p + 32, NODE - 32)); }

/* The whole image: the volume of a btrfs at byte 0.  BAD_CHUNK_LEAF:
 * both chunk-leaf copies fail their crc32c. */
static uint8_t *image(int bad_chunk_leaf)
{
	uint8_t *b = calloc(1, IMG);
	if (!b)
		return NULL;
	superblock(b + 64 * KiB);
	uint8_t *cl = b + 80 * KiB;             /* chunk-tree leaf: the metadata chunk */
	header(cl, SYS_L, 3, 1, FSID);
	chunk(item(cl, 0, 256, 228, META_L, NODE - 0x65 - 112, 112), 48 * KiB, 4 | 32, 96 * KiB, 192 * KiB);
	seal(cl);
	if (bad_chunk_leaf)
		cl[100] ^= 1;
	memcpy(b + 176 * KiB, cl, NODE);
	uint8_t *rt = b + 96 * KiB;             /* root-tree leaf: ROOT_ITEM of the fs tree */
	header(rt, META_L, 1, 1, FSID);
	rk_put_le64(item(rt, 0, 5, 132, 0, NODE - 0x65 - 439, 439) + 176, META_L + NODE);
	seal(rt);
	memcpy(b + 192 * KiB, rt, NODE);
	uint8_t *fs = b + 112 * KiB;            /* the fs tree, empty */
	header(fs, META_L + NODE, 5, 0, FSID);
	seal(fs);
	memcpy(b + 208 * KiB, fs, NODE);
	static const uint8_t other[16] = { 9, 9, 9, 9 };
	header(b + 144 * KiB, META_L, 5, 0, other);     /* another file system's block */
	header(b + 160 * KiB, 8u << 20, 5, 0, FSID);    /* in no chunk */
	rk_test_fill(b + 240 * KiB, 16 * KiB);          /* random bytes: nothing */
	return b;
}

/* The anchor of KIND at image byte IOFF (NULL none). */
static const struct dt_anchor *find(const struct dt_ctx *c, uint64_t ioff)
{
	for (uint32_t k = 0; k < c->nanc; k++)
		if (c->anc[k].kind == DT_BTRFS_NODE && c->anc[k].ioff == ioff)
			return &c->anc[k];
	return NULL;
}

START_TEST(t_crc32c)
{
	RK_REQUIRE(dt_crc32c((const uint8_t *)"123456789", 9) == 0xE3069283u);
	RK_REQUIRE(dt_crc32c((const uint8_t *)"", 0) == 0);
}
END_TEST

START_TEST(t_anchors)
{
	uint8_t *b = image(0);
	RK_REQUIRE(b);
	struct dt_ctx c;
	memset(&c, 0, sizeof c);
	c.nimg = 1;
	dt_scan_buf(&c, 0, 0, b, IMG);
	dt_resolve(&c);
	const struct dt_anchor *a = find(&c, 96 * KiB);      /* root tree: both copies */
	RK_REQUIRE(a && a->voff == 96 * KiB && a->voff2 == 192 * KiB);
	a = find(&c, 208 * KiB);                             /* the fs tree's second copy */
	RK_REQUIRE(a && a->voff == 112 * KiB && a->voff2 == 208 * KiB);
	a = find(&c, 80 * KiB);                              /* the chunk leaf, through sys_chunk_array */
	RK_REQUIRE(a && a->voff == 80 * KiB && a->voff2 == 176 * KiB);
	a = find(&c, 144 * KiB);
	RK_REQUIRE(a && a->voff == DT_NONE);
	a = find(&c, 160 * KiB);
	RK_REQUIRE(a && a->voff == DT_NONE);
	for (uint32_t k = 0; k < c.nanc; k++)
		RK_REQUIRE_MSG(c.anc[k].ioff < 240 * KiB, "an anchor in random bytes at %llu", (unsigned long long)c.anc[k].ioff);
	free(c.anc);
	free(b);

	/* a chunk leaf that fails its checksum maps nothing: the metadata
	 * blocks stay unresolved, the system chunk's still resolve */
	b = image(1);
	RK_REQUIRE(b);
	memset(&c, 0, sizeof c);
	c.nimg = 1;
	dt_scan_buf(&c, 0, 0, b, IMG);
	dt_resolve(&c);
	a = find(&c, 96 * KiB);
	RK_REQUIRE(a && a->voff == DT_NONE);
	a = find(&c, 80 * KiB);
	RK_REQUIRE(a && a->voff == 80 * KiB);
	free(c.anc);
	free(b);
}
END_TEST

START_TEST(t_probe)
{
	uint8_t *b = image(0);
	RK_REQUIRE(b);
	rk_test_spit(rk_test_path("bt"), b, IMG);
	free(b);
	char *p[] = { strdup(rk_test_path("bt")) };
	struct dt_ctx c;
	memset(&c, 0, sizeof c);
	RK_REQUIRE(dt_open(&c, p, 1) == RK_OK);
	struct dt_hyp h;
	dt_test_hyp_linear(&h, 0, IMG);
	dt_btrfs_probe(&c, &h, 0, 0);
	/* the superblock, the chunk leaf, the root tree and the fs tree, twice each */
	RK_REQUIRE_MSG(h.probe_ok == 7 && h.probe_bad == 0, "ok %u bad %u", h.probe_ok, h.probe_bad);
	dt_test_hyp_linear(&h, 0, IMG);
	dt_btrfs_probe(&c, &h, 0, 3);                        /* a quick look stops at the limit */
	RK_REQUIRE(h.probe_ok == 3 && h.probe_bad == 0);
	dt_test_hyp_linear(&h, 512, IMG);                               /* a sector off: the superblock's sum fails */
	h.off[0] = 512;
	dt_btrfs_probe(&c, &h, 0, 0);
	RK_REQUIRE_MSG(h.probe_ok == 0, "ok %u bad %u", h.probe_ok, h.probe_bad);
	dt_close(&c);
	free(p[0]);
}
END_TEST

START_TEST(t_mkfs)
{
	if (system("command -v mkfs.btrfs >/dev/null 2>&1") != 0) {
		printf("SKIP: mkfs.btrfs not installed\n");
		return;
	}
	char cmd[512];
	const char *img = rk_test_path("real");
	rk_test_make_file(img, 112u << 20);
	RK_REQUIRE(mkdir(rk_test_path("root"), 0755) == 0);
	uint8_t *f = rk_test_random_bytes(20000, 5);
	for (int k = 0; k < 8; k++) {   /* a few files: a few tree blocks more */
		snprintf(cmd, sizeof cmd, "root/f%d", k);
		rk_test_spit(rk_test_path(cmd), f, 20000 - 1000 * k);
	}
	snprintf(cmd, sizeof cmd, "mkfs.btrfs -q -f --rootdir '%s' '%s' >/dev/null 2>&1", rk_test_path("root"), img);
	if (system(cmd) != 0) {
		printf("SKIP: mkfs.btrfs failed\n");
		return;
	}
	char *p[] = { strdup(img) };
	struct dt_ctx c;
	memset(&c, 0, sizeof c);
	RK_REQUIRE(dt_open(&c, p, 1) == RK_OK);
	RK_REQUIRE(dt_scan_all(&c) == RK_OK);
	uint32_t n = 0;
	for (uint32_t k = 0; k < c.nanc; k++) {
		const struct dt_anchor *a = &c.anc[k];
		if (a->kind != DT_BTRFS_NODE || a->voff == DT_NONE)
			continue;
		RK_REQUIRE_MSG(a->voff == a->ioff || a->voff2 == a->ioff, "tree block at %llu resolves to %llu / %llu",
		               (unsigned long long)a->ioff, (unsigned long long)a->voff, (unsigned long long)a->voff2);
		n++;
	}
	RK_REQUIRE_MSG(n >= 8, "only %u tree blocks resolved", n);
	struct dt_hyp h;
	dt_test_hyp_linear(&h, 0, c.img[0].size);
	dt_btrfs_probe(&c, &h, 0, 0);
	RK_REQUIRE_MSG(h.probe_ok >= 8 && h.probe_bad == 0, "ok %u bad %u", h.probe_ok, h.probe_bad);
	dt_close(&c);
	/* the files' data against the checksum tree: the first file's first
	 * sector (the lowest copy of their common first bytes) altered fails */
	size_t len;
	uint8_t *v = rk_test_slurp(img, &len);
	RK_REQUIRE(v);
	uint8_t *at = memmem(v + (1u << 20), len - (1u << 20), f, 4096);
	RK_REQUIRE_MSG(at, "no file's data found in the image");
	at[100] ^= 0x40;
	rk_test_spit(img, v, len);
	free(v);
	free(f);
	uint32_t ok = h.probe_ok;
	RK_REQUIRE(dt_open(&c, p, 1) == RK_OK);
	RK_REQUIRE(dt_scan_all(&c) == RK_OK);
	dt_test_hyp_linear(&h, 0, c.img[0].size);
	dt_btrfs_probe(&c, &h, 0, 0);
	RK_REQUIRE_MSG(h.probe_ok + 1 == ok && h.probe_bad == 1, "with a data sector altered: ok %u (was %u), bad %u",
	               h.probe_ok, ok, h.probe_bad);
	dt_close(&c);
	free(p[0]);
}
END_TEST

RK_TEST_SUITE("detect_btrfs", { "btrfs", 60, rk_test_tmpdir_make, rk_test_tmpdir_remove, 0,
	  RK_TESTS(RK_TEST(t_crc32c), RK_TEST(t_anchors), RK_TEST(t_probe), RK_TEST(t_mkfs)) })
