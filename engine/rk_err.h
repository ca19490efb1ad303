/* rk_err.h: the one error enum of raidkit, with fixed numbers.
 *
 * Every library function that can fail returns an rk_err (RK_OK == 0).
 * A failing function also records a sentence naming what failed (member
 * path, field, option) with rk_fail(); callers read it with rk_errmsg().
 * The record is per thread.  Numbers are stable: never renumber, only add.
 */
#ifndef RK_ERR_H
#define RK_ERR_H

#include <stdarg.h>

typedef enum rk_err {
	RK_OK          = 0,
	RK_E_NOMEM     = 1,  /* out of memory */
	RK_E_IO        = 2,  /* I/O error reading or writing a member */
	RK_E_INVAL     = 3,  /* invalid argument */
	RK_E_RANGE     = 4,  /* offset/size out of range or overflowing */
	RK_E_OPEN      = 5,  /* cannot open a member */
	RK_E_BUSY      = 6,  /* member in use (lock or O_EXCL failed) */
	RK_E_NOSB      = 7,  /* no raidkit superblock (bad magic) */
	RK_E_BADCRC    = 8,  /* superblock checksum mismatch */
	RK_E_VERSION   = 9,  /* unsupported format version */
	RK_E_FEATURE   = 10, /* unknown incompatible feature bits */
	RK_E_CORRUPT   = 11, /* fields inconsistent with each other or the device */
	RK_E_SHORT     = 12, /* device smaller than the metadata says */
	RK_E_NOTSUP    = 13, /* valid but not supported by this build */
	RK_E_TOOFEW    = 14, /* not enough members to run the array */
	RK_E_CONFLICT  = 15, /* conflicting metadata (split brain, ambiguous) */
	RK_E_EXISTS    = 16, /* member already carries recognised data */
	RK_E_FAULT     = 17, /* injected fault (test backends) */
	RK_E_READONLY  = 18, /* write to a member opened read-only */
	RK_E_MISMATCH  = 19, /* redundancy mismatch found */
	RK_E_STALE     = 20, /* member is stale */
	RK_E__COUNT
} rk_err;

/* Fixed text for a code; never NULL. */
const char *rk_strerror(rk_err e);

/* Records "printf(fmt, ...)" as this thread's last error detail and returns
 * e unchanged, so callers write: return rk_fail(RK_E_IO, "%s: ...", path); */
rk_err rk_fail(rk_err e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
rk_err rk_vfail(rk_err e, const char *fmt, va_list ap);

/* This thread's last detail, or rk_strerror() of the last code when none was
 * given.  Valid until the next rk_fail() on this thread. */
const char *rk_errmsg(void);
rk_err rk_lasterr(void);
void rk_clearerr(void);

#endif
