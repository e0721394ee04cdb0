/* exec/interp.h: the instruction interpreter (issue 7; docs/design.md "Simulator semantics",
 * paper Table 3). Each MPI rank is one pipeline device of one data-parallel replica and
 * runs its device's list in order on the stages it holds: FW keeps the activations, CFW
 * only the stage input, RC recomputes them, BW consumes and frees them; SA/SG send without
 * blocking, RA/RG block; AR sums a stage's gradients over its replicas; OS applies AdamW.
 * Micro-batch mb of step k on data-parallel replica r reads dataset batch (k*dp + r)*N + mb,
 * so every plan of a config trains on the same data, and the loss is the mean over the
 * N*dp micro-batches of a step.
 * Asynchronous plans (Async = PipeMare, PipeDream; issue 11) span K iterations of N
 * micro-batches with no flush between them; each stage steps its own AdamW after every U
 * backwards. A step is then one iteration (the loss is per iteration, from the same batches
 * as a synchronous run's step), and the plan runs steps / K times. Async's backward reads the
 * current weights; PipeDream's the version its forward read (a stashed copy); PipeMare's two
 * techniques, learning-rate rescheduling (T1) and discrepancy correction (T2), are switches.
 * exec/interp.c's header has the exact rules and formulas. */
#ifndef MT_EXEC_INTERP_H
#define MT_EXEC_INTERP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "exec/fault.h"

struct plan;
struct config;
struct cost_model;
struct comm;
struct capture;
struct backend_ops;
struct xformer_dims;
struct mt_err;

struct interp_stream;

struct interp_opts {
    int steps; /* steps (iterations) to train; a multiple of the K iterations an asynchronous
                * plan spans */
    float lr, beta1, beta2, eps, weight_decay; /* AdamW */
    uint64_t seed;                             /* weights: a function of (seed, layer, tensor) */
    double timeout_s;      /* bound on every wait; after step 1 at least 4 x the slowest step */
    const char *data_path; /* byte-level corpus (data/corpus.txt) */
    const char *dump_dir;  /* NULL, or where each rank writes its stages' gradients and
                            * parameters after the last step: stage-SSS.rank-RRRRR.{grad,param},
                            * raw little-endian floats in the stage's flat order; and rank 0
                            * the loss of every step, `loss` (%.17g, one line each) */
    struct fault_plan fault; /* test hooks from MT_FAULT_* (exec/fault.h) */
    /* PipeMare's techniques (asynchronous plans only; formulas in exec/interp.c): */
    int lr_warmup;           /* T1 learning-rate rescheduling over this many iterations; 0 off */
    double correction_decay; /* T2 discrepancy correction with decay D in (0, 1); 0 off */
    /* Variable-length batches (issue 12, exec/input_aware.h): each step's plan and T from the
     * stream; NULL: every step runs the plan at its config's seq_length. */
    const struct interp_stream *stream;
};

/* What one rank measured during one step, with its backend's allocator (exec/backend.h): the
 * input of the online memory predictor of input-aware runs. Per stage it holds, from the
 * step's micro-batches (all of the same length); 0 where the step ran no such instruction: */
struct interp_stage_bytes {
    int stage;
    double static_bytes;   /* its weights, gradients and AdamW state (stage_create) */
    double ckpt_bytes;     /* what a CFW of the whole stage kept */
    double act_bytes;      /* full activations: what a FW kept, or a whole-stage CFW + its RC */
    double layer_bytes;    /* one layer's block, read off the allocator's count as a FW or a
                            * whole-stage RC allocates its blocks one after the other */
    double enc_bytes;      /* the embedding output's block (first stage) */
    double cfw_peak_bytes; /* a whole-stage CFW's peak over what the device held before it */
    double fw_work_bytes;  /* a FW's peak over what it keeps */
    double bw_work_bytes;  /* a BW's peak over what the device held before it */
};

