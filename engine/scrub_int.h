/* scrub_int.h: what the scrub's files share (engine-private; the contract
 * is rk_scrub.h).
 *
 * A batch is stripes [first_stripe, first_stripe+nstripes) by chunk
 * columns [col_start, col_end): every live block of it is planned as
 * (role, member offset, length), blocks of one role laid out back to back
 * in that role's buffer so that a role reads its part of the batch in one
 * or a few large requests (scrub_read.c).  The reader pool reads; two
 * batches let the next one be read while this one is checked (scrub.c).
 *
 * Checking a batch: the checker pool (the caller and one thread per
 * further CPU) shares its stripes cut into pieces of CHECK_PIECE_BYTES
 * column bytes and only marks the stripes that are not clean, with the
 * read-only kernels, so the bulk of the work -- reading every byte once --
 * runs on every CPU.  The caller's thread then walks the stripes in order:
 * clean ones are counted, the others get the per-sector analysis
 * (scrub_parity.c, scrub_mirror.c), regions and repair; stripes with
 * unreadable bytes go through scrub_unreadable.c first. */
#ifndef RK_SCRUB_INT_H
#define RK_SCRUB_INT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "rk_parity.h"
#include "rk_pool.h"
#include "rk_scrub.h"
#include "rk_util.h"

#define SLICE_BYTES       65536u       /* verify slice: scratch stays in cache */
#define SCRUB_MIN_BATCH   4096u        /* per member per batch, however wide the array */
#define CHECK_PIECE_BYTES (256u << 10) /* checker job: column bytes of one stripe */
#define PROBE_BYTES       (64u << 10)  /* first re-read size of a block whose read failed */
#define DEAD_BLOCKS       2u           /* blocks with no readable sector before a member counts as dead */
#define SCRUB_ALIGN       64u
#define READ_AHEAD_BATCHES 4u          /* member bytes read ahead past a batch read from the device, in batches */
#define READ_AHEAD_PIECE  (512u << 10) /* bytes per read-ahead advice (the kernel caps one at its window) */
#define STAGE_BYTES       (768u << 10) /* a checker's buffer for page-cache blocks: within its L2 cache */
#define STAGE_PIECE_MAX   (128u << 10) /* column bytes per block per staged read, at most */

/* Which redundancy the array has. */
enum scrub_family {
	SCRUB_MIRRORS = 0,       /* RAID-1/10: blocks are copies (width = copies) */
	SCRUB_PARITY,            /* RAID-4/5/6: blocks are roles (width = nroles) */
};

/* The verdict of a sector (and of a run of sectors). */
enum sector_verdict {
	SECTOR_CLEAN = 0,
	SECTOR_UNLOCATED,        /* a mismatch; which block is wrong cannot be told */
	SECTOR_LOCATED,          /* the blocks at fault are in scrub_state.fault */
};

/* What redundancy left over says of rebuilt unreadable bytes. */
enum rebuild_confirmation {
	REBUILD_DISPUTED = -1,   /* the rest of the stripe disagrees with itself there */
	REBUILD_UNCONFIRMED = 0, /* nothing is left over to confirm them */
	REBUILD_CONFIRMED = 1,   /* redundancy left over agrees */
};

/* One block of a batch (a role's part of one stripe column). */
struct scrub_block {
	uint32_t role;
	uint64_t member_off;     /* absolute member offset */
	uint64_t len;            /* 0: nothing (missing role, past the volume) */
	uint8_t *buf;            /* NULL for a missing role */
	int read_failed;         /* its read failed: contents unknown until probed */
	int deferred;            /* in the page cache, not read yet: the checkers read it in cache-sized
	                            pieces, the analysis reads it whole into buf (fetch_deferred) */
};

/* One read request. */
struct read_extent {
	uint64_t member_off, len;
	uint8_t *buf;
	int deferred;            /* set by the reader: in the page cache, left for the checkers to read */
	int read_failed;         /* set by the reader: the request failed with RK_E_IO */
};

struct scrub_state;

/* One role's part of a batch: its buffer and read requests. */
struct role_io {
	uint8_t *buf;
	uint64_t cap, fill;
	struct read_extent *extents;
	uint32_t nextents, extent_cap;
};

