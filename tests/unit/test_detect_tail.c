/* test_detect_tail.c: file tails as predictions (dt_tail_check and its
 * walkers in detect_probe.c, detect_xfs.c, detect_ntfs.c, detect_fat.c).
 * dt_tail_check's verdicts on blocks made by hand; then, for each file
 * system whose maker is installed (mkfs.ext4 -d, mkfs.xfs -p, mkntfs +
 * ntfscp, mkfs.fat + mcopy; SKIP otherwise), a volume holding 24 files of
 * random bytes whose sizes end mid-block: read whole, every tail the
 * walker checks holds, and enough are checked; with one file's slack
 * overwritten (what a reading that puts another file's block there
 * shows), one tail fewer holds and one fails; with six, on ext4 and XFS
 * (whose writers zero the slack) six fail, on FAT and NTFS (whose slack
 * may hold old bytes) no tail counts any more (dt_tails_count). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "detect_int.h"
#include "rk_le.h"
#include "rk_util.h"
#include "helpers/detect_hyp.h"
#include "helpers/rk_test.h"

#define NFILES 24
#define TAILED 7                /* the file whose slack is overwritten */

/* File K's size: ends mid-block for 1, 2 and 4 KiB blocks, with a slack
 * of 16 bytes or more in each. */
static size_t file_size(int k) { return 3000 + (size_t)k * 5003; }

/* "tree": NFILES files f0.. of random bytes (seeded by their number). */
static const char *make_tree(void)
{
	static char tree[600];
	snprintf(tree, sizeof tree, "%s/tree", rk_test_tmpdir());
	RK_REQUIRE(mkdir(tree, 0755) == 0);
	for (int k = 0; k < NFILES; k++) {
		char p[700];
		snprintf(p, sizeof p, "%s/f%d", tree, k);
		uint8_t *b = rk_test_random_bytes(file_size(k), 1000 + k);
		rk_test_spit(p, b, file_size(k));
		free(b);
	}
	return tree;
}

/* Probes image PATH read whole as a linear volume: *OK, *BAD, *TAIL_BAD
 * (NULL: not wanted). */
static void probe_image(const char *path, uint32_t *ok, uint32_t *bad, uint32_t *tail_bad)
{
	struct stat st;
	RK_REQUIRE(stat(path, &st) == 0);
	struct dt_ctx c;
	dt_test_open_one(&c, path);
	struct dt_hyp h;
	dt_test_hyp_linear(&h, 0, (uint64_t)st.st_size);
	dt_probe(&c, &h, 0);
	*ok = h.probe_ok;
	*bad = h.probe_bad;
	if (tail_bad)
		*tail_bad = h.tail_bad;
	dt_test_close_one(&c);
}

/* Overwrites the slack after file K's last byte in image PATH (found by
 * its last 64 bytes) with 0xAA up to the next 512-byte boundary and 16
 * bytes past it. */
static void soil_slack(const char *path, int k)
{
	uint8_t *want = rk_test_random_bytes(file_size(k), 1000 + k);
	const uint8_t *tail = want + file_size(k) - 64;
	FILE *f = fopen(path, "r+b");
	RK_REQUIRE(f);
	uint8_t *b = malloc((1 << 20) + 64);
	RK_REQUIRE(b);
	long found = -1;
	for (long at = 0; found < 0; at += 1 << 20) {
		RK_REQUIRE(fseek(f, at, SEEK_SET) == 0);
		size_t n = fread(b, 1, (1 << 20) + 64, f);
		if (n < 64)
			break;
		uint8_t *p = memmem(b, n, tail, 64);
		if (p)
			found = at + (p - b) + 64;
	}
	RK_REQUIRE_MSG(found > 0, "file f%d's last bytes are not in the image", k);
	uint8_t junk[512 + 16];
	memset(junk, 0xAA, sizeof junk);
	size_t len = 512 - (size_t)found % 512 + 16;
	RK_REQUIRE(fseek(f, found, SEEK_SET) == 0 && fwrite(junk, 1, len, f) == len);
	fclose(f);
	free(b);
	free(want);
}

/* The check common to the file systems: the true volume "vol" has every
 * tail hold, no prediction fail, NFILES or more predictions; with one
 * file's slack soiled, one fewer holds and one fails; with SOILED files'
 * slack soiled, as many fail where the writer zeroes the slack (ZEROED),
 * and elsewhere (FAT, NTFS: the slack was not zero) no tail counts (of
 * the 18 tails that still hold, at least NFILES / 2 no longer count). */
