/* array.c: an open array's lifetime, member failures and the one place its
 * superblocks are rewritten (the write protocol described in rk_array.h).
 * Opening is array_open.c, reads and writes array_write.c, the journal
 * array_journal.c and array_replay.c. */
#include "array_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rk_le.h"
#include "rk_util.h"

void array_free(rk_array *a)
{
	if (!a)
		return;
	rk_vol_close(a->vol);
	rk_resize_reader_close(a->reshape);
	if (a->test_plan && a->test_crash_on_free)
		rk_fault_crash(a->test_plan);   /* the "power" comes back when the tool is done */
	for (uint32_t r = 0; r < a->nroles; r++) {
		if (a->overlay_devs)
			rk_dev_close(a->overlay_devs[r]);
		if (a->own_devs && a->devs)
			rk_dev_close(a->devs[r]);
		if (a->sbs)
			free(a->sbs[r]);
	}
	rk_fault_plan_free(a->test_plan);
	array_batch_free(a);
	RK_FREE_ALL(a->devs, a->sbs, a->tmpl, a->data_off, a->down, a->fail_why, a->flush_skip, a->overlay_devs, a->jpos,
	            a->journal_buf, a->journal_hdr);
	pthread_mutex_destroy(&a->lock);
	pthread_mutex_destroy(&a->write_lock);
	free(a);
}

rk_array *array_alloc(uint32_t nroles, unsigned flags)
{
	rk_array *a = calloc(1, sizeof *a);
	if (!a)
		return NULL;
	pthread_mutex_init(&a->lock, NULL);
	pthread_mutex_init(&a->write_lock, NULL);
	a->nroles = nroles;
	a->flags = flags;
	a->devs = calloc(nroles, sizeof *a->devs);
	a->sbs = calloc(nroles, sizeof *a->sbs);
	a->data_off = calloc(nroles, sizeof *a->data_off);
	a->down = calloc(nroles, sizeof *a->down);
	a->fail_why = calloc(nroles, sizeof *a->fail_why);
	a->flush_skip = calloc(nroles, 1);
	a->tmpl = malloc(sizeof *a->tmpl);
	if (!a->devs || !a->sbs || !a->data_off || !a->down || !a->fail_why || !a->flush_skip || !a->tmpl) {
		array_free(a);
		return NULL;
	}
	return a;
}

/* The engine reports a member failing; record it, the superblocks follow
 * when the volume call returns (array_settle). */
void array_on_member_fail(void *ctx, uint32_t role, rk_err err)
{
	rk_array *a = ctx;
	int first = 0;
	char why[256];
	pthread_mutex_lock(&a->lock);
	if (role < a->nroles && a->down[role] == ARRAY_ROLE_UP) {
		a->down[role] = ARRAY_DOWN_FAILED;
		const char *msg = rk_lasterr() == err ? rk_errmsg() : rk_strerror(err);
		snprintf(a->fail_why[role], sizeof a->fail_why[role], "%s", msg);
		snprintf(why, sizeof why, "%s", a->fail_why[role]);
		a->nfailed++;
		a->pending = 1;
		first = 1;
	}
	pthread_mutex_unlock(&a->lock);
	/* mid-reshape both engines run on the member: the other one stops
	 * using it too (its callback finds the role down already) */
	for (uint32_t i = 0; first && a->nparts > 1 && i < a->nparts; i++)
		if (role < a->part[i].g->nroles && !rk_vol_role_down(a->part[i].vol, role))
			rk_vol_fail_role(a->part[i].vol, role, err, why);
}

/* Fails ROLE (MSG says why) in every engine that has it; a role no engine
 * has (a member a reshape added, before any byte moved) is recorded here. */
void array_fail_member(rk_array *a, uint32_t r, rk_err e, const char *msg)
{
	int told = 0;
	for (uint32_t i = 0; i < a->nparts; i++)
		if (r < a->part[i].g->nroles) {
			rk_vol_fail_role(a->part[i].vol, r, e, msg);
			told = 1;
		}
	if (told || r >= a->nroles)
		return;
	pthread_mutex_lock(&a->lock);
	if (a->down[r] == ARRAY_ROLE_UP) {
		a->down[r] = ARRAY_DOWN_FAILED;
		snprintf(a->fail_why[r], sizeof a->fail_why[r], "%s", msg);
		a->nfailed++;
		a->pending = 1;
	}
	pthread_mutex_unlock(&a->lock);
}

/* The engine repaired a read error (rewrote the range from redundancy). */
void array_on_member_repair(void *ctx, uint32_t role, uint64_t off, uint64_t len)
{
	rk_array *a = ctx;
	(void)role;
	(void)off;
	pthread_mutex_lock(&a->lock);
	a->nrepaired++;
	a->repaired_bytes += len;
	pthread_mutex_unlock(&a->lock);
}

