/* sim/core/simulate_fast.c: the simulator's fast path (sim/core/simulate_internal.h) for plans whose sends
 * do not block and whose scheme is synchronous: what the optimizer, the tuner and the passes
 * simulate. With non-blocking sends and no processor sharing, the timeline is a longest-path
 * computation over a DAG (program order on each device, the dependencies of sim/core/vpipe.h, and
 * the join of each allreduce group): every instruction starts at the maximum of its device's
 * free time and its dependencies' ends, and a maximum is exact in any order, so any order that
 * respects the DAG gives the general loop's times to the bit. This one keeps the general
 * loop's worklist of devices (a device runs until its head waits on an instruction not done,
 * and is woken when it is) with less around it:
 *  - dependencies resolved for the whole plan in one loop and kept with the plan until it
 *    changes (vpipe_resolve: the validator's resolution is the simulator's, and a plan
 *    simulated again skips it); durations and memory steps from a row per (stage, op);
 *  - a byte of state per instruction (done, allreduce posted, has waiters), so the lists of
 *    waiting devices need no initialisation;
 *  - the timeline first, a device that waits keeping only its position and free time; then
 *    the memory walk, busy time, finish time and utilization sums in one pass over each
 *    device's list in program order, so the same sums are taken in the same order as the
 *    general loop's later passes. The utilization window of a synchronous plan is
 *    [0, step time], which every instruction lies in, so the clipped sum needs no second
 *    pass. (Done as each device passed an instruction, the walk's dozen running figures
 *    were saved and reloaded at each of the ~2,000 waits of GPT3-13B X 32 x 64: 6 % slower
 *    on a new plan. Two devices' walks interleaved in one loop spill them: 15 % slower.)
 *  - staleness: a synchronous plan's is 0 unless an optimizer step comes before a forward or
 *    backward on its device; then the walk of sim/core/async.h runs as in the general loop.
 * A sweep over a topological order kept with the plan was tried (the worklist run once with
 * no times, then one pass in that order and a walk per device): finding the order costs about
 * what this loop does, so a new plan took 0.21 ms against 0.155 (GPT3-13B X 32 x 64) for 6 %
 * less on a plan simulated again; the worklist stays.
 * Anything unusual (a missing dependency, a deadlock, a negative or NaN duration) gives the
 * plan back to the general loop, which words the error. tests/unit/test_sim_fast.c holds the
 * two to the same bits on every scheme. */
#include <config.h>
#include "sim/core/simulate_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/config.h"
#include "model/cost.h"
#include "sim/core/async.h"
#include "sim/core/memory.h"
#include "sim/core/overlap.h"
#include "sim/plan/plan.h"
#include "sim/core/simulate.h"
#include "sim/core/vpipe.h"
#include "util/err.h"
#include "util/xalloc.h"

/* An instruction's state. */
enum { FAST_DONE = 1, FAST_POSTED = 2 /* an AR its device reached: start holds when */,
       FAST_WAITED = 4 /* wait_head is valid */ };

/* What each op counts for (from sim/plan/plan.h and sim/core/async.h's rules, once per run). */
enum { OPF_BUSY = 1, OPF_WORK = 2, OPF_READS_VERSION = 4, OPF_OS = 8 };

struct fast_dev {
    const struct instr *ins;
    int len, base, pc;
    int wait_next;        /* next device waiting on the same instruction */
    bool queued;
    bool os_seen;         /* an OS has run */
    bool stale;           /* ... and a forward or backward after it */
    double free_at;
    double lane[2];       /* when its D2H (OF) and H2D (RL) copy lanes are free */
    bool copies;          /* its list holds an OF or RL: memory walked at the copies' times */
    double host_peak;
    double static_mem, pending; /* pending: the last send's buffer (sim/core/memory.h) */
    struct mem_walk mw;
    double *ct, *cm;      /* the memory curve */
    int cn;
    double busy, finish, work, steady;
};

/* What an instruction of one (stage, op) lasts and holds, from the cost model and the memory
 * model, worked out at the first instruction of its kind: the timeline and the walk then read
 * a row instead of switching on the op twice per instruction. A CFW or RC of some of its
 * stage's layers (ckpt_layers > 0) gets its own row each time. */
