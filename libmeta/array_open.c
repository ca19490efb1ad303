/* array_open.c: opening an array (rk_array_open and its forms): members
 * opened and checked against discovery, geometry and engines set up (two
 * mid-reshape), the journal replayed after an unclean stop. */
#include "array_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rk_fmt.h"
#include "rk_le.h"
#include "rk_part.h"
#include "rk_test_hooks.h"

static uint32_t missing_list(const rk_array *a, char *list, size_t len)
{
	size_t n = 0;
	uint32_t nmiss = 0;
	list[0] = 0;
	for (uint32_t r = 0; r < a->nroles; r++) {
		if (a->devs[r])
			continue;
		nmiss++;
		if (n < len - 16)
			n += (size_t)snprintf(list + n, len - n, "%s%u", n ? ", " : "", r);
	}
	if (n >= len - 16)
		snprintf(list + len - 16, 16, ", ...");
	return nmiss;
}

/* Whether a role of the array has no member (absent at open). */
static int any_absent(const rk_array *a)
{
	for (uint32_t r = 0; r < a->nroles; r++)
		if (!a->devs[r])
			return 1;
	return 0;
}

/* The end of an open: the journal replayed after an unclean stop, and the
 * superblocks brought in line (read-write). */
static rk_err array_finish_open(rk_array *a)
{
	rk_err e;
	for (uint32_t i = 0; i < a->nparts; i++)
		rk_vol_on_repair(a->part[i].vol, array_on_member_repair, a);
	/* A replay writes data: members absent now are recorded faulty first,
	 * as before any write.  Else a replay cut short would leave bytes in
	 * place that a later open, with the member back and the record then
	 * incomplete on it, would not finish. */
	int replays = a->unclean && (a->tmpl->feat_incompat & RK_FEAT_INCOMPAT_JOURNAL) && array_journal_level(a);
	if ((a->flags & RK_ARRAY_RDWR) && replays && any_absent(a) && (e = array_commit(a, RK_ARRAY_ACTIVE)))
		return e;
	if ((e = array_journal_replay(a)))
		return e;
	/* a replay (or finding nothing to replay) leaves the array consistent:
	 * say so, so the next assembly does not look again; superblocks left
	 * disagreeing by an interrupted update are brought in line */
	if ((a->flags & RK_ARRAY_RDWR) && (replays || a->sb_disagree))
		return array_commit(a, a->unclean && !replays ? RK_ARRAY_ACTIVE : RK_ARRAY_CLEAN);
	return array_settle(a);
}

/* Read-only opens after an unclean stop run the volume on overlays so the
 * journal can be replayed without writing a byte. */
static rk_err make_overlays(rk_array *a)
{
	if (!(a->overlay_devs = calloc(a->nroles, sizeof *a->overlay_devs)))
		return rk_fail(RK_E_NOMEM, "array: out of memory");
	for (uint32_t r = 0; r < a->nroles; r++) {
		rk_err e;
		if (a->devs[r] && (e = rk_dev_overlay(&a->overlay_devs[r], a->devs[r])))
			return e;
	}
	return RK_OK;
}

/* Member R's bytes [off, +size) must be on its device. */
static rk_err member_holds(rk_array *a, uint32_t r, uint64_t off, uint64_t size, const char *what)
{
	uint64_t end;
	if (rk_add_ovf(off, size, &end) || end > rk_dev_size(a->devs[r]))
		return rk_fail(RK_E_SHORT, "%s: member is %llu bytes, %s ends at %llu", rk_dev_path(a->devs[r]),
		               (unsigned long long)rk_dev_size(a->devs[r]), what, (unsigned long long)off + size);
	return RK_OK;
}

/* Read-write opens refuse read-only-compatible features this build does
 * not know. */
