/* raid-assemble: find the members of an array in any order, report what was
 * used and what was left out (and why), and give access to the volume:
 * --export (read-only) and --write.  Policy and user interface only:
 * discovery is rk_discover(), the report rk_print (shared with raid-examine),
 * the volume and its superblock protocol rk_array. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uuid/uuid.h>

#include "cli.h"
#include "test_hooks.h"
#include "rk_array.h"
#include "rk_discover.h"
#include "rk_geom.h"
#include "rk_json.h"
#include "rk_print.h"
#include "rk_sb.h"
#include "cli_mount.h"

#define BATCH (8u << 20)   /* export/write transfer size: full stripes on any sane geometry */

static void usage(FILE *f)
{
	fprintf(f,
	"Usage: raid-assemble [OPTIONS] MEMBER...\n"
	"Finds the members of an array among MEMBERs (any order, any names, mixed\n"
	"with other arrays and unrelated files), reports which path serves each\n"
	"role and why every other path was left out.  Without an action it reads\n"
	"nothing but metadata; members are opened read-only unless --write or\n"
	"--mount --rw is given.\n"
	"\n"
	"  --json               one JSON document on stdout\n"
	"  --uuid UUID          pick the array with this UUID (members of others are foreign)\n"
	"  --force              run a too-degraded array with its freshest stale members\n"
	"  --export OUT         write the volume to OUT ('-' for stdout)\n"
	"    --at OFFSET        from this volume byte (default 0)\n"
	"    --length BYTES     this many bytes (default: to the end)\n"
	"  --write FILE --at OFFSET\n"
	"                       write FILE's bytes ('-' for stdin) into the volume at\n"
	"                       OFFSET, keeping redundancy consistent (also degraded)\n"
	"  --mount DIR          serve the volume as the file DIR/volume (FUSE) until\n"
	"                       unmounted (fusermount3 -u DIR) or interrupted\n"
	"    --rw               ... read-write (default read-only)\n"
	"  --progress           progress on stderr even when not a terminal\n"
	"  --help, --version\n"
	"\n"
	"Sizes and offsets take K, M, G, T suffixes (powers of 1024).\n"
	"Exit: 0 clean; 1 degraded or paths left out; 2 too few members, conflict\n"
	"or I/O error; 64 bad usage.\n");
}

struct opts {
	int json, force, progress;
	int have_uuid;
	uuid_t uuid;
	const char *export_to, *write_from, *mount_dir;
	int rw;
	int have_at, have_len;
	uint64_t at, len;
};

static int array_index_of(const struct rk_discovery *d, const uint8_t *uuid)
{
	for (uint32_t i = 0; i < d->narrays; i++)
		if (!memcmp(d->arrays[i].uuid, uuid, 16))
			return (int)i;
	return -1;
}

/* The discovery the actions open arrays from (mid-reshape the added
 * members are among its left-out paths). */
static const struct rk_discovery *disc;

static rk_err open_array(rk_array **arr, const struct rk_array_info *ai, unsigned flags)
{
	return rk_array_open_members(arr, ai, disc ? disc->left : NULL, disc ? disc->nleft : 0, flags);
}

/* "reshape in progress at X of Y, finish with raid-resize --continue" */
static void print_reshape(FILE *f, const struct rk_discovery *d, uint32_t a)
{
	const struct rk_array_info *ai = &d->arrays[a];
	const struct rk_sb *t = ai->sb;
	if (!t || !(t->feat_incompat & RK_FEAT_INCOMPAT_RESHAPE))
		return;
	if (t->reshape_flags & RK_RESHAPE_REVERTING)
		fprintf(f, "  reshape being reverted at %" PRIu64 " of %" PRIu64 " volume bytes (back to RAID-%s, %u roles), "
		        "finish with raid-resize --continue or --revert; readable and writable meanwhile\n",
		        t->reshape_pos, t->volume_size, rk_level_name(t->level), t->nroles);
	else
		fprintf(f, "  reshape in progress at %" PRIu64 " of %" PRIu64 " volume bytes (to RAID-%s, %u roles), "
		        "finish with raid-resize --continue; readable and writable meanwhile\n", t->reshape_pos,
		        t->volume_size, rk_level_name(t->reshape_new.level), t->reshape_new.nroles);
}

