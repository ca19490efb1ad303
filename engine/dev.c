/* dev.c: the generic device wrapper.  Every request is checked here (bounds
 * without overflow, read-only enforcement) so backends only ever see
 * in-range, non-empty requests. */
#include "rk_dev.h"
#include "dev_image.h"
#include "rk_le.h"
#include "rk_util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct rk_dev {
	const struct rk_dev_ops *ops;
	void     *priv;
	char     *path;
	uint64_t  size;
	uint32_t  sector;
	int       writable;
	int       blockdev;
	int       have_id;
	dev_t     devno;
	ino_t     ino;
};

rk_err rk_dev_new(rk_dev **out, const struct rk_dev_ops *ops, void *priv,
                  const char *path, uint64_t size, uint32_t sector, int writable)
{
	rk_err e;
	rk_dev *d = NULL;

	if (out)
		*out = NULL;
	if (!out || !ops || !ops->pread || !ops->pwrite || !ops->close || !ops->name) {
		e = rk_fail(RK_E_INVAL, "%s: device backend lacks an operation", path ? path : "(device)");
		goto fail;
	}
	/* Sector sizes are powers of two: sector arithmetic in callers relies on it. */
	if (sector < 512 || sector > (1u << 16) || (sector & (sector - 1))) {
		e = rk_fail(RK_E_INVAL, "%s: invalid sector size %u", path ? path : "(device)", sector);
		goto fail;
	}
	d = calloc(1, sizeof *d);
	if (!d || !(d->path = strdup(path ? path : ""))) {
		free(d);
		d = NULL;
		e = rk_fail(RK_E_NOMEM, "%s: out of memory", path ? path : "(device)");
		goto fail;
	}
	d->ops = ops;
	d->priv = priv;
	d->size = size;
	d->sector = sector;
	d->writable = writable ? 1 : 0;
	d->blockdev = strcmp(ops->name, "blockdev") == 0;
	*out = d;
	return RK_OK;
fail:
	/* Ownership of priv was taken: let the backend free it. */
	if (priv && ops && ops->close) {
		rk_dev tmp;
		memset(&tmp, 0, sizeof tmp);
		tmp.ops = ops;
		tmp.priv = priv;
		tmp.path = (char *)(uintptr_t)(path ? path : "");
		ops->close(&tmp);
	}
	return e;
}

void *rk_dev_priv(const rk_dev *d) { return d ? d->priv : NULL; }

int rk_dev_has_ops(const rk_dev *d, const struct rk_dev_ops *ops)
{
	return d && ops && d->ops == ops;
}

/* The one bounds check: off + len must not overflow and must lie in size. */
static rk_err check_range(const rk_dev *d, const void *buf, size_t len, uint64_t off,
                          const char *what)
{
	uint64_t end;

	if (!buf && len)
		return rk_fail(RK_E_INVAL, "%s: %s with no buffer", d->path, what);
	if (rk_add_ovf(off, (uint64_t)len, &end))
		return rk_fail(RK_E_RANGE, "%s: %s of %zu bytes at offset %llu overflows",
		               d->path, what, len, (unsigned long long)off);
	if (end > d->size)
		return rk_fail(RK_E_RANGE, "%s: %s of %zu bytes at offset %llu is beyond the end of the device (%llu bytes)",
		               d->path, what, len, (unsigned long long)off, (unsigned long long)d->size);
	return RK_OK;
}

rk_err rk_dev_pread(rk_dev *d, void *buf, size_t len, uint64_t off)
{
	rk_err e;

	if (!d)
		return rk_fail(RK_E_INVAL, "read from a NULL device");
	if ((e = check_range(d, buf, len, off, "read")))
		return e;
	if (len == 0)
		return RK_OK;
	return d->ops->pread(d, buf, len, off);
}

rk_err rk_dev_pwrite(rk_dev *d, const void *buf, size_t len, uint64_t off)
{
	rk_err e;

	if (!d)
		return rk_fail(RK_E_INVAL, "write to a NULL device");
	if (!d->writable)
		return rk_fail(RK_E_READONLY, "%s: write refused: opened read-only", d->path);
	if ((e = check_range(d, buf, len, off, "write")))
		return e;
	if (len == 0)
		return RK_OK;
	return d->ops->pwrite(d, buf, len, off);
}

rk_err rk_dev_flush(rk_dev *d)
{
	if (!d)
		return rk_fail(RK_E_INVAL, "flush of a NULL device");
	/* Nothing was written through a read-only device: nothing to make durable. */
	if (!d->writable || !d->ops->flush)
		return RK_OK;
	return d->ops->flush(d);
}

