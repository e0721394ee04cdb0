/* tests/unit/test_sim.c: schemes + simulator against values known by hand or from the
 * papers: (N+D-1)(F+B) for V and GPipe, the paper's Table 1 activation peaks, Chimera's and
 * interleaving's bubble counts, a hand-worked 2-device timeline, message buffers counted by
 * hand, deadlock detection, and
 * properties over random configs. */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/config.h"
#include "model/cost.h"
#include "sim/core/memory.h"
#include "sim/plan/plan.h"
#include "sim/schemes/scheme.h"
#include "sim/core/simulate.h"
#include "sim/plan/validate.h"
#include "sim/core/vpipe.h"
#include "tests/check.h"
#include "tests/unit_config.h"
#include "util/err.h"

static struct config unit_config(enum scheme_id scheme, int D, int N, double f, double b)
{
    return test_unit_config(scheme, D, N, f, b, f);
}

static int simulate(const struct config *c, struct plan **pp, struct sim_result *r)
{
    struct mt_err e = {0};
    int rc = scheme_build(c, pp, &e);
    if (rc == MT_OK)
        rc = validate_plan(*pp, &e);
    if (rc == MT_OK)
        rc = sim_run(*pp, r, &e);
    if (rc != MT_OK)
        fprintf(stderr, "simulate %s D=%d N=%d: %s\n", config_scheme_name(c->scheme),
                c->num_device, c->num_microbatches, e.msg);
    return rc;
}

static double step_time(struct config c)
{
    struct plan *p = NULL;
    struct sim_result r;
    double t = -1;
    if (simulate(&c, &p, &r) == MT_OK)
        t = r.step_time;
    sim_result_fini(&r);
    plan_free(p);
    return t;
}

/* V and GPipe under unit costs: (N + D - 1)(F + B) whatever N and D. */
static void test_closed_form_step(void)
{
    int Ds[] = {1, 2, 4, 8}, Ns[] = {1, 3, 4, 8, 16};
    for (size_t i = 0; i < 4; i++)
        for (size_t j = 0; j < 5; j++) {
            int D = Ds[i], N = Ns[j];
            CHECK_NEAR(step_time(unit_config(SCHEME_V, D, N, 1, 2)), (N + D - 1) * 3.0, 1e-9);
            CHECK_NEAR(step_time(unit_config(SCHEME_GPIPE, D, N, 1, 2)), (N + D - 1) * 3.0, 1e-9);
        }
    /* docs/design.md / paper Figure 2 baseline: 4 devices, 4 micro-batches = 21t. */
    CHECK_NEAR(step_time(unit_config(SCHEME_V, 4, 4, 1, 2)), 21.0, 1e-9);
}

/* The hand-worked 2-device 1F1B timeline (F = 1, B = 2):
 *   dev1: F0 [1,2]  B0 [2,4]  F1 [4,5]  B1 [5,7]
 *   dev0: F0 [0,1]  F1 [1,2]  B0 [4,6]  B1 [7,9]  -> step 9 = (2+2-1) x 3. */
static void test_hand_worked_v2(void)
{
    struct config c = unit_config(SCHEME_V, 2, 2, 1, 2);
    struct plan *p = NULL;
    struct sim_result r;
    if (simulate(&c, &p, &r) != MT_OK) {
        CHECK(0);
        return;
    }
    struct {
        int dev;
        enum op op;
        int mb;
        double start, end;
    } want[] = {
        {0, OP_FW, 0, 0, 1}, {0, OP_FW, 1, 1, 2}, {0, OP_BW, 0, 4, 6}, {0, OP_BW, 1, 7, 9},
        {1, OP_FW, 0, 1, 2}, {1, OP_BW, 0, 2, 4}, {1, OP_FW, 1, 4, 5}, {1, OP_BW, 1, 5, 7},
    };
    for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
        int i = plan_find(p, want[k].dev, want[k].op, want[k].mb, want[k].dev);
        CHECK(i >= 0);
        if (i < 0)
            continue;
        int id = plan_id(p, want[k].dev, i);
        CHECK_NEAR(r.start[id], want[k].start, 1e-12);
        CHECK_NEAR(r.end[id], want[k].end, 1e-12);
    }
    CHECK_NEAR(r.step_time, 9, 1e-12);
    CHECK_NEAR(r.dev[0].busy, 6, 1e-12);
    CHECK_NEAR(r.dev[0].bubble, 3, 1e-12);
    /* Throughput under unit costs: N * mbs samples per step. */
    CHECK_NEAR(r.throughput, 2.0 / 9.0, 1e-12);
    sim_result_fini(&r);
    plan_free(p);
}

