/* sim/inputs/ckpt_cache.c: the plan cache by length bucket (Mimose's, sim/inputs/ckpt_plan.h) and the
 * report over a lengths sample: expected throughput beside full checkpointing and one static
 * plan for the longest batch. */
#include <config.h>
#include "sim/inputs/ckpt_plan_internal.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model/config.h"
#include "model/seqlen.h"
#include "util/err.h"
#include "util/xalloc.h"

/* ---------------------------------------------------------------------------------------
 * The cache
 * ------------------------------------------------------------------------------------- */

struct ckpt_plan_cache {
    const struct ckpt_plan *cp;
    int width, max_len, nbuckets;
    enum ckpt_plan_algo algo;
    struct ckpt_plan_entry **entry; /* [nbuckets + 1], by bucket */
    struct ckpt_plan_stats stats;
    const struct ckpt_plan_entry *last; /* the previous get's, for switches */
};

/* Counts a switch when en's choice differs from the previous get's. */
static void cp_cache_note(struct ckpt_plan_cache *pc, const struct ckpt_plan_entry *en)
{
    if (pc->last != NULL && pc->last != en &&
        memcmp(pc->last->k, en->k, (size_t)pc->cp->stages * sizeof(int)) != 0)
        pc->stats.switches++;
    pc->last = en;
}

static double cp_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

struct ckpt_plan_cache *ckpt_plan_cache_new(const struct ckpt_plan *cp, int width, int max_len,
                                            enum ckpt_plan_algo algo)
{
    struct ckpt_plan_cache *pc = xcalloc(1, sizeof *pc);
    pc->cp = cp;
    pc->width = width < 1 ? 1 : width;
    pc->max_len = max_len < 1 ? 1 : max_len;
    pc->algo = algo;
    pc->nbuckets = seqlen_bucket(pc->max_len, pc->width);
    pc->entry = xcalloc((size_t)pc->nbuckets + 1, sizeof *pc->entry);
    return pc;
}

void ckpt_plan_cache_free(struct ckpt_plan_cache *pc)
{
    if (pc == NULL)
        return;
    for (int b = 0; b <= pc->nbuckets; b++)
        if (pc->entry[b] != NULL) {
            free(pc->entry[b]->k);
            free(pc->entry[b]);
        }
    free(pc->entry);
    free(pc);
}

int ckpt_plan_cache_get(struct ckpt_plan_cache *pc, int s, const struct ckpt_plan_entry **out,
                        struct mt_err *e)
{
    *out = NULL;
    if (s < 1 || s > pc->max_len)
        return err_set(e, MT_EINVAL,
                       "a batch of %d tokens: the plans cover 1 to %d tokens (the longest length "
                       "the config allows)",
                       s, pc->max_len);
    int b = seqlen_bucket(s, pc->width);
    if (pc->entry[b] != NULL) {
        pc->stats.hits++;
        *out = pc->entry[b];
        cp_cache_note(pc, *out);
        return MT_OK;
    }
    double t0 = cp_now_ms();
    struct ckpt_plan_entry *en = xcalloc(1, sizeof *en);
    en->bucket = b;
    en->s = seqlen_bucket_len(b, pc->width, pc->max_len);
    en->k = xmalloc((size_t)pc->cp->stages * sizeof(int));
    struct ckpt_plan_solution sol;
    int rc = ckpt_plan_solve(pc->cp, en->s, pc->algo, en->k, &sol, e);
    if (rc != MT_OK) {
        free(en->k);
        free(en);
        return rc;
    }
    en->peak_bytes = sol.peak_bytes;
    en->peak_device = sol.peak_device;
    pc->entry[b] = en;
    double dt = cp_now_ms() - t0;
    pc->stats.misses++;
    pc->stats.plan_ms_total += dt;
    if (dt > pc->stats.plan_ms_max)
        pc->stats.plan_ms_max = dt;
    cp_cache_note(pc, en);
    *out = en;
    return MT_OK;
}

const struct ckpt_plan_stats *ckpt_plan_cache_stats(const struct ckpt_plan_cache *pc)
{
    return &pc->stats;
}

/* ---------------------------------------------------------------------------------------
 * The report
 * ------------------------------------------------------------------------------------- */

void ckpt_plan_report_fini(struct ckpt_plan_report *r)
{
    if (r == NULL)
        return;
    for (int i = 0; i < r->n; i++)
        free(r->b[i].k);
    free(r->b);
    free(r->k_static);
    free(r->k_full);
    memset(r, 0, sizeof *r);
}

