/* bench/bench_scale.c: the cost grows linearly with the micro-batches (issue 27 item 1). CPU
 * time of everything `mario-tui simulate` does between a config and its report (generation
 * with the receive order, validation with the simulation, the lower bound, the critical path)
 * and of `optimize` (Mario's passes, sim/passes/pass.h), GPT3-13B on 32 devices, V, at 4,096 and
 * 16,384 micro-batches: the ratio's goal is 5.5x (linear is 4x). Then simulate at 65,536
 * micro-batches (the 190 s and 2 GB before). CPU time, not wall: the machine is
 * shared. Argument: skip the 65,536 row ("quick"). */
#include <config.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "model/config.h"
#include "model/presets.h"
#include "sim/core/bound.h"
#include "sim/core/critical.h"
#include "sim/passes/pass.h"
#include "sim/plan/plan.h"
#include "sim/schemes/scheme.h"
#include "sim/core/simulate.h"
#include "sim/plan/validate.h"
#include "util/err.h"
#include "util/xalloc.h"

/* CPU ms of simulate's work on N micro-batches (optimize: the passes too); -1 on failure. */
static double bench_scale_once(int mbs, bool optimize)
{
    struct config c;
    config_default(&c);
    struct mt_err e = {0};
    presets_model("GPT3-13B", &c.model, &e);
    c.scheme = SCHEME_V;
    c.num_device = 32;
    c.num_microbatches = mbs;
    double c0 = bench_cpu_ms();
    struct plan *p = NULL;
    struct sim_result r = {0};
    struct bound_result b;
    if (scheme_build(&c, &p, &e) != MT_OK || validate_plan_sim(p, &r, &e) != MT_OK ||
        bound_plan(p, &b, &e) != MT_OK) {
        fprintf(stderr, "bench_scale: %s\n", e.msg);
        plan_free(p);
        return -1;
    }
    unsigned char *on_path = xcalloc((size_t)plan_total(p) + 1, 1);
    sim_critical_path(p, &r, on_path, &e);
    free(on_path);
    int rc = MT_OK;
    if (optimize) {
        struct pass_pipeline pl;
        rc = pass_pipeline_run(p, &pl, &e);
        if (rc == MT_OK)
            pass_pipeline_fini(&pl);
        else
            fprintf(stderr, "bench_scale: %s\n", e.msg);
    }
    double ms = bench_cpu_ms() - c0;
    sim_result_fini(&r);
    plan_free(p);
    return rc == MT_OK ? ms : -1;
}

/* The median of three runs. */
static double bench_scale_median(int mbs, bool optimize)
{
    double t[3];
    for (int i = 0; i < 3; i++)
        if ((t[i] = bench_scale_once(mbs, optimize)) < 0)
            return -1;
    return bench_median(t, 3);
}

int main(int argc, char **argv)
{
    bool quick = argc > 1 && strcmp(argv[1], "quick") == 0;
    xalloc_keep_heap(); /* as mario-tui's main() does */
    for (int opt = 0; opt < 2; opt++) {
        double a = bench_scale_median(4096, opt), b = bench_scale_median(16384, opt);
        if (a < 0 || b < 0)
            return 1;
        printf("%-9s GPT3-13B, V, 32 devices: 4,096 mbs %8.1f ms, 16,384 mbs %8.1f ms CPU, "
               "ratio %.2fx (goal <= 5.5x: %s)\n",
               opt ? "optimize" : "simulate", a, b, b / a, b / a <= 5.5 ? "met" : "missed");
    }
    if (!quick) {
        double t = bench_scale_once(65536, false);
        if (t < 0)
            return 1;
        printf("simulate  GPT3-13B, V, 32 devices x 65,536 micro-batches: %.2f s CPU\n", t * 1e-3);
    }
    return 0;
}
