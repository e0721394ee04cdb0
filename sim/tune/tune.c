/* sim/tune/tune.c: the grid of Equation 1, evaluated by simulation. Candidates are enumerated
 * in a fixed order, workers (pthreads) take the next index from an atomic counter and write
 * only their own slot, so the result is the same for any number of threads. */
#include <config.h>
#include "sim/tune/tune.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "model/cost_cache.h"
#include "model/scheme_registry.h"
#include "sim/core/bound.h"
#include "sim/passes/pass.h"
#include "sim/plan/plan.h"
#include "sim/schemes/scheme.h"
#include "sim/core/simulate.h"
#include "sim/tune/tune_split.h"
#include "util/err.h"
#include "util/xalloc.h"

/* The search's progress handed to the watch (as a step named "search"). */
struct tune_search_watch {
    const struct pass_watch *w;
    const struct pass_pipeline *pl;
};

static bool tune_search_progress(void *ctx, long done, long budget)
{
    struct tune_search_watch *sw = ctx;
    (void)done;
    (void)budget;
    return sw->w->step(sw->w->ctx, sw->pl, "search", 0);
}

/* Mario's passes on a candidate's plan; MT_ETIMEOUT (and nothing kept) when Esc stopped them. */
static int tune_run_passes(const struct plan *in, const struct pass_watch *w,
                           struct pass_pipeline *pl, struct mt_err *e)
{
    TRY(pass_pipeline_run_watched(in, w, pl, e));
    if (pl->stopped) {
        pass_pipeline_fini(pl);
        return err_set(e, MT_ETIMEOUT, "stopped");
    }
    return MT_OK;
}

int tune_optimize_mario(const struct plan *in, const struct pass_watch *w, struct plan **out,
                        struct mt_err *e)
{
    struct pass_pipeline pl;
    *out = NULL;
    TRY(tune_run_passes(in, w, &pl, e));
    *out = plan_clone(pass_pipeline_final(&pl)->plan);
    pass_pipeline_fini(&pl);
    return MT_OK;
}

static int tune_search_run(const struct plan *in, const struct pass_watch *w, bool offload,
                           struct plan **out, struct mt_err *e)
{
    struct pass_pipeline pl;
    *out = NULL;
    TRY(tune_run_passes(in, w, &pl, e));
    struct search_opts so;
    search_opts_default(&so, plan_config(in));
    so.quick = true; /* one search per candidate: the small ones without their boost */
    so.offload = offload;
    struct tune_search_watch sw = {w, &pl};
    if (w != NULL && w->step != NULL) {
        so.progress = tune_search_progress;
        so.progress_ctx = &sw;
    }
    int rc = pass_pipeline_search(&pl, &so, e);
    if (rc == MT_OK && pl.search.stopped)
        rc = err_set(e, MT_ETIMEOUT, "stopped");
    if (rc == MT_OK)
        *out = plan_clone(pass_pipeline_final(&pl)->plan);
    pass_pipeline_fini(&pl);
    return rc;
}

int tune_optimize_search(const struct plan *in, const struct pass_watch *w, struct plan **out,
                         struct mt_err *e)
{
    return tune_search_run(in, w, false, out, e);
}

int tune_optimize_search_offload(const struct plan *in, const struct pass_watch *w,
                                 struct plan **out, struct mt_err *e)
{
    return tune_search_run(in, w, true, out, e);
}

const char *tune_ckpt_name(const struct tune_candidate *c)
{
    return !c->ckpt ? "off" : c->search ? "search" : "mario";
}

bool tune_scheme_tried(enum scheme_id s)
{
    return scheme_registry_get(s)->in_tuner && scheme_generator(s) != NULL;
}

void tune_scheme_names(char *buf, int n)
{
    int at = 0;
    buf[0] = '\0';
    for (int s = 0; s < SCHEME__COUNT && at < n; s++)
        if (tune_scheme_tried((enum scheme_id)s))
            at += snprintf(buf + at, (size_t)(n - at), "%s%s", at ? ", " : "",
                           config_scheme_name((enum scheme_id)s));
}

