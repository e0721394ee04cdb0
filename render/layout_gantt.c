/* render/layout_gantt.c: annotated plans -> primitives (layout_build). The canvas is a column of blocks, top to
 * bottom: title (config, step time), legend, then per panel a heading, the Gantt rows, a
 * time axis and, with the memory view, peak bars in a right-hand column beside the rows
 * and one memory-over-time strip per device under the axis. Geometry:
 *
 *   | left column: "dev d"  lane labels | plot: x = x0 + t * scale | right: peak bars  |
 *
 * A device's block is (sim row [+ measured row]) x (one lane per part), lane_height each.
 * Items are appended in paint order (bands, bubbles, grid, boxes, labels, marks, axes), so
 * painters need no z-sorting. Text widths are estimated from DejaVu Sans advances, so the
 * layout stays free of any font library; labels are placed only where the estimate fits. */
#include <config.h>
#include "render/layout_internal.h"
#include "render/layout_copy.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/config.h"
#include "model/scheme_registry.h"
#include "sim/plan/plan.h"
#include "sim/core/simulate.h"
#include "sim/core/vpipe.h"
#include "util/err.h"
#include "util/str.h"
#include "util/xalloc.h"

/* ---- the figure -------------------------------------------------------------------------- */

/* Everything the panels share, computed once. */
struct geo {
    double W;
    double lane_h, dev_gap, pad;
    double left, lane_x0, plot_x0, plot_x1, right_x0; /* lane labels from lane_x0 */
    double bar_x0, bar_x1;                            /* peak bars span */
    double t_max, scale;
    double tick_step, tick_k; /* ticks in display units; display = t * k */
    bool unit;
    double mem_bar_max, mem_curve_max, strip_h;
    int panels;
    bool bars; /* the peak-memory column: asked for (memory), or a panel is over the cap */
};

static bool layout_unit(const struct layout_panel *p)
{
    return p->sim->unit;
}

static void layout_format_time(const struct geo *g, double t, char *buf, size_t n)
{
    double v = t * g->tick_k;
    if (g->unit)
        snprintf(buf, n, "%.4g t", v);
    else
        snprintf(buf, n, "%.5g ms", v);
}

static void layout_format_mem(bool unit, double v, char *buf, size_t n)
{
    if (unit)
        snprintf(buf, n, "%.3g M\xce\xb8", v);
    else
        str_format_bytes(v, buf, n);
}

static bool layout_is_drawn_op(enum op op)
{
    return plan_op_is_compute(op) || op == OP_AR || op == OP_OS;
}

static int layout_lanes(const struct layout_panel *p)
{
    int parts = plan_geom(p->plan)->parts;
    return parts > 0 ? parts : 1;
}

/* The device furthest over its panel's cap and how many are over (0: none, or no cap). */
static int layout_over_cap(const struct layout_panel *p, int *worst)
{
    const struct sim_result *s = p->sim;
    int n = 0;
    *worst = -1;
    for (int d = 0; s->cap > 0 && d < s->devices; d++)
        if (s->dev[d].peak_mem > s->cap) {
            n++;
            if (*worst < 0 || s->dev[d].peak_mem > s->dev[*worst].peak_mem)
                *worst = d;
        }
    return n;
}

static double layout_peak(const struct sim_result *s)
{
    double peak = 0;
    for (int d = 0; d < s->devices; d++)
        peak = fmax(peak, s->dev[d].peak_mem);
    return peak;
}

static int layout_subrows(const struct layout_panel *p)
{
    return p->measured ? 2 : 1;
}

/* "down"/"up" for Chimera's two pipelines, "chunk k" for interleaving. */
static void layout_lane_label(const struct layout_panel *p, int sub, int lane, char *buf, size_t n)
{
    const char *what = "";
    if (p->measured)
        what = sub == 0 ? "sim" : (p->measured->name ? p->measured->name : "measured");
    int lanes = layout_lanes(p);
    if (lanes <= 1)
        snprintf(buf, n, "%s", what);
    else if (plan_config(p->plan)->scheme == SCHEME_X)
        snprintf(buf, n, "%s%s%s", what, *what ? " " : "", lane == 0 ? "down" : "up");
    else
        snprintf(buf, n, "%s%schunk %d", what, *what ? " " : "", lane);
}

/* The interval a timeline gives instruction id, false when it has none. */
static bool layout_interval(const struct layout_panel *p, int sub, int id, double *t0, double *t1)
{
    if (sub == 0) {
        *t0 = p->sim->start[id];
        *t1 = p->sim->end[id];
        return true;
    }
    *t0 = p->measured->start[id];
    *t1 = p->measured->end[id];
    return isfinite(*t0) && isfinite(*t1) && *t0 >= 0 && *t1 >= *t0;
}

static double layout_timeline_end(const struct layout_panel *p, int sub)
{
    if (sub == 0)
        return p->sim->step_time;
    double end = 0;
    int total = plan_total(p->plan);
    for (int id = 0; id < total; id++) {
        double t0, t1;
        if (layout_interval(p, 1, id, &t0, &t1) && t1 > end)
            end = t1;
    }
    return end;
}

static void layout_nice_ticks(struct geo *g)
{
    double plot_w = g->plot_x1 - g->plot_x0;
    double target = fmax(2, floor(plot_w / 80));
    double span = g->t_max * g->tick_k;
    double raw = span / target;
    double mag = pow(10, floor(log10(raw)));
    double norm = raw / mag;
    double step = norm < 1.5 ? 1 : norm < 3 ? 2 : norm < 7 ? 5 : 10;
    g->tick_step = step * mag;
}

static void layout_tick_label(double v, double step, char *buf, size_t n)
{
    int dec = step >= 1 ? 0 : (int)ceil(-log10(step) - 1e-9);
    if (dec > 6)
        dec = 6;
    snprintf(buf, n, "%.*f", dec, v);
}

