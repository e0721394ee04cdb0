/* sim/search/search_sched.c: the search's schedules (sim/search/search_internal.h): built from a plan, turned
 * back into one, and evaluated fast.
 *
 * The evaluation is the simulator's timeline (sim/core/simulate.c) restricted to compute ops, for
 * sends that do not block: a receive placed right before its consumer and a send right after
 * its producer make the consumer start at max(its device free, producer's end + transfer),
 * which is what sim_run gives. The AR/OS tail is timed as the simulator times the generators'
 * tail (every device enters its ARs in ascending stage order, a collective starts when its last
 * member arrives). Memory walks each device's list with the sends and receives put where
 * scheme_add_comm puts them, through the memory model's own walk (mem_device_peak). Blocking
 * sends are not modelled here: the search checks what it keeps with sim_run. */
#include <config.h>
#include "sim/search/search_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/scheme_registry.h"
#include "sim/core/memory.h"
#include "sim/schemes/scheme.h"
#include "sim/search/search.h"
#include "sim/core/simulate.h"
#include "sim/core/vpipe.h"
#include "util/err.h"
#include "util/xalloc.h"

static int search_dev_of(const struct plan_geom *g, int mb, int stage)
{
    int d, part;
    vpipe_locate(g, mb, stage, &d, &part);
    return d;
}

int search_ctx_init(struct search_ctx *c, const struct plan *p, double cap, struct mt_err *e)
{
    memset(c, 0, sizeof *c);
    const struct plan_geom *g = plan_geom(p);
    if (config_scheme_async(g->scheme))
        return err_set(e, MT_EUNSUPPORTED,
                       "the search covers synchronous schemes (one flushed iteration); %s has "
                       "none", config_scheme_name(g->scheme));
    c->cfg = plan_config(p);
    c->geom = *g;
    TRY(scheme_costs(c->cfg, &c->cost, e));
    c->D = g->devices;
    c->keys = g->mbs * g->stages;
    c->n_ops = c->keys * SK__COUNT;
    c->cap = cap;
    c->split = xcalloc((size_t)c->keys + 1, 1);
    for (int d = 0; d < c->D; d++)
        for (int i = 0; i < plan_len(p, d); i++) {
            const struct instr *in = plan_at(p, d, i);
            if ((in->op == OP_W || in->op == OP_B) && in->mb >= 0 && in->mb < g->mbs &&
                in->stage >= 0 && in->stage < g->stages)
                c->split[in->mb * g->stages + in->stage] = 1;
        }
    c->op = xcalloc((size_t)c->n_ops + 1, sizeof *c->op);
    c->dev_cap = xcalloc((size_t)c->D, sizeof(int));
    c->stat = xcalloc((size_t)c->D, sizeof(double));
    c->ar = xcalloc((size_t)g->stages, sizeof(double));
    c->os = xcalloc((size_t)g->stages, sizeof(double));
    int S = g->stages;
    for (int mb = 0; mb < g->mbs; mb++)
        for (int s = 0; s < S; s++) {
            int key = mb * S + s, dev, part;
            vpipe_locate(g, mb, s, &dev, &part);
            int prev = s > 0 ? search_dev_of(g, mb, s - 1) : -1;
            int next = s < S - 1 ? search_dev_of(g, mb, s + 1) : -1;
            for (int k = 0; k < SK__COUNT; k++) {
                struct search_op *o = &c->op[SEARCH_OP(key, k)];
                *o = (struct search_op){mb, s, part, dev, -1, 0, 0, -1, -1};
                if (k == SK_W && !c->split[key]) {
                    o->dev = -1;
                    continue;
                }
                c->dev_cap[dev]++;
                static const enum op kind_op[SK__COUNT] = {OP_FW, OP_RC, OP_BW, OP_W};
                struct instr in = {kind_op[k], mb, part, s, -1, 0, 0, 0};
                if (k == SK_B && c->split[key])
                    in.op = OP_B;
                o->dur = sim_instr_latency(&c->cost, &in);
                if (k == SK_F) {
                    if (s > 0) {
                        o->pred = SEARCH_OP(key - 1, SK_F);
                        if (prev != dev) {
                            o->in_dev = prev;
                            o->lat = c->cost.stage[s - 1].p2p; /* the SA of stage s - 1 */
                        }
                    }
                    if (s < S - 1 && next != dev)
                        o->out_dev = next;
                } else if (k == SK_B) {
                    if (s < S - 1) {
                        o->pred = SEARCH_OP(key + 1, SK_B);
                        if (next != dev) {
                            o->in_dev = next;
                            o->lat = c->cost.stage[s + 1].p2p; /* the SG of stage s + 1 */
                        }
                    } else {
                        o->pred = SEARCH_OP(key, SK_F);
                    }
                    if (s > 0 && prev != dev)
                        o->out_dev = prev;
                } else {
                    o->pred = SEARCH_OP(key, k == SK_RC ? SK_F : SK_B);
                }
            }
        }
    for (int d = 0; d < c->D; d++) {
        c->stride = c->dev_cap[d] > c->stride ? c->dev_cap[d] : c->stride;
        for (int part = 0; part < g->parts; part++)
            c->stat[d] += c->cost.stage[vpipe_stage(g, d, 0, part)].static_bytes;
    }
    /* the first lane seen on each channel (stage * 2 + forward or backward), -1 none */
    int *lane = xmalloc((size_t)c->D * c->D * sizeof(int));
    for (int k = 0; k < c->D * c->D; k++)
        lane[k] = -1;
    for (int op = 0; op < c->n_ops; op++) {
        const struct search_op *o = &c->op[op];
        if (o->dev < 0 || o->out_dev < 0)
            continue;
        int ch = o->dev * c->D + o->out_dev, id = o->stage * 2 + (SEARCH_KIND(op) == SK_B);
        if (lane[ch] >= 0 && lane[ch] != id)
            c->mixed_channels = true;
        lane[ch] = id;
    }
    free(lane);
    c->replicated = c->cfg->cluster.dp > 1 || scheme_registry_get(g->scheme)->replicas > 1;
    for (int s = 0; s < S; s++) {
        struct instr ar = {OP_AR, -1, 0, s, -1, 0, 0, 0}, os = {OP_OS, -1, 0, s, -1, 0, 0, 0};
        c->ar[s] = c->replicated ? sim_instr_latency(&c->cost, &ar) : 0;
        c->os[s] = sim_instr_latency(&c->cost, &os);
    }
    return MT_OK;
}

