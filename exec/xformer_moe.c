/* exec/xformer_moe.c: the mixture-of-experts MLP (exec/xformer_moe.h). Layer kernels follow
 * llm.c's order (outputs, inputs, sizes); the SwiGLU activation is the LLaMA block's
 * (exec/xformer_llama.h). Every buffer a forward keeps, and every scratch, comes from
 * exec/memcount.c, so its bytes are measured. */
#include <config.h>
#include "exec/xformer_moe.h"

#include <cblas.h>
#include <math.h>
#include <string.h>
#include <time.h>

#include "exec/memcount.h"
#include "exec/xformer_llama.h"
#include "util/err.h"

#define MOE_INIT_STD 0.02
#define MOE_MAX_BLOCKS 24

/* ---- the local group ----------------------------------------------------------------- */

static int local_alltoall_int(struct moe_ep *g, const int *send, int *recv, int per,
                              struct mt_err *e)
{
    (void)g;
    (void)e;
    memcpy(recv, send, (size_t)per * sizeof(int));
    return MT_OK;
}

static int local_alltoallv(struct moe_ep *g, const float *send, const int *scount,
                           const int *sdispl, float *recv, const int *rcount, const int *rdispl,
                           int width, struct mt_err *e)
{
    (void)g;
    if (scount[0] != rcount[0])
        return err_set(e, MT_EINVAL, "moe: local exchange of %d rows into %d", scount[0],
                       rcount[0]);
    if (scount[0] > 0)
        memcpy(recv + (size_t)rdispl[0] * width, send + (size_t)sdispl[0] * width,
               (size_t)scount[0] * width * sizeof(float));
    return MT_OK;
}

void moe_ep_local(struct moe_ep *g)
{
    memset(g, 0, sizeof *g);
    g->size = 1;
    g->rank = 0;
    g->alltoall_int = local_alltoall_int;
    g->alltoallv = local_alltoallv;
}

/* ---- sizes and weights ----------------------------------------------------------------- */

int moe_dims_check(const struct moe_dims *d, int ep, struct mt_err *e)
{
    if (d->channels < 1 || d->experts < 1 || d->ffn < 1)
        return err_set(e, MT_EINVAL, "moe: channels, experts and ffn must be >= 1 (got %d, %d, %d)",
                       d->channels, d->experts, d->ffn);
    if (d->topk < 1 || d->topk > d->experts)
        return err_set(e, MT_EINVAL, "moe: topk %d outside 1..experts (%d)", d->topk, d->experts);
    if (d->shared_ffn < 0)
        return err_set(e, MT_EINVAL, "moe: shared_ffn %d < 0", d->shared_ffn);
    if (!(d->aux_coef >= 0.0f))
        return err_set(e, MT_EINVAL, "moe: aux_coef %g < 0", (double)d->aux_coef);
    if (ep < 1 || d->experts % ep != 0)
        return err_set(e, MT_EINVAL, "moe: ep %d does not divide the %d experts", ep, d->experts);
    return MT_OK;
}

static size_t expert_numel(const struct moe_dims *d)
{
    return 3 * (size_t)d->ffn * d->channels;
}

size_t moe_router_off(void)
{
    return 0;
}

size_t moe_shared_off(const struct moe_dims *d)
{
    return (size_t)d->experts * d->channels;
}

size_t moe_expert_off(const struct moe_dims *d, int local_e)
{
    return moe_shared_off(d) + 3 * (size_t)d->shared_ffn * d->channels +
           (size_t)local_e * expert_numel(d);
}

size_t moe_param_count(const struct moe_dims *d, int ep)
{
    return moe_expert_off(d, d->experts / ep);
}

