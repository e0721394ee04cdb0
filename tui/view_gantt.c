/* tui/view_gantt.c: the Gantt view, a painter of render/'s layout of the picture `export`
 * writes, its rows alone (render/layout_lanes.h: made by the figure's rules, not the figure):
 * the boxes, bubbles, lanes (one per device and part; a measured row under each when a trace
 * is shown, or its replay after r) and iteration marks of async plans,
 * render/paint_cells.h maps them to cells (each cell the colour of what covers most of it).
 * The rows, sorted by time, are kept while the shown step stays (gantt_cache), so a frame of
 * a huge plan paints and labels only the time window it shows.
 * A lane is 1 to 3 rows tall, as the terminal's rows allow (and a blank row between lanes
 * when it is more than one).
 * Drawn here over them: lane names, op names and micro-batch numbers where they fit, the
 * selected instruction underlined in bold with a caret under it on the axis (reverse video
 * looked like idle time on a dark terminal), what the shown pass changed marked *, the
 * critical path in a colour of its own (PAL_CRIT: its labels, and a thread through its boxes);
 * beside each device its peak memory bar (static, activations, the cap; orange-red over the cap)
 * and, for async plans, each stage's weight staleness τ; a time axis below. */
#include <config.h>
#include "tui/explore.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/layout.h"
#include "render/layout_lanes.h"
#include "render/paint_cells.h"
#include "sim/plan/plan.h"
#include "sim/core/simulate.h"
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
    int bw = explore_mem_width(x, g->w) - 8 - (stale ? 4 : 0);
    if (bw < 1)
        bw = 1;
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
        str_format_number(t / div, 6, label, sizeof label);
        if (cx + (int)strlen(label) < gx + gw)
            cells_text(g, cx, y + 1, 0, label, PAL_TEXT_DIM, PAL_BG, 0);
    }
    /* the unit in the gutter, left of the first label: the memory bars' legend owns the right */
    cells_printf(g, 0, y + 1, gx - 1, PAL_TEXT_DIM, PAL_BG, 0, "%*s", gx - 2, uname);
}

/* The row under each lane shows the replay (r) rather than the measured run. */
static bool gantt_replayed(const struct explore *x)
{
    return x->show_rep && x->have_rep && x->rep.total == plan_total(explore_step(x)->plan);
}

/* The measured timeline of the shown step, or its replay (traces/replay.h), in the
 * simulation's unit (the trace's us; a unit-cost plan's trace writes 1 t as 1000 us), as
 * render/layout.h takes it. Owned arrays. */
static void gantt_measured(const struct explore *x, int total, double **start, double **end)
{
    double to_sim = explore_step(x)->sim.unit ? 1e-3 : 1.0;
    bool rep = gantt_replayed(x);
    const double *s = rep ? x->rep.start_us : x->meas.start, *e = rep ? x->rep.end_us
                                                                      : x->meas.end;
    *start = xmalloc(2 * ((size_t)total + 1) * sizeof(double));
    *end = *start + total + 1;
    for (int id = 0; id < total; id++) {
        (*start)[id] = s[id] * to_sim; /* NaN (not measured) stays NaN */
        (*end)[id] = e[id] * to_sim;
    }
}

/* Labels and marks of one instruction box (it: of device dev of the shown plan) over the
 * painted cells it owns (those it gave their colour) on the rows [y, y + nrow) of its lane:
 * with one row its micro-batch, with two
 * or more its op on the first and micro-batch on the second (with * when the shown pass
 * changed it), each where the owned cells hold it and the box is as long as it; the
 * selection underlined in bold; the critical path's labels in PAL_CRIT, and a thread ─ of
 * that colour along the cells that hold no label. A box that owns no cell marks the cell
 * under its middle, so the cursor never disappears. */
