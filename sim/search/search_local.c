/* sim/search/search_local.c: the local search of sim/search/search.h over schedules (sim/search/search_internal.h).
 *
 * The objective is the step (makespan), ties broken by the sum of the devices' finish times
 * (which moves an unfinished device towards a shorter step); a schedule must run (no deadlock)
 * and fit the cap. Moves are read off the critical path of the current schedule (the chain of
 * ops, each started when its device freed or when its data arrived, back from the last):
 *   - an op that waited for its device runs earlier, by 1..6 places, or its predecessor later;
 *   - an RC in the way is dropped (its forward keeps its activations) when memory allows, or
 *     run earlier;
 *   - before an op that waited for its data, one of the next ops on its device fills the gap
 *     (Mario's overlap and prepose, found rather than written);
 *   - a move that would be faster but puts its device over the cap is tried again with one
 *     more forward of that device checkpointed (the longest held first).
 * First improvement, the path scanned from its end. When no path move helps, every checkpoint
 * is tried without its recompute; then a kick (a few random legal swaps and checkpoint flips)
 * restarts the descent from the best schedule so far. Every move keeps the order of each
 * channel's messages (search_may_swap), so a plan that NCCL could run still can. */
#include <config.h>
#include "sim/search/search_internal.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sim/search/search.h"
#include "util/xalloc.h"

struct ls {
    const struct search_ctx *c;
    struct search_eval ev;
    struct search_sched cur, cand, best;
    struct search_score cur_o, best_o;
    double *peak;      /* [D] of cur */
    double *peak_cand; /* [D] of cand (offload: ls_others_fit) */
    int *b_pos;        /* [keys]: ls_longest_kept's room */
    int *path, n_path; /* cur's critical path, last op first */
    long evals, budget;
    int improvements;
    uint64_t rng;
};

/* Whether budget is left (and no one stopped the search). */
static bool ls_go(const struct ls *l)
{
    return l->evals < l->budget && !search_stopped(l->c);
}

static uint64_t ls_rand(struct ls *l)
{
    uint64_t x = l->rng;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    l->rng = x;
    return x * 2685821657736338717ull;
}

static int *ls_ord(const struct search_ctx *c, struct search_sched *s, int d)
{
    return s->ord + (size_t)d * c->stride;
}

/* cand's device d and checkpoint flag key back to cur's (key < 0: none). */
static void ls_restore(struct ls *l, int d, int key)
{
    const struct search_ctx *c = l->c;
    memcpy(ls_ord(c, &l->cand, d), ls_ord(c, &l->cur, d), (size_t)l->cur.len[d] * sizeof(int));
    l->cand.len[d] = l->cur.len[d];
    if (key >= 0)
        l->cand.ck[key] = l->cur.ck[key];
}

static void ls_commit(struct ls *l, int d, int key)
{
    const struct search_ctx *c = l->c;
    memcpy(ls_ord(c, &l->cur, d), ls_ord(c, &l->cand, d), (size_t)l->cand.len[d] * sizeof(int));
    l->cur.len[d] = l->cand.len[d];
    if (key >= 0)
        l->cur.ck[key] = l->cand.ck[key];
}

static int ls_find(const struct search_ctx *c, struct search_sched *s, int d, int op)
{
    const int *a = ls_ord(c, s, d);
    for (int i = 0; i < s->len[d]; i++)
        if (a[i] == op)
            return i;
    return -1;
}

/* Moves a[i] to position j of device d, if every op it crosses may trade places with it. */
static bool ls_shift(const struct search_ctx *c, struct search_sched *s, int d, int i, int j)
{
    int *a = ls_ord(c, s, d);
    if (j < 0 || j >= s->len[d] || i == j)
        return false;
    int x = a[i];
    if (j < i) {
        for (int t = j; t < i; t++)
            if (!search_may_swap(c, a[t], x))
                return false;
        memmove(a + j + 1, a + j, (size_t)(i - j) * sizeof(int));
    } else {
        for (int t = i + 1; t <= j; t++)
            if (!search_may_swap(c, x, a[t]))
                return false;
        memmove(a + i, a + i + 1, (size_t)(j - i) * sizeof(int));
    }
    a[j] = x;
    return true;
}

