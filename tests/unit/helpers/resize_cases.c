/* resize_cases.c: see resize_cases.h. */
#include "resize_cases.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rk_array.h"
#include "rk_discover.h"
#include "rk_geom.h"
#include "rk_resize.h"
#include "rk_sb.h"
#include "rk_scrub.h"
#include "rk_test.h"

const struct rs_case rs_cases[] = {
	{ 5, 2, 3, 1, 65536, RS_KEEP_LEVEL, 0 },        /* RAID-5 +1 */
	{ 5, 2, 3, 2, 65536, RS_KEEP_LEVEL, 0 },        /* RAID-5 +2 */
	{ 6, 2, 4, 1, 65536, RS_KEEP_LEVEL, 0 },        /* RAID-6 +1 */
	{ 6, 2, 4, 2, 65536, RS_KEEP_LEVEL, 0 },        /* RAID-6 +2 */
	{ 5, 2, 4, 1, 65536, 6, 0 },          /* 5 -> 6 with one added member */
	{ 0, 0, 3, 1, 65536, 5, 0 },          /* 0 -> 5 */
	{ 0, 0, 2, 2, 32768, RS_KEEP_LEVEL, 0 },        /* RAID-0 +2 */
	{ 1, 0, 3, 0, 0, 5, 0 },              /* 1 -> 5 on the same members */
	{ 5, 0, 3, 1, 65536, RS_KEEP_LEVEL, 32768 },    /* +1 with a new chunk */
	{ 4, 0, 3, 1, 131072, RS_KEEP_LEVEL, 0 },       /* RAID-4 +1 */
	{ 1, 0, 2, 1, 0, RS_KEEP_LEVEL, 0 },            /* RAID-1 gains a mirror */
	/* RAID-10 near: restriped; odd counts wrap copies across rows */
	{ 10, RK_R10_LAYOUT(2, 1, 0), 4, 1, 65536, RS_KEEP_LEVEL, 0 },       /* 11: n2 4 -> 5 */
	{ 10, RK_R10_LAYOUT(2, 1, 0), 4, 2, 65536, RS_KEEP_LEVEL, 0 },       /* 12: n2 4 -> 6 */
	{ 10, RK_R10_LAYOUT(2, 1, 0), 3, 1, 65536, RS_KEEP_LEVEL, 0 },       /* 13: n2 3 -> 4 */
	{ 10, RK_R10_LAYOUT(3, 1, 0), 3, 1, 65536, RS_KEEP_LEVEL, 0 },       /* 14: n3 3 -> 4 */
	{ 10, RK_R10_LAYOUT(2, 1, 0), 4, 1, 65536, RS_KEEP_LEVEL, 32768 },   /* 15: n2 4 -> 5, chunk 64K -> 32K */
};
const unsigned rs_ncases = sizeof rs_cases / sizeof rs_cases[0];

uint8_t *resize_make_array(rk_dev **d, int32_t level, uint32_t layout, uint64_t chunk, uint32_t nr,
                           uint64_t devsz, int journal, uint64_t *vol)
{
	struct rk_test_mem_array a = { .level = level, .layout = layout, .chunk = chunk, .nroles = nr,
	                               .member_size = devsz, .journal = journal && level != 0 };
	return rk_test_mem_array_make(d, &a, vol);
}

void resize_add_members(rk_dev **d, uint32_t first, uint32_t count, uint64_t devsz)
{
	for (uint32_t a = 0; a < count; a++) {
		char nm[16];
		snprintf(nm, sizeof nm, "new%u", a);
		ck_assert_int_eq(rk_dev_mem(&d[first + a], nm, devsz), RK_OK);
		memset(rk_dev_mem_data(d[first + a]), 0x5A, devsz);
	}
}

void resize_stop_progress(void *ctx, uint64_t done, uint64_t total)
{
	struct resize_stop *st = ctx;
	(void)total;
	if (st->checkpoints > 0 ? --st->checkpoints <= 0 : done >= st->at)
		st->flag = 1;
}

