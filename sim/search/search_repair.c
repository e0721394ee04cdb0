/* sim/search/search_repair.c: the repair of a schedule to fit the cap (search_repair, one of the
 * search's starts): on each device over the cap, every W next to its B, then the forward kept
 * longest (most places between it and its backward, the first of equals) checkpointed, its
 * recompute right before its backward, one at a time until the device fits.
 *
 * Incremental (issue 27: the search's set-up in O(n log n)): a walk of the device's list after
 * each checkpoint was O(checkpoints x ops), seconds at 2,048 micro-batches. Two segment trees
 * with lazy range adds hold what the walk and the scan would find:
 *   - the memory walk: a leaf per instruction of the device's list (search_eval_expand) and a
 *     slot before each kept forward's backward for its recompute, each leaf holding what is
 *     held before it (P) and the most it is seen to hold (P plus its take or its transient).
 *     A checkpoint changes the forward's leaf (FW to CFW), lowers P from there to the slot by
 *     what the CFW does not keep, fills the slot (the RC, which now reaps the send buffer that
 *     the backward's first instruction reaped) and leaves P after that unchanged.
 *   - the longest kept forward: its places to its backward, plus one for each recompute put
 *     between them since; a recompute goes right before its backward, so it lies inside the
 *     forwards whose forward is before and whose backward is after that backward. Forwards
 *     split into chains in which both the forwards and the backwards are in order (one per
 *     stage on the device, as each stage runs its micro-batches in order), so those are one
 *     range of each chain.
 * The tree's sums are grouped differently from the walk's, so a peak within rounding of the
 * cap is decided by the walk itself: the same checkpoints in the same order as the walk after
 * each (tests/unit/test_search_repair.c holds that walk and compares on random plans). */
#include <config.h>
#include "sim/search/search_internal.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/core/memory.h"
#include "util/xalloc.h"

/* A max segment tree with range adds, lazy tags never pushed down: a leaf's value is its mx
 * plus its proper ancestors' tags. Leaves past n are -inf. */
struct rtree {
    int size;        /* leaves: a power of two */
    double *mx, *tag; /* [2 size] */
};

static void rtree_init(struct rtree *t, int n)
{
    t->size = 1;
    while (t->size < n)
        t->size *= 2;
    t->mx = xmalloc(2 * (size_t)t->size * sizeof(double));
    t->tag = xcalloc(2 * (size_t)t->size, sizeof(double));
    for (int i = 0; i < 2 * t->size; i++)
        t->mx[i] = -INFINITY;
}

static void rtree_fini(struct rtree *t)
{
    free(t->mx);
    free(t->tag);
}

static double rtree_max2(double a, double b)
{
    return a > b ? a : b;
}

/* After the leaves were set: every inner node from its children. */
static void rtree_build(struct rtree *t)
{
    for (int i = t->size - 1; i >= 1; i--)
        t->mx[i] = rtree_max2(t->mx[2 * i], t->mx[2 * i + 1]) + t->tag[i];
}

static void rtree_pull(struct rtree *t, int node)
{
    for (node >>= 1; node >= 1; node >>= 1)
        t->mx[node] = rtree_max2(t->mx[2 * node], t->mx[2 * node + 1]) + t->tag[node];
}

/* Adds x to the leaves [l, r). */
static void rtree_add(struct rtree *t, int l, int r, double x)
{
    if (l >= r || x == 0)
        return;
    int l0 = l + t->size, r0 = r - 1 + t->size;
    for (l += t->size, r += t->size; l < r; l >>= 1, r >>= 1) {
        if (l & 1) {
            t->mx[l] += x;
            t->tag[l++] += x;
        }
        if (r & 1) {
            t->mx[--r] += x;
            t->tag[r] += x;
        }
    }
    rtree_pull(t, l0);
    rtree_pull(t, r0);
}

