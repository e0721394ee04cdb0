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
 * layout stays free of any font library; labels are placed only where the estimate fits.
 * This file holds the geometry, the panels and the build; the rows' bubbles, boxes and send
 * marks are render/layout_gantt_rows.c, the axis, title and legend render/layout_gantt_text.c,
 * the peak bars and memory strips render/layout_gantt_mem.c (render/layout_gantt.h). */
#include <config.h>
#include "render/layout_gantt.h"
#include "render/layout_a2a.h"
#include "render/layout_copy.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/config.h"
#include "model/scheme_registry.h"
#include "sim/plan/plan.h"
#include "sim/core/simulate.h"
#include "util/err.h"
#include "util/str.h"
#include "util/xalloc.h"

/* ---- what the figure's parts share ------------------------------------------------------- */

static bool layout_unit(const struct layout_panel *p)
{
    return p->sim->unit;
}

void layout_format_time(const struct geo *g, double t, char *buf, size_t n)
{
    double v = t * g->tick_k;
    char num[48]; /* never "1.1614e+05 ms" */
    snprintf(buf, n, "%s %s", str_format_number(v, g->unit ? 4 : 5, num, sizeof num),
             g->unit ? "t" : "ms");
}

void layout_format_mem(bool unit, double v, char *buf, size_t n)
{
    if (unit)
        snprintf(buf, n, "%.3g M\xce\xb8", v);
    else
        str_format_bytes(v, buf, n);
}

bool layout_is_drawn_op(enum op op)
{
    return plan_op_is_compute(op) || op == OP_AR || op == OP_OS;
}

int layout_lanes(const struct layout_panel *p)
{
    int parts = plan_geom(p->plan)->parts;
    return parts > 0 ? parts : 1;
}

/* The device furthest over its panel's cap and how many are over (0: none, or no cap). */
int layout_over_cap(const struct layout_panel *p, int *worst)
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

int layout_subrows(const struct layout_panel *p)
{
    return p->measured ? 2 : 1;
}

int layout_row_index(const struct layout_panel *p, int d, int sub, int lane)
{
    return (d * layout_subrows(p) + sub) * layout_lanes(p) + lane;
}

int layout_iteration_every(const struct plan *p)
{
    const struct config *c = plan_config(p);
    return config_scheme_async(c->scheme) && c->iterations > 1 ? config_microbatches(c) : 0;
}

bool layout_two_pipelines(const struct plan *p)
{
    const struct scheme_record *r = scheme_registry_get(plan_config(p)->scheme);
    return r != NULL && r->replicas == 2;
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
    else if (layout_two_pipelines(p->plan))
        snprintf(buf, n, "%s%s%s", what, *what ? " " : "", lane == 0 ? "down" : "up");
    else
        snprintf(buf, n, "%s%schunk %d", what, *what ? " " : "", lane);
}

/* The interval a timeline gives instruction id, false when it has none. */
bool layout_interval(const struct layout_panel *p, int sub, int id, double *t0, double *t1)
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

double layout_timeline_end(const struct layout_panel *p, int sub)
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

double layout_span(const struct layout_panel *panels, int n, double t_max)
{
    for (int k = 0; k < n; k++)
        for (int sub = 0; sub < layout_subrows(&panels[k]); sub++)
            t_max = fmax(t_max, layout_timeline_end(&panels[k], sub));
    return t_max > 0 && isfinite(t_max) ? t_max : 1;
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

double layout_row_y(const struct geo *g, const struct rows *r, int d, int sub, int lane)
{
    return r->dev_y[d] + sub * (r->sub_h + 1) + lane * g->lane_h;
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
    double a2a_h = layout_a2a_height(p, g->lane_h);   /* experts' lane; 0 without all-to-alls */
    for (int d = 0; d < r.devices; d++) {
        r.dev_y[d] = y;
        y += r.subrows * r.sub_h + (r.subrows - 1) + copy_h + a2a_h + g->dev_gap;
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
        if (a2a_h > 0)
            layout_a2a_boxes(l, p, pi, d, g->plot_x0, g->scale,
                             r.dev_y[d] + r.subrows * r.sub_h + (r.subrows - 1) + copy_h, a2a_h);
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
    return layout_check_panels(panels, n, e);
}

int layout_check_panels(const struct layout_panel *panels, int n, struct mt_err *e)
{
    if (panels == NULL || n < 1)
        return err_set(e, MT_EINVAL, "layout: no panel to draw");
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
        for (int d = 0; d < D; d++)
            g.mem_curve_max = fmax(g.mem_curve_max, p->sim->dev[d].peak_mem);
        cap_max = fmax(cap_max, p->sim->cap);
    }
    g.t_max = layout_span(panels, n, g.t_max);
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
