/* reshape.c: running a reshape forward (rk_resize_reshape starts one,
 * rk_resize_continue resumes it): rows copied in batches from the old
 * geometry to the new, a superblock checkpoint after each. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uuid/uuid.h>

#include "rk_le.h"
#include "resize_int.h"

#define NOCHUNK_DEFAULT (64u * 1024u)   /* chunk for a level leaving RAID-1 */

#define RESHAPE_STEP (8ull << 20)   /* volume bytes read and written per step, at most */

/* The engines and scratch of a forward run. */
struct reshape_run {
	struct resize_set *s;
	rk_vol *vo, *vn;
	struct rk_geom go, gn;
	struct reshape_steps plan;
	struct rk_sb *nt;        /* scratch template */
	rk_pool *pool;           /* superblock updates and zeroing, every member at once */
	struct resize_flush_bg *flush;   /* a step's flushes, on pool, beside the next step */
	struct reshape_tail *tail;   /* the new space, zeroed as checkpoints free it */
	int failed;              /* a member failed (the engines' callback, atomic) */
	uint64_t old_doff, new_doff;   /* the data offsets before and after */
	uint64_t dropped;        /* member bytes declared done with (drop_done) */
};

#define RESHAPE_META_THREADS 7u   /* threads for per-member flushes and superblock writes, at most (each costs memory: 255 members stay < 64 MiB) */

/* Writes the window [P, P+WL) step by step as the read-ahead delivers it
 * (whole new rows; bytes past the old volume are the new space: zeros).
 * Each step's flush on every member (with buffered writes, the write-back)
 * runs in the background while the next step is taken and written; the
 * last step is written with rk_vol_write_flush (each member flushed right
 * after its own writes, in the same round of member I/O) and the flush
 * before it waited for, so the window is durable on return: whole new rows
 * write every member, and a member's writes of earlier steps were flushed
 * by the flush started after them.  At most one flush is under way: dirty
 * data stays within two steps.  Stops early, without error, when a member
 * failed (the caller reports it). */
static rk_err write_window(struct reshape_run *run, struct reshape_ahead *ah, uint64_t p, uint64_t wl)
{
	rk_err e = RK_OK;
	for (uint64_t q = p; q < p + wl && !e;) {
		uint64_t len = reshape_step_len(&run->plan, p, wl, q);
		int last = q + len >= p + wl;
		const uint8_t *b;
		e = reshape_ahead_take(ah, q, len, &b);
		if (!e)
			e = last ? rk_vol_write_flush(run->vn, b, (size_t)len, q) : rk_vol_write(run->vn, b, (size_t)len, q);
		reshape_ahead_done(ah);
		rk_err fe = resize_flush_wait(run->flush);   /* the step before */
		e = e ? e : fe;
		if (e || __atomic_load_n(&run->failed, __ATOMIC_ACQUIRE))
			break;
		q += len;
		if (!last)
			resize_flush_start(run->flush);
	}
	rk_err fe = resize_flush_wait(run->flush);
	return e ? e : fe;
}

/* After the windows before volume byte P are durable (on the read-ahead's
 * thread): declares every member's bytes below both the old blocks still
 * to be read and the new blocks written (device offsets from run->dropped
 * up) done with, RK_DEV_DROP_STEP at a time.  Advice only: a block device's page
 * cache is then dropped behind the copy instead of all at once when it is
 * closed (tens of ms per member at the end); dirty pages are never
 * dropped.  The data offsets read are those of the plan (fixed for the
 * run). */
static void drop_done(void *ctx, uint64_t p)
{
	struct reshape_run *run = ctx;
	uint64_t *done = &run->dropped;
	uint64_t old_lo, new_hi;
	if (rk_add_ovf(run->old_doff, reshape_geo_lo(&run->go, p), &old_lo) ||
	    rk_add_ovf(run->new_doff, reshape_geo_hi(&run->gn, p), &new_hi))
		return;
	uint64_t to = old_lo < new_hi ? old_lo : new_hi;
	if (to <= *done || to - *done < RK_DEV_DROP_STEP)
		return;
	for (uint32_t r = 0; r < run->s->span; r++)
		if (run->s->dev[r])
			rk_dev_advise(run->s->dev[r], *done, to - *done, RK_DEV_ADV_DONTNEED);
	*done = to;
}

