/* create.c: creating an array (mkraid's library half).  See rk_create.h for
 * the contract and the order of writes. */
#include "rk_create.h"

#include <blkid/blkid.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <uuid/uuid.h>

#include "rk_dev.h"
#include "rk_geom.h"
#include "rk_le.h"
#include "rk_print.h"
#include "rk_probe.h"
#include "rk_sb.h"
#include "rk_vol.h"

/* Largest single read while scanning or filling. */
#define SCAN_BUF (4u * 1024u * 1024u)
#define FILL_MAX (64u * 1024u * 1024u)

struct row_run {             /* chunk rows [first, first+count) of the data area */
	uint64_t first, count;
};

struct rk_creator {
	struct rk_create_plan plan;
	struct rk_geom g;
	struct rk_sb *tmpl;      /* the array's superblock; members differ in member fields */
	rk_dev **devs;           /* nroles; NULL for missing or not yet created */
	char **wipe;             /* per role: path to wipe (force over a signature), or NULL */
	int from_fd;
	char *from;              /* --from path, for messages */
	void (*progress)(void *, enum rk_create_phase, uint64_t, uint64_t);
	void *pctx;
	rk_err (*wrap_dev)(void *, uint32_t, rk_dev **);
	void *wctx;
	int committed;
};

/* ---- small helpers ---- */