void search_ctx_fini(struct search_ctx *c)
{
    cost_model_fini(&c->cost);
    free(c->op);
    free(c->split);
    free(c->dev_cap);
    free(c->stat);
    free(c->ar);
    free(c->os);
    memset(c, 0, sizeof *c);
}

void search_sched_init(const struct search_ctx *c, struct search_sched *s)
{
    s->ord = xmalloc(((size_t)c->D * c->stride + 1) * sizeof(int));
    s->len = xcalloc((size_t)c->D, sizeof(int));
    s->ck = xcalloc((size_t)c->keys + 1, 1);
}

void search_sched_fini(struct search_sched *s)
{
    free(s->ord);
    free(s->len);
    free(s->ck);
    memset(s, 0, sizeof *s);
}

void search_sched_copy(const struct search_ctx *c, struct search_sched *dst,
                       const struct search_sched *src)
{
    for (int d = 0; d < c->D; d++) {
        memcpy(dst->ord + (size_t)d * c->stride, src->ord + (size_t)d * c->stride,
               (size_t)src->len[d] * sizeof(int));
        dst->len[d] = src->len[d];
    }
    memcpy(dst->ck, src->ck, (size_t)c->keys);
}

int search_sched_from_plan(const struct search_ctx *c, const struct plan *p,
                           struct search_sched *s, struct mt_err *e)
{
    const struct plan_geom *g = plan_geom(p);
    if (g->devices != c->D || g->mbs != c->geom.mbs || g->stages != c->geom.stages)
        return err_set(e, MT_EINVAL, "the plan is not of the searched work");
    unsigned char *seen = xcalloc((size_t)c->n_ops + 1, 1);
    memset(s->ck, 0, (size_t)c->keys);
    int rc = MT_OK;
    for (int d = 0; d < c->D && rc == MT_OK; d++) {
        s->len[d] = 0;
        for (int i = 0; i < plan_len(p, d); i++) {
            const struct instr *in = plan_at(p, d, i);
            int kind;
            switch (in->op) {
            case OP_FW: case OP_CFW: kind = SK_F; break;
            case OP_RC: kind = SK_RC; break;
            case OP_BW: case OP_B: kind = SK_B; break;
            case OP_W: kind = SK_W; break;
            case OP_RL: kind = SK_RC; break;
            case OP_OF: /* offloaded: its forward's flag (the OF is put right after it) */
                if (in->mb >= 0 && in->mb < g->mbs && in->stage >= 0 && in->stage < g->stages)
                    s->ck[in->mb * g->stages + in->stage] = SEARCH_CK_OFFLOAD;
                continue;
            default: continue;
            }
            int key = in->mb * g->stages + in->stage, op = SEARCH_OP(key, kind);
            if (in->mb < 0 || in->mb >= g->mbs || in->stage < 0 || in->stage >= g->stages ||
                c->op[op].dev != d || seen[op] || s->len[d] >= c->dev_cap[d]) {
                rc = err_set(e, MT_EINVAL, "device %d, instruction %d: not of the searched work",
                             d, i);
                break;
            }
            seen[op] = 1;
            if (in->op == OP_CFW)
                s->ck[key] = 1;
            s->ord[(size_t)d * c->stride + s->len[d]++] = op;
        }
    }
    for (int key = 0; key < c->keys && rc == MT_OK; key++)
        if (!seen[SEARCH_OP(key, SK_F)] || !seen[SEARCH_OP(key, SK_B)] ||
            seen[SEARCH_OP(key, SK_RC)] != (s->ck[key] != SEARCH_CK_KEEP) ||
            seen[SEARCH_OP(key, SK_W)] != c->split[key])
            rc = err_set(e, MT_EINVAL, "micro-batch %d stage %d: incomplete", key / g->stages,
                         key % g->stages);
    free(seen);
    return rc;
}

