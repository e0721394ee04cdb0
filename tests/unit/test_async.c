/* tests/unit/test_async.c: the asynchronous schemes (issue 11, PipeMare / PipeDream) against
 * values counted by hand on 4-stage plans, not taken from the code under test:
 *   - the order: device d runs D-1-d warm-up forwards once, then F/B alternately across all K
 *     iterations; every instruction carries step = mb / N; an OS after every U-th backward;
 *   - staleness with U = 1 is the number of backwards stage d runs between a micro-batch's
 *     forward and its backward, D-1-d (counted here from the device lists as well); with U = 2
 *     it is ceil((D-1-d)/2), worked out below;
 *   - unit costs: makespan (KN + D - 1)(F + B), so utilization KN / (KN + D - 1), and exactly 1
 *     on every device in the steady state; synchronous plans report staleness 0 and a steady
 *     state equal to their iteration; recompute is not counted as work (Figure 2's 28t: 12/28);
 *   - PipeDream's extra memory over Async is one fp16 weight copy of the stage per extra
 *     version in flight: ceil((D-1-d)/U) x 2 bytes x params(d), at the same peak moment;
 *   - Mario's passes on async plans validate, passes 2-4 never slow them, no pass changes a
 *     stage's staleness, checkpointing cuts activation memory; a forward moved before the
 *     update it reads its weights after does not run;
 *   - plan files round-trip; dp > 1 puts an AR before each OS; bad input is refused by name. */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/config.h"
#include "model/cost.h"
#include "sim/core/async.h"
#include "sim/passes/pass.h"
#include "sim/plan/plan.h"
#include "sim/schemes/scheme.h"
#include "sim/core/simulate.h"
#include "sim/tune/tune.h"
#include "sim/plan/validate.h"
#include "tests/check.h"
#include "util/err.h"

static struct config async_config(enum scheme_id s, int D, int N, int K, int U, bool unit)
{
    struct config c;
    config_default(&c);
    c.scheme = s;
    c.num_device = D;
    c.num_microbatches = N;
    c.iterations = K;
    c.update_interval = U;
    c.unit.enabled = unit;
    c.unit.f = 1;
    c.unit.b = 2;
    c.unit.rc = 1;
    return c;
}

static int build_sim(const struct config *c, struct plan **p, struct sim_result *r)
{
    struct mt_err e = {0};
    memset(r, 0, sizeof *r);
    int rc = scheme_build(c, p, &e);
    if (rc == MT_OK)
        rc = validate_plan(*p, &e);
    if (rc == MT_OK)
        rc = sim_run(*p, r, &e);
    if (rc != MT_OK)
        fprintf(stderr, "build_sim %s D=%d N=%d K=%d U=%d: %s\n", config_scheme_name(c->scheme),
                c->num_device, c->num_microbatches, c->iterations, c->update_interval, e.msg);
    return rc;
}

/* Backwards of stage d between FW(mb) and BW(mb) in device d's list, max over mb: counted from
 * the list alone. */
static int count_backwards_between(const struct plan *p, int d)
{
    int best = 0;
    for (int i = 0; i < plan_len(p, d); i++) {
        const struct instr *f = plan_at(p, d, i);
        if (!plan_op_is_forward(f->op))
            continue;
        int n = 0;
        for (int j = i + 1; j < plan_len(p, d); j++) {
            const struct instr *b = plan_at(p, d, j);
            if (b->op != OP_BW)
                continue;
            if (b->mb == f->mb)
                break;
            n++;
        }
        best = n > best ? n : best;
    }
    return best;
}

