/* foreign.c: other formats' metadata as views (rk_fmt.h "Views"): reading
 * a member for every foreign format of the table, the checks every view
 * passes before discovery or the engine trusts it, and the helpers the
 * decoders build views with. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "fmt_int.h"
#include "rk_fmt.h"
#include "rk_geom.h"
#include "rk_le.h"
#include "rk_resize.h"
#include "rk_util.h"

void rk_view_init(struct rk_sb *v, uint32_t origin, const char *origin_name)
{
	memset(v, 0, sizeof *v);
	v->origin = origin;
	snprintf(v->origin_name, sizeof v->origin_name, "%s", origin_name ? origin_name : "foreign");
	v->this_role = RK_ROLE_NONE;
}

struct rk_sb *rk_view_add(struct rk_sb **views, uint32_t *n)
{
	struct rk_sb *nv = realloc(*views, ((size_t)*n + 1) * sizeof **views);
	if (!nv)
		return NULL;
	*views = nv;
	memset(&nv[*n], 0, sizeof nv[*n]);
	return &nv[(*n)++];
}

void rk_view_slot_uuid(uint8_t out[16], uint32_t key)
{
	/* readable in reports: 00000000-0000-0000-0000-0000000000NN (slot + 1) */
	memset(out, 0, 16);
	uint32_t k = key + 1;
	out[12] = (uint8_t)(k >> 24);
	out[13] = (uint8_t)(k >> 16);
	out[14] = (uint8_t)(k >> 8);
	out[15] = (uint8_t)k;
}

void rk_view_fold_uuid(uint8_t out[16], const uint8_t *id, size_t len)
{
	memset(out, 0, 16);
	for (size_t i = 0; i < len; i++)
		out[i % 16] ^= id[i];
}

rk_err rk_view_volume(const struct rk_sb *v, uint64_t *vol)
{
	struct rk_geom g;
	*vol = 0;
	rk_err e = rk_geom_init(&g, v->level, v->layout, v->chunk, v->nroles, v->data_size);
	if (e) {
		char why[256];
		snprintf(why, sizeof why, "%s", rk_errmsg());   /* rk_fail reuses the buffer */
		return rk_fail(RK_E_CORRUPT, "%s: level %d, layout %u, chunk %" PRIu64 " on %u members of %" PRIu64
		               " bytes: %s", rk_view_origin_name(v), (int)v->level, v->layout, v->chunk, v->nroles,
		               v->data_size, why);
	}
	*vol = g.volume_size;
	return RK_OK;
}

const char *rk_view_origin_name(const struct rk_sb *v)
{
	if (!v || v->origin == RK_ORIGIN_RAIDKIT)
		return "raidkit";
	return v->origin_name[0] ? v->origin_name : "foreign";
}

/* One geometry of a view against the device: the engine takes it and the
 * data area lies on the member. */
static rk_err check_geom(const char *what, int32_t level, uint32_t layout, uint64_t chunk, uint32_t nroles,
                         uint64_t data_offset, uint64_t data_size, uint64_t dev_size, uint64_t *vol)
{
	struct rk_geom g;
	uint64_t end;
	if (nroles == 0 || nroles > RK_SB_MAX_ROLES)
		return rk_fail(RK_E_CORRUPT, "%s: %u members (1 to %u)", what, nroles, RK_SB_MAX_ROLES);
	if (data_offset % 512 || data_size % 512)
		return rk_fail(RK_E_CORRUPT, "%s: data offset %" PRIu64 " or size %" PRIu64 " not in whole sectors",
		               what, data_offset, data_size);
	if (rk_add_ovf(data_offset, data_size, &end) || end > dev_size)
		return rk_fail(RK_E_CORRUPT, "%s: data area %" PRIu64 "+%" PRIu64 " ends past the member's %" PRIu64 " bytes",
		               what, data_offset, data_size, dev_size);
	rk_err e = rk_geom_init(&g, level, layout, chunk, nroles, data_size);
	if (e) {
		char why[256];
		snprintf(why, sizeof why, "%s", rk_errmsg());   /* rk_fail reuses the buffer */
		return rk_fail(RK_E_CORRUPT, "%s: %s", what, why);
	}
	*vol = g.volume_size;
	return RK_OK;
}

/* The role table: sized, states known, this_role inside it. */
static rk_err check_roles(const struct rk_sb *v, uint32_t span)
{
	if (v->nentries < span || v->nentries > RK_SB_MAX_ROLES)
		return rk_fail(RK_E_CORRUPT, "role table of %u entries for %u roles", v->nentries, span);
	for (uint32_t r = 0; r < v->nentries; r++) {
		if (v->roles[r].state >= RK_ROLE__COUNT)
			return rk_fail(RK_E_CORRUPT, "role %u: state %u", r, v->roles[r].state);
		if (r < span && v->roles[r].state == RK_ROLE_SPARE)
			return rk_fail(RK_E_CORRUPT, "role %u: a spare inside the array's roles", r);
	}
	if (v->this_role != RK_ROLE_NONE && v->this_role >= v->nentries)
		return rk_fail(RK_E_CORRUPT, "this member's role %u past the table's %u entries", v->this_role, v->nentries);
	return RK_OK;
}

