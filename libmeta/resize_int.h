/* resize_int.h: what the files of raid-resize's library share inside libmeta
 * (resize.c, resize_size.c, reshape.c, reshape_plan.c, reshape_revert.c,
 * reshape_io.c; not installed). */
#ifndef RK_RESIZE_INT_H
#define RK_RESIZE_INT_H

#include <stdint.h>
#include "rk_dev.h"
#include "rk_err.h"
#include "rk_geom.h"
#include "rk_pool.h"
#include "rk_resize.h"
#include "rk_sb.h"
#include "rk_vol.h"

/* The members as found: the freshest superblock is the template; devices
 * and own superblocks by role. */
struct resize_set {
	struct rk_sb *t;
	uint32_t span;            /* roles in use: max(nroles, new_nroles) */
	rk_dev **dev;             /* RK_SB_MAX_ROLES entries, by role */
	struct rk_sb **sb;        /* own superblock by role (NULL when not given) */
	uint64_t *doff;           /* current data offset by role (commit writes it) */
	struct rk_sb_wstate *ws;  /* by role: what this run wrote to its copy areas */
	uint64_t maxev;
	int mixed;                /* members disagree on events */
	/* Members a finished revert dropped from the array but had not wiped
	 * yet (see is_leftover); only loaded with KEEP_LEFT. */
	rk_dev **left;
	uint32_t nleft;
};

/* Derives G from the geometry fields and opens an engine over DEVS (NROLES
 * entries by role, NULL = missing) with every member's data area at DOFF
 * (reshapes keep data offsets uniform).  The devices stay the caller's. */
rk_err rk_resize_geom_vol(rk_vol **v, struct rk_geom *g, rk_dev *const *devs, int32_t level, uint32_t layout,
                          uint64_t chunk, uint32_t nroles, uint64_t ds, uint64_t doff);


/* resize.c */
/* Writes template T (events = maxev+1) to every given role of its span:
 * the highest roles first, so members added by a reshape carry it before
 * the old members point at them.  Per member: its UUID, role, data offset
 * (s->doff) and dev_size (its own, or the device size where the data
 * areas need more). */
rk_err resize_commit(struct resize_set *s, struct rk_sb *t);
/* resize_commit for a generation whose role table and span are those of
 * the one before (a checkpoint): when no member is behind, every member is
 * written at once on POOL (the order among members does not matter: each
 * may lag by one update, spec/reshape.md "Interruptions"); otherwise, or
 * without a pool, resize_commit. */
rk_err resize_commit_par(struct resize_set *s, struct rk_sb *t, rk_pool *pool);
/* Runs FN(CTX, ROLE, WORKER) for every given role of [0, SPAN), at once on
 * POOL (WORKER < rk_pool_workers) or in turn without one; the first failure
 * by role is returned with its message. */
typedef rk_err (*resize_role_fn)(void *ctx, uint32_t role, uint32_t worker);
rk_err resize_par_roles(struct resize_set *s, uint32_t span, rk_pool *pool, resize_role_fn fn, void *ctx);
/* Roles of the array's current geometry not active (after a degraded
 * continue or revert: for raid-recover --rebuild). */
uint32_t resize_count_missing(const struct resize_set *s);
/* Flushes every given member of roles [0, SPAN). */
rk_err resize_flush_all(struct resize_set *s, uint32_t span);
/* resize_flush_all with every member flushed at once on POOL: with buffered
 * writes a flush is the write-back, and members each have their own
 * bandwidth. */
rk_err resize_flush_par(struct resize_set *s, uint32_t span, rk_pool *pool);
/* resize_flush_par in the background: resize_flush_start hands the flushes
 * of roles [0, SPAN) to POOL and returns; resize_flush_wait waits for them
 * and returns the first failure by role (RK_OK when none was started).
 * POOL runs nothing else meanwhile.  RK_E_NOMEM from start only. */
struct resize_flush_bg;
rk_err resize_flush_bg_new(struct resize_flush_bg **out, struct resize_set *s, uint32_t span, rk_pool *pool);
void resize_flush_start(struct resize_flush_bg *f);
rk_err resize_flush_wait(struct resize_flush_bg *f);
/* Waits for a flush under way and frees F (NULL ok). */
void resize_flush_bg_free(struct resize_flush_bg *f);
/* Continue and revert start alike: the members loaded (mid-reshape some
 * may be missing, set_need_reshape), the journal of an unclean stop
 * replayed, missing roles recorded faulty.  On error S is freed. */
