/* exec/xformer_gpt.c: the GPT block's kernels (exec/xformer_gpt.h). */
#include <config.h>
#include "exec/xformer_gpt.h"

#include <cblas.h>
#include <math.h>
#include <string.h>

void encoder_forward(float *out, const int *inp, const float *wte, const float *wpe, int B, int T,
                     int C)
{
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++) {
            float *o = out + ((size_t)b * T + t) * C;
            const float *we = wte + (size_t)inp[b * T + t] * C;
            if (wpe == NULL) { /* LLaMA: positions enter through RoPE */
                memcpy(o, we, (size_t)C * sizeof(float));
                continue;
            }
            const float *pe = wpe + (size_t)t * C;
            for (int i = 0; i < C; i++)
                o[i] = we[i] + pe[i];
        }
}

void encoder_backward(float *dwte, float *dwpe, const float *dout, const int *inp, int B, int T,
                      int C)
{
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++) {
            const float *g = dout + ((size_t)b * T + t) * C;
            float *dwe = dwte + (size_t)inp[b * T + t] * C;
            for (int i = 0; i < C; i++)
                dwe[i] += g[i];
            if (dwpe == NULL)
                continue;
            float *dpe = dwpe + (size_t)t * C;
            for (int i = 0; i < C; i++)
                dpe[i] += g[i];
        }
}

void layernorm_forward(float *out, float *mean, float *rstd, const float *inp, const float *weight,
                       const float *bias, size_t N, int C)
{
    for (size_t r = 0; r < N; r++) {
        const float *x = inp + r * C;
        float m = 0.0f;
        for (int i = 0; i < C; i++)
            m += x[i];
        m /= C;
        float var = 0.0f;
        for (int i = 0; i < C; i++) {
            float xm = x[i] - m;
            var += xm * xm;
        }
        var /= C;
        float s = 1.0f / sqrtf(var + LN_EPS);
        float *o = out + r * C;
        for (int i = 0; i < C; i++)
            o[i] = (s * (x[i] - m)) * weight[i] + bias[i];
        mean[r] = m;
        rstd[r] = s;
    }
}

/* Adds into dinp, dweight, dbias. */
void layernorm_backward(float *dinp, float *dweight, float *dbias, const float *dout,
                        const float *inp, const float *weight, const float *mean, const float *rstd,
                        size_t N, int C)
{
    for (size_t r = 0; r < N; r++) {
        const float *g = dout + r * C, *x = inp + r * C;
        float *dx = dinp + r * C;
        float m = mean[r], s = rstd[r];
        float dnorm_mean = 0.0f, dnorm_norm_mean = 0.0f;
        for (int i = 0; i < C; i++) {
            float norm = (x[i] - m) * s;
            float dnorm = weight[i] * g[i];
            dnorm_mean += dnorm;
            dnorm_norm_mean += dnorm * norm;
        }
        dnorm_mean /= C;
        dnorm_norm_mean /= C;
        for (int i = 0; i < C; i++) {
            float norm = (x[i] - m) * s;
            float dnorm = weight[i] * g[i];
            dbias[i] += g[i];
            dweight[i] += norm * g[i];
            dx[i] += (dnorm - dnorm_mean - norm * dnorm_norm_mean) * s;
        }
    }
}

/* out (N,OC) = inp (N,C) @ weight (OC,C)^T + bias (OC, may be NULL) */
void matmul_forward(float *out, const float *inp, const float *weight, const float *bias, size_t N,
                    int C, int OC)
{
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)N, OC, C, 1.0f, inp, C, weight, C,
                0.0f, out, OC);
    if (bias == NULL)
        return;
    for (size_t r = 0; r < N; r++) {
        float *o = out + r * OC;
        for (int j = 0; j < OC; j++)
            o[j] += bias[j];
    }
}

/* dinp (N,C) = dout @ weight (written); dweight (OC,C) += dout^T @ inp; dbias += sum of rows */
/* The two halves of a matmul's backward: the input gradient (split backward's B) and the
 * weight and bias gradients, added into dweight and dbias (its W). */
void matmul_backward_input(float *dinp, const float *dout, const float *weight, size_t N, int C,
                           int OC)
{
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)N, C, OC, 1.0f, dout, OC, weight, C,
                0.0f, dinp, C);
}

void matmul_backward_weight(float *dweight, float *dbias, const float *dout, const float *inp,
                            size_t N, int C, int OC)
{
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, OC, C, (int)N, 1.0f, dout, OC, inp, C,
                1.0f, dweight, C);
    if (dbias == NULL)
        return;
    for (size_t r = 0; r < N; r++) {
        const float *g = dout + r * OC;
        for (int j = 0; j < OC; j++)
            dbias[j] += g[j];
    }
}

/* Fused (BW): the input gradient, then the weight's. Split (B): the input gradient, and the
 * GEMM's input and output gradient saved at *wk (advanced) for W. */
void matmul_backward(float *dinp, float *dweight, float *dbias, const float *dout, const float *inp,
                     const float *weight, size_t N, int C, int OC, float **wk)
{
    matmul_backward_input(dinp, dout, weight, N, C, OC);
    if (wk == NULL) {
        matmul_backward_weight(dweight, dbias, dout, inp, N, C, OC);
        return;
    }
    memcpy(*wk, inp, N * (size_t)C * sizeof(float));
    memcpy(*wk + N * (size_t)C, dout, N * (size_t)OC * sizeof(float));
    *wk += N * (size_t)(C + OC);
}

/* out[i] += inp[i] */
void residual_forward(float *out, const float *inp, size_t n)
{
    for (size_t i = 0; i < n; i++)
        out[i] += inp[i];
}

/* Causal multi-head attention. qkv (B,T,3C) holds q | k | v per token; att (B,NH,T,T)
 * receives the softmax (zeros above the diagonal); out (B,T,C) the heads side by side. */
