/* rk_sb.h: the raidkit superblock: native struct, codec, copies.
 *
 * The on-disk layout is spec/format.md; this native struct is never cast
 * onto disk bytes.  rk_sb_decode()/rk_sb_encode() convert with explicit
 * little-endian get/put helpers (rk_le.h); tests/unit/test_sb_codec.c pins every
 * offset.
 *
 * A copy is a 512-byte header (field offsets in spec/format.md), then
 * nentries role entries of 32 bytes, zero-padded to sb_bytes (a multiple of
 * 4096); crc is zlib's crc32(0, copy, sb_bytes) with bytes 16..19 zeroed.
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
#include "rk_geom.h"

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

/* Levels: md's numbers, linear is RK_LEVEL_LINEAR (-1, rk_geom.h). */

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
#define RK_FEAT_INCOMPAT_JLOG   0x100ull /* unclean, journal records of version 2 (the log) */
#define RK_FEAT_INCOMPAT_SUPP   (RK_FEAT_INCOMPAT_JOURNAL | RK_FEAT_INCOMPAT_RESHAPE | RK_FEAT_INCOMPAT_JLOG)

/* reshape_flags bits (with RK_FEAT_INCOMPAT_RESHAPE). */
#define RK_RESHAPE_BACKWARDS    0x1u  /* data moves from the end down: reshape_pos counts from the volume end */
#define RK_RESHAPE_REVERTING    0x2u  /* being reverted: reshape_pos falls back to 0; bytes below it are still in the new geometry */
#define RK_RESHAPE_FLAGS_SUPP   (RK_RESHAPE_BACKWARDS | RK_RESHAPE_REVERTING)

/* The header's reserved tail: bytes [RK_SB_RESERVED_OFF, RK_SB_HEADER_SIZE).
 * Writers zero it.  A reader refuses non-zero reserved bytes unless the copy
 * carries compat/ro_compat bits it does not know (a newer writer's fields);
 * then they are kept in rk_sb.reserved so a re-encode is identical. */
#define RK_SB_RESERVED_OFF  276u
#define RK_SB_RESERVED_LEN  (RK_SB_HEADER_SIZE - RK_SB_RESERVED_OFF)

struct rk_role {
	uint8_t  member_uuid[16];
	uint32_t state;          /* enum rk_role_state */
	uint32_t flags;          /* reserved, 0 (kept as read, see RK_SB_RESERVED_OFF) */
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
	uint8_t  reserved[RK_SB_RESERVED_LEN];  /* zero unless unknown compat bits (see above) */
	/* not on disk: 0 for raidkit's own; a view of another format's
	 * metadata otherwise (rk_fmt.h "Views": enum rk_origin), never encoded
	 * or written */
	uint32_t origin;
	char     origin_name[24];    /* "md 1.2", "DDF", ... ("" for raidkit) */
	struct rk_role roles[RK_SB_MAX_ROLES];
};
/* RK_ROLE_NONE ("no role") and RK_LEVEL_LINEAR are rk_geom.h's. */

/* Chunk limits for striped levels (0, 4, 5, 6, 10): a power of two in
 * [RK_CHUNK_MIN, RK_CHUNK_MAX].  Linear and RAID-1 have no stripe unit:
 * their chunk must be 0. */
#define RK_CHUNK_MIN  4096u
#define RK_CHUNK_MAX  (16u * 1024u * 1024u)
/* The first byte after the primary copy's area: the earliest data_offset
 * or journal_offset. */
#define RK_SB_PRIMARY_END  (RK_SB_PRIMARY_OFF + RK_SB_AREA)

/* Decodes one copy from BUF (LEN bytes: what could be read there, up to
 * RK_SB_AREA) read at member byte offset AT of a device of DEV_SIZE bytes.
 * Checks magic (RK_E_NOSB), length (RK_E_SHORT), version (RK_E_VERSION),
 * CRC (RK_E_BADCRC), incompat features (RK_E_FEATURE), and every field
 * against every other and against DEV_SIZE (overflow-safe; RK_E_CORRUPT, or
 * RK_E_SHORT for a device smaller than recorded); a copy whose sb_offset is
 * not AT is refused (RK_E_CORRUPT).  On error the detail (rk_errmsg) says
 * which field and why, and SB holds whatever was parsed so far (zeroed
 * first).  An accepted copy re-encodes to the same bytes. */
rk_err rk_sb_decode(struct rk_sb *sb, const uint8_t *buf, size_t len, uint64_t at, uint64_t dev_size);

