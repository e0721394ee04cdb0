/* tests/unit/test_sim_fast.c: the simulator's fast path (sim/core/simulate_fast.c) against its
 * general event loop (sim_run_general), figure by figure and bit by bit: every scheme, unit and
 * analytic costs, data parallelism (allreduce groups), a memory cap, the plans Mario's passes
 * make (checkpointing, selective checkpointing), calibrated transients, replayed durations,
 * and an optimizer step moved between a forward and its backward (staleness). The fast path
 * must take every synchronous plan with sends that do not block, and give back (so that the
 * general loop words the error) a deadlock, a missing dependency and a negative duration. The
 * general loop's own figures are held to hand-worked values by test_sim, test_pass and
 * test_async. */
#include <config.h>

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/config.h"
#include "model/cost.h"
#include "sim/passes/pass.h"
#include "sim/plan/plan.h"
#include "sim/schemes/scheme.h"
#include "sim/core/simulate.h"
#include "sim/core/simulate_internal.h"
#include "sim/core/vpipe.h"
#include "tests/check.h"
#include "tests/unit_config.h"
#include "util/err.h"

static int compared, fast_taken;

static bool same(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

static bool same_array(const double *a, const double *b, int n)
{
    return n == 0 || memcmp(a, b, (size_t)n * sizeof *a) == 0;
}

/* Every figure of a and b, bit for bit; prints the first difference. */
static bool same_result(const struct sim_result *a, const struct sim_result *b, const char *what)
{
    const char *diff = NULL;
    if (a->unit != b->unit || a->devices != b->devices || a->total != b->total)
        diff = "shape";
    else if (!same(a->step_time, b->step_time) || !same(a->throughput, b->throughput))
        diff = "step time or throughput";
    else if (!same(a->cap, b->cap) || a->oom_device != b->oom_device)
        diff = "cap or OOM device";
    else if (!same_array(a->start, b->start, a->total + 1) ||
             !same_array(a->end, b->end, a->total + 1))
        diff = "start or end";
    else if (!same_array(a->mem_after, b->mem_after, a->total + 1))
        diff = "mem_after";
    else if (!same(a->utilization, b->utilization) ||
             !same(a->steady_utilization, b->steady_utilization) ||
             !same(a->steady_t0, b->steady_t0) || !same(a->steady_t1, b->steady_t1))
        diff = "utilization";
    else if (a->stages != b->stages ||
             memcmp(a->staleness, b->staleness, (size_t)a->stages * sizeof(int)) != 0)
        diff = "staleness";
    for (int d = 0; diff == NULL && d < a->devices; d++) {
        const struct sim_device *x = &a->dev[d], *y = &b->dev[d];
        if (!same(x->busy, y->busy) || !same(x->bubble, y->bubble) ||
            !same(x->finish, y->finish))
            diff = "busy, bubble or finish";
        else if (!same(x->static_mem, y->static_mem) || !same(x->peak_dynamic, y->peak_dynamic) ||
                 !same(x->peak_mem, y->peak_mem) || !same(x->peak_stash, y->peak_stash) ||
                 x->max_stashed != y->max_stashed)
            diff = "memory peaks";
        else if (x->curve_len != y->curve_len || !same_array(x->curve_t, y->curve_t, x->curve_len) ||
                 !same_array(x->curve_mem, y->curve_mem, x->curve_len))
            diff = "memory curve";
        else if (!same(x->work, y->work) || !same(x->steady_work, y->steady_work))
            diff = "work";
    }
    if (diff)
        fprintf(stderr, "  %s: the fast path's %s differs from the general loop's\n", what, diff);
    return diff == NULL;
}

/* Simulates p both ways with cost (and durations dur, or NULL) and compares. want_fast: the
 * fast path must take it. */
static void compare(const struct plan *p, const struct cost_model *cost, const double *dur,
                    bool want_fast, const char *what)
{
    struct sim_result fast = {0}, gen = {0}, via = {0};
    struct mt_err e = {0};
    int rc = sim_run_general(p, cost, dur, &gen, &e);
    CHECK_EQ_INT(rc, MT_OK);
    if (rc != MT_OK) {
        fprintf(stderr, "  %s: %s\n", what, e.msg);
        return;
    }
    bool applies = sim_fast_applies(p);
    bool took = applies && sim_fast_run(p, cost, dur, &fast);
    CHECK(took == want_fast);
    if (took != want_fast)
        fprintf(stderr, "  %s: the fast path %s it\n", what, took ? "took" : "did not take");
    if (took) {
        fast_taken++;
        CHECK(same_result(&fast, &gen, what));
    }
    /* And the public entry, whichever path it takes. */
    CHECK_EQ_INT(sim_run_durations(p, cost, dur, &via, &e), MT_OK);
    CHECK(same_result(&via, &gen, what));
    compared++;
    sim_result_fini(&fast);
    sim_result_fini(&gen);
    sim_result_fini(&via);
}

/* The plan of c both ways, then (synchronous schemes) the plans of Mario's passes. */
static void compare_config(const struct config *c, bool passes)
{
    struct plan *p = NULL;
    struct mt_err e = {0};
    if (scheme_build(c, &p, &e) != MT_OK)
        return; /* a shape the scheme refuses */
    struct cost_model cost;
    CHECK_EQ_INT(scheme_costs(c, &cost, &e), MT_OK);
    char what[128];
    snprintf(what, sizeof what, "%s D=%d N=%d dp=%d %s", config_scheme_name(c->scheme),
             c->num_device, c->num_microbatches, c->cluster.dp, c->unit.enabled ? "unit" : "analytic");
    bool sync = !config_scheme_async(c->scheme);
    compare(p, &cost, NULL, sync && !c->blocking_send, what);
    if (passes && sync && !c->blocking_send) {
        struct pass_pipeline pl;
        if (pass_pipeline_run(p, &pl, &e) == MT_OK) {
            for (int i = 1; i < pl.n; i++) {
                char w2[160];
                snprintf(w2, sizeof w2, "%s, pass step %d", what, i);
                compare(pl.step[i].plan, &cost, NULL, true, w2);
            }
            pass_pipeline_fini(&pl);
        }
    }
    cost_model_fini(&cost);
    plan_free(p);
}

static void test_every_scheme(void)
{
    const enum scheme_id schemes[] = {SCHEME_V,    SCHEME_X,    SCHEME_W,   SCHEME_GPIPE,
                                      SCHEME_ZBH1, SCHEME_ZBH2, SCHEME_ZBV, SCHEME_ZBW,
                                      SCHEME_DUALPIPEV, SCHEME_ASYNC, SCHEME_PIPEDREAM};
    const int Ds[] = {1, 2, 4, 6, 8};
    for (size_t s = 0; s < sizeof schemes / sizeof *schemes; s++) {
        int before = fast_taken, all = compared;
        for (size_t i = 0; i < sizeof Ds / sizeof *Ds; i++)
            for (int k = 1; k <= 3; k++)
                for (int unit = 0; unit < 2; unit++) {
                    int D = Ds[i], N = k == 3 ? 2 * D + 1 : k * D;
                    struct config c = test_unit_config(schemes[s], D, N, 1, 2, 1);
                    c.unit.enabled = unit;
                    c.chunks = 2 + k % 2;
                    /* A cap some devices exceed, in bytes or M_theta. */
                    c.memory_per_device = k != 2 ? 0 : unit ? 1.5 : 4e9;
                    compare_config(&c, D <= 4);
                    c.cluster.dp = 2; /* allreduce groups across replicas */
                    c.num_device = 2 * D;
                    compare_config(&c, false);
                }
        /* Each scheme made plans, and the fast path took every synchronous one. */
        CHECK(compared > all);
        bool sync = !config_scheme_async(schemes[s]);
        CHECK(sync ? fast_taken - before == compared - all : fast_taken == before);
    }
}

/* The same plans with what only calibrations, replays and hand edits make. */
static void test_unusual_plans(void)
{
    struct config c = test_unit_config(SCHEME_X, 4, 8, 1, 2, 1);
    c.unit.enabled = false;
    struct plan *p = NULL;
    struct mt_err e = {0};
    CHECK_EQ_INT(scheme_build(&c, &p, &e), MT_OK);
    struct pass_pipeline pl;
    CHECK_EQ_INT(pass_pipeline_run(p, &pl, &e), MT_OK);
    const struct plan *ck = pass_pipeline_final(&pl)->plan;
    struct cost_model cost;
    CHECK_EQ_INT(scheme_costs(&c, &cost, &e), MT_OK);

    /* Calibrated transients: a FW's, CFW's, BW's scratch above what it keeps. */
    struct cost_model hot = cost;
    hot.stage = malloc((size_t)cost.num_stages * sizeof *hot.stage);
    memcpy(hot.stage, cost.stage, (size_t)cost.num_stages * sizeof *hot.stage);
    for (int s = 0; s < hot.num_stages; s++) {
        hot.stage[s].fw_work_bytes = 3e8 + s;
        hot.stage[s].cfw_peak_bytes = 2 * hot.stage[s].act;
        hot.stage[s].bw_work_bytes = 5e8;
    }
    compare(ck, &hot, NULL, true, "X with transients");
    free(hot.stage);

    /* Replayed durations: some measured, some NaN (the cost's), one 0. */
    int total = plan_total(ck);
    double *dur = malloc((size_t)total * sizeof *dur);
    srand(7);
    for (int i = 0; i < total; i++)
        dur[i] = i % 5 == 0 ? NAN : i % 17 == 0 ? 0 : 100.0 + rand() % 100000 / 7.0;
    compare(ck, &cost, dur, true, "X replayed");
    /* A negative duration: the general loop's business. */
    dur[total / 2] = -1;
    compare(ck, &cost, dur, false, "X with a negative duration");
    free(dur);

    /* Selective checkpointing: every CFW and its RC keep 1 of the stage's layers. */
    struct plan *sel = plan_clone(ck);
    int changed = 0;
    for (int d = 0; d < plan_devices(sel); d++)
        for (int i = 0; i < plan_len(sel, d); i++) {
            struct instr in = *plan_at(sel, d, i);
            if (in.op != OP_CFW && in.op != OP_RC)
                continue;
            in.ckpt_layers = 1;
            plan_remove(sel, d, i);
            plan_insert(sel, d, i, in);
            changed++;
        }
    CHECK(changed > 0);
    compare(sel, &cost, NULL, true, "X, selective checkpointing");
    plan_free(sel);
    cost_model_fini(&cost);
    pass_pipeline_fini(&pl);
    plan_free(p);

    /* An optimizer step moved between forwards and their backwards: staleness > 0. */
    c = test_unit_config(SCHEME_V, 2, 4, 1, 2, 1);
    CHECK_EQ_INT(scheme_build(&c, &p, &e), MT_OK);
    CHECK_EQ_INT(scheme_costs(&c, &cost, &e), MT_OK);
    int os = plan_find(p, 1, OP_OS, -1, 1), bw = plan_find(p, 1, OP_BW, 2, 1);
    CHECK(os > bw && bw > 0);
    plan_move(p, 1, os, bw);
    struct sim_result r;
    CHECK_EQ_INT(sim_run_general(p, &cost, NULL, &r, &e), MT_OK);
    CHECK(r.staleness[1] == 1);
    sim_result_fini(&r);
    compare(p, &cost, NULL, true, "V with an early optimizer step");
    plan_free(p);

    /* A send last on its device: its buffer is reaped at the end of the step. */
    cost_model_fini(&cost);
    c.unit.enabled = false; /* message buffers of bytes */
    CHECK_EQ_INT(scheme_costs(&c, &cost, &e), MT_OK);
    CHECK(cost.stage[1].msg_bytes > 0);
    CHECK_EQ_INT(scheme_build(&c, &p, &e), MT_OK);
    int n1 = plan_len(p, 1);
    CHECK(plan_at(p, 1, n1 - 2)->op == OP_SG && plan_at(p, 1, n1 - 1)->op == OP_OS);
    plan_move(p, 1, n1 - 1, n1 - 2);
    CHECK(plan_at(p, 1, n1 - 1)->op == OP_SG);
    compare(p, &cost, NULL, true, "V with a send last");
    plan_free(p);

    /* Blocking sends: the general loop's. */
    c.blocking_send = true;
    CHECK_EQ_INT(scheme_build(&c, &p, &e), MT_OK);
    CHECK(!sim_fast_applies(p));
    plan_free(p);
    cost_model_fini(&cost);
}

/* Plans that fail: the fast path gives them back, and sim_run words the general loop's error. */
static void test_failures(void)
{
    struct config c = test_unit_config(SCHEME_V, 2, 2, 1, 2, 1);
    struct plan *p = NULL;
    struct mt_err e = {0}, g = {0};
    struct cost_model cost;
    struct sim_result r;
    CHECK_EQ_INT(scheme_costs(&c, &cost, &e), MT_OK);
    /* A deadlock: device 0 waits for a gradient before sending the activation it needs. */
    CHECK_EQ_INT(scheme_build(&c, &p, &e), MT_OK);
    int sa = plan_find(p, 0, OP_SA, 0, 0), rg = plan_find(p, 0, OP_RG, 0, 0);
    plan_move(p, 0, rg, sa);
    CHECK(!sim_fast_run(p, &cost, NULL, &r));
    CHECK_EQ_INT(sim_run(p, &r, &e), MT_EINFEASIBLE);
    CHECK_EQ_INT(sim_run_general(p, &cost, NULL, &r, &g), MT_EINFEASIBLE);
    CHECK_STR_CONTAINS(e.msg, "deadlock: device 0 stalls at instruction");
    CHECK(strcmp(e.msg, g.msg) == 0);
    plan_free(p);
    /* A missing dependency: a backward without its forward. */
    CHECK_EQ_INT(scheme_build(&c, &p, &e), MT_OK);
    plan_remove(p, 1, plan_find(p, 1, OP_FW, 1, 1));
    CHECK(!sim_fast_run(p, &cost, NULL, &r));
    CHECK_EQ_INT(sim_run(p, &r, &e), MT_EINFEASIBLE);
    CHECK_STR_CONTAINS(e.msg, "which the plan lacks");
    plan_free(p);
    cost_model_fini(&cost);
}

/* The resolution kept with a plan (vpipe_resolve) goes with any change: a plan simulated,
 * changed and simulated again gets the changed plan's figures, not the first ones. */
static void test_kept_resolution(void)
{
    struct config c = test_unit_config(SCHEME_V, 4, 8, 1, 2, 1);
    struct plan *p = NULL;
    struct mt_err e = {0};
    struct sim_result a, b, g;
    CHECK_EQ_INT(scheme_build(&c, &p, &e), MT_OK);
    CHECK(plan_cache_get(p) == NULL);
    CHECK_EQ_INT(sim_run(p, &a, &e), MT_OK);
    const struct plan_cache *kept = plan_cache_get(p);
    CHECK(kept != NULL);
    const struct vpipe_resolved *rv = NULL;
    CHECK_EQ_INT(vpipe_resolve(p, &rv, &e), MT_OK);
    CHECK((const void *)rv == (const void *)kept); /* the same one, not built again */
    struct plan *q = plan_clone(p);
    CHECK(plan_cache_get(q) == NULL);
    plan_free(q);
    /* Device 0 runs FW4 before it waits for the first gradient: a forward earlier. */
    int fw = plan_find(p, 0, OP_FW, 4, 0), rg = plan_find(p, 0, OP_RG, 0, 0);
    CHECK(fw > rg && rg > 0);
    plan_move(p, 0, fw, rg);
    CHECK(plan_cache_get(p) == NULL);
    CHECK_EQ_INT(sim_run(p, &b, &e), MT_OK);
    struct cost_model cost;
    CHECK_EQ_INT(scheme_costs(&c, &cost, &e), MT_OK);
    CHECK_EQ_INT(sim_run_general(p, &cost, NULL, &g, &e), MT_OK);
    CHECK(same_result(&b, &g, "V 4 x 8 after a move"));
    CHECK(a.total == b.total && memcmp(a.start, b.start, (size_t)a.total * sizeof(double)) != 0);
    cost_model_fini(&cost);
    sim_result_fini(&a);
    sim_result_fini(&b);
    sim_result_fini(&g);
    /* An append drops it too. */
    CHECK_EQ_INT(sim_run(p, &a, &e), MT_OK);
    CHECK(plan_cache_get(p) != NULL);
    plan_append(p, 0, (struct instr){OP_FW, 1, 0, 0, -1, 0, 0, 0});
    CHECK(plan_cache_get(p) == NULL);
    CHECK_EQ_INT(sim_run(p, &b, &e), MT_EINFEASIBLE); /* a duplicate forward */
    CHECK_STR_CONTAINS(e.msg, "duplicate");
    sim_result_fini(&a);
    plan_free(p);
}

/* Threads simulating one plan at once (the tuner's workers share nothing, but a plan may be
 * read by several): each gets the same figures, and one resolution is kept. */
struct sim_thread {
    const struct plan *p;
    const struct sim_result *want;
    int bad;
};

static void *sim_thread_run(void *arg)
{
    struct sim_thread *t = arg;
    for (int i = 0; i < 20; i++) {
        struct sim_result r;
        struct mt_err e = {0};
        if (sim_run(t->p, &r, &e) != MT_OK || !same_result(&r, t->want, "a thread's"))
            t->bad++;
        sim_result_fini(&r);
    }
    return NULL;
}

static void test_threads(void)
{
    struct config c = test_unit_config(SCHEME_X, 8, 16, 1, 2, 1);
    c.unit.enabled = false;
    struct plan *p = NULL;
    struct mt_err e = {0};
    CHECK_EQ_INT(scheme_build(&c, &p, &e), MT_OK);
    struct cost_model cost;
    CHECK_EQ_INT(scheme_costs(&c, &cost, &e), MT_OK);
    struct sim_result want;
    CHECK_EQ_INT(sim_run_general(p, &cost, NULL, &want, &e), MT_OK);
    CHECK(plan_cache_get(p) == NULL);
    struct sim_thread t[4];
    pthread_t tid[4];
    for (int i = 0; i < 4; i++) {
        t[i] = (struct sim_thread){p, &want, 0};
        CHECK(pthread_create(&tid[i], NULL, sim_thread_run, &t[i]) == 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(tid[i], NULL);
        CHECK_EQ_INT(t[i].bad, 0);
    }
    CHECK(plan_cache_get(p) != NULL);
    sim_result_fini(&want);
    cost_model_fini(&cost);
    plan_free(p);
}

int main(void)
{
    test_kept_resolution();
    test_threads();
    test_every_scheme();
    test_unusual_plans();
    test_failures();
    printf("compared %d plans, %d on the fast path\n", compared, fast_taken);
    CHECK(compared >= 300);
    return check_report("test_sim_fast");
}
