/* detect_stripe.c: what striping and concatenation without redundancy
 * (RAID-0, linear) need beyond the anchors' votes.
 *
 * Linear maps volume byte v to member v / member_size, so an anchor far
 * into the volume votes for a role and start only as right as the member
 * size guessed before any image is placed.  Anchors that sit before the
 * end of the smallest image's data are on the first member whatever the
 * size: the start most of them agree on (their image byte less their
 * volume byte) is the data start of the first member, and the images'
 * size less that start is the member size to guess. */
#include <stdlib.h>

#include "detect_int.h"

/* See detect_int.h. */
uint64_t dt_linear_start0(const struct dt_ctx *c)
{
	uint64_t least = UINT64_MAX;
	for (uint32_t i = 0; i < c->nimg; i++)
		if (c->img[i].size < least)
			least = c->img[i].size;
	uint64_t best = 0;
	uint32_t bn = 0;
	for (uint32_t k = 0; k < c->nanc && least != UINT64_MAX; k++) {
		const struct dt_anchor *a = &c->anc[k];
		if (a->voff == DT_NONE || a->voff > a->ioff || a->ioff - a->voff >= least / 2 || a->voff >= least / 2)
			continue;
		uint64_t s = a->ioff - a->voff;
		uint32_t n = 0;
		for (uint32_t q = 0; q < c->nanc; q++) {
			const struct dt_anchor *b = &c->anc[q];
			n += b->img == a->img && b->voff != DT_NONE && b->voff <= b->ioff && b->ioff - b->voff == s;
		}
		if (n > bn || (n == bn && s < best)) {
			bn = n;
			best = s;
		}
	}
	return best;
}
