/* rk_resize.h: changing an array's member size, member count or level,
 * offline, crash-safe and resumable (raid-resize).  Design: spec/reshape.md.
 *
 * Every function takes the members as opened devices in any order (the
 * caller opens them read-write; nothing else is needed).  The superblocks
 * are read from them, the freshest copy of the array is the template, and
 * each device is matched to its role by member UUID.  A member whose events
 * lag the freshest but which the freshest role table still lists as active
 * is accepted: that is what an interrupted superblock update leaves.
 *
 * Size change (rk_resize_size): no data moves.  Growing zeroes the new rows
 * of every member first (so the new stripes are consistent), flushes, then
 * publishes the new data_size/volume_size with rk_sb_write on every member,
 * events+1.  Shrinking writes superblocks only, and refuses to cut off
 * bytes the caller did not agree to lose (opts.volume_size, or the extent of
 * a file system found at the start of the volume).
 *
 * Reshape (rk_resize_reshape): the new geometry is written at a data offset
 * D bytes lower than the old one, stripe by stripe from the volume start, so
 * a batch's new blocks always land on member bytes whose old content has
 * been copied already (the rule hi_new(q) <= D + lo_old(p) of
 * spec/reshape.md); after each flushed batch reshape_pos is checkpointed in
 * every superblock.  Any interruption leaves the superblocks describing a
 * valid state; rk_resize_continue() finishes from the checkpoint.
 *
 * Revert (rk_resize_revert): the same rule run backwards: the reverting
 * flag goes into every superblock first, then whole old rows are rewritten
 * from the checkpoint down to 0 (each batch flushed before the checkpoint
 * falls), then the old geometry is published and the added members wiped.
 */
#ifndef RK_RESIZE_H
#define RK_RESIZE_H

#include <stdint.h>
#include "rk_dev.h"
#include "rk_err.h"
#include "rk_probe.h"
#include "rk_sb.h"

#define RK_RESIZE_BATCH_MAX   (64ull << 20)   /* volume bytes per reshape batch, at most */
#define RK_RESIZE_LAYOUT_KEEP 0xFFFFFFFFu     /* keep the layout (or the new level's default) */

struct rk_resize_opts {
	/* Shrink: volume bytes the user keeps (agrees to lose what lies
	 * beyond); 0 = not stated (then a recognised file system must fit). */
	uint64_t volume_size;
	/* Reshape target: level (set_level), layout, chunk (0 = keep; 64 KiB
	 * when the old level has none). */
	int      set_level;
	int32_t  level;
	uint32_t layout;              /* RK_RESIZE_LAYOUT_KEEP or md's number */
	uint64_t chunk;
	/* Largest batch in volume bytes (0: RK_RESIZE_BATCH_MAX); tests use
	 * small ones to get many checkpoints. */
	uint64_t batch_max;
	/* Progress (may be NULL): DONE of TOTAL volume bytes restriped. */
	void   (*progress)(void *ctx, uint64_t done, uint64_t total);
	void    *progress_ctx;
	/* Stop flag (may be NULL): checked between batches; when it becomes
	 * non-zero the reshape stops at the last checkpoint (RK_E_FAULT,
	 * "interrupted"); --continue resumes. */
	volatile int *stop;
};

struct rk_resize_result {
	uint64_t old_volume, new_volume;
	uint64_t events;              /* the final event counter */
	uint64_t moved;               /* volume bytes restriped by this call */
	uint64_t checkpoints;         /* superblock checkpoints written */
	uint64_t keep;                /* bytes the check kept (file system extent or stated) */
	uint32_t missing;             /* roles of the final geometry left faulty (a degraded continue/revert) */
	char     found[160];          /* what was recognised at the volume start ("" none) */
	char     did[160];            /* what was done, in words */
};

/* Changes the data bytes used on every member to DATA_SIZE (rounded down to
 * the chunk and 4096; 0 = as much as every member holds).  Levels 0, 1, 4,
 * 5, 6, RAID-10 near layouts and one-member linear arrays (their mapping
 * does not depend on data_size); RK_E_NOTSUP otherwise.  Every role must be
 * present and active; no reshape in progress (RK_E_CONFLICT: use continue).
 * Growing past a member's capacity is RK_E_RANGE naming it; shrinking below
 * what must be kept is RK_E_EXISTS with the reason.  RES may be NULL. */
rk_err rk_resize_size(rk_dev *const *devs, uint32_t n, uint64_t data_size,
                      const struct rk_resize_opts *o, struct rk_resize_result *res);

/* Restripes onto ADD (NADD new members, may be 0 with a level or chunk
 * change) and/or a new level, and runs the reshape to the end.  Old levels
 * 0, 4, 5, 6 and 1; new levels 0 (from 0), 4, 5, 6; RAID-10 near layouts
 * (far 1, not offset) stay RAID-10 near (more members, another chunk or
 * near count); RAID-10 far/offset layouts and any other change to or from
 * level 10 are RK_E_NOTSUP naming the layout or levels.  RAID-1 with NADD
 * and no level change gains mirrors by a copy.  The new volume must not be
 * smaller than the old one.  The whole plan is checked before anything is
 * written: it needs room below the old data offset for the first batch
 * (mkraid leaves ~960 KiB); RK_E_NOTSUP otherwise.  The new members are
 * overwritten (the caller checks they hold nothing).  A reshape in
 * progress is RK_E_CONFLICT (one being reverted says so: finish the revert
 * first).  Interrupted (error, stop flag): the array is left mid-reshape at
 * its last checkpoint; rk_resize_continue finishes it. */