/* Vertical gridlines at the ticks, over [y0, y1]. */
static void layout_grid(struct layout *l, const struct geo *g, double y0, double y1)
{
    double span = g->t_max * g->tick_k;
    for (int k = 1;; k++) {
        double v = k * g->tick_step;
        if (v > span * (1 + 1e-9))
            break;
        double x = g->plot_x0 + v / g->tick_k * g->scale;
        layout_add_line(l, LAYOUT_ROLE_GRID, PAL_GRID, x, y0, x, y1, 0.5, 0);
    }
}

/* The axis line, ticks, tick labels and the axis title at y; returns the height used. */
static double layout_axis(struct layout *l, const struct geo *g, double y)
{
    layout_add_line(l, LAYOUT_ROLE_AXIS, PAL_AXIS, g->plot_x0, y, g->plot_x1, y, 0.8, 0);
    double span = g->t_max * g->tick_k;
    for (int k = 0;; k++) {
        double v = k * g->tick_step;
        if (v > span * (1 + 1e-9))
            break;
        double t = v / g->tick_k;
        double x = g->plot_x0 + t * g->scale;
        struct layout_item *it = layout_add_line(l, LAYOUT_ROLE_AXIS, PAL_AXIS, x, y, x, y + 4, 0.8, 0);
        it->t0 = t;
        char buf[32];
        layout_tick_label(v, g->tick_step, buf, sizeof buf);
        double w = layout_text_width(buf, FS_TICK);
        if (x - w / 2 >= 1 && x + w / 2 <= g->W - 1) {
            it = layout_add_text(l, LAYOUT_ROLE_TICK_LABEL, PAL_TEXT_DIM, x, y + 14, FS_TICK,
                             LAYOUT_MIDDLE, 0, w + 1, buf);
            if (it)
                it->t0 = t;
        }
    }
    const char *title = g->unit ? "time (t)" : "time (ms)";
    layout_add_text(l, LAYOUT_ROLE_TICK_LABEL, PAL_TEXT_DIM, (g->plot_x0 + g->plot_x1) / 2, y + 27,
                FS_TICK, LAYOUT_MIDDLE, 0, g->plot_x1 - g->plot_x0, title);
    return 32;
}

/* Idle intervals of one device's row in [0, end of that timeline]. */
static void layout_bubbles(struct layout *l, const struct geo *g, const struct layout_panel *p,
                           int pi, int d, int sub, double end, double y, double h)
{
    int len = plan_len(p->plan, d);
    double *iv = xmalloc(((size_t)len * 2 + 2) * sizeof(double));
    int n = 0;
    for (int i = 0; i < len; i++) {
        const struct instr *in = plan_at(p->plan, d, i);
        double t0, t1;
        if (!layout_is_drawn_op(in->op) ||
            !layout_interval(p, sub, plan_id(p->plan, d, i), &t0, &t1))
            continue;
        if (t1 <= t0)
            continue;
        iv[2 * n] = t0;
        iv[2 * n + 1] = t1;
        n++;
    }
    /* A device runs in order, so intervals are sorted; a measured run need not be exact. */
    for (int i = 1; i < n; i++) {
        double a = iv[2 * i], b = iv[2 * i + 1];
        int j = i - 1;
        while (j >= 0 && iv[2 * j] > a) {
            iv[2 * j + 2] = iv[2 * j];
            iv[2 * j + 3] = iv[2 * j + 1];
            j--;
        }
        iv[2 * j + 2] = a;
        iv[2 * j + 3] = b;
    }
    double cur = 0, eps = g->t_max * 1e-9;
    for (int i = 0; i <= n; i++) {
        double next = i < n ? iv[2 * i] : end;
        if (next > cur + eps) {
            struct layout_item *it =
                layout_add_box(l, LAYOUT_ROLE_BUBBLE, PAL_BUBBLE, g->plot_x0 + cur * g->scale, y,
                           (next - cur) * g->scale, h, LAYOUT_HATCH);
            it->panel = pi, it->dev = d;
            it->t0 = cur, it->t1 = next;
            if (sub)
                it->style |= LAYOUT_MEASURED;
        }
        if (i < n && iv[2 * i + 1] > cur)
            cur = iv[2 * i + 1];
    }
    free(iv);
}

/* Per-panel geometry of the device blocks. */
struct rows {
    int devices, lanes, subrows;
    double y0, y1;
    double *dev_y; /* [devices]: top of the device's block */
    double sub_h;  /* one sub-row (all lanes) */
    double end[2]; /* end of the simulated and of the measured timeline */
};

static double layout_row_y(const struct geo *g, const struct rows *r, int d, int sub, int lane)
{
    return r->dev_y[d] + sub * (r->sub_h + 1) + lane * g->lane_h;
}

