/* vol.c: the stripe engine: a volume over the members of an array.
 *
 * Linear, RAID-0, RAID-1 and RAID-10 move data straight between the caller's
 * buffer and the members (the direct path, here).  RAID-4/5/6 work in
 * units: a few whole stripes, or for very wide stripes a column slice of one
 * stripe, staged in one buffer per role (memory stays near VOL_BUDGET
 * whatever the array size; vol_unit.c, vol_write.c).  Member I/O of a step
 * is a queue of requests, merged per role into large requests and run in
 * parallel on the shared thread pool (vol_io.c).  Resync, rebuild and
 * read-error repair are in vol_rebuild.c; vol_int.h maps the files.
 *
 * A member whose read or write fails with RK_E_IO is marked down, reported
 * through the fail callback, and the operation carries on degraded where the
 * redundancy allows.  Other errors (RK_E_FAULT: the process is "dead";
 * RK_E_READONLY ...) stop the operation.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "vol_int.h"
#include "rk_le.h"
#include "rk_util.h"

#define VOL_BUDGET   (4u << 20)   /* bytes of role buffers per unit */
#define VOL_MIN_COLS 4096u        /* narrowest column slice */
#define DIRECT_PIECE (4u << 20)   /* largest single request of the direct path */
#define DIRECT_BATCH (32u << 20)  /* volume bytes per direct-path batch */

/* ---- member state ---- */

int rk_vol_role_down(const rk_vol *v, uint32_t role)
{
	if (role >= v->nroles)
		return 1;
	return __atomic_load_n(&v->role_state[role], __ATOMIC_ACQUIRE) != ROLE_UP;
}

int vol_is_down(const rk_vol *v, uint32_t role)
{
	return v->role_state[role] != ROLE_UP;   /* only the operation thread changes it */
}

uint32_t vol_ndown(const rk_vol *v)
{
	uint32_t c = 0;
	for (uint32_t r = 0; r < v->nroles; r++)
		c += v->role_state[r] != ROLE_UP;
	return c;
}

void vol_fail_role(rk_vol *v, uint32_t role, rk_err why)
{
	pthread_mutex_lock(&v->state_lock);
	enum role_state was = v->role_state[role];
	if (was == ROLE_UP)
		__atomic_store_n(&v->role_state[role], (uint8_t)ROLE_FAILED, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&v->state_lock);
	if (was != ROLE_UP)
		return;
	rk_fail(why, "%s", v->io_msg[role][0] ? v->io_msg[role] : "member I/O failed");
	if (v->fail_fn)
		v->fail_fn(v->fail_ctx, role, why);
}

void rk_vol_on_repair(rk_vol *v, rk_vol_repair_fn fn, void *ctx)
{
	pthread_mutex_lock(&v->state_lock);
	v->repair_fn = fn;
	v->repair_ctx = ctx;
	pthread_mutex_unlock(&v->state_lock);
}

int vol_note_read_error(rk_vol *v, uint32_t role, uint64_t off, size_t len)
{
	if (v->nread_errors == v->cap_read_errors) {
		uint32_t nc = v->cap_read_errors ? v->cap_read_errors * 2 : 8;
		void *nr = realloc(v->read_errors, nc * sizeof *v->read_errors);
		if (!nr)
			return 0;
		v->read_errors = nr;
		v->cap_read_errors = nc;
	}
	v->read_errors[v->nread_errors++] = (struct read_error){ .role = role, .off = off, .len = len };
	if (v->role_state[role] == ROLE_UP)
		__atomic_store_n(&v->role_state[role], (uint8_t)ROLE_READ_ERROR, __ATOMIC_RELEASE);
	return 1;
}

void rk_vol_on_fail(rk_vol *v, rk_vol_fail_fn fn, void *ctx)
{
	pthread_mutex_lock(&v->state_lock);
	v->fail_fn = fn;
	v->fail_ctx = ctx;
	pthread_mutex_unlock(&v->state_lock);
}

