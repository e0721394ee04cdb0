/* tests/unit/test_zb.c: the zero-bubble family (split backward) against what is known
 * independently of the code:
 *  - orders: small cases worked by hand from the reference rules (the zero-bubble authors'
 *    greedy for ZB-H1 and ZB-H2; torch's ScheduleZBVZeroBubble, ScheduleInterleavedZeroBubble,
 *    ScheduleDualPipeV) and rows the authors' own code gives (ZB-V, V-Min);
 *  - times: the closed forms, with F, B, W the forward, input-gradient and weight-gradient
 *    times: ZB-H1 steps N(F+B+W) + (D-1)(F+B-W) (Qi et al., arXiv 2401.10241, §3.1); with
 *    F = B = W every ZB-H2 device is busy without a gap from its first forward to its last W
 *    (the paper's parallelogram), ZB-V and ZB-W leave only the fill, (D-1) chunk forwards, and
 *    DualPipeV (D-1)(F&B + B - 3W) with F&B = F + B + W (DeepSeek's DualPipe README, PP/2 - 1 =
 *    D - 1 for the 2D stages of the V);
 *  - times the reference implementations give: the authors' ZB-V against torch's where N < 2D;
 *  - memory: 1F1B's in-flight bound for ZB-H1 (D - i micro-batches on device i), 2(D-i) - 1 for
 *    ZB-H2, DualPipeV's PP + 1 = 2D + 1 chunk activations on every device, V-Half's and
 *    V-Min's (D+2)/2 and (D+4)/3 micro-batches (arXiv 2405.15362, Table 1);
 *  - Mario's passes keep every split plan valid, each RC before its B.
 * Unit costs F,B,RC,W = 1,2,1,1: B = W = 1 for one stage per device, halves for two. */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/config.h"
#include "model/cost.h"
#include "sim/passes/pass.h"
#include "sim/plan/plan.h"
#include "sim/schemes/scheme.h"
#include "sim/core/simulate.h"
#include "sim/plan/validate.h"
#include "sim/core/vpipe.h"
#include "tests/check.h"
#include "tests/unit_config.h"
#include "util/err.h"

static struct plan *build(enum scheme_id s, int D, int N, double f, double b, double w)
{
    struct config c = test_unit_config(s, D, N, f, b, 1);
    c.unit.w = w;
    c.chunks = 2;
    c.model.num_layers = 64;
    struct mt_err e = {0};
    struct plan *p = NULL;
    if (scheme_build(&c, &p, &e) != MT_OK) {
        fprintf(stderr, "%s D=%d N=%d: %s\n", config_scheme_name(s), D, N, e.msg);
        CHECK(0);
    }
    return p;
}

/* Device d's compute order as "F0.0 B0.1 W0.1 BW2.0 ..." (op, mb, part); F for FW. */
static void order_text(const struct plan *p, int d, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < plan_len(p, d); i++) {
        const struct instr *in = plan_at(p, d, i);
        const char *op = in->op == OP_FW ? "F" : in->op == OP_B ? "B" : in->op == OP_W ? "W"
                       : in->op == OP_BW ? "BW" : NULL;
        if (op == NULL)
            continue;
        len += (size_t)snprintf(buf + len, n - len, "%s%s%d.%d", len ? " " : "", op, in->mb,
                                in->part);
    }
}

static void check_order(enum scheme_id s, int D, int N, const char *const *want)
{
    struct plan *p = build(s, D, N, 1, 2, 1);
    if (p == NULL)
        return;
    char got[4096];
    for (int d = 0; d < D; d++) {
        order_text(p, d, got, sizeof got);
        if (strcmp(got, want[d]) != 0) {
            fprintf(stderr, "%s D=%d N=%d device %d:\n  got  %s\n  want %s\n",
                    config_scheme_name(s), D, N, d, got, want[d]);
            CHECK(0);
        } else {
            CHECK(1);
        }
    }
    plan_free(p);
}