static void layout_instr_boxes(struct layout *l, const struct geo *g, const struct layout_opts *o,
                               const struct layout_panel *p, int pi, const struct rows *r, int d,
                               int sub)
{
    const struct plan *pl = p->plan;
    bool x_scheme = plan_config(pl)->scheme == SCHEME_X;
    int iter_n = config_scheme_async(plan_config(pl)->scheme) && plan_config(pl)->iterations > 1
                     ? config_microbatches(plan_config(pl))
                     : 0;
    double label_fs = fmin(10.5, fmax(5, g->lane_h * 0.62));
    int len = plan_len(pl, d);
    for (int i = 0; i < len; i++) {
        const struct instr *in = plan_at(pl, d, i);
        if (!layout_is_drawn_op(in->op))
            continue;
        int id = plan_id(pl, d, i);
        double t0, t1;
        if (!layout_interval(p, sub, id, &t0, &t1))
            continue;
        if (!plan_op_is_compute(in->op) && t1 <= t0)
            continue; /* a free allreduce or optimizer step leaves no mark */
        int lane = in->part >= 0 && in->part < r->lanes ? in->part : 0;
        double y = layout_row_y(g, r, d, sub, lane) + g->pad;
        double h = g->lane_h - 2 * g->pad;
        double x = g->plot_x0 + t0 * g->scale, w = (t1 - t0) * g->scale;
        enum pal fill = palette_of_op(in->op);
        unsigned style = 0;
        if (w >= 3)
            style |= LAYOUT_BORDER;
        if (x_scheme && in->part == 1)
            style |= LAYOUT_HATCH;
        if (sub)
            style |= LAYOUT_MEASURED;
        struct layout_item *it = layout_add_box(l, LAYOUT_ROLE_INSTR, fill, x, y, w, h, style);
        it->panel = pi, it->dev = d;
        it->row = (d * r->subrows + sub) * r->lanes + lane;
        it->id = id, it->mb = in->mb, it->part = in->part, it->stage = in->stage, it->op = in->op;
        it->t0 = t0, it->t1 = t1;
        if (iter_n > 0 && plan_op_is_forward(in->op) && in->mb > 0 && in->mb % iter_n == 0) {
            /* An async plan: iteration mb / N starts on this device with this forward. */
            it = layout_add_line(l, LAYOUT_ROLE_ITERATION, PAL_CAP, x, y - g->pad, x,
                             y + h + g->pad, 1.6, 0);
            it->panel = pi, it->dev = d, it->id = id, it->mb = in->mb, it->stage = in->stage;
            it->part = in->part, it->row = (d * r->subrows + sub) * r->lanes + lane;
            it->t0 = it->t1 = t0;
        }
        if (o->no_labels || in->mb < 0 || !plan_op_is_compute(in->op) || label_fs > h + 1)
            continue;
        char buf[16];
        snprintf(buf, sizeof buf, "%d", in->mb);
        if (layout_text_width(buf, label_fs) + 2 > w)
            continue;
        it = layout_add_text(l, LAYOUT_ROLE_LABEL, palette_text_on(fill), x + w / 2,
                         y + h / 2 + label_fs * 0.36, label_fs, LAYOUT_MIDDLE, 0, w, buf);
        if (it) {
            it->panel = pi, it->dev = d, it->id = id, it->mb = in->mb, it->part = in->part;
            it->op = in->op;
        }
    }
}

/* A mark per send: from the middle of the sender's lane at the send's start to the middle of
 * the receiving lane at the arrival, drawn over the boxes (with free p2p it is a vertical
 * stroke at the boundary between the sending and the receiving box). */
static void layout_comm(struct layout *l, const struct geo *g, const struct layout_panel *p, int pi,
                        const struct rows *r)
{
    const struct plan *pl = p->plan;
    const struct plan_geom *pg = plan_geom(pl);
    for (int d = 0; d < r->devices; d++)
        for (int i = 0; i < plan_len(pl, d); i++) {
            const struct instr *in = plan_at(pl, d, i);
            if (!vpipe_is_send(in->op) || in->peer < 0 || in->peer >= r->devices || in->peer == d)
                continue;
            int id = plan_id(pl, d, i);
            int rdev = in->peer, rpart = 0;
            if (in->mb < 0 || !vpipe_peer_place(pg, in, &rdev, &rpart) || rdev != in->peer ||
                rpart < 0 || rpart >= r->lanes)
                rpart = 0;
            int spart = in->part >= 0 && in->part < r->lanes ? in->part : 0;
            double ys = layout_row_y(g, r, d, 0, spart) + g->lane_h / 2;
            double yr = layout_row_y(g, r, in->peer, 0, rpart) + g->lane_h / 2;
            struct layout_item *it = layout_add_line(
                l, LAYOUT_ROLE_COMM, PAL_COMM, g->plot_x0 + p->sim->start[id] * g->scale, ys,
                g->plot_x0 + p->sim->end[id] * g->scale, yr, 0.9, 0);
            it->panel = pi, it->dev = d, it->id = id, it->mb = in->mb, it->op = in->op;
            it->part = in->part, it->stage = in->stage;
            it->t0 = p->sim->start[id], it->t1 = p->sim->end[id];
        }
}

/* Peak bars in the right column, one per device beside its sim row. */
static void layout_peak_bars(struct layout *l, const struct geo *g, const struct layout_panel *p,
                             int pi, const struct rows *r)
{
    const struct sim_result *s = p->sim;
    double span = g->bar_x1 - g->bar_x0, k = span / g->mem_bar_max;
    for (int d = 0; d < r->devices; d++) {
        const struct sim_device *dv = &s->dev[d];
        double bh = fmin(r->sub_h * 0.7, 14), y = r->dev_y[d] + (r->sub_h - bh) / 2;
        struct layout_item *it;
        it = layout_add_box(l, LAYOUT_ROLE_MEM_STATIC, PAL_MEM_STATIC, g->bar_x0, y, dv->static_mem * k,
                        bh, 0);
        it->panel = pi, it->dev = d;
        it = layout_add_box(l, LAYOUT_ROLE_MEM_DYN, PAL_MEM_DYN, g->bar_x0 + dv->static_mem * k, y,
                        dv->peak_dynamic * k, bh, 0);
        it->panel = pi, it->dev = d;
        if (s->cap > 0 && dv->peak_mem > s->cap) {
            it = layout_add_box(l, LAYOUT_ROLE_MEM_OVER, PAL_MEM_OVER, g->bar_x0 + s->cap * k, y,
                            (dv->peak_mem - s->cap) * k, bh, 0);
            it->panel = pi, it->dev = d;
        }
        char buf[48];
        layout_format_mem(s->unit, dv->peak_mem, buf, sizeof buf);
        if (config_scheme_async(plan_config(p->plan)->scheme) && p->plan != NULL &&
            plan_geom(p->plan)->parts == 1 && d < s->stages && s->staleness) {
            /* Weight staleness of the device's stage (updates between forward and backward). */
            size_t bl = strlen(buf);
            snprintf(buf + bl, sizeof buf - bl, " \xcf\x84%d", s->staleness[d]);
        }
        double tx = g->bar_x1 + 4;
        layout_add_text(l, LAYOUT_ROLE_ROW_LABEL,
                    s->cap > 0 && dv->peak_mem > s->cap ? PAL_MEM_OVER : PAL_TEXT_DIM, tx,
                    y + bh / 2 + FS_MEM * 0.36, FS_MEM, LAYOUT_START, 0, g->W - 2 - tx, buf);
    }
    if (s->cap > 0 && s->cap <= g->mem_bar_max) {
        double x = g->bar_x0 + s->cap * k;
        layout_add_line(l, LAYOUT_ROLE_MEM_CAP, PAL_CAP, x, r->y0 - 2, x, r->y1 + 2, 1.0,
                    LAYOUT_DASHED);
    }
}

