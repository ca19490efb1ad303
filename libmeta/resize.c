/* resize.c: raid-resize's library: size changes, reshapes (more members,
 * another level or chunk) with superblock checkpoints, continue, revert,
 * and reading mid-reshape.  The why of the order of writes is in
 * spec/reshape.md; rk_resize.h states the contracts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <uuid/uuid.h>

#include "rk_array.h"
#include "rk_le.h"
#include "rk_geom.h"
#include "rk_resize.h"
#include "rk_vol.h"

#define ZERO_BUF (1u << 20)
#define NOCHUNK_DEFAULT (64u * 1024u)   /* chunk for a level leaving RAID-1 */

/* The members as found: the freshest superblock is the template; devices
 * and own superblocks by role. */
struct set {
	struct rk_sb *t;
	uint32_t span;            /* roles in use: max(nroles, new_nroles) */
	rk_dev **dev;             /* RK_SB_MAX_ROLES entries, by role */
	struct rk_sb **sb;        /* own superblock by role (NULL when not given) */
	uint64_t *doff;           /* current data offset by role (commit writes it) */
	uint64_t maxev;
	int mixed;                /* members disagree on events */
};

static void set_free(struct set *s)
{
	if (s->sb)
		for (uint32_t r = 0; r < RK_SB_MAX_ROLES; r++)
			free(s->sb[r]);
	free(s->sb);
	free(s->dev);
	free(s->doff);
	free(s->t);
	memset(s, 0, sizeof *s);
}

/* Reads every device's superblock and maps devices to roles (see the header
 * comment of rk_resize.h).  NEED_ALL: every role of the span must be given
 * and active. */
static rk_err set_load(struct set *s, rk_dev *const *devs, uint32_t n, int need_all)
{
	rk_err e = RK_OK;
	memset(s, 0, sizeof *s);
	if (!n)
		return rk_fail(RK_E_INVAL, "no members given");
	struct rk_sb **own = calloc(n, sizeof *own);
	s->dev = calloc(RK_SB_MAX_ROLES, sizeof *s->dev);
	s->sb = calloc(RK_SB_MAX_ROLES, sizeof *s->sb);
	s->doff = calloc(RK_SB_MAX_ROLES, sizeof *s->doff);
	s->t = malloc(sizeof *s->t);
	if (!own || !s->dev || !s->sb || !s->doff || !s->t) {
		e = rk_fail(RK_E_NOMEM, "out of memory");
		goto out;
	}
	uint32_t fresh = 0;
	for (uint32_t i = 0; i < n; i++) {
		struct rk_sb_read rd;
		e = rk_sb_read(devs[i], &rd);
		if (e || rd.chosen < 0) {
			e = rk_fail(e ? e : RK_E_NOSB, "%s: no usable superblock: %s", rk_dev_path(devs[i]), rk_errmsg());
			rk_sb_read_free(&rd);
			goto out;
		}
		own[i] = malloc(sizeof *own[i]);
		if (!own[i]) {
			rk_sb_read_free(&rd);
			e = rk_fail(RK_E_NOMEM, "out of memory");
			goto out;
		}
		memcpy(own[i], rd.copy[rd.chosen].sb, sizeof *own[i]);
		rk_sb_read_free(&rd);
		if (own[i]->events > own[fresh]->events)
			fresh = i;
	}
	memcpy(s->t, own[fresh], sizeof *s->t);
	s->maxev = s->t->events;
	s->span = s->t->nroles;
	if ((s->t->feat_incompat & RK_FEAT_INCOMPAT_RESHAPE) && s->t->reshape_new.nroles > s->span)
		s->span = s->t->reshape_new.nroles;
	for (uint32_t i = 0; i < n; i++) {
		const char *path = rk_dev_path(devs[i]);
		if (memcmp(own[i]->array_uuid, s->t->array_uuid, 16)) {
			e = rk_fail(RK_E_CONFLICT, "%s: belongs to another array than %s", path, rk_dev_path(devs[fresh]));
			goto out;
		}
		uint32_t r;
		for (r = 0; r < s->t->nentries; r++)
			if (s->t->roles[r].state != RK_ROLE_EMPTY && !memcmp(s->t->roles[r].member_uuid, own[i]->member_uuid, 16))
				break;
		if (r >= s->span) {
			e = rk_fail(RK_E_STALE, "%s: %s in the array at events %llu", path,
			            r < s->t->nentries ? "a spare, not a role" : "not a member",
			            (unsigned long long)s->maxev);
			goto out;
		}
		if (s->dev[r]) {
			e = rk_fail(RK_E_CONFLICT, "%s: serves role %u, as %s does (the same member given twice?)", path, r,
			            rk_dev_path(s->dev[r]));
			goto out;
		}
		if (s->t->roles[r].state != RK_ROLE_ACTIVE) {
			e = rk_fail(RK_E_STALE, "%s: role %u is %s at events %llu", path, r,
			            rk_role_state_name(s->t->roles[r].state), (unsigned long long)s->maxev);
			goto out;
		}
		if (own[i]->events != s->maxev)
			s->mixed = 1;
		s->dev[r] = devs[i];
		s->sb[r] = own[i];
		s->doff[r] = own[i]->data_offset;
		/* A member that missed the end of a reshape still names the old
		 * data offset; the array's is the template's (reshapes keep the
		 * offsets uniform). */
		if ((own[i]->feat_incompat & RK_FEAT_INCOMPAT_RESHAPE) && !(s->t->feat_incompat & RK_FEAT_INCOMPAT_RESHAPE))
			s->doff[r] = s->t->data_offset;
		own[i] = NULL;
	}
	if (need_all)
		for (uint32_t r = 0; r < s->span; r++)
			if (!s->dev[r]) {
				e = rk_fail(RK_E_TOOFEW, "role %u is %s: every member of the array is needed", r,
				            s->t->roles[r].state == RK_ROLE_ACTIVE ? "not among the members given" : "missing");
				goto out;
			}
out:
	if (own)
		for (uint32_t i = 0; i < n; i++)
			free(own[i]);
	free(own);
	if (e)
		set_free(s);
	return e;
}

