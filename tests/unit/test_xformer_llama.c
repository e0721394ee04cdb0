/* tests/unit/test_xformer_llama.c: the executor's LLaMA block (exec/xformer_llama.h and its
 * use in exec/xformer_cpu.c) against values known independently of the code under test:
 * central finite differences of <f(x), R> for each kernel (RMSNorm, SwiGLU, RoPE, GQA
 * attention) and of the loss for every tensor of a whole LLaMA stage; RoPE's rotate_half
 * convention at a hand-worked position; GQA with one K/V head equal to multi-head attention
 * with that head copied to every head; the tiny-llama parameter count worked out by hand; the
 * counting allocator against the tensor list; FW + BW against FW + B + W and CFW + RC. */
#include <config.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/memcount.h"
#include "exec/xformer.h"
#include "exec/xformer_llama.h"
#include "tests/check.h"
#include "util/err.h"
#include "util/xalloc.h"

static uint64_t rng_state = 7;

static double rng_uniform(void)
{
    uint64_t x = (rng_state += 0x9E3779B97F4A7C15ull);
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    x ^= x >> 31;
    return (double)(x >> 11) * 0x1.0p-53;
}

static double rng_normal(void)
{
    double u1 = rng_uniform() + 0x1.0p-54, u2 = rng_uniform();
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

static double rel_diff(double a, double b)
{
    double m = fabs(a) > fabs(b) ? fabs(a) : fabs(b);
    return m == 0.0 ? 0.0 : fabs(a - b) / m;
}

/* ---- finite differences of an objective J(x), as tests/unit/test_xformer.c does them: h =
 * 1e-2 along g / |g| (1e-3 relative) and on the 3 largest coordinates (1e-2 relative + 1e-4
 * absolute); its header says why these sit at the bottom of fp32's error curve. One exception:
 * the whole model, whose first RMSNorm reads embedding rows of rms ~0.25 (its curvature grows as
 * 1 / rms^2): measured there, the worst directional error is 5.8e-3 at h = 1e-2, 5.4e-4 at
 * 3e-3 (the h^2 of truncation: 10.7x for 3.3x) and 7.9e-4 at 1e-3 (noise), so it uses 3e-3. */
static double FD_STEP = 1e-2;
#define FD_DIR_RTOL 1e-3
#define FD_ELEM_RTOL 1e-2
#define FD_ELEM_ATOL 1e-4
#define FD_ELEMS 3

typedef double (*objective_fn)(void *ctx);
static double worst_dir, worst_elem;

static void fd_check(objective_fn J, void *ctx, float *x, const float *g, size_t n,
                     const char *label)
{
    double norm = 0.0;
    for (size_t i = 0; i < n; i++)
        norm += (double)g[i] * g[i];
    norm = sqrt(norm);
    CHECK(norm > 1e-12);
    if (norm <= 1e-12) {
        fprintf(stderr, "fd %s: zero gradient\n", label);
        return;
    }
    float *save = xmalloc(n * sizeof(float));
    memcpy(save, x, n * sizeof(float));
    for (size_t i = 0; i < n; i++)
        x[i] = (float)(save[i] + FD_STEP * g[i] / norm);
    double fp = J(ctx);
    for (size_t i = 0; i < n; i++)
        x[i] = (float)(save[i] - FD_STEP * g[i] / norm);
    double fm = J(ctx);
    memcpy(x, save, n * sizeof(float));
    double r = rel_diff((fp - fm) / (2.0 * FD_STEP), norm);
    worst_dir = fmax(worst_dir, r);
    if (r > FD_DIR_RTOL)
        fprintf(stderr, "fd %s: directional %.8g vs |g| %.8g\n", label,
                (fp - fm) / (2.0 * FD_STEP), norm);
    CHECK(r <= FD_DIR_RTOL);
    int picked[FD_ELEMS];
    for (int k = 0; k < FD_ELEMS && k < (int)n; k++) {
        size_t best = 0;
        double bv = -1.0;
        for (size_t i = 0; i < n; i++) {
            int seen = 0;
            for (int j = 0; j < k; j++)
                seen |= picked[j] == (int)i;
            if (!seen && fabs(g[i]) > bv) {
                bv = fabs(g[i]);
                best = i;
            }
        }
        picked[k] = (int)best;
        float x0 = x[best];
        x[best] = (float)(x0 + FD_STEP);
        double hp = (double)x[best] - x0;
        fp = J(ctx);
        x[best] = (float)(x0 - FD_STEP);
        double hm = x0 - (double)x[best];
        fm = J(ctx);
        x[best] = x0;
        double fd = (fp - fm) / (hp + hm), err = fabs(fd - g[best]);
        worst_elem = fmax(worst_elem, rel_diff(fd, g[best]));
        if (err > FD_ELEM_RTOL * fabs(g[best]) + FD_ELEM_ATOL)
            fprintf(stderr, "fd %s[%zu]: %.8g vs analytic %.8g\n", label, best, fd, g[best]);
        CHECK(err <= FD_ELEM_RTOL * fabs(g[best]) + FD_ELEM_ATOL);
    }
    free(save);
}

static void fd_report(const char *name)
{
    printf("fd %s: worst relative error: directional %.2g, element %.2g\n", name, worst_dir,
           worst_elem);
    worst_dir = worst_elem = 0.0;
}

static double dot(const float *a, const float *b, size_t n)
{
    double s = 0.0;
    for (size_t i = 0; i < n; i++)
        s += (double)a[i] * b[i];
    return s;
}

/* ---- 1. the kernels ---- */

enum { KB = 2, KT = 6, KC = 16, KH = 4, KKV = 2, KF = 12 };
#define KN ((size_t)KB * KT)
#define KHS (KC / KH)
#define KKVC (KKV * KHS)
#define KW (KC + 2 * KKVC)

struct kctx {
    float *x, *w, *R, *out, *aux, *att;
    int kvc;
};

static double j_rmsnorm(void *p)
{
    struct kctx *c = p;
    rmsnorm_forward(c->out, c->aux, c->x, c->w, KN, KC);
    return dot(c->out, c->R, KN * KC);
}

static double j_swiglu(void *p)
{
    struct kctx *c = p;
    swiglu_forward(c->out, c->x, KN, KF);
    return dot(c->out, c->R, KN * KF);
}

static double j_rope(void *p)
{
    struct kctx *c = p;
    memcpy(c->out, c->x, KN * KW * sizeof(float));
    rope_apply(c->out, KB, KT, KW, KC, KHS, 1);
    rope_apply(c->out + KC, KB, KT, KW, KKVC, KHS, 1);
    return dot(c->out, c->R, KN * KW);
}

static double j_attention(void *p)
{
    struct kctx *c = p;
    gqa_attention_forward(c->out, c->att, c->x, KB, KT, KC, KH, c->kvc);
    return dot(c->out, c->R, KN * KC);
}

static void test_kernels(void)
{
    size_t big = KN * 2 * KW;
    struct kctx c = {xmalloc(big * 4), xmalloc(KC * 4), xmalloc(big * 4), xmalloc(big * 4),
                     xmalloc(big * 4), xmalloc((size_t)KB * KH * KT * KT * 4), KKVC};
    float *gx = xcalloc(big, 4), *gw = xcalloc(KC, 4), *datt = xmalloc((size_t)KT * KT * 4);

    /* RMSNorm: dx and dweight, gains away from 1 */
    fill_normal(c.x, KN * KC, 1.0);
    fill_normal(c.R, KN * KC, 1.0);
    for (int i = 0; i < KC; i++)
        c.w[i] = (float)(1.0 + 0.3 * rng_normal());
    j_rmsnorm(&c);
    rmsnorm_backward(gx, gw, c.R, c.x, c.w, c.aux, KN, KC);
    fd_check(j_rmsnorm, &c, c.x, gx, KN * KC, "rmsnorm dx");
    fd_check(j_rmsnorm, &c, c.w, gw, KC, "rmsnorm dweight");
    fd_report("rmsnorm");
    /* a hand-worked row: x = (3, 4, 0, ..., 0), w = 1: rms = sqrt(25 / C + eps) */
    float row[KC] = {3, 4}, one[KC], y[KC], rs;
    for (int i = 0; i < KC; i++)
        one[i] = 1.0f;
    rmsnorm_forward(y, &rs, row, one, 1, KC);
    CHECK_NEAR(y[0], 3.0 / sqrt(25.0 / KC + 1e-5), 1e-6);
    CHECK_NEAR(y[1], 4.0 / sqrt(25.0 / KC + 1e-5), 1e-6);

    /* SwiGLU: d(gate | up); silu(1) * 2 = 2 / (1 + e^-1) by hand */
    fill_normal(c.x, KN * 2 * KF, 1.5);
    fill_normal(c.R, KN * KF, 1.0);
    for (size_t r = 0; r < KN; r++)
        memcpy(gx + r * 2 * KF, c.R + r * KF, KF * sizeof(float));
    swiglu_backward(gx, c.x, KN, KF);
    fd_check(j_swiglu, &c, c.x, gx, KN * 2 * KF, "swiglu d(gate|up)");
    fd_report("swiglu");
    float gu[2 * KF] = {0}, so[KF];
    gu[0] = 1.0f;
    gu[KF] = 2.0f;
    swiglu_forward(so, gu, 1, KF);
    CHECK_NEAR(so[0], 2.0 / (1.0 + exp(-1.0)), 1e-6);

    /* RoPE: the transpose is the gradient */
    fill_normal(c.x, KN * KW, 1.0);
    fill_normal(c.R, KN * KW, 1.0);
    memcpy(gx, c.R, KN * KW * sizeof(float));
    rope_apply(gx, KB, KT, KW, KC, KHS, -1);
    rope_apply(gx + KC, KB, KT, KW, KKVC, KHS, -1);
    fd_check(j_rope, &c, c.x, gx, KN * KW, "rope dx");
    fd_report("rope");
    /* rotate_half by hand, head size 4, position 1: pairs (0, 2) at angle 1 and (1, 3) at
     * 10000^(-1/2) = 0.01; e_0 goes to cos 1 e_0 + sin 1 e_2, e_3 to -sin 0.01 e_1 + cos 0.01
     * e_3; position 0 is the identity */
    float r4[2 * 4] = {0, 0, 0, 0, 1, 0, 0, 1};
    rope_apply(r4, 1, 2, 4, 4, 4, 1);
    CHECK_NEAR(r4[0], 0.0, 0.0);
    CHECK_NEAR(r4[4], cos(1.0), 1e-7);
    CHECK_NEAR(r4[6], sin(1.0), 1e-7);
    CHECK_NEAR(r4[5], -sin(0.01), 1e-7);
    CHECK_NEAR(r4[7] , 1.0 + cos(0.01) - 1.0, 1e-7);
    CHECK_NEAR(r4[4] * r4[4] + r4[6] * r4[6], 1.0, 1e-6);

    /* GQA attention (4 query heads on 2 K/V heads): dqkv */
    fill_normal(c.x, KN * KW, 1.0);
    fill_normal(c.R, KN * KC, 1.0);
    j_attention(&c);
    gqa_attention_backward(gx, datt, c.R, c.x, c.att, KB, KT, KC, KH, KKVC);
    fd_check(j_attention, &c, c.x, gx, KN * KW, "gqa dqkv");
    fd_report("gqa attention");

    /* one K/V head shared by all 4 = multi-head attention with it copied to every head */
    int W1 = KC + 2 * KHS, W4 = 3 * KC;
    float *q1 = xmalloc(KN * W1 * 4), *q4 = xmalloc(KN * W4 * 4);
    float *o1 = xmalloc(KN * KC * 4), *o4 = xmalloc(KN * KC * 4);
    fill_normal(q1, KN * W1, 1.0);
    for (size_t r = 0; r < KN; r++) {
        memcpy(q4 + r * W4, q1 + r * W1, KC * 4);
        for (int h = 0; h < KH; h++) {
            memcpy(q4 + r * W4 + KC + h * KHS, q1 + r * W1 + KC, KHS * 4);
            memcpy(q4 + r * W4 + 2 * KC + h * KHS, q1 + r * W1 + KC + KHS, KHS * 4);
        }
    }
    gqa_attention_forward(o1, c.att, q1, KB, KT, KC, KH, KHS);
    gqa_attention_forward(o4, c.att, q4, KB, KT, KC, KH, KC);
    CHECK(memcmp(o1, o4, KN * KC * 4) == 0);
    free(q1), free(q4), free(o1), free(o4);
    free(c.x), free(c.w), free(c.R), free(c.out), free(c.aux), free(c.att);
    free(gx), free(gw), free(datt);
}

/* ---- 2. a whole LLaMA stage: every tensor and the stage input ---- */

struct sctx {
    struct xformer_stage *s;
    int B, T, C;
    int *tokens, *targets;
    float *hidden, *R, *out;
};

static double j_stage(void *p)
{
    struct sctx *c = p;
    struct mt_err e = {0};
    struct xformer_act *a;
    float loss = 0.0f;
    int first = xformer_stage_is_first(c->s), last = xformer_stage_is_last(c->s);
    must(xformer_forward(c->s, first ? c->tokens : NULL, first ? NULL : c->hidden,
                         last ? c->targets : NULL, c->B, c->T, XFORMER_KEEP_FULL, 0,
                         last ? NULL : c->out, last ? &loss : NULL, &a, &e),
         &e, "forward");
    xformer_act_free(a);
    return last ? loss : dot(c->out, c->R, (size_t)c->B * c->T * c->C);
}

static void fd_stage(struct sctx *c, const struct xformer_dims *d, const char *name)
{
    struct mt_err e = {0};
    struct xformer_act *a;
    float loss;
    size_t NC = (size_t)c->B * c->T * c->C;
    int first = xformer_stage_is_first(c->s), last = xformer_stage_is_last(c->s);
    float *din = xmalloc(NC * 4);
    xformer_stage_zero_grad(c->s);
    must(xformer_forward(c->s, first ? c->tokens : NULL, first ? NULL : c->hidden,
                         last ? c->targets : NULL, c->B, c->T, XFORMER_KEEP_FULL, 0,
                         last ? NULL : c->out, last ? &loss : NULL, &a, &e),
         &e, "forward");
    must(xformer_backward(&a, last ? NULL : c->R, first ? NULL : din, &e), &e, "backward");
    size_t np = xformer_stage_nparams(c->s);
    float *grads = xmalloc(np * 4), *params = xformer_stage_params(c->s);
    memcpy(grads, xformer_stage_grads(c->s), np * 4);
    int kinds = 0;
    for (int t = 0; t < XFORMER_NTENSORS; t++) {
        int layer_t = t >= XFORMER_LN1W && t <= XFORMER_FCPROJB;
        for (int l = layer_t ? 0 : -1; l < (layer_t ? d->layers : 0); l++) {
            struct xformer_view v;
            if (xformer_stage_tensor(c->s, (enum xformer_tensor)t, l, &v, NULL) != MT_OK)
                continue;
            char label[96];
            snprintf(label, sizeof label, "%s %s[layer %d]", name,
                     xformer_tensor_name((enum xformer_tensor)t), l);
            fd_check(j_stage, c, v.param, grads + (v.param - params), v.n, label);
            kinds++;
        }
    }
    if (!first)
        fd_check(j_stage, c, c->hidden, din, NC, "dinput");
    printf("%s: %d tensors%s; ", name, kinds, first ? "" : " + dinput");
    fd_report(name);
    free(grads);
    free(din);
}

static struct xformer_stage *stage_new(const struct xformer_dims *d, int first, int n)
{
    struct xformer_stage *s = NULL;
    struct mt_err e = {0};
    must(xformer_stage_create(d, first, n, 1337, &s, &e), &e, "stage_create");
    return s;
}

static void perturb(struct xformer_stage *s)
{
    float *p = xformer_stage_params(s);
    for (size_t i = 0; i < xformer_stage_nparams(s); i++)
        p[i] += (float)(0.25 * rng_normal());
}

static const struct xformer_dims small = {.vocab = 32, .max_seq = 8, .channels = 16, .heads = 4,
                                          .ffn = 24, .layers = 3, .block = XFORMER_BLOCK_LLAMA,
                                          .kv_heads = 2};

static void test_stage_fd(void)
{
    int B = 2, T = 8;
    size_t N = (size_t)B * T, NC = N * small.channels;
    struct sctx c = {NULL, B, T, small.channels, xmalloc(N * 4), xmalloc(N * 4), xmalloc(NC * 4),
                     xmalloc(NC * 4), xmalloc(NC * 4)};
    for (size_t i = 0; i < N; i++) {
        c.tokens[i] = (int)(rng_uniform() * small.vocab);
        c.targets[i] = (int)(rng_uniform() * small.vocab);
    }
    fill_normal(c.R, NC, 1.0);
    struct xformer_dims d2 = small;
    d2.layers = 2;
    /* the whole model: embedding, two blocks, head */
    c.s = stage_new(&d2, 0, 2);
    perturb(c.s);
    FD_STEP = 3e-3;
    fd_stage(&c, &d2, "llama whole");
    FD_STEP = 1e-2;
    xformer_stage_free(c.s);
    /* a middle block of three: dout in, dinput out */
    c.s = stage_new(&small, 1, 1);
    perturb(c.s);
    fill_normal(c.hidden, NC, 1.0);
    fd_stage(&c, &small, "llama middle");
    xformer_stage_free(c.s);
    /* the last stage: head + dinput */
    c.s = stage_new(&small, 2, 1);
    perturb(c.s);
    fd_stage(&c, &small, "llama last");
    xformer_stage_free(c.s);
    free(c.tokens), free(c.targets), free(c.hidden), free(c.R), free(c.out);
}

/* ---- 3. sizes, parameters, split backward and recompute ---- */

static void test_sizes_and_paths(void)
{
    /* tiny-llama (h 64, 8 layers, 4 heads, 2 K/V heads, SwiGLU 176, V 256): per layer two
     * RMSNorm gains 2 x 64, q 64 x 64 + k, v 2 x 32 x 64, o 64 x 64, gate, up, down 3 x 176 x 64
     * = 128 + 8192 + 4096 + 33792 = 46208; embedding 16384; final norm 64 + head 16384 */
    struct xformer_dims t = {.vocab = 256, .max_seq = 64, .channels = 64, .heads = 4, .ffn = 176,
                             .layers = 8, .block = XFORMER_BLOCK_LLAMA, .kv_heads = 2};
    CHECK_EQ_INT(xformer_param_count(&t, 0, 8), 8 * 46208 + 16384 + 16448);
    CHECK_EQ_INT(xformer_param_count(&t, 2, 3), 3 * 46208);

    /* memcount against the tensor list: a FW of 2 middle layers keeps the input (N, C) and per
     * layer ln1 atty res2 ln2 res3 (5 NC), qkv N (C + 2 kvc), two rstd (2N), att B H T T,
     * gate | up 2NF and SwiGLU NF; the last stage adds the head lnf NC, rstd N, probs NV,
     * losses N and the targets */
    int B = 2, T = 8;
    size_t N = (size_t)B * T, C = 16, kvc = 8, F = 24, H = 4, V = 32;
    size_t layer = 5 * N * C + N * (C + 2 * kvc) + 2 * N + B * H * T * T + 3 * N * F;
    struct xformer_act_size mid = xformer_act_bytes(&small, 1, 1, B, T);
    CHECK_EQ_INT(mid.full_bytes, 4 * (N * C + layer));
    struct xformer_act_size last = xformer_act_bytes(&small, 1, 2, B, T);
    CHECK_EQ_INT(last.full_bytes, 4 * (N * C + N + 2 * layer + N * C + N + N * V + N));
    CHECK_EQ_INT(mid.bw_scratch_bytes, 4 * (2 * N * C + N * (C + 2 * kvc) + T * T + 2 * N * F));

    struct mt_err e = {0};
    struct xformer_stage *s = stage_new(&small, 1, 2);
    float *hidden = xmalloc(N * C * 4);
    int *targets = xmalloc(N * 4);
    for (size_t i = 0; i < N; i++)
        targets[i] = (int)(rng_uniform() * V);
    fill_normal(hidden, N * C, 1.0);
    perturb(s);
    struct xformer_act *a;
    float loss, loss2, *din = xmalloc(N * C * 4), *din2 = xmalloc(N * C * 4);
    size_t before = memcount_current();
    must(xformer_forward(s, NULL, hidden, targets, B, T, XFORMER_KEEP_FULL, 0, NULL, &loss, &a,
                         &e),
         &e, "fw");
    CHECK_EQ_INT(memcount_current() - before, last.full_bytes);
    size_t np = xformer_stage_nparams(s);
    float *g1 = xmalloc(np * 4);
    xformer_stage_zero_grad(s);
    must(xformer_backward(&a, NULL, din, &e), &e, "bw");
    memcpy(g1, xformer_stage_grads(s), np * 4);
    CHECK_EQ_INT(memcount_current(), before);

    /* CFW + RC + (B then W) gives FW + BW's loss and gradients bit for bit */
    xformer_stage_zero_grad(s);
    must(xformer_forward(s, NULL, hidden, targets, B, T, XFORMER_KEEP_CHECKPOINT, 0, NULL, &loss2,
                         &a, &e),
         &e, "cfw");
    CHECK_EQ_INT(memcount_current() - before, last.ckpt_bytes);
    must(xformer_recompute(a, &e), &e, "rc");
    CHECK_EQ_INT(memcount_current() - before, last.full_bytes);
    struct xformer_wgrad *w;
    must(xformer_backward_input(&a, NULL, din2, &w, &e), &e, "b");
    must(xformer_backward_weight(&w, &e), &e, "w");
    CHECK(loss == loss2);
    CHECK(memcmp(din, din2, N * C * 4) == 0);
    CHECK(memcmp(g1, xformer_stage_grads(s), np * 4) == 0);
    /* selective: the first of the two layers checkpointed */
    xformer_stage_zero_grad(s);
    must(xformer_forward(s, NULL, hidden, targets, B, T, XFORMER_KEEP_CHECKPOINT, 1, NULL, &loss2,
                         &a, &e),
         &e, "cfw(1)");
    CHECK_EQ_INT(memcount_current() - before, xformer_sel_bytes(&small, 1, 2, 1, B, T).keep_bytes);
    must(xformer_recompute(a, &e), &e, "rc(1)");
    must(xformer_backward(&a, NULL, din2, &e), &e, "bw(1)");
    CHECK(memcmp(g1, xformer_stage_grads(s), np * 4) == 0);
    xformer_stage_free(s);

    /* a split equals the unsplit model: layers [1, 2) then [2, 3) */
    struct xformer_stage *s1 = stage_new(&small, 1, 1), *s2 = stage_new(&small, 2, 1);
    s = stage_new(&small, 1, 2);
    float *mid_out = xmalloc(N * C * 4), *dmid = xmalloc(N * C * 4);
    must(xformer_forward(s, NULL, hidden, targets, B, T, XFORMER_KEEP_FULL, 0, NULL, &loss, &a,
                         &e),
         &e, "fw");
    must(xformer_backward(&a, NULL, din, &e), &e, "bw");
    struct xformer_act *a1, *a2;
    must(xformer_forward(s1, NULL, hidden, NULL, B, T, XFORMER_KEEP_FULL, 0, mid_out, NULL, &a1,
                         &e),
         &e, "fw1");
    must(xformer_forward(s2, NULL, mid_out, targets, B, T, XFORMER_KEEP_FULL, 0, NULL, &loss2,
                         &a2, &e),
         &e, "fw2");
    must(xformer_backward(&a2, NULL, dmid, &e), &e, "bw2");
    must(xformer_backward(&a1, dmid, din2, &e), &e, "bw1");
    CHECK(loss == loss2);
    CHECK(memcmp(din, din2, N * C * 4) == 0);
    size_t n1 = xformer_stage_nparams(s1);
    CHECK(memcmp(xformer_stage_grads(s), xformer_stage_grads(s1), n1 * 4) == 0);
    CHECK(memcmp(xformer_stage_grads(s) + n1, xformer_stage_grads(s2),
                 xformer_stage_nparams(s2) * 4) == 0);
    xformer_stage_free(s), xformer_stage_free(s1), xformer_stage_free(s2);

    /* the LLaMA block holds no biases and no position table */
    s = stage_new(&small, 0, 3);
    struct xformer_view v;
    CHECK(xformer_stage_tensor(s, XFORMER_WPE, -1, &v, NULL) != MT_OK);
    CHECK(xformer_stage_tensor(s, XFORMER_QKVB, 0, &v, NULL) != MT_OK);
    CHECK(xformer_stage_tensor(s, XFORMER_LNFB, -1, &v, NULL) != MT_OK);
    CHECK(xformer_stage_tensor(s, XFORMER_QKVW, 0, &v, NULL) == MT_OK && v.n == 32 * 16);
    xformer_stage_free(s);
    /* dims it cannot run */
    struct xformer_dims bad = small;
    bad.kv_heads = 3;
    CHECK(xformer_dims_check(&bad, &e) != MT_OK);
    bad = small;
    bad.channels = 12; /* head size 3: odd */
    CHECK(xformer_dims_check(&bad, &e) != MT_OK);
    free(hidden), free(targets), free(din), free(din2), free(g1), free(mid_out), free(dmid);
}

int main(void)
{
    test_kernels();
    test_stage_fd();
    test_sizes_and_paths();
    return check_report("test_xformer_llama");
}
