/* model/config_write_json.c: a config as JSON (config_to_cjson, config_to_json), the form
 * plan files embed and `mario-tui config` prints; it loads back to an equal config. */
#include <config.h>
#include "model/config.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/fp8.h"
#include "model/framework.h"
#include "model/presets.h"
#include "util/err.h"
#include "util/json.h"
#include "util/xalloc.h"

/* Numbers are written with util/json.h's json_add_number_exact: cJSON 1.7 prints 15 digits,
 * which can lose the last bits, and a saved config must load back equal. */
/* Sizes that are whole KiB/MiB/GiB/TiB are written as "40GiB", others as bytes. */
static void write_bytes(cJSON *o, const char *key, double bytes)
{
    static const char *const unit[] = {"TiB", "GiB", "MiB", "KiB"};
    static const double mult[] = {1099511627776.0, 1073741824.0, 1048576.0, 1024.0};
    for (int i = 0; i < 4; i++) {
        double q = bytes / mult[i];
        if (bytes > 0 && q == floor(q) && q < 1e15 && q * mult[i] == bytes) {
            char buf[40];
            snprintf(buf, sizeof buf, "%.0f%s", q, unit[i]);
            cJSON_AddStringToObject(o, key, buf);
            return;
        }
    }
    json_add_number_exact(o, key, bytes);
}

static void write_flops(cJSON *o, const char *key, double flops)
{
    double q = flops / 1e12;
    if (flops > 0 && q == floor(q) && q < 1e15 && q * 1e12 == flops) {
        char buf[40];
        snprintf(buf, sizeof buf, "%.0fT", q);
        cJSON_AddStringToObject(o, key, buf);
        return;
    }
    json_add_number_exact(o, key, flops);
}

/* model.moe and model.mla (model/moe.h) where they differ from what a reload fills in (the
 * preset's, or none) */
static void write_moe_mla(cJSON *m, const struct model_spec *ms, const struct model_spec *preset)
{
    struct model_spec none;
    memset(&none, 0, sizeof none);
    const struct model_spec *base = preset != NULL ? preset : &none;
    const struct moe_spec *x = &ms->moe, *y = &base->moe;
    const struct mla_spec *a = &ms->mla, *b = &base->mla;
    bool moe_same = x->num_experts == y->num_experts && x->router_topk == y->router_topk &&
                    x->ffn_hidden_size == y->ffn_hidden_size && x->shared_ffn == y->shared_ffn &&
                    x->layer_freq == y->layer_freq && x->first_k_dense == y->first_k_dense &&
                    x->mtp_layers == y->mtp_layers && x->routing_skew == y->routing_skew &&
                    x->capacity_factor == y->capacity_factor &&
                    x->fp8_dispatch == y->fp8_dispatch && x->router_bias == y->router_bias;
    bool mla_same = a->q_lora_rank == b->q_lora_rank && a->kv_lora_rank == b->kv_lora_rank &&
                    a->qk_nope_head_dim == b->qk_nope_head_dim &&
                    a->qk_rope_head_dim == b->qk_rope_head_dim && a->v_head_dim == b->v_head_dim;
    if (!moe_same) {
        cJSON *o = cJSON_AddObjectToObject(m, "moe");
        if (o != NULL) {
            cJSON_AddNumberToObject(o, "num_experts", x->num_experts);
            cJSON_AddNumberToObject(o, "router_topk", x->router_topk);
            cJSON_AddNumberToObject(o, "ffn_hidden_size", x->ffn_hidden_size);
            cJSON_AddNumberToObject(o, "shared_expert_intermediate_size", x->shared_ffn);
            cJSON_AddNumberToObject(o, "layer_freq", x->layer_freq);
            cJSON_AddNumberToObject(o, "first_k_dense", x->first_k_dense);
            cJSON_AddNumberToObject(o, "mtp_num_layers", x->mtp_layers);
            json_add_number_exact(o, "routing_skew", x->routing_skew);
            json_add_number_exact(o, "capacity_factor", x->capacity_factor);
            cJSON_AddBoolToObject(o, "fp8_dispatch", x->fp8_dispatch);
            cJSON_AddBoolToObject(o, "router_bias", x->router_bias);
        }
    }
    if (!mla_same) {
        cJSON *o = cJSON_AddObjectToObject(m, "mla");
        if (o != NULL) {
            cJSON_AddNumberToObject(o, "q_lora_rank", a->q_lora_rank);
            cJSON_AddNumberToObject(o, "kv_lora_rank", a->kv_lora_rank);
            cJSON_AddNumberToObject(o, "qk_nope_head_dim", a->qk_nope_head_dim);
            cJSON_AddNumberToObject(o, "qk_rope_head_dim", a->qk_rope_head_dim);
            cJSON_AddNumberToObject(o, "v_head_dim", a->v_head_dim);
        }
    }
}

