/* fuzz_ewf.c: E01 images from arbitrary bytes (engine/dev_ewf.c and
 * libewf behind it, opened through rk_dev_open as every tool does).
 *
 * The input is written as an E01 set in a fresh folder: where the EWF1
 * signature occurs again past the start, the input is cut there into the
 * next segment (x.E01, x.E02, ...; at most 8), so that seeds of several
 * segments can be made by concatenation.  The set is opened read-only; a
 * writable open must be refused.  When it opens: its size and sector size
 * must be sane, and its first, middle and last sectors are read (a read
 * may fail; it must not crash); the info and the segment list are asked
 * for.  Anything else aborts.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rk_dev.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
const char *__lsan_default_suppressions(void);

/* libewf 20140813 leaks a chunk buffer on some corrupt chunk tables
 * (libewf_chunk_data_initialize on an error path inside libewf, found by
 * this harness): not raidkit's to fix, so LeakSanitizer is told (used by
 * ASan builds only). */
const char *__lsan_default_suppressions(void)
{
	return "leak:libewf_chunk_data_initialize\n";
}

static const uint8_t SIG[8] = { 'E', 'V', 'F', 0x09, 0x0d, 0x0a, 0xff, 0x00 };

/* Writes DATA as segments DIR/x.E01 ...; returns how many, *FIRST_LEN
 * the first one's length. */
static int write_set(const char *dir, const uint8_t *data, size_t size, size_t *first_len)
{
	int n = 0;
	size_t at = 0;
	while (at < size && n < 8) {
		size_t end = size;
		for (size_t k = at + 8; k + 8 <= size; k++)
			if (!memcmp(data + k, SIG, 8)) {
				end = k;
				break;
			}
		char p[256];
		snprintf(p, sizeof p, "%s/x.E%02d", dir, n + 1);
		FILE *f = fopen(p, "wb");
		if (!f)
			break;
		fwrite(data + at, 1, end - at, f);
		fclose(f);
		if (n == 0)
			*first_len = end;
		n++;
		at = end;
	}
	return n;
}

static void read_some(rk_dev *d)
{
	uint64_t size = rk_dev_size(d);
	uint32_t sec = rk_dev_sector(d);
	if (sec < 512 || sec > 65536 || (sec & (sec - 1)) || size > (uint64_t)INT64_MAX)
		abort();
	uint8_t *b = malloc(sec);
	if (!b)
		return;
	uint64_t at[3] = { 0, size / 2 / sec * sec, size >= sec ? size - sec : 0 };
	for (int i = 0; i < 3; i++)
		if (size >= sec)
			(void)rk_dev_pread(d, b, sec, at[i]);
	if (rk_dev_pread(d, b, 1, size) == RK_OK)
		abort();   /* past the end */
	free(b);
	struct rk_ewf_info info;
	if (rk_dev_ewf_info(d, &info) != RK_OK || info.media_size != size)
		abort();
	for (uint32_t i = 0; i < rk_dev_segments(d); i++)
		if (!rk_dev_segment_path(d, i))
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 1u << 20)
		return 0;
	char dir[] = "/tmp/fuzz_ewf.XXXXXX";
	if (!mkdtemp(dir))
		return 0;
	size_t first_len = 0;
	int n = write_set(dir, data, size, &first_len);
	char first[256];
	snprintf(first, sizeof first, "%s/x.E01", dir);
	rk_dev *d = NULL;
	if (n > 0) {
		/* an EWF signature (the open reads 16 bytes): never opened for writing */
		if (first_len >= 16 && !memcmp(data, SIG, 8) && rk_dev_open(&d, first, RK_DEV_RDWR) == RK_OK)
			abort();
		if (rk_dev_open(&d, first, RK_DEV_RDONLY) == RK_OK) {
			if (strcmp(rk_dev_backend(d), "ewf") != 0 && strcmp(rk_dev_backend(d), "file") != 0)
				abort();
			if (!strcmp(rk_dev_backend(d), "ewf"))
				read_some(d);
			rk_dev_close(d);
		}
	}
	for (int i = 1; i <= n; i++) {
		char p[256];
		snprintf(p, sizeof p, "%s/x.E%02d", dir, i);
		unlink(p);
	}
	rmdir(dir);
	return 0;
}
