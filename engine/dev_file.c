/* dev_file.c: regular files and block devices.
 *
 * Read-only by default (forensic images stay intact).  Writers are
 * exclusive: O_EXCL on block devices (fails while mounted or claimed by md or
 * another O_EXCL opener), flock(LOCK_EX|LOCK_NB) on image files. */
#include "rk_dev.h"
#include "dev_image.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <linux/fs.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <stdio.h>
#include <unistd.h>

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22   /* Linux 5.14; older kernels refuse it (EINVAL), which is harmless */
#endif
/* cachestat(2), Linux 6.5: the generic syscall number (every architecture
 * but alpha); the headers of older systems lack it. */
#if !defined(__NR_cachestat) && !defined(__alpha__)
#define __NR_cachestat 451
#endif

struct file_priv {
	int fd;
	/* Read-only mapping of a regular file for rk_dev_peek, made on first
	 * use; mapped == MAP_FAILED once mapping was tried and failed. */
	pthread_mutex_t mu;
	uint8_t *mapped;
	size_t maplen;
	/* Bytes one POSIX_FADV_WILLNEED reads at most (the kernel reads the
	 * first max(io_pages, ra_pages) pages of the range and drops the
	 * rest); 0: the call does nothing here (tmpfs), so it is not made. */
	uint64_t willneed_max;
};

static int fd_of(rk_dev *d)
{
	return ((struct file_priv *)rk_dev_priv(d))->fd;
}

/* pread or pwrite of the whole range, looping over short transfers. */
static rk_err file_transfer(rk_dev *d, uint8_t *p, size_t len, uint64_t off, int is_write)
{
	int fd = fd_of(d);
	const char *what = is_write ? "write" : "read";

	while (len > 0) {
		/* Bounded chunks keep each syscall's count within ssize_t. */
		size_t n = len > (1u << 30) ? (1u << 30) : len;
		ssize_t r = is_write ? pwrite(fd, p, n, (off_t)off) : pread(fd, p, n, (off_t)off);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return rk_fail(RK_E_IO, "%s: %s error at offset %llu: %s",
			               rk_dev_path(d), what, (unsigned long long)off, strerror(errno));
		}
		if (r == 0 && is_write)
			return rk_fail(RK_E_IO, "%s: write error at offset %llu: no progress",
			               rk_dev_path(d), (unsigned long long)off);
		if (r == 0)
			return rk_fail(RK_E_RANGE, "%s: unexpected end of data at offset %llu (device shrank?)",
			               rk_dev_path(d), (unsigned long long)off);
		p += r;
		len -= (size_t)r;
		off += (uint64_t)r;
	}
	return RK_OK;
}

static rk_err file_pread(rk_dev *d, void *buf, size_t len, uint64_t off)
{
	return file_transfer(d, buf, len, off, 0);
}

static rk_err file_pwrite(rk_dev *d, const void *buf, size_t len, uint64_t off)
{
	return file_transfer(d, (uint8_t *)(uintptr_t)buf, len, off, 1);
}

static rk_err file_flush(rk_dev *d)
{
	while (fdatasync(fd_of(d)) != 0) {
		if (errno == EINTR)
			continue;
		return rk_fail(RK_E_IO, "%s: flush failed: %s", rk_dev_path(d), strerror(errno));
	}
	return RK_OK;
}

static void file_close(rk_dev *d)
{
	struct file_priv *fp = rk_dev_priv(d);
	if (!fp)
		return;
	if (fp->mapped && fp->mapped != MAP_FAILED)
		munmap(fp->mapped, fp->maplen);
	pthread_mutex_destroy(&fp->mu);
	if (fp->fd >= 0)
		close(fp->fd);	/* also drops the flock */
	free(fp);
}

/* The read-only mapping of the whole file behind rk_dev_peek, made on
 * first use; NULL when it cannot be made. */
