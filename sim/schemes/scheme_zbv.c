/* sim/schemes/scheme_zbv.c: the V-shaped zero-bubble schedules, two stages per device: part 0 of device
 * r runs stage r, part 1 stage 2D-1-r (sim/core/vpipe.c), so the first and last stage share device 0
 * and the loss sits on device 0 too; and DualPipe, which DualPipeV folds (both directions, the
 * same step structure and helpers, Chimera's placement).
 *
 * ZBVZeroBubble (Qi et al., arXiv 2401.10241 §6, as torch.distributed.pipelining's
 * ScheduleZBVZeroBubble, rule for rule): device r runs 2(D-r)-1 forwards of part 0, r pairs
 * (F1, F0), D-r rounds (F1, B1, W1); then while part 1 has forwards to catch up or part 0 has
 * micro-batches left: (F0 if any left, B0, W0, F1, B1, W1); then r pairs (B0, B1) whose Ws wait,
 * D-r rounds (B0, W0 of the oldest waiting), and last the waiting Ws of part 1, then of part 0.
 * torch counts its rounds over max(2D-1, N) micro-batches and leaves out what names a
 * micro-batch >= N: so does this.
 *
 * DualPipeV (DeepSeek's DualPipe folded into a V; torch's ScheduleDualPipeV, step for step):
 * "F&B" below is torch's overlapped action, a forward of one part and a whole backward of the
 * other: the forward, then the backward marked paired, so that each hides the other's expert
 * all-to-alls (sim/core/overlap.h). Input-gradient backwards (B) queue their W; "W?" runs the
 * oldest queued W, if any.
 *   1: 2(D-r-1) x F0        2: r+1 x (F0, F1)         3: D-r-1 x (B1, W?, F1)
 *   4: N-2D+r+1 x (F0&BW1, F1&BW0), the first F0&BW1 of the last device unoverlapped
 *   5: D-r-1 x (BW1, F1&BW0)
 *   6: r+1 x (X1, X0), X = BW before the middle round and B from it (odd r switch between
 *      the two, even r after the pair's first)
 *   7: D-r-1 x (W?, X0)      8: r+1 x W?
 *
 * DualPipe (DeepSeek-V3 report §3.2.1; deepseek-ai/DualPipe dualpipe.py, step for step): the
 * two directions of Chimera's placement (sim/core/vpipe.c), each device d holding stage d of
 * the down pipeline (part 0) and stage D-1-d of the up one (part 1): twice the parameters. The
 * first N/2 micro-batches enter at device 0, the rest at device D-1. With H = D/2 and
 * h = min(d, D-1-d), phase 0 is part 0 on the first half of the devices and part 1 on the
 * second (phase p is part p ^ (d >= H)); in phases:
 *   1: 2(H-h-1) x F0         2: h+1 x (F0, F1)          3: H-h-1 x (B1, W?, F1)
 *   4: N/2-D+h+1 x (F0&BW1, F1&BW0), the first F0&BW1 of the two middle devices unoverlapped
 *   5: H-h-1 x (BW1, F1&BW0)
 *   6: h+1 x (X1, X0) as DualPipeV's step 6 with h for r
 *   7: H-h-1 x (W?, B0)      8: h+1 x W? */
#include <config.h>
#include "sim/schemes/scheme.h"

#include <stdlib.h>

#include "sim/core/vpipe.h"
#include "util/err.h"
#include "util/xalloc.h"

/* A device's order under construction: per-part counters of forwards, backwards (B or BW) and
 * the queue of Ws waiting (their part and micro-batch). A part's k-th micro-batch is mb0[part]
 * + k, k < N (a V: mb0 0 and N all of them; DualPipe: a half each). */
struct zbv {
    struct plan *p;
    int d, N, mb0[2];
    int f[2], b[2];
    int *wq_part, *wq_mb, wq_head, wq_tail;
    int paired; /* the next instruction closes an F&B pair */
};

