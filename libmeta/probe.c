/* probe.c: what a member already holds: our superblock (either copy), then
 * libblkid's superblock (file systems, foreign RAID metadata) and partition
 * table probes.  Read-only throughout. */
#include "rk_probe.h"

#include <blkid/blkid.h>
#include <stdio.h>
#include <string.h>
#include <uuid/uuid.h>

#include "rk_sb.h"

static void copy_str(char *dst, size_t cap, const char *src)
{
	if (!src)
		src = "";
	snprintf(dst, cap, "%s", src);
}

/* Printable copy of a blkid value (UUIDs of some formats hold raw bytes):
 * libblkid's own encoding, as udev's ID_FS_*_ENC (valid UTF-8 kept, other
 * bytes and white space as \xNN), so it compares with `blkid -p -o udev`. */
static void copy_encoded(char *dst, size_t cap, const char *src, size_t len)
{
	char tmp[512];
	size_t n = len < sizeof tmp - 1 ? len : sizeof tmp - 1;
	memcpy(tmp, src, n);
	tmp[n] = 0;
	if (blkid_encode_string(tmp, dst, cap) != 0)
		snprintf(dst, cap, "(unprintable)");
}

/* Printable ASCII copy, other bytes as \xNN. */
static void copy_printable(char *dst, size_t cap, const char *src, size_t len)
{
	size_t o = 0;
	for (size_t i = 0; i < len && src[i] && o + 5 < cap; i++) {
		unsigned char c = (unsigned char)src[i];
		if (c >= 0x20 && c < 0x7f && c != '\\') {
			dst[o++] = (char)c;
		} else {
			snprintf(dst + o, cap - o, "\\x%02x", c);
			o += 4;
		}
	}
	dst[o] = 0;
}

static const char *lookup(blkid_probe pr, const char *name, size_t *len)
{
	const char *v = NULL;
	size_t l = 0;
	if (blkid_probe_lookup_value(pr, name, &v, &l) != 0)
		return NULL;
	if (len)
		*len = l;
	return v;
}

/* Words for common blkid types; the raw TYPE otherwise. */
static const char *type_words(const char *type, const char *usage)
{
	static const struct { const char *type, *words; } tab[] = {
		{ "linux_raid_member", "an md RAID member" },
		{ "ddf_raid_member", "a DDF RAID member (SNIA DDF)" },
		{ "isw_raid_member", "an Intel Matrix/IMSM RAID member" },
		{ "adaptec_raid_member", "an Adaptec RAID member" },
		{ "hpt37x_raid_member", "a HighPoint 37x RAID member" },
		{ "hpt45x_raid_member", "a HighPoint 45x RAID member" },
		{ "jmicron_raid_member", "a JMicron RAID member" },
		{ "lsi_mega_raid_member", "an LSI MegaRAID member" },
		{ "nvidia_raid_member", "an NVIDIA RAID member" },
		{ "promise_fasttrack_raid_member", "a Promise FastTrack RAID member" },
		{ "silicon_medley_raid_member", "a Silicon Image Medley RAID member" },
		{ "via_raid_member", "a VIA RAID member" },
		{ "LVM2_member", "an LVM2 physical volume" },
		{ "crypto_LUKS", "a LUKS encrypted volume" },
		{ "dos", "a DOS (MBR) partition table" },
		{ "gpt", "a GPT partition table" },
		{ "swap", "a swap area" },
	};
	for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
		if (strcmp(type, tab[i].type) == 0)
			return tab[i].words;
	(void)usage;
	return NULL;
}

static void describe(struct rk_probe_result *r)
{
	const char *w = type_words(r->type, r->usage);
	char base[160];
	if (w)
		snprintf(base, sizeof base, "%s (%s)", w, r->type);
	else if (strcmp(r->usage, "filesystem") == 0)
		snprintf(base, sizeof base, "a%s %s file system",
		         strchr("aeiouAEIOU", r->type[0]) ? "n" : "", r->type);
	else
		snprintf(base, sizeof base, "%s signature (%s)", r->type,
		         r->usage[0] ? r->usage : "unknown usage");
	char extra[96] = "";
	size_t o = 0;
	if (r->version[0])
		o += (size_t)snprintf(extra + o, sizeof extra - o, " version %.20s", r->version);
	if (r->uuid[0] && o < sizeof extra)
		o += (size_t)snprintf(extra + o, sizeof extra - o, ", UUID %.40s", r->uuid);
	if (r->label[0] && o < sizeof extra)
		snprintf(extra + o, sizeof extra - o, ", label \"%.30s\"", r->label);
	snprintf(r->what, sizeof r->what, "%s%s", base, extra);
}

