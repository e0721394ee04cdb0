/* tests/unit/test_replay.c: the replay of a measured run (traces/replay.h, issue 19) on traces
 * written by hand, with answers worked out by hand:
 *   - a 1F1B run of 2 devices and 2 micro-batches (F = 100 us, B = 200 us, OS = 30 us, a send
 *     posts in 2 us, messages take 15 us, one receive ends 40 us late): L = 15 us (the median
 *     of 15, 15, 55), c = 8 us (the receive whose message was there), the replay with one
 *     latency ends 40 us early (970 against 1010 us: -3.96 %), the replay with each message as
 *     it came is the run itself;
 *   - the same run measured without its sends and receives (a profiler trace of compute):
 *     L from the gaps between the stages' compute (15, 15, 55: 15 us), 960 us;
 *   - the same run with one rank's clock off (it left the start barrier late) is put back on
 *     the other's by its messages, to the microsecond, and replays alike;
 *   - a simulation's own trace replays to its step time (X, W, ZB-H1 with unit costs; an X
 *     with real costs, its allreduces included);
 *   - a trace that measured compute only (a profiler trace) takes the simulation's latencies
 *     for the sends: durations stretched by 2 and no communication give twice the time of
 *     a pipeline without communication. */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/config.h"
#include "model/cost.h"
#include "model/presets.h"
#include "sim/plan/plan.h"
#include "sim/schemes/scheme.h"
#include "sim/core/simulate.h"
#include "tests/check.h"
#include "traces/align.h"
#include "traces/chrome.h"
#include "traces/replay.h"
#include "traces/trace.h"
#include "util/err.h"
#include "util/xalloc.h"

static struct plan *make_plan(enum scheme_id s, int D, int N, bool unit)
{
    struct config c;
    config_default(&c);
    struct mt_err e = {0};
    if (presets_model("tiny", &c.model, &e) != MT_OK)
        fprintf(stderr, "tiny: %s\n", e.msg);
    c.scheme = s;
    c.num_device = D;
    c.num_microbatches = N;
    c.chunks = 2;
    c.unit.enabled = unit;
    c.unit.f = 1;
    c.unit.b = 2;
    c.unit.rc = 1;
    struct plan *p = NULL;
    if (scheme_build(&c, &p, &e) != MT_OK)
        fprintf(stderr, "build: %s\n", e.msg);
    return p;
}

static double m_clock_shift; /* the last trace's trace_info clock_shift_us */

/* Replays trace text t against plan p; *out must be finied. */
static int replay_text(const struct plan *p, const char *t, bool simulated,
                       struct replay_result *out, struct align_result *m)
{
    struct mt_err e = {0};
    struct trace *tr = NULL;
    struct trace_opts o = {NULL, 0};
    int rc = trace_load_mem(t, strlen(t), "hand.json", &o, &tr, &e);
    struct align_opts ao = {.step = -1, .per_step = true};
    m_clock_shift = rc == MT_OK ? trace_info(tr)->clock_shift_us : NAN;
    if (rc == MT_OK)
        rc = align_run(p, tr, &ao, m, &e);
    struct sim_result sim = {0};
    struct cost_model cost = {0};
    if (rc == MT_OK)
        rc = scheme_costs(plan_config(p), &cost, &e);
    if (rc == MT_OK)
        rc = sim_run_costs(p, &cost, &sim, &e);
    if (rc == MT_OK)
        rc = replay_run(p, &cost, &sim, m, simulated, out, &e);
    if (rc != MT_OK)
        fprintf(stderr, "replay: %s\n", e.msg);
    sim_result_fini(&sim);
    cost_model_fini(&cost);
    trace_free(tr);
    return rc;
}

/* ---- the hand-made 1F1B run --------------------------------------------------------------- */

struct hand_ev {
    int dev;
    const char *op;
    int mb;
    double t0, t1;
};

