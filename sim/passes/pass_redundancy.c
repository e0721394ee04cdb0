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

#include <stdbool.h>
#include <stdlib.h>

#include "model/cost.h"
#include "sim/core/memory.h"
#include "sim/schemes/scheme.h"
#include "sim/core/simulate.h"
#include "util/err.h"
#include "util/xalloc.h"

/* Whether the CFW at position c of dev is adjacent to its backward. */
static bool pass_redundancy_adjacent(const struct plan *p, int dev, int c)
{
    const struct instr *f = plan_at(p, dev, c);
    for (int j = c + 1; j < plan_len(p, dev); j++) {
        const struct instr *o = plan_at(p, dev, j);
        if (!plan_op_is_compute(o->op))
            continue;
        if (o->op == OP_RC && o->mb == f->mb && o->stage == f->stage)
            continue;
        return plan_op_is_backward(o->op) && o->mb == f->mb && o->stage == f->stage;
    }
    return false;
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
        for (int i = 0; i < n; i++) {
            if (plan_at(in, d, i)->op != OP_CFW || !pass_redundancy_adjacent(in, d, i))
                continue;
            pass_redundancy_mark(in, d, i, drop, retype, true);
            if (pass_redundancy_peak(in, d, drop, retype, work, &cost) > budget * (1 + 1e-12))
                pass_redundancy_mark(in, d, i, drop, retype, false); /* kept as it was */
        }
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
