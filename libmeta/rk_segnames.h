/* rk_segnames.h: files named like the segments of a split raw image
 * (NAME.001 NAME.002 ..., NAME.aa NAME.ab ...) that are separate members,
 * one whole disk each (spec/images.md, "Separate members named like
 * segments").  The device layer goes by the name (rk_dev_open); these
 * decide by the metadata the files carry, and rk_member_open follows the
 * decision, so every command that opens members opens them alike. */
#ifndef RK_SEGNAMES_H
#define RK_SEGNAMES_H

#include <stddef.h>
#include <stdint.h>

#include "rk_dev.h"

/* 1 when D, read as a whole member, carries metadata of its own: a valid
 * raidkit superblock copy (its recorded place and size fit D), a foreign
 * format's view whose data area lies inside D, or a GPT whose primary
 * header at LBA 1 names D's last LBA for its backup (or that backup
 * naming LBA 1); WHAT (CAP bytes) says which ("md 1.2 superblock").
 * 0 when none (I/O errors count as none). */
int rk_member_carries_own(rk_dev *d, char *what, size_t cap);

/* Whether the files of the split series whose first segment is FIRST are
 * separate members: 1 when a later one (up to the 65th name; a few missing
 * names in a row are passed over) read alone carries metadata of its own,
 * unless segment 1 read alone carries none while the set read as one image
 * does (then it is one disk cut in pieces).  WHY (CAP bytes, may be NULL)
 * gets the sentence for reports: "case.002 carries its own md 1.2
 * superblock: read as a separate file, not a segment of case.001".  0
 * (one split image, the name decides) otherwise. */
int rk_split_separate(const char *first, char *why, size_t cap);

/* 1 when PATH is named like a segment of a split raw image (the first or
 * a later one) whose set rk_split_separate reads as separate files: PATH
 * opens as itself (RK_DEV_PLAIN).  WHY as there. */
int rk_member_plain(const char *path, char *why, size_t cap);

/* rk_dev_segment_given, except that a file of a set read as separate
 * files is never folded into its "first segment". */
int rk_member_segment_given(char *const *paths, uint32_t n, uint32_t i);

/* rk_dev_open, except that PATH of a set rk_member_plain reads as
 * separate files opens as itself (RK_DEV_PLAIN), read-only: they are
 * evidence named as images, and RK_DEV_RDWR is refused (RK_E_NOTSUP,
 * "case.002 is named like a segment of a split raw image (...): raidkit
 * reads it but never writes to it").  rk_member_open opens paths so. */
rk_err rk_member_open_path(rk_dev **out, const char *path, unsigned flags);

#endif
