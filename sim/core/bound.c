/* sim/core/bound.c: the lower bound of sim/core/bound.h.
 *
 * The plan's instructions, recompute left out, form a DAG: the virtual pipeline's dependencies
 * (sim/core/vpipe.h), and for synchronous plans AR and OS after every backward of their stage (AR
 * after those of its whole collective group). Each node lasts what the simulator gives it: a
 * compute instruction its latency (a CFW as a FW), a send its transfer, a receive nothing. In
 * topological order: heads (longest chain before a node), tails (longest chain after it). The
 * simulator starts every instruction no earlier than its dependencies end and a device runs
 * one compute instruction at a time, so
 *   step >= head + dur + tail of any node          (the critical path)
 *   step >= Jackson's preemptive bound per device  (1|r_j, pmtn|max C_j + q_j, solved exactly:
 *                                                   at every moment run the released job of
 *                                                   largest tail)
 * and, under a cap, the memory-time bound derived in the header. */
#include <config.h>
#include "sim/core/bound.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/cost.h"
#include "sim/core/jackson.h"
#include "sim/core/memory.h"
#include "sim/core/overlap.h"
#include "sim/plan/plan.h"
#include "sim/schemes/scheme.h"
#include "sim/core/simulate.h"
#include "sim/core/vpipe.h"
#include "util/err.h"
#include "util/xalloc.h"

struct bound_dag {
    const struct plan *p;
    const struct plan_geom *g;
    int n;
    double *dur;            /* [n] */
    unsigned char *skip;    /* [n]: recompute, not part of the work */
    int *pred_off, *pred;   /* CSR */
    int *succ_off, *succ;   /* CSR */
    int *topo, n_topo;
    double *head, *tail;    /* [n] */
    int *dev_of;            /* [n] */
};

/* fmax, inlined (sim/core/memory.h mem_max: the same result as libm's): the head and tail sweeps
 * take one per edge, and a call to libm cost more than the rest of the step. */
static inline double bound_max(double a, double b)
{
    return mem_max(a, b);
}

static bool bound_is_job(enum op op)
{
    return (plan_op_is_compute(op) && op != OP_RC) || op == OP_AR || op == OP_OS;
}

static bool bound_is_bw_end(enum op op)
{
    return op == OP_BW || op == OP_B || op == OP_W;
}

/* A growable list of edges (node, pred) before they become CSR. */
struct bound_edges {
    int n, cap;
    int *to, *from;
};

static void bound_edge(struct bound_edges *l, int to, int from)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 1024;
        l->to = xreallocarray(l->to, (size_t)l->cap, sizeof(int));
        l->from = xreallocarray(l->from, (size_t)l->cap, sizeof(int));
    }
    l->to[l->n] = to;
    l->from[l->n++] = from;
}

/* CSR of the edges keyed by key[] (to or from), values val[]. */
static void bound_csr(int n, const struct bound_edges *l, const int *key, const int *val,
                      int **off_o, int **v_o)
{
    int *off = xcalloc((size_t)n + 2, sizeof(int));
    int *v = xmalloc(((size_t)l->n + 1) * sizeof(int));
    for (int k = 0; k < l->n; k++)
        off[key[k] + 2]++;
    for (int i = 0; i < n; i++)
        off[i + 2] += off[i + 1];
    for (int k = 0; k < l->n; k++)
        v[off[key[k] + 1]++] = val[k];
    *off_o = off;
    *v_o = v;
}

static void bound_dag_fini(struct bound_dag *g)
{
    free(g->dur);
    free(g->skip);
    free(g->pred_off);
    free(g->pred);
    free(g->succ_off);
    free(g->succ);
    free(g->topo);
    free(g->head);
    free(g->tail);
    free(g->dev_of);
    memset(g, 0, sizeof *g);
}

/* The backwards (BW, B, W) of each (device, stage), for the edges into AR and OS. */
struct bound_bw {
    int stages;
    int *off, *ids; /* CSR by dev * stages + stage */
};

