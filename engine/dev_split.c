/* dev_split.c: split raw images (spec/images.md): a disk image cut into
 * segment files NAME.001 NAME.002 ... (or from NAME.000; any digit count
 * of three or more, all segments the same count), NAME.aa NAME.ab ... or
 * NAME.aaa ... (split(1)'s suffixes).  Given the first segment, the rest
 * are found in order; the device is their concatenation, read-only.
 * Segments may differ in size (the sizes are summed); a segment missing
 * before one that exists is an error naming it. */
#include "rk_dev.h"
#include "dev_image.h"
#include "rk_le.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SPLIT_MAX_SEGMENTS 100000u  /* far above any real set; bounds the work */
#define SPLIT_OPEN_FDS     64u      /* sets this long keep their files open (several sets
                                       of a member set must stay under the usual 1024) */
#define SPLIT_PATH_MAX     4096

/* A name split into NAME., the suffix's kind and width, and its value. */
struct split_name {
	size_t   stem;     /* length of "NAME." */
	int      digits;   /* 1: NNN, 0: letters */
	unsigned width;    /* suffix length */
	uint64_t value;    /* the suffix as a number (base 10 or 26) */
};

/* Parses PATH's suffix; 0 when it follows no split rule. */
static int parse_name(const char *path, struct split_name *sn)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	const char *dot = strrchr(base, '.');
	if (!dot || dot == base || strlen(path) >= SPLIT_PATH_MAX - 16)
		return 0;
	const char *suf = dot + 1;
	size_t w = strlen(suf);
	int dig = w >= 3 && w <= 9 && strspn(suf, "0123456789") == w;
	int let = w >= 2 && w <= 8 && strspn(suf, "abcdefghijklmnopqrstuvwxyz") == w;
	if (!dig && !let)
		return 0;
	sn->stem = (size_t)(suf - path);
	sn->digits = dig;
	sn->width = (unsigned)w;
	sn->value = 0;
	for (size_t i = 0; i < w; i++)
		sn->value = sn->value * (dig ? 10 : 26) + (uint64_t)(dig ? suf[i] - '0' : suf[i] - 'a');
	return 1;
}

/* The name of suffix VALUE in PATH's series into OUT; 0 when VALUE does
 * not fit the width. */
static int make_name(const char *path, const struct split_name *sn, uint64_t value, char *out, size_t cap)
{
	char suf[16];
	unsigned base = sn->digits ? 10 : 26;
	for (unsigned i = sn->width; i-- > 0;) {
		unsigned dgt = (unsigned)(value % base);
		suf[i] = (char)(sn->digits ? '0' + dgt : 'a' + dgt);
		value /= base;
	}
	suf[sn->width] = 0;
	if (value)
		return 0;
	return snprintf(out, cap, "%.*s%s", (int)sn->stem, path, suf) < (int)cap;
}

static int exists(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0;
}

/* The suffix value a set of PATH's series starts at: letters at "aa..",
 * digits at 0 when NAME.000 exists, else 1. */
static uint64_t series_start(const char *path, const struct split_name *sn)
{
	char p[SPLIT_PATH_MAX];
	if (!sn->digits)
		return 0;
	return make_name(path, sn, 0, p, sizeof p) && exists(p) ? 0 : 1;
}

int dev_split_name(const char *path, char *first, size_t cap, uint32_t *number)
{
	struct split_name sn;
	char f[SPLIT_PATH_MAX], next[SPLIT_PATH_MAX];
	if (!path || !parse_name(path, &sn) || !exists(path))
		return 0;
	uint64_t start = series_start(path, &sn);
	if (sn.value < start || sn.value - start >= SPLIT_MAX_SEGMENTS)
		return 0;
	if (!make_name(path, &sn, start, f, sizeof f) || !exists(f))
		return 0;
	/* a set has a second segment: a lone NAME.001 is a plain file */
	if (!make_name(path, &sn, start + 1, next, sizeof next) || !exists(next))
		return 0;
	if (first && cap)
		snprintf(first, cap, "%s", f);
	if (number)
		*number = (uint32_t)(sn.value - start + 1);
	return 1;
}

int dev_split_segment_name(const char *first, uint32_t number, char *out, size_t cap)
{
	struct split_name sn;
	if (!first || !number || !parse_name(first, &sn))
		return 0;
	return make_name(first, &sn, sn.value + number - 1, out, cap);
}

struct segment {
	char    *path;
	uint64_t start, size;   /* bytes of the image it holds */
	dev_t    dev;
	ino_t    ino;
	int      fd;            /* -1: opened for each read (long sets) */
};

struct split {
	uint32_t n;
	struct segment *seg;
};

