/* exec/input_aware.c: variable-length batches with per-batch checkpointing plans
 * (exec/input_aware.h).
 *
 * The predictor. Over the first W batches (full checkpointing) every rank measures, for each
 * stage it holds and each batch's length s (exec/interp.h struct interp_measure): the
 * checkpoint a whole-stage CFW keeps, the full activations (CFW + RC), one layer's block and
 * the embedding output's (read off the allocator as the RC allocates them), the CFW's and the
 * BW's peaks above what the device held, the size of a buffer between instructions and the
 * most such buffers held at once. After batch W the ranks take the maximum of every figure
 * over ranks (each stage is measured by the ranks that hold it; replicas agree), so every rank
 * has every stage's samples, and each fits one quadratic in s per stage and quantity
 * (model/memfit.h): act, ckpt, layer_act, cfw_peak_bytes, bw_work_bytes and sel_ckpt (the input
 * of layer k a selective CFW keeps: a hidden state less the embedding output, model/cost.h).
 * A FW's transient is taken as 0: none runs in the fit batches (the backends' FW allocates
 * only what it keeps). The static bytes are measured once. Buffers between instructions are
 * not in the simulator's memory walk, so the predictor reserves, per stage, the most buffers
 * its device held at once in the fit batches, plus one, times a hidden state at s, as static
 * bytes.
 * The planner (sim/inputs/ckpt_plan.h) then plans with these bytes in place of the analytic ones.
 *
 * Per batch after the fit the rank predicts its device's peak for the batch's choice and
 * length (ckpt_plan_peaks) and compares with the peak it measured. A bucket (or the longest
 * batch, for the static strategy) that no choice fits under the predictor runs full
 * checkpointing and is counted. */
#include <config.h>
#include "exec/input_aware.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "exec/comm.h"
#include "exec/interp.h"
#include "model/config.h"
#include "model/cost.h"
#include "model/memfit.h"
#include "model/seqlen.h"
#include "sim/inputs/ckpt_plan.h"
#include "sim/plan/plan.h"
#include "sim/core/vpipe.h"
#include "util/err.h"
#include "util/xalloc.h"

/* The quantities measured per stage and batch. */
enum { IA_ACT, IA_CKPT, IA_LAYER, IA_ENC, IA_CFW, IA_BW, IA__N };

struct input_aware {
    struct input_aware_opts o;
    struct ckpt_plan *cp;
    int S, D, P;
    int nlen, *len, max_len;
    double cap;
    struct plan *full, *static_plan; /* (a) and the fit batches; (b) */
    int *k_full, *k_static, *k_prev;
    bool have_static;
    struct ckpt_plan_cache *cache;
    struct plan **bplan; /* [buckets + 1] */
    int nbuckets;
    struct comm *cm;
    int rank, dev, ranks;
    /* the fit batches' samples: obs[(i * S + j) * IA__N + q], hid[i], p2p[d], stat[j] */
    double *obs, *hid, *p2p, *stat;
    struct memfit *fit; /* [S * (IA__N + 1)]: the quantities, enc replaced by sel_ckpt */
    struct memfit hidden;
    double *reserve; /* [S]: buffers between instructions the predictor keeps room for */
    bool fitted;
    /* the current batch */
    const int *k_cur;
    int s_cur;
    /* this rank's figures */
    struct input_aware_device me;
    double err_sum;
    long switches;
    int fallbacks;
};

const char *input_aware_strategy_name(enum input_aware_strategy s)
{
    switch (s) {
    case INPUT_AWARE_FULL: return "full";
    case INPUT_AWARE_STATIC: return "static";
    case INPUT_AWARE_PLANS: return "input-aware";
    }
    return "?";
}

/* The executor's exact bytes (model/cost.h), for the check before the run. */
static void ia_exact_bytes(int s, struct cost_model *cost, void *ctx)
{
    const struct input_aware *ia = ctx;
    for (int j = 0; j < cost->num_stages; j++)
        cost_stage_bytes_exec(ckpt_plan_config(ia->cp), s, &cost->stage[j]);
}

