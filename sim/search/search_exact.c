/* sim/search/search_exact.c: branch and bound over schedules (sim/search/search.h search_exact), the test
 * oracle of the local search on small cases.
 *
 * A schedule is built op by op in order of start time (ties by device), each op starting as
 * early as its device and its data allow: every schedule (per-device orders, checkpoint flags)
 * has one such sequence, so the tree enumerates each exactly once. The choices at a node are,
 * on every lane (a stage on a device), its next forward (kept or checkpointed: two branches
 * under a cap), its next recompute, backward and W; each lane keeps its micro-batches in order
 * (as the search does: the order of every channel's messages), so the optimum is over that
 * class. A branch is cut when a device goes over the cap (the memory model's own walk, op by
 * op) or when its lower bound reaches the best step found:
 *   max(end + tail over the ops placed, max over devices of free + work left + least tail left)
 * with tails the longest chains after an op (no recompute). Leaves are timed by the search's
 * evaluation (tail AR/OS included). */
#include <config.h>
#include "sim/search/search.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sim/core/bound.h"
#include "sim/core/memory.h"
#include "sim/plan/plan.h"
#include "sim/search/search_internal.h"
#include "sim/core/simulate.h"
#include "util/err.h"
#include "util/xalloc.h"

struct lane {
    int dev, n;     /* its device, its keys */
    int *keys;      /* [n] in micro-batch order */
    int nf, nb, nw; /* forwards and backwards placed; nw: the keys before it need no W */
    int n_split;    /* its keys whose backward is split (each has a W) */
    int w_done;     /* Ws placed */
};

struct xdev {
    double free_at, work_left;
    struct mem_walk w;
    double pending;
};

struct exact {
    const struct search_ctx *c;
    int n_lanes;
    struct lane *lane;
    int *lane_of;      /* [keys] */
    struct xdev *dev;  /* [D] */
    double *end;       /* [n_ops] */
    unsigned char *ckpt_useful; /* [D]: the device cannot hold every forward's activations */
    unsigned char *done, *ck;
    double *q;         /* [n_ops] tails */
    double *eF, *eB;   /* [keys] scratch: earliest starts (exact_heads) */
    double *head;      /* [D] scratch */
    int *lane_prev;    /* [keys]: the key before it on its lane, -1 first */
    double *act, *hold, *save; /* [keys]: activations, the chain F .. B, what a checkpoint
                                * saves of the memory-time integral (sim/core/bound.h) */
    int *seq;          /* [n_ops] the ops placed, in order */
    unsigned char *seq_ck;
    int n_seq, remaining; /* ops placed; ops left (recomputes of checkpoints made included) */
    /* a frame (search_frame): what a large-neighbourhood move keeps of a schedule */
    const struct search_frame *fr;
    int *fprev;        /* [n_ops] a kept op: the kept op before it on its device; -1 first */
    int *bprev, *bnext; /* [n_ops] the same among kept ops that are not recomputes (the bound) */
    int *fseq, n_fseq; /* the ops but recomputes, in the frame's order of start */
    double *ftail;     /* [n_ops] longest chain after it, the kept orders included */
    double *fhead;     /* [n_ops] scratch: earliest starts */
    double best;
    int *best_seq, n_best;
    unsigned char *best_ck;
    long nodes, limit;
    bool stopped;
    struct tt_entry *tt;
    uint64_t tt_mask;
    struct search_sched sched;
    struct search_eval ev;
};

/* Longest chains after each op (no recompute): the bound's tails on the search's ops. */
static void exact_tails(struct exact *x)
{
    const struct search_ctx *c = x->c;
    const struct plan_geom *g = &c->geom;
    for (int op = 0; op < c->n_ops; op++)
        x->q[op] = 0;
    /* backwards from the first stage up, then forwards from the last stage down */
    for (int mb = 0; mb < g->mbs; mb++) {
        for (int s = 0; s < g->stages; s++) {
            int key = mb * g->stages + s, b = SEARCH_OP(key, SK_B);
            double t = c->split[key] ? c->op[SEARCH_OP(key, SK_W)].dur : 0;
            if (s > 0) {
                int prev = SEARCH_OP(key - 1, SK_B);
                t = fmax(t, c->op[prev].lat + c->op[prev].dur + x->q[prev]);
            }
            x->q[b] = t;
        }
        for (int s = g->stages - 1; s >= 0; s--) {
            int key = mb * g->stages + s, f = SEARCH_OP(key, SK_F), b = SEARCH_OP(key, SK_B);
            double t = c->op[b].dur + x->q[b];
            if (s < g->stages - 1) {
                int next = SEARCH_OP(key + 1, SK_F);
                t = fmax(t, c->op[next].lat + c->op[next].dur + x->q[next]);
            }
            x->q[f] = t;
            x->q[SEARCH_OP(key, SK_RC)] = c->op[b].dur + x->q[b];
        }
    }
}

