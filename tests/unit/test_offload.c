/* tests/unit/test_offload.c: offload (OF/RL, issue 29) against timelines worked by hand under
 * unit costs: copies on their own lanes beside compute, the memory an offload gives back at
 * its end and a reload takes at its start, host memory, a copy shorter than a forward reaching
 * the no-checkpoint step under a cap where checkpointing alone does not, a slow link losing to
 * recompute, validation naming the instruction, plan files, torch CSV refusal, the fifth unit
 * cost, the fast path bit for bit with the general loop, and the search's choice of offload
 * (search_opts.offload: chosen where it is faster, not on a slow link). */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/config.h"
#include "model/cost.h"
#include "sim/core/bound.h"
#include "sim/core/memory.h"
#include "sim/core/simulate.h"
#include "sim/core/vpipe.h"
#include "sim/passes/pass.h"
#include "sim/plan/plan.h"
#include "sim/plan/validate.h"
#include "sim/schemes/scheme.h"
#include "sim/search/search.h"
#include "tests/check.h"
#include "tests/unit_config.h"
#include "util/err.h"

/* The paper's Figure 2 pipeline: 1F1B, 4 devices, 4 micro-batches, F = 1, B = 2, RC = 1
 * (21 t), O the time to move one M_theta over the host link, cap in M_theta (0 none). */
static struct config fig2_config(double o, double cap)
{
    struct config c = test_unit_config(SCHEME_V, 4, 4, 1, 2, 1);
    c.unit.o = o;
    c.memory_per_device = cap;
    c.given |= CONFIG_GIVEN_MEMORY;
    return c;
}

static bool is_compute(enum op op)
{
    return plan_op_is_forward(op) || plan_op_is_backward(op);
}

/* The 1F1B plan of c with every forward offloaded whose backward is not the next compute
 * instruction on its device (device 3's are: nothing to hide there). Each OF goes right after
 * its FW; each RL right after the backward before its own on the device, or, for the first
 * backward, after the last forward (and its OF) before it: reached when the device is done
 * with what came before, so it is back before the backward needs it. */
static struct plan *fig2_offload_plan(const struct config *c)
{
    struct plan *base = NULL;
    struct mt_err e = {0};
    if (scheme_build(c, &base, &e) != MT_OK) {
        fprintf(stderr, "scheme_build: %s\n", e.msg);
        return NULL;
    }
    struct plan *p = plan_clone(base);
    for (int d = 0; d < plan_devices(base); d++) {
        const struct instr *ins = plan_instrs(base, d);
        int len = plan_len(base, d);
        struct instr *out = calloc((size_t)len * 3 + 1, sizeof *out);
        bool off[64] = {false};
        for (int i = 0; i < len; i++) { /* which forwards: the next compute is not their BW */
            if (!plan_op_is_forward(ins[i].op))
                continue;
            int j = i + 1;
            while (j < len && !is_compute(ins[j].op))
                j++;
            off[ins[i].mb] = !(j < len && ins[j].op == OP_BW && ins[j].mb == ins[i].mb);
        }
        int n = 0, pending_rl = -1; /* the backward whose RL goes after the next compute */
        for (int i = 0; i < len; i++) {
            const struct instr *in = &ins[i];
            out[n++] = *in;
            if (in->op == OP_FW && off[in->mb])
                out[n++] = (struct instr){OP_OF, in->mb, in->part, in->stage, -1, 0, 0, 0};
            if (!is_compute(in->op))
                continue;
            /* the next backward on this device: its RL goes here when this is a backward, or
             * when this is the last forward before the first backward */
            int j = i + 1;
            while (j < len && ins[j].op != OP_BW)
                j++;
            if (j == len || !off[ins[j].mb])
                continue;
            bool fw_between = false;
            for (int k = i + 1; k < j; k++)
                fw_between |= plan_op_is_forward(ins[k].op);
            if (in->op == OP_BW || !fw_between) {
                if (pending_rl == ins[j].mb)
                    continue;
                out[n++] = (struct instr){OP_RL, ins[j].mb, ins[j].part, ins[j].stage, -1, 0, 0, 0};
                pending_rl = ins[j].mb;
            }
        }
        plan_set_list(p, d, out, n);
        free(out);
    }
    plan_free(base);
    return p;
}