/* The predictor's bytes. */
static void ia_pred_bytes(int s, struct cost_model *cost, void *ctx)
{
    const struct input_aware *ia = ctx;
    double hidden = memfit_predict(&ia->hidden, s);
    for (int j = 0; j < cost->num_stages; j++) {
        struct stage_cost *st = &cost->stage[j];
        const struct memfit *f = &ia->fit[j * IA__N];
        st->act = memfit_predict(&f[IA_ACT], s);
        st->ckpt = memfit_predict(&f[IA_CKPT], s);
        st->layer_act = memfit_predict(&f[IA_LAYER], s);
        st->sel_ckpt = memfit_predict(&f[IA_ENC], s); /* fitted as sel_ckpt (ia_fit) */
        st->cfw_peak_bytes = memfit_predict(&f[IA_CFW], s);
        st->bw_work_bytes = memfit_predict(&f[IA_BW], s);
        st->fw_work_bytes = 0;
        st->static_bytes = ia->stat[j] + ia->reserve[j] * hidden;
    }
}

int input_aware_new(const struct config *c, const struct seqlen_sample *lengths,
                    const struct input_aware_opts *o, struct input_aware **out, struct mt_err *e)
{
    *out = NULL;
    if (o->fit_batches < 1)
        return err_set(e, MT_EINVAL, "the predictor needs at least one batch to fit on");
    if (o->steps <= o->fit_batches && o->strategy != INPUT_AWARE_FULL)
        return err_set(e, MT_EINVAL,
                       "%d batches: the predictor measures the first %d under full "
                       "checkpointing, so run more (--steps)",
                       o->steps, o->fit_batches);
    struct ckpt_plan *cp = NULL;
    TRY(ckpt_plan_new(c, lengths->max_len, &cp, e));
    struct input_aware *ia = xcalloc(1, sizeof *ia);
    ia->o = *o;
    ia->cp = cp;
    ia->S = ckpt_plan_stages(cp);
    ia->D = ckpt_plan_devices(cp);
    ia->P = plan_geom(ckpt_plan_template(cp))->parts;
    ia->nlen = lengths->n;
    ia->len = xmalloc((size_t)lengths->n * sizeof(int));
    memcpy(ia->len, lengths->len, (size_t)lengths->n * sizeof(int));
    ia->max_len = lengths->max_len;
    ia->cap = ckpt_plan_cap(cp);
    ia->k_full = xmalloc((size_t)ia->S * sizeof(int));
    ia->k_static = xmalloc((size_t)ia->S * sizeof(int));
    ia->k_prev = xmalloc((size_t)ia->S * sizeof(int));
    ckpt_plan_all(cp, ia->k_full);
    ia->full = ckpt_plan_apply(cp, ia->max_len, ia->k_full);
    ia->me.rank = -1;
    /* full checkpointing must fit the longest batch (exact bytes; the solve names what is
     * over when not) */
    ckpt_plan_set_bytes(cp, ia_exact_bytes, ia);
    int rc = ckpt_plan_solve(cp, ia->max_len, CKPT_PLAN_GREEDY, ia->k_static, NULL, e);
    ckpt_plan_set_bytes(cp, NULL, NULL);
    if (rc != MT_OK) {
        err_wrap(e, "the executor's exact bytes");
        input_aware_free(ia);
        return rc;
    }
    *out = ia;
    return MT_OK;
}

void input_aware_free(struct input_aware *ia)
{
    if (ia == NULL)
        return;
    if (ia->bplan)
        for (int b = 0; b <= ia->nbuckets; b++)
            plan_free(ia->bplan[b]);
    free(ia->bplan);
    ckpt_plan_cache_free(ia->cache);
    plan_free(ia->full);
    plan_free(ia->static_plan);
    free(ia->k_full);
    free(ia->k_static);
    free(ia->k_prev);
    free(ia->len);
    free(ia->obs);
    free(ia->fit);
    free(ia->reserve);
    ckpt_plan_free(ia->cp);
    free(ia);
}