/* Copies windows from reshape_pos to the old volume's end, each made
 * durable before a checkpoint in the superblocks says so; the next steps
 * are read meanwhile (reshape_ahead.c). */
static rk_err copy_forward(struct reshape_run *run, const struct rk_resize_opts *o, struct rk_resize_result *res)
{
	struct resize_set *s = run->s;
	const struct rk_sb *t = s->t;
	uint64_t oldvol = t->volume_size, p = t->reshape_pos;
	if (p < oldvol && p % run->gn.stripe_data)
		return rk_fail(RK_E_CORRUPT, "reshape_pos %llu: not on a new stripe boundary (%llu)",
		               (unsigned long long)p, (unsigned long long)run->gn.stripe_data);
	run->plan.from = p;
	struct reshape_ahead *ah = NULL;
	rk_err e = p < oldvol ? reshape_ahead_start(&ah, &run->plan, run->vo, drop_done, run) : RK_OK;
	while (!e && p < oldvol) {
		if (o && o->stop && *o->stop) {
			e = rk_fail(RK_E_FAULT, "interrupted at volume byte %llu of %llu: resume with --continue",
			            (unsigned long long)p, (unsigned long long)oldvol);
			break;
		}
		uint64_t wl = reshape_window(&run->plan, p);
		if (!wl) {
			e = rk_fail(RK_E_NOTSUP, "no room to move volume byte %llu forward", (unsigned long long)p);
			break;
		}
		uint64_t rlen = oldvol - p < wl ? oldvol - p : wl;
		if ((e = write_window(run, ah, p, wl)))   /* flushed step by step */
			break;
		if (__atomic_load_n(&run->failed, __ATOMIC_ACQUIRE)) {
			e = rk_fail(RK_E_IO, "a member failed during the reshape (stopped at volume byte %llu): %s",
			            (unsigned long long)p, rk_errmsg());
			break;
		}
		/* The window is durable: only now may the superblocks say so. */
		memcpy(run->nt, t, sizeof *run->nt);
		run->nt->reshape_pos = p + rlen;
		if ((e = resize_commit_par(s, run->nt, run->pool)))
			break;
		t = s->t;
		p += rlen;
		uint64_t upto;
		if (rk_add_ovf(run->plan.shift, reshape_geo_lo(&run->go, p), &upto))
			upto = UINT64_MAX;
		if ((e = reshape_tail_free_to(run->tail, upto)))
			break;
		reshape_ahead_durable(ah, p);
		res->moved += rlen;
		res->checkpoints++;
		if (o && o->progress)
			o->progress(o->progress_ctx, p, oldvol);
	}
	reshape_ahead_stop(ah);
	return e;
}

/* Everything is in the new geometry: the old area is free.  What lies past
 * the copied stripes is made consistent (zeros), then published: member
 * rows from reshape_geo_hi(new, end) on hold nothing copied and are zeroed
 * on every member; below that (RAID-10: the rest of the last row written
 * holds copies of later chunks) the chunks whose copies start there are
 * written as zeros through the new geometry, so every copy agrees. */
/* The member rows past the copied stripes, zeroed on one role. */
struct zero_tail {
	struct resize_set *s;
	uint64_t off, len;
};

static rk_err zero_tail_role(void *ctx, uint32_t role, uint32_t worker)
{
	struct zero_tail *z = ctx;
	(void)worker;
	return resize_zero_range(z->s->dev[role], z->off, z->len);
}

