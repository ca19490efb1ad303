/* geom_names.c: levels and layouts as words and numbers: names, parsing,
 * defaults and which layout words a level knows (see rk_geom.h). */
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>
#include "rk_geom.h"

static int r6_layout_ok(uint32_t layout)
{
	return layout <= 5 || (layout >= 8 && layout <= 10) || (layout >= 16 && layout <= 20);
}

uint32_t rk_layout_default(int32_t level)
{
	switch (level) {
	case 4: return RK_ALG_PARITY_N;
	case 5: case 6: return RK_ALG_LEFT_SYMMETRIC;
	case 10: return RK_R10_LAYOUT(2, 1, 0);
	default: return 0;
	}
}

int rk_layout_valid(int32_t level, uint32_t layout)
{
	switch (level) {
	case RK_LEVEL_LINEAR: case 1: return layout == 0;
	case 0: return layout <= 2;        /* md's raid0 zone layouts; one zone here */
	case 4: return layout == 0 || layout == RK_ALG_PARITY_N;
	case 5: return layout <= 5;
	case 6: return r6_layout_ok(layout);
	case 10: {
		uint32_t nc = layout & 0xff, fc = (layout >> 8) & 0xff, mode = layout >> 17;
		return nc >= 1 && fc >= 1 && nc * fc >= 2 && mode <= 2;
	}
	default: return 0;
	}
}

const char *rk_level_name(int32_t level)
{
	switch (level) {
	case RK_LEVEL_LINEAR: return "linear";
	case 0: return "0";
	case 1: return "1";
	case 4: return "4";
	case 5: return "5";
	case 6: return "6";
	case 10: return "10";
	default: return "unknown";
	}
}

int rk_level_parse(const char *s, int32_t *level)
{
	if (!s)
		return -1;
	if (!strcasecmp(s, "linear")) {
		*level = RK_LEVEL_LINEAR;
		return 0;
	}
	if (!strncasecmp(s, "raid", 4))
		s += 4;
	static const struct { const char *n; int32_t l; } t[] = {
		{"0", 0}, {"1", 1}, {"4", 4}, {"5", 5}, {"6", 6}, {"10", 10},
		{"stripe", 0}, {"mirror", 1},
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
		if (!strcasecmp(s, t[i].n)) {
			*level = t[i].l;
			return 0;
		}
	return -1;
}

static const char *const r56_names[] = {
	"left-asymmetric", "right-asymmetric", "left-symmetric", "right-symmetric", "parity-first", "parity-last",
};
static const char *const r6_ddf_names[] = { "ddf-zero-restart", "ddf-N-restart", "ddf-N-continue" };
static const char *const r6_6_names[] = {
	"left-asymmetric-6", "right-asymmetric-6", "left-symmetric-6", "right-symmetric-6", "parity-first-6",
};

const char *rk_layout_name(int32_t level, uint32_t layout, char *buf, size_t len)
{
	if (!buf || len == 0)
		return "";
	const char *n = NULL;
	switch (level) {
	case RK_LEVEL_LINEAR: case 0: case 1:
		if (layout == 0 || (level == 0 && layout <= 2))
			n = "none";
		break;
	case 4:
		if (layout == 0 || layout == RK_ALG_PARITY_N)
			n = "parity-last";
		break;
	case 5: case 6:
		if (layout <= 5)
			n = r56_names[layout];
		else if (level == 6 && layout >= 8 && layout <= 10)
			n = r6_ddf_names[layout - 8];
		else if (level == 6 && layout >= 16 && layout <= 20)
			n = r6_6_names[layout - 16];
		break;
	case 10:
		if (rk_layout_valid(10, layout) && (layout >> 17) == 0) {
			uint32_t nc = layout & 0xff, fc = (layout >> 8) & 0xff, off = (layout >> 16) & 1;
			char fch = off ? 'o' : 'f';
			if (fc == 1 && !off)
				snprintf(buf, len, "n%u", nc);
			else if (nc == 1)
				snprintf(buf, len, "%c%u", fch, fc);
			else
				snprintf(buf, len, "n%u%c%u", nc, fch, fc);
			return buf;
		}
		break;
	}
	if (n)
		snprintf(buf, len, "%s", n);
	else
		snprintf(buf, len, "0x%x", layout);
	return buf;
}

/* "n2", "f3", "o2", "n2f2", "n2o2": 0 ok. */
static int r10_parse(const char *s, uint32_t *layout)
{
	uint32_t nc = 1, fc = 1, off = 0;
	int seen_n = 0, seen_f = 0;
	while (*s) {
		char c = (char)(*s | 0x20);
		if (c != 'n' && c != 'f' && c != 'o')
			return -1;
		s++;
		char *end;
		unsigned long v = strtoul(s, &end, 10);
		if (end == s || v < 1 || v > 255)
			return -1;
		s = end;
		if (c == 'n') {
			if (seen_n++)
				return -1;
			nc = (uint32_t)v;
		} else {
			if (seen_f++)
				return -1;
			fc = (uint32_t)v;
			off = c == 'o';
		}
	}
	if (!seen_n && !seen_f)
		return -1;
	*layout = RK_R10_LAYOUT(nc, fc, off);
	return rk_layout_valid(10, *layout) ? 0 : -1;
}

int rk_layout_parse(int32_t level, const char *s, uint32_t *layout)
{
	if (!s || !*s || !rk_level_min_roles(level))
		return -1;
	if (!strcasecmp(s, "default")) {
		*layout = rk_layout_default(level);
		return 0;
	}
	if (*s >= '0' && *s <= '9') {
		char *end;
		unsigned long v = strtoul(s, &end, 0);
		if (*end || v > 0xffffffffUL || !rk_layout_valid(level, (uint32_t)v))
			return -1;
		*layout = (uint32_t)v;
		return 0;
	}
	switch (level) {
	case RK_LEVEL_LINEAR: case 0: case 1:
		if (!strcasecmp(s, "none")) {
			*layout = 0;
			return 0;
		}
		return -1;
	case 4:
		if (!strcasecmp(s, "parity-last")) {
			*layout = RK_ALG_PARITY_N;
			return 0;
		}
		return -1;
	case 5: case 6: {
		static const char *const shortn[] = { "la", "ra", "ls", "rs" };
		for (uint32_t i = 0; i < 6; i++)
			if (!strcasecmp(s, r56_names[i]) || (i < 4 && !strcasecmp(s, shortn[i]))) {
				*layout = i;
				return 0;
			}
		if (level == 6) {
			for (uint32_t i = 0; i < 3; i++)
				if (!strcasecmp(s, r6_ddf_names[i])) {
					*layout = 8 + i;
					return 0;
				}
			for (uint32_t i = 0; i < 5; i++)
				if (!strcasecmp(s, r6_6_names[i])) {
					*layout = 16 + i;
					return 0;
				}
		}
		return -1;
	}
	case 10:
		return r10_parse(s, layout);
	}
	return -1;
}

