/* rk_probe.h: recognising what a member already holds (libblkid), and
 * foreign RAID metadata; which of its bytes hold data; wiping old
 * signatures.  Used by mkraid's refusal and its scan for old data, by
 * discovery's "foreign" classification and by raid-resize's shrink check. */
#ifndef RK_PROBE_H
#define RK_PROBE_H

#include <stddef.h>
#include <stdint.h>
#include "rk_err.h"
#include "rk_dev.h"

/* The strings hold the bytes found (a foreign UUID or label may be binary:
 * up to the first NUL, cut to fit); print them with rk_esc_fprintf or
 * rk_json_str, never raw. */
struct rk_probe_result {
	int  found;              /* 1 when something recognised is there */
	char type[64];           /* blkid TYPE ("ext4", "linux_raid_member", "ddf_raid_member", "dos", "gpt", "raidkit") */
	char usage[32];          /* blkid USAGE ("filesystem", "raid", "partition table", ...) */
	char uuid[64];           /* blkid UUID when present */
	char label[64];
	char version[32];
	char what[256];          /* in words: "an ext4 file system (UUID ...)", quoting UUID and label as found */
};

/* Probes PATH read-only: our superblock first (either copy), then libblkid's
 * superblock and partition-table probes. */
rk_err rk_probe_path(const char *path, struct rk_probe_result *r);

/* For a command about to overwrite PATH: *FOUND 1 and WHAT (CAP bytes)
 * the words for what rk_probe_path recognises there, else *FOUND 0 and
 * WHAT "".  Found and not FORCE: RK_E_EXISTS, "PATH: holds WHAT; use
 * --force to overwrite" (the one wording of that refusal).  Other errors
 * are rk_probe_path's. */
rk_err rk_probe_occupant(const char *path, int force, char *what, size_t cap, int *found);

/* libblkid alone (no raidkit superblock check): what else PATH carries,
 * e.g. an md superblock left beside ours, or a file system. */
rk_err rk_probe_foreign(const char *path, struct rk_probe_result *r);

/* ---- which bytes hold data ---- */

/* Size of an open fd: st_size for regular files (*IS_REG 1), BLKGETSIZE64
 * for block devices; -1 (errno set) for anything else. */
int rk_probe_fd_size(int fd, uint64_t *size, int *is_reg);

/* MARK's verdict: non-zero ends the scan. */
typedef int (*rk_probe_mark_fn)(void *ctx, uint64_t row, uint64_t at);

/* Visits the non-zero parts of [off, off+len) of PATH.  For every piece of
 * ROW bytes (counted from BASE) that holds a non-zero byte, calls MARK with
 * the row number and the first non-zero byte's offset (rows in increasing
 * order; a row is reported once).  With STOP_FIRST the scan ends at the
 * first non-zero row.  Holes of regular files are skipped with
 * SEEK_DATA/SEEK_HOLE, so sparse files cost what their allocated extents
 * cost.  *SCANNED (may be NULL) adds the bytes read; TICK (may be NULL)
 * hears the bytes done every 256 MiB. */
rk_err rk_probe_scan_nonzero(const char *path, uint64_t base, uint64_t off, uint64_t len, uint64_t row,
                             rk_probe_mark_fn mark, void *mctx, int stop_first, uint64_t *scanned,
                             void (*tick)(void *ctx, uint64_t done), void *tctx);

/* Whether [off, off+len) of the file or device at PATH reads as zero bytes;
 * regular files skip holes with SEEK_DATA/SEEK_HOLE.  *nonzero_at gets the
 * first non-zero byte's offset (when not zero).  *scanned (may be NULL)
 * adds the bytes actually read. */
rk_err rk_probe_range_is_zero(const char *path, uint64_t off, uint64_t len,
                              int *is_zero, uint64_t *nonzero_at, uint64_t *scanned);

/* What a file system at the start of a volume occupies: reads the first
 * 128 KiB through READ and recognises ext2/3/4, XFS and btrfs.  Returns 1
 * with *EXTENT and WHAT filled, 0 when nothing is recognised. */
int rk_probe_fs_extent(rk_err (*read)(void *ctx, void *buf, uint64_t len, uint64_t off), void *ctx,
                       uint64_t volume_size, uint64_t *extent, char *what, size_t whatlen);

/* ---- wiping ---- */

/* Removes the foreign signatures libblkid finds on PATH (file systems,
 * RAID metadata, partition tables), so a member is not also taken for what
 * it was; flushed before it returns. */
rk_err rk_probe_wipe_signatures(const char *path);

#endif
