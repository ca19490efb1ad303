/* array.c: an assembled array as a volume, and its superblock bookkeeping
 * while open (the write protocol described in rk_array.h). */
#include "rk_array.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rk_le.h"
#include "rk_sb.h"

#define DOWN_NO      0
#define DOWN_MISSING 1   /* absent at open */
#define DOWN_FAILED  2   /* failed during I/O since open */

struct rk_array {
	unsigned flags;
	int own_devs;            /* devs opened here (closed by rk_array_close) */
	uint32_t nroles;
	struct rk_geom g;
	rk_vol *vol;
	rk_dev **devs;           /* nroles; NULL = missing */
	struct rk_sb **sbs;      /* each live member's own superblock (owned copies) */
	struct rk_sb *tmpl;      /* array-wide fields as last written (owned copy) */
	uint64_t *doff;
	uint8_t *down;
	char (*why)[256];
	uint64_t size;
	int dirty;               /* step 1 done, step 3 owed */
	int pending;             /* failures not yet in the superblocks */
	int unclean;
	uint32_t nfailed;
	pthread_mutex_t mu;      /* guards down/why/pending/nfailed (callback threads) */
};

static void array_free(rk_array *a)
{
	if (!a)
		return;
	rk_vol_close(a->vol);
	for (uint32_t r = 0; r < a->nroles; r++) {
		if (a->own_devs && a->devs)
			rk_dev_close(a->devs[r]);
		if (a->sbs)
			free(a->sbs[r]);
	}
	free(a->devs);
	free(a->sbs);
	free(a->tmpl);
	free(a->doff);
	free(a->down);
	free(a->why);
	pthread_mutex_destroy(&a->mu);
	free(a);
}

static rk_array *array_alloc(uint32_t nroles, unsigned flags)
{
	rk_array *a = calloc(1, sizeof *a);
	if (!a)
		return NULL;
	pthread_mutex_init(&a->mu, NULL);
	a->nroles = nroles;
	a->flags = flags;
	a->devs = calloc(nroles, sizeof *a->devs);
	a->sbs = calloc(nroles, sizeof *a->sbs);
	a->doff = calloc(nroles, sizeof *a->doff);
	a->down = calloc(nroles, sizeof *a->down);
	a->why = calloc(nroles, sizeof *a->why);
	a->tmpl = malloc(sizeof *a->tmpl);
	if (!a->devs || !a->sbs || !a->doff || !a->down || !a->why || !a->tmpl) {
		array_free(a);
		return NULL;
	}
	return a;
}

/* The engine reports a member failing; record it, the superblocks follow
 * when the volume call returns (array_settle). */
static void on_member_fail(void *ctx, uint32_t role, rk_err err)
{
	rk_array *a = ctx;
	pthread_mutex_lock(&a->mu);
	if (role < a->nroles && a->down[role] == DOWN_NO) {
		a->down[role] = DOWN_FAILED;
		const char *msg = rk_lasterr() == err ? rk_errmsg() : rk_strerror(err);
		snprintf(a->why[role], sizeof a->why[role], "%s", msg);
		a->nfailed++;
		a->pending = 1;
	}
	pthread_mutex_unlock(&a->mu);
}

/* The one place the superblocks of an open array are rewritten.  Writes a
 * new generation (events+1) with array_state STATE to every live member:
 * roles absent or failed are FAULTY in the role table (EMPTY roles stay
 * EMPTY).  Callers order it: before the first data write (ACTIVE), after a
 * member failure (current state), and after the data flush (CLEAN).  A member
 * whose superblock cannot be written is failed too, and the generation is
 * written again to the rest, so every survivor names every failure. */
