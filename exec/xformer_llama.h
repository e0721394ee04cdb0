/* exec/xformer_llama.h: the LLaMA block's own kernels for the CPU model (exec/xformer_cpu.c),
 * fp32, in llm.c's shapes (outputs, inputs, sizes): RMSNorm, the SwiGLU activation, rotary
 * position embedding and grouped-query causal attention. Each backward is the exact transpose
 * of its forward; tests/unit/test_xformer_llama.c checks each against finite differences.
 * The conventions are Hugging Face transformers' LlamaModel (modeling_llama.py): RMSNorm
 * x / sqrt(mean(x^2) + eps) * w; SwiGLU down(silu(gate x) * up x); RoPE's rotate_half (each
 * head's first half paired with its second half, not adjacent pairs), theta 10000. */
#ifndef MT_EXEC_XFORMER_LLAMA_H
#define MT_EXEC_XFORMER_LLAMA_H

#include <stddef.h>

#define LLAMA_RMS_EPS 1e-5f
#define LLAMA_ROPE_THETA 10000.0

/* out (N, C) = x * rstd * weight, rstd[r] = 1 / sqrt(mean_i x[r, i]^2 + eps). */
void rmsnorm_forward(float *out, float *rstd, const float *inp, const float *weight, size_t N,
                     int C);
/* Adds into dinp and dweight. */
void rmsnorm_backward(float *dinp, float *dweight, const float *dout, const float *inp,
                      const float *weight, const float *rstd, size_t N, int C);

/* fch (N, 2F) holds gate | up per row; out (N, F) = silu(gate) * up. */
void swiglu_forward(float *out, const float *fch, size_t N, int F);
/* In place on dfch (N, 2F): on entry the first F floats of each row hold d(out); on return
 * the row is d(gate) | d(up). */
void swiglu_backward(float *dfch, const float *fch, size_t N, int F);

/* Rotates, in place, the heads of the (B, T, stride) rows x holds at columns [0, width) (the
 * q or the k of a qkv row): head size hs, token t at position t. sign +1 forward; -1 applies
 * the transpose (the backward of the rotation, on gradients). */
void rope_apply(float *x, int B, int T, size_t stride, int width, int hs, int sign);

/* Causal attention with H query heads sharing KV = kvc / hs K/V heads (head h reads K/V head
 * h / (H / KV)). qkv (B, T, C + 2 kvc) holds q | k | v per token; att (B, H, T, T) receives
 * the softmax (zeros above the diagonal); out (B, T, C) the heads side by side. */
void gqa_attention_forward(float *out, float *att, const float *qkv, int B, int T, int C, int H,
                           int kvc);
/* dqkv (B, T, C + 2 kvc) is written (a K/V head's gradient sums over its query heads); datt
 * is (T, T) scratch for one head at a time. */
void gqa_attention_backward(float *dqkv, float *datt, const float *dout, const float *qkv,
                            const float *att, int B, int T, int C, int H, int kvc);

#endif
