/* traces/align.h: measured instructions matched to a plan's (docs/design.md: a trace records a run
 * with the same (device, op, mb, part, stage) keys as the plan, so simulated and measured
 * instructions line up one to one). An event takes the first instruction of its device, in
 * program order, with its op and micro-batch, and its stage and part where it gives them (a
 * mapped foreign trace may give neither) that no other event of the same step has taken.
 * Steps are laid over each other: times are taken from each step's start and averaged. */
#ifndef MT_TRACES_ALIGN_H
#define MT_TRACES_ALIGN_H

#include <stdbool.h>
#include <stddef.h>

struct plan;
struct trace;
struct mt_err;

struct align_opts {
    int step; /* -1: every step but the first when there are several (the first warms up;
               * of the rest, only complete steps when there are any); else only this step */
    bool per_step; /* also keep every used step's own times (step_start, step_end) */
};

struct align_result {
    int total;           /* plan_total */
    int devices;         /* plan_devices */
    double *start, *end; /* [total] us from the start of the step, mean over the steps used;
                          * NAN where the instruction was not measured */
    int *count;          /* [total] steps used in which the instruction was measured */
    int matched;         /* instructions measured (in at least one step used) */
    int missing;         /* instructions never measured */
    size_t extra;        /* events of the steps used with keys no instruction has */
    size_t unkeyed;      /* events of the steps used without keys (Kineto without a mapping) */
    int first_step;      /* the first step used */
    int steps_used;
    int steps_in_trace;
    double step_time_us;   /* mean over the steps used of (last end - first start) */
    double *step_times_us; /* [steps_used] */
    double *peak_bytes;    /* [devices] highest memory sample during the steps used; NAN: none */
    double *low_bytes;     /* [devices] lowest sample during the steps used or right before them
                            * (what stays between steps: weights, gradients, optimizer state);
                            * NAN: none */
    bool unit;             /* the trace is a unit-cost simulation (1 t = 1000 us, M_theta) */
    double *step_start, *step_end; /* per_step: [steps_used * total], step u's instruction id at
                                    * [u * total + id], us from that step's start; NAN where
                                    * not measured in it (the first event taken, as above);
                                    * NULL otherwise */
};

/* Matches t against p. MT_EINVAL when step is given and the trace has no event in it, or when
 * no event falls on a device of the plan. Zeroes *out on failure. */
int align_run(const struct plan *p, const struct trace *t, const struct align_opts *o,
              struct align_result *out, struct mt_err *e);
void align_result_fini(struct align_result *r);

struct sim_result;

/* A simulated trace (ours, `simulate --trace-out`) back into a plan and its simulation: each
 * device's instructions of the first step in file order (the writer's program order), times
 * in the trace's unit (t for a unit-cost trace), memory peaks and curves from its "memory"
 * counters. The plan carries the default config with the trace's scheme and a geometry read
 * off the keys: enough to compare and draw, not to run. MT_EINVAL when an event lacks our
 * keys. */
int align_trace_plan(const struct trace *t, struct plan **p, struct sim_result *r,
                     struct mt_err *e);

#endif