rk_err rk_dev_flush_set(rk_dev *const *devs, uint32_t n, const uint8_t *skip,
                        rk_dev_io_failed_fn on_io_error, void *ctx)
{
	for (uint32_t i = 0; i < n; i++) {
		if (!devs[i] || (skip && skip[i]))
			continue;
		rk_err e = rk_dev_flush(devs[i]);
		if (e == RK_E_IO && on_io_error)
			on_io_error(ctx, i, e);
		else if (e)
			return e;
	}
	return RK_OK;
}

void rk_dev_close(rk_dev *d)
{
	if (!d)
		return;
	d->ops->close(d);
	free(d->path);
	free(d);
}

uint64_t    rk_dev_size(const rk_dev *d)     { return d ? d->size : 0; }
uint32_t    rk_dev_sector(const rk_dev *d)   { return d ? d->sector : 0; }
const char *rk_dev_path(const rk_dev *d)     { return d ? d->path : ""; }
const char *rk_dev_backend(const rk_dev *d)  { return d ? d->ops->name : ""; }
int         rk_dev_writable(const rk_dev *d) { return d ? d->writable : 0; }
int         rk_dev_is_blockdev(const rk_dev *d) { return d ? d->blockdev : 0; }

void rk_dev_set_identity(rk_dev *d, dev_t devno, ino_t ino, int blockdev)
{
	if (!d)
		return;
	d->have_id = 1;
	d->devno = devno;
	d->ino = ino;
	d->blockdev = blockdev ? 1 : 0;
}

int rk_dev_identity(const rk_dev *d, dev_t *devno, ino_t *ino)
{
	if (!d || !d->have_id)
		return 0;
	if (devno)
		*devno = d->devno;
	if (ino)
		*ino = d->ino;
	return 1;
}

int rk_dev_peek(rk_dev *d, uint64_t off, uint64_t len, const uint8_t **ptr)
{
	uint64_t end;
	if (!d || !ptr || !d->ops->peek || len == 0 || rk_add_ovf(off, len, &end) || end > d->size)
		return 0;
	return d->ops->peek(d, off, len, ptr);
}

void rk_dev_advise(rk_dev *d, uint64_t off, uint64_t len, unsigned adv)
{
	if (!d || !d->ops->advise || !adv || off >= d->size || len == 0)
		return;
	if (len > d->size - off)
		len = d->size - off;
	d->ops->advise(d, off, len, adv);
}

/* ---- choosing the backend (spec/images.md) ---- */

enum image_kind { IMG_PLAIN = 0, IMG_EWF, IMG_SPLIT, IMG_LOGICAL };

/* The first 16 bytes of regular file PATH into HDR; 0 when it is not a
 * regular file or cannot be read (the file backend then says why). */
static int read_head(const char *path, uint8_t hdr[16])
{
	struct stat st;
	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 16)
		return 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return 0;
	ssize_t r = pread(fd, hdr, 16, 0);
	close(fd);
	return r == 16;
}

/* The name of the first segment of the E01 set PATH (a segment NUMBER >= 2)
 * belongs to: the extension's last two characters "01", its letter the
 * first of the series (E01..E99, EAA..ZZZ; e01; s01; Ex01). */
static void ewf_first_name(const char *path, char *first, size_t cap)
{
	const char *dot = strrchr(path, '.');
	size_t base = dot ? (size_t)(dot - path) : strlen(path);
	const char *ext = dot ? dot + 1 : "";
	char letter = isupper((unsigned char)ext[0]) ? 'E' : ext[0] == 's' ? 's' : 'e';
	if (strlen(ext) == 4 && (ext[1] == 'x' || ext[1] == 'X'))
		snprintf(first, cap, "%.*s.%c%c01", (int)base, path, letter, ext[1]);
	else
		snprintf(first, cap, "%.*s.%c01", (int)base, path, letter);
}

/* What PATH is: a plain file or device, a segment of an E01 set, of a
 * split raw image, or a logical evidence file.  For image segments FIRST
 * (CAP bytes) is the set's first segment and *NUMBER PATH's place in it. */
