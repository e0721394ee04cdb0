/* tui/cmd_export.c: `mario-tui export`: build (or load) a plan, simulate it, optionally run
 * Mario's passes, lay it out once (render/layout.c) and paint the layout to every file asked
 * for: SVG (render/paint_svg.c), PNG and PDF (render/paint_cairo.c). With several pass steps
 * SVG and PNG get one composite figure, a panel per step on one time axis; a PDF gets one
 * page per step, every page on that same time axis, so paging through compares like with
 * like. All writes are atomic. */
#include <config.h>
#include "tui/cmd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "render/layout.h"
#include "render/paint_cairo.h"
#include "render/paint_svg.h"
#include "sim/pass.h"
#include "sim/plan.h"
#include "sim/simulate.h"
#include "util/err.h"
#include "util/str.h"

static const char export_usage[] =
    "Usage: mario-tui export [CONFIG | --plan FILE] [plan flags] [--passes all|0..4]\n"
    "                        [-o FILE | --svg FILE | --pdf FILE | --png FILE]...\n"
    "                        [--width PX] [--memory-view] [--comm] [--no-labels] [--title T]\n"
    "Draw a plan's simulated pipeline as a Gantt chart (one row per device, a lane per part,\n"
    "boxes coloured by op, idle time hatched) with a time axis, a legend and the step "
    "time.\n\n" CMD_PLAN_FLAGS_HELP
    "  --plan FILE              draw a saved plan (mario-plan JSON) instead of a config\n"
    "  --passes WHICH           run Mario's passes and draw their steps: 'all' (base, ckpt,\n"
    "                           overlap, redundancy, prepose) or a list of 0..4 such as 0,4\n"
    "                           (0 = base, 1 = after apply-checkpoint, ..., 4 = final)\n"
    "  -o, --output FILE        write FILE; the format follows its extension: .svg .pdf .png\n"
    "                           pictures; .json the plan, .csv the plan as torch's schedule\n"
    "                           CSV (torch.distributed.pipelining _load_csv; no CFW/RC)\n"
    "  --svg FILE, --pdf FILE, --png FILE   write that format whatever the extension\n"
    "  --width PX               picture width: pixels for PNG, points for PDF, user units for\n"
    "                           SVG (default 1200, from 320 to 32768)\n"
    "  --memory-view            add per-device peak-memory bars (static and activations, the\n"
    "                           cap as a dashed line, red over the cap) and memory-over-time\n"
    "                           curves, one strip per device\n"
    "  --comm                   mark every send -> receive with a thin line\n"
    "  --no-labels              no micro-batch numbers inside the boxes\n"
    "  --title TEXT             replace the title made from the config\n"
    "  -h, --help               this help\n"
    "Several pass steps: SVG and PNG get one figure with a panel per step; a PDF gets one page\n"
    "per step. All panels and pages share one time axis (t under unit costs, else ms).\n"
    "Exit status: 0 ok, 1 a file could not be written, 2 bad usage or input.\n";

/* EXPORT_PLAN: the plan itself, JSON or torch's schedule CSV by extension (plan_save). */
enum export_fmt { EXPORT_SVG, EXPORT_PDF, EXPORT_PNG, EXPORT_PLAN };

#define EXPORT_MAX_OUT 16

struct export_out {
    enum export_fmt fmt;
    const char *path;
};

static int export_fmt_of(const char *path, enum export_fmt *fmt)
{
    const char *dot = strrchr(path, '.');
    if (dot == NULL)
        return -1;
    if (strcasecmp(dot, ".svg") == 0)
        *fmt = EXPORT_SVG;
    else if (strcasecmp(dot, ".pdf") == 0)
        *fmt = EXPORT_PDF;
    else if (strcasecmp(dot, ".png") == 0)
        *fmt = EXPORT_PNG;
    else if (strcasecmp(dot, ".json") == 0 || strcasecmp(dot, ".csv") == 0)
        *fmt = EXPORT_PLAN;
    else
        return -1;
    return 0;
}

