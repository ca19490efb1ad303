/* test_detect_ext.c: ext4 inodes as anchors (libmeta/detect_ext.c).  An
 * ext4 of one group made by mkfs.ext4 -d (metadata_csum, 256-byte inodes;
 * SKIP when mkfs.ext4 is not installed) split in two images (a linear
 * array): every inode the scan takes resolves, by its checksum and the
 * group descriptors, to the very volume byte it sits at, and a checksum
 * off by one bit names another inode or none; the same file system whole
 * on one image is not anchored (an unrelated disk among members); over a
 * RAID-0 of 4 KiB chunks with different starts, the group descriptors
 * are found on the other member by their checksum, and every directory's
 * first block, on either member, resolves through its inode to the volume
 * byte it sits at (a number "." names that no directory inode has: none). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "detect_int.h"
#include "rk_geom.h"
#include "rk_le.h"
#include "rk_util.h"
#include "helpers/detect_hyp.h"
#include "helpers/rk_test.h"

#define VOL (24ull << 20)   /* one group of 4 KiB blocks (32768 blocks per group) */

/* "vol": an ext4 of blocks of BS bytes and inodes of ISZ bytes holding
 * 3 folders of 20 small files. */
static int make_ext4_fs(uint32_t isz, uint32_t bs)
{
	if (system("command -v mkfs.ext4 >/dev/null 2>&1") != 0)
		return 0;
	char tree[600], p[700], cmd[1500];
	snprintf(tree, sizeof tree, "%s/tree", rk_test_tmpdir());
	RK_REQUIRE(mkdir(tree, 0755) == 0);
	for (int d = 0; d < 3; d++) {
		snprintf(p, sizeof p, "%s/d%d", tree, d);
		RK_REQUIRE(mkdir(p, 0755) == 0);
		for (int f = 0; f < 20; f++) {
			snprintf(p, sizeof p, "%s/d%d/f%d", tree, d, f);
			rk_test_spit(p, "some text\n", 10);
		}
	}
	const char *vol = rk_test_path("vol");
	rk_test_make_file(vol, VOL);
	snprintf(cmd, sizeof cmd, "mkfs.ext4 -q -F -b %u -I %u -O metadata_csum -d '%s' '%s' >/dev/null 2>&1", bs, isz, tree, vol);
	RK_REQUIRE_MSG(system(cmd) == 0, "mkfs.ext4 failed");
	return 1;
}

static int make_ext4_isz(uint32_t isz) { return make_ext4_fs(isz, 4096); }

static int make_ext4(void) { return make_ext4_isz(256); }

/* "vol" (made by make_ext4) read whole. */
static uint8_t *ext4_volume(void)
{
	size_t len;
	uint8_t *v = rk_test_slurp(rk_test_path("vol"), &len);
	RK_REQUIRE(v && len == VOL);
	return v;
}

/* Opens and scans the test folder's m0 and m1 into C (PATHS: their
 * names, to free after dt_close). */
static void open_pair(struct dt_ctx *c, char **paths)
{
	paths[0] = strdup(rk_test_path("m0"));
	paths[1] = strdup(rk_test_path("m1"));
	RK_REQUIRE(paths[0] && paths[1]);
	memset(c, 0, sizeof *c);
	RK_REQUIRE(!dt_open(c, paths, 2));
	RK_REQUIRE(!dt_scan_all(c));
}

/* _i 1: inodes of 128 bytes (mke2fs's "small" file systems, the
 * forensics ext4 sample): 16 checksum bits, the number solved from them
 * and refuted by the rest and by its slot within 512 bytes. */
