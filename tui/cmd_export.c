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
#include <time.h>
#include <unistd.h>

#include "render/layout.h"
#include "render/paint_cairo.h"
#include "render/paint_svg.h"
#include "sim/plan/footprint.h"
#include "sim/passes/pass.h"
#include "sim/plan/plan.h"
#include "sim/search/search.h"
#include "sim/core/simulate.h"
#include "tui/export_launch.h"
#include "util/err.h"
#include "util/str.h"

static const char export_usage[] =
    "Usage: mario-tui export [CONFIG | --plan FILE] [plan flags] [--passes all|0..4] [--search]\n"
    "                        [--quiet]\n"
    "                        [-o FILE | --svg FILE | --pdf FILE | --png FILE]...\n"
    "                        [--width PX] [--memory-view] [--comm] [--no-labels] [--title T]\n"
    "Draw a plan's simulated pipeline as a Gantt chart (one row per device, a lane per part,\n"
    "boxes coloured by op, idle time hatched) with a time axis, a legend and the step "
    "time.\n\n";

/* EXPORT_PLAN: the plan itself, JSON or torch's schedule CSV by extension (plan_save). */
enum export_fmt { EXPORT_SVG, EXPORT_PDF, EXPORT_PNG, EXPORT_PLAN, EXPORT_OTHER };

#define EXPORT_MAX_OUT 16

struct export_out {
    enum export_fmt fmt;
    const char *path;
};

struct export_opts {
    struct layout_opts lo;
    int width;
    struct export_out outs[EXPORT_MAX_OUT];
    int n_out;
    const char *plan_path;
    bool passes;                /* --passes given: rows says which steps */
    bool rows[PASS_ROW__COUNT]; /* else the base plan only */
    bool search;                /* the search's plan (alone, or after the passes' steps) */
    bool quiet;                 /* no progress on stderr, even on a terminal */
    int launch;                 /* --format: 1 + enum launch_kind, 0 none (tui/export_launch.c) */
};

static int export_passes(void *opts, const struct cmd_option *o, const char *arg,
                         struct mt_err *e);
static int export_output(void *opts, const struct cmd_option *o, const char *arg,
                         struct mt_err *e);
static int export_format(void *opts, const struct cmd_option *o, const char *arg,
                         struct mt_err *e);