static void bound_bw_build(const struct plan *p, struct bound_bw *b)
{
    const struct plan_geom *g = plan_geom(p);
    int keys = g->devices * g->stages;
    b->stages = g->stages;
    b->off = xcalloc((size_t)keys + 2, sizeof(int));
    int n = 0;
    for (int d = 0; d < g->devices; d++) {
        const struct instr *ins = plan_instrs(p, d);
        for (int i = 0, n_d = plan_len(p, d); i < n_d; i++) {
            const struct instr *in = &ins[i];
            if (bound_is_bw_end(in->op) && in->stage >= 0 && in->stage < g->stages) {
                b->off[d * g->stages + in->stage + 2]++;
                n++;
            }
        }
    }
    for (int k = 0; k < keys; k++)
        b->off[k + 2] += b->off[k + 1];
    b->ids = xmalloc(((size_t)n + 1) * sizeof(int));
    for (int d = 0; d < g->devices; d++) {
        const struct instr *ins = plan_instrs(p, d);
        int base = plan_id(p, d, 0);
        for (int i = 0, n_d = plan_len(p, d); i < n_d; i++) {
            const struct instr *in = &ins[i];
            if (bound_is_bw_end(in->op) && in->stage >= 0 && in->stage < g->stages)
                b->ids[b->off[d * g->stages + in->stage + 1]++] = base + i;
        }
    }
}

static void bound_bw_edges(const struct bound_bw *b, struct bound_edges *l, int to, int dev,
                           int stage)
{
    if (stage < 0 || stage >= b->stages)
        return;
    int k = dev * b->stages + stage;
    for (int j = b->off[k]; j < b->off[k + 1]; j++)
        bound_edge(l, to, b->ids[j]);
}

