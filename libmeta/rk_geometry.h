/* rk_geometry.h: an array described without metadata on its members: the
 * answer of raid-recover --detect, the file --save-geometry writes and
 * --geometry (raid-assemble, raid-scrub, the nbdkit plugin) reads back.
 *
 * The file is the JSON document of `raid-recover --detect --json`
 * (../CONTRACT: found, confidence, level, layout, chunk, members_total,
 * volume_size, members[{role, path, offset}], evidence, alternatives) plus,
 * per member, what lets an image be recognised by content when it was
 * renamed (spec/geometry.md).  An array opened from a geometry is always
 * read-only: nothing on the images says the geometry is right, so raidkit
 * never writes through one.
 */
#ifndef RK_GEOMETRY_H
#define RK_GEOMETRY_H

#include <stdint.h>
#include <stdio.h>
#include "rk_array.h"
#include "rk_err.h"

#define RK_GEOMETRY_FP_LEN 32   /* a member's content fingerprint: SHA-256 */

struct rk_geometry_member {
	char    *path;                     /* NULL: the role is missing */
	uint64_t offset;                   /* byte of the image where the role's data area starts */
	int      have_fp;                  /* fp below is set */
	uint8_t  fp[RK_GEOMETRY_FP_LEN];   /* fingerprint of the data area (spec/geometry.md) */
};

struct rk_geometry {
	int32_t  level;                    /* md numbers, as struct rk_geom */
	uint32_t layout;
	uint64_t chunk;
	uint32_t nroles;
	uint64_t member_size;              /* data bytes per member */
	uint64_t volume_size;
	double   confidence;               /* 0..1, as detect reported it */
	struct rk_geometry_member *roles;  /* nroles entries, owned */
};

/* Frees what G owns (not G itself); G may be all zero. */
void rk_geometry_free(struct rk_geometry *g);

/* Opens the array G describes read-only over the images PATHS (G's own
 * paths when PATHS is NULL), matching images to roles by G's paths or, where
 * those differ, by content (fingerprints).  Roles without an image are
 * missing (degraded, or RK_E_TOOFEW beyond what the level tolerates).
 * Errors name the image at fault. */
rk_err rk_geometry_open(rk_array **out, const struct rk_geometry *g,
                        char *const *paths, uint32_t npaths);

/* Computes the content fingerprint of role data starting at OFFSET of the
 * image PATH (opened read-only), for rk_geometry_open's matching. */
rk_err rk_geometry_fingerprint(const char *path, uint64_t offset, uint8_t fp[RK_GEOMETRY_FP_LEN]);

/* Writes G's keys into the open JSON object J: level, layout, chunk,
 * members_total, volume_size, members[{role, path|null, offset, fingerprint}]
 * (detect adds found, confidence, evidence, alternatives around them). */
struct rk_json;
void rk_geometry_json(struct rk_json *j, const struct rk_geometry *g);

/* Reads a geometry file (hostile input: every field checked, geometry
 * validated by rk_geom_init); RK_E_CORRUPT/RK_E_INVAL with a sentence naming
 * the file and the field. */
rk_err rk_geometry_load(const char *file, struct rk_geometry *g);

/* The `mdadm --build ...` or `mdadm --create --assume-clean ...` command line
 * that makes md serve the same volume from DEVS (one per role, NULL for
 * `missing`), into BUF; RK_E_NOTSUP when md cannot express G (offsets that
 * differ per member, a layout md lacks). */
rk_err rk_geometry_mdadm_line(const struct rk_geometry *g, char *buf, size_t len);

#endif