/* splitmix64 (Steele, Lea & Flood 2014), the finaliser of the weights' hash. */
static uint64_t mix64(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* N(0, std) by Box-Muller from two hashes of (seed, layer, tensor, element). */
static float hashed_normal(uint64_t seed, int layer, int tensor, size_t i, double std)
{
    uint64_t k = mix64(seed ^ mix64(((uint64_t)(unsigned)layer << 40) ^
                                    ((uint64_t)(unsigned)tensor << 20) ^ 0x6d6f65ull));
    uint64_t a = mix64(k ^ (2 * (uint64_t)i)), b = mix64(k ^ (2 * (uint64_t)i + 1));
    double u1 = ((double)(a >> 11) + 0.5) * 0x1.0p-53, u2 = (double)(b >> 11) * 0x1.0p-53;
    return (float)(std * sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
}

static void fill(float *w, size_t n, uint64_t seed, int layer, int tensor, double std)
{
    for (size_t i = 0; i < n; i++)
        w[i] = hashed_normal(seed, layer, tensor, i, std);
}

/* Tensor ids of the hash: 0 router, 1 / 2 the shared W13 / W2, 3 + 2e / 4 + 2e expert e's. */
void moe_init_params(const struct moe_dims *d, int ep, int ep_rank, uint64_t seed, int layer,
                     int layers, float *params)
{
    size_t C = (size_t)d->channels, F = (size_t)d->ffn, Fs = (size_t)d->shared_ffn;
    double proj_std = MOE_INIT_STD / sqrt(2.0 * (layers > 0 ? layers : 1));
    fill(params + moe_router_off(), (size_t)d->experts * C, seed, layer, 0, MOE_INIT_STD);
    float *sh = params + moe_shared_off(d);
    fill(sh, 2 * Fs * C, seed, layer, 1, MOE_INIT_STD);
    fill(sh + 2 * Fs * C, C * Fs, seed, layer, 2, proj_std);
    int El = d->experts / ep;
    for (int le = 0; le < El; le++) {
        int ge = ep_rank * El + le;
        float *w = params + moe_expert_off(d, le);
        fill(w, 2 * F * C, seed, layer, 3 + 2 * ge, MOE_INIT_STD);
        fill(w + 2 * F * C, C * F, seed, layer, 4 + 2 * ge, proj_std);
    }
}

/* ---- the handle ------------------------------------------------------------------------ */

struct moe_act {
    int N, R;       /* local tokens; copies received from the group */
    int k;          /* experts a token */
    float *x;       /* (N, C) the input */
    float *probs;   /* (N, E) the router's softmax */
    int *idx;       /* (N, k) chosen experts */
    float *gates;   /* (N, k) their weights */
    int *pos;       /* (N, k) the row of each copy in the send order */
    int *counts;    /* 4 ep: scount sdispl rcount rdispl (rows) */
    int *rexp;      /* (ep, E/ep) copies received from each rank for each local expert */
    int *perm;      /* (R) expert-major row -> received row */
    float *xe;      /* (R, C) the received copies, expert-major */
    float *h;       /* (R, 2F) W13 xe */
    float *act;     /* (R, F) silu(gate) * up */
    float *yo;      /* (N k, C) the experts' outputs back home, send order */
    float *hs, *as; /* shared expert: (N, 2Fs), (N, Fs) */
    float *frac;    /* (E) f_e of the aux loss */
    void *blocks[MOE_MAX_BLOCKS];
    int nblocks;
    size_t bytes;
};

static void *keep(struct moe_act *a, size_t bytes)
{
    void *p = memcount_alloc(bytes ? bytes : 1);
    a->blocks[a->nblocks++] = p;
    a->bytes += bytes ? bytes : 1;
    return p;
}

void moe_act_free(struct moe_act *a)
{
    if (!a)
        return;
    for (int i = 0; i < a->nblocks; i++)
        memcount_free(a->blocks[i]);
    memcount_free(a);
}

size_t moe_act_bytes(const struct moe_act *a)
{
    return a->bytes + sizeof *a;
}

size_t moe_act_bytes_balanced(const struct moe_dims *d, int ep, int N)
{
    size_t C = (size_t)d->channels, E = (size_t)d->experts, F = (size_t)d->ffn;
    size_t Fs = (size_t)d->shared_ffn, n = (size_t)N, Nk = n * (size_t)d->topk, R = Nk;
    size_t floats = n * C + n * E + Nk + Nk * C + E /* x probs gates yo frac */
                    + R * C + R * 2 * F + R * F     /* xe h act */
                    + (Fs ? n * 3 * Fs : 0);        /* hs as */
    size_t ints = 2 * Nk + 4 * (size_t)ep + E + R;  /* idx pos counts rexp perm */
    return sizeof(struct moe_act) + (floats + ints) * 4;
}

int moe_act_expert(const struct moe_act *a, int t, int j)
{
    return a->idx[(size_t)t * a->k + j];
}

float moe_act_gate(const struct moe_act *a, int t, int j)
{
    return a->gates[(size_t)t * a->k + j];
}

/* ---- routing --------------------------------------------------------------------------- */

/* probs (N, E) = softmax(x Wr^T) row by row. */
static void router_forward(float *probs, const float *x, const float *wr, int N, int C, int E)
{
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, N, E, C, 1.0f, x, C, wr, C, 0.0f, probs,
                E);
    for (int t = 0; t < N; t++) {
        float *r = probs + (size_t)t * E, mx = r[0], sum = 0.0f;
        for (int i = 1; i < E; i++)
            mx = r[i] > mx ? r[i] : mx;
        for (int i = 0; i < E; i++) {
            r[i] = expf(r[i] - mx);
            sum += r[i];
        }
        float inv = 1.0f / sum;
        for (int i = 0; i < E; i++)
            r[i] *= inv;
    }
}

/* The k largest of one row, largest first; a tie goes to the lower index (strict >). */
static void topk_row(int *idx, float *gate, const float *p, int E, int k, int norm)
{
    float sum = 0.0f;
    for (int j = 0; j < k; j++) {
        int best = -1;
        for (int i = 0; i < E; i++) {
            int taken = 0;
            for (int q = 0; q < j; q++)
                taken |= idx[q] == i;
            if (!taken && (best < 0 || p[i] > p[best]))
                best = i;
        }
        idx[j] = best;
        gate[j] = p[best];
        sum += p[best];
    }
    if (norm)
        for (int j = 0; j < k; j++)
            gate[j] /= sum;
}

/* ---- the experts' SwiGLU MLP over n rows ------------------------------------------------ */

static void mlp_forward(float *y, float *h, float *act, const float *x, const float *w13,
                        const float *w2, int n, int C, int F)
{
    if (n == 0)
        return;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, 2 * F, C, 1.0f, x, C, w13, C, 0.0f, h,
                2 * F);
    swiglu_forward(act, h, (size_t)n, F);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, C, F, 1.0f, act, F, w2, F, 0.0f, y, C);
}

