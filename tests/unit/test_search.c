/* tests/unit/test_search.c: the schedule search (sim/search/search.h) against values known without
 * it, with unit costs (F = 1, B = 2, RC = 1, free p2p, memory in M_θ):
 *   - Figure 2's 1F1B, D = 4, N = 4: Mario's passes end at 22t; the lower bound is 21t (the
 *     last device: 3 + 12 + 6) and so is the no-checkpoint step, so a search that reaches 21t
 *     under 1.05 M_θ and 2.05 M_θ is optimal (the three recomputes of devices 0-2 fit in the
 *     bubbles); 4 x 8 at 2.05 M_θ reaches 33t = (N + D - 1)(F + B), the "no-checkpoint
 *     step at 2 M_θ";
 *   - the exact search (branch and bound) on hand-sized cases: (N + D - 1)(F + B) with no
 *     cap, and as the oracle: the search within 2 % of it on 39 small cases of every scheme
 *     family, where it finishes (V 4 x 8 at 1.05 M_θ: 36t, a forward kept between
 *     checkpoints; ZB-W, DualPipeV, W, ZB-V on 2 devices: a half step below the local
 *     search), not beaten by it in 1,000,000 nodes on two where it does not finish, and two
 *     known misses held where they are;
 *   - the evaluation gives the simulator's step, and the plans made validate;
 *   - over random shapes of every synchronous scheme, at the cap of the passes' own plan: the
 *     searched plan validates, fits, is never slower than the passes, never below the lower
 *     bound, crosses no channel's messages that its starts kept in order (NCCL matches them in
 *     order) and checkpoints whole stages;
 *   - the branch and bound within a frame (the large-neighbourhood moves): nothing free,
 *     nothing faster; everything free, faster but not below the optimum; some micro-batches
 *     free, the other ops
 *     keep their order and checkpoints;
 *   - the progress callback: never backwards, last at the budget, the same result; one that
 *     stops the search early still gets a plan that validates, fits and is never slower than
 *     the passes;
 *   - the pipeline's search step (rows, changes) and an asynchronous plan refused. */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/config.h"
#include "sim/core/bound.h"
#include "sim/passes/pass.h"
#include "sim/plan/plan.h"
#include "sim/schemes/scheme.h"
#include "sim/search/search.h"
#include "sim/search/search_internal.h"
#include "sim/core/simulate.h"
#include "sim/plan/validate.h"
#include "sim/core/vpipe.h"
#include "tests/check.h"
#include "tests/eval_vs_sim.h"
#include "tests/progress_log.h"
#include "tests/unit_config.h"
#include "util/err.h"

static struct config unit_config(enum scheme_id s, int D, int N, double cap)
{
    struct config c = test_unit_config(s, D, N, 1, 2, 1);
    c.memory_per_device = cap;
    c.chunks = 2;
    return c;
}

/* The pipeline with its search step; returns the search's step (-1 on failure). */
static double searched(const struct config *c, struct pass_pipeline *pl, long budget)
{
    struct mt_err e = {0};
    struct plan *p = NULL;
    memset(pl, 0, sizeof *pl);
    if (scheme_build(c, &p, &e) != MT_OK || pass_pipeline_run(p, pl, &e) != MT_OK) {
        fprintf(stderr, "  %s\n", e.msg);
        plan_free(p);
        return -1;
    }
    plan_free(p);
    struct search_opts o;
    search_opts_default(&o, c);
    o.budget = budget;
    if (pass_pipeline_search(pl, &o, &e) != MT_OK) {
        fprintf(stderr, "  %s\n", e.msg);
        return -1;
    }
    return pass_pipeline_final(pl)->sim.step_time;
}

static int fifo_violations(const struct plan *p)
{
    int D = plan_devices(p), bad = 0;
    for (int a = 0; a < D; a++)
        for (int b = 0; b < D; b++) {
            if (a == b)
                continue;
            int i = 0, j = 0, na = plan_len(p, a), nb = plan_len(p, b);
            for (;;) {
                while (i < na && !(vpipe_is_send(plan_at(p, a, i)->op) &&
                                   plan_at(p, a, i)->peer == b))
                    i++;
                while (j < nb && !(vpipe_is_recv(plan_at(p, b, j)->op) &&
                                   plan_at(p, b, j)->peer == a))
                    j++;
                if (i >= na || j >= nb) {
                    bad += (i < na) != (j < nb);
                    break;
                }
                const struct instr *s = plan_at(p, a, i), *r = plan_at(p, b, j);
                bad += s->mb != r->mb || (s->op == OP_SA) != (r->op == OP_RA);
                i++;
                j++;
            }
        }
    return bad;
}