/* Writes template T (events = maxev+1) to every given role of its span:
 * the highest roles first, so members added by a reshape carry it before
 * the old members point at them.  Per member: its UUID, role, data offset
 * (s->doff) and dev_size (its own, or the device size where the data
 * areas need more). */
static rk_err commit(struct set *s, struct rk_sb *t)
{
	uint64_t ev;
	if (rk_add_ovf(s->maxev, 1, &ev))
		return rk_fail(RK_E_RANGE, "event counter overflow");
	t->events = ev;
	t->utime = (uint64_t)time(NULL);
	uint32_t span = t->nroles;
	if ((t->feat_incompat & RK_FEAT_INCOMPAT_RESHAPE) && t->reshape_new.nroles > span)
		span = t->reshape_new.nroles;
	struct rk_sb *nsb = malloc(sizeof *nsb);
	if (!nsb)
		return rk_fail(RK_E_NOMEM, "out of memory");
	rk_err e = RK_OK;
	for (uint32_t i = span; i-- > 0;) {
		if (!s->dev[i])
			continue;
		memcpy(nsb, t, sizeof *nsb);
		memcpy(nsb->member_uuid, t->roles[i].member_uuid, 16);
		nsb->this_role = i;
		nsb->data_offset = s->doff[i];
		nsb->sb_offset = RK_SB_PRIMARY_OFF;
		nsb->dev_size = s->sb[i] ? s->sb[i]->dev_size : 0;
		if (nsb->dev_size && rk_sb_validate(nsb, rk_dev_size(s->dev[i])))
			nsb->dev_size = 0;   /* the member grew and the new areas need it */
		if ((e = rk_sb_write(s->dev[i], nsb))) {
			e = rk_fail(e, "%s: writing the superblock: %s", rk_dev_path(s->dev[i]), rk_errmsg());
			break;
		}
		if (!s->sb[i] && !(s->sb[i] = malloc(sizeof *nsb))) {
			e = rk_fail(RK_E_NOMEM, "out of memory");
			break;
		}
		memcpy(s->sb[i], nsb, sizeof *nsb);
		s->sb[i]->dev_size = nsb->dev_size ? nsb->dev_size : rk_dev_size(s->dev[i]);
	}
	free(nsb);
	if (!e) {
		s->maxev = ev;
		s->mixed = 0;
		memcpy(s->t, t, sizeof *t);
	}
	return e;
}

static rk_err zero_range(rk_dev *d, uint64_t off, uint64_t len)
{
	static const uint8_t zeros[ZERO_BUF];
	while (len) {
		size_t k = len < ZERO_BUF ? (size_t)len : ZERO_BUF;
		rk_err e = rk_dev_pwrite(d, zeros, k, off);
		if (e)
			return rk_fail(e, "%s: zeroing: %s", rk_dev_path(d), rk_errmsg());
		off += k;
		len -= k;
	}
	return RK_OK;
}

static rk_err flush_all(struct set *s, uint32_t span)
{
	for (uint32_t r = 0; r < span; r++)
		if (s->dev[r]) {
			rk_err e = rk_dev_flush(s->dev[r]);
			if (e)
				return rk_fail(e, "%s: flush: %s", rk_dev_path(s->dev[r]), rk_errmsg());
		}
	return RK_OK;
}

/* An array stopped unclean in the middle of a reshape (written through
 * rk_array mid-reshape, then killed): its journal is replayed by opening
 * it read-write and closing it (clean), then the set is read again, so the
 * reshape copies what the last write left. */
static rk_err settle_unclean(struct set *s, rk_dev *const *devs, uint32_t n)
{
	if (!(s->t->feat_incompat & RK_FEAT_INCOMPAT_RESHAPE) || s->t->array_state == RK_ARRAY_CLEAN)
		return RK_OK;
	rk_array *a = NULL;
	rk_err e = rk_array_open_devs(&a, s->t, s->dev, (const struct rk_sb *const *)s->sb, RK_ARRAY_RDWR);
	if (e)
		return rk_fail(e, "the array was not closed cleanly and its journal could not be replayed: %s", rk_errmsg());
	if ((e = rk_array_close(a)))
		return rk_fail(e, "the array was not closed cleanly; replaying its journal: %s", rk_errmsg());
	set_free(s);
	return set_load(s, devs, n, 1);
}

static void result_init(struct rk_resize_result *res)
{
	if (res)
		memset(res, 0, sizeof *res);
}

/* ---- volumes over the current (old) and reshape target (new) geometry ---- */

