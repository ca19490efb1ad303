/* raidkit-plugin.c: an nbdkit plugin serving an array's volume over NBD.
 *
 *   nbdkit raidkit MEMBER... [member=PATH] [geometry=FILE] [uuid=UUID]
 *                  [readonly=true|false]
 *
 * Members are bare words (magic_config_key "member") or member=PATH.
 * Discovery picks the array as raid-assemble does (uuid= when there are
 * several); geometry=FILE serves an array without metadata described by a
 * geometry file (rk_geometry.h).  Read-only unless readonly=false and the
 * array is raidkit's own: then writes go through rk_array_write (the write
 * protocol and journal: crash-safe as raid-assemble --write), flush through
 * rk_array_flush, and the array is closed (marked clean) when nbdkit ends.
 * Other formats and geometry files refuse readonly=false at start-up with
 * the library's sentence.
 *
 * Threads: the stripe engine serialises calls on one volume (rk_vol.h) and
 * rk_array keeps per-array state (failed roles, the write step) that its
 * callers are expected not to touch concurrently (raid-assemble --mount
 * serves one request at a time too); one array is shared by every
 * connection, so the plugin asks for NBDKIT_THREAD_MODEL_SERIALIZE_ALL_REQUESTS.
 * Nothing is lost: the engine would serialise the calls anyway, and it
 * reads the members of one request in parallel itself. */
#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uuid/uuid.h>

#include "rk_array.h"
#include "rk_discover.h"
#include "rk_fmt.h"
#include "rk_geometry.h"

#define THREAD_MODEL NBDKIT_THREAD_MODEL_SERIALIZE_ALL_REQUESTS

static char **members;           /* as given, in order */
static uint32_t nmembers;
static const char *geometry;     /* geometry=FILE or NULL */
static int readonly = 1;         /* readonly=false makes it 0 */
static int have_uuid;
static uint8_t uuid[16];
static struct rk_discovery *found;   /* get_ready's discovery, until after_fork */
static rk_array *array;          /* opened in after_fork, closed in cleanup */

/* member=PATH (or a bare word): one more member. */
static int add_member(const char *value)
{
	if (!*value) {
		nbdkit_error("member: empty path");
		return -1;
	}
	/* absolute: nbdkit changes to / when it forks into the background,
	 * and the members open after that (PATH:pN and segment names need
	 * not exist as written, so no realpath) */
	char **nm = realloc(members, (nmembers + 1) * sizeof *members);
	if (nm)
		members = nm;
	if (!nm || !(nm[nmembers] = nbdkit_absolute_path(value)))
		return -1;
	members = nm;
	nmembers++;
	return 0;
}

static int raidkit_config(const char *key, const char *value)
{
	if (!strcmp(key, "member"))
		return add_member(value);
	if (!strcmp(key, "geometry")) {
		if (geometry || !*value) {
			nbdkit_error("geometry: %s", geometry ? "given twice" : "empty file name");
			return -1;
		}
		geometry = nbdkit_realpath(value);
		return geometry ? 0 : -1;
	}
	if (!strcmp(key, "readonly")) {
		int r = nbdkit_parse_bool(value);
		if (r < 0)
			return -1;
		readonly = r;
		return 0;
	}
	if (!strcmp(key, "uuid")) {
		if (uuid_parse(value, uuid)) {
			nbdkit_error("uuid: '%s' is not a UUID", value);
			return -1;
		}
		have_uuid = 1;
		return 0;
	}
	nbdkit_error("unknown parameter '%s' (member, geometry, uuid, readonly)", key);
	return -1;
}

static int raidkit_config_complete(void)
{
	if (!nmembers) {
		nbdkit_error("no member given: nbdkit raidkit MEMBER... (or member=PATH)");
		return -1;
	}
	if (geometry && have_uuid) {
		nbdkit_error("uuid: not with geometry= (the file names one array)");
		return -1;
	}
	if (geometry && !readonly) {
		nbdkit_error("readonly=false: an array described by a geometry file is read-only: nothing on the "
		             "images confirms the geometry, so raidkit never writes through one");
		return -1;
	}
	return 0;
}