/* One strip per device: static memory as a grey floor, activations as a step curve above
 * it, the part over the cap in orange-red, the cap as a dashed line. */
static double layout_mem_strips(struct layout *l, const struct geo *g, const struct layout_panel *p,
                                int pi, double y)
{
    const struct sim_result *s = p->sim;
    double sh = g->strip_h, k = sh / g->mem_curve_max, end = s->step_time;
    layout_add_text(l, LAYOUT_ROLE_HEADING, PAL_TEXT, MARGIN, y + 11, FS_SUB, LAYOUT_START, LAYOUT_BOLD,
                g->plot_x1 - MARGIN, "memory over time");
    char buf[48], peak[32];
    layout_format_mem(s->unit, g->mem_curve_max, peak, sizeof peak);
    snprintf(buf, sizeof buf, "strip top = %s", peak);
    layout_add_text(l, LAYOUT_ROLE_HEADING, PAL_TEXT_DIM, g->plot_x1, y + 11, FS_MEM, LAYOUT_END, 0,
                (g->plot_x1 - g->plot_x0) / 2, buf);
    if (g->right_x0 < g->W - 20)
        layout_add_text(l, LAYOUT_ROLE_HEADING, PAL_TEXT_DIM, g->bar_x0, y + 11, FS_MEM, LAYOUT_START,
                    0, g->W - 2 - g->bar_x0, "peak");
    y += 16;
    for (int d = 0; d < s->devices; d++) {
        const struct sim_device *dv = &s->dev[d];
        double base = y + sh; /* memory 0 */
        layout_add_box(l, LAYOUT_ROLE_DECOR, PAL_ROW, g->plot_x0, y, g->plot_x1 - g->plot_x0, sh, 0);
        char lb[24];
        snprintf(lb, sizeof lb, "dev %d", d);
        layout_add_text(l, LAYOUT_ROLE_ROW_LABEL, PAL_TEXT, MARGIN, y + sh / 2 + FS_LANE * 0.36,
                    FS_LANE, LAYOUT_START, 0, g->plot_x0 - MARGIN - 2, lb);
        /* The step curve as a closed polygon down to the static floor. */
        int n = 0, cap = dv->curve_len * 2 + 4;
        double *px = xmalloc((size_t)cap * sizeof(double)),
               *py = xmalloc((size_t)cap * sizeof(double));
        double cur = dv->static_mem;
        px[n] = g->plot_x0, py[n++] = base - dv->static_mem * k;
        for (int i = 0; i < dv->curve_len; i++) {
            double x = g->plot_x0 + fmin(dv->curve_t[i], end) * g->scale;
            px[n] = x, py[n++] = base - cur * k;
            cur = dv->curve_mem[i];
            px[n] = x, py[n++] = base - cur * k;
        }
        px[n] = g->plot_x0 + end * g->scale, py[n++] = base - cur * k;
        px[n] = g->plot_x0 + end * g->scale, py[n++] = base - dv->static_mem * k;
        struct layout_item *it = layout_add(l, LAYOUT_PATH, LAYOUT_ROLE_MEM_CURVE, PAL_MEM_DYN);
        it->n = n, it->px = px, it->py = py;
        it->style = LAYOUT_TRANSLUCENT;
        it->panel = pi, it->dev = d;
        it = layout_add_box(l, LAYOUT_ROLE_MEM_STATIC, PAL_MEM_STATIC, g->plot_x0,
                        base - dv->static_mem * k, end * g->scale, dv->static_mem * k, 0);
        it->panel = pi, it->dev = d;
        if (s->cap > 0) {
            for (int i = 0; i < dv->curve_len; i++) {
                double m = dv->curve_mem[i];
                if (m <= s->cap)
                    continue;
                double t0 = dv->curve_t[i], t1 = i + 1 < dv->curve_len ? dv->curve_t[i + 1] : end;
                if (t1 <= t0)
                    continue;
                double top = fmin(m, g->mem_curve_max), bot = fmin(s->cap, g->mem_curve_max);
                it = layout_add_box(l, LAYOUT_ROLE_MEM_OVER, PAL_MEM_OVER, g->plot_x0 + t0 * g->scale,
                                base - top * k, (t1 - t0) * g->scale, (top - bot) * k, 0);
                it->panel = pi, it->dev = d;
            }
            if (s->cap <= g->mem_curve_max)
                layout_add_line(l, LAYOUT_ROLE_MEM_CAP, PAL_CAP, g->plot_x0, base - s->cap * k,
                            g->plot_x1, base - s->cap * k, 0.8, LAYOUT_DASHED);
        }
        if (g->right_x0 < g->W - 20) {
            layout_format_mem(s->unit, dv->peak_mem, lb, sizeof lb);
            layout_add_text(l, LAYOUT_ROLE_ROW_LABEL,
                        s->cap > 0 && dv->peak_mem > s->cap ? PAL_MEM_OVER : PAL_TEXT_DIM,
                        g->bar_x0, y + sh / 2 + FS_MEM * 0.36, FS_MEM, LAYOUT_START, 0,
                        g->W - 2 - g->bar_x0, lb);
        }
        y += sh + 2;
    }
    return y;
}

