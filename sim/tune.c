/* sim/tune.c: the grid of Equation 1, evaluated by simulation. Candidates are enumerated
 * in a fixed order, workers (pthreads) take the next index from an atomic counter and write
 * only their own slot, so the result is the same for any number of threads. */
#include <config.h>
#include "sim/tune.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sim/bound.h"
#include "sim/pass.h"
#include "sim/plan.h"
#include "sim/scheme.h"
#include "sim/simulate.h"
#include "util/err.h"
#include "util/xalloc.h"

int tune_optimize_mario(const struct plan *in, struct plan **out, struct mt_err *e)
{
    struct pass_pipeline pl;
    *out = NULL;
    TRY(pass_pipeline_run(in, &pl, e));
    *out = plan_clone(pass_pipeline_final(&pl)->plan);
    pass_pipeline_fini(&pl);
    return MT_OK;
}

int tune_optimize_search(const struct plan *in, struct plan **out, struct mt_err *e)
{
    struct pass_pipeline pl;
    *out = NULL;
    TRY(pass_pipeline_run(in, &pl, e));
    struct search_opts so;
    search_opts_default(&so, plan_config(in));
    so.quick = true; /* one search per candidate: the small ones without their boost */
    int rc = pass_pipeline_search(&pl, &so, e);
    if (rc == MT_OK)
        *out = plan_clone(pass_pipeline_final(&pl)->plan);
    pass_pipeline_fini(&pl);
    return rc;
}

const char *tune_ckpt_name(const struct tune_candidate *c)
{
    return !c->ckpt ? "off" : c->search ? "search" : "mario";
}

void tune_opts_default(struct tune_opts *o)
{
    memset(o, 0, sizeof *o);
    o->min_pp = 4;
    o->max_mbs = 0;
    o->max_chunks = 4;
    o->threads = 0;
    o->with_ckpt_off = true;
    o->optimize = tune_optimize_mario;
}

void tune_label(const struct tune_candidate *c, char *buf, int n)
{
    if (c->scheme == SCHEME_W || c->scheme == SCHEME_ZBW)
        snprintf(buf, (size_t)n, "%s-%d-%dx%d", config_scheme_name(c->scheme), c->pp, c->mbs,
                 c->chunks);
    else
        snprintf(buf, (size_t)n, "%s-%d-%d", config_scheme_name(c->scheme), c->pp, c->mbs);
}

void tune_candidate_config(const struct config *base, const struct tune_candidate *c,
                           struct config *out)
{
    *out = *base;
    out->scheme = c->scheme;
    out->cluster.dp = c->dp;
    out->global_batch_size = config_global_batch(base);
    out->micro_batch_size = c->mbs;
    out->num_microbatches = 0;
    out->chunks = c->scheme == SCHEME_W || c->scheme == SCHEME_ZBW ? c->chunks : base->chunks;
}

static int tune_enumerate(const struct config *base, const struct tune_opts *o,
                          struct tune_candidate **out)
{
    /* The paper's four, then the zero-bubble family (split backward). */
    static const enum scheme_id schemes[] = {SCHEME_V,    SCHEME_X,    SCHEME_W,
                                             SCHEME_GPIPE, SCHEME_ZBH1, SCHEME_ZBH2,
                                             SCHEME_ZBV,  SCHEME_ZBW,  SCHEME_DUALPIPEV};
    /* --microbatches N sets the samples per iteration the grid keeps: N x mbs x dp */
    int D = base->num_device, G = config_global_batch(base);
    int min_pp = o->min_pp < 1 ? 1 : o->min_pp > D ? D : o->min_pp;
    int cap = 64, n = 0;
    struct tune_candidate *c = xmalloc((size_t)cap * sizeof *c);
    /* a: 0 off, 1 Mario's passes, 2 the search */
    for (int ckpt = o->with_ckpt_off ? 0 : 1; ckpt <= 2; ckpt++)
        for (size_t s = 0; s < sizeof schemes / sizeof schemes[0]; s++)
            for (int pp = min_pp; pp <= D; pp++) {
                if (D % pp != 0)
                    continue;
                int dp = D / pp;
                if (G % dp != 0)
                    continue;
                for (int mbs = 1; mbs <= G / dp; mbs *= 2) {
                    if ((G / dp) % mbs != 0 || (o->max_mbs > 0 && mbs > o->max_mbs))
                        continue;
                    /* unit costs are per micro-batch whatever its size: a larger one would
                     * only look faster, so the config's size is the one candidate */
                    if (base->unit.enabled && mbs != base->micro_batch_size)
                        continue;
                    int v_lo = 1, v_hi = 1;
                    if (schemes[s] == SCHEME_W || schemes[s] == SCHEME_ZBW)
                        v_lo = 2, v_hi = o->max_chunks < 2 ? 2 : o->max_chunks;
                    for (int v = v_lo; v <= v_hi; v *= 2) {
                        if ((ckpt == 1 && !o->optimize) || (ckpt == 2 && !o->search))
                            continue;
                        if (n == cap)
                            c = xreallocarray(c, (size_t)(cap *= 2), sizeof *c);
                        c[n++] = (struct tune_candidate){.scheme = schemes[s], .pp = pp,
                                                         .dp = dp, .mbs = mbs, .chunks = v,
                                                         .ckpt = ckpt >= 1, .search = ckpt == 2,
                                                         .oom_device = -1,
                                                         .status = TUNE_NOT_RUN};
                    }
                }
            }
    *out = c;
    return n;
}