static void test_order(void)
{
    /* D = 4, N = 2, K = 2: micro-batches 0..3, iterations {0, 1} and {2, 3}. Device 0 (3
     * warm-up forwards): F0 F1 F2 F3 B0 B1 B2 B3, an OS after each B. Device 3: F0 B0 F1 B1 ... */
    struct config c = async_config(SCHEME_ASYNC, 4, 2, 2, 1, true);
    struct plan *p = NULL;
    struct sim_result r;
    if (build_sim(&c, &p, &r) != MT_OK) {
        CHECK(0);
        return;
    }
    CHECK_EQ_INT(plan_geom(p)->mbs, 4);
    static const char *const want0[] = {"F0", "F1", "F2", "F3", "B0", "O0",
                                        "B1", "O1", "B2", "O2", "B3", "O3"};
    static const char *const want3[] = {"F0", "B0", "O0", "F1", "B1", "O1",
                                        "F2", "B2", "O2", "F3", "B3", "O3"};
    for (int pass = 0; pass < 2; pass++) {
        int d = pass == 0 ? 0 : 3, k = 0;
        const char *const *want = pass == 0 ? want0 : want3;
        for (int i = 0; i < plan_len(p, d); i++) {
            const struct instr *in = plan_at(p, d, i);
            char got[16];
            if (in->op == OP_FW || in->op == OP_BW || in->op == OP_OS) {
                char kind = in->op == OP_FW ? 'F' : in->op == OP_BW ? 'B' : 'O';
                snprintf(got, sizeof got, "%c%d", kind, in->mb);
                CHECK(k < 12 && strcmp(got, want[k]) == 0);
                k++;
            }
            CHECK_EQ_INT(in->step, in->mb / 2);
        }
        CHECK_EQ_INT(k, 12);
    }
    /* Sends and receives like V's: device 1 receives F from 0 and G from 2. */
    CHECK(plan_find(p, 1, OP_RA, 3, 1) >= 0 && plan_find(p, 1, OP_RG, 3, 1) >= 0);
    CHECK(plan_find(p, 1, OP_SA, 3, 1) >= 0 && plan_find(p, 1, OP_SG, 3, 1) >= 0);
    sim_result_fini(&r);
    plan_free(p);
}

static void test_staleness_u1(void)
{
    /* Hand count, U = 1: device d holds D-d micro-batches in flight; between FW(k) and BW(k)
     * it runs the backwards of k-(D-1-d) .. k-1, each followed by an OS. */
    static const int want[4] = {3, 2, 1, 0};
    for (int K = 1; K <= 3; K++) {
        struct config c = async_config(SCHEME_ASYNC, 4, 4, K, 1, true);
        struct plan *p = NULL;
        struct sim_result r;
        if (build_sim(&c, &p, &r) != MT_OK) {
            CHECK(0);
            continue;
        }
        CHECK_EQ_INT(r.stages, 4);
        for (int d = 0; d < 4; d++) {
            CHECK_EQ_INT(r.staleness[d], want[d]);
            CHECK_EQ_INT(r.staleness[d], count_backwards_between(p, d));
        }
        /* Unit costs: makespan (KN + D - 1)(F + B); every device busy KN(F + B). */
        int M = 4 * K;
        CHECK_NEAR(r.step_time, (M + 3) * 3.0, 1e-9);
        CHECK_NEAR(r.utilization, (double)M / (M + 3), 1e-12);
        /* Steady state, worked by hand: device 0 runs F0 F1 F2 F3 in [0, 4]; B0 waits for the
         * gradient through the pipeline (dev 3 B0 [4, 6], dev 2 [6, 8], dev 1 [8, 10]), so it
         * runs [10, 12]; then F(3+j) B(j) pairs of 3t, its last forward F(M-1) ending at
         * 13 + 3(M-5) = 3M - 2. With M = D = 4 there is no steady state: the window is the
         * whole step. */
        if (M > 4) {
            CHECK_NEAR(r.steady_t0, 10, 1e-9);
            CHECK_NEAR(r.steady_t1, 3 * M - 2, 1e-9);
            CHECK_NEAR(r.steady_utilization, 1.0, 1e-12);
            for (int d = 0; d < 4; d++)
                CHECK_NEAR(r.dev[d].steady_work, r.steady_t1 - r.steady_t0, 1e-9);
        } else {
            CHECK_NEAR(r.steady_t0, 0, 0);
            CHECK_NEAR(r.steady_t1, r.step_time, 0);
            CHECK_NEAR(r.steady_utilization, r.utilization, 1e-12);
        }
        /* No stashing for Async. */
        for (int d = 0; d < 4; d++)
            CHECK_EQ_INT(r.dev[d].max_stashed, 0);
        sim_result_fini(&r);
        plan_free(p);
    }
}

