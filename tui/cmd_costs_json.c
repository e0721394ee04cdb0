/* tui/cmd_costs_json.c: `simulate --costs --json`: the rows of tui/cmd_costs.c as JSON (an
 * array of stages, each with its ops in order). */
#include <config.h>
#include "tui/cmd_costs.h"

#include <stdio.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

#include "model/cost.h"

void *cmd_costs_json_new(void)
{
    return cJSON_CreateArray();
}

void cmd_costs_json_stage(void *arr_, int i, const struct stage_cost *st,
                          const struct costs_row *rows, size_t n, double other_us)
{
    cJSON *arr = arr_;
    double total = st->fw + st->bw;
    cJSON *s = cJSON_CreateObject(), *ops = cJSON_CreateArray();
    cJSON_AddNumberToObject(s, "stage", i);
    cJSON_AddNumberToObject(s, "first_layer", st->first_layer);
    cJSON_AddNumberToObject(s, "num_layers", st->num_layers);
    cJSON_AddNumberToObject(s, "fw_us", st->fw);
    cJSON_AddNumberToObject(s, "bw_us", st->bw);
    cJSON_AddNumberToObject(s, "b_us", st->b);
    cJSON_AddNumberToObject(s, "w_us", st->w);
    cJSON_AddNumberToObject(s, "act_bytes", st->act);
    cJSON_AddNumberToObject(s, "static_bytes", st->static_bytes);
    cJSON_AddNumberToObject(s, "overhead_us", other_us);
    if (st->fsdp_fw_us + st->fsdp_bw_us > 0) {
        cJSON_AddNumberToObject(s, "fsdp_exposed_fw_us", st->fsdp_fw_us);
        cJSON_AddNumberToObject(s, "fsdp_exposed_bw_us", st->fsdp_bw_us);
    }
    for (size_t k = 0; k < n; k++) {
        const struct costs_row *r = &rows[k];
        char shape[96];
        cmd_costs_shape(r->op, shape, sizeof shape);
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "site", cmd_costs_site_name(r->op->site));
        cJSON_AddStringToObject(o, "name", r->op->name);
        cJSON_AddStringToObject(o, "kind", op_kind_name(r->op->kind));
        cJSON_AddStringToObject(o, "shape", shape);
        cJSON_AddNumberToObject(o, "count", r->count);
        cJSON_AddNumberToObject(o, "fw_flops", r->flops);
        cJSON_AddNumberToObject(o, "fw_bytes", r->bytes);
        cJSON_AddNumberToObject(o, "fw_us", r->us[PASS_FW]);
        cJSON_AddNumberToObject(o, "b_us", r->us[PASS_B]);
        cJSON_AddNumberToObject(o, "w_us", r->us[PASS_W]);
        cJSON_AddNumberToObject(o, "keep_bytes", r->keep);
        cJSON_AddNumberToObject(o, "params", r->count * r->op->params);
        double sum = r->us[PASS_FW] + r->us[PASS_B] + r->us[PASS_W];
        cJSON_AddNumberToObject(o, "share", total > 0 ? sum / total : 0);
        cJSON_AddStringToObject(o, "source", r->op->source ? r->op->source : "");
        cJSON_AddItemToArray(ops, o);
    }
    cJSON_AddItemToObject(s, "ops", ops);
    cJSON_AddItemToArray(arr, s);
}

int cmd_costs_json_print(void *arr)
{
    char *text = cJSON_Print(arr);
    int rc = text != NULL ? 0 : 1;
    if (text != NULL)
        puts(text);
    free(text);
    cJSON_Delete(arr);
    return rc;
}
