/* model/ops.h: a stage as the list of ops it runs (docs/design.md, "The cost model as ops").
 *
 * After torch.utils.flop_counter (one formula per op kind, registered once) and llm.c's
 * train_gpt2.c (a layer read as the kernels it calls, in order, with their sizes). An
 * architecture (GPT, LLaMA and the Hugging Face families; MoE, MLA next) is a builder that
 * appends records to a list and nothing else; what an op costs in FLOPs and bytes is a
 * function of its kind (model/ops.c's table), what it costs in time is the device model's
 * (model/price.h), and a stage's time and memory are sums over its list (model/cost.c).
 * sim/ never sees an op list: it gets the sums as durations and bytes (model/cost.h).
 *
 * Shapes are per rank: a builder divides by tp (cp, ep, ...) as it lists the op, in the one
 * shared helper of model/ops_build.c, never in each formula. Byte figures are bytes of one
 * micro-batch on one GPU. */
#ifndef MT_MODEL_OPS_H
#define MT_MODEL_OPS_H

#include <stdbool.h>
#include <stddef.h>

#include "model/config.h"

struct config;

enum op_kind {
    OP_GEMM,         /* count products (m x k) . (k x n); `weight`: the k x n side is a parameter */
    OP_GROUPED_GEMM, /* count groups (experts), each (m x k) . (k x n), m the tokens of a group */
    OP_ATTENTION,    /* the attention core softmax(Q K^T / sqrt d) V: flash or eager */
    OP_MEMORY,       /* memory-bound (norms, activations, rotary, softmax, dropout, residual
                      * adds, cross-entropy, optimizer): bytes read + written */
    OP_COLLECTIVE,   /* all-reduce, all-gather, reduce-scatter, all-to-all, send/recv */
    OP_KIND__COUNT
};

enum op_dtype { OP_BF16, OP_FP16, OP_FP32, OP_FP8, OP_DTYPE__COUNT };

enum op_coll { COLL_ALL_REDUCE, COLL_ALL_GATHER, COLL_REDUCE_SCATTER, COLL_ALL_TO_ALL,
               COLL_SEND_RECV, COLL__COUNT };

/* The link a collective's group spans (model/price.h reads its bandwidth and latency). */
enum op_link { LINK_NVLINK, LINK_NETWORK, LINK_PCIE, LINK__COUNT };

/* The parallel group a collective runs over. */
enum op_group { GROUP_TP, GROUP_CP, GROUP_EP, GROUP_DP, GROUP_PP, GROUP__COUNT };

/* The passes of an op: forward, the input gradient (B), the weight gradient (W). A whole
 * backward is B + W; a recompute is the forward again. */
enum op_pass { PASS_FW, PASS_B, PASS_W, PASS__COUNT };

/* Where in the stage an op sits: in a transformer block, or in the ends' extra work. */
enum op_site { SITE_LAYER, SITE_EMBED, SITE_HEAD, SITE_STEP, SITE__COUNT };

struct op {
    enum op_kind kind;
    const char *name;   /* static text: "qkv", "core_attn", "fc1", "tp_reduce_mlp", ... */
    const char *source; /* static text: where its formula comes from (docs/cost-model.md) */
    enum op_site site;
    enum op_dtype dtype;
    /* OP_GEMM, OP_GROUPED_GEMM */
    double m, n, k, count;
    bool weight; /* one side is a parameter: its gradient is a W-pass GEMM */
    /* OP_ATTENTION: batch x heads (this rank's) of s_q queries over s_kv keys */
    double batch, s_q, s_kv, heads, kv_heads, head_dim, head_dim_v;
    bool causal, flash;
    /* OP_MEMORY: HBM bytes read + written by the forward and by the backward (B) */
    double fw_bytes, bw_bytes;
    /* OP_COLLECTIVE: `bytes` is the buffer one rank holds (the all-gather's output, the
     * reduce-scatter's input, the all-reduce's buffer, a send's message), over `group`
     * ranks on `link`, in pass `pass` (a collective runs in one pass; its mirror in the
     * other pass is its own record), `overlapped` when the framework hides it behind compute */
    enum op_coll coll;
    enum op_group group_kind;
    double bytes;
    int group;
    enum op_link link;
    enum op_pass pass;
    bool overlapped;
    /* memory, bytes of one micro-batch on this rank */
    double params;       /* parameters the op owns (count, not bytes) */
    double keep_bytes;   /* what its forward keeps for the backward */
    double w_keep_bytes; /* what its B leaves for its W (split backward) */
    double work_bytes;   /* transient workspace while it runs */
    double recompute;    /* the share of its forward its backward runs again (config's
                          * recompute policy, model/ops_recompute.c): B costs that much more */
    double remat_bytes;  /* what that policy no longer keeps of it: recomputed, it lives while
                          * the block's backward runs */
};

/* A growing list of ops (util/xalloc.h's growth; never a fixed bound). */
struct op_list {
    struct op *op;
    size_t n, cap;
};

void op_list_init(struct op_list *l);
void op_list_fini(struct op_list *l);
/* Appends a copy of *o; returns the stored record. */
struct op *op_list_push(struct op_list *l, const struct op *o);

