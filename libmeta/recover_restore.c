/* recover_restore.c: restoring superblock copies and rebuilding a lost
 * superblock from the others (raid-recover --restore-superblock; rk_recover.h
 * has the contract). */
#include "rk_recover.h"
#include "rk_fmt.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <uuid/uuid.h>

#include "rk_discover.h"
#include "rk_geom.h"
#include "rk_le.h"
#include "rk_parity.h"
#include "rk_probe.h"
#include "rk_segnames.h"
#include "rk_util.h"
#include "rk_vol.h"

static const uint8_t nil_uuid[16];

const char *rk_restore_action_name(enum rk_restore_action a)
{
	switch (a) {
	case RK_RESTORE_OK: return "ok";
	case RK_RESTORE_COPY: return "copy rewritten";
	case RK_RESTORE_ROLE: return "superblock rebuilt";
	case RK_RESTORE_CANNOT: return "not repaired";
	case RK_RESTORE_SKIPPED: return "skipped";
	default: return "invalid";
	}
}

/* ---- restore-superblock ---- */

#define SAMPLE_DEFAULT 256u
#define SAMPLE_BYTES   (64u << 10)   /* bytes compared per sampled stripe or piece */

/* Both copies of SB encoded at the same place compare equal? */
static int same_copy(const struct rk_sb *x, const struct rk_sb *y, struct rk_sb *tmp, uint8_t *ba, uint8_t *bb)
{
	memcpy(tmp, x, sizeof *tmp);
	tmp->sb_offset = y->sb_offset;
	if (rk_sb_encode(tmp, ba, RK_SB_AREA) || rk_sb_encode(y, bb, RK_SB_AREA))
		return 0;
	return memcmp(ba, bb, y->sb_bytes ? y->sb_bytes : RK_SB_AREA) == 0;
}

/* The scratch and tallies of one check of a member's place. */
struct place_check {
	struct rk_geom g;
	uint64_t len;            /* bytes compared per sample */
	uint8_t *mem;            /* max(nroles, 2) sample blocks */
	uint8_t **role_block;    /* nroles: each role's sample block */
	void **ptrs;
	uint32_t *vrole, *slot;
	uint8_t *zero;
	struct rk_loc *locs;
	uint64_t checked, agree, nonzero;
	char first_bad[160];
};

static uint8_t *sample_block(const struct place_check *pc, uint32_t i)
{
	return pc->mem + (size_t)i * pc->len;
}

/* Whether stripe S's parity (P, and Q for RAID-6) agrees with its data in
 * the blocks read into pc->mem: the parity kernels' read-only check over
 * the stripe's syndrome pointers, as raid-scrub checks. */
static int stripe_parity_agrees(struct place_check *pc)
{
	const struct rk_geom *g = &pc->g;
	uint32_t nslots = g->level == 6 ? g->q_slots + 2 : g->ndata + 1;
	const struct rk_parity_algo *pa = rk_parity();
	for (uint32_t r = 0; r < g->nroles; r++)
		pc->role_block[r] = sample_block(pc, r);
	rk_parity_stripe_ptrs(pc->ptrs, nslots, pc->slot, g->nroles, pc->role_block, 0, pc->zero);
	size_t len = (size_t)pc->len;
	return !(g->level == 6 ? pa->check((int)nslots, len, pc->ptrs) : pa->xor_check((int)nslots, len, pc->ptrs));
}

/* Parity levels: SAMPLE stripes spread over the array, each read whole and
 * its parity recomputed. */
