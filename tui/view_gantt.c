/* tui/view_gantt.c: the Gantt view, a painter of render/'s layout (render/layout.h, the
 * picture `export` writes): the layout gives the boxes, bubbles, lanes (one per device and
 * part; a measured row under each when a trace is shown) and iteration marks of async plans,
 * render/paint_cells.h maps them to cells (each cell the colour of what covers most of it).
 * Drawn here over them: lane names, micro-batch numbers where they fit, the selected
 * instruction in reverse video, what the shown pass changed underlined and marked, the
 * critical path in bold; beside each device its peak memory bar (static, activations, the
 * cap; red over the cap) and, for async plans, each stage's weight staleness τ; a time axis
 * below. */
#include <config.h>
#include "tui/explore.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/layout.h"
#include "render/paint_cells.h"
#include "sim/plan.h"
#include "sim/simulate.h"
#include "util/err.h"
#include "util/str.h"
#include "util/xalloc.h"

/* Async plans (one stage per device) show each stage's weight staleness beside its bar. */
static bool gantt_shows_staleness(const struct plan *p, const struct sim_result *r)
{
    return config_scheme_async(plan_geom(p)->scheme) && plan_geom(p)->parts == 1 &&
           r->staleness != NULL && r->stages == r->devices;
}

/* The memory column of device d: [static|activations    |cap] peak, then τ staleness. */
static void gantt_mem_bar(struct explore *x, struct cells *g, int y, int col,
                          const struct sim_result *r, int d, double scale, bool stale)
{
    const struct sim_device *dv = &r->dev[d];
    int bw = EXPLORE_MEM_W - 8 - (stale ? 4 : 0);
    cells_put(g, col, y, x->utf8 ? 0x2595 : '[', PAL_AXIS, PAL_BG, 0);
    cells_bar(g, col + 1, y, bw, 0, dv->static_mem, scale, PAL_MEM_STATIC);
    bool over = r->cap > 0 && dv->peak_mem > r->cap;
    double dyn_end = over ? r->cap : dv->peak_mem;
    cells_bar(g, col + 1, y, bw, dv->static_mem, dyn_end, scale, PAL_MEM_DYN);
    if (over)
        cells_bar(g, col + 1, y, bw, r->cap, dv->peak_mem, scale, PAL_MEM_OVER);
    if (r->cap > 0) {
        int cx = col + 1 + (int)(r->cap / scale * bw + 0.5);
        if (cx > col + bw)
            cx = col + bw;
        struct cell *c = cells_at(g, cx, y);
        if (c != NULL) {
            c->ch = x->utf8 ? 0x2502 : '|';
            c->fg = PAL_CAP;
        }
    }
    char t[24];
    explore_fmt_peak(x, dv->peak_mem, r->cap, t, sizeof t);
    cells_printf(g, col + bw + 2, y, 7, over ? PAL_MEM_OVER : PAL_TEXT_DIM, PAL_BG,
                 over ? CELL_BOLD : 0, "%6s", t);
    if (stale)
        cells_printf(g, col + bw + 9, y, 3, PAL_TEXT, PAL_BG, 0, "%s%d", x->utf8 ? "τ" : "s",
                     r->staleness[d]);
}

static void gantt_axis(struct explore *x, struct cells *g, int y, int gx, int gw)
{
    const bool unit = x->cfg.unit.enabled;
    double span = x->tpc * gw;
    /* labels in s, ms or us, whichever keeps them short: a zoomed-in axis is not 2e-05 ms */
    double div = unit ? 1 : span >= 20e6 ? 1e6 : span >= 2e3 ? 1e3 : 1;
    const char *uname = unit ? "t" : div == 1e6 ? "s" : div == 1e3 ? "ms" : x->utf8 ? "µs" : "us";
    /* A tick every 1, 2 or 5 x 10^k units, about every 12 cells. */
    double raw = span / (gw / 12.0 > 1 ? gw / 12.0 : 1);
    double mag = pow(10, floor(log10(raw > 0 ? raw : 1)));
    double step = raw / mag < 2 ? 2 * mag : raw / mag < 5 ? 5 * mag : 10 * mag;
    for (int i = 0; i < gw; i++)
        cells_put(g, gx + i, y, x->utf8 ? 0x2500 : '-', PAL_AXIS, PAL_BG, 0);
    double first = ceil(x->t0 / step) * step;
    for (double t = first; t <= x->t0 + span; t += step) {
        int cx = gx + (int)((t - x->t0) / x->tpc);
        if (cx >= gx + gw)
            break;
        cells_put(g, cx, y, x->utf8 ? 0x252C : '+', PAL_AXIS, PAL_BG, 0);
        char label[32];
        snprintf(label, sizeof label, "%g", t / div);
        if (cx + (int)strlen(label) < gx + gw)
            cells_text(g, cx, y + 1, 0, label, PAL_TEXT_DIM, PAL_BG, 0);
    }
    /* the unit in the gutter, left of the first label: the memory bars' legend owns the right */
    cells_printf(g, 0, y + 1, gx - 1, PAL_TEXT_DIM, PAL_BG, 0, "%*s", gx - 2, uname);
}

