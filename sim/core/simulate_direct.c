/* sim/core/simulate_direct.c: sim_run_direct (sim/core/simulate.h), the figures of an Async config's
 * plan walked straight from the config, without building the plan.
 *
 * Device s's list (sim/schemes/scheme_async.c) is w_s = min(D-1-s, M) warm-up forwards, then M - w_s
 * forward/backward pairs, then w_s drain backwards; a forward of a stage after the first has
 * its RA before it, of a stage before the last its SA after it; a backward likewise RG and SG;
 * an OS follows every U-th backward and the last. A device with pairs has w_s = D-1-s, one
 * warm-up forward fewer than the device before it, so pair j's forward needs the forward the
 * device before ran in pair j - 1 (or its last warm-up forward) and pair j's backward needs
 * the backward of pair j of the device after. The timeline is computed in three phases, in
 * arrays over the devices: the warm-up forwards (mb ascending, device ascending); the pairs
 * (pair j: every forward, device descending so that each reads what the device before sent in
 * pair j - 1 before it is replaced, then every backward, device descending); the drain (mb
 * ascending, device descending). Each device holds the last message it sent each way, tagged
 * with its micro-batch: a tag that does not match means the order was not what was assumed,
 * and the caller falls back to the general simulator. Times are computed as sim_run computes
 * them (the same maxima and sums in the same order), so the figures are equal. */
#include <config.h>
#include "sim/core/simulate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/config.h"
#include "model/cost.h"
#include "sim/core/memory.h"
#include "sim/core/vpipe.h"
#include "sim/plan/plan.h"
#include "sim/schemes/scheme.h"
#include "util/err.h"
#include "util/xalloc.h"

struct direct_dev {
    const struct stage_cost *sc;
    /* its forward's and its backward's block (vpipe_wrap), made once for micro-batch 0: stage
     * s is on device s whatever the micro-batch, so only the micro-batch changes */
    struct instr block[2][VPIPE_WRAP_MAX];
    int block_n[2];
    double free_at, finish, busy, steady_work;
    double first_bw, last_fw_end; /* start of its first backward, end of its last forward */
    double act_at, grad_at;       /* arrival of the last activation (gradient) it sent */
    int act_mb, grad_mb;          /* their micro-batches */
    int w;                        /* warm-up forwards */
    int updates, since_os;        /* OS so far (the weight version), backwards since */
    int stale;                    /* most updates between a forward and its backward */
    int *ver;                     /* [ring]: the version each forward in flight read */
};

struct direct {
    const struct cost_model *cost;
    int D, M, U, ring_mask;
    struct direct_dev *dev;
    double t0, t1; /* the steady window, in the second pass */
};

/* A work interval [a, a + dur): the first pass sums it (busy, which for these plans is also
 * the work: no recompute, no AR), the second clips it to the steady window. */
static inline void direct_work(struct direct_dev *d, double a, double dur, bool clip, double t0,
                               double t1)
{
    double b = a + dur;
    if (!clip) {
        d->busy += b - a;
        return;
    }
    a = a > t0 ? a : t0;
    b = b < t1 ? b : t1;
    if (b > a)
        d->steady_work += b - a;
}

static inline bool direct_fw(const struct direct *x, struct direct_dev *d, int m, bool clip)
{
    double t = d->free_at;
    if (d != x->dev) { /* RA: the SA of the stage before */
        const struct direct_dev *prev = d - 1;
        if (prev->act_mb != m)
            return false;
        if (prev->act_at > t)
            t = prev->act_at;
    }
    double end = t + d->sc->fw;
    direct_work(d, t, d->sc->fw, clip, x->t0, x->t1);
    d->free_at = end;
    if (d != x->dev + x->D - 1) { /* SA: holds the link from the forward's end, not the device */
        d->act_at = end + d->sc->p2p;
        d->act_mb = m;
    }
    if (clip)
        return true;
    d->last_fw_end = end;
    d->ver[m & x->ring_mask] = d->updates;
    double last = d->act_at > end ? d->act_at : end;
    if (last > d->finish)
        d->finish = last;
    return true;
}

static inline bool direct_bw(const struct direct *x, struct direct_dev *d, int m, bool clip)
{
    double t = d->free_at;
    if (d != x->dev + x->D - 1) { /* RG */
        const struct direct_dev *next = d + 1;
        if (next->grad_mb != m)
            return false;
        if (next->grad_at > t)
            t = next->grad_at;
    }
    double end = t + d->sc->bw;
    direct_work(d, t, d->sc->bw, clip, x->t0, x->t1);
    d->free_at = end;
    bool os = ++d->since_os == x->U || m == x->M - 1;
    if (os) { /* OS, right after the backward */
        d->since_os = 0;
        direct_work(d, end, d->sc->os, clip, x->t0, x->t1);
        d->free_at = end + d->sc->os;
    }
    if (d != x->dev) { /* SG */
        d->grad_at = end + d->sc->p2p;
        d->grad_mb = m;
    }
    if (clip)
        return true;
    if (m == 0)
        d->first_bw = t;
    int stale = d->updates - d->ver[m & x->ring_mask];
    if (stale > d->stale)
        d->stale = stale;
    d->updates += os;
    double last = d->free_at > end ? d->free_at : end;
    if (d != x->dev && d->grad_at > last)
        last = d->grad_at;
    if (last > d->finish)
        d->finish = last;
    return true;
}

