/* tests/unit/test_dualpipe.c: DualPipe and the expert all-to-alls' lane (issue 38 item 4),
 * against what is known independently of the code:
 *  - orders: the rows deepseek-ai/DualPipe's own step() gives (dualpipe.py for DualPipe at 4
 *    ranks x 8 micro-batches and at the README figure's 8 ranks x 20; dualpipev.py for
 *    DualPipeV at the README's 4 ranks x 10), run with its compute and communication replaced
 *    by loggers (scripts/dualpipe_reference_order.py): "F3.1" a forward of micro-batch 3 on
 *    part 1, B / W the split backward, BW a whole one, "&" a backward its reference runs in
 *    overlapped_forward_backward with the forward before it;
 *  - memory: DualPipe keeps both directions' stages on every device, 2x the parameters of 1F1B
 *    over the same pp (DualPipe README's table), device d the stages d and D-1-d, and PP + 1
 *    activations a device (the same table);
 *  - time, worked by hand (unit costs F,B,RC,W,O,A = 2,4,2,1,1,1 at 2 ranks x 4 micro-batches:
 *    F = 2 of which 1 all-to-all, BW = 4 with 1, B = 3, W = 1; the rows
 *      device 0: F0.0 F2.1 F1.0 BW2.1 F3.1 BW0.0& BW3.1 B1.0 W1.0
 *      device 1: F2.1 F0.0 F3.1 BW0.0 F1.0 BW2.1& BW1.0 B3.1 W3.1):
 *    alone, every all-to-all exposed: device 1 runs F2.1 [0,2] F0.0 [2,4] F3.1 [4,6] BW0.0
 *    [6,10] F1.0 [10,12] BW2.1 [12,16] BW1.0 [16,20], device 0 F3.1 [10,12] BW0.0 [12,16]
 *    BW3.1 [16,20], then B [20,23] and W [23,24] on both: 24 t. Paired, the forward lasts
 *    its compute 1 + max(0, 1 - 3) and the backward 3 + max(0, 1 - 1): the pair 4 t, not 6:
 *    device 0 F3.1 [10,11] BW0.0 [11,14] BW3.1 [14,18], device 1 F1.0 [10,11] BW2.1 [11,14]
 *    BW1.0 [14,18], B [18,21], W [21,22]: 22 t; each device hid 2 t of its 8 t of all-to-alls
 *    (4 forwards, 3 whole backwards, 1 B, 1 t each) and left 6 t exposed;
 *  - time, closed form: the README's bubble (PP/2 - 1)(F&B + B - 3W) at F = B = W = 1;
 *  - DualPipeV worked the same way at 2 ranks x 4 micro-batches (25 t unpaired, 22 t paired;
 *    the timelines at test_hand_worked_dualpipev);
 *  - with no all-to-all the pairs change nothing, to the bit. */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/config.h"
#include "model/cost.h"
#include "model/presets.h"
#include "sim/core/bound.h"
#include "sim/core/overlap.h"
#include "sim/core/simulate.h"
#include "sim/plan/plan.h"
#include "sim/plan/validate.h"
#include "sim/schemes/scheme.h"
#include "tests/check.h"
#include "tests/unit_config.h"
#include "util/err.h"

static const char *const ref_dualpipe_4_8[] = {
    "F0.0 F1.0 F2.0 F4.1 B4.1 W4.1 F5.1 F3.0 BW5.1& F6.1 BW0.0& BW6.1 F7.1 BW1.0& BW7.1 "
    "B2.0 W2.0 B3.0 W3.0",
    "F0.0 F4.1 F1.0 F5.1 F2.0 BW4.1 F6.1 BW0.0& F3.0 BW5.1& F7.1 BW1.0& BW6.1 BW2.0 B7.1 "
    "B3.0 W7.1 W3.0",
    "F4.1 F0.0 F5.1 F1.0 F6.1 BW0.0 F2.0 BW4.1& F7.1 BW1.0& F3.0 BW5.1& BW2.0 BW6.1 B3.0 "
    "B7.1 W3.0 W7.1",
    "F4.1 F5.1 F6.1 F0.0 B0.0 W0.0 F1.0 F7.1 BW1.0& F2.0 BW4.1& BW2.0 F3.0 BW5.1& BW3.0 "
    "B6.1 W6.1 B7.1 W7.1",
};

