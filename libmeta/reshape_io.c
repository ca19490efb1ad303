/* reshape_io.c: volume I/O of an array in the middle of a reshape: the
 * dual-geometry reader behind rk_resize_reader_* (rk_resize.h), whose two
 * engines rk_array also writes through.  Volume bytes below the checkpoint
 * live in the new geometry, the rest in the old one (spec/reshape.md). */
#include <stdlib.h>
#include <string.h>

#include "rk_geom.h"
#include "rk_resize.h"
#include "rk_vol.h"
#include "resize_int.h"

struct rk_resize_reader {
	struct rk_geom go, gn;
	rk_vol *vo, *vn;          /* old geometry (NULL when all moved), new (NULL before any) */
	uint64_t pos, size;
};

uint32_t rk_resize_span(const struct rk_sb *t)
{
	uint32_t span = t->nroles;
	if ((t->feat_incompat & RK_FEAT_INCOMPAT_RESHAPE) && t->reshape_new.nroles > span)
		span = t->reshape_new.nroles;
	return span;
}

rk_err rk_resize_geom_vol(rk_vol **v, struct rk_geom *g, rk_dev *const *devs, int32_t level, uint32_t layout,
                          uint64_t chunk, uint32_t nroles, uint64_t ds, uint64_t doff)
{
	rk_err e = rk_geom_init(g, level, layout, chunk, nroles, ds);
	if (e)
		return e;
	uint64_t *offs = malloc(nroles * sizeof *offs);
	if (!offs)
		return rk_fail(RK_E_NOMEM, "out of memory");
	for (uint32_t r = 0; r < nroles; r++)
		offs[r] = doff;
	e = rk_vol_open(v, g, devs, offs);
	free(offs);
	return e;
}

void rk_resize_reader_close(rk_resize_reader *r)
{
	if (!r)
		return;
	rk_vol_close(r->vo);
	rk_vol_close(r->vn);
	free(r);
}

rk_err rk_resize_reader_open(rk_resize_reader **out, const struct rk_sb *t, rk_dev *const *devs,
                             void (*fail_fn)(void *ctx, uint32_t role, rk_err why), void *ctx)
{
	*out = NULL;
	rk_resize_reader *r = calloc(1, sizeof *r);
	if (!r)
		return rk_fail(RK_E_NOMEM, "out of memory");
	rk_err e = RK_OK;
	r->size = t->volume_size;
	if (t->feat_incompat & RK_FEAT_INCOMPAT_RESHAPE) {
		const struct rk_geom_desc *n = &t->reshape_new;
		if ((t->reshape_flags & RK_RESHAPE_BACKWARDS) || n->data_offset >= t->data_offset) {
			e = rk_fail(RK_E_NOTSUP, "this reshape (data offset %llu -> %llu, flags 0x%x) is not read by this build",
			            (unsigned long long)t->data_offset, (unsigned long long)n->data_offset, t->reshape_flags);
			goto out;
		}
		r->pos = t->reshape_pos < r->size ? t->reshape_pos : r->size;
		if (r->pos && (e = rk_resize_geom_vol(&r->vn, &r->gn, devs, n->level, n->layout, n->chunk, n->nroles, n->data_size,
		                              n->data_offset))) {
			e = rk_fail(e, "the new geometry: %s", rk_errmsg());
			goto out;
		}
	}
	if (r->pos < r->size && (e = rk_resize_geom_vol(&r->vo, &r->go, devs, t->level, t->layout, t->chunk, t->nroles,
	                                        t->data_size, t->data_offset))) {
		if (t->feat_incompat & RK_FEAT_INCOMPAT_RESHAPE)
			e = rk_fail(e, "the old geometry: %s", rk_errmsg());
		goto out;
	}
	if (fail_fn) {
		if (r->vo)
			rk_vol_on_fail(r->vo, fail_fn, ctx);
		if (r->vn)
			rk_vol_on_fail(r->vn, fail_fn, ctx);
	}
out:
	if (e)
		rk_resize_reader_close(r);
	else
		*out = r;
	return e;
}

rk_err rk_resize_reader_read(rk_resize_reader *r, void *buf, uint64_t len, uint64_t off)
{
	if (off > r->size || len > r->size - off)
		return rk_fail(RK_E_RANGE, "read of %llu bytes at %llu: past the volume end (%llu)", (unsigned long long)len,
		               (unsigned long long)off, (unsigned long long)r->size);
	uint8_t *b = buf;
	if (off < r->pos) {
		uint64_t k = r->pos - off < len ? r->pos - off : len;
		rk_err e = rk_vol_read(r->vn, b, (size_t)k, off);
		if (e)
			return e;
		b += k;
		off += k;
		len -= k;
	}
	return len ? rk_vol_read(r->vo, b, (size_t)len, off) : RK_OK;
}

uint64_t rk_resize_reader_pos(const rk_resize_reader *r)
{
	return r->pos;
}

rk_vol *rk_resize_reader_vol(const rk_resize_reader *r, int new_geom)
{
	return new_geom ? r->vn : r->vo;
}

