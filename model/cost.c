/* model/cost.c: the analytic estimators of model/cost.h. Every formula is written out in
 * the header with its source; this file only evaluates them per stage. */
#include <config.h>
#include "model/cost.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/config.h"
#include "model/profile.h"
#include "model/xformer_layout.h"
#include "util/err.h"
#include "util/xalloc.h"

double cost_layer_fw_flops(const struct config *c)
{
    return cost_layer_fw_flops_at(c, c->model.seq_length);
}

/* The K/V width kv x h/a (GQA); h with multi-head attention. */
static double cost_kv_width(const struct model_spec *m)
{
    return (double)config_kv_heads(m) * (m->hidden_size / m->num_attention_heads);
}

/* The forward FLOPs of a layer's attention weight GEMMs: Q and the projection 4bsh^2, K and V
 * 4bsh kv_width; 8bsh^2 with multi-head attention (written as before, bit for bit). */
static double cost_attn_gemm_flops(const struct model_spec *m, double b, double s)
{
    double h = m->hidden_size;
    if (config_kv_heads(m) == m->num_attention_heads)
        return 8 * b * s * h * h;
    return 4 * b * s * h * h + 4 * b * s * h * cost_kv_width(m);
}

double cost_layer_fw_flops_at(const struct config *c, int seq)
{
    const struct model_spec *m = &c->model;
    double b = c->micro_batch_size, s = seq, h = m->hidden_size, f = m->ffn_hidden_size;
    double mlp = (m->arch == ARCH_LLAMA2 ? 6 : 4) * b * s * h * f;
    return (cost_attn_gemm_flops(m, b, s) + 4 * b * s * s * h + mlp) / c->cluster.tp;
}

double cost_layer_w_flops_at(const struct config *c, int seq)
{
    const struct model_spec *m = &c->model;
    double b = c->micro_batch_size, s = seq, h = m->hidden_size, f = m->ffn_hidden_size;
    double mlp = (m->arch == ARCH_LLAMA2 ? 6 : 4) * b * s * h * f;
    return (cost_attn_gemm_flops(m, b, s) + mlp) / c->cluster.tp;
}

double cost_layer_w_keep_bytes_at(const struct config *c, int seq)
{
    const struct model_spec *m = &c->model;
    double b = c->micro_batch_size, s = seq, h = m->hidden_size, f = m->ffn_hidden_size;
    double t = c->cluster.tp, sbh = s * b * h, sbf = s * b * f;
    double inputs = 2 * sbh + 2 * sbh / t + 2 * sbh + 2 * sbf / t;
    double qkv = config_kv_heads(m) == m->num_attention_heads ? 6 * sbh
                                                               : 2 * sbh + 4 * s * b * cost_kv_width(m);
    double grads = qkv / t + 2 * sbh + (m->arch == ARCH_LLAMA2 ? 4 : 2) * sbf / t + 2 * sbh;
    return inputs + grads;
}

double cost_efficiency(const struct config *c)
{
    double tokens = (double)c->micro_batch_size * c->model.seq_length;
    double half = c->cluster.eff_half_tokens;
    return c->cluster.device.efficiency * (half > 0 ? tokens / (tokens + half) : 1.0);
}

double cost_layer_act_bytes(const struct config *c)
{
    return cost_layer_act_bytes_at(c, c->model.seq_length);
}

double cost_layer_act_bytes_exec(const struct config *c, int seq)
{
    const struct model_spec *m = &c->model;
    return 4.0 * (double)xl_layer_floats((size_t)c->micro_batch_size, (size_t)seq,
                                         (size_t)m->hidden_size, (size_t)m->num_attention_heads,
                                         (size_t)m->ffn_hidden_size);
}

/* The executor's bytes (fp32) from its layout, model/xformer_layout.h: what a FW keeps is the
 * input it keeps anyway plus the full floats; a CFW keeps the input and runs in its scratch; a
 * backward runs in the CPU model's scratch (one head at a time). */
void cost_stage_bytes_exec(const struct config *c, int seq, struct stage_cost *st)
{
    const struct model_spec *m = &c->model;
    size_t B = (size_t)c->micro_batch_size, T = (size_t)seq, C = (size_t)m->hidden_size;
    size_t H = (size_t)m->num_attention_heads, F = (size_t)m->ffn_hidden_size;
    size_t V = (size_t)m->vocab_size, n = (size_t)st->num_layers;
    bool first = st->first_layer == 0, last = st->first_layer + st->num_layers == m->num_layers;
    double positions = c->seqlen.max_positions > 0 ? c->seqlen.max_positions : m->seq_length;
    double h = C, f = F, enc = first ? 4.0 * (double)(B * T * C) : 0;
    st->ckpt = (double)xl_kept_bytes(first, last, B, T, C);
    st->layer_act = cost_layer_act_bytes_exec(c, seq);
    st->act = st->ckpt + 4.0 * (double)xl_full_floats(first, last, n, B, T, C, H, F, V);
    st->sel_ckpt = 4.0 * (double)(B * T * C) - enc;
    st->cfw_peak_bytes =
        st->ckpt + 4.0 * (double)xl_cfw_scratch_floats(first, last, n, B, T, C, H, F, V);
    st->bw_work_bytes = 4.0 * (double)xl_bw_scratch_floats(B, T, C, F, 1);
    st->w_keep = 4.0 * (double)xl_w_keep_floats(last, n, B, T, C, F, V);
    st->fw_work_bytes = 0;
    double params = n * (4 * h * h + 2 * h * f + 9 * h + f);
    if (first)
        params += V * h + positions * h;
    if (last)
        params += V * h + 2 * h;
    st->static_bytes = 16 * params;
}

