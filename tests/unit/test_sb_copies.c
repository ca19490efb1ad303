/* test_sb_copies.c: both superblock copies on a device: which copy is
 * chosen, resized members, refused writes, file devices, and the crash-safe
 * write order (torn writes and power cuts at every step). */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "rk_dev.h"
#include "rk_le.h"
#include "rk_sb.h"
#include "helpers/rk_test.h"
#include "helpers/sb_samples.h"

/* ---- both copies on a device ---- */

#define DEV_SZ (2 * MiB + 5000)
static struct rk_sb *small_member(uint64_t events)
{
	struct rk_sb *sb = sb_sample_new();
	struct rk_sb_params p = { .name = "pair", .level = 1, .nroles = 2, .data_size = MiB / 2 };
	ck_assert_int_eq(rk_sb_init(sb, &p), RK_OK);
	ck_assert_int_eq(rk_sb_set_member(sb, 0, DEV_SZ), RK_OK);
	sb->events = events;
	return sb;
}

static void put_copy(uint8_t *mem, const struct rk_sb *sb, uint64_t off)
{
	struct rk_sb *t = sb_sample_new();
	*t = *sb;
	t->sb_offset = off;
	ck_assert_msg(rk_sb_encode(t, mem + off, 65536) == RK_OK, "%s", rk_errmsg());
	free(t);
}

START_TEST(test_read_choose)
{
	rk_dev *d;
	struct rk_sb_read r;
	const uint64_t B = rk_sb_backup_offset(DEV_SZ);
	ck_assert_int_eq(rk_dev_mem(&d, "m1", DEV_SZ), RK_OK);
	uint8_t *mem = rk_dev_mem_data(d);
	struct rk_sb *sb = small_member(5);

	/* nothing at all */
	ck_assert_int_eq(rk_sb_read(d, &r), RK_E_NOSB);
	ck_assert_int_eq(r.chosen, -1);
	ck_assert_int_eq(r.copy[0].status, RK_COPY_ABSENT);
	ck_assert_int_eq(r.copy[1].status, RK_COPY_ABSENT);
	ck_assert_ptr_nonnull(strstr(rk_errmsg(), "m1"));
	rk_sb_read_free(&r);

	/* both good and identical */
	ck_assert_int_eq(rk_sb_write(d, sb), RK_OK);
	ck_assert_int_eq(rk_sb_read(d, &r), RK_OK);
	ck_assert_int_eq(r.chosen, 0);
	ck_assert_uint_eq(r.copy[0].offset, 4096);
	ck_assert_uint_eq(r.copy[1].offset, B);
	ck_assert_int_eq(r.copy[1].status, RK_COPY_OK);
	ck_assert_ptr_nonnull(strstr(r.why, "identical"));
	ck_assert_uint_eq(r.copy[1].sb->sb_offset, B);
	rk_sb_read_free(&r);

	/* primary torn: backup chosen */
	mem[4096 + 700] ^= 0x10;
	ck_assert_int_eq(rk_sb_read(d, &r), RK_OK);
	ck_assert_int_eq(r.chosen, 1);
	ck_assert_int_eq(r.copy[0].status, RK_COPY_BAD);
	ck_assert_int_eq(r.copy[0].err, RK_E_BADCRC);
	ck_assert_ptr_nonnull(strstr(r.why, "backup copy chosen"));
	rk_sb_read_free(&r);
	mem[4096 + 700] ^= 0x10;

	/* backup torn: primary chosen */
	mem[B + 100] ^= 0x01;
	ck_assert_int_eq(rk_sb_read(d, &r), RK_OK);
	ck_assert_int_eq(r.chosen, 0);
	ck_assert_int_eq(r.copy[1].status, RK_COPY_BAD);
	ck_assert_ptr_nonnull(strstr(r.why, "backup copy at"));
	rk_sb_read_free(&r);

	/* both bad */
	mem[4096 + 9] ^= 0xff;
	ck_assert_int_eq(rk_sb_read(d, &r), RK_E_NOSB);
	ck_assert_int_eq(r.chosen, -1);
	ck_assert_ptr_nonnull(strstr(r.why, "no valid"));
	rk_sb_read_free(&r);

	/* different events: the higher wins, either way round */
	put_copy(mem, sb, 4096);
	sb->events = 9;
	put_copy(mem, sb, B);
	ck_assert_int_eq(rk_sb_read(d, &r), RK_OK);
	ck_assert_int_eq(r.chosen, 1);
	ck_assert_uint_eq(r.copy[r.chosen].sb->events, 9);
	ck_assert_ptr_nonnull(strstr(r.why, "older"));
	rk_sb_read_free(&r);
	sb->events = 11;
	put_copy(mem, sb, 4096);
	ck_assert_int_eq(rk_sb_read(d, &r), RK_OK);
	ck_assert_int_eq(r.chosen, 0);
	ck_assert_uint_eq(r.copy[0].sb->events, 11);
	rk_sb_read_free(&r);

	/* equal events, different contents: primary, with a note */
	sb->events = 11;
	sb->array_state = RK_ARRAY_ACTIVE;
	put_copy(mem, sb, B);
	ck_assert_int_eq(rk_sb_read(d, &r), RK_OK);
	ck_assert_int_eq(r.chosen, 0);
	ck_assert_ptr_nonnull(strstr(r.why, "disagree"));
	rk_sb_read_free(&r);

	/* a copy moved: the backup's bytes at the primary place are refused */
	memcpy(mem + 4096, mem + B, 65536);
	ck_assert_int_eq(rk_sb_read(d, &r), RK_OK);
	ck_assert_int_eq(r.chosen, 1);
	ck_assert_int_eq(r.copy[0].status, RK_COPY_BAD);
	ck_assert_int_eq(r.copy[0].err, RK_E_CORRUPT);
	ck_assert_ptr_nonnull(strstr(r.copy[0].why, "sb_offset"));
	rk_sb_read_free(&r);
	/* and the primary's bytes at the backup place too */
	put_copy(mem, sb, 4096);
	memcpy(mem + B, mem + 4096, 65536);
	ck_assert_int_eq(rk_sb_read(d, &r), RK_OK);
	ck_assert_int_eq(r.chosen, 0);
	ck_assert_int_eq(r.copy[1].err, RK_E_CORRUPT);
	rk_sb_read_free(&r);
	rk_dev_close(d);
	free(sb);
}
END_TEST

