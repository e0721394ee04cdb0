/* exec/xformer_llama.c: the LLaMA block's kernels (exec/xformer_llama.h). */
#include <config.h>
#include "exec/xformer_llama.h"

#include <cblas.h>
#include <math.h>
#include <string.h>

void rmsnorm_forward(float *out, float *rstd, const float *inp, const float *weight, size_t N,
                     int C)
{
    for (size_t r = 0; r < N; r++) {
        const float *x = inp + r * C;
        float ss = 0.0f;
        for (int i = 0; i < C; i++)
            ss += x[i] * x[i];
        float s = 1.0f / sqrtf(ss / C + LLAMA_RMS_EPS);
        float *o = out + r * C;
        for (int i = 0; i < C; i++)
            o[i] = (x[i] * s) * weight[i];
        rstd[r] = s;
    }
}

/* With n = x s and dn = w g: dx = s (dn - n mean(dn n)), since ds/dx_j = -s^3 x_j / C. */
void rmsnorm_backward(float *dinp, float *dweight, const float *dout, const float *inp,
                      const float *weight, const float *rstd, size_t N, int C)
{
    for (size_t r = 0; r < N; r++) {
        const float *g = dout + r * C, *x = inp + r * C;
        float *dx = dinp + r * C;
        float s = rstd[r], dot = 0.0f;
        for (int i = 0; i < C; i++)
            dot += weight[i] * g[i] * (x[i] * s);
        dot /= C;
        for (int i = 0; i < C; i++) {
            float norm = x[i] * s;
            dweight[i] += norm * g[i];
            dx[i] += (weight[i] * g[i] - norm * dot) * s;
        }
    }
}

static float sigmoidf(float x)
{
    return 1.0f / (1.0f + expf(-x));
}

void swiglu_forward(float *out, const float *fch, size_t N, int F)
{
    for (size_t r = 0; r < N; r++) {
        const float *g = fch + r * 2 * F, *u = g + F;
        float *o = out + r * F;
        for (int i = 0; i < F; i++)
            o[i] = g[i] * sigmoidf(g[i]) * u[i];
    }
}

/* silu(g) = g sig(g), silu'(g) = sig(g) (1 + g (1 - sig(g))). */
void swiglu_backward(float *dfch, const float *fch, size_t N, int F)
{
    for (size_t r = 0; r < N; r++) {
        const float *g = fch + r * 2 * F, *u = g + F;
        float *dg = dfch + r * 2 * F, *du = dg + F;
        for (int i = 0; i < F; i++) {
            float sg = sigmoidf(g[i]), dout = dg[i];
            du[i] = dout * g[i] * sg;
            dg[i] = dout * u[i] * sg * (1.0f + g[i] * (1.0f - sg));
        }
    }
}

/* HF's rotate_half: for i < hs/2, with angle t theta^(-2i/hs) (inv_freq, then cos and sin
 * repeated over both halves), y_i = x_i cos - x_{i+hs/2} sin, y_{i+hs/2} = x_{i+hs/2} cos +
 * x_i sin. The angle is formed in double and rounded once, so every call rotates alike. */
void rope_apply(float *x, int B, int T, size_t stride, int width, int hs, int sign)
{
    int half = hs / 2;
    for (int t = 0; t < T; t++)
        for (int i = 0; i < half; i++) {
            double ang = (double)t * pow(LLAMA_ROPE_THETA, -2.0 * i / hs);
            float c = (float)cos(ang), s = (float)sin(ang) * (float)sign;
            for (int b = 0; b < B; b++) {
                float *row = x + ((size_t)b * T + t) * stride;
                for (int h0 = 0; h0 < width; h0 += hs) {
                    float x1 = row[h0 + i], x2 = row[h0 + i + half];
                    row[h0 + i] = x1 * c - x2 * s;
                    row[h0 + i + half] = x2 * c + x1 * s;
                }
            }
        }
}

void gqa_attention_forward(float *out, float *att, const float *qkv, int B, int T, int C, int H,
                           int kvc)
{
    int hs = C / H, group = H / (kvc / hs), W = C + 2 * kvc;
    float scale = 1.0f / sqrtf((float)hs);
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++) {
            const float *row0 = qkv + (size_t)b * T * W;
            const float *q = row0 + (size_t)h * hs;
            const float *k = row0 + C + (size_t)(h / group) * hs, *v = k + kvc;
            float *a = att + ((size_t)b * H + h) * T * T;
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, T, T, hs, scale, q, W, k, W, 0.0f,
                        a, T);
            for (int t = 0; t < T; t++) {
                float *r = a + (size_t)t * T;
                float mx = r[0];
                for (int j = 1; j <= t; j++)
                    mx = r[j] > mx ? r[j] : mx;
                float sum = 0.0f;
                for (int j = 0; j <= t; j++) {
                    r[j] = expf(r[j] - mx);
                    sum += r[j];
                }
                float inv = 1.0f / sum;
                for (int j = 0; j <= t; j++)
                    r[j] *= inv;
                for (int j = t + 1; j < T; j++)
                    r[j] = 0.0f;
            }
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, T, hs, T, 1.0f, a, T, v, W,
                        0.0f, out + (size_t)b * T * C + (size_t)h * hs, C);
        }
}

void gqa_attention_backward(float *dqkv, float *datt, const float *dout, const float *qkv,
                            const float *att, int B, int T, int C, int H, int kvc)
{
    int hs = C / H, group = H / (kvc / hs), W = C + 2 * kvc;
    float scale = 1.0f / sqrtf((float)hs);
    /* the query heads of a group add into their K/V head's gradient, in head order */
    memset(dqkv, 0, (size_t)B * T * W * sizeof(float));
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++) {
            size_t r0 = (size_t)b * T * W, koff = (size_t)C + (size_t)(h / group) * hs;
            const float *q = qkv + r0 + (size_t)h * hs, *k = qkv + r0 + koff, *v = k + kvc;
            float *dq = dqkv + r0 + (size_t)h * hs, *dk = dqkv + r0 + koff, *dv = dk + kvc;
            const float *a = att + ((size_t)b * H + h) * T * T;
            const float *g = dout + (size_t)b * T * C + (size_t)h * hs;
            /* datt = g v^T ; dv += a^T g */
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, T, T, hs, 1.0f, g, C, v, W, 0.0f,
                        datt, T);
            cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, T, hs, T, 1.0f, a, T, g, C, 1.0f,
                        dv, W);
            for (int t = 0; t < T; t++) {
                const float *ar = a + (size_t)t * T;
                float *dr = datt + (size_t)t * T;
                float dot = 0.0f;
                for (int j = 0; j <= t; j++)
                    dot += ar[j] * dr[j];
                for (int j = 0; j <= t; j++)
                    dr[j] = ar[j] * (dr[j] - dot) * scale;
                for (int j = t + 1; j < T; j++)
                    dr[j] = 0.0f;
            }
            /* dq = datt k ; dk += datt^T q */
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, T, hs, T, 1.0f, datt, T, k, W,
                        0.0f, dq, W);
            cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, T, hs, T, 1.0f, datt, T, q, W,
                        1.0f, dk, W);
        }
}
