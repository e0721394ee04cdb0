/* traces/calibrate_json.c: a calibration's observations as JSON, saved beside its fits so a
 * calibration file shows what it was fitted from. */
#include <config.h>
#include "traces/calibrate.h"

#include <cjson/cJSON.h>

cJSON *calibrate_observations_json(const struct calibrate *cal)
{
    size_t n;
    const struct calibrate_obs *obs = calibrate_observations(cal, &n);
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; i < n; i++) {
        const struct calibrate_obs *o = &obs[i];
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "q", calibrate_qty_name(o->q));
        cJSON_AddNumberToObject(j, "run", o->run);
        cJSON_AddNumberToObject(j, "layers", o->n);
        cJSON_AddBoolToObject(j, "embed", o->embed);
        cJSON_AddBoolToObject(j, "head", o->head);
        if (o->q == CAL_PEAK) {
            cJSON_AddNumberToObject(j, "microbatches", o->mbs);
            cJSON_AddBoolToObject(j, "ckpt", o->ckpt);
        }
        cJSON_AddNumberToObject(j, "y", o->y);
        cJSON_AddItemToArray(a, j);
    }
    return a;
}
