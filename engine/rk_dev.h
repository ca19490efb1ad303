/* rk_dev.h: the one device interface for all member I/O.
 *
 * Every read or write of a member goes through an rk_dev.  Backends:
 *   file/block device  rk_dev_open()      (dev_file.c)
 *   memory             rk_dev_mem()       (dev_mem.c; tests, fuzzing)
 *   fault injection    rk_dev_fault()     (dev_fault.c; wraps another dev)
 *   overlay            rk_dev_overlay()   (dev_overlay.c; writes kept in memory)
 *   slice              rk_dev_slice()     (dev_slice.c; a read-only window of another dev)
 *   E01 image          rk_dev_open()      (dev_ewf.c; libewf, read-only)
 *   split raw image    rk_dev_open()      (dev_split.c; NAME.001 NAME.002 ..., read-only)
 *   hashing            rk_dev_hash()      (dev_hash.c; wraps another dev, digests what is read)
 * All offsets and sizes are 64-bit bytes.  pread/pwrite are full transfers
 * (short reads/writes are looped; EOF inside the range is RK_E_RANGE) and are
 * bounds-checked against rk_dev_size() without overflow (RK_E_RANGE); a
 * zero-length request with off <= size succeeds without reaching the backend.
 * Writes through a read-only device fail with RK_E_READONLY; flushing one is
 * a no-op.
 */
#ifndef RK_DEV_H
#define RK_DEV_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "rk_err.h"

typedef struct rk_dev rk_dev;

/* Open flags. */
#define RK_DEV_RDONLY   0x0u  /* read-only (the default: forensic images stay intact) */
#define RK_DEV_RDWR     0x1u  /* read-write: O_EXCL on block devices, flock(LOCK_EX|LOCK_NB) on files */
#define RK_DEV_CREATE   0x2u  /* with RDWR: create a missing file (see rk_dev_create) */
#define RK_DEV_DIRECT   0x4u  /* try O_DIRECT (callers must align buffers to the sector size) */
#define RK_DEV_PLAIN    0x8u  /* the name is not looked at: a file named like a split raw image's
                                 segment (disk.001, disk.aa) opens as the one file it is (the
                                 bytes still are: an E01 stays an E01).  For members named like
                                 segments that are whole members each (libmeta decides) */

/* Backend operations.  Implementations see only in-range, non-empty requests. */
struct rk_dev_ops {
	const char *name;                                          /* "file", "blockdev", "mem", "fault" */
	rk_err (*pread)(rk_dev *d, void *buf, size_t len, uint64_t off);
	rk_err (*pwrite)(rk_dev *d, const void *buf, size_t len, uint64_t off);
	rk_err (*flush)(rk_dev *d);                                /* durable: fdatasync; NULL: nothing to make durable (memory) */
	void   (*close)(rk_dev *d);                                /* frees priv */
	/* Optional zero-copy read: sets *ptr to LEN bytes at OFF and returns 1
	 * when the backend can serve them without I/O, else 0. */
	int    (*peek)(rk_dev *d, uint64_t off, uint64_t len, const uint8_t **ptr);
	/* Optional access-pattern advice (RK_DEV_ADV_*); never fails. */
	void   (*advise)(rk_dev *d, uint64_t off, uint64_t len, unsigned adv);
};

