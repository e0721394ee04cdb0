/* sim/tune/tune_json.c: the tuner's grid as JSON (`mario-tui tune --json`). */
#include <config.h>
#include "sim/tune/tune.h"

#include <cjson/cJSON.h>
#include <math.h>

#include "model/config.h"
#include "sim/core/bound.h"

static const char *tune_status_name(enum tune_status s)
{
    return s == TUNE_OK        ? "ok"
           : s == TUNE_OOM     ? "out of memory"
           : s == TUNE_NOT_RUN ? "not run"
           : s == TUNE_PRUNED  ? "pruned"
                               : "invalid";
}

static cJSON *tune_candidate_json(const struct tune_candidate *k)
{
    char label[48];
    tune_label(k, label, sizeof label);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "label", label);
    cJSON_AddStringToObject(o, "scheme", config_scheme_name(k->scheme));
    cJSON_AddNumberToObject(o, "pp", k->pp);
    cJSON_AddNumberToObject(o, "dp", k->dp);
    cJSON_AddNumberToObject(o, "tp", k->tp);
    if (k->cp > 1)
        cJSON_AddNumberToObject(o, "cp", k->cp);
    if (k->ep > 0) { /* a mixture of experts: its expert degrees */
        cJSON_AddNumberToObject(o, "ep", k->ep);
        cJSON_AddNumberToObject(o, "etp", k->etp);
    }
    cJSON_AddNumberToObject(o, "micro_batch_size", k->mbs);
    cJSON_AddNumberToObject(o, "chunks", k->chunks);
    cJSON_AddBoolToObject(o, "sequence_parallel", k->sp);
    cJSON_AddBoolToObject(o, "distributed_optimizer", k->distopt);
    cJSON_AddBoolToObject(o, "ckpt", k->ckpt);
    if (k->layout != NULL) /* the split search's layers (Megatron's layout string) */
        cJSON_AddStringToObject(o, "pipeline_layout", k->layout);
    if (k->search)
        cJSON_AddStringToObject(o, "checkpointing", tune_ckpt_name(k));
    cJSON_AddBoolToObject(o, "feasible", k->status == TUNE_OK);
    cJSON_AddStringToObject(o, "status", tune_status_name(k->status));
    cJSON_AddNumberToObject(o, "throughput", k->throughput);
    cJSON_AddNumberToObject(o, "step_time", k->step_time);
    /* per iteration of the global batch, all dp replicas: comparable across dp */
    cJSON_AddNumberToObject(o, "iteration_time", k->iter_time);
    if (k->lower_bound > 0 && isfinite(k->lower_bound)) { /* inf: no schedule fits the cap */
        cJSON_AddNumberToObject(o, "lower_bound", k->lower_bound);
        if (k->status != TUNE_PRUNED) /* a pruned one has the bound only, no step */
            cJSON_AddNumberToObject(o, "lower_bound_gap_pct",
                                    bound_gap_pct(k->step_time, k->lower_bound));
    }
    cJSON_AddNumberToObject(o, "peak_memory", k->peak_mem);
    if (k->status == TUNE_OOM) {
        cJSON_AddNumberToObject(o, "oom_device", k->oom_device);
        cJSON_AddNumberToObject(o, "over_bytes", k->over_bytes);
    }
    if (k->status == TUNE_INVALID || k->status == TUNE_NOT_RUN || k->status == TUNE_PRUNED)
        cJSON_AddStringToObject(o, "why", k->why);
    cJSON_AddBoolToObject(o, "pareto", k->pareto);
    return o;
}

char *tune_report_json(const struct tune_result *r)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddNumberToObject(root, "seq_length", r->seq_length);
    if (r->cancelled) /* only then, so a finished grid's text is as before */
        cJSON_AddNumberToObject(root, "cancelled_after", r->done);
    cJSON_AddItemToObject(
        root, "best", r->best >= 0 ? tune_candidate_json(&r->cand[r->best]) : cJSON_CreateNull());
    cJSON *all = cJSON_AddArrayToObject(root, "candidates");
    cJSON *front = cJSON_AddArrayToObject(root, "pareto");
    for (int i = 0; i < r->n; i++) {
        cJSON_AddItemToArray(all, tune_candidate_json(&r->cand[i]));
        if (r->cand[i].pareto) {
            char label[48];
            tune_label(&r->cand[i], label, sizeof label);
            cJSON *f = cJSON_CreateObject();
            cJSON_AddStringToObject(f, "label", label);
            cJSON_AddBoolToObject(f, "ckpt", r->cand[i].ckpt);
            if (r->cand[i].search)
                cJSON_AddStringToObject(f, "checkpointing", tune_ckpt_name(&r->cand[i]));
            cJSON_AddNumberToObject(f, "throughput", r->cand[i].throughput);
            cJSON_AddNumberToObject(f, "peak_memory", r->cand[i].peak_mem);
            cJSON_AddItemToArray(front, f);
        }
    }
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    return text;
}

char *tune_rows_json(const struct tune_candidate *rows, int n, int best)
{
    cJSON *all = cJSON_CreateArray();
    for (int i = 0; i < n; i++) {
        const struct tune_candidate *k = &rows[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "scheme", config_scheme_name(k->scheme));
        if (k->status == TUNE_INVALID) {
            cJSON_AddStringToObject(o, "error", k->why);
        } else {
            cJSON_AddNumberToObject(o, "step_time", k->step_time);
            cJSON_AddNumberToObject(o, "throughput", k->throughput);
            cJSON_AddNumberToObject(o, "peak_memory", k->peak_mem);
            if (k->lower_bound > 0 && isfinite(k->lower_bound))
                cJSON_AddNumberToObject(o, "lower_bound", k->lower_bound);
            else
                cJSON_AddNullToObject(o, "lower_bound");
            cJSON_AddBoolToObject(o, "fits", k->status == TUNE_OK);
        }
        cJSON_AddBoolToObject(o, "best", i == best);
        cJSON_AddItemToArray(all, o);
    }
    char *text = cJSON_Print(all);
    cJSON_Delete(all);
    return text;
}
