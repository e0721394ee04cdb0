/* flow/compare.h: compare's workflow (docs/traces.md), below the commands that show it: a
 * measured trace lined up with a plan (traces/align.h), the simulation's accuracy against it
 * (traces/accuracy.h) and the replay of the plan with the measured durations, the plan's own
 * costs for what the trace did not measure (traces/replay.h). `mario-tui compare` prints it;
 * the explorer shows the same replay beside the plan on screen. */
#ifndef MT_FLOW_COMPARE_H
#define MT_FLOW_COMPARE_H

#include <stdbool.h>
#include <stddef.h>

#include "traces/accuracy.h"
#include "traces/align.h"
#include "traces/replay.h"

struct mt_err;
struct plan;
struct sim_result;
struct trace;

/* The replay of trace t, aligned with plan p as m, on p simulated as sim: true with *out
 * filled (replay_fini it), or false with why it could not be made in why[why_n]. */
bool flow_replay(const struct plan *p, const struct sim_result *sim, const struct trace *t,
                 const struct align_result *m, struct replay_result *out, char *why, size_t why_n);

struct flow_compare {
    struct align_result m; /* the trace's instructions beside the plan's */
    struct accuracy a;     /* the simulation's errors against them */
    struct replay_result rp;
    bool replayed;
    char why[240]; /* no replay: why (the comparison stands without it) */
};

/* Aligns t with p (o: which steps), then the accuracy and the replay, into *out (zeroed first;
 * flow_compare_fini it whatever is returned). An error only where the trace cannot be lined up
 * with the plan (align_run's). */
int flow_compare_run(const struct plan *p, const struct sim_result *sim, const struct trace *t,
                     const struct align_opts *o, struct flow_compare *out, struct mt_err *e);
void flow_compare_fini(struct flow_compare *c);

/* A MoE plan's token all-to-alls per step and device (exec/xformer_moe.h): a trace's
 * "ep_a2a" events of replica `replica` in the steps m used, per step; devices 0 for a dense
 * plan. sim_us / sim_bytes stay 0 for the caller (exec/interp.h interp_a2a_simulated: flow
 * does not link the executor, the explorer uses it without). */
void flow_compare_a2a(const struct plan *p, const struct trace *t, const struct align_result *m,
                      int replica, struct accuracy_a2a *out);

#endif