/* Logs every member discovery left out, with the reason. */
static void log_left(const struct rk_discovery *d, const struct rk_array_info *a)
{
	for (uint32_t r = 0; r < a->nroles; r++)
		if (a->roles[r].cls != RK_MEMBER_ACTIVE)
			nbdkit_debug("role %u: %s: %s", r, rk_member_class_name(a->roles[r].cls), a->roles[r].reason);
	for (uint32_t i = 0; i < d->nleft; i++)
		nbdkit_debug("%s left out (%s): %s", d->left[i].path, rk_member_class_name(d->left[i].cls),
		             d->left[i].reason);
}

/* The array to serve: discovery (or the geometry file) and the pick. */
static int discover(struct rk_discovery **d)
{
	if (geometry) {
		struct rk_geometry g;
		if (rk_geometry_load(geometry, &g)) {
			nbdkit_error("geometry: %s", rk_errmsg());
			return -1;
		}
		rk_err e = rk_geometry_discover(d, &g, members, nmembers);
		rk_geometry_free(&g);
		if (e) {
			nbdkit_error("geometry: %s", rk_errmsg());
			return -1;
		}
		return 0;
	}
	if (rk_discover(d, members, nmembers, have_uuid ? uuid : NULL)) {
		nbdkit_error("%s", rk_errmsg());
		return -1;
	}
	int pick = rk_discovery_pick(*d, have_uuid ? uuid : NULL);
	if (pick < 0) {
		nbdkit_error("%s", !(*d)->narrays ? "no array found among the members given"
		                   : have_uuid ? "uuid: no such array among the members given"
		                   : "several arrays among the members: pick one with uuid=UUID");
		rk_discovery_free(*d);
		*d = NULL;
		return -1;
	}
	if (pick != 0) {   /* the chosen one first, for get_ready */
		struct rk_array_info t = (*d)->arrays[0];
		(*d)->arrays[0] = (*d)->arrays[pick];
		(*d)->arrays[pick] = t;
	}
	return 0;
}

/* Discovery, the array's state and whether it may be written, before
 * nbdkit forks (errors reach the user's terminal); the array itself opens
 * in after_fork, since the stripe engine starts threads, which a fork
 * would not carry over. */
static int raidkit_get_ready(void)
{
	if (discover(&found))
		return -1;
	const struct rk_array_info *a = &found->arrays[0];
	char u[37];
	uuid_unparse_lower(a->uuid, u);
	log_left(found, a);
	if (a->state == RK_ASTATE_FAILED || a->state == RK_ASTATE_CONFLICT || !a->sb) {
		nbdkit_error("array %s: cannot serve: %s", u, a->why[0] ? a->why : "too few members");
		return -1;
	}
	if (!readonly && a->sb->origin != RK_ORIGIN_RAIDKIT) {
		nbdkit_error("readonly=false: %s array: raidkit reads arrays other software made but does not write "
		             "to them; serve it read-only (the default)", rk_view_origin_name(a->sb));
		return -1;
	}
	nbdkit_debug("array %s: %s, %s: %s; metadata %s", u, rk_astate_name(a->state), readonly ? "read-only" : "read-write",
	             a->why, rk_view_origin_name(a->sb));
	return 0;
}

static int raidkit_after_fork(void)
{
	const struct rk_array_info *a = &found->arrays[0];
	rk_err e = rk_array_open_members(&array, a, found->left, found->nleft, readonly ? RK_ARRAY_RDONLY : RK_ARRAY_RDWR);
	if (e)
		nbdkit_error("%s", rk_errmsg());
	rk_discovery_free(found);
	found = NULL;
	return e ? -1 : 0;
}

/* The array is closed once every connection is gone: written arrays are
 * marked clean (rk_array_close). */
static void raidkit_cleanup(void)
{
	if (array && rk_array_close(array))
		nbdkit_error("closing the array: %s", rk_errmsg());
	array = NULL;
}