/* Moves the block a[i .. i + n) so that it starts at position j (j > i: later; j < i: earlier),
 * if every op it crosses may trade places with each op of the block. */
static bool ls_shift_block(const struct search_ctx *c, struct search_sched *s, int d, int i,
                           int n, int j)
{
    int *a = ls_ord(c, s, d), len = s->len[d];
    if (n < 1 || i < 0 || i + n > len || j < 0 || j + n > len || j == i)
        return false;
    int lo = j < i ? j : i + n, hi = j < i ? i : j + n; /* the ops crossed: a[lo .. hi) */
    for (int t = lo; t < hi; t++)
        for (int k = i; k < i + n; k++)
            if (j < i ? !search_may_swap(c, a[t], a[k]) : !search_may_swap(c, a[k], a[t]))
                return false;
    int blk[8];
    memcpy(blk, a + i, (size_t)n * sizeof(int));
    if (j < i)
        memmove(a + j + n, a + j, (size_t)(i - j) * sizeof(int));
    else
        memmove(a + i, a + i + n, (size_t)(j - i) * sizeof(int));
    memcpy(a + j, blk, (size_t)n * sizeof(int));
    return true;
}

/* Drops key's recompute (its forward keeps the activations). */
static bool ls_unckpt(const struct search_ctx *c, struct search_sched *s, int key)
{
    if (!s->ck[key])
        return false;
    int d = c->op[SEARCH_OP(key, SK_RC)].dev, i = ls_find(c, s, d, SEARCH_OP(key, SK_RC));
    int *a = ls_ord(c, s, d);
    memmove(a + i, a + i + 1, (size_t)(s->len[d] - i - 1) * sizeof(int));
    s->len[d]--;
    s->ck[key] = 0;
    return true;
}

/* Checkpoints key's forward, its RC right before its backward. */
static bool ls_ckpt(const struct search_ctx *c, struct search_sched *s, int key)
{
    if (s->ck[key])
        return false;
    int d = c->op[SEARCH_OP(key, SK_B)].dev, i = ls_find(c, s, d, SEARCH_OP(key, SK_B));
    int *a = ls_ord(c, s, d);
    memmove(a + i + 1, a + i, (size_t)(s->len[d] - i) * sizeof(int));
    a[i] = SEARCH_OP(key, SK_RC);
    s->len[d]++;
    s->ck[key] = 1;
    return true;
}

/* The forward of device d kept longest (by places between it and its backward, the first of
 * equals), not yet checkpointed; -1 none. skip: a key not to take. b_pos: [keys] room. The
 * backwards' places first, in one pass (a scan from each forward to its backward was
 * O(ops x span) a call). */
static int ls_longest_kept(const struct search_ctx *c, struct search_sched *s, int d, int skip,
                           int *b_pos)
{
    const int *a = ls_ord(c, s, d);
    int len = s->len[d];
    for (int i = 0; i < len; i++)
        if (SEARCH_KIND(a[i]) == SK_F)
            b_pos[SEARCH_KEY(a[i])] = len;
    for (int i = 0; i < len; i++)
        if (SEARCH_KIND(a[i]) == SK_B)
            b_pos[SEARCH_KEY(a[i])] = i;
    int best = -1, span = -1;
    for (int i = 0; i < len; i++) {
        int op = a[i], key = SEARCH_KEY(op);
        if (SEARCH_KIND(op) != SK_F || s->ck[key] || key == skip)
            continue;
        int j = b_pos[key] > i ? b_pos[key] : len; /* a backward before it is not met */
        if (j - i > span) {
            span = j - i;
            best = key;
        }
    }
    return best;
}