/* dx (n, C) = the input gradient (written, or added with accumulate); dw13, dw2 added into.
 * dh (n, 2F) is scratch. */
static void mlp_backward(float *dx, float *dw13, float *dw2, float *dh, const float *dy,
                         const float *x, const float *h, const float *act, const float *w13,
                         const float *w2, int n, int C, int F, int accumulate)
{
    if (n == 0)
        return;
    /* d(act) into the first F floats of each dh row, then SwiGLU's backward in place */
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, F, C, 1.0f, dy, C, w2, F, 0.0f, dh,
                2 * F);
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, C, F, n, 1.0f, dy, C, act, F, 1.0f, dw2,
                F);
    swiglu_backward(dh, h, (size_t)n, F);
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, 2 * F, C, n, 1.0f, dh, 2 * F, x, C, 1.0f,
                dw13, C);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, C, 2 * F, 1.0f, dh, 2 * F, w13, C,
                accumulate ? 1.0f : 0.0f, dx, C);
}

/* ---- forward --------------------------------------------------------------------------- */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The group's exchange of the per-expert counts, timed. */
static int exchange_counts(struct moe_ep *g, const int *send, int *recv, int per, struct mt_err *e)
{
    double t0 = now_s();
    int rc = g->alltoall_int(g, send, recv, per, e);
    g->a2a_s += now_s() - t0;
    return rc;
}