static rk_err publish_new(struct reshape_run *run, struct rk_resize_result *res)
{
	struct resize_set *s = run->s;
	const struct rk_geom *gn = &run->gn;
	const struct rk_sb *t = s->t;
	const struct rk_geom_desc *nd = &t->reshape_new;
	uint64_t qend = (t->volume_size + gn->stripe_data - 1) / gn->stripe_data * gn->stripe_data;
	uint64_t from = reshape_geo_hi(gn, qend);
	rk_err e = reshape_tail_wait(run->tail);
	if (e)
		return e;
	/* the rest of every member's tail at once: with disks, each zeroes at
	 * its own rate (most of it was zeroed during the copy) */
	uint64_t zd = reshape_tail_done(run->tail);
	struct zero_tail tail = { .s = s, .off = nd->data_offset + zd, .len = zd < nd->data_size ? nd->data_size - zd : 0 };
	if (tail.len && (e = resize_par_roles(s, nd->nroles, run->pool, zero_tail_role, &tail)))
		return e;
	uint8_t *zeros = NULL;
	for (uint64_t z = qend; z < gn->volume_size && reshape_geo_lo(gn, z) < from; z += gn->stripe_data) {
		if (!zeros && !(zeros = calloc(1, (size_t)gn->stripe_data)))
			return rk_fail(RK_E_NOMEM, "out of memory");
		if ((e = rk_vol_write(run->vn, zeros, (size_t)gn->stripe_data, z))) {
			free(zeros);
			return e;
		}
	}
	free(zeros);
	if ((e = resize_flush_par(s, s->span, run->pool)))
		return e;
	struct rk_sb *nt = run->nt;
	memcpy(nt, t, sizeof *nt);
	rk_sb_apply_geom(nt, nd);
	nt->feat_incompat &= ~RK_FEAT_INCOMPAT_RESHAPE;
	memset(&nt->reshape_new, 0, sizeof nt->reshape_new);
	nt->reshape_pos = 0;
	nt->reshape_flags = 0;
	nt->scrub_pos = 0;
	if ((e = rk_sb_volume_size(nt->level, nt->layout, nt->chunk, nt->nroles, nt->data_size, &nt->volume_size)))
		return e;
	for (uint32_t r = 0; r < nt->nroles; r++)
		s->doff[r] = nt->data_offset;
	if ((e = resize_commit(s, nt)))
		return e;
	res->new_volume = nt->volume_size;
	res->events = s->maxev;
	return RK_OK;
}

/* Runs the reshape recorded in s->t from its reshape_pos to the end and
 * publishes the new geometry. */
static rk_err run_reshape(struct resize_set *s, const struct rk_resize_opts *o, struct rk_resize_result *res)
{
	const struct rk_sb *t = s->t;
	const struct rk_geom_desc *nd = &t->reshape_new;
	if (nd->data_offset >= t->data_offset || (t->reshape_flags & ~RK_RESHAPE_REVERTING))
		return rk_fail(RK_E_NOTSUP, "this reshape (data offset %llu -> %llu, flags 0x%x) is not one this build "
		               "runs", (unsigned long long)t->data_offset, (unsigned long long)nd->data_offset,
		               t->reshape_flags);
	if (t->reshape_flags & RK_RESHAPE_REVERTING)
		return rk_fail(RK_E_CONFLICT, "the reshape is being reverted (back at volume byte %llu): it cannot go "
		               "forward again; finish the revert with --continue", (unsigned long long)t->reshape_pos);
	struct reshape_run run = { .s = s, .old_doff = t->data_offset, .new_doff = nd->data_offset };
	uint64_t oldvol = t->volume_size;
	rk_err e;
	if ((e = resize_open_old(&run.vo, &run.go, s)) || (e = resize_open_new(&run.vn, &run.gn, s)))
		goto out;
	if (!reshape_geo_supported(&run.go) || !reshape_geo_supported(&run.gn)) {
		e = rk_fail(RK_E_NOTSUP, "this reshape (level %s to %s) is not one this build runs",
		            rk_level_name(run.go.level), rk_level_name(run.gn.level));
		goto out;
	}
	rk_vol_on_fail(run.vo, reshape_on_member_fail, &run.failed);
	rk_vol_on_fail(run.vn, reshape_on_member_fail, &run.failed);
	if (run.gn.volume_size < oldvol) {
		e = rk_fail(RK_E_CORRUPT, "the new geometry holds %llu bytes, less than the %llu to move",
		            (unsigned long long)run.gn.volume_size, (unsigned long long)oldvol);
		goto out;
	}
	uint64_t bmax = o && o->batch_max ? o->batch_max : RK_RESIZE_BATCH_MAX, sd = run.gn.stripe_data;
	uint64_t rows_max = bmax / sd ? bmax / sd : 1, step_rows = RESHAPE_STEP / sd ? RESHAPE_STEP / sd : 1;
	run.plan = (struct reshape_steps){ .go = &run.go, .gn = &run.gn, .oldvol = oldvol, .rows_max = rows_max,
	                                   .shift = t->data_offset - nd->data_offset,
	                                   .step = (step_rows < rows_max ? step_rows : rows_max) * sd,
	                                   .slots = sd > RESHAPE_STEP ? 1 : 2 };
	if (!(run.nt = malloc(sizeof *run.nt))) {
		e = rk_fail(RK_E_NOMEM, "out of memory");
		goto out;
	}
	uint32_t nth = s->span > 1 ? s->span - 1 : 0;
	if ((e = rk_pool_create(&run.pool, nth < RESHAPE_META_THREADS ? nth : RESHAPE_META_THREADS)) ||
	    (e = resize_flush_bg_new(&run.flush, s, s->span, run.pool)))
		goto out;
	uint64_t qend = (oldvol + sd - 1) / sd * sd;
	if ((e = reshape_tail_start(&run.tail, s, nd->data_offset, reshape_geo_hi(&run.gn, qend), nd->data_size)))
		goto out;
	if (!(e = copy_forward(&run, o, res)))
		e = publish_new(&run, res);
out:
	reshape_tail_stop(run.tail);   /* before the members' engines go */
	rk_vol_close(run.vo);
	rk_vol_close(run.vn);
	resize_flush_bg_free(run.flush);
	rk_pool_destroy(run.pool);
	free(run.nt);
	return e;
}