void search_strip_checkpoints(const struct search_ctx *c, struct search_sched *s)
{
    /* each device's recomputes (an offloaded forward's RL in its slot) dropped in one pass:
     * one ls_unckpt a checkpoint was O(checkpoints x ops) */
    for (int d = 0; d < c->D; d++) {
        int *a = ls_ord(c, s, d), n = 0;
        for (int i = 0; i < s->len[d]; i++)
            if (SEARCH_KIND(a[i]) != SK_RC || !s->ck[SEARCH_KEY(a[i])])
                a[n++] = a[i];
        s->len[d] = n;
    }
    memset(s->ck, 0, (size_t)c->keys);
}

/* Whether every device of cand other than d fits: with offload its copies' times, and so
 * its memory, may move when another device's order changes (into l->peak_cand). */
static bool ls_others_fit(struct ls *l, int d)
{
    const struct search_ctx *c = l->c;
    for (int e = 0; e < c->D; e++)
        if (e != d && !search_fits(c, l->peak_cand[e] = search_eval_peak(c, &l->cand, e, &l->ev)))
            return false;
    return true;
}

/* cand with one more forward of device d checkpointed (the longest kept, not skip),
 * evaluated: whether it runs, is better and d fits (*pk its peak); *extra the key. */
static bool ls_try_extra(struct ls *l, int d, int skip, int *extra, double *pk)
{
    const struct search_ctx *c = l->c;
    *extra = ls_longest_kept(c, &l->cand, d, skip, l->b_pos);
    if (*extra < 0 || !ls_ckpt(c, &l->cand, *extra))
        return false;
    l->evals++;
    return search_eval_time(c, &l->cand, &l->ev) &&
           search_better(search_score_of(&l->ev), l->cur_o) &&
           search_fits(c, *pk = search_eval_peak(c, &l->cand, d, &l->ev));
}

/* Evaluates cand (cur changed on device d, and maybe key's flag); keeps it when it runs, fits
 * and is better. A faster schedule over the cap gets one more checkpoint on d to fit. */
static bool ls_try(struct ls *l, int d, int key)
{
    const struct search_ctx *c = l->c;
    l->evals++;
    bool ok = search_eval_time(c, &l->cand, &l->ev) &&
              search_better(search_score_of(&l->ev), l->cur_o);
    if (!ok) {
        ls_restore(l, d, key);
        return false;
    }
    struct search_score o = search_score_of(&l->ev);
    double pk = search_eval_peak(c, &l->cand, d, &l->ev);
    int extra = -1;
    if (!search_fits(c, pk)) {
        ok = ls_try_extra(l, d, key, &extra, &pk);
        if (!ok) {
            ls_restore(l, d, key);
            if (extra >= 0)
                l->cand.ck[extra] = l->cur.ck[extra];
            return false;
        }
        o = search_score_of(&l->ev);
    }
    if (c->offload && !ls_others_fit(l, d)) {
        ls_restore(l, d, key);
        if (extra >= 0)
            l->cand.ck[extra] = l->cur.ck[extra];
        return false;
    }
    ls_commit(l, d, key);
    if (extra >= 0)
        l->cur.ck[extra] = l->cand.ck[extra];
    l->cur_o = o;
    l->peak[d] = pk;
    if (c->offload)
        for (int e = 0; e < c->D; e++)
            if (e != d)
                l->peak[e] = l->peak_cand[e];
    l->improvements++;
    return true;
}

/* Offload (search_ctx.offload). Key's forward offloaded in cand: a kept one gets its RL
 * right before its backward, a checkpointed one's RC slot holds its RL; then the RL moved
 * `back` places earlier (while it may cross what it passes). False when it is offloaded
 * already or the RL cannot go that far. */
static bool ls_offload(const struct search_ctx *c, struct search_sched *s, int key, int back)
{
    if (s->ck[key] == SEARCH_CK_OFFLOAD)
        return false;
    if (s->ck[key] == SEARCH_CK_KEEP)
        ls_ckpt(c, s, key);
    s->ck[key] = SEARCH_CK_OFFLOAD;
    int d = c->op[SEARCH_OP(key, SK_RC)].dev, i = ls_find(c, s, d, SEARCH_OP(key, SK_RC));
    return back == 0 || ls_shift(c, s, d, i, i - back);
}