struct scrub_batch {
	struct scrub_state *sc;
	uint64_t first_stripe, col_start, col_end;
	uint32_t nstripes;
	struct scrub_block *blocks;      /* nstripes * width */
	uint8_t *dirty;                  /* per stripe: a checker found it not clean */
	uint32_t pieces;                 /* checker jobs per stripe */
	struct role_io *roles;           /* per role */
	/* the first read error other than RK_E_IO */
	pthread_mutex_t err_lock;
	int err_lock_ready;
	rk_err err;
	char errmsg[512];
};

/* Scratch of the slice computations: one per checker, the caller's one is
 * also the analysis' (used one after the other). */
struct check_scratch {
	uint8_t *p_calc, *q_calc, *rebuilt;
	void **ptrs, **xor_ptrs;
	uint32_t *vol_role, *slot;
	uint8_t **role_buf;              /* per role: the stripe's block buffers */
	/* deferred blocks are read here STAGE_PIECE column bytes at a time, so
	 * that the check reads them from the CPU cache (a checker's whole
	 * stage stays within STAGE_BYTES, at least 4 KiB a block) */
	uint8_t *stage;
	struct scrub_block *stage_blocks;   /* width entries: the stripe's blocks pointing into the stage */
	size_t stage_piece;
};

/* One unreadable run found while probing a stripe, or the outcome of one
 * segment of it. */
struct unreadable_run {
	uint32_t role;
	uint64_t start, end;             /* column bytes within the batch's columns */
	int recoverable;
	enum rebuild_confirmation confirmation;
	enum rk_scrub_ufix fix;
};

/* The region being merged from runs of sectors. */
struct pending_region {
	int open;
	uint64_t stripe, start, end;
	enum sector_verdict verdict;
	uint32_t nfault, *fault;
	struct rk_scrub_loc *locs;
	uint32_t nlocs;
	enum rk_scrub_fix fix;
	uint32_t vol_index;              /* parity levels: volume index of the located data block, or UINT32_MAX */
	char why[256];
};

struct scrub_state {
	const struct rk_geom *g;
	rk_dev *const *devs;
	const uint64_t *data_offset;
	const struct rk_scrub_opts *opts;
	struct rk_scrub_stats *stats;
	const struct rk_parity_algo *algo;
	enum scrub_family family;
	uint32_t width;              /* blocks per stripe: nroles (parity) or copies (mirrors) */
	uint32_t nslots, pslot;      /* syndrome pointer array: entries, P's index */
	uint64_t unit;               /* bytes per stripe per block: chunk (parity, RAID-10) or stripe_data (RAID-1) */
	uint64_t batch_bytes;
	struct scrub_batch batches[2];
	rk_pool *readers, *checkers;
	struct check_scratch *checker_scratch;   /* rk_pool_workers(checkers) entries */
	uint32_t nchecker_scratch;
	int write_begun;
	uint32_t *extent_cursor;
	uint64_t *ahead_end;         /* per role: where the read-ahead asked for so far ends (reader job r only) */
	uint64_t *drop_end;          /* per role: where the bytes declared done with end (reader job r only) */
	/* verification scratch (the caller's thread) */
	struct check_scratch *analysis;
	uint8_t *zero, *tmp;
	uint32_t *slot_role;
	struct rk_loc *copy_locs;
	struct pending_region pending;
	/* the run being classified */
	uint32_t nfault, *fault;
	uint8_t *copy_bad;           /* per copy: at fault in this sector */
	/* unreadable bytes of the stripe being handled */
	uint8_t *unreadable_here;    /* per role: unreadable in the current segment */
	uint32_t *dead_blocks;       /* per role: consecutive probed blocks without a readable sector */
	enum rk_scrub_ufix *rewrite_fix;  /* per role: outcome of the current segment's rewrite */
	struct unreadable_run *probed, *outcomes;
	uint32_t nprobed, probed_cap, noutcomes, outcomes_cap;
	int report_only;             /* checking beside unreadable bytes: report, never write */
	uint64_t runs_recorded;      /* mismatch runs recorded (scrub_add_run calls) */
};

static inline struct scrub_block *batch_stripe(const struct scrub_batch *b, uint32_t si)
{
	return &b->blocks[(size_t)si * b->sc->width];
}

static inline size_t slice_len(uint64_t from, uint64_t to)
{
	return (size_t)(to - from < SLICE_BYTES ? to - from : SLICE_BYTES);
}