START_TEST(test_read_resized)
{
	rk_dev *d;
	struct rk_sb_read r;
	struct rk_sb *sb = small_member(3);
	const uint64_t B = rk_sb_backup_offset(DEV_SZ);
	/* the image grew by 1 MiB: the backup is found where dev_size put it */
	ck_assert_int_eq(rk_dev_mem(&d, "grown", DEV_SZ + MiB), RK_OK);
	uint8_t *mem = rk_dev_mem_data(d);
	put_copy(mem, sb, 4096);
	put_copy(mem, sb, B);
	ck_assert_int_eq(rk_sb_read(d, &r), RK_OK);
	ck_assert_int_eq(r.copy[1].status, RK_COPY_OK);
	ck_assert_uint_eq(r.copy[1].offset, B);
	ck_assert_ptr_nonnull(strstr(r.copy[1].why, "recorded dev_size"));
	rk_sb_read_free(&r);
	/* a write on the grown device keeps the recorded size and place */
	sb->events = 4;
	ck_assert_int_eq(rk_sb_write(d, sb), RK_OK);
	ck_assert_uint_eq(rk_get_le64(mem + B + 128), 4);
	rk_dev_close(d);
	/* the image shrank: the primary says so, the backup is gone */
	ck_assert_int_eq(rk_dev_mem(&d, "cut", DEV_SZ - 70000), RK_OK);
	mem = rk_dev_mem_data(d);
	put_copy(mem, sb, 4096);
	ck_assert_int_eq(rk_sb_read(d, &r), RK_E_NOSB);
	ck_assert_int_eq(r.copy[0].err, RK_E_SHORT);
	ck_assert_ptr_nonnull(strstr(r.copy[0].why, "has only"));
	rk_sb_read_free(&r);
	/* writing a dev_size larger than the device is refused */
	ck_assert_int_eq(rk_sb_write(d, sb), RK_E_SHORT);
	rk_dev_close(d);
	/* devices too small for any copy */
	ck_assert_int_eq(rk_dev_mem(&d, "tiny", 4096), RK_OK);
	ck_assert_int_eq(rk_sb_read(d, &r), RK_E_NOSB);
	ck_assert_int_eq(r.copy[0].status, RK_COPY_ABSENT);
	ck_assert_int_eq(r.copy[1].status, RK_COPY_ABSENT);
	rk_sb_read_free(&r);
	rk_dev_close(d);
	ck_assert_int_eq(rk_dev_mem(&d, "small", 4096 + 2000), RK_OK);
	put_copy(mem = malloc(DEV_SZ), sb, 4096);
	memcpy(rk_dev_mem_data(d) + 4096, mem + 4096, 2000);
	free(mem);
	ck_assert_int_eq(rk_sb_read(d, &r), RK_E_NOSB);
	ck_assert_int_eq(r.copy[0].status, RK_COPY_BAD);
	ck_assert_int_eq(r.copy[0].err, RK_E_SHORT);
	rk_sb_read_free(&r);
	rk_dev_close(d);
	free(sb);
}
END_TEST

