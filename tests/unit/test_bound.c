/* tests/unit/test_bound.c: the lower bound (sim/core/bound.h) against values worked out by hand with
 * unit costs (F = 1, B = 2, RC = 1, free p2p):
 *   - 1F1B and GPipe, D = 4, N = 4: the last device cannot start before the forward chain
 *     reaches it (3t), works 4 x 3 = 12t and must wait for the backward chain behind it to
 *     drain (3 x 2 = 6t): 21t, which both plans reach (the paper's Figure 2 baseline);
 *     (N + D - 1)(F + B) in general, for D and N up to 8;
 *   - the critical path alone: one micro-batch, D(F + B);
 *   - the memory-time bound on a two-device 1F1B with a cap of 1.05 M_θ, in closed form;
 *   - an infeasible cap (below one stage's activations);
 * and over random shapes (every scheme, unit and analytic costs, dp, blocking sends) that the
 * bound never exceeds a simulated plan: the base, every step of Mario's passes, and, with the
 * memory part at the plan's own peak as the cap, the checkpointed ones. */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "model/config.h"
#include "model/cost.h"
#include "sim/core/bound.h"
#include "sim/passes/pass.h"
#include "sim/plan/plan.h"
#include "sim/schemes/scheme.h"
#include "sim/core/simulate.h"
#include "sim/plan/validate.h"
#include "tests/check.h"
#include "tests/unit_config.h"
#include "util/err.h"

static double step_of(const struct plan *p)
{
    struct sim_result r;
    struct mt_err e = {0};
    if (sim_run(p, &r, &e) != MT_OK)
        return -1;
    double t = r.step_time;
    sim_result_fini(&r);
    return t;
}

static void test_hand_worked(void)
{
    struct mt_err e = {0};
    /* (N + D - 1)(F + B): 1F1B and GPipe reach it, and it is the bound. */
    for (int s = 0; s < 2; s++)
        for (int D = 1; D <= 8; D++)
            for (int N = 1; N <= 8; N++) {
                struct config c = test_unit_config(s ? SCHEME_GPIPE : SCHEME_V, D, N, 1, 2, 1);
                struct plan *p = NULL;
                CHECK_EQ_INT(scheme_build(&c, &p, &e), MT_OK);
                struct bound_result b;
                CHECK_EQ_INT(bound_plan(p, &b, &e), MT_OK);
                CHECK_NEAR(b.time, (N + D - 1) * 3.0, 1e-9);
                CHECK_NEAR(b.critical_path, D * 3.0, 1e-9);
                CHECK_NEAR(step_of(p), (N + D - 1) * 3.0, 1e-9);
                CHECK_NEAR(b.work, N * 3.0, 1e-9);
                CHECK(b.memory == 0 && b.memory_at == -1);
                plan_free(p);
            }
    /* D = 4, N = 4: 21t, the last device's fill (3t), work (12t) and drain (6t). */
    struct config c = test_unit_config(SCHEME_V, 4, 4, 1, 2, 1);
    struct plan *p = NULL;
    CHECK_EQ_INT(scheme_build(&c, &p, &e), MT_OK);
    struct bound_result b;
    CHECK_EQ_INT(bound_plan(p, &b, &e), MT_OK);
    CHECK_NEAR(b.time, 21, 1e-9);
    CHECK_NEAR(b.device, 21, 1e-9);
    CHECK_EQ_INT(b.device_at, 3);
    CHECK_EQ_INT(bound_binding(&b, true), BOUND_DEVICE);
    CHECK_NEAR(bound_gap_pct(22, b.time), 100.0 / 21, 1e-9);
    /* Mario's passes reach 22t: the bound holds (no cap: their memory is not asked about). */
    struct pass_pipeline pl;
    CHECK_EQ_INT(pass_pipeline_run(p, &pl, &e), MT_OK);
    for (int i = 0; i < pl.n; i++) {
        struct bound_result bi;
        CHECK_EQ_INT(bound_plan(pl.step[i].plan, &bi, &e), MT_OK);
        CHECK_NEAR(bi.time, 21, 1e-9); /* the same work, recompute left out */
        CHECK(bi.time <= pl.step[i].sim.step_time + 1e-9);
    }
    CHECK_NEAR(pass_pipeline_final(&pl)->sim.step_time, 22, 1e-9);
    pass_pipeline_fini(&pl);
    plan_free(p);
    /* W, D = 2, 2 chunks, N = 2 (chunk ops cost F/2, B/2): the critical path is one
     * micro-batch through 4 chunks, 4 x 1.5 = 6t; device 1 starts after one chunk forward
     * (0.5t), works 2 x 2 x 1.5 = 6t and leaves at least the last chunk backward of device 0
     * (1t): 7.5t. */
    c = test_unit_config(SCHEME_W, 2, 2, 1, 2, 1);
    c.chunks = 2;
    CHECK_EQ_INT(scheme_build(&c, &p, &e), MT_OK);
    CHECK_EQ_INT(bound_plan(p, &b, &e), MT_OK);
    CHECK_NEAR(b.critical_path, 6, 1e-9);
    CHECK_NEAR(b.device, 7.5, 1e-9);
    CHECK(step_of(p) >= 7.5 - 1e-9);
    plan_free(p);
}

