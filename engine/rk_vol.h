/* rk_vol.h: the stripe engine: the volume of an array over its members.
 *
 * Reads any byte range, reconstructing from parity or mirrors when a member
 * is missing or a read fails; writes any byte range as full-stripe writes
 * where it can and otherwise the cheaper of read-modify-write and
 * reconstruct-write, also degraded.  Member I/O is issued in parallel in
 * large requests; memory is bounded by a few stripes.
 *
 * Failures: a member read or write failing with RK_E_IO marks that role
 * failed (rk_vol_role_down, the fail callback) and the operation carries on
 * degraded; when that leaves too few members the call returns RK_E_TOOFEW.
 * Without redundancy (linear, RAID-0, one-member RAID-1) RK_E_IO is returned
 * and no member is dropped.  Any other member error (RK_E_FAULT,
 * RK_E_READONLY, ...) ends the call with that code.
 * Write order: per unit of stripes, all data blocks, then P/Q (vol_write.c
 * unit_commit is the one place a journal hooks in).  Calls on one volume
 * are serialised internally (thread-safe, not concurrent).  The engine's
 * files are mapped in vol_int.h.
 */
#ifndef RK_VOL_H
#define RK_VOL_H

#include <stddef.h>
#include <stdint.h>
#include "rk_dev.h"
#include "rk_err.h"
#include "rk_geom.h"

typedef struct rk_vol rk_vol;

/* Opens a volume: DEVS has g->nroles entries (NULL = missing role),
 * DATA_OFFSET the data area start on each member (bytes).  The devices stay
 * owned by the caller.  Fails with RK_E_TOOFEW when more roles are missing
 * than the level tolerates. */
rk_err rk_vol_open(rk_vol **out, const struct rk_geom *g, rk_dev *const *devs,
                   const uint64_t *data_offset);
/* Frees the volume (not the devices); NULL is allowed. */
void   rk_vol_close(rk_vol *v);

/* Volume bytes, and the geometry the volume was opened with. */
uint64_t rk_vol_size(const rk_vol *v);
const struct rk_geom *rk_vol_geom(const rk_vol *v);

/* Reads or writes LEN volume bytes at OFF (past the end is RK_E_RANGE;
 * LEN 0 does nothing), degraded where members are down (see above). */
rk_err rk_vol_read(rk_vol *v, void *buf, size_t len, uint64_t off);
/* Parity levels (RAID-4/5/6): passes ADV (RK_DEV_ADV_*) to exactly the
 * member ranges a read of [off, off+len) would read as the members are now
 * (parity only where a lost data block needs it), runs of chunks merged
 * per member, through DEVS at data offsets DOFF (nroles entries each; a
 * NULL entry is skipped; DEVS NULL: the volume's own); 0 for other levels
 * (the caller advises them itself), else 1.  For read-ahead of sequential
 * readers: cold members then fetch no parity the reads skip. */
int rk_vol_advise_read(rk_vol *v, uint64_t off, uint64_t len, unsigned adv, rk_dev *const *devs,
                       const uint64_t *doff);
/* SERIAL 1: member reads and writes (and a degraded read's
 * reconstruction) run on the calling thread only, the pool left idle; 0
 * (the default): in parallel on the pool.  For a caller that overlaps its
 * own work with the volume's on another thread (rk_array_stream): on 2
 * cores the pool's wake-ups then cost more than its parallelism gives
 * (issue 13, ARCHITECTURE.md "Sequential reads").  Not to be called while
 * another thread is inside the volume. */
void rk_vol_set_serial(rk_vol *v, int serial);
rk_err rk_vol_write(rk_vol *v, const void *buf, size_t len, uint64_t off);
/* Flushes every live member (rk_dev_flush_set): a member failing with
 * RK_E_IO is failed (RK_E_TOOFEW when too few remain); another error is
 * returned. */
rk_err rk_vol_flush(rk_vol *v);
/* rk_vol_write, each member it writes flushed right after its own writes,
 * on the thread that wrote them: one round of member I/O, where write then
 * rk_vol_flush takes two (and members each flush as soon as they can).
 * Members this call does not write are not flushed.  A failed flush is a
 * failed write (RK_E_IO fails the member).  With a journal hook: rk_vol_write,
 * then every member flushed. */
rk_err rk_vol_write_flush(rk_vol *v, const void *buf, size_t len, uint64_t off);

