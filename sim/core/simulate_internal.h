/* sim/core/simulate_internal.h: what the simulator's general event loop (simulate.c) shares with
 * its fast path (simulate_fast.c): the latency of an instruction and the fast path's entry. */
#ifndef MT_SIM_SIMULATE_INTERNAL_H
#define MT_SIM_SIMULATE_INTERNAL_H

#include <stdbool.h>

#include "model/cost.h"
#include "sim/plan/plan.h"

struct sim_result;

/* sim_instr_latency, inlined into both loops. */
static inline double sim_latency(const struct cost_model *cost, const struct instr *in)
{
    const struct stage_cost *sc = &cost->stage[in->stage];
    double part = 1.0;
    if ((in->op == OP_CFW || in->op == OP_RC) && in->ckpt_layers > 0 && sc->num_layers > 0)
        part = (double)in->ckpt_layers / sc->num_layers;
    switch (in->op) {
    case OP_FW: case OP_CFW: return sc->fw;
    case OP_RC: return sc->rc * part;
    case OP_BW: return sc->bw;
    case OP_B: return sc->b;
    case OP_W: return sc->w;
    case OP_SA: case OP_SG: return sc->p2p;
    case OP_AR: return sc->ar;
    case OP_OS: return sc->os;
    case OP_OF: case OP_RL: return sc->copy;
    default: return 0;
    }
}

/* r->throughput from r->step_time and p's config. */
void sim_throughput(const struct plan *p, struct sim_result *r);

/* Whether the fast path takes plans of p's config: sends that do not block and a synchronous
 * scheme (no stashed weight versions, a steady window that is the whole step). */
bool sim_fast_applies(const struct plan *p);
/* sim_run_durations for such a plan, computing the same figures with the same floating-point
 * operations in the same order. Returns false, out untouched, where it cannot (a missing
 * dependency, a deadlock, a duration that is negative or not a number): the general loop then
 * runs and words the error. */
bool sim_fast_run(const struct plan *p, const struct cost_model *cost, const double *dur,
                  struct sim_result *out);

#endif