/* Lowest byte the new data area may start at on a member of this array:
 * after the primary superblock area; with a journal below the data, after
 * the part of it that is kept.  The journal of a clean array holds nothing
 * to replay (spec/journal.md), so a reshape may take its upper part. */
#define JOURNAL_KEEP (256u * 1024u)
static uint64_t data_floor(const struct rk_sb *t)
{
	uint64_t f = RK_SB_PRIMARY_END;
	if ((t->feat_incompat & RK_FEAT_INCOMPAT_JOURNAL) && t->journal_offset < t->data_offset) {
		uint64_t keep = t->journal_size < JOURNAL_KEEP ? t->journal_size : JOURNAL_KEEP;
		if (t->journal_offset + keep > f)
			f = t->journal_offset + keep;
	} else if (!(t->feat_incompat & RK_FEAT_INCOMPAT_JOURNAL)) {
		/* No journal yet (mkraid leaves it to the first write, which
		 * puts it at [RK_SB_PRIMARY_END, data_offset)): keep room for
		 * one, or writes during and after the reshape would go
		 * unprotected for good. */
		f = RK_SB_PRIMARY_END + JOURNAL_KEEP;
	}
	return (f + RK_SB_ALIGN - 1) / RK_SB_ALIGN * RK_SB_ALIGN;
}

/* RAID-1 gains mirrors: copy the volume onto each new member, flush, then
 * list them in the superblocks (new members first). */
static rk_err add_mirrors(struct resize_set *s, rk_dev *const *add, uint32_t nadd, struct rk_sb *nt,
                          const struct rk_resize_opts *o, struct rk_resize_result *res)
{
	struct rk_sb *t = s->t;
	rk_vol *v = NULL;
	struct rk_geom g;
	uint8_t *buf = NULL;
	rk_err e;
	uint64_t doff = t->data_offset;
	if ((e = resize_open_old(&v, &g, s)))
		return e;
	size_t bl = 8u << 20;
	if (!(buf = malloc(bl))) {
		e = rk_fail(RK_E_NOMEM, "out of memory");
		goto out;
	}
	for (uint32_t a = 0; a < nadd; a++) {
		if (rk_sb_max_data_size(rk_dev_size(add[a]), doff, 0) < t->data_size) {
			e = rk_fail(RK_E_RANGE, "%s: too small: needs %llu bytes of data area from byte %llu",
			            rk_dev_path(add[a]), (unsigned long long)t->data_size, (unsigned long long)doff);
			goto out;
		}
	}
	for (uint64_t p = 0; p < t->data_size;) {
		size_t k = t->data_size - p < bl ? (size_t)(t->data_size - p) : bl;
		if ((e = rk_vol_read(v, buf, k, p)))
			goto out;
		for (uint32_t a = 0; a < nadd; a++)
			if ((e = rk_dev_pwrite(add[a], buf, k, doff + p))) {
				e = rk_fail(e, "%s: %s", rk_dev_path(add[a]), rk_errmsg());
				goto out;
			}
		p += k;
		res->moved += k;
		if (o && o->progress)
			o->progress(o->progress_ctx, p, t->data_size);
	}
	for (uint32_t a = 0; a < nadd; a++) {
		if (t->feat_incompat & RK_FEAT_INCOMPAT_JOURNAL && (e = resize_zero_range(add[a], t->journal_offset, t->journal_size)))
			goto out;
		if ((e = rk_dev_flush(add[a])))
			goto out;
		s->dev[t->nroles + a] = add[a];
		s->doff[t->nroles + a] = doff;
	}
	nt->nroles = t->nroles + nadd;
	if ((e = rk_sb_volume_size(nt->level, nt->layout, nt->chunk, nt->nroles, nt->data_size, &nt->volume_size)))
		goto out;
	e = resize_commit(s, nt);
	res->new_volume = nt->volume_size;
	res->events = s->maxev;
	snprintf(res->did, sizeof res->did, "RAID-1 mirrors: %u -> %u", nt->nroles - nadd, nt->nroles);
out:
	rk_vol_close(v);
	free(buf);
	return e;
}