static struct instr search_instr(const struct search_ctx *c, const struct search_sched *s, int op)
{
    const struct search_op *o = &c->op[op];
    int key = SEARCH_KEY(op);
    enum op kind;
    switch (SEARCH_KIND(op)) {
    case SK_F: kind = s->ck[key] == SEARCH_CK_CKPT ? OP_CFW : OP_FW; break;
    case SK_RC: kind = s->ck[key] == SEARCH_CK_OFFLOAD ? OP_RL : OP_RC; break;
    case SK_B: kind = c->split[key] ? OP_B : OP_BW; break;
    default: kind = OP_W; break;
    }
    return (struct instr){kind, o->mb, o->part, o->stage, -1, 0, 0, 0};
}

struct plan *search_sched_plan(const struct search_ctx *c, const struct search_sched *s)
{
    struct plan *p = plan_new(c->cfg, &c->geom);
    for (int d = 0; d < c->D; d++)
        for (int i = 0; i < s->len[d]; i++) {
            int op = s->ord[(size_t)d * c->stride + i];
            struct instr in = search_instr(c, s, op);
            plan_append(p, d, in);
            if (SEARCH_KIND(op) == SK_F && s->ck[SEARCH_KEY(op)] == SEARCH_CK_OFFLOAD) {
                in.op = OP_OF; /* after the forward's send (scheme_add_comm) */
                plan_append(p, d, in);
            }
        }
    scheme_add_comm(p);
    return p;
}

