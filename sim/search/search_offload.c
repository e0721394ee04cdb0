/* sim/search/search_offload.c: sim/search/search_offload.h. Every candidate is checked by the
 * validator and the simulator (the copies' memory is walked at their times, which the
 * search's own evaluator does not model), so what is kept fits the caps. A candidate is one
 * change to one device's list; the lists of the others are shared with the current plan. */
#include <config.h>
#include "sim/search/search_offload.h"

#include <stdlib.h>
#include <string.h>

#include "sim/core/simulate.h"
#include "sim/search/search.h"
#include "sim/plan/plan.h"
#include "sim/plan/validate.h"
#include "util/err.h"
#include "util/xalloc.h"

static bool offload_fits(const struct sim_result *r, double cap)
{
    if (r->host_oom_device >= 0)
        return false;
    if (!(cap > 0))
        return true;
    for (int d = 0; d < r->devices; d++)
        if (r->dev[d].peak_mem > cap * (1 + 1e-12))
            return false;
    return true;
}

/* The position of the compute instruction `back` compute instructions before position pos
 * (pos itself for 0), not before lo. */
static int offload_back(const struct instr *ins, int pos, int back, int lo)
{
    int i = pos;
    while (back > 0 && i > lo) {
        i--;
        if (plan_op_is_compute(ins[i].op))
            back--;
    }
    return i;
}

/* Device d's list with the forward at fi offloaded: a FW, the OF right after it, the RL
 * `back` compute instructions before position at (the RC's, which is removed when drop_rc,
 * or the backward's). Returns the new length, or -1 when the RL would come before the OF. */
static int offload_rewrite(const struct instr *ins, int len, int fi, int at, bool drop_rc,
                           int back, struct instr *out)
{
    int rl_at = offload_back(ins, at, back, fi + 1); /* before this old position */
    if (rl_at <= fi)
        return -1;
    int n = 0;
    for (int i = 0; i < len; i++) {
        if (i == rl_at) {
            struct instr rl = ins[fi];
            rl.op = OP_RL;
            rl.ckpt_layers = 0;
            out[n++] = rl;
        }
        if (i == at && drop_rc)
            continue;
        out[n] = ins[i];
        if (i == fi) {
            out[n].op = OP_FW;
            out[n].ckpt_layers = 0;
            struct instr of = out[n++];
            of.op = OP_OF;
            out[n] = of;
        }
        n++;
    }
    return n;
}

/* Device d's list without the offload of the FW at fi (its OF and RL removed). */
static int offload_undo(const struct instr *ins, int len, int fi, struct instr *out)
{
    int n = 0;
    for (int i = 0; i < len; i++)
        if (!(plan_op_is_copy(ins[i].op) && ins[i].mb == ins[fi].mb &&
              ins[i].stage == ins[fi].stage))
            out[n++] = ins[i];
    return n;
}

/* The kinds of change, in the order the search makes them. */
enum offload_move {
    OFFLOAD_KEPT,   /* a kept FW offloaded: kept when the step does not grow (it makes room
                     * for the next kind) */
    OFFLOAD_CKPT,   /* a CFW + RC offloaded instead: kept when the step does not grow (one
                     * device's recompute gone rarely shortens the step alone: the others'
                     * are on the critical path too) */
    OFFLOAD_UNDO,   /* an offload dropped: kept when the step does not grow */
};

/* Whether r, the plan with one change to device d, is to be kept over cur. */
static bool offload_better(enum offload_move mv, const struct sim_result *r,
                           const struct sim_result *cur, int d, double cap)
{
    if (!offload_fits(r, cap))
        return false;
    (void)mv;
    (void)d;
    return r->step_time <= cur->step_time * (1 + 1e-12);
}

/* The position of the RC (OFFLOAD_CKPT) or backward (OFFLOAD_KEPT) of the forward at fi;
 * -1 when the forward is not one the move takes. */