/* What a new reshape may start from: a clean, consistent array not in a
 * reshape, every member given with one data offset, room in the role table
 * for NADD more, none of ADD a member already. */
static rk_err check_start(struct resize_set *s, rk_dev *const *add, uint32_t nadd)
{
	const struct rk_sb *t = s->t;
	if ((t->feat_incompat & RK_FEAT_INCOMPAT_RESHAPE) && (t->reshape_flags & RK_RESHAPE_REVERTING))
		return rk_fail(RK_E_CONFLICT, "the array's last reshape is being reverted (back at volume byte %llu): "
		               "finish the revert with --continue before a new reshape", (unsigned long long)t->reshape_pos);
	if (t->feat_incompat & RK_FEAT_INCOMPAT_RESHAPE)
		return rk_fail(RK_E_CONFLICT, "a reshape is already in progress: finish it with --continue");
	rk_err e = resize_set_need_all(s);
	if (e)
		return e;
	if (s->mixed)
		return rk_fail(RK_E_CONFLICT, "the members' superblocks disagree (an interrupted update): run --continue first");
	if (t->array_state != RK_ARRAY_CLEAN)
		return rk_fail(RK_E_CONFLICT, "the array was not closed cleanly (parity may lag): assemble it or scrub "
		               "--repair first");
	for (uint32_t r = 1; r < t->nroles; r++)
		if (s->doff[r] != s->doff[0])
			return rk_fail(RK_E_NOTSUP, "members have different data offsets (%llu, %llu): not reshaped by this build",
			               (unsigned long long)s->doff[0], (unsigned long long)s->doff[r]);
	uint32_t nr = t->nroles + nadd;
	if (nr > RK_SB_MAX_ROLES || nr > RK_GEOM_MAX_ROLES)
		return rk_fail(RK_E_RANGE, "%u members: more than %u", nr, RK_SB_MAX_ROLES);
	for (uint32_t r = t->nroles; r < t->nentries && r < nr; r++)
		if (t->roles[r].state != RK_ROLE_EMPTY)
			return rk_fail(RK_E_NOTSUP, "role table entry %u is a spare: remove spares before adding members", r);
	for (uint32_t a = 0; a < nadd; a++)
		for (uint32_t r = 0; r < t->nroles; r++)
			if (add[a] == s->dev[r])
				return rk_fail(RK_E_INVAL, "%s: already a member", rk_dev_path(add[a]));
	return RK_OK;
}

/* The geometry asked for: options over the array's current one. */
struct reshape_target {
	int32_t level;
	uint32_t layout;
	uint64_t chunk;
	uint32_t nroles;
};

static void pick_target(const struct rk_sb *t, const struct rk_resize_opts *o, uint32_t nadd,
                        struct reshape_target *tg)
{
	tg->level = o && o->set_level ? o->level : t->level;
	if (o && o->layout != RK_RESIZE_LAYOUT_KEEP)
		tg->layout = o->layout;
	else if (tg->level == t->level)
		tg->layout = t->layout;
	else
		tg->layout = rk_layout_default(tg->level);
	tg->chunk = o && o->chunk ? o->chunk : (t->chunk ? t->chunk : NOCHUNK_DEFAULT);
	tg->nroles = t->nroles + nadd;
}

/* RAID-10 restripes keep the level; only near layouts have copies whose
 * places do not depend on the member size. */
