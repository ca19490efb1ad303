/* create_fill.c: the data steps of creating an array: finding members that
 * hold old data (rk_probe_scan_nonzero), making redundancy consistent over
 * the stripes they touch, and streaming --from into the volume. */
#include "create_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rk_print.h"
#include "rk_probe.h"

#define FILL_MAX (64u * 1024u * 1024u)   /* largest single write of the fill */

/* ---- finding old data (rk_probe_scan_nonzero) ---- */

/* Dirty rows collected over all members. */
struct row_run {             /* chunk rows [first, first+count) of the data area */
	uint64_t first, count;
};

struct runs {
	struct row_run *v;
	size_t n, cap;
	int oom;
};

static int runs_mark(void *ctx, uint64_t row, uint64_t at)
{
	struct runs *rs = ctx;
	(void)at;
	if (rs->n && rs->v[rs->n - 1].first + rs->v[rs->n - 1].count == row) {
		rs->v[rs->n - 1].count++;
		return 0;
	}
	if (rs->n && row < rs->v[rs->n - 1].first + rs->v[rs->n - 1].count)
		return 0;                /* already inside the last run */
	if (rs->n == rs->cap) {
		size_t nc = rs->cap ? rs->cap * 2 : 64;
		struct row_run *nv = realloc(rs->v, nc * sizeof *nv);
		if (!nv) {
			rs->oom = 1;
			return 1;
		}
		rs->v = nv;
		rs->cap = nc;
	}
	rs->v[rs->n].first = row;
	rs->v[rs->n].count = 1;
	rs->n++;
	return 0;
}

static int run_cmp(const void *a, const void *b)
{
	const struct row_run *x = a, *y = b;
	return x->first < y->first ? -1 : x->first > y->first;
}

/* Sorts and merges overlapping or adjacent runs. */
static void runs_merge(struct runs *rs)
{
	if (rs->n < 2)
		return;
	qsort(rs->v, rs->n, sizeof *rs->v, run_cmp);
	size_t w = 0;
	for (size_t i = 1; i < rs->n; i++) {
		uint64_t wend = rs->v[w].first + rs->v[w].count;
		if (rs->v[i].first <= wend) {
			uint64_t iend = rs->v[i].first + rs->v[i].count;
			if (iend > wend)
				rs->v[w].count = iend - rs->v[w].first;
		} else {
			rs->v[++w] = rs->v[i];
		}
	}
	rs->n = w + 1;
}

struct resync_ctx {
	rk_creator *c;
	uint64_t base, total;
};

static void resync_tick(void *ctx, uint64_t done)
{
	struct resync_ctx *r = ctx;
	/* Reported in volume bytes, like the other phases. */
	uint64_t sd = r->c->g.stripe_data;
	if (r->c->progress)
		r->c->progress(r->c->progress_ctx, RK_CREATE_PH_RESYNC, (r->base + done) * sd, r->total * sd);
}

struct scan_tick_ctx {
	rk_creator *c;
	uint64_t base, total;
};

static void scan_tick(void *ctx, uint64_t done)
{
	struct scan_tick_ctx *s = ctx;
	if (s->c->progress)
		s->c->progress(s->c->progress_ctx, RK_CREATE_PH_SCAN, s->base + done, s->total);
}

/* Bytes per volume write of the --from fill: up to four whole stripes; for
 * stripes larger than FILL_MAX, whole chunks (then writes split stripes). */
static uint64_t fill_batch(const rk_creator *c)
{
	uint64_t unit = c->plan.chunk ? c->plan.chunk : RK_SB_ALIGN;
	uint64_t sd = c->g.stripe_data ? c->g.stripe_data : unit;
	if (sd > FILL_MAX)
		return FILL_MAX - FILL_MAX % unit;
	uint64_t k = FILL_MAX / sd;
	return sd * (k > 4 ? 4 : k);
}

/* The engine over the members, opened on first need (fresh zero members
 * never need it). */
