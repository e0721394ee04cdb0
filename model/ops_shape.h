/* model/ops_shape.h: the per-rank shapes and the record helpers the builders share
 * (model/ops_build.c: the dense block, the ends, the step; model/ops_build_moe.c: the MoE
 * sublayer and the MTP block; model/ops_build_mla.c: multi-head latent attention). Private to
 * those files: everything else sees model/ops.h. The parallel degrees divide the shapes in
 * ops_shape_of() only. */
#ifndef MT_MODEL_OPS_SHAPE_H
#define MT_MODEL_OPS_SHAPE_H

#include <stdbool.h>

#include "model/config.h"
#include "model/fp8.h"
#include "model/ops.h"

/* One rank's shapes of a block of c's model (the only place the degrees divide). */
struct shape {
    double b, s, tokens; /* micro-batch samples, tokens per sample, b s */
    double h;            /* hidden size (a row of the residual stream) */
    double t;            /* tensor-parallel degree */
    double tok_r;        /* tokens of the replicated activations on a rank: b s / t with
                          * sequence parallelism, else b s */
    double heads, kv_heads, d; /* this rank's query and K/V heads, the head dimension */
    double q_w, kv_w;    /* this rank's query and K/V widths: heads d, kv_heads d */
    double ffn;          /* this rank's FFN width */
    double vocab;        /* this rank's vocabulary rows (ops_vocab_size / t) */
    double e;            /* bytes of an activation element (bf16 or the paper's fp16) */
    int tp;
    bool sp;
    enum op_link tp_link;
    enum op_dtype dtype;
    enum mlp_kind mlp;
    enum norm_kind norm;
    enum bias_kind bias;
    bool dropout, rotary, qk_norm, qk_norm_whole, flash, legacy;
    bool swiglu_fused;   /* the dense SwiGLU keeps only its input (Megatron-core's fused one) */
    double s_full;       /* the sample's whole sequence (s is this CP rank's s / cp of it) */
    struct ops_cp cp;    /* context parallelism (model/ops_build_cp.c) */
    /* Mixture of experts (model/moe.h): the expert groups, Megatron's etp x ep x edp fold */
    int ep, etp;
    enum op_link ep_link, etp_link;
    double experts;      /* routed experts on this rank: E / ep */
    double topk;         /* k */
    double moe_ffn;      /* this rank's slice of one expert's width: moe_ffn_hidden_size / etp */
    double shared_ffn;   /* this rank's slice of the shared experts: their width / tp */
    double tok_moe;      /* tokens entering the MoE sublayer on this rank: tok_r (the router
                          * reads the sequence-split tokens; Megatron requires SP with ep and
                          * tp, moe_validate) */
    double routed;       /* token copies this rank's experts compute: tok_moe k x etp x the
                          * routing skew (or the capacity factor, the smaller) */
    double routed_skew;  /* that factor: routed / (tok_moe k etp) */
    bool fp8_dispatch;   /* model.moe.fp8_dispatch */
    bool router_bias;    /* model.moe.router_bias: E more parameters */
    /* FP8 linear layers (model/fp8.h): the recipe's rules; fp8.recipe FP8_NONE = bf16 */
    struct fp8_rules fp8;
    /* Multi-head latent attention (DeepSeek-V2 §2.1): per head */
    bool mla;
    double q_lora, kv_lora, d_nope, d_rope, d_v;
};

void ops_shape_of(const struct config *c, int seq, const struct ops_par *par, struct shape *sh);
/* The MoE and MLA fields of *sh (model/ops_build_moe.c), called by ops_shape_of */
void moe_shape_of(const struct config *c, const struct ops_par *par, struct shape *sh);

struct op *ops_push_gemm(struct op_list *l, const struct shape *sh, enum op_site site,
                         const char *name, const char *source, double m, double n, double k,
                         double params, double keep);
/* A linear layer's GEMM (a Transformer Engine linear in Megatron-core): ops_push_gemm with FP8
 * off; under an FP8 recipe the GEMM in FP8 at the recipe's rate, the quantize kernel of its
 * input and output gradient before it, and its input kept as the recipe keeps it. `keep` is
 * the bf16 bytes of the input it keeps (the rank's share: a sequence-split input is quantized
 * before its all-gather). */
struct op *ops_push_linear(struct op_list *l, const struct shape *sh, enum op_site site,
                           const char *name, const char *source, double m, double n, double k,
                           double params, double keep);
/* The same for a linear layer fused with the norm before it (Transformer Engine's
 * LayerNormLinear: Megatron's TELayerNormColumnParallelLinear for QKV and fc1, MLA's up
 * projections): the norm kernel writes the input in FP8 (TE layernorm_linear.py,
 * with_quantized_norm), so the norm's bf16 output is neither written nor read again; under
 * current scaling the amax comes first and the cast stays its own pass. The norm is the last
 * memory-bound op of the list. */
struct op *ops_push_norm_linear(struct op_list *l, const struct shape *sh, enum op_site site,
                                const char *name, const char *source, double m, double n,
                                double k, double params, double keep);
/* The same quantization around an FP8 GEMM record already filled (the experts' grouped GEMMs):
 * pushes the quantize op, then *o in FP8, and returns the stored record. in_elems: the input
 * elements this rank quantizes; out_elems: the output gradient's. */
struct op *ops_push_fp8_gemm(struct op_list *l, const struct shape *sh, struct op *o,
                             double in_elems, double out_elems);
struct op *ops_push_mem(struct op_list *l, const struct shape *sh, enum op_site site,
                        const char *name, const char *source, double fw_bytes, double bw_bytes,
                        double params, double keep);
void ops_push_tp_coll(struct op_list *l, const struct shape *sh, enum op_site site,
                      const char *name, enum op_coll coll, double bytes, enum op_pass pass,
                      bool overlapped);
void ops_push_tp_entry(struct op_list *l, const struct shape *sh, enum op_site site,
                       const char *fw_name, const char *bw_name, const char *regather_name);
/* The entry of a sublayer whose first GEMM is a linear layer (ops_push_linear): under FP8
 * with sequence parallelism the input is quantized on its shard and gathered in FP8 (and
 * regathered so for the weight gradient), its amax all-reduced first under current scaling;
 * otherwise ops_push_tp_entry. */
void ops_push_tp_entry_linear(struct op_list *l, const struct shape *sh, enum op_site site,
                              const char *fw_name, const char *bw_name,
                              const char *regather_name);
void ops_push_tp_exit(struct op_list *l, const struct shape *sh, const char *fw_name,
                      const char *bw_name);
void ops_push_norm(struct op_list *l, const struct shape *sh, enum op_site site,
                   const char *name, double keep);
void ops_push_dropout(struct op_list *l, const struct shape *sh, const char *name);
void ops_push_residual(struct op_list *l, const struct shape *sh, const char *name);

/* The sublayers: attention (multi-head / GQA, or MLA when the model has it), the dense MLP,
 * the MoE MLP (model/ops_build_moe.c), MLA (model/ops_build_mla.c). */
void ops_build_attention(struct op_list *l, const struct shape *sh);
void ops_build_dense_mlp(struct op_list *l, const struct shape *sh);
void ops_build_moe_mlp(struct op_list *l, const struct shape *sh);
void ops_build_mla(struct op_list *l, const struct shape *sh);

#endif
