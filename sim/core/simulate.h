/* sim/core/simulate.h: the timeline and memory simulator (paper §5.2, docs/design.md semantics).
 * Each device runs its list in order; an instruction starts when its device is free and
 * its dependencies (sim/core/vpipe.h) have finished, and lasts its estimated latency. Sends are
 * asynchronous: SA/SG occupy the link, not the device, and the matching RA/RG completes
 * when the data arrives. With blocking_send a send waits until its receive is posted and
 * holds the device until the transfer ends (rendezvous). Memory is walked per device in
 * program order: static + FW (full activations) / CFW (checkpoint) / RC (the rest back),
 * freed at the end of BW (W when the backward is split), plus PipeDream's stashed weight
 * versions; the peak also counts what a running FW, CFW or BW holds beyond that (a
 * calibration's transients, model/cost.h; none in the analytic model). Utilization and per-stage staleness come with every result (sim/core/async.h). */
#ifndef MT_SIM_SIMULATE_H
#define MT_SIM_SIMULATE_H

#include <stdbool.h>

struct plan;
struct instr;
struct cost_model;
struct config;
struct mt_err;

struct sim_device {
    double busy;          /* compute time (FW, CFW, RC, BW, B, W, AR, OS) */
    double bubble;        /* step_time - busy */
    double finish;        /* end of the device's last instruction */
    double static_mem;    /* weights, gradients, optimizer state of its stages */
    double peak_dynamic;  /* activations and checkpoints at the peak */
    double peak_mem;      /* static + peak_dynamic */
    int curve_len;        /* memory over time: points (t, static + dynamic) */
    double *curve_t, *curve_mem;
    double work;          /* busy time less recompute: the training's own work (sim/core/async.h) */
    double steady_work;   /* the same inside the steady-state window */
    double peak_stash;    /* most bytes of stashed weight copies held at once (PipeDream; in
                           * peak_dynamic's curve), 0 for every other scheme */
    int max_stashed;      /* most stashed weight versions held at once */
    double host_peak;     /* most host memory its offloaded activations (OF .. RL) hold at
                           * once, bytes (M_θ under unit costs); 0 without OF */
    double a2a_hidden;    /* its expert all-to-all time hidden in F&B pairs (sim/core/overlap.h) */
    double a2a_exposed;   /* and left exposed; both 0 without experts */
};

struct sim_result {
    bool unit;            /* unit costs: times in t, memory in M_θ units */
    int devices, total;
    double step_time;     /* us (t in unit mode) */
    double throughput;    /* samples/s (samples per t in unit mode), dp included */
    double cap;           /* memory cap per device (bytes, M_θ under unit costs; 0 = none) */
    int oom_device;       /* first device over the cap, or -1 */
    double host_cap;      /* host memory per device for offloaded activations (config_host_cap;
                           * 0 = none) */
    int host_oom_device;  /* first device whose host_peak is over host_cap, or -1 */
    double *start, *end;  /* [total], by plan_id; for SA/SG the transfer interval */
    double *mem_after;    /* [total]: device memory after the instruction */
    struct sim_device *dev; /* [devices] */
    /* Figures for asynchronous pipelines, computed for every plan (sim/core/async.h). */
    double utilization;        /* work / (devices x step_time): busy time less recompute */
    double steady_utilization; /* work / (devices x window) inside the steady-state window */
    double steady_t0, steady_t1; /* the window: the whole step for a synchronous plan (every
                                  * iteration flushes); for an async plan from the latest first
                                  * backward to the earliest last forward over devices (the
                                  * whole step when that is empty) */
    int stages;
    int *staleness;            /* [stages]: most updates (OS) of the stage between a
                                * micro-batch's forward and its backward; 0 when synchronous */
    /* The communication lane (sim/core/overlap.h), NULL where no stage has an expert
     * all-to-all: per instruction ([total]) the all-to-all time it hid behind its pair's
     * compute and the time left exposed, and the id of its pair's other member (-1 alone). */
    double *a2a_hidden, *a2a_exposed;
    double *a2a_bytes;         /* the bytes those all-to-alls send (the stage's fw_a2a_bytes or
                                * b_a2a_bytes; 0 under unit costs) */
    int *a2a_partner;
};

/* Simulates p with the analytic (or unit) costs of its config. On a deadlock returns
 * MT_EINFEASIBLE naming each stalled device, its position, instruction and what it waits
 * for. out is zeroed on failure. */
int sim_run(const struct plan *p, struct sim_result *out, struct mt_err *e);
/* Same with given per-stage costs (profiled or calibrated). */
int sim_run_costs(const struct plan *p, const struct cost_model *cost, struct sim_result *out,
                  struct mt_err *e);
/* Same with the duration of each instruction given (dur[plan_id], in the costs' unit: a
 * measured run replayed, traces/replay.h); a NAN entry keeps the cost's latency. For SA/SG the
 * duration is the message's latency. Memory follows the costs. */
int sim_run_durations(const struct plan *p, const struct cost_model *cost, const double *dur,
                      struct sim_result *out, struct mt_err *e);
/* sim_run_durations always through the general event loop, which every plan may take (blocking
 * sends, asynchronous schemes, and the error of any plan that fails). sim_run_durations takes
 * a fast path where it applies (sim/core/simulate_fast.c), with figures equal to the bit; the tests
 * compare the two. */
int sim_run_general(const struct plan *p, const struct cost_model *cost, const double *dur,
                    struct sim_result *out, struct mt_err *e);
/* The figures of sim_run for the plan scheme_build(c) would make, straight from c without
 * building it, for an Async config with dp 1 and sends that do not block: every figure but the
 * per-instruction ones (start, end and mem_after stay NULL, the memory curves empty), equal to
 * sim_run's (the same sums in the same order). O(D x M) time and O(D^2) memory: the 1F1B
 * order with no flush is walked in rounds, and memory once per kind of block until it repeats.
 * MT_EUNSUPPORTED for any other config (build the plan and call sim_run). */
int sim_run_direct(const struct config *c, struct sim_result *out, struct mt_err *e);
void sim_result_fini(struct sim_result *r);
/* The figures of r for plan p (its config and geometry) as JSON text, malloc'd: the
 * `simulate --json` report (step time and throughput, the lower bound b (sim/core/bound.h; NULL:
 * none) and the gap to it, memory cap and OOM device, utilization, staleness, per-device busy,
 * bubble and memory). */
struct bound_result;
char *sim_report_json(const struct plan *p, const struct sim_result *r,
                      const struct bound_result *b);
/* Latency of one instruction under a cost model. */
double sim_instr_latency(const struct cost_model *cost, const struct instr *in);

#endif
