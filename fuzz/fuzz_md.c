/* fuzz_md.c: Linux md superblocks (1.x and 0.90) from arbitrary bytes.
 *
 * The input is one md superblock as it lies on a member (up to 4 KiB).  It
 * is put on memory devices where each md version looks for it (1.2 at
 * 4096, 1.1 at 0, 1.0 near the end, 0.90 in the last 64 KiB-aligned block)
 * of two sizes: one the superblock's own fields ask for, one small.  Each
 * placement is tried as given and with the checksum made right, so that
 * mutations reach the field checks.  rk_foreign_read decodes and builds
 * views; every view returned must pass rk_view_check, and both printers
 * run.  Anything else than a clean refusal aborts.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rk_dev.h"
#include "rk_fmt.h"
#include "rk_json.h"
#include "rk_le.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define SB_MAX 4096u

/* md 1.x's checksum written into SB (LEN bytes), when max_dev fits. */
static void md1_fix_csum(uint8_t *sb, size_t len)
{
	size_t n = 256 + (size_t)rk_get_le32(sb + 220) * 2;
	if (n <= len)
		rk_put_le32(sb + 216, rk_md1_csum(sb, n));
}

/* md 0.90's checksum (word 38) in the writer's byte order. */
static void md090_fix_csum(uint8_t *sb)
{
	int be = rk_get_le32(sb) != 0xa92b4efcu;
	uint64_t sum = 0;
	for (unsigned i = 0; i < 1024; i++)
		if (i != 38)
			sum += be ? rk_get_be32(sb + 4 * i) : rk_get_le32(sb + 4 * i);
	uint32_t c = (uint32_t)((sum & 0xffffffffu) + (sum >> 32));
	if (be) {
		sb[152] = (uint8_t)(c >> 24);
		sb[153] = (uint8_t)(c >> 16);
		sb[154] = (uint8_t)(c >> 8);
		sb[155] = (uint8_t)c;
	} else
		rk_put_le32(sb + 4 * 38, c);
}

/* Reads DEV for foreign formats and checks what came back. */
static void read_dev(rk_dev *d, uint64_t size)
{
	struct rk_foreign_read f;
	if (rk_foreign_read(d, "fuzz", &f) != RK_OK) {
		rk_foreign_read_free(&f);
		return;
	}
	for (uint32_t i = 0; i < f.nviews; i++)
		if (rk_view_check(&f.views[i], size) != RK_OK)
			abort();
	static FILE *null;
	if (!null)
		null = fopen("/dev/null", "w");
	if (f.fmt && f.obj && null) {
		f.fmt->print_text(null, f.obj, "  ");
		rk_json *j = rk_json_new(null);
		if (j) {
			f.fmt->print_json(j, f.obj);
			rk_json_free(j);
		}
	}
	rk_foreign_read_free(&f);
}

/* SB (LEN bytes) at AT of a memory device of SIZE bytes. */
static void place(const uint8_t *sb, size_t len, uint64_t size, uint64_t at)
{
	rk_dev *d;
	if (at >= size || size > (64u << 20) || rk_dev_mem(&d, "fuzz", size) != RK_OK)
		return;
	size_t n = len < size - at ? len : (size_t)(size - at);
	memcpy(rk_dev_mem_data(d) + at, sb, n);
	read_dev(d, size);
	rk_dev_close(d);
}

/* Every md version's place on devices of two sizes. */
static void place_all(const uint8_t *sb, size_t len)
{
	/* the size md 1.x's fields ask for: data offset + data size (sectors) */
	uint64_t want = len >= 144 ? (rk_get_le64(sb + 128) + rk_get_le64(sb + 136)) * 512 : 0;
	const uint64_t sizes[2] = { want >= 256 * 1024 && want <= (64u << 20) ? want : 4u << 20, 1u << 20 };
	for (int k = 0; k < 2; k++) {
		uint64_t s = sizes[k];
		place(sb, len, s, 4096);
		place(sb, len, s, 0);
		place(sb, len, s, (((s >> 9) - 16) & ~(uint64_t)7) << 9);
		place(sb, len, s, (s & ~(uint64_t)65535) - 65536);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t sb[SB_MAX];
	if (size > SB_MAX)
		return 0;
	memset(sb, 0, sizeof sb);
	memcpy(sb, data, size);
	place_all(sb, SB_MAX);
	if (size >= 256) {
		md1_fix_csum(sb, SB_MAX);
		place_all(sb, SB_MAX);
	}
	memset(sb, 0, sizeof sb);
	memcpy(sb, data, size);
	md090_fix_csum(sb);
	place_all(sb, SB_MAX);
	return 0;
}
