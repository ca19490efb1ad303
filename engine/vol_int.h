/* vol_int.h: what the files of the stripe engine share (not installed).
 *
 *   vol.c          open/close, member state, the public read/write/flush,
 *                  the direct path of linear, RAID-0, RAID-1 and RAID-10
 *   vol_io.c       the member I/O queue: merged per role, run in parallel
 *   vol_unit.c     parity levels: stripe units, reconstruction, parity
 *   vol_read.c     parity levels: the read path (healthy batches, degraded units)
 *   vol_write.c    parity levels: write modes and the journal hook
 *   vol_rebuild.c  resync, rebuild onto a new device
 *   vol_repair.c   repair of read errors met by rk_vol_read
 *   vol_rebuild_fast.c  parity rebuild straight from the page cache
 */
#ifndef RK_VOL_INT_H
#define RK_VOL_INT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include "rk_dev.h"
#include "rk_err.h"
#include "rk_geom.h"
#include "rk_parity.h"
#include "rk_pool.h"
#include "rk_vol.h"

#define VOL_MAX_UNIT_STRIPES 64u   /* stripes in one unit at the most */
#define VOL_MAX_THREADS 8u         /* members run in parallel, the caller included */

/* State of a role; everything but ROLE_UP counts as down. */
enum role_state {
	ROLE_UP = 0,
	ROLE_MISSING,       /* opened without a device */
	ROLE_FAILED,        /* its I/O failed: out for good */
	ROLE_READ_ERROR,    /* down for the rest of one rk_vol_read, to be repaired */
};

/* One member request of the I/O queue. */
struct member_io {
	uint32_t role;
	uint32_t is_write;
	uint64_t off;        /* member data-area offset */
	uint8_t *buf;
	size_t   len;
	rk_err   err;
	uint32_t untried;    /* not issued: an earlier request of its group failed */
};

/* How a stripe of a unit is written (parity levels). */
enum write_mode {
	WRITE_NONE = 0,      /* nothing of the stripe is written */
	WRITE_FULL,          /* every data block over the columns: parity from the new data */
	WRITE_RMW,           /* read-modify-write: old data and parity read, parity updated */
	WRITE_RCW,           /* reconstruct-write: the untouched data read, parity regenerated */
	WRITE_DEGRADED,      /* a role is down: every live role read, parity regenerated */
};

/* A stripe of the unit being processed (parity levels). */
struct unit_stripe {
	uint64_t stripe;
	uint32_t p_role, q_role;
	uint32_t from, to;    /* column range the operation touches, relative to the slice */
	int lost;             /* needs reconstruction / degraded handling */
	enum write_mode mode;
};

/* Stripes [first, first+count), columns [col0, col1) of each chunk. */
struct stripe_unit {
	uint64_t first;
	uint32_t count;
	uint64_t col0, col1;
};

struct read_error {
	uint32_t role;
	uint64_t off, len;
};

struct rk_vol {
	struct rk_geom g;
	uint32_t nroles;
	rk_dev **devs;               /* nroles + 1: the last is a rebuild's target */
	uint64_t *data_offset;       /* nroles + 1 */
	uint8_t *role_state;         /* enum role_state per role */
	char (*io_msg)[160];         /* last I/O error per role (set by workers) */
	pthread_mutex_t state_lock;  /* role_state[], callbacks */
	pthread_mutex_t op_lock;     /* one operation at a time: shared buffers */
	rk_vol_fail_fn fail_fn;
	void *fail_ctx;
	/* read-error repair (rk_vol_read on members opened read-write) */
	rk_vol_repair_fn repair_fn;
	void *repair_ctx;
	int in_read;                 /* inside rk_vol_read: read errors are repaired */
	int flush_writes;            /* inside rk_vol_write_flush: each role flushed after its writes */
	struct read_error *read_errors;
	uint32_t nread_errors, cap_read_errors;
	const struct rk_parity_algo *pa;
	rk_pool *pool;               /* NULL: member I/O runs on the caller */
	int serial;                  /* rk_vol_set_serial: the pool left idle */
	/* the member I/O queue */
	struct member_io *queue;
	uint32_t nqueued, cap_queue;
	uint32_t *group_start;       /* group g (one role) = queue[group_start[g] .. group_start[g+1]) */
	/* parity-level unit state */
	uint32_t unit_stripes;       /* stripes per unit */
	uint32_t read_stripes;       /* stripes per degraded read unit of whole stripes (>= unit_stripes;
	                                the unit arrays below hold this many) */
	int zero_copy;               /* healthy data moves straight between members and the caller */
	uint64_t unit_cols;          /* columns per slice */
	uint8_t **role_buf;          /* per role: unit_stripes * unit_cols bytes */
	uint8_t *role_buf_mem;
	uint8_t *zero, *scratch;     /* unit_cols bytes each */
	uint32_t *vol_role, *slot;   /* per unit stripe: ndata / nroles entries */
	uint32_t *block_from, *block_to;   /* per unit stripe and data block: touched columns */
	struct unit_stripe *stripes;
	void **ptrs;                 /* q_slots + 2 (or nroles + 2) */
	uint8_t **bptr;              /* nroles: each role's bytes of the stripe being rebuilt */
	uint8_t **job_bptr;          /* VOL_MAX_THREADS * nroles: the same per pool worker (vol_read.c) */
	void **job_ptrs;             /* VOL_MAX_THREADS * nptrs: reconstruction scratch per pool worker */
	uint32_t nptrs;              /* entries of ptrs */
	struct rk_loc *locs;         /* g.copies entries */
	/* write journal (rk_vol_set_journal): parity-level unit commits */
	rk_vol_journal_fn journal_fn;
	void *journal_ctx;
	uint64_t journal_max;        /* bytes one record may hold per role */
	struct rk_vol_wseg *journal_segs;
	uint32_t cap_journal_segs;
};