#define SOILED 6
static void tails_hold(int zeroed)
{
	const char *vol = rk_test_path("vol"), *soiled = rk_test_path("soiled");
	uint32_t ok, bad, ok2, bad2;
	probe_image(vol, &ok, &bad, NULL);
	RK_REQUIRE_MSG(bad == 0 && ok >= NFILES, "probes on the true volume: %u ok (%u needed), %u failed", ok, NFILES,
	               bad);
	rk_test_copy_file(vol, soiled);
	soil_slack(soiled, TAILED);
	probe_image(soiled, &ok2, &bad2, NULL);
	RK_REQUIRE_MSG(ok2 == ok - 1 && bad2 == 1, "one slack soiled: %u ok (before %u), %u failed", ok2, ok, bad2);
	for (int k = 1; k < SOILED; k++)
		soil_slack(soiled, TAILED + k);
	uint32_t tail_bad;
	probe_image(soiled, &ok2, &bad2, &tail_bad);
	/* the tails that fail where the slack is known zeroed: the answer's
	 * gate (held_back) */
	RK_REQUIRE_MSG(tail_bad == (zeroed ? SOILED : 0u), "%d slacks soiled: %u tails fail as zeroed slack", SOILED,
	               tail_bad);
	if (zeroed)
		RK_REQUIRE_MSG(ok2 == ok - SOILED && bad2 == SOILED, "%d slacks soiled: %u ok (before %u), %u failed",
		               SOILED, ok2, ok, bad2);
	else
		RK_REQUIRE_MSG(ok2 + NFILES / 2 <= ok && bad2 == 0, "%d slacks soiled: %u ok (before %u), %u failed", SOILED,
		               ok2, ok, bad2);
}

static int run(const char *cmd)
{
	char full[2048];
	snprintf(full, sizeof full, "%s >/dev/null 2>&1", cmd);
	return system(full) == 0;
}

static int have(const char *tool)
{
	char cmd[256];
	snprintf(cmd, sizeof cmd, "command -v %s", tool);
	return run(cmd);
}

/* A block of size BS at volume byte 0 of a one-image volume: data then
 * zeros, data then data, zeros, a short slack, a size the block ends. */
START_TEST(t_tail_check)
{
	const uint32_t bs = 4096;
	uint8_t *img = rk_test_random_bytes(4 * bs, 5);
	memset(img + 1000, 0, bs - 1000);               /* block 0: 1000 bytes, then zeros */
	memset(img + 2 * bs, 0, bs);                    /* block 2: zeros */
	memset(img + 3 * bs + bs - 8, 0, 8);            /* block 3: data to 8 bytes before the end */
	const char *path = rk_test_path("img");
	rk_test_spit(path, img, 4 * bs);
	free(img);
	struct dt_ctx c;
	dt_test_open_one(&c, path);
	struct dt_hyp h;
	dt_test_hyp_linear(&h, 0, 4 * bs);
	uint8_t *buf = malloc(bs);
	RK_REQUIRE(buf);
	RK_REQUIRE(dt_tail_check(&c, &h, 0, bs, 1000, buf) == 1);
	RK_REQUIRE(dt_tail_check(&c, &h, 0, bs, 5 * bs + 1000, buf) == 1);   /* the size's last block counts */
	RK_REQUIRE(dt_tail_check(&c, &h, 0, bs, 999, buf) == 0);    /* a byte of data in the slack */
	RK_REQUIRE(dt_tail_check(&c, &h, bs, bs, 1000, buf) == 0);  /* another file's block */
	RK_REQUIRE(dt_tail_check(&c, &h, 2 * bs, bs, 1000, buf) == -1);   /* zeros before the end too */
	RK_REQUIRE(dt_tail_check(&c, &h, 3 * bs, bs, bs - 8, buf) == -1);  /* a slack of 8 bytes */
	RK_REQUIRE(dt_tail_check(&c, &h, 0, bs, bs, buf) == -1);    /* no slack */
	RK_REQUIRE(dt_tail_check(&c, &h, 4 * bs, bs, 1000, buf) == -1);   /* beyond the volume */
	free(buf);
	dt_test_close_one(&c);
}
END_TEST

