/* sim/search/search_offload.h: the third lever beside keep and checkpoint (issue 29): which
 * checkpointed forwards of a searched plan to offload to host memory instead (OF after the
 * forward, RL before its backward, on the device's copy lanes), where that makes the step
 * shorter under the same caps: a local search over the plan the schedule search returns. */
#ifndef MT_SIM_SEARCH_OFFLOAD_H
#define MT_SIM_SEARCH_OFFLOAD_H

#include <stdbool.h>

struct plan;
struct sim_result;
struct mt_err;

struct search_offload_stats {
    int offloaded; /* forwards the result offloads */
    long evals;    /* schedules evaluated */
    bool stopped;  /* its progress callback stopped it before its budget was spent */
};

/* Offloads forwards of in (a searched plan without copies) where the step gets shorter with
 * every device under o->cap (bytes, M_θ under unit costs, static included; 0 none) and the
 * config's host cap: the schedule search's local search with offload allowed
 * (search_ctx.offload: keep, checkpoint or offload per forward, and the order around the
 * copies), from in and the schedule search's list schedules (each also with every checkpoint
 * offloaded) and from base (the plan of the same work without checkpoints; may be NULL) and
 * in with every forward offloaded whose backward does not follow it. Its budget
 * (evaluations) is search_budget's (search.h; half of it for a quick search, the tuner's); it
 * reports to o->progress as the schedule search does (done, budget) and stops when that says
 * so (then st->stopped), with the best found so far. A plan at the lower bound that allows
 * offload is not searched. The result is checked by the validator and the simulator and kept
 * only when faster than in; a slow host link changes nothing. *out: the result (a copy of in
 * when nothing was faster), owned by the caller; out_sim (may be NULL) its simulation. */
struct search_opts;
int search_offload(const struct plan *in, const struct plan *base, const struct search_opts *o,
                   struct plan **out, struct sim_result *out_sim,
                   struct search_offload_stats *st, struct mt_err *e);

#endif
