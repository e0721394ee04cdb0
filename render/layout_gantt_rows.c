/* render/layout_gantt_rows.c: the Gantt rows' contents (render/layout_gantt.h): idle intervals
 * (bubbles) of a device's row, the instruction boxes with their micro-batch labels and the
 * iteration marks of async plans, and a mark per send from sender to receiver. */
#include <config.h>
#include "render/layout_gantt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/config.h"
#include "sim/plan/plan.h"
#include "sim/core/simulate.h"
#include "sim/core/vpipe.h"
#include "util/xalloc.h"

void layout_box_rules(const struct layout_panel *p, struct layout_box_rules *r)
{
    r->p = p;
    r->lanes = layout_lanes(p);
    r->iter_n = layout_iteration_every(p->plan);
    for (int op = 0; op < OP__COUNT; op++) {
        r->drawn[op] = layout_is_drawn_op((enum op)op);
        r->compute[op] = plan_op_is_compute((enum op)op);
        r->forward[op] = plan_op_is_forward((enum op)op);
        r->fill[op] = palette_of_op((enum op)op);
    }
}

int layout_idle_of(double *iv, int n, double end, double eps)
{
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
    /* The gaps, written over the intervals already read (gap k <= interval i). */
    double cur = 0;
    int gaps = 0;
    for (int i = 0; i <= n; i++) {
        double next = i < n ? iv[2 * i] : end, next_end = i < n ? iv[2 * i + 1] : cur;
        if (next > cur + eps) {
            iv[2 * gaps] = cur;
            iv[2 * gaps + 1] = next;
            gaps++;
        }
        if (next_end > cur)
            cur = next_end;
    }
    return gaps;
}

/* Idle intervals of one device's row in [0, end of that timeline]. */
void layout_bubbles(struct layout *l, const struct geo *g, const struct layout_panel *p, int pi,
                    int d, int sub, double end, double y, double h)
{
    struct layout_box_rules rules;
    layout_box_rules(p, &rules);
    const struct instr *ins = plan_instrs(p->plan, d);
    int len = plan_len(p->plan, d), id0 = len > 0 ? plan_id(p->plan, d, 0) : 0, n = 0;
    double *gap = xmalloc(((size_t)len * 2 + 2) * sizeof(double));
    for (int i = 0; i < len; i++) {
        struct layout_box b;
        if (layout_box_of(&rules, &ins[i], id0 + i, sub, &b) && b.t1 > b.t0) {
            gap[2 * n] = b.t0;
            gap[2 * n + 1] = b.t1;
            n++;
        }
    }
    n = layout_idle_of(gap, n, end, LAYOUT_IDLE_EPS(g->t_max));
    for (int k = 0; k < n; k++) {
        double t0 = gap[2 * k], t1 = gap[2 * k + 1];
        struct layout_item *it = layout_add_box(l, LAYOUT_ROLE_BUBBLE, PAL_BUBBLE,
                                                g->plot_x0 + t0 * g->scale, y,
                                                (t1 - t0) * g->scale, h, LAYOUT_HATCH);
        it->panel = pi, it->dev = d;
        it->t0 = t0, it->t1 = t1;
        if (sub)
            it->style |= LAYOUT_MEASURED;
    }
    free(gap);
}

void layout_instr_boxes(struct layout *l, const struct geo *g, const struct layout_opts *o,
                        const struct layout_panel *p, int pi, const struct rows *r, int d, int sub)
{
    const struct plan *pl = p->plan;
    bool x_scheme = layout_two_pipelines(pl);
    int row0 = layout_row_index(p, d, sub, 0);
    struct layout_box_rules rules;
    layout_box_rules(p, &rules);
    double label_fs = fmin(10.5, fmax(5, g->lane_h * 0.62));
    int len = plan_len(pl, d);
    for (int i = 0; i < len; i++) {
        const struct instr *in = plan_at(pl, d, i);
        int id = plan_id(pl, d, i);
        struct layout_box b;
        if (!layout_box_of(&rules, in, id, sub, &b))
            continue;
        double t0 = b.t0, t1 = b.t1;
        double y = layout_row_y(g, r, d, sub, b.lane) + g->pad;
        double h = g->lane_h - 2 * g->pad;
        double x = g->plot_x0 + t0 * g->scale, w = (t1 - t0) * g->scale;
        enum pal fill = b.fill;
        unsigned style = 0;
        if (w >= 3)
            style |= LAYOUT_BORDER;
        if (x_scheme && in->part == 1)
            style |= LAYOUT_HATCH;
        if (sub)
            style |= LAYOUT_MEASURED;
        struct layout_item *it = layout_add_box(l, LAYOUT_ROLE_INSTR, fill, x, y, w, h, style);
        it->panel = pi, it->dev = d;
        it->row = row0 + b.lane;
        it->id = id, it->mb = in->mb, it->part = in->part, it->stage = in->stage, it->op = in->op;
        it->t0 = t0, it->t1 = t1;
        if (b.iteration) {
            /* An async plan: iteration mb / N starts on this device with this forward. */
            it = layout_add_line(l, LAYOUT_ROLE_ITERATION, PAL_CAP, x, y - g->pad, x,
                             y + h + g->pad, 1.6, 0);
            it->panel = pi, it->dev = d, it->id = id, it->mb = in->mb, it->stage = in->stage;
            it->part = in->part, it->row = row0 + b.lane;
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
void layout_comm(struct layout *l, const struct geo *g, const struct layout_panel *p, int pi,
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
