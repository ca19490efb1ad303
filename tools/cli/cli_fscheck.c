/* cli_fscheck.c: the file systems on a recovered volume, identified by
 * libblkid and checked read-only by their own tools (cli_fscheck.h). */
#include <blkid/blkid.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "cli.h"
#include "cli_fscheck.h"
#include "rk_part.h"
#include "rk_util.h"

extern char **environ;

static const struct { const char *type, *tool, *args; } checkers[] = {
	{ "ext2", "e2fsck", "-fn" }, { "ext3", "e2fsck", "-fn" }, { "ext4", "e2fsck", "-fn" },
	{ "vfat", "fsck.vfat", "-n" }, { "ntfs", "ntfsfix", "-n" }, { "xfs", "xfs_repair", "-n -f" },
	{ "btrfs", "btrfs", "check --readonly" }, { "exfat", "fsck.exfat", "-n" },
};

static int have_cmd(const char *name)
{
	char cmd[128];
	snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", name);
	return system(cmd) == 0;
}

/* Seconds the read-only check of SIZE bytes may take: a checker can loop
 * on a file system a wrong geometry put together (seed 1071: fsck.vfat ran
 * for hours).  A minute plus a second per 64 MiB, else
 * RAIDKIT_CHECK_TIMEOUT (seconds; 0: no limit). */
static unsigned check_limit(uint64_t size)
{
	const char *e = getenv("RAIDKIT_CHECK_TIMEOUT");
	char *end;
	if (e && *e) {
		unsigned long v = strtoul(e, &end, 10);
		if (!*end && v <= 86400u * 30)
			return (unsigned)v;
	}
	uint64_t s = 60 + size / (64u << 20);
	return s > 86400u * 30 ? 86400u * 30 : (unsigned)s;
}

/* Runs TOOL with the words of ARGS and PATH (standard streams on
 * /dev/null) in a process group of its own, for at most LIMIT seconds
 * (0: no limit): its exit status, -1 when it could not be run or died of
 * a signal, -2 when time ran out (the group is killed). */
static int run_check(const char *tool, const char *args, const char *path, unsigned limit)
{
	char words[64], *argv[8];
	int argc = 0;
	snprintf(words, sizeof words, "%s", args);
	argv[argc++] = (char *)(uintptr_t)tool;
	for (char *t = strtok(words, " "); t && argc < 6; t = strtok(NULL, " "))
		argv[argc++] = t;
	argv[argc++] = (char *)(uintptr_t)path;
	argv[argc] = NULL;
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	posix_spawn_file_actions_init(&fa);
	for (int fd = 0; fd < 3; fd++)
		posix_spawn_file_actions_addopen(&fa, fd, "/dev/null", fd ? O_WRONLY : O_RDONLY, 0);
	posix_spawnattr_init(&at);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP);
	posix_spawnattr_setpgroup(&at, 0);
	pid_t pid;
	int rc = posix_spawnp(&pid, tool, &fa, &at, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	if (rc)
		return -1;
	struct timespec t0, now, nap = { 0, 20 * 1000 * 1000 };
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		int st;
		pid_t w = waitpid(pid, &st, WNOHANG);
		if (w == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
		if (w < 0 && errno != EINTR)
			return -1;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (limit && now.tv_sec - t0.tv_sec >= (time_t)limit) {
			kill(-pid, SIGKILL);
			while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
				;
			return -2;
		}
		nanosleep(&nap, NULL);
	}
}

/* libblkid's file-system TYPE of the file PATH into FC->type ("" none). */
static void identify(const char *path, struct fs_check *fc)
{
	blkid_probe pr = blkid_new_probe_from_filename(path);
	const char *t = NULL;
	if (pr && blkid_do_safeprobe(pr) == 0 && blkid_probe_lookup_value(pr, "TYPE", &t, NULL) == 0 && t)
		snprintf(fc->type, sizeof fc->type, "%s", t);
	if (pr)
		blkid_free_probe(pr);
}

/* FC's region, whose bytes (all of them when WHOLE) are the file PATH:
 * identified, then checked by its file system's checker. */
static void identify_and_check(const char *path, int whole, struct fs_check *fc)
{
	identify(path, fc);
	if (!fc->type[0]) {
		snprintf(fc->result, sizeof fc->result, "no file system recognised");
		return;
	}
	if (!whole) {
		snprintf(fc->result, sizeof fc->result, "not checked: only its first %llu MiB were copied",
		         (unsigned long long)(FSC_HEAD >> 20));
		return;
	}
	for (size_t k = 0; k < sizeof checkers / sizeof checkers[0]; k++) {
		if (strcmp(checkers[k].type, fc->type))
			continue;
		snprintf(fc->tool, sizeof fc->tool, "%s %s", checkers[k].tool, checkers[k].args);
		if (!have_cmd(checkers[k].tool)) {
			snprintf(fc->result, sizeof fc->result, "not checked: %s is not installed", checkers[k].tool);
			return;
		}
		unsigned limit = check_limit(fc->size);
		int rc = run_check(checkers[k].tool, checkers[k].args, path, limit);
		if (rc == -2) {
			fc->stopped = 1;
			snprintf(fc->result, sizeof fc->result, "not finished in %u s: stopped", limit);
			return;
		}
		fc->ran = 1;
		fc->status = rc;
		snprintf(fc->result, sizeof fc->result, rc == 0 ? "clean" : "reported problems (exit %d)", rc);
		return;
	}
	snprintf(fc->result, sizeof fc->result, "not checked: no read-only checker known for %s", fc->type);
}