int tune_build_plan(const struct config *base, const struct tune_candidate *c,
                    const struct tune_opts *o, struct plan **out, struct mt_err *e)
{
    tune_optimize_fn optimize = c->search ? o->search : o->optimize;
    struct config cfg;
    tune_candidate_config(base, c, &cfg);
    struct plan *p = NULL;
    *out = NULL;
    TRY(scheme_build(&cfg, &p, e));
    if (c->ckpt && optimize) {
        struct plan *q = NULL;
        int rc = optimize(p, &q, e);
        plan_free(p);
        if (rc != MT_OK)
            return rc;
        p = q;
    }
    *out = p;
    return MT_OK;
}

static void tune_evaluate(const struct config *base, const struct tune_opts *o,
                          struct tune_candidate *c)
{
    struct mt_err e = {0};
    struct plan *p = NULL;
    struct sim_result r;
    if (tune_build_plan(base, c, o, &p, &e) != MT_OK ||
        sim_run(p, &r, &e) != MT_OK) {
        c->status = TUNE_INVALID;
        snprintf(c->why, sizeof c->why, "%.250s", e.msg);
        plan_free(p);
        return;
    }
    c->step_time = r.unit ? r.step_time : r.step_time * 1e-6;
    struct bound_result b;
    if (bound_plan(p, &b, &e) == MT_OK)
        c->lower_bound = bound_value(&b, r.oom_device < 0) * (r.unit ? 1 : 1e-6);
    c->peak_mem = 0;
    c->min_peak_mem = r.devices > 0 ? r.dev[0].peak_mem : 0;
    for (int d = 0; d < r.devices; d++) {
        if (r.dev[d].peak_mem > c->peak_mem)
            c->peak_mem = r.dev[d].peak_mem;
        if (r.dev[d].peak_mem < c->min_peak_mem)
            c->min_peak_mem = r.dev[d].peak_mem;
    }
    if (r.oom_device >= 0) {
        /* Report the device furthest over the cap. */
        c->status = TUNE_OOM;
        c->oom_device = r.oom_device;
        for (int d = 0; d < r.devices; d++)
            if (r.dev[d].peak_mem > r.dev[c->oom_device].peak_mem)
                c->oom_device = d;
        c->over_bytes = r.dev[c->oom_device].peak_mem - r.cap;
        c->throughput = 0;
    } else {
        c->status = TUNE_OK;
        c->throughput = r.throughput;
    }
    sim_result_fini(&r);
    plan_free(p);
}

struct tune_shared {
    const struct config *base;
    const struct tune_opts *o;
    struct tune_candidate *cand;
    int n;
    atomic_int next, done;
    atomic_bool stop; /* the progress callback said stop: take no more candidates */
};

static void *tune_worker(void *arg)
{
    struct tune_shared *sh = arg;
    while (!atomic_load(&sh->stop)) {
        int i = atomic_fetch_add(&sh->next, 1);
        if (i >= sh->n)
            break;
        tune_evaluate(sh->base, sh->o, &sh->cand[i]);
        atomic_fetch_add(&sh->done, 1);
    }
    return NULL;
}

