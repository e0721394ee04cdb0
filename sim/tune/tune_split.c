/* sim/tune/tune_split.c: the layer split by dynamic programming over contiguous ranges.
 *
 * Stage s holding layers [k, j) takes T(s, k, j) = sum of layer_us[k..j) (+ embed_us when
 * s = 0, + head_us when s = S - 1) and may hold them when j - k >= min_layers and its bytes fit
 * the cap. With B(s, j) the best slowest stage of stages 0 .. s-1 holding layers [0, j):
 *   B(0, 0) = 0,  B(s, j) = min over k of max(B(s-1, k), T(s-1, k, j)),
 * and B(S, L) is the answer: AdaPipe's partitioning (Sun et al., ASPLOS'24) balances the
 * pipeline's stages this way, each stage's memory checked with its own figure (a stage's peak
 * depends on where it sits: 1F1B keeps pp - s micro-batches in flight). A second pass over the
 * same ranges, each stage now bounded by B(S, L), takes the split with the least sum of T^2,
 * so that of the many splits a uniform model has (30 layers on 4 stages: any with no stage
 * over 8) the one returned is the most even, and the same on every run. Both passes are
 * O(S L^2) in time and bytes() calls, O(S L) in memory; T comes from one prefix sum, so the
 * two passes compare bit-equal figures. */
#include <config.h>
#include "sim/tune/tune_split.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "model/config.h"
#include "model/cost.h"
#include "model/moe.h"
#include "model/stage_split.h"
#include "util/err.h"
#include "util/xalloc.h"

struct split_dp {
    const struct tune_split_problem *p;
    double *pre; /* [L + 1] prefix sums of layer_us */
};

static double split_time(const struct split_dp *d, int s, int k, int j)
{
    const struct tune_split_problem *p = d->p;
    double t = d->pre[j] - d->pre[k];
    if (s == 0)
        t += p->embed_us;
    if (s == p->num_stages - 1)
        t += p->head_us;
    return t;
}

static bool split_fits(const struct split_dp *d, int s, int k, int j)
{
    const struct tune_split_problem *p = d->p;
    if (j - k < p->min_layers)
        return false;
    return p->bytes == NULL || !(p->cap_bytes > 0) || p->bytes(p->ctx, s, k, j - k) <= p->cap_bytes;
}

int tune_split_balance(const struct tune_split_problem *p, int *layers_out, double *slowest_us,
                       struct mt_err *e)
{
    int L = p->num_layers, S = p->num_stages;
    if (L < 0 || L > TUNE_SPLIT_MAX_LAYERS || S < 1 || S > TUNE_SPLIT_MAX_STAGES)
        return err_set(e, MT_EINVAL,
                       "split search: %d layers over %d stages (up to %d layers, %d stages)", L, S,
                       TUNE_SPLIT_MAX_LAYERS, TUNE_SPLIT_MAX_STAGES);
    if (p->min_layers < 0 || (long)p->min_layers * S > L)
        return err_set(e, MT_EINVAL, "split search: %d stages of at least %d layers need %ld",
                       S, p->min_layers, (long)p->min_layers * S);
    if (!(isfinite(p->embed_us) && p->embed_us >= 0 && isfinite(p->head_us) && p->head_us >= 0))
        return err_set(e, MT_EINVAL, "split search: the ends' times must be finite and >= 0");
    struct split_dp d = {.p = p, .pre = xcalloc((size_t)L + 1, sizeof(double))};
    for (int i = 0; i < L; i++) {
        if (!(isfinite(p->layer_us[i]) && p->layer_us[i] >= 0)) {
            free(d.pre);
            return err_set(e, MT_EINVAL, "split search: layer %d's time %g", i, p->layer_us[i]);
        }
        d.pre[i + 1] = d.pre[i] + p->layer_us[i];
    }
    size_t cells = (size_t)(S + 1) * (size_t)(L + 1);
    double *best = xmalloc(cells * sizeof *best); /* B(s, j); INFINITY = no split */
    int *from = xmalloc(cells * sizeof *from);    /* the k of the second pass's choice */
#define AT(s, j) ((size_t)(s) * (size_t)(L + 1) + (size_t)(j))
    for (size_t c = 0; c < cells; c++)
        best[c] = INFINITY;
    best[AT(0, 0)] = 0;
    for (int s = 1; s <= S; s++)
        for (int j = 0; j <= L; j++)
            for (int k = 0; k <= j; k++) {
                double prev = best[AT(s - 1, k)];
                if (prev == INFINITY || !split_fits(&d, s - 1, k, j))
                    continue;
                double t = split_time(&d, s - 1, k, j), m = prev > t ? prev : t;
                if (m < best[AT(s, j)])
                    best[AT(s, j)] = m;
            }
    double bound = best[AT(S, L)];
    int rc = MT_OK;
    if (bound == INFINITY) {
        rc = err_set(e, MT_EINFEASIBLE,
                     "split search: no split of %d layers over %d stages fits the cap of %.4g GiB",
                     L, S, p->cap_bytes / 1073741824.0);
        goto done;
    }
    /* the second pass: least sum of squares with no stage over the bound (best reused) */
    for (size_t c = 0; c < cells; c++)
        best[c] = INFINITY;
    best[AT(0, 0)] = 0;
    for (int s = 1; s <= S; s++)
        for (int j = 0; j <= L; j++)
            for (int k = j; k >= 0; k--) { /* ties: the latest k, layers on earlier stages */
                double prev = best[AT(s - 1, k)];
                if (prev == INFINITY || !split_fits(&d, s - 1, k, j))
                    continue;
                double t = split_time(&d, s - 1, k, j);
                if (t > bound)
                    continue;
                if (prev + t * t < best[AT(s, j)]) {
                    best[AT(s, j)] = prev + t * t;
                    from[AT(s, j)] = k;
                }
            }
    for (int s = S, j = L; s >= 1; s--) {
        int k = from[AT(s, j)];
        layers_out[s - 1] = j - k;
        j = k;
    }
    *slowest_us = bound;
done:
#undef AT
    free(best);
    free(from);
    free(d.pre);
    return rc;
}