START_TEST(test_write_invalid)
{
	rk_dev *d;
	struct rk_sb *sb = small_member(1);
	/* an invalid superblock is refused before anything is written */
	ck_assert_int_eq(rk_dev_mem(&d, "ro", DEV_SZ), RK_OK);
	sb->nroles = 0;   /* invalid: nothing is written */
	ck_assert_int_eq(rk_sb_write(d, sb), RK_E_CORRUPT);
	ck_assert_ptr_nonnull(strstr(rk_errmsg(), "refusing to write"));
	for (size_t i = 0; i < DEV_SZ; i++)
		if (rk_dev_mem_data(d)[i])
			ck_abort_msg("byte %zu written", i);
	rk_dev_close(d);
	free(sb);
}
END_TEST


/* Through a real image file: both copies land where the spec says. */
START_TEST(test_file_device)
{
	char dir[] = "/tmp/test_sb.XXXXXX", path[64];
	if (!mkdtemp(dir)) {
		printf("SKIP: cannot make a temporary directory in /tmp\n");
		return;
	}
	snprintf(path, sizeof path, "%s/m0.img", dir);
	struct rk_sb *sb = small_member(12);
	rk_dev *d;
	ck_assert_msg(rk_dev_create(&d, path, DEV_SZ) == RK_OK, "%s", rk_errmsg());
	ck_assert_msg(rk_sb_write(d, sb) == RK_OK, "%s", rk_errmsg());
	rk_dev_close(d);
	FILE *f = fopen(path, "rb");
	ck_assert_ptr_nonnull(f);
	uint8_t m[16];
	const uint64_t B = rk_sb_backup_offset(DEV_SZ);
	ck_assert_int_eq(fseeko(f, 4096, SEEK_SET), 0);
	ck_assert_uint_eq(fread(m, 1, 16, f), 16);
	ck_assert_mem_eq(m, "RAIDKIT\0\1\0\0\0", 12);
	ck_assert_int_eq(fseeko(f, (off_t)B, SEEK_SET), 0);
	ck_assert_uint_eq(fread(m, 1, 16, f), 16);
	ck_assert_mem_eq(m, "RAIDKIT\0", 8);
	ck_assert_int_eq(fseeko(f, 0, SEEK_SET), 0);
	uint8_t head[4096];
	ck_assert_uint_eq(fread(head, 1, sizeof head, f), sizeof head);
	for (size_t i = 0; i < sizeof head; i++)
		ck_assert_uint_eq(head[i], 0);     /* the first 4 KiB is left alone */
	fclose(f);
	struct rk_sb_read r;
	ck_assert_int_eq(rk_dev_open(&d, path, RK_DEV_RDONLY), RK_OK);
	ck_assert_int_eq(rk_sb_read(d, &r), RK_OK);
	ck_assert_int_eq(r.chosen, 0);
	ck_assert_uint_eq(r.copy[0].sb->events, 12);
	ck_assert_int_eq(r.copy[1].status, RK_COPY_OK);
	rk_sb_read_free(&r);
	/* read-only: writing is refused by the device layer, named */
	ck_assert_int_eq(rk_sb_write(d, sb), RK_E_READONLY);
	rk_dev_close(d);
	unlink(path);
	rmdir(dir);
	free(sb);
}
END_TEST

