/* tui/view_inspect.c: the bottom panel: the selected instruction (op, micro-batch, part,
 * stage, start, end, duration, its dependencies, its memory change, its measured or replayed
 * times when a trace is loaded, what the pass did to it)
 * on the left, and the memory over time of its device on the right, as a column plot with
 * the cap. */
#include <config.h>
#include "tui/explore.h"

#include <stdio.h>
#include <string.h>

#include "render/paint_cells.h"
#include "sim/plan/plan.h"
#include "model/cost.h"
#include "sim/core/memory.h"
#include "sim/core/simulate.h"
#include "sim/core/vpipe.h"
#include "sim/schemes/scheme.h"
#include "traces/accuracy.h"
#include "util/err.h"
#include "util/str.h"

static void inspect_mem(const struct explore *x, double v, char *buf, size_t n)
{
    if (x->cfg.unit.enabled)
        snprintf(buf, n, "%.3g M_θ", v);
    else
        str_format_bytes(v, buf, n);
}

static void inspect_time(const struct explore *x, double v, char *buf, size_t n)
{
    explore_fmt_time(x, v, buf, n);
}

/* An offload or reload (issue 29): the bytes it moves over the host link and which way (the
 * memory model's: what OF gives back at its end, RL takes at its start, sim/core/memory.h),
 * and the device's host memory, its peak against the host cap. */
static int inspect_copy(const struct explore *x, struct cells *g, int y, int w,
                        const struct plan *p, const struct sim_result *r, int dev,
                        const struct instr *in)
{
    struct cost_model cost;
    struct mt_err e = {0};
    if (scheme_costs(plan_config(p), &cost, &e) != MT_OK || in->stage >= cost.num_stages)
        return y;
    struct mem_step m = mem_step(&cost, in);
    cost_model_fini(&cost);
    char bytes[32], host[32], cap[48] = "no host cap";
    inspect_mem(x, in->op == OP_OF ? m.give : m.take, bytes, sizeof bytes);
    inspect_mem(x, r->dev[dev].host_peak, host, sizeof host);
    if (r->host_cap > 0) {
        char c[24];
        inspect_mem(x, r->host_cap, c, sizeof c);
        snprintf(cap, sizeof cap, "host cap %s", c);
    }
    cells_printf(g, 1, y++, w, PAL_TEXT, PAL_BG, 0, "%s %s %s host memory (%s lane)",
                 in->op == OP_OF ? "offloads" : "reloads", bytes,
                 in->op == OP_OF ? "to" : "from", in->op == OP_OF ? "D2H" : "H2D");
    cells_printf(g, 1, y++, w, r->host_oom_device == dev ? PAL_MEM_OVER : PAL_TEXT, PAL_BG, 0,
                 "host memory of device %d: peak %s (%s)", dev, host, cap);
    return y;
}

/* Memory of device dev over time, one column per time slice, 8 levels per cell. */
static void inspect_curve(struct explore *x, struct cells *g, int x0, int top, int w, int h,
                          const struct sim_result *r, int dev)
{
    static const uint32_t level[9] = {' ', 0x2581, 0x2582, 0x2583, 0x2584,
                                      0x2585, 0x2586, 0x2587, 0x2588};
    const struct sim_device *dv = &r->dev[dev];
    double max = r->cap > dv->peak_mem ? r->cap : dv->peak_mem;
    if (max <= 0 || w < 4 || h < 2 || r->step_time <= 0)
        return;
    char peak[32], host[48] = "";
    inspect_mem(x, dv->peak_mem, peak, sizeof peak);
    if (dv->host_peak > 0) { /* offloaded activations wait in host memory meanwhile */
        char hp[32];
        inspect_mem(x, dv->host_peak, hp, sizeof hp);
        snprintf(host, sizeof host, "; host %s", hp);
    }
    cells_printf(g, x0, top, w, PAL_TEXT, PAL_BG, CELL_BOLD,
                 "device %d memory over time (peak %s%s)", dev, peak, host);
    int ph = h - 1, k = 0;
    double cur = dv->curve_len > 0 ? dv->curve_mem[0] : 0;
    for (int col = 0; col < w; col++) {
        double t1 = r->step_time * (col + 1) / w, vmax = cur;
        while (k < dv->curve_len && dv->curve_t[k] <= t1) {
            cur = dv->curve_mem[k++];
            vmax = cur > vmax ? cur : vmax;
        }
        double eighths = vmax / max * ph * 8;
        bool over = r->cap > 0 && vmax > r->cap;
        for (int rrow = 0; rrow < ph; rrow++) {
            int fill = (int)(eighths - rrow * 8 + 0.5);
            fill = fill < 0 ? 0 : fill > 8 ? 8 : fill;
            uint32_t ch = x->utf8 ? level[fill] : (fill >= 4 ? '#' : ' ');
            cells_put(g, x0 + col, top + h - 1 - rrow, ch, over ? PAL_MEM_OVER : PAL_MEM_DYN,
                      PAL_BG, 0);
        }
    }
    if (r->cap > 0 && r->cap <= max) {
        int cy = top + h - 1 - (int)(r->cap / max * ph - 0.001);
        if (cy > top && cy < top + h)
            for (int col = 0; col < w; col++) {
                struct cell *c = cells_at(g, x0 + col, cy);
                if (c != NULL && c->ch == ' ')
                    *c = (struct cell){x->utf8 ? 0x2504 : '-', PAL_CAP, PAL_BG, 0};
            }
    }
}

