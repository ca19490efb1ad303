/* test_fmt.c: the formats table and the native md 0.90 / 1.x decoders, on
 * the real md fixtures (values as mdadm --examine prints them) and on
 * hostile variations of their headers. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uuid/uuid.h>

#include "rk_dev.h"
#include "rk_fmt.h"
#include "rk_json.h"
#include "rk_le.h"
#include "rk_sb.h"
#include "rk_util.h"
#include "helpers/rk_test.h"

START_TEST(t_table)
{
	ck_assert_ptr_nonnull(rk_meta_fmts[0]);
	ck_assert_str_eq(rk_meta_fmts[0]->name, "raidkit");
	int n = 0;
	for (; rk_meta_fmts[n]; n++) {
		const struct rk_meta_fmt *f = rk_meta_fmts[n];
		ck_assert_ptr_nonnull(f->probe);
		ck_assert_ptr_nonnull(f->decode);
		ck_assert_ptr_nonnull(f->print_text);
		ck_assert_ptr_nonnull(f->print_json);
		ck_assert_ptr_nonnull(f->release);
		ck_assert_ptr_eq(rk_meta_fmt_find(f->name), f);
	}
	ck_assert_int_ge(n, 4);
	ck_assert_ptr_null(rk_meta_fmt_find("nonsense"));
	ck_assert_ptr_null(rk_meta_fmt_find(NULL));
}
END_TEST

START_TEST(t_md12_fixture)
{
	char img[512];
	if (!rk_test_unpack_fixture("mdraid-1", img, sizeof img))
		return;
	rk_dev *d = NULL;
	ck_assert_int_eq(rk_dev_open(&d, img, RK_DEV_RDONLY), RK_OK);
	struct rk_md1 *m = malloc(sizeof *m);
	ck_assert_ptr_nonnull(m);
	ck_assert_int_eq(rk_md1_read(d, m), RK_OK);
	/* mdadm --examine: Version 1.2, Array UUID 77e61baf:c0b5d7d0:..., Name
	 * troy.t-8ch.de:0, raid0, 1 device, Data Offset 4096 sectors, Super
	 * Offset 8 sectors, Checksum 49255b39 correct, Events 0, Chunk 512K,
	 * Device Role Active device 0. */
	ck_assert_uint_eq(m->minor, 2);
	ck_assert_uint_eq(m->at, 4096);
	char u[37];
	uuid_unparse_lower(m->set_uuid, u);
	ck_assert_str_eq(u, "77e61baf-c0b5-d7d0-39cf-575b64d4878c");
	ck_assert_str_eq(m->set_name, "troy.t-8ch.de:0");
	ck_assert_int_eq(m->level, 0);
	ck_assert_uint_eq(m->raid_disks, 1);
	ck_assert_uint_eq(m->data_offset, 4096);
	ck_assert_uint_eq(m->super_offset, 8);
	ck_assert_uint_eq(m->sb_csum, 0x49255b39u);
	ck_assert_int_eq(m->csum_ok, 1);
	ck_assert_uint_eq(m->events, 0);
	ck_assert_uint_eq(m->chunksize * 512ull, 512 * 1024);
	ck_assert_uint_lt(m->dev_number, m->max_dev);
	ck_assert_uint_eq(m->dev_roles[m->dev_number], 0);
	uuid_unparse_lower(m->device_uuid, u);
	ck_assert_str_eq(u, "379f6ef9-e75a-12c1-11f1-d883ff168e1d");

	/* Through the table: md1 probes it, raidkit does not. */
	struct rk_probe_result r;
	ck_assert_int_eq(rk_meta_fmt_find("md1")->probe(d, img, &r), RK_OK);
	ck_assert_int_eq(r.found, 1);
	ck_assert_str_eq(r.version, "1.2");
	ck_assert_str_eq(r.uuid, "77e61baf-c0b5-d7d0-39cf-575b64d4878c");
	ck_assert_int_eq(rk_meta_fmt_find("raidkit")->probe(d, img, &r), RK_OK);
	ck_assert_int_eq(r.found, 0);
	void *obj = NULL;
	ck_assert_int_eq(rk_meta_fmt_find("md0.90")->decode(d, img, &obj), RK_E_NOSB);
	ck_assert_int_eq(rk_meta_fmt_find("md1")->decode(d, img, &obj), RK_OK);
	FILE *f = fopen("/dev/null", "w");
	rk_meta_fmt_find("md1")->print_text(f, obj, "  ");
	rk_json *j = rk_json_new(f);
	rk_meta_fmt_find("md1")->print_json(j, obj);
	rk_json_free(j);
	fclose(f);
	rk_meta_fmt_find("md1")->release(obj);
	rk_dev_close(d);

	/* Hostile variations of the header. */
	size_t len;
	uint8_t *img_b = rk_test_slurp(img, &len);
	uint8_t *b = img_b + 4096;
	size_t blen = 4096;
	b[33] ^= 1;   /* a name byte: checksum now wrong, still decoded */
	ck_assert_int_eq(rk_md1_decode(m, b, blen, 4096), RK_OK);
	ck_assert_int_eq(m->csum_ok, 0);
	b[33] ^= 1;
	ck_assert_int_eq(rk_md1_decode(m, b, blen, 4096), RK_OK);
	ck_assert_int_eq(m->csum_ok, 1);
	rk_put_le32(b + 220, 100000);   /* max_dev past the buffer */
	ck_assert_int_eq(rk_md1_decode(m, b, blen, 4096), RK_E_CORRUPT);
	rk_put_le32(b + 220, 2000);
	ck_assert_int_eq(rk_md1_decode(m, b, blen, 4096), RK_E_CORRUPT);
	rk_put_le32(b + 220, 128);
	ck_assert_int_eq(rk_md1_decode(m, b, 300, 4096), RK_E_CORRUPT);
	ck_assert_int_eq(rk_md1_decode(m, b, 200, 4096), RK_E_SHORT);
	rk_put_le32(b + 4, 2);          /* major version 2 */
	ck_assert_int_eq(rk_md1_decode(m, b, blen, 4096), RK_E_NOSB);
	b[0] ^= 0xff;
	ck_assert_int_eq(rk_md1_decode(m, b, blen, 4096), RK_E_NOSB);
	free(img_b);
	free(m);
}
END_TEST