static const char *const ref_dualpipe_8_20[] = {
    "F0.0 F1.0 F2.0 F3.0 F4.0 F5.0 F6.0 F10.1 B10.1 W10.1 F11.1 B11.1 W11.1 F12.1 B12.1 "
    "W12.1 F13.1 F7.0 BW13.1& F14.1 BW0.0& F8.0 BW14.1& F15.1 BW1.0& F9.0 BW15.1& F16.1 "
    "BW2.0& BW16.1 F17.1 BW3.0& BW17.1 F18.1 BW4.0& BW18.1 F19.1 BW5.0& BW19.1 B6.0 W6.0 "
    "B7.0 W7.0 B8.0 W8.0 B9.0 W9.0",
    "F0.0 F1.0 F2.0 F3.0 F4.0 F10.1 F5.0 F11.1 B10.1 W10.1 F12.1 B11.1 W11.1 F13.1 F6.0 "
    "BW12.1& F14.1 BW0.0& F7.0 BW13.1& F15.1 BW1.0& F8.0 BW14.1& F16.1 BW2.0& F9.0 "
    "BW15.1& F17.1 BW3.0& BW16.1 F18.1 BW4.0& BW17.1 F19.1 BW5.0& BW18.1 BW6.0 B19.1 B7.0 "
    "W19.1 B8.0 W7.0 B9.0 W8.0 W9.0",
    "F0.0 F1.0 F2.0 F10.1 F3.0 F11.1 F4.0 F12.1 B10.1 W10.1 F13.1 F5.0 BW11.1& F14.1 "
    "BW0.0& F6.0 BW12.1& F15.1 BW1.0& F7.0 BW13.1& F16.1 BW2.0& F8.0 BW14.1& F17.1 BW3.0& "
    "F9.0 BW15.1& F18.1 BW4.0& BW16.1 F19.1 BW5.0& BW17.1 BW6.0 BW18.1 B7.0 B19.1 B8.0 "
    "W7.0 B9.0 W19.1 W8.0 W9.0",
    "F0.0 F10.1 F1.0 F11.1 F2.0 F12.1 F3.0 F13.1 F4.0 BW10.1 F14.1 BW0.0& F5.0 BW11.1& "
    "F15.1 BW1.0& F6.0 BW12.1& F16.1 BW2.0& F7.0 BW13.1& F17.1 BW3.0& F8.0 BW14.1& F18.1 "
    "BW4.0& F9.0 BW15.1& F19.1 BW5.0& BW16.1 BW6.0 BW17.1 BW7.0 B18.1 B8.0 B19.1 B9.0 "
    "W18.1 W8.0 W19.1 W9.0",
    "F10.1 F0.0 F11.1 F1.0 F12.1 F2.0 F13.1 F3.0 F14.1 BW0.0 F4.0 BW10.1& F15.1 BW1.0& "
    "F5.0 BW11.1& F16.1 BW2.0& F6.0 BW12.1& F17.1 BW3.0& F7.0 BW13.1& F18.1 BW4.0& F8.0 "
    "BW14.1& F19.1 BW5.0& F9.0 BW15.1& BW6.0 BW16.1 BW7.0 BW17.1 B8.0 B18.1 B9.0 B19.1 "
    "W8.0 W18.1 W9.0 W19.1",
    "F10.1 F11.1 F12.1 F0.0 F13.1 F1.0 F14.1 F2.0 B0.0 W0.0 F3.0 F15.1 BW1.0& F4.0 "
    "BW10.1& F16.1 BW2.0& F5.0 BW11.1& F17.1 BW3.0& F6.0 BW12.1& F18.1 BW4.0& F7.0 "
    "BW13.1& F19.1 BW5.0& F8.0 BW14.1& BW6.0 F9.0 BW15.1& BW7.0 BW16.1 BW8.0 B17.1 B9.0 "
    "B18.1 W17.1 B19.1 W9.0 W18.1 W19.1",
    "F10.1 F11.1 F12.1 F13.1 F14.1 F0.0 F15.1 F1.0 B0.0 W0.0 F2.0 B1.0 W1.0 F3.0 F16.1 "
    "BW2.0& F4.0 BW10.1& F17.1 BW3.0& F5.0 BW11.1& F18.1 BW4.0& F6.0 BW12.1& F19.1 BW5.0& "
    "F7.0 BW13.1& BW6.0 F8.0 BW14.1& BW7.0 F9.0 BW15.1& BW8.0 BW16.1 B9.0 B17.1 W9.0 "
    "B18.1 W17.1 B19.1 W18.1 W19.1",
    "F10.1 F11.1 F12.1 F13.1 F14.1 F15.1 F16.1 F0.0 B0.0 W0.0 F1.0 B1.0 W1.0 F2.0 B2.0 "
    "W2.0 F3.0 F17.1 BW3.0& F4.0 BW10.1& F18.1 BW4.0& F5.0 BW11.1& F19.1 BW5.0& F6.0 "
    "BW12.1& BW6.0 F7.0 BW13.1& BW7.0 F8.0 BW14.1& BW8.0 F9.0 BW15.1& BW9.0 B16.1 W16.1 "
    "B17.1 W17.1 B18.1 W18.1 B19.1 W19.1",
};