static void gantt_box_marks(struct explore *x, struct cells *g, const int *owner, int y,
                            int nrow, const struct layout_seg *it, int dev, bool selected,
                            bool marks)
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
    bool crit = x->critical && x->on_path && x->on_path[it->id];
    unsigned attr = selected ? CELL_UNDERLINE | CELL_BOLD : 0;
    if (selected) { /* a caret on the axis under the box's first cell */
        double mid = s < 0 ? 0 : s;
        x->sel_col = gx + (int)floor(mid);
    }
    if (c0 < 0) { /* too small to own a cell */
        double mid = (s + e) / 2;
        for (int k = 0; k < nrow; k++) {
            struct cell *c = cells_at(g, gx + (int)floor(mid < 0 ? 0 : mid), y + k);
            if (c == NULL || mid >= gw)
                continue;
            c->attr |= (unsigned char)attr;
            if (selected && c->ch == ' ' && c->bg != PAL_DEFAULT && c->bg != PAL_BUBBLE)
                c->fg = (unsigned char)palette_text_on((enum pal)c->bg);
            if (crit && k == nrow / 2) { /* on the box's own fill: black on idle paper would
                                          * vanish on a dark theme */
                c->ch = x->utf8 ? 0x2022 : '*';
                c->fg = PAL_CRIT;
                if (c->bg == PAL_DEFAULT || c->bg == PAL_BUBBLE || c->bg == PAL_BG ||
                    c->bg == PAL_ROW)
                    c->bg = it->color;
            }
        }
        return;
    }
    /* looked up only here: a box that owns no cell shows no mark (a million of them in a
     * fitted view of 16,384 micro-batches) */
    const struct instr *in = plan_at(st->plan, dev, it->id - plan_id(st->plan, dev, 0));
    const struct pass_change *ch =
        marks ? pass_changes_find(&st->changes, dev, in->op, in->mb, in->stage) : NULL;
    enum pal color = (enum pal)it->color;
    char label[2][16];
    snprintf(label[0], sizeof label[0], "%s%s", ch && nrow > 1 ? "*" : "", plan_op_name(in->op));
    if (in->mb >= 0)
        snprintf(label[1], sizeof label[1], "%s%d", ch ? "*" : "", in->mb);
    else
        snprintf(label[1], sizeof label[1], "%s", nrow > 1 ? "" : plan_op_name(in->op));
    enum pal ink = crit ? PAL_CRIT : palette_text_on(color);
    for (int k = 0; k < nrow; k++) {
        const char *t = nrow == 1 ? label[1] : k < 2 ? label[k] : "";
        int len = (int)strlen(t);
        bool fits = len > 0 && c1 - c0 >= len && e - s >= len; /* its own cells, no wider */
        if (fits)
            cells_text(g, c0 + (c1 - c0 - len) / 2, y + k, len, t, ink, color,
                       (ch || crit) ? CELL_BOLD : 0);
        if (crit && (!fits || k == nrow - 1) && !(fits && nrow == 1))
            for (int cx = c0; cx < c1; cx++) { /* the critical thread */
                struct cell *c = cells_at(g, cx, y + k);
                if (c != NULL && (c->ch == ' ' || (cx == c0 && !fits && nrow == 1))) {
                    c->ch = x->utf8 ? 0x2501 : '=';
                    c->fg = PAL_CRIT;
                }
            }
        if (ch && !fits && k == 0 && nrow == 1) { /* changed, no room for "*12": a star */
            struct cell *c = cells_at(g, c0, y);
            c->ch = '*';
            c->fg = (unsigned char)ink;
            c->attr |= CELL_BOLD;
        }
        for (int cx = c0; cx < c1; cx++) {
            struct cell *c = cells_at(g, cx, y + k);
            c->attr |= (unsigned char)attr;
            if (selected && c->ch == ' ') /* the underline is drawn in the ink: readable */
                c->fg = (unsigned char)palette_text_on(color);
        }
    }
}

/* What frames keep of the shown step (tui/explore.h): its rows as render/'s layout would lay
 * them out (render/layout_lanes.h: boxes and idle time by row, sorted by time; its measured or
 * replayed row when shown), for (step, its plan, measured row shown, replayed; shown_gen when a
 * measured row is shown, as it is aligned to the shown step). Zoom, pan, the cursor, the
 * critical path and the change marks are drawn over them and never make them again. The rows
 * of the last GANTT_KEEP steps shown are kept (issue 27: n/p at 16,384 micro-batches made
 * ~3 M items again at each step), most recent first, in a list from x->gantt_cache. */