/* ---- vol.c: member state ---- */
/* Whether ROLE is down (only the operation thread changes the state). */
int vol_is_down(const rk_vol *v, uint32_t role);
uint32_t vol_ndown(const rk_vol *v);
/* Marks ROLE failed and tells the owner (once). */
void vol_fail_role(rk_vol *v, uint32_t role, rk_err why);
/* Enough members to serve every byte? */
int vol_readable(const rk_vol *v);
/* RK_E_TOOFEW with a sentence counting the members down. */
rk_err vol_too_few(const rk_vol *v);
/* A read of ROLE failed with RK_E_IO inside rk_vol_read: ROLE is down for
 * the rest of the read and the range is remembered for vol_repair_reads.
 * 0 when it cannot be remembered. */
int vol_note_read_error(rk_vol *v, uint32_t role, uint64_t off, size_t len);
int vol_parity_level(const struct rk_geom *g);
/* The first live copy among v->locs[0..K) other than role EXCEPT (RAID-1
 * starts at copy PIECE_NO % K so that a large transfer spreads over the
 * copies); K when there is none. */
uint32_t vol_live_copy(const rk_vol *v, uint32_t k, uint64_t piece_no, uint32_t except);
/* Reads [off, off+len) of a linear, RAID-0, 1 or 10 volume (range checked). */
rk_err vol_direct_read(rk_vol *v, uint8_t *buf, uint64_t len, uint64_t off);

/* ---- vol_io.c: the member I/O queue ---- */
/* Queues a member request (LEN 0 is ignored). */
rk_err vol_queue(rk_vol *v, uint32_t role, int is_write, uint64_t off, void *buf, size_t len);
/* Runs the queued requests (one direction per call), members in parallel,
 * then empties the queue.  Members whose I/O failed with RK_E_IO are failed
 * (or noted for repair inside rk_vol_read); any other error is returned. */
rk_err vol_run(rk_vol *v);
/* Queues a step with QUEUE_STEP and runs it, again (the step queued anew,
 * ATTEMPT counting from 0) while a member fails during the run; RK_E_TOOFEW
 * when too few members are left or after more attempts than roles. */
rk_err vol_run_retrying(rk_vol *v, rk_err (*queue_step)(rk_vol *v, void *ctx, uint32_t attempt), void *ctx);
/* Starts the pool for V (one thread per member up to a cap). */
void vol_pool_start(rk_vol *v);

/* ---- vol_unit.c: parity-level units ---- */
/* The role buffer of ROLE for unit stripe U. */
static inline uint8_t *vol_role_buf(const rk_vol *v, uint32_t role, uint32_t u)
{
	return v->role_buf[role] + (size_t)u * v->unit_cols;
}
/* Member offset of column COL of stripe S in UNIT. */
static inline uint64_t vol_unit_member_off(const rk_vol *v, const struct stripe_unit *unit, uint64_t s, uint64_t col)
{
	return s * v->g.chunk + unit->col0 + col;
}
/* Sets up the unit of stripes from FIRST (at most unit_stripes, before
 * LAST) for slice COL0. */