static void test_figure2(void)
{
    struct pass_pipeline pl;
    for (int k = 0; k < 2; k++) {
        double cap = k ? 2.05 : 1.05;
        struct config c = unit_config(SCHEME_V, 4, 4, cap);
        CHECK_NEAR(searched(&c, &pl, 0), 21, 1e-9);
        const struct pass_step *ps = pass_pipeline_row(&pl, PASS_ROW_PREPOSE);
        const struct pass_step *ss = pass_pipeline_row(&pl, PASS_ROW_SEARCH);
        CHECK(ps != NULL && ss != NULL && ss == pass_pipeline_final(&pl));
        CHECK_NEAR(ps->sim.step_time, 22, 1e-9);
        CHECK(pass_sim_peak_max(&ss->sim) <= cap);
        CHECK(pl.searched && pl.search.fits && pl.search.improved);
        CHECK_EQ_INT(validate_plan(ss->plan, &(struct mt_err){0}), MT_OK);
        struct pass_summary rows[PASS_ROW__COUNT + 1];
        CHECK_EQ_INT(pass_summaries(&pl, NULL, rows), PASS_ROW__COUNT + 1);
        CHECK(strcmp(rows[PASS_ROW_SEARCH].name, "search") == 0);
        CHECK(ss->changes.n > 0 && ss->changes.step_out < ss->changes.step_in);
        pass_pipeline_fini(&pl);
    }
    /* at 2 M_θ per device the no-checkpoint step of 4 x 8 */
    struct config c = unit_config(SCHEME_V, 4, 8, 2.05);
    CHECK_NEAR(searched(&c, &pl, 0), 33, 1e-9);
    CHECK(pass_sim_peak_max(&pass_pipeline_final(&pl)->sim) <= 2.05);
    pass_pipeline_fini(&pl);
    /* no cap: the search has nothing to checkpoint */
    c = unit_config(SCHEME_V, 4, 8, 0);
    CHECK_NEAR(searched(&c, &pl, 0), 33, 1e-9);
    pass_pipeline_fini(&pl);
}

/* The compact evaluation gives sim_run's step; the diff of a pass is what the pass did. */
static void test_eval_and_diff(void)
{
    struct mt_err e = {0};
    enum scheme_id schemes[SCHEME__COUNT];
    int n_schemes = test_sync_schemes(schemes, false);
    int checked = 0;
    for (int k = 0; k < n_schemes; k++) {
        struct config c = unit_config(schemes[k], 4, 8, 2.05);
        c.unit.enabled = k % 2 == 0; /* analytic costs too: p2p, message buffers */
        c.memory_per_device = c.unit.enabled ? 2.05 : 0;
        struct plan *p = NULL;
        CHECK_EQ_INT(scheme_build(&c, &p, &e), MT_OK);
        struct search_ctx x;
        CHECK_EQ_INT(search_ctx_init(&x, p, c.memory_per_device, &e), MT_OK);
        struct search_sched s;
        struct search_eval ev;
        search_sched_init(&x, &s);
        search_eval_init(&x, &ev);
        for (unsigned seed = 0; seed < 6; seed++) {
            if (!search_list(&x, (int)seed % 3, seed % 4, seed, &s))
                continue;
            CHECK(search_eval_time(&x, &s, &ev));
            struct plan *q = search_sched_plan(&x, &s);
            struct sim_result r;
            CHECK_EQ_INT(validate_plan_sim(q, &r, &e), MT_OK);
            CHECK_NEAR(ev.makespan, r.step_time, 1e-9 * r.step_time);
            for (int d = 0; d < x.D; d++)
                CHECK_NEAR(search_eval_peak(&x, &s, d, &ev), r.dev[d].peak_mem,
                           1e-9 * r.dev[d].peak_mem);
            CHECK_EQ_INT(fifo_violations(q), 0);
            checked++;
            sim_result_fini(&r);
            plan_free(q);
        }
        search_eval_fini(&ev);
        search_sched_fini(&s);
        search_ctx_fini(&x);
        plan_free(p);
    }
    CHECK(checked >= 20);
    /* pass 1's changes, as the diff finds them: every forward retyped, an RC per forward */
    struct config c = unit_config(SCHEME_V, 4, 4, 0);
    struct plan *p = NULL, *q = NULL;
    struct pass_changes ch;
    pass_changes_init(&ch);
    CHECK_EQ_INT(scheme_build(&c, &p, &e), MT_OK);
    CHECK_EQ_INT(pass_run(PASS_CHECKPOINT, p, &q, &ch, &e), MT_OK);
    pass_changes_diff(p, q, &ch);
    int retype = 0, insert = 0, other = 0;
    for (int i = 0; i < ch.n; i++) {
        retype += ch.v[i].kind == PASS_CHANGE_RETYPE && ch.v[i].op == OP_CFW;
        insert += ch.v[i].kind == PASS_CHANGE_INSERT && ch.v[i].op == OP_RC;
        other += ch.v[i].kind == PASS_CHANGE_MOVE || ch.v[i].kind == PASS_CHANGE_REMOVE;
    }
    CHECK_EQ_INT(retype, 16);
    CHECK_EQ_INT(insert, 16);
    CHECK(other > 0); /* each BW is one place later: its RC came before it */
    pass_changes_diff(q, q, &ch);
    CHECK_EQ_INT(ch.n, 0);
    pass_changes_fini(&ch);
    plan_free(p);
    plan_free(q);
}

