/* model/cost.c: the estimators of model/cost.h as sums over a stage's op list (model/ops.h):
 * the block's list n times, the embedding's and the head's on the end stages, each built once
 * per cost_model_build and summed once per stage, never per instruction. Two pricings:
 *   Megatron-DeepSpeed 2021 (the paper's presets, ops_legacy): the estimate the paper's Table 5
 *     was fitted with, kept to the bit: model FLOPs (full squares, flash's extra 2bs^2h in the
 *     backward) of the unsplit block (tp = 1) divided by tp and by peak x cost_efficiency, the TP
 *     all-reduces by the header's ring formula, memory-bound ops unpriced (the fitted layer
 *     overhead absorbs them);
 *   every other framework: each op priced by the device model (model/price.h) and summed. */
#include <config.h>
#include "model/cost.h"
#include "model/cost_ops.h"
#include "model/cost_cache.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/config.h"
#include "model/fp8.h"
#include "model/moe.h"
#include "model/framework.h"
#include "model/stage_split.h"
#include "model/ops.h"
#include "model/price.h"
#include "model/profile.h"
#include "model/xformer_layout.h"
#include "util/err.h"
#include "util/xalloc.h"

/* What a list adds up to. FLOPs are model FLOPs (op_model_flops); times are cost_op_us's. */
struct op_sums {
    double fw_flops, w_flops, flash_extra_flops;
    double fw_us, b_us, w_us;
    double tp_ring_bytes; /* the 2021 estimate's TP term: bus factor x bytes of the forward's */
    double keep, w_keep, params;
    double remat; /* the most one block rematerializes in its backward (a recompute policy) */
    double head_matrix_params; /* the LM head's matrix (a tied one is the embedding's) */
    double expert_params;      /* the routed experts' (grouped GEMMs; model/moe.h) */
    double fp8_params;         /* of params, those of FP8 GEMMs (model/fp8.h) */
    double fp8_expert_params;  /* of those, the routed experts' */
    /* the expert all-to-alls among fw_us and b_us, and the bytes leaving the rank in them */
    double a2a_fw_us, a2a_b_us, a2a_fw_bytes, a2a_b_bytes;
    /* ZeRO-2/3's per-unit collectives (model/ops_build_fsdp.c): before the forward, before the
     * backward, after it; priced apart (stage_fsdp), not in fw_us / b_us */
    double fsdp_fw_us, fsdp_bw_pre_us, fsdp_bw_post_us;
};

static bool is_tp_coll(const struct op *o)
{
    return o->kind == OP_COLLECTIVE && o->group_kind == GROUP_TP;
}

/* The expert dispatch and combine (model/ops_build_moe.c): what the simulator's communication
 * lane carries (stage_cost.fw_a2a, b_a2a). */
static bool is_ep_a2a(const struct op *o)
{
    return o->kind == OP_COLLECTIVE && o->group_kind == GROUP_EP && o->coll == COLL_ALL_TO_ALL;
}

/* A context-parallel ring's send/recv (model/ops_build_cp.c, p2p) runs under the attention
 * blocks of its pass that need no mask (the off-diagonal steps: one K/V block arrives while
 * the previous computes): only what outlasts them shows. */
static double cp_ring_exposed_us(const struct config *c, const struct op_list *l,
                                 enum op_pass p)
{
    double ring = 0, blocks = 0;
    for (size_t i = 0; i < l->n; i++) {
        const struct op *o = &l->op[i];
        if (o->kind == OP_COLLECTIVE && o->group_kind == GROUP_CP && o->overlapped &&
            o->pass == p)
            ring += price_op_us(c, o, p);
        else if (o->kind == OP_ATTENTION && !o->causal)
            blocks += price_op_us(c, o, p);
    }
    return ring > blocks ? ring - blocks : 0;
}

/* Megatron-LM's --tp-comm-overlap: Transformer Engine's userbuffers pipeline each transformer
 * block's sequence-parallel TP collective with the GEMM beside it (TE
 * transformer_engine/pytorch/module/base.py, initialize_ub's default config, TE 1.x-2.x):
 *   ring_exchange (qkv_fprop, fc1_fprop: the input's all-gather with the GEMM it feeds;
 *     proj_dgrad, fc2_dgrad: the output gradient's all-gather with the data-gradient GEMM):
 *     the GEMM in tp chunks of m / tp tokens, each chunk's peer copy on the copy engines while
 *     the previous chunk multiplies (num_splits = tp, one SM, no SM margin);
 *   pipeline (proj_fprop, fc2_fprop: the output's reduce-scatter with the GEMM that makes it):
 *     the GEMM in 4 splits, each split's reduce-scatter on 16 SMs under the next split, the
 *     last one's after it; the GEMM keeps the other SMs (set_sm_margin);
 *   bulk (qkv_wgrad, fc1_wgrad: the input gradient's reduce-scatter beside the weight-gradient
 *     GEMM; qkv_dgrad, fc1_dgrad: the input's all-gather again beside the data-gradient GEMM,
 *     op->overlapped, free as without the flag): the collective on 16 SMs, the GEMM on the
 *     others, side by side.
 * A pair takes what its slower side takes; what it takes beyond the GEMM alone is the
 * collective's. Collectives outside a block (the embedding's reduce-scatter, the LM head's
 * all-gather, the cross-entropy's all-reduce) are exposed, as are all without sequence
 * parallelism (Megatron-LM refuses the flag there). In the pass's order a gather precedes its
 * GEMM and a reduce follows it; the backward runs the list backwards. */