static void split_free(struct split *s)
{
	if (!s)
		return;
	for (uint32_t i = 0; i < s->n; i++) {
		if (s->seg[i].fd >= 0)
			close(s->seg[i].fd);
		free(s->seg[i].path);
	}
	free(s->seg);
	free(s);
}

/* The segment holding byte OFF (inside the image): binary search. */
static uint32_t seg_at(const struct split *s, uint64_t off)
{
	uint32_t lo = 0, hi = s->n - 1;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo + 1) / 2;
		if (s->seg[mid].start <= off)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/* A descriptor for segment G: its open one, or opened now and checked to
 * be the same file (*OWN set: the caller closes it). */
static rk_err seg_fd(rk_dev *d, struct segment *g, int *fd, int *own)
{
	struct stat st;
	*own = 0;
	if ((*fd = g->fd) >= 0)
		return RK_OK;
	*fd = open(g->path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (*fd < 0)
		return rk_fail(RK_E_IO, "%s: cannot open its segment %s: %s", rk_dev_path(d), g->path, strerror(errno));
	*own = 1;
	if (fstat(*fd, &st) != 0 || st.st_dev != g->dev || st.st_ino != g->ino || (uint64_t)st.st_size < g->size) {
		close(*fd);
		*own = 0;
		return rk_fail(RK_E_IO, "%s: its segment %s changed while open", rk_dev_path(d), g->path);
	}
	return RK_OK;
}

/* LEN bytes of segment G from its byte OFF (inside it). */
static rk_err seg_read(rk_dev *d, struct segment *g, uint8_t *p, size_t len, uint64_t off)
{
	int fd, own;
	rk_err e = seg_fd(d, g, &fd, &own);
	while (!e && len > 0) {
		size_t n = len > (1u << 30) ? (1u << 30) : len;
		ssize_t r = pread(fd, p, n, (off_t)off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			e = rk_fail(RK_E_IO, "%s: read error in segment %s at offset %llu: %s", rk_dev_path(d), g->path,
			            (unsigned long long)off, strerror(errno));
		else if (r == 0)
			e = rk_fail(RK_E_RANGE, "%s: segment %s ends early at offset %llu (it shrank?)", rk_dev_path(d),
			            g->path, (unsigned long long)off);
		else {
			p += r;
			len -= (size_t)r;
			off += (uint64_t)r;
		}
	}
	if (own)
		close(fd);
	return e;
}

/* dev.c keeps OFF + LEN inside the image: each piece lies in one segment. */
static rk_err split_pread(rk_dev *d, void *buf, size_t len, uint64_t off)
{
	struct split *s = rk_dev_priv(d);
	uint8_t *p = buf;
	uint32_t i = seg_at(s, off);
	while (len > 0) {
		while (i < s->n && off - s->seg[i].start >= s->seg[i].size)
			i++;   /* empty segments hold nothing */
		if (i >= s->n)
			return rk_fail(RK_E_RANGE, "%s: read past the last segment", rk_dev_path(d));
		struct segment *g = &s->seg[i];
		uint64_t in = off - g->start, room = g->size - in;
		size_t n = room < len ? (size_t)room : len;
		rk_err e = seg_read(d, g, p, n, in);
		if (e)
			return e;
		p += n;
		len -= n;
		off += n;
	}
	return RK_OK;
}

static rk_err split_pwrite(rk_dev *d, const void *buf, size_t len, uint64_t off)
{
	(void)buf;
	(void)len;
	(void)off;
	return rk_fail(RK_E_READONLY, "%s is a split raw image: raidkit reads it but never writes to it", rk_dev_path(d));
}

static void split_close(rk_dev *d)
{
	split_free(rk_dev_priv(d));
}

const struct rk_dev_ops dev_split_ops = {
	.name = "split", .pread = split_pread, .pwrite = split_pwrite, .close = split_close,
};

/* Appends segment PATH to S (opened to learn its size and identity; kept
 * open when KEEP).  Errors name FIRST, the image. */
static rk_err add_segment(struct split *s, const char *first, const char *path, int keep)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return rk_fail(RK_E_OPEN, "%s: cannot open its segment %s: %s", first, path, strerror(errno));
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 0) {
		close(fd);
		return rk_fail(RK_E_OPEN, "%s: its segment %s is not a regular file", first, path);
	}
	struct segment *g = &s->seg[s->n];
	uint64_t start = s->n ? s->seg[s->n - 1].start + s->seg[s->n - 1].size : 0, end;
	if (rk_add_ovf(start, (uint64_t)st.st_size, &end) || end > (uint64_t)INT64_MAX) {
		close(fd);
		return rk_fail(RK_E_RANGE, "%s: the segments add up to more than 2^63 bytes at %s", first, path);
	}
	if (!(g->path = strdup(path))) {
		close(fd);
		return rk_fail(RK_E_NOMEM, "%s: out of memory", first);
	}
	g->start = start;
	g->size = (uint64_t)st.st_size;
	g->dev = st.st_dev;
	g->ino = st.st_ino;
	g->fd = keep ? fd : -1;
	if (!keep)
		close(fd);
	s->n++;
	return RK_OK;
}

