/* model/xformer_layout.h: the executor's activation layout, its one home. What the GPT-style
 * or LLaMA-style block of exec/ keeps per layer, per stage and in its scratch buffers, in floats (fp32) or
 * bytes, as functions of the micro-batch B, sequence T, width C, heads H, FFN width F and
 * vocabulary V. The CPU model (exec/xformer_cpu.c), its CUDA twin (exec/xformer_cuda.cu) and
 * the simulator's exact executor bytes (model/cost.c cost_stage_bytes_exec) all compute from
 * here, so a measured peak and a simulated one cannot drift apart by a copy. Plain C, static
 * inline: it is included by C and by nvcc's C++. */
#ifndef MT_MODEL_XFORMER_LAYOUT_H
#define MT_MODEL_XFORMER_LAYOUT_H

#include <stddef.h>

/* The block's shape: the GPT-2 block (LayerNorm with bias, GELU MLP, biases, learned positions)
 * or the LLaMA block (RMSNorm, SwiGLU MLP, RoPE, grouped-query attention, no biases). kvc is
 * the width of K (and of V): K/V heads x head size, C for multi-head attention. */
struct xl_block {
    int llama;
    size_t C, H, kvc, F, V;
};

static inline struct xl_block xl_gpt_block(size_t C, size_t H, size_t F, size_t V)
{
    struct xl_block b = {0, C, H, C, F, V};
    return b;
}

/* The width of one token's q | k | v row: 3C, or C + 2 kvc under GQA. */
static inline size_t xl_qkv_width(const struct xl_block *b)
{
    return b->C + 2 * b->kvc;
}

/* One layer's forward, kept for its backward. GPT: ln1 qkv atty res2 ln2 res3 (8 x (N, C):
 * qkv is three), the four (N) statistics of the two layer norms, the attention matrix
 * (B, H, T, T), fch and fch_gelu (2 x (N, F)). LLaMA: ln1 atty res2 ln2 res3 (5 (N, C)), qkv
 * (N, C + 2 kvc) with q and k stored rotated, the two RMSNorms' rstd (2 N), the attention
 * matrix, fch = gate | up (N, 2F) and the SwiGLU output (N, F). */
static inline size_t xl_block_layer_floats(const struct xl_block *b, size_t B, size_t T)
{
    size_t N = B * T;
    if (b->llama)
        return 5 * N * b->C + N * xl_qkv_width(b) + 2 * N + B * b->H * T * T + 3 * N * b->F;
    return 8 * N * b->C + 4 * N + B * b->H * T * T + 2 * N * b->F;
}

/* The last stage's head: the final norm (N, C) and its statistics (2 N for LayerNorm's mean
 * and rstd, N for RMSNorm's rstd), the probabilities (N, V) and the per-token losses (N). */
static inline size_t xl_block_head_floats(const struct xl_block *b, size_t B, size_t T)
{
    size_t N = B * T;
    return N * b->C + (b->llama ? 1 : 2) * N + N * b->V + N;
}

/* What every forward keeps whatever it checkpoints: its input (token ids on the first stage,
 * the (N, C) hidden state elsewhere) and the last stage's targets; 4-byte ints or floats. */
static inline size_t xl_kept_bytes(int is_first, int is_last, size_t B, size_t T, size_t C)
{
    size_t N = B * T;
    return (is_first ? N : N * C) * 4 + (is_last ? N * 4 : 0);
}

/* A full forward of n layers: the embedding output (first stage), the layers, the head. */
static inline size_t xl_block_full_floats(const struct xl_block *b, int is_first, int is_last,
                                          size_t n, size_t B, size_t T)
{
    return (is_first ? B * T * b->C : 0) + n * xl_block_layer_floats(b, B, T) +
           (is_last ? xl_block_head_floats(b, B, T) : 0);
}

/* A checkpointed forward's scratch: the embedding output, one layer, a second residual buffer
 * when there are two or more layers to alternate between, and the head. */
static inline size_t xl_block_cfw_scratch_floats(const struct xl_block *b, int is_first,
                                                 int is_last, size_t n, size_t B, size_t T)
{
    size_t NC = B * T * b->C;
    return (is_first ? NC : 0) + xl_block_layer_floats(b, B, T) + (n >= 2 ? NC : 0) +
           (is_last ? xl_block_head_floats(b, B, T) : 0);
}

/* A backward's scratch, reused by every layer: dres and dbuf (N, C), dqkv (N, qkv width), the
 * attention gradient of `heads_at_once` heads (T, T) each, and the MLP's: dgelu (N, F), or
 * SwiGLU's d(gate | up) (N, 2F), whose first half of each row holds d(output) first. The CPU
 * model walks one head at a time (1), the CUDA model every head of every row at once (B H).
 * The head's dlogits overwrite the probabilities in place. */