static double layout_panel(struct layout *l, const struct geo *g, const struct layout_opts *o,
                           const struct layout_panel *p, int pi, bool heading, double y)
{
    const struct sim_result *s = p->sim;
    struct rows r = {
        .devices = plan_devices(p->plan),
        .lanes = layout_lanes(p),
        .subrows = layout_subrows(p),
    };
    r.sub_h = r.lanes * g->lane_h;
    for (int sub = 0; sub < r.subrows; sub++)
        r.end[sub] = layout_timeline_end(p, sub);
    if (heading) {
        char buf[160], t[32];
        layout_format_time(g, s->step_time, t, sizeof t);
        char peak[32];
        layout_format_mem(s->unit, layout_peak(s), peak, sizeof peak);
        if (p->name && g->panels > 1)
            snprintf(buf, sizeof buf, "%s \xc2\xb7 step %s \xc2\xb7 peak %s", p->name, t, peak);
        else if (p->name)
            snprintf(buf, sizeof buf, "%s \xc2\xb7 step %s", p->name, t);
        else if (g->panels > 1)
            snprintf(buf, sizeof buf, "step %s \xc2\xb7 peak %s", t, peak);
        else
            buf[0] = '\0'; /* the title already says it */
        if (p->measured && buf[0] == '\0') {
            layout_format_time(g, r.end[1], t, sizeof t);
            snprintf(buf, sizeof buf, "%s: step %s",
                     p->measured->name ? p->measured->name : "measured", t);
        } else if (p->measured) {
            size_t len = strlen(buf);
            layout_format_time(g, r.end[1], t, sizeof t);
            snprintf(buf + len, sizeof buf - len, " (%s %s)",
                     p->measured->name ? p->measured->name : "measured", t);
        }
        if (buf[0])
            layout_add_text(l, LAYOUT_ROLE_HEADING, PAL_TEXT, MARGIN, y + 12, FS_HEAD, LAYOUT_START,
                        LAYOUT_BOLD, g->plot_x1 - MARGIN, buf);
        int worst, over = layout_over_cap(p, &worst);
        if (buf[0] && over > 0 && g->panels > 1) { /* the title marks a lone panel */
            char cap[32], mark[96];
            layout_format_mem(s->unit, s->cap, cap, sizeof cap);
            snprintf(mark, sizeof mark, "OVER THE %s CAP: dev %d", cap, worst);
            double x = MARGIN + layout_text_width(buf, FS_HEAD) + 10;
            layout_add_text(l, LAYOUT_ROLE_HEADING, PAL_MEM_OVER, x, y + 12, FS_HEAD, LAYOUT_START,
                        LAYOUT_BOLD, g->plot_x1 - x, mark);
        }
        if (g->bars) {
            char cap[32];
            if (s->cap > 0) {
                layout_format_mem(s->unit, s->cap, cap, sizeof cap);
                snprintf(buf, sizeof buf, "peak memory (cap %s)", cap);
            } else {
                snprintf(buf, sizeof buf, "peak memory");
            }
            layout_add_text(l, LAYOUT_ROLE_HEADING, PAL_TEXT_DIM, g->bar_x0, y + 12, FS_MEM,
                        LAYOUT_START, 0, g->W - 2 - g->bar_x0, buf);
        }
        y += 18;
    }
    r.dev_y = xmalloc((size_t)r.devices * sizeof(double));
    r.y0 = y;
    double copy_h = layout_copy_height(p, g->lane_h); /* offload's lane; 0 without copies */
    for (int d = 0; d < r.devices; d++) {
        r.dev_y[d] = y;
        y += r.subrows * r.sub_h + (r.subrows - 1) + copy_h + g->dev_gap;
    }
    r.y1 = y - g->dev_gap;
    /* The rows in the order items number them: (d * subrows + sub) * lanes + lane. */
    for (int d = 0; d < r.devices; d++)
        for (int sub = 0; sub < r.subrows; sub++)
            for (int lane = 0; lane < r.lanes; lane++) {
                if (l->nrows == l->rows_cap) {
                    l->rows_cap = l->rows_cap ? 2 * l->rows_cap : 16;
                    l->rows = xreallocarray(l->rows, (size_t)l->rows_cap, sizeof *l->rows);
                }
                l->rows[l->nrows++] = (struct layout_row){
                    pi, d, sub, lane, layout_row_y(g, &r, d, sub, lane), g->lane_h};
            }

    /* Bands, labels, bubbles. */
    for (int d = 0; d < r.devices; d++) {
        double h = r.subrows * r.sub_h + (r.subrows - 1);
        if (d % 2 == 1)
            layout_add_box(l, LAYOUT_ROLE_DECOR, PAL_ROW, g->plot_x0, r.dev_y[d],
                       g->plot_x1 - g->plot_x0, h, 0);
        char buf[48];
        snprintf(buf, sizeof buf, "dev %d", d);
        double fs = fmin(FS_ROW, fmax(6, h * 0.8));
        layout_add_text(l, LAYOUT_ROLE_ROW_LABEL, PAL_TEXT, MARGIN, r.dev_y[d] + h / 2 + fs * 0.36, fs,
                    LAYOUT_START, 0, g->lane_x0 - MARGIN - 2, buf);
        for (int sub = 0; sub < r.subrows; sub++) {
            for (int lane = 0; lane < r.lanes; lane++) {
                layout_lane_label(p, sub, lane, buf, sizeof buf);
                if (*buf == '\0' || g->lane_h < 6)
                    continue;
                double ly = layout_row_y(g, &r, d, sub, lane);
                double lfs = fmin(FS_LANE, g->lane_h * 0.75);
                layout_add_text(l, LAYOUT_ROLE_ROW_LABEL, PAL_TEXT_DIM, g->plot_x0 - 4,
                            ly + g->lane_h / 2 + lfs * 0.36, lfs, LAYOUT_END, 0,
                            g->plot_x0 - 4 - g->lane_x0, buf);
            }
            layout_bubbles(l, g, p, pi, d, sub, r.end[sub], layout_row_y(g, &r, d, sub, 0),
                           r.sub_h);
        }
    }
    layout_grid(l, g, r.y0, r.y1);
    for (int d = 0; d < r.devices; d++) {
        for (int sub = 0; sub < r.subrows; sub++)
            layout_instr_boxes(l, g, o, p, pi, &r, d, sub);
        if (copy_h > 0)
            layout_copy_boxes(l, p, pi, d, g->plot_x0, g->scale,
                              r.dev_y[d] + r.subrows * r.sub_h + (r.subrows - 1), copy_h);
    }
    if (o->comm)
        layout_comm(l, g, p, pi, &r);
    if (g->bars)
        layout_peak_bars(l, g, p, pi, &r);
    y = r.y1 + 3;
    y += layout_axis(l, g, y);
    if (o->memory)
        y = layout_mem_strips(l, g, p, pi, y + 4) + 2;
    free(r.dev_y);
    return y;
}