static rk_err check_raid10(const struct rk_sb *t, const struct reshape_target *tg)
{
	if (t->level != 10 && tg->level != 10)
		return RK_OK;
	if (t->level != tg->level)
		return rk_fail(RK_E_NOTSUP, "level %s to %s: a RAID-10 reshape keeps level 10 (more members, another "
		               "chunk or near count)", rk_level_name(t->level), rk_level_name(tg->level));
	const uint32_t lays[2] = { t->layout, tg->layout };
	for (int i = 0; i < 2; i++) {
		char nm[32];
		uint32_t far = (lays[i] >> 8) & 0xff, offs = (lays[i] >> 16) & 1;
		if (far != 1 || offs)
			return rk_fail(RK_E_NOTSUP, "RAID-10 layout %s%s: not reshaped by this build: only near layouts "
			               "(n2, n3, ...) are; far and offset copies sit where the member size puts them",
			               rk_layout_name(10, lays[i], nm, sizeof nm), i ? " (the new one)" : "");
	}
	return RK_OK;
}

/* A copy of T listing NADD new active members after its roles (fresh
 * UUIDs), the role table grown to NR entries where needed. */
static struct rk_sb *template_with_added(const struct rk_sb *t, uint32_t nadd, uint32_t nr)
{
	struct rk_sb *nt = malloc(sizeof *nt);
	if (!nt) {
		rk_fail(RK_E_NOMEM, "out of memory");
		return NULL;
	}
	memcpy(nt, t, sizeof *nt);
	if (nt->nentries < nr)
		nt->nentries = nr;
	nt->sb_bytes = rk_sb_bytes_for(nt->nentries);
	for (uint32_t a = 0; a < nadd; a++) {
		uuid_generate(nt->roles[t->nroles + a].member_uuid);
		nt->roles[t->nroles + a].state = RK_ROLE_ACTIVE;
		nt->roles[t->nroles + a].checkpoint = 0;
	}
	return nt;
}

/* The shift (how far below the old data the new data area starts): all the
 * room below the data when the new geometry packs the volume no denser (as
 * many data members: the room per batch stays the same), else a few rows
 * (the room grows as the reshape goes and the rest is kept for later).
 * Planned through before anything is written: every batch must fit. */
static rk_err plan_shift(const struct rk_sb *t, const struct rk_geom *go, const struct rk_geom *gn,
                         const struct rk_resize_opts *o, uint64_t *shift)
{
	uint64_t floor = data_floor(t), ch = gn->chunk;
	if (t->data_offset <= floor)
		return rk_fail(RK_E_NOTSUP, "no room below the data area (data offset %llu) to move the data into",
		               (unsigned long long)t->data_offset);
	uint64_t room = (t->data_offset - floor) / RK_SB_ALIGN * RK_SB_ALIGN;
	*shift = room;
	if (reshape_geo_denser(gn, go) && 4 * ch < room)
		*shift = 4 * ch;
	uint64_t bmax = o && o->batch_max ? o->batch_max : RK_RESIZE_BATCH_MAX;
	uint64_t rows_max = bmax / gn->stripe_data ? bmax / gn->stripe_data : 1;
	for (uint64_t p = 0; p < t->volume_size;) {
		uint64_t k = reshape_batch_rows(go, gn, *shift, t->volume_size, p, rows_max);
		if (!k)
			return rk_fail(RK_E_NOTSUP, "not enough room below the data area (%llu bytes) for new rows of %llu "
			               "bytes: use a smaller chunk", (unsigned long long)room, (unsigned long long)ch);
		p += k * gn->stripe_data;
	}
	return RK_OK;
}

/* Records the reshape to TG (new data offset NDOFF, data size NDS) in a
 * new template: the added members in the set (their journal slots
 * emptied, so no stale record can ever be taken for ours), the journal
 * giving its upper part to the data; then commits it. */