START_TEST(t_ext_inodes)
{
	const uint32_t isz = _i ? 128 : 256;
	if (!make_ext4_isz(isz)) {
		printf("SKIP: mkfs.ext4 not installed\n");
		return;
	}
	/* a linear array of two, split one block into the inode table: used
	 * inodes on both members (all on the superblock's image would only
	 * pin that image again, and are dropped: dt_ext_settle) */
	uint8_t *v = malloc(VOL);
	FILE *f = fopen(rk_test_path("vol"), "rb");
	RK_REQUIRE(v && f && fread(v, 1, VOL, f) == VOL);
	fclose(f);
	const uint64_t split = ((uint64_t)rk_get_le32(v + 4096 + 8) + 1) * 4096;
	RK_REQUIRE(split > 8192 && split < VOL);
	rk_test_spit(rk_test_path("m0"), v, split);
	rk_test_spit(rk_test_path("m1"), v + split, VOL - split);
	free(v);
	char *paths[2];
	struct dt_ctx c;
	open_pair(&c, paths);
	RK_REQUIRE_MSG(c.ext.learnt && c.ext.ngroups == 1 && c.ext.isz == isz, "learnt %d, %u groups, inodes of %u", c.ext.learnt,
	               c.ext.ngroups, c.ext.isz);
	uint32_t n = 0, off = 0, on[2] = { 0, 0 };
	for (uint32_t k = 0; k < c.nanc; k++) {
		struct dt_anchor *a = &c.anc[k];
		if (a->kind != DT_EXT_INO)
			continue;
		uint64_t want = a->ioff + (a->img ? split : 0);
		RK_REQUIRE_MSG(a->voff == want, "inode %u at %u:%llu resolves to %llu", a->tag, a->img,
		               (unsigned long long)a->ioff, (unsigned long long)a->voff);
		n++;
		on[a->img & 1]++;
		struct dt_anchor b = *a;   /* one bit of the checksum off: not this place */
		b.raw ^= 1u << (n % (isz == 128 ? 16 : 32));
		dt_ext_resolve(&c, &b);
		off += b.voff != want;
	}
	/* 60 files, 3 folders, the root, lost+found and the reserved inodes in use */
	RK_REQUIRE_MSG(n >= 64, "%u inodes anchored", n);
	RK_REQUIRE(on[0] && on[1]);
	RK_REQUIRE(off == n);
	dt_close(&c);
	free(paths[0]);
	free(paths[1]);
	/* split at the middle: every used inode on the superblock's image,
	 * where they would only pin it again (or be an unrelated slice's):
	 * dropped */
	v = malloc(VOL);
	f = fopen(rk_test_path("vol"), "rb");
	RK_REQUIRE(v && f && fread(v, 1, VOL, f) == VOL);
	fclose(f);
	rk_test_spit(rk_test_path("m0"), v, VOL / 2);
	rk_test_spit(rk_test_path("m1"), v + VOL / 2, VOL / 2);
	free(v);
	open_pair(&c, paths);
	RK_REQUIRE(c.ext.learnt);
	for (uint32_t k = 0; k < c.nanc; k++)
		RK_REQUIRE(c.anc[k].kind != DT_EXT_INO || c.anc[k].voff == DT_NONE);
	dt_close(&c);
	/* the whole file system on one image: an unrelated disk's (or a
	 * mirror's), not anchored */
	memset(&c, 0, sizeof c);
	char *one[1] = { strdup(rk_test_path("vol")) };
	RK_REQUIRE(one[0] && !dt_open(&c, one, 1));
	RK_REQUIRE(!dt_scan_all(&c));
	RK_REQUIRE(!c.ext.learnt);
	for (uint32_t k = 0; k < c.nanc; k++)
		RK_REQUIRE(c.anc[k].kind != DT_EXT_INO || c.anc[k].voff == DT_NONE);
	dt_close(&c);
	free(paths[0]);
	free(paths[1]);
	free(one[0]);
}
END_TEST

/* Every ext4 inode anchor of C, a linear pair split at SPLIT, resolves
 * to the volume byte it sits at, and 64 or more do. */
static void inodes_in_place(const struct dt_ctx *c, uint64_t split)
{
	uint32_t n = 0;
	for (uint32_t k = 0; k < c->nanc; k++) {
		const struct dt_anchor *a = &c->anc[k];
		if (a->kind != DT_EXT_INO)
			continue;
		RK_REQUIRE_MSG(a->voff == a->ioff + (a->img ? split : 0), "inode %u at %u:%llu resolves to %llu", a->tag,
		               a->img, (unsigned long long)a->ioff, (unsigned long long)a->voff);
		n++;
	}
	RK_REQUIRE_MSG(n >= 64, "%u inodes anchored", n);
}

/* A one-group ext4 whose group descriptors are gone (volume block 1
 * zeroed: the block sits on a member that is missing), split as
 * t_ext_inodes splits it: the inode table is where mke2fs lays it out
 * behind the reserved descriptor blocks and a flex group's bitmaps, and
 * every inode anchor resolves to its place.  Without flex_bg that layout
 * is not known: nothing learnt. */
