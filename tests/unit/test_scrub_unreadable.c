/* test_scrub_unreadable.c: rk_scrub_run meeting read errors (the
 * read-error fault model): unreadable bytes reported to the sector with
 * their role, member and volume bytes, the rest checked with the
 * redundancy left, confirmed rebuilds rewritten and read back (repair),
 * unconfirmed ones only with rewrite_unconfirmed, dead members taken
 * whole. */
#include "scrub_fixture.h"

#define MAXU 16
struct both {
	struct got g;                /* first: on_region takes the context as a struct got */
	uint32_t nu;
	struct rk_scrub_unreadable u[MAXU];
	uint64_t total, whole;       /* every report, also past MAXU; of which a whole 64 KiB block */
};

static void on_unr(void *ctx, const struct rk_scrub_unreadable *u)
{
	struct both *b = ctx;
	b->total++;
	b->whole += u->member_len == 65536;
	if (b->nu >= MAXU)
		return;
	b->u[b->nu] = *u;
	b->u[b->nu].why = NULL;
	b->nu++;
}

/* REPAIR 2: repair with rewrite_unconfirmed. */
static rk_err scrub_u(struct arr *a, int repair, struct both *b, struct rk_scrub_stats *st, uint64_t batch)
{
	memset(b, 0, sizeof *b);
	struct rk_scrub_opts o = { .repair = repair != 0, .rewrite_unconfirmed = repair == 2, .on_region = on_region,
	                           .on_unreadable = on_unr, .ctx = b, .batch = batch };
	return rk_scrub_run(&a->g, a->devs, a->doff, 0, a->g.nstripes, &o, st);
}

/* Member ROLE of A behind a plan whose reads of member bytes [OFF, OFF+LEN)
 * fail with RK_E_IO (a write heals them). */
static rk_fault_plan *bad_range(struct arr *a, uint32_t role, uint64_t off, uint64_t len)
{
	struct rk_fault_spec sp = { .model = RK_FAULT_READ_ERROR, .member = (int)role, .off = off, .len = len };
	rk_fault_plan *p;
	REQ(rk_fault_plan_create(&p, &sp) == RK_OK);
	rk_dev *w;
	REQ(rk_dev_fault(&w, a->devs[role], p, (int)role) == RK_OK);
	a->devs[role] = w;
	return p;
}

/* Garbles member bytes under a plan: what an unreadable sector would give
 * back if it could be read at all. */
static void garble(rk_fault_plan *p, uint32_t role, uint64_t off, uint64_t len)
{
	uint8_t *d = rk_dev_mem_data(rk_fault_lower(p, (int)role));
	REQ(d);
	for (uint64_t i = 0; i < len; i++)
		d[off + i] ^= (uint8_t)(1 + rnd() % 255);
}

/* RAID-6: a read error inside a data block (not sector-piece aligned) is
 * reported to the sector with its role, member and volume bytes, the rest
 * of the array is checked, nothing is written; Q confirms what P rebuilds,
 * so --repair rebuilds the bytes (garbled underneath), writes and reads
 * them back, and the volume reads as written.  Column-sliced batches
 * report the same bytes. */
