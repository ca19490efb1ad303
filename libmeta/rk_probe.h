/* rk_probe.h: recognising what a member already holds (libblkid), and
 * foreign RAID metadata.  Used by mkraid's refusal and by discovery's
 * "foreign" classification. */
#ifndef RK_PROBE_H
#define RK_PROBE_H

#include <stddef.h>
#include "rk_err.h"
#include "rk_dev.h"

struct rk_probe_result {
	int  found;              /* 1 when something recognised is there */
	char type[64];           /* blkid TYPE ("ext4", "linux_raid_member", "ddf_raid_member", "dos", "gpt", "raidkit") */
	char usage[32];          /* blkid USAGE ("filesystem", "raid", "partition table", ...) */
	char uuid[64];           /* blkid UUID when present */
	char label[64];
	char version[32];
	char what[256];          /* in words: "an ext4 file system (UUID ...)" */
};

/* Probes PATH read-only: our superblock first (either copy), then libblkid's
 * superblock and partition-table probes. */
rk_err rk_probe_path(const char *path, struct rk_probe_result *r);

/* libblkid alone (no raidkit superblock check): what else PATH carries,
 * e.g. an md superblock left beside ours, or a file system. */
rk_err rk_probe_foreign(const char *path, struct rk_probe_result *r);

#endif