static uint8_t *file_map(rk_dev *d)
{
	struct file_priv *fp = rk_dev_priv(d);
	uint64_t size = rk_dev_size(d);
	if (size > SIZE_MAX)
		return NULL;
	pthread_mutex_lock(&fp->mu);
	if (!fp->mapped) {
		void *m = mmap(NULL, (size_t)size, PROT_READ, MAP_SHARED, fp->fd, 0);
		fp->mapped = m == MAP_FAILED ? MAP_FAILED : m;
		fp->maplen = (size_t)size;
	}
	uint8_t *base = fp->mapped;
	pthread_mutex_unlock(&fp->mu);
	return base == MAP_FAILED ? NULL : base;
}

struct rk_cachestat_range { uint64_t off, len; };
struct rk_cachestat { uint64_t nr_cache, nr_dirty, nr_writeback, nr_evicted, nr_recently_evicted; };
static int no_cachestat;   /* the kernel lacks it: mincore from then on */

/* Whether every page of [a0, a1) (page-aligned, inside the mapping at
 * BASE) is in the page cache.  cachestat walks the cache a folio at a
 * time; mincore looks every page up (several times slower on large files). */
static int resident(struct file_priv *fp, const uint8_t *base, uint64_t a0, uint64_t a1)
{
	const uint64_t pg = 4096;
#ifdef __NR_cachestat
	if (!__atomic_load_n(&no_cachestat, __ATOMIC_RELAXED)) {
		struct rk_cachestat_range r = { a0, a1 - a0 };
		struct rk_cachestat cs;
		if (syscall(__NR_cachestat, fp->fd, &r, &cs, 0) == 0)
			return cs.nr_cache >= (a1 - a0) / pg;
		if (errno == ENOSYS)
			__atomic_store_n(&no_cachestat, 1, __ATOMIC_RELAXED);
	}
#endif
	unsigned char small[256], *vec = small;
	size_t n = (size_t)((a1 - a0 + pg - 1) / pg);
	if (n > sizeof small && !(vec = malloc(n)))
		return 0;
	int ok = mincore((void *)(uintptr_t)(base + a0), (size_t)(a1 - a0), vec) == 0;
	for (size_t i = 0; ok && i < n; i++)
		ok = vec[i] & 1;
	if (vec != small)
		free(vec);
	return ok;
}

/* [off, off+len) widened to whole pages (within the mapping). */
static void page_span(const struct file_priv *fp, uint64_t off, uint64_t len, uint64_t *a0, uint64_t *a1)
{
	const uint64_t pg = 4096;
	*a0 = off / pg * pg;
	*a1 = (off + len + pg - 1) / pg * pg;
	if (*a1 > fp->maplen)
		*a1 = fp->maplen;
}

/* Serves [off, off+len) from a read-only mapping of the open file when every
 * page is resident, so page-cache data is checked in place instead of
 * copied: on 2 cores the copy alone would cap a scrub below the rate of
 * reading the files.  Only resident pages are touched, so no disk I/O (or
 * I/O error) ever happens through the mapping. */
static int file_peek(rk_dev *d, uint64_t off, uint64_t len, const uint8_t **ptr)
{
	struct file_priv *fp = rk_dev_priv(d);
	uint8_t *base = file_map(d);
	if (!base)
		return 0;
	uint64_t a0, a1;
	page_span(fp, off, len, &a0, &a1);
	if (!resident(fp, base, a0, a1))
		return 0;
	*ptr = base + off;
	return 1;
}

/* POSIX_FADV_WILLNEED over [off, off+len) (within the device), in pieces
 * the kernel reads whole: one call over a longer range reads only its
 * first willneed_max bytes (measured: 1280 KiB of 8 MiB on a loop device). */
static void willneed(rk_dev *d, uint64_t off, uint64_t len)
{
	const struct file_priv *fp = rk_dev_priv(d);
	uint64_t piece = fp->willneed_max, size = rk_dev_size(d);
	if (!piece || off >= size)
		return;
	uint64_t end = len > size - off ? size : off + len;
	for (uint64_t p = off; p < end; p += piece)
		(void)posix_fadvise(fp->fd, (off_t)p, (off_t)(end - p < piece ? end - p : piece), POSIX_FADV_WILLNEED);
}