static void note(struct rk_create_plan *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(struct rk_create_plan *p, const char *fmt, ...)
{
	char line[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	size_t old = p->notes ? strlen(p->notes) : 0;
	char *n = realloc(p->notes, old + strlen(line) + 2);
	if (!n)
		return;              /* notes are informational only */
	memcpy(n + old, line, strlen(line));
	n[old + strlen(line)] = '\n';
	n[old + strlen(line) + 1] = '\0';
	p->notes = n;
}

static int is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

/* Whole buffer zero: word loop (the compiler vectorises it). */
static int buf_is_zero(const uint8_t *p, size_t n)
{
	while (n && ((uintptr_t)p & 7)) {
		if (*p)
			return 0;
		p++, n--;
	}
	const uint64_t *w = (const uint64_t *)(const void *)p;
	size_t nw = n / 8;
	for (size_t i = 0; i < nw; i += 8) {
		uint64_t acc = 0;
		size_t e = i + 8 < nw ? i + 8 : nw;
		for (size_t k = i; k < e; k++)
			acc |= w[k];
		if (acc)
			return 0;
	}
	p += nw * 8;
	for (size_t i = 0; i < n % 8; i++)
		if (p[i])
			return 0;
	return 1;
}

/* Size of an open fd: st_size for files, BLKGETSIZE64 for block devices;
 * -1 (errno set) for anything else. */
static int fd_size(int fd, uint64_t *size, int *is_reg)
{
	struct stat st;
	if (fstat(fd, &st) != 0)
		return -1;
	if (S_ISREG(st.st_mode)) {
		*size = (uint64_t)st.st_size;
		*is_reg = 1;
		return 0;
	}
	*is_reg = 0;
	if (S_ISBLK(st.st_mode)) {
		uint64_t s;
		if (ioctl(fd, BLKGETSIZE64, &s) != 0)
			return -1;
		*size = s;
		return 0;
	}
	errno = ENOTSUP;
	return -1;
}

/* ---- finding old data ---- */

/* Visits the non-zero parts of [off, off+len) of PATH.  For every piece of
 * ROW bytes (counted from BASE) that holds a non-zero byte, calls MARK with
 * the row number (rows in increasing order; a row is reported once).  With
 * STOP_FIRST the scan ends at the first non-zero row.  Holes of regular
 * files are skipped with SEEK_DATA/SEEK_HOLE, so sparse files cost what
 * their allocated extents cost. */
typedef int (*mark_fn)(void *ctx, uint64_t row, uint64_t at);
static rk_err scan_nonzero(const char *path, uint64_t base, uint64_t off, uint64_t len, uint64_t row,
                           mark_fn mark, void *mctx, int stop_first, uint64_t *scanned,
                           void (*tick)(void *ctx, uint64_t done), void *tctx)
{
	uint64_t end;
	if (rk_add_ovf(off, len, &end) || off < base || row == 0)
		return rk_fail(RK_E_RANGE, "%s: scan range overflows", path);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return rk_fail(RK_E_OPEN, "%s: cannot open to scan: %s", path, strerror(errno));
	uint64_t dsize;
	int is_reg;
	if (fd_size(fd, &dsize, &is_reg) != 0) {
		int e = errno;
		close(fd);
		return rk_fail(RK_E_OPEN, "%s: cannot size: %s", path, strerror(e));
	}
	if (end > dsize)
		end = dsize;
	size_t bsz = SCAN_BUF;
	uint8_t *buf = malloc(bsz);
	if (!buf) {
		close(fd);
		return rk_fail(RK_E_NOMEM, "%s: no memory for the scan buffer", path);
	}
	rk_err err = RK_OK;
	uint64_t pos = off, last_marked = UINT64_MAX, done0 = 0;
	int stop = 0;
	while (pos < end && !stop) {
		uint64_t ext_end = end;
		if (is_reg) {
			off_t d = lseek(fd, (off_t)pos, SEEK_DATA);
			if (d < 0) {
				if (errno == ENXIO)
					break;          /* only holes from here on */
				if (errno != EINVAL && errno != ENOTSUP) {
					err = rk_fail(RK_E_IO, "%s: SEEK_DATA: %s", path, strerror(errno));
					break;
				}
				d = (off_t)pos;     /* no SEEK_DATA: read everything */
			} else {
				off_t h = lseek(fd, d, SEEK_HOLE);
				if (h > d && (uint64_t)h < ext_end)
					ext_end = (uint64_t)h;
			}
			if ((uint64_t)d >= end)
				break;
			if ((uint64_t)d > pos)
				pos = (uint64_t)d;
		}
		while (pos < ext_end && !stop) {
			/* Do not cross a row boundary inside one row check. */
			uint64_t r = (pos - base) / row;
			uint64_t row_end = base + (r + 1) * row;
			if (row_end < base + r * row)    /* overflow: cap */
				row_end = UINT64_MAX;
			uint64_t n = ext_end - pos;
			if (n > bsz)
				n = bsz;
			if (r == last_marked) {      /* already known dirty: skip the rest of the row */
				pos = row_end < ext_end ? row_end : ext_end;
				continue;
			}
			ssize_t got = pread(fd, buf, (size_t)n, (off_t)pos);
			if (got < 0 && errno == EINTR)
				continue;
			if (got <= 0) {
				err = rk_fail(RK_E_IO, "%s: read error at offset %llu while scanning: %s", path,
				              (unsigned long long)pos, got < 0 ? strerror(errno) : "end of data");
				stop = 1;
				break;
			}
			if (scanned)
				*scanned += (uint64_t)got;
			/* Walk the rows inside what was read. */
			uint64_t p = pos, pend = pos + (uint64_t)got;
			while (p < pend) {
				uint64_t rr = (p - base) / row;
				uint64_t re = base + (rr + 1) * row;
				uint64_t segend = re < pend ? re : pend;
				if (rr != last_marked && !buf_is_zero(buf + (p - pos), (size_t)(segend - p))) {
					last_marked = rr;
					uint64_t at = p;
					const uint8_t *q = buf + (p - pos);
					while (!q[at - p])
						at++;
					if (mark(mctx, rr, at) || stop_first) {
						stop = 1;
						break;
					}
				}
				p = segend;
			}
			pos = pend;
			if (tick && pos - off - done0 >= 256u * 1024u * 1024u) {
				done0 = pos - off;
				tick(tctx, done0);
			}
		}
	}
	free(buf);
	close(fd);
	return err;
}

struct zero_ctx {
	int found;
	uint64_t at;
};

static int zero_mark(void *ctx, uint64_t row, uint64_t at)
{
	struct zero_ctx *z = ctx;
	(void)row;
	z->found = 1;
	z->at = at;
	return 1;
}

rk_err rk_create_range_is_zero(const char *path, uint64_t off, uint64_t len,
                               int *is_zero, uint64_t *nonzero_at, uint64_t *scanned)
{
	struct zero_ctx z = {0, 0};
	if (!path || !is_zero)
		return rk_fail(RK_E_INVAL, "rk_create_range_is_zero: no path");
	rk_err e = scan_nonzero(path, off, off, len, 1ull << 40, zero_mark, &z, 1, scanned, NULL, NULL);
	if (e)
		return e;
	*is_zero = !z.found;
	if (z.found && nonzero_at)
		*nonzero_at = z.at;
	return RK_OK;
}

/* Dirty rows collected over all members. */
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

/* ---- prepare ---- */

static void plan_clear(struct rk_create_plan *p)
{
	if (!p)
		return;
	if (p->members)
		for (uint32_t i = 0; i < p->nroles; i++)
			free(p->members[i].path);
	free(p->members);
	free(p->notes);
	memset(p, 0, sizeof *p);
}

void rk_create_plan_free(struct rk_create_plan *p)
{
	plan_clear(p);
}

void rk_create_free(rk_creator *c)
{
	if (!c)
		return;
	for (uint32_t i = 0; i < c->plan.nroles; i++) {
		if (c->devs)
			rk_dev_close(c->devs[i]);
		if (c->wipe)
			free(c->wipe[i]);
	}
	free(c->devs);
	free(c->wipe);
	free(c->tmpl);
	if (c->from_fd >= 0)
		close(c->from_fd);
	free(c->from);
	plan_clear(&c->plan);
	free(c);
}

const struct rk_create_plan *rk_create_get_plan(const rk_creator *c)
{
	return c ? &c->plan : NULL;
}

/* Checks the options that do not need the members. */
static rk_err check_opts(const struct rk_create_opts *o, uint64_t *chunk, uint32_t *layout)
{
	if (!o || !o->paths)
		return rk_fail(RK_E_INVAL, "no members given");
	if (!rk_level_name(o->level))
		return rk_fail(RK_E_INVAL, "level %d: not a level raidkit knows", (int)o->level);
	*chunk = o->chunk ? o->chunk : RK_CREATE_CHUNK_DEFAULT;
	if (!is_pow2(*chunk) || *chunk < RK_CREATE_CHUNK_MIN || *chunk > RK_CREATE_CHUNK_MAX)
		return rk_fail(RK_E_INVAL, "chunk %llu: must be a power of two from 4K to 16M",
		               (unsigned long long)*chunk);
	*layout = o->layout == RK_CREATE_LAYOUT_DEFAULT ? rk_layout_default(o->level) : o->layout;
	if (o->nmembers == 0)
		return rk_fail(RK_E_INVAL, "no members given");
	if (o->nmembers > RK_SB_MAX_ROLES)
		return rk_fail(RK_E_INVAL, "%u members: at most %u are possible", o->nmembers, RK_SB_MAX_ROLES);
	uint32_t minr = rk_sb_min_roles(o->level);
	if (o->nmembers < minr)
		return rk_fail(RK_E_INVAL, "level %s needs at least %u members, %u given",
		               rk_level_name(o->level), minr, o->nmembers);
	if (o->name && strlen(o->name) > RK_SB_NAME_LEN)
		return rk_fail(RK_E_INVAL, "name \"%s\": at most %u bytes", o->name, RK_SB_NAME_LEN);
	return RK_OK;
}

/* Usable data bytes on a member of DEV_SIZE: from the data offset to the
 * backup superblock copy, in whole 4 KiB blocks; 0 when there is none. */
static uint64_t usable_of(uint64_t dev_size)
{
	return rk_sb_max_data_size(dev_size, RK_DATA_OFFSET_DEFAULT, 0);
}

/* Opens member I (present path) and records what is needed. */
static rk_err open_member(rk_creator *c, const struct rk_create_opts *o, uint32_t i)
{
	struct rk_create_member *m = &c->plan.members[i];
	const char *path = o->paths[i];
	struct stat st;

	if (stat(path, &st) != 0) {
		if (errno == ENOENT && o->create_size) {
			m->created = 1;
			m->dev_size = o->create_size;
			return RK_OK;
		}
		if (errno == ENOENT)
			return rk_fail(RK_E_OPEN, "%s: no such file (use --create-size to create member files)", path);
		return rk_fail(RK_E_OPEN, "%s: cannot open: %s", path, strerror(errno));
	}
	if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode))
		return rk_fail(RK_E_INVAL, "%s: not a regular file or block device", path);
	rk_err e = rk_dev_open(&c->devs[i], path, RK_DEV_RDWR);
	if (e)
		return e;
	m->dev_size = rk_dev_size(c->devs[i]);
	m->blockdev = rk_dev_is_blockdev(c->devs[i]);

	struct rk_probe_result pr;
	memset(&pr, 0, sizeof pr);
	e = rk_probe_path(path, &pr);
	if (e)
		return e;
	if (pr.found) {
		const char *what = pr.what[0] ? pr.what : pr.type;
		if (!o->force)
			return rk_fail(RK_E_EXISTS, "%s: holds %s; use --force to overwrite", path, what);
		snprintf(m->found, sizeof m->found, "%s", what);
		c->wipe[i] = strdup(path);
		if (!c->wipe[i])
			return rk_fail(RK_E_NOMEM, "%s: no memory", path);
		note(&c->plan, "%s: held %s; overwritten (--force)", path, what);
	}
	return RK_OK;
}