void rk_vol_set_serial(rk_vol *v, int serial)
{
	pthread_mutex_lock(&v->op_lock);
	v->serial = serial != 0;
	pthread_mutex_unlock(&v->op_lock);
}

uint64_t rk_vol_size(const rk_vol *v)
{
	return v->g.volume_size;
}

const struct rk_geom *rk_vol_geom(const rk_vol *v)
{
	return &v->g;
}

/* Enough members to serve every byte? */
int vol_readable(const rk_vol *v)
{
	return rk_geom_readable(&v->g, v->role_state);
}

rk_err vol_too_few(const rk_vol *v)
{
	return rk_fail(RK_E_TOOFEW, "volume: %u of %u members missing or failed; RAID-%s tolerates %u", vol_ndown(v),
	               v->nroles, rk_level_name(v->g.level), rk_geom_redundancy(&v->g));
}

int vol_parity_level(const struct rk_geom *g)
{
	return g->level == 4 || g->level == 5 || g->level == 6;
}

/* ---- open / close ---- */

static void vol_free(rk_vol *v)
{
	if (!v)
		return;
	rk_pool_destroy(v->pool);
	RK_FREE_ALL(v->devs, v->data_offset, v->role_state, v->io_msg, v->queue, v->group_start, v->role_buf,
	            v->role_buf_mem, v->zero, v->scratch, v->vol_role, v->slot, v->block_from, v->block_to,
	            v->stripes, v->ptrs, v->bptr, v->job_bptr, v->job_ptrs, v->locs, v->journal_segs, v->read_errors);
	pthread_mutex_destroy(&v->state_lock);
	pthread_mutex_destroy(&v->op_lock);
	free(v);
}

void rk_vol_close(rk_vol *v)
{
	vol_free(v);
}

/* Re-derives G into CHK: never trust a caller-filled struct. */
static rk_err check_geometry(const struct rk_geom *g, struct rk_geom *chk)
{
	rk_err e = rk_geom_init(chk, g->level, g->layout, g->chunk, g->nroles, g->member_size);
	if (e)
		return e;
	if (chk->volume_size != g->volume_size || chk->member_size != g->member_size)
		return rk_fail(RK_E_INVAL, "volume: geometry was not made by rk_geom_init");
	return RK_OK;
}

/* Takes the member list: a missing device is a missing role; a device too
 * small for the data area is RK_E_SHORT. */
static rk_err take_members(rk_vol *v, rk_dev *const *devs, const uint64_t *data_offset)
{
	uint32_t n = v->nroles;
	/* one slot past the roles: a rebuild's target (rk_vol_rebuild) */
	v->devs = calloc(n + 1, sizeof *v->devs);
	v->data_offset = calloc(n + 1, sizeof *v->data_offset);
	v->role_state = calloc(n, 1);
	v->io_msg = calloc(n + 1, sizeof *v->io_msg);
	v->locs = calloc(v->g.copies, sizeof *v->locs);
	if (!v->devs || !v->data_offset || !v->role_state || !v->io_msg || !v->locs)
		return rk_fail(RK_E_NOMEM, "volume: out of memory");
	for (uint32_t r = 0; r < n; r++) {
		v->devs[r] = devs[r];
		v->data_offset[r] = data_offset[r];
		if (!devs[r]) {
			v->role_state[r] = ROLE_MISSING;
			continue;
		}
		uint64_t end;
		if (rk_add_ovf(data_offset[r], v->g.member_size, &end) || end > rk_dev_size(devs[r]))
			return rk_fail(RK_E_SHORT, "%s: member is %llu bytes, the data area ends at %llu", rk_dev_path(devs[r]),
			               (unsigned long long)rk_dev_size(devs[r]), (unsigned long long)end);
	}
	return RK_OK;
}

/* Parity levels: the unit's size (whole stripes while a row of chunks fits
 * the budget, else a column slice of one stripe) and its buffers. */
