/* render/layout_gantt_mem.c: the Gantt figure's memory (render/layout_gantt.h): a peak bar per
 * device beside its row (static, activations, the part over the cap, the cap; async plans'
 * weight staleness) and, with the memory view, a memory-over-time strip per device. */
#include <config.h>
#include "render/layout_gantt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/config.h"
#include "sim/plan/plan.h"
#include "sim/core/simulate.h"
#include "util/xalloc.h"

/* Peak bars in the right column, one per device beside its sim row. */
void layout_peak_bars(struct layout *l, const struct geo *g, const struct layout_panel *p, int pi,
                      const struct rows *r)
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
double layout_mem_strips(struct layout *l, const struct geo *g, const struct layout_panel *p,
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
