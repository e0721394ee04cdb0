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
#include "sim/core/memory.h"
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
    for (int d = 0; d < g->devices && rc == MT_OK; d++) {
        const struct instr *ins = plan_instrs(p, d);
        int base = plan_id(p, d, 0);
        for (int i = 0, n_d = plan_len(p, d); i < n_d; i++) {
            int id = base + i;
            const struct instr *in = &ins[i];
            if (G->skip[id])
                continue;
            G->dur[id] = vpipe_is_recv(in->op) ? 0 : sim_instr_latency(cost, in);
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

/* ---- Jackson's preemptive schedule (one device) --------------------------------------------- */

struct bound_job {
    double r, p, q;
};

static int bound_job_cmp(const void *a, const void *b)
{
    const struct bound_job *x = a, *y = b;
    return (x->r > y->r) - (x->r < y->r);
}

/* A max-heap of job indices by q. */
static void bound_heap_push(int *h, int *n, const struct bound_job *jobs, int j)
{
    int i = (*n)++;
    h[i] = j;
    while (i > 0 && jobs[h[(i - 1) / 2]].q < jobs[h[i]].q) {
        int t = h[i];
        h[i] = h[(i - 1) / 2];
        h[(i - 1) / 2] = t;
        i = (i - 1) / 2;
    }
}

static void bound_heap_pop(int *h, int *n, const struct bound_job *jobs)
{
    h[0] = h[--(*n)];
    for (int i = 0;;) {
        int l = 2 * i + 1, r = l + 1, m = i;
        if (l < *n && jobs[h[l]].q > jobs[h[m]].q)
            m = l;
        if (r < *n && jobs[h[r]].q > jobs[h[m]].q)
            m = r;
        if (m == i)
            break;
        int t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

/* max_j C_j + q_j of the preemptive schedule that always runs the released job of largest tail:
 * the optimum of 1|r_j, pmtn|max(C_j + q_j). jobs are sorted by r here; p is consumed. */
static double bound_jackson(struct bound_job *jobs, int n, int *heap)
{
    qsort(jobs, (size_t)n, sizeof *jobs, bound_job_cmp);
    double t = 0, best = 0;
    int i = 0, hn = 0;
    while (i < n || hn > 0) {
        if (hn == 0 && jobs[i].r > t)
            t = jobs[i].r;
        while (i < n && jobs[i].r <= t)
            bound_heap_push(heap, &hn, jobs, i++);
        struct bound_job *j = &jobs[heap[0]];
        double next = i < n ? jobs[i].r : INFINITY;
        if (j->p <= next - t) {
            t += j->p;
            j->p = 0;
            best = bound_max(best, t + j->q);
            bound_heap_pop(heap, &hn, jobs);
        } else {
            j->p -= next - t;
            t = next;
        }
    }
    return best;
}

/* ---- the memory-time bound (one device) ----------------------------------------------------- */

struct bound_fwd {
    double act, ckpt, rc; /* a forward's activations, checkpoint, recompute time */
    double hold;          /* L_j: its start to its backward's end, at least */
    double save;          /* what checkpointing it saves of the memory-time integral */
};

static int bound_fwd_cmp(const void *a, const void *b)
{
    const struct bound_fwd *x = a, *y = b;
    /* rc = 0 first (free), then by save / rc, largest first */
    double kx = x->rc > 0 ? x->save / x->rc : INFINITY, ky = y->rc > 0 ? y->save / y->rc : INFINITY;
    return (kx < ky) - (kx > ky);
}

/* The least recompute (fractional) that brings the memory-time integral under cap x the
 * window [r, T - q] the forwards and their backwards lie in (span = r + q). */
static double bound_forced_rc(const struct bound_fwd *f, int n, double total, double cap, double T,
                              double span)
{
    double need = total - cap * (T - span), cost = 0;
    for (int i = 0; i < n && need > 0; i++) {
        if (f[i].save <= 0)
            continue;
        double frac = need >= f[i].save ? 1 : need / f[i].save;
        cost += frac * f[i].rc;
        need -= frac * f[i].save;
    }
    return need > 1e-12 * (total > 1 ? total : 1) ? INFINITY : cost;
}

/* The smallest T with T >= A + forced_rc(T), from below: the bound returned is a T known to be
 * short of it (or A when nothing is forced there). */
static double bound_memory_solve(const struct bound_fwd *f, int n, double cap, double A,
                                 double span, double *forced)
{
    double total = 0, saves = 0, rcs = 0;
    for (int i = 0; i < n; i++) {
        total += f[i].act * f[i].hold;
        saves += f[i].save;
        rcs += f[i].rc;
    }
    double fa = bound_forced_rc(f, n, total, cap, A, span);
    if (A >= A + fa) {
        *forced = fa;
        return A;
    }
    double hi = fmax(A + rcs, span + (total - saves) / cap);
    hi = fmax(hi, A) * (1 + 1e-12) + 1e-12;
    double lo = A;
    for (int it = 0; it < 200 && hi - lo > 1e-13 * hi; it++) {
        double mid = 0.5 * (lo + hi);
        if (mid >= A + bound_forced_rc(f, n, total, cap, mid, span))
            hi = mid;
        else
            lo = mid;
    }
    *forced = bound_forced_rc(f, n, total, cap, hi, span);
    return lo;
}

/* L_j of every forward on device d: the longest chain from its start to its backward's end,
 * over the nodes of its micro-batch (the only ones on such a chain). */
struct bound_mb {
    int *off, *ids; /* CSR by micro-batch, topological order */
    int *pos;       /* [n]: index of a node in its micro-batch's list */
    double *dist;   /* [n] scratch */
};

static void bound_mb_build(const struct bound_dag *G, struct bound_mb *m)
{
    int mbs = G->g->mbs;
    m->off = xcalloc((size_t)mbs + 2, sizeof(int));
    m->ids = xmalloc(((size_t)G->n_topo + 1) * sizeof(int));
    m->pos = xmalloc(((size_t)G->n + 1) * sizeof(int));
    m->dist = xmalloc(((size_t)G->n + 1) * sizeof(double));
    for (int k = 0; k < G->n_topo; k++) {
        int v = G->topo[k], d, i;
        plan_locate_id(G->p, v, &d, &i);
        const struct instr *in = plan_at(G->p, d, i);
        if (in->mb >= 0 && in->mb < mbs && in->op != OP_AR && in->op != OP_OS)
            m->off[in->mb + 2]++;
    }
    for (int b = 0; b < mbs; b++)
        m->off[b + 2] += m->off[b + 1];
    for (int k = 0; k < G->n_topo; k++) {
        int v = G->topo[k], d, i;
        plan_locate_id(G->p, v, &d, &i);
        const struct instr *in = plan_at(G->p, d, i);
        if (in->mb >= 0 && in->mb < mbs && in->op != OP_AR && in->op != OP_OS) {
            m->pos[v] = m->off[in->mb + 1];
            m->ids[m->off[in->mb + 1]++] = v;
        }
        m->dist[v] = -1;
    }
}

static void bound_mb_fini(struct bound_mb *m)
{
    free(m->off);
    free(m->ids);
    free(m->pos);
    free(m->dist);
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
    struct bound_job *jobs = xmalloc((size_t)maxlen * sizeof *jobs);
    struct bound_fwd *fw = xmalloc((size_t)maxlen * sizeof *fw);
    int *heap = xmalloc((size_t)maxlen * sizeof(int));
    struct bound_mb mbl = {0};
    bool have_mb = false;
    out->device_at = 0;
    for (int d = 0; d < g->devices; d++) {
        int nj = 0, nf = 0;
        double work = 0, rmin = INFINITY, qmin = INFINITY, act_sum = 0, act_max = 0;
        const struct instr *ins = plan_instrs(p, d);
        int base = plan_id(p, d, 0);
        for (int i = 0, n_d = plan_len(p, d); i < n_d; i++) {
            int id = base + i;
            const struct instr *in = &ins[i];
            if (G.skip[id] || !bound_is_job(in->op))
                continue;
            jobs[nj++] = (struct bound_job){G.head[id], G.dur[id], G.tail[id]};
            work += G.dur[id];
            rmin = fmin(rmin, G.head[id]);
            qmin = fmin(qmin, G.tail[id]);
            if (plan_op_is_forward(in->op)) {
                const struct stage_cost *sc = &cost->stage[in->stage];
                act_sum += sc->act;
                /* a split B takes what its W will need while the activations are still held */
                bool split = vpipe_lookup(x, OP_W, in->mb, in->stage) >= 0;
                act_max = fmax(act_max, sc->act + (split ? sc->w_keep : 0));
                fw[nf++] = (struct bound_fwd){sc->act, sc->ckpt, sc->rc, 0, 0};
            }
        }
        if (nj == 0)
            continue;
        out->work = fmax(out->work, work);
        double jb = bound_jackson(jobs, nj, heap);
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
        double r_f = INFINITY, q_b = INFINITY; /* the window of the forwards and backwards */
        for (int i = 0, n_d = plan_len(p, d); i < n_d; i++) {
            int id = base + i;
            const struct instr *in = &ins[i];
            if (!plan_op_is_forward(in->op))
                continue;
            int bw = vpipe_lookup(x, OP_BW, in->mb, in->stage);
            struct bound_fwd *f = &fw[nf++];
            double pb = bw >= 0 ? G.dur[bw] : 0;
            r_f = fmin(r_f, G.head[id]);
            q_b = fmin(q_b, bw >= 0 ? G.tail[bw] : 0);
            f->hold = bw >= 0 ? bound_hold(&G, &mbl, id, bw, in->mb) : G.dur[id];
            f->save = (f->act - f->ckpt) * fmax(f->hold - pb, 0);
        }
        qsort(fw, (size_t)nf, sizeof *fw, bound_fwd_cmp);
        double forced, T = bound_memory_solve(fw, nf, C, rmin + work + qmin, r_f + q_b, &forced);
        if (out->memory_at < 0 || T > out->memory) {
            out->memory = T;
            out->memory_at = d;
            out->forced_rc = forced;
        }
    }
    out->time = fmax(out->critical_path, out->device);
    if (out->memory > 0 && out->memory <= out->time && !out->cap_infeasible) {
        out->memory = 0; /* the cap forces nothing the time bound does not already cover */
        out->memory_at = -1;
        out->forced_rc = 0;
    }
    if (have_mb)
        bound_mb_fini(&mbl);
    free(jobs);
    free(fw);
    free(heap);
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