void search_eval_init(const struct search_ctx *c, struct search_eval *ev)
{
    memset(ev, 0, sizeof *ev);
    size_t n = (size_t)c->n_ops + 1, D = (size_t)c->D;
    ev->start = xcalloc(n, sizeof(double));
    ev->end = xcalloc(n, sizeof(double));
    ev->done = xcalloc(n, 1);
    ev->why = xcalloc(n, 1);
    ev->pos = xcalloc(n, sizeof(int));
    ev->wait_head = xmalloc(n * sizeof(int));
    for (size_t i = 0; i < n; i++)
        ev->wait_head[i] = -1;
    ev->pc = xcalloc(D, sizeof(int));
    ev->queue = xcalloc(D, sizeof(int));
    ev->wait_next = xcalloc(D, sizeof(int));
    ev->queued = xcalloc(D, 1);
    ev->free_at = xcalloc(D, sizeof(double));
    ev->fin = xcalloc(D, sizeof(double));
    ev->buf = xmalloc((4 * (size_t)c->stride + 1) * sizeof(struct instr));
    ev->rcvd = xcalloc(n, 1);
    ev->seq = xmalloc(n * sizeof(int));
    ev->peer_slot = xmalloc(D * sizeof(int));
    for (size_t i = 0; i < D; i++)
        ev->peer_slot[i] = -1;
    ev->seq_off = xcalloc(D, sizeof(int));
    ev->seq_end = xcalloc(D, sizeof(int));
    ev->seq_next = xcalloc(D, sizeof(int));
    if (c->offload) {
        size_t keys = (size_t)c->keys + 1, x = 4 * (size_t)c->stride + 1;
        ev->of_start = xcalloc(keys, sizeof(double));
        ev->of_end = xcalloc(keys, sizeof(double));
        ev->lane = xcalloc(2 * D, sizeof(double));
        ev->xs = xcalloc(x, sizeof(double));
        ev->xe = xcalloc(x, sizeof(double));
        ev->xafter = xcalloc(x, sizeof(double));
        ev->curve_t = xcalloc(3 * x + 2, sizeof(double));
        ev->curve_mem = xcalloc(3 * x + 2, sizeof(double));
        ev->steps = xcalloc(x, sizeof *ev->steps);
    }
}

void search_eval_fini(struct search_eval *ev)
{
    free(ev->start);
    free(ev->end);
    free(ev->done);
    free(ev->why);
    free(ev->pos);
    free(ev->wait_head);
    free(ev->pc);
    free(ev->queue);
    free(ev->wait_next);
    free(ev->queued);
    free(ev->free_at);
    free(ev->fin);
    free(ev->buf);
    free(ev->rcvd);
    free(ev->seq);
    free(ev->peer_slot);
    free(ev->seq_off);
    free(ev->seq_end);
    free(ev->seq_next);
    free(ev->of_start);
    free(ev->of_end);
    free(ev->lane);
    free(ev->xs);
    free(ev->xe);
    free(ev->xafter);
    free(ev->curve_t);
    free(ev->curve_mem);
    free(ev->steps);
    memset(ev, 0, sizeof *ev);
}

/* The AR/OS tail after each device's compute, as the simulator times it. */
static void search_eval_tail(const struct search_ctx *c, struct search_eval *ev)
{
    const struct plan_geom *g = &c->geom;
    double *t = ev->fin;
    for (int d = 0; d < c->D; d++)
        t[d] = ev->free_at[d];
    if (c->replicated)
        for (int s = 0; s < g->stages; s++) {
            double start = 0;
            int members[2], n = 0;
            for (int d = 0; d < c->D && n < 2; d++)
                for (int part = 0; part < g->parts; part++)
                    if (vpipe_stage(g, d, 0, part) == s) {
                        members[n++] = d;
                        break;
                    }
            for (int k = 0; k < n; k++)
                start = fmax(start, t[members[k]]);
            for (int k = 0; k < n; k++)
                t[members[k]] = start + c->ar[s];
        }
    ev->makespan = ev->sum_finish = 0;
    for (int d = 0; d < c->D; d++) {
        for (int part = 0; part < g->parts; part++)
            t[d] += c->os[vpipe_stage(g, d, 0, part)];
        ev->makespan = fmax(ev->makespan, t[d]);
        ev->sum_finish += t[d];
    }
}