/* ---- model/ops_recompute.c ------------------------------------------------------------- */
/* c->recompute applied to the ops [from, l->n) of one block (built with shape-derived keeps):
 * what each keeps and the share of its forward its backward reruns. */
struct shape;
void ops_apply_recompute(const struct config *c, const struct shape *sh, struct op_list *l,
                         size_t from);

/* ---- model/ops.c: one formula per kind (the registry) ----------------------------------- */
/* FLOPs the op's pass p executes (a multiply-add is 2). GEMM: FW 2mnk x count; B the input
 * gradient 2mnk x count (two products, 4mnk, when neither side is a weight); W 2mnk x count
 * for a weight GEMM, else 0. Attention: FW 4 b heads s_q s_kv d (QK^T and PV; causal flash
 * counts what the kernel runs, half the square plus the diagonal; an eager kernel computes the
 * whole square and masks it), B 2.5x FW with flash (the scores recomputed), 2x eager; W 0.
 * Memory and collectives: 0. */
double op_flops(const struct op *o, enum op_pass p);
/* FLOPs by the model-FLOPs convention MFU is quoted in (PaLM, Megatron-LM's
 * num_floating_point_operations): full squares for causal attention, no recompute. */
double op_model_flops(const struct op *o, enum op_pass p);
/* HBM bytes the pass moves (memory-bound ops; a GEMM's operands and result once) */
double op_hbm_bytes(const struct op *o, enum op_pass p);
/* "gemm", "grouped_gemm", "attention", "memory", "collective" */
const char *op_kind_name(enum op_kind k);
const char *op_coll_name(enum op_coll c);
const char *op_link_name(enum op_link l);
const char *op_pass_name(enum op_pass p);
const char *op_dtype_name(enum op_dtype d);
/* Bytes of one element */
double op_dtype_bytes(enum op_dtype d);

/* The NCCL bus factor of a collective over n ranks (nccl-tests' PERFORMANCE.md): the bytes a
 * rank sends per byte of its buffer. Ring all-reduce 2(n-1)/n; all-gather, reduce-scatter,
 * all-to-all (n-1)/n; send/recv 1; 0 for a group of one. */
double op_coll_bus_factor(enum op_coll c, int n);

/* ---- model/ops_build.c: the builders ---------------------------------------------------- */
/* The parallel degrees a builder divides a block by (ops_par_of: the config's). Context and
 * expert parallelism join here, read by the one shared helper of ops_build.c. */
struct ops_par {
    int tp;  /* tensor parallel: heads, FFN columns and vocabulary rows split */
    bool sp; /* sequence parallelism: the replicated activations split over tp too */
    int cp;  /* context parallel: every activation's tokens split over cp (0 or 1: none) */
    int ep;  /* expert parallel: the routed experts split (model/moe.h); 0 = 1 */
    int etp; /* expert tensor parallel: each expert's width split; 0 = 1 */
};
struct ops_par ops_par_of(const struct config *c);
/* Whether c is priced as the paper's 2021 Megatron-DeepSpeed stack (config_framework), whose
 * estimate model/cost.c keeps to the bit; its builders' few differences are named where made. */
bool ops_legacy(const struct config *c);
/* The embedding's and head's rows: model.vocab_size padded as Megatron-LM pads it. */
double ops_vocab_size(const struct config *c, const struct ops_par *par);
/* The link a group of `ranks` ranks of kind g spans under Megatron-LM's rank order (tp
 * innermost: a TP group is consecutive GPUs, the others' members are tp apart): NVLink when
 * the span fits in a node (cluster.gpus_per_node), the network otherwise. */
enum op_link ops_link_of(const struct config *c, enum op_group g, int ranks);
/* The ops of one transformer block of c's model (per rank, one micro-batch of
 * c->micro_batch_size samples of seq tokens), in the order the block runs them: the forward's
 * order; each op's backward runs in the reverse order. */
void ops_build_layer(const struct config *c, int seq, struct op_list *out);
/* The blocks a model has (model/moe.h moe_layer_is_moe says which a layer is): a dense MLP,
 * or routed experts (with shared ones where the model has them). The attention is the
 * model's (MLA where model.mla has it). ops_build_layer builds the model's typical block: the
 * MoE one when the model has experts. */
enum ops_block { BLOCK_DENSE, BLOCK_MOE };
void ops_build_block_par(const struct config *c, int seq, const struct ops_par *par,
                         enum ops_block kind, struct op_list *out);
void ops_build_block(const struct config *c, int seq, enum ops_block kind, struct op_list *out);
/* One multi-token-prediction module (DeepSeek-V3 §2.2; on the last stage, after the head):
 * the two norms, the projection of [h; emb] 2h -> h, a MoE block, and the shared head's logits
 * and loss (the embedding and the output matrix are the main model's, counted there). */
void ops_build_mtp(const struct config *c, int seq, struct op_list *out);
/* The first stage's extra ops (embedding lookup) and the last stage's (final norm, LM head,
 * loss). */
