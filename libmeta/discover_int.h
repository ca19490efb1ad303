/* discover_int.h: what discover.c (paths, groups) and discover_array.c
 * (one array from a group) share.  Private to discovery. */
#ifndef RK_DISCOVER_INT_H
#define RK_DISCOVER_INT_H

#include <stdint.h>
#include <sys/types.h>

#include "rk_discover.h"

/* One path given, while discovery works on it. */
struct candidate {
	struct rk_member m;
	dev_t devno;
	ino_t ino;
	int have_id;     /* devno and ino known */
	int decided;     /* class final (left over), not a role candidate any more */
	int group;       /* array group index, -1 none */
	int in_role;     /* placed in roles[] */
	int64_t same_as; /* the same file as path index same_as (a duplicate), else -1 */
};

/* Sets M's reason (printf-style). */
__attribute__((format(printf, 2, 3)))
void rk_discover_set_reason(struct rk_member *m, const char *fmt, ...);

/* Builds array A (index INDEX in the discovery) from the undecided
 * candidates of group GROUP among the N in C: duplicates by member UUID,
 * the freshest member, every other member judged from its table (split
 * brain included), missing roles and the state.  Each candidate it places
 * gets in_role; every other one of the group gets decided with a reason.
 * Errors only for memory. */
rk_err rk_discover_build_array(struct candidate *c, uint32_t n, int group, struct rk_array_info *a, int32_t index);

#endif
