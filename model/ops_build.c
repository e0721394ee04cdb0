/* model/ops_build.c: the builders of model/ops.h: a transformer block, the embedding and the
 * head listed as the kernels they run, in order, with their per-rank shapes (llm.c's
 * train_gpt2.c lists a GPT-2 layer the same way: layernorm, matmul qkv, attention, matmul
 * proj, residual, layernorm, matmul fc, gelu, matmul fcproj, residual).
 *
 * The parallel degrees divide the shapes in one place, ops_shape_of(); a builder never divides
 * by tp itself. Tensor parallelism is Megatron-LM's (Shoeybi et al. 2019, §3): QKV and fc1
 * (gate+up) are column-parallel (their heads and FFN columns split over tp), the output
 * projection and fc2 (down) row-parallel; the f/g operators put an all-reduce after each
 * row-parallel GEMM in the forward and after each column-parallel GEMM's input gradient in the
 * backward. Sequence parallelism (Korthikanti et al. 2022, §4.2.2) turns each all-reduce into a
 * reduce-scatter and the entry of each sublayer into an all-gather (the same ring bytes), and
 * splits the replicated activations (norms, dropout, residuals) over tp.
 *
 * Kept bytes follow Korthikanti et al. Table 2 (2-byte activations): per op, the tensors its
 * backward reads, which model/cost.h sums into a layer's activations. */
#include <config.h>
#include "model/ops.h"

#include <math.h>
#include <string.h>

#include "model/config.h"
#include "model/fp8.h"
#include "model/moe.h"
#include "model/ops_shape.h"

struct ops_par ops_par_of(const struct config *c)
{
    struct ops_par p = {.tp = c->cluster.tp > 0 ? c->cluster.tp : 1,
                        .sp = c->sequence_parallel && c->cluster.tp > 1, .cp = config_cp(c),
                        .ep = config_ep(c), .etp = config_etp(c)};
    return p;
}

bool ops_legacy(const struct config *c)
{
    return config_framework(c) == FRAMEWORK_MEGATRON_DS_2021;
}

double ops_vocab_size(const struct config *c, const struct ops_par *par)
{
    /* Megatron-LM's _vocab_size_with_padding: up to a multiple of
     * make_vocab_size_divisible_by x tp, so that every rank's rows are equal and aligned */
    if (ops_legacy(c) && c->vocab_divisible_by == 0)
        return c->model.vocab_size; /* the 2021 estimate: V / t rows a rank, unpadded */
    double multiple = (double)config_vocab_divisible_by(c) * (par->tp > 0 ? par->tp : 1);
    return ceil(c->model.vocab_size / multiple) * multiple;
}

enum op_link ops_link_of(const struct config *c, enum op_group g, int ranks)
{
    /* Megatron-LM's rank order (parallel_state.py): tp innermost, so a TP group is `ranks`
     * consecutive GPUs; the other groups' members are tp apart. */
    int stride = g == GROUP_TP ? 1 : (c->cluster.tp > 0 ? c->cluster.tp : 1);
    long span = (long)stride * ranks;
    return span <= c->cluster.gpus_per_node ? LINK_NVLINK : LINK_NETWORK;
}

