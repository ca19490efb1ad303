/* test_array_stream.c: the read-ahead stream (libmeta/array_stream.c):
 * bytes equal rk_array_read's, healthy and degraded, at odd offsets,
 * lengths and batch sizes; a member read error mid-stream is returned at
 * its batch, the batches before it delivered; the stream's thread does all
 * member reads itself, and the engine's pool serves rk_array_read again
 * after it closes. */
#include <check.h>
#include <pthread.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "rk_array.h"
#include "rk_array_stream.h"
#include "rk_create.h"
#include "rk_sb.h"
#include "helpers/rk_test.h"

#define NMAX 6

struct mem_array {
	rk_dev *devs[NMAX];
	struct rk_sb *sbs[NMAX];
	uint32_t n;
	uint8_t *volume;
	uint64_t size;
};

static void mem_make(struct mem_array *m, int32_t level, uint32_t n, uint64_t chunk)
{
	struct rk_test_mem_array a = { level, level >= 4 ? RK_ALG_LEFT_SYMMETRIC : 0, chunk, n, (chunk > 65536 ? 4 : 2) * RK_TEST_MIB, 0, NULL };
	rk_test_rnd_seed(7 + (uint64_t)level);
	m->n = n;
	m->volume = rk_test_mem_array_make(m->devs, &a, &m->size);
	for (uint32_t r = 0; r < n; r++)
		m->sbs[r] = rk_test_read_sb(m->devs[r]);
}

static void mem_free(struct mem_array *m)
{
	for (uint32_t r = 0; r < m->n; r++)
		free(m->sbs[r]);
	rk_test_close_devs(m->devs, m->n);
	free(m->volume);
}

/* Opens M read-only with the roles in DOWN missing, member USE[r] for
 * role r otherwise. */
static rk_array *open_with(struct mem_array *m, rk_dev **use, unsigned down)
{
	rk_dev *d[NMAX];
	const struct rk_sb *s[NMAX];
	for (uint32_t r = 0; r < m->n; r++) {
		d[r] = (down >> r & 1u) ? NULL : use[r];
		s[r] = d[r] ? m->sbs[r] : NULL;
	}
	rk_array *a;
	ck_assert_msg(rk_array_open_devs(&a, m->sbs[0], d, s, RK_ARRAY_RDONLY) == RK_OK, "%s", rk_errmsg());
	return a;
}

/* Streams [off, off+len) in batches of BATCH into a buffer: what was
 * delivered, in order and nothing more. */
static void check_stream(rk_array *a, const uint8_t *want, uint64_t off, uint64_t len, size_t batch)
{
	rk_array_stream *s;
	ck_assert_int_eq(rk_array_stream_open(&s, a, off, len, batch), RK_OK);
	uint64_t got = 0;
	for (;;) {
		const uint8_t *buf;
		size_t n;
		ck_assert_msg(rk_array_stream_next(s, &buf, &n) == RK_OK, "%s", rk_errmsg());
		if (n == 0)
			break;
		ck_assert_uint_le(got + n, len);
		ck_assert_msg(memcmp(buf, want + off + got, n) == 0, "bytes differ at %llu", (unsigned long long)(off + got));
		got += n;
		ck_assert_uint_eq(rk_array_stream_pos(s), off + got);
	}
	ck_assert_uint_eq(got, len);
	rk_array_stream_close(s);
}

/* 512 KiB chunks: degraded runs of whole stripes in flat units of more
 * stripes than the ordinary ones (vol_read.c) */
static const struct { int32_t level; uint32_t n; unsigned down; uint64_t chunk; } shapes[] = {
	{ 5, 4, 0, 16384 },  { 5, 4, 0x2, 16384 }, { 6, 5, 0x1, 16384 },  { 6, 5, 0x6, 16384 },
	{ 0, 3, 0, 16384 },  { 6, 5, 0, 16384 },   { 6, 6, 0x2, 524288 }, { 6, 6, 0x9, 524288 },
	{ 5, 5, 0x1, 524288 },
};

START_TEST(t_bytes_equal)
{
	struct mem_array m;
	mem_make(&m, shapes[_i].level, shapes[_i].n, shapes[_i].chunk);
	rk_array *a = open_with(&m, m.devs, shapes[_i].down);
	/* rk_array_read agrees with what was written, and so does the stream */
	uint8_t *r = malloc(m.size);
	ck_assert_int_eq(rk_array_read(a, r, m.size, 0), RK_OK);
	ck_assert(memcmp(r, m.volume, m.size) == 0);
	check_stream(a, m.volume, 0, m.size, 0);
	/* default batches end on stripe boundaries: a first batch cut short */
	check_stream(a, m.volume, 12345, m.size - 12345 - 777, 0);
	check_stream(a, m.volume, 12345, m.size - 12345 - 777, 65536 + 4096);
	check_stream(a, m.volume, 1 << 20, m.size - (1 << 20), 3 << 20);
	check_stream(a, m.volume, 511, 70001, 4096);
	check_stream(a, m.volume, m.size - 3, 3, 0);
	check_stream(a, m.volume, 100, 0, 0);
	rk_array_stream *s;
	ck_assert_int_eq(rk_array_stream_open(&s, a, m.size - 10, 11, 0), RK_E_RANGE);
	ck_assert_int_eq(rk_array_close(a), RK_OK);
	free(r);
	mem_free(&m);
}
END_TEST

/* Member 1 of a RAID-0 cannot read a range in the middle: the stream
 * delivers every batch before it and then the error, again on later calls;
 * on RAID-5 the same error is absorbed by redundancy. */
