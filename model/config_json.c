/* model/config_json.c: the JSON config file. A config starts from config_default(), the
 * file's keys are applied (the paper's Listing 1 keys at the top, a `model` and a `cluster`
 * object, or a Hugging Face config.json as the model: model/config_hf_json.c), then
 * config_validate() runs. util/json.h reads the text strictly and keeps positions: every
 * error about a member points at its key; config_validate's messages, which start with a
 * JSON path, are mapped back to the key read there (a missing key: the enclosing member).
 *
 * Strictness: unknown and duplicate keys are errors (a typo must not pass silently), except
 * inside a Hugging Face config, whose many other keys are ignored. Integers must be integral
 * numbers in range; numbers must be finite; strings are never taken where numbers are due,
 * except sizes ("40G") and FLOP/s ("312T"). */
#include <config.h>
#include "model/config.h"

#include <cjson/cJSON.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "model/fp8.h"
#include "model/framework.h"
#include "model/moe.h"
#include "model/presets.h"
#include "model/seqlen.h"
#include "model/stage_split.h"
#include "util/err.h"
#include "util/json.h"
#include "util/str.h"

/* "312T", "312 TFLOPS", "1.5e14", decimal SI prefixes k M G T P E. */
static int flops_parse(const char *s, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || !isfinite(v))
        return -1;
    while (*end == ' ')
        end++;
    static const char pre[] = "kKMGTPE";
    static const double mult[] = {1e3, 1e3, 1e6, 1e9, 1e12, 1e15, 1e18};
    const char *p = *end ? strchr(pre, *end) : NULL;
    if (p != NULL) {
        v *= mult[p - pre];
        end++;
    }
    if (*end != '\0' && strcasecmp(end, "FLOPS") != 0 && strcasecmp(end, "FLOP/s") != 0)
        return -1;
    if (!isfinite(v))
        return -1;
    *out = v;
    return 0;
}

static int load_flops(struct json_doc *d, const struct json_value *m, double *out)
{
    if (cJSON_IsString(m->item)) {
        char clip[40];
        if (flops_parse(m->item->valuestring, out) != 0)
            return json_fail(d, m, "'%s' is not a FLOP/s figure (expected e.g. 312T or 3.12e14)",
                             json_clip(m->item->valuestring, clip, sizeof clip));
        return MT_OK;
    }
    double v;
    if (json_number(m->item, &v) && isfinite(v)) {
        *out = v;
        return MT_OK;
    }
    return json_type_fail(d, m, "a number of FLOP/s or a string like \"312T\"");
}

/* ---------------------------------------------------------------------------------------
 * model
 * ------------------------------------------------------------------------------------- */

static int arch_parse(const char *s, enum model_arch *out)
{
    if (strcasecmp(s, "GPT3") == 0 || strcasecmp(s, "GPT") == 0 || strcasecmp(s, "GPT-3") == 0)
        *out = ARCH_GPT3;
    else if (strcasecmp(s, "LLaMA2") == 0 || strcasecmp(s, "LLaMA") == 0 ||
             strcasecmp(s, "LLaMA-2") == 0)
        *out = ARCH_LLAMA2;
    else if (strcasecmp(s, "custom") == 0)
        *out = ARCH_CUSTOM;
    else
        return -1;
    return 0;
}

enum { M_PRESET, M_NAME, M_TYPE, M_HIDDEN, M_LAYERS, M_HEADS, M_SEQ, M_VOCAB, M_FFN, M_MAXPOS,
       M_KV, M_MLP, M_NORM, M_BIAS, M_HEAD_DIM, M_TIE, M_QK_NORM, M_MOE, M_MLA, M__COUNT };
static const char *const model_keys[M__COUNT] = {
    "preset",      "name",       "type",
    "hidden_size", "num_layers", "num_attention_heads",
    "seq_length",  "vocab_size", "ffn_hidden_size",
    "max_position_embeddings", /* read with seq_length's other forms by seqlen_from_json */
    "num_key_value_heads",
    /* the family's parts (model/config.h; default: the type's) */
    "mlp", "norm", "bias", "head_dim", "tie_embeddings", "qk_norm",
    "moe", "mla", /* model/moe.h: load_moe, load_mla */
};

/* The names of the parts' values, in their enums' order from 1 (0 is the type's default). */
static const char *const mlp_names[] = {"gelu", "swiglu", "geglu"};
static const char *const norm_names[] = {"layernorm", "rmsnorm"};
static const char *const bias_names[] = {"none", "qkv", "all"};
static const char *const qk_norm_names[] = {"none", "head", "whole"};

/* The family's parts: mlp, norm, bias, head_dim, tie_embeddings, qk_norm. */
static int load_model_parts(struct json_doc *d, const struct json_value *f, struct model_spec *s)
{
    int k;
    if (f[M_MLP].item != NULL) {
        TRY(json_enum(d, &f[M_MLP], mlp_names, 3, "gelu, swiglu or geglu", &k));
        s->mlp = (enum mlp_kind)(k + 1);
    }
    if (f[M_NORM].item != NULL) {
        TRY(json_enum(d, &f[M_NORM], norm_names, 2, "layernorm or rmsnorm", &k));
        s->norm = (enum norm_kind)(k + 1);
    }
    if (f[M_BIAS].item != NULL) {
        TRY(json_enum(d, &f[M_BIAS], bias_names, 3, "none, qkv or all", &k));
        s->bias = (enum bias_kind)(k + 1);
    }
    if (f[M_QK_NORM].item != NULL) {
        TRY(json_enum(d, &f[M_QK_NORM], qk_norm_names, 3, "none, head or whole", &k));
        s->qk_norm = (enum qk_norm_kind)k;
    }
    if (f[M_HEAD_DIM].item != NULL)
        TRY(json_int(d, &f[M_HEAD_DIM], 1, CONFIG_MAX_HEAD_DIM, &s->head_dim));
    if (f[M_TIE].item != NULL) {
        bool tied;
        TRY(json_bool(d, &f[M_TIE], &tied));
        s->tie_embeddings = tied ? TRI_YES : TRI_NO;
    }
    return MT_OK;
}

