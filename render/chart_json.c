/* render/chart_json.c: chart specs, the JSON files `mario-tui chart SPEC.json` draws (format
 * in render/chart.h), read into the struct chart that chart_build lays out. The spec owns
 * the parsed document: the chart's strings point into it, so both live and die together.
 * Every count is checked against CHART_MAX_* before anything is allocated for it, and every
 * number the chart uses is finite or null, so chart_build only sees what it can draw.
 * util/json.h reads the text: unknown keys are errors, and every error names file:line:col
 * and the path ("panels[0].series[1].values[2]"). */
#include <config.h>
#include "render/chart.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/err.h"
#include "util/json.h"
#include "util/str.h"
#include "util/xalloc.h"

/* Everything the spec points to, freed at once. */
struct chart_spec {
    struct json_doc *doc; /* the document the strings below point into */
    struct chart c;
    struct chart_panel panel[CHART_MAX_PANELS];
    struct chart_series series[CHART_MAX_PANELS][CHART_MAX_SERIES];
    double values[CHART_MAX_PANELS][CHART_MAX_SERIES][CHART_MAX_GROUPS];
    const char *groups[CHART_MAX_PANELS][CHART_MAX_GROUPS];
    double *x[CHART_MAX_PANELS];                       /* line panels, malloc'd */
    double *curve[CHART_MAX_PANELS][CHART_MAX_SERIES]; /* line panels, malloc'd */
};

void chart_spec_free(struct chart_spec *sp)
{
    if (sp == NULL)
        return;
    for (int k = 0; k < CHART_MAX_PANELS; k++) {
        free(sp->x[k]);
        for (int s = 0; s < CHART_MAX_SERIES; s++)
            free(sp->curve[k][s]);
    }
    json_doc_free(sp->doc);
    free(sp);
}

const struct chart *chart_spec_chart(const struct chart_spec *sp)
{
    return &sp->c;
}

/* An optional string: absent leaves *out NULL. */
static int chart_str(struct json_doc *d, const struct json_value *v, const char **out)
{
    *out = NULL;
    return v->item != NULL ? json_string(d, v, out) : MT_OK;
}

/* An optional number: absent leaves *out as it is. */
static int chart_num(struct json_doc *d, const struct json_value *v, double *out)
{
    return v->item != NULL ? json_double(d, v, out) : MT_OK;
}

static int chart_color(struct json_doc *d, const struct json_value *v, int fallback,
                       enum pal *out)
{
    static const enum pal cycle[] = {PAL_SYNC, PAL_FW, PAL_CFW, PAL_W,
                                     PAL_BW,   PAL_RC, PAL_B,   PAL_MEM_OVER};
    const char *name;
    if (v->item == NULL) {
        *out = cycle[fallback % (int)(sizeof cycle / sizeof cycle[0])];
        return MT_OK;
    }
    TRY(json_string(d, v, &name));
    for (int p = 0; p < PAL__COUNT; p++)
        if (strcasecmp(palette_name((enum pal)p), name) == 0) {
            *out = (enum pal)p;
            return MT_OK;
        }
    char clip[40];
    return json_fail(d, v, "unknown colour '%s' (a render/palette.h name: FW, BW, ...)",
                     json_clip(name, clip, sizeof clip));
}

/* One series: {"name", "color", "dashed", "values": one per group (point), null = none}. */
static int chart_series_parse(struct json_doc *d, const struct json_value *so, int count, int s,
                              bool lines, struct chart_series *out, double *values)
{
    enum { S_NAME, S_COLOR, S_DASHED, S_VALUES, S__COUNT };
    static const char *const keys[S__COUNT] = {"name", "color", "dashed", "values"};
    struct json_value k[S__COUNT];
    TRY(json_fields(d, so, keys, S__COUNT, k));
    if (!cJSON_IsArray(k[S_VALUES].item) || cJSON_GetArraySize(k[S_VALUES].item) != count)
        return json_fail(d, &k[S_VALUES], "expected an array of %d values, one per %s", count,
                         lines ? "x" : "group");
    TRY(chart_str(d, &k[S_NAME], &out->name));
    out->dashed = false;
    if (k[S_DASHED].item != NULL)
        TRY(json_bool(d, &k[S_DASHED], &out->dashed));
    TRY(chart_color(d, &k[S_COLOR], s, &out->color));
    struct json_value *v;
    size_t n;
    TRY(json_elements(d, &k[S_VALUES], &v, &n));
    int rc = MT_OK;
    for (size_t g = 0; g < n && rc == MT_OK; g++) {
        double x;
        if (cJSON_IsNull(v[g].item))
            values[g] = NAN;
        else if (json_number(v[g].item, &x) && isfinite(x))
            values[g] = x;
        else
            rc = json_type_fail(d, &v[g], "a finite number or null");
    }
    free(v);
    out->values = values;
    return rc;
}