/* ---- crash-safe write order ---- */

/* A wrapper over a memory device that tears write number fail_at (its
 * first `keep` bytes land, to the byte) and then fails every later write,
 * as a crash. */
struct torn {
	rk_dev *lower;
	uint64_t writes, fail_at;
	size_t keep;
	int dead;
};
static rk_err torn_pread(rk_dev *d, void *buf, size_t len, uint64_t off)
{
	struct torn *t = rk_dev_priv(d);
	return rk_dev_pread(t->lower, buf, len, off);
}
static rk_err torn_pwrite(rk_dev *d, const void *buf, size_t len, uint64_t off)
{
	struct torn *t = rk_dev_priv(d);
	if (t->dead)
		return rk_fail(RK_E_FAULT, "dead");
	if (t->writes++ == t->fail_at) {
		rk_err e = rk_dev_pwrite(t->lower, buf, t->keep < len ? t->keep : len, off);
		t->dead = 1;
		return e ? e : rk_fail(RK_E_FAULT, "torn write");
	}
	return rk_dev_pwrite(t->lower, buf, len, off);
}
static rk_err torn_flush(rk_dev *d)
{
	struct torn *t = rk_dev_priv(d);
	return t->dead ? rk_fail(RK_E_FAULT, "dead") : RK_OK;
}
static void torn_close(rk_dev *d)
{
	struct torn *t = rk_dev_priv(d);
	rk_dev_close(t->lower);
	free(t);
}
static const struct rk_dev_ops torn_ops = {
	.name = "torn", .pread = torn_pread, .pwrite = torn_pwrite, .flush = torn_flush, .close = torn_close,
};

/* Initial states: 0 both copies old, 1 primary bad, 2 backup bad, 3 nothing. */
static void set_initial(uint8_t *mem, const struct rk_sb *old, int state)
{
	const uint64_t B = rk_sb_backup_offset(DEV_SZ);
	memset(mem, 0, DEV_SZ);
	if (state == 3)
		return;
	put_copy(mem, old, 4096);
	put_copy(mem, old, B);
	if (state == 1)
		mem[4096 + 130] ^= 1;
	if (state == 2)
		mem[B + 3000] ^= 1;
}

/* After any interruption: a copy is trusted and it is the old or the new
 * superblock, whole. */
static void check_after(uint8_t *mem, const struct rk_sb *old, const struct rk_sb *nw, int state,
                        const char *what)
{
	rk_dev *d;
	struct rk_sb_read r;
	ck_assert_int_eq(rk_dev_mem(&d, "after", DEV_SZ), RK_OK);
	memcpy(rk_dev_mem_data(d), mem, DEV_SZ);
	rk_err e = rk_sb_read(d, &r);
	if (state == 3 && e == RK_E_NOSB) {   /* a first write may leave nothing yet */
		rk_sb_read_free(&r);
		rk_dev_close(d);
		return;
	}
	ck_assert_msg(e == RK_OK, "%s: no good copy left: %s", what, r.why);
	struct rk_sb *c = r.copy[r.chosen].sb;
	uint64_t off = c->sb_offset;
	c->sb_offset = old->sb_offset;
	int is_old = state != 3 && !memcmp(c, old, sizeof *c);
	c->sb_offset = nw->sb_offset;
	int is_new = !memcmp(c, nw, sizeof *c);
	c->sb_offset = off;
	ck_assert_msg(is_old || is_new, "%s: the trusted copy is neither old nor new (%s)", what, r.why);
	rk_sb_read_free(&r);
	rk_dev_close(d);
}

