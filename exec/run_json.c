/* exec/run_json.c: a run's report as JSON (`mario-tui run --json`): losses and step times,
 * measured memory per rank beside the simulator's, and the input-aware figures of a --lengths
 * run. */
#include <config.h>
#include "exec/interp.h"

#include <cjson/cJSON.h>

#include "exec/input_aware.h"
#include "model/config.h"
#include "model/seqlen.h"
#include "sim/plan/plan.h"
#include "sim/core/simulate.h"
#include "util/err.h"

static void report_inputs(cJSON *o, const struct interp_report *rep)
{
    const struct input_aware_report *ir = rep->ir;
    const struct interp_result *r = rep->r;
    double sps, tps;
    input_aware_rates(rep->plan, rep->smp, r, &sps, &tps);
    cJSON *j = cJSON_AddObjectToObject(o, "input_aware");
    cJSON_AddStringToObject(j, "lengths", rep->lengths);
    cJSON_AddStringToObject(j, "checkpointing", input_aware_strategy_name(ir->strategy));
    cJSON_AddNumberToObject(j, "batches", r->steps);
    cJSON_AddNumberToObject(j, "min_length", rep->smp->min_len);
    cJSON_AddNumberToObject(j, "max_length", rep->smp->max_len);
    cJSON_AddNumberToObject(j, "bucket_width", ir->width);
    cJSON_AddNumberToObject(j, "fit_batches", ir->fit_batches);
    cJSON_AddNumberToObject(j, "memory_cap", ir->cap);
    cJSON_AddNumberToObject(j, "plan_switches", (double)ir->switches);
    cJSON *ch = cJSON_AddObjectToObject(j, "cache");
    cJSON_AddNumberToObject(ch, "hits", (double)ir->hits);
    cJSON_AddNumberToObject(ch, "misses", (double)ir->misses);
    cJSON_AddNumberToObject(ch, "plan_ms_mean", ir->plan_ms_mean);
    cJSON_AddNumberToObject(ch, "plan_ms_max", ir->plan_ms_max);
    cJSON_AddNumberToObject(j, "fallbacks", ir->fallbacks);
    if (ir->k_static != NULL) {
        cJSON *ks = cJSON_AddArrayToObject(j, "static_checkpointed_counts");
        for (int s = 0; s < ir->stages; s++)
            cJSON_AddItemToArray(ks, cJSON_CreateNumber(ir->k_static[s]));
    }
    cJSON_AddNumberToObject(j, "samples_per_s", sps);
    cJSON_AddNumberToObject(j, "tokens_per_s", tps);
    cJSON_AddNumberToObject(j, "peak_memory", ir->peak_bytes);
    cJSON_AddNumberToObject(j, "steps_over_cap", ir->over_cap);
    cJSON_AddBoolToObject(j, "exceeded_cap", ir->over_cap > 0);
    cJSON *pr = cJSON_AddObjectToObject(j, "predictor");
    cJSON_AddNumberToObject(pr, "fitted_on", ir->fit_batches);
    cJSON_AddNumberToObject(pr, "error_max", ir->err_max);
    cJSON_AddNumberToObject(pr, "error_mean", ir->err_mean);
    cJSON *devs = cJSON_AddArrayToObject(j, "devices");
    for (int i = 0; i < ir->ranks; i++) {
        const struct input_aware_device *d = &ir->dev[i];
        cJSON *x = cJSON_CreateObject();
        cJSON_AddNumberToObject(x, "rank", d->rank);
        cJSON_AddNumberToObject(x, "device", d->dev);
        cJSON_AddNumberToObject(x, "peak_memory", d->peak_bytes);
        cJSON_AddNumberToObject(x, "steps_over_cap", d->over_cap);
        cJSON_AddNumberToObject(x, "predicted_steps", d->predicted);
        cJSON_AddNumberToObject(x, "predictor_error_max", d->err_max);
        cJSON_AddNumberToObject(x, "predictor_error_mean", d->err_mean);
        cJSON_AddNumberToObject(x, "predictor_under_max", d->under_max);
        cJSON_AddNumberToObject(x, "p2p_buffers_reserved", d->p2p_buffers);
        cJSON_AddItemToArray(devs, x);
    }
}

