/* bench/bench_sim.c: the simulator's speed on the paper's §5.2 case: GPT3-13B, Chimera (X),
 * 32 devices, 64 micro-batches (the paper reports ~700 ms for its Python simulator), and plan
 * generation separately; prints the median and quartiles over repeated runs. A simulation is
 * timed two ways: of a new plan (a copy made outside the timing, as every pass makes one),
 * which includes resolving its dependencies (vpipe_resolve), and of the same plan again, whose
 * resolution is kept with it. Then the split-backward V schedules at the same size (issue 17's
 * goal: <= 0.5 ms each): ZB-V and DualPipeV, 32 devices (64 stages in a V), 64 micro-batches. */
#include <config.h>

#include <stdbool.h>
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
#include "util/xalloc.h"

static void bench_report(const char *what, double *t, int n)
{
    qsort(t, (size_t)n, sizeof *t, bench_cmp);
    printf("%-40s median %8.4f ms   p25 %8.4f   p75 %8.4f   (%d runs)\n", what, t[n / 2],
           t[n / 4], t[3 * n / 4], n);
}

/* Times sim_run on p over `runs`: on a new copy of p each time (fresh), or on p itself. The
 * wall and CPU times go to t and cpu. Returns nonzero on failure. */
static int bench_sim_runs(const struct plan *p, bool fresh, int runs, double *t, double *cpu,
                          struct sim_result *last)
{
    struct mt_err e = {0};
    for (int i = 0; i < runs; i++) {
        struct plan *q = fresh ? plan_clone(p) : NULL;
        struct sim_result r;
        double t0 = bench_now_ms(), c0 = bench_cpu_ms();
        int rc = sim_run(q ? q : p, &r, &e);
        t[i] = bench_now_ms() - t0;
        if (cpu)
            cpu[i] = bench_cpu_ms() - c0;
        plan_free(q);
        if (rc != MT_OK) {
            fprintf(stderr, "bench_sim: %s\n", e.msg);
            return 1;
        }
        if (last && i + 1 == runs)
            *last = r;
        else
            sim_result_fini(&r);
    }
    return 0;
}

/* Builds the scheme's plan on c and times sim_run over `runs`, new plan and again. */
static int bench_sim_scheme(struct config c, enum scheme_id scheme, int runs, double *t)
{
    struct mt_err e = {0};
    struct plan *p = NULL;
    c.scheme = scheme;
    if (scheme_build(&c, &p, &e) != MT_OK) {
        fprintf(stderr, "bench_sim: %s\n", e.msg);
        return 1;
    }
    char what[64];
    int rc = bench_sim_runs(p, true, runs, t, NULL, NULL);
    if (rc == 0) {
        snprintf(what, sizeof what, "%s (%d instructions), new plan", config_scheme_name(scheme),
                 plan_total(p));
        bench_report(what, t, runs);
        rc = bench_sim_runs(p, false, runs, t, NULL, NULL);
    }
    if (rc == 0) {
        snprintf(what, sizeof what, "%s, the same plan again", config_scheme_name(scheme));
        bench_report(what, t, runs);
    }
    plan_free(p);
    return rc;
}

int main(int argc, char **argv)
{
    int runs = argc > 1 ? atoi(argv[1]) : 200;
    if (runs < 4)
        runs = 4;
    xalloc_keep_heap(); /* as mario-tui's main() does */
    struct config c;
    config_default(&c);
    struct mt_err e = {0};
    presets_model("GPT3-13B", &c.model, &e);
    c.scheme = SCHEME_X;
    c.num_device = 32;
    c.num_microbatches = 64;
    struct plan *p = NULL;
    double *t = malloc(sizeof(double) * (size_t)runs);
    for (int i = 0; i < runs; i++) {
        double t0 = bench_now_ms();
        plan_free(p);
        if (scheme_build(&c, &p, &e) != MT_OK) {
            fprintf(stderr, "bench_sim: %s\n", e.msg);
            return 1;
        }
        t[i] = bench_now_ms() - t0;
    }
    printf("GPT3-13B, X, 32 devices, 64 micro-batches: %d instructions\n", plan_total(p));
    bench_report("plan generation (scheme_build)", t, runs);
    struct sim_result r;
    double *cpu = malloc(sizeof(double) * (size_t)runs);
    if (bench_sim_runs(p, true, runs, t, cpu, NULL) != 0)
        return 1;
    bench_report("simulation of a new plan, wall", t, runs);
    bench_report("  the same, CPU", cpu, runs);
    if (bench_sim_runs(p, false, runs, t, cpu, &r) != 0)
        return 1;
    bench_report("the same plan again, wall", t, runs);
    bench_report("  the same, CPU", cpu, runs);
    free(cpu);
    printf("simulated step time %.3f s, throughput %.2f samples/s\n", r.step_time * 1e-6,
           r.throughput);
    sim_result_fini(&r);
    plan_free(p);
    printf("GPT3-13B, 32 devices, 64 micro-batches, split backward:\n");
    int rc = bench_sim_scheme(c, SCHEME_ZBV, runs, t) || bench_sim_scheme(c, SCHEME_DUALPIPEV, runs, t);
    free(t);
    return rc;
}