START_TEST(t_ext_gdt_gone)
{
	if (!make_ext4()) {
		printf("SKIP: mkfs.ext4 not installed\n");
		return;
	}
	uint8_t *v = ext4_volume();
	const uint64_t it = (uint64_t)rk_get_le32(v + 4096 + 8) * 4096, split = it + 4096;
	RK_REQUIRE(rk_get_le32(v + 1024 + 0x60) & 0x200);   /* flex_bg, as mkfs.ext4 makes it */
	memset(v + 4096, 0, 4096);
	for (int pass = 0; pass < 2; pass++) {
		if (pass)   /* no flex_bg */
			rk_put_le32(v + 1024 + 0x60, rk_get_le32(v + 1024 + 0x60) & ~0x200u);
		rk_test_spit(rk_test_path("m0"), v, split);
		rk_test_spit(rk_test_path("m1"), v + split, VOL - split);
		char *paths[2];
		struct dt_ctx c;
		open_pair(&c, paths);
		if (!pass) {
			RK_REQUIRE_MSG(c.ext.learnt && c.ext.itable[0] == it, "learnt %d, inode table at %llu (truly %llu)",
			               c.ext.learnt, (unsigned long long)c.ext.itable[0], (unsigned long long)it);
			inodes_in_place(&c, split);
		} else
			RK_REQUIRE_MSG(!c.ext.learnt, "learnt without descriptors or flex_bg");
		dt_close(&c);
		free(paths[0]);
		free(paths[1]);
	}
	free(v);
}
END_TEST

/* An ext4 of 1 KiB blocks (three groups in VOL, flex_bg) whose group 0
 * descriptor is spoilt (the first bytes of its block XORed with others,
 * as on a parity member: seed 3737), split as a linear pair behind the
 * inode table's first block: the inode tables, packed back to back, give
 * group 0's from the others, and every inode anchor resolves to its
 * place.  Two of three spoilt: nothing learnt; without flex_bg the one
 * spoilt is not filled in either. */
START_TEST(t_ext_gdt_spoilt)
{
	if (!make_ext4_fs(256, 1024)) {
		printf("SKIP: mkfs.ext4 not installed\n");
		return;
	}
	uint8_t *v = ext4_volume();
	const uint64_t gdt = 2048, it = (uint64_t)rk_get_le32(v + gdt + 8) * 1024, split = it + 1024;
	RK_REQUIRE(rk_get_le32(v + 1024 + 0x60) & 0x200);
	RK_REQUIRE_MSG(rk_get_le32(v + 1024 + 4) / rk_get_le32(v + 1024 + 0x20) >= 2, "one group only");
	for (int pass = 0; pass < 3; pass++) {
		uint8_t *w = malloc(VOL);
		RK_REQUIRE(w);
		memcpy(w, v, VOL);
		for (uint32_t k = 0; k < 20; k++)
			w[gdt + k] ^= (uint8_t)(0x5A + k);
		if (pass == 1)
			w[gdt + 64 + 8] ^= 1;   /* group 1's too */
		if (pass == 2)   /* no flex_bg (the superblock's checksum is not checked) */
			rk_put_le32(w + 1024 + 0x60, rk_get_le32(w + 1024 + 0x60) & ~0x200u);
		rk_test_spit(rk_test_path("m0"), w, split);
		rk_test_spit(rk_test_path("m1"), w + split, VOL - split);
		free(w);
		char *paths[2];
		struct dt_ctx c;
		open_pair(&c, paths);
		if (!pass) {
			RK_REQUIRE_MSG(c.ext.learnt && c.ext.ngroups >= 3 && c.ext.itable[0] == it,
			               "learnt %d, %u groups, inode table at %llu (truly %llu)", c.ext.learnt, c.ext.ngroups,
			               (unsigned long long)c.ext.itable[0], (unsigned long long)it);
			for (uint32_t g = 1; g < c.ext.ngroups; g++)
				RK_REQUIRE(c.ext.itable[g] == (uint64_t)rk_get_le32(v + gdt + 64 * g + 8) * 1024);
			inodes_in_place(&c, split);
		} else
			RK_REQUIRE_MSG(!c.ext.learnt, "pass %d: learnt %u groups, inode table at %llu", pass, c.ext.ngroups,
			               (unsigned long long)c.ext.itable[0]);
		dt_close(&c);
		free(paths[0]);
		free(paths[1]);
	}
	free(v);
}
END_TEST