int tune_schemes_parse(const char *list, unsigned *mask, struct mt_err *e)
{
    *mask = 0;
    const char *p = list;
    for (;;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char name[64];
        if (len == 0 || len >= sizeof name)
            return err_set(e, MT_EINVAL, "%s: a scheme name between commas is %s", list,
                           len == 0 ? "empty" : "too long");
        memcpy(name, p, len);
        name[len] = '\0';
        enum scheme_id id;
        TRY(config_scheme_parse(name, &id, e));
        *mask |= 1u << id;
        if (!end)
            return MT_OK;
        p = end + 1;
    }
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
    char tp[32] = "";
    if (c->tp > 1 && c->cp > 1)
        snprintf(tp, sizeof tp, "-t%d-c%d", c->tp, c->cp);
    else if (c->cp > 1)
        snprintf(tp, sizeof tp, "-c%d", c->cp);
    else if (c->tp > 1)
        snprintf(tp, sizeof tp, "-t%d", c->tp);
    if (c->ep > 1)
        snprintf(tp + strlen(tp), sizeof tp - strlen(tp), "-e%d", c->ep);
    if (c->etp > 0 && c->etp != (c->tp > 0 ? c->tp : 1))
        snprintf(tp + strlen(tp), sizeof tp - strlen(tp), "-et%d", c->etp);
    snprintf(tp + strlen(tp), sizeof tp - strlen(tp), "%s%s%s", c->sp ? "-sp" : "",
             c->distopt ? "-do" : "", c->layout ? "-split" : "");
    if (config_scheme_uses_chunks(c->scheme))
        snprintf(buf, (size_t)n, "%s-%d-%dx%d%s", config_scheme_name(c->scheme), c->pp, c->mbs,
                 c->chunks, tp);
    else
        snprintf(buf, (size_t)n, "%s-%d-%d%s", config_scheme_name(c->scheme), c->pp, c->mbs, tp);
}

void tune_candidate_config(const struct config *base, const struct tune_candidate *c,
                           struct config *out)
{
    *out = *base;
    out->scheme = c->scheme;
    out->cluster.dp = c->dp;
    if (c->tp >= 1)
        out->cluster.tp = c->tp;
    if (c->cp >= 1)
        out->cluster.cp = c->cp;
    if (c->ep >= 1)
        out->cluster.ep = c->ep;
    if (c->etp >= 1)
        out->cluster.etp = c->etp;
    out->global_batch_size = config_global_batch(base);
    out->micro_batch_size = c->mbs;
    out->num_microbatches = 0;
    out->sequence_parallel = c->sp;
    out->distributed_optimizer = c->distopt;
    out->chunks = config_scheme_uses_chunks(c->scheme) ? c->chunks : base->chunks;
    if (c->layout != NULL)
        snprintf(out->pipeline_layout, sizeof out->pipeline_layout, "%s", c->layout);
}

/* The tensor-parallel degrees tried: o->tp alone when given; the config's under unit costs or
 * a calibration (their costs do not follow tp); else 1, 2, 4, 8 dividing gpus_per_node and the
 * GPUs. */
static int tune_tps(const struct config *base, const struct tune_opts *o, int tps[4])
{
    if (o->tp > 0 || base->unit.enabled || base->profile.enabled) {
        int t = o->tp > 0 ? o->tp : base->cluster.tp;
        tps[0] = t;
        return base->num_device % t == 0;
    }
    int n = 0;
    for (int t = 1; t <= 8; t *= 2)
        if (base->cluster.gpus_per_node % t == 0 && base->num_device % t == 0)
            tps[n++] = t;
    return n;
}

/* The context-parallel degrees tried: the config's, or with o->max_cp > 1 each power of two up
 * to it whose 2 cp chunks split the sequence (Megatron's load balance) and that divides the
 * GPUs; whether a mode takes it (a2a: cp | heads) the candidate's validation says. */
static int tune_cps(const struct config *base, const struct tune_opts *o, int cps[32])
{
    if (o->max_cp <= 1) {
        cps[0] = config_cp(base);
        return 1;
    }
    int n = 0;
    for (int cp = 1; cp <= o->max_cp && n < 32; cp *= 2)
        if (base->num_device % cp == 0 && (cp == 1 || base->model.seq_length % (2 * cp) == 0))
            cps[n++] = cp;
    return n;
}

struct tune_grid {
    struct tune_candidate *c;
    int n, cap;
};

/* The values an on/off dimension takes: searched, both where it can matter (else off, or on
 * when the config says so); pinned, that one. */
static int tune_switch_values(enum tune_switch s, bool matters, bool config_on, bool out[2])
{
    if (s != TUNE_BOTH) {
        out[0] = s == TUNE_ON;
        return 1;
    }
    out[0] = config_on;
    out[1] = true;
    return matters && !config_on ? 2 : 1;
}

/* The candidates of one (checkpointing, scheme, tp, pp): each micro-batch size dividing the
 * replica's batch (the pinned one alone), each chunk count of W and ZB-W, sequence parallelism
 * and the distributed optimizer off and on where they change the costs. */