/* One pass of the timeline: false when a message was not there when expected. */
static inline bool direct_pass(struct direct *x, bool clip)
{
    int D = x->D, M = x->M;
    for (int s = 0; s < D; s++) {
        struct direct_dev *d = &x->dev[s];
        d->free_at = 0;
        d->updates = d->since_os = 0;
        d->act_mb = d->grad_mb = -1;
    }
    int most_warm = x->dev[0].w;
    for (int m = 0; m < most_warm; m++)
        for (int s = 0; s < D && m < x->dev[s].w; s++)
            if (!direct_fw(x, &x->dev[s], m, clip))
                return false;
    for (int j = 0; j < M; j++) {
        /* Devices with a pair j: w_s = D-1-s and j < M - w_s, so s > j - M + D - 1. */
        int lo = j - M + D > 0 ? j - M + D : 0;
        for (int s = D - 1; s >= lo; s--)
            if (!direct_fw(x, &x->dev[s], x->dev[s].w + j, clip))
                return false;
        for (int s = D - 1; s >= lo; s--)
            if (!direct_bw(x, &x->dev[s], j, clip))
                return false;
    }
    for (int i = M - most_warm; i < M; i++)
        for (int s = D - 1; s >= 0; s--)
            if (i >= M - x->dev[s].w && !direct_bw(x, &x->dev[s], i, clip))
                return false;
    return true;
}

/* The two passes, each with its own copy of the loop. */
static bool direct_timeline(struct direct *x)
{
    return direct_pass(x, false);
}

static void direct_steady(struct direct *x)
{
    direct_pass(x, true);
}

/* The memory walk of sim_memory over one device's list, one block (an instruction with its
 * receive, send and OS) at a time. */
struct direct_mem {
    struct mem_walk w;
    double pending; /* the last send's buffer, reaped by the next instruction */
};

static void direct_mem_walk(const struct cost_model *cost, const struct instr *ins, int n,
                            struct direct_mem *st)
{
    for (int i = 0; i < n; i++) {
        struct mem_step m = mem_step_next(cost, &ins[i], &st->pending);
        double held[3];
        mem_walk_step(cost, &ins[i], m, &st->w, held);
    }
}

/* Device s's block of micro-batch m: a forward or a backward with its messages (vpipe_wrap)
 * and, when os, the OS after it. Returns the instruction count (at most DIRECT_BLOCK_MAX). */
#define DIRECT_BLOCK_MAX (VPIPE_WRAP_MAX + 1)
static int direct_block(const struct direct *x, int s, int m, bool bw, bool os,
                        struct instr out[DIRECT_BLOCK_MAX])
{
    const struct direct_dev *d = &x->dev[s];
    int n = d->block_n[bw];
    for (int i = 0; i < n; i++) {
        out[i] = d->block[bw][i];
        out[i].mb = m;
    }
    if (os)
        out[n++] = (struct instr){OP_OS, m, 0, s, -1, 0, 0, 0};
    return n;
}

static bool direct_mem_same(const struct direct_mem *a, const struct direct_mem *b)
{
    return a->w.cur == b->w.cur && a->w.peak == b->w.peak && a->w.top == b->w.top &&
           a->pending == b->pending;
}

static void direct_mem_block(const struct direct *x, int s, int m, bool bw, bool os,
                             struct direct_mem *st)
{
    struct instr ins[DIRECT_BLOCK_MAX];
    int n = direct_block(x, s, m, bw, os, ins);
    direct_mem_walk(x->cost, ins, n, st);
}

/* Device s's memory walk: warm-up forwards, pairs, drain backwards. Pair j's blocks depend
 * on j only through whether an OS follows its backward, every U-th pair: once the state at
 * the start of a pair equals the state U pairs before, the walk repeats itself U pairs at a
 * time, reaching no new maximum, so it jumps to the last whole period (states[U]: the
 * state at the start of the last U pairs). */
static void direct_memory(const struct direct *x, int s, struct direct_mem *states,
                          struct sim_device *dv)
{
    struct direct_mem st = {0};
    int w = x->dev[s].w, M = x->M, U = x->U;
    for (int m = 0; m < w; m++)
        direct_mem_block(x, s, m, false, false, &st);
    int pairs = M - w, regular = pairs < M - 1 ? pairs : M - 1; /* pair M-1 always has an OS */
    for (int j = 0; j < pairs; j++) {
        if (j < regular) {
            if (j >= U && direct_mem_same(&states[j % U], &st))
                j += (regular - 1 - j) / U * U;
            states[j % U] = st;
        }
        direct_mem_block(x, s, w + j, false, false, &st);
        direct_mem_block(x, s, j, true, (j + 1) % U == 0 || j == M - 1, &st);
    }
    for (int i = M - w; i < M; i++)
        direct_mem_block(x, s, i, true, (i + 1) % U == 0 || i == M - 1, &st);
    dv->peak_dynamic = mem_max(st.w.top, st.w.peak);
}