/* model.moe {...}: the experts, named after Megatron-LM's flags (--num-experts,
 * --moe-router-topk, --moe-ffn-hidden-size, --moe-shared-expert-intermediate-size,
 * --moe-layer-freq, --mtp-num-layers, --moe-expert-capacity-factor) less their moe_ prefix */
enum { MOE_E, MOE_K, MOE_FFN, MOE_SHARED, MOE_FREQ, MOE_DENSE, MOE_MTP, MOE_SKEW, MOE_CF,
       MOE_FP8, MOE_BIAS, MOE__COUNT };
static const char *const moe_keys[MOE__COUNT] = {
    "num_experts", "router_topk", "ffn_hidden_size", "shared_expert_intermediate_size",
    "layer_freq", "first_k_dense", "mtp_num_layers", "routing_skew", "capacity_factor",
    "fp8_dispatch", "router_bias",
};

static int load_moe(struct json_doc *d, const struct json_value *v, struct moe_spec *out)
{
    if (!cJSON_IsObject(v->item))
        return json_type_fail(d, v, "an object {\"num_experts\": 8, \"router_topk\": 2, ...}");
    struct json_value f[MOE__COUNT];
    TRY(json_fields(d, v, moe_keys, MOE__COUNT, f));
    struct moe_spec m = *out;
    int *ints[] = {&m.num_experts, &m.router_topk, &m.ffn_hidden_size, &m.shared_ffn,
                   &m.layer_freq, &m.first_k_dense, &m.mtp_layers};
    for (int i = MOE_E; i <= MOE_MTP; i++)
        if (f[i].item != NULL)
            TRY(json_int(d, &f[i], 0, i == MOE_E ? MOE_MAX_EXPERTS : INT_MAX, ints[i]));
    if (f[MOE_SKEW].item != NULL)
        TRY(json_double(d, &f[MOE_SKEW], &m.routing_skew));
    if (f[MOE_CF].item != NULL)
        TRY(json_double(d, &f[MOE_CF], &m.capacity_factor));
    if (f[MOE_FP8].item != NULL)
        TRY(json_bool(d, &f[MOE_FP8], &m.fp8_dispatch));
    if (f[MOE_BIAS].item != NULL)
        TRY(json_bool(d, &f[MOE_BIAS], &m.router_bias));
    *out = m;
    return MT_OK;
}

/* model.mla {...}: DeepSeek's config.json names (and Megatron's --q-lora-rank ...) */
enum { MLA_Q, MLA_KV, MLA_NOPE, MLA_ROPE, MLA_V, MLA__COUNT };
static const char *const mla_keys[MLA__COUNT] = {
    "q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim",
};

static int load_mla(struct json_doc *d, const struct json_value *v, struct mla_spec *out)
{
    if (!cJSON_IsObject(v->item))
        return json_type_fail(d, v, "an object {\"kv_lora_rank\": 512, ...}");
    struct json_value f[MLA__COUNT];
    TRY(json_fields(d, v, mla_keys, MLA__COUNT, f));
    struct mla_spec a = *out;
    int *ints[] = {&a.q_lora_rank, &a.kv_lora_rank, &a.qk_nope_head_dim, &a.qk_rope_head_dim,
                   &a.v_head_dim};
    for (int i = 0; i < MLA__COUNT; i++)
        if (f[i].item != NULL)
            TRY(json_int(d, &f[i], 0, INT_MAX, ints[i]));
    *out = a;
    return MT_OK;
}

static int load_model_fields(struct json_doc *d, const struct json_value *f,
                             struct model_spec *out)
{
    struct model_spec s = *out;
    struct mt_err pe;
    bool shaped = false;