rk_err resize_load_resume(struct resize_set *s, rk_dev *const *devs, uint32_t n);
/* Engines over the old geometry and the reshape target (the set's devices). */
rk_err resize_open_new(rk_vol **v, struct rk_geom *g, struct resize_set *s);
rk_err resize_open_old(rk_vol **v, struct rk_geom *g, struct resize_set *s);
/* How an operation loads the members: resize_set_load with
 * RESIZE_NEED_ANY or RESIZE_NEED_ALL, or as continue and revert start
 * (resize_load_resume). */
enum resize_load { RESIZE_LOAD_ANY, RESIZE_LOAD_ALL, RESIZE_LOAD_RESUME };
/* One operation on the loaded set, with its own ARGS. */
typedef rk_err (*resize_step_fn)(struct resize_set *s, const void *args, struct rk_resize_result *res);
/* The one entry of the rk_resize_* operations: RES (a local one when NULL)
 * zeroed, the members loaded as LOAD says, STEP run on them, the set freed. */
rk_err resize_run(rk_dev *const *devs, uint32_t n, enum resize_load load, resize_step_fn step, const void *args,
                  struct rk_resize_result *res);
/* Frees what the set holds (not the devices). */
void resize_set_free(struct resize_set *s);
/* Which members resize_set_load requires. */
enum resize_need {
	RESIZE_NEED_ANY = 0,      /* no check */
	RESIZE_NEED_ALL = 1,      /* every role of the span given and active */
	RESIZE_NEED_RESHAPE = 2,  /* mid-reshape: as many as both geometries need (set_need_reshape) */
};
/* Reads every device's superblock and maps devices to roles (see the header
 * comment of rk_resize.h), checking the members NEED says.  KEEP_LEFT:
 * members a revert dropped (is_leftover) go to s->left instead of failing
 * the load. */
rk_err resize_set_load(struct resize_set *s, rk_dev *const *devs, uint32_t n, enum resize_need need, int keep_left);
/* Every role of the span must be given (and, as set_load checked, active). */
rk_err resize_set_need_all(const struct resize_set *s);
/* rk_probe_fs_extent's reader over an engine (CTX the rk_vol). */
rk_err resize_vol_read(void *ctx, void *buf, uint64_t len, uint64_t off);
/* Writes zeros over [off, off+len) of D. */
rk_err resize_zero_range(rk_dev *d, uint64_t off, uint64_t len);

/* reshape_plan.c */
/* New stripes that may be written from P (a multiple of the new stripe):
 * batch [P, Q) only when reshape_geo_hi(new, Q) <= SHIFT + reshape_geo_lo(old, P), i.e.
 * every new block of bytes < Q lands below every old block of bytes >= P,
 * which are all still to be copied.  0: not even one stripe fits. */
uint64_t reshape_batch_rows(const struct rk_geom *go, const struct rk_geom *gn, uint64_t shift,
                         uint64_t oldvol, uint64_t p, uint64_t rows_max);
/* Volume bytes per member row, as a fraction (num/den of a chunk's worth):
 * the new geometry packs the volume denser when its fraction is larger. */
int reshape_geo_denser(const struct rk_geom *gn, const struct rk_geom *go);
/* Where a geometry keeps volume bytes on its members (offsets relative to
 * its data area), for the ordering rule of spec/reshape.md:
 *   reshape_reshape_geo_lo(g, p)  the lowest member offset holding any block (data, parity
 *                 or copy) of volume bytes >= p;
 *   reshape_reshape_geo_hi(g, q)  the end of the member offsets holding all blocks of
 *                 volume bytes < q.
 * Striped levels: whole rows of chunks; RAID-1: the byte itself; RAID-10
 * near (far 1, no offset; other layouts are refused before a reshape):
 * chunk c has copies at near-grid indexes c*near .. c*near+near-1, index x
 * on row x / nroles.  Results saturate at UINT64_MAX instead of wrapping. */
uint64_t reshape_geo_lo(const struct rk_geom *g, uint64_t p);
uint64_t reshape_geo_hi(const struct rk_geom *g, uint64_t q);
/* Whether a reshape can run on G's level and layout. */
int reshape_geo_supported(const struct rk_geom *g);
/* The old rows a revert batch rewrites: [row_start(Q), row_end(P)) of the
 * old geometry, whole stripes (RAID-1: the bytes themselves), within the
 * old volume. */
