/* part.c: members inside whole disks (rk_part.h, spec/partitions.md).
 * libblkid reads the partition table (MBR with its logical partitions,
 * GPT, and whatever else it knows); a partition is served as a read-only
 * slice of the disk (engine/dev_slice.c) named PATH:pN. */
#include "rk_part.h"

#include <blkid/blkid.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "rk_le.h"
#include "rk_probe.h"
#include "rk_segnames.h"
#include "rk_util.h"

/* Longest PATH of a PATH:pN name handled. */
#define PART_PATH_MAX 4096

int rk_part_name_parse(const char *name, char *path, size_t cap, uint32_t *number)
{
	if (!name)
		return 0;
	const char *c = strrchr(name, ':');
	if (!c || c == name || c[1] != 'p' || c[2] < '1' || c[2] > '9')
		return 0;
	uint64_t n = 0;
	for (const char *p = c + 2; *p; p++) {
		if (*p < '0' || *p > '9')
			return 0;
		n = n * 10 + (uint64_t)(*p - '0');
		if (n > 0xffffffu)    /* far beyond any table's count */
			return 0;
	}
	size_t len = (size_t)(c - name);
	if (len >= cap)
		return 0;
	memcpy(path, name, len);
	path[len] = 0;
	*number = (uint32_t)n;
	return 1;
}

/* Words for the common partition types; NULL for the others. */
static const char *type_words(const char *type)
{
	static const struct { const char *type, *words; } tab[] = {
		{ "a19d880f-05fc-4d3b-a006-743f0f84911e", "Linux RAID" },
		{ "0657fd6d-a4ab-43c4-84e5-0933c84b4f4f", "Linux swap" },
		{ "0fc63daf-8483-4772-8e79-3d69d8477de4", "Linux filesystem" },
		{ "e6d6d379-f507-44c2-a23c-238f2a3df928", "Linux LVM" },
		{ "c12a7328-f81f-11d2-ba4b-00a0c93ec93b", "EFI System" },
		{ "21686148-6449-6e6f-744e-656564454649", "BIOS boot" },
		{ "ebd0a0a2-b9e5-4433-87c0-68b6b72699c7", "Microsoft basic data" },
		{ "e3c9e316-0b5c-4db8-817d-f92df00215ae", "Microsoft reserved" },
		{ "48465300-0000-11aa-aa11-00306544ecac", "Apple HFS+" },
		{ "0xfd", "Linux RAID autodetect" },
		{ "0x83", "Linux" },
		{ "0x82", "Linux swap" },
		{ "0x8e", "Linux LVM" },
		{ "0x07", "HPFS/NTFS/exFAT" },
		{ "0x0b", "W95 FAT32" },
		{ "0x0c", "W95 FAT32 (LBA)" },
		{ "0xef", "EFI System" },
		{ "0xda", "Non-FS data" },
	};
	for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
		if (strcasecmp(type, tab[i].type) == 0)
			return tab[i].words;
	return NULL;
}

/* Fills P from libblkid's PAR on a disk of DISK bytes (PATH names it in
 * the problem sentence). */
static void part_fill(struct rk_part *p, blkid_partition par, const char *path, uint64_t disk)
{
	memset(p, 0, sizeof *p);
	int no = blkid_partition_get_partno(par);
	p->number = no > 0 ? (uint32_t)no : 0;
	blkid_loff_t st = blkid_partition_get_start(par), sz = blkid_partition_get_size(par);
	uint64_t end = 0;
	int bad = st < 0 || sz < 0 || rk_mul_ovf((uint64_t)st, 512, &p->start) ||
	          rk_mul_ovf((uint64_t)sz, 512, &p->size) || rk_add_ovf(p->start, p->size, &end);
	const char *ts = blkid_partition_get_type_string(par);
	if (ts && ts[0])
		snprintf(p->type, sizeof p->type, "%s", ts);
	else
		snprintf(p->type, sizeof p->type, "0x%02x", (unsigned)blkid_partition_get_type(par) & 0xffu);
	const char *w = type_words(p->type);
	snprintf(p->type_words, sizeof p->type_words, "%s", w ? w : "");
	const char *nm = blkid_partition_get_name(par);
	if (nm)
		snprintf(p->label, sizeof p->label, "%s", nm);
	p->logical = blkid_partition_is_logical(par) ? 1 : 0;
	if (bad || p->number == 0)
		snprintf(p->problem, sizeof p->problem, "the partition table's entry is out of range "
		         "(start %lld, %lld sectors): a damaged partition table", (long long)st, (long long)sz);
	else if (end > disk)
		snprintf(p->problem, sizeof p->problem, "partition %u (bytes %llu to %llu) runs past the end of "
		         "%s (%llu bytes): a truncated image or a damaged partition table", p->number,
		         (unsigned long long)p->start, (unsigned long long)end, path, (unsigned long long)disk);
	else if (p->size == 0)
		snprintf(p->problem, sizeof p->problem, "partition %u is empty (0 bytes)", p->number);
}