void ops_shape_of(const struct config *c, int seq, const struct ops_par *par,
                         struct shape *sh)
{
    const struct model_spec *m = &c->model;
    memset(sh, 0, sizeof *sh);
    sh->tp = par->tp > 0 ? par->tp : 1;
    sh->sp = par->sp && sh->tp > 1;
    sh->t = sh->tp;
    sh->b = c->micro_batch_size;
    /* context parallelism splits every activation's tokens over cp (Megatron-core's
     * get_batch_on_this_cp_rank); the attention sees the whole sequence (ops_build_cp.c) */
    sh->cp = ops_cp_of(c);
    sh->cp.cp = par->cp > 1 ? par->cp : 1;
    sh->s_full = seq;
    sh->s = sh->cp.cp > 1 ? seq / (double)sh->cp.cp : seq;
    sh->tokens = sh->b * sh->s;
    sh->tok_r = sh->sp ? sh->tokens / sh->t : sh->tokens;
    sh->h = m->hidden_size;
    sh->d = config_head_dim(m);
    sh->heads = m->num_attention_heads / sh->t;
    sh->kv_heads = config_kv_heads(m) / sh->t;
    sh->q_w = sh->heads * sh->d;
    sh->kv_w = sh->kv_heads * sh->d;
    sh->ffn = m->ffn_hidden_size / sh->t;
    sh->vocab = ops_vocab_size(c, par) / sh->t;
    sh->legacy = ops_legacy(c);
    sh->dtype = m->paper_stack ? OP_FP16 : OP_BF16;
    sh->e = op_dtype_bytes(sh->dtype);
    sh->tp_link = ops_link_of(c, GROUP_TP, sh->tp);
    sh->mlp = config_mlp(m);
    sh->norm = config_norm(m);
    sh->bias = config_bias(m);
    /* GPT (Megatron-LM's --hidden-dropout / --attention-dropout 0.1); LLaMA trains without */
    sh->dropout = m->arch == ARCH_GPT3;
    sh->rotary = m->arch == ARCH_LLAMA2;
    sh->qk_norm = m->qk_norm != QK_NORM_NONE;
    sh->qk_norm_whole = m->qk_norm == QK_NORM_WHOLE;
    sh->flash = config_attention(c) == ATTN_FLASH;
    sh->fp8 = fp8_rules_of(c); /* all zero with FP8 off (config_validate_fp8 refuses it in 2021) */
    /* Megatron-core's SwiGLU is its fused autograd function (megatron/core/fusions/
     * fused_bias_swiglu.py SwiGLUFunction, on by default: --no-bias-swiglu-fusion turns it
     * off): it saves only its input [gate | up] and recomputes silu(gate) in the backward.
     * torchtitan's eager silu(w1 x) * w3 x keeps silu(gate) too, as does the paper's 2021 stack
     * as priced before. */
    sh->swiglu_fused = config_framework(c) == FRAMEWORK_MEGATRON_CORE;
    moe_shape_of(c, par, sh); /* the experts' and MLA's shares (model/ops_build_moe.c) */
}

/* ---- one record of each kind --------------------------------------------------------------- */

struct op *ops_push_gemm(struct op_list *l, const struct shape *sh, enum op_site site,
                            const char *name, const char *source, double m, double n, double k,
                            double params, double keep)
{
    struct op o = {.kind = OP_GEMM, .name = name, .source = source, .site = site,
                   .dtype = sh->dtype, .m = m, .n = n, .k = k, .count = 1, .weight = true,
                   .params = params, .keep_bytes = keep};
    /* what its B leaves for its W: the input (m x k) and the output's gradient (m x n) */
    o.w_keep_bytes = sh->e * m * k + sh->e * m * n;
    return op_list_push(l, &o);
}

struct op *ops_push_mem(struct op_list *l, const struct shape *sh, enum op_site site,
                           const char *name, const char *source, double fw_bytes,
                           double bw_bytes, double params, double keep)
{
    struct op o = {.kind = OP_MEMORY, .name = name, .source = source, .site = site,
                   .dtype = sh->dtype, .fw_bytes = fw_bytes, .bw_bytes = bw_bytes,
                   .params = params, .keep_bytes = keep};
    return op_list_push(l, &o);
}

void ops_push_tp_coll(struct op_list *l, const struct shape *sh, enum op_site site,
                         const char *name, enum op_coll coll, double bytes, enum op_pass pass,
                         bool overlapped)
{
    if (sh->tp <= 1)
        return;
    struct op o = {.kind = OP_COLLECTIVE, .name = name, .site = site, .dtype = sh->dtype,
                   .coll = coll, .group_kind = GROUP_TP, .bytes = bytes, .group = sh->tp,
                   .link = sh->tp_link, .pass = pass, .overlapped = overlapped,
                   .source = "Megatron-LM f/g operators (Shoeybi et al. 2019, §3); with sequence "
                             "parallelism all-gather + reduce-scatter (Korthikanti et al. 2022, "
                             "§4.2.2); NCCL ring bus factors"};
    op_list_push(l, &o);
}

