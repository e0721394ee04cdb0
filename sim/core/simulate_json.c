/* sim/core/simulate_json.c: a simulation's figures as JSON (`mario-tui simulate --json`). */
#include <config.h>
#include "sim/core/simulate.h"

#include <cjson/cJSON.h>

#include "model/config.h"
#include "model/moe.h"
#include "model/presets.h"
#include "sim/core/bound.h"
#include "sim/plan/plan.h"

char *sim_report_json(const struct plan *p, const struct sim_result *r,
                      const struct bound_result *b)
{
    const struct config *c = plan_config(p);
    double ts = r->unit ? 1 : 1e-6; /* seconds, or t */
    cJSON *o = cJSON_CreateObject();
    plan_json_add_shape(o, p);
    if (moe_enabled(&c->model) || mla_enabled(&c->model)) { /* model/moe.h; dense: unchanged */
        cJSON_AddNumberToObject(o, "model_parameters", presets_model_params(&c->model));
        cJSON_AddNumberToObject(o, "model_active_parameters",
                                presets_model_active_params(&c->model));
        cJSON_AddNumberToObject(o, "ep", config_ep(c));
        cJSON_AddNumberToObject(o, "etp", config_etp(c));
        cJSON_AddNumberToObject(o, "expert_dp", config_expert_dp(c));
    }
    cJSON_AddNumberToObject(o, "iterations", c->iterations);
    cJSON_AddNumberToObject(o, "update_interval", c->update_interval);
    cJSON_AddStringToObject(o, "time_unit", r->unit ? "t" : "s");
    cJSON_AddStringToObject(o, "memory_unit", r->unit ? "M_theta" : "bytes");
    cJSON_AddNumberToObject(o, "step_time", r->step_time * ts);
    cJSON_AddNumberToObject(o, "throughput", r->throughput);
    bound_json_add(o, b, r->step_time, r->oom_device < 0, r->unit);
    cJSON_AddNumberToObject(o, "memory_cap", r->cap);
    if (r->oom_device >= 0)
        cJSON_AddNumberToObject(o, "oom_device", r->oom_device);
    else
        cJSON_AddNullToObject(o, "oom_device");
    cJSON *u = cJSON_AddObjectToObject(o, "utilization");
    cJSON_AddNumberToObject(u, "makespan", r->utilization);
    cJSON_AddNumberToObject(u, "steady_state", r->steady_utilization);
    cJSON *win = cJSON_AddArrayToObject(u, "steady_window");
    cJSON_AddItemToArray(win, cJSON_CreateNumber(r->steady_t0 * ts));
    cJSON_AddItemToArray(win, cJSON_CreateNumber(r->steady_t1 * ts));
    cJSON_AddItemToObject(o, "staleness", cJSON_CreateIntArray(r->staleness, r->stages));
    cJSON *devs = cJSON_AddArrayToObject(o, "devices");
    for (int d = 0; d < r->devices; d++) {
        const struct sim_device *dv = &r->dev[d];
        cJSON *j = cJSON_CreateObject();
        cJSON_AddNumberToObject(j, "device", d);
        cJSON_AddNumberToObject(j, "busy", dv->busy * ts);
        cJSON_AddNumberToObject(j, "bubble", dv->bubble * ts);
        cJSON_AddNumberToObject(j, "bubble_fraction",
                                r->step_time > 0 ? dv->bubble / r->step_time : 0);
        cJSON_AddNumberToObject(j, "static_memory", dv->static_mem);
        cJSON_AddNumberToObject(j, "peak_activation_memory", dv->peak_dynamic);
        cJSON_AddNumberToObject(j, "peak_memory", dv->peak_mem);
        cJSON_AddNumberToObject(j, "utilization", r->step_time > 0 ? dv->work / r->step_time : 0);
        cJSON_AddNumberToObject(
            j, "steady_utilization",
            r->steady_t1 > r->steady_t0 ? dv->steady_work / (r->steady_t1 - r->steady_t0) : 0);
        cJSON_AddNumberToObject(j, "stashed_weight_memory", dv->peak_stash);
        cJSON_AddNumberToObject(j, "stashed_versions", dv->max_stashed);
        if (dv->host_peak > 0) /* offload (OF/RL): written only for a plan that offloads */
            cJSON_AddNumberToObject(j, "host_memory", dv->host_peak);
        cJSON_AddItemToArray(devs, j);
    }
    char *text = cJSON_Print(o);
    cJSON_Delete(o);
    return text;
}