    if (f[M_PRESET].item != NULL) {
        const char *p;
        TRY(json_string(d, &f[M_PRESET], &p));
        if (presets_model(p, &s, &pe) != MT_OK)
            return json_fail_from(d, &f[M_PRESET], &pe);
    }
    enum model_arch base_arch = s.arch;
    if (f[M_TYPE].item != NULL) {
        const char *t;
        TRY(json_string(d, &f[M_TYPE], &t));
        if (arch_parse(t, &s.arch) != 0) {
            char clip[40];
            return json_fail(d, &f[M_TYPE], "unknown type '%s' (expected GPT3, LLaMA2 or custom)",
                             json_clip(t, clip, sizeof clip));
        }
    }
    static const int idx[] = {M_HIDDEN, M_LAYERS, M_HEADS, M_SEQ, M_VOCAB, M_FFN, M_KV};
    int *dst[] = {&s.hidden_size, &s.num_layers,      &s.num_attention_heads,   &s.seq_length,
                  &s.vocab_size,  &s.ffn_hidden_size, &s.num_key_value_heads};
    for (size_t i = 0; i < 7; i++) {
        const struct json_value *v = &f[idx[i]];
        if (v->item == NULL)
            continue;
        if (idx[i] == M_SEQ && (cJSON_IsObject(v->item) || cJSON_IsString(v->item)))
            continue; /* a distribution or a lengths file: seqlen_from_json */
        TRY(json_int(d, v, 1, idx[i] == M_LAYERS ? CONFIG_MAX_LAYERS : INT_MAX, dst[i]));
        shaped = true;
    }
    /* The FFN width follows h and the architecture unless given. */
    if (f[M_FFN].item == NULL && (f[M_HIDDEN].item != NULL || s.arch != base_arch) &&
        config_ffn_default(s.arch, s.hidden_size, &s.ffn_hidden_size) != 0) {
        const struct json_value *at = f[M_HIDDEN].item != NULL ? &f[M_HIDDEN] : &f[M_TYPE];
        return json_fail(d, at, "%d too large for a default ffn_hidden_size", s.hidden_size);
    }
    if (f[M_MOE].item != NULL)
        TRY(load_moe(d, &f[M_MOE], &s.moe));
    if (f[M_MLA].item != NULL)
        TRY(load_mla(d, &f[M_MLA], &s.mla));
    if (f[M_NAME].item != NULL) {
        TRY(json_label(d, &f[M_NAME], s.name, sizeof s.name));
    } else if (f[M_PRESET].item == NULL && (shaped || f[M_TYPE].item != NULL)) {
        memset(s.name, 0, sizeof s.name);
        snprintf(s.name, sizeof s.name, "custom");
    }
    if (f[M_PRESET].item == NULL && (shaped || f[M_TYPE].item != NULL))
        s.paper_stack = false; /* a model of its own: today's stack unless the config says */
    TRY(load_model_parts(d, f, &s));
    *out = s;
    return MT_OK;
}

/* `model`: a preset name, our object, or a Hugging Face config. */
static int load_model(struct json_doc *d, const struct json_value *mm, struct config *c)
{
    struct model_spec *out = &c->model;
    struct mt_err pe;
    if (cJSON_IsString(mm->item)) {
        if (presets_model(mm->item->valuestring, out, &pe) != MT_OK)
            return json_fail_from(d, mm, &pe);
        return MT_OK;
    }
    if (!cJSON_IsObject(mm->item))
        return json_type_fail(d, mm, "a preset name or an object");
    if (config_hf_detect(mm->item))
        return config_hf_read(d, mm, mm->path, c);
    struct json_value f[M__COUNT];
    TRY(json_fields(d, mm, model_keys, M__COUNT, f));
    return load_model_fields(d, f, out);
}

/* ---------------------------------------------------------------------------------------
 * cluster
 * ------------------------------------------------------------------------------------- */

enum {
    C_DEVICE,
    C_DEVICE_NAME,
    C_PEAK,
    C_EFF,
    C_MEM,
    C_HBM,
    C_P2P,
    C_LAT,
    C_AR,
    C_DPEFF,
    C_DP,
    C_TP,
    C_EFFHALF,
    C_OP_OVERHEAD,    /* model/cost.h "Overheads" */
    C_LAYER_OVERHEAD,
    C_GPN,
    C_TPGBPS,
    C_HOSTGBPS,
    C_HOSTMEM,
    C_FRAMEWORK,   /* model/framework.h */
    C_FP8_PEAK,
    C_NET_GBPS,
    C_TP_OVERLAP,
    C_GRAD_OVERLAP,
    C_PARAM_OVERLAP,
    C_CP,          /* context parallelism (model/config_parallel.c) */
    C_CP_COMM,
    C_EP,  /* model/moe.h */
    C_ETP,
    C_FP8_RECIPE, /* model/fp8.h */
    C_FP8_FORMAT,
    C_FP8_PARAM_GATHER,
    C_ZERO, /* model/config_zero.c */
    C_DP_SHARD,
    C_RESHARD,
    C_COMPUTE_FACTOR, /* model/framework.h */
    C_KERNEL_OVERHEAD,
    C__COUNT
};
static const char *const cluster_keys[C__COUNT] = {
    "device",   "device_name",    "peak_flops",     "efficiency",    "memory", "hbm_gbps",
    "p2p_gbps", "p2p_latency_us", "allreduce_gbps", "dp_efficiency", "dp",     "tp",
    "efficiency_half_tokens", "op_overhead_us", "layer_overhead_us", "gpus_per_node", "tp_gbps",
    "host_gbps", "host_memory_per_node", "framework", "fp8_peak_flops", "network_gbps",
    "tp_comm_overlap", "overlap_grad_reduce", "overlap_param_gather",
    "cp", "cp_comm_type",
    "ep", "etp",
    "fp8_recipe", "fp8_format", "fp8_param_gather",
    "zero_stage", "dp_shard", "fsdp_reshard_after_forward",
    "compute_factor", "kernel_overhead_us",
};