/* The compact evaluation held bit for bit to sim_run (issue 31 item 3: the search's timeline
 * keeps its own dependency graph and p2p latencies, as simulate_fast.c keeps its own loop and
 * test_sim_fast holds it): every synchronous scheme of the registry, unit and analytic costs
 * (p2p latencies, message buffers), dp 1 and 2 (the replicated AR tail), the base plan and
 * every step of Mario's passes read as schedules, and list schedules; the step, every device's
 * peak and every device's finish equal sim_run's of the plan the schedule makes. */
static void test_eval_bit_for_bit(void)
{
    struct mt_err e = {0};
    enum scheme_id schemes[SCHEME__COUNT];
    int n_schemes = test_sync_schemes(schemes, false), checked = 0, bad = 0, covered = 0;
    for (int k = 0; k < n_schemes; k++) {
        bool any = false;
        for (int v = 0; v < 4; v++) {
            int D = 4, N = 8;
            struct config c = unit_config(schemes[k], D, N, 0);
            c.unit.enabled = v % 2 == 0;
            c.cluster.dp = 1 + v / 2;
            test_fit_scheme(&c, &D, &N, 2);
            c.num_device = D * c.cluster.dp;
            c.num_microbatches = N;
            struct plan *p = NULL;
            struct pass_pipeline pl;
            if (scheme_build(&c, &p, &e) != MT_OK || pass_pipeline_run(p, &pl, &e) != MT_OK) {
                fprintf(stderr, "  %s: %s\n", config_scheme_name(schemes[k]), e.msg);
                bad++;
                plan_free(p);
                continue;
            }
            struct search_ctx x;
            CHECK_EQ_INT(search_ctx_init(&x, p, 0, &e), MT_OK);
            struct search_sched s;
            struct search_eval ev;
            search_sched_init(&x, &s);
            search_eval_init(&x, &ev);
            for (int i = 0; i < pl.n + 3; i++) {
                if (i < pl.n ? search_sched_from_plan(&x, pl.step[i].plan, &s, NULL) != MT_OK
                             : !search_list(&x, i - pl.n, 0, (unsigned)i, &s))
                    continue;
                struct plan *q = search_sched_plan(&x, &s);
                struct sim_result r;
                bool ran = search_eval_time(&x, &s, &ev);
                if (validate_plan_sim(q, &r, &e) != MT_OK) {
                    CHECK(!ran);
                    plan_free(q);
                    continue;
                }
                int f = eval_vs_sim(&x, &s, &ev, ran, &r);
                if (f) {
                    bad++;
                    fprintf(stderr, "  %s dp %d unit %d plan %d: step %.17g against %.17g\n",
                            config_scheme_name(schemes[k]), c.cluster.dp, c.unit.enabled, i,
                            ev.makespan, r.step_time);
                }
                checked++;
                any = true;
                sim_result_fini(&r);
                plan_free(q);
            }
            search_eval_fini(&ev);
            search_sched_fini(&s);
            search_ctx_fini(&x);
            pass_pipeline_fini(&pl);
            plan_free(p);
        }
        covered += any;
    }
    printf("evaluation: %d schedules of %d schemes bit for bit with sim_run\n", checked, covered);
    CHECK_EQ_INT(bad, 0);
    CHECK_EQ_INT(covered, n_schemes);
}

/* The oracle. Each case: its scheme, D, N and cap; the search must be within 2 % of the exact
 * optimum (over the schedules that keep each lane's micro-batch order, the search's class). */
struct oracle_case {
    enum scheme_id s;
    int D, N;
    double cap;
};

