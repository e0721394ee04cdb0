/* sim/scheme_zb.c: the zero-bubble family's handcrafted schedules on one stage per device
 * (Qi et al., "Zero Bubble Pipeline Parallelism", ICLR'24, arXiv 2401.10241, §3.1). The
 * backward is split: B (input gradient) is on the critical path and carries the gradient
 * to the previous stage; W (weight gradient) needs only its own B and fills bubbles.
 *
 * ZB-H1 (the paper's Figure 3; the order of PaddlePaddle's pipeline_scheduler_ZBH1): device
 * i of D runs D - i warm-up forwards, then i rounds of (B, F) whose W it defers, then
 * 1F1B-1W rounds (B, W, F) while forwards remain, then (B, W) to the end, and last the i
 * deferred Ws. At most D - i micro-batches are in flight, 1F1B's activation memory, plus the
 * i deferred Ws' w_keep; with T_F = T_B = T_W the step is N(T_F+T_B+T_W) + (D-1)(T_F+T_B-T_W)
 * against 1F1B's (N + D - 1)(T_F+T_B+T_W).
 *
 * ZB-H2 (the paper's Figure 4): device i runs 2(D - i) - 1 warm-up forwards, which fill the
 * bubble before its first B, then (B, W, F) rounds; in the drain it runs (B, W) and defers the
 * Ws of its last 2i micro-batches to the end, which turns the tail into a parallelogram:
 * with T_F = T_B = T_W every device is busy from its first forward to its last W. Its peak
 * is 2(D - i) - 1 micro-batches in flight, about twice 1F1B's. */
#include <config.h>
#include "sim/scheme.h"

#include "sim/vpipe.h"
#include "util/err.h"

static void zb_put(struct plan *p, int d, enum op op, int mb)
{
    plan_append(p, d, (struct instr){op, mb, 0, vpipe_stage(plan_geom(p), d, mb, 0), -1, 0, 0});
}

int scheme_order_zbh1(struct plan *p, const struct cost_model *cost, struct mt_err *e)
{
    (void)cost;
    const struct plan_geom *g = plan_geom(p);
    int D = g->devices, N = g->mbs;
    if (N < D)
        return err_set(e, MT_EINVAL, "num_microbatches: ZB-H1 needs at least pp = %d (got %d)",
                       D, N);
    for (int i = 0; i < D; i++) {
        int f = 0, b = 0;
        while (f < D - i)
            zb_put(p, i, OP_FW, f++);
        for (int k = 0; k < i; k++) {
            zb_put(p, i, OP_B, b++);
            zb_put(p, i, OP_FW, f++);
        }
        while (f < N) {
            zb_put(p, i, OP_B, b);
            zb_put(p, i, OP_W, b++);
            zb_put(p, i, OP_FW, f++);
        }
        while (b < N) {
            zb_put(p, i, OP_B, b);
            zb_put(p, i, OP_W, b++);
        }
        for (int k = 0; k < i; k++)
            zb_put(p, i, OP_W, k);
    }
    return MT_OK;
}

int scheme_order_zbh2(struct plan *p, const struct cost_model *cost, struct mt_err *e)
{
    (void)cost;
    (void)e;
    const struct plan_geom *g = plan_geom(p);
    int D = g->devices, N = g->mbs;
    for (int i = 0; i < D; i++) {
        int warm = 2 * (D - i) - 1 < N ? 2 * (D - i) - 1 : N;
        int defer_from = N - 2 * i > 0 ? N - 2 * i : 0; /* Ws of these mbs go to the end */
        int f = 0;
        while (f < warm)
            zb_put(p, i, OP_FW, f++);
        for (int b = 0; b < N; b++) {
            zb_put(p, i, OP_B, b);
            if (b < defer_from)
                zb_put(p, i, OP_W, b);
            if (f < N)
                zb_put(p, i, OP_FW, f++);
        }
        for (int b = defer_from; b < N; b++)
            zb_put(p, i, OP_W, b);
    }
    return MT_OK;
}