struct interp_measure {
    int step;               /* 0-based */
    int T;                  /* tokens per sample of the step */
    double peak_bytes;      /* the most this rank held during the step */
    double hidden_bytes;    /* one buffer between instructions (B x T x C floats) */
    int p2p_buffers;        /* most such buffers held at once: activations and gradients
                             * received and not consumed, made and not sent, sends in flight */
    int nstages;
    const struct interp_stage_bytes *st; /* [nstages], valid during the callback */
};

/* A run of variable-length steps: before each step the run asks for its plan (the geometry of
 * the run's plan, its own checkpointing) and T; after it, hands over what it measured. Both
 * are called on every rank in step order (end after the step's control-plane round, so it may
 * be collective). Plans stay owned by the stream and must outlive the run. */
struct interp_stream {
    int max_T; /* the longest T any step asks for */
    int (*begin)(void *ctx, int step, const struct plan **plan, int *T, struct mt_err *e);
    int (*end)(void *ctx, const struct interp_measure *m, struct mt_err *e);
    void *ctx;
};

/* Defaults of the two techniques when switched on without a value (`mario-tui run`). */
#define INTERP_LR_WARMUP_DEFAULT 50
#define INTERP_CORRECTION_DECAY_DEFAULT 0.1

/* Defaults: 1 step, AdamW lr 1e-3, betas (0.9, 0.95), eps 1e-8, weight decay 0.1, seed 1337,
 * timeout 8 s, no dump, hooks from the environment. */
void interp_opts_default(struct interp_opts *o);

/* Figures of one rank, measured by the backend's allocator. */
struct interp_device {
    int rank, dev, dp_rank;
    double static_bytes;   /* weights, gradients, AdamW m and v of its stages */
    double peak_bytes;     /* the highest count during the run */
    double peak_act_bytes; /* peak - static: activations, checkpoints, p2p buffers, scratch */
    /* Asynchronous plans (measured by the backend's allocator, counted in the figures above):
     * PipeDream's stashed weight copies and T2's velocity (in static_bytes). */
    double peak_stash_bytes;
    int max_stashed; /* most stashed versions held at once */
    double correction_bytes;
    double peak_host_bytes; /* offload (OF/RL): the most its copies held in host memory */
    /* A MoE model (exec/xformer_moe.h): the token all-to-alls of its ep group over the run,
     * dispatch and combine, forward and backward, with their per-expert count exchanges */
    double a2a_s;     /* seconds spent in them (waiting for the group included) */
    double a2a_bytes; /* bytes of tokens this rank sent to other ranks */
    long a2a_calls;   /* token exchanges: 4 a MoE layer and micro-batch */
};

struct interp_result {
    int steps;      /* steps completed */
    double *loss;   /* [steps requested]: mean loss of each completed step */
    double *step_s; /* [steps requested]: the slowest rank's time of each step (of an
                     * asynchronous plan: its run's time over its K iterations) */
    int ranks;
    struct interp_device *dev; /* [ranks] on rank 0 (NULL elsewhere) */
    bool failed_together;      /* the error was learned by every rank at a step's end, so every
                                * rank returns it and the job may end normally; otherwise an error
                                * is this rank's alone and the caller must end the job */
};

/* Called on every rank after each step. */
typedef void (*interp_progress_fn)(int step, int steps, double loss, double step_s, void *ctx);

/* The model a config describes, as the executor builds it: micro-batch B x T tokens.
 * MT_EUNSUPPORTED for what the executor does not implement (LLaMA blocks, tensor
 * parallelism), MT_EINVAL for dims the model refuses. */
int interp_dims(const struct config *c, struct xformer_dims *d, int *B, int *T, struct mt_err *e);
/* Everything checked before any compute, on the launcher and on every rank: the plan fits
 * its config (geometry, dependencies, one OS per stage, AR exactly where a stage has
 * replicas), uses only instructions the executor runs, and `ranks` == pp * dp. The
 * message says what to change. */
