/* tests/moe_ref.h: a single-process reference of exec/xformer_moe.h's layer, written apart
 * from it: every expert local, no all-to-all, no permutation, no BLAS, one token at a time in
 * double. Parameters in the layer's ep-1 layout (router, shared W13 W2, expert 0..E-1's W13 W2).
 * Included by tests/unit/test_xformer_moe.c and tests/mpi/moe_ep.c. */
#ifndef MT_TESTS_MOE_REF_H
#define MT_TESTS_MOE_REF_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "exec/xformer_moe.h"

/* y (C) += scale x W2 (silu(W1 x) * W3 x) for one row, and what backward needs. */
static void ref_mlp(double *y, double scale, const float *x, const float *w13, int C, int F)
{
    const float *w2 = w13 + 2 * (size_t)F * C;
    double *a = malloc((size_t)F * sizeof(double));
    for (int i = 0; i < F; i++) {
        double gt = 0, up = 0;
        for (int c = 0; c < C; c++) {
            gt += (double)w13[(size_t)i * C + c] * x[c];
            up += (double)w13[(size_t)(F + i) * C + c] * x[c];
        }
        a[i] = gt / (1.0 + exp(-gt)) * up;
    }
    for (int c = 0; c < C; c++) {
        double s = 0;
        for (int i = 0; i < F; i++)
            s += (double)w2[(size_t)c * F + i] * a[i];
        y[c] += scale * s;
    }
    free(a);
}

/* Backward of y += scale mlp(x) given dy: adds into dx (C) and the W13, W2 gradients. */
static void ref_mlp_back(double *dx, double *dw13, const double *dy, double scale, const float *x,
                         const float *w13, int C, int F)
{
    const float *w2 = w13 + 2 * (size_t)F * C;
    double *dw2 = dw13 + 2 * (size_t)F * C;
    for (int i = 0; i < F; i++) {
        double gt = 0, up = 0;
        for (int c = 0; c < C; c++) {
            gt += (double)w13[(size_t)i * C + c] * x[c];
            up += (double)w13[(size_t)(F + i) * C + c] * x[c];
        }
        double sg = 1.0 / (1.0 + exp(-gt)), silu = gt * sg, da = 0;
        for (int c = 0; c < C; c++) {
            da += scale * dy[c] * w2[(size_t)c * F + i];
            dw2[(size_t)c * F + i] += scale * dy[c] * silu * up;
        }
        double dgt = da * up * (sg * (1.0 + gt * (1.0 - sg))), dup = da * silu;
        for (int c = 0; c < C; c++) {
            dw13[(size_t)i * C + c] += dgt * x[c];
            dw13[(size_t)(F + i) * C + c] += dup * x[c];
            dx[c] += dgt * w13[(size_t)i * C + c] + dup * w13[(size_t)(F + i) * C + c];
        }
    }
}

static double ref_mlp_dot(const double *dy, const float *x, const float *w13, int C, int F)
{
    double *y = calloc((size_t)C, sizeof(double)), s = 0;
    ref_mlp(y, 1.0, x, w13, C, F);
    for (int c = 0; c < C; c++)
        s += dy[c] * y[c];
    free(y);
    return s;
}

/* Routing of one token: p (E), the k chosen (largest first, ties to the lower index), gates. */
static void ref_route(double *p, int *idx, double *gate, const struct moe_dims *d, const float *wr,
                      const float *x)
{
    int C = d->channels, E = d->experts, k = d->topk;
    double mx = -INFINITY, sum = 0;
    for (int e = 0; e < E; e++) {
        double l = 0;
        for (int c = 0; c < C; c++)
            l += (double)wr[(size_t)e * C + c] * x[c];
        p[e] = l;
        mx = l > mx ? l : mx;
    }
    for (int e = 0; e < E; e++)
        sum += (p[e] = exp(p[e] - mx));
    for (int e = 0; e < E; e++)
        p[e] /= sum;
    char *used = calloc((size_t)E, 1);
    double S = 0;
    for (int j = 0; j < k; j++) {
        int b = -1;
        for (int e = 0; e < E; e++)
            if (!used[e] && (b < 0 || p[e] > p[b]))
                b = e;
        used[b] = 1;
        idx[j] = b;
        S += (gate[j] = p[b]);
    }
    if (d->norm_topk)
        for (int j = 0; j < k; j++)
            gate[j] /= S;
    free(used);
}

