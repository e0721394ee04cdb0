/* sim/search/search_periodic.c: periodic starts for the search (sim/search/search_internal.h),
 * for placements of one stage per device (1F1B, GPipe) under a cap of a few activations.
 *
 * Why: at 1.05 M_θ the memory-time bound (sim/core/bound.c) is tight on one device, and only
 * a schedule of one shape reaches it there: the device holds an activation at every moment of
 * its window and never idles, so each kept forward's wait for its gradient (its chain L minus
 * F and B) is filled with checkpointed forwards, and each checkpointed micro-batch runs its
 * recompute right before its backward, whose gradient then arrives. The devices before it
 * have slack and must run ahead: all their forwards early, checkpointed. That is a period of
 * 1 + (L - F - B) / F micro-batches on the binding device and on those after it, and the whole
 * step before it (or as many checkpoints as the cap holds beside the kept activations); the local search's one-device moves and the list schedules' earliest-start
 * rule do not reach it from their starts (1F1B at 1.05 M_θ: 68t and 80t at 4 x 16 and 8 x 16
 * against 66t and 78t, the bound). Each device's order, block by block of its period: `keep`
 * forwards kept, the rest of the block's forwards checkpointed, the kept ones' backwards, then
 * each checkpointed one's recompute and backward. */
#include <config.h>
#include "sim/search/search_internal.h"

#include <math.h>
#include <stdlib.h>

#include "util/xalloc.h"

bool search_periodic_applies(const struct search_ctx *c)
{
    if (c->geom.stages != c->D || !(c->cap > 0))
        return false;
    /* device d holds stage d of every micro-batch (Chimera's second pipeline runs the other
     * way) */
    for (int key = 0; key < c->keys; key++)
        if (c->split[key] || c->op[SEARCH_OP(key, SK_F)].dev != key % c->geom.stages)
            return false;
    return true;
}

/* The chain a kept forward of micro-batch 0 on stage s holds its activations over: its
 * forward and those after it, their backwards, the transfers between. */
static double per_hold(const struct search_ctx *c, int s)
{
    int S = c->geom.stages;
    double L = 0;
    for (int t = s; t < S; t++) {
        const struct search_op *f = &c->op[SEARCH_OP(t, SK_F)];
        L += f->dur + (t > s ? f->lat : 0);
    }
    for (int t = S - 1; t >= s; t--) {
        const struct search_op *b = &c->op[SEARCH_OP(t, SK_B)];
        L += b->dur + (t < S - 1 ? b->lat : 0);
    }
    return L;
}

/* The period device d wants: from its kept forwards' wait at and after the binding stage, the
 * whole step before it (or as many checkpoints as the cap holds beside the kept activations). */
static int per_want(const struct search_ctx *c, int d, int binding, int keep)
{
    int st = d, N = c->geom.mbs, period = N;
    const struct stage_cost *sc = &c->cost.stage[st];
    double room = c->cap - c->stat[d] - keep * sc->act; /* for checkpoints at once */
    if (sc->ckpt > 0 && room / sc->ckpt < N)
        period = keep + (room > 0 ? (int)floor(room / sc->ckpt) : 0);
    if (st >= binding) {
        const struct search_op *f = &c->op[SEARCH_OP(st, SK_F)];
        const struct search_op *b = &c->op[SEARCH_OP(st, SK_B)];
        double idle = per_hold(c, st) - f->dur - b->dur;
        period = keep + (f->dur > 0 ? (int)floor(idle / f->dur + 1e-9) : N);
    }
    return period < keep ? keep : period;
}

void search_periodic(const struct search_ctx *c, int binding, int keep, struct search_sched *s)
{
    int S = c->geom.stages, N = c->geom.mbs, D = c->D;
    /* Each device's period divides the one of the device before it: a block's backwards then
     * wait only for forwards the device before has run (7 then 4 locks: the 4-block's
     * forwards wait for the 7-block's, whose backward waits for the 4-block's). Devices are
     * stages here (search_periodic_applies), device d on stage d. */
    int *per = xmalloc((size_t)D * sizeof(int));
    per[binding] = per_want(c, binding, binding, keep);
    for (int d = binding + 1; d < D; d++) {
        int want = per_want(c, d, binding, keep), p = per[d - 1];
        while (p > want || per[d - 1] % p != 0)
            p--;
        per[d] = p < 1 ? 1 : p;
    }
    for (int d = binding - 1; d >= 0; d--) {
        int want = per_want(c, d, binding, keep), q = per[d + 1];
        per[d] = want < q ? q : want - want % q;
    }
    for (int d = 0; d < D; d++) {
        int st = d, period = per[d];
        int *ord = s->ord + (size_t)d * c->stride, n = 0;
        for (int k0 = 0; k0 < N; k0 += period) {
            int end = k0 + period < N ? k0 + period : N;
            int kept = k0 + keep < end ? k0 + keep : end;
            for (int k = k0; k < end; k++) {
                s->ck[k * S + st] = k >= kept;
                ord[n++] = SEARCH_OP(k * S + st, SK_F);
            }
            for (int k = k0; k < kept; k++)
                ord[n++] = SEARCH_OP(k * S + st, SK_B);
            for (int k = kept; k < end; k++) {
                ord[n++] = SEARCH_OP(k * S + st, SK_RC);
                ord[n++] = SEARCH_OP(k * S + st, SK_B);
            }
        }
        s->len[d] = n;
    }
    free(per);
}