static void test_hand_1f1b(double skew, bool compute_only)
{
    struct plan *p = make_plan(SCHEME_V, 2, 2, false);
    CHECK(p != NULL);
    if (p == NULL)
        return;
    /* the order the hand timeline follows (sim/schemes/scheme_1f1b.c) */
    static const char *const order[2][9] = {
        {"FW0", "SA0", "FW1", "SA1", "RG0", "BW0", "RG1", "BW1", "OS"},
        {"RA0", "FW0", "BW0", "SG0", "RA1", "FW1", "BW1", "SG1", "OS"}};
    for (int d = 0; d < 2; d++) {
        CHECK_EQ_INT(plan_len(p, d), 9);
        for (int i = 0; i < plan_len(p, d) && i < 9; i++) {
            const struct instr *in = plan_at(p, d, i);
            char lab[16];
            snprintf(lab, sizeof lab, "%s%s", plan_op_name(in->op),
                     in->mb >= 0 ? (char[]){(char)('0' + in->mb), 0} : "");
            CHECK(strcmp(lab, order[d][i]) == 0);
        }
    }
    /* F 100, B 200, OS 30, posting a send 2; messages 15 after their send's device was
     * released, but RG1's ends 40 late (a nap); RA1's message was there (its own time 8) */
    static const struct hand_ev ev[] = {
        {0, "FW", 0, 0, 100},   {0, "SA", 0, 100, 102}, {0, "FW", 1, 102, 202},
        {0, "SA", 1, 202, 204}, {0, "RG", 0, 204, 430}, {0, "BW", 0, 430, 630},
        {0, "RG", 1, 630, 780}, {0, "BW", 1, 780, 980}, {0, "OS", -1, 980, 1010},
        {1, "RA", 0, 0, 115},   {1, "FW", 0, 115, 215}, {1, "BW", 0, 215, 415},
        {1, "SG", 0, 415, 417}, {1, "RA", 1, 417, 425}, {1, "FW", 1, 425, 525},
        {1, "BW", 1, 525, 725}, {1, "SG", 1, 725, 727}, {1, "OS", -1, 727, 757},
    };
    char text[8192];
    size_t n = (size_t)snprintf(text, sizeof text,
                                "{\"otherData\": {\"source\": \"measured\"}, \"traceEvents\": [");
    for (size_t i = 0; i < sizeof ev / sizeof ev[0]; i++) {
        if (compute_only && (ev[i].op[0] == 'S' || ev[i].op[0] == 'R'))
            continue;
        n += (size_t)snprintf(
            text + n, sizeof text - n,
            "%s{\"ph\": \"X\", \"name\": \"x\", \"pid\": %d, \"ts\": %g, \"dur\": "
            "%g, \"args\": {\"op\": \"%s\", \"mb\": %d, \"part\": 0, \"stage\": "
            "%d, \"step\": 0}}",
            i ? ", " : "", ev[i].dev, ev[i].t0 + 5000 + (ev[i].dev == 1 ? skew : 0),
            ev[i].t1 - ev[i].t0, ev[i].op, ev[i].mb, ev[i].dev);
    }
    snprintf(text + n, sizeof text - n, "]}");
    struct replay_result r;
    struct align_result m;
    if (compute_only) { /* L from the stages' gaps: 15 (F0), 15 (B0), 55 (B1; F1's device was
                         * busy); the sends take L, the receives nothing, each instruction its
                         * own duration: 960 us (the executor's posts and RG1's 40 late, 50 us,
                         * are not in any duration) */
        CHECK_EQ_INT(replay_text(p, text, false, &r, &m), MT_OK);
        CHECK_NEAR(r.lat_us, 15, 1e-9);
        CHECK_EQ_INT(r.lat_samples, 3);
        CHECK_NEAR(r.recv_us, 0, 0);
        CHECK_NEAR(m.step_time_us, 1010, 1e-9);
        CHECK_NEAR(r.step_us, 960, 1e-9);
        CHECK_NEAR(r.one_lat_us, 960, 1e-9);
        replay_fini(&r);
        align_result_fini(&m);
        plan_free(p);
        return;
    }
    CHECK_EQ_INT(replay_text(p, text, false, &r, &m), MT_OK);
    CHECK_NEAR(m.step_time_us, 1010, 1e-9);
    CHECK_NEAR(r.lat_us, 15, 1e-9);
    CHECK_NEAR(m_clock_shift, fabs(skew), 1e-9);
    CHECK_EQ_INT(r.lat_samples, 3);
    CHECK_NEAR(r.recv_us, 8, 1e-9);
    CHECK_NEAR(r.one_lat_us, 970, 1e-9);
    CHECK_NEAR(r.one_lat_err_pct, -4000.0 / 1010, 1e-9);
    CHECK_NEAR(r.step_us, 1010, 1e-9);
    CHECK_NEAR(r.err_pct, 0, 1e-9);
    /* the replayed timeline (the explorer's replayed row): each compute instruction and OS
     * ends where it ended in the run, and starts at its device's release (the posting of a
     * send before it is its own time: FW1 of device 0 from 100, not 102) */
    CHECK_EQ_INT(r.total, plan_total(p));
    for (size_t i = 0; r.end_us != NULL && i < sizeof ev / sizeof ev[0]; i++) {
        if (ev[i].op[0] == 'S' || ev[i].op[0] == 'R')
            continue;
        enum op op = (enum op)plan_op_parse(ev[i].op);
        int j = plan_find(p, ev[i].dev, op, ev[i].mb, op == OP_OS ? -1 : ev[i].dev);
        if (op == OP_OS)
            j = plan_len(p, ev[i].dev) - 1;
        CHECK(j >= 0);
        if (j < 0)
            continue;
        int id = plan_id(p, ev[i].dev, j);
        CHECK_NEAR(r.end_us[id], ev[i].t1, 1e-9);
    }
    if (r.start_us != NULL) {
        CHECK_NEAR(r.start_us[plan_id(p, 0, 2)], 100, 1e-9); /* FW1 of device 0 */
        CHECK_NEAR(r.start_us[plan_id(p, 1, 1)], 115, 1e-9); /* FW0 of device 1 */
        CHECK_NEAR(r.start_us[plan_id(p, 1, 8)], 725, 1e-9); /* OS of device 1 */
    }
    CHECK_EQ_INT(r.devices, 2);
    if (r.devices == 2) {
        CHECK_NEAR(r.dev[0].finish_us, 1010, 1e-9);
        CHECK_NEAR(r.dev[0].meas_finish_us, 1010, 1e-9);
        /* (a device's replayed finish is its last message's arrival, RG1's end less c) */
        CHECK_NEAR(r.dev[1].finish_us, 780 - 8, 1e-9);
        CHECK_NEAR(r.dev[1].meas_finish_us, 757, 1e-9);
        /* device 1's busy time: 2 F + 2 B, and its OS from the end of BW1 (the post of SG1 in
         * it) */
        CHECK_NEAR(r.dev[1].busy_us, 100 + 100 + 200 + 200 + 32, 1e-9);
    }
    replay_fini(&r);
    align_result_fini(&m);

    /* the same run with the late receive on time, BW1 where it was: the 40 us after RG1 are
     * the device's own (as the executor's time between instructions is), so both replays are
     * the run */
    char *late = strstr(text, "\"ts\": 5630, \"dur\": 150");
    CHECK(late != NULL);
    if (late != NULL) {
        memcpy(late, "\"ts\": 5630, \"dur\": 110", 22);
        CHECK_EQ_INT(replay_text(p, text, false, &r, &m), MT_OK);
        CHECK_NEAR(m.step_time_us, 1010, 1e-9);
        CHECK_NEAR(r.step_us, 1010, 1e-9);
        CHECK_NEAR(r.one_lat_us, 1010, 1e-9);
        replay_fini(&r);
        align_result_fini(&m);
    }
    plan_free(p);
}

