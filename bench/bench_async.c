/* bench/bench_async.c: the simulator on an asynchronous plan (issue 11): Async (PipeMare),
 * 64 stages x 1,024 micro-batches per iteration x 4 iterations, one transformer layer per
 * stage (GPT3-1.6B's shape with 64 layers, analytic costs); goal <= 5 ms. Times sim_run on
 * the plan and the plan's build (scheme_build), for it and for a plan of 1,024 micro-batches in all (256 per
 * iteration x 4), the other reading of the goal; and sim_run_direct, which computes the same
 * figures from the config without building the plan (what `mario-tui simulate` does for an
 * Async config). Prints the median and quartiles.
 * Usage: bench/bench_async [RUNS] */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/bench.h"
#include "model/config.h"
#include "model/presets.h"
#include "sim/plan/plan.h"
#include "sim/schemes/scheme.h"
#include "sim/core/simulate.h"
#include "util/err.h"

static void bench_report(const char *what, double *t, int n)
{
    qsort(t, (size_t)n, sizeof *t, bench_cmp);
    printf("  %-32s median %9.3f ms   p25 %9.3f   p75 %9.3f   (%d runs)\n", what, t[n / 2],
           t[n / 4], t[3 * n / 4], n);
}

static int bench_case(int stages, int n, int k, int runs)
{
    struct config c;
    config_default(&c);
    struct mt_err e = {0};
    c.scheme = SCHEME_ASYNC;
    c.model.num_layers = stages; /* one layer per stage: the fine-grained pipeline */
    c.num_device = stages;
    c.num_microbatches = n;
    c.iterations = k;
    c.update_interval = 1;
    c.memory_per_device = 0;
    struct plan *p = NULL;
    double *t = malloc(sizeof(double) * (size_t)runs);
    int build_runs = runs < 5 ? runs : 5; /* building is not the goal; a few runs suffice */
    for (int i = 0; i < build_runs; i++) {
        plan_free(p);
        p = NULL;
        double t0 = bench_now_ms();
        if (scheme_build(&c, &p, &e) != MT_OK) {
            fprintf(stderr, "bench_async: %s\n", e.msg);
            free(t);
            return 1;
        }
        t[i] = bench_now_ms() - t0;
    }
    printf("Async, %d stages x %d micro-batches x %d iterations: %d instructions\n", stages, n, k,
           plan_total(p));
    bench_report("plan generation (scheme_build)", t, build_runs);
    struct sim_result r;
    for (int i = 0; i < runs; i++) {
        double t0 = bench_now_ms();
        if (sim_run(p, &r, &e) != MT_OK) {
            fprintf(stderr, "bench_async: %s\n", e.msg);
            free(t);
            plan_free(p);
            return 1;
        }
        t[i] = bench_now_ms() - t0;
        if (i + 1 < runs)
            sim_result_fini(&r);
    }
    bench_report("simulation (sim_run)", t, runs);
    struct sim_result q;
    for (int i = 0; i < runs; i++) {
        double t0 = bench_now_ms();
        if (sim_run_direct(&c, &q, &e) != MT_OK) {
            fprintf(stderr, "bench_async: %s\n", e.msg);
            free(t);
            plan_free(p);
            sim_result_fini(&r);
            return 1;
        }
        t[i] = bench_now_ms() - t0;
        if (i + 1 < runs)
            sim_result_fini(&q);
    }
    bench_report("direct (sim_run_direct)", t, runs);
    if (q.step_time != r.step_time || q.utilization != r.utilization ||
        q.dev[0].peak_mem != r.dev[0].peak_mem)
        fprintf(stderr, "bench_async: sim_run_direct and sim_run disagree\n");
    sim_result_fini(&q);
    printf("  utilization %.4f, steady state %.4f, staleness of stage 0: %d\n", r.utilization,
           r.steady_utilization, r.staleness[0]);
    sim_result_fini(&r);
    plan_free(p);
    free(t);
    return 0;
}

int main(int argc, char **argv)
{
    int runs = argc > 1 ? atoi(argv[1]) : 21;
    if (runs < 4)
        runs = 4;
    if (bench_case(64, 1024, 4, runs) != 0 || bench_case(64, 256, 4, runs) != 0)
        return 1;
    printf("goal: <= 5 ms to simulate 64 stages x 1,024 micro-batches x 4 iterations\n");
    return 0;
}
