/* sim/core/simulate.c: the dynamic-programming timeline of §5.2. sim_run_durations hands a plan to
 * the fast path (simulate_fast.c: synchronous plans whose sends do not block, bit for bit the
 * same figures) and everything else to the general event loop here, sim_run_general.
 * Dependencies are resolved once into flat arrays (vpipe_deps), then a worklist of devices
 * runs: a device advances through its list while the head instruction's dependencies are
 * done; when one is not, the device waits on that instruction and is woken when it finishes
 * (or, for a rendezvous send or a collective, when its partner is reached). An empty worklist
 * with instructions left is a deadlock. Every instruction starts at
 * max(device free, last dependency's end); for RA/RG the dependency's end is the arrival of
 * the data, for AR it is the arrival of the last replica at the collective. */
#include <config.h>
#include "sim/core/simulate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/config.h"
#include "model/cost.h"
#include "sim/core/async.h"
#include "sim/core/memory.h"
#include "sim/core/overlap.h"
#include "sim/plan/plan.h"
#include "sim/schemes/scheme.h"
#include "sim/core/share.h"
#include "sim/core/simulate_internal.h"
#include "sim/core/vpipe.h"
#include "util/err.h"
#include "util/xalloc.h"

double sim_instr_latency(const struct cost_model *cost, const struct instr *in)
{
    return sim_latency(cost, in);
}

void sim_result_fini(struct sim_result *r)
{
    if (r == NULL)
        return;
    free(r->start);
    free(r->end);
    free(r->mem_after);
    free(r->staleness);
    free(r->a2a_hidden);
    free(r->a2a_exposed);
    free(r->a2a_partner);
    free(r->a2a_bytes);
    if (r->dev)
        for (int d = 0; d < r->devices; d++) {
            free(r->dev[d].curve_t);
            free(r->dev[d].curve_mem);
        }
    free(r->dev);
    memset(r, 0, sizeof *r);
}

struct sim_state {
    const struct plan *p;
    const struct cost_model *cost;
    const struct vpipe_index *x;
    bool blocking;
    const double *fixed;  /* [total] or NULL: measured durations in place of the costs' (replay) */
    int *dep_off, *deps;  /* CSR: deps of id in deps[dep_off[id] .. dep_off[id+1]) */
    int *partner;         /* SA/SG: the matching receive; -1 elsewhere */
    double *posted;       /* RA/RG (blocking) and AR: when the device reached it; < 0 not yet */
    double *dur;
    unsigned char *done;
    double *free_at;      /* [devices] */
    double *lane_free;    /* [2 devices]: when each device's D2H (OF) and H2D (RL) lane is free */
    int *pc;              /* [devices] */
    int *wait_head;       /* [total]: first device waiting on the instruction, -1 none */
    int *wait_next;       /* [devices]: next device waiting on the same instruction */
    int *base;            /* [devices]: flat id of each device's first instruction */
    const struct instr **ins; /* [devices]: each device's list */
    int *len;             /* [devices] */
    int *queue;           /* [devices]: devices to run */
    unsigned char *queued;
    int queue_len;
};

static void sim_wait_on(struct sim_state *st, int d, int id)
{
    st->wait_next[d] = st->wait_head[id];
    st->wait_head[id] = d;
}

/* Moves every device waiting on id to the worklist. */
static void sim_wake(struct sim_state *st, int id)
{
    for (int d = st->wait_head[id]; d >= 0; d = st->wait_next[d])
        if (!st->queued[d]) {
            st->queued[d] = 1;
            st->queue[st->queue_len++] = d;
        }
    st->wait_head[id] = -1;
}