rk_err resize_open_mid(rk_array **a, rk_dev **d, uint32_t n, int miss, int miss2, unsigned flags)
{
	struct rk_sb *own[RESIZE_MAX_MEMBERS] = { 0 };
	uint32_t fresh = 0;
	for (uint32_t i = 0; i < n; i++) {
		own[i] = rk_test_read_sb(d[i]);
		if (own[i]->events > own[fresh]->events)
			fresh = i;
	}
	const struct rk_sb *t = own[fresh];
	rk_dev *byrole[RESIZE_MAX_MEMBERS] = { 0 };
	const struct rk_sb *sbs[RESIZE_MAX_MEMBERS] = { 0 };
	uint32_t span = rk_resize_span(t);
	ck_assert_uint_le(span, RESIZE_MAX_MEMBERS);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t r = own[i]->this_role;
		if (r >= span || (int)r == miss || (int)r == miss2)
			continue;
		byrole[r] = d[i];
		sbs[r] = own[i];
	}
	rk_err e = rk_array_open_devs(a, t, byrole, sbs, flags);
	for (uint32_t i = 0; i < n; i++)
		free(own[i]);
	return e;
}

void resize_verify(rk_dev **d, uint32_t n, const uint8_t *data, uint64_t len)
{
	struct rk_sb *s = rk_test_read_sb(d[0]);
	ck_assert_uint_eq(s->nroles, n);
	ck_assert(!(s->feat_incompat & RK_FEAT_INCOMPAT_RESHAPE));
	for (uint32_t r = 1; r < n; r++) {
		struct rk_sb *o = rk_test_read_sb(d[r]);
		ck_assert_uint_eq(o->events, s->events);
		ck_assert_uint_eq(o->this_role, r);
		free(o);
	}
	uint64_t vsz = 0;
	uint8_t *b = malloc(s->volume_size);
	ck_assert_ptr_nonnull(b);
	ck_assert_int_eq(rk_resize_read(d, n, b, s->volume_size, 0, &vsz), RK_OK);
	ck_assert_uint_eq(vsz, s->volume_size);
	ck_assert_uint_ge(vsz, len);
	for (uint64_t i = 0; i < len; i++)
		if (b[i] != data[i])
			ck_abort_msg("volume byte %llu of %llu differs (events %llu, level %d)", (unsigned long long)i,
			             (unsigned long long)len, (unsigned long long)s->events, (int)s->level);
	for (uint64_t i = len; i < vsz; i++)
		if (b[i])
			ck_abort_msg("volume byte %llu past the old data is 0x%02x, not zero", (unsigned long long)i, b[i]);
	free(b);
	if (s->level != 0 && s->level != RK_LEVEL_LINEAR) {
		struct rk_geom g;
		ck_assert_int_eq(rk_geom_init(&g, s->level, s->layout, s->chunk, s->nroles, s->data_size), RK_OK);
		uint64_t offs[RESIZE_MAX_MEMBERS];
		for (uint32_t r = 0; r < n; r++)
			offs[r] = s->data_offset;
		struct rk_scrub_opts so = { 0 };
		struct rk_scrub_stats st;
		ck_assert_int_eq(rk_scrub_run(&g, d, offs, 0, g.nstripes, &so, &st), RK_OK);
		ck_assert_uint_eq(st.mismatches, 0);
		ck_assert_uint_eq(st.stripes, g.nstripes);
	}
	free(s);
}

/* Discovery over the N members after a crash (copied into files, as a
 * user's images would be) leaves none stale: mid-reshape a member may lag
 * only by superblock updates the writers' order lets discovery tolerate
 * (discover_array.c one_behind), an added one never. */