/* Encodes SB into BUF (LEN >= sb->sb_bytes): sb_bytes bytes, padding zeroed,
 * CRC computed.  sb->sb_bytes 0 means rk_sb_bytes_for(nentries).  Fields are
 * validated first as rk_sb_validate(sb, 0) would (so against sb->dev_size);
 * nothing is written to BUF on failure.  sb->sb_offset must already be the
 * place the copy goes (rk_sb_write sets it per copy). */
rk_err rk_sb_encode(const struct rk_sb *sb, uint8_t *buf, size_t len);

/* Makes D the superblock's current geometry (level, layout, chunk, nroles,
 * data offset and size); the reshape fields are left as they are. */
void rk_sb_apply_geom(struct rk_sb *sb, const struct rk_geom_desc *d);

/* CRC-32 (zlib) of BUF[0, LEN) with the 4 bytes at FIELD (the stored CRC)
 * read as zero: how superblock copies and journal headers are summed. */
uint32_t rk_crc32_field_zero(const uint8_t *buf, size_t len, size_t field);

/* A member's superblock of generation TMPL: the array-wide fields from
 * TMPL, the member's own (uuid, role, offsets, size, journal area) from
 * OWN.  OUT may not overlap either. */
void rk_sb_member_copy(struct rk_sb *out, const struct rk_sb *tmpl, const struct rk_sb *own);

/* The writers' half of the in-step rule (spec/discovery.md, "In step"):
 * before writing generation GEN->events + 1, a writer gives GEN itself to
 * every live member whose superblock OWN is behind it (this returns 1 for
 * those).  A member that only missed superblock updates then never lags
 * the freshest by more than one event, however often writers are cut
 * short, so discovery can tell it from an old image of the member. */
int rk_sb_behind(const struct rk_sb *own, const struct rk_sb *gen);

/* Where the data area of member OWN starts in the array whose freshest
 * superblock is T: OWN's data_offset, except for a member that missed only
 * the update ending a reshape (or its revert), whose superblock still
 * records the reshape T no longer has: T's (reshapes keep the offsets
 * uniform; spec/reshape.md).  Every reader of a member's data asks this. */
uint64_t rk_sb_member_data_offset(const struct rk_sb *t, const struct rk_sb *own);

/* Validates a native struct (what decode checks after parsing): every field
 * against every other and against DEV_SIZE, the size of the device the copy
 * is on (0: check against sb->dev_size alone).  A device smaller than
 * sb->dev_size is RK_E_SHORT; unknown incompat bits RK_E_FEATURE; a version
 * other than RK_SB_VERSION RK_E_VERSION; everything else RK_E_CORRUPT with a
 * sentence naming the field(s) and values.  The rules are listed in
 * spec/format.md ("Validation"). */
rk_err rk_sb_validate(const struct rk_sb *sb, uint64_t dev_size);

/* Bytes needed for NENTRIES role entries, rounded to RK_SB_ALIGN
 * (0 when NENTRIES > RK_SB_MAX_ROLES). */
uint32_t rk_sb_bytes_for(uint32_t nentries);
/* Offsets of the two copies on a device of DEV_SIZE bytes; 0 if too small
 * (the backup needs align_down(DEV_SIZE, 4096) - RK_SB_AREA >= RK_SB_PRIMARY_END,
 * so that the two areas never overlap). */
uint64_t rk_sb_primary_offset(uint64_t dev_size);
uint64_t rk_sb_backup_offset(uint64_t dev_size);

/* Checks a geometry (level, layout, chunk, nroles minimum) and computes the
 * bytes the array presents from DATA_SIZE bytes per member:
 *   linear          nroles * data_size
 *   0               nroles * align_down(data_size, chunk)
 *   1               data_size
 *   4, 5            (nroles - 1) * align_down(data_size, chunk)
 *   6               (nroles - 2) * align_down(data_size, chunk)
 *   10              md's raid10_size(): chunks = data_size / chunk / far;
 *                   align_down(chunks * nroles / near) * chunk
 * Minimum roles: linear 1, 0 1, 1 1, 4 2, 5 2, 6 3, 10 2 (and near*far).
 * Fails (RK_E_CORRUPT, a sentence naming the field and its value) on an
 * unknown level or layout, a bad chunk, too few roles, a zero result or
 * overflow.  This is the one place that computes volume_size. */
rk_err rk_sb_volume_size(int32_t level, uint32_t layout, uint64_t chunk, uint32_t nroles,
                         uint64_t data_size, uint64_t *volume_size);

/* The largest data_size that fits a device of DEV_SIZE bytes with the data
 * area at DATA_OFFSET, rounded down to CHUNK (when non-zero) and to 4096;
 * 0 when nothing fits. */
uint64_t rk_sb_max_data_size(uint64_t dev_size, uint64_t data_offset, uint64_t chunk);

