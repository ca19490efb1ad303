/* resize_int.h: what resize.c and reshape_io.c share inside libmeta (not
 * installed). */
#ifndef RK_RESIZE_INT_H
#define RK_RESIZE_INT_H

#include <stdint.h>
#include "rk_dev.h"
#include "rk_err.h"
#include "rk_geom.h"
#include "rk_vol.h"

/* Derives G from the geometry fields and opens an engine over DEVS (NROLES
 * entries by role, NULL = missing) with every member's data area at DOFF
 * (reshapes keep data offsets uniform).  The devices stay the caller's. */
rk_err rk_resize_geom_vol(rk_vol **v, struct rk_geom *g, rk_dev *const *devs, int32_t level, uint32_t layout,
                          uint64_t chunk, uint32_t nroles, uint64_t ds, uint64_t doff);

#endif
