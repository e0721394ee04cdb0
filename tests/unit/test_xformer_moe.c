/* tests/unit/test_xformer_moe.c: the MoE MLP (exec/xformer_moe.h) on one rank (ep 1, the local
 * group) against values known apart from it: the parameter count worked by hand; the routing
 * of equal logits (ties to the lower index: experts 0..k-1, gates 1/E or 1/k); the forward
 * output, the input gradient and every parameter gradient against tests/moe_ref.h (a
 * per-token double-precision reference without BLAS, permutation or exchange) with and without
 * the shared expert, gate renormalisation and the aux loss; central finite differences of
 * <out, R> + aux on a tiny case whose routing margins exceed the step; the weights of an ep-2
 * split equal to the ep-1 weights' slices; the handle's bytes against memcount and the closed
 * form; no byte left held after backward. In a stage (exec/xformer_cpu.c): the tiny-moe
 * parameter count by hand, the ranges an ep allreduce sums, FW + BW = FW + B + W = two
 * stages bit for bit, CFW refused, finite differences of the loss. The ep-2
 * exchange over MPI is tests/mpi/test_moe_ep.sh. */
#include <config.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/memcount.h"
#include "exec/xformer.h"
#include "exec/xformer_moe.h"
#include "tests/check.h"
#include "tests/moe_ref.h"
#include "util/err.h"

static uint64_t rng_state = 11;

