/* sim/search/search_list.c: memory-aware list scheduling, the search's constructive starts
 * (sim/search/search.h). The schedule is built op by op: at each step, of the ops that may come next
 * (on every lane, a stage on a device, the next forward, the recompute of the next backward,
 * the next backward, the next W; micro-batches in order, as every channel's messages keep
 * theirs), the one that can start earliest runs, ties going by kind (backward first) and
 * micro-batch. A forward runs only while its lane has fewer than `limit` forwards in flight
 * (the warm-up of 1F1B: the stages after it, plus `extra`) and only when memory allows: it keeps
 * its activations when they fit beside what the device holds plus the largest recompute still
 * to come, else it is checkpointed (the whole stage) if that fits, else it waits; either way the
 * device must still be able to finish its oldest micro-batch in flight (its forwards left there
 * as checkpoints, then its recomputes, backwards and Ws: on a V, ZB-V and DualPipeV, device 0
 * holds stages 0 and 2D - 1 of it). A recompute waits until its backward's gradient is on its
 * way, so it fills that wait rather than holding the activations earlier. Every step walks the
 * memory model op by op (mem_step_next), so a schedule it returns fits the cap; it gives up when
 * nothing can run (memory locked). */
#include <config.h>
#include "sim/search/search_internal.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sim/core/memory.h"
#include "util/xalloc.h"

struct lst_lane {
    int dev, n, nf, nb, nw, stage;
    int *keys;
    int limit;      /* forwards in flight while nf < wave */
    int limit2;     /* ... from then on (a second wave holds fewer) */
    int wave;
};

struct lst_dev {
    double free_at;
    struct mem_walk w;
    double pending;
};

/* Walks op's instructions through dv's memory (a copy when trying). */
static double lst_mem(const struct search_ctx *c, struct lst_dev *dv, int op, bool ck)
{
    return search_mem_walk_op(c, op, ck, &dv->w, &dv->pending);
}

/* The lists search_list works on. */
struct lst {
    const struct search_ctx *c;
    struct search_sched *s;
    bool rc_first, rc_early;
    int n_lanes;
    struct lst_lane *lane;
    int *lane_of;          /* [keys] */
    int *dev_lanes, *dev_off; /* lanes of each device: dev_lanes[dev_off[d] .. dev_off[d+1]) */
    struct lst_dev *dev;
    double *end;
    unsigned char *done;
    /* each lane's best next op: the earliest start, backward first, that fits */
    int *best_op;          /* -1 none */
    unsigned char *best_ck;
    double *best_est;
    int *best_rank;
    /* each channel's messages (a -> b: ch = a * D + b, from chan_msg[chan_off[ch + 1]]) in the
     * order they were sent, and how many were received: a receive takes the oldest, as NCCL
     * matches them */
    int *chan_off, *chan_sent, *chan_head, *chan_msg;
    /* the stages of each micro-batch on each device, in order: mb_stage[mb_off[mb * D + d]
     * .. mb_off[mb * D + d + 1]) (lst_completes looked at every stage) */
    int *mb_off, *mb_stage;
};

/* Whether a gradient (a backward's message) waits on the channel behind op's input. */
static bool lst_gradient_behind(const struct lst *L, int op)
{
    const struct search_op *o = &L->c->op[op];
    int ch = o->in_dev * L->c->D + o->dev;
    for (int k = L->chan_head[ch] + 1; k < L->chan_sent[ch]; k++)
        if (SEARCH_KIND(L->chan_msg[L->chan_off[ch + 1] + k]) == SK_B)
            return true;
    return false;
}

/* Whether op, which receives from another device, would take its channel's oldest message. */
static bool lst_in_order(const struct lst *L, int op)
{
    const struct search_op *o = &L->c->op[op];
    if (o->in_dev < 0)
        return true;
    int ch = o->in_dev * L->c->D + o->dev;
    return L->chan_head[ch] < L->chan_sent[ch] &&
           L->chan_msg[L->chan_off[ch + 1] + L->chan_head[ch]] == o->pred;
}

static inline double lst_max(double a, double b)
{
    return a > b ? a : b;
}

/* Whether device d, its memory dv after forward `placed` (checkpointed: placed_ck), can still
 * finish its oldest micro-batch in flight: that micro-batch's forwards left on d as checkpoints,
 * then its recomputes, backwards and Ws, from the last stage down. Without this a V-shaped
 * placement (ZB-V, DualPipeV: stages 0 and 2D - 1 on device 0) or a split backward (B takes
 * what its W keeps) walks into a state where nothing fits. */