/* How far back from its recompute's (or backward's) place an RL is tried. */
enum { LS_RL_BACK = 3 };

/* Key's forward offloaded instead of kept or checkpointed, its RL 0 .. LS_RL_BACK places
 * earlier; or, offloaded, checkpointed instead. True when one was kept. */
static bool ls_offload_try(struct ls *l, int key)
{
    const struct search_ctx *c = l->c;
    int d = c->op[SEARCH_OP(key, SK_F)].dev;
    if (l->cur.ck[key] == SEARCH_CK_OFFLOAD) {
        l->cand.ck[key] = SEARCH_CK_CKPT;
        return ls_try(l, d, key);
    }
    for (int back = 0; back <= LS_RL_BACK && ls_go(l); back++) {
        if (ls_offload(c, &l->cand, key, back)) {
            if (ls_try(l, d, key))
                return true;
        } else {
            ls_restore(l, d, key);
            break;
        }
    }
    return false;
}

/* Every forward but those whose backward comes right after them, offloaded or, offloaded,
 * checkpointed, one at a time (ls_offload_try). True when one was kept. */
static bool ls_offload_moves(struct ls *l)
{
    const struct search_ctx *c = l->c;
    for (int key = 0; key < c->keys && ls_go(l); key++) {
        int d = c->op[SEARCH_OP(key, SK_F)].dev, f = ls_find(c, &l->cur, d, SEARCH_OP(key, SK_F));
        if (l->cur.ck[key] == SEARCH_CK_KEEP && f + 1 < l->cur.len[d] &&
            ls_ord(c, &l->cur, d)[f + 1] == SEARCH_OP(key, SK_B))
            continue; /* nothing to hide the copies behind */
        if (ls_offload_try(l, key))
            return true;
    }
    return false;
}

/* cur's times (into ev) and critical path. */
static void ls_path(struct ls *l)
{
    const struct search_ctx *c = l->c;
    search_eval_time(c, &l->cur, &l->ev);
    l->n_path = 0;
    for (int op = l->ev.last; op >= 0 && l->n_path < c->n_ops;) {
        l->path[l->n_path++] = op;
        int why = l->ev.why[op];
        if (why == 3) /* a backward that waited for its RL */
            op = SEARCH_OP(SEARCH_KEY(op), SK_RC);
        else if (why == 2)
            op = c->op[op].pred;
        else if (why == 1 && l->ev.pos[op] > 0)
            op = ls_ord(c, &l->cur, c->op[op].dev)[l->ev.pos[op] - 1];
        else
            op = -1;
    }
}

/* One pass over the moves of the critical path; true when one was kept. */
static bool ls_path_moves(struct ls *l)
{
    const struct search_ctx *c = l->c;
    ls_path(l);
    /* the path's why and pos, before candidates overwrite ev */
    for (int k = 0; k < l->n_path && ls_go(l); k++) {
        int x = l->path[k], d = c->op[x].dev;
        int i = ls_find(c, &l->cur, d, x);
        bool waited_device = k + 1 < l->n_path && c->op[l->path[k + 1]].dev == d &&
                             l->path[k + 1] != c->op[x].pred;
        if (SEARCH_KIND(x) == SK_RC) {
            if (ls_unckpt(c, &l->cand, SEARCH_KEY(x)) && ls_try(l, d, SEARCH_KEY(x)))
                return true;
            if (c->offload && ls_offload_try(l, SEARCH_KEY(x)))
                return true;
        }
        if (waited_device && i > 0) {
            int p = ls_ord(c, &l->cur, d)[i - 1];
            if (SEARCH_KIND(p) == SK_RC) {
                if (ls_unckpt(c, &l->cand, SEARCH_KEY(p)) && ls_try(l, d, SEARCH_KEY(p)))
                    return true;
            }
            for (int s = 1; s <= 6 && s <= i; s++)
                if (ls_shift(c, &l->cand, d, i, i - s)) {
                    if (ls_try(l, d, -1))
                        return true;
                } else {
                    break;
                }
            for (int s = 2; s <= 4 && i - 1 + s < l->cur.len[d]; s++)
                if (ls_shift(c, &l->cand, d, i - 1, i - 1 + s)) {
                    if (ls_try(l, d, -1))
                        return true;
                } else {
                    break;
                }
            /* the ops before it, two or three together, after it */
            for (int n = 2; n <= 3 && n <= i; n++)
                for (int s = 1; s <= 4 && i - n + s + n <= l->cur.len[d]; s++)
                    if (ls_shift_block(c, &l->cand, d, i - n, n, i - n + s)) {
                        if (ls_try(l, d, -1))
                            return true;
                    } else {
                        break;
                    }
        } else if (i > 0) { /* it waited for data: fill the gap before it */
            for (int j = i + 1; j <= i + 4 && j < l->cur.len[d]; j++)
                if (ls_shift(c, &l->cand, d, j, i) && ls_try(l, d, -1))
                    return true;
            for (int n = 2; n <= 3 && i + 1 + n <= l->cur.len[d]; n++)
                if (ls_shift_block(c, &l->cand, d, i + 1, n, i) && ls_try(l, d, -1))
                    return true;
        }
    }
    return false;
}

