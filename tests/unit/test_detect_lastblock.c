/* test_detect_lastblock.c: the last blocks of ext4 files as anchors
 * (detect_lastblock.c).  An ext4 made by mkfs.ext4 -d (SKIP without it)
 * holding files of random bytes whose sizes end mid-block, split as a
 * RAID-0 of two 64 KiB chunks: the scan finds files' last blocks on both
 * members, and each resolves to the volume byte its member offset is
 * under that RAID-0.  A file and its copy end at the same byte: neither
 * is looked for (either place would be taken for the other's).  The same
 * with an NTFS made by mkntfs and ntfscp (the runlists of the files' MFT
 * records give their last clusters) and a FAT16 made by mkfs.fat and
 * mcopy (its root and an anchored subdirectory list the files) and a
 * btrfs made by mkfs.btrfs --rootdir (its file-system tree's leaves give
 * the sizes and extents, its data chunk their places).  The
 * resize inode's map of the reserved GDT blocks, whose bytes mke2fs
 * writes from the superblock's counts, is found once, where that RAID-0
 * puts the block inode 7 names.  exFAT (made by hand): the contiguous
 * files its directory lists, split the same way in 8 KiB chunks, have
 * their last clusters found on both members where the RAID-0 puts them;
 * one whose slack holds a byte is not found. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "detect_int.h"
#include "rk_le.h"
#include "helpers/detect_hyp.h"
#include "helpers/rk_test.h"

#define NFILES 40
#define CHUNK 65536u
#define VOL (16u << 20)

static size_t file_size(int k) { return 3000 + (size_t)k * 5003; }

static int run(const char *cmd)
{
	char full[2048];
	snprintf(full, sizeof full, "%s >/dev/null 2>&1", cmd);
	return system(full) == 0;
}

/* "tree": NFILES random files f0.. and "dup", a copy of f3. */
static const char *make_tree(void)
{
	static char tree[600];
	char p[700];
	snprintf(tree, sizeof tree, "%s/tree", rk_test_tmpdir());
	RK_REQUIRE(mkdir(tree, 0755) == 0);
	for (int k = 0; k < NFILES; k++) {
		snprintf(p, sizeof p, "%s/f%02d", tree, k);
		uint8_t *b = rk_test_random_bytes(file_size(k), 700 + k);
		rk_test_spit(p, b, file_size(k));
		if (k == 3) {
			snprintf(p, sizeof p, "%s/dup", tree);
			rk_test_spit(p, b, file_size(k));
		}
		free(b);
	}
	return tree;
}

/* "vol": an ext4 of the tree. */
static void make_ext4(void)
{
	char cmd[1500];
	const char *tree = make_tree(), *vol = rk_test_path("vol");
	rk_test_make_file(vol, VOL);
	snprintf(cmd, sizeof cmd, "mkfs.ext4 -q -F -b 4096 -O metadata_csum -d '%s' '%s'", tree, vol);
	RK_REQUIRE_MSG(run(cmd), "mkfs.ext4 failed");
}

/* "vol": a FAT16 (2 KiB clusters) of the tree, its files in the root
 * and in a subdirectory "sub" (found by its "." entry). */
static void make_fat(void)
{
	char cmd[1500];
	const char *tree = make_tree(), *vol = rk_test_path("vol");
	rk_test_make_file(vol, VOL);
	snprintf(cmd, sizeof cmd, "mkfs.fat -F 16 -s 4 '%s'", vol);
	RK_REQUIRE_MSG(run(cmd), "mkfs.fat failed");
	snprintf(cmd, sizeof cmd, "mmd -i '%s' ::/sub", vol);
	RK_REQUIRE_MSG(run(cmd), "mmd failed");
	for (int k = 0; k < NFILES; k++) {
		snprintf(cmd, sizeof cmd, "mcopy -i '%s' '%s/f%02d' ::/%sf%02d", vol, tree, k, k % 2 ? "sub/" : "", k);
		RK_REQUIRE_MSG(run(cmd), "mcopy failed");
	}
	snprintf(cmd, sizeof cmd, "mcopy -i '%s' '%s/dup' ::/dup", vol, tree);
	RK_REQUIRE_MSG(run(cmd), "mcopy failed");
}

/* "vol": a btrfs of 128 MiB (mkfs.btrfs's least is near 114) holding the
 * tree. */
static void make_btrfs(void)
{
	char cmd[1500];
	const char *tree = make_tree(), *vol = rk_test_path("vol");
	rk_test_make_file(vol, 128u << 20);
	snprintf(cmd, sizeof cmd, "mkfs.btrfs -q -f --rootdir '%s' '%s'", tree, vol);
	RK_REQUIRE_MSG(run(cmd), "mkfs.btrfs failed");
}