static void test_orders(void)
{
    /* ZB-H1 as the authors' zb.py orders it (memory for pp forwards; M_W / M_F = 3/8), worked
     * slot by slot from the rules in sim/schemes/scheme_zb.c's head (F = B = W = 1): pp 2, 3
     * micro-batches: device 0 warms up with one extra forward (it ends at 2, before B(0)
     * reaches it at 4), then needs W0 to make room for F2; the oldest W first everywhere. */
    check_order(SCHEME_ZBH1, 2, 3,
                (const char *const[]){"F0.0 F1.0 B0.0 W0.0 F2.0 B1.0 W1.0 B2.0 W2.0",
                                      "F0.0 B0.0 F1.0 B1.0 W0.0 F2.0 B2.0 W1.0 W2.0"});
    /* N < pp, which the authors accept: pp 3, 2 micro-batches; the longest stage 9 slots */
    check_order(SCHEME_ZBH1, 3, 2,
                (const char *const[]){"F0.0 F1.0 B0.0 W0.0 B1.0 W1.0",
                                      "F0.0 F1.0 B0.0 W0.0 B1.0 W1.0",
                                      "F0.0 B0.0 F1.0 B1.0 W0.0 W1.0"});
    /* ZB-H2 (memory for 2 pp forwards), pp 2, 4: device 0 warms up with 3 forwards (the 4th
     * would end after B(0) reaches it), runs its Ws as soon as its forwards are done; device 1
     * is 1F1B with every W at the tail. Both busy 12 slots without a gap. */
    check_order(SCHEME_ZBH2, 2, 4,
                (const char *const[]){
                    "F0.0 F1.0 F2.0 B0.0 F3.0 W0.0 B1.0 W1.0 B2.0 W2.0 B3.0 W3.0",
                    "F0.0 B0.0 F1.0 B1.0 F2.0 B2.0 F3.0 B3.0 W0.0 W1.0 W2.0 W3.0"});
    /* ZB-V as the authors' zbv.py orders it, pp 2, 4 micro-batches (their Python gives these
     * two rows; .1 = the V's second chunk) */
    check_order(SCHEME_ZBV, 2, 4,
                (const char *const[]){
                    "F0.0 F1.0 F2.0 F0.1 B0.1 W0.1 F1.1 B1.1 W1.1 F3.0 B0.0 W0.0 F2.1 B2.1 W2.1 "
                    "B1.0 W1.0 F3.1 B3.1 B2.0 W3.1 B3.0 W2.0 W3.0",
                    "F0.0 F0.1 F1.0 F1.1 B0.1 W0.1 F2.0 B0.0 W0.0 F2.1 B1.1 W1.1 F3.0 B1.0 W1.0 "
                    "F3.1 B2.1 B2.0 B3.1 B3.0 W2.1 W2.0 W3.1 W3.0"});
    /* torch ScheduleZBVZeroBubble, pp 2, 4 micro-batches (.1 = the V's second chunk). */
    check_order(SCHEME_ZBV_TORCH, 2, 4,
                (const char *const[]){
                    "F0.0 F1.0 F2.0 F0.1 B0.1 W0.1 F1.1 B1.1 W1.1 F3.0 B0.0 W0.0 F2.1 B2.1 W2.1 "
                    "B1.0 W1.0 F3.1 B3.1 W3.1 B2.0 W2.0 B3.0 W3.0",
                    "F0.0 F0.1 F1.0 F1.1 B0.1 W0.1 F2.0 B0.0 W0.0 F2.1 B1.1 W1.1 F3.0 B1.0 W1.0 "
                    "F3.1 B2.1 W2.1 B2.0 B3.1 B3.0 W2.0 W3.1 W3.0"});
    /* V-Min, pp 2, 2 micro-batches, as the authors' zbv_greedy.py gives it: micro-batch 0 runs
     * down the V and back (stage 0 on device 0, stages 1 and 2 on device 1, stage 3 and its B
     * on device 0, the Bs of 2 and 1 on device 1, of 0 on device 0); each device holds at most
     * (D+4)/3 = 2 micro-batches' activations (4 chunks) from F to W. */
    check_order(SCHEME_VMIN, 2, 2,
                (const char *const[]){
                    "F0.0 F1.0 F0.1 B0.1 W0.1 B0.0 W0.0 F1.1 B1.1 W1.1 B1.0 W1.0",
                    "F0.0 F0.1 B0.1 B0.0 F1.0 F1.1 W0.1 W0.0 B1.1 B1.0 W1.1 W1.0"});
    /* torch ScheduleInterleavedZeroBubble, pp 2, 2 chunks, 4 micro-batches (rounds of 2). */
    check_order(SCHEME_ZBW, 2, 4,
                (const char *const[]){
                    "F0.0 F1.0 F0.1 F1.1 B0.1 W0.1 F2.0 B1.1 W1.1 F3.0 B0.0 W0.0 F2.1 B1.0 W1.0 "
                    "F3.1 B2.1 W2.1 B3.1 W3.1 B2.0 W2.0 B3.0 W3.0",
                    "F0.0 F1.0 F0.1 B0.1 F1.1 B1.1 W0.1 F2.0 B0.0 W1.1 F3.0 B1.0 W0.0 F2.1 B2.1 "
                    "W1.0 F3.1 B3.1 W2.1 B2.0 W3.1 B3.0 W2.0 W3.0"});
    /* torch ScheduleDualPipeV, pp 2, 4 micro-batches: overlapped F&B run as F then BW. */
    check_order(SCHEME_DUALPIPEV, 2, 4,
                (const char *const[]){
                    "F0.0 F1.0 F2.0 F0.1 B0.1 W0.1 F1.1 F3.0 BW1.1 F2.1 BW0.0 BW2.1 F3.1 BW1.0 "
                    "BW3.1 B2.0 W2.0 B3.0 W3.0",
                    "F0.0 F0.1 F1.0 F1.1 F2.0 BW0.1 F2.1 BW0.0 F3.0 BW1.1 F3.1 BW1.0 BW2.1 BW2.0 "
                    "B3.1 B3.0 W3.1 W3.0"});
}