static int array_exit(const struct rk_discovery *d, uint32_t a)
{
	const struct rk_array_info *ai = &d->arrays[a];
	if (ai->state == RK_ASTATE_FAILED || ai->state == RK_ASTATE_CONFLICT || !ai->sb)
		return EX_FAIL;
	if (ai->state == RK_ASTATE_DEGRADED)
		return EX_REPORT;
	for (uint32_t i = 0; i < d->nleft; i++)
		if (rk_print_lists_left(d, a, &d->left[i]) && !rk_member_reshape_added(ai->sb, &d->left[i]))
			return EX_REPORT;
	for (uint32_t b = 0; b < d->narrays; b++)
		if (b != a && d->arrays[b].nactive)
			return EX_REPORT;   /* their members were given and not used here */
	return EX_DONE;
}

/* ---- --force: stale members fill roles the array cannot run without ---- */

static void force_stale(struct rk_discovery *d, uint32_t a)
{
	struct rk_array_info *ai = &d->arrays[a];
	if (ai->state != RK_ASTATE_FAILED || !ai->sb)
		return;
	struct rk_geom g;
	if (rk_geom_init(&g, ai->sb->level, ai->sb->layout, ai->sb->chunk, ai->sb->nroles, ai->sb->data_size))
		return;
	uint32_t tol = rk_geom_redundancy(&g);
	for (;;) {
		uint32_t missing = 0;
		for (uint32_t r = 0; r < ai->nroles; r++)
			missing += ai->roles[r].cls != RK_MEMBER_ACTIVE;
		if (missing <= tol)
			break;
		/* The freshest stale member that can serve a missing role. */
		int best = -1;
		for (uint32_t i = 0; i < d->nleft; i++) {
			struct rk_member *m = &d->left[i];
			if (m->cls != RK_MEMBER_STALE || !m->sb || !m->path || memcmp(m->sb->array_uuid, ai->uuid, 16) ||
			    m->sb->this_role >= ai->nroles || ai->roles[m->sb->this_role].cls == RK_MEMBER_ACTIVE)
				continue;
			if (best < 0 || m->events > d->left[best].events)
				best = (int)i;
		}
		if (best < 0)
			break;
		struct rk_member *m = &d->left[best];
		uint32_t r = m->sb->this_role;
		cli_err("warning: --force: using stale %s for role %u (events %" PRIu64 ", the others have %" PRIu64
		        "): blocks written since may be inconsistent", m->path, r, m->events, ai->sb->events);
		/* Swap so that each entry stays owned exactly once. */
		struct rk_member tmp = ai->roles[r];
		ai->roles[r] = *m;
		*m = tmp;
		ai->roles[r].cls = RK_MEMBER_ACTIVE;
		ai->roles[r].role = r;
		snprintf(ai->roles[r].reason, sizeof ai->roles[r].reason, "forced in (stale: events %" PRIu64 ")",
		         ai->roles[r].events);
		ai->nactive++;
	}
	uint32_t missing = 0;
	for (uint32_t r = 0; r < ai->nroles; r++)
		missing += ai->roles[r].cls != RK_MEMBER_ACTIVE;
	if (missing <= tol) {
		ai->state = missing ? RK_ASTATE_DEGRADED : RK_ASTATE_CLEAN;
		snprintf(ai->why, sizeof ai->why, "forced with stale members; %u role%s missing", missing,
		         missing == 1 ? "" : "s");
	}
}

/* ---- actions ---- */

struct action_result {
	const char *kind;        /* "export", "write", "mount" or NULL */
	const char *path;
	uint64_t offset, length, done;
	uint64_t events_after;
	uint32_t nfailed;        /* roles that failed during the action (first 8 kept) */
	int64_t failed_role[8];
	char failed_why[8][256];
	int ok;
	char error[512];
};

/* Keeps the error of an action for the JSON report, prints it and
 * returns RC. */
__attribute__((format(printf, 3, 4)))
static int action_error(struct action_result *res, int rc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(res->error, sizeof res->error, fmt, ap);
	va_end(ap);
	cli_err("%s", res->error);
	return rc;
}