static const struct cmd_option export_options[] = {
    {.name = "plan", .arg = "FILE", CMD_TO_STRING(struct export_opts, plan_path),
     .help = "draw a saved plan (mario-plan JSON) instead of a config"},
    {.name = "passes", .arg = "WHICH", CMD_TO_CALL(export_passes, 0),
     .help = "run Mario's passes and draw their steps: 'all' (base, ckpt,\n"
             "overlap, redundancy, prepose) or a list of 0..4 such as 0,4\n"
             "(0 = base, 1 = after apply-checkpoint, ..., 4 = final)"},
    {.name = "search", CMD_TO_BOOL(struct export_opts, search),
     .help = "draw the searched plan (as simulate --search): Mario's passes,\n"
             "then the schedule search under the cap; with --passes, after\n"
             "the passes' steps"},
    {.name = "quiet", .letter = 'q', CMD_TO_BOOL(struct export_opts, quiet),
     .help = "no progress bar on stderr (drawn only on a terminal: the\n"
             "search takes seconds on large plans)"},
    {.name = "output", .letter = 'o', .arg = "FILE", CMD_TO_CALL(export_output, -1),
     .help = "write FILE; the format follows its extension: .svg .pdf .png\n"
             "pictures; .json the plan, .csv the plan as torch's schedule\n"
             "CSV (torch.distributed.pipelining _load_csv; DualPipeV's pairs as\n"
             "OVERLAP_F_B; ZeRO-2 / FSDP's UNSHARD, RESHARD, REDUCE_GRAD; a\n"
             "checkpointed plan's order with CFW as F and no RC,\n"
             "the activation checkpointing to run it with and both steps said)"},
    {.name = "format", .arg = "megatron|torchtitan", CMD_TO_CALL(export_format, 0),
     .help = "write the plan as a launch instead: a Megatron-LM script (degrees,\n"
             "virtual stages, recompute, batch, model flags) or a torchtitan job\n"
             "TOML ([parallelism], [activation_checkpoint]; a schedule CSV beside\n"
             "it where torchtitan takes the schedule only so) to -o FILE or stdout"},
    {.name = "svg", .arg = "FILE", CMD_TO_CALL(export_output, EXPORT_SVG),
     .help = "write FILE as SVG whatever its extension"},
    {.name = "pdf", .arg = "FILE", CMD_TO_CALL(export_output, EXPORT_PDF),
     .help = "write FILE as PDF whatever its extension"},
    {.name = "png", .arg = "FILE", CMD_TO_CALL(export_output, EXPORT_PNG),
     .help = "write FILE as PNG whatever its extension"},
    {.name = "width", .arg = "PX",
     CMD_TO_INT(struct export_opts, width, LAYOUT_MIN_WIDTH, LAYOUT_MAX_WIDTH),
     .help = "picture width: pixels for PNG, points for PDF, user units for\n"
             "SVG (default 1200, from 320 to 32768)"},
    {.name = "memory-view", CMD_TO_BOOL(struct export_opts, lo.memory),
     .help = "add per-device peak-memory bars (static and activations, the\n"
             "cap as a dashed line, orange-red over the cap) and memory-over-\n"
             "time curves, one strip per device"},
    {.name = "comm", CMD_TO_BOOL(struct export_opts, lo.comm),
     .help = "mark every send -> receive with a thin line"},
    {.name = "no-labels", CMD_TO_BOOL(struct export_opts, lo.no_labels),
     .help = "no micro-batch numbers inside the boxes"},
    {.name = "title", .arg = "TEXT", CMD_TO_STRING(struct export_opts, lo.title),
     .help = "replace the title made from the config"},
    {0},
};

static int export_exec(int argc, char **argv);

const struct cmd_entry cmd_export_entry = {
    .name = "export",
    .summary = "draw a plan: Gantt chart and memory as SVG, PDF or PNG",
    .usage = export_usage,
    .plan_flags = true,
    .options = export_options,
    .footer =
        "Several pass steps: SVG and PNG get one figure with a panel per step; a PDF gets one "
        "page\n"
        "per step. All panels and pages share one time axis (t under unit costs, else ms).\n"
        "Exit status: 0 ok, 1 a file could not be written, 2 bad usage or input.\n",
    .args_max = 1,
    .args = "CONFIG",
    .exec = export_exec,
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
            return err_set(e, MT_EINVAL, "'%s' is not 'all' or a list of steps 0..%d (e.g. 0,4)",
                           s, PASS_ROW__COUNT - 1);
        rows[*p - '0'] = true;
        if (p[1] == '\0')
            return MT_OK;
        p += 2;
    }
}

static int export_passes(void *opts, const struct cmd_option *o, const char *arg,
                         struct mt_err *e)
{
    struct export_opts *x = opts;
    x->passes = true;
    return export_parse_passes(arg, x->rows, e);
}

/* -o FILE (.value -1: the format from the extension), or --svg, --pdf, --png FILE. */
static int export_output(void *opts, const struct cmd_option *o, const char *arg,
                         struct mt_err *e)
{
    struct export_opts *x = opts;
    enum export_fmt fmt = (enum export_fmt)o->value;
    if (o->value < 0 && export_fmt_of(arg, &fmt) != 0)
        fmt = EXPORT_OTHER; /* a launch file of --format, else refused in export_exec */
    if (x->n_out == EXPORT_MAX_OUT)
        return err_set(e, MT_EINVAL, "at most %d output files", EXPORT_MAX_OUT);
    x->outs[x->n_out++] = (struct export_out){fmt, arg};
    return MT_OK;
}

