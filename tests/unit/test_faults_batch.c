/* test_faults_batch.c: crash safety of the journal's group commit
 * (spec/journal.md "Group commit"), by the harness of test_faults.c.
 *
 * The partial-stripe and degraded paths run with every op written first
 * and one flush at the end (faults_writes.h batch_ops), so the small
 * writes wait in the batch and go to the members as one commit: a record
 * per member holding several writes, one flush, then the in-place writes.
 * Extra ops make the batch merge: a write in the stripe of a batched one
 * (its parity computed from the members, then corrected for the batch),
 * and one overwriting part of a batched write's bytes (on RAID-6 the Q
 * correction multiplies by the data block's coefficient; the sector the
 * engine rounds it to keeps the batched bytes around it).  It lies inside
 * the first one's bytes, so a sector is old or new whichever of the two
 * reaches the members (the model has one new value per byte).  Power cuts and kills at
 * every write (between the batch's record appends, between them and the
 * flush, among the in-place writes), cable pulls, and sequences of crashes
 * (a crash during the recovery of a crash; crashes twice and more in a
 * row; a crash then a member lost).  After each point the invariants of
 * test_faults.c: the array assembles with every member in step, flushed
 * writes intact, unflushed ones old or new per sector, no write hole with
 * any member (any two on RAID-6) lost, scrub clean after the next writing
 * open. */
#include "faults_writes.h"

/* Adds to the path's first three ops (stripes 0, 2, 3) a write in
 * another data block of stripe 0 (the third: on the degraded path the
 * second is missing) and one inside the first op's bytes, before the
 * degraded path's full stripe (which commits the batch). */
static void add_merge_ops(struct run *R)
{
	uint64_t ch = R->c->chunk ? R->c->chunk : 4096;
	if (R->c->level == 1 || R->nops < 3 || R->nops + 2 > 8)
		return;
	struct op extra[2] = { { (R->p == P_DEGRADED ? 2 : 1) * ch + 200, 500, 0 }, { ch / 2 + 300, 500, 0 } };
	for (uint32_t i = R->nops; i-- > 3;)
		R->ops[i + 2] = R->ops[i];
	R->ops[3] = extra[0];
	R->ops[4] = extra[1];
	R->nops += 2;
	for (uint32_t i = 0; i < R->nops; i++)
		ck_assert_uint_le(R->ops[i].off + R->ops[i].len, R->vsize);
}

/* RK_FAULTS_POINT=MODEL:N:MEMBER runs that point alone (debugging). */
static int only_point(struct run *R)
{
	const char *e = getenv("RK_FAULTS_POINT");
	int m, n, mem;
	if (!e || sscanf(e, "%d:%d:%d", &m, &n, &mem) != 3)
		return 0;
	count_writes(R);
	struct rk_fault_spec sp = { .model = (enum rk_fault_model)m, .n = (uint64_t)n, .member = mem, .seed = (uint64_t)n };
	point(R, &sp);
	return 1;
}

static void enumerate_batch(struct run *R)
{
	const struct cfg *c = R->c;
	if (only_point(R))
		return;
	uint64_t W = count_writes(R);
	uint64_t step = full_mode ? 1 : THIN(2);
	int seeds = full_mode ? 12 : 1;
	for (uint64_t n = 0; n <= W; n += step)
		for (int s = 0; s < seeds; s++) {
			struct rk_fault_spec sp = { .model = RK_FAULT_POWER_CUT, .n = n, .seed = n * 31 + (uint64_t)s * 7919 + 1 };
			point(R, &sp);
		}
	for (uint64_t n = (step > 1 ? 1 : 0); n < W; n += step) {
		struct rk_fault_spec sp = { .model = RK_FAULT_KILL, .n = n, .seed = n };
		point(R, &sp);
	}
	uint64_t per = W / c->n + 12;
	for (uint32_t m = 0; m < c->n; m++) {
		if ((int)m == R->missing)
			continue;
		for (uint64_t n = m % (2 * step); n < per; n += 2 * step) {
			struct rk_fault_spec sp = { .model = RK_FAULT_PULL, .n = n, .member = (int)m, .seed = n };
			point(R, &sp);
		}
	}
	if (full_mode || (R->p == P_PARTIAL && c->level == 6))
		enumerate_sequences(R, W);
}

/* Sample mode (make check): RAID-5 of 4, RAID-6 of 5, RAID-10 of 4, the
 * sequences on RAID-6's partial path only (Q merges too); RK_FAULTS=full
 * every configuration, every path. */
static int sampled(const struct cfg *c)
{
	return (c->level == 5 && c->n == 4) || (c->level == 6 && c->n == 5) || (c->level == 10 && c->n == 4);
}

START_TEST(t_batch)
{
	const struct cfg *c = &cfgs[_i / 2];
	enum path p = _i % 2 ? P_DEGRADED : P_PARTIAL;
	struct run R;
	if (!full_mode && !sampled(c))
		return;
	batch_ops = 1;
	setup_run(&R, c, p);
	add_merge_ops(&R);
	enumerate_batch(&R);
	finish_run(&R, path_names[p]);
	batch_ops = 0;
}
END_TEST

RK_TEST_SUITE("faults_batch", { "group commit", 36000, setup, teardown, 0,
	  RK_TESTS(RK_TEST_LOOP(t_batch, 0, (int)NCFG * 2)) })
