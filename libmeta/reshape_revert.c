/* reshape_revert.c: taking a reshape back to the old geometry
 * (rk_resize_revert), and the members it drops. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "resize_int.h"

/* Wipes both superblock areas of D (a member a revert dropped). */
static rk_err wipe_sb(rk_dev *d)
{
	uint64_t b = rk_sb_backup_offset(rk_dev_size(d));
	rk_err e = resize_zero_range(d, RK_SB_PRIMARY_OFF, RK_SB_AREA);
	if (!e && b)
		e = resize_zero_range(d, b, RK_SB_AREA);
	if (!e && (e = rk_dev_flush(d)))
		e = rk_fail(e, "%s: flush: %s", rk_dev_path(d), rk_errmsg());
	return e;
}

/* Members an interrupted revert dropped but had not wiped (s->left). */
rk_err resize_wipe_left(struct resize_set *s)
{
	for (uint32_t i = 0; i < s->nleft; i++) {
		rk_err e = wipe_sb(s->left[i]);
		if (e)
			return e;
	}
	return RK_OK;
}

/* Brings every member to the freshest superblock (after an interrupted
 * update). */
rk_err resize_settle_mixed(struct resize_set *s)
{
	if (!s->mixed)
		return RK_OK;
	struct rk_sb *nt = malloc(sizeof *nt);
	if (!nt)
		return rk_fail(RK_E_NOMEM, "out of memory");
	memcpy(nt, s->t, sizeof *nt);
	rk_err e = resize_commit(s, nt);
	free(nt);
	return e;
}

/* The end of a revert (reshape_pos 0: every volume byte is in the old
 * geometry): the old members get superblocks without the reshape block,
 * the added roles emptied and, where the reshape took the journal's upper
 * part, the journal its old size back; then the added members' superblock
 * areas are wiped.  Old members first: once they no longer list the added
 * ones, wiping those cannot leave an array pointing at a member without
 * metadata (and an interruption in between leaves them for resize_wipe_left). */
static rk_err revert_finish(struct resize_set *s, struct rk_resize_result *res)
{
	struct rk_sb *t = s->t;
	struct rk_sb *nt = malloc(sizeof *nt);
	if (!nt)
		return rk_fail(RK_E_NOMEM, "out of memory");
	uint32_t oldn = t->nroles, newn = t->reshape_new.nroles;
	memcpy(nt, t, sizeof *nt);
	if ((t->feat_incompat & RK_FEAT_INCOMPAT_JOURNAL) && t->journal_offset < t->data_offset &&
	    t->journal_offset + t->journal_size == t->reshape_new.data_offset)
		nt->journal_size = t->data_offset - t->journal_offset;   /* what the reshape took, as mkraid lays it */
	nt->feat_incompat &= ~RK_FEAT_INCOMPAT_RESHAPE;
	memset(&nt->reshape_new, 0, sizeof nt->reshape_new);
	nt->reshape_pos = 0;
	nt->reshape_flags = 0;
	rk_err e = rk_sb_volume_size(nt->level, nt->layout, nt->chunk, nt->nroles, nt->data_size, &nt->volume_size);
	if (e) {
		free(nt);
		return e;
	}
	for (uint32_t r = oldn; r < newn && r < nt->nentries; r++)
		memset(&nt->roles[r], 0, sizeof nt->roles[r]);
	/* The role table shrinks back when the reshape's entries were its last. */
	uint32_t ne = nt->nentries;
	while (ne > oldn && nt->roles[ne - 1].state == RK_ROLE_EMPTY)
		ne--;
	if (ne < nt->nentries) {
		nt->nentries = ne;
		nt->sb_bytes = rk_sb_bytes_for(ne);
	}
	rk_dev *added[RK_SB_MAX_ROLES];
	uint32_t nad = 0;
	for (uint32_t r = oldn; r < newn; r++) {
		if (s->dev[r])
			added[nad++] = s->dev[r];
		s->dev[r] = NULL;
		memset(&s->ws[r], 0, sizeof s->ws[r]);   /* wiped below */
	}
	e = resize_commit(s, nt);
	free(nt);
	for (uint32_t i = 0; !e && i < nad; i++)
		e = wipe_sb(added[i]);
	if (!e)
		e = resize_wipe_left(s);
	if (!e) {
		res->events = s->maxev;
		res->new_volume = s->t->volume_size;
	}
	return e;
}