/* Whether every volume byte stays readable with the roles DOWN marks out
 * (mid-reshape: through the geometry that serves it). */
static int array_readable(const rk_array *a, const uint8_t *down)
{
	if (!a->nparts)
		return rk_geom_readable(&a->g, down);
	for (uint32_t i = 0; i < a->nparts; i++)
		if (!rk_geom_readable(a->part[i].g, down))
			return 0;
	return 1;
}

/* The refusal when the roles DOWN marks out leave too few members: a
 * failure that leaves too few is not recorded, since marking the member
 * faulty would turn a pulled cable into an array that no longer assembles.
 * Nothing is written; the member stays active in every superblock, so
 * plugging it back brings the array back as it was (the journal replays
 * the write in flight). */
static rk_err too_few_left(const rk_array *a, const uint8_t *down)
{
	char list[256] = "";
	size_t n = 0;
	for (uint32_t r = 0; r < a->nroles && n < sizeof list - 16; r++)
		if (down[r] == ARRAY_DOWN_FAILED)
			n += (size_t)snprintf(list + n, sizeof list - n, "%s%u", n ? ", " : "", r);
	return rk_fail(RK_E_TOOFEW, "array: role%s %s failed and too few members remain (RAID-%s); "
	               "stopped without recording it: reconnect the member%s and assemble again",
	               strchr(list, ',') ? "s" : "", list, rk_level_name(a->g.level),
	               strchr(list, ',') ? "s" : "");
}

/* The template's next generation: events+1, STATE, every role DOWN marks
 * out that was active or rebuilding now FAULTY. */
static rk_err next_generation(rk_array *a, const uint8_t *down, uint32_t state)
{
	uint64_t ev;
	if (rk_add_ovf(a->tmpl->events, 1, &ev))
		return rk_fail(RK_E_RANGE, "array: event counter overflow");
	for (uint32_t r = 0; r < a->nroles; r++) {
		uint32_t st = a->tmpl->roles[r].state;
		if (down[r] != ARRAY_ROLE_UP && (st == RK_ROLE_ACTIVE || st == RK_ROLE_REBUILDING))
			a->tmpl->roles[r].state = RK_ROLE_FAULTY;
	}
	a->tmpl->events = ev;
	a->tmpl->array_state = state;
	if (state == RK_ARRAY_CLEAN)   /* no record is read on a clean array */
		a->tmpl->feat_incompat &= ~RK_FEAT_INCOMPAT_JLOG;
	a->tmpl->utime = (uint64_t)time(NULL);
	return RK_OK;
}

/* Writes the template as member R's superblock (its own fields kept) using
 * NSB as scratch.  RK_E_IO is returned with the member failed (the caller
 * words the error); any other error is the process going down (or misuse). */
static rk_err write_member_sb(rk_array *a, uint32_t r, struct rk_sb *nsb)
{
	rk_sb_member_copy(nsb, a->tmpl, a->sbs[r]);
	nsb->this_role = r;
	rk_err e = rk_sb_write(a->devs[r], nsb);
	if (e && e != RK_E_IO)
		return rk_fail(e, "%s: writing superblock: %s", rk_dev_path(a->devs[r]), rk_errmsg());
	if (e) {
		char msg[200];
		snprintf(msg, sizeof msg, "superblock write failed: %s", rk_errmsg());
		array_fail_member(a, r, e, msg);   /* the engines stop using it too */
		return e;
	}
	memcpy(a->sbs[r], nsb, sizeof *nsb);
	return RK_OK;
}

/* Members behind the template (an earlier update cut short) get the
 * template's generation as it is, before the next one is written: so a
 * member that only missed updates stays within one event of the freshest
 * (rk_sb_behind).  A member failing it is failed (*NEWFAIL set); any other
 * error is the process going down. */
static rk_err bring_forward(rk_array *a, const uint8_t *down, struct rk_sb *nsb, int *newfail)
{
	for (uint32_t r = 0; r < a->nroles; r++) {
		if (down[r] != ARRAY_ROLE_UP || !a->devs[r] || !rk_sb_behind(a->sbs[r], a->tmpl))
			continue;
		rk_err we = write_member_sb(a, r, nsb);
		if (we && we != RK_E_IO)
			return we;
		if (we)
			*newfail = 1;
	}
	return RK_OK;
}

/* The one place the superblocks of an open array are rewritten.  Brings
 * members behind forward, then writes a new generation (events+1) with
 * array_state STATE to every live member:
 * roles absent or failed are FAULTY in the role table (EMPTY roles stay
 * EMPTY).  Callers order it: before the first data write (ACTIVE), after a
 * member failure (current state), and after the data flush (CLEAN).  A member
 * whose superblock cannot be written is failed too, and the generation is
 * written again to the rest, so every survivor names every failure. */