static int offload_target(const struct instr *ins, int len, int fi, enum offload_move mv)
{
    const struct instr *f = &ins[fi];
    if (f->op != (mv == OFFLOAD_CKPT ? OP_CFW : OP_FW) || f->ckpt_layers != 0)
        return -1;
    for (int i = fi + 1; i < len; i++) {
        if (mv == OFFLOAD_KEPT && plan_op_is_copy(ins[i].op) && ins[i].mb == f->mb &&
            ins[i].stage == f->stage)
            return -1; /* offloaded already */
        if (mv == OFFLOAD_KEPT && plan_op_is_compute(ins[i].op) && ins[i].mb == f->mb &&
            ins[i].stage == f->stage)
            return plan_op_is_backward(ins[i].op) && offload_back(ins, i, 1, fi) != fi ? i : -1;
        if (mv == OFFLOAD_CKPT && ins[i].op == OP_RC && ins[i].mb == f->mb &&
            ins[i].stage == f->stage)
            return i;
    }
    return -1;
}

/* Tries device d's list with its forward at fi changed by mv (each RL place in turn);
 * keeps the first change offload_better takes. */
static bool offload_try(struct plan *cur, struct sim_result *cur_sim, int d, int fi,
                        enum offload_move mv, double cap, long max_evals,
                        struct search_offload_stats *st, const struct instr *was, int len,
                        struct instr *buf)
{
    int at = mv == OFFLOAD_UNDO ? -1 : offload_target(was, len, fi, mv);
    if (mv == OFFLOAD_UNDO && !(was[fi].op == OP_OF))
        return false;
    if (mv != OFFLOAD_UNDO && at < 0)
        return false;
    for (int back = 0; back <= (mv == OFFLOAD_UNDO ? 0 : SEARCH_OFFLOAD_RL_BACK); back++) {
        if (max_evals > 0 && st->evals >= max_evals)
            return false;
        int n = mv == OFFLOAD_UNDO ? offload_undo(was, len, fi, buf)
                                   : offload_rewrite(was, len, fi, at, mv == OFFLOAD_CKPT,
                                                     back, buf);
        if (n < 0)
            return false;
        plan_set_list(cur, d, buf, n);
        struct sim_result r;
        struct mt_err e = {0};
        st->evals++;
        int vrc = validate_plan_sim(cur, &r, &e);
        if (vrc == MT_OK && offload_better(mv, &r, cur_sim, d, cap)) {
            sim_result_fini(cur_sim);
            *cur_sim = r;
            return true;
        }
        sim_result_fini(&r);
        plan_set_list(cur, d, was, len);
    }
    return false;
}

/* Every device's CFW of micro-batch mb offloaded at once, each RL `back` compute
 * instructions before its RC's place (a micro-batch's recomputes are on one chain across the
 * devices: one device's gone seldom shortens the step). Kept when the step does not grow. */
static bool offload_try_mb(struct plan *cur, struct sim_result *cur_sim, int mb, double cap,
                           long max_evals, struct search_offload_stats *st)
{
    int D = plan_devices(cur);
    struct instr **was = xcalloc((size_t)D, sizeof *was);
    int *len = xcalloc((size_t)D, sizeof *len);
    for (int d = 0; d < D; d++) {
        len[d] = plan_len(cur, d);
        was[d] = xmalloc(((size_t)len[d] + 1) * sizeof **was);
        memcpy(was[d], plan_instrs(cur, d), (size_t)len[d] * sizeof **was);
    }
    bool kept = false;
    for (int back = 0; back <= SEARCH_OFFLOAD_RL_BACK && !kept; back++) {
        if (max_evals > 0 && st->evals >= max_evals)
            break;
        int changed = 0;
        for (int d = 0; d < D; d++) {
            struct instr *buf = xmalloc(((size_t)len[d] + 2 * (size_t)len[d] + 2) * sizeof *buf);
            struct instr *tmp = xmalloc(((size_t)len[d] * 3 + 2) * sizeof *tmp);
            int n = len[d];
            memcpy(buf, was[d], (size_t)n * sizeof *buf);
            for (int fi = 0; fi < n; fi++) {
                if (buf[fi].mb != mb)
                    continue;
                int at = offload_target(buf, n, fi, OFFLOAD_CKPT);
                if (at < 0)
                    continue;
                int m = offload_rewrite(buf, n, fi, at, true, back, tmp);
                if (m < 0)
                    continue;
                memcpy(buf, tmp, (size_t)m * sizeof *buf);
                n = m;
                changed++;
            }
            plan_set_list(cur, d, buf, n);
            free(buf);
            free(tmp);
        }
        if (changed == 0)
            break;
        struct sim_result r;
        struct mt_err e = {0};
        st->evals++;
        if (validate_plan_sim(cur, &r, &e) == MT_OK && offload_better(OFFLOAD_CKPT, &r, cur_sim, 0, cap)) {
            sim_result_fini(cur_sim);
            *cur_sim = r;
            kept = true;
            break;
        }
        sim_result_fini(&r);
        for (int d = 0; d < D; d++)
            plan_set_list(cur, d, was[d], len[d]);
    }
    for (int d = 0; d < D; d++)
        free(was[d]);
    free(was);
    free(len);
    return kept;
}

