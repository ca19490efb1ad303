/* segnames.c: files named like the segments of a split raw image that are
 * separate members (spec/images.md, "Separate members named like
 * segments").  An examiner who imaged the four disks of an array as
 * case.001 .. case.004 has four members, not one image cut in four.  The
 * device layer goes by the name; this decides by the bytes:
 *
 *   a later segment that, read as the one file it is, carries metadata
 *   of its own as a whole member does (a raidkit superblock copy whose
 *   recorded place and size fit that file, a foreign format's view whose
 *   data area lies inside it, a GPT whose header at LBA 1 points at that
 *   file's own last LBA for its backup) is a member of its own: every
 *   file of the "set" is then read as a separate file;
 *
 * unless segment 1 alone carries no such metadata while the set read as
 * one image does (metadata at segment 1's start describing a member larger
 * than segment 1, or at the set's end): that is one disk cut in pieces
 * whose pieces happen to hold such bytes (a partition starting exactly at
 * a split boundary).  With no metadata anywhere the name decides (split).
 *
 * A split at an arbitrary byte boundary puts a checksummed superblock at
 * a later segment's own 0/4096/end offsets with a recorded place and size
 * that fit the segment essentially never: raidkit's copies record their
 * own offset and the member size; md's data area would run past the
 * segment's end; GPT's backup LBA is the whole disk's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "rk_dev.h"
#include "rk_fmt.h"
#include "rk_le.h"
#include "rk_part.h"
#include "rk_segnames.h"
#include "rk_sb.h"

#define SEG_CHECK_MAX 64u   /* later segments looked at (a member set is no longer) */

/* A GPT header with a good CRC in the 512 bytes at P, at LBA MY of a disk
 * whose other header is at ALT: 1 when it is there. */
static int gpt_header_at(const uint8_t *p, uint64_t my, uint64_t alt)
{
	return rk_gpt_header_ok(p) && rk_get_le64(p + 24) == my && rk_get_le64(p + 32) == alt;
}

/* Whether D holds a GPT of its own size: the primary header at LBA 1
 * naming D's last LBA as its backup's, or the backup header there naming
 * LBA 1 (512- or 4096-byte sectors). */
static int gpt_own(rk_dev *d)
{
	uint64_t size = rk_dev_size(d);
	uint8_t p[512];
	for (uint32_t ss = 512; ss <= 4096; ss *= 8) {
		if (size / ss < 3)
			continue;
		uint64_t last = size / ss - 1;
		if (rk_dev_pread(d, p, sizeof p, ss) == RK_OK && gpt_header_at(p, 1, last))
			return 1;
		if (rk_dev_pread(d, p, sizeof p, last * ss) == RK_OK && gpt_header_at(p, last, 1))
			return 1;
	}
	return 0;
}

int rk_member_carries_own(rk_dev *d, char *what, size_t cap)
{
	struct rk_sb_read rd;
	rk_err e = rk_sb_read(d, &rd);
	int own = e == RK_OK && rd.chosen >= 0;
	rk_sb_read_free(&rd);
	if (own) {
		snprintf(what, cap, "raidkit superblock");
		return 1;
	}
	struct rk_foreign_read f;
	if (rk_foreign_read(d, rk_dev_path(d), &f) == RK_OK && f.fmt && f.nviews > 0) {
		snprintf(what, cap, "%s superblock", rk_view_origin_name(&f.views[0]));
		own = 1;
	}
	rk_foreign_read_free(&f);
	if (!own && gpt_own(d)) {
		snprintf(what, cap, "GPT partition table (its backup at that file's last sector)");
		own = 1;
	}
	return own;
}

/* Whether the files named like a set whose first segment is FIRST are one
 * image by the bytes: segment 1 read alone carries no metadata of its own
 * while the set read as one image does.  A set that cannot be opened as
 * one (a gap: case.003 missing beside case.001, case.002, case.004) is
 * not one image by the bytes. */
static int set_is_one_image(const char *first)
{
	rk_dev *one = NULL, *set = NULL;
	char what[128];
	if (rk_dev_open(&one, first, RK_DEV_RDONLY | RK_DEV_PLAIN) != RK_OK)
		return 1;
	int own1 = rk_member_carries_own(one, what, sizeof what);
	rk_dev_close(one);
	if (own1 || rk_dev_open(&set, first, RK_DEV_RDONLY) != RK_OK)
		return 0;
	int ownset = rk_member_carries_own(set, what, sizeof what);
	rk_dev_close(set);
	return ownset;
}

/* Later file NAME of the set read alone: 1 when it carries metadata of
 * its own (WHY says which), 0 when not or it cannot be opened. */
static int later_own(const char *name, const char *first, char *why, size_t cap)
{
	rk_dev *d = NULL;
	char what[128];
	if (rk_dev_open(&d, name, RK_DEV_RDONLY | RK_DEV_PLAIN) != RK_OK)
		return 0;
	int own = rk_member_carries_own(d, what, sizeof what);
	rk_dev_close(d);
	if (own && why && cap)
		snprintf(why, cap, "%s carries its own %s: read as a separate file, not a segment of %s", name, what,
		         first);
	return own;
}

int rk_split_separate(const char *first, char *why, size_t cap)
{
	char name[4096];
	uint32_t gap = 0;
	if (why && cap)
		why[0] = 0;
	if (!first || set_is_one_image(first))
		return 0;
	/* the later names that exist, a few missing ones in a row tolerated */
	for (uint32_t k = 2; k <= SEG_CHECK_MAX + 1 && gap < 8; k++) {
		struct stat st;
		if (!rk_dev_split_segment_name(first, k, name, sizeof name))
			break;
		if (stat(name, &st) != 0) {
			gap++;
			continue;
		}
		gap = 0;
		if (later_own(name, first, why, cap))
			return 1;
	}
	return 0;
}

int rk_member_plain(const char *path, char *why, size_t cap)
{
	char first[4096];
	uint32_t number;
	if (why && cap)
		why[0] = 0;
	if (!path || !rk_dev_split_of(path, first, sizeof first, &number))
		return 0;
	return rk_split_separate(first, why, cap);
}

int rk_member_segment_given(char *const *paths, uint32_t n, uint32_t i)
{
	if (!rk_dev_segment_given(paths, n, i))
		return 0;
	return !rk_member_plain(paths[i], NULL, 0);
}

rk_err rk_member_open_path(rk_dev **out, const char *path, unsigned flags)
{
	char why[400];
	if (out)
		*out = NULL;
	if (!path || !rk_member_plain(path, why, sizeof why))
		return rk_dev_open(out, path, flags);
	if (flags & RK_DEV_RDWR)
		return rk_fail(RK_E_NOTSUP, "%s is named like a segment of a split raw image (%s): raidkit reads it "
		               "but never writes to it; give it another name to write to it", path, why);
	return rk_dev_open(out, path, flags | RK_DEV_PLAIN);
}