static void zbv_put(struct zbv *z, enum op op, int part, int k)
{
    int paired = z->paired;
    z->paired = 0;
    if (k >= z->N) /* torch's rounds run past N; those actions are left out */
        return;
    const struct plan_geom *g = plan_geom(z->p);
    int mb = z->mb0[part] + k;
    plan_append(z->p, z->d,
                (struct instr){op, mb, part, vpipe_stage(g, z->d, mb, part), -1, 0, 0, paired});
}

static void zbv_f(struct zbv *z, int part)
{
    zbv_put(z, OP_FW, part, z->f[part]++);
}

/* A backward of part: BW (whole), or B whose W is queued. */
static void zbv_b(struct zbv *z, int part, bool split)
{
    int mb = z->b[part]++;
    zbv_put(z, split ? OP_B : OP_BW, part, mb);
    if (split) {
        z->wq_part[z->wq_tail] = part;
        z->wq_mb[z->wq_tail++] = mb;
    }
}

static void zbv_w(struct zbv *z)
{
    if (z->wq_head == z->wq_tail)
        return;
    zbv_put(z, OP_W, z->wq_part[z->wq_head], z->wq_mb[z->wq_head]); /* k, as queued */
    z->wq_head++;
}

static void zbv_init(struct zbv *z, struct plan *p, int d, int rounds)
{
    *z = (struct zbv){.p = p, .d = d, .N = plan_geom(p)->mbs};
    z->wq_part = xmalloc((size_t)(2 * rounds + 2) * sizeof(int));
    z->wq_mb = xmalloc((size_t)(2 * rounds + 2) * sizeof(int));
}

static void zbv_fini(struct zbv *z)
{
    free(z->wq_part);
    free(z->wq_mb);
}

int scheme_order_zbv_torch(struct plan *p, const struct cost_model *cost, struct mt_err *e)
{
    (void)cost;
    (void)e;
    const struct plan_geom *g = plan_geom(p);
    int D = g->devices, n = g->mbs > 2 * D - 1 ? g->mbs : 2 * D - 1;
    for (int r = 0; r < D; r++) {
        struct zbv z;
        zbv_init(&z, p, r, n);
        for (int k = 0; k < 2 * (D - r) - 1; k++)
            zbv_f(&z, 0);
        for (int k = 0; k < r; k++) {
            zbv_f(&z, 1);
            zbv_f(&z, 0);
        }
        for (int k = 0; k < D - r; k++) {
            zbv_f(&z, 1);
            zbv_b(&z, 1, true);
            zbv_w(&z);
        }
        while (z.f[1] < z.f[0] || z.f[0] < n) {
            if (z.f[0] < n)
                zbv_f(&z, 0);
            zbv_b(&z, 0, true);
            zbv_w(&z);
            zbv_f(&z, 1);
            zbv_b(&z, 1, true);
            zbv_w(&z);
        }
        /* Cool-down: r pairs of Bs whose Ws wait, then (B0, W0) with the oldest part-0 W, then
         * the waiting Ws of part 1 and of part 0 in micro-batch order. */
        int w0 = z.b[0], w1 = z.b[1];
        for (int k = 0; k < r; k++) {
            zbv_put(&z, OP_B, 0, z.b[0]++);
            zbv_put(&z, OP_B, 1, z.b[1]++);
        }
        for (int k = 0; k < D - r; k++) {
            zbv_put(&z, OP_B, 0, z.b[0]++);
            zbv_put(&z, OP_W, 0, w0++);
        }
        while (w1 < z.b[1])
            zbv_put(&z, OP_W, 1, w1++);
        while (w0 < z.b[0])
            zbv_put(&z, OP_W, 0, w0++);
        zbv_fini(&z);
    }
    return MT_OK;
}

/* torch's overlapped forward + whole backward: the forward, then the backward paired with it
 * (alone when overlap is false: the reference's unoverlapped first F&B of its last device). */
static void zbv_fb(struct zbv *z, int fpart, int bpart, bool overlap)
{
    zbv_f(z, fpart);
    z->paired = overlap;
    zbv_b(z, bpart, false);
}