static int bound_dag_build(const struct plan *p, const struct cost_model *cost,
                           const struct vpipe_resolved *rv, struct bound_dag *G, struct mt_err *e)
{
    const struct vpipe_index *x = rv->x;
    const struct plan_geom *g = plan_geom(p);
    memset(G, 0, sizeof *G);
    G->p = p;
    G->g = g;
    G->n = plan_total(p);
    int n = G->n;
    G->dur = xcalloc((size_t)n + 1, sizeof(double));
    G->skip = xcalloc((size_t)n + 1, 1);
    G->dev_of = xmalloc(((size_t)n + 1) * sizeof(int));
    bool async = config_scheme_async(g->scheme);
    struct bound_bw bw = {0};
    if (!async)
        bound_bw_build(p, &bw);
    /* Every node's device and whether it is a recompute first: an edge's source may come later
     * in id order (a receive's send on a later device). */
    for (int d = 0; d < g->devices; d++) {
        const struct instr *ins = plan_instrs(p, d);
        for (int i = 0, base = plan_id(p, d, 0), n_d = plan_len(p, d); i < n_d; i++) {
            G->dev_of[base + i] = d;
            G->skip[base + i] = ins[i].op == OP_RC || plan_op_is_copy(ins[i].op); /* optional */
        }
    }
    struct bound_edges l = {0};
    int rc = MT_OK;
    double *paired = overlap_durations(p, cost, NULL); /* the simulator's F&B pair latencies */
    for (int d = 0; d < g->devices && rc == MT_OK; d++) {
        const struct instr *ins = plan_instrs(p, d);
        int base = plan_id(p, d, 0);
        for (int i = 0, n_d = plan_len(p, d); i < n_d; i++) {
            int id = base + i;
            const struct instr *in = &ins[i];
            if (G->skip[id])
                continue;
            G->dur[id] = vpipe_is_recv(in->op)                     ? 0
                         : paired != NULL && isfinite(paired[id]) ? paired[id]
                                                                  : sim_instr_latency(cost, in);
            int buf[VPIPE_MAX_DEPS];
            const int *deps = buf;
            struct vpipe_missing miss;
            int k;
            if (rv->off != NULL) { /* the plan's resolution (vpipe_deps_all's CSR) */
                deps = rv->deps + rv->off[id];
                k = rv->off[id + 1] - rv->off[id];
            } else {
                k = vpipe_deps_at(p, x, d, i, buf, &miss);
            }
            if (k < 0) {
                char what[32];
                plan_instr_label(p, in, what, sizeof what);
                rc = err_set(e, MT_EINFEASIBLE,
                             "device %d, instruction %d (%s): needs %s of mb %d stage %d, which "
                             "the plan lacks", d, i, what, plan_op_name(miss.op), miss.mb,
                             miss.stage);
                break;
            }
            for (int j = 0; j < k; j++)
                if (!G->skip[deps[j]])
                    bound_edge(&l, id, deps[j]);
            if (async)
                continue;
            if (in->op == OP_AR) { /* the collective: every replica's backwards */
                int group[64];
                int m = vpipe_ar_group(p, x, id, group, 64);
                for (int j = 0; j < m; j++)
                    bound_bw_edges(&bw, &l, id, G->dev_of[group[j]], in->stage);
            } else if (in->op == OP_OS) {
                bound_bw_edges(&bw, &l, id, d, in->stage);
            }
        }
    }
    free(paired);
    free(bw.off);
    free(bw.ids);
    if (rc == MT_OK) {
        bound_csr(n, &l, l.to, l.from, &G->pred_off, &G->pred);
        bound_csr(n, &l, l.from, l.to, &G->succ_off, &G->succ);
    }
    free(l.to);
    free(l.from);
    if (rc != MT_OK)
        return rc;
    /* Kahn's topological order of the nodes that are not skipped. */
    int *indeg = xcalloc((size_t)n + 1, sizeof(int));
    G->topo = xmalloc(((size_t)n + 1) * sizeof(int));
    int nt = 0, want = 0;
    for (int v = 0; v < n; v++) {
        if (G->skip[v])
            continue;
        want++;
        indeg[v] = G->pred_off[v + 1] - G->pred_off[v];
        if (indeg[v] == 0)
            G->topo[nt++] = v;
    }
    for (int k = 0; k < nt; k++) {
        int v = G->topo[k];
        for (int j = G->succ_off[v]; j < G->succ_off[v + 1]; j++)
            if (--indeg[G->succ[j]] == 0)
                G->topo[nt++] = G->succ[j];
    }
    free(indeg);
    G->n_topo = nt;
    if (nt != want)
        return err_set(e, MT_EINFEASIBLE,
                       "the plan's dependencies are circular (%d of %d instructions ordered)", nt,
                       want);
    G->head = xcalloc((size_t)n + 1, sizeof(double));
    G->tail = xcalloc((size_t)n + 1, sizeof(double));
    for (int k = 0; k < nt; k++) {
        int v = G->topo[k];
        double h = 0;
        for (int j = G->pred_off[v]; j < G->pred_off[v + 1]; j++) {
            int u = G->pred[j];
            h = bound_max(h, G->head[u] + G->dur[u]);
        }
        G->head[v] = h;
    }
    for (int k = nt - 1; k >= 0; k--) {
        int v = G->topo[k];
        double t = 0;
        for (int j = G->succ_off[v]; j < G->succ_off[v + 1]; j++) {
            int w = G->succ[j];
            t = bound_max(t, G->dur[w] + G->tail[w]);
        }
        G->tail[v] = t;
    }
    return MT_OK;
}

/* ---- the memory-time bound (one device) ----------------------------------------------------- */

/* A forward of the device as the memory-time bound sees it. */
struct bound_fwd {
    const struct stage_cost *sc;
    double hold;  /* L_j: its start to its backward's end, at least */
    double bdur;  /* its backward's part that still holds the activations (BW, or B when split) */
};

/* How held bytes are counted: phi(w) = w, against the cap C; or, rounded, the count of whole
 * activations a device can hold: with a the largest activations of the device's stages, k =
 * floor(C / a) and r = C - k a, phi(w) = a (w - r)+ / (a - r), against k a. Whatever a device
 * holds at a moment (each forward's activations or checkpoint, w <= a each, plus buffers) sums
 * to at most C, so the phi of its forwards' holdings sums to at most k a: m of them above r sum
 * to at most C - m r, so their phi to k a when m > k, and to m a <= k a when m <= k. At a cap
 * of 1.05 activations, one forward's activations at a time: the plain count lets 1.05. */
