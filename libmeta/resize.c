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
#include "resize_int.h"

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
	/* Members a finished revert dropped from the array but had not wiped
	 * yet (see is_leftover); only loaded with KEEP_LEFT. */
	rk_dev **left;
	uint32_t nleft;
};

static void set_free(struct set *s)
{
	if (s->sb)
		for (uint32_t r = 0; r < RK_SB_MAX_ROLES; r++)
			free(s->sb[r]);
	free(s->sb);
	free(s->dev);
	free(s->doff);
	free(s->left);
	free(s->t);
	memset(s, 0, sizeof *s);
}

/* Every role of the span must be given (and, as set_load checked, active). */
static rk_err set_need_all(const struct set *s)
{
	for (uint32_t r = 0; r < s->span; r++)
		if (!s->dev[r])
			return rk_fail(RK_E_TOOFEW, "role %u is %s: every member of the array is needed", r,
			               s->t->roles[r].state == RK_ROLE_ACTIVE ? "not among the members given" : "missing");
	return RK_OK;
}

/* Mid-reshape, roles may be missing as long as both geometries can still
 * be read and written without them (a member lost, or left out by a
 * degraded write, in the middle of a reshape): the restripe reconstructs
 * their blocks and leaves them to raid-recover --rebuild afterwards.
 * Without a reshape in progress every role is needed. */
static rk_err set_need_reshape(const struct set *s)
{
	const struct rk_sb *t = s->t;
	if (!(t->feat_incompat & RK_FEAT_INCOMPAT_RESHAPE))
		return set_need_all(s);
	const struct rk_geom_desc *nd = &t->reshape_new;
	struct rk_geom go, gn;
	if (rk_geom_init(&go, t->level, t->layout, t->chunk, t->nroles, t->data_size) ||
	    rk_geom_init(&gn, nd->level, nd->layout, nd->chunk, nd->nroles, nd->data_size))
		return rk_fail(RK_E_CORRUPT, "the superblock's geometries do not hold: %s", rk_errmsg());
	uint32_t mo = 0, mn = 0;
	for (uint32_t r = 0; r < s->span; r++)
		if (!s->dev[r]) {
			mo += r < t->nroles;
			mn += r < nd->nroles;
		}
	if (mo > rk_geom_redundancy(&go) || mn > rk_geom_redundancy(&gn)) {
		rk_err e = set_need_all(s);
		return rk_fail(e, "%s (too many missing for the reshape to go on degraded: %u of %u old roles, %u of %u "
		               "new)", rk_errmsg(), mo, t->nroles, mn, nd->nroles);
	}
	return RK_OK;
}

/* A member that a revert dropped: its own superblock (older than the
 * template T) is of a reshape that added it (its role past the old
 * nroles), while T, the freshest, has no reshape and an empty entry for
 * that role.  Only an interrupted revert leaves this: a forward reshape
 * lists the added members before and after it finishes. */
static int is_leftover(const struct rk_sb *t, const struct rk_sb *o)
{
	if ((t->feat_incompat & RK_FEAT_INCOMPAT_RESHAPE) || !(o->feat_incompat & RK_FEAT_INCOMPAT_RESHAPE))
		return 0;
	if (o->events >= t->events || o->nroles != t->nroles)
		return 0;
	if (o->this_role < t->nroles || o->this_role >= o->reshape_new.nroles)
		return 0;
	return o->this_role >= t->nentries || t->roles[o->this_role].state == RK_ROLE_EMPTY;
}

/* Reads every device's superblock and maps devices to roles (see the header
 * comment of rk_resize.h).  NEED_ALL 1: every role of the span must be
 * given and active; 2: mid-reshape, as many as both geometries need
 * (set_need_reshape); 0: no check.  KEEP_LEFT: members a revert dropped (is_leftover) go to
 * s->left instead of failing the load. */
static rk_err set_load(struct set *s, rk_dev *const *devs, uint32_t n, int need_all, int keep_left)
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
	s->left = calloc(n, sizeof *s->left);
	if (!own || !s->dev || !s->sb || !s->doff || !s->t || !s->left) {
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
		if (r >= s->span && keep_left && is_leftover(s->t, own[i])) {
			s->left[s->nleft++] = devs[i];
			continue;
		}
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
	if (need_all == 1)
		e = set_need_all(s);
	else if (need_all == 2)
		e = set_need_reshape(s);
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
	return set_load(s, devs, n, 2, 1);
}

