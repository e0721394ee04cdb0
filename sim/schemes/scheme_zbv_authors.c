/* sim/schemes/scheme_zbv_authors.c: ZB-V as the zero-bubble authors' code builds it (Qi et al., arXiv
 * 2401.10241 §6; sail-sg/zero-bubble-pipeline-parallelism scheduler/zbv.py), two stages per
 * device in a V (part 0 of device r is stage r, part 1 stage 2D-1-r). A greedy on a unit-slot
 * timeline (T_F = T_B = T_W = 1 per chunk, no transfer time), so the order is fixed by (D, N):
 *  1. a part-0 forward on every device; then from the last device back, part 1's first forward,
 *     each device r < D-1 first taking part-0 forwards on devices 0..r (a wave) while they end
 *     before the one it waits for and memory allows 2r + 2 more;
 *  2. devices r = 1.. catch up on forwards, waves from the last device back to r alternating
 *     between the parts, until r has as many as r - 1 and part 1 no fewer;
 *  3. 2N rounds: every device a backward (part 1 first where its gradient is in, from the last
 *     device back, then part 0 from the first), then a forward (part 1 where its input is in,
 *     else part 0); before each, the oldest pending Ws that memory needs, those that end before
 *     the input arrives, and one more when waiting would add more bubble than the worst device
 *     has (always before a part-1 backward; before a part-0 backward or a forward in the
 *     variants that fill them);
 *  4. the pending Ws.
 * Memory in the greedy: F adds M_F, B frees all but M_W, W frees M_W (M_W / M_F = 3/8, as for
 * ZB-H1), limit 2D M_F. A run is repeated while its worst bubble shrinks, each time counting a
 * device's bubble short by how much less it had than the worst in the run before; of the four
 * variants the least worst bubble wins, the first on a tie. */
#include <config.h>
#include "sim/schemes/scheme.h"

#include <stdlib.h>

#include "sim/core/vpipe.h"
#include "util/err.h"
#include "util/xalloc.h"

#define ZBV_MEM_F 8
#define ZBV_MEM_W (-3)
#define ZBV_MEM_B (-ZBV_MEM_F - ZBV_MEM_W)

static const int zbv_mem[3] = {ZBV_MEM_F, ZBV_MEM_B, ZBV_MEM_W};

/* One run. Ops are (cat, chunk): cat 0 F, 1 B, 2 W; a backward's chunk 0 is part 1 (the V's
 * second half runs its backward first), chunk 1 part 0; a forward's chunk is its part. */
struct zbv_run {
    int D, N, max_mem;
    bool fill_b, fill_f;
    const int *approved; /* the previous run's bubbles, or NULL */
    int max_approved;
    int *count;          /* [D][6]: cat * 2 + chunk */
    int *end;            /* [3][2][D][N] slot an op ends, -1 until put */
    int *cur, *mem, *bubble;
    int *wq, *wq_head, *wq_tail; /* per device: FIFO of pending Ws' chunks, [D][2N] */
    int *order, *len;    /* per device: ops in put order, (cat * 2 + chunk) * N + mb */
    bool failed;
};

#define ZBV_ID(z, cat, ch, d, mb) ((((cat) * 2 + (ch)) * (z)->D + (d)) * (z)->N + (mb))
#define ZBV_CNT(z, d, k) ((z)->count[(d) * 6 + (k)])

/* The end of the op a wait is measured against; the authors' code reads the last op's entry
 * (the last W of chunk 1 on the last device) where there is none. */
static int zbv_end_of(const struct zbv_run *z, int id)
{
    return id >= 0 ? z->end[id] : z->end[6 * z->D * z->N - 1];
}

static int zbv_worst(const struct zbv_run *z, int d)
{
    int worst = 0;
    for (int i = 0; i < z->D; i++)
        worst = z->bubble[i] > worst ? z->bubble[i] : worst;
    if (d >= 0 && z->approved != NULL && z->max_approved - z->approved[d] > worst)
        worst = z->max_approved - z->approved[d];
    return worst;
}

static void zbv_put(struct zbv_run *z, int cat, int ch, int d)
{
    int k = cat * 2 + ch, mb = ZBV_CNT(z, d, k);
    if (mb >= z->N || z->mem[d] + zbv_mem[cat] > z->max_mem) {
        z->failed = true;
        return;
    }
    int done = z->cur[d] + 1, no_wait = done;
    if (cat < 2) { /* chunk 1 waits for the device after, chunk 0 for the one before */
        int from = ch == 1 ? d + 1 : d - 1;
        if (from >= 0 && from < z->D) {
            int dep = z->end[ZBV_ID(z, cat, ch, from, mb)];
            if (dep < 0)
                z->failed = true;
            done = dep + 1 > done ? dep + 1 : done;
        }
    }
    if (ZBV_CNT(z, d, 0) > 0)
        z->bubble[d] += done - no_wait;
    z->end[ZBV_ID(z, cat, ch, d, mb)] = done;
    z->cur[d] = done;
    z->mem[d] += zbv_mem[cat];
    z->order[d * 6 * z->N + z->len[d]++] = k * z->N + mb;
    if (cat == 1)
        z->wq[d * 2 * z->N + z->wq_tail[d]++] = ch;
    ZBV_CNT(z, d, k)++;
}

