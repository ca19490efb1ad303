/* fuzz_geometry.c: geometry files (rk_geometry_parse) from arbitrary bytes.
 *
 * The input is a geometry file's text.  Whatever parses must hold what the
 * open relies on: a geometry rk_geom_init takes, a volume it holds, roles
 * within members_total, every data area within 64 bits; it must write back
 * through rk_geometry_json to text that parses to the same geometry, and
 * rk_geometry_mdadm_line must answer (a line or a refusal) without
 * overrunning its buffer.  Anything else aborts.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rk_geom.h"
#include "rk_geometry.h"
#include "rk_json.h"
#include "rk_le.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A parsed geometry's invariants. */
static void check(const struct rk_geometry *g)
{
	struct rk_geom geo;
	uint64_t end;
	if (!g->roles || !g->nroles || g->nroles > 2032 || !g->volume_size)
		abort();
	if (rk_geom_init(&geo, g->level, g->layout, g->chunk, g->nroles, g->member_size) != RK_OK ||
	    geo.volume_size < g->volume_size || geo.member_size != g->member_size)
		abort();
	for (uint32_t r = 0; r < g->nroles; r++)
		if (rk_add_ovf(g->roles[r].offset, g->member_size, &end) || g->roles[r].offset % 512 ||
		    (g->roles[r].path && !g->roles[r].path[0]))
			abort();
}

/* Whether S is plain ASCII: rk_json writes bytes that are not
 * well-formed UTF-8 as the text \xNN, so such a path does not come back the
 * same (the file then matches that image by content only,
 * spec/geometry.md): only files with ASCII paths are written back. */
static int ascii(const unsigned char *s)
{
	for (; *s; s++)
		if (*s >= 0x80)
			return 0;
	return 1;
}

/* G written back and parsed again gives the same geometry. */
static void round_trip(const struct rk_geometry *g)
{
	for (uint32_t r = 0; r < g->nroles; r++)
		if (g->roles[r].path && !ascii((const unsigned char *)g->roles[r].path))
			return;   /* escaped as text, possibly past the 4096-byte limit */
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return;
	rk_json *j = rk_json_new(f);
	if (j) {
		rk_json_obj_begin(j);
		rk_geometry_json(j, g);
		rk_json_obj_end(j);
		rk_json_free(j);
	}
	fclose(f);
	struct rk_geometry h;
	if (!text || rk_geometry_parse("again", text, len, &h) != RK_OK)
		abort();
	if (h.level != g->level || h.layout != g->layout || h.chunk != g->chunk || h.nroles != g->nroles ||
	    h.volume_size != g->volume_size || h.member_size != g->member_size)
		abort();
	for (uint32_t r = 0; r < g->nroles; r++)
		if (h.roles[r].offset != g->roles[r].offset || h.roles[r].have_fp != g->roles[r].have_fp ||
		    !h.roles[r].path != !g->roles[r].path ||
		    (h.roles[r].path && strcmp(h.roles[r].path, g->roles[r].path)))
			abort();
	rk_geometry_free(&h);
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rk_geometry g;
	if (rk_geometry_parse("fuzz", (const char *)data, size, &g) != RK_OK)
		return 0;
	check(&g);
	round_trip(&g);
	char line[256];
	memset(line, 0x55, sizeof line);
	rk_err e = rk_geometry_mdadm_line(&g, line, sizeof line - 16);
	if ((e == RK_OK && strlen(line) >= sizeof line - 16) || line[sizeof line - 1] != 0x55)
		abort();
	rk_geometry_free(&g);
	return 0;
}
