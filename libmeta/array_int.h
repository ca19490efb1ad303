/* array_int.h: what the files of an open array share (array.c: lifetime,
 * failures and superblock commits; array_open.c: the open paths;
 * array_write.c: reads and writes; array_journal.c: writing the journal;
 * array_replay.c: replaying it).  Private to libmeta. */
#ifndef RK_ARRAY_INT_H
#define RK_ARRAY_INT_H

#include <pthread.h>
#include <stdint.h>

#include "rk_array.h"
#include "rk_journal.h"
#include "rk_resize.h"
#include "rk_sb.h"

/* Volume bytes one write-intent record covers: the most a crash can leave
 * to resync (and, read-only, to hold in the overlay).  A record covers
 * this much ahead of the write, so a sequential writer needs one record
 * (and its flushes) per window, not per request. */
#define JNL_INTENT_PIECE (64u << 20)

/* One geometry's engine and the volume bytes it serves: the whole volume
 * normally; mid-reshape the new geometry's below the checkpoint and the old
 * one's from it (spec/journal.md "Mid-reshape"). */
struct array_part {
	struct rk_array *a;
	rk_vol *vol;
	const struct rk_geom *g;
	uint64_t lo, hi;         /* volume bytes [lo, hi) */
	uint64_t base;           /* mid-reshape: this data area's start, from the new data offset */
};

/* Why a role is down (non-zero: down, as rk_geom_readable reads it). */
enum array_down {
	ARRAY_ROLE_UP = 0,
	ARRAY_DOWN_MISSING = 1,  /* absent at open */
	ARRAY_DOWN_FAILED = 2,   /* failed during I/O since open */
};

struct rk_array {
	unsigned flags;
	int own_devs;            /* devs opened here (closed by rk_array_close) */
	uint32_t nroles;
	struct rk_geom g;
	rk_vol *vol;             /* NULL mid-reshape (reshape serves reads) */
	rk_resize_reader *reshape;   /* mid-reshape: the dual-geometry reader (its engines are the parts) */
	struct array_part part[2];   /* the engines writes go through, by volume range */
	uint32_t nparts;
	uint64_t rs_pos, rs_base, rs_old;   /* mid-reshape: checkpoint, new and old data offsets */
	rk_dev **devs;           /* nroles; NULL = missing */
	struct rk_sb **sbs;      /* each live member's own superblock (owned copies) */
	struct rk_sb *tmpl;      /* array-wide fields as last written (owned copy) */
	uint64_t *data_off;
	uint8_t *down;           /* enum array_down per role */
	char (*fail_why)[256];
	uint8_t *flush_skip;     /* scratch: members a flush leaves out */
	uint64_t size;
	int dirty;               /* step 1 done, step 3 owed */
	int pending;             /* failures not yet in the superblocks */
	int unclean;
	int sb_disagree;         /* a member one event behind, or its two copies differ */
	uint32_t nfailed;
	uint64_t nrepaired, repaired_bytes;   /* read errors rewritten from redundancy */
	/* write journal (spec/journal.md) */
	int journal_on;          /* records are written before in-place writes */
	int journal_off_by_user; /* rk_array_set_journal(a, 0): benchmarks only */
	int journal_unflushed;   /* in-place writes since the last record, not yet flushed */
	uint64_t journal_seq;
	int intent_open;         /* the slots hold an INTENT record for [intent_lo, intent_hi) */
	uint64_t intent_lo, intent_hi;
	int writing_full_stripes;    /* the engine writes full stripes under the open intent */
	uint64_t journal_max;    /* payload bytes one record may carry per member */
	uint64_t *jpos;          /* per role: where its next record goes in its log */
	uint64_t jnonce;         /* this session's mark in every record */
	uint64_t jbase;          /* first record since the last checkpoint (replay starts there) */
	uint8_t *journal_buf;
	struct rk_jrec *journal_hdr;
	struct array_batch *jb;  /* group commit: writes not yet journaled (array_batch.c) */
	rk_dev **overlay_devs;   /* read-only replay: overlays the volume runs on (owned) */
	enum rk_array_replay replayed;
	char replay_msg[512];
	rk_fault_plan *test_plan;    /* rk_test_hooks_set_fault (tests only) */
	rk_dev_wrap_fn wrap;         /* rk_array_open_wrapped: the caller's wrapper of each member opened */
	void *wrap_ctx;
	int test_crash_on_free;
	pthread_mutex_t lock;        /* guards down/fail_why/pending/nfailed (callback threads) */
	pthread_mutex_t write_lock;  /* one writer at a time: the journal state (slot, window) */
};

