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

void rk_hex(const uint8_t *b, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[b[i] >> 4];
		out[2 * i + 1] = digits[b[i] & 15];
	}
	out[2 * n] = '\0';
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

/* The words form of byte C into OUT (room for 5): its length. */
static size_t esc_byte(unsigned char c, char out[5])
{
	if (c == '\\') {
		memcpy(out, "\\\\", 3);
		return 2;
	}
	if (c >= 0x20 && c < 0x7f) {
		out[0] = (char)c;
		out[1] = 0;
		return 1;
	}
	snprintf(out, 5, "\\x%02x", c);
	return 4;
}

const char *rk_esc(const char *s, char *buf, size_t cap)
{
	size_t o = 0;
	if (!cap)
		return buf;
	for (; s && *s; s++) {
		char e[5];
		size_t n = esc_byte((unsigned char)*s, e);
		if (o + n >= cap)
			break;
		memcpy(buf + o, e, n);
		o += n;
	}
	buf[o] = 0;
	return buf;
}

/* Writes the N bytes at S to F in words form. */
static void esc_write(FILE *f, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char e[5];
		fwrite(e, 1, esc_byte((unsigned char)s[i], e), f);
	}
}

void rk_esc_vfprintf(FILE *f, const char *fmt, va_list ap)
{
	char small[1024], *text = small;
	va_list again;
	va_copy(again, ap);
	int n = vsnprintf(small, sizeof small, fmt, ap);
	if (n >= (int)sizeof small) {
		text = malloc((size_t)n + 1);
		if (text) {
			vsnprintf(text, (size_t)n + 1, fmt, again);
		} else {
			text = small;   /* no memory: the start of it */
			n = (int)sizeof small - 1;
		}
	}
	va_end(again);
	if (n < 0)
		return;
	size_t len = (size_t)n;
	int nl = len && text[len - 1] == '\n';
	esc_write(f, text, len - (size_t)nl);
	if (nl)
		fputc('\n', f);
	if (text != small)
		free(text);
}

void rk_esc_fprintf(FILE *f, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	rk_esc_vfprintf(f, fmt, ap);
	va_end(ap);
}