static rk_err alloc_units(rk_vol *v)
{
	uint32_t n = v->nroles;
	uint64_t chunk = v->g.chunk, row = (uint64_t)n * chunk;
	if (row <= VOL_BUDGET) {
		v->unit_cols = chunk;
		v->unit_stripes = (uint32_t)(VOL_BUDGET / row);
		if (v->unit_stripes > VOL_MAX_UNIT_STRIPES)
			v->unit_stripes = VOL_MAX_UNIT_STRIPES;
		if (v->unit_stripes > v->g.nstripes)
			v->unit_stripes = (uint32_t)v->g.nstripes;
	} else {
		uint64_t w = VOL_BUDGET / n;
		w -= w % VOL_MIN_COLS;
		if (w < VOL_MIN_COLS)
			w = VOL_MIN_COLS;
		v->unit_cols = w < chunk ? w : chunk;
		v->unit_stripes = 1;
	}
	/* staging merges a unit's stripes into one request per member: worth a
	 * copy only while chunks are small */
	v->zero_copy = v->unit_stripes == 1 || chunk >= (256u << 10);
	/* degraded reads of whole stripes stage only parity, so more stripes go
	 * per run in the same buffer (vol_read.c) */
	v->read_stripes = v->unit_stripes;
	if (v->unit_cols == chunk) {
		uint64_t rs = (uint64_t)v->unit_stripes * n / v->g.nparity;
		rs = rs < VOL_MAX_UNIT_STRIPES ? rs : VOL_MAX_UNIT_STRIPES;
		rs = rs < v->g.nstripes ? rs : v->g.nstripes;
		v->read_stripes = rs > v->unit_stripes ? (uint32_t)rs : v->unit_stripes;
	}
	size_t per = (size_t)v->unit_stripes * v->unit_cols, nst = v->read_stripes;
	size_t cols = (v->unit_cols + 63) / 64 * 64;
	uint32_t nd = v->g.ndata, slots = v->g.q_slots + 2;
	v->role_buf = calloc(n, sizeof *v->role_buf);
	v->role_buf_mem = aligned_alloc(64, (per * n + 63) / 64 * 64);
	v->zero = aligned_alloc(64, cols);
	v->scratch = aligned_alloc(64, cols);
	v->vol_role = calloc(nst * nd, sizeof *v->vol_role);
	v->slot = calloc(nst * n, sizeof *v->slot);
	v->block_from = calloc(nst * nd, sizeof *v->block_from);
	v->block_to = calloc(nst * nd, sizeof *v->block_to);
	v->stripes = calloc(nst, sizeof *v->stripes);
	v->ptrs = calloc(slots > n + 2 ? slots : n + 2, sizeof *v->ptrs);
	v->bptr = calloc(n, sizeof *v->bptr);
	v->nptrs = slots > n + 2 ? slots : n + 2;
	v->job_bptr = calloc((size_t)VOL_MAX_THREADS * n, sizeof *v->job_bptr);
	v->job_ptrs = calloc((size_t)VOL_MAX_THREADS * v->nptrs, sizeof *v->job_ptrs);
	if (!v->bptr || !v->job_bptr || !v->job_ptrs || !v->role_buf || !v->role_buf_mem || !v->zero || !v->scratch || !v->vol_role || !v->slot || !v->block_from ||
	    !v->block_to || !v->stripes || !v->ptrs)
		return rk_fail(RK_E_NOMEM, "volume: out of memory");
	memset(v->zero, 0, v->unit_cols);
	for (uint32_t r = 0; r < n; r++)
		v->role_buf[r] = v->role_buf_mem + per * r;
	return RK_OK;
}

rk_err rk_vol_open(rk_vol **out, const struct rk_geom *g, rk_dev *const *devs, const uint64_t *data_offset)
{
	*out = NULL;
	if (!g || !devs || !data_offset || g->nroles == 0 || g->nroles > RK_GEOM_MAX_ROLES || g->volume_size == 0)
		return rk_fail(RK_E_INVAL, "volume: invalid geometry or member list");
	struct rk_geom chk;
	rk_err e = check_geometry(g, &chk);
	if (e)
		return e;
	rk_vol *v = calloc(1, sizeof *v);
	if (!v)
		return rk_fail(RK_E_NOMEM, "volume: out of memory");
	pthread_mutex_init(&v->state_lock, NULL);
	pthread_mutex_init(&v->op_lock, NULL);
	v->g = chk;
	v->nroles = g->nroles;
	v->pa = rk_parity();
	if (!(e = take_members(v, devs, data_offset)) && !vol_readable(v))
		e = vol_too_few(v);
	if (!e && vol_parity_level(&v->g))
		e = alloc_units(v);
	if (e) {
		vol_free(v);
		return e;
	}
	vol_pool_start(v);
	*out = v;
	return RK_OK;
}

