/* faults_writes.h: the array write paths and scrub repair under faults,
 * shared by test_faults.c (single faults) and test_faults_seq.c (fault
 * sequences): one run of a path's writes under a fault plan, the
 * invariants checked after it (issue 6, and (a) to (d) of issue 12), and
 * a sequence of faults.  The method: test_faults.c. */
#ifndef FAULTS_WRITES_H
#define FAULTS_WRITES_H

#include "faults_fixture.h"

/* raid-scrub --repair as the tool runs it: the library operation over the
 * members (it opens the array for writing around the repair). */
FIXTURE rk_err run_repair(const struct run *R, const struct rk_sb *tmpl, rk_dev **devs, struct rk_sb **sbs)
{
	struct rk_scrub_members m;
	rk_scrub_array_use_members(&m, tmpl, R->c->n, devs, (const struct rk_sb *const *)sbs);
	struct rk_scrub_array_opts so = { .repair = 1, .no_map = 1, .checkpoint_mode = RK_SCRUB_CKPT_NONE };
	struct rk_scrub_array_result res;
	return rk_scrub_array(&m, &so, &res);
}

/* Opens every member file (but the one left out and the pulled one)
 * through PLAN into DEVS with its superblock in SBS; TMPL gets the
 * freshest, as discovery would choose.  0 when no superblock was read. */
FIXTURE int open_members(const struct run *R, rk_fault_plan *plan, rk_dev **devs, struct rk_sb **sbs,
                         struct rk_sb *tmpl)
{
	int have = 0;
	for (uint32_t r = 0; r < R->c->n; r++) {
		if ((int)r == R->missing || (int)r == R->pulled)
			continue;
		rk_dev *d = NULL;
		ck_assert_int_eq(rk_dev_open(&d, paths[r], RK_DEV_RDWR), RK_OK);
		ck_assert_int_eq(rk_dev_fault(&devs[r], d, plan, (int)r), RK_OK);
		struct rk_sb_read rd;
		rk_err e = rk_sb_read(devs[r], &rd);
		if (e == RK_OK) {
			sbs[r] = malloc(sizeof *sbs[r]);
			memcpy(sbs[r], rd.copy[rd.chosen].sb, sizeof *sbs[r]);
			if (!have || sbs[r]->events > tmpl->events)
				memcpy(tmpl, sbs[r], sizeof *tmpl);
			have = 1;
		}
		rk_sb_read_free(&rd);
		if (e) {   /* a pull or read error while reading the superblock: leave it out */
			rk_dev_close(devs[r]);
			devs[r] = NULL;
		}
	}
	return have;
}

/* Under the read-error model: a read error met by a read through the
 * writable array A is repaired in place (the member stays, the next read
 * is clean); R->re_kept says the member was kept. */
FIXTURE void check_read_repair(struct run *R, const struct rk_fault_spec *spec, rk_array *a)
{
	uint32_t f0 = rk_array_nfailed(a);
	uint8_t *chk = malloc(R->vsize);
	char why[300];
	rk_err re = rk_array_read(a, chk, R->vsize, 0);
	if (re == RK_E_TOOFEW && R->missing >= 0)
		;   /* degraded: where no redundancy is left a bad block cannot be rebuilt */
	else if (re)
		violation(R, spec, "a read through the writable array fails: %s", rk_errmsg());
	else if (check_model(R, chk, why, sizeof why))
		violation(R, spec, "a read through the writable array: %s", why);
	else if (rk_array_nfailed(a) != f0)
		violation(R, spec, "the read error failed a member instead of repairing it");
	else {
		uint64_t n1 = rk_array_nrepaired(a, NULL);
		if ((re = rk_array_read(a, chk, R->vsize, 0)) || rk_array_nrepaired(a, NULL) != n1 ||
		    rk_array_nfailed(a) != f0)
			violation(R, spec, "after the repair a second read meets the error again (%s)",
			          re ? rk_errmsg() : "repaired twice");
		R->re_kept = f0 == 0;
	}
	free(chk);
}

/* Set by test_faults_batch.c: every op written, then one flush (the
 * journal's group commit batches them), instead of a flush after each. */
FIXTURE int batch_ops;

/* The path's ops through the writable array A, each written and flushed
 * (batch_ops: all written, then flushed once); R->ops[].state says how far
 * each got.  The first error. */