static int verify_parity(struct place_check *pc, rk_dev *const *devs, const uint64_t *doff, uint32_t role,
                         uint32_t sample, char *why, size_t cap)
{
	const struct rk_geom *g = &pc->g;
	uint32_t n = g->nroles;
	uint64_t ns = g->nstripes, cnt = ns < sample ? ns : sample;
	for (uint64_t i = 0; i < cnt; i++) {
		uint64_t s = cnt > 1 ? i * (ns - 1) / (cnt - 1) : 0;
		struct rk_stripe_map m = { .vol_role = pc->vrole, .slot = pc->slot };
		if (rk_geom_stripe_map(g, s, &m))
			continue;
		for (uint32_t r = 0; r < n; r++)
			if (rk_dev_pread(devs[r], sample_block(pc, r), (size_t)pc->len, doff[r] + s * g->chunk)) {
				snprintf(why, cap, "cannot read stripe %llu: %s", (unsigned long long)s, rk_errmsg());
				return 0;
			}
		pc->checked++;
		int nz = 0;
		for (uint32_t r = 0; r < n; r++)
			nz |= !rk_buf_is_zero(sample_block(pc, r), (size_t)pc->len);
		pc->nonzero += nz;
		int good = stripe_parity_agrees(pc);
		pc->agree += good;
		if (!good && !pc->first_bad[0])
			snprintf(pc->first_bad, sizeof pc->first_bad, "stripe %llu", (unsigned long long)s);
	}
	if (pc->checked && pc->agree == pc->checked && pc->nonzero) {
		snprintf(why, cap, "parity%s of %llu sampled stripes (%llu holding data) agrees with it in role %u",
		         g->level == 6 ? " (P and Q)" : "", (unsigned long long)pc->checked, (unsigned long long)pc->nonzero,
		         role);
		return 1;
	}
	if (pc->checked && pc->agree == pc->checked)
		snprintf(why, cap, "every one of %llu sampled stripes holds only zeros: nothing shows it belongs in role %u "
		         "(raid-recover --rebuild can rebuild it)", (unsigned long long)pc->checked, role);
	else
		snprintf(why, cap, "parity of %llu of %llu sampled stripes disagrees with it in role %u (first: %s)",
		         (unsigned long long)(pc->checked - pc->agree), (unsigned long long)pc->checked, role, pc->first_bad);
	return 0;
}

/* Mirrors: SAMPLE pieces of ROLE's data compared with another copy's. */
static int verify_mirrors(struct place_check *pc, rk_dev *const *devs, const uint64_t *doff, uint32_t role,
                          uint32_t sample, char *why, size_t cap)
{
	const struct rk_geom *g = &pc->g;
	uint64_t unit = g->chunk ? g->chunk : pc->len, npieces = g->member_size / unit;
	uint64_t cnt = npieces < sample ? npieces : sample, used = pc->len < unit ? pc->len : unit;
	for (uint64_t i = 0; i < cnt; i++) {
		uint64_t moff = (cnt > 1 ? i * (npieces - 1) / (cnt - 1) : 0) * unit, voff;
		enum rk_blk_kind kind;
		if (rk_geom_unmap(g, role, moff, &voff, &kind) || kind != RK_BLK_DATA)
			continue;
		uint32_t k = rk_geom_copies(g, voff, pc->locs, g->copies), other = k;
		for (uint32_t c = 0; c < k; c++)
			if (pc->locs[c].role != role && devs[pc->locs[c].role]) {
				other = c;
				break;
			}
		if (other == k)
			continue;
		const struct rk_loc *o = &pc->locs[other];
		if (rk_dev_pread(devs[role], sample_block(pc, 0), (size_t)used, doff[role] + moff) ||
		    rk_dev_pread(devs[o->role], sample_block(pc, 1), (size_t)used, doff[o->role] + o->member_off)) {
			snprintf(why, cap, "cannot read the sample at %llu: %s", (unsigned long long)moff, rk_errmsg());
			return 0;
		}
		pc->checked++;
		pc->nonzero += !rk_buf_is_zero(sample_block(pc, 1), (size_t)used);
		int good = memcmp(sample_block(pc, 0), sample_block(pc, 1), (size_t)used) == 0;
		pc->agree += good;
		if (!good && !pc->first_bad[0])
			snprintf(pc->first_bad, sizeof pc->first_bad, "member byte %llu against role %u",
			         (unsigned long long)moff, o->role);
	}
	if (pc->checked && pc->agree == pc->checked && pc->nonzero) {
		snprintf(why, cap, "%llu sampled pieces (%llu holding data) equal another copy's",
		         (unsigned long long)pc->checked, (unsigned long long)pc->nonzero);
		return 1;
	}
	if (pc->checked && pc->agree == pc->checked)
		snprintf(why, cap, "every one of %llu sampled pieces holds only zeros: nothing shows it belongs in role %u "
		         "(raid-recover --rebuild can rebuild it)", (unsigned long long)pc->checked, role);
	else if (pc->checked)
		snprintf(why, cap, "%llu of %llu sampled pieces differ from another copy (first: %s)",
		         (unsigned long long)(pc->checked - pc->agree), (unsigned long long)pc->checked, pc->first_bad);
	else
		snprintf(why, cap, "no other copy to compare with");
	return 0;
}