static int run(const struct plan *p, struct sim_result *r)
{
    struct mt_err e = {0};
    int rc = validate_plan(p, &e);
    if (rc == MT_OK)
        rc = sim_run(p, r, &e);
    if (rc != MT_OK)
        fprintf(stderr, "offload plan: %s\n", e.msg);
    return rc;
}

static double at(const struct plan *p, const double *t, int dev, enum op op, int mb)
{
    int i = plan_find(p, dev, op, mb, plan_at(p, dev, 0)->stage);
    return i < 0 ? -1 : t[plan_id(p, dev, i)];
}

/* Device 0 of the offloading plan, by hand (O = 0.5). The forwards run 0-4 as in Figure 2;
 * each OF starts when its FW ends: OF0 [1, 1.5], OF1 [2, 2.5], OF2 [3, 3.5], OF3 [4, 4.5].
 * RL0 is reached after FW3 (t = 4): [4, 4.5]. BW0 waits for the gradient until 10 as in
 * Figure 2 and runs [10, 12]; RL1, after it, [12, 12.5], before BW1 [13, 15]; RL2 [15, 15.5],
 * BW2 [16, 18]; RL3 [18, 18.5], BW3 [19, 21]: the step stays 21 t. Memory (M_theta): FW1
 * takes its 1 at t = 1 while FW0's is still being copied (until 1.5): 2; likewise FW2 at 2
 * (FW1's until 2.5), FW3 at 3; at 4 RL0 takes FW0's back while OF3 copies FW3's out: 2. Then
 * at most one micro-batch is on the device: the peak is 2 where Figure 2's is 4. Host: OF0..3
 * each take 1 at their start and RL0 gives one back at 4.5, after OF3 took its at 4: 4. */
static void test_hand_worked_timeline(void)
{
    struct config c = fig2_config(0.5, 0);
    struct plan *p = fig2_offload_plan(&c);
    struct sim_result r;
    if (p == NULL || run(p, &r) != MT_OK) {
        CHECK(0);
        plan_free(p);
        return;
    }
    CHECK_NEAR(r.step_time, 21.0, 1e-12);
    double want_of[4][2] = {{1, 1.5}, {2, 2.5}, {3, 3.5}, {4, 4.5}};
    double want_rl[4][2] = {{4, 4.5}, {12, 12.5}, {15, 15.5}, {18, 18.5}};
    double want_bw[4] = {10, 13, 16, 19};
    for (int mb = 0; mb < 4; mb++) {
        CHECK_NEAR(at(p, r.start, 0, OP_OF, mb), want_of[mb][0], 1e-12);
        CHECK_NEAR(at(p, r.end, 0, OP_OF, mb), want_of[mb][1], 1e-12);
        CHECK_NEAR(at(p, r.start, 0, OP_RL, mb), want_rl[mb][0], 1e-12);
        CHECK_NEAR(at(p, r.end, 0, OP_RL, mb), want_rl[mb][1], 1e-12);
        CHECK_NEAR(at(p, r.start, 0, OP_BW, mb), want_bw[mb], 1e-12);
    }
    CHECK_NEAR(r.dev[0].peak_dynamic, 2.0, 1e-12);
    CHECK_NEAR(r.dev[0].host_peak, 4.0, 1e-12);
    CHECK_NEAR(r.dev[3].host_peak, 0.0, 0); /* device 3 offloads nothing */
    for (int d = 0; d < 4; d++)
        CHECK(r.dev[d].peak_dynamic <= 2.0 + 1e-12);
    /* copies are not compute: device 0 is busy 4 F + 4 B = 12 t, as in Figure 2 */
    CHECK_NEAR(r.dev[0].busy, 12.0, 1e-12);
    /* the memory curve runs forward in time, and its highest point is the peak */
    double top = 0;
    for (int k = 1; k < r.dev[0].curve_len; k++) {
        CHECK(r.dev[0].curve_t[k] >= r.dev[0].curve_t[k - 1]);
        if (r.dev[0].curve_mem[k] > top)
            top = r.dev[0].curve_mem[k];
    }
    CHECK_NEAR(top, 2.0, 1e-12);
    /* the walks in program order count each copy at its place (sim/core/memory.h): RL0 comes
     * right after OF3, so they see FW3 gone before FW0 is back, 1 less than the timed walk */
    struct cost_model cost;
    struct mt_err e = {0};
    if (scheme_costs(&c, &cost, &e) == MT_OK) {
        CHECK_NEAR(mem_device_peak(&cost, plan_instrs(p, 0), plan_len(p, 0)), 1.0, 1e-12);
        cost_model_fini(&cost);
    }
    sim_result_fini(&r);
    plan_free(p);
}