#define TE_UB_COMM_SMS 16.0  /* num_sm of the pipeline and bulk methods */
#define TE_UB_PIPELINE_SPLITS 4.0

static const struct op *tp_overlap_partner(const struct op_list *l, size_t i, enum op_pass p)
{
    const struct op *o = &l->op[i];
    bool gather = o->coll == COLL_ALL_GATHER;
    int step = (p == PASS_FW) == gather ? 1 : -1;
    for (long j = (long)i + step; j >= 0 && j < (long)l->n; j += step) {
        const struct op *q = &l->op[j];
        if (q->kind == OP_GEMM)
            return q->site == SITE_LAYER ? q : NULL;
        if (q->kind != OP_COLLECTIVE)
            return NULL;
    }
    return NULL;
}

/* pass p of GEMM g in `splits` pieces along its tokens (m), on all SMs but `comm_sms` */
static double gemm_split_us(const struct config *c, const struct op *g, enum op_pass p,
                            double splits, double comm_sms)
{
    struct op piece = *g;
    piece.m /= splits;
    double sms = c->cluster.device.sms > comm_sms ? c->cluster.device.sms : comm_sms + 1;
    return splits * price_op_us(c, &piece, p) * sms / (sms - comm_sms);
}

static double op_in_list_us(const struct config *c, const struct op_list *l, size_t i,
                            enum op_pass p)
{
    const struct op *o = &l->op[i];
    if (ops_legacy(c) || !framework_hides_tp_comm(c) || !is_tp_coll(o) || o->overlapped ||
        o->pass != p || !c->sequence_parallel || o->site != SITE_LAYER)
        return cost_op_us(c, o, p);
    const struct op *g = tp_overlap_partner(l, i, p);
    if (g == NULL)
        return cost_op_us(c, o, p);
    double comm = price_op_us(c, o, p), pair;
    enum op_pass under = p;
    if (o->coll == COLL_ALL_GATHER) /* ring_exchange: the forward's or the dgrad's GEMM */
        pair = fmax(gemm_split_us(c, g, p, o->group, 0), comm);
    else if (p == PASS_FW) /* pipeline: the last split's reduce-scatter after the GEMM */
        pair = fmax(gemm_split_us(c, g, p, TE_UB_PIPELINE_SPLITS, TE_UB_COMM_SMS),
                    comm * (1 - 1 / TE_UB_PIPELINE_SPLITS)) + comm / TE_UB_PIPELINE_SPLITS;
    else { /* bulk: beside the weight-gradient GEMM */
        under = PASS_W;
        pair = fmax(gemm_split_us(c, g, PASS_W, 1, TE_UB_COMM_SMS), comm);
    }
    double exposed = pair - price_op_us(c, g, under);
    return exposed > 0 ? exposed + framework_kernel_overhead_us(c) : 0;
}

/* An op a recompute policy reruns (model/ops_recompute.c) pays that share of its forward in
 * its backward's B. */
double cost_op_in_list_us(const struct config *c, const struct op_list *l, size_t i,
                          enum op_pass p)
{
    double us = op_in_list_us(c, l, i, p), share = l->op[i].recompute;
    if (p == PASS_B && share > 0)
        us += share * op_in_list_us(c, l, i, PASS_FW);
    return us;
}

static void op_sums_of(const struct config *c, const struct op_list *l, struct op_sums *s)
{
    memset(s, 0, sizeof *s);
    if (!ops_legacy(c)) {
        s->fw_us += cp_ring_exposed_us(c, l, PASS_FW);
        s->b_us += cp_ring_exposed_us(c, l, PASS_B);
    }
    for (size_t i = 0; i < l->n; i++) {
        const struct op *o = &l->op[i];
        s->fw_flops += op_model_flops(o, PASS_FW);
        s->w_flops += op_model_flops(o, PASS_W);
        if (o->kind == OP_ATTENTION && o->flash) /* Q K^T again: the scores are not kept */
            s->flash_extra_flops += op_model_flops(o, PASS_FW) / 2;
        if (is_tp_coll(o) && o->pass == PASS_FW && !o->overlapped)
            s->tp_ring_bytes += op_coll_bus_factor(o->coll, o->group) * o->bytes;
        s->fw_us += cost_op_in_list_us(c, l, i, PASS_FW);
        s->b_us += cost_op_in_list_us(c, l, i, PASS_B);
        s->w_us += cost_op_in_list_us(c, l, i, PASS_W);
        if (is_ep_a2a(o)) {
            double out = o->group > 1 ? o->bytes * (o->group - 1) / o->group : 0;
            s->a2a_fw_us += cost_op_in_list_us(c, l, i, PASS_FW);
            s->a2a_b_us += cost_op_in_list_us(c, l, i, PASS_B);
            *(o->pass == PASS_FW ? &s->a2a_fw_bytes : &s->a2a_b_bytes) += out;
        }
        s->keep += o->keep_bytes;
        s->remat += o->remat_bytes;
        s->w_keep += o->w_keep_bytes;
        s->params += o->params;
        if (o->site == SITE_HEAD && o->kind == OP_GEMM && o->weight)
            s->head_matrix_params += o->params;
        if (o->kind == OP_GROUPED_GEMM)
            s->expert_params += o->params;
        if ((o->kind == OP_GEMM || o->kind == OP_GROUPED_GEMM) && o->dtype == OP_FP8) {
            s->fp8_params += o->params;
            if (o->kind == OP_GROUPED_GEMM)
                s->fp8_expert_params += o->params;
        }
        ops_fsdp_unit_comm_us(c, o, &s->fsdp_fw_us, &s->fsdp_bw_pre_us, &s->fsdp_bw_post_us);
    }
}