static rk_err record_reshape(struct resize_set *s, rk_dev *const *add, uint32_t nadd, const struct reshape_target *tg,
                             uint64_t ndoff, uint64_t nds, struct rk_resize_result *res)
{
	const struct rk_sb *t = s->t;
	struct rk_sb *nt = template_with_added(t, nadd, tg->nroles);
	if (!nt)
		return RK_E_NOMEM;
	rk_err e = RK_OK;
	if ((nt->feat_incompat & RK_FEAT_INCOMPAT_JOURNAL) && nt->journal_offset < t->data_offset &&
	    nt->journal_offset + nt->journal_size > ndoff)
		nt->journal_size = ndoff - nt->journal_offset;
	for (uint32_t a = 0; a < nadd && !e; a++) {
		s->dev[t->nroles + a] = add[a];
		s->doff[t->nroles + a] = t->data_offset;
		if (t->feat_incompat & RK_FEAT_INCOMPAT_JOURNAL)
			e = resize_zero_range(add[a], nt->journal_offset, nt->journal_size);
	}
	if (!e) {
		nt->feat_incompat |= RK_FEAT_INCOMPAT_RESHAPE;
		nt->reshape_new = (struct rk_geom_desc){ .level = tg->level, .layout = tg->layout, .chunk = tg->chunk,
		                                         .nroles = tg->nroles, .data_offset = ndoff, .data_size = nds };
		nt->reshape_pos = 0;
		nt->reshape_flags = 0;
		s->span = tg->nroles;
		res->old_volume = t->volume_size;
		e = resize_commit(s, nt);
	}
	free(nt);
	return e;
}

/* A striped reshape from the checked set S to TG: geometries, shift and
 * added members' sizes checked, the reshape recorded, then run. */
static rk_err reshape_striped(struct resize_set *s, rk_dev *const *add, uint32_t nadd, const struct reshape_target *tg,
                              const struct rk_resize_opts *o, struct rk_resize_result *res)
{
	const struct rk_sb *t = s->t;
	struct rk_geom go, gn;
	uint64_t nds = t->data_size / tg->chunk * tg->chunk, oldvol = t->volume_size, shift = 0;
	rk_err e = rk_geom_init(&go, t->level, t->layout, t->chunk, t->nroles, t->data_size);
	if (e)
		return e;
	if ((e = rk_geom_init(&gn, tg->level, tg->layout, tg->chunk, tg->nroles, nds)))
		return rk_fail(e, "new geometry: %s", rk_errmsg());
	if (gn.volume_size < oldvol)
		return rk_fail(RK_E_NOTSUP, "the new geometry (level %s, %u members) holds %llu bytes, less than the "
		               "volume's %llu: this build reshapes only to an equal or larger volume", rk_level_name(tg->level),
		               tg->nroles, (unsigned long long)gn.volume_size, (unsigned long long)oldvol);
	if ((e = plan_shift(t, &go, &gn, o, &shift)))
		return e;
	for (uint32_t a = 0; a < nadd; a++) {
		uint64_t need = nds > t->data_size ? nds : t->data_size;
		if (rk_sb_max_data_size(rk_dev_size(add[a]), t->data_offset, 0) < need)
			return rk_fail(RK_E_RANGE, "%s: too small: needs %llu bytes of data area from byte %llu",
			               rk_dev_path(add[a]), (unsigned long long)need, (unsigned long long)t->data_offset);
	}
	if ((e = record_reshape(s, add, nadd, tg, t->data_offset - shift, nds, res)))
		return e;
	if ((e = run_reshape(s, o, res)))
		return e;
	snprintf(res->did, sizeof res->did, "reshaped: level %s -> %s, %u -> %u members, chunk %llu -> %llu, "
	         "volume %llu -> %llu bytes", rk_level_name(go.level), rk_level_name(tg->level), go.nroles, tg->nroles,
	         (unsigned long long)go.chunk, (unsigned long long)tg->chunk, (unsigned long long)oldvol,
	         (unsigned long long)res->new_volume);
	return RK_OK;
}

/* Whether this build reshapes level T's array to TG's level. */
static int level_change_supported(const struct rk_sb *t, const struct reshape_target *tg)
{
	int32_t lvl = tg->level;
	int striped_old = t->level == 0 || t->level == 4 || t->level == 5 || t->level == 6 || t->level == 1 ||
	                  t->level == 10;
	int ok_new = lvl == 4 || lvl == 5 || lvl == 6 || (lvl == 0 && t->level == 0) || (lvl == 10 && t->level == 10);
	return striped_old && ok_new;
}