/* cluster.fp8_recipe, fp8_format, fp8_param_gather (model/fp8.h) */
static int load_fp8(struct json_doc *d, const struct json_value *f, struct cluster_spec *k)
{
    struct mt_err pe;
    const char *s;
    if (f[C_FP8_RECIPE].item != NULL) {
        TRY(json_string(d, &f[C_FP8_RECIPE], &s));
        if (fp8_recipe_parse(s, &k->fp8_recipe, &pe) != MT_OK)
            return json_fail_from(d, &f[C_FP8_RECIPE], &pe);
    }
    if (f[C_FP8_FORMAT].item != NULL) {
        TRY(json_string(d, &f[C_FP8_FORMAT], &s));
        if (fp8_format_parse(s, &k->fp8_format, &pe) != MT_OK)
            return json_fail_from(d, &f[C_FP8_FORMAT], &pe);
    }
    if (f[C_FP8_PARAM_GATHER].item != NULL)
        TRY(json_bool(d, &f[C_FP8_PARAM_GATHER], &k->fp8_param_gather));
    return MT_OK;
}

/* given: CONFIG_GIVEN_TP_GBPS is added when the file sets tp_gbps (a device preset's NVLink
 * figure is the default). */
static int load_cluster(struct json_doc *d, const struct json_value *cm, struct cluster_spec *out,
                        unsigned *given)
{
    struct json_value f[C__COUNT];
    TRY(json_fields(d, cm, cluster_keys, C__COUNT, f));
    struct cluster_spec k = *out;
    struct mt_err pe;
    if (f[C_DEVICE].item != NULL) {
        const char *dev;
        TRY(json_string(d, &f[C_DEVICE], &dev));
        if (presets_device(dev, &k.device, &pe) != MT_OK)
            return json_fail_from(d, &f[C_DEVICE], &pe);
        if (!(*given & CONFIG_GIVEN_TP_GBPS))
            k.tp_gbps = k.device.nvlink_gbps;
        if (!(*given & CONFIG_GIVEN_HOST_GBPS))
            k.host_gbps = k.device.host_gbps;
        if (!(*given & CONFIG_GIVEN_GPUS_PER_NODE))
            k.gpus_per_node = k.device.gpus_per_node;
    }
    if (f[C_DEVICE_NAME].item != NULL)
        TRY(json_label(d, &f[C_DEVICE_NAME], k.device.name, sizeof k.device.name));
    if (f[C_PEAK].item != NULL)
        TRY(load_flops(d, &f[C_PEAK], &k.device.peak_flops));
    if (f[C_MEM].item != NULL)
        TRY(json_bytes(d, &f[C_MEM], &k.device.mem_bytes));
    static const int idx[] = {C_EFF,   C_HBM,         C_P2P,           C_LAT, C_AR,
                              C_DPEFF, C_EFFHALF,     C_OP_OVERHEAD,   C_LAYER_OVERHEAD};
    double *dst[] = {&k.device.efficiency, &k.device.hbm_gbps, &k.p2p_gbps,
                     &k.p2p_lat_us,        &k.ar_gbps,         &k.dp_efficiency,
                     &k.eff_half_tokens,
                     &k.device.op_overhead_us, &k.device.layer_overhead_us};
    for (size_t i = 0; i < sizeof idx / sizeof idx[0]; i++)
        if (f[idx[i]].item != NULL)
            TRY(json_double(d, &f[idx[i]], dst[i]));
    if (f[C_OP_OVERHEAD].item != NULL)
        *given |= CONFIG_GIVEN_OP_OVERHEAD;
    if (f[C_LAYER_OVERHEAD].item != NULL)
        *given |= CONFIG_GIVEN_LAYER_OVERHEAD;
    if (f[C_COMPUTE_FACTOR].item != NULL) {
        TRY(json_double(d, &f[C_COMPUTE_FACTOR], &k.compute_factor));
        *given |= CONFIG_GIVEN_COMPUTE_FACTOR;
    }
    if (f[C_KERNEL_OVERHEAD].item != NULL) {
        TRY(json_double(d, &f[C_KERNEL_OVERHEAD], &k.kernel_overhead_us));
        *given |= CONFIG_GIVEN_KERNEL_OVERHEAD;
    }
    if (f[C_FP8_PEAK].item != NULL)
        TRY(load_flops(d, &f[C_FP8_PEAK], &k.device.fp8_peak_flops));
    if (f[C_NET_GBPS].item != NULL)
        TRY(json_double(d, &f[C_NET_GBPS], &k.device.net_gbps));
    if (f[C_FRAMEWORK].item != NULL) {
        const char *fw;
        TRY(json_string(d, &f[C_FRAMEWORK], &fw));
        if (framework_parse(fw, &k.framework, &pe) != MT_OK)
            return json_fail_from(d, &f[C_FRAMEWORK], &pe);
    }
    if (f[C_TP_OVERLAP].item != NULL)
        TRY(json_bool(d, &f[C_TP_OVERLAP], &k.tp_comm_overlap));
    if (f[C_GRAD_OVERLAP].item != NULL)
        TRY(json_bool(d, &f[C_GRAD_OVERLAP], &k.overlap_grad_reduce));
    if (f[C_PARAM_OVERLAP].item != NULL)
        TRY(json_bool(d, &f[C_PARAM_OVERLAP], &k.overlap_param_gather));
    if (f[C_DP].item != NULL)
        TRY(json_int(d, &f[C_DP], 1, CONFIG_MAX_DEVICES, &k.dp));
    if (f[C_TP].item != NULL)
        TRY(json_int(d, &f[C_TP], 1, CONFIG_MAX_DEVICES, &k.tp));
    if (f[C_EP].item != NULL)
        TRY(json_int(d, &f[C_EP], 1, CONFIG_MAX_DEVICES, &k.ep));
    if (f[C_ETP].item != NULL)
        TRY(json_int(d, &f[C_ETP], 1, CONFIG_MAX_DEVICES, &k.etp));
    if (f[C_GPN].item != NULL) {
        TRY(json_int(d, &f[C_GPN], 1, CONFIG_MAX_DEVICES, &k.gpus_per_node));
        *given |= CONFIG_GIVEN_GPUS_PER_NODE;
    }
    if (f[C_TPGBPS].item != NULL) {
        TRY(json_double(d, &f[C_TPGBPS], &k.tp_gbps));
        *given |= CONFIG_GIVEN_TP_GBPS;
    }
    if (f[C_HOSTGBPS].item != NULL) {
        TRY(json_double(d, &f[C_HOSTGBPS], &k.host_gbps));
        *given |= CONFIG_GIVEN_HOST_GBPS;
    }
    if (f[C_HOSTMEM].item != NULL)
        TRY(json_bytes(d, &f[C_HOSTMEM], &k.host_mem_per_node));
    if (f[C_CP].item != NULL)
        TRY(json_int(d, &f[C_CP], 1, CONFIG_MAX_DEVICES, &k.cp));
    if (f[C_CP_COMM].item != NULL) {
        const char *mode;
        TRY(json_string(d, &f[C_CP_COMM], &mode));
        if (config_cp_comm_parse(mode, &k.cp_comm_type, &pe) != MT_OK)
            return json_fail_from(d, &f[C_CP_COMM], &pe);
    }
    TRY(load_fp8(d, f, &k));
    if (f[C_ZERO].item != NULL)
        TRY(json_int(d, &f[C_ZERO], 0, 3, &k.zero_stage));
    if (f[C_DP_SHARD].item != NULL)
        TRY(json_int(d, &f[C_DP_SHARD], 0, CONFIG_MAX_DEVICES, &k.dp_shard));
    if (f[C_RESHARD].item != NULL) {
        const char *pol;
        TRY(json_string(d, &f[C_RESHARD], &pol));
        if (config_fsdp_reshard_parse(pol, &k.reshard_after_forward, &pe) != MT_OK)
            return json_fail_from(d, &f[C_RESHARD], &pe);
    }
    *out = k;
    return MT_OK;
}

