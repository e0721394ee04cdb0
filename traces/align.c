/* traces/align.c: matching by keys, step by step.
 *
 * The plan's instructions are indexed twice, sorted by (device, op, mb, position) for events
 * that name their micro-batch and by (device, op, position) for those that do not (a mapping
 * rule without "mb"). Events are visited per step in time order on each device, so that where
 * keys leave a choice (W's chunks without a part, kernels without a micro-batch) the n-th
 * event takes the n-th instruction in program order. A per-instruction stamp (step + 1) says
 * whether an instruction is already taken in the current step. */
#include <config.h>
#include "traces/align.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/config.h"
#include "sim/plan/plan.h"
#include "sim/core/simulate.h"
#include "sim/schemes/scheme.h"
#include "traces/trace.h"
#include "util/err.h"
#include "util/xalloc.h"

struct align_key {
    int dev, op, mb, pos, stage, part, id;
};

struct align_ord {
    int step, dev;
    double start;
    size_t i;
};

struct align_win {
    double t0, t1;
};

static int align_win_cmp(const void *a, const void *b)
{
    const struct align_win *x = a, *y = b;
    return x->t0 < y->t0 ? -1 : x->t0 > y->t0;
}

static int align_key_cmp(const void *a, const void *b)
{
    const struct align_key *x = a, *y = b;
    if (x->dev != y->dev)
        return x->dev < y->dev ? -1 : 1;
    if (x->op != y->op)
        return x->op < y->op ? -1 : 1;
    if (x->mb != y->mb)
        return x->mb < y->mb ? -1 : 1;
    return (x->pos > y->pos) - (x->pos < y->pos);
}

static int align_key_cmp_any(const void *a, const void *b)
{
    const struct align_key *x = a, *y = b;
    if (x->dev != y->dev)
        return x->dev < y->dev ? -1 : 1;
    if (x->op != y->op)
        return x->op < y->op ? -1 : 1;
    return (x->pos > y->pos) - (x->pos < y->pos);
}

