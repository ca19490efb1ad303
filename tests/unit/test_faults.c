/* test_faults.c: crash safety proven by enumeration (issue 6).
 *
 * For small arrays of every redundant level (1, 4, 5, 6, 10) and every
 * writing path (full-stripe and partial-stripe rk_array_write, writes on a
 * degraded array, mkraid --from through the create library's wrap_dev hook,
 * raid-scrub --repair as the tool runs rk_scrub_run on parity levels,
 * raid-resize adding a member (rk_resize_reshape, then --continue),
 * raid-recover --rebuild of one role onto a new file (rk_recover_rebuild's
 * wrap_dev hook; after a power cut or kill the array reads the original
 * volume, and the rebuild run again finishes with the rebuilt member equal
 * to the lost one))
 * the harness first counts the writes the path issues, then runs it again
 * once per fault point: a power cut at write N (seeded post-crash image), a
 * kill at write N, a cable pull of member M at its I/O N, a read error on
 * each 4 KiB block of each member's data area.  After each it checks, on
 * the member files as they are left (discovery + rk_array_open):
 *   - the array assembles (degraded where a member was pulled; the pulled
 *     member is never used again), or, for a pull that leaves too few
 *     members, the write failed with a message;
 *   - every write reported complete (write + flush returned) reads back;
 *     bytes outside the writes never change; a write in flight holds old or
 *     new data per 512-byte sector;
 *   - a read-write open (journal replay) and close leaves both superblock
 *     copies of every member valid and equal, and the same volume;
 *   - the write hole: with any one member left out (any two on RAID-6) the
 *     degraded volume reads exactly the same bytes;
 *   - read errors: a read through the writable array meets the bad block,
 *     returns the right bytes, repairs it in place (the member stays active)
 *     and a second read is clean.
 * Sample mode (the default, make check) strides over the points; RK_FAULTS=full
 * (make check-faults) runs every point, power cuts with four seeds.  Each
 * test prints "FAULTS <name> points N violations V" for tests/run-faults.sh.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rk_array.h"
#include "rk_create.h"
#include "rk_dev.h"
#include "rk_discover.h"
#include "rk_geom.h"
#include "rk_recover.h"
#include "rk_sb.h"
#include "rk_resize.h"
#include "rk_scrub.h"
#include "rk_test_hooks.h"

#define MAXM 8
#define DATA_BYTES (96u * 1024u)
#define MEMBER_BYTES (RK_DATA_OFFSET_DEFAULT + DATA_BYTES + RK_SB_AREA)
#define SECTOR 512u

struct cfg {
	int32_t level;
	uint32_t n;
	uint64_t chunk;
};

static const struct cfg cfgs[] = {
	{ 1, 2, 0 },     { 1, 3, 0 },     { 4, 4, 4096 }, { 5, 3, 8192 }, { 5, 4, 4096 },
	{ 5, 5, 16384 }, { 6, 4, 4096 },  { 6, 5, 8192 }, { 10, 4, 4096 }, { 10, 3, 8192 },
};
#define NCFG (sizeof cfgs / sizeof cfgs[0])

enum path { P_FULL, P_PARTIAL, P_DEGRADED, P_MKRAID, P_REPAIR, P_RESIZE, P_REBUILD, P__COUNT };
static const char *const path_names[] = { "full", "partial", "degraded", "mkraid", "repair", "resize", "rebuild" };
static const char *const model_names[] = { "none", "fail", "tear", "power-cut", "kill", "pull", "read-error" };

static int full_mode;
static char dir[128];
static char *paths[MAXM];
static char from_path[160];

/* ---- state of one (cfg, path) run ---- */
struct op {
	uint64_t off, len;
	int state;          /* 0 not attempted, 1 in flight, 2 complete */
};

struct run {
	const struct cfg *c;
	enum path p;
	uint64_t vsize, stripe_data;
	uint8_t *base[MAXM];      /* member images before the operation */
	uint8_t *oldv, *newv;     /* volume before, and after every op */
	struct op ops[8];
	uint32_t nops;
	int missing;              /* role left out of the write (degraded path), -1 none */
	uint64_t points, violations;
	/* mkraid */
	uint64_t from_len;
	/* repair */
	uint32_t layout;
	uint64_t data_size;
	/* read errors: the writes left the member active and a read through
	 * the writable array repaired rather than failed it */
	int re_kept;
	/* rebuild: the role rebuilt */
	uint32_t rb_role;
};

static void violation(struct run *R, const struct rk_fault_spec *s, const char *fmt, ...)
{
	R->violations++;
	if (R->violations > 20)
		return;
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	printf("VIOLATION RAID-%s x%u chunk %llu path %s model %s n %llu member %d seed %llu: %s\n",
	       rk_level_name(R->c->level), R->c->n, (unsigned long long)R->c->chunk, path_names[R->p],
	       model_names[s->model], (unsigned long long)s->n, s->member, (unsigned long long)s->seed, msg);
	fflush(stdout);
}

static void fill(uint8_t *b, size_t n, uint64_t seed)
{
	uint64_t x = seed * 0x9E3779B97F4A7C15ull + 12345;
	for (size_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		b[i] = (uint8_t)(x >> 24);
	}
}

static void put_file(const char *p, const uint8_t *b, size_t len)
{
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, b, len), (ssize_t)len);
	close(fd);
}

