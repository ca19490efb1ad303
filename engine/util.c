/* util.c: see rk_util.h. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "rk_util.h"

int rk_buf_is_zero(const void *p, size_t n)
{
	const uint8_t *b = p;
	/* a word at a time in the middle, bytes at the edges */
	while (n && ((uintptr_t)b & (sizeof(uint64_t) - 1))) {
		if (*b++)
			return 0;
		n--;
	}
	for (; n >= sizeof(uint64_t); n -= sizeof(uint64_t), b += sizeof(uint64_t)) {
		uint64_t w;
		memcpy(&w, b, sizeof w);
		if (w)
			return 0;
	}
	while (n--)
		if (*b++)
			return 0;
	return 1;
}

void rk_strcatf(char *buf, size_t cap, const char *fmt, ...)
{
	size_t n = strnlen(buf, cap);
	if (n + 1 >= cap)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf + n, cap - n, fmt, ap);
	va_end(ap);
}

int rk_path_same_object(const char *a, const char *b)
{
	struct stat x, y;
	if (stat(a, &x) || stat(b, &y))
		return 0;
	if (S_ISBLK(x.st_mode) && S_ISBLK(y.st_mode))
		return x.st_rdev == y.st_rdev;
	return x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

void rk_free_all(void *const *ptrs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(ptrs[i]);
}