struct bound_phi {
    double a, r, cap; /* r < 0: plain */
};

static double bound_phi(const struct bound_phi *m, double w)
{
    return bound_count(m->a, m->r, w);
}

/* What checkpointing a forward can save of the memory-time integral and at what recompute:
 * kept, it holds phi(act) over at least L; checkpointed with k of its n layers, phi(keep_k)
 * from its start to its recompute's, then phi(act) from the recompute's start (RC takes the
 * activations back) to its backward's end: at least rc_k + B. So a checkpoint of k layers saves
 * at most (phi(act) - phi(keep_k)) (L - rc_k - B)+ for rc_k of recompute. The LP over every k
 * (a fraction of any of them) is relaxed to one item: save up to the best save of any k, at
 * the best ratio of any k. Which k: the whole stage (k = n), or every k when the plan's own
 * checkpoints are of k layers (layers). */
struct bound_item {
    double save, ratio; /* ratio: save per unit of recompute; INFINITY when free */
};

static struct bound_item bound_item_of(const struct bound_phi *m, const struct bound_fwd *f,
                                       bool layers)
{
    const struct stage_cost *sc = f->sc;
    struct bound_item it = {0, 0};
    int n = sc->num_layers > 1 && sc->layer_act > 0 ? sc->num_layers : 1;
    double pa = bound_phi(m, sc->act);
    for (int k = layers ? 1 : n; k <= n; k++) { /* k = n: the whole stage */
        double rc = k == n ? sc->rc : sc->rc * k / n;
        double keep = sc->act - mem_ckpt_saves(sc, mem_ckpt_layers(k, n));
        double save = (pa - bound_phi(m, keep)) * fmax(f->hold - rc - f->bdur, 0);
        if (!(save > 0))
            continue;
        it.save = fmax(it.save, save);
        it.ratio = fmax(it.ratio, rc > 0 ? save / rc : INFINITY);
    }
    return it;
}

/* The smallest T with T >= A + forced(T), where forced(T) is the least recompute whose saves
 * bring the integral `total` under cap x (T - span) (the window [r, T - q] the forwards and
 * their backwards lie in: span = r + q), a fractional knapsack over the items (sorted by
 * ratio). forced is convex and piecewise linear in what must be saved, which falls linearly
 * with T, so the root is found exactly: the item whose share holds it, then one linear
 * equation (issue 27: this replaced a bisection over T). */
static double bound_memory_solve(const struct bound_item *it, int n, double total, double cap,
                                 double A, double span, double *forced)
{
    *forced = 0;
    if (total - cap * (A - span) <= 0)
        return A; /* nothing forced at the time bound */
    double S = 0, K = 0; /* saved and recomputed by the items before i */
    for (int i = 0; i < n; i++) {
        double s = it[i].save, q = isinf(it[i].ratio) ? 0 : 1 / it[i].ratio;
        /* where the item is used up: need = S + s */
        double t_end = span + (total - S - s) / cap;
        if (t_end - A - (K + s * q) <= 0) {
            /* T = A + K + (total - cap (T - span) - S) q */
            double T = (A + K + (total + cap * span - S) * q) / (1 + cap * q);
            double t_start = span + (total - S) / cap;
            T = fmin(fmax(T, t_end), t_start);
            *forced = T - A;
            return T;
        }
        S += s;
        K += s * q;
    }
    /* every save spent: nothing shorter than where they run out */
    double T = span + (total - S) / cap;
    *forced = K;
    return fmax(T, A + K);
}

/* A run of forwards in list order that share one item (those of a stage mostly do). */
struct bound_run {
    struct bound_item it;
    int first, len;
};

/* Largest ratio first; equal ratios in list order: the order a stable sort of every item
 * gives, whatever the sort. */
static int bound_run_cmp(const void *a, const void *b)
{
    const struct bound_run *x = a, *y = b;
    if (x->it.ratio != y->it.ratio)
        return x->it.ratio < y->it.ratio ? 1 : -1;
    return (x->first > y->first) - (x->first < y->first);
}

