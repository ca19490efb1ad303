/* detect_fat.c: the files of a FAT16/32 file system as a hypothesis's
 * volume reads it.  The directories from the root down (breadth first,
 * DIRS_MAX of them) name each file's first cluster and size; the FAT's
 * chain leads to its last cluster, which holds the file's last bytes
 * followed by zeros when the slack was zero before (a fresh image; mtools
 * and Windows leave a cluster's slack as it was): dt_tail_check, counted
 * by dt_tails_count.  Every entry and chain is hostile: clusters are
 * checked against the count, chains are bounded by the file's size and a
 * step budget. */
#include <stdlib.h>
#include <string.h>
#ifdef DT_DEBUG
#include <stdio.h>
#endif

#include "detect_int.h"
#include "rk_le.h"
#include "rk_util.h"

#define DIRS_MAX 64u       /* directories read */
#define DIR_CLUSTERS 4u    /* clusters read of each */
#define FT_TAILS 256u      /* file tails checked */
#define FT_STEPS 65536u    /* FAT entries followed in all */

struct fq {
	struct dt_ctx *c;
	struct dt_hyp *h;
	uint64_t base;
	struct dt_self s;
	uint64_t fat;                 /* volume byte (from base) of the first FAT */
	uint64_t sect_at;             /* the FAT sector held in sect, UINT64_MAX none */
	uint8_t sect[512];
	uint32_t steps, tails, oks;
	uint32_t dirs[DIRS_MAX], ndirs;
	uint8_t *buf;                 /* a cluster: a file's last */
	uint8_t *dir;                 /* a cluster: a directory's */
};

/* The FAT entry of cluster K; 0 when unreadable (ends the chain). */
static uint32_t fat_next(struct fq *q, uint32_t k)
{
	uint64_t at = q->fat + (uint64_t)k * (q->s.fat_32 ? 4 : 2), sec = at & ~511ull;
	if (q->sect_at != sec) {
		if (sec > UINT64_MAX - q->base || dt_vread(q->c, q->h, q->base + sec, q->sect, sizeof q->sect))
			return 0;
		q->sect_at = sec;
	}
	const uint8_t *e = q->sect + (at - sec);
	return q->s.fat_32 ? rk_get_le32(e) & 0x0FFFFFFFu : rk_get_le16(e);
}

/* Whether K names a data cluster. */
static int data_cluster(const struct fq *q, uint64_t k) { return k >= 2 && k - 2 < q->s.fat_nclus; }

/* The volume byte (from base) of data cluster K. */
static uint64_t cluster_at(const struct fq *q, uint64_t k) { return q->s.fat_data + (k - 2) * q->s.fat_clus; }

/* The file of SIZE bytes from cluster FIRST: its last cluster's tail. */
static void fat_file(struct fq *q, uint32_t first, uint64_t size)
{
	uint64_t hops = (size - 1) / q->s.fat_clus;
	uint32_t k = first;
	for (uint64_t i = 0; i < hops; i++) {
		if (q->steps++ >= FT_STEPS || !data_cluster(q, k))
			return;
		k = fat_next(q, k);
	}
	if (!data_cluster(q, k) || cluster_at(q, k) > UINT64_MAX - q->base)
		return;
	int t = dt_tail_check(q->c, q->h, q->base + cluster_at(q, k), q->s.fat_clus, size, q->buf);
	q->tails += t >= 0;
	q->oks += t > 0;
}

/* The LEN bytes of directory entries at B: files' tails, directories
 * queued.  0 at the end-of-directory entry. */
static int fat_entries(struct fq *q, const uint8_t *b, size_t len)
{
	for (size_t o = 0; o + 32 <= len && q->tails < FT_TAILS; o += 32) {
		const uint8_t *e = b + o;
		if (!e[0])
			return 0;
		if (e[0] == 0xE5 || e[0] == '.' || e[11] == 0x0F || (e[11] & 0x08))
			continue;   /* deleted, ".", "..", a long name, the label */
		uint32_t first = rk_get_le16(e + 26) | (q->s.fat_32 ? (uint32_t)rk_get_le16(e + 20) << 16 : 0);
		uint64_t size = rk_get_le32(e + 28);
		if (!data_cluster(q, first))
			continue;
		if (e[11] & 0x10) {
			if (q->ndirs < DIRS_MAX)
				q->dirs[q->ndirs++] = first;
		} else if (size)
			fat_file(q, first, size);
	}
	return 1;
}

/* See detect_int.h. */
void dt_fat_tails(struct dt_ctx *c, struct dt_hyp *h, uint64_t base, const uint8_t *boot)
{
	struct fq *q = calloc(1, sizeof *q);
	if (!q)
		return;
	*q = (struct fq){ .c = c, .h = h, .base = base, .sect_at = UINT64_MAX };
	dt_fat_learn(&q->s, boot);
	if (!q->s.fat || q->s.fat_clus > 65536 || !(q->buf = malloc(q->s.fat_clus)) || !(q->dir = malloc(q->s.fat_clus))) {
		free(q->buf);
		free(q);
		return;
	}
	q->fat = (uint64_t)q->s.fat_res * q->s.fat_bps;
	if (q->s.fat_32)
		q->dirs[q->ndirs++] = rk_get_le32(boot + 0x2C);
	else {   /* FAT16: the root directory sits before the data area */
		uint64_t root = q->fat + (uint64_t)q->s.fat_nfats * q->s.fat_sz * q->s.fat_bps;
		for (uint64_t at = root; at + 512 <= q->s.fat_data; at += 512) {
			uint8_t b[512];
			if (dt_vread(c, h, base + at, b, sizeof b) || !fat_entries(q, b, sizeof b))
				break;
		}
	}
	for (uint32_t d = 0; d < q->ndirs && q->tails < FT_TAILS; d++) {
		uint32_t k = q->dirs[d];
		for (uint32_t n = 0; n < DIR_CLUSTERS && data_cluster(q, k); n++) {
			if (cluster_at(q, k) > UINT64_MAX - base ||
			    dt_vread(c, h, base + cluster_at(q, k), q->dir, q->s.fat_clus) || !fat_entries(q, q->dir, q->s.fat_clus))
				break;
			if (q->steps++ >= FT_STEPS)
				break;
			k = fat_next(q, k);
		}
	}
#ifdef DT_DEBUG
	fprintf(stderr, "FATTAILS %u of %u\n", q->oks, q->tails);
#endif
	dt_tails_count(h, q->oks, q->tails);
	free(q->dir);
	free(q->buf);
	free(q);
}