/* A reshape going on degraded: roles not given are recorded FAULTY in the
 * superblocks of the others before anything moves, so a member that comes
 * back later is stale (its blocks were not written meanwhile), never taken
 * for one that missed a checkpoint update. */
static rk_err mark_missing(struct set *s)
{
	if (!(s->t->feat_incompat & RK_FEAT_INCOMPAT_RESHAPE))
		return RK_OK;
	int any = 0;
	for (uint32_t r = 0; r < s->span; r++)
		any |= !s->dev[r] && s->t->roles[r].state == RK_ROLE_ACTIVE;
	if (!any)
		return RK_OK;
	struct rk_sb *nt = malloc(sizeof *nt);
	if (!nt)
		return rk_fail(RK_E_NOMEM, "out of memory");
	memcpy(nt, s->t, sizeof *nt);
	for (uint32_t r = 0; r < s->span; r++)
		if (!s->dev[r] && nt->roles[r].state == RK_ROLE_ACTIVE)
			nt->roles[r].state = RK_ROLE_FAULTY;
	rk_err e = commit(s, nt);
	free(nt);
	return e;
}

/* Roles of the array's current geometry not active (after a degraded
 * continue or revert: for raid-recover --rebuild). */
static uint32_t count_missing(const struct set *s)
{
	uint32_t m = 0;
	for (uint32_t r = 0; r < s->t->nroles && r < s->t->nentries; r++)
		m += s->t->roles[r].state != RK_ROLE_ACTIVE;
	return m;
}

/* Continue and revert start alike: the members loaded (mid-reshape some
 * may be missing, set_need_reshape), the journal of an unclean stop
 * replayed, missing roles recorded faulty.  On error S is freed. */
