/* sim/passes/pass_prepose.c: §5.1 pass 4, prepose-forward. "Prepose the checkpointed forward
 * instructions to the earliest pipeline bubbles ... leaving its original position idle. This
 * allows pass 2 to move the recomputation into this idle place" (Figure 2, step 4: 23t -> 22t).
 *
 * The bubbles are read off the input's simulated timeline: on each device, the idle time
 * before an instruction that waits (for a receive, or a dependency) is a gap. The CFWs are
 * taken in the order they started in the input (so a sender is decided before its receiver,
 * whatever the scheme), and each goes to the earliest gap before it on its device that
 *   - it fits in whole (the instruction after the gap is not delayed),
 *   - opens after its input is ready: the matching send has arrived (or, with rendezvous
 *     sends, could arrive), or, when the sender's CFW was preposed in this same pass and its
 *     send can travel with it, when that preposed forward's output arrives,
 *   - it reaches crossing no receive from the peer its own receive comes from, and not its
 *     own dependency on the device (every channel keeps its order of messages),
 *   - keeps every device under the memory budget: a preposed CFW holds its checkpoint (and
 *     the buffer of its output, until its send) from the new position to the old one, and the
 *     device's peak may rise up to the highest peak any device of the input has (activations
 *     stay at the checkpointed level: only checkpoints accumulate, and only on devices with
 *     headroom; the plan's peak memory does not grow: a candidate whose simulated peak does
 *     is not kept).
 * The receive of a preposed CFW moves with it. Its send moves too when the next device also
 * preposes the matching forward and the send crosses no other send to that device (the
 * paper's case 1, CFW_{4|5}); otherwise the send stays where it was and the output waits in a
 * buffer (case 2, CFW_{6|7}), so blocking p2p still pairs every send with its receive in
 * order. No scheme is special-cased: dependencies, peers and placements come from the virtual
 * pipeline. The rewrite is kept only when the simulated step gets shorter; the pipeline then
 * runs passes 2-4 again. */
#include <config.h>
#include "sim/passes/pass.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/cost.h"
#include "sim/core/memory.h"
#include "sim/schemes/scheme.h"
#include "sim/core/vpipe.h"
#include "util/err.h"
#include "util/xalloc.h"

#define PREPOSE_EPS 1e-9

struct prepose_move {
    int dev;
    int cfw, ra, sa; /* positions in the input; ra / sa -1 when none */
    int to;          /* insert before this input position */
    bool sa_free;    /* the send could move up with the CFW (crosses no send to its peer) */
    bool sa_moves;
};

/* The walk back from a forward's place looks for the earliest gap that takes it; walking it one
 * instruction at a time cost O(n) per forward (O(n^2) a pass: 42 M steps for 4,096 micro-batches
 * of V on 32 devices, where 127 k forwards meet 4 k gaps long enough). Two max trees over the
 * instruction ids find what the walk stops at: the rightmost gap long enough, and the rightmost
 * instruction whose peak with the checkpoint held would pass the budget. Each compares the
 * values the walk compared (a max passes a monotone test when one of its values does), so the
 * decisions, and the plan, are the walk's to the bit. Leaves hold blocks of PREPOSE_BLOCK
 * values: the tree stays small beside the per-instruction arrays. */
#define PREPOSE_BLOCK 16

struct prepose_maxtree {
    const double *v; /* the values, v[0 .. n) */
    int n, leaves;   /* leaves: a power of two, at least one per block */
    double *node;    /* [2 * leaves]: node 1 the root, node k's children 2k and 2k + 1,
                      * node leaves + b the max of block b (-inf past the end) */
};

/* The tests a value is put to, each monotone (true for every value above one that passes). */
enum prepose_test_kind {
    PREPOSE_TEST_FITS, /* a gap of this length takes the forward: !(v < a) */
    PREPOSE_TEST_OVER, /* a peak that, with a added, passes the budget b: v + a > b */
};

struct prepose_test {
    enum prepose_test_kind kind;
    double a, b;
};