static rk_err check_writable(unsigned flags, const struct rk_sb *tmpl)
{
	if ((flags & RK_ARRAY_RDWR) && tmpl->origin == RK_ORIGIN_GEOMETRY)
		return rk_fail(RK_E_NOTSUP, "array described by a geometry file: nothing on the images confirms the "
		               "geometry, so raidkit never writes through one; raid-assemble --geometry FILE --export "
		               "OUT makes a copy of the volume to work on");
	if ((flags & RK_ARRAY_RDWR) && tmpl->origin != RK_ORIGIN_RAIDKIT)
		return rk_fail(RK_E_NOTSUP, "%s array: raidkit reads arrays other software made but does not write to "
		               "them; raid-assemble --export OUT makes a copy of the volume to work on",
		               rk_view_origin_name(tmpl));
	if ((flags & RK_ARRAY_RDWR) && (tmpl->feat_ro_compat & ~RK_FEAT_RO_COMPAT_SUPP))
		return rk_fail(RK_E_FEATURE, "array: unknown read-only-compatible features 0x%llx: refusing to write",
		               (unsigned long long)(tmpl->feat_ro_compat & ~RK_FEAT_RO_COMPAT_SUPP));
	return RK_OK;
}

/* The template's (current) geometry into a->g, holding its volume. */
static rk_err current_geometry(rk_array *a, const struct rk_sb *tmpl)
{
	rk_err e = rk_geom_init(&a->g, tmpl->level, tmpl->layout, tmpl->chunk, tmpl->nroles, tmpl->data_size);
	if (e)
		return rk_fail(RK_E_CORRUPT, "array: geometry in the superblock is not usable: %s", rk_errmsg());
	if (tmpl->volume_size > a->g.volume_size)
		return rk_fail(RK_E_CORRUPT, "array: volume_size %llu exceeds the %llu bytes the geometry holds",
		               (unsigned long long)tmpl->volume_size, (unsigned long long)a->g.volume_size);
	return RK_OK;
}

/* md's RAID-0 and linear let members differ in size (RAID-0 then stripes
 * over zones); the engine maps members of one size. */
static rk_err equal_members(const rk_array *a, const struct rk_sb *tmpl)
{
	if (tmpl->origin == RK_ORIGIN_RAIDKIT || (tmpl->level != 0 && tmpl->level != RK_LEVEL_LINEAR))
		return RK_OK;
	for (uint32_t r = 0; r < a->nroles; r++)
		if (a->sbs[r] && a->sbs[r]->data_size != tmpl->data_size)
			return rk_fail(RK_E_NOTSUP, "%s: %llu data bytes, other members %llu: %s %s over members of "
			               "different sizes is not read yet", rk_dev_path(a->devs[r]),
			               (unsigned long long)a->sbs[r]->data_size, (unsigned long long)tmpl->data_size,
			               rk_view_origin_name(tmpl), tmpl->level ? "linear" : "RAID-0");
	return RK_OK;
}

/* An array in the middle of a reshape (spec/reshape.md, spec/journal.md
 * "Mid-reshape"): volume bytes below the checkpoint live in the new
 * geometry, the rest in the old; the dual-geometry reader's two engines
 * serve reads and writes by that split (the checkpoint never moves while
 * the array is open: raid-resize needs it closed and clean).  Writes run
 * the same protocol as on any array, with the journal's mid-reshape
 * records. */