/* Peak activation memory in units of M_θ (paper Table 1). */
static void peaks(struct config c, double *lo, double *hi)
{
    struct plan *p = NULL;
    struct sim_result r;
    *lo = 1e300, *hi = -1;
    if (simulate(&c, &p, &r) == MT_OK)
        for (int d = 0; d < r.devices; d++) {
            double m = r.dev[d].peak_dynamic;
            *lo = m < *lo ? m : *lo;
            *hi = m > *hi ? m : *hi;
        }
    sim_result_fini(&r);
    plan_free(p);
}

static void test_table1_memory(void)
{
    int Ds[] = {4, 8, 16};
    for (int i = 0; i < 3; i++) {
        int D = Ds[i];
        double lo, hi;
        /* GPipe: N M_θ on every device. */
        peaks(unit_config(SCHEME_GPIPE, D, 2 * D, 1, 2), &lo, &hi);
        CHECK_NEAR(lo, 2 * D, 1e-9);
        CHECK_NEAR(hi, 2 * D, 1e-9);
        /* 1F1B: [M_θ, D M_θ]. */
        peaks(unit_config(SCHEME_V, D, 2 * D, 1, 2), &lo, &hi);
        CHECK_NEAR(lo, 1, 1e-9);
        CHECK_NEAR(hi, D, 1e-9);
        /* Chimera: [(D/2 + 1) M_θ, D M_θ] with N = D. */
        peaks(unit_config(SCHEME_X, D, D, 1, 2), &lo, &hi);
        CHECK_NEAR(lo, D / 2 + 1, 1e-9);
        CHECK_NEAR(hi, D, 1e-9);
        /* Interleave (v = 2): the table prints [D+1, 3D-2] M_θ/2. Counting Megatron's order by
         * hand: device d runs 2(D-d-1) + D warm-up chunk forwards and one more before its first
         * backward, so device 0 holds 3D-1 chunks and device D-1 holds D+1: [D+1, 3D-1] M_θ/2.
         * The table's maximum is one chunk short; the hand count is asserted. */
        struct config w = unit_config(SCHEME_W, D, 2 * D, 1, 2);
        w.chunks = 2;
        peaks(w, &lo, &hi);
        CHECK_NEAR(lo, (D + 1) / 2.0, 1e-9);
        CHECK_NEAR(hi, (3 * D - 1) / 2.0, 1e-9);
    }
}

/* Message buffers (sim/core/simulate.c, model/cost.h msg_bytes), by hand with act = 100 and
 * msg = 10 bytes per micro-batch, nothing static. A send's buffer is reaped at the end of the
 * instruction after the send.
 *   V, 2 devices, 2 mb. dev0 (first stage): FW0 +110 (its activations and output) = 110, SA0
 *   110, FW1 +110 = 220 then SA0's buffer reaped = 210, SA1 210, RG0 +10 = 220, reap = 210,
 *   BW0 -110 (activations, received gradient) = 100, RG1 = 110, BW1 = 0: peak 220.
 *   dev1 (last): RA0 +10, FW0 +100 = 110 then -10 (its input) = 100, BW0 +10 (its input
 *   gradient) = 110 then -100 = 10, SG0 10, RA1 +10 = 20, reap = 10, ...: peak 110.
 *   GPipe, 3 devices, 2 mb, the middle device: RA0 10, FW0 120 -> 110, SA0 110, RA1 120 ->
 *   110, FW1 220 -> 210, SA1 210, RG0 220 -> 210, BW0 220 -> 110, SG0 110, RG1 120 -> 110,
 *   BW1 120 -> 10, SG1 10 (reaped by the next instruction): peak 220 = 2 act + 2 msg
 *   (without buffers: 200). */