/* A sublayer's entry and exit over the TP group, forward and backward: without sequence
 * parallelism an all-reduce of the output (g, forward) and of the input gradient (f,
 * backward); with it an all-gather at the entry and a reduce-scatter at the exit, mirrored in
 * the backward, plus the backward's all-gather of the input again for the weight gradient,
 * which Megatron overlaps with the input-gradient GEMM (Korthikanti §4.2.3). */
void ops_push_tp_entry(struct op_list *l, const struct shape *sh, enum op_site site,
                          const char *fw_name, const char *bw_name, const char *regather_name)
{
    double full = sh->e * sh->tokens * sh->h; /* the sublayer's whole input, 2sbh */
    if (sh->sp) {
        ops_push_tp_coll(l, sh, site, fw_name, COLL_ALL_GATHER, full, PASS_FW, false);
        ops_push_tp_coll(l, sh, site, bw_name, COLL_REDUCE_SCATTER, full, PASS_B, false);
        ops_push_tp_coll(l, sh, site, regather_name, COLL_ALL_GATHER, full, PASS_B, true);
    } else {
        ops_push_tp_coll(l, sh, site, bw_name, COLL_ALL_REDUCE, full, PASS_B, false);
    }
}

void ops_push_tp_exit(struct op_list *l, const struct shape *sh, const char *fw_name,
                         const char *bw_name)
{
    double full = sh->e * sh->tokens * sh->h;
    if (sh->sp) {
        ops_push_tp_coll(l, sh, SITE_LAYER, fw_name, COLL_REDUCE_SCATTER, full, PASS_FW, false);
        ops_push_tp_coll(l, sh, SITE_LAYER, bw_name, COLL_ALL_GATHER, full, PASS_B, false);
    } else {
        ops_push_tp_coll(l, sh, SITE_LAYER, fw_name, COLL_ALL_REDUCE, full, PASS_FW, false);
    }
}

/* A norm over the replicated tokens: reads x, writes y (the backward reads x, dy and writes
 * dx); keeps its input. Layer norm has a weight and a bias, RMSNorm a weight. */
void ops_push_norm(struct op_list *l, const struct shape *sh, enum op_site site,
                      const char *name, double keep)
{
    double x = sh->e * sh->tok_r * sh->h;
    bool ln = sh->norm == NORM_LAYERNORM;
    ops_push_mem(l, sh, site, name,
             ln ? "layer norm (Ba et al. 2016): reads x, writes y; keeps x (Korthikanti Table 2)"
                : "RMSNorm (Zhang & Sennrich 2019): reads x, writes y; keeps x",
             2 * x, 3 * x, (ln ? 2 : 1) * sh->h, keep);
}

void ops_push_dropout(struct op_list *l, const struct shape *sh, const char *name)
{
    if (!sh->dropout)
        return;
    double n = sh->tok_r * sh->h; /* a 1-byte mask an element */
    ops_push_mem(l, sh, SITE_LAYER, name,
             "dropout: reads x, writes y and a 1-byte mask it keeps (Korthikanti Table 2: sbh)",
             2 * sh->e * n + n, 2 * sh->e * n + n, 0, n);
}

void ops_push_residual(struct op_list *l, const struct shape *sh, const char *name)
{
    double x = sh->e * sh->tok_r * sh->h;
    ops_push_mem(l, sh, SITE_LAYER, name,
             "residual add: reads two rows, writes one; the backward sums the two gradients "
             "at the fork; keeps nothing",
             3 * x, 3 * x, 0, 0);
}

/* ---- the block ----------------------------------------------------------------------------- */