int sim_run_direct(const struct config *c, struct sim_result *out, struct mt_err *e)
{
    memset(out, 0, sizeof *out);
    if (c->scheme != SCHEME_ASYNC || c->cluster.dp != 1 || c->blocking_send)
        return err_set(e, MT_EUNSUPPORTED,
                       "the direct walk covers Async plans with dp 1 and sends that do not block");
    struct plan_geom g;
    TRY(scheme_geom(c, &g, e));
    struct cost_model cost;
    TRY(scheme_costs(c, &cost, e));
    int D = g.devices, ring = 1;
    while (ring < D + 1) /* a device has at most D forwards in flight */
        ring *= 2;
    struct direct x = {.cost = &cost, .D = D, .M = g.mbs, .ring_mask = ring - 1,
                       .U = c->update_interval > 0 ? c->update_interval : 1};
    x.dev = xcalloc((size_t)D, sizeof *x.dev);
    int *ver = xcalloc((size_t)D * ring, sizeof(int));
    struct direct_mem *states = xmalloc((size_t)x.U * sizeof *states);
    for (int s = 0; s < D; s++) {
        x.dev[s].sc = &cost.stage[s];
        x.dev[s].w = D - 1 - s < x.M ? D - 1 - s : x.M;
        x.dev[s].ver = ver + (size_t)s * ring;
        for (int bw = 0; bw < 2; bw++)
            x.dev[s].block_n[bw] = vpipe_wrap(
                &g, s, (struct instr){bw ? OP_BW : OP_FW, 0, 0, s, -1, 0, 0, 0}, x.dev[s].block[bw]);
    }
    struct sim_result r = {0};
    r.unit = cost.unit;
    r.devices = D;
    r.cap = config_mem_cap(c); /* M_θ under unit costs; less the reserve */
    r.oom_device = -1;
    r.host_oom_device = -1;
    r.stages = D;
    int rc = MT_OK;
    if (!direct_timeline(&x)) {
        rc = err_set(e, MT_EUNSUPPORTED, "the direct walk lost the order of the pipeline");
        goto done;
    }
    r.dev = xcalloc((size_t)D, sizeof *r.dev);
    r.staleness = xcalloc((size_t)D + 1, sizeof(int));
    for (int s = 0; s < D; s++)
        if (x.dev[s].finish > r.step_time)
            r.step_time = x.dev[s].finish;
    /* The steady window (sim/core/async.c): from the latest first backward to the earliest last
     * forward; the second pass clips the work to it. */
    double first_bw = 0, last_fw = r.step_time;
    for (int s = 0; s < D; s++) {
        const struct direct_dev *d = &x.dev[s];
        r.dev[s].busy = r.dev[s].work = d->busy;
        r.dev[s].finish = d->finish;
        r.dev[s].bubble = r.step_time - d->busy;
        r.staleness[s] = d->stale;
        if (d->first_bw > first_bw)
            first_bw = d->first_bw;
        if (d->last_fw_end < last_fw)
            last_fw = d->last_fw_end;
    }
    x.t0 = 0;
    x.t1 = r.step_time;
    if (last_fw > first_bw)
        x.t0 = first_bw, x.t1 = last_fw;
    direct_steady(&x);
    r.steady_t0 = x.t0;
    r.steady_t1 = x.t1;
    double work = 0, steady = 0;
    for (int s = 0; s < D; s++) {
        struct sim_device *dv = &r.dev[s];
        dv->steady_work = x.dev[s].steady_work;
        work += dv->work;
        steady += dv->steady_work;
        dv->static_mem = cost.stage[s].static_bytes;
        direct_memory(&x, s, states, dv);
        dv->peak_mem = dv->static_mem + dv->peak_dynamic;
        if (r.cap > 0 && dv->peak_mem > r.cap && r.oom_device < 0)
            r.oom_device = s;
    }
    double span = (double)r.devices * r.step_time, window = (double)r.devices * (x.t1 - x.t0);
    r.utilization = span > 0 ? work / span : 0;
    r.steady_utilization = window > 0 ? steady / window : 0;
    double samples = (double)g.mbs * c->micro_batch_size * c->cluster.dp;
    double seconds = r.unit ? r.step_time : r.step_time * 1e-6;
    r.throughput = seconds > 0 ? samples / seconds : 0;
    *out = r;
    r = (struct sim_result){0};
done:
    sim_result_fini(&r);
    free(ver);
    free(states);
    free(x.dev);
    cost_model_fini(&cost);
    return rc;
}
