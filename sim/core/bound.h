/* sim/core/bound.h: a certified lower bound on the step time of any schedule of a plan's work on
 * its placement (issue 18; docs/design.md "the search also returns a lower bound, shown beside every
 * plan"). The work is the plan's forwards, backwards (B and W when split), AR and OS, without
 * recompute; any order of it on the same devices, with or without checkpointing, takes at least
 *   - the critical path: the longest chain of dependencies (one micro-batch down the stages
 *     and back up, p2p included, then its stage's AR and OS);
 *   - per device, the one-machine bound with heads and tails: every instruction j of the device
 *     can start no earlier than its head r_j (the longest chain before it) and leaves at least
 *     its tail q_j (the longest chain after it) before the step ends; Jackson's preemptive
 *     schedule solves that relaxation exactly (the fill and drain, and the device's work);
 *   - under a memory cap, per device, a memory-time bound: a forward that keeps its activations
 *     holds them from its start to its backward's end, at least the chain L_j between them; one
 *     checkpointed holds its checkpoint until its recompute starts and the activations from
 *     there to its backward's end (at least RC + B), and adds its recompute to the device. The
 *     integral of held memory over the window the forwards and their backwards lie in,
 *     [first head, T - least tail], is at most (cap - static) x its length; counted in whole
 *     activations (floor((cap - static) / act) of them at a time: at 1.05 M_θ one), at most
 *     that many x its length. So the fraction y_j of each forward checkpointed (an LP
 *     relaxation) must save enough; the least recompute that does (a fractional knapsack,
 *     solved exactly) is added to the device's work between its first and last compute.
 *     Checkpoints are of whole stages, or of any k layers when the plan has one of k layers
 *     (then a weaker bound: a few layers save more per unit of recompute in the relaxation).
 * Each part is a relaxation of the simulator's semantics (sim/core/simulate.h), so the bound never
 * exceeds a simulated step; the memory part holds for schedules under the cap. */
#ifndef MT_SIM_BOUND_H
#define MT_SIM_BOUND_H

#include <stdbool.h>

struct plan;
struct cost_model;
struct mt_err;

enum bound_kind {
    BOUND_CRITICAL_PATH, /* one chain of dependencies */
    BOUND_DEVICE,        /* fill, drain and work of one device (Jackson's preemptive bound) */
    BOUND_MEMORY,        /* the recompute the cap forces on one device */
};

struct bound_result {
    double time;          /* max(critical_path, device): any schedule, any memory */
    double memory;        /* the memory-time bound under the cap; 0 when there is no cap or it
                           * forces nothing */
    double critical_path; /* us (t under unit costs) */
    double device;        /* the largest one-machine bound */
    double work;          /* the most work (no recompute) on one device */
    int device_at;        /* the device of `device` */
    int memory_at;        /* the device of `memory`, -1 when none */
    double forced_rc;     /* recompute the cap forces on memory_at (time; fractional) */
    double cap;           /* the cap the memory part used (bytes, M_θ under unit costs; 0 none) */
    bool cap_infeasible;  /* no schedule fits the cap: a device cannot hold one stage's
                           * activations (and, for a split backward, what B keeps for W beside
                           * them); memory is then +inf */
};

/* Held bytes w as the memory-time bound counts them in whole activations: a the largest
 * activations a device holds, r the cap's remainder (cap - static - k a, k = floor of what
 * fits), r < 0 the bytes as they are. Whatever a device holds at a moment sums to at most the
 * cap, so this of its forwards' holdings sums to at most k a (sim/core/bound.c says why). The
 * bound and the branch and bound (sim/search/search_exact.c) count with it. */
static inline double bound_count(double a, double r, double w)
{
    return r < 0 ? w : w > r ? a * (w - r) / (a - r) : 0;
}

/* The bound of p's work under cost (its scheme's costs: scheme_costs) and a memory cap per
 * device (static included; 0 = none). MT_EINFEASIBLE when the plan's dependencies are
 * incomplete or circular. Uses the plan's resolution (vpipe_resolve: the simulator's when it
 * ran first) and leaves it kept with the plan. */
int bound_compute(const struct plan *p, const struct cost_model *cost, double cap,
                  struct bound_result *out, struct mt_err *e);
/* bound_compute with the plan's own costs and cap (its config's memory_per_device). */
int bound_plan(const struct plan *p, struct bound_result *out, struct mt_err *e);
/* Offload (sim/core/bound_offload.c, issue 29). A forward's activations may leave the device
 * without any recompute (OF/RL on the copy lanes), so under a cap the memory part forces none:
 * b keeps its time part only (cap_infeasible stays: a forward still holds its activations while
 * it runs). bound_plan applies it to a plan that offloads; callers that let the search offload
 * apply it to their bound. Copies, like recomputes, are not part of the work. */
void bound_allow_offload(struct bound_result *b);
bool bound_plan_offloads(const struct plan *p);
/* The bound that holds for a plan: with the memory part when the plan is under the cap. */
double bound_value(const struct bound_result *b, bool under_cap);
/* Which part gives bound_value: BOUND_*. */
enum bound_kind bound_binding(const struct bound_result *b, bool under_cap);
/* "critical_path", "device", "memory" (the JSON's "binding"). */
const char *bound_kind_name(enum bound_kind k);
/* (step - bound) / bound in percent; 0 when the bound is 0 or infinite, or the two differ by
 * float rounding only (1e-9 relative). */
double bound_gap_pct(double step, double bound);

/* Whether a plan of this work with that step is optimal: under the cap (or none) and at its
 * bound (bound_gap_pct 0): no schedule of the work is faster (with the memory part binding,
 * none that checkpoints as the bound assumes: whole stages, or k layers when the plan does). */
bool bound_optimal(const struct bound_result *b, double step, bool under_cap);

/* Adds "lower_bound" (bound_value; time in t under unit costs, else seconds),
 * "lower_bound_gap_pct" of step (us or t) over it, "optimal" (bound_optimal) and "bound" (its
 * parts) to the JSON object o
 * (sim/core/bound_json.c); b NULL: "lower_bound": null. */
struct cJSON;
void bound_json_add(struct cJSON *o, const struct bound_result *b, double step, bool under_cap,
                    bool unit);

#endif
