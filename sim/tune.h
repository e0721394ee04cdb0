/* sim/tune.h: the schedule tuner (paper §5.3, Equation 1): a grid search over
 * checkpointing a in {off, on (Mario's passes), and with --search the schedule search under the
 * cap}, scheme b in the scheme table, pp over the
 * divisors of D (pp >= min_pp), dp = D / pp, micro-batch size in {1, 2, 4, ...} dividing
 * global / dp, and W's chunk count, each candidate simulated. A candidate whose simulated
 * peak on any device exceeds the cap scores 0 and is reported with the device and the bytes
 * over. Data parallelism enters through the simulator: the allreduce in the cool-down and
 * the dp efficiency coefficient. */
#ifndef MT_SIM_TUNE_H
#define MT_SIM_TUNE_H

#include <stdbool.h>

#include "model/config.h"

struct plan;
struct mt_err;

/* Applies checkpointing + Mario's passes to a baseline plan (sim/pass.h provides it). */
typedef int (*tune_optimize_fn)(const struct plan *in, struct plan **out, struct mt_err *e);
/* Progress: called from the calling thread with candidates done and the total; returns
 * whether to go on (false: the grid stops, keeping what was simulated). */
typedef bool (*tune_progress_fn)(void *ctx, int done, int total);

struct tune_opts {
    int min_pp;            /* smallest pipeline depth (paper: 4); clipped to D */
    int max_mbs;           /* largest micro-batch size tried (0 = no limit but the batch) */
    int max_chunks;        /* W chunk counts tried: 2 .. max_chunks (powers of two) */
    int threads;           /* worker threads; 0 = the machine's cores */
    bool with_ckpt_off;    /* try a = off */
    tune_optimize_fn optimize; /* a = on (Mario's passes); NULL skips it */
    tune_optimize_fn search;   /* a = search (the schedule search under the cap); NULL skips it */
    tune_progress_fn progress;
    void *progress_ctx;
};

/* TUNE_NOT_RUN: the grid was cancelled before this candidate was simulated. */
enum tune_status { TUNE_OK, TUNE_OOM, TUNE_INVALID, TUNE_NOT_RUN };

struct tune_candidate {
    enum scheme_id scheme;
    int pp, dp, mbs, chunks; /* chunks: W only, else 1 */
    bool ckpt;               /* checkpointing on: Mario's passes, or the search */
    bool search;             /* ... made by the schedule search (tune_optimize_search) */
    enum tune_status status;
    double step_time;        /* seconds (t under unit costs) */
    double throughput;       /* samples/s; 0 when out of memory or invalid */
    double lower_bound;      /* sim/bound.h bound_value of its plan: seconds (t); 0 none */
    double peak_mem;         /* max over devices */
    double min_peak_mem;     /* min over devices */
    int oom_device;          /* TUNE_OOM: the device furthest over the cap */
    double over_bytes;       /* TUNE_OOM: by how much */
    bool pareto;             /* on the throughput / peak-memory front */
    char why[256];           /* TUNE_INVALID: the reason */
};

struct tune_result {
    int n;
    struct tune_candidate *cand; /* in grid order */
    int best;                    /* index of the highest throughput, -1 if none fits */
    int done;                    /* candidates simulated (n unless cancelled) */
    bool cancelled;              /* the progress callback said stop: the rest are TUNE_NOT_RUN */
};

/* Mario on: the whole pass pipeline (sim/pass.h), its final plan. */
int tune_optimize_mario(const struct plan *in, struct plan **out, struct mt_err *e);
/* The search: the pass pipeline, then the schedule search (sim/search.h) under the cap of in's
 * config, its plan. */
int tune_optimize_search(const struct plan *in, struct plan **out, struct mt_err *e);
/* "off", "mario" or "search". */
const char *tune_ckpt_name(const struct tune_candidate *c);
/* min_pp 4, chunks up to 4, all cores, both a = off and a = on (tune_optimize_mario). */
void tune_opts_default(struct tune_opts *o);
/* "V-8-2" (scheme-pp-mbs, as the paper's Figure 11), "W-8-2x4" with chunks. */
void tune_label(const struct tune_candidate *c, char *buf, int n);
/* The whole grid as JSON text, malloc'd: `tune --json` (best, every candidate with its
 * status and why, the Pareto front of throughput and peak memory). */
char *tune_report_json(const struct tune_result *r);
/* The config of a candidate, made from base. */
void tune_candidate_config(const struct config *base, const struct tune_candidate *c,
                           struct config *out);
/* Enumerates and simulates the grid for base's devices, batch and cap. The result does not
 * depend on the thread count. MT_EINVAL when the grid is empty. When o->progress says stop,
 * returns MT_OK with what was done: out->cancelled, the candidates not simulated TUNE_NOT_RUN
 * (best and the Pareto front among those simulated). */
int tune_grid_search(const struct config *base, const struct tune_opts *o,
                     struct tune_result *out, struct mt_err *e);
/* Builds (and optimizes, for ckpt: o->optimize, or o->search for a search candidate) the plan
 * of a candidate. */
int tune_build_plan(const struct config *base, const struct tune_candidate *c,
                    const struct tune_opts *o, struct plan **out, struct mt_err *e);
void tune_result_fini(struct tune_result *r);

#endif