/* How many segments of FIRST's series exist in a row from START. */
static uint32_t count_run(const char *first, const struct split_name *sn, uint64_t start)
{
	char p[SPLIT_PATH_MAX];
	uint32_t n = 0;
	while (n < SPLIT_MAX_SEGMENTS && make_name(first, sn, start + n, p, sizeof p) && exists(p))
		n++;
	return n;
}

/* A segment of the series past the run [START, START+N) in the folder:
 * the set has a gap.  RK_E_CORRUPT naming the missing one, else RK_OK. */
static rk_err check_gap(const char *first, const struct split_name *sn, uint64_t start, uint32_t n)
{
	char dir[SPLIT_PATH_MAX], missing[SPLIT_PATH_MAX];
	const char *slash = strrchr(first, '/');
	const char *stem = slash ? slash + 1 : first;
	size_t stemlen = sn->stem - (size_t)(stem - first);
	snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - first) : 1, slash ? first : ".");
	if (slash == first)
		snprintf(dir, sizeof dir, "/");
	DIR *dp = opendir(dir);
	if (!dp)
		return RK_OK;   /* cannot list: the run found stands */
	uint64_t beyond = UINT64_MAX;
	struct dirent *de;
	while ((de = readdir(dp))) {
		struct split_name o;
		if (strncmp(de->d_name, stem, stemlen) != 0 || strlen(de->d_name) != stemlen + sn->width)
			continue;
		if (!parse_name(de->d_name, &o) || o.digits != sn->digits || o.width != sn->width)
			continue;
		if (o.value >= start + n && o.value < beyond)
			beyond = o.value;
	}
	closedir(dp);
	if (beyond == UINT64_MAX)
		return RK_OK;
	make_name(first, sn, start + n, missing, sizeof missing);
	return rk_fail(RK_E_CORRUPT, "%s: segment %s of the split raw image is missing (%u found in a row, "
	               "a later one exists)", first, missing, n);
}

rk_err dev_split_open(rk_dev **out, const char *path)
{
	struct split_name sn;
	*out = NULL;
	if (!parse_name(path, &sn))
		return rk_fail(RK_E_INVAL, "%s: not a split raw image name", path);
	uint64_t start = sn.value;
	uint32_t n = count_run(path, &sn, start);
	if (n >= SPLIT_MAX_SEGMENTS)
		return rk_fail(RK_E_NOTSUP, "%s: split raw image of more than %u segments", path, SPLIT_MAX_SEGMENTS);
	rk_err e = check_gap(path, &sn, start, n);
	if (e)
		return e;
	struct split *s = calloc(1, sizeof *s);
	if (!s || !(s->seg = calloc(n ? n : 1, sizeof *s->seg))) {
		free(s);
		return rk_fail(RK_E_NOMEM, "%s: out of memory", path);
	}
	char p[SPLIT_PATH_MAX];
	for (uint32_t i = 0; i < n && !e; i++)
		if (!make_name(path, &sn, start + i, p, sizeof p))
			e = rk_fail(RK_E_INVAL, "%s: segment name too long", path);
		else
			e = add_segment(s, path, p, n <= SPLIT_OPEN_FDS);
	if (!e && s->n == 0)
		e = rk_fail(RK_E_OPEN, "%s: no segment found", path);
	if (e) {
		split_free(s);
		return e;
	}
	uint64_t size = s->seg[s->n - 1].start + s->seg[s->n - 1].size;
	dev_t dn = s->seg[0].dev;
	ino_t ino = s->seg[0].ino;
	if ((e = rk_dev_new(out, &dev_split_ops, s, path, size, 512, 0)))
		return e;
	rk_dev_set_identity(*out, dn, ino, 0);
	return RK_OK;
}

uint32_t dev_split_segments(const rk_dev *d)
{
	const struct split *s = rk_dev_priv(d);
	return s ? s->n : 0;
}

const char *dev_split_segment_path(const rk_dev *d, uint32_t i)
{
	const struct split *s = rk_dev_priv(d);
	return s && i < s->n ? s->seg[i].path : NULL;
}