static rk_err array_commit(rk_array *a, uint32_t state)
{
	struct rk_sb *nsb = malloc(sizeof *nsb);
	if (!nsb)
		return rk_fail(RK_E_NOMEM, "array: out of memory writing superblocks");
	rk_err first = RK_OK;
	for (int round = 0; round < 4; round++) {
		pthread_mutex_lock(&a->mu);
		a->pending = 0;
		uint8_t *down = a->down;
		pthread_mutex_unlock(&a->mu);

		uint64_t ev;
		if (rk_add_ovf(a->tmpl->events, 1, &ev)) {
			free(nsb);
			return rk_fail(RK_E_RANGE, "array: event counter overflow");
		}
		for (uint32_t r = 0; r < a->nroles; r++) {
			uint32_t st = a->tmpl->roles[r].state;
			if (down[r] != DOWN_NO && (st == RK_ROLE_ACTIVE || st == RK_ROLE_REBUILDING))
				a->tmpl->roles[r].state = RK_ROLE_FAULTY;
		}
		a->tmpl->events = ev;
		a->tmpl->array_state = state;
		a->tmpl->utime = (uint64_t)time(NULL);

		int newfail = 0, live = 0;
		for (uint32_t r = 0; r < a->nroles; r++) {
			if (down[r] != DOWN_NO || !a->devs[r])
				continue;
			const struct rk_sb *own = a->sbs[r];
			memcpy(nsb, a->tmpl, sizeof *nsb);
			memcpy(nsb->member_uuid, own->member_uuid, sizeof nsb->member_uuid);
			nsb->this_role = r;
			nsb->sb_offset = own->sb_offset;
			nsb->dev_size = own->dev_size;
			nsb->data_offset = own->data_offset;
			nsb->journal_offset = own->journal_offset;
			nsb->journal_size = own->journal_size;
			rk_err e = rk_sb_write(a->devs[r], nsb);
			if (e) {
				pthread_mutex_lock(&a->mu);
				a->down[r] = DOWN_FAILED;
				snprintf(a->why[r], sizeof a->why[r], "superblock write failed: %s", rk_errmsg());
				a->nfailed++;
				pthread_mutex_unlock(&a->mu);
				if (!first)
					first = rk_fail(e, "%s: writing superblock: %s", rk_dev_path(a->devs[r]), a->why[r]);
				newfail = 1;
				continue;
			}
			memcpy(a->sbs[r], nsb, sizeof *nsb);
			live++;
		}
		if (!live) {
			free(nsb);
			return first ? first : rk_fail(RK_E_IO, "array: no member left to write superblocks to");
		}
		pthread_mutex_lock(&a->mu);
		int again = newfail || a->pending;
		pthread_mutex_unlock(&a->mu);
		if (!again) {
			free(nsb);
			/* The survivors agree on a generation that records every
			 * failure: the array carries on (degraded) where it can. */
			return RK_OK;
		}
	}
	free(nsb);
	return first ? first : rk_fail(RK_E_IO, "array: members keep failing while superblocks are written");
}

/* After a volume call: records failures met during it (read-write only). */
static rk_err array_settle(rk_array *a)
{
	pthread_mutex_lock(&a->mu);
	int p = a->pending;
	pthread_mutex_unlock(&a->mu);
	if (!p || !(a->flags & RK_ARRAY_RDWR))
		return RK_OK;
	return array_commit(a, a->dirty ? RK_ARRAY_ACTIVE : RK_ARRAY_CLEAN);
}