/* The series array of panel k, count values each, into sp. */
static int chart_panel_series(struct json_doc *d, const struct json_value *sv,
                              struct chart_spec *sp, int k, int count, bool lines)
{
    struct json_value *so;
    size_t n;
    TRY(json_elements(d, sv, &so, &n));
    int rc = MT_OK;
    for (size_t s = 0; s < n && rc == MT_OK; s++) {
        double *values = sp->values[k][s];
        if (lines)
            values = sp->curve[k][s] = xcalloc((size_t)count, sizeof(double));
        rc = chart_series_parse(d, &so[s], count, (int)s, lines, &sp->series[k][s], values);
    }
    free(so);
    sp->panel[k].s = sp->series[k];
    return rc;
}

enum { P_TITLE, P_UNIT, P_MAX, P_SERIES, P_DECIMALS, P_GROUPS, P_X, P_MIN, P_XLABEL, P__COUNT };

/* A line panel: "x" and one curve per series, allocated to the number of points. */
static int chart_lines_parse(struct json_doc *d, const struct json_value *f,
                             struct chart_spec *sp, int k)
{
    struct chart_panel *p = &sp->panel[k];
    if (!cJSON_IsArray(f[P_X].item) || !cJSON_IsArray(f[P_SERIES].item))
        return json_fail(d, &f[P_SERIES], "a line panel has \"x\" and \"series\" arrays");
    p->points = cJSON_GetArraySize(f[P_X].item);
    p->series = cJSON_GetArraySize(f[P_SERIES].item);
    if (p->points < 1 || p->points > CHART_MAX_POINTS)
        return json_fail(d, &f[P_X], "1 to %d points (got %d)", CHART_MAX_POINTS, p->points);
    if (p->series < 1 || p->series > CHART_MAX_SERIES)
        return json_fail(d, &f[P_SERIES], "1 to %d series (got %d)", CHART_MAX_SERIES,
                         p->series);
    TRY(chart_str(d, &f[P_XLABEL], &p->x_label));
    TRY(chart_num(d, &f[P_MIN], &p->min));
    struct json_value *xs;
    size_t n;
    TRY(json_elements(d, &f[P_X], &xs, &n));
    sp->x[k] = xcalloc((size_t)p->points, sizeof(double));
    int rc = MT_OK;
    for (size_t i = 0; i < n && rc == MT_OK; i++)
        rc = json_double(d, &xs[i], &sp->x[k][i]);
    free(xs);
    p->x = sp->x[k];
    if (rc != MT_OK)
        return rc;
    return chart_panel_series(d, &f[P_SERIES], sp, k, p->points, true);
}

/* A bar panel: "groups" and a bar per series in each. */
static int chart_bars_parse(struct json_doc *d, const struct json_value *f,
                            struct chart_spec *sp, int k)
{
    struct chart_panel *p = &sp->panel[k];
    if (!cJSON_IsArray(f[P_GROUPS].item) || !cJSON_IsArray(f[P_SERIES].item))
        return json_fail(d, &f[P_SERIES], "a bar panel has \"groups\" and \"series\" arrays");
    p->decimals = 1;
    if (f[P_DECIMALS].item != NULL)
        TRY(json_int(d, &f[P_DECIMALS], 0, 3, &p->decimals));
    p->groups = cJSON_GetArraySize(f[P_GROUPS].item);
    p->series = cJSON_GetArraySize(f[P_SERIES].item);
    if (p->groups < 1 || p->groups > CHART_MAX_GROUPS)
        return json_fail(d, &f[P_GROUPS], "1 to %d groups (got %d)", CHART_MAX_GROUPS,
                         p->groups);
    if (p->series < 1 || p->series > CHART_MAX_SERIES)
        return json_fail(d, &f[P_SERIES], "1 to %d series (got %d)", CHART_MAX_SERIES,
                         p->series);
    struct json_value *gs;
    size_t n;
    TRY(json_elements(d, &f[P_GROUPS], &gs, &n));
    int rc = MT_OK;
    for (size_t g = 0; g < n && rc == MT_OK; g++)
        rc = json_string(d, &gs[g], &sp->groups[k][g]);
    free(gs);
    p->group_names = sp->groups[k];
    if (rc != MT_OK)
        return rc;
    return chart_panel_series(d, &f[P_SERIES], sp, k, p->groups, false);
}

