/* tests/unit/test_share.c: processor sharing (sim/core/share.h, issue 19) against timelines worked
 * out by hand with unit costs (F = 1, B = 2 per device, messages free), where n ranks
 * computing on C < n cores each progress at C / n:
 *   - GPipe, 2 devices, 2 micro-batches, 1 core: F0 [0,1]; F1 of device 0 and F0 of device 1
 *     share [1,3]; F1 [3,4] and B0 [4,6] alone on device 1; B0 of device 0 and B1 of device 1
 *     share [6,10]; B1 of device 0 [10,12]: 12 t (9 t on a core each);
 *   - 1F1B, the same: ... B0 of device 0 starts at 5 beside F1 of device 1 (done at 7), then
 *     beside B1 (B0 done at 9), B1 alone to 10, B1 of device 0 [10,12]: 12 t (9 t unshared);
 *   - one stage and two data-parallel replicas on one core: everything twice as long;
 *   - a calibration's measurements with more ranks than cores: GPipe, 2 devices, 1
 *     micro-batch on 1 core, F = 100 us, B = 200 us, OS 0, messages 30 us from the send to the
 *     receive's end of which the receive is 15 us, 5 us between instructions: FW0 [0,105],
 *     its message there at 125, RA0 ends 140, FW0 [140,245], BW0 [245,450], its gradient at
 *     470, RG0 ends 485, BW0 [485,690], OS [690,695]: 695 us (no two ranks compute at once);
 *   - the same plans with a core per rank, or more cores than ranks: sim_run's figures to
 *     the bit. */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "model/config.h"
#include "model/presets.h"
#include "model/profile.h"
#include "sim/plan/plan.h"
#include "sim/schemes/scheme.h"
#include "sim/core/share.h"
#include "sim/core/simulate.h"
#include "tests/check.h"
#include "util/err.h"

static struct plan *unit_plan(enum scheme_id s, int devices, int dp, int N, int cores)
{
    struct config c;
    config_default(&c);
    c.scheme = s;
    c.num_device = devices;
    c.cluster.dp = dp;
    c.num_microbatches = N;
    c.unit = (struct unit_costs){true, 1, 2, 1, 0, 1, 0};
    c.profile.cores = cores;
    struct plan *p = NULL;
    struct mt_err e = {0};
    if (scheme_build(&c, &p, &e) != MT_OK)
        fprintf(stderr, "build: %s\n", e.msg);
    return p;
}

static double step(enum scheme_id s, int devices, int dp, int N, int cores)
{
    struct plan *p = unit_plan(s, devices, dp, N, cores);
    struct sim_result r;
    struct mt_err e = {0};
    double t = NAN;
    if (p != NULL && sim_run(p, &r, &e) == MT_OK) {
        t = r.step_time;
        sim_result_fini(&r);
    }
    plan_free(p);
    return t;
}

/* The figures with `cores` are bit for bit those without. */
static void check_same(enum scheme_id s, int devices, int dp, int N, int cores)
{
    struct plan *a = unit_plan(s, devices, dp, N, 0), *b = unit_plan(s, devices, dp, N, cores);
    struct sim_result ra, rb;
    struct mt_err e = {0};
    CHECK(!share_applies(plan_config(b)));
    CHECK_EQ_INT(sim_run(a, &ra, &e), MT_OK);
    CHECK_EQ_INT(sim_run(b, &rb, &e), MT_OK);
    CHECK(ra.step_time == rb.step_time);
    CHECK(memcmp(ra.start, rb.start, (size_t)ra.total * sizeof(double)) == 0);
    CHECK(memcmp(ra.end, rb.end, (size_t)ra.total * sizeof(double)) == 0);
    for (int d = 0; d < ra.devices; d++)
        CHECK(ra.dev[d].peak_mem == rb.dev[d].peak_mem && ra.dev[d].busy == rb.dev[d].busy);
    sim_result_fini(&ra);
    sim_result_fini(&rb);
    plan_free(a);
    plan_free(b);
}

static void test_measured(void)
{
    struct config c;
    config_default(&c);
    struct mt_err e = {0};
    CHECK_EQ_INT(presets_model("tiny", &c.model, &e), MT_OK);
    c.scheme = SCHEME_GPIPE;
    c.num_device = 2;
    c.num_microbatches = 1;
    c.global_batch_size = 1;
    struct profile *pr = &c.profile;
    memset(pr, 0, sizeof *pr);
    pr->enabled = true;
    profile_shape_of(&c, &pr->shape);
    pr->fw = (struct profile_fit){0, 100, 0, 0, 1, 4};
    pr->bw = (struct profile_fit){0, 200, 0, 0, 1, 4};
    pr->os = (struct profile_fit){0, 0, 0, 0, 1, 4};
    pr->p2p = (struct profile_fit){0, 0, 0, 0, 0, 4};
    pr->p2p_shared = (struct profile_fit){0, 30, 0, 0, 0, 4};
    pr->recv_shared = (struct profile_fit){0, 15, 0, 0, 0, 4};
    pr->gap_shared = (struct profile_fit){0, 5, 0, 0, 0, 4};
    pr->cores = 1;
    struct plan *p = NULL;
    CHECK_EQ_INT(scheme_build(&c, &p, &e), MT_OK);
    struct sim_result r;
    CHECK_EQ_INT(sim_run(p, &r, &e), MT_OK);
    CHECK_NEAR(r.step_time, 695, 1e-9);
    sim_result_fini(&r);
    plan_free(p);
    /* on a core each: the calibration's own p2p (0), no time between instructions */
    c.profile.cores = 2;
    CHECK_EQ_INT(scheme_build(&c, &p, &e), MT_OK);
    CHECK_EQ_INT(sim_run(p, &r, &e), MT_OK);
    CHECK_NEAR(r.step_time, 600, 1e-9);
    sim_result_fini(&r);
    plan_free(p);
}

int main(void)
{
    test_measured();
    CHECK_NEAR(step(SCHEME_GPIPE, 2, 1, 2, 0), 9, 1e-12);
    CHECK_NEAR(step(SCHEME_GPIPE, 2, 1, 2, 1), 12, 1e-9);
    CHECK_NEAR(step(SCHEME_V, 2, 1, 2, 0), 9, 1e-12);
    CHECK_NEAR(step(SCHEME_V, 2, 1, 2, 1), 12, 1e-9);
    /* two replicas of each device on 2 cores share as one of each on one */
    CHECK_NEAR(step(SCHEME_GPIPE, 4, 2, 2, 2), 12, 1e-9);
    /* one stage, two replicas, one core: every instruction computes beside its twin */
    double alone = step(SCHEME_V, 2, 2, 4, 0);
    CHECK_NEAR(step(SCHEME_V, 2, 2, 4, 1), 2 * alone, 1e-9 * alone);
    check_same(SCHEME_V, 4, 1, 8, 4);
    check_same(SCHEME_X, 4, 1, 8, 8);
    check_same(SCHEME_ZBV, 2, 2, 8, 4);
    return check_report("test_share");
}