/* What leaf i's proper ancestors add to it. */
static double rtree_above(const struct rtree *t, int i)
{
    double a = 0;
    for (int node = (i + t->size) >> 1; node >= 1; node >>= 1)
        a += t->tag[node];
    return a;
}

/* Leaf i's value becomes v. */
static void rtree_set(struct rtree *t, int i, double v)
{
    t->mx[i + t->size] = v - rtree_above(t, i);
    rtree_pull(t, i + t->size);
}

/* ---- the memory walk of one device ---- */

struct repair_mem {
    struct rtree top; /* the most each instruction is seen to hold */
    double *held;     /* [leaves]: what was held before it when built; the adds since are
                       * the tree's tags over it */
    double scale;     /* the largest magnitude met: the tree's rounding is relative to it */
    int leaves;
};

/* The most in holds from cur on with step m: its transient and what it holds after its take
 * (mem_device_peak's two maxima). */
static double repair_seen(const struct search_ctx *c, const struct instr *in, double cur,
                          struct mem_step m)
{
    return rtree_max2(mem_transient(&c->cost, in, cur, m), cur + m.take);
}

/* What a checkpoint of key needs to find in the trees. */
struct repair_key {
    int f_leaf;    /* its forward's instruction */
    int rc_leaf;   /* the slot of its recompute (right before its backward's first) */
    double reaped; /* the send buffer its backward's first instruction reaped */
    int f_buf;     /* the forward's index in the expanded list */
    int span_leaf; /* its place in the span tree */
};

/* What leaf i holds before it now. */
static double repair_mem_held(const struct repair_mem *rm, int i)
{
    return rm->held[i] + (rm->top.tag[i + rm->top.size] + rtree_above(&rm->top, i));
}

/* ---- the repair ---- */

/* Every W of device d right after its B, the other ops in their order (a W met before its B
 * stays). met: [n_ops] zeroed scratch, left zeroed; tmp: room for the order. */
static void repair_w_after_b(const struct search_ctx *c, struct search_sched *s, int d,
                             unsigned char *met, int *tmp)
{
    int *a = s->ord + (size_t)d * c->stride, n = 0;
    for (int i = 0; i < s->len[d]; i++) {
        int op = a[i], key = SEARCH_KEY(op);
        if (SEARCH_KIND(op) == SK_W) {
            if (!met[op])
                tmp[n++] = op;
            met[op] = 1;
            continue;
        }
        tmp[n++] = op;
        int w = SEARCH_OP(key, SK_W);
        if (SEARCH_KIND(op) == SK_B && c->split[key] && !met[w]) {
            tmp[n++] = w;
            met[w] = 1;
        }
    }
    for (int i = 0; i < s->len[d]; i++)
        met[SEARCH_OP(SEARCH_KEY(a[i]), SK_W)] = 0;
    memcpy(a, tmp, (size_t)n * sizeof(int));
}

struct repair {
    const struct search_ctx *c;
    struct search_sched *s;
    struct search_eval *ev;
    int d;
    int *base, n_base;       /* the device's order before any recompute was added */
    int *pos;                /* [n_ops]: an op's place in base */
    unsigned char *added;    /* [keys]: checkpointed by this repair */
    int n_added;
    struct repair_key *rk;   /* [keys] */
    /* the kept forwards in chains: chain j holds [chain_off[j], chain_off[j + 1]) */
    int *chain_f, *chain_b, *chain_off, n_chains;
    struct rtree span;       /* each kept forward's span, as span * 2^26 + 2^26 - 1 - its place */
};

#define REPAIR_PLACE (1 << 26)

/* The order with the recomputes of the forwards this repair checkpointed, each right before its
 * backward. */
static void repair_flush(struct repair *r)
{
    int *a = r->s->ord + (size_t)r->d * r->c->stride, n = 0;
    for (int i = 0; i < r->n_base; i++) {
        int op = r->base[i], key = SEARCH_KEY(op);
        if (SEARCH_KIND(op) == SK_B && r->added[key])
            a[n++] = SEARCH_OP(key, SK_RC);
        a[n++] = op;
    }
    r->s->len[r->d] = n;
}

