/* array.c: an assembled array as a volume, and its superblock bookkeeping
 * while open (the write protocol described in rk_array.h). */
#include "rk_array.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rk_journal.h"
#include "rk_le.h"
#include "rk_resize.h"
#include "rk_sb.h"

/* Volume bytes one write-intent record covers: the most a crash can leave
 * to resync (and, read-only, to hold in the overlay).  A record covers
 * this much ahead of the write, so a sequential writer needs one record
 * (and its flushes) per window, not per request. */
#define JNL_INTENT_PIECE (64u << 20)

/* One geometry's engine and the volume bytes it serves: the whole volume
 * normally; mid-reshape the new geometry's below the checkpoint and the old
 * one's from it (spec/journal.md "Mid-reshape"). */
struct part {
	struct rk_array *a;
	rk_vol *vol;
	const struct rk_geom *g;
	uint64_t lo, hi;         /* volume bytes [lo, hi) */
	uint64_t base;           /* mid-reshape: this data area's start, from the new data offset */
};

#define DOWN_NO      0
#define DOWN_MISSING 1   /* absent at open */
#define DOWN_FAILED  2   /* failed during I/O since open */

struct rk_array {
	unsigned flags;
	int own_devs;            /* devs opened here (closed by rk_array_close) */
	uint32_t nroles;
	struct rk_geom g;
	rk_vol *vol;             /* NULL mid-reshape (rs serves reads) */
	rk_resize_reader *rs;    /* mid-reshape: the dual-geometry reader (its engines are the parts) */
	struct part part[2];     /* the engines writes go through, by volume range */
	uint32_t nparts;
	uint64_t rs_pos, rs_base, rs_old;   /* mid-reshape: checkpoint, new and old data offsets */
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
	int sb_disagree;         /* a member one event behind, or its two copies differ */
	uint32_t nfailed;
	uint64_t nrepaired, repaired_bytes;   /* read errors rewritten from redundancy */
	/* write journal (spec/journal.md) */
	int jon;                 /* records are written before in-place writes */
	int joff_user;           /* rk_array_set_journal(a, 0): benchmarks only */
	int jpending;            /* in-place writes since the last record, not yet flushed */
	uint64_t jseq;
	int iopen;               /* the slots hold an INTENT record for [ilo, ihi) */
	uint64_t ilo, ihi;
	int jfull;               /* the engine writes full stripes under the open intent */
	uint64_t jmax;           /* payload bytes one record may carry per member */
	uint8_t *jbuf;
	struct rk_jrec *jh;
	rk_dev **vdevs;          /* read-only replay: overlays the volume runs on (owned) */
	int replayed;            /* RK_ARRAY_REPLAY_* */
	char replay_msg[256];
	rk_fault_plan *tplan;    /* RAIDKIT_TEST_FAULT (end-to-end tests only) */
	int tcrash;
	pthread_mutex_t mu;      /* guards down/why/pending/nfailed (callback threads) */
	pthread_mutex_t wmu;     /* one writer at a time: the journal state (slot, window) */
};

