/* cli_fscheck.h: what file system a recovered volume holds and whether its
 * read-only checker accepts it (raid-recover --detect's proof).  A volume
 * with no file system of its own but a partition table (a hardware RAID
 * volume is a whole disk) has those of its partitions identified and
 * checked, each from a copy of its bytes. */
#ifndef RK_CLI_FSCHECK_H
#define RK_CLI_FSCHECK_H

#include <stdint.h>

#include "rk_array.h"

#define FSC_MAX 4u                   /* the whole volume, or its first partitions */
#define FSC_WHOLE_MAX (4ull << 30)   /* regions up to this are copied whole to be checked */
#define FSC_HEAD (64ull << 20)       /* of larger ones, this much is copied to be identified */

/* One region of the volume: the whole of it or one partition. */
struct fs_check {
	uint32_t partition;        /* 0: the whole volume; N: partition N (libblkid's number, PATH:pN) */
	uint64_t offset, size;     /* the region, volume bytes */
	char     type[32];         /* libblkid's TYPE; "" none recognised */
	char     tool[64];         /* the checker and its options; "" none run or known */
	char     result[96];       /* words: "clean", "reported problems (exit 4)", why not checked */
	int      ran, status;      /* the checker ran, and its exit status */
	int      stopped;          /* the checker ran past its time and was killed */
};

struct fs_checks {
	char     table[16];        /* the partition table's type ("dos", "gpt"), "" none */
	uint32_t n;                /* entries of c: 0 when nothing was looked at */
	struct fs_check c[FSC_MAX];
};

/* Identifies the file system of the volume of ARR whose first bytes are
 * in the file PATH (WHOLE: all of it; else its first bytes only, and the
 * volume is not checked), and runs its read-only checker (e2fsck -fn,
 * fsck.vfat -n, ntfsfix -n, xfs_repair -n, btrfs check --readonly,
 * fsck.exfat -n) where installed, for a minute plus a second per 64 MiB
 * (RAIDKIT_CHECK_TIMEOUT).  When
 * no file system is found at the start and PATH holds a partition table,
 * each of the first FSC_MAX partitions inside the volume is copied to a
 * temporary file (up to 4 GiB of it; a larger one has its first 64 MiB
 * copied and is identified only) and looked at the same way: from PATH
 * when WHOLE (the members are not read a second time), else from ARR.
 * Nothing is written but the temporary files, removed before it returns. */
void fsc_volume(rk_array *arr, const char *path, int whole, struct fs_checks *out);

/* The worst outcome: 1 when a checker reported problems or was stopped. */
int fsc_any_problem(const struct fs_checks *f);
/* How many checkers reported problems or were stopped when none found
 * its file system clean; 0 when one did (or none ran). */
uint32_t fsc_all_failed(const struct fs_checks *f);

#endif