/* The group's exchange of rows, timed and counted. */
static int exchange(struct moe_ep *g, const float *send, const int *scount, const int *sdispl,
                    float *recv, const int *rcount, const int *rdispl, int width, struct mt_err *e)
{
    double t0 = now_s();
    TRY(g->alltoallv(g, send, scount, sdispl, recv, rcount, rdispl, width, e));
    double dt = now_s() - t0, sent = 0;
    for (int r = 0; r < g->size; r++)
        if (r != g->rank)
            sent += (double)scount[r] * width * sizeof(float);
    g->a2a_s += dt;
    g->a2a_calls++;
    g->a2a_bytes += sent;
    if (g->on_exchange)
        g->on_exchange(g->exchange_ctx, dt, sent);
    return MT_OK;
}

/* Moves rows between the send order (N k copies) and the expert-major order (R copies) through
 * the received order; dir > 0: expert-major rows from received rows, dir < 0 the reverse. */
static void permute_rows(float *dst, const float *src, const int *perm, int R, int C, int dir)
{
    for (int i = 0; i < R; i++) {
        const float *s = dir > 0 ? src + (size_t)perm[i] * C : src + (size_t)i * C;
        float *t = dir > 0 ? dst + (size_t)i * C : dst + (size_t)perm[i] * C;
        memcpy(t, s, (size_t)C * sizeof(float));
    }
}

