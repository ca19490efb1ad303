/* rk_sb.h: the raidkit superblock: native struct, codec, copies.
 *
 * The on-disk layout is spec/format.md; this native struct is never cast
 * onto disk bytes.  rk_sb_decode()/rk_sb_encode() convert with explicit
 * little-endian get/put helpers (rk_le.h); tests/unit/test_sb.c pins every
 * offset.
 *
 * Member layout (bytes):
 *   [0, 4096)                     untouched (partition tables, boot code)
 *   [4096, 4096+RK_SB_AREA)       primary superblock copy
 *   ...                           journal / future metadata (journal_offset)
 *   [data_offset, +data_size)     data area used by the array
 *   [backup_offset, +RK_SB_AREA)  backup copy; backup_offset =
 *                                 align_down(device_size, 4096) - RK_SB_AREA
 */
#ifndef RK_SB_H
#define RK_SB_H

#include <stddef.h>
#include <stdint.h>
#include "rk_err.h"
#include "rk_dev.h"

#define RK_SB_MAGIC        "RAIDKIT\0"      /* 8 bytes at offset 0 */
#define RK_SB_MAGIC_LEN    8
#define RK_SB_VERSION      1u
#define RK_SB_HEADER_SIZE  512u             /* fixed header, then the role table */
#define RK_SB_ROLE_SIZE    32u              /* one role table entry */
#define RK_SB_ALIGN        4096u
#define RK_SB_AREA         65536u           /* bytes reserved for each copy */
#define RK_SB_PRIMARY_OFF  4096u
#define RK_SB_MAX_ROLES    2032u            /* (RK_SB_AREA - header) / role size */
#define RK_SB_NAME_LEN     32u              /* UTF-8, NUL-padded, not necessarily NUL-terminated on disk */
#define RK_DATA_OFFSET_DEFAULT (1024u * 1024u)

/* Levels: md's numbers, linear is -1. */
#define RK_LEVEL_LINEAR   (-1)

/* Array state. */
#define RK_ARRAY_CLEAN    0u   /* no write in flight */
#define RK_ARRAY_ACTIVE   1u   /* open for writing: parity may lag (resync / journal replay needed) */

/* Role states. */
enum rk_role_state {
	RK_ROLE_EMPTY      = 0,  /* never filled or removed (missing) */
	RK_ROLE_ACTIVE     = 1,
	RK_ROLE_FAULTY     = 2,  /* failed: member marked out by the others */
	RK_ROLE_REBUILDING = 3,  /* being rebuilt; checkpoint = bytes of the data area done */
	RK_ROLE_SPARE      = 4,  /* entries past nroles only */
	RK_ROLE__COUNT
};

/* Feature masks.  A reader refuses unknown incompat bits; it may read but
 * must not write with unknown ro_compat bits; it ignores unknown compat bits. */
#define RK_FEAT_COMPAT_SUPP     0ull
#define RK_FEAT_RO_COMPAT_SUPP  0ull
#define RK_FEAT_INCOMPAT_JOURNAL 0x1ull  /* journal_offset/size valid (write-hole protection) */
#define RK_FEAT_INCOMPAT_RESHAPE 0x2ull  /* reshape fields valid: reshape in progress */
#define RK_FEAT_INCOMPAT_SUPP   (RK_FEAT_INCOMPAT_JOURNAL | RK_FEAT_INCOMPAT_RESHAPE)

struct rk_role {
	uint8_t  member_uuid[16];
	uint32_t state;          /* enum rk_role_state */
	uint32_t flags;          /* reserved, 0 */
	uint64_t checkpoint;     /* REBUILDING: data-area bytes rebuilt so far */
};

struct rk_geom_desc {        /* a geometry as recorded (current or reshape target) */
	int32_t  level;
	uint32_t layout;         /* md's layout numbers (spec/layouts.md) */
	uint64_t chunk;          /* stripe unit in bytes */
	uint32_t nroles;
	uint64_t data_offset;
	uint64_t data_size;      /* bytes per member */
};

