/* rk_discover.h: find and group members given in any order.
 *
 * rk_discover() opens every path read-only, reads both superblock copies,
 * groups members by array UUID, orders them by role and classifies every
 * path.  Each decision carries a reason in words.  Nothing is written.
 */
#ifndef RK_DISCOVER_H
#define RK_DISCOVER_H

#include <stdint.h>
#include "rk_err.h"
#include "rk_sb.h"

enum rk_member_class {
	RK_MEMBER_ACTIVE = 0,   /* serves its role */
	RK_MEMBER_MISSING,      /* a role with no usable path (path NULL) */
	RK_MEMBER_STALE,        /* lower events than the freshest, or marked faulty by them */
	RK_MEMBER_DUPLICATE,    /* a second image of a member already used */
	RK_MEMBER_FOREIGN,      /* another array's member (or foreign RAID metadata) */
	RK_MEMBER_UNKNOWN,      /* no valid superblock, unreadable */
	RK_MEMBER_SPARE,        /* a spare of this array */
	RK_MEMBER__COUNT
};
const char *rk_member_class_name(enum rk_member_class c);  /* "active", "missing", ... */

struct rk_member {
	char    *path;               /* NULL for a missing role */
	int64_t  role;               /* -1 where it has none */
	enum rk_member_class cls;
	char     reason[512];        /* in words: "events 5, the others have 9" */
	uint8_t  member_uuid[16];
	uint64_t events;
	struct rk_sb *sb;            /* chosen copy: points into rd (freed with it), NULL when none */
	struct rk_sb_read rd;        /* both copies as read (all zero for a missing role); when
	                              * they say the same, both sb point at one struct (the
	                              * chosen copy's sb_offset; copy[].offset is each one's) */
	char     foreign_type[64];   /* blkid TYPE for foreign metadata, else "" */
	/* refinements (additive) */
	int32_t  argi;               /* index in the paths given, -1 for a missing role */
	int32_t  array_idx;          /* index into rk_discovery.arrays of the array it
	                              * belongs to (stale, duplicate, spare), -1 if none */
	int      has_sb;             /* 1 when a valid raidkit copy was read */
	uint8_t  array_uuid[16];     /* valid when has_sb */
};

/* What an array found by discovery can do. */
enum rk_astate {
	RK_ASTATE_CLEAN = 0,
	RK_ASTATE_DEGRADED,     /* roles missing, the data still readable */
	RK_ASTATE_FAILED,       /* too few members */
	RK_ASTATE_CONFLICT,     /* split brain: refuse to guess */
};
const char *rk_astate_name(enum rk_astate state);  /* "clean", "degraded", "failed", "conflict" */

struct rk_array_info {
	uint8_t  uuid[16];
	char     name[RK_SB_NAME_LEN + 1];
	struct rk_sb *sb;            /* the freshest active member's superblock (shared pointer) */
	uint32_t nroles;
	struct rk_member *roles;     /* nroles entries, role order; cls ACTIVE or MISSING */
	uint32_t nactive;
	int      state;              /* enum rk_astate */
	char     why[512];           /* degraded / failed / split-brain explanation */
};

struct rk_discovery {
	uint32_t narrays;
	struct rk_array_info *arrays;
	uint32_t nleft;              /* paths not used by any array, with reasons, in the order given */
	struct rk_member *left;
};

/* The array state and its explanation are derived from which roles are
 * present: state is DEGRADED while the data stays readable (parity levels:
 * missing <= redundancy; mirrors: every chunk keeps a copy), else FAILED.
 * Conflict (split brain): the freshest member F marks a member Y faulty or
 * missing, and Y marks a member on F's side faulty or missing: each side ran
 * without the other and event counts cannot order them.  roles[] then shows
 * F's side, the other side is in left[] as STALE, and why names both. */

/* Discovers over NPATHS paths.  A later segment of an image (disk.E02,
 * disk.002) given beside its first segment is folded into it: it gets no
 * entry (spec/images.md).  With UUID non-NULL, only that array is
 * assembled and members of other arrays are FOREIGN.  Returns RK_OK even when
 * arrays are degraded or failed (see each array's state); errors only for
 * memory or invalid arguments. */
rk_err rk_discover(struct rk_discovery **out, char *const *paths, uint32_t npaths,
                   const uint8_t *uuid);
void   rk_discovery_free(struct rk_discovery *d);

/* The index of the array with UUID in D, or -1. */
int rk_discovery_find_uuid(const struct rk_discovery *d, const uint8_t *uuid);
/* The array a tool means: the one with UUID (when not NULL), else the only
 * one found; -1 when there is no such array or several. */
int rk_discovery_pick(const struct rk_discovery *d, const uint8_t *uuid);
/* The member discovery made of path ARGI (its index in the paths given):
 * a role's member or a left-over path; NULL when not found. */
const struct rk_member *rk_discovery_find_path(const struct rk_discovery *d, int32_t argi);

/* --force: array A, FAILED for want of members, takes stale members of its
 * own (from D->left, the freshest first) for the roles it lacks, until it
 * can run or none is left.  Each forced member moves into its role as
 * ACTIVE (the entry it replaces moves to left), with the reason "forced in
 * (stale: events N)"; FORCED (may be NULL) is called for each, after the
 * move.  When enough were found the state becomes DEGRADED or CLEAN with
 * why saying so.  Does nothing to an array that is not FAILED or has no
 * geometry.  Returns how many members were forced in. */
typedef void rk_forced_fn(void *ctx, const struct rk_array_info *a, uint32_t role);
uint32_t rk_discovery_force_stale(struct rk_discovery *d, uint32_t a, rk_forced_fn *forced, void *ctx);

/* 1 when M (a member with a superblock) was added by the reshape in
 * progress of the array whose freshest superblock is T: at T's events or
 * one behind (in step, spec/discovery.md), of
 * T's array, and listed active in T's role table under its member UUID at a
 * role of the new geometry past the old nroles.  Discovery lists such a
 * member apart (as a spare that serves that role); rk_array_open_members
 * opens it for that role. */
int rk_member_reshape_added(const struct rk_sb *t, const struct rk_member *m);

#endif
