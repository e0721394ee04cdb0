/* sim/search/search.h: schedule search under a memory budget (issue 18): which forwards to checkpoint
 * (the whole stage) and the order of every device's compute, to minimise the simulated step
 * with every device under the cap. The placement is the plan's; any scheme with one flushed
 * iteration (V, X, W, GPipe and the split-backward family: an RC before its B, a W anywhere
 * after its B). The method is memory-aware list scheduling plus local search: starts from the
 * given plans (the base and each step of Mario's passes), a repair of the base (the fewest
 * checkpoints that bring each device under the cap), list schedules and, for one stage per
 * device, periodic schedules (the shape of the memory-time bound's optimum); moves read off the
 * critical path (run an op earlier, fill a bubble with later ops, drop or add a checkpoint),
 * keep moves (a checkpointed forward kept, moved after the device's last other activation),
 * suffix moves and random kicks; a multi-start of randomised list schedules; and, when the
 * local search stalls, large-neighbourhood moves: the ops of a few micro-batches re-placed on
 * every device together by search_exact's branch and bound in bounded nodes. Every schedule is
 * evaluated by a compact timeline that gives the simulator's figures, and what is kept is
 * checked with sim_run, so the result is never worse than the best starting plan under the
 * cap. docs/search.md says why this method.
 *
 * search_exact is branch and bound over the same schedules for small cases (the test oracle):
 * every device's order built in order of start time, pruned with the lower bound's reasoning
 * (heads, tails, the work left on each device). */
#ifndef MT_SIM_SEARCH_H
#define MT_SIM_SEARCH_H

#include <stdbool.h>

struct plan;
struct sim_result;
struct mt_err;

struct search_opts {
    double cap;     /* memory cap per device, static included: bytes (M_θ under unit costs);
                     * 0 = none */
    long budget;    /* schedules the local search evaluates; 0 = search_budget_default */
    unsigned seed;  /* the kicks' random stream (the result depends on it, not on the clock) */
    bool quick;     /* budget 0: search_budget_default without its small-case boost (6e6 / n,
                     * at most 40,000): for callers that run many searches (the tuner) */
    /* Called about every SEARCH_PROGRESS_EVERY evaluations of a plan of 512 ops, as often
     * for the same work on larger plans (each evaluation at 400,000 ops: a plan's evaluation
     * costs in proportion to its ops), and once at the end with done =
     * budget: how far the search is (evaluations so far, of budget: the one it runs to).
     * Returns false to stop it: it then ends as if its budget were spent, with the best
     * schedule found so far, checked like any result (st->stopped). NULL: none. The result
     * does not depend on it unless it stops the search. */
    bool (*progress)(void *ctx, long done, long budget);
    void *progress_ctx;
    /* Offload (issue 29): the pipeline's search step then runs the offload search after the
     * schedule search (sim/search/search_offload.h, pass_pipeline_search): keep, checkpoint
     * or offload per forward, with its own budget (budget, quick) and progress. */
    bool offload;
};

#define SEARCH_PROGRESS_EVERY 256

struct search_stats {
    int seeds;          /* starting plans that fit the cap */
    long evals;         /* schedules evaluated */
    int improvements;   /* moves kept */
    double seed_step;   /* the best starting plan's step under the cap (us; t); 0 none fit */
    char seed_name[32]; /* the start the result grew from */
    bool fits;          /* the result is under the cap */
    bool improved;      /* faster than every starting plan */
    bool stopped;       /* its progress callback stopped it before its budget was spent */
};

/* cap = c's memory_per_device, budget 0 (the default), seed 18, not quick, no progress
 * callback. */
struct config;
void search_opts_default(struct search_opts *o, const struct config *c);
/* The evaluations a search of n compute ops gets by default: 6e6 / n (about the same time
 * whatever n: 8 x 16 in tens of ms), 512 / n times more below 512 ops (small cases, held to
 * within 2 % of the exact optimum: up to a tenth of a second), between 4,000 (32 devices x 64
 * micro-batches stay under a second) and 400,000. */
long search_budget_default(int n_ops);
/* The evaluations a search of n_ops ops runs to under o: o->budget, else the default (its quick
 * form when o->quick); the offload search's too (sim/search/search_offload.h). */
long search_budget(const struct search_opts *o, int n_ops);

/* Searches the work of seeds[0] (every seed must be a plan of the same work: the base and its
 * rewrites). names[i] labels seed i in the stats (may be NULL). *out is a new plan, owned by the
 * caller: the searched one, or the best seed when nothing beat it, or, when no seed fits the
 * cap and the search found nothing that does, the seed of lowest peak (st->fits false).
 * out_sim (may be NULL) receives its simulation. MT_EUNSUPPORTED for asynchronous schemes;
 * errors of simulating the seeds. */
int search_run(const struct plan *const *seeds, const char *const *names, int n,
               const struct search_opts *o, struct plan **out, struct sim_result *out_sim,
               struct search_stats *st, struct mt_err *e);

struct search_exact_result {
    bool finished;  /* the whole tree was searched: best is optimal among the schedules that
                     * keep each stage's micro-batch order (forwards, backwards) */
    bool found;     /* a schedule under the cap (faster than ub when one was given) */
    double best;    /* its step (us; t) */
    long nodes;     /* nodes visited */
};

/* Branch and bound over every schedule of base's work under o->cap (budget: the node limit;
 * 0 = 2,000,000), each stage's forwards and backwards kept in micro-batch order. ub: a step
 * known to be reachable (0 = none): only a strictly faster schedule is then looked for, so
 * finished without found means ub is the optimum. *out (may be NULL) receives the best plan
 * found. */
int search_exact(const struct plan *base, const struct search_opts *o, double ub,
                 struct plan **out, struct search_exact_result *res, struct mt_err *e);

#endif
