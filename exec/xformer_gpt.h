/* exec/xformer_gpt.h: the GPT block's kernels for the CPU model (exec/xformer_cpu.c), fp32 in
 * llm.c's shapes (outputs, inputs, sizes): the token + position embedding, LayerNorm, the
 * GEMMs with optional bias (through OpenBLAS), the residual add, causal multi-head attention,
 * GELU (tanh) and softmax cross-entropy. Every backward adds into its parameter gradients. A
 * matmul_backward with a non-NULL wk (split backward) saves (input, output gradient) at *wk
 * for the weight gradient instead of computing it (exec/xformer_cpu.c's header). Moved out of
 * exec/xformer_cpu.c unchanged, so every figure stays bit for bit. */
#ifndef MT_EXEC_XFORMER_GPT_H
#define MT_EXEC_XFORMER_GPT_H

#include <stddef.h>

#define LN_EPS 1e-5f

void encoder_forward(float *out, const int *inp, const float *wte, const float *wpe, int B, int T,
                     int C);
void encoder_backward(float *dwte, float *dwpe, const float *dout, const int *inp, int B, int T,
                      int C);
void layernorm_forward(float *out, float *mean, float *rstd, const float *inp, const float *weight,
                       const float *bias, size_t N, int C);
void layernorm_backward(float *dinp, float *dweight, float *dbias, const float *dout,
                        const float *inp, const float *weight, const float *mean, const float *rstd,
                        size_t N, int C);
void matmul_forward(float *out, const float *inp, const float *weight, const float *bias, size_t N,
                    int C, int OC);
void matmul_backward_input(float *dinp, const float *dout, const float *weight, size_t N, int C,
                           int OC);
void matmul_backward_weight(float *dweight, float *dbias, const float *dout, const float *inp,
                            size_t N, int C, int OC);
void matmul_backward(float *dinp, float *dweight, float *dbias, const float *dout, const float *inp,
                     const float *weight, size_t N, int C, int OC, float **wk);
void residual_forward(float *out, const float *inp, size_t n);
void attention_forward(float *out, float *att, const float *qkv, int B, int T, int C, int NH);
void attention_backward(float *dqkv, float *datt, const float *dout, const float *qkv,
                        const float *att, int B, int T, int C, int NH);
void gelu_forward(float *out, const float *inp, size_t n);
void gelu_backward(float *dinp, const float *inp, const float *dout, size_t n);
void crossentropy_forward(float *probs, float *losses, const int *targets, size_t N, int V);
void crossentropy_backward(float *probs, const int *targets, float dloss, size_t N, int V);

#endif