/* Moves the volume bytes below reshape_pos back into the old geometry,
 * batch by batch down to 0 (spec/reshape.md, "Revert"), then finishes the
 * revert.  The reverting flag is recorded first, so an interruption
 * resumes the revert, not the forward run. */
rk_err reshape_run_revert(struct resize_set *s, const struct rk_resize_opts *o, struct rk_resize_result *res)
{
	struct rk_sb *t = s->t;
	const struct rk_geom_desc *nd = &t->reshape_new;
	rk_vol *vo = NULL, *vn = NULL;
	struct rk_geom go, gn;
	uint8_t *buf = NULL;
	struct rk_sb *nt = NULL;
	int failed = 0;
	rk_err e;
	if (nd->data_offset >= t->data_offset || (t->reshape_flags & ~RK_RESHAPE_REVERTING))
		return rk_fail(RK_E_NOTSUP, "this reshape (data offset %llu -> %llu, flags 0x%x) is not one this build "
		               "reverts", (unsigned long long)t->data_offset, (unsigned long long)nd->data_offset,
		               t->reshape_flags);
	uint64_t shift = t->data_offset - nd->data_offset;
	uint64_t oldvol = t->volume_size;
	uint64_t p = t->reshape_pos, p0 = p;
	if (p > oldvol)
		return rk_fail(RK_E_CORRUPT, "reshape_pos %llu: past the volume (%llu bytes)", (unsigned long long)p,
		               (unsigned long long)oldvol);
	if (!(nt = malloc(sizeof *nt)))
		return rk_fail(RK_E_NOMEM, "out of memory");
	if (p) {
		if ((e = resize_open_old(&vo, &go, s)) || (e = resize_open_new(&vn, &gn, s)))
			goto out;
		if (!reshape_geo_supported(&go) || !reshape_geo_supported(&gn)) {
			e = rk_fail(RK_E_NOTSUP, "this reshape (level %s to %s) is not one this build reverts",
			            rk_level_name(go.level), rk_level_name(gn.level));
			goto out;
		}
		rk_vol_on_fail(vo, reshape_on_member_fail, &failed);
		rk_vol_on_fail(vn, reshape_on_member_fail, &failed);
		if (!(t->reshape_flags & RK_RESHAPE_REVERTING)) {
			memcpy(nt, t, sizeof *nt);
			nt->reshape_flags |= RK_RESHAPE_REVERTING;
			if ((e = resize_commit(s, nt)))
				goto out;
			t = s->t;
		}
		uint64_t bmax = o && o->batch_max ? o->batch_max : RK_RESIZE_BATCH_MAX;
		uint64_t rows_max = bmax / gn.stripe_data ? bmax / gn.stripe_data : 1;
		/* a batch of rows_max new stripes plus the old rows around its ends */
		uint64_t bl = rows_max * gn.stripe_data + 2 * go.stripe_data;
		if (!(buf = malloc(bl))) {
			e = rk_fail(RK_E_NOMEM, "out of memory for a batch of %llu bytes", (unsigned long long)bl);
			goto out;
		}
		while (p > 0) {
			if (o && o->stop && *o->stop) {
				e = rk_fail(RK_E_FAULT, "interrupted at volume byte %llu (reverting from %llu): resume with "
				            "--continue", (unsigned long long)p, (unsigned long long)p0);
				goto out;
			}
			uint64_t q = reshape_revert_from(&go, &gn, shift, p, rows_max);
			if (q >= p) {
				e = rk_fail(RK_E_NOTSUP, "no room to move volume byte %llu back into the old geometry",
				            (unsigned long long)p - 1);
				goto out;
			}
			/* Whole old rows around [q, p): bytes below p from the new
			 * geometry, the rest from the old; full-stripe writes. */
			uint64_t a = reshape_old_row_start(&go, q), b = reshape_old_row_end(&go, p, oldvol);
			uint64_t mid = p < b ? p : b;
			if ((e = rk_vol_read(vn, buf, (size_t)(mid - a), a)))
				goto out;
			if (mid < b && (e = rk_vol_read(vo, buf + (mid - a), (size_t)(b - mid), mid)))
				goto out;
			if ((e = rk_vol_write(vo, buf, (size_t)(b - a), a)) || (e = rk_vol_flush(vo)))
				goto out;
			if (failed) {
				e = rk_fail(RK_E_IO, "a member failed during the revert (stopped at volume byte %llu): %s",
				            (unsigned long long)p, rk_errmsg());
				goto out;
			}
			/* The old rows are durable: only now may the checkpoint fall. */
			memcpy(nt, t, sizeof *nt);
			nt->reshape_pos = q;
			if ((e = resize_commit(s, nt)))
				goto out;
			t = s->t;
			res->moved += p - q;
			res->checkpoints++;
			p = q;
			if (o && o->progress)
				o->progress(o->progress_ctx, p0 - p, p0);
		}
		rk_vol_close(vo);
		rk_vol_close(vn);
		vo = vn = NULL;
	}
	e = revert_finish(s, res);
out:
	rk_vol_close(vo);
	rk_vol_close(vn);
	free(buf);
	free(nt);
	return e;
}