static rk_err load_resume(struct set *s, rk_dev *const *devs, uint32_t n)
{
	rk_err e = set_load(s, devs, n, 2, 1);
	if (e)
		return e;
	if ((e = settle_unclean(s, devs, n)) || (e = mark_missing(s)))
		set_free(s);
	return e;
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
	return rk_resize_geom_vol(v, g, s->dev, level, layout, chunk, nroles, ds, doff);
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
	rk_err e = set_load(&s, devs, n, 1, 0);
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

/* Where a geometry keeps volume bytes on its members (offsets relative to
 * its data area), for the ordering rule of spec/reshape.md:
 *   geo_lo(g, p)  the lowest member offset holding any block (data, parity
 *                 or copy) of volume bytes >= p;
 *   geo_hi(g, q)  the end of the member offsets holding all blocks of
 *                 volume bytes < q.
 * Striped levels: whole rows of chunks; RAID-1: the byte itself; RAID-10
 * near (far 1, no offset; other layouts are refused before a reshape):
 * chunk c has copies at near-grid indexes c*near .. c*near+near-1, index x
 * on row x / nroles.  Results saturate at UINT64_MAX instead of wrapping. */
static int geo_reshapable(const struct rk_geom *g)
{
	switch (g->level) {
	case 0: case 1: case 4: case 5: case 6:
		return 1;
	case 10:
		return g->r10_far == 1 && !g->r10_offset;
	default:
		return 0;
	}
}

static uint64_t sat_mul(uint64_t a, uint64_t b)
{
	uint64_t r;
	return rk_mul_ovf(a, b, &r) ? UINT64_MAX : r;
}

static uint64_t geo_lo(const struct rk_geom *g, uint64_t p)
{
	if (g->level == 1)
		return p;
	if (g->level == 10)
		return sat_mul(sat_mul(p / g->chunk, g->r10_near) / g->nroles, g->chunk);
	return sat_mul(p / g->stripe_data, g->chunk);
}

static uint64_t geo_hi(const struct rk_geom *g, uint64_t q)
{
	if (!q)
		return 0;
	if (g->level == 1)
		return q;
	if (g->level == 10) {
		uint64_t last = sat_mul((q - 1) / g->chunk + 1, g->r10_near) - 1;   /* the last copy's index */
		return sat_mul(last / g->nroles + 1, g->chunk);
	}
	return sat_mul((q - 1) / g->stripe_data + 1, g->chunk);
}

/* The largest Q, a multiple of g's stripe_data, with geo_hi(g, Q) <= L.
 * RAID-10: Q = floor(floor(L/chunk) * nroles / near) chunks (the last
 * copy of chunk Q/chunk - 1 then ends on row floor(L/chunk) - 1 at most). */
static uint64_t geo_hi_cap(const struct rk_geom *g, uint64_t l)
{
	if (g->level == 1)
		return l / g->stripe_data * g->stripe_data;
	if (g->level == 10)
		return sat_mul(sat_mul(l / g->chunk, g->nroles) / g->r10_near, g->chunk);
	return sat_mul(l / g->chunk, g->stripe_data);
}

/* Volume bytes per member row, as a fraction (num/den of a chunk's worth):
 * the new geometry packs the volume denser when its fraction is larger. */
static int geo_denser(const struct rk_geom *gn, const struct rk_geom *go)
{
	uint64_t nn = gn->level == 10 ? gn->nroles : gn->ndata, nd = gn->level == 10 ? gn->r10_near : 1;
	uint64_t on = go->level == 10 ? go->nroles : go->ndata, od = go->level == 10 ? go->r10_near : 1;
	return nn * od > on * nd;
}

/* New stripes that may be written from P (a multiple of the new stripe):
 * batch [P, Q) only when geo_hi(new, Q) <= SHIFT + geo_lo(old, P), i.e.
 * every new block of bytes < Q lands below every old block of bytes >= P,
 * which are all still to be copied.  0: not even one stripe fits. */
static uint64_t batch_rows(const struct rk_geom *go, const struct rk_geom *gn, uint64_t shift,
                           uint64_t oldvol, uint64_t p, uint64_t rows_max)
{
	uint64_t lw;
	if (rk_add_ovf(shift, geo_lo(go, p), &lw))
		lw = UINT64_MAX;
	uint64_t q = geo_hi_cap(gn, lw);
	if (q <= p)
		return 0;
	uint64_t k = (q - p) / gn->stripe_data;
	uint64_t left = (oldvol - p + gn->stripe_data - 1) / gn->stripe_data;
	if (k > left)
		k = left;
	if (k > rows_max)
		k = rows_max;
	return k;
}

/* Reverting from P (reshape_pos, > 0): the smallest Q, a multiple of the new
 * stripe, Q < P, Q >= P - rows_max stripes, with
 * geo_hi(new, P) <= SHIFT + geo_lo(old, Q): the old rows rewritten for
 * [Q, P) start at or above geo_lo(old, Q), so they never touch the new
 * blocks of bytes < P, which are still read until the checkpoint moves.
 * The condition only gets easier as Q grows; the stripe holding P-1 always
 * meets it when the forward plan was valid (spec/reshape.md).  Returns P
 * when no Q fits. */
static uint64_t revert_from(const struct rk_geom *go, const struct rk_geom *gn, uint64_t shift, uint64_t p,
                            uint64_t rows_max)
{
	uint64_t sd = gn->stripe_data;
	uint64_t need = geo_hi(gn, p);
	need = need > shift ? need - shift : 0;
	uint64_t hi = (p - 1) / sd;                          /* largest candidate, in stripes */
	uint64_t lo = hi >= rows_max - 1 ? hi - (rows_max - 1) : 0;
	if (geo_lo(go, sat_mul(hi, sd)) < need)
		return p;
	while (lo < hi) {                                    /* the first stripe that meets it */
		uint64_t mid = lo + (hi - lo) / 2;
		if (geo_lo(go, sat_mul(mid, sd)) >= need)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo * sd;
}

/* The old rows a revert batch rewrites: [row_start(Q), row_end(P)) of the
 * old geometry, whole stripes (RAID-1: the bytes themselves), within the
 * old volume. */
static uint64_t old_row_start(const struct rk_geom *g, uint64_t q)
{
	return g->level == 1 ? q : q / g->stripe_data * g->stripe_data;
}

static uint64_t old_row_end(const struct rk_geom *g, uint64_t p, uint64_t vol)
{
	uint64_t e = g->level == 1 ? p : sat_mul((p + g->stripe_data - 1) / g->stripe_data, g->stripe_data);
	return e < vol ? e : vol;
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
	if (nd->data_offset >= t->data_offset || (t->reshape_flags & ~RK_RESHAPE_REVERTING))
		return rk_fail(RK_E_NOTSUP, "this reshape (data offset %llu -> %llu, flags 0x%x) is not one this build "
		               "runs", (unsigned long long)t->data_offset, (unsigned long long)nd->data_offset,
		               t->reshape_flags);
	if (t->reshape_flags & RK_RESHAPE_REVERTING)
		return rk_fail(RK_E_CONFLICT, "the reshape is being reverted (back at volume byte %llu): it cannot go "
		               "forward again; finish the revert with --continue", (unsigned long long)t->reshape_pos);
	uint64_t shift = t->data_offset - nd->data_offset;
	uint64_t oldvol = t->volume_size;
	if ((e = open_old(&vo, &go, s)) || (e = open_new(&vn, &gn, s)))
		goto out;
	if (!geo_reshapable(&go) || !geo_reshapable(&gn)) {
		e = rk_fail(RK_E_NOTSUP, "this reshape (level %s to %s) is not one this build runs", rk_level_name(go.level),
		            rk_level_name(gn.level));
		goto out;
	}
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
	/* Everything is in the new geometry: the old area is free.  What lies
	 * past the copied stripes is made consistent (zeros), then published:
	 * member rows from geo_hi(new, end) on hold nothing copied and are
	 * zeroed on every member; below that (RAID-10: the rest of the last
	 * row written holds copies of later chunks) the chunks whose copies
	 * start there are written as zeros through the new geometry, so every
	 * copy agrees. */
	uint64_t qend = (oldvol + gn.stripe_data - 1) / gn.stripe_data * gn.stripe_data;
	uint64_t from = geo_hi(&gn, qend);
	if (from < nd->data_size)
		for (uint32_t r = 0; r < nd->nroles; r++)
			if (s->dev[r] && (e = zero_range(s->dev[r], nd->data_offset + from, nd->data_size - from)))
				goto out;
	memset(buf, 0, (size_t)gn.stripe_data);
	for (uint64_t z = qend; z < gn.volume_size && geo_lo(&gn, z) < from; z += gn.stripe_data)
		if ((e = rk_vol_write(vn, buf, (size_t)gn.stripe_data, z)))
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
	rk_err e = set_load(&s, devs, n, 0, 0);
	if (e)
		return e;
	struct rk_sb *t = s.t;
	struct rk_sb *nt = NULL;
	if ((t->feat_incompat & RK_FEAT_INCOMPAT_RESHAPE) && (t->reshape_flags & RK_RESHAPE_REVERTING)) {
		e = rk_fail(RK_E_CONFLICT, "the array's last reshape is being reverted (back at volume byte %llu): "
		            "finish the revert with --continue before a new reshape", (unsigned long long)t->reshape_pos);
		goto out;
	}
	if (t->feat_incompat & RK_FEAT_INCOMPAT_RESHAPE) {
		e = rk_fail(RK_E_CONFLICT, "a reshape is already in progress: finish it with --continue");
		goto out;
	}
	if ((e = set_need_all(&s)))
		goto out;
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
	int striped_old = t->level == 0 || t->level == 4 || t->level == 5 || t->level == 6 || t->level == 1 ||
	                  t->level == 10;
	int ok_new = lvl == 4 || lvl == 5 || lvl == 6 || (lvl == 0 && t->level == 0) || (lvl == 10 && t->level == 10);
	if (t->level == 10 || lvl == 10) {
		/* RAID-10 restripes keep the level; only near layouts have copies
		 * whose places do not depend on the member size. */
		if (t->level != lvl) {
			e = rk_fail(RK_E_NOTSUP, "level %s to %s: a RAID-10 reshape keeps level 10 (more members, another "
			            "chunk or near count)", rk_level_name(t->level), rk_level_name(lvl));
			goto out;
		}
		const uint32_t lays[2] = { t->layout, lay };
		for (int i = 0; i < 2; i++) {
			char nm[32];
			uint32_t far = (lays[i] >> 8) & 0xff, offs = (lays[i] >> 16) & 1;
			if (far != 1 || offs) {
				e = rk_fail(RK_E_NOTSUP, "RAID-10 layout %s%s: not reshaped by this build: only near layouts "
				            "(n2, n3, ...) are; far and offset copies sit where the member size puts them",
				            rk_layout_name(10, lays[i], nm, sizeof nm), i ? " (the new one)" : "");
				goto out;
			}
		}
	}
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
	/* The shift: all the room below the data when the new geometry packs
	 * the volume no denser (as many data members: the room per batch stays
	 * the same), else a few rows (the room grows as the reshape goes and
	 * the rest is kept for later). */
	uint64_t floor = data_floor(t);
	if (t->data_offset <= floor) {
		e = rk_fail(RK_E_NOTSUP, "no room below the data area (data offset %llu) to move the data into",
		            (unsigned long long)t->data_offset);
		goto out;
	}
	uint64_t room = (t->data_offset - floor) / RK_SB_ALIGN * RK_SB_ALIGN;
	uint64_t shift = room;
	if (geo_denser(&gn, &go) && 4 * ch < room)
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

/* Wipes both superblock areas of D (a member a revert dropped). */
static rk_err wipe_sb(rk_dev *d)
{
	uint64_t b = rk_sb_backup_offset(rk_dev_size(d));
	rk_err e = zero_range(d, RK_SB_PRIMARY_OFF, RK_SB_AREA);
	if (!e && b)
		e = zero_range(d, b, RK_SB_AREA);
	if (!e && (e = rk_dev_flush(d)))
		e = rk_fail(e, "%s: flush: %s", rk_dev_path(d), rk_errmsg());
	return e;
}

/* Members an interrupted revert dropped but had not wiped (s->left). */
static rk_err wipe_left(struct set *s)
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
static rk_err settle_mixed(struct set *s)
{
	if (!s->mixed)
		return RK_OK;
	struct rk_sb *nt = malloc(sizeof *nt);
	if (!nt)
		return rk_fail(RK_E_NOMEM, "out of memory");
	memcpy(nt, s->t, sizeof *nt);
	rk_err e = commit(s, nt);
	free(nt);
	return e;
}

/* The end of a revert (reshape_pos 0: every volume byte is in the old
 * geometry): the old members get superblocks without the reshape block,
 * the added roles emptied and, where the reshape took the journal's upper
 * part, the journal its old size back; then the added members' superblock
 * areas are wiped.  Old members first: once they no longer list the added
 * ones, wiping those cannot leave an array pointing at a member without
 * metadata (and an interruption in between leaves them for wipe_left). */
static rk_err revert_finish(struct set *s, struct rk_resize_result *res)
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
	}
	e = commit(s, nt);
	free(nt);
	for (uint32_t i = 0; !e && i < nad; i++)
		e = wipe_sb(added[i]);
	if (!e)
		e = wipe_left(s);
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
static rk_err run_revert(struct set *s, const struct rk_resize_opts *o, struct rk_resize_result *res)
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
		if ((e = open_old(&vo, &go, s)) || (e = open_new(&vn, &gn, s)))
			goto out;
		if (!geo_reshapable(&go) || !geo_reshapable(&gn)) {
			e = rk_fail(RK_E_NOTSUP, "this reshape (level %s to %s) is not one this build reverts",
			            rk_level_name(go.level), rk_level_name(gn.level));
			goto out;
		}
		rk_vol_on_fail(vo, on_fail, &failed);
		rk_vol_on_fail(vn, on_fail, &failed);
		if (!(t->reshape_flags & RK_RESHAPE_REVERTING)) {
			memcpy(nt, t, sizeof *nt);
			nt->reshape_flags |= RK_RESHAPE_REVERTING;
			if ((e = commit(s, nt)))
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
			uint64_t q = revert_from(&go, &gn, shift, p, rows_max);
			if (q >= p) {
				e = rk_fail(RK_E_NOTSUP, "no room to move volume byte %llu back into the old geometry",
				            (unsigned long long)p - 1);
				goto out;
			}
			/* Whole old rows around [q, p): bytes below p from the new
			 * geometry, the rest from the old; full-stripe writes. */
			uint64_t a = old_row_start(&go, q), b = old_row_end(&go, p, oldvol);
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
			if ((e = commit(s, nt)))
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

rk_err rk_resize_continue(rk_dev *const *devs, uint32_t n, const struct rk_resize_opts *o,
                          struct rk_resize_result *res)
{
	struct rk_resize_result dummy;
	if (!res)
		res = &dummy;
	result_init(res);
	struct set s;
	rk_err e = load_resume(&s, devs, n);
	if (e)
		return e;
	res->old_volume = res->new_volume = s.t->volume_size;
	res->events = s.maxev;
	int was_mixed = s.mixed;
	if ((e = settle_mixed(&s)))   /* every member at the freshest checkpoint first */
		goto out;
	res->events = s.maxev;
	if ((s.t->feat_incompat & RK_FEAT_INCOMPAT_RESHAPE) && (s.t->reshape_flags & RK_RESHAPE_REVERTING)) {
		uint64_t from = s.t->reshape_pos;
		uint32_t newn = s.t->reshape_new.nroles;
		if ((e = run_revert(&s, o, res)))
			goto out;
		snprintf(res->did, sizeof res->did, "the reshape was being reverted: revert finished from volume byte "
		         "%llu: level %s on %u members again (%u -> %u), volume %llu bytes", (unsigned long long)from,
		         rk_level_name(s.t->level), s.t->nroles, newn, s.t->nroles, (unsigned long long)s.t->volume_size);
	} else if (s.t->feat_incompat & RK_FEAT_INCOMPAT_RESHAPE) {
		uint64_t from = s.t->reshape_pos;
		if ((e = run_reshape(&s, o, res)))
			goto out;
		snprintf(res->did, sizeof res->did, "reshape finished from volume byte %llu: level %s, %u members, "
		         "volume %llu bytes", (unsigned long long)from, rk_level_name(s.t->level), s.t->nroles,
		         (unsigned long long)s.t->volume_size);
	} else if (s.nleft) {
		if ((e = wipe_left(&s)))
			goto out;
		snprintf(res->did, sizeof res->did, "an interrupted revert completed: %u dropped member%s wiped "
		         "(events %llu)", s.nleft, s.nleft == 1 ? "" : "s", (unsigned long long)s.maxev);
	} else if (was_mixed) {
		snprintf(res->did, sizeof res->did, "an interrupted superblock update completed (events %llu)",
		         (unsigned long long)s.maxev);
	} else {
		snprintf(res->did, sizeof res->did, "nothing to continue: no reshape in progress");
	}
	res->missing = count_missing(&s);
out:
	set_free(&s);
	return e;
}

rk_err rk_resize_revert(rk_dev *const *devs, uint32_t n, const struct rk_resize_opts *o,
                        struct rk_resize_result *res)
{
	struct rk_resize_result dummy;
	if (!res)
		res = &dummy;
	result_init(res);
	struct set s;
	rk_err e = load_resume(&s, devs, n);
	if (e)
		return e;
	struct rk_sb *t = s.t;
	res->old_volume = res->new_volume = t->volume_size;
	if (!(t->feat_incompat & RK_FEAT_INCOMPAT_RESHAPE)) {
		if (s.nleft) {
			/* A revert interrupted after its last superblock update. */
			if (!(e = settle_mixed(&s)) && !(e = wipe_left(&s))) {
				res->events = s.maxev;
				snprintf(res->did, sizeof res->did, "reverted to level %s on %u members (%u dropped member%s "
				         "wiped)", rk_level_name(s.t->level), s.t->nroles, s.nleft, s.nleft == 1 ? "" : "s");
			}
			goto out;
		}
		e = rk_fail(RK_E_INVAL, "no reshape in progress: nothing to revert");
		goto out;
	}
	if ((e = settle_mixed(&s)))
		goto out;
	t = s.t;
	uint64_t from = t->reshape_pos;
	uint32_t oldn = t->nroles, newn = t->reshape_new.nroles;
	if ((e = run_revert(&s, o, res)))
		goto out;
	if (from)
		snprintf(res->did, sizeof res->did, "reverted from volume byte %llu: level %s on %u members again "
		         "(%u -> %u), volume %llu bytes", (unsigned long long)from, rk_level_name(s.t->level), oldn, newn,
		         oldn, (unsigned long long)s.t->volume_size);
	else
		snprintf(res->did, sizeof res->did, "reverted to level %s on %u members", rk_level_name(s.t->level), oldn);
	res->missing = count_missing(&s);
out:
	set_free(&s);
	return e;
}

rk_err rk_resize_read(rk_dev *const *devs, uint32_t n, void *buf, uint64_t len, uint64_t off, uint64_t *size)
{
	struct set s;
	rk_err e = set_load(&s, devs, n, 0, 0);
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