static rk_err open_vol(rk_vol **v, struct rk_geom *g, struct set *s, int32_t level, uint32_t layout,
                       uint64_t chunk, uint32_t nroles, uint64_t ds, uint64_t doff)
{
	rk_err e = rk_geom_init(g, level, layout, chunk, nroles, ds);
	if (e)
		return e;
	uint64_t *offs = malloc(nroles * sizeof *offs);
	if (!offs)
		return rk_fail(RK_E_NOMEM, "out of memory");
	for (uint32_t r = 0; r < nroles; r++)
		offs[r] = doff;
	e = rk_vol_open(v, g, s->dev, offs);
	free(offs);
	return e;
}

static rk_err open_old(rk_vol **v, struct rk_geom *g, struct set *s)
{
	const struct rk_sb *t = s->t;
	return open_vol(v, g, s, t->level, t->layout, t->chunk, t->nroles, t->data_size, t->data_offset);
}

static rk_err open_new(rk_vol **v, struct rk_geom *g, struct set *s)
{
	const struct rk_geom_desc *n = &s->t->reshape_new;
	return open_vol(v, g, s, n->level, n->layout, n->chunk, n->nroles, n->data_size, n->data_offset);
}

/* ---- file systems at the start of the volume ---- */

int rk_resize_fs_extent(rk_err (*read)(void *ctx, void *buf, uint64_t len, uint64_t off), void *ctx,
                        uint64_t volume_size, uint64_t *extent, char *what, size_t whatlen)
{
	enum { PROBE = 128 * 1024 };
	uint8_t *b = calloc(1, PROBE);
	int found = 0;
	if (!b)
		return 0;
	uint64_t len = volume_size < PROBE ? volume_size : PROBE;
	if (read(ctx, b, len, 0))
		goto out;
	if (len >= 2048 && rk_get_le16(b + 1024 + 56) == 0xEF53) {
		uint32_t lg = rk_get_le32(b + 1024 + 24);
		uint32_t incompat = rk_get_le32(b + 1024 + 0x60);
		uint64_t blocks = rk_get_le32(b + 1024 + 4);
		if (incompat & 0x80)   /* 64bit */
			blocks |= (uint64_t)rk_get_le32(b + 1024 + 0x150) << 32;
		if (lg <= 6) {
			*extent = blocks << (10 + lg);
			snprintf(what, whatlen, "an %s file system of %llu bytes",
			         (incompat & 0x40) ? "ext4" : "ext2/ext3", (unsigned long long)*extent);
			found = 1;
		}
	} else if (len >= 16 && !memcmp(b, "XFSB", 4)) {
		uint64_t bs = rk_get_be32(b + 4), db = rk_get_be64(b + 8);
		if (bs >= 512 && bs <= 65536 && !rk_mul_ovf(bs, db, extent)) {
			snprintf(what, whatlen, "an XFS file system of %llu bytes", (unsigned long long)*extent);
			found = 1;
		}
	} else if (len >= 65536 + 0x78 && !memcmp(b + 65536 + 64, "_BHRfS_M", 8)) {
		*extent = rk_get_le64(b + 65536 + 0x70);
		snprintf(what, whatlen, "a btrfs file system of %llu bytes", (unsigned long long)*extent);
		found = 1;
	}
out:
	free(b);
	return found;
}

static rk_err vol_read_cb(void *ctx, void *buf, uint64_t len, uint64_t off)
{
	return rk_vol_read(ctx, buf, (size_t)len, off);
}

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

