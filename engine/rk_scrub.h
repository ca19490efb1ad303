/* rk_scrub.h: verify (and optionally repair) the redundancy of an array.
 *
 * rk_scrub_run() reads every member's blocks of a batch of stripes in
 * parallel (reader threads, one per member up to RK_SCRUB_MAX_THREADS, in
 * large sequential requests of about RK_SCRUB_BATCH bytes per member; two
 * batches in flight so reading overlaps checking).  A batch is checked in
 * two passes: checker threads (one per CPU) tell clean stripes from the
 * others with read-only kernels that recompute and compare in one pass;
 * the caller's thread then gives every stripe that is not clean the full
 * analysis below, in stripe order (so regions come out in order):
 *   RAID-4/5   P = XOR of the data
 *   RAID-6     P and Q (GF(2^8), as md) -- a single bad block is located
 *              from the two syndromes as mdadm's raid6check does: per byte
 *              Pd = P'^P, Qd = Q'^Q; only Pd -> P, only Qd -> Q, both ->
 *              data slot z = log(Qd) - log(Pd) when every byte agrees;
 *              anything else is not located.  With one member missing the
 *              missing block is rebuilt from P (or P from the data) and Q
 *              (or P) checks the rest: mismatches are found, never located.
 *   RAID-1/10  every live copy of every chunk; with three or more live
 *              copies a strict majority names the copies at fault.
 * Mismatches are found per 512-byte sector and merged into regions (runs
 * of sectors of one stripe with the same verdict); each region goes to the
 * caller's callback.  Levels linear and 0 have nothing to check
 * (RK_E_NOTSUP).
 *
 * Read errors (RK_E_IO from a member) do not end the run: the blocks of
 * the failed request are read again, in 64 KiB pieces and then sector by
 * sector (the larger of 512 bytes and the member's sector size), to find
 * the bytes that cannot be read.  Those are treated as missing for their
 * part of the stripe: the rest is checked with the redundancy left, and
 * each unreadable range is reported (on_unreadable) with whether the
 * redundancy left can rebuild it.  Any other read error ends the run.
 *
 * Repair (opts.repair) rewrites member blocks directly (never through the
 * stripe engine, whose read-modify-write would trust the bad block):
 *   located   the blocks at fault get the proven content (RAID-6 data:
 *             D ^ Pd; P, Q: recomputed; mirror minority: majority copy);
 *   not located  redundancy is made consistent: P (and Q) recomputed from
 *             the data (a missing data block rebuilt from P first), or the
 *             first live copy copied over the others.  The data in the
 *             region's volume range may be wrong and the region says so.
 *   unreadable   rebuilt from the rest of the stripe, written back and
 *             read back once -- when redundancy left over confirms the
 *             rebuilt bytes (RAID-6 with only that block lost and Q agreeing
 *             with what P rebuilds; two readable copies that agree).  Where
 *             nothing is left over to confirm them (RAID-4/5, degraded
 *             RAID-6, one readable copy) only with opts.rewrite_unconfirmed:
 *             a stale parity block would have them rebuilt wrong.  Mismatches
 *             found beside unreadable bytes are reported, never repaired.
 * Plain scrub never writes: members may be opened read-only.
 *
 * Page cache: ranges of a member that rk_dev_peek() serves (file members
 * whose pages are all resident) are checked in place instead of being
 * copied; everything else is read with rk_dev_pread.  opts.no_map turns
 * this off.
 */
#ifndef RK_SCRUB_H
#define RK_SCRUB_H

#include <stddef.h>
#include <stdint.h>
#include "rk_dev.h"
#include "rk_err.h"
#include "rk_geom.h"

#define RK_SCRUB_BATCH        (4u << 20)   /* bytes read per member per batch (target) */
#define RK_SCRUB_MEM          (24u << 20)  /* member buffers of both batches together, about */
#define RK_SCRUB_SECTOR       512u         /* mismatch granularity */
#define RK_SCRUB_MAX_THREADS  16u         /* readers; also checkers */

enum rk_scrub_verdict {
	RK_SCRUB_LOCATED = 0,    /* roles[] are proven at fault */
	RK_SCRUB_UNLOCATED,      /* a mismatch; which block is wrong cannot be told */
};

enum rk_scrub_fix {
	RK_SCRUB_FIX_NONE = 0,   /* not repaired (plain scrub) */
	RK_SCRUB_FIX_PROVEN,     /* the blocks at fault were rewritten with proven content */
	RK_SCRUB_FIX_CONSISTENT, /* redundancy made consistent; the data may be wrong */
};

/* One block compared in a region: member byte MEMBER_OFF (absolute, the
 * data offset included) of ROLE, for rk_scrub_region.member_len bytes. */
struct rk_scrub_loc {
	uint32_t role;
	uint64_t member_off;
};

/* An inconsistent region.  Pointers are valid during the callback only. */
struct rk_scrub_region {
	uint64_t stripe;             /* as rk_geom.h defines stripes */
	/* Volume bytes in question: the located data block's bytes; for
	 * mirrors the chunk bytes; for parity levels otherwise the span from
	 * the region's column in the stripe's first data block to the same
	 * column in its last (every data block of the stripe shares the
	 * region's member range). */
	uint64_t offset, length;
	uint64_t member_len;         /* bytes at each loc */
	uint32_t nlocs;              /* every block compared (live members only) */
	const struct rk_scrub_loc *locs;
	uint32_t nfault;             /* roles at fault (0 when not located) */
	const uint32_t *fault;
	enum rk_scrub_verdict verdict;
	enum rk_scrub_fix fix;
	const char *why;             /* a sentence: what was found and why it is (not) located */
};

