/* dev_overlay.c: the overlay backend (rk_dev_overlay in rk_dev.h): reads see
 * the lower device with the overlay's writes applied on top, kept in memory;
 * nothing reaches the lower device.  The journal replays through it on
 * arrays opened read-only. */
#include "rk_dev.h"

#include <stdlib.h>
#include <string.h>

struct patch {
	uint64_t off;
	size_t len;
	uint8_t *data;
};

struct overlay {
	rk_dev *lower;
	struct patch *p;
	size_t n, cap;
};

static rk_err ov_pread(rk_dev *d, void *buf, size_t len, uint64_t off)
{
	struct overlay *o = rk_dev_priv(d);
	rk_err e = rk_dev_pread(o->lower, buf, len, off);
	if (e)
		return e;
	uint64_t end = off + len;
	for (size_t i = 0; i < o->n; i++) {   /* in write order: the latest wins */
		const struct patch *p = &o->p[i];
		uint64_t a = p->off > off ? p->off : off, pe = p->off + p->len, b = pe < end ? pe : end;
		if (a < b)
			memcpy((uint8_t *)buf + (a - off), p->data + (a - p->off), (size_t)(b - a));
	}
	return RK_OK;
}

static rk_err ov_pwrite(rk_dev *d, const void *buf, size_t len, uint64_t off)
{
	struct overlay *o = rk_dev_priv(d);
	if (o->n == o->cap) {
		size_t nc = o->cap ? o->cap * 2 : 16;
		struct patch *np = realloc(o->p, nc * sizeof *np);
		if (!np)
			return rk_fail(RK_E_NOMEM, "overlay: out of memory");
		o->p = np;
		o->cap = nc;
	}
	uint8_t *copy = malloc(len);
	if (!copy)
		return rk_fail(RK_E_NOMEM, "overlay: out of memory");
	memcpy(copy, buf, len);
	o->p[o->n++] = (struct patch){ .off = off, .len = len, .data = copy };
	return RK_OK;
}

static void ov_close(rk_dev *d)
{
	struct overlay *o = rk_dev_priv(d);
	for (size_t i = 0; i < o->n; i++)
		free(o->p[i].data);
	free(o->p);
	free(o);
}

static const struct rk_dev_ops overlay_ops = {
	.name = "overlay", .pread = ov_pread, .pwrite = ov_pwrite, .close = ov_close,
};

rk_err rk_dev_overlay(rk_dev **out, rk_dev *lower)
{
	*out = NULL;
	struct overlay *o = calloc(1, sizeof *o);
	if (!o)
		return rk_fail(RK_E_NOMEM, "overlay: out of memory");
	o->lower = lower;
	rk_err e = rk_dev_new(out, &overlay_ops, o, rk_dev_path(lower), rk_dev_size(lower), rk_dev_sector(lower), 1);
	if (e)
		return e;
	dev_t dn;
	ino_t ino;
	if (rk_dev_identity(lower, &dn, &ino))
		rk_dev_set_identity(*out, dn, ino, rk_dev_is_blockdev(lower));
	return RK_OK;
}