/* Does the data of candidate CAND (in role ROLE) agree with the other
 * members?  DEVS/DOFF: every role's device and data offset (CAND at ROLE).
 * Sentence in WHY; 1 when certain. */
static int verify_place(const struct rk_sb *f, rk_dev *const *devs, const uint64_t *doff, uint32_t role,
                        uint32_t sample, char *why, size_t cap)
{
	struct place_check pc = {0};
	if (rk_geom_init(&pc.g, f->level, f->layout, f->chunk, f->nroles, f->data_size)) {
		snprintf(why, cap, "the array's geometry is not usable: %s", rk_errmsg());
		return 0;
	}
	const struct rk_geom *g = &pc.g;
	uint32_t n = g->nroles;
	pc.len = g->chunk && g->chunk < SAMPLE_BYTES ? g->chunk : SAMPLE_BYTES;
	pc.mem = aligned_alloc(64, (size_t)pc.len * (n < 2 ? 2 : n));   /* mirrors compare blocks 0 and 1 */
	pc.role_block = calloc(n, sizeof *pc.role_block);
	pc.ptrs = calloc(g->q_slots + 2 > n + 2 ? g->q_slots + 2 : n + 2, sizeof *pc.ptrs);
	pc.vrole = calloc(n, sizeof *pc.vrole);
	pc.slot = calloc(n, sizeof *pc.slot);
	pc.zero = calloc(1, (size_t)pc.len);
	pc.locs = calloc(g->copies, sizeof *pc.locs);
	int ok = 0;
	if (!pc.mem || !pc.role_block || !pc.ptrs || !pc.vrole || !pc.slot || !pc.zero || !pc.locs)
		snprintf(why, cap, "out of memory");
	else if (g->level == 4 || g->level == 5 || g->level == 6)
		ok = verify_parity(&pc, devs, doff, role, sample, why, cap);
	else if (g->level == 1 || g->level == 10)
		ok = verify_mirrors(&pc, devs, doff, role, sample, why, cap);
	else
		snprintf(why, cap, "RAID-%s has no redundancy to check a member's place against", rk_level_name(g->level));
	free(pc.mem);
	free(pc.role_block);
	free(pc.ptrs);
	free(pc.vrole);
	free(pc.slot);
	free(pc.zero);
	free(pc.locs);
	return ok;
}

void rk_restore_result_free(struct rk_restore_result *r)
{
	if (!r)
		return;
	free(r->m);
	free(r);
}

/* Opens PATH read-write through the test hook. */
static rk_err open_rw(const struct rk_restore_opts *o, uint32_t idx, const char *path, rk_dev **d)
{
	rk_err e = rk_member_open_path(d, path, RK_DEV_RDWR);
	if (!e && o && o->wrap_dev)
		e = o->wrap_dev(o->wrap_ctx, idx, d);
	return e;
}