rk_err array_commit(rk_array *a, uint32_t state)
{
	struct rk_sb *nsb = malloc(sizeof *nsb);
	if (!nsb)
		return rk_fail(RK_E_NOMEM, "array: out of memory writing superblocks");
	rk_err first = RK_OK, e = RK_OK;
	for (int round = 0; round < 4; round++) {
		pthread_mutex_lock(&a->lock);
		a->pending = 0;
		uint8_t *down = a->down;
		pthread_mutex_unlock(&a->lock);
		if (!array_readable(a, down)) {
			e = too_few_left(a, down);
			goto out;
		}
		int newfail = 0, live = 0;
		if ((e = bring_forward(a, down, nsb, &newfail)))
			goto out;
		if ((e = next_generation(a, down, state)))
			goto out;
		for (uint32_t r = 0; r < a->nroles; r++) {
			if (down[r] != ARRAY_ROLE_UP || !a->devs[r])
				continue;
			rk_err we = write_member_sb(a, r, nsb);
			if (we && we != RK_E_IO) {
				e = we;
				goto out;
			}
			if (we) {
				if (!first)
					first = rk_fail(we, "%s: writing superblock: %s", rk_dev_path(a->devs[r]), a->fail_why[r]);
				newfail = 1;
				continue;
			}
			live++;
		}
		if (!live && array_readable(a, down)) {
			e = first ? first : rk_fail(RK_E_IO, "array: no member left to write superblocks to");
			goto out;
		}
		pthread_mutex_lock(&a->lock);
		int again = newfail || a->pending;
		pthread_mutex_unlock(&a->lock);
		/* the survivors agree on a generation that records every failure:
		 * the array carries on (degraded) where it can */
		if (!again)
			goto out;
	}
	e = first ? first : rk_fail(RK_E_IO, "array: members keep failing while superblocks are written");
out:
	free(nsb);
	return e;
}

/* After a volume call: records failures met during it (read-write only). */
rk_err array_settle(rk_array *a)
{
	pthread_mutex_lock(&a->lock);
	int p = a->pending;
	pthread_mutex_unlock(&a->lock);
	if (!p || !(a->flags & RK_ARRAY_RDWR))
		return RK_OK;
	return array_commit(a, a->dirty ? RK_ARRAY_ACTIVE : RK_ARRAY_CLEAN);
}


int array_member_live(rk_array *a, uint32_t r)
{
	return a->devs[r] && !rk_array_role_down(a, r);
}

rk_vol *rk_array_vol(rk_array *a) { return a->vol; }
uint64_t rk_array_size(const rk_array *a) { return a->size; }
uint64_t rk_array_events(const rk_array *a) { return a->tmpl->events; }
int rk_array_was_unclean(const rk_array *a) { return a->unclean; }

int rk_array_reshaping(const rk_array *a, uint64_t *pos)
{
	if (pos)
		*pos = a->reshape ? rk_resize_reader_pos(a->reshape) : 0;
	return a->reshape != NULL;
}

int rk_array_role_down(const rk_array *a, uint32_t role)
{
	if (role >= a->nroles)
		return 1;
	rk_array *m = (rk_array *)(uintptr_t)a;
	pthread_mutex_lock(&m->lock);
	int d = a->down[role] != ARRAY_ROLE_UP;
	pthread_mutex_unlock(&m->lock);
	return d;
}

uint64_t rk_array_nrepaired(const rk_array *a, uint64_t *bytes)
{
	rk_array *m = (rk_array *)(uintptr_t)a;
	pthread_mutex_lock(&m->lock);
	uint64_t n = a->nrepaired;
	if (bytes)
		*bytes = a->repaired_bytes;
	pthread_mutex_unlock(&m->lock);
	return n;
}

uint32_t rk_array_nfailed(const rk_array *a)
{
	rk_array *m = (rk_array *)(uintptr_t)a;
	pthread_mutex_lock(&m->lock);
	uint32_t n = a->nfailed;
	pthread_mutex_unlock(&m->lock);
	return n;
}

const char *rk_array_fail_reason(const rk_array *a, uint32_t role)
{
	if (role >= a->nroles || a->down[role] != ARRAY_DOWN_FAILED)
		return "";
	return a->fail_why[role];
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
		e = array_flush_all(a);
		if (!e)
			e = array_commit(a, RK_ARRAY_CLEAN);
	} else {
		e = array_settle(a);
	}
	array_free(a);
	return e;
}

enum rk_array_replay rk_array_replayed(const rk_array *a, const char **msg)
{
	if (msg)
		*msg = a->replay_msg;
	return a->replayed;
}

int rk_array_journaled(const rk_array *a)
{
	return a->journal_on;
}

void rk_array_set_journal(rk_array *a, int on)
{
	a->journal_off_by_user = !on;
}