static rk_err reshape_start(rk_array *a, const struct rk_sb *tmpl)
{
	rk_err e = check_writable(a->flags, tmpl);
	if (e)
		return e;
	if ((e = current_geometry(a, tmpl)))
		return e;
	const struct rk_geom_desc *nd = &tmpl->reshape_new;
	struct rk_geom gn;
	int have_gn = rk_geom_init(&gn, nd->level, nd->layout, nd->chunk, nd->nroles, nd->data_size) == RK_OK;
	a->unclean = tmpl->array_state == RK_ARRAY_ACTIVE;
	a->size = tmpl->volume_size;
	a->rs_pos = tmpl->reshape_pos < a->size ? tmpl->reshape_pos : a->size;
	a->rs_base = nd->data_offset;
	a->rs_old = tmpl->data_offset;
	int jfeat = (tmpl->feat_incompat & RK_FEAT_INCOMPAT_JOURNAL) != 0;
	if (jfeat && a->tmpl->journal_offset < a->rs_base && a->tmpl->journal_offset + a->tmpl->journal_size > a->rs_base)
		a->tmpl->journal_size = (a->rs_base - a->tmpl->journal_offset) / 4096 * 4096;
	for (uint32_t r = 0; r < a->nroles; r++) {
		if (!a->devs[r]) {
			a->down[r] = ARRAY_DOWN_MISSING;
			continue;
		}
		if (r < a->g.nroles && (e = member_holds(a, r, a->rs_old, a->g.member_size, "the old data area")))
			return e;
		if (have_gn && r < gn.nroles && (e = member_holds(a, r, a->rs_base, gn.member_size, "the new data area")))
			return e;
		if ((a->flags & RK_ARRAY_RDWR) && !rk_dev_writable(a->devs[r]))
			return rk_fail(RK_E_READONLY, "%s: opened read-only", rk_dev_path(a->devs[r]));
		/* the journal stays below the new data area (raid-resize shrank
		 * it so; a member that predates the journal gets it there) */
		struct rk_sb *sb = a->sbs[r];
		if (jfeat && sb->journal_offset < a->rs_base && sb->journal_offset + sb->journal_size > a->rs_base)
			sb->journal_size = (a->rs_base - sb->journal_offset) / 4096 * 4096;
		if (jfeat && !sb->journal_size && a->rs_base < a->rs_old && a->rs_base >= RK_SB_PRIMARY_END + RK_JNL_MIN_SIZE) {
			sb->journal_offset = RK_SB_PRIMARY_END;
			sb->journal_size = (a->rs_base - RK_SB_PRIMARY_END) / 4096 * 4096;
		}
	}
	/* whole new rows only: the checkpoint is on a new stripe boundary
	 * unless everything moved */
	if ((a->flags & RK_ARRAY_RDWR) && have_gn && a->rs_pos < a->size && a->rs_pos % gn.stripe_data)
		return rk_fail(RK_E_CORRUPT, "reshape_pos %llu is not on a stripe boundary of the new geometry (%llu bytes): "
		               "not writable", (unsigned long long)a->rs_pos, (unsigned long long)gn.stripe_data);
	if (a->unclean && !(a->flags & RK_ARRAY_RDWR) && jfeat &&
	    (array_geom_journaled(&a->g) || (have_gn && array_geom_journaled(&gn))) && (e = make_overlays(a)))
		return e;
	e = rk_resize_reader_open(&a->reshape, tmpl, a->overlay_devs ? a->overlay_devs : a->devs, array_on_member_fail, a);
	if (e == RK_E_TOOFEW) {
		char list[512];
		uint32_t nmiss = missing_list(a, list, sizeof list);
		return rk_fail(RK_E_TOOFEW, "too few members for the reshape in progress: %u of %u roles missing (role%s %s)",
		               nmiss, a->nroles, nmiss == 1 ? "" : "s", list);
	}
	if (e)
		return e;
	rk_vol *vn = rk_resize_reader_vol(a->reshape, 1), *vo = rk_resize_reader_vol(a->reshape, 0);
	if (vn)
		a->part[a->nparts++] = (struct array_part){ .a = a, .vol = vn, .g = rk_vol_geom(vn), .lo = 0, .hi = a->rs_pos };
	if (vo)
		a->part[a->nparts++] = (struct array_part){ .a = a, .vol = vo, .g = rk_vol_geom(vo), .lo = a->rs_pos, .hi = a->size,
		                                      .base = a->rs_old - a->rs_base };
	return array_finish_open(a);
}