START_TEST(test_unreadable_raid6)
{
	struct arr a;
	arr_make(&a, 6, RK_ALG_LEFT_SYMMETRIC, 65536, 6, MSIZE);
	uint32_t vr[MAXR];
	struct rk_stripe_map m = { .vol_role = vr };
	REQ(rk_geom_stripe_map(&a.g, 5, &m) == RK_OK);
	uint32_t role = vr[2];
	uint64_t col = 8192 + 512, len = 4096 + 512, moff = DOFF + m.member_off + col;
	rk_fault_plan *p = bad_range(&a, role, moff, len);
	static struct both b;
	struct rk_scrub_stats st;
	REQ(scrub_u(&a, 0, &b, &st, 0) == RK_OK);
	REQ(b.g.n == 0 && st.mismatches == 0 && st.stripes == a.g.nstripes);
	REQ(b.nu == 1 && st.unreadable == 1 && st.unrecoverable == 0 && st.rewritten == 0);
	const struct rk_scrub_unreadable *u = &b.u[0];
	REQ(u->stripe == 5 && u->role == role && u->member_off == moff && u->member_len == len);
	REQ(u->is_data && u->offset == 5 * a.g.stripe_data + 2 * 65536 + col && u->length == len);
	REQ(u->recoverable && u->confirmed && u->fix == RK_SCRUB_UFIX_NONE);
	REQ(rk_fault_writes(p) == 0);
	/* small batches slice the chunk: the same bytes, in pieces that join up */
	REQ(scrub_u(&a, 0, &b, &st, 4096) == RK_OK);
	REQ(b.nu >= 1 && b.g.n == 0);
	uint64_t at = moff;
	for (uint32_t i = 0; i < b.nu; i++) {
		REQ(b.u[i].role == role && b.u[i].member_off == at && b.u[i].recoverable);
		at += b.u[i].member_len;
	}
	REQ(at == moff + len);
	/* repair: the bytes under the bad sectors are garbage; they come back */
	garble(p, role, moff, len);
	REQ(scrub_u(&a, 1, &b, &st, 0) == RK_OK);
	REQ(b.nu == 1 && b.u[0].fix == RK_SCRUB_UFIX_REWRITTEN && st.rewritten == 1 && st.rewrite_failed == 0);
	REQ(rk_fault_writes(p) >= 1);
	REQ(scrub_u(&a, 0, &b, &st, 0) == RK_OK);
	REQ(b.nu == 0 && b.g.n == 0);
	vol_equal(&a, 1);
	rk_fault_plan_free(p);
	arr_free(&a);
}
END_TEST

/* Redundancy left decides, sector by sector: RAID-6 with a member absent
 * can rebuild an unreadable block (two lost of two) but nothing confirms
 * it: rewritten only with rewrite_unconfirmed; two unreadable blocks in
 * one stripe with a member absent cannot be rebuilt (reported, nothing
 * written); RAID-5 rebuilds one unreadable block per stripe, not two. */
START_TEST(test_unreadable_degraded)
{
	struct arr a;
	arr_make(&a, 6, RK_ALG_LEFT_SYMMETRIC, 65536, 6, MSIZE);
	uint32_t vr[MAXR];
	struct rk_stripe_map m = { .vol_role = vr };
	REQ(rk_geom_stripe_map(&a.g, 7, &m) == RK_OK);
	uint32_t bad = vr[0], bad2 = m.q_role, gone = vr[3];
	uint64_t moff = DOFF + m.member_off + 4096;
	rk_fault_plan *p = bad_range(&a, bad, moff, 8192);
	garble(p, bad, moff, 8192);
	rk_dev *keep = a.devs[gone];
	a.devs[gone] = NULL;
	static struct both b;
	struct rk_scrub_stats st;
	/* two blocks lost of two: rebuildable, but nothing confirms it */
	REQ(scrub_u(&a, 1, &b, &st, 0) == RK_OK);
	REQ(b.nu == 1 && b.u[0].role == bad && b.u[0].recoverable && !b.u[0].confirmed);
	REQ(b.u[0].fix == RK_SCRUB_UFIX_NONE && rk_fault_writes(p) == 0 && b.g.n == 0);
	REQ(scrub_u(&a, 2, &b, &st, 0) == RK_OK);
	REQ(b.nu == 1 && b.u[0].role == bad && b.u[0].fix == RK_SCRUB_UFIX_REWRITTEN);
	REQ(b.g.n == 0);
	vol_equal(&a, 1);   /* read degraded: the rewritten bytes are right */
	/* a second unreadable block in the stripe (Q) with the member absent */
	rk_fault_plan *p2 = bad_range(&a, bad2, moff, 4096);
	rk_fault_plan_free(p);
	p = bad_range(&a, bad, moff, 4096);   /* again unreadable (the rewrite healed it) */
	uint64_t w0 = rk_fault_writes(p) + rk_fault_writes(p2);
	REQ(scrub_u(&a, 2, &b, &st, 0) == RK_OK);
	REQ(b.nu == 2 && st.unrecoverable == 2 && st.rewritten == 0);
	for (uint32_t i = 0; i < 2; i++)
		REQ(!b.u[i].recoverable && b.u[i].fix == RK_SCRUB_UFIX_NONE && b.u[i].stripe == 7);
	REQ(b.u[0].role == (bad < bad2 ? bad : bad2) && b.u[0].member_len == 4096);
	REQ(rk_fault_writes(p) + rk_fault_writes(p2) == w0);
	a.devs[gone] = keep;
	rk_fault_plan_free(p);
	rk_fault_plan_free(p2);
	arr_free(&a);

	/* RAID-5: two unreadable blocks in one stripe are one too many */
	arr_make(&a, 5, RK_ALG_LEFT_SYMMETRIC, 65536, 4, MSIZE);
	REQ(rk_geom_stripe_map(&a.g, 3, &m) == RK_OK);
	moff = DOFF + m.member_off;
	p = bad_range(&a, vr[1], moff, 1024);
	p2 = bad_range(&a, m.p_role, moff + 512, 1024);
	REQ(scrub_u(&a, 1, &b, &st, 0) == RK_OK);
	REQ(b.nu == 4 && st.unrecoverable == 2 && st.rewritten == 0);
	REQ(rk_fault_writes(p) == 0 && rk_fault_writes(p2) == 0);
	REQ(scrub_u(&a, 2, &b, &st, 0) == RK_OK);
	/* vr[1]: sector 0 rebuildable, sector 1 not; P: sector 1 not, sector 2 rebuildable */
	REQ(b.nu == 4 && st.unrecoverable == 2 && st.rewritten == 2 && st.unreadable == 4);
	for (uint32_t i = 0; i < 4; i++) {
		const struct rk_scrub_unreadable *u = &b.u[i];
		REQ(u->member_len == 512 && u->stripe == 3);
		int both = u->member_off == moff + 512;
		REQ(u->recoverable == !both);
		REQ(u->fix == (both ? RK_SCRUB_UFIX_NONE : RK_SCRUB_UFIX_REWRITTEN));
	}
	REQ(st.stripes == a.g.nstripes && st.mismatches == 0);
	rk_fault_plan_free(p);
	rk_fault_plan_free(p2);
	arr_free(&a);
}
END_TEST

