/* rk_recover.h: getting redundancy and metadata back: rebuilding a missing,
 * failed or stale role onto a new member, and restoring damaged superblock
 * copies (raid-recover --rebuild / --restore-superblock).
 *
 * Rebuild, crash-safe order (every superblock write is rk_sb_write: backup,
 * flush, primary, flush):
 *   1. NEW's superblock: the array's role table with ROLE marked REBUILDING
 *      under NEW's member UUID, checkpoint 0, at the members' current event
 *      count E (so NEW never outranks them: discovery takes the freshest
 *      member's word, and NEW's word would make the others look stale);
 *   2. the same table on every live member at events E+1 (roles absent
 *      without being marked, as array writes do, become FAULTY); then NEW
 *      at E+1.  From here discovery treats ROLE as missing ("being
 *      rebuilt"), so the array stays readable, degraded;
 *   3. batches: rk_vol_rebuild() of checkpoint_bytes, NEW flushed, then the
 *      checkpoint (data-area bytes done) recorded on every live member and on
 *      NEW.  Checkpoints do not bump events: a crash between two members'
 *      updates must not make one of them stale; on resume the smallest
 *      checkpoint any copy records is used;
 *   4. done: ROLE ACTIVE, checkpoint 0, events E+2 on every live member
 *      first, then on NEW (a crash between leaves NEW one event behind:
 *      stale, the array still degraded and readable; running the rebuild
 *      again finishes it).
 * Running the same rebuild again after an interruption resumes: NEW still
 * carries the member UUID the members record for ROLE as REBUILDING.
 */
#ifndef RK_RECOVER_H
#define RK_RECOVER_H

#include <stdint.h>
#include "rk_dev.h"
#include "rk_err.h"
#include "rk_sb.h"

#define RK_REBUILD_CHECKPOINT_DEFAULT (64u << 20)   /* bytes between recorded checkpoints */

/* What NEW was before the rebuild. */
enum rk_new_kind {
	RK_NEW_BLANK = 0,   /* nothing recognised on it */
	RK_NEW_CREATED,     /* did not exist: created as a sparse file of the members' size */
	RK_NEW_STALE,       /* an old member of this array (stale, faulty, replaced): replaced */
	RK_NEW_RESUME,      /* the member of an interrupted rebuild: continued */
	RK_NEW_FORCED,      /* carried a recognised signature; overwritten with force */
};
const char *rk_new_kind_name(enum rk_new_kind k);   /* "blank", "created", "stale member", ... */

struct rk_rebuild_result;

struct rk_rebuild_opts {
	int64_t  role;              /* -1: the one role without a member (or NEW's own role) */
	int      force;             /* overwrite a NEW that carries something recognised */
	uint64_t checkpoint_bytes;  /* 0: RK_REBUILD_CHECKPOINT_DEFAULT; rounded up to whole chunks */
	/* Progress (may be NULL): DONE of TOTAL data-area bytes of this run (a
	 * resumed run counts from where it resumed). */
	void   (*progress)(void *ctx, uint64_t done, uint64_t total);
	void    *progress_ctx;
	/* Called once the plan is known, before anything is written (may be
	 * NULL), with progress_ctx: lets a tool say "resuming at X" before the
	 * work starts. */
	void   (*on_plan)(void *ctx, const struct rk_rebuild_result *r);
	/* Tests (may be NULL): called for each live member's device (IDX = its
	 * role) and for NEW's (IDX = nroles) once opened read-write; may replace
	 * *DEV, e.g. with rk_dev_fault() (which takes ownership). */
	rk_err (*wrap_dev)(void *ctx, uint32_t idx, rk_dev **dev);
	void    *wrap_ctx;
};

