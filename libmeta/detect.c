/* detect.c: rk_detect_run, the entry of the detection steps
 * (detect_sample.c, detect_anchor.c, detect_search.c, ...). */
#include <stdlib.h>
#include <string.h>

#include "detect_int.h"

/* *R: a new result over N images, none placed yet (NULL on failure). */
static rk_err result_new(uint32_t n, struct rk_detect_result **r)
{
	*r = calloc(1, sizeof **r);
	if (!*r)
		return rk_fail(RK_E_NOMEM, "out of memory");
	(*r)->nimages = n;
	(*r)->image_role = malloc(n * sizeof *(*r)->image_role);
	(*r)->alts = calloc(8, sizeof *(*r)->alts);
	if (!(*r)->image_role || !(*r)->alts)
		return rk_fail(RK_E_NOMEM, "out of memory");
	for (uint32_t i = 0; i < n; i++)
		(*r)->image_role[i] = -1;
	return RK_OK;
}

/* dt_search into R, and once more when the file systems' partitions,
 * read through the best answer, moved anchors (C->redo). */
static rk_err search(struct dt_ctx *c, struct rk_detect_result *r)
{
	c->redo = 0;
	rk_err e = dt_search(c, r);
	if (!e && c->redo) {
		c->redo = 0;
		dt_resolve(c);
		e = dt_search(c, r);
	}
	return e;
}

/* One detection over PATHS (N) into *OUT (see rk_detect_run); *LONE: an
 * image to search again without when nothing was found (the one image of
 * a best answer held back for the anchors the others hold, or a plain
 * ext image), else -1.  READ (N entries): the bytes each image was read
 * before, counted against its budget, and on return the bytes it was
 * read in all. */
static rk_err detect_once(char *const *paths, uint32_t n, const struct rk_detect_hints *h,
                          struct rk_detect_result **out, int32_t *lone, uint64_t *read)
{
	*out = NULL;
	*lone = -1;
	struct rk_detect_result *r = NULL;
	struct dt_ctx c;
	memset(&c, 0, sizeof c);
	c.retry_without = -1;
	if (h)
		c.hints = *h;
	rk_err e = result_new(n, &r);
	if (!e)
		e = dt_open(&c, paths, n);
	for (uint32_t i = 0; !e && i < c.nimg; i++)
		c.img[i].nread += read[i];
	if (!e)
		e = dt_scan_all(&c);
	if (!e)
		dt_pscan(&c);
	if (!e)
		dt_rows_collect(&c);
	if (!e)
		e = search(&c, r);
	if (!e && !r->found && c.starved) {
		/* nothing named, and stage 2 ran out of checks before its last
		 * geometries: once more with twice the budget, whose answer
		 * stands (seed 5541: a RAID-4 of 8 whose geometry came 11th,
		 * after ten readings of 8 and 9 members had spent all 30000
		 * checks) */
		rk_detect_free(r);
		c.boost = 1;
		e = result_new(n, &r);
		if (!e)
			e = search(&c, r);
	}
	for (uint32_t i = 0; i < c.nimg; i++) {
		read[i] = c.img[i].nread;
		if (r && c.img[i].nread > r->max_read)
			r->max_read = c.img[i].nread;
	}
	*lone = c.retry_without;
	dt_close(&c);
	if (e) {
		rk_detect_free(r);
		return e;
	}
	*out = r;
	return RK_OK;
}

/* Whether R, found, uses two images or more. */
static int uses_two(const struct rk_detect_result *r)
{
	uint32_t n = 0;
	for (uint32_t i = 0; r->found && i < r->nimages; i++)
		n += r->image_role[i] >= 0;
	return n >= 2;
}

/* R2, found over the images but LONE, as a result over all N: image
 * indices moved back past LONE, which is left out. */
static void widen(struct rk_detect_result *r2, uint32_t n, uint32_t lone, int32_t *roles)
{
	for (uint32_t i = 0, j = 0; i < n; i++)
		roles[i] = i == lone ? -1 : r2->image_role[j++];
	free(r2->image_role);
	r2->image_role = roles;
	r2->nimages = n;
	for (uint32_t k = 0; k < r2->nanchors; k++)
		r2->anchors[k].image += r2->anchors[k].image >= lone;
}

/* See rk_detect.h.  When nothing is found and one image is a plain disk
 * (an unrelated whole file system among the members, which outscores an
 * array with few anchors, or ties readings with it), the search runs
 * again without it, and its answer stands when it is found over two
 * images or more (seed 3692: a RAID-4 of 7 holding a 5 % full btrfs
 * beside a plain ext4 image, ambiguous before). */
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
	int32_t lone;
	uint64_t *read = calloc(n, sizeof *read);
	if (!read)
		return rk_fail(RK_E_NOMEM, "out of memory");
	rk_err e = detect_once(paths, n, h, out, &lone, read);
	if (e || lone < 0 || n < 3) {
		free(read);
		return e;
	}
	char **rest = malloc((n - 1) * sizeof *rest);
	int32_t *roles = malloc(n * sizeof *roles);
	struct rk_detect_result *r2 = NULL;
	int32_t lone2;
	for (uint32_t i = 0, j = 0; rest && i < n; i++)
		if (i != (uint32_t)lone) {
			read[j] = read[i];   /* the second run reads within what the first left of each budget */
			rest[j++] = paths[i];
		}
	if (rest && roles && !detect_once(rest, n - 1, h, &r2, &lone2, read) && uses_two(r2)) {
		if (r2->max_read < (*out)->max_read)
			r2->max_read = (*out)->max_read;
		r2->hypotheses += (*out)->hypotheses;
		widen(r2, n, (uint32_t)lone, roles);
		roles = NULL;
		rk_detect_free(*out);
		*out = r2;
		r2 = NULL;
	}
	rk_clearerr();
	rk_detect_free(r2);
	free(roles);
	free(rest);
	free(read);
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