struct gantt_cache {
    const struct pass_step *step;
    const struct plan *plan;
    unsigned gen;
    int rpl;
    bool replayed;
    struct layout_lanes *ln;
    struct gantt_cache *next; /* the rows shown before these */
};

/* Steps kept: the shown step's and the one shown before it (n then p, p then n: a kept one).
 * Each 24 bytes an interval, boxes and idle time (render/layout_lanes.h): ~9 MB of heap at
 * 4,096 micro-batches of GPT3-13B on 32 devices, 4x that at 16,384 (bench/bench_explore). */
#define GANTT_KEEP 2

static void gantt_cache_free_one(struct gantt_cache *c)
{
    layout_lanes_free(c->ln);
    free(c);
}

void view_gantt_cache_free(struct explore *x)
{
    while (x->gantt_cache != NULL) {
        struct gantt_cache *c = x->gantt_cache;
        x->gantt_cache = c->next;
        gantt_cache_free_one(c);
    }
}

void view_gantt_cache_forget_measured(struct explore *x)
{
    for (struct gantt_cache **pc = &x->gantt_cache; *pc != NULL;) {
        struct gantt_cache *c = *pc;
        if (c->rpl == 2) {
            *pc = c->next;
            gantt_cache_free_one(c);
        } else {
            pc = &c->next;
        }
    }
}

/* The kept rows of what is shown, moved to the front of the list; NULL when none. Keeps
 * GANTT_KEEP - 1 others at most (room for one to be made). */
static struct gantt_cache *gantt_cache_find(struct explore *x, const struct pass_step *st,
                                            int rpl, bool replayed)
{
    struct gantt_cache **pc = &x->gantt_cache, *hit = NULL;
    for (; *pc != NULL; pc = &(*pc)->next) {
        struct gantt_cache *c = *pc;
        if (c->step == st && c->plan == st->plan && c->rpl == rpl && c->replayed == replayed &&
            (rpl == 1 || c->gen == x->shown_gen)) {
            *pc = c->next;
            hit = c;
            break;
        }
    }
    if (hit != NULL) {
        hit->next = x->gantt_cache;
        x->gantt_cache = hit;
        return hit;
    }
    int kept = 0;
    for (pc = &x->gantt_cache; *pc != NULL && kept < GANTT_KEEP - 1; pc = &(*pc)->next)
        kept++;
    while (*pc != NULL) { /* the oldest go first: memory */
        struct gantt_cache *c = *pc;
        *pc = c->next;
        gantt_cache_free_one(c);
    }
    return NULL;
}

/* The shown step's rows, made when what they show changed; NULL when they cannot be made (e
 * says why). */
static const struct layout_lanes *gantt_cached(struct explore *x, int rpl, struct mt_err *e)
{
    const struct pass_step *st = explore_step(x);
    bool replayed = rpl == 2 && gantt_replayed(x);
    struct gantt_cache *c = gantt_cache_find(x, st, rpl, replayed);
    if (c != NULL)
        return c->ln;
    const struct plan *p = st->plan;
    double *ms = NULL, *me = NULL;
    if (rpl == 2)
        gantt_measured(x, plan_total(p), &ms, &me);
    struct layout_timeline tl = {replayed ? "replay" : "meas", ms, me};
    struct layout_panel panel = {NULL, p, &st->sim, rpl == 2 ? &tl : NULL};
    struct layout_lanes *ln = NULL;
    int rc = layout_lanes_build(&panel, &ln, e);
    free(ms);
    if (rc != MT_OK)
        return NULL;
    c = xcalloc(1, sizeof *c);
    c->step = st, c->plan = p, c->gen = x->shown_gen, c->rpl = rpl, c->replayed = replayed;
    c->ln = ln;
    c->next = x->gantt_cache;
    x->gantt_cache = c;
    return ln;
}

/* Row `to` of the Gantt's columns [gx, gx + gw) as row `from`, cells and owners. */
static void gantt_copy_row(struct cells *g, int *owner, int from, int to, int gx, int gw)
{
    for (int cx = gx; cx < gx + gw && cx < g->w; cx++) {
        struct cell *src = cells_at(g, cx, from), *dst = cells_at(g, cx, to);
        if (src == NULL || dst == NULL)
            continue;
        *dst = *src;
        owner[(size_t)to * g->w + cx] = owner[(size_t)from * g->w + cx];
    }
}