/* Earliest starts of the forwards and backwards not placed yet (eF, eB): after what they wait
 * for (placed: its end; not: its own earliest start and duration), after the op before them on
 * their lane, after their device is free, and, since the tree places ops in order of start,
 * after the last start placed. Returns the longest chain through them (start + dur + tail), and
 * in head[d] each device's earliest start of what is left. */
static double exact_heads(struct exact *x, double last_est, double *head)
{
    const struct search_ctx *c = x->c;
    const struct plan_geom *g = &c->geom;
    double chain = 0, *eF = x->eF, *eB = x->eB;
    for (int d = 0; d < c->D; d++)
        head[d] = INFINITY;
    for (int mb = 0; mb < g->mbs; mb++) {
        for (int s = 0; s < g->stages; s++) {
            int key = mb * g->stages + s, f = SEARCH_OP(key, SK_F);
            const struct search_op *o = &c->op[f];
            if (x->done[f]) {
                eF[key] = x->end[f] - o->dur;
                continue;
            }
            double t = fmax(last_est, x->dev[o->dev].free_at);
            if (s > 0)
                t = fmax(t, eF[key - 1] + c->op[o->pred].dur + o->lat);
            if (x->lane_prev[key] >= 0)
                t = fmax(t, eF[x->lane_prev[key]] + o->dur);
            eF[key] = t;
            head[o->dev] = fmin(head[o->dev], t);
            chain = fmax(chain, t + o->dur + x->q[f]);
        }
        for (int s = g->stages - 1; s >= 0; s--) {
            int key = mb * g->stages + s, b = SEARCH_OP(key, SK_B), f = SEARCH_OP(key, SK_F);
            const struct search_op *o = &c->op[b];
            if (x->done[b]) {
                eB[key] = x->end[b] - o->dur;
                continue;
            }
            double t = fmax(last_est, x->dev[o->dev].free_at);
            t = fmax(t, eF[key] + c->op[f].dur);
            if (s < g->stages - 1)
                t = fmax(t, eB[key + 1] + c->op[o->pred].dur + o->lat);
            if (x->lane_prev[key] >= 0)
                t = fmax(t, eB[x->lane_prev[key]] + o->dur);
            eB[key] = t;
            head[o->dev] = fmin(head[o->dev], t);
            chain = fmax(chain, t + o->dur + x->q[b]);
        }
    }
    return chain;
}

/* What checkpointing key's forward saves under that count: the activations from the
 * recompute's start, the checkpoint before (x->save is the count as bytes). */
static double exact_save(const struct exact *x, int key, double a, double r)
{
    if (r < 0)
        return x->save[key];
    const struct search_ctx *c = x->c;
    const struct stage_cost *sc = &c->cost.stage[c->op[SEARCH_OP(key, SK_F)].stage];
    int b = SEARCH_OP(key, SK_B);
    return (bound_count(a, r, sc->act) - bound_count(a, r, sc->act - mem_ckpt_saves(sc, 0))) *
           fmax(x->hold[key] - c->op[b].dur - c->op[SEARCH_OP(key, SK_RC)].dur, 0);
}

/* The memory-time bound (sim/core/bound.h) on what device d has left, counted as
 * bound_count(a, r, .) against C: its forwards not placed yet start after t0 and each holds its
 * activations for its chain L, or its checkpoint and adds its recompute; the integral over
 * [t0, T] is at most C (T - t0). The smallest T with T >= A + the least recompute that fits,
 * found by bisection (from below). */