static void test_message_buffers(void)
{
    struct {
        enum scheme_id scheme;
        int D, dev;
        double peak;
        enum op op;
        int mb;
        double after; /* memory after that instruction */
    } want[] = {
        {SCHEME_V, 2, 0, 220, OP_SA, 1, 210},     {SCHEME_V, 2, 0, 220, OP_BW, 0, 100},
        {SCHEME_V, 2, 1, 110, OP_FW, 0, 100},     {SCHEME_V, 2, 1, 110, OP_BW, 0, 10},
        {SCHEME_GPIPE, 3, 1, 220, OP_FW, 1, 210}, {SCHEME_GPIPE, 3, 1, 220, OP_BW, 0, 110},
        {SCHEME_GPIPE, 3, 1, 220, OP_RG, 1, 110}, {SCHEME_GPIPE, 3, 1, 220, OP_SG, 1, 10},
    };
    for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
        struct config c = unit_config(want[k].scheme, want[k].D, 2, 1, 2);
        struct plan *p = NULL;
        struct mt_err e = {0};
        struct cost_model cm;
        CHECK_EQ_INT(scheme_build(&c, &p, &e), MT_OK);
        CHECK_EQ_INT(scheme_costs(&c, &cm, &e), MT_OK);
        if (p == NULL)
            continue;
        for (int s = 0; s < cm.num_stages; s++) {
            cm.stage[s].act = 100;
            cm.stage[s].ckpt = 5;
            cm.stage[s].msg_bytes = 10;
        }
        struct sim_result r;
        CHECK_EQ_INT(sim_run_costs(p, &cm, &r, &e), MT_OK);
        int d = want[k].dev;
        CHECK_NEAR(r.dev[d].peak_mem, want[k].peak, 1e-12);
        int i = plan_find(p, d, want[k].op, want[k].mb, d);
        CHECK(i >= 0);
        if (i >= 0)
            CHECK_NEAR(r.mem_after[plan_id(p, d, i)], want[k].after, 1e-12);
        CHECK_NEAR(mem_device_peak(&cm, plan_instrs(p, d), plan_len(p, d)), want[k].peak, 1e-12);
        double last = r.dev[d].curve_mem[r.dev[d].curve_len - 1];
        CHECK_NEAR(last, 0, 1e-12); /* every buffer given back */
        sim_result_fini(&r);
        cost_model_fini(&cm);
        plan_free(p);
    }
}

/* The memory model's one rule (sim/core/memory.h mem_rule, as docs/design.md "Simulator semantics"
 * states it) on a middle stage of three (act 100, checkpoint 5, 4 layers of 20 with a
 * selective checkpoint of 7, message 10, 30 kept by a B for its W), by hand: FW takes act and
 * its output's buffer and gives back its input's; CFW keeps only the checkpoint (k = 0: all
 * layers), or with k = 1 act less one layer plus the selective checkpoint (87); RC adds the
 * rest back; BW frees act; B takes its W's 30 with its input-gradient buffer and frees act at
 * its end, W frees the 30; a receive takes its buffer; a send leaves one behind for the
 * instruction after it. Every
 * forward and its backward (and RC) net to zero; the first and last stages have no input
 * (output) buffer. */