/* "vol": an NTFS (4 KiB clusters) of the tree. */
static void make_ntfs(void)
{
	char cmd[1500];
	const char *tree = make_tree(), *vol = rk_test_path("vol");
	rk_test_make_file(vol, VOL);
	snprintf(cmd, sizeof cmd, "mkntfs -F -Q -q -c 4096 '%s'", vol);
	RK_REQUIRE_MSG(run(cmd), "mkntfs failed");
	for (int k = 0; k < NFILES; k++) {
		snprintf(cmd, sizeof cmd, "ntfscp -f '%s' '%s/f%02d' f%02d", vol, tree, k, k);
		RK_REQUIRE_MSG(run(cmd), "ntfscp failed");
	}
	snprintf(cmd, sizeof cmd, "ntfscp -f '%s' '%s/dup' dup", vol, tree);
	RK_REQUIRE_MSG(run(cmd), "ntfscp failed");
}

/* The volume split into members 0 and 1 of a RAID-0 in CHUNK chunks. */
static void split_raid0(void)
{
	size_t len;
	uint8_t *v = rk_test_slurp(rk_test_path("vol"), &len);
	RK_REQUIRE(v && len % (2 * CHUNK) == 0);
	uint8_t *m[2] = { malloc(len / 2), malloc(len / 2) };
	RK_REQUIRE(m[0] && m[1]);
	for (uint32_t c = 0; c < len / CHUNK; c++)
		memcpy(m[c % 2] + (size_t)(c / 2) * CHUNK, v + (size_t)c * CHUNK, CHUNK);
	for (int r = 0; r < 2; r++) {
		rk_test_spit(rk_test_members()[r], m[r], len / 2);
		free(m[r]);
	}
	free(v);
}

/* The volume byte of file f3's last 64 bytes (or its copy's). */
static uint64_t f3_tail(void)
{
	size_t len;
	uint8_t *v = rk_test_slurp(rk_test_path("vol"), &len), *want = rk_test_random_bytes(file_size(3), 703);
	RK_REQUIRE(v && want);
	const uint8_t *at = memmem(v, len, want + file_size(3) - 64, 64);
	RK_REQUIRE_MSG(at, "f3's last bytes are not in the volume");
	uint64_t off = (uint64_t)(at - v);
	free(v);
	free(want);
	return off;
}

/* The volume split as a RAID-0 and scanned: every anchor of KIND (blocks
 * of BS bytes) sits where that RAID-0 puts it, none is f3's, MIN or more
 * on each member; *MAPS the resize inode's maps found, each where the
 * RAID-0 puts it. */
static void check_split(uint8_t kind, uint32_t bs, uint32_t min, uint32_t *maps)
{
	split_raid0();
	uint64_t f3 = f3_tail();
	struct dt_ctx c;
	memset(&c, 0, sizeof c);
	RK_REQUIRE(!dt_open(&c, rk_test_members(), 2));
	RK_REQUIRE(!dt_scan_all(&c));
	uint32_t per[2] = { 0, 0 };
	*maps = 0;
	for (uint32_t k = 0; k < c.nanc; k++) {
		const struct dt_anchor *a = &c.anc[k];
		uint64_t chunk = a->ioff / CHUNK * 2 + a->img, want = chunk * CHUNK + a->ioff % CHUNK;
		if (a->kind == DT_EXT_RMAP) {
			RK_REQUIRE_MSG(a->voff == want && a->voff == a->raw * 4096, "the resize inode's map on image %u byte %llu: "
			               "volume byte %llu (block %llu), not %llu", a->img, (unsigned long long)a->ioff,
			               (unsigned long long)a->voff, (unsigned long long)a->raw, (unsigned long long)want);
			(*maps)++;
		}
		if (a->kind != kind)
			continue;
		RK_REQUIRE_MSG(a->voff == want, "the last block of %u on image %u byte %llu: volume byte %llu, not %llu",
		               a->tag, a->img, (unsigned long long)a->ioff, (unsigned long long)a->voff,
		               (unsigned long long)want);
		RK_REQUIRE_MSG(f3 < a->voff || f3 >= a->voff + bs, "f3's last block taken, though its copy ends at the same byte");
		per[a->img]++;
	}
	RK_REQUIRE_MSG(per[0] >= min && per[1] >= min, "last blocks found: %u on member 0, %u on member 1", per[0], per[1]);
	dt_close(&c);
}

START_TEST(t_lastblock_raid0)
{
	if (!run("command -v mkfs.ext4")) {
		printf("SKIP: mkfs.ext4 not installed\n");
		return;
	}
	make_ext4();
	uint32_t maps;
	check_split(DT_EXT_TAIL, 4096, 8, &maps);
	RK_REQUIRE_MSG(maps == 1, "the resize inode's map found %u times", maps);
}
END_TEST

START_TEST(t_lastblock_fat)
{
	if (!run("command -v mkfs.fat") || !run("command -v mcopy") || !run("command -v mmd")) {
		printf("SKIP: mkfs.fat, mcopy or mmd (dosfstools, mtools) not installed\n");
		return;
	}
	make_fat();
	uint32_t maps;
	check_split(DT_FAT_TAIL, 2048, 6, &maps);
	RK_REQUIRE(maps == 0);
}
END_TEST