char *interp_report_json(const struct interp_report *rep)
{
    const struct plan *p = rep->plan;
    const struct interp_result *r = rep->r;
    const struct sim_result *sim = rep->sim;
    const struct interp_opts *io = rep->o;
    const struct config *c = plan_config(p);
    const struct plan_geom *g = plan_geom(p);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "scheme", config_scheme_name(c->scheme));
    cJSON_AddStringToObject(o, "model", c->model.name);
    cJSON_AddNumberToObject(o, "pp", g->devices);
    cJSON_AddNumberToObject(o, "dp", c->cluster.dp);
    cJSON_AddNumberToObject(o, "ranks", r->ranks);
    cJSON_AddNumberToObject(o, "microbatches", g->mbs);
    cJSON_AddNumberToObject(o, "micro_batch_size", c->micro_batch_size);
    cJSON_AddStringToObject(o, "backend", rep->backend);
    cJSON_AddNumberToObject(o, "steps", r->steps);
    cJSON_AddNumberToObject(o, "iterations", interp_plan_iterations(p));
    cJSON_AddNumberToObject(o, "update_interval",
                            config_scheme_async(c->scheme) ? c->update_interval : 1);
    cJSON_AddNumberToObject(o, "lr", io->lr);
    if (io->lr_warmup > 0)
        cJSON_AddNumberToObject(o, "lr_reschedule", io->lr_warmup);
    else
        cJSON_AddNullToObject(o, "lr_reschedule");
    if (io->correction_decay > 0)
        cJSON_AddNumberToObject(o, "discrepancy_correction", io->correction_decay);
    else
        cJSON_AddNullToObject(o, "discrepancy_correction");
    if (sim) {
        cJSON *stale = cJSON_AddArrayToObject(o, "simulated_staleness");
        for (int s = 0; s < sim->stages; s++)
            cJSON_AddItemToArray(stale, cJSON_CreateNumber(sim->staleness[s]));
    }
    cJSON_AddStringToObject(o, "time_unit", "s");
    cJSON_AddStringToObject(o, "memory_unit", "bytes");
    cJSON *loss = cJSON_AddArrayToObject(o, "loss");
    cJSON *times = cJSON_AddArrayToObject(o, "step_times");
    for (int k = 0; k < r->steps; k++) {
        cJSON_AddItemToArray(loss, cJSON_CreateNumber(r->loss[k]));
        cJSON_AddItemToArray(times, cJSON_CreateNumber(r->step_s[k]));
    }
    cJSON_AddNumberToObject(o, "step_time", interp_mean_step(r));
    if (sim)
        cJSON_AddNumberToObject(o, "simulated_step_time", sim->step_time * 1e-6);
    cJSON *peak = cJSON_AddArrayToObject(o, "peak_memory");
    cJSON *devs = cJSON_AddArrayToObject(o, "devices");
    for (int i = 0; i < r->ranks; i++) {
        const struct interp_device *d = &r->dev[i];
        cJSON_AddItemToArray(peak, cJSON_CreateNumber(d->peak_bytes));
        cJSON *j = cJSON_CreateObject();
        cJSON_AddNumberToObject(j, "rank", d->rank);
        cJSON_AddNumberToObject(j, "device", d->dev);
        cJSON_AddNumberToObject(j, "replica", d->dp_rank);
        cJSON_AddNumberToObject(j, "static_memory", d->static_bytes);
        cJSON_AddNumberToObject(j, "peak_memory", d->peak_bytes);
        cJSON_AddNumberToObject(j, "peak_activation_memory", d->peak_act_bytes);
        cJSON_AddNumberToObject(j, "stashed_weight_memory", d->peak_stash_bytes);
        cJSON_AddNumberToObject(j, "stashed_versions", d->max_stashed);
        cJSON_AddNumberToObject(j, "correction_memory", d->correction_bytes);
        cJSON_AddNumberToObject(j, "peak_host_memory", d->peak_host_bytes);
        if (plan_config(rep->plan)->model.moe.num_experts > 0) {
            /* the run's token all-to-alls, measured, beside the simulation's for as many
             * steps (interp_a2a_simulated) */
            cJSON_AddNumberToObject(j, "a2a_time", d->a2a_s);
            cJSON_AddNumberToObject(j, "a2a_bytes", d->a2a_bytes);
            cJSON_AddNumberToObject(j, "a2a_exchanges", (double)d->a2a_calls);
            double us = 0, bytes = 0;
            struct mt_err ae = {0};
            if (interp_a2a_simulated(rep->plan, d->dev, &us, &bytes, &ae) == MT_OK) {
                cJSON_AddNumberToObject(j, "simulated_a2a_time", us * 1e-6 * r->steps);
                cJSON_AddNumberToObject(j, "simulated_a2a_bytes", bytes * r->steps);
            }
        }
        if (sim) {
            cJSON_AddNumberToObject(j, "simulated_peak_activation_memory",
                                    sim->dev[d->dev].peak_dynamic);
            cJSON_AddNumberToObject(j, "simulated_static_memory", sim->dev[d->dev].static_mem);
            cJSON_AddNumberToObject(j, "simulated_stashed_weight_memory",
                                    sim->dev[d->dev].peak_stash);
            cJSON_AddNumberToObject(j, "simulated_stashed_versions", sim->dev[d->dev].max_stashed);
            cJSON_AddNumberToObject(j, "simulated_host_memory", sim->dev[d->dev].host_peak);
        }
        cJSON_AddItemToArray(devs, j);
    }
    if (rep->ir)
        report_inputs(o, rep);
    if (rep->trace)
        cJSON_AddStringToObject(o, "trace", rep->trace);
    else
        cJSON_AddNullToObject(o, "trace");
    if (rep->error)
        cJSON_AddStringToObject(o, "error", rep->error);
    else
        cJSON_AddNullToObject(o, "error");
    char *text = cJSON_Print(o);
    cJSON_Delete(o);
    return text;
}