static bool lst_completes(const struct lst *L, int d, const struct lst_dev *dv, int placed,
                          bool placed_ck)
{
    const struct search_ctx *c = L->c;
    int S = c->geom.stages, mb = c->op[placed].mb;
    for (int j = L->dev_off[d]; j < L->dev_off[d + 1]; j++) {
        const struct lst_lane *m = &L->lane[L->dev_lanes[j]];
        if (m->nb < m->nf && c->op[SEARCH_OP(m->keys[m->nb], SK_F)].mb < mb)
            mb = c->op[SEARCH_OP(m->keys[m->nb], SK_F)].mb;
    }
    struct lst_dev w = *dv;
    double pk = 0;
    const int *on_d = L->mb_stage + L->mb_off[mb * c->D + d];
    int n_on_d = L->mb_off[mb * c->D + d + 1] - L->mb_off[mb * c->D + d];
    for (int i = 0; i < n_on_d; i++) {
        int f = SEARCH_OP(mb * S + on_d[i], SK_F);
        if (!L->done[f] && f != placed)
            pk = lst_mem(c, &w, f, true);
    }
    for (int i = n_on_d - 1; i >= 0; i--) {
        int key = mb * S + on_d[i], f = SEARCH_OP(key, SK_F), b = SEARCH_OP(key, SK_B);
        if (L->done[b])
            continue;
        bool ck = f == placed ? placed_ck : L->done[f] ? L->s->ck[key] != 0 : true;
        if (ck && !L->done[SEARCH_OP(key, SK_RC)])
            pk = lst_mem(c, &w, SEARCH_OP(key, SK_RC), false);
        pk = lst_mem(c, &w, b, false);
        if (c->split[key])
            pk = lst_mem(c, &w, SEARCH_OP(key, SK_W), false);
    }
    return search_fits(c, pk);
}

/* The lane's best op now (its next backward or its recompute, its next forward, its next W). */
static void lst_lane_eval(struct lst *L, int l)
{
    const struct search_ctx *c = L->c;
    struct lst_lane *ln = &L->lane[l];
    struct lst_dev *dv = &L->dev[ln->dev];
    int ops[3], k = 0;
    L->best_op[l] = -1;
    if (ln->nb < ln->nf) {
        /* a recompute once its backward's gradient is on its way (placed), to fill the wait
         * for it: one run earlier holds the activations for nothing, and on a V (stages 0 and
         * 2D - 1 on one device) may lock the device's memory */
        int key = ln->keys[ln->nb], b = SEARCH_OP(key, SK_B);
        if (!L->s->ck[key] || L->done[SEARCH_OP(key, SK_RC)])
            ops[k++] = b;
        else if (L->rc_early || L->done[c->op[b].pred])
            ops[k++] = SEARCH_OP(key, SK_RC);
    }
    /* a forward whose input is its channel's oldest message, with a gradient behind it (which
     * may be what frees the lane), is let past the lane's limit */
    int f = ln->nf < ln->n ? SEARCH_OP(ln->keys[ln->nf], SK_F) : -1;
    if (f >= 0 && (ln->nf - ln->nb < (ln->nf < ln->wave ? ln->limit : ln->limit2) ||
                   (c->op[f].in_dev >= 0 && L->done[c->op[f].pred] && lst_in_order(L, f) &&
                    lst_gradient_behind(L, f))))
        ops[k++] = f;
    /* the keys before the lane's first split one need no W: skip them for good (a scan from
     * the last W placed made the list schedule quadratic where no backward is split) */
    while (ln->nw < ln->nb && !c->split[ln->keys[ln->nw]])
        ln->nw++;
    int w = search_next_w(c, ln->keys, ln->nw, ln->nb);
    if (w >= 0)
        ops[k++] = w;
    for (int i = 0; i < k; i++) {
        int op = ops[i], kind = SEARCH_KIND(op);
        const struct search_op *o = &c->op[op];
        if (o->pred >= 0 && (!L->done[o->pred] || !lst_in_order(L, op)))
            continue;
        double est = dv->free_at;
        if (o->pred >= 0)
            est = lst_max(est, L->end[o->pred] + o->lat);
        static const int rank_b[SK__COUNT] = {2, 1, 0, 3}, rank_rc[SK__COUNT] = {1, 0, 0, 3};
        int rank = (L->rc_first ? rank_rc[kind] : rank_b[kind]) * (1 << 20) + o->mb;
        if (L->best_op[l] >= 0 &&
            (est > L->best_est[l] || (est == L->best_est[l] && rank >= L->best_rank[l])))
            continue;
        bool ck = false;
        struct lst_dev t = *dv;
        double pk = lst_mem(c, &t, op, false);
        if (kind == SK_F) {
            /* keep the activations only with room left for the largest recompute to come on
             * this device */
            double room = 0;
            for (int j = L->dev_off[ln->dev]; j < L->dev_off[ln->dev + 1]; j++) {
                const struct lst_lane *m = &L->lane[L->dev_lanes[j]];
                if (m->nb < m->nf) {
                    const struct stage_cost *sc = &c->cost.stage[m->stage];
                    room = lst_max(room, mem_ckpt_saves(sc, 0));
                }
            }
            if (!search_fits(c, pk + room) || !lst_completes(L, ln->dev, &t, op, false)) {
                t = *dv;
                pk = lst_mem(c, &t, op, true);
                ck = true;
                if (!lst_completes(L, ln->dev, &t, op, true))
                    continue;
            }
        }
        if (!search_fits(c, pk))
            continue;
        L->best_op[l] = op;
        L->best_ck[l] = ck;
        L->best_est[l] = est;
        L->best_rank[l] = rank;
    }
}