/* dst += times x src (the figures of `times` blocks of one kind) */
static void op_sums_add(struct op_sums *dst, const struct op_sums *src, double times)
{
    dst->fw_flops += times * src->fw_flops;
    dst->w_flops += times * src->w_flops;
    dst->flash_extra_flops += times * src->flash_extra_flops;
    dst->fw_us += times * src->fw_us;
    dst->b_us += times * src->b_us;
    dst->w_us += times * src->w_us;
    dst->tp_ring_bytes += times * src->tp_ring_bytes;
    dst->keep += times * src->keep;
    if (times > 0) /* one block at a time: the largest, not the sum */
        dst->remat = fmax(dst->remat, src->remat);
    dst->w_keep += times * src->w_keep;
    dst->params += times * src->params;
    dst->head_matrix_params += times * src->head_matrix_params;
    dst->expert_params += times * src->expert_params;
    dst->fp8_params += times * src->fp8_params;
    dst->fp8_expert_params += times * src->fp8_expert_params;
    dst->a2a_fw_us += times * src->a2a_fw_us;
    dst->a2a_b_us += times * src->a2a_b_us;
    dst->a2a_fw_bytes += times * src->a2a_fw_bytes;
    dst->a2a_b_bytes += times * src->a2a_b_bytes;
    dst->fsdp_fw_us += times * src->fsdp_fw_us;
    dst->fsdp_bw_pre_us += times * src->fsdp_bw_pre_us;
    dst->fsdp_bw_post_us += times * src->fsdp_bw_post_us;
}

/* PART_LAYER: the model's typical block (ops_build_layer_par); a stage of a MoE model sums
 * its dense and MoE blocks (PART_DENSE, PART_MOE) and on the last stage the MTP modules */
enum ops_part { PART_LAYER, PART_EMBED, PART_HEAD, PART_DENSE, PART_MOE, PART_MTP };

/* The sums of one part at seq tokens, at the config's degrees or unsplit (tp = 1). */
static void part_sums(const struct config *c, enum ops_part part, int seq, bool unsplit,
                      struct op_sums *s)
{
    struct ops_par par = ops_par_of(c);
    if (unsplit)
        par = (struct ops_par){.tp = 1, .sp = false};
    struct op_list l;
    op_list_init(&l);
    if (part == PART_LAYER)
        ops_build_layer_par(c, seq, &par, &l);
    else if (part == PART_DENSE || part == PART_MOE)
        ops_build_block_par(c, seq, &par, part == PART_MOE ? BLOCK_MOE : BLOCK_DENSE, &l);
    else if (part == PART_MTP)
        ops_build_mtp(c, seq, &l);
    else if (part == PART_EMBED)
        ops_build_embed_par(c, seq, &par, &l);
    else
        ops_build_head_par(c, seq, &par, &l);
    op_sums_of(c, &l, s);
    op_list_fini(&l);
}

/* The TP collectives' bandwidth of the 2021 estimate: NVLink (cluster.tp_gbps) inside a node,
 * the slower of it and the all-reduce bus between nodes. */
static double legacy_tp_gbps(const struct config *c)
{
    const struct cluster_spec *k = &c->cluster;
    return k->tp <= k->gpus_per_node ? k->tp_gbps : fmin(k->tp_gbps, k->ar_gbps);
}

static double legacy_flops_per_us(const struct config *c)
{
    return c->cluster.device.peak_flops * cost_efficiency(c) * 1e-6;
}

double cost_op_us(const struct config *c, const struct op *o, enum op_pass p)
{
    if (o->kind == OP_COLLECTIVE && (o->overlapped || o->pass != p))
        return 0;
    if (!ops_legacy(c)) { /* the device's time and the framework's launch of the kernel */
        double us = price_op_us(c, o, p);
        return us > 0 ? us + framework_kernel_overhead_us(c) : 0;
    }
    switch (o->kind) {
    case OP_GEMM:
    case OP_GROUPED_GEMM:
    case OP_ATTENTION: {
        double f = op_model_flops(o, p);
        if (o->kind == OP_ATTENTION && o->flash && p == PASS_B)
            f += op_model_flops(o, PASS_FW) / 2;
        return f / legacy_flops_per_us(c);
    }
    case OP_COLLECTIVE:
        return is_tp_coll(o) ? op_coll_bus_factor(o->coll, o->group) * o->bytes /
                                   (legacy_tp_gbps(c) * 1e3)
                             : 0;
    default: return 0; /* memory-bound: inside the fitted layer overhead */
    }
}

double cost_layer_fw_flops(const struct config *c)
{
    return cost_layer_fw_flops_at(c, c->model.seq_length);
}

/* Model FLOPs of the unsplit block, divided by tp (every GEMM and the attention split evenly
 * over the TP group). */
