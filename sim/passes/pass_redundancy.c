/* sim/passes/pass_redundancy.c: §5.1 pass 3, remove-redundancy. "When CFW_i and BW_i are adjacent,
 * the corresponding activation is dropped and then restored instantly once the BW_i starts":
 * such a checkpoint saves no memory and costs a recompute, so CFW_i becomes FW_i and RC_i goes
 * (Figure 2, step 3: 25t -> 23t; there it is the last stage, whose backward follows its
 * forward at once).
 *
 * Adjacent means no compute instruction other than RC_i lies between CFW_i and BW_i on the
 * device (sends and receives may). Then no activations are taken or freed between them, so
 * the full activations held from FW_i to BW_i peak no higher than CFW_i + RC_i did, but for
 * message buffers (sim/core/memory.h): a gradient received between them while the forward's
 * output still waits to be reaped may hold one buffer more on top of the activations. So a
 * conversion is kept only when the device's peak (mem_device_peak) does not grow. */
#include <config.h>
#include "sim/passes/pass.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include "model/cost.h"
#include "sim/core/memory.h"
#include "sim/schemes/scheme.h"
#include "sim/core/simulate.h"
#include "util/err.h"
#include "util/xalloc.h"

/* Whether the CFW at position c of dev is adjacent to its backward; *rc gets the position of its
 * RC between them (-1: none), *bw the backward's. */
static bool pass_redundancy_pair(const struct plan *p, int dev, int c, int *rc, int *bw)
{
    const struct instr *f = plan_at(p, dev, c);
    *rc = *bw = -1;
    for (int j = c + 1; j < plan_len(p, dev); j++) {
        const struct instr *o = plan_at(p, dev, j);
        if (!plan_op_is_compute(o->op))
            continue;
        if (o->op == OP_RC && o->mb == f->mb && o->stage == f->stage) {
            if (*rc < 0)
                *rc = j;
            continue;
        }
        *bw = j;
        return plan_op_is_backward(o->op) && o->mb == f->mb && o->stage == f->stage;
    }
    return false;
}

static bool pass_redundancy_adjacent(const struct plan *p, int dev, int c)
{
    int rc, bw;
    return pass_redundancy_pair(p, dev, c, &rc, &bw);
}

/* Marks (or unmarks) the CFW at c of dev as a FW and its RC as dropped; 1. */
static int pass_redundancy_mark(const struct plan *p, int dev, int c, bool *drop, bool *retype,
                                bool on)
{
    const struct instr *f = plan_at(p, dev, c);
    retype[c] = on;
    for (int j = c + 1; j < plan_len(p, dev); j++) {
        const struct instr *o = plan_at(p, dev, j);
        if (o->op == OP_RC && o->mb == f->mb && o->stage == f->stage) {
            drop[j] = on;
            break;
        }
    }
    return 1;
}

/* The dynamic peak of dev's list with the marked changes (work: room for the list). */
static double pass_redundancy_peak(const struct plan *p, int dev, const bool *drop,
                                   const bool *retype, struct instr *work,
                                   const struct cost_model *cost)
{
    int len = 0;
    for (int j = 0; j < plan_len(p, dev); j++)
        if (!drop[j]) {
            work[len] = *plan_at(p, dev, j);
            if (retype[j]) {
                work[len].op = OP_FW;
                work[len].ckpt_layers = 0;
            }
            len++;
        }
    return mem_device_peak(cost, work, len);
}

/* The one-by-one fallback asks the device's peak once per pair; walking the whole list each time
 * was O(n) a pair. A pair changes only its window (CFW .. BW: only sends and receives lie between
 * but for its RC), and after the BW the walk takes the same steps as before (a BW leaves no send
 * buffer to reap). So the walk is kept, with the pairs accepted so far, up to the pair tried
 * (the cursor), and with what it holds before each later position and the highest it reaches
 * from there (cur_at, top_from): a pair's peak is the cursor's, its window's and top_from after
 * the window, exactly the sums mem_device_peak makes whenever the window leaves the device
 * holding what it held before, bit for bit (then the rest repeats the same sums). Otherwise the
 * rest is walked again. */