static void tune_add(struct tune_grid *g, const struct config *base, const struct tune_opts *o,
                     struct tune_candidate k)
{
    int per_replica = config_global_batch(base) / k.dp;
    /* unit costs and a calibration do not follow them; an explicit bytes_per_param fixes the
     * optimizer's share */
    bool costed = !base->unit.enabled && !base->profile.enabled;
    bool sps[2], dos[2];
    int n_sp = tune_switch_values(o->sp, costed && k.tp > 1, base->sequence_parallel, sps);
    int n_do = tune_switch_values(o->distopt, costed && k.dp > 1 && !(base->bytes_per_param > 0),
                                  base->distributed_optimizer, dos);
    for (int mbs = 1; mbs <= per_replica; mbs *= 2) {
        if (per_replica % mbs != 0 || (o->max_mbs > 0 && mbs > o->max_mbs))
            continue;
        if (o->mbs > 0 && mbs != o->mbs)
            continue;
        /* unit costs are per micro-batch whatever its size: a larger one would only look
         * faster, so the config's size is the one candidate */
        if (base->unit.enabled && mbs != base->micro_batch_size)
            continue;
        int v_lo = 1, v_hi = 1;
        if (config_scheme_uses_chunks(k.scheme) && o->chunks > 0)
            v_lo = v_hi = o->chunks;
        else if (config_scheme_uses_chunks(k.scheme))
            v_lo = 2, v_hi = o->max_chunks < 2 ? 2 : o->max_chunks;
        for (int v = v_lo; v <= v_hi; v *= 2)
            for (int s = 0; s < n_sp; s++)
                for (int d = 0; d < n_do; d++) {
                    if (g->n == g->cap)
                        g->c = xreallocarray(g->c, (size_t)(g->cap *= 2), sizeof *g->c);
                    k.mbs = mbs;
                    k.chunks = v;
                    k.sp = sps[s];
                    k.distopt = dos[d];
                    g->c[g->n++] = k;
                }
    }
}

static int tune_enumerate(const struct config *base, const struct tune_opts *o,
                          struct tune_candidate **out)
{
    /* The registry's candidates in its order (the paper's four, then the zero-bubble family),
     * those o->schemes keeps. */
    enum scheme_id schemes[SCHEME__COUNT];
    int n_schemes = 0;
    for (int s = 0; s < SCHEME__COUNT; s++)
        if (tune_scheme_tried((enum scheme_id)s) && (o->schemes == 0 || (o->schemes >> s & 1u)))
            schemes[n_schemes++] = (enum scheme_id)s;
    int tps[4], n_tps = tune_tps(base, o, tps);
    int cps[32], n_cps = tune_cps(base, o, cps);
    /* --microbatches N sets the samples per iteration the grid keeps: N x mbs x dp */
    int G = config_global_batch(base);
    struct tune_grid g = {.c = xmalloc(64 * sizeof *g.c), .cap = 64};
    struct tune_expert_pair *experts = xcalloc(TUNE_MAX_EXPERT_PAIRS, sizeof *experts);
    /* a: 0 off, 1 Mario's passes, 2 the search */
    for (int ckpt = o->with_ckpt_off ? 0 : 1; ckpt <= 2; ckpt++) {
        if ((ckpt == 1 && !o->optimize) || (ckpt == 2 && !o->search))
            continue;
        for (int s = 0; s < n_schemes; s++)
            for (int t = 0; t < n_tps; t++)
                for (int q = 0; q < n_cps; q++) {
                /* the GPUs of one TP x CP group are one pipeline device: pp x dp = D / (tp cp) */
                if (base->num_device % (tps[t] * cps[q]) != 0)
                    continue;
                int D = base->num_device / (tps[t] * cps[q]);
                int min_pp = o->min_pp < 1 ? 1 : o->min_pp > D ? D : o->min_pp;
                if (o->pp > 0) /* pinned: that depth alone, whatever min_pp */
                    min_pp = o->pp;
                for (int pp = min_pp; pp <= D && (o->pp == 0 || pp == o->pp); pp++) {
                    if (D % pp != 0 || G % (D / pp) != 0 || (o->dp != 0 && D / pp != o->dp))
                        continue;
                    /* a mixture of experts: each (ep, etp) the stage folds (tune_expert.c) */
                    int n_ex = tune_expert_pairs(base, o, tps[t], cps[q], D / pp, experts,
                                                 TUNE_MAX_EXPERT_PAIRS);
                    for (int x = 0; x < n_ex; x++)
                        tune_add(&g, base, o,
                                 (struct tune_candidate){.scheme = schemes[s], .pp = pp,
                                                         .dp = D / pp, .tp = tps[t],
                                                         .cp = cps[q], .ep = experts[x].ep,
                                                         .etp = experts[x].etp,
                                                         .ckpt = ckpt >= 1, .search = ckpt == 2,
                                                         .oom_device = -1,
                                                         .status = TUNE_NOT_RUN});
                }
                }
    }
    free(experts);
    *out = g.c;
    return g.n;
}

/* tune_build_plan, watched (w may be NULL). */
static int tune_build_watched(const struct config *base, const struct tune_candidate *c,
                              const struct tune_opts *o, const struct pass_watch *w,
                              struct plan **out, struct mt_err *e)
{
    tune_optimize_fn optimize = c->search ? o->search : o->optimize;
    struct config cfg;
    tune_candidate_config(base, c, &cfg);
    struct plan *p = NULL;
    *out = NULL;
    TRY(scheme_build(&cfg, &p, e));
    if (c->ckpt && optimize) {
        struct plan *q = NULL;
        int rc = optimize(p, w, &q, e);
        plan_free(p);
        if (rc != MT_OK)
            return rc;
        p = q;
    }
    *out = p;
    return MT_OK;
}