double cost_layer_flash_bw_flops_at(const struct config *c, int seq)
{
    if (config_attention(c) != ATTN_FLASH)
        return 0;
    const struct model_spec *m = &c->model;
    double b = c->micro_batch_size, s = seq, h = m->hidden_size;
    return 2 * b * s * s * h / c->cluster.tp; /* Q K^T again: the scores are not kept */
}

double cost_layer_act_bytes_at(const struct config *c, int seq)
{
    const struct model_spec *m = &c->model;
    double b = c->micro_batch_size, s = seq, h = m->hidden_size, f = m->ffn_hidden_size;
    double a = m->num_attention_heads, t = c->cluster.tp;
    bool llama = m->arch == ARCH_LLAMA2;
    /* the layer norms' inputs, dropout masks, residuals: replicated over the TP group unless
     * sequence parallelism splits them too */
    double replicated = (llama ? 8 : 10) / (c->sequence_parallel ? t : 1);
    /* Q, K, V and the projection's input (2sbh each), K and V narrower with GQA */
    double qkvo = config_kv_heads(m) == m->num_attention_heads
                      ? 8 : 4 + 4 * (double)config_kv_heads(m) / m->num_attention_heads;
    double split = qkvo + (llama ? 8 : 4) * f / h;
    double attention = config_attention(c) == ATTN_FLASH ? 4 * a * s * b   /* fp32 lse */
                       : (llama ? 2 : 5) * a * s * s * b;                   /* scores kept */
    return s * b * h * (replicated + split / t) + attention / t;
}

double cost_layer_tp_us(const struct config *c, int seq)
{
    const struct cluster_spec *k = &c->cluster;
    double t = k->tp;
    if (t <= 1)
        return 0;
    double bytes = 2.0 * seq * c->micro_batch_size * c->model.hidden_size;
    double gbps = k->tp <= k->gpus_per_node ? k->tp_gbps : fmin(k->tp_gbps, k->ar_gbps);
    /* two all-reduces (or all-gathers + reduce-scatters with SP: the same bytes on the ring) */
    return 2 * (2 * (t - 1) / t * bytes / (gbps * 1e3));
}

double cost_layer_params(const struct config *c)
{
    const struct model_spec *m = &c->model;
    double h = m->hidden_size, f = m->ffn_hidden_size;
    if (config_kv_heads(m) != m->num_attention_heads) { /* GQA: K and V are h x kv_width */
        double kv = cost_kv_width(m);
        if (m->arch == ARCH_LLAMA2)
            return 2 * h * h + 2 * h * kv + 3 * h * f + 2 * h;
        return 2 * h * h + 2 * h * kv + 2 * h * f + 7 * h + 2 * kv + f;
    }
    if (m->arch == ARCH_LLAMA2)
        return 4 * h * h + 3 * h * f + 2 * h;
    return 4 * h * h + 2 * h * f + 9 * h + f;
}

double cost_stage_params(const struct config *c, int n, bool embed, bool head)
{
    const struct model_spec *m = &c->model;
    double h = m->hidden_size, V = m->vocab_size, t = c->cluster.tp;
    /* GPT's position table has a row per position the model takes, whatever a batch's s. */
    double positions = c->seqlen.max_positions > 0 ? c->seqlen.max_positions : m->seq_length;
    double params = n * cost_layer_params(c) / t;
    if (embed)
        params += (V * h + (m->arch == ARCH_LLAMA2 ? 0 : positions * h)) / t;
    if (head)
        params += (V * h + 2 * h) / t;
    return params;
}

