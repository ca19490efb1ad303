/* fuzz_part.c: partition tables from arbitrary bytes (libblkid's parsing,
 * raidkit's use of it: rk_part_table_read, rk_part_list, rk_member_open).
 *
 * The input is the start of a disk image (MBR or GPT header and entries);
 * the image is made 4 MiB long (sparse) so that partitions can lie inside
 * it, and its last 16 KiB repeat the input's first 16 KiB (where a GPT
 * keeps its backup).  Every partition listed is opened and its first and
 * last sectors read; a partition's window must lie inside the image and
 * a writable open must be refused.  Anything else aborts.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rk_dev.h"
#include "rk_part.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define DISK (4u << 20)

/* The image: the input at 0, its head again at the end. */
static int write_image(const char *path, const uint8_t *data, size_t size)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return -1;
	size_t head = size < 16384 ? size : 16384;
	int ok = ftruncate(fd, DISK) == 0 && pwrite(fd, data, size, 0) == (ssize_t)size &&
	         pwrite(fd, data, head, DISK - 16384) == (ssize_t)head;
	close(fd);
	return ok ? 0 : -1;
}

/* Partition NAME opened and read at both ends, its window inside the disk. */
static void open_one(const char *name)
{
	rk_dev *d;
	if (rk_member_open(&d, name, RK_DEV_RDWR) == RK_OK)
		abort();   /* partitions are read only */
	if (rk_member_open(&d, name, RK_DEV_RDONLY) != RK_OK)
		return;
	uint64_t n = rk_dev_size(d);
	if (n > DISK)
		abort();
	uint8_t buf[512];
	if (n >= 512 && (rk_dev_pread(d, buf, 512, 0) != RK_OK || rk_dev_pread(d, buf, 512, n - 512) != RK_OK))
		abort();
	if (rk_dev_pread(d, buf, 1, n) == RK_OK)
		abort();   /* past the window */
	rk_dev_close(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 65536)
		return 0;
	char path[64];
	snprintf(path, sizeof path, "/tmp/fuzz_part.%d.img", (int)getpid());
	if (write_image(path, data, size) == 0) {
		struct rk_part_table t;
		if (rk_part_table_read(path, &t) == RK_OK) {
			for (uint32_t i = 0; i < t.n; i++)
				if (!t.parts[i].problem[0] && (t.parts[i].start > DISK || t.parts[i].size > DISK - t.parts[i].start))
					abort();   /* served, yet not inside the disk */
			rk_part_table_free(&t);
		}
		char **names = NULL;
		uint32_t n = 0;
		if (rk_part_list(path, &names, &n) == RK_OK)
			for (uint32_t i = 0; i < n; i++)
				open_one(names[i]);
		rk_part_list_free(names, n);
	}
	unlink(path);
	return 0;
}