int tune_build_plan(const struct config *base, const struct tune_candidate *c,
                    const struct tune_opts *o, struct plan **out, struct mt_err *e)
{
    return tune_build_watched(base, c, o, NULL, out, e);
}

/* Simulates p into c (status, step, iteration time, peaks, the bound of its work: under the
 * cap when it fits); *bound gets the bound under the cap whatever the plan's peak (0 when it
 * could not be computed). With offload (the searches may offload) *bound, and c's own bound
 * when a search made c, drop the memory part (bound_allow_offload): an offload may avoid the
 * recompute the cap would otherwise force, so pruning must not count on it. */
static void tune_measure_sim(const struct config *base, const struct plan *p,
                             const struct sim_result *sim, bool offload,
                             struct tune_candidate *c, double *bound);

static void tune_measure(const struct config *base, const struct plan *p, bool offload,
                         struct tune_candidate *c, double *bound)
{
    struct mt_err e = {0};
    struct sim_result r;
    *bound = 0;
    if (sim_run(p, &r, &e) != MT_OK) {
        c->status = TUNE_INVALID;
        snprintf(c->why, sizeof c->why, "%.250s", e.msg);
        return;
    }
    tune_measure_sim(base, p, &r, offload, c, bound);
    sim_result_fini(&r);
}

/* tune_measure of p whose simulation is sim (sim_run's, made elsewhere: a pass step's) */
static void tune_measure_sim(const struct config *base, const struct plan *p,
                             const struct sim_result *sim, bool offload,
                             struct tune_candidate *c, double *bound)
{
    struct mt_err e = {0};
    const struct sim_result r = *sim;
    *bound = 0;
    double ts = r.unit ? 1 : 1e-6;
    c->step_time = r.step_time * ts;
    c->iter_time = r.throughput > 0 ? config_global_batch(base) / r.throughput : 0;
    struct bound_result b;
    if (bound_plan(p, &b, &e) == MT_OK) {
        if (offload && c->search)
            bound_allow_offload(&b);
        c->lower_bound = bound_value(&b, r.oom_device < 0) * ts;
        if (offload)
            bound_allow_offload(&b);
        *bound = bound_value(&b, true) * ts;
    }
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
}

static void tune_invalid(struct tune_candidate *c, const char *why)
{
    c->status = TUNE_INVALID;
    snprintf(c->why, sizeof c->why, "%.250s", why);
}

/* The watch of one thread's candidates: it asks the pool whether the grid goes on (and, on the
 * calling thread, the progress callback, so that a stop is heard inside a long candidate);
 * stopped records that it said stop during the candidate in hand. */
struct tune_watch {
    struct tune_pool *pool;
    bool caller;  /* the thread that calls the progress callback */
    bool stopped; /* it said stop since the candidate began: the candidate is not run */
};

static bool tune_watch_step(void *ctx, const struct pass_pipeline *pl, const char *next,
                            int round);

/* One candidate on its own: built (and optimized) as tune_build_plan builds it, simulated;
 * false (c left as it was) when w stopped it. */
static bool tune_evaluate(const struct config *base, const struct tune_opts *o,
                          struct tune_watch *tw, struct tune_candidate *c)
{
    struct mt_err e = {0};
    struct plan *p = NULL;
    double bound;
    struct pass_watch w = {tune_watch_step, tw};
    tw->stopped = false;
    int rc = tune_build_watched(base, c, o, &w, &p, &e);
    if (tw->stopped) {
        plan_free(p);
        return false;
    }
    if (rc != MT_OK)
        tune_invalid(c, e.msg);
    else
        tune_measure(base, p, o->offload, c, &bound);
    plan_free(p);
    return true;
}

/* The candidates that differ in checkpointing only share the baseline plan: one group each,
 * built and simulated once for off, optimized from there for mario; its bound under the cap
 * (per iteration of the global batch) decides whether its search can win. */
struct tune_group {
    int off, mario, search;  /* candidate indices, -1 when the grid has none */
    double bound_iter;       /* the bound of any schedule of its work under the cap, per
                              * iteration of the global batch (iter_time's unit); 0 unknown */
    double bound_step;       /* the same per step (step_time's unit) */
};

static int tune_group_of(const struct tune_candidate *a, const struct tune_candidate *b)
{
    return a->scheme == b->scheme && a->pp == b->pp && a->mbs == b->mbs &&
           a->chunks == b->chunks && a->tp == b->tp && a->cp == b->cp && a->sp == b->sp &&
           a->distopt == b->distopt && a->ep == b->ep && a->etp == b->etp;
}