/* The best Mario's passes and the schedule search reach under c's cap: with checkpointing
 * alone, or also offloading (search_opts.offload); *offloads gets the OF count of its plan. */
static double searched_step(const struct config *c, bool offload, int *offloads)
{
    struct plan *base = NULL;
    struct mt_err e = {0};
    struct pass_pipeline pl;
    double t = -1;
    if (scheme_build(c, &base, &e) != MT_OK || pass_pipeline_run(base, &pl, &e) != MT_OK) {
        fprintf(stderr, "passes: %s\n", e.msg);
        plan_free(base);
        return t;
    }
    struct search_opts so;
    search_opts_default(&so, c);
    so.offload = offload;
    if (pass_pipeline_search(&pl, &so, &e) == MT_OK) {
        const struct pass_step *f = pass_pipeline_final(&pl);
        if (f->sim.oom_device < 0)
            t = f->sim.step_time;
        *offloads = 0;
        for (int d = 0; d < plan_devices(f->plan); d++)
            for (int i = 0; i < plan_len(f->plan, d); i++)
                *offloads += plan_at(f->plan, d, i)->op == OP_OF;
    } else {
        fprintf(stderr, "search: %s\n", e.msg);
    }
    pass_pipeline_fini(&pl);
    plan_free(base);
    return t;
}

static double checkpoint_only_step(const struct config *c)
{
    int n;
    return searched_step(c, false, &n);
}

/* A copy shorter than a forward (O = 0.5), 1F1B on 4 devices with 8 micro-batches: under a
 * cap of 2 M_theta the offloading plan keeps the no-checkpoint step, (N + D - 1)(F + B) =
 * 33 t: every copy hides behind compute as on device 0 above, and a device holds at most the
 * micro-batch of its running forward and the one of its next backward. Checkpointing alone
 * holds 1F1B's D - s micro-batches on stage s only as checkpoints, and each recompute is 1 t
 * of compute in a steady state that has none to spare (device 0 runs F B F B ... back to back
 * from 10 t to 24 t): Mario's passes and the schedule search reach 34 t at best. (At 4 x 4,
 * Figure 2's bubbles leave room for the recomputes: both reach 21 t there.) */
static void test_offload_beats_checkpointing_under_cap(void)
{
    struct config c = fig2_config(0.5, 2.0);
    c.num_microbatches = 8;
    struct plan *p = fig2_offload_plan(&c);
    struct sim_result r;
    if (p == NULL || run(p, &r) != MT_OK) {
        CHECK(0);
        plan_free(p);
        return;
    }
    CHECK_NEAR(r.step_time, 33.0, 1e-12);
    CHECK_EQ_INT(r.oom_device, -1);
    /* the bound of a plan that offloads: copies are not work and the cap forces no recompute,
     * so it is the fill, drain and work of device 3, (N + D - 1)(F + B) = 33 t */
    struct bound_result b;
    struct mt_err e = {0};
    if (bound_plan(p, &b, &e) == MT_OK) {
        CHECK_NEAR(bound_value(&b, true), 33.0, 1e-9);
        CHECK_NEAR(b.forced_rc, 0, 0);
    } else {
        CHECK(0);
    }
    for (int d = 0; d < 4; d++)
        CHECK(r.dev[d].peak_dynamic <= 2.0 + 1e-12);
    double ckpt = checkpoint_only_step(&c);
    CHECK(ckpt > 33.0 + 1e-9);
    printf("4 x 8 at 2 M_theta: offload 33 t, checkpointing alone %.4g t\n", ckpt);
    /* the search, allowed to offload, finds the no-checkpoint step too */
    int offloads = 0;
    double both = searched_step(&c, true, &offloads);
    CHECK_NEAR(both, 33.0, 1e-12);
    CHECK(offloads > 0);
    sim_result_fini(&r);
    plan_free(p);
}

