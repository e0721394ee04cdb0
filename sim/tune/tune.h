/* sim/tune/tune.h: the schedule tuner (paper §5.3, Equation 1): a grid search over
 * checkpointing a in {off, on (Mario's passes), and with --search the schedule search under the
 * cap}, scheme b in the scheme table, the tensor-parallel degree tp in {1, 2, 4, 8} dividing
 * the node's GPUs and the D GPUs, pp over the divisors of D / tp (pp >= min_pp), dp =
 * D / (tp pp), micro-batch size in {1, 2, 4, ...} dividing global / dp, W's chunk count,
 * sequence parallelism off/on where tp > 1 and the distributed optimizer off/on where dp > 1
 * (issue 41: they change the best plan), for a mixture of experts ep and etp
 * (tune_expert_pairs, issue 38), each candidate simulated. A dimension given (tune_opts:
 * tp, pp, dp, mbs, chunks, sp, distopt, ep, etp) is pinned to that value. A candidate whose simulated
 * peak on any device exceeds the cap scores 0 and is reported with the device and the bytes
 * over. Data parallelism enters through the simulator: the allreduce in the cool-down and
 * the dp efficiency coefficient. */
#ifndef MT_SIM_TUNE_H
#define MT_SIM_TUNE_H

#include <stdbool.h>

#include "model/config.h"

struct plan;
struct mt_err;
struct pass_watch;

/* Applies checkpointing + Mario's passes to a baseline plan (sim/passes/pass.h provides it). w
 * (may be NULL) watches the passes and the search: when it says stop, the function gives up
 * (MT_ETIMEOUT) within a pass or a slice of the search. */
typedef int (*tune_optimize_fn)(const struct plan *in, const struct pass_watch *w,
                                struct plan **out, struct mt_err *e);
/* Progress: called from the calling thread with candidates done and the total, between its
 * candidates and inside them (between passes, during a search); returns whether to go on
 * (false: the grid stops, keeping what was simulated: the candidates in flight on every thread
 * give up within a pass and are not run). */
typedef bool (*tune_progress_fn)(void *ctx, int done, int total);

/* An on/off dimension: searched (both), or pinned. */
enum tune_switch { TUNE_BOTH, TUNE_OFF, TUNE_ON };

struct tune_opts {
    int min_pp;            /* smallest pipeline depth (paper: 4); clipped to D */
    int max_mbs;           /* largest micro-batch size tried (0 = no limit but the batch) */
    int max_chunks;        /* W chunk counts tried: 2 .. max_chunks (powers of two) */
    int threads;           /* worker threads; 0 = the machine's cores */
    unsigned schemes;      /* bit (1u << scheme_id) per scheme kept; 0 = every one the tuner
                            * tries (tune_scheme_tried) */
    int tp;                /* the tensor-parallel degree kept; 0 = 1, 2, 4, 8 dividing
                            * cluster.gpus_per_node and the GPUs (the config's under unit costs
                            * or a calibration) */
    int pp, dp, mbs;       /* the pipeline depth, data-parallel degree, micro-batch size kept;
                            * 0 = searched (pp from min_pp) */
    int chunks;            /* W's and ZB-W's chunk count kept; 0 = 2 .. max_chunks */
    enum tune_switch sp;   /* sequence parallelism (only where tp > 1); TUNE_BOTH: both, but
                            * on only when the config says sequence_parallel */
    enum tune_switch distopt; /* the distributed optimizer (only where dp > 1 and the config
                               * does not fix bytes_per_param); TUNE_BOTH likewise */
    bool with_ckpt_off;    /* try a = off */
    bool exhaustive;       /* search every search candidate: no pruning by the bound */
    tune_optimize_fn optimize; /* a = on (Mario's passes); NULL skips it */
    tune_optimize_fn search;   /* a = search (the schedule search under the cap); NULL skips it */
    bool offload;              /* the search may offload forwards (tune_optimize_search_offload):
                                * the bounds that prune it drop their memory part */
    tune_progress_fn progress;
    void *progress_ctx;
    bool search_split;     /* after the grid, the best TUNE_SPLIT_TRIES candidates of one
                            * stage split each searched for a balanced split of the layers
                            * (sim/tune/tune_split.h) and simulated with it: a new candidate
                            * (label -split) where the split differs */
    int max_cp;            /* context-parallel degrees tried: 1, 2, 4, ... max_cp where the GPUs
                            * and the sequence (2 cp chunks) allow; 0 or 1 = the config's
                            * cluster.cp alone */
    int ep, etp;           /* a mixture of experts: the expert-parallel and expert tensor-
                            * parallel degrees kept; 0 = searched (tune_expert_pairs) */
    int max_ep;            /* the largest ep tried; 0 = the expert count */
};