static int tune_make_groups(const struct tune_candidate *cand, int n, struct tune_group **out)
{
    struct tune_group *g = xcalloc((size_t)n + 1, sizeof *g);
    int ng = 0;
    for (int i = 0; i < n; i++) {
        int k = 0;
        while (k < ng) {
            int any = g[k].off >= 0 ? g[k].off : g[k].mario >= 0 ? g[k].mario : g[k].search;
            if (tune_group_of(&cand[any], &cand[i]))
                break;
            k++;
        }
        if (k == ng)
            g[ng++] = (struct tune_group){.off = -1, .mario = -1, .search = -1};
        int *slot = !cand[i].ckpt ? &g[k].off : cand[i].search ? &g[k].search : &g[k].mario;
        *slot = i;
    }
    *out = g;
    return ng;
}

/* Phase 1 of a group: the baseline built once, simulated (off), optimized (mario); its bound.
 * Returns the candidates it decided (mario not, when tw stopped its passes). */
static int tune_group_first(const struct config *base, const struct tune_opts *o,
                            struct tune_watch *tw, struct tune_candidate *cand,
                            struct tune_group *g)
{
    struct mt_err e = {0};
    struct plan *p = NULL;
    int decided = (g->off >= 0) + (g->mario >= 0);
    int any = g->off >= 0 ? g->off : g->mario >= 0 ? g->mario : g->search;
    struct tune_candidate off = cand[any];
    off.ckpt = off.search = false;
    struct config cfg;
    tune_candidate_config(base, &off, &cfg);
    if (scheme_build(&cfg, &p, &e) != MT_OK) { /* its search fails the same way in phase 2 */
        if (g->off >= 0)
            tune_invalid(&cand[g->off], e.msg);
        if (g->mario >= 0)
            tune_invalid(&cand[g->mario], e.msg);
        return decided;
    }
    double bound = 0, unused;
    /* Mario's passes simulate the baseline first and their final plan last: with them (the
     * tuner's own optimize), off and mario take those simulations instead of making them again
     * (the same sim_run of the same plans) */
    struct pass_pipeline pl;
    bool piped = false;
    int prc = MT_OK;
    if (g->mario >= 0 && o->optimize == tune_optimize_mario) {
        struct pass_watch w = {tune_watch_step, tw};
        tw->stopped = false;
        prc = pass_pipeline_run_watched(p, &w, &pl, &e);
        piped = prc == MT_OK;
    }
    if (piped)
        tune_measure_sim(base, p, &pl.step[0].sim, o->offload, &off, &bound);
    else
        tune_measure(base, p, o->offload, &off, &bound);
    if (g->off >= 0)
        cand[g->off] = off;
    if (off.status != TUNE_INVALID && off.step_time > 0 && off.iter_time > 0) {
        g->bound_iter = bound * off.iter_time / off.step_time; /* dp's efficiency, as simulated */
        g->bound_step = bound;
    }
    if (g->mario >= 0 && o->optimize == tune_optimize_mario) {
        if (tw->stopped)
            decided--; /* not run */
        else if (prc != MT_OK)
            tune_invalid(&cand[g->mario], e.msg);
        else
            tune_measure_sim(base, pass_pipeline_final(&pl)->plan, &pass_pipeline_final(&pl)->sim,
                             o->offload, &cand[g->mario], &unused);
        if (piped)
            pass_pipeline_fini(&pl);
    } else if (g->mario >= 0) {
        struct plan *q = NULL;
        struct pass_watch w = {tune_watch_step, tw};
        tw->stopped = false;
        int rc = o->optimize(p, &w, &q, &e);
        if (tw->stopped)
            decided--; /* not run */
        else if (rc != MT_OK)
            tune_invalid(&cand[g->mario], e.msg);
        else
            tune_measure(base, q, o->offload, &cand[g->mario], &unused);
        plan_free(q);
    }
    plan_free(p);
    return decided;
}

/* The workers of one phase: items taken in order from an atomic counter, each decided by
 * run(); the calling thread works too and reports progress between its items. */
struct tune_pool {
    const struct config *base;
    const struct tune_opts *o;
    struct tune_candidate *cand;
    struct tune_group *groups;
    int n;     /* the grid's candidates (progress's total) */
    int items; /* this phase's items */
    /* returns the candidates it decided; w: the thread's watch */
    int (*run)(struct tune_pool *pl, int item, struct tune_watch *w);
    /* phase 2: the groups whose search runs, by their bound ascending */
    const int *order;
    atomic_bool *finished; /* order[k]'s search simulated */
    bool *skipped;         /* order[k]'s search pruned before it ran */
    double best1;          /* the best iteration time of phase 1 (HUGE_VAL: none fits) */
    atomic_int next, done;
    atomic_bool stop; /* the progress callback said stop: take no more items */
};