START_TEST(t_md090_fixture)
{
	char img[512];
	if (!rk_test_unpack_fixture("mdraid", img, sizeof img))
		return;
	rk_dev *d = NULL;
	ck_assert_int_eq(rk_dev_open(&d, img, RK_DEV_RDONLY), RK_OK);
	struct rk_md090 m;
	ck_assert_int_eq(rk_md090_read(d, &m), RK_OK);
	/* mdadm --examine: 0.90.00, UUID 37c76b91:011a05c5:d30c1fd4:c5c3dbbc,
	 * raid1, 2 devices, Used Dev Size 10176, Events 4, Checksum f1752eb
	 * correct, this device 0 active sync. */
	ck_assert_uint_eq(m.major, 0);
	ck_assert_uint_eq(m.minor, 90);
	char u[37];
	uuid_unparse_lower(m.uuid, u);
	ck_assert_str_eq(u, "37c76b91-011a-05c5-d30c-1fd4c5c3dbbc");
	ck_assert_int_eq(m.level, 1);
	ck_assert_uint_eq(m.raid_disks, 2);
	ck_assert_uint_eq(m.size_kib, 10176);
	ck_assert_uint_eq(m.events, 4);
	ck_assert_uint_eq(m.sb_csum, 0x0f1752ebu);
	ck_assert_int_eq(m.csum_ok, 1);
	ck_assert_uint_eq(m.this_disk.raid_disk, 0);
	ck_assert_uint_eq(m.this_disk.state, 6);   /* active, sync */
	ck_assert_uint_eq(m.disks[1].raid_disk, 1);
	struct rk_probe_result r;
	ck_assert_int_eq(rk_meta_fmt_find("md0.90")->probe(d, img, &r), RK_OK);
	ck_assert_int_eq(r.found, 1);
	ck_assert_int_eq(rk_meta_fmt_find("md1")->probe(d, img, &r), RK_OK);
	ck_assert_int_eq(r.found, 0);
	rk_dev_close(d);

	size_t len;
	uint8_t *b = rk_test_slurp(img, &len);
	uint64_t at = (len & ~(size_t)65535) - 65536;
	b[at + 100] ^= 0x10;
	ck_assert_int_eq(rk_md090_decode(&m, b + at, 4096, at), RK_OK);
	ck_assert_int_eq(m.csum_ok, 0);
	ck_assert_int_eq(rk_md090_decode(&m, b + at, 4095, at), RK_E_SHORT);
	rk_put_le32(b + at + 4, 1);
	ck_assert_int_eq(rk_md090_decode(&m, b + at, 4096, at), RK_E_NOSB);
	free(b);
}
END_TEST

/* Random headers with the md magic never crash or read past the buffer
 * (ASan watches the exact-size allocations). */
