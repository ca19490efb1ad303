/* scrub_checkpoint.c: the scrub checkpoint file (see rk_scrub_checkpoint.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "rk_scrub_checkpoint.h"

rk_err rk_scrub_ckpt_save(const char *path, const struct rk_scrub_ckpt *c)
{
	char tmp[4096];
	if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp)
		return rk_fail(RK_E_INVAL, "%s: checkpoint path too long", path);
	FILE *f = fopen(tmp, "w");
	if (!f)
		return rk_fail(RK_E_OPEN, "%s: cannot write the checkpoint: %s", tmp, strerror(errno));
	fprintf(f, "raid-scrub checkpoint 1\nuuid ");
	for (int i = 0; i < 16; i++)
		fprintf(f, "%02x", c->uuid[i]);
	fprintf(f, "\nfirst %" PRIu64 "\nlast %" PRIu64 "\nnext %" PRIu64 "\nmismatches %" PRIu64
	        "\nrepaired %" PRIu64 "\nrepair %d\nunreadable %" PRIu64 "\nunrecoverable %" PRIu64 "\n", c->first,
	        c->last, c->next, c->mismatches, c->repaired, c->repair ? 1 : 0, c->unreadable, c->unrecoverable);
	int bad = fflush(f) != 0 || ferror(f) != 0 || fsync(fileno(f)) != 0;
	bad |= fclose(f) != 0;
	if (bad || rename(tmp, path)) {
		int er = errno;
		unlink(tmp);
		return rk_fail(RK_E_IO, "%s: cannot write the checkpoint: %s", path, strerror(er));
	}
	return RK_OK;
}

/* The lines a checkpoint must have (unreadable and unrecoverable may be
 * absent: older files). */
enum checkpoint_line {
	HAVE_VERSION = 1 << 0,
	HAVE_UUID = 1 << 1,
	HAVE_FIRST = 1 << 2,
	HAVE_LAST = 1 << 3,
	HAVE_NEXT = 1 << 4,
	HAVE_MISMATCHES = 1 << 5,
	HAVE_REPAIRED = 1 << 6,
	HAVE_REPAIR = 1 << 7,
	HAVE_ALL = (1 << 8) - 1,
};

rk_err rk_scrub_ckpt_load(const char *path, struct rk_scrub_ckpt *c)
{
	memset(c, 0, sizeof *c);
	FILE *f = fopen(path, "r");
	if (!f)
		return rk_fail(RK_E_OPEN, "%s: cannot open the checkpoint: %s", path, strerror(errno));
	char line[256], uuid[64] = "";
	int have = 0, ver = 0;
	if (fgets(line, sizeof line, f) && sscanf(line, "raid-scrub checkpoint %d", &ver) == 1 && ver == 1)
		have |= HAVE_VERSION;
	while (fgets(line, sizeof line, f)) {
		if (sscanf(line, "uuid %40s", uuid) == 1)
			have |= HAVE_UUID;
		else if (sscanf(line, "first %" SCNu64, &c->first) == 1)
			have |= HAVE_FIRST;
		else if (sscanf(line, "last %" SCNu64, &c->last) == 1)
			have |= HAVE_LAST;
		else if (sscanf(line, "next %" SCNu64, &c->next) == 1)
			have |= HAVE_NEXT;
		else if (sscanf(line, "mismatches %" SCNu64, &c->mismatches) == 1)
			have |= HAVE_MISMATCHES;
		else if (sscanf(line, "repaired %" SCNu64, &c->repaired) == 1)
			have |= HAVE_REPAIRED;
		else if (sscanf(line, "repair %d", &c->repair) == 1)
			have |= HAVE_REPAIR;
		else if (sscanf(line, "unreadable %" SCNu64, &c->unreadable) == 1 ||
		         sscanf(line, "unrecoverable %" SCNu64, &c->unrecoverable) == 1)
			continue;
	}
	fclose(f);
	if (have != HAVE_ALL || strlen(uuid) != 32 || c->first > c->last || c->next < c->first || c->next > c->last)
		return rk_fail(RK_E_CORRUPT, "%s: not a raid-scrub checkpoint (or damaged)", path);
	for (int i = 0; i < 16; i++) {
		unsigned v;
		if (sscanf(uuid + 2 * i, "%2x", &v) != 1)
			return rk_fail(RK_E_CORRUPT, "%s: bad uuid in checkpoint", path);
		c->uuid[i] = (uint8_t)v;
	}
	return RK_OK;
}
