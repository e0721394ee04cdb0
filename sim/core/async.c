/* sim/core/async.c: staleness, weight stashing and utilization (sim/core/async.h), after PipeMare
 * (Yang et al., MLSys'21, §2-3: "delay" tau is the number of updates between the forward and
 * the backward of a micro-batch; PipeDream's weight stashing keeps one weight version per
 * micro-batch in flight, PipeMare none) and pipeline utilization: the training's own work
 * (compute, allreduce, optimizer step; not recompute, which repeats a forward) over device
 * time, over the makespan and over the steady-state window.
 *
 * Weight versions of a stage are numbered by the updates (OS) before them, so they only grow:
 * the forward of (mb, s) records the version it read (ver[mb, s]) and takes a reference on it;
 * the backward's staleness is the current version minus that one. With stashing, ref[v] counts
 * the micro-batches in flight that read version v; an OS over a version still referenced keeps
 * it as a copy, and the backward that drops its last reference frees the copy (the current
 * version is never a copy). Everything is one pass over each device's list: O(instructions),
 * with one array over (mb, stage) and one over each device's versions. */
#include <config.h>
#include "sim/core/async.h"

#include <stdlib.h>
#include <string.h>

#include "model/config.h"
#include "model/cost.h"
#include "sim/core/memory.h"
#include "sim/plan/plan.h"
#include "sim/core/simulate.h"
#include "util/xalloc.h"

struct async_walk {
    const struct plan *p;
    const struct cost_model *cost;
    int stages, parts;
    bool stash;     /* the scheme stashes weights (PipeDream) */
    int *ver;       /* [mbs * stages]: version the forward of (mb, stage) read */
    int *staleness; /* [stages] */
    int os_count[CONFIG_MAX_CHUNKS + 1]; /* per part of the current device: its version */
    int *ref; /* [versions of the device]: micro-batches in flight on each */
    int ref_cap;
    int stashed;        /* copies held now, on the current device */
    double stash_bytes; /* their bytes */
    int max_stashed;
    double peak_stash;
};

struct async_walk *async_walk_new(const struct plan *p, const struct cost_model *cost)
{
    const struct plan_geom *g = plan_geom(p);
    struct async_walk *w = xcalloc(1, sizeof *w);
    w->p = p;
    w->cost = cost;
    w->stages = g->stages;
    w->parts = g->parts;
    /* One weight version per device: PipeDream's geometry is V's (one part per device). */
    w->stash = g->scheme == SCHEME_PIPEDREAM && g->parts == 1;
    w->ver = xmalloc(((size_t)g->mbs * g->stages + 1) * sizeof(int));
    w->staleness = xcalloc((size_t)g->stages + 1, sizeof(int));
    if (w->stash) {
        for (int d = 0; d < g->devices; d++) {
            int os = 1;
            const struct instr *ins = plan_instrs(p, d);
            for (int i = 0; i < plan_len(p, d); i++)
                os += ins[i].op == OP_OS;
            if (os > w->ref_cap)
                w->ref_cap = os;
        }
        w->ref = xmalloc((size_t)w->ref_cap * sizeof(int));
    }
    return w;
}

void async_walk_free(struct async_walk *w)
{
    if (w == NULL)
        return;
    free(w->ver);
    free(w->staleness);
    free(w->ref);
    free(w);
}

void async_walk_device(struct async_walk *w, int dev)
{
    (void)dev;
    memset(w->os_count, 0, sizeof w->os_count);
    if (w->stash)
        memset(w->ref, 0, (size_t)w->ref_cap * sizeof(int));
    w->stashed = 0;
    w->stash_bytes = 0;
    w->max_stashed = 0;
    w->peak_stash = 0;
}

static double async_stash_change(struct async_walk *w, int n, int stage)
{
    double b = n * mem_stash_copy_bytes(w->cost, stage);
    w->stashed += n;
    w->stash_bytes += b;
    if (w->stashed > w->max_stashed)
        w->max_stashed = w->stashed;
    if (w->stash_bytes > w->peak_stash)
        w->peak_stash = w->stash_bytes;
    return b;
}

