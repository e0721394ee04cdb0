/* model/xformer_layout.h: the executor's activation layout, its one home. What the GPT-style
 * block of exec/ keeps per layer, per stage and in its scratch buffers, in floats (fp32) or
 * bytes, as functions of the micro-batch B, sequence T, width C, heads H, FFN width F and
 * vocabulary V. The CPU model (exec/xformer_cpu.c), its CUDA twin (exec/xformer_cuda.cu) and
 * the simulator's exact executor bytes (model/cost.c cost_stage_bytes_exec) all compute from
 * here, so a measured peak and a simulated one cannot drift apart by a copy. Plain C, static
 * inline: it is included by C and by nvcc's C++. */
#ifndef MT_MODEL_XFORMER_LAYOUT_H
#define MT_MODEL_XFORMER_LAYOUT_H

#include <stddef.h>

/* One layer's forward, kept for its backward: ln1 qkv atty res2 ln2 res3 (8 x (N, C): qkv is
 * three), the four (N) statistics of the two layer norms, the attention matrix (B, H, T, T),
 * fch and fch_gelu (2 x (N, F)). */
static inline size_t xl_layer_floats(size_t B, size_t T, size_t C, size_t H, size_t F)
{
    size_t N = B * T;
    return 8 * N * C + 4 * N + B * H * T * T + 2 * N * F;
}

/* The last stage's head: the final layer norm (N, C) and its statistics (2 N), the
 * probabilities (N, V) and the per-token losses (N). */
static inline size_t xl_head_floats(size_t B, size_t T, size_t C, size_t V)
{
    size_t N = B * T;
    return N * C + 2 * N + N * V + N;
}

/* What every forward keeps whatever it checkpoints: its input (token ids on the first stage,
 * the (N, C) hidden state elsewhere) and the last stage's targets; 4-byte ints or floats. */
static inline size_t xl_kept_bytes(int is_first, int is_last, size_t B, size_t T, size_t C)
{
    size_t N = B * T;
    return (is_first ? N : N * C) * 4 + (is_last ? N * 4 : 0);
}

/* A full forward of n layers: the embedding output (first stage), the layers, the head. */
static inline size_t xl_full_floats(int is_first, int is_last, size_t n, size_t B, size_t T,
                                    size_t C, size_t H, size_t F, size_t V)
{
    return (is_first ? B * T * C : 0) + n * xl_layer_floats(B, T, C, H, F) +
           (is_last ? xl_head_floats(B, T, C, V) : 0);
}

/* A checkpointed forward's scratch: the embedding output, one layer, a second residual buffer
 * when there are two or more layers to alternate between, and the head. */
static inline size_t xl_cfw_scratch_floats(int is_first, int is_last, size_t n, size_t B, size_t T,
                                           size_t C, size_t H, size_t F, size_t V)
{
    size_t NC = B * T * C;
    return (is_first ? NC : 0) + xl_layer_floats(B, T, C, H, F) + (n >= 2 ? NC : 0) +
           (is_last ? xl_head_floats(B, T, C, V) : 0);
}

/* A backward's scratch, reused by every layer: dres and dbuf (N, C), dqkv (N, 3C), the
 * attention gradient of `heads_at_once` heads (T, T) each, dgelu (N, F). The CPU model walks
 * one head at a time (1), the CUDA model every head of every row at once (B H). The head's
 * dlogits overwrite the probabilities in place. */
static inline size_t xl_bw_scratch_floats(size_t B, size_t T, size_t C, size_t F,
                                          size_t heads_at_once)
{
    size_t N = B * T;
    return 5 * N * C + heads_at_once * T * T + N * F;
}

/* Split backward: what a B keeps for its W (exec/xformer_cpu.c xformer_backward_input), per
 * layer each weight GEMM's input and output gradient: fcproj (fch_gelu (N, F), (N, C)), fc
 * (ln2 (N, C), (N, F)), attproj (atty, (N, C) each), qkv (ln1 (N, C), dqkv (N, 3C)): 8NC + 2NF;
 * and the last stage's head, its input lnf (N, C) and dlogits (N, V). */
static inline size_t xl_w_keep_floats(int is_last, size_t n, size_t B, size_t T, size_t C,
                                      size_t F, size_t V)
{
    size_t N = B * T;
    return n * (8 * N * C + 2 * N * F) + (is_last ? N * C + N * V : 0);
}

#endif
