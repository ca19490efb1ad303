/* json.c: streaming JSON writer. */
#include "rk_json.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <uuid/uuid.h>

#define RK_JSON_MAXDEPTH 64

struct rk_json {
	FILE *f;
	int depth;
	int need_comma[RK_JSON_MAXDEPTH];
	int after_key;
};

rk_json *rk_json_new(FILE *out)
{
	rk_json *j = calloc(1, sizeof *j);
	if (j)
		j->f = out;
	return j;
}

void rk_json_free(rk_json *j)
{
	if (!j)
		return;
	if (j->depth == 0)
		fputc('\n', j->f);
	free(j);
}

/* Separator before a value (or key) at the current depth. */
static void sep(rk_json *j)
{
	if (j->after_key) {
		j->after_key = 0;
		return;
	}
	if (j->depth > 0 && j->depth <= RK_JSON_MAXDEPTH) {
		if (j->need_comma[j->depth - 1])
			fputc(',', j->f);
		j->need_comma[j->depth - 1] = 1;
	}
}

static void open_(rk_json *j, int c)
{
	sep(j);
	fputc(c, j->f);
	if (j->depth < RK_JSON_MAXDEPTH)
		j->need_comma[j->depth] = 0;
	j->depth++;
}

static void close_(rk_json *j, int c)
{
	if (j->depth > 0)
		j->depth--;
	fputc(c, j->f);
}

void rk_json_raw(rk_json *j, const char *text)
{
	sep(j);
	fputs(text, j->f);
}

void rk_json_obj_begin(rk_json *j) { open_(j, '{'); }
void rk_json_obj_end(rk_json *j) { close_(j, '}'); }
void rk_json_arr_begin(rk_json *j) { open_(j, '['); }
void rk_json_arr_end(rk_json *j) { close_(j, ']'); }

/* Length of the well-formed UTF-8 sequence (2 to 4 bytes, RFC 3629: no
 * overlong form, no surrogate, nothing past U+10FFFF) starting at the N
 * bytes of S, with its code point in *CP; 0 when there is none. */
static size_t utf8_seq(const unsigned char *s, size_t n, uint32_t *cp)
{
	unsigned char c = s[0];
	size_t len;
	unsigned char lo = 0x80, hi = 0xbf;   /* the second byte's range */
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		lo = c == 0xe0 ? 0xa0 : 0x80;   /* no overlong form */
		hi = c == 0xed ? 0x9f : 0xbf;   /* no surrogate */
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		lo = c == 0xf0 ? 0x90 : 0x80;   /* no overlong form */
		hi = c == 0xf4 ? 0x8f : 0xbf;   /* nothing past U+10FFFF */
	} else {
		return 0;                       /* ASCII, a continuation byte, 0xc0, 0xc1, 0xf5.. */
	}
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	uint32_t v = c & (0x7f >> len);
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		v = v << 6 | (s[i] & 0x3f);
	}
	*cp = v;
	return len;
}

/* The N bytes at S as a JSON string (the one escaping of every string
 * written, keys too): '"' and '\\' escaped, control characters (C0, DEL
 * and C1) as \n, \t, \r or \u00XX, well-formed UTF-8 as it is, and each
 * byte that is not part of well-formed UTF-8 as the text \xNN (written
 * "\\xNN"), so the document is always valid UTF-8 (spec/discovery.md,
 * "Text from members"). */
static void put_escaped(rk_json *j, const char *s, size_t n)
{
	const unsigned char *b = (const unsigned char *)s;
	fputc('"', j->f);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = b[i];
		uint32_t cp = 0;
		size_t len = c >= 0x80 ? utf8_seq(b + i, n - i, &cp) : 0;
		if (c == '"' || c == '\\')
			fprintf(j->f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", j->f);
		else if (c == '\t')
			fputs("\\t", j->f);
		else if (c == '\r')
			fputs("\\r", j->f);
		else if (c < 0x20 || c == 0x7f)
			fprintf(j->f, "\\u%04x", c);
		else if (c < 0x80)
			fputc(c, j->f);
		else if (!len)
			fprintf(j->f, "\\\\x%02x", c);
		else if (cp < 0xa0)   /* a C1 control character */
			fprintf(j->f, "\\u%04x", (unsigned)cp);
		else
			fwrite(b + i, 1, len, j->f);
		if (len)
			i += len - 1;
	}
	fputc('"', j->f);
}

void rk_json_key(rk_json *j, const char *k)
{
	sep(j);
	put_escaped(j, k, strlen(k));
	fputc(':', j->f);
	j->after_key = 1;
}

void rk_json_str(rk_json *j, const char *s)
{
	if (!s) {
		rk_json_null(j);
		return;
	}
	sep(j);
	put_escaped(j, s, strlen(s));
}

void rk_json_strn(rk_json *j, const char *s, size_t n)
{
	sep(j);
	put_escaped(j, s, n);
}

void rk_json_u64(rk_json *j, uint64_t v) { sep(j); fprintf(j->f, "%" PRIu64, v); }
void rk_json_i64(rk_json *j, int64_t v) { sep(j); fprintf(j->f, "%" PRId64, v); }
void rk_json_bool(rk_json *j, int v) { sep(j); fputs(v ? "true" : "false", j->f); }
void rk_json_null(rk_json *j) { sep(j); fputs("null", j->f); }
/* A finite number with 4 decimals ("0.9731"); NaN and infinities, which
 * JSON lacks, are written as null. */
void rk_json_double(rk_json *j, double v)
{
	sep(j);
	if (v != v || v > 1e300 || v < -1e300)
		fputs("null", j->f);
	else
		fprintf(j->f, "%.4f", v);
}

void rk_json_uuid(rk_json *j, const uint8_t uuid[16])
{
	char buf[37];
	uuid_unparse_lower(uuid, buf);
	rk_json_str(j, buf);
}

int rk_json_key_or_null(rk_json *j, const char *k, int have)
{
	rk_json_key(j, k);
	if (!have)
		rk_json_null(j);
	return have;
}

void rk_json_kstr(rk_json *j, const char *k, const char *s) { rk_json_key(j, k); rk_json_str(j, s); }
void rk_json_ku64(rk_json *j, const char *k, uint64_t v) { rk_json_key(j, k); rk_json_u64(j, v); }
void rk_json_ki64(rk_json *j, const char *k, int64_t v) { rk_json_key(j, k); rk_json_i64(j, v); }
void rk_json_kbool(rk_json *j, const char *k, int v) { rk_json_key(j, k); rk_json_bool(j, v); }
