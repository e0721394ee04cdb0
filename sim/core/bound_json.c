/* sim/core/bound_json.c: the lower bound (sim/core/bound.h) in a JSON report, beside a plan's step time:
 * "lower_bound", "lower_bound_gap_pct", "optimal" (the step is at the bound, under the cap) and
 * the parts in "bound". */
#include <config.h>
#include "sim/core/bound.h"

#include <cjson/cJSON.h>
#include <math.h>

void bound_json_add(struct cJSON *o, const struct bound_result *b, double step, bool under_cap,
                    bool unit)
{
    if (b == NULL) {
        cJSON_AddNullToObject(o, "lower_bound");
        return;
    }
    double ts = unit ? 1 : 1e-6; /* t, or seconds */
    double lb = bound_value(b, under_cap);
    cJSON_AddNumberToObject(o, "lower_bound", lb * ts);
    cJSON_AddNumberToObject(o, "lower_bound_gap_pct", bound_gap_pct(step, lb));
    cJSON_AddBoolToObject(o, "optimal", bound_optimal(b, step, under_cap));
    cJSON *j = cJSON_AddObjectToObject(o, "bound");
    cJSON_AddStringToObject(j, "binding", bound_kind_name(bound_binding(b, under_cap)));
    cJSON_AddNumberToObject(j, "critical_path", b->critical_path * ts);
    cJSON_AddNumberToObject(j, "device", b->device * ts);
    cJSON_AddNumberToObject(j, "device_at", b->device_at);
    cJSON_AddNumberToObject(j, "work", b->work * ts);
    if (isinf(b->memory))
        cJSON_AddNullToObject(j, "memory");
    else
        cJSON_AddNumberToObject(j, "memory", b->memory * ts);
    cJSON_AddNumberToObject(j, "memory_at", b->memory_at);
    cJSON_AddNumberToObject(j, "forced_recompute", b->forced_rc * ts);
    cJSON_AddBoolToObject(j, "cap_infeasible", b->cap_infeasible);
    cJSON_AddBoolToObject(j, "memory_applies", under_cap);
}