static bool prepose_test_pass(const struct prepose_test *t, double v)
{
    return t->kind == PREPOSE_TEST_FITS ? !(v < t->a) : v + t->a > t->b;
}

static void prepose_maxtree_block(struct prepose_maxtree *t, int b)
{
    double m = -INFINITY;
    int end = (b + 1) * PREPOSE_BLOCK < t->n ? (b + 1) * PREPOSE_BLOCK : t->n;
    for (int i = b * PREPOSE_BLOCK; i < end; i++)
        m = t->v[i] > m ? t->v[i] : m;
    int k = t->leaves + b;
    t->node[k] = m;
    for (k /= 2; k >= 1; k /= 2)
        t->node[k] = t->node[2 * k] > t->node[2 * k + 1] ? t->node[2 * k] : t->node[2 * k + 1];
}

static void prepose_maxtree_init(struct prepose_maxtree *t, const double *v, int n)
{
    int blocks = (n + PREPOSE_BLOCK - 1) / PREPOSE_BLOCK;
    t->v = v;
    t->n = n;
    for (t->leaves = 1; t->leaves < blocks; t->leaves *= 2)
        ;
    t->node = xmalloc(2 * (size_t)t->leaves * sizeof *t->node);
    for (int k = 0; k < 2 * t->leaves; k++)
        t->node[k] = -INFINITY;
    for (int b = 0; b < blocks; b++) {
        double m = -INFINITY;
        int end = (b + 1) * PREPOSE_BLOCK < n ? (b + 1) * PREPOSE_BLOCK : n;
        for (int i = b * PREPOSE_BLOCK; i < end; i++)
            m = v[i] > m ? v[i] : m;
        t->node[t->leaves + b] = m;
    }
    for (int k = t->leaves - 1; k >= 1; k--)
        t->node[k] = t->node[2 * k] > t->node[2 * k + 1] ? t->node[2 * k] : t->node[2 * k + 1];
}

/* After v[lo .. hi] changed. */
static void prepose_maxtree_update(struct prepose_maxtree *t, int lo, int hi)
{
    for (int b = lo / PREPOSE_BLOCK; b <= hi / PREPOSE_BLOCK; b++)
        prepose_maxtree_block(t, b);
}

/* The rightmost block in [l, r] under node k (covering blocks [nl, nr]) whose max passes; -1. */
static int prepose_maxtree_last_block(const struct prepose_maxtree *t, int k, int nl, int nr, int l,
                                      int r, const struct prepose_test *q)
{
    if (nr < l || nl > r || !prepose_test_pass(q, t->node[k]))
        return -1;
    if (nl == nr)
        return nl;
    int mid = nl + (nr - nl) / 2;
    int b = prepose_maxtree_last_block(t, 2 * k + 1, mid + 1, nr, l, r, q);
    return b >= 0 ? b : prepose_maxtree_last_block(t, 2 * k, nl, mid, l, r, q);
}

/* The rightmost i in [lo, hi] whose v[i] passes q; -1 when none. */
static int prepose_maxtree_last(const struct prepose_maxtree *t, int lo, int hi,
                                const struct prepose_test *q)
{
    if (lo > hi)
        return -1;
    int blo = lo / PREPOSE_BLOCK, bhi = hi / PREPOSE_BLOCK;
    int stop = bhi * PREPOSE_BLOCK > lo ? bhi * PREPOSE_BLOCK : lo;
    for (int i = hi; i >= stop; i--)
        if (prepose_test_pass(q, t->v[i]))
            return i;
    if (blo == bhi)
        return -1;
    int b = prepose_maxtree_last_block(t, 1, 0, t->leaves - 1, blo + 1, bhi - 1, q);
    if (b >= 0)
        for (int i = (b + 1) * PREPOSE_BLOCK - 1;; i--)
            if (prepose_test_pass(q, t->v[i]))
                return i;
    for (int i = (blo + 1) * PREPOSE_BLOCK - 1; i >= lo; i--)
        if (prepose_test_pass(q, t->v[i]))
            return i;
    return -1;
}