rk_err rk_create_prepare(rk_creator **out, const struct rk_create_opts *o, int *from_too_big)
{
	uint64_t chunk = 0;
	uint32_t layout = 0;
	char b1[32], b2[32];

	if (from_too_big)
		*from_too_big = 0;
	if (!out)
		return rk_fail(RK_E_INVAL, "rk_create_prepare: no output");
	*out = NULL;
	rk_err e = check_opts(o, &chunk, &layout);
	if (e)
		return e;

	rk_creator *c = calloc(1, sizeof *c);
	if (!c)
		return rk_fail(RK_E_NOMEM, "no memory");
	c->from_fd = -1;
	c->progress = o->progress;
	c->pctx = o->progress_ctx;
	c->wrap_dev = o->wrap_dev;
	c->wctx = o->wrap_ctx;
	struct rk_create_plan *p = &c->plan;
	p->nroles = o->nmembers;
	p->members = calloc(o->nmembers, sizeof *p->members);
	c->devs = calloc(o->nmembers, sizeof *c->devs);
	c->wipe = calloc(o->nmembers, sizeof *c->wipe);
	if (!p->members || !c->devs || !c->wipe) {
		rk_create_free(c);
		return rk_fail(RK_E_NOMEM, "no memory");
	}
	p->level = o->level;
	p->layout = layout;
	/* Linear and RAID-1 have no stripe unit (the superblock records 0). */
	if (o->level == RK_LEVEL_LINEAR || o->level == 1) {
		if (o->chunk)
			note(p, "-c %llu ignored: level %s has no stripe unit", (unsigned long long)o->chunk,
			     rk_level_name(o->level));
		chunk = 0;
	}
	p->chunk = chunk;
	uint64_t unit = chunk ? chunk : RK_SB_ALIGN;    /* data_size granularity */
	snprintf(p->name, sizeof p->name, "%s", o->name ? o->name : "");
	p->data_offset = RK_DATA_OFFSET_DEFAULT;
	p->ctime = (uint64_t)time(NULL);
	uuid_generate(p->array_uuid);

	/* Open and probe every present member; note duplicates. */
	uint32_t present = 0;
	for (uint32_t i = 0; i < o->nmembers; i++) {
		struct rk_create_member *m = &p->members[i];
		m->role = i;
		if (!o->paths[i]) {
			p->nmissing++;
			continue;
		}
		present++;
		m->path = strdup(o->paths[i]);
		if (!m->path) {
			rk_create_free(c);
			return rk_fail(RK_E_NOMEM, "no memory");
		}
		for (uint32_t k = 0; k < i; k++) {
			if (o->paths[k] && !strcmp(o->paths[k], o->paths[i])) {
				rk_create_free(c);
				return rk_fail(RK_E_INVAL, "%s: given twice (roles %u and %u)", o->paths[i], k, i);
			}
		}
		/* The same file or device under another name: say so before the
		 * second exclusive open fails as "in use". */
		struct stat sti;
		if (stat(o->paths[i], &sti) == 0) {
			for (uint32_t k = 0; k < i; k++) {
				struct stat stk;
				if (!o->paths[k] || stat(o->paths[k], &stk) != 0)
					continue;
				int same = S_ISBLK(sti.st_mode) ? S_ISBLK(stk.st_mode) && sti.st_rdev == stk.st_rdev
				                                : sti.st_dev == stk.st_dev && sti.st_ino == stk.st_ino;
				if (same) {
					rk_create_free(c);
					return rk_fail(RK_E_INVAL, "%s: the same member as %s (role %u)",
					               o->paths[i], o->paths[k], k);
				}
			}
		}
		e = open_member(c, o, i);
		if (e) {
			rk_create_free(c);
			return e;
		}
	}
	if (present == 0) {
		rk_create_free(c);
		return rk_fail(RK_E_TOOFEW, "every member is missing");
	}

	/* Data area: the smallest member's usable space, limited by --size. */
	uint64_t umin = UINT64_MAX, umax = 0;
	for (uint32_t i = 0; i < o->nmembers; i++) {
		struct rk_create_member *m = &p->members[i];
		if (!m->path)
			continue;
		uint64_t u = usable_of(m->dev_size);
		uint64_t need = RK_DATA_OFFSET_DEFAULT + unit + RK_SB_AREA + RK_SB_ALIGN;
		if (u < unit) {
			rk_err r = rk_fail(RK_E_SHORT, "%s: too small (%s); a member needs at least %s", o->paths[i],
			                   rk_size_words(m->dev_size, b1, sizeof b1), rk_size_words(need, b2, sizeof b2));
			rk_create_free(c);
			return r;
		}
		if (u < umin) {
			umin = u;
			p->usable_min_role = i;
		}
		if (u > umax) {
			umax = u;
			p->usable_max_role = i;
		}
	}
	p->usable_min = umin;
	p->usable_max = umax;
	uint64_t dsize = umin;
	if (o->size) {
		if (o->size > umin) {
			rk_err r = rk_fail(RK_E_RANGE, "--size %llu: more than %s offers (%llu usable bytes)",
			                   (unsigned long long)o->size, p->members[p->usable_min_role].path,
			                   (unsigned long long)umin);
			rk_create_free(c);
			return r;
		}
		dsize = o->size;
	}
	dsize -= dsize % unit;
	if (dsize < unit) {
		rk_create_free(c);
		return rk_fail(RK_E_RANGE, "--size %llu: less than one chunk (%llu bytes)",
		               (unsigned long long)o->size, (unsigned long long)unit);
	}
	if (umax - umin >= unit)
		note(p, "members differ in size: %s has %s usable, %s has %s; using %s of each",
		     p->members[p->usable_min_role].path, rk_size_words(umin, b1, sizeof b1),
		     p->members[p->usable_max_role].path, rk_size_words(umax, b2, sizeof b2),
		     rk_size_words(dsize, (char[32]){0}, 32));
	if (o->size)
		note(p, "using %s of each member (--size), the start of the member first",
		     rk_size_words(dsize, b1, sizeof b1));

	e = rk_geom_init(&c->g, o->level, layout, chunk, o->nmembers, dsize);
	if (e) {
		rk_create_free(c);
		return e;
	}
	if (p->nmissing > rk_geom_redundancy(&c->g)) {
		rk_err r = rk_fail(RK_E_TOOFEW, "%u members missing: level %s survives at most %u",
		                   p->nmissing, rk_level_name(o->level), rk_geom_redundancy(&c->g));
		rk_create_free(c);
		return r;
	}
	/* The superblock every member gets (member fields set at commit). */
	unsigned char *missing = calloc(o->nmembers, 1);
	c->tmpl = malloc(sizeof *c->tmpl);
	if (!missing || !c->tmpl) {
		free(missing);
		rk_create_free(c);
		return rk_fail(RK_E_NOMEM, "no memory");
	}
	for (uint32_t i = 0; i < o->nmembers; i++)
		missing[i] = !o->paths[i];
	struct rk_sb_params sp = {
		.array_uuid = p->array_uuid, .name = p->name, .level = o->level, .layout = layout,
		.chunk = chunk, .nroles = o->nmembers, .missing = missing,
		.data_offset = RK_DATA_OFFSET_DEFAULT, .data_size = c->g.member_size,
	};
	e = rk_sb_init(c->tmpl, &sp);
	free(missing);
	if (e) {
		rk_create_free(c);
		return e;
	}
	c->tmpl->events = 1;
	c->tmpl->ctime = c->tmpl->utime = p->ctime;
	for (uint32_t i = 0; i < o->nmembers; i++)
		memcpy(p->members[i].uuid, c->tmpl->roles[i].member_uuid, 16);
	p->data_size = c->tmpl->data_size;
	p->volume_size = c->tmpl->volume_size;
	if (p->volume_size != c->g.volume_size) {
		rk_err r = rk_fail(RK_E_CORRUPT, "internal: the engine's volume size %llu differs from the superblock's %llu",
		                   (unsigned long long)c->g.volume_size, (unsigned long long)p->volume_size);
		rk_create_free(c);
		return r;
	}

	if (o->from) {
		int fd = open(o->from, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			int er = errno;
			rk_create_free(c);
			return rk_fail(RK_E_OPEN, "--from %s: cannot open: %s", o->from, strerror(er));
		}
		c->from_fd = fd;
		c->from = strdup(o->from);
		if (!c->from) {
			rk_create_free(c);
			return rk_fail(RK_E_NOMEM, "no memory");
		}
		int is_reg;
		uint64_t fs;
		if (fd_size(fd, &fs, &is_reg) != 0) {
			rk_create_free(c);
			return rk_fail(RK_E_INVAL, "--from %s: not a regular file or block device", o->from);
		}
		p->from_size = fs;
		if (fs > p->volume_size) {
			if (from_too_big)
				*from_too_big = 1;
			rk_err r = rk_fail(RK_E_RANGE, "--from %s: %llu bytes do not fit the volume of %llu bytes",
			                   o->from, (unsigned long long)fs, (unsigned long long)p->volume_size);
			rk_create_free(c);
			return r;
		}
	}
	*out = c;
	return RK_OK;
}

