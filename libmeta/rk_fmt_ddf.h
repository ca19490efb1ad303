/* rk_fmt_ddf.h: SNIA DDF metadata as fmt_ddf.c decodes it (the "ddf"
 * entry of rk_fmt.h's table).  spec/ddf.md lists every byte read and how
 * the fields map to views.
 *
 * DDF lives at the end of a member: an anchor header in the last sector
 * points at a primary and a secondary header, each followed by its copy of
 * the sections (controller data, physical disk records, virtual disk
 * records, configuration records, this disk's data).  All numbers are
 * big-endian; every structure carries a CRC-32 (crc field read as
 * 0xffffffff, zlib's polynomial, no final inversion).
 *
 * The decode object: what could be read, each checksum's verdict, and in
 * why/err the first reason the metadata cannot be used (empty when it can).
 * Decoding fails only when there is no anchor (RK_E_NOSB), for I/O and for
 * memory: a damaged container is decoded as far as it goes so that
 * raid-examine can show it, and views() refuses it with that sentence. */
#ifndef RK_FMT_DDF_H
#define RK_FMT_DDF_H

#include <stdint.h>

#include "rk_err.h"

#define RK_DDF_GUID_LEN      24u
#define RK_DDF_HEADER_MAGIC  0xDE11DE11u
#define RK_DDF_CTRL_MAGIC    0xAD111111u
#define RK_DDF_PHYS_MAGIC    0x22222222u
#define RK_DDF_DATA_MAGIC    0x33333333u
#define RK_DDF_VIRT_MAGIC    0xDDDDDDDDu
#define RK_DDF_CONF_MAGIC    0xEEEEEEEEu
#define RK_DDF_SPARE_MAGIC   0x55555555u
#define RK_DDF_NONE32        0xFFFFFFFFu   /* an unused refnum / LBA word */

/* Sections of a header, in the header's order. */
enum { RK_DDF_S_CONTROLLER, RK_DDF_S_PHYS, RK_DDF_S_VIRT, RK_DDF_S_CONFIG, RK_DDF_S_DATA,
       RK_DDF_S_BBM, RK_DDF_S_DIAG, RK_DDF_S_VENDOR, RK_DDF_NSECT };
/* Bounds of this decoder (beyond them a container is refused). */
#define RK_DDF_MAX_SECT_SECTORS 16384u   /* 8 MiB per section */
#define RK_DDF_MAX_MPPE         4096u    /* the spec's largest max_primary_element_entries */
#define RK_DDF_MAX_CONFS        256u     /* configuration records kept */

/* PD type bits, PD state bits (physical disk records). */
#define RK_DDF_PD_ACTIVE_IN_VD 0x2u
#define RK_DDF_PD_GLOBAL_SPARE 0x4u
#define RK_DDF_PD_SPARE        0x8u
#define RK_DDF_PD_ONLINE       0x1u
#define RK_DDF_PD_FAILED       0x2u
#define RK_DDF_PD_REBUILDING   0x4u
#define RK_DDF_PD_TRANSITION   0x8u
#define RK_DDF_PD_MISSING      0x40u

struct rk_ddf_header {
	int      found;          /* read, and the magic is there */
	int      crc_ok;
	int      usable;         /* found, checksum right, agrees with the anchor */
	char     why[160];       /* why not usable */
	uint64_t lba;            /* where it was read (sectors) */
	uint32_t crc, crc_calc;
	uint8_t  guid[RK_DDF_GUID_LEN];
	char     revision[9];
	uint32_t seq, timestamp;
	uint8_t  openflag, foreignflag, enforcegroups, type;
	uint64_t primary_lba, secondary_lba, workspace_lba;
	uint32_t workspace_len;
	uint16_t max_pd_entries, max_vd_entries, max_partitions, config_record_len, mppe;
	uint32_t sect_off[RK_DDF_NSECT], sect_len[RK_DDF_NSECT];   /* sectors from the header */
};

struct rk_ddf_crc {
	int      read;           /* the section was read */
	int      ok;
	uint32_t stored, calc;
};

struct rk_ddf_pd {               /* a used physical disk record entry */
	uint32_t index;          /* in the record list */
	uint8_t  guid[RK_DDF_GUID_LEN];
	uint32_t refnum;
	uint16_t type, state;
	uint64_t config_size;    /* sectors usable for data */
	char     path[19];
};

struct rk_ddf_vd {               /* a used virtual disk record entry */
	uint32_t index;
	uint8_t  guid[RK_DDF_GUID_LEN];
	uint16_t unit, guid_crc, type;
	uint8_t  state, init_state;
	char     name[17];       /* as stored (NULs and spaces kept), NUL-terminated */
};

struct rk_ddf_conf {             /* a virtual disk configuration record */
	uint32_t record;         /* its number in the configuration section */
	struct rk_ddf_crc crc;
	uint8_t  guid[RK_DDF_GUID_LEN];
	uint32_t timestamp, seqnum;
	uint16_t prim_elmnt_count;
	uint8_t  chunk_shift, prl, rlq, sec_elmnt_count, sec_elmnt_seq, srl;
	uint64_t blocks, array_blocks;   /* sectors per member, of the VD */
	uint32_t nrefs;          /* used entries found (<= prim_elmnt_count) */
	uint32_t *refnum;        /* nrefs: the used entries in order */
	uint64_t *lba;           /* nrefs: where the VD starts on each (sectors) */
	uint32_t *slot;          /* nrefs: their places in the record's list */
};

struct rk_ddf {
	uint64_t dev_size;
	struct rk_ddf_header anchor, primary, secondary;
	int      active;         /* 1 primary, 2 secondary, 0 none usable */
	char     active_why[200];
	struct rk_ddf_crc crc_ctrl, crc_phys, crc_virt, crc_data;
	/* controller data */
	uint8_t  ctrl_guid[RK_DDF_GUID_LEN];
	uint16_t ctrl_vendor_id, ctrl_device_id, ctrl_sub_vendor_id, ctrl_sub_device_id;
	char     ctrl_product_id[17];
	/* physical and virtual disk records (used entries only) */
	uint16_t pd_used, pd_max;
	uint32_t npds;
	struct rk_ddf_pd *pds;
	uint16_t vd_populated, vd_max;
	uint32_t nvds;
	struct rk_ddf_vd *vds;
	/* configuration records of this disk (one per VD part it serves) */
	uint32_t nconfs, nspare_records, nother_records;
	struct rk_ddf_conf *confs;
	/* this disk's data */
	uint8_t  dd_guid[RK_DDF_GUID_LEN];
	uint32_t dd_refnum;
	uint8_t  dd_forced_ref, dd_forced_guid;
	int      this_pd;        /* index into pds of this disk, -1 when not listed */
	/* the first reason the metadata cannot be used ("" when usable) */
	rk_err   err;
	char     why[320];
};

/* The active header (NULL when none is usable). */
const struct rk_ddf_header *rk_ddf_active(const struct rk_ddf *m);
/* The md level and layout of configuration C (mdadm's layout_ddf2md):
 * 0 with *LEVEL, *LAYOUT, *NROLES set; -1 for a DDF level md has no
 * equivalent for. */
int rk_ddf_md_level(const struct rk_ddf_conf *c, int32_t *level, uint32_t *layout, uint32_t *nroles);

#endif