/* The forwards of lane (device d, stage) from micro-batch index m on, each moved past the next
 * backward of the device (later: one fewer in flight from there) or before the previous one
 * (earlier: one more). Returns how many moved. */
static int ls_suffix(const struct search_ctx *c, struct search_sched *s, int d, int stage,
                     int m, bool later)
{
    int *a = ls_ord(c, s, d), len = s->len[d], moved = 0, seen = 0;
    int idx[1024], n = 0; /* positions of the lane's forwards, in order */
    for (int i = 0; i < len && n < 1024; i++)
        if (SEARCH_KIND(a[i]) == SK_F && c->op[a[i]].stage == stage && seen++ >= m)
            idx[n++] = i;
    for (int k = later ? n - 1 : 0; later ? k >= 0 : k < n; k += later ? -1 : 1) {
        int i = idx[k], j = i;
        if (later) {
            while (j + 1 < len && SEARCH_KIND(a[j + 1]) != SK_B)
                j++;
            j++;
            if (j >= len)
                continue;
        } else {
            while (j - 1 >= 0 && SEARCH_KIND(a[j - 1]) != SK_B)
                j--;
            j--;
            if (j < 0)
                continue;
        }
        if (ls_shift(c, s, d, i, j)) {
            moved++;
            /* the positions of the lane's other forwards between i and j moved by one */
            for (int q = 0; q < n; q++)
                if (q != k && idx[q] > (i < j ? i : j) && idx[q] <= (i < j ? j : i))
                    idx[q] += later ? -1 : 1;
            idx[k] = j;
        }
    }
    return moved;
}

/* Every lane's forwards from each micro-batch on, one backward later or earlier; true when one
 * was kept. */
static bool ls_suffix_moves(struct ls *l)
{
    const struct search_ctx *c = l->c;
    const struct plan_geom *g = &c->geom;
    int step = g->mbs > 32 ? g->mbs / 16 : 1;
    for (int d = 0; d < c->D; d++)
        for (int part = 0; part < g->parts; part++) {
            int stage = -1;
            for (int i = 0; i < l->cur.len[d] && stage < 0; i++) {
                int op = ls_ord(c, &l->cur, d)[i];
                if (SEARCH_KIND(op) == SK_F && c->op[op].part == part)
                    stage = c->op[op].stage;
            }
            if (stage < 0)
                continue;
            for (int m = 1; m < g->mbs && ls_go(l); m += step)
                for (int dir = 0; dir < 2; dir++)
                    if (ls_suffix(c, &l->cand, d, stage, m, dir == 0) > 0) {
                        if (ls_try(l, d, -1))
                            return true;
                    } else {
                        ls_restore(l, d, -1);
                    }
        }
    return false;
}

