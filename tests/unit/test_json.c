/* tests/unit/test_json.c: util/json.h, the one strict JSON reader: positions of keys and of
 * array elements (BOM, multi-byte characters), absent fields placed at their object, unknown
 * and duplicate keys, typed getters, syntax errors that name the broken field, and the
 * document's code for value errors. */
#include <config.h>
#include <stdlib.h>
#include <string.h>

#include "tests/check.h"
#include "util/err.h"
#include "util/json.h"

static struct json_doc *parse(const char *text, struct mt_err *e)
{
    struct json_doc *d = NULL;
    CHECK_EQ_INT(json_doc_parse(text, strlen(text), "t.json", MT_EINVAL, &d, e), MT_OK);
    return d;
}

static void expect_msg(const struct mt_err *e, const char *want)
{
    CHECK(strcmp(e->msg, want) == 0);
    if (strcmp(e->msg, want) != 0)
        fprintf(stderr, "  got  '%s'\n  want '%s'\n", e->msg, want);
}

static void test_positions(void)
{
    struct mt_err e = {0};
    /* a BOM is no column; "é" is one column */
    const char *text = "\xEF\xBB\xBF{\"a\": {\"b\": [1,\n   2, \"x\"]},\n \"\xC3\xA9\": true}";
    struct json_doc *d = parse(text, &e);
    struct json_value root, f[2], g[1], *el;
    size_t n;
    static const char *const top[2] = {"a", "\xC3\xA9"}, *const inner[1] = {"b"};
    json_doc_root(d, &root);
    CHECK_EQ_INT(json_fields(d, &root, top, 2, f), MT_OK);
    CHECK_EQ_INT(json_fields(d, &f[0], inner, 1, g), MT_OK);
    CHECK_EQ_INT(json_elements(d, &g[0], &el, &n), MT_OK);
    CHECK_EQ_INT((int)n, 3);
    int v;
    CHECK_EQ_INT(json_int(d, &el[2], 0, 9, &v), MT_EINVAL);
    expect_msg(&e, "t.json:2:7: a.b[2]: expected an integer, got string \"x\"");
    CHECK_EQ_INT(json_int(d, &el[1], 3, 9, &v), MT_EINVAL);
    expect_msg(&e, "t.json:2:4: a.b[1]: must be in [3, 9] (got 2)");
    free(el);
    const char *s;
    CHECK_EQ_INT(json_string(d, &f[1], &s), MT_EINVAL);
    expect_msg(&e, "t.json:3:2: \xC3\xA9: expected a string, got true");
    json_doc_free(d);
}

static void test_keys(void)
{
    struct mt_err e = {0};
    static const char *const keys[3] = {"alpha", "beta", "gamma"};
    struct json_value root, f[3];
    struct json_doc *d = parse("{\"alpha\": 1,\n \"bta\": 2}", &e);
    json_doc_root(d, &root);
    CHECK_EQ_INT(json_fields(d, &root, keys, 3, f), MT_EINVAL);
    expect_msg(&e, "t.json:2:2: bta: unknown key (did you mean 'beta'?)");
    json_doc_free(d);

    d = parse("{\"alpha\": 1, \"zzzzzz\": 2}", &e);
    json_doc_root(d, &root);
    CHECK_EQ_INT(json_fields(d, &root, keys, 3, f), MT_EINVAL);
    expect_msg(&e, "t.json:1:14: zzzzzz: unknown key (expected one of: alpha, beta, gamma)");
    json_doc_free(d);

    d = parse("{\"alpha\": 1,\n \"alpha\": 2}", &e);
    json_doc_root(d, &root);
    CHECK_EQ_INT(json_fields(d, &root, keys, 3, f), MT_EINVAL);
    expect_msg(&e, "t.json:2:2: alpha: duplicate key (first at 1:2)");
    json_doc_free(d);

    /* an absent field is named and placed at its object, for "missing" messages */
    d = parse("{\"o\":\n  {\"alpha\": 1}}", &e);
    static const char *const outer[1] = {"o"};
    struct json_value o[1];
    json_doc_root(d, &root);
    CHECK_EQ_INT(json_fields(d, &root, outer, 1, o), MT_OK);
    CHECK_EQ_INT(json_fields(d, &o[0], keys, 3, f), MT_OK);
    CHECK(f[0].item != NULL && f[1].item == NULL);
    CHECK_EQ_INT(json_fail(d, &f[2], "missing"), MT_EINVAL);
    expect_msg(&e, "t.json:1:2: o.gamma: missing");
    json_doc_free(d);
}

static void test_syntax(void)
{
    struct mt_err e = {0};
    struct json_doc *d = NULL;
    const char *text = "{\"a\": 1,\n \"b\": {\"c\": nan}}";
    CHECK_EQ_INT(json_doc_parse(text, strlen(text), "t.json", MT_EINVAL, &d, &e), MT_EPARSE);
    CHECK(d == NULL);
    expect_msg(&e, "t.json:2:13: b.c: syntax error near 'nan}}'");
    CHECK_EQ_INT(json_doc_parse("  ", 2, "t.json", MT_EINVAL, &d, &e), MT_EPARSE);
    expect_msg(&e, "t.json:1:3: empty file (expected a JSON object)");
    CHECK_EQ_INT(json_doc_parse("{} x", 4, "t.json", MT_EINVAL, &d, &e), MT_EPARSE);
    CHECK_STR_CONTAINS(e.msg, "t.json:1:4: syntax error: text after the top-level value");
}

static void test_codes(void)
{
    struct mt_err e = {0};
    struct json_doc *d = NULL;
    const char *text = "{\"n\": 1.5, \"size\": \"40G\", \"t\": \"RANK\"}";
    CHECK_EQ_INT(json_doc_parse(text, strlen(text), "p.json", MT_EPARSE, &d, &e), MT_OK);
    static const char *const keys[3] = {"n", "size", "t"};
    struct json_value root, f[3];
    json_doc_root(d, &root);
    CHECK_EQ_INT(json_fields(d, &root, keys, 3, f), MT_OK);
    int v;
    CHECK_EQ_INT(json_int(d, &f[0], 0, 9, &v), MT_EPARSE); /* the document's value code */
    expect_msg(&e, "p.json:1:2: n: expected an integer, got 1.5");
    double bytes;
    CHECK_EQ_INT(json_bytes(d, &f[1], &bytes), MT_OK);
    CHECK(bytes == 40.0 * (1 << 30));
    static const char *const names[2] = {"pid", "rank"};
    CHECK_EQ_INT(json_enum(d, &f[2], names, 2, "pid or rank", &v), MT_OK);
    CHECK_EQ_INT(v, 1);
    json_doc_free(d);
}

int main(void)
{
    test_positions();
    test_keys();
    test_syntax();
    test_codes();
    return check_report("test_json");
}