/* Opens PATH (regular file or block device, or a forensic image read
 * through its container: spec/images.md).  The backend is chosen here:
 * an EWF segment signature ("EVF\t\r\n\xff\0", EWF2 "EVF2\r\n\x81\0")
 * opens the E01 set through libewf (the other segments found by libewf's
 * naming rules); a name NAME.001 (any digit count >= 3, or .000 first),
 * NAME.aa or NAME.aaa whose next segment exists opens the split raw image
 * (segments in order, sizes summed, a gap an error naming the missing
 * segment; with RK_DEV_PLAIN the name is not looked at and such a file
 * opens as itself); anything else is the file backend below.  Images are
 * read-only: RDWR fails with RK_E_NOTSUP and "disk.E01 is an E01 image:
 * raidkit reads it but never writes to it", before any file is opened.
 * A later segment (disk.E02, disk.002) given alone is refused (RK_E_OPEN)
 * naming the first; an L01 logical evidence file is RK_E_NOTSUP.  A
 * truncated or corrupt E01 fails with RK_E_CORRUPT or RK_E_IO naming the
 * file.  The device's path is the first segment's, its identity the first
 * segment's file, its size the media size and its sector size the image's
 * bytes per sector.
 * File or block device:  Size from st_size or
 * BLKGETSIZE64, logical sector size from BLKSSZGET (512 for files).
 * Errors name PATH: "disk3.img: cannot open: Permission denied".
 * RK_E_OPEN: missing, unreadable, or neither a regular file nor a block
 * device (FIFOs are refused without blocking); RK_E_BUSY: RDWR and another
 * writer holds the file's flock or the block device is claimed (mounted, md,
 * another O_EXCL opener); RK_E_INVAL: bad flags.  With RDWR|CREATE a missing
 * file is created empty. */
rk_err rk_dev_open(rk_dev **out, const char *path, unsigned flags);

/* Creates a new sparse file PATH of SIZE bytes and opens it read-write
 * (locked).  RK_E_EXISTS if PATH exists (left untouched); on a later failure
 * the new file is removed. */
rk_err rk_dev_create(rk_dev **out, const char *path, uint64_t size);

/* A zero-filled in-memory device of SIZE bytes named NAME (copied). */
rk_err rk_dev_mem(rk_dev **out, const char *name, uint64_t size);
/* The memory behind a mem device (NULL for other backends); for tests. */
uint8_t *rk_dev_mem_data(rk_dev *d);

/* Generic constructor for backends: takes ownership of priv (freed by
 * ops->close, also when rk_dev_new fails).  SECTOR must be a power of two in
 * [512, 65536]. */
rk_err rk_dev_new(rk_dev **out, const struct rk_dev_ops *ops, void *priv,
                  const char *path, uint64_t size, uint32_t sector, int writable);
/* The backend's private data given to rk_dev_new (NULL for a NULL D). */
void  *rk_dev_priv(const rk_dev *d);
/* Whether D was made with OPS (how a backend recognises its own devices). */
int    rk_dev_has_ops(const rk_dev *d, const struct rk_dev_ops *ops);

/* Full transfers of LEN bytes at OFF, bounds-checked (see the top). */
rk_err rk_dev_pread(rk_dev *d, void *buf, size_t len, uint64_t off);
rk_err rk_dev_pwrite(rk_dev *d, const void *buf, size_t len, uint64_t off);
/* Makes the device's writes durable (fdatasync); a no-op when read-only. */
rk_err rk_dev_flush(rk_dev *d);
/* The one "flush every live member": flushes DEVS[i] for i < N that are
 * not NULL and not marked in SKIP (may be NULL), in order.  A flush failing
 * with RK_E_IO is handed to ON_IO_ERROR (the member failed; the loop goes
 * on) when one is given; any other error, or RK_E_IO without a callback,
 * stops the loop and is returned (its message names the member). */
typedef void (*rk_dev_io_failed_fn)(void *ctx, uint32_t index, rk_err why);
rk_err rk_dev_flush_set(rk_dev *const *devs, uint32_t n, const uint8_t *skip,
                        rk_dev_io_failed_fn on_io_error, void *ctx);
/* Zero-copy read of data already in memory: returns 1 and sets *PTR to the
 * LEN bytes at OFF when the backend can serve them without I/O (file
 * backend: every page resident in the page cache, through a read-only
 * mapping of the open file; residency from cachestat(2), or mincore(2)
 * where the kernel lacks it), else 0 and the caller uses rk_dev_pread.
 * *PTR stays valid until rk_dev_close.  Never served by wrapping backends
 * (fault injection), so tests see every read.  A file truncated by someone
 * else while mapped raises SIGBUS on access: callers that cannot accept
 * that use rk_dev_pread only. */