static double exact_mem_lb_phi(const struct exact *x, int d, double t0, double A, double a,
                               double r, double C, double thr)
{
    const struct search_ctx *c = x->c;
    double total = 0, saves = 0, rcs = 0, qb = INFINITY;
    int lanes[64], nl = 0;
    for (int l = 0; l < x->n_lanes && nl < 64; l++) {
        const struct lane *ln = &x->lane[l];
        if (ln->dev != d)
            continue;
        if (ln->nb < ln->n)
            qb = fmin(qb, x->q[SEARCH_OP(ln->keys[ln->nb], SK_B)]);
        /* in flight: held from now (or its recompute) to its backward's end */
        for (int i = ln->nb; i < ln->nf; i++) {
            int key = ln->keys[i], b = SEARCH_OP(key, SK_B), rc = SEARCH_OP(key, SK_RC);
            double pb = c->op[b].dur, until = x->eB[key] + pb - t0;
            if (x->ck[key] && !x->done[rc]) /* the checkpoint until its recompute */
                until = c->op[rc].dur + pb;
            total += bound_count(a, r, x->act[key]) * fmax(until, 0);
        }
        if (ln->nf >= ln->n)
            continue;
        int key = ln->keys[ln->nf], m = ln->n - ln->nf;
        total += m * bound_count(a, r, x->act[key]) * x->hold[key];
        saves += m * exact_save(x, key, a, r);
        rcs += m * c->op[SEARCH_OP(key, SK_RC)].dur;
        lanes[nl++] = l;
    }
    if (isinf(qb))
        qb = 0;
    if (total <= C * (A - qb - t0))
        return A;
    /* The greedy below takes the lanes by save per recompute, best first (ties: the first
     * lane); that order does not depend on T, so it is made once, with each lane's save and
     * recompute, and the bisection only walks it. */
    struct {
        double sv, m, rc, ratio; /* the whole lane's save, its forwards left, one recompute,
                                  * save per recompute */
    } order[64];
    int n_order = 0;
    for (int k = 0; k < nl; k++) {
        const struct lane *ln = &x->lane[lanes[k]];
        int key = ln->keys[ln->nf], m = ln->n - ln->nf;
        double rc = c->op[SEARCH_OP(key, SK_RC)].dur;
        double sv = exact_save(x, key, a, r), ratio = rc > 0 ? sv / rc : INFINITY;
        if (!(sv > 0) || !(ratio > -1))
            continue;
        int at = n_order;
        while (at > 0 && order[at - 1].ratio < ratio)
            at--;
        memmove(&order[at + 1], &order[at], (size_t)(n_order - at) * sizeof order[0]);
        order[at].sv = m * sv;
        order[at].m = m;
        order[at].rc = rc;
        order[at].ratio = ratio;
        n_order++;
    }
    double lo = A, hi = fmax(A + rcs, t0 + qb + (total - saves) / C) * (1 + 1e-12) + 1e-12;
    if (hi < thr) /* the bisection stays between A and hi: it cannot cut the branch */
        return A;
    for (int it = 0; it < 60; it++) {
        double T = 0.5 * (lo + hi), need = total - C * (T - qb - t0), cost = 0;
        for (int k = 0; k < n_order && need > 0; k++) {
            double frac = need >= order[k].sv ? 1 : need / order[k].sv;
            cost += frac * order[k].m * order[k].rc;
            need -= frac * order[k].sv;
        }
        bool at_end = T == lo || T == hi; /* nothing left to halve: later rounds change nothing */
        if (need <= 1e-12 * (total > 1 ? total : 1) && T >= A + cost)
            hi = T;
        else
            lo = T;
        if (at_end)
            break;
    }
    return lo;
}

/* The larger of the bytes and the whole-activation counts (sim/core/bound.c). */
static double exact_mem_lb(const struct exact *x, int d, double t0, double A, double thr)
{
    const struct search_ctx *c = x->c;
    double C = c->cap - c->stat[d], a = 0;
    for (int l = 0; l < x->n_lanes; l++)
        if (x->lane[l].dev == d && x->lane[l].n > 0)
            a = fmax(a, x->act[x->lane[l].keys[0]]);
    double T = exact_mem_lb_phi(x, d, t0, A, 0, -1, C, thr);
    if (a > 0) {
        double k = floor(C / a * (1 + 1e-12)), r = fmax(C - k * a, 0);
        if (k >= 1 && r < a)
            T = fmax(T, exact_mem_lb_phi(x, d, t0, A, a, r, k * a, thr));
    }
    return T;
}

/* A lower bound on the step of every schedule below this node; only whether it reaches thr
 * matters (the branch is cut then), so once it does the devices left are not looked at, and a
 * device's memory-time bound is skipped where it cannot reach thr. */
static double exact_lb(struct exact *x, double chain, double last_est, double thr)
{
    const struct search_ctx *c = x->c;
    double *head = x->head;
    double lb = fmax(chain, exact_heads(x, last_est, head));
    for (int d = 0; d < c->D && lb < thr; d++) {
        double qmin = INFINITY;
        bool pending = false; /* a recompute or a W that may run as soon as the device is free */
        for (int l = 0; l < x->n_lanes; l++) {
            const struct lane *ln = &x->lane[l];
            if (ln->dev != d)
                continue;
            if (ln->w_done < ln->n_split) /* a W left: it may end the step */
                qmin = 0;
            else if (ln->nb < ln->n)
                qmin = fmin(qmin, x->q[SEARCH_OP(ln->keys[ln->nb], SK_B)]);
            for (int i = ln->nw; i < ln->nb && !pending; i++)
                pending = c->split[ln->keys[i]] && !x->done[SEARCH_OP(ln->keys[i], SK_W)];
            for (int i = ln->nb; i < ln->nf && !pending; i++)
                pending = x->ck[ln->keys[i]] && !x->done[SEARCH_OP(ln->keys[i], SK_RC)];
        }
        if (isinf(qmin))
            qmin = 0;
        if (x->dev[d].work_left > 0) {
            double h = pending ? fmin(head[d], fmax(x->dev[d].free_at, last_est)) : head[d];
            double A = fmax(h, x->dev[d].free_at) + x->dev[d].work_left + qmin;
            lb = fmax(lb, A);
            if (x->ckpt_useful[d] && lb < thr)
                lb = fmax(lb, exact_mem_lb(x, d, fmax(last_est, 0), A, thr));
        }
    }
    return lb;
}