struct rk_rebuild_result {
	uint8_t  array_uuid[16];
	char     name[RK_SB_NAME_LEN + 1];
	int32_t  level;
	uint32_t nroles;
	uint32_t role;              /* the role rebuilt */
	enum rk_new_kind new_kind;
	char     new_what[512];     /* NEW before: "an old member of this array (...)", what --force overwrote, ... */
	uint8_t  member_uuid[16];   /* NEW's member UUID */
	uint64_t new_size;          /* NEW's size in bytes */
	int      resumed;           /* continued an interrupted rebuild */
	uint64_t start;             /* data-area byte this run started at (resume point) */
	uint64_t total;             /* data-area bytes of the role (member data size in whole chunks) */
	uint64_t done;              /* data-area bytes rebuilt and recorded */
	uint64_t events_before, events_after;
	int      was_unclean;       /* the array was open for writing: parity may lag where writes were in flight */
	char     notes[1024];       /* further lines for a report, '\n'-separated */
};

/* Rebuilds a role of the array found among PATHS onto NEWPATH (see the
 * order above).  RES (required) is filled as far as the run got.
 * Refusals, with nothing written:
 *   RK_E_INVAL   no role to rebuild, several missing without o->role, a role
 *                that has a member, NEW being an active member (usage);
 *   RK_E_EXISTS  NEW carries a recognised signature (another array, a file
 *                system, a partition table) and force is off;
 *   RK_E_SHORT   NEW too small for the data area and both superblock copies;
 *   RK_E_TOOFEW, RK_E_CONFLICT, RK_E_NOTSUP  the array cannot be rebuilt
 *                (too few members, split brain, no redundancy, reshape);
 *   RK_E_NOSB    no array among PATHS.
 * Failures during the rebuild (RK_E_IO: a member or NEW failed, RK_E_FAULT
 * from test backends) leave a resumable state. */
rk_err rk_recover_rebuild(const char *newpath, char *const *paths, uint32_t npaths,
                          const struct rk_rebuild_opts *o, struct rk_rebuild_result *res);

/* ---- restore-superblock ---- */

enum rk_restore_action {
	RK_RESTORE_OK = 0,     /* both copies good and equal: nothing written */
	RK_RESTORE_COPY,       /* one copy rewritten from the other on the same member */
	RK_RESTORE_ROLE,       /* both copies were gone: rebuilt from the other members' role table */
	RK_RESTORE_CANNOT,     /* needs repair but its place is not certain, or a write failed */
	RK_RESTORE_SKIPPED,    /* no superblock and nothing to say it is a member (e.g. an unrelated file) */
};
const char *rk_restore_action_name(enum rk_restore_action a);   /* "ok", "copy rewritten", ... */

struct rk_restore_member {
	const char *path;      /* as given */
	enum rk_restore_action action;
	int      copies;       /* bit 0: primary rewritten, bit 1: backup rewritten */
	int64_t  role;         /* -1 when unknown */
	uint64_t events;       /* of the superblock it has now (or had) */
	char     what[1024];   /* in words: what was wrong, what was written, what was verified */
};

struct rk_restore_opts {
	uint32_t sample;       /* stripes (or mirror pieces) verified before adopting a member; 0 = 256 */
	rk_err (*wrap_dev)(void *ctx, uint32_t idx, rk_dev **dev);  /* tests: IDX = index in PATHS */
	void    *wrap_ctx;
};

struct rk_restore_result {
	uint32_t n;
	struct rk_restore_member *m;   /* one per path, in the order given */
	uint32_t nrepaired, ncannot;
};

/* For each path: a copy that is bad, absent, older than or different from
 * the trusted copy is rewritten from it (same contents, events unchanged).
 * A path with neither copy is given a superblock when its place is certain:
 * exactly one array among PATHS has exactly one role without a member, that
 * role is ACTIVE in the freshest member's table (not marked faulty or
 * missing, no stale member of it given), exactly one such path has the
 * size of a member, and its data is consistent with the other members
 * (parity levels: P/Q of a sample of stripes; mirrors: a sample compared
 * with another copy) with something other than zeros seen.  The new
 * superblock is the freshest member's with the role's member UUID, the
 * role and the events.  Returns RK_OK with *OUT (free with
 * rk_restore_result_free) describing each path; errors only for memory or
 * invalid arguments. */
rk_err rk_recover_restore(char *const *paths, uint32_t npaths, const struct rk_restore_opts *o,
                          struct rk_restore_result **out);
void   rk_restore_result_free(struct rk_restore_result *r);

#endif