static void test_memory_rule(void)
{
    struct stage_cost st[3] = {0};
    for (int s = 0; s < 3; s++)
        st[s] = (struct stage_cost){.num_layers = 4, .act = 100, .ckpt = 5, .layer_act = 20,
                                    .sel_ckpt = 7, .msg_bytes = 10, .w_keep = 30};
    struct cost_model cm = {.num_stages = 3, .parts_per_device = 1, .stage = st};
    struct {
        enum op op;
        int stage, k;
        double take, give, send;
    } want[] = {
        {OP_FW, 1, 0, 110, 10, 0},  {OP_CFW, 1, 0, 15, 10, 0},  {OP_CFW, 1, 1, 97, 10, 0},
        {OP_RC, 1, 0, 95, 0, 0},    {OP_RC, 1, 1, 13, 0, 0},    {OP_BW, 1, 0, 10, 110, 0},
        {OP_B, 1, 0, 40, 110, 0},   {OP_W, 1, 0, 0, 30, 0},     {OP_RA, 1, 0, 10, 0, 0},
        {OP_RG, 1, 0, 10, 0, 0},    {OP_SA, 1, 0, 0, 0, 10},    {OP_SG, 1, 0, 0, 0, 10},
        {OP_FW, 0, 0, 110, 0, 0},   {OP_FW, 2, 0, 100, 10, 0},  {OP_BW, 0, 0, 0, 110, 0},
        {OP_BW, 2, 0, 10, 100, 0},  {OP_AR, 1, 0, 0, 0, 0},     {OP_OS, 1, 0, 0, 0, 0},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        struct instr in = {.op = want[i].op, .stage = want[i].stage, .ckpt_layers = want[i].k};
        struct mem_step m = mem_step(&cm, &in);
        CHECK_NEAR(m.take, want[i].take, 0);
        CHECK_NEAR(m.give, want[i].give, 0);
        CHECK_NEAR(mem_send_buffer(&cm, &in), want[i].send, 0);
    }
    /* a send's buffer is reaped by the next instruction, and a stashed copy is taken at its
     * start or given back at its end */
    struct instr list[] = {{.op = OP_SA, .stage = 1}, {.op = OP_BW, .stage = 1}};
    double pending = 0;
    struct mem_step a = mem_step_next(&cm, &list[0], &pending);
    struct mem_step b = mem_step_next(&cm, &list[1], &pending);
    CHECK(a.reap == 0 && b.reap == 10 && pending == 0);
    mem_step_add_stash(&b, 40);
    CHECK(b.take == 50 && b.give == 110);
    mem_step_add_stash(&b, -40);
    CHECK(b.take == 50 && b.give == 150);
    /* the counts agree with the bytes: keep 5, act 100, msg 10, wkeep 30 */
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        if (want[i].k != 0)
            continue;
        struct mem_rule r = mem_rule(want[i].op, want[i].stage == 0, want[i].stage == 2);
        CHECK_NEAR(mem_terms_bytes(r.take, 5, 100, 10, 30), want[i].take, 0);
        CHECK_NEAR(mem_terms_bytes(r.give, 5, 100, 10, 30), want[i].give, 0);
    }
}

/* Chimera's bubbles (Li & Hoefler, SC'21, Table 2): with equal forward and backward costs
 * and N = D, each device idles D - 2 slots: step = 2N + D - 2. 1F1B idles 2(D - 1). */
static void test_chimera_bubbles(void)
{
    int Ds[] = {4, 8, 16};
    for (int i = 0; i < 3; i++) {
        int D = Ds[i];
        CHECK_NEAR(step_time(unit_config(SCHEME_X, D, D, 1, 1)), 2 * D + D - 2, 1e-9);
        CHECK_NEAR(step_time(unit_config(SCHEME_V, D, D, 1, 1)), 2 * D + 2 * (D - 1), 1e-9);
        /* Direct concatenation of units fills the bubbles between them: still D - 2. */
        CHECK_NEAR(step_time(unit_config(SCHEME_X, D, 3 * D, 1, 1)), 6 * D + D - 2, 1e-9);
    }
}

/* Interleaving (Narayanan et al., SC'21 §2.2.2): the bubble shrinks by v:
 * step = N (F + B) + (D - 1)(F + B) / v. */
static void test_interleaved_bubbles(void)
{
    int Ds[] = {2, 4, 8}, vs[] = {2, 3, 4};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            int D = Ds[i], v = vs[j], N = 2 * D;
            struct config c = unit_config(SCHEME_W, D, N, 1, 2);
            c.chunks = v;
            c.model.num_layers = 128;
            CHECK_NEAR(step_time(c), N * 3.0 + (D - 1) * 3.0 / v, 1e-9);
        }
}

/* A swapped send/receive: device 0 waits for the gradient of mb 0 before sending mb 0's
 * activation, so neither device can move. The message names both stalls. */