static int sim_resolve(struct sim_state *st, struct sim_result *r, struct mt_err *e)
{
    const struct plan *p = st->p;
    int total = r->total;
    st->dep_off = xmalloc(((size_t)total + 1) * sizeof(int));
    st->deps = xmalloc(((size_t)total * VPIPE_MAX_DEPS + 1) * sizeof(int));
    st->partner = xmalloc(((size_t)total + 1) * sizeof(int));
    int n = 0;
    const struct plan_geom *g = plan_geom(p);
    for (int d = 0; d < r->devices; d++)
        for (int i = 0; i < st->len[d]; i++) {
            int id = st->base[d] + i;
            const struct instr *in = &st->ins[d][i];
            st->dep_off[id] = n;
            struct vpipe_missing miss;
            int k = vpipe_deps_of(g, st->x, in, d, st->deps + n, &miss);
            if (k < 0) {
                char what[32];
                plan_instr_label(p, in, what, sizeof what);
                return err_set(e, MT_EINFEASIBLE,
                               "device %d, instruction %d (%s, stage %d): needs %s of mb %d stage "
                               "%d, which the plan lacks",
                               d, i, what, in->stage, plan_op_name(miss.op), miss.mb, miss.stage);
            }
            n += k;
            st->partner[id] = vpipe_is_send(in->op) ? vpipe_partner_of(st->x, in) : -1;
            st->dur[id] = st->fixed && isfinite(st->fixed[id]) ? st->fixed[id]
                                                                : sim_latency(st->cost, in);
        }
    st->dep_off[total] = n;
    return MT_OK;
}

/* Megatron-LM's synchronous p2p (megatron/core/pipeline_parallel/p2p_communication.py:
 * send_forward_recv_backward, send_backward_recv_forward, and the interleaved schedule's
 * send_forward_backward_recv_forward_backward): the p2p calls between two computes are one
 * batch_isend_irecv, posted together and waited together. Plans place a compute's sends right
 * after it and the next compute's receives right before that, so the batch is the run of
 * sends and receives the send at the head starts: its receives are posted with it. A
 * recompute (or a host copy) between them reads nothing received (Mario's overlap pass puts
 * RC between a send and the receive it hides, so the receive is posted before RC runs). Under
 * rendezvous sends this is what keeps 1F1B's steady state from deadlocking (device d's SA_i
 * waits for d+1's RA_i while d+1's SG_j waits for d's RG_j: each batch posts the receive the
 * other side waits for). */
static void sim_post_batch_recvs(struct sim_state *st, int d, double at)
{
    for (int pc = st->pc[d] + 1; pc < st->len[d]; pc++) {
        const struct instr *in = &st->ins[d][pc];
        if (vpipe_is_send(in->op) || in->op == OP_RC || in->op == OP_OF || in->op == OP_RL)
            continue;
        if (!vpipe_is_recv(in->op))
            return;
        int id = st->base[d] + pc;
        if (st->posted[id] < 0) {
            st->posted[id] = at;
            sim_wake(st, id);
        }
    }
}

/* Tries to run the head instruction of device d. Returns true when it ran. */
static bool sim_step(struct sim_state *st, struct sim_result *r, int d)
{
    const struct plan *p = st->p;
    int id = st->base[d] + st->pc[d];
    const struct instr *in = &st->ins[d][st->pc[d]];
    if (st->done[id]) { /* an AR finished by its group */
        if (r->end[id] > st->free_at[d])
            st->free_at[d] = r->end[id];
        return true;
    }
    bool is_recv = vpipe_is_recv(in->op);
    if (is_recv && st->posted[id] < 0) {
        st->posted[id] = st->free_at[d];
        sim_wake(st, id); /* a rendezvous sender may wait for this receive */
    }
    double ready = st->free_at[d];
    for (int k = st->dep_off[id]; k < st->dep_off[id + 1]; k++) {
        int dep = st->deps[k];
        if (!st->done[dep]) {
            sim_wait_on(st, d, dep);
            return false;
        }
        if (r->end[dep] > ready)
            ready = r->end[dep];
    }
    switch (in->op) {
    case OP_SA:
    case OP_SG:
        if (st->blocking) {
            sim_post_batch_recvs(st, d, ready);
            int rcv = st->partner[id];
            if (rcv < 0)
                return false;
            if (st->posted[rcv] < 0) {
                sim_wait_on(st, d, rcv);
                return false;
            }
            if (st->posted[rcv] > ready)
                ready = st->posted[rcv];
        }
        r->start[id] = ready;
        r->end[id] = ready + st->dur[id];
        st->free_at[d] = st->blocking ? r->end[id] : ready;
        break;
    case OP_OF:
    case OP_RL: { /* on its copy lane, one copy at a time in list order; the device goes on */
        double *lane = &st->lane_free[2 * d + (in->op == OP_RL)];
        r->start[id] = ready > *lane ? ready : *lane;
        r->end[id] = r->start[id] + st->dur[id];
        *lane = r->end[id];
        break;
    }
    case OP_AR: {
        int group[64];
        int n = vpipe_ar_group(p, st->x, id, group, 64);
        if (st->posted[id] < 0) {
            st->posted[id] = ready;
            for (int k = 0; k < n; k++)
                sim_wake(st, group[k]);
        }
        double start = 0;
        for (int k = 0; k < n; k++) {
            if (st->posted[group[k]] < 0) {
                sim_wait_on(st, d, id);
                return false;
            }
            if (st->posted[group[k]] > start)
                start = st->posted[group[k]];
        }
        for (int k = 0; k < n; k++) {
            r->start[group[k]] = start;
            r->end[group[k]] = start + st->dur[group[k]];
            st->done[group[k]] = 1;
            sim_wake(st, group[k]);
        }
        st->free_at[d] = r->end[id];
        return true;
    }
    default:
        r->start[id] = ready;
        r->end[id] = ready + st->dur[id];
        st->free_at[d] = r->end[id];
        break;
    }
    st->done[id] = 1;
    sim_wake(st, id);
    return true;
}

