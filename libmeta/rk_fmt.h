/* rk_fmt.h: the metadata formats raidkit recognises, as one ops table (in
 * the spirit of libblkid's superblocks/ idmag tables and mdadm's
 * superswitch).
 *
 * rk_meta_fmts[] lists them, raidkit's own format first; a tool walks the
 * table to show everything a member carries.  Entries:
 *   "raidkit"  our superblock, both copies (rk_sb_read; printed by rk_print)
 *   "md1"      Linux md 1.0 / 1.1 / 1.2 superblocks, decoded natively
 *   "md0.90"   Linux md 0.90 superblocks (little-endian), decoded natively
 *   "blkid"    everything else libblkid knows (DDF, Intel IMSM, other
 *              firmware RAID, file systems, partition tables)
 * Every decoder is bounds-checked and treats the member as hostile.
 */
#ifndef RK_FMT_H
#define RK_FMT_H

#include <stdint.h>
#include <stdio.h>

#include "rk_dev.h"
#include "rk_err.h"
#include "rk_json.h"
#include "rk_probe.h"

struct rk_meta_fmt {
	const char *name;          /* "raidkit", "md1", "md0.90", "blkid" */
	const char *desc;          /* in words */
	/* Cheap recognition: fills R (found = 1) when the format is there;
	 * RK_OK with R->found = 0 when it is not; errors only for I/O/memory. */
	rk_err (*probe)(rk_dev *d, const char *path, struct rk_probe_result *r);
	/* Full decode into a format-specific object (freed by release).
	 * RK_E_NOSB when the format is not there. */
	rk_err (*decode)(rk_dev *d, const char *path, void **out);
	void   (*print_text)(FILE *f, const void *obj, const char *ind);
	void   (*print_json)(rk_json *j, const void *obj);   /* one object */
	void   (*release)(void *obj);
};

/* NULL-terminated; raidkit first. */
extern const struct rk_meta_fmt *const rk_meta_fmts[];
/* The entry named NAME, or NULL. */
const struct rk_meta_fmt *rk_meta_fmt_find(const char *name);

/* ---- md 1.x (native) ---- */
#define RK_MD_MAGIC       0xa92b4efcu
#define RK_MD1_MAX_DEV    1920u      /* dev_roles that fit a 4 KiB read after the 256-byte header */
#define RK_MD_ROLE_SPARE  0xffffu
#define RK_MD_ROLE_FAULTY 0xfffeu
#define RK_MD_ROLE_JOURNAL 0xfffdu

struct rk_md1 {
	unsigned minor;            /* 0, 1, 2: where it was found (end, 0, 4096) */
	uint64_t at;               /* byte offset of the superblock */
	uint32_t feature_map;
	uint8_t  set_uuid[16];
	char     set_name[33];
	uint64_t ctime, utime;     /* seconds (low 40 bits on disk) */
	int32_t  level;
	uint32_t layout;
	uint64_t size;             /* sectors used per device */
	uint32_t chunksize;        /* sectors */
	uint32_t raid_disks;
	uint32_t new_level, delta_disks, new_layout, new_chunk;
	uint64_t reshape_position;
	uint64_t data_offset, data_size, super_offset, recovery_offset;  /* sectors */
	uint32_t dev_number;
	uint8_t  device_uuid[16];
	uint64_t events, resync_offset;
	uint32_t sb_csum, csum_calc;
	int      csum_ok;
	uint32_t max_dev;
	uint16_t dev_roles[RK_MD1_MAX_DEV];
};
/* Decodes an md 1.x superblock from BUF (LEN >= 256) read at byte AT.
 * RK_E_NOSB without the magic/major 1; RK_E_CORRUPT when max_dev does not
 * fit LEN.  A bad checksum is reported in csum_ok, not refused (examine
 * shows it). */
rk_err rk_md1_decode(struct rk_md1 *m, const uint8_t *buf, size_t len, uint64_t at);
/* Reads the first md 1.x superblock of D: 1.2 (4096), 1.1 (0), 1.0 (end). */
rk_err rk_md1_read(rk_dev *d, struct rk_md1 *m);

/* ---- md 0.90 (native, little-endian) ---- */
struct rk_md090_disk { uint32_t number, major, minor, raid_disk, state; };
struct rk_md090 {
	uint64_t at;
	uint32_t major, minor, patch;
	uint8_t  uuid[16];
	uint32_t ctime, utime;
	int32_t  level;
	uint32_t size_kib, nr_disks, raid_disks, md_minor;
	uint32_t state, active, working, failed, spare;
	uint32_t sb_csum, csum_calc;
	int      csum_ok;
	uint64_t events;
	uint32_t layout, chunk_size;
	struct rk_md090_disk disks[27], this_disk;
};
rk_err rk_md090_decode(struct rk_md090 *m, const uint8_t *buf, size_t len, uint64_t at);
rk_err rk_md090_read(rk_dev *d, struct rk_md090 *m);

#endif
