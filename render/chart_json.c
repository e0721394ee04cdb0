/* render/chart_json.c: chart specs, the JSON files `mario-tui chart SPEC.json` draws (format
 * in render/chart.h), read into the struct chart that chart_build lays out. The spec owns
 * the parsed document: the chart's strings point into it, so both live and die together.
 * Every count is checked against CHART_MAX_* before anything is allocated for it, and every
 * number the chart uses is finite or null, so chart_build only sees what it can draw. */
#include <config.h>
#include "render/chart.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/err.h"
#include "util/str.h"
#include "util/xalloc.h"

/* Everything the spec points to, freed at once. */
struct chart_spec {
    cJSON *root; /* the document the strings below point into */
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
    cJSON_Delete(sp->root);
    free(sp);
}

const struct chart *chart_spec_chart(const struct chart_spec *sp)
{
    return &sp->c;
}

static const char *chart_str(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static int chart_color(const char *name, int fallback, enum pal *out, struct mt_err *e)
{
    static const enum pal cycle[] = {PAL_SYNC, PAL_FW, PAL_CFW, PAL_W,
                                     PAL_BW,   PAL_RC, PAL_B,   PAL_MEM_OVER};
    if (name == NULL) {
        *out = cycle[fallback % (int)(sizeof cycle / sizeof cycle[0])];
        return MT_OK;
    }
    for (int p = 0; p < PAL__COUNT; p++)
        if (strcasecmp(palette_name((enum pal)p), name) == 0) {
            *out = (enum pal)p;
            return MT_OK;
        }
    return err_set(e, MT_EINVAL, "unknown colour '%s' (a render/palette.h name: FW, BW, ...)",
                   name);
}

static int chart_series_parse(const cJSON *so, int groups, int s, struct chart_series *out,
                              double *values, struct mt_err *e)
{
    const cJSON *vals = cJSON_GetObjectItemCaseSensitive(so, "values");
    if (!cJSON_IsObject(so) || !cJSON_IsArray(vals) || cJSON_GetArraySize(vals) != groups)
        return err_set(e, MT_EINVAL, "series[%d]: an object with \"values\", one per group (%d)", s,
                       groups);
    out->name = chart_str(so, "name");
    out->dashed = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(so, "dashed"));
    TRY(chart_color(chart_str(so, "color"), s, &out->color, e));
    for (int g = 0; g < groups; g++) {
        const cJSON *v = cJSON_GetArrayItem(vals, g);
        if (cJSON_IsNull(v))
            values[g] = NAN;
        else if (cJSON_IsNumber(v) && isfinite(v->valuedouble))
            values[g] = v->valuedouble;
        else
            return err_set(e, MT_EINVAL, "series[%d].values[%d]: a finite number or null", s, g);
    }
    out->values = values;
    return MT_OK;
}

/* A line panel: "x" and one curve per series, allocated to the number of points. */
static int chart_lines_parse(const cJSON *po, const cJSON *xs, struct chart_spec *sp, int k,
                             struct mt_err *e)
{
    struct chart_panel *p = &sp->panel[k];
    const cJSON *series = cJSON_GetObjectItemCaseSensitive(po, "series");
    if (!cJSON_IsArray(series))
        return err_set(e, MT_EINVAL, "a line panel has \"x\" and \"series\" arrays");
    p->points = cJSON_GetArraySize(xs);
    p->series = cJSON_GetArraySize(series);
    if (p->points < 1 || p->points > CHART_MAX_POINTS || p->series < 1 ||
        p->series > CHART_MAX_SERIES)
        return err_set(e, MT_EINVAL, "1 to %d points and 1 to %d series (got %d, %d)",
                       CHART_MAX_POINTS, CHART_MAX_SERIES, p->points, p->series);
    sp->x[k] = xcalloc((size_t)p->points, sizeof(double));
    for (int i = 0; i < p->points; i++) {
        const cJSON *v = cJSON_GetArrayItem(xs, i);
        if (!cJSON_IsNumber(v))
            return err_set(e, MT_EINVAL, "x[%d]: a number", i);
        sp->x[k][i] = v->valuedouble;
    }
    p->x = sp->x[k];
    const cJSON *min = cJSON_GetObjectItemCaseSensitive(po, "min");
    p->min = cJSON_IsNumber(min) ? min->valuedouble : 0;
    p->x_label = chart_str(po, "x_label");
    for (int s = 0; s < p->series; s++) {
        sp->curve[k][s] = xcalloc((size_t)p->points, sizeof(double));
        TRY(chart_series_parse(cJSON_GetArrayItem(series, s), p->points, s, &sp->series[k][s],
                               sp->curve[k][s], e));
    }
    p->s = sp->series[k];
    return MT_OK;
}

