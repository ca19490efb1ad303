/* fuzz_discover.c: discovery over 1..4 hostile member images.
 *
 * Input encoding (compact, so seeds stay small and the fuzzer reaches both
 * superblock copies of every member directly):
 *   byte 0          members n = (b0 & 3) + 1; bit 2: filter on the first
 *                   member's array UUID (the --uuid path); bit 3: give the
 *                   first member twice (same file, two names)
 *   then per member:
 *     le32 size     image size in bytes, taken modulo 16 MiB
 *     le16 plen     bytes written at 4096 (the primary copy)
 *     plen bytes
 *     le16 blen     bytes written at the backup offset of SIZE
 *                   (align_down(size, 4096) - 65536; at 0 when that is below 4096)
 *     blen bytes
 * Short input ends the member list early.  Images are sparse temp files
 * (zero everywhere else).  Discovery and both printers run over the result.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rk_discover.h"
#include "rk_fmt.h"
#include "rk_json.h"
#include "rk_le.h"
#include "rk_print.h"
#include "rk_sb.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[64];

static void cleanup(void)
{
	char p[128];
	for (int i = 0; i < 4; i++) {
		snprintf(p, sizeof p, "%s/m%d", dir, i);
		unlink(p);
	}
	snprintf(p, sizeof p, "%s/twice", dir);
	unlink(p);
	rmdir(dir);
}

static int take(const uint8_t **p, size_t *left, size_t n)
{
	if (*left < n)
		return -1;
	*p += n;
	*left -= n;
	return 0;
}

static int write_at(int fd, const uint8_t *b, size_t n, uint64_t off)
{
	while (n) {
		ssize_t w = pwrite(fd, b, n, (off_t)off);
		if (w <= 0)
			return -1;
		b += w;
		n -= (size_t)w;
		off += (uint64_t)w;
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!dir[0]) {
		snprintf(dir, sizeof dir, "/tmp/rk_fuzzdisc.XXXXXX");
		if (!mkdtemp(dir)) {
			dir[0] = 0;
			return 0;
		}
		atexit(cleanup);
	}
	if (size < 1)
		return 0;
	/* The native md decoders see the raw bytes too (hostile headers). */
	{
		static struct rk_md1 md1;
		static struct rk_md090 md0;
		if (rk_md1_decode(&md1, data, size, 0) == RK_OK && md1.max_dev > RK_MD1_MAX_DEV)
			abort();
		(void)rk_md090_decode(&md0, data, size, 0);
	}
	const uint8_t *p = data;
	size_t left = size;
	uint8_t flags = p[0];
	take(&p, &left, 1);
	uint32_t want = (flags & 3u) + 1, n = 0;
	char names[6][128];
	char *paths[6];
	for (; n < want; n++) {
		if (left < 4)
			break;
		uint64_t isize = rk_get_le32(p) % (16u << 20);
		take(&p, &left, 4);
		snprintf(names[n], sizeof names[n], "%s/m%u", dir, n);
		paths[n] = names[n];
		int fd = open(names[n], O_RDWR | O_CREAT | O_TRUNC, 0600);
		if (fd < 0)
			return 0;
		if (ftruncate(fd, (off_t)isize) != 0) {
			close(fd);
			return 0;
		}
		uint64_t boff = (isize & ~(uint64_t)4095);
		boff = boff >= RK_SB_AREA + 4096 ? boff - RK_SB_AREA : 0;
		for (int k = 0; k < 2; k++) {
			if (left < 2)
				break;
			size_t len = rk_get_le16(p);
			take(&p, &left, 2);
			if (len > left)
				len = left;
			uint64_t at = k == 0 ? 4096 : boff;
			/* Keep the image its size: bytes past the end are dropped. */
			if (at < isize) {
				size_t fit = isize - at < len ? (size_t)(isize - at) : len;
				if (write_at(fd, p, fit, at) != 0) {
					close(fd);
					return 0;
				}
			}
			take(&p, &left, len);
		}
		close(fd);
	}
	if (n == 0)
		return 0;
	uint32_t np = n;
	if (flags & 8u) {
		snprintf(names[np], sizeof names[np], "%s/twice", dir);
		unlink(names[np]);
		if (link(names[0], names[np]) == 0) {
			paths[np] = names[np];
			np++;
		}
	}
	/* The --uuid filter: the first member's array UUID field (offset 48 of the primary) as written. */
	uint8_t uuid[16];
	const uint8_t *filter = NULL;
	if (flags & 4u) {
		int fd = open(names[0], O_RDONLY);
		memset(uuid, 0, sizeof uuid);
		if (fd >= 0) {
			if (pread(fd, uuid, 16, 4096 + 48) < 0)
				memset(uuid, 0, sizeof uuid);
			close(fd);
		}
		filter = uuid;
	}
	struct rk_discovery *d = NULL;
	if (rk_discover(&d, paths, np, filter) == RK_OK && d) {
		/* RK_FUZZ_PRINT=1 shows the result (to see what a seed does). */
		int show = getenv("RK_FUZZ_PRINT") != NULL;
		FILE *f = fopen("/dev/null", "w");
		if (show)
			rk_print_discovery_text(stdout, d);
		if (f) {
			rk_print_discovery_text(f, d);
			rk_json *j = rk_json_new(f);
			if (j) {
				rk_print_discovery_json(j, d);
				rk_json_free(j);
			}
			for (uint32_t a = 0; a < d->narrays; a++)
				for (uint32_t r = 0; r < d->arrays[a].nroles; r++)
					if (d->arrays[a].roles[r].sb) {
						rk_print_sb_text(f, d->arrays[a].roles[r].sb, "  ");
						rk_print_copies_text(f, &d->arrays[a].roles[r].rd, 1, "");
					}
			for (uint32_t i = 0; i < d->nleft; i++)
				rk_print_copies_text(f, &d->left[i].rd, 1, "");
			fclose(f);
		}
		/* Invariants every result keeps. */
		for (uint32_t a = 0; a < d->narrays; a++) {
			const struct rk_array_info *ai = &d->arrays[a];
			for (uint32_t r = 0; r < ai->nroles; r++) {
				const struct rk_member *m = &ai->roles[r];
				if (m->role != (int64_t)r || (m->path && m->cls != RK_MEMBER_ACTIVE) ||
				    (!m->path && m->cls != RK_MEMBER_MISSING))
					abort();
			}
		}
		uint32_t total = d->nleft;
		for (uint32_t a = 0; a < d->narrays; a++)
			total += d->arrays[a].nactive;
		if (total != np)
			abort();   /* every path gets exactly one place */
		rk_discovery_free(d);
	}
	return 0;
}
