/* geometry_open.c: an array described by a geometry (rk_geometry.h) over
 * images that carry no metadata of it: images matched to roles by content
 * (fingerprints) or path, one view (struct rk_sb, origin
 * RK_ORIGIN_GEOMETRY) per image, a discovery result the tools report like
 * any other, and the read-only open through rk_array_open (per-member data
 * offsets, degraded reads and missing roles as for md).  spec/geometry.md. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "fmt_int.h"
#include "rk_discover.h"
#include "rk_fmt.h"
#include "rk_geometry.h"
#include "rk_part.h"
#include "rk_util.h"

/* One image given: its device and what matching decided. */
struct img {
	const char *path;
	rk_dev *d;
	int64_t role;            /* the role it takes, -1 none */
	enum rk_member_class cls;   /* when left out */
	char why[512];
	/* fingerprints already computed, by data offset (offsets differ per role) */
	uint32_t nfp;
	struct { uint64_t off; int ok; uint8_t fp[RK_GEOMETRY_FP_LEN]; } fp[8];
};

struct match {
	const struct rk_geometry *g;
	struct img *im;
	uint32_t n;
	int64_t *taker;          /* per role: the image index, -1 none */
	const char **how;        /* per role: "content" or "path" */
};

/* Image I's fingerprint at the data area of role R: 1 and FP when it can
 * be computed (cached for up to 8 offsets), 0 when the area is not on it. */
static int img_fp(struct img *im, const struct rk_geometry *g, uint32_t r, const uint8_t **fp)
{
	uint64_t off = g->roles[r].offset;
	for (uint32_t k = 0; k < im->nfp; k++)
		if (im->fp[k].off == off) {
			*fp = im->fp[k].fp;
			return im->fp[k].ok;
		}
	uint32_t k = im->nfp < 8 ? im->nfp++ : 7;
	im->fp[k].off = off;
	im->fp[k].ok = rk_geometry_fingerprint_dev(im->d, off, g->member_size, im->fp[k].fp) == RK_OK;
	*fp = im->fp[k].fp;
	return im->fp[k].ok;
}

/* Whether image path P names role R's path. */
static int names_role(const struct rk_geometry *g, uint32_t r, const char *p)
{
	const char *q = g->roles[r].path;
	return q && (!strcmp(p, q) || rk_path_same_object(p, q));
}

static void take(struct match *m, uint32_t i, uint32_t r, const char *how)
{
	m->im[i].role = r;
	m->taker[r] = i;
	m->how[r] = how;
}

/* Pass 1: by content.  Each role with a fingerprint takes the first free
 * image whose data area there hashes the same, an image whose path names
 * the role first (mirrors hold the same bytes: their paths tell them
 * apart). */
static void match_content(struct match *m)
{
	const struct rk_geometry *g = m->g;
	for (int pass = 0; pass < 2; pass++)
		for (uint32_t r = 0; r < g->nroles; r++) {
			if (!g->roles[r].have_fp || m->taker[r] >= 0)
				continue;
			for (uint32_t i = 0; i < m->n; i++) {
				const uint8_t *fp;
				if (!m->im[i].d || m->im[i].role >= 0 || (pass == 0 && !names_role(g, r, m->im[i].path)))
					continue;
				if (img_fp(&m->im[i], g, r, &fp) && !memcmp(fp, g->roles[r].fp, RK_GEOMETRY_FP_LEN)) {
					take(m, i, r, "by content (fingerprint)");
					break;
				}
			}
		}
}

/* Pass 2: by path, for roles without a fingerprint. */
static void match_path(struct match *m)
{
	const struct rk_geometry *g = m->g;
	for (uint32_t r = 0; r < g->nroles; r++) {
		if (g->roles[r].have_fp || m->taker[r] >= 0)
			continue;
		for (uint32_t i = 0; i < m->n; i++)
			if (m->im[i].d && m->im[i].role < 0 && names_role(g, r, m->im[i].path)) {
				take(m, i, r, "by path");
				break;
			}
	}
}