static int export_format(void *opts, const struct cmd_option *o, const char *arg,
                         struct mt_err *e)
{
    enum launch_kind k;
    TRY(launch_kind_parse(arg, &k, e));
    ((struct export_opts *)opts)->launch = 1 + (int)k;
    return MT_OK;
}

static const char *export_fmt_name(enum export_fmt f)
{
    return f == EXPORT_SVG ? "SVG" : f == EXPORT_PDF ? "PDF" : f == EXPORT_PNG ? "PNG" : "plan";
}

/* The search's progress on stderr (a terminal only, and not --quiet), at most ten times a
 * second; the line is cleared when it ends. */
struct export_progress {
    bool on;
    double last_ms;
};

static double export_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

static bool export_search_progress(void *ctx, long done, long budget)
{
    struct export_progress *pr = ctx;
    double now = export_now_ms();
    if (!pr->on || now - pr->last_ms < 100)
        return true;
    pr->last_ms = now;
    int width = 30, fill = budget > 0 ? (int)(done * width / budget) : 0;
    fprintf(stderr, "\rsearch [");
    for (int i = 0; i < width; i++)
        fputc(i < fill ? '#' : '.', stderr);
    fprintf(stderr, "] %ld of %ld schedules", done, budget);
    fflush(stderr);
    return true;
}

/* A plan over the cap is drawn (marked orange-red in the picture) and said on stderr, naming the
 * device furthest over and its bytes, so that a script that only checks the exit status is
 * not the only reader. */