/* The chains of the kept forwards (each forward on the first chain whose last backward is
 * before its own: the fewest chains), each a range of the span tree. */
static void repair_chains(struct repair *r, int *last, int *chain_of, int n_kept,
                          const int *kept)
{
    r->n_chains = 0;
    for (int i = 0; i < n_kept; i++) {
        int b = r->pos[SEARCH_OP(kept[i], SK_B)];
        /* lasts decrease along the chains: the first below b by bisection */
        int lo = 0, hi = r->n_chains;
        while (lo < hi) {
            int mid = (lo + hi) / 2;
            if (last[mid] < b)
                hi = mid;
            else
                lo = mid + 1;
        }
        if (lo == r->n_chains)
            r->n_chains++;
        last[lo] = b;
        chain_of[i] = lo;
    }
    for (int j = 0; j <= r->n_chains; j++)
        r->chain_off[j] = 0;
    for (int i = 0; i < n_kept; i++)
        r->chain_off[chain_of[i] + 1]++;
    for (int j = 0; j < r->n_chains; j++)
        r->chain_off[j + 1] += r->chain_off[j];
    for (int j = 0; j < r->n_chains; j++)
        last[j] = r->chain_off[j]; /* the next free place of chain j */
    rtree_init(&r->span, n_kept);
    for (int i = 0; i < n_kept; i++) {
        int at = last[chain_of[i]]++, f = r->pos[SEARCH_OP(kept[i], SK_F)];
        int b = r->pos[SEARCH_OP(kept[i], SK_B)];
        r->rk[kept[i]].span_leaf = at;
        r->chain_f[at] = f;
        r->chain_b[at] = b;
        r->span.mx[r->span.size + at] = (double)(b - f) * REPAIR_PLACE + (REPAIR_PLACE - 1 - f);
    }
    rtree_build(&r->span);
}

/* The kept forward of longest span (the first of equals); -1 none. */
static int repair_longest(const struct repair *r)
{
    double v = r->span.mx[1];
    if (!(v > -INFINITY))
        return -1;
    int f = REPAIR_PLACE - 1 - (int)fmod(v, REPAIR_PLACE);
    return SEARCH_KEY(r->base[f]);
}

/* key's forward checkpointed in the span tree: it leaves, and each kept forward around its
 * backward's place gets one more place. */
static void repair_span_ckpt(struct repair *r, int key)
{
    int x = r->pos[SEARCH_OP(key, SK_B)];
    for (int j = 0; j < r->n_chains; j++) {
        const int *f = r->chain_f, *b = r->chain_b;
        int lo = r->chain_off[j], hi = r->chain_off[j + 1];
        /* [first with b > x, first with f >= x) */
        int a0 = lo, a1 = hi;
        while (a0 < a1) {
            int mid = (a0 + a1) / 2;
            if (b[mid] > x)
                a1 = mid;
            else
                a0 = mid + 1;
        }
        int e0 = lo, e1 = hi;
        while (e0 < e1) {
            int mid = (e0 + e1) / 2;
            if (f[mid] >= x)
                e1 = mid;
            else
                e0 = mid + 1;
        }
        rtree_add(&r->span, a0, e0, REPAIR_PLACE);
    }
}

/* The memory trees of device d's order (base, no recompute added yet) and each kept forward's
 * leaves. */