/* Step 1: a member with one good copy gets the other rewritten from it. */
static void restore_copies(const struct rk_restore_opts *o, uint32_t i, struct rk_restore_member *m,
                           int *pending, struct rk_sb *tmp, uint8_t *ba, uint8_t *bb)
{
	rk_dev *d = NULL;
	struct rk_sb_read rd;
	memset(&rd, 0, sizeof rd);
	rd.chosen = -1;
	rk_err e = rk_member_open_path(&d, m->path, RK_DEV_RDONLY);
	if (e) {
		m->action = RK_RESTORE_CANNOT;
		snprintf(m->what, sizeof m->what, "cannot open: %s", rk_errmsg());
		return;
	}
	e = rk_sb_read(d, &rd);
	/* another format's member gets no raidkit superblock written */
	if ((e == RK_E_NOSB || (e == RK_OK && rd.chosen < 0)) && rk_foreign_refuse(d, "restore superblocks of")) {
		rk_dev_close(d);
		m->action = RK_RESTORE_CANNOT;
		const char *msg = rk_errmsg();   /* the report names the path already */
		size_t pl = strlen(m->path);
		snprintf(m->what, sizeof m->what, "%s", strncmp(msg, m->path, pl) ? msg : msg + pl + 2);
		rk_sb_read_free(&rd);
		return;
	}
	rk_dev_close(d);
	if (e == RK_E_NOSB || (e == RK_OK && rd.chosen < 0)) {
		*pending = 1;
		m->action = RK_RESTORE_SKIPPED;
		snprintf(m->what, sizeof m->what, "no valid superblock copy (primary: %s; backup: %s)",
		         rd.copy[0].why[0] ? rd.copy[0].why : rk_strerror(rd.copy[0].err),
		         rd.copy[1].why[0] ? rd.copy[1].why : rk_strerror(rd.copy[1].err));
		rk_sb_read_free(&rd);
		return;
	}
	if (e) {
		m->action = RK_RESTORE_CANNOT;
		snprintf(m->what, sizeof m->what, "cannot read the superblocks: %s", rk_errmsg());
		rk_sb_read_free(&rd);
		return;
	}
	int c = rd.chosen, oth = 1 - c;
	const struct rk_sb *good = rd.copy[c].sb;
	const struct rk_sb_copy *bad = &rd.copy[oth];
	const char *cname = c ? "backup" : "primary", *oname = oth ? "backup" : "primary";
	m->role = good->this_role == RK_ROLE_NONE ? -1 : (int64_t)good->this_role;
	m->events = good->events;
	char reason[400];
	if (bad->status != RK_COPY_OK || !bad->sb) {
		snprintf(reason, sizeof reason, "the %s copy at %llu is %s (%s)", oname, (unsigned long long)bad->offset,
		         bad->status == RK_COPY_ABSENT ? "missing" : "damaged",
		         bad->why[0] ? bad->why : rk_strerror(bad->err));
	} else if (bad->sb->events != good->events) {
		snprintf(reason, sizeof reason, "the %s copy is older (events %llu, the %s copy has %llu)", oname,
		         (unsigned long long)bad->sb->events, cname, (unsigned long long)good->events);
	} else if (!same_copy(good, bad->sb, tmp, ba, bb)) {
		snprintf(reason, sizeof reason, "the %s copy differs from the %s copy at the same events %llu", oname, cname,
		         (unsigned long long)good->events);
	} else {
		m->action = RK_RESTORE_OK;
		snprintf(m->what, sizeof m->what, "both copies good (role %lld, events %llu)", (long long)m->role,
		         (unsigned long long)m->events);
		rk_sb_read_free(&rd);
		return;
	}
	/* Same contents, events unchanged: the member stays in step with the
	 * others; rk_sb_write rewrites the untrusted copy first. */
	e = open_rw(o, i, m->path, &d);
	if (!e) {
		e = rk_sb_write(d, good);
		if (e)
			e = rk_fail(e, "%s", rk_errmsg());
	}
	rk_dev_close(d);
	if (e) {
		m->action = RK_RESTORE_CANNOT;
		snprintf(m->what, sizeof m->what, "%s; rewriting it failed: %s", reason, rk_errmsg());
	} else {
		m->action = RK_RESTORE_COPY;
		m->copies = 1 << oth;
		snprintf(m->what, sizeof m->what, "%s: rewrote it from the %s copy (role %lld, events %llu)", reason, cname,
		         (long long)m->role, (unsigned long long)m->events);
	}
	rk_sb_read_free(&rd);
}