/* ---------------------------------------------------------------------------------------
 * unit_costs
 * ------------------------------------------------------------------------------------- */

int config_unit_costs_parse(const char *s, struct unit_costs *out, struct mt_err *e)
{
    static const char what[] =
        "F,B,RC, F,B,RC,W, F,B,RC,W,O or F,B,RC,W,O,A (e.g. 1,2,1 or 1,2,1,1,0.5,0.25)";
    double v[6] = {0, 0, 0, 0, 1, 0};
    const char *p = s;
    int n = 0;
    for (;;) {
        const char *end = strchr(p, ',');
        if (end == NULL)
            end = p + strlen(p);
        char tok[64];
        while (p < end && *p == ' ')
            p++;
        size_t len = (size_t)(end - p);
        while (len > 0 && p[len - 1] == ' ')
            len--;
        if (n == 6 || len == 0 || len >= sizeof tok)
            return err_set(e, MT_EINVAL, "'%s' is not %s", s, what);
        memcpy(tok, p, len);
        tok[len] = '\0';
        if (str_parse_double(tok, &v[n++], NULL) != MT_OK)
            return err_set(e, MT_EINVAL, "'%s' is not %s", s, what);
        if (*end == '\0')
            break;
        p = end + 1;
    }
    if (n < 3)
        return err_set(e, MT_EINVAL, "'%s' is not %s", s, what);
    if (!(v[0] > 0 && v[1] > 0 && v[2] >= 0))
        return err_set(e, MT_EINVAL, "F and B must be > 0 and RC >= 0 (got %g,%g,%g)", v[0], v[1],
                       v[2]);
    if (!(v[3] >= 0 && v[3] < v[1]))
        return err_set(e, MT_EINVAL,
                       "W must be in [0, B): B is the whole backward, B - W its input-gradient "
                       "part (got B = %g, W = %g)",
                       v[1], v[3]);
    if (!(v[4] > 0 && isfinite(v[4])))
        return err_set(e, MT_EINVAL,
                       "O must be > 0: the time to move one M_theta over the host link (got %g)",
                       v[4]);
    double w_eff = v[3] > 0 ? v[3] : v[1] / 2;
    if (!(v[5] >= 0 && v[5] < v[0] && v[5] <= v[1] - w_eff))
        return err_set(e, MT_EINVAL,
                       "A, the expert all-to-alls of a forward and of a backward, must be in [0, "
                       "F) and at most B - W, the input-gradient part they sit in (got F = %g, "
                       "B = %g, W = %g, A = %g)",
                       v[0], v[1], w_eff, v[5]);
    out->enabled = true;
    out->f = v[0];
    out->b = v[1];
    out->rc = v[2];
    out->w = v[3];
    out->o = v[4];
    out->a = v[5];
    return MT_OK;
}


enum { U_F, U_B, U_RC, U_W, U_O, U_A, U_ENABLED, U__COUNT };
static const char *const unit_keys[U__COUNT] = {"F", "B", "RC", "W", "O", "A", "enabled"};

/* {"F": 1, "B": 2, "RC": 1} (optionally "W": W's share of B, "enabled": false), "1,2,1", or
 * true/false. */