static void repair_mem_build(struct repair *r, struct repair_mem *rm, int *group)
{
    const struct search_ctx *c = r->c;
    struct search_eval *ev = r->ev;
    int n = search_eval_expand(c, r->s, r->d, ev, group);
    struct mem_step *steps = xmalloc(((size_t)n + 1) * sizeof *steps);
    mem_device_steps(&c->cost, ev->buf, n, steps);
    int slots = 0;
    for (int i = 0; i < r->n_base; i++)
        slots += SEARCH_KIND(r->base[i]) == SK_B && r->s->ck[SEARCH_KEY(r->base[i])] ==
                                                        SEARCH_CK_KEEP;
    rm->leaves = n + slots;
    rtree_init(&rm->top, rm->leaves);
    rm->held = xmalloc(((size_t)rm->leaves + 1) * sizeof(double));
    double cur = 0, scale = c->cap > 0 ? c->cap : 0;
    int leaf = 0;
    for (int i = 0; i < r->n_base; i++) {
        int op = r->base[i], key = SEARCH_KEY(op);
        int end = i + 1 < r->n_base ? group[i + 1] : n;
        if (SEARCH_KIND(op) == SK_B && r->s->ck[key] == SEARCH_CK_KEEP) {
            r->rk[key].rc_leaf = leaf;
            r->rk[key].reaped = steps[group[i]].reap;
            rm->held[leaf++] = cur; /* the slot: empty */
        }
        for (int j = group[i]; j < end; j++) {
            if (j == end - 1 - (c->op[op].out_dev >= 0) && SEARCH_KIND(op) == SK_F) {
                r->rk[key].f_leaf = leaf;
                r->rk[key].f_buf = j;
            }
            double seen = repair_seen(c, &ev->buf[j], cur, steps[j]);
            rm->top.mx[rm->top.size + leaf] = seen;
            rm->held[leaf++] = cur;
            cur += steps[j].take;
            cur -= steps[j].give + steps[j].reap;
            scale = rtree_max2(scale, rtree_max2(fabs(cur), fabs(seen)));
        }
    }
    rtree_build(&rm->top);
    free(steps);
    /* each leaf's value is a sum regrouped at most once per checkpoint and tree level */
    rm->scale = scale;
}

/* key's forward checkpointed in the memory trees. */
static void repair_mem_ckpt(const struct repair *r, struct repair_mem *rm, int key)
{
    const struct search_ctx *c = r->c;
    const struct repair_key *k = &r->rk[key];
    struct instr fw = r->ev->buf[k->f_buf], cfw = fw, rc = fw;
    cfw.op = OP_CFW;
    rc.op = OP_RC;
    rc.peer = -1;
    rc.paired = 0; /* a recompute pairs with nothing (sim/core/overlap.h) */
    struct mem_step m_fw = mem_step(&c->cost, &fw), m_cfw = mem_step(&c->cost, &cfw);
    struct mem_step m_rc = mem_step(&c->cost, &rc);
    m_rc.reap = k->reaped;
    double d_f = (m_cfw.take - m_cfw.give) - (m_fw.take - m_fw.give);
    /* the forward itself: what it holds before is unchanged */
    double p = repair_mem_held(rm, k->f_leaf);
    rtree_set(&rm->top, k->f_leaf, repair_seen(c, &cfw, p, m_cfw));
    rtree_add(&rm->top, k->f_leaf + 1, k->rc_leaf + 1, d_f);
    /* the recompute's slot */
    p = repair_mem_held(rm, k->rc_leaf);
    rtree_set(&rm->top, k->rc_leaf, repair_seen(c, &rc, p, m_rc));
    double d_rc = m_rc.take - m_rc.give - m_rc.reap;
    /* the backward's first instruction no longer reaps; after it, what the two changes left */
    rtree_add(&rm->top, k->rc_leaf + 1, k->rc_leaf + 2, d_f + d_rc);
    rtree_add(&rm->top, k->rc_leaf + 2, rm->leaves, d_f + (m_rc.take - m_rc.give));
}

/* Whether device d fits, from the tree when it is clear of the cap by more than the trees'
 * rounding, else by the walk (the recomputes put in place first). */
