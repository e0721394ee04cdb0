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
 * ZB-H2 (the paper's Figure 4): up to 2(D - i) - 1 micro-batches in flight on device i, about
 * twice 1F1B's memory: the extra warm-up forwards fill the bubble before the first B, and the
 * Ws move to wherever a device would wait, the tail becoming a parallelogram. With T_F = T_B =
 * T_W device i is busy without a gap from i to 3N + i once N >= 2D - 1. */
#include <config.h>
#include "sim/scheme.h"

#include <stdlib.h>

#include "sim/vpipe.h"
#include "util/err.h"
#include "util/xalloc.h"

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

/* ZB-H2's order: the paper's layout for T_F = T_B = T_W, built by running the pipeline in unit
 * slots. A device free at slot t runs, of what is ready: its oldest B (the critical path), else
 * its next forward while fewer than 2(D-i) - 1 micro-batches are in flight, else its oldest
 * waiting W. Fixed for (D, N), whatever the cost model says, like the handcrafted schedule. */
int scheme_order_zbh2(struct plan *p, const struct cost_model *cost, struct mt_err *e)
{
    (void)cost;
    (void)e;
    const struct plan_geom *g = plan_geom(p);
    int D = g->devices, N = g->mbs;
    /* done[k][i * N + mb]: the slot after which F (k 0), B (1) or W (2) of (mb, i) is done */
    int *done = xmalloc((size_t)3 * D * N * sizeof(int));
    for (int k = 0; k < 3 * D * N; k++)
        done[k] = -1;
    int *nf = xcalloc((size_t)D, sizeof(int)), *nb = xcalloc((size_t)D, sizeof(int));
    int *nw = xcalloc((size_t)D, sizeof(int));
#define ZB_DONE(k, i, mb) done[((k) * D + (i)) * N + (mb)]
    int left = 3 * D * N;
    for (int t = 0; left > 0; t++) {
        for (int i = 0; i < D; i++) {
            int limit = 2 * (D - i) - 1;
            int b = nb[i], f = nf[i], w = nw[i];
            bool b_ready = b < f && ZB_DONE(0, i, b) >= 0 && ZB_DONE(0, i, b) <= t &&
                           (i == D - 1 || (ZB_DONE(1, i + 1, b) >= 0 && ZB_DONE(1, i + 1, b) <= t));
            bool f_ready = f < N && f - b < limit &&
                           (i == 0 || (ZB_DONE(0, i - 1, f) >= 0 && ZB_DONE(0, i - 1, f) <= t));
            bool w_ready = w < b && ZB_DONE(1, i, w) <= t;
            if (b_ready) {
                ZB_DONE(1, i, b) = t + 1;
                nb[i]++;
                zb_put(p, i, OP_B, b);
            } else if (f_ready) {
                ZB_DONE(0, i, f) = t + 1;
                nf[i]++;
                zb_put(p, i, OP_FW, f);
            } else if (w_ready) {
                ZB_DONE(2, i, w) = t + 1;
                nw[i]++;
                zb_put(p, i, OP_W, w);
            } else {
                continue;
            }
            left--;
        }
    }
#undef ZB_DONE
    free(done);
    free(nf);
    free(nb);
    free(nw);
    return MT_OK;
}