static rk_err reshape_set(struct resize_set *s, rk_dev *const *add, uint32_t nadd, const struct rk_resize_opts *o,
                          struct rk_resize_result *res)
{
	const struct rk_sb *t = s->t;
	struct reshape_target tg;
	rk_err e = check_start(s, add, nadd);
	if (e)
		return e;
	pick_target(t, o, nadd, &tg);
	if ((e = check_raid10(t, &tg)))
		return e;
	if (t->level == 1 && tg.level == 1) {
		if (!nadd)
			return rk_fail(RK_E_INVAL, "nothing to change");
		struct rk_sb *nt = template_with_added(t, nadd, tg.nroles);
		if (!nt)
			return RK_E_NOMEM;
		res->old_volume = t->volume_size;
		e = add_mirrors(s, add, nadd, nt, o, res);
		free(nt);
		return e;
	}
	if (!level_change_supported(t, &tg))
		return rk_fail(RK_E_NOTSUP, "level %s to %s: not a reshape this build does", rk_level_name(t->level),
		               rk_level_name(tg.level));
	if (tg.level == t->level && tg.layout == t->layout && tg.chunk == t->chunk && !nadd)
		return rk_fail(RK_E_INVAL, "nothing to change");
	return reshape_striped(s, add, nadd, &tg, o, res);
}

struct reshape_args {
	rk_dev *const *add;
	uint32_t nadd;
	const struct rk_resize_opts *o;
};

static rk_err reshape_step(struct resize_set *s, const void *args, struct rk_resize_result *res)
{
	const struct reshape_args *ra = args;
	return reshape_set(s, ra->add, ra->nadd, ra->o, res);
}

rk_err rk_resize_reshape(rk_dev *const *devs, uint32_t n, rk_dev *const *add, uint32_t nadd,
                         const struct rk_resize_opts *o, struct rk_resize_result *res)
{
	struct reshape_args ra = { .add = add, .nadd = nadd, .o = o };
	return resize_run(devs, n, RESIZE_LOAD_ANY, reshape_step, &ra, res);
}

/* Continues what the members' superblocks record: a reshape forward or its
 * revert, a revert's wiping, or an interrupted superblock update. */
static rk_err continue_step(struct resize_set *s, const void *args, struct rk_resize_result *res)
{
	const struct rk_resize_opts *o = args;
	rk_err e;
	res->old_volume = res->new_volume = s->t->volume_size;
	res->events = s->maxev;
	int was_mixed = s->mixed;
	if ((e = resize_settle_mixed(s)))   /* every member at the freshest checkpoint first */
		return e;
	res->events = s->maxev;
	if ((s->t->feat_incompat & RK_FEAT_INCOMPAT_RESHAPE) && (s->t->reshape_flags & RK_RESHAPE_REVERTING)) {
		uint64_t from = s->t->reshape_pos;
		uint32_t newn = s->t->reshape_new.nroles;
		if ((e = reshape_run_revert(s, o, res)))
			return e;
		snprintf(res->did, sizeof res->did, "the reshape was being reverted: revert finished from volume byte "
		         "%llu: level %s on %u members again (%u -> %u), volume %llu bytes", (unsigned long long)from,
		         rk_level_name(s->t->level), s->t->nroles, newn, s->t->nroles, (unsigned long long)s->t->volume_size);
	} else if (s->t->feat_incompat & RK_FEAT_INCOMPAT_RESHAPE) {
		uint64_t from = s->t->reshape_pos;
		if ((e = run_reshape(s, o, res)))
			return e;
		snprintf(res->did, sizeof res->did, "reshape finished from volume byte %llu: level %s, %u members, "
		         "volume %llu bytes", (unsigned long long)from, rk_level_name(s->t->level), s->t->nroles,
		         (unsigned long long)s->t->volume_size);
	} else if (s->nleft) {
		if ((e = resize_wipe_left(s)))
			return e;
		snprintf(res->did, sizeof res->did, "an interrupted revert completed: %u dropped member%s wiped "
		         "(events %llu)", s->nleft, s->nleft == 1 ? "" : "s", (unsigned long long)s->maxev);
	} else if (was_mixed) {
		snprintf(res->did, sizeof res->did, "an interrupted superblock update completed (events %llu)",
		         (unsigned long long)s->maxev);
	} else {
		snprintf(res->did, sizeof res->did, "nothing to continue: no reshape in progress");
	}
	res->missing = resize_count_missing(s);
	return RK_OK;
}

rk_err rk_resize_continue(rk_dev *const *devs, uint32_t n, const struct rk_resize_opts *o,
                          struct rk_resize_result *res)
{
	return resize_run(devs, n, RESIZE_LOAD_RESUME, continue_step, o, res);
}
