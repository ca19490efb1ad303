/* part.c: members inside whole disks (rk_part.h).  Stub until partitions
 * land: names are paths, and no path holds partitions. */
#include <stdlib.h>

#include "rk_part.h"

rk_err rk_member_open(rk_dev **out, const char *name, unsigned flags)
{
	return rk_dev_open(out, name, flags);
}

rk_err rk_part_list(const char *path, char ***names, uint32_t *n)
{
	(void)path;
	*names = NULL;
	*n = 0;
	return RK_OK;
}

void rk_part_list_free(char **names, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}
