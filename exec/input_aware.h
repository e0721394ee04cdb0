/* exec/input_aware.h: the executor's side of input-aware checkpointing (issue 12; Mimose,
 * arXiv:2209.02478, on Mario's plans; docs/design.md "Input-aware checkpointing"): a stream of
 * variable-length batches for exec/interp.h, one training step per length of a lengths file,
 * each step's checkpointing chosen by a strategy, the online memory predictor fitted from what
 * the ranks measure, and the report of `mario-tui run --lengths FILE`. */
#ifndef MT_EXEC_INPUT_AWARE_H
#define MT_EXEC_INPUT_AWARE_H

#include <stdbool.h>

struct config;
struct plan;
struct comm;
struct seqlen_sample;
struct interp_result;
struct interp_stream;
struct mt_err;

enum input_aware_strategy {
    INPUT_AWARE_FULL,   /* (a) every layer of every stage checkpointed, every batch */
    INPUT_AWARE_STATIC, /* (b) one choice, planned for the longest batch, every batch */
    INPUT_AWARE_PLANS,  /* (c) the plan cache's choice for each batch's length bucket */
};

#define INPUT_AWARE_FIT_BATCHES 10

struct input_aware_opts {
    enum input_aware_strategy strategy;
    int width;       /* bucket width, tokens (plan-inputs' --bucket) */
    int fit_batches; /* batches measured (under full checkpointing) before the predictor plans */
    int steps;       /* batches: the lengths in file order, wrapping around */
};

/* The stream. Batch i is one training step whose micro-batches all have lengths[i mod n]
 * tokens per sample. The first fit_batches batches run full checkpointing whatever the
 * strategy, and every rank measures per stage what its forwards keep, one layer's block, the
 * checkpoint, the CFW's and BW's scratch, the buffers between instructions (exec/interp.h
 * struct interp_measure). After the last of them the ranks exchange these (a collective) and
 * each fits the same predictor (model/memfit.h: a quadratic in s per quantity and stage; the
 * buffers between instructions as the most held at once on each device, plus one, times a
 * hidden state);
 * from then on plans come from the predictor: (b) one choice for the longest length, (c) the
 * cache's (sim/inputs/ckpt_plan.h, greedy) for each batch's bucket, made at its longest length. Every
 * rank computes every decision from the same file and the same exchanged figures, so all switch
 * plans at the same batch. Opaque: owns the planner, the cache, the plans, the lengths. */
struct input_aware;

/* c: the run's config with its lengths file applied (model/seqlen.h seqlen_config_use_file:
 * model.seq_length the longest); lengths: the file's batches (copied). Builds the planner (the
 * config's plan after Mario's passes at the longest length, every forward checkpointed) and
 * checks with the executor's exact bytes (model/cost.h cost_stage_bytes_exec) that full
 * checkpointing fits the cap at the longest batch: MT_EINVAL naming the length and the bytes
 * over. Errors of ckpt_plan_new. Runs on the launcher (to fail early) and on every rank. */
int input_aware_new(const struct config *c, const struct seqlen_sample *lengths,
                    const struct input_aware_opts *o, struct input_aware **out, struct mt_err *e);
void input_aware_free(struct input_aware *ia);
/* The run's plan for interp_run: every forward checkpointed, at the longest length. */
const struct plan *input_aware_plan(const struct input_aware *ia);
/* Fills *out for interp_opts.stream. cm: the run's communicator, for the exchange after the
 * fit batches (each new plan is checked against its size, interp_check). */
void input_aware_stream(struct input_aware *ia, struct comm *cm, struct interp_stream *out);

/* One rank's figures over the run. */
struct input_aware_device {
    int rank, dev;
    double peak_bytes;     /* the most any batch held */
    int over_cap;          /* batches whose measured peak exceeded the cap */
    int predicted;         /* batches after the fit whose peak the predictor predicted */
    double err_max;        /* largest |predicted - measured| / measured peak over those */
    double err_mean;       /* mean of the same */
    double under_max;      /* largest (measured - predicted) / measured, 0 if never under */
    int p2p_buffers;       /* buffers between instructions the predictor reserves room for:
                            * the most held at once in the fit batches, plus one */
};

struct input_aware_report {
    enum input_aware_strategy strategy;
    int batches, fit_batches, width, max_len;
    double cap;
    long switches;               /* batches whose checkpointing differs from the previous one's */
    long hits, misses;           /* the plan cache's (c), 0 otherwise */
    int fallbacks;               /* batches no choice fitted under the predictor: they ran full
                                  * checkpointing */
    double plan_ms_mean, plan_ms_max;
    int stages;
    int *k_static;               /* [stages] (b)'s choice; NULL otherwise */
    int ranks;
    struct input_aware_device *dev; /* [ranks], on rank 0 */
    double peak_bytes;           /* the highest device peak */
    int over_cap;                /* batches over the cap on some device (sum over devices) */
    double err_max, err_mean;    /* over devices */
};

/* Collective after the run: rank 0 receives every rank's figures. */
int input_aware_gather(struct input_aware *ia, struct comm *cm, struct input_aware_report *out,
                       struct mt_err *e);
void input_aware_report_fini(struct input_aware_report *r);
const char *input_aware_strategy_name(enum input_aware_strategy s);

/* --lengths: samples and tokens per second over a run of one step per length of smp (the
 * slowest rank's step times). */
void input_aware_rates(const struct plan *p, const struct seqlen_sample *smp,
                       const struct interp_result *r, double *samples_s, double *tokens_s);

#endif
