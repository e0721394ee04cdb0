/* tests/unit/test_tune.c: the tuner on small grids whose answers are known by hand:
 * the enumerated grid, throughputs under unit costs from the closed forms
 * (V and GPipe: (N + pp - 1)(F + B); Chimera with F = B: 2N + pp - 2; interleaved:
 * N (F + B) + (pp - 1)(F + B) / v), a memory cap that makes exactly the candidates whose
 * closed-form peak exceeds it infeasible, the same answer on 1 and 2 threads, and Mario's
 * checkpointing (sim/passes/pass.h) making feasible what the cap forbids without it. */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/config.h"
#include "model/cost.h"
#include "model/presets.h"
#include "sim/schemes/scheme.h"
#include "sim/tune/tune.h"
#include "tests/check.h"
#include "util/err.h"

static double closed_form_step(const struct tune_candidate *k, int G, double F, double B)
{
    int N = G / (k->mbs * k->dp), D = k->pp;
    switch (k->scheme) {
    case SCHEME_V:
    case SCHEME_GPIPE: return (N + D - 1) * (F + B);
    case SCHEME_X: return 2 * N * F + (D - 2) * F; /* F == B, N == D multiples */
    case SCHEME_W: return N * (F + B) + (D - 1) * (F + B) / k->chunks;
    /* B = W = half the backward: N(F + B + W) + (D - 1)(F + B - W), N >= D (tests/unit/test_zb) */
    case SCHEME_ZBH1: return N >= D ? N * (F + B) + (D - 1) * F : -1;
    default: return -1; /* the other split schemes: their closed forms in tests/unit/test_zb */
    }
}

static void test_unit_grid(void)
{
    struct config c;
    config_default(&c);
    c.num_device = 4;
    c.global_batch_size = 16;
    c.unit = (struct unit_costs){true, 1, 1, 1, 0, 1, 0};
    struct tune_opts o;
    tune_opts_default(&o);
    o.min_pp = 2;
    o.optimize = NULL; /* checkpointing off only */
    o.threads = 1;
    struct tune_result r;
    struct mt_err e = {0};
    CHECK_EQ_INT(tune_grid_search(&c, &o, &r, &e), MT_OK);
    /* pp in {2, 4} (dp 2, 1); unit costs are per micro-batch whatever its size, so the grid
     * keeps the config's micro-batch size, 1 (N = 8 per replica on pp 2, 16 on pp 4): V, X,
     * GPipe, ZB-H1, ZB-H2, ZB-V, DualPipeV, ZBVZeroBubble, V-Half, V-Min one each, W and
     * ZB-W with chunks 2 and 4. */
    int per_scheme = 2;
    CHECK_EQ_INT(r.n, per_scheme * 10 + per_scheme * 2 * 2);
    int checked = 0;
    for (int i = 0; i < r.n; i++) {
        const struct tune_candidate *k = &r.cand[i];
        CHECK_EQ_INT(k->mbs, 1);
        int N = c.global_batch_size / (k->mbs * k->dp);
        bool x_ok = k->scheme != SCHEME_X || (N % 2 == 0 && N % k->pp == 0);
        bool w_ok = k->scheme != SCHEME_W || (N % k->pp == 0 && N >= 2 * k->pp);
        if (k->status != TUNE_OK || !x_ok || !w_ok)
            continue;
        double step = closed_form_step(k, c.global_batch_size, 1, 1);
        if (step < 0)
            continue;
        CHECK_NEAR(k->step_time, step, 1e-9);
        /* dp_efficiency scales the data-parallel throughput. */
        double eff = k->dp > 1 ? c.cluster.dp_efficiency : 1;
        CHECK_NEAR(k->throughput, c.global_batch_size / step * eff, 1e-9);
        checked++;
    }
    CHECK_EQ_INT(checked, 12); /* V, GPipe, X, ZB-H1 on both depths, W with both chunk counts */
    /* The best by the closed forms: Chimera on pp 2 (dp 2, N = 8) takes 2NF + (D - 2)F = 16 t
     * for 16 samples x 0.95; 1F1B there (N + D - 1)(F + B) = 18 t; on pp 4 (N = 16) Chimera
     * 32 + 2 = 34 t for 16 samples, below 16 / 16 x 0.95. */
    CHECK(r.best >= 0);
    if (r.best >= 0) {
        CHECK_EQ_INT(r.cand[r.best].scheme, SCHEME_X);
        CHECK_EQ_INT(r.cand[r.best].pp, 2);
        CHECK_NEAR(r.cand[r.best].step_time, 16, 1e-12);
        CHECK_NEAR(r.cand[r.best].throughput, 16.0 / 16 * c.cluster.dp_efficiency, 1e-12);
    }
    for (int i = 0; i < r.n; i++)
        if (r.cand[i].scheme == SCHEME_V && r.cand[i].pp == 2)
            CHECK_NEAR(r.cand[i].step_time, 18, 1e-12);
    tune_result_fini(&r);
}

