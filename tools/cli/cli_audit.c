/* cli_audit.c: --audit FILE, one JSON line appended per run (spec/audit.md):
 * who ran what, when, on which members (identity, size and mtime before
 * and after, digests), what the tool decided and wrote, the messages it
 * said and its exit status.  Written with one write(2) on an O_APPEND
 * descriptor and fsync'd, so lines of concurrent runs never interleave.
 * Fed by the tools with what they already know; the library gives facts. */
#include "cli.h"
#include "rk_util.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define AUDIT_MAX_MSGS 32
#define AUDIT_MAX_WRITTEN 8

struct audit_member {
	const char *path;
	char *file;                   /* the file stat'ed for PATH:pN (a partition), else NULL */
	int have[2];                  /* stat worked before / after */
	struct stat st[2];
};

struct audit_written {
	const char *kind, *path;
	uint64_t offset, bytes;
	int have_hash;
	struct rk_hash_result hash;
};

static struct {
	int argc;
	char **argv;                  /* copied before getopt_long permutes */
	const char *file;
	int fd;                       /* open while a line is due */
	struct timespec start;
	struct audit_member *m;
	int n;
	char *decided;                /* JSON text, or NULL */
	char *msgs[AUDIT_MAX_MSGS];
	int nmsgs;
	struct audit_written w[AUDIT_MAX_WRITTEN];
	int nw;
} A = { .fd = -1 };

/* stat(2) of member M: its path, or for a partition named PATH:pN
 * (spec/partitions.md) that is no file itself, the disk PATH holding it
 * (remembered in m->file).  1 when it worked. */
static int stat_member(struct audit_member *m, struct stat *st)
{
	if (!stat(m->path, st))
		return 1;
	const char *c = strrchr(m->path, ':');
	if (!c || c[1] != 'p' || !c[2] || strspn(c + 2, "0123456789") != strlen(c + 2))
		return 0;
	if (!m->file && !(m->file = strndup(m->path, (size_t)(c - m->path))))
		return 0;
	return stat(m->file, st) == 0;
}

void cli_audit_keep_argv(int argc, char *const *argv)
{
	if (A.argv || !(A.argv = calloc((size_t)argc + 1, sizeof *A.argv)))
		return;
	for (int i = 0; i < argc; i++)
		A.argv[i] = strdup(argv[i]);
	A.argc = argc;
}

void cli_audit_note(const char *msg)
{
	if (A.nmsgs < AUDIT_MAX_MSGS && (A.msgs[A.nmsgs] = strdup(msg)) != NULL)
		A.nmsgs++;
}

int cli_audit_begin(const struct cli_common *c, char *const *paths, int n)
{
	clock_gettime(CLOCK_REALTIME, &A.start);
	if (!c->audit)
		return CLI_GO_ON;
	for (int i = 0; i < n; i++)
		if (rk_path_same_object(c->audit, paths[i]))
			return cli_usage_error("--audit: %s is one of the members (%s)", c->audit, paths[i]);
	if (!(A.m = calloc((size_t)(n > 0 ? n : 1), sizeof *A.m)))
		return cli_usage_error("--audit: out of memory");
	for (int i = 0; i < n; i++) {
		A.m[i].path = paths[i];
		A.m[i].have[0] = stat_member(&A.m[i], &A.m[i].st[0]);
	}
	A.n = n;
	A.fd = open(c->audit, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, 0644);
	if (A.fd < 0)
		return cli_usage_error("--audit: %s: cannot open: %s", c->audit, strerror(errno));
	A.file = c->audit;
	return CLI_GO_ON;
}

void cli_audit_decided(void (*fn)(rk_json *j, const void *ctx), const void *ctx)
{
	if (A.fd < 0)
		return;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	rk_json *j = f ? rk_json_new(f) : NULL;
	if (j) {
		fn(j, ctx);
		free(j);   /* not rk_json_free: no end of line inside the line */
	}
	if (f && !fclose(f)) {
		free(A.decided);
		A.decided = buf;
	} else {
		free(buf);
	}
}

void cli_audit_written(const char *kind, const char *path, uint64_t offset, uint64_t bytes,
                       const struct rk_hash_result *h)
{
	if (A.fd < 0 || A.nw >= AUDIT_MAX_WRITTEN)
		return;
	struct audit_written *w = &A.w[A.nw++];
	*w = (struct audit_written){ .kind = kind, .path = path, .offset = offset, .bytes = bytes, .have_hash = h != NULL };
	if (h)
		w->hash = *h;
}

/* TS as ISO 8601 UTC with milliseconds ("2026-12-01T20:50:01.123Z"). */
static void put_time(rk_json *j, const char *key, const struct timespec *ts)
{
	struct tm tm;
	char buf[40], out[64];
	gmtime_r(&ts->tv_sec, &tm);
	strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out, sizeof out, "%s.%03ldZ", buf, ts->tv_nsec / 1000000);
	rk_json_kstr(j, key, out);
}

/* {"size", "mtime"} of ST, or null. */
static void put_stat(rk_json *j, const char *key, int have, const struct stat *st)
{
	if (!rk_json_key_or_null(j, key, have))
		return;
	rk_json_obj_begin(j);
	rk_json_ku64(j, "size", (uint64_t)st->st_size);
	put_time(j, "mtime", &st->st_mtim);
	rk_json_obj_end(j);
}

