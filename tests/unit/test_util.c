/* tests/unit/test_util.c: util/ against values known by hand: error codes and their exit
 * statuses, err_wrap's "context: message", sizes with binary units, strict number parsing,
 * byte formatting, line:col of an offset, RFC 3629's UTF-8 rules (its examples: overlong
 * forms, surrogates, above U+10FFFF, cut sequences), and files read whole and written
 * atomically. (util/json has its own test, test_json.) */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/check.h"
#include "util/err.h"
#include "util/str.h"
#include "util/xalloc.h"

static void errors(void)
{
    struct mt_err e = {0};
    CHECK_EQ_INT(err_set(&e, MT_EINVAL, "field %s: %d", "dp", 3), MT_EINVAL);
    CHECK(strcmp(e.msg, "field dp: 3") == 0);
    CHECK_EQ_INT(err_wrap(&e, "config.json"), MT_EINVAL);
    CHECK(strcmp(e.msg, "config.json: field dp: 3") == 0);
    /* a context the message already starts with is not added twice (issue 41 item 8) */
    CHECK_EQ_INT(err_wrap(&e, "config.json"), MT_EINVAL);
    CHECK(strcmp(e.msg, "config.json: field dp: 3") == 0);
    CHECK_EQ_INT(err_wrap(&e, "config"), MT_EINVAL); /* a shorter word is another context */
    CHECK(strcmp(e.msg, "config: config.json: field dp: 3") == 0);
    err_set(&e, MT_EINVAL, "search: no pipeline to search from");
    err_wrap(&e, "search");
    CHECK(strcmp(e.msg, "search: no pipeline to search from") == 0);
    err_set(&e, MT_EINVAL, "field dp: 3");
    CHECK_EQ_INT(err_set(NULL, MT_EIO, "nowhere"), MT_EIO); /* NULL: the code alone */
    err_clear(&e);
    CHECK_EQ_INT(e.code, MT_OK);
    CHECK_EQ_INT(err_exit_status(MT_OK), 0);
    CHECK_EQ_INT(err_exit_status(MT_EINVAL), 2);
    CHECK_EQ_INT(err_exit_status(MT_EPARSE), 2);
    CHECK_EQ_INT(err_exit_status(MT_EIO), 1);
    CHECK_EQ_INT(err_exit_status(MT_EINFEASIBLE), 1);
}

static void sizes_and_numbers(void)
{
    static const char *const kinds[] = {"p2p", "all_gather", "a2a"};
    CHECK_EQ_INT(str_index_of("ALL_GATHER", kinds, 3), 1); /* without case */
    CHECK_EQ_INT(str_index_of("a2a+p2p", kinds, 3), -1);
    CHECK_EQ_INT(str_index_of("p2p", kinds, 0), -1);
    char left[64];
    /* 10 of 40 in 5 s: 30 more at 0.5 s each */
    CHECK(strcmp(str_format_time_left(5, 10, 40, left, sizeof left), "about 15 s left") == 0);
    CHECK(strcmp(str_format_time_left(60, 1, 11, left, sizeof left), "about 10 min left") == 0);
    CHECK(strcmp(str_format_time_left(3600, 1, 3, left, sizeof left), "about 2.0 h left") == 0);
    CHECK(strcmp(str_format_time_left(0.5, 10, 40, left, sizeof left), "") == 0); /* too soon */
    CHECK(strcmp(str_format_time_left(5, 0, 40, left, sizeof left), "") == 0);
    CHECK(strcmp(str_format_time_left(5, 40, 40, left, sizeof left), "") == 0); /* done */
    double b = 0;
    CHECK(str_parse_bytes("40G", &b, NULL) == MT_OK && b == 40.0 * (1 << 30));
    CHECK(str_parse_bytes("80GiB", &b, NULL) == MT_OK && b == 80.0 * (1 << 30));
    CHECK(str_parse_bytes("512M", &b, NULL) == MT_OK && b == 512.0 * (1 << 20));
    CHECK(str_parse_bytes("1.5T", &b, NULL) == MT_OK && b == 1.5 * 1099511627776.0);
    CHECK(str_parse_bytes("123456", &b, NULL) == MT_OK && b == 123456);
    CHECK(str_parse_bytes("2kb", &b, NULL) == MT_OK && b == 2048);
    struct mt_err e = {0};
    CHECK(str_parse_bytes("40X", &b, &e) == MT_EINVAL && strstr(e.msg, "'40X'") != NULL);
    CHECK(str_parse_bytes("-1G", &b, NULL) == MT_EINVAL);
    CHECK(str_parse_bytes("", &b, NULL) == MT_EINVAL);
    long v = 0;
    CHECK(str_parse_int("42", 0, 100, &v, NULL) == MT_OK && v == 42);
    CHECK(str_parse_int("42x", 0, 100, &v, NULL) == MT_EINVAL);
    CHECK(str_parse_int("101", 0, 100, &v, &e) == MT_EINVAL &&
          strcmp(e.msg, "101 is out of range [0, 100]") == 0);
    double d = 0;
    CHECK(str_parse_double("0.25", &d, NULL) == MT_OK && d == 0.25);
    CHECK(str_parse_double("1e", &d, NULL) == MT_EINVAL);
    char buf[32];
    CHECK(strcmp(str_format_bytes(512, buf, sizeof buf), "512 B") == 0);
    CHECK(strcmp(str_format_bytes(1536, buf, sizeof buf), "1.50 KiB") == 0);
    CHECK(strcmp(str_format_bytes(40.0 * (1 << 30), buf, sizeof buf), "40.00 GiB") == 0);
}