START_TEST(t_read_error)
{
	int32_t level = _i ? 5 : 0;
	struct mem_array m;
	mem_make(&m, level, 3, 16384);
	struct rk_fault_spec fs;
	memset(&fs, 0, sizeof fs);
	fs.model = RK_FAULT_READ_ERROR;
	fs.member = 1;
	fs.off = m.sbs[1]->data_offset + m.sbs[1]->data_size / 2;
	fs.len = 3 * 16384;   /* some of it in data chunks whatever the layout */
	rk_fault_plan *plan;
	ck_assert_int_eq(rk_fault_plan_create(&plan, &fs), RK_OK);
	rk_dev *w[NMAX];
	for (uint32_t r = 0; r < m.n; r++)
		ck_assert_int_eq(rk_dev_fault(&w[r], m.devs[r], plan, (int)r), RK_OK);
	rk_array *a = open_with(&m, w, 0);
	rk_array_stream *s;
	ck_assert_int_eq(rk_array_stream_open(&s, a, 0, m.size, 65536), RK_OK);
	uint64_t got = 0;
	rk_err e;
	for (;;) {
		const uint8_t *buf;
		size_t n;
		if ((e = rk_array_stream_next(s, &buf, &n)) || n == 0)
			break;
		ck_assert(memcmp(buf, m.volume + got, n) == 0);
		got += n;
	}
	if (level == 0) {
		ck_assert_int_eq(e, RK_E_IO);
		ck_assert_uint_gt(got, m.size / 4);   /* mid-stream: the batches before were delivered */
		ck_assert_uint_lt(got, m.size);
		const uint8_t *buf;
		size_t n;
		ck_assert_int_eq(rk_array_stream_next(s, &buf, &n), RK_E_IO);
		ck_assert_uint_eq(n, 0);
	} else {
		ck_assert_int_eq(e, RK_OK);
		ck_assert_uint_eq(got, m.size);
		/* met and absorbed: the member failed, or (writable) repaired */
		ck_assert_uint_ge(rk_array_nfailed(a) + rk_array_nrepaired(a, NULL), 1);
	}
	rk_array_stream_close(s);
	rk_array_close(a);
	for (uint32_t r = 0; r < m.n; r++)
		rk_dev_close(w[r]);
	rk_fault_plan_free(plan);
	free(m.volume);
	for (uint32_t r = 0; r < m.n; r++)
		free(m.sbs[r]);
}
END_TEST

/* A backend over a mem device that notes every thread reading it (the
 * pause lets the pool's threads take jobs while the caller is in one). */
static struct {
	pthread_mutex_t mu;
	pthread_t seen[16];
	int nseen;
} readers = { PTHREAD_MUTEX_INITIALIZER, { 0 }, 0 };

static rk_err rec_pread(rk_dev *d, void *buf, size_t len, uint64_t off)
{
	pthread_t self = pthread_self();
	pthread_mutex_lock(&readers.mu);
	int known = 0;
	for (int i = 0; i < readers.nseen; i++)
		known |= pthread_equal(readers.seen[i], self);
	if (!known && readers.nseen < 16)
		readers.seen[readers.nseen++] = self;
	pthread_mutex_unlock(&readers.mu);
	usleep(500);
	return rk_dev_pread(rk_dev_priv(d), buf, len, off);
}

static rk_err rec_pwrite(rk_dev *d, const void *buf, size_t len, uint64_t off)
{
	return rk_dev_pwrite(rk_dev_priv(d), buf, len, off);
}

static void rec_close(rk_dev *d)
{
	(void)d;   /* the mem device below is closed by its owner */
}

static const struct rk_dev_ops rec_ops = { .name = "rec", .pread = rec_pread, .pwrite = rec_pwrite, .close = rec_close };

/* RAID-6 of 6, 512 KiB chunks, healthy (_i 0) or two members missing:
 * every member read of a stream comes from one thread, not the caller's;
 * afterwards rk_array_read spreads its member reads over the pool again. */
START_TEST(t_stream_thread)
{
	struct mem_array m;
	unsigned down = _i ? 0x9 : 0;
	mem_make(&m, 6, 6, 524288);
	rk_dev *w[NMAX];
	for (uint32_t r = 0; r < m.n; r++)
		ck_assert_int_eq(rk_dev_new(&w[r], &rec_ops, m.devs[r], "rec", rk_dev_size(m.devs[r]), 512, 0), RK_OK);
	rk_array *a = open_with(&m, w, down);
	readers.nseen = 0;
	check_stream(a, m.volume, 0, m.size, 0);
	ck_assert_int_eq(readers.nseen, 1);
	ck_assert(!pthread_equal(readers.seen[0], pthread_self()));
	readers.nseen = 0;
	uint8_t *r = malloc(m.size);
	for (int i = 0; i < 10 && readers.nseen < 2; i++) {
		ck_assert_int_eq(rk_array_read(a, r, m.size, 0), RK_OK);
		ck_assert(memcmp(r, m.volume, m.size) == 0);
	}
	ck_assert_int_ge(readers.nseen, 2);
	free(r);
	rk_array_close(a);
	for (uint32_t i = 0; i < m.n; i++)
		rk_dev_close(w[i]);
	mem_free(&m);
}
END_TEST

RK_TEST_SUITE("array_stream", { "array_stream", 60, NULL, NULL, 0,
	  RK_TESTS(RK_TEST_LOOP(t_bytes_equal, 0, (int)(sizeof shapes / sizeof shapes[0])),
	           RK_TEST_LOOP(t_read_error, 0, 2), RK_TEST_LOOP(t_stream_thread, 0, 2)) })
