/* fmt_ddf.c: DDF metadata (stub: recognised by libblkid only, until the
 * decoder lands). */
#include <stdlib.h>

#include "fmt_int.h"

static rk_err ddf_probe(rk_dev *d, const char *path, struct rk_probe_result *r)
{
	(void)d;
	(void)path;
	r->found = 0;
	return RK_OK;
}

static rk_err ddf_decode(rk_dev *d, const char *path, void **out)
{
	(void)d;
	(void)out;
	return rk_fail(RK_E_NOSB, "%s: no DDF metadata", path);
}

static void ddf_text(FILE *f, const void *obj, const char *ind) { (void)f; (void)obj; (void)ind; }
static void ddf_json(rk_json *j, const void *obj) { (void)j; (void)obj; }

static rk_err ddf_views(const void *obj, uint64_t dev_size, struct rk_sb **out, uint32_t *n)
{
	(void)obj;
	(void)dev_size;
	*out = NULL;
	*n = 0;
	return RK_OK;
}

const struct rk_meta_fmt rk_fmt_ddf = {
	"ddf", "DDF", ddf_probe, ddf_decode, ddf_text, ddf_json, free, ddf_views,
};