static int load_unit(struct json_doc *d, const struct json_value *um, struct unit_costs *out)
{
    struct unit_costs u = *out;
    if (cJSON_IsBool(um->item)) {
        out->enabled = cJSON_IsTrue(um->item);
        return MT_OK;
    }
    if (cJSON_IsString(um->item)) {
        struct mt_err pe;
        if (config_unit_costs_parse(um->item->valuestring, &u, &pe) != MT_OK)
            return json_fail_from(d, um, &pe);
        *out = u;
        return MT_OK;
    }
    if (!cJSON_IsObject(um->item))
        return json_type_fail(d, um, "an object {\"F\": 1, \"B\": 2, \"RC\": 1} or \"F,B,RC\"");
    struct json_value f[U__COUNT];
    TRY(json_fields(d, um, unit_keys, U__COUNT, f));
    double *dst[] = {&u.f, &u.b, &u.rc, &u.w, &u.o, &u.a};
    u.enabled = true;
    for (int i = 0; i < 6; i++)
        if (f[i].item != NULL)
            TRY(json_double(d, &f[i], dst[i]));
    if (f[U_ENABLED].item != NULL)
        TRY(json_bool(d, &f[U_ENABLED], &u.enabled));
    *out = u;
    return MT_OK;
}

/* ---------------------------------------------------------------------------------------
 * The top level
 * ------------------------------------------------------------------------------------- */

enum {
    T_SCHEME,
    T_GBS,
    T_MBS,
    T_NDEV,
    T_NMB,
    T_CHUNKS,
    T_MEM,
    T_BLOCK,
    T_UNIT,
    T_MODEL,
    T_CLUSTER,
    T_ITER,
    T_UPDATE,
    T_CAL,
    T_ATTN,
    T_SP,
    T_DISTOPT,
    T_BPP,
    T_RESERVE,
    T_CE_FUSION,
    T_GRAD_FP32,
    T_VOCAB_DIV,
    /* the stages' layers (model/stage_split.h) */
    T_LAYOUT,
    T_FIRST_LAYERS,
    T_LAST_LAYERS,
    T_ACCOUNT_EMB,
    T_ACCOUNT_LOSS,
    T_FIRST_LESS,
    T_LAST_LESS,
    T_OVERLAP_A2A,
    T_RECOMPUTE,
    T__COUNT
};
static const char *const top_keys[T__COUNT] = {
    "pipeline_scheme", "global_batch_size", "micro_batch_size", "num_device", "num_microbatches",
    "chunks",          "memory_per_device", "blocking_send",    "unit_costs", "model",
    "cluster",         "iterations",        "update_interval",  "calibration",
    "attention",       "sequence_parallel", "distributed_optimizer", "bytes_per_param",
    "reserve",         "cross_entropy_loss_fusion", "accumulate_allreduce_grads_in_fp32",
    "make_vocab_size_divisible_by",
    "pipeline_layout", "decoder_first_pipeline_num_layers", "decoder_last_pipeline_num_layers",
    "account_for_embedding_in_pipeline_split", "account_for_loss_in_pipeline_split",
    "pipeline_parallel_first_stage_less_layers", "pipeline_parallel_last_stage_less_layers",
    "overlap_moe_expert_parallel_comm",
    "recompute",
};

/* The stages' layers: Megatron's layout string (read here, so that its errors carry the key's
 * place and the string's column), its first/last counts and account-for flags, torchtitan's
 * weights. Which rule wins and whether it fits the pipeline: model/stage_split.c. */
static int load_split(struct json_doc *d, const struct json_value *f, struct config *c)
{
    if (f[T_LAYOUT].item != NULL) {
        const char *s;
        struct mt_err pe;
        struct pp_layout l;
        TRY(json_string(d, &f[T_LAYOUT], &s));
        if (strlen(s) >= sizeof c->pipeline_layout)
            return json_fail(d, &f[T_LAYOUT], "%zu characters, over the limit of %zu",
                             strlen(s), sizeof c->pipeline_layout - 1);
        if (pp_layout_parse(s, &l, &pe) != MT_OK)
            return json_fail_from(d, &f[T_LAYOUT], &pe);
        pp_layout_fini(&l);
        snprintf(c->pipeline_layout, sizeof c->pipeline_layout, "%s", s);
    }
    if (f[T_FIRST_LAYERS].item != NULL) /* Megatron: "must be larger than 0" */
        TRY(json_int(d, &f[T_FIRST_LAYERS], 1, CONFIG_MAX_LAYERS,
                     &c->decoder_first_pipeline_num_layers));
    if (f[T_LAST_LAYERS].item != NULL)
        TRY(json_int(d, &f[T_LAST_LAYERS], 1, CONFIG_MAX_LAYERS,
                     &c->decoder_last_pipeline_num_layers));
    if (f[T_ACCOUNT_EMB].item != NULL)
        TRY(json_bool(d, &f[T_ACCOUNT_EMB], &c->account_for_embedding_in_pipeline_split));
    if (f[T_ACCOUNT_LOSS].item != NULL)
        TRY(json_bool(d, &f[T_ACCOUNT_LOSS], &c->account_for_loss_in_pipeline_split));
    if (f[T_FIRST_LESS].item != NULL || f[T_LAST_LESS].item != NULL)
        stage_split_less_layers_given(c);
    if (f[T_FIRST_LESS].item != NULL)
        TRY(json_int(d, &f[T_FIRST_LESS], 0, CONFIG_MAX_LAYERS, &c->first_stage_less_layers));
    if (f[T_LAST_LESS].item != NULL)
        TRY(json_int(d, &f[T_LAST_LESS], 0, CONFIG_MAX_LAYERS, &c->last_stage_less_layers));
    return MT_OK;
}