int moe_forward(const struct moe_dims *d, struct moe_ep *g, const float *params, const float *x,
                int N, float *out, float *aux, struct moe_act **out_act, struct mt_err *e)
{
    *out_act = NULL;
    TRY(moe_dims_check(d, g->size, e));
    if (N < 0)
        return err_set(e, MT_EINVAL, "moe: %d tokens", N);
    const int C = d->channels, E = d->experts, k = d->topk, F = d->ffn, Fs = d->shared_ffn;
    const int ep = g->size, El = E / ep, Nk = N * k;
    struct moe_act *a = memcount_alloc(sizeof *a);
    memset(a, 0, sizeof *a);
    a->N = N;
    a->k = k;
    a->x = keep(a, (size_t)N * C * sizeof(float));
    memcpy(a->x, x, (size_t)N * C * sizeof(float));
    a->probs = keep(a, (size_t)N * E * sizeof(float));
    a->idx = keep(a, (size_t)Nk * sizeof(int));
    a->gates = keep(a, (size_t)Nk * sizeof(float));
    a->pos = keep(a, (size_t)Nk * sizeof(int));
    a->counts = keep(a, 4 * (size_t)ep * sizeof(int));
    a->rexp = keep(a, (size_t)E * sizeof(int));
    a->frac = keep(a, (size_t)E * sizeof(float));
    int *scount = a->counts, *sdispl = scount + ep, *rcount = sdispl + ep, *rdispl = rcount + ep;

    router_forward(a->probs, x, params + moe_router_off(), N, C, E);
    for (int t = 0; t < N; t++)
        topk_row(a->idx + (size_t)t * k, a->gates + (size_t)t * k, a->probs + (size_t)t * E, E, k,
                 d->norm_topk);

    /* send order: by global expert (rank-major, then local expert), then token, then slot */
    int *sexp = memcount_alloc((size_t)E * sizeof(int)); /* copies for each global expert */
    memset(sexp, 0, (size_t)E * sizeof(int));
    for (int i = 0; i < Nk; i++)
        sexp[a->idx[i]]++;
    int run = 0;
    for (int ge = 0; ge < E; ge++) {
        int c = sexp[ge];
        sexp[ge] = run; /* now the next free row of that expert */
        run += c;
    }
    for (int i = 0; i < Nk; i++)
        a->pos[i] = sexp[a->idx[i]]++;
    /* sexp[ge] is now the end of its run: the counts are the differences */
    for (int ge = E - 1; ge > 0; ge--)
        sexp[ge] -= sexp[ge - 1];
    for (int ge = 0; ge < E; ge++)
        a->frac[ge] = Nk > 0 ? (float)sexp[ge] / (float)Nk : 0.0f;
    int rc = exchange_counts(g, sexp, a->rexp, El, e);
    if (rc == MT_OK) {
        int so = 0, ro = 0;
        for (int r = 0; r < ep; r++) {
            scount[r] = rcount[r] = 0;
            for (int le = 0; le < El; le++) {
                scount[r] += sexp[r * El + le];
                rcount[r] += a->rexp[r * El + le];
            }
            sdispl[r] = so;
            rdispl[r] = ro;
            so += scount[r];
            ro += rcount[r];
        }
        a->R = ro;
    }
    memcount_free(sexp);
    if (rc != MT_OK) {
        moe_act_free(a);
        return err_wrap(e, "moe dispatch counts");
    }
    const int R = a->R;

    /* dispatch */
    float *xs = memcount_alloc((size_t)Nk * C * sizeof(float) + 1);
    for (int i = 0; i < Nk; i++)
        memcpy(xs + (size_t)a->pos[i] * C, x + (size_t)(i / k) * C, (size_t)C * sizeof(float));
    float *xr = memcount_alloc((size_t)R * C * sizeof(float) + 1);
    rc = exchange(g, xs, scount, sdispl, xr, rcount, rdispl, C, e);
    memcount_free(xs);
    if (rc != MT_OK) {
        memcount_free(xr);
        moe_act_free(a);
        return err_wrap(e, "moe dispatch");
    }
    /* expert-major: local expert, then source rank, then the source's order */
    a->perm = keep(a, (size_t)R * sizeof(int));
    {
        int i = 0;
        for (int le = 0; le < El; le++)
            for (int r = 0; r < ep; r++) {
                int base = rdispl[r];
                for (int q = 0; q < le; q++)
                    base += a->rexp[r * El + q];
                for (int c = 0; c < a->rexp[r * El + le]; c++)
                    a->perm[i++] = base + c;
            }
    }
    a->xe = keep(a, (size_t)R * C * sizeof(float));
    permute_rows(a->xe, xr, a->perm, R, C, 1);
    a->h = keep(a, (size_t)R * 2 * F * sizeof(float));
    a->act = keep(a, (size_t)R * F * sizeof(float));
    float *ye = xr; /* the received rows are in xe now: reuse their buffer */
    float *yr = memcount_alloc((size_t)R * C * sizeof(float) + 1);
    for (int le = 0, row = 0; le < El; le++) {
        int n = 0;
        for (int r = 0; r < ep; r++)
            n += a->rexp[r * El + le];
        const float *w = params + moe_expert_off(d, le);
        mlp_forward(ye + (size_t)row * C, a->h + (size_t)row * 2 * F, a->act + (size_t)row * F,
                    a->xe + (size_t)row * C, w, w + 2 * (size_t)F * C, n, C, F);
        row += n;
    }
    permute_rows(yr, ye, a->perm, R, C, -1);
    memcount_free(xr);
    /* combine: the outputs go back the way they came */
    a->yo = keep(a, (size_t)Nk * C * sizeof(float));
    rc = exchange(g, yr, rcount, rdispl, a->yo, scount, sdispl, C, e);
    memcount_free(yr);
    if (rc != MT_OK) {
        moe_act_free(a);
        return err_wrap(e, "moe combine");
    }

    /* out = shared(x) + the gated sum, slot by slot */
    if (Fs > 0) {
        const float *sw = params + moe_shared_off(d);
        a->hs = keep(a, (size_t)N * 2 * Fs * sizeof(float));
        a->as = keep(a, (size_t)N * Fs * sizeof(float));
        mlp_forward(out, a->hs, a->as, x, sw, sw + 2 * (size_t)Fs * C, N, C, Fs);
    } else {
        memset(out, 0, (size_t)N * C * sizeof(float));
    }
    for (int t = 0; t < N; t++)
        for (int j = 0; j < k; j++) {
            const float *yo = a->yo + (size_t)a->pos[t * k + j] * C;
            float gt = a->gates[t * k + j];
            float *o = out + (size_t)t * C;
            for (int c = 0; c < C; c++)
                o[c] += gt * yo[c];
        }
    *aux = 0.0f;
    if (d->aux_coef > 0.0f && N > 0) {
        double s = 0.0;
        for (int ge = 0; ge < E; ge++) {
            double P = 0.0;
            for (int t = 0; t < N; t++)
                P += a->probs[(size_t)t * E + ge];
            s += a->frac[ge] * (P / N);
        }
        *aux = (float)(d->aux_coef * E * s);
    }
    *out_act = a;
    return MT_OK;
}

