/* render/layout_gantt_text.c: the Gantt figure's words and scale (render/layout_gantt.h): the
 * time axis with its ticks and gridlines, the title (config, step time, the over-the-cap
 * mark) and the legend of what is drawn. */
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
#include "util/str.h"

static void layout_tick_label(double v, double step, char *buf, size_t n)
{
    int dec = step >= 1 ? 0 : (int)ceil(-log10(step) - 1e-9);
    if (dec > 6)
        dec = 6;
    snprintf(buf, n, "%.*f", dec, v);
}

/* Vertical gridlines at the ticks, over [y0, y1]. */
void layout_grid(struct layout *l, const struct geo *g, double y0, double y1)
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
double layout_axis(struct layout *l, const struct geo *g, double y)
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

double layout_title(struct layout *l, const struct geo *g, const struct layout_opts *o,
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
        if (c->cluster.dp > 1 || c->cluster.tp > 1) /* "pp 8 × dp 1 × tp 8": every degree */
            len += snprintf(buf + len, sizeof buf - (size_t)len, " \xc3\x97 dp %d", c->cluster.dp);
        if (c->cluster.tp > 1)
            len += snprintf(buf + len, sizeof buf - (size_t)len, " \xc3\x97 tp %d", c->cluster.tp);
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

double layout_legend(struct layout *l, const struct geo *g, const struct layout_opts *o,
                     const struct layout_panel *panels, int n, double y)
{
    bool have[OP__COUNT] = {false}, x_scheme = false, bubbles = false;
    for (int k = 0; k < n; k++) {
        const struct plan *p = panels[k].plan;
        if (layout_two_pipelines(p) && plan_geom(p)->parts == 2)
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
    if (layout_a2a_any(panels, n)) { /* render/layout_a2a.c: the experts' lane */
        layout_legend_entry(l, g, &lg, PAL_MEM_OVER, 0, false, "all-to-all exposed");
        layout_legend_entry(l, g, &lg, PAL_SYNC, 0, false, "all-to-all hidden (F&B pair)");
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