/* "calibration": a calibration file (model/profile.h), its path relative to this file, or
 * inline. */
static int load_calibration(struct json_doc *d, const struct json_value *cm, struct profile *out)
{
    const cJSON *j = cm->item;
    if (!cJSON_IsString(j))
        return profile_from_json(d, cm, out);
    struct mt_err ce;
    err_clear(&ce);
    char path[1024];
    const char *name = json_doc_name(d), *slash = strrchr(name, '/');
    if (j->valuestring[0] != '/' && slash != NULL)
        snprintf(path, sizeof path, "%.*s/%s", (int)(slash - name), name, j->valuestring);
    else
        snprintf(path, sizeof path, "%s", j->valuestring);
    /* a regular file only: a config (or a fuzzer) naming /dev/stdin must not block */
    struct stat sb;
    int rc;
    if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode))
        rc = err_set(&ce, MT_EINVAL, "%s: not a regular file", path);
    else
        rc = profile_load(path, out, &ce);
    return rc != MT_OK ? json_fail_from(d, cm, &ce) : MT_OK;
}

static int load_top_fields(struct json_doc *d, const struct json_value *f, struct config *c)
{
    struct mt_err pe;
    if (f[T_MODEL].item != NULL) {
        TRY(load_model(d, &f[T_MODEL], c));
        TRY(seqlen_from_json(d, &f[T_MODEL], c));
    }
    if (f[T_CLUSTER].item != NULL)
        TRY(load_cluster(d, &f[T_CLUSTER], &c->cluster, &c->given));
    if (f[T_SCHEME].item != NULL) {
        const char *s;
        TRY(json_string(d, &f[T_SCHEME], &s));
        if (config_scheme_parse(s, &c->scheme, &pe) != MT_OK)
            return json_fail_from(d, &f[T_SCHEME], &pe);
    }
    static const struct {
        int key;
        long hi;
        size_t off;
    } ints[] = {
        {T_GBS, INT_MAX, offsetof(struct config, global_batch_size)},
        {T_MBS, INT_MAX, offsetof(struct config, micro_batch_size)},
        {T_NDEV, CONFIG_MAX_DEVICES, offsetof(struct config, num_device)},
        {T_NMB, CONFIG_MAX_MICROBATCHES, offsetof(struct config, num_microbatches)},
        {T_CHUNKS, CONFIG_MAX_CHUNKS, offsetof(struct config, chunks)},
    };
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
        if (f[ints[i].key].item != NULL)
            TRY(json_int(d, &f[ints[i].key], 1, ints[i].hi, (int *)((char *)c + ints[i].off)));
    if (f[T_BLOCK].item != NULL)
        TRY(json_bool(d, &f[T_BLOCK], &c->blocking_send));
    if (f[T_OVERLAP_A2A].item != NULL)
        TRY(json_bool(d, &f[T_OVERLAP_A2A], &c->overlap_moe_a2a));
    if (f[T_UNIT].item != NULL)
        TRY(load_unit(d, &f[T_UNIT], &c->unit));
    if (f[T_ITER].item != NULL)
        TRY(json_int(d, &f[T_ITER], 1, CONFIG_MAX_ITERATIONS, &c->iterations));
    if (f[T_UPDATE].item != NULL)
        TRY(json_int(d, &f[T_UPDATE], 1, CONFIG_MAX_MICROBATCHES, &c->update_interval));
    if (f[T_CAL].item != NULL)
        TRY(load_calibration(d, &f[T_CAL], &c->profile));
    if (f[T_ATTN].item != NULL) {
        const char *a;
        TRY(json_string(d, &f[T_ATTN], &a));
        if (config_attention_parse(a, &c->attention, &pe) != MT_OK)
            return json_fail_from(d, &f[T_ATTN], &pe);
    }
    if (f[T_SP].item != NULL)
        TRY(json_bool(d, &f[T_SP], &c->sequence_parallel));
    if (f[T_RECOMPUTE].item != NULL) {
        const char *r;
        TRY(json_string(d, &f[T_RECOMPUTE], &r));
        if (config_recompute_parse(r, &c->recompute, &pe) != MT_OK)
            return json_fail_from(d, &f[T_RECOMPUTE], &pe);
    }
    if (f[T_DISTOPT].item != NULL)
        TRY(json_bool(d, &f[T_DISTOPT], &c->distributed_optimizer));
    static const struct {
        int key;
        size_t off;
    } tris[] = {
        {T_CE_FUSION, offsetof(struct config, ce_fusion)},
        {T_GRAD_FP32, offsetof(struct config, grad_reduce_fp32)},
    };
    for (size_t i = 0; i < sizeof tris / sizeof tris[0]; i++)
        if (f[tris[i].key].item != NULL) {
            bool v;
            TRY(json_bool(d, &f[tris[i].key], &v));
            *(enum tri_state *)((char *)c + tris[i].off) = v ? TRI_YES : TRI_NO;
        }
    if (f[T_VOCAB_DIV].item != NULL) /* Megatron pads to a multiple of it x tp */
        TRY(json_int(d, &f[T_VOCAB_DIV], 1, 1 << 20, &c->vocab_divisible_by));
    if (f[T_RESERVE].item != NULL) { /* 0 allowed: a size or a number of bytes */
        if (cJSON_IsNumber(f[T_RESERVE].item) && f[T_RESERVE].item->valuedouble == 0)
            c->reserve = 0;
        else
            TRY(json_bytes(d, &f[T_RESERVE], &c->reserve));
    }
    if (f[T_BPP].item != NULL) {
        TRY(json_double(d, &f[T_BPP], &c->bytes_per_param));
        if (!(c->bytes_per_param > 0))
            return json_fail(d, &f[T_BPP], "must be > 0 (got %g)", c->bytes_per_param);
    }
    TRY(load_split(d, f, c));
    /* The cap defaults to the device's memory. */
    if (f[T_MEM].item != NULL) {
        TRY(json_bytes(d, &f[T_MEM], &c->memory_per_device));
        c->given |= CONFIG_GIVEN_MEMORY;
    } else {
        c->memory_per_device = c->cluster.device.mem_bytes;
    }
    /* N given without a global batch: the global batch follows. */
    if (f[T_NMB].item != NULL && f[T_GBS].item == NULL) {
        long long g = (long long)c->num_microbatches * c->micro_batch_size * c->cluster.dp;
        if (g > INT_MAX)
            return json_fail(d, &f[T_NMB],
                             "%d x micro_batch_size %d x dp %d is too large a global batch",
                             c->num_microbatches, c->micro_batch_size, c->cluster.dp);
        c->global_batch_size = (int)g;
    }
    return MT_OK;
}