/* Walks op's instructions (receive, op, send) through device d's memory; false over the cap. */
static bool exact_mem(struct exact *x, int op, bool ck)
{
    const struct search_ctx *c = x->c;
    struct xdev *dv = &x->dev[c->op[op].dev];
    return search_fits(c, search_mem_walk_op(c, op, ck, &dv->w, &dv->pending));
}

static void exact_leaf(struct exact *x)
{
    const struct search_ctx *c = x->c;
    for (int d = 0; d < c->D; d++)
        x->sched.len[d] = 0;
    for (int i = 0; i < x->n_seq; i++) {
        int op = x->seq[i], d = c->op[op].dev;
        x->sched.ord[(size_t)d * c->stride + x->sched.len[d]++] = op;
    }
    memcpy(x->sched.ck, x->ck, (size_t)c->keys);
    if (!search_eval_time(c, &x->sched, &x->ev))
        return;
    if (x->ev.makespan < x->best * (1 - 1e-12)) {
        x->best = x->ev.makespan;
        memcpy(x->best_seq, x->seq, (size_t)x->n_seq * sizeof(int));
        memcpy(x->best_ck, x->ck, (size_t)c->keys);
        x->n_best = x->n_seq;
    }
}

/* ---- a transposition table: two histories that reach the same state (what every lane has
 * placed, the checkpoints in flight, each device's free time and memory, the end times later
 * ops still wait for) have the same completions; the later one is cut when it can choose among
 * fewer of them (its last start is no earlier) and has ended no earlier. Keyed by two 64-bit
 * hashes of the state. */

struct tt_entry {
    uint64_t h1, h2;
    double last_est, max_end;
    int last_dev;
};

static inline void tt_mix(uint64_t *h1, uint64_t *h2, uint64_t v)
{
    *h1 = (*h1 ^ v) * 0x100000001b3ull;
    *h2 = (*h2 + v * 0x9E3779B97F4A7C15ull) ^ (*h2 >> 29);
    *h2 *= 0xBF58476D1CE4E5B9ull;
}

static inline uint64_t tt_bits(double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    return u;
}

static void tt_hash(const struct exact *x, uint64_t *h1, uint64_t *h2)
{
    const struct search_ctx *c = x->c;
    const struct plan_geom *g = &c->geom;
    *h1 = 0xcbf29ce484222325ull;
    *h2 = 0x84222325cbf29ce4ull;
    for (int l = 0; l < x->n_lanes; l++) {
        const struct lane *ln = &x->lane[l];
        tt_mix(h1, h2, (uint64_t)ln->nf | (uint64_t)ln->nb << 20 | (uint64_t)ln->nw << 40);
    }
    for (int d = 0; d < c->D; d++) {
        tt_mix(h1, h2, tt_bits(x->dev[d].free_at));
        tt_mix(h1, h2, tt_bits(x->dev[d].w.cur));
        tt_mix(h1, h2, tt_bits(x->dev[d].pending));
    }
    for (int key = 0; key < c->keys; key++) {
        int f = SEARCH_OP(key, SK_F), b = SEARCH_OP(key, SK_B), s = key % g->stages;
        if (!x->done[f])
            continue;
        if (!x->done[b]) {
            tt_mix(h1, h2, (uint64_t)key << 2 | x->ck[key] << 1 | x->done[SEARCH_OP(key, SK_RC)]);
            if (s == g->stages - 1 || !x->done[SEARCH_OP(key + 1, SK_F)])
                tt_mix(h1, h2, tt_bits(x->end[f]));
        } else if ((s > 0 && !x->done[SEARCH_OP(key - 1, SK_B)]) ||
                   (c->split[key] && !x->done[SEARCH_OP(key, SK_W)])) {
            tt_mix(h1, h2, tt_bits(x->end[b]) ^ (uint64_t)key);
        }
    }
}