static void raidkit_unload(void)
{
	raidkit_cleanup();
	rk_discovery_free(found);
	for (uint32_t i = 0; i < nmembers; i++)
		free(members[i]);
	free(members);
	free((char *)(uintptr_t)geometry);
}

static void *raidkit_open(int client_readonly)
{
	(void)client_readonly;
	return NBDKIT_HANDLE_NOT_NEEDED;
}

static int64_t raidkit_get_size(void *h)
{
	(void)h;
	return (int64_t)rk_array_size(array);
}

static int raidkit_can_write(void *h)
{
	(void)h;
	return !readonly;
}

/* Flush means something only when writing. */
static int raidkit_can_flush(void *h)
{
	(void)h;
	return !readonly;
}

/* FUA: nbdkit flushes after the write (rk_array_flush is whole-array). */
static int raidkit_can_fua(void *h)
{
	(void)h;
	return readonly ? NBDKIT_FUA_NONE : NBDKIT_FUA_EMULATE;
}

/* Every connection serves the one array, all requests serialised, and a
 * flush flushes every member: what one connection flushed the others see. */
static int raidkit_can_multi_conn(void *h)
{
	(void)h;
	return 1;
}

/* No cache of our own: nbdkit emulates NBD_CMD_CACHE with a read, which
 * brings the members' blocks into the page cache (a prefetch). */
static int raidkit_can_cache(void *h)
{
	(void)h;
	return NBDKIT_CACHE_EMULATE;
}

static int raidkit_pread(void *h, void *buf, uint32_t count, uint64_t offset, uint32_t flags)
{
	(void)h;
	(void)flags;
	if (rk_array_read(array, buf, count, offset)) {
		nbdkit_error("reading volume bytes [%llu, +%u): %s", (unsigned long long)offset, count, rk_errmsg());
		errno = EIO;
		return -1;
	}
	return 0;
}

static int raidkit_flush(void *h, uint32_t flags)
{
	(void)h;
	(void)flags;
	if (rk_array_flush(array)) {
		nbdkit_error("flush: %s", rk_errmsg());
		errno = EIO;
		return -1;
	}
	return 0;
}

static int raidkit_pwrite(void *h, const void *buf, uint32_t count, uint64_t offset, uint32_t flags)
{
	if (readonly) {   /* can_write says no; never reached */
		errno = EROFS;
		return -1;
	}
	if (rk_array_write(array, buf, count, offset)) {
		nbdkit_error("writing volume bytes [%llu, +%u): %s", (unsigned long long)offset, count, rk_errmsg());
		errno = EIO;
		return -1;
	}
	return (flags & NBDKIT_FLAG_FUA) ? raidkit_flush(h, 0) : 0;
}

static struct nbdkit_plugin plugin = {
	.name = "raidkit",
	.longname = "raidkit: the volume of a software RAID array",
	.version = RK_VERSION,
	.description = "Serves the volume of a RAID array (raidkit, Linux md, DDF, IMSM, or a geometry file) "
	               "assembled from its member images",
	.config = raidkit_config,
	.config_complete = raidkit_config_complete,
	.config_help = "MEMBER|member=PATH ...  the member images (any order)\n"
	               "geometry=FILE           an array without metadata (raid-recover --save-geometry)\n"
	               "uuid=UUID               the array to serve when the members hold several\n"
	               "readonly=false          write (raidkit's own arrays only; default true)",
	.magic_config_key = "member",
	.get_ready = raidkit_get_ready,
	.after_fork = raidkit_after_fork,
	.cleanup = raidkit_cleanup,
	.unload = raidkit_unload,
	.open = raidkit_open,
	.get_size = raidkit_get_size,
	.can_write = raidkit_can_write,
	.can_flush = raidkit_can_flush,
	.can_fua = raidkit_can_fua,
	.can_multi_conn = raidkit_can_multi_conn,
	.can_cache = raidkit_can_cache,
	.pread = raidkit_pread,
	.pwrite = raidkit_pwrite,
	.flush = raidkit_flush,
	.errno_is_preserved = 1,
};

NBDKIT_REGISTER_PLUGIN(plugin)
