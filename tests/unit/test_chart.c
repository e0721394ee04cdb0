/* tests/unit/test_chart.c: render/chart.c, the docs' bar and line charts, checked on the
 * layout primitives it emits (expected counts and positions worked out by hand from the
 * chart's geometry: a line panel maps x[0] and x[points - 1] to the ends of its axis and the
 * value axis' bottom (min) and top (max) to the plot's bottom and top). */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "render/chart.h"
#include "render/layout.h"
#include "tests/check.h"
#include "util/err.h"
#include "util/str.h"

static int count_role(const struct layout *l, enum layout_role r, int panel, int row)
{
    int n = 0;
    const struct layout_item *it = layout_items(l);
    for (int i = 0; i < layout_count(l); i++)
        if (it[i].role == r && (panel < 0 || it[i].panel == panel) && (row < 0 || it[i].row == row))
            n++;
    return n;
}

static void test_bars(void)
{
    const char *groups[] = {"a", "b"};
    const double v0[] = {1, 2}, v1[] = {3, NAN};
    struct chart_series s[] = {{"one", PAL_FW, v0, false}, {"two", PAL_BW, v1, false}};
    struct chart_panel p = {
        .title = "bars", .unit = "", .groups = 2, .group_names = groups, .series = 2, .s = s};
    struct chart c = {.title = "t", .panels = 1, .panel = &p};
    struct layout *l = NULL;
    struct mt_err e = {0};
    CHECK_EQ_INT(chart_build(&c, &l, &e), MT_OK);
    CHECK_EQ_INT(count_role(l, LAYOUT_ROLE_INSTR, -1, -1), 3); /* NaN: no bar */
    layout_free(l);
}

static void test_lines(void)
{
    /* 5 points; series 0 solid, series 1 with a gap at point 2, series 2 dashed and long */
    const double x[] = {10, 20, 30, 40, 50};
    const double a[] = {1, 2, 3, 2, 1}, b[] = {1, 1, NAN, 1, 1}, big[] = {0, 9, 0, 9, 0};
    struct chart_series s[] = {
        {"a", PAL_FW, a, false}, {"b", PAL_BW, b, false}, {"c", PAL_RC, big, true}};
    struct chart_panel p = {.title = "lines",
                            .unit = "",
                            .series = 3,
                            .s = s,
                            .points = 5,
                            .x = x,
                            .min = 0,
                            .max = 4,
                            .x_label = "step"};
    struct chart c = {.panels = 1, .panel = &p, .width = 600};
    struct layout *l = NULL;
    struct mt_err e = {0};
    CHECK_EQ_INT(chart_build(&c, &l, &e), MT_OK);
    CHECK_EQ_INT(count_role(l, LAYOUT_ROLE_MEM_CURVE, 0, 0), 4);
    CHECK_EQ_INT(count_role(l, LAYOUT_ROLE_MEM_CURVE, 0, 1), 2); /* 0-1 and 3-4 */
    int dashed = count_role(l, LAYOUT_ROLE_MEM_CURVE, 0, 2);
    CHECK(dashed >= 1 && dashed <= 4);
    /* series 0: the first segment starts at the axis' left end, the last ends at its right
     * end; value 1 of 0..4 is a quarter up, value 3 three quarters, 9 is clipped to the top */
    const struct layout_item *it = layout_items(l), *first = NULL, *last = NULL, *top = NULL;
    double ymin = INFINITY;
    for (int i = 0; i < layout_count(l); i++) {
        if (it[i].role != LAYOUT_ROLE_MEM_CURVE)
            continue;
        if (it[i].row == 0 && it[i].id == 1)
            first = &it[i];
        if (it[i].row == 0 && it[i].id == 4)
            last = &it[i];
        if (it[i].row == 2) {
            top = &it[i];
            ymin = fmin(ymin, fmin(it[i].y, it[i].y + it[i].h));
        }
    }
    CHECK(first != NULL && last != NULL && top != NULL);
    if (first && last && top) {
        double x0 = first->x, x1 = last->x + last->w;
        double y1 = first->y, y3 = first->y + first->h;    /* values 1 then 2 */
        CHECK_NEAR(x1 - x0, (last->x - x0) * 4 / 3, 1e-9); /* 4 equal steps of x */
        double quarter = y1 - y3;                          /* one value unit */
        double bottom = y1 + quarter;                      /* value 0 */
        CHECK_NEAR(last->y, bottom - 2 * quarter, 1e-9);   /* point 3: value 2 */
        CHECK_NEAR(ymin, bottom - 4 * quarter, 1e-9);      /* 9 clipped to max = 4 */
    }
    /* no "-0" among the tick labels of an axis through 0 */
    const double neg[] = {-1, 1, -1, 1, -1};
    struct chart_series sn = {"n", PAL_FW, neg, false};
    struct chart_panel pn = {.series = 1, .s = &sn, .points = 5, .x = x, .min = -1, .max = 1};
    struct chart cn = {.panels = 1, .panel = &pn};
    struct layout *ln = NULL;
    CHECK_EQ_INT(chart_build(&cn, &ln, &e), MT_OK);
    int zeros = 0;
    for (int i = 0; ln && i < layout_count(ln); i++) {
        const struct layout_item *t = &layout_items(ln)[i];
        if (t->role == LAYOUT_ROLE_TICK_LABEL && t->text) {
            CHECK(strcmp(t->text, "-0") != 0 && strcmp(t->text, "-0.0") != 0);
            zeros += strcmp(t->text, "0") == 0 || strcmp(t->text, "0.0") == 0;
        }
    }
    CHECK_EQ_INT(zeros, 1);
    layout_free(ln);
    layout_free(l);
}