rk_err rk_resize_size(rk_dev *const *devs, uint32_t n, uint64_t data_size,
                      const struct rk_resize_opts *o, struct rk_resize_result *res)
{
	struct rk_resize_result dummy;
	if (!res)
		res = &dummy;
	result_init(res);
	struct set s;
	rk_err e = set_load(&s, devs, n, 1);
	if (e)
		return e;
	struct rk_sb *t = s.t;
	struct rk_sb *nt = NULL;
	if (t->feat_incompat & RK_FEAT_INCOMPAT_RESHAPE) {
		e = rk_fail(RK_E_CONFLICT, "a reshape is in progress: finish it with --continue first");
		goto out;
	}
	if (s.mixed) {
		e = rk_fail(RK_E_CONFLICT, "the members' superblocks disagree (an interrupted update): run --continue first");
		goto out;
	}
	if (!size_ok_level(t)) {
		e = rk_fail(RK_E_NOTSUP, "level %s with this layout: the volume's mapping depends on the member size, "
		            "so it cannot be resized in place", rk_level_name(t->level));
		goto out;
	}
	uint64_t unit = t->chunk ? t->chunk : RK_SB_ALIGN;
	/* Capacity: the smallest member decides. */
	uint64_t cap = UINT64_MAX;
	uint32_t capr = 0;
	for (uint32_t r = 0; r < t->nroles; r++) {
		uint64_t m = rk_sb_max_data_size(rk_dev_size(s.dev[r]), s.doff[r], t->chunk);
		if (t->feat_incompat & RK_FEAT_INCOMPAT_JOURNAL && t->journal_offset > s.doff[r]) {
			uint64_t lim = t->journal_offset - s.doff[r];
			m = m < lim ? m : lim / unit * unit;
		}
		if (m < cap) {
			cap = m;
			capr = r;
		}
	}
	uint64_t want = data_size ? data_size / unit * unit : cap;
	want = want / RK_SB_ALIGN * RK_SB_ALIGN;
	if (!want) {
		e = rk_fail(RK_E_RANGE, "--size %llu: less than one chunk (%llu bytes)", (unsigned long long)data_size,
		            (unsigned long long)unit);
		goto out;
	}
	if (want > cap) {
		e = rk_fail(RK_E_RANGE, "--size %llu: %s holds at most %llu data bytes", (unsigned long long)want,
		            rk_dev_path(s.dev[capr]), (unsigned long long)cap);
		goto out;
	}
	uint64_t newvol;
	if ((e = rk_sb_volume_size(t->level, t->layout, t->chunk, t->nroles, want, &newvol)))
		goto out;
	res->old_volume = t->volume_size;
	res->new_volume = newvol;
	if (want == t->data_size) {
		snprintf(res->did, sizeof res->did, "nothing to do: data_size is already %llu", (unsigned long long)want);
		res->events = t->events;
		goto out;
	}
	if (newvol < t->volume_size) {
		/* Shrink: keep what the user stated or what a file system holds. */
		rk_vol *v;
		struct rk_geom g;
		if ((e = open_old(&v, &g, &s)))
			goto out;
		uint64_t ext = 0;
		int fs = rk_resize_fs_extent(vol_read_cb, v, t->volume_size, &ext, res->found, sizeof res->found);
		rk_vol_close(v);
		uint64_t keep = o ? o->volume_size : 0;
		if (fs && ext > keep)
			keep = ext;
		res->keep = keep;
		if (!keep) {
			e = rk_fail(RK_E_EXISTS, "shrinking the volume from %llu to %llu bytes cuts off data: state how much "
			            "of the volume to keep with --volume-size (no file system recognised at its start)",
			            (unsigned long long)t->volume_size, (unsigned long long)newvol);
			goto out;
		}
		if (newvol < keep) {
			if (fs && ext == keep)
				e = rk_fail(RK_E_EXISTS, "the volume holds %s: shrinking it to %llu bytes would cut it off "
				            "(shrink the file system first)", res->found, (unsigned long long)newvol);
			else
				e = rk_fail(RK_E_EXISTS, "the new volume (%llu bytes) is smaller than --volume-size %llu",
				            (unsigned long long)newvol, (unsigned long long)keep);
			goto out;
		}
	} else {
		/* Grow: the new rows must be consistent before they are published:
		 * zeros are (data, P and Q all zero; mirrors equal). */
		for (uint32_t r = 0; r < t->nroles; r++)
			if ((e = zero_range(s.dev[r], s.doff[r] + t->data_size, want - t->data_size)))
				goto out;
		if ((e = flush_all(&s, t->nroles)))
			goto out;
	}
	if (!(nt = malloc(sizeof *nt))) {
		e = rk_fail(RK_E_NOMEM, "out of memory");
		goto out;
	}
	memcpy(nt, t, sizeof *nt);
	nt->data_size = want;
	nt->volume_size = newvol;
	if (nt->scrub_pos > newvol)
		nt->scrub_pos = 0;
	if ((e = commit(&s, nt)))
		goto out;
	res->events = s.maxev;
	snprintf(res->did, sizeof res->did, "%s: data_size %llu -> %llu, volume %llu -> %llu bytes",
	         newvol < res->old_volume ? "shrunk" : "grown", (unsigned long long)t->data_size,
	         (unsigned long long)want, (unsigned long long)res->old_volume, (unsigned long long)newvol);
out:
	free(nt);
	set_free(&s);
	return e;
}

/* ---- reshape ---- */

/* Member bytes (relative to the old data area) below which no old block
 * holds volume bytes >= P: the start of P's old stripe row. */
static uint64_t old_low(const struct rk_geom *g, uint64_t p)
{
	if (g->level == 1)
		return p;
	return p / g->stripe_data * g->chunk;
}

/* New rows that may be written from P (a multiple of the new stripe):
 * they must end at or below the old row of P (D bytes higher on the
 * member), so every old block still to be copied stays intact. */
static uint64_t batch_rows(const struct rk_geom *go, const struct rk_geom *gn, uint64_t shift,
                           uint64_t oldvol, uint64_t p, uint64_t rows_max)
{
	uint64_t r = p / gn->stripe_data;
	uint64_t lw = shift + old_low(go, p);
	uint64_t kmax = lw / gn->chunk;
	if (kmax <= r)
		return 0;
	uint64_t k = kmax - r;
	uint64_t left = (oldvol - p + gn->stripe_data - 1) / gn->stripe_data;
	if (k > left)
		k = left;
	if (k > rows_max)
		k = rows_max;
	return k;
}

static void on_fail(void *ctx, uint32_t role, rk_err why)
{
	(void)role;
	(void)why;
	*(int *)ctx = 1;
}

/* Runs the reshape recorded in s->t from its reshape_pos to the end and
 * publishes the new geometry. */