static bool tune_watch_step(void *ctx, const struct pass_pipeline *pl, const char *next,
                            int round)
{
    struct tune_watch *w = ctx;
    struct tune_pool *pool = w->pool;
    (void)pl;
    (void)next;
    (void)round;
    if (w->caller && pool->o->progress && !atomic_load(&pool->stop) &&
        !pool->o->progress(pool->o->progress_ctx, atomic_load(&pool->done), pool->n))
        atomic_store(&pool->stop, true);
    if (atomic_load(&pool->stop))
        w->stopped = true;
    return !w->stopped;
}

static void *tune_pool_worker(void *arg)
{
    struct tune_pool *pl = arg;
    struct tune_watch w = {pl, false, false};
    cost_cache_open(); /* a candidate's builds are of one config (model/cost_cache.h) */
    while (!atomic_load(&pl->stop)) {
        int i = atomic_fetch_add(&pl->next, 1);
        if (i >= pl->items)
            break;
        atomic_fetch_add(&pl->done, pl->run(pl, i, &w));
    }
    cost_cache_close();
    return NULL;
}

static void tune_pool_go(struct tune_pool *pl, int threads)
{
    atomic_store(&pl->next, 0);
    if (threads > pl->items)
        threads = pl->items;
    pthread_t *tid = xcalloc((size_t)threads + 1, sizeof *tid);
    int started = 0;
    for (int t = 1; t < threads; t++)
        if (pthread_create(&tid[t], NULL, tune_pool_worker, pl) == 0)
            started = t;
        else
            break;
    /* told to stop, a worker gives up the item it holds at its next pass (its watch) */
    struct tune_watch w = {pl, true, false};
    while (!atomic_load(&pl->stop)) {
        int i = atomic_fetch_add(&pl->next, 1);
        if (i >= pl->items)
            break;
        int decided = pl->run(pl, i, &w);
        int done = atomic_fetch_add(&pl->done, decided) + decided;
        if (!atomic_load(&pl->stop) && pl->o->progress &&
            !pl->o->progress(pl->o->progress_ctx, done, pl->n))
            atomic_store(&pl->stop, true);
    }
    for (int t = 1; t <= started; t++)
        pthread_join(tid[t], NULL);
    free(tid);
}

static int tune_run_first(struct tune_pool *pl, int item, struct tune_watch *w)
{
    return tune_group_first(pl->base, pl->o, w, pl->cand, &pl->groups[item]);
}

/* Phase 2: order[k]'s search, unless a search already simulated before it in the order (or
 * phase 1) reached an iteration time its bound cannot beat. */
static int tune_run_search(struct tune_pool *pl, int k, struct tune_watch *w)
{
    const struct tune_group *g = &pl->groups[pl->order[k]];
    double best = pl->best1;
    for (int j = 0; j < k; j++)
        if (atomic_load(&pl->finished[j])) {
            const struct tune_candidate *c = &pl->cand[pl->groups[pl->order[j]].search];
            if (c->status == TUNE_OK && c->iter_time < best)
                best = c->iter_time;
        }
    if (!pl->o->exhaustive && g->bound_iter > 0 && g->bound_iter >= best) {
        pl->skipped[k] = true;
        return 1;
    }
    if (!tune_evaluate(pl->base, pl->o, w, &pl->cand[g->search]))
        return 0; /* stopped in flight: not run */
    atomic_store(&pl->finished[k], true);
    return 1;
}

/* Throughputs that differ by float rounding only (1e-9 relative, as bound_gap_pct) are equal:
 * the same schedule reached by two sums of the same costs (W at pp 1 and V) is a tie. */
static int tune_cmp_throughput(double a, double b)
{
    if (fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b)))
        return 0;
    return a > b ? 1 : -1;
}

bool tune_ranks_above(const struct tune_candidate *a, const struct tune_candidate *b)
{
    if ((a->status == TUNE_OK) != (b->status == TUNE_OK))
        return a->status == TUNE_OK;
    if (a->status != TUNE_OK)
        return false;
    int cmp = tune_cmp_throughput(a->throughput, b->throughput);
    return cmp != 0 ? cmp > 0 : a->peak_mem < b->peak_mem;
}

/* Over pointers into one array: equal rank falls back to the address, that is grid order. */
static int tune_rank_cmp(const void *pa, const void *pb)
{
    const struct tune_candidate *x = *(const struct tune_candidate *const *)pa;
    const struct tune_candidate *y = *(const struct tune_candidate *const *)pb;
    if (tune_ranks_above(x, y))
        return -1;
    if (tune_ranks_above(y, x))
        return 1;
    return (x > y) - (x < y);
}

int tune_rank(const struct tune_result *r, int *order)
{
    const struct tune_candidate **p = xcalloc((size_t)r->n + 1, sizeof *p);
    for (int i = 0; i < r->n; i++)
        p[i] = &r->cand[i];
    qsort(p, (size_t)r->n, sizeof *p, tune_rank_cmp);
    for (int i = 0; i < r->n; i++)
        order[i] = (int)(p[i] - r->cand);
    free(p);
    return r->n;
}

