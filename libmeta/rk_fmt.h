/* rk_fmt.h: the metadata formats raidkit recognises, as one ops table (in
 * the spirit of libblkid's superblocks/ idmag tables and mdadm's
 * superswitch).
 *
 * rk_meta_fmts[] lists them, raidkit's own format first; a tool walks the
 * table to show everything a member carries.  Entries, one file each:
 *   "raidkit"  our superblock, both copies (rk_sb_read; printed by rk_print)
 *   "md1"      Linux md 1.0 / 1.1 / 1.2 superblocks (fmt_md1.c)
 *   "md0.90"   Linux md 0.90 superblocks, either byte order (fmt_md090.c)
 *   "ddf"      SNIA DDF containers (fmt_ddf.c)
 *   "imsm"     Intel Matrix Storage / RST / VROC (fmt_imsm.c)
 *   "blkid"    everything else libblkid knows (other firmware RAID, file
 *              systems, partition tables)
 * Every decoder is bounds-checked and treats the member as hostile.
 *
 * Views.  A foreign format's decoded metadata is turned into views: one
 * struct rk_sb per array (volume) the member serves, in raidkit's terms,
 * with origin set (spec/foreign.md "Views").  Discovery groups views as it
 * groups raidkit superblocks, and an array opens read-only from them; no
 * view is ever encoded or written.  What a view's fields mean:
 *   array_uuid   the array's identity (md: set UUID; DDF: the virtual
 *                disk's GUID folded to 16 bytes; IMSM: family number,
 *                volume index)
 *   member_uuid  the member's identity, the same in every member's table
 *                (md: rk_view_slot_uuid(dev_number); DDF: the physical
 *                disk's GUID folded; IMSM: its serial folded)
 *   name, ctime, utime, level, layout (md's numbers), chunk (bytes; 0 for
 *   linear and RAID-1), nroles, data_offset and data_size (bytes on this
 *   member), volume_size, dev_size (the member's size), sb_offset (where
 *   the metadata was found)
 *   events       the generation to compare members by (md: events; DDF:
 *                the header's sequence number, as mdadm uses; IMSM:
 *                generation)
 *   roles[], nentries, this_role: the role table as this member's copy of
 *                the metadata says (ACTIVE, FAULTY, REBUILDING with the
 *                checkpoint, EMPTY for a role nobody serves; faulty
 *                members a format lists apart from the roles, and spares,
 *                past nroles); an ACTIVE entry with an all-zero member
 *                UUID means "served, by a member this copy does not name"
 *                (DDF RAID-10: each disk keeps its own leg's record), and
 *                a member claiming it at the same events is taken;
 *                this_role as in raidkit's superblock
 *   array_state  CLEAN, or ACTIVE when not stopped cleanly (parity may lag)
 *   feat_incompat RK_FEAT_INCOMPAT_RESHAPE with reshape_new/_pos/_flags
 *                when the array is mid-reshape; no other feature bit
 */
#ifndef RK_FMT_H
#define RK_FMT_H

#include <stdint.h>
#include <stdio.h>

#include "rk_dev.h"
#include "rk_err.h"
#include "rk_json.h"
#include "rk_probe.h"
#include "rk_sb.h"

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
	/* Foreign formats only (NULL for raidkit and blkid): the views OBJ
	 * (from decode) gives for a member of DEV_SIZE bytes, as a malloc'd
	 * array *OUT of *N (0 for a container member serving no volume).
	 * RK_E_CORRUPT with a sentence when fields contradict each other or
	 * the device; every view returned passes rk_view_check. */
	rk_err (*views)(const void *obj, uint64_t dev_size, struct rk_sb **out, uint32_t *n);
};

/* Where a view came from (struct rk_sb.origin). */
enum rk_origin {
	RK_ORIGIN_RAIDKIT = 0,
	RK_ORIGIN_MD090,
	RK_ORIGIN_MD1,
	RK_ORIGIN_DDF,
	RK_ORIGIN_IMSM,
	RK_ORIGIN_GEOMETRY,   /* no metadata: a geometry file (rk_geometry.h), "geometry file" */
};

/* The foreign metadata of one member: the first foreign format of the
 * table found on it, decoded, and its views. */