/* ---- direct path: linear, 0, 1, 10 ---- */

uint32_t vol_live_copy(const rk_vol *v, uint32_t k, uint64_t piece_no, uint32_t except)
{
	for (uint32_t i = 0; i < k; i++) {
		uint32_t c = (uint32_t)((i + (v->g.level == 1 ? piece_no : 0)) % k);
		if (v->locs[c].role != except && !vol_is_down(v, v->locs[c].role))
			return c;
	}
	return k;
}

/* The next direct-path piece at VOFF: *TAKE bytes (at most LEFT) that stay
 * on one member; v->locs gets the copies, *K how many. */
static rk_err direct_piece(rk_vol *v, uint64_t voff, uint64_t left, uint64_t *take, uint32_t *k)
{
	const struct rk_geom *g = &v->g;
	struct rk_loc first;
	uint64_t run;
	rk_err e = rk_geom_map(g, voff, &first, &run);
	if (e)
		return e;
	*take = run < left ? run : left;
	if (*take > DIRECT_PIECE)
		*take = DIRECT_PIECE;
	*k = rk_geom_copies(g, voff, v->locs, g->copies);
	return RK_OK;
}

/* No live copy of VOFF: too few members, or a lost byte of a level without
 * redundancy (K copies). */
static rk_err direct_lost(const rk_vol *v, uint32_t k, uint64_t voff, int reading)
{
	if (k > 1)
		return vol_too_few(v);
	if (reading)
		return rk_fail(RK_E_IO, "volume: byte %llu lives on member %u, which has failed (RAID-%s has no redundancy)",
		               (unsigned long long)voff, v->locs[0].role, rk_level_name(v->g.level));
	return rk_fail(RK_E_IO, "volume: byte %llu lives on member %u, which has failed", (unsigned long long)voff,
	               v->locs[0].role);
}

/* Queues the piece of TAKE bytes at volume byte VOFF (K copies in
 * v->locs) to or from BUF: a read from one live copy, a write to every one. */
static rk_err queue_direct_piece(rk_vol *v, uint8_t *buf, uint64_t take, uint32_t k, uint64_t voff, uint64_t piece_no,
                                 int is_write)
{
	if (!is_write) {
		uint32_t pick = vol_live_copy(v, k, piece_no, RK_ROLE_NONE);
		if (pick == k)
			return direct_lost(v, k, voff, 1);
		return vol_queue(v, v->locs[pick].role, 0, v->locs[pick].member_off, buf, (size_t)take);
	}
	uint32_t live = 0;
	for (uint32_t i = 0; i < k; i++) {
		if (vol_is_down(v, v->locs[i].role))
			continue;
		live++;
		rk_err e = vol_queue(v, v->locs[i].role, 1, v->locs[i].member_off, buf, (size_t)take);
		if (e)
			return e;
	}
	return live ? RK_OK : direct_lost(v, k, voff, 0);
}

/* Reads or writes [off, off+len) (the caller checked the range) in batches
 * of pieces.  A read whose member failed redoes the batch from the
 * surviving copies; a write is fine while another copy of every byte
 * landed. */
