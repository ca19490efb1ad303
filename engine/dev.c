/* dev.c: the generic device wrapper.  Every request is checked here (bounds
 * without overflow, read-only enforcement) so backends only ever see
 * in-range, non-empty requests. */
#include "rk_dev.h"
#include "rk_le.h"

#include <stdlib.h>
#include <string.h>

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
