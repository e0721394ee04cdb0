/* model/presets_json.c: every model preset as JSON (`mario-tui models --json`): its shape, its
 * parameter count as the cost model counts it (model/cost.h, tp = 1) and its source; every
 * device preset's figures. */
#include <config.h>
#include "model/presets.h"

#include <cjson/cJSON.h>
#include <stdlib.h>

#include "model/config.h"
#include "model/cost.h"
#include "model/moe.h"

double presets_config_params(const struct config *c)
{
    if (moe_enabled(&c->model) || mla_enabled(&c->model)) { /* two kinds of block (model/moe.h) */
        struct moe_counts k;
        moe_model_counts(&c->model, &k);
        return k.total;
    }
    struct config whole = *c;
    whole.cluster.tp = 1; /* the whole model, not a rank's share */
    whole.vocab_divisible_by = 1; /* the model card's count: the vocabulary as published, not
                                   * padded as Megatron pads it for its kernels */
    return cost_stage_params(&whole, c->model.num_layers, true, true);
}

double presets_model_params(const struct model_spec *m)
{
    if (moe_enabled(m) || mla_enabled(m)) { /* blocks of two kinds (model/moe.h) */
        struct moe_counts k;
        moe_model_counts(m, &k);
        return k.total;
    }
    struct config c;
    config_default(&c);
    c.model = *m;
    return presets_config_params(&c);
}

double presets_model_active_params(const struct model_spec *m)
{
    if (!moe_enabled(m))
        return presets_model_params(m);
    struct moe_counts k;
    moe_model_counts(m, &k);
    return k.active;
}

static void presets_devices_add(cJSON *o)
{
    cJSON *arr = o != NULL ? cJSON_AddArrayToObject(o, "devices") : NULL;
    const char *const *names = presets_device_names();
    for (int i = 0; arr != NULL && names[i] != NULL; i++) {
        struct device_spec d;
        if (presets_device(names[i], &d, NULL) != 0)
            continue;
        cJSON *j = cJSON_CreateObject();
        if (j == NULL)
            break;
        cJSON_AddItemToArray(arr, j);
        cJSON_AddStringToObject(j, "name", d.name);
        cJSON_AddNumberToObject(j, "bf16_peak_flops", d.peak_flops);
        cJSON_AddNumberToObject(j, "fp8_peak_flops", d.fp8_peak_flops);
        cJSON_AddNumberToObject(j, "memory_bytes", d.mem_bytes);
        cJSON_AddNumberToObject(j, "hbm_gbps", d.hbm_gbps);
        cJSON_AddNumberToObject(j, "nvlink_gbps", d.nvlink_gbps);
        cJSON_AddNumberToObject(j, "nvlink_busbw_gbps", d.nvlink_busbw_gbps);
        cJSON_AddNumberToObject(j, "network_gbps", d.net_gbps);
        cJSON_AddNumberToObject(j, "gpus_per_node", d.gpus_per_node);
        cJSON_AddNumberToObject(j, "host_gbps", d.host_gbps);
        cJSON_AddNumberToObject(j, "gemm_efficiency", d.gemm_eff);
        cJSON_AddNumberToObject(j, "gemm_efficiency_fp8", d.gemm_eff_fp8);
        cJSON_AddNumberToObject(j, "attention_efficiency_fw", d.attn_eff_fw);
        cJSON_AddNumberToObject(j, "attention_efficiency_bw", d.attn_eff_bw);
        if (d.attn_fa2_eff_fw > 0) {
            cJSON_AddNumberToObject(j, "attention_fa2_efficiency_fw", d.attn_fa2_eff_fw);
            cJSON_AddNumberToObject(j, "attention_fa2_efficiency_bw", d.attn_fa2_eff_bw);
        }
    }
}

/* One model's entry: its shape, its family's parts, its whole parameter count. */
static cJSON *presets_entry(const struct config *c, const char *source)
{
    const struct model_spec *m = &c->model;
    static const char *const mlp[] = {"", "gelu", "swiglu", "geglu"};
    static const char *const norm[] = {"", "layernorm", "rmsnorm"};
    static const char *const bias[] = {"", "none", "qkv", "all"};
    static const char *const qk[] = {"none", "head", "whole"};
    char display[96];
    cJSON *j = cJSON_CreateObject();
    if (j == NULL)
        return NULL;
    cJSON_AddStringToObject(j, "name", m->name);
    cJSON_AddStringToObject(j, "display_name", presets_model_display(m, display, sizeof display));
    cJSON_AddStringToObject(j, "type", config_arch_name(m->arch));
    cJSON_AddNumberToObject(j, "hidden_size", m->hidden_size);
    cJSON_AddNumberToObject(j, "num_layers", m->num_layers);
    cJSON_AddNumberToObject(j, "num_attention_heads", m->num_attention_heads);
    cJSON_AddNumberToObject(j, "num_key_value_heads", config_kv_heads(m));
    cJSON_AddNumberToObject(j, "head_dim", config_head_dim(m));
    cJSON_AddNumberToObject(j, "ffn_hidden_size", m->ffn_hidden_size);
    cJSON_AddStringToObject(j, "mlp", mlp[config_mlp(m)]);
    cJSON_AddStringToObject(j, "norm", norm[config_norm(m)]);
    cJSON_AddStringToObject(j, "bias", bias[config_bias(m)]);
    cJSON_AddBoolToObject(j, "tie_embeddings", config_tied_embeddings(m));
    cJSON_AddStringToObject(j, "qk_norm", qk[m->qk_norm <= QK_NORM_WHOLE ? m->qk_norm : 0]);
    cJSON_AddNumberToObject(j, "seq_length", m->seq_length);
    cJSON_AddNumberToObject(j, "vocab_size", m->vocab_size);
    double params = presets_config_params(c);
    cJSON_AddNumberToObject(j, "parameters", params); /* the name of earlier releases */
    cJSON_AddNumberToObject(j, "model_parameters", params);
    cJSON_AddNumberToObject(j, "active_parameters", presets_model_active_params(m));
    if (moe_enabled(m)) {
        struct moe_counts k;
        moe_model_counts(m, &k);
        cJSON_AddNumberToObject(j, "num_experts", m->moe.num_experts);
        cJSON_AddNumberToObject(j, "router_topk", m->moe.router_topk);
        if (m->moe.mtp_layers > 0)
            cJSON_AddNumberToObject(j, "mtp_parameters", k.mtp);
    }
    cJSON_AddStringToObject(j, "attention", config_attention_name(config_attention(c)));
    cJSON_AddStringToObject(j, "source", source);
    return j;
}

char *presets_models_json(const struct config *given)
{
    cJSON *o = cJSON_CreateObject();
    cJSON *arr = o != NULL ? cJSON_AddArrayToObject(o, "models") : NULL;
    const char *const *names = presets_model_names();
    if (given != NULL && arr != NULL) {
        cJSON *j = presets_entry(given, given->source);
        if (j != NULL)
            cJSON_AddItemToArray(arr, j);
    }
    for (int i = 0; given == NULL && arr != NULL && names[i] != NULL; i++) {
        struct config c;
        config_default(&c);
        if (presets_model(names[i], &c.model, NULL) != 0)
            continue;
        cJSON *j = presets_entry(&c, presets_model_source(c.model.name));
        if (j == NULL)
            break;
        cJSON_AddItemToArray(arr, j);
    }
    if (given == NULL) /* the whole listing: the device presets too */
        presets_devices_add(o);
    char *text = o != NULL ? cJSON_Print(o) : NULL;
    cJSON_Delete(o);
    return text;
}