/* Calls the callback with the evaluations so far (at most the budget); it may say stop. */
static void search_progress_report(struct search_progress *p)
{
    if (!p->fn(p->ctx, p->done < p->budget ? p->done : p->budget, p->budget))
        p->stop = true;
}

void search_progress_add(const struct search_ctx *c, long n)
{
    struct search_progress *p = c->prog;
    if (p == NULL)
        return;
    p->done += n;
    if (p->done < p->next || p->stop)
        return;
    p->next = p->done + p->every;
    search_progress_report(p);
}

long search_progress_every(int n_ops)
{
    long every = SEARCH_PROGRESS_EVERY * 512L / (n_ops > 1 ? n_ops : 1);
    return every < 1 ? 1 : every;
}

struct search_progress search_progress_make(const struct search_opts *o, long budget, int n_ops)
{
    long every = search_progress_every(n_ops);
    return (struct search_progress){.fn = o->progress, .ctx = o->progress_ctx, .next = every,
                                    .budget = budget, .every = every};
}

void search_progress_work(const struct search_ctx *c, long ops)
{
    struct search_progress *p = c->prog;
    if (p == NULL || p->stop)
        return;
    p->work += ops;
    if (p->work < SEARCH_PROGRESS_EVERY * 512L)
        return;
    p->work = 0;
    search_progress_report(p);
}

/* The RL of an offloaded forward (op: its RC slot), reached by device d after what came before
 * it in d's order: on the H2D lane once its OF is done; the device goes on. */
static void search_eval_rl(const struct search_ctx *c, int op, int d, struct search_eval *ev)
{
    int key = SEARCH_KEY(op);
    double *lane = &ev->lane[2 * d + 1], st = ev->free_at[d];
    ev->why[op] = st > 0 ? 1 : 0;
    if (ev->of_end[key] > st) {
        st = ev->of_end[key];
        ev->why[op] = 2;
    }
    if (*lane > st)
        st = *lane;
    ev->start[op] = st;
    ev->end[op] = *lane = st + c->cost.stage[c->op[op].stage].copy;
    ev->done[op] = 1;
}

