/* traces/import.h: a plan made from a measured run (issue 19; docs/design.md "a plan may come from
 * ... a measured trace"): each device's executed order in one step, the geometry read off the
 * keys, the config from the trace where it carries one. Then every command treats it as any
 * other plan (simulate, optimize, explore, export).
 *
 *   ours      (`mario-tui run --trace-out`, `simulate --trace-out`): every instruction with
 *             its op, micro-batch, part and stage, sends and receives included; the scheme
 *             and, for `run`'s traces, the whole config come from otherData. The plan is the
 *             one that ran, instruction for instruction (checkpointing selective by layers
 *             is not in the trace: a CFW comes back whole).
 *   foreign   a PyTorch profiler trace of torch.distributed.pipelining (its "PP:" action
 *             ranges, traces/kineto.h; one file per rank, devices from distributedInfo.rank)
 *             or any trace with a mapping file whose rules give op, micro-batch and stage:
 *             the compute order of each device (FW, CFW, RC, BW, B, W; sends, receives and
 *             collectives of the trace are left out and made again as for a generated plan,
 *             sim/schemes/scheme.h scheme_add_comm), the placement found as for torch's schedule CSV
 *             (sim/plan/plan.h plan_load_torch_csv: a line, looped, or a V), the model and cluster
 *             from base (the plan flags) and the device from deviceProperties.
 * A trace that cannot make a consistent plan is an error naming the device, the event and
 * where it is in its file: a forward with no backward (or the reverse, a B without its W, a
 * recompute without its checkpointed forward), a backward before its forward on its device,
 * a dependency across devices that runs backwards in time (after the clocks are put together,
 * traces/trace.c) by more than 1% of the shorter op, a stage on two devices, an event without a stage or micro-batch. */
#ifndef MT_TRACES_IMPORT_H
#define MT_TRACES_IMPORT_H

#include <stdbool.h>
#include <stddef.h>

struct config;
struct plan;
struct trace;
struct mt_err;

struct import_opts {
    int step;          /* the step whose order is taken; -1: the second step present (the
                        * first warms up), or the only one */
    bool flags;        /* base holds plan flags: a trace's own config is not taken */
    bool device_given; /* base's device was asked for: deviceProperties does not set it */
};

struct import_info {
    int step;               /* the step taken */
    bool ours;              /* made from our keys, sends and receives as recorded */
    bool config_from_trace; /* the config is the one the trace carries */
    int devices, stages, mbs;
    size_t instructions; /* instructions taken from the trace */
    size_t left_out;     /* events of the step not taken: communication made again, repeats
                          * (a second iteration inside one step) */
    double inversion_us; /* the largest dependency left running backwards in time after the
                          * clocks were put together, tolerated as a skew (at most 1% of
                          * the shorter op); 0: none */
};

/* The plan of trace t (read from paths[0..npaths), which are opened again only to say where a
 * bad event is; NULL: say its index only). base gives what the trace does not (the model, the
 * cluster, the batch). MT_EINVAL for an inconsistent trace (see above), MT_EUNSUPPORTED for a
 * placement the simulator has none for. */
int import_plan(const struct trace *t, const char *const *paths, int npaths,
                const struct config *base, const struct import_opts *o, struct plan **out,
                struct import_info *info, struct mt_err *e);

#endif