static bool repair_fits(struct repair *r, const struct repair_mem *rm)
{
    const struct search_ctx *c = r->c;
    if (!(c->cap > 0))
        return true;
    double top = rtree_max2(0, rm->top.mx[1]), peak = c->stat[r->d] + top;
    double line = c->cap * (1 + 1e-12);
    double tol = 16 * DBL_EPSILON * (rm->scale + c->stat[r->d]) * (rm->leaves + r->n_added + 64);
    if (peak > line + tol)
        return false;
    if (peak < line - tol)
        return true;
    repair_flush(r);
    return search_fits(c, search_eval_peak(c, r->s, r->d, r->ev));
}

/* Device d repaired (it is over the cap). */
static bool repair_device(struct repair *r, int *scratch, int *group)
{
    const struct search_ctx *c = r->c;
    struct search_sched *s = r->s;
    int d = r->d, *ord = s->ord + (size_t)d * c->stride;
    r->n_base = s->len[d];
    memcpy(r->base, ord, (size_t)r->n_base * sizeof(int));
    int n_kept = 0, *kept = scratch;
    for (int i = 0; i < r->n_base; i++) {
        int op = r->base[i];
        r->pos[op] = i;
        if (SEARCH_KIND(op) == SK_F && s->ck[SEARCH_KEY(op)] == SEARCH_CK_KEEP)
            kept[n_kept++] = SEARCH_KEY(op);
    }
    r->n_added = 0;
    repair_chains(r, scratch + n_kept, scratch + 2 * n_kept, n_kept, kept);
    struct repair_mem rm;
    repair_mem_build(r, &rm, group);
    search_progress_work(c, rm.leaves);
    bool ok = true;
    for (;;) {
        if (c->offload ? search_fits(c, search_eval_peak(c, s, d, r->ev)) : repair_fits(r, &rm))
            break;
        search_progress_work(c, 64);
        int key = search_stopped(c) ? -1 : repair_longest(r);
        if (key < 0) {
            ok = false;
            break;
        }
        s->ck[key] = SEARCH_CK_CKPT;
        r->added[key] = 1;
        r->n_added++;
        rtree_set(&r->span, r->rk[key].span_leaf, -INFINITY);
        repair_span_ckpt(r, key);
        repair_mem_ckpt(r, &rm, key);
        if (c->offload) /* the walk is timed: the order as it is now */
            repair_flush(r);
    }
    repair_flush(r);
    for (int i = 0; i < r->n_base; i++)
        r->added[SEARCH_KEY(r->base[i])] = 0;
    rtree_fini(&rm.top);
    free(rm.held);
    rtree_fini(&r->span);
    return ok;
}

bool search_repair(const struct search_ctx *c, struct search_sched *s, struct search_eval *ev)
{
    struct repair r = {.c = c, .s = s, .ev = ev};
    size_t n = (size_t)c->stride + 1;
    unsigned char *met = xcalloc((size_t)c->n_ops + 1, 1);
    int *scratch = xmalloc(3 * n * sizeof(int)), *group = xmalloc(n * sizeof(int));
    r.base = xmalloc(n * sizeof(int));
    r.pos = xmalloc(((size_t)c->n_ops + 1) * sizeof(int));
    r.added = xcalloc((size_t)c->keys + 1, 1);
    r.rk = xcalloc((size_t)c->keys + 1, sizeof *r.rk);
    r.chain_f = xmalloc(n * sizeof(int));
    r.chain_b = xmalloc(n * sizeof(int));
    r.chain_off = xmalloc((n + 1) * sizeof(int));
    bool ok = true;
    for (int d = 0; d < c->D && ok; d++) {
        if (search_fits(c, search_eval_peak(c, s, d, ev)))
            continue;
        repair_w_after_b(c, s, d, met, scratch);
        r.d = d;
        ok = repair_device(&r, scratch, group);
    }
    free(met);
    free(scratch);
    free(group);
    free(r.base);
    free(r.pos);
    free(r.added);
    free(r.rk);
    free(r.chain_f);
    free(r.chain_b);
    free(r.chain_off);
    return ok;
}
