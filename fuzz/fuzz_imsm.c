/* fuzz_imsm.c: the IMSM decoder (fmt_imsm.c) on arbitrary bytes.
 *
 * The input is the metadata region of a member: its last bytes (the MPB's
 * anchor is the second-to-last 512-byte sector, its other sectors before
 * that).  It is laid at the end of a memory device a little larger than
 * the input and decoded through the formats table; whatever decodes is
 * printed both ways and turned into views, each view checked against two
 * member sizes.  Each input is tried as it is and once with the MPB's
 * checksum made right, so that mutations reach the field checks.  Nothing
 * may crash; an accepted object must hold what the decoder promises.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rk_dev.h"
#include "rk_fmt.h"
#include "rk_fmt_imsm.h"
#include "rk_json.h"
#include "rk_le.h"
#include "rk_sb.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_IN (64u * 1024)

static uint8_t fixed[MAX_IN];

/* What an accepted object promises: counts within their tables. */
static void check_obj(const struct rk_imsm *m)
{
	if (m->nvols != m->num_raid_devs || m->nvols > RK_IMSM_MAX_VOLS || m->mpb_size < RK_IMSM_HDR_SIZE ||
	    m->this_disk >= (int)m->num_disks || m->this_disk < -1)
		abort();
	for (uint32_t v = 0; v < m->nvols; v++)
		for (int k = 0; k < (m->vols[v].migr_state ? 2 : 1); k++)
			if (m->vols[v].map[k].num_members == 0 || m->vols[v].off + m->vols[v].len > m->mpb_size)
				abort();
}

/* Views of M for a member of DEV bytes, each checked. */
static void views(const struct rk_meta_fmt *f, const struct rk_imsm *m, uint64_t dev)
{
	struct rk_sb *v = NULL;
	uint32_t n = 0;
	rk_err e = f->views(m, dev, &v, &n);
	if (e != RK_OK && (n || v))
		abort();
	for (uint32_t i = 0; i < n; i++) {
		if (v[i].origin != RK_ORIGIN_IMSM || v[i].nroles > 255 || v[i].this_role >= v[i].nentries)
			abort();
		(void)rk_view_check(&v[i], dev);
	}
	free(v);
}

/* DATA at the end of a memory device, decoded, printed, viewed. */
static void one(const uint8_t *data, size_t size, const char *path)
{
	rk_dev *d;
	uint64_t dsize = size + 4096;
	if (rk_dev_mem(&d, path, dsize) != RK_OK)
		return;
	memcpy(rk_dev_mem_data(d) + dsize - size, data, size);
	const struct rk_meta_fmt *f = rk_meta_fmt_find("imsm");
	struct rk_imsm *m = NULL;
	if (f->decode(d, path, (void **)&m) == RK_OK) {
		check_obj(m);
		FILE *null = fopen("/dev/null", "w");
		if (null) {
			f->print_text(null, m, "  ");
			rk_json *j = rk_json_new(null);
			if (j) {
				f->print_json(j, m);
				rk_json_free(j);
			}
			fclose(null);
		}
		views(f, m, dsize);
		views(f, m, 10u * 1024 * 1024);
		f->release(m);
	}
	struct rk_probe_result r;
	(void)f->probe(d, path, &r);
	rk_dev_close(d);
}

/* The input with the checksum of the MPB it holds recomputed, into
 * fixed; 0 when it holds none. */
static int fix_checksum(const uint8_t *data, size_t size)
{
	if (size < 1024 + 512 || size > MAX_IN)
		return 0;
	memcpy(fixed, data, size);
	uint8_t *anchor = fixed + size - 1024;
	uint32_t len = rk_get_le32(anchor + 0x24);
	uint64_t secs = ((uint64_t)len + 511) / 512;
	if (len < 0x28 || secs * 512 + 512 > size)
		return 0;
	uint32_t sum = 0;
	for (uint32_t i = 0; i + 4 <= len; i += 4) {
		/* MPB byte i: the anchor's first sector, then the sectors before it */
		const uint8_t *p = i < 512 ? anchor + i : anchor - (secs - 1) * 512 + (i - 512);
		sum += i == 0x20 ? 0 : rk_get_le32(p);
	}
	rk_put_le32(anchor + 0x20, sum);
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > MAX_IN)
		return 0;
	/* the path names a serial of the table, as IMSM_DEVNAME_AS_SERIAL does,
	 * in the fixtures this corpus comes from */
	one(data, size, "/dev/ubda");
	if (fix_checksum(data, size)) {
		one(fixed, size, "/dev/ubda");
		one(fixed, size, "m0.img");
	}
	return 0;
}