/* The arrays that could take a member without superblocks: one role
 * without any member given, ACTIVE in the freshest table, and no stale
 * image of it given.  Returns how many; *CAND_A, *CAND_R the last one;
 * WHYNOT says why the others could not. */
static uint32_t waiting_roles(const struct rk_discovery *d, int64_t *cand_a, int64_t *cand_r, char *whynot,
                              size_t cap)
{
	uint32_t ncand = 0;
	for (uint32_t ai = 0; ai < d->narrays; ai++) {
		const struct rk_array_info *a = &d->arrays[ai];
		uint32_t nmiss = 0;
		int64_t mr = -1;
		for (uint32_t r = 0; r < a->nroles; r++)
			if (a->roles[r].cls != RK_MEMBER_ACTIVE) {
				nmiss++;
				mr = r;
			}
		if (nmiss != 1 || a->state == RK_ASTATE_CONFLICT) {
			if (nmiss > 1)
				rk_strcatf(whynot, cap, "%sarray %s has %u roles without a member", whynot[0] ? "; " : "",
				           a->name[0] ? a->name : "(unnamed)", nmiss);
			continue;
		}
		const struct rk_role *fe = &a->sb->roles[mr];
		int stale_given = 0;
		for (uint32_t k = 0; k < d->nleft; k++)
			if (d->left[k].array_idx == (int32_t)ai && d->left[k].role == mr)
				stale_given = 1;
		if (fe->state != RK_ROLE_ACTIVE || memcmp(fe->member_uuid, nil_uuid, 16) == 0) {
			rk_strcatf(whynot, cap, "%srole %lld is %s in the members' table: rebuild it with --rebuild",
			           whynot[0] ? "; " : "", (long long)mr, rk_role_state_name(fe->state));
			continue;
		}
		if (stale_given) {
			rk_strcatf(whynot, cap, "%sa stale member of role %lld is given", whynot[0] ? "; " : "", (long long)mr);
			continue;
		}
		ncand++;
		*cand_a = ai;
		*cand_r = mr;
	}
	return ncand;
}

/* No single role waits (NCAND candidates): every skipped member says why. */
static void no_single_role(const struct rk_discovery *d, uint32_t npaths, uint32_t ncand, const char *whynot,
                           struct rk_restore_result *res)
{
	for (uint32_t i = 0; i < npaths; i++) {
		struct rk_restore_member *m = &res->m[i];
		if (m->action != RK_RESTORE_SKIPPED)
			continue;
		if (ncand > 1)
			rk_strcatf(m->what, sizeof m->what, "; its place is not certain: %u arrays each lack one member", ncand);
		else if (d->narrays == 0)
			rk_strcatf(m->what, sizeof m->what, "; no member of any array is given to take a role table from");
		else
			rk_strcatf(m->what, sizeof m->what, "; no role is waiting for it%s%s", whynot[0] ? ": " : "", whynot);
		if (d->narrays)
			m->action = RK_RESTORE_CANNOT;
	}
}

/* The skipped paths whose size matches a member of A (each marked CANNOT,
 * the others saying why): how many; *PICK the last. */