/* The device's memory-time bound under counting m: the smallest T, and the recompute forced.
 * The runs of equal items are sorted, not every item (thousands of forwards, a few runs). */
static double bound_memory_device(const struct bound_phi *m, const struct bound_fwd *f, int n,
                                  bool layers, struct bound_item *items, double A, double span,
                                  double *forced)
{
    double total = 0;
    int nr = 0;
    struct bound_run *runs = xmalloc(((size_t)n + 1) * sizeof *runs);
    for (int i = 0; i < n; i++) {
        total += bound_phi(m, f[i].sc->act) * f[i].hold;
        /* forwards of a stage mostly share L: the item of the one before */
        if (i > 0 && f[i].sc == f[i - 1].sc && f[i].hold == f[i - 1].hold &&
            f[i].bdur == f[i - 1].bdur)
            runs[nr - 1].len++;
        else
            runs[nr++] = (struct bound_run){bound_item_of(m, &f[i], layers), i, 1};
    }
    qsort(runs, (size_t)nr, sizeof *runs, bound_run_cmp);
    for (int r = 0, i = 0; r < nr; r++)
        for (int k = 0; k < runs[r].len; k++)
            items[i++] = runs[r].it;
    free(runs);
    return bound_memory_solve(items, n, total, m->cap, A, span, forced);
}

/* L_j of every forward on device d: the longest chain from its start to its backward's end,
 * over the nodes of its micro-batch (the only ones on such a chain). */
struct bound_mb {
    int *off, *ids; /* CSR by micro-batch, topological order */
    int *pos;       /* [n]: index of a node in its micro-batch's list */
    double *dist;   /* [n] scratch */
    int *mb_of;     /* [n]: the micro-batch of a node in a list, -1 none */
    unsigned char *same; /* [mbs]: the micro-batch's list is the one before's (durations, ops,
                          * stages, the edges inside it): the same chains L */
};

static void bound_mb_fini(struct bound_mb *m);

/* Node v's instruction and device, from dev_of (plan_locate_id searched the devices per node:
 * 11 % of simulate's instructions at 4,096 micro-batches). */
static const struct instr *bound_instr(const struct bound_dag *G, int v, int *dev)
{
    int d = G->dev_of[v];
    *dev = d;
    return &plan_instrs(G->p, d)[v - plan_id(G->p, d, 0)];
}

/* Whether micro-batch b's list repeats b - 1's: node for node the same op, stage and
 * duration, and the same edges from inside the micro-batch (by position in the list). */
static bool bound_mb_repeats(const struct bound_dag *G, const struct bound_mb *m, int b)
{
    int n = m->off[b + 1] - m->off[b];
    if (b == 0 || n != m->off[b] - m->off[b - 1])
        return false;
    for (int k = 0; k < n; k++) {
        int v = m->ids[m->off[b] + k], u = m->ids[m->off[b - 1] + k], dv, du;
        const struct instr *a = bound_instr(G, v, &dv), *c = bound_instr(G, u, &du);
        if (a->op != c->op || a->stage != c->stage || dv != du || G->dur[v] != G->dur[u])
            return false;
        int jv = G->pred_off[v], ju = G->pred_off[u];
        for (;; jv++, ju++) { /* preds inside the micro-batch, in the same order */
            while (jv < G->pred_off[v + 1] && m->mb_of[G->pred[jv]] != b)
                jv++;
            while (ju < G->pred_off[u + 1] && m->mb_of[G->pred[ju]] != b - 1)
                ju++;
            bool ev = jv >= G->pred_off[v + 1], eu = ju >= G->pred_off[u + 1];
            if (ev || eu) {
                if (ev != eu)
                    return false;
                break;
            }
            if (m->pos[G->pred[jv]] - m->off[b] != m->pos[G->pred[ju]] - m->off[b - 1])
                return false;
        }
    }
    return true;
}