/* Called when a member fails during I/O (the engine stops using it and
 * carries on degraded where redundancy allows); the owner records it in
 * the superblocks.  Called from the thread that issued the I/O. */
typedef void (*rk_vol_fail_fn)(void *ctx, uint32_t role, rk_err why);
void rk_vol_on_fail(rk_vol *v, rk_vol_fail_fn fn, void *ctx);
/* Read errors (RK_E_IO on a member read during rk_vol_read) on a member
 * opened read-write are repaired, not failed: the bytes are reconstructed
 * from redundancy for the caller, then the member's failed range (widened
 * to whole chunks on striped levels) is rewritten in place with what the
 * redundancy says and read back once; FN (may be NULL) then gets the role
 * and the member data-area range rewritten.  Only when the rewrite or the
 * read-back fails is the member failed (the fail callback).  Members opened
 * read-only are failed as before (nothing is written).  Reads of writes,
 * resync and rebuild still fail the member.  Called from the thread that
 * called rk_vol_read. */
typedef void (*rk_vol_repair_fn)(void *ctx, uint32_t role, uint64_t off, uint64_t len);
void rk_vol_on_repair(rk_vol *v, rk_vol_repair_fn fn, void *ctx);
/* Bit mask style query: 1 if ROLE is missing or failed. */
int  rk_vol_role_down(const rk_vol *v, uint32_t role);

/* Write journal hook (parity levels): before the engine writes any member
 * in place during rk_vol_write, FN gets every write of a group of stripes
 * (role, data-area offset, bytes) and must make them durable elsewhere (a
 * redo record) before returning.  Each role's total in one call is at most
 * MAX_ROLE_BYTES (wide stripes are split by columns); the group's writes
 * then go in place.  FN may fail roles with rk_vol_fail_role (their writes
 * are dropped); any error it returns ends the write.  FN NULL or
 * MAX_ROLE_BYTES 0 turns the journal off.  Resync and rebuild do not go
 * through it. */
struct rk_vol_wseg {
	uint32_t role;
	uint64_t off;            /* member data-area offset */
	const uint8_t *buf;
	size_t len;
};
typedef rk_err (*rk_vol_journal_fn)(void *ctx, const struct rk_vol_wseg *segs, uint32_t nsegs);
void rk_vol_set_journal(rk_vol *v, rk_vol_journal_fn fn, void *ctx, uint64_t max_role_bytes);
/* Marks ROLE failed (MSG says why) as if its I/O had failed: the engine
 * stops using it and calls the fail callback.  For the journal hook. */
void rk_vol_fail_role(rk_vol *v, uint32_t role, rk_err why, const char *msg);

/* Makes redundancy consistent for stripes [first, first+count) (stripes as
 * rk_geom.h defines them): recomputes P/Q from the data (a missing data
 * block is first rebuilt from P, so its content is what parity said) or
 * copies mirrors from the first live copy to the others.  Linear and RAID-0
 * have nothing to do.  Past nstripes is RK_E_RANGE.  PROGRESS (may be NULL)
 * is called with stripes done. */
rk_err rk_vol_resync(rk_vol *v, uint64_t first, uint64_t count,
                     void (*progress)(void *ctx, uint64_t done), void *ctx);

/* Reconstructs member bytes [off, off+len) of ROLE's data area (offsets
 * relative to the data area) from the live members and writes them to DST
 * at DST_OFFSET + the same offsets: data blocks from P/Q, P and Q
 * regenerated from the (reconstructed) data, mirror copies read from a
 * live copy; member bytes past the last stripe (RAID-10 tails) are written
 * as zeros.  ROLE must be down in V (opened missing or failed): the engine
 * never reads it.  The range is widened to whole chunks on striped levels
 * (more is written, never less) and must lie within the member size
 * (RK_E_RANGE).  Work goes in large batches: every live member read in
 * parallel, then one write to DST per batch.  Nothing is written to the
 * members of V.  DST is not flushed (the caller flushes before recording a
 * checkpoint).  Linear and RAID-0 have nothing to rebuild from
 * (RK_E_NOTSUP); a live member failing meanwhile is handled as in reads
 * (RK_E_TOOFEW when too few remain); a DST error is returned as is.
 * PROGRESS (may be NULL) gets member bytes done since the widened start. */
rk_err rk_vol_rebuild(rk_vol *v, uint32_t role, rk_dev *dst, uint64_t dst_offset, uint64_t off,
                      uint64_t len, void (*progress)(void *ctx, uint64_t done), void *ctx);

#endif