static double step_of(enum scheme_id s, int D, int N, double f, double b, double w,
                      struct sim_result *keep)
{
    struct plan *p = build(s, D, N, f, b, w);
    struct sim_result r = {0};
    struct mt_err e = {0};
    double step = -1;
    if (p != NULL && validate_plan_sim(p, &r, &e) == MT_OK)
        step = r.step_time;
    else if (p != NULL) {
        fprintf(stderr, "%s D=%d N=%d: %s\n", config_scheme_name(s), D, N, e.msg);
        CHECK(0);
    }
    if (keep != NULL)
        *keep = r;
    else
        sim_result_fini(&r);
    plan_free(p);
    return step;
}

static void test_closed_forms(void)
{
    static const int shapes[][2] = {{2, 4}, {4, 4}, {4, 8}, {4, 16}, {8, 16}, {8, 32}};
    /* F, whole backward, W: B = backward - W */
    static const double costs[][3] = {{1, 2, 1}, {1, 2, 0.5}, {1, 3, 1}, {2, 2, 1}};
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
        int D = shapes[k][0], N = shapes[k][1];
        for (size_t u = 0; u < sizeof costs / sizeof costs[0]; u++) {
            double F = costs[u][0], W = costs[u][2], B = costs[u][1] - W;
            CHECK_NEAR(step_of(SCHEME_ZBH1, D, N, F, costs[u][1], W, NULL),
                       N * (F + B + W) + (D - 1) * (F + B - W), 1e-9);
            /* 1F1B for comparison: (N + D - 1)(F + B + W) */
            CHECK_NEAR(step_of(SCHEME_V, D, N, F, costs[u][1], W, NULL),
                       (N + D - 1) * (F + B + W), 1e-9);
        }
        /* F = B = W = 1 (chunks of two-stage devices 1/2 each). ZB-V fills its pipeline from
         * 2D - 1 micro-batches on (torch pads shorter runs with bubbles). */
        if (N >= 2 * D - 1)
            CHECK_NEAR(step_of(SCHEME_ZBV, D, N, 1, 2, 1, NULL), 3.0 * N + (D - 1) * 0.5, 1e-9);
        CHECK_NEAR(step_of(SCHEME_ZBW, D, N, 1, 2, 1, NULL), 3.0 * N + (D - 1) * 0.5, 1e-9);
        if (N >= 2 * D) /* F&B = 1.5, B = W = 0.5 per chunk */
            CHECK_NEAR(step_of(SCHEME_DUALPIPEV, D, N, 1, 2, 1, NULL),
                       3.0 * N + (D - 1) * (1.5 + 0.5 - 3 * 0.5), 1e-9);
        /* ZB-H2: device i busy from i to i + 3N, no gap, once its warm-up is whole */
        if (N < 2 * D - 1)
            continue;
        struct sim_result r;
        double step = step_of(SCHEME_ZBH2, D, N, 1, 2, 1, &r);
        CHECK_NEAR(step, 3.0 * N + D - 1, 1e-9);
        for (int d = 0; d < r.devices && step > 0; d++) {
            CHECK_NEAR(r.dev[d].busy, 3.0 * N, 1e-9);
            CHECK_NEAR(r.dev[d].finish, 3.0 * N + d, 1e-9);
        }
        sim_result_fini(&r);
    }
}

