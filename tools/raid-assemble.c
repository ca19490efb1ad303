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
#include "rk_array_stream.h"
#include "rk_discover.h"
#include "rk_geom.h"
#include "rk_geometry.h"
#include "rk_json.h"
#include "rk_print.h"
#include "rk_sb.h"
#include "rk_util.h"
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
	"  --geometry FILE      the array a geometry file describes (raid-recover\n"
	"                       --save-geometry) over MEMBERs without metadata,\n"
	"                       matched to roles by content or path; read-only\n"
	"  --progress           progress on stderr even when not a terminal\n"
	"  --hash ALG           print the ALG (sha256, sha1, md5) digest of each member\n"
	"                       and of what --export wrote (read-only use only)\n"
	"  --audit FILE         append one JSON line about this run to FILE\n"
	"  --help, --version\n"
	"\n"
	"Sizes and offsets take K, M, G, T suffixes (powers of 1024).\n"
	"Exit: 0 clean; 1 degraded or paths left out; 2 too few members, conflict\n"
	"or I/O error; 64 bad usage.\n");
}

/* The command line. */
struct assemble_args {
	int force;
	const char *export_to, *write_from, *mount_dir;
	const char *geometry;       /* --geometry FILE */
	int rw;
	int have_at, have_len;
	uint64_t at, len;
	struct cli_common common;   /* --json, --progress, --uuid */
};

/* One run: what was asked and what discovery found. */
struct assembly {
	const struct assemble_args *args;
	struct rk_discovery *d;
	int pick;                   /* the array the actions use, -1 none */
	FILE *report;               /* the report in words: stderr when stdout carries the volume */
	char mdadm[8192];           /* --geometry: the mdadm line that serves the same volume, or why not */
};

/* Opens array AI for an action (mid-reshape the added members are among
 * the discovery's left-out paths). */
