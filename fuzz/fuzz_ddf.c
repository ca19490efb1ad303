/* fuzz_ddf.c: the DDF decoder (fmt_ddf.c) on arbitrary bytes.
 *
 * The input is the tail of a member: it is put at the end of a memory
 * device of 1 MiB + its size (room for the data areas the views record)
 * and decoded through the formats table's "ddf" entry; whatever decodes
 * has its views taken (each one returned must pass rk_view_check, or the
 * harness aborts) and is printed as text and JSON.  The same bytes are
 * also tried as the tail of a device of their own size, so that LBAs
 * pointing below the input are refused rather than read.  Seeds
 * (fuzz/corpus/ddf/) are the last 27 sectors of containers built by
 * tests/unit/test_fmt_ddf.c (RK_DDF_WRITE_SEEDS=DIR) and made by mdadm.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rk_dev.h"
#include "rk_fmt.h"
#include "rk_json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void one(const uint8_t *data, size_t size, uint64_t prefix)
{
	const struct rk_meta_fmt *f = rk_meta_fmt_find("ddf");
	rk_dev *d;
	if (!f || rk_dev_mem(&d, "fuzz", prefix + size) != RK_OK)
		return;
	memcpy(rk_dev_mem_data(d) + prefix, data, size);
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
	one(data, size, 1u << 20);
	one(data, size, 0);
	return 0;
}
