/* tests/eval_vs_sim.h: the search's evaluation of a schedule against the simulator's run of its
 * plan, for the tests that hold them bit for bit (test_search, test_offload_search). */
#ifndef MT_TESTS_EVAL_VS_SIM_H
#define MT_TESTS_EVAL_VS_SIM_H

#include <math.h>
#include <stdbool.h>

#include "sim/core/simulate.h"
#include "sim/search/search_internal.h"

/* How many of the step, every device's peak and the sum of the devices' finishes differ
 * between s's evaluation (ran: what search_eval_time returned into ev) and r (sim_run of s's
 * plan); 0 when they agree (the sum to 1e-12 of itself: it is added in another order). */
static inline int eval_vs_sim(const struct search_ctx *x, const struct search_sched *s,
                              struct search_eval *ev, bool ran, const struct sim_result *r)
{
    int f = !ran || ev->makespan != r->step_time;
    double sf = 0;
    for (int d = 0; d < x->D; d++) {
        f += search_eval_peak(x, s, d, ev) != r->dev[d].peak_mem;
        sf += r->dev[d].finish;
    }
    f += ev->sum_finish != sf && fabs(ev->sum_finish - sf) > 1e-12 * sf;
    return f;
}

#endif