/* Geometry, engine and the too-few message, shared by both open paths. */
static rk_err array_start(rk_array *a, const struct rk_sb *tmpl)
{
	memcpy(a->tmpl, tmpl, sizeof *a->tmpl);
	if (tmpl->feat_incompat & RK_FEAT_INCOMPAT_RESHAPE)
		return reshape_start(a, tmpl);
	rk_err e = check_writable(a->flags, tmpl);
	if (e)
		return e;
	a->unclean = tmpl->array_state == RK_ARRAY_ACTIVE;
	/* a member one update behind that missed the end of a reshape still
	 * names the old data offset and journal: the array's are the
	 * template's (reshapes keep them uniform; spec/reshape.md) */
	for (uint32_t r = 0; r < a->nroles; r++)
		if (a->sbs[r] && (a->sbs[r]->feat_incompat & RK_FEAT_INCOMPAT_RESHAPE) &&
		    !(tmpl->feat_incompat & RK_FEAT_INCOMPAT_RESHAPE)) {
			a->sbs[r]->data_offset = a->data_off[r] = tmpl->data_offset;
			a->sbs[r]->journal_offset = tmpl->journal_offset;
			a->sbs[r]->journal_size = tmpl->journal_size;
			a->sb_disagree = 1;
		}
	/* a member one update behind may predate the journal (added at the
	 * first write): its area is where array_journal_begin puts it */
	for (uint32_t r = 0; r < a->nroles; r++)
		if ((tmpl->feat_incompat & RK_FEAT_INCOMPAT_JOURNAL) && a->sbs[r] && !a->sbs[r]->journal_size &&
		    a->sbs[r]->data_offset >= RK_SB_PRIMARY_END + RK_JNL_MIN_SIZE) {
			a->sbs[r]->journal_offset = RK_SB_PRIMARY_END;
			a->sbs[r]->journal_size = (a->sbs[r]->data_offset - RK_SB_PRIMARY_END) / 4096 * 4096;
		}
	if ((e = current_geometry(a, tmpl)) || (e = equal_members(a, tmpl)))
		return e;
	a->size = tmpl->volume_size;
	for (uint32_t r = 0; r < a->nroles; r++) {
		if (!a->devs[r]) {
			a->down[r] = ARRAY_DOWN_MISSING;
			continue;
		}
		uint64_t end;
		if (rk_add_ovf(a->data_off[r], a->g.member_size, &end) || end > rk_dev_size(a->devs[r]))
			return rk_fail(RK_E_SHORT, "%s: member is %llu bytes, the data area ends at %llu",
			               rk_dev_path(a->devs[r]), (unsigned long long)rk_dev_size(a->devs[r]),
			               (unsigned long long)a->data_off[r] + a->g.member_size);
		if ((a->flags & RK_ARRAY_RDWR) && !rk_dev_writable(a->devs[r]))
			return rk_fail(RK_E_READONLY, "%s: opened read-only", rk_dev_path(a->devs[r]));
	}
	/* read-only after an unclean stop: the volume runs on overlays so the
	 * journal can be replayed without writing a byte */
	if (a->unclean && !(a->flags & RK_ARRAY_RDWR) && (tmpl->feat_incompat & RK_FEAT_INCOMPAT_JOURNAL) &&
	    array_geom_journaled(&a->g) && (e = make_overlays(a)))
		return e;
	e = rk_vol_open(&a->vol, &a->g, a->overlay_devs ? a->overlay_devs : a->devs, a->data_off);
	if (e == RK_E_TOOFEW) {
		char list[512];
		uint32_t nmiss = missing_list(a, list, sizeof list);
		return rk_fail(RK_E_TOOFEW, "too few members: %u of %u roles missing (role%s %s); RAID-%s tolerates %u",
		               nmiss, a->nroles, nmiss == 1 ? "" : "s", list, rk_level_name(a->g.level),
		               rk_geom_redundancy(&a->g));
	}
	if (e)
		return e;
	rk_vol_on_fail(a->vol, array_on_member_fail, a);
	a->part[0] = (struct array_part){ .a = a, .vol = a->vol, .g = &a->g, .lo = 0, .hi = a->size };
	a->nparts = 1;
	return array_finish_open(a);
}

/* Tests only (rk_test_hooks_set_fault): wraps member R of a read-write
 * open in the fault-injecting backend, one plan per array, so end-to-end
 * cases can pull a cable or cut the power under the real tools
 * (tests/cases/faults_*). */
static rk_err test_fault_wrap(rk_array *a, uint32_t r)
{
	const struct rk_fault_spec *spec = rk_test_hooks_fault();
	if (!spec || !(a->flags & RK_ARRAY_RDWR))
		return RK_OK;
	if (!a->test_plan) {
		rk_err e = rk_fault_plan_create(&a->test_plan, spec);
		if (e)
			return e;
		a->test_crash_on_free = spec->model == RK_FAULT_POWER_CUT;
	}
	rk_dev *w = NULL;
	rk_err e = rk_dev_fault(&w, a->devs[r], a->test_plan, (int)r);
	a->devs[r] = w;   /* the lower device is the wrapper's now, also on failure */
	return e;
}