FIXTURE rk_err write_ops(struct run *R, rk_array *a)
{
	/* RK_FAULTS_NOJOURNAL=1: shows what the harness finds without the journal */
	if (getenv("RK_FAULTS_NOJOURNAL"))
		rk_array_set_journal(a, 0);
	if (batch_ops) {
		for (uint32_t i = 0; i < R->nops; i++) {
			R->ops[i].state = 1;
			rk_err e = rk_array_write(a, R->newv + R->ops[i].off, (size_t)R->ops[i].len, R->ops[i].off);
			if (e)
				return e;
		}
		rk_err e = rk_array_flush(a);
		for (uint32_t i = 0; i < R->nops && !e; i++)
			R->ops[i].state = 2;
		return e;
	}
	for (uint32_t i = 0; i < R->nops; i++) {
		R->ops[i].state = 1;
		rk_err e = rk_array_write(a, R->newv + R->ops[i].off, (size_t)R->ops[i].len, R->ops[i].off);
		if (!e)
			e = rk_array_flush(a);
		if (e)
			return e;
		R->ops[i].state = 2;
	}
	return RK_OK;
}

/* Runs the path's writes under SPEC; returns the writes issued. */
FIXTURE uint64_t run_writes(struct run *R, const struct rk_fault_spec *spec, rk_err *last, int *fired)
{
	rk_fault_plan *plan = NULL;
	ck_assert_int_eq(rk_fault_plan_create(&plan, spec), RK_OK);
	rk_dev *devs[MAXM] = { 0 };
	struct rk_sb *sbs[MAXM] = { 0 };
	struct rk_sb tmpl;
	int have = open_members(R, plan, devs, sbs, &tmpl);
	for (uint32_t i = 0; i < R->nops; i++)
		R->ops[i].state = 0;
	rk_array *a = NULL;
	rk_err e = !have ? RK_E_TOOFEW
	         : R->p == P_REPAIR ? run_repair(R, &tmpl, devs, sbs)
	         : rk_array_open_devs(&a, &tmpl, devs, (const struct rk_sb *const *)sbs, RK_ARRAY_RDWR);
	R->re_kept = 0;
	if (e == RK_OK && a) {
		const char *msg = NULL;
		rk_array_replayed(a, &msg);
		if (msg && strstr(msg, "torn"))
			R->told_torn = 1;
		e = write_ops(R, a);
		if (spec->model == RK_FAULT_READ_ERROR && !e)
			check_read_repair(R, spec, a);
		rk_err ce = rk_array_close(a);
		if (!e)
			e = ce;
	}
	*last = e;
	uint64_t w = rk_fault_writes(plan);
	*fired = rk_fault_fired(plan);
	if (spec->model == RK_FAULT_POWER_CUT)
		ck_assert_int_eq(rk_fault_crash(plan), RK_OK);
	for (uint32_t r = 0; r < R->c->n; r++) {
		rk_dev_close(devs[r]);
		free(sbs[r]);
	}
	rk_fault_plan_free(plan);
	return w;
}

/* Right after the fault: a pulled member is never used again; (a) every
 * other member in step; a member whose read error was repaired stays. */
FIXTURE void check_members_after(struct run *R, const struct rk_fault_spec *spec, rk_err last, int fired)
{
	const struct cfg *c = R->c;
	if (spec->model == RK_FAULT_PULL && fired) {
		struct rk_discovery *d = discover_skip(c->n, 0);
		/* unless it was the last one standing: then the write stopped (too few) */
		if (last != RK_E_TOOFEW && d->narrays == 1 && d->arrays[0].roles[spec->member].cls == RK_MEMBER_ACTIVE &&
		    d->arrays[0].roles[spec->member].path)
			violation(R, spec, "the pulled member is still active (%s; the write returned %s)", d->arrays[0].why,
			          rk_strerror(last));
		rk_discovery_free(d);
	}
	uint32_t allowed = 0;
	if (R->missing >= 0)
		allowed |= 1u << R->missing;
	if (R->pulled >= 0)
		allowed |= 1u << R->pulled;
	if ((spec->model == RK_FAULT_PULL && fired) || spec->model == RK_FAULT_READ_ERROR)
		allowed |= 1u << spec->member;
	check_in_step(R, spec, c->n, allowed);
	if (spec->model == RK_FAULT_READ_ERROR && R->re_kept) {
		struct rk_discovery *d = discover_skip(c->n, 0);
		if (d->narrays != 1 || d->arrays[0].roles[spec->member].cls != RK_MEMBER_ACTIVE)
			violation(R, spec, "the member with the repaired read error is not active");
		rk_discovery_free(d);
	}
}

