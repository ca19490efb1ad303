/* dev_table.c: rk_dev_table_fd (rk_dev.h): what libblkid needs of an
 * image's media to read its partition table, in a memory file, since
 * libblkid reads a file descriptor and an image's descriptor shows the
 * container, not the media (spec/images.md). */
#include "rk_dev.h"
#include "dev_image.h"
#include "rk_le.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define TABLE_EDGE (1u << 20)   /* MBR, GPT header and entries; the backup GPT */
#define EBR_HOPS   256u         /* logical partitions followed at most */

/* LEN bytes at OFF of D copied to FD at the same offset; 0 when done. */
static int copy_at(rk_dev *d, int fd, uint64_t off, size_t len)
{
	uint8_t *b = malloc(len ? len : 1);
	int ok = b && rk_dev_pread(d, b, len, off) == RK_OK && pwrite(fd, b, len, (off_t)off) == (ssize_t)len;
	free(b);
	return ok ? 0 : -1;
}

/* The first sector's extended partition (types 0x05, 0x0f, 0x85): its
 * start LBA, 0 when none. */
static uint64_t extended_start(const uint8_t *mbr)
{
	if (mbr[510] != 0x55 || mbr[511] != 0xaa)
		return 0;
	for (int i = 0; i < 4; i++) {
		const uint8_t *e = mbr + 446 + 16 * i;
		if (e[4] == 0x05 || e[4] == 0x0f || e[4] == 0x85)
			return rk_get_le32(e + 8);
	}
	return 0;
}

/* Copies the boot records of the extended partition's chain into FD. */
static void copy_ebrs(rk_dev *d, int fd)
{
	uint8_t s[512];
	uint64_t size = rk_dev_size(d);
	if (size < 512 || rk_dev_pread(d, s, 512, 0) != RK_OK)
		return;
	uint64_t ext = extended_start(s), cur = ext;
	for (unsigned hop = 0; ext && hop < EBR_HOPS; hop++) {
		if (cur > (size - 512) / 512 || rk_dev_pread(d, s, 512, cur * 512) != RK_OK ||
		    pwrite(fd, s, 512, (off_t)(cur * 512)) != 512 || s[510] != 0x55 || s[511] != 0xaa)
			return;
		const uint8_t *next = s + 446 + 16;   /* the chain's link: the second entry */
		uint32_t rel = rk_get_le32(next + 8);
		if (!(next[4] == 0x05 || next[4] == 0x0f || next[4] == 0x85) || rel == 0)
			return;
		cur = ext + rel;
	}
}

int rk_dev_table_fd(const char *path)
{
	char first[8];
	uint32_t n = 1;
	struct stat st;
	/* images are regular files; a later segment is no image of its own */
	if (!path || stat(path, &st) != 0 || !S_ISREG(st.st_mode) || rk_dev_segment_of(path, first, sizeof first, &n))
		return -1;
	rk_dev *d = NULL;
	if (rk_dev_open(&d, path, RK_DEV_RDONLY) != RK_OK)
		return -1;
	if (!rk_dev_has_ops(d, &dev_ewf_ops) && !rk_dev_has_ops(d, &dev_split_ops)) {
		rk_dev_close(d);
		return -1;
	}
	uint64_t size = rk_dev_size(d);
	size_t edge = size < TABLE_EDGE ? (size_t)size : TABLE_EDGE;
	int fd = memfd_create("raidkit-table", MFD_CLOEXEC);
	if (fd >= 0 && (ftruncate(fd, (off_t)size) != 0 || copy_at(d, fd, 0, edge) != 0 ||
	                copy_at(d, fd, size - edge, edge) != 0)) {
		close(fd);
		fd = -1;
	}
	if (fd >= 0)
		copy_ebrs(d, fd);
	rk_dev_close(d);
	return fd;
}