/* true: the state was reached before with at least the same choice; records it otherwise. */
static bool tt_seen(struct exact *x, double last_est, int last_dev, double max_end)
{
    uint64_t h1, h2;
    tt_hash(x, &h1, &h2);
    struct tt_entry *t = &x->tt[h1 & x->tt_mask];
    if (t->h1 == h1 && t->h2 == h2) {
        bool no_more = t->last_est < last_est ||
                       (t->last_est == last_est && t->last_dev <= last_dev);
        if (no_more && t->max_end <= max_end)
            return true;
    }
    *t = (struct tt_entry){h1, h2, last_est, max_end, last_dev};
    return false;
}

struct cand {
    int op;
    double est;
};

static int exact_cand_cmp(const void *a, const void *b)
{
    const struct cand *p = a, *q = b;
    if (p->est != q->est)
        return p->est < q->est ? -1 : 1;
    return SEARCH_KIND(q->op) - SEARCH_KIND(p->op); /* backwards first */
}

static double exact_frame_lb(struct exact *x, double last_est);

static void exact_dfs(struct exact *x, double last_est, int last_dev, double chain,
                      double max_end)
{
    const struct search_ctx *c = x->c;
    if (x->stopped)
        return;
    if (++x->nodes > x->limit || search_stopped(c)) {
        x->stopped = true;
        return;
    }
    if (c->prog != NULL)
        search_progress_add(c, SEARCH_NODE_COST);
    if (x->remaining == 0) {
        exact_leaf(x);
        return;
    }
    double cut = x->best * (1 - 1e-12);
    if (exact_lb(x, chain, last_est, cut) >= cut)
        return;
    if (x->fr && exact_frame_lb(x, last_est) >= x->best * (1 - 1e-12))
        return;
    if (tt_seen(x, last_est, last_dev, max_end))
        return;
    struct cand cd[4 * 64 + 4];
    int nc = 0;
    for (int l = 0; l < x->n_lanes && nc < 4 * 64; l++) {
        struct lane *ln = &x->lane[l];
        int ops[4], k = 0;
        if (ln->nf < ln->n)
            ops[k++] = SEARCH_OP(ln->keys[ln->nf], SK_F);
        /* recomputes in micro-batch order, each before its backward */
        for (int r = ln->nb; r < ln->nf; r++)
            if (x->ck[ln->keys[r]] && !x->done[SEARCH_OP(ln->keys[r], SK_RC)]) {
                ops[k++] = SEARCH_OP(ln->keys[r], SK_RC);
                break;
            }
        if (ln->nb < ln->nf) {
            int key = ln->keys[ln->nb];
            if (!x->ck[key] || x->done[SEARCH_OP(key, SK_RC)])
                ops[k++] = SEARCH_OP(key, SK_B);
        }
        int w = search_next_w(c, ln->keys, ln->nw, ln->nb);
        if (w >= 0)
            ops[k++] = w;
        for (int i = 0; i < k; i++) {
            const struct search_op *o = &c->op[ops[i]];
            if (o->pred >= 0 && !x->done[o->pred])
                continue;
            double est = x->dev[o->dev].free_at;
            if (o->pred >= 0)
                est = fmax(est, x->end[o->pred] + o->lat);
            if (est < last_est - 1e-12 ||
                (fabs(est - last_est) <= 1e-12 && o->dev < last_dev))
                continue;
            cd[nc++] = (struct cand){ops[i], est};
        }
    }
    qsort(cd, (size_t)nc, sizeof *cd, exact_cand_cmp);
    for (int i = 0; i < nc && !x->stopped; i++) {
        int op = cd[i].op, kind = SEARCH_KIND(op), key = SEARCH_KEY(op);
        const struct search_op *o = &c->op[op];
        struct lane *ln = &x->lane[x->lane_of[key]];
        /* a frame: a kept op after the kept op before it; a kept forward keeps its flag */
        int forced_ck = -1;
        if (x->fr && x->fprev[op] != -2) {
            if (x->fprev[op] >= 0 && !x->done[x->fprev[op]])
                continue;
            if (kind == SK_F)
                forced_ck = x->fr->s->ck[key];
        }
        int branches = forced_ck < 0 && kind == SK_F && x->ckpt_useful[o->dev] ? 2 : 1;
        for (int br = 0; br < branches && !x->stopped; br++) {
            bool ck = forced_ck >= 0 ? forced_ck != 0 : kind == SK_F && br == 1;
            struct xdev saved = x->dev[o->dev];
            struct lane saved_ln = *ln;
            if (!exact_mem(x, op, ck)) {
                x->dev[o->dev] = saved;
                continue;
            }
            struct xdev *dv = &x->dev[o->dev];
            double end = cd[i].est + o->dur;
            dv->free_at = end;
            dv->work_left -= o->dur;
            if (ck)
                dv->work_left += c->op[SEARCH_OP(key, SK_RC)].dur;
            x->end[op] = end;
            x->done[op] = 1;
            if (kind == SK_F)
                x->ck[key] = ck;
            ln->nf += kind == SK_F;
            ln->nb += kind == SK_B;
            if (kind == SK_W) {
                while (ln->keys[ln->nw++] != key)
                    ;
                ln->w_done++;
            }
            x->remaining += ck ? 0 : -1; /* a checkpoint brings its recompute */
            x->seq[x->n_seq++] = op;
            exact_dfs(x, cd[i].est, o->dev, fmax(chain, end + x->q[op]), fmax(max_end, end));
            x->n_seq--;
            x->remaining -= ck ? 0 : -1;
            *ln = saved_ln;
            x->done[op] = 0;
            if (kind == SK_F)
                x->ck[key] = 0;
            x->dev[o->dev] = saved;
        }
    }
}