static void test_deadlock(void)
{
    struct config c = unit_config(SCHEME_V, 2, 2, 1, 2);
    struct plan *p = NULL;
    struct mt_err e = {0};
    CHECK(scheme_build(&c, &p, &e) == MT_OK);
    int sa = plan_find(p, 0, OP_SA, 0, 0), rg = plan_find(p, 0, OP_RG, 0, 0);
    CHECK(sa >= 0 && rg > sa);
    plan_move(p, 0, rg, sa);
    CHECK_EQ_INT(validate_plan(p, &e), MT_EINFEASIBLE);
    CHECK_STR_CONTAINS(e.msg, "deadlock");
    CHECK_STR_CONTAINS(e.msg, "device 0 stalls at instruction");
    CHECK_STR_CONTAINS(e.msg, "device 1 stalls at instruction");
    plan_free(p);

    /* With rendezvous sends posted one at a time the plain 1F1B order would deadlock
     * (device 0 sends FW1 while device 1 sends the gradient of mb 0); Megatron's batches post
     * each send with the receive after it, so it runs, and with free p2p at 1F1B's own step,
     * (N + D - 1)(F + B) = 3 x 3 t. */
    c.blocking_send = true;
    CHECK(scheme_build(&c, &p, &e) == MT_OK);
    CHECK_EQ_INT(validate_plan(p, &e), MT_OK);
    plan_free(p);
    CHECK_NEAR(step_time(c), 3 * 3.0, 1e-12);
    /* The interleaved order splits Megatron's four-call batch in two (a chunk's forward send
     * and the next backward's receive go to different peers in different batches): device 0
     * sends a gradient to the last device while that one waits to send it an activation. */
    struct config w = unit_config(SCHEME_W, 4, 8, 1, 2);
    w.chunks = 2;
    w.blocking_send = true;
    CHECK(scheme_build(&w, &p, &e) == MT_OK);
    CHECK_EQ_INT(validate_plan(p, &e), MT_EINFEASIBLE);
    CHECK_STR_CONTAINS(e.msg, "to be posted");
    plan_free(p);
    /* One device has nothing to send: no deadlock either way. */
    c.num_device = 1;
    CHECK_NEAR(step_time(c), 2 * 3.0, 1e-12);
}

static void test_validation_errors(void)
{
    struct config c = unit_config(SCHEME_V, 2, 2, 1, 2);
    struct plan *p = NULL;
    struct mt_err e = {0};
    CHECK(scheme_build(&c, &p, &e) == MT_OK);
    int bw = plan_find(p, 1, OP_BW, 1, 1);
    plan_remove(p, 1, bw);
    CHECK_EQ_INT(validate_plan(p, &e), MT_EINFEASIBLE);
    CHECK_STR_CONTAINS(e.msg, "micro-batch 1 stage 1 has no backward");
    plan_free(p);

    CHECK(scheme_build(&c, &p, &e) == MT_OK);
    struct instr dup = *plan_at(p, 0, 0);
    plan_append(p, 0, dup);
    CHECK_EQ_INT(validate_plan(p, &e), MT_EINFEASIBLE);
    CHECK_STR_CONTAINS(e.msg, "duplicate");
    plan_free(p);

    /* An odd pipeline for Chimera and more stages than layers are config errors. */
    struct config x = unit_config(SCHEME_X, 5, 4, 1, 2);
    CHECK_EQ_INT(scheme_build(&x, &p, &e), MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "even");
    struct config deep = unit_config(SCHEME_V, 12, 4, 1, 2);
    deep.model.num_layers = 8;
    CHECK_EQ_INT(scheme_build(&deep, &p, &e), MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "model.num_layers: 12 stages but only 8 layers");
    CHECK(p == NULL);
}

/* Properties over random configs: the plan validates, every dependency ends before its
 * dependant starts, the device order holds, and each instruction starts exactly at
 * max(device free, latest dependency end). */
