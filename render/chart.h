/* render/chart.h: grouped bar charts and line charts laid out with the Gantt chart's
 * primitives (render/layout.h), so the same painters draw them (SVG, PNG, PDF). Used for the
 * figures of docs/ (docs/async.md: utilization and memory of pipeline schemes by pipeline
 * depth; loss curves of the executor's runs). */
#ifndef MT_RENDER_CHART_H
#define MT_RENDER_CHART_H

#include <stdbool.h>
#include <stddef.h>

#include "render/palette.h"

struct layout;
struct mt_err;

#define CHART_MAX_PANELS 8
#define CHART_MAX_SERIES 8
#define CHART_MAX_GROUPS 32
#define CHART_MAX_POINTS 100000

struct chart_series {
    const char *name;
    enum pal color;
    const double *values; /* [groups]; NaN or < 0 = no bar (shown as "n/a"). Line panels:
                           * [points], NaN = a gap in the curve */
    bool dashed;          /* line panels: a dashed curve */
};

/* One bar chart: a bar per series in each group, a value label over each bar. */
struct chart_panel {
    const char *title;
    const char *unit; /* after the value labels and on the axis ("%", "GiB"); may be "" */
    double max;       /* top of the value axis; 0 = from the data */
    int decimals;     /* of the value labels (0 to 3) */
    int groups;
    const char *const *group_names; /* [groups] */
    int series;
    const struct chart_series *s; /* [series] */
    /* A line panel when points > 0: every series is a curve through (x[i], values[i]),
     * i < points, over a linear x axis from x[0] to x[points - 1] (x strictly ascending);
     * groups and group_names are unused, and the value axis spans [min, max] (max 0: from the
     * data; values outside are clipped to it). */
    int points;
    const double *x;
    double min;
    const char *x_label; /* under the x axis; may be NULL */
};

struct chart {
    const char *title;    /* may be NULL */
    const char *subtitle; /* may be NULL */
    double width;         /* units (PNG pixels); 0 = 960 */
    int panels;           /* stacked top to bottom, one legend (the first panel's series) */
    const struct chart_panel *panel;
};

/* Lays the chart out. MT_EINVAL for counts outside 1..CHART_MAX_*, a width outside
 * [LAYOUT_MIN_WIDTH, LAYOUT_MAX_WIDTH], a value that is not finite where a bar is drawn, or a
 * line panel's x that is not finite and ascending or min >= max.
 * *out is owned by the caller (layout_free). */
int chart_build(const struct chart *c, struct layout **out, struct mt_err *e);

/* ---- render/chart_json.c: chart specs (`mario-tui chart SPEC.json`) ------------------------
 * {"title": T, "subtitle": S, "panels": [{"title": T, "unit": "%", "max": 100, "decimals": 0,
 *   "groups": ["D=8", ...], "series": [{"name": "GPipe", "color": "FW",
 *   "values": [12.5, null, ...]}, ...]}, ...]}
 * colours are render/palette.h names (FW CFW RC BW B W sync ...); null is "no bar";
 * "decimals" (0 to 3, default 1) are those of the value labels. A panel with "x": [x0, x1,
 * ...] (ascending) instead of "groups" is a line panel: each series' "values" has one number
 * per x (null: a gap), "dashed": true draws it dashed, "min" and "max" bound the value axis
 * and "x_label" names the x axis.
 * Errors name the position (util/json.h): "file:line:col: syntax error near '...'"
 * (MT_EPARSE) and "file:line:col: panels[1].series[0].values[2]: ..." for values (MT_EINVAL);
 * chart_build checks the rest (ascending x, min < max). */
#define CHART_SPEC_MAX_BYTES (1u << 20) /* larger specs are refused */

struct chart_spec;

int chart_spec_load(const char *path, struct chart_spec **out, struct mt_err *e);
int chart_spec_load_string(const char *text, size_t len, const char *name, struct chart_spec **out,
                           struct mt_err *e);
/* The chart the spec describes: a borrowed view, valid until chart_spec_free (its strings
 * and values live in the spec). */
const struct chart *chart_spec_chart(const struct chart_spec *sp);
void chart_spec_free(struct chart_spec *sp);

#endif