static rk_err open_array(const struct assembly *as, rk_array **arr, const struct rk_array_info *ai, unsigned flags)
{
	return rk_array_open_wrapped(arr, ai, as->d->left, as->d->nleft, flags, cli_hash_on() ? cli_hash_wrap : NULL,
	                             NULL);
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

/* --force: a stale member taken for a role the array cannot run without. */
static void on_forced(void *ctx, const struct rk_array_info *a, uint32_t role)
{
	(void)ctx;
	const struct rk_member *m = &a->roles[role];
	cli_err("warning: --force: using stale %s for role %u (events %" PRIu64 ", the others have %" PRIu64
	        "): blocks written since may be inconsistent", m->path, role, m->events, a->sb->events);
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

/* Roles that failed during the action, on stderr and into RES; RC becomes
 * EX_REPORT (from EX_DONE) when there are any. */
static int note_failures(rk_array *arr, const struct rk_array_info *ai, struct action_result *res, int rc)
{
	if (!rk_array_nfailed(arr))
		return rc;
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
	return rc == EX_DONE ? EX_REPORT : rc;
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

/* A 4 KiB-aligned transfer buffer of BATCH bytes, or NULL (said). */
static uint8_t *batch_buffer(void)
{
	uint8_t *buf = NULL;
	if (posix_memalign((void **)&buf, 4096, BATCH)) {
		cli_err("out of memory");
		return NULL;
	}
	return buf;
}

/* Copies res->length volume bytes from res->offset to FD (holes for zero
 * runs when SPARSE): EX_DONE or EX_FAIL (said). */
static int export_copy(rk_array *arr, int fd, int sparse, const char *to, struct cli_progress *pg,
                       struct action_result *res)
{
	char why[sizeof res->error];
	int rc = cli_copy_volume(arr, res->offset, res->length, fd, sparse, 1, pg, &res->done, why, sizeof why);
	if (!rc)
		return EX_DONE;
	return strncmp(why, "write failed", 12) ? action_error(res, EX_FAIL, "%s", why)
	                                        : action_error(res, EX_FAIL, "%s: %s", to, why);
}

static int do_export(const struct assembly *as, const struct rk_array_info *ai, struct action_result *res)
{
	const struct assemble_args *o = as->args;
	rk_array *arr;
	if (open_array(as, &arr, ai, RK_ARRAY_RDONLY))
		return action_error(res, EX_FAIL, "%s", rk_errmsg());
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
	struct cli_progress *pg = cli_progress_start("raid-assemble: export", res->length, o->common.progress,
	                                             o->common.json);
	int rc = cli_hash_export_start(o->export_to) ? EX_FAIL : export_copy(arr, fd, sparse, o->export_to, pg, res);
	if (rc == EX_DONE && cli_hash_export_end())
		rc = action_error(res, EX_FAIL, "--hash: %s", rk_errmsg());
	if (rc == EX_DONE && !tostdout && close(fd))
		rc = action_error(res, EX_FAIL, "%s: %s", o->export_to, strerror(errno));
	else if (rc != EX_DONE && !tostdout)
		close(fd);
	if (rc == EX_DONE)
		cli_progress_end(pg);
	else
		free(pg);
	rc = note_failures(arr, ai, res, rc);
	res->events_after = rk_array_events(arr);
	if (cli_hash_finish() && rc == EX_DONE)   /* while the members are open: only the catch-up */
		rc = EX_REPORT;
	rk_array_close(arr);
	res->ok = rc != EX_FAIL;
	cli_audit_written("export", o->export_to, res->offset, res->done, cli_hash_export());
	return rc;
}

/* --write FILE: opens it (stdin for '-') into *FD and sets res->length (the
 * file's size, or at most the room from --at for a stream).  CLI_GO_ON, or
 * the exit status (said). */
static int open_input(const struct assemble_args *o, uint64_t size, int *fd, struct action_result *res)
{
	int fromstdin = !strcmp(o->write_from, "-");
	*fd = fromstdin ? STDIN_FILENO : open(o->write_from, O_RDONLY | O_CLOEXEC);
	if (*fd < 0) {
		cli_err("--write: %s: cannot open: %s", o->write_from, strerror(errno));
		snprintf(res->error, sizeof res->error, "%s: %s", o->write_from, strerror(errno));
		return EX_USAGE;
	}
	struct stat st;
	if (!fstat(*fd, &st) && S_ISREG(st.st_mode)) {
		if ((uint64_t)st.st_size > size - res->offset) {
			if (!fromstdin)
				close(*fd);
			return cli_usage_error("--write: %s is %" PRIu64 " bytes; from --at %" PRIu64
			                       " only %" PRIu64 " fit in the %" PRIu64 "-byte volume",
			                       o->write_from, (uint64_t)st.st_size, res->offset, size - res->offset, size);
		}
		res->length = (uint64_t)st.st_size;
	} else {
		res->length = size - res->offset;   /* at most; the input decides */
	}
	return CLI_GO_ON;
}

/* Copies FD into the volume from res->offset until the end of input, a
 * stop signal or an error: EX_DONE, EX_USAGE (input too long) or EX_FAIL. */
static int write_copy(rk_array *arr, int fd, const char *from, uint64_t size, struct cli_progress *pg,
                      struct action_result *res)
{
	uint8_t *buf = batch_buffer();
	if (!buf)
		return EX_FAIL;
	uint64_t done = 0;
	int rc = EX_DONE;
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
			rc = action_error(res, EX_FAIL, "%s: read failed: %s", from, strerror(errno));
			break;
		}
		if (n == 0)
			break;
		if ((uint64_t)n > room) {
			snprintf(res->error, sizeof res->error, "%s: input goes past the end of the %" PRIu64
			         "-byte volume; the first %" PRIu64 " bytes were written", from, size, done);
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
	free(buf);
	res->done = done;
	res->length = done;
	return rc;
}

/* SIGINT, SIGTERM and SIGHUP set stop_sig while a write runs (ON), and get
 * their old handlers back after it (!ON). */
static void catch_stop_signals(int on)
{
	static struct sigaction old[3];
	static const int sigs[3] = { SIGINT, SIGTERM, SIGHUP };
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	for (int i = 0; i < 3; i++)
		sigaction(sigs[i], on ? &sa : &old[i], on ? &old[i] : NULL);
}

static int do_write(const struct assembly *as, const struct rk_array_info *ai, struct action_result *res)
{
	const struct assemble_args *o = as->args;
	int fromstdin = !strcmp(o->write_from, "-"), fd;
	uint64_t size = ai->sb->volume_size;
	int rc = open_input(o, size, &fd, res);
	if (rc != CLI_GO_ON)
		return rc;
	rk_array *arr;
	if (open_array(as, &arr, ai, RK_ARRAY_RDWR)) {
		action_error(res, EX_FAIL, "%s", rk_errmsg());
		if (!fromstdin)
			close(fd);
		return EX_FAIL;
	}
	say_unclean(arr, ai, 1);
	struct cli_progress *pg = cli_progress_start("raid-assemble: write", res->length, o->common.progress,
	                                             o->common.json);
	catch_stop_signals(1);
	rc = write_copy(arr, fd, o->write_from, size, pg, res);
	if (!fromstdin)
		close(fd);
	rc = say_repairs(arr, rc);
	rc = note_failures(arr, ai, res, rc);
	res->events_after = rk_array_events(arr);
	if (rk_array_close(arr))
		rc = action_error(res, EX_FAIL, "finishing the write: %s", rk_errmsg());
	cli_audit_written("write", o->write_from, res->offset, res->done, NULL);
	catch_stop_signals(0);
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
	rk_esc_fprintf(f, "serving the volume (%" PRIu64 " bytes) as %s/volume, %s; unmount with fusermount3 -u %s\n",
	               m->size, m->dir, m->rw ? "read-write" : "read-only", m->dir);
	fflush(f);
}

static int do_mount(const struct assembly *as, const struct rk_array_info *ai, struct action_result *res)
{
	const struct assemble_args *o = as->args;
	rk_array *arr;
	if (open_array(as, &arr, ai, o->rw ? RK_ARRAY_RDWR : RK_ARRAY_RDONLY))
		return action_error(res, EX_FAIL, "%s", rk_errmsg());
	say_unclean(arr, ai, o->rw);
	char fsname[64], u[37];
	uuid_unparse_lower(ai->uuid, u);
	snprintf(fsname, sizeof fsname, "raidkit:%s", u);
	struct mount_ready mr = { o->mount_dir, rk_array_size(arr), o->rw, o->common.json };
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
	rc = note_failures(arr, ai, res, rc);
	if (o->rw)
		res->events_after = rk_array_events(arr);
	if (cli_hash_finish() && rc == EX_DONE)
		rc = EX_REPORT;
	if (rk_array_close(arr))
		rc = action_error(res, EX_FAIL, "closing the array: %s", rk_errmsg());
	if (o->rw)
		cli_audit_written("mount", o->mount_dir, 0, res->length, NULL);
	res->ok = rc == EX_DONE || rc == EX_REPORT;
	return rc;
}

/* ---- command line ---- */

enum { O_FORCE = 256, O_EXPORT, O_AT, O_LENGTH, O_WRITE, O_MOUNT, O_RW, O_GEOMETRY };

/* A file name option given once and not empty. */
static int set_once(const char **slot, const char *name, const char *what, const char *arg)
{
	if (*slot)
		return cli_usage_error("%s given twice", name);
	if (!*arg)
		return cli_usage_error("%s: empty %s name", name, what);
	*slot = arg;
	return CLI_GO_ON;
}

static int on_option(void *ctx, int opt, char *arg)
{
	struct assemble_args *o = ctx;
	switch (opt) {
	case O_FORCE: o->force = 1; break;
	case O_EXPORT: return set_once(&o->export_to, "--export", "file", arg);
	case O_WRITE: return set_once(&o->write_from, "--write", "file", arg);
	case O_MOUNT: return set_once(&o->mount_dir, "--mount", "directory", arg);
	case O_GEOMETRY: return set_once(&o->geometry, "--geometry", "file", arg);
	case O_AT:
		o->have_at = 1;
		return cli_parse_offset_opt("--at", arg, &o->at);
	case O_LENGTH:
		if (cli_parse_size(arg, &o->len))
			return cli_usage_error("--length: '%s' is not a size (bytes, or with K, M, G, T)", arg);
		o->have_len = 1;
		break;
	case O_RW: o->rw = 1; break;
	}
	return CLI_GO_ON;
}

/* The options together: CLI_GO_ON when they make sense. */
static int check_actions(const struct assemble_args *o)
{
	if ((o->export_to != NULL) + (o->write_from != NULL) + (o->mount_dir != NULL) > 1)
		return cli_usage_error("--export, --write and --mount: one action at a time");
	if (o->rw && !o->mount_dir)
		return cli_usage_error("--rw: goes with --mount");
	if (o->mount_dir) {
		struct stat ms;
		if (stat(o->mount_dir, &ms))
			return cli_usage_error("--mount: %s: %s", o->mount_dir, strerror(errno));
		if (!S_ISDIR(ms.st_mode))
			return cli_usage_error("--mount: %s is not a directory", o->mount_dir);
	}
	if (o->have_at && !o->export_to && !o->write_from)
		return cli_usage_error("--at: goes with --export or --write");
	if (o->have_len && !o->export_to)
		return cli_usage_error("--length: goes with --export");
	if (o->write_from && !o->have_at)
		return cli_usage_error("--write: needs --at OFFSET");
	if (o->common.json && o->export_to && !strcmp(o->export_to, "-"))
		return cli_usage_error("--json with --export -: stdout cannot carry both the volume and the report");
	if (o->export_to && !strcmp(o->export_to, "-") && o->write_from && !strcmp(o->write_from, "-"))
		return cli_usage_error("--write -: stdin and stdout at once");
	if (o->common.hash && (o->write_from || o->rw))
		return cli_usage_error("--hash: goes with read-only use (a report, --export, --mount without --rw)");
	if (o->geometry && (o->common.have_uuid || o->force))
		return cli_usage_error("%s: not with --geometry (the file names one array)", o->force ? "--force" : "--uuid");
	if (o->geometry && (o->write_from || o->rw)) {
		cli_err("%s: an array described by a geometry file is read-only: nothing on the images confirms "
		        "the geometry, so raidkit never writes through one", o->rw ? "--rw" : "--write");
		return EX_FAIL;
	}
	return CLI_GO_ON;
}

/* No MEMBER may be empty, nor the file --export writes or --write reads. */
static int check_members(const struct assemble_args *o, char **paths, int n)
{
	for (int i = 0; i < n; i++) {
		if (!*paths[i])
			return cli_usage_error("empty MEMBER name");
		if (o->export_to && strcmp(o->export_to, "-") && rk_path_same_object(o->export_to, paths[i]))
			return cli_usage_error("--export: %s is one of the members (%s)", o->export_to, paths[i]);
		if (o->write_from && strcmp(o->write_from, "-") && rk_path_same_object(o->write_from, paths[i]))
			return cli_usage_error("--write: %s is one of the members (%s)", o->write_from, paths[i]);
	}
	return CLI_GO_ON;
}

/* ---- the run ---- */

static const char *action_kind(const struct assemble_args *o)
{
	return o->export_to ? "export" : o->mount_dir ? "mount" : o->write_from ? "write" : NULL;
}

/* "exported ...", "unmounted ...", "wrote ...": the report's last line. */
static void print_action_done(FILE *f, const struct assemble_args *o, const struct action_result *res)
{
	if (o->export_to)
		rk_esc_fprintf(f, "exported %" PRIu64 " bytes from volume offset %" PRIu64 " to %s\n", res->done,
		               res->offset, strcmp(o->export_to, "-") ? o->export_to : "stdout");
	else if (o->mount_dir && res->events_after)
		rk_esc_fprintf(f, "unmounted %s: %" PRIu64 " bytes read, %" PRIu64 " written; events now %" PRIu64 "\n",
		               o->mount_dir, res->done - res->length, res->length, res->events_after);
	else if (o->mount_dir)
		rk_esc_fprintf(f, "unmounted %s: %" PRIu64 " bytes read\n", o->mount_dir, res->done);
	else
		rk_esc_fprintf(f, "wrote %" PRIu64 " bytes of %s at volume offset %" PRIu64 "; events now %" PRIu64 "\n",
		               res->done, o->write_from, res->offset, res->events_after);
}

/* The action on array AI, which can run: its exit status. */
static int run_action(const struct assembly *as, const struct rk_array_info *ai, struct action_result *res)
{
	const struct assemble_args *o = as->args;
	uint64_t size = ai->sb->volume_size;
	res->kind = action_kind(o);
	res->path = o->export_to ? o->export_to : o->mount_dir ? o->mount_dir : o->write_from;
	res->offset = o->at;
	int rc;
	if (o->at > size) {
		rc = cli_usage_error("--at: %" PRIu64 " is past the end of the %" PRIu64 "-byte volume", o->at, size);
	} else if (o->export_to) {
		res->length = o->have_len ? o->len : size - o->at;
		if (res->length > size - o->at)
			rc = cli_usage_error("--length: %" PRIu64 " bytes from %" PRIu64
			                     " go past the end of the %" PRIu64 "-byte volume", res->length, o->at, size);
		else
			rc = do_export(as, ai, res);
	} else if (o->mount_dir) {
		rc = do_mount(as, ai, res);
	} else {
		rc = do_write(as, ai, res);
	}
	if (res->ok && !o->common.json)
		print_action_done(as->report, o, res);
	return rc;
}

/* What was found and the action, if any: the exit status. */
static int assemble(const struct assembly *as, int npaths, struct action_result *res)
{
	const struct assemble_args *o = as->args;
	const struct rk_discovery *d = as->d;
	int action = action_kind(o) != NULL;
	if (!d->narrays) {
		cli_err("no array found among the %d path%s given", npaths, npaths == 1 ? "" : "s");
		return EX_FAIL;
	}
	if (o->common.have_uuid && as->pick < 0) {
		char u[37];
		uuid_unparse_lower(o->common.uuid, u);
		cli_err("--uuid: no array %s among the members given", u);
		return EX_FAIL;
	}
	if (action && as->pick < 0) {
		cli_err("several arrays: pick one with --uuid");
		return EX_USAGE;
	}
	int rc = EX_DONE;
	for (uint32_t a = 0; a < d->narrays; a++)
		if (as->pick < 0 || (uint32_t)as->pick == a) {
			int e = array_exit(d, a);
			rc = e > rc ? e : rc;
		}
	if (!action)
		return rc;
	const struct rk_array_info *ai = &d->arrays[as->pick];
	if (!ai->sb) {
		cli_err("the array has no usable superblock");
		return EX_FAIL;
	}
	if (ai->state == RK_ASTATE_FAILED || ai->state == RK_ASTATE_CONFLICT) {
		cli_err("cannot %s: %s", o->export_to ? "export" : o->mount_dir ? "mount" : "write",
		        ai->why[0] ? ai->why : "too few members");
		return EX_FAIL;
	}
	int ar = run_action(as, ai, res);
	if (ar == EX_USAGE || ar == EX_FAIL)
		return ar;
	return ar > rc ? ar : rc;
}

/* The "action" object of the JSON report. */
static void action_json(rk_json *j, const struct rk_array_info *ai, const struct action_result *res)
{
	rk_json_key(j, "action");
	rk_json_obj_begin(j);
	rk_json_kstr(j, "kind", res->kind);
	rk_json_kstr(j, "path", res->path);
	CLI_JSON_U64S(j, { "offset", res->offset }, { "length", res->length }, { "bytes", res->done });
	rk_json_kbool(j, "ok", res->ok);
	if (res->events_after)
		rk_json_ku64(j, "events_after", res->events_after);
	rk_json_key(j, "failed");
	rk_json_arr_begin(j);
	for (uint32_t i = 0; i < res->nfailed; i++) {
		int64_t r = res->failed_role[i];
		rk_json_obj_begin(j);
		rk_json_ki64(j, "role", r);
		rk_json_kstr(j, "path", ai->roles[r].path);
		rk_json_kstr(j, "reason", res->failed_why[i]);
		rk_json_obj_end(j);
	}
	rk_json_arr_end(j);
	rk_json_kstr(j, "error", res->error[0] ? res->error : NULL);
	rk_json_obj_end(j);
}

/* The JSON report: the discovery, a reshape in progress, the action and
 * the exit status RC.  EX_FAIL when out of memory, else RC. */
static int report_json(const struct assembly *as, const struct action_result *res, int rc)
{
	const struct rk_discovery *d = as->d;
	rk_json *j = rk_json_new(stdout);
	if (!j) {
		cli_err("out of memory");
		return EX_FAIL;
	}
	rk_json_obj_begin(j);
	rk_print_discovery_json_keys(j, d);
	/* mid-reshape: where it stands (the report's reshape line) */
	const struct rk_array_info *ri = as->pick >= 0 ? &d->arrays[as->pick] : d->narrays == 1 ? &d->arrays[0] : NULL;
	if (ri)
		rk_print_reshape_json_key(j, ri->sb);
	if (as->mdadm[0])
		rk_json_kstr(j, "mdadm", as->mdadm);
	if (res->kind)
		action_json(j, &d->arrays[as->pick], res);
	cli_hash_json(j);
	rk_json_ku64(j, "exit", (uint64_t)rc);
	rk_json_obj_end(j);
	rk_json_free(j);
	return rc;
}

/* --geometry FILE: the discovery the file and the images make, and in
 * MDADM the mdadm command line over the images matched (or why md cannot
 * serve it); 0 or the exit status (said). */
static int geometry_discover(const char *file, char **paths, int n, struct rk_discovery **d, char *mdadm, size_t cap)
{
	struct rk_geometry geo;
	rk_err e = rk_geometry_load(file, &geo);
	if (e) {
		cli_err("--geometry: %s", rk_errmsg());
		return e == RK_E_OPEN ? EX_USAGE : EX_FAIL;
	}
	e = rk_geometry_discover(d, &geo, paths, (uint32_t)n);
	if (e) {
		rk_geometry_free(&geo);
		cli_err("--geometry: %s", rk_errmsg());
		return EX_FAIL;
	}
	/* the line names the images given, `missing` for roles none took */
	for (uint32_t r = 0; r < geo.nroles; r++) {
		free(geo.roles[r].path);
		const char *p = (*d)->arrays[0].roles[r].path;
		geo.roles[r].path = p ? strdup(p) : NULL;
	}
	if (rk_geometry_mdadm_line(&geo, mdadm, cap))
		snprintf(mdadm, cap, "not expressible: %s", rk_errmsg());
	rk_geometry_free(&geo);
	return 0;
}

/* The "decided" of the audit line: the discovery (every array, its roles
 * and every path left out, with why). */
static void audit_decided(rk_json *j, const void *ctx)
{
	rk_print_discovery_json(j, ctx);
}

/* After the options: discovery, report, action, hashes.  The exit status. */
static int run(const struct assemble_args *o, char **paths, int nmem)
{
	int rc;
	if (nmem <= 0)
		return cli_usage_error("no MEMBER given");
	if ((rc = check_actions(o)) != CLI_GO_ON || (rc = check_members(o, paths, nmem)) != CLI_GO_ON)
		return rc;

	static struct assembly as;   /* static: the mdadm line's buffer */
	as = (struct assembly){ o, NULL, -1, stdout, "" };
	if (o->geometry && (rc = geometry_discover(o->geometry, paths, nmem, &as.d, as.mdadm, sizeof as.mdadm)))
		return rc;
	if (!o->geometry && rk_discover(&as.d, paths, (uint32_t)nmem, o->common.have_uuid ? o->common.uuid : NULL)) {
		cli_err("%s", rk_errmsg());
		return EX_FAIL;
	}
	struct rk_discovery *d = as.d;
	as.pick = rk_discovery_pick(d, o->common.have_uuid ? o->common.uuid : NULL);
	if (o->force)
		for (uint32_t a = 0; a < d->narrays; a++)
			if (as.pick < 0 || (uint32_t)as.pick == a)
				rk_discovery_force_stale(d, a, on_forced, NULL);

	/* The report in words comes first (before a long action); to stderr
	 * when stdout carries the volume. */
	if (o->export_to && !strcmp(o->export_to, "-"))
		as.report = stderr;
	if (!o->common.json) {
		rk_print_discovery_text(as.report, d);
		for (uint32_t a = 0; a < d->narrays; a++)
			if (as.pick < 0 || (uint32_t)as.pick == a)
				rk_print_reshape_text(as.report, d->arrays[a].sb, "  ");
		if (as.mdadm[0])
			rk_esc_fprintf(as.report, "  md: %s\n", as.mdadm);
		fflush(as.report);
	}
	struct action_result res;
	memset(&res, 0, sizeof res);
	rc = assemble(&as, nmem, &res);
	/* members no action read (a report reads only metadata) in full */
	if (cli_hash_finish() && rc == EX_DONE)
		rc = EX_REPORT;
	if (o->common.json)
		rc = report_json(&as, &res, rc);
	else
		cli_hash_print_text(as.report);
	cli_audit_decided(audit_decided, d);
	rk_discovery_free(d);
	if (fflush(stdout) || ferror(stdout)) {
		if (errno != EPIPE)
			cli_err("stdout: write failed: %s", strerror(errno));
		return EX_FAIL;
	}
	return rc;
}

int main(int argc, char **argv)
{
	cli_init(argv[0]);
	cli_test_hooks_install();
	static const struct option lo[] = {
		{ "force", no_argument, NULL, O_FORCE },
		{ "export", required_argument, NULL, O_EXPORT },
		{ "at", required_argument, NULL, O_AT },
		{ "length", required_argument, NULL, O_LENGTH },
		{ "write", required_argument, NULL, O_WRITE },
		{ "mount", required_argument, NULL, O_MOUNT },
		{ "rw", no_argument, NULL, O_RW },
		{ "geometry", required_argument, NULL, O_GEOMETRY },
		CLI_OPTION_JSON, CLI_OPTION_UUID, CLI_OPTION_DISK_SERIAL, CLI_OPTION_PROGRESS, CLI_OPTION_HASH,
		CLI_OPTION_AUDIT, CLI_OPTION_HELP, CLI_OPTION_VERSION, CLI_OPTION_END,
	};
	struct assemble_args o;
	memset(&o, 0, sizeof o);
	const struct cli_command cmd = { "", lo, usage, on_option, &o, &o.common };
	int rc = cli_parse_options(argc, argv, &cmd);
	if (rc != CLI_GO_ON)
		return rc;
	int nmem = argc - optind;
	char **paths = argv + optind;
	return cli_audit_end(run(&o, paths, nmem));
}
