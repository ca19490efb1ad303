/* resize_cases.h: the reshapes the resize suites (test_resize_*.c) run, and
 * the checks they share (also test_reshape_write.c): arrays on memory
 * members, added members, opening an array mid-reshape, the verification
 * of a finished resize, the read of an interrupted one, and one
 * interrupted run. */
#ifndef RESIZE_CASES_H
#define RESIZE_CASES_H

#include <stdint.h>

#include "rk_array.h"
#include "rk_dev.h"

#define RESIZE_MAX_MEMBERS 12
/* Kill points tried: every write with RK_FAULTS=full; in make check every
 * 4th (every 48th under the sanitizers, several times slower), since the
 * fault harness (test_faults_resize.c) kills reshapes at every write too
 * and make check-faults tries every point. */
#ifdef __SANITIZE_ADDRESS__
#define RESIZE_KILL_STRIDE_SAMPLE 48
#else
#define RESIZE_KILL_STRIDE_SAMPLE 4
#endif
#define RESIZE_KILL_STRIDE resize_kill_stride()
uint64_t resize_kill_stride(void);

/* One reshape: an array of LEVEL/LAYOUT/CHUNK on NR members gains NADD. */
struct rs_case {
	int32_t level;
	uint32_t layout, nr, nadd;
	uint64_t chunk;
	int32_t new_level;       /* RS_KEEP_LEVEL: keep */
	uint64_t new_chunk;      /* 0 keep */
};
#define RS_KEEP_LEVEL (-99)
extern const struct rs_case rs_cases[];
extern const unsigned rs_ncases;
/* The first RAID-10 case (n2 4 -> 5). */
#define RS_R10 11

/* An array on NR fresh memory members of DEVSZ bytes (a journal in the gap
 * below the data when JOURNAL and the level is redundant), its volume
 * filled with the shared random stream; returns those bytes (*vol: size). */
uint8_t *resize_make_array(rk_dev **d, int32_t level, uint32_t layout, uint64_t chunk, uint32_t nr,
                           uint64_t devsz, int journal, uint64_t *vol);
/* COUNT members to be added, d[FIRST ...], named new0, new1, ..., of DEVSZ
 * bytes full of junk (0x5A) that must never show in the volume. */
void resize_add_members(rk_dev **d, uint32_t first, uint32_t count, uint64_t devsz);
/* Opens the array on D (N members, any order, mid-reshape or not) through
 * rk_array_open_devs with FLAGS, as the freshest superblock describes it,
 * with roles MISS and MISS2 left out (-1: none); rk_array_open_devs's
 * result. */
rk_err resize_open_mid(rk_array **a, rk_dev **d, uint32_t n, int miss, int miss2, unsigned flags);
/* The array on D (role order, N members) is in no reshape, agrees on
 * events, holds DATA in its first LEN bytes and zeros after, and scrubs
 * clean. */
void resize_verify(rk_dev **d, uint32_t n, const uint8_t *data, uint64_t len);
/* The members D (N of them, any state an interruption left) open as an
 * array (rk_array_open_devs, read-only) whose volume is DATA (LEN bytes);
 * mid-reshape (or mid-revert) through the dual-geometry reader.  Returns 1
 * when it was opened mid-reshape. */
int resize_array_read_check(rk_dev **d, uint32_t n, const uint8_t *data, uint64_t len);
/* After a crash: discovery over the N members (as files) finds none stale. */
void resize_check_none_stale(rk_dev **d, uint32_t n);

/* Stops a reshape or revert (rk_resize_opts.progress with progress_ctx and
 * stop pointing here) after CHECKPOINTS checkpoints when that is > 0, else
 * at the first checkpoint at or past volume byte AT.  FLAG set from the
 * start stops it before the first batch. */
struct resize_stop {
	volatile int flag;
	int checkpoints;
	uint64_t at;
};
void resize_stop_progress(void *ctx, uint64_t done, uint64_t total);

/* An interruption series: the array's member size, journal and reshape
 * batch, and what the runs saw. */
struct resize_interruption {
	uint64_t member_size;
	int journal;
	uint64_t batch;
	uint64_t points;     /* interruption points resumed */
	uint64_t midreads;   /* of them, opened mid-reshape through rk_array_open_devs */
};
/* One run of case C with fault SPEC (model, n, seed) over every member
 * (RK_FAULT_NONE: *writes gets the writes a whole reshape makes); then
 * continue on what the members hold and check everything. */
void resize_interrupted(const struct rs_case *c, const struct rk_fault_spec *spec, struct resize_interruption *run,
                        uint64_t *writes);

#endif