rk_err rk_resize_reshape(rk_dev *const *devs, uint32_t n, rk_dev *const *add, uint32_t nadd,
                         const struct rk_resize_opts *o, struct rk_resize_result *res);

/* Finishes what an interrupted call left: superblocks that disagree after
 * an interrupted update (the freshest is written to all, first), then a
 * reshape in progress from the freshest checkpoint: forward, or, when it
 * carries the reverting flag, the revert (res->did says "reverted");
 * members an interrupted revert dropped but had not wiped are wiped.  DEVS
 * must include every member, except that mid-reshape roles may be missing
 * as long as both geometries tolerate it (RK_E_TOOFEW otherwise): they are
 * recorded FAULTY first and the reshape runs degraded (the same holds for
 * rk_resize_revert); a member of such a role given back is RK_E_STALE.
 * An array stopped unclean
 * mid-reshape has its journal replayed first.  Nothing to do is RK_OK with
 * res->did saying so. */
rk_err rk_resize_continue(rk_dev *const *devs, uint32_t n, const struct rk_resize_opts *o,
                          struct rk_resize_result *res);

/* Returns an array mid-reshape to its old geometry.  With data moved
 * (reshape_pos > 0) the reverting flag is written to every superblock
 * first; then, batch by batch from the checkpoint P down to 0, whole old
 * rows covering [Q, P) are rewritten (bytes below P read from the new
 * geometry, the rest from the old; parity computed), flushed, and
 * reshape_pos = Q checkpointed; each batch may only run when the rows it
 * writes lie above every new block of bytes below P.  At 0: the old members
 * get superblocks without the reshape block (old nroles; the journal its
 * size from before the reshape when the reshape had shrunk it), then the
 * added members' superblock areas are wiped.  Interrupted (error, stop
 * flag): left mid-revert at its last checkpoint, readable; rk_resize_continue
 * or rk_resize_revert finishes it.  Also completes a revert interrupted
 * after its last superblock update.  No reshape in progress: RK_E_INVAL.
 * o->batch_max, progress (volume bytes moved back of the checkpoint's) and
 * stop as for a reshape; O may be NULL. */
rk_err rk_resize_revert(rk_dev *const *devs, uint32_t n, const struct rk_resize_opts *o,
                        struct rk_resize_result *res);

/* Reads LEN volume bytes at OFF of the array on DEVS, also in the middle of
 * a reshape (bytes below reshape_pos from the new geometry, the rest from
 * the old); read-only.  *SIZE (may be NULL) gets the volume size. */
rk_err rk_resize_read(rk_dev *const *devs, uint32_t n, void *buf, uint64_t len, uint64_t off,
                      uint64_t *size);

/* The dual-geometry reader behind rk_resize_read, for callers that hold
 * the members already (rk_array_open of an array mid-reshape).  T is the
 * freshest superblock; DEVS has rk_resize_span(T) entries by role (NULL =
 * missing; each geometry reads degraded where its level allows).  Volume
 * bytes below T's reshape_pos are read through the new geometry, the rest
 * through the old; without a reshape in progress, the old geometry alone.
 * The devices stay the caller's.  ON_FAIL (may be NULL) is each engine's
 * member-failure callback (roles are the same in both geometries). */
typedef struct rk_resize_reader rk_resize_reader;
/* Roles a superblock's array spans: max(nroles, the reshape target's). */
uint32_t rk_resize_span(const struct rk_sb *t);
rk_err rk_resize_reader_open(rk_resize_reader **out, const struct rk_sb *t, rk_dev *const *devs,
                             void (*on_fail)(void *ctx, uint32_t role, rk_err why), void *ctx);
/* Reads LEN volume bytes at OFF (RK_E_RANGE past volume_size). */
rk_err rk_resize_reader_read(rk_resize_reader *r, void *buf, uint64_t len, uint64_t off);
/* Volume bytes served by the new geometry (the checkpoint). */
uint64_t rk_resize_reader_pos(const rk_resize_reader *r);
void rk_resize_reader_close(rk_resize_reader *r);
/* The reader's engines, for callers that also write mid-reshape
 * (rk_array): NEW_GEOM 1 the new geometry's (volume bytes below the
 * checkpoint; NULL when it is 0), 0 the old one's (the rest; NULL when
 * everything moved).  Owned by the reader.  Writes through the old one
 * must stay at or above the checkpoint and through the new one below it:
 * then each touches only rows that are whole in its geometry (the old row
 * holding the checkpoint is intact, spec/reshape.md). */
struct rk_vol;
struct rk_vol *rk_resize_reader_vol(const rk_resize_reader *r, int new_geom);

#endif