struct redundancy_walk {
    const struct cost_model *cost;
    const struct instr *list;
    int n;
    struct mem_step *steps; /* [n]: the input list's (mem_device_steps) */
    double *cur_at;         /* [n + 1]: held before each position, pairs accepted so far */
    double *top_from;       /* [n + 1]: the highest from each position on; -inf at n */
    int pos;                /* the cursor: the walk has taken positions [0, pos) */
    double cur, top;        /* held at the cursor, and the highest before it (0 at first) */
};

/* One instruction of mem_device_peak's walk. */
static void redundancy_walk_step(const struct cost_model *cost, const struct instr *in,
                                 struct mem_step m, double *cur, double *top)
{
    *top = mem_max(*top, mem_transient(cost, in, *cur, m));
    *cur += m.take;
    *top = mem_max(*top, *cur);
    *cur -= m.give + m.reap;
}

/* cur_at and top_from from position `from` on, holding cur there. */
static void redundancy_walk_rest(struct redundancy_walk *w, int from, double cur)
{
    for (int i = from; i < w->n; i++) {
        w->cur_at[i] = cur;
        w->top_from[i] = -INFINITY;
        redundancy_walk_step(w->cost, &w->list[i], w->steps[i], &cur, &w->top_from[i]);
    }
    w->cur_at[w->n] = cur;
    w->top_from[w->n] = -INFINITY;
    for (int i = w->n - 1; i >= from; i--)
        w->top_from[i] = mem_max(w->top_from[i], w->top_from[i + 1]);
}

static void redundancy_walk_init(struct redundancy_walk *w, const struct cost_model *cost,
                                 const struct instr *list, int n)
{
    *w = (struct redundancy_walk){.cost = cost, .list = list, .n = n};
    w->steps = xmalloc(((size_t)n + 1) * sizeof *w->steps);
    w->cur_at = xmalloc(2 * ((size_t)n + 1) * sizeof *w->cur_at);
    w->top_from = w->cur_at + n + 1;
    mem_device_steps(cost, list, n, w->steps);
    redundancy_walk_rest(w, 0, 0);
}

static void redundancy_walk_fini(struct redundancy_walk *w)
{
    free(w->steps);
    free(w->cur_at);
}

/* Moves the cursor to position `to` through instructions no pair changed. */
static void redundancy_walk_advance(struct redundancy_walk *w, int to)
{
    for (; w->pos < to; w->pos++)
        redundancy_walk_step(w->cost, &w->list[w->pos], w->steps[w->pos], &w->cur, &w->top);
}

/* Tries the pair CFW at c, RC at r, BW at b (c < r < b, at or after the cursor): accepted (true)
 * when the device's peak with it and the pairs accepted before stays within limit. The cursor
 * ends after b. */
static bool redundancy_walk_try(struct redundancy_walk *w, int c, int r, int b, double limit)
{
    redundancy_walk_advance(w, c);
    double cur = w->cur, top = -INFINITY;
    double pending = c > 0 ? mem_send_buffer(w->cost, &w->list[c - 1]) : 0;
    for (int i = c; i <= b; i++) {
        if (i == r)
            continue;
        struct instr in = w->list[i];
        if (i == c) {
            in.op = OP_FW;
            in.ckpt_layers = 0;
        }
        struct mem_step m = mem_step_next(w->cost, &in, &pending);
        if (i == w->n - 1)
            m.reap += pending;
        redundancy_walk_step(w->cost, &in, m, &cur, &top);
    }
    bool same = cur == w->cur_at[b + 1];
    double rest = -INFINITY;
    if (same) {
        rest = w->top_from[b + 1];
    } else {
        double c2 = cur;
        for (int i = b + 1; i < w->n; i++)
            redundancy_walk_step(w->cost, &w->list[i], w->steps[i], &c2, &rest);
    }
    if (mem_max(mem_max(w->top, top), rest) > limit) {
        redundancy_walk_advance(w, b + 1);
        return false;
    }
    w->top = mem_max(w->top, top);
    w->cur = cur;
    w->pos = b + 1;
    if (!same)
        redundancy_walk_rest(w, b + 1, cur);
    return true;
}

/* The fallback for device d: each adjacent pair in turn, kept when the peak stays within
 * budget with the pairs kept before it. */