/* The frame's kept orders (fprev: -2 for an op that is free, or not in the schedule), its ops
 * in order of start, and their tails along the kept orders (the frame's bound). */
static void exact_frame_init(struct exact *x)
{
    const struct search_ctx *c = x->c;
    const struct search_sched *s = x->fr->s;
    const unsigned char *fo = x->fr->free_op;
    size_t n = (size_t)c->n_ops + 1;
    x->fprev = xmalloc(n * sizeof(int));
    x->bprev = xmalloc(n * sizeof(int));
    x->bnext = xmalloc(n * sizeof(int));
    for (size_t i = 0; i < n; i++) {
        x->fprev[i] = -2;
        x->bprev[i] = x->bnext[i] = -1;
    }
    for (int d = 0; d < c->D; d++) {
        int prev = -1, bprev = -1;
        const int *ord = s->ord + (size_t)d * c->stride;
        for (int i = 0; i < s->len[d]; i++) {
            int op = ord[i];
            /* free, or the recompute of a free forward (which may be kept instead) */
            if (fo[op] || (SEARCH_KIND(op) == SK_RC && fo[SEARCH_OP(SEARCH_KEY(op), SK_F)]))
                continue;
            x->fprev[op] = prev;
            prev = op;
            if (SEARCH_KIND(op) == SK_RC)
                continue;
            x->bprev[op] = bprev;
            if (bprev >= 0)
                x->bnext[bprev] = op;
            bprev = op;
        }
    }
    /* the ops in order of start (the schedule's own times: every kept order runs forwards in
     * it) */
    struct search_eval ev;
    search_eval_init(c, &ev);
    search_eval_time(c, s, &ev);
    struct fent {
        double t;
        int op;
    } *e = xmalloc(n * sizeof *e);
    int k = 0;
    for (int d = 0; d < c->D; d++)
        for (int i = 0; i < s->len[d]; i++) {
            int op = s->ord[(size_t)d * c->stride + i];
            if (SEARCH_KIND(op) != SK_RC)
                e[k++] = (struct fent){ev.start[op], op};
        }
    for (int i = 1; i < k; i++) /* insertion sort, stable: a device keeps its order at ties */
        for (int j = i; j > 0 && e[j].t < e[j - 1].t; j--) {
            struct fent tmp = e[j];
            e[j] = e[j - 1];
            e[j - 1] = tmp;
        }
    x->fseq = xmalloc(n * sizeof(int));
    x->n_fseq = k;
    for (int i = 0; i < k; i++)
        x->fseq[i] = e[i].op;
    free(e);
    search_eval_fini(&ev);
    /* tails over the successors: data, the lane's next, the next kept op on the device */
    const struct plan_geom *g = &c->geom;
    x->ftail = xcalloc(n, sizeof(double));
    x->fhead = xcalloc(n, sizeof(double));
    int *lane_next = xmalloc(n * sizeof(int));
    for (int key = 0; key < c->keys; key++)
        lane_next[key] = -1;
    for (int key = 0; key < c->keys; key++)
        if (x->lane_prev[key] >= 0)
            lane_next[x->lane_prev[key]] = key;
    for (int i = k - 1; i >= 0; i--) {
        int op = x->fseq[i], key = SEARCH_KEY(op), kind = SEARCH_KIND(op), st = key % g->stages;
        int succ[5], ns = 0;
        if (kind == SK_F) {
            if (st < g->stages - 1)
                succ[ns++] = SEARCH_OP(key + 1, SK_F);
            succ[ns++] = SEARCH_OP(key, SK_B);
        } else if (kind == SK_B) {
            if (st > 0)
                succ[ns++] = SEARCH_OP(key - 1, SK_B);
            if (c->split[key])
                succ[ns++] = SEARCH_OP(key, SK_W);
        }
        if (lane_next[key] >= 0)
            succ[ns++] = SEARCH_OP(lane_next[key], kind);
        if (x->bnext[op] >= 0)
            succ[ns++] = x->bnext[op];
        double tl = 0;
        for (int j = 0; j < ns; j++) {
            const struct search_op *y = &c->op[succ[j]];
            if (y->dev >= 0)
                tl = fmax(tl, (y->pred == op ? y->lat : 0) + y->dur + x->ftail[succ[j]]);
        }
        x->ftail[op] = tl;
    }
    free(lane_next);
}