double async_walk_step(struct async_walk *w, const struct instr *in)
{
    int s = in->stage, part = in->part;
    if (s < 0 || s >= w->stages || part < 0 || part > CONFIG_MAX_CHUNKS)
        return 0;
    size_t key = (size_t)in->mb * w->stages + s;
    switch (in->op) {
    case OP_FW:
    case OP_CFW:
        w->ver[key] = w->os_count[part];
        if (w->stash && w->os_count[part] < w->ref_cap)
            w->ref[w->os_count[part]]++;
        return 0;
    case OP_BW:
    case OP_B: {
        int v = w->ver[key], stale = w->os_count[part] - v;
        if (stale > w->staleness[s])
            w->staleness[s] = stale;
        if (!w->stash || v < 0 || v >= w->ref_cap)
            return 0;
        if (--w->ref[v] == 0 && v != w->os_count[part])
            return async_stash_change(w, -1, s);
        return 0;
    }
    case OP_OS: {
        int old = w->os_count[part]++;
        if (w->stash && old < w->ref_cap && w->ref[old] > 0)
            return async_stash_change(w, +1, s);
        return 0;
    }
    default: return 0;
    }
}

void async_walk_device_end(struct async_walk *w, struct sim_device *dv)
{
    dv->peak_stash = w->peak_stash;
    dv->max_stashed = w->max_stashed;
}

void async_walk_finish(struct async_walk *w, struct sim_result *r)
{
    free(r->staleness);
    r->stages = w->stages;
    r->staleness = w->staleness;
    w->staleness = NULL;
}

void async_utilization(const struct plan *p, struct sim_result *r)
{
    const struct plan_geom *g = plan_geom(p);
    double t0 = 0, t1 = r->step_time;
    if (config_scheme_async(g->scheme)) {
        /* Every device alternates forwards and backwards between its first backward and its
         * last forward; the window is where all of them do. */
        double first_bw = 0, last_fw = r->step_time;
        for (int d = 0; d < r->devices; d++) {
            const struct instr *ins = plan_instrs(p, d);
            int n = plan_len(p, d), base = plan_id(p, d, 0);
            for (int i = 0; i < n; i++)
                if (plan_op_is_backward(ins[i].op)) {
                    if (r->start[base + i] > first_bw)
                        first_bw = r->start[base + i];
                    break;
                }
            for (int i = n - 1; i >= 0; i--)
                if (plan_op_is_forward(ins[i].op)) {
                    if (r->end[base + i] < last_fw)
                        last_fw = r->end[base + i];
                    break;
                }
        }
        if (last_fw > first_bw)
            t0 = first_bw, t1 = last_fw;
    }
    r->steady_t0 = t0;
    r->steady_t1 = t1;
    for (int d = 0; d < r->devices; d++) {
        struct sim_device *dv = &r->dev[d];
        const struct instr *ins = plan_instrs(p, d);
        int n = plan_len(p, d), base = plan_id(p, d, 0);
        dv->work = 0;
        dv->steady_work = 0;
        for (int i = 0; i < n; i++) {
            if (!async_is_work(ins[i].op))
                continue;
            double a = r->start[base + i], b = r->end[base + i];
            dv->work += b - a;
            a = a > t0 ? a : t0;
            b = b < t1 ? b : t1;
            if (b > a)
                dv->steady_work += b - a;
        }
    }
    async_utilization_totals(r);
}

void async_utilization_totals(struct sim_result *r)
{
    double work = 0, steady = 0;
    for (int d = 0; d < r->devices; d++) {
        work += r->dev[d].work;
        steady += r->dev[d].steady_work;
    }
    double span = (double)r->devices * r->step_time;
    double window = (double)r->devices * (r->steady_t1 - r->steady_t0);
    r->utilization = span > 0 ? work / span : 0;
    r->steady_utilization = window > 0 ? steady / window : 0;
}
