/* tui/cmd_chart.c: `mario-tui chart SPEC.json -o FILE`: a grouped bar chart or line chart
 * from a small JSON spec (read by render/chart_json.c, format in render/chart.h), laid out
 * by render/chart.c and painted by the same painters as `export` (SVG, PNG, PDF). The docs'
 * scripts make their figures with it (scripts/async_doc.sh). */
#include <config.h>
#include "tui/cmd.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "render/chart.h"
#include "render/layout.h"
#include "render/paint_cairo.h"
#include "render/paint_svg.h"
#include "util/err.h"
#include "util/str.h"

static const char chart_usage[] =
    "Usage: mario-tui chart SPEC.json -o FILE.png|.svg|.pdf [--width PX]\n"
    "Draw a grouped bar chart or a line chart from a JSON spec (the docs' figures):\n"
    "  {\"title\": T, \"subtitle\": S, \"panels\": [{\"title\": T, \"unit\": \"%\", \"max\": 100,\n"
    "   \"decimals\": 0, \"groups\": [\"D=8\", ...],\n"
    "   \"series\": [{\"name\": N, \"color\": \"FW\", \"values\": [1.5, null, ...]}, ...]}, ...]}\n"
    "Colours: render/palette.h names (FW CFW RC BW B W sync comm ...); null = no bar.\n"
    "A panel with \"x\": [x0, x1, ...] (ascending) in place of \"groups\" is a line chart: one\n"
    "value per x in each series (null = a gap), optional \"dashed\": true per series, \"min\"\n"
    "and \"max\" of the value axis, \"x_label\".\n\n";

struct chart_opts {
    const char *out;
    double width;
};

static const struct cmd_option chart_options[] = {
    {.name = "output", .letter = 'o', .arg = "FILE", CMD_TO_STRING(struct chart_opts, out),
     .help = "the picture; its format follows the extension"},
    {.name = "width", .arg = "PX", CMD_TO_DOUBLE(struct chart_opts, width, -INFINITY, INFINITY),
     .help = "width in pixels (PNG) or points (PDF, SVG units); default 960"},
    {0},
};

static int chart_exec(int argc, char **argv);

const struct cmd_entry cmd_chart_entry = {
    .name = "chart",
    .summary = "draw a grouped bar chart from a JSON spec (the docs' figures)",
    .usage = chart_usage,
    .options = chart_options,
    .footer = "Exit status: 0 ok, 1 the file could not be written, 2 bad usage or spec.\n",
    .args_min = 1,
    .args_max = 1,
    .args = "SPEC.json",
    .exec = chart_exec,
};

static int chart_write(const struct layout *l, const char *path, struct mt_err *e)
{
    const char *dot = strrchr(path, '.');
    if (dot && strcasecmp(dot, ".svg") == 0)
        return paint_svg_file(l, path, e);
    if (dot && strcasecmp(dot, ".png") == 0)
        return paint_cairo_png(l, path, e);
    if (dot && strcasecmp(dot, ".pdf") == 0)
        return paint_cairo_pdf(&l, 1, path, e);
    return err_set(e, MT_EINVAL, "%s: unknown picture format (.svg, .png or .pdf)", path);
}

static int chart_exec(int argc, char **argv)
{
    struct chart_opts o = {0};
    struct mt_err e = {0};
    int first, st = cmd_options_parse(&cmd_chart_entry, argc, argv, &o, NULL, &first);
    if (st != CMD_OPTIONS_RUN)
        return st;
    if (o.out == NULL)
        return cmd_usage_error("chart", "no output file: give -o FILE.png|.svg|.pdf");
    const char *path = argv[first];
    struct chart_spec *sp = NULL;
    struct layout *l = NULL;
    int rc = chart_spec_load(path, &sp, &e);
    if (rc == MT_OK) {
        struct chart c = *chart_spec_chart(sp);
        c.width = o.width;
        if ((rc = chart_build(&c, &l, &e)) != MT_OK)
            err_wrap(&e, "%s", path);
    }
    if (rc == MT_OK && (rc = chart_write(l, o.out, &e)) == MT_OK)
        printf("wrote %s (%.0f x %.0f)\n", o.out, layout_width(l), layout_height(l));
    layout_free(l);
    chart_spec_free(sp);
    return rc == MT_OK ? 0 : cmd_fail("chart", &e);
}