enum { CH = 4096, OFF1 = 65536 };   /* t_ext_gdt_elsewhere's pair: chunk, image 1's data start */

/* The volume byte of anchor A's byte in that RAID-0 pair. */
static uint64_t pair_voff(const struct dt_anchor *a)
{
	uint64_t x = a->img ? a->ioff - OFF1 : a->ioff;
	return x / CH * 2 * CH + (a->img ? CH : 0) + x % CH;
}

/* Writes volume V (VOL bytes) as that pair: m0, and m1 behind OFF1 bytes
 * of junk. */
static void spit_pair(const uint8_t *v)
{
	uint8_t *m0 = malloc(VOL / 2), *m1 = malloc(VOL / 2 + OFF1);
	RK_REQUIRE(m0 && m1);
	rk_test_fill_seeded(m1, OFF1, 5);
	for (uint64_t k = 0; k < VOL / CH; k++)
		memcpy(k % 2 ? m1 + OFF1 + k / 2 * CH : m0 + k / 2 * CH, v + k * CH, CH);
	rk_test_spit(rk_test_path("m0"), m0, VOL / 2);
	rk_test_spit(rk_test_path("m1"), m1, VOL / 2 + OFF1);
	free(m0);
	free(m1);
}

/* A RAID-0 of two over 4 KiB chunks, the second member's data at 64 KiB
 * (junk before it): the group descriptors (volume block 1) lie on the
 * second member, found by their checksum; every inode resolves to the
 * volume byte its place holds. */
START_TEST(t_ext_gdt_elsewhere)
{
	if (!make_ext4()) {
		printf("SKIP: mkfs.ext4 not installed\n");
		return;
	}
	uint8_t *v = ext4_volume();
	spit_pair(v);
	free(v);
	char *paths[2];
	struct dt_ctx c;
	open_pair(&c, paths);
	RK_REQUIRE_MSG(c.ext.learnt, "not learnt");
	uint32_t n = 0;
	for (uint32_t k = 0; k < c.nanc; k++) {
		const struct dt_anchor *a = &c.anc[k];
		if (a->kind != DT_EXT_INO)
			continue;
		uint64_t want = pair_voff(a);
		RK_REQUIRE_MSG(a->voff == want, "inode %u at %u:%llu resolves to %llu", a->tag, a->img,
		               (unsigned long long)a->ioff, (unsigned long long)a->voff);
		n++;
	}
	RK_REQUIRE_MSG(n >= 64, "%u inodes anchored", n);
	uint32_t ndir = 0, on[2] = { 0, 0 };
	for (uint32_t k = 0; k < c.nanc; k++) {
		const struct dt_anchor *a = &c.anc[k];
		if (a->kind != DT_EXT_DIR)
			continue;
		uint64_t want = pair_voff(a);
		RK_REQUIRE_MSG(a->voff == want, "directory of inode %llu at %u:%llu resolves to %llu", (unsigned long long)a->raw,
		               a->img, (unsigned long long)a->ioff, (unsigned long long)a->voff);
		ndir++;
		on[a->img]++;
		struct dt_anchor b = *a;   /* "." naming a file's inode or none */
		b.raw = b.raw == 2 ? 12 + 3 : 100000;
		dt_ext_resolve_dir(&c, &b);
		RK_REQUIRE_MSG(b.voff == DT_NONE, "inode %llu resolved as a directory", (unsigned long long)b.raw);
	}
	/* the root, lost+found and d0..d2: the directories' blocks on both members */
	RK_REQUIRE_MSG(ndir >= 5 && on[0] && on[1], "%u directories anchored (%u, %u)", ndir, on[0], on[1]);
	/* a directory block whose checksum tail no longer holds (another ext4's
	 * block naming the same inode looks so) is not resolved */
	uint32_t di = 0;
	uint64_t dio = 0;
	for (uint32_t k = 0; k < c.nanc && !dio; k++)
		if (c.anc[k].kind == DT_EXT_DIR && c.anc[k].voff != DT_NONE) {
			di = c.anc[k].img;
			dio = c.anc[k].ioff;
		}
	RK_REQUIRE(dio);
	dt_close(&c);
	rk_test_write_at(paths[di], "X", 1, dio + 4096 - 20);   /* inside the block, before its tail */
	free(paths[0]);
	free(paths[1]);
	open_pair(&c, paths);
	uint32_t still = 0, others = 0;
	for (uint32_t k = 0; k < c.nanc; k++)
		if (c.anc[k].kind == DT_EXT_DIR && c.anc[k].voff != DT_NONE) {
			still += c.anc[k].img == di && c.anc[k].ioff == dio;
			others++;
		}
	RK_REQUIRE_MSG(!still && others + 1 >= ndir, "the altered block resolved %u, %u of %u others", still, others, ndir - 1);
	dt_close(&c);
	free(paths[0]);
	free(paths[1]);
}
END_TEST