static int align_ord_cmp(const void *a, const void *b)
{
    const struct align_ord *x = a, *y = b;
    if (x->step != y->step)
        return x->step < y->step ? -1 : 1;
    if (x->dev != y->dev)
        return x->dev < y->dev ? -1 : 1;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

/* First index in k[0, n) not less than (dev, op[, mb]). */
static size_t align_lower(const struct align_key *k, size_t n, int dev, int op, int mb,
                          bool with_mb)
{
    size_t lo = 0, hi = n;
    struct align_key probe = {dev, op, mb, -1, 0, 0, 0};
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = with_mb ? align_key_cmp(&k[mid], &probe) : align_key_cmp_any(&k[mid], &probe);
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The instruction an event takes in step `stamp - 1`, or -1. */
static int align_take(const struct align_key *by_mb, const struct align_key *by_pos, size_t nk,
                      const struct trace_event *ev, int *taken, int stamp)
{
    for (int pass = 0; pass < 2; pass++) {
        bool with_mb = pass == 0;
        if (!with_mb && ev->mb >= 0)
            break;
        const struct align_key *k = with_mb ? by_mb : by_pos;
        for (size_t j = align_lower(k, nk, ev->dev, ev->op, ev->mb, with_mb); j < nk; j++) {
            if (k[j].dev != ev->dev || k[j].op != ev->op || (with_mb && k[j].mb != ev->mb))
                break;
            if ((ev->stage >= 0 && k[j].stage != ev->stage) ||
                (ev->part >= 0 && k[j].part != ev->part) || taken[k[j].id] == stamp)
                continue;
            if (!with_mb && k[j].mb < 0)
                continue;
            taken[k[j].id] = stamp;
            return k[j].id;
        }
    }
    return -1;
}

void align_result_fini(struct align_result *r)
{
    if (r == NULL)
        return;
    free(r->start);
    free(r->end);
    free(r->count);
    free(r->step_times_us);
    free(r->peak_bytes);
    free(r->low_bytes);
    free(r->step_start);
    free(r->step_end);
    memset(r, 0, sizeof *r);
}

/* What align_run's steps share: the plan's and the trace's sizes, then each step's results. */
struct align_ctx {
    const struct plan *p;
    const struct trace_event *ev;
    size_t n;               /* events */
    int total, D, S;        /* instructions, devices, steps in the trace */
    int *ev_id;             /* [n]: the instruction each event matched, or -1 */
    int *step_matched;      /* [S]: events matched in each step */
    bool *step_seen;        /* [S]: a step has an event on a device of the plan */
    size_t on_plan;         /* events on a device and step of the plan */
    bool *use;              /* [S]: the steps that count */
    int used;
    double *s0, *s1;        /* [S]: each step's span */
};

/* Matches the trace's events to the plan's instructions by keys, step by step, each step in
 * time order on each device (ev_id, step_matched, step_seen, on_plan). */
static void align_match(struct align_ctx *x)
{
    const struct plan *p = x->p;
    int total = x->total;
    struct align_key *by_mb = xmalloc(((size_t)total + 1) * sizeof *by_mb);
    struct align_key *by_pos = xmalloc(((size_t)total + 1) * sizeof *by_pos);
    for (int d = 0; d < x->D; d++)
        for (int i = 0; i < plan_len(p, d); i++) {
            const struct instr *in = plan_at(p, d, i);
            int id = plan_id(p, d, i);
            by_mb[id] = (struct align_key){d, (int)in->op, in->mb, i, in->stage, in->part, id};
        }
    memcpy(by_pos, by_mb, (size_t)total * sizeof *by_mb);
    qsort(by_mb, (size_t)total, sizeof *by_mb, align_key_cmp);
    qsort(by_pos, (size_t)total, sizeof *by_pos, align_key_cmp_any);

    struct align_ord *ord = xmalloc((x->n + 1) * sizeof *ord);
    for (size_t i = 0; i < x->n; i++)
        ord[i] = (struct align_ord){x->ev[i].step, x->ev[i].dev, x->ev[i].start_us, i};
    qsort(ord, x->n, sizeof *ord, align_ord_cmp);

    int *taken = xcalloc((size_t)total + 1, sizeof(int));
    for (size_t k = 0; k < x->n; k++) {
        const struct trace_event *v = &x->ev[ord[k].i];
        x->ev_id[ord[k].i] = -1;
        if (v->dev < 0 || v->dev >= x->D || v->step < 0 || v->step >= x->S)
            continue;
        x->on_plan++;
        x->step_seen[v->step] = true;
        if (v->op < 0)
            continue;
        int id = align_take(by_mb, by_pos, (size_t)total, v, taken, v->step + 1);
        x->ev_id[ord[k].i] = id;
        if (id >= 0)
            x->step_matched[v->step]++;
    }
    free(taken);
    free(ord);
    free(by_pos);
    free(by_mb);
}

/* Which steps count (use, used): the one asked for; else every step seen but the first
 * (warm-up) unless it is the only one, and of those the complete ones if any is. */
static void align_pick_steps(struct align_ctx *x, int want)
{
    int S = x->S;
    if (want >= 0) {
        x->use[want] = x->step_seen[want];
    } else {
        int seen = 0, first = -1, complete = 0;
        for (int s = 0; s < S; s++)
            if (x->step_seen[s]) {
                seen++;
                if (first < 0)
                    first = s;
            }
        for (int s = 0; s < S; s++)
            x->use[s] = x->step_seen[s] && (seen == 1 || s != first);
        for (int s = 0; s < S; s++)
            complete += x->use[s] && x->step_matched[s] == x->total;
        if (complete > 0)
            for (int s = 0; s < S; s++)
                x->use[s] = x->use[s] && x->step_matched[s] == x->total;
    }
    for (int s = 0; s < S; s++)
        x->used += x->use[s];
}

/* Whether event v is on a device of the plan, in a step that counts. */
static bool align_counts(const struct align_ctx *x, const struct trace_event *v)
{
    return v->dev >= 0 && v->dev < x->D && v->step >= 0 && v->step < x->S && x->use[v->step];
}

/* Each used step's span (s0, s1), its time, and every instruction's times from the start of
 * its step, averaged over the steps used (and per step when asked). */
static void align_times(struct align_ctx *x, bool per_step, struct align_result *out)
{
    int S = x->S, total = x->total;
    for (int s = 0; s < S; s++) {
        x->s0[s] = INFINITY;
        x->s1[s] = -INFINITY;
    }
    for (size_t i = 0; i < x->n; i++) {
        const struct trace_event *v = &x->ev[i];
        if (!align_counts(x, v))
            continue;
        if (v->start_us < x->s0[v->step])
            x->s0[v->step] = v->start_us;
        if (v->end_us > x->s1[v->step])
            x->s1[v->step] = v->end_us;
    }
    out->start = xmalloc(((size_t)total + 1) * sizeof(double));
    out->end = xmalloc(((size_t)total + 1) * sizeof(double));
    out->count = xcalloc((size_t)total + 1, sizeof(int));
    out->step_times_us = xmalloc((size_t)x->used * sizeof(double));
    for (int i = 0; i < total; i++)
        out->start[i] = out->end[i] = 0;
    int u = 0;
    int *slot = xmalloc((size_t)S * sizeof(int)); /* a used step's index among the used */
    for (int s = 0; s < S; s++) {
        slot[s] = x->use[s] ? u : -1;
        if (x->use[s]) {
            if (out->first_step < 0)
                out->first_step = s;
            out->step_times_us[u++] = x->s1[s] - x->s0[s];
            out->step_time_us += (x->s1[s] - x->s0[s]) / x->used;
        }
    }
    if (per_step) {
        size_t cells = (size_t)x->used * (size_t)total + 1;
        out->step_start = xmalloc(cells * sizeof(double));
        out->step_end = xmalloc(cells * sizeof(double));
        for (size_t i = 0; i < cells; i++)
            out->step_start[i] = out->step_end[i] = NAN;
    }
    for (size_t i = 0; i < x->n; i++) {
        const struct trace_event *v = &x->ev[i];
        if (!align_counts(x, v))
            continue;
        int id = x->ev_id[i];
        if (id < 0) {
            if (v->op < 0)
                out->unkeyed++;
            else
                out->extra++;
            continue;
        }
        double s0 = x->s0[v->step];
        out->start[id] += v->start_us - s0;
        out->end[id] += v->end_us - s0;
        out->count[id]++;
        if (out->step_start != NULL) {
            size_t cell = (size_t)slot[v->step] * (size_t)total + (size_t)id;
            out->step_start[cell] = v->start_us - s0;
            out->step_end[cell] = v->end_us - s0;
        }
    }
    free(slot);
    for (int i = 0; i < total; i++) {
        if (out->count[i] > 0) {
            out->start[i] /= out->count[i];
            out->end[i] /= out->count[i];
            out->matched++;
        } else {
            out->start[i] = out->end[i] = NAN;
            out->missing++;
        }
    }
}

/* Memory: the highest sample inside the steps used, else the highest at all; the lowest
 * inside them, or what a device held as they began. The windows of the steps used, sorted by
 * start, are searched by bisection. */
static void align_memory(const struct align_ctx *x, const struct trace *t,
                         struct align_result *out)
{
    int D = x->D;
    out->peak_bytes = xmalloc(((size_t)D + 1) * sizeof(double));
    out->low_bytes = xmalloc(((size_t)D + 1) * sizeof(double));
    size_t nm;
    const struct trace_mem *mem = trace_mems(t, &nm);
    struct align_win *win = xmalloc(((size_t)x->used + 1) * sizeof *win);
    int nw = 0;
    for (int s = 0; s < x->S; s++)
        if (x->use[s])
            win[nw++] = (struct align_win){x->s0[s], x->s1[s]};
    qsort(win, (size_t)nw, sizeof *win, align_win_cmp);
    double *any = xmalloc(3 * ((size_t)D + 1) * sizeof(double));
    double *pre_t = any + D + 1, *pre_v = pre_t + D + 1; /* the last sample before the steps */
    for (int d = 0; d < D; d++)
        out->peak_bytes[d] = out->low_bytes[d] = any[d] = pre_t[d] = pre_v[d] = NAN;
    for (size_t i = 0; i < nm; i++) {
        const struct trace_mem *m = &mem[i];
        if (m->dev < 0 || m->dev >= D)
            continue;
        if (isnan(any[m->dev]) || m->bytes > any[m->dev])
            any[m->dev] = m->bytes;
        if (nw > 0 && m->t_us <= win[0].t0 && !(m->t_us < pre_t[m->dev])) {
            pre_t[m->dev] = m->t_us;
            pre_v[m->dev] = m->bytes;
        }
        int lo = 0, hi = nw; /* the last window starting at or before the sample */
        while (hi - lo > 1) {
            int mid = (lo + hi) / 2;
            if (win[mid].t0 <= m->t_us)
                lo = mid;
            else
                hi = mid;
        }
        bool inside = false;
        for (int k = lo; k >= 0 && k > lo - 4 && !inside; k--) /* neighbours may overlap */
            inside = win[k].t0 <= m->t_us && m->t_us <= win[k].t1;
        if (!inside)
            continue;
        if (isnan(out->peak_bytes[m->dev]) || m->bytes > out->peak_bytes[m->dev])
            out->peak_bytes[m->dev] = m->bytes;
        if (isnan(out->low_bytes[m->dev]) || m->bytes < out->low_bytes[m->dev])
            out->low_bytes[m->dev] = m->bytes;
    }
    free(win);
    for (int d = 0; d < D; d++) {
        if (isnan(out->peak_bytes[d]))
            out->peak_bytes[d] = any[d];
        /* what a device holds as the steps begin counts as held between steps */
        if (!isnan(pre_v[d]) && !(out->low_bytes[d] <= pre_v[d]))
            out->low_bytes[d] = pre_v[d];
    }
    free(any);
}

int align_run(const struct plan *p, const struct trace *t, const struct align_opts *o,
              struct align_result *out, struct mt_err *e)
{
    memset(out, 0, sizeof *out);
    const struct trace_info *info = trace_info(t);
    struct align_ctx x = {.p = p, .total = plan_total(p), .D = plan_devices(p)};
    x.ev = trace_events(t, &x.n);
    x.S = info->steps > 0 ? info->steps : 1;
    int want = o ? o->step : -1;
    if (want >= x.S)
        return err_set(e, MT_EINVAL, "step %d is not in the trace (it has steps 0 to %d)", want,
                       x.S - 1);
    x.ev_id = xmalloc((x.n + 1) * sizeof(int));
    x.step_matched = xcalloc((size_t)x.S, sizeof(int));
    x.step_seen = xcalloc((size_t)x.S, sizeof(bool));
    x.use = xcalloc((size_t)x.S, sizeof(bool));
    x.s0 = xmalloc(2 * (size_t)x.S * sizeof(double));
    x.s1 = x.s0 + x.S;
    align_match(&x);
    align_pick_steps(&x, want);
    int rc = MT_OK;
    if (x.used == 0) {
        rc = x.on_plan == 0 ? err_set(e, MT_EINVAL,
                                      "no event of the trace is on a device of the plan (the "
                                      "plan has %d devices, the trace %d)",
                                      x.D, info->devices)
                            : err_set(e, MT_EINVAL, "step %d is not in the trace", want);
    } else {
        out->total = x.total;
        out->devices = x.D;
        out->unit = info->unit;
        out->steps_in_trace = x.S;
        out->steps_used = x.used;
        out->first_step = -1;
        align_times(&x, o && o->per_step, out);
        align_memory(&x, t, out);
    }
    free(x.s0);
    free(x.use);
    free(x.step_seen);
    free(x.step_matched);
    free(x.ev_id);
    if (rc != MT_OK)
        align_result_fini(out);
    return rc;
}

/* By device, then in file order: the simulator writes each device's list in program order
 * (a send's interval is its transfer, so time order is not program order). */
static int align_ev_cmp(const void *a, const void *b)
{
    const struct trace_event *x = *(const struct trace_event *const *)a;
    const struct trace_event *y = *(const struct trace_event *const *)b;
    if (x->dev != y->dev)
        return x->dev < y->dev ? -1 : 1;
    return (x > y) - (x < y);
}

/* The config a trace carries (otherData.config: our simulated and measured traces write the
 * plan's), where it loads and its plan's shape is the events' (*g: devices, stages,
 * micro-batches, parts); then g takes its scheme. So the plan a trace stands for keeps its
 * degrees, lengths and device, not only the model's name. */
static bool align_trace_config(const struct trace *t, struct plan_geom *g, struct config *c)
{
    const char *text = trace_config_text(t);
    struct mt_err e;
    struct plan_geom cg;
    if (text == NULL || config_load_string(text, strlen(text), "otherData.config", c, &e) != MT_OK ||
        scheme_geom(c, &cg, &e) != MT_OK)
        return false;
    if (cg.devices != g->devices || cg.stages != g->stages || cg.mbs != g->mbs ||
        cg.parts < g->parts)
        return false;
    snprintf(c->source, sizeof c->source, "(a simulated trace)");
    *g = cg;
    return true;
}

int align_trace_plan(const struct trace *t, struct plan **out, struct sim_result *r,
                     struct mt_err *e)
{
    *out = NULL;
    memset(r, 0, sizeof *r);
    const struct trace_info *info = trace_info(t);
    size_t n;
    const struct trace_event *ev = trace_events(t, &n);
    int first_step = -1;
    for (size_t i = 0; i < n; i++)
        if (first_step < 0 || ev[i].step < first_step)
            first_step = ev[i].step;
    const struct trace_event **v = xmalloc((n + 1) * sizeof *v);
    size_t k = 0;
    struct plan_geom g = {SCHEME_V, 0, 1, 1, 1};
    for (size_t i = 0; i < n; i++) {
        const struct trace_event *x = &ev[i];
        if (x->step != first_step)
            continue;
        if (x->op < 0 || x->stage < 0 || x->dev < 0) {
            free(v);
            return err_set(e, MT_EINVAL,
                           "event %zu has no plan keys {op, mb, part, stage}: only our own "
                           "simulated traces can stand for a plan",
                           i);
        }
        v[k++] = x;
        if (x->dev + 1 > g.devices)
            g.devices = x->dev + 1;
        if (x->part + 1 > g.parts)
            g.parts = x->part + 1;
        if (x->stage + 1 > g.stages)
            g.stages = x->stage + 1;
        if (x->mb + 1 > g.mbs)
            g.mbs = x->mb + 1;
    }
    if (g.devices > CONFIG_MAX_DEVICES || g.devices == 0) {
        free(v);
        return err_set(e, MT_EINVAL, "the trace has %d devices", g.devices);
    }
    qsort(v, k, sizeof *v, align_ev_cmp);
    struct config c;
    if (!align_trace_config(t, &g, &c)) {
        config_default(&c);
        snprintf(c.source, sizeof c.source, "(a simulated trace)");
        if (info->scheme[0] != '\0' && config_scheme_parse(info->scheme, &c.scheme, NULL) != MT_OK)
            c.scheme = SCHEME_V;
        g.scheme = c.scheme;
        c.num_device = g.devices;
        c.num_microbatches = g.mbs;
        c.chunks = g.parts;
        c.unit.enabled = info->unit;
        if (info->model[0] != '\0')
            snprintf(c.model.name, sizeof c.model.name, "%s", info->model);
    }
    struct plan *p = plan_new(&c, &g);
    for (size_t i = 0; i < k; i++)
        plan_append(p, v[i]->dev,
                    (struct instr){(enum op)v[i]->op, v[i]->mb, v[i]->part, v[i]->stage, -1, 0, 0, 0});
    double scale = info->unit ? 1000.0 : 1.0;
    r->unit = info->unit;
    r->devices = g.devices;
    r->total = plan_total(p);
    r->oom_device = -1;
    r->start = xcalloc((size_t)r->total + 1, sizeof(double));
    r->end = xcalloc((size_t)r->total + 1, sizeof(double));
    r->mem_after = xcalloc((size_t)r->total + 1, sizeof(double));
    r->dev = xcalloc((size_t)r->devices, sizeof *r->dev);
    double t0 = INFINITY;
    for (size_t i = 0; i < k; i++)
        if (v[i]->start_us < t0)
            t0 = v[i]->start_us;
    if (first_step <= 0)
        t0 = t0 > 0 ? 0 : t0; /* a simulation starts at 0 */
    size_t pos = 0;
    for (int d = 0; d < g.devices; d++)
        for (int i = 0; i < plan_len(p, d); i++, pos++) {
            int id = plan_id(p, d, i);
            r->start[id] = (v[pos]->start_us - t0) / scale;
            r->end[id] = (v[pos]->end_us - t0) / scale;
            struct sim_device *dv = &r->dev[d];
            if (r->end[id] > dv->finish)
                dv->finish = r->end[id];
            if ((plan_op_is_compute((enum op)v[pos]->op) || v[pos]->op == OP_AR ||
                 v[pos]->op == OP_OS))
                dv->busy += r->end[id] - r->start[id];
            if (dv->finish > r->step_time)
                r->step_time = dv->finish;
        }
    free(v);
    size_t nm;
    const struct trace_mem *mem = trace_mems(t, &nm);
    for (size_t i = 0; i < nm; i++) {
        int d = mem[i].dev;
        if (d < 0 || d >= g.devices)
            continue;
        struct sim_device *dv = &r->dev[d];
        if (dv->curve_len == 0 || mem[i].bytes > dv->peak_mem)
            dv->peak_mem = mem[i].bytes;
        if (dv->curve_len == 0 || mem[i].bytes < dv->static_mem)
            dv->static_mem = mem[i].bytes;
        dv->curve_t = xreallocarray(dv->curve_t, (size_t)dv->curve_len + 1, sizeof(double));
        dv->curve_mem = xreallocarray(dv->curve_mem, (size_t)dv->curve_len + 1, sizeof(double));
        dv->curve_t[dv->curve_len] = (mem[i].t_us - t0) / scale;
        dv->curve_mem[dv->curve_len++] = mem[i].bytes;
    }
    for (int d = 0; d < g.devices; d++) {
        struct sim_device *dv = &r->dev[d];
        dv->bubble = r->step_time - dv->busy;
        dv->peak_dynamic = dv->peak_mem - dv->static_mem;
    }
    *out = p;
    return MT_OK;
}
