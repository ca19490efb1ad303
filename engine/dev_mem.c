/* dev_mem.c: zero-filled in-memory devices for tests and fuzzing. */
#include "rk_dev.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

struct mem_priv {
	uint8_t *data;
};

static rk_err mem_pread(rk_dev *d, void *buf, size_t len, uint64_t off)
{
	struct mem_priv *m = rk_dev_priv(d);
	memcpy(buf, m->data + off, len);
	return RK_OK;
}

static rk_err mem_pwrite(rk_dev *d, const void *buf, size_t len, uint64_t off)
{
	struct mem_priv *m = rk_dev_priv(d);
	memcpy(m->data + off, buf, len);
	return RK_OK;
}

static void mem_close(rk_dev *d)
{
	struct mem_priv *m = rk_dev_priv(d);
	if (!m)
		return;
	free(m->data);
	free(m);
}

static const struct rk_dev_ops mem_ops = {
	.name = "mem", .pread = mem_pread, .pwrite = mem_pwrite,
	.close = mem_close,
};

#define HUGE_PAGE (2u << 20)

/* Asks for huge pages over the whole 2 MiB pages of DATA's SIZE bytes.
 * Suites make and drop thousands of member-sized devices; with 4 KiB pages
 * their first touch was most of some suites' time (page faults are dear
 * on virtual machines).  Advice only: refused or unsupported, nothing
 * changes. */
static void advise_huge(uint8_t *data, size_t size)
{
	uintptr_t a = ((uintptr_t)data + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
	uintptr_t b = ((uintptr_t)data + size) & ~(uintptr_t)(HUGE_PAGE - 1);
	if (b > a)
		(void)madvise((void *)a, b - a, MADV_HUGEPAGE);
}

rk_err rk_dev_mem(rk_dev **out, const char *name, uint64_t size)
{
	struct mem_priv *m;

	if (out)
		*out = NULL;
	if (!out)
		return rk_fail(RK_E_INVAL, "no output for the memory device");
	if (!name)
		name = "(mem)";
	if (size > (uint64_t)SIZE_MAX || size > (uint64_t)INT64_MAX)
		return rk_fail(RK_E_RANGE, "%s: size %llu too large for memory", name, (unsigned long long)size);
	m = calloc(1, sizeof *m);
	/* calloc(1, 0) may return NULL; one spare byte keeps data non-NULL. */
	if (!m || !(m->data = calloc(1, (size_t)size + (size == 0))) ) {
		free(m);
		return rk_fail(RK_E_NOMEM, "%s: cannot allocate %llu bytes", name, (unsigned long long)size);
	}
	advise_huge(m->data, (size_t)size);
	return rk_dev_new(out, &mem_ops, m, name, size, 512, 1);
}

uint8_t *rk_dev_mem_data(rk_dev *d)
{
	if (!rk_dev_has_ops(d, &mem_ops))
		return NULL;
	return ((struct mem_priv *)rk_dev_priv(d))->data;
}
