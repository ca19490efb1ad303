/* rk_json.h: a small streaming JSON writer (for --json output).
 * Commas and string escaping are handled here; callers nest objects/arrays. */
#ifndef RK_JSON_H
#define RK_JSON_H

#include <stdint.h>
#include <stdio.h>

typedef struct rk_json rk_json;

rk_json *rk_json_new(FILE *out);          /* NULL on ENOMEM */
void rk_json_free(rk_json *j);            /* writes a final newline when depth is 0 */

void rk_json_obj_begin(rk_json *j);
void rk_json_obj_end(rk_json *j);
void rk_json_arr_begin(rk_json *j);
void rk_json_arr_end(rk_json *j);
void rk_json_key(rk_json *j, const char *k);   /* inside an object, before a value */
/* Writes key K, and null for its value when HAVE is 0; returns HAVE (the
 * caller then writes the value): `if (rk_json_key_or_null(j, "k", x)) ...`. */
int  rk_json_key_or_null(rk_json *j, const char *k, int have);

/* A string: any bytes give valid JSON and valid UTF-8 (json.c, put_escaped:
 * control characters escaped, well-formed UTF-8 kept, other bytes as the
 * text \xNN).  NULL writes null. */
void rk_json_str(rk_json *j, const char *s);
void rk_json_u64(rk_json *j, uint64_t v);
void rk_json_i64(rk_json *j, int64_t v);
void rk_json_bool(rk_json *j, int v);
void rk_json_null(rk_json *j);
void rk_json_double(rk_json *j, double v);   /* 4 decimals; NaN/inf as null */
void rk_json_uuid(rk_json *j, const uint8_t uuid[16]);  /* canonical lower-case text */
/* The N bytes at S (NULs included) as a string, escaped as rk_json_str. */
void rk_json_strn(rk_json *j, const char *s, size_t n);

/* A value already in JSON text (TEXT, valid JSON made by another rk_json),
 * written as it is with the separator the position needs. */
void rk_json_raw(rk_json *j, const char *text);

/* key + value shorthands */
void rk_json_kstr(rk_json *j, const char *k, const char *s);
void rk_json_ku64(rk_json *j, const char *k, uint64_t v);
void rk_json_ki64(rk_json *j, const char *k, int64_t v);
void rk_json_kbool(rk_json *j, const char *k, int v);

#endif
