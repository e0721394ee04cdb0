/* sim/schemes/scheme_zbv_greedy.c: V-Half and V-Min, the controllable-memory V schedules (Qi, Wan et
 * al., "Pipeline Parallelism with Controllable Memory", NeurIPS'24, arXiv 2405.15362), as the
 * authors' greedy builder makes them (sail-sg/zero-bubble-pipeline-parallelism,
 * scheduler/zbv_greedy.py). Two stages per device in a V, like ZB-V.
 *
 * Four op kinds per device: F (part 0 forward), f (part 1 forward), B (part 1 backward, the
 * V's first), b (part 0 backward). The building block puts micro-batch m's four at fixed slots
 * 6m + offset, device i's offsets being
 *   V-Min:  i, 2D-1-i, 2D+g+i, 4D+g-1-i             (g = 2 when 3 | D, else 0)
 *   V-Half: 2i, 3D-2-i, 3D+g+2i-1, 6D+g-2-i         (g = 3 when 2 | D, else 0),
 * and a W takes each free slot while a backward's W is owed. The block's lifespan sets the
 * peak: (D+4)/3 (V-Min) and (D+2)/2 (V-Half) micro-batches' activations against 1F1B's D,
 * rounded down (the paper's Table 1; here 2 of each in chunks, F to W).
 * Then the builder squeezes the pattern twice, on a unit-slot timeline:
 *  1. with the Ws placed: from the first part-0 backward of device 0 to the last forward of
 *     device 0 (the stable phase) nothing moves; every other op, in slot order, moves to the
 *     earliest free slot after its dependencies (the op it waits for on the neighbouring device,
 *     its own previous kind, its previous micro-batch; a W its B) where the device's peak
 *     (F and f +1, W -1) stays within the pattern's; then the whole is run eagerly at unit
 *     cost, and each op takes its start there as its slot;
 *  2. the Ws dropped, once more for every op from the stable phase's end, Ws implied in every
 *     free slot, and run eagerly again;
 * last, the Ws placed in the free slots once more, those of part-1 backwards before part 0's.
 * A device runs its ops in slot order. Every D >= 1, N >= 1 has a schedule.
 * Cost O(n log n) in the ops: ops are ordered by a counting sort on the slot, each device's peak
 * is kept on a segment tree under the moves (sim/schemes/slot_peak.h), a W's backward is found
 * by bisection. No two ops of a device ever share a slot (the pattern's, the free slots' Ws, a
 * move's target is free, the eager run's one op a unit). */
#include <config.h>
#include "sim/schemes/scheme.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sim/core/vpipe.h"
#include "sim/schemes/slot_peak.h"
#include "util/err.h"
#include "util/xalloc.h"

enum { VG_KINDS = 6 }; /* F f B b, then W (of B, or of both), W of b */

/* A device's slots: slot[k][m] for kind k, micro-batch m; n[k] entries in kind k. */
struct vg_dev {
    int *slot[VG_KINDS];
    int n[VG_KINDS];
    int kinds; /* 4, 5 (one W list) or 6 (Ws of B and of b apart) */
};

static int vg_last(const struct vg_dev *s)
{
    int last = -1;
    for (int k = 0; k < s->kinds; k++)
        if (s->n[k] > 0 && s->slot[k][s->n[k] - 1] > last)
            last = s->slot[k][s->n[k] - 1];
    return last;
}

/* Ws into the free slots of the four kinds' timeline: one list, or two (B's Ws, b's Ws). */
static void vg_put_w(struct vg_dev *s, bool split)
{
    s->kinds = 4; /* the free slots of F f B b alone */
    int last = vg_last(s), owed[2] = {0, 0}, i;
    s->kinds = split ? 6 : 5;
    for (int k = 4; k < s->kinds; k++)
        s->n[k] = 0;
    signed char *kind_at = xmalloc((size_t)last + 1); /* [slot]: the kind there, -1 free */
    memset(kind_at, -1, (size_t)last + 1);
    for (int k = 0; k < 4; k++)
        for (int m = 0; m < s->n[k]; m++)
            kind_at[s->slot[k][m]] = (signed char)k;
    for (i = 0; i <= last; i++) {
        int k = kind_at[i];
        if (k >= 2)
            owed[split ? k - 2 : 0]++;
        else if (k < 0)
            for (int w = 0; w < 2; w++)
                if (owed[w]) {
                    s->slot[4 + w][s->n[4 + w]++] = i;
                    owed[w]--;
                    break;
                }
    }
    free(kind_at);
    i = last;
    for (int w = 0; w < 2; w++)
        while (owed[w] > 0) {
            s->slot[4 + w][s->n[4 + w]++] = ++i;
            owed[w]--;
        }
}