static void tune_pareto(struct tune_result *r)
{
    for (int i = 0; i < r->n; i++) {
        struct tune_candidate *a = &r->cand[i];
        a->pareto = a->status == TUNE_OK;
        for (int j = 0; j < r->n && a->pareto; j++) {
            const struct tune_candidate *b = &r->cand[j];
            if (j == i || b->status != TUNE_OK)
                continue;
            bool dominates = b->throughput >= a->throughput && b->peak_mem <= a->peak_mem &&
                             (b->throughput > a->throughput || b->peak_mem < a->peak_mem);
            if (dominates)
                a->pareto = false;
        }
    }
}

int tune_grid_search(const struct config *base, const struct tune_opts *o,
                     struct tune_result *out, struct mt_err *e)
{
    memset(out, 0, sizeof *out);
    out->best = -1;
    if (base->global_batch_size < 1)
        return err_set(e, MT_EINVAL, "global_batch_size: must be >= 1");
    /* The grid holds synchronous schemes only: it ranks one flushed iteration per plan. */
    if (config_scheme_async(base->scheme))
        return err_set(e, MT_EINVAL,
                       "pipeline_scheme: %s has no flush between iterations; the tuner searches "
                       "synchronous schemes only (V, X, W, GPipe); use simulate or optimize for "
                       "an asynchronous plan", config_scheme_name(base->scheme));
    if (base->iterations != 1 || base->update_interval != 1)
        return err_set(e, MT_EINVAL,
                       "%s: the tuner searches synchronous schemes, one iteration per plan and "
                       "one optimizer step per iteration (got %d)",
                       base->iterations != 1 ? "iterations" : "update_interval",
                       base->iterations != 1 ? base->iterations : base->update_interval);
    struct tune_candidate *cand = NULL;
    int n = tune_enumerate(base, o, &cand);
    if (n == 0) {
        free(cand);
        return err_set(e, MT_EINVAL,
                       "num_device: no pipeline depth >= %d divides %d devices with a data-parallel "
                       "degree dividing the global batch %d", o->min_pp, base->num_device,
                       config_global_batch(base));
    }
    int threads = o->threads > 0 ? o->threads : (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (threads < 1)
        threads = 1;
    if (threads > n)
        threads = n;
    struct tune_shared sh = {.base = base, .o = o, .cand = cand, .n = n};
    atomic_init(&sh.next, 0);
    atomic_init(&sh.done, 0);
    atomic_init(&sh.stop, false);
    pthread_t *tid = xcalloc((size_t)threads, sizeof *tid);
    int started = 0;
    for (int t = 1; t < threads; t++)
        if (pthread_create(&tid[t], NULL, tune_worker, &sh) == 0)
            started = t;
        else
            break;
    /* The calling thread works too, reporting progress between candidates; a worker finishes
     * the candidate it holds when told to stop. */
    while (!atomic_load(&sh.stop)) {
        int i = atomic_fetch_add(&sh.next, 1);
        if (i >= n)
            break;
        tune_evaluate(base, o, &cand[i]);
        int done = atomic_fetch_add(&sh.done, 1) + 1;
        if (o->progress && !o->progress(o->progress_ctx, done, n))
            atomic_store(&sh.stop, true);
    }
    for (int t = 1; t <= started; t++)
        pthread_join(tid[t], NULL);
    free(tid);
    out->n = n;
    out->cand = cand;
    out->done = atomic_load(&sh.done);
    out->cancelled = atomic_load(&sh.stop);
    if (o->progress && !out->cancelled)
        o->progress(o->progress_ctx, n, n);
    for (int i = 0; i < n; i++)
        if (cand[i].status == TUNE_NOT_RUN)
            snprintf(cand[i].why, sizeof cand[i].why, "not run: the tuner was cancelled");
    for (int i = 0; i < n; i++)
        if (cand[i].status == TUNE_OK &&
            (out->best < 0 || cand[i].throughput > cand[out->best].throughput))
            out->best = i;
    tune_pareto(out);
    return MT_OK;
}

void tune_result_fini(struct tune_result *r)
{
    free(r->cand);
    memset(r, 0, sizeof *r);
}