bool search_eval_time(const struct search_ctx *c, const struct search_sched *s,
                      struct search_eval *ev)
{
    if (c->prog != NULL)
        search_progress_add(c, 1);
    int D = c->D, ql = 0, total = 0;
    memset(ev->done, 0, (size_t)c->n_ops);
    ev->n_rc = 0;
    ev->rc_time = 0;
    for (int d = D - 1; d >= 0; d--) {
        ev->pc[d] = 0;
        ev->free_at[d] = 0;
        ev->queue[ql++] = d;
        ev->queued[d] = 1;
        total += s->len[d];
        const int *ord = s->ord + (size_t)d * c->stride;
        for (int i = 0; i < s->len[d]; i++) {
            ev->pos[ord[i]] = i;
            if (SEARCH_KIND(ord[i]) == SK_RC && !SEARCH_IS_RL(s, ord[i])) {
                ev->n_rc++;
                ev->rc_time += c->op[ord[i]].dur;
            }
        }
    }
    if (c->offload)
        memset(ev->lane, 0, 2 * (size_t)D * sizeof(double));
    int ran = 0;
    ev->last = -1;
    double last_end = -1;
    while (ql > 0) {
        int d = ev->queue[--ql];
        ev->queued[d] = 0;
        const int *ord = s->ord + (size_t)d * c->stride;
        while (ev->pc[d] < s->len[d]) {
            int op = ord[ev->pc[d]];
            const struct search_op *o = &c->op[op];
            if (c->offload && SEARCH_IS_RL(s, op)) { /* its forward ran: on this device */
                search_eval_rl(c, op, d, ev);
                ran++;
                ev->pc[d]++;
                continue;
            }
            double ready = 0;
            if (o->pred >= 0) {
                if (!ev->done[o->pred]) {
                    ev->wait_next[d] = ev->wait_head[o->pred];
                    ev->wait_head[o->pred] = d;
                    break;
                }
                ready = ev->end[o->pred] + o->lat;
            }
            double st = ev->free_at[d];
            if (ready > 0 && ready >= st) {
                st = ready;
                ev->why[op] = 2;
            } else {
                ev->why[op] = st > 0 ? 1 : 0;
            }
            int key = SEARCH_KEY(op);
            bool off = c->offload && s->ck[key] == SEARCH_CK_OFFLOAD;
            if (off && SEARCH_KIND(op) == SK_B && ev->end[SEARCH_OP(key, SK_RC)] > st) {
                st = ev->end[SEARCH_OP(key, SK_RC)]; /* its activations are back */
                ev->why[op] = 3;
            }
            ev->start[op] = st;
            ev->end[op] = ev->free_at[d] = st + o->dur;
            if (off && SEARCH_KIND(op) == SK_F) { /* its OF, reached right after it */
                double *lane = &ev->lane[2 * d];
                ev->of_start[key] = ev->end[op] > *lane ? ev->end[op] : *lane;
                ev->of_end[key] = *lane = ev->of_start[key] + c->cost.stage[o->stage].copy;
            }
            ev->done[op] = 1;
            if (ev->end[op] > last_end) {
                last_end = ev->end[op];
                ev->last = op;
            }
            ran++;
            ev->pc[d]++;
            for (int w = ev->wait_head[op]; w >= 0; w = ev->wait_next[w])
                if (!ev->queued[w]) {
                    ev->queued[w] = 1;
                    ev->queue[ql++] = w;
                }
            ev->wait_head[op] = -1;
        }
    }
    if (ran < total) {
        for (int op = 0; op < c->n_ops; op++) /* leave no waiter behind */
            ev->wait_head[op] = -1;
        ev->makespan = INFINITY;
        return false;
    }
    search_eval_tail(c, ev);
    return true;
}

/* The receive of op (which receives from another device) in the plan's terms. */
static struct instr search_recv_of(const struct search_ctx *c, int op)
{
    const struct search_op *o = &c->op[op];
    return (struct instr){SEARCH_KIND(op) == SK_F ? OP_RA : OP_RG, o->mb, o->part, o->stage,
                          o->in_dev, 0, 0, 0};
}

/* The op that receives what op sends (the next stage's forward, the previous one's backward). */
static int search_receiver(int op)
{
    int key = SEARCH_KEY(op);
    return SEARCH_KIND(op) == SK_F ? SEARCH_OP(key + 1, SK_F) : SEARCH_OP(key - 1, SK_B);
}

/* Device d's list as the plan will hold it: receives before, sends after (scheme_add_comm),
 * then each peer's messages received in the order the peer sent them (plan_match_receives,
 * sim/core/recv_order.h): a receive met before those sent ahead of it pulls them in just
 * before itself. That changes no time (sends do not block) but holds the pulled-in buffers
 * longer: a V's pair of devices (ZB-V, DualPipeV, V-Half, V-Min) crosses activations and
 * gradients on one channel. */