static rk_err run_reshape(struct set *s, const struct rk_resize_opts *o, struct rk_resize_result *res)
{
	struct rk_sb *t = s->t;
	const struct rk_geom_desc *nd = &t->reshape_new;
	rk_vol *vo = NULL, *vn = NULL;
	struct rk_geom go, gn;
	uint8_t *buf = NULL;
	struct rk_sb *nt = NULL;
	int failed = 0;
	rk_err e;
	if (nd->data_offset >= t->data_offset || (t->reshape_flags & RK_RESHAPE_BACKWARDS))
		return rk_fail(RK_E_NOTSUP, "this reshape (data offset %llu -> %llu, flags 0x%x) is not one this build "
		               "runs", (unsigned long long)t->data_offset, (unsigned long long)nd->data_offset,
		               t->reshape_flags);
	uint64_t shift = t->data_offset - nd->data_offset;
	uint64_t oldvol = t->volume_size;
	if ((e = open_old(&vo, &go, s)) || (e = open_new(&vn, &gn, s)))
		goto out;
	rk_vol_on_fail(vo, on_fail, &failed);
	rk_vol_on_fail(vn, on_fail, &failed);
	if (gn.volume_size < oldvol) {
		e = rk_fail(RK_E_CORRUPT, "the new geometry holds %llu bytes, less than the %llu to move",
		            (unsigned long long)gn.volume_size, (unsigned long long)oldvol);
		goto out;
	}
	uint64_t bmax = o && o->batch_max ? o->batch_max : RK_RESIZE_BATCH_MAX;
	uint64_t rows_max = bmax / gn.stripe_data ? bmax / gn.stripe_data : 1;
	if (!(buf = malloc(rows_max * gn.stripe_data)) || !(nt = malloc(sizeof *nt))) {
		e = rk_fail(RK_E_NOMEM, "out of memory for a batch of %llu bytes",
		            (unsigned long long)(rows_max * gn.stripe_data));
		goto out;
	}
	uint64_t p = t->reshape_pos;
	if (p < oldvol && p % gn.stripe_data) {
		e = rk_fail(RK_E_CORRUPT, "reshape_pos %llu: not on a new stripe boundary (%llu)",
		            (unsigned long long)p, (unsigned long long)gn.stripe_data);
		goto out;
	}
	while (p < oldvol) {
		if (o && o->stop && *o->stop) {
			e = rk_fail(RK_E_FAULT, "interrupted at volume byte %llu of %llu: resume with --continue",
			            (unsigned long long)p, (unsigned long long)oldvol);
			goto out;
		}
		uint64_t k = batch_rows(&go, &gn, shift, oldvol, p, rows_max);
		if (!k) {
			e = rk_fail(RK_E_NOTSUP, "no room to move volume byte %llu forward", (unsigned long long)p);
			goto out;
		}
		uint64_t blen = k * gn.stripe_data;
		uint64_t rlen = oldvol - p < blen ? oldvol - p : blen;
		/* Read the old copy, then write whole new rows (bytes past the old
		 * volume are the new space: zeros). */
		if ((e = rk_vol_read(vo, buf, (size_t)rlen, p)))
			goto out;
		memset(buf + rlen, 0, (size_t)(blen - rlen));
		if ((e = rk_vol_write(vn, buf, (size_t)blen, p)) || (e = rk_vol_flush(vn)))
			goto out;
		if (failed) {
			e = rk_fail(RK_E_IO, "a member failed during the reshape (stopped at volume byte %llu): %s",
			            (unsigned long long)p, rk_errmsg());
			goto out;
		}
		/* The batch is durable: only now may the superblocks say so. */
		memcpy(nt, t, sizeof *nt);
		nt->reshape_pos = p + rlen;
		if ((e = commit(s, nt)))
			goto out;
		t = s->t;
		p += rlen;
		res->moved += rlen;
		res->checkpoints++;
		if (o && o->progress)
			o->progress(o->progress_ctx, p, oldvol);
	}
	/* Everything is in the new geometry: the old area is free.  New rows
	 * past the copied ones are made consistent (zeros), then published. */
	uint64_t r0 = (oldvol + gn.stripe_data - 1) / gn.stripe_data;
	uint64_t from = r0 * gn.chunk;
	if (from < nd->data_size)
		for (uint32_t r = 0; r < nd->nroles; r++)
			if ((e = zero_range(s->dev[r], nd->data_offset + from, nd->data_size - from)))
				goto out;
	if ((e = flush_all(s, s->span)))
		goto out;
	memcpy(nt, t, sizeof *nt);
	nt->level = nd->level;
	nt->layout = nd->layout;
	nt->chunk = nd->chunk;
	nt->nroles = nd->nroles;
	nt->data_offset = nd->data_offset;
	nt->data_size = nd->data_size;
	nt->feat_incompat &= ~RK_FEAT_INCOMPAT_RESHAPE;
	memset(&nt->reshape_new, 0, sizeof nt->reshape_new);
	nt->reshape_pos = 0;
	nt->reshape_flags = 0;
	nt->scrub_pos = 0;
	if ((e = rk_sb_volume_size(nt->level, nt->layout, nt->chunk, nt->nroles, nt->data_size, &nt->volume_size)))
		goto out;
	for (uint32_t r = 0; r < nd->nroles; r++)
		s->doff[r] = nd->data_offset;
	if ((e = commit(s, nt)))
		goto out;
	res->new_volume = nt->volume_size;
	res->events = s->maxev;
out:
	rk_vol_close(vo);
	rk_vol_close(vn);
	free(buf);
	free(nt);
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
	}
	return (f + RK_SB_ALIGN - 1) / RK_SB_ALIGN * RK_SB_ALIGN;
}

/* RAID-1 gains mirrors: copy the volume onto each new member, flush, then
 * list them in the superblocks (new members first). */