void resize_check_none_stale(rk_dev **d, uint32_t n)
{
	const char *base = getenv("TMPDIR");
	char dir[256], path[RESIZE_MAX_MEMBERS][300];
	char *paths[RESIZE_MAX_MEMBERS];
	snprintf(dir, sizeof dir, "%s/rk-rsstale.XXXXXX", base && *base ? base : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	for (uint32_t i = 0; i < n; i++) {
		uint64_t size = rk_dev_size(d[i]);
		uint8_t *b = malloc(size ? size : 1);
		ck_assert_ptr_nonnull(b);
		ck_assert_int_eq(rk_dev_pread(d[i], b, size, 0), RK_OK);
		snprintf(path[i], sizeof path[i], "%s/m%u", dir, i);
		FILE *f = fopen(path[i], "wb");
		ck_assert_ptr_nonnull(f);
		ck_assert_uint_eq(fwrite(b, 1, size, f), size);
		ck_assert_int_eq(fclose(f), 0);
		free(b);
		paths[i] = path[i];
	}
	struct rk_discovery *disc = NULL;
	ck_assert_int_eq(rk_discover(&disc, paths, n, NULL), RK_OK);
	for (uint32_t k = 0; k < disc->nleft; k++)
		ck_assert_msg(disc->left[k].cls != RK_MEMBER_STALE, "after a crash mid-reshape %s is stale: %s",
		              disc->left[k].path, disc->left[k].reason);
	rk_discovery_free(disc);
	for (uint32_t i = 0; i < n; i++)
		unlink(path[i]);
	rmdir(dir);
}

int resize_array_read_check(rk_dev **d, uint32_t n, const uint8_t *data, uint64_t len)
{
	struct rk_sb *own[RESIZE_MAX_MEMBERS] = { 0 };
	uint32_t fresh = 0;
	for (uint32_t i = 0; i < n; i++) {
		struct rk_sb_read rd;
		if (rk_sb_read(d[i], &rd) == RK_OK && rd.chosen >= 0) {
			own[i] = malloc(sizeof *own[i]);
			ck_assert_ptr_nonnull(own[i]);
			memcpy(own[i], rd.copy[rd.chosen].sb, sizeof *own[i]);
		}
		rk_sb_read_free(&rd);
		if (own[i] && (!own[fresh] || own[i]->events > own[fresh]->events))
			fresh = i;
	}
	const struct rk_sb *t = own[fresh];
	ck_assert_ptr_nonnull(t);
	rk_dev *byrole[RESIZE_MAX_MEMBERS] = { 0 };
	const struct rk_sb *sbs[RESIZE_MAX_MEMBERS] = { 0 };
	uint32_t span = rk_resize_span(t);
	ck_assert_uint_le(span, RESIZE_MAX_MEMBERS);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t r = own[i] ? own[i]->this_role : RK_SB_MAX_ROLES;
		if (r >= span || t->roles[r].state != RK_ROLE_ACTIVE || memcmp(t->roles[r].member_uuid, own[i]->member_uuid, 16))
			continue;   /* an added member the freshest superblock does not list yet */
		byrole[r] = d[i];
		sbs[r] = own[i];
	}
	int mid = !!(t->feat_incompat & RK_FEAT_INCOMPAT_RESHAPE);
	rk_array *a;
	rk_err e = rk_array_open_devs(&a, t, byrole, sbs, RK_ARRAY_RDONLY);
	ck_assert_msg(e == RK_OK, "rk_array_open_devs (reshape %d, at %llu): %s", mid,
	              (unsigned long long)t->reshape_pos, rk_errmsg());
	uint64_t pos = 1;
	ck_assert_int_eq(rk_array_reshaping(a, &pos), mid);
	if (mid)
		ck_assert_uint_eq(pos, t->reshape_pos);
	ck_assert_uint_ge(rk_array_size(a), len);
	uint8_t *b = malloc(len);
	ck_assert_ptr_nonnull(b);
	/* in two pieces, split off the checkpoint, and one read across it */
	uint64_t cut = mid && t->reshape_pos && t->reshape_pos < len ? t->reshape_pos - 1 : len / 2;
	ck_assert_int_eq(rk_array_read(a, b, (size_t)cut, 0), RK_OK);
	ck_assert_int_eq(rk_array_read(a, b + cut, (size_t)(len - cut), cut), RK_OK);
	for (uint64_t i = 0; i < len; i++)
		if (b[i] != data[i])
			ck_abort_msg("rk_array_read (reshape %d at %llu, events %llu) differs from the original at byte %llu "
			             "(cut %llu)", mid, (unsigned long long)t->reshape_pos, (unsigned long long)t->events,
			             (unsigned long long)i, (unsigned long long)cut);
	ck_assert_int_eq(rk_array_read(a, b, 1, rk_array_size(a)), RK_E_RANGE);
	ck_assert_int_eq(rk_array_write(a, b, 1, 0), RK_E_READONLY);
	ck_assert_int_eq(rk_array_close(a), RK_OK);
	free(b);
	/* Writing mid-reshape is rk_array's (test_array); here only reads, so
	 * the state the interruption left is what continue resumes from. */
	for (uint32_t i = 0; i < n; i++)
		free(own[i]);
	return mid;
}

