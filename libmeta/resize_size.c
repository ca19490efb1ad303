/* resize_size.c: growing or shrinking the data area of every member (and
 * the volume) without moving data (rk_resize_size). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "resize_int.h"

/* ---- size ---- */

static int size_ok_level(const struct rk_sb *t)
{
	switch (t->level) {
	case 0: case 1: case 4: case 5: case 6:
		return 1;
	case 10:
		return ((t->layout >> 8) & 0xff) == 1 && !((t->layout >> 16) & 1);   /* near only */
	case RK_LEVEL_LINEAR:
		return t->nroles == 1;
	default:
		return 0;
	}
}

/* The most data bytes every member holds (the smallest member decides;
 * CAPR its role), in UNIT multiples below a journal above the data. */
static uint64_t capacity(const struct resize_set *s, uint64_t unit, uint32_t *capr)
{
	const struct rk_sb *t = s->t;
	uint64_t cap = UINT64_MAX;
	*capr = 0;
	for (uint32_t r = 0; r < t->nroles; r++) {
		uint64_t m = rk_sb_max_data_size(rk_dev_size(s->dev[r]), s->doff[r], t->chunk);
		if (t->feat_incompat & RK_FEAT_INCOMPAT_JOURNAL && t->journal_offset > s->doff[r]) {
			uint64_t lim = t->journal_offset - s->doff[r];
			m = m < lim ? m : lim / unit * unit;
		}
		if (m < cap) {
			cap = m;
			*capr = r;
		}
	}
	return cap;
}

/* Shrinking to NEWVOL keeps what the user stated or what a file system at
 * the start of the volume holds (res->keep, res->found). */
static rk_err check_shrink(struct resize_set *s, const struct rk_resize_opts *o, uint64_t newvol,
                           struct rk_resize_result *res)
{
	const struct rk_sb *t = s->t;
	rk_vol *v;
	struct rk_geom g;
	rk_err e = resize_open_old(&v, &g, s);
	if (e)
		return e;
	uint64_t ext = 0;
	int fs = rk_probe_fs_extent(resize_vol_read, v, t->volume_size, &ext, res->found, sizeof res->found);
	rk_vol_close(v);
	uint64_t keep = o ? o->volume_size : 0;
	if (fs && ext > keep)
		keep = ext;
	res->keep = keep;
	if (!keep)
		return rk_fail(RK_E_EXISTS, "shrinking the volume from %llu to %llu bytes cuts off data: state how much "
		               "of the volume to keep with --volume-size (no file system recognised at its start)",
		               (unsigned long long)t->volume_size, (unsigned long long)newvol);
	if (newvol >= keep)
		return RK_OK;
	if (fs && ext == keep)
		return rk_fail(RK_E_EXISTS, "the volume holds %s: shrinking it to %llu bytes would cut it off "
		               "(shrink the file system first)", res->found, (unsigned long long)newvol);
	return rk_fail(RK_E_EXISTS, "the new volume (%llu bytes) is smaller than --volume-size %llu",
	               (unsigned long long)newvol, (unsigned long long)keep);
}

/* Growing to WANT data bytes: the new rows must be consistent before they
 * are published: zeros are (data, P and Q all zero; mirrors equal). */
static rk_err zero_new_rows(struct resize_set *s, uint64_t want)
{
	const struct rk_sb *t = s->t;
	for (uint32_t r = 0; r < t->nroles; r++) {
		rk_err e = resize_zero_range(s->dev[r], s->doff[r] + t->data_size, want - t->data_size);
		if (e)
			return e;
	}
	return resize_flush_all(s, t->nroles);
}

/* Commits data_size WANT, volume NEWVOL. */
static rk_err commit_size(struct resize_set *s, uint64_t want, uint64_t newvol)
{
	struct rk_sb *nt = malloc(sizeof *nt);
	if (!nt)
		return rk_fail(RK_E_NOMEM, "out of memory");
	memcpy(nt, s->t, sizeof *nt);
	nt->data_size = want;
	nt->volume_size = newvol;
	if (nt->scrub_pos > newvol)
		nt->scrub_pos = 0;
	rk_err e = resize_commit(s, nt);
	free(nt);
	return e;
}

static rk_err change_size(struct resize_set *s, uint64_t data_size, const struct rk_resize_opts *o,
                              struct rk_resize_result *res)
{
	struct rk_sb *t = s->t;
	if (t->feat_incompat & RK_FEAT_INCOMPAT_RESHAPE)
		return rk_fail(RK_E_CONFLICT, "a reshape is in progress: finish it with --continue first");
	if (s->mixed)
		return rk_fail(RK_E_CONFLICT, "the members' superblocks disagree (an interrupted update): run --continue first");
	if (!size_ok_level(t))
		return rk_fail(RK_E_NOTSUP, "level %s with this layout: the volume's mapping depends on the member size, "
		               "so it cannot be resized in place", rk_level_name(t->level));
	uint64_t unit = t->chunk ? t->chunk : RK_SB_ALIGN;
	uint32_t capr;
	uint64_t cap = capacity(s, unit, &capr);
	uint64_t want = data_size ? data_size / unit * unit : cap;
	want = want / RK_SB_ALIGN * RK_SB_ALIGN;
	if (!want)
		return rk_fail(RK_E_RANGE, "--size %llu: less than one chunk (%llu bytes)", (unsigned long long)data_size,
		               (unsigned long long)unit);
	if (want > cap)
		return rk_fail(RK_E_RANGE, "--size %llu: %s holds at most %llu data bytes", (unsigned long long)want,
		               rk_dev_path(s->dev[capr]), (unsigned long long)cap);
	uint64_t newvol;
	rk_err e = rk_sb_volume_size(t->level, t->layout, t->chunk, t->nroles, want, &newvol);
	if (e)
		return e;
	res->old_volume = t->volume_size;
	res->new_volume = newvol;
	if (want == t->data_size) {
		snprintf(res->did, sizeof res->did, "nothing to do: data_size is already %llu", (unsigned long long)want);
		res->events = t->events;
		return RK_OK;
	}
	if ((e = newvol < t->volume_size ? check_shrink(s, o, newvol, res) : zero_new_rows(s, want)))
		return e;
	if ((e = commit_size(s, want, newvol)))
		return e;
	res->events = s->maxev;
	/* t is the set's template: the committed one now */
	snprintf(res->did, sizeof res->did, "%s: data_size %llu -> %llu, volume %llu -> %llu bytes",
	         newvol < res->old_volume ? "shrunk" : "grown", (unsigned long long)t->data_size,
	         (unsigned long long)want, (unsigned long long)res->old_volume, (unsigned long long)newvol);
	return RK_OK;
}

struct size_args {
	uint64_t data_size;
	const struct rk_resize_opts *o;
};

static rk_err size_step(struct resize_set *s, const void *args, struct rk_resize_result *res)
{
	const struct size_args *sa = args;
	return change_size(s, sa->data_size, sa->o, res);
}

rk_err rk_resize_size(rk_dev *const *devs, uint32_t n, uint64_t data_size,
                      const struct rk_resize_opts *o, struct rk_resize_result *res)
{
	struct size_args sa = { .data_size = data_size, .o = o };
	return resize_run(devs, n, RESIZE_LOAD_ALL, size_step, &sa, res);
}