/* The measured timeline of the shown step in the simulation's unit (the trace's us; a
 * unit-cost plan's trace writes 1 t as 1000 us), as render/layout.h takes it. Owned arrays. */
static void gantt_measured(const struct explore *x, int total, double **start, double **end)
{
    double to_sim = explore_step(x)->sim.unit ? 1e-3 : 1.0;
    *start = xmalloc(2 * ((size_t)total + 1) * sizeof(double));
    *end = *start + total + 1;
    for (int id = 0; id < total; id++) {
        (*start)[id] = x->meas.start[id] * to_sim; /* NaN (not measured) stays NaN */
        (*end)[id] = x->meas.end[id] * to_sim;
    }
}

/* Labels and marks of one instruction box over the painted cells it owns (those it gave
 * their colour): its micro-batch (with * when the shown pass changed it) where the owned
 * cells hold it and the box is as long as the label, the selection in reverse video, the
 * change underlined, the critical path in bold (• where no label fits). A box that owns no
 * cell marks the cell under its middle, so the cursor never disappears. */
static void gantt_box_marks(struct explore *x, struct cells *g, const int *owner, int y,
                            const struct layout_item *it, bool selected)
{
    const struct pass_step *st = explore_step(x);
    int gx = EXPLORE_GUTTER, gw = explore_gantt_width(x, g->w);
    double s = (it->t0 - x->t0) / x->tpc, e = (it->t1 - x->t0) / x->tpc;
    if (e <= 0 || s >= gw)
        return;
    int lo = gx + (s < 0 ? 0 : (int)floor(s)), hi = gx + (e > gw ? gw : (int)ceil(e));
    int c0 = -1, c1 = -1; /* owned cells [c0, c1) */
    for (int cx = lo; cx < hi && cx < g->w; cx++)
        if (owner[(size_t)y * g->w + cx] == it->id) {
            if (c0 < 0)
                c0 = cx;
            c1 = cx + 1;
        }
    const struct pass_change *ch = pass_changes_find(&st->changes, it->dev, it->op, it->mb,
                                                     it->stage);
    bool crit = x->critical && x->on_path && x->on_path[it->id];
    unsigned attr = (selected ? CELL_REVERSE : 0) | (ch ? CELL_UNDERLINE : 0) |
                    (crit ? CELL_BOLD : 0);
    if (c0 < 0) { /* too small to own a cell */
        double mid = (s + e) / 2;
        struct cell *c = cells_at(g, gx + (int)floor(mid < 0 ? 0 : mid), y);
        if (c != NULL && attr != 0 && mid < gw)
            c->attr |= (unsigned char)attr;
        return;
    }
    enum pal color = it->color;
    char label[16];
    if (it->mb >= 0)
        snprintf(label, sizeof label, "%s%d", ch ? "*" : "", it->mb);
    else
        snprintf(label, sizeof label, "%s", plan_op_name(it->op));
    int len = (int)strlen(label);
    if (c1 - c0 >= len && e - s >= len) /* on its own cells, and no wider than the box */
        cells_text(g, c0 + (c1 - c0 - len) / 2, y, len, label, palette_text_on(color), color,
                   (ch || crit) ? CELL_BOLD : 0);
    else if (crit) {
        struct cell *c = cells_at(g, c0, y);
        c->ch = x->utf8 ? 0x2022 : '*';
        c->fg = (unsigned char)palette_text_on(color);
    }
    for (int cx = c0; cx < c1; cx++)
        cells_at(g, cx, y)->attr |= (unsigned char)attr;
}

/* The lanes are painted from render/'s layout of the shown step (layout_build, the picture
 * `export` writes): its boxes, bubbles, lanes and iteration marks, by render/paint_cells.h
 * into the columns of the time window [t0, t0 + gw * tpc). What is drawn over them here is
 * the explorer's own: lane names, labels, cursor, pass changes, critical path, memory bars. */