/* A read-write open (the replay goes to the members) and close; 0 when
 * both went well. */
FIXTURE int reopen_rw(struct run *R, const struct rk_fault_spec *spec)
{
	struct rk_discovery *d = discover_skip(R->c->n, 0);
	rk_array *a = NULL;
	rk_err e = d->narrays == 1 ? rk_array_open(&a, &d->arrays[0], RK_ARRAY_RDWR) : RK_E_NOSB;
	if (e)
		violation(R, spec, "read-write open: %s", rk_errmsg());
	else if ((e = rk_array_close(a)))
		violation(R, spec, "close after replay: %s", rk_errmsg());
	rk_discovery_free(d);
	return e != RK_OK;
}

/* The write hole, after the replay: any member (any two on RAID-6) left
 * out, the volume reads V exactly.  W is scratch. */
FIXTURE void check_write_hole(struct run *R, const struct rk_fault_spec *spec, const uint8_t *v, uint8_t *w)
{
	const struct cfg *c = R->c;
	char why[600];
	int state;
	struct rk_discovery *d = discover_skip(c->n, 0);
	uint32_t active = 0;
	for (uint32_t r = 0; r < c->n; r++)
		if (d->arrays[0].roles[r].cls == RK_MEMBER_ACTIVE)
			active |= 1u << r;
	rk_discovery_free(d);
	for (uint32_t x = 0; x < c->n; x++)
		for (uint32_t y = x; y < c->n; y++) {
			uint32_t skip = (1u << x) | (1u << y);
			if ((y != x && c->level != 6) || (skip & active) != skip)
				continue;
			/* sample mode: one member (one pair on RAID-6) per point, in turn */
			if (!full_mode && (x != R->points % c->n || (y != x && y != (x + 1) % c->n)))
				continue;
			/* stale members stay out too: alone they would look fresh */
			if (read_volume(c->n, skip | (~active & ((1u << c->n) - 1)), w, R->vsize, &state, why, sizeof why))
				continue;   /* too few once these are left out */
			if (memcmp(v, w, R->vsize)) {
				uint64_t b = 0;
				while (b < R->vsize && v[b] == w[b])
					b++;
				violation(R, spec, "write hole: without role%s %u%s%.0u the volume differs at byte %llu",
				          x == y ? "" : "s", x, x == y ? "" : ",", x == y ? 0 : y, (unsigned long long)b);
				return;
			}
		}
}

/* Scrub repair: what the interrupted repair left, a second repair
 * finishes without changing the volume V (W scratch), and the scrub is
 * clean then. */
FIXTURE void check_repair_again(struct run *R, const struct rk_fault_spec *spec, const uint8_t *v, uint8_t *w);

/* Reads the volume with every member given into V (read-only, the replay
 * in memory) and checks it against the model: 0 when it reads as it may,
 * else 1 (a violation reported, or the known double fault counted). */
FIXTURE int check_volume_after(struct run *R, const struct rk_fault_spec *spec, rk_err last, uint8_t *v)
{
	const struct cfg *c = R->c;
	char why[600], msg[600];
	int state;
	enum rk_array_replay rp;
	if (read_volume_replay(c->n, 0, v, R->vsize, &rp, msg, sizeof msg) == 0 && strstr(msg, "torn"))
		R->told_torn = 1;
	if (read_volume(c->n, 0, v, R->vsize, &state, why, sizeof why)) {
		/* a pull on a degraded array may leave too few: then the write must have said so */
		if (!(spec->model == RK_FAULT_PULL && R->missing >= 0 && c->level != 6 && state == RK_ASTATE_FAILED &&
		      last == RK_E_TOOFEW))
			violation(R, spec, "does not assemble: %s (write returned %s)", why, rk_strerror(last));
		return 1;
	}
	if (!check_model(R, v, why, sizeof why))
		return 0;
	/* a crash in a write-intent window, then a member lost: the known
	 * double fault (spec/journal.md "Limits"), told if an open said so */
	if (R->p == P_FULL && (R->told_torn || R->kind == K_SEQ_CRASH_PULL)) {
		R->double_faults++;
		R->double_faults_silent += !R->told_torn;
		return 1;
	}
	violation(R, spec, "read-only (replay in memory): %s", why);
	return 1;
}