static void file_advise(rk_dev *d, uint64_t off, uint64_t len, unsigned adv)
{
	struct file_priv *fp = rk_dev_priv(d);
	int blk = rk_dev_is_blockdev(d);
	/* advice only: a failure changes nothing, so results are not looked at */
	if (adv & RK_DEV_ADV_SEQUENTIAL)
		(void)posix_fadvise(fp->fd, (off_t)off, (off_t)len, POSIX_FADV_SEQUENTIAL);
	if (adv & RK_DEV_ADV_READAHEAD)
		willneed(d, off, len);
	if (blk) {
		if (adv & RK_DEV_ADV_WILLNEED)
			willneed(d, off, len);
		/* the kernel drops a block device's page cache at its last
		 * close, about 20 ms per 256 MiB at the end of a run; dropped
		 * behind the reads it costs the same while the disks are busy */
		if (adv & RK_DEV_ADV_DONTNEED)
			(void)posix_fadvise(fp->fd, (off_t)off, (off_t)len, POSIX_FADV_DONTNEED);
		return;   /* no peek mapping of block devices */
	}
	uint8_t *base = (adv & RK_DEV_ADV_WILLNEED) ? file_map(d) : NULL;
	if (!base) {
		pthread_mutex_lock(&fp->mu);
		base = fp->mapped && fp->mapped != MAP_FAILED ? fp->mapped : NULL;
		pthread_mutex_unlock(&fp->mu);
	}
	uint64_t a0 = 0, a1 = 0;
	if (base)
		page_span(fp, off, len, &a0, &a1);
	if (adv & RK_DEV_ADV_WILLNEED) {
		/* resident: page tables in one call (cheaper than a fault per 16
		 * pages); else let readahead fetch it */
		if (base && a1 > a0 && resident(fp, base, a0, a1))
			(void)madvise(base + a0, (size_t)(a1 - a0), MADV_POPULATE_READ);
		else
			willneed(d, off, len);
	}
	if (base && a1 > a0 && (adv & RK_DEV_ADV_SEQUENTIAL))
		(void)madvise(base + a0, (size_t)(a1 - a0), MADV_SEQUENTIAL);
	if (base && a1 > a0 && (adv & RK_DEV_ADV_DONTNEED))
		(void)madvise(base + a0, (size_t)(a1 - a0), MADV_DONTNEED);
}

static const struct rk_dev_ops file_ops = {
	.name = "file", .pread = file_pread, .pwrite = file_pwrite,
	.flush = file_flush, .close = file_close, .peek = file_peek, .advise = file_advise,
};
static const struct rk_dev_ops blk_ops = {
	.name = "blockdev", .pread = file_pread, .pwrite = file_pwrite,
	.flush = file_flush, .close = file_close, .advise = file_advise,
};

/* A queue limit in KiB of block device DEV (a partition: of its disk) from
 * sysfs; 0 when it cannot be read. */
static uint64_t queue_kib(dev_t dev, const char *limit)
{
	char path[96];
	for (int up = 0; up < 2; up++) {
		snprintf(path, sizeof path, "/sys/dev/block/%u:%u/%squeue/%s", major(dev), minor(dev),
		         up ? "../" : "", limit);
		FILE *f = fopen(path, "re");
		if (!f)
			continue;
		unsigned long long v = 0;
		int ok = fscanf(f, "%llu", &v) == 1;
		fclose(f);
		if (ok)
			return v;
	}
	return 0;
}

#define WILLNEED_UNKNOWN (128u << 10)   /* no queue to ask: the kernel's default readahead */

/* What one POSIX_FADV_WILLNEED reads at most on ST's file or device: the
 * larger of the queue's readahead and request size (the kernel's cap);
 * 0 on tmpfs, which reads nothing ahead. */