static enum image_kind image_kind(const char *path, char *first, size_t cap, uint32_t *number)
{
	uint8_t hdr[16];
	*number = 1;
	snprintf(first, cap, "%s", path);
	if (read_head(path, hdr)) {
		int sig = dev_ewf_signature(hdr);
		if (sig == 2)
			return IMG_LOGICAL;
		if (sig == 1) {
			uint32_t n = dev_ewf_segment_number(hdr, sizeof hdr);
			if (n > 1) {
				*number = n;
				ewf_first_name(path, first, cap);
			}
			return IMG_EWF;
		}
	}
	return dev_split_name(path, first, cap, number) ? IMG_SPLIT : IMG_PLAIN;
}

int rk_dev_segment_of(const char *path, char *first, size_t cap, uint32_t *number)
{
	char f[4096];
	uint32_t n = 1;
	if (!path || image_kind(path, f, sizeof f, &n) == IMG_PLAIN || n < 2)
		return 0;
	if (first && cap)
		snprintf(first, cap, "%s", f);
	if (number)
		*number = n;
	return 1;
}

int rk_dev_split_of(const char *path, char *first, size_t cap, uint32_t *number)
{
	char f[4096];
	uint32_t n = 1;
	if (!path || image_kind(path, f, sizeof f, &n) != IMG_SPLIT)
		return 0;
	if (first && cap)
		snprintf(first, cap, "%s", f);
	if (number)
		*number = n;
	return 1;
}

int rk_dev_split_segment_name(const char *first, uint32_t number, char *out, size_t cap)
{
	return dev_split_segment_name(first, number, out, cap);
}

int rk_dev_segment_given(char *const *paths, uint32_t n, uint32_t i)
{
	char first[4096];
	uint32_t num;
	if (!paths || i >= n || !rk_dev_segment_of(paths[i], first, sizeof first, &num))
		return 0;
	for (uint32_t k = 0; k < n; k++)
		if (k != i && paths[k] && rk_path_same_object(paths[k], first))
			return 1;
	return 0;
}

rk_err rk_dev_open(rk_dev **out, const char *path, unsigned flags)
{
	if (out)
		*out = NULL;
	if (!out || !path || !*path)
		return rk_fail(RK_E_INVAL, "no device path given");
	char first[4096];
	uint32_t n = 1;
	enum image_kind k = image_kind(path, first, sizeof first, &n);
	/* PLAIN: the caller knows the name says nothing (separate members) */
	if (k == IMG_PLAIN || (k == IMG_SPLIT && (flags & RK_DEV_PLAIN)))
		return rk_dev_open_file(out, path, flags & ~RK_DEV_PLAIN);
	flags &= ~RK_DEV_PLAIN;
	const char *what = k == IMG_SPLIT ? "a split raw image"
	                 : k == IMG_EWF ? "an E01 image" : "an L01 logical evidence file";
	if (k == IMG_LOGICAL)
		return rk_fail(RK_E_NOTSUP, "%s is %s: it holds files, not a disk; raidkit reads disk images", path, what);
	if (flags & ~(RK_DEV_RDWR | RK_DEV_CREATE | RK_DEV_DIRECT))
		return rk_fail(RK_E_INVAL, "%s: unknown open flags 0x%x", path, flags);
	if (flags & RK_DEV_RDWR)
		return rk_fail(RK_E_NOTSUP, "%s is %s: raidkit reads it but never writes to it", path, what);
	if (n > 1) {
		struct stat st;
		if (stat(first, &st) != 0)
			return rk_fail(RK_E_OPEN, "%s is segment %u of %s whose first segment %s is missing", path, n,
			               what, first);
		return rk_fail(RK_E_OPEN, "%s is segment %u of %s: give its first segment %s as the member%s", path, n,
		               what, first,
		               k == IMG_SPLIT ? " (separate disks named like segments are read as one split image "
		                                "unless they carry RAID metadata of their own: give them other names)"
		                              : "");
	}
	return k == IMG_EWF ? dev_ewf_open(out, path) : dev_split_open(out, path);
}

uint32_t rk_dev_segments(const rk_dev *d)
{
	if (rk_dev_has_ops(d, &dev_ewf_ops))
		return dev_ewf_segments(d);
	if (rk_dev_has_ops(d, &dev_split_ops))
		return dev_split_segments(d);
	return d ? 1 : 0;
}

const char *rk_dev_segment_path(const rk_dev *d, uint32_t i)
{
	if (rk_dev_has_ops(d, &dev_ewf_ops))
		return dev_ewf_segment_path(d, i);
	if (rk_dev_has_ops(d, &dev_split_ops))
		return dev_split_segment_path(d, i);
	return d && i == 0 ? rk_dev_path(d) : NULL;
}