/* The frame's bound: earliest starts of what is left along the data, the lanes and the kept
 * orders, each plus its tail along them (recomputes left out: a relaxation). */
static double exact_frame_lb(struct exact *x, double last_est)
{
    const struct search_ctx *c = x->c;
    double lb = 0, *h = x->fhead;
    /* 0 until computed: an op may follow one of its lane's later in the frame's order (two Ws
     * of a lane that the local search swapped), and a start of 0 bounds it still */
    for (int i = 0; i < x->n_fseq; i++)
        h[x->fseq[i]] = 0;
    for (int i = 0; i < x->n_fseq; i++) {
        int op = x->fseq[i], key = SEARCH_KEY(op), kind = SEARCH_KIND(op);
        if (x->done[op])
            continue;
        const struct search_op *o = &c->op[op];
        double t = fmax(last_est, x->dev[o->dev].free_at);
        int before[4] = {o->pred, kind == SK_B ? SEARCH_OP(key, SK_F) : -1,
                         x->lane_prev[key] >= 0 ? SEARCH_OP(x->lane_prev[key], kind) : -1,
                         x->bprev[op]};
        for (int j = 0; j < 4; j++) {
            int p = before[j];
            if (p < 0 || c->op[p].dev < 0)
                continue;
            double fin = x->done[p] ? x->end[p] : h[p] + c->op[p].dur;
            t = fmax(t, fin + (j == 0 ? o->lat : 0));
        }
        h[op] = t;
        lb = fmax(lb, t + o->dur + x->ftail[op]);
    }
    return lb;
}