void ops_build_attention(struct op_list *l, const struct shape *sh)
{
    double T = sh->tokens, e = sh->e, h = sh->h;
    bool qkv_bias = sh->bias == BIAS_QKV || sh->bias == BIAS_ALL;
    double qkv_n = sh->q_w + 2 * sh->kv_w;

    ops_push_norm(l, sh, SITE_LAYER, "attn_norm", e * sh->tok_r * h);
    ops_push_tp_entry_linear(l, sh, SITE_LAYER, "tp_gather_attn", "tp_reduce_attn_dx",
                             "tp_regather_attn");
    ops_push_norm_linear(l, sh, SITE_LAYER, "qkv",
              "column-parallel linear [q | k | v]: 2mnk, K/V narrower with GQA (Ainslie et al. "
              "2023); keeps its input (Korthikanti Table 2: 2sbh)",
              T, qkv_n, h, h * qkv_n + (qkv_bias ? qkv_n : 0), e * sh->tok_r * h);
    if (sh->qk_norm) {
        double qk = e * T * (sh->q_w + sh->kv_w);
        ops_push_mem(l, sh, SITE_LAYER, "qk_norm",
                 "RMSNorm of q and k, per head (Qwen3: a head_dim weight each) or over the whole "
                 "projection (OLMo 2: q and k widths): reads and writes q, k; keeps them",
                 2 * qk, 3 * qk, sh->qk_norm_whole ? sh->q_w + sh->kv_w : 2 * sh->d, qk);
    }
    if (sh->rotary) {
        double qk = e * T * (sh->q_w + sh->kv_w);
        ops_push_mem(l, sh, SITE_LAYER, "rotary",
                 "rotary position embedding of q and k (Su et al. 2021): reads and writes q, k; "
                 "no parameters, keeps nothing (the attention keeps the rotated q, k)",
                 2 * qk, 2 * qk, 0, 0);
    }
    /* the attention core keeps q, k, v (Korthikanti: QK^T 4sbh, V 2sbh; GQA narrows k and v) */
    double qkv_keep = e * T * (sh->q_w + 2 * sh->kv_w);
    struct op core = {.kind = OP_ATTENTION, .name = "core_attn", .site = SITE_LAYER,
                      .dtype = sh->dtype, .batch = sh->b, .s_q = sh->s_full, .s_kv = sh->s_full,
                      .heads = sh->heads, .kv_heads = sh->kv_heads, .head_dim = sh->d,
                      .head_dim_v = sh->d, .causal = true, .flash = sh->flash};
    if (sh->flash) {
        /* O and the fp32 log-sum-exp of each row are what FlashAttention keeps (Dao et al. 2022,
         * §3.1, Alg. 2); O is the projection's input, counted there */
        core.keep_bytes = qkv_keep + 4 * sh->b * sh->heads * sh->s;
        core.source = "FlashAttention-2 (Dao 2023): fw 4 b a s_q s_kv d (causal: the lower "
                      "triangle), bw 2.5x (S recomputed); keeps q, k, v and the fp32 lse 4asb";
        ops_build_cp_attention(&sh->cp, &core, l); /* core itself at cp 1 */
    } else {
        core.keep_bytes = qkv_keep;
        core.source = "eager attention: Q K^T and P V as batched GEMMs over the whole s x s "
                      "square (the mask applied after); bw 2x; keeps q, k, v";
        op_list_push(l, &core);
        double sq = sh->b * sh->heads * sh->s * sh->s; /* score elements of this rank */
        ops_push_mem(l, sh, SITE_LAYER, "attn_softmax",
                 "masked softmax of the scores: reads S, writes P; keeps P (Korthikanti Table 2: "
                 "2as^2b)",
                 2 * e * sq, 3 * e * sq, 0, e * sq);
        if (sh->dropout)
            ops_push_mem(l, sh, SITE_LAYER, "attn_dropout",
                     "dropout of P: a 1-byte mask and its output kept (Korthikanti Table 2: "
                     "as^2b + 2as^2b)",
                     2 * e * sq + sq, 2 * e * sq + sq, 0, sq + e * sq);
    }
    ops_push_linear(l, sh, SITE_LAYER, "proj",
              "row-parallel linear, attention output: 2mnk; keeps its input (2sbh/t)", T, h,
              sh->q_w, sh->q_w * h + (sh->bias == BIAS_ALL ? h : 0), e * T * sh->q_w);
    ops_push_tp_exit(l, sh, "tp_reduce_attn", "tp_gather_attn_dy");
    ops_push_dropout(l, sh, "attn_out_dropout");
    ops_push_residual(l, sh, "attn_residual");
}