int    rk_dev_peek(rk_dev *d, uint64_t off, uint64_t len, const uint8_t **ptr);
/* Access-pattern advice for [OFF, OFF+LEN) (the part inside the device),
 * a combination of the flags below.  Only a hint: it never fails, changes
 * no data and leaves pointers from rk_dev_peek valid (a later access maps
 * the pages again).  The file backend acts on it; the others ignore it
 * (wrapping backends too: tests see every read as issued). */
#define RK_DEV_ADV_SEQUENTIAL 0x1u  /* read in order: larger readahead */
#define RK_DEV_ADV_WILLNEED   0x2u  /* read soon: start reading it into the page cache; if it is all
                                       resident, fill the page tables of the peek mapping in one go
                                       (no page fault per page on access) */
#define RK_DEV_ADV_READAHEAD  0x8u  /* read soon through pread: start reading it into the page cache
                                       only (no peek mapping is made or filled) */
#define RK_DEV_ADV_DONTNEED   0x4u  /* done with the bytes: drop the peek mapping's page tables (a
                                       file's page cache keeps the data; a block device's is
                                       dropped too, as its last close would) */
#define RK_DEV_DROP_STEP (16u << 20)  /* callers dropping behind their reads: bytes per DONTNEED, at least */
void   rk_dev_advise(rk_dev *d, uint64_t off, uint64_t len, unsigned adv);
/* Closes and frees; NULL is allowed. */
void   rk_dev_close(rk_dev *d);
/* A caller's hook on a device an operation opened for it (role or index
 * IDX): may replace *DEV with a wrapper of it (rk_dev_hash, rk_dev_fault),
 * which then owns the old one, also on failure. */
typedef rk_err (*rk_dev_wrap_fn)(void *ctx, uint32_t idx, rk_dev **dev);

/* Size in bytes, logical sector size, path, backend name ("file", ...),
 * whether writable, whether a block device; 0 or "" for a NULL D. */
uint64_t    rk_dev_size(const rk_dev *d);
uint32_t    rk_dev_sector(const rk_dev *d);
const char *rk_dev_path(const rk_dev *d);
const char *rk_dev_backend(const rk_dev *d);
int         rk_dev_writable(const rk_dev *d);
int         rk_dev_is_blockdev(const rk_dev *d);
/* Identity of the underlying object (st_dev, st_ino; st_rdev for block
 * devices) so the same file given twice is recognised; 0 when unknown. */
int         rk_dev_identity(const rk_dev *d, dev_t *devno, ino_t *ino);
/* For backends: records the identity (and whether it is a block device, which
 * rk_dev_new otherwise infers from ops->name == "blockdev"). */
void        rk_dev_set_identity(rk_dev *d, dev_t devno, ino_t ino, int blockdev);

/* ---- images: E01 (dev_ewf.c) and split raw (dev_split.c) ---- */

/* 1 when PATH is segment *NUMBER (>= 2) of an E01 set or a split raw
 * image, whose first segment is FIRST (CAP bytes, may not exist); else 0.
 * Discovery uses it to fold later segments given beside their first. */
int rk_dev_segment_of(const char *path, char *first, size_t cap, uint32_t *number);
/* 1 when PATHS[I] is such a later segment and its first segment is among
 * the N PATHS too (the same file, under any name): the set is read
 * through its first segment, and PATHS[I] is folded into it. */
int rk_dev_segment_given(char *const *paths, uint32_t n, uint32_t i);
/* 1 when PATH is a segment (the first or a later one) of a split raw
 * image by its name (spec/images.md), whose first segment is FIRST (CAP
 * bytes) and PATH's place in it *NUMBER (from 1); else 0 (also for E01
 * segments).  For the caller that decides whether such files are
 * separate members instead (libmeta/segnames.c). */
int rk_dev_split_of(const char *path, char *first, size_t cap, uint32_t *number);
/* The name of segment NUMBER (from 1) of the split series whose first
 * segment is FIRST, into OUT (CAP bytes), whether it exists or not; 0
 * when FIRST is no split name or NUMBER does not fit its suffix. */