/* Most micro-batches whose forward ran and whose B has not, and most Ws waiting, over device
 * d's order (one part). */
static void in_flight(const struct plan *p, int d, int *fwd, int *wait_w)
{
    int f = 0, w = 0;
    *fwd = *wait_w = 0;
    for (int i = 0; i < plan_len(p, d); i++) {
        enum op op = plan_at(p, d, i)->op;
        f += plan_op_is_forward(op) ? 1 : op == OP_B || op == OP_BW ? -1 : 0;
        w += op == OP_B ? 1 : op == OP_W ? -1 : 0;
        *fwd = f > *fwd ? f : *fwd;
        *wait_w = w > *wait_w ? w : *wait_w;
    }
}

static void test_memory(void)
{
    for (int D = 2; D <= 8; D *= 2) {
        int N = 4 * D;
        struct plan *h1 = build(SCHEME_ZBH1, D, N, 1, 2, 1);
        struct plan *h2 = build(SCHEME_ZBH2, D, N, 1, 2, 1);
        for (int d = 0; h1 && h2 && d < D; d++) {
            int f, w;
            in_flight(h1, d, &f, &w);
            CHECK_EQ_INT(f, D - d); /* 1F1B's bound */
            CHECK_EQ_INT(w, d + 1); /* the d deferred Ws and the current one */
            in_flight(h2, d, &f, &w);
            CHECK_EQ_INT(f, 2 * (D - d) - 1);
        }
        plan_free(h1);
        plan_free(h2);
        /* DualPipeV: 2D + 1 chunks' activations (1/2 M_theta each) at the peak of every device,
         * the transients of its Bs aside (w_keep under the chunk's act) */
        struct sim_result r;
        if (step_of(SCHEME_DUALPIPEV, D, N, 1, 2, 1, &r) > 0)
            for (int d = 0; d < D; d++)
                CHECK_NEAR(r.dev[d].peak_mem, (2 * D + 1) * 0.5, 1e-9);
        sim_result_fini(&r);
    }
}

/* The authors' ZB-V against torch's where N < 2D, unit costs in chunk forwards (a chunk's F = B
 * = W = 1/2 t here): 27 against 30 at 4 x 4, 39 against 46 at 8 x 4, 55 against 62 at 8 x 8
 * (issue 28, from the two reference implementations); from 2D - 1 on both leave only the fill.
 * ZB-H1 and ZB-H2 with one micro-batch: its chain, D forwards, D Bs and a W (2D + 1). */
static void test_authors_steps(void)
{
    static const int shapes[][4] = {{4, 4, 27, 30}, {8, 4, 39, 46}, {8, 8, 55, 62}};
    for (int k = 0; k < 3; k++) {
        int D = shapes[k][0], N = shapes[k][1];
        CHECK_NEAR(step_of(SCHEME_ZBV, D, N, 1, 2, 1, NULL), shapes[k][2] * 0.5, 1e-9);
        CHECK_NEAR(step_of(SCHEME_ZBV_TORCH, D, N, 1, 2, 1, NULL), shapes[k][3] * 0.5, 1e-9);
    }
    for (int D = 1; D <= 8; D++) {
        CHECK_NEAR(step_of(SCHEME_ZBH1, D, 1, 1, 2, 1, NULL), 2.0 * D + 1, 1e-9);
        CHECK_NEAR(step_of(SCHEME_ZBH2, D, 1, 1, 2, 1, NULL), 2.0 * D + 1, 1e-9);
        if (D >= 2)
            CHECK_NEAR(step_of(SCHEME_ZBV_TORCH, D, 4 * D, 1, 2, 1, NULL),
                       3.0 * 4 * D + (D - 1) * 0.5, 1e-9);
    }
}