static void test_line_errors(void)
{
    const double x[] = {1, 3, 2}, v[] = {1, 2, 3}, vinf[] = {1, INFINITY, 3};
    struct chart_series s = {"a", PAL_FW, v, false}, si = {"a", PAL_FW, vinf, false};
    struct chart_panel p = {.series = 1, .s = &s, .points = 3, .x = x};
    struct chart c = {.panels = 1, .panel = &p};
    struct layout *l = NULL;
    struct mt_err e = {0};
    CHECK_EQ_INT(chart_build(&c, &l, &e), MT_EINVAL); /* x not ascending */
    CHECK_STR_CONTAINS(e.msg, "x[2]");
    const double xs[] = {1, 2, 3};
    p.x = xs;
    p.min = 5;
    p.max = 4;
    CHECK_EQ_INT(chart_build(&c, &l, &e), MT_EINVAL); /* min >= max */
    p.min = 0;
    p.max = 0;
    p.s = &si;
    CHECK_EQ_INT(chart_build(&c, &l, &e), MT_EINVAL); /* infinite value */
    p.s = &s;
    CHECK_EQ_INT(chart_build(&c, &l, &e), MT_OK);
    layout_free(l);
}

/* Specs are UTF-8 (Cairo draws nothing else): a byte that does not start well-formed UTF-8
 * (RFC 3629 Table 3) is refused with the file, line and column, before anything is drawn. */
static void test_spec_utf8(void)
{
    static const struct {
        const char *s;
        size_t bad; /* offset of the first bad byte; strlen = none */
    } cases[] = {
        {"plain ascii", 11},
        {"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 14}, /* 2-, 3-, 4-byte forms */
        {"a\xff", 1},                  /* never in UTF-8 */
        {"a\xc0\x80", 1},              /* overlong NUL */
        {"ab\xe0\x80\xaf", 2},          /* overlong '/' */
        {"\xed\xa0\x80", 0},            /* a surrogate, U+D800 */
        {"\xf4\x90\x80\x80", 0},        /* U+110000, past the last code point */
        {"xy\xe2\x82", 2},              /* cut short */
        {"\xc3(", 0},                  /* a continuation byte missing */
        {"\x80", 0},                   /* a continuation byte alone */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        CHECK_EQ_INT(str_utf8_check(cases[i].s, strlen(cases[i].s)), cases[i].bad);
    const char *spec = "{\"title\": \"ok\",\n \"panels\": [{\"title\": \"a\xff\"}]}";
    struct chart_spec *sp = NULL;
    struct mt_err e = {0};
    CHECK_EQ_INT(chart_spec_load_string(spec, strlen(spec), "spec.json", &sp, &e), MT_EPARSE);
    CHECK_STR_CONTAINS(e.msg, "spec.json:2:25: not valid UTF-8");
    CHECK(sp == NULL);
}

int main(void)
{
    test_bars();
    test_lines();
    test_line_errors();
    test_spec_utf8();
    return check_report("test_chart");
}
