/* sim/passes/pass_json.c: a pass pipeline's summary as JSON (`mario-tui optimize --json`). */
#include <config.h>
#include "sim/passes/pass.h"

#include <cjson/cJSON.h>

#include "model/config.h"
#include "sim/core/bound.h"
#include "sim/plan/plan.h"

static void pass_json_row(cJSON *arr, const struct pass_summary *row,
                          const struct pass_summary *base, bool unit)
{
    double ts = unit ? 1 : 1e-6;
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "name", row->name);
    cJSON_AddNumberToObject(j, "step_time", row->step_time * ts);
    cJSON_AddNumberToObject(j, "throughput", row->throughput);
    if (row->lower_bound > 0) {
        cJSON_AddNumberToObject(j, "lower_bound", row->lower_bound * ts);
        cJSON_AddNumberToObject(j, "lower_bound_gap_pct", row->gap_pct);
    }
    cJSON_AddNumberToObject(j, "peak_memory_min", row->mem_min);
    cJSON_AddNumberToObject(j, "peak_memory_max", row->mem_max);
    cJSON_AddNumberToObject(j, "speedup",
                            base->throughput > 0 ? row->throughput / base->throughput : 0);
    cJSON_AddNumberToObject(j, "changes", row->changes);
    cJSON_AddBoolToObject(j, "over_cap", row->over_cap);
    cJSON_AddNumberToObject(j, "micro_batch_size", row->micro_batch_size);
    cJSON_AddNumberToObject(j, "microbatches", row->microbatches);
    cJSON_AddItemToArray(arr, j);
}

char *pass_report_json(const struct plan *p, const struct pass_pipeline *pl,
                       const struct pass_summary *rows, const struct pass_lmbs *lm,
                       const struct bound_result *b, const struct search_exact_result *xr)
{
    const struct config *c = plan_config(p);
    bool unit = c->unit.enabled;
    cJSON *o = cJSON_CreateObject();
    plan_json_add_shape(o, p);
    cJSON_AddStringToObject(o, "time_unit", unit ? "t" : "s");
    cJSON_AddStringToObject(o, "memory_unit", unit ? "M_theta" : "bytes");
    cJSON_AddNumberToObject(o, "memory_cap", c->memory_per_device);
    int rounds = 0;
    for (int i = 0; i < pl->n; i++)
        rounds += pl->step[i].pass == PASS_PREPOSE;
    cJSON_AddNumberToObject(o, "rounds", rounds);
    /* the bound of the optimized plan: with the memory part when it is under the cap */
    const struct pass_step *fin = pass_pipeline_final(pl);
    bound_json_add(o, b, fin->sim.step_time, fin->sim.oom_device < 0, unit);
    cJSON *arr = cJSON_AddArrayToObject(o, "passes");
    int n_rows = PASS_ROW__COUNT + (pass_pipeline_row(pl, PASS_ROW_SEARCH) != NULL);
    for (int k = 0; k < n_rows; k++)
        pass_json_row(arr, &rows[k], &rows[0], unit);
    if (lm->made)
        pass_json_row(arr, &lm->row, &rows[0], unit);
    if (pl->searched) {
        const struct search_stats *st = &pl->search;
        cJSON *j = cJSON_AddObjectToObject(o, "search");
        cJSON_AddNumberToObject(j, "memory_cap", pl->search_cap);
        if (pl->offloaded > 0) /* --offload: forwards the plan offloads (OF/RL) */
            cJSON_AddNumberToObject(j, "offloaded", pl->offloaded);
        cJSON_AddBoolToObject(j, "fits", st->fits);
        cJSON_AddBoolToObject(j, "improved", st->improved);
        cJSON_AddStringToObject(j, "from", st->seed_name);
        cJSON_AddNumberToObject(j, "starts_under_cap", st->seeds);
        cJSON_AddNumberToObject(j, "evaluations", (double)st->evals);
        cJSON_AddNumberToObject(j, "moves_kept", st->improvements);
    }
    if (xr) {
        double step = pass_pipeline_final(pl)->sim.step_time, ts = unit ? 1 : 1e-6;
        cJSON *j = cJSON_AddObjectToObject(o, "exact");
        cJSON_AddBoolToObject(j, "finished", xr->finished);
        cJSON_AddNumberToObject(j, "nodes", (double)xr->nodes);
        if (xr->best > 0) {
            cJSON_AddNumberToObject(j, xr->finished ? "optimum" : "best_found", xr->best * ts);
            cJSON_AddNumberToObject(j, "search_gap_pct", 100 * (step - xr->best) / xr->best);
        }
    }
    if (lm->asked) {
        cJSON *l = cJSON_AddObjectToObject(o, "lmbs");
        cJSON_AddBoolToObject(l, "made", lm->made);
        cJSON_AddBoolToObject(l, "fits", lm->made && !lm->row.over_cap);
        cJSON_AddNumberToObject(l, "micro_batch_size", 2 * c->micro_batch_size);
        if (lm->note[0])
            cJSON_AddStringToObject(l, "note", lm->note);
    }
    char *text = cJSON_Print(o);
    cJSON_Delete(o);
    return text;
}
