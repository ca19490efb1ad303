/* create_int.h: what create.c and create_fill.c share (not installed). */
#ifndef RK_CREATE_INT_H
#define RK_CREATE_INT_H

#include <stdint.h>

#include "rk_create.h"
#include "rk_dev.h"
#include "rk_geom.h"
#include "rk_sb.h"
#include "rk_vol.h"

struct rk_creator {
	struct rk_create_plan plan;
	struct rk_geom g;
	struct rk_sb *tmpl;      /* the array's superblock; members differ in member fields */
	rk_dev **devs;           /* nroles; NULL for missing or not yet created */
	char **wipe;             /* per role: path to wipe (force over a signature), or NULL */
	int from_fd;
	char *from;              /* --from path, for messages */
	void (*progress)(void *, enum rk_create_phase, uint64_t, uint64_t);
	void *progress_ctx;
	rk_err (*wrap_dev)(void *, uint32_t, rk_dev **);
	void *wrap_ctx;
	int committed;
};


/* Appends a line to the plan's notes (informational: dropped when out of
 * memory). */
void create_note(struct rk_create_plan *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The engine over the members, opened on first need into *V (fresh zero
 * members never need it). */
rk_err create_vol_get(rk_creator *c, rk_vol **v);
/* Step 3: finds members with old data and makes redundancy consistent over
 * the stripes they touch (opening *V when needed). */
rk_err create_make_consistent(rk_creator *c, rk_vol **v);
/* Step 4: streams the --from file FROM into the volume V, whole stripes at
 * a time, then flushes. */
rk_err create_fill_from(rk_creator *c, rk_vol *v, const char *from);

#endif
