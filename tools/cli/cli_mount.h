/* cli_mount.h: raid-assemble --mount: serves an assembled array's volume as
 * the one file DIR/volume over FUSE (libfuse3), until unmounted.
 *
 * All member I/O goes through rk_array (libmeta), so reads reconstruct on a
 * degraded array, writes keep redundancy and run the journal, and a member
 * failing is recorded as with --write.  One request is served at a time
 * (fuse_loop, single thread): rk_array calls are not made concurrently. */
#ifndef RK_CLI_MOUNT_H
#define RK_CLI_MOUNT_H

#include <stdint.h>
#include "rk_array.h"

struct cli_mount_stats {
	uint64_t bytes_read, bytes_written;
	uint64_t read_errors, write_errors;   /* requests answered EIO */
	uint64_t flushes;
};

/* Returns 1 when FUSE can be used here (/dev/fuse opens read-write), else 0
 * with WHY (may be NULL, WHYLEN bytes) saying why. */
int cli_mount_available(char *why, size_t whylen);

/* Mounts DIR (an existing, empty directory) and serves A's volume as
 * DIR/volume, read-only unless RW (A must then be open RK_ARRAY_RDWR),
 * until the file system is unmounted (fusermount3 -u DIR, umount) or the
 * process gets SIGINT, SIGTERM or SIGHUP (then it unmounts itself).
 * FSNAME names the mount in /proc/mounts ("raidkit:UUID").  READY (may be
 * NULL) is called once the mount is live.  Returns 0 after a clean unmount,
 * -1 when mounting failed (the reason printed with cli_err).  Flushes the
 * array (rk_array_flush) on every fsync and before returning; the caller
 * closes A. */
int cli_mount_serve(rk_array *a, const char *dir, int rw, const char *fsname, void (*ready)(void *ctx),
                    void *ctx, struct cli_mount_stats *st);

#endif