static void test_staleness_u2(void)
{
    /* U = 2, D = 4, N = 4, K = 2 (M = 8). OS after B1, B3, B5, B7. Device 0 (w = 3) runs
     * B(k-3) B(k-2) B(k-1) between FW(k) and BW(k); among three consecutive backwards one or two
     * are odd: staleness 2. w = 2: exactly one odd: 1. w = 1: B(k-1), odd for even k: 1.
     * w = 0: 0. That is ceil(w / U). */
    static const int want[4] = {2, 1, 1, 0};
    struct config c = async_config(SCHEME_ASYNC, 4, 4, 2, 2, true);
    struct plan *p = NULL;
    struct sim_result r;
    if (build_sim(&c, &p, &r) != MT_OK) {
        CHECK(0);
        return;
    }
    for (int d = 0; d < 4; d++) {
        CHECK_EQ_INT(r.staleness[d], want[d]);
        int os = 0;
        for (int i = 0; i < plan_len(p, d); i++) {
            const struct instr *in = plan_at(p, d, i);
            if (in->op != OP_OS)
                continue;
            CHECK(in->mb % 2 == 1); /* after B1, B3, B5, B7 */
            CHECK(i > 0 && plan_find(p, d, OP_BW, in->mb, d) < i);
            os++;
        }
        CHECK_EQ_INT(os, 4);
    }
    sim_result_fini(&r);
    plan_free(p);

    /* U = 3 with M = 8: OS after B2, B5 and the last, B7. */
    c = async_config(SCHEME_ASYNC, 4, 4, 2, 3, true);
    if (build_sim(&c, &p, &r) == MT_OK) {
        int mbs[3] = {2, 5, 7}, k = 0;
        for (int i = 0; i < plan_len(p, 0); i++)
            if (plan_at(p, 0, i)->op == OP_OS) {
                CHECK(k < 3 && plan_at(p, 0, i)->mb == mbs[k]);
                k++;
            }
        CHECK_EQ_INT(k, 3);
    } else {
        CHECK(0);
    }
    sim_result_fini(&r);
    plan_free(p);
}

static void test_synchronous_figures(void)
{
    /* V, D = 4, N = 4, unit costs: Figure 2's 21t; busy N(F+B) = 12 on every device. The steady
     * state of a flushed pipeline is its iteration; no stage is ever stale. */
    struct config c = async_config(SCHEME_V, 4, 4, 1, 1, true);
    struct plan *p = NULL;
    struct sim_result r;
    if (build_sim(&c, &p, &r) != MT_OK) {
        CHECK(0);
        return;
    }
    CHECK_NEAR(r.step_time, 21, 1e-9);
    CHECK_NEAR(r.utilization, 12.0 / 21.0, 1e-12);
    CHECK_NEAR(r.steady_t0, 0, 0);
    CHECK_NEAR(r.steady_t1, 21, 1e-9);
    CHECK_NEAR(r.steady_utilization, r.utilization, 1e-12);
    for (int s = 0; s < 4; s++)
        CHECK_EQ_INT(r.staleness[s], 0);
    /* Checkpointed (Figure 2, step 1: 28t): recompute is busy but not work, so utilization
     * stays the forwards and backwards, 12 of 28 on every device. */
    struct plan *q = NULL;
    struct pass_changes ch;
    struct mt_err e = {0};
    pass_changes_init(&ch);
    CHECK(pass_run(PASS_CHECKPOINT, p, &q, &ch, &e) == MT_OK);
    struct sim_result rq;
    if (q != NULL && sim_run(q, &rq, &e) == MT_OK) {
        CHECK_NEAR(rq.step_time, 28, 1e-9);
        CHECK_NEAR(rq.utilization, 12.0 / 28.0, 1e-12);
        for (int d = 0; d < 4; d++)
            CHECK_NEAR(rq.dev[d].work, 12, 1e-9);
        sim_result_fini(&rq);
    } else {
        CHECK(0);
    }
    pass_changes_fini(&ch);
    plan_free(q);
    sim_result_fini(&r);
    plan_free(p);
}

