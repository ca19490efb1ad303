/* rk_scrub_checkpoint.h: the scrub checkpoint file, a file format raidkit
 * writes ("raid-scrub checkpoint 1").
 *
 * A scrub's resume point lives in a small text file outside the members
 * (plain scrub must not write to them): written to PATH.tmp then renamed,
 * so a crash leaves the old or the new point.  The file is lines of
 * "key value": the version line, uuid (32 hex digits), first, last, next,
 * mismatches, repaired, repair (0/1), unreadable, unrecoverable. */
#ifndef RK_SCRUB_CHECKPOINT_H
#define RK_SCRUB_CHECKPOINT_H

#include <stdint.h>
#include "rk_err.h"

struct rk_scrub_ckpt {
	uint8_t  uuid[16];           /* array */
	uint64_t first, last;        /* the stripe range asked for */
	uint64_t next;               /* next stripe to check */
	uint64_t mismatches, repaired;   /* counted so far */
	uint64_t unreadable, unrecoverable; /* likewise (absent from older files: 0) */
	int repair;
};
/* Writes C to PATH (through PATH.tmp, fsync'd, renamed).  RK_E_INVAL when
 * PATH is too long, RK_E_OPEN when PATH.tmp cannot be created, RK_E_IO
 * when writing or renaming fails (PATH.tmp is removed then). */
rk_err rk_scrub_ckpt_save(const char *path, const struct rk_scrub_ckpt *c);
/* Reads PATH into C.  RK_E_OPEN when PATH does not exist; RK_E_CORRUPT
 * when it does not parse or next is outside [first, last]. */
rk_err rk_scrub_ckpt_load(const char *path, struct rk_scrub_ckpt *c);

#endif
