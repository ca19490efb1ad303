/* rk_scrub_array.h: scrub an assembled array -- the library operation
 * behind raid-scrub.
 *
 * rk_scrub_array_open_members() opens the active members of a discovered
 * array (read-only unless writable); rk_scrub_array() then scrubs them:
 *   1. the array is opened for writing over the members (repair only:
 *      rk_array_open_devs), so a repair runs the write protocol --
 *      marked open for writing before its first member write
 *      (rk_array_begin_write), clean again at the end (rk_array_close);
 *   2. the stripe range from opts.at/length (rk_scrub_range), or, with
 *      opts.resume, the range and resume point a checkpoint recorded;
 *   3. rk_scrub_run over [start, end) (end: last, or sooner with
 *      stop_after), the caller's callbacks called as it goes, the
 *      checkpoint saved about once a second and when the run stops or
 *      fails, and removed when the range is done;
 *   4. the array closed (repair).
 * Nothing is printed: the outcome is in struct rk_scrub_array_result. */
#ifndef RK_SCRUB_ARRAY_H
#define RK_SCRUB_ARRAY_H

#include <stdint.h>
#include "rk_dev.h"
#include "rk_discover.h"
#include "rk_err.h"
#include "rk_geom.h"
#include "rk_sb.h"
#include "rk_scrub.h"
#include "rk_scrub_checkpoint.h"

/* The members of an array to scrub: role r is DEVS[r] (NULL = missing),
 * its superblock SBS[r]; TMPL is the freshest superblock. */
struct rk_scrub_members {
	const struct rk_sb *tmpl;
	uint32_t nroles;
	rk_dev **devs;
	const struct rk_sb *const *sbs;
	const struct rk_sb **owned_sbs;  /* SBS when opened by rk_scrub_array_open_members */
	const char *first_path;      /* the first member opened (the default checkpoint goes beside it); may be NULL */
	int owned;                   /* opened by rk_scrub_array_open_members: closed by _close_members */
};

/* May replace *DEV (e.g. with rk_dev_fault(), which takes ownership of the
 * old one; *DEV is owned by the members then, also on failure). */
typedef rk_err (*rk_scrub_wrap_fn)(void *ctx, uint32_t role, rk_dev **dev);

/* Opens every active member of AI (with a path and a superblock), read-write
 * when WRITABLE, each handed to WRAP (may be NULL) once opened.  On error
 * the members opened so far stay in M (close them with
 * rk_scrub_array_close_members).  Errors: RK_E_NOMEM, rk_dev_open's, WRAP's. */
rk_err rk_scrub_array_open_members(struct rk_scrub_members *m, const struct rk_array_info *ai, int writable,
                                   rk_scrub_wrap_fn wrap, void *wrap_ctx);
/* Members the caller opened (tests): DEVS and SBS stay the caller's. */
void   rk_scrub_array_use_members(struct rk_scrub_members *m, const struct rk_sb *tmpl, uint32_t nroles,
                                  rk_dev **devs, const struct rk_sb *const *sbs);
/* Closes what rk_scrub_array_open_members opened; NULL-safe, idempotent. */
void   rk_scrub_array_close_members(struct rk_scrub_members *m);

/* Where the checkpoint lives. */
enum rk_scrub_checkpoint_mode {
	RK_SCRUB_CKPT_NONE = 0,      /* no resume point */
	RK_SCRUB_CKPT_DEFAULT,       /* .raid-scrub-UUID beside the first member */
	RK_SCRUB_CKPT_PATH,          /* opts.checkpoint */
};

/* What rk_scrub_array tells at the start of the run (after the range and
 * resume point are known, before the first read). */
struct rk_scrub_array_start {
	uint64_t first, last;        /* the stripe range */
	uint64_t start;              /* the first stripe this run checks */
	int resumed;                 /* start comes from a checkpoint */
	int resume_missing;          /* opts.resume, but no checkpoint file: from the beginning */
	const char *checkpoint;      /* the checkpoint path, or NULL */
};

struct rk_scrub_array_opts {
	int repair;
	int rewrite_unconfirmed;     /* see rk_scrub_opts */
	int no_map;                  /* see rk_scrub_opts */
	uint64_t at, length;         /* volume bytes to check (length 0: to the end) */
	int resume;                  /* continue the range recorded in the checkpoint */
	uint64_t stop_after;         /* stop after about this many volume bytes (0: no limit) */
	enum rk_scrub_checkpoint_mode checkpoint_mode;
	const char *checkpoint;      /* RK_SCRUB_CKPT_PATH */
	/* callbacks (each may be NULL), all with CTX */
	void *ctx;
	void (*on_start)(void *ctx, const struct rk_scrub_array_start *s);
	rk_scrub_region_fn on_region;
	rk_scrub_unreadable_fn on_unreadable;
	/* after each batch: BYTES_DONE volume bytes of the range checked (the
	 * resumed part included); non-zero stops the run (a resume point is
	 * saved) */
	int (*on_progress)(void *ctx, uint64_t next_stripe, uint64_t bytes_done);
	/* once, the first time the checkpoint cannot be saved (the run goes on
	 * without a resume point); MSG names the file and the reason */
	void (*on_checkpoint_error)(void *ctx, const char *msg);
};

/* Which step of rk_scrub_array failed. */
enum rk_scrub_array_step {
	RK_SCRUB_STEP_NONE = 0,
	RK_SCRUB_STEP_OPEN,          /* opening the array for writing (repair) */
	RK_SCRUB_STEP_RANGE,         /* opts.at / opts.length outside the volume */
	RK_SCRUB_STEP_RESUME,        /* the checkpoint cannot be resumed from */
	RK_SCRUB_STEP_RUN,           /* rk_scrub_run */
};

struct rk_scrub_array_result {
	struct rk_geom geom;
	uint64_t first, last, start; /* as rk_scrub_array_start (0, nstripes, 0 until known) */
	int resumed;
	char checkpoint[4096];       /* the checkpoint path, "" for none */
	struct rk_scrub_ckpt before; /* counts of the run resumed from (zero unless resumed) */
	struct rk_scrub_stats stats; /* this run's */
	/* the step that failed, its error and message (RK_OK, "" when none) */
	enum rk_scrub_array_step failed;
	rk_err err;
	char errmsg[512];
	/* closing the array after a repair (RK_OK when it went well) */
	rk_err close_err;
	char close_msg[512];
};

/* Scrubs the array of M (see the top of this file) and fills RES
 * (required; filled also on error).  Returns RES->err, or, when that is
 * RK_OK, RES->close_err.  RK_E_NOTSUP for levels linear and 0 (nothing
 * is opened). */
rk_err rk_scrub_array(const struct rk_scrub_members *m, const struct rk_scrub_array_opts *opts,
                      struct rk_scrub_array_result *res);

#endif