static inline size_t sector_len(uint64_t from, uint64_t to)
{
	return (size_t)(to - from < RK_SCRUB_SECTOR ? to - from : RK_SCRUB_SECTOR);
}

/* scrub.c */
void  *scrub_alloc_aligned(size_t n);
uint64_t scrub_align_up(uint64_t x);
/* Writes member bytes, calling on_begin_write before the first write. */
rk_err scrub_write(struct scrub_state *sc, uint32_t role, const void *buf, uint64_t len, uint64_t member_off);
/* Records a run of sectors [start, end) (chunk column bytes) of stripe S
 * with VERDICT and the roles in sc->fault; BLOCKS are the stripe's planned
 * blocks (for locs), COL_START the batch's first column. */
void   scrub_add_run(struct scrub_state *sc, uint64_t s, uint64_t start, uint64_t end, enum sector_verdict verdict,
                     enum rk_scrub_fix fix, const char *why, const struct scrub_block *blocks, uint64_t col_start);
/* Hands the region being merged to the caller's callback. */
void   scrub_flush_region(struct scrub_state *sc);
/* Absent blocks of a stripe (no buffer); *missing gets one's role. */
uint32_t scrub_absent(const struct scrub_state *sc, const struct scrub_block *blocks, uint32_t *missing);
/* Full analysis of column bytes [ca, cb) of stripe SI of B. */
rk_err scrub_check_range(struct scrub_state *sc, struct scrub_batch *b, uint32_t si, uint64_t ca, uint64_t cb);

/* scrub_read.c */
rk_err batch_init(struct scrub_state *sc, struct scrub_batch *b, uint32_t max_stripes);
void   batch_free(struct scrub_state *sc, struct scrub_batch *b);
/* Plans batch B: stripes [s0, s0+ns), columns [c0, c1). */
rk_err batch_plan(struct scrub_state *sc, struct scrub_batch *b, uint64_t s0, uint32_t ns, uint64_t c0, uint64_t c1);
/* Starts reading B on the reader pool; batch_read_wait ends it. */
void   batch_read_submit(struct scrub_state *sc, struct scrub_batch *b);
rk_err batch_read_wait(struct scrub_state *sc, struct scrub_batch *b);
/* Checker: whether column bytes [a, end) of stripe SI of B, which has
 * deferred blocks, are not clean, reading them through W's stage. */
int    staged_piece_dirty(struct scrub_state *sc, struct check_scratch *w, const struct scrub_batch *b, uint32_t si,
                          uint64_t a, uint64_t end);
/* Reads the deferred blocks of stripe SI of B into their buffers (a
 * failed read marks the block read_failed), before its analysis. */
rk_err fetch_deferred(struct scrub_state *sc, struct scrub_batch *b, uint32_t si);

/* scrub_parity.c */
rk_err check_scratch_init(struct scrub_state *sc, struct check_scratch *w);
void   check_scratch_free(struct check_scratch *w);
/* Checker: whether column bytes [a, end) of BLOCKS, stripe S, are not
 * clean (1) or clean (0). */
int    parity_piece_dirty(struct scrub_state *sc, struct check_scratch *w, const struct scrub_block *blocks,
                          uint64_t s, uint64_t a, uint64_t end);
rk_err check_parity_range(struct scrub_state *sc, struct scrub_batch *b, uint32_t si, uint64_t ca, uint64_t cb);
/* Rebuilds column bytes [col, col+n) of the unreadable role K of stripe
 * BLOCKS from the others (the analysis scratch's slot holds the stripe's
 * map); returns where they are. */
const uint8_t *parity_rebuild_slice(struct scrub_state *sc, const struct scrub_block *blocks, uint32_t k,
                                    uint64_t col, size_t n);

/* scrub_mirror.c */
int    mirror_piece_dirty(const struct scrub_state *sc, const struct scrub_block *blocks, uint64_t a, uint64_t end);
rk_err check_mirror_range(struct scrub_state *sc, struct scrub_batch *b, uint32_t si, uint64_t ca, uint64_t cb);

/* scrub_unreadable.c */
/* Stripe SI of B has blocks whose read failed: probe, check, rewrite, report. */
rk_err check_unreadable(struct scrub_state *sc, struct scrub_batch *b, uint32_t si);

#endif