static void array_free(rk_array *a)
{
	if (!a)
		return;
	rk_vol_close(a->vol);
	rk_resize_reader_close(a->rs);
	if (a->tplan && a->tcrash)
		rk_fault_crash(a->tplan);   /* the "power" comes back when the tool is done */
	for (uint32_t r = 0; r < a->nroles; r++) {
		if (a->vdevs)
			rk_dev_close(a->vdevs[r]);
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
	rk_fault_plan_free(a->tplan);
	free(a->vdevs);
	free(a->jbuf);
	free(a->jh);
	pthread_mutex_destroy(&a->mu);
	pthread_mutex_destroy(&a->wmu);
	free(a);
}

static rk_array *array_alloc(uint32_t nroles, unsigned flags)
{
	rk_array *a = calloc(1, sizeof *a);
	if (!a)
		return NULL;
	pthread_mutex_init(&a->mu, NULL);
	pthread_mutex_init(&a->wmu, NULL);
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
	int first = 0;
	char why[256];
	pthread_mutex_lock(&a->mu);
	if (role < a->nroles && a->down[role] == DOWN_NO) {
		a->down[role] = DOWN_FAILED;
		const char *msg = rk_lasterr() == err ? rk_errmsg() : rk_strerror(err);
		snprintf(a->why[role], sizeof a->why[role], "%s", msg);
		snprintf(why, sizeof why, "%s", a->why[role]);
		a->nfailed++;
		a->pending = 1;
		first = 1;
	}
	pthread_mutex_unlock(&a->mu);
	/* mid-reshape both engines run on the member: the other one stops
	 * using it too (its callback finds the role down already) */
	for (uint32_t i = 0; first && a->nparts > 1 && i < a->nparts; i++)
		if (role < a->part[i].g->nroles && !rk_vol_role_down(a->part[i].vol, role))
			rk_vol_fail_role(a->part[i].vol, role, err, why);
}

/* Fails ROLE (MSG says why) in every engine that has it; a role no engine
 * has (a member a reshape added, before any byte moved) is recorded here. */
static void fail_member(rk_array *a, uint32_t r, rk_err e, const char *msg)
{
	int told = 0;
	for (uint32_t i = 0; i < a->nparts; i++)
		if (r < a->part[i].g->nroles) {
			rk_vol_fail_role(a->part[i].vol, r, e, msg);
			told = 1;
		}
	if (told || r >= a->nroles)
		return;
	pthread_mutex_lock(&a->mu);
	if (a->down[r] == DOWN_NO) {
		a->down[r] = DOWN_FAILED;
		snprintf(a->why[r], sizeof a->why[r], "%s", msg);
		a->nfailed++;
		a->pending = 1;
	}
	pthread_mutex_unlock(&a->mu);
}

/* The engine repaired a read error (rewrote the range from redundancy). */
static void on_member_repair(void *ctx, uint32_t role, uint64_t off, uint64_t len)
{
	rk_array *a = ctx;
	(void)role;
	(void)off;
	pthread_mutex_lock(&a->mu);
	a->nrepaired++;
	a->repaired_bytes += len;
	pthread_mutex_unlock(&a->mu);
}

/* Whether geometry G's volume stays readable with the roles DOWN marks out. */
static int geom_readable(const struct rk_geom *g, const uint8_t *down)
{
	uint32_t nd = 0;
	for (uint32_t r = 0; r < g->nroles; r++)
		nd += down[r] != DOWN_NO;
	switch (g->level) {
	case 1:
		return nd < g->nroles;
	case 4: case 5: case 6:
		return nd <= g->nparity;
	case 10: {
		struct rk_loc locs[16];
		uint64_t lim = g->nstripes < g->nroles ? g->nstripes : g->nroles;
		for (uint64_t c = 0; c < lim; c++) {
			uint32_t k = rk_geom_copies(g, c * g->chunk, locs, 16), live = 0;
			for (uint32_t i = 0; i < k; i++)
				live += down[locs[i].role] == DOWN_NO;
			if (!live)
				return 0;
		}
		return 1;
	}
	default:
		return nd == 0;
	}
}

/* Whether every volume byte stays readable with the roles DOWN marks out
 * (mid-reshape: through the geometry that serves it). */
static int array_readable(const rk_array *a, const uint8_t *down)
{
	if (!a->nparts)
		return geom_readable(&a->g, down);
	for (uint32_t i = 0; i < a->nparts; i++)
		if (!geom_readable(a->part[i].g, down))
			return 0;
	return 1;
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
		/* A failure that leaves too few members is not recorded: marking
		 * the member faulty would turn a pulled cable into an array that no
		 * longer assembles.  Nothing is written; the member stays active in
		 * every superblock, so plugging it back brings the array back as
		 * it was (the journal replays the write in flight). */
		if (!array_readable(a, down)) {
			free(nsb);
			char list[256] = "";
			size_t n = 0;
			for (uint32_t r = 0; r < a->nroles && n < sizeof list - 16; r++)
				if (down[r] == DOWN_FAILED)
					n += (size_t)snprintf(list + n, sizeof list - n, "%s%u", n ? ", " : "", r);
			return rk_fail(RK_E_TOOFEW, "array: role%s %s failed and too few members remain (RAID-%s); "
			               "stopped without recording it: reconnect the member%s and assemble again",
			               strchr(list, ',') ? "s" : "", list, rk_level_name(a->g.level),
			               strchr(list, ',') ? "s" : "");
		}

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
			if (e && e != RK_E_IO) {
				/* not the member: the process is going down (or misused) */
				e = rk_fail(e, "%s: writing superblock: %s", rk_dev_path(a->devs[r]), rk_errmsg());
				free(nsb);
				return e;
			}
			if (e) {
				char msg[200];
				snprintf(msg, sizeof msg, "superblock write failed: %s", rk_errmsg());
				fail_member(a, r, e, msg);   /* the engines stop using it too */
				if (!first)
					first = rk_fail(e, "%s: writing superblock: %s", rk_dev_path(a->devs[r]), a->why[r]);
				newfail = 1;
				continue;
			}
			memcpy(a->sbs[r], nsb, sizeof *nsb);
			live++;
		}
		if (!live && array_readable(a, down)) {
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

/* ---- write journal (spec/journal.md) ---- */

static int geom_journaled(const struct rk_geom *g)
{
	int l = g->level;
	return (l == 1 || l == 10 || l == 4 || l == 5 || l == 6) && g->nroles >= 2;
}

/* Whether any geometry the array's volume is in has redundancy to journal
 * (mid-reshape RAID-0 -> 5: the new part only). */
static int journal_level(const rk_array *a)
{
	if (!a->nparts)
		return geom_journaled(&a->g);
	for (uint32_t i = 0; i < a->nparts; i++)
		if (geom_journaled(a->part[i].g))
			return 1;
	return 0;
}

static int part_parity(const struct part *p)
{
	return p->g->level == 4 || p->g->level == 5 || p->g->level == 6;
}

static int jlive(rk_array *a, uint32_t r)
{
	return a->devs[r] && !rk_array_role_down(a, r);
}

/* Whether a role of P's geometry is down (it writes degraded). */
static int any_down(rk_array *a, const struct part *p)
{
	for (uint32_t r = 0; r < p->g->nroles; r++)
		if (!jlive(a, r))
			return 1;
	return 0;
}

/* A member failing journal I/O (a pulled cable): the engines stop using it
 * and the fail callback records it like any other member failure. */
static void jfail(rk_array *a, uint32_t r, rk_err e)
{
	char msg[200];
	snprintf(msg, sizeof msg, "%s", rk_errmsg());
	fail_member(a, r, e, msg);
}

/* Before a slot is reused, the in-place writes of its last record must be
 * durable: flush every live member. */
static rk_err jflush_pending(rk_array *a)
{
	if (!a->jpending)
		return RK_OK;
	for (uint32_t r = 0; r < a->nroles; r++) {
		if (!jlive(a, r))
			continue;
		rk_err e = rk_dev_flush(a->devs[r]);
		if (e == RK_E_IO)
			jfail(a, r, e);
		else if (e)
			return e;
	}
	a->jpending = 0;
	return RK_OK;
}

/* Encodes a->jh for ROLE (payload already in a->jbuf) and writes it to the
 * role's slot.  A member failing with RK_E_IO is failed, not an error. */
static rk_err jput(rk_array *a, uint32_t r)
{
	a->jh->role = r;
	rk_err e = rk_jrec_encode(a->jh, a->jbuf);
	if (e)
		return e;
	e = rk_dev_pwrite(a->devs[r], a->jbuf, (size_t)(RK_JNL_HDR + a->jh->payload), a->sbs[r]->journal_offset);
	if (e == RK_E_IO) {
		jfail(a, r, e);
		return RK_OK;
	}
	return e;
}

/* Makes the records just written durable, then records in the superblocks
 * any member that failed meanwhile, before a byte goes in place. */
static rk_err jsync(rk_array *a)
{
	for (uint32_t r = 0; r < a->nroles; r++) {
		if (!rk_jrec_part(a->jh, r) || !jlive(a, r))
			continue;
		rk_err e = rk_dev_flush(a->devs[r]);
		if (e == RK_E_IO)
			jfail(a, r, e);
		else if (e)
			return e;
	}
	return array_settle(a);
}

/* A new record header of KIND (DATA or INTENT; mid-reshape their _RS
 * forms, tagged with the reshape state). */
static void jhead(rk_array *a, uint32_t kind)
{
	memset(a->jh, 0, sizeof *a->jh);
	a->jh->kind = kind;
	if (a->rs) {
		a->jh->kind = kind == RK_JREC_DATA ? RK_JREC_DATA_RS : RK_JREC_INTENT_RS;
		a->jh->rs_pos = a->rs_pos;
		a->jh->rs_base = a->rs_base;
		a->jh->rs_old = a->rs_old;
	}
	a->jh->nroles = a->nroles;
	a->jh->seq = ++a->jseq;
	memcpy(a->jh->array_uuid, a->tmpl->array_uuid, 16);
}

/* The engine's hook (parity levels): one DATA record per member holding the
 * new bytes of every chunk it is about to write.  CTX is the part whose
 * engine writes; mid-reshape its offsets are moved to the new data offset's
 * base (DATA_RS). */
static rk_err jhook(void *ctx, const struct rk_vol_wseg *segs, uint32_t n)
{
	struct part *pt = ctx;
	rk_array *a = pt->a;
	/* full stripes of a healthy array under an intent record: a crash is
	 * repaired by resyncing the range from data (spec/journal.md) */
	if (a->jfull && a->iopen && !any_down(a, pt))
		return RK_OK;
	rk_err e = jflush_pending(a);
	if (e)
		return e;
	a->iopen = 0;   /* the slot is about to hold this record instead */
	jhead(a, RK_JREC_DATA);
	struct rk_jrec *h = a->jh;
	for (uint32_t i = 0; i < n; i++)
		if (segs[i].role < a->nroles && jlive(a, segs[i].role))
			rk_jrec_set_part(h, segs[i].role);
	for (uint32_t r = 0; r < a->nroles; r++) {
		if (!rk_jrec_part(h, r) || !jlive(a, r))
			continue;
		h->nsegs = 0;
		h->payload = 0;
		for (uint32_t i = 0; i < n; i++) {
			if (segs[i].role != r)
				continue;
			if (h->nsegs == RK_JNL_MAX_SEGS || segs[i].len > a->jmax - h->payload)
				return rk_fail(RK_E_INVAL, "journal: a commit group exceeds one record (%u segments, %llu bytes)",
				               h->nsegs, (unsigned long long)(h->payload + segs[i].len));
			memcpy(a->jbuf + RK_JNL_HDR + h->payload, segs[i].buf, segs[i].len);
			h->seg[h->nsegs++] = (struct rk_jseg){ .off = pt->base + segs[i].off, .len = segs[i].len };
			h->payload += segs[i].len;
		}
		if ((e = jput(a, r)))
			return e;
	}
	if ((e = jsync(a)))
		return e;
	a->jpending = 1;
	return RK_OK;
}

/* Mirrors: a write-intent record (the volume range) on every live member. */
static rk_err jintent(rk_array *a, uint64_t off, uint64_t len)
{
	rk_err e = jflush_pending(a);
	if (e)
		return e;
	a->iopen = 0;
	jhead(a, RK_JREC_INTENT);
	for (uint32_t r = 0; r < a->nroles; r++)
		if (jlive(a, r))
			rk_jrec_set_part(a->jh, r);
	for (uint32_t r = 0; r < a->nroles; r++) {
		if (!jlive(a, r))
			continue;
		a->jh->nsegs = 1;
		a->jh->seg[0] = (struct rk_jseg){ .off = off, .len = len };
		a->jh->payload = 0;
		if ((e = jput(a, r)))
			return e;
	}
	if ((e = jsync(a)))
		return e;
	a->iopen = 1;
	a->ilo = off;
	a->ihi = off + len;
	return RK_OK;
}

/* Makes sure an intent record covers [off, off+len) (at most
 * JNL_INTENT_PIECE bytes), writing one for a window from OFF when not;
 * STEP rounds the window (stripes).  The window stays inside P's range:
 * mid-reshape it names bytes of one geometry. */
static rk_err jcover(rk_array *a, const struct part *p, uint64_t off, uint64_t len, uint64_t step)
{
	if (a->iopen && off >= a->ilo && off + len <= a->ihi)
		return RK_OK;
	uint64_t hi = off + (len > JNL_INTENT_PIECE ? len : JNL_INTENT_PIECE);
	if (hi > p->hi)
		hi = p->hi;
	if (step > 1 && hi % step && hi < p->hi)
		hi -= hi % step;
	if (hi < off + len)
		hi = off + len;
	return jintent(a, off, hi - off);
}

/* Where a journal area below the data must end on a member with
 * superblock SB: its data offset; mid-reshape the new geometry's, which is
 * lower (a reshape keeps the journal below it). */
static uint64_t jtop(const rk_array *a, const struct rk_sb *sb)
{
	return a->rs && a->rs_base < sb->data_offset ? a->rs_base : sb->data_offset;
}

/* At the first write of an open: sets the journal up (adding it to an array
 * made without one when the metadata area has room) and empties every
 * member's slot, durably, before the superblocks say ACTIVE: from then on
 * every valid record in a slot belongs to this write session. */
static rk_err journal_begin(rk_array *a)
{
	a->jon = 0;
	if (a->joff_user || !journal_level(a))
		return RK_OK;
	int have = (a->tmpl->feat_incompat & RK_FEAT_INCOMPAT_JOURNAL) != 0;
	uint64_t jmax = 4u << 20;   /* bounds the record buffer */
	for (uint32_t r = 0; r < a->nroles; r++) {
		if (!jlive(a, r))
			continue;
		const struct rk_sb *sb = a->sbs[r];
		uint64_t room = have ? sb->journal_size : (jtop(a, sb) >= RK_SB_PRIMARY_END
		                                           ? (jtop(a, sb) - RK_SB_PRIMARY_END) / 4096 * 4096 : 0);
		if (room < RK_JNL_MIN_SIZE)
			return RK_OK;   /* no room: unprotected (spec/journal.md) */
		if (room - RK_JNL_HDR < jmax)
			jmax = room - RK_JNL_HDR;
	}
	/* tests: a smaller record bound exercises grouping and column pieces */
	const char *tmax = getenv("RAIDKIT_TEST_JOURNAL_MAX");
	if (tmax && strtoull(tmax, NULL, 0) >= 512 && strtoull(tmax, NULL, 0) < jmax)
		jmax = strtoull(tmax, NULL, 0);
	if (!have) {
		for (uint32_t r = 0; r < a->nroles; r++) {
			if (!a->devs[r] || !a->sbs[r])
				continue;
			a->sbs[r]->journal_offset = RK_SB_PRIMARY_END;
			a->sbs[r]->journal_size = (jtop(a, a->sbs[r]) - RK_SB_PRIMARY_END) / 4096 * 4096;
		}
		a->tmpl->feat_incompat |= RK_FEAT_INCOMPAT_JOURNAL;
		a->tmpl->journal_offset = RK_SB_PRIMARY_END;
		a->tmpl->journal_size = (jtop(a, a->tmpl) - RK_SB_PRIMARY_END) / 4096 * 4096;
	}
	if (!a->jh && !(a->jh = malloc(sizeof *a->jh)))
		return rk_fail(RK_E_NOMEM, "array: out of memory");
	free(a->jbuf);
	if (!(a->jbuf = malloc((size_t)(RK_JNL_HDR + jmax))))
		return rk_fail(RK_E_NOMEM, "array: out of memory");
	memset(a->jbuf, 0, RK_JNL_HDR);
	for (uint32_t r = 0; r < a->nroles; r++) {
		if (!jlive(a, r))
			continue;
		rk_err e = rk_dev_pwrite(a->devs[r], a->jbuf, RK_JNL_HDR, a->sbs[r]->journal_offset);
		if (e == RK_E_IO)
			jfail(a, r, e);
		else if (e)
			return e;
	}
	for (uint32_t r = 0; r < a->nroles; r++) {
		if (!jlive(a, r))
			continue;
		rk_err e = rk_dev_flush(a->devs[r]);
		if (e == RK_E_IO)
			jfail(a, r, e);
		else if (e)
			return e;
	}
	a->jmax = jmax;
	a->jseq = 0;
	a->jpending = 0;
	a->jon = 1;
	return RK_OK;
}

/* The INTENT part of a replay: makes redundancy consistent over volume
 * bytes [x, y) of part P (the caller clipped them to P's range).  Parity
 * levels and mirrors resync whole stripes; mid-reshape a RAID-1 stripe
 * reaching below the checkpoint is copied from the checkpoint on only
 * (the member bytes below it belong to the new geometry), through the
 * engine: a read of one copy written to all. */
static rk_err resync_range(rk_array *a, const struct part *p, uint64_t x, uint64_t y)
{
	const struct rk_geom *g = p->g;
	if (!geom_journaled(g) || x >= y)
		return RK_OK;
	uint64_t sd = g->stripe_data;
	if (a->rs && g->level == 1 && x % sd) {
		uint64_t cut = x + (sd - x % sd) < y ? x + (sd - x % sd) : y;
		uint8_t *buf = malloc((size_t)(cut - x));
		if (!buf)
			return rk_fail(RK_E_NOMEM, "array: out of memory");
		rk_err e = rk_vol_read(p->vol, buf, (size_t)(cut - x), x);
		if (!e)
			e = rk_vol_write(p->vol, buf, (size_t)(cut - x), x);
		free(buf);
		if (e)
			return e;
		x = cut;
		if (x >= y)
			return RK_OK;
	}
	uint64_t s0 = x / sd, s1 = y / sd + (y % sd != 0);
	if (s1 > g->nstripes)
		s1 = g->nstripes;
	return s0 < s1 ? rk_vol_resync(p->vol, s0, s1 - s0, NULL, NULL) : RK_OK;
}

/* After an unclean stop (array_state ACTIVE): replays the last record.  It
 * is applied only when every live member it names holds it intact: if one
 * does not, the records were still being written when the writer stopped,
 * so nothing went in place for them (the previous record's writes were
 * flushed before its slot was reused).  DATA records put back the new
 * bytes of every chunk (the write hole closed: parity and data agree again,
 * whatever members are missing); INTENT records resync the mirrors over
 * their range.  Read-only opens replay into overlays (a->vdevs).
 * Mid-reshape only records of this reshape state count (kinds 3, 4 with
 * its tag): DATA_RS bytes go to the new data offset + their offset, INTENT_RS
 * ranges are resynced split at the checkpoint, each side through its own
 * geometry. */
static rk_err journal_recover(rk_array *a)
{
	if (!a->unclean || !(a->tmpl->feat_incompat & RK_FEAT_INCOMPAT_JOURNAL) || !journal_level(a))
		return RK_OK;
	struct rk_jrec *h = calloc(a->nroles, sizeof *h);
	uint8_t **rec = calloc(a->nroles, sizeof *rec);
	rk_err e = RK_OK;
	if (!h || !rec) {
		e = rk_fail(RK_E_NOMEM, "array: out of memory");
		goto out;
	}
	struct rk_jrec_ctx jc = { .member_size = a->g.member_size, .vol_size = a->size, .nroles = a->nroles,
	                          .array_uuid = a->tmpl->array_uuid };
	if (a->rs) {
		jc.reshaping = 1;
		jc.rs_pos = a->rs_pos;
		jc.rs_base = a->rs_base;
		jc.rs_old = a->rs_old;
		for (uint32_t i = 0; i < a->nparts; i++) {
			if (a->part[i].base)
				jc.rs_old_size = a->part[i].g->member_size;
			else
				jc.rs_new_size = a->part[i].g->member_size;
		}
	}
	uint64_t maxseq = 0;
	int found = 0;
	for (uint32_t r = 0; r < a->nroles; r++) {
		if (!jlive(a, r))
			continue;
		const struct rk_sb *sb = a->sbs[r];
		jc.jsize = sb->journal_size;
		jc.role = r;
		rk_err re = rk_jrec_read_ctx(a->devs[r], sb->journal_offset, &jc, &h[r], &rec[r]);
		if (re == RK_E_IO) {
			jfail(a, r, re);   /* cannot tell what it holds: leave it out */
			continue;
		}
		if (re == RK_E_NOMEM) {
			e = re;
			goto out;
		}
		if (re)
			continue;
		if (!found || h[r].seq > maxseq)
			maxseq = h[r].seq;
		found = 1;
	}
	if (!found) {
		snprintf(a->replay_msg, sizeof a->replay_msg, "journal: no record to replay");
		goto out;
	}
	int ok = 1;
	uint32_t kind = 0, first = a->nroles;
	for (uint32_t r = 0; r < a->nroles && ok; r++) {
		if (!rec[r] || h[r].seq != maxseq)
			continue;
		if (first == a->nroles) {
			first = r;
			kind = h[r].kind;
		} else if (h[r].kind != kind || memcmp(h[r].parts, h[first].parts, sizeof h[r].parts)) {
			ok = 0;
		}
		for (uint32_t p = 0; p < a->nroles && ok; p++)
			if (rk_jrec_part(&h[r], p) && jlive(a, p) && !(rec[p] && h[p].seq == maxseq))
				ok = 0;
	}
	if (!ok) {
		snprintf(a->replay_msg, sizeof a->replay_msg,
		         "journal: record %llu incomplete on the members: its write never started", (unsigned long long)maxseq);
		goto out;
	}
	if (rk_jrec_is_data(kind)) {
		uint64_t bytes = 0;
		for (uint32_t r = 0; r < a->nroles && !e; r++) {
			if (!rec[r] || h[r].seq != maxseq || !jlive(a, r))
				continue;
			rk_dev *d = a->vdevs ? a->vdevs[r] : a->devs[r];
			const uint8_t *p = rec[r] + RK_JNL_HDR;
			uint64_t base = kind == RK_JREC_DATA_RS ? a->rs_base : a->doff[r];
			for (uint32_t i = 0; i < h[r].nsegs; i++) {
				rk_err we = rk_dev_pwrite(d, p, (size_t)h[r].seg[i].len, base + h[r].seg[i].off);
				if (we == RK_E_IO) {
					jfail(a, r, we);
					break;
				}
				if (we) {
					e = we;
					break;
				}
				p += h[r].seg[i].len;
				bytes += h[r].seg[i].len;
			}
			if (!e && !a->vdevs && jlive(a, r)) {
				rk_err fe = rk_dev_flush(a->devs[r]);
				if (fe == RK_E_IO)
					jfail(a, r, fe);
				else if (fe)
					e = fe;
			}
		}
		a->replayed = RK_ARRAY_REPLAY_DATA;
		snprintf(a->replay_msg, sizeof a->replay_msg, "journal: record %llu replayed (%llu bytes)",
		         (unsigned long long)maxseq, (unsigned long long)bytes);
	} else {
		const struct rk_jrec *x = &h[first];
		for (uint32_t i = 0; i < x->nsegs && !e; i++)
			for (uint32_t k = 0; k < a->nparts && !e; k++) {
				const struct part *pt = &a->part[k];
				uint64_t lo = x->seg[i].off > pt->lo ? x->seg[i].off : pt->lo;
				uint64_t hi = x->seg[i].off + x->seg[i].len < pt->hi ? x->seg[i].off + x->seg[i].len : pt->hi;
				e = resync_range(a, pt, lo, hi);
			}
		for (uint32_t k = 0; k < a->nparts && !e && !a->vdevs; k++)
			e = rk_vol_flush(a->part[k].vol);
		a->replayed = RK_ARRAY_REPLAY_RESYNC;
		snprintf(a->replay_msg, sizeof a->replay_msg, "journal: redundancy resynced over %u range%s of record %llu",
		         x->nsegs, x->nsegs == 1 ? "" : "s", (unsigned long long)maxseq);
	}
out:
	if (rec)
		for (uint32_t r = 0; r < a->nroles; r++)
			free(rec[r]);
	free(rec);
	free(h);
	return e;
}

/* Roles missing at open, as "1, 3" (at most LEN bytes). */
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

/* The end of an open: the journal replayed after an unclean stop, and the
 * superblocks brought in line (read-write). */
static rk_err array_finish_open(rk_array *a)
{
	rk_err e;
	for (uint32_t i = 0; i < a->nparts; i++)
		rk_vol_on_repair(a->part[i].vol, on_member_repair, a);
	if ((e = journal_recover(a)))
		return e;
	/* a replay (or finding nothing to replay) leaves the array consistent:
	 * say so, so the next assembly does not look again; superblocks left
	 * disagreeing by an interrupted update are brought in line */
	int recovered = a->unclean && (a->tmpl->feat_incompat & RK_FEAT_INCOMPAT_JOURNAL) && journal_level(a);
	if ((a->flags & RK_ARRAY_RDWR) && (recovered || a->sb_disagree))
		return array_commit(a, a->unclean && !recovered ? RK_ARRAY_ACTIVE : RK_ARRAY_CLEAN);
	return array_settle(a);
}

/* Read-only opens after an unclean stop run the volume on overlays so the
 * journal can be replayed without writing a byte. */
static rk_err make_overlays(rk_array *a)
{
	if (!(a->vdevs = calloc(a->nroles, sizeof *a->vdevs)))
		return rk_fail(RK_E_NOMEM, "array: out of memory");
	for (uint32_t r = 0; r < a->nroles; r++) {
		rk_err e;
		if (a->devs[r] && (e = rk_dev_overlay(&a->vdevs[r], a->devs[r])))
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

/* An array in the middle of a reshape (spec/reshape.md, spec/journal.md
 * "Mid-reshape"): volume bytes below the checkpoint live in the new
 * geometry, the rest in the old; the dual-geometry reader's two engines
 * serve reads and writes by that split (the checkpoint never moves while
 * the array is open: raid-resize needs it closed and clean).  Writes run
 * the same protocol as on any array, with the journal's mid-reshape
 * records. */
static rk_err reshape_start(rk_array *a, const struct rk_sb *tmpl)
{
	if ((a->flags & RK_ARRAY_RDWR) && (tmpl->feat_ro_compat & ~RK_FEAT_RO_COMPAT_SUPP))
		return rk_fail(RK_E_FEATURE, "array: unknown read-only-compatible features 0x%llx: refusing to write",
		               (unsigned long long)(tmpl->feat_ro_compat & ~RK_FEAT_RO_COMPAT_SUPP));
	rk_err e = rk_geom_init(&a->g, tmpl->level, tmpl->layout, tmpl->chunk, tmpl->nroles, tmpl->data_size);
	if (e)
		return rk_fail(RK_E_CORRUPT, "array: geometry in the superblock is not usable: %s", rk_errmsg());
	if (tmpl->volume_size > a->g.volume_size)
		return rk_fail(RK_E_CORRUPT, "array: volume_size %llu exceeds the %llu bytes the geometry holds",
		               (unsigned long long)tmpl->volume_size, (unsigned long long)a->g.volume_size);
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
			a->down[r] = DOWN_MISSING;
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
	    (geom_journaled(&a->g) || (have_gn && geom_journaled(&gn))) && (e = make_overlays(a)))
		return e;
	e = rk_resize_reader_open(&a->rs, tmpl, a->vdevs ? a->vdevs : a->devs, on_member_fail, a);
	if (e == RK_E_TOOFEW) {
		char list[512];
		uint32_t nmiss = missing_list(a, list, sizeof list);
		return rk_fail(RK_E_TOOFEW, "too few members for the reshape in progress: %u of %u roles missing (role%s %s)",
		               nmiss, a->nroles, nmiss == 1 ? "" : "s", list);
	}
	if (e)
		return e;
	rk_vol *vn = rk_resize_reader_vol(a->rs, 1), *vo = rk_resize_reader_vol(a->rs, 0);
	if (vn)
		a->part[a->nparts++] = (struct part){ .a = a, .vol = vn, .g = rk_vol_geom(vn), .lo = 0, .hi = a->rs_pos };
	if (vo)
		a->part[a->nparts++] = (struct part){ .a = a, .vol = vo, .g = rk_vol_geom(vo), .lo = a->rs_pos, .hi = a->size,
		                                      .base = a->rs_old - a->rs_base };
	return array_finish_open(a);
}

/* Geometry, engine and the too-few message, shared by both open paths. */
static rk_err array_start(rk_array *a, const struct rk_sb *tmpl)
{
	memcpy(a->tmpl, tmpl, sizeof *a->tmpl);
	if (tmpl->feat_incompat & RK_FEAT_INCOMPAT_RESHAPE)
		return reshape_start(a, tmpl);
	if ((a->flags & RK_ARRAY_RDWR) && (tmpl->feat_ro_compat & ~RK_FEAT_RO_COMPAT_SUPP))
		return rk_fail(RK_E_FEATURE, "array: unknown read-only-compatible features 0x%llx: refusing to write",
		               (unsigned long long)(tmpl->feat_ro_compat & ~RK_FEAT_RO_COMPAT_SUPP));
	a->unclean = tmpl->array_state == RK_ARRAY_ACTIVE;
	/* a member one update behind that missed the end of a reshape still
	 * names the old data offset and journal: the array's are the
	 * template's (reshapes keep them uniform; spec/reshape.md) */
	for (uint32_t r = 0; r < a->nroles; r++)
		if (a->sbs[r] && (a->sbs[r]->feat_incompat & RK_FEAT_INCOMPAT_RESHAPE) &&
		    !(tmpl->feat_incompat & RK_FEAT_INCOMPAT_RESHAPE)) {
			a->sbs[r]->data_offset = a->doff[r] = tmpl->data_offset;
			a->sbs[r]->journal_offset = tmpl->journal_offset;
			a->sbs[r]->journal_size = tmpl->journal_size;
			a->sb_disagree = 1;
		}
	/* a member one update behind may predate the journal (added at the
	 * first write): its area is where journal_begin puts it */
	for (uint32_t r = 0; r < a->nroles; r++)
		if ((tmpl->feat_incompat & RK_FEAT_INCOMPAT_JOURNAL) && a->sbs[r] && !a->sbs[r]->journal_size &&
		    a->sbs[r]->data_offset >= RK_SB_PRIMARY_END + RK_JNL_MIN_SIZE) {
			a->sbs[r]->journal_offset = RK_SB_PRIMARY_END;
			a->sbs[r]->journal_size = (a->sbs[r]->data_offset - RK_SB_PRIMARY_END) / 4096 * 4096;
		}
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
	/* read-only after an unclean stop: the volume runs on overlays so the
	 * journal can be replayed without writing a byte */
	if (a->unclean && !(a->flags & RK_ARRAY_RDWR) && (tmpl->feat_incompat & RK_FEAT_INCOMPAT_JOURNAL) &&
	    geom_journaled(&a->g) && (e = make_overlays(a)))
		return e;
	e = rk_vol_open(&a->vol, &a->g, a->vdevs ? a->vdevs : a->devs, a->doff);
	if (e == RK_E_TOOFEW) {
		char list[512];
		uint32_t nmiss = missing_list(a, list, sizeof list);
		return rk_fail(RK_E_TOOFEW, "too few members: %u of %u roles missing (role%s %s); RAID-%s tolerates %u",
		               nmiss, a->nroles, nmiss == 1 ? "" : "s", list, rk_level_name(a->g.level),
		               rk_geom_redundancy(&a->g));
	}
	if (e)
		return e;
	rk_vol_on_fail(a->vol, on_member_fail, a);
	a->part[0] = (struct part){ .a = a, .vol = a->vol, .g = &a->g, .lo = 0, .hi = a->size };
	a->nparts = 1;
	return array_finish_open(a);
}

/* RAIDKIT_TEST_FAULT="model=pull,n=40,member=2[,seed=S][,off=O,len=L]"
 * (models: power-cut, kill, pull, read-error) wraps the members of
 * read-write opens in the fault-injecting backend, so end-to-end cases can
 * pull a cable or cut the power under the real tools (tests/cases/faults_*).
 * For tests only; a malformed value is refused. */
static rk_err test_fault_wrap(rk_array *a, uint32_t r)
{
	const char *env = getenv("RAIDKIT_TEST_FAULT");
	if (!env || !*env || !(a->flags & RK_ARRAY_RDWR))
		return RK_OK;
	if (!a->tplan) {
		struct rk_fault_spec sp;
		if (rk_fault_spec_parse(env, &sp))
			return rk_fail(RK_E_INVAL, "RAIDKIT_TEST_FAULT: %s", rk_errmsg());
		rk_err e = rk_fault_plan_create(&a->tplan, &sp);
		if (e)
			return e;
		a->tcrash = sp.model == RK_FAULT_POWER_CUT;
	}
	rk_dev *w = NULL;
	rk_err e = rk_dev_fault(&w, a->devs[r], a->tplan, (int)r);
	a->devs[r] = w;   /* the lower device is the wrapper's now, also on failure */
	return e;
}

/* Opens PATH for role R and checks it is still the member discovery saw
 * (SEEN: its superblock then). */
static rk_err open_member(rk_array *a, const struct rk_array_info *info, uint32_t r, const char *path,
                          const struct rk_sb *seen, unsigned flags)
{
	rk_err e;
	if ((e = rk_dev_open(&a->devs[r], path, flags)))
		return e;
	if ((e = test_fault_wrap(a, r)))
		return e;
	/* Discovery ran earlier: make sure the member is still the one it saw. */
	struct rk_sb_read rd;
	memset(&rd, 0, sizeof rd);
	e = rk_sb_read(a->devs[r], &rd);
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
		if (!e && (now->events != info->sb->events || rd.copy[0].status != RK_COPY_OK ||
		           rd.copy[1].status != RK_COPY_OK || rd.copy[0].sb->events != rd.copy[1].sb->events))
			a->sb_disagree = 1;
	}
	rk_sb_read_free(&rd);
	if (!e)
		a->doff[r] = a->sbs[r]->data_offset;
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
	uint32_t span = rk_resize_span(info->sb);
	if (span > RK_SB_MAX_ROLES || span > info->sb->nentries)
		return rk_fail(RK_E_CORRUPT, "array: the reshape target names %u roles", span);
	rk_array *a = array_alloc(span, flags);
	if (!a)
		return rk_fail(RK_E_NOMEM, "array: out of memory");
	a->own_devs = 1;
	rk_err e = RK_OK;
	for (uint32_t r = 0; r < info->nroles && !e; r++) {
		const struct rk_member *m = &info->roles[r];
		if (m->cls != RK_MEMBER_ACTIVE || !m->path || !m->sb)
			continue;
		e = open_member(a, info, r, m->path, m->sb, flags);
	}
	/* mid-reshape: members the reshape added serve roles past nroles
	 * (discovery lists them apart); only those at the array's events */
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
			a->doff[r] = sbs[r]->data_offset;
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

rk_vol *rk_array_vol(rk_array *a) { return a->vol; }
uint64_t rk_array_size(const rk_array *a) { return a->size; }
uint64_t rk_array_events(const rk_array *a) { return a->tmpl->events; }
int rk_array_was_unclean(const rk_array *a) { return a->unclean; }

int rk_array_reshaping(const rk_array *a, uint64_t *pos)
{
	if (pos)
		*pos = a->rs ? rk_resize_reader_pos(a->rs) : 0;
	return a->rs != NULL;
}

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

uint64_t rk_array_nrepaired(const rk_array *a, uint64_t *bytes)
{
	rk_array *m = (rk_array *)(uintptr_t)a;
	pthread_mutex_lock(&m->mu);
	uint64_t n = a->nrepaired;
	if (bytes)
		*bytes = a->repaired_bytes;
	pthread_mutex_unlock(&m->mu);
	return n;
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
	e = a->rs ? rk_resize_reader_read(a->rs, buf, len, off) : rk_vol_read(a->vol, buf, len, off);
	rk_err s = array_settle(a);
	return e ? e : s;
}

static rk_err begin_write(rk_array *a)
{
	if (!(a->flags & RK_ARRAY_RDWR))
		return rk_fail(RK_E_READONLY, "array: opened read-only");
	if (a->dirty)
		return RK_OK;
	rk_err e = journal_begin(a);
	if (!e)
		e = array_commit(a, RK_ARRAY_ACTIVE);
	if (e)
		return e;
	a->dirty = 1;
	for (uint32_t i = 0; i < a->nparts; i++)
		if (a->jon && part_parity(&a->part[i]) && geom_journaled(a->part[i].g))
			rk_vol_set_journal(a->part[i].vol, jhook, &a->part[i], a->jmax);
	return RK_OK;
}

rk_err rk_array_begin_write(rk_array *a)
{
	pthread_mutex_lock(&a->wmu);
	rk_err e = begin_write(a);
	pthread_mutex_unlock(&a->wmu);
	return e;
}

/* Writes [off, off+len) inside part P's range through its engine, under
 * the journal as its level needs (spec/journal.md). */
static rk_err part_write(rk_array *a, struct part *pt, const uint8_t *p, size_t len, uint64_t off)
{
	rk_err e;
	int jon = a->jon && geom_journaled(pt->g);
	if (jon && !part_parity(pt)) {
		/* mirrors: under an intent record, a bounded piece at a time */
		for (size_t done = 0; done < len;) {
			size_t piece = len - done < JNL_INTENT_PIECE ? len - done : JNL_INTENT_PIECE;
			if ((e = jcover(a, pt, off + done, piece, 1)))
				return e;
			e = rk_vol_write(pt->vol, p + done, piece, off + done);
			a->jpending = 1;
			rk_err s = array_settle(a);
			if (e || s)
				return e ? e : s;
			done += piece;
		}
		return RK_OK;
	}
	if (jon && !any_down(a, pt)) {
		/* parity, healthy: whole stripes go under an intent record, the
		 * partial stripes at either end through redo records (the hook) */
		uint64_t sd = pt->g->stripe_data, end = off + len;
		uint64_t fs = (off + sd - 1) / sd * sd, fe = end / sd * sd;
		if (fe > fs) {
			if (fs > off) {
				e = rk_vol_write(pt->vol, p, (size_t)(fs - off), off);
				rk_err s = array_settle(a);
				if (e || s)
					return e ? e : s;
			}
			for (uint64_t x = fs; x < fe;) {
				uint64_t piece = fe - x < JNL_INTENT_PIECE ? fe - x : JNL_INTENT_PIECE;
				if (piece > sd && piece % sd)
					piece -= piece % sd;
				if (!any_down(a, pt) && (e = jcover(a, pt, x, piece, sd)))
					return e;
				a->jfull = 1;
				e = rk_vol_write(pt->vol, p + (x - off), (size_t)piece, x);
				a->jfull = 0;
				a->jpending = 1;
				rk_err s = array_settle(a);
				if (e || s)
					return e ? e : s;
				x += piece;
			}
			if (end > fe) {
				e = rk_vol_write(pt->vol, p + (fe - off), (size_t)(end - fe), fe);
				rk_err s = array_settle(a);
				if (e || s)
					return e ? e : s;
			}
			return RK_OK;
		}
	}
	e = rk_vol_write(pt->vol, p, len, off);
	rk_err s = array_settle(a);
	return e ? e : s;
}

static rk_err array_write(rk_array *a, const void *buf, size_t len, uint64_t off)
{
	rk_err e = check_range(a, len, off);
	if (e)
		return e;
	if ((e = begin_write(a)) || !len)
		return e;
	/* mid-reshape the bytes below the checkpoint go through the new
	 * geometry, the rest through the old (one fixed split per open) */
	const uint8_t *p = buf;
	uint64_t end = off + len;
	for (uint32_t i = 0; i < a->nparts && !e; i++) {
		struct part *pt = &a->part[i];
		uint64_t lo = off > pt->lo ? off : pt->lo, hi = end < pt->hi ? end : pt->hi;
		if (lo < hi)
			e = part_write(a, pt, p + (lo - off), (size_t)(hi - lo), lo);
	}
	return e;
}

rk_err rk_array_write(rk_array *a, const void *buf, size_t len, uint64_t off)
{
	pthread_mutex_lock(&a->wmu);
	rk_err e = array_write(a, buf, len, off);
	pthread_mutex_unlock(&a->wmu);
	return e;
}

rk_err rk_array_flush(rk_array *a)
{
	if (!(a->flags & RK_ARRAY_RDWR))
		return RK_OK;
	pthread_mutex_lock(&a->wmu);
	/* mid-reshape the new geometry's engine spans every member: one flush
	 * each (a failure reaches the other engine through on_member_fail) */
	uint32_t w = 0;
	for (uint32_t i = 1; i < a->nparts; i++)
		if (a->part[i].g->nroles > a->part[w].g->nroles)
			w = i;
	rk_err e = a->nparts ? rk_vol_flush(a->part[w].vol) : RK_OK;
	if (!e)
		a->jpending = 0;
	rk_err s = array_settle(a);
	pthread_mutex_unlock(&a->wmu);
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

int rk_array_replayed(const rk_array *a, const char **msg)
{
	if (msg)
		*msg = a->replay_msg;
	return a->replayed;
}

int rk_array_journaled(const rk_array *a)
{
	return a->jon;
}

void rk_array_set_journal(rk_array *a, int on)
{
	a->joff_user = !on;
}
