/* rk_util.h: small helpers every layer uses, each written once.
 */
#ifndef RK_UTIL_H
#define RK_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* 1 when the N bytes at P are all zero (N 0: 1). */
int rk_buf_is_zero(const void *p, size_t n);

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

#endif