static void test_exact(void)
{
    struct mt_err e = {0};
    /* no cap: the exact optimum is (N + D - 1)(F + B), the lower bound */
    for (int D = 2; D <= 3; D++)
        for (int N = 2; N <= 4; N++) {
            struct config c = unit_config(SCHEME_V, D, N, 0);
            struct plan *p = NULL, *best = NULL;
            CHECK_EQ_INT(scheme_build(&c, &p, &e), MT_OK);
            struct search_opts o;
            search_opts_default(&o, &c);
            struct search_exact_result xr;
            CHECK_EQ_INT(search_exact(p, &o, 0, &best, &xr, &e), MT_OK);
            CHECK(xr.finished && xr.found);
            CHECK_NEAR(xr.best, (N + D - 1) * 3.0, 1e-9);
            struct sim_result r;
            CHECK_EQ_INT(validate_plan_sim(best, &r, &e), MT_OK);
            CHECK_NEAR(r.step_time, xr.best, 1e-9);
            sim_result_fini(&r);
            plan_free(best);
            plan_free(p);
        }
    static const struct oracle_case cases[] = {
        {SCHEME_V, 2, 4, 1.05},     {SCHEME_V, 2, 8, 1.05},     {SCHEME_V, 2, 8, 2.05},
        {SCHEME_V, 3, 4, 1.05},     {SCHEME_V, 3, 6, 1.05},     {SCHEME_V, 3, 6, 2.05},
        {SCHEME_V, 4, 4, 1.05},     {SCHEME_V, 4, 4, 2.05},     {SCHEME_V, 4, 5, 1.05},
        {SCHEME_V, 4, 6, 1.05},     {SCHEME_V, 4, 6, 2.05},     {SCHEME_GPIPE, 3, 4, 1.05},
        {SCHEME_GPIPE, 4, 4, 1.05}, {SCHEME_X, 2, 4, 2.05},     {SCHEME_X, 4, 4, 1.05},
        {SCHEME_W, 2, 4, 2.05},     {SCHEME_ZBH1, 2, 4, 2.05},  {SCHEME_ZBH1, 3, 3, 2.05},
        {SCHEME_ZBH2, 2, 4, 2.05},  {SCHEME_ZBV, 2, 4, 2.05},
        /* the five the search missed before the keep move and the suffix re-optimisation
         * (37t, 37t, 15t, 13.5t, 13t against 36t, 36t, 14.5t, 13t, 12.5t) */
        {SCHEME_V, 4, 8, 1.05},     {SCHEME_GPIPE, 4, 8, 1.05}, {SCHEME_W, 2, 4, 1.05},
        {SCHEME_ZBW, 2, 4, 2.05},   {SCHEME_DUALPIPEV, 2, 4, 2.05},
        /* more small ones */
        {SCHEME_V, 3, 8, 1.05},     {SCHEME_V, 4, 8, 2.05},     {SCHEME_X, 2, 6, 2.05},
        {SCHEME_W, 2, 4, 1.55},     {SCHEME_W, 3, 3, 2.05},     {SCHEME_ZBW, 2, 4, 1.55},
        {SCHEME_ZBV, 2, 3, 1.05},   {SCHEME_ZBV, 2, 5, 2.05},   {SCHEME_ZBH1, 2, 6, 2.05},
        {SCHEME_DUALPIPEV, 2, 5, 2.05}, {SCHEME_DUALPIPEV, 2, 6, 2.05},
        /* three of the seven a sweep of 309 small cases still found over 2 % before the list
         * schedules finished their micro-batches within the cap and the large-neighbourhood
         * moves re-placed whole micro-batches (14t, 19.5t, 14.5t against 13.5t, 19t, 14t) */
        {SCHEME_ZBV, 2, 4, 1.55},   {SCHEME_ZBV, 2, 6, 2.05},   {SCHEME_DUALPIPEV, 2, 4, 1.05},
    };
    int finished = 0, within = 0, n = (int)(sizeof cases / sizeof cases[0]);
    for (int i = 0; i < n; i++) {
        const struct oracle_case *k = &cases[i];
        struct config c = unit_config(k->s, k->D, k->N, k->cap);
        struct pass_pipeline pl;
        double got = searched(&c, &pl, 0);
        CHECK(got > 0);
        struct search_opts o;
        search_opts_default(&o, &c);
        o.budget = 3000000;
        struct search_exact_result xr;
        struct plan *best = NULL;
        CHECK_EQ_INT(search_exact(pl.step[0].plan, &o, got, &best, &xr, &e), MT_OK);
        double opt = xr.found ? xr.best : got;
        finished += xr.finished;
        within += xr.finished && got <= opt * 1.02 + 1e-9;
        if (xr.found) { /* what the oracle found runs and fits */
            struct sim_result r;
            CHECK_EQ_INT(validate_plan_sim(best, &r, &e), MT_OK);
            CHECK_NEAR(r.step_time, xr.best, 1e-9);
            CHECK(pass_sim_peak_max(&r) <= k->cap);
            sim_result_fini(&r);
        }
        if (!xr.finished || got > opt * 1.02 + 1e-9)
            fprintf(stderr, "  %s D=%d N=%d cap %.2f: search %g, exact %g (%s, %ld nodes)\n",
                    config_scheme_name(k->s), k->D, k->N, k->cap, got, opt,
                    xr.finished ? "finished" : "stopped", xr.nodes);
        plan_free(best);
        pass_pipeline_fini(&pl);
    }
    printf("oracle: %d cases, %d finished, the search within 2%% of it in %d\n", n, finished,
           within);
    CHECK_EQ_INT(finished, n);
    CHECK_EQ_INT(within, n);
    /* Two more of the seven, where the branch and bound does not finish in millions of nodes:
     * seeded with the search's step, it finds nothing faster in 1,000,000 nodes (it found a
     * half step below the search's 24t and 23t before) */
    static const struct oracle_case open_cases[] = {{SCHEME_W, 3, 6, 1.05},
                                                    {SCHEME_W, 3, 6, 1.55}};
    static const double open_step[] = {23.5, 22.5};
    for (int i = 0; i < 2; i++) {
        const struct oracle_case *k = &open_cases[i];
        struct config c = unit_config(k->s, k->D, k->N, k->cap);
        struct pass_pipeline pl;
        double got = searched(&c, &pl, 0);
        CHECK_NEAR(got, open_step[i], 1e-9);
        struct search_opts o;
        search_opts_default(&o, &c);
        o.budget = 1000000;
        struct search_exact_result xr;
        CHECK_EQ_INT(search_exact(pl.step[0].plan, &o, got, NULL, &xr, &e), MT_OK);
        CHECK(!xr.found);
        if (xr.found)
            fprintf(stderr, "  %s D=%d N=%d cap %.2f: search %g, the branch and bound %g\n",
                    config_scheme_name(k->s), k->D, k->N, k->cap, got, xr.best);
        pass_pipeline_fini(&pl);
    }
    /* The last two of the seven, still a half step over (docs/search.md says why), held
     * there: W 3 x 6 at 2.05 M_θ, 21.5t against the optimum 21t (the branch and bound
     * finishes); DualPipeV 2 x 5 at 1.05 M_θ, 18t against 17.5t (found by the branch and bound
     * in 3,000,000 nodes, proved optimal in 12,000,000; 18.5t before) */
    static const struct oracle_case held[] = {{SCHEME_W, 3, 6, 2.05},
                                              {SCHEME_DUALPIPEV, 2, 5, 1.05}};
    static const double held_step[] = {21.5, 18};
    for (int i = 0; i < 2; i++) {
        struct config c = unit_config(held[i].s, held[i].D, held[i].N, held[i].cap);
        struct pass_pipeline pl;
        CHECK(searched(&c, &pl, 0) <= held_step[i] + 1e-9);
        pass_pipeline_fini(&pl);
    }
}