static void pass_redundancy_one_by_one(const struct plan *in, int d, const struct cost_model *cost,
                                       double budget, bool *drop, bool *retype, struct instr *work)
{
    int n = plan_len(in, d);
    double limit = budget * (1 + 1e-12);
    bool windows = true; /* every pair's RC between its CFW and its BW (so in a valid plan) */
    for (int i = 0; i < n && windows; i++) {
        int r, b;
        if (plan_at(in, d, i)->op == OP_CFW && pass_redundancy_pair(in, d, i, &r, &b))
            windows = r > i && r < b;
    }
    if (!windows) { /* the list walked whole for each pair */
        for (int i = 0; i < n; i++) {
            if (plan_at(in, d, i)->op != OP_CFW || !pass_redundancy_adjacent(in, d, i))
                continue;
            pass_redundancy_mark(in, d, i, drop, retype, true);
            if (pass_redundancy_peak(in, d, drop, retype, work, cost) > limit)
                pass_redundancy_mark(in, d, i, drop, retype, false); /* kept as it was */
        }
        return;
    }
    struct redundancy_walk w;
    redundancy_walk_init(&w, cost, plan_instrs(in, d), n);
    for (int i = 0; i < n; i++) {
        int r, b;
        if (plan_at(in, d, i)->op == OP_CFW && pass_redundancy_pair(in, d, i, &r, &b) &&
            redundancy_walk_try(&w, i, r, b, limit))
            pass_redundancy_mark(in, d, i, drop, retype, true);
    }
    redundancy_walk_fini(&w);
}

int pass_redundancy_run(const struct plan *in, const struct sim_result *in_sim, struct plan **out,
                        struct sim_result *out_sim, struct pass_changes *ch, struct mt_err *e)
{
    *out = NULL;
    pass_changes_clear(ch);
    int maxlen = 1, found = 0;
    for (int d = 0; d < plan_devices(in); d++) {
        maxlen = plan_len(in, d) > maxlen ? plan_len(in, d) : maxlen;
        for (int i = 0; i < plan_len(in, d) && !found; i++)
            found = plan_at(in, d, i)->op == OP_CFW && pass_redundancy_adjacent(in, d, i);
    }
    if (!found) /* nothing to remove: the copy keeps the input's simulation */
        return pass_finish(in, in_sim, plan_clone(in), PASS_KEEP_NOT_SLOWER, out, out_sim, ch, e);
    struct cost_model cost;
    TRY(scheme_costs(plan_config(in), &cost, e));
    struct plan *cand = plan_new(plan_config(in), plan_geom(in));
    /* drop[i]: the RC at i belongs to a checkpoint found redundant; retype[i]: the CFW at i
     * becomes a FW; work: the device's list with the conversions so far and the one tried */
    bool *drop = xcalloc((size_t)maxlen, sizeof *drop);
    bool *retype = xcalloc((size_t)maxlen, sizeof *retype);
    struct instr *work = xmalloc((size_t)maxlen * sizeof *work);
    for (int d = 0; d < plan_devices(in); d++) {
        int n = plan_len(in, d);
        for (int i = 0; i < n; i++)
            drop[i] = retype[i] = false;
        /* every adjacent pair converted at once, then (rarely) one by one when that raises
         * the device's peak */
        int pairs = 0;
        for (int i = 0; i < n; i++)
            if (plan_at(in, d, i)->op == OP_CFW && pass_redundancy_adjacent(in, d, i))
                pairs += pass_redundancy_mark(in, d, i, drop, retype, true);
        if (pairs == 0)
            goto emit;
        double budget = mem_device_peak(&cost, plan_instrs(in, d), n);
        if (pass_redundancy_peak(in, d, drop, retype, work, &cost) <= budget * (1 + 1e-12))
            goto emit;
        for (int i = 0; i < n; i++)
            drop[i] = retype[i] = false;
        pass_redundancy_one_by_one(in, d, &cost, budget, drop, retype, work);
    emit:
        for (int i = 0; i < n; i++) {
            struct instr ins = *plan_at(in, d, i);
            if (drop[i]) {
                pass_changes_add(ch, PASS_CHANGE_REMOVE, d, &ins, OP_RC);
                continue;
            }
            if (retype[i]) {
                ins.op = OP_FW;
                ins.ckpt_layers = 0;
                pass_changes_add(ch, PASS_CHANGE_RETYPE, d, &ins, OP_CFW);
            }
            plan_append(cand, d, ins);
        }
    }
    free(drop);
    free(retype);
    free(work);
    cost_model_fini(&cost);
    return pass_finish(in, in_sim, cand, PASS_KEEP_NOT_SLOWER, out, out_sim, ch, e);
}