/* Closed-form baseline peak for V and GPipe: static + in-flight x activations + the message
 * buffers held at that moment (sim/core/simulate.c: a send's buffer is reaped after the next
 * instruction), maximised over devices (*dev_out: which). A stage that sends forward holds
 * two at its peak: while the first backward's gradient arrives (RG) its last output's send is
 * not reaped yet; the last stage holds one (its input while its forward runs, its input
 * gradient while its backward runs); a single stage none. */
static double closed_form_peak_dev(const struct config *base, const struct tune_candidate *k,
                                   int *dev_out)
{
    struct config c;
    tune_candidate_config(base, k, &c);
    struct cost_model cm;
    struct mt_err e = {0};
    if (scheme_costs(&c, &cm, &e) != MT_OK)
        return -1;
    int N = config_microbatches(&c);
    double peak = -1;
    for (int d = 0; d < k->pp; d++) {
        int in_flight = k->scheme == SCHEME_GPIPE ? N : (k->pp - d < N ? k->pp - d : N);
        int buffers = d < k->pp - 1 ? 2 : d > 0;
        double m = cm.stage[d].static_bytes + in_flight * cm.stage[d].act +
                   buffers * cm.stage[d].msg_bytes;
        if (m > peak) {
            peak = m;
            *dev_out = d;
        }
    }
    cost_model_fini(&cm);
    return peak;
}