/* Why image I took no role. */
static void say_left(struct match *m, uint32_t i)
{
	const struct rk_geometry *g = m->g;
	struct img *im = &m->im[i];
	if (!im->d || im->role >= 0 || im->why[0])
		return;   /* used, or its reason already given (cannot open, too small) */
	im->cls = RK_MEMBER_UNKNOWN;
	for (uint32_t r = 0; r < g->nroles; r++) {
		const uint8_t *fp;
		if (g->roles[r].have_fp && m->taker[r] >= 0 && img_fp(im, g, r, &fp) &&
		    !memcmp(fp, g->roles[r].fp, RK_GEOMETRY_FP_LEN)) {
			im->cls = RK_MEMBER_DUPLICATE;
			snprintf(im->why, sizeof im->why, "same content as role %u, which %s already serves", r,
			         m->im[m->taker[r]].path);
			return;
		}
		if (names_role(g, r, im->path) && !g->roles[r].have_fp && m->taker[r] >= 0) {
			im->cls = RK_MEMBER_DUPLICATE;
			snprintf(im->why, sizeof im->why, "names role %u, which %s (the same file) already serves", r,
			         m->im[m->taker[r]].path);
			return;
		}
		if (names_role(g, r, im->path) && g->roles[r].have_fp) {
			snprintf(im->why, sizeof im->why, "named as role %u in the geometry file, but its content there "
			         "does not have the role's fingerprint (another image, or changed)", r);
			return;
		}
	}
	snprintf(im->why, sizeof im->why, "matches no role of the geometry file (neither a path named there "
	         "nor a role's fingerprint)");
}

/* The array's identity: SHA-256 of the geometry's numbers, first 16
 * bytes (the same file gives the same UUID). */
static void geometry_uuid(const struct rk_geometry *g, uint8_t uuid[16])
{
	char txt[128];
	uint8_t h[32];
	unsigned int len = 0;
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	snprintf(txt, sizeof txt, "raidkit geometry %d %u %" PRIu64 " %u %" PRIu64 " %" PRIu64, (int)g->level, g->layout,
	         g->chunk, g->nroles, g->member_size, g->volume_size);
	memset(h, 0, sizeof h);
	if (ctx && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) && EVP_DigestUpdate(ctx, txt, strlen(txt))) {
		for (uint32_t r = 0; r < g->nroles; r++)
			EVP_DigestUpdate(ctx, &g->roles[r].offset, sizeof g->roles[r].offset);
		EVP_DigestFinal_ex(ctx, h, &len);
	}
	EVP_MD_CTX_free(ctx);
	memcpy(uuid, h, 16);
	uuid[6] = (uint8_t)((uuid[6] & 0x0f) | 0x80);   /* RFC 4122 version 8 (custom), variant 1 */
	uuid[8] = (uint8_t)((uuid[8] & 0x3f) | 0x80);
}

/* The view of role R served by an image of DEV_SIZE bytes. */
static void make_view(struct rk_sb *v, const struct match *m, uint32_t r, uint64_t dev_size)
{
	const struct rk_geometry *g = m->g;
	rk_view_init(v, RK_ORIGIN_GEOMETRY, "geometry file");
	geometry_uuid(g, v->array_uuid);
	rk_view_slot_uuid(v->member_uuid, r);
	snprintf(v->name, sizeof v->name, "geometry");
	v->level = g->level;
	v->layout = g->layout;
	v->chunk = g->level == 1 || g->level == RK_LEVEL_LINEAR ? 0 : g->chunk;
	v->nroles = v->nentries = g->nroles;
	v->this_role = r;
	v->array_state = RK_ARRAY_CLEAN;
	v->events = 1;
	v->data_offset = g->roles[r].offset;
	v->data_size = g->member_size;
	v->volume_size = g->volume_size;
	v->dev_size = dev_size;
	for (uint32_t k = 0; k < g->nroles; k++) {
		v->roles[k].state = m->taker[k] >= 0 ? RK_ROLE_ACTIVE : RK_ROLE_EMPTY;
		rk_view_slot_uuid(v->roles[k].member_uuid, k);
	}
}

/* Member M of the discovery for image I serving role R (R -1: left out):
 * path, class, reason and, for a role, its view. */
static rk_err fill_member(struct rk_member *mb, const struct match *m, uint32_t i, int64_t r)
{
	const struct img *im = &m->im[i];
	memset(mb, 0, sizeof *mb);
	mb->argi = (int32_t)i;
	mb->array_idx = -1;
	mb->role = r;
	mb->rd.chosen = -1;
	if (!(mb->path = strdup(im->path)))
		return rk_fail(RK_E_NOMEM, "geometry: out of memory");
	if (r < 0) {
		mb->cls = im->cls;
		snprintf(mb->reason, sizeof mb->reason, "%s", im->why);
		return RK_OK;
	}
	struct rk_sb *v = malloc(sizeof *v);
	if (!v)
		return rk_fail(RK_E_NOMEM, "geometry: out of memory");
	make_view(v, m, (uint32_t)r, rk_dev_size(im->d));
	mb->rd.copy[0] = (struct rk_sb_copy){ .offset = 0, .status = RK_COPY_OK, .sb = v };
	mb->rd.copy[1] = (struct rk_sb_copy){ .status = RK_COPY_ABSENT, .err = RK_E_NOSB };
	mb->rd.chosen = 0;
	snprintf(mb->rd.why, sizeof mb->rd.why, "geometry file, data at %" PRIu64, v->data_offset);
	mb->sb = v;
	mb->has_sb = 1;
	mb->cls = RK_MEMBER_ACTIVE;
	mb->array_idx = 0;
	mb->events = v->events;
	memcpy(mb->array_uuid, v->array_uuid, 16);
	memcpy(mb->member_uuid, v->member_uuid, 16);
	snprintf(mb->reason, sizeof mb->reason, "role %u %s, data at byte %" PRIu64, (unsigned)r, m->how[r],
	         v->data_offset);
	return RK_OK;
}