/* Everything is indexed by instruction id of the input; the arrays point into one arena. */
struct prepose_ctx {
    void *arena;
    const struct plan *in;
    const struct sim_result *r;
    const struct cost_model *cost;
    const struct vpipe_index *x;
    const struct plan_geom *g;
    int *dev_of, *pos_of; /* where each instruction is */
    double *free_before;  /* when the device was free before each instruction */
    double *gap_t;        /* where the idle time before each instruction starts (moves fill it) */
    double *gap_len;      /* how much of it is left */
    double *mem;          /* device memory after each instruction, preposed checkpoints added */
    double *top;          /* the same while each instruction runs (before it gives back) */
    double budget;        /* the highest device peak of the input (bytes; M_θ units) */
    double eps;           /* time tolerance */
    struct prepose_move *mv;
    int n_mv;
    int *move_of;    /* [mbs * stages]: index in mv of the preposed forward of (mb, stage), or -1 */
    double *new_end; /* [mbs * stages]: estimated end of a preposed forward */
    int *prev_recv;  /* a receive's id -> the position of the previous receive on its device
                      * from the same peer, -1 when none (undefined for other instructions) */
    struct prepose_maxtree gap_tree, top_tree; /* over gap_len and top */
};

struct prepose_order {
    double start;
    int id;
};

static int prepose_order_cmp(const void *a, const void *b)
{
    const struct prepose_order *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->id - y->id;
}

static int prepose_move_cmp(const void *a, const void *b)
{
    const struct prepose_move *x = a, *y = b;
    if (x->dev != y->dev)
        return x->dev - y->dev;
    if (x->to != y->to)
        return x->to - y->to;
    return x->cfw - y->cfw;
}

static size_t prepose_key(const struct prepose_ctx *c, const struct instr *in)
{
    return (size_t)in->mb * c->g->stages + in->stage;
}

/* When the input of the forward `id` can be on its device, and the last position on the
 * device it must stay after (-1: none). */
static int prepose_deps(const struct prepose_ctx *c, int id, int deps[VPIPE_MAX_DEPS])
{
    return vpipe_deps_at(c->in, c->x, c->dev_of[id], c->pos_of[id], deps, NULL);
}

static double prepose_ready(struct prepose_ctx *c, int id, int *after)
{
    const struct sim_result *r = c->r;
    int deps[VPIPE_MAX_DEPS], dev = c->dev_of[id];
    int n = prepose_deps(c, id, deps);
    double ready = 0;
    *after = -1;
    for (int k = 0; k < n; k++) {
        int dd = c->dev_of[deps[k]], di = c->pos_of[deps[k]];
        const struct instr *o = plan_at(c->in, dd, di);
        if (o->op != OP_RA) {
            ready = fmax(ready, r->end[deps[k]]);
            if (dd == dev && di > *after)
                *after = di;
            continue;
        }
        /* The matching send: its data arrives when the sender has reached it and what it
         * sends is done, plus the transfer; earlier when the sender's forward was preposed
         * and the send can go with it. */
        int sd[VPIPE_MAX_DEPS];
        int m = prepose_deps(c, deps[k], sd);
        for (int q = 0; q < m; q++) {
            int sa = sd[q], ssd[VPIPE_MAX_DEPS];
            double t = c->free_before[sa], xfer = r->end[sa] - r->start[sa];
            int w = prepose_deps(c, sa, ssd);
            for (int u = 0; u < w; u++)
                t = fmax(t, r->end[ssd[u]]);
            t += xfer;
            size_t key = prepose_key(c, plan_at(c->in, c->dev_of[sa], c->pos_of[sa]));
            int mv = c->move_of[key];
            if (mv >= 0 && c->mv[mv].sa_free)
                t = fmin(t, c->new_end[key] + xfer);
            ready = fmax(ready, t);
        }
    }
    return ready;
}