START_TEST(test_write_torn)
{
	static const size_t keeps[] = { 0, 1, 16, 512, 4095, 4096, 8192, 65535 };
	struct rk_sb *old = small_member(5), *nw = small_member(6);
	memcpy(nw->array_uuid, old->array_uuid, 16);
	memcpy(nw->member_uuid, old->member_uuid, 16);
	memcpy(nw->roles, old->roles, sizeof old->roles);
	nw->utime = old->utime + 10;
	nw->array_state = RK_ARRAY_ACTIVE;
	uint8_t *mem = malloc(DEV_SZ);
	unsigned cases = 0;
	for (int state = 0; state < 4; state++)
		for (uint64_t n = 0; n < 3; n++)
			for (size_t k = 0; k < sizeof keeps / sizeof keeps[0]; k++) {
				set_initial(mem, old, state);
				struct torn *t = calloc(1, sizeof *t);
				ck_assert_ptr_nonnull(t);
				ck_assert_int_eq(rk_dev_mem(&t->lower, "torn", DEV_SZ), RK_OK);
				memcpy(rk_dev_mem_data(t->lower), mem, DEV_SZ);
				t->fail_at = n;
				t->keep = keeps[k];
				rk_dev *d;
				ck_assert_int_eq(rk_dev_new(&d, &torn_ops, t, "torn", DEV_SZ, 512, 1), RK_OK);
				rk_err e = rk_sb_write(d, nw);
				uint64_t writes = t->writes;
				memcpy(mem, rk_dev_mem_data(t->lower), DEV_SZ);   /* what landed */
				rk_dev_close(d);
				char what[96];
				snprintf(what, sizeof what, "state %d, write %llu torn after %zu bytes", state,
				         (unsigned long long)n, keeps[k]);
				if (n >= 2) {   /* two writes: the third never comes */
					ck_assert_int_eq(e, RK_OK);
					ck_assert_uint_eq(writes, 2);
				} else {
					ck_assert_int_ne(e, RK_OK);
				}
				check_after(mem, old, nw, state, what);
				cases++;
			}
	ck_assert_uint_eq(cases, 96);
	free(mem);
	free(old);
	free(nw);
}
END_TEST

/* The same with the shared fault backend's power cut (buffered writes that
 * persist as a seeded subset), over every write and many seeds. */
START_TEST(test_write_power_cut)
{
	struct rk_sb *old = small_member(5), *nw = small_member(6);
	memcpy(nw->array_uuid, old->array_uuid, 16);
	memcpy(nw->member_uuid, old->member_uuid, 16);
	memcpy(nw->roles, old->roles, sizeof old->roles);
	nw->array_state = RK_ARRAY_ACTIVE;
	uint8_t *mem = malloc(DEV_SZ);
	for (int state = 0; state < 4; state++)
		for (uint64_t n = 0; n < 3; n++)
			for (uint64_t seed = 1; seed <= 12; seed++) {
				rk_dev *lower, *d;
				rk_fault_plan *p;
				struct rk_fault_spec fs = { .model = RK_FAULT_POWER_CUT, .n = n, .seed = seed };
				ck_assert_int_eq(rk_dev_mem(&lower, "pc", DEV_SZ), RK_OK);
				set_initial(rk_dev_mem_data(lower), old, state);
				ck_assert_int_eq(rk_fault_plan_create(&p, &fs), RK_OK);
				ck_assert_int_eq(rk_dev_fault(&d, lower, p, 0), RK_OK);
				(void)rk_sb_write(d, nw);
				ck_assert_int_eq(rk_fault_crash(p), RK_OK);
				rk_dev *low = rk_fault_lower(p, 0);
				ck_assert_ptr_nonnull(low);
				memcpy(mem, rk_dev_mem_data(low), DEV_SZ);
				rk_dev_close(d);
				rk_fault_plan_free(p);
				char what[96];
				snprintf(what, sizeof what, "state %d, power cut at write %llu, seed %llu", state,
				         (unsigned long long)n, (unsigned long long)seed);
				check_after(mem, old, nw, state, what);
			}
	free(mem);
	free(old);
	free(nw);
}
END_TEST