static uint8_t *get_file(const char *p, size_t len)
{
	uint8_t *b = malloc(len);
	int fd = open(p, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(read(fd, b, len), (ssize_t)len);
	close(fd);
	return b;
}

static void setup(void)
{
	const char *fm = getenv("RK_FAULTS");
	full_mode = fm && !strcmp(fm, "full");
	snprintf(dir, sizeof dir, "%s/rk-faults.XXXXXX", access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	for (int i = 0; i < MAXM; i++) {
		paths[i] = malloc(160);
		snprintf(paths[i], 160, "%s/m%d", dir, i);
	}
	snprintf(from_path, sizeof from_path, "%s/from", dir);
}

static void teardown(void)
{
	for (int i = 0; i < MAXM; i++) {
		unlink(paths[i]);
		free(paths[i]);
	}
	unlink(from_path);
	rmdir(dir);
}

static void create_plain(const struct cfg *c, const char *from)
{
	for (uint32_t i = 0; i < c->n; i++)
		unlink(paths[i]);
	struct rk_create_opts o;
	memset(&o, 0, sizeof o);
	o.level = c->level;
	o.layout = RK_CREATE_LAYOUT_DEFAULT;
	o.chunk = c->chunk ? c->chunk : 4096;
	o.create_size = MEMBER_BYTES;
	o.nmembers = c->n;
	o.paths = (const char *const *)paths;
	o.from = from;
	ck_assert_msg(rk_create(&o, NULL) == RK_OK, "create: %s", rk_errmsg());
}

/* Discovery over the member paths except those in SKIP (bit mask). */
static struct rk_discovery *discover_skip(uint32_t n, uint32_t skip)
{
	char *p[MAXM];
	uint32_t k = 0;
	for (uint32_t i = 0; i < n; i++)
		if (!(skip & (1u << i)))
			p[k++] = paths[i];
	struct rk_discovery *d = NULL;
	ck_assert_int_eq(rk_discover(&d, p, k, NULL), RK_OK);
	return d;
}

/* Reads the whole volume of the array discovered without SKIP into OUT.
 * Returns 0 on success, 1 when it does not assemble (STATE says why). */
static int read_volume(uint32_t n, uint32_t skip, uint8_t *out, uint64_t vsize, int *state, char *why, size_t cap)
{
	struct rk_discovery *d = discover_skip(n, skip);
	int rc = 1;
	*state = -1;
	if (d->narrays != 1) {
		snprintf(why, cap, "%u arrays found", d->narrays);
		goto out;
	}
	*state = d->arrays[0].state;
	rk_array *a = NULL;
	rk_err e = rk_array_open(&a, &d->arrays[0], RK_ARRAY_RDONLY);
	if (e) {
		snprintf(why, cap, "open: %s", rk_errmsg());
		goto out;
	}
	if (rk_array_size(a) != vsize) {
		snprintf(why, cap, "volume size %llu", (unsigned long long)rk_array_size(a));
		rk_array_close(a);
		goto out;
	}
	e = rk_array_read(a, out, vsize, 0);
	if (e)
		snprintf(why, cap, "read: %s", rk_errmsg());
	rk_array_close(a);
	rc = e ? 1 : 0;
out:
	rk_discovery_free(d);
	return rc;
}

/* Checks V against the model; returns 0 or describes the first difference. */
static int check_model(const struct run *R, const uint8_t *v, char *why, size_t cap)
{
	for (uint64_t s = 0; s < R->vsize; s += SECTOR) {
		uint64_t e = s + SECTOR < R->vsize ? s + SECTOR : R->vsize;
		int inflight = 0, done = 0;
		for (uint32_t i = 0; i < R->nops; i++) {
			const struct op *o = &R->ops[i];
			if (o->off < e && s < o->off + o->len) {
				if (o->state == 2)
					done = 1;
				else if (o->state == 1)
					inflight = 1;
			}
		}
		/* bytes of this sector outside every write must be old */
		for (uint64_t b = s; b < e; b++) {
			int in = 0;
			for (uint32_t i = 0; i < R->nops && !in; i++)
				in = b >= R->ops[i].off && b < R->ops[i].off + R->ops[i].len;
			if (!in && v[b] != R->oldv[b]) {
				snprintf(why, cap, "byte %llu outside the writes changed", (unsigned long long)b);
				return 1;
			}
		}
		/* the written bytes of the sector: new if complete, all old or all new if in flight */
		int all_old = 1, all_new = 1;
		for (uint64_t b = s; b < e; b++) {
			int in = 0;
			for (uint32_t i = 0; i < R->nops && !in; i++)
				in = b >= R->ops[i].off && b < R->ops[i].off + R->ops[i].len && R->ops[i].state;
			if (!in)
				continue;
			all_old &= v[b] == R->oldv[b];
			all_new &= v[b] == R->newv[b];
		}
		if (done && !inflight && !all_new) {
			snprintf(why, cap, "sector at %llu of a completed write does not read back", (unsigned long long)s);
			return 1;
		}
		if (inflight && !all_old && !all_new) {
			snprintf(why, cap, "sector at %llu of a write in flight is neither old nor new", (unsigned long long)s);
			return 1;
		}
		if (!inflight && !done && !all_old) {
			snprintf(why, cap, "sector at %llu of a write never issued changed", (unsigned long long)s);
			return 1;
		}
	}
	return 0;
}

/* Both superblock copies of every active member valid with equal events. */
static int check_copies(uint32_t n, char *why, size_t cap)
{
	struct rk_discovery *d = discover_skip(n, 0);
	int bad = 0;
	for (uint32_t r = 0; d->narrays == 1 && r < d->arrays[0].nroles && !bad; r++) {
		const struct rk_member *m = &d->arrays[0].roles[r];
		if (m->cls != RK_MEMBER_ACTIVE)
			continue;
		const struct rk_sb_read *rd = &m->rd;
		if (rd->copy[0].status != RK_COPY_OK || rd->copy[1].status != RK_COPY_OK) {
			snprintf(why, cap, "role %u: a superblock copy is not valid (%.300s)", r, rd->why);
			bad = 1;
		} else if (rd->copy[0].sb->events != rd->copy[1].sb->events ||
		           rd->copy[0].sb->events != d->arrays[0].sb->events) {
			snprintf(why, cap, "role %u: copies at events %llu/%llu, array at %llu", r,
			         (unsigned long long)rd->copy[0].sb->events, (unsigned long long)rd->copy[1].sb->events,
			         (unsigned long long)d->arrays[0].sb->events);
			bad = 1;
		}
	}
	rk_discovery_free(d);
	return bad;
}

/* ---- the write paths over rk_array ---- */

static void plan_ops(struct run *R)
{
	const struct cfg *c = R->c;
	uint64_t sd = R->stripe_data, ch = c->chunk ? c->chunk : 4096;
	R->nops = 0;
	switch (R->p) {
	case P_FULL:
		/* two whole stripes, then one more (mirrors: 32 KiB pieces) */
		if (c->level == 1) {
			R->ops[R->nops++] = (struct op){ 8192, 32768, 0 };
			R->ops[R->nops++] = (struct op){ 65536, 16384, 0 };
		} else {
			R->ops[R->nops++] = (struct op){ sd, 2 * sd, 0 };
			R->ops[R->nops++] = (struct op){ 4 * sd, sd, 0 };
		}
		break;
	case P_PARTIAL:
	case P_DEGRADED:
		R->ops[R->nops++] = (struct op){ ch / 2 + 100, 1000, 0 };                   /* inside one chunk */
		R->ops[R->nops++] = (struct op){ 2 * sd + ch - 3000, 6000, 0 };             /* across a chunk boundary */
		R->ops[R->nops++] = (struct op){ 3 * sd + 7, 300, 0 };                     /* under a sector */
		if (R->p == P_DEGRADED && c->level != 1)
			R->ops[R->nops++] = (struct op){ 5 * sd, sd, 0 };                       /* a full stripe, degraded */
		break;
	default:
		break;
	}
	for (uint32_t i = 0; i < R->nops; i++)
		ck_assert_uint_le(R->ops[i].off + R->ops[i].len, R->vsize);
}

static void restore_base(const struct run *R)
{
	for (uint32_t i = 0; i < R->c->n; i++)
		put_file(paths[i], R->base[i], MEMBER_BYTES);
}

static rk_err on_begin(void *ctx)
{
	return rk_array_begin_write(ctx);
}

/* raid-scrub --repair as the tool runs it: rk_scrub_run over the members
 * with the array's write protocol around it. */
static rk_err run_repair(struct run *R, rk_array *a, rk_dev **devs)
{
	struct rk_geom g;
	uint64_t doff[MAXM];
	for (uint32_t r = 0; r < R->c->n; r++)
		doff[r] = RK_DATA_OFFSET_DEFAULT;
	struct rk_scrub_opts so;
	memset(&so, 0, sizeof so);
	so.repair = 1;
	so.on_begin_write = on_begin;
	so.ctx = a;
	so.no_map = 1;
	struct rk_scrub_stats st;
	rk_err e = rk_geom_init(&g, R->c->level, R->layout, R->c->chunk, R->c->n, R->data_size);
	if (!e)
		e = rk_scrub_run(&g, devs, doff, 0, g.nstripes, &so, &st);
	return e;
}

/* Runs the path's writes under SPEC; returns the writes issued. */
static uint64_t run_writes(struct run *R, const struct rk_fault_spec *spec, rk_err *last, int *fired)
{
	const struct cfg *c = R->c;
	rk_fault_plan *plan = NULL;
	ck_assert_int_eq(rk_fault_plan_create(&plan, spec), RK_OK);
	rk_dev *devs[MAXM] = { 0 };
	struct rk_sb *sbs[MAXM] = { 0 };
	struct rk_sb tmpl;
	int have = 0;
	for (uint32_t r = 0; r < c->n; r++) {
		if ((int)r == R->missing)
			continue;
		rk_dev *d = NULL;
		ck_assert_int_eq(rk_dev_open(&d, paths[r], RK_DEV_RDWR), RK_OK);
		ck_assert_int_eq(rk_dev_fault(&devs[r], d, plan, (int)r), RK_OK);
		struct rk_sb_read rd;
		rk_err e = rk_sb_read(devs[r], &rd);
		if (e == RK_OK) {
			sbs[r] = malloc(sizeof *sbs[r]);
			memcpy(sbs[r], rd.copy[rd.chosen].sb, sizeof *sbs[r]);
			if (!have) {
				memcpy(&tmpl, sbs[r], sizeof tmpl);
				have = 1;
			}
		}
		rk_sb_read_free(&rd);
		if (e) {   /* a pull or read error while reading the superblock: leave it out */
			rk_dev_close(devs[r]);
			devs[r] = NULL;
		}
	}
	for (uint32_t i = 0; i < R->nops; i++)
		R->ops[i].state = 0;
	*last = RK_OK;
	rk_array *a = NULL;
	rk_err e = have ? rk_array_open_devs(&a, &tmpl, devs, (const struct rk_sb *const *)sbs, RK_ARRAY_RDWR)
	                : RK_E_TOOFEW;
	if (e == RK_OK) {
		/* RK_FAULTS_NOJOURNAL=1: shows what the harness finds without the journal */
		if (getenv("RK_FAULTS_NOJOURNAL"))
			rk_array_set_journal(a, 0);
		if (R->p == P_REPAIR)
			e = run_repair(R, a, devs);
		for (uint32_t i = 0; i < R->nops && R->p != P_REPAIR; i++) {
			R->ops[i].state = 1;
			e = rk_array_write(a, R->newv + R->ops[i].off, (size_t)R->ops[i].len, R->ops[i].off);
			if (!e)
				e = rk_array_flush(a);
			if (e)
				break;
			R->ops[i].state = 2;
		}
		/* a read error met by a read through the writable array is
		 * repaired in place: the member stays, the next read is clean */
		R->re_kept = 0;
		if (spec->model == RK_FAULT_READ_ERROR && !e && R->p != P_REPAIR) {
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
		rk_err ce = rk_array_close(a);
		if (!e)
			e = ce;
	}
	*last = e;
	uint64_t w = rk_fault_writes(plan);
	*fired = rk_fault_fired(plan);
	if (spec->model == RK_FAULT_POWER_CUT)
		ck_assert_int_eq(rk_fault_crash(plan), RK_OK);
	for (uint32_t r = 0; r < c->n; r++) {
		rk_dev_close(devs[r]);
		free(sbs[r]);
	}
	rk_fault_plan_free(plan);
	return w;
}

/* The invariants after one fault point of a write path. */
static void verify_writes(struct run *R, const struct rk_fault_spec *spec, rk_err last, int fired)
{
	const struct cfg *c = R->c;
	char why[600];
	uint8_t *v = malloc(R->vsize), *w = malloc(R->vsize);
	int state;
	/* the pulled member must never be used again */
	if (spec->model == RK_FAULT_PULL && fired) {
		struct rk_discovery *d = discover_skip(c->n, 0);
		/* unless it was the last one standing: then the write stopped (too few) */
		if (last != RK_E_TOOFEW && d->narrays == 1 && d->arrays[0].roles[spec->member].cls == RK_MEMBER_ACTIVE &&
		    d->arrays[0].roles[spec->member].path)
			violation(R, spec, "the pulled member is still active (%s; the write returned %s)", d->arrays[0].why,
			          rk_strerror(last));
		rk_discovery_free(d);
	}
	if (spec->model == RK_FAULT_READ_ERROR && R->re_kept) {
		struct rk_discovery *d = discover_skip(c->n, 0);
		if (d->narrays != 1 || d->arrays[0].roles[spec->member].cls != RK_MEMBER_ACTIVE)
			violation(R, spec, "the member with the repaired read error is not active");
		rk_discovery_free(d);
	}
	if (read_volume(c->n, 0, v, R->vsize, &state, why, sizeof why)) {
		/* a pull on a degraded array may leave too few: then the write must have said so */
		if (spec->model == RK_FAULT_PULL && R->missing >= 0 && c->level != 6 && state == RK_ASTATE_FAILED &&
		    last == RK_E_TOOFEW)
			goto out;
		violation(R, spec, "does not assemble: %s (write returned %s)", why, rk_strerror(last));
		goto out;
	}
	if (check_model(R, v, why, sizeof why)) {
		violation(R, spec, "read-only (replay in memory): %s", why);
		goto out;
	}
	/* read-write open: the replay goes to the members; the array ends clean */
	{
		struct rk_discovery *d = discover_skip(c->n, 0);
		rk_array *a = NULL;
		rk_err e = d->narrays == 1 ? rk_array_open(&a, &d->arrays[0], RK_ARRAY_RDWR) : RK_E_NOSB;
		if (e)
			violation(R, spec, "read-write open: %s", rk_errmsg());
		else if ((e = rk_array_close(a)))
			violation(R, spec, "close after replay: %s", rk_errmsg());
		rk_discovery_free(d);
		if (e)
			goto out;
	}
	if (check_copies(c->n, why, sizeof why))
		violation(R, spec, "%s", why);
	if (read_volume(c->n, 0, w, R->vsize, &state, why, sizeof why)) {
		violation(R, spec, "after replay: %s", why);
		goto out;
	}
	if (memcmp(v, w, R->vsize)) {
		violation(R, spec, "replay on the members reads differently from the replay in memory");
		goto out;
	}
	if (R->p == P_REPAIR) {
		/* what the interrupted repair left, a second repair finishes */
		struct rk_fault_spec none = { .model = RK_FAULT_NONE };
		rk_err l2;
		int f2;
		run_writes(R, &none, &l2, &f2);
		if (l2 && l2 != RK_E_TOOFEW)
			violation(R, spec, "the repair run again fails: %s", rk_strerror(l2));
		if (read_volume(c->n, 0, w, R->vsize, &state, why, sizeof why) || memcmp(v, w, R->vsize)) {
			violation(R, spec, "the second repair changed the volume");
			goto out;
		}
	}
	/* the write hole: any member (any two on RAID-6) left out reads the same */
	{
		struct rk_discovery *d = discover_skip(c->n, 0);
		uint32_t active = 0;
		for (uint32_t r = 0; r < c->n; r++)
			if (d->arrays[0].roles[r].cls == RK_MEMBER_ACTIVE)
				active |= 1u << r;
		rk_discovery_free(d);
		for (uint32_t x = 0; x < c->n; x++) {
			for (uint32_t y = x; y < c->n; y++) {
				if (y != x && c->level != 6)
					continue;
				uint32_t skip = (1u << x) | (1u << y);
				if ((skip & active) != skip)
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
					goto out;
				}
			}
		}
	}
out:
	free(v);
	free(w);
}

static void point(struct run *R, const struct rk_fault_spec *spec)
{
	restore_base(R);
	rk_err last;
	int fired = 0;
	R->points++;
	run_writes(R, spec, &last, &fired);
	verify_writes(R, spec, last, fired);
}

static void setup_run(struct run *R, const struct cfg *c, enum path p)
{
	memset(R, 0, sizeof *R);
	R->c = c;
	R->p = p;
	R->missing = p == P_DEGRADED ? 1 : -1;
	create_plain(c, NULL);
	struct rk_discovery *d = discover_skip(c->n, 0);
	ck_assert_uint_eq(d->narrays, 1);
	rk_array *a = NULL;
	ck_assert_int_eq(rk_array_open(&a, &d->arrays[0], RK_ARRAY_RDWR), RK_OK);
	R->vsize = rk_array_size(a);
	struct rk_geom g;
	ck_assert_int_eq(rk_geom_init(&g, c->level, d->arrays[0].sb->layout, d->arrays[0].sb->chunk, c->n,
	                              d->arrays[0].sb->data_size), RK_OK);
	R->stripe_data = c->level == 1 ? 4096 : g.stripe_data;
	R->oldv = malloc(R->vsize);
	R->newv = malloc(R->vsize);
	fill(R->oldv, R->vsize, (uint64_t)c->level * 1000 + c->n + p);
	fill(R->newv, R->vsize, (uint64_t)c->level * 1000 + c->n + p + 77);
	ck_assert_int_eq(rk_array_write(a, R->oldv, R->vsize, 0), RK_OK);
	ck_assert_int_eq(rk_array_close(a), RK_OK);
	R->layout = d->arrays[0].sb->layout;
	R->data_size = d->arrays[0].sb->data_size;
	rk_discovery_free(d);
	for (uint32_t i = 0; i < c->n; i++)
		R->base[i] = get_file(paths[i], MEMBER_BYTES);
	if (p == P_REPAIR) {
		/* bad parity in stripes 1 and 3 (P) and 4 (Q, RAID-6): what the
		 * repair rewrites; data never changes */
		uint32_t vr[MAXM], sl[MAXM];
		uint64_t bad[3] = { 1, 3, 4 };
		for (int k = 0; k < 3; k++) {
			struct rk_stripe_map m = { .vol_role = vr, .slot = sl };
			ck_assert_int_eq(rk_geom_stripe_map(&g, bad[k], &m), RK_OK);
			uint32_t role = k == 2 && c->level == 6 ? m.q_role : m.p_role;
			uint8_t *at = R->base[role] + RK_DATA_OFFSET_DEFAULT + bad[k] * g.chunk + 700;
			for (int i = 0; i < 1500; i++)
				at[i] ^= 0x3C;
		}
	}
	plan_ops(R);
}

static void free_run(struct run *R)
{
	for (uint32_t i = 0; i < MAXM; i++)
		free(R->base[i]);
	free(R->oldv);
	free(R->newv);
}

static void enumerate_writes(struct run *R)
{
	const struct cfg *c = R->c;
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
	uint64_t step = full_mode ? 1 : 4;
	int seeds = full_mode ? 4 : 1;
	/* power cut and kill at every write (and once past the last) */
	for (uint64_t n = 0; n <= W; n += step)
		for (int s = 0; s < seeds; s++) {
			struct rk_fault_spec sp = { .model = RK_FAULT_POWER_CUT, .n = n, .seed = n * 31 + (uint64_t)s * 7919 + 1 };
			point(R, &sp);
		}
	for (uint64_t n = (step > 1 ? 2 : 0); n < W; n += step) {
		struct rk_fault_spec sp = { .model = RK_FAULT_KILL, .n = n, .seed = n };
		point(R, &sp);
	}
	/* cable pulls: each member, at each of its I/Os (bounded by the writes).
	 * Not under repair: the array starts with bad parity there, and a
	 * member lost before the repair reached it is rebuilt from that parity
	 * (two faults: the bad parity and the pull) */
	uint64_t per = W / c->n + 12;
	for (uint32_t m = 0; m < c->n && R->p != P_REPAIR; m++) {
		if ((int)m == R->missing)
			continue;
		for (uint64_t n = m % step; n < per; n += step) {
			struct rk_fault_spec sp = { .model = RK_FAULT_PULL, .n = n, .member = (int)m, .seed = n };
			point(R, &sp);
		}
	}
	/* read errors: each 4 KiB block of each member's data area */
	uint64_t bstep = full_mode ? 1 : 6;
	for (uint32_t m = 0; m < c->n; m++) {
		if ((int)m == R->missing)
			continue;
		for (uint64_t b = m % bstep; b < DATA_BYTES / 4096; b += bstep) {
			struct rk_fault_spec sp = { .model = RK_FAULT_READ_ERROR, .member = (int)m,
			                            .off = RK_DATA_OFFSET_DEFAULT + b * 4096, .len = 4096, .seed = b };
			point(R, &sp);
		}
	}
}

/* ---- mkraid --from through wrap_dev ---- */

struct wrap_ctx {
	rk_fault_plan *plan;
};

static rk_err wrap_fault(void *ctx, uint32_t role, rk_dev **dev)
{
	struct wrap_ctx *w = ctx;
	return rk_dev_fault(dev, *dev, w->plan, (int)role);
}

/* One mkraid --from under SPEC; returns the writes issued. */
static uint64_t run_mkraid(struct run *R, const struct rk_fault_spec *spec, rk_err *last)
{
	const struct cfg *c = R->c;
	for (uint32_t i = 0; i < c->n; i++)
		unlink(paths[i]);
	struct wrap_ctx w = { NULL };
	ck_assert_int_eq(rk_fault_plan_create(&w.plan, spec), RK_OK);
	struct rk_create_opts o;
	memset(&o, 0, sizeof o);
	o.level = c->level;
	o.layout = RK_CREATE_LAYOUT_DEFAULT;
	o.chunk = c->chunk ? c->chunk : 4096;
	o.create_size = MEMBER_BYTES;
	o.nmembers = c->n;
	o.paths = (const char *const *)paths;
	o.from = from_path;
	o.wrap_dev = wrap_fault;
	o.wrap_ctx = &w;
	*last = rk_create(&o, NULL);
	uint64_t n = rk_fault_writes(w.plan);
	if (spec->model == RK_FAULT_POWER_CUT)
		ck_assert_int_eq(rk_fault_crash(w.plan), RK_OK);
	rk_fault_plan_free(w.plan);
	return n;
}

/* After mkraid: nothing assembles, or the array holds FILE's bytes then zeros. */
static void verify_mkraid(struct run *R, const struct rk_fault_spec *spec, rk_err last)
{
	char why[600];
	int state;
	uint8_t *v = malloc(R->vsize);
	struct rk_discovery *d = discover_skip(R->c->n, 0);
	int any = d->narrays > 0;
	rk_discovery_free(d);
	if (!any) {
		if (last == RK_OK)
			violation(R, spec, "mkraid reported success but no array is found");
		goto out;
	}
	if (read_volume(R->c->n, 0, v, R->vsize, &state, why, sizeof why)) {
		if (state == RK_ASTATE_FAILED && last != RK_OK)
			goto out;   /* superblocks on too few members: nothing made */
		violation(R, spec, "mkraid left an array that does not read: %s", why);
		goto out;
	}
	for (uint64_t b = 0; b < R->vsize; b++) {
		uint8_t want = b < R->from_len ? R->newv[b] : 0;
		if (v[b] != want) {
			violation(R, spec, "mkraid left an array whose byte %llu is not the --from data", (unsigned long long)b);
			break;
		}
	}
	if (last == RK_OK && state != RK_ASTATE_CLEAN && spec->model != RK_FAULT_PULL &&
	    spec->model != RK_FAULT_READ_ERROR)
		violation(R, spec, "mkraid reported success but the array is %s", rk_astate_name(state));
out:
	free(v);
}

static void enumerate_mkraid(struct run *R)
{
	const struct cfg *c = R->c;
	memset(R, 0, sizeof *R);
	R->c = c;
	R->p = P_MKRAID;
	R->missing = -1;
	create_plain(c, NULL);
	struct rk_discovery *d = discover_skip(c->n, 0);
	R->vsize = d->arrays[0].sb->volume_size;
	rk_discovery_free(d);
	R->newv = malloc(R->vsize);
	R->from_len = R->vsize - R->vsize / 5 - 123;
	fill(R->newv, R->vsize, 4242 + c->n);
	put_file(from_path, R->newv, (size_t)R->from_len);
	struct rk_fault_spec none = { .model = RK_FAULT_NONE };
	rk_err last;
	uint64_t W = run_mkraid(R, &none, &last);
	ck_assert_msg(last == RK_OK, "fault-free mkraid: %s", rk_errmsg());
	verify_mkraid(R, &none, last);
	uint64_t step = full_mode ? 1 : 3;
	int seeds = full_mode ? 4 : 1;
	for (uint64_t n = 0; n <= W; n += step)
		for (int s = 0; s < seeds; s++) {
			struct rk_fault_spec sp = { .model = RK_FAULT_POWER_CUT, .n = n, .seed = n * 13 + (uint64_t)s * 101 + 5 };
			run_mkraid(R, &sp, &last);
			R->points++;
			verify_mkraid(R, &sp, last);
		}
	for (uint64_t n = 1; n < W; n += step) {
		struct rk_fault_spec sp = { .model = RK_FAULT_KILL, .n = n };
		run_mkraid(R, &sp, &last);
		R->points++;
		verify_mkraid(R, &sp, last);
	}
	uint64_t per = W / c->n + 4;
	for (uint32_t m = 0; m < c->n; m++)
		for (uint64_t n = m % step; n < per; n += step) {
			struct rk_fault_spec sp = { .model = RK_FAULT_PULL, .member = (int)m, .n = n };
			run_mkraid(R, &sp, &last);
			R->points++;
			verify_mkraid(R, &sp, last);
		}
	free(R->newv);
	R->newv = NULL;
}

/* ---- raid-resize: adding a member (a reshape) ---- */

/* One reshape of the n-member array onto paths[n] under SPEC. */
static uint64_t run_resize(struct run *R, const struct rk_fault_spec *spec, rk_err *last)
{
	uint32_t n = R->c->n;
	rk_fault_plan *plan = NULL;
	ck_assert_int_eq(rk_fault_plan_create(&plan, spec), RK_OK);
	rk_dev *devs[MAXM + 1] = { 0 };
	for (uint32_t r = 0; r <= n; r++) {
		rk_dev *d = NULL;
		ck_assert_int_eq(rk_dev_open(&d, paths[r], RK_DEV_RDWR), RK_OK);
		ck_assert_int_eq(rk_dev_fault(&devs[r], d, plan, (int)r), RK_OK);
	}
	struct rk_resize_opts o;
	memset(&o, 0, sizeof o);
	o.layout = RK_RESIZE_LAYOUT_KEEP;
	o.batch_max = 2 * R->stripe_data;   /* many checkpoints */
	struct rk_resize_result res;
	*last = rk_resize_reshape(devs, n, &devs[n], 1, &o, &res);
	uint64_t w = rk_fault_writes(plan);
	if (spec->model == RK_FAULT_POWER_CUT)
		ck_assert_int_eq(rk_fault_crash(plan), RK_OK);
	for (uint32_t r = 0; r <= n; r++)
		rk_dev_close(devs[r]);
	rk_fault_plan_free(plan);
	return w;
}

/* After the fault: raid-resize --continue on the members as left (with and
 * then without the new one), then the volume holds the old data, and with
 * any member left out reads the same. */
static void verify_resize(struct run *R, const struct rk_fault_spec *spec, rk_err last)
{
	uint32_t n = R->c->n;
	char why[600];
	int state;
	rk_err e = RK_OK;
	for (uint32_t k = n + 1; k >= n; k--) {
		rk_dev *devs[MAXM + 1] = { 0 };
		for (uint32_t r = 0; r < k; r++)
			ck_assert_int_eq(rk_dev_open(&devs[r], paths[r], RK_DEV_RDWR), RK_OK);
		struct rk_resize_opts o;
		memset(&o, 0, sizeof o);
		o.layout = RK_RESIZE_LAYOUT_KEEP;
		struct rk_resize_result res;
		e = rk_resize_continue(devs, k, &o, &res);
		for (uint32_t r = 0; r < k; r++)
			rk_dev_close(devs[r]);
		if (!e)
			break;
	}
	if (e) {
		violation(R, spec, "raid-resize --continue fails: %s (the reshape returned %s)", rk_errmsg(), rk_strerror(last));
		return;
	}
	struct rk_discovery *d = discover_skip(n + 1, 0);
	uint64_t vs = d->narrays ? d->arrays[0].sb->volume_size : 0;
	uint32_t used = d->narrays ? d->arrays[0].nroles : 0;
	rk_discovery_free(d);
	if (vs < R->vsize) {
		violation(R, spec, "after --continue the volume is %llu bytes (was %llu)", (unsigned long long)vs,
		          (unsigned long long)R->vsize);
		return;
	}
	uint8_t *v = malloc(vs), *w = malloc(vs);
	if (read_volume(n + 1, 0, v, vs, &state, why, sizeof why)) {
		violation(R, spec, "after --continue: %s", why);
		goto out;
	}
	if (memcmp(v, R->oldv, R->vsize)) {
		violation(R, spec, "the reshape changed the data");
		goto out;
	}
	for (uint32_t x = 0; x < used; x++) {
		if (read_volume(n + 1, 1u << x, w, vs, &state, why, sizeof why))
			continue;
		if (memcmp(v, w, vs)) {
			violation(R, spec, "after the reshape, without role %u the volume differs", x);
			goto out;
		}
	}
out:
	free(v);
	free(w);
}

static void enumerate_resize(struct run *R)
{
	const struct cfg *c = R->c;
	static uint8_t zero[MEMBER_BYTES];
	struct rk_fault_spec none = { .model = RK_FAULT_NONE };
	rk_err last;
	restore_base(R);
	put_file(paths[c->n], zero, MEMBER_BYTES);
	uint64_t W = run_resize(R, &none, &last);
	ck_assert_msg(last == RK_OK, "fault-free reshape: %s", rk_errmsg());
	verify_resize(R, &none, last);
	uint64_t step = full_mode ? 1 : 8;
	int seeds = full_mode ? 2 : 1;
	for (uint64_t n = 0; n <= W; n += step)
		for (int sd = 0; sd < seeds; sd++) {
			struct rk_fault_spec sp = { .model = RK_FAULT_POWER_CUT, .n = n, .seed = n * 17 + (uint64_t)sd * 313 + 3 };
			restore_base(R);
			put_file(paths[c->n], zero, MEMBER_BYTES);
			run_resize(R, &sp, &last);
			R->points++;
			verify_resize(R, &sp, last);
		}
	for (uint64_t n = 1; n < W; n += step) {
		struct rk_fault_spec sp = { .model = RK_FAULT_KILL, .n = n };
		restore_base(R);
		put_file(paths[c->n], zero, MEMBER_BYTES);
		run_resize(R, &sp, &last);
		R->points++;
		verify_resize(R, &sp, last);
	}
	uint64_t per = W / (c->n + 1) + 8;
	for (uint32_t m = 0; m <= c->n; m++)
		for (uint64_t n = m % step; n < per; n += step) {
			struct rk_fault_spec sp = { .model = RK_FAULT_PULL, .member = (int)m, .n = n };
			restore_base(R);
			put_file(paths[c->n], zero, MEMBER_BYTES);
			run_resize(R, &sp, &last);
			R->points++;
			verify_resize(R, &sp, last);
		}
}

/* ---- raid-recover --rebuild ---- */

static rk_err wrap_rebuild(void *ctx, uint32_t idx, rk_dev **dev)
{
	struct wrap_ctx *w = ctx;
	return rk_dev_fault(dev, *dev, w->plan, (int)idx);
}

/* Rebuilds role R->rb_role of the array (its member left out) onto a new
 * file at its path under SPEC (NULL: no faults, a resume or a finish);
 * returns the writes issued. */
static uint64_t run_rebuild(struct run *R, const struct rk_fault_spec *spec, rk_err *last)
{
	uint32_t n = R->c->n, x = R->rb_role;
	char *mp[MAXM];
	uint32_t k = 0;
	for (uint32_t i = 0; i < n; i++)
		if (i != x)
			mp[k++] = paths[i];
	struct rk_fault_spec none = { .model = RK_FAULT_NONE };
	struct wrap_ctx w = { NULL };
	ck_assert_int_eq(rk_fault_plan_create(&w.plan, spec ? spec : &none), RK_OK);
	struct rk_rebuild_opts o;
	memset(&o, 0, sizeof o);
	o.role = -1;
	o.checkpoint_bytes = 2 * (R->c->chunk ? R->c->chunk : 4096);   /* many checkpoints */
	o.wrap_dev = wrap_rebuild;
	o.wrap_ctx = &w;
	struct rk_rebuild_result res;
	*last = rk_recover_rebuild(paths[x], mp, k, &o, &res);
	uint64_t wr = rk_fault_writes(w.plan);
	if (spec && spec->model == RK_FAULT_POWER_CUT)
		ck_assert_int_eq(rk_fault_crash(w.plan), RK_OK);
	rk_fault_plan_free(w.plan);
	return wr;
}

/* After the fault: the array assembles and reads the original volume; the
 * rebuild run again (unless it had finished) completes; then every role is
 * active, the superblock copies agree, the rebuilt member's data area
 * equals the lost one's, and with any member left out the volume reads the
 * same. */
static void verify_rebuild(struct run *R, const struct rk_fault_spec *spec, rk_err last)
{
	const struct cfg *c = R->c;
	uint32_t x = R->rb_role;
	char why[600];
	int state;
	uint8_t *v = malloc(R->vsize);
	if (read_volume(c->n, 0, v, R->vsize, &state, why, sizeof why)) {
		violation(R, spec, "after the fault: %s (the rebuild returned %s)", why, rk_strerror(last));
		goto out;
	}
	if (memcmp(v, R->oldv, R->vsize)) {
		violation(R, spec, "after the fault the volume differs (the rebuild returned %s)", rk_strerror(last));
		goto out;
	}
	struct rk_discovery *d = discover_skip(c->n, 0);
	int done = d->narrays == 1 && d->arrays[0].state == RK_ASTATE_CLEAN &&
	           d->arrays[0].roles[x].cls == RK_MEMBER_ACTIVE && d->arrays[0].roles[x].path;
	rk_discovery_free(d);
	if (last == RK_OK && !done) {
		violation(R, spec, "the rebuild reported success but the array is not whole");
		goto out;
	}
	if (!done) {
		rk_err l2;
		run_rebuild(R, NULL, &l2);
		if (l2) {
			violation(R, spec, "the rebuild run again fails: %s", rk_errmsg());
			goto out;
		}
	}
	/* a read-write open and close (as raid-assemble --write) brings a
	 * member one event behind, tolerated by discovery, back in step */
	d = discover_skip(c->n, 0);
	{
		rk_array *a = NULL;
		rk_err e = d->narrays == 1 ? rk_array_open(&a, &d->arrays[0], RK_ARRAY_RDWR) : RK_E_NOSB;
		if (!e)
			e = rk_array_close(a);
		rk_discovery_free(d);
		if (e) {
			violation(R, spec, "after the rebuild a read-write open fails: %s", rk_errmsg());
			goto out;
		}
	}
	if (check_copies(c->n, why, sizeof why)) {
		violation(R, spec, "after the rebuild: %s", why);
		goto out;
	}
	d = discover_skip(c->n, 0);
	done = d->narrays == 1 && d->arrays[0].state == RK_ASTATE_CLEAN;
	for (uint32_t r = 0; done && r < c->n; r++)
		done = d->arrays[0].roles[r].cls == RK_MEMBER_ACTIVE;
	rk_discovery_free(d);
	if (!done) {
		violation(R, spec, "after the rebuild ran again not every role is active");
		goto out;
	}
	{
		uint8_t *m = get_file(paths[x], MEMBER_BYTES);
		if (memcmp(m + RK_DATA_OFFSET_DEFAULT, R->base[x] + RK_DATA_OFFSET_DEFAULT, (size_t)R->data_size))
			violation(R, spec, "the rebuilt member's data area differs from the lost member's");
		free(m);
	}
	for (uint32_t y = 0; y < c->n; y++) {
		if (read_volume(c->n, 1u << y, v, R->vsize, &state, why, sizeof why) || memcmp(v, R->oldv, R->vsize)) {
			violation(R, spec, "after the rebuild, without role %u the volume differs", y);
			break;
		}
	}
out:
	free(v);
}

static void rebuild_point(struct run *R, const struct rk_fault_spec *spec)
{
	rk_err last;
	restore_base(R);
	unlink(paths[R->rb_role]);   /* the lost member: NEW is created at its path */
	run_rebuild(R, spec, &last);
	R->points++;
	verify_rebuild(R, spec, last);
}

static void enumerate_rebuild(struct run *R)
{
	const struct cfg *c = R->c;
	struct rk_fault_spec none = { .model = RK_FAULT_NONE };
	rk_err last;
	restore_base(R);
	unlink(paths[R->rb_role]);
	uint64_t W = run_rebuild(R, &none, &last);
	ck_assert_msg(last == RK_OK, "fault-free rebuild: %s", rk_errmsg());
	verify_rebuild(R, &none, last);
	uint64_t step = full_mode ? 1 : 6;
	int seeds = full_mode ? 2 : 1;
	for (uint64_t n = R->rb_role % step; n <= W; n += step)
		for (int sd = 0; sd < seeds; sd++) {
			struct rk_fault_spec sp = { .model = RK_FAULT_POWER_CUT, .n = n, .seed = n * 23 + (uint64_t)sd * 577 + c->n };
			rebuild_point(R, &sp);
		}
	for (uint64_t n = 1 + R->rb_role % step; n < W; n += step) {
		struct rk_fault_spec sp = { .model = RK_FAULT_KILL, .n = n };
		rebuild_point(R, &sp);
	}
}

static void report(struct run *R, const char *what)
{
	printf("FAULTS RAID-%s x%u chunk %llu %s points %llu violations %llu\n", rk_level_name(R->c->level), R->c->n,
	       (unsigned long long)R->c->chunk, what, (unsigned long long)R->points, (unsigned long long)R->violations);
	fflush(stdout);
}

START_TEST(t_writes)
{
	const struct cfg *c = &cfgs[_i / 3];
	enum path p = (enum path)(_i % 3);
	struct run R;
	/* degraded writes go through redo records only: bound them small so
	 * that stripes group and wide stripes split into column pieces */
	if (p == P_DEGRADED)
		rk_test_hooks_set_journal_max(6144);
	setup_run(&R, c, p);
	enumerate_writes(&R);
	report(&R, path_names[p]);
	uint64_t v = R.violations, pts = R.points;
	free_run(&R);
	ck_assert_uint_gt(pts, 10);
	ck_assert_msg(v == 0, "%llu violations (see above)", (unsigned long long)v);
}
END_TEST

START_TEST(t_repair)
{
	const struct cfg *c = &cfgs[_i];
	if (c->level != 4 && c->level != 5 && c->level != 6)
		return;   /* mirrors: reads may come from the bad copy; covered by the scrub suite */
	struct run R;
	setup_run(&R, c, P_REPAIR);
	enumerate_writes(&R);
	report(&R, path_names[P_REPAIR]);
	uint64_t v = R.violations, pts = R.points;
	free_run(&R);
	ck_assert_uint_gt(pts, 10);
	ck_assert_msg(v == 0, "%llu violations (see above)", (unsigned long long)v);
}
END_TEST

START_TEST(t_resize)
{
	const struct cfg *c = &cfgs[_i];
	if ((c->level != 4 && c->level != 5 && c->level != 6) || c->n + 1 > MAXM)
		return;
	struct run R;
	setup_run(&R, c, P_FULL);
	R.p = P_RESIZE;
	enumerate_resize(&R);
	report(&R, path_names[P_RESIZE]);
	uint64_t v = R.violations, pts = R.points;
	free_run(&R);
	ck_assert_uint_gt(pts, 10);
	ck_assert_msg(v == 0, "%llu violations (see above)", (unsigned long long)v);
}
END_TEST

START_TEST(t_rebuild)
{
	const struct cfg *c = &cfgs[_i];
	struct run R;
	setup_run(&R, c, P_FULL);
	R.p = P_REBUILD;
	R.rb_role = (uint32_t)_i % c->n;   /* data, parity and mirror roles over the configurations */
	enumerate_rebuild(&R);
	report(&R, path_names[P_REBUILD]);
	uint64_t v = R.violations, pts = R.points;
	free_run(&R);
	ck_assert_uint_gt(pts, 10);
	ck_assert_msg(v == 0, "%llu violations (see above)", (unsigned long long)v);
}
END_TEST

START_TEST(t_mkraid)
{
	struct run R;
	R.c = &cfgs[_i];
	enumerate_mkraid(&R);
	report(&R, "mkraid");
	ck_assert_uint_gt(R.points, 5);
	ck_assert_msg(R.violations == 0, "%llu violations (see above)", (unsigned long long)R.violations);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("faults");
	TCase *tc = tcase_create("enumeration");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 3600);
	tcase_add_loop_test(tc, t_writes, 0, (int)NCFG * 3);
	tcase_add_loop_test(tc, t_mkraid, 0, (int)NCFG);
	tcase_add_loop_test(tc, t_repair, 0, (int)NCFG);
	tcase_add_loop_test(tc, t_resize, 0, (int)NCFG);
	tcase_add_loop_test(tc, t_rebuild, 0, (int)NCFG);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	srunner_run_all(sr, CK_NORMAL);
	int nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf ? EXIT_FAILURE : EXIT_SUCCESS;
}