void ops_build_embed(const struct config *c, int seq, struct op_list *out);
void ops_build_head(const struct config *c, int seq, struct op_list *out);
/* A stage's step after its last backward, for `params` parameters on this rank and a
 * gradient group of `group` replicas (dp; x2 for Chimera): the gradient all-reduce, or with
 * the distributed optimizer a reduce-scatter and the parameters' all-gather (SITE_STEP
 * collectives, pass W), then the optimizer (a memory-bound op, its bytes in fw_bytes). */
void ops_build_step(const struct config *c, double params, int group, struct op_list *out);
/* The same where fp8_params of the params are FP8-run weights (model/fp8.h): their FP8 cast
 * once an iteration, and with --fp8-param-gather their all-gather in FP8. */
void ops_build_step_fp8(const struct config *c, double params, double fp8_params, int group,
                        struct op_list *out);
/* The same at explicit degrees (model/cost.c evaluates the 2021 estimate on the unsplit
 * block, tp = 1, and divides its sums by tp as that estimate did). */
void ops_build_layer_par(const struct config *c, int seq, const struct ops_par *par,
                         struct op_list *out);
void ops_build_embed_par(const struct config *c, int seq, const struct ops_par *par,
                         struct op_list *out);
void ops_build_head_par(const struct config *c, int seq, const struct ops_par *par,
                        struct op_list *out);

/* ---- model/ops_build_fsdp.c: ZeRO-2 / ZeRO-3 (FSDP) per unit (docs/fsdp.md) -------------- */
/* What a config's ZeRO stage shards and when its collectives run (the file's header says
 * after which sources). */
struct ops_fsdp {
    int zero;              /* config_zero_stage */
    int shard, replicate;  /* the shard group (dp_shard x cp) and its replicas (HSDP) */
    enum op_link shard_link, replicate_link;
    double grad_bytes;     /* bytes a gradient is reduced in (config_grad_reduce_fp32) */
    bool gather_fw;        /* ZeRO-3: a unit's parameters gathered before each forward */
    bool gather_bw;        /* ... and before each backward (resharded after the forward) */
    bool gather_step;      /* ... once a step (kept gathered over the micro-batches: PP) */
    bool reduce_mb;        /* gradients reduce-scattered after each micro-batch's backward */
    bool reduce_step;      /* once a step, after the last backward (FSDP under PP) */
    bool params_live;      /* the stage's gathered bf16 parameters live over the step */
    bool grads_live;       /* its unsharded fp32 gradients accumulate over the step */
};
struct ops_fsdp ops_fsdp_of(const struct config *c);
/* Appends the per-micro-batch collectives of one FSDP unit holding `params` parameters on
 * this rank (GROUP_DP, at the unit's site, overlapped: priced by fsdp_chain_exposed_us, not summed):
 * the gathers (pass FW, B), the reduce-scatter and the replicas' all-reduce (pass B). Nothing
 * below ZeRO-2. */
void ops_build_fsdp_unit(const struct ops_fsdp *f, enum op_site site, double params,
                         struct op_list *out);
/* Adds o's time (price_op_us) to what runs before a unit's forward, before its backward, or
 * after its backward, when o is one of ops_build_fsdp_unit's records; else nothing. */
void ops_fsdp_unit_comm_us(const struct config *c, const struct op *o, double *before_fw,
                           double *before_bw, double *after_bw);
/* The time n units' communication shows beyond their compute, in run order: before[k]
 * (a gather, or NULL) issued as unit k-1 starts computing (the first at once), comp[k] the
 * unit's compute, after[k] (a reduce, or NULL) issued as it ends; one communication stream,
 * one compute stream (the file's header). Uniform units, no reduce: g + (n-1) max(0, g - t). */
double fsdp_chain_exposed_us(const double *before, const double *comp, const double *after,
                             int n);

/* ---- model/ops_build_cp.c: the attention core under context parallelism ----------------- */
/* A block's context-parallel layout (ops_build.c fills it from the config): cp ranks, the mode,
 * the all-to-all group (config_cp_a2a_size) and the ring over cp / a2a of them, their links. */
struct ops_cp {
    int cp, a2a, ring;
    enum cp_comm_type mode;
    enum op_link a2a_link, ring_link;
};
struct ops_cp ops_cp_of(const struct config *c);
/* Appends, in place of `core` (this TP rank's causal flash attention over the whole sequence:
 * s_q = s_kv = s, its keep_bytes those of the rank's s / cp queries), the attention blocks one
 * CP rank runs and the K/V collectives around them, per cp->mode (model/ops_build_cp.c's
 * header). With cp 1, core itself. */
void ops_build_cp_attention(const struct ops_cp *cp, const struct op *core, struct op_list *out);
/* Query-key pairs (with the diagonal) CP rank `rank` of `cp` computes in a causal attention of
 * s tokens: with `balanced` Megatron's load balancing (the sequence in 2 cp chunks, rank r
 * holding chunks r and 2 cp - 1 - r), else the contiguous s / cp of rank r. */
double ops_cp_causal_pairs(double s, int cp, int rank, bool balanced);

#endif
