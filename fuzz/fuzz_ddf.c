/* fuzz_ddf.c: the DDF decoder (fmt_ddf.c) on arbitrary bytes.
 *
 * The input is the tail of a member: it is put at the end of a memory
 * device of 1 MiB + its size (room for the data areas the views record)
 * and decoded through the formats table's "ddf" entry; whatever decodes
 * has its views taken (each one returned must pass rk_view_check, or the
 * harness aborts) and is printed as text and JSON.  Each input is tried
 * once as it is and once with every checksum the decoder will look at made
 * right, so that a fuzzer's mutations reach the bounds checks and views.  The same bytes are
 * also tried as the tail of a device of their own size, so that LBAs
 * pointing below the input are refused rather than read.  Seeds
 * (fuzz/corpus/ddf/) are the last 27 sectors of containers built by
 * tests/unit/test_fmt_ddf.c (RK_DDF_WRITE_SEEDS=DIR) and made by mdadm.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "rk_dev.h"
#include "rk_fmt.h"
#include "rk_json.h"
#include "rk_le.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* DDF's CRC of LEN bytes at B, stored at B + 4. */
static void fix_crc(uint8_t *b, uint64_t len)
{
	memset(b + 4, 0xff, 4);
	uint32_t c = (uint32_t)crc32(0xffffffffUL, b, (uInt)len) ^ 0xffffffffu;
	for (int i = 0; i < 4; i++)
		b[4 + i] = (uint8_t)(c >> (24 - 8 * i));
}

/* Fixes the CRC of LEN sectors at sector LBA when they lie on the device. */
static void fix_at(uint8_t *mem, uint64_t sectors, uint64_t lba, uint64_t len)
{
	if (len && len <= 16384 && lba < sectors && len <= sectors - lba)
		fix_crc(mem + lba * 512, len * 512);
}

/* The sections of the header at sector H: controller, PD and VD records,
 * each configuration record, the disk data. */
static void fix_sections(uint8_t *mem, uint64_t sectors, uint64_t h)
{
	const uint8_t *b = mem + h * 512;
	uint32_t crl = (uint32_t)b[134] << 8 | b[135];
	for (unsigned s = 0; s < 5; s++) {
		uint64_t off = rk_get_be32(b + 192 + 8 * s), len = rk_get_be32(b + 196 + 8 * s);
		if (s == 0 || s == 4)
			len = len ? 1 : 0;
		if (s != 3) {
			fix_at(mem, sectors, h + off, len);
			continue;
		}
		for (uint64_t r = 0; crl && r + crl <= len && r < 64 * (uint64_t)crl; r += crl)
			if (h + off + r < sectors && rk_get_be32(mem + (h + off + r) * 512) == 0xEEEEEEEEu)
				fix_at(mem, sectors, h + off + r, crl);
	}
}

/* Every checksum the decoder checks, made right: the anchor's, then each
 * header's (given the anchor's bytes from the type on, which the decoder
 * compares) and its sections'. */
static void fix_all(uint8_t *mem, uint64_t size)
{
	uint64_t sectors = size / 512;
	if (sectors < 2)
		return;
	uint8_t *a = mem + (sectors - 1) * 512;
	fix_crc(a, 512);
	for (int k = 0; k < 2; k++) {
		uint64_t h = rk_get_be64(a + 96 + 8 * k);
		if (h >= sectors - 1)
			continue;
		memcpy(mem + h * 512 + 113, a + 113, 512 - 113);
		mem[h * 512 + 112] = (uint8_t)(k + 1);
		fix_crc(mem + h * 512, 512);
		fix_sections(mem, sectors, h);
	}
}

static void one(const uint8_t *data, size_t size, uint64_t prefix, int fix)
{
	const struct rk_meta_fmt *f = rk_meta_fmt_find("ddf");
	rk_dev *d;
	if (!f || rk_dev_mem(&d, "fuzz", prefix + size) != RK_OK)
		return;
	memcpy(rk_dev_mem_data(d) + prefix, data, size);
	if (fix)
		fix_all(rk_dev_mem_data(d), prefix + size);
	void *obj = NULL;
	if (f->decode(d, "fuzz", &obj) == RK_OK) {
		struct rk_sb *v = NULL;
		uint32_t n = 0;
		if (f->views(obj, rk_dev_size(d), &v, &n) == RK_OK) {
			for (uint32_t i = 0; i < n; i++)
				if (rk_view_check(&v[i], rk_dev_size(d)) != RK_OK)
					abort();
		} else if (v || n)
			abort();   /* a refusal returns nothing */
		free(v);
		FILE *out = fopen("/dev/null", "w");
		if (out) {
			f->print_text(out, obj, "  ");
			rk_json *j = rk_json_new(out);
			if (j) {
				f->print_json(j, obj);
				rk_json_free(j);
			}
			fclose(out);
		}
		f->release(obj);
	}
	struct rk_probe_result r;
	(void)f->probe(d, "fuzz", &r);
	rk_dev_close(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > (1u << 20))
		return 0;
	for (int fix = 0; fix < 2; fix++) {
		one(data, size, 1u << 20, fix);
		one(data, size, 0, fix);
	}
	return 0;
}
