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
#define RK_GEOMETRY_FP_SAMPLES 4 /* blocks hashed: at 0, 1/4, 1/2, 3/4 of the data area */
#define RK_GEOMETRY_FP_BLOCK   65536u

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

/* Matches the images PATHS (G's own paths when PATHS is NULL) to G's
 * roles, as discovery does for arrays with metadata: one array whose roles
 * carry a view (struct rk_sb, origin RK_ORIGIN_GEOMETRY, "geometry file")
 * each, and every image not used in left[] with the reason.  An image
 * takes a role when its content at the role's offset has the role's
 * fingerprint (whatever its name), else when its path names the role and
 * the role has no fingerprint (spec/geometry.md "Matching").  Roles no
 * image takes are missing; the state is clean, degraded or failed as for
 * any array.  Errors only for memory and a geometry rk_geom_init refuses. */
struct rk_discovery;
rk_err rk_geometry_discover(struct rk_discovery **out, const struct rk_geometry *g,
                            char *const *paths, uint32_t npaths);

/* Opens the array G describes read-only over the images PATHS (G's own
 * paths when PATHS is NULL), matching them as rk_geometry_discover does.
 * Roles without an image are missing (degraded, or RK_E_TOOFEW beyond what
 * the level tolerates).  Errors name the image at fault. */
rk_err rk_geometry_open(rk_array **out, const struct rk_geometry *g,
                        char *const *paths, uint32_t npaths);

/* Computes the content fingerprint of the role data area [OFFSET,
 * +SIZE) of the image PATH (opened read-only; SIZE 0: to the image's end):
 * SHA-256 over the RK_GEOMETRY_FP_BLOCK bytes (fewer at the area's end)
 * at 0, 1/4, 1/2 and 3/4 of the area, each aligned down to 4 KiB
 * (spec/geometry.md).  RK_E_SHORT when the area is not on the image. */
rk_err rk_geometry_fingerprint(const char *path, uint64_t offset, uint64_t size,
                               uint8_t fp[RK_GEOMETRY_FP_LEN]);
/* The same over a device already open. */
rk_err rk_geometry_fingerprint_dev(rk_dev *d, uint64_t offset, uint64_t size,
                                   uint8_t fp[RK_GEOMETRY_FP_LEN]);
/* FP as 64 lower-case hex digits. */
void rk_geometry_fp_hex(const uint8_t fp[RK_GEOMETRY_FP_LEN], char hex[2 * RK_GEOMETRY_FP_LEN + 1]);

/* Writes G's keys into the open JSON object J: level, layout, chunk,
 * members_total, volume_size, member_size, members[{role, path|null,
 * offset, fingerprint (hex)|null}]
 * (detect adds found, confidence, evidence, alternatives around them). */
struct rk_json;
void rk_geometry_json(struct rk_json *j, const struct rk_geometry *g);

/* Reads a geometry file (hostile input: every field checked, geometry
 * validated by rk_geom_init); RK_E_CORRUPT/RK_E_INVAL with a sentence naming
 * the file and the field. */
rk_err rk_geometry_load(const char *file, struct rk_geometry *g);
/* The same over TEXT (LEN bytes, not necessarily NUL-terminated; NAME
 * names it in messages): what rk_geometry_load does after reading. */
rk_err rk_geometry_parse(const char *name, const char *text, size_t len, struct rk_geometry *g);

/* The `mdadm --build ...` (RAID-0, linear) or `mdadm --create
 * --assume-clean ...` (1, 4, 5, 6, 10) command line that makes md serve the
 * same volume from G's paths (one per role, `missing` for a NULL path),
 * into BUF; RK_E_NOTSUP with the reason when md cannot express G (offsets
 * that differ per member or are not whole KiB, --build with an offset, a
 * missing RAID-0 role, a layout mdadm cannot spell), RK_E_RANGE when LEN is
 * too small. */
rk_err rk_geometry_mdadm_line(const struct rk_geometry *g, char *buf, size_t len);

#endif