struct rk_foreign_read {
	const struct rk_meta_fmt *fmt;   /* NULL when no foreign format is there */
	void    *obj;                    /* fmt->decode's object (freed with fmt->release) */
	struct rk_sb *views;             /* nviews views (free()) */
	uint32_t nviews;
	char     why[512];               /* the format found but no usable view: why */
};
/* Reads D (named PATH) for foreign formats, raidkit's own not included.
 * RK_OK with OUT->fmt set when one was found (nviews may be 0, with why
 * saying so); RK_OK with fmt NULL when none; errors only for I/O and
 * memory.  OUT is always initialised; free it with rk_foreign_read_free. */
rk_err rk_foreign_read(rk_dev *d, const char *path, struct rk_foreign_read *out);
void   rk_foreign_read_free(struct rk_foreign_read *r);
/* Whether view V can be served from a member of DEV_SIZE bytes: origin
 * set, geometry valid for the engine, data area within the device, role
 * table consistent, reshape fields valid, all overflow-safe.  RK_E_CORRUPT
 * with a sentence naming the field. */
rk_err rk_view_check(const struct rk_sb *v, uint64_t dev_size);
/* Which disk each member image is, for formats that name a disk only by
 * the serial number the device reports (IMSM), which an image file does
 * not carry: SPEC "PATH=SERIAL[,PATH=SERIAL...]" (a PATH without '/'
 * matches the file name alone).  Process-wide, copied; NULL or "" clears.
 * Tools set it from --disk-serial. */
rk_err rk_fmt_set_disk_serials(const char *spec);
const char *rk_fmt_disk_serials(void);   /* the SPEC set, or NULL */

/* Writers' refusal: RK_E_NOTSUP with a sentence naming D and its format
 * ("... does not DOING arrays other software made") when D carries
 * foreign metadata raidkit reads; RK_OK when it does not. */
rk_err rk_foreign_refuse(rk_dev *d, const char *doing);
/* "raidkit", "md 1.2", "DDF", ...: V's origin in words. */
const char *rk_view_origin_name(const struct rk_sb *v);

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
/* md 1.x feature_map bits */
#define RK_MD_FEAT_BITMAP            0x1u
#define RK_MD_FEAT_RECOVERY_OFFSET   0x2u
#define RK_MD_FEAT_RESHAPE_ACTIVE    0x4u
#define RK_MD_FEAT_BAD_BLOCKS        0x8u
#define RK_MD_FEAT_REPLACEMENT       0x10u
#define RK_MD_FEAT_RESHAPE_BACKWARDS 0x20u
#define RK_MD_FEAT_NEW_OFFSET        0x40u
#define RK_MD_FEAT_RECOVERY_BITMAP   0x80u
#define RK_MD_FEAT_CLUSTERED         0x100u
#define RK_MD_FEAT_JOURNAL           0x200u
#define RK_MD_FEAT_PPL               0x400u
#define RK_MD_FEAT_MULTIPLE_PPLS     0x800u
#define RK_MD_FEAT_RAID0_LAYOUT      0x1000u

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
	int32_t  new_offset;       /* sectors added to data_offset by the reshape (NEW_OFFSET) */
	int32_t  bitmap_offset;    /* sectors from the superblock (BITMAP_OFFSET) */
	uint8_t  bblog_shift;
	uint16_t bblog_size;       /* sectors of the bad-block log (BAD_BLOCKS) */
	int32_t  bblog_offset;     /* sectors from the superblock */
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
/* md 1.x's checksum of the SIZE bytes at B (header and role table,
 * 256 + 2 * max_dev), the stored checksum's field counted as zero. */
uint32_t rk_md1_csum(const uint8_t *b, size_t size);
/* Reads the first md 1.x superblock of D: 1.2 (4096), 1.1 (0), 1.0 (end). */
rk_err rk_md1_read(rk_dev *d, struct rk_md1 *m);

/* ---- md 0.90 (native, little-endian) ---- */
struct rk_md090_disk { uint32_t number, major, minor, raid_disk, state; };
struct rk_md090 {
	uint64_t at;
	int      big_endian;       /* written by a big-endian host */
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
	uint64_t reshape_position; /* minor 91: reshape in progress (sectors) */
	uint32_t new_level, delta_disks, new_layout, new_chunk;
	struct rk_md090_disk disks[27], this_disk;
};
rk_err rk_md090_decode(struct rk_md090 *m, const uint8_t *buf, size_t len, uint64_t at);
rk_err rk_md090_read(rk_dev *d, struct rk_md090 *m);

#endif