/* One change of kind mv to cur, applied; false when none (or the budget is spent). */
static bool offload_step(struct plan *cur, struct sim_result *cur_sim, enum offload_move mv,
                         double cap, long max_evals, struct search_offload_stats *st)
{
    for (int d = 0; d < plan_devices(cur); d++) {
        int len = plan_len(cur, d);
        struct instr *was = xmalloc(((size_t)len + 1) * sizeof *was);
        memcpy(was, plan_instrs(cur, d), (size_t)len * sizeof *was);
        struct instr *buf = xmalloc(((size_t)len + 2) * sizeof *buf);
        bool done = false;
        for (int fi = 0; fi < len && !done; fi++)
            done = offload_try(cur, cur_sim, d, fi, mv, cap, max_evals, st, was, len, buf);
        free(was);
        free(buf);
        if (done)
            return true;
    }
    return false;
}

/* The plan of base's work with every forward offloaded whose backward is not the next compute
 * instruction on its device: the OF right after it, the RL right after the backward before
 * its own on the device (for the first backward, after the last forward before it), `back`
 * compute instructions earlier. Checkpointed forwards are left as they are. */
static struct plan *offload_all(const struct plan *base, int back, bool ckpt_too)
{
    struct plan *p = plan_clone(base);
    int mbs = plan_geom(base)->mbs, stages = plan_geom(base)->stages;
    bool *off = xcalloc((size_t)mbs * stages + 1, 1);
    for (int d = 0; d < plan_devices(base); d++) {
        const struct instr *ins = plan_instrs(base, d);
        int len = plan_len(base, d);
        for (int i = 0; i < len; i++) {
            if (ins[i].op != OP_FW && !(ckpt_too && ins[i].op == OP_CFW && !ins[i].ckpt_layers))
                continue;
            int j = i + 1;
            while (j < len && !plan_op_is_compute(ins[j].op))
                j++;
            off[(size_t)ins[i].mb * stages + ins[i].stage] =
                !(j < len && plan_op_is_backward(ins[j].op) && ins[j].mb == ins[i].mb &&
                  ins[j].stage == ins[i].stage);
        }
        struct instr *out = xmalloc(((size_t)len * 3 + 1) * sizeof *out);
        /* out's positions just after the last backward and just after the last compute */
        int n = 0, prev_bw = -1, prev_compute = 0;
        for (int i = 0; i < len; i++) {
            const struct instr *in = &ins[i];
            if (plan_op_is_backward(in->op) && off[(size_t)in->mb * stages + in->stage]) {
                /* its RL after the previous backward, else after the forwards before it */
                int at = prev_bw >= 0 ? prev_bw : prev_compute;
                at = offload_back(out, at, back, 0);
                memmove(&out[at + 1], &out[at], (size_t)(n - at) * sizeof *out);
                out[at] = *in;
                out[at].op = OP_RL;
                n++;
            }
            bool mine = in->mb >= 0 && in->mb < mbs && in->stage >= 0 && in->stage < stages &&
                        off[(size_t)in->mb * stages + in->stage]; /* AR, OS have no mb */
            if (in->op == OP_RC && mine)
                continue; /* its forward is kept and offloaded instead */
            out[n++] = *in;
            if (plan_op_is_forward(in->op) && mine) {
                out[n - 1].op = OP_FW;
                out[n] = out[n - 1];
                out[n++].op = OP_OF;
            }
            if (plan_op_is_backward(in->op))
                prev_bw = n;
            if (plan_op_is_compute(in->op))
                prev_compute = n;
        }
        plan_set_list(p, d, out, n);
        free(out);
    }
    free(off);
    return p;
}