int tune_split_layout(const int *layers, int num_stages, char *buf, size_t n, struct mt_err *e)
{
    if (num_stages < 1 || num_stages > TUNE_SPLIT_MAX_STAGES)
        return err_set(e, MT_EINVAL, "split layout: %d stages", num_stages);
    bool embed[TUNE_SPLIT_MAX_STAGES] = {false}, loss[TUNE_SPLIT_MAX_STAGES] = {false};
    embed[0] = true;
    loss[num_stages - 1] = true;
    return pp_layout_write(num_stages, layers, embed, loss, buf, n, e);
}

/* One figure of a stage, linear in its blocks: per block, and what the embedding's stage and the
 * head's add over a stage of blocks alone (probe stages: E + 0, 1, 2, L - 3 + L). */
struct split_line {
    double per_layer, embed, head, base;
};

static struct split_line split_line_of(const double f[4], int L)
{
    struct split_line s;
    s.per_layer = f[2] - f[1];
    s.base = f[1] - s.per_layer; /* the per-instruction terms every stage pays */
    s.embed = fmax(0, f[0] - s.base);
    s.head = fmax(0, f[3] - s.base - (L - 3) * s.per_layer);
    return s;
}

struct split_mem {
    struct split_line act, stat;
    int pp, microbatches;
    bool gpipe;
};

static double split_stage_bytes(void *ctx, int stage, int first, int n)
{
    const struct split_mem *m = ctx;
    (void)first;
    int last = m->pp - 1;
    double act = n * m->act.per_layer + m->act.base, stat = n * m->stat.per_layer + m->stat.base;
    if (stage == 0)
        act += m->act.embed, stat += m->stat.embed;
    if (stage == last)
        act += m->act.head, stat += m->stat.head;
    int inflight = m->gpipe ? m->microbatches : m->pp - stage;
    if (inflight > m->microbatches)
        inflight = m->microbatches;
    return stat + inflight * act;
}

int tune_split_propose(const struct config *c, int num_stages, bool check_memory, char *buf,
                       size_t n, bool *changed, struct mt_err *e)
{
    int L = c->model.num_layers;
    *changed = false;
    if (c->unit.enabled || c->profile.enabled)
        return err_set(e, MT_EUNSUPPORTED, "split search: %s does not follow the layers a "
                       "stage holds", c->unit.enabled ? "a unit-cost config" : "a calibration");
    if (stage_split_is_custom(c))
        return err_set(e, MT_EUNSUPPORTED, "split search: the config already names its split");
    if (moe_enabled(&c->model))
        return err_set(e, MT_EUNSUPPORTED,
                       "split search: a mixture of experts' blocks differ (dense and MoE): not "
                       "searched yet");
    if (L < 4 || num_stages < 2 || num_stages > L)
        return err_set(e, MT_EUNSUPPORTED, "split search: %d layers over %d stages", L,
                       num_stages);
    struct config probe = *c;
    if (L > 3)
        snprintf(probe.pipeline_layout, sizeof probe.pipeline_layout, "E|t|t*2|t*%dL", L - 3);
    struct cost_model cm;
    TRY(cost_model_build(&probe, 4, 1, c->cluster.dp > 0 ? c->cluster.dp : 1, &cm, e));
    double t[4], act[4], stat[4];
    for (int i = 0; i < 4; i++) {
        t[i] = cm.stage[i].fw + cm.stage[i].bw;
        act[i] = cm.stage[i].act;
        stat[i] = cm.stage[i].static_bytes;
    }
    cost_model_fini(&cm);
    struct split_line time = split_line_of(t, L);
    struct split_mem mem = {.act = split_line_of(act, L), .stat = split_line_of(stat, L),
                            .pp = num_stages, .microbatches = config_microbatches(c),
                            .gpipe = c->scheme == SCHEME_GPIPE};
    double *layer_us = xcalloc((size_t)L, sizeof *layer_us);
    for (int i = 0; i < L; i++)
        layer_us[i] = time.per_layer;
    struct tune_split_problem p = {.num_layers = L, .num_stages = num_stages,
                                   .layer_us = layer_us, .embed_us = time.embed,
                                   .head_us = time.head, .min_layers = 1};
    if (check_memory && config_mem_cap(c) > 0) {
        p.bytes = split_stage_bytes;
        p.ctx = &mem;
        p.cap_bytes = config_mem_cap(c);
    }
    int *layers = xcalloc((size_t)num_stages, sizeof *layers);
    int *today = xcalloc((size_t)num_stages, sizeof *today);
    bool *ends = xcalloc(2 * (size_t)num_stages, sizeof *ends);
    double slowest;
    int rc = tune_split_balance(&p, layers, &slowest, e);
    if (rc == MT_OK)
        rc = stage_split_layers(c, num_stages, today, ends, ends + num_stages, e);
    if (rc == MT_OK)
        rc = tune_split_layout(layers, num_stages, buf, n, e);
    if (rc == MT_OK)
        for (int s = 0; s < num_stages; s++)
            *changed |= layers[s] != today[s];
    free(layer_us);
    free(layers);
    free(today);
    free(ends);
    return rc;
}