static void test_pipedream_memory(void)
{
    /* Analytic costs, D = 4, N = 8, K = 2. PipeDream and Async have the same order and times;
     * PipeDream's peak on device d is Async's plus ceil((D-1-d)/U) fp16 copies of the stage's
     * weights: right after an OS the w = D-1-d micro-batches in flight read ceil(w/U) older
     * versions, and the next forward (reading the current one) is the activation peak. */
    for (int U = 1; U <= 2; U++) {
        struct config ca = async_config(SCHEME_ASYNC, 4, 8, 2, U, false);
        struct config cd = async_config(SCHEME_PIPEDREAM, 4, 8, 2, U, false);
        struct plan *pa = NULL, *pd = NULL;
        struct sim_result ra, rd;
        struct cost_model cost;
        struct mt_err e = {0};
        if (build_sim(&ca, &pa, &ra) != MT_OK || build_sim(&cd, &pd, &rd) != MT_OK ||
            scheme_costs(&cd, &cost, &e) != MT_OK) {
            CHECK(0);
            return;
        }
        CHECK_NEAR(rd.step_time, ra.step_time, 1e-9 * ra.step_time);
        for (int d = 0; d < 4; d++) {
            int w = 3 - d, copies = (w + U - 1) / U;
            double copy = 2.0 * cost.stage[d].params;
            CHECK_EQ_INT(rd.dev[d].max_stashed, copies);
            CHECK_NEAR(rd.dev[d].peak_stash, copies * copy, 1e-6 * copy + 1);
            CHECK_NEAR(rd.dev[d].peak_mem - ra.dev[d].peak_mem, copies * copy, 1e-6 * copy + 1);
            CHECK_NEAR(rd.dev[d].static_mem, ra.dev[d].static_mem, 0);
            CHECK_EQ_INT(rd.staleness[d], ra.staleness[d]);
        }
        cost_model_fini(&cost);
        sim_result_fini(&ra);
        sim_result_fini(&rd);
        plan_free(pa);
        plan_free(pd);
    }
}

static void test_passes(void)
{
    /* Mario's passes on Async: every step validates; passes 2-4 never slow their input;
     * checkpointing (pass 1) holds one full activation at a time, the rest checkpoints. */
    for (int D = 2; D <= 4; D += 2) {
        struct config c = async_config(SCHEME_ASYNC, D, 4, 2, 1, true);
        struct plan *p = NULL;
        struct mt_err e = {0};
        struct pass_pipeline pl;
        if (scheme_build(&c, &p, &e) != MT_OK || pass_pipeline_run(p, &pl, &e) != MT_OK) {
            fprintf(stderr, "passes on Async D=%d: %s\n", D, e.msg);
            CHECK(0);
            plan_free(p);
            continue;
        }
        for (int i = 0; i < pl.n; i++) {
            const struct pass_step *st = &pl.step[i];
            CHECK(validate_plan(st->plan, &e) == MT_OK);
            if (i >= 2) /* overlap, redundancy, prepose: never slower than the step before */
                CHECK(st->sim.step_time <= pl.step[i - 1].sim.step_time * (1 + 1e-12));
            CHECK_EQ_INT(st->sim.stages, D);
            /* A forward needs the update its schedule promises: no pass makes a stage staler
             * (pass 4 would otherwise prepose forwards across updates). */
            for (int s = 0; s < D; s++)
                CHECK_EQ_INT(st->sim.staleness[s], D - 1 - s);
        }
        const struct pass_step *base = pass_pipeline_row(&pl, PASS_ROW_BASE);
        const struct pass_step *ck = pass_pipeline_row(&pl, PASS_ROW_CKPT);
        /* Device 0 of the base holds D micro-batches (D M_θ); checkpointed, one full activation
         * plus D-1 checkpoints of fraction ckpt/act < 1. */
        CHECK_NEAR(base->sim.dev[0].peak_dynamic, D, 1e-9);
        CHECK(ck->sim.dev[0].peak_dynamic < base->sim.dev[0].peak_dynamic);
        /* No bubble to hide the recompute in: the checkpointed plan is slower. */
        CHECK(ck->sim.step_time > base->sim.step_time);
        pass_pipeline_fini(&pl);
        plan_free(p);
    }
}