/* Images matched to a role whose data area is not on them (no fingerprint:
 * taken by path) are left out again, with the reason. */
static void drop_short(struct match *m)
{
	for (uint32_t r = 0; r < m->g->nroles; r++) {
		int64_t i = m->taker[r];
		if (i < 0)
			continue;
		struct rk_sb v;
		make_view(&v, m, r, rk_dev_size(m->im[i].d));
		if (rk_view_check(&v, rk_dev_size(m->im[i].d)) == RK_OK)
			continue;
		snprintf(m->im[i].why, sizeof m->im[i].why, "named as role %u, but cannot serve it: %s", r, rk_errmsg());
		m->im[i].cls = RK_MEMBER_UNKNOWN;
		m->im[i].role = -1;
		m->taker[r] = -1;
	}
}

/* The array's state and why, from the roles taken. */
static void set_state(struct rk_array_info *a, const struct rk_geometry *g, const int64_t *taker)
{
	struct rk_geom geo;
	uint8_t *down = calloc(g->nroles, 1);
	char list[256] = "";
	uint32_t nmiss = 0;
	for (uint32_t r = 0; r < g->nroles; r++)
		if (taker[r] < 0) {
			if (down)
				down[r] = 1;
			nmiss++;
			rk_strcatf(list, sizeof list, "%s%u", nmiss > 1 ? ", " : "", r);
		}
	int ok = rk_geom_init(&geo, g->level, g->layout, g->chunk, g->nroles, g->member_size) == RK_OK;
	uint32_t tol = ok ? rk_geom_redundancy(&geo) : 0;
	a->nactive = g->nroles - nmiss;
	if (!nmiss) {
		a->state = RK_ASTATE_CLEAN;
		snprintf(a->why, sizeof a->why, "all %u roles present (geometry file)", g->nroles);
	} else if (ok && down && a->nactive && rk_geom_readable(&geo, down)) {
		a->state = RK_ASTATE_DEGRADED;
		snprintf(a->why, sizeof a->why, "role%s %s missing (%u of %u); RAID-%s tolerates %u missing",
		         nmiss > 1 ? "s" : "", list, nmiss, g->nroles, rk_level_name(g->level), tol);
	} else {
		a->state = RK_ASTATE_FAILED;
		snprintf(a->why, sizeof a->why, "too few members: role%s %s missing (%u of %u), RAID-%s tolerates %u missing",
		         nmiss > 1 ? "s" : "", list, nmiss, g->nroles, rk_level_name(g->level), tol);
	}
	free(down);
}

/* The discovery result from the match. */
static rk_err build_discovery(struct rk_discovery *d, struct match *m)
{
	const struct rk_geometry *g = m->g;
	struct rk_array_info *a = d->arrays = calloc(1, sizeof *d->arrays);
	d->left = calloc(m->n ? m->n : 1, sizeof *d->left);
	if (!a || !d->left || !(a->roles = calloc(g->nroles, sizeof *a->roles)))
		return rk_fail(RK_E_NOMEM, "geometry: out of memory");
	d->narrays = 1;
	a->nroles = g->nroles;
	snprintf(a->name, sizeof a->name, "geometry");
	rk_err e = RK_OK;
	for (uint32_t r = 0; r < g->nroles && !e; r++) {
		struct rk_member *mb = &a->roles[r];
		if (m->taker[r] >= 0) {
			e = fill_member(mb, m, (uint32_t)m->taker[r], r);
			if (!e && !a->sb) {
				a->sb = mb->sb;
				memcpy(a->uuid, mb->sb->array_uuid, 16);
			}
			continue;
		}
		mb->role = r;
		mb->argi = -1;
		mb->array_idx = 0;
		mb->cls = RK_MEMBER_MISSING;
		mb->rd.chosen = -1;
		snprintf(mb->reason, sizeof mb->reason, "no image given matches role %u", r);
	}
	for (uint32_t i = 0; i < m->n && !e; i++)
		if (m->im[i].role < 0)
			e = fill_member(&d->left[d->nleft++], m, i, -1);
	if (!a->sb)
		geometry_uuid(g, a->uuid);
	set_state(a, g, m->taker);
	return e;
}