START_TEST(t_tail_ext4)
{
	if (!have("mkfs.ext4")) {
		printf("SKIP: mkfs.ext4 not installed\n");
		return;
	}
	const char *tree = make_tree(), *vol = rk_test_path("vol");
	char cmd[1500];
	rk_test_make_file(vol, 8 << 20);
	snprintf(cmd, sizeof cmd, "mkfs.ext4 -q -F -b 4096 -d '%s' '%s'", tree, vol);
	RK_REQUIRE_MSG(run(cmd), "mkfs.ext4 failed");
	tails_hold(1);
}
END_TEST

/* An ext4 of 480 files: past the 256 inodes of the first 16 inode-table
 * blocks, the tails of later files are checked too (tails_spread): a
 * soiled slack of file 265 (inode 277, in block 17: the first of the
 * blocks spread over the used ones) fails, where the probe of the first
 * blocks alone never looked. */
START_TEST(t_tail_ext4_spread)
{
	if (!have("mkfs.ext4")) {
		printf("SKIP: mkfs.ext4 not installed\n");
		return;
	}
	enum { MANY = 480, LATE = 265 };
	char tree[600], p[700], cmd[1500];
	snprintf(tree, sizeof tree, "%s/tree", rk_test_tmpdir());
	RK_REQUIRE(mkdir(tree, 0755) == 0);
	for (int k = 0; k < MANY; k++) {   /* named so that mke2fs -d takes them in their order */
		snprintf(p, sizeof p, "%s/f%04d", tree, k);
		uint8_t *b = rk_test_random_bytes(700 + (size_t)k * 3, 5000 + k);
		rk_test_spit(p, b, 700 + (size_t)k * 3);
		free(b);
	}
	const char *vol = rk_test_path("vol"), *soiled = rk_test_path("soiled");
	rk_test_make_file(vol, 16 << 20);
	snprintf(cmd, sizeof cmd, "mkfs.ext4 -q -F -b 4096 -d '%s' '%s'", tree, vol);
	RK_REQUIRE_MSG(run(cmd), "mkfs.ext4 failed");
	uint32_t ok, bad, ok2, bad2, tail_bad;
	probe_image(vol, &ok, &bad, NULL);
	RK_REQUIRE_MSG(bad == 0 && ok > 256, "probes on the true volume: %u ok, %u failed", ok, bad);
	rk_test_copy_file(vol, soiled);
	/* file LATE's last bytes, then junk over its slack */
	uint8_t *want = rk_test_random_bytes(700 + (size_t)LATE * 3, 5000 + LATE);
	size_t len;
	uint8_t *v = rk_test_slurp(soiled, &len);
	RK_REQUIRE(v && want);
	uint8_t *at = memmem(v, len, want + 700 + LATE * 3 - 64, 64);
	RK_REQUIRE_MSG(at, "file %d not in the image", LATE);
	memset(at + 64, 0xAA, 32);
	rk_test_spit(soiled, v, len);
	free(v);
	free(want);
	probe_image(soiled, &ok2, &bad2, &tail_bad);
	RK_REQUIRE_MSG(tail_bad == 1 && bad2 == 1 && ok2 == ok - 1, "soiled slack of file %d: %u ok (before %u), %u failed",
	               LATE, ok2, ok, bad2);
}
END_TEST

START_TEST(t_tail_xfs)
{
	if (!have("mkfs.xfs")) {
		printf("SKIP: mkfs.xfs not installed\n");
		return;
	}
	const char *tree = make_tree(), *vol = rk_test_path("vol"), *proto = rk_test_path("proto");
	char line[800], cmd[1500];
	FILE *f = fopen(proto, "w");
	RK_REQUIRE(f);
	fprintf(f, "/dev/null\n0 0\nd--755 0 0\n");
	for (int k = 0; k < NFILES; k++) {
		snprintf(line, sizeof line, " f%d ---644 0 0 %s/f%d\n", k, tree, k);
		fputs(line, f);
	}
	fprintf(f, "$\n");
	fclose(f);
	rk_test_make_file(vol, 320ull << 20);   /* mkfs.xfs's least size */
	snprintf(cmd, sizeof cmd, "mkfs.xfs -q -f -p '%s' '%s'", proto, vol);
	RK_REQUIRE_MSG(run(cmd), "mkfs.xfs failed");
	tails_hold(1);
}
END_TEST