rk_err rk_view_check(const struct rk_sb *v, uint64_t dev_size)
{
	if (!v || v->origin == RK_ORIGIN_RAIDKIT)
		return rk_fail(RK_E_INVAL, "not a view of foreign metadata");
	if (v->feat_incompat & ~RK_FEAT_INCOMPAT_RESHAPE || v->feat_ro_compat || v->feat_compat)
		return rk_fail(RK_E_CORRUPT, "feature bits a view does not carry");
	if (v->array_state > RK_ARRAY_ACTIVE)
		return rk_fail(RK_E_CORRUPT, "array state %u", v->array_state);
	uint64_t vol;
	rk_err e = check_geom("the array's geometry", v->level, v->layout, v->chunk, v->nroles, v->data_offset,
	                      v->data_size, dev_size, &vol);
	if (e)
		return e;
	uint32_t span = v->nroles;
	if (v->feat_incompat & RK_FEAT_INCOMPAT_RESHAPE) {
		const struct rk_geom_desc *n = &v->reshape_new;
		uint64_t nvol;
		if ((e = check_geom("the reshape's new geometry", n->level, n->layout, n->chunk, n->nroles,
		                    n->data_offset, n->data_size, dev_size, &nvol)))
			return e;
		if (v->reshape_flags & ~RK_RESHAPE_FLAGS_SUPP)
			return rk_fail(RK_E_CORRUPT, "reshape flags 0x%x", v->reshape_flags);
		vol = vol > nvol ? vol : nvol;   /* md keeps the old size until the end */
		span = n->nroles > span ? n->nroles : span;
		if (v->reshape_pos > v->volume_size)
			return rk_fail(RK_E_CORRUPT, "reshape position %" PRIu64 " past the volume's %" PRIu64 " bytes",
			               v->reshape_pos, v->volume_size);
	}
	if (v->volume_size == 0 || v->volume_size > vol)
		return rk_fail(RK_E_CORRUPT, "volume size %" PRIu64 " (the geometry holds %" PRIu64 ")", v->volume_size, vol);
	return check_roles(v, span);
}

void rk_foreign_read_free(struct rk_foreign_read *r)
{
	if (!r)
		return;
	if (r->fmt && r->obj)
		r->fmt->release(r->obj);
	free(r->views);
	memset(r, 0, sizeof *r);
}

/* FMT's views of D's decoded OBJ into R, each checked; a refusal is kept
 * in why (the member is then foreign but unusable). */
static rk_err take_views(struct rk_foreign_read *r, rk_dev *d)
{
	uint64_t size = rk_dev_size(d);
	rk_err e = r->fmt->views(r->obj, size, &r->views, &r->nviews);
	if (e == RK_E_NOMEM)
		return e;
	for (uint32_t i = 0; !e && i < r->nviews; i++)
		if ((e = rk_view_check(&r->views[i], size)) == RK_OK)
			r->views[i].dev_size = r->views[i].dev_size ? r->views[i].dev_size : size;
	if (e) {
		snprintf(r->why, sizeof r->why, "%s", rk_errmsg());
		free(r->views);
		r->views = NULL;
		r->nviews = 0;
	}
	return RK_OK;
}

rk_err rk_foreign_read(rk_dev *d, const char *path, struct rk_foreign_read *out)
{
	memset(out, 0, sizeof *out);
	for (int i = 0; rk_meta_fmts[i]; i++) {
		const struct rk_meta_fmt *f = rk_meta_fmts[i];
		if (!f->views)
			continue;
		void *obj = NULL;
		rk_err e = f->decode(d, path, &obj);
		if (e == RK_E_NOMEM || e == RK_E_IO)
			return e;
		if (e != RK_OK) {
			/* a format's signature with a body it refuses: say so, but
			 * let a later format of the table claim the member */
			if (e != RK_E_NOSB && !out->why[0])
				snprintf(out->why, sizeof out->why, "%s: %s", f->desc, rk_errmsg());
			continue;
		}
		out->fmt = f;
		out->obj = obj;
		out->why[0] = 0;
		return take_views(out, d);
	}
	return RK_OK;
}

rk_err rk_foreign_refuse(rk_dev *d, const char *doing)
{
	struct rk_foreign_read f;
	rk_err e = rk_foreign_read(d, rk_dev_path(d), &f);
	if (e == RK_OK && f.fmt) {
		const char *origin = f.nviews ? f.views[0].origin_name : f.fmt->desc;
		e = rk_fail(RK_E_NOTSUP, "%s: a member of an %s array: raidkit does not %s arrays other software made; "
		            "raid-assemble --export OUT makes a copy of the volume to work on", rk_dev_path(d), origin, doing);
	}
	rk_foreign_read_free(&f);
	return e;
}