static void test_forward_before_its_update(void)
{
    /* D = 4, N = 4, K = 2, U = 1: device 0 runs F3 B0 O0 F4 B1 O1 ...; F4 reads the weights
     * after update 0. Moved before O0 it would be staler; the plan no longer runs. */
    struct config c = async_config(SCHEME_ASYNC, 4, 4, 2, 1, true);
    struct plan *p = NULL;
    struct mt_err e = {0};
    if (scheme_build(&c, &p, &e) != MT_OK) {
        CHECK(0);
        return;
    }
    CHECK(validate_plan(p, &e) == MT_OK);
    int os0 = plan_find(p, 0, OP_OS, 0, 0), f4 = plan_find(p, 0, OP_FW, 4, 0);
    CHECK(os0 >= 0 && f4 > os0);
    plan_move(p, 0, f4, os0);
    CHECK(validate_plan(p, &e) == MT_EINFEASIBLE);
    CHECK_STR_CONTAINS(e.msg, "OS");
    plan_free(p);
}

static void test_plan_file(void)
{
    struct config c = async_config(SCHEME_PIPEDREAM, 4, 3, 3, 2, true);
    struct plan *p = NULL, *q = NULL;
    struct sim_result a, b;
    struct mt_err e = {0};
    if (build_sim(&c, &p, &a) != MT_OK) {
        CHECK(0);
        return;
    }
    char *text = plan_to_json(p);
    CHECK(plan_load_string(text, strlen(text), "async.json", &q, &e) == MT_OK);
    if (q != NULL) {
        CHECK_EQ_INT(plan_config(q)->iterations, 3);
        CHECK_EQ_INT(plan_config(q)->update_interval, 2);
        CHECK_EQ_INT(plan_total(q), plan_total(p));
        CHECK(sim_run(q, &b, &e) == MT_OK);
        CHECK_NEAR(b.step_time, a.step_time, 0);
        for (int s = 0; s < 4; s++)
            CHECK_EQ_INT(b.staleness[s], a.staleness[s]);
        sim_result_fini(&b);
    }
    free(text);
    sim_result_fini(&a);
    plan_free(p);
    plan_free(q);
}

static void test_dp(void)
{
    /* dp = 2: each OS follows an AR of its stage (the gradient of the update, across replicas). */
    struct config c = async_config(SCHEME_ASYNC, 8, 4, 2, 2, false);
    c.cluster.dp = 2;
    c.global_batch_size = 8;
    struct plan *p = NULL;
    struct sim_result r;
    if (build_sim(&c, &p, &r) != MT_OK) {
        CHECK(0);
        return;
    }
    for (int d = 0; d < plan_devices(p); d++)
        for (int i = 0; i < plan_len(p, d); i++)
            if (plan_at(p, d, i)->op == OP_OS)
                CHECK(i > 0 && plan_at(p, d, i - 1)->op == OP_AR &&
                      plan_at(p, d, i - 1)->mb == plan_at(p, d, i)->mb);
    sim_result_fini(&r);
    plan_free(p);
}