int interp_check(const struct plan *p, int ranks, struct mt_err *e);
/* The run's options against the plan: steps a whole number of the plan's iterations, T1 only
 * for asynchronous plans, T2 only for Async (PipeDream's backward already reads its forward's
 * weights), D in (0, 1). MT_EINVAL saying what to change. */
int interp_check_opts(const struct plan *p, const struct interp_opts *o, struct mt_err *e);
/* A fingerprint of what a rank is about to run: the plan (its JSON, config included) and the
 * options that change the computation. Ranks compare theirs before any compute
 * (launch_agree), so two ranks given different plans or flags refuse together. */
uint64_t interp_fingerprint(const struct plan *p, const struct interp_opts *o, const char *backend);
/* Iterations the plan spans: K for an asynchronous plan, 1 otherwise. */
int interp_plan_iterations(const struct plan *p);
/* Whether any device's list holds an offload copy (OF/RL). */
bool interp_plan_has_copy(const struct plan *p);
/* What the backend must run beyond interp_check: copies (OF/RL) need its copy lanes
 * (exec/backend.h copy_*). MT_EUNSUPPORTED naming the backend where it has none. */
int interp_check_backend(const struct plan *p, const struct backend_ops *b, struct mt_err *e);
/* What the NCCL data plane (exec/comm_nccl.c) needs beyond interp_check: every device
 * receives the messages of each sender in the order they were sent (NCCL has no tags).
 * MT_EUNSUPPORTED naming the pair where not. */
int interp_check_nccl(const struct plan *p, struct mt_err *e);
/* The plan's per-stage costs with the executor's measured-by-construction byte counts
 * (model/cost.h cost_stage_bytes_exec: fp32 activations, checkpoints, selective checkpoints,
 * the CFW and BW scratch, 16 bytes per parameter), so the simulator predicts the memory a run
 * will measure but for the p2p buffers in flight. Caller cost_model_fini()s. */
int interp_costs(const struct plan *p, struct cost_model *out, struct mt_err *e);
/* The simulation's all-to-all of device dev in one step of a MoE plan: the priced time (us)
 * and the bytes leaving the rank of the four exchanges of every MoE block and micro-batch it
 * runs (model/ops_build_moe.c's ep ops, in the cost model's dtype); 0 for a dense model. */
int interp_a2a_simulated(const struct plan *p, int dev, double *us, double *bytes,
                         struct mt_err *e);

/* Runs o->steps steps of the plan on this rank (o->steps / K runs of an asynchronous plan of
 * K iterations). Collective: every rank of cm calls it. A
 * local failure returns its error (the caller ends the job: the other ranks may be blocked
 * waiting for this one); a failure every rank learns of at a step's end (a non-finite loss)
 * returns MT_EINFEASIBLE on every rank, with the steps completed in *out. */
int interp_run(const struct plan *p, const struct backend_ops *b, struct comm *cm,
               struct capture *cap, const struct interp_opts *o, interp_progress_fn progress,
               void *ctx, struct interp_result *out, struct mt_err *e);
void interp_result_fini(struct interp_result *r);
/* The mean step time of a run, s: the first step (warm-up) left out when there are others. */
double interp_mean_step(const struct interp_result *r);

/* What `run --json` reports: the plan that ran, its backend and options, the result, the
 * simulation beside it (NULL: none), the trace written (NULL: none), the error (NULL: none),
 * and for a --lengths run the lengths file, its sample and the input-aware report (ir NULL
 * otherwise). */
struct sim_result;
struct seqlen_sample;
struct input_aware_report;
struct interp_report {
    const struct plan *plan;
    const char *backend;
    const struct interp_opts *o;
    const struct interp_result *r;
    const struct sim_result *sim;
    const char *trace, *error;
    const char *lengths;
    const struct seqlen_sample *smp;
    const struct input_aware_report *ir;
};
/* The report as JSON text, malloc'd (exec/run_json.c). */
char *interp_report_json(const struct interp_report *rep);

#endif