/* An ext4 whose journal holds a logged copy of an inode-table block
 * (what a mounted file system's journal keeps; the forensics ext4
 * sample's held 76 such anchors against the true RAID-5, seed 2689), as
 * t_ext_gdt_elsewhere's RAID-0 pair: the journal is learnt from inode
 * 8's extent, and the copies the answer reads inside it count neither
 * way -- every anchor counted agrees. */
START_TEST(t_ext_journal_copies)
{
	if (!make_ext4()) {
		printf("SKIP: mkfs.ext4 not installed\n");
		return;
	}
	uint8_t *v = ext4_volume();
	uint64_t it = (uint64_t)rk_get_le32(v + 4096 + 8) * 4096;
	const uint8_t *eh = v + it + 7 * 256 + 0x28;   /* inode 8: the journal */
	RK_REQUIRE_MSG(rk_get_le16(eh) == 0xF30A && rk_get_le16(eh + 6) == 0, "the journal inode has no extent root");
	const uint64_t copy = ((uint64_t)rk_get_le32(eh + 12 + 8) + 2) * 4096;
	RK_REQUIRE(copy > 4096 && copy + 4096 <= VOL);
	memcpy(v + copy, v + it, 4096);   /* a logged copy of the first inode-table block */
	spit_pair(v);
	free(v);
	char *paths[2];
	struct dt_ctx c;
	open_pair(&c, paths);
	RK_REQUIRE_MSG(c.ext.jend > c.ext.jbeg && c.ext.jbeg <= copy && c.ext.jend >= copy + 4096,
	               "journal at %llu..%llu, the copy at %llu", (unsigned long long)c.ext.jbeg, (unsigned long long)c.ext.jend,
	               (unsigned long long)copy);
	uint32_t copies = 0;
	for (uint32_t k = 0; k < c.nanc; k++) {
		const struct dt_anchor *a = &c.anc[k];
		uint64_t at = pair_voff(a);
		copies += a->kind == DT_EXT_INO && a->voff != DT_NONE && at >= copy && at < copy + 4096;
	}
	RK_REQUIRE_MSG(copies >= 8, "%u inode copies in the journal anchored", copies);
	dt_close(&c);
	struct rk_detect_result *r = NULL;
	RK_REQUIRE(rk_detect_run(paths, 2, NULL, &r) == RK_OK);
	RK_REQUIRE_MSG(r->found && r->geom.level == 0 && r->geom.chunk == CH, "not found: %s", r->why);
	RK_REQUIRE_MSG(r->anchors_agree == r->anchors_total, "%u of %u anchors agree", r->anchors_agree, r->anchors_total);
	rk_detect_free(r);
	free(paths[0]);
	free(paths[1]);
}
END_TEST

/* Probes a linear volume of image PATH (one member): *OK, *BAD. */
static void probe_image(const char *path, uint32_t *ok, uint32_t *bad)
{
	struct dt_ctx c;
	dt_test_open_one(&c, path);
	struct dt_hyp h;
	memset(&h, 0, sizeof h);
	RK_REQUIRE(!rk_geom_init(&h.g, RK_LEVEL_LINEAR, 0, 0, 1, VOL));
	h.role_img[0] = 0;
	dt_probe(&c, &h, 0);
	*ok = h.probe_ok;
	*bad = h.probe_bad;
	dt_test_close_one(&c);
}