/* ---- backward -------------------------------------------------------------------------- */

/* dl (E) = the logits' gradient from the gates' dg (k) of one token (and the aux term). */
static void router_row_backward(float *dl, const float *p, const int *idx, const float *gate,
                                const float *dg, const float *aux_dp, int E, int k, int norm)
{
    for (int i = 0; i < E; i++)
        dl[i] = aux_dp ? aux_dp[i] : 0.0f;
    if (norm) {
        /* g_j = p_j / S, S = sum of the chosen p: dp_m = (dg_m - sum_j dg_j g_j) / S */
        float S = 0.0f, dot = 0.0f;
        for (int j = 0; j < k; j++) {
            S += p[idx[j]];
            dot += dg[j] * gate[j];
        }
        for (int j = 0; j < k; j++)
            dl[idx[j]] += (dg[j] - dot) / S;
    } else {
        for (int j = 0; j < k; j++)
            dl[idx[j]] += dg[j];
    }
    /* softmax: dl = p (dp - <p, dp>) */
    float dot = 0.0f;
    for (int i = 0; i < E; i++)
        dot += p[i] * dl[i];
    for (int i = 0; i < E; i++)
        dl[i] = p[i] * (dl[i] - dot);
}

int moe_backward(const struct moe_dims *d, struct moe_ep *g, const float *params, float *grads,
                 struct moe_act **act, const float *dout, float aux_scale, float *dx,
                 struct mt_err *e)
{
    struct moe_act *a = *act;
    const int C = d->channels, E = d->experts, k = d->topk, F = d->ffn, Fs = d->shared_ffn;
    const int ep = g->size, El = E / ep, N = a->N, Nk = N * k, R = a->R;
    int *scount = a->counts, *sdispl = scount + ep, *rcount = sdispl + ep, *rdispl = rcount + ep;