static void test_random(void)
{
    srand(418);
    enum scheme_id schemes[SCHEME__COUNT];
    int n_schemes = test_sync_schemes(schemes, false);
    int runs = 0, faster = 0, bad = 0;
    for (int trial = 0; trial < 60; trial++) {
        enum scheme_id s = schemes[rand() % n_schemes];
        int D = 2 + rand() % 4, N = 2 + rand() % 7;
        struct config c = test_unit_config(s, D, N, 0.5 + rand() % 3, 1 + rand() % 3,
                                           0.5 * (rand() % 3));
        c.unit.enabled = rand() % 3 != 0;
        c.cluster.dp = 1 + (rand() % 4 == 0);
        if (scheme_registry_get(s)->chunks == SCHEME_CHUNKS_CONFIG)
            test_fit_scheme(&c, &D, &N, 1 + rand() % 2);
        else
            test_fit_scheme(&c, &D, &N, 1);
        c.num_device = D * c.cluster.dp;
        c.num_microbatches = N;
        struct plan *base = NULL;
        struct mt_err e = {0};
        struct pass_pipeline pl;
        if (scheme_build(&c, &base, &e) != MT_OK || pass_pipeline_run(base, &pl, &e) != MT_OK) {
            plan_free(base);
            continue;
        }
        const struct pass_step *pp = pass_pipeline_final(&pl);
        struct search_opts o;
        search_opts_default(&o, &c);
        o.cap = pass_sim_peak_max(&pp->sim); /* the passes' plan fits */
        o.budget = 1500;
        double pass_step = pp->sim.step_time;
        /* ZB-V's and DualPipeV's own orders (torch's) cross messages on a channel: the search
         * adds no crossing to what its starts had */
        int crossings = 0;
        for (int i = 0; i < pl.n; i++) {
            int v = fifo_violations(pl.step[i].plan);
            crossings = v > crossings ? v : crossings;
        }
        if (pass_pipeline_search(&pl, &o, &e) != MT_OK) {
            CHECK(0);
            fprintf(stderr, "  trial %d: %s\n", trial, e.msg);
            pass_pipeline_fini(&pl);
            plan_free(base);
            continue;
        }
        runs++;
        const struct pass_step *ss = pass_pipeline_final(&pl);
        struct bound_result b;
        struct cost_model cost;
        CHECK_EQ_INT(scheme_costs(&c, &cost, &e), MT_OK);
        CHECK_EQ_INT(bound_compute(base, &cost, o.cap, &b, &e), MT_OK);
        cost_model_fini(&cost);
        int whole = 0;
        for (int d = 0; d < plan_devices(ss->plan); d++)
            for (int i = 0; i < plan_len(ss->plan, d); i++)
                whole += plan_at(ss->plan, d, i)->ckpt_layers != 0;
        int f = 0;
        f += validate_plan(ss->plan, &e) != MT_OK;
        f += pass_sim_peak_max(&ss->sim) > o.cap;
        f += ss->sim.step_time > pass_step * (1 + 1e-12);
        f += bound_value(&b, true) > ss->sim.step_time * (1 + 1e-9);
        f += fifo_violations(ss->plan) > crossings;
        f += whole != 0;
        f += !pl.search.fits;
        faster += ss->sim.step_time < pass_step * (1 - 1e-9);
        if (f) {
            bad++;
            fprintf(stderr, "  trial %d %s D=%d N=%d unit=%d: %d failures (step %g, passes %g)\n",
                    trial, config_scheme_name(s), D, N, c.unit.enabled, f, ss->sim.step_time,
                    pass_step);
        }
        pass_pipeline_fini(&pl);
        plan_free(base);
    }
    printf("random: %d searches, %d faster than the passes at their own peak\n", runs, faster);
    CHECK_EQ_INT(bad, 0);
    CHECK(runs >= 50);
    CHECK(faster >= runs / 4);
}