void vol_unit_slice(const rk_vol *v, struct stripe_unit *unit, uint64_t first, uint64_t last, uint64_t col0);
/* Fills the stripe maps of the unit and the touched column range of each
 * data block for the volume range [off, end). */
void vol_unit_setup(rk_vol *v, const struct stripe_unit *unit, uint64_t off, uint64_t end);
/* Queues reads of every live role of unit stripe U over its columns. */
rk_err vol_queue_all_live(rk_vol *v, const struct stripe_unit *unit, uint32_t u);
/* Sets UNIT up over its whole stripes and reads every live role of it,
 * again when a member fails meanwhile (vol_run_retrying); EXTRA (may be
 * NULL) queues more requests to run with the first attempt's reads. */
rk_err vol_unit_read_all(rk_vol *v, const struct stripe_unit *unit, rk_err (*extra)(rk_vol *v, void *ctx),
                         void *extra_ctx);
/* Rebuilds in the role buffers every down data block of unit stripe U from
 * the live roles (already read there).  RK_E_TOOFEW when the parity cannot
 * cover the loss. */
rk_err vol_reconstruct(rk_vol *v, uint32_t u);
/* The same with each role's bytes of the stripe (from its first touched
 * column) at BP[role] (nroles entries), which need not be role buffers. */
rk_err vol_reconstruct_at(rk_vol *v, uint32_t u, uint8_t *const *bp);
/* The same over LEN bytes from BP (a piece of the stripe's columns) with
 * PTRS as scratch (q_slots + 2 or nroles + 2 entries), safe on a pool
 * thread: 0, or -1 when the parity cannot cover the loss. */
int vol_reconstruct_with(const rk_vol *v, uint32_t u, uint8_t *const *bp, void **ptrs, size_t len);
/* Recomputes P (and Q) of unit stripe U from the data in the role buffers,
 * or from SRC (the caller's data of the stripe's slice) when not NULL. */
void vol_gen_parity(rk_vol *v, uint32_t u, const uint8_t *src);
/* Queues the writes of P and Q (live ones) of unit stripe U within columns
 * [x, y) of the slice. */
rk_err vol_queue_stripe_parity(rk_vol *v, const struct stripe_unit *unit, uint32_t u, uint64_t x, uint64_t y);
/* The same for every stripe of the unit with a write mode. */
rk_err vol_queue_parity_writes(rk_vol *v, const struct stripe_unit *unit);
/* Reads or (BUF NULL) writes [off, off+len) of a parity volume. */
rk_err vol_parity_io(rk_vol *v, uint8_t *buf, const uint8_t *cbuf, uint64_t len, uint64_t off);

/* ---- vol_read.c ---- */
/* Reads [off, off+len) of a parity volume into BUF (range checked). */
rk_err vol_parity_read(rk_vol *v, uint8_t *buf, uint64_t len, uint64_t off);

/* ---- vol_write.c ---- */
/* Writes the part of [off, end) in UNIT from BUF (volume byte OFF0 at 0). */
rk_err vol_unit_write(rk_vol *v, const struct stripe_unit *unit, const uint8_t *buf, uint64_t off0, uint64_t off,
                      uint64_t end);

/* ---- vol_rebuild.c ---- */
/* Rebuilds member bytes [a, b) (whole chunks on striped levels) of the
 * down ROLE onto DST at DST_OFFSET + the same offsets, through the target
 * slot; parity levels try the page cache first when FROM_CACHE.  The op
 * lock is held. */
rk_err vol_rebuild_onto(rk_vol *v, uint32_t role, rk_dev *dst, uint64_t dst_offset, uint64_t a, uint64_t b,
                        int from_cache, void (*progress)(void *ctx, uint64_t done), void *ctx);
/* Rebuilds stripes [s0, s1) of ROLE onto the target slot through I/O. */
rk_err vol_rebuild_parity(rk_vol *v, uint32_t role, uint64_t s0, uint64_t s1,
                          void (*progress)(void *ctx, uint64_t done), void *ctx);

/* ---- vol_repair.c ---- */
/* Repairs the ranges whose reads failed during this rk_vol_read (E: how
 * the read ended); returns the read's result or a fatal repair error. */
rk_err vol_repair_reads(rk_vol *v, rk_err e);

/* ---- vol_rebuild_fast.c ---- */
/* vol_rebuild_parity from the page cache where the survivors are resident. */
rk_err vol_rebuild_parity_fast(rk_vol *v, uint32_t role, uint64_t s0, uint64_t s1,
                               void (*progress)(void *ctx, uint64_t done), void *ctx);

#endif
