/* tests/unit/test_recv_order.c: receives in their senders' order (sim/core/recv_order.h), the rule
 * that lets a tagless channel (NCCL) run a plan:
 *  - a hand-built crossing on two devices: the receive met first pulls in the one sent before
 *    it, one receive moved, the compute order untouched;
 *  - hand-built mismatches other than a crossing, each with the pair and positions worked by
 *    hand: a receive missing, a pair with receives and no sends, a send to a device outside
 *    the plan (left for the validator), and of two pairs at fault the first in (from, to)
 *    order, found after the other;
 *  - every synchronous scheme comes out of scheme_build in send order (ZB-V, ZB-W and
 *    DualPipeV crossed before the rule: device 0 sends to device 1 both chunk 0's activations
 *    and chunk 1's gradients), and matching again moves nothing;
 *  - sinking every receive back to just before its consumer (where the generators put them)
 *    recrosses ZB-V and DualPipeV; matching brings back the same plan, and the step time of
 *    both plans is the same to the bit: a message sent earlier on a pair arrives no later. */
#include <config.h>

#include <stdio.h>
#include <string.h>

#include "model/config.h"
#include "sim/plan/plan.h"
#include "sim/core/recv_order.h"
#include "sim/schemes/scheme.h"
#include "sim/core/simulate.h"
#include "sim/plan/validate.h"
#include "sim/core/vpipe.h"
#include "tests/check.h"
#include "tests/unit_config.h"
#include "util/err.h"

static struct instr I(enum op op, int mb, int stage, int peer)
{
    return (struct instr){.op = op, .mb = mb, .part = 0, .stage = stage, .peer = peer};
}

/* GPipe on two devices, two micro-batches: device 1 receives micro-batch 1's activation
 * before micro-batch 0's, although device 0 sent 0 first. */
static void test_hand_crossing(void)
{
    struct config c = test_unit_config(SCHEME_GPIPE, 2, 2, 1, 2, 1);
    struct plan_geom g = {SCHEME_GPIPE, 2, 1, 2, 2};
    struct plan *p = plan_new(&c, &g);
    plan_append(p, 0, I(OP_FW, 0, 0, -1));
    plan_append(p, 0, I(OP_SA, 0, 0, 1));
    plan_append(p, 0, I(OP_FW, 1, 0, -1));
    plan_append(p, 0, I(OP_SA, 1, 0, 1));
    plan_append(p, 1, I(OP_RA, 1, 1, 0));
    plan_append(p, 1, I(OP_FW, 1, 1, -1));
    plan_append(p, 1, I(OP_RA, 0, 1, 0));
    plan_append(p, 1, I(OP_FW, 0, 1, -1));
    int a, b, sp, rp;
    CHECK(plan_receive_mismatch(p, &a, &b, &sp, &rp));
    CHECK_EQ_INT(a, 0);
    CHECK_EQ_INT(b, 1);
    CHECK_EQ_INT(sp, 1); /* SA(0) on device 0 */
    CHECK_EQ_INT(rp, 0); /* RA(1) on device 1 */
    struct mt_err e = {0};
    CHECK_EQ_INT(plan_match_receives(p, &e), 1);
    /* RA(0) pulled in before RA(1); the forwards keep their order */
    static const struct {
        enum op op;
        int mb;
    } want[] = {{OP_RA, 0}, {OP_RA, 1}, {OP_FW, 1}, {OP_FW, 0}};
    CHECK_EQ_INT(plan_len(p, 1), 4);
    for (int i = 0; i < 4 && i < plan_len(p, 1); i++) {
        CHECK_EQ_INT(plan_at(p, 1, i)->op, want[i].op);
        CHECK_EQ_INT(plan_at(p, 1, i)->mb, want[i].mb);
    }
    CHECK_EQ_INT(plan_len(p, 0), 4);
    CHECK(!plan_receive_mismatch(p, &a, &b, &sp, &rp));
    CHECK_EQ_INT(plan_match_receives(p, &e), 0);
    plan_free(p);
}

/* plan_receive_mismatch on p names pair (a, b) at send_pos / recv_pos; frees p. */
static void expect_mismatch(struct plan *p, int a, int b, int send_pos, int recv_pos)
{
    int ga = -1, gb = -1, gs = -1, gr = -1;
    CHECK(plan_receive_mismatch(p, &ga, &gb, &gs, &gr));
    CHECK_EQ_INT(ga, a);
    CHECK_EQ_INT(gb, b);
    CHECK_EQ_INT(gs, send_pos);
    CHECK_EQ_INT(gr, recv_pos);
    plan_free(p);
}