/* Places the CFW `fid` in the earliest gap that takes it, if any. */
static void prepose_one(struct prepose_ctx *c, int fid)
{
    const struct plan *in = c->in;
    int d = c->dev_of[fid], cf = c->pos_of[fid];
    const struct instr *f = plan_at(in, d, cf);
    int base = fid - cf;
    int ra_id = vpipe_lookup(c->x, OP_RA, f->mb, f->stage);
    int ra = -1, peer = -1;
    if (ra_id >= 0 && c->dev_of[ra_id] == d && c->pos_of[ra_id] < cf) {
        ra = c->pos_of[ra_id];
        peer = plan_at(in, d, ra)->peer;
    }
    int after;
    double ready = prepose_ready(c, fid, &after);
    double dur = sim_instr_latency(c->cost, f);
    /* held from the new place to the old one: the checkpoint and the output's buffer (until
     * its send is reaped, conservatively); the received input's buffer only while it runs */
    double msg = c->cost->stage[f->stage].msg_bytes;
    double hold = c->cost->stage[f->stage].ckpt + (f->stage < c->g->stages - 1 ? msg : 0);
    double in_msg = ra >= 0 ? msg : 0;
    int limit = ra >= 0 ? ra : cf;
    double budget = c->budget * (1 + 1e-12) + 1e-12;
    /* The walk back from limit - 1 ends after `after` and at the previous receive from the
     * same peer (the order of messages from that peer is kept) */
    int lo = after;
    if (peer >= 0 && c->prev_recv[ra_id] > lo)
        lo = c->prev_recv[ra_id];
    /* and no gap at or before an instruction whose peak, with the checkpoint held, passes the
     * budget can take it */
    struct prepose_test over = {PREPOSE_TEST_OVER, hold, budget};
    int top = prepose_maxtree_last(&c->top_tree, base + lo + 1, base + limit - 1, &over);
    if (top >= 0)
        lo = top - base;
    /* the gaps long enough, latest first, until one opens before the input is ready (so does
     * every earlier gap: gaps start in time order along a device, and a move only shortens a
     * gap from its start); the earliest where the device's memory before it allows wins */
    struct prepose_test fits = {PREPOSE_TEST_FITS, dur - c->eps, 0};
    int best = -1;
    for (int hi = limit - 1;;) {
        int id = prepose_maxtree_last(&c->gap_tree, base + lo + 1, base + hi, &fits);
        if (id < 0 || c->gap_t[id] < ready - c->eps)
            break;
        int j = id - base;
        double before = j > 0 ? c->mem[id - 1] : c->r->dev[d].static_mem;
        if (!(before + in_msg + hold > budget))
            best = j;
        hi = j - 1;
    }
    if (best < 0)
        return;
    int bid = base + best;
    size_t key = prepose_key(c, f);
    c->new_end[key] = c->gap_t[bid] + dur;
    c->gap_t[bid] += dur;
    c->gap_len[bid] -= dur;
    prepose_maxtree_update(&c->gap_tree, bid, bid);
    for (int k = bid; k < fid; k++) {
        c->mem[k] += hold;
        c->top[k] += hold;
    }
    prepose_maxtree_update(&c->top_tree, bid, fid - 1);
    int sa_id = vpipe_lookup(c->x, OP_SA, f->mb, f->stage), sa = -1;
    bool sa_free = false;
    if (sa_id >= 0 && c->dev_of[sa_id] == d) {
        sa = c->pos_of[sa_id];
        int to_peer = plan_at(in, d, sa)->peer;
        sa_free = true;
        for (int j = best; j < sa && sa_free; j++) {
            const struct instr *o = plan_at(in, d, j);
            sa_free = !(vpipe_is_send(o->op) && o->peer == to_peer);
        }
    }
    c->move_of[key] = c->n_mv;
    c->mv[c->n_mv++] = (struct prepose_move){d, cf, ra, sa, best, sa_free, false};
}

/* The paper's rule for the send of a preposed CFW: it moves along when the next device
 * preposes the matching receive (and it crosses no other send to that device). */
static void prepose_sends(struct prepose_ctx *c)
{
    for (int k = 0; k < c->n_mv; k++) {
        struct prepose_move *m = &c->mv[k];
        if (m->sa < 0 || !m->sa_free)
            continue;
        const struct instr *s = plan_at(c->in, m->dev, m->sa);
        enum op recv_op;
        int to;
        vpipe_peer(s->op, s->stage, &recv_op, &to);
        m->sa_moves = to < c->g->stages && c->move_of[(size_t)s->mb * c->g->stages + to] >= 0;
    }
}