START_TEST(t_lastblock_btrfs)
{
	if (!run("command -v mkfs.btrfs")) {
		printf("SKIP: mkfs.btrfs (btrfs-progs) not installed\n");
		return;
	}
	make_btrfs();
	uint32_t maps;
	check_split(DT_BTRFS_TAIL, 4096, 8, &maps);
	RK_REQUIRE(maps == 0);
}
END_TEST

START_TEST(t_lastblock_ntfs)
{
	if (!run("command -v mkntfs") || !run("command -v ntfscp")) {
		printf("SKIP: mkntfs or ntfscp (ntfs-3g) not installed\n");
		return;
	}
	make_ntfs();
	uint32_t maps;
	check_split(DT_NTFS_TAIL, 4096, 8, &maps);
	RK_REQUIRE(maps == 0);
}
END_TEST

#define XCL 4096u
#define XHEAP (64u * 1024u)
#define XNCL 256u
#define XIMG (XHEAP + XNCL * XCL)
#define XCHUNK 8192u
#define XFILES 12
#define SOILED 5

static uint8_t *xclus(uint8_t *img, uint32_t k) { return img + XHEAP + (k - 2) * XCL; }

/* An exFAT of XFILES contiguous files of random bytes, file k at cluster
 * 10 + 12 k, 5000 + 1499 k bytes, listed in the root (cluster 4); file
 * SOILED's slack holds a byte.  Split into members 0 and 1 of a RAID-0
 * in XCHUNK chunks. */
static void exfat_members(void)
{
	uint8_t *img = calloc(1, XIMG);
	RK_REQUIRE(img);
	memcpy(img, "\xEB\x76\x90" "EXFAT   ", 11);
	rk_put_le32(img + 0x50, 32);
	rk_put_le32(img + 0x54, 8);
	rk_put_le32(img + 0x58, XHEAP / 512);
	rk_put_le32(img + 0x5C, XNCL);
	rk_put_le32(img + 0x60, 4);
	img[0x6C] = 9;
	img[0x6D] = 3;
	img[510] = 0x55;
	img[511] = 0xAA;
	uint32_t n = 0;
	for (int k = 0; k < XFILES; k++) {
		char name[4] = { 'f', (char)('a' + k), 0, 0 };
		uint32_t len = 5000 + 1499 * (uint32_t)k, first = 10 + 12 * (uint32_t)k;
		n += dt_test_exfat_set(xclus(img, 4) + 32 * n, name, 0, first, len);
		uint8_t *b = rk_test_random_bytes(len, 900 + (uint64_t)k);
		memcpy(xclus(img, first), b, len);
		free(b);
		if (k == SOILED)
			xclus(img, first)[len + 20] = 1;
	}
	uint8_t *m[2] = { calloc(1, XIMG / 2), calloc(1, XIMG / 2) };
	RK_REQUIRE(m[0] && m[1]);
	for (uint32_t c = 0; c < XIMG / XCHUNK; c++)
		memcpy(m[c % 2] + (size_t)(c / 2) * XCHUNK, img + (size_t)c * XCHUNK, XCHUNK);
	for (int r = 0; r < 2; r++) {
		rk_test_spit(rk_test_members()[r], m[r], XIMG / 2);
		free(m[r]);
	}
	free(img);
}

START_TEST(t_lastblock_exfat)
{
	exfat_members();
	struct dt_ctx c;
	memset(&c, 0, sizeof c);
	RK_REQUIRE(!dt_open(&c, rk_test_members(), 2));
	RK_REQUIRE(!dt_scan_all(&c));
	uint32_t per[2] = { 0, 0 };
	uint64_t soiled = 10 + 12 * SOILED + (5000 + 1499 * SOILED - 1) / XCL;
	for (uint32_t k = 0; k < c.nanc; k++) {
		const struct dt_anchor *a = &c.anc[k];
		if (a->kind != DT_EXFAT_TAIL)
			continue;
		uint64_t chunk = a->ioff / XCHUNK * 2 + a->img, want = chunk * XCHUNK + a->ioff % XCHUNK;
		RK_REQUIRE_MSG(a->voff == want && a->voff == XHEAP + (a->raw - 2) * XCL,
		               "cluster %llu on image %u byte %llu: volume byte %llu, not %llu", (unsigned long long)a->raw,
		               a->img, (unsigned long long)a->ioff, (unsigned long long)a->voff, (unsigned long long)want);
		RK_REQUIRE_MSG(a->raw != soiled, "the file whose slack holds a byte was found");
		per[a->img]++;
	}
	RK_REQUIRE_MSG(per[0] + per[1] == XFILES - 1 && per[0] && per[1], "last clusters found: %u on member 0, %u on 1",
	               per[0], per[1]);
	dt_close(&c);
}
END_TEST

RK_TEST_SUITE("detect_lastblock", { "lastblock", 60, rk_test_tmpdir_make, rk_test_tmpdir_remove, 0,
	  RK_TESTS(RK_TEST(t_lastblock_raid0), RK_TEST(t_lastblock_ntfs), RK_TEST(t_lastblock_fat), RK_TEST(t_lastblock_btrfs),
	           RK_TEST(t_lastblock_exfat)) })