const struct plan *input_aware_plan(const struct input_aware *ia)
{
    return ia->full;
}

/* ---- the fit ----------------------------------------------------------------------------- */

static int ia_fit(struct input_aware *ia, struct mt_err *e)
{
    int W = ia->o.fit_batches, S = ia->S, D = ia->D;
    size_t nobs = (size_t)W * S * IA__N;
    /* every rank's samples on every rank: the maximum over ranks (zeros where not held) */
    TRY(comm_max_doubles(ia->cm, ia->obs, (int)(nobs + (size_t)W + (size_t)D + (size_t)S), e));
    ia->fit = xmalloc((size_t)S * IA__N * sizeof *ia->fit);
    memfit_init(&ia->hidden, ia->max_len);
    for (int i = 0; i < W; i++) {
        /* a hidden state: a buffer between instructions, or the embedding output (one device) */
        double h = ia->hid[i] > 0 ? ia->hid[i] : ia->obs[((size_t)i * S + 0) * IA__N + IA_ENC];
        ia->hid[i] = h;
        memfit_add(&ia->hidden, ia->len[i % ia->nlen], h);
    }
    TRY(memfit_solve(&ia->hidden, e));
    for (int j = 0; j < S; j++)
        for (int q = 0; q < IA__N; q++) {
            struct memfit *f = &ia->fit[j * IA__N + q];
            memfit_init(f, ia->max_len);
            for (int i = 0; i < W; i++) {
                double v = ia->obs[((size_t)i * S + j) * IA__N + q];
                if (q == IA_ENC) /* sel_ckpt: the input of layer k less the embedding output */
                    v = ia->hid[i] - v;
                memfit_add(f, ia->len[i % ia->nlen], v);
            }
            int rc = memfit_solve(f, e);
            if (rc != MT_OK)
                return err_wrap(e, "stage %d", j);
        }
    /* room for the buffers between instructions: each stage, its devices' most at once, and
     * one more (when a send completes depends on when the peer receives: a later batch may
     * hold one more than any fit batch did) */
    ia->reserve = xcalloc((size_t)S, sizeof(double));
    const struct plan_geom *g = plan_geom(ckpt_plan_template(ia->cp));
    for (int d = 0; d < D; d++)
        for (int part = 0; part < g->parts; part++) {
            int j = vpipe_stage(g, d, 0, part);
            ia->reserve[j] = fmax(ia->reserve[j], (ia->p2p[d] + 1) / g->parts);
        }
    ia->me.p2p_buffers = (int)ia->p2p[ia->dev] + 1;
    ckpt_plan_set_bytes(ia->cp, ia_pred_bytes, ia);
    ia->fitted = true;
    if (ia->o.strategy == INPUT_AWARE_STATIC) {
        struct mt_err pe = {0};
        ia->have_static =
            ckpt_plan_solve(ia->cp, ia->max_len, CKPT_PLAN_GREEDY, ia->k_static, NULL, &pe) ==
            MT_OK;
        if (ia->have_static)
            ia->static_plan = ckpt_plan_apply(ia->cp, ia->max_len, ia->k_static);
    } else if (ia->o.strategy == INPUT_AWARE_PLANS) {
        ia->cache = ckpt_plan_cache_new(ia->cp, ia->o.width, ia->max_len, CKPT_PLAN_GREEDY);
        ia->nbuckets = seqlen_bucket(ia->max_len, ia->o.width < 1 ? 1 : ia->o.width);
        ia->bplan = xcalloc((size_t)ia->nbuckets + 1, sizeof *ia->bplan);
    }
    return MT_OK;
}

/* ---- the stream ---------------------------------------------------------------------------- */