/* Writes the candidate plan and the change records. */
static struct plan *prepose_build(struct prepose_ctx *c, struct pass_changes *ch)
{
    const struct plan *in = c->in;
    struct plan *cand = plan_new(plan_config(in), plan_geom(in));
    int maxlen = 1;
    for (int d = 0; d < plan_devices(in); d++)
        maxlen = plan_len(in, d) > maxlen ? plan_len(in, d) : maxlen;
    unsigned char *skip = xcalloc((size_t)maxlen, 1);
    int k = 0;
    for (int d = 0; d < plan_devices(in); d++) {
        int n = plan_len(in, d), first = k;
        memset(skip, 0, (size_t)n);
        while (k < c->n_mv && c->mv[k].dev == d) {
            const struct prepose_move *m = &c->mv[k++];
            skip[m->cfw] = 1;
            if (m->ra >= 0)
                skip[m->ra] = 1;
            if (m->sa_moves)
                skip[m->sa] = 1;
        }
        int q = first;
        for (int i = 0; i < n; i++) {
            for (; q < k && c->mv[q].to == i; q++) {
                const struct prepose_move *m = &c->mv[q];
                int parts[3] = {m->ra, m->cfw, m->sa_moves ? m->sa : -1};
                for (int t = 0; t < 3; t++) {
                    if (parts[t] < 0)
                        continue;
                    const struct instr *o = plan_at(in, d, parts[t]);
                    plan_append(cand, d, *o);
                    pass_changes_add(ch, PASS_CHANGE_MOVE, d, o, o->op);
                }
            }
            if (!skip[i])
                plan_append(cand, d, *plan_at(in, d, i));
        }
    }
    free(skip);
    return cand;
}

/* Sizes first, one allocation, then the arrays point into it (doubles, then the moves, then
 * ints, so every array is aligned). */
static void prepose_ctx_alloc(struct prepose_ctx *c, size_t total, size_t keys, size_t n_cfw)
{
    size_t doubles = 5 * total + keys;
    size_t bytes = doubles * sizeof(double) + n_cfw * sizeof(struct prepose_move) +
                   (3 * total + keys) * sizeof(int);
    c->arena = xmalloc(bytes);
    double *dp = c->arena;
    c->free_before = dp;
    c->gap_t = dp + total;
    c->gap_len = dp + 2 * total;
    c->mem = dp + 3 * total;
    c->top = dp + 4 * total;
    c->new_end = dp + 5 * total;
    c->mv = (struct prepose_move *)(dp + doubles);
    int *ip = (int *)(c->mv + n_cfw);
    c->dev_of = ip;
    c->pos_of = ip + total;
    c->prev_recv = ip + 2 * total;
    c->move_of = ip + 3 * total;
    for (size_t k = 0; k < keys; k++) {
        c->move_of[k] = -1;
        c->new_end[k] = 0;
    }
}

static void prepose_ctx_fini(struct prepose_ctx *c)
{
    free(c->arena);
    c->arena = NULL;
    free(c->gap_tree.node);
    free(c->top_tree.node);
    c->gap_tree.node = c->top_tree.node = NULL;
}

/* prev_recv of every receive of device d; last[peer]: -1 for every peer, and left so. */
static void prepose_prev_recv(struct prepose_ctx *c, int d, int *last)
{
    int n = plan_len(c->in, d), base = plan_id(c->in, d, 0);
    for (int i = 0; i < n; i++) {
        const struct instr *o = plan_at(c->in, d, i);
        if (vpipe_is_recv(o->op) && o->peer >= 0) {
            c->prev_recv[base + i] = last[o->peer];
            last[o->peer] = i;
        }
    }
    for (int i = 0; i < n; i++) {
        const struct instr *o = plan_at(c->in, d, i);
        if (vpipe_is_recv(o->op) && o->peer >= 0)
            last[o->peer] = -1;
    }
}