rk_err create_vol_get(rk_creator *c, rk_vol **v)
{
	if (*v)
		return RK_OK;
	uint64_t *doff = calloc(c->plan.nroles, sizeof *doff);
	if (!doff)
		return rk_fail(RK_E_NOMEM, "no memory");
	for (uint32_t i = 0; i < c->plan.nroles; i++)
		doff[i] = c->plan.data_offset;
	rk_err e = rk_vol_open(v, &c->g, c->devs, doff);
	free(doff);
	return e;
}

/* Appends the runs of MINE to RS. */
static rk_err runs_append(struct runs *rs, const struct runs *mine)
{
	if (rs->n + mine->n > rs->cap) {
		size_t nc = rs->n + mine->n;
		struct row_run *nv = realloc(rs->v, nc * sizeof *nv);
		if (!nv)
			return rk_fail(RK_E_NOMEM, "no memory for the list of dirty stripes");
		rs->v = nv;
		rs->cap = nc;
	}
	memcpy(rs->v + rs->n, mine->v, mine->n * sizeof *mine->v);
	rs->n += mine->n;
	return RK_OK;
}

/* Scans present member M for old data: MIRROR just whether any (m->dirty),
 * otherwise its dirty chunk rows, appended to RS. */
static rk_err scan_member(rk_creator *c, struct rk_create_member *m, int mirror, struct runs *rs,
                          struct scan_tick_ctx *st)
{
	struct rk_create_plan *p = &c->plan;
	/* runs of this member start a fresh ascending sequence; a mirror scan
	 * stops at the first dirty row */
	struct runs mine = {0};
	rk_err e = rk_probe_scan_nonzero(m->path, p->data_offset, p->data_offset, p->data_size,
	                                 mirror ? 1u << 20 : p->chunk, runs_mark, &mine, mirror,
	                                 &p->bytes_scanned, scan_tick, st);
	if (mirror) {
		m->dirty = mine.n || mine.oom;
	} else {
		if (mine.oom && !e)
			e = rk_fail(RK_E_NOMEM, "%s: no memory for the list of dirty stripes", m->path);
		if (!e && mine.n) {
			m->dirty = 1;
			e = runs_append(rs, &mine);
		}
	}
	free(mine.v);
	return e;
}

/* Scans every present member that was not created here (new sparse files
 * are all zero); *ANY 1 when one held old data. */
static rk_err scan_members(rk_creator *c, int mirror, struct runs *rs, int *any)
{
	struct rk_create_plan *p = &c->plan;
	uint64_t present_bytes = 0;
	for (uint32_t i = 0; i < p->nroles; i++)
		if (p->members[i].path && !p->members[i].created)
			present_bytes += p->data_size;
	struct scan_tick_ctx st = {c, 0, present_bytes};
	*any = 0;
	for (uint32_t i = 0; i < p->nroles; i++) {
		struct rk_create_member *m = &p->members[i];
		if (!m->path || m->created)
			continue;
		rk_err e = scan_member(c, m, mirror, rs, &st);
		if (e)
			return e;
		st.base += p->data_size;
		*any |= m->dirty;
	}
	return RK_OK;
}

/* The stripes to resync: mirrors all of them; parity levels the dirty
 * rows, less the whole stripes the --from fill writes in one full-stripe
 * write each (full-stripe writes compute parity afresh). */
static rk_err resync_plan(rk_creator *c, int mirror, struct runs *rs)
{
	const struct rk_geom *g = &c->g;
	if (mirror) {
		rs->n = 0;
		if (runs_mark(rs, 0, 0) || rs->oom)
			return rk_fail(RK_E_NOMEM, "no memory");
		rs->v[0].count = g->nstripes;
		return RK_OK;
	}
	runs_merge(rs);
	uint64_t full = 0;
	if (g->stripe_data && fill_batch(c) % g->stripe_data == 0)
		full = c->plan.from_size / g->stripe_data;
	size_t w = 0;
	for (size_t i = 0; i < rs->n; i++) {
		struct row_run r = rs->v[i];
		if (r.first < full) {
			uint64_t cut = full - r.first;
			if (cut >= r.count)
				continue;
			r.first += cut;
			r.count -= cut;
		}
		if (r.first >= g->nstripes)
			continue;
		if (r.count > g->nstripes - r.first)
			r.count = g->nstripes - r.first;
		rs->v[w++] = r;
	}
	rs->n = w;
	return RK_OK;
}