void ops_build_dense_mlp(struct op_list *l, const struct shape *sh)
{
    double T = sh->tokens, e = sh->e, h = sh->h, f = sh->ffn;
    bool bias = sh->bias == BIAS_ALL;
    ops_push_norm(l, sh, SITE_LAYER, "mlp_norm", e * sh->tok_r * h);
    ops_push_tp_entry_linear(l, sh, SITE_LAYER, "tp_gather_mlp", "tp_reduce_mlp_dx",
                             "tp_regather_mlp");
    if (sh->mlp == MLP_GELU) {
        ops_push_norm_linear(l, sh, SITE_LAYER, "fc1",
                  "column-parallel linear h -> f: 2mnk; keeps its input (2sbh)", T, f, h,
                  h * f + (bias ? f : 0), e * sh->tok_r * h);
        ops_push_mem(l, sh, SITE_LAYER, "gelu",
                 "GELU (Hendrycks & Gimpel 2016): reads and writes b s f; keeps its input "
                 "(Korthikanti Table 2: 8sbh at f = 4h)",
                 2 * e * T * f, 3 * e * T * f, 0, e * T * f);
        ops_push_linear(l, sh, SITE_LAYER, "fc2",
                  "row-parallel linear f -> h: 2mnk; keeps its input (the GELU's output)", T, h, f,
                  f * h + (bias ? h : 0), e * T * f);
    } else {
        bool geglu = sh->mlp == MLP_GEGLU;
        ops_push_norm_linear(l, sh, SITE_LAYER, "gate_up",
                  "column-parallel linear h -> [gate | up] 2f (Shazeer 2020, GLU variants: three "
                  "matrices in all): 2mnk; keeps its input",
                  T, 2 * f, h, 2 * h * f + (bias ? 2 * f : 0), e * sh->tok_r * h);
        /* keeps gate and up, and act(gate): 3 x 2sbf (with the product below, 8sbf); the
         * fused SwiGLU gate and up only, 2 x 2sbf */
        bool fused = !geglu && sh->swiglu_fused;
        ops_push_mem(l, sh, SITE_LAYER, geglu ? "geglu" : "swiglu",
                 geglu ? "GeGLU: gelu(gate) x up: reads gate, up, writes the product; keeps gate, "
                         "up and gelu(gate)"
                 : fused ? "SwiGLU, fused (Megatron-core SwiGLUFunction): silu(gate) x up: reads "
                           "gate, up, writes the product; keeps gate and up (silu recomputed)"
                         : "SwiGLU: silu(gate) x up: reads gate, up, writes the product; keeps "
                           "gate, up and silu(gate)",
                 3 * e * T * f, 5 * e * T * f, 0, (fused ? 2 : 3) * e * T * f);
        ops_push_linear(l, sh, SITE_LAYER, "down",
                  "row-parallel linear f -> h: 2mnk; keeps its input (the product)", T, h, f,
                  f * h + (bias ? h : 0), e * T * f);
    }
    ops_push_tp_exit(l, sh, "tp_reduce_mlp", "tp_gather_mlp_dy");
    ops_push_dropout(l, sh, "mlp_out_dropout");
    ops_push_residual(l, sh, "mlp_residual");
}

/* ZeRO-2/3: the ops [from, n) of out are one FSDP unit: its collectives after them
 * (model/ops_build_fsdp.c) */
static void fsdp_unit_of(const struct config *c, struct op_list *out, size_t from)
{
    struct ops_fsdp f = ops_fsdp_of(c);
    if (f.zero < 2)
        return;
    double params = 0;
    for (size_t i = from; i < out->n; i++)
        params += out->op[i].params;
    if (out->n > from)
        ops_build_fsdp_unit(&f, out->op[from].site, params, out);
}

void ops_build_block_par(const struct config *c, int seq, const struct ops_par *par,
                         enum ops_block kind, struct op_list *out)
{
    struct shape sh;
    size_t from = out->n;
    ops_shape_of(c, seq, par, &sh);
    if (sh.mla)
        ops_build_mla(out, &sh);
    else
        ops_build_attention(out, &sh);
    if (kind == BLOCK_MOE && sh.experts > 0)
        ops_build_moe_mlp(out, &sh);
    else
        ops_build_dense_mlp(out, &sh);
    ops_apply_recompute(c, &sh, out, from); /* the config's policy (model/ops_recompute.c) */
    fsdp_unit_of(c, out, from);
}