/* "all", or a comma list of rows 0..4, into rows[]. */
static int export_parse_passes(const char *s, bool rows[PASS_ROW__COUNT], struct mt_err *e)
{
    memset(rows, 0, PASS_ROW__COUNT * sizeof rows[0]);
    if (strcasecmp(s, "all") == 0) {
        for (int i = 0; i < PASS_ROW__COUNT; i++)
            rows[i] = true;
        return MT_OK;
    }
    const char *p = s;
    for (;;) {
        if (*p < '0' || *p > '0' + PASS_ROW__COUNT - 1 || (p[1] != ',' && p[1] != '\0'))
            return err_set(e, MT_EINVAL,
                           "--passes: '%s' is not 'all' or a list of steps 0..%d (e.g. 0,4)", s,
                           PASS_ROW__COUNT - 1);
        rows[*p - '0'] = true;
        if (p[1] == '\0')
            return MT_OK;
        p += 2;
    }
}

static const char *export_fmt_name(enum export_fmt f)
{
    return f == EXPORT_SVG ? "SVG" : f == EXPORT_PDF ? "PDF" : f == EXPORT_PNG ? "PNG" : "plan";
}

/* Lays out and writes every output. panels[n] share one time axis. */
static int export_write(const struct layout_panel *panels, int n, const struct layout_opts *o,
                        const struct export_out *outs, int n_out, struct mt_err *e)
{
    struct layout *all = NULL;
    struct layout **pages = NULL;
    int status = 0;
    struct mt_err le = {0};
    if (layout_build(panels, n, o, &all, &le) != MT_OK)
        return cmd_fail("export", &le);
    for (int k = 0; k < n_out; k++) {
        int rc = MT_OK;
        err_clear(e);
        switch (outs[k].fmt) {
        case EXPORT_SVG: rc = paint_svg_file(all, outs[k].path, e); break;
        case EXPORT_PLAN: rc = plan_save(panels[n - 1].plan, outs[k].path, e); break;
        case EXPORT_PNG: rc = paint_cairo_png(all, outs[k].path, e); break;
        case EXPORT_PDF:
            if (n == 1) {
                const struct layout *one = all;
                rc = paint_cairo_pdf(&one, 1, outs[k].path, e);
                break;
            }
            if (pages == NULL) {
                /* One page per step on the composite's time axis. */
                struct layout_opts po = *o;
                for (int i = 0; i < n; i++)
                    if (panels[i].sim->step_time > po.t_max)
                        po.t_max = panels[i].sim->step_time;
                pages = calloc((size_t)n, sizeof *pages);
                for (int i = 0; rc == MT_OK && i < n; i++)
                    rc = layout_build(&panels[i], 1, &po, &pages[i], e);
            }
            if (rc == MT_OK)
                rc = paint_cairo_pdf((const struct layout *const *)pages, n, outs[k].path, e);
            break;
        }
        if (rc != MT_OK) {
            err_wrap(e, "%s", outs[k].path);
            status = cmd_fail("export", e);
            if (status == 2)
                status = 1;
        } else if (outs[k].fmt == EXPORT_PLAN) {
            printf("wrote %s (%s, %s)\n", outs[k].path,
                   plan_path_is_csv(outs[k].path) ? "torch schedule CSV" : "plan JSON",
                   n > 1 ? panels[n - 1].name : "the base plan");
        } else if (outs[k].fmt == EXPORT_PDF && n > 1) {
            printf("wrote %s (PDF, %d pages)\n", outs[k].path, n);
        } else {
            printf("wrote %s (%s, %.0f x %.0f)\n", outs[k].path, export_fmt_name(outs[k].fmt),
                   layout_width(all), layout_height(all));
        }
    }
    if (pages)
        for (int i = 0; i < n; i++)
            layout_free(pages[i]);
    free(pages);
    layout_free(all);
    return status;
}