/* A device's ops on a slot timeline (sim/schemes/slot_peak.h), for its peak: F and f add one
 * chunk's activations, W frees one; without W lists, a W runs in every free slot while one is
 * owed. */
static const enum slot_peak_kind vg_slot_kind[5] = {SLOT_PEAK_FORWARD, SLOT_PEAK_FORWARD,
                                                    SLOT_PEAK_BACKWARD, SLOT_PEAK_BACKWARD,
                                                    SLOT_PEAK_W};

static struct slot_peak *vg_timeline(const struct vg_dev *s, int slots)
{
    struct slot_peak *tl = slot_peak_new(slots, s->kinds == 4);
    for (int k = 0; k < s->kinds; k++)
        for (int m = 0; m < s->n[k]; m++)
            slot_peak_put(tl, s->slot[k][m], vg_slot_kind[k]);
    slot_peak_build(tl);
    return tl;
}

/* An op by (device, kind, micro-batch) and its slot. */
struct vg_op {
    int slot, dev, kind, mb;
};

/* Every op in slot order, ties by device, kind, micro-batch: a counting sort by slot over the
 * ops listed in (device, kind, micro-batch) order, O(ops + slots). Caller frees. */
static struct vg_op *vg_ops(struct vg_dev *dev, int D, int *count)
{
    int n = 0, last = -1;
    for (int d = 0; d < D; d++) {
        for (int k = 0; k < dev[d].kinds; k++)
            n += dev[d].n[k];
        int l = vg_last(&dev[d]);
        last = l > last ? l : last;
    }
    int *start = xcalloc((size_t)last + 2, sizeof(int)); /* [slot]: where its ops begin */
    for (int d = 0; d < D; d++)
        for (int k = 0; k < dev[d].kinds; k++)
            for (int m = 0; m < dev[d].n[k]; m++)
                start[dev[d].slot[k][m] + 1]++;
    for (int t = 0; t < last + 1; t++)
        start[t + 1] += start[t];
    struct vg_op *ops = xmalloc((size_t)(n ? n : 1) * sizeof *ops);
    for (int d = 0; d < D; d++)
        for (int k = 0; k < dev[d].kinds; k++)
            for (int m = 0; m < dev[d].n[k]; m++)
                ops[start[dev[d].slot[k][m]]++] = (struct vg_op){dev[d].slot[k][m], d, k, m};
    free(start);
    *count = n;
    return ops;
}

/* The eager run at unit cost, no transfer time: each op's start becomes its slot. A forward
 * kind (F, B) waits for the device before, f and b for the device after; f, B, b for their
 * own previous kind; every op for its previous micro-batch and the device's previous op. */
static void vg_eager(struct vg_dev *dev, int D)
{
    int n;
    struct vg_op *ops = vg_ops(dev, D, &n);
    int **endt = xmalloc((size_t)D * VG_KINDS * sizeof(int *)); /* [d * VG_KINDS + k][m] */
    int *dev_end = xmalloc((size_t)D * sizeof(int));
    for (int d = 0; d < D; d++) {
        dev_end[d] = -1;
        for (int k = 0; k < dev[d].kinds; k++)
            endt[d * VG_KINDS + k] = xcalloc((size_t)(dev[d].n[k] ? dev[d].n[k] : 1), sizeof(int));
    }
#define VG_END(d, k, m) endt[(d) * VG_KINDS + (k)][m]
    for (int x = 0; x < n; x++) {
        int d = ops[x].dev, k = ops[x].kind, m = ops[x].mb, ready = 0;
        if ((k == 0 || k == 2) && d > 0 && VG_END(d - 1, k, m) > ready)
            ready = VG_END(d - 1, k, m);
        if ((k == 1 || k == 3) && d + 1 < D && VG_END(d + 1, k, m) > ready)
            ready = VG_END(d + 1, k, m);
        if (k > 0 && k < 4 && VG_END(d, k - 1, m) > ready)
            ready = VG_END(d, k - 1, m);
        if (m > 0 && VG_END(d, k, m - 1) > ready)
            ready = VG_END(d, k, m - 1);
        if (dev_end[d] > ready)
            ready = dev_end[d];
        VG_END(d, k, m) = dev_end[d] = ready + 1;
    }
    for (int d = 0; d < D; d++)
        for (int k = 0; k < dev[d].kinds; k++) {
            for (int m = 0; m < dev[d].n[k]; m++)
                dev[d].slot[k][m] = VG_END(d, k, m) - 1;
            free(endt[d * VG_KINDS + k]);
        }
#undef VG_END
    free(endt);
    free(dev_end);
    free(ops);
}