/* Most chunks a device holds from its forward to its W, over device d's order. */
static int chunks_to_w(const struct plan *p, int d)
{
    int cur = 0, most = 0;
    for (int i = 0; i < plan_len(p, d); i++) {
        enum op op = plan_at(p, d, i)->op;
        cur += plan_op_is_forward(op) ? 1 : op == OP_W ? -1 : 0;
        most = cur > most ? cur : most;
    }
    return most;
}

/* The largest w_keep of a stage (what a B keeps for its W) under the test's unit config. */
static double max_w_keep(enum scheme_id s, int D, int N)
{
    struct config c = test_unit_config(s, D, N, 1, 2, 1);
    c.unit.w = 1;
    c.chunks = 2;
    c.model.num_layers = 64;
    struct cost_model cost;
    struct mt_err e = {0};
    double most = 0;
    if (scheme_costs(&c, &cost, &e) != MT_OK) {
        CHECK(0);
        return 0;
    }
    for (int st = 0; st < cost.num_stages; st++)
        most = cost.stage[st].w_keep > most ? cost.stage[st].w_keep : most;
    cost_model_fini(&cost);
    return most;
}

/* V-Half and V-Min hold (D+2)/2 and (D+4)/3 micro-batches' activations from F to W (the paper's
 * Table 1, arXiv 2405.15362, "Activation Memory by #micro-batch", rounded down as there), 2
 * chunks each, or all N where fewer; 1F1B holds D. In the simulator a B frees all but w_keep of
 * its chunk's activations and takes that w_keep at its start, so a device's peak is at most
 * that many micro-batches (1 M_theta each here: V's peak is D M_theta) plus the w_keep of the
 * one B running. */
static void test_controllable_memory(void)
{
    for (int D = 1; D <= 8; D++)
        for (int N = 1; N <= 3 * D + 2; N += (N < 4 ? 1 : D)) {
            int half = (D + 2) / 2, third = (D + 4) / 3;
            struct plan *ph = build(SCHEME_VHALF, D, N, 1, 2, 1);
            struct plan *pm = build(SCHEME_VMIN, D, N, 1, 2, 1);
            int most_h = 0, most_m = 0;
            for (int d = 0; ph && pm && d < D; d++) {
                most_h = chunks_to_w(ph, d) > most_h ? chunks_to_w(ph, d) : most_h;
                most_m = chunks_to_w(pm, d) > most_m ? chunks_to_w(pm, d) : most_m;
            }
            CHECK_EQ_INT(most_h, 2 * (N < half ? N : half));
            CHECK_EQ_INT(most_m, 2 * (N < third ? N : third));
            CHECK(2 * half <= D + 2 && 3 * third <= D + 4); /* the paper's fractions, rounded */
            struct sim_result r = {0};
            struct mt_err e = {0};
            double wk = max_w_keep(SCHEME_VHALF, D, N);
            if (N < half)
                half = N;
            if (N < third)
                third = N;
            if (ph != NULL && validate_plan_sim(ph, &r, &e) == MT_OK) {
                for (int d = 0; d < D; d++)
                    CHECK(r.dev[d].peak_mem <= half + wk + 1e-9);
                sim_result_fini(&r);
            } else {
                CHECK(0);
            }
            if (pm != NULL && validate_plan_sim(pm, &r, &e) == MT_OK) {
                for (int d = 0; d < D; d++)
                    CHECK(r.dev[d].peak_mem <= third + wk + 1e-9);
                sim_result_fini(&r);
            } else {
                CHECK(0);
            }
            plan_free(ph);
            plan_free(pm);
        }
    /* against 1F1B's simulated peak at 8 x 24: 5/8 and 4/8 of it (1/2 and 1/3 with the paper's
     * rounding), the running B's w_keep aside */
    double wk = max_w_keep(SCHEME_VMIN, 8, 24);
    struct sim_result v, h, m;
    if (step_of(SCHEME_V, 8, 24, 1, 2, 1, &v) > 0 &&
        step_of(SCHEME_VHALF, 8, 24, 1, 2, 1, &h) > 0 &&
        step_of(SCHEME_VMIN, 8, 24, 1, 2, 1, &m) > 0) {
        CHECK_NEAR(v.dev[0].peak_mem, 8, 1e-9);
        for (int d = 0; d < 8; d++) {
            CHECK(h.dev[d].peak_mem <= v.dev[0].peak_mem * 5 / 8 + wk + 1e-9);
            CHECK(h.dev[d].peak_mem > v.dev[0].peak_mem * 5 / 8 - 1e-9);
            CHECK(m.dev[d].peak_mem <= v.dev[0].peak_mem * 4 / 8 + wk + 1e-9);
        }
    }
    sim_result_fini(&v);
    sim_result_fini(&h);
    sim_result_fini(&m);
}