/* ---- commit ---- */

/* Removes foreign signatures libblkid finds on PATH (force only), so the
 * member is not also taken for what it was. */
static rk_err wipe_signatures(const char *path)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return rk_fail(RK_E_OPEN, "%s: cannot open to wipe old signatures: %s", path, strerror(errno));
	blkid_probe pr = blkid_new_probe();
	if (!pr) {
		close(fd);
		return rk_fail(RK_E_NOMEM, "%s: blkid probe", path);
	}
	rk_err e = RK_OK;
	if (blkid_probe_set_device(pr, fd, 0, 0) != 0) {
		e = rk_fail(RK_E_IO, "%s: blkid cannot use the member", path);
	} else {
		blkid_probe_enable_superblocks(pr, 1);
		blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_MAGIC | BLKID_SUBLKS_BADCSUM);
		blkid_probe_enable_partitions(pr, 1);
		blkid_probe_set_partitions_flags(pr, BLKID_PARTS_MAGIC | BLKID_PARTS_FORCE_GPT);
		for (int guard = 0; guard < 64 && blkid_do_probe(pr) == 0; guard++) {
			if (blkid_do_wipe(pr, 0) != 0) {
				e = rk_fail(RK_E_IO, "%s: cannot wipe an old signature: %s", path, strerror(errno));
				break;
			}
		}
	}
	blkid_free_probe(pr);
	if (fsync(fd) != 0 && !e)
		e = rk_fail(RK_E_IO, "%s: flush after wiping: %s", path, strerror(errno));
	close(fd);
	return e;
}