static void positions_and_utf8(void)
{
    const char *text = "{\n  \"a\": 1,\n  \"b\": x\n}";
    struct mt_err e = {0};
    size_t off = (size_t)(strchr(text, 'x') - text);
    CHECK(str_text_error(&e, "f.json", text, strlen(text), off, "bad value") == MT_EPARSE);
    CHECK(strcmp(e.msg, "f.json:3:8: bad value") == 0);
    CHECK_EQ_INT(str_utf8_check("plain", 5), 5);
    CHECK_EQ_INT(str_utf8_check("\xc3\xa9t\xc3\xa9", 5), 5);             /* été */
    CHECK_EQ_INT(str_utf8_check("\xf0\x9f\x98\x80", 4), 4);              /* U+1F600 */
    CHECK_EQ_INT(str_utf8_check("ab\xc0\xaf", 4), 2);                    /* overlong '/' */
    CHECK_EQ_INT(str_utf8_check("\xe0\x80\xaf", 3), 0);                  /* overlong, 3 bytes */
    CHECK_EQ_INT(str_utf8_check("x\xed\xa0\x80", 4), 1);                 /* surrogate D800 */
    CHECK_EQ_INT(str_utf8_check("\xf4\x90\x80\x80", 4), 0);              /* above U+10FFFF */
    CHECK_EQ_INT(str_utf8_check("ok\xe2\x82", 4), 2);                    /* cut sequence */
    CHECK_EQ_INT(str_utf8_check("\x80", 1), 0);                          /* lone continuation */
}

static void files(void)
{
    char dir[] = "/tmp/mt_test_util.XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char path[256], *got = NULL;
    size_t len = 0;
    snprintf(path, sizeof path, "%s/out.txt", dir);
    CHECK(str_write_file_atomic(path, "first", 5, NULL) == MT_OK);
    CHECK(str_write_file_atomic(path, "second\n", 7, NULL) == MT_OK); /* replaced whole */
    CHECK(str_read_file(path, 1 << 20, &got, &len, NULL) == MT_OK && len == 7 &&
          memcmp(got, "second\n", 7) == 0);
    free(got);
    struct mt_err e = {0};
    CHECK(str_read_file(path, 3, &got, &len, &e) != MT_OK); /* over the limit */
    char missing[256];
    snprintf(missing, sizeof missing, "%s/no/such/file", dir);
    CHECK(str_write_file_atomic(missing, "x", 1, &e) == MT_EIO && strstr(e.msg, missing) != NULL);
    /* a path that is not a plain file is written through, not replaced: renaming the
     * temporary over "-o /dev/null" turned /dev/null into a file (here: a symlink, which must
     * stay one, its target holding the text) */
    char link[256];
    snprintf(link, sizeof link, "%s/link.txt", dir);
    CHECK(symlink(path, link) == 0);
    CHECK(str_write_file_atomic(link, "third", 5, NULL) == MT_OK);
    struct stat st;
    CHECK(lstat(link, &st) == 0 && S_ISLNK(st.st_mode));
    CHECK(str_read_file(path, 1 << 20, &got, &len, NULL) == MT_OK && len == 5 &&
          memcmp(got, "third", 5) == 0);
    free(got);
    CHECK(unlink(link) == 0);
    CHECK(unlink(path) == 0 && rmdir(dir) == 0); /* no temporary file was left behind */
    char *s = xstrdup("copy");
    CHECK(strcmp(s, "copy") == 0);
    free(s);
    int *z = xcalloc(4, sizeof *z);
    CHECK(z[0] == 0 && z[3] == 0);
    z = xreallocarray(z, 8, sizeof *z);
    z[7] = 7;
    CHECK(z[7] == 7);
    free(z);
}

int main(void)
{
    errors();
    sizes_and_numbers();
    positions_and_utf8();
    files();
    return check_report("test_util");
}