static void test_random_properties(void)
{
    srand(12345);
    for (int trial = 0; trial < 300; trial++) {
        enum scheme_id s = (enum scheme_id)(rand() % 4);
        int D = 1 + rand() % 8, N = 1 + rand() % 12;
        struct config c = unit_config(s, D, N, 0.5 + rand() % 4, 0.5 + rand() % 6);
        c.unit.enabled = rand() % 2;
        c.cluster.dp = 1 + rand() % 2;
        c.num_device = D * c.cluster.dp;
        c.blocking_send = false;
        if (s == SCHEME_X) {
            D += D % 2;
            N += N % 2;
            c.num_device = D * c.cluster.dp;
        }
        if (s == SCHEME_W) {
            D = D < 2 ? 2 : D;
            c.num_device = D * c.cluster.dp;
            c.chunks = 2 + rand() % 3;
            N = D * (1 + rand() % 3);
        }
        c.num_microbatches = N;
        struct plan *p = NULL;
        struct sim_result r;
        struct mt_err e = {0};
        int rc = scheme_build(&c, &p, &e);
        if (rc == MT_OK)
            rc = validate_plan(p, &e);
        if (rc == MT_OK)
            rc = sim_run(p, &r, &e);
        CHECK_EQ_INT(rc, MT_OK);
        if (rc != MT_OK) {
            fprintf(stderr, "  trial %d %s D=%d N=%d: %s\n", trial, config_scheme_name(s), D, N,
                    e.msg);
            plan_free(p);
            continue;
        }
        struct vpipe_index *x = NULL;
        CHECK(vpipe_index_build(p, &x, &e) == MT_OK);
        struct cost_model cost;
        CHECK(scheme_costs(&c, &cost, &e) == MT_OK);
        int bad = 0;
        for (int d = 0; d < r.devices; d++) {
            double free_at = 0;
            for (int i = 0; i < plan_len(p, d); i++) {
                int id = plan_id(p, d, i), deps[VPIPE_MAX_DEPS];
                const struct instr *in = plan_at(p, d, i);
                int n = vpipe_deps(p, x, id, deps, NULL);
                double ready = free_at;
                for (int k = 0; k < n; k++) {
                    bad += r.end[deps[k]] > r.start[id] + 1e-9;
                    ready = r.end[deps[k]] > ready ? r.end[deps[k]] : ready;
                }
                if (in->op == OP_AR) { /* a collective starts when its last replica arrives */
                    bad += r.start[id] < ready - 1e-9;
                } else {
                    bad += r.start[id] < free_at - 1e-9;
                    bad += fabs(r.start[id] - ready) > 1e-9;
                }
                bad += fabs(r.end[id] - r.start[id] - sim_instr_latency(&cost, in)) > 1e-9;
                free_at = (in->op == OP_SA || in->op == OP_SG) ? r.start[id] : r.end[id];
            }
        }
        CHECK_EQ_INT(bad, 0);
        cost_model_fini(&cost);
        vpipe_index_free(x);
        sim_result_fini(&r);
        plan_free(p);
    }
}

/* Algorithm 1 on each scheme. */
static void test_vpipe(void)
{
    struct plan_geom v = {SCHEME_V, 4, 1, 4, 4}, x = {SCHEME_X, 4, 2, 4, 4},
                     w = {SCHEME_W, 4, 2, 8, 4};
    int d, p;
    CHECK(vpipe_find_next(&v, 1, 0, 0, &d, &p) && d == 2 && p == 0);
    CHECK(!vpipe_find_prev(&v, 0, 0, 0, &d, &p));
    /* Chimera: micro-batches 0,1 go down (device 0 -> 3), 2,3 go up (device 3 -> 0). */
    CHECK_EQ_INT(vpipe_mb_part(&x, 1), 0);
    CHECK_EQ_INT(vpipe_mb_part(&x, 2), 1);
    CHECK(vpipe_find_next(&x, 1, 0, 0, &d, &p) && d == 2 && p == 0);
    CHECK(vpipe_find_next(&x, 1, 2, 1, &d, &p) && d == 0 && p == 1);
    CHECK(!vpipe_find_next(&x, 0, 3, 1, &d, &p));
    /* Interleave: device 3 part 0 -> device 0 part 1 (lines 9-10). */
    CHECK(vpipe_find_next(&w, 3, 0, 0, &d, &p) && d == 0 && p == 1);
    CHECK(vpipe_find_prev(&w, 0, 0, 1, &d, &p) && d == 3 && p == 0);
    CHECK(!vpipe_find_next(&w, 3, 0, 1, &d, &p));
}

int main(void)
{
    test_vpipe();
    test_closed_form_step();
    test_hand_worked_v2();
    test_table1_memory();
    test_message_buffers();
    test_memory_rule();
    test_chimera_bubbles();
    test_interleaved_bubbles();
    test_deadlock();
    test_validation_errors();
    test_random_properties();
    return check_report("test_sim");
}