/* A run of updates without reading back (rk_sb_write_known): the first is
 * rk_sb_write's; later ones write the backup first, only up to sb_bytes
 * (zeroing what a larger superblock before left), read nothing, and a
 * write torn at any point leaves a complete old or new superblock. */
static uint64_t known_reads;
static rk_err count_pread(rk_dev *d, void *buf, size_t len, uint64_t off)
{
	known_reads++;
	return torn_pread(d, buf, len, off);
}
static const struct rk_dev_ops known_ops = {
	.name = "known", .pread = count_pread, .pwrite = torn_pwrite, .flush = torn_flush, .close = torn_close,
};

START_TEST(test_write_known)
{
	const uint64_t B = rk_sb_backup_offset(DEV_SZ);
	struct rk_sb *sb = small_member(5);
	sb->nentries = 200;   /* 8 KiB of superblock */
	sb->sb_bytes = rk_sb_bytes_for(200);
	ck_assert_uint_eq(sb->sb_bytes, 8192);
	for (uint64_t n = 0; n < 3; n++) {
		struct torn *t = calloc(1, sizeof *t);
		ck_assert_ptr_nonnull(t);
		ck_assert_int_eq(rk_dev_mem(&t->lower, "known", DEV_SZ), RK_OK);
		t->fail_at = UINT64_MAX;
		rk_dev *d;
		ck_assert_int_eq(rk_dev_new(&d, &known_ops, t, "known", DEV_SZ, 512, 1), RK_OK);
		struct rk_sb_wstate ws = { 0 };
		sb->events = 5;
		sb->nentries = 200;
		sb->sb_bytes = 8192;
		ck_assert_int_eq(rk_sb_write_known(d, sb, &ws), RK_OK);
		ck_assert(ws.known);
		ck_assert_uint_eq(ws.bytes, 8192);
		/* shrink to 4 KiB, write N of this update torn after 100 bytes */
		sb->events = 6;
		sb->nentries = 2;
		sb->sb_bytes = 4096;
		known_reads = 0;
		t->writes = 0;
		t->fail_at = n;
		t->keep = 100;
		rk_err e = rk_sb_write_known(d, sb, &ws);
		ck_assert_uint_eq(known_reads, 0);
		uint8_t *mem = rk_dev_mem_data(t->lower);
		struct rk_sb_read r;
		ck_assert_int_eq(rk_sb_read(t->lower, &r), RK_OK);
		if (n >= 2) {
			ck_assert_int_eq(e, RK_OK);
			ck_assert(ws.known);
			ck_assert_uint_eq(ws.bytes, 4096);
			ck_assert_uint_eq(r.copy[0].sb->events, 6);
			ck_assert_uint_eq(r.copy[1].sb->events, 6);
			for (uint64_t i = 4096; i < 65536; i++)   /* the old second 4 KiB zeroed in both */
				ck_assert_msg(!mem[4096 + i] && !mem[B + i], "byte %llu of an area", (unsigned long long)i);
		} else {
			ck_assert_int_ne(e, RK_OK);
			ck_assert(!ws.known);
			/* torn backup (n 0): the primary, old, is trusted; torn
			 * primary (n 1): the backup, new, written first */
			ck_assert_int_eq(r.chosen, n == 0 ? 0 : 1);
			ck_assert_uint_eq(r.copy[r.chosen].sb->events, n == 0 ? 5 : 6);
		}
		rk_sb_read_free(&r);
		rk_dev_close(d);
	}
	free(sb);
}
END_TEST

RK_TEST_SUITE("sb_copies", { "copies", 0, NULL, NULL, 0,
	  RK_TESTS(RK_TEST(test_read_choose), RK_TEST(test_read_resized),
	           RK_TEST(test_write_invalid), RK_TEST(test_file_device),
	           RK_TEST(test_write_torn), RK_TEST(test_write_power_cut), RK_TEST(test_write_known)) })