static int sim_deadlock(struct sim_state *st, struct sim_result *r, struct mt_err *e)
{
    char msg[MT_ERR_MSG_MAX];
    int len = snprintf(msg, sizeof msg, "deadlock:");
    for (int d = 0; d < r->devices && len < (int)sizeof msg - 1; d++) {
        if (st->pc[d] >= plan_len(st->p, d))
            continue;
        const struct instr *in = plan_at(st->p, d, st->pc[d]);
        char what[32], wait[64] = "its collective partners";
        plan_instr_label(st->p, in, what, sizeof what);
        int id = plan_id(st->p, d, st->pc[d]);
        for (int k = st->dep_off[id]; k < st->dep_off[id + 1]; k++)
            if (!st->done[st->deps[k]]) {
                int dd, di;
                plan_locate_id(st->p, st->deps[k], &dd, &di);
                char dl[32];
                plan_instr_label(st->p, plan_at(st->p, dd, di), dl, sizeof dl);
                snprintf(wait, sizeof wait, "%s on device %d", dl, dd);
                break;
            }
        if (vpipe_is_send(in->op) && st->blocking)
            snprintf(wait, sizeof wait, "its receive on device %d to be posted", in->peer);
        len += snprintf(msg + len, sizeof msg - (size_t)len,
                        " device %d stalls at instruction %d (%s, stage %d) waiting for %s;", d,
                        st->pc[d], what, in->stage, wait);
    }
    if (len > 0 && msg[len - 1] == ';')
        msg[len - 1] = '\0';
    return err_set(e, MT_EINFEASIBLE, "%s", msg);
}