static void test_bad_input(void)
{
    struct mt_err e = {0};
    struct config c = async_config(SCHEME_ASYNC, 4, 4, 0, 1, true);
    CHECK(config_validate(&c, &e) == MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "iterations");
    c = async_config(SCHEME_ASYNC, 4, 4, 1, 0, true);
    CHECK(config_validate(&c, &e) == MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "update_interval");
    c = async_config(SCHEME_V, 4, 4, 2, 1, true);
    CHECK(config_validate(&c, &e) == MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "asynchronous");
    c = async_config(SCHEME_GPIPE, 4, 4, 1, 3, true);
    CHECK(config_validate(&c, &e) == MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "update_interval");
    c = async_config(SCHEME_ASYNC, 4, 4096, 32, 1, true);
    CHECK(config_validate(&c, &e) == MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "iterations");

    static const char json[] = "{\"pipeline_scheme\": \"Async\",\n \"iterations\": 0}";
    CHECK(config_load_string(json, sizeof json - 1, "a.json", &c, &e) == MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "a.json:2:");
    CHECK_STR_CONTAINS(e.msg, "iterations");
    static const char json2[] = "{\"pipeline_scheme\": \"PipeMare\", \"update_interval\": 4,"
                                " \"iterations\": 3}";
    CHECK(config_load_string(json2, sizeof json2 - 1, "b.json", &c, &e) == MT_OK);
    CHECK(c.scheme == SCHEME_ASYNC && c.update_interval == 4 && c.iterations == 3);

    /* The tuner's grid is synchronous. */
    struct tune_opts o;
    tune_opts_default(&o);
    o.threads = 1;
    struct tune_result tr;
    c = async_config(SCHEME_PIPEDREAM, 4, 4, 1, 1, true);
    CHECK(tune_grid_search(&c, &o, &tr, &e) == MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "synchronous");
    tune_result_fini(&tr);
}

/* sim_run_direct (the timeline straight from the config) against sim_run on the built plan:
 * every figure of struct sim_result and struct sim_device equal, bit for bit (the
 * per-instruction ones, start, end, mem_after and the memory curves, left out as documented), over shapes with few and many micro-batches (M < D, M = D,
 * M > D; up to 21 micro-batches, so that the memory walk's jump over repeating pairs is taken),
 * update intervals that do and do not divide M, unit and analytic costs, an uneven layer
 * split, a cap some devices are over; other configs are refused so that the caller builds the
 * plan. */