/* Forward key (kept) moved after position j of device d, with the forwards of its lane that lay
 * between it and j (they stay after it, in order); the other ops it passed run before it. The
 * window is short (KEEP_SPAN): false when it is longer, or when two ops that change order may
 * not trade places. */
enum { KEEP_SPAN = 24 };

static bool ls_keep_at(const struct search_ctx *c, struct search_sched *s, int d, int key, int j)
{
    int *a = ls_ord(c, s, d), f = SEARCH_OP(key, SK_F), i = ls_find(c, s, d, f);
    if (i < 0 || j <= i || j - i >= KEEP_SPAN || j >= s->len[d])
        return false;
    int stage = c->op[f].stage, old[KEEP_SPAN + 1], n = j - i + 1, k = 0;
    memcpy(old, a + i, (size_t)n * sizeof(int));
    /* the others first, then the lane's forwards (F_key first) */
    for (int t = 1; t < n; t++)
        if (!(SEARCH_KIND(old[t]) == SK_F && c->op[old[t]].stage == stage))
            a[i + k++] = old[t];
    for (int t = 0; t < n; t++)
        if (t == 0 || (SEARCH_KIND(old[t]) == SK_F && c->op[old[t]].stage == stage))
            a[i + k++] = old[t];
    /* every pair whose order flipped: a lane forward (old[u]) now after another op (old[v]) */
    for (int u = 0; u < n; u++) {
        if (!(u == 0 || (SEARCH_KIND(old[u]) == SK_F && c->op[old[u]].stage == stage)))
            continue;
        for (int v = u + 1; v < n; v++)
            if (!(SEARCH_KIND(old[v]) == SK_F && c->op[old[v]].stage == stage) &&
                !search_may_swap(c, old[u], old[v])) {
                memcpy(a + i, old, (size_t)n * sizeof(int));
                return false;
            }
    }
    return true;
}

/* Every checkpoint tried without its recompute: where it is (memory may allow it, or allow it
 * with another forward checkpointed instead), then with its forward moved later, after each
 * recompute or backward before its own backward, latest first: a forward kept from just after
 * the device's last other activation was freed, with only checkpoints between, needs no
 * recompute at a cap of one activation (V 4 x 8 at 1.05 M_θ: the optimum keeps F4 on device 2
 * that way). True when one was kept. */
static bool ls_drop_checkpoints(struct ls *l)
{
    const struct search_ctx *c = l->c;
    for (int key = 0; key < c->keys && ls_go(l); key++) {
        if (!l->cur.ck[key])
            continue;
        int d = c->op[SEARCH_OP(key, SK_RC)].dev;
        if (ls_unckpt(c, &l->cand, key) && ls_try(l, d, key))
            return true;
        const int *a = ls_ord(c, &l->cur, d);
        int i = ls_find(c, &l->cur, d, SEARCH_OP(key, SK_F));
        int b = ls_find(c, &l->cur, d, SEARCH_OP(key, SK_RC));
        for (int j = b - 1; j > i && j - i < KEEP_SPAN && ls_go(l); j--) {
            int kind = SEARCH_KIND(a[j]);
            if (kind == SK_F)
                continue;
            /* positions in cand, which has the recompute dropped: unchanged before b */
            if (ls_unckpt(c, &l->cand, key) && ls_keep_at(c, &l->cand, d, key, j) &&
                ls_try(l, d, key))
                return true;
            ls_restore(l, d, key);
        }
    }
    return false;
}