bool search_list(const struct search_ctx *c, int extra, unsigned flags, unsigned seed,
                 struct search_sched *s)
{
    bool rc_first = flags & SEARCH_LIST_RC_FIRST;
    uint64_t rng = 0x9E3779B97F4A7C15ull * (seed + 1);
    const struct plan_geom *g = &c->geom;
    struct lst L = {.c = c, .s = s, .rc_first = rc_first,
                    .rc_early = (flags & SEARCH_LIST_RC_EARLY) != 0};
    int lanes_max = g->stages * c->D;
    int *lane_id = xmalloc((size_t)lanes_max * sizeof(int));
    for (int i = 0; i < lanes_max; i++)
        lane_id[i] = -1;
    L.lane = xcalloc((size_t)lanes_max, sizeof *L.lane);
    L.lane_of = xmalloc(((size_t)c->keys + 1) * sizeof(int));
    for (int key = 0; key < c->keys; key++) {
        const struct search_op *f = &c->op[SEARCH_OP(key, SK_F)];
        int id = f->stage * c->D + f->dev;
        if (lane_id[id] < 0) {
            lane_id[id] = L.n_lanes++;
            L.lane[lane_id[id]].dev = f->dev;
            L.lane[lane_id[id]].stage = f->stage;
            L.lane[lane_id[id]].keys = xmalloc((size_t)g->mbs * sizeof(int));
        }
        struct lst_lane *ln = &L.lane[lane_id[id]];
        L.lane_of[key] = lane_id[id];
        ln->keys[ln->n++] = key;
    }
    free(lane_id);
    int n_lanes = L.n_lanes;
    struct lst_lane *lane = L.lane;
    L.dev_off = xcalloc((size_t)c->D + 2, sizeof(int));
    L.dev_lanes = xmalloc(((size_t)n_lanes + 1) * sizeof(int));
    for (int l = 0; l < n_lanes; l++)
        L.dev_off[lane[l].dev + 2]++;
    for (int d = 0; d < c->D; d++)
        L.dev_off[d + 2] += L.dev_off[d + 1];
    for (int l = 0; l < n_lanes; l++)
        L.dev_lanes[L.dev_off[lane[l].dev + 1]++] = l;
    for (int l = 0; l < n_lanes; l++) {
        int lim = g->stages - lane[l].stage + extra;
        if (seed != 0) { /* a randomised start: each lane's warm-up varies */
            rng ^= rng >> 12;
            rng ^= rng << 25;
            rng ^= rng >> 27;
            lim += (int)((rng * 2685821657736338717ull) >> 61) - 2;
        }
        lane[l].limit = lim < 1 ? 1 : lim;
        lane[l].limit2 = lane[l].limit;
        lane[l].wave = lane[l].n;
        if (seed != 0 && seed % 2 == 0) { /* every other randomised start: two waves */
            rng ^= rng >> 12;
            rng ^= rng << 25;
            rng ^= rng >> 27;
            uint64_t r = rng * 2685821657736338717ull;
            lane[l].wave = 1 + (int)((r >> 40) % (uint64_t)(lane[l].n > 1 ? lane[l].n : 1));
            int l2 = lane[l].limit - (int)((r >> 20) % 3);
            lane[l].limit2 = l2 < 1 ? 1 : l2;
        }
    }
    L.dev = xcalloc((size_t)c->D, sizeof *L.dev);
    L.end = xcalloc((size_t)c->n_ops + 1, sizeof(double));
    L.done = xcalloc((size_t)c->n_ops + 1, 1);
    L.best_op = xmalloc(((size_t)n_lanes + 1) * sizeof(int));
    L.best_ck = xcalloc((size_t)n_lanes + 1, 1);
    L.best_est = xmalloc(((size_t)n_lanes + 1) * sizeof(double));
    L.best_rank = xmalloc(((size_t)n_lanes + 1) * sizeof(int));
    /* the channels: every op that sends, counted by channel */
    int chans = c->D * c->D;
    L.chan_off = xcalloc((size_t)chans + 2, sizeof(int));
    L.chan_sent = xcalloc((size_t)chans + 1, sizeof(int));
    L.chan_head = xcalloc((size_t)chans + 1, sizeof(int));
    for (int op = 0; op < c->n_ops; op++)
        if (c->op[op].dev >= 0 && c->op[op].out_dev >= 0)
            L.chan_off[c->op[op].dev * c->D + c->op[op].out_dev + 2]++;
    for (int k = 0; k < chans; k++)
        L.chan_off[k + 2] += L.chan_off[k + 1];
    L.chan_msg = xmalloc(((size_t)L.chan_off[chans + 1] + 1) * sizeof(int));
    /* each micro-batch's stages by device (a key's ops are all on its forward's device) */
    L.mb_off = xcalloc((size_t)g->mbs * c->D + 2, sizeof(int));
    L.mb_stage = xmalloc(((size_t)c->keys + 1) * sizeof(int));
    for (int key = 0; key < c->keys; key++)
        L.mb_off[(key / g->stages) * c->D + c->op[SEARCH_OP(key, SK_F)].dev + 2]++;
    for (int k = 0; k < g->mbs * c->D; k++)
        L.mb_off[k + 2] += L.mb_off[k + 1];
    for (int key = 0; key < c->keys; key++) /* stages in order within each */
        L.mb_stage[L.mb_off[(key / g->stages) * c->D + c->op[SEARCH_OP(key, SK_F)].dev + 1]++] =
            key % g->stages;
    memset(s->ck, 0, (size_t)c->keys);
    for (int d = 0; d < c->D; d++)
        s->len[d] = 0;
    int left = 0;
    for (int key = 0; key < c->keys; key++)
        left += 2 + c->split[key];
    for (int l = 0; l < n_lanes; l++)
        lst_lane_eval(&L, l);
    bool ok = true;
    while (left > 0) {
        search_progress_work(c, 1); /* a list schedule of 400,000 ops takes ~0.3 s */
        if (search_stopped(c)) {
            ok = false;
            break;
        }
        int bl = -1;
        for (int l = 0; l < n_lanes; l++)
            if (L.best_op[l] >= 0 &&
                (bl < 0 || L.best_est[l] < L.best_est[bl] ||
                 (L.best_est[l] == L.best_est[bl] && L.best_rank[l] < L.best_rank[bl])))
                bl = l;
        if (bl < 0) {
            ok = false;
            break;
        }
        int best = L.best_op[bl];
        bool best_ck = L.best_ck[bl];
        const struct search_op *o = &c->op[best];
        struct lst_dev *dv = &L.dev[o->dev];
        lst_mem(c, dv, best, best_ck);
        dv->free_at = L.end[best] = L.best_est[bl] + o->dur;
        L.done[best] = 1;
        int key = SEARCH_KEY(best), kind = SEARCH_KIND(best);
        struct lst_lane *ln = &lane[bl];
        if (kind == SK_F) {
            ln->nf++;
            s->ck[key] = best_ck;
            left += best_ck;
        } else if (kind == SK_B) {
            ln->nb++;
        } else if (kind == SK_W) {
            while (ln->keys[ln->nw++] != key)
                ;
        }
        left--;
        s->ord[(size_t)o->dev * c->stride + s->len[o->dev]++] = best;
        if (o->out_dev >= 0) { /* its message joins the channel */
            int ch = o->dev * c->D + o->out_dev;
            L.chan_msg[L.chan_off[ch + 1] + L.chan_sent[ch]++] = best;
        }
        if (o->in_dev >= 0)
            L.chan_head[o->in_dev * c->D + o->dev]++;
        /* what changed: the device's lanes, and the lane of what waited for this op */
        for (int j = L.dev_off[o->dev]; j < L.dev_off[o->dev + 1]; j++)
            lst_lane_eval(&L, L.dev_lanes[j]);
        const struct plan_geom *gg = &c->geom;
        int next = -1;
        if (kind == SK_F && o->stage < gg->stages - 1)
            next = key + 1;
        else if (kind == SK_B && o->stage > 0)
            next = key - 1;
        if (next >= 0 && lane[L.lane_of[next]].dev != o->dev)
            lst_lane_eval(&L, L.lane_of[next]);
        /* a channel's head moved or grew: the receiving device's lanes may go on */
        if (o->out_dev >= 0)
            for (int j = L.dev_off[o->out_dev]; j < L.dev_off[o->out_dev + 1]; j++)
                lst_lane_eval(&L, L.dev_lanes[j]);
    }
    for (int l = 0; l < n_lanes; l++)
        free(lane[l].keys);
    free(lane);
    free(L.lane_of);
    free(L.dev_off);
    free(L.dev_lanes);
    free(L.dev);
    free(L.end);
    free(L.done);
    free(L.best_op);
    free(L.best_ck);
    free(L.best_est);
    free(L.best_rank);
    free(L.chan_off);
    free(L.chan_sent);
    free(L.chan_head);
    free(L.chan_msg);
    free(L.mb_off);
    free(L.mb_stage);
    return ok;
}
