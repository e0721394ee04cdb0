/* sim/schemes/scheme_zb.c: the zero-bubble family on one stage per device (Qi et al., "Zero Bubble
 * Pipeline Parallelism", ICLR'24, arXiv 2401.10241 §3), ordered as the authors' code orders
 * them: the greedy of their automatic scheduler (sail-sg/zero-bubble-pipeline-parallelism,
 * scheduler/zb.py, its "manual order") under a memory limit of k x pp micro-batches' forward
 * activations: k = 1 is ZB-H1 (1F1B's memory), k = 2 ZB-H2 (the authors'
 * --zero-bubble-max-pending-backward of pp and 2 pp). The backward is split: B (input
 * gradient) carries the gradient to the previous stage; W (weight gradient) fills bubbles.
 *
 * The greedy runs micro-batch by micro-batch on a unit-slot timeline (T_F = T_B = T_W = 1,
 * no transfer time), so an order is fixed by (D, N) like a handcrafted schedule:
 *  - micro-batch 0: a forward on every stage, then, walking back from the last stage, as
 *    many extra warm-up forwards on each as fit its memory and end before (or, in one variant,
 *    do not stretch past) the gradient reaching it; a stage never warms up more than the one
 *    before it (unless it would run out of forwards); then B of micro-batch 0 on every stage
 *    from the last back;
 *  - each later micro-batch i: the next forward on every stage that has one left (a stage
 *    whose next stage is 2 forwards behind may hold it back, "prioritise B", when its device
 *    is already ahead or the wait costs no more bubble than the worst stage has), no stage
 *    forwarding unless the one after it does; then B(i) from the last stage back;
 *  - before each F and B: the oldest pending Ws while the memory limit needs room, then
 *    while a W ends before the input arrives, then one more when waiting would add more bubble
 *    than the worst stage's (or always, in one variant); stage 0 runs all its pending Ws
 *    before its last Bs once its forwards are done; at the end every stage runs the rest.
 * Memory in the greedy: F adds M_F, B frees all but M_W, W frees M_W, with M_W / M_F = 3 / 8
 * (the authors' runtime estimate 32h / (34h + 5as) is 0.43 for a = 32 heads and s = h / 4;
 * every ratio below 0.6 gives the same orders on the shapes we checked). Of the
 * eight variants (warm-up stretching, prioritise B, always fill) the one with the shortest
 * longest stage wins, the first on a tie, as in the authors' code.
 *
 * With T_F = T_B = T_W: ZB-H1 steps N(T_F+T_B+T_W) + (D-1)(T_F+T_B-T_W) for N >= D, and ZB-H2
 * runs every device without a gap from its first forward to its last W once N >= 2D - 1. */
#include <config.h>
#include "sim/schemes/scheme.h"

#include <stdlib.h>

#include "sim/core/vpipe.h"
#include "util/err.h"
#include "util/xalloc.h"

enum { ZB_F, ZB_B, ZB_W };

/* The greedy's units: slot costs and memory (see the head comment). */
#define ZB_MEM_F 8
#define ZB_MEM_W (-3)
#define ZB_MEM_B (-ZB_MEM_F - ZB_MEM_W)

static const int zb_mem[3] = {ZB_MEM_F, ZB_MEM_B, ZB_MEM_W};

/* One run of the greedy on D stages, N micro-batches. */
struct zb_run {
    int D, N, max_mem;
    bool bubble_first_b, prioritize_b, always_fill;
    int *count;        /* [D][3]: F, B, W put so far on each stage */
    int *end, *mem;    /* per stage: when its device is free; memory held */
    int *bubble;       /* per stage: idle slots after its first forward */
    int *t;            /* [3][D][N]: the slot at which an op ends (0 until put) */
    int *order;        /* [D][3N]: the ops in put order, op * N + mb */
    int *len;          /* per stage: ops put */
    bool out_of_memory;
};

#define ZB_T(z, k, j, mb) ((z)->t[((k) * (z)->D + (j)) * (z)->N + (mb)])
#define ZB_CNT(z, j, k) ((z)->count[(j) * 3 + (k)])

