/* sim/inputs/ckpt_plan.h: input-aware checkpointing (Mimose, arXiv:2209.02478) on Mario's plans
 * (docs/design.md "Input-aware checkpointing"): for a sequence length s and the memory cap, how
 * many layers each stage's forwards checkpoint (k of n: a CFW keeps the checkpoint and the
 * other n - k layers' activations, its RC recomputes the k) so that every device fits with
 * the least recompute; a greedy planner as Mimose's, an exact search to check it, a cache of
 * plans by length bucket, and the report `mario-tui plan-inputs` prints. */
#ifndef MT_SIM_CKPT_PLAN_H
#define MT_SIM_CKPT_PLAN_H

#include <stdbool.h>

struct config;
struct plan;
struct cost_model;
struct sim_result;
struct seqlen_sample;
struct mt_err;

enum ckpt_plan_algo {
    CKPT_PLAN_GREEDY, /* Mimose: layers by bytes saved per recompute time, then pruned */
    CKPT_PLAN_EXACT,  /* every minimal fitting choice simulated (where small enough) */
};

/* Exact search bounds: choices enumerated per group of coupled stages, combinations across
 * groups considered, and combinations simulated (after a busy-time bound prunes). */
#define CKPT_PLAN_EXACT_MAX_GROUP 200000
#define CKPT_PLAN_EXACT_MAX_COMBOS 5000000L
#define CKPT_PLAN_EXACT_MAX_SIMS 20000

/* The planner of one config: the template (the config's plan after Mario's four passes, every
 * forward checkpointed) and its memory profile: for every device, the counts of checkpointed
 * and full activations in flight at each point where its memory may peak. The instruction
 * order is fixed; a choice of k only changes what a CFW keeps and how long its RC takes, so
 * the peak of any choice at any length is a small max over those points, the same number the
 * simulator's memory walk gives. Opaque: owns the template and the profile. */
struct ckpt_plan;

/* Builds the planner of c (a synchronous scheme, not unit costs): the template is made at
 * length template_len (0: c->model.seq_length, the longest). The cap is c->memory_per_device
 * (0: the device's memory). Errors: those of building and optimizing c's plan;
 * MT_EUNSUPPORTED for unit costs or an asynchronous scheme. */
int ckpt_plan_new(const struct config *c, int template_len, struct ckpt_plan **out,
                  struct mt_err *e);
void ckpt_plan_free(struct ckpt_plan *cp);

const struct plan *ckpt_plan_template(const struct ckpt_plan *cp);
const struct config *ckpt_plan_config(const struct ckpt_plan *cp);
int ckpt_plan_stages(const struct ckpt_plan *cp);
int ckpt_plan_devices(const struct ckpt_plan *cp);
/* Transformer blocks of stage i and the global index of its first. */
int ckpt_plan_stage_layers(const struct ckpt_plan *cp, int stage);
int ckpt_plan_first_layer(const struct ckpt_plan *cp, int stage);
double ckpt_plan_cap(const struct ckpt_plan *cp);

/* A memory model other than the analytic one: called on the costs at length s, it replaces
 * the byte figures of every stage (act, ckpt, layer_act, static_bytes) with measured or
 * predicted ones (the executor's exact bytes, the online predictor of model/memfit.h). */
typedef void (*ckpt_plan_bytes_fn)(int s, struct cost_model *cost, void *ctx);
/* Installs fn (NULL: the analytic bytes again) for every later solve, peak and simulation. */
void ckpt_plan_set_bytes(struct ckpt_plan *cp, ckpt_plan_bytes_fn fn, void *ctx);

/* The per-stage costs at length s: the config with model.seq_length = s (bytes from the
 * installed memory model). */
int ckpt_plan_costs(const struct ckpt_plan *cp, int s, struct cost_model *out, struct mt_err *e);
/* Peak memory (static + activations, bytes) of every device for the choice k[stages] under
 * cost: peak[devices]. Equal to what sim_run reports for ckpt_plan_apply's plan. */
void ckpt_plan_peaks(const struct ckpt_plan *cp, const struct cost_model *cost, const int *k,
                     double *peak);

/* What a solve found. */
struct ckpt_plan_solution {
    int s;             /* the length planned */
    double peak_bytes; /* highest device peak of the choice */
    int peak_device;
    double rc_us;     /* recompute time of one iteration on the busiest device */
    double step_time; /* exact: simulated step time (us) of the choice; greedy: 0 */
    long sims;        /* exact: combinations simulated */
    long combos;      /* exact: combinations of minimal choices */
};

/* The choice for length s: k[stages] receives the layers each stage checkpoints, 0 (none:
 * its forwards keep everything) to num_layers (the whole stage, today's CFW). The layers are
 * a stage's first k (the checkpoint is the stage input). MT_EINVAL when even checkpointing
 * every layer leaves a device over the cap: the message names s, the device and the bytes over;
 * exact: MT_EUNSUPPORTED when the search is over the bounds above. */
int ckpt_plan_solve(const struct ckpt_plan *cp, int s, enum ckpt_plan_algo algo, int *k,
                    struct ckpt_plan_solution *sol, struct mt_err *e);
/* The template with choice k, its config at length s: CFW/RC carry ckpt_layers = k (0 for the
 * whole stage); a stage with k = 0 has FW and no RC. Caller plan_free()s. */