/* Invalidates an old raidkit superblock (both copies) before data is
 * written (force only): a crash in the middle then leaves a member with no
 * superblock, never an old array that would assemble over rewritten data. */
static rk_err wipe_old_superblocks(rk_dev *d)
{
	struct rk_sb_read rd;
	rk_err e = RK_OK;
	uint8_t *zero = calloc(1, RK_SB_ALIGN);
	if (!zero)
		return rk_fail(RK_E_NOMEM, "%s: no memory", rk_dev_path(d));
	(void)rk_sb_read(d, &rd);     /* NOSB is fine: look at each copy */
	for (int k = 0; k < 2 && !e; k++) {
		uint64_t off = rd.copy[k].offset;
		if (rd.copy[k].status == RK_COPY_ABSENT || off == 0 || off > rk_dev_size(d) ||
		    rk_dev_size(d) - off < RK_SB_ALIGN)
			continue;
		e = rk_dev_pwrite(d, zero, RK_SB_ALIGN, off);
	}
	rk_sb_read_free(&rd);
	free(zero);
	if (!e)
		e = rk_dev_flush(d);
	return e;
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
		r->c->progress(r->c->pctx, RK_CREATE_PH_RESYNC, (r->base + done) * sd, r->total * sd);
}

struct scan_tick_ctx {
	rk_creator *c;
	uint64_t base, total;
};