/* What member device D holds now, as discovery read it then: raidkit's
 * copies, or for a member of another format (SEEN a view) the view of the
 * same array.  RD is always initialised (rk_sb_read_free). */
static rk_err read_member_again(rk_dev *d, const struct rk_sb *seen, struct rk_sb_read *rd)
{
	memset(rd, 0, sizeof *rd);
	if (seen->origin == RK_ORIGIN_RAIDKIT)
		return rk_sb_read(d, rd);
	rd->chosen = -1;
	/* a geometry file's view: nothing on the member to read again (the
	 * matching just checked its content) */
	if (seen->origin == RK_ORIGIN_GEOMETRY) {
		if (!(rd->copy[0].sb = malloc(sizeof *rd->copy[0].sb)))
			return rk_fail(RK_E_NOMEM, "array: out of memory");
		memcpy(rd->copy[0].sb, seen, sizeof *seen);
		rd->copy[1].status = RK_COPY_ABSENT;
		rd->chosen = 0;
		return RK_OK;
	}
	struct rk_foreign_read f;
	rk_err e = rk_foreign_read(d, rk_dev_path(d), &f);
	for (uint32_t k = 0; e == RK_OK && k < f.nviews && rd->chosen < 0; k++) {
		if (memcmp(f.views[k].array_uuid, seen->array_uuid, 16) || f.views[k].origin != seen->origin)
			continue;
		if (!(rd->copy[0].sb = malloc(sizeof *rd->copy[0].sb)))
			e = rk_fail(RK_E_NOMEM, "array: out of memory");
		else {
			memcpy(rd->copy[0].sb, &f.views[k], sizeof f.views[k]);
			rd->copy[0].status = RK_COPY_OK;
			rd->copy[1].status = RK_COPY_ABSENT;
			rd->chosen = 0;
		}
	}
	if (e == RK_OK && rd->chosen < 0)
		e = rk_fail(RK_E_NOSB, "no %s metadata of this array any more%s%s", seen->origin_name,
		            f.why[0] ? ": " : "", f.why);
	rk_foreign_read_free(&f);
	return e;
}

/* Opens PATH for role R and checks it is still the member discovery saw
 * (SEEN: its superblock then). */
static rk_err open_member(rk_array *a, const struct rk_array_info *info, uint32_t r, const char *path,
                          const struct rk_sb *seen, unsigned flags)
{
	rk_err e;
	if ((e = rk_member_open(&a->devs[r], path, flags)))
		return e;
	if ((e = test_fault_wrap(a, r)))
		return e;
	/* Discovery ran earlier: make sure the member is still the one it saw. */
	struct rk_sb_read rd;
	e = read_member_again(a->devs[r], seen, &rd);
	if (e) {
		e = rk_fail(RK_E_CONFLICT, "%s: superblock no longer readable: %s", path, rk_errmsg());
	} else {
		const struct rk_sb *now = rd.copy[rd.chosen].sb;
		if (memcmp(now->array_uuid, info->uuid, 16) || memcmp(now->member_uuid, seen->member_uuid, 16) ||
		    now->events != seen->events || now->this_role != r)
			e = rk_fail(RK_E_CONFLICT, "%s: changed since it was examined (events %llu, was %llu)",
			            path, (unsigned long long)now->events, (unsigned long long)seen->events);
		else if (!(a->sbs[r] = malloc(sizeof *a->sbs[r])))
			e = rk_fail(RK_E_NOMEM, "array: out of memory");
		else
			memcpy(a->sbs[r], now, sizeof *now);
		/* an interrupted superblock update: the open rewrites them */
		if (!e && seen->origin == RK_ORIGIN_RAIDKIT &&
		    (now->events != info->sb->events || rd.copy[0].status != RK_COPY_OK ||
		     rd.copy[1].status != RK_COPY_OK || rd.copy[0].sb->events != rd.copy[1].sb->events))
			a->sb_disagree = 1;
	}
	rk_sb_read_free(&rd);
	if (!e)
		a->data_off[r] = a->sbs[r]->data_offset;
	return e;
}