static const char *const ref_dualpipev_4_10[] = {
    "F0.0 F1.0 F2.0 F3.0 F4.0 F5.0 F6.0 F0.1 B0.1 W0.1 F1.1 B1.1 W1.1 F2.1 B2.1 W2.1 F3.1 "
    "F7.0 BW3.1& F4.1 BW0.0& F8.0 BW4.1& F5.1 BW1.0& F9.0 BW5.1& F6.1 BW2.0& BW6.1 F7.1 "
    "BW3.0& BW7.1 F8.1 BW4.0& BW8.1 F9.1 BW5.0& BW9.1 B6.0 W6.0 B7.0 W7.0 B8.0 W8.0 B9.0 "
    "W9.0",
    "F0.0 F1.0 F2.0 F3.0 F4.0 F0.1 F5.0 F1.1 B0.1 W0.1 F2.1 B1.1 W1.1 F3.1 F6.0 BW2.1& "
    "F4.1 BW0.0& F7.0 BW3.1& F5.1 BW1.0& F8.0 BW4.1& F6.1 BW2.0& F9.0 BW5.1& F7.1 BW3.0& "
    "BW6.1 F8.1 BW4.0& BW7.1 F9.1 BW5.0& BW8.1 BW6.0 B9.1 B7.0 W9.1 B8.0 W7.0 B9.0 W8.0 "
    "W9.0",
    "F0.0 F1.0 F2.0 F0.1 F3.0 F1.1 F4.0 F2.1 B0.1 W0.1 F3.1 F5.0 BW1.1& F4.1 BW0.0& F6.0 "
    "BW2.1& F5.1 BW1.0& F7.0 BW3.1& F6.1 BW2.0& F8.0 BW4.1& F7.1 BW3.0& F9.0 BW5.1& F8.1 "
    "BW4.0& BW6.1 F9.1 BW5.0& BW7.1 BW6.0 BW8.1 B7.0 B9.1 B8.0 W7.0 B9.0 W9.1 W8.0 W9.0",
    "F0.0 F0.1 F1.0 F1.1 F2.0 F2.1 F3.0 F3.1 F4.0 BW0.1 F4.1 BW0.0& F5.0 BW1.1& F5.1 "
    "BW1.0& F6.0 BW2.1& F6.1 BW2.0& F7.0 BW3.1& F7.1 BW3.0& F8.0 BW4.1& F8.1 BW4.0& F9.0 "
    "BW5.1& F9.1 BW5.0& BW6.1 BW6.0 BW7.1 BW7.0 B8.1 B8.0 B9.1 B9.0 W8.1 W8.0 W9.1 W9.0",
};

static struct plan *build_cfg(const struct config *c)
{
    struct mt_err e = {0};
    struct plan *p = NULL;
    if (scheme_build(c, &p, &e) != MT_OK) {
        fprintf(stderr, "%s: %s\n", config_scheme_name(c->scheme), e.msg);
        CHECK(0);
        exit(1);
    }
    if (validate_plan(p, &e) != MT_OK) {
        fprintf(stderr, "%s: invalid: %s\n", config_scheme_name(c->scheme), e.msg);
        CHECK(0);
    }
    return p;
}