/* The probe of the inode tables checks each inode's checksum against the
 * number its place gives: mkfs.ext4's inodes hold (the blocks of used
 * inodes count), and a block of real inodes copied to where other numbers
 * belong (what a wrong reading puts there: seed 2336, a RAID-5 reading
 * with a member missing got 15 such blocks more than the true RAID-0) is
 * no evidence either way, where plausible-looking inodes counted for it. */
START_TEST(t_ext_inode_probe)
{
	if (!make_ext4()) {
		printf("SKIP: mkfs.ext4 not installed\n");
		return;
	}
	const char *vol = rk_test_path("vol"), *moved = rk_test_path("moved");
	uint32_t ok, bad, ok2, bad2;
	probe_image(vol, &ok, &bad);
	RK_REQUIRE_MSG(bad == 0 && ok >= 5, "probes on the true volume: %u ok, %u failed", ok, bad);
	/* group 0's inode table: 80 used inodes in its first 5 blocks */
	size_t len;
	uint8_t *v = rk_test_slurp(vol, &len);
	RK_REQUIRE(v && len == VOL);
	uint64_t it = (uint64_t)rk_get_le32(v + 4096 + 8) * 4096;
	RK_REQUIRE(it && it + 8 * 4096 <= len);
	RK_REQUIRE_MSG(!rk_buf_is_zero(v + it + 4 * 4096, 4096) && rk_buf_is_zero(v + it + 5 * 4096, 4096),
	               "the used inodes do not end in the table's fifth block");
	memcpy(v + it + 5 * 4096, v + it, 4096);
	rk_test_spit(moved, v, len);
	free(v);
	probe_image(moved, &ok2, &bad2);
	RK_REQUIRE_MSG(ok2 == ok && bad2 == bad, "the copied block counted: %u/%u ok, %u/%u failed", ok2, ok, bad2, bad);
}
END_TEST

/* A directory's blocks past its first are checked too (linear blocks
 * whose records chain to the end, under the checksum tail): lost+found
 * holds four, the last three empty; with its third zeroed (what a
 * reading that puts a member of zeros there shows: seed 3685) one
 * prediction fewer holds and one fails. */
START_TEST(t_ext_dir_blocks)
{
	if (!make_ext4()) {
		printf("SKIP: mkfs.ext4 not installed\n");
		return;
	}
	const char *vol = rk_test_path("vol"), *gone = rk_test_path("gone");
	uint32_t ok, bad, ok2, bad2;
	probe_image(vol, &ok, &bad);
	RK_REQUIRE_MSG(bad == 0, "probes on the true volume: %u ok, %u failed", ok, bad);
	size_t len;
	uint8_t *v = rk_test_slurp(vol, &len);
	RK_REQUIRE(v && len == VOL);
	uint64_t it = (uint64_t)rk_get_le32(v + 4096 + 8) * 4096;
	RK_REQUIRE(it && it + 11 * 256 <= len);
	const uint8_t *lf = v + it + 10 * 256;   /* inode 11: lost+found, one extent */
	RK_REQUIRE((rk_get_le16(lf) >> 12) == 4 && rk_get_le16(lf + 0x28) == 0xF30A && rk_get_le32(lf + 4) == 4 * 4096);
	RK_REQUIRE_MSG(rk_get_le16(lf + 0x28 + 12 + 4) >= 4, "lost+found's extent is not its four blocks");
	uint64_t third = (uint64_t)rk_get_le32(lf + 0x28 + 12 + 8) + 2;
	RK_REQUIRE((third + 1) * 4096 <= len && rk_get_le16(v + third * 4096 + 4) == 4096 - 12);
	memset(v + third * 4096, 0, 4096);
	rk_test_spit(gone, v, len);
	free(v);
	probe_image(gone, &ok2, &bad2);
	RK_REQUIRE_MSG(ok2 + 1 == ok && bad2 == 1, "with lost+found's third block zeroed: %u/%u ok, %u failed", ok2, ok, bad2);
}
END_TEST

enum { R5N = 4, R5CH = 65536 };   /* t_ext_rebuilt's RAID-5: members, chunk */

/* Opens and scans the N images PATHS into C. */
static void open_scan(struct dt_ctx *c, char **paths, uint32_t n)
{
	memset(c, 0, sizeof *c);
	RK_REQUIRE(!dt_open(c, paths, n));
	RK_REQUIRE(!dt_scan_all(c));
}

