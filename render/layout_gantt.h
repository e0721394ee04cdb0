/* render/layout_gantt.h: the Gantt figure's insides, shared by its files (not part of the
 * interface; layout_build is render/layout.h's): the geometry every panel shares, a panel's
 * device blocks, and each part's entry. layout_gantt.c: the geometry, the panels, the build;
 * layout_gantt_rows.c: bubbles, boxes, send marks; layout_gantt_text.c: axis, title, legend;
 * layout_gantt_mem.c: peak bars, memory strips. */
#ifndef MT_RENDER_LAYOUT_GANTT_H
#define MT_RENDER_LAYOUT_GANTT_H

#include <stdbool.h>
#include <stddef.h>

#include "render/layout_internal.h"
#include "sim/core/simulate.h"
#include "sim/plan/plan.h"

struct sim_result;
struct mt_err;

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

/* Per-panel geometry of the device blocks. */
struct rows {
    int devices, lanes, subrows;
    double y0, y1;
    double *dev_y; /* [devices]: top of the device's block */
    double sub_h;  /* one sub-row (all lanes) */
    double end[2]; /* end of the simulated and of the measured timeline */
};

/* ---- shared (layout_gantt.c) ---- */
void layout_format_time(const struct geo *g, double t, char *buf, size_t n);
/* Bytes, or M_θ under unit costs. */
void layout_format_mem(bool unit, double v, char *buf, size_t n);
/* Two pipelines hold every stage (the scheme record's replicas: Chimera): lane 0 is "down",
 * lane 1 "up", drawn hatched. */
bool layout_two_pipelines(const struct plan *p);
/* Lanes per device: the plan's parts. */
int layout_lanes(const struct layout_panel *p);
/* The device furthest over its panel's cap and how many are over (0: none, or no cap). */
int layout_over_cap(const struct layout_panel *p, int *worst);
/* The interval a timeline (sub 0: simulated, 1: measured) gives instruction id, false when it
 * has none. */
bool layout_interval(const struct layout_panel *p, int sub, int id, double *t0, double *t1);
/* Top of lane `lane` of sub-row `sub` of device d. */
double layout_row_y(const struct geo *g, const struct rows *r, int d, int sub, int lane);

/* ---- what decides the rows, their boxes, idle time and marks (layout_gantt.c; boxes and idle
 * time layout_gantt_rows.c): the figure and the terminal's lanes (render/layout_lanes.c) both
 * draw by these ---- */
/* MT_EINVAL when a panel cannot be drawn (no plan, a simulation of another plan, ...). */
int layout_check_panels(const struct layout_panel *panels, int n, struct mt_err *e);
/* Timelines per device: 1, 2 with a measured one (sub 1). */
int layout_subrows(const struct layout_panel *p);
/* Index of the row of (d, sub, lane) among its panel's rows (layout_rows' order). */
int layout_row_index(const struct layout_panel *p, int d, int sub, int lane);
/* The end of timeline sub: the step time, or the latest measured end. */
double layout_timeline_end(const struct layout_panel *p, int sub);
/* The time axis' end over n panels: the latest end of their timelines, at least t_max; 1 when
 * there is none. */
double layout_span(const struct layout_panel *panels, int n, double t_max);
/* Async plans of several iterations: an iteration starts every this many micro-batches
 * (a mark at that forward); 0 for other plans. */
int layout_iteration_every(const struct plan *p);
/* What decides how an instruction is drawn, per op and per panel (layout_box_rules). */
struct layout_box_rules {
    const struct layout_panel *p;
    int lanes;  /* layout_lanes(p) */
    int iter_n; /* layout_iteration_every(p->plan) */
    bool drawn[OP__COUNT], compute[OP__COUNT], forward[OP__COUNT];
    enum pal fill[OP__COUNT];
};
void layout_box_rules(const struct layout_panel *p, struct layout_box_rules *r);
/* How the figure draws one instruction in (plan id `id`) on timeline sub. */
struct layout_box {
    int lane;
    double t0, t1;
    enum pal fill;
    bool iteration; /* an iteration starts with it (layout_iteration_every) */
};
/* False when it draws nothing there: not a box op, not measured, a free allreduce or
 * optimizer step. Inline: called once per instruction and timeline. */
static inline bool layout_box_of(const struct layout_box_rules *r, const struct instr *in, int id,
                                 int sub, struct layout_box *b)
{
    if (!r->drawn[in->op])
        return false;
    if (sub == 0) {
        b->t0 = r->p->sim->start[id];
        b->t1 = r->p->sim->end[id];
    } else if (!layout_interval(r->p, sub, id, &b->t0, &b->t1)) {
        return false;
    }
    if (!r->compute[in->op] && b->t1 <= b->t0)
        return false; /* a free allreduce or optimizer step leaves no mark */
    b->lane = in->part >= 0 && in->part < r->lanes ? in->part : 0;
    b->fill = r->fill[in->op];
    b->iteration = r->iter_n > 0 && r->forward[in->op] && in->mb > 0 && in->mb % r->iter_n == 0;
    return true;
}
/* A device's idle time within [0, end] from the intervals of its drawn boxes (pairs (start,
 * end) in iv[0 .. 2n), those with end > start): the gaps longer than eps between them, as
 * pairs in time order written over iv, which has room for 2n + 2; returns how many. */
int layout_idle_of(double *iv, int n, double end, double eps);
/* The idle gaps' eps for an axis ending at t_max. */
#define LAYOUT_IDLE_EPS(t_max) ((t_max) * 1e-9)

/* ---- the rows (layout_gantt_rows.c) ---- */
void layout_bubbles(struct layout *l, const struct geo *g, const struct layout_panel *p, int pi,
                    int d, int sub, double end, double y, double h);
void layout_instr_boxes(struct layout *l, const struct geo *g, const struct layout_opts *o,
                        const struct layout_panel *p, int pi, const struct rows *r, int d,
                        int sub);
void layout_comm(struct layout *l, const struct geo *g, const struct layout_panel *p, int pi,
                 const struct rows *r);

/* ---- words and scale (layout_gantt_text.c); each returns the y below what it drew ---- */
void layout_grid(struct layout *l, const struct geo *g, double y0, double y1);
/* Returns the height used. */
double layout_axis(struct layout *l, const struct geo *g, double y);
double layout_title(struct layout *l, const struct geo *g, const struct layout_opts *o,
                    const struct layout_panel *panels, int n, double y);
double layout_legend(struct layout *l, const struct geo *g, const struct layout_opts *o,
                     const struct layout_panel *panels, int n, double y);

/* ---- memory (layout_gantt_mem.c) ---- */
void layout_peak_bars(struct layout *l, const struct geo *g, const struct layout_panel *p,
                      int pi, const struct rows *r);
/* Returns the y below the strips. */
double layout_mem_strips(struct layout *l, const struct geo *g, const struct layout_panel *p,
                         int pi, double y);

#endif