static uint32_t size_matches(char *const *paths, uint32_t npaths, const struct rk_array_info *a,
                             struct rk_restore_result *res, uint32_t *pick)
{
	uint32_t nsize = 0;
	for (uint32_t i = 0; i < npaths; i++) {
		if (res->m[i].action != RK_RESTORE_SKIPPED)
			continue;
		res->m[i].action = RK_RESTORE_CANNOT;
		rk_dev *dv = NULL;
		uint64_t size = 0;
		if (rk_member_open_path(&dv, paths[i], RK_DEV_RDONLY) == RK_OK)
			size = rk_dev_size(dv);
		rk_dev_close(dv);
		int match = 0;
		for (uint32_t r = 0; r < a->nroles; r++)
			if (a->roles[r].cls == RK_MEMBER_ACTIVE && a->roles[r].sb && a->roles[r].sb->dev_size == size)
				match = 1;
		if (!match) {
			rk_strcatf(res->m[i].what, sizeof res->m[i].what, "; its size (%llu bytes) is no member's size",
			           (unsigned long long)size);
			continue;
		}
		nsize++;
		*pick = i;
	}
	return nsize;
}

/* Checks the data with PATH in ROLE of array A (every other member at its
 * place): 1 when certain, VWHY says why (or why not). */
static int check_place(const struct rk_array_info *a, uint32_t role, const char *path, const struct rk_restore_opts *o,
                       struct rk_restore_member *m, char *vwhy, size_t cap)
{
	uint32_t n = a->nroles;
	rk_dev **devs = calloc(n, sizeof *devs);
	uint64_t *doff = calloc(n, sizeof *doff);
	int ok = 0;
	rk_err e = RK_OK;
	if (!devs || !doff) {
		rk_strcatf(m->what, sizeof m->what, "; out of memory");
		goto out;
	}
	for (uint32_t r = 0; r < n && !e; r++) {
		const char *p = r == role ? path : a->roles[r].path;
		if (!p)
			continue;
		e = rk_member_open_path(&devs[r], p, RK_DEV_RDONLY);
		doff[r] = r == role ? a->sb->data_offset : rk_sb_member_data_offset(a->sb, a->roles[r].sb);
	}
	if (e) {
		rk_strcatf(m->what, sizeof m->what, "; %s", rk_errmsg());
		goto out;
	}
	ok = verify_place(a->sb, devs, doff, role, o && o->sample ? o->sample : SAMPLE_DEFAULT, vwhy, cap);
	if (!ok)
		rk_strcatf(m->what, sizeof m->what, "; role %u is the one without a member, but %s: not restored", role, vwhy);
out:
	if (devs)
		for (uint32_t r = 0; r < n; r++)
			rk_dev_close(devs[r]);
	free(devs);
	free(doff);
	return ok;
}

/* Writes both copies of the freshest member's superblock F, as the member
 * of ROLE, to path PICK. */
static void write_role(char *const *paths, uint32_t pick, const struct rk_restore_opts *o, const struct rk_sb *f,
                       uint32_t role, const char *vwhy, struct rk_restore_member *m)
{
	struct rk_sb *nsb = malloc(sizeof *nsb);
	if (!nsb) {
		rk_strcatf(m->what, sizeof m->what, "; out of memory");
		return;
	}
	memcpy(nsb, f, sizeof *nsb);
	memcpy(nsb->member_uuid, f->roles[role].member_uuid, 16);
	nsb->this_role = role;
	nsb->dev_size = 0;   /* the device's size */
	nsb->data_offset = f->data_offset;
	rk_dev *dv = NULL;
	rk_err e = open_rw(o, pick, paths[pick], &dv);
	if (!e) {
		nsb->dev_size = rk_dev_size(dv);
		nsb->sb_offset = rk_sb_primary_offset(nsb->dev_size);
		e = rk_sb_write(dv, nsb);
	}
	rk_dev_close(dv);
	if (e) {
		rk_strcatf(m->what, sizeof m->what, "; writing its superblock failed: %s", rk_errmsg());
	} else {
		char u[37];
		uuid_unparse_lower(nsb->member_uuid, u);
		m->action = RK_RESTORE_ROLE;
		m->copies = 3;
		m->role = role;
		m->events = nsb->events;
		rk_strcatf(m->what, sizeof m->what, "; it is role %u (the only role without a member; %s): wrote both copies "
		           "from the other members' role table (member UUID %s, events %llu)", role, vwhy, u,
		           (unsigned long long)nsb->events);
	}
	free(nsb);
}

