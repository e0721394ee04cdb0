/* sim/search/search_offload.h: the third lever beside keep and checkpoint (issue 29): which
 * checkpointed forwards of a searched plan to offload to host memory instead (OF after the
 * forward, RL before its backward, on the device's copy lanes), where that makes the step
 * shorter under the same caps. A greedy pass over the plan the schedule search returns. */
#ifndef MT_SIM_SEARCH_OFFLOAD_H
#define MT_SIM_SEARCH_OFFLOAD_H

struct plan;
struct sim_result;
struct mt_err;

/* How far back from its recompute's place an RL may be tried, in compute instructions. */
#define SEARCH_OFFLOAD_RL_BACK 3

struct search_offload_stats {
    int offloaded; /* forwards turned from checkpointed into offloaded */
    long evals;    /* plans simulated */
};

/* Offloads forwards of in (a searched plan without copies) where the step gets shorter with
 * every device under cap (bytes, M_θ under unit costs, static included; 0 none) and the
 * config's host cap. Two ways, the faster kept: from in, greedy changes of one forward (or
 * one micro-batch on every device) at a time: a kept FW offloaded, a checkpointed one (CFW +
 * RC) made FW + OF + RL, the OF right after the forward, the RL where the RC was or up to
 * SEARCH_OFFLOAD_RL_BACK compute instructions earlier; and from base (the plan of the same
 * work without checkpoints; may be NULL), every forward offloaded whose backward does not
 * follow it, each RL after the backward before its own. Then the offloads that do not pay
 * are dropped. max_evals: plans simulated at most (0: no limit). A slow host link changes
 * nothing. *out: the result (a copy of in when nothing was faster), owned by the caller;
 * out_sim (may be NULL) its simulation. */
struct search_opts;
int search_offload(const struct plan *in, const struct plan *base, const struct search_opts *o,
                   long max_evals, struct plan **out, struct sim_result *out_sim,
                   struct search_offload_stats *st, struct mt_err *e);

#endif