struct fast_row {
    double dur;          /* sim_latency */
    struct mem_step m;   /* mem_step: take, give */
    double send;         /* mem_send_buffer */
    struct mem_transient_form trans; /* mem_transient's form */
};

struct fast {
    const struct plan *p;
    const struct cost_model *cost;
    const struct vpipe_index *x;
    const double *fixed;
    double *start, *end, *mem_after;
    const int *off, *deps;   /* the plan's dependencies (vpipe_resolve) */
    unsigned char *state;
    int *wait_head;
    struct fast_dev *dev;
    int *queue, queue_len;
    unsigned char opf[OP__COUNT];
    struct fast_row *rows;  /* [stages * OP__COUNT] */
    unsigned char *row_set; /* [stages * OP__COUNT] */
};

static inline void fast_row_fill(const struct fast *f, const struct instr *in, struct fast_row *r)
{
    r->dur = sim_latency(f->cost, in);
    r->m = mem_step(f->cost, in);
    r->send = mem_send_buffer(f->cost, in);
    r->trans = mem_transient_form(f->cost, in, r->m);
}

/* in's row; tmp holds it when it is its own. */
static inline const struct fast_row *fast_row(struct fast *f, const struct instr *in,
                                              struct fast_row *tmp)
{
    if (in->ckpt_layers > 0 && (in->op == OP_CFW || in->op == OP_RC)) {
        fast_row_fill(f, in, tmp);
        return tmp;
    }
    int k = in->stage * OP__COUNT + (int)in->op;
    if (!f->row_set[k]) {
        fast_row_fill(f, in, &f->rows[k]);
        f->row_set[k] = 1;
    }
    return &f->rows[k];
}

bool sim_fast_applies(const struct plan *p)
{
    const struct config *c = plan_config(p);
    return !c->blocking_send && !config_scheme_async(plan_geom(p)->scheme);
}

static inline void fast_wait(struct fast *f, int d, int id)
{
    if (!(f->state[id] & FAST_WAITED)) {
        f->state[id] |= FAST_WAITED;
        f->wait_head[id] = -1;
    }
    f->dev[d].wait_next = f->wait_head[id];
    f->wait_head[id] = d;
}

static inline void fast_wake(struct fast *f, int id)
{
    if (!(f->state[id] & FAST_WAITED))
        return;
    for (int d = f->wait_head[id]; d >= 0; d = f->dev[d].wait_next)
        if (!f->dev[d].queued) {
            f->dev[d].queued = true;
            f->queue[f->queue_len++] = d;
        }
    f->state[id] &= (unsigned char)~FAST_WAITED;
}

static inline double fast_duration(const struct fast *f, const struct fast_row *row, int id)
{
    return f->fixed && isfinite(f->fixed[id]) ? f->fixed[id] : row->dur;
}

/* Device d's AR `id`, reached when the device is free at `ready`: posted, and when every
 * replica has been, the whole group runs from the last post. Returns 1 when it ran, 0 when the
 * device waits, -1 to give up. */
static int fast_ar(struct fast *f, int d, int id, double ready)
{
    int group[64];
    int n = vpipe_ar_group(f->p, f->x, id, group, 64);
    if (!(f->state[id] & FAST_POSTED)) {
        f->state[id] |= FAST_POSTED;
        f->start[id] = ready;
        for (int k = 0; k < n; k++)
            fast_wake(f, group[k]);
    }
    double start = 0;
    for (int k = 0; k < n; k++) {
        if (!(f->state[group[k]] & FAST_POSTED)) {
            fast_wait(f, d, id);
            return 0;
        }
        if (f->start[group[k]] > start)
            start = f->start[group[k]];
    }
    for (int k = 0; k < n; k++) {
        int dev, pos;
        plan_locate_id(f->p, group[k], &dev, &pos);
        struct fast_row tmp;
        double t = fast_duration(f, fast_row(f, plan_at(f->p, dev, pos), &tmp), group[k]);
        if (!(t >= 0))
            return -1;
        f->start[group[k]] = start;
        f->end[group[k]] = start + t;
        f->state[group[k]] |= FAST_DONE;
        fast_wake(f, group[k]);
    }
    f->dev[d].free_at = f->end[id];
    return 1;
}