/* Resyncs the runs of RS through the engine (opened on need). */
static rk_err resync_runs(rk_creator *c, rk_vol **v, const struct runs *rs)
{
	struct rk_create_plan *p = &c->plan;
	uint64_t total = 0;
	for (size_t i = 0; i < rs->n; i++)
		total += rs->v[i].count;
	struct resync_ctx rc = {c, 0, total};
	rk_err e = total ? create_vol_get(c, v) : RK_OK;
	for (size_t i = 0; i < rs->n && !e; i++) {
		e = rk_vol_resync(*v, rs->v[i].first, rs->v[i].count, resync_tick, &rc);
		rc.base += rs->v[i].count;
	}
	p->stripes_resynced = total;
	if (!e && total) {
		char b[32];
		uint32_t nd = 0;
		for (uint32_t i = 0; i < p->nroles; i++)
			nd += p->members[i].dirty;
		create_note(p, "%u member%s held old data: redundancy made consistent over %llu stripe%s (%s of data area per member)",
		     nd, nd == 1 ? "" : "s", (unsigned long long)total, total == 1 ? "" : "s",
		     rk_size_words(total * p->chunk, b, sizeof b));
	}
	return e;
}

/* Step 3: finds members with old data and makes redundancy consistent over
 * the stripes they touch.  Rows that the --from fill overwrites with whole
 * stripes are left to it. */
rk_err create_make_consistent(rk_creator *c, rk_vol **v)
{
	const struct rk_geom *g = &c->g;
	int parity = g->nparity > 0;
	int mirror = !parity && g->copies > 1;
	if (!parity && !mirror)
		return RK_OK;        /* linear, raid0: no redundancy to keep */
	if (parity && c->plan.nmissing >= g->nparity)
		return RK_OK;        /* no redundancy left among the present members: any content is consistent */
	struct runs rs = {0};
	int any = 0;
	rk_err e = scan_members(c, mirror, &rs, &any);
	if (!e && any && !(e = resync_plan(c, mirror, &rs)))
		e = resync_runs(c, v, &rs);
	free(rs.v);
	return e;
}

/* Step 4: streams --from into the volume, whole stripes at a time. */
rk_err create_fill_from(rk_creator *c, rk_vol *v, const char *from)
{
	struct rk_create_plan *p = &c->plan;
	uint64_t batch = fill_batch(c);
	uint8_t *buf = malloc((size_t)batch);
	if (!buf)
		return rk_fail(RK_E_NOMEM, "--from %s: no memory for a %llu-byte buffer", from,
		               (unsigned long long)batch);
	rk_err e = RK_OK;
	uint64_t off = 0;
	while (off < p->from_size) {
		uint64_t want = p->from_size - off < batch ? p->from_size - off : batch;
		uint64_t got = 0;
		while (got < want) {
			ssize_t r = pread(c->from_fd, buf + got, (size_t)(want - got), (off_t)(off + got));
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0) {
				e = rk_fail(RK_E_IO, "--from %s: read error at offset %llu: %s", from,
				            (unsigned long long)(off + got), r < 0 ? strerror(errno) : "file shrank");
				break;
			}
			got += (uint64_t)r;
		}
		if (e)
			break;
		e = rk_vol_write(v, buf, (size_t)want, off);
		if (e)
			break;
		off += want;
		if (c->progress)
			c->progress(c->progress_ctx, RK_CREATE_PH_FILL, off, p->from_size);
	}
	free(buf);
	if (!e)
		e = rk_vol_flush(v);
	return e;
}