/* model.seq_length as a distribution or the path of its lengths file. */
static void write_seqlen(cJSON *m, const struct seqlen_spec *sp)
{
    if (sp->kind == SEQLEN_FILE) {
        cJSON_AddStringToObject(m, "seq_length", sp->path);
        return;
    }
    cJSON *d = cJSON_AddObjectToObject(m, "seq_length");
    cJSON *v = d != NULL ? cJSON_AddArrayToObject(d, "values") : NULL;
    cJSON *w = d != NULL ? cJSON_AddArrayToObject(d, "weights") : NULL;
    for (int i = 0; v != NULL && w != NULL && i < sp->n && i < SEQLEN_MAX_VALUES; i++) {
        cJSON_AddItemToArray(v, cJSON_CreateNumber(sp->values[i]));
        cJSON *wi = cJSON_CreateObject(); /* json_add_number_exact keeps the weight exact */
        if (wi == NULL)
            break;
        json_add_number_exact(wi, "w", sp->weights[i]);
        cJSON *item = cJSON_DetachItemFromObject(wi, "w");
        cJSON_Delete(wi);
        if (item != NULL)
            cJSON_AddItemToArray(w, item);
    }
}

/* The family's parts where they differ from the type's defaults (model/config.h), so that a
 * preset's config reads as before and a Hugging Face family's loads back the same; and, written
 * over a preset (base), where they differ from the preset's, which the reader starts from. */
static void write_model_parts(cJSON *m, const struct model_spec *ms, const struct model_spec *base)
{
    static const char *const mlp[] = {"", "gelu", "swiglu", "geglu"};
    static const char *const norm[] = {"", "layernorm", "rmsnorm"};
    static const char *const bias[] = {"", "none", "qkv", "all"};
    static const char *const qk[] = {"none", "head", "whole"};
    struct model_spec bare = *ms;
    bare.mlp = MLP_DEFAULT;
    bare.norm = NORM_DEFAULT;
    bare.bias = BIAS_DEFAULT;
    bare.head_dim = 0;
    bare.tie_embeddings = TRI_DEFAULT;
#define DIFFERS(f) (f(ms) != f(&bare) || (base != NULL && f(ms) != f(base)))
    if (DIFFERS(config_mlp))
        cJSON_AddStringToObject(m, "mlp", mlp[config_mlp(ms)]);
    if (DIFFERS(config_norm))
        cJSON_AddStringToObject(m, "norm", norm[config_norm(ms)]);
    if (DIFFERS(config_bias))
        cJSON_AddStringToObject(m, "bias", bias[config_bias(ms)]);
    if (DIFFERS(config_head_dim))
        cJSON_AddNumberToObject(m, "head_dim", config_head_dim(ms));
    if (DIFFERS(config_tied_embeddings))
        cJSON_AddBoolToObject(m, "tie_embeddings", config_tied_embeddings(ms));
#undef DIFFERS
    if (ms->qk_norm <= QK_NORM_WHOLE &&
        (ms->qk_norm != QK_NORM_NONE || (base != NULL && base->qk_norm != ms->qk_norm)))
        cJSON_AddStringToObject(m, "qk_norm", qk[ms->qk_norm]);
}