/* A device's running sums and walk, held in locals while it is walked (stores to the result
 * arrays would otherwise make the compiler reload them after each). */
struct fast_run {
    double busy, finish, work, steady, pending, static_mem;
    struct mem_walk mw;
    double *ct, *cm;
    int cn;
    bool os_seen, stale;
};

/* The device passes its instruction in (id; the last of its list or not): busy, finish, work,
 * the memory walk (sim/core/memory.h) and its curve, in program order. */
static inline void fast_account(struct fast *f, struct fast_run *v, const struct instr *in,
                                const struct fast_row *row, int id, bool last)
{
    double a = f->start[id], b = f->end[id];
    unsigned fl = f->opf[in->op];
    if (fl & OPF_BUSY)
        v->busy += b - a;
    if (b > v->finish)
        v->finish = b;
    if (fl & OPF_WORK) { /* async_utilization's sums over the window [0, step time] */
        v->work += b - a;
        double a0 = a > 0 ? a : 0;
        if (b > a0)
            v->steady += b - a0;
    }
    if (fl & OPF_OS)
        v->os_seen = true;
    else if ((fl & OPF_READS_VERSION) && v->os_seen)
        v->stale = true;
    struct mem_step m = row->m; /* mem_step_next */
    m.reap = v->pending;
    v->pending = row->send;
    if (last) /* the end of the step waits for every send */
        m.reap += v->pending;
    double held[3], s = v->static_mem;
    mem_walk_step_form(row->trans, m, &v->mw, held);
    int n = v->cn;
    if (m.take != 0) {
        v->ct[n] = a;
        v->cm[n++] = s + held[0];
    }
    if (m.give != 0) {
        v->ct[n] = b;
        v->cm[n++] = s + held[1];
    }
    if (m.reap != 0) {
        v->ct[n] = b;
        v->cm[n++] = s + held[2];
    }
    v->cn = n;
    f->mem_after[id] = s + held[2];
}

static inline void fast_load(const struct fast_dev *dv, struct fast_run *v)
{
    *v = (struct fast_run){dv->busy, dv->finish, dv->work, dv->steady, dv->pending,
                           dv->static_mem, dv->mw, dv->ct, dv->cm, dv->cn, dv->os_seen,
                           dv->stale};
}

static inline void fast_store(struct fast_dev *dv, const struct fast_run *v)
{
    dv->busy = v->busy;
    dv->finish = v->finish;
    dv->work = v->work;
    dv->steady = v->steady;
    dv->pending = v->pending;
    dv->mw = v->mw;
    dv->cn = v->cn;
    dv->os_seen = v->os_seen;
    dv->stale = v->stale;
}

/* Runs device d until its head instruction waits or its list ends. False: give up. Only the
 * timeline: the device's own sums and memory walk follow in program order once every device
 * has run (fast_account_device), so a device that waits keeps nothing but its position and
 * free time. */
static bool fast_run_device(struct fast *f, int d)
{
    struct fast_dev *dv = &f->dev[d];
    double free_at = dv->free_at;
    double *start = f->start, *end = f->end;
    const int *off = f->off, *deps = f->deps;
    unsigned char *state = f->state;
    const struct instr *ins = dv->ins;
    int pc = dv->pc, len = dv->len, base = dv->base;
    bool ok = true;
    for (; pc < len; pc++) {
        int id = base + pc;
        const struct instr *in = &ins[pc];
        if (state[id] & FAST_DONE) { /* an AR its group finished */
            if (end[id] > free_at)
                free_at = end[id];
            continue;
        }
        double ready = free_at;
        int k = off[id], kn = off[id + 1];
        for (; k < kn; k++) {
            int dep = deps[k];
            if (!(state[dep] & FAST_DONE))
                break;
            if (end[dep] > ready)
                ready = end[dep];
        }
        if (k < kn) {
            fast_wait(f, d, deps[k]);
            break;
        }
        if (in->op == OP_AR) {
            dv->free_at = free_at;
            int ran = fast_ar(f, d, id, ready);
            free_at = dv->free_at;
            if (ran <= 0) {
                ok = ran == 0;
                break;
            }
            continue;
        }
        struct fast_row tmp;
        double t = fast_duration(f, fast_row(f, in, &tmp), id);
        if (!(t >= 0)) {
            ok = false;
            break;
        }
        if (plan_op_is_copy(in->op)) { /* its lane, in list order; the device goes on */
            double *lane = &dv->lane[in->op == OP_RL];
            start[id] = ready > *lane ? ready : *lane;
            end[id] = start[id] + t;
            *lane = end[id];
            dv->copies = true;
            state[id] |= FAST_DONE;
            fast_wake(f, id);
            continue;
        }
        start[id] = ready;
        end[id] = ready + t;
        free_at = vpipe_is_send(in->op) ? ready : end[id]; /* a send holds the link */
        state[id] |= FAST_DONE;
        fast_wake(f, id);
    }
    dv->free_at = free_at;
    dv->pc = pc;
    return ok;
}