static int ia_begin(void *ctx, int step, const struct plan **plan, int *T, struct mt_err *e)
{
    struct input_aware *ia = ctx;
    int s = ia->len[step % ia->nlen];
    const int *k = ia->k_full;
    const struct plan *p = ia->full;
    if (ia->fitted && ia->o.strategy == INPUT_AWARE_STATIC) {
        if (ia->have_static) {
            k = ia->k_static;
            p = ia->static_plan;
        } else {
            ia->fallbacks++; /* no choice fits the longest batch under the predictor */
        }
    } else if (ia->fitted && ia->o.strategy == INPUT_AWARE_PLANS) {
        const struct ckpt_plan_entry *en = NULL;
        struct mt_err pe = {0};
        if (ckpt_plan_cache_get(ia->cache, s, &en, &pe) == MT_OK) {
            if (ia->bplan[en->bucket] == NULL) {
                struct plan *np = ckpt_plan_apply(ia->cp, en->s, en->k);
                int rc = interp_check(np, ia->ranks, e);
                if (rc != MT_OK) {
                    plan_free(np);
                    return err_wrap(e, "the plan for %d tokens", en->s);
                }
                ia->bplan[en->bucket] = np;
            }
            k = en->k;
            p = ia->bplan[en->bucket];
        } else {
            ia->fallbacks++; /* no choice fits under the predictor: the least memory */
        }
    }
    if (step > 0 && memcmp(k, ia->k_prev, (size_t)ia->S * sizeof(int)) != 0)
        ia->switches++;
    memcpy(ia->k_prev, k, (size_t)ia->S * sizeof(int));
    ia->k_cur = k;
    ia->s_cur = s;
    *plan = p;
    *T = s;
    return MT_OK;
}

static void ia_record(struct input_aware *ia, const struct interp_measure *m)
{
    int S = ia->S;
    for (int i = 0; i < m->nstages; i++) {
        const struct interp_stage_bytes *b = &m->st[i];
        double *o = &ia->obs[((size_t)m->step * S + b->stage) * IA__N];
        o[IA_ACT] = b->act_bytes;
        o[IA_CKPT] = b->ckpt_bytes;
        o[IA_LAYER] = b->layer_bytes;
        o[IA_ENC] = b->enc_bytes;
        o[IA_CFW] = b->cfw_peak_bytes;
        o[IA_BW] = b->bw_work_bytes;
        ia->stat[b->stage] = b->static_bytes;
    }
    ia->hid[m->step] = m->hidden_bytes;
    ia->p2p[ia->dev] = fmax(ia->p2p[ia->dev], m->p2p_buffers);
}

/* The predictor's peak for this rank's device at the current batch. */
static int ia_predict(struct input_aware *ia, double *out, struct mt_err *e)
{
    struct cost_model cost;
    TRY(ckpt_plan_costs(ia->cp, ia->s_cur, &cost, e));
    double *peak = xmalloc((size_t)ia->D * sizeof(double));
    ckpt_plan_peaks(ia->cp, &cost, ia->k_cur, peak);
    *out = peak[ia->dev];
    free(peak);
    cost_model_fini(&cost);
    return MT_OK;
}

static int ia_end(void *ctx, const struct interp_measure *m, struct mt_err *e)
{
    struct input_aware *ia = ctx;
    struct input_aware_device *me = &ia->me;
    double peak = m->peak_bytes;
    me->peak_bytes = fmax(me->peak_bytes, peak);
    if (peak > ia->cap)
        me->over_cap++;
    int W = ia->o.fit_batches;
    if (m->step < W) {
        ia_record(ia, m);
        if (m->step == W - 1)
            TRY(ia_fit(ia, e));
        return MT_OK;
    }
    double pred = 0;
    TRY(ia_predict(ia, &pred, e));
    double err = fabs(pred - peak) / peak;
    me->err_max = fmax(me->err_max, err);
    me->under_max = fmax(me->under_max, (peak - pred) / peak);
    ia->err_sum += err;
    me->predicted++;
    me->err_mean = ia->err_sum / me->predicted;
    return MT_OK;
}

