/* detect_edge.c: content continuity across chunk edges where two readings
 * of the volume differ (dt_edge_compare).  A file's bytes run on across
 * the edge of the chunk that holds them into the next chunk of the
 * volume, so under the right reading the bytes just before an edge and
 * just after it are alike in kind (text beside text, zeros beside zeros,
 * compressed beside compressed); under a reading that puts another chunk
 * after the edge they are alike only by chance.  "Alike": the cosine of
 * the two sides' byte histograms.  The signal is weak edge by edge and
 * strong over hundreds, so it is counted as a sign test: at how many
 * sampled edges each reading's sides are clearly the more alike.  It is
 * the last resort the issue names (spec/detect.md): only between readings
 * that tie on everything else (seed 3680: a RAID-5 of 11 on the forensics
 * exFAT sample, two data roles swapped, every row consistent and the
 * allocation bitmap no help, its free clusters full of old data).  Every
 * byte is read through the hypothesis, rebuilt where a role is gone. */
#include <math.h>
#include <string.h>

#include "detect_int.h"
#include "rk_util.h"

#define EDGE_PEEK 512u       /* bytes looked at on each side of an edge */
#define EDGE_SAMPLES 512u    /* edges where the readings differ, at most */
#define EDGE_TRIES 8192u     /* edges visited to find them */
#define EDGE_MARGIN 0.05     /* a side is "clearly more alike" by this much */
#define EDGE_STEP 7919u      /* visiting order: a prime stride over the edges */
#define EDGE_QUIT 1024u      /* edges visited without a difference: the readings differ elsewhere */

/* The cosine of the byte histograms of X and Y (N bytes each). */
static double hist_cos(const uint8_t *x, const uint8_t *y, size_t n)
{
	uint32_t hx[256] = { 0 }, hy[256] = { 0 };
	for (size_t i = 0; i < n; i++) {
		hx[x[i]]++;
		hy[y[i]]++;
	}
	double dot = 0, nx = 0, ny = 0;
	for (int k = 0; k < 256; k++) {
		dot += (double)hx[k] * hy[k];
		nx += (double)hx[k] * hx[k];
		ny += (double)hy[k] * hy[k];
	}
	return nx > 0 && ny > 0 ? dot / sqrt(nx * ny) : 0;
}

/* Whether either half of W (EDGE_PEEK bytes before an edge, then
 * EDGE_PEEK after) is zeros. */
static int edge_zero(const uint8_t *w)
{
	return rk_buf_is_zero(w, EDGE_PEEK) || rk_buf_is_zero(w + EDGE_PEEK, EDGE_PEEK);
}

/* The K-th edge visited of N (1..N): every edge once, in a spread order,
 * when N is small; a hash of K otherwise. */
static uint64_t edge_pick(uint64_t k, uint64_t n)
{
	if (n <= EDGE_TRIES && n % EDGE_STEP)
		return 1 + k * EDGE_STEP % n;
	return 1 + (k * 0x9E3779B97F4A7C15ull >> 11) % n;
}

/* See detect_int.h. */
int dt_edge_compare(struct dt_ctx *c, const struct dt_hyp *a, const struct dt_hyp *b, struct dt_edges *out)
{
	memset(out, 0, sizeof *out);
	uint64_t unit = a->g.chunk, vs = a->g.volume_size < b->g.volume_size ? a->g.volume_size : b->g.volume_size;
	if (!unit || unit != b->g.chunk || unit < EDGE_PEEK || vs / unit < 2)
		return 0;   /* linear arrays and mirrors have too few edges */
	uint64_t n = vs / unit - 1, tries = n < EDGE_TRIES ? n : EDGE_TRIES;
	uint8_t wa[2 * EDGE_PEEK], wb[2 * EDGE_PEEK];
	for (uint64_t t = 0; t < tries && out->differ < EDGE_SAMPLES && (out->differ || t < EDGE_QUIT); t++) {
		uint64_t e = edge_pick(t, n) * unit;
		dt_cache_trim(c);
		if (dt_vread(c, a, e - EDGE_PEEK, wa, sizeof wa) || dt_vread(c, b, e - EDGE_PEEK, wb, sizeof wb) ||
		    !memcmp(wa, wb, sizeof wa))
			continue;
		/* only where both readings show data on both sides: a file's
		 * end before free space is no discontinuity, and text beside
		 * another file's text looks alike */
		if (edge_zero(wa) || edge_zero(wb))
			continue;
		double sa = hist_cos(wa, wa + EDGE_PEEK, EDGE_PEEK), sb = hist_cos(wb, wb + EDGE_PEEK, EDGE_PEEK);
		out->differ++;
		if (sa > sb + EDGE_MARGIN)
			out->a_wins++;
		else if (sb > sa + EDGE_MARGIN)
			out->b_wins++;
	}
	uint32_t m = out->a_wins + out->b_wins;
	out->z = m ? ((double)out->a_wins - out->b_wins) / sqrt((double)m) : 0;
	return 1;
}