static rk_err probe_native(const char *path, struct rk_probe_result *r)
{
	rk_dev *d = NULL;
	rk_err e = rk_dev_open(&d, path, RK_DEV_RDONLY);
	if (e)
		return e;
	struct rk_sb_read rd;
	e = rk_sb_read(d, &rd);
	rk_dev_close(d);
	if (e == RK_OK && rd.chosen >= 0 && rd.copy[rd.chosen].sb) {
		const struct rk_sb *sb = rd.copy[rd.chosen].sb;
		r->found = 1;
		copy_str(r->type, sizeof r->type, "raidkit");
		copy_str(r->usage, sizeof r->usage, "raid");
		char u[37];
		uuid_unparse_lower(sb->array_uuid, u);
		copy_str(r->uuid, sizeof r->uuid, u);
		copy_str(r->label, sizeof r->label, sb->name);
		snprintf(r->version, sizeof r->version, "%u", sb->version);
		char role[32];
		if (sb->this_role == RK_ROLE_NONE)
			snprintf(role, sizeof role, "a spare");
		else
			snprintf(role, sizeof role, "role %u", sb->this_role);
		snprintf(r->what, sizeof r->what,
		         "a raidkit member (%s of %u, events %llu) of array UUID %s%s%.32s%s",
		         role, sb->nroles, (unsigned long long)sb->events, u,
		         sb->name[0] ? " \"" : "", sb->name, sb->name[0] ? "\"" : "");
	}
	rk_sb_read_free(&rd);
	if (e == RK_E_NOSB)
		e = RK_OK;
	return e;
}

static rk_err probe_blkid(const char *path, struct rk_probe_result *r)
{
	blkid_probe pr = blkid_new_probe_from_filename(path);
	if (!pr)
		return rk_fail(RK_E_OPEN, "%s: libblkid cannot probe it", path);
	blkid_probe_enable_superblocks(pr, 1);
	blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE | BLKID_SUBLKS_USAGE |
	                                  BLKID_SUBLKS_UUID | BLKID_SUBLKS_LABEL |
	                                  BLKID_SUBLKS_VERSION);
	blkid_probe_enable_partitions(pr, 1);
	blkid_probe_set_partitions_flags(pr, 0);
	int rc = blkid_do_safeprobe(pr);
	int ambivalent = 0;
	if (rc == -2) {
		/* Several signatures: report the first, and say so. */
		ambivalent = 1;
		blkid_reset_probe(pr);
		rc = blkid_do_probe(pr);
	}
	if (rc < 0) {
		blkid_free_probe(pr);
		return rk_fail(RK_E_IO, "%s: libblkid probing failed", path);
	}
	if (rc == 0) {
		size_t len = 0;
		const char *v;
		if ((v = lookup(pr, "TYPE", NULL))) {
			copy_str(r->type, sizeof r->type, v);
			copy_str(r->usage, sizeof r->usage, lookup(pr, "USAGE", NULL));
		} else if ((v = lookup(pr, "PTTYPE", NULL))) {
			copy_str(r->type, sizeof r->type, v);
			copy_str(r->usage, sizeof r->usage, "partition table");
			if ((v = lookup(pr, "PTUUID", &len)))
				copy_encoded(r->uuid, sizeof r->uuid, v, len);
		}
		if (r->type[0]) {
			r->found = 1;
			if ((v = lookup(pr, "UUID", &len)))
				copy_encoded(r->uuid, sizeof r->uuid, v, len);
			if ((v = lookup(pr, "LABEL", &len)))
				copy_encoded(r->label, sizeof r->label, v, len);
			if ((v = lookup(pr, "VERSION", &len)))
				copy_printable(r->version, sizeof r->version, v, len);
			describe(r);
			if (ambivalent) {
				size_t n = strlen(r->what);
				snprintf(r->what + n, sizeof r->what - n,
				         " (and other signatures: ambivalent)");
			}
		}
	}
	blkid_free_probe(pr);
	return RK_OK;
}

rk_err rk_probe_path(const char *path, struct rk_probe_result *r)
{
	if (!path || !r)
		return rk_fail(RK_E_INVAL, "rk_probe_path: no path");
	memset(r, 0, sizeof *r);
	rk_err e = probe_native(path, r);
	if (e)
		return e;
	if (r->found)
		return RK_OK;
	return probe_blkid(path, r);
}

rk_err rk_probe_foreign(const char *path, struct rk_probe_result *r)
{
	if (!path || !r)
		return rk_fail(RK_E_INVAL, "rk_probe_foreign: no path");
	memset(r, 0, sizeof *r);
	return probe_blkid(path, r);
}
