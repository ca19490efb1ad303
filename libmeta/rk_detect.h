/* rk_detect.h: finding an array whose metadata is gone (raid-recover
 * --detect, issue 16): level, member count, role of each image, stripe unit,
 * layout and data start, from the content of the images alone, with the
 * evidence that supports the answer (spec/detect.md).
 *
 * One call: rk_detect_run() opens the images read-only, samples them (never
 * more than RK_DETECT_READ_MAX bytes of any image, whatever its size), finds
 * anchors (metadata that records its own position), generates hypotheses,
 * scores each by anchors, file-system probes and parity/mirror algebra, and
 * returns the best with its runner-ups.  Nothing is guessed: when two
 * hypotheses that map the volume differently explain the data equally well
 * the answer is "ambiguous" (found = 0) with both in alts.
 */
#ifndef RK_DETECT_H
#define RK_DETECT_H

#include <stdint.h>
#include "rk_err.h"
#include "rk_geometry.h"

#define RK_DETECT_READ_MAX (1ull << 30)   /* bytes read per image, at most */

/* What the user says he knows; 0 / -2 fields mean "not given". */
struct rk_detect_hints {
	int      have_level;
	int32_t  level;          /* md numbers; RK_LEVEL_LINEAR for linear */
	uint64_t chunk;          /* 0: search */
	uint32_t members;        /* 0: search (members_total, missing roles included) */
	int      have_offset;
	uint64_t offset;         /* data start on every image */
};

/* One anchor as evidence: metadata on image IMAGE at byte IMAGE_OFF that
 * says it sits at volume byte VOLUME_OFF; AGREES: the answer maps it there. */
struct rk_detect_anchor {
	char     what[40];       /* "ext4 superblock group 3", "NTFS MFT record 17", ... */
	uint32_t image;          /* index into the images given */
	uint64_t image_off, volume_off;
	int      agrees;
};

/* A hypothesis that lost, and why. */
struct rk_detect_alt {
	int32_t  level;
	uint32_t layout;
	uint64_t chunk;
	uint32_t members_total;
	double   score;
	char     why_lost[200];
};

struct rk_detect_result {
	int      found;              /* 1: one answer; 0: nothing or ambiguous */
	int      ambiguous;          /* found == 0 because candidates tie */
	int      sparse;             /* the best hypothesis has under the evidence an answer
	                              * needs (8 non-zero rows of redundancy or 12 anchors and
	                              * predictions): the data is too sparse to tell */
	double   confidence;         /* 0..1 */
	struct rk_geometry geom;     /* the answer (paths copied); valid when found */
	int32_t *image_role;         /* per image given: its role, -1 not used */
	uint32_t nimages;
	uint32_t missing;            /* roles without an image */
	/* evidence */
	uint64_t rows_checked;       /* sampled rows (4 KiB per member) */
	uint64_t rows_nonzero;       /* of them, rows holding some non-zero byte */
	uint64_t rows_consistent;    /* of them, consistent with parity / mirrors */
	int      redundancy_checked; /* 0 when the level or missing roles leave none to check */
	uint32_t probes_ok, probes_bad;   /* file-system structures found / not found where predicted */
	uint32_t anchors_agree, anchors_total;
	struct rk_detect_anchor *anchors;
	uint32_t nanchors;
	struct rk_detect_alt *alts;
	uint32_t nalts;
	uint64_t max_read;           /* the most bytes read from one image */
	uint64_t hypotheses;         /* hypotheses scored */
	char     why[256];           /* one sentence: why found, why not */
};

/* Detects the array on the images PATHS (N of them, any order).  *OUT is
 * allocated (free with rk_detect_free) whenever RK_OK is returned, also when
 * nothing was found.  Errors: RK_E_OPEN naming the image, RK_E_NOMEM,
 * RK_E_INVAL for hints that contradict each other. */
rk_err rk_detect_run(char *const *paths, uint32_t n, const struct rk_detect_hints *h,
                     struct rk_detect_result **out);
void rk_detect_free(struct rk_detect_result *r);

#endif