/* Device d's sums and memory walk over its list in program order, once its times are known. */
static void fast_account_device(struct fast *f, int d)
{
    struct fast_dev *dv = &f->dev[d];
    struct fast_run v;
    fast_load(dv, &v);
    const struct instr *ins = dv->ins;
    int len = dv->len, base = dv->base;
    for (int pc = 0; pc < len; pc++) {
        struct fast_row tmp;
        const struct fast_row *row = fast_row(f, &ins[pc], &tmp);
        fast_account(f, &v, &ins[pc], row, base + pc, pc == len - 1);
    }
    if (dv->copies) { /* offload: the walk again, the copies at their times (as sim_memory) */
        struct mem_step *steps = xmalloc(((size_t)len + 1) * sizeof *steps);
        mem_device_steps(f->cost, ins, len, steps);
        struct mem_curve cv = {v.static_mem, v.ct, v.cm, 1};
        v.mw = (struct mem_walk){0};
        mem_device_walk_timed(f->cost, ins, len, f->start + base, f->end + base, steps, &v.mw,
                              &cv, f->mem_after + base);
        v.cn = cv.n;
        dv->host_peak = mem_device_host_peak(f->cost, ins, len, f->start + base, f->end + base);
        free(steps);
    }
    fast_store(dv, &v);
}

/* The staleness of r's stages (sim/core/async.h), walking the lists only where it can be > 0. */
static void fast_staleness(struct fast *f, struct sim_result *r)
{
    bool walk = false;
    for (int d = 0; d < r->devices; d++)
        walk |= f->dev[d].stale;
    if (!walk) {
        r->stages = plan_geom(f->p)->stages;
        r->staleness = xcalloc((size_t)r->stages + 1, sizeof(int));
        return;
    }
    struct async_walk *w = async_walk_new(f->p, f->cost);
    for (int d = 0; d < r->devices; d++) {
        async_walk_device(w, d);
        for (int i = 0; i < f->dev[d].len; i++)
            async_walk_step(w, &f->dev[d].ins[i]);
    }
    async_walk_finish(w, r);
    async_walk_free(w);
}

static void fast_free(struct fast *f)
{
    free(f->state);
    free(f->wait_head);
    free(f->queue);
    free(f->dev);
    free(f->rows);
    free(f->row_set);
}

bool sim_fast_run(const struct plan *p, const struct cost_model *cost, const double *dur,
                  struct sim_result *out)
{
    const struct plan_geom *g = plan_geom(p);
    const struct config *c = plan_config(p);
    int total = plan_total(p), D = plan_devices(p);
    const struct vpipe_resolved *rv;
    if (vpipe_resolve(p, &rv, NULL) != MT_OK || rv->missing >= 0)
        return false;
    double *paired_dur = overlap_durations(p, cost, dur); /* F&B pairs hide all-to-alls */
    struct fast f = {.p = p, .cost = cost, .fixed = paired_dur != NULL ? paired_dur : dur};
    f.x = rv->x;
    f.off = rv->off;
    f.deps = rv->deps;
    for (int op = 0; op < OP__COUNT; op++)
        f.opf[op] = (unsigned char)(
            (plan_op_is_compute((enum op)op) || op == OP_AR || op == OP_OS ? OPF_BUSY : 0) |
            (async_is_work((enum op)op) ? OPF_WORK : 0) |
            (plan_op_is_forward((enum op)op) || plan_op_is_backward((enum op)op)
                 ? OPF_READS_VERSION : 0) |
            (op == OP_OS ? OPF_OS : 0));
    f.state = xcalloc((size_t)total + 1, 1);
    f.wait_head = xmalloc(((size_t)total + 1) * sizeof(int));
    f.queue = xmalloc((size_t)D * sizeof(int));
    f.dev = xcalloc((size_t)D, sizeof *f.dev);
    f.rows = xmalloc((size_t)g->stages * OP__COUNT * sizeof *f.rows);
    f.row_set = xcalloc((size_t)g->stages * OP__COUNT, 1);