int cmd_export(int argc, char **argv)
{
    enum {
        OPT_PLAN = 1,
        OPT_PASSES,
        OPT_SVG,
        OPT_PDF,
        OPT_PNG,
        OPT_WIDTH,
        OPT_MEMORY,
        OPT_COMM,
        OPT_NO_LABELS,
        OPT_TITLE,
    };
    static const struct option longopts[] = {
        CMD_PLAN_LONG_OPTIONS,
        {"plan", required_argument, NULL, OPT_PLAN},
        {"passes", required_argument, NULL, OPT_PASSES},
        {"output", required_argument, NULL, 'o'},
        {"svg", required_argument, NULL, OPT_SVG},
        {"pdf", required_argument, NULL, OPT_PDF},
        {"png", required_argument, NULL, OPT_PNG},
        {"width", required_argument, NULL, OPT_WIDTH},
        {"memory-view", no_argument, NULL, OPT_MEMORY},
        {"comm", no_argument, NULL, OPT_COMM},
        {"no-labels", no_argument, NULL, OPT_NO_LABELS},
        {"title", required_argument, NULL, OPT_TITLE},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct cmd_plan cp = {0};
    struct layout_opts lo = {0};
    struct export_out outs[EXPORT_MAX_OUT];
    int n_out = 0;
    const char *plan_path = NULL, *passes = NULL;
    struct mt_err e = {0};
    int opt;
    optind = 1;
    while ((opt = getopt_long(argc, argv, "ho:", longopts, NULL)) != -1) {
        if (cmd_plan_flag(&cp, opt, optarg))
            continue;
        enum export_fmt fmt = EXPORT_SVG;
        switch (opt) {
        case OPT_PLAN: plan_path = optarg; continue;
        case OPT_PASSES: passes = optarg; continue;
        case OPT_WIDTH: {
            long w;
            if (str_parse_int(optarg, (long)LAYOUT_MIN_WIDTH, (long)LAYOUT_MAX_WIDTH, &w, &e) !=
                MT_OK)
                return cmd_usage_error("export", "--width: %s", e.msg);
            lo.width = (double)w;
            continue;
        }
        case OPT_MEMORY: lo.memory = true; continue;
        case OPT_COMM: lo.comm = true; continue;
        case OPT_NO_LABELS: lo.no_labels = true; continue;
        case OPT_TITLE: lo.title = optarg; continue;
        case 'h': fputs(export_usage, stdout); return 0;
        case 'o':
            if (export_fmt_of(optarg, &fmt) != 0)
                return cmd_usage_error("export",
                                       "-o %s: cannot tell the format from the extension "
                                       "(.svg, .pdf, .png; .json or .csv for the plan; or "
                                       "use --svg/--pdf/--png)",
                                       optarg);
            break;
        case OPT_SVG: fmt = EXPORT_SVG; break;
        case OPT_PDF: fmt = EXPORT_PDF; break;
        case OPT_PNG: fmt = EXPORT_PNG; break;
        default: return cmd_usage_error("export", "unknown option");
        }
        if (n_out == EXPORT_MAX_OUT)
            return cmd_usage_error("export", "at most %d output files", EXPORT_MAX_OUT);
        outs[n_out].fmt = fmt;
        outs[n_out].path = optarg;
        n_out++;
    }
    if (argc - optind > 1)
        return cmd_usage_error("export", "one CONFIG at most (got %d)", argc - optind);
    if (plan_path && optind < argc)
        return cmd_usage_error("export", "give a CONFIG or --plan FILE, not both");
    if (n_out == 0)
        return cmd_usage_error("export", "no output file: give -o FILE.svg|.pdf|.png|.json|.csv");
    bool rows[PASS_ROW__COUNT] = {true};
    if (passes && export_parse_passes(passes, rows, &e) != MT_OK)
        return cmd_usage_error("export", "%s", e.msg);
    cp.path = plan_path ? plan_path : optind < argc ? argv[optind] : NULL;

    struct plan *p = NULL;
    if (cmd_plan_build(&cp, &p, &e) != MT_OK)
        return cmd_fail("export", &e);

    struct layout_panel panels[PASS_ROW__COUNT];
    int n = 0, status;
    if (passes == NULL) {
        struct sim_result r;
        if (sim_run(p, &r, &e) != MT_OK) {
            plan_free(p);
            return cmd_fail("export", &e);
        }
        panels[n++] = (struct layout_panel){.plan = p, .sim = &r};
        status = export_write(panels, n, &lo, outs, n_out, &e);
        sim_result_fini(&r);
    } else {
        struct pass_pipeline pl;
        if (pass_pipeline_run(p, &pl, &e) != MT_OK) {
            plan_free(p);
            return cmd_fail("export", &e);
        }
        for (int row = 0; row < PASS_ROW__COUNT; row++) {
            const struct pass_step *st = pass_pipeline_row(&pl, (enum pass_row)row);
            if (!rows[row] || st == NULL)
                continue;
            panels[n++] = (struct layout_panel){
                .name = pass_row_name((enum pass_row)row), .plan = st->plan, .sim = &st->sim};
        }
        status = export_write(panels, n, &lo, outs, n_out, &e);
        pass_pipeline_fini(&pl);
    }
    plan_free(p);
    return status;
}