static void test_refusals(void)
{
    struct mt_err e = {0};
    struct config c = unit_config(SCHEME_ASYNC, 4, 8, 0);
    struct plan *p = NULL, *out = NULL;
    CHECK_EQ_INT(scheme_build(&c, &p, &e), MT_OK);
    const struct plan *seeds[1] = {p};
    struct search_opts o;
    search_opts_default(&o, &c);
    struct search_stats st;
    CHECK_EQ_INT(search_run(seeds, NULL, 1, &o, &out, NULL, &st, &e), MT_EUNSUPPORTED);
    CHECK(out == NULL);
    CHECK_STR_CONTAINS(e.msg, "synchronous");
    plan_free(p);
    /* a cap nothing fits: the plan of lowest peak, marked as not fitting */
    c = unit_config(SCHEME_V, 4, 4, 0.5);
    struct pass_pipeline pl;
    CHECK(searched(&c, &pl, 500) > 0);
    CHECK(!pl.search.fits && !pl.search.improved);
    CHECK(pass_sim_peak_max(&pass_pipeline_final(&pl)->sim) < 1.01);
    pass_pipeline_fini(&pl);
}

/* The large-neighbourhood moves' frames (sim/search/search_internal.h): the branch and bound within a
 * schedule, some micro-batches' ops free. Figure 2's 1F1B (4 x 4) at 1.05 M_θ, from the passes'
 * plan (22t): nothing free, nothing faster; everything free, the optimum 21t (the bound); the
 * first two micro-batches free, 21t too, every other op keeping its order on its device and its
 * checkpoint flag. */
static void test_frame(void)
{
    struct mt_err e = {0};
    struct config c = unit_config(SCHEME_V, 4, 4, 1.05);
    struct plan *base = NULL;
    struct pass_pipeline pl;
    CHECK_EQ_INT(scheme_build(&c, &base, &e), MT_OK);
    CHECK_EQ_INT(pass_pipeline_run(base, &pl, &e), MT_OK);
    const struct pass_step *pp = pass_pipeline_row(&pl, PASS_ROW_PREPOSE);
    CHECK_NEAR(pp->sim.step_time, 22, 1e-9);
    struct search_ctx x;
    CHECK_EQ_INT(search_ctx_init(&x, base, 1.05, &e), MT_OK);
    struct search_sched s, out;
    search_sched_init(&x, &s);
    search_sched_init(&x, &out);
    CHECK_EQ_INT(search_sched_from_plan(&x, pp->plan, &s, &e), MT_OK);
    unsigned char *fo = calloc((size_t)x.n_ops + 1, 1);
    struct search_frame fr = {&s, fo};
    struct search_exact_result xr;
    CHECK(!search_exact_ctx(&x, 100000, 22, &fr, &out, &xr));
    CHECK(xr.finished);
    memset(fo, 1, (size_t)x.n_ops);
    CHECK(search_exact_ctx(&x, 100000, 22, &fr, &out, &xr));
    CHECK(xr.finished);
    CHECK_NEAR(xr.best, 21, 1e-9);
    for (int op = 0; op < x.n_ops; op++)
        fo[op] = x.op[op].mb < 2;
    CHECK(search_exact_ctx(&x, 100000, 22, &fr, &out, &xr));
    if (xr.found) {
        CHECK_NEAR(xr.best, 21, 1e-9);
        int kept_moved = 0;
        for (int d = 0; d < x.D; d++) { /* the kept ops of d, in order, in both */
            int i = 0, j = 0;
            const int *a = s.ord + (size_t)d * x.stride, *b = out.ord + (size_t)d * x.stride;
            for (;;) {
                while (i < s.len[d] && x.op[a[i]].mb < 2)
                    i++;
                while (j < out.len[d] && x.op[b[j]].mb < 2)
                    j++;
                if (i >= s.len[d] || j >= out.len[d]) {
                    kept_moved += (i < s.len[d]) != (j < out.len[d]);
                    break;
                }
                kept_moved += a[i++] != b[j++];
            }
        }
        CHECK_EQ_INT(kept_moved, 0);
        for (int key = 0; key < x.keys; key++)
            if (x.op[SEARCH_OP(key, SK_F)].mb >= 2)
                CHECK_EQ_INT(out.ck[key], s.ck[key]);
    }
    free(fo);
    search_sched_fini(&s);
    search_sched_fini(&out);
    search_ctx_fini(&x);
    pass_pipeline_fini(&pl);
    plan_free(base);
}