static bool zbv_w_pending(const struct zbv_run *z, int d)
{
    return z->wq_head[d] < z->wq_tail[d];
}

static void zbv_put_w(struct zbv_run *z, int d)
{
    if (!zbv_w_pending(z, d)) {
        z->failed = true;
        return;
    }
    zbv_put(z, 2, z->wq[d * 2 * z->N + z->wq_head[d]++], d);
}

/* Ws before an op on device d whose input is op fa (-1: none): memory, the wait, the bubble. */
static void zbv_before(struct zbv_run *z, int d, int add, int fa, bool fill)
{
    while (!z->failed && z->mem[d] + add > z->max_mem)
        zbv_put_w(z, d);
    while (!z->failed && zbv_w_pending(z, d) && fa >= 0 && z->end[fa] >= z->cur[d] + 1)
        zbv_put_w(z, d);
    if (zbv_w_pending(z, d) && zbv_end_of(z, fa) - z->cur[d] > zbv_worst(z, d) - z->bubble[d] &&
        fill)
        zbv_put_w(z, d);
}

static void zbv_warmup(struct zbv_run *z)
{
    int D = z->D, N = z->N;
    for (int i = 0; i < D; i++)
        zbv_put(z, 0, 0, i);
    for (int i = D - 1; i >= 0; i--) {
        if (i < D - 1) {
            int ready = z->end[ZBV_ID(z, 0, 1, i + 1, 0)];
            while (z->mem[i] + ZBV_MEM_F * (2 + 2 * i) <= z->max_mem && z->cur[i] + 1 <= ready &&
                   ZBV_CNT(z, i, 0) < N)
                for (int j = 0; j <= i; j++)
                    zbv_put(z, 0, 0, j);
        }
        zbv_put(z, 0, 1, i);
    }
    int chunk = 0;
    for (int i = 1; i < D; i++)
        while (ZBV_CNT(z, i, 0) + ZBV_CNT(z, i, 1) < ZBV_CNT(z, i - 1, 0) + ZBV_CNT(z, i - 1, 1) ||
               (ZBV_CNT(z, i, 1) <= ZBV_CNT(z, i - 1, 1) && ZBV_CNT(z, i - 1, 1) < N)) {
            for (int j = D - 1; j >= i; j--)
                if (ZBV_CNT(z, j, chunk) < N)
                    zbv_put(z, 0, chunk, j);
            chunk = 1 - chunk;
            if (z->failed)
                return;
        }
}

static void zbv_backwards(struct zbv_run *z)
{
    int D = z->D;
    int *ranks = xmalloc((size_t)2 * D * sizeof(int)), n = 0;
    for (int i = 0; i < D; i++) /* ranks[.] = 2i + chunk: device i, that chunk's backward */
        while (z->mem[i] + ZBV_MEM_B > z->max_mem && !z->failed)
            zbv_put_w(z, i);
    /* chunk 1 (part 0) where its gradient is in, from the last device back; then chunk 0 */
    bool *one = xcalloc((size_t)D, sizeof(bool));
    for (int i = 0; i < D; i++) {
        if (ZBV_CNT(z, i, 3) >= ZBV_CNT(z, i, 2))
            one[i] = false;
        else if (i == D - 1)
            one[i] = true;
        else
            one[i] = z->end[ZBV_ID(z, 1, 1, i + 1, ZBV_CNT(z, i, 3))] >= 0 ||
                     ZBV_CNT(z, i, 2) >= z->N;
    }
    for (int i = D - 1; i >= 0; i--)
        if (one[i])
            ranks[n++] = 2 * i + 1;
    for (int i = 0; i < D; i++)
        if (!one[i])
            ranks[n++] = 2 * i;
    for (int k = 0; k < n && !z->failed; k++) {
        int i = ranks[k] / 2, ch = ranks[k] % 2, fa = -1;
        if (ch == 1 && i < D - 1)
            fa = ZBV_ID(z, 1, 1, i + 1, ZBV_CNT(z, i, 3));
        if (ch == 0 && i > 0)
            fa = ZBV_ID(z, 1, 0, i - 1, ZBV_CNT(z, i, 2));
        zbv_before(z, i, 0, fa, ch == 1 || z->fill_b);
        zbv_put(z, 1, ch, i);
    }
    free(one);
    free(ranks);
}