/* The invariants after one fault point (or sequence) of a write path:
 * the members, the volume against the model, (c) one more member lost,
 * the replay on the members equal to the one in memory with both copies
 * of every superblock valid, (d) the scrub, and the write hole. */
FIXTURE void verify_writes(struct run *R, const struct rk_fault_spec *spec, rk_err last, int fired)
{
	const struct cfg *c = R->c;
	char why[600];
	uint8_t *v = malloc(R->vsize), *w = malloc(R->vsize);
	int state;
	check_members_after(R, spec, last, fired);
	if (check_volume_after(R, spec, last, v))
		goto out;
	if (R->p != P_REPAIR)   /* there the bad parity is a first fault: checked after the repair */
		check_lose_one(R, spec);
	if (reopen_rw(R, spec))
		goto out;
	if (check_copies(c->n, why, sizeof why))
		violation(R, spec, "%s", why);
	if (R->p != P_REPAIR)
		check_scrub_clean(R, spec);
	if (read_volume(c->n, 0, w, R->vsize, &state, why, sizeof why)) {
		violation(R, spec, "after replay: %s", why);
		goto out;
	}
	if (memcmp(v, w, R->vsize)) {
		violation(R, spec, "replay on the members reads differently from the replay in memory");
		goto out;
	}
	if (R->p == P_REPAIR)
		check_repair_again(R, spec, v, w);
	check_write_hole(R, spec, v, w);
out:
	free(v);
	free(w);
}

FIXTURE void check_repair_again(struct run *R, const struct rk_fault_spec *spec, const uint8_t *v, uint8_t *w)
{
	char why[600];
	int state;
	struct rk_fault_spec none = { .model = RK_FAULT_NONE };
	rk_err l2;
	int f2;
	run_writes(R, &none, &l2, &f2);
	if (l2 && l2 != RK_E_TOOFEW)
		violation(R, spec, "the repair run again fails: %s", rk_strerror(l2));
	if (read_volume(R->c->n, 0, w, R->vsize, &state, why, sizeof why) || memcmp(v, w, R->vsize)) {
		violation(R, spec, "the second repair changed the volume");
		return;
	}
	check_scrub_clean(R, spec);
}

FIXTURE void point(struct run *R, const struct rk_fault_spec *spec)
{
	restore_base(R);
	rk_err last;
	int fired = 0;
	count_point(R, model_kind(spec->model));
	run_writes(R, spec, &last, &fired);
	verify_writes(R, spec, last, fired);
}

/* Can the path run on with one more member gone (after a crash)? */
FIXTURE int may_pull(const struct run *R)
{
	uint32_t gone = R->missing >= 0 ? 2 : 1;
	if (R->p == P_REPAIR)
		return 0;   /* the array starts with bad parity: a pull rebuilds from it (two faults) */
	return R->c->level == 6 ? gone <= 2 : R->c->level == 1 ? gone < R->c->n : gone <= 1;
}

/* RK_FAULTS_KEEP=DIR: the member files as a sequence left them, copied
 * into DIR (it must exist) before they are checked, for a look. */
FIXTURE void keep_members(const struct run *R)
{
	const char *keep = getenv("RK_FAULTS_KEEP");
	for (uint32_t i = 0; keep && i < R->c->n; i++) {
		char p[400];
		snprintf(p, sizeof p, "%s/m%u", keep, i);
		uint8_t *b = get_file(paths[i], MEMBER_BYTES);
		put_file(p, b, MEMBER_BYTES);
		free(b);
	}
}

/* One sequence of kind K from SEED: NCRASH runs of the path's writes, each
 * cut short by a random crash (the second, for seq-recovery, early: the
 * journal replay, the superblocks brought forward, the first write); for
 * seq-crash-pull a member is left out from the second run on (a cable
 * pulled after the crash) and the runs go on degraded.  A last run
 * without a fault completes the writes only for seq-crashes every other
 * time, so that both an interrupted and a finished recovery are checked.
 * Every run writes the same new bytes, so an op's state is the furthest
 * any run got.  Then the invariants of a single point, (a) to (d). */