int ckpt_plan_report_build(const struct ckpt_plan *cp, const struct seqlen_sample *lengths,
                           int width, bool exact, struct ckpt_plan_report *out, struct mt_err *e)
{
    memset(out, 0, sizeof *out);
    if (lengths->n < 1)
        return err_set(e, MT_EINVAL, "no lengths to plan for");
    int S = cp->stages;
    int limit = seqlen_limit(&cp->cfg);
    if (lengths->max_len > limit)
        return err_set(e, MT_EINVAL,
                       "a batch of %d tokens is beyond the model's largest position (%d)",
                       lengths->max_len, limit);
    struct ckpt_plan_report r = {0};
    r.stages = S;
    r.width = width < 1 ? 1 : width;
    int max_len = lengths->max_len;
    int nb = seqlen_bucket(max_len, r.width);
    double *w = xcalloc((size_t)nb + 1, sizeof(double));
    for (int i = 0; i < lengths->n; i++)
        w[seqlen_bucket(lengths->len[i], r.width)] += lengths->weight[i];
    for (int b = 1; b <= nb; b++)
        r.n += w[b] > 0;
    r.b = xcalloc((size_t)r.n + 1, sizeof *r.b);
    r.k_static = xmalloc((size_t)S * sizeof(int));
    r.k_full = xmalloc((size_t)S * sizeof(int));
    ckpt_plan_all(cp, r.k_full);
    int *k_none = xcalloc((size_t)S, sizeof(int));
    struct ckpt_plan_cache *pc = ckpt_plan_cache_new(cp, r.width, max_len, CKPT_PLAN_GREEDY);
    int rc = MT_OK;
    const struct ckpt_plan_entry *en;
    /* The longest batch first: its error (a cap nothing meets) is the one to report. */
    rc = ckpt_plan_cache_get(pc, max_len, &en, e);
    if (rc == MT_OK)
        memcpy(r.k_static, en->k, (size_t)S * sizeof(int));
    /* The sample in its order, as batches would arrive: hits, misses, planning time. */
    struct ckpt_plan_cache *replay = ckpt_plan_cache_new(cp, r.width, max_len, CKPT_PLAN_GREEDY);
    for (int i = 0; rc == MT_OK && i < lengths->n; i++)
        rc = ckpt_plan_cache_get(replay, lengths->len[i], &en, e);
    if (rc == MT_OK)
        r.cache = *ckpt_plan_cache_stats(replay);
    ckpt_plan_cache_free(replay);
    const struct plan_geom *g = plan_geom(cp->tmpl);
    const struct config *c = &cp->cfg;
    r.samples = (double)g->mbs * c->micro_batch_size * c->cluster.dp;
    double dp_eff = c->cluster.dp > 1 ? c->cluster.dp_efficiency : 1.0;
    double total_w = 0, time_w[CKPT_PLAN__STRATEGIES] = {0};
    double gap_sum = 0;
    int i = 0;
    for (int b = 1; rc == MT_OK && b <= nb; b++) {
        if (!(w[b] > 0))
            continue;
        struct ckpt_plan_bucket *bk = &r.b[i++];
        bk->bucket = b;
        bk->lo = (b - 1) * r.width;
        bk->s = seqlen_bucket_len(b, r.width, max_len);
        bk->weight = w[b];
        rc = ckpt_plan_cache_get(pc, bk->s, &en, e);
        if (rc != MT_OK)
            break;
        bk->k = xmalloc((size_t)S * sizeof(int));
        memcpy(bk->k, en->k, (size_t)S * sizeof(int));
        struct cost_model cost;
        rc = ckpt_plan_costs(cp, bk->s, &cost, e);
        if (rc != MT_OK)
            break;
        const int *ks[CKPT_PLAN__STRATEGIES] = {r.k_full, r.k_static, bk->k};
        double *peak = xmalloc((size_t)cp->devices * sizeof(double));
        for (int t = 0; rc == MT_OK && t < CKPT_PLAN__STRATEGIES; t++) {
            ckpt_plan_peaks(cp, &cost, ks[t], peak);
            for (int d = 0; d < cp->devices; d++)
                if (peak[d] > bk->peak[t])
                    bk->peak[t] = peak[d];
            rc = cp_simulate_cost(cp, bk->s, ks[t], &cost, &bk->step_time[t], e);
            time_w[t] += bk->weight * bk->step_time[t];
        }
        double none = 0;
        if (rc == MT_OK)
            rc = cp_simulate_cost(cp, bk->s, k_none, &cost, &none, e);
        bk->exposed_rc = bk->step_time[CKPT_PLAN_INPUT_AWARE] - none;
        free(peak);
        cost_model_fini(&cost);
        total_w += bk->weight;
        if (rc == MT_OK && exact) {
            int *kx = xmalloc((size_t)S * sizeof(int));
            struct ckpt_plan_solution sol;
            struct mt_err xe = {0};
            int xr = ckpt_plan_solve(cp, bk->s, CKPT_PLAN_EXACT, kx, &sol, &xe);
            if (xr == MT_OK) {
                bk->exact_done = true;
                bk->exact_step = sol.step_time;
                double gap = sol.step_time > 0
                                 ? bk->step_time[CKPT_PLAN_INPUT_AWARE] / sol.step_time - 1
                                 : 0;
                gap_sum += gap;
                if (gap > r.gap_max)
                    r.gap_max = gap;
                r.exact_buckets++;
            } else if (xr != MT_EUNSUPPORTED) {
                rc = err_set(e, xr, "%s", xe.msg);
            }
            free(kx);
        }
    }
    if (rc == MT_OK) {
        for (int t = 0; t < CKPT_PLAN__STRATEGIES; t++)
            r.throughput[t] = time_w[t] > 0 ? total_w * r.samples * dp_eff / (time_w[t] * 1e-6) : 0;
        r.gap_mean = r.exact_buckets > 0 ? gap_sum / r.exact_buckets : 0;
        *out = r;
    } else {
        r.n = i;
        ckpt_plan_report_fini(&r);
    }
    ckpt_plan_cache_free(pc);
    free(k_none);
    free(w);
    return rc;
}