/* array.c */
rk_array *array_alloc(uint32_t nroles, unsigned flags);
void array_free(rk_array *a);
/* The engine's failure and repair callbacks (rk_vol_on_fail, on_repair). */
void array_on_member_fail(void *ctx, uint32_t role, rk_err err);
void array_on_member_repair(void *ctx, uint32_t role, uint64_t off, uint64_t len);
/* Fails role R (MSG says why) in every engine that has it. */
void array_fail_member(rk_array *a, uint32_t r, rk_err e, const char *msg);
/* 1 when role R has a device and is not down. */
int array_member_live(rk_array *a, uint32_t r);
/* The one place superblocks are rewritten (events+1, array_state STATE). */
rk_err array_commit(rk_array *a, uint32_t state);
/* After a volume call: records failures met during it (read-write only). */
rk_err array_settle(rk_array *a);

/* array_journal.c */
/* Whether geometry G has redundancy the journal protects. */
int array_geom_journaled(const struct rk_geom *g);
/* Whether any geometry the volume is in has redundancy to journal. */
int array_journal_level(const rk_array *a);
/* Whether part P's level keeps parity (redo records through the hook). */
int array_part_parity(const struct array_part *p);
/* Whether a role of P's geometry is down (it writes degraded). */
int array_part_degraded(rk_array *a, const struct array_part *p);
/* A member failing journal I/O: failed like any member failure. */
void array_journal_member_failed(rk_array *a, uint32_t r, rk_err e);
/* At the first write: sets the journal up and empties every slot. */
rk_err array_journal_begin(rk_array *a);
/* The engine's commit hook (rk_vol_set_journal); CTX is the part. */
rk_err array_journal_hook(void *ctx, const struct rk_vol_wseg *segs, uint32_t n);
/* Makes sure an intent record covers [off, off+len) of part P. */
rk_err array_journal_cover(rk_array *a, const struct array_part *p, uint64_t off, uint64_t len, uint64_t step);

/* One commit of DATA records with the N segments SEGS (offsets from
 * BASE): appended to the logs, durable (one flush) on return. */
rk_err array_journal_data(rk_array *a, const struct rk_vol_wseg *segs, uint32_t n, uint64_t base);

/* array_batch.c (group commit; every call under write_lock but _pending) */
rk_err array_batch_setup(rk_array *a);
/* Releases the batch (kept for the next array's setup). */
void array_batch_free(rk_array *a);
/* 1 while the hook must collect (array_batch_collect) instead of journaling. */
int array_batch_collecting(const rk_array *a);
rk_err array_batch_collect(rk_array *a, const struct array_part *pt, const struct rk_vol_wseg *segs, uint32_t n);
/* 1 when writes wait in the batch. */
int array_batch_pending(const rk_array *a);
/* 1 when the write was batched or failed (*ERR); 0: the caller writes it
 * (any batch committed first). */
int array_batch_write(rk_array *a, struct array_part *pt, const uint8_t *p, size_t len, uint64_t off, rk_err *err);
/* Batched writes over [off, off+len) copied onto BUF. */
void array_batch_overlay(rk_array *a, uint8_t *buf, size_t len, uint64_t off);
/* Journals the batch (one commit, one flush), then writes it in place. */
rk_err array_batch_commit(rk_array *a);
/* 1 when a write went around the batch since the members were last
 * flushed (its bytes are in no record a flush makes durable). */
int array_batch_direct(const rk_array *a);
void array_batch_flushed(rk_array *a);

/* array_write.c */
/* rk_array_flush with every member flushed (close, before CLEAN). */
rk_err array_flush_all(rk_array *a);

/* array_replay.c */
/* After an unclean stop: replays the last complete record. */
rk_err array_journal_replay(rk_array *a);

#endif
