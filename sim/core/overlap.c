/* sim/core/overlap.c: the F&B pair rule and the communication lane (sim/core/overlap.h). */
#include <config.h>
#include "sim/core/overlap.h"

#include <math.h>
#include <stdlib.h>

#include "model/cost.h"
#include "sim/core/simulate.h"
#include "sim/core/simulate_internal.h"
#include "sim/plan/plan.h"
#include "util/xalloc.h"

bool overlap_cost_has_a2a(const struct cost_model *cost)
{
    for (int s = 0; s < cost->num_stages; s++)
        if (cost->stage[s].fw_a2a > 0 || cost->stage[s].b_a2a > 0)
            return true;
    return false;
}

/* A forward and a backward, of different (micro-batch, stage). */
static bool overlap_kinds(const struct instr *a, const struct instr *b)
{
    bool fb = plan_op_is_forward(a->op) && plan_op_is_backward(b->op);
    bool bf = plan_op_is_backward(a->op) && plan_op_is_forward(b->op);
    return (fb || bf) && (a->mb != b->mb || a->stage != b->stage);
}

void overlap_pairs(const struct instr *ins, int n, int *partner)
{
    int last = -1; /* the previous compute */
    for (int i = 0; i < n; i++) {
        partner[i] = -1;
        if (!plan_op_is_compute(ins[i].op))
            continue;
        if (ins[i].paired && last >= 0 && partner[last] < 0 && overlap_kinds(&ins[last], &ins[i])) {
            partner[i] = last;
            partner[last] = i;
        }
        last = i;
    }
}

double overlap_a2a(const struct cost_model *cost, const struct instr *in)
{
    const struct stage_cost *sc = &cost->stage[in->stage];
    if (plan_op_is_forward(in->op))
        return sc->fw_a2a;
    return plan_op_is_backward(in->op) ? sc->b_a2a : 0;
}

double overlap_latency(const struct cost_model *cost, const struct instr *in,
                       const struct instr *partner)
{
    double lat = sim_latency(cost, in);
    if (partner == NULL)
        return lat;
    double a = overlap_a2a(cost, in), other = overlap_a2a(cost, partner);
    double other_comp = sim_latency(cost, partner) - other;
    return lat - a + fmax(0, a - other_comp);
}

double *overlap_durations(const struct plan *p, const struct cost_model *cost, const double *dur)
{
    if (!overlap_cost_has_a2a(cost))
        return NULL;
    int total = plan_total(p);
    double *out = NULL;
    int *pair = xmalloc(((size_t)total + 1) * sizeof *pair);
    for (int d = 0; d < plan_devices(p); d++) {
        const struct instr *ins = plan_instrs(p, d);
        int n = plan_len(p, d), base = plan_id(p, d, 0);
        overlap_pairs(ins, n, pair);
        for (int i = 0; i < n; i++) {
            int j = pair[i];
            if (j < 0 || (dur != NULL && isfinite(dur[base + i])))
                continue;
            if (out == NULL) {
                out = xmalloc(((size_t)total + 1) * sizeof *out);
                for (int k = 0; k <= total; k++)
                    out[k] = dur != NULL && k < total ? dur[k] : NAN;
            }
            out[base + i] = overlap_latency(cost, &ins[i], &ins[j]);
        }
    }
    free(pair);
    return out;
}

void overlap_annotate(const struct plan *p, const struct cost_model *cost, struct sim_result *r)
{
    if (!overlap_cost_has_a2a(cost))
        return;
    int total = plan_total(p);
    r->a2a_hidden = xcalloc((size_t)total + 1, sizeof(double));
    r->a2a_exposed = xcalloc((size_t)total + 1, sizeof(double));
    r->a2a_bytes = xcalloc((size_t)total + 1, sizeof(double));
    r->a2a_partner = xmalloc(((size_t)total + 1) * sizeof(int));
    for (int d = 0; d < plan_devices(p); d++) {
        const struct instr *ins = plan_instrs(p, d);
        int n = plan_len(p, d), base = plan_id(p, d, 0);
        struct sim_device *dv = &r->dev[d];
        dv->a2a_hidden = dv->a2a_exposed = 0;
        overlap_pairs(ins, n, r->a2a_partner + base);
        for (int i = 0; i < n; i++) {
            int id = base + i, j = r->a2a_partner[id];
            double a = overlap_a2a(cost, &ins[i]), hid = 0;
            if (j >= 0)
                hid = fmin(a, sim_latency(cost, &ins[j]) - overlap_a2a(cost, &ins[j]));
            if (j >= 0)
                r->a2a_partner[id] = base + j;
            r->a2a_hidden[id] = hid;
            const struct stage_cost *sc = &cost->stage[ins[i].stage];
            r->a2a_bytes[id] = plan_op_is_forward(ins[i].op)    ? sc->fw_a2a_bytes
                               : plan_op_is_backward(ins[i].op) ? sc->b_a2a_bytes
                                                                : 0;
            r->a2a_exposed[id] = a - hid;
            dv->a2a_hidden += hid;
            dv->a2a_exposed += a - hid;
        }
    }
    r->a2a_partner[total] = -1;
}