FIXTURE void sequence(struct run *R, uint64_t W, enum kind k, uint64_t seed)
{
	uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
	uint32_t ncrash = k == K_SEQ_CRASHES ? 2 + (uint32_t)(rnd(&x) % 4) : k == K_SEQ_RECOVERY ? 2 : 1 + (uint32_t)(rnd(&x) % 3);
	int finish = k == K_SEQ_CRASHES && (seed & 1);
	int merged[8] = { 0 };
	struct rk_fault_spec sp = { .model = RK_FAULT_NONE };
	rk_err last = RK_OK;
	int fired = 0;
	const char *only = getenv("RK_FAULTS_SEED");   /* replay one sequence, traced */
	if (only && strtoull(only, NULL, 0) != seed)
		return;
	restore_base(R);
	count_point(R, k);
	for (uint32_t i = 0; i < ncrash + (uint32_t)finish; i++) {
		if (k == K_SEQ_CRASH_PULL && i == 1) {
			do
				R->pulled = (int)(rnd(&x) % R->c->n);
			while (R->pulled == R->missing);
		}
		uint64_t span = k == K_SEQ_RECOVERY && i == 1 ? 6u * R->c->n + 8 : W + W / 4 + 1;
		sp = i < ncrash ? random_crash(&x, span) : (struct rk_fault_spec){ .model = RK_FAULT_NONE };
		sp.seed ^= seed << 8;
		run_writes(R, &sp, &last, &fired);
		if (only)
			printf("%s run %u: %s at %llu seed %llu (pulled %d): %s\n", kind_names[k], i, model_names[sp.model],
			       (unsigned long long)sp.n, (unsigned long long)sp.seed, R->pulled, rk_strerror(last));
		for (uint32_t j = 0; j < R->nops; j++)
			if (R->ops[j].state > merged[j])
				merged[j] = R->ops[j].state;
	}
	for (uint32_t j = 0; j < R->nops; j++)
		R->ops[j].state = merged[j];
	sp.seed = seed;   /* the violation line names the sequence */
	if (k == K_SEQ_CRASH_PULL && last == RK_E_TOOFEW)
		last = RK_OK;
	keep_members(R);
	verify_writes(R, &sp, last, fired);
	R->pulled = -1;
}

/* Sequences of every kind: N of each (fewer in sample mode).  With
 * RK_FAULTS_SHARD=I/K only every K-th sequence from the I-th runs, so that
 * tests/run-faults.sh can spread the full set over the CPUs. */
FIXTURE void enumerate_sequences(struct run *R, uint64_t W)
{
	uint64_t n = full_mode ? 480 : FEW(24), shard = 0, nshards = 1;
	const char *sh = getenv("RK_FAULTS_SHARD");
	if (sh && sscanf(sh, "%llu/%llu", (unsigned long long *)&shard, (unsigned long long *)&nshards) != 2)
		shard = 0, nshards = 1;
	if (!nshards)
		nshards = 1;
	for (uint64_t i = shard; i < n; i += nshards) {
		uint64_t seed = ((uint64_t)R->c->level << 40) ^ ((uint64_t)R->c->n << 32) ^ ((uint64_t)R->p << 24) ^ i;
		sequence(R, W, K_SEQ_RECOVERY, seed);
		sequence(R, W, K_SEQ_CRASHES, seed);
		if (may_pull(R))
			sequence(R, W, K_SEQ_CRASH_PULL, seed);
	}
}

/* The fault-free run of the path (R set up by setup_run): its write count,
 * the fault points' range. */
FIXTURE uint64_t count_writes(struct run *R)
{
	struct rk_fault_spec none = { .model = RK_FAULT_NONE };
	restore_base(R);
	rk_err last;
	int fired;
	uint64_t W = run_writes(R, &none, &last, &fired);
	ck_assert_msg(last == RK_OK, "fault-free run: %s", rk_errmsg());
	ck_assert_uint_gt(W, 4);
	verify_writes(R, &none, last, 0);
	for (uint32_t i = 0; i < R->nops; i++)
		ck_assert_int_eq(R->ops[i].state, 2);
	return W;
}

#endif
