/* tui/view_frame.c: the whole screen: a title bar (model, scheme, geometry, step time,
 * throughput), the pass bar (each step's time and its change against base, the shown one
 * highlighted), the current view, and the status line. Below 80x24 it says so instead. */
#include <config.h>
#include "tui/explore.h"

#include <stdio.h>
#include <string.h>

#include "render/paint_cells.h"
#include "sim/plan.h"
#include "sim/simulate.h"
#include "util/str.h"

static void frame_time(const struct explore *x, double v, char *buf, size_t n)
{
    if (x->cfg.unit.enabled)
        snprintf(buf, n, "%.4gt", v);
    else
        snprintf(buf, n, "%.3fs", v * 1e-6);
}

static void frame_title(struct explore *x, struct cells *g)
{
    const struct pass_step *st = explore_step(x);
    const struct plan_geom *geo = plan_geom(st->plan);
    const struct config *c = plan_config(st->plan);
    char t[32], cap[32];
    frame_time(x, st->sim.step_time, t, sizeof t);
    if (c->unit.enabled)
        snprintf(cap, sizeof cap, "unit costs");
    else
        str_format_bytes(c->memory_per_device, cap, sizeof cap);
    for (int cx = 0; cx < g->w; cx++)
        cells_put(g, cx, 0, ' ', PAL_BG, PAL_TEXT, 0);
    char chunks[40] = "";
    int n_mb = geo->mbs;
    if (geo->scheme == SCHEME_W || geo->scheme == SCHEME_ZBW)
        snprintf(chunks, sizeof chunks, " v%d", geo->parts);
    if (config_scheme_async(geo->scheme)) { /* K iterations x N, an update every U */
        snprintf(chunks, sizeof chunks, " K %d U %d", c->iterations, c->update_interval);
        n_mb = config_microbatches(c);
    }
    cells_printf(g, 1, 0, g->w - 2, PAL_BG, PAL_TEXT, CELL_BOLD,
                 "mario-tui  %s  %s%s  pp %d x dp %d  N %d x mbs %d  %s %s  step %s  %.4g %s",
                 c->model.name, config_scheme_name(geo->scheme), chunks, geo->devices,
                 c->cluster.dp, n_mb, c->micro_batch_size,
                 c->unit.enabled ? "" : c->cluster.device.name, cap, t, st->sim.throughput,
                 c->unit.enabled ? "samples/t" : "samples/s");
}

static void frame_passes(struct explore *x, struct cells *g)
{
    const struct pass_step *base = pass_pipeline_row(&x->pl, PASS_ROW_BASE);
    int cx = 1;
    for (int row = 0; row < PASS_ROW__COUNT; row++) {
        const struct pass_step *st = pass_pipeline_row(&x->pl, (enum pass_row)row);
        char t[32], item[96];
        frame_time(x, st->sim.step_time, t, sizeof t);
        double change = base->sim.step_time > 0
                            ? 100 * (st->sim.step_time / base->sim.step_time - 1)
                            : 0;
        if (row == 0)
            snprintf(item, sizeof item, " %s %s ", pass_row_name((enum pass_row)row), t);
        else
            snprintf(item, sizeof item, " %s %s %+.1f%% ", pass_row_name((enum pass_row)row),
                     t, change);
        bool cur = row == x->row;
        cx += cells_text(g, cx, 1, g->w - cx, item, cur ? PAL_BG : PAL_TEXT_DIM,
                         cur ? PAL_FW : PAL_BG, cur ? CELL_BOLD : 0);
        if (row + 1 < PASS_ROW__COUNT)
            cx += cells_text(g, cx, 1, g->w - cx, x->utf8 ? "›" : ">", PAL_AXIS, PAL_BG, 0);
    }
    /* Async plans: the shown step's utilization, whole and in the steady state. */
    const struct pass_step *st = explore_step(x);
    if (st != NULL && config_scheme_async(plan_geom(st->plan)->scheme) && cx < g->w - 2) {
        char u[64];
        snprintf(u, sizeof u, "  util %.0f%% steady %.0f%%", 100 * st->sim.utilization,
                 100 * st->sim.steady_utilization);
        cells_text(g, cx, 1, g->w - cx, u, PAL_TEXT, PAL_BG, CELL_BOLD);
    }
}

static void frame_status(struct explore *x, struct cells *g)
{
    int y = g->h - 1;
    for (int cx = 0; cx < g->w; cx++)
        cells_put(g, cx, y, ' ', PAL_TEXT, PAL_BG, 0);
    if (x->mode == MODE_PROMPT) {
        cells_printf(g, 0, y, g->w, PAL_TEXT, PAL_BG, CELL_BOLD, "%s%s_",
                     x->prompt == PROMPT_SEARCH  ? "search (mb, op, or op+mb): "
                     : x->prompt == PROMPT_TRACE ? "measured trace (Chrome or Kineto JSON): "
                                                 : "export to (.json .trace.json .svg .pdf .png): ",
                     x->input);
        return;
    }
    cells_text(g, 0, y, g->w, x->status, x->status_err ? PAL_MEM_OVER : PAL_TEXT_DIM, PAL_BG,
               x->status_err ? CELL_BOLD : 0);
}

void explore_draw(struct explore *x, struct cells *g)
{
    x->w = g->w;
    x->h = g->h;
    cells_clear(g, PAL_BG);
    if (g->w < EXPLORE_MIN_W || g->h < EXPLORE_MIN_H) {
        char msg[64];
        snprintf(msg, sizeof msg, "terminal too small (need %dx%d, have %dx%d)", EXPLORE_MIN_W,
                 EXPLORE_MIN_H, g->w, g->h);
        int len = (int)strlen(msg);
        cells_text(g, g->w > len ? (g->w - len) / 2 : 0, g->h / 2, 0, msg, PAL_TEXT, PAL_BG,
                   CELL_BOLD);
        return;
    }
    if (explore_step(x) == NULL)
        return;
    frame_title(x, g);
    frame_passes(x, g);
    switch (x->mode) {
    case MODE_HELP:
        view_help_draw(x, g);
        break;
    case MODE_TUNE:
        view_tune_draw(x, g, 3, g->h - 4);
        break;
    case MODE_BUCKETS:
        view_buckets_draw(x, g, 3, g->h - 4);
        break;
    default: {
        int gantt_h = g->h - 3 - EXPLORE_BOTTOM;
        view_gantt_draw(x, g, 3, gantt_h);
        view_inspect_draw(x, g, 3 + gantt_h, EXPLORE_BOTTOM - 1);
        break;
    }
    }
    frame_status(x, g);
}