/* The m-th backward (B or b) of a device in slot order: what the m-th W of one list waits for.
 * Each kind's slots rise with the micro-batch and no two share a slot, so the count taken from
 * B's list is found by bisection: O(log N). */
static int vg_nth_backward(const struct vg_dev *s, int m)
{
    const int *x = s->slot[2], *y = s->slot[3];
    int nx = s->n[2], ny = s->n[3], want = m + 1;
    int lo = want - ny > 0 ? want - ny : 0, hi = want < nx ? want : nx;
    while (lo < hi) { /* the least i (from B, want - i from b) whose next B follows b's last */
        int i = lo + (hi - lo) / 2, j = want - i;
        if (j > 0 && i < nx && x[i] < y[j - 1])
            lo = i + 1;
        else
            hi = i;
    }
    int j = want - lo;
    int from_x = lo > 0 ? x[lo - 1] : -1, from_y = j > 0 ? y[j - 1] : -1;
    return from_x > from_y ? from_x : from_y;
}

/* The first slot in [from, end) that no placed op holds, or end. */
static int vg_free_from(const uint64_t *busy, int from, int end)
{
    int t = from;
    while (t < end && busy[t / 64] == UINT64_MAX)
        t = (t / 64 + 1) * 64;
    while (t < end && (busy[t / 64] >> (t % 64) & 1))
        t++;
    return t < end ? t : end;
}

/* Where an op of kind k at slot at moves: the earliest free slot after `after` where the
 * device's peak stays within keep (it is within keep before), else at. With W lists, moving a
 * backward or a W earlier raises no running sum, and moving a forward from at to t raises
 * those of [t, at) by one: the first free slot past the last one before at whose sum reaches
 * keep. With implied Ws, each free slot is tried in turn. The timeline follows the move. */
static int vg_place(struct slot_peak *tl, bool implied_w, const uint64_t *busy, int k, int after,
                    int at, int keep)
{
    int from = after + 1;
    if (!implied_w && vg_slot_kind[k] == SLOT_PEAK_FORWARD) {
        int reach = slot_peak_last_reaching(tl, at, keep);
        from = reach + 1 > from ? reach + 1 : from;
    }
    int t = vg_free_from(busy, from, at);
    if (t == at)
        return at;
    slot_peak_set(tl, at, SLOT_PEAK_FREE);
    if (!implied_w) {
        slot_peak_set(tl, t, vg_slot_kind[k]);
        return t;
    }
    for (; t < at; t = vg_free_from(busy, t + 1, at)) {
        slot_peak_set(tl, t, vg_slot_kind[k]);
        if (slot_peak_get(tl) <= keep)
            return t;
        slot_peak_set(tl, t, SLOT_PEAK_FREE);
    }
    slot_peak_set(tl, at, vg_slot_kind[k]);
    return at;
}