static void scan_tick(void *ctx, uint64_t done)
{
	struct scan_tick_ctx *s = ctx;
	if (s->c->progress)
		s->c->progress(s->c->pctx, RK_CREATE_PH_SCAN, s->base + done, s->total);
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
static rk_err vol_get(rk_creator *c, rk_vol **v)
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

/* Step 3: finds members with old data and makes redundancy consistent over
 * the stripes they touch.  Rows that the --from fill overwrites with whole
 * stripes are left to it (full-stripe writes compute parity afresh). */
static rk_err make_consistent(rk_creator *c, rk_vol **v)
{
	struct rk_create_plan *p = &c->plan;
	const struct rk_geom *g = &c->g;
	int parity = g->nparity > 0;
	int mirror = !parity && g->copies > 1;
	if (!parity && !mirror)
		return RK_OK;        /* linear, raid0: no redundancy to keep */
	if (parity && p->nmissing >= g->nparity)
		return RK_OK;        /* no redundancy left among the present members: any content is consistent */

	struct runs rs = {0};
	int any = 0;
	uint64_t present_bytes = 0;
	for (uint32_t i = 0; i < p->nroles; i++)
		if (p->members[i].path && !p->members[i].created)
			present_bytes += p->data_size;
	struct scan_tick_ctx st = {c, 0, present_bytes};
	rk_err e = RK_OK;
	for (uint32_t i = 0; i < p->nroles && !e; i++) {
		struct rk_create_member *m = &p->members[i];
		if (!m->path || m->created)
			continue;        /* new sparse files are all zero */
		if (mirror) {
			struct zero_ctx z = {0, 0};
			e = scan_nonzero(m->path, p->data_offset, p->data_offset, p->data_size, 1u << 20,
			                 zero_mark, &z, 1, &p->bytes_scanned, scan_tick, &st);
			m->dirty = z.found;
		} else {
			/* Runs of this member start a fresh ascending sequence. */
			struct runs mine = {0};
			e = scan_nonzero(m->path, p->data_offset, p->data_offset, p->data_size, p->chunk,
			                 runs_mark, &mine, 0, &p->bytes_scanned, scan_tick, &st);
			if (mine.oom && !e)
				e = rk_fail(RK_E_NOMEM, "%s: no memory for the list of dirty stripes", m->path);
			if (!e && mine.n) {
				m->dirty = 1;
				if (rs.n + mine.n > rs.cap) {
					size_t nc = rs.n + mine.n;
					struct row_run *nv = realloc(rs.v, nc * sizeof *nv);
					if (!nv)
						e = rk_fail(RK_E_NOMEM, "no memory for the list of dirty stripes");
					else {
						rs.v = nv;
						rs.cap = nc;
					}
				}
				if (!e) {
					memcpy(rs.v + rs.n, mine.v, mine.n * sizeof *mine.v);
					rs.n += mine.n;
				}
			}
			free(mine.v);
		}
		st.base += p->data_size;
		any |= m->dirty;
	}
	if (e) {
		free(rs.v);
		return e;
	}
	if (!any) {
		free(rs.v);
		return RK_OK;
	}

	uint64_t total = 0;
	if (mirror) {
		rs.n = 0;
		if (runs_mark(&rs, 0, 0) || rs.oom) {
			free(rs.v);
			return rk_fail(RK_E_NOMEM, "no memory");
		}
		rs.v[0].count = g->nstripes;
	} else {
		runs_merge(&rs);
		/* Whole stripes the fill will write, each in one full-stripe
		 * write, need no resync. */
		uint64_t full = 0;
		if (g->stripe_data && fill_batch(c) % g->stripe_data == 0)
			full = p->from_size / g->stripe_data;
		size_t w = 0;
		for (size_t i = 0; i < rs.n; i++) {
			struct row_run r = rs.v[i];
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
			rs.v[w++] = r;
		}
		rs.n = w;
	}
	for (size_t i = 0; i < rs.n; i++)
		total += rs.v[i].count;
	struct resync_ctx rc = {c, 0, total};
	if (total)
		e = vol_get(c, v);
	for (size_t i = 0; i < rs.n && !e; i++) {
		e = rk_vol_resync(*v, rs.v[i].first, rs.v[i].count, resync_tick, &rc);
		rc.base += rs.v[i].count;
	}
	p->stripes_resynced = total;
	if (!e && total) {
		char b[32];
		uint32_t nd = 0;
		for (uint32_t i = 0; i < p->nroles; i++)
			nd += p->members[i].dirty;
		note(p, "%u member%s held old data: redundancy made consistent over %llu stripe%s (%s of data area per member)",
		     nd, nd == 1 ? "" : "s", (unsigned long long)total, total == 1 ? "" : "s",
		     rk_size_words(total * p->chunk, b, sizeof b));
	}
	free(rs.v);
	return e;
}

/* Step 4: streams --from into the volume, whole stripes at a time. */
static rk_err fill_from(rk_creator *c, rk_vol *v, const char *from)
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
			c->progress(c->pctx, RK_CREATE_PH_FILL, off, p->from_size);
	}
	free(buf);
	if (!e)
		e = rk_vol_flush(v);
	return e;
}