/* Rows from one lane to the next: 1 to 4 as the rows allow, 1 when lanes scroll. From 2 on
 * the last is a blank row, so lanes of the same colour never run together. */
static int gantt_pitch(int rows, int lanes, int rpl)
{
    int p = lanes > 0 ? rows / (lanes * rpl) : 1;
    if (rpl == 2 && p > 3) /* a measured row under each lane: no more than 3 rows per lane */
        p = 3;
    return p < 1 ? 1 : p > 4 ? 4 : p;
}

/* The lanes are painted from the rows of render/'s layout of the shown step (the picture
 * `export` writes, render/layout_lanes.h): its boxes, bubbles, lanes and iteration marks, by
 * render/paint_cells.h into the columns of the time window [t0, t0 + gw * tpc). What is drawn over them here is
 * the explorer's own: lane names, labels, cursor, pass changes, critical path, memory bars. */
void view_gantt_draw(struct explore *x, struct cells *g, int top, int height)
{
    const struct pass_step *st = explore_step(x);
    x->gantt_top = top;
    x->lane_rows = 0;
    if (st == NULL || height < 3)
        return;
    const struct plan *p = st->plan;
    const struct sim_result *r = &st->sim;
    const struct plan_geom *geo = plan_geom(p);
    int gx = EXPLORE_GUTTER, gw = explore_gantt_width(x, g->w);
    int mem_col = gx + gw + 1, mem_w = explore_mem_width(x, g->w);
    /* With a measured trace loaded, each lane gets a second row under it. */
    int rpl = x->show_meas && x->have_meas ? 2 : 1;
    int parts = geo->parts > 0 ? geo->parts : 1;
    int lanes = geo->devices * parts;
    int copy = view_copy_rows(x); /* a copy row under each device (tui/view_copy.c) */
    int pitch = gantt_pitch(height - 2 - copy * geo->devices, lanes, rpl);
    int box_rows = pitch > 1 ? pitch - 1 : 1;          /* rows of a lane's boxes */
    int lane_h = box_rows + rpl - 1 + (pitch > 1);     /* + measured row, + blank row */
    int rows = (height - 2) / lane_h;           /* lanes shown */
    x->lane_rows = box_rows;
    x->lane_h = lane_h;
    x->copy_rows = copy, x->copy_parts = parts;
    x->sel_col = -1;
    if (x->fitted) { /* the width may have changed since the fit */
        double longest = explore_longest(x);
        x->tpc = longest > 0 ? longest / gw : 1;
    }
    if (!copy && x->lane_top > lanes - rows)
        x->lane_top = lanes - rows > 0 ? lanes - rows : 0;
    if (copy) { /* rows of their own: fewer lanes, as many as the lanes from lane_top allow */
        while (x->lane_top > 0 &&
               view_copy_fit(x, x->lane_top - 1, lanes, height - 2) >= lanes - x->lane_top + 1)
            x->lane_top--;
        rows = view_copy_fit(x, x->lane_top, lanes, height - 2);
    }
    x->lanes_shown = rows;
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

    struct mt_err e = {0};
    const struct layout_lanes *ln = gantt_cached(x, rpl, &e);
    if (ln == NULL) {
        cells_text(g, gx, top, gw, e.msg, PAL_MEM_OVER, PAL_BG, 0);
        return;
    }
    /* Screen rows: lane (dev * parts + part) from lane_top, box_rows tall, its measured row
     * under it. A lane's box rows are alike: the first is painted, the others copy it. */
    int nrows = ln->rows;
    const struct layout_lane *lr = ln->lane;
    int *row_y = xmalloc(((size_t)nrows + 1) * sizeof *row_y);
    int *owner = xmalloc((size_t)g->w * g->h * sizeof *owner);
    for (int i = 0; i < g->w * g->h; i++)
        owner[i] = -1;
    for (int i = 0; i < nrows; i++) {
        int lane = lr[i].dev * parts + lr[i].lane - x->lane_top;
        int y = top + explore_lane_y(x, lane + x->lane_top) + (lr[i].sub == 1 ? box_rows : 0);
        row_y[i] = lane >= 0 && lane < rows && y < top + height - 2 ? y : -1;
    }
    struct cells_gantt v = {gx, gw, x->t0, x->tpc, row_y, nrows, owner};
    cells_paint_gantt_lanes(g, ln, &v);
    for (int i = 0; i < nrows; i++)
        for (int k = 1; k < box_rows && row_y[i] >= 0 && lr[i].sub == 0; k++)
            if (row_y[i] + k < top + height - 2)
                gantt_copy_row(g, owner, row_y[i], row_y[i] + k, gx, gw);

    for (int i = 0; i < nrows; i++) {
        int y = row_y[i], dev = lr[i].dev, part = lr[i].lane;
        if (y < 0)
            continue;
        bool sel_lane = dev * parts + part == x->sel_lane;
        if (lr[i].sub == 1)
            cells_text(g, 0, y, EXPLORE_GUTTER - 1, gantt_replayed(x) ? " repl" : " meas",
                       PAL_TEXT_DIM, PAL_BG, 0);
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
    bool marks = explore_marks_shown(x);
    bool quiet = !(x->critical && x->on_path) && !(marks && explore_step(x)->changes.n > 0);
    /* A box shorter than this is narrower than a cell wherever it lies: its ends' columns,
     * rounded, are less than a cell apart (a margin for the rounding of times far from t0) */
    double narrow = x->tpc * (1 - 1e-9) - 1e-12 * (fabs(x->t0) + explore_longest(x));
    for (int row = 0; row < nrows; row++) {
        if (row_y[row] < 0 || lr[row].sub != 0)
            continue;
        /* A row in time order: from its first interval that ends after the window's start
         * (those before it draw nothing) to the first box that starts past its end; else its
         * boxes in plan order, as the figure paints them. */
        bool by_time = lr[row].by_time;
        int i = by_time ? layout_lanes_first(ln, row, x->t0) : ln->off[row];
        for (; i < ln->off[row + 1]; i++) {
            if (quiet && by_time) /* past the boxes narrower than a cell, block by block */
                i = layout_lanes_next(ln, row, i, narrow, sel_id);
            if (i >= ln->off[row + 1])
                break;
            int k = by_time ? i : ln->plan_order[i];
            if (k < 0)
                break;
            const struct layout_seg *it = &ln->seg[k];
            if (it->id < 0)
                continue; /* idle time */
            double bs = (it->t0 - x->t0) / x->tpc, be = (it->t1 - x->t0) / x->tpc;
            if (by_time && bs >= gw)
                break;
            /* a box narrower than a cell, not selected, off the critical path and without a
             * change mark to show: gantt_box_marks would leave the screen as it is */
            if (quiet && be - bs < 1 && it->id != sel_id)
                continue;
            gantt_box_marks(x, g, owner, row_y[row], box_rows, it, lr[row].dev, it->id == sel_id,
                            marks);
        }
    }
    if (ln->marks > 0)
        cells_paint_gantt_lanes_marks(g, ln, &v); /* over the labels */
    free(owner);
    free(row_y);

    int shown = rows < lanes ? rows : lanes;
    int used = shown * lane_h - (pitch > 1 ? 1 : 0);
    if (copy && shown > 0) { /* the copy rows, and the last one shown */
        int last = x->lane_top + shown - 1;
        used = explore_lane_y(x, last) + lane_h + (last % parts == parts - 1) - (pitch > 1);
        view_copy_draw(x, g, top, top + used, sel_id, scale);
    }
    gantt_axis(x, g, top + used, gx, gw);
    if (x->sel_col >= gx && x->sel_col < gx + gw) /* the caret under the selection */
        cells_put(g, x->sel_col, top + used, x->utf8 ? 0x25B2 : '^', PAL_TEXT, PAL_BG,
                  CELL_BOLD);
    if (lanes > rows) /* lanes out of sight: how many, in the axis row's gutter (its own) */
        cells_printf(g, 0, top + used, EXPLORE_GUTTER - 1, PAL_TEXT_DIM, PAL_BG, CELL_BOLD,
                     "%s%d", x->utf8 ? "↕" : "+", lanes - rows);
    char cap[24];
    explore_fmt_cap(x, r->cap, cap, sizeof cap);
    if (stale) /* the column's key: staleness, and the iteration marks when there are some */
        cells_printf(g, mem_col, top + used, mem_w, PAL_TEXT_DIM,
                     PAL_BG, 0, "%s staleness%s", x->utf8 ? "τ" : "s",
                     iter_n > 0 ? (x->utf8 ? " ┃ iteration" : " | iteration") : "");
    cells_printf(g, mem_col, top + used + 1, mem_w, PAL_TEXT_DIM, PAL_BG, 0,
                 mem_w >= 20 ? "peak memory, cap %s" : "peak, cap %s", r->cap > 0 ? cap : "none");
}

/* One line of what the colours and abbreviations mean: a swatch and a word for each op the
 * shown plan has (B and W for split backward), idle time, the receives the inspect panel
 * names (RA, RG), the lanes' names (d0.1: device 0, chunk 1), the critical path and the
 * change marks when shown. Every op kind the plan has is always listed (issue 27: W and OS
 * were left out at 80 columns): their words shorten, then go, until they fit; the other
 * entries are left out, the last first, when they do not. */
void view_gantt_legend(struct explore *x, struct cells *g, int y)
{
    const struct pass_step *st = explore_step(x);
    if (st == NULL)
        return;
    const struct plan *p = st->plan;
    static const struct {
        enum op op;
        const char *what[2]; /* long, short */
    } ops[] = {{OP_FW, {"forward", "fwd"}},         {OP_CFW, {"ckpt forward", "ckpt"}},
               {OP_RC, {"recompute", "recomp"}},    {OP_BW, {"backward", "bwd"}},
               {OP_B, {"input grad", "in-grad"}},   {OP_W, {"weight grad", "w-grad"}},
               {OP_AR, {"allreduce", "allred"}},    {OP_OS, {"optimizer", "optim"}},
               {OP_OF, {"offload", "offl"}},        {OP_RL, {"reload", "reld"}}};
    const bool *has = explore_shown_ops(x);
    int end = g->w - 1, level = 0;
    for (; level < 2; level++) { /* the longest words with which every op fits */
        int need = 1;
        for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++)
            if (has[ops[k].op])
                need += 1 + (int)strlen(plan_op_name(ops[k].op)) + 1 +
                        (int)strlen(ops[k].what[level]) + 3;
        if (need <= end)
            break;
    }
    int cx = 1;
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
        if (!has[ops[k].op])
            continue;
        char t[48];
        if (level < 2)
            snprintf(t, sizeof t, " %s %s  ", plan_op_name(ops[k].op), ops[k].what[level]);
        else
            snprintf(t, sizeof t, " %s ", plan_op_name(ops[k].op));
        if (plan_op_is_copy(ops[k].op)) /* the copy row's half blocks (tui/view_copy.c) */
            view_copy_swatch(x, g, cx, y, ops[k].op);
        else
            cells_put(g, cx, y, ' ', PAL_TEXT, palette_of_op(ops[k].op), 0);
        cx++;
        cx += cells_text(g, cx, y, end - cx, t, PAL_TEXT_DIM, PAL_BG, 0);
    }
    cx += cells_text(g, cx, y, 0, x->utf8 ? "· idle  " : ". idle  ", PAL_TEXT_DIM, PAL_BG, 0);
    if (x->critical && cx + 16 <= end) { /* the thread on a fill, as the boxes show it */
        cells_put(g, cx, y, x->utf8 ? 0x2501 : '=', PAL_CRIT, PAL_CFW, CELL_BOLD);
        cx += 1 + cells_text(g, cx + 1, y, 0, " critical path  ", PAL_TEXT_DIM, PAL_BG, 0);
    }
    const char *rest[3] = {
        st->changes.n > 0 && !x->bucket_on && explore_marks_shown(x) ? "* changed  " : "",
        has[OP_RA] || has[OP_RG] ? "RA/RG receive act/grad  " : "",
        plan_geom(p)->parts > 1 ? "d0.1 device 0 chunk 1  " : ""};
    for (int k = 0; k < 3; k++)
        if (rest[k][0] && cx + (int)strlen(rest[k]) <= end + 2)
            cx += cells_text(g, cx, y, 0, rest[k], PAL_TEXT_DIM, PAL_BG, 0);
}