static uint64_t willneed_limit(int fd, const struct stat *st)
{
	struct statfs fs;
	if (S_ISREG(st->st_mode) && fstatfs(fd, &fs) == 0 && fs.f_type == 0x01021994 /* TMPFS_MAGIC */)
		return 0;
	dev_t dev = S_ISBLK(st->st_mode) ? st->st_rdev : st->st_dev;
	uint64_t ra = major(dev) ? queue_kib(dev, "read_ahead_kb") : 0;
	uint64_t io = major(dev) ? queue_kib(dev, "max_sectors_kb") : 0;
	uint64_t kib = ra > io ? ra : io;
	if (kib > (1u << 20))
		kib = 1u << 20;   /* 1 GiB: more is not a real queue */
	if (!kib)
		return WILLNEED_UNKNOWN;
	return kib < 4 ? 4096 : kib * 1024;
}

/* Wraps an open fd (ownership taken) after checking what it is. */
static rk_err wrap_fd(rk_dev **out, int fd, const char *path, int writable)
{
	struct stat st;
	struct file_priv *fp;
	uint64_t size;
	uint32_t sector = 512;
	rk_err e;

	if (fstat(fd, &st) != 0) {
		int err = errno;
		close(fd);
		return rk_fail(RK_E_OPEN, "%s: cannot stat: %s", path, strerror(err));
	}
	if (S_ISBLK(st.st_mode)) {
		int ssz = 0;
		if (ioctl(fd, BLKGETSIZE64, &size) != 0) {
			int err = errno;
			close(fd);
			return rk_fail(RK_E_OPEN, "%s: cannot read the block device size: %s", path, strerror(err));
		}
		if (ioctl(fd, BLKSSZGET, &ssz) != 0) {
			int err = errno;
			close(fd);
			return rk_fail(RK_E_OPEN, "%s: cannot read the logical sector size: %s", path, strerror(err));
		}
		if (ssz < 512 || ssz > 65536 || (ssz & (ssz - 1))) {
			close(fd);
			return rk_fail(RK_E_OPEN, "%s: unusable logical sector size %d", path, ssz);
		}
		sector = (uint32_t)ssz;
	} else if (S_ISREG(st.st_mode)) {
		if (st.st_size < 0) {
			close(fd);
			return rk_fail(RK_E_OPEN, "%s: negative file size", path);
		}
		size = (uint64_t)st.st_size;
	} else {
		close(fd);
		return rk_fail(RK_E_OPEN, "%s: not a regular file or block device", path);
	}
	if (size > (uint64_t)INT64_MAX) {
		close(fd);
		return rk_fail(RK_E_RANGE, "%s: size %llu too large", path, (unsigned long long)size);
	}

	fp = calloc(1, sizeof *fp);
	if (!fp) {
		close(fd);
		return rk_fail(RK_E_NOMEM, "%s: out of memory", path);
	}
	fp->fd = fd;
	fp->willneed_max = willneed_limit(fd, &st);
	pthread_mutex_init(&fp->mu, NULL);
	e = rk_dev_new(out, S_ISBLK(st.st_mode) ? &blk_ops : &file_ops, fp, path, size, sector, writable);
	if (e)
		return e;	/* fp and fd were freed by file_close */
	if (S_ISBLK(st.st_mode))
		rk_dev_set_identity(*out, st.st_rdev, 0, 1);
	else
		rk_dev_set_identity(*out, st.st_dev, st.st_ino, 0);
	return RK_OK;
}

/* An exclusive non-blocking flock for a writer of an image file. */
static rk_err lock_file(int fd, const char *path)
{
	while (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		if (errno == EINTR)
			continue;
		if (errno == EWOULDBLOCK)
			return rk_fail(RK_E_BUSY, "%s: in use: locked by another writer", path);
		return rk_fail(RK_E_BUSY, "%s: cannot lock: %s", path, strerror(errno));
	}
	return RK_OK;
}

