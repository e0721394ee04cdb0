/* sim/schemes/scheme_zbv.c: the V-shaped zero-bubble schedules, two stages per device: part 0 of device
 * r runs stage r, part 1 stage 2D-1-r (sim/core/vpipe.c), so the first and last stage share device 0
 * and the loss sits on device 0 too.
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
 * other, which runs here as the forward then the backward (this simulator does not model the
 * overlap of their compute with their communication). Input-gradient backwards (B) queue their
 * W; "W?" runs the oldest queued W, if any.
 *   1: 2(D-r-1) x F0        2: r+1 x (F0, F1)         3: D-r-1 x (B1, W?, F1)
 *   4: N-2D+r+1 x (F0&BW1, F1&BW0), the first F0&BW1 of the last device unoverlapped
 *   5: D-r-1 x (BW1, F1&BW0)
 *   6: r+1 x (X1, X0), X = BW before the middle round and B from it (odd r switch between
 *      the two, even r after the pair's first)
 *   7: D-r-1 x (W?, X0)      8: r+1 x W? */
#include <config.h>
#include "sim/schemes/scheme.h"

#include <stdlib.h>

#include "sim/core/vpipe.h"
#include "util/err.h"
#include "util/xalloc.h"

/* A device's order under construction: per-part counters of forwards, backwards (B or BW) and
 * the queue of Ws waiting (their part and micro-batch). */
struct zbv {
    struct plan *p;
    int d, N;
    int f[2], b[2];
    int *wq_part, *wq_mb, wq_head, wq_tail;
};

static void zbv_put(struct zbv *z, enum op op, int part, int mb)
{
    if (mb >= z->N) /* torch's rounds run past N; those actions are left out */
        return;
    const struct plan_geom *g = plan_geom(z->p);
    plan_append(z->p, z->d, (struct instr){op, mb, part, vpipe_stage(g, z->d, mb, part), -1, 0, 0});
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
    zbv_put(z, OP_W, z->wq_part[z->wq_head], z->wq_mb[z->wq_head]);
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

/* torch's overlapped forward + whole backward, run one after the other. */
static void zbv_fb(struct zbv *z, int fpart, int bpart)
{
    zbv_f(z, fpart);
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
            zbv_fb(&z, 0, 1); /* torch leaves the last device's first one unoverlapped: the
                               * same two instructions here */
            zbv_fb(&z, 1, 0);
        }
        for (int k = 0; k < D - r - 1; k++) {
            zbv_b(&z, 1, false);
            zbv_fb(&z, 1, 0);
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