double cost_layer_fw_flops_at(const struct config *c, int seq)
{
    struct op_sums s;
    part_sums(c, PART_LAYER, seq, true, &s);
    return s.fw_flops / c->cluster.tp;
}

double cost_layer_w_flops_at(const struct config *c, int seq)
{
    struct op_sums s;
    part_sums(c, PART_LAYER, seq, true, &s);
    return s.w_flops / c->cluster.tp;
}

double cost_layer_flash_bw_flops_at(const struct config *c, int seq)
{
    struct op_sums s;
    part_sums(c, PART_LAYER, seq, true, &s);
    return s.flash_extra_flops / c->cluster.tp;
}

double cost_layer_w_keep_bytes_at(const struct config *c, int seq)
{
    struct op_sums s;
    part_sums(c, PART_LAYER, seq, false, &s);
    return s.w_keep;
}

double cost_layer_act_bytes(const struct config *c)
{
    return cost_layer_act_bytes_at(c, c->model.seq_length);
}

double cost_layer_act_bytes_at(const struct config *c, int seq)
{
    struct op_sums s;
    part_sums(c, PART_LAYER, seq, false, &s);
    return s.keep;
}

double cost_layer_tp_us(const struct config *c, int seq)
{
    if (c->cluster.tp <= 1)
        return 0;
    struct op_sums s;
    part_sums(c, PART_LAYER, seq, false, &s);
    return s.tp_ring_bytes / (legacy_tp_gbps(c) * 1e3);
}

double cost_layer_params(const struct config *c)
{
    struct op_sums s;
    part_sums(c, PART_LAYER, c->model.seq_length, true, &s);
    return s.params;
}

/* The sums of the blocks [first, first + n): n of the one kind of a dense model, else its
 * dense and MoE blocks each of their kind (model/moe.h moe_layer_is_moe) */
static void stage_layers_sums(const struct config *c, int first, int n, int seq,
                              struct op_sums *out)
{
    struct op_sums L;
    memset(out, 0, sizeof *out);
    int n_moe = moe_layers_in(&c->model, first, n);
    if (n - n_moe > 0) {
        part_sums(c, moe_enabled(&c->model) ? PART_DENSE : PART_LAYER, seq, false, &L);
        op_sums_add(out, &L, n - n_moe);
    }
    if (n_moe > 0) {
        part_sums(c, PART_MOE, seq, false, &L);
        op_sums_add(out, &L, n_moe);
    }
}

/* A stage's parameters and, of them, its routed experts' (sharded over ep x etp, reduced
 * over the expert dp: model/moe.h) */
static double stage_params(const struct config *c, int first, int n, bool embed, bool head,
                           double *experts)
{
    struct op_sums L, M;
    stage_layers_sums(c, first, n, c->model.seq_length, &L);
    *experts = L.expert_params;
    double params = L.params;
    if (head && c->model.moe.mtp_layers > 0) { /* the MTP modules sit after the head */
        part_sums(c, PART_MTP, c->model.seq_length, false, &M);
        params += M.params;
        *experts += M.expert_params;
    }
    return params;
}

double cost_stage_params_at(const struct config *c, int first, int n, bool embed, bool head)
{
    if (ops_legacy(c) || !moe_enabled(&c->model))
        return cost_stage_params(c, n, embed, head);
    double experts;
    return stage_params(c, first, n, embed, head, &experts) +
           cost_stage_params(c, 0, embed, head);
}

/* A dense stage's parameters from its parts' sums: L, E, H unsplit for the 2021 estimate (each
 * / t), per rank otherwise; E and H read only where the stage holds them. */
static double stage_params_of(const struct config *c, const struct op_sums *L,
                              const struct op_sums *E, const struct op_sums *H, int n,
                              bool embed, bool head)
{
    if (ops_legacy(c)) {
        /* the 2021 estimate: the unsplit stage's parameters / t (norms, biases and positions
         * too) */
        double t = c->cluster.tp;
        double params = n * L->params / t;
        if (embed)
            params += E->params / t;
        if (head)
            params += H->params / t;
        return params;
    }
    double params = n * L->params + (embed ? E->params : 0) + (head ? H->params : 0);
    /* a tied head is the embedding's matrix: once where one stage holds both (Megatron keeps a
     * copy on the last stage otherwise, and sums the two copies' gradients) */
    if (embed && head && config_tied_embeddings(&c->model))
        params -= H->head_matrix_params;
    return params;
}

double cost_stage_params(const struct config *c, int n, bool embed, bool head)
{
    int s = c->model.seq_length;
    bool unsplit = ops_legacy(c);
    struct op_sums L, E = {0}, H = {0};
    part_sums(c, PART_LAYER, s, unsplit, &L);
    if (embed)
        part_sums(c, PART_EMBED, s, unsplit, &E);
    if (head)
        part_sums(c, PART_HEAD, s, unsplit, &H);
    return stage_params_of(c, &L, &E, &H, n, embed, head);
}

double cost_efficiency(const struct config *c)
{
    double tokens = (double)c->micro_batch_size * c->model.seq_length;
    double half = c->cluster.eff_half_tokens;
    return c->cluster.device.efficiency * (half > 0 ? tokens / (tokens + half) : 1.0);
}

/* The executor's block for c (model/xformer_layout.h): LLaMA's for SwiGLU, else GPT's; for a
 * config it runs, the same block as exec/interp_check.c's interp_block picks. */
