/* dev_slice.c: the slice backend (rk_dev_slice in rk_dev.h): a read-only
 * window [offset, offset+length) of a parent device, e.g. one partition of
 * a whole disk image (libmeta/part.c).  The generic layer (dev.c) keeps
 * every request inside the window and refuses writes, so the parent is
 * never read past the window and never written. */
#include "rk_dev.h"
#include "rk_le.h"

#include <stdlib.h>

struct slice {
	rk_dev  *parent;
	uint64_t offset;
	int      own;      /* closing the slice closes the parent */
};

/* In range by dev.c's check: off + len <= length, and offset + length was
 * checked against the parent's size at creation, so no sum overflows. */
static rk_err slice_pread(rk_dev *d, void *buf, size_t len, uint64_t off)
{
	struct slice *s = rk_dev_priv(d);
	return rk_dev_pread(s->parent, buf, len, s->offset + off);
}

/* Never reached (the slice is read-only): dev.c refuses first. */
static rk_err slice_pwrite(rk_dev *d, const void *buf, size_t len, uint64_t off)
{
	(void)buf;
	(void)len;
	(void)off;
	return rk_fail(RK_E_READONLY, "%s: write refused: a slice is read only", rk_dev_path(d));
}

static int slice_peek(rk_dev *d, uint64_t off, uint64_t len, const uint8_t **ptr)
{
	struct slice *s = rk_dev_priv(d);
	return rk_dev_peek(s->parent, s->offset + off, len, ptr);
}

static void slice_advise(rk_dev *d, uint64_t off, uint64_t len, unsigned adv)
{
	struct slice *s = rk_dev_priv(d);
	rk_dev_advise(s->parent, s->offset + off, len, adv);
}

static void slice_close(rk_dev *d)
{
	struct slice *s = rk_dev_priv(d);
	if (!s)
		return;
	if (s->own)
		rk_dev_close(s->parent);
	free(s);
}

static const struct rk_dev_ops slice_ops = {
	.name = "slice", .pread = slice_pread, .pwrite = slice_pwrite, .close = slice_close,
	.peek = slice_peek, .advise = slice_advise,
};

/* A 64-bit mix (splitmix64's finaliser): a bijection, so distinct inputs
 * give distinct outputs. */
static uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x;
}

/* The slice's identity from the parent's: the same window of the same
 * object gives the same pair, another window another pair.  Bit 63 of the
 * device number is set (no device number the kernel hands out has it, its
 * dev_t being 32 bits), so a slice never equals a real file; the inode
 * number mixes the parent's with the window. */
static void slice_identity(rk_dev *d, const rk_dev *parent, uint64_t offset, uint64_t length)
{
	dev_t dn;
	ino_t ino;
	if (!rk_dev_identity(parent, &dn, &ino))
		return;
	uint64_t id = mix64((uint64_t)ino ^ mix64(offset ^ mix64(length)));
	rk_dev_set_identity(d, (dev_t)((uint64_t)dn | (1ull << 63)), (ino_t)id, 0);
}

rk_err rk_dev_slice(rk_dev **out, rk_dev *parent, uint64_t offset, uint64_t length,
                    const char *name, int own_parent)
{
	uint64_t end;
	if (out)
		*out = NULL;
	if (!out || !parent) {
		if (own_parent)
			rk_dev_close(parent);
		return rk_fail(RK_E_INVAL, "%s: a slice needs a parent device", name ? name : "(slice)");
	}
	const char *nm = name ? name : rk_dev_path(parent);
	if (rk_add_ovf(offset, length, &end) || end > rk_dev_size(parent)) {
		rk_err e = rk_fail(RK_E_RANGE, "%s: bytes %llu to %llu lie past the end of %s (%llu bytes)", nm,
		                   (unsigned long long)offset, (unsigned long long)offset + length,
		                   rk_dev_path(parent), (unsigned long long)rk_dev_size(parent));
		if (own_parent)
			rk_dev_close(parent);
		return e;
	}
	struct slice *s = calloc(1, sizeof *s);
	if (!s) {
		if (own_parent)
			rk_dev_close(parent);
		return rk_fail(RK_E_NOMEM, "%s: out of memory", nm);
	}
	s->parent = parent;
	s->offset = offset;
	s->own = own_parent ? 1 : 0;
	/* On failure rk_dev_new hands S to slice_close, which closes an owned parent. */
	rk_err e = rk_dev_new(out, &slice_ops, s, nm, length, rk_dev_sector(parent), 0);
	if (e)
		return e;
	slice_identity(*out, parent, offset, length);
	return RK_OK;
}