/* TUNE_NOT_RUN: the grid was cancelled before this candidate was simulated. TUNE_PRUNED: a
 * search candidate whose bound (sim/core/bound.h, under the cap) is no better than an iteration
 * time already found: its search cannot win, so it did not run (why says so). */
enum tune_status { TUNE_OK, TUNE_OOM, TUNE_INVALID, TUNE_NOT_RUN, TUNE_PRUNED };

struct tune_candidate {
    enum scheme_id scheme;
    int pp, dp, mbs, chunks; /* chunks: W only, else 1 */
    int tp;                  /* tensor-parallel degree (cluster.tp) */
    bool sp, distopt;        /* sequence parallelism, the distributed optimizer */
    bool ckpt;               /* checkpointing on: Mario's passes, or the search */
    bool search;             /* ... made by the schedule search (tune_optimize_search) */
    enum tune_status status;
    double step_time;        /* seconds (t under unit costs): the simulated step of one
                              * pipeline replica (its G / dp samples) */
    double iter_time;        /* seconds (t) per iteration of the global batch, every dp replica
                              * and dp's efficiency counted: G / (samples/s) even when over the
                              * cap, so it compares across dp; 0 when not simulated */
    double throughput;       /* samples/s; 0 when out of memory or invalid */
    double lower_bound;      /* sim/core/bound.h bound_value of its plan: seconds (t); 0 none */
    double peak_mem;         /* max over devices */
    double min_peak_mem;     /* min over devices */
    int oom_device;          /* TUNE_OOM: the device furthest over the cap */
    double over_bytes;       /* TUNE_OOM: by how much */
    bool pareto;             /* on the throughput / peak-memory front */
    int cp;                  /* context-parallel degree (cluster.cp); 0 = the config's */
    const char *layout;      /* the split search's layers (Megatron's layout string, into
                              * pipeline_layout), held by the result; NULL: the config's */
    int ep, etp;             /* expert degrees (cluster.ep, cluster.etp); 0 = the config's
                              * (a dense model) */
    char why[256];           /* TUNE_INVALID: the reason */
};

struct tune_result {
    int n;
    struct tune_candidate *cand; /* in grid order */
    int best;                    /* index of the highest throughput (ties: the lower peak, then
                                  * grid order), -1 if none fits */
    int done;                    /* candidates simulated (n unless cancelled) */
    bool cancelled;              /* the progress callback said stop: the rest are TUNE_NOT_RUN */
    int seq_length;              /* the base config's tokens per sample */
    char (*layouts)[CONFIG_LAYOUT_MAX]; /* the split search's strings (candidates' layout) */
    int n_layouts;
    char split_note[256];        /* the split search: why a candidate was not split ("" none) */
};

/* how many of the best candidates the split search tries (tune_opts.search_split) */
#define TUNE_SPLIT_TRIES 3

/* Mario on: the whole pass pipeline (sim/passes/pass.h), its final plan. */
int tune_optimize_mario(const struct plan *in, const struct pass_watch *w, struct plan **out,
                        struct mt_err *e);
/* The search: the pass pipeline, then the schedule search (sim/search/search.h) under the cap of in's
 * config, its plan. */
int tune_optimize_search(const struct plan *in, const struct pass_watch *w, struct plan **out,
                         struct mt_err *e);
/* The same search, allowed to offload forwards to host memory (OF/RL, sim/search/search.h). */
int tune_optimize_search_offload(const struct plan *in, const struct pass_watch *w,
                                 struct plan **out, struct mt_err *e);
/* Whether the grid tries scheme s: the synchronous schemes of the scheme table. */
bool tune_scheme_tried(enum scheme_id s);
/* "V, X, W, GPipe, ..." (the schemes tune_scheme_tried accepts, in table order) into buf. */
void tune_scheme_names(char *buf, int n);
/* A comma-separated list of scheme names ("V,ZB-V,DualPipeV", config_scheme_parse's
 * spellings) into a mask of (1u << id) bits. MT_EINVAL naming the bad name. */