/* Two devices, 1F1B, N micro-batches, cap 1.05 M_θ. Device 0's forwards each hold their
 * activations (1 M_θ) at least F0 + F1 + B1 + B0 = 6t; checkpointed, they hold them from the
 * recompute's start to B0's end, at least RC + B0 = 3t, and a checkpoint (c < 0.05 M_θ) before.
 * Two activations (2 M_θ) never fit beside each other, so over a step T the held activations
 * add up to at most T: 6(N - x) + 3x <= T, with x recomputes on a device that works 3N from 0
 * to the end, T >= 3N + x. So x = 3N / 4 and T = 15N / 4 (30t at N = 8, the exact search's
 * optimum in docs/search.md). Counting bytes instead (1.05 T, each checkpoint saving 3(1 - c))
 * gives less: (3N + 6N / k) / (1 + 1.05 / k) with k = 3(1 - c). */
static void test_memory_closed_form(void)
{
    struct mt_err e = {0};
    for (int N = 8; N <= 32; N *= 2) {
        struct config c = test_unit_config(SCHEME_V, 2, N, 1, 2, 1);
        c.memory_per_device = 1.05;
        struct plan *p = NULL;
        CHECK_EQ_INT(scheme_build(&c, &p, &e), MT_OK);
        struct cost_model cost;
        CHECK_EQ_INT(scheme_costs(&c, &cost, &e), MT_OK);
        double ck = cost.stage[0].ckpt, k = 3 * (1 - ck);
        CHECK(ck > 0 && ck < 0.05);
        double want = 15.0 * N / 4;
        CHECK(want > (3.0 * N + 6.0 * N / k) / (1 + 1.05 / k));
        struct bound_result b;
        CHECK_EQ_INT(bound_compute(p, &cost, 1.05, &b, &e), MT_OK);
        CHECK_NEAR(b.time, (N + 1) * 3.0, 1e-9);
        CHECK_NEAR(b.memory, want, 1e-9 * want);
        CHECK_EQ_INT(b.memory_at, 0);
        CHECK_NEAR(b.forced_rc, want - 3.0 * N, 1e-6);
        CHECK(b.memory > b.time);
        CHECK_EQ_INT(bound_binding(&b, true), BOUND_MEMORY);
        CHECK_EQ_INT(bound_binding(&b, false), BOUND_DEVICE);
        CHECK_NEAR(bound_value(&b, false), b.time, 0);
        /* Mario's plan fits 1.05 M_θ: its step is above the memory bound. */
        struct pass_pipeline pl;
        CHECK_EQ_INT(pass_pipeline_run(p, &pl, &e), MT_OK);
        const struct pass_step *f = pass_pipeline_final(&pl);
        CHECK(pass_sim_peak_max(&f->sim) <= 1.05);
        CHECK(f->sim.step_time >= b.memory - 1e-9);
        /* A cap the activations of one stage do not fit: no schedule. */
        CHECK_EQ_INT(bound_compute(p, &cost, 0.9, &b, &e), MT_OK);
        CHECK(b.cap_infeasible && isinf(b.memory));
        /* A cap every activation fits: nothing forced. */
        CHECK_EQ_INT(bound_compute(p, &cost, N + 0.5, &b, &e), MT_OK);
        CHECK(b.memory == 0 && !b.cap_infeasible);
        pass_pipeline_fini(&pl);
        cost_model_fini(&cost);
        plan_free(p);
    }
}

/* 1F1B on D devices at 1.05 M_θ (one activation at a time, as above): device j = D - m holds a
 * kept forward's activations 3m t (its forward and the m - 1 after it, their backwards) and a
 * checkpointed one's 3t (RC + B), between its first forward (head j) and its last backward
 * (tail 2j); with x recomputes it works 3N + x there: 3N + x = 3Nm - 3(m - 1)x, so
 * T >= 3j + 3N + 3N(m - 1) / (3m - 2). For N <= 28 device D - 2 (m = 2) binds:
 * 3(D - 2) + 15N / 4: 36t at 4 x 8, 66t at 4 x 16, 78t at 8 x 16, the optima the search
 * reaches (issue 28; tests/unit/test_search.c). */