/* The progress callback (search_opts.progress): called as the search goes, never backwards,
 * about every SEARCH_PROGRESS_EVERY evaluations and last with done = budget, without changing
 * the result; a callback that says stop ends the search early with a plan that still validates,
 * fits and is never slower than the passes (V 8 x 16 at 1.05 M_θ: the passes' 82t). */
/* A schedule at the lower bound under the cap is optimal: the search stops there. 1F1B 8 x 16,
 * unit costs 1,2,1 at 1.05 M_θ: the periodic start and its short descent reach 78 t, the bound
 * (test_bound: 3(D - 2) + 15N/4), within a few hundred evaluations of a budget of 11,718. */
static void test_ends_at_the_bound(void)
{
    struct mt_err e = {0};
    struct config c = unit_config(SCHEME_V, 8, 16, 1.05);
    struct plan *base = NULL;
    struct pass_pipeline pl;
    CHECK_EQ_INT(scheme_build(&c, &base, &e), MT_OK);
    CHECK_EQ_INT(pass_pipeline_run(base, &pl, &e), MT_OK);
    struct search_opts o;
    search_opts_default(&o, &c);
    CHECK_EQ_INT(pass_pipeline_search(&pl, &o, &e), MT_OK);
    CHECK_NEAR(pass_pipeline_final(&pl)->sim.step_time, 78, 1e-9);
    CHECK(pl.search.evals < 1000);
    pass_pipeline_fini(&pl);
    plan_free(base);
}

static void test_progress(void)
{
    struct mt_err e = {0};
    /* 2.05 M_θ: the search runs its whole budget (at 1.05 M_θ its periodic start meets the
     * bound and it ends at once: test_ends_at_the_bound) */
    struct config c = unit_config(SCHEME_V, 8, 16, 2.05);
    struct plan *base = NULL;
    struct pass_pipeline pl[3];
    CHECK_EQ_INT(scheme_build(&c, &base, &e), MT_OK);
    struct progress_log g[3] = {{0}, {0}, {0, 3, 0, 0, false}};
    for (int k = 0; k < 3; k++) {
        CHECK_EQ_INT(pass_pipeline_run(base, &pl[k], &e), MT_OK);
        struct search_opts o;
        search_opts_default(&o, &c);
        if (k > 0) {
            o.progress = progress_cb;
            o.progress_ctx = &g[k];
        }
        CHECK_EQ_INT(pass_pipeline_search(&pl[k], &o, &e), MT_OK);
    }
    long budget = pl[0].search.evals; /* what the search without a callback spent */
    /* the same search, reported as it goes */
    CHECK_NEAR(pass_pipeline_final(&pl[1])->sim.step_time,
               pass_pipeline_final(&pl[0])->sim.step_time, 1e-9);
    CHECK_EQ_INT((int)pl[1].search.evals, (int)budget);
    CHECK(!pl[1].search.stopped && !g[1].backwards);
    long want = search_budget_default(16 * 8 * SK__COUNT); /* 512 ops: 11,718 */
    CHECK(g[1].calls >= (int)(want / SEARCH_PROGRESS_EVERY / 2));
    CHECK_EQ_INT((int)g[1].last_done, (int)want);
    CHECK_EQ_INT((int)g[1].last_budget, (int)want);
    /* stopped at the third call: early, and still a plan that validates and fits */
    const struct pass_step *ss = pass_pipeline_final(&pl[2]);
    CHECK(pl[2].search.stopped && g[2].calls == 3);
    CHECK(pl[2].search.evals < budget / 4);
    CHECK_EQ_INT(validate_plan(ss->plan, &e), MT_OK);
    CHECK(pass_sim_peak_max(&ss->sim) <= 2.05);
    CHECK(ss->sim.step_time <= pass_pipeline_row(&pl[2], PASS_ROW_PREPOSE)->sim.step_time);
    for (int k = 0; k < 3; k++)
        pass_pipeline_fini(&pl[k]);
    plan_free(base);
}