/* One squeeze (see the head comment), then the eager run. */
static void vg_squeeze(struct vg_dev *dev, int D, int N, bool with_w)
{
    if (with_w)
        for (int d = 0; d < D; d++)
            vg_put_w(&dev[d], false);
    struct slot_peak **tl = xmalloc((size_t)D * sizeof *tl);
    uint64_t **busy = xmalloc((size_t)D * sizeof *busy);
    int keep = 0;
    for (int d = 0; d < D; d++) {
        int slots = vg_last(&dev[d]) + 2;
        tl[d] = vg_timeline(&dev[d], slots);
        busy[d] = xcalloc((size_t)slots / 64 + 1, sizeof(uint64_t));
        int pk = slot_peak_get(tl[d]);
        keep = pk > keep ? pk : keep;
    }
    int n;
    struct vg_op *ops = vg_ops(dev, D, &n);
    int phase = 0;
    for (int x = 0; x < n; x++) {
        int d = ops[x].dev, k = ops[x].kind, m = ops[x].mb, at = ops[x].slot;
        int *slot = &dev[d].slot[k][m];
        if (k == 3 && d == 0 && phase == 0)
            phase = 1;
        if (phase == 1 || (phase == 0 && !with_w)) {
            if (phase == 1 && k == 0 && m == N - 1)
                phase = 2;
        } else {
            int after = -1;
            if ((k == 0 || k == 2) && d > 0)
                after = dev[d - 1].slot[k][m] > after ? dev[d - 1].slot[k][m] : after;
            if ((k == 1 || k == 3) && d + 1 < D)
                after = dev[d + 1].slot[k][m] > after ? dev[d + 1].slot[k][m] : after;
            if (k > 0 && k < 4)
                after = dev[d].slot[k - 1][m] > after ? dev[d].slot[k - 1][m] : after;
            if (k == 4) {
                int b = vg_nth_backward(&dev[d], m);
                after = b > after ? b : after;
            }
            if (m > 0)
                after = dev[d].slot[k][m - 1] > after ? dev[d].slot[k][m - 1] : after;
            *slot = vg_place(tl[d], dev[d].kinds == 4, busy[d], k, after, at, keep);
        }
        busy[d][*slot / 64] |= (uint64_t)1 << (*slot % 64);
    }
    for (int d = 0; d < D; d++) {
        slot_peak_free(tl[d]);
        free(busy[d]);
    }
    free(tl);
    free(busy);
    free(ops);
    if (!with_w)
        for (int d = 0; d < D; d++)
            vg_put_w(&dev[d], false);
    vg_eager(dev, D);
}

static int vg_order(struct plan *p, bool v_min)
{
    const struct plan_geom *g = plan_geom(p);
    int D = g->devices, N = g->mbs;
    struct vg_dev *dev = xcalloc((size_t)D, sizeof *dev);
    for (int d = 0; d < D; d++) {
        int off[4];
        if (v_min) {
            int gap = D % 3 == 0 ? 2 : 0;
            off[0] = d, off[1] = 2 * D - d - 1, off[2] = 2 * D + gap + d;
            off[3] = 4 * D + gap - d - 1;
        } else {
            int gap = D % 2 == 0 ? 3 : 0;
            off[0] = 2 * d, off[1] = 3 * D - d - 2, off[2] = 3 * D + gap + 2 * d - 1;
            off[3] = 6 * D + gap - d - 2;
        }
        dev[d].kinds = 4;
        for (int k = 0; k < VG_KINDS; k++)
            dev[d].slot[k] = xmalloc((size_t)2 * N * sizeof(int));
        for (int k = 0; k < 4; k++) {
            dev[d].n[k] = N;
            for (int m = 0; m < N; m++)
                dev[d].slot[k][m] = off[k] + 6 * m;
        }
    }
    vg_squeeze(dev, D, N, true);
    for (int d = 0; d < D; d++)
        dev[d].kinds = 4;
    vg_squeeze(dev, D, N, false);
    int n;
    for (int d = 0; d < D; d++)
        vg_put_w(&dev[d], true);
    struct vg_op *ops = vg_ops(dev, D, &n);
    /* kind -> (op, part): F f B b W(B) W(b); B is part 1's backward, b part 0's */
    static const enum op kind_op[VG_KINDS] = {OP_FW, OP_FW, OP_B, OP_B, OP_W, OP_W};
    static const int kind_part[VG_KINDS] = {0, 1, 1, 0, 1, 0};
    for (int x = 0; x < n; x++) {
        int d = ops[x].dev, k = ops[x].kind, m = ops[x].mb;
        plan_append(p, d, (struct instr){kind_op[k], m, kind_part[k],
                                         vpipe_stage(g, d, m, kind_part[k]), -1, 0, 0, 0});
    }
    free(ops);
    for (int d = 0; d < D; d++)
        for (int k = 0; k < VG_KINDS; k++)
            free(dev[d].slot[k]);
    free(dev);
    return MT_OK;
}

int scheme_order_vhalf(struct plan *p, const struct cost_model *cost, struct mt_err *e)
{
    (void)cost;
    (void)e;
    return vg_order(p, false);
}

int scheme_order_vmin(struct plan *p, const struct cost_model *cost, struct mt_err *e)
{
    (void)cost;
    (void)e;
    return vg_order(p, true);
}
