/* rk_array.h: an assembled array: the members discovery chose, opened, as a
 * volume, with the superblock bookkeeping that writing needs.
 *
 * Read-only (the default) opens every active member O_RDONLY and never
 * writes a byte.  Read-write (RK_ARRAY_RDWR) opens them exclusively and, on
 * the first write, runs the write protocol of spec/format.md:
 *
 *   1. dirty:  events+1, array_state ACTIVE, every absent or failed role
 *              marked FAULTY in the role table, superblocks written to every
 *              live member (each rk_sb_write: backup, flush, primary, flush);
 *   2. data:   volume writes through the stripe engine (also degraded);
 *   3. clean:  (rk_array_close) data flushed, then events+1, array_state
 *              CLEAN, superblocks written again.
 *
 * Writes on redundant levels go through the write journal (below).
 * A member that fails during I/O is recorded FAULTY (events+1) on the others
 * as soon as the volume call that met the failure returns.  A member left
 * out at assembly therefore has fewer events than the rest and is reported
 * stale if it comes back.  All superblock updates go through one function
 * (array.c: array_commit) so the crash-safety work builds on one place.
 */
#ifndef RK_ARRAY_H
#define RK_ARRAY_H

#include <stddef.h>
#include <stdint.h>
#include "rk_dev.h"
#include "rk_discover.h"
#include "rk_err.h"
#include "rk_geom.h"
#include "rk_vol.h"

typedef struct rk_array rk_array;

#define RK_ARRAY_RDONLY RK_DEV_RDONLY
#define RK_ARRAY_RDWR   RK_DEV_RDWR

/* Opens the array INFO describes (a discovery result; copied, so INFO may be
 * freed afterwards).  Only roles with cls ACTIVE and a path are opened; the
 * rest are missing.  Each member's superblock is read again and must still
 * match what discovery saw (array and member UUID, events), or RK_E_CONFLICT.
 * Errors: RK_E_TOOFEW (more roles absent than the level tolerates, message
 * lists them), RK_E_CONFLICT (state conflict), RK_E_NOTSUP (a reshape this
 * build does not read), RK_E_CORRUPT (geometry inconsistent),
 * RK_E_OPEN/RK_E_BUSY.  FLAGS: RK_ARRAY_RDONLY or RK_ARRAY_RDWR.
 *
 * Mid-reshape (the reshape incompat feature, spec/reshape.md) volume bytes
 * below the checkpoint (reshape_pos) are served through the new geometry
 * and the rest through the old (the engines of rk_resize_reader_open), for
 * reads and, opened read-write, writes: rk_array_write splits at the
 * checkpoint and runs the same write protocol, journal (its mid-reshape
 * records, spec/journal.md "Mid-reshape"), failure recording and read-error
 * repair as on any array.  The checkpoint never moves while the array is
 * open (raid-resize refuses open or unclean arrays).  rk_array_vol is NULL
 * then: there is no single engine.  A read-write open whose checkpoint is
 * not on a new stripe boundary (and not the volume end) is RK_E_CORRUPT. */
rk_err rk_array_open(rk_array **out, const struct rk_array_info *info, unsigned flags);

/* rk_array_open, also opening members a reshape in progress added: they
 * serve roles past the old nroles, so discovery lists them apart (as
 * spares, in rk_discovery.left).  Each of EXTRA (NEXTRA entries, may be
 * NULL) is opened when its superblock is at the array's events and the
 * freshest role table lists its member UUID as active at its role past
 * nroles; the others are ignored. */
rk_err rk_array_open_members(rk_array **out, const struct rk_array_info *info, const struct rk_member *extra,
                             uint32_t nextra, unsigned flags);

/* rk_array_open_members, handing each member device to WRAP (may be NULL)
 * once opened, before its superblock is read again: the caller's way to see
 * every read of a member (rk_dev_hash for --hash).  WRAP's error fails the
 * open.  The wrappers are closed with the array. */
rk_err rk_array_open_wrapped(rk_array **out, const struct rk_array_info *info, const struct rk_member *extra,
                             uint32_t nextra, unsigned flags, rk_dev_wrap_fn wrap, void *wrap_ctx);

/* Opens an array over devices the caller already opened (tests, other
 * backends): DEVS[r] serves role r (NULL = missing), SBS[r] its superblock
 * (NULL for missing roles), TEMPLATE the freshest superblock.  The devices
 * stay owned by the caller and must outlive the array; RDWR requires them
 * writable.  No re-read check is made.  Mid-reshape DEVS and SBS have
 * max(nroles, the reshape target's nroles) entries (rk_resize_span). */
