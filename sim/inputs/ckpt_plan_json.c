/* sim/inputs/ckpt_plan_json.c: the input-aware planner's report as JSON (`mario-tui plan-inputs
 * --json`). */
#include <config.h>
#include "sim/inputs/ckpt_plan.h"

#include <cjson/cJSON.h>
#include <stdlib.h>

#include "model/config.h"
#include "model/seqlen.h"
#include "sim/plan/plan.h"
#include "util/xalloc.h"

static cJSON *plan_inputs_strategy(const struct ckpt_plan_bucket *b, int t)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "peak_memory", b->peak[t]);
    cJSON_AddNumberToObject(o, "step_time", b->step_time[t] * 1e-6);
    return o;
}

static cJSON *plan_inputs_counts(const int *k, int n)
{
    cJSON *a = cJSON_CreateArray();
    for (int j = 0; j < n; j++)
        cJSON_AddItemToArray(a, cJSON_CreateNumber(k[j]));
    return a;
}

char *ckpt_plan_report_json(const struct ckpt_plan *cp, const struct ckpt_plan_report *r,
                            const struct seqlen_sample *smp, const char *src, bool exact)
{
    const struct config *c = ckpt_plan_config(cp);
    const struct plan_geom *g = plan_geom(ckpt_plan_template(cp));
    double dp_eff = c->cluster.dp > 1 ? c->cluster.dp_efficiency : 1.0;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "model", c->model.name);
    cJSON_AddStringToObject(o, "scheme", config_scheme_name(c->scheme));
    cJSON_AddNumberToObject(o, "pp", g->devices);
    cJSON_AddNumberToObject(o, "dp", c->cluster.dp);
    cJSON_AddNumberToObject(o, "microbatches", g->mbs);
    cJSON_AddNumberToObject(o, "micro_batch_size", c->micro_batch_size);
    cJSON_AddNumberToObject(o, "memory_cap", ckpt_plan_cap(cp));
    cJSON_AddNumberToObject(o, "bucket_width", r->width);
    cJSON *l = cJSON_AddObjectToObject(o, "lengths");
    cJSON_AddStringToObject(l, "source", src);
    cJSON_AddNumberToObject(l, "batches", smp->n);
    cJSON_AddNumberToObject(l, "min", smp->min_len);
    cJSON_AddNumberToObject(l, "max", smp->max_len);
    cJSON_AddNumberToObject(l, "mean", seqlen_sample_mean(smp));
    int *n = xmalloc(sizeof(int) * (size_t)(r->stages + 1));
    for (int j = 0; j < r->stages; j++)
        n[j] = ckpt_plan_stage_layers(cp, j);
    cJSON_AddItemToObject(o, "layers_per_stage", plan_inputs_counts(n, r->stages));
    free(n);
    cJSON *bs = cJSON_AddArrayToObject(o, "buckets");
    for (int i = 0; i < r->n; i++) {
        const struct ckpt_plan_bucket *b = &r->b[i];
        cJSON *j = cJSON_CreateObject();
        cJSON_AddNumberToObject(j, "seq_length", b->s);
        cJSON_AddNumberToObject(j, "from", b->lo + 1);
        cJSON_AddNumberToObject(j, "batches", b->weight);
        cJSON *lists = cJSON_AddArrayToObject(j, "checkpointed_layers");
        for (int st = 0; st < r->stages; st++) {
            cJSON *one = cJSON_CreateArray();
            for (int q = 0; q < b->k[st]; q++)
                cJSON_AddItemToArray(one, cJSON_CreateNumber(ckpt_plan_first_layer(cp, st) + q));
            cJSON_AddItemToArray(lists, one);
        }
        cJSON_AddItemToObject(j, "checkpointed_counts", plan_inputs_counts(b->k, r->stages));
        double st = b->step_time[CKPT_PLAN_INPUT_AWARE];
        cJSON_AddNumberToObject(j, "peak_memory", b->peak[CKPT_PLAN_INPUT_AWARE]);
        cJSON_AddNumberToObject(j, "step_time", st * 1e-6);
        cJSON_AddNumberToObject(j, "throughput", st > 0 ? r->samples / (st * 1e-6) * dp_eff : 0);
        cJSON_AddNumberToObject(j, "exposed_recompute", b->exposed_rc * 1e-6);
        cJSON_AddItemToObject(j, "full_checkpointing", plan_inputs_strategy(b, CKPT_PLAN_FULL));
        cJSON_AddItemToObject(j, "static_longest", plan_inputs_strategy(b, CKPT_PLAN_STATIC));
        if (exact && b->exact_done)
            cJSON_AddNumberToObject(j, "exact_step_time", b->exact_step * 1e-6);
        else if (exact)
            cJSON_AddNullToObject(j, "exact_step_time");
        cJSON_AddItemToArray(bs, j);
    }
    cJSON_AddNumberToObject(o, "expected_throughput", r->throughput[CKPT_PLAN_INPUT_AWARE]);
    cJSON *base = cJSON_AddObjectToObject(o, "baselines");
    cJSON_AddNumberToObject(base, "full_checkpointing", r->throughput[CKPT_PLAN_FULL]);
    cJSON_AddNumberToObject(base, "static_longest", r->throughput[CKPT_PLAN_STATIC]);
    cJSON_AddItemToObject(base, "static_checkpointed_counts",
                          plan_inputs_counts(r->k_static, r->stages));
    cJSON *ch = cJSON_AddObjectToObject(o, "cache");
    cJSON_AddNumberToObject(ch, "hits", (double)r->cache.hits);
    cJSON_AddNumberToObject(ch, "misses", (double)r->cache.misses);
    cJSON_AddNumberToObject(ch, "plan_switches", (double)r->cache.switches);
    cJSON_AddNumberToObject(ch, "plan_ms_mean",
                            r->cache.misses ? r->cache.plan_ms_total / r->cache.misses : 0);
    cJSON_AddNumberToObject(ch, "plan_ms_max", r->cache.plan_ms_max);
    cJSON_AddNumberToObject(ch, "setup_ms", r->setup_ms);
    if (exact) {
        cJSON *x = cJSON_AddObjectToObject(o, "greedy_vs_exact");
        cJSON_AddNumberToObject(x, "buckets_searched", r->exact_buckets);
        cJSON_AddNumberToObject(x, "gap_max", r->gap_max);
        cJSON_AddNumberToObject(x, "gap_mean", r->gap_mean);
    }
    char *text = cJSON_Print(o);
    cJSON_Delete(o);
    return text;
}