int rk_dev_split_segment_name(const char *first, uint32_t number, char *out, size_t cap);
/* The segment files D reads, in order: 1 and D's path for other backends
 * (0 and NULL for a NULL D or I out of range). */
uint32_t    rk_dev_segments(const rk_dev *d);
const char *rk_dev_segment_path(const rk_dev *d, uint32_t i);

/* For code that hands a file descriptor to libblkid (partition tables):
 * when PATH is an image (E01, split raw), a memory file (memfd) of the
 * media's size holding what a partition table is read from: the media's
 * first and last MiB (MBR, GPT and its backup) and the boot records of an
 * extended MBR partition's chain; the rest reads as zeros.  -1 when PATH
 * is no image (or it cannot be read): the caller opens PATH itself.  The
 * caller closes the descriptor. */
int rk_dev_table_fd(const char *path);

/* What libewf says about an E01 device (text fields as stored, "" when
 * absent; printed escaped). */
struct rk_ewf_info {
	char     format[32];          /* "EnCase 6", "FTK Imager", ... */
	uint64_t media_size;          /* bytes */
	uint32_t bytes_per_sector;
	uint32_t sectors_per_chunk;
	uint32_t segments;
	int      has_md5, has_sha1;   /* the acquisition hashes stored in the image */
	uint8_t  md5[16], sha1[20];
	char     case_number[128], evidence_number[128], examiner[128];
	char     description[256], notes[256];
	char     acquiry_date[64], acquiry_software[64], acquiry_os[64];
	uint32_t acquiry_errors;      /* read errors the imager recorded */
};
/* Fills *INFO for an E01 device D; RK_E_INVAL when D is not one. */
rk_err rk_dev_ewf_info(rk_dev *d, struct rk_ewf_info *info);

/* Reads the whole media of E01 device D and compares its MD5 and SHA-1
 * (OpenSSL) with those stored in the image.  *RESULT: which were stored,
 * the digests computed (lower-case hex), whether each stored one matches.
 * PROGRESS (may be NULL) is called with bytes done and the total; a
 * non-zero return stops the run (RK_E_IO "stopped").  RK_OK when both
 * digests were computed, whatever the comparison; RK_E_INVAL when D is
 * not an E01 device; a read error is returned naming the image. */
struct rk_ewf_verify {
	int  md5_stored, sha1_stored;
	int  md5_match, sha1_match;   /* valid where stored */
	char md5[33], sha1[41];       /* as read */
	char md5_stored_hex[33], sha1_stored_hex[41];
};
typedef int rk_dev_progress_fn(void *ctx, uint64_t done, uint64_t total);
rk_err rk_dev_ewf_verify(rk_dev *d, struct rk_ewf_verify *result, rk_dev_progress_fn *progress, void *ctx);

/* ---- fault injection (dev_fault.c) ----
 * A plan is shared by the wrapped devices of one array, so that write
 * numbers count across all members in issue order.  Reproducible by seed.
 */
typedef struct rk_fault_plan rk_fault_plan;

enum rk_fault_model {
	RK_FAULT_NONE = 0,
	RK_FAULT_FAIL_WRITE,  /* write #n fails with RK_E_IO (and later writes succeed) */
	RK_FAULT_TEAR_WRITE,  /* write #n is torn: a seed-chosen prefix of whole sectors lands, then RK_E_FAULT; every later I/O fails */
	RK_FAULT_POWER_CUT,   /* power cut at write #n: see rk_fault_crash() */
	RK_FAULT_KILL,        /* process kill at write #n: writes before n survive, n and later never happen */
	RK_FAULT_PULL,        /* member `member` fails every I/O from its own I/O #n on (cable pull):
	                         its reads and writes are counted; RK_E_IO naming the
	                         member; its flushes fail once it is gone */
	RK_FAULT_READ_ERROR,  /* reads of member `member` touching [off, off+len) fail with RK_E_IO;
	                         a write over part of the range heals that part (as a
	                         drive remaps a bad sector on write) */
	RK_FAULT_STOP,        /* the process stops itself (SIGSTOP) before write #n, which goes
	                         on when continued: a case then kills it from outside at a
	                         known point (kill -9 of a real process, not a timed race) */
};