static void bound_mb_build(const struct bound_dag *G, struct bound_mb *m)
{
    int mbs = G->g->mbs;
    m->off = xcalloc((size_t)mbs + 2, sizeof(int));
    m->ids = xmalloc(((size_t)G->n_topo + 1) * sizeof(int));
    m->pos = xmalloc(((size_t)G->n + 1) * sizeof(int));
    m->dist = xmalloc(((size_t)G->n + 1) * sizeof(double));
    m->mb_of = xmalloc(((size_t)G->n + 1) * sizeof(int));
    m->same = xcalloc((size_t)mbs + 1, 1);
    for (int v = 0; v < G->n; v++)
        m->mb_of[v] = -1;
    for (int k = 0; k < G->n_topo; k++) {
        int v = G->topo[k], d;
        const struct instr *in = bound_instr(G, v, &d);
        if (in->mb >= 0 && in->mb < mbs && in->op != OP_AR && in->op != OP_OS)
            m->off[in->mb + 2]++;
    }
    for (int b = 0; b < mbs; b++)
        m->off[b + 2] += m->off[b + 1];
    for (int k = 0; k < G->n_topo; k++) {
        int v = G->topo[k], d;
        const struct instr *in = bound_instr(G, v, &d);
        if (in->mb >= 0 && in->mb < mbs && in->op != OP_AR && in->op != OP_OS) {
            m->pos[v] = m->off[in->mb + 1];
            m->mb_of[v] = in->mb;
            m->ids[m->off[in->mb + 1]++] = v;
        }
        m->dist[v] = -1;
    }
    for (int b = 1; b < mbs; b++)
        m->same[b] = bound_mb_repeats(G, m, b);
}

static void bound_mb_fini(struct bound_mb *m)
{
    free(m->off);
    free(m->ids);
    free(m->pos);
    free(m->dist);
    free(m->mb_of);
    free(m->same);
}

static double bound_hold(const struct bound_dag *G, struct bound_mb *m, int fw, int bw, int mb)
{
    int end = m->off[mb + 1];
    double L = G->dur[fw] + G->dur[bw];
    m->dist[fw] = 0;
    int last = m->pos[fw];
    for (int k = m->pos[fw] + 1; k < end; k++) {
        int v = m->ids[k];
        double best = -1;
        for (int j = G->pred_off[v]; j < G->pred_off[v + 1]; j++) {
            int u = G->pred[j];
            if (m->dist[u] >= 0)
                best = bound_max(best, m->dist[u] + G->dur[u]);
        }
        m->dist[v] = best;
        last = k;
        if (v == bw)
            break;
    }
    if (m->dist[bw] >= 0)
        L = bound_max(L, m->dist[bw] + G->dur[bw]);
    for (int k = m->pos[fw]; k <= last; k++)
        m->dist[m->ids[k]] = -1;
    return L;
}