/* The group-0 superblock on a missing member (dt_ext_learn_rebuilt): an
 * ext4 of one group has no backup, so a RAID-5 that lost the member
 * holding the volume's first chunk shows none.  The XOR of the other
 * three is that member: the file system is learnt from it (DT_XIMG) and
 * inodes on the members resolve.  Three copies of a whole ext4 XOR to a
 * copy as well; a sector that an image holds as it is is no rebuilt one
 * (seed 2214: a mirror's copies learnt so).  The members at different
 * starts behind junk: the XOR at the starts the copies on parity give. */
START_TEST(t_ext_rebuilt)
{
	if (!make_ext4()) {
		printf("SKIP: mkfs.ext4 not installed\n");
		return;
	}
	uint8_t *v = ext4_volume();
	for (uint64_t o = 4096; o < VOL; o += 4096)   /* the journal's copies of block 0: none but the first */
		if (!memcmp(v + o + 1024, v + 1024, 0x60))
			memset(v + o, 0, 4096);
	/* the parity of the first stripe copies the superblock where the
	 * second chunk is zero there: not so (a fuller file system) */
	v[R5CH + 1024 + 0x38] ^= 0x5A;
	char *all[R5N], *paths[R5N], name[8];
	for (uint32_t r = 0; r < R5N; r++) {
		snprintf(name, sizeof name, "m%u", r);
		RK_REQUIRE((all[r] = strdup(rk_test_path(name))) != NULL);
	}
	uint32_t first = dt_test_raid5_write(v, VOL, R5N, R5CH, all), n = 0;
	for (uint32_t r = 0; r < R5N; r++)
		if (r != first)
			paths[n++] = all[r];
	struct dt_ctx c;
	open_scan(&c, paths, n);
	RK_REQUIRE_MSG(c.ext.learnt && c.ext.img == DT_XIMG && c.ext.ngroups == 1, "learnt %d from image %u", c.ext.learnt,
	               c.ext.img);
	uint32_t placed = 0;
	for (uint32_t k = 0; k < c.nanc; k++)
		placed += c.anc[k].kind == DT_EXT_INO && c.anc[k].voff != DT_NONE;
	RK_REQUIRE_MSG(placed >= 8, "%u inodes resolved", placed);
	dt_close(&c);
	/* the members from different starts behind junk of their own: the
	 * copies on parity give the starts (dt_align_starts; seed 5545) */
	for (uint32_t k = 0; k < n; k++) {
		size_t len;
		uint8_t *m = rk_test_slurp(paths[k], &len), *w = rk_test_random_bytes(len + k * 65536u, 600 + k);
		RK_REQUIRE(m && w);
		memcpy(w + k * 65536u, m, len);
		rk_test_spit(paths[k], w, len + k * 65536u);
		free(m);
		free(w);
	}
	open_scan(&c, paths, n);
	placed = 0;
	for (uint32_t k = 0; k < c.nanc; k++)
		placed += c.anc[k].kind == DT_EXT_INO && c.anc[k].voff != DT_NONE;
	RK_REQUIRE_MSG(c.ext.learnt && c.ext.img == DT_XIMG && placed >= 8, "shifted: learnt %d from image %u, %u inodes resolved",
	               c.ext.learnt, c.ext.img, placed);
	dt_close(&c);
	v[R5CH + 1024 + 0x38] ^= 0x5A;
	for (uint32_t k = 0; k < n; k++)   /* three copies of the whole volume */
		rk_test_spit(paths[k], v, VOL);
	open_scan(&c, paths, n);
	RK_REQUIRE_MSG(!c.ext.learnt || c.ext.img != DT_XIMG, "learnt from the XOR of three copies");
	dt_close(&c);
	for (uint32_t r = 0; r < R5N; r++)
		free(all[r]);
	free(v);
}
END_TEST

RK_TEST_SUITE("detect_ext", { "ext", 60, rk_test_tmpdir_make, rk_test_tmpdir_remove, 0,
	  RK_TESTS(RK_TEST_LOOP(t_ext_inodes, 0, 2), RK_TEST(t_ext_gdt_elsewhere), RK_TEST(t_ext_gdt_gone), RK_TEST(t_ext_gdt_spoilt), RK_TEST(t_ext_inode_probe), RK_TEST(t_ext_dir_blocks), RK_TEST(t_ext_journal_copies),
	           RK_TEST(t_ext_rebuilt)) })
