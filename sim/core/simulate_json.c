/* sim/core/simulate_json.c: a simulation's figures as JSON (`mario-tui simulate --json`). */
#include <config.h>
#include "sim/core/simulate.h"

#include <cjson/cJSON.h>

#include "model/config.h"
#include "model/moe.h"
#include "model/presets.h"
#include "sim/core/bound.h"
#include "sim/plan/plan.h"

/* The communication lane: the totals and, per instruction of an F&B pair that hid some of its
 * all-to-alls, what it hid behind which partner ("F3.1 hid 1.2 ms behind BW0.0"). */
static void sim_report_json_lane(const struct plan *p, const struct sim_result *r, double ts,
                                 cJSON *o)
{
    cJSON *lane = cJSON_AddObjectToObject(o, "all_to_all");
    cJSON *pairs = cJSON_CreateArray();
    double hidden = 0, exposed = 0, hidden_bytes = 0;
    for (int d = 0; d < plan_devices(p); d++)
        for (int i = 0; i < plan_len(p, d); i++) {
            int id = plan_id(p, d, i), q = r->a2a_partner[id];
            double a = r->a2a_hidden[id] + r->a2a_exposed[id];
            double hb = a > 0 ? r->a2a_bytes[id] * r->a2a_hidden[id] / a : 0;
            hidden += r->a2a_hidden[id];
            exposed += r->a2a_exposed[id];
            hidden_bytes += hb;
            if (q < 0 || !(r->a2a_hidden[id] > 0))
                continue;
            int qd, qi;
            plan_locate_id(p, q, &qd, &qi);
            char what[32], with[32];
            plan_instr_label(p, plan_at(p, d, i), what, sizeof what);
            plan_instr_label(p, plan_at(p, qd, qi), with, sizeof with);
            cJSON *j = cJSON_CreateObject();
            cJSON_AddNumberToObject(j, "device", d);
            cJSON_AddStringToObject(j, "instruction", what);
            cJSON_AddStringToObject(j, "behind", with);
            cJSON_AddNumberToObject(j, "hidden", r->a2a_hidden[id] * ts);
            cJSON_AddNumberToObject(j, "hidden_bytes", hb);
            cJSON_AddNumberToObject(j, "exposed", r->a2a_exposed[id] * ts);
            cJSON_AddItemToArray(pairs, j);
        }
    cJSON_AddNumberToObject(lane, "hidden", hidden * ts);
    cJSON_AddNumberToObject(lane, "exposed", exposed * ts);
    cJSON_AddNumberToObject(lane, "hidden_bytes", hidden_bytes);
    cJSON_AddItemToObject(lane, "pairs", pairs);
}

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
        if (r->a2a_hidden != NULL) { /* expert all-to-alls (sim/core/overlap.h) */
            cJSON_AddNumberToObject(j, "all_to_all_hidden", dv->a2a_hidden * ts);
            cJSON_AddNumberToObject(j, "all_to_all_exposed", dv->a2a_exposed * ts);
        }
        cJSON_AddItemToArray(devs, j);
    }
    if (r->a2a_hidden != NULL)
        sim_report_json_lane(p, r, ts, o);
    char *text = cJSON_Print(o);
    cJSON_Delete(o);
    return text;
}