int scheme_order_dualpipev(struct plan *p, const struct cost_model *cost, struct mt_err *e)
{
    (void)cost;
    const struct plan_geom *g = plan_geom(p);
    int D = g->devices, N = g->mbs;
    if (N < 2 * D)
        return err_set(e, MT_EINVAL,
                       "num_microbatches: DualPipeV needs at least 2 pp = %d (got %d)", 2 * D, N);
    for (int r = 0; r < D; r++) {
        struct zbv z;
        zbv_init(&z, p, r, N);
        for (int k = 0; k < 2 * (D - r - 1); k++)
            zbv_f(&z, 0);
        for (int k = 0; k < r + 1; k++) {
            zbv_f(&z, 0);
            zbv_f(&z, 1);
        }
        for (int k = 0; k < D - r - 1; k++) {
            zbv_b(&z, 1, true);
            zbv_w(&z);
            zbv_f(&z, 1);
        }
        for (int k = 0; k < N - 2 * D + r + 1; k++) {
            zbv_fb(&z, 0, 1, k > 0 || r != D - 1); /* the last device's first: alone */
            zbv_fb(&z, 1, 0, true);
        }
        for (int k = 0; k < D - r - 1; k++) {
            zbv_b(&z, 1, false);
            zbv_fb(&z, 1, 0, true);
        }
        bool split = false;
        int half = (r + 1) / 2;
        for (int k = 0; k < r + 1; k++) {
            if (k == half && r % 2 == 1)
                split = true;
            zbv_b(&z, 1, split);
            if (k == half && r % 2 == 0)
                split = true;
            zbv_b(&z, 0, split);
        }
        for (int k = 0; k < D - r - 1; k++) {
            zbv_w(&z);
            zbv_b(&z, 0, split);
        }
        for (int k = 0; k < r + 1; k++)
            zbv_w(&z);
        zbv_fini(&z);
    }
    return MT_OK;
}

int scheme_order_dualpipe(struct plan *p, const struct cost_model *cost, struct mt_err *e)
{
    (void)cost;
    const struct plan_geom *g = plan_geom(p);
    int D = g->devices, N = g->mbs, H = D / 2, half = N / 2;
    if (D % 2 != 0 || N % 2 != 0 || N < 2 * D)
        return err_set(e, MT_EINVAL,
                       "DualPipe needs an even pp and an even number of micro-batches of at least "
                       "2 pp (pp = %d, %d micro-batches)",
                       D, N);
    for (int d = 0; d < D; d++) {
        int h = d < D - 1 - d ? d : D - 1 - d, second = d >= H;
        bool middle = d == H - 1 || d == H;
        int p0 = second, p1 = 1 - second; /* the parts of phases 0 and 1 on this device */
        struct zbv z;
        zbv_init(&z, p, d, half);
        z.N = half;
        z.mb0[1] = half; /* the up direction's micro-batches */
        for (int k = 0; k < 2 * (H - h - 1); k++)
            zbv_f(&z, p0);
        for (int k = 0; k < h + 1; k++) {
            zbv_f(&z, p0);
            zbv_f(&z, p1);
        }
        for (int k = 0; k < H - h - 1; k++) {
            zbv_b(&z, p1, true);
            zbv_w(&z);
            zbv_f(&z, p1);
        }
        for (int k = 0; k < half - D + h + 1; k++) {
            zbv_fb(&z, p0, p1, k > 0 || !middle); /* the middle devices' first: alone */
            zbv_fb(&z, p1, p0, true);
        }
        for (int k = 0; k < H - h - 1; k++) {
            zbv_b(&z, p1, false);
            zbv_fb(&z, p1, p0, true);
        }
        bool split = false;
        int mid = (h + 1) / 2;
        for (int k = 0; k < h + 1; k++) {
            if (k == mid && h % 2 == 1)
                split = true;
            zbv_b(&z, p1, split);
            if (k == mid && h % 2 == 0)
                split = true;
            zbv_b(&z, p0, split);
        }
        for (int k = 0; k < H - h - 1; k++) {
            zbv_w(&z);
            zbv_b(&z, p0, true);
        }
        for (int k = 0; k < h + 1; k++)
            zbv_w(&z);
        zbv_fini(&z);
    }
    return MT_OK;
}