void view_gantt_draw(struct explore *x, struct cells *g, int top, int height)
{
    const struct pass_step *st = explore_step(x);
    if (st == NULL || height < 3)
        return;
    const struct plan *p = st->plan;
    const struct sim_result *r = &st->sim;
    const struct plan_geom *geo = plan_geom(p);
    int gx = EXPLORE_GUTTER, gw = explore_gantt_width(x, g->w);
    int mem_col = gx + gw + 1;
    /* With a measured trace loaded, each lane gets a second row under it. */
    int rpl = x->show_meas && x->have_meas ? 2 : 1;
    int parts = geo->parts > 0 ? geo->parts : 1;
    int lanes = geo->devices * parts, rows = (height - 2) / rpl;
    if (x->fitted) { /* the width may have changed since the fit */
        double longest = explore_longest(x);
        x->tpc = longest > 0 ? longest / gw : 1;
    }
    if (x->lane_top > lanes - rows)
        x->lane_top = lanes - rows > 0 ? lanes - rows : 0;
    double scale = r->cap;
    for (int d = 0; d < r->devices; d++)
        if (r->dev[d].peak_mem > scale)
            scale = r->dev[d].peak_mem;
    if (scale <= 0)
        scale = 1;
    bool stale = gantt_shows_staleness(p, r);
    const struct config *cfg = plan_config(p);
    int iter_n = config_scheme_async(geo->scheme) && cfg->iterations > 1
                     ? config_microbatches(cfg)
                     : 0;

    double *ms = NULL, *me = NULL;
    if (rpl == 2)
        gantt_measured(x, plan_total(p), &ms, &me);
    struct layout_timeline tl = {"meas", ms, me};
    struct layout_panel panel = {NULL, p, r, rpl == 2 ? &tl : NULL};
    struct layout_opts lo = {.no_labels = true, .no_legend = true};
    struct layout *l = NULL;
    struct mt_err e = {0};
    if (layout_build(&panel, 1, &lo, &l, &e) != MT_OK) {
        cells_text(g, gx, top, gw, e.msg, PAL_MEM_OVER, PAL_BG, 0);
        free(ms);
        return;
    }
    /* Screen rows: lane (dev * parts + part) from lane_top, its measured row under it. */
    int nrows;
    const struct layout_row *lr = layout_rows(l, 0, &nrows);
    int *row_y = xmalloc(((size_t)nrows + 1) * sizeof *row_y);
    for (int i = 0; i < nrows; i++) {
        int k = lr[i].dev * parts + lr[i].lane - x->lane_top;
        row_y[i] = k >= 0 && k < rows && top + k * rpl + lr[i].sub < g->h
                       ? top + k * rpl + lr[i].sub
                       : -1;
    }
    int *owner = xmalloc((size_t)g->w * g->h * sizeof *owner);
    for (int i = 0; i < g->w * g->h; i++)
        owner[i] = -1;
    struct cells_gantt v = {0, gx, gw, x->t0, x->tpc, row_y, nrows, owner};
    cells_paint_gantt(g, l, &v);

    for (int i = 0; i < nrows; i++) {
        int y = row_y[i], dev = lr[i].dev, part = lr[i].lane;
        if (y < 0)
            continue;
        bool sel_lane = dev * parts + part == x->sel_lane;
        if (lr[i].sub == 1)
            cells_text(g, 0, y, EXPLORE_GUTTER - 1, " meas", PAL_TEXT_DIM, PAL_BG, 0);
        else if (parts > 1)
            cells_printf(g, 0, y, EXPLORE_GUTTER - 1, PAL_TEXT_DIM, PAL_BG,
                         sel_lane ? CELL_BOLD | CELL_REVERSE : 0, "d%d.%d", dev, part);
        else
            cells_printf(g, 0, y, EXPLORE_GUTTER - 1, PAL_TEXT_DIM, PAL_BG,
                         sel_lane ? CELL_BOLD | CELL_REVERSE : 0, "dev %d", dev);
        if (lr[i].sub == 0 && part == 0)
            gantt_mem_bar(x, g, y, mem_col, r, dev, scale, stale);
    }
    int sel_id = -1;
    if (x->sel_lane / parts < plan_devices(p) && x->sel_idx < plan_len(p, x->sel_lane / parts))
        sel_id = plan_id(p, x->sel_lane / parts, x->sel_idx);
    const struct layout_item *items = layout_items(l);
    for (int k = 0; k < layout_count(l); k++) {
        const struct layout_item *it = &items[k];
        if (it->role != LAYOUT_ROLE_INSTR || (it->style & LAYOUT_MEASURED) || it->row < 0 ||
            it->row >= nrows || row_y[it->row] < 0)
            continue;
        gantt_box_marks(x, g, owner, row_y[it->row], it, it->id == sel_id);
    }
    cells_paint_gantt_marks(g, l, &v); /* over the labels */
    free(owner);
    free(row_y);
    layout_free(l);
    free(ms);

    int used = (rows < lanes ? rows : lanes) * rpl;
    gantt_axis(x, g, top + used, gx, gw);
    if (lanes > rows) /* lanes out of sight: how many, in the axis row's gutter (its own) */
        cells_printf(g, 0, top + used, EXPLORE_GUTTER - 1, PAL_TEXT_DIM, PAL_BG, CELL_BOLD,
                     "%s%d", x->utf8 ? "↕" : "+", lanes - rows);
    char cap[24];
    explore_fmt_cap(x, r->cap, cap, sizeof cap);
    if (stale) /* the column's key: staleness, and the iteration marks when there are some */
        cells_printf(g, mem_col, top + used, EXPLORE_MEM_W, PAL_TEXT_DIM,
                     PAL_BG, 0, "%s staleness%s", x->utf8 ? "τ" : "s",
                     iter_n > 0 ? (x->utf8 ? " ┃ iteration" : " | iteration") : "");
    cells_printf(g, mem_col, top + used + 1, EXPLORE_MEM_W, PAL_TEXT_DIM,
                 PAL_BG, 0, "peak memory, cap %s", r->cap > 0 ? cap : "none");
}