int pass_prepose_run(const struct plan *in, const struct sim_result *in_sim, struct plan **out,
                     struct sim_result *out_sim, struct pass_changes *ch, struct mt_err *e)
{
    *out = NULL;
    pass_changes_clear(ch);
    struct sim_result own = {0};
    struct cost_model cost = {0};
    const struct vpipe_resolved *rv = NULL; /* the input's, kept with it (sim/core/vpipe.h) */
    struct prepose_ctx c = {.in = in, .g = plan_geom(in)};
    int rc = MT_OK;
    if (in_sim == NULL) {
        rc = sim_run(in, &own, e);
        if (rc != MT_OK)
            return err_wrap(e, "simulating the input");
        in_sim = &own;
    }
    rc = scheme_costs(plan_config(in), &cost, e);
    if (rc == MT_OK)
        rc = vpipe_resolve(in, &rv, e);
    if (rc != MT_OK)
        goto done;
    size_t total = (size_t)plan_total(in) + 1, keys = (size_t)c.g->mbs * c.g->stages + 1;
    c.r = in_sim;
    c.cost = &cost;
    c.x = rv->x;
    c.budget = pass_sim_peak_max(in_sim);
    c.eps = PREPOSE_EPS * (in_sim->step_time > 1 ? in_sim->step_time : 1);
    size_t n_all = 0;
    for (int d = 0; d < c.g->devices; d++)
        for (int i = 0; i < plan_len(in, d); i++)
            n_all += plan_at(in, d, i)->op == OP_CFW;
    prepose_ctx_alloc(&c, total, keys, n_all + 1);
    struct prepose_order *order = xmalloc((n_all + 1) * sizeof *order);
    int n_cfw = 0;
    bool blocking = plan_config(in)->blocking_send;
    int maxlen = 1;
    for (int d = 0; d < c.g->devices; d++)
        maxlen = plan_len(in, d) > maxlen ? plan_len(in, d) : maxlen;
    double *take = xmalloc(2 * (size_t)maxlen * sizeof(double)), *give = take + maxlen;
    for (int d = 0; d < c.g->devices; d++) {
        double free_at = 0;
        mem_device_take_give(&cost, plan_instrs(in, d), plan_len(in, d), take, give);
        for (int i = 0; i < plan_len(in, d); i++) {
            int id = plan_id(in, d, i);
            enum op op = plan_at(in, d, i)->op;
            c.dev_of[id] = d;
            c.pos_of[id] = i;
            c.free_before[id] = c.gap_t[id] = free_at;
            c.gap_len[id] = in_sim->start[id] - free_at;
            c.mem[id] = in_sim->mem_after[id];
            c.top[id] = in_sim->mem_after[id] + give[i];
            bool async_send = !blocking && vpipe_is_send(op);
            free_at = fmax(free_at, async_send ? in_sim->start[id] : in_sim->end[id]);
            if (op == OP_CFW)
                order[n_cfw++] = (struct prepose_order){in_sim->start[id], id};
        }
    }
    free(take);
    int *last = xmalloc((size_t)c.g->devices * sizeof *last);
    for (int d = 0; d < c.g->devices; d++)
        last[d] = -1;
    for (int d = 0; d < c.g->devices; d++)
        if (plan_len(in, d) > 0)
            prepose_prev_recv(&c, d, last);
    free(last);
    prepose_maxtree_init(&c.gap_tree, c.gap_len, (int)total - 1);
    prepose_maxtree_init(&c.top_tree, c.top, (int)total - 1);
    qsort(order, (size_t)n_cfw, sizeof *order, prepose_order_cmp);
    for (int k = 0; k < n_cfw; k++)
        prepose_one(&c, order[k].id);
    free(order);
    prepose_sends(&c);
    qsort(c.mv, (size_t)c.n_mv, sizeof *c.mv, prepose_move_cmp);
    struct plan *cand = prepose_build(&c, ch);
    rc = pass_finish(in, in_sim, cand, PASS_KEEP_FASTER, out, out_sim, ch, e);
done:
    prepose_ctx_fini(&c);
    cost_model_fini(&cost);
    sim_result_fini(&own);
    return rc;
}