void view_inspect_draw(struct explore *x, struct cells *g, int top, int height)
{
    const struct pass_step *st = explore_step(x);
    if (st == NULL)
        return;
    const struct plan *p = st->plan;
    const struct sim_result *r = &st->sim;
    int parts = plan_geom(p)->parts, dev = x->sel_lane / parts;
    int half = g->w / 2;
    for (int cx = 0; cx < g->w; cx++)
        cells_put(g, cx, top, x->utf8 ? 0x2500 : '-', PAL_AXIS, PAL_BG, 0);
    if (x->sel_idx >= plan_len(p, dev))
        return;
    const struct instr *in = plan_at(p, dev, x->sel_idx);
    int id = plan_id(p, dev, x->sel_idx);
    char label[32], s[32], e[32], d[32], mem[32];
    plan_instr_label(p, in, label, sizeof label);
    inspect_time(x, r->start[id], s, sizeof s);
    inspect_time(x, r->end[id], e, sizeof e);
    inspect_time(x, r->end[id] - r->start[id], d, sizeof d);
    inspect_mem(x, r->mem_after[id], mem, sizeof mem);
    int y = top + 1;
    if (config_scheme_async(plan_geom(p)->scheme)) /* several iterations in one plan */
        cells_printf(g, 1, y++, half - 2, PAL_TEXT, PAL_BG, CELL_BOLD,
                     "%s  device %d  mb %d  stage %d  iteration %d", label, dev, in->mb,
                     in->stage, in->step);
    else
        cells_printf(g, 1, y++, half - 2, PAL_TEXT, PAL_BG, CELL_BOLD,
                     "%s  device %d  mb %d  part %d  stage %d", label, dev, in->mb, in->part,
                     in->stage);
    cells_printf(g, 1, y++, half - 2, PAL_TEXT, PAL_BG, 0, "start %s  end %s  (%s)", s, e, d);
    /* Memory change: what the instruction allocates or frees. */
    double before = x->sel_idx > 0 ? r->mem_after[plan_id(p, dev, x->sel_idx - 1)]
                                   : r->dev[dev].static_mem;
    char delta[32];
    inspect_mem(x, r->mem_after[id] - before, delta, sizeof delta);
    if (plan_op_is_copy(in->op)) /* its bytes and host memory in place of a device change */
        y = inspect_copy(x, g, y, half - 2, p, r, dev, in);
    else
        cells_printf(g, 1, y++, half - 2, PAL_TEXT, PAL_BG, 0, "memory after %s (%s%s)", mem,
                     r->mem_after[id] >= before ? "+" : "", delta);
    if (r->a2a_hidden != NULL && r->a2a_hidden[id] + r->a2a_exposed[id] > 0) {
        /* the experts' lane (sim/core/overlap.h): what this one hid behind its F&B partner */
        char hid[32], exp_[32], with[32] = "";
        inspect_time(x, r->a2a_hidden[id], hid, sizeof hid);
        inspect_time(x, r->a2a_exposed[id], exp_, sizeof exp_);
        int q = r->a2a_partner[id];
        if (q >= 0) {
            int qd, qi;
            plan_locate_id(p, q, &qd, &qi);
            plan_instr_label(p, plan_at(p, qd, qi), with, sizeof with);
            cells_printf(g, 1, y++, half - 2, PAL_TEXT, PAL_BG, 0,
                         "all-to-all %s hidden behind %s, %s exposed", hid, with, exp_);
        } else {
            cells_printf(g, 1, y++, half - 2, PAL_TEXT, PAL_BG, 0,
                         "all-to-all %s exposed (no F&B pair)", exp_);
        }
    }
    const struct vpipe_resolved *vr = NULL; /* kept with the plan: no index per frame */
    if (vpipe_resolve(p, &vr, NULL) == MT_OK) {
        int deps[VPIPE_MAX_DEPS], n = vpipe_deps(p, vr->x, id, deps, NULL);
        char buf[256] = "needs:";
        size_t len = strlen(buf);
        for (int k = 0; k < n && len < sizeof buf - 40; k++) {
            int dd, di;
            plan_locate_id(p, deps[k], &dd, &di);
            char dl[32];
            plan_instr_label(p, plan_at(p, dd, di), dl, sizeof dl);
            len += (size_t)snprintf(buf + len, sizeof buf - len, " %s@dev%d", dl, dd);
        }
        if (n <= 0)
            snprintf(buf + len, sizeof buf - len, " %s", x->sel_idx > 0 ? "its device" : "nothing");
        cells_text(g, 1, y++, half - 2, buf, PAL_TEXT_DIM, PAL_BG, 0);
    }
    if (x->show_rep && x->have_rep && id < x->rep.total) { /* the replay, and the run */
        double to_sim = r->unit ? 1e-3 : 1.0, ms = x->meas.start[id], me = x->meas.end[id];
        char a[32], b[32], c[32], m[48] = "not measured";
        inspect_time(x, x->rep.start_us[id] * to_sim, a, sizeof a);
        inspect_time(x, x->rep.end_us[id] * to_sim, b, sizeof b);
        inspect_time(x, (x->rep.end_us[id] - x->rep.start_us[id]) * to_sim, c, sizeof c);
        if (ms == ms && me == me) { /* not NaN: measured */
            char f[32];
            inspect_time(x, me * to_sim, f, sizeof f);
            snprintf(m, sizeof m, "measured end %s", f);
        }
        cells_printf(g, 1, y++, half - 2, PAL_TEXT, PAL_BG, 0,
                     "replayed start %s  end %s  (%s); %s", a, b, c, m);
    } else if (x->have_meas && id < x->meas.total) { /* the measured run beside the simulation */
        double to_sim = r->unit ? 1e-3 : 1.0, ms = x->meas.start[id], me = x->meas.end[id];
        if (ms == ms && me == me) { /* not NaN: measured */
            char a[32], b[32], c[32];
            inspect_time(x, ms * to_sim, a, sizeof a);
            inspect_time(x, me * to_sim, b, sizeof b);
            inspect_time(x, (me - ms) * to_sim, c, sizeof c);
            double sd = r->end[id] - r->start[id];
            cells_printf(g, 1, y++, half - 2, PAL_TEXT, PAL_BG, 0,
                         "measured start %s  end %s  (%s, error %+.1f%%)", a, b, c,
                         accuracy_error_pct(sd, (me - ms) * to_sim)); /* compare's sign */
        } else {
            cells_text(g, 1, y++, half - 2, "measured: not in the trace", PAL_TEXT_DIM, PAL_BG,
                       0);
        }
    }
    const struct pass_change *ch = pass_changes_find(&st->changes, dev, in->op, in->mb, in->stage);
    if (ch)
        cells_printf(g, 1, y++, half - 2, PAL_TEXT, PAL_BG, CELL_UNDERLINE,
                     "%s: %s by %s", label, pass_change_kind_name(ch->kind), st->name);
    inspect_curve(x, g, half + 1, top + 1, g->w - half - 2, height - 1, r, dev);
}