struct rk_fault_spec {
	enum rk_fault_model model;
	uint64_t n;          /* 0-based write number (global) or I/O number (per member for PULL) */
	int      member;     /* for PULL and READ_ERROR */
	uint64_t off, len;   /* for READ_ERROR: byte range on the member */
	uint64_t seed;       /* drives every random choice */
};

rk_err rk_fault_plan_create(rk_fault_plan **out, const struct rk_fault_spec *spec);
/* Parses the test-only form "model=M,n=N[,member=K][,seed=S][,off=O,len=L]"
 * (M one of none, fail-write, tear-write, power-cut, kill, pull,
 * read-error, stop; numbers decimal or 0x hex) into *SPEC (zeroed first), as the
 * tools read RAIDKIT_TEST_FAULT.  RK_E_INVAL naming the bad part. */
rk_err rk_fault_spec_parse(const char *s, struct rk_fault_spec *spec);
/* Drops the creator's reference: the plan lives on until its last wrapped
 * device is closed too, so the order of plan_free and rk_dev_close is free. */
void   rk_fault_plan_free(rk_fault_plan *p);
/* Wraps LOWER (ownership taken, also on failure) as member number MEMBER
 * (>= 0, once per plan) of plan P.  The wrapper has LOWER's path, size,
 * sector size, writability and identity.  Closing it closes LOWER, except for
 * POWER_CUT before rk_fault_crash(): then LOWER stays open in the plan (so the
 * crash can still be applied) until the plan is gone. */
rk_err rk_dev_fault(rk_dev **out, rk_dev *lower, rk_fault_plan *p, int member);
/* The lower device of MEMBER while the plan holds it (NULL otherwise); for tests. */
rk_dev *rk_fault_lower(rk_fault_plan *p, int member);
/* Whether the plan's fault has fired (the write, I/O or read it names was reached). */
int    rk_fault_fired(const rk_fault_plan *p);
/* Writes issued so far across the plan (to enumerate fault points: run once
 * with RK_FAULT_NONE and read the count).  Every write reaching the plan
 * counts, failed ones too; empty or out-of-range writes never reach it. */
uint64_t rk_fault_writes(const rk_fault_plan *p);
/* For POWER_CUT: applies the post-crash state to the lower devices: writes
 * before the last completed flush persist, later ones persist as a seeded
 * subset, write #n torn at sector granularity.  Call after the tool stops;
 * until then writes are buffered in the plan and reads see them.
 * Flushes are per member (a flush of member m makes m's earlier writes
 * durable, as a disk cache flush does).  Write #n fails with RK_E_FAULT and
 * every I/O after it too: the process is dead.  If the tool never reached
 * write #n the cut happens at the call.  After the call every I/O through
 * the plan fails.  A no-op (RK_OK) for the other models, whose writes reach
 * the lower devices directly. */
rk_err rk_fault_crash(rk_fault_plan *p);

/* ---- overlay (dev_overlay.c) ---- */
/* An overlay over LOWER: reads see LOWER with every write made through the
 * overlay applied on top (kept in memory, latest wins); nothing reaches
 * LOWER.  Used to replay a journal on an array opened read-only.  LOWER is
 * not owned (it must outlive the overlay).  Path, size, sector, identity
 * are LOWER's; the overlay is writable. */
rk_err rk_dev_overlay(rk_dev **out, rk_dev *lower);

/* ---- slice (dev_slice.c) ---- */
/* A read-only window [OFFSET, OFFSET+LENGTH) of PARENT (one partition of a
 * whole disk, libmeta/rk_part.h), named NAME (copied; NULL: PARENT's
 * path).  Reads at slice offset X read PARENT at OFFSET + X; the generic
 * bounds check keeps them inside the window, so PARENT is never read past
 * it; writes fail with RK_E_READONLY.  The window must lie inside PARENT
 * (RK_E_RANGE with a sentence otherwise, overflow-safe).  Sector size is
 * PARENT's.  Identity: derived from PARENT's and the window, so two
 * windows of one file differ and the same window twice is the same (the
 * device number has bit 63 set: never a real device's).  With OWN_PARENT
 * closing the slice closes PARENT, and PARENT is closed on failure too;
 * else PARENT must outlive the slice. */