int search_eval_expand(const struct search_ctx *c, const struct search_sched *s, int d,
                       struct search_eval *ev, int *group)
{
    struct instr *buf = ev->buf;
    const int *ord = s->ord + (size_t)d * c->stride;
    /* each peer's sends to d, in its order: seq[seq_off[slot] .. seq_end[slot]) */
    int n_seq = 0, slots = 0;
    for (int i = 0; i < s->len[d] && c->mixed_channels; i++) {
        int p = c->op[ord[i]].in_dev;
        if (p < 0 || ev->peer_slot[p] >= 0)
            continue;
        int slot = slots++;
        ev->peer_slot[p] = slot;
        ev->seq_off[slot] = ev->seq_next[slot] = n_seq;
        const int *po = s->ord + (size_t)p * c->stride;
        for (int j = 0; j < s->len[p]; j++)
            if (c->op[po[j]].out_dev == d)
                ev->seq[n_seq++] = po[j];
        ev->seq_end[slot] = n_seq;
    }
    int n = 0;
    for (int i = 0; i < s->len[d]; i++) {
        int op = ord[i];
        const struct search_op *o = &c->op[op];
        int kind = SEARCH_KIND(op);
        if (group != NULL)
            group[i] = n;
        if (o->in_dev >= 0 && !c->mixed_channels) { /* one lane a channel: in order */
            buf[n++] = search_recv_of(c, op);
        } else if (o->in_dev >= 0 && !ev->rcvd[op]) {
            int slot = ev->peer_slot[o->in_dev];
            /* what the peer sent up to this op's message, not received yet */
            while (ev->seq_next[slot] < ev->seq_end[slot]) {
                int r = search_receiver(ev->seq[ev->seq_next[slot]++]);
                if (!ev->rcvd[r]) {
                    buf[n++] = search_recv_of(c, r);
                    ev->rcvd[r] = 1;
                }
                if (r == op)
                    break;
            }
            if (!ev->rcvd[op]) { /* not among the peer's sends: where scheme_add_comm puts it */
                buf[n++] = search_recv_of(c, op);
                ev->rcvd[op] = 1;
            }
        }
        buf[n++] = search_instr(c, s, op);
        if (o->out_dev >= 0)
            buf[n++] = (struct instr){kind == SK_F ? OP_SA : OP_SG, o->mb, o->part, o->stage,
                                      o->out_dev, 0, 0, 0};
        if (kind == SK_F && s->ck[SEARCH_KEY(op)] == SEARCH_CK_OFFLOAD) { /* after its send */
            buf[n] = buf[n - 1 - (o->out_dev >= 0)];
            buf[n++].op = OP_OF;
        }
    }
    for (int i = 0; i < s->len[d] && c->mixed_channels; i++) {
        ev->rcvd[ord[i]] = 0;
        if (c->op[ord[i]].in_dev >= 0)
            ev->peer_slot[c->op[ord[i]].in_dev] = -1;
    }
    return n;
}

/* Whether device d's order holds an RL (an offloaded forward). */
static bool search_dev_offloads(const struct search_ctx *c, const struct search_sched *s, int d)
{
    const int *ord = s->ord + (size_t)d * c->stride;
    for (int i = 0; i < s->len[d]; i++)
        if (SEARCH_IS_RL(s, ord[i]))
            return true;
    return false;
}

/* Device d's peak with copies on it: its list as the plan holds it (search_eval_expand: receives
 * in their senders' order, an offloaded forward's OF after its send), each instruction at
 * the time the simulator gives it (a receive when the device is free and its data is in, a
 * send at its producer's end, a copy on its lane), walked by the memory model's timed walk
 * (mem_device_walk_timed). */
