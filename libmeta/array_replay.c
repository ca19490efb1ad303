/* array_replay.c: replaying the journal of an array opened after an unclean
 * stop (spec/journal.md): the last record, when every member it names holds
 * it intact, written back (DATA) or resynced over (INTENT).  Read-only
 * opens replay into overlay devices (rk_dev_overlay). */
#include "array_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rk_util.h"

/* The INTENT part of a replay: makes redundancy consistent over volume
 * bytes [x, y) of part P (the caller clipped them to P's range).  Parity
 * levels and mirrors resync whole stripes; mid-reshape a RAID-1 stripe
 * reaching below the checkpoint is copied from the checkpoint on only
 * (the member bytes below it belong to the new geometry), through the
 * engine: a read of one copy written to all. */
static rk_err resync_range(rk_array *a, const struct array_part *p, uint64_t x, uint64_t y)
{
	const struct rk_geom *g = p->g;
	if (!array_geom_journaled(g) || x >= y)
		return RK_OK;
	uint64_t sd = g->stripe_data;
	if (a->reshape && g->level == 1 && x % sd) {
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


/* The records this array may replay (rk_jrec_decode_ctx): mid-reshape only
 * those of its reshape state. */
static void replay_context(const rk_array *a, struct rk_jrec_ctx *jc)
{
	*jc = (struct rk_jrec_ctx){ .member_size = a->g.member_size, .vol_size = a->size, .nroles = a->nroles,
	                            .array_uuid = a->tmpl->array_uuid };
	if (!a->reshape)
		return;
	jc->reshaping = 1;
	jc->rs_pos = a->rs_pos;
	jc->rs_base = a->rs_base;
	jc->rs_old = a->rs_old;
	for (uint32_t i = 0; i < a->nparts; i++) {
		if (a->part[i].base)
			jc->rs_old_size = a->part[i].g->member_size;
		else
			jc->rs_new_size = a->part[i].g->member_size;
	}
}

/* The records read back, one slot per role (rec[r] NULL: none valid). */
struct replay_set {
	struct rk_jrec *h;
	uint8_t **rec;
	uint64_t maxseq;     /* the latest record's sequence number */
	uint32_t kind;       /* its kind */
	uint32_t first;      /* the first role holding it */
};

/* One member's log as read back: its records in the order written. */
struct chain {
	uint32_t n, cap;
	struct rk_jrec *h;
	uint8_t **rec;
};

/* Appends H and REC to C. */
static rk_err chain_add(struct chain *c, const struct rk_jrec *h, uint8_t *rec)
{
	if (c->n == c->cap) {
		uint32_t nc = c->cap ? c->cap * 2 : 4;
		struct rk_jrec *nh = realloc(c->h, nc * sizeof *nh);
		if (nh)
			c->h = nh;
		uint8_t **nr = nh ? realloc(c->rec, nc * sizeof *nr) : NULL;
		if (!nr)
			return rk_fail(RK_E_NOMEM, "array: out of memory");
		c->rec = nr;
		c->cap = nc;
	}
	c->h[c->n] = *h;
	c->rec[c->n++] = rec;
	return RK_OK;
}

/* Reads role R's log into C: the record at the start of its area, then
 * each next one (at the 4096-byte boundary after it) while it is valid,
 * of version 2, of the same session (nonce) and a higher seq.  Anything
 * after that is older (a record of an earlier checkpoint or session) or
 * torn.  A member whose area cannot be read is failed and left out. */
static rk_err read_chain(rk_array *a, uint32_t r, struct rk_jrec_ctx *jc, struct chain *c)
{
	const struct rk_sb *sb = a->sbs[r];
	for (uint64_t pos = 0; pos + RK_JNL_HDR <= sb->journal_size;) {
		struct rk_jrec h;
		uint8_t *rec = NULL;
		jc->jsize = sb->journal_size - pos;
		rk_err re = rk_jrec_read_ctx(a->devs[r], sb->journal_offset + pos, jc, &h, &rec);
		if (re == RK_E_IO) {
			array_journal_member_failed(a, r, re);   /* cannot tell what it holds: leave it out */
			break;
		}
		if (re == RK_E_NOMEM)
			return re;
		if (re)
			break;
		const struct rk_jrec *p = c->n ? &c->h[c->n - 1] : NULL;
		if (p && (h.version != 2 || h.nonce != p->nonce || h.seq <= p->seq)) {
			free(rec);
			break;
		}
		if ((re = chain_add(c, &h, rec))) {
			free(rec);
			return re;
		}
		if (h.version != 2)
			break;   /* version 1: one record a slot */
		pos += RK_JNL_HDR + (h.payload + 4095) / 4096 * 4096;
	}
	return RK_OK;
}

/* Fills SET with the records of seq SEQ found in the chains (copies of
 * the headers, the records borrowed). */
static void set_for_seq(rk_array *a, const struct chain *ch, uint64_t seq, struct replay_set *set)
{
	set->maxseq = seq;
	for (uint32_t r = 0; r < a->nroles; r++) {
		set->rec[r] = NULL;
		for (uint32_t i = 0; i < ch[r].n; i++)
			if (ch[r].h[i].seq == seq) {
				set->h[r] = ch[r].h[i];
				set->rec[r] = ch[r].rec[i];
			}
	}
}

/* 1 when role R holds the latest record. */
static int holds_latest(const struct replay_set *set, uint32_t r)
{
	return set->rec[r] && set->h[r].seq == set->maxseq;
}

/* Whether the latest record is whole: the same kind and participants on
 * every member holding it, and held by every live member it names.  Sets
 * set->kind and set->first. */
static int record_complete(rk_array *a, struct replay_set *set)
{
	set->first = a->nroles;
	set->kind = 0;
	for (uint32_t r = 0; r < a->nroles; r++) {
		if (!holds_latest(set, r))
			continue;
		const struct rk_jrec *h = &set->h[r];
		if (set->first == a->nroles) {
			set->first = r;
			set->kind = h->kind;
		} else if (h->kind != set->kind || memcmp(h->parts, set->h[set->first].parts, sizeof h->parts)) {
			return 0;
		}
		for (uint32_t p = 0; p < a->nroles; p++)
			if (rk_jrec_part(h, p) && array_member_live(a, p) && !holds_latest(set, p))
				return 0;
	}
	return set->first < a->nroles;   /* a record no member holds is not whole */
}

/* Writes member R's segments of its DATA record back in place (to the
 * overlay when read-only) and flushes; adds the bytes to *BYTES.  A member
 * failing with RK_E_IO is failed, not an error. */
static rk_err replay_member_data(rk_array *a, const struct replay_set *set, uint32_t r, uint64_t *bytes)
{
	const struct rk_jrec *h = &set->h[r];
	rk_dev *d = a->overlay_devs ? a->overlay_devs[r] : a->devs[r];
	const uint8_t *p = set->rec[r] + RK_JNL_HDR;
	uint64_t base = set->kind == RK_JREC_DATA_RS ? a->rs_base : a->data_off[r];
	for (uint32_t i = 0; i < h->nsegs; i++) {
		rk_err we = rk_dev_pwrite(d, p, (size_t)h->seg[i].len, base + h->seg[i].off);
		if (we == RK_E_IO) {
			array_journal_member_failed(a, r, we);
			break;
		}
		if (we)
			return we;
		p += h->seg[i].len;
		*bytes += h->seg[i].len;
	}
	if (a->overlay_devs || !array_member_live(a, r))
		return RK_OK;
	rk_err fe = rk_dev_flush(a->devs[r]);
	if (fe == RK_E_IO)
		array_journal_member_failed(a, r, fe);
	else if (fe)
		return fe;
	return RK_OK;
}

/* INTENT records: redundancy resynced over their ranges, each part of the
 * volume through its own geometry. */
static rk_err replay_intent(rk_array *a, const struct replay_set *set)
{
	const struct rk_jrec *x = &set->h[set->first];
	rk_err e = RK_OK;
	uint64_t torn_lo = UINT64_MAX, torn_hi = 0;
	for (uint32_t i = 0; i < x->nsegs && !e; i++)
		for (uint32_t k = 0; k < a->nparts && !e; k++) {
			const struct array_part *pt = &a->part[k];
			uint64_t lo = x->seg[i].off > pt->lo ? x->seg[i].off : pt->lo;
			uint64_t hi = x->seg[i].off + x->seg[i].len < pt->hi ? x->seg[i].off + x->seg[i].len : pt->hi;
			/* a member gone since the crash: its blocks in the window come
			 * from parity the crash may have torn (spec/journal.md "Limits") */
			if (lo < hi && array_part_parity(pt) && array_part_degraded(a, pt)) {
				torn_lo = lo < torn_lo ? lo : torn_lo;
				torn_hi = hi > torn_hi ? hi : torn_hi;
			}
			e = resync_range(a, pt, lo, hi);
		}
	for (uint32_t k = 0; k < a->nparts && !e && !a->overlay_devs; k++)
		e = rk_vol_flush(a->part[k].vol);
	a->replayed = RK_ARRAY_REPLAY_RESYNC;
	snprintf(a->replay_msg, sizeof a->replay_msg, "journal: redundancy resynced over %u range%s of record %llu",
	         x->nsegs, x->nsegs == 1 ? "" : "s", (unsigned long long)set->maxseq);
	if (torn_lo < torn_hi)
		rk_strcatf(a->replay_msg, sizeof a->replay_msg, "; a member is missing, so its blocks in volume bytes "
		           "%llu to %llu (a whole-stripe write in flight at the crash) come from parity that may be "
		           "torn: check what was written there last", (unsigned long long)torn_lo,
		           (unsigned long long)torn_hi);
	return e;
}

/* Replays records [from, to] in order (each whole: the caller checked the
 * latest commit; an earlier one is whole unless a checkpoint overwrote it,
 * and then nothing before the checkpoint needs replaying).  Says what was
 * done in a->replay_msg. */
static rk_err replay_range(rk_array *a, const struct chain *ch, struct replay_set *set, uint64_t from, uint64_t to)
{
	uint64_t bytes = 0, ndata = 0, first_data = 0;
	char intent_msg[sizeof a->replay_msg] = "";
	rk_err e = RK_OK;
	for (uint64_t s = from; s <= to && !e; s++) {
		set_for_seq(a, ch, s, set);
		if (!record_complete(a, set))
			continue;
		if (rk_jrec_is_data(set->kind)) {
			for (uint32_t r = 0; r < a->nroles && !e; r++)
				if (holds_latest(set, r) && array_member_live(a, r))
					e = replay_member_data(a, set, r, &bytes);
			first_data = ndata++ ? first_data : s;
		} else {
			e = replay_intent(a, set);
			snprintf(intent_msg, sizeof intent_msg, "%s", a->replay_msg);
		}
	}
	if (e)
		return e;
	a->replayed = intent_msg[0] ? RK_ARRAY_REPLAY_RESYNC : RK_ARRAY_REPLAY_DATA;
	snprintf(a->replay_msg, sizeof a->replay_msg, "%s", intent_msg);
	if (ndata == 1)
		rk_strcatf(a->replay_msg, sizeof a->replay_msg, "%sjournal: record %llu replayed (%llu bytes)",
		           intent_msg[0] ? "; " : "", (unsigned long long)first_data, (unsigned long long)bytes);
	else if (ndata > 1)
		rk_strcatf(a->replay_msg, sizeof a->replay_msg, "%sjournal: records %llu to %llu replayed (%llu bytes)",
		           intent_msg[0] ? "; " : "", (unsigned long long)first_data, (unsigned long long)to,
		           (unsigned long long)bytes);
	return RK_OK;
}

/* Which records to replay: the latest commit if whole (every record of
 * it held by every live member it names), else the one before it; from
 * the base (the last checkpoint) to that commit's end.  *FROM > *TO: none. */
static void replay_bounds(rk_array *a, const struct chain *ch, struct replay_set *set, uint64_t *from, uint64_t *to,
                          uint64_t *latest)
{
	const struct rk_jrec *top = NULL;
	for (uint32_t r = 0; r < a->nroles; r++)
		for (uint32_t i = 0; i < ch[r].n; i++)
			if (!top || ch[r].h[i].seq > top->seq)
				top = &ch[r].h[i];
	*latest = top->seq;
	uint64_t base = top->base_seq, c0 = top->first_seq, c1 = top->last_seq;
	int whole = 1;
	for (uint64_t s = c0; s <= c1 && whole; s++) {
		set_for_seq(a, ch, s, set);
		whole = record_complete(a, set);
	}
	*from = base;
	*to = whole ? c1 : c0 - 1;
}

/* After an unclean stop (array_state ACTIVE): replays the journal.  Each
 * member's log is read (read_chain); the latest commit counts only when
 * every live member it names holds each of its records intact: if one
 * does not, the records were still being written when the writer stopped,
 * so nothing went in place for them.  Every record from the last
 * checkpoint (the base) to the last whole commit is replayed in order:
 * their in-place writes may not all be durable.  DATA records put back the
 * new bytes of every chunk (the write hole closed: parity and data agree
 * again, whatever members are missing); INTENT records resync the mirrors
 * over their range.  A version-1 record (one a slot) is a log of one.
 * Read-only opens replay into overlays (a->overlay_devs).  Mid-reshape
 * only records of this reshape state count (kinds 3, 4 with its tag):
 * DATA_RS bytes go to the new data offset + their offset, INTENT_RS
 * ranges are resynced split at the checkpoint, each side through its own
 * geometry. */
rk_err array_journal_replay(rk_array *a)
{
	if (!a->unclean || !(a->tmpl->feat_incompat & RK_FEAT_INCOMPAT_JOURNAL) || !array_journal_level(a))
		return RK_OK;
	struct replay_set set = { .h = calloc(a->nroles, sizeof *set.h), .rec = calloc(a->nroles, sizeof *set.rec) };
	struct chain *ch = calloc(a->nroles, sizeof *ch);
	rk_err e = RK_OK;
	int found = 0;
	struct rk_jrec_ctx jc;
	replay_context(a, &jc);
	if (!set.h || !set.rec || !ch)
		e = rk_fail(RK_E_NOMEM, "array: out of memory");
	for (uint32_t r = 0; r < a->nroles && !e; r++) {
		if (!array_member_live(a, r))
			continue;
		jc.role = r;
		e = read_chain(a, r, &jc, &ch[r]);
		found |= ch[r].n > 0;
	}
	uint64_t from = 1, to = 0, latest = 0;
	if (!e && found)
		replay_bounds(a, ch, &set, &from, &to, &latest);
	if (e) {
		/* nothing more to do */
	} else if (!found) {
		snprintf(a->replay_msg, sizeof a->replay_msg, "journal: no record to replay");
	} else if (from > to) {
		snprintf(a->replay_msg, sizeof a->replay_msg, "journal: record %llu incomplete on the members: "
		         "its write never started", (unsigned long long)latest);
	} else {
		e = replay_range(a, ch, &set, from, to);
	}
	for (uint32_t r = 0; ch && r < a->nroles; r++) {
		for (uint32_t i = 0; i < ch[r].n; i++)
			free(ch[r].rec[i]);
		free(ch[r].rec);
		free(ch[r].h);
	}
	free(ch);
	free(set.rec);
	free(set.h);
	return e;
}
