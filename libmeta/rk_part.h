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

#include <stddef.h>
#include <stdint.h>

#include "rk_dev.h"
#include "rk_err.h"

/* Opens member NAME: a path as rk_dev_open does, or PATH:pN when NAME
 * itself does not exist and PATH holds partition N: a device of that
 * partition's bytes, read-only (a writable open is refused, RK_E_NOTSUP,
 * naming the partition).  Errors name NAME. */
rk_err rk_member_open(rk_dev **out, const char *name, unsigned flags);

/* The partitions of PATH as member names ("PATH:p1", ...): *NAMES a
 * malloc'd array of *N malloc'd strings (free with rk_part_list_free),
 * in libblkid's order, extended MBR containers left out, partitions that
 * cannot be served (past the end) included (rk_member_open says why).
 * *N 0 when PATH holds no partition table.  Whether PATH is a member as
 * a whole instead (metadata of its own, a table inside an md 1.0 mirror's
 * volume or left over from before) is the caller's decision (discovery:
 * spec/partitions.md).  Errors only for memory. */
rk_err rk_part_list(const char *path, char ***names, uint32_t *n);
void   rk_part_list_free(char **names, uint32_t n);

/* ---- the table itself (raid-examine's listing) ---- */

/* One partition as libblkid reads it; offsets in bytes on the whole disk. */
struct rk_part {
	uint32_t number;         /* libblkid's partno: N of PATH:pN */
	uint64_t start, size;    /* bytes (libblkid's 512-byte sectors * 512) */
	char     type[40];       /* MBR: "0xfd"; GPT: the type GUID */
	char     type_words[32]; /* "Linux RAID", "Linux swap", ...; "" when not known */
	char     label[80];      /* GPT partition name as found (may be binary: print escaped); "" */
	int      logical;        /* an MBR logical partition (inside the extended one) */
	char     problem[200];   /* "" or why it is not served: it runs past the end */
};

/* A disk's partition table.  Extended MBR containers are left out (their
 * logical partitions are in). */
struct rk_part_table {
	char     type[16];       /* libblkid's PTTYPE: "gpt", "dos", ...; "" when none */
	char     id[40];         /* the table's UUID or disk identifier; "" */
	uint64_t disk_size;      /* bytes */
	uint32_t n;
	struct rk_part *parts;   /* n entries in libblkid's order */
};

/* Reads PATH's partition table read-only with libblkid.  RK_OK with
 * T->n 0 and T->type "" when PATH holds none (or is neither a regular file
 * nor a block device, or cannot be opened); errors only for memory.  A
 * partition running past the end of PATH is listed with PROBLEM set. */
rk_err rk_part_table_read(const char *path, struct rk_part_table *t);
void   rk_part_table_free(struct rk_part_table *t);

/* Splits NAME of the form PATH:pN (N decimal from 1, no leading zero)
 * into PATH (CAP bytes) and *NUMBER: 1 when it has that form (and PATH
 * fits), else 0.  Says nothing about whether either exists. */
int rk_part_name_parse(const char *name, char *path, size_t cap, uint32_t *number);

/* For code that opens by path (libblkid probes): when NAME does not exist
 * and is a partition of a disk, *PATH (malloc'd), *OFFSET and *SIZE (bytes)
 * locate it and 1 is returned; 0 when NAME is an ordinary path (or names
 * no servable partition: rk_member_open says why). */
int rk_part_locate(const char *name, char **path, uint64_t *offset, uint64_t *size);

/* 1 when the 512 bytes at P are a GPT header: signature, header size 92 to
 * 512, and a good CRC32 over that size (the CRC field taken as zero). */
int rk_gpt_header_ok(const uint8_t *p);

#endif