int bound_compute(const struct plan *p, const struct cost_model *cost, double cap,
                  struct bound_result *out, struct mt_err *e)
{
    memset(out, 0, sizeof *out);
    out->memory_at = -1;
    out->cap = cap;
    const struct vpipe_resolved *rv; /* kept with the plan: the simulator's, or shared with it */
    TRY(vpipe_resolve(p, &rv, e));
    struct bound_dag G;
    int rc = bound_dag_build(p, cost, rv, &G, e);
    if (rc != MT_OK) {
        bound_dag_fini(&G);
        return rc;
    }
    const struct vpipe_index *x = rv->x;
    const struct plan_geom *g = plan_geom(p);
    for (int k = 0; k < G.n_topo; k++) {
        int v = G.topo[k];
        out->critical_path = bound_max(out->critical_path, G.head[v] + G.dur[v] + G.tail[v]);
    }
    int maxlen = 1;
    for (int d = 0; d < g->devices; d++)
        maxlen = plan_len(p, d) > maxlen ? plan_len(p, d) : maxlen;
    struct jackson_job *jobs = xmalloc((size_t)maxlen * sizeof *jobs);
    struct bound_fwd *fw = xmalloc((size_t)maxlen * sizeof *fw);
    struct bound_item *items = xmalloc((size_t)maxlen * sizeof *items);
    int *last_mb = xmalloc(((size_t)g->stages + 1) * sizeof(int)); /* per stage: the hold */
    double *last_hold = xmalloc(((size_t)g->stages + 1) * sizeof(double));
    int *heap = xmalloc((size_t)maxlen * sizeof(int));
    struct jackson_job *jobs_tmp = xmalloc((size_t)maxlen * sizeof *jobs_tmp);
    struct bound_mb mbl = {0};
    bool have_mb = false;
    /* checkpoints of k layers are in the work when the plan has one (sim/core/bound.h) */
    bool layers = false;
    for (int d = 0; d < g->devices && !layers; d++)
        for (int i = 0, n_d = plan_len(p, d); i < n_d && !layers; i++)
            layers = plan_at(p, d, i)->op == OP_CFW && plan_at(p, d, i)->ckpt_layers > 0;
    out->device_at = 0;
    for (int d = 0; d < g->devices; d++) {
        int nj = 0, nf = 0;
        double work = 0, rmin = INFINITY, qmin = INFINITY, act_sum = 0, act_max = 0, a_max = 0;
        double work_c = 0, rmin_c = INFINITY, qmin_c = INFINITY;
        const struct instr *ins = plan_instrs(p, d);
        int base = plan_id(p, d, 0);
        for (int i = 0, n_d = plan_len(p, d); i < n_d; i++) {
            int id = base + i;
            const struct instr *in = &ins[i];
            if (G.skip[id] || !bound_is_job(in->op))
                continue;
            jobs[nj++] = (struct jackson_job){G.head[id], G.dur[id], G.tail[id]};
            work += G.dur[id];
            rmin = fmin(rmin, G.head[id]);
            qmin = fmin(qmin, G.tail[id]);
            if (in->op != OP_AR && in->op != OP_OS) { /* the recomputes lie among these */
                work_c += G.dur[id];
                rmin_c = fmin(rmin_c, G.head[id]);
                qmin_c = fmin(qmin_c, G.tail[id]);
            }
            if (plan_op_is_forward(in->op)) {
                const struct stage_cost *sc = &cost->stage[in->stage];
                act_sum += sc->act;
                /* a split B takes what its W will need while the activations are still held */
                bool split = vpipe_lookup(x, OP_W, in->mb, in->stage) >= 0;
                act_max = fmax(act_max, sc->act + (split ? sc->w_keep : 0));
                a_max = fmax(a_max, sc->act);
                nf++;
            }
        }
        if (nj == 0)
            continue;
        out->work = fmax(out->work, work);
        double jb = jackson_preemptive(jobs, nj, heap, jobs_tmp);
        if (jb > out->device) {
            out->device = jb;
            out->device_at = d;
        }
        if (!(cap > 0) || nf == 0)
            continue;
        double stat = 0;
        for (int part = 0; part < g->parts; part++)
            stat += cost->stage[vpipe_stage(g, d, 0, part)].static_bytes;
        double C = cap - stat;
        if (C < act_max) {
            out->cap_infeasible = true;
            out->memory = INFINITY;
            out->memory_at = d;
            continue;
        }
        if (act_sum <= C) /* every activation fits at once: the cap forces nothing */
            continue;
        if (!have_mb) {
            bound_mb_build(&G, &mbl);
            have_mb = true;
        }
        nf = 0;
        for (int st = 0; st < g->stages; st++)
            last_mb[st] = -2;
        double r_f = INFINITY, q_b = INFINITY; /* the window of the forwards and backwards */
        for (int i = 0, n_d = plan_len(p, d); i < n_d; i++) {
            int id = base + i;
            const struct instr *in = &ins[i];
            if (!plan_op_is_forward(in->op))
                continue;
            int bw = vpipe_lookup(x, OP_BW, in->mb, in->stage);
            if (bw < 0) /* split: B frees the activations */
                bw = vpipe_lookup(x, OP_B, in->mb, in->stage);
            struct bound_fwd *f = &fw[nf++];
            f->sc = &cost->stage[in->stage];
            f->bdur = bw >= 0 ? G.dur[bw] : 0;
            r_f = fmin(r_f, G.head[id]);
            q_b = fmin(q_b, bw >= 0 ? G.tail[bw] : 0);
            if (bw < 0)
                f->hold = G.dur[id];
            else if (last_mb[in->stage] == in->mb - 1 && mbl.same[in->mb])
                f->hold = last_hold[in->stage]; /* the micro-batch before's, repeated */
            else
                f->hold = bound_hold(&G, &mbl, id, bw, in->mb);
            last_mb[in->stage] = in->mb;
            last_hold[in->stage] = f->hold;
        }
        /* the bytes as they are, and the count of whole activations the cap holds */
        /* the device's work and its recompute (between its forwards and backwards, so
         * after the first compute head and before the last compute tail) */
        double A = fmax(rmin + work + qmin, rmin_c + work_c + qmin_c);
        double span = r_f + q_b, forced, f2;
        struct bound_phi plain = {0, -1, C};
        double k = a_max > 0 ? floor(C / a_max * (1 + 1e-12)) : 0;
        struct bound_phi whole = {a_max, fmax(C - k * a_max, 0), k * a_max};
        double T = bound_memory_device(&plain, fw, nf, layers, items, A, span, &forced);
        if (k >= 1 && whole.r < a_max) {
            double T2 = bound_memory_device(&whole, fw, nf, layers, items, A, span, &f2);
            if (T2 > T) {
                T = T2;
                forced = f2;
            }
        }
        if (out->memory_at < 0 || T > out->memory) {
            out->memory = T;
            out->memory_at = d;
            out->forced_rc = forced;
        }
    }
    out->time = fmax(out->critical_path, out->device);
    if (out->memory > 0 && out->memory <= out->time * (1 + 1e-12) && !out->cap_infeasible) {
        /* the cap forces nothing the time bound does not already cover (above it by rounding
         * only: the device's work summed in another order than Jackson's) */
        out->memory = 0;
        out->memory_at = -1;
        out->forced_rc = 0;
    }
    if (have_mb)
        bound_mb_fini(&mbl);
    free(jobs);
    free(fw);
    free(items);
    free(last_mb);
    free(last_hold);
    free(heap);
    free(jobs_tmp);
    bound_dag_fini(&G);
    return MT_OK;
}