static struct xl_block cost_exec_block(const struct config *c)
{
    const struct model_spec *m = &c->model;
    size_t C = (size_t)m->hidden_size, H = (size_t)m->num_attention_heads;
    struct xl_block b = xl_gpt_block(C, H, (size_t)m->ffn_hidden_size, (size_t)m->vocab_size);
    if (config_mlp(m) == MLP_SWIGLU && H > 0) {
        b.llama = 1;
        b.kvc = (size_t)config_kv_heads(m) * (C / H);
    }
    return b;
}

double cost_layer_act_bytes_exec(const struct config *c, int seq)
{
    struct xl_block b = cost_exec_block(c);
    return 4.0 * (double)xl_block_layer_floats(&b, (size_t)c->micro_batch_size, (size_t)seq);
}

/* The executor's bytes (fp32) from its layout, model/xformer_layout.h: what a FW keeps is the
 * input it keeps anyway plus the full floats; a CFW keeps the input and runs in its scratch; a
 * backward runs in the CPU model's scratch (one head at a time). */
void cost_stage_bytes_exec(const struct config *c, int seq, struct stage_cost *st)
{
    const struct model_spec *m = &c->model;
    struct xl_block b = cost_exec_block(c);
    size_t B = (size_t)c->micro_batch_size, T = (size_t)seq, C = (size_t)m->hidden_size;
    size_t n = (size_t)st->num_layers;
    bool first = st->first_layer == 0, last = st->first_layer + st->num_layers == m->num_layers;
    size_t positions = (size_t)(c->seqlen.max_positions > 0 ? c->seqlen.max_positions
                                                            : m->seq_length);
    double enc = first ? 4.0 * (double)(B * T * C) : 0;
    st->ckpt = (double)xl_kept_bytes(first, last, B, T, C);
    st->layer_act = cost_layer_act_bytes_exec(c, seq);
    st->act = st->ckpt + 4.0 * (double)xl_block_full_floats(&b, first, last, n, B, T);
    st->sel_ckpt = 4.0 * (double)(B * T * C) - enc;
    st->cfw_peak_bytes =
        st->ckpt + 4.0 * (double)xl_block_cfw_scratch_floats(&b, first, last, n, B, T);
    st->bw_work_bytes = 4.0 * (double)xl_block_bw_scratch_floats(&b, B, T, 1);
    st->w_keep = 4.0 * (double)xl_block_w_keep_floats(&b, last, n, B, T);
    st->fw_work_bytes = 0;
    double params = (double)n * (double)xl_block_layer_params(&b);
    if (first)
        params += (double)xl_block_embed_params(&b, positions);
    if (last)
        params += (double)xl_block_head_params(&b);
    st->static_bytes = 16 * params;
}

/* The per-stage figures of one micro-batch before overheads and a calibration: the 2021
 * estimate's arithmetic, each per-layer term a sum over the block's list. */
static void stage_legacy(const struct config *c, const struct op_sums *Lg, const struct op_sums *L,
                         const struct op_sums *Hg, const struct op_sums *H, double layer_tp_us,
                         struct stage_cost *st, double *w_share)
{
    double t = c->cluster.tp, rate = legacy_flops_per_us(c), n = st->num_layers;
    double layer_fw_us = Lg->fw_flops / t / rate;
    double fw = n * (layer_fw_us + layer_tp_us), act = n * L->keep;
    double bw_extra = n * (Lg->flash_extra_flops / t / rate);
    double w_us = n * (Lg->w_flops / t / rate), w_keep = n * L->w_keep;
    if (st->has_head) {
        fw += Hg->fw_flops / t / rate;
        w_us += Hg->w_flops / t / rate;
        act += H->keep;
        w_keep += H->w_keep;
    }
    st->fw = fw;
    st->bw = 2 * fw + bw_extra;
    st->rc = fw;
    st->act = act;
    st->w_keep = w_keep;
    *w_share = w_us / (2 * fw + bw_extra);
}

/* Every op priced by the device model (model/price.h) and summed. */
static void stage_priced(const struct op_sums *L, const struct op_sums *E,
                         const struct op_sums *H, struct stage_cost *st, double *w_share)
{
    /* L: the stage's blocks together (stage_layers_sums), the MTP modules in H */
    double fw = L->fw_us, b = L->b_us, w = L->w_us;
    double act = L->keep, w_keep = L->w_keep;
    st->fw_a2a = L->a2a_fw_us, st->b_a2a = L->a2a_b_us; /* the embedding has no experts */
    st->fw_a2a_bytes = L->a2a_fw_bytes, st->b_a2a_bytes = L->a2a_b_bytes;
    if (st->has_embed) {
        fw += E->fw_us, b += E->b_us, w += E->w_us;
        act += E->keep, w_keep += E->w_keep;
    }
    if (st->has_head) { /* the MTP modules' MoE blocks sit with the head */
        fw += H->fw_us, b += H->b_us, w += H->w_us;
        act += H->keep, w_keep += H->w_keep;
        st->fw_a2a += H->a2a_fw_us, st->b_a2a += H->a2a_b_us;
        st->fw_a2a_bytes += H->a2a_fw_bytes, st->b_a2a_bytes += H->a2a_b_bytes;
    }
    st->fw = fw;
    st->bw = b + w;
    st->rc = fw;
    st->act = act;
    st->w_keep = w_keep;
    st->bw_work_bytes = L->remat; /* a recompute policy's block, while its backward runs */
    *w_share = b + w > 0 ? w / (b + w) : 0;
}