typedef void (*rk_scrub_region_fn)(void *ctx, const struct rk_scrub_region *r);

enum rk_scrub_ufix {
	RK_SCRUB_UFIX_NONE = 0,      /* not rewritten: plain scrub, not confirmed, or not recoverable */
	RK_SCRUB_UFIX_REWRITTEN,     /* rebuilt from redundancy, written and read back */
	RK_SCRUB_UFIX_FAILED,        /* the rewrite or the read back failed (RK_E_IO) */
};

/* Member bytes that could not be read (a run of sectors of one role in one
 * stripe with the same outcome).  Pointers are valid during the callback. */
struct rk_scrub_unreadable {
	uint64_t stripe;
	uint32_t role;
	uint64_t member_off;         /* absolute (the data offset included) */
	uint64_t member_len;
	/* Volume bytes concerned: for a data block (is_data) the bytes it
	 * holds; for P or Q the span of the stripe they protect, as for an
	 * unlocated mismatch; for mirrors the chunk bytes. */
	uint64_t offset, length;
	int is_data;
	int recoverable;             /* the stripe's other blocks can rebuild these bytes */
	int confirmed;               /* and redundancy left over agrees with the rebuilt bytes */
	int disputed;                /* redundancy left over disagrees there (a mismatch beside them) */
	enum rk_scrub_ufix fix;
	const char *why;             /* a sentence */
};
typedef void (*rk_scrub_unreadable_fn)(void *ctx, const struct rk_scrub_unreadable *u);
/* Called after each batch with the next stripe to check (the resume point)
 * and the stripes done since FIRST.  Return non-zero to stop (the run then
 * returns RK_OK with stats.stopped set and stats.next the resume point). */
typedef int (*rk_scrub_progress_fn)(void *ctx, uint64_t next, uint64_t done);
/* Called once, before the first member write of a repair (the owner marks
 * the array open for writing).  Non-zero RK_E_* aborts the run. */
typedef rk_err (*rk_scrub_begin_fn)(void *ctx);

struct rk_scrub_opts {
	int repair;
	rk_scrub_region_fn on_region;    /* may be NULL */
	rk_scrub_progress_fn on_progress;/* may be NULL */
	rk_scrub_begin_fn on_begin_write;/* may be NULL */
	void *ctx;
	uint32_t threads;                /* 0: one per member up to RK_SCRUB_MAX_THREADS */
	uint64_t batch;                  /* 0: RK_SCRUB_BATCH (bytes per member per batch) */
	int no_map;                      /* never read cached pages of regular files in place */
	uint32_t checkers;               /* 0: one per online CPU up to RK_SCRUB_MAX_THREADS (the caller's included) */
	rk_scrub_unreadable_fn on_unreadable; /* may be NULL */
	int rewrite_unconfirmed;         /* repair: also rewrite unreadable bytes nothing confirms */
};

struct rk_scrub_stats {
	uint64_t stripes;            /* stripes checked (some redundancy left) */
	uint64_t unchecked;          /* stripes with no redundancy left to check (degraded) */
	uint64_t bytes_read;         /* member bytes read */
	uint64_t mismatches;         /* regions reported */
	uint64_t located;            /* of which located */
	uint64_t repaired;           /* regions rewritten (proven or made consistent) */
	uint64_t consistent;         /* of which only made consistent: data may be wrong */
	uint64_t unreadable;         /* unreadable ranges reported */
	uint64_t unrecoverable;      /* of which too many blocks of their stripe were lost to rebuild them */
	uint64_t rewritten;          /* of which rebuilt and rewritten (repair) */
	uint64_t rewrite_failed;     /* of which the rewrite or its read back failed */
	uint64_t next;               /* resume point: next stripe to check */
	int stopped;                 /* the progress callback asked to stop */
};

/* Scrubs stripes [FIRST, LAST) of the array G over DEVS (g->nroles entries,
 * NULL = missing) whose data areas start at DATA_OFFSET[r].  Devices stay
 * the caller's; with opts->repair they must be writable and are flushed
 * before return.  STATS (required) is filled also on error.
 * Errors: RK_E_RANGE (FIRST > LAST or LAST > nstripes, a member smaller
 * than its data area), RK_E_NOTSUP (linear, RAID-0), RK_E_TOOFEW (no
 * redundancy left anywhere: every stripe would go unchecked), RK_E_NOMEM,
 * and a member's write error or a read error other than RK_E_IO naming it,
 * which ends the run (stats.next tells where).  Read errors (RK_E_IO) are
 * reported through on_unreadable and counted; the run goes on. */
rk_err rk_scrub_run(const struct rk_geom *g, rk_dev *const *devs, const uint64_t *data_offset,
                    uint64_t first, uint64_t last, const struct rk_scrub_opts *opts,
                    struct rk_scrub_stats *stats);

/* Stripes [*first, *last) covering volume bytes [OFF, OFF+LEN) (LEN 0: to
 * the end).  RK_E_RANGE when OFF or OFF+LEN is past the volume. */
rk_err rk_scrub_range(const struct rk_geom *g, uint64_t off, uint64_t len, uint64_t *first, uint64_t *last);

#endif