uint64_t reshape_old_row_start(const struct rk_geom *g, uint64_t q);
uint64_t reshape_old_row_end(const struct rk_geom *g, uint64_t p, uint64_t vol);
/* An engine's failure callback: sets the int CTX points at. */
void reshape_on_member_fail(void *ctx, uint32_t role, rk_err why);
/* Reverting from P (reshape_pos, > 0): the smallest Q, a multiple of the new
 * stripe, Q < P, Q >= P - rows_max stripes, with
 * reshape_geo_hi(new, P) <= SHIFT + reshape_geo_lo(old, Q): the old rows rewritten for
 * [Q, P) start at or above reshape_geo_lo(old, Q), so they never touch the new
 * blocks of bytes < P, which are still read until the checkpoint moves.
 * The condition only gets easier as Q grows; the stripe holding P-1 always
 * meets it when the forward plan was valid (spec/reshape.md).  Returns P
 * when no Q fits. */
uint64_t reshape_revert_from(const struct rk_geom *go, const struct rk_geom *gn, uint64_t shift, uint64_t p,
                          uint64_t rows_max);

/* reshape_ahead.c: the read-ahead of a forward run */
/* How a forward run cuts the old volume: windows (one checkpoint each, the
 * ordering rule's batches of at most ROWS_MAX new stripes) from FROM on,
 * each read and written in steps of at most STEP bytes (whole new
 * stripes; the read-ahead's two buffers are STEP bytes each). */
struct reshape_steps {
	const struct rk_geom *go, *gn;
	uint64_t shift, oldvol, from, rows_max, step;
	uint32_t slots;          /* step buffers: 2 (read-ahead), 1 (a wide stripe) */
};
struct reshape_ahead;
/* The window from P in volume bytes (whole new stripes, may pass the old
 * volume's end); 0 when not one stripe fits. */
uint64_t reshape_window(const struct reshape_steps *pl, uint64_t p);
/* The step at OFF of the window [WIN, WIN+WIN_LEN). */
uint64_t reshape_step_len(const struct reshape_steps *pl, uint64_t win, uint64_t win_len, uint64_t off);
/* Starts the reader thread over VO for PLAN (both must outlive it).
 * ON_DURABLE (may be NULL) is called on the reader thread, before a step
 * is read, with the newest position given to reshape_ahead_durable since
 * its last call: work for the writer that can wait (the reader mostly
 * waits for the disks). */
rk_err reshape_ahead_start(struct reshape_ahead **a, const struct reshape_steps *plan, rk_vol *vo,
                           void (*on_durable)(void *ctx, uint64_t p), void *ctx);
/* The windows before volume byte P are durable (see reshape_ahead_start). */
void reshape_ahead_durable(struct reshape_ahead *a, uint64_t p);
/* Waits for the step [OFF, OFF+LEN) (the next one in plan order): *BUF
 * holds its bytes until reshape_ahead_done; its read error is returned. */
rk_err reshape_ahead_take(struct reshape_ahead *a, uint64_t off, uint64_t len, const uint8_t **buf);
void reshape_ahead_done(struct reshape_ahead *a);
/* Stops the reader (it finishes the read under way) and frees A (NULL ok). */
void reshape_ahead_stop(struct reshape_ahead *a);

/* reshape_tail.c: the new space zeroed while a forward run copies */
struct reshape_tail;
/* Member rows [FROM, END) of the new geometry (offsets from its data area,
 * DOFF on the members) are to be zeroed on every member of S; nothing is
 * written yet.  A pool of its own does the writes. */
rk_err reshape_tail_start(struct reshape_tail **z, struct resize_set *s, uint64_t doff, uint64_t from, uint64_t end);
/* Checkpoint P is durable, so rows below UPTO (shift + lo_old(P)) hold no
 * block still needed: zeroing up to there starts on every member at once
 * (after the batch before ends; its error is returned) and runs while the
 * caller goes on.  No flush: the caller's flushes write the zeros back. */
rk_err reshape_tail_free_to(struct reshape_tail *z, uint64_t upto);
/* Waits for the batch under way; its first error by role. */
rk_err reshape_tail_wait(struct reshape_tail *z);
/* Where the zeroed rows end (after reshape_tail_wait: all written). */
uint64_t reshape_tail_done(const struct reshape_tail *z);
/* Waits for a batch under way and frees Z (NULL ok). */
void reshape_tail_stop(struct reshape_tail *z);

/* reshape_revert.c */
/* Moves the volume bytes below reshape_pos back into the old geometry,
 * batch by batch down to 0 (spec/reshape.md, "Revert"), then finishes the
 * revert.  The reverting flag is recorded first, so an interruption
 * resumes the revert, not the forward run. */
rk_err reshape_run_revert(struct resize_set *s, const struct rk_resize_opts *o, struct rk_resize_result *res);
/* Brings every member to the freshest superblock (after an interrupted
 * update). */
rk_err resize_settle_mixed(struct resize_set *s);
/* Members an interrupted revert dropped but had not wiped (s->left). */
rk_err resize_wipe_left(struct resize_set *s);

#endif
