/* rk_fmt_imsm.h: Intel IMSM (Matrix Storage / RST / VROC) metadata as the
 * decoder of fmt_imsm.c gives it (the object of rk_fmt_imsm's decode):
 * every field of the MPB (Metadata Parameter Block) raidkit reads, in
 * host order, sizes in 512-byte sectors as on disk.  spec/imsm.md has the
 * byte layout and how a volume becomes a view. */
#ifndef RK_FMT_IMSM_H
#define RK_FMT_IMSM_H

#include <stddef.h>
#include <stdint.h>

#include "rk_dev.h"
#include "rk_err.h"

#define RK_IMSM_SIG          "Intel Raid ISM Cfg Sig. "
#define RK_IMSM_SIG_LEN      24u
#define RK_IMSM_SERIAL_LEN   16u
#define RK_IMSM_HDR_SIZE     0xd8u       /* the MPB header, before the disk table */
#define RK_IMSM_DISK_SIZE    48u         /* one disk table entry */
#define RK_IMSM_DEV_HDR      80u         /* imsm_dev up to its imsm_vol */
#define RK_IMSM_VOL_HDR      32u         /* imsm_vol up to its first map */
#define RK_IMSM_MAP_HDR      48u         /* imsm_map up to disk_ord_tbl */
#define RK_IMSM_MAX_VOLS     16u         /* volumes decoded (firmware makes 2 to 4) */
#define RK_IMSM_MPB_MAX      (2210u * 512u)  /* mdadm's MPB_SECTOR_CNT: the most an MPB may take */
/* disk status bits */
#define RK_IMSM_DISK_SPARE      0x01u
#define RK_IMSM_DISK_CONFIGURED 0x02u
#define RK_IMSM_DISK_FAILED     0x04u
#define RK_IMSM_DISK_JOURNAL    0x2000000u
/* disk_ord_tbl: the disk index in the low 24 bits, flags above */
#define RK_IMSM_ORD_REBUILD  (1u << 24)
#define RK_IMSM_ORD_IDX(o)   ((o) & 0xffffffu)
/* map_state */
enum { RK_IMSM_MAP_NORMAL = 0, RK_IMSM_MAP_UNINIT, RK_IMSM_MAP_DEGRADED, RK_IMSM_MAP_FAILED };
/* migr_type (with migr_state 1) */
enum { RK_IMSM_MIGR_INIT = 0, RK_IMSM_MIGR_REBUILD, RK_IMSM_MIGR_VERIFY, RK_IMSM_MIGR_GEN,
       RK_IMSM_MIGR_STATE_CHANGE, RK_IMSM_MIGR_REPAIR };
#define RK_IMSM_DEV_VERIFY_AND_FIX 0x800u   /* dev status: a verify that repairs */
#define RK_IMSM_VOL_DIRTY          0x01u    /* vol dirty bit */
#define RK_IMSM_BBM_SIG            0xabadb10cu

struct rk_imsm_disk {
	uint8_t  serial[RK_IMSM_SERIAL_LEN];   /* as on disk, NUL-padded */
	uint64_t total_blocks;                 /* sectors (lo | hi << 32) */
	uint32_t scsi_id, status, owner_cfg_num;
};

struct rk_imsm_map {
	uint64_t pba_of_lba0;          /* sectors: the volume's start on each member */
	uint64_t blocks_per_member;    /* sectors of the member's extent */
	uint64_t num_data_stripes;
	uint16_t blocks_per_strip;     /* sectors per chunk */
	uint8_t  map_state, raid_level, num_members, num_domains, failed_disk_num, ddf;
	uint32_t ord[256];             /* disk_ord_tbl[num_members] */
};

struct rk_imsm_dev {
	uint8_t  volume[RK_IMSM_SERIAL_LEN];   /* the name, NUL-padded */
	uint64_t size;                 /* sectors the volume presents */
	uint32_t status, reserved_blocks;
	uint16_t my_vol_raid_dev_num;  /* mdadm's "Volume ID" */
	uint8_t  rwh_policy;
	uint64_t curr_migr_unit;
	uint32_t checkpoint_id;
	uint8_t  migr_state, migr_type, dirty, fs_state;
	uint16_t verify_errors, bad_blocks;
	uint32_t off, len;             /* where it lies in the MPB */
	struct rk_imsm_map map[2];     /* [0] current (the target of a migration), [1] the source (migr_state) */
	uint8_t  uuid[16];             /* mdadm's volume UUID */
};

struct rk_imsm {
	uint64_t at;                   /* byte offset of the anchor sector (size - 1024) */
	uint64_t dev_size;
	char     version[9];           /* "1.2.01", after the signature */
	uint32_t check_sum, csum_calc;
	int      csum_ok;
	uint32_t mpb_size, family_num, generation_num, error_log_size, attributes;
	uint8_t  num_disks, num_raid_devs, error_log_pos;
	uint32_t cache_size, orig_family_num, pwr_cycle_count, bbm_log_size;
	uint16_t num_raid_devs_created;
	uint64_t creation_time;        /* seconds since the epoch */
	uint8_t  container_uuid[16];   /* mdadm's container UUID */
	struct rk_imsm_disk disks[255];
	uint32_t nvols;                /* = num_raid_devs */
	struct rk_imsm_dev vols[RK_IMSM_MAX_VOLS];
	/* the bad-block log (noticed and reported, not used) */
	int      bbm_present;
	uint32_t bbm_signature, bbm_entries, bbm_off;
	/* which disk of the table this member is: -1 when it cannot be told
	 * (the MPB is the same on every member; see spec/imsm.md) */
	int      this_disk;
	char     this_how[128];        /* how it was told, or why not */
};

/* Decodes an MPB of LEN bytes (already put together: anchor sector, then
 * the extended sectors) read from a member of DEV_SIZE bytes with the
 * anchor at AT.  RK_E_NOSB without the signature; RK_E_CORRUPT with a
 * sentence when a count or offset does not fit.  A wrong checksum is
 * reported in csum_ok, not refused.  this_disk is left -1. */
rk_err rk_imsm_decode(struct rk_imsm *m, const uint8_t *mpb, size_t len, uint64_t at, uint64_t dev_size);
/* Reads and decodes the MPB of D (named PATH, may be NULL), and tells
 * which disk D is (rk_imsm.this_disk): PATH named in the disk serials the user gave (rk_fmt_set_disk_serials)
 * ("PATH=SERIAL,..."), a block device's own serial, PATH equal to a serial
 * (mdadm's IMSM_DEVNAME_AS_SERIAL), or the only disk of the table. */
rk_err rk_imsm_read(rk_dev *d, const char *path, struct rk_imsm *m);
/* The md level and layout of map MAP (mdadm's mapping); -1 when none. */
int rk_imsm_md_level(const struct rk_imsm_map *map, int32_t *level, uint32_t *layout);

#endif