/* The partitions of libblkid's list LS into T (extended containers left out). */
static rk_err table_fill(struct rk_part_table *t, blkid_partlist ls, const char *path)
{
	blkid_parttable tab = blkid_partlist_get_table(ls);
	if (tab) {
		const char *ty = blkid_parttable_get_type(tab), *id = blkid_parttable_get_id(tab);
		snprintf(t->type, sizeof t->type, "%s", ty ? ty : "");
		snprintf(t->id, sizeof t->id, "%s", id ? id : "");
	}
	int np = blkid_partlist_numof_partitions(ls);
	if (np <= 0)
		return RK_OK;
	t->parts = calloc((size_t)np, sizeof *t->parts);
	if (!t->parts)
		return rk_fail(RK_E_NOMEM, "%s: out of memory reading the partition table", path);
	for (int i = 0; i < np; i++) {
		blkid_partition par = blkid_partlist_get_partition(ls, i);
		if (!par || blkid_partition_is_extended(par))
			continue;
		part_fill(&t->parts[t->n++], par, path, t->disk_size);
	}
	return RK_OK;
}

rk_err rk_part_table_read(const char *path, struct rk_part_table *t)
{
	memset(t, 0, sizeof *t);
	if (!path)
		return RK_OK;
	/* An image (E01, split raw) shows libblkid its media, not the container. */
	int fd = rk_member_plain(path, NULL, 0) ? -1 : rk_dev_table_fd(path);
	/* O_NONBLOCK: a FIFO must not hang the open; files and disks ignore it. */
	if (fd < 0)
		fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return RK_OK;
	int is_reg = 0;
	if (rk_probe_fd_size(fd, &t->disk_size, &is_reg) != 0) {
		close(fd);
		return RK_OK;
	}
	blkid_probe pr = blkid_new_probe();
	if (!pr) {
		close(fd);
		return rk_fail(RK_E_NOMEM, "%s: libblkid: out of memory", path);
	}
	rk_err e = RK_OK;
	if (blkid_probe_set_device(pr, fd, 0, 0) == 0) {
		blkid_probe_enable_superblocks(pr, 0);
		blkid_probe_enable_partitions(pr, 1);
		blkid_probe_set_partitions_flags(pr, BLKID_PARTS_ENTRY_DETAILS);
		blkid_partlist ls = blkid_probe_get_partitions(pr);
		if (ls)
			e = table_fill(t, ls, path);
	}
	blkid_free_probe(pr);
	close(fd);
	if (e)
		rk_part_table_free(t);
	return e;
}

void rk_part_table_free(struct rk_part_table *t)
{
	if (!t)
		return;
	free(t->parts);
	memset(t, 0, sizeof *t);
}

rk_err rk_part_list(const char *path, char ***names, uint32_t *n)
{
	*names = NULL;
	*n = 0;
	struct rk_part_table t;
	rk_err e = rk_part_table_read(path, &t);
	if (e || t.n == 0)
		return e;
	char **v = calloc(t.n, sizeof *v);
	if (!v) {
		rk_part_table_free(&t);
		return rk_fail(RK_E_NOMEM, "%s: out of memory", path);
	}
	for (uint32_t i = 0; i < t.n; i++) {
		size_t len = strlen(path) + 16;
		if (!(v[i] = malloc(len))) {
			rk_part_list_free(v, i);
			rk_part_table_free(&t);
			return rk_fail(RK_E_NOMEM, "%s: out of memory", path);
		}
		snprintf(v[i], len, "%s:p%u", path, t.parts[i].number);
	}
	*names = v;
	*n = t.n;
	rk_part_table_free(&t);
	return RK_OK;
}

