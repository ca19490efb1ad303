/* test_dev_fault.c: the fault-injecting device (rk_dev_fault): the spec
 * string, counting, plans, failed, torn and killed writes, pulled members,
 * read errors, and write numbering across threads. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rk_dev.h"
#include "helpers/rk_test.h"
#include "helpers/fault_members.h"

/* ---------------------------------------------------------------- faults */

/* The test-only spec string the tools read from RAIDKIT_TEST_FAULT. */
START_TEST(fault_spec_parse)
{
	struct rk_fault_spec sp;
	ck_assert_int_eq(rk_fault_spec_parse("model=read-error,member=2,off=0x1000,len=4096", &sp), RK_OK);
	ck_assert_int_eq(sp.model, RK_FAULT_READ_ERROR);
	ck_assert_int_eq(sp.member, 2);
	ck_assert_uint_eq(sp.off, 4096);
	ck_assert_uint_eq(sp.len, 4096);
	ck_assert_int_eq(rk_fault_spec_parse("n=40,model=pull,member=1,seed=7", &sp), RK_OK);
	ck_assert_int_eq(sp.model, RK_FAULT_PULL);
	ck_assert_uint_eq(sp.n, 40);
	ck_assert_uint_eq(sp.seed, 7);
	ck_assert_uint_eq(sp.off, 0);
	ck_assert_int_eq(rk_fault_spec_parse("model=stop,n=9", &sp), RK_OK);
	ck_assert_int_eq(sp.model, RK_FAULT_STOP);
	ck_assert_int_eq(rk_fault_spec_parse("model=power-cut,n=3", &sp), RK_OK);
	ck_assert_int_eq(sp.model, RK_FAULT_POWER_CUT);
	static const char *const bad[] = { "", "n=3", "model=melt", "model=kill,n=", "model=kill,n=3x",
	                                   "model=kill,n=-1", "model=kill,colour=red", "model", "model=kill,member=99999999999" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		ck_assert_msg(rk_fault_spec_parse(bad[i], &sp) == RK_E_INVAL, "accepted '%s'", bad[i]);
	ck_assert_int_eq(rk_fault_spec_parse(NULL, &sp), RK_E_INVAL);
}
END_TEST

START_TEST(fault_none_counts)
{
	struct fault_members a;
	uint8_t b[1024], c[1024];

	fault_members_open(&a, RK_FAULT_NONE, 0, 0, 1);
	ck_assert_str_eq(rk_dev_backend(a.wrapped[0]), "fault");
	ck_assert_uint_eq(rk_dev_size(a.wrapped[1]), FAULT_MEMBER_SIZE);
	for (int i = 0; i < 10; i++) {
		rk_test_fill_seeded(b, sizeof b, (uint32_t)i);
		ck_assert_int_eq(rk_dev_pwrite(a.wrapped[i % FAULT_MEMBERS], b, sizeof b, (uint64_t)i * 1024), RK_OK);
		ck_assert_mem_eq(rk_dev_mem_data(a.lower[i % FAULT_MEMBERS]) + i * 1024, b, sizeof b);
		ck_assert_int_eq(rk_dev_pread(a.wrapped[i % FAULT_MEMBERS], c, sizeof c, (uint64_t)i * 1024), RK_OK);
		ck_assert_mem_eq(b, c, sizeof b);
	}
	/* Rejected requests never reach the plan. */
	ck_assert_int_eq(rk_dev_pwrite(a.wrapped[0], b, 2, FAULT_MEMBER_SIZE - 1), RK_E_RANGE);
	ck_assert_int_eq(rk_dev_pwrite(a.wrapped[0], b, 0, 0), RK_OK);
	ck_assert_uint_eq(rk_fault_writes(a.plan), 10);
	ck_assert_int_eq(rk_fault_fired(a.plan), 0);
	ck_assert_int_eq(rk_dev_flush(a.wrapped[2]), RK_OK);
	ck_assert_ptr_eq(rk_fault_lower(a.plan, 1), a.lower[1]);
	ck_assert_ptr_null(rk_fault_lower(a.plan, FAULT_MEMBERS));
	ck_assert_int_eq(rk_fault_crash(a.plan), RK_OK);	/* no-op outside POWER_CUT */
	ck_assert_int_eq(rk_dev_pread(a.wrapped[0], c, sizeof c, 0), RK_OK);
	fault_members_close(&a);
}
END_TEST

START_TEST(fault_plan_checks)
{
	rk_fault_plan *p;
	rk_dev *m, *f, *m2;
	struct rk_fault_spec s = { .model = RK_FAULT_READ_ERROR, .member = 0, .off = 10, .len = 0 };

	ck_assert_int_eq(rk_fault_plan_create(&p, &s), RK_E_INVAL);
	s.len = 5;
	s.off = UINT64_MAX - 2;
	ck_assert_int_eq(rk_fault_plan_create(&p, &s), RK_E_INVAL);
	s.model = RK_FAULT_PULL;
	s.member = -1;
	ck_assert_int_eq(rk_fault_plan_create(&p, &s), RK_E_INVAL);
	s.model = (enum rk_fault_model)99;
	ck_assert_int_eq(rk_fault_plan_create(&p, &s), RK_E_INVAL);
	s.model = RK_FAULT_NONE;
	ck_assert_int_eq(rk_fault_plan_create(&p, &s), RK_OK);
	ck_assert_int_eq(rk_dev_mem(&m, "m", 4096), RK_OK);
	ck_assert_int_eq(rk_dev_fault(&f, m, p, 5), RK_OK);
	ck_assert_int_eq(rk_dev_mem(&m2, "m2", 4096), RK_OK);
	ck_assert_int_eq(rk_dev_fault(&m2, m2, p, 5), RK_E_INVAL);	/* member taken; m2 freed */
	ck_assert_ptr_null(m2);
	ck_assert_int_eq(rk_dev_mem(&m2, "m2", 4096), RK_OK);
	ck_assert_int_eq(rk_dev_fault(&m2, m2, p, -3), RK_E_INVAL);
	/* The plan outlives its creator's reference while a member is open. */
	rk_fault_plan_free(p);
	ck_assert_int_eq(rk_dev_pwrite(f, "x", 1, 0), RK_OK);
	rk_dev_close(f);
}
END_TEST

START_TEST(fault_fail_write)
{
	struct fault_members a;
	uint8_t b[512], z[512] = { 0 };

	fault_members_open(&a, RK_FAULT_FAIL_WRITE, 2, 0, 1);
	memset(b, 0xAB, sizeof b);
	ck_assert_int_eq(rk_dev_pwrite(a.wrapped[0], b, 512, 0), RK_OK);
	ck_assert_int_eq(rk_dev_pwrite(a.wrapped[1], b, 512, 0), RK_OK);
	ck_assert_int_eq(rk_fault_fired(a.plan), 0);
	ck_assert_int_eq(rk_dev_pwrite(a.wrapped[2], b, 512, 0), RK_E_IO);
	ck_assert_ptr_nonnull(strstr(rk_errmsg(), "mem2"));
	ck_assert_int_eq(rk_fault_fired(a.plan), 1);
	ck_assert_mem_eq(rk_dev_mem_data(a.lower[2]), z, 512);	/* did not land */
	ck_assert_int_eq(rk_dev_pwrite(a.wrapped[2], b, 512, 512), RK_OK);	/* later writes work */
	ck_assert_mem_eq(rk_dev_mem_data(a.lower[2]) + 512, b, 512);
	ck_assert_int_eq(rk_dev_pread(a.wrapped[2], b, 512, 0), RK_OK);
	ck_assert_uint_eq(rk_fault_writes(a.plan), 4);
	fault_members_close(&a);
}
END_TEST

/* Tears a 16-sector write at OFF (write #1); returns the bytes that landed. */
static size_t tear_once(uint64_t seed, uint64_t off, uint8_t *img)
{
	struct fault_members a;
	uint8_t b[8192];
	size_t landed = 0;
	const uint8_t *m;

	fault_members_open(&a, RK_FAULT_TEAR_WRITE, 1, 0, seed);
	memset(b, 0x11, sizeof b);
	ck_assert_int_eq(rk_dev_pwrite(a.wrapped[1], b, sizeof b, 0), RK_OK);
	memset(b, 0xEE, sizeof b);
	ck_assert_int_eq(rk_dev_pwrite(a.wrapped[0], b, sizeof b, off), RK_E_FAULT);
	ck_assert_int_eq(rk_fault_fired(a.plan), 1);
	m = rk_dev_mem_data(a.lower[0]);
	while (landed < sizeof b && m[off + landed] == 0xEE)
		landed++;
	/* A prefix: nothing after it landed; never the whole write. */
	for (size_t i = landed; i < sizeof b; i++)
		ck_assert_int_eq(m[off + i], 0);
	ck_assert_uint_lt(landed, sizeof b);
	ck_assert((off + landed) % 512 == 0 || landed == 0);
	/* The process is dead: every I/O fails, nothing more lands. */
	ck_assert_int_eq(rk_dev_pwrite(a.wrapped[1], b, 512, 0), RK_E_FAULT);
	ck_assert_int_eq(rk_dev_pread(a.wrapped[1], b, 512, 0), RK_E_FAULT);
	ck_assert_int_eq(rk_dev_flush(a.wrapped[2]), RK_E_FAULT);
	ck_assert_int_eq(rk_dev_mem_data(a.lower[1])[0], 0x11);
	if (img)
		memcpy(img, m, FAULT_MEMBER_SIZE);
	fault_members_close(&a);
	return landed;
}

START_TEST(fault_tear_write)
{
	int seen[17] = { 0 }, distinct = 0;
	static uint8_t i1[FAULT_MEMBER_SIZE], i2[FAULT_MEMBER_SIZE];

	for (uint64_t seed = 0; seed < 64; seed++) {
		size_t l = tear_once(seed, 4096, NULL);
		ck_assert_uint_eq(l % 512, 0);
		if (!seen[l / 512]++)
			distinct++;
	}
	ck_assert_int_ge(distinct, 4);
	/* Unaligned write: the landed part ends on an absolute sector boundary. */
	for (uint64_t seed = 0; seed < 32; seed++)
		tear_once(seed, 1000, NULL);
	/* Reproducible by seed. */
	for (uint64_t seed = 5; seed < 9; seed++) {
		ck_assert_uint_eq(tear_once(seed, 1000, i1), tear_once(seed, 1000, i2));
		ck_assert_mem_eq(i1, i2, FAULT_MEMBER_SIZE);
	}
}
END_TEST

START_TEST(fault_kill)
{
	struct fault_members a;
	uint8_t b[1024];

	fault_members_open(&a, RK_FAULT_KILL, 3, 0, 1);
	for (int i = 0; i < 3; i++) {
		memset(b, 0x40 + i, sizeof b);
		ck_assert_int_eq(rk_dev_pwrite(a.wrapped[i], b, sizeof b, 2048), RK_OK);
	}
	memset(b, 0x77, sizeof b);
	ck_assert_int_eq(rk_dev_pwrite(a.wrapped[0], b, sizeof b, 0), RK_E_FAULT);
	ck_assert_int_eq(rk_fault_fired(a.plan), 1);
	ck_assert_int_eq(rk_dev_pwrite(a.wrapped[1], b, sizeof b, 0), RK_E_FAULT);
	ck_assert_int_eq(rk_dev_pread(a.wrapped[1], b, sizeof b, 0), RK_E_FAULT);
	ck_assert_int_eq(rk_dev_flush(a.wrapped[0]), RK_E_FAULT);
	for (int i = 0; i < 3; i++) {
		const uint8_t *m = rk_dev_mem_data(a.lower[i]);
		ck_assert_int_eq(m[2048], 0x40 + i);
		ck_assert_int_eq(m[3071], 0x40 + i);
		ck_assert_int_eq(m[0], 0);	/* write #3 and later never happened */
	}
	fault_members_close(&a);
}
END_TEST

/* STOP: a child stops itself before write #2 (writes 0 and 1 landed,
 * 2 not yet); continued, it finishes; killed instead, 2 never lands. */
START_TEST(fault_stop)
{
	for (int cont = 0; cont < 2; cont++) {
		struct fault_members a;
		fault_members_open(&a, RK_FAULT_STOP, 2, 0, 1);
		pid_t pid = fork();
		ck_assert_int_ge(pid, 0);
		if (pid == 0) {
			uint8_t b[512];
			for (int i = 0; i < 3; i++) {
				memset(b, 0x50 + i, sizeof b);
				if (rk_dev_pwrite(a.wrapped[i], b, sizeof b, 0))
					_exit(3);
			}
			_exit(0);
		}
		int st;
		ck_assert_int_eq(waitpid(pid, &st, WUNTRACED), pid);
		ck_assert(WIFSTOPPED(st));
		kill(pid, cont ? SIGCONT : SIGKILL);
		ck_assert_int_eq(waitpid(pid, &st, 0), pid);
		if (cont)
			ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
		else
			ck_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
		fault_members_close(&a);
	}
}
END_TEST

START_TEST(fault_pull)
{
	struct fault_members a;
	uint8_t b[512];

	fault_members_open(&a, RK_FAULT_PULL, 3, 1, 1);
	memset(b, 0x5A, sizeof b);
	/* Member 1's I/O #0..#2 (reads and writes) work. */
	ck_assert_int_eq(rk_dev_pwrite(a.wrapped[1], b, 512, 0), RK_OK);
	ck_assert_int_eq(rk_dev_pread(a.wrapped[1], b, 512, 0), RK_OK);
	ck_assert_int_eq(rk_dev_pwrite(a.wrapped[0], b, 512, 0), RK_OK);	/* other members do not count */
	ck_assert_int_eq(rk_dev_pwrite(a.wrapped[1], b, 512, 512), RK_OK);
	ck_assert_int_eq(rk_fault_fired(a.plan), 0);
	ck_assert_int_eq(rk_dev_flush(a.wrapped[1]), RK_OK);
	/* From #3 on it is gone; the message names it. */
	ck_assert_int_eq(rk_dev_pread(a.wrapped[1], b, 512, 0), RK_E_IO);
	ck_assert_ptr_nonnull(strstr(rk_errmsg(), "mem1"));
	ck_assert_int_eq(rk_fault_fired(a.plan), 1);
	ck_assert_int_eq(rk_dev_pwrite(a.wrapped[1], b, 512, 1024), RK_E_IO);
	ck_assert_int_eq(rk_dev_mem_data(a.lower[1])[1024], 0);
	ck_assert_int_eq(rk_dev_flush(a.wrapped[1]), RK_E_IO);
	ck_assert_int_eq(rk_dev_pread(a.wrapped[1], b, 512, 0), RK_E_IO);
	/* The tool keeps running on the others. */
	ck_assert_int_eq(rk_dev_pwrite(a.wrapped[2], b, 512, 0), RK_OK);
	ck_assert_int_eq(rk_dev_pread(a.wrapped[0], b, 512, 0), RK_OK);
	ck_assert_int_eq(rk_dev_flush(a.wrapped[0]), RK_OK);
	fault_members_close(&a);
}
END_TEST

START_TEST(fault_read_error)
{
	rk_fault_plan *p;
	rk_dev *m, *f, *m2, *f2;
	uint8_t b[4096];
	struct rk_fault_spec s = { .model = RK_FAULT_READ_ERROR, .member = 1, .off = 8192, .len = 4096 };

	ck_assert_int_eq(rk_fault_plan_create(&p, &s), RK_OK);
	ck_assert_int_eq(rk_dev_mem(&m, "good", FAULT_MEMBER_SIZE), RK_OK);
	ck_assert_int_eq(rk_dev_mem(&m2, "bad", FAULT_MEMBER_SIZE), RK_OK);
	ck_assert_int_eq(rk_dev_fault(&f, m, p, 0), RK_OK);
	ck_assert_int_eq(rk_dev_fault(&f2, m2, p, 1), RK_OK);
	ck_assert_int_eq(rk_dev_pread(f, b, 4096, 8192), RK_OK);	/* other member fine */
	ck_assert_int_eq(rk_dev_pread(f2, b, 4096, 4096), RK_OK);	/* just before */
	ck_assert_int_eq(rk_dev_pread(f2, b, 4096, 12288), RK_OK);	/* just after */
	ck_assert_int_eq(rk_fault_fired(p), 0);
	ck_assert_int_eq(rk_dev_pread(f2, b, 1, 12287), RK_E_IO);	/* last byte */
	ck_assert_ptr_nonnull(strstr(rk_errmsg(), "bad: read error"));
	ck_assert_int_eq(rk_fault_fired(p), 1);
	ck_assert_int_eq(rk_dev_pread(f2, b, 2, 8191), RK_E_IO);	/* straddling the start */
	ck_assert_int_eq(rk_dev_pread(f2, b, 4096, 8192), RK_E_IO);
	/* A rewrite of the middle heals just that part (a remapped sector). */
	memset(b, 0x33, sizeof b);
	ck_assert_int_eq(rk_dev_pwrite(f2, b, 1024, 9216), RK_OK);
	ck_assert_int_eq(rk_dev_pread(f2, b, 1024, 9216), RK_OK);
	ck_assert_int_eq(b[0], 0x33);
	ck_assert_int_eq(rk_dev_pread(f2, b, 512, 8192), RK_E_IO);
	ck_assert_int_eq(rk_dev_pread(f2, b, 512, 10240), RK_E_IO);
	/* Rewrite the rest: all readable again. */
	ck_assert_int_eq(rk_dev_pwrite(f2, b, 1024, 8192), RK_OK);
	ck_assert_int_eq(rk_dev_pwrite(f2, b, 2048, 10240), RK_OK);
	ck_assert_int_eq(rk_dev_pread(f2, b, 4096, 8192), RK_OK);
	rk_dev_close(f);
	rk_fault_plan_free(p);
	rk_dev_close(f2);
}
END_TEST

/* Threads: write numbers are handed out exactly once, in issue order. */
struct thr { rk_dev *d; int ok, fault; };

static void *writer(void *arg)
{
	struct thr *t = arg;
	uint8_t b[512];
	memset(b, 1, sizeof b);
	for (int i = 0; i < 200; i++) {
		rk_err e = rk_dev_pwrite(t->d, b, 512, (uint64_t)(i % 100) * 512);
		if (e == RK_OK)
			t->ok++;
		else if (e == RK_E_FAULT)
			t->fault++;
	}
	return NULL;
}

START_TEST(fault_threads)
{
	struct fault_members a;
	pthread_t th[FAULT_MEMBERS];
	struct thr t[FAULT_MEMBERS];
	int ok = 0, fault = 0;

	fault_members_open(&a, RK_FAULT_KILL, 250, 0, 1);
	for (int i = 0; i < FAULT_MEMBERS; i++) {
		t[i] = (struct thr){ .d = a.wrapped[i] };
		ck_assert_int_eq(pthread_create(&th[i], NULL, writer, &t[i]), 0);
	}
	for (int i = 0; i < FAULT_MEMBERS; i++) {
		pthread_join(th[i], NULL);
		ok += t[i].ok;
		fault += t[i].fault;
	}
	ck_assert_int_eq(ok, 250);
	ck_assert_int_eq(fault, FAULT_MEMBERS * 200 - 250);
	ck_assert_uint_eq(rk_fault_writes(a.plan), FAULT_MEMBERS * 200);
	fault_members_close(&a);
}
END_TEST

RK_TEST_SUITE("dev_fault", { "fault", 0, NULL, NULL, 0,
	  RK_TESTS(RK_TEST(fault_spec_parse), RK_TEST(fault_none_counts),
	           RK_TEST(fault_plan_checks), RK_TEST(fault_fail_write),
	           RK_TEST(fault_tear_write), RK_TEST(fault_kill), RK_TEST(fault_stop), RK_TEST(fault_pull),
	           RK_TEST(fault_read_error), RK_TEST(fault_threads)) })
