/* err.c: message table and per-thread error detail. */
#include "rk_err.h"

#include <stdio.h>
#include <string.h>

static const char *const rk_msgs[RK_E__COUNT] = {
	[RK_OK]         = "success",
	[RK_E_NOMEM]    = "out of memory",
	[RK_E_IO]       = "I/O error",
	[RK_E_INVAL]    = "invalid argument",
	[RK_E_RANGE]    = "offset or size out of range",
	[RK_E_OPEN]     = "cannot open member",
	[RK_E_BUSY]     = "member is in use",
	[RK_E_NOSB]     = "no raidkit superblock",
	[RK_E_BADCRC]   = "superblock checksum mismatch",
	[RK_E_VERSION]  = "unsupported format version",
	[RK_E_FEATURE]  = "unknown incompatible feature",
	[RK_E_CORRUPT]  = "inconsistent metadata",
	[RK_E_SHORT]    = "device smaller than recorded",
	[RK_E_NOTSUP]   = "not supported",
	[RK_E_TOOFEW]   = "not enough members",
	[RK_E_CONFLICT] = "conflicting metadata",
	[RK_E_EXISTS]   = "member already holds data",
	[RK_E_FAULT]    = "injected fault",
	[RK_E_READONLY] = "member opened read-only",
	[RK_E_MISMATCH] = "redundancy mismatch",
	[RK_E_STALE]    = "stale member",
};

static _Thread_local char rk_detail[1024];
static _Thread_local rk_err rk_last;

const char *rk_strerror(rk_err e)
{
	if ((unsigned)e >= RK_E__COUNT || !rk_msgs[e])
		return "unknown error";
	return rk_msgs[e];
}

rk_err rk_vfail(rk_err e, const char *fmt, va_list ap)
{
	rk_last = e;
	/* formatted aside first: callers may quote rk_errmsg() itself */
	char buf[sizeof rk_detail];
	if (fmt)
		vsnprintf(buf, sizeof buf, fmt, ap);
	else
		buf[0] = '\0';
	memcpy(rk_detail, buf, sizeof buf);
	return e;
}

rk_err rk_fail(rk_err e, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	rk_vfail(e, fmt, ap);
	va_end(ap);
	return e;
}

const char *rk_errmsg(void)
{
	return rk_detail[0] ? rk_detail : rk_strerror(rk_last);
}

rk_err rk_lasterr(void) { return rk_last; }

void rk_clearerr(void)
{
	rk_last = RK_OK;
	rk_detail[0] = '\0';
}