void rk_part_list_free(char **names, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

/* Whether NAME is the name of an object that exists (or cannot be looked
 * at for another reason than not existing): then it is opened as a path. */
static int name_exists(const char *name)
{
	struct stat st;
	return stat(name, &st) == 0 || errno != ENOENT;
}

/* Finds partition NUMBER of PATH (NAME is PATH:pN) into *P: RK_OK, or an
 * error with a sentence naming NAME. */
static rk_err find_part(const char *name, const char *path, uint32_t number, struct rk_part *p)
{
	struct rk_part_table t;
	rk_err e = rk_part_table_read(path, &t);
	if (e)
		return e;
	if (!t.type[0] && t.n == 0) {
		rk_part_table_free(&t);
		return rk_fail(RK_E_OPEN, "%s: no such file, and %s holds no partition table libblkid "
		               "recognises", name, path);
	}
	for (uint32_t i = 0; i < t.n; i++)
		if (t.parts[i].number == number) {
			*p = t.parts[i];
			rk_part_table_free(&t);
			if (p->problem[0])
				return rk_fail(RK_E_RANGE, "%s: %s; not read", name, p->problem);
			return RK_OK;
		}
	char have[160] = "";
	for (uint32_t i = 0; i < t.n && i < 24; i++)
		rk_strcatf(have, sizeof have, "%s%u", i ? ", " : "", t.parts[i].number);
	/* libblkid leaves out logical partitions that lie past the end. */
	e = rk_fail(RK_E_OPEN, "%s: the %s partition table of %s has no partition %u (%s%s; an entry "
	            "past the end of the disk, as in a truncated image, is not counted)", name,
	            t.type[0] ? t.type : "", path, number, t.n ? "it has " : "it has none", have);
	rk_part_table_free(&t);
	return e;
}

rk_err rk_member_open(rk_dev **out, const char *name, unsigned flags)
{
	char path[PART_PATH_MAX];
	uint32_t number = 0;
	if (out)
		*out = NULL;
	if (!out || !name || name_exists(name) || !rk_part_name_parse(name, path, sizeof path, &number) ||
	    !name_exists(path))
		return rk_member_open_path(out, name, flags);
	if (flags & ~(RK_DEV_RDWR | RK_DEV_CREATE | RK_DEV_DIRECT | RK_DEV_PLAIN))
		return rk_fail(RK_E_INVAL, "%s: invalid open flags 0x%x", name, flags);
	struct rk_part p;
	rk_err e = find_part(name, path, number, &p);
	if (e)
		return e;
	if (flags & RK_DEV_RDWR)
		return rk_fail(RK_E_NOTSUP, "%s: a partition of a whole disk is read only; "
		               "export the volume for a writable copy", name);
	rk_dev *disk = NULL;
	unsigned plain = rk_member_plain(path, NULL, 0) ? RK_DEV_PLAIN : 0;
	if ((e = rk_dev_open(&disk, path, (flags & RK_DEV_DIRECT) | plain))) {
		char why[512];
		snprintf(why, sizeof why, "%s", rk_errmsg());
		return rk_fail(e, "%s: %s", name, why);
	}
	/* The disk may have changed since the table was read: the slice checks
	 * the window against the size the open found. */
	return rk_dev_slice(out, disk, p.start, p.size, name, 1);
}

int rk_part_locate(const char *name, char **path, uint64_t *offset, uint64_t *size)
{
	char pp[PART_PATH_MAX];
	uint32_t number = 0;
	struct rk_part p;
	*path = NULL;
	if (!name || name_exists(name) || !rk_part_name_parse(name, pp, sizeof pp, &number) || !name_exists(pp))
		return 0;
	if (find_part(name, pp, number, &p) != RK_OK)
		return 0;
	if (!(*path = strdup(pp)))
		return 0;
	*offset = p.start;
	*size = p.size;
	return 1;
}

int rk_gpt_header_ok(const uint8_t *p)
{
	if (memcmp(p, "EFI PART", 8))
		return 0;
	uint32_t hs = rk_get_le32(p + 12);
	if (hs < 92 || hs > 512)
		return 0;
	uint8_t h[512];
	memcpy(h, p, hs);
	memset(h + 16, 0, 4);
	return (uint32_t)crc32(0, h, hs) == rk_get_le32(p + 16);
}