/* A slow link (O = 4: a copy four forwards long): the same plan waits for its copies. Device
 * 0's lane runs one copy at a time: OF0 [1, 5], OF1 [5, 9], OF2 [9, 13], OF3 [13, 17]. Device
 * 2: OF0 [3, 7], and RL0, reached at 4, waits for it: [7, 11]; BW0, whose gradient arrives at
 * 6 (Figure 2's [6, 8]), starts at 11. Recompute (1 t each) costs less: offload loses. */
static void test_slow_link_loses_to_recompute(void)
{
    struct config c = fig2_config(4.0, 2.0);
    struct plan *p = fig2_offload_plan(&c);
    struct sim_result r;
    if (p == NULL || run(p, &r) != MT_OK) {
        CHECK(0);
        plan_free(p);
        return;
    }
    CHECK_NEAR(at(p, r.start, 0, OP_OF, 3), 13.0, 1e-12);
    CHECK_NEAR(at(p, r.end, 0, OP_OF, 3), 17.0, 1e-12);
    CHECK_NEAR(at(p, r.start, 2, OP_RL, 0), 7.0, 1e-12);
    CHECK_NEAR(at(p, r.end, 2, OP_RL, 0), 11.0, 1e-12);
    CHECK_NEAR(at(p, r.start, 2, OP_BW, 0), 11.0, 1e-12);
    double ckpt = checkpoint_only_step(&c);
    CHECK(ckpt > 0 && r.step_time > ckpt + 1e-9);
    printf("cap 2 M_theta, O = 4: offload %.4g t, checkpointing alone %.4g t\n", r.step_time, ckpt);
    /* ... and the search, allowed to offload, does not: the same step, no copy */
    int offloads = -1;
    CHECK_NEAR(searched_step(&c, true, &offloads), ckpt, 1e-12);
    CHECK_EQ_INT(offloads, 0);
    sim_result_fini(&r);
    plan_free(p);
}

/* The fast path and the general loop give the same figures to the bit, under unit costs and
 * with the analytic ones (GPT3-1.6B on A100s: message buffers, reaped after the instruction
 * that follows a send, copies among them); the memory curve runs forward in time. */