int bound_plan(const struct plan *p, struct bound_result *out, struct mt_err *e)
{
    struct cost_model cost;
    memset(out, 0, sizeof *out);
    TRY(scheme_costs(plan_config(p), &cost, e));
    int rc = bound_compute(p, &cost, config_mem_cap(plan_config(p)), out, e);
    cost_model_fini(&cost);
    if (rc == MT_OK && bound_plan_offloads(p)) /* sim/core/bound_offload.c */
        bound_allow_offload(out);
    return rc;
}

double bound_value(const struct bound_result *b, bool under_cap)
{
    return under_cap && b->memory > b->time ? b->memory : b->time;
}

enum bound_kind bound_binding(const struct bound_result *b, bool under_cap)
{
    if (under_cap && b->memory > b->time)
        return BOUND_MEMORY;
    return b->critical_path >= b->device ? BOUND_CRITICAL_PATH : BOUND_DEVICE;
}

const char *bound_kind_name(enum bound_kind k)
{
    switch (k) {
    case BOUND_CRITICAL_PATH: return "critical_path";
    case BOUND_DEVICE: return "device";
    case BOUND_MEMORY: return "memory";
    }
    return "?";
}

double bound_gap_pct(double step, double bound)
{
    if (!(bound > 0) || isinf(bound))
        return 0;
    double gap = (step - bound) / bound;
    return fabs(gap) < 1e-9 ? 0 : 100 * gap; /* sums in another order: the last bits differ */
}

bool bound_optimal(const struct bound_result *b, double step, bool under_cap)
{
    double lb = bound_value(b, under_cap);
    return under_cap && !b->cap_infeasible && lb > 0 && isfinite(lb) &&
           bound_gap_pct(step, lb) == 0;
}