rk_err rk_array_open(rk_array **out, const struct rk_array_info *info, unsigned flags)
{
	return rk_array_open_members(out, info, NULL, 0, flags);
}

rk_err rk_array_open_members(rk_array **out, const struct rk_array_info *info, const struct rk_member *extra,
                             uint32_t nextra, unsigned flags)
{
	*out = NULL;
	if (!info || !info->sb || !info->roles || info->nroles == 0 || info->nroles > RK_SB_MAX_ROLES ||
	    info->nroles != info->sb->nroles)
		return rk_fail(RK_E_INVAL, "array: incomplete discovery result");
	if (info->state == RK_ASTATE_CONFLICT)
		return rk_fail(RK_E_CONFLICT, "array: conflicting metadata: %s", info->why);
	flags &= RK_ARRAY_RDWR;
	/* before any member is opened for writing */
	rk_err e = check_writable(flags, info->sb);
	if (e)
		return e;
	uint32_t span = rk_resize_span(info->sb);
	if (span > RK_SB_MAX_ROLES || span > info->sb->nentries)
		return rk_fail(RK_E_CORRUPT, "array: the reshape target names %u roles", span);
	rk_array *a = array_alloc(span, flags);
	if (!a)
		return rk_fail(RK_E_NOMEM, "array: out of memory");
	a->own_devs = 1;
	for (uint32_t r = 0; r < info->nroles && !e; r++) {
		const struct rk_member *m = &info->roles[r];
		if (m->cls != RK_MEMBER_ACTIVE || !m->path || !m->sb)
			continue;
		e = open_member(a, info, r, m->path, m->sb, flags);
	}
	/* mid-reshape: members the reshape added serve roles past nroles
	 * (discovery lists them apart); only those in step with the array */
	for (uint32_t i = 0; i < nextra && !e && span > info->nroles; i++) {
		const struct rk_member *m = &extra[i];
		if (!m->path || !rk_member_reshape_added(info->sb, m) || m->sb->this_role >= span ||
		    a->devs[m->sb->this_role])
			continue;
		uint32_t r = m->sb->this_role;
		e = open_member(a, info, r, m->path, m->sb, flags);
	}
	if (!e)
		e = array_start(a, info->sb);
	if (e) {
		array_free(a);
		return e;
	}
	*out = a;
	return RK_OK;
}

rk_err rk_array_open_devs(rk_array **out, const struct rk_sb *tmpl, rk_dev *const *devs,
                          const struct rk_sb *const *sbs, unsigned flags)
{
	*out = NULL;
	if (!tmpl || !devs || !sbs || tmpl->nroles == 0 || tmpl->nroles > RK_SB_MAX_ROLES)
		return rk_fail(RK_E_INVAL, "array: bad arguments");
	uint32_t span = rk_resize_span(tmpl);
	if (span > RK_SB_MAX_ROLES || span > tmpl->nentries)
		return rk_fail(RK_E_CORRUPT, "array: the reshape target names %u roles", span);
	rk_array *a = array_alloc(span, flags & RK_ARRAY_RDWR);
	if (!a)
		return rk_fail(RK_E_NOMEM, "array: out of memory");
	rk_err e = RK_OK;
	for (uint32_t r = 0; r < span && !e; r++) {
		if (!devs[r])
			continue;
		if (!sbs[r]) {
			e = rk_fail(RK_E_INVAL, "array: role %u has a device but no superblock", r);
			break;
		}
		a->devs[r] = devs[r];
		if (!(a->sbs[r] = malloc(sizeof *a->sbs[r])))
			e = rk_fail(RK_E_NOMEM, "array: out of memory");
		else {
			memcpy(a->sbs[r], sbs[r], sizeof *sbs[r]);
			a->data_off[r] = sbs[r]->data_offset;
			if (sbs[r]->events != tmpl->events)
				a->sb_disagree = 1;
		}
	}
	if (!e)
		e = array_start(a, tmpl);
	if (e) {
		array_free(a);
		return e;
	}
	*out = a;
	return RK_OK;
}

