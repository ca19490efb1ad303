/* fuzz_sb.c: superblock decoding from arbitrary bytes.
 *
 * The input is one superblock copy as it lies on a member.  It is decoded
 * at several offsets (the primary place, the place it records, an unrelated
 * one) against several device sizes (the recorded one, larger, smaller,
 * unknown).  Whatever decodes must re-encode to the very same bytes and
 * decode again to the same struct; anything else aborts.  The input is also
 * put on a memory device at both copy places and read with rk_sb_read, so
 * the copy choosing runs on hostile bytes too.  Each input is tried once
 * as it is and once with its CRC recomputed, so that a fuzzer's mutations
 * reach the field validation.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "rk_dev.h"
#include "rk_le.h"
#include "rk_sb.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct rk_sb sb, again;
static uint8_t enc[RK_SB_AREA], fixed[RK_SB_AREA];

static void one(const uint8_t *data, size_t size, uint64_t at, uint64_t dev)
{
	if (rk_sb_decode(&sb, data, size, at, dev) != RK_OK)
		return;
	/* Accepted: the invariants a reader relies on hold. */
	if (sb.sb_bytes > size || sb.nentries < sb.nroles || sb.nentries > RK_SB_MAX_ROLES ||
	    sb.sb_offset != at || (dev && sb.dev_size > dev) ||
	    sb.data_offset + sb.data_size > rk_sb_backup_offset(sb.dev_size) ||
	    sb.data_offset < RK_SB_PRIMARY_END)
		abort();
	if (rk_sb_validate(&sb, dev) != RK_OK)
		abort();
	uint64_t v;
	if (!(sb.feat_incompat & RK_FEAT_INCOMPAT_RESHAPE) &&
	    (rk_sb_volume_size(sb.level, sb.layout, sb.chunk, sb.nroles, sb.data_size, &v) || v != sb.volume_size))
		abort();
	if (rk_sb_encode(&sb, enc, sizeof enc) != RK_OK)
		abort();
	if (memcmp(enc, data, sb.sb_bytes))
		abort();
	if (rk_sb_decode(&again, enc, sb.sb_bytes, at, dev) != RK_OK || memcmp(&again, &sb, sizeof sb))
		abort();
	char buf[64];
	rk_sb_feature_names(RK_FEAT_KIND_INCOMPAT, sb.feat_incompat, buf, sizeof buf);
	(void)rk_role_state_name(sb.roles[0].state);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 2 * RK_SB_AREA)
		return 0;
	uint64_t rec_at = size >= 200 ? rk_get_le64(data + 192) : RK_SB_PRIMARY_OFF;
	uint64_t rec_dev = size >= 208 ? rk_get_le64(data + 200) : 0;
	const uint64_t ats[] = { RK_SB_PRIMARY_OFF, rec_at, 8192 };
	const uint64_t devs[] = { rec_dev, rec_dev + 4096 * 3 + 17, rec_dev ? rec_dev - 1 : 0, 0, 1ull << 40,
	                          UINT64_MAX };
	for (size_t i = 0; i < sizeof ats / sizeof ats[0]; i++)
		for (size_t j = 0; j < sizeof devs / sizeof devs[0]; j++)
			one(data, size, ats[i], devs[j]);

	/* Again with the CRC made right, so mutations reach the field checks
	 * instead of stopping at the checksum. */
	uint32_t n_crc = size >= 20 ? rk_get_le32(data + 12) : 0;
	if (n_crc >= 20 && n_crc <= size && n_crc <= sizeof fixed) {
		memcpy(fixed, data, n_crc);
		rk_put_le32(fixed + 16, 0);
		rk_put_le32(fixed + 16, (uint32_t)crc32(0, fixed, n_crc));
		for (size_t i = 0; i < sizeof ats / sizeof ats[0]; i++)
			for (size_t j = 0; j < sizeof devs / sizeof devs[0]; j++)
				one(fixed, n_crc, ats[i], devs[j]);
	}

	/* Both copy places of a small memory device. */
	uint64_t dsize = RK_SB_PRIMARY_END + 4 * RK_SB_AREA + (size & 4095);
	if (rec_dev >= RK_SB_PRIMARY_END + RK_SB_AREA && rec_dev <= 4 * 1024 * 1024)
		dsize = rec_dev;    /* the size the copy records, so a valid one is found */
	rk_dev *d;
	if (rk_dev_mem(&d, "fuzz", dsize) != RK_OK)
		return 0;
	uint8_t *mem = rk_dev_mem_data(d);
	size_t n = size < RK_SB_AREA ? size : RK_SB_AREA;
	uint64_t b = rk_sb_backup_offset(dsize);
	memcpy(mem + RK_SB_PRIMARY_OFF, data, n);
	if (b)
		memcpy(mem + b, data, n);
	struct rk_sb_read r;
	rk_err e = rk_sb_read(d, &r);
	if ((e == RK_OK) != (r.chosen >= 0) || (r.chosen >= 0 && r.copy[r.chosen].status != RK_COPY_OK))
		abort();
	rk_sb_read_free(&r);
	rk_dev_close(d);
	return 0;
}