void ops_build_layer_par(const struct config *c, int seq, const struct ops_par *par,
                         struct op_list *out)
{
    ops_build_block_par(c, seq, par, moe_enabled(&c->model) ? BLOCK_MOE : BLOCK_DENSE, out);
}

void ops_build_block(const struct config *c, int seq, enum ops_block kind, struct op_list *out)
{
    struct ops_par p = ops_par_of(c);
    ops_build_block_par(c, seq, &p, kind, out);
}

/* ---- the ends ------------------------------------------------------------------------------ */

void ops_build_embed_par(const struct config *c, int seq, const struct ops_par *par,
                         struct op_list *out)
{
    struct shape sh;
    size_t from = out->n;
    ops_shape_of(c, seq, par, &sh);
    const struct model_spec *m = &c->model;
    double x = sh.e * sh.tok_r * sh.h;
    bool positions = m->arch == ARCH_GPT3; /* GPT's learned positions; LLaMA's RoPE has none */
    double rows = c->seqlen.max_positions > 0 ? c->seqlen.max_positions : m->seq_length;
    /* the vocabulary-parallel table (Megatron VocabParallelEmbedding): each rank looks up the
     * tokens of its rows, zeros elsewhere, and the TP group sums them */
    double params = sh.vocab * sh.h + (positions ? rows * sh.h : 0);
    ops_push_mem(out, &sh, SITE_EMBED, "embed",
             positions ? "token + learned position embedding lookup: reads two rows, writes one "
                         "(GPT-2); the backward scatters the gradient rows; keeps nothing"
                       : "token embedding lookup: reads a row, writes it; keeps nothing",
             (positions ? 3 : 2) * x, 3 * x, params, 0);
    double full = sh.e * sh.tokens * sh.h;
    ops_push_tp_coll(out, &sh, SITE_EMBED, "tp_reduce_embed",
                 sh.sp ? COLL_REDUCE_SCATTER : COLL_ALL_REDUCE, full, PASS_FW, false);
    if (sh.sp)
        ops_push_tp_coll(out, &sh, SITE_EMBED, "tp_gather_embed_dy", COLL_ALL_GATHER, full, PASS_B,
                     false);
    fsdp_unit_of(c, out, from);
}

void ops_build_head_par(const struct config *c, int seq, const struct ops_par *par,
                        struct op_list *out)
{
    struct shape sh;
    size_t from = out->n;
    ops_shape_of(c, seq, par, &sh);
    double T = sh.tokens, e = sh.e, h = sh.h, V = sh.vocab;
    /* The 2021 estimate counted the final norm as 2h whatever its kind and kept only the
     * logits of the head; the paper's presets keep that (its figures are Table 5's). */
    double norm_params = sh.legacy || sh.norm == NORM_LAYERNORM ? 2 * h : h;
    double x_keep = sh.legacy ? 0 : e * sh.tok_r * h;
    ops_push_mem(out, &sh, SITE_HEAD, "final_norm",
             sh.norm == NORM_LAYERNORM ? "final layer norm: reads x, writes y; keeps x"
                                       : "final RMSNorm: reads x, writes y; keeps x",
             2 * e * sh.tok_r * h, 3 * e * sh.tok_r * h, norm_params, x_keep);
    ops_push_tp_entry(out, &sh, SITE_HEAD, "tp_gather_head", "tp_reduce_head_dx", "tp_regather_head");
    /* its own matrix; a tied one is the embedding's, counted once where both ends are on one
     * stage (model/cost.c) */
    ops_push_gemm(out, &sh, SITE_HEAD, "lm_head",
              "column-parallel linear h -> V/t (vocabulary-parallel): 2mnk; keeps its input",
              T, V, h, V * h, x_keep);
    double n = T * V;
    if (config_ce_fusion(c))
        /* the fused kernel (Megatron --cross-entropy-loss-fusion with Transformer Engine's
         * parallel_cross_entropy): reads the bf16 logits for the log-sum-exp, writes the
         * gradient over them in the forward; the backward only scales it */
        ops_push_mem(out, &sh, SITE_HEAD, "cross_entropy",
                 "vocabulary-parallel cross-entropy, fused (Megatron --cross-entropy-loss-fusion,"
                 " TE parallel_cross_entropy): the gradient written over the bf16 logits in the "
                 "forward; keeps them, 2sbV/t, no fp32 copy",
                 3 * e * n, 2 * e * n, 0, e * n);
    else
        /* Megatron's VocabParallelCrossEntropy: the logits cast to fp32, exp'd and normalised
         * in place, the fp32 softmax kept for the backward (4sbV/t) */
        ops_push_mem(out, &sh, SITE_HEAD, "cross_entropy",
                 "vocabulary-parallel cross-entropy, unfused (Megatron VocabParallelCrossEntropy):"
                 " logits to fp32, softmax in place; keeps the fp32 softmax 4sbV/t",
                 2 * n + 4 * n + 4 * 4 * n, 4 * n + 4 * n + 2 * n, 0, 4 * n);
    /* the max and the sum of exponents (and the target's logit) summed over the TP group */
    ops_push_tp_coll(out, &sh, SITE_HEAD, "tp_reduce_ce", COLL_ALL_REDUCE, 3 * 4 * T, PASS_FW, false);
    fsdp_unit_of(c, out, from);
}