/* ---- title and legend -------------------------------------------------------------------- */

static double layout_title(struct layout *l, const struct geo *g, const struct layout_opts *o,
                           const struct layout_panel *panels, int n, double y)
{
    const struct layout_panel *p = &panels[0];
    const struct config *c = plan_config(p->plan);
    const struct plan_geom *pg = plan_geom(p->plan);
    const struct scheme_record *sc = scheme_registry_get(c->scheme);
    char buf[512];
    if (o->title) {
        snprintf(buf, sizeof buf, "%s", o->title);
    } else {
        int len = 0;
        if (!c->unit.enabled)
            len += snprintf(buf + len, sizeof buf - (size_t)len, "%s \xc2\xb7 ", c->model.name);
        const char *name = config_scheme_name(c->scheme);
        /* "1F1B (V)"; a long name that begins with the short one says it once */
        if (sc && strncmp(sc->long_name, name, strlen(name)) != 0)
            len += snprintf(buf + len, sizeof buf - (size_t)len, "%s (%s)", sc->long_name, name);
        else
            len += snprintf(buf + len, sizeof buf - (size_t)len, "%s", sc ? sc->long_name : name);
        len += snprintf(buf + len, sizeof buf - (size_t)len, " \xc2\xb7 pp %d", pg->devices);
        if (c->cluster.dp > 1)
            len += snprintf(buf + len, sizeof buf - (size_t)len, " \xc3\x97 dp %d", c->cluster.dp);
        if (config_scheme_async(c->scheme)) /* K iterations of N, no flush between them */
            len += snprintf(buf + len, sizeof buf - (size_t)len,
                            " \xc2\xb7 %d iterations \xc3\x97 %d micro-batches \xc2\xb7 "
                            "update every %d", c->iterations, config_microbatches(c),
                            c->update_interval);
        else
            len += snprintf(buf + len, sizeof buf - (size_t)len, " \xc2\xb7 %d micro-batches",
                            pg->mbs);
        if (config_scheme_uses_chunks(c->scheme))
            snprintf(buf + len, sizeof buf - (size_t)len, " \xc2\xb7 %d chunks", pg->parts);
    }
    layout_add_text(l, LAYOUT_ROLE_TITLE, PAL_TEXT, MARGIN, y + FS_TITLE, FS_TITLE, LAYOUT_START,
                LAYOUT_BOLD, g->W - 2 * MARGIN, buf);
    y += FS_TITLE + 6;

    int len;
    if (c->unit.enabled && c->unit.w > 0) /* split: the input and weight gradients apart */
        len = snprintf(buf, sizeof buf, "unit costs F %g, B %g (input %g + weight %g), RC %g",
                       c->unit.f, c->unit.b, c->unit.b - c->unit.w, c->unit.w, c->unit.rc);
    else if (c->unit.enabled)
        len = snprintf(buf, sizeof buf, "unit costs F %g, B %g, RC %g", c->unit.f, c->unit.b,
                       c->unit.rc);
    else {
        char cap[32];
        str_format_bytes(p->sim->cap, cap, sizeof cap);
        len = snprintf(buf, sizeof buf, "%s, micro-batch %d, memory cap %s",
                       c->profile.enabled ? c->profile.device : c->cluster.device.name,
                       c->micro_batch_size, cap);
    }
    if (n == 1) {
        char t[32];
        layout_format_time(g, p->sim->step_time, t, sizeof t);
        len += snprintf(buf + len, sizeof buf - (size_t)len, " \xc2\xb7 step time %s", t);
        if (!p->sim->unit && p->sim->throughput > 0)
            snprintf(buf + len, sizeof buf - (size_t)len, " \xc2\xb7 %.2f samples/s",
                     p->sim->throughput);
    }
    layout_add_text(l, LAYOUT_ROLE_TITLE, PAL_TEXT_DIM, MARGIN, y + FS_SUB, FS_SUB, LAYOUT_START, 0,
                g->W - 2 * MARGIN, buf);
    int worst, over = n == 1 ? layout_over_cap(p, &worst) : 0;
    if (over > 0) { /* issue 27: a plan that does not fit says so where the eye lands first */
        char peak[32], cap[32];
        layout_format_mem(p->sim->unit, p->sim->dev[worst].peak_mem, peak, sizeof peak);
        layout_format_mem(p->sim->unit, p->sim->cap, cap, sizeof cap);
        y += FS_SUB + 4;
        snprintf(buf, sizeof buf, "OVER THE MEMORY CAP: device %d peaks at %s > %s (%d of %d "
                 "device%s over)", worst, peak, cap, over, p->sim->devices,
                 p->sim->devices == 1 ? "" : "s");
        layout_add_text(l, LAYOUT_ROLE_TITLE, PAL_MEM_OVER, MARGIN, y + FS_SUB, FS_SUB,
                        LAYOUT_START, LAYOUT_BOLD, g->W - 2 * MARGIN, buf);
    }
    return y + FS_SUB + 8;
}

struct legend {
    double x, y;
};