/* ---- a simulation replays to itself -------------------------------------------------------- */

static void test_self(enum scheme_id s, int D, int N, bool unit)
{
    struct plan *p = make_plan(s, D, N, unit);
    CHECK(p != NULL);
    if (p == NULL)
        return;
    struct sim_result sim;
    struct mt_err e = {0};
    CHECK_EQ_INT(sim_run(p, &sim, &e), MT_OK);
    char *text = chrome_from_sim(p, &sim);
    struct replay_result r;
    struct align_result m;
    CHECK_EQ_INT(replay_text(p, text, true, &r, &m), MT_OK);
    double scale = unit ? 1000 : 1;
    CHECK_NEAR(r.step_us, sim.step_time * scale, 1e-6 * sim.step_time * scale);
    CHECK_NEAR(r.one_lat_us, r.step_us, 1e-9 * r.step_us);
    /* the replayed timeline is the simulation's, instruction by instruction */
    int off = 0;
    for (int id = 0; r.start_us != NULL && id < plan_total(p); id++)
        off += fabs(r.start_us[id] - sim.start[id] * scale) > 1e-6 * sim.step_time * scale ||
               fabs(r.end_us[id] - sim.end[id] * scale) > 1e-6 * sim.step_time * scale;
    CHECK(r.start_us != NULL);
    CHECK_EQ_INT(off, 0);
    CHECK(isnan(r.lat_us));
    replay_fini(&r);
    align_result_fini(&m);
    free(text);
    sim_result_fini(&sim);
    plan_free(p);
}