/* Opens every image read-only (those that cannot be opened are left out
 * with the device layer's reason) and matches them to roles. */
static rk_err match_images(struct match *m)
{
	for (uint32_t i = 0; i < m->n; i++) {
		m->im[i].role = -1;
		if (rk_member_open(&m->im[i].d, m->im[i].path, RK_DEV_RDONLY)) {
			m->im[i].d = NULL;
			m->im[i].cls = RK_MEMBER_UNKNOWN;
			snprintf(m->im[i].why, sizeof m->im[i].why, "%s", rk_errmsg());
		}
	}
	for (uint32_t r = 0; r < m->g->nroles; r++)
		m->taker[r] = -1;
	match_content(m);
	match_path(m);
	drop_short(m);
	for (uint32_t i = 0; i < m->n; i++)
		say_left(m, i);
	return RK_OK;
}

/* G's own paths, when no images are given. */
static rk_err own_paths(const struct rk_geometry *g, char ***paths, uint32_t *n)
{
	*n = 0;
	if (!(*paths = calloc(g->nroles ? g->nroles : 1, sizeof **paths)))
		return rk_fail(RK_E_NOMEM, "geometry: out of memory");
	for (uint32_t r = 0; r < g->nroles; r++)
		if (g->roles[r].path)
			(*paths)[(*n)++] = g->roles[r].path;
	return RK_OK;
}

rk_err rk_geometry_discover(struct rk_discovery **out, const struct rk_geometry *g, char *const *paths,
                            uint32_t npaths)
{
	*out = NULL;
	struct rk_geom geo;
	if (!g || !g->roles || !g->nroles || g->nroles > RK_SB_MAX_ROLES)
		return rk_fail(RK_E_INVAL, "geometry: no roles");
	if (rk_geom_init(&geo, g->level, g->layout, g->chunk, g->nroles, g->member_size))
		return rk_fail(RK_E_INVAL, "geometry: %s", rk_errmsg());
	if (g->volume_size == 0 || g->volume_size > geo.volume_size)
		return rk_fail(RK_E_INVAL, "geometry: volume_size %" PRIu64 " is not in (0, %" PRIu64 "], what the geometry holds",
		               g->volume_size, geo.volume_size);
	char **own = NULL;
	rk_err e = RK_OK;
	if (!paths && (e = own_paths(g, &own, &npaths)))
		return e;
	struct match m = { g, calloc(npaths ? npaths : 1, sizeof *m.im), npaths, calloc(g->nroles, sizeof *m.taker),
	                   calloc(g->nroles, sizeof *m.how) };
	struct rk_discovery *d = calloc(1, sizeof *d);
	if (!m.im || !m.taker || !m.how || !d)
		e = rk_fail(RK_E_NOMEM, "geometry: out of memory");
	for (uint32_t i = 0; !e && i < npaths; i++)
		m.im[i].path = own ? own[i] : paths[i];
	if (!e)
		e = match_images(&m);
	if (!e)
		e = build_discovery(d, &m);
	for (uint32_t i = 0; m.im && i < npaths; i++)
		rk_dev_close(m.im[i].d);
	free(m.im);
	free(m.taker);
	free(m.how);
	free(own);
	if (e) {
		rk_discovery_free(d);
		return e;
	}
	*out = d;
	return RK_OK;
}

rk_err rk_geometry_open(rk_array **out, const struct rk_geometry *g, char *const *paths, uint32_t npaths)
{
	struct rk_discovery *d;
	*out = NULL;
	rk_err e = rk_geometry_discover(&d, g, paths, npaths);
	if (e)
		return e;
	const struct rk_array_info *a = &d->arrays[0];
	if (a->state == RK_ASTATE_FAILED || !a->sb) {
		char why[1200] = "";
		for (uint32_t i = 0; i < d->nleft; i++)
			rk_strcatf(why, sizeof why, "; %s: %s", d->left[i].path, d->left[i].reason);
		e = rk_fail(RK_E_TOOFEW, "geometry: %s%s", a->why, why);
	} else {
		e = rk_array_open(out, a, RK_ARRAY_RDONLY);
	}
	rk_discovery_free(d);
	return e;
}