int tune_schemes_parse(const char *list, unsigned *mask, struct mt_err *e);
/* "off", "mario" or "search". */
const char *tune_ckpt_name(const struct tune_candidate *c);
/* min_pp 4, chunks up to 4, all cores, both a = off and a = on (tune_optimize_mario). */
void tune_opts_default(struct tune_opts *o);
/* "V-8-2" (scheme-pp-mbs, as the paper's Figure 11), "W-8-2x4" with chunks, "-t2" after it
 * when tp > 1 ("V-8-2-t2"), "-e64" with expert parallelism ep > 1 and "-et1" where etp is not
 * tp ("V-8-2-t2-e64-et1"), then "-sp" with sequence parallelism and "-do" with the distributed
 * optimizer ("V-8-2-t2-sp-do"), "-split" with the split search's layers. */
void tune_label(const struct tune_candidate *c, char *buf, int n);
/* The whole grid as JSON text, malloc'd: `tune --json` (best, every candidate with its
 * status and why, the Pareto front of throughput and peak memory). */
char *tune_report_json(const struct tune_result *r);
/* Rows of candidates (`simulate --scheme A,B,...`: one per scheme) as a JSON array, malloc'd:
 * scheme, step_time, throughput, peak_memory, lower_bound (null: none), fits, or error (the
 * why of a TUNE_INVALID row); best: whether it is rows[best]. */
char *tune_rows_json(const struct tune_candidate *rows, int n, int best);
/* The config of a candidate, made from base. */
void tune_candidate_config(const struct config *base, const struct tune_candidate *c,
                           struct config *out);
/* Enumerates and simulates the grid for base's devices, batch and cap: first the candidates
 * without the search (off and mario share each baseline plan), then the searches, best bound
 * first, each pruned (TUNE_PRUNED) when its bound under the cap, per iteration of the global
 * batch, is no better than the best iteration time found before it (unless o->exhaustive):
 * the same best and ranking of the rest as searching them all. The result does not depend on
 * the thread count. MT_EINVAL when the grid is empty. When o->progress says stop,
 * returns MT_OK with what was done: out->cancelled, the candidates not simulated TUNE_NOT_RUN
 * (best and the Pareto front among those simulated). */
int tune_grid_search(const struct config *base, const struct tune_opts *o,
                     struct tune_result *out, struct mt_err *e);
/* Builds (and optimizes, for ckpt: o->optimize, or o->search for a search candidate) the plan
 * of a candidate. */
int tune_build_plan(const struct config *base, const struct tune_candidate *c,
                    const struct tune_opts *o, struct plan **out, struct mt_err *e);
/* Whether a ranks above b: fits before not, then the higher throughput, then the lower peak
 * (equal throughputs are ties broken by memory). Neither above the other: grid order. */
bool tune_ranks_above(const struct tune_candidate *a, const struct tune_candidate *b);
/* Candidate indices in rank order into order (r->n of them): those that fit by
 * tune_ranks_above, then the rest in grid order. Returns r->n. */
int tune_rank(const struct tune_result *r, int *order);
/* Sets r->best and each candidate's pareto from the simulated figures: the front of
 * (throughput up, peak down) among those that fit, exact: b dominates a when b is no worse in
 * both and better in one (equal throughput and a lower peak dominates); equal in both, both
 * stay. Throughputs equal to float rounding (1e-9 relative) are equal, in the rank too. tune_grid_search calls it; exposed for tests. */
void tune_decide(struct tune_result *r);
void tune_result_fini(struct tune_result *r);

/* The expert degrees of one candidate (sim/tune/tune_expert.c). */
struct tune_expert_pair {
    int ep, etp;
};
#define TUNE_MAX_EXPERT_PAIRS 1024
/* The (ep, etp) pairs a candidate of tp x cp x dp GPUs a stage tries (at most max), etp first
 * (tp, then 1; each where it splits the expert width; tp's other divisors only given as
 * o->etp), ep ascending: a dense model one,
 * {0, 0} (the config's degrees); a MoE model each ep dividing the experts (o->ep alone when
 * given, up to o->max_ep) and each etp (o->etp alone when given) whose ep x etp divides
 * tp x cp x dp (model/moe.h's fold). Pinned degrees the fold does not take: that one pair
 * (the candidate's validation says why). Returns the count (>= 1). */
int tune_expert_pairs(const struct config *base, const struct tune_opts *o, int tp, int cp,
                      int dp, struct tune_expert_pair *out, int max);

#endif
