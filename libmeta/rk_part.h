/* rk_part.h: members inside whole disks (spec/partitions.md).
 *
 * A whole disk or disk image holding a partition table (MBR, GPT) is
 * looked into: each partition is a candidate member, named PATH:pN
 * (partition N as libblkid numbers it, from 1).  The name is accepted
 * wherever a MEMBER is: rk_member_open resolves it.  Partitions are served
 * read-only.
 */
#ifndef RK_PART_H
#define RK_PART_H

#include <stdint.h>

#include "rk_dev.h"
#include "rk_err.h"

/* Opens member NAME: a path as rk_dev_open does, or PATH:pN when NAME
 * itself does not exist and PATH holds partition N: a device of that
 * partition's bytes, read-only (a writable open is refused, RK_E_NOTSUP,
 * naming the partition).  Errors name NAME. */
rk_err rk_member_open(rk_dev **out, const char *name, unsigned flags);

/* The partitions of PATH as member names ("PATH:p1", ...): *NAMES a
 * malloc'd array of *N malloc'd strings (free with rk_part_list_free);
 * *N 0 when PATH holds no partition table.  Errors only for memory. */
rk_err rk_part_list(const char *path, char ***names, uint32_t *n);
void   rk_part_list_free(char **names, uint32_t n);

#endif