/* The greedy changes to cur (a plan whose simulation is *r, under the caps or not): kept
 * forwards offloaded where the step does not grow (room for the next kind), checkpointed ones
 * offloaded (a micro-batch on every device at once, then one at a time) likewise. */
static void offload_greedy(struct plan *cur, struct sim_result *r, double cap, long max_evals,
                           struct search_offload_stats *st)
{
    while (offload_step(cur, r, OFFLOAD_KEPT, cap, max_evals, st))
        ;
    for (int mb = plan_geom(cur)->mbs - 1; mb >= 0; mb--)
        offload_try_mb(cur, r, mb, cap, max_evals, st);
    while (offload_step(cur, r, OFFLOAD_CKPT, cap, max_evals, st))
        ;
}

static int offload_count(const struct plan *p)
{
    int n = 0;
    for (int d = 0; d < plan_devices(p); d++)
        for (int i = 0; i < plan_len(p, d); i++)
            n += plan_at(p, d, i)->op == OP_OF;
    return n;
}

int search_offload(const struct plan *in, const struct plan *base, const struct search_opts *o,
                   long max_evals, struct plan **out, struct sim_result *out_sim,
                   struct search_offload_stats *st, struct mt_err *e)
{
    double cap = o->cap;
    memset(st, 0, sizeof *st);
    *out = NULL;
    struct plan *cur = plan_clone(in);
    struct sim_result r;
    int rc = validate_plan_sim(cur, &r, e);
    if (rc != MT_OK) {
        plan_free(cur);
        return rc;
    }
    double in_step = r.step_time;
    /* 1. greedy changes from in */
    offload_greedy(cur, &r, cap, max_evals, st);
    /* 2. every forward offloaded, each RL placed alike: of the base, of in's kept forwards,
     * of all in's forwards */
    const struct plan *from_plan[3] = {base, in, in};
    for (int k = 0; k < 3 * (SEARCH_OFFLOAD_RL_BACK + 1); k++) {
        int back = k % (SEARCH_OFFLOAD_RL_BACK + 1), from = k / (SEARCH_OFFLOAD_RL_BACK + 1);
        if (from_plan[from] == NULL)
            continue;
        struct plan *q = offload_all(from_plan[from], back, from >= 2);
        struct sim_result qr;
        struct mt_err qe = {0};
        st->evals++;
        if (validate_plan_sim(q, &qr, &qe) == MT_OK && offload_fits(&qr, cap) &&
            qr.step_time < r.step_time * (1 - 1e-12)) {
            plan_free(cur);
            sim_result_fini(&r);
            cur = q;
            r = qr;
            continue;
        }
        if (qe.code == MT_OK)
            sim_result_fini(&qr);
        plan_free(q);
    }
    /* 3. kept only when faster than it came, with the offloads that do not pay dropped */
    if (!(r.step_time < in_step * (1 - 1e-12))) {
        plan_free(cur);
        sim_result_fini(&r);
        cur = plan_clone(in);
        rc = validate_plan_sim(cur, &r, e);
        if (rc != MT_OK) {
            plan_free(cur);
            return rc;
        }
    } else {
        while (offload_step(cur, &r, OFFLOAD_UNDO, cap, max_evals, st))
            ;
    }
    st->offloaded = offload_count(cur);
    *out = cur;
    if (out_sim)
        *out_sim = r;
    else
        sim_result_fini(&r);
    return MT_OK;
}