static struct plan *build(enum scheme_id s, int D, int N)
{
    struct config c = test_unit_config(s, D, N, 2, 4, 2);
    c.unit.w = 1;
    c.unit.a = 1;
    c.model.num_layers = 64;
    return build_cfg(&c);
}

/* Device d's compute order in the reference rows' spelling, "&" where overlap_pairs pairs a
 * backward with the forward before it. */
static void order_text(const struct plan *p, int d, char *buf, size_t n)
{
    const struct instr *ins = plan_instrs(p, d);
    int len_d = plan_len(p, d);
    int *pair = malloc(((size_t)len_d + 1) * sizeof *pair);
    overlap_pairs(ins, len_d, pair);
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < len_d; i++) {
        const struct instr *in = &ins[i];
        const char *op = in->op == OP_FW ? "F" : in->op == OP_B ? "B" : in->op == OP_W ? "W"
                       : in->op == OP_BW ? "BW" : NULL;
        if (op == NULL)
            continue;
        len += (size_t)snprintf(buf + len, len < n ? n - len : 0, "%s%s%d.%d%s", len ? " " : "",
                                op, in->mb, in->part, pair[i] >= 0 && pair[i] < i ? "&" : "");
    }
    free(pair);
}

static void check_rows(enum scheme_id s, int D, int N, const char *const *want)
{
    struct plan *p = build(s, D, N);
    char buf[4096];
    for (int d = 0; d < D; d++) {
        order_text(p, d, buf, sizeof buf);
        if (strcmp(buf, want[d]) != 0) {
            fprintf(stderr, "%s D=%d N=%d device %d:\n  got  %s\n  want %s\n",
                    config_scheme_name(s), D, N, d, buf, want[d]);
            CHECK(0);
        }
    }
    plan_free(p);
}

static struct sim_result run(const struct plan *p)
{
    struct sim_result r;
    struct mt_err e = {0};
    if (sim_run(p, &r, &e) != MT_OK) {
        fprintf(stderr, "sim: %s\n", e.msg);
        CHECK(0);
        exit(1);
    }
    return r;
}

/* p with every pair undone: the same order, each all-to-all exposed. */
static struct plan *unpaired(const struct plan *p)
{
    struct plan *q = plan_clone(p);
    for (int d = 0; d < plan_devices(q); d++) {
        int n = plan_len(q, d);
        struct instr *ins = malloc((size_t)n * sizeof *ins);
        memcpy(ins, plan_instrs(q, d), (size_t)n * sizeof *ins);
        for (int i = 0; i < n; i++)
            ins[i].paired = 0;
        plan_set_list(q, d, ins, n);
        free(ins);
    }
    return q;
}

static void test_hand_worked_overlap(void)
{
    struct plan *p = build(SCHEME_DUALPIPE, 2, 4), *q = unpaired(p);
    struct sim_result r = run(p), s = run(q);
    CHECK_NEAR(s.step_time, 24, 1e-12);
    CHECK_NEAR(r.step_time, 22, 1e-12);
    CHECK(r.a2a_hidden != NULL && r.a2a_partner != NULL);
    for (int d = 0; d < 2; d++) {
        CHECK_NEAR(r.dev[d].a2a_hidden, 2, 1e-12);
        CHECK_NEAR(r.dev[d].a2a_exposed, 6, 1e-12);
        CHECK_NEAR(s.dev[d].a2a_hidden, 0, 1e-12);
        CHECK_NEAR(s.dev[d].a2a_exposed, 8, 1e-12);
    }
    /* device 0's pair: F3.1 [10, 11] hid 1 behind BW0.0 [11, 14], which hid 1 behind it */
    int f = plan_find(p, 0, OP_FW, 3, 1), b = plan_find(p, 0, OP_BW, 0, 0);
    CHECK(f >= 0 && b > f);
    int fid = plan_id(p, 0, f), bid = plan_id(p, 0, b);
    CHECK_NEAR(r.start[fid], 10, 1e-12);
    CHECK_NEAR(r.end[fid], 11, 1e-12);
    CHECK_NEAR(r.start[bid], 11, 1e-12);
    CHECK_NEAR(r.end[bid], 14, 1e-12);
    CHECK_EQ_INT(r.a2a_partner[fid], bid);
    CHECK_EQ_INT(r.a2a_partner[bid], fid);
    CHECK_NEAR(r.a2a_hidden[fid], 1, 1e-12);
    CHECK_NEAR(r.a2a_hidden[bid], 1, 1e-12);
    /* the middle devices' first F&B is alone (dualpipe.py step 4): device 1's BW0.0 */
    int alone = plan_id(p, 1, plan_find(p, 1, OP_BW, 0, 1));
    CHECK_EQ_INT(r.a2a_partner[alone], -1);
    CHECK_NEAR(r.a2a_exposed[alone], 1, 1e-12);
    sim_result_fini(&r);
    sim_result_fini(&s);
    plan_free(p);
    plan_free(q);
}