struct rk_sb {
	uint32_t version;
	uint32_t sb_bytes;       /* bytes covered by the CRC: header + table, rounded up to 4096 */
	uint64_t feat_compat, feat_ro_compat, feat_incompat;
	uint8_t  array_uuid[16];
	uint8_t  member_uuid[16];
	char     name[RK_SB_NAME_LEN + 1];   /* NUL-terminated in memory */
	uint64_t ctime, utime;   /* seconds since the Unix epoch, UTC */
	int32_t  level;
	uint32_t layout;
	uint64_t chunk;
	uint32_t nroles;         /* roles in the array */
	uint32_t nentries;       /* role table entries: nroles + spares */
	uint32_t this_role;      /* index into roles[]; RK_ROLE_NONE for a spare without role */
	uint32_t array_state;    /* RK_ARRAY_* */
	uint64_t events;
	uint64_t data_offset, data_size;
	uint64_t volume_size;    /* bytes the array presents */
	uint64_t sb_offset;      /* where this copy lives */
	uint64_t dev_size;       /* member size when written */
	uint64_t journal_offset, journal_size;
	/* reshape (valid with RK_FEAT_INCOMPAT_RESHAPE) */
	struct rk_geom_desc reshape_new;
	uint64_t reshape_pos;    /* volume bytes already in the new geometry */
	uint32_t reshape_flags;
	/* scrub resume point (volume byte; 0 = none) */
	uint64_t scrub_pos;
	struct rk_role roles[RK_SB_MAX_ROLES];
};
#define RK_ROLE_NONE 0xFFFFFFFFu

/* Decodes one copy from BUF (LEN bytes, at least RK_SB_HEADER_SIZE) read at
 * member byte offset AT of a device of DEV_SIZE bytes.  Checks magic,
 * version, incompat features, CRC, and every field against every other and
 * against DEV_SIZE (overflow-safe); a copy whose sb_offset is not AT is
 * refused.  On error the detail (rk_errmsg) says which field and why. */
rk_err rk_sb_decode(struct rk_sb *sb, const uint8_t *buf, size_t len, uint64_t at, uint64_t dev_size);

/* Encodes SB into BUF (LEN >= sb->sb_bytes), computing sb_bytes (if 0) and
 * CRC; fields are validated first, as rk_sb_decode would. */
rk_err rk_sb_encode(const struct rk_sb *sb, uint8_t *buf, size_t len);

/* Validates a native struct (what decode checks after parsing). */
rk_err rk_sb_validate(const struct rk_sb *sb, uint64_t dev_size);

/* Bytes needed for NENTRIES role entries, rounded to RK_SB_ALIGN. */
uint32_t rk_sb_bytes_for(uint32_t nentries);
/* Offsets of the two copies on a device of DEV_SIZE bytes; 0 if too small. */
uint64_t rk_sb_primary_offset(uint64_t dev_size);
uint64_t rk_sb_backup_offset(uint64_t dev_size);

/* ---- both copies on a member (sbio.c) ---- */
enum rk_copy_status { RK_COPY_OK = 0, RK_COPY_ABSENT, RK_COPY_BAD };
struct rk_sb_copy {
	uint64_t offset;
	enum rk_copy_status status;
	rk_err err;              /* why BAD/ABSENT */
	char   why[256];         /* the sentence */
	struct rk_sb *sb;        /* decoded when OK (owned) */
};
struct rk_sb_read {
	struct rk_sb_copy copy[2];   /* [0] primary, [1] backup */
	int chosen;                  /* index of the copy to trust, -1 if none */
	char why[256];               /* reason for the choice */
};
/* Reads and decodes both copies; chooses the valid copy with the higher
 * events (primary on a tie, and a mismatch between equal-event copies is
 * noted in why).  Returns RK_E_NOSB when neither copy is valid. */
rk_err rk_sb_read(rk_dev *d, struct rk_sb_read *out);
void   rk_sb_read_free(struct rk_sb_read *r);
/* Writes SB to both copies in the crash-safe order of spec/format.md:
 * backup, flush, primary, flush. */
rk_err rk_sb_write(rk_dev *d, const struct rk_sb *sb);

#endif
