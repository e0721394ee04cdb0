/* bench/bench_search.c: the schedule search (sim/search/search.h) against its speed goals (issue 18):
 * <= 50 ms for 8 devices x 16 micro-batches (interactive in the explorer), <= 1 s for 32 x 64.
 * Each case runs Mario's passes (the search's starts), then the search at the cap, and prints
 * the median search time (wall, and the process's CPU time: other work on the machine skews
 * the first), the steps of the passes and of the search, and the lower bound.
 * Cases: 1F1B (V) 8 x 16 with unit costs at 1.05 and 2.05 M_θ; GPT3-13B Chimera (X) 32 x 64
 * (the paper's §5.2 case, analytic costs) at the passes' own peak; 1F1B 32 x 64 with unit costs
 * at 2.05 M_θ (at 32 devices the passes' checkpoints alone take 1.14 M_θ on device 0). Usage:
 * bench_search [RUNS [CASE]] (RUNS default 5; CASE 1-4 runs that case alone, e.g. under
 * callgrind). */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>

#include "bench/bench.h"
#include "model/config.h"
#include "model/cost.h"
#include "model/presets.h"
#include "sim/core/bound.h"
#include "sim/passes/pass.h"
#include "sim/plan/plan.h"
#include "sim/schemes/scheme.h"
#include "sim/search/search.h"
#include "sim/core/simulate.h"
#include "util/err.h"
#include "util/xalloc.h"

struct bench_case {
    const char *name;
    const char *model; /* NULL: unit costs */
    enum scheme_id scheme;
    int D, N;
    double cap; /* M_θ under unit costs; 0: the passes' peak */
    double goal_ms;
};

static int bench_one(const struct bench_case *k, int runs)
{
    struct config c;
    struct mt_err e = {0};
    config_default(&c);
    c.scheme = k->scheme;
    c.num_device = k->D;
    c.num_microbatches = k->N;
    if (k->model) {
        presets_model(k->model, &c.model, &e);
        c.micro_batch_size = 2;
        c.global_batch_size = 2 * k->N;
    } else {
        c.unit.enabled = true;
        c.unit.f = 1;
        c.unit.b = 2;
        c.unit.rc = 1;
    }
    struct plan *base = NULL;
    struct pass_pipeline pl;
    if (scheme_build(&c, &base, &e) != MT_OK || pass_pipeline_run(base, &pl, &e) != MT_OK) {
        fprintf(stderr, "bench_search: %s: %s\n", k->name, e.msg);
        return 1;
    }
    const struct pass_step *fin = pass_pipeline_final(&pl);
    struct search_opts o;
    search_opts_default(&o, &c);
    o.cap = k->cap > 0 ? k->cap : pass_sim_peak_max(&fin->sim);
    const struct plan *seeds[2 + 3 * PASS_MAX_ROUNDS];
    const char *names[2 + 3 * PASS_MAX_ROUNDS];
    for (int i = 0; i < pl.n; i++) {
        seeds[i] = pl.step[i].plan;
        names[i] = pl.step[i].name;
    }
    double *t = xmalloc((size_t)runs * sizeof(double)), step = 0;
    double *cpu = xmalloc((size_t)runs * sizeof(double));
    struct search_stats st = {0};
    for (int r = 0; r < runs; r++) {
        struct plan *out = NULL;
        struct sim_result sim;
        double t0 = bench_now_ms();
        double c0 = bench_cpu_ms();
        if (search_run(seeds, names, pl.n, &o, &out, &sim, &st, &e) != MT_OK) {
            fprintf(stderr, "bench_search: %s: %s\n", k->name, e.msg);
            return 1;
        }
        t[r] = bench_now_ms() - t0;
        cpu[r] = bench_cpu_ms() - c0;
        step = sim.step_time;
        sim_result_fini(&sim);
        plan_free(out);
    }
    struct bound_result b;
    struct cost_model cost;
    scheme_costs(&c, &cost, &e);
    bound_compute(base, &cost, o.cap, &b, &e);
    cost_model_fini(&cost);
    double med = bench_median(t, runs), lb = bound_value(&b, st.fits);
    double u = k->model ? 1e-3 : 1; /* ms or t */
    printf("%-44s %8.1f ms (goal %4.0f; cpu %.1f ms)  passes %.6g  search %.6g  bound %.6g "
           "(gap %.1f%%)  %ld evals\n", k->name, med, k->goal_ms, bench_median(cpu, runs),
           fin->sim.step_time * u, step * u, lb * u, bound_gap_pct(step, lb), st.evals);
    free(t);
    free(cpu);
    pass_pipeline_fini(&pl);
    plan_free(base);
    return 0;
}

int main(int argc, char **argv)
{
    int runs = argc > 1 ? atoi(argv[1]) : 5, only = argc > 2 ? atoi(argv[2]) : 0;
    if (runs < 1)
        runs = 1;
    xalloc_keep_heap(); /* as mario-tui's main() does */
    static const struct bench_case cases[] = {
        {"V 8 x 16, unit costs, cap 1.05 M_θ", NULL, SCHEME_V, 8, 16, 1.05, 50},
        {"V 8 x 16, unit costs, cap 2.05 M_θ", NULL, SCHEME_V, 8, 16, 2.05, 50},
        {"GPT3-13B X 32 x 64, at the passes' peak", "GPT3-13B", SCHEME_X, 32, 64, 0, 1000},
        {"V 32 x 64, unit costs, cap 2.05 M_θ", NULL, SCHEME_V, 32, 64, 2.05, 1000},
    };
    printf("search (median of %d; steps in t under unit costs, else ms)\n", runs);
    int n_cases = (int)(sizeof cases / sizeof cases[0]);
    if (only < 0 || only > n_cases) {
        fprintf(stderr, "bench_search: CASE %d: there are cases 1 to %d\n", only, n_cases);
        return 2;
    }
    for (int i = 0; i < n_cases; i++)
        if ((only == 0 || only == i + 1) && bench_one(&cases[i], runs) != 0)
            return 1;
    return 0;
}