/* A large plan reports as often for the same work (search_opts.progress): 1F1B 8 x 512 has
 * 8 x 512 x 3 = 12,288 ops, so a report every 256 x 512 / 12,288 = 10 evaluations (256 at 512
 * ops), from the set-up on (its repair of the base and list schedules report their work too);
 * a stop at the first report ends the search there with a plan that validates and fits. */
static void test_progress_large(void)
{
    struct mt_err e = {0};
    struct config c = unit_config(SCHEME_V, 8, 512, 2.05);
    struct plan *base = NULL;
    struct pass_pipeline pl;
    CHECK_EQ_INT(scheme_build(&c, &base, &e), MT_OK);
    CHECK_EQ_INT(pass_pipeline_run(base, &pl, &e), MT_OK);
    struct progress_log g = {0, 1, 0, 0, false};
    struct search_opts o;
    search_opts_default(&o, &c);
    o.progress = progress_cb;
    o.progress_ctx = &g;
    CHECK_EQ_INT(pass_pipeline_search(&pl, &o, &e), MT_OK);
    CHECK(pl.search.stopped && g.calls == 1 && !g.backwards);
    CHECK(g.last_done <= 10);    /* at the first report, 10 evaluations or fewer were made */
    CHECK(pl.search.evals < 400); /* of 4,000: the budget's floor */
    const struct pass_step *ss = pass_pipeline_final(&pl);
    CHECK_EQ_INT(validate_plan(ss->plan, &e), MT_OK);
    CHECK(pass_sim_peak_max(&ss->sim) <= 2.05 * (1 + 1e-12));
    pass_pipeline_fini(&pl);
    plan_free(base);
}

/* The proved optima of 1F1B at 1.05 M_θ, unit costs 1,2,1 (issue 28): 66t at 4 x 16, 78t at
 * 8 x 16, 36t at 4 x 8. The lower bound proves them (tests/unit/test_bound.c works them out by
 * hand: 3(D - 2) + 15N / 4, device D - 2 recomputing 3N / 4); the search reaches each, at
 * every seed tried (it stopped at 68t and 80t before the periodic starts). */
static void test_proved_optima(void)
{
    static const struct { int D, N; double opt; } cases[] = {{4, 16, 66}, {8, 16, 78},
                                                             {4, 8, 36}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct config c = unit_config(SCHEME_V, cases[i].D, cases[i].N, 1.05);
        struct mt_err e = {0};
        struct plan *base = NULL;
        struct pass_pipeline pl;
        CHECK_EQ_INT(scheme_build(&c, &base, &e), MT_OK);
        struct bound_result b;
        CHECK_EQ_INT(bound_plan(base, &b, &e), MT_OK);
        CHECK_NEAR(bound_value(&b, true), cases[i].opt, 1e-9);
        for (unsigned seed = 1; seed <= 4; seed++) {
            CHECK_EQ_INT(pass_pipeline_run(base, &pl, &e), MT_OK);
            struct search_opts o;
            search_opts_default(&o, &c);
            o.seed = seed * 7 + 11;
            CHECK_EQ_INT(pass_pipeline_search(&pl, &o, &e), MT_OK);
            const struct pass_step *ss = pass_pipeline_final(&pl);
            CHECK(ss->sim.step_time <= cases[i].opt * 1.02);
            CHECK(ss->sim.step_time >= cases[i].opt - 1e-9);
            CHECK(pass_sim_peak_max(&ss->sim) <= 2.05);
            CHECK_EQ_INT(validate_plan(ss->plan, &e), MT_OK);
            if (ss->sim.step_time > cases[i].opt + 1e-9)
                fprintf(stderr, "  %d x %d seed %u: %g against %g\n", cases[i].D, cases[i].N,
                        o.seed, ss->sim.step_time, cases[i].opt);
            pass_pipeline_fini(&pl);
        }
        plan_free(base);
    }
}

int main(void)
{
    test_figure2();
    test_proved_optima();
    test_eval_and_diff();
    test_eval_bit_for_bit();
    test_exact();
    test_frame();
    test_ends_at_the_bound();
    test_progress();
    test_progress_large();
    test_random();
    test_refusals();
    return check_report("test_search");
}