static inline size_t xl_block_bw_scratch_floats(const struct xl_block *b, size_t B, size_t T,
                                                size_t heads_at_once)
{
    size_t N = B * T;
    return 2 * N * b->C + N * xl_qkv_width(b) + heads_at_once * T * T +
           (b->llama ? 2 : 1) * N * b->F;
}

/* Split backward: what a B keeps for its W (exec/xformer_cpu.c xformer_backward_input), per
 * layer each weight GEMM's input and output gradient: fcproj (its input (N, F), (N, C)), fc
 * (ln2 (N, C), (N, F) or SwiGLU's (N, 2F)), attproj (atty, (N, C) each), qkv (ln1 (N, C), dqkv
 * (N, qkv width)): GPT 8NC + 2NF, LLaMA 5NC + N(C + 2 kvc) + 3NF; and the last stage's head,
 * its input lnf (N, C) and dlogits (N, V). */
static inline size_t xl_block_w_keep_floats(const struct xl_block *b, int is_last, size_t n,
                                            size_t B, size_t T)
{
    size_t N = B * T, mlp_out = (b->llama ? 2 : 1) * b->F;
    size_t layer = N * b->F + N * b->C + N * b->C + N * mlp_out + 2 * N * b->C + N * b->C +
                   N * xl_qkv_width(b);
    return n * layer + (is_last ? N * b->C + N * b->V : 0);
}

/* Parameters (floats). A layer: GPT ln1 (w, b), qkv (3C x C + 3C), attproj (C x C + C), ln2
 * (w, b), fc (F x C + F), fcproj (C x F + C): 4C^2 + 2CF + 9C + F. LLaMA: ln1 and ln2 gains, qkv
 * ((C + 2 kvc) x C), attproj (C x C), fc (gate | up: 2F x C), fcproj (C x F), no biases. The
 * first stage: the token embedding (V x C) and GPT's position table (positions x C); the last:
 * the final norm (GPT w and b, LLaMA w) and the untied LM head (V x C). */
static inline size_t xl_block_layer_params(const struct xl_block *b)
{
    size_t C = b->C, F = b->F;
    if (b->llama)
        return 2 * C + xl_qkv_width(b) * C + C * C + 3 * F * C;
    return 4 * C * C + 2 * C * F + 9 * C + F;
}

static inline size_t xl_block_embed_params(const struct xl_block *b, size_t positions)
{
    return b->V * b->C + (b->llama ? 0 : positions * b->C);
}

static inline size_t xl_block_head_params(const struct xl_block *b)
{
    return (b->llama ? 1 : 2) * b->C + b->V * b->C;
}

/* The GPT block's figures under their earlier names (the CUDA twin runs the GPT block only). */
static inline size_t xl_layer_floats(size_t B, size_t T, size_t C, size_t H, size_t F)
{
    struct xl_block b = xl_gpt_block(C, H, F, 0);
    return xl_block_layer_floats(&b, B, T);
}

static inline size_t xl_head_floats(size_t B, size_t T, size_t C, size_t V)
{
    struct xl_block b = xl_gpt_block(C, 1, 0, V);
    return xl_block_head_floats(&b, B, T);
}

static inline size_t xl_full_floats(int is_first, int is_last, size_t n, size_t B, size_t T,
                                    size_t C, size_t H, size_t F, size_t V)
{
    struct xl_block b = xl_gpt_block(C, H, F, V);
    return xl_block_full_floats(&b, is_first, is_last, n, B, T);
}

static inline size_t xl_cfw_scratch_floats(int is_first, int is_last, size_t n, size_t B, size_t T,
                                           size_t C, size_t H, size_t F, size_t V)
{
    struct xl_block b = xl_gpt_block(C, H, F, V);
    return xl_block_cfw_scratch_floats(&b, is_first, is_last, n, B, T);
}

static inline size_t xl_bw_scratch_floats(size_t B, size_t T, size_t C, size_t F,
                                          size_t heads_at_once)
{
    struct xl_block b = xl_gpt_block(C, 1, F, 0);
    return xl_block_bw_scratch_floats(&b, B, T, heads_at_once);
}

static inline size_t xl_w_keep_floats(int is_last, size_t n, size_t B, size_t T, size_t C,
                                      size_t F, size_t V)
{
    struct xl_block b = xl_gpt_block(C, 1, F, V);
    return xl_block_w_keep_floats(&b, is_last, n, B, T);
}

#endif