static rk_err add_mirrors(struct set *s, rk_dev *const *add, uint32_t nadd, struct rk_sb *nt,
                          const struct rk_resize_opts *o, struct rk_resize_result *res)
{
	struct rk_sb *t = s->t;
	rk_vol *v = NULL;
	struct rk_geom g;
	uint8_t *buf = NULL;
	rk_err e;
	uint64_t doff = t->data_offset;
	if ((e = open_old(&v, &g, s)))
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
		if (t->feat_incompat & RK_FEAT_INCOMPAT_JOURNAL && (e = zero_range(add[a], t->journal_offset, t->journal_size)))
			goto out;
		if ((e = rk_dev_flush(add[a])))
			goto out;
		s->dev[t->nroles + a] = add[a];
		s->doff[t->nroles + a] = doff;
	}
	nt->nroles = t->nroles + nadd;
	if ((e = rk_sb_volume_size(nt->level, nt->layout, nt->chunk, nt->nroles, nt->data_size, &nt->volume_size)))
		goto out;
	e = commit(s, nt);
	res->new_volume = nt->volume_size;
	res->events = s->maxev;
	snprintf(res->did, sizeof res->did, "RAID-1 mirrors: %u -> %u", nt->nroles - nadd, nt->nroles);
out:
	rk_vol_close(v);
	free(buf);
	return e;
}