struct cJSON *config_to_cjson(const struct config *c)
{
    cJSON *o = cJSON_CreateObject();
    if (o == NULL)
        return NULL;
    cJSON_AddStringToObject(o, "pipeline_scheme", config_scheme_name(c->scheme));
    cJSON_AddNumberToObject(o, "global_batch_size", c->global_batch_size);
    cJSON_AddNumberToObject(o, "micro_batch_size", c->micro_batch_size);
    cJSON_AddNumberToObject(o, "num_device", c->num_device);
    if (c->num_microbatches > 0)
        cJSON_AddNumberToObject(o, "num_microbatches", c->num_microbatches);
    cJSON_AddNumberToObject(o, "chunks", c->chunks);
    /* 0 means "the device's memory": write what it means. */
    write_bytes(o, "memory_per_device",
                   c->memory_per_device > 0 ? c->memory_per_device : c->cluster.device.mem_bytes);
    cJSON_AddBoolToObject(o, "blocking_send", c->blocking_send);
    if (c->overlap_moe_a2a)
        cJSON_AddBoolToObject(o, "overlap_moe_expert_parallel_comm", true);
    /* Written only when they differ from 1, so synchronous plans read as before. */
    if (c->iterations != 1)
        cJSON_AddNumberToObject(o, "iterations", c->iterations);
    if (c->update_interval != 1)
        cJSON_AddNumberToObject(o, "update_interval", c->update_interval);
    if (c->unit.enabled || c->unit.f != 1 || c->unit.b != 2 || c->unit.rc != 1) {
        cJSON *u = cJSON_AddObjectToObject(o, "unit_costs");
        if (u != NULL) {
            if (!c->unit.enabled)
                cJSON_AddBoolToObject(u, "enabled", false);
            json_add_number_exact(u, "F", c->unit.f);
            json_add_number_exact(u, "B", c->unit.b);
            json_add_number_exact(u, "RC", c->unit.rc);
            if (c->unit.w != 0)
                json_add_number_exact(u, "W", c->unit.w);
            if (c->unit.o != 1)
                json_add_number_exact(u, "O", c->unit.o);
            if (c->unit.a != 0)
                json_add_number_exact(u, "A", c->unit.a);
        }
    }

    const struct model_spec *ms = &c->model;
    struct model_spec preset;
    cJSON *m = cJSON_AddObjectToObject(o, "model");
    if (m != NULL) {
        bool is_preset =
            presets_model(ms->name, &preset, NULL) == MT_OK && strcmp(preset.name, ms->name) == 0;
        cJSON_AddStringToObject(m, is_preset ? "preset" : "name", ms->name);
        cJSON_AddStringToObject(m, "type", config_arch_name(ms->arch));
        cJSON_AddNumberToObject(m, "hidden_size", ms->hidden_size);
        cJSON_AddNumberToObject(m, "num_layers", ms->num_layers);
        cJSON_AddNumberToObject(m, "num_attention_heads", ms->num_attention_heads);
        /* over a preset, the K/V heads wherever they are not the preset's (0 = multi-head) */
        if (ms->num_key_value_heads > 0 ||
            (is_preset && config_kv_heads(&preset) != config_kv_heads(ms)))
            cJSON_AddNumberToObject(m, "num_key_value_heads", config_kv_heads(ms));
        if (c->seqlen.kind == SEQLEN_FIXED)
            cJSON_AddNumberToObject(m, "seq_length", ms->seq_length);
        else
            write_seqlen(m, &c->seqlen);
        if (c->seqlen.max_positions > 0)
            cJSON_AddNumberToObject(m, "max_position_embeddings", c->seqlen.max_positions);
        cJSON_AddNumberToObject(m, "vocab_size", ms->vocab_size);
        cJSON_AddNumberToObject(m, "ffn_hidden_size", ms->ffn_hidden_size);
        write_model_parts(m, ms, is_preset ? &preset : NULL);
        write_moe_mla(m, ms, is_preset ? &preset : NULL);
    }