/* A few random legal swaps and checkpoint flips on cur, kept only if the result runs and fits. */
static bool ls_kick(struct ls *l)
{
    const struct search_ctx *c = l->c;
    for (int tries = 0; tries < 20; tries++) {
        search_sched_copy(c, &l->cand, &l->cur);
        int moves = 2 + (int)(ls_rand(l) % 4);
        for (int m = 0; m < moves; m++) {
            int d = (int)(ls_rand(l) % (uint64_t)c->D);
            if (l->cand.len[d] < 2)
                continue;
            if (ls_rand(l) % 4 == 0) {
                int key = (int)(ls_rand(l) % (uint64_t)c->keys);
                if (c->offload && l->cand.ck[key] && ls_rand(l) % 2 == 0)
                    l->cand.ck[key] = l->cand.ck[key] == SEARCH_CK_CKPT ? SEARCH_CK_OFFLOAD
                                                                        : SEARCH_CK_CKPT;
                else if (l->cand.ck[key])
                    ls_unckpt(c, &l->cand, key);
                else
                    ls_ckpt(c, &l->cand, key);
                continue;
            }
            int i = (int)(ls_rand(l) % (uint64_t)(l->cand.len[d] - 1));
            int s = 1 + (int)(ls_rand(l) % 3);
            ls_shift(c, &l->cand, d, i, i + s < l->cand.len[d] ? i + s : l->cand.len[d] - 1);
        }
        l->evals++;
        if (!search_eval_time(c, &l->cand, &l->ev))
            continue;
        bool fits = true;
        for (int d = 0; d < c->D && fits; d++)
            fits = search_fits(c, l->peak[d] = search_eval_peak(c, &l->cand, d, &l->ev));
        if (!fits)
            continue;
        search_sched_copy(c, &l->cur, &l->cand);
        l->cur_o = search_score_of(&l->ev);
        return true;
    }
    search_sched_copy(c, &l->cand, &l->cur);
    for (int d = 0; d < c->D; d++)
        l->peak[d] = search_eval_peak(c, &l->cur, d, &l->ev);
    return false;
}

double search_local(const struct search_ctx *c, struct search_sched *s, long budget,
                    long patience, unsigned seed, struct search_ls_stats *st)
{
    long last_best = 0; /* evaluations when the best last improved */
    struct ls l = {.c = c, .budget = budget, .rng = 0x9E3779B97F4A7C15ull ^ seed};
    search_eval_init(c, &l.ev);
    search_sched_init(c, &l.cur);
    search_sched_init(c, &l.cand);
    search_sched_init(c, &l.best);
    search_sched_copy(c, &l.cur, s);
    search_sched_copy(c, &l.cand, s);
    search_sched_copy(c, &l.best, s);
    l.peak = xcalloc((size_t)c->D, sizeof(double));
    l.peak_cand = xcalloc((size_t)c->D, sizeof(double));
    l.b_pos = xmalloc(((size_t)c->keys + 1) * sizeof(int));
    l.path = xmalloc(((size_t)c->n_ops + 1) * sizeof(int));
    search_eval_time(c, &l.cur, &l.ev);
    l.cur_o = l.best_o = search_score_of(&l.ev);
    for (int d = 0; d < c->D; d++)
        l.peak[d] = search_eval_peak(c, &l.cur, d, &l.ev);
    while (ls_go(&l) && (patience <= 0 || l.evals - last_best < patience)) {
        if (ls_path_moves(&l) || ls_drop_checkpoints(&l) ||
            (c->offload && ls_offload_moves(&l)) || ls_suffix_moves(&l)) {
            if (search_better(l.cur_o, l.best_o)) {
                search_sched_copy(c, &l.best, &l.cur);
                last_best = l.evals;
                l.best_o = l.cur_o;
            }
            continue;
        }
        /* a local optimum: kick from the best so far */
        search_sched_copy(c, &l.cur, &l.best);
        l.cur_o = l.best_o;
        for (int d = 0; d < c->D; d++)
            l.peak[d] = search_eval_peak(c, &l.cur, d, &l.ev);
        search_sched_copy(c, &l.cand, &l.cur);
        if (!ls_kick(&l))
            break;
    }
    search_sched_copy(c, s, &l.best);
    if (st) {
        st->evals += l.evals;
        st->improvements += l.improvements;
    }
    double ms = l.best_o.ms;
    free(l.peak);
    free(l.peak_cand);
    free(l.b_pos);
    free(l.path);
    search_sched_fini(&l.cur);
    search_sched_fini(&l.cand);
    search_sched_fini(&l.best);
    search_eval_fini(&l.ev);
    return ms;
}