static rk_err direct_io(rk_vol *v, uint8_t *buf, uint64_t len, uint64_t off, int is_write)
{
	uint64_t done = 0, piece_no = 0;
	while (done < len) {
		uint64_t bend = done, take;
		uint32_t k;
		rk_err e;
		while (bend < len && bend - done < DIRECT_BATCH) {
			if ((e = direct_piece(v, off + bend, len - bend, &take, &k)) ||
			    (e = queue_direct_piece(v, buf + bend, take, k, off + bend, piece_no, is_write)))
				return e;
			bend += take;
			piece_no++;
		}
		uint32_t before = vol_ndown(v);
		if ((e = vol_run(v)))
			return e;
		if (vol_ndown(v) != before || is_write) {
			if (!vol_readable(v))
				return vol_too_few(v);
			if (!is_write)
				continue;   /* redo the batch from the surviving copies */
			if (v->g.copies == 1 && vol_ndown(v))
				return rk_fail(RK_E_IO, "volume: a member failed during the write: %s", rk_errmsg());
		}
		done = bend;
	}
	return RK_OK;
}

rk_err vol_direct_read(rk_vol *v, uint8_t *buf, uint64_t len, uint64_t off)
{
	return direct_io(v, buf, len, off, 0);
}

/* ---- public I/O ---- */

static rk_err check_range(const rk_vol *v, size_t len, uint64_t off)
{
	uint64_t end;
	if (rk_add_ovf(off, len, &end) || end > v->g.volume_size)
		return rk_fail(RK_E_RANGE, "volume: %zu bytes at %llu pass the end of the volume (%llu bytes)", len,
		               (unsigned long long)off, (unsigned long long)v->g.volume_size);
	return RK_OK;
}

rk_err rk_vol_read(rk_vol *v, void *buf, size_t len, uint64_t off)
{
	rk_err e = check_range(v, len, off);
	if (e || len == 0)
		return e;
	pthread_mutex_lock(&v->op_lock);
	v->in_read = 1;
	v->nread_errors = 0;
	if (vol_parity_level(&v->g))
		e = vol_parity_io(v, buf, NULL, len, off);
	else
		e = vol_direct_read(v, buf, len, off);
	v->nqueued = 0;
	v->in_read = 0;
	e = vol_repair_reads(v, e);
	pthread_mutex_unlock(&v->op_lock);
	return e;
}

rk_err rk_vol_write(rk_vol *v, const void *buf, size_t len, uint64_t off)
{
	rk_err e = check_range(v, len, off);
	if (e || len == 0)
		return e;
	pthread_mutex_lock(&v->op_lock);
	if (vol_parity_level(&v->g))
		e = vol_parity_io(v, NULL, buf, len, off);
	else
		e = direct_io(v, (uint8_t *)(uintptr_t)buf, len, off, 1);
	v->nqueued = 0;
	pthread_mutex_unlock(&v->op_lock);
	return e;
}

rk_err rk_vol_write_flush(rk_vol *v, const void *buf, size_t len, uint64_t off)
{
	if (v->journal_fn) {   /* the journal's records go first: flushing those is the hook's */
		rk_err e = rk_vol_write(v, buf, len, off);
		return e ? e : rk_vol_flush(v);
	}
	rk_err e = check_range(v, len, off);
	if (e || len == 0)
		return e;
	pthread_mutex_lock(&v->op_lock);
	v->flush_writes = 1;
	if (vol_parity_level(&v->g))
		e = vol_parity_io(v, NULL, buf, len, off);
	else
		e = direct_io(v, (uint8_t *)(uintptr_t)buf, len, off, 1);
	v->flush_writes = 0;
	v->nqueued = 0;
	pthread_mutex_unlock(&v->op_lock);
	return e;
}

/* rk_dev_flush_set's callback: a member whose flush failed with RK_E_IO. */
static void flush_failed(void *ctx, uint32_t role, rk_err why)
{
	rk_vol *v = ctx;
	snprintf(v->io_msg[role], sizeof v->io_msg[0], "%s", rk_errmsg());
	vol_fail_role(v, role, why);
}

rk_err rk_vol_flush(rk_vol *v)
{
	pthread_mutex_lock(&v->op_lock);
	rk_err e = rk_dev_flush_set(v->devs, v->nroles, v->role_state, flush_failed, v);
	if (!e && !vol_readable(v))
		e = vol_too_few(v);
	pthread_mutex_unlock(&v->op_lock);
	return e;
}
