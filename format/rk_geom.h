/* rk_geom.h: array geometry: volume offset <-> (stripe, role, member offset).
 *
 * Levels use md's numbers (linear is RK_LEVEL_LINEAR, -1) and RAID-5/6/10
 * layouts use md's layout numbers, so arrays laid out by md map through the
 * same code.  Every layout is drawn in spec/layouts.md.  All arithmetic is
 * 64-bit and overflow-checked.  Offsets on members are relative to the
 * member's data area (the caller adds data_offset).
 */
#ifndef RK_GEOM_H
#define RK_GEOM_H

#include <stdint.h>
#include "rk_err.h"

#ifndef RK_LEVEL_LINEAR
#define RK_LEVEL_LINEAR (-1)
#endif

/* md's RAID-5/6 algorithms (layout numbers). */
#define RK_ALG_LEFT_ASYMMETRIC   0
#define RK_ALG_RIGHT_ASYMMETRIC  1
#define RK_ALG_LEFT_SYMMETRIC    2   /* default */
#define RK_ALG_RIGHT_SYMMETRIC   3
#define RK_ALG_PARITY_0          4   /* parity-first */
#define RK_ALG_PARITY_N          5   /* parity-last */

struct rk_geom {
	int32_t  level;
	uint32_t layout;
	uint64_t chunk;          /* stripe unit, bytes (ignored for linear/raid1) */
	uint32_t nroles;
	uint64_t member_size;    /* usable data bytes per member (a multiple of chunk where striped) */
	/* derived by rk_geom_init */
	uint32_t ndata;          /* data blocks per stripe */
	uint32_t nparity;        /* 0, 1 or 2 */
	uint32_t copies;         /* mirror copies (raid1: nroles; raid10: near*far) */
	uint64_t stripe_data;    /* data bytes per stripe */
	uint64_t nstripes;
	uint64_t volume_size;
};

/* Validates and derives.  member_size is rounded down to whole chunks. */
rk_err rk_geom_init(struct rk_geom *g, int32_t level, uint32_t layout, uint64_t chunk,
                    uint32_t nroles, uint64_t member_size);

/* Names: "linear", "0", "1", "4", "5", "6", "10" (parse accepts "raid5" too). */
const char *rk_level_name(int32_t level);
int  rk_level_parse(const char *s, int32_t *level);           /* 0 ok, -1 bad */
/* Layout names: "left-symmetric", ..., "parity-first", "parity-last";
 * RAID-10 "n2", "f2", "o2" as mdadm.  */
const char *rk_layout_name(int32_t level, uint32_t layout, char *buf, size_t len);
int  rk_layout_parse(int32_t level, const char *s, uint32_t *layout);
uint32_t rk_layout_default(int32_t level);
/* Minimum members for LEVEL (linear 1, 0 1, 1 1, 4/5 2, 6 3? see geom.c) and
 * how many may be missing with the data still readable. */
uint32_t rk_level_min_roles(int32_t level);
uint32_t rk_geom_redundancy(const struct rk_geom *g);

/* Where volume byte VOFF lives: its data copy (for mirrors the first role
 * that holds it).  *run = bytes from there that stay on that member
 * contiguously (to the end of the chunk).  VOFF >= volume_size is RK_E_RANGE. */
struct rk_loc {
	uint64_t stripe;
	uint32_t role;
	uint64_t member_off;
};
rk_err rk_geom_map(const struct rk_geom *g, uint64_t voff, struct rk_loc *loc, uint64_t *run);

/* Every copy of VOFF (mirrors: raid1, raid10; else just the data copy).
 * Returns the number of locations written to LOCS (at most MAX). */
uint32_t rk_geom_copies(const struct rk_geom *g, uint64_t voff, struct rk_loc *locs, uint32_t max);

/* For parity levels (4, 5, 6): the roles of stripe S.  data_role must have
 * room for g->ndata entries, in data-block order as md uses it for Q (data
 * block i has coefficient g^i).  q_role is RK_ROLE_NONE_GEOM for RAID-4/5. */
#define RK_ROLE_NONE_GEOM 0xFFFFFFFFu
struct rk_stripe_roles {
	uint64_t member_off;     /* the stripe's chunk offset on every member */
	uint32_t p_role, q_role;
	uint32_t *data_role;     /* caller-provided, ndata entries */
};
rk_err rk_geom_stripe(const struct rk_geom *g, uint64_t stripe, struct rk_stripe_roles *sr);

/* Inverse: what role ROLE's byte MEMBER_OFF holds. */
enum rk_blk_kind { RK_BLK_DATA = 0, RK_BLK_P, RK_BLK_Q, RK_BLK_UNUSED };
rk_err rk_geom_unmap(const struct rk_geom *g, uint32_t role, uint64_t member_off,
                     uint64_t *voff, enum rk_blk_kind *kind);

#endif