    struct sim_result r = {0};
    r.unit = cost->unit;
    r.devices = D;
    r.total = total;
    r.cap = config_mem_cap(c); /* M_θ under unit costs; less the reserve */
    r.oom_device = -1;
    r.host_cap = config_host_cap(c);
    r.host_oom_device = -1;
    /* Every entry is written before the run succeeds; the spare one stays 0 as sim_run's. */
    f.start = r.start = xmalloc(((size_t)total + 1) * sizeof(double));
    f.end = r.end = xmalloc(((size_t)total + 1) * sizeof(double));
    f.mem_after = r.mem_after = xmalloc(((size_t)total + 1) * sizeof(double));
    r.start[total] = r.end[total] = r.mem_after[total] = 0;
    r.dev = xcalloc((size_t)D, sizeof *r.dev);
    for (int d = 0; d < D; d++) {
        struct fast_dev *dv = &f.dev[d];
        dv->ins = plan_instrs(p, d);
        dv->len = plan_len(p, d);
        dv->base = plan_id(p, d, 0);
        for (int part = 0; part < g->parts; part++)
            dv->static_mem += cost->stage[vpipe_stage(g, d, 0, part)].static_bytes;
        dv->ct = r.dev[d].curve_t = xmalloc(((size_t)dv->len * 3 + 2) * sizeof(double));
        dv->cm = r.dev[d].curve_mem = xmalloc(((size_t)dv->len * 3 + 2) * sizeof(double));
        dv->ct[0] = 0;
        dv->cm[0] = dv->static_mem;
        dv->cn = 1;
    }
    for (int d = D - 1; d >= 0; d--) {
        f.queue[f.queue_len++] = d;
        f.dev[d].queued = true;
    }
    bool ok = true;
    while (ok && f.queue_len > 0) {
        int d = f.queue[--f.queue_len];
        f.dev[d].queued = false;
        ok = fast_run_device(&f, d);
    }
    for (int d = 0; ok && d < D; d++)
        ok = f.dev[d].pc == f.dev[d].len; /* else a deadlock */
    for (int d = 0; ok && d < D; d++)
        fast_account_device(&f, d);
    if (!ok) {
        fast_free(&f);
        free(paired_dur);
        sim_result_fini(&r);
        return false;
    }

    for (int d = 0; d < D; d++) {
        struct sim_device *dv = &r.dev[d];
        dv->busy = f.dev[d].busy;
        dv->finish = f.dev[d].finish;
        if (dv->finish > r.step_time)
            r.step_time = dv->finish;
    }
    r.steady_t0 = 0;
    r.steady_t1 = r.step_time;
    for (int d = 0; d < D; d++) {
        struct sim_device *dv = &r.dev[d];
        const struct fast_dev *fd = &f.dev[d];
        dv->bubble = r.step_time - dv->busy;
        dv->work = fd->work;
        dv->steady_work = fd->steady;
        dv->static_mem = fd->static_mem;
        dv->curve_len = fd->cn;
        dv->peak_dynamic = mem_max(fd->mw.top, fd->mw.peak);
        dv->peak_mem = dv->static_mem + dv->peak_dynamic;
        if (r.cap > 0 && dv->peak_mem > r.cap && r.oom_device < 0)
            r.oom_device = d;
        dv->host_peak = f.dev[d].host_peak;
        if (r.host_cap > 0 && dv->host_peak > r.host_cap && r.host_oom_device < 0)
            r.host_oom_device = d;
    }
    async_utilization_totals(&r);
    fast_staleness(&f, &r);
    sim_throughput(p, &r);
    overlap_annotate(p, cost, &r);
    fast_free(&f);
    free(paired_dur);
    *out = r;
    return true;
}
