/* tests/unit/test_critical.c: sim_critical_path against what is known by hand. With unit
 * costs (F = 1, B = 2, free p2p) the path of a synchronous pipeline is a chain of instructions
 * each starting when the previous ended, from 0 to the step time, so its compute durations
 * sum to the step: 21 for 1F1B and for GPipe with 4 devices and 4 micro-batches, (N+D-1)(F+B).
 * It starts at the first forward of device 0 and ends at the backward that ends the step, and
 * crosses the last stage (every backward of stage 0 waits on the last stage's). */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>

#include "model/config.h"
#include "sim/core/critical.h"
#include "sim/plan/plan.h"
#include "sim/schemes/scheme.h"
#include "sim/core/simulate.h"
#include "tests/check.h"
#include "tests/unit_config.h"
#include "util/err.h"

static void check_path(enum scheme_id scheme, int D, int N, double want_step)
{
    struct config c = test_unit_config(scheme, D, N, 1, 2, 1);
    struct mt_err e = {0};
    struct plan *p = NULL;
    struct sim_result r = {0};
    if (scheme_build(&c, &p, &e) != MT_OK || sim_run(p, &r, &e) != MT_OK) {
        fprintf(stderr, "%s\n", e.msg);
        CHECK(0);
        plan_free(p);
        return;
    }
    CHECK_NEAR(r.step_time, want_step, 1e-12);
    int total = plan_total(p);
    unsigned char *on = calloc((size_t)total, 1);
    int n = sim_critical_path(p, &r, on, &e);
    CHECK(n > 0);
    double busy = 0, first = 1e300, last = -1;
    bool last_stage = false;
    for (int d = 0; d < plan_devices(p); d++)
        for (int i = 0; i < plan_len(p, d); i++) {
            int id = plan_id(p, d, i);
            if (!on[id])
                continue;
            const struct instr *in = plan_at(p, d, i);
            if (in->op == OP_FW || in->op == OP_BW)
                busy += r.end[id] - r.start[id];
            first = r.start[id] < first ? r.start[id] : first;
            last = r.end[id] > last ? r.end[id] : last;
            last_stage |= in->stage == D - 1;
        }
    CHECK_NEAR(busy, want_step, 1e-12);
    CHECK_NEAR(first, 0, 0);
    CHECK_NEAR(last, want_step, 1e-12);
    CHECK(last_stage);
    CHECK(on[plan_id(p, 0, plan_find(p, 0, OP_FW, 0, 0))]);
    int end_bw = -1; /* device 0's backward that ends the step */
    for (int i = 0; i < plan_len(p, 0); i++)
        if (plan_at(p, 0, i)->op == OP_BW && r.end[plan_id(p, 0, i)] == r.step_time)
            end_bw = plan_id(p, 0, i);
    CHECK(end_bw >= 0 && on[end_bw]);
    free(on);
    sim_result_fini(&r);
    plan_free(p);
}

int main(void)
{
    check_path(SCHEME_V, 4, 4, 21);
    check_path(SCHEME_GPIPE, 4, 4, 21);
    check_path(SCHEME_V, 8, 16, (16 + 8 - 1) * 3);
    return check_report("test_critical");
}