/* Geometry, engine and the too-few message, shared by both open paths. */
static rk_err array_start(rk_array *a, const struct rk_sb *tmpl)
{
	memcpy(a->tmpl, tmpl, sizeof *a->tmpl);
	if (tmpl->feat_incompat & RK_FEAT_INCOMPAT_RESHAPE)
		return rk_fail(RK_E_NOTSUP, "array: a reshape is in progress: finish it with raid-resize --continue");
	if ((a->flags & RK_ARRAY_RDWR) && (tmpl->feat_ro_compat & ~RK_FEAT_RO_COMPAT_SUPP))
		return rk_fail(RK_E_FEATURE, "array: unknown read-only-compatible features 0x%llx: refusing to write",
		               (unsigned long long)(tmpl->feat_ro_compat & ~RK_FEAT_RO_COMPAT_SUPP));
	a->unclean = tmpl->array_state == RK_ARRAY_ACTIVE;
	rk_err e = rk_geom_init(&a->g, tmpl->level, tmpl->layout, tmpl->chunk, tmpl->nroles, tmpl->data_size);
	if (e)
		return rk_fail(RK_E_CORRUPT, "array: geometry in the superblock is not usable: %s", rk_errmsg());
	if (tmpl->volume_size > a->g.volume_size)
		return rk_fail(RK_E_CORRUPT, "array: volume_size %llu exceeds the %llu bytes the geometry holds",
		               (unsigned long long)tmpl->volume_size, (unsigned long long)a->g.volume_size);
	a->size = tmpl->volume_size;
	for (uint32_t r = 0; r < a->nroles; r++) {
		if (!a->devs[r]) {
			a->down[r] = DOWN_MISSING;
			continue;
		}
		uint64_t end;
		if (rk_add_ovf(a->doff[r], a->g.member_size, &end) || end > rk_dev_size(a->devs[r]))
			return rk_fail(RK_E_SHORT, "%s: member is %llu bytes, the data area ends at %llu",
			               rk_dev_path(a->devs[r]), (unsigned long long)rk_dev_size(a->devs[r]),
			               (unsigned long long)a->doff[r] + a->g.member_size);
		if ((a->flags & RK_ARRAY_RDWR) && !rk_dev_writable(a->devs[r]))
			return rk_fail(RK_E_READONLY, "%s: opened read-only", rk_dev_path(a->devs[r]));
	}
	e = rk_vol_open(&a->vol, &a->g, a->devs, a->doff);
	if (e == RK_E_TOOFEW) {
		char list[512] = "";
		size_t n = 0;
		uint32_t nmiss = 0;
		for (uint32_t r = 0; r < a->nroles; r++) {
			if (a->devs[r])
				continue;
			nmiss++;
			if (n < sizeof list - 16)
				n += (size_t)snprintf(list + n, sizeof list - n, "%s%u", n ? ", " : "", r);
		}
		if (n >= sizeof list - 16)
			snprintf(list + sizeof list - 16, 16, ", ...");
		return rk_fail(RK_E_TOOFEW, "too few members: %u of %u roles missing (role%s %s); RAID-%s tolerates %u",
		               nmiss, a->nroles, nmiss == 1 ? "" : "s", list, rk_level_name(a->g.level),
		               rk_geom_redundancy(&a->g));
	}
	if (e)
		return e;
	rk_vol_on_fail(a->vol, on_member_fail, a);
	return RK_OK;
}