static void sim_memory(struct sim_state *st, struct sim_result *r)
{
    const struct plan *p = st->p;
    struct async_walk *w = async_walk_new(p, st->cost); /* staleness, stashed versions */
    for (int d = 0; d < r->devices; d++) {
        struct sim_device *dv = &r->dev[d];
        const struct plan_geom *g = plan_geom(p);
        async_walk_device(w, d);
        for (int part = 0; part < g->parts; part++)
            dv->static_mem += st->cost->stage[vpipe_stage(g, d, 0, part)].static_bytes;
        int len = st->len[d];
        dv->curve_t = xmalloc(((size_t)len * 3 + 2) * sizeof(double));
        dv->curve_mem = xmalloc(((size_t)len * 3 + 2) * sizeof(double));
        struct mem_step *steps = xmalloc(((size_t)len + 1) * sizeof *steps);
        mem_device_steps(st->cost, st->ins[d], len, steps);
        struct mem_walk mw = {0}; /* top: the peak with running instructions' transients */
        int n = 0;
        dv->curve_t[n] = 0;
        dv->curve_mem[n++] = dv->static_mem;
        bool copies = mem_list_has_copy(st->ins[d], len);
        for (int i = 0; i < len && copies; i++) /* offload: walked at the copies' times */
            mem_step_add_stash(&steps[i], async_walk_step(w, &st->ins[d][i]));
        if (copies) {
            int b = st->base[d];
            struct mem_curve cv = {dv->static_mem, dv->curve_t, dv->curve_mem, n};
            mem_device_walk_timed(st->cost, st->ins[d], len, r->start + b, r->end + b, steps,
                                  &mw, &cv, r->mem_after + b);
            n = cv.n;
            dv->host_peak = mem_device_host_peak(st->cost, st->ins[d], len, r->start + b,
                                                 r->end + b);
            len = 0; /* done */
        }
        for (int i = 0; i < len; i++) {
            int id = st->base[d] + i;
            const struct instr *in = &st->ins[d][i];
            struct mem_step m = steps[i];
            mem_step_add_stash(&m, async_walk_step(w, in)); /* stashed weight versions */
            double held[3];
            mem_walk_step(st->cost, in, m, &mw, held);
            if (m.take != 0) {
                dv->curve_t[n] = r->start[id];
                dv->curve_mem[n++] = dv->static_mem + held[0];
            }
            if (m.give != 0) {
                dv->curve_t[n] = r->end[id];
                dv->curve_mem[n++] = dv->static_mem + held[1];
            }
            if (m.reap != 0) {
                dv->curve_t[n] = r->end[id];
                dv->curve_mem[n++] = dv->static_mem + held[2];
            }
            r->mem_after[id] = dv->static_mem + held[2];
        }
        free(steps);
        async_walk_device_end(w, dv);
        dv->curve_len = n;
        dv->peak_dynamic = mem_max(mw.top, mw.peak);
        dv->peak_mem = dv->static_mem + dv->peak_dynamic;
        if (r->cap > 0 && dv->peak_mem > r->cap && r->oom_device < 0)
            r->oom_device = d;
        if (r->host_cap > 0 && dv->host_peak > r->host_cap && r->host_oom_device < 0)
            r->host_oom_device = d;
    }
    async_walk_finish(w, r);
    async_walk_free(w);
}

int sim_run_costs(const struct plan *p, const struct cost_model *cost, struct sim_result *out,
                  struct mt_err *e)
{
    if (share_applies(plan_config(p))) /* more ranks than cores: they share them */
        return share_run(p, cost, out, e);
    return sim_run_durations(p, cost, NULL, out, e);
}

int sim_run_durations(const struct plan *p, const struct cost_model *cost, const double *dur,
                      struct sim_result *out, struct mt_err *e)
{
    memset(out, 0, sizeof *out);
    if (sim_fast_applies(p) && sim_fast_run(p, cost, dur, out))
        return MT_OK;
    return sim_run_general(p, cost, dur, out, e);
}

void sim_throughput(const struct plan *p, struct sim_result *r)
{
    const struct config *c = plan_config(p);
    double samples = (double)plan_geom(p)->mbs * c->micro_batch_size * c->cluster.dp;
    double dp_eff = c->cluster.dp > 1 ? c->cluster.dp_efficiency : 1.0;
    double seconds = r->unit ? r->step_time : r->step_time * 1e-6;
    r->throughput = seconds > 0 ? samples / seconds * dp_eff : 0;
}

int sim_run_general(const struct plan *p, const struct cost_model *cost, const double *dur,
                    struct sim_result *out, struct mt_err *e)
{
    memset(out, 0, sizeof *out);
    const struct config *c = plan_config(p);
    struct sim_result r = {0};
    r.unit = cost->unit;
    r.devices = plan_devices(p);
    r.total = plan_total(p);
    r.cap = config_mem_cap(c); /* M_θ under unit costs; less the reserve */
    r.oom_device = -1;
    r.host_cap = config_host_cap(c);
    r.host_oom_device = -1;
    r.start = xcalloc((size_t)r.total + 1, sizeof(double));
    r.end = xcalloc((size_t)r.total + 1, sizeof(double));
    r.mem_after = xcalloc((size_t)r.total + 1, sizeof(double));
    r.dev = xcalloc((size_t)r.devices, sizeof *r.dev);