static void test_fast_path_bit_for_bit(void)
{
    double os[] = {0.25, 0.5, 1, 4, 0};
    for (size_t k = 0; k < sizeof os / sizeof os[0]; k++) {
        struct config c = fig2_config(os[k], 0);
        if (os[k] == 0) { /* analytic costs */
            config_default(&c);
            c.scheme = SCHEME_V;
            c.num_device = 4;
            c.num_microbatches = 8;
        }
        struct plan *p = fig2_offload_plan(&c);
        struct cost_model cost;
        struct mt_err e = {0};
        struct sim_result a, b;
        if (p == NULL || scheme_costs(&c, &cost, &e) != MT_OK) {
            CHECK(0);
            plan_free(p);
            continue;
        }
        int ra = sim_run_durations(p, &cost, NULL, &a, &e);
        int rb = sim_run_general(p, &cost, NULL, &b, &e);
        CHECK(ra == MT_OK && rb == MT_OK);
        if (ra == MT_OK && rb == MT_OK) {
            CHECK(a.step_time == b.step_time);
            CHECK(memcmp(a.start, b.start, (size_t)a.total * sizeof(double)) == 0);
            CHECK(memcmp(a.end, b.end, (size_t)a.total * sizeof(double)) == 0);
            CHECK(memcmp(a.mem_after, b.mem_after, (size_t)a.total * sizeof(double)) == 0);
            for (int d = 0; d < a.devices; d++) {
                CHECK(a.dev[d].peak_mem == b.dev[d].peak_mem);
                CHECK(a.dev[d].host_peak == b.dev[d].host_peak);
                CHECK(a.dev[d].busy == b.dev[d].busy);
                CHECK_EQ_INT(a.dev[d].curve_len, b.dev[d].curve_len);
                if (a.dev[d].curve_len == b.dev[d].curve_len) {
                    size_t n = (size_t)a.dev[d].curve_len * sizeof(double);
                    CHECK(memcmp(a.dev[d].curve_t, b.dev[d].curve_t, n) == 0);
                    CHECK(memcmp(a.dev[d].curve_mem, b.dev[d].curve_mem, n) == 0);
                }
                for (int i = 1; i < a.dev[d].curve_len; i++)
                    CHECK(a.dev[d].curve_t[i] >= a.dev[d].curve_t[i - 1]);
                /* everything is given back by the end of the step */
                if (a.dev[d].curve_len > 0)
                    CHECK_NEAR(a.dev[d].curve_mem[a.dev[d].curve_len - 1], a.dev[d].static_mem,
                               1e-6 * a.dev[d].peak_mem);
            }
        }
        sim_result_fini(&a);
        sim_result_fini(&b);
        cost_model_fini(&cost);
        plan_free(p);
    }
}

/* A host cap under the most device 0 offloads at once (4 M_theta) is reported. */
static void test_host_cap(void)
{
    struct config c = fig2_config(0.5, 0);
    c.cluster.host_mem_per_node = 3.5; /* under unit costs: M_theta per device */
    struct plan *p = fig2_offload_plan(&c);
    struct sim_result r;
    if (p == NULL || run(p, &r) != MT_OK) {
        CHECK(0);
        plan_free(p);
        return;
    }
    CHECK_NEAR(r.host_cap, 3.5, 0);
    CHECK_EQ_INT(r.host_oom_device, 0);
    sim_result_fini(&r);
    plan_free(p);
    /* with real costs the node's cap is shared by its GPUs */
    struct config k;
    config_default(&k);
    k.cluster.host_mem_per_node = 800e9;
    CHECK_NEAR(config_host_cap(&k), 100e9, 0);
}

/* Validation names the instruction at fault. */
static void expect_invalid(struct plan *p, const char *want)
{
    struct mt_err e = {0};
    int rc = validate_plan(p, &e);
    CHECK(rc != MT_OK);
    if (strstr(e.msg, want) == NULL) {
        fprintf(stderr, "expected '%s' in: %s\n", want, e.msg);
        CHECK(0);
    }
    plan_free(p);
}

static void test_validation(void)
{
    struct config c = fig2_config(0.5, 0);
    struct plan *good = fig2_offload_plan(&c);
    if (good == NULL) {
        CHECK(0);
        return;
    }
    /* device 0: RL0 moved before OF0 */
    struct plan *p = plan_clone(good);
    int of = plan_find(p, 0, OP_OF, 0, 0), rl = plan_find(p, 0, OP_RL, 0, 0);
    plan_move(p, 0, rl, of);
    expect_invalid(p, "device 0, instruction 1 (RL0): reload before its offload (OF0 at 2)");
    /* device 0: RL1 moved after BW1 */
    p = plan_clone(good);
    rl = plan_find(p, 0, OP_RL, 1, 0);
    int bw = plan_find(p, 0, OP_BW, 1, 0);
    plan_move(p, 0, rl, bw + 1);
    expect_invalid(p, "(BW1): backward before the reload of its activations (RL1 at");
    /* an OF of a checkpointed forward */
    p = plan_clone(good);
    int fw = plan_find(p, 0, OP_FW, 2, 0);
    struct instr in = *plan_at(p, 0, fw);
    plan_remove(p, 0, fw);
    in.op = OP_CFW;
    plan_insert(p, 0, fw, in);
    bw = plan_find(p, 0, OP_BW, 2, 0);
    in.op = OP_RC;
    plan_insert(p, 0, bw, in);
    expect_invalid(p, "(OF2): offload of a checkpointed forward");
    /* an OF without its RL */
    p = plan_clone(good);
    plan_remove(p, 0, plan_find(p, 0, OP_RL, 3, 0));
    expect_invalid(p, "(OF3): offload without a reload (RL) before its backward");
    /* an RL without an OF */
    p = plan_clone(good);
    plan_remove(p, 0, plan_find(p, 0, OP_OF, 3, 0));
    expect_invalid(p, "(RL3): reload without an offload (OF) of its forward");
    plan_free(good);
}

