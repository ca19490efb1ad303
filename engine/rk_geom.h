/* rk_geom.h: array geometry: volume offset <-> (stripe, role, member offset).
 *
 * Levels use md's numbers (linear is RK_LEVEL_LINEAR, -1) and RAID-5/6/10
 * layouts use md's layout numbers, so arrays laid out by md map through the
 * same code.  Every layout is drawn in spec/layouts.md.  All arithmetic is
 * 64-bit and overflow-checked.  Offsets on members are relative to the
 * member's data area (the caller adds data_offset).
 *
 * What a "stripe" is, per level (rk_loc.stripe, nstripes, stripe_data):
 *   0, 4, 5, 6   one row of chunks across all roles (stripe_data = ndata*chunk)
 *   10           one volume chunk (stripe_data = chunk)
 *   linear, 1    a unit of volume bytes: chunk, or 64 KiB when chunk is 0
 * Volume stripe S always covers volume bytes [S*stripe_data, (S+1)*stripe_data).
 */
#ifndef RK_GEOM_H
#define RK_GEOM_H

#include <stddef.h>
#include <stdint.h>
#include "rk_err.h"

/* The one definition of the linear level (md's number) and of "no role"
 * (a spare's role, an absent P or Q); libmeta uses these too. */
#define RK_LEVEL_LINEAR (-1)
#define RK_ROLE_NONE 0xFFFFFFFFu

#define RK_GEOM_MAX_ROLES  2032u            /* = RK_SB_MAX_ROLES */
/* The largest chunk the engine can map, for ANY on-disk format: foreign
 * formats (md, DDF, ...) use other chunk sizes than raidkit's own, so this
 * is wide (up to 1 GiB, any multiple of 512).  Which chunks raidkit itself
 * creates and accepts in its superblock is narrower: that is the
 * superblock's rule (rk_sb.h RK_CHUNK_MIN / RK_CHUNK_MAX). */
#define RK_GEOM_MAX_CHUNK  (1ull << 30)     /* 1 GiB */
#define RK_GEOM_UNIT_DEFAULT 65536u         /* stripe unit of linear/raid1 without chunk */

/* md's RAID-5/6 algorithms (layout numbers). */
#define RK_ALG_LEFT_ASYMMETRIC   0
#define RK_ALG_RIGHT_ASYMMETRIC  1
#define RK_ALG_LEFT_SYMMETRIC    2   /* default */
#define RK_ALG_RIGHT_SYMMETRIC   3
#define RK_ALG_PARITY_0          4   /* parity-first */
#define RK_ALG_PARITY_N          5   /* parity-last */
/* RAID-6 only (md's DDF layouts: Q coefficients follow role numbers). */
#define RK_ALG_ROTATING_ZERO_RESTART 8
#define RK_ALG_ROTATING_N_RESTART    9
#define RK_ALG_ROTATING_N_CONTINUE   10
/* RAID-6 only: RAID-5 rotation over roles 0..n-2, Q always on role n-1. */
#define RK_ALG_LEFT_ASYMMETRIC_6  16
#define RK_ALG_RIGHT_ASYMMETRIC_6 17
#define RK_ALG_LEFT_SYMMETRIC_6   18
#define RK_ALG_RIGHT_SYMMETRIC_6  19
#define RK_ALG_PARITY_0_6         20

/* md's RAID-10 layout word: near | far << 8 | offset << 16 | far-set mode << 17. */
#define RK_R10_LAYOUT(near, far, offset) ((uint32_t)(near) | (uint32_t)(far) << 8 | (uint32_t)((offset) ? 1 : 0) << 16)

struct rk_geom {
	int32_t  level;
	uint32_t layout;
	uint64_t chunk;          /* stripe unit, bytes (optional for linear/raid1) */
	uint32_t nroles;
	uint64_t member_size;    /* usable data bytes per member (a multiple of chunk where striped) */
	/* derived by rk_geom_init */
	uint32_t ndata;          /* data blocks per stripe (parity levels, raid0); linear/1/10: 1 */
	uint32_t nparity;        /* 0, 1 or 2 */
	uint32_t copies;         /* mirror copies (raid1: nroles; raid10: near*far; else 1) */
	uint64_t stripe_data;    /* data bytes per stripe */
	uint64_t nstripes;
	uint64_t volume_size;
	/* derived, for the engine and raid-examine */
	uint32_t q_slots;        /* RAID-6: data slots in the syndrome (ndata; nroles for layouts 8-10) */
	uint32_t r10_near, r10_far, r10_offset, r10_set;   /* RAID-10 layout fields; r10_set = far set size */
	uint64_t r10_stride;     /* RAID-10: member bytes between far copies */
};

/* Validates and derives.  member_size is rounded down to whole chunks for
 * levels 0, 4, 5, 6, 10.  Rejects (RK_E_INVAL / RK_E_RANGE / RK_E_NOTSUP, with
 * a sentence naming the field) unknown levels and layouts, too few or too
 * many roles (RAID-6: at most 255 data blocks, 255 roles for layouts 8-10),
 * chunks that are 0, not a multiple of 512 or above RK_GEOM_MAX_CHUNK on
 * striped levels, a volume of 0 bytes and sizes that overflow 64 bits. */
rk_err rk_geom_init(struct rk_geom *g, int32_t level, uint32_t layout, uint64_t chunk,
                    uint32_t nroles, uint64_t member_size);