/* An all-to-all longer than the partner's compute shows by the difference: F,B,W = 4,6,1 with
 * A = 3 (F's compute 1, BW's 3): F lasts 1 + max(0, 3 - 3) = 1, BW 3 + max(0, 3 - 1) = 5. */
static void test_rule_outlasting(void)
{
    struct config c = test_unit_config(SCHEME_DUALPIPE, 2, 4, 4, 6, 4);
    c.unit.w = 1;
    c.unit.a = 3;
    c.model.num_layers = 64;
    struct plan *p = build_cfg(&c);
    struct cost_model cost;
    struct mt_err e = {0};
    CHECK(scheme_costs(&c, &cost, &e) == MT_OK);
    const struct instr *ins = plan_instrs(p, 0);
    int f = plan_find(p, 0, OP_FW, 3, 1), b = plan_find(p, 0, OP_BW, 0, 0);
    CHECK_NEAR(overlap_latency(&cost, &ins[f], &ins[b]), 1, 1e-12);
    CHECK_NEAR(overlap_latency(&cost, &ins[b], &ins[f]), 5, 1e-12);
    CHECK_NEAR(overlap_latency(&cost, &ins[b], NULL), 6, 1e-12);
    cost_model_fini(&cost);
    plan_free(p);
}

/* 2x parameters: device d holds the stages d and D-1-d of 1F1B's D (analytic costs). */
static void test_memory_two_directions(void)
{
    struct config c;
    config_default(&c);
    c.num_device = 4;
    c.num_microbatches = 8;
    c.scheme = SCHEME_V;
    struct plan *v = build_cfg(&c);
    c.scheme = SCHEME_DUALPIPE;
    struct plan *dp = build_cfg(&c);
    struct sim_result rv = run(v), rd = run(dp);
    double sum_v = 0, sum_d = 0;
    for (int d = 0; d < 4; d++) {
        CHECK_NEAR(rd.dev[d].static_mem, rv.dev[d].static_mem + rv.dev[3 - d].static_mem,
                   1e-6 * rd.dev[d].static_mem);
        sum_v += rv.dev[d].static_mem;
        sum_d += rd.dev[d].static_mem;
    }
    CHECK_NEAR(sum_d, 2 * sum_v, 1e-9 * sum_d);
    CHECK(rd.a2a_hidden == NULL); /* a dense model: no lane */
    sim_result_fini(&rv);
    sim_result_fini(&rd);
    plan_free(v);
    plan_free(dp);
}

/* Without all-to-alls (A = 0) the pairs leave every time as it was, to the bit. */
static void test_no_a2a_bitwise(void)
{
    enum scheme_id ids[] = {SCHEME_DUALPIPE, SCHEME_DUALPIPEV};
    for (int k = 0; k < 2; k++) {
        struct config c = test_unit_config(ids[k], 4, 8, 2, 4, 2);
        c.unit.w = 1;
        c.model.num_layers = 64;
        struct plan *p = build_cfg(&c), *q = unpaired(p);
        struct sim_result r = run(p), s = run(q);
        CHECK(r.step_time == s.step_time);
        CHECK(r.a2a_hidden == NULL);
        for (int i = 0; i < r.total; i++)
            CHECK(r.start[i] == s.start[i] && r.end[i] == s.end[i]);
        sim_result_fini(&r);
        sim_result_fini(&s);
        plan_free(p);
        plan_free(q);
    }
}