static double search_eval_peak_timed(const struct search_ctx *c, const struct search_sched *s,
                                     int d, struct search_eval *ev)
{
    int n = search_eval_expand(c, s, d, ev, NULL), S = c->geom.stages;
    const struct instr *buf = ev->buf;
    double *xs = ev->xs, *xe = ev->xe, free_at = 0;
    for (int i = 0; i < n; i++) {
        const struct instr *in = &buf[i];
        int key = in->mb * S + in->stage;
        switch (in->op) {
        case OP_RA:
        case OP_RG: {
            const struct search_op *r = &c->op[SEARCH_OP(key, in->op == OP_RA ? SK_F : SK_B)];
            double at = ev->end[r->pred] + r->lat;
            xs[i] = xe[i] = free_at = at > free_at ? at : free_at;
            break;
        }
        case OP_SA:
        case OP_SG:
            xs[i] = ev->end[SEARCH_OP(key, in->op == OP_SA ? SK_F : SK_B)];
            xe[i] = xs[i] + c->cost.stage[in->stage].p2p;
            break;
        case OP_OF:
            xs[i] = ev->of_start[key];
            xe[i] = ev->of_end[key];
            break;
        default: { /* compute, or an RL (its RC's slot; the device goes on) */
            int kind = in->op == OP_FW || in->op == OP_CFW ? SK_F
                       : in->op == OP_RC || in->op == OP_RL ? SK_RC
                       : in->op == OP_W                     ? SK_W
                                                            : SK_B;
            xs[i] = ev->start[SEARCH_OP(key, kind)];
            xe[i] = ev->end[SEARCH_OP(key, kind)];
            if (in->op != OP_RL)
                free_at = xe[i];
        }
        }
    }
    mem_device_steps(&c->cost, buf, n, ev->steps);
    struct mem_walk w = {0};
    ev->curve_t[0] = 0;
    ev->curve_mem[0] = c->stat[d];
    struct mem_curve cv = {c->stat[d], ev->curve_t, ev->curve_mem, 1};
    mem_device_walk_timed(&c->cost, buf, n, xs, xe, ev->steps, &w, &cv, ev->xafter);
    return c->stat[d] + mem_max(w.top, w.peak);
}

double search_eval_peak(const struct search_ctx *c, const struct search_sched *s, int d,
                        struct search_eval *ev)
{
    if (c->offload && search_dev_offloads(c, s, d))
        return search_eval_peak_timed(c, s, d, ev);
    int n = search_eval_expand(c, s, d, ev, NULL);
    return c->stat[d] + mem_device_peak(&c->cost, ev->buf, n);
}

int search_next_w(const struct search_ctx *c, const int *keys, int nw, int nb)
{
    int w = nw;
    while (w < nb && !c->split[keys[w]])
        w++;
    return w < nb ? SEARCH_OP(keys[w], SK_W) : -1;
}

bool search_fits(const struct search_ctx *c, double peak)
{
    return !(c->cap > 0) || peak <= c->cap * (1 + 1e-12);
}

bool search_before(const struct search_ctx *c, int a, int b)
{
    if (SEARCH_KEY(a) == SEARCH_KEY(b))
        return SEARCH_KIND(a) < SEARCH_KIND(b);
    return c->op[b].pred == a;
}

bool search_may_swap(const struct search_ctx *c, int a, int b)
{
    const struct search_op *x = &c->op[a], *y = &c->op[b];
    if (search_before(c, a, b))
        return false;
    if (x->in_dev >= 0 && x->in_dev == y->in_dev)
        return false;
    return !(x->out_dev >= 0 && x->out_dev == y->out_dev);
}

double search_mem_walk_op(const struct search_ctx *c, int op, bool ck, struct mem_walk *w,
                          double *pending)
{
    const struct search_op *o = &c->op[op];
    int kind = SEARCH_KIND(op), key = SEARCH_KEY(op), n = 0;
    struct instr in[3];
    enum op main = kind == SK_F ? (ck ? OP_CFW : OP_FW)
                   : kind == SK_RC ? OP_RC
                   : kind == SK_B  ? (c->split[key] ? OP_B : OP_BW)
                                   : OP_W;
    if (o->in_dev >= 0)
        in[n++] = (struct instr){kind == SK_F ? OP_RA : OP_RG, o->mb, o->part, o->stage,
                                 o->in_dev, 0, 0, 0};
    in[n++] = (struct instr){main, o->mb, o->part, o->stage, -1, 0, 0, 0};
    if (o->out_dev >= 0)
        in[n++] = (struct instr){kind == SK_F ? OP_SA : OP_SG, o->mb, o->part, o->stage,
                                 o->out_dev, 0, 0, 0};
    for (int i = 0; i < n; i++) {
        struct mem_step m = mem_step_next(&c->cost, &in[i], pending);
        double held[3];
        mem_walk_step(&c->cost, &in[i], m, w, held);
    }
    return c->stat[o->dev] + (w->top > w->peak ? w->top : w->peak);
}