/* Names: "linear", "0", "1", "4", "5", "6", "10" (parse accepts "raid5" too). */
const char *rk_level_name(int32_t level);
int  rk_level_parse(const char *s, int32_t *level);           /* 0 ok, -1 bad */
/* Layout names as mdadm: "left-symmetric", ..., "parity-first", "parity-last",
 * RAID-6 "ddf-zero-restart", "ddf-N-restart", "ddf-N-continue",
 * "left-asymmetric-6", ..., "parity-first-6"; RAID-10 "n2", "f2", "o2",
 * "n2f2", ...  Levels without layouts: "none".  Unknown numbers print as
 * hex.  parse also accepts mdadm's short names (ls, la, rs, ra), "default"
 * and a plain number; it validates the layout against the level but not
 * against a member count (rk_geom_init does that).  0 ok, -1 bad. */
const char *rk_layout_name(int32_t level, uint32_t layout, char *buf, size_t len);
int  rk_layout_parse(int32_t level, const char *s, uint32_t *layout);
uint32_t rk_layout_default(int32_t level);
/* Whether LAYOUT is a layout word LEVEL knows, whatever the member count
 * (rk_geom_init also checks it against the members): 1 yes, 0 no. */
int  rk_layout_valid(int32_t level, uint32_t layout);
/* Minimum members for LEVEL: linear, 0, 1: 1; 4, 5, 10: 2; 6: 3.  0 for an
 * unknown level. */
uint32_t rk_level_min_roles(int32_t level);
/* How many roles may be missing, whichever they are, with the data still
 * readable: 0 (linear, 0), nroles-1 (1), 1 (4, 5), 2 (6), copies-1 (10). */
uint32_t rk_geom_redundancy(const struct rk_geom *g);

/* The one answer to "which roles may be down": DOWN has g->nroles flags,
 * non-zero for a role that is missing or failed.
 * rk_geom_readable: every volume byte still has a live copy or can be
 * reconstructed (linear, 0: none down; 1: one mirror left; 4, 5, 6: at most
 * nparity down; 10: every chunk keeps a live copy, over one full period of
 * the layout's copy pattern, rk_geom_pattern_period()).
 * rk_geom_checkable: some stripe still holds redundancy to verify (parity
 * levels: fewer than nparity down; 1: two live mirrors; 10: some chunk with
 * two live copies); 0 for linear and RAID-0.
 * Both answer 0 (the cautious answer) when a RAID-10 layout of more than 64
 * copies cannot get memory to count them. */
int rk_geom_readable(const struct rk_geom *g, const uint8_t *down);
int rk_geom_checkable(const struct rk_geom *g, const uint8_t *down);
/* RAID-10: how many volume chunks make one full period of the copy
 * pattern (which roles hold chunk c repeats with this period); at most
 * nstripes.  1 for other levels. */
uint64_t rk_geom_pattern_period(const struct rk_geom *g);

/* Where volume byte VOFF lives: its data copy (for mirrors the first role
 * that holds it).  *run (may be NULL) = bytes from there that stay on that
 * member contiguously: to the end of the chunk (0, 4, 5, 6, 10), of the member
 * (linear) or of the volume (1).  VOFF >= volume_size is RK_E_RANGE. */
struct rk_loc {
	uint64_t stripe;
	uint32_t role;
	uint64_t member_off;
};
rk_err rk_geom_map(const struct rk_geom *g, uint64_t voff, struct rk_loc *loc, uint64_t *run);

/* Every copy of VOFF (mirrors: raid1, raid10 in md's copy order; else just
 * the data copy).  Returns the number of locations written to LOCS (at most
 * MAX); 0 when VOFF is out of range. */
uint32_t rk_geom_copies(const struct rk_geom *g, uint64_t voff, struct rk_loc *locs, uint32_t max);

/* For parity levels (4, 5, 6): the roles of stripe S.  data_role must have
 * room for g->ndata entries, in data-block order as md uses it for Q (data
 * block i has coefficient g^i; for the DDF layouts 8-10 the coefficient of
 * data_role[i] is g^data_role[i]: use rk_geom_stripe_map for slots).
 * q_role is RK_ROLE_NONE for RAID-4/5.  S >= nstripes is RK_E_RANGE;
 * other levels are RK_E_INVAL. */
struct rk_stripe_roles {
	uint64_t member_off;     /* the stripe's chunk offset on every member */
	uint32_t p_role, q_role;
	uint32_t *data_role;     /* caller-provided, ndata entries */
};
rk_err rk_geom_stripe(const struct rk_geom *g, uint64_t stripe, struct rk_stripe_roles *sr);

/* The full picture of stripe S of a striped level (0, 4, 5, 6), for the
 * engine: VOL_ROLE (caller-provided, ndata entries) gets the role of the
 * stripe's volume data block j (volume order); SLOT (caller-provided, nroles
 * entries, may be NULL) gets each role's index in a syndrome pointer array
 * of q_slots+2 entries as md builds it: data < q_slots, P = q_slots,
 * Q = q_slots+1 (RAID-4/5: data < ndata, P = ndata).  Slots of the DDF
 * layouts left without a role hold zero blocks. */
struct rk_stripe_map {
	uint64_t member_off;
	uint32_t p_role, q_role;     /* RK_ROLE_NONE when absent */
	uint32_t *vol_role;
	uint32_t *slot;
};
rk_err rk_geom_stripe_map(const struct rk_geom *g, uint64_t stripe, struct rk_stripe_map *m);

/* Inverse: what role ROLE's byte MEMBER_OFF holds: data (*voff set: the
 * volume byte it stores, a copy for mirrors), P or Q parity (*voff = the
 * first volume byte of the stripe), or nothing (RK_BLK_UNUSED: past the
 * last stripe).  ROLE >= nroles or MEMBER_OFF >= member_size is RK_E_RANGE. */
enum rk_blk_kind { RK_BLK_DATA = 0, RK_BLK_P, RK_BLK_Q, RK_BLK_UNUSED };
rk_err rk_geom_unmap(const struct rk_geom *g, uint32_t role, uint64_t member_off,
                     uint64_t *voff, enum rk_blk_kind *kind);

#endif