/* A recompute put between a pair's members breaks the pair: its all-to-alls show again. */
static void test_pass_breaks_pair(void)
{
    struct instr ins[] = {{OP_FW, 3, 1, 1, -1, 0, 0, 0}, {OP_RC, 0, 0, 0, -1, 0, 0, 0},
                          {OP_BW, 0, 0, 0, -1, 0, 0, 1}, {OP_FW, 1, 0, 0, -1, 0, 0, 0},
                          {OP_BW, 2, 1, 1, -1, 0, 0, 1}, {OP_FW, 4, 1, 1, -1, 0, 0, 1}};
    int pair[6];
    overlap_pairs(ins, 6, pair);
    CHECK_EQ_INT(pair[0], -1);
    CHECK_EQ_INT(pair[2], -1);
    CHECK_EQ_INT(pair[3], 4);
    CHECK_EQ_INT(pair[4], 3);
    CHECK_EQ_INT(pair[5], -1); /* its forward partner is already in a pair */
}

/* Megatron's --overlap-moe-expert-parallel-comm on interleaved 1F1B (W, 2 chunks; unit costs
 * 2,4,2,1,1,1: a chunk's F = 1 with 0.5 all-to-all, BW = 2 with 0.5): each steady-state
 * forward pairs with the backward after it and lasts 0.5 + max(0, 0.5 - 1.5) = 0.5, the
 * backward 1.5 + max(0, 0.5 - 0.5) = 1.5; warm-up and cool-down keep 1 and 2, and device d
 * has N v - warm(d) pairs, warm(d) = 2(D-d-1) + (v-1)D + 1 (Megatron's schedules.py warm-up
 * count, one more with the flag so that a pair never holds one micro-batch twice). */
static void test_interleaved_flag(void)
{
    struct config c = test_unit_config(SCHEME_W, 2, 4, 2, 4, 2);
    c.unit.w = 1;
    c.unit.a = 1;
    c.chunks = 2;
    c.model.num_layers = 64;
    c.overlap_moe_a2a = true;
    struct plan *p = build_cfg(&c);
    struct sim_result r = run(p);
    c.overlap_moe_a2a = false;
    struct plan *q = build_cfg(&c);
    struct sim_result s = run(q);
    CHECK(r.step_time < s.step_time);
    for (int d = 0; d < 2; d++) {
        int pairs = 0, warm = 2 * (2 - d - 1) + 2 + 1, fw_seen = 0;
        for (int i = 0; i < plan_len(p, d); i++) {
            const struct instr *in = plan_at(p, d, i);
            int id = plan_id(p, d, i);
            double dur = r.end[id] - r.start[id];
            if (in->op == OP_FW) {
                bool paired = r.a2a_partner[id] >= 0;
                CHECK(paired == (fw_seen >= warm));
                CHECK_NEAR(dur, paired ? 0.5 : 1, 1e-12);
                fw_seen++;
            } else if (in->op == OP_BW) {
                bool paired = r.a2a_partner[id] >= 0;
                pairs += paired;
                CHECK_NEAR(dur, paired ? 1.5 : 2, 1e-12);
            }
        }
        CHECK_EQ_INT(pairs, 4 * 2 - warm);
    }
    struct mt_err e = {0};
    c.scheme = SCHEME_V;
    c.overlap_moe_a2a = true; /* 1F1B has no pairs of its own: refused, the key named */
    CHECK(config_validate(&c, &e) == MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "overlap_moe_expert_parallel_comm");
    sim_result_fini(&r);
    sim_result_fini(&s);
    plan_free(p);
    plan_free(q);
}

/* A plan file keeps the pairs ("paired": 1) and refuses one on an instruction that cannot be in
 * a pair, naming the field. */
static void test_plan_file(void)
{
    struct plan *p = build(SCHEME_DUALPIPEV, 2, 4), *q = NULL;
    char *text = plan_to_json(p);
    struct mt_err e = {0};
    CHECK(plan_load_string(text, strlen(text), "p.json", &q, &e) == MT_OK);
    int pairs = 0;
    for (int d = 0; q != NULL && d < 2; d++)
        for (int i = 0; i < plan_len(q, d); i++) {
            CHECK_EQ_INT(plan_at(q, d, i)->paired, plan_at(p, d, i)->paired);
            pairs += plan_at(q, d, i)->paired;
        }
    CHECK(pairs > 0);
    char *at = strstr(text, "\"op\":\"SA\"");
    CHECK(at != NULL);
    if (at != NULL) { /* {"op":"SA",... -> {"paired":1,"op":"SA",... */
        size_t pre = (size_t)(at - text), n = strlen(text);
        char *bad = malloc(n + 16);
        memcpy(bad, text, pre);
        memcpy(bad + pre, "\"paired\":1,", 11);
        memcpy(bad + pre + 11, at, n - pre + 1);
        struct plan *r = NULL;
        CHECK(plan_load_string(bad, strlen(bad), "bad.json", &r, &e) != MT_OK);
        CHECK_STR_CONTAINS(e.msg, "paired");
        CHECK_STR_CONTAINS(e.msg, "bad.json");
        plan_free(r);
        free(bad);
    }
    free(text);
    plan_free(p);
    plan_free(q);
}