/* One swatch and its text, wrapping to a new line at the right margin. */
static void layout_legend_entry(struct layout *l, const struct geo *g, struct legend *lg,
                                enum pal c, unsigned style, bool line, const char *text)
{
    double tw = layout_text_width(text, FS_LEGEND);
    double w = 12 + 4 + tw;
    if (lg->x > MARGIN && lg->x + w > g->W - MARGIN) {
        lg->x = MARGIN;
        lg->y += 15;
    }
    struct layout_item *it;
    if (line)
        it = layout_add_line(l, LAYOUT_ROLE_LEGEND, c, lg->x, lg->y - 3.5, lg->x + 12, lg->y - 3.5, 1.2,
                         style);
    else
        it = layout_add_box(l, LAYOUT_ROLE_LEGEND, c, lg->x, lg->y - 9, 12, 10, style);
    (void)it;
    layout_add_text(l, LAYOUT_ROLE_LEGEND, PAL_TEXT, lg->x + 16, lg->y, FS_LEGEND, LAYOUT_START, 0,
                g->W - MARGIN - (lg->x + 16), text);
    lg->x += fmin(w, g->W - MARGIN - lg->x) + 14;
}

static double layout_legend(struct layout *l, const struct geo *g, const struct layout_opts *o,
                            const struct layout_panel *panels, int n, double y)
{
    bool have[OP__COUNT] = {false}, x_scheme = false, bubbles = false;
    for (int k = 0; k < n; k++) {
        const struct plan *p = panels[k].plan;
        if (plan_config(p)->scheme == SCHEME_X && plan_geom(p)->parts == 2)
            x_scheme = true;
        for (int d = 0; d < plan_devices(p); d++)
            for (int i = 0; i < plan_len(p, d); i++) {
                const struct instr *in = plan_at(p, d, i);
                int id = plan_id(p, d, i);
                if (plan_op_is_compute(in->op) ||
                    (layout_is_drawn_op(in->op) &&
                     panels[k].sim->end[id] > panels[k].sim->start[id]))
                    have[in->op] = true;
            }
        for (int d = 0; d < panels[k].sim->devices; d++)
            if (panels[k].sim->dev[d].bubble > panels[k].sim->step_time * 1e-9)
                bubbles = true;
    }
    static const struct {
        enum op op;
        const char *text;
    } ops[] = {
        {OP_FW, "FW forward"},  {OP_CFW, "CFW checkpointed forward"}, {OP_RC, "RC recompute"},
        {OP_BW, "BW backward"}, {OP_B, "B input gradient"},           {OP_W, "W weight gradient"},
    };
    struct legend lg = {MARGIN, y + 10};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (have[ops[i].op])
            layout_legend_entry(l, g, &lg, palette_of_op(ops[i].op), LAYOUT_BORDER, false,
                                ops[i].text);
    if (have[OP_AR] || have[OP_OS])
        layout_legend_entry(l, g, &lg, PAL_SYNC, 0, false, "allreduce / optimizer");
    if (layout_copy_any(panels, n)) { /* render/layout_copy.c: the lane under each device */
        layout_legend_entry(l, g, &lg, palette_of_op(OP_OF), LAYOUT_BORDER, false,
                            "OF offload to host");
        layout_legend_entry(l, g, &lg, palette_of_op(OP_RL), LAYOUT_BORDER | LAYOUT_HATCH, false,
                            "RL reload");
    }
    if (bubbles)
        layout_legend_entry(l, g, &lg, PAL_BUBBLE, LAYOUT_HATCH, false, "idle (bubble)");
    if (x_scheme)
        layout_legend_entry(l, g, &lg, PAL_FW, LAYOUT_HATCH, false, "hatched: up pipeline");
    if (o->comm)
        layout_legend_entry(l, g, &lg, PAL_COMM, 0, true, "send \xe2\x86\x92 receive");
    bool async = false, iterations = false;
    for (int k = 0; k < n; k++) {
        const struct config *c = plan_config(panels[k].plan);
        async |= config_scheme_async(c->scheme) && plan_geom(panels[k].plan)->parts == 1;
        iterations |= config_scheme_async(c->scheme) && c->iterations > 1;
    }
    if (iterations)
        layout_legend_entry(l, g, &lg, PAL_CAP, 0, true, "iteration starts (no flush)");
    if (async && o->memory)
        layout_legend_entry(l, g, &lg, PAL_TEXT_DIM, 0, false,
                            "\xcf\x84 staleness (updates between forward and backward)");
    if (g->bars) {
        bool statics = false, capped = false, over = false;
        for (int k = 0; k < n; k++) {
            const struct sim_result *s = panels[k].sim;
            capped |= s->cap > 0;
            for (int d = 0; d < s->devices; d++) {
                statics |= s->dev[d].static_mem > 0;
                over |= s->cap > 0 && s->dev[d].peak_mem > s->cap;
            }
        }
        if (statics)
            layout_legend_entry(l, g, &lg, PAL_MEM_STATIC, 0, false, "static memory");
        layout_legend_entry(l, g, &lg, PAL_MEM_DYN, 0, false, "activations");
        if (over)
            layout_legend_entry(l, g, &lg, PAL_MEM_OVER, 0, false, "over cap");
        if (capped)
            layout_legend_entry(l, g, &lg, PAL_CAP, LAYOUT_DASHED, true, "memory cap");
    }
    return lg.y + 10;
}

/* ---- build ------------------------------------------------------------------------------- */