/* Megatron-core's data-parallel overlap (megatron/core/distributed/
 * distributed_data_parallel.py and param_and_grad_buffer.py, Megatron-LM r0.8): with
 * --overlap-grad-reduce the gradient buffer's buckets are reduced (all-reduce, or
 * reduce-scatter under the distributed optimizer) as the last micro-batch's backward fills
 * them (the earlier micro-batches accumulate under no_sync), so the reduction runs under that
 * backward and shows only where it outlasts it; with --overlap-param-gather the distributed
 * optimizer's all-gather of the updated parameters runs bucket by bucket under the next
 * iteration's first forward (a forward pre-hook waits for each bucket), the same rule. */
double cost_dp_exposed_us(const struct config *c, const struct op *o, double us, double bw_us,
                          double fw_us)
{
    double hide = 0;
    if (o->coll == COLL_ALL_GATHER ? framework_hides_param_gather(c) : framework_hides_grad_reduce(c))
        hide = o->coll == COLL_ALL_GATHER ? fw_us : bw_us;
    return us > hide ? us - hide : 0;
}

/* ZeRO-2/3 (model/ops_build_fsdp.c): what a stage's per-unit gathers and reduce-scatters show
 * beyond its compute in one micro-batch's forward and backward, and what they keep. The units
 * in run order: the embedding, the n blocks (each the mean of the stage's), the head; the
 * backward runs them in reverse. Memory: the gathered bf16 copy of the stage (2 bytes a
 * parameter) where it stays over the step, the unsharded gradients (reduce dtype) where
 * they accumulate over the step; else transients: two units' gathered parameters (the one
 * computing and the one prefetched) in a forward or backward that gathers, and one unit's
 * unsharded gradient awaiting its reduce-scatter in a backward. */
static void stage_fsdp(const struct config *c, const struct op_sums *Ls, const struct op_sums *E,
                       const struct op_sums *H, struct stage_cost *st)
{
    struct ops_fsdp f = ops_fsdp_of(c);
    if (f.zero < 2)
        return;
    int n = st->num_layers, units = 0;
    double *before = xcalloc((size_t)n + 2, sizeof *before);
    double *comp = xcalloc((size_t)n + 2, sizeof *comp);
    double *after = xcalloc((size_t)n + 2, sizeof *after);
    double *pre_b = xcalloc((size_t)n + 2, sizeof *pre_b);
    double *comp_b = xcalloc((size_t)n + 2, sizeof *comp_b);
    double biggest = 0; /* the largest unit's parameters */
    const struct op_sums *part[3] = {st->has_embed ? E : NULL, n > 0 ? Ls : NULL,
                                     st->has_head ? H : NULL};
    for (int p = 0; p < 3; p++) {
        if (part[p] == NULL)
            continue;
        int times = p == 1 ? n : 1;
        for (int k = 0; k < times; k++, units++) {
            before[units] = part[p]->fsdp_fw_us / times;
            comp[units] = part[p]->fw_us / times;
            /* the backward in reverse: index units from the end */
            pre_b[units] = part[p]->fsdp_bw_pre_us / times;
            comp_b[units] = (part[p]->b_us + part[p]->w_us) / times;
            after[units] = part[p]->fsdp_bw_post_us / times;
        }
        if (part[p]->params / times > biggest)
            biggest = part[p]->params / times;
    }
    for (int i = 0, j = units - 1; i < j; i++, j--) { /* the backward's order */
        double t;
        t = pre_b[i], pre_b[i] = pre_b[j], pre_b[j] = t;
        t = comp_b[i], comp_b[i] = comp_b[j], comp_b[j] = t;
        t = after[i], after[i] = after[j], after[j] = t;
    }
    st->fsdp_fw_us = fsdp_chain_exposed_us(f.gather_fw ? before : NULL, comp, NULL, units);
    st->fsdp_bw_us = fsdp_chain_exposed_us(f.gather_bw ? pre_b : NULL, comp_b,
                                           f.reduce_mb ? after : NULL, units);
    st->fw += st->fsdp_fw_us;
    st->bw += st->fsdp_bw_us;
    free(before);
    free(comp);
    free(after);
    free(pre_b);
    free(comp_b);
    if (f.params_live)
        st->static_bytes += 2 * st->params;
    if (f.grads_live)
        st->static_bytes += f.grad_bytes * st->params;
    if (f.gather_fw && !f.params_live)
        st->fw_work_bytes += 2 * 2 * biggest;
    if (f.gather_bw && !f.params_live)
        st->bw_work_bytes += 2 * 2 * biggest;
    if (f.reduce_mb)
        st->bw_work_bytes += f.grad_bytes * biggest;
}

/* The step after a stage's last backward (model/ops.h ops_build_step): the gradient reduction
 * over the stage's `group` replicas and the optimizer. The 2021 estimate: a ring over
 * cluster.allreduce_gbps with a latency a hop, 2(n-1)/n x 2 bytes a parameter for the
 * all-reduce (a reduce-scatter and an all-gather (n-1)/n each with the distributed optimizer),
 * and 32 bytes a parameter (sharded: / dp) over HBM; the others price the step's ops. What the
 * framework overlaps (cost_dp_exposed_us) shows only where it outlasts the compute it hides
 * under: bw_us and fw_us, the stage's backward and forward of one micro-batch. */