    /* the gates' gradient, and the experts' output gradient in the send order */
    float *dg = memcount_alloc((size_t)Nk * sizeof(float) + 1);
    float *dys = memcount_alloc((size_t)Nk * C * sizeof(float) + 1);
    for (int t = 0; t < N; t++)
        for (int j = 0; j < k; j++) {
            size_t row = (size_t)a->pos[t * k + j] * C;
            const float *go = dout + (size_t)t * C, *yo = a->yo + row;
            float gt = a->gates[t * k + j], s = 0.0f;
            for (int c = 0; c < C; c++) {
                s += go[c] * yo[c];
                dys[row + c] = gt * go[c];
            }
            dg[t * k + j] = s;
        }
    /* the combine's transpose: gradients travel home -> expert, as the dispatch did */
    float *dyr = memcount_alloc((size_t)R * C * sizeof(float) + 1);
    int rc = exchange(g, dys, scount, sdispl, dyr, rcount, rdispl, C, e);
    memcount_free(dys);
    if (rc != MT_OK) {
        memcount_free(dg);
        memcount_free(dyr);
        return err_wrap(e, "moe combine backward");
    }
    float *dye = memcount_alloc((size_t)R * C * sizeof(float) + 1);
    permute_rows(dye, dyr, a->perm, R, C, 1);
    float *dh = memcount_alloc((size_t)R * 2 * F * sizeof(float) + 1);
    float *dxe = dyr; /* reuse: the received gradients are in dye now */
    for (int le = 0, row = 0; le < El; le++) {
        int n = 0;
        for (int r = 0; r < ep; r++)
            n += a->rexp[r * El + le];
        size_t off = moe_expert_off(d, le);
        const float *w = params + off;
        float *gw = grads + off;
        mlp_backward(dxe + (size_t)row * C, gw, gw + 2 * (size_t)F * C, dh + (size_t)row * 2 * F,
                     dye + (size_t)row * C, a->xe + (size_t)row * C, a->h + (size_t)row * 2 * F,
                     a->act + (size_t)row * F, w, w + 2 * (size_t)F * C, n, C, F, 0);
        row += n;
    }
    memcount_free(dh);
    permute_rows(dye, dxe, a->perm, R, C, -1); /* dye: the input gradients, received order */
    memcount_free(dyr);
    /* the dispatch's transpose: input gradients travel expert -> home */
    float *dxs = memcount_alloc((size_t)Nk * C * sizeof(float) + 1);
    rc = exchange(g, dye, rcount, rdispl, dxs, scount, sdispl, C, e);
    memcount_free(dye);
    if (rc != MT_OK) {
        memcount_free(dg);
        memcount_free(dxs);
        return err_wrap(e, "moe dispatch backward");
    }

    /* dx: the shared expert's, then each slot's copy, then the router's */
    if (Fs > 0) {
        size_t off = moe_shared_off(d);
        float *dhs = memcount_alloc((size_t)N * 2 * Fs * sizeof(float) + 1);
        mlp_backward(dx, grads + off, grads + off + 2 * (size_t)Fs * C, dhs, dout, a->x, a->hs,
                     a->as, params + off, params + off + 2 * (size_t)Fs * C, N, C, Fs, 0);
        memcount_free(dhs);
    } else {
        memset(dx, 0, (size_t)N * C * sizeof(float));
    }
    for (int t = 0; t < N; t++)
        for (int j = 0; j < k; j++) {
            const float *s = dxs + (size_t)a->pos[t * k + j] * C;
            float *o = dx + (size_t)t * C;
            for (int c = 0; c < C; c++)
                o[c] += s[c];
        }
    memcount_free(dxs);
    float *aux_dp = NULL;
    if (d->aux_coef > 0.0f && N > 0) {
        aux_dp = memcount_alloc((size_t)E * sizeof(float));
        for (int ge = 0; ge < E; ge++)
            aux_dp[ge] = aux_scale * d->aux_coef * (float)E * a->frac[ge] / (float)N;
    }
    float *dl = memcount_alloc((size_t)N * E * sizeof(float) + 1);
    for (int t = 0; t < N; t++)
        router_row_backward(dl + (size_t)t * E, a->probs + (size_t)t * E, a->idx + (size_t)t * k,
                            a->gates + (size_t)t * k, dg + (size_t)t * k, aux_dp, E, k,
                            d->norm_topk);
    if (N > 0) {
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, E, C, N, 1.0f, dl, E, a->x, C, 1.0f,
                    grads + moe_router_off(), C);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, C, E, 1.0f, dl, E,
                    params + moe_router_off(), C, 1.0f, dx, C);
    }
    memcount_free(dl);
    memcount_free(aux_dp);
    memcount_free(dg);
    moe_act_free(a);
    *act = NULL;
    return MT_OK;
}