/* GPipe forwards only, on D devices and two micro-batches: mismatches other than a crossing.
 * A missing or extra message is named at the end of the list that lacks it (its length). */
static void test_hand_mismatches(void)
{
    struct config c = test_unit_config(SCHEME_GPIPE, 2, 2, 1, 2, 1);
    struct plan_geom g = {SCHEME_GPIPE, 2, 1, 2, 2};
    /* device 1 never receives micro-batch 1: the pair's second send (SA1 at 3) against the
     * end of device 1's list (3) */
    struct plan *p = plan_new(&c, &g);
    plan_append(p, 0, I(OP_FW, 0, 0, -1));
    plan_append(p, 0, I(OP_SA, 0, 0, 1));
    plan_append(p, 0, I(OP_FW, 1, 0, -1));
    plan_append(p, 0, I(OP_SA, 1, 0, 1));
    plan_append(p, 1, I(OP_RA, 0, 1, 0));
    plan_append(p, 1, I(OP_FW, 0, 1, -1));
    plan_append(p, 1, I(OP_FW, 1, 1, -1));
    expect_mismatch(p, 0, 1, 3, 3);

    /* receives on a pair with no sends: the end of device 0's list (2) against the first (0) */
    p = plan_new(&c, &g);
    plan_append(p, 0, I(OP_FW, 0, 0, -1));
    plan_append(p, 0, I(OP_FW, 1, 0, -1));
    plan_append(p, 1, I(OP_RA, 0, 1, 0));
    plan_append(p, 1, I(OP_FW, 0, 1, -1));
    plan_append(p, 1, I(OP_RA, 1, 1, 0));
    plan_append(p, 1, I(OP_FW, 1, 1, -1));
    expect_mismatch(p, 0, 1, 2, 0);

    /* SA1 to device 7 is not counted on any pair: RA1 (at 2) has no send left (end of 0: 4) */
    p = plan_new(&c, &g);
    plan_append(p, 0, I(OP_FW, 0, 0, -1));
    plan_append(p, 0, I(OP_SA, 0, 0, 1));
    plan_append(p, 0, I(OP_FW, 1, 0, -1));
    plan_append(p, 0, I(OP_SA, 1, 0, 7));
    plan_append(p, 1, I(OP_RA, 0, 1, 0));
    plan_append(p, 1, I(OP_FW, 0, 1, -1));
    plan_append(p, 1, I(OP_RA, 1, 1, 0));
    plan_append(p, 1, I(OP_FW, 1, 1, -1));
    expect_mismatch(p, 0, 1, 4, 2);

    /* three devices: device 1 sends micro-batch 1 before 0 to device 2 (pair (1, 2): SA1 at 4
     * against RA0 at 0), and device 2 also receives from device 0, which sends it nothing (pair
     * (0, 2): the end of device 0's list, 4, against RA1 at 4). Device 2's list meets (1, 2)'s
     * fault first; (0, 2) comes first in (from, to) order and is the one named. */
    struct config c3 = test_unit_config(SCHEME_GPIPE, 3, 2, 1, 2, 1);
    struct plan_geom g3 = {SCHEME_GPIPE, 3, 1, 3, 2};
    p = plan_new(&c3, &g3);
    plan_append(p, 0, I(OP_FW, 0, 0, -1));
    plan_append(p, 0, I(OP_SA, 0, 0, 1));
    plan_append(p, 0, I(OP_FW, 1, 0, -1));
    plan_append(p, 0, I(OP_SA, 1, 0, 1));
    plan_append(p, 1, I(OP_RA, 0, 1, 0));
    plan_append(p, 1, I(OP_FW, 0, 1, -1));
    plan_append(p, 1, I(OP_RA, 1, 1, 0));
    plan_append(p, 1, I(OP_FW, 1, 1, -1));
    plan_append(p, 1, I(OP_SA, 1, 1, 2));
    plan_append(p, 1, I(OP_SA, 0, 1, 2));
    plan_append(p, 2, I(OP_RA, 0, 2, 1));
    plan_append(p, 2, I(OP_FW, 0, 2, -1));
    plan_append(p, 2, I(OP_RA, 1, 2, 1));
    plan_append(p, 2, I(OP_FW, 1, 2, -1));
    plan_append(p, 2, I(OP_RA, 1, 2, 0));
    struct plan *q = plan_clone(p);
    expect_mismatch(p, 0, 2, 4, 4);
    plan_remove(q, 2, 4); /* without the stray receive, (1, 2) is named */
    expect_mismatch(q, 1, 2, 4, 0);
}