static void stage_step(const struct config *c, double params, double fp8_params, int group,
                       double bw_us, double fw_us, double *ar, double *os)
{
    const struct cluster_spec *k = &c->cluster;
    struct op_list l;
    op_list_init(&l);
    ops_build_step_fp8(c, params, fp8_params, group, &l);
    *ar = *os = 0;
    for (size_t i = 0; i < l.n; i++) {
        const struct op *o = &l.op[i];
        if (o->kind == OP_MEMORY) {
            *os += ops_legacy(c) ? o->fw_bytes / (k->device.hbm_gbps * 1e3)
                                 : price_op_us(c, o, PASS_FW);
            continue;
        }
        if (!ops_legacy(c)) {
            *ar += cost_dp_exposed_us(c, o, price_op_us(c, o, o->pass), bw_us, fw_us);
            continue;
        }
        double n = o->group;
        double t;
        if (o->coll == COLL_ALL_REDUCE) /* as before, bit for bit */
            t = 2 * (n - 1) / n * o->bytes / (k->ar_gbps * 1e3) + 2 * (n - 1) * k->p2p_lat_us;
        else
            t = (n - 1) / n * o->bytes / (k->ar_gbps * 1e3) + (n - 1) * k->p2p_lat_us;
        *ar += cost_dp_exposed_us(c, o, t, bw_us, fw_us);
    }
    op_list_fini(&l);
}

