/* mount.c: raid-assemble --mount (cli_mount.h): the volume as DIR/volume
 * over FUSE.  A thin adapter: every request becomes one rk_array call. */
#define FUSE_USE_VERSION 35
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cli_mount.h"

#define VOLUME_NAME "volume"
#define VOLUME_PATH "/" VOLUME_NAME

/* The one mount this process serves (fuse's callbacks take no context of
 * ours but fuse_get_context()->private_data; this is simpler and a tool
 * serves one mount at a time). */
static struct {
	rk_array *a;
	uint64_t size;
	int rw;
	time_t t0;
	struct cli_mount_stats *st;
	void (*ready)(void *ctx);
	void *ctx;
} M;

int cli_mount_available(char *why, size_t whylen)
{
	int fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		if (why && whylen)
			snprintf(why, whylen, "/dev/fuse: %s", strerror(errno));
		return 0;
	}
	close(fd);
	return 1;
}

static void *m_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	(void)conn;
	/* Sizes and contents change only through us: let the kernel cache
	 * attributes briefly, but never keep file pages across opens (another
	 * reader of the members cannot be seen otherwise). */
	cfg->kernel_cache = 0;
	cfg->direct_io = 0;
	cfg->attr_timeout = 1.0;
	cfg->entry_timeout = 1.0;
	if (M.ready)
		M.ready(M.ctx);
	return NULL;
}

static void fill_times(struct stat *s)
{
	s->st_atim.tv_sec = s->st_mtim.tv_sec = s->st_ctim.tv_sec = M.t0;
	s->st_uid = getuid();
	s->st_gid = getgid();
}

static int m_getattr(const char *path, struct stat *s, struct fuse_file_info *fi)
{
	(void)fi;
	memset(s, 0, sizeof *s);
	if (!strcmp(path, "/")) {
		s->st_mode = S_IFDIR | (M.rw ? 0755 : 0555);
		s->st_nlink = 2;
	} else if (!strcmp(path, VOLUME_PATH)) {
		s->st_mode = S_IFREG | (M.rw ? 0644 : 0444);
		s->st_nlink = 1;
		s->st_size = (off_t)M.size;
		s->st_blocks = (blkcnt_t)(M.size / 512);
		s->st_blksize = 65536;
	} else {
		return -ENOENT;
	}
	fill_times(s);
	return 0;
}

static int m_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off, struct fuse_file_info *fi,
                     enum fuse_readdir_flags flags)
{
	(void)off;
	(void)fi;
	(void)flags;
	if (strcmp(path, "/"))
		return -ENOTDIR;
	fill(buf, ".", NULL, 0, 0);
	fill(buf, "..", NULL, 0, 0);
	fill(buf, VOLUME_NAME, NULL, 0, 0);
	return 0;
}

static int m_open(const char *path, struct fuse_file_info *fi)
{
	if (strcmp(path, VOLUME_PATH))
		return -ENOENT;
	if ((fi->flags & O_ACCMODE) != O_RDONLY && !M.rw)
		return -EROFS;
	return 0;
}

/* Clamps a request of *LEN bytes at OFF to the volume: 0 with *AT set, 1
 * when OFF is at or past the end, -EINVAL when negative. */
static int clamp_to_volume(off_t off, size_t *len, uint64_t *at)
{
	if (off < 0)
		return -EINVAL;
	*at = (uint64_t)off;
	if (*at >= M.size)
		return 1;
	if (*len > M.size - *at)
		*len = (size_t)(M.size - *at);   /* a short transfer: the rest is past the end */
	return 0;
}

/* A failed transfer: said on stderr, counted, answered EIO. */
static int io_error(const char *what, size_t len, uint64_t at, uint64_t *count)
{
	cli_err("%s of %zu bytes at volume offset %llu: %s", what, len, (unsigned long long)at, rk_errmsg());
	(*count)++;
	return -EIO;
}

static int m_read(const char *path, char *buf, size_t len, off_t off, struct fuse_file_info *fi)
{
	(void)path;
	(void)fi;
	uint64_t at;
	int r = clamp_to_volume(off, &len, &at);
	if (r)
		return r > 0 ? 0 : r;
	if (rk_array_read(M.a, buf, len, at))
		return io_error("read", len, at, &M.st->read_errors);
	M.st->bytes_read += len;
	return (int)len;
}