rk_err rk_create_commit(rk_creator *c)
{
	if (!c || c->committed)
		return rk_fail(RK_E_INVAL, "rk_create_commit: nothing prepared or committed twice");
	c->committed = 1;
	struct rk_create_plan *p = &c->plan;
	rk_err e = RK_OK;
	uint32_t i;

	/* 1. new member files (sparse). */
	for (i = 0; i < p->nroles && !e; i++) {
		struct rk_create_member *m = &p->members[i];
		if (m->path && m->created && !c->devs[i])
			e = rk_dev_create(&c->devs[i], m->path, m->dev_size);
	}
	for (i = 0; i < p->nroles && !e && c->wrap_dev; i++)
		if (c->devs[i])
			e = c->wrap_dev(c->wctx, i, &c->devs[i]);
	/* 2. foreign signatures (force). */
	for (i = 0; i < p->nroles && !e; i++) {
		if (!c->wipe[i])
			continue;
		e = wipe_signatures(c->wipe[i]);
		if (!e && c->devs[i])
			e = wipe_old_superblocks(c->devs[i]);
	}

	/* 3 and 4: through the engine, only when there is something to do. */
	if (!e) {
		rk_vol *v = NULL;
		e = make_consistent(c, &v);
		if (!e && c->from_fd >= 0 && p->from_size > 0) {
			e = vol_get(c, &v);
			if (!e)
				e = fill_from(c, v, c->from);
		}
		if (!e && v)
			e = rk_vol_flush(v);
		rk_vol_close(v);
	}
	if (e) {
		/* Nothing of ours is on the members yet: take back the files we made. */
		rk_err keep = e;
		char msg[512];
		snprintf(msg, sizeof msg, "%s", rk_errmsg());
		for (i = 0; i < p->nroles; i++) {
			if (p->members[i].created && c->devs[i]) {
				rk_dev_close(c->devs[i]);
				c->devs[i] = NULL;
				unlink(p->members[i].path);
			}
		}
		return rk_fail(keep, "%s", msg);
	}

	/* 5. superblocks last (see rk_create.h for why), then flush. */
	struct rk_sb *sb = malloc(sizeof *sb);
	if (!sb)
		return rk_fail(RK_E_NOMEM, "no memory for a superblock");
	for (i = 0; i < p->nroles && !e; i++) {
		if (!c->devs[i])
			continue;
		memcpy(sb, c->tmpl, sizeof *sb);
		e = rk_sb_set_member(sb, i, p->members[i].dev_size);
		if (!e)
			e = rk_sb_write(c->devs[i], sb);
	}
	for (i = 0; i < p->nroles && !e; i++)
		if (c->devs[i])
			e = rk_dev_flush(c->devs[i]);
	free(sb);
	return e;
}

rk_err rk_create(const struct rk_create_opts *o, struct rk_create_plan *plan)
{
	rk_creator *c = NULL;
	if (plan)
		memset(plan, 0, sizeof *plan);
	rk_err e = rk_create_prepare(&c, o, NULL);
	if (e)
		return e;
	e = rk_create_commit(c);
	if (plan) {
		/* Hand the plan over instead of copying it. */
		*plan = c->plan;
		memset(&c->plan.members, 0, sizeof c->plan.members);
		c->plan.notes = NULL;
		uint32_t n = c->plan.nroles;
		c->plan.nroles = 0;
		/* devs and wipe still need closing with their count. */
		for (uint32_t i = 0; i < n; i++) {
			rk_dev_close(c->devs[i]);
			c->devs[i] = NULL;
			free(c->wipe[i]);
			c->wipe[i] = NULL;
		}
	}
	/* rk_create_free must not clobber the caller's error detail. */
	char msg[512];
	snprintf(msg, sizeof msg, "%s", rk_errmsg());
	rk_create_free(c);
	if (e)
		return rk_fail(e, "%s", msg);
	return RK_OK;
}