static int layout_check(const struct layout_panel *panels, int n, const struct layout_opts *o,
                        struct mt_err *e)
{
    if (panels == NULL || n < 1)
        return err_set(e, MT_EINVAL, "layout: no panel to draw");
    double w = o->width > 0 ? o->width : LAYOUT_DEFAULT_WIDTH;
    if (!(w >= LAYOUT_MIN_WIDTH && w <= LAYOUT_MAX_WIDTH))
        return err_set(e, MT_EINVAL, "width %g is outside [%g, %g]", w, LAYOUT_MIN_WIDTH,
                       LAYOUT_MAX_WIDTH);
    if (o->lane_height < 0 || o->lane_height > 200 || !(o->t_max >= 0))
        return err_set(e, MT_EINVAL, "layout: lane height or time range out of range");
    for (int k = 0; k < n; k++) {
        const struct layout_panel *p = &panels[k];
        if (p->plan == NULL || p->sim == NULL)
            return err_set(e, MT_EINVAL, "layout: panel %d has no plan or simulation", k);
        if (p->sim->total != plan_total(p->plan) || p->sim->devices != plan_devices(p->plan))
            return err_set(e, MT_EINVAL, "layout: panel %d: simulation is of another plan", k);
        if (p->measured && (p->measured->start == NULL || p->measured->end == NULL))
            return err_set(e, MT_EINVAL, "layout: panel %d: measured timeline has no times", k);
        if (p->sim->unit != panels[0].sim->unit)
            return err_set(e, MT_EINVAL, "layout: panels mix unit and real costs");
    }
    return MT_OK;
}

int layout_build(const struct layout_panel *panels, int n, const struct layout_opts *o,
                 struct layout **out, struct mt_err *e)
{
    static const struct layout_opts defaults = {0};
    if (o == NULL)
        o = &defaults;
    *out = NULL;
    TRY(layout_check(panels, n, o, e));

    struct geo g = {0};
    g.W = o->width > 0 ? o->width : LAYOUT_DEFAULT_WIDTH;
    g.panels = n;
    g.unit = layout_unit(&panels[0]);
    g.tick_k = g.unit ? 1 : 1e-3;

    int lanes_total = 0;
    double label_w = 0, lane_w = 0;
    g.t_max = o->t_max;
    g.mem_bar_max = 0;
    g.mem_curve_max = 0;
    double cap_max = 0;
    for (int k = 0; k < n; k++) {
        const struct layout_panel *p = &panels[k];
        int D = plan_devices(p->plan);
        lanes_total += D * layout_lanes(p) * layout_subrows(p);
        char buf[48];
        snprintf(buf, sizeof buf, "dev %d", D - 1);
        label_w = fmax(label_w, layout_text_width(buf, FS_ROW));
        for (int sub = 0; sub < layout_subrows(p); sub++)
            for (int lane = 0; lane < layout_lanes(p); lane++) {
                layout_lane_label(p, sub, lane, buf, sizeof buf);
                lane_w = fmax(lane_w, layout_text_width(buf, FS_LANE));
            }
        for (int sub = 0; sub < layout_subrows(p); sub++)
            g.t_max = fmax(g.t_max, layout_timeline_end(p, sub));
        for (int d = 0; d < D; d++)
            g.mem_curve_max = fmax(g.mem_curve_max, p->sim->dev[d].peak_mem);
        cap_max = fmax(cap_max, p->sim->cap);
    }
    if (!(g.t_max > 0) || !isfinite(g.t_max))
        g.t_max = 1;
    g.mem_bar_max = fmax(g.mem_curve_max, cap_max) * 1.04;
    if (cap_max > 0 && cap_max <= 1.25 * g.mem_curve_max)
        g.mem_curve_max = fmax(g.mem_curve_max, cap_max);
    g.mem_curve_max *= 1.08;
    if (!(g.mem_bar_max > 0))
        g.mem_bar_max = 1;
    if (!(g.mem_curve_max > 0))
        g.mem_curve_max = 1;

    g.lane_h = o->lane_height > 0
                   ? o->lane_height
                   : fmax(6, fmin(18, floor(900.0 / (lanes_total > 0 ? lanes_total : 1))));
    g.pad = g.lane_h >= 10 ? 1.5 : g.lane_h >= 6 ? 0.75 : 0;
    g.dev_gap = fmax(1.5, g.lane_h * 0.25);
    g.strip_h = fmax(12, fmin(30, g.lane_h * 1.6));

    /* Columns: labels | plot | peak bars. The label column may take at most a third. */
    g.lane_x0 = MARGIN + label_w + 6;
    g.left = fmin(g.lane_x0 + (lane_w > 0 ? lane_w + 6 : 2), g.W / 3);
    g.lane_x0 = fmin(g.lane_x0, g.left);
    g.plot_x0 = g.left;
    for (int k = 0; k < n; k++) {
        int worst;
        g.bars |= o->memory || layout_over_cap(&panels[k], &worst) > 0;
    }
    double right = g.bars ? fmax(110, fmin(240, g.W * 0.2)) : 16;
    g.plot_x1 = g.W - right;
    g.right_x0 = g.plot_x1;
    double val_w = layout_text_width("999.9 GiB", FS_MEM) + 4;
    g.bar_x0 = g.plot_x1 + 12;
    g.bar_x1 = fmax(g.bar_x0 + 10, g.W - MARGIN - val_w);
    g.scale = (g.plot_x1 - g.plot_x0) / g.t_max;
    layout_nice_ticks(&g);

    struct layout *l = xcalloc(1, sizeof *l);
    l->width = g.W;
    l->x0 = g.plot_x0;
    l->scale = g.scale;
    l->t_max = g.t_max;
    layout_add_box(l, LAYOUT_ROLE_DECOR, PAL_BG, 0, 0, g.W, 0, 0); /* height set at the end */

    double y = MARGIN;
    y = layout_title(l, &g, o, panels, n, y);
    if (!o->no_legend)
        y = layout_legend(l, &g, o, panels, n, y) + 4;
    for (int k = 0; k < n; k++) {
        const struct layout_panel *p = &panels[k];
        bool heading = p->name != NULL || n > 1 || g.bars || p->measured != NULL;
        y = layout_panel(l, &g, o, p, k, heading, y);
        y += k + 1 < n ? 10 : 0;
    }
    l->height = ceil(y + MARGIN);
    l->items[0].h = l->height;
    *out = l;
    return MT_OK;
}
