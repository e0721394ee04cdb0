/* traces/calibrate.h: the paper's §5.2 "Lightweight Profiling" made from measured traces:
 * observations of short runs over a few layer counts and micro-batch counts, fitted by least
 * squares into a calibration (model/profile.h) that the simulator then uses.
 *
 * Per run and stage (n layers, holding the embedding and/or the head or neither): the median
 * time of FW (and CFW), BW, RC, OS and the split backward's B and W over the steps used (a
 * stage measured only split also gives BW = B + W), and of AR over the replicas
 * (calibrate_add_allreduce). Per run and device, when each device holds one stage: the bytes
 * held between steps (static), the peak above them and the transients. Per run: each
 * message's latency (traces/replay.h replay_latency_samples: from the release of the send's
 * device to the end of a receive whose device was already waiting; in a trace of compute only,
 * the gaps between the stages' compute). Fits:
 *   FW, BW, RC, B, W, static bytes q = a·n + b + embed·E + head·H (least squares, 4 columns;
 *                            columns the runs cannot tell apart are left out)
 *   OS, AR                   q = k·params + c (the stage's parameters, model/cost.h), written
 *                            as a = k·(a block's), embed, head = k·(theirs), b = c
 *   act, ckpt bytes          per (n, E, H): peak(N) = s·N + c over the micro-batch counts N
 *                            (GPipe keeps N forwards at its peak): s = act (ckpt for
 *                            checkpointed runs); then each as a·n + b + embed·E + head·H
 *   transients               the memory samples inside each FW, CFW and BW: the most it
 *                            holds over what it leaves held at its end (FW) or over what was
 *                            held before it (CFW, BW), mean per run and stage; then
 *                            a·n + b + ...
 *   W's kept bytes           what each W frees (the level before it less the level after it),
 *                            mean per run and stage; then a·n + b + ...
 *   p2p                      b = the median latency
 *   message buffer           b = the median of what a receive takes (RA, RG)
 * Medians, not means: the calibration describes the device, and what a busy machine's other
 * work takes from it while it is measured (a preemption of milliseconds among instructions
 * of a fraction of one) is noise that the runs it predicts see differently. */
#ifndef MT_TRACES_CALIBRATE_H
#define MT_TRACES_CALIBRATE_H

#include <stdbool.h>
#include <stddef.h>

struct plan;
struct trace;
struct config;
struct profile;
struct mt_err;

enum calibrate_qty {
    CAL_FW,
    CAL_BW,
    CAL_RC,
    CAL_OS,
    CAL_AR,
    CAL_P2P,
    CAL_STATIC,
    CAL_PEAK,     /* dynamic peak (peak - static) of a run with N micro-batches */
    CAL_FW_WORK,  /* the most a FW holds over what it keeps at its end */
    CAL_CFW_PEAK, /* the most a CFW holds over what the device held before it */
    CAL_BW_WORK,  /* the most a BW holds over what the device held before it */
    CAL_MSG,      /* the buffer a receive takes: one message */
    CAL_B,        /* split backward: the input-gradient half */
    CAL_W,        /* split backward: the weight-gradient half */
    CAL_W_KEEP,   /* what a W frees: the bytes its B left held for it */
    CAL_P2P_SHARED,  /* p2p latency with more ranks than cores (calibrate_add_shared_run) */
    CAL_RECV_SHARED, /* a receive's own time then */
    CAL_GAP_SHARED,  /* then: the time between instructions, per instruction (mean per run) */
    CAL__COUNT
};

struct calibrate_obs {
    enum calibrate_qty q;
    int run;          /* run index (calibrate_add_run order) */
    int n;            /* transformer layers of the stage */
    bool embed, head; /* the stage holds the embedding / the LM head */
    bool ckpt;        /* CAL_PEAK: the run checkpoints its forwards */
    int mbs;          /* CAL_PEAK: micro-batches of the run */
    double y;         /* us or bytes */
};

struct calibrate;

struct calibrate *calibrate_new(void);
void calibrate_free(struct calibrate *c);
/* Adds what the measured run t of plan p tells (every step but the first, see
 * traces/align.h): times per stage, memory per device when each device holds one stage
 * (parts = 1; with more, the memory is left out). MT_EINVAL when the trace does not match the
 * plan. */
int calibrate_add_run(struct calibrate *c, const struct plan *p, const struct trace *t,
                      struct mt_err *e);
/* A run with more ranks than cores (sim/core/share.h): only its p2p latency and a receive's own
 * time, which waiting ranks that nap and wait for a core make longer than a rank alone on its
 * core sees (its compute is the sharing model's). */
int calibrate_add_shared_run(struct calibrate *c, const struct plan *p, const struct trace *t,
                             struct mt_err *e);
/* The gradient allreduce of the run added last, from its trace with every replica (trace_opts
 * replica -1): per step and stage the shortest AR over the replicas (the one that arrived last
 * waited least: its time is the collective's own, what the simulator's AR lasts after the
 * last replica arrives), the median over the steps after the first. MT_EINVAL without a run. */
int calibrate_add_allreduce(struct calibrate *c, const struct plan *p, const struct trace *all,
                            struct mt_err *e);
/* The fits. measured is the config of the runs (its shape is recorded); MT_EINVAL when the
 * runs cannot give a forward and a backward time. */
int calibrate_fit(const struct calibrate *c, const struct config *measured, struct profile *out,
                  struct mt_err *e);
const struct calibrate_obs *calibrate_observations(const struct calibrate *c, size_t *n);
const char *calibrate_qty_name(enum calibrate_qty q);

/* Least squares: coef[cols] minimising |X·coef - y| over rows (X row-major, rows x cols),
 * through the normal equations with partial pivoting. *r2 (may be NULL) receives the
 * coefficient of determination. MT_EINVAL when rows < cols or the columns are dependent. */
int calibrate_lsq(const double *x, const double *y, int rows, int cols, double *coef, double *r2,
                  struct mt_err *e);

/* Every observation the fits were made from ({"q", "run", "layers", "embed", "head",
 * ["microbatches", "ckpt",] "y"}), a new cJSON array for profile_save's `extra`. */
struct cJSON;
struct cJSON *calibrate_observations_json(const struct calibrate *cal);

#endif
