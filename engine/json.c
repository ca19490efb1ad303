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

void rk_json_obj_begin(rk_json *j) { open_(j, '{'); }
void rk_json_obj_end(rk_json *j) { close_(j, '}'); }
void rk_json_arr_begin(rk_json *j) { open_(j, '['); }
void rk_json_arr_end(rk_json *j) { close_(j, ']'); }

static void put_escaped(rk_json *j, const char *s, size_t n)
{
	fputc('"', j->f);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		switch (c) {
		case '"': fputs("\\\"", j->f); break;
		case '\\': fputs("\\\\", j->f); break;
		case '\n': fputs("\\n", j->f); break;
		case '\t': fputs("\\t", j->f); break;
		case '\r': fputs("\\r", j->f); break;
		default:
			/* Control bytes and bytes >= 0x7f are escaped so that hostile names
			 * never yield invalid UTF-8 or JSON. */
			if (c < 0x20 || c >= 0x7f)
				fprintf(j->f, "\\u%04x", c);
			else
				fputc(c, j->f);
		}
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
