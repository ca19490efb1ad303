/* detect.c: rk_detect_run, the entry of the detection steps
 * (detect_sample.c, detect_anchor.c, detect_search.c, ...). */
#include <stdlib.h>
#include <string.h>

#include "detect_int.h"

/* See rk_detect.h. */
rk_err rk_detect_run(char *const *paths, uint32_t n, const struct rk_detect_hints *h,
                     struct rk_detect_result **out)
{
	*out = NULL;
	if (!n)
		return rk_fail(RK_E_INVAL, "no image given");
	if (h && h->members && (h->members < 2 || h->members > DT_MAX_ROLES))
		return rk_fail(RK_E_INVAL, "--members: %u is outside 2..%u", h->members, DT_MAX_ROLES);
	if (h && h->chunk && (h->chunk % 512 || h->chunk > RK_GEOM_MAX_CHUNK))
		return rk_fail(RK_E_INVAL, "--chunk: %llu is not a multiple of 512 up to 1 GiB", (unsigned long long)h->chunk);
	if (h && h->have_offset && h->offset % 512)
		return rk_fail(RK_E_INVAL, "--offset: %llu is not a multiple of 512", (unsigned long long)h->offset);
	struct rk_detect_result *r = calloc(1, sizeof *r);
	struct dt_ctx c;
	memset(&c, 0, sizeof c);
	if (h)
		c.hints = *h;
	if (!r)
		return rk_fail(RK_E_NOMEM, "out of memory");
	r->nimages = n;
	r->image_role = malloc(n * sizeof *r->image_role);
	r->alts = calloc(8, sizeof *r->alts);
	rk_err e = !r->image_role || !r->alts ? rk_fail(RK_E_NOMEM, "out of memory") : RK_OK;
	for (uint32_t i = 0; !e && i < n; i++)
		r->image_role[i] = -1;
	if (!e)
		e = dt_open(&c, paths, n);
	if (!e)
		e = dt_scan_all(&c);
	if (!e)
		dt_pscan(&c);
	if (!e)
		dt_rows_collect(&c);
	if (!e)
		e = dt_search(&c, r);
	if (!e && c.redo) {   /* the file systems' partitions, read through the best answer, moved anchors */
		c.redo = 0;
		dt_resolve(&c);
		e = dt_search(&c, r);
	}
	for (uint32_t i = 0; i < c.nimg; i++)
		if (c.img[i].nread > r->max_read)
			r->max_read = c.img[i].nread;
	dt_close(&c);
	if (e) {
		rk_detect_free(r);
		return e;
	}
	*out = r;
	return RK_OK;
}

/* See rk_detect.h. */
void rk_detect_free(struct rk_detect_result *r)
{
	if (!r)
		return;
	for (uint32_t k = 0; r->geom.roles && k < r->geom.nroles; k++)
		free(r->geom.roles[k].path);
	free(r->geom.roles);
	free(r->image_role);
	free(r->anchors);
	free(r->alts);
	free(r);
}