void input_aware_stream(struct input_aware *ia, struct comm *cm, struct interp_stream *out)
{
    ia->cm = cm;
    ia->rank = comm_rank(cm);
    ia->ranks = comm_size(cm);
    ia->dev = ia->rank % ia->D;
    ia->me.rank = ia->rank;
    ia->me.dev = ia->dev;
    int W = ia->o.fit_batches;
    size_t n = (size_t)W * ia->S * IA__N + (size_t)W + (size_t)ia->D + (size_t)ia->S;
    free(ia->obs);
    ia->obs = xcalloc(n, sizeof(double));
    ia->hid = ia->obs + (size_t)W * ia->S * IA__N;
    ia->p2p = ia->hid + W;
    ia->stat = ia->p2p + ia->D;
    *out = (struct interp_stream){
        .max_T = ia->max_len, .begin = ia_begin, .end = ia_end, .ctx = ia};
}

/* ---- the report ---------------------------------------------------------------------------- */

int input_aware_gather(struct input_aware *ia, struct comm *cm, struct input_aware_report *out,
                       struct mt_err *e)
{
    memset(out, 0, sizeof *out);
    void *all = NULL;
    size_t *counts = xcalloc((size_t)comm_size(cm), sizeof *counts);
    int rc = comm_gather(cm, &ia->me, sizeof ia->me, &all, counts, e);
    free(counts);
    TRY(rc);
    out->strategy = ia->o.strategy;
    out->batches = ia->o.steps;
    out->fit_batches = ia->o.fit_batches;
    out->width = ia->o.width;
    out->max_len = ia->max_len;
    out->cap = ia->cap;
    out->switches = ia->switches;
    out->fallbacks = ia->fallbacks;
    out->stages = ia->S;
    if (ia->cache != NULL) {
        const struct ckpt_plan_stats *st = ckpt_plan_cache_stats(ia->cache);
        out->hits = st->hits;
        out->misses = st->misses;
        out->plan_ms_mean = st->misses ? st->plan_ms_total / st->misses : 0;
        out->plan_ms_max = st->plan_ms_max;
    }
    if (ia->o.strategy == INPUT_AWARE_STATIC && ia->have_static) {
        out->k_static = xmalloc((size_t)ia->S * sizeof(int));
        memcpy(out->k_static, ia->k_static, (size_t)ia->S * sizeof(int));
    }
    if (all == NULL)
        return MT_OK;
    out->dev = all;
    out->ranks = comm_size(cm);
    double sum = 0;
    int n = 0;
    for (int r = 0; r < out->ranks; r++) {
        const struct input_aware_device *d = &out->dev[r];
        out->peak_bytes = fmax(out->peak_bytes, d->peak_bytes);
        out->over_cap += d->over_cap;
        out->err_max = fmax(out->err_max, d->err_max);
        sum += d->err_mean * d->predicted;
        n += d->predicted;
    }
    out->err_mean = n ? sum / n : 0;
    return MT_OK;
}

void input_aware_report_fini(struct input_aware_report *r)
{
    if (r == NULL)
        return;
    free(r->dev);
    free(r->k_static);
    memset(r, 0, sizeof *r);
}

/* --lengths: samples and tokens per second over the run (the slowest rank's step times). */
void input_aware_rates(const struct plan *p, const struct seqlen_sample *smp,
                       const struct interp_result *r, double *samples_s, double *tokens_s)
{
    const struct config *c = plan_config(p);
    double per_step = (double)c->micro_batch_size * plan_geom(p)->mbs * c->cluster.dp;
    double t = 0, tokens = 0;
    for (int k = 0; k < r->steps; k++) {
        t += r->step_s[k];
        tokens += per_step * smp->len[k % smp->n];
    }
    *samples_s = t > 0 ? per_step * r->steps / t : 0;
    *tokens_s = t > 0 ? tokens / t : 0;
}