void tune_decide(struct tune_result *r)
{
    r->best = -1;
    for (int i = 0; i < r->n; i++)
        if (r->cand[i].status == TUNE_OK &&
            (r->best < 0 || tune_ranks_above(&r->cand[i], &r->cand[r->best])))
            r->best = i;
    for (int i = 0; i < r->n; i++) {
        struct tune_candidate *a = &r->cand[i];
        a->pareto = a->status == TUNE_OK;
        for (int j = 0; j < r->n && a->pareto; j++) {
            const struct tune_candidate *b = &r->cand[j];
            if (j == i || b->status != TUNE_OK)
                continue;
            int cmp = tune_cmp_throughput(b->throughput, a->throughput);
            bool dominates = cmp >= 0 && b->peak_mem <= a->peak_mem &&
                             (cmp > 0 || b->peak_mem < a->peak_mem);
            if (dominates)
                a->pareto = false;
        }
    }
}

/* Phase 2: the searches, best bound first; one whose bound is no better than the best
 * iteration time already found cannot win, so its search is skipped (TUNE_PRUNED). Workers may
 * run a search that the order later prunes (one before it finished better): the resolution
 * below walks the order as one thread would, so the answer does not depend on the threads. */
static void tune_search_phase(struct tune_pool *pl, int threads)
{
    int ns = 0;
    int *order = xcalloc((size_t)pl->items + 1, sizeof *order);
    for (int g = 0; g < pl->items; g++)
        if (pl->groups[g].search >= 0)
            order[ns++] = g;
    /* by bound, then grid order (insertion: stable, and the searches are a few hundred) */
    for (int i = 1; i < ns; i++)
        for (int j = i; j > 0 && pl->groups[order[j]].bound_iter <
                                     pl->groups[order[j - 1]].bound_iter; j--) {
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    pl->best1 = HUGE_VAL;
    for (int i = 0; i < pl->n; i++)
        if (pl->cand[i].status == TUNE_OK && !pl->cand[i].search && pl->cand[i].iter_time < pl->best1)
            pl->best1 = pl->cand[i].iter_time;
    pl->order = order;
    pl->finished = xcalloc((size_t)ns + 1, sizeof *pl->finished);
    pl->skipped = xcalloc((size_t)ns + 1, sizeof *pl->skipped);
    for (int k = 0; k < ns; k++)
        atomic_init(&pl->finished[k], false);
    pl->items = ns;
    pl->run = tune_run_search;
    if (ns > 0 && !atomic_load(&pl->stop))
        tune_pool_go(pl, threads);
    double best = pl->best1;
    for (int k = 0; k < ns; k++) {
        const struct tune_group *g = &pl->groups[order[k]];
        struct tune_candidate *c = &pl->cand[g->search];
        bool ran = atomic_load(&pl->finished[k]);
        if (!ran && !pl->skipped[k])
            continue; /* cancelled before it: not run */
        if (!pl->o->exhaustive && g->bound_iter > 0 && g->bound_iter >= best) {
            bool none = isinf(g->bound_iter);
            *c = (struct tune_candidate){.scheme = c->scheme, .pp = c->pp, .dp = c->dp,
                                         .mbs = c->mbs, .chunks = c->chunks, .tp = c->tp,
                                         .cp = c->cp, .ep = c->ep, .etp = c->etp,
                                         .sp = c->sp, .distopt = c->distopt, .ckpt = true,
                                         .search = true, .status = TUNE_PRUNED,
                                         .oom_device = -1, .lower_bound = g->bound_step};
            if (none)
                snprintf(c->why, sizeof c->why,
                         "pruned: no schedule of its work fits the cap (its bound)");
            else
                snprintf(c->why, sizeof c->why,
                         "pruned: its bound, %.4g %s per iteration, is no better than the best "
                         "found, %.4g", g->bound_iter, pl->base->unit.enabled ? "t" : "s", best);
            continue;
        }
        if (c->status == TUNE_OK && c->iter_time < best)
            best = c->iter_time;
    }
    free(pl->finished);
    free(pl->skipped);
    free(order);
}

/* The split search (o->search_split): the best TUNE_SPLIT_TRIES candidates that fit, each
 * with the balanced split of sim/tune/tune_split.h simulated as one more candidate (its label
 * -split) where that split differs from the config's; the ranking then decides. */
static void tune_split_phase(const struct config *base, const struct tune_opts *o,
                             struct tune_result *r)
{
    int *order = xcalloc((size_t)r->n + 1, sizeof *order);
    tune_rank(r, order);
    int picks[TUNE_SPLIT_TRIES], n_picks = 0;
    for (int i = 0; i < r->n && n_picks < TUNE_SPLIT_TRIES; i++)
        if (r->cand[order[i]].status == TUNE_OK && r->cand[order[i]].layout == NULL)
            picks[n_picks++] = order[i];
    free(order);
    r->layouts = xcalloc(TUNE_SPLIT_TRIES, sizeof *r->layouts);
    r->cand = xreallocarray(r->cand, (size_t)r->n + TUNE_SPLIT_TRIES, sizeof *r->cand);
    for (int k = 0; k < n_picks; k++) {
        struct tune_candidate c = r->cand[picks[k]];
        struct config cfg;
        struct plan_geom g;
        struct mt_err e = {0};
        bool changed = false;
        tune_candidate_config(base, &c, &cfg);
        char *layout = r->layouts[r->n_layouts];
        int rc = scheme_geom(&cfg, &g, &e);
        if (rc == MT_OK)
            rc = tune_split_propose(&cfg, g.stages, g.parts == 1 && !c.ckpt, layout,
                                    CONFIG_LAYOUT_MAX, &changed, &e);
        if (rc != MT_OK || !changed) {
            if (r->split_note[0] == '\0') {
                char label[48];
                tune_label(&c, label, sizeof label);
                snprintf(r->split_note, sizeof r->split_note, "%s: %.200s", label,
                         rc != MT_OK ? e.msg : "its split is already the balanced one");
            }
            continue;
        }
        c.layout = layout;
        r->n_layouts++;
        c.status = TUNE_NOT_RUN;
        c.lower_bound = c.throughput = c.step_time = c.iter_time = 0;
        c.oom_device = -1;
        c.why[0] = '\0';
        struct plan *p = NULL;
        double bound;
        if (tune_build_plan(base, &c, o, &p, &e) != MT_OK)
            tune_invalid(&c, e.msg);
        else
            tune_measure(base, p, o->offload, &c, &bound);
        plan_free(p);
        r->cand[r->n++] = c;
        r->done++;
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
    if (config_scheme_async(base->scheme)) {
        char names[256];
        tune_scheme_names(names, sizeof names);
        return err_set(e, MT_EINVAL,
                       "pipeline_scheme: %s has no flush between iterations; the tuner searches "
                       "synchronous schemes only (%s); use simulate or optimize for an "
                       "asynchronous plan", config_scheme_name(base->scheme), names);
    }
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
        char pins[96] = "";
        int at = 0;
        if (o->pp > 0)
            at += snprintf(pins + at, sizeof pins - (size_t)at, ", pp %d", o->pp);
        if (o->dp > 0)
            at += snprintf(pins + at, sizeof pins - (size_t)at, ", dp %d", o->dp);
        if (o->tp > 0)
            at += snprintf(pins + at, sizeof pins - (size_t)at, ", tp %d", o->tp);
        if (o->mbs > 0)
            snprintf(pins + at, sizeof pins - (size_t)at, ", micro-batch size %d", o->mbs);
        if (pins[0] != '\0')
            return err_set(e, MT_EINVAL,
                           "num_device: no candidate with%s (as given) makes %d GPUs = pp x dp x tp "
                           "with dp dividing the global batch %d and the micro-batch size "
                           "dividing global / dp", pins + 1, base->num_device,
                           config_global_batch(base));
        return err_set(e, MT_EINVAL,
                       "num_device: no pipeline depth >= %d divides %d devices with a data-parallel "
                       "degree dividing the global batch %d", o->min_pp, base->num_device,
                       config_global_batch(base));
    }
    int threads = o->threads > 0 ? o->threads : (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (threads < 1)
        threads = 1;
    struct tune_group *groups = NULL;
    int ng = tune_make_groups(cand, n, &groups);
    struct tune_pool pl = {.base = base, .o = o, .cand = cand, .groups = groups, .n = n,
                           .items = ng, .run = tune_run_first};
    atomic_init(&pl.next, 0);
    atomic_init(&pl.done, 0);
    atomic_init(&pl.stop, false);
    cost_cache_open(); /* the calling thread's candidates, as each worker's */
    tune_pool_go(&pl, threads);
    tune_search_phase(&pl, threads);
    cost_cache_close();
    free(groups);
    out->n = n;
    out->cand = cand;
    out->seq_length = base->model.seq_length;
    out->done = atomic_load(&pl.done);
    out->cancelled = atomic_load(&pl.stop);
    if (o->progress && !out->cancelled)
        o->progress(o->progress_ctx, n, n);
    for (int i = 0; i < n; i++)
        if (cand[i].status == TUNE_NOT_RUN)
            snprintf(cand[i].why, sizeof cand[i].why, "not run: the tuner was cancelled");
    tune_decide(out);
    if (o->search_split && !out->cancelled) {
        cost_cache_open();
        tune_split_phase(base, o, out);
        cost_cache_close();
        tune_decide(out);
    }
    return MT_OK;
}

void tune_result_fini(struct tune_result *r)
{
    free(r->cand);
    free(r->layouts);
    memset(r, 0, sizeof *r);
}