static struct plan *build(enum scheme_id s, int D, int N, bool analytic)
{
    struct config c = test_unit_config(s, D, N, 1, 2, 1);
    if (analytic) {
        config_default(&c);
        c.scheme = s;
        c.num_device = D;
        c.num_microbatches = N;
    }
    c.chunks = 2;
    c.model.num_layers = 32;
    struct mt_err e = {0};
    struct plan *p = NULL;
    if (scheme_build(&c, &p, &e) != MT_OK) {
        fprintf(stderr, "%s D=%d N=%d: %s\n", config_scheme_name(s), D, N, e.msg);
        CHECK(0);
    }
    return p;
}

/* Each receive moved to just before the forward (RA) or backward (RG) that consumes it. */
static void sink_receives(struct plan *p)
{
    for (int d = 0; d < plan_devices(p); d++)
        for (int i = plan_len(p, d) - 1; i >= 0; i--) {
            const struct instr *in = plan_at(p, d, i);
            if (!vpipe_is_recv(in->op))
                continue;
            int at = -1;
            for (int j = i + 1; j < plan_len(p, d) && at < 0; j++) {
                const struct instr *c = plan_at(p, d, j);
                bool fwd = plan_op_is_forward(c->op), bwd = plan_op_is_backward(c->op);
                if (c->mb == in->mb && c->stage == in->stage &&
                    ((in->op == OP_RA && fwd) || (in->op == OP_RG && bwd)))
                    at = j;
            }
            if (at > i + 1)
                plan_move(p, d, i, at);
        }
}

static bool same_plan(const struct plan *a, const struct plan *b)
{
    for (int d = 0; d < plan_devices(a); d++) {
        if (plan_len(a, d) != plan_len(b, d))
            return false;
        for (int i = 0; i < plan_len(a, d); i++)
            if (memcmp(plan_at(a, d, i), plan_at(b, d, i), sizeof(struct instr)) != 0)
                return false;
    }
    return true;
}

static void test_schemes(void)
{
    enum scheme_id schemes[SCHEME__COUNT];
    int n_schemes = test_sync_schemes(schemes, false), built[SCHEME__COUNT] = {0};
    int crossed = 0;
    for (int k = 0; k < n_schemes; k++)
        for (int D = 2; D <= 4; D += 2)
            for (int N = D; N <= 4 * D; N *= 2)
                for (int analytic = 0; analytic <= 1; analytic++) {
                    struct config probe = test_unit_config(schemes[k], D, N, 1, 2, 1);
                    probe.chunks = 2;
                    probe.model.num_layers = 32;
                    if (config_validate(&probe, NULL) != MT_OK)
                        continue; /* DualPipeV needs a micro-batch per stage of its V */
                    struct plan *p = build(schemes[k], D, N, analytic);
                    if (p == NULL)
                        continue;
                    built[k]++;
                    int a, b, sp, rp;
                    struct mt_err e = {0};
                    CHECK(!plan_receive_mismatch(p, &a, &b, &sp, &rp));
                    CHECK_EQ_INT(plan_match_receives(p, &e), 0);
                    struct plan *q = plan_clone(p);
                    sink_receives(q);
                    CHECK(validate_plan(q, &e) == MT_OK);
                    if (plan_receive_mismatch(q, &a, &b, &sp, &rp)) {
                        crossed++;
                        CHECK(plan_match_receives(q, &e) > 0);
                    }
                    CHECK(same_plan(p, q));
                    /* the step time is the same with the receives sunk or matched */
                    struct plan *r = plan_clone(p);
                    sink_receives(r);
                    struct sim_result sp_, sr;
                    CHECK(sim_run(p, &sp_, &e) == MT_OK);
                    CHECK(sim_run(r, &sr, &e) == MT_OK);
                    CHECK(sp_.step_time == sr.step_time);
                    for (int d = 0; d < D; d++)
                        CHECK(sp_.dev[d].peak_mem >= sr.dev[d].peak_mem);
                    sim_result_fini(&sp_);
                    sim_result_fini(&sr);
                    plan_free(r);
                    plan_free(q);
                    plan_free(p);
                }
    for (int k = 0; k < n_schemes; k++) /* every scheme of the registry took a config */
        CHECK(built[k] > 0);
    /* the V-shaped ones cross when sunk; at least ZB-V and DualPipeV at D = 2 and 4 */
    CHECK(crossed >= 4);
    printf("%d scheme configs crossed with their receives sunk\n", crossed);
}

int main(void)
{
    test_hand_crossing();
    test_hand_mismatches();
    test_schemes();
    return check_report("test_recv_order");
}