static int m_write(const char *path, const char *buf, size_t len, off_t off, struct fuse_file_info *fi)
{
	(void)path;
	(void)fi;
	if (!M.rw)
		return -EROFS;
	uint64_t at;
	int r = clamp_to_volume(off, &len, &at);
	if (r)
		return r > 0 ? (len ? -ENOSPC : 0) : r;
	if (rk_array_write(M.a, buf, len, at))
		return io_error("write", len, at, &M.st->write_errors);
	M.st->bytes_written += len;
	return (int)len;
}

static int do_flush(void)
{
	if (!M.rw)
		return 0;
	if (rk_array_flush(M.a)) {
		cli_err("flush: %s", rk_errmsg());
		M.st->write_errors++;
		return -EIO;
	}
	M.st->flushes++;
	return 0;
}

static int m_flush(const char *path, struct fuse_file_info *fi)
{
	(void)path;
	(void)fi;
	return do_flush();
}

static int m_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
	(void)path;
	(void)datasync;
	(void)fi;
	return do_flush();
}

/* The volume's size is the array's: a truncate to any other size (O_TRUNC,
 * a stray "> volume") is refused rather than ignored. */
static int m_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
	(void)fi;
	if (strcmp(path, VOLUME_PATH))
		return -ENOENT;
	if (!M.rw)
		return -EROFS;
	return size >= 0 && (uint64_t)size == M.size ? 0 : -EPERM;
}

static int m_utimens(const char *path, const struct timespec tv[2], struct fuse_file_info *fi)
{
	(void)tv;
	(void)fi;
	return strcmp(path, "/") && strcmp(path, VOLUME_PATH) ? -ENOENT : 0;
}

static int m_statfs(const char *path, struct statvfs *s)
{
	(void)path;
	memset(s, 0, sizeof *s);
	s->f_bsize = s->f_frsize = 4096;
	s->f_blocks = (fsblkcnt_t)((M.size + 4095) / 4096);
	s->f_files = 2;
	s->f_namemax = 255;
	return 0;
}

static const struct fuse_operations ops = {
	.init = m_init,
	.getattr = m_getattr,
	.readdir = m_readdir,
	.open = m_open,
	.read = m_read,
	.write = m_write,
	.flush = m_flush,
	.fsync = m_fsync,
	.truncate = m_truncate,
	.utimens = m_utimens,
	.statfs = m_statfs,
};

int cli_mount_serve(rk_array *a, const char *dir, int rw, const char *fsname, void (*ready)(void *ctx),
                    void *ctx, struct cli_mount_stats *st)
{
	static struct cli_mount_stats dummy;
	memset(&M, 0, sizeof M);
	M.a = a;
	M.size = rk_array_size(a);
	M.rw = rw;
	M.t0 = time(NULL);
	M.st = st ? st : &dummy;
	M.ready = ready;
	M.ctx = ctx;
	memset(M.st, 0, sizeof *M.st);

	/* fsname is user-visible in /proc/mounts; commas would split the
	 * option string, so they never come from outside. */
	char opt[256];
	if (strchr(fsname, ',') || strchr(fsname, '\\')) {
		cli_err("--mount: bad file system name '%s'", fsname);
		return -1;
	}
	snprintf(opt, sizeof opt, "fsname=%s,subtype=raidkit,default_permissions%s", fsname, rw ? "" : ",ro");
	char a0[] = "raidkit", a1[] = "-o";
	char *argv0[] = { a0, a1, opt, NULL };
	struct fuse_args args = FUSE_ARGS_INIT(3, argv0);
	struct fuse *f = fuse_new(&args, &ops, sizeof ops, NULL);
	fuse_opt_free_args(&args);
	if (!f) {
		cli_err("--mount %s: FUSE set-up failed", dir);
		return -1;
	}
	if (fuse_mount(f, dir)) {
		cli_err("--mount %s: cannot mount (is it an empty directory, and is FUSE usable here?)", dir);
		fuse_destroy(f);
		return -1;
	}
	struct fuse_session *se = fuse_get_session(f);
	int sig = fuse_set_signal_handlers(se);
	int r = fuse_loop(f);   /* until unmounted, or a signal (then r is its number) */
	if (!sig)
		fuse_remove_signal_handlers(se);
	fuse_unmount(f);
	fuse_destroy(f);
	int fr = do_flush();
	if (r < 0) {
		cli_err("--mount %s: serving stopped: %s", dir, strerror(-r));
		return -1;
	}
	return fr ? -1 : 0;
}