static int chart_panel_parse(struct json_doc *d, const struct json_value *po,
                             struct chart_spec *sp, int k)
{
    static const char *const keys[P__COUNT] = {"title",  "unit", "max", "series", "decimals",
                                               "groups", "x",    "min", "x_label"};
    struct json_value f[P__COUNT];
    TRY(json_fields(d, po, keys, P__COUNT, f));
    struct chart_panel *p = &sp->panel[k];
    TRY(chart_str(d, &f[P_TITLE], &p->title));
    TRY(chart_str(d, &f[P_UNIT], &p->unit));
    TRY(chart_num(d, &f[P_MAX], &p->max));
    bool lines = f[P_X].item != NULL;
    /* the keys of the other kind of panel are mistakes, not options */
    static const int bar_only[] = {P_DECIMALS, P_GROUPS}, line_only[] = {P_X, P_MIN, P_XLABEL};
    const int *other = lines ? bar_only : line_only;
    int nother = lines ? 2 : 3;
    for (int i = 0; i < nother; i++)
        if (f[other[i]].item != NULL)
            return json_fail(d, &f[other[i]], "not a key of a %s panel", lines ? "line" : "bar");
    return lines ? chart_lines_parse(d, f, sp, k) : chart_bars_parse(d, f, sp, k);
}

/* Parses the document into sp (which points into it). */
static int chart_spec_parse(struct json_doc *d, const struct json_value *root,
                            struct chart_spec *sp)
{
    static const char *const keys[3] = {"title", "subtitle", "panels"};
    struct json_value f[3];
    TRY(json_fields(d, root, keys, 3, f));
    TRY(chart_str(d, &f[0], &sp->c.title));
    TRY(chart_str(d, &f[1], &sp->c.subtitle));
    if (!cJSON_IsArray(f[2].item))
        return json_fail(d, &f[2], "the spec is an object with a \"panels\" array");
    sp->c.panels = cJSON_GetArraySize(f[2].item);
    if (sp->c.panels < 1 || sp->c.panels > CHART_MAX_PANELS)
        return json_fail(d, &f[2], "1 to %d (got %d)", CHART_MAX_PANELS, sp->c.panels);
    struct json_value *po;
    size_t n;
    TRY(json_elements(d, &f[2], &po, &n));
    int rc = MT_OK;
    for (size_t k = 0; k < n && rc == MT_OK; k++)
        rc = chart_panel_parse(d, &po[k], sp, (int)k);
    free(po);
    sp->c.panel = sp->panel;
    return rc;
}

int chart_spec_load_string(const char *text, size_t len, const char *name, struct chart_spec **out,
                           struct mt_err *e)
{
    *out = NULL;
    size_t bad = str_utf8_check(text, len); /* JSON is UTF-8, and Cairo draws nothing else */
    if (bad < len)
        return str_text_error(e, name, text, len, bad, "not valid UTF-8 (a spec is UTF-8 text)");
    struct json_doc *d;
    TRY(json_doc_parse(text, len, name, MT_EINVAL, &d, e));
    struct json_value root;
    json_doc_root(d, &root);
    struct chart_spec *sp = xcalloc(1, sizeof *sp);
    int rc = chart_spec_parse(d, &root, sp);
    sp->doc = d;
    if (rc != MT_OK) {
        chart_spec_free(sp);
        return rc;
    }
    *out = sp;
    return MT_OK;
}

int chart_spec_load(const char *path, struct chart_spec **out, struct mt_err *e)
{
    char *text;
    size_t len;
    *out = NULL;
    TRY(str_read_file(path, CHART_SPEC_MAX_BYTES, &text, &len, e));
    int rc = chart_spec_load_string(text, len, path, out, e);
    free(text);
    return rc;
}