START_TEST(t_tail_ntfs)
{
	if (!have("mkntfs") || !have("ntfscp")) {
		printf("SKIP: mkntfs or ntfscp (ntfs-3g) not installed\n");
		return;
	}
	const char *tree = make_tree(), *vol = rk_test_path("vol");
	char cmd[1500];
	rk_test_make_file(vol, 16 << 20);
	snprintf(cmd, sizeof cmd, "mkntfs -F -Q -q '%s'", vol);
	RK_REQUIRE_MSG(run(cmd), "mkntfs failed");
	for (int k = 0; k < NFILES; k++) {
		snprintf(cmd, sizeof cmd, "ntfscp -f '%s' '%s/f%d' f%d", vol, tree, k, k);
		RK_REQUIRE_MSG(run(cmd), "ntfscp failed");
	}
	tails_hold(0);
}
END_TEST

/* NTFS keeps MFT records 0-3 again in $MFTMirr: a volume read right
 * finds them there, numbered; one whose mirror holds other bytes (a
 * reading that rebuilds it from other data: seed 2861) fails four
 * predictions, counted as mirror failures (the answer's gate). */
START_TEST(t_ntfs_mftmirr)
{
	if (!have("mkntfs")) {
		printf("SKIP: mkntfs (ntfs-3g) not installed\n");
		return;
	}
	const char *vol = rk_test_path("vol");
	char cmd[1500];
	rk_test_make_file(vol, 16 << 20);
	snprintf(cmd, sizeof cmd, "mkntfs -F -Q -q '%s'", vol);
	RK_REQUIRE_MSG(run(cmd), "mkntfs failed");
	uint32_t mirr_bad[2], bad[2];
	for (int soiled = 0; soiled < 2; soiled++) {
		if (soiled) {   /* the mirror's four records: random bytes */
			size_t n;
			uint8_t *v = rk_test_slurp(vol, &n);
			uint64_t clus = (uint64_t)rk_get_le16(v + 0x0B) * v[0x0D], at = rk_get_le64(v + 0x38) * clus;
			RK_REQUIRE(clus && at + 4096 <= n);
			free(v);
			uint8_t *j = rk_test_random_bytes(4096, 77);
			rk_test_write_at(vol, j, 4096, at);
			free(j);
		}
		struct dt_ctx c;
		dt_test_open_one(&c, vol);
		struct dt_hyp h;
		dt_test_hyp_linear(&h, 0, 16 << 20);
		dt_probe(&c, &h, 0);
		mirr_bad[soiled] = h.mirr_bad;
		bad[soiled] = h.probe_bad;
		dt_test_close_one(&c);
	}
	RK_REQUIRE_MSG(mirr_bad[0] == 0 && mirr_bad[1] == 4 && bad[1] == bad[0] + 4,
	               "mirror failures %u then %u, failures %u then %u", mirr_bad[0], mirr_bad[1], bad[0], bad[1]);
}
END_TEST

START_TEST(t_tail_fat)
{
	if (!have("mkfs.fat") || !have("mcopy")) {
		printf("SKIP: mkfs.fat or mcopy (dosfstools, mtools) not installed\n");
		return;
	}
	const char *tree = make_tree(), *vol = rk_test_path("vol");
	char cmd[1500];
	rk_test_make_file(vol, 40 << 20);
	/* _i 0: FAT16 with its root directory before the data; 1: FAT32,
	 * the files in a folder */
	snprintf(cmd, sizeof cmd, "mkfs.fat -F %d '%s'", _i ? 32 : 16, vol);
	RK_REQUIRE_MSG(run(cmd), "mkfs.fat failed");
	if (_i) {
		snprintf(cmd, sizeof cmd, "mcopy -s -i '%s' '%s' ::/", vol, tree);
	} else {
		int n = snprintf(cmd, sizeof cmd, "mcopy -i '%s'", vol);
		for (int k = 0; k < NFILES; k++)
			n += snprintf(cmd + n, sizeof cmd - (size_t)n, " '%s/f%d'", tree, k);
		snprintf(cmd + n, sizeof cmd - (size_t)n, " ::/");
	}
	RK_REQUIRE_MSG(run(cmd), "mcopy failed");
	tails_hold(0);
}
END_TEST

RK_TEST_SUITE("detect_tail", { "tail", 120, rk_test_tmpdir_make, rk_test_tmpdir_remove, 0,
	  RK_TESTS(RK_TEST(t_tail_check), RK_TEST(t_tail_ext4), RK_TEST(t_tail_ext4_spread), RK_TEST(t_tail_xfs), RK_TEST(t_tail_ntfs), RK_TEST(t_ntfs_mftmirr),
	           RK_TEST_LOOP(t_tail_fat, 0, 2)) })