/* A read error on P is reported as parity (the stripe's span) and, as
 * nothing confirms a RAID-5 rebuild, rewritten only with
 * rewrite_unconfirmed; on RAID-6 a read error beside a corrupted data block
 * still lets Q find the mismatch (not located: the unreadable block counts
 * as missing), and repair writes nothing there. */
START_TEST(test_unreadable_parity_and_mismatch)
{
	struct arr a;
	arr_make(&a, 5, RK_ALG_LEFT_SYMMETRIC, 65536, 4, MSIZE);
	uint32_t vr[MAXR];
	struct rk_stripe_map m = { .vol_role = vr };
	REQ(rk_geom_stripe_map(&a.g, 2, &m) == RK_OK);
	rk_fault_plan *p = bad_range(&a, m.p_role, DOFF + m.member_off + 1024, 1024);
	static struct both b;
	struct rk_scrub_stats st;
	REQ(scrub_u(&a, 0, &b, &st, 0) == RK_OK);
	REQ(b.nu == 1 && !b.u[0].is_data && b.u[0].role == m.p_role && b.u[0].recoverable && !b.u[0].confirmed);
	REQ(b.u[0].offset == 2 * a.g.stripe_data + 1024 && b.u[0].length == 2 * 65536 + 1024);
	REQ(scrub_u(&a, 1, &b, &st, 0) == RK_OK && st.rewritten == 0 && rk_fault_writes(p) == 0);
	REQ(scrub_u(&a, 2, &b, &st, 0) == RK_OK && st.rewritten == 1);
	REQ(scrub_u(&a, 0, &b, &st, 0) == RK_OK && b.nu == 0 && b.g.n == 0);
	rk_fault_plan_free(p);
	arr_free(&a);

	arr_make(&a, 6, RK_ALG_LEFT_SYMMETRIC, 65536, 6, MSIZE);
	REQ(rk_geom_stripe_map(&a.g, 4, &m) == RK_OK);
	flip(&a, vr[1], m.member_off + 16384, 512);
	p = bad_range(&a, vr[0], DOFF + m.member_off, 65536);
	REQ(scrub_u(&a, 0, &b, &st, 0) == RK_OK);
	REQ(b.nu == 1 && b.u[0].role == vr[0] && b.u[0].member_len == 65536 && b.u[0].recoverable);
	REQ(b.g.n == 1 && b.g.r[0].stripe == 4 && b.g.r[0].verdict == RK_SCRUB_UNLOCATED);
	REQ(strstr(b.g.why[0], "unreadable"));
	REQ(b.g.r[0].member_len == 512 && b.g.nlocs[0] == 5);
	REQ(!b.u[0].confirmed);
	/* with --repair: neither the mismatch nor the unreadable block is
	 * written (each would build on the other) */
	REQ(scrub_u(&a, 2, &b, &st, 0) == RK_OK);
	REQ(b.nu == 1 && b.u[0].fix == RK_SCRUB_UFIX_NONE && b.g.n == 1 && b.g.r[0].fix == RK_SCRUB_FIX_NONE);
	REQ(rk_fault_writes(p) == 0 && st.repaired == 0);
	rk_fault_plan_free(p);
	arr_free(&a);
}
END_TEST