static void test_direct_equals_sim_run(void)
{
    static const int Ds[] = {1, 2, 3, 4, 5, 8}, Ns[] = {1, 2, 3, 7}, Ks[] = {1, 3}, Us[] = {1, 2, 3, 5};
    int compared = 0;
    for (size_t a = 0; a < sizeof Ds / sizeof *Ds; a++)
        for (size_t b = 0; b < sizeof Ns / sizeof *Ns; b++)
            for (size_t k = 0; k < sizeof Ks / sizeof *Ks; k++)
                for (size_t u = 0; u < sizeof Us / sizeof *Us; u++)
                    for (int unit = 0; unit < 2; unit++) {
                        struct config c = async_config(SCHEME_ASYNC, Ds[a], Ns[b], Ks[k], Us[u],
                                                       unit);
                        if (!unit && Ds[a] == 5)
                            c.model.num_layers = 13; /* 13 layers on 5 stages: uneven */
                        if (!unit) /* no cap, or one some devices are over */
                            c.memory_per_device = Ds[a] == 8 ? 2e9 : 0;
                        struct plan *p = NULL;
                        struct sim_result r, q;
                        struct mt_err e = {0};
                        if (build_sim(&c, &p, &r) != MT_OK) {
                            CHECK(0);
                            continue;
                        }
                        int rc = sim_run_direct(&c, &q, &e);
                        CHECK_EQ_INT(rc, MT_OK);
                        if (rc == MT_OK) {
                            int bad = 0;
                            bad += q.step_time != r.step_time || q.throughput != r.throughput;
                            bad += q.utilization != r.utilization;
                            bad += q.steady_utilization != r.steady_utilization;
                            bad += q.steady_t0 != r.steady_t0 || q.steady_t1 != r.steady_t1;
                            bad += q.oom_device != r.oom_device || q.cap != r.cap;
                            bad += q.stages != r.stages || q.devices != r.devices;
                            bad += q.unit != r.unit;
                            /* the per-instruction figures it leaves out */
                            bad += q.total != 0 || q.start != NULL || q.end != NULL ||
                                   q.mem_after != NULL;
                            for (int s = 0; s < r.stages && q.stages == r.stages; s++)
                                bad += q.staleness[s] != r.staleness[s];
                            for (int d = 0; d < r.devices && q.devices == r.devices; d++) {
                                const struct sim_device *x = &q.dev[d], *y = &r.dev[d];
                                bad += x->busy != y->busy || x->bubble != y->bubble;
                                bad += x->finish != y->finish || x->work != y->work;
                                bad += x->steady_work != y->steady_work;
                                bad += x->static_mem != y->static_mem;
                                bad += x->peak_dynamic != y->peak_dynamic;
                                bad += x->peak_mem != y->peak_mem;
                                bad += x->peak_stash != y->peak_stash;
                                bad += x->max_stashed != y->max_stashed;
                                bad += x->curve_len != 0 || x->curve_t != NULL ||
                                       x->curve_mem != NULL;
                            }
                            if (bad)
                                fprintf(stderr, "direct != sim_run: D=%d N=%d K=%d U=%d unit=%d "
                                        "(%d figures; step %.17g vs %.17g)\n", Ds[a], Ns[b],
                                        Ks[k], Us[u], unit, bad, q.step_time, r.step_time);
                            CHECK_EQ_INT(bad, 0);
                            compared++;
                            sim_result_fini(&q);
                        }
                        sim_result_fini(&r);
                        plan_free(p);
                    }
    CHECK_EQ_INT(compared, 6 * 4 * 2 * 4 * 2);

    /* What it does not cover, it refuses (the caller builds the plan). */
    struct config c = async_config(SCHEME_PIPEDREAM, 4, 4, 2, 1, true);
    struct sim_result q;
    struct mt_err e = {0};
    CHECK_EQ_INT(sim_run_direct(&c, &q, &e), MT_EUNSUPPORTED);
    c = async_config(SCHEME_ASYNC, 4, 4, 2, 1, false);
    c.cluster.dp = 2;
    CHECK_EQ_INT(sim_run_direct(&c, &q, &e), MT_EUNSUPPORTED);
    c.cluster.dp = 1;
    c.blocking_send = true;
    CHECK_EQ_INT(sim_run_direct(&c, &q, &e), MT_EUNSUPPORTED);
    c = async_config(SCHEME_V, 4, 4, 1, 1, true);
    CHECK_EQ_INT(sim_run_direct(&c, &q, &e), MT_EUNSUPPORTED);
    /* A bad config is the config's error, not a refusal. */
    c = async_config(SCHEME_ASYNC, 4, 4, 0, 1, true);
    CHECK_EQ_INT(sim_run_direct(&c, &q, &e), MT_EINVAL);
}

int main(void)
{
    test_order();
    test_staleness_u1();
    test_staleness_u2();
    test_synchronous_figures();
    test_pipedream_memory();
    test_passes();
    test_forward_before_its_update();
    test_plan_file();
    test_dp();
    test_bad_input();
    test_direct_equals_sim_run();
    return check_report("test_async");
}