void resize_interrupted(const struct rs_case *c, const struct rk_fault_spec *spec, struct resize_interruption *run,
                        uint64_t *writes)
{
	rk_dev *d[RESIZE_MAX_MEMBERS], *w[RESIZE_MAX_MEMBERS];
	uint64_t vol;
	rk_test_rnd_seed(12345);   /* same data each run */
	uint8_t *data = resize_make_array(d, c->level, c->layout, c->chunk, c->nr, run->member_size, run->journal, &vol);
	uint32_t n = c->nr + c->nadd;
	for (uint32_t a = 0; a < c->nadd; a++)
		ck_assert_int_eq(rk_dev_mem(&d[c->nr + a], "new", run->member_size), RK_OK);
	rk_fault_plan *plan;
	ck_assert_int_eq(rk_fault_plan_create(&plan, spec), RK_OK);
	for (uint32_t r = 0; r < n; r++)
		ck_assert_int_eq(rk_dev_fault(&w[r], d[r], plan, (int)r), RK_OK);
	if (spec->model == RK_FAULT_NONE) {
		resize_verify(d, c->nr, data, vol);
		resize_verify(w, c->nr, data, vol);
	}
	struct rk_resize_opts o = { .layout = RK_RESIZE_LAYOUT_KEEP, .batch_max = run->batch };
	if (c->new_level != RS_KEEP_LEVEL) {
		o.set_level = 1;
		o.level = c->new_level;
	}
	struct rk_resize_result res;
	rk_err e = rk_resize_reshape(w, c->nr, w + c->nr, c->nadd, &o, &res);
	if (writes)
		*writes = rk_fault_writes(plan);
	if (spec->model == RK_FAULT_NONE)
		resize_verify(w, n, data, vol);
	ck_assert_int_eq(rk_fault_crash(plan), RK_OK);
	/* What survived, on fresh devices. */
	rk_dev *after[RESIZE_MAX_MEMBERS];
	rk_test_crash_copies(plan, n, after);
	rk_test_close_devs(w, n);
	rk_fault_plan_free(plan);
	if (spec->model != RK_FAULT_NONE) {
		/* Mid-reshape the volume reads as before (old members suffice
		 * when the reshape never got recorded). */
		uint8_t *b = malloc(vol);
		ck_assert_ptr_nonnull(b);
		uint64_t vsz;
		rk_err re = rk_resize_read(after, n, b, vol, 0, &vsz);
		if (re == RK_E_STALE || re == RK_E_NOSB)   /* new members never got a superblock */
			re = rk_resize_read(after, c->nr, b, vol, 0, &vsz);
		ck_assert_msg(re == RK_OK, "read after kill: %s", rk_errmsg());
		ck_assert_msg(!memcmp(b, data, vol), "volume changed by an interrupted reshape (%s)", rk_errmsg());
		free(b);
		/* and as an assembled array (read-only mid-reshape) */
		if (resize_array_read_check(after, n, data, vol))
			run->midreads++;
		resize_check_none_stale(after, n);
		e = rk_resize_continue(after, n, NULL, &res);
		if (e == RK_E_NOSB || e == RK_E_STALE) {
			/* The added members were never written (or listed): the old
			 * array is intact; start again. */
			e = rk_resize_continue(after, c->nr, NULL, &res);
			ck_assert_msg(e == RK_OK, "continue (old members): %s", rk_errmsg());
			struct rk_sb *s = rk_test_read_sb(after[0]);
			int started = !!(s->feat_incompat & RK_FEAT_INCOMPAT_RESHAPE) || s->nroles != c->nr;
			free(s);
			if (!started)
				e = rk_resize_reshape(after, c->nr, after + c->nr, c->nadd, &o, &res);
		}
		ck_assert_msg(e == RK_OK, "continue: %s", rk_errmsg());
		run->points++;
	} else {
		ck_assert_int_eq(e, RK_OK);
	}
	resize_verify(after, n, data, vol);
	rk_test_close_devs(after, n);
	free(data);
}

uint64_t resize_kill_stride(void)
{
	const char *f = getenv("RK_FAULTS");
	return f && !strcmp(f, "full") ? 1 : RESIZE_KILL_STRIDE_SAMPLE;
}