/* Mario's passes on split plans: every step valid (the pass pipeline validates), every RC
 * before the B of its micro-batch and stage on the same device, and checkpointing saves
 * memory. */
static void test_passes(void)
{
    enum scheme_id schemes[SCHEME__COUNT];
    int n_schemes = test_sync_schemes(schemes, true);
    CHECK(n_schemes >= 5); /* ZB-H1, ZB-H2, ZB-V, ZB-W, DualPipeV at least */
    for (int k = 0; k < n_schemes; k++) {
        struct plan *base = build(schemes[k], 4, 8, 1, 2, 1);
        struct pass_pipeline pl;
        struct mt_err e = {0};
        if (base == NULL || pass_pipeline_run(base, &pl, &e) != MT_OK) {
            fprintf(stderr, "%s: %s\n", config_scheme_name(schemes[k]), e.msg);
            CHECK(0);
            plan_free(base);
            continue;
        }
        const struct pass_step *last = &pl.step[pl.n - 1];
        int rcs = 0;
        for (int d = 0; d < plan_devices(last->plan); d++)
            for (int i = 0; i < plan_len(last->plan, d); i++) {
                const struct instr *in = plan_at(last->plan, d, i);
                if (in->op != OP_RC)
                    continue;
                rcs++;
                int b = plan_find(last->plan, d, OP_B, in->mb, in->stage);
                if (b < 0)
                    b = plan_find(last->plan, d, OP_BW, in->mb, in->stage);
                CHECK(b > i);
            }
        CHECK(rcs > 0);
        double base_peak = 0, last_peak = 0;
        for (int d = 0; d < 4; d++) {
            base_peak = pl.step[0].sim.dev[d].peak_mem > base_peak ? pl.step[0].sim.dev[d].peak_mem
                                                                  : base_peak;
            last_peak = last->sim.dev[d].peak_mem > last_peak ? last->sim.dev[d].peak_mem
                                                              : last_peak;
        }
        CHECK(last_peak < base_peak);
        pass_pipeline_fini(&pl);
        plan_free(base);
    }
}

/* Every scheme record against what the record claims: its names parse back to it and to no
 * other; its placement puts each stage where vpipe says; the generator exists exactly for the
 * schedules (Auto has none) and builds a plan that validates; and torch's schedule CSV either
 * holds the plan and reads it back as a scheme of the same placement with the same step time,
 * or refuses it with the record's reason. A new record is checked here with no edit. */