    struct vpipe_index *x = NULL;
    double *paired_dur = overlap_durations(p, cost, dur); /* F&B pairs hide all-to-alls */
    struct sim_state st = {.p = p, .cost = cost, .blocking = c->blocking_send,
                           .fixed = paired_dur != NULL ? paired_dur : dur};
    int rc = vpipe_index_build(p, &x, e);
    if (rc != MT_OK)
        goto fail;
    st.x = x;
    st.dur = xmalloc(((size_t)r.total + 1) * sizeof(double));
    st.posted = xmalloc(((size_t)r.total + 1) * sizeof(double));
    for (int i = 0; i < r.total; i++)
        st.posted[i] = -1;
    st.done = xcalloc((size_t)r.total + 1, 1);
    st.free_at = xcalloc((size_t)r.devices, sizeof(double));
    st.lane_free = xcalloc((size_t)r.devices * 2, sizeof(double));
    st.pc = xcalloc((size_t)r.devices, sizeof(int));
    st.wait_head = xmalloc(((size_t)r.total + 1) * sizeof(int));
    for (int i = 0; i < r.total; i++)
        st.wait_head[i] = -1;
    st.wait_next = xcalloc((size_t)r.devices, sizeof(int));
    st.queue = xcalloc((size_t)r.devices, sizeof(int));
    st.queued = xcalloc((size_t)r.devices, 1);
    st.base = xcalloc((size_t)r.devices, sizeof(int));
    st.len = xcalloc((size_t)r.devices, sizeof(int));
    st.ins = xcalloc((size_t)r.devices, sizeof *st.ins);
    for (int d = 0; d < r.devices; d++) {
        st.base[d] = plan_id(p, d, 0);
        st.len[d] = plan_len(p, d);
        st.ins[d] = plan_instrs(p, d);
    }
    rc = sim_resolve(&st, &r, e);
    if (rc != MT_OK)
        goto fail;

    for (int d = r.devices - 1; d >= 0; d--) {
        st.queue[st.queue_len++] = d;
        st.queued[d] = 1;
    }
    while (st.queue_len > 0) {
        int d = st.queue[--st.queue_len];
        st.queued[d] = 0;
        while (st.pc[d] < st.len[d] && sim_step(&st, &r, d))
            st.pc[d]++;
    }
    for (int d = 0; d < r.devices; d++)
        if (st.pc[d] < plan_len(p, d)) {
            rc = sim_deadlock(&st, &r, e);
            goto fail;
        }

    for (int d = 0; d < r.devices; d++) {
        struct sim_device *dv = &r.dev[d];
        for (int i = 0; i < st.len[d]; i++) {
            int id = st.base[d] + i;
            enum op op = st.ins[d][i].op;
            if (plan_op_is_compute(op) || op == OP_AR || op == OP_OS)
                dv->busy += r.end[id] - r.start[id];
            if (r.end[id] > dv->finish)
                dv->finish = r.end[id];
        }
        if (dv->finish > r.step_time)
            r.step_time = dv->finish;
    }
    for (int d = 0; d < r.devices; d++)
        r.dev[d].bubble = r.step_time - r.dev[d].busy;
    async_utilization(p, &r);
    sim_memory(&st, &r);
    sim_throughput(p, &r);
    overlap_annotate(p, cost, &r);
    *out = r;
    r = (struct sim_result){0};
    rc = MT_OK;
fail:
    free(paired_dur);
    sim_result_fini(&r);
    vpipe_index_free(x);
    free(st.dep_off);
    free(st.deps);
    free(st.partner);
    free(st.posted);
    free(st.dur);
    free(st.done);
    free(st.free_at);
    free(st.lane_free);
    free(st.pc);
    free(st.wait_head);
    free(st.wait_next);
    free(st.queue);
    free(st.queued);
    free(st.base);
    free(st.len);
    free(st.ins);
    return rc;
}

int sim_run(const struct plan *p, struct sim_result *out, struct mt_err *e)
{
    struct cost_model cost;
    memset(out, 0, sizeof *out);
    TRY(scheme_costs(plan_config(p), &cost, e));
    int rc = sim_run_costs(p, &cost, out, e);
    cost_model_fini(&cost);
    return rc;
}