START_TEST(t_md_random)
{
	unsigned x = 99;
	for (int it = 0; it < 2000; it++) {
		size_t len = 256 + (size_t)(it * 37 % 4000);
		uint8_t *b = malloc(len);
		ck_assert_ptr_nonnull(b);
		for (size_t i = 0; i < len; i++) {
			x = x * 1103515245u + 12345u;
			b[i] = (uint8_t)(x >> 16);
		}
		rk_put_le32(b, RK_MD_MAGIC);
		rk_put_le32(b + 4, it & 1);
		if (it % 3 == 0)
			rk_put_le32(b + 220, (uint32_t)(it % 2100));
		struct rk_md1 *m1 = malloc(sizeof *m1);
		struct rk_md090 m0;
		ck_assert_ptr_nonnull(m1);
		if (rk_md1_decode(m1, b, len, 0) == RK_OK) {
			ck_assert_uint_le(256 + (size_t)m1->max_dev * 2, len);
			FILE *f = fopen("/dev/null", "w");
			rk_meta_fmt_find("md1")->print_text(f, m1, "");
			rk_json *j = rk_json_new(f);
			rk_meta_fmt_find("md1")->print_json(j, m1);
			rk_json_free(j);
			fclose(f);
		}
		if (rk_md090_decode(&m0, b, len, 0) == RK_OK) {
			FILE *f = fopen("/dev/null", "w");
			rk_meta_fmt_find("md0.90")->print_text(f, &m0, "");
			fclose(f);
		}
		free(m1);
		free(b);
	}
}
END_TEST

START_TEST(t_native_entry)
{
	/* A raidkit member through the table's first entry. */
	static struct rk_sb sb;
	struct rk_sb_params p;
	memset(&p, 0, sizeof p);
	p.level = 1;
	p.nroles = 2;
	p.name = "tbl";
	p.data_size = rk_sb_max_data_size(4 << 20, RK_DATA_OFFSET_DEFAULT, 4096);
	ck_assert_int_eq(rk_sb_init(&sb, &p), RK_OK);
	ck_assert_int_eq(rk_sb_set_member(&sb, 1, 4 << 20), RK_OK);
	char path[300];
	snprintf(path, sizeof path, "%s", rk_test_path("m"));
	rk_dev *d = NULL;
	ck_assert_int_eq(rk_dev_create(&d, path, 4 << 20), RK_OK);
	ck_assert_int_eq(rk_sb_write(d, &sb), RK_OK);
	const struct rk_meta_fmt *f = rk_meta_fmts[0];
	struct rk_probe_result r;
	ck_assert_int_eq(f->probe(d, path, &r), RK_OK);
	ck_assert_int_eq(r.found, 1);
	ck_assert_str_eq(r.type, "raidkit");
	ck_assert_str_eq(r.label, "tbl");
	void *obj = NULL;
	ck_assert_int_eq(f->decode(d, path, &obj), RK_OK);
	const struct rk_sb_read *rd = obj;
	ck_assert_int_eq(rd->chosen, 0);
	ck_assert_uint_eq(rd->copy[0].sb->this_role, 1);
	FILE *o = fopen("/dev/null", "w");
	f->print_text(o, obj, "");
	rk_json *j = rk_json_new(o);
	f->print_json(j, obj);
	rk_json_free(j);
	fclose(o);
	f->release(obj);
	ck_assert_int_eq(rk_meta_fmt_find("md1")->probe(d, path, &r), RK_OK);
	ck_assert_int_eq(r.found, 0);
	rk_dev_close(d);
}
END_TEST


/* ---- text from members: the words and JSON escapings ---- */

/* What FN wrote to a stream, as a malloc'd string. */
static char *captured(void (*fn)(FILE *f, const void *arg), const void *arg)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	RK_REQUIRE(f);
	fn(f, arg);
	fclose(f);
	return buf;
}

static void json_str_of(FILE *f, const void *arg)
{
	rk_json *j = rk_json_new(f);
	rk_json_str(j, arg);
	rk_json_free(j);
}

static void words_line_of(FILE *f, const void *arg)
{
	rk_esc_fprintf(f, "name: %s\n", (const char *)arg);
}

/* Every byte printable ASCII or a newline. */
static int all_printable(const char *s)
{
	for (; *s; s++)
		if (*s != '\n' && (*s < 0x20 || *s > 0x7e))
			return 0;
	return 1;
}

