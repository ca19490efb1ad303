/* rk_array_stream.h: a sequential reader of an open array's volume that
 * reads ahead on its own thread.
 *
 * For export-like consumers (raid-assemble --export, raid-recover
 * --detect's export): while the caller writes or hashes one batch, the
 * next ones are read (members in parallel through the engine, lost blocks
 * reconstructed), and members are told to read ahead (posix_fadvise
 * SEQUENTIAL, then WILLNEED (RK_DEV_ADV_READAHEAD) up to 128 MiB of
 * volume bytes before the reads reach them) so
 * that members not in the page cache stream at disk speed.  The stream's
 * thread does the member reads (and reconstruction) itself, the engine's
 * pool left idle (rk_vol_set_serial): the caller's work is the other
 * thread.  Bytes are
 * exactly rk_array_read's.  Memory: RK_STREAM_NBUF batches of
 * RK_STREAM_BATCH bytes.  While a stream is open the array must not be used
 * by anything else (its one reader is the stream's thread).
 */
#ifndef RK_ARRAY_STREAM_H
#define RK_ARRAY_STREAM_H

#include <stddef.h>
#include <stdint.h>
#include "rk_array.h"
#include "rk_err.h"

/* Volume bytes per batch by default: whole data stripes of about this
 * size (a stripe wider than RK_STREAM_STRIPE_MAX: this size, unaligned).
 * Measured (bench_export, RAID-6 of 6, 512 KiB chunks, page cache): 2 MiB
 * batches export in 0.29 s where 4 MiB take 0.43 and 8 MiB 0.42: a batch
 * the size of the CPU caches is still in them when the caller writes it;
 * half a stripe (1 MiB) reads the stripe's parity twice when degraded. */
#define RK_STREAM_BATCH (2u << 20)
#define RK_STREAM_STRIPE_MAX (4u << 20)
/* Batches in flight: one the caller holds, one being read.  Measured
 * (bench_export, RAID-6 of 6 x 256 MiB, page cache, medians of 6
 * alternated runs): 2 batches 0.20 s, 3 0.20, 4 0.25, 8 0.43 -- every
 * batch more pushes the one the caller writes out of the CPU caches; the
 * members' disks are kept busy by the read-ahead advice, not by these. */
#define RK_STREAM_NBUF  2u

typedef struct rk_array_stream rk_array_stream;

/* Starts reading volume bytes [off, off+len) of A in order (past the end
 * is RK_E_RANGE; LEN 0 gives an empty stream).  BATCH is the size of each
 * batch but the last (0: whole stripes of about RK_STREAM_BATCH, batches
 * ending on stripe boundaries; else rounded up to 4 KiB). */
rk_err rk_array_stream_open(rk_array_stream **out, rk_array *a, uint64_t off, uint64_t len, size_t batch);
/* The next batch in order: *BUF gets its bytes, *LEN its size (0 and
 * RK_OK at the end of the range).  *BUF stays valid until the next call
 * or rk_array_stream_close.  A read that failed returns its error (and
 * message) at the batch where it happened, batches before it having been
 * delivered; later calls return the same error. */
rk_err rk_array_stream_next(rk_array_stream *s, const uint8_t **buf, size_t *len);
/* The stream's batch size (the largest LEN rk_array_stream_next gives). */
size_t rk_array_stream_batch(const rk_array_stream *s);
/* Volume offset of the next batch rk_array_stream_next would return. */
uint64_t rk_array_stream_pos(const rk_array_stream *s);
/* Stops the thread (waiting for the read in flight) and frees; NULL is
 * allowed.  The array stays open. */
void rk_array_stream_close(rk_array_stream *s);

#endif