bool search_exact_ctx(const struct search_ctx *c, long limit, double ub,
                      const struct search_frame *fr, struct search_sched *out,
                      struct search_exact_result *res)
{
    memset(res, 0, sizeof *res);
    struct exact x = {.c = c, .limit = limit > 0 ? limit : 2000000, .fr = fr};
    const struct plan_geom *g = &c->geom;
    /* lanes: (stage, device), micro-batches in order */
    int lanes_max = g->stages * c->D;
    int *lane_id = xmalloc((size_t)lanes_max * sizeof(int));
    for (int i = 0; i < lanes_max; i++)
        lane_id[i] = -1;
    x.lane = xcalloc((size_t)lanes_max, sizeof *x.lane);
    x.lane_of = xcalloc((size_t)c->keys + 1, sizeof(int));
    for (int key = 0; key < c->keys; key++) {
        const struct search_op *f = &c->op[SEARCH_OP(key, SK_F)];
        int id = f->stage * c->D + f->dev;
        if (lane_id[id] < 0) {
            lane_id[id] = x.n_lanes++;
            x.lane[lane_id[id]].dev = f->dev;
            x.lane[lane_id[id]].keys = xmalloc((size_t)g->mbs * sizeof(int));
        }
        struct lane *ln = &x.lane[lane_id[id]];
        x.lane_of[key] = lane_id[id];
        ln->keys[ln->n++] = key; /* keys ascend with mb for a fixed stage */
        ln->n_split += c->split[key];
    }
    free(lane_id);
    x.lane_prev = xmalloc((size_t)c->keys * sizeof(int));
    for (int l = 0; l < x.n_lanes; l++)
        for (int i = 0; i < x.lane[l].n; i++)
            x.lane_prev[x.lane[l].keys[i]] = i > 0 ? x.lane[l].keys[i - 1] : -1;
    x.eF = xmalloc((size_t)c->keys * sizeof(double));
    x.eB = xmalloc((size_t)c->keys * sizeof(double));
    x.head = xmalloc((size_t)c->D * sizeof(double));
    x.dev = xcalloc((size_t)c->D, sizeof *x.dev);
    x.end = xcalloc((size_t)c->n_ops + 1, sizeof(double));
    x.done = xcalloc((size_t)c->n_ops + 1, 1);
    x.ck = xcalloc((size_t)c->keys + 1, 1);
    x.q = xcalloc((size_t)c->n_ops + 1, sizeof(double));
    x.seq = xmalloc((size_t)c->n_ops * sizeof(int));
    x.best_seq = xmalloc((size_t)c->n_ops * sizeof(int));
    x.best_ck = xcalloc((size_t)c->keys + 1, 1);
    x.best = ub > 0 ? ub : INFINITY; /* only a strictly faster schedule is worth finding */
    exact_tails(&x);
    x.ckpt_useful = xcalloc((size_t)c->D, 1);
    double *acts = xcalloc((size_t)c->D, sizeof(double));
    for (int key = 0; key < c->keys; key++) {
        const struct search_op *f = &c->op[SEARCH_OP(key, SK_F)];
        acts[f->dev] += c->cost.stage[f->stage].act;
        for (int k = 0; k < SK__COUNT; k++) {
            const struct search_op *op = &c->op[SEARCH_OP(key, k)];
            if (op->dev < 0 || k == SK_RC)
                continue;
            x.remaining++;
            x.dev[op->dev].work_left += op->dur;
        }
    }
    for (int d = 0; d < c->D; d++)
        x.ckpt_useful[d] = c->cap > 0 && c->stat[d] + acts[d] > c->cap;
    free(acts);
    x.act = xmalloc((size_t)c->keys * sizeof(double));
    x.hold = xmalloc((size_t)c->keys * sizeof(double));
    x.save = xmalloc((size_t)c->keys * sizeof(double));
    for (int key = 0; key < c->keys; key++) {
        int f = SEARCH_OP(key, SK_F), b = SEARCH_OP(key, SK_B);
        const struct stage_cost *sc = &c->cost.stage[c->op[f].stage];
        x.act[key] = sc->act;
        /* F's start to B's end: F, then its tail less what follows B */
        x.hold[key] = c->op[f].dur + x.q[f] - x.q[b];
        /* whole-stage checkpoints only here: the recompute holds the activations too */
        x.save[key] = mem_ckpt_saves(sc, 0) *
                      fmax(x.hold[key] - c->op[b].dur - c->op[SEARCH_OP(key, SK_RC)].dur, 0);
    }
    search_sched_init(c, &x.sched);
    search_eval_init(c, &x.ev);
    size_t tt_size = 1024;
    while (tt_size < (size_t)x.limit && tt_size < ((size_t)1 << 20))
        tt_size *= 2;
    x.tt = xcalloc(tt_size, sizeof *x.tt);
    x.tt_mask = tt_size - 1;
    if (fr)
        exact_frame_init(&x);
    exact_dfs(&x, -1, -1, 0, 0);
    res->nodes = x.nodes;
    res->finished = !x.stopped;
    res->found = x.n_best > 0;
    res->best = x.n_best > 0 ? x.best : 0;
    if (x.n_best > 0 && out) {
        for (int d = 0; d < c->D; d++)
            out->len[d] = 0;
        for (int i = 0; i < x.n_best; i++) {
            int op = x.best_seq[i], d = c->op[op].dev;
            out->ord[(size_t)d * c->stride + out->len[d]++] = op;
        }
        memcpy(out->ck, x.best_ck, (size_t)c->keys);
    }
    for (int l = 0; l < x.n_lanes; l++)
        free(x.lane[l].keys);
    free(x.lane);
    free(x.lane_of);
    free(x.dev);
    free(x.ckpt_useful);
    free(x.lane_prev);
    free(x.act);
    free(x.hold);
    free(x.save);
    free(x.eF);
    free(x.eB);
    free(x.head);
    free(x.tt);
    free(x.fprev);
    free(x.bprev);
    free(x.bnext);
    free(x.fseq);
    free(x.ftail);
    free(x.fhead);
    free(x.end);
    free(x.done);
    free(x.ck);
    free(x.q);
    free(x.seq);
    free(x.best_seq);
    free(x.best_ck);
    search_sched_fini(&x.sched);
    search_eval_fini(&x.ev);
    return res->found;
}

int search_exact(const struct plan *base, const struct search_opts *o, double ub,
                 struct plan **out, struct search_exact_result *res, struct mt_err *e)
{
    memset(res, 0, sizeof *res);
    if (out)
        *out = NULL;
    struct search_ctx c;
    TRY(search_ctx_init(&c, base, o->cap, e));
    struct search_sched best;
    search_sched_init(&c, &best);
    search_exact_ctx(&c, o->budget, ub, NULL, &best, res);
    if (res->found && out)
        *out = search_sched_plan(&c, &best);
    search_sched_fini(&best);
    search_ctx_fini(&c);
    return MT_OK;
}