static void test_memory_1f1b(void)
{
    struct mt_err e = {0};
    static const int shapes[][2] = {{4, 8}, {4, 16}, {8, 16}, {3, 12}, {6, 20}, {8, 32}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        int D = shapes[i][0], N = shapes[i][1];
        struct config c = test_unit_config(SCHEME_V, D, N, 1, 2, 1);
        struct plan *p = NULL;
        CHECK_EQ_INT(scheme_build(&c, &p, &e), MT_OK);
        struct cost_model cost;
        CHECK_EQ_INT(scheme_costs(&c, &cost, &e), MT_OK);
        double want = 0;
        int at = -1;
        for (int m = 2; m <= D; m++) {
            double t = 3.0 * (D - m) + 3.0 * N + 3.0 * N * (m - 1) / (3 * m - 2);
            if (t > want + 1e-9) {
                want = t;
                at = D - m;
            }
        }
        struct bound_result b;
        CHECK_EQ_INT(bound_compute(p, &cost, 1.05, &b, &e), MT_OK);
        CHECK_NEAR(b.memory, want, 1e-9 * want);
        CHECK_EQ_INT(b.memory_at, at);
        if (N <= 28)
            CHECK_NEAR(b.memory, 3.0 * (D - 2) + 15.0 * N / 4, 1e-9);
        cost_model_fini(&cost);
        plan_free(p);
    }
}

static void test_random(void)
{
    srand(18);
    int plans = 0, mem_binding = 0, bad = 0;
    enum scheme_id schemes[SCHEME__COUNT];
    int n_schemes = test_sync_schemes(schemes, false);
    for (int trial = 0; trial < 160; trial++) {
        enum scheme_id s = schemes[rand() % n_schemes];
        int D = 2 + rand() % 6, N = 1 + rand() % 12;
        struct config c =
            test_unit_config(s, D, N, 0.5 + rand() % 3, 1 + rand() % 4, 0.5 * (rand() % 4));
        c.unit.enabled = rand() % 3 != 0;
        c.cluster.dp = 1 + (rand() % 4 == 0);
        c.blocking_send = rand() % 8 == 0;
        if (scheme_registry_get(s)->chunks == SCHEME_CHUNKS_CONFIG)
            test_fit_scheme(&c, &D, &N, 1 + rand() % 2);
        else
            test_fit_scheme(&c, &D, &N, 1);
        c.num_device = D * c.cluster.dp;
        c.num_microbatches = N;
        struct plan *base = NULL;
        struct mt_err e = {0};
        if (scheme_build(&c, &base, &e) != MT_OK || validate_plan(base, &e) != MT_OK) {
            plan_free(base);
            continue;
        }
        struct pass_pipeline pl;
        if (pass_pipeline_run(base, &pl, &e) != MT_OK) {
            plan_free(base);
            continue;
        }
        struct cost_model cost;
        CHECK_EQ_INT(scheme_costs(&c, &cost, &e), MT_OK);
        for (int i = 0; i < pl.n; i++) {
            const struct pass_step *st = &pl.step[i];
            double cap = pass_sim_peak_max(&st->sim) * (1 + 1e-12);
            struct bound_result b;
            if (bound_compute(st->plan, &cost, cap, &b, &e) != MT_OK) {
                bad++;
                continue;
            }
            plans++;
            mem_binding += b.memory > b.time;
            double lb = bound_value(&b, true);
            if (lb > st->sim.step_time * (1 + 1e-9) || b.cap_infeasible) {
                bad++;
                fprintf(stderr, "  trial %d %s D=%d N=%d unit=%d step %s: bound %.9g > %.9g\n",
                        trial, config_scheme_name(s), D, N, c.unit.enabled, st->name, lb,
                        st->sim.step_time);
            }
        }
        cost_model_fini(&cost);
        pass_pipeline_fini(&pl);
        plan_free(base);
    }
    printf("random: %d plans bounded, the memory part above the time part in %d\n", plans,
           mem_binding);
    CHECK_EQ_INT(bad, 0);
    CHECK(plans > 600);
    CHECK(mem_binding > 0);
}

int main(void)
{
    test_hand_worked();
    test_memory_closed_form();
    test_memory_1f1b();
    test_random();
    return check_report("test_bound");
}