/* The DualPipe README's table: PP + 1 activations a device (here D + 1 M_theta, a part being a
 * whole device share under unit costs), at the figure's 8 x 20 and at 4 x 8 and 4 x 16. */
static void test_activations_pp_plus_one(void)
{
    int shapes[][2] = {{4, 8}, {4, 16}, {8, 20}};
    for (int k = 0; k < 3; k++) {
        struct config c = test_unit_config(SCHEME_DUALPIPE, shapes[k][0], shapes[k][1], 1, 2, 1);
        c.model.num_layers = 64;
        struct plan *p = build_cfg(&c);
        struct sim_result r = run(p);
        for (int d = 0; d < shapes[k][0]; d++)
            CHECK_NEAR(r.dev[d].peak_dynamic, shapes[k][0] + 1, 1e-12);
        sim_result_fini(&r);
        plan_free(p);
    }
}

/* The simulator's fast path and its general loop take the same pair latencies (to the bit), and
 * the lower bound stays under the step it bounds. */
static void test_paths_agree(void)
{
    enum scheme_id ids[] = {SCHEME_DUALPIPE, SCHEME_DUALPIPEV};
    for (int k = 0; k < 2; k++) {
        struct plan *p = build(ids[k], 4, 8);
        struct cost_model cost;
        struct mt_err e = {0};
        CHECK(scheme_costs(plan_config(p), &cost, &e) == MT_OK);
        struct sim_result fast = run(p), gen;
        CHECK(sim_run_general(p, &cost, NULL, &gen, &e) == MT_OK);
        CHECK(fast.step_time == gen.step_time);
        for (int i = 0; i < fast.total; i++)
            CHECK(fast.end[i] == gen.end[i] && fast.a2a_hidden[i] == gen.a2a_hidden[i]);
        struct bound_result b;
        CHECK(bound_plan(p, &b, &e) == MT_OK);
        CHECK(b.time <= fast.step_time + 1e-9);
        CHECK(fast.dev[0].a2a_hidden > 0);
        sim_result_fini(&fast);
        sim_result_fini(&gen);
        cost_model_fini(&cost);
        plan_free(p);
    }
}

/* DualPipeV at 2 ranks (4 stages in a V) x 4 micro-batches, unit costs 2,4,2,2,1,1: a chunk's
 * F = 1 (0.5 all-to-all), BW = 2 (0.5), B = 1 (0.5), W = 1; paired, F lasts 0.5 and BW 1.5.
 * The rows (dualpipev.py's, test above):
 *   device 0: F0.0 F1.0 F2.0 F0.1 B0.1 W0.1 F1.1 F3.0 BW1.1& F2.1 BW0.0& BW2.1 F3.1 BW1.0& BW3.1
 *             B2.0 W2.0 B3.0 W3.0
 *   device 1: F0.0 F0.1 F1.0 F1.1 F2.0 BW0.1 F2.1 BW0.0& F3.0 BW1.1& F3.1 BW1.0& BW2.1 BW2.0 B3.1
 *             B3.0 W3.1 W3.0
 * Unpaired, by hand: device 1 F2.1 [8,9] BW0.0 [9,11] F3.0 [11,12] BW1.1 [12,14] F3.1 [14,15]
 * BW1.0 [15,17] BW2.1 [17,19] BW2.0 [19,21] B3.1 [21,22] B3.0 [22,23] W3.1 [23,24] W3.0
 * [24,25]: 25 t. Paired: device 0 F3.0 [7,7.5] BW1.1 [7.5,9] F2.1 [9,9.5] BW0.0 [10,11.5] BW2.1
 * [11.5,13.5] F3.1 [13.5,14] BW1.0 [14,15.5] BW3.1 [15.5,17.5]; device 1 BW0.1 [6,8] (the
 * warm-up's, alone) F2.1 [8,8.5] BW0.0 [8.5,10] F3.0 [10,10.5] BW1.1 [10.5,12] F3.1 [12,12.5]
 * BW1.0 [12.5,14] BW2.1 [14,16] BW2.0 [16,18] B3.1 [18,19] B3.0 [19,20] W3.1 [20,21] W3.0
 * [21,22]: 22 t. Each device: 16 all-to-alls of 0.5 = 8 t, 3 pairs hide 3 t, 5 t exposed (the
 * warm-up's forwards and B0.1, the cool-down's backwards). */