void attention_forward(float *out, float *att, const float *qkv, int B, int T, int C, int NH)
{
    int hs = C / NH, C3 = 3 * C;
    float scale = 1.0f / sqrtf((float)hs);
    for (int b = 0; b < B; b++)
        for (int h = 0; h < NH; h++) {
            const float *q = qkv + (size_t)b * T * C3 + (size_t)h * hs;
            const float *k = q + C, *v = q + 2 * C;
            float *a = att + ((size_t)b * NH + h) * T * T;
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, T, T, hs, scale, q, C3, k, C3,
                        0.0f, a, T);
            for (int t = 0; t < T; t++) {
                float *row = a + (size_t)t * T;
                float mx = row[0];
                for (int j = 1; j <= t; j++)
                    mx = row[j] > mx ? row[j] : mx;
                float sum = 0.0f;
                for (int j = 0; j <= t; j++) {
                    row[j] = expf(row[j] - mx);
                    sum += row[j];
                }
                float inv = 1.0f / sum;
                for (int j = 0; j <= t; j++)
                    row[j] *= inv;
                for (int j = t + 1; j < T; j++)
                    row[j] = 0.0f;
            }
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, T, hs, T, 1.0f, a, T, v, C3,
                        0.0f, out + (size_t)b * T * C + (size_t)h * hs, C);
        }
}

/* dqkv (B,T,3C) is written; datt is (T,T) scratch for one head at a time. */
void attention_backward(float *dqkv, float *datt, const float *dout, const float *qkv,
                        const float *att, int B, int T, int C, int NH)
{
    int hs = C / NH, C3 = 3 * C;
    float scale = 1.0f / sqrtf((float)hs);
    for (int b = 0; b < B; b++)
        for (int h = 0; h < NH; h++) {
            size_t qoff = (size_t)b * T * C3 + (size_t)h * hs;
            const float *q = qkv + qoff, *k = q + C, *v = q + 2 * C;
            float *dq = dqkv + qoff, *dk = dq + C, *dv = dq + 2 * C;
            const float *a = att + ((size_t)b * NH + h) * T * T;
            const float *g = dout + (size_t)b * T * C + (size_t)h * hs;
            /* datt = g @ v^T ; dv = a^T @ g */
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, T, T, hs, 1.0f, g, C, v, C3, 0.0f,
                        datt, T);
            cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, T, hs, T, 1.0f, a, T, g, C, 0.0f,
                        dv, C3);
            /* softmax backward, in place: datt becomes d(scaled scores) times scale */
            for (int t = 0; t < T; t++) {
                const float *arow = a + (size_t)t * T;
                float *drow = datt + (size_t)t * T;
                float dot = 0.0f;
                for (int j = 0; j <= t; j++)
                    dot += arow[j] * drow[j];
                for (int j = 0; j <= t; j++)
                    drow[j] = arow[j] * (drow[j] - dot) * scale;
                for (int j = t + 1; j < T; j++)
                    drow[j] = 0.0f;
            }
            /* dq = datt @ k ; dk = datt^T @ q */
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, T, hs, T, 1.0f, datt, T, k, C3,
                        0.0f, dq, C3);
            cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, T, hs, T, 1.0f, datt, T, q, C3,
                        0.0f, dk, C3);
        }
}

/* GELU, tanh approximation: 0.5 x (1 + tanh(a)), a = sqrt(2/pi) (x + 0.044715 x^3), written
 * as x * sigmoid(2a) (the same function: 0.5 (1 + tanh a) = 1 / (1 + e^-2a)) so that it costs
 * one expf instead of glibc's much slower tanhf (and coshf in backward). */
#define GELU_SCALE 0.7978845608028654f /* sqrt(2 / pi) */
#define GELU_CUBE 0.044715f

void gelu_forward(float *out, const float *inp, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        float x = inp[i];
        float a = GELU_SCALE * (x + GELU_CUBE * x * x * x);
        out[i] = x / (1.0f + expf(-2.0f * a));
    }
}

/* d/dx [x s(2a)] = s + 2 x s (1 - s) a'. dinp may alias dout. */
void gelu_backward(float *dinp, const float *inp, const float *dout, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        float x = inp[i];
        float a = GELU_SCALE * (x + GELU_CUBE * x * x * x);
        float sg = 1.0f / (1.0f + expf(-2.0f * a));
        float da = GELU_SCALE * (1.0f + 3.0f * GELU_CUBE * x * x);
        dinp[i] = (sg + 2.0f * x * sg * (1.0f - sg) * da) * dout[i];
    }
}

/* probs (N,V) holds logits on entry and their softmax on return; losses[r] = -log p[target] */
void crossentropy_forward(float *probs, float *losses, const int *targets, size_t N, int V)
{
    for (size_t r = 0; r < N; r++) {
        float *p = probs + r * V;
        float mx = p[0];
        for (int j = 1; j < V; j++)
            mx = p[j] > mx ? p[j] : mx;
        float sum = 0.0f;
        for (int j = 0; j < V; j++) {
            p[j] = expf(p[j] - mx);
            sum += p[j];
        }
        float inv = 1.0f / sum;
        for (int j = 0; j < V; j++)
            p[j] *= inv;
        losses[r] = -logf(p[targets[r]]);
    }
}

/* In place: probs becomes dlogits = (probs - onehot(target)) * dloss */
void crossentropy_backward(float *probs, const int *targets, float dloss, size_t N, int V)
{
    for (size_t r = 0; r < N; r++) {
        float *p = probs + r * V;
        for (int j = 0; j < V; j++)
            p[j] = (p[j] - (j == targets[r] ? 1.0f : 0.0f)) * dloss;
    }
}