static int chart_panel_parse(const cJSON *po, struct chart_spec *sp, int k, struct mt_err *e)
{
    struct chart_panel *p = &sp->panel[k];
    const cJSON *xs = cJSON_GetObjectItemCaseSensitive(po, "x");
    if (cJSON_IsObject(po) && cJSON_IsArray(xs)) {
        p->title = chart_str(po, "title");
        p->unit = chart_str(po, "unit");
        const cJSON *max = cJSON_GetObjectItemCaseSensitive(po, "max");
        p->max = cJSON_IsNumber(max) ? max->valuedouble : 0;
        return chart_lines_parse(po, xs, sp, k, e);
    }
    const cJSON *groups = cJSON_GetObjectItemCaseSensitive(po, "groups");
    const cJSON *series = cJSON_GetObjectItemCaseSensitive(po, "series");
    if (!cJSON_IsObject(po) || !cJSON_IsArray(groups) || !cJSON_IsArray(series))
        return err_set(e, MT_EINVAL, "an object with \"groups\" and \"series\" arrays");
    p->title = chart_str(po, "title");
    p->unit = chart_str(po, "unit");
    const cJSON *max = cJSON_GetObjectItemCaseSensitive(po, "max");
    const cJSON *dec = cJSON_GetObjectItemCaseSensitive(po, "decimals");
    p->max = cJSON_IsNumber(max) ? max->valuedouble : 0;
    if (dec != NULL && !(cJSON_IsNumber(dec) && dec->valuedouble >= 0 && dec->valuedouble <= 3 &&
                         dec->valuedouble == floor(dec->valuedouble)))
        return err_set(e, MT_EINVAL, "decimals: a whole number from 0 to 3");
    p->decimals = dec != NULL ? (int)dec->valuedouble : 1;
    p->groups = cJSON_GetArraySize(groups);
    p->series = cJSON_GetArraySize(series);
    if (p->groups < 1 || p->groups > CHART_MAX_GROUPS || p->series < 1 ||
        p->series > CHART_MAX_SERIES)
        return err_set(e, MT_EINVAL, "1 to %d groups and 1 to %d series (got %d, %d)",
                       CHART_MAX_GROUPS, CHART_MAX_SERIES, p->groups, p->series);
    for (int g = 0; g < p->groups; g++) {
        sp->groups[k][g] = cJSON_GetArrayItem(groups, g)->valuestring;
        if (sp->groups[k][g] == NULL)
            return err_set(e, MT_EINVAL, "groups[%d]: a string", g);
    }
    p->group_names = sp->groups[k];
    for (int s = 0; s < p->series; s++)
        TRY(chart_series_parse(cJSON_GetArrayItem(series, s), p->groups, s, &sp->series[k][s],
                               sp->values[k][s], e));
    p->s = sp->series[k];
    return MT_OK;
}

/* Parses the document into sp (which points into it). */
static int chart_spec_parse(const cJSON *root, struct chart_spec *sp, struct mt_err *e)
{
    const cJSON *panels = cJSON_GetObjectItemCaseSensitive(root, "panels");
    if (!cJSON_IsObject(root) || !cJSON_IsArray(panels))
        return err_set(e, MT_EINVAL, "the spec is an object with a \"panels\" array");
    sp->c.title = chart_str(root, "title");
    sp->c.subtitle = chart_str(root, "subtitle");
    sp->c.panels = cJSON_GetArraySize(panels);
    if (sp->c.panels < 1 || sp->c.panels > CHART_MAX_PANELS)
        return err_set(e, MT_EINVAL, "panels: 1 to %d (got %d)", CHART_MAX_PANELS, sp->c.panels);
    for (int k = 0; k < sp->c.panels; k++)
        if (chart_panel_parse(cJSON_GetArrayItem(panels, k), sp, k, e) != MT_OK)
            return err_wrap(e, "panels[%d]", k);
    sp->c.panel = sp->panel;
    return MT_OK;
}

int chart_spec_load_string(const char *text, size_t len, const char *name, struct chart_spec **out,
                           struct mt_err *e)
{
    *out = NULL;
    size_t bad = str_utf8_check(text, len); /* JSON is UTF-8, and Cairo draws nothing else */
    if (bad < len)
        return str_text_error(e, name, text, len, bad, "not valid UTF-8 (a spec is UTF-8 text)");
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, false);
    if (root == NULL)
        return str_json_syntax_error(e, name, text, len, end);
    struct chart_spec *sp = xcalloc(1, sizeof *sp);
    sp->root = root;
    int rc = chart_spec_parse(root, sp, e);
    if (rc != MT_OK) {
        chart_spec_free(sp);
        return err_wrap(e, "%s", name);
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