struct plan *ckpt_plan_apply(const struct ckpt_plan *cp, int s, const int *k);
/* Simulates ckpt_plan_apply(cp, s, k). out: caller sim_result_fini()s. */
int ckpt_plan_simulate(const struct ckpt_plan *cp, int s, const int *k, struct sim_result *out,
                       struct mt_err *e);
/* The choices of the two baselines: every layer (full checkpointing, k = n), none (k = 0). */
void ckpt_plan_all(const struct ckpt_plan *cp, int *k);

/* ---- the plan cache, keyed by length bucket (model/seqlen.h) -------------------------------- */

struct ckpt_plan_entry {
    int bucket; /* lengths ((bucket-1)w, bucket w] */
    int s;      /* the length planned: the bucket's longest (at most max_len) */
    int *k;     /* [stages] */
    double peak_bytes;
    int peak_device;
};

struct ckpt_plan_stats {
    long hits, misses;
    long switches; /* gets whose choice differs from the previous get's: plan switches a
                    * stream of batches makes */
    double plan_ms_total, plan_ms_max; /* planning time of the misses (solve + entry) */
};

struct ckpt_plan_cache;

/* A cache over cp (borrowed: it must outlive the cache) for buckets of width tokens, plans
 * made for at most max_len tokens (lengths above it are refused), with algo. */
struct ckpt_plan_cache *ckpt_plan_cache_new(const struct ckpt_plan *cp, int width, int max_len,
                                            enum ckpt_plan_algo algo);
void ckpt_plan_cache_free(struct ckpt_plan_cache *pc);
/* The plan for a batch of s tokens: the cached one of s's bucket (a hit) or a new one (a miss,
 * timed). *out is valid until the cache is freed. Errors: ckpt_plan_solve's; MT_EINVAL for
 * s < 1 or s > max_len. */
int ckpt_plan_cache_get(struct ckpt_plan_cache *pc, int s, const struct ckpt_plan_entry **out,
                        struct mt_err *e);
const struct ckpt_plan_stats *ckpt_plan_cache_stats(const struct ckpt_plan_cache *pc);

/* ---- the report of `mario-tui plan-inputs`: buckets, three strategies ---------------------- */

enum ckpt_plan_strategy {
    CKPT_PLAN_FULL,        /* (a) every layer of every stage checkpointed, at every length */
    CKPT_PLAN_STATIC,      /* (b) one choice, made for the longest batch, at every length */
    CKPT_PLAN_INPUT_AWARE, /* (c) the cache's choice for each batch's bucket */
    CKPT_PLAN__STRATEGIES
};

struct ckpt_plan_bucket {
    int bucket, lo, s; /* lengths (lo, s] planned at s (its batches are padded to s) */
    double weight;     /* batches (or weight) of the sample in it */
    int *k;            /* [stages] input-aware choice */
    double peak[CKPT_PLAN__STRATEGIES];      /* bytes, the highest device */
    double step_time[CKPT_PLAN__STRATEGIES]; /* us, simulated */
    double exposed_rc; /* input-aware step time minus the step without recompute, us */
    double exact_step; /* exact planner's step time (us), 0 when not searched */
    bool exact_done;
};

struct ckpt_plan_report {
    int stages;
    int width;                                /* bucket width, tokens */
    int n;                                    /* buckets with weight */
    struct ckpt_plan_bucket *b;               /* [n], by length */
    int *k_static;                            /* [stages] the choice for the longest batch */
    int *k_full;                              /* [stages] every layer */
    double samples;                           /* samples per iteration (dp included) */
    double throughput[CKPT_PLAN__STRATEGIES]; /* expected samples/s over the sample */
    struct ckpt_plan_stats cache; /* the sample replayed through the cache in its order */
    double setup_ms;              /* template and profile (ckpt_plan_new), if the caller set it */
    int exact_buckets;            /* buckets where the exact search ran */
    double gap_max, gap_mean;     /* greedy vs exact step time, relative (0 = equal) */
};

/* Plans every bucket of the sample's lengths with algo (through a cache, replaying the sample
 * in order), simulates the three strategies at each bucket's length, and with exact also the
 * exact planner where it is small enough (over the bounds: not searched, not an error).
 * Expected throughput: samples per iteration x total weight / sum over the sample of
 * weight x step time of its bucket. Errors: a length over the planner's lengths, a cap no
 * choice meets at the longest bucket (MT_EINVAL naming it), simulation errors. */
int ckpt_plan_report_build(const struct ckpt_plan *cp, const struct seqlen_sample *lengths,
                           int width, bool exact, struct ckpt_plan_report *out, struct mt_err *e);
void ckpt_plan_report_fini(struct ckpt_plan_report *r);

/* The report as JSON text, malloc'd (`plan-inputs --json`): the config, the lengths (smp,
 * read from src), each bucket's layers checkpointed per stage with its peak, step time and
 * throughput beside full checkpointing and the static plan, the plan cache's figures and,
 * with exact, greedy against the exact search. */
char *ckpt_plan_report_json(const struct ckpt_plan *cp, const struct ckpt_plan_report *r,
                            const struct seqlen_sample *smp, const char *src, bool exact);

#endif