static void test_hand_worked_dualpipev(void)
{
    struct config c = test_unit_config(SCHEME_DUALPIPEV, 2, 4, 2, 4, 2);
    c.unit.w = 2;
    c.unit.a = 1;
    c.model.num_layers = 64;
    struct plan *p = build_cfg(&c), *q = unpaired(p);
    struct sim_result r = run(p), s = run(q);
    CHECK_NEAR(s.step_time, 25, 1e-12);
    CHECK_NEAR(r.step_time, 22, 1e-12);
    for (int d = 0; d < 2; d++) {
        CHECK_NEAR(r.dev[d].a2a_hidden, 3, 1e-12);
        CHECK_NEAR(r.dev[d].a2a_exposed, 5, 1e-12);
    }
    int w = plan_id(p, 1, plan_find(p, 1, OP_BW, 0, 2)); /* device 1's BW0.1: warm-up, alone */
    CHECK_EQ_INT(r.a2a_partner[w], -1);
    CHECK_NEAR(r.start[w], 6, 1e-12);
    CHECK_NEAR(r.end[w], 8, 1e-12);
    int f = plan_id(p, 0, plan_find(p, 0, OP_FW, 3, 3)); /* device 0's F3.1 & BW1.0 */
    int b = plan_id(p, 0, plan_find(p, 0, OP_BW, 1, 0));
    CHECK_NEAR(r.start[f], 13.5, 1e-12);
    CHECK_NEAR(r.end[b], 15.5, 1e-12);
    CHECK_NEAR(r.a2a_hidden[f], 0.5, 1e-12);
    CHECK_NEAR(r.a2a_hidden[b], 0.5, 1e-12);
    sim_result_fini(&r);
    sim_result_fini(&s);
    plan_free(p);
    plan_free(q);
}

/* The DualPipe README's bubble, (PP/2 - 1)(F&B + B - 3W) with F&B = F + B + W unoverlapped
 * (B the input gradient, as tests/unit/test_zb.c reads DualPipeV's row): with F = B = W = 1 a
 * device's step is its work N(F + B + W) = 3N plus (D/2 - 1) t, at 4x8, 6x12, 8x20, 8x32. */
static void test_bubble_formula(void)
{
    int shapes[][2] = {{4, 8}, {6, 12}, {8, 20}, {8, 32}};
    for (int k = 0; k < 4; k++) {
        int D = shapes[k][0], N = shapes[k][1];
        struct config c = test_unit_config(SCHEME_DUALPIPE, D, N, 1, 2, 1);
        c.model.num_layers = 96;
        struct plan *p = build_cfg(&c);
        struct sim_result r = run(p);
        CHECK_NEAR(r.step_time, 3.0 * N + (D / 2 - 1), 1e-12);
        sim_result_fini(&r);
        plan_free(p);
    }
}

int main(void)
{
    check_rows(SCHEME_DUALPIPE, 4, 8, ref_dualpipe_4_8);
    check_rows(SCHEME_DUALPIPE, 8, 20, ref_dualpipe_8_20);
    check_rows(SCHEME_DUALPIPEV, 4, 10, ref_dualpipev_4_10);
    test_hand_worked_overlap();
    test_rule_outlasting();
    test_memory_two_directions();
    test_no_a2a_bitwise();
    test_pass_breaks_pair();
    test_interleaved_flag();
    test_plan_file();
    test_activations_pp_plus_one();
    test_paths_agree();
    test_hand_worked_dualpipev();
    test_bubble_formula();
    return check_report("test_dualpipe");
}