/* ---- compute only: the sends from the model ------------------------------------------------ */

static void test_compute_only(void)
{
    /* GPipe, 2 devices, 2 micro-batches, unit costs: F = 0.5 t, B = 1 t per device (the
     * stage's share), p2p free. Measured compute only, each twice the model's: a replay of
     * 2x the simulated step (communication free, OS 0 in unit mode) */
    struct plan *p = make_plan(SCHEME_GPIPE, 2, 2, true);
    CHECK(p != NULL);
    if (p == NULL)
        return;
    struct sim_result sim;
    struct mt_err e = {0};
    CHECK_EQ_INT(sim_run(p, &sim, &e), MT_OK);
    char text[8192];
    size_t n = (size_t)snprintf(text, sizeof text,
                                "{\"otherData\": {\"source\": \"measured\"}, "
                                "\"traceEvents\": [");
    int k = 0;
    for (int d = 0; d < plan_devices(p); d++)
        for (int i = 0; i < plan_len(p, d); i++) {
            const struct instr *in = plan_at(p, d, i);
            if (!plan_op_is_compute(in->op))
                continue;
            int id = plan_id(p, d, i);
            n += (size_t)snprintf(text + n, sizeof text - n,
                                  "%s{\"ph\": \"X\", \"name\": \"x\", \"pid\": %d, \"ts\": %g, "
                                  "\"dur\": %g, \"args\": {\"op\": \"%s\", \"mb\": %d, "
                                  "\"part\": 0, \"stage\": %d}}",
                                  k++ ? ", " : "", d, 2000 * sim.start[id],
                                  2000 * (sim.end[id] - sim.start[id]), plan_op_name(in->op),
                                  in->mb, in->stage);
        }
    snprintf(text + n, sizeof text - n, "]}");
    struct replay_result r;
    struct align_result m;
    CHECK_EQ_INT(replay_text(p, text, false, &r, &m), MT_OK);
    /* GPipe 2x2 with F = 0.5, B = 1: 4 x 0.5 + ... = the simulation's step, here 2x in us */
    CHECK_NEAR(r.step_us, 2000 * sim.step_time, 1e-6);
    /* no message measured: L from the gaps between the stages' compute, none here */
    CHECK_NEAR(r.lat_us, 0, 1e-9);
    CHECK(r.lat_samples > 0);
    replay_fini(&r);
    align_result_fini(&m);
    sim_result_fini(&sim);
    plan_free(p);
}

int main(void)
{
    test_hand_1f1b(0, false);
    test_hand_1f1b(0, true);
    /* device 1's clock 300 us behind or 250 ahead: its receives end before their sends begin;
     * the least latencies both ways are 15 us, so the middle of what the messages allow is
     * the skew itself and every figure is the same */
    test_hand_1f1b(-300, false);
    test_hand_1f1b(250, false);
    test_self(SCHEME_X, 4, 8, true);
    test_self(SCHEME_W, 4, 8, true);
    test_self(SCHEME_ZBH1, 4, 8, true);
    test_self(SCHEME_X, 4, 4, false);
    test_self(SCHEME_V, 4, 8, false);
    test_compute_only();
    return check_report("test_replay");
}