    const struct cluster_spec *k = &c->cluster;
    struct device_spec dev;
    cJSON *cl = cJSON_AddObjectToObject(o, "cluster");
    if (cl != NULL) {
        bool is_preset = presets_device(k->device.name, &dev, NULL) == MT_OK &&
                         strcmp(dev.name, k->device.name) == 0;
        cJSON_AddStringToObject(cl, is_preset ? "device" : "device_name", k->device.name);
        write_flops(cl, "peak_flops", k->device.peak_flops);
        json_add_number_exact(cl, "efficiency", k->device.efficiency);
        write_bytes(cl, "memory", k->device.mem_bytes);
        json_add_number_exact(cl, "hbm_gbps", k->device.hbm_gbps);
        json_add_number_exact(cl, "p2p_gbps", k->p2p_gbps);
        json_add_number_exact(cl, "p2p_latency_us", k->p2p_lat_us);
        json_add_number_exact(cl, "allreduce_gbps", k->ar_gbps);
        json_add_number_exact(cl, "dp_efficiency", k->dp_efficiency);
        json_add_number_exact(cl, "efficiency_half_tokens", k->eff_half_tokens);
        /* The overheads are the 2021 profile's (model/framework.h): written for it, as they
         * price it; for another framework only when the config gave them (they win over its
         * profile). */
        bool ds2021 = config_framework(c) == FRAMEWORK_MEGATRON_DS_2021;
        if (ds2021 || (c->given & CONFIG_GIVEN_OP_OVERHEAD))
            json_add_number_exact(cl, "op_overhead_us", k->device.op_overhead_us);
        if (ds2021 || (c->given & CONFIG_GIVEN_LAYER_OVERHEAD))
            json_add_number_exact(cl, "layer_overhead_us", k->device.layer_overhead_us);
        if (c->given & CONFIG_GIVEN_COMPUTE_FACTOR)
            json_add_number_exact(cl, "compute_factor", k->compute_factor);
        if (c->given & CONFIG_GIVEN_KERNEL_OVERHEAD)
            json_add_number_exact(cl, "kernel_overhead_us", k->kernel_overhead_us);
        cJSON_AddNumberToObject(cl, "dp", k->dp);
        cJSON_AddNumberToObject(cl, "tp", k->tp);
        if (k->ep > 0) /* model/moe.h; unset, 1 and tp come back */
            cJSON_AddNumberToObject(cl, "ep", k->ep);
        if (k->etp > 0)
            cJSON_AddNumberToObject(cl, "etp", k->etp);
        /* Written where they differ from what a reload fills in, so that configs of the
         * default cluster read as before. */
        if (k->gpus_per_node != (is_preset ? dev.gpus_per_node : CONFIG_GPUS_PER_NODE))
            cJSON_AddNumberToObject(cl, "gpus_per_node", k->gpus_per_node);
        if (!is_preset || k->tp_gbps != dev.nvlink_gbps)
            json_add_number_exact(cl, "tp_gbps", k->tp_gbps);
        if (!is_preset || k->host_gbps != dev.host_gbps)
            json_add_number_exact(cl, "host_gbps", k->host_gbps);
        if (k->host_mem_per_node > 0)
            write_bytes(cl, "host_memory_per_node", k->host_mem_per_node);
        /* the framework when it was set, or when a reload would resolve another: a model
         * written by a preset's name reads back as that preset, paper stack and all */
        struct model_spec as_read;
        bool read_paper = presets_model(ms->name, &as_read, NULL) == MT_OK &&
                          strcmp(as_read.name, ms->name) == 0 && as_read.paper_stack;
        enum framework_id read_fw = read_paper ? FRAMEWORK_MEGATRON_DS_2021 : FRAMEWORK_MEGATRON_CORE;
        if (k->framework != FRAMEWORK_DEFAULT || config_framework(c) != read_fw)
            cJSON_AddStringToObject(cl, "framework", framework_name(config_framework(c)));
        /* a reload fills these from the preset, or for a named device from the default's */
        struct config base;
        if (!is_preset) {
            config_default(&base);
            dev = base.cluster.device;
        }
        if (k->device.fp8_peak_flops != dev.fp8_peak_flops)
            write_flops(cl, "fp8_peak_flops", k->device.fp8_peak_flops);
        if (k->device.net_gbps != dev.net_gbps)
            json_add_number_exact(cl, "network_gbps", k->device.net_gbps);
        if (k->tp_comm_overlap)
            cJSON_AddBoolToObject(cl, "tp_comm_overlap", true);
        if (k->overlap_grad_reduce)
            cJSON_AddBoolToObject(cl, "overlap_grad_reduce", true);
        if (k->overlap_param_gather)
            cJSON_AddBoolToObject(cl, "overlap_param_gather", true);
        /* context parallelism, where set */
        if (k->cp > 1)
            cJSON_AddNumberToObject(cl, "cp", k->cp);
        if (k->cp_comm_type != CP_COMM_P2P)
            cJSON_AddStringToObject(cl, "cp_comm_type", config_cp_comm_name(k->cp_comm_type));
        /* FP8 (model/fp8.h), where set */
        if (k->fp8_recipe != FP8_NONE)
            cJSON_AddStringToObject(cl, "fp8_recipe", fp8_recipe_name(k->fp8_recipe));
        if (k->fp8_format != FP8_FORMAT_HYBRID)
            cJSON_AddStringToObject(cl, "fp8_format", fp8_format_name(k->fp8_format));
        if (k->fp8_param_gather)
            cJSON_AddBoolToObject(cl, "fp8_param_gather", true);
        /* ZeRO / FSDP, where set (model/config_zero.c) */
        if (k->zero_stage > 0)
            cJSON_AddNumberToObject(cl, "zero_stage", k->zero_stage);
        if (k->dp_shard > 0)
            cJSON_AddNumberToObject(cl, "dp_shard", k->dp_shard);
        if (k->reshard_after_forward != FSDP_RESHARD_DEFAULT)
            cJSON_AddStringToObject(cl, "fsdp_reshard_after_forward",
                                    config_fsdp_reshard_name(k->reshard_after_forward));
    }
    /* The stack, where it was set (unset, the model's defaults come back on reading; a model
     * written by name reads back as one of its own, so a paper-stack one writes them out) */
    bool own_defaults = !(m != NULL && cJSON_GetObjectItem(m, "preset") != NULL) &&
                        ms->paper_stack;
    if (c->attention != ATTN_DEFAULT || own_defaults)
        cJSON_AddStringToObject(o, "attention", config_attention_name(config_attention(c)));
    if (c->bytes_per_param == 0 && own_defaults)
        json_add_number_exact(o, "bytes_per_param", config_bytes_per_param(c));
    if (c->sequence_parallel)
        cJSON_AddBoolToObject(o, "sequence_parallel", true);
    if (c->distributed_optimizer)
        cJSON_AddBoolToObject(o, "distributed_optimizer", true);
    if (c->recompute != RECOMPUTE_NONE)
        cJSON_AddStringToObject(o, "recompute", config_recompute_name(c->recompute));
    if (c->bytes_per_param > 0)
        json_add_number_exact(o, "bytes_per_param", c->bytes_per_param);
    if (c->ce_fusion != TRI_DEFAULT)
        cJSON_AddBoolToObject(o, "cross_entropy_loss_fusion", c->ce_fusion == TRI_YES);
    if (c->grad_reduce_fp32 != TRI_DEFAULT)
        cJSON_AddBoolToObject(o, "accumulate_allreduce_grads_in_fp32",
                              c->grad_reduce_fp32 == TRI_YES);
    if (c->vocab_divisible_by > 0)
        cJSON_AddNumberToObject(o, "make_vocab_size_divisible_by", c->vocab_divisible_by);
    if (c->reserve >= 0 || own_defaults)
        write_bytes(o, "reserve", c->reserve >= 0 ? c->reserve : config_reserve(c));
    /* the stages' layers (model/stage_split.h), where a rule was given */
    if (c->pipeline_layout[0] != '\0')
        cJSON_AddStringToObject(o, "pipeline_layout", c->pipeline_layout);
    if (c->decoder_first_pipeline_num_layers > 0)
        cJSON_AddNumberToObject(o, "decoder_first_pipeline_num_layers",
                                c->decoder_first_pipeline_num_layers);
    if (c->decoder_last_pipeline_num_layers > 0)
        cJSON_AddNumberToObject(o, "decoder_last_pipeline_num_layers",
                                c->decoder_last_pipeline_num_layers);
    if (c->account_for_embedding_in_pipeline_split)
        cJSON_AddBoolToObject(o, "account_for_embedding_in_pipeline_split", true);
    if (c->account_for_loss_in_pipeline_split)
        cJSON_AddBoolToObject(o, "account_for_loss_in_pipeline_split", true);
    if (c->stage_less_layers) {
        cJSON_AddNumberToObject(o, "pipeline_parallel_first_stage_less_layers",
                                c->first_stage_less_layers);
        cJSON_AddNumberToObject(o, "pipeline_parallel_last_stage_less_layers",
                                c->last_stage_less_layers);
    }
    if (c->profile.enabled || c->profile.micro != NULL) /* fits, tables, or both */
        cJSON_AddItemToObject(o, "calibration", profile_to_cjson(&c->profile));
    return o;
}

char *config_to_json(const struct config *c)
{
    cJSON *o = config_to_cjson(c);
    char *raw = o != NULL ? cJSON_Print(o) : NULL;
    cJSON_Delete(o);
    if (raw == NULL)
        return NULL;
    /* cJSON indents with tabs and puts a tab after ':'; strings never hold a raw tab. */
    size_t n = strlen(raw), k = 0;
    char *out = xmalloc(2 * n + 2);
    int line_start = 1;
    for (size_t i = 0; i < n; i++) {
        if (raw[i] == '\t') {
            if (line_start) {
                out[k++] = ' ';
                out[k++] = ' ';
            } else {
                out[k++] = ' ';
            }
            continue;
        }
        line_start = raw[i] == '\n';
        out[k++] = raw[i];
    }
    out[k++] = '\n';
    out[k] = '\0';
    cJSON_free(raw);
    return out;
}