/* LEN bytes of the file FROM at OFF copied to the start of TO (holes for
 * zero pieces): 0, or -1 with errno set. */
static int copy_file_part(int from, uint64_t off, uint64_t len, int to)
{
	enum { PIECE = 1 << 20 };
	uint8_t *b = malloc(PIECE);
	int rc = b ? 0 : -1;
	for (uint64_t done = 0; !rc && done < len;) {
		size_t n = len - done < PIECE ? (size_t)(len - done) : PIECE;
		ssize_t r = pread(from, b, n, (off_t)(off + done));
		if (r <= 0) {
			if (!r)
				errno = EIO;   /* shorter than the volume it holds */
			rc = -1;
		} else if (rk_buf_is_zero(b, (size_t)r) ? lseek(to, r, SEEK_CUR) < 0 : write(to, b, (size_t)r) != r)
			rc = -1;
		else
			done += (uint64_t)r;
	}
	free(b);
	return rc || ftruncate(to, (off_t)len) ? -1 : 0;
}

/* Partition FC (offset, size set) copied to a temporary file and looked at
 * there: from the volume file PATH when it holds the partition whole (WHOLE:
 * every byte of the volume; the members are not read again), else from
 * ARR. */
static void check_partition(rk_array *arr, const char *path, int whole, struct fs_check *fc)
{
	char tmp[4096], why[256];
	int fd = cli_tmpfile(tmp, sizeof tmp, "raid-recover-part");
	if (fd < 0) {
		snprintf(fc->result, sizeof fc->result, "not checked: no temporary file: %s", strerror(errno));
		return;
	}
	int all = fc->size <= FSC_WHOLE_MAX;
	uint64_t done, len = all ? fc->size : FSC_HEAD;
	if (whole) {
		int from = open(path, O_RDONLY | O_CLOEXEC);
		if (from < 0 || copy_file_part(from, fc->offset, len, fd))
			snprintf(fc->result, sizeof fc->result, "not checked: copying it from %.40s: %s", path, strerror(errno));
		if (from >= 0)
			close(from);
	} else if (cli_copy_volume(arr, fc->offset, len, fd, 1, 0, NULL, &done, why, sizeof why))
		snprintf(fc->result, sizeof fc->result, "not checked: %.80s", why);
	close(fd);
	if (!fc->result[0])
		identify_and_check(tmp, all, fc);
	unlink(tmp);
}

/* See cli_fscheck.h. */
void fsc_volume(rk_array *arr, const char *path, int whole, struct fs_checks *out)
{
	memset(out, 0, sizeof *out);
	struct fs_check *v = &out->c[0];
	uint64_t vs = rk_array_size(arr);
	v->size = vs;
	out->n = 1;
	identify(path, v);
	struct rk_part_table t = { 0 };
	if (v->type[0] || rk_part_table_read(path, &t) || !t.n) {
		rk_part_table_free(&t);
		identify_and_check(path, whole, v);
		return;
	}
	snprintf(out->table, sizeof out->table, "%s", t.type);
	out->n = 0;
	for (uint32_t k = 0; k < t.n && out->n < FSC_MAX; k++) {
		const struct rk_part *p = &t.parts[k];
		if (!p->size || p->start >= vs || p->size > vs - p->start)
			continue;   /* not inside the volume: a table the geometry misread */
		struct fs_check *fc = &out->c[out->n++];
		fc->partition = p->number;
		fc->offset = p->start;
		fc->size = p->size;
		check_partition(arr, path, whole, fc);
	}
	rk_part_table_free(&t);
	if (!out->n) {   /* a table and no partition inside the volume: the volume as it is */
		out->n = 1;
		out->table[0] = 0;
		identify_and_check(path, whole, v);
	}
}

/* See cli_fscheck.h. */
int fsc_any_problem(const struct fs_checks *f)
{
	for (uint32_t k = 0; k < f->n; k++)
		if ((f->c[k].ran && f->c[k].status) || f->c[k].stopped)
			return 1;
	return 0;
}

/* See cli_fscheck.h. */
uint32_t fsc_all_failed(const struct fs_checks *f)
{
	uint32_t failed = 0;
	for (uint32_t k = 0; k < f->n; k++) {
		if (f->c[k].ran && !f->c[k].status)
			return 0;
		failed += f->c[k].stopped || f->c[k].ran;
	}
	return failed;
}