int cost_model_build(const struct config *c, int num_stages, int parts_per_device, int ar_group,
                     struct cost_model *out, struct mt_err *e)
{
    memset(out, 0, sizeof *out);
    if (num_stages < 1 || num_stages > c->model.num_layers)
        return err_set(e, MT_EINVAL, "model.num_layers: %d stages but only %d layers", num_stages,
                       c->model.num_layers);
    const struct model_spec *m = &c->model;
    const struct cluster_spec *k = &c->cluster;
    double b = c->micro_batch_size, s = m->seq_length, h = m->hidden_size, V = m->vocab_size;
    double t = k->tp;
    double flops_per_us = k->device.peak_flops * cost_efficiency(c) * 1e-6;
    double layer_fw_us = cost_layer_fw_flops(c) / flops_per_us;
    double layer_act = cost_layer_act_bytes(c);
    double layer_w_us = cost_layer_w_flops_at(c, m->seq_length) / flops_per_us;
    double layer_w_keep = cost_layer_w_keep_bytes_at(c, m->seq_length);
    double layer_tp_us = cost_layer_tp_us(c, m->seq_length);
    double layer_bw_extra_us = cost_layer_flash_bw_flops_at(c, m->seq_length) / flops_per_us;
    double ckpt_bytes = 2 * s * b * h;
    double p2p_us = ckpt_bytes / (k->p2p_gbps * 1e3) + k->p2p_lat_us;

    out->unit = c->unit.enabled;
    out->num_stages = num_stages;
    out->parts_per_device = parts_per_device;
    out->stage = xcalloc((size_t)num_stages, sizeof *out->stage);

    int base = m->num_layers / num_stages, extra = m->num_layers % num_stages;
    /* The remainder goes to the middle stages: the first and last already carry the
     * embedding and the head. */
    int extra_from = (num_stages - extra) / 2;
    int layer = 0;
    for (int i = 0; i < num_stages; i++) {
        struct stage_cost *st = &out->stage[i];
        st->first_layer = layer;
        st->num_layers = base + (i >= extra_from && i < extra_from + extra);
        layer += st->num_layers;
        st->has_embed = i == 0;
        st->has_head = i == num_stages - 1;
        double n = st->num_layers;
        double fw = n * (layer_fw_us + layer_tp_us), act = n * layer_act;
        double bw_extra = n * layer_bw_extra_us; /* flash recomputes its scores */
        double w_us = n * layer_w_us, w_keep = n * layer_w_keep;
        double params = cost_stage_params(c, st->num_layers, st->has_embed, st->has_head);
        if (st->has_head) {
            fw += 2 * b * s * h * V / t / flops_per_us;
            w_us += 2 * b * s * h * V / t / flops_per_us;
            act += 4 * s * b * V / t;
            w_keep += 2 * s * b * h + 2 * s * b * V / t;
        }
        st->params = params;
        if (c->unit.enabled) {
            /* Chunks split a device's share; Chimera's two parts are whole replicas. */
            double v = config_stages_per_device(c);
            st->fw = c->unit.f / v;
            st->bw = c->unit.b / v;
            st->w = (c->unit.w > 0 ? c->unit.w : c->unit.b / 2) / v;
            st->b = st->bw - st->w;
            st->rc = c->unit.rc / v;
            st->act = 1.0 / v;
            st->w_keep = st->act * w_keep / act;
            st->ckpt = st->act * ckpt_bytes / act;
            st->layer_act = st->act * layer_act / act;
            st->sel_ckpt = st->ckpt;
            st->copy = c->unit.o * st->act;
            continue;
        }
        st->fw = fw;
        st->bw = 2 * fw + bw_extra;
        st->rc = fw;
        st->act = act;
        st->w_keep = w_keep;
        st->ckpt = ckpt_bytes;
        st->layer_act = layer_act;
        st->static_bytes = params * config_bytes_per_param(c);
        st->msg_bytes = ckpt_bytes; /* the stage's input or output, as the checkpoint */
        st->p2p = p2p_us;
        double n_ar = ar_group;
        st->ar = n_ar > 1 ? 2 * (n_ar - 1) / n_ar * 2 * params / (k->ar_gbps * 1e3) +
                                2 * (n_ar - 1) * k->p2p_lat_us
                          : 0;
        st->os = 32 * params / (k->device.hbm_gbps * 1e3);
        cost_overhead_apply(c, st); /* framework and launch overheads (model/cost_overhead.c) */
        double act_analytic = st->act;
        profile_apply(&c->profile, c, st); /* a calibration replaces what it measured */
        /* W's share of the backward as the FLOPs give it, of the measured backward too */
        st->w = st->bw * (w_us / (2 * fw + bw_extra));
        st->b = st->bw - st->w;
        if (act_analytic > 0 && st->act != act_analytic)
            st->w_keep *= st->act / act_analytic;
        if (act_analytic > 0 && st->act != act_analytic) /* measured: its per-layer share */
            st->layer_act *= st->act / act_analytic;
        profile_apply_split(&c->profile, c, st); /* a measured B, W and W's bytes, if any */
        st->sel_ckpt = st->ckpt; /* the input of the checkpointed layers, measured or not */
        st->copy = st->act / (k->host_gbps * 1e3); /* bytes / (GB/s) in us, measured act too */
    }
    return MT_OK;
}

void cost_model_fini(struct cost_model *m)
{
    free(m->stage);
    memset(m, 0, sizeof *m);
}