static void test_registry(void)
{
    struct mt_err e = {0};
    int buildable = 0;
    for (int id = 0; id < SCHEME__COUNT; id++) {
        const struct scheme_record *r = scheme_registry_get((enum scheme_id)id);
        CHECK(r != NULL && (int)r->id == id);
        if (r == NULL)
            continue;
        enum scheme_id got = SCHEME__COUNT;
        CHECK(config_scheme_parse(r->name, &got, &e) == MT_OK && got == r->id);
        for (int a = 0; a < 4 && r->aliases[a] != NULL; a++)
            CHECK(config_scheme_parse(r->aliases[a], &got, &e) == MT_OK && got == r->id);
        CHECK((r->place == SCHEME_PLACE_LOOP) == (r->chunks == SCHEME_CHUNKS_CONFIG));
        CHECK((r->place == SCHEME_PLACE_V) == (r->chunks == SCHEME_CHUNKS_TWO));
        CHECK((r->place == SCHEME_PLACE_CHIMERA) == (r->replicas == 2) && r->replicas >= 1);
        CHECK((scheme_generator(r->id) == NULL) == (r->place == SCHEME_PLACE_NONE));
        CHECK(!r->stash || r->async);
        if (r->place == SCHEME_PLACE_NONE)
            continue;
        struct plan *p = build(r->id, 2, 4, 1, 2, 1);
        CHECK(p != NULL && validate_plan(p, &e) == MT_OK);
        if (p == NULL)
            continue;
        buildable++;
        const struct plan_geom *g = plan_geom(p);
        CHECK_EQ_INT(g->stages, 2 * (r->chunks == SCHEME_CHUNKS_ONE ? 1 : 2));
        for (int mb = 0; mb < g->mbs; mb++) /* the placement, from the record's words */
            for (int st = 0; st < g->stages; st++) {
                int dev, part, D = g->devices;
                vpipe_locate(g, mb, st, &dev, &part);
                int want = r->place == SCHEME_PLACE_LOOP ? st % D
                           : r->place == SCHEME_PLACE_V  ? (st < D ? st : 2 * D - 1 - st)
                           : r->place == SCHEME_PLACE_CHIMERA && part == 1 ? D - 1 - st
                                                                           : st;
                CHECK_EQ_INT(dev, want);
            }
        char *csv = plan_to_torch_csv(p, &e);
        if (r->torch_none != NULL) {
            CHECK(csv == NULL && e.code == MT_EUNSUPPORTED && strstr(e.msg, r->torch_none));
        } else {
            CHECK(csv != NULL);
            struct plan *q = NULL;
            struct sim_result a, b;
            CHECK(csv != NULL && plan_load_torch_csv(csv, strlen(csv), "t.csv", plan_config(p),
                                                     &q, &e) == MT_OK);
            if (q != NULL) {
                CHECK(scheme_registry_get(plan_geom(q)->scheme)->place == r->place);
                CHECK(sim_run(p, &a, &e) == MT_OK && sim_run(q, &b, &e) == MT_OK);
                CHECK_NEAR(a.step_time, b.step_time, 1e-9);
                sim_result_fini(&a);
                sim_result_fini(&b);
            }
            plan_free(q);
        }
        free(csv);
        plan_free(p);
    }
    CHECK(buildable >= 14);
    /* each placement torch can hold, with each of its backwards, is read as one scheme */
    static const enum scheme_place places[] = {SCHEME_PLACE_LINE, SCHEME_PLACE_LOOP,
                                               SCHEME_PLACE_V};
    for (int k = 0; k < 3; k++)
        for (unsigned kind = SCHEME_CSV_WHOLE; kind <= SCHEME_CSV_MIXED; kind <<= 1) {
            int readers = 0;
            for (int id = 0; id < SCHEME__COUNT; id++) {
                const struct scheme_record *r = scheme_registry_get((enum scheme_id)id);
                readers += r->place == places[k] && (r->torch_csv & kind) != 0;
            }
            CHECK_EQ_INT(readers, 1);
        }
    enum scheme_id none;
    CHECK(!scheme_registry_torch(SCHEME_PLACE_CHIMERA, SCHEME_CSV_WHOLE, &none));
    CHECK(config_scheme_parse("no-such-scheme", &none, &e) == MT_EINVAL &&
          strstr(e.msg, "DualPipeV") && strstr(e.msg, "or Auto"));
}

int main(void)
{
    test_registry();
    test_orders();
    test_closed_forms();
    test_authors_steps();
    test_controllable_memory();
    test_memory();
    test_passes();
    return check_report("test_zb");
}