static void zb_put(struct zb_run *z, int j, int k)
{
    int mb = ZB_CNT(z, j, k);
    int done = z->end[j] + 1, no_wait = done;
    if (k == ZB_F && j > 0 && ZB_T(z, ZB_F, j - 1, mb) + 1 > done)
        done = ZB_T(z, ZB_F, j - 1, mb) + 1;
    if (k == ZB_B && j < z->D - 1 && ZB_T(z, ZB_B, j + 1, mb) + 1 > done)
        done = ZB_T(z, ZB_B, j + 1, mb) + 1;
    if (ZB_CNT(z, j, ZB_F) > 0)
        z->bubble[j] += done - no_wait;
    z->end[j] = done;
    ZB_T(z, k, j, mb) = done;
    z->mem[j] += zb_mem[k];
    ZB_CNT(z, j, k)++;
    z->order[j * 3 * z->N + z->len[j]++] = k * z->N + mb;
}

static int zb_worst_bubble(const struct zb_run *z)
{
    int worst = 0;
    for (int j = 0; j < z->D; j++)
        worst = z->bubble[j] > worst ? z->bubble[j] : worst;
    return worst;
}

/* Room for an op adding add: the oldest pending Ws go first. False when none is left. */
static bool zb_make_room(struct zb_run *z, int j, int add)
{
    while (z->mem[j] + add > z->max_mem) {
        if (ZB_CNT(z, j, ZB_W) >= ZB_CNT(z, j, ZB_B))
            return false;
        zb_put(z, j, ZB_W);
    }
    return true;
}

/* Ws that fill the wait for an input arriving at slot ready (a W ends by then), then one more
 * when the wait would add more bubble than the worst stage has (always, in one variant). */
static void zb_fill_wait(struct zb_run *z, int j, int ready)
{
    while (ZB_CNT(z, j, ZB_W) < ZB_CNT(z, j, ZB_B) && z->end[j] + 1 <= ready)
        zb_put(z, j, ZB_W);
    if (ZB_CNT(z, j, ZB_W) < ZB_CNT(z, j, ZB_B) && z->end[j] < ready &&
        (ready - z->end[j] > zb_worst_bubble(z) - z->bubble[j] || z->always_fill))
        zb_put(z, j, ZB_W);
}

/* Micro-batch 0: a forward everywhere, the warm-up forwards, B(0) from the last stage back. */
static void zb_first(struct zb_run *z, int *need)
{
    int D = z->D, N = z->N;
    for (int j = 0; j < D; j++) {
        zb_put(z, j, ZB_F);
        need[j] = 0;
    }
    int grad_at = 0; /* when B(0) could end on stage j + 1 */
    for (int j = D - 1; j >= 0; j--) {
        if (j == D - 1) {
            grad_at = ZB_T(z, ZB_F, j, 0) + 1;
            continue;
        }
        int mem = z->mem[j], busy = z->end[j];
        while (ZB_CNT(z, j, ZB_F) + need[j] < N && mem + ZB_MEM_F <= z->max_mem) {
            if (z->bubble_first_b ? busy + 1 > grad_at : busy >= grad_at)
                break;
            mem += ZB_MEM_F;
            busy += 1;
            need[j]++;
        }
        grad_at = (busy > grad_at ? busy : grad_at) + 1;
    }
    for (int j = 1; j < D; j++)
        while (need[j] > 0 && need[j] >= need[j - 1] && ZB_CNT(z, j, ZB_F) + need[j] < N)
            need[j]--;
    for (int j = 0; j < D; j++)
        for (int k = 0; k < need[j]; k++)
            zb_put(z, j, ZB_F);
    for (int j = D - 1; j >= 0; j--)
        zb_put(z, j, ZB_B);
}

/* Whether stage j takes its next forward in this round (before the min with the next stage). */
static bool zb_wants_forward(const struct zb_run *z, int j)
{
    if (ZB_CNT(z, j, ZB_F) >= z->N)
        return false;
    if (!z->prioritize_b || j + 1 >= z->D || ZB_CNT(z, j, ZB_F) < ZB_CNT(z, j + 1, ZB_F) + 2)
        return true;
    int next_ready = z->end[j + 1] + 2; /* the next stage's F and B */
    if (z->end[j] >= next_ready)
        return false;
    int mem = z->mem[j] + ZB_MEM_F, w_slots = 0;
    while (mem > z->max_mem && ZB_CNT(z, j, ZB_W) + w_slots < ZB_CNT(z, j, ZB_B)) {
        w_slots++;
        mem += ZB_MEM_W;
    }
    if (z->end[j] + 1 + w_slots <= next_ready)
        return true;
    return next_ready - z->end[j] > zb_worst_bubble(z) - z->bubble[j];
}