static void zbv_forwards(struct zbv_run *z)
{
    int D = z->D, N = z->N;
    for (int i = 0; i < D && !z->failed; i++) {
        if (ZBV_CNT(z, i, 1) >= N)
            continue;
        int item = -1;
        if (ZBV_CNT(z, i, 1) >= ZBV_CNT(z, i, 0))
            item = 0;
        else if (i == D - 1)
            item = 1;
        else if (z->end[ZBV_ID(z, 0, 1, i + 1, ZBV_CNT(z, i, 1))] >= 0)
            item = 1;
        else if (ZBV_CNT(z, i, 0) < N &&
                 (i == 0 || z->end[ZBV_ID(z, 0, 0, i - 1, ZBV_CNT(z, i, 0))] >= 0))
            item = 0;
        if (item < 0)
            continue;
        while (!z->failed && z->mem[i] + ZBV_MEM_F > z->max_mem)
            zbv_put_w(z, i);
        int fa = -1;
        if (item == 0 && i > 0)
            fa = ZBV_ID(z, 0, 0, i - 1, ZBV_CNT(z, i, 0));
        if (item == 1 && i < D - 1)
            fa = ZBV_ID(z, 0, 1, i + 1, ZBV_CNT(z, i, 1));
        zbv_before(z, i, 0, fa, z->fill_f);
        zbv_put(z, 0, item, i);
    }
}

static void zbv_run_init(struct zbv_run *z, int D, int N, bool fill_b, bool fill_f,
                         const int *approved)
{
    *z = (struct zbv_run){.D = D, .N = N, .max_mem = 2 * D * ZBV_MEM_F, .fill_b = fill_b,
                          .fill_f = fill_f, .approved = approved, .max_approved = -1};
    for (int d = 0; approved != NULL && d < D; d++)
        z->max_approved = approved[d] > z->max_approved ? approved[d] : z->max_approved;
    z->count = xcalloc((size_t)6 * D, sizeof(int));
    z->end = xmalloc((size_t)6 * D * N * sizeof(int));
    for (int i = 0; i < 6 * D * N; i++)
        z->end[i] = -1;
    z->cur = xcalloc((size_t)D, sizeof(int));
    z->mem = xcalloc((size_t)D, sizeof(int));
    z->bubble = xcalloc((size_t)D, sizeof(int));
    z->wq = xmalloc((size_t)2 * D * N * sizeof(int));
    z->wq_head = xcalloc((size_t)D, sizeof(int));
    z->wq_tail = xcalloc((size_t)D, sizeof(int));
    z->order = xmalloc((size_t)6 * D * N * sizeof(int));
    z->len = xcalloc((size_t)D, sizeof(int));
}

static void zbv_run_fini(struct zbv_run *z)
{
    free(z->count);
    free(z->end);
    free(z->cur);
    free(z->mem);
    free(z->bubble);
    free(z->wq);
    free(z->wq_head);
    free(z->wq_tail);
    free(z->order);
    free(z->len);
}

/* One run and its repeats; *z holds the best of them, returns its worst bubble (-1: failed). */
static int zbv_try(struct zbv_run *z, int D, int N, bool fill_b, bool fill_f, const int *approved)
{
    zbv_run_init(z, D, N, fill_b, fill_f, approved);
    zbv_warmup(z);
    for (int k = 0; k < 2 * N && !z->failed; k++) {
        zbv_backwards(z);
        zbv_forwards(z);
    }
    for (int d = 0; d < D && !z->failed; d++)
        while (zbv_w_pending(z, d))
            zbv_put_w(z, d);
    if (z->failed)
        return -1;
    int worst = zbv_worst(z, -1);
    if (z->max_approved < 0 || worst < z->max_approved) {
        struct zbv_run again;
        int again_worst = zbv_try(&again, D, N, fill_b, fill_f, z->bubble);
        if (again_worst >= 0 && again_worst < worst) {
            zbv_run_fini(z);
            *z = again;
            return again_worst;
        }
        zbv_run_fini(&again);
    }
    return worst;
}

int scheme_order_zbv(struct plan *p, const struct cost_model *cost, struct mt_err *e)
{
    (void)cost;
    const struct plan_geom *g = plan_geom(p);
    int D = g->devices, N = g->mbs, best_worst = -1;
    struct zbv_run best = {0};
    for (int v = 0; v < 4; v++) {
        struct zbv_run z;
        int worst = zbv_try(&z, D, N, v < 2, v % 2 == 0, NULL);
        if (worst >= 0 && (best_worst < 0 || worst < best_worst)) {
            if (best_worst >= 0)
                zbv_run_fini(&best);
            best = z;
            best_worst = worst;
        } else {
            zbv_run_fini(&z);
        }
    }
    if (best_worst < 0)
        return err_set(e, MT_EINVAL, "pipeline_scheme: ZB-V found no order within its memory");
    static const enum op ops[3] = {OP_FW, OP_B, OP_W};
    for (int d = 0; d < D; d++)
        for (int x = 0; x < best.len[d]; x++) {
            int code = best.order[d * 6 * N + x], k = code / N, mb = code % N;
            int cat = k / 2, part = cat == 0 ? k % 2 : 1 - k % 2;
            plan_append(p, d, (struct instr){ops[cat], mb, part, vpipe_stage(g, d, mb, part), -1,
                                             0, 0, 0});
        }
    zbv_run_fini(&best);
    return MT_OK;
}
