/* rk_create.h: creating an array on member files or block devices (mkraid).
 *
 * Creation is all-or-nothing up to the point where writing starts: every
 * member is opened, sized and probed, and every option checked, before the
 * first byte is written.  A member that carries a recognised signature (our
 * superblock, md or other RAID metadata, a file system, a partition table)
 * is refused unless force is set; nothing is written then.
 *
 * Two steps, so a tool can look at the plan (volume size, members) before
 * committing: rk_create_prepare() checks and plans without writing;
 * rk_create_commit() writes.  rk_create() does both.
 *
 * Writing order (commit):
 *   1. create missing member files (--create-size; sparse),
 *   2. with force: wipe foreign signatures that were found (libblkid),
 *   3. make redundancy consistent where members hold old data (members
 *      whose data area is all zero -- sparse holes are found with
 *      SEEK_DATA, so huge sparse files cost nothing -- need no writes),
 *   4. fill the volume from a file (full-stripe writes),
 *   5. write the superblocks (both copies) of every member, last, and flush.
 * Superblocks go last so that a crash before the end leaves members
 * without our superblock (nothing assembles as a half-made array) rather
 * than an array whose parity or contents are not what was asked for.
 */
#ifndef RK_CREATE_H
#define RK_CREATE_H

#include <stdint.h>
#include "rk_err.h"
#include "rk_probe.h"
#include "rk_sb.h"

#define RK_CREATE_CHUNK_DEFAULT (512u * 1024u)   /* mkraid's default stripe unit */
/* Chunk limits are the superblock's: RK_CHUNK_MIN, RK_CHUNK_MAX (rk_sb.h). */
#define RK_CREATE_LAYOUT_DEFAULT 0xFFFFFFFFu    /* the level's default layout */

/* Phases reported to the progress callback. */
enum rk_create_phase {
	RK_CREATE_PH_SCAN = 0,   /* looking for old data in members' data areas (bytes) */
	RK_CREATE_PH_RESYNC,     /* making parity/mirrors consistent (volume bytes of the stripes) */
	RK_CREATE_PH_FILL,       /* copying --from FILE into the volume (bytes) */
};

struct rk_create_opts {
	int32_t     level;         /* RK_LEVEL_LINEAR, 0, 1, 4, 5, 6, 10 */
	uint32_t    layout;        /* md layout number, or RK_CREATE_LAYOUT_DEFAULT */
	uint64_t    chunk;         /* bytes; 0 = RK_CREATE_CHUNK_DEFAULT; power of two in [MIN, MAX] */
	const char *name;          /* array name (<= RK_SB_NAME_LEN bytes), NULL = "" */
	uint64_t    size;          /* data bytes to use on each member, 0 = all */
	uint64_t    create_size;   /* create absent member files of this size (sparse); 0 = never */
	uint32_t    nmembers;      /* roles */
	const char *const *paths;  /* nmembers entries; NULL = missing (degraded create) */
	int         force;         /* overwrite members with recognised signatures */
	const char *from;          /* fill the volume with this file's bytes, NULL = none */
	/* Progress (may be NULL): DONE of TOTAL units of PHASE. */
	void      (*progress)(void *ctx, enum rk_create_phase phase, uint64_t done, uint64_t total);
	void       *progress_ctx;
	/* Tests (may be NULL): called at the start of commit, after member files
	 * are created, for each present role's device; may replace *DEV, e.g.
	 * with rk_dev_fault() (which takes ownership of the old one).  Every
	 * later write goes through *DEV, except libblkid's wiping of foreign
	 * signatures (--force), which uses its own descriptor. */
	rk_err    (*wrap_dev)(void *ctx, uint32_t role, rk_dev **dev);
	void       *wrap_ctx;
};

struct rk_create_member {
	char    *path;             /* NULL for a missing role */
	uint32_t role;
	uint8_t  uuid[16];         /* zero for a missing role */
	uint64_t dev_size;         /* bytes (create_size for a file to be created) */
	int      created;          /* file is (to be) created by us */
	int      blockdev;
	char     found[256];       /* what the probe found ("" = nothing); only with force */
	int      dirty;            /* data area held non-zero bytes (set by commit) */
};

struct rk_create_plan {
	uint8_t  array_uuid[16];
	char     name[RK_SB_NAME_LEN + 1];
	int32_t  level;
	uint32_t layout;
	uint64_t chunk;
	uint32_t nroles;
	uint32_t nmissing;
	uint64_t data_offset;      /* on every member */
	uint64_t data_size;        /* per member, whole chunks */
	uint64_t volume_size;
	uint64_t from_size;        /* bytes of --from (0 without) */
	uint64_t ctime;
	struct rk_create_member *members;   /* nroles entries, role order */
	/* Size report: smallest and largest present member (usable bytes). */
	uint64_t usable_min, usable_max;
	uint32_t usable_min_role, usable_max_role;
	/* Filled by commit. */
	uint64_t stripes_resynced; /* stripes whose redundancy had to be rewritten */
	uint64_t bytes_scanned;    /* data-area bytes read to look for old data */
	/* Lines for a human report ("members differ in size: ..."), '\n'-separated. */
	char    *notes;
};

typedef struct rk_creator rk_creator;

/* Opens every present member read-write (locked), probes it, sizes the data
 * area and builds the plan.  Writes nothing and creates no file.  Refusals
 * name the member or option: "disk2.img: holds an ext4 file system (UUID
 * ...); use --force to overwrite" (RK_E_EXISTS), a member too small
 * (RK_E_SHORT), too many missing members (RK_E_TOOFEW), an absent file
 * without create_size (RK_E_OPEN), the same member twice (RK_E_INVAL),
 * --size larger than a member (RK_E_RANGE), --from larger than the volume
 * (RK_E_RANGE, with *from_too_big set when the pointer is given). */
rk_err rk_create_prepare(rk_creator **out, const struct rk_create_opts *o, int *from_too_big);

/* The plan (valid until rk_create_free). */
const struct rk_create_plan *rk_create_get_plan(const rk_creator *c);

/* Writes the array (see the order above).  Call at most once.  On failure
 * before step 5 members carry no new superblock; files created in step 1
 * are removed again. */
rk_err rk_create_commit(rk_creator *c);

/* Closes members and frees; NULL allowed. */
void rk_create_free(rk_creator *c);

/* prepare + commit.  With PLAN non-NULL, a copy of the plan is returned
 * (free with rk_create_plan_free) also on failure when prepare succeeded. */
rk_err rk_create(const struct rk_create_opts *o, struct rk_create_plan *plan);
void   rk_create_plan_free(struct rk_create_plan *p);

#endif
