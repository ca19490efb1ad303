/* vol_repair.c: repair of the read errors rk_vol_read met on members opened
 * read-write (see rk_vol_on_repair): after the read, with the op lock held,
 * each failed range is probed, the pieces that still fail are rewritten
 * from redundancy (as a rebuild onto the member itself) and read back.
 */
#include <stdio.h>
#include <stdlib.h>
#include "vol_int.h"

#define READ_BACK_PIECE (1u << 20)
#define MIRROR_REPAIR_PIECE 65536u   /* RAID-1 has no chunk: probe in these */

/* Reads [a, b) of ROLE's data area once (the rewrite took). */
static rk_err read_back(rk_vol *v, uint32_t role, uint64_t a, uint64_t b)
{
	size_t cap = b - a < READ_BACK_PIECE ? (size_t)(b - a) : READ_BACK_PIECE;
	uint8_t *tmp = malloc(cap ? cap : 1);
	if (!tmp)
		return rk_fail(RK_E_NOMEM, "volume: out of memory");
	rk_err e = RK_OK;
	for (uint64_t at = a; at < b && !e; at += cap) {
		size_t n = b - at < cap ? (size_t)(b - at) : cap;
		e = rk_dev_pread(v->devs[role], tmp, n, v->data_offset[role] + at);
	}
	free(tmp);
	return e;
}

/* Rewrites [a, b) of ROLE from redundancy, as rk_vol_rebuild does but onto
 * the member itself, then reads it back once.  A role whose rewrite fails
 * with RK_E_IO is failed; a repaired range is reported. */
static rk_err repair_run(rk_vol *v, uint32_t role, uint64_t a, uint64_t b)
{
	rk_err e = vol_rebuild_onto(v, role, v->devs[role], v->data_offset[role], a, b, 0, NULL, NULL);
	if (!e)
		e = read_back(v, role, a, b);
	if (e == RK_E_IO && v->role_state[role] == ROLE_READ_ERROR) {
		snprintf(v->io_msg[role], sizeof v->io_msg[0], "member %u: read error at data-area bytes %llu+%llu, and the "
		         "rewrite from redundancy failed: %s", role, (unsigned long long)a, (unsigned long long)(b - a),
		         rk_errmsg());
		__atomic_store_n(&v->role_state[role], (uint8_t)ROLE_UP, __ATOMIC_RELEASE);
		vol_fail_role(v, role, RK_E_IO);
		return vol_readable(v) ? RK_OK : vol_too_few(v);
	}
	if (!e && v->repair_fn)
		v->repair_fn(v->repair_ctx, role, a, b - a);
	return e;
}

/* Probes [a, b) of ROLE piece by piece; each run of pieces that still fail
 * is repaired (repair_run).  Stops when the role is no longer waiting for
 * repair (failed meanwhile). */
static rk_err repair_range(rk_vol *v, uint32_t role, uint64_t a, uint64_t b, uint64_t piece)
{
	uint64_t run = UINT64_MAX;   /* start of the current run of bad pieces */
	for (uint64_t at = a, pe; v->role_state[role] == ROLE_READ_ERROR; at = pe) {
		int last = at >= b;
		pe = last ? b : (b - at > piece ? at + piece : b);
		rk_err pr = last ? RK_OK : read_back(v, role, at, pe);
		if (pr == RK_E_IO) {
			if (run == UINT64_MAX)
				run = at;
			continue;
		}
		if (pr)
			return pr;
		if (run != UINT64_MAX) {
			rk_err e = repair_run(v, role, run, at);
			if (e)
				return e;
			run = UINT64_MAX;
		}
		if (last)
			break;
	}
	return RK_OK;
}

/* Each range (whole chunks on striped levels) is probed piece by piece (a
 * chunk, or 64 KiB on RAID-1), the runs of pieces that still fail are
 * rewritten from redundancy and read back, and reported (repair callback);
 * a role whose rewrite or read-back fails with RK_E_IO is failed.  Every
 * role still marked ROLE_READ_ERROR goes back up. */
rk_err vol_repair_reads(rk_vol *v, rk_err e)
{
	const struct rk_geom *g = &v->g;
	uint32_t nerrors = v->nread_errors;
	uint64_t piece = g->chunk ? g->chunk : MIRROR_REPAIR_PIECE;
	v->nread_errors = 0;
	for (uint32_t i = 0; i < nerrors && !e; i++) {
		uint32_t role = v->read_errors[i].role;
		uint64_t a = v->read_errors[i].off, b = a + v->read_errors[i].len;
		a -= a % piece;
		if (b % piece)
			b += piece - b % piece;
		if (b > g->member_size)
			b = g->member_size;
		e = repair_range(v, role, a, b, piece);
	}
	for (uint32_t r = 0; r < v->nroles; r++)
		if (v->role_state[r] == ROLE_READ_ERROR)
			__atomic_store_n(&v->role_state[r], (uint8_t)ROLE_UP, __ATOMIC_RELEASE);
	return e;
}