rk_err rk_dev_open_file(rk_dev **out, const char *path, unsigned flags)
{
	struct stat st;
	int oflags, fd, rdwr = (flags & RK_DEV_RDWR) != 0, isblk = 0;
	rk_err e;

	if (out)
		*out = NULL;
	if (!out || !path || !*path)
		return rk_fail(RK_E_INVAL, "no device path given");
	if (flags & ~(RK_DEV_RDWR | RK_DEV_CREATE | RK_DEV_DIRECT))
		return rk_fail(RK_E_INVAL, "%s: unknown open flags 0x%x", path, flags);
	if ((flags & RK_DEV_CREATE) && !rdwr)
		return rk_fail(RK_E_INVAL, "%s: creating a file needs read-write access", path);

	/* O_EXCL means "exclusive claim" only for block devices, so look first;
	 * the fstat after open re-checks what was actually opened. */
	if (stat(path, &st) == 0) {
		isblk = S_ISBLK(st.st_mode);
		if (!isblk && !S_ISREG(st.st_mode))
			return rk_fail(RK_E_OPEN, "%s: not a regular file or block device", path);
	} else if (errno != ENOENT || !(flags & RK_DEV_CREATE)) {
		return rk_fail(RK_E_OPEN, "%s: cannot open: %s", path, strerror(errno));
	}

	/* O_NONBLOCK: a FIFO swapped in after the stat must not hang the open. */
	oflags = (rdwr ? O_RDWR : O_RDONLY) | O_CLOEXEC | O_NOCTTY | O_NONBLOCK;
	if (rdwr && isblk)
		oflags |= O_EXCL;
	if (flags & RK_DEV_CREATE)
		oflags |= O_CREAT;
	if (flags & RK_DEV_DIRECT)
		oflags |= O_DIRECT;
	fd = open(path, oflags, 0644);
	if (fd < 0 && errno == EINVAL && (flags & RK_DEV_DIRECT))
		fd = open(path, oflags & ~O_DIRECT, 0644);	/* file system without O_DIRECT */
	if (fd < 0) {
		if (errno == EBUSY)
			return rk_fail(RK_E_BUSY, "%s: in use (mounted, part of an array or opened exclusively)", path);
		return rk_fail(RK_E_OPEN, "%s: cannot open: %s", path, strerror(errno));
	}
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0) {
		int err = errno;
		close(fd);
		return rk_fail(RK_E_OPEN, "%s: cannot open: %s", path, strerror(err));
	}
	if (fstat(fd, &st) != 0) {
		int err = errno;
		close(fd);
		return rk_fail(RK_E_OPEN, "%s: cannot stat: %s", path, strerror(err));
	}
	if (rdwr && S_ISREG(st.st_mode) && (e = lock_file(fd, path))) {
		close(fd);
		return e;
	}
	if (rdwr && S_ISBLK(st.st_mode) && !isblk) {
		/* Became a block device between stat and open: not claimed exclusively. */
		close(fd);
		return rk_fail(RK_E_BUSY, "%s: changed while being opened", path);
	}
	return wrap_fd(out, fd, path, rdwr);
}

rk_err rk_dev_create(rk_dev **out, const char *path, uint64_t size)
{
	int fd;
	rk_err e;

	if (out)
		*out = NULL;
	if (!out || !path || !*path)
		return rk_fail(RK_E_INVAL, "no device path given");
	if (size > (uint64_t)INT64_MAX)
		return rk_fail(RK_E_RANGE, "%s: size %llu too large", path, (unsigned long long)size);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY, 0644);
	if (fd < 0) {
		if (errno == EEXIST)
			return rk_fail(RK_E_EXISTS, "%s: cannot create: %s", path, strerror(errno));
		return rk_fail(RK_E_OPEN, "%s: cannot create: %s", path, strerror(errno));
	}
	if ((e = lock_file(fd, path)))
		goto undo;
	while (ftruncate(fd, (off_t)size) != 0) {
		if (errno == EINTR)
			continue;
		e = rk_fail(RK_E_IO, "%s: cannot set size to %llu: %s", path,
		            (unsigned long long)size, strerror(errno));
		goto undo;
	}
	return wrap_fd(out, fd, path, 1);
undo:
	/* We made the file: do not leave a half-made one behind. */
	unlink(path);
	close(fd);
	return e;
}