START_TEST(t_esc_words)
{
	char b[64];
	ck_assert_str_eq(rk_esc("plain text 1-2:3", b, sizeof b), "plain text 1-2:3");
	ck_assert_str_eq(rk_esc("a\\b\x01\x7f\xff \xc3\xa9", b, sizeof b), "a\\\\b\\x01\\x7f\\xff \\xc3\\xa9");
	ck_assert_str_eq(rk_esc(NULL, b, sizeof b), "");
	/* cut before an escape that does not fit, never inside it */
	ck_assert_str_eq(rk_esc("ab\xff", b, 6), "ab");
	ck_assert_str_eq(rk_esc("ab\xff", b, 7), "ab\\xff");
	ck_assert_str_eq(rk_esc("ab\\", b, 4), "ab");
	char *line = captured(words_line_of, "x\ny\x1b[31m");
	ck_assert_str_eq(line, "name: x\\x0ay\\x1b[31m\n");
	free(line);
	/* longer than the stack buffer of rk_esc_vfprintf */
	char big[3000];
	memset(big, '\xfe', sizeof big - 1);
	big[sizeof big - 1] = 0;
	line = captured(words_line_of, big);
	ck_assert_uint_eq(strlen(line), strlen("name: \n") + 4 * (sizeof big - 1));
	ck_assert(all_printable(line));
	free(line);
}
END_TEST

START_TEST(t_esc_json)
{
	static const struct { const char *in, *out; } tab[] = {
		{ "plain", "\"plain\"" },
		{ "q\"b\\n\nt\tr\r", "\"q\\\"b\\\\n\\nt\\tr\\r\"" },
		{ "\x01\x1f\x7f", "\"\\u0001\\u001f\\u007f\"" },
		/* well-formed UTF-8 as it is; C1 controls escaped */
		{ "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"" },
		{ "\xc2\x85", "\"\\u0085\"" },
		/* not UTF-8: each byte as the text \xNN */
		{ "\xff", "\"\\\\xff\"" },
		{ "\xc0\xaf", "\"\\\\xc0\\\\xaf\"" },                    /* overlong */
		{ "\xe0\x80\xaf", "\"\\\\xe0\\\\x80\\\\xaf\"" },         /* overlong */
		{ "\xed\xa0\x80", "\"\\\\xed\\\\xa0\\\\x80\"" },         /* a surrogate */
		{ "\xf4\x90\x80\x80", "\"\\\\xf4\\\\x90\\\\x80\\\\x80\"" }, /* past U+10FFFF */
		{ "\xe2\x82", "\"\\\\xe2\\\\x82\"" },                    /* cut short */
		{ "\xe2\x82X", "\"\\\\xe2\\\\x82X\"" },
		{ "Linux-MD\xde\xad\xbe\xef", "\"Linux-MD\xde\xad\\\\xbe\\\\xef\"" },   /* the DDF GUID */
	};
	for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++) {
		char *got = captured(json_str_of, tab[i].in);
		char want[128];
		snprintf(want, sizeof want, "%s\n", tab[i].out);
		ck_assert_str_eq(got, want);
		free(got);
	}
}
END_TEST

static void md1_text_of(FILE *f, const void *m)
{
	rk_meta_fmt_find("md1")->print_text(f, m, "  ");
}

static void md1_json_of(FILE *f, const void *m)
{
	rk_json *j = rk_json_new(f);
	rk_meta_fmt_find("md1")->print_json(j, m);
	rk_json_free(j);
}

/* An md 1.2 superblock whose name holds control and non-UTF-8 bytes: the
 * words have no raw byte, the JSON string escapes them. */
START_TEST(t_md1_binary_name)
{
	char img[512];
	if (!rk_test_unpack_fixture("mdraid-1", img, sizeof img))
		return;
	size_t len;
	uint8_t *b = rk_test_slurp(img, &len);
	ck_assert_uint_ge(len, 8192);
	static const char name[32] = "a\x1b[31m\xff\xfe\n\\\xc3\xa9";
	memcpy(b + 4096 + 32, name, sizeof name);
	struct rk_md1 *m = malloc(sizeof *m);
	ck_assert_ptr_nonnull(m);
	ck_assert_int_eq(rk_md1_decode(m, b + 4096, 4096, 4096), RK_OK);
	char *t = captured(md1_text_of, m);
	ck_assert(all_printable(t));
	ck_assert_ptr_nonnull(strstr(t, "name          : a\\x1b[31m\\xff\\xfe\\x0a\\\\\\xc3\\xa9\n"));
	free(t);
	char *j = captured(md1_json_of, m);
	ck_assert_ptr_nonnull(strstr(j, "\"name\":\"a\\u001b[31m\\\\xff\\\\xfe\\n\\\\\xc3\xa9\""));
	free(j);
	free(m);
	free(b);
	unlink(img);
}
END_TEST

RK_TEST_SUITE("fmt", { "fmt", 120, rk_test_tmpdir_make, rk_test_tmpdir_remove, 0,
	  RK_TESTS(RK_TEST(t_table), RK_TEST(t_md12_fixture), RK_TEST(t_md090_fixture),
	           RK_TEST(t_md_random), RK_TEST(t_native_entry), RK_TEST(t_esc_words), RK_TEST(t_esc_json),
	           RK_TEST(t_md1_binary_name)) })