/* {"alg", "digest"} of H, or null. */
static void put_hash(rk_json *j, const struct rk_hash_result *h)
{
	if (!rk_json_key_or_null(j, "hash", h != NULL))
		return;
	rk_json_obj_begin(j);
	rk_json_kstr(j, "alg", h->alg);
	rk_json_kstr(j, "digest", h->hex);
	rk_json_obj_end(j);
}

/* One member: path, identity, before / after, unchanged, hash. */
static void put_member(rk_json *j, struct audit_member *m)
{
	m->have[1] = stat_member(m, &m->st[1]);
	const struct stat *a = &m->st[0], *b = &m->st[1];
	rk_json_obj_begin(j);
	rk_json_kstr(j, "path", m->path);
	if (m->file)
		rk_json_kstr(j, "file", m->file);
	if (rk_json_key_or_null(j, "identity", m->have[0])) {
		rk_json_obj_begin(j);
		CLI_JSON_U64S(j, { "dev", (uint64_t)a->st_dev }, { "ino", (uint64_t)a->st_ino });
		if (S_ISBLK(a->st_mode))
			rk_json_ku64(j, "rdev", (uint64_t)a->st_rdev);
		rk_json_obj_end(j);
	}
	put_stat(j, "before", m->have[0], a);
	put_stat(j, "after", m->have[1], b);
	rk_json_kbool(j, "unchanged", m->have[0] == m->have[1] && (!m->have[0] ||
	              (a->st_size == b->st_size && a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
	               a->st_mtim.tv_nsec == b->st_mtim.tv_nsec)));
	put_hash(j, cli_hash_of(m->path));
	rk_json_obj_end(j);
}

/* Who and where: user, uid, host. */
static void put_who(rk_json *j)
{
	char host[256] = "";
	struct passwd *pw = getpwuid(geteuid());
	rk_json_kstr(j, "user", pw ? pw->pw_name : NULL);
	rk_json_ku64(j, "uid", (uint64_t)geteuid());
	gethostname(host, sizeof host - 1);
	rk_json_kstr(j, "host", host);
}

/* The line's lists: argv, members, written, messages. */
static void put_lists(rk_json *j)
{
	rk_json_key(j, "argv");
	rk_json_arr_begin(j);
	for (int i = 0; i < A.argc; i++)
		rk_json_str(j, A.argv[i]);
	rk_json_arr_end(j);
	rk_json_key(j, "members");
	rk_json_arr_begin(j);
	for (int i = 0; i < A.n; i++)
		put_member(j, &A.m[i]);
	rk_json_arr_end(j);
	rk_json_key(j, "decided");
	if (A.decided)
		rk_json_raw(j, A.decided);
	else
		rk_json_null(j);
	rk_json_key(j, "written");
	rk_json_arr_begin(j);
	for (int i = 0; i < A.nw; i++) {
		rk_json_obj_begin(j);
		rk_json_kstr(j, "kind", A.w[i].kind);
		rk_json_kstr(j, "path", A.w[i].path);
		CLI_JSON_U64S(j, { "offset", A.w[i].offset }, { "bytes", A.w[i].bytes });
		put_hash(j, A.w[i].have_hash ? &A.w[i].hash : NULL);
		rk_json_obj_end(j);
	}
	rk_json_arr_end(j);
	rk_json_key(j, "messages");
	rk_json_arr_begin(j);
	for (int i = 0; i < A.nmsgs; i++)
		rk_json_str(j, A.msgs[i]);
	rk_json_arr_end(j);
}

/* The whole line into a new buffer (*LEN bytes, ending with '\n'); NULL
 * when out of memory. */
static char *audit_line(int rc, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	rk_json *j = f ? rk_json_new(f) : NULL;
	if (!j) {
		if (f)
			fclose(f);
		free(buf);
		return NULL;
	}
	struct timespec end;
	clock_gettime(CLOCK_REALTIME, &end);
	rk_json_obj_begin(j);
	rk_json_kstr(j, "tool", cli_prog());
	rk_json_kstr(j, "version", RK_VERSION);
	put_time(j, "start", &A.start);
	put_time(j, "end", &end);
	put_who(j);
	put_lists(j);
	rk_json_ku64(j, "exit", (uint64_t)rc);
	rk_json_kstr(j, "error", rc >= EX_FAIL && A.nmsgs ? A.msgs[A.nmsgs - 1] : NULL);
	rk_json_obj_end(j);
	rk_json_free(j);   /* the end of line */
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}

int cli_audit_end(int rc)
{
	if (A.fd < 0)
		return rc;
	size_t len = 0;
	char *line = audit_line(rc, &len);
	ssize_t w = line ? write(A.fd, line, len) : -1;
	int err = errno;
	if (!line || w != (ssize_t)len || fsync(A.fd)) {
		cli_err("--audit: %s: the record could not be written: %s", A.file,
		        !line ? "out of memory" : w >= 0 && w != (ssize_t)len ? "short write" : strerror(err ? err : errno));
		rc = EX_FAIL;
	}
	free(line);
	close(A.fd);
	A.fd = -1;
	return rc;
}