static double closed_form_peak(const struct config *base, const struct tune_candidate *k)
{
    int dev;
    return closed_form_peak_dev(base, k, &dev);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void test_memory_cap(void)
{
    struct config c;
    config_default(&c); /* GPT3-1.6B, A100-40G */
    c.num_device = 8;
    c.global_batch_size = 32;
    struct tune_opts o;
    tune_opts_default(&o);
    o.optimize = NULL;
    o.min_pp = 4;
    o.max_mbs = 4;
    /* The cap: the median closed-form peak of the V and GPipe candidates, so it splits them. */
    double peaks[64];
    int np = 0;
    for (int pp = 4; pp <= 8; pp *= 2)
        for (int mbs = 1; mbs <= 4; mbs *= 2)
            for (int s = 0; s < 2; s++) {
                struct tune_candidate k = {.scheme = s ? SCHEME_GPIPE : SCHEME_V, .pp = pp,
                                           .dp = 8 / pp, .mbs = mbs, .chunks = 1};
                peaks[np++] = closed_form_peak(&c, &k);
            }
    qsort(peaks, (size_t)np, sizeof peaks[0], cmp_double);
    c.memory_per_device = (peaks[np / 2 - 1] + peaks[np / 2]) / 2;
    struct tune_result r;
    struct mt_err e = {0};
    CHECK_EQ_INT(tune_grid_search(&c, &o, &r, &e), MT_OK);
    int oom = 0, fit = 0;
    for (int i = 0; i < r.n; i++) {
        const struct tune_candidate *k = &r.cand[i];
        if (k->scheme != SCHEME_V && k->scheme != SCHEME_GPIPE)
            continue;
        int worst = -1;
        double peak = closed_form_peak_dev(&c, k, &worst);
        CHECK(peak > 0);
        CHECK_NEAR(k->peak_mem, peak, 1e-6 * peak);
        bool over = peak > c.memory_per_device;
        CHECK_EQ_INT(k->status, over ? TUNE_OOM : TUNE_OK);
        if (over) {
            CHECK_NEAR(k->over_bytes, peak - c.memory_per_device, 1e-6 * peak);
            CHECK_EQ_INT(k->oom_device, worst);
            CHECK_NEAR(k->throughput, 0, 0);
        }
        oom += over;
        fit += !over;
    }
    CHECK(oom > 0 && fit > 0); /* the cap splits the grid */

    /* Threads do not change the answer. */
    struct tune_result r2;
    o.threads = 2;
    CHECK_EQ_INT(tune_grid_search(&c, &o, &r2, &e), MT_OK);
    CHECK_EQ_INT(r2.n, r.n);
    CHECK_EQ_INT(r2.best, r.best);
    int diff = 0;
    for (int i = 0; i < r.n && i < r2.n; i++)
        diff += r.cand[i].throughput != r2.cand[i].throughput ||
                r.cand[i].peak_mem != r2.cand[i].peak_mem || r.cand[i].status != r2.cand[i].status;
    CHECK_EQ_INT(diff, 0);
    tune_result_fini(&r2);
    tune_result_fini(&r);
}

/* With Mario on, activation memory stops growing with the pipeline depth: under a cap that
 * V-8-1 baseline exceeds, the checkpointed V-8-1 fits. The best plan under that cap is
 * checkpointed, or one of the Vs that hold less than 1F1B without it (V-Half, V-Min: 5/8 and
 * 4/8 of its activations at pp 8). */
static void test_ckpt_makes_feasible(void)
{
    struct config c;
    config_default(&c);
    c.num_device = 8;
    c.global_batch_size = 16;
    struct tune_opts o;
    tune_opts_default(&o);
    o.min_pp = 8;
    o.max_mbs = 1;
    o.max_chunks = 2;
    o.tp = 1; /* the claim is about one GPU a stage */
    struct tune_candidate v = {.scheme = SCHEME_V, .pp = 8, .dp = 1, .mbs = 1, .chunks = 1};
    double base_peak = closed_form_peak(&c, &v);
    c.memory_per_device = base_peak * 0.8;
    struct tune_result r;
    struct mt_err e = {0};
    CHECK_EQ_INT(tune_grid_search(&c, &o, &r, &e), MT_OK);
    int found = 0;
    for (int i = 0; i < r.n; i++) {
        const struct tune_candidate *k = &r.cand[i];
        if (k->scheme != SCHEME_V)
            continue;
        CHECK_EQ_INT(k->status, k->ckpt ? TUNE_OK : TUNE_OOM);
        found++;
    }
    CHECK_EQ_INT(found, 2);
    CHECK(r.best >= 0 && (r.cand[r.best].ckpt || r.cand[r.best].scheme == SCHEME_VHALF ||
                          r.cand[r.best].scheme == SCHEME_VMIN));
    if (r.best >= 0)
        printf("# best under 0.8 of V-8-1's peak: %s%s\n",
               config_scheme_name(r.cand[r.best].scheme), r.cand[r.best].ckpt ? " (ckpt)" : "");
    tune_result_fini(&r);
}

/* Whether k has the scheme and geometry of one of a, b, c (its off sibling). */
static bool tune_group_equal(const struct tune_candidate *k, const struct tune_candidate *a,
                             const struct tune_candidate *b, const struct tune_candidate *c)
{
    const struct tune_candidate *o[] = {a, b, c};
    for (int i = 0; i < 3; i++)
        if (k->scheme == o[i]->scheme && k->pp == o[i]->pp && k->mbs == o[i]->mbs &&
            k->chunks == o[i]->chunks)
            return true;
    return false;
}

/* The progress callback stops the grid after `after` candidates, or at its call number
 * stop_call (1 the first; 0 never). */
struct stop_after {
    int after, calls, last_total, last_done, stop_call;
};

static bool stop_after_cb(void *ctx, int done, int total)
{
    struct stop_after *s = ctx;
    s->calls++;
    s->last_total = total;
    s->last_done = done;
    return done < s->after && s->calls != s->stop_call;
}

/* A cancelled grid keeps what it simulated (the same figures as a whole run), marks the rest
 * not run, and ranks only what ran; on one thread it stops at the first item past the count. */
static void test_cancel(void)
{
    struct config c;
    config_default(&c);
    c.num_device = 8;
    c.global_batch_size = 32;
    struct tune_opts o;
    tune_opts_default(&o);
    o.max_mbs = 2;
    o.threads = 1;
    struct tune_result whole, part;
    struct mt_err e = {0};
    CHECK_EQ_INT(tune_grid_search(&c, &o, &whole, &e), MT_OK);
    CHECK(!whole.cancelled);
    CHECK_EQ_INT(whole.done, whole.n);
    CHECK(whole.n > 10);

    /* One thread works through the grid a group at a time (off and mario share the baseline:
     * 2 candidates an item), so it stops at the first count of 5 or more: 6, after the third
     * group, the first three candidates of the grid order and their mario siblings. */
    struct stop_after s = {.after = 5};
    o.progress = stop_after_cb;
    o.progress_ctx = &s;
    CHECK_EQ_INT(tune_grid_search(&c, &o, &part, &e), MT_OK);
    CHECK(part.cancelled);
    CHECK_EQ_INT(part.n, whole.n);
    CHECK_EQ_INT(part.done, 6);
    /* asked between candidates and between the passes of each mario candidate; the call
     * that stopped it is the last (no final "all done" call after a stop) */
    CHECK(s.calls > 3);
    CHECK_EQ_INT(s.last_done, 6);
    CHECK_EQ_INT(s.last_total, whole.n);
    int best = -1, ran = 0;
    for (int i = 0; i < part.n; i++) {
        const struct tune_candidate *a = &part.cand[i], *b = &whole.cand[i];
        if (a->status != TUNE_NOT_RUN) {
            ran++;
            CHECK(i < 3 || (a->ckpt && tune_group_equal(a, &part.cand[0], &part.cand[1],
                                                        &part.cand[2])));
            CHECK_EQ_INT(a->status, b->status);
            CHECK(a->step_time == b->step_time && a->peak_mem == b->peak_mem);
            if (a->status == TUNE_OK && (best < 0 || a->throughput > part.cand[best].throughput))
                best = i;
        } else {
            CHECK(!a->pareto && a->throughput == 0);
            CHECK(strstr(a->why, "cancelled") != NULL);
        }
    }
    CHECK_EQ_INT(ran, 6);
    CHECK_EQ_INT(part.best, best);
    char *json = tune_report_json(&part);
    CHECK(strstr(json, "\"cancelled_after\":\t6") != NULL); /* cJSON_Print's layout */
    CHECK(strstr(json, "\"not run\"") != NULL);
    free(json);
    tune_result_fini(&part);

    /* Stopped inside a candidate: the first call comes before the first pass of the first
     * group's mario candidate (its off sibling, grid index 0, simulated already); that
     * candidate gives up and is not run: one candidate ran, with whole's figures. */
    s = (struct stop_after){.after = 1 << 30, .stop_call = 1};
    CHECK_EQ_INT(tune_grid_search(&c, &o, &part, &e), MT_OK);
    CHECK(part.cancelled);
    CHECK_EQ_INT(part.done, 1);
    CHECK_EQ_INT(s.calls, 1);
    CHECK_EQ_INT(s.last_done, 0);
    CHECK_EQ_INT(part.cand[0].status, whole.cand[0].status);
    CHECK(!part.cand[0].ckpt && part.cand[0].step_time == whole.cand[0].step_time);
    ran = 0;
    for (int i = 0; i < part.n; i++)
        ran += part.cand[i].status != TUNE_NOT_RUN;
    CHECK_EQ_INT(ran, 1);
    tune_result_fini(&part);

    /* Two threads: the stop comes once 5 are done; the candidates in flight give up, so at
     * least 5 ran, not all, and every one counted ran. */
    o.threads = 2;
    s = (struct stop_after){.after = 5};
    CHECK_EQ_INT(tune_grid_search(&c, &o, &part, &e), MT_OK);
    CHECK(part.cancelled && part.done >= 5 && part.done < part.n);
    ran = 0;
    for (int i = 0; i < part.n; i++)
        ran += part.cand[i].status != TUNE_NOT_RUN;
    CHECK_EQ_INT(ran, part.done);
    tune_result_fini(&part);
    tune_result_fini(&whole);
}

/* Deciding by hand-made figures: ties on throughput go to the lower peak (best and rank);
 * the front is exact: equal throughput with a lower peak dominates, equal in both keeps both,
 * what does not fit is never on it. */
static void test_decide(void)
{
    struct tune_candidate k[] = {
        {.status = TUNE_OK, .throughput = 100, .peak_mem = 10},  /* 0: tie, higher peak */
        {.status = TUNE_OK, .throughput = 100, .peak_mem = 8},   /* 1: best */
        {.status = TUNE_OK, .throughput = 90, .peak_mem = 5},    /* 2: front */
        {.status = TUNE_OK, .throughput = 90, .peak_mem = 5},    /* 3: its twin, front too */
        {.status = TUNE_OK, .throughput = 80, .peak_mem = 6},    /* 4: dominated by 2 */
        {.status = TUNE_OOM, .throughput = 0, .peak_mem = 1},    /* 5: over the cap */
        {.status = TUNE_OK, .throughput = 70, .peak_mem = 5},    /* 6: equal peak, slower */
        {.status = TUNE_INVALID},                                /* 7 */
    };
    struct tune_result r = {.n = 8, .cand = k, .done = 8};
    tune_decide(&r);
    CHECK_EQ_INT(r.best, 1);
    bool front[] = {false, true, true, true, false, false, false, false};
    for (int i = 0; i < r.n; i++)
        CHECK_EQ_INT(k[i].pareto, front[i]);
    int order[8], want[] = {1, 0, 2, 3, 4, 6, 5, 7}; /* fits first, then grid order */
    CHECK_EQ_INT(tune_rank(&r, order), 8);
    for (int i = 0; i < 8; i++)
        CHECK_EQ_INT(order[i], want[i]);
    /* equal throughput and a lower peak: 2 now dominates its twin */
    k[2].peak_mem = 4;
    tune_decide(&r);
    CHECK(k[2].pareto && !k[3].pareto);
}

/* The step printed is per iteration of the global batch: G / throughput, so ranking by it and
 * by throughput agree across dp (a dp 2 candidate's simulated step covers half the batch). */
static void test_iteration_time(void)
{
    struct config c;
    config_default(&c);
    c.num_device = 8;
    c.global_batch_size = 32;
    struct tune_opts o;
    tune_opts_default(&o);
    o.max_mbs = 2;
    o.min_pp = 2;
    struct tune_result r;
    struct mt_err e = {0};
    CHECK_EQ_INT(tune_grid_search(&c, &o, &r, &e), MT_OK);
    int dps = 0;
    for (int i = 0; i < r.n; i++) {
        const struct tune_candidate *k = &r.cand[i];
        if (k->status != TUNE_OK)
            continue;
        double eff = k->dp > 1 ? c.cluster.dp_efficiency : 1;
        CHECK_NEAR(k->iter_time, 32 / k->throughput, 1e-12 * k->iter_time);
        CHECK_NEAR(k->iter_time, k->step_time / eff, 1e-9 * k->iter_time);
        dps |= 1 << (k->dp > 1);
    }
    CHECK_EQ_INT(dps, 3); /* both dp 1 and dp > 1 fit */
    int *order = malloc(sizeof(int) * (size_t)r.n);
    tune_rank(&r, order);
    for (int i = 1; i < r.n && r.cand[order[i]].status == TUNE_OK; i++)
        CHECK(r.cand[order[i - 1]].iter_time <= r.cand[order[i]].iter_time * (1 + 1e-12));
    free(order);
    tune_result_fini(&r);
}

/* --scheme S[,S...]: the grid keeps those schemes only; a bad name is named. */
static void test_scheme_filter(void)
{
    unsigned mask = 0;
    struct mt_err e = {0};
    CHECK_EQ_INT(tune_schemes_parse("V,ZB-V,dualpipev", &mask, &e), MT_OK);
    CHECK_EQ_INT((int)mask, (1 << SCHEME_V) | (1 << SCHEME_ZBV) | (1 << SCHEME_DUALPIPEV));
    CHECK(tune_schemes_parse("V,,X", &mask, &e) == MT_EINVAL);
    CHECK(tune_schemes_parse("V,Q", &mask, &e) == MT_EINVAL && strstr(e.msg, "Q") != NULL);
    char names[256];
    tune_scheme_names(names, sizeof names);
    CHECK(strcmp(names, "V, X, W, GPipe, ZB-H1, ZB-H2, ZB-V, ZB-W, DualPipeV, ZBVZeroBubble, V-Half, V-Min") == 0);
    CHECK(!tune_scheme_tried(SCHEME_ASYNC) && !tune_scheme_tried(SCHEME_AUTO));

    struct config c;
    config_default(&c);
    c.global_batch_size = 16;
    struct tune_opts o;
    tune_opts_default(&o);
    o.tp = 1;
    o.schemes = (1u << SCHEME_X) | (1u << SCHEME_ZBV);
    struct tune_result r;
    CHECK_EQ_INT(tune_grid_search(&c, &o, &r, &e), MT_OK);
    int x = 0, v = 0;
    for (int i = 0; i < r.n; i++) {
        CHECK(r.cand[i].scheme == SCHEME_X || r.cand[i].scheme == SCHEME_ZBV);
        x += r.cand[i].scheme == SCHEME_X;
        v += r.cand[i].scheme == SCHEME_ZBV;
    }
    /* pp 4 and 8 (dp 2, 1), micro-batch sizes dividing 8 and 16, ckpt off and mario; the
     * distributed optimizer off and on where dp > 1 (issue 41): 2 (2 x 4 + 5) */
    CHECK_EQ_INT(x, 2 * (2 * 4 + 5));
    CHECK_EQ_INT(v, x);
    for (int i = 0; i < r.n; i++) {
        CHECK(!r.cand[i].sp); /* tp 1: sequence parallelism changes nothing */
        CHECK(!r.cand[i].distopt || r.cand[i].dp > 1);
    }
    tune_result_fini(&r);
    /* pinned: the optimizer off, micro-batch size 2, dp 2: 2 x 1 per scheme */
    o.distopt = TUNE_OFF;
    o.mbs = 2;
    o.dp = 2;
    CHECK_EQ_INT(tune_grid_search(&c, &o, &r, &e), MT_OK);
    CHECK_EQ_INT(r.n, 2 * 2);
    for (int i = 0; i < r.n; i++)
        CHECK(r.cand[i].mbs == 2 && r.cand[i].dp == 2 && !r.cand[i].distopt);
    tune_result_fini(&r);
}

/* tune --search prunes a search whose bound cannot beat a step already found: the same best
 * and the same ranking of every candidate both runs finish as searching them all, the same
 * answer on 1 and 2 threads, and each pruned one's bound really is no better than the best. */
static void test_search_pruned(void)
{
    struct config c;
    config_default(&c);
    c.num_device = 4;
    c.global_batch_size = 16;
    c.memory_per_device = 20.0 * (1 << 30);
    struct tune_opts o;
    tune_opts_default(&o);
    o.min_pp = 2;
    o.max_mbs = 2;
    o.threads = 1;
    o.search = tune_optimize_search;
    o.tp = 1; /* a few searches: the test's time */
    o.schemes = (1u << SCHEME_V) | (1u << SCHEME_ZBV) | (1u << SCHEME_W) | (1u << SCHEME_ZBH1);
    struct tune_result all, pruned, two;
    struct mt_err e = {0};
    o.exhaustive = true;
    CHECK_EQ_INT(tune_grid_search(&c, &o, &all, &e), MT_OK);
    o.exhaustive = false;
    CHECK_EQ_INT(tune_grid_search(&c, &o, &pruned, &e), MT_OK);
    o.threads = 2;
    CHECK_EQ_INT(tune_grid_search(&c, &o, &two, &e), MT_OK);
    CHECK_EQ_INT(all.n, pruned.n);
    CHECK(all.best >= 0 && all.best == pruned.best && pruned.best == two.best);
    int n_pruned = 0, n_search = 0;
    for (int i = 0; i < all.n; i++) {
        const struct tune_candidate *a = &all.cand[i], *p = &pruned.cand[i], *t = &two.cand[i];
        CHECK(a->status != TUNE_PRUNED);
        CHECK(p->status == t->status && p->throughput == t->throughput);
        n_search += a->search;
        if (p->status == TUNE_PRUNED) {
            n_pruned++;
            CHECK(p->search);
            /* its bound per iteration of the global batch: the dp efficiency as its sibling's */
            CHECK(p->lower_bound > 0);
            CHECK(a->status != TUNE_OK || a->throughput <= all.cand[all.best].throughput);
            CHECK(strstr(p->why, "pruned") != NULL);
            continue;
        }
        CHECK_EQ_INT(p->status, a->status);
        CHECK(p->throughput == a->throughput && p->peak_mem == a->peak_mem);
    }
    CHECK(n_pruned > 0 && n_pruned < n_search);
    /* the ranks of what both finished: the same relative order */
    int *oa = malloc(sizeof(int) * (size_t)all.n), *op = malloc(sizeof(int) * (size_t)all.n);
    tune_rank(&all, oa);
    tune_rank(&pruned, op);
    int ia = 0, ip = 0, compared = 0;
    for (;;) {
        while (ia < all.n && pruned.cand[oa[ia]].status == TUNE_PRUNED)
            ia++;
        while (ip < all.n && pruned.cand[op[ip]].status == TUNE_PRUNED)
            ip++;
        if (ia == all.n || ip == all.n)
            break;
        CHECK_EQ_INT(oa[ia], op[ip]);
        compared++, ia++, ip++;
    }
    CHECK_EQ_INT(compared, all.n - n_pruned);
    free(oa);
    free(op);
    tune_result_fini(&two);
    tune_result_fini(&pruned);
    tune_result_fini(&all);
}

/* tp is a plan dimension (issue 26 item 2): the grid tries 1, 2, 4, 8 dividing gpus_per_node
 * and the GPUs, pp x dp x tp = the GPUs, each candidate's config valid with that geometry; the
 * label ends -tT past 1; o.tp keeps one degree; unit costs keep the config's. */
static void test_tp_grid(void)
{
    struct config c;
    config_default(&c);
    c.global_batch_size = 16;
    struct tune_opts o;
    tune_opts_default(&o);
    o.optimize = NULL;
    o.max_mbs = 1;
    o.schemes = 1u << SCHEME_V;
    o.min_pp = 1;
    o.sp = o.distopt = TUNE_OFF; /* the geometry alone */
    struct { int devices, per_node, tps; } cases[] = {
        {8, 8, 1 | 2 | 4 | 8}, {8, 4, 1 | 2 | 4}, {12, 8, 1 | 2 | 4}, {6, 8, 1 | 2}};
    for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++) {
        c.num_device = cases[t].devices;
        c.cluster.gpus_per_node = cases[t].per_node;
        struct tune_result r;
        struct mt_err e = {0};
        CHECK_EQ_INT(tune_grid_search(&c, &o, &r, &e), MT_OK);
        int seen = 0, pairs = 0;
        for (int i = 0; i < r.n; i++) {
            const struct tune_candidate *k = &r.cand[i];
            seen |= k->tp;
            CHECK_EQ_INT(k->pp * k->dp * k->tp, c.num_device);
            struct config kc;
            tune_candidate_config(&c, k, &kc);
            CHECK_EQ_INT(kc.cluster.tp, k->tp);
            CHECK_EQ_INT(config_pp(&kc), k->pp);
            char label[48], want[48];
            tune_label(k, label, sizeof label);
            snprintf(want, sizeof want, k->tp > 1 ? "V-%d-1-t%d" : "V-%d-1", k->pp, k->tp);
            CHECK(strcmp(label, want) == 0);
            pairs++;
        }
        /* every (tp, pp) with pp x dp = D / tp and dp dividing the batch 16 */
        int want_pairs = 0;
        for (int tp = 1; tp <= 8; tp *= 2)
            if (cases[t].tps & tp)
                for (int pp = 1; pp <= c.num_device / tp; pp++)
                    want_pairs += (c.num_device / tp) % pp == 0 && 16 % (c.num_device / tp / pp) == 0;
        CHECK_EQ_INT(seen, cases[t].tps);
        CHECK_EQ_INT(pairs, want_pairs);
        tune_result_fini(&r);
    }
    /* o.tp keeps one degree */
    c.num_device = 8;
    c.cluster.gpus_per_node = 8;
    o.tp = 4;
    struct tune_result r;
    struct mt_err e = {0};
    CHECK_EQ_INT(tune_grid_search(&c, &o, &r, &e), MT_OK);
    for (int i = 0; i < r.n; i++)
        CHECK_EQ_INT(r.cand[i].tp, 4);
    CHECK_EQ_INT(r.n, 2); /* pp 1 and 2 of 2 TP groups */
    tune_result_fini(&r);
    /* unit costs: the config's tp only */
    o.tp = 0;
    c.unit = (struct unit_costs){true, 1, 1, 1, 0, 1, 0};
    CHECK_EQ_INT(tune_grid_search(&c, &o, &r, &e), MT_OK);
    for (int i = 0; i < r.n; i++)
        CHECK_EQ_INT(r.cand[i].tp, 1);
    tune_result_fini(&r);
}