static void export_warn_over_cap(const struct layout_panel *panels, int n)
{
    for (int k = 0; k < n; k++) {
        const struct sim_result *s = panels[k].sim;
        int over = 0, worst = -1;
        for (int d = 0; s->cap > 0 && d < s->devices; d++)
            if (s->dev[d].peak_mem > s->cap) {
                over++;
                if (worst < 0 || s->dev[d].peak_mem > s->dev[worst].peak_mem)
                    worst = d;
            }
        if (over == 0)
            continue;
        char peak[64], cap[64];
        if (s->unit) {
            snprintf(peak, sizeof peak, "%.4g M_θ", s->dev[worst].peak_mem);
            snprintf(cap, sizeof cap, "%.4g M_θ", s->cap);
        } else { /* the exact bytes too: what a script compares */
            char a[32], b[32];
            str_format_bytes(s->dev[worst].peak_mem, a, sizeof a);
            str_format_bytes(s->cap, b, sizeof b);
            snprintf(peak, sizeof peak, "%s (%.0f bytes)", a, s->dev[worst].peak_mem);
            snprintf(cap, sizeof cap, "%s (%.0f bytes)", b, s->cap);
        }
        fprintf(stderr,
                "mario-tui export: warning: %s%sdevice %d peaks at %s, over the %s cap; %d of %d "
                "devices over (marked in the picture)\n",
                panels[k].name ? panels[k].name : "", panels[k].name ? ": " : "", worst, peak,
                cap, over, s->devices);
    }
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
    export_warn_over_cap(panels, n);
    for (int k = 0; k < n_out; k++) {
        int rc = MT_OK;
        bool said = false;
        err_clear(e);
        switch (outs[k].fmt) {
        case EXPORT_SVG: rc = paint_svg_file(all, outs[k].path, e); break;
        case EXPORT_PLAN:
            rc = export_launch_plan_file(panels[n - 1].plan, outs[k].path, &said, e);
            break;
        case EXPORT_OTHER: break; /* refused in export_exec */
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
            if (strncmp(e->msg, outs[k].path, strlen(outs[k].path)) != 0) /* said once */
                err_wrap(e, "%s", outs[k].path);
            status = cmd_fail("export", e);
            if (status == 2)
                status = 1;
        } else if (outs[k].fmt == EXPORT_PLAN && said) {
            /* export_launch_plan_file said what it wrote */
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

static int export_exec(int argc, char **argv)
{
    struct export_opts o = {.rows = {true}};
    struct cmd_plan cp = {0};
    struct mt_err e = {0};
    int first, status = cmd_options_parse(&cmd_export_entry, argc, argv, &o, &cp, &first);
    if (status != CMD_OPTIONS_RUN)
        return status;
    if (o.plan_path && first < argc)
        return cmd_usage_error("export", "give a CONFIG or --plan FILE, not both");
    if (o.plan_path)
        cp.path = o.plan_path;
    if (o.launch > 0) { /* a launch to -o FILE or stdout (tui/export_launch.c) */
        if (o.n_out > 1)
            return cmd_usage_error("export", "--format writes one file: give one -o FILE");
        return export_launch((enum launch_kind)(o.launch - 1), &cp, o.passes, o.rows, o.search,
                             o.n_out ? o.outs[0].path : NULL);
    }
    if (o.n_out == 0)
        return cmd_usage_error("export", "no output file: give -o FILE.svg|.pdf|.png|.json|.csv");
    for (int k = 0; k < o.n_out; k++)
        if (o.outs[k].fmt == EXPORT_OTHER)
            return cmd_usage_error("export",
                                   "-o: cannot tell the format of '%s' from its extension (.svg, "
                                   ".pdf, .png; .json or .csv for the plan; or use "
                                   "--svg/--pdf/--png, or --format megatron|torchtitan)",
                                   o.outs[k].path);
    o.lo.width = o.width;

    struct plan *p = NULL;
    cp.use = o.search ? FOOTPRINT_SEARCH : o.passes ? FOOTPRINT_PASSES : FOOTPRINT_SIMULATE;
    if (cmd_plan_build(&cp, &p, &e) != MT_OK)
        return cmd_fail("export", &e);

    struct layout_panel panels[PASS_ROW__COUNT + 1];
    int n = 0;
    if (!o.passes && !o.search) {
        struct sim_result r;
        if (sim_run(p, &r, &e) != MT_OK) {
            plan_free(p);
            return cmd_fail("export", &e);
        }
        panels[n++] = (struct layout_panel){.plan = p, .sim = &r};
        status = export_write(panels, n, &o.lo, o.outs, o.n_out, &e);
        sim_result_fini(&r);
    } else {
        struct pass_pipeline pl;
        if (pass_pipeline_run(p, &pl, &e) != MT_OK) {
            plan_free(p);
            return cmd_fail("export", &e);
        }
        struct search_opts so;
        search_opts_default(&so, plan_config(p)); /* as simulate --search */
        struct export_progress pr = {.on = isatty(STDERR_FILENO) && !o.quiet,
                                     .last_ms = export_now_ms()};
        so.progress = export_search_progress;
        so.progress_ctx = &pr;
        int src = o.search ? pass_pipeline_search(&pl, &so, &e) : MT_OK;
        if (pr.on && o.search)
            fprintf(stderr, "\r\033[K"); /* the bar's line, cleared */
        if (src != MT_OK) {
            pass_pipeline_fini(&pl);
            plan_free(p);
            return cmd_fail("export", &e);
        }
        for (int row = 0; o.passes && row < PASS_ROW__COUNT; row++) {
            const struct pass_step *st = pass_pipeline_row(&pl, (enum pass_row)row);
            if (!o.rows[row] || st == NULL)
                continue;
            panels[n++] = (struct layout_panel){
                .name = pass_row_name((enum pass_row)row), .plan = st->plan, .sim = &st->sim};
        }
        const struct pass_step *found = pass_pipeline_row(&pl, PASS_ROW_SEARCH);
        if (o.search && found != NULL) {
            /* a lone panel takes the picture's title; beside the passes' rows it is named */
            const char *name = n > 0 ? "search" : NULL;
            panels[n++] = (struct layout_panel){
                .name = name, .plan = found->plan, .sim = &found->sim};
        }
        status = export_write(panels, n, &o.lo, o.outs, o.n_out, &e);
        pass_pipeline_fini(&pl);
    }
    plan_free(p);
    return status;
}
