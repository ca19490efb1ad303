/* cli_copy.c: the volume copied out to a file (raid-assemble --export,
 * raid-recover --detect's export and the copies its checks read). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "rk_array_stream.h"
#include "rk_util.h"

static int write_all(int fd, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static int put(int fd, int sparse, const uint8_t *buf, size_t n)
{
	if (sparse && rk_buf_is_zero(buf, n))
		return lseek(fd, (off_t)n, SEEK_CUR) < 0 ? -1 : 0;
	return write_all(fd, buf, n);
}

/* See cli.h. */
int cli_copy_volume(rk_array *arr, uint64_t off, uint64_t len, int fd, int sparse, int hashed,
                    struct cli_progress *pg, uint64_t *done, char *err, size_t cap)
{
	rk_array_stream *st;
	*done = 0;
	if (rk_array_stream_open(&st, arr, off, len, 0)) {
		snprintf(err, cap, "%s", rk_errmsg());
		return -1;
	}
	int rc = 0;
	while (*done < len) {
		const uint8_t *buf;
		size_t n;
		rk_err e = rk_array_stream_next(st, &buf, &n);
		if (e || n == 0) {
			size_t b = rk_array_stream_batch(st);
			snprintf(err, cap, "reading volume bytes [%" PRIu64 ", +%zu): %s", off + *done,
			         (size_t)(len - *done < b ? len - *done : b), e ? rk_errmsg() : "the stream ended early");
			rc = -1;
			break;
		}
		if (hashed)
			cli_hash_export_update(buf, n);   /* the bytes written, zero runs too */
		if (put(fd, sparse, buf, n)) {
			snprintf(err, cap, "write failed: %s", strerror(errno));
			rc = -1;
			break;
		}
		*done += n;
		if (pg)
			cli_progress_update(pg, *done);
	}
	rk_array_stream_close(st);
	off_t at;
	if (!rc && sparse && ((at = lseek(fd, 0, SEEK_CUR)) < 0 || ftruncate(fd, at))) {
		snprintf(err, cap, "write failed: %s", strerror(errno));
		rc = -1;
	}
	return rc;
}

/* See cli.h. */
int cli_tmpfile(char *path, size_t cap, const char *tag)
{
	const char *dir = getenv("TMPDIR");
	if (!dir || !*dir)
		dir = "/tmp";
	if ((size_t)snprintf(path, cap, "%s/%s.XXXXXX", dir, tag) >= cap) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return mkostemp(path, O_CLOEXEC);
}