/* Mirrors: another readable copy rebuilds the unreadable one (confirmed by
 * a third copy, else only with rewrite_unconfirmed); a member that is
 * pulled mid-scrub makes every later block of it unreadable and the run
 * still ends, everything recoverable. */
START_TEST(test_unreadable_mirror_and_pull)
{
	struct arr a;
	arr_make(&a, 1, 0, 0, 2, MSIZE);
	rk_fault_plan *p = bad_range(&a, 1, DOFF + 300000, 5000);
	garble(p, 1, DOFF + 300000, 5000);
	static struct both b;
	struct rk_scrub_stats st;
	REQ(scrub_u(&a, 0, &b, &st, 0) == RK_OK);
	/* sector-rounded: 300000 is in sector 585, 304999 in sector 595 */
	REQ(b.nu == 1 && b.u[0].member_off == DOFF + 585 * 512 && b.u[0].member_len == 11 * 512);
	REQ(b.u[0].offset == 585 * 512 && b.u[0].is_data && b.u[0].recoverable && !b.u[0].confirmed);
	REQ(scrub_u(&a, 1, &b, &st, 0) == RK_OK && st.rewritten == 0);
	REQ(scrub_u(&a, 2, &b, &st, 0) == RK_OK && st.rewritten == 1);
	vol_equal(&a, 1);
	rk_fault_plan_free(p);
	arr_free(&a);
	/* three copies: the two readable ones agree and confirm the third */
	arr_make(&a, 1, 0, 0, 3, MSIZE);
	p = bad_range(&a, 2, DOFF + 4096, 4096);
	garble(p, 2, DOFF + 4096, 4096);
	REQ(scrub_u(&a, 1, &b, &st, 0) == RK_OK);
	REQ(b.nu == 1 && b.u[0].confirmed && b.u[0].fix == RK_SCRUB_UFIX_REWRITTEN && st.rewritten == 1);
	vol_equal(&a, 1);
	REQ(scrub_u(&a, 0, &b, &st, 0) == RK_OK && b.nu == 0 && b.g.n == 0);
	rk_fault_plan_free(p);
	arr_free(&a);

	arr_make(&a, 6, RK_ALG_LEFT_SYMMETRIC, 65536, 5, MSIZE);
	struct rk_fault_spec sp = { .model = RK_FAULT_PULL, .member = 2, .n = 3 };
	REQ(rk_fault_plan_create(&p, &sp) == RK_OK);
	rk_dev *w;
	REQ(rk_dev_fault(&w, a.devs[2], p, 2) == RK_OK);
	a.devs[2] = w;
	REQ(scrub_u(&a, 0, &b, &st, 4 * 65536) == RK_OK);
	REQ(rk_fault_fired(p) && st.unreadable > 0 && st.unrecoverable == 0);
	REQ(st.stripes == a.g.nstripes && st.mismatches == 0);
	/* from its I/O #3 (the fourth batch of 4 stripes) nothing of role 2
	 * reads: every later chunk of it is reported whole (probed sector by
	 * sector at first, then taken whole once the member looks dead) */
	REQ(b.total == st.unreadable && b.whole == st.unreadable && b.whole == a.g.nstripes - 3 * 4);
	rk_fault_plan_free(p);
	arr_free(&a);
}
END_TEST

RK_TEST_SUITE("scrub_unreadable", { "scrub_unreadable", 120, NULL, NULL, 0,
	  RK_TESTS(RK_TEST(test_unreadable_raid6),
	           RK_TEST(test_unreadable_degraded),
	           RK_TEST(test_unreadable_parity_and_mismatch),
	           RK_TEST(test_unreadable_mirror_and_pull)) })
