/* dev_image.h: private to the device layer: the backends rk_dev_open
 * chooses between (dev.c), and what dev.c asks the image backends.
 * spec/images.md states the rules. */
#ifndef RK_DEV_IMAGE_H
#define RK_DEV_IMAGE_H

#include <stddef.h>
#include <stdint.h>
#include "rk_dev.h"

/* dev_file.c: PATH as a regular file or block device (rk_dev_open's
 * contract for those, without looking at the name or the bytes). */
rk_err rk_dev_open_file(rk_dev **out, const char *path, unsigned flags);

/* dev_ewf.c: 1 when the 8 bytes at SIG are an EWF segment signature
 * (EWF1 "EVF\t\r\n\xff\0" or EWF2 "EVF2\r\n\x81\0"); 2 for the logical
 * evidence forms (L01, Lx01), which hold files rather than a disk. */
int    dev_ewf_signature(const uint8_t sig[8]);
/* Opens the E01 set whose segment PATH is (read-only; the first segment
 * expected, later ones refused naming the first). */
rk_err dev_ewf_open(rk_dev **out, const char *path);
/* Segment number (from 1) the header of an EWF1 segment at SIG states,
 * 0 when it does not say (EWF2). */
uint32_t dev_ewf_segment_number(const uint8_t *hdr, size_t len);
/* The segment files of an ewf device, in order (libewf_glob's list). */
uint32_t    dev_ewf_segments(const rk_dev *d);
const char *dev_ewf_segment_path(const rk_dev *d, uint32_t i);
extern const struct rk_dev_ops dev_ewf_ops;

/* dev_split.c: what the name PATH says about split raw images.
 * Returns 1 when PATH follows a split naming rule (NAME.NNN with three
 * or more digits, NAME.aa / NAME.aaa ...) and the set it belongs to has
 * a second segment; then FIRST (CAP bytes) is the first segment's path
 * and *NUMBER PATH's place in the set (from 1).  0 otherwise (a lone
 * NAME.001 is a plain file). */
int    dev_split_name(const char *path, char *first, size_t cap, uint32_t *number);
/* The name of segment NUMBER (from 1) of the series whose first segment
 * is FIRST into OUT (CAP bytes); 0 when FIRST is no split name or the
 * number does not fit the suffix. */
int    dev_split_segment_name(const char *first, uint32_t number, char *out, size_t cap);
/* Opens the split image whose first segment is PATH (read-only). */
rk_err dev_split_open(rk_dev **out, const char *path);
uint32_t    dev_split_segments(const rk_dev *d);
const char *dev_split_segment_path(const rk_dev *d, uint32_t i);
extern const struct rk_dev_ops dev_split_ops;

#endif