static int cost_model_compute(const struct config *c, int num_stages, int parts_per_device,
                              int ar_group, struct cost_model *out, struct mt_err *e)
{
    memset(out, 0, sizeof *out);
    if (num_stages < 1) /* more stages than layers: the split's rule says (stage_split.h) */
        return err_set(e, MT_EINVAL, "model.num_layers: %d stages", num_stages);
    const struct model_spec *m = &c->model;
    const struct cluster_spec *k = &c->cluster;
    double b = c->micro_batch_size, s = m->seq_length, h = m->hidden_size;
    bool legacy = ops_legacy(c);
    int seq = m->seq_length;
    /* each part's list built and summed once: per rank, and unsplit for the 2021 FLOPs */
    struct op_sums L, E, H, Lg = {0}, Eg = {0}, Hg = {0};
    part_sums(c, PART_LAYER, seq, false, &L);
    part_sums(c, PART_EMBED, seq, false, &E);
    part_sums(c, PART_HEAD, seq, false, &H);
    if (legacy) {
        part_sums(c, PART_LAYER, seq, true, &Lg);
        part_sums(c, PART_EMBED, seq, true, &Eg);
        part_sums(c, PART_HEAD, seq, true, &Hg);
    }
    double layer_tp_us = k->tp > 1 ? L.tp_ring_bytes / (legacy_tp_gbps(c) * 1e3) : 0;
    /* the checkpoint, and the message a stage sends: its input, 2sbh (sequence-split with
     * SP, as Megatron sends it; the 2021 estimate kept the whole of it) */
    struct ops_par par = ops_par_of(c);
    double ckpt_bytes = 2 * s * b * h;
    if (!legacy && par.sp)
        ckpt_bytes /= par.tp;
    ckpt_bytes /= config_cp(c); /* a CP rank holds s / cp of the tokens */
    double p2p_us = ckpt_bytes / (k->p2p_gbps * 1e3) + k->p2p_lat_us;
    double layer_act = L.keep;
    bool moe = !legacy && moe_enabled(m);
    struct op_sums Mtp = {0};
    if (moe && m->moe.mtp_layers > 0)
        part_sums(c, PART_MTP, seq, false, &Mtp);

    out->unit = c->unit.enabled;
    out->num_stages = num_stages;
    out->parts_per_device = parts_per_device;
    out->stage = xcalloc((size_t)num_stages, sizeof *out->stage);

    /* Which layers each stage holds, and where the embedding and the loss sit: the even split
     * (the remainder to the middle stages) unless the config names Megatron's or torchtitan's
     * rule (model/stage_split.h) */
    int *split_layers = xcalloc((size_t)num_stages, sizeof *split_layers);
    bool *split_ends = xcalloc(2 * (size_t)num_stages, sizeof *split_ends);
    if (stage_split_layers(c, num_stages, split_layers, split_ends, split_ends + num_stages, e) !=
        MT_OK) {
        free(split_layers);
        free(split_ends);
        cost_model_fini(out);
        return MT_EINVAL;
    }
    int layer = 0;
    for (int i = 0; i < num_stages; i++) {
        struct stage_cost *st = &out->stage[i];
        st->first_layer = layer;
        st->num_layers = split_layers[i];
        layer += st->num_layers;
        st->has_embed = split_ends[i];
        st->has_head = split_ends[num_stages + i];
        /* a dense stage's parameters from the parts' sums above (cost_stage_params' rule,
         * not its lists built again a stage) */
        st->params = moe ? cost_stage_params_at(c, st->first_layer, st->num_layers,
                                                st->has_embed, st->has_head)
                         : legacy ? stage_params_of(c, &Lg, &Eg, &Hg, st->num_layers,
                                                    st->has_embed, st->has_head)
                                  : stage_params_of(c, &L, &E, &H, st->num_layers,
                                                    st->has_embed, st->has_head);
        double w_share;
        /* a MoE model's stage: its dense and MoE blocks each of their kind, the MTP modules
         * with the head (model/moe.h); the per-layer figure their mean */
        struct op_sums Ls = {0}, Hs = H;
        double expert_params = 0;
        if (moe) {
            stage_layers_sums(c, st->first_layer, st->num_layers, seq, &Ls);
            if (st->has_head)
                op_sums_add(&Hs, &Mtp, 1);
            stage_params(c, st->first_layer, st->num_layers, st->has_embed, st->has_head,
                         &expert_params);
            if (st->num_layers > 0)
                layer_act = Ls.keep / st->num_layers;
        } else {
            op_sums_add(&Ls, &L, st->num_layers);
        }
        if (legacy)
            stage_legacy(c, &Lg, &L, &Hg, &H, layer_tp_us, st, &w_share);
        else
            stage_priced(&Ls, &E, &Hs, st, &w_share);
        if (c->unit.enabled) {
            /* Chunks split a device's share; Chimera's two parts are whole replicas. */
            double v = config_stages_per_device(c), act = st->act, w_keep = st->w_keep;
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
            st->fw_a2a = st->b_a2a = c->unit.a / v; /* inside F and inside B - W */
            continue;
        }
        st->ckpt = ckpt_bytes;
        st->layer_act = layer_act;
        /* the routed experts' gradients and optimizer state over the expert dp (model/moe.h) */
        st->static_bytes = (st->params - expert_params) * config_bytes_per_param(c) +
                           expert_params * moe_expert_bytes_per_param(c);
        /* FP8 (model/fp8.h): the FP8-run weights' cached copies over their bf16 ones */
        double fp8_p = 0, fp8_e = 0;
        if (fp8_on(c)) {
            fp8_p = Ls.fp8_params + (st->has_embed ? E.fp8_params : 0) +
                    (st->has_head ? Hs.fp8_params : 0);
            fp8_e = Ls.fp8_expert_params + (st->has_head ? Hs.fp8_expert_params : 0);
            st->static_bytes += fp8_p * fp8_weight_extra_bytes(c);
        }
        if (!legacy) /* ZeRO-2/3's per-unit collectives and what they keep */
            stage_fsdp(c, &Ls, &E, &Hs, st);
        st->msg_bytes = ckpt_bytes; /* the stage's input or output, as the checkpoint */
        st->p2p = p2p_us;
        /* Megatron-core's 1F1B without interleaving overlaps the reduce with the last backward on
         * the first pipeline stage only; the others start theirs after their cooldown, in the
         * pipeline's closing bubble (schedules.py, forward_backward_pipelining_without_
         * interleaving: "Other pipeline stages do grad reduction during pipeline bubble",
         * --delay-grad-reduce's default): the simulated schedule has that bubble */
        double hide_bw = i == 0 || parts_per_device > 1 ? st->bw : 0;
        stage_step(c, st->params - expert_params, fp8_p - fp8_e, ar_group, hide_bw, st->fw, &st->ar,
                   &st->os);
        if (expert_params > 0) { /* Chimera's two replicas double the expert group too */
            double ar_e, os_e;
            int group_e = config_expert_dp(c) * (ar_group / (c->cluster.dp > 0 ? c->cluster.dp : 1));
            stage_step(c, expert_params, fp8_e, group_e, 0, 0, &ar_e, &os_e);
            st->ar += ar_e;
            st->os += os_e;
        }
        cost_overhead_apply(c, st); /* framework and launch overheads (model/cost_overhead.c) */
        double act_analytic = st->act;
        profile_apply(&c->profile, c, st); /* a calibration replaces what it measured */
        /* W's share of the backward as the ops give it, of the measured backward too */
        st->w = st->bw * w_share;
        st->b = st->bw - st->w;
        if (act_analytic > 0 && st->act != act_analytic)
            st->w_keep *= st->act / act_analytic;
        if (act_analytic > 0 && st->act != act_analytic) /* measured: its per-layer share */
            st->layer_act *= st->act / act_analytic;
        profile_apply_split(&c->profile, c, st); /* a measured B, W and W's bytes, if any */
        st->sel_ckpt = st->ckpt; /* the input of the checkpointed layers, measured or not */
        st->copy = st->act / (k->host_gbps * 1e3); /* bytes / (GB/s) in us, measured act too */
        /* a calibration that measured a shorter pass than its all-to-alls leaves them the pass */
        st->fw_a2a = fmin(st->fw_a2a, st->fw);
        st->b_a2a = fmin(st->b_a2a, st->b);
    }
    free(split_layers);
    free(split_ends);
    return MT_OK;
}

int cost_model_build(const struct config *c, int num_stages, int parts_per_device, int ar_group,
                     struct cost_model *out, struct mt_err *e)
{
    /* a thread that builds the same costs many times (the tuner) keeps them: the same bits */
    if (cost_cache_lookup(c, num_stages, parts_per_device, ar_group, out))
        return MT_OK;
    TRY(cost_model_compute(c, num_stages, parts_per_device, ar_group, out, e));
    cost_cache_store(c, num_stages, parts_per_device, ar_group, out);
    return MT_OK;
}

void cost_model_fini(struct cost_model *m)
{
    free(m->stage);
    memset(m, 0, sizeof *m);
}