/* config_validate()'s message starts with a JSON path: put the position of that key (or of
 * its nearest ancestor in the file) in front. An absent num_microbatches is derived from
 * global_batch_size: point there. */
static int load_validate(struct json_doc *d, const struct json_value *top, const struct config *c)
{
    struct mt_err ve;
    err_clear(&ve);
    if (config_validate(c, &ve) == MT_OK)
        return MT_OK;
    size_t top_off = top->key_off != JSON_NOPOS ? top->key_off : top->val_off;
    int code = ve.code ? ve.code : MT_EINVAL;
    static const char pathchars[] =
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.";
    size_t k = strspn(ve.msg, pathchars);
    if (k > 0 && k < JSON_PATH_LEN / 2 && ve.msg[k] == ':' && ve.msg[k + 1] == ' ') {
        char path[2 * JSON_PATH_LEN]; /* top->path, '.', and k < JSON_PATH_LEN / 2 */
        const char *dot = top->path[0] ? "." : "";
        snprintf(path, sizeof path, "%s%s%.*s", top->path, dot, (int)k, ve.msg);
        if (k == strlen("num_microbatches") && strncmp(ve.msg, "num_microbatches", k) == 0 &&
            !json_noted(d, path))
            snprintf(path, sizeof path, "%s%sglobal_batch_size", top->path, dot);
        const char *alias;
        size_t off = json_lookup(d, path, top_off, &alias);
        return json_fail_at(d, off, code, alias != NULL ? alias : top->path, "%s", ve.msg);
    }
    return json_fail_at(d, top_off, code, top->path, "%s", ve.msg);
}

int config_from_json(struct json_doc *d, const struct json_value *top, struct config *out)
{
    if (!cJSON_IsObject(top->item)) {
        if (top->path[0] == '\0')
            return json_fail(d, top, "expected a JSON object at the top level, got %s",
                             json_type_name(top->item));
        return json_type_fail(d, top, "an object");
    }
    struct config c;
    config_default(&c);
    memset(c.source, 0, sizeof c.source);
    snprintf(c.source, sizeof c.source, "%s", json_doc_name(d));
    int rc;
    json_doc_note_keys(d, true); /* for load_validate */
    if (config_hf_detect(top->item)) {
        char model_path[JSON_PATH_LEN];
        snprintf(model_path, sizeof model_path, "%.*s%smodel", JSON_PATH_LEN - 8, top->path,
                 top->path[0] ? "." : "");
        rc = config_hf_read(d, top, model_path, &c);
    } else {
        struct json_value f[T__COUNT];
        rc = json_fields(d, top, top_keys, T__COUNT, f);
        if (rc == MT_OK)
            rc = load_top_fields(d, f, &c);
    }
    json_doc_note_keys(d, false);
    if (rc == MT_OK)
        rc = load_validate(d, top, &c);
    if (rc == MT_OK)
        *out = c;
    return rc;
}

int config_load_string(const char *text, size_t len, const char *name, struct config *out,
                       struct mt_err *e)
{
    if (name == NULL)
        name = "(config)";
    if (len > CONFIG_JSON_MAX_BYTES)
        return err_set(e, MT_EINVAL, "%s: %zu bytes, over the limit of %d bytes for a config",
                       name, len, CONFIG_JSON_MAX_BYTES);
    struct json_doc *d;
    TRY(json_doc_parse(text, len, name, MT_EINVAL, &d, e));
    struct json_value root;
    json_doc_root(d, &root);
    int rc = config_from_json(d, &root, out);
    json_doc_free(d);
    return rc;
}

int config_load_file(const char *path, struct config *out, struct mt_err *e)
{
    char *buf;
    size_t len;
    TRY(str_read_file(path, CONFIG_JSON_MAX_BYTES, &buf, &len, e));
    int rc = config_load_string(buf, len, path, out, e);
    free(buf);
    return rc;
}