/* Reverts the reshape in progress (or finishes a revert interrupted after
 * its last superblock update). */
static rk_err revert_step(struct resize_set *s, const void *args, struct rk_resize_result *res)
{
	const struct rk_resize_opts *o = args;
	rk_err e;
	struct rk_sb *t = s->t;
	res->old_volume = res->new_volume = t->volume_size;
	if (!(t->feat_incompat & RK_FEAT_INCOMPAT_RESHAPE)) {
		if (s->nleft) {
			/* A revert interrupted after its last superblock update. */
			if (!(e = resize_settle_mixed(s)) && !(e = resize_wipe_left(s))) {
				res->events = s->maxev;
				snprintf(res->did, sizeof res->did, "reverted to level %s on %u members (%u dropped member%s "
				         "wiped)", rk_level_name(s->t->level), s->t->nroles, s->nleft, s->nleft == 1 ? "" : "s");
			}
			return e;
		}
		e = rk_fail(RK_E_INVAL, "no reshape in progress: nothing to revert");
		return e;
	}
	if ((e = resize_settle_mixed(s)))
		return e;
	t = s->t;
	uint64_t from = t->reshape_pos;
	uint32_t oldn = t->nroles, newn = t->reshape_new.nroles;
	if ((e = reshape_run_revert(s, o, res)))
		return e;
	if (from)
		snprintf(res->did, sizeof res->did, "reverted from volume byte %llu: level %s on %u members again "
		         "(%u -> %u), volume %llu bytes", (unsigned long long)from, rk_level_name(s->t->level), oldn, newn,
		         oldn, (unsigned long long)s->t->volume_size);
	else
		snprintf(res->did, sizeof res->did, "reverted to level %s on %u members", rk_level_name(s->t->level), oldn);
	res->missing = resize_count_missing(s);
	return RK_OK;
}

rk_err rk_resize_revert(rk_dev *const *devs, uint32_t n, const struct rk_resize_opts *o,
                        struct rk_resize_result *res)
{
	return resize_run(devs, n, RESIZE_LOAD_RESUME, revert_step, o, res);
}