/* Step 2: members with neither copy, placed from the other members' table. */
static void restore_roles(char *const *paths, uint32_t npaths, const struct rk_restore_opts *o,
                          struct rk_restore_result *res)
{
	struct rk_discovery *d = NULL;
	if (rk_discover(&d, paths, npaths, NULL)) {
		for (uint32_t i = 0; i < npaths; i++)
			if (res->m[i].action == RK_RESTORE_SKIPPED)
				rk_strcatf(res->m[i].what, sizeof res->m[i].what, "; cannot place it: %s", rk_errmsg());
		return;
	}
	int64_t cand_a = -1, cand_r = -1;
	char whynot[512] = "";
	uint32_t ncand = waiting_roles(d, &cand_a, &cand_r, whynot, sizeof whynot);
	if (ncand != 1) {
		no_single_role(d, npaths, ncand, whynot, res);
		rk_discovery_free(d);
		return;
	}
	const struct rk_array_info *a = &d->arrays[cand_a];
	uint32_t role = (uint32_t)cand_r, pick = 0;
	uint32_t nsize = size_matches(paths, npaths, a, res, &pick);
	if (nsize != 1) {
		for (uint32_t i = 0; i < npaths; i++)
			if (res->m[i].action == RK_RESTORE_CANNOT && nsize > 1 && !strstr(res->m[i].what, "no member's size"))
				rk_strcatf(res->m[i].what, sizeof res->m[i].what,
				           "; %u files without a superblock could be role %u: not certain which", nsize, role);
		rk_discovery_free(d);
		return;
	}
	char vwhy[512] = "";
	if (check_place(a, role, paths[pick], o, &res->m[pick], vwhy, sizeof vwhy))
		write_role(paths, pick, o, a->sb, role, vwhy, &res->m[pick]);
	rk_discovery_free(d);
}

rk_err rk_recover_restore(char *const *paths, uint32_t npaths, const struct rk_restore_opts *o,
                          struct rk_restore_result **out)
{
	if (!out || (npaths && !paths))
		return rk_fail(RK_E_INVAL, "restore: bad arguments");
	*out = NULL;
	struct rk_restore_result *res = calloc(1, sizeof *res);
	struct rk_sb *tmp = malloc(sizeof *tmp);
	uint8_t *ba = malloc(RK_SB_AREA), *bb = malloc(RK_SB_AREA);
	if (res)
		res->m = calloc(npaths ? npaths : 1, sizeof *res->m);
	if (!res || !res->m || !tmp || !ba || !bb) {
		rk_restore_result_free(res);
		free(tmp);
		free(ba);
		free(bb);
		return rk_fail(RK_E_NOMEM, "restore: out of memory");
	}
	res->n = npaths;
	int pending = 0;
	for (uint32_t i = 0; i < npaths; i++) {
		res->m[i].path = paths[i];
		res->m[i].role = -1;
		restore_copies(o, i, &res->m[i], &pending, tmp, ba, bb);
	}
	free(tmp);
	free(ba);
	free(bb);
	if (pending)
		restore_roles(paths, npaths, o, res);
	for (uint32_t i = 0; i < npaths; i++) {
		if (res->m[i].action == RK_RESTORE_COPY || res->m[i].action == RK_RESTORE_ROLE)
			res->nrepaired++;
		if (res->m[i].action == RK_RESTORE_CANNOT)
			res->ncannot++;
	}
	*out = res;
	return RK_OK;
}