/* The step of ZeRO-2 and -3, and of ZeRO-1 over a shard group smaller than dp (HSDP's): what
 * runs once a step (model/ops_build_fsdp.c says when) over the shard group, the replicas'
 * all-reduce of the shard, and the optimizer over the shard. */
static void fsdp_step(const struct config *c, double params, struct op_list *out)
{
    struct ops_fsdp f = ops_fsdp_of(c);
    struct op o = {.kind = OP_COLLECTIVE, .site = SITE_STEP, .group_kind = GROUP_DP,
                   .group = f.shard, .link = f.shard_link, .pass = PASS_W,
                   .dtype = f.grad_bytes == 4 ? OP_FP32 : OP_BF16};
    bool reduce = f.zero == 1 || f.reduce_step;
    if (reduce && f.shard > 1) {
        o.name = "dp_reduce_scatter_grads";
        o.coll = COLL_REDUCE_SCATTER;
        o.bytes = f.grad_bytes * params;
        o.source = f.zero == 3 ? "FSDP under PP: the accumulated gradients reduce-scattered "
                                 "once, after the last backward (torch.distributed.pipelining "
                                 "stage.py run_post_backward); NCCL ring (n-1)/n"
                               : "distributed optimizer over the shard group: gradients "
                                 "reduce-scattered; NCCL ring (n-1)/n";
        op_list_push(out, &o);
    }
    if (reduce && f.replicate > 1) {
        struct op r = o;
        r.name = "dp_replica_all_reduce";
        r.coll = COLL_ALL_REDUCE;
        r.bytes = f.grad_bytes * params / f.shard;
        r.group = f.replicate;
        r.link = f.replicate_link;
        r.source = "HSDP: the reduce-scattered shard all-reduced over the replicas";
        op_list_push(out, &r);
    }
    if ((f.zero <= 2 || f.gather_step) && f.shard > 1) {
        o.name = f.zero == 3 ? "fsdp_gather_step" : "dp_all_gather_params";
        o.coll = COLL_ALL_GATHER;
        o.bytes = 2 * params;
        o.dtype = OP_BF16;
        o.source = f.zero == 3 ? "FSDP under PP without resharding: the stage's bf16 parameters "
                                 "gathered once a step, by its first forward"
                               : "ZeRO-1/2: the updated bf16 parameters all-gathered over the "
                                 "shard group";
        op_list_push(out, &o);
    }
    struct op opt = {.kind = OP_MEMORY, .name = "optimizer", .site = SITE_STEP,
                     .dtype = OP_FP32, .fw_bytes = 32 * params / f.shard,
                     .source = "Adam step over the fp32 state of this rank's shard: 32 bytes of "
                               "HBM a parameter / the shard group"};
    op_list_push(out, &opt);
}

void ops_build_step(const struct config *c, double params, int group, struct op_list *out)
{
    ops_build_step_fp8(c, params, 0, group, out);
}