/* Plan files keep OF/RL; torch's CSV has no spelling for them and says so. */
static void test_plan_files(void)
{
    struct config c = fig2_config(0.5, 0);
    struct plan *p = fig2_offload_plan(&c);
    if (p == NULL) {
        CHECK(0);
        return;
    }
    char *text = plan_to_json(p);
    struct plan *q = NULL;
    struct mt_err e = {0};
    CHECK(text != NULL && strstr(text, "\"op\":\"OF\"") != NULL);
    CHECK(plan_load_string(text, strlen(text), "offload.json", &q, &e) == MT_OK);
    if (q != NULL) {
        CHECK_EQ_INT(plan_total(q), plan_total(p));
        for (int d = 0; d < plan_devices(p); d++)
            CHECK(memcmp(plan_instrs(p, d), plan_instrs(q, d),
                         (size_t)plan_len(p, d) * sizeof(struct instr)) == 0);
    }
    free(text);
    plan_free(q);
    e = (struct mt_err){0};
    char *csv = plan_to_torch_csv(p, &e);
    CHECK(csv == NULL);
    CHECK(strstr(e.msg, "device 0, instruction 1 (OF0, stage 0)") != NULL);
    CHECK(strstr(e.msg, "no spelling for offload (OF/RL)") != NULL);
    free(csv);
    plan_free(p);
}

/* --unit-costs: four numbers as before (O = 1), a fifth is O; O must be > 0. */
static void test_unit_costs_fifth(void)
{
    struct unit_costs u = {0};
    struct mt_err e = {0};
    u.o = 1;
    CHECK(config_unit_costs_parse("1,2,1,1", &u, &e) == MT_OK);
    CHECK_NEAR(u.o, 1, 0);
    CHECK(config_unit_costs_parse("1,2,1,1,0.5", &u, &e) == MT_OK);
    CHECK_NEAR(u.o, 0.5, 0);
    CHECK_NEAR(u.w, 1, 0);
    CHECK(config_unit_costs_parse("1,2,1,1,0", &u, &e) != MT_OK);
    CHECK(strstr(e.msg, "O must be > 0") != NULL);
    CHECK(config_unit_costs_parse("1,2,1,1,1,1", &u, &e) != MT_OK);
    /* a chunk of a V schedule (2 stages a device) keeps 1/2 M_theta: its copy lasts O / 2 */
    struct config c = test_unit_config(SCHEME_ZBV, 4, 8, 1, 2, 1);
    c.unit.o = 0.5;
    struct cost_model cost;
    if (scheme_costs(&c, &cost, &e) == MT_OK) {
        CHECK_NEAR(cost.stage[0].copy, 0.25, 1e-15);
        cost_model_fini(&cost);
    } else {
        CHECK(0);
    }
    /* analytic: act bytes over the host link; the H100 preset's link is twice the A100's */
    struct config k;
    config_default(&k);
    CHECK_NEAR(k.cluster.host_gbps, 25, 0);
    if (scheme_costs(&k, &cost, &e) == MT_OK) {
        CHECK_NEAR(cost.stage[1].copy, cost.stage[1].act / 25e3, 1e-9);
        cost_model_fini(&cost);
    }
}

int main(void)
{
    test_hand_worked_timeline();
    test_offload_beats_checkpointing_under_cap();
    test_slow_link_loses_to_recompute();
    test_fast_path_bit_for_bit();
    test_host_cap();
    test_validation();
    test_plan_files();
    test_unit_costs_fifth();
    return check_report("test_offload");
}