rk_err rk_array_open(rk_array **out, const struct rk_array_info *info, unsigned flags)
{
	*out = NULL;
	if (!info || !info->sb || !info->roles || info->nroles == 0 || info->nroles > RK_SB_MAX_ROLES ||
	    info->nroles != info->sb->nroles)
		return rk_fail(RK_E_INVAL, "array: incomplete discovery result");
	if (info->state == RK_ASTATE_CONFLICT)
		return rk_fail(RK_E_CONFLICT, "array: conflicting metadata: %s", info->why);
	flags &= RK_ARRAY_RDWR;
	rk_array *a = array_alloc(info->nroles, flags);
	if (!a)
		return rk_fail(RK_E_NOMEM, "array: out of memory");
	a->own_devs = 1;
	rk_err e = RK_OK;
	for (uint32_t r = 0; r < info->nroles && !e; r++) {
		const struct rk_member *m = &info->roles[r];
		if (m->cls != RK_MEMBER_ACTIVE || !m->path || !m->sb)
			continue;
		if ((e = rk_dev_open(&a->devs[r], m->path, flags)))
			break;
		/* Discovery ran earlier: make sure the member is still the one it saw. */
		struct rk_sb_read rd;
		memset(&rd, 0, sizeof rd);
		e = rk_sb_read(a->devs[r], &rd);
		if (e) {
			e = rk_fail(RK_E_CONFLICT, "%s: superblock no longer readable: %s", m->path, rk_errmsg());
		} else {
			const struct rk_sb *now = rd.copy[rd.chosen].sb;
			if (memcmp(now->array_uuid, info->uuid, 16) || memcmp(now->member_uuid, m->sb->member_uuid, 16) ||
			    now->events != m->sb->events || now->this_role != r)
				e = rk_fail(RK_E_CONFLICT, "%s: changed since it was examined (events %llu, was %llu)",
				            m->path, (unsigned long long)now->events, (unsigned long long)m->sb->events);
			else if (!(a->sbs[r] = malloc(sizeof *a->sbs[r])))
				e = rk_fail(RK_E_NOMEM, "array: out of memory");
			else
				memcpy(a->sbs[r], now, sizeof *now);
		}
		rk_sb_read_free(&rd);
		if (!e)
			a->doff[r] = a->sbs[r]->data_offset;
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
	rk_array *a = array_alloc(tmpl->nroles, flags & RK_ARRAY_RDWR);
	if (!a)
		return rk_fail(RK_E_NOMEM, "array: out of memory");
	rk_err e = RK_OK;
	for (uint32_t r = 0; r < tmpl->nroles && !e; r++) {
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
			a->doff[r] = sbs[r]->data_offset;
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

rk_vol *rk_array_vol(rk_array *a) { return a->vol; }
uint64_t rk_array_size(const rk_array *a) { return a->size; }
uint64_t rk_array_events(const rk_array *a) { return a->tmpl->events; }
int rk_array_was_unclean(const rk_array *a) { return a->unclean; }

int rk_array_role_down(const rk_array *a, uint32_t role)
{
	if (role >= a->nroles)
		return 1;
	rk_array *m = (rk_array *)(uintptr_t)a;
	pthread_mutex_lock(&m->mu);
	int d = a->down[role] != DOWN_NO;
	pthread_mutex_unlock(&m->mu);
	return d;
}

uint32_t rk_array_nfailed(const rk_array *a)
{
	rk_array *m = (rk_array *)(uintptr_t)a;
	pthread_mutex_lock(&m->mu);
	uint32_t n = a->nfailed;
	pthread_mutex_unlock(&m->mu);
	return n;
}

const char *rk_array_fail_reason(const rk_array *a, uint32_t role)
{
	if (role >= a->nroles || a->down[role] != DOWN_FAILED)
		return "";
	return a->why[role];
}

static rk_err check_range(const rk_array *a, size_t len, uint64_t off)
{
	uint64_t end;
	if (rk_add_ovf(off, (uint64_t)len, &end) || end > a->size)
		return rk_fail(RK_E_RANGE, "array: bytes [%llu, +%zu) are outside the %llu-byte volume",
		               (unsigned long long)off, len, (unsigned long long)a->size);
	return RK_OK;
}

rk_err rk_array_read(rk_array *a, void *buf, size_t len, uint64_t off)
{
	rk_err e = check_range(a, len, off);
	if (e || !len)
		return e;
	e = rk_vol_read(a->vol, buf, len, off);
	rk_err s = array_settle(a);
	return e ? e : s;
}

rk_err rk_array_begin_write(rk_array *a)
{
	if (!(a->flags & RK_ARRAY_RDWR))
		return rk_fail(RK_E_READONLY, "array: opened read-only");
	if (a->dirty)
		return RK_OK;
	rk_err e = array_commit(a, RK_ARRAY_ACTIVE);
	if (e)
		return e;
	a->dirty = 1;
	return RK_OK;
}

rk_err rk_array_write(rk_array *a, const void *buf, size_t len, uint64_t off)
{
	rk_err e = check_range(a, len, off);
	if (e)
		return e;
	if ((e = rk_array_begin_write(a)) || !len)
		return e;
	e = rk_vol_write(a->vol, buf, len, off);
	rk_err s = array_settle(a);
	return e ? e : s;
}

rk_err rk_array_flush(rk_array *a)
{
	if (!(a->flags & RK_ARRAY_RDWR))
		return RK_OK;
	rk_err e = rk_vol_flush(a->vol);
	rk_err s = array_settle(a);
	return e ? e : s;
}

rk_err rk_array_close(rk_array *a)
{
	if (!a)
		return RK_OK;
	rk_err e = RK_OK;
	if (a->dirty) {
		/* Data first: CLEAN may only be written once the data is durable;
		 * a failed flush leaves the array ACTIVE so the next assembly
		 * knows parity may lag. */
		e = rk_array_flush(a);
		if (!e)
			e = array_commit(a, RK_ARRAY_CLEAN);
	} else {
		e = array_settle(a);
	}
	array_free(a);
	return e;
}