void ops_build_step_fp8(const struct config *c, double params, double fp8_params, int group,
                        struct op_list *out)
{
    double grad = config_grad_reduce_fp32(c) ? 4 : 2; /* bytes a gradient */
    enum op_link link = ops_link_of(c, GROUP_DP, group);
    struct op o = {.kind = OP_COLLECTIVE, .site = SITE_STEP, .group_kind = GROUP_DP,
                   .group = group, .link = link, .pass = PASS_W,
                   .dtype = grad == 4 ? OP_FP32 : OP_BF16};
    int zero = config_zero_stage(c);
    if (zero >= 2 || (zero == 1 && c->cluster.dp_shard > 0)) {
        fsdp_step(c, params, out);
        return;
    }
    bool sharded = zero >= 1 && group > 1;
    if (sharded) {
        /* Megatron's distributed optimizer (docs/source/distrib_optimizer.md): the gradient
         * buffer reduce-scattered, each rank steps its 1/dp of the fp32 state, the updated
         * bf16 parameters all-gathered */
        o.name = "dp_reduce_scatter_grads";
        o.coll = COLL_REDUCE_SCATTER;
        o.bytes = grad * params;
        o.source = "distributed optimizer: gradients reduce-scattered over dp (Megatron-LM "
                   "distrib_optimizer.md); NCCL ring (n-1)/n";
        op_list_push(out, &o);
        o.name = "dp_all_gather_params";
        o.coll = COLL_ALL_GATHER;
        o.bytes = 2 * params;
        o.dtype = OP_BF16;
        o.source = "distributed optimizer: the updated bf16 parameters all-gathered over dp";
        if (c->cluster.fp8_param_gather && fp8_params > 0) {
            /* Megatron --fp8-param-gather: the FP8-run weights gathered in FP8 (model/fp8.h) */
            o.bytes = 2 * (params - fp8_params) + fp8_rules_of(c).weight_bytes * fp8_params;
            o.dtype = OP_FP8;
            o.source = "distributed optimizer with --fp8-param-gather: the FP8-run weights "
                       "all-gathered over dp in FP8, the others in bf16";
        }
        op_list_push(out, &o);
    } else if (group > 1) {
        o.name = "dp_all_reduce_grads";
        o.coll = COLL_ALL_REDUCE;
        o.bytes = grad * params;
        o.source = "data-parallel gradient all-reduce (fp32 with "
                   "--accumulate-allreduce-grads-in-fp32); NCCL ring 2(n-1)/n";
        op_list_push(out, &o);
    }
    /* Adam on fp32 master weights: reads and writes the master weight, m and v, reads the
     * gradient, writes the bf16 copy: ~32 bytes of HBM traffic a parameter it updates */
    double shard = sharded ? group : 1;
    struct op opt = {.kind = OP_MEMORY, .name = "optimizer", .site = SITE_STEP,
                     .dtype = OP_FP32, .fw_bytes = 32 * params / shard,
                     .source = "Adam step over the fp32 state: 32 bytes of HBM a parameter "
                               "(sharded over dp with the distributed optimizer)"};
    op_list_push(out, &opt);
    if (fp8_params > 0 && fp8_on(c)) {
        /* the FP8 weights' cast once an iteration: Megatron-core passes TE is_first_microbatch,
         * so the first micro-batch quantizes each weight and the others reuse the cached copies
         * (model/fp8.c fp8_weight_cast_bytes) */
        struct op cast = {.kind = OP_MEMORY, .name = "fp8_weight_cast", .site = SITE_STEP,
                          .dtype = OP_FP8, .fw_bytes = fp8_weight_cast_bytes(c) * fp8_params,
                          .source = "FP8 weight quantization, once an iteration (TE's weight "
                                    "cache across micro-batches): reads bf16, writes the "
                                    "recipe's copies"};
        op_list_push(out, &cast);
    }
}

void ops_build_layer(const struct config *c, int seq, struct op_list *out)
{
    struct ops_par p = ops_par_of(c);
    ops_build_layer_par(c, seq, &p, out);
}

void ops_build_embed(const struct config *c, int seq, struct op_list *out)
{
    struct ops_par p = ops_par_of(c);
    ops_build_embed_par(c, seq, &p, out);
}

void ops_build_head(const struct config *c, int seq, struct op_list *out)
{
    struct ops_par p = ops_par_of(c);
    ops_build_head_par(c, seq, &p, out);
}