static double rng_normal(void)
{
    uint64_t a = (rng_state += 0x9E3779B97F4A7C15ull), b = (rng_state += 0x9E3779B97F4A7C15ull);
    a = (a ^ (a >> 30)) * 0xBF58476D1CE4E5B9ull;
    a = (a ^ (a >> 27)) * 0x94D049BB133111EBull;
    b = (b ^ (b >> 30)) * 0xBF58476D1CE4E5B9ull;
    b = (b ^ (b >> 27)) * 0x94D049BB133111EBull;
    double u1 = ((double)((a ^ (a >> 31)) >> 11) + 0.5) * 0x1.0p-53;
    double u2 = (double)((b ^ (b >> 31)) >> 11) * 0x1.0p-53;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

static void fill_normal(float *v, size_t n, double std)
{
    for (size_t i = 0; i < n; i++)
        v[i] = (float)(std * rng_normal());
}

static void must(int rc, const struct mt_err *e, const char *what)
{
    if (rc != MT_OK) {
        fprintf(stderr, "%s: %s\n", what, e->msg);
        exit(1);
    }
}

/* The largest |a - b| over the largest |b| of a vector (0 for two zero vectors). */
static double vec_rel(const float *a, const double *b, size_t n)
{
    double dmax = 0, bmax = 0;
    for (size_t i = 0; i < n; i++) {
        double df = fabs((double)a[i] - b[i]);
        dmax = df > dmax ? df : dmax;
        bmax = fabs(b[i]) > bmax ? fabs(b[i]) : bmax;
    }
    return bmax == 0 ? dmax : dmax / bmax;
}

/* fp32 layer against the double reference: the worst of out, dx and each tensor's gradient
 * (relative to the tensor's largest value) stays under 2e-5. */
#define REF_RTOL 2e-5

static void check_against_ref(const struct moe_dims *d, int N, const char *label)
{
    struct mt_err e = {0};
    size_t np = moe_param_count(d, 1), nx = (size_t)N * d->channels;
    float *params = malloc(np * sizeof(float)), *grads = calloc(np, sizeof(float));
    moe_init_params(d, 1, 0, 99, 0, 2, params);
    /* larger router weights than the init's, so that routing is not nearly uniform */
    fill_normal(params + moe_router_off(), (size_t)d->experts * d->channels, 0.5);
    float *x = malloc(nx * sizeof(float)), *out = malloc(nx * sizeof(float));
    float *dout = malloc(nx * sizeof(float)), *dx = malloc(nx * sizeof(float));
    fill_normal(x, nx, 1.0);
    fill_normal(dout, nx, 1.0);
    struct moe_ep g;
    moe_ep_local(&g);
    size_t before = memcount_current();
    struct moe_act *a;
    float aux;
    must(moe_forward(d, &g, params, x, N, out, &aux, &a, &e), &e, "forward");
    /* at ep 1 every copy stays: the closed form's balanced routing is exact */
    CHECK_EQ_INT(moe_act_bytes(a), moe_act_bytes_balanced(d, 1, N));
    CHECK_EQ_INT(memcount_current() - before, moe_act_bytes(a));
    must(moe_backward(d, &g, params, grads, &a, dout, 0.5f, dx, &e), &e, "backward");
    CHECK(a == NULL);
    CHECK_EQ_INT(memcount_current(), before);
    CHECK_EQ_INT(g.a2a_calls, 4);
    CHECK(g.a2a_bytes == 0.0); /* one rank sends nothing to others */

    double *rout = malloc(nx * sizeof(double)), *rdx = malloc(nx * sizeof(double));
    double *rdout = malloc(nx * sizeof(double)), *rgrads = calloc(np, sizeof(double)), raux;
    for (size_t i = 0; i < nx; i++)
        rdout[i] = dout[i];
    moe_ref(d, params, x, N, rout, &raux, rdout, 0.5, rgrads, rdx);
    double w_out = vec_rel(out, rout, nx), w_dx = vec_rel(dx, rdx, nx);
    double w_router = vec_rel(grads, rgrads, moe_shared_off(d));
    double w_exp = 0;
    for (int ex = 0; ex < d->experts; ex++) {
        size_t o = moe_expert_off(d, ex), n = moe_expert_off(d, ex + 1) - o;
        double w = vec_rel(grads + o, rgrads + o, n);
        w_exp = w > w_exp ? w : w_exp;
    }
    double w_sh = d->shared_ffn ? vec_rel(grads + moe_shared_off(d), rgrads + moe_shared_off(d),
                                          moe_expert_off(d, 0) - moe_shared_off(d))
                                : 0.0;
    printf("%s: out %.2g dx %.2g router %.2g shared %.2g experts %.2g aux %.9g (ref %.9g)\n", label,
           w_out, w_dx, w_router, w_sh, w_exp, (double)aux, raux);
    CHECK(w_out < REF_RTOL);
    CHECK(w_dx < REF_RTOL);
    CHECK(w_router < REF_RTOL);
    CHECK(w_sh < REF_RTOL);
    CHECK(w_exp < REF_RTOL);
    CHECK_NEAR(aux, raux, 1e-6 * fabs(raux));
    if (d->aux_coef > 0)
        CHECK(raux > 0);
    free(params);
    free(grads);
    free(x);
    free(out);
    free(dout);
    free(dx);
    free(rout);
    free(rdx);
    free(rdout);
    free(rgrads);
}

static void test_counts_and_checks(void)
{
    /* C 8, E 4, F 6, Fs 4: router 4x8 = 32, shared 3x4x8 = 96, an expert 3x6x8 = 144 */
    struct moe_dims d = {8, 4, 2, 6, 4, 0, 0.0f};
    CHECK_EQ_INT(moe_param_count(&d, 1), 32 + 96 + 4 * 144);
    CHECK_EQ_INT(moe_param_count(&d, 2), 32 + 96 + 2 * 144);
    CHECK_EQ_INT(moe_expert_off(&d, 1), 32 + 96 + 144);
    struct mt_err e = {0};
    CHECK_EQ_INT(moe_dims_check(&d, 3, &e), MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "ep 3 does not divide the 4 experts");
    struct moe_dims bad = d;
    bad.topk = 5;
    CHECK_EQ_INT(moe_dims_check(&bad, 1, &e), MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "topk 5");
}

/* A zero router: every p = 1/E; the ties go to experts 0 and 1 with gates 1/4 (or 1/2). */
static void test_ties(void)
{
    struct mt_err e = {0};
    for (int norm = 0; norm <= 1; norm++) {
        struct moe_dims d = {8, 4, 2, 6, 0, norm, 0.0f};
        size_t np = moe_param_count(&d, 1);
        float *params = malloc(np * sizeof(float));
        moe_init_params(&d, 1, 0, 5, 0, 2, params);
        memset(params, 0, (size_t)d.experts * d.channels * sizeof(float));
        float x[3 * 8], out[3 * 8], aux;
        fill_normal(x, 24, 1.0);
        struct moe_ep g;
        moe_ep_local(&g);
        struct moe_act *a;
        must(moe_forward(&d, &g, params, x, 3, out, &aux, &a, &e), &e, "forward");
        for (int t = 0; t < 3; t++) {
            CHECK_EQ_INT(moe_act_expert(a, t, 0), 0);
            CHECK_EQ_INT(moe_act_expert(a, t, 1), 1);
            CHECK(moe_act_gate(a, t, 0) == (norm ? 0.5f : 0.25f));
        }
        moe_act_free(a);
        free(params);
    }
}

/* Every ep split holds the ep-1 weights' slices, bit for bit. */
static void test_split_weights(void)
{
    struct moe_dims d = {8, 4, 2, 6, 4, 1, 0.0f};
    size_t n1 = moe_param_count(&d, 1), n2 = moe_param_count(&d, 2);
    float *w1 = malloc(n1 * sizeof(float)), *w2 = malloc(n2 * sizeof(float));
    moe_init_params(&d, 1, 0, 7, 3, 4, w1);
    for (int r = 0; r < 2; r++) {
        moe_init_params(&d, 2, r, 7, 3, 4, w2);
        CHECK(memcmp(w1, w2, moe_expert_off(&d, 0) * sizeof(float)) == 0);
        CHECK(memcmp(w1 + moe_expert_off(&d, 2 * r), w2 + moe_expert_off(&d, 0),
                     2 * (moe_expert_off(&d, 1) - moe_expert_off(&d, 0)) * sizeof(float)) == 0);
    }
    /* another layer has other weights */
    moe_init_params(&d, 2, 0, 7, 4, 4, w2);
    CHECK(memcmp(w1, w2, 16 * sizeof(float)) != 0);
    free(w1);
    free(w2);
}

/* ---- finite differences of J = <out, R> + s aux, in double over the fp32 layer ---------- */
struct fd_ctx {
    const struct moe_dims *d;
    float *params, *x;
    const float *R;
    int N;
    float s;
};

static double fd_objective(struct fd_ctx *c)
{
    struct mt_err e = {0};
    size_t nx = (size_t)c->N * c->d->channels;
    float *out = malloc(nx * sizeof(float)), aux;
    struct moe_ep g;
    moe_ep_local(&g);
    struct moe_act *a;
    must(moe_forward(c->d, &g, c->params, c->x, c->N, out, &aux, &a, &e), &e, "fd forward");
    double J = c->s * aux;
    for (size_t i = 0; i < nx; i++)
        J += (double)out[i] * c->R[i];
    moe_act_free(a);
    free(out);
    return J;
}

/* The smallest gap between a token's k-th and (k+1)-th probability (routing stays put under
 * a perturbation that moves the logits by less). */
static double routing_margin(const struct moe_dims *d, const float *params, const float *x, int N)
{
    double worst = 1;
    double *p = malloc((size_t)d->experts * sizeof(double)), g[8];
    int idx[8];
    for (int t = 0; t < N; t++) {
        ref_route(p, idx, g, d, params + moe_router_off(), x + (size_t)t * d->channels);
        double kth = p[idx[d->topk - 1]], next = 0;
        for (int ex = 0; ex < d->experts; ex++) {
            int chosen = 0;
            for (int j = 0; j < d->topk; j++)
                chosen |= idx[j] == ex;
            if (!chosen && p[ex] > next)
                next = p[ex];
        }
        worst = kth - next < worst ? kth - next : worst;
    }
    free(p);
    return worst;
}

/* Central differences along the gradient's direction (step h along g / |g|, 1e-3 relative),
 * as tests/unit/test_xformer_llama.c does them. */
static void fd_dir(struct fd_ctx *c, float *v, const float *g, size_t n, const char *label)
{
    double norm = 0;
    for (size_t i = 0; i < n; i++)
        norm += (double)g[i] * g[i];
    norm = sqrt(norm);
    CHECK(norm > 0);
    const double h = 1e-2;
    float *save = malloc(n * sizeof(float));
    memcpy(save, v, n * sizeof(float));
    for (size_t i = 0; i < n; i++)
        v[i] = save[i] + (float)(h * g[i] / norm);
    double jp = fd_objective(c);
    for (size_t i = 0; i < n; i++)
        v[i] = save[i] - (float)(h * g[i] / norm);
    double jm = fd_objective(c);
    memcpy(v, save, n * sizeof(float));
    double fd = (jp - jm) / (2 * h), rel = fabs(fd - norm) / norm;
    printf("fd %s: directional %.9g analytic %.9g rel %.2g\n", label, fd, norm, rel);
    CHECK(rel < 1e-3);
    free(save);
}

static void test_finite_differences(void)
{
    struct mt_err e = {0};
    struct moe_dims d = {6, 4, 2, 5, 3, 1, 0.1f};
    const int N = 5;
    size_t np = moe_param_count(&d, 1), nx = (size_t)N * d.channels;
    float *params = malloc(np * sizeof(float)), *grads = calloc(np, sizeof(float));
    moe_init_params(&d, 1, 0, 3, 0, 1, params);
    for (size_t i = 0; i < np; i++)
        params[i] *= 10.0f; /* weights of order 0.2: the experts' outputs are not ~0 */
    float *x = malloc(nx * sizeof(float)), *R = malloc(nx * sizeof(float));
    float *out = malloc(nx * sizeof(float)), *dx = malloc(nx * sizeof(float)), aux;
    /* a token set whose routing margins are wide, so +-h moves no token to another expert */
    for (int tries = 0;; tries++) {
        fill_normal(x, nx, 1.0);
        if (routing_margin(&d, params, x, N) > 0.05)
            break;
        CHECK(tries < 100);
        if (tries >= 100)
            return;
    }
    fill_normal(R, nx, 1.0);
    struct moe_ep g;
    moe_ep_local(&g);
    struct moe_act *a;
    const float s = 3.0f;
    must(moe_forward(&d, &g, params, x, N, out, &aux, &a, &e), &e, "forward");
    must(moe_backward(&d, &g, params, grads, &a, R, s, dx, &e), &e, "backward");
    struct fd_ctx c = {&d, params, x, R, N, s};
    fd_dir(&c, params + moe_router_off(), grads + moe_router_off(), moe_shared_off(&d), "router");
    fd_dir(&c, params + moe_shared_off(&d), grads + moe_shared_off(&d),
           moe_expert_off(&d, 0) - moe_shared_off(&d), "shared expert");
    for (int ex = 0; ex < d.experts; ex++) {
        char label[32];
        snprintf(label, sizeof label, "expert %d", ex);
        size_t o = moe_expert_off(&d, ex);
        fd_dir(&c, params + o, grads + o, moe_expert_off(&d, ex + 1) - o, label);
    }
    fd_dir(&c, x, dx, nx, "input");
    free(params);
    free(grads);
    free(x);
    free(R);
    free(out);
    free(dx);
}

/* ---- the block in a stage (exec/xformer_cpu.c) ----------------------------------------- */

static const struct xformer_dims moe_small = {.vocab = 32,
                                              .max_seq = 8,
                                              .channels = 16,
                                              .heads = 4,
                                              .ffn = 12,
                                              .layers = 2,
                                              .block = XFORMER_BLOCK_LLAMA,
                                              .kv_heads = 2,
                                              .experts = 4,
                                              .topk = 2,
                                              .moe_ffn = 12,
                                              .shared_ffn = 8,
                                              .norm_topk = 1};

struct stage_run {
    float loss;
    float *grads;
    size_t n;
};

/* One micro-batch through [0, L) as one stage (split: FW + B + W) or as two stages. */
static struct stage_run stage_run(const struct xformer_dims *d, const int *tok, const int *tgt,
                                  int B, int T, int mode)
{
    struct mt_err e = {0};
    struct stage_run r = {0};
    if (mode < 2) {
        struct xformer_stage *s;
        must(xformer_stage_create(d, 0, d->layers, 1337, &s, &e), &e, "stage");
        struct xformer_act *a;
        must(xformer_forward(s, tok, NULL, tgt, B, T, XFORMER_KEEP_FULL, 0, NULL, &r.loss, &a, &e),
             &e, "forward");
        if (mode == 0) {
            must(xformer_backward(&a, NULL, NULL, &e), &e, "backward");
        } else {
            struct xformer_wgrad *w;
            must(xformer_backward_input(&a, NULL, NULL, &w, &e), &e, "B");
            must(xformer_backward_weight(&w, &e), &e, "W");
        }
        r.n = xformer_stage_nparams(s);
        r.grads = malloc(r.n * sizeof(float));
        memcpy(r.grads, xformer_stage_grads(s), r.n * sizeof(float));
        xformer_stage_free(s);
        return r;
    }
    struct xformer_stage *s1, *s2;
    must(xformer_stage_create(d, 0, 1, 1337, &s1, &e), &e, "stage 1");
    must(xformer_stage_create(d, 1, d->layers - 1, 1337, &s2, &e), &e, "stage 2");
    size_t nc = (size_t)B * T * d->channels;
    float *h = malloc(nc * sizeof(float)), *dh = malloc(nc * sizeof(float));
    struct xformer_act *a1, *a2;
    must(xformer_forward(s1, tok, NULL, NULL, B, T, XFORMER_KEEP_FULL, 0, h, NULL, &a1, &e), &e,
         "forward 1");
    must(xformer_forward(s2, NULL, h, tgt, B, T, XFORMER_KEEP_FULL, 0, NULL, &r.loss, &a2, &e), &e,
         "forward 2");
    must(xformer_backward(&a2, NULL, dh, &e), &e, "backward 2");
    must(xformer_backward(&a1, dh, NULL, &e), &e, "backward 1");
    size_t n1 = xformer_stage_nparams(s1), n2 = xformer_stage_nparams(s2);
    r.n = n1 + n2;
    r.grads = malloc(r.n * sizeof(float));
    memcpy(r.grads, xformer_stage_grads(s1), n1 * sizeof(float));
    memcpy(r.grads + n1, xformer_stage_grads(s2), n2 * sizeof(float));
    xformer_stage_free(s1);
    xformer_stage_free(s2);
    free(h);
    free(dh);
    return r;
}

static void test_stage(void)
{
    struct mt_err e = {0};
    /* tiny-moe by hand: per layer RMSNorm 64, qkv (64 + 2 x 32) x 64 = 8192, attproj 4096,
     * RMSNorm 64, router 4 x 64 = 256, an expert 3 x 96 x 64 = 18432; embedding and head
     * 256 x 64 = 16384 each, the final RMSNorm 64 */
    struct xformer_dims tm = {.vocab = 256,
                              .max_seq = 64,
                              .channels = 64,
                              .heads = 4,
                              .ffn = 96,
                              .layers = 4,
                              .block = XFORMER_BLOCK_LLAMA,
                              .kv_heads = 2,
                              .experts = 4,
                              .topk = 2,
                              .moe_ffn = 96};
    size_t attn = 64 + 8192 + 4096 + 64;
    CHECK_EQ_INT(xformer_param_count(&tm, 0, 4), 16384 + 4 * (attn + 256 + 4 * 18432) + 16448);
    tm.ep = 2;
    CHECK_EQ_INT(xformer_param_count(&tm, 0, 4), 16384 + 4 * (attn + 256 + 2 * 18432) + 16448);
    /* the ranges an ep allreduce sums: all but the local experts */
    struct xformer_stage *s;
    must(xformer_stage_create(&tm, 1, 2, 1, &s, &e), &e, "stage");
    size_t off[4], len[4], sum = 0;
    int nr = xformer_stage_ep_ranges(s, off, len, 4);
    CHECK_EQ_INT(nr, 3);
    for (int i = 0; i < nr; i++)
        sum += len[i];
    CHECK_EQ_INT(sum, 2 * (attn + 256));
    CHECK_EQ_INT(off[1], attn + 256 + 2 * 18432);
    xformer_stage_free(s);
    tm.ep_rank = 2;
    CHECK_EQ_INT(xformer_stage_create(&tm, 0, 1, 1, &s, &e), MT_EINVAL);

    const int B = 2, T = 8;
    int tok[16], tgt[16];
    for (int i = 0; i < B * T; i++) {
        tok[i] = (7 * i + 3) % moe_small.vocab;
        tgt[i] = (5 * i + 1) % moe_small.vocab;
    }
    struct stage_run whole = stage_run(&moe_small, tok, tgt, B, T, 0);
    struct stage_run split = stage_run(&moe_small, tok, tgt, B, T, 1);
    struct stage_run two = stage_run(&moe_small, tok, tgt, B, T, 2);
    CHECK(whole.loss == split.loss && whole.loss == two.loss);
    CHECK(whole.n == split.n && whole.n == two.n);
    CHECK(memcmp(whole.grads, split.grads, whole.n * sizeof(float)) == 0); /* FW+BW = FW+B+W */
    CHECK(memcmp(whole.grads, two.grads, whole.n * sizeof(float)) == 0);   /* any split */
    /* a checkpointed forward is refused, naming why */
    must(xformer_stage_create(&moe_small, 0, 2, 1337, &s, &e), &e, "stage");
    struct xformer_act *a = NULL;
    float loss;
    CHECK_EQ_INT(
        xformer_forward(s, tok, NULL, tgt, B, T, XFORMER_KEEP_CHECKPOINT, 0, NULL, &loss, &a, &e),
        MT_EUNSUPPORTED);
    CHECK_STR_CONTAINS(e.msg, "MoE stage");
    /* finite differences of the loss along its gradient in the first layer's MoE buffer */
    struct xformer_view v;
    must(xformer_stage_tensor(s, XFORMER_FCW, 0, &v, &e), &e, "tensor");
    size_t fcw_off = (size_t)(v.param - xformer_stage_params(s));
    const float *g = whole.grads + fcw_off;
    double norm = 0;
    for (size_t i = 0; i < v.n; i++)
        norm += (double)g[i] * g[i];
    norm = sqrt(norm);
    float *save = malloc(v.n * sizeof(float));
    memcpy(save, v.param, v.n * sizeof(float));
    double J[2];
    for (int sgn = 0; sgn < 2; sgn++) {
        for (size_t i = 0; i < v.n; i++)
            v.param[i] = save[i] + (float)((sgn ? -1e-2 : 1e-2) * g[i] / norm);
        must(xformer_forward(s, tok, NULL, tgt, B, T, XFORMER_KEEP_FULL, 0, NULL, &loss, &a, &e),
             &e, "fd forward");
        J[sgn] = loss;
        xformer_act_free(a);
    }
    memcpy(v.param, save, v.n * sizeof(float));
    double fd = (J[0] - J[1]) / 2e-2;
    printf("stage: loss %.9g; FW+BW = FW+B+W = two stages bit for bit; fd of the MoE buffer "
           "%.6g vs %.6g (rel %.2g)\n",
           (double)whole.loss, fd, norm, fabs(fd - norm) / norm);
    /* the stage's loss is a float: its rounding (2.4e-7 at 3.5) over the 2.5e-4 the step moves
     * it is 1e-3, so 1e-2 */
    CHECK(fabs(fd - norm) / norm < 1e-2);
    free(save);
    xformer_stage_free(s);
    free(whole.grads);
    free(split.grads);
    free(two.grads);
}

int main(void)
{
    test_counts_and_checks();
    test_ties();
    test_split_weights();
    struct moe_dims plain = {16, 4, 2, 12, 0, 0, 0.0f};
    check_against_ref(&plain, 24, "top-2 of 4, no shared, unnormalised");
    struct moe_dims mixtral = {16, 8, 2, 12, 0, 1, 0.0f};
    check_against_ref(&mixtral, 24, "top-2 of 8, renormalised");
    struct moe_dims deepseek = {16, 8, 3, 8, 10, 0, 0.01f};
    check_against_ref(&deepseek, 32, "top-3 of 8, shared expert, aux loss");
    struct moe_dims top1 = {8, 4, 1, 6, 0, 0, 0.0f};
    check_against_ref(&top1, 2, "top-1 of 4, 2 tokens (idle experts)");
    test_finite_differences();
    test_stage();
    return check_report("test_xformer_moe");
}