rk_err rk_dev_slice(rk_dev **out, rk_dev *parent, uint64_t offset, uint64_t length,
                    const char *name, int own_parent);

/* ---- hashing (dev_hash.c) ----
 * Digests through OpenSSL's libcrypto (EVP): "sha256", "sha1", "md5".
 * A member's digest always covers the whole device, bytes 0 .. size-1, in
 * order: what the command reads feeds it (no second pass where the command
 * reads the member in order); what it does not read is read by the hash
 * itself (rk_hash_result.extra says how much). */
#define RK_HASH_MAX 64            /* bytes of the longest digest (EVP_MAX_MD_SIZE) */

/* A finished digest, or the counters of one in progress. */
struct rk_hash_result {
	char     alg[8];              /* "sha256", "sha1", "md5" */
	unsigned len;                 /* digest bytes */
	uint8_t  digest[RK_HASH_MAX];
	char     hex[2 * RK_HASH_MAX + 1];   /* lower-case hex, as sha256sum prints it */
	uint64_t size;                /* bytes hashed (the whole device, once done) */
	uint64_t along;               /* ... of which taken from the command's own reads */
	uint64_t extra;               /* ... of which read by the hash itself (gaps, the catch-up at the end) */
	int      done;                /* the digest is complete */
	int      open;                /* a hashing device still feeds this result */
};

/* Whether ALG is a digest name this build takes (1) or not (0). */
int    rk_hash_alg_ok(const char *alg);
/* The names rk_hash_alg_ok takes, for messages: "sha256, sha1, md5". */
const char *rk_hash_alg_names(void);

/* A streaming digest (e.g. of the bytes an export wrote). */
typedef struct rk_digest rk_digest;
/* RK_E_INVAL naming ALG when it is not a digest name; RK_E_NOMEM. */
rk_err rk_digest_new(rk_digest **out, const char *alg);
void   rk_digest_update(rk_digest *g, const void *buf, size_t len);
/* Completes the digest into RES (alg, len, digest, hex, done; size counts
 * the bytes given); G cannot be updated afterwards. */
rk_err rk_digest_final(rk_digest *g, struct rk_hash_result *res);
void   rk_digest_free(rk_digest *g);

/* Wraps LOWER in a read-only hashing device (writes fail RK_E_READONLY).
 * Reads pass through to LOWER and feed the digest of ALG with their bytes
 * as long as they extend the hashed prefix [0, n): a read overlapping it
 * hashes its new part.  Reads ahead of the prefix are kept (copied, up to a
 * few MiB) until the prefix reaches them, so reads issued out of order by
 * parallel I/O cost nothing more; when the kept bytes hit their bound, or
 * the gap is a region the command skips (a parity chunk, a missing
 * member's role), the hash reads the gap itself.  Reads far ahead (more
 * than 64 MiB: a superblock at the end) are left to the catch-up.
 * rk_dev_hash_finish reads what is still missing, in order.  RES (the
 * caller's, must outlive the device) gets live counters and open=1, the
 * digest at rk_dev_hash_finish, and open=0 when the device is closed.
 * Path, size, sector and identity are LOWER's; no zero-copy peek (every
 * read is seen); advice passes to LOWER.  With OWN_LOWER closing the
 * wrapper closes LOWER, also when this call fails.  Thread-safe (reads
 * from a thread pool). */
rk_err rk_dev_hash(rk_dev **out, rk_dev *lower, const char *alg, struct rk_hash_result *res, int own_lower);
/* Reads whatever the hash has not seen yet (from the prefix to the end,
 * in order) and completes RES (done=1).  Reading errors are returned (the
 * message names the member); once finished, reads through D still work
 * but feed nothing.  D must be a device made by rk_dev_hash (RK_E_INVAL). */
rk_err rk_dev_hash_finish(rk_dev *d);

#endif