rk_err rk_resize_reshape(rk_dev *const *devs, uint32_t n, rk_dev *const *add, uint32_t nadd,
                         const struct rk_resize_opts *o, struct rk_resize_result *res)
{
	struct rk_resize_result dummy;
	if (!res)
		res = &dummy;
	result_init(res);
	struct set s;
	rk_err e = set_load(&s, devs, n, 1);
	if (e)
		return e;
	struct rk_sb *t = s.t;
	struct rk_sb *nt = NULL;
	if (t->feat_incompat & RK_FEAT_INCOMPAT_RESHAPE) {
		e = rk_fail(RK_E_CONFLICT, "a reshape is already in progress: finish it with --continue");
		goto out;
	}
	if (s.mixed) {
		e = rk_fail(RK_E_CONFLICT, "the members' superblocks disagree (an interrupted update): run --continue first");
		goto out;
	}
	if (t->array_state != RK_ARRAY_CLEAN) {
		e = rk_fail(RK_E_CONFLICT, "the array was not closed cleanly (parity may lag): assemble it or scrub "
		            "--repair first");
		goto out;
	}
	for (uint32_t r = 1; r < t->nroles; r++)
		if (s.doff[r] != s.doff[0]) {
			e = rk_fail(RK_E_NOTSUP, "members have different data offsets (%llu, %llu): not reshaped by this build",
			            (unsigned long long)s.doff[0], (unsigned long long)s.doff[r]);
			goto out;
		}
	uint32_t nr = t->nroles + nadd;
	if (nr > RK_SB_MAX_ROLES || nr > RK_GEOM_MAX_ROLES) {
		e = rk_fail(RK_E_RANGE, "%u members: more than %u", nr, RK_SB_MAX_ROLES);
		goto out;
	}
	for (uint32_t r = t->nroles; r < t->nentries && r < nr; r++)
		if (t->roles[r].state != RK_ROLE_EMPTY) {
			e = rk_fail(RK_E_NOTSUP, "role table entry %u is a spare: remove spares before adding members", r);
			goto out;
		}
	for (uint32_t a = 0; a < nadd; a++)
		for (uint32_t r = 0; r < t->nroles; r++)
			if (add[a] == s.dev[r]) {
				e = rk_fail(RK_E_INVAL, "%s: already a member", rk_dev_path(add[a]));
				goto out;
			}
	int32_t lvl = o && o->set_level ? o->level : t->level;
	uint32_t lay;
	if (o && o->layout != RK_RESIZE_LAYOUT_KEEP)
		lay = o->layout;
	else if (lvl == t->level)
		lay = t->layout;
	else
		lay = rk_layout_default(lvl);
	uint64_t ch = o && o->chunk ? o->chunk : (t->chunk ? t->chunk : NOCHUNK_DEFAULT);
	int striped_old = t->level == 0 || t->level == 4 || t->level == 5 || t->level == 6 || t->level == 1;
	int ok_new = lvl == 4 || lvl == 5 || lvl == 6 || (lvl == 0 && t->level == 0);
	if (t->level == 1 && lvl == 1) {
		if (!nadd) {
			e = rk_fail(RK_E_INVAL, "nothing to change");
			goto out;
		}
		if (!(nt = malloc(sizeof *nt))) {
			e = rk_fail(RK_E_NOMEM, "out of memory");
			goto out;
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
		res->old_volume = t->volume_size;
		e = add_mirrors(&s, add, nadd, nt, o, res);
		goto out;
	}
	if (!striped_old || !ok_new) {
		e = rk_fail(RK_E_NOTSUP, "level %s to %s: not a reshape this build does", rk_level_name(t->level),
		            rk_level_name(lvl));
		goto out;
	}
	if (lvl == t->level && lay == t->layout && ch == t->chunk && !nadd) {
		e = rk_fail(RK_E_INVAL, "nothing to change");
		goto out;
	}
	struct rk_geom go, gn;
	uint64_t nds = t->data_size / ch * ch;
	if ((e = rk_geom_init(&go, t->level, t->layout, t->chunk, t->nroles, t->data_size)))
		goto out;
	if ((e = rk_geom_init(&gn, lvl, lay, ch, nr, nds))) {
		e = rk_fail(e, "new geometry: %s", rk_errmsg());
		goto out;
	}
	uint64_t oldvol = t->volume_size;
	if (gn.volume_size < oldvol) {
		e = rk_fail(RK_E_NOTSUP, "the new geometry (level %s, %u members) holds %llu bytes, less than the volume's "
		            "%llu: this build reshapes only to an equal or larger volume", rk_level_name(lvl), nr,
		            (unsigned long long)gn.volume_size, (unsigned long long)oldvol);
		goto out;
	}
	/* The shift: all the room below the data when the data members stay
	 * as many (the room per batch stays the same), else a few rows (the
	 * room grows as the reshape goes and the rest is kept for later). */
	uint64_t floor = data_floor(t);
	if (t->data_offset <= floor) {
		e = rk_fail(RK_E_NOTSUP, "no room below the data area (data offset %llu) to move the data into",
		            (unsigned long long)t->data_offset);
		goto out;
	}
	uint64_t room = (t->data_offset - floor) / RK_SB_ALIGN * RK_SB_ALIGN;
	uint64_t shift = room;
	if (gn.ndata > go.ndata && 4 * ch < room)
		shift = 4 * ch;
	/* Plan it through before writing anything: every batch must fit. */
	uint64_t bmax = o && o->batch_max ? o->batch_max : RK_RESIZE_BATCH_MAX;
	uint64_t rows_max = bmax / gn.stripe_data ? bmax / gn.stripe_data : 1;
	for (uint64_t p = 0; p < oldvol;) {
		uint64_t k = batch_rows(&go, &gn, shift, oldvol, p, rows_max);
		if (!k) {
			e = rk_fail(RK_E_NOTSUP, "not enough room below the data area (%llu bytes) for new rows of %llu "
			            "bytes: use a smaller chunk", (unsigned long long)room, (unsigned long long)ch);
			goto out;
		}
		p += k * gn.stripe_data;
	}
	uint64_t ndoff = t->data_offset - shift;
	for (uint32_t a = 0; a < nadd; a++) {
		uint64_t need = nds > t->data_size ? nds : t->data_size;
		if (rk_sb_max_data_size(rk_dev_size(add[a]), t->data_offset, 0) < need) {
			e = rk_fail(RK_E_RANGE, "%s: too small: needs %llu bytes of data area from byte %llu",
			            rk_dev_path(add[a]), (unsigned long long)need, (unsigned long long)t->data_offset);
			goto out;
		}
	}
	if (!(nt = malloc(sizeof *nt))) {
		e = rk_fail(RK_E_NOMEM, "out of memory");
		goto out;
	}
	memcpy(nt, t, sizeof *nt);
	if ((nt->feat_incompat & RK_FEAT_INCOMPAT_JOURNAL) && nt->journal_offset < t->data_offset &&
	    nt->journal_offset + nt->journal_size > ndoff)
		nt->journal_size = ndoff - nt->journal_offset;   /* gives its upper part to the data */
	if (nt->nentries < nr)
		nt->nentries = nr;
	nt->sb_bytes = rk_sb_bytes_for(nt->nentries);
	for (uint32_t a = 0; a < nadd; a++) {
		uuid_generate(nt->roles[t->nroles + a].member_uuid);
		nt->roles[t->nroles + a].state = RK_ROLE_ACTIVE;
		nt->roles[t->nroles + a].checkpoint = 0;
		s.dev[t->nroles + a] = add[a];
		s.doff[t->nroles + a] = t->data_offset;
		/* An empty slot: no stale record can ever be taken for ours. */
		if ((t->feat_incompat & RK_FEAT_INCOMPAT_JOURNAL) && (e = zero_range(add[a], nt->journal_offset, nt->journal_size)))
			goto out;
	}
	nt->feat_incompat |= RK_FEAT_INCOMPAT_RESHAPE;
	nt->reshape_new.level = lvl;
	nt->reshape_new.layout = lay;
	nt->reshape_new.chunk = ch;
	nt->reshape_new.nroles = nr;
	nt->reshape_new.data_offset = ndoff;
	nt->reshape_new.data_size = nds;
	nt->reshape_pos = 0;
	nt->reshape_flags = 0;
	nt->volume_size = oldvol;
	s.span = nr;
	res->old_volume = oldvol;
	if ((e = commit(&s, nt)))
		goto out;
	e = run_reshape(&s, o, res);
	if (!e)
		snprintf(res->did, sizeof res->did, "reshaped: level %s -> %s, %u -> %u members, chunk %llu -> %llu, "
		         "volume %llu -> %llu bytes", rk_level_name(go.level), rk_level_name(lvl), go.nroles, nr,
		         (unsigned long long)go.chunk, (unsigned long long)ch, (unsigned long long)oldvol,
		         (unsigned long long)res->new_volume);
out:
	free(nt);
	set_free(&s);
	return e;
}

rk_err rk_resize_continue(rk_dev *const *devs, uint32_t n, const struct rk_resize_opts *o,
                          struct rk_resize_result *res)
{
	struct rk_resize_result dummy;
	if (!res)
		res = &dummy;
	result_init(res);
	struct set s;
	rk_err e = set_load(&s, devs, n, 1);
	if (e)
		return e;
	if ((e = settle_unclean(&s, devs, n)))
		goto out;
	res->old_volume = res->new_volume = s.t->volume_size;
	res->events = s.maxev;
	if (s.t->feat_incompat & RK_FEAT_INCOMPAT_RESHAPE) {
		uint64_t from = s.t->reshape_pos;
		if (s.mixed) {
			/* Bring every member to the freshest checkpoint first. */
			struct rk_sb *nt = malloc(sizeof *nt);
			if (!nt) {
				e = rk_fail(RK_E_NOMEM, "out of memory");
				goto out;
			}
			memcpy(nt, s.t, sizeof *nt);
			e = commit(&s, nt);
			free(nt);
			if (e)
				goto out;
		}
		if ((e = run_reshape(&s, o, res)))
			goto out;
		snprintf(res->did, sizeof res->did, "reshape finished from volume byte %llu: level %s, %u members, "
		         "volume %llu bytes", (unsigned long long)from, rk_level_name(s.t->level), s.t->nroles,
		         (unsigned long long)s.t->volume_size);
	} else if (s.mixed) {
		struct rk_sb *nt = malloc(sizeof *nt);
		if (!nt) {
			e = rk_fail(RK_E_NOMEM, "out of memory");
			goto out;
		}
		memcpy(nt, s.t, sizeof *nt);
		e = commit(&s, nt);
		free(nt);
		if (e)
			goto out;
		res->events = s.maxev;
		snprintf(res->did, sizeof res->did, "an interrupted superblock update completed (events %llu)",
		         (unsigned long long)s.maxev);
	} else {
		snprintf(res->did, sizeof res->did, "nothing to continue: no reshape in progress");
	}
out:
	set_free(&s);
	return e;
}

rk_err rk_resize_revert(rk_dev *const *devs, uint32_t n, const struct rk_resize_opts *o,
                        struct rk_resize_result *res)
{
	(void)o;
	struct rk_resize_result dummy;
	if (!res)
		res = &dummy;
	result_init(res);
	struct set s;
	rk_err e = set_load(&s, devs, n, 1);
	if (e)
		return e;
	if ((e = settle_unclean(&s, devs, n)))
		goto out;
	struct rk_sb *t = s.t;
	if (!(t->feat_incompat & RK_FEAT_INCOMPAT_RESHAPE)) {
		e = rk_fail(RK_E_INVAL, "no reshape in progress: nothing to revert");
		goto out;
	}
	if (t->reshape_pos) {
		e = rk_fail(RK_E_NOTSUP, "the reshape has moved %llu bytes already: it cannot be reverted, finish it "
		            "with --continue", (unsigned long long)t->reshape_pos);
		goto out;
	}
	struct rk_sb *nt = malloc(sizeof *nt);
	if (!nt) {
		e = rk_fail(RK_E_NOMEM, "out of memory");
		goto out;
	}
	uint32_t oldn = t->nroles, newn = t->reshape_new.nroles;
	memcpy(nt, t, sizeof *nt);
	nt->feat_incompat &= ~RK_FEAT_INCOMPAT_RESHAPE;
	memset(&nt->reshape_new, 0, sizeof nt->reshape_new);
	nt->reshape_pos = 0;
	nt->reshape_flags = 0;
	rk_sb_volume_size(nt->level, nt->layout, nt->chunk, nt->nroles, nt->data_size, &nt->volume_size);
	for (uint32_t r = oldn; r < newn && r < nt->nentries; r++)
		memset(&nt->roles[r], 0, sizeof nt->roles[r]);
	/* Old members first: once they no longer list the added ones, wiping
	 * those cannot leave an array pointing at a member without metadata. */
	rk_dev *added[RK_SB_MAX_ROLES];
	uint32_t nad = 0;
	for (uint32_t r = oldn; r < newn; r++) {
		if (s.dev[r])
			added[nad++] = s.dev[r];
		s.dev[r] = NULL;
	}
	e = commit(&s, nt);
	free(nt);
	for (uint32_t i = 0; !e && i < nad; i++) {
		uint64_t b = rk_sb_backup_offset(rk_dev_size(added[i]));
		if (!(e = zero_range(added[i], RK_SB_PRIMARY_OFF, RK_SB_AREA)) && b)
			e = zero_range(added[i], b, RK_SB_AREA);
		if (!e)
			e = rk_dev_flush(added[i]);
	}
	if (!e) {
		res->events = s.maxev;
		res->old_volume = res->new_volume = s.t->volume_size;
		snprintf(res->did, sizeof res->did, "reverted to level %s on %u members", rk_level_name(s.t->level), oldn);
	}
out:
	set_free(&s);
	return e;
}

rk_err rk_resize_read(rk_dev *const *devs, uint32_t n, void *buf, uint64_t len, uint64_t off, uint64_t *size)
{
	struct set s;
	rk_err e = set_load(&s, devs, n, 0);
	if (e)
		return e;
	rk_resize_reader *rd = NULL;
	if (size)
		*size = s.t->volume_size;
	if (!(e = rk_resize_reader_open(&rd, s.t, s.dev, NULL, NULL)))
		e = rk_resize_reader_read(rd, buf, len, off);
	rk_resize_reader_close(rd);
	set_free(&s);
	return e;
}