static bool zb_round(struct zb_run *z, int i, int *need)
{
    int D = z->D, N = z->N;
    for (int j = 0; j < D; j++)
        need[j] = zb_wants_forward(z, j);
    for (int j = D - 2; j >= 0; j--)
        need[j] = need[j] < need[j + 1] ? need[j] : need[j + 1];
    for (int j = 0; j < D; j++) {
        if (!need[j])
            continue;
        if (!zb_make_room(z, j, ZB_MEM_F))
            return false;
        if (j > 0)
            zb_fill_wait(z, j, ZB_T(z, ZB_F, j - 1, ZB_CNT(z, j, ZB_F)));
        zb_put(z, j, ZB_F);
    }
    for (int j = D - 1; j >= 0; j--) {
        if (!zb_make_room(z, j, ZB_MEM_B))
            return false;
        if (j + 1 < D)
            zb_fill_wait(z, j, ZB_T(z, ZB_B, j + 1, i));
        if (j == 0 && ZB_CNT(z, j, ZB_F) == N)
            while (ZB_CNT(z, j, ZB_W) < ZB_CNT(z, j, ZB_B))
                zb_put(z, j, ZB_W);
        zb_put(z, j, ZB_B);
    }
    return true;
}

/* Runs the greedy; returns its longest stage (first forward to last W) or -1 out of memory. */
static int zb_greedy(struct zb_run *z)
{
    int D = z->D, N = z->N;
    int *need = xmalloc((size_t)D * sizeof(int));
    bool ok = true;
    for (int i = 0; ok && i < N; i++) {
        if (i == 0)
            zb_first(z, need);
        else
            ok = zb_round(z, i, need);
    }
    free(need);
    if (!ok)
        return -1;
    int longest = 0;
    for (int j = 0; j < D; j++) {
        while (ZB_CNT(z, j, ZB_W) < N)
            zb_put(z, j, ZB_W);
        int span = ZB_T(z, ZB_W, j, N - 1) - ZB_T(z, ZB_F, j, 0) + 1;
        longest = span > longest ? span : longest;
    }
    return longest;
}

static void zb_run_init(struct zb_run *z, int D, int N, int k, int variant)
{
    *z = (struct zb_run){.D = D, .N = N, .max_mem = k * D * ZB_MEM_F};
    z->bubble_first_b = (variant & 4) == 0;
    z->prioritize_b = (variant & 2) == 0;
    z->always_fill = (variant & 1) == 0;
    z->count = xcalloc((size_t)D * 3, sizeof(int));
    z->end = xcalloc((size_t)D, sizeof(int));
    z->mem = xcalloc((size_t)D, sizeof(int));
    z->bubble = xcalloc((size_t)D, sizeof(int));
    z->t = xcalloc((size_t)3 * D * N, sizeof(int));
    z->order = xmalloc((size_t)3 * D * N * sizeof(int));
    z->len = xcalloc((size_t)D, sizeof(int));
}

static void zb_run_fini(struct zb_run *z)
{
    free(z->count);
    free(z->end);
    free(z->mem);
    free(z->bubble);
    free(z->t);
    free(z->order);
    free(z->len);
}

/* The best of the eight variants, appended to p. */
static int zb_order(struct plan *p, int k, const char *name, struct mt_err *e)
{
    const struct plan_geom *g = plan_geom(p);
    int D = g->devices, N = g->mbs;
    struct zb_run best = {0};
    int best_span = -1;
    for (int v = 0; v < 8; v++) {
        struct zb_run z;
        zb_run_init(&z, D, N, k, v);
        int span = zb_greedy(&z);
        if (span >= 0 && (best_span < 0 || span < best_span)) {
            if (best_span >= 0)
                zb_run_fini(&best);
            best = z;
            best_span = span;
        } else {
            zb_run_fini(&z);
        }
    }
    if (best_span < 0)
        return err_set(e, MT_EINVAL, "pipeline_scheme: %s found no order within its memory", name);
    static const enum op ops[3] = {OP_FW, OP_B, OP_W};
    for (int j = 0; j < D; j++)
        for (int x = 0; x < best.len[j]; x++) {
            int code = best.order[j * 3 * N + x], mb = code % N;
            plan_append(p, j, (struct instr){ops[code / N], mb, 0, vpipe_stage(g, j, mb, 0), -1,
                                             0, 0, 0});
        }
    zb_run_fini(&best);
    return MT_OK;
}

int scheme_order_zbh1(struct plan *p, const struct cost_model *cost, struct mt_err *e)
{
    (void)cost;
    return zb_order(p, 1, "ZB-H1", e);
}

int scheme_order_zbh2(struct plan *p, const struct cost_model *cost, struct mt_err *e)
{
    (void)cost;
    return zb_order(p, 2, "ZB-H2", e);
}