/* Forward and (dout != NULL) backward of N tokens. out (N C), *aux; grads (the ep-1 layout,
 * added into) and dx (N C, written) from dout and aux_scale. */
static void moe_ref(const struct moe_dims *d, const float *params, const float *x, int N,
                    double *out, double *aux, const double *dout, double aux_scale, double *grads,
                    double *dx)
{
    int C = d->channels, E = d->experts, k = d->topk, F = d->ffn, Fs = d->shared_ffn;
    const float *wr = params + moe_router_off(), *sh = params + moe_shared_off(d);
    double *p = malloc((size_t)N * E * sizeof(double)), *gate = malloc((size_t)k * sizeof(double));
    int *idx = malloc((size_t)N * k * sizeof(int));
    double *f = calloc((size_t)E, sizeof(double)), *P = calloc((size_t)E, sizeof(double));
    for (int t = 0; t < N; t++) {
        ref_route(p + (size_t)t * E, idx + (size_t)t * k, gate, d, wr, x + (size_t)t * C);
        double *o = out + (size_t)t * C;
        memset(o, 0, (size_t)C * sizeof(double));
        if (Fs > 0)
            ref_mlp(o, 1.0, x + (size_t)t * C, sh, C, Fs);
        for (int j = 0; j < k; j++)
            ref_mlp(o, gate[j], x + (size_t)t * C, params + moe_expert_off(d, idx[t * k + j]), C,
                    F);
        for (int j = 0; j < k; j++)
            f[idx[t * k + j]] += 1.0 / ((double)N * k);
        for (int e = 0; e < E; e++)
            P[e] += p[(size_t)t * E + e] / N;
    }
    *aux = 0;
    if (d->aux_coef > 0)
        for (int e = 0; e < E; e++)
            *aux += d->aux_coef * E * f[e] * P[e];
    if (dout) {
        double *dp = malloc((size_t)E * sizeof(double)), *dg = malloc((size_t)k * sizeof(double));
        double *ps = malloc((size_t)E * sizeof(double));
        for (int t = 0; t < N; t++) {
            const float *xt = x + (size_t)t * C;
            const double *pt = p + (size_t)t * E, *go = dout + (size_t)t * C;
            double *dxt = dx + (size_t)t * C;
            memset(dxt, 0, (size_t)C * sizeof(double));
            ref_route(ps, idx + (size_t)t * k, gate, d, wr, xt); /* the gates again */
            if (Fs > 0)
                ref_mlp_back(dxt, grads + moe_shared_off(d), go, 1.0, xt, sh, C, Fs);
            for (int j = 0; j < k; j++) {
                int ex = idx[t * k + j];
                dg[j] = ref_mlp_dot(go, xt, params + moe_expert_off(d, ex), C, F);
                ref_mlp_back(dxt, grads + moe_expert_off(d, ex), go, gate[j], xt,
                             params + moe_expert_off(d, ex), C, F);
            }
            for (int e = 0; e < E; e++)
                dp[e] = d->aux_coef > 0 ? aux_scale * d->aux_coef * E * f[e] / N : 0.0;
            if (d->norm_topk) {
                double S = 0, dot = 0;
                for (int j = 0; j < k; j++) {
                    S += pt[idx[t * k + j]];
                    dot += dg[j] * gate[j];
                }
                for (int j = 0; j < k; j++)
                    dp[idx[t * k + j]] += (dg[j] - dot) / S;
            } else {
                for (int j = 0; j < k; j++)
                    dp[idx[t * k + j]] += dg[j];
            }
            double dot = 0;
            for (int e = 0; e < E; e++)
                dot += pt[e] * dp[e];
            for (int e = 0; e < E; e++) {
                double dl = pt[e] * (dp[e] - dot);
                for (int c = 0; c < C; c++) {
                    grads[moe_router_off() + (size_t)e * C + c] += dl * xt[c];
                    dxt[c] += dl * wr[(size_t)e * C + c];
                }
            }
        }
        free(dp);
        free(dg);
        free(ps);
    }
    free(p);
    free(gate);
    free(idx);
    free(f);
    free(P);
}

#endif
