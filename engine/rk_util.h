/* rk_util.h: small helpers every layer uses, each written once.
 */
#ifndef RK_UTIL_H
#define RK_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* 1 when the N bytes at P are all zero (N 0: 1). */
int rk_buf_is_zero(const void *p, size_t n);
/* Writes the N bytes at B as 2N lower-case hex digits and a NUL to OUT. */
void rk_hex(const uint8_t *b, size_t n, char *out);

/* Appends printf-style text to the NUL-terminated string in BUF (CAP bytes),
 * truncating, never overflowing; a full buffer is left as it is. */
__attribute__((format(printf, 3, 4)))
void rk_strcatf(char *buf, size_t cap, const char *fmt, ...);

/* 1 when paths A and B name the same object: the same block device (by
 * device number) or the same file (device and inode); 0 otherwise or when
 * either cannot be looked at. */
int rk_path_same_object(const char *a, const char *b);

/* Frees each of the N pointers in PTRS (NULL entries are fine).  With
 * RK_FREE_ALL(p, q, ...) a destructor frees its arrays in one statement. */
void rk_free_all(void *const *ptrs, size_t n);
#define RK_FREE_ALL(...) \
	rk_free_all((void *const[]){ __VA_ARGS__ }, sizeof((void *const[]){ __VA_ARGS__ }) / sizeof(void *))

/* ---- text from members and users, in words ----
 * Names, labels, UUID texts and paths come from members (a foreign
 * superblock holds any bytes) or from the command line.  Words output shows
 * them escaped: printable ASCII (0x20..0x7e) as it is, a backslash as \\,
 * every other byte as \xNN (two lower-case hex digits), so that a line
 * stays one line of printable ASCII (spec/discovery.md, "Text from
 * members").  JSON has its own escaping in rk_json_str(). */

/* The words form of S (NULL reads as "") into BUF of CAP bytes, cut before
 * an escape that does not fit; returns BUF.  RK_ESC_CAP(N) bytes hold the
 * words form of N bytes in full. */
#define RK_ESC_CAP(n) (4 * (n) + 1)
const char *rk_esc(const char *s, char *buf, size_t cap);

/* printf to F with the whole formatted text in words form, except that a
 * newline ending it is kept: for lines quoting member text. */
__attribute__((format(printf, 2, 3)))
void rk_esc_fprintf(FILE *f, const char *fmt, ...);
__attribute__((format(printf, 2, 0)))
void rk_esc_vfprintf(FILE *f, const char *fmt, va_list ap);

#endif