/* A fresh array's superblock (for mkraid). */
struct rk_sb_params {
	const uint8_t *array_uuid;   /* NULL: generate one */
	const char *name;            /* NULL or "": no name; at most RK_SB_NAME_LEN bytes of UTF-8 */
	int32_t  level;
	uint32_t layout;
	uint64_t chunk;              /* 0 for linear / RAID-1 */
	uint32_t nroles;
	const unsigned char *missing;/* NULL, or nroles flags: non-zero = role created missing (EMPTY) */
	uint64_t data_offset;        /* 0: RK_DATA_OFFSET_DEFAULT */
	uint64_t data_size;          /* bytes per member (the caller takes the minimum over members) */
};
/* Fills SB (zeroing it first) for a new array: version, sb_bytes, a role
 * table of nroles entries each with a fresh member UUID (uuid_generate) and
 * state ACTIVE (EMPTY with a nil UUID for missing roles), ctime = utime =
 * now, events 0, state clean, volume_size computed.  The member fields
 * (member_uuid, this_role, dev_size, sb_offset) are left for
 * rk_sb_set_member().  Fails on a geometry rk_sb_volume_size() refuses or
 * an invalid name. */
rk_err rk_sb_init(struct rk_sb *sb, const struct rk_sb_params *p);
/* Makes SB the superblock of the member serving ROLE on a device of
 * DEV_SIZE bytes (member_uuid from the role table, this_role, dev_size,
 * sb_offset = primary) and validates the result. */
rk_err rk_sb_set_member(struct rk_sb *sb, uint32_t role, uint64_t dev_size);

/* Names for reports: "empty", "active", "faulty", "rebuilding", "spare"
 * ("unknown" otherwise); "clean", "active". */
const char *rk_role_state_name(uint32_t state);
const char *rk_array_state_name(uint32_t state);
/* Feature bits as words ("journal,reshape", unknown ones as "0x..."),
 * "none" when MASK is 0; returns BUF. */
const char *rk_sb_feature_names(int kind, uint64_t mask, char *buf, size_t len);
#define RK_FEAT_KIND_COMPAT    0
#define RK_FEAT_KIND_RO_COMPAT 1
#define RK_FEAT_KIND_INCOMPAT  2

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
	char why[640];               /* reason for the choice */
};
/* Reads and decodes both copies; chooses the valid copy with the higher
 * events (primary on a tie, and a mismatch between equal-event copies is
 * noted in why).  The backup is looked for at rk_sb_backup_offset() of the
 * device size; when nothing valid is there and a valid primary records a
 * smaller dev_size (the image grew), also at the backup offset of that size.
 * OUT is always initialised (free it with rk_sb_read_free).  Returns RK_OK
 * when a copy was chosen, RK_E_NOSB when neither copy is valid (the detail
 * names both copies' faults), RK_E_NOMEM. */
rk_err rk_sb_read(rk_dev *d, struct rk_sb_read *out);
/* Frees both copies' structs (once when they share one). */
void   rk_sb_read_free(struct rk_sb_read *r);
/* Writes SB to both copies in the crash-safe order of spec/format.md: the
 * copy that is not currently trusted first (the backup when both are good),
 * flush, then the other, flush; each copy's whole RK_SB_AREA is written
 * (zero-padded).  sb->sb_offset is ignored (set per copy); sb->dev_size 0
 * means the device size, else it must not exceed it.  Refuses unknown
 * ro_compat bits (RK_E_FEATURE) and anything rk_sb_validate refuses.
 * The caller bumps events so that readers prefer the new copies. */
rk_err rk_sb_write(rk_dev *d, const struct rk_sb *sb);

/* What a writer that holds a member through a run of updates (a reshape's
 * checkpoints) knows of its two copy areas; zeroed = nothing known. */
struct rk_sb_wstate {
	int known;               /* both areas written by this writer, last update whole */
	uint32_t bytes;          /* each area: this many bytes of superblock, then zeros */
	uint64_t backup_off;     /* where the backup area was */
};
/* rk_sb_write for a run of updates of one member nobody else writes
 * meanwhile.  The first call (WS not known, or the backup area moved) is
 * rk_sb_write.  After it both copies are identical, so a reader trusts the
 * primary: later calls write the backup, flush, then the primary, flush,
 * without reading the copies again, and each only up to max(sb_bytes,
 * WS->bytes) bytes (the rest of each area is zeros already).  Any failure
 * forgets WS, so the next call reads again. */
rk_err rk_sb_write_known(rk_dev *d, const struct rk_sb *sb, struct rk_sb_wstate *ws);

#endif