static int all_zero(const uint8_t *p, size_t n)
{
	const uint64_t *q = (const uint64_t *)(const void *)p;
	size_t i = 0;
	for (; i + 8 <= n; i += 8)
		if (q[i / 8])
			return 0;
	for (; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

static int write_all(int fd, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* An interrupted --write stops between batches so the array is closed
 * properly (data flushed, marked clean) rather than left open for writing. */
static volatile sig_atomic_t stop_sig;
static void on_stop(int sig) { stop_sig = sig; }

/* Reads up to N bytes (fewer only at end of input or on a stop signal);
 * -1 on error. */
static ssize_t read_full(int fd, uint8_t *p, size_t n)
{
	size_t got = 0;
	while (got < n) {
		ssize_t r = read(fd, p + got, n - got);
		if (r < 0) {
			if (errno == EINTR && stop_sig)
				break;
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

static void report_failures(rk_array *arr, const struct rk_array_info *ai, struct action_result *res)
{
	for (uint32_t r = 0; r < ai->nroles; r++) {
		const char *why = rk_array_fail_reason(arr, r);
		if (!*why)
			continue;
		cli_err("warning: role %u (%s) failed during I/O and was left out: %s", r,
		        ai->roles[r].path ? ai->roles[r].path : "?", why);
		if (res->nfailed < 8) {
			res->failed_role[res->nfailed] = r;
			snprintf(res->failed_why[res->nfailed], sizeof res->failed_why[0], "%s", why);
			res->nfailed++;
		}
	}
}

/* What an unclean stop left and what the open did about it, on stderr:
 * the journal's replay where there is one, else a warning that parity of
 * the stripes being written then may lag. */
static void say_unclean(rk_array *arr, const struct rk_array_info *ai, int writing)
{
	const char *msg = NULL;
	rk_array_replayed(arr, &msg);
	if (msg && *msg) {
		cli_err("the array was not shut down cleanly; %s%s", msg,
		        writing ? "" : " (in memory only: members left untouched)");
		return;
	}
	if (!rk_array_was_unclean(arr))
		return;
	if (writing)
		cli_err("warning: the array was not shut down cleanly: parity of stripes written then may lag; "
		        "run raid-scrub --repair");
	else if (ai->state == RK_ASTATE_DEGRADED)
		cli_err("warning: the array was not shut down cleanly and is degraded: reconstructed blocks of a "
		        "stripe that was being written may be wrong");
}

/* Read errors rewritten in place from redundancy during the action. */
static int say_repairs(rk_array *arr, int rc)
{
	uint64_t bytes = 0, n = rk_array_nrepaired(arr, &bytes);
	if (!n)
		return rc;
	cli_err("repaired %" PRIu64 " read error%s (%" PRIu64 " member bytes) from redundancy", n,
	        n == 1 ? "" : "s", bytes);
	return rc == EX_DONE ? EX_REPORT : rc;
}

static int do_export(const struct opts *o, const struct rk_array_info *ai, struct action_result *res)
{
	rk_array *arr;
	if (open_array(&arr, ai, RK_ARRAY_RDONLY)) {
		return action_error(res, EX_FAIL, "%s", rk_errmsg());
	}
	say_unclean(arr, ai, 0);
	int tostdout = !strcmp(o->export_to, "-");
	int fd = tostdout ? STDOUT_FILENO : open(o->export_to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		cli_err("%s: cannot open for writing: %s", o->export_to, strerror(errno));
		snprintf(res->error, sizeof res->error, "%s: %s", o->export_to, strerror(errno));
		rk_array_close(arr);
		return EX_FAIL;
	}
	struct stat st;
	int sparse = !tostdout && !fstat(fd, &st) && S_ISREG(st.st_mode);
	uint8_t *buf = NULL;
	if (posix_memalign((void **)&buf, 4096, BATCH)) {
		cli_err("out of memory");
		if (!tostdout)
			close(fd);
		rk_array_close(arr);
		return EX_FAIL;
	}
	struct cli_progress *pg = cli_progress_start("raid-assemble: export", res->length, o->progress, o->json);
	int rc = EX_DONE;
	uint64_t done = 0;
	while (done < res->length) {
		size_t n = res->length - done < BATCH ? (size_t)(res->length - done) : BATCH;
		if (rk_array_read(arr, buf, n, res->offset + done)) {
			rc = action_error(res, EX_FAIL, "reading volume bytes [%" PRIu64 ", +%zu): %s",
			                  res->offset + done, n, rk_errmsg());
			break;
		}
		int wr;
		if (sparse && all_zero(buf, n))
			wr = lseek(fd, (off_t)n, SEEK_CUR) < 0 ? -1 : 0;
		else
			wr = write_all(fd, buf, n);
		if (wr) {
			rc = action_error(res, EX_FAIL, "%s: write failed: %s", o->export_to, strerror(errno));
			break;
		}
		done += n;
		cli_progress_update(pg, done);
	}
	if (rc == EX_DONE && sparse && ftruncate(fd, (off_t)res->length))
		rc = action_error(res, EX_FAIL, "%s: %s", o->export_to, strerror(errno));
	if (rc == EX_DONE && !tostdout && close(fd))
		rc = action_error(res, EX_FAIL, "%s: %s", o->export_to, strerror(errno));
	else if (rc != EX_DONE && !tostdout)
		close(fd);
	if (rc == EX_DONE)
		cli_progress_end(pg);
	else
		free(pg);
	free(buf);
	res->done = done;
	if (rk_array_nfailed(arr)) {
		report_failures(arr, ai, res);
		if (rc == EX_DONE)
			rc = EX_REPORT;
	}
	res->events_after = rk_array_events(arr);
	rk_array_close(arr);
	res->ok = rc != EX_FAIL;
	return rc;
}

static int do_write(const struct opts *o, const struct rk_array_info *ai, struct action_result *res)
{
	int fromstdin = !strcmp(o->write_from, "-");
	int fd = fromstdin ? STDIN_FILENO : open(o->write_from, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		cli_err("--write: %s: cannot open: %s", o->write_from, strerror(errno));
		snprintf(res->error, sizeof res->error, "%s: %s", o->write_from, strerror(errno));
		return EX_USAGE;
	}
	struct stat st;
	uint64_t size = ai->sb->volume_size;
	if (!fstat(fd, &st) && S_ISREG(st.st_mode)) {
		if ((uint64_t)st.st_size > size - res->offset) {
			if (!fromstdin)
				close(fd);
			return cli_usage_error("--write: %s is %" PRIu64 " bytes; from --at %" PRIu64
			                       " only %" PRIu64 " fit in the %" PRIu64 "-byte volume",
			                       o->write_from, (uint64_t)st.st_size, res->offset, size - res->offset, size);
		}
		res->length = (uint64_t)st.st_size;
	} else {
		res->length = size - res->offset;   /* at most; the input decides */
	}
	rk_array *arr;
	if (open_array(&arr, ai, RK_ARRAY_RDWR)) {
		action_error(res, EX_FAIL, "%s", rk_errmsg());
		if (!fromstdin)
			close(fd);
		return EX_FAIL;
	}
	say_unclean(arr, ai, 1);
	uint8_t *buf = NULL;
	if (posix_memalign((void **)&buf, 4096, BATCH)) {
		cli_err("out of memory");
		if (!fromstdin)
			close(fd);
		rk_array_close(arr);
		return EX_FAIL;
	}
	struct cli_progress *pg = cli_progress_start("raid-assemble: write", res->length, o->progress, o->json);
	int rc = EX_DONE;
	uint64_t done = 0;
	struct sigaction sa, old_int, old_term, old_hup;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	sigaction(SIGHUP, &sa, &old_hup);
	for (;;) {
		if (stop_sig) {
			rc = action_error(res, EX_FAIL, "interrupted by signal %d after %" PRIu64
			                  " bytes written; closing the array cleanly", (int)stop_sig, done);
			break;
		}
		uint64_t room = size - res->offset - done;
		/* One byte past the room tells an over-long stream from an exact fit. */
		size_t want = room < BATCH ? (size_t)room + 1 : BATCH;
		ssize_t n = read_full(fd, buf, want);
		if (n < 0) {
			rc = action_error(res, EX_FAIL, "%s: read failed: %s", o->write_from, strerror(errno));
			break;
		}
		if (n == 0)
			break;
		if ((uint64_t)n > room) {
			snprintf(res->error, sizeof res->error, "%s: input goes past the end of the %" PRIu64
			         "-byte volume; the first %" PRIu64 " bytes were written", o->write_from, size, done);
			cli_err("--write: %s", res->error);
			rc = EX_USAGE;
			break;
		}
		if (rk_array_write(arr, buf, (size_t)n, res->offset + done)) {
			rc = action_error(res, EX_FAIL, "writing volume bytes [%" PRIu64 ", +%zd): %s",
			                  res->offset + done, n, rk_errmsg());
			break;
		}
		done += (uint64_t)n;
		cli_progress_update(pg, done);
		if ((size_t)n < want && !stop_sig)
			break;
	}
	if (!fromstdin)
		close(fd);
	free(buf);
	res->done = done;
	res->length = done;
	rc = say_repairs(arr, rc);

	if (rk_array_nfailed(arr)) {
		report_failures(arr, ai, res);
		if (rc == EX_DONE)
			rc = EX_REPORT;
	}
	res->events_after = rk_array_events(arr);
	if (rk_array_close(arr)) {
		rc = action_error(res, EX_FAIL, "finishing the write: %s", rk_errmsg());
	}
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGHUP, &old_hup, NULL);
	if (rc == EX_DONE)
		cli_progress_end(pg);
	else
		free(pg);
	res->ok = rc == EX_DONE || rc == EX_REPORT;
	return rc;
}

/* --mount: serves the volume until unmounted.  res->done counts bytes
 * read and written, res->length those written. */
struct mount_ready {
	const char *dir;
	uint64_t size;
	int rw, json;
};

static void mount_ready(void *ctx)
{
	const struct mount_ready *m = ctx;
	FILE *f = m->json ? stderr : stdout;
	fprintf(f, "serving the volume (%" PRIu64 " bytes) as %s/volume, %s; unmount with fusermount3 -u %s\n",
	        m->size, m->dir, m->rw ? "read-write" : "read-only", m->dir);
	fflush(f);
}

static int do_mount(const struct opts *o, const struct rk_array_info *ai, struct action_result *res)
{
	rk_array *arr;
	if (open_array(&arr, ai, o->rw ? RK_ARRAY_RDWR : RK_ARRAY_RDONLY))
		return action_error(res, EX_FAIL, "%s", rk_errmsg());
	say_unclean(arr, ai, o->rw);
	char fsname[64], u[37];
	uuid_unparse_lower(ai->uuid, u);
	snprintf(fsname, sizeof fsname, "raidkit:%s", u);
	struct mount_ready mr = { o->mount_dir, rk_array_size(arr), o->rw, o->json };
	struct cli_mount_stats st;
	int rc = EX_DONE;
	if (cli_mount_serve(arr, o->mount_dir, o->rw, fsname, mount_ready, &mr, &st)) {
		snprintf(res->error, sizeof res->error, "--mount %s: failed (see the messages above)", o->mount_dir);
		rc = EX_FAIL;
	} else if (st.read_errors || st.write_errors) {
		rc = action_error(res, EX_FAIL, "--mount %s: %" PRIu64 " read and %" PRIu64 " write requests failed",
		                  o->mount_dir, st.read_errors, st.write_errors);
	}
	res->done = st.bytes_read + st.bytes_written;
	res->length = st.bytes_written;
	rc = say_repairs(arr, rc);
	if (rk_array_nfailed(arr)) {
		report_failures(arr, ai, res);
		if (rc == EX_DONE)
			rc = EX_REPORT;
	}
	if (o->rw)
		res->events_after = rk_array_events(arr);
	if (rk_array_close(arr))
		rc = action_error(res, EX_FAIL, "closing the array: %s", rk_errmsg());
	res->ok = rc == EX_DONE || rc == EX_REPORT;
	return rc;
}

/* Refuses an export target that is one of the given paths. */
static int same_file(const char *a, const char *b)
{
	struct stat sa, sb;
	if (stat(a, &sa) || stat(b, &sb))
		return 0;
	if (S_ISBLK(sa.st_mode) && S_ISBLK(sb.st_mode))
		return sa.st_rdev == sb.st_rdev;
	return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

int main(int argc, char **argv)
{
	cli_init(argv[0]);
	cli_test_hooks_install();
	struct opts o;
	memset(&o, 0, sizeof o);
	enum { O_JSON = 256, O_UUID, O_FORCE, O_EXPORT, O_AT, O_LENGTH, O_WRITE, O_PROGRESS, O_MOUNT, O_RW,
	       O_HELP, O_VERSION };
	static const struct option lo[] = {
		{ "json", no_argument, NULL, O_JSON },
		{ "uuid", required_argument, NULL, O_UUID },
		{ "force", no_argument, NULL, O_FORCE },
		{ "export", required_argument, NULL, O_EXPORT },
		{ "at", required_argument, NULL, O_AT },
		{ "length", required_argument, NULL, O_LENGTH },
		{ "write", required_argument, NULL, O_WRITE },
		{ "progress", no_argument, NULL, O_PROGRESS },
		{ "mount", required_argument, NULL, O_MOUNT },
		{ "rw", no_argument, NULL, O_RW },
		{ "help", no_argument, NULL, O_HELP },
		{ "version", no_argument, NULL, O_VERSION },
		{ NULL, 0, NULL, 0 },
	};
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, ":", lo, NULL)) != -1) {
		switch (c) {
		case O_JSON: o.json = 1; break;
		case O_FORCE: o.force = 1; break;
		case O_PROGRESS: o.progress = 1; break;
		case O_UUID:
			if (uuid_parse(optarg, o.uuid))
				return cli_usage_error("--uuid: '%s' is not a UUID", optarg);
			o.have_uuid = 1;
			break;
		case O_EXPORT:
			if (o.export_to)
				return cli_usage_error("--export given twice");
			if (!*optarg)
				return cli_usage_error("--export: empty file name");
			o.export_to = optarg;
			break;
		case O_WRITE:
			if (o.write_from)
				return cli_usage_error("--write given twice");
			if (!*optarg)
				return cli_usage_error("--write: empty file name");
			o.write_from = optarg;
			break;
		case O_AT:
			if (cli_parse_size(optarg, &o.at))
				return cli_usage_error("--at: '%s' is not an offset (bytes, or with K, M, G, T)", optarg);
			o.have_at = 1;
			break;
		case O_LENGTH:
			if (cli_parse_size(optarg, &o.len))
				return cli_usage_error("--length: '%s' is not a size (bytes, or with K, M, G, T)", optarg);
			o.have_len = 1;
			break;
		case O_MOUNT:
			if (o.mount_dir)
				return cli_usage_error("--mount given twice");
			if (!*optarg)
				return cli_usage_error("--mount: empty directory name");
			o.mount_dir = optarg;
			break;
		case O_RW: o.rw = 1; break;
		case O_HELP: usage(stdout); return EX_DONE;
		case O_VERSION: cli_version(); return EX_DONE;
		default:
			return cli_bad_option(c, argv);
		}
	}
	int nmem = argc - optind;
	if (nmem <= 0)
		return cli_usage_error("no MEMBER given");
	if ((o.export_to != NULL) + (o.write_from != NULL) + (o.mount_dir != NULL) > 1)
		return cli_usage_error("--export, --write and --mount: one action at a time");
	if (o.rw && !o.mount_dir)
		return cli_usage_error("--rw: goes with --mount");
	if (o.mount_dir) {
		struct stat ms;
		if (stat(o.mount_dir, &ms))
			return cli_usage_error("--mount: %s: %s", o.mount_dir, strerror(errno));
		if (!S_ISDIR(ms.st_mode))
			return cli_usage_error("--mount: %s is not a directory", o.mount_dir);
	}
	if (o.have_at && !o.export_to && !o.write_from)
		return cli_usage_error("--at: goes with --export or --write");
	if (o.have_len && !o.export_to)
		return cli_usage_error("--length: goes with --export");
	if (o.write_from && !o.have_at)
		return cli_usage_error("--write: needs --at OFFSET");
	if (o.json && o.export_to && !strcmp(o.export_to, "-"))
		return cli_usage_error("--json with --export -: stdout cannot carry both the volume and the report");
	if (o.export_to && !strcmp(o.export_to, "-") && o.write_from && !strcmp(o.write_from, "-"))
		return cli_usage_error("--write -: stdin and stdout at once");
	char **paths = argv + optind;
	for (int i = 0; i < nmem; i++) {
		if (!*paths[i])
			return cli_usage_error("empty MEMBER name");
		if (o.export_to && strcmp(o.export_to, "-") && same_file(o.export_to, paths[i]))
			return cli_usage_error("--export: %s is one of the members (%s)", o.export_to, paths[i]);
		if (o.write_from && strcmp(o.write_from, "-") && same_file(o.write_from, paths[i]))
			return cli_usage_error("--write: %s is one of the members (%s)", o.write_from, paths[i]);
	}

	struct rk_discovery *d = NULL;
	if (rk_discover(&d, paths, (uint32_t)nmem, o.have_uuid ? o.uuid : NULL)) {
		cli_err("%s", rk_errmsg());
		return EX_FAIL;
	}
	int action = o.export_to || o.write_from || o.mount_dir;
	int pick = -1;
	if (o.have_uuid) {
		pick = array_index_of(d, o.uuid);
	} else if (d->narrays == 1) {
		pick = 0;
	}
	if (o.force)
		for (uint32_t a = 0; a < d->narrays; a++)
			if (pick < 0 || (uint32_t)pick == a)
				force_stale(d, a);

	/* The report in words comes first (before a long action); to stderr
	 * when stdout carries the volume. */
	FILE *rep = o.export_to && !strcmp(o.export_to, "-") ? stderr : stdout;
	disc = d;
	if (!o.json) {
		rk_print_discovery_text(rep, d);
		for (uint32_t a = 0; a < d->narrays; a++)
			if (pick < 0 || (uint32_t)pick == a)
				print_reshape(rep, d, a);
		fflush(rep);
	}

	int rc = EX_DONE;
	struct action_result res;
	memset(&res, 0, sizeof res);
	if (!d->narrays) {
		cli_err("no array found among the %d path%s given", nmem, nmem == 1 ? "" : "s");
		rc = EX_FAIL;
	} else if (o.have_uuid && pick < 0) {
		char u[37];
		uuid_unparse_lower(o.uuid, u);
		cli_err("--uuid: no array %s among the members given", u);
		rc = EX_FAIL;
	} else if (action && pick < 0) {
		cli_err("several arrays: pick one with --uuid");
		rc = EX_USAGE;
	} else {
		for (uint32_t a = 0; a < d->narrays; a++)
			if (pick < 0 || (uint32_t)pick == a) {
				int e = array_exit(d, a);
				rc = e > rc ? e : rc;
			}
		const struct rk_array_info *ai = pick >= 0 ? &d->arrays[pick] : NULL;
		if (ai && !ai->sb && action) {
			cli_err("the array has no usable superblock");
			rc = EX_FAIL;
		} else if (ai && action && (ai->state == RK_ASTATE_FAILED || ai->state == RK_ASTATE_CONFLICT)) {
			cli_err("cannot %s: %s", o.export_to ? "export" : o.mount_dir ? "mount" : "write",
			        ai->why[0] ? ai->why : "too few members");
			rc = EX_FAIL;
		} else if (ai && action) {
			uint64_t size = ai->sb->volume_size;
			res.kind = o.export_to ? "export" : o.mount_dir ? "mount" : "write";
			res.path = o.export_to ? o.export_to : o.mount_dir ? o.mount_dir : o.write_from;
			res.offset = o.at;
			int ar;
			if (o.at > size) {
				ar = cli_usage_error("--at: %" PRIu64 " is past the end of the %" PRIu64 "-byte volume",
				                     o.at, size);
			} else if (o.export_to) {
				res.length = o.have_len ? o.len : size - o.at;
				if (res.length > size - o.at)
					ar = cli_usage_error("--length: %" PRIu64 " bytes from %" PRIu64
					                     " go past the end of the %" PRIu64 "-byte volume",
					                     res.length, o.at, size);
				else
					ar = do_export(&o, ai, &res);
			} else if (o.mount_dir) {
				ar = do_mount(&o, ai, &res);
			} else {
				ar = do_write(&o, ai, &res);
			}
			if (ar == EX_USAGE || ar == EX_FAIL)
				rc = ar;
			else
				rc = ar > rc ? ar : rc;
			if (res.ok && !o.json) {
				if (o.export_to)
					fprintf(rep, "exported %" PRIu64 " bytes from volume offset %" PRIu64 " to %s\n",
					        res.done, res.offset, strcmp(o.export_to, "-") ? o.export_to : "stdout");
				else if (o.mount_dir && res.events_after)
					fprintf(rep, "unmounted %s: %" PRIu64 " bytes read, %" PRIu64 " written; events now %"
					        PRIu64 "\n", o.mount_dir, res.done - res.length, res.length, res.events_after);
				else if (o.mount_dir)
					fprintf(rep, "unmounted %s: %" PRIu64 " bytes read\n", o.mount_dir, res.done);
				else
					fprintf(rep, "wrote %" PRIu64 " bytes of %s at volume offset %" PRIu64
					        "; events now %" PRIu64 "\n", res.done, o.write_from, res.offset,
					        res.events_after);
			}
		}
	}

	if (o.json) {
		rk_json *j = rk_json_new(stdout);
		if (!j) {
			cli_err("out of memory");
			rk_discovery_free(d);
			return EX_FAIL;
		}
		rk_json_obj_begin(j);
		rk_print_discovery_json_keys(j, d);
		/* mid-reshape: where it stands (the report's reshape line) */
		const struct rk_array_info *ri = pick >= 0 ? &d->arrays[pick] : d->narrays == 1 ? &d->arrays[0] : NULL;
		if (ri && ri->sb && (ri->sb->feat_incompat & RK_FEAT_INCOMPAT_RESHAPE)) {
			rk_json_key(j, "reshape");
			rk_json_obj_begin(j);
			rk_json_ku64(j, "position", ri->sb->reshape_pos);
			rk_json_ku64(j, "volume_size", ri->sb->volume_size);
			rk_json_ki64(j, "new_level", ri->sb->reshape_new.level);
			rk_json_ku64(j, "new_roles", ri->sb->reshape_new.nroles);
			rk_json_kstr(j, "state", (ri->sb->reshape_flags & RK_RESHAPE_REVERTING)
			                         ? "reshape being reverted: finish with raid-resize --continue"
			                         : "reshape in progress: finish with raid-resize --continue");
			rk_json_obj_end(j);
		}
		if (res.kind) {
			rk_json_key(j, "action");
			rk_json_obj_begin(j);
			rk_json_kstr(j, "kind", res.kind);
			rk_json_kstr(j, "path", res.path);
			rk_json_ku64(j, "offset", res.offset);
			rk_json_ku64(j, "length", res.length);
			rk_json_ku64(j, "bytes", res.done);
			rk_json_kbool(j, "ok", res.ok);
			if (res.events_after)
				rk_json_ku64(j, "events_after", res.events_after);
			rk_json_key(j, "failed");
			rk_json_arr_begin(j);
			for (uint32_t i = 0; i < res.nfailed; i++) {
				const struct rk_array_info *fa = &d->arrays[pick];
				int64_t r = res.failed_role[i];
				rk_json_obj_begin(j);
				rk_json_ki64(j, "role", r);
				rk_json_kstr(j, "path", fa->roles[r].path);
				rk_json_kstr(j, "reason", res.failed_why[i]);
				rk_json_obj_end(j);
			}
			rk_json_arr_end(j);
			rk_json_kstr(j, "error", res.error[0] ? res.error : NULL);
			rk_json_obj_end(j);
		}
		rk_json_ku64(j, "exit", (uint64_t)rc);
		rk_json_obj_end(j);
		rk_json_free(j);
	}
	rk_discovery_free(d);
	if (fflush(stdout) || ferror(stdout)) {
		if (errno != EPIPE)
			cli_err("stdout: write failed: %s", strerror(errno));
		return EX_FAIL;
	}
	return rc;
}