/* The expert dimensions (issue 38 item 5), by hand: E = 8 experts, tp 2 x dp 4 = 8 GPUs a
 * stage. etp tp = 2: ep x 2 divides 8, ep in {1, 2, 4}; etp 1: ep in {1, 2, 4, 8} (each
 * dividing E). A dense model: one pair, the config's; pins and --max-ep; an etp that does not
 * split the expert width is not tried. Then the grid: every MoE candidate's ep divides the
 * experts and ep x etp its tp x dp, and the (ep, etp) a config gets is the candidate's. */
static void test_expert_grid(void)
{
    struct config c;
    config_default(&c);
    struct tune_opts o;
    tune_opts_default(&o);
    struct tune_expert_pair x[TUNE_MAX_EXPERT_PAIRS];
    CHECK_EQ_INT(tune_expert_pairs(&c, &o, 2, 1, 4, x, TUNE_MAX_EXPERT_PAIRS), 1);
    CHECK(x[0].ep == 0 && x[0].etp == 0);
    c.model.moe.num_experts = 8;
    c.model.moe.router_topk = 2;
    c.model.moe.ffn_hidden_size = 64;
    static const struct tune_expert_pair want[] = {{1, 2}, {2, 2}, {4, 2}, {1, 1},
                                                   {2, 1}, {4, 1}, {8, 1}};
    int n = tune_expert_pairs(&c, &o, 2, 1, 4, x, TUNE_MAX_EXPERT_PAIRS);
    CHECK_EQ_INT(n, 7);
    for (int i = 0; i < n && i < 7; i++)
        CHECK(x[i].ep == want[i].ep && x[i].etp == want[i].etp);
    /* cp joins the fold: tp 2 x cp 2 x dp 2 = 8, the same pairs */
    CHECK_EQ_INT(tune_expert_pairs(&c, &o, 2, 2, 2, x, TUNE_MAX_EXPERT_PAIRS), 7);
    o.max_ep = 2; /* ep 1, 2 under each etp */
    CHECK_EQ_INT(tune_expert_pairs(&c, &o, 2, 1, 4, x, TUNE_MAX_EXPERT_PAIRS), 4);
    o.max_ep = 0;
    o.ep = 8; /* pinned: with etp 1 only (8 x 2 does not divide 8) */
    CHECK_EQ_INT(tune_expert_pairs(&c, &o, 2, 1, 4, x, TUNE_MAX_EXPERT_PAIRS), 1);
    CHECK(x[0].ep == 8 && x[0].etp == 1);
    o.ep = 3; /* not a divisor: the one pair, for the validation to name */
    CHECK_EQ_INT(tune_expert_pairs(&c, &o, 2, 1, 4, x, TUNE_MAX_EXPERT_PAIRS), 1);
    CHECK(x[0].ep == 3 && x[0].etp == 2);
    o.ep = 0;
    o.etp = 2;
    CHECK_EQ_INT(tune_expert_pairs(&c, &o, 2, 1, 4, x, TUNE_MAX_EXPERT_PAIRS), 3);
    o.etp = 0;
    c.model.moe.ffn_hidden_size = 6; /* tp 4 does not split it: etp 1 alone */
    n = tune_expert_pairs(&c, &o, 4, 1, 2, x, TUNE_MAX_EXPERT_PAIRS);
    CHECK_EQ_INT(n, 4);
    for (int i = 0; i < n; i++)
        CHECK_EQ_INT(x[i].etp, 1);

    /* the grid of a small MoE model under the op model: 8 GPUs, V, micro-batches of 1 */
    struct mt_err e = {0};
    config_default(&c);
    CHECK_EQ_INT(presets_model("Mixtral-8x7B", &c.model, &e), MT_OK);
    c.model.num_layers = 8;
    c.num_device = 8;
    c.global_batch_size = 16;
    tune_opts_default(&o);
    o.optimize = NULL;
    o.max_mbs = 1;
    o.min_pp = 2;
    o.tp = 2;
    o.schemes = 1u << SCHEME_V;
    o.sp = TUNE_ON;
    o.distopt = TUNE_OFF;
    struct tune_result r;
    CHECK_EQ_INT(tune_grid_search(&c, &o, &r, &e), MT_OK);
    /* pp 2 (dp 2: tp x dp 4, pairs (1,2) (2,2) (1,1) (2,1) (4,1)) and pp 4 (dp 1: tp x dp 2,
     * pairs (1,2) (1,1) (2,1)) */
    CHECK_EQ_INT(r.n, 8);
    int seen_ep4 = 0;
    for (int i = 0; i < r.n; i++) {
        const struct tune_candidate *k = &r.cand[i];
        CHECK_EQ_INT(8 % k->ep, 0);
        CHECK_EQ_INT((k->tp * k->dp) % (k->ep * k->etp), 0);
        struct config kc;
        tune_candidate_config(&c, k, &kc);
        CHECK_EQ_INT(kc.cluster.ep, k->ep);
        CHECK_EQ_INT(kc.cluster.etp, k->etp);
        CHECK(k->status != TUNE_INVALID);
        if (k->ep == 4) {
            char label[48];
            tune_label(k, label, sizeof label);
            CHECK(strcmp(label, "V-2-1-t2-e4-et1-sp") == 0);
            seen_ep4++;
        }
    }
    CHECK_EQ_INT(seen_ep4, 1);
    tune_result_fini(&r);
}

int main(void)
{
    test_unit_grid();
    test_memory_cap();
    test_ckpt_makes_feasible();
    test_cancel();
    test_decide();
    test_iteration_time();
    test_scheme_filter();
    test_search_pruned();
    test_tp_grid();
    test_expert_grid();
    return check_report("test_tune");
}
