/* detect_hyp.h: hypotheses made by hand for the detect suites
 * (test_detect_*.c), as the search would make them. */
#ifndef DETECT_HYP_H
#define DETECT_HYP_H

#include <stdint.h>

#include "detect_int.h"

/* H reads image 0 from byte START as a linear volume of one member, SIZE -
 * START bytes long. */
void dt_test_hyp_linear(struct dt_hyp *h, uint64_t start, uint64_t size);
/* H is geometry G with image r in role r for the first N roles (offsets
 * 0), the other roles missing. */
void dt_test_hyp_roles(struct dt_hyp *h, const struct rk_geom *g, uint32_t n);
/* C opened over the one image PATH (dt_open; the test fails when it
 * cannot be); dt_test_close_one closes it again. */
void dt_test_open_one(struct dt_ctx *c, const char *path);
void dt_test_close_one(struct dt_ctx *c);
/* A FAT16 boot sector at V (512-byte sectors and clusters of one sector,
 * two FATs of FATSECS sectors after RES reserved ones, ROOTSECS of root
 * directory, SECS sectors in all) and the media entries of both FATs. */
void dt_test_fat16(uint8_t *v, uint32_t secs, uint32_t res, uint32_t fatsecs, uint32_t rootsecs);
/* An exFAT file entry set (file, stream extension, one name entry) at E
 * for NAME (up to 15 characters), a directory when DIR, data at FIRST
 * (contiguous, LEN bytes), its checksum set; returns the entries used. */
uint32_t dt_test_exfat_set(uint8_t *e, const char *name, int dir, uint32_t first, uint64_t len);

/* Volume V (VOL bytes) written as a RAID-5 (left-symmetric, CHUNK) of N
 * members to PATHS[0..N-1]; returns the role holding the volume's first
 * chunk. */
uint32_t dt_test_raid5_write(const uint8_t *v, uint64_t vol, uint32_t n, uint64_t chunk, char *const *paths);

#endif