rk_err rk_array_open_devs(rk_array **out, const struct rk_sb *tmpl, rk_dev *const *devs,
                          const struct rk_sb *const *sbs, unsigned flags);

/* The volume (owned by the array; NULL mid-reshape: use rk_array_read and
 * rk_array_write, which split at the checkpoint).  Writes made directly
 * through it bypass step 1 above: call rk_array_begin_write() first, or use
 * rk_array_write(). */
rk_vol *rk_array_vol(rk_array *a);

/* Bytes the array presents (the superblock's volume_size). */
uint64_t rk_array_size(const rk_array *a);
/* The event counter as last written (or read, before any write). */
uint64_t rk_array_events(const rk_array *a);
/* 1 when ROLE is missing or has failed since open. */
int rk_array_role_down(const rk_array *a, uint32_t role);
/* Roles that failed during I/O since open (not counting those missing at
 * open), and for one role the sentence saying why ("" when it did not). */
uint32_t rk_array_nfailed(const rk_array *a);
/* Read errors repaired in place from redundancy so far (members opened
 * read-write; rk_vol_on_repair), and the member bytes rewritten (BYTES may
 * be NULL). */
uint64_t rk_array_nrepaired(const rk_array *a, uint64_t *bytes);
const char *rk_array_fail_reason(const rk_array *a, uint32_t role);
/* 1 when the superblock said ACTIVE at open (unclean shutdown: parity may
 * lag the data, so reconstructed reads of an unclean degraded array may be
 * wrong where a write was in flight). */
int rk_array_was_unclean(const rk_array *a);
/* 1 when the array is in the middle of a reshape (served through the
 * dual-geometry reader's engines); *POS (may be NULL) gets the volume bytes
 * already in the new geometry (fixed while open). */
int rk_array_reshaping(const rk_array *a, uint64_t *pos);

/* Reads LEN bytes at volume offset OFF (bounds-checked against
 * rk_array_size; reconstructs through the engine).  A member failing here is
 * recorded (in the superblocks when open read-write). */
rk_err rk_array_read(rk_array *a, void *buf, size_t len, uint64_t off);

/* Writes LEN bytes at OFF, running step 1 first when not done yet.
 * RK_E_READONLY on an array opened read-only. */
rk_err rk_array_write(rk_array *a, const void *buf, size_t len, uint64_t off);

/* Step 1 alone (idempotent): marks the array open for writing on every
 * live member before any data is written. */
rk_err rk_array_begin_write(rk_array *a);

/* Flushes data to every live member (durable). */
rk_err rk_array_flush(rk_array *a);

/* Step 3 when the array was written, then closes the members and frees.
 * Returns the first error met (the array is freed regardless); NULL is
 * allowed. */
rk_err rk_array_close(rk_array *a);

/* ---- write journal (spec/journal.md) ----
 * On redundant levels (1, 4, 5, 6, 10) every write goes through a journal
 * in the metadata area of each member: parity levels write a redo record of
 * the new contents of every chunk before writing them in place, mirrors a
 * write-intent record of the range.  A write is durable once
 * rk_array_flush() or rk_array_close() returns.  Opening an array that was
 * stopped unclean replays the last record (read-only opens replay into
 * memory and write nothing; read-write opens write it and then mark the
 * array clean).  What the open did: */
enum rk_array_replay {
	RK_ARRAY_REPLAY_NONE = 0,
	RK_ARRAY_REPLAY_DATA = 1,     /* a redo record was written back */
	RK_ARRAY_REPLAY_RESYNC = 2,   /* redundancy (parity or mirrors) resynced over a write-intent range */
};
/* What the open replayed; *MSG (may be NULL) gets a sentence ("" when the
 * array was clean). */
enum rk_array_replay rk_array_replayed(const rk_array *a, const char **msg);
/* 1 once writing has started with the journal on. */
int rk_array_journaled(const rk_array *a);
/* Tests: rk_test_hooks_set_fault (rk_test_hooks.h) wraps the members of
 * read-write rk_array_open()s in the fault-injecting backend (rk_dev.h), so
 * end-to-end cases exercise the real tools under faults; with power-cut the
 * post-crash image is applied when the array is freed. */
/* ON 0 turns the journal off for the writes of this open (benchmarks
 * measuring its cost; call before the first write).  Never for real use:
 * it reopens the write hole. */
void rk_array_set_journal(rk_array *a, int on);

#endif
