/* tests/unit/test_xformer.c: the executor's CPU model (exec/xformer_cpu.c), its counting
 * allocator and its dataset, against values known independently of the code under test:
 * central finite differences of the loss for every parameter tensor kind and for the stage
 * input; the unsplit model for any pipeline split; FW for CFW + RC; activation sizes worked
 * out by hand from the tensor list; ln(256) for the initial loss of a byte-level model. */
#include <config.h>

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "exec/dataset.h"
#include "exec/memcount.h"
#include "exec/xformer.h"
#include "model/xformer_layout.h"
#include "tests/check.h"
#include "util/err.h"
#include "util/xalloc.h"

#define SEED 1337u

/* ------------------------------------------------------------------------------------ */
/* helpers                                                                               */
/* ------------------------------------------------------------------------------------ */

static uint64_t rng_state = 42;

static double rng_uniform(void) /* [0, 1) */
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

static void fill_tokens(int *v, size_t n, int V)
{
    for (size_t i = 0; i < n; i++)
        v[i] = (int)(rng_uniform() * V);
}

static void fill_normal(float *v, size_t n, double std)
{
    for (size_t i = 0; i < n; i++)
        v[i] = (float)(std * rng_normal());
}

static struct xformer_stage *stage_new(const struct xformer_dims *d, int first, int n)
{
    struct xformer_stage *s = NULL;
    struct mt_err e = {0};
    if (xformer_stage_create(d, first, n, SEED, &s, &e) != MT_OK) {
        fprintf(stderr, "stage_create: %s\n", e.msg);
        exit(1);
    }
    return s;
}

static void must(int rc, const struct mt_err *e, const char *what)
{
    if (rc != MT_OK) {
        fprintf(stderr, "%s: %s\n", what, e->msg);
        exit(1);
    }
}

static int tensor_is_layer(enum xformer_tensor t)
{
    return t >= XFORMER_LN1W && t <= XFORMER_FCPROJB;
}

static double rel_diff(double a, double b)
{
    double m = fabs(a) > fabs(b) ? fabs(a) : fabs(b);
    return m == 0.0 ? 0.0 : fabs(a - b) / m;
}

/* ------------------------------------------------------------------------------------ */
/* 1. finite differences                                                                  */
/* ------------------------------------------------------------------------------------ */

/* One stage fed a fixed micro-batch. Objective: the mean loss on the last stage, and
 * J = <out_hidden, R> (accumulated in double) elsewhere, so dJ/dout = R is the dout. */
struct fd_case {
    struct xformer_stage *s;
    const struct xformer_dims *d;
    int B, T;
    int *tokens;   /* first stage */
    float *hidden; /* other stages: the input, perturbed for the dinput check */
    int *targets;  /* last stage */
    float *R;      /* non-last stages */
    float *out;    /* B*T*C */
};

static double fd_objective(struct fd_case *c)
{
    struct mt_err e = {0};
    struct xformer_act *a;
    float loss = 0.0f;
    int first = xformer_stage_is_first(c->s), last = xformer_stage_is_last(c->s);
    must(xformer_forward(c->s, first ? c->tokens : NULL, first ? NULL : c->hidden,
                         last ? c->targets : NULL, c->B, c->T, XFORMER_KEEP_FULL, 0,
                         last ? NULL : c->out, last ? &loss : NULL, &a, &e),
         &e, "forward");
    xformer_act_free(a);
    if (last)
        return loss;
    double j = 0.0;
    size_t n = (size_t)c->B * c->T * c->d->channels;
    for (size_t i = 0; i < n; i++)
        j += (double)c->out[i] * c->R[i];
    return j;
}

/* zero_grad, FW, BW: grads of the objective in the stage's buffer, dinput in din */
static void fd_analytic(struct fd_case *c, float *din)
{
    struct mt_err e = {0};
    struct xformer_act *a;
    float loss;
    int first = xformer_stage_is_first(c->s), last = xformer_stage_is_last(c->s);
    xformer_stage_zero_grad(c->s);
    must(xformer_forward(c->s, first ? c->tokens : NULL, first ? NULL : c->hidden,
                         last ? c->targets : NULL, c->B, c->T, XFORMER_KEEP_FULL, 0,
                         last ? NULL : c->out, last ? &loss : NULL, &a, &e),
         &e, "forward");
    must(xformer_backward(&a, last ? NULL : c->R, first ? NULL : din, &e), &e, "backward");
}

/* Tolerances. Every objective is computed in fp32, so it carries rounding noise of about
 * 1e-7 x |J|; a central difference with step h turns that into ~1e-7 |J| / h of noise and adds
 * a truncation error of h^2 |J'''| / 6. Measured here with steps 3e-2, 1e-2, 3e-3, 1e-3: the
 * worst relative error falls as h^2 down to h = 1e-2 (3e-4 directional, 5e-4 per element),
 * then grows as 1/h (noise: 9e-4 and 4e-3 at h = 1e-3), so h = 1e-2 sits at the bottom of
 * the curve. Directional: the step goes along the unit vector g/|g|, where the slope is |g|
 * itself (0.05..5), so the check sees the whole tensor at once; 1e-3 relative is 3x the worst
 * error seen. Per element (the largest coordinates, smaller slopes): 1e-2 relative plus 1e-4
 * absolute, 20x the worst seen. Wrong gradients miss these widely: a 5 % error in one term of
 * GELU's derivative gives 0.8-1.6 % directional errors, a dropped term of the softmax or the
 * layernorm backward about 50 %. */
#define FD_STEP 1e-2
#define FD_DIR_RTOL 1e-3
#define FD_ELEM_RTOL 1e-2
#define FD_ELEM_ATOL 1e-4
#define FD_ELEMS 3

static double fd_worst_dir, fd_worst_elem; /* worst relative errors seen, for the report */

static void fd_check_vector(struct fd_case *c, float *x, const float *g, size_t n,
                            const char *label)
{
    /* directional derivative along g/|g| */
    double norm = 0.0;
    for (size_t i = 0; i < n; i++)
        norm += (double)g[i] * g[i];
    norm = sqrt(norm);
    if (norm < 1e-12) {
        fprintf(stderr, "fd %s: zero gradient\n", label);
        CHECK(norm >= 1e-12);
        return;
    }
    float *save = xmalloc(n * sizeof(float));
    memcpy(save, x, n * sizeof(float));
    for (size_t i = 0; i < n; i++)
        x[i] = (float)(save[i] + FD_STEP * g[i] / norm);
    double fp = fd_objective(c);
    for (size_t i = 0; i < n; i++)
        x[i] = (float)(save[i] - FD_STEP * g[i] / norm);
    double fm = fd_objective(c);
    memcpy(x, save, n * sizeof(float));
    double fd = (fp - fm) / (2.0 * FD_STEP);
    double r = rel_diff(fd, norm);
    fd_worst_dir = fmax(fd_worst_dir, r);
    if (r > FD_DIR_RTOL)
        fprintf(stderr, "fd %s: directional %.8g vs |g| %.8g (rel %.2g)\n", label, fd, norm, r);
    CHECK(r <= FD_DIR_RTOL);

    /* the FD_ELEMS largest coordinates */
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
        /* the step actually taken is float-rounded: divide by the exact displacement */
        x[best] = (float)(x0 + FD_STEP);
        double hp = (double)x[best] - x0;
        fp = fd_objective(c);
        x[best] = (float)(x0 - FD_STEP);
        double hm = x0 - (double)x[best];
        fm = fd_objective(c);
        x[best] = x0;
        fd = (fp - fm) / (hp + hm);
        double err = fabs(fd - g[best]);
        fd_worst_elem = fmax(fd_worst_elem, rel_diff(fd, g[best]));
        if (err > FD_ELEM_RTOL * fabs(g[best]) + FD_ELEM_ATOL)
            fprintf(stderr, "fd %s[%zu]: %.8g vs analytic %.8g\n", label, best, fd, g[best]);
        CHECK(err <= FD_ELEM_RTOL * fabs(g[best]) + FD_ELEM_ATOL);
    }
    free(save);
}

/* Checks every tensor the stage holds, and dinput when it is not the first stage. */
static void fd_check_stage(struct fd_case *c, const char *name)
{
    size_t NC = (size_t)c->B * c->T * c->d->channels;
    float *din = xmalloc(NC * sizeof(float));
    fd_analytic(c, din);
    size_t np = xformer_stage_nparams(c->s);
    float *grads = xmalloc(np * sizeof(float));
    memcpy(grads, xformer_stage_grads(c->s), np * sizeof(float));
    float *params = xformer_stage_params(c->s);
    int kinds = 0;
    for (int t = 0; t < XFORMER_NTENSORS; t++) {
        enum xformer_tensor k = (enum xformer_tensor)t;
        for (int l = tensor_is_layer(k) ? 0 : -1; l < (tensor_is_layer(k) ? c->d->layers : 0);
             l++) {
            struct xformer_view v;
            if (xformer_stage_tensor(c->s, k, l, &v, NULL) != MT_OK)
                continue;
            char label[96];
            snprintf(label, sizeof label, "%s %s[layer %d]", name, xformer_tensor_name(k), l);
            fd_check_vector(c, v.param, grads + (v.param - params), v.n, label);
            kinds++;
        }
    }
    if (!xformer_stage_is_first(c->s)) {
        char label[96];
        snprintf(label, sizeof label, "%s dinput", name);
        fd_check_vector(c, c->hidden, din, NC, label);
    }
    printf("fd %s: %d tensors%s checked; worst relative error: directional %.2g, "
           "element %.2g\n",
           name, kinds, xformer_stage_is_first(c->s) ? "" : " + dinput", fd_worst_dir,
           fd_worst_elem);
    fd_worst_dir = fd_worst_elem = 0.0;
    free(grads);
    free(din);
}

/* Moves the weights away from init (gains around 1, matrices with std ~0.25) so that
 * attention is far from uniform and the nonlinearities are exercised. */
static void perturb_params(struct xformer_stage *s)
{
    float *p = xformer_stage_params(s);
    size_t n = xformer_stage_nparams(s);
    for (size_t i = 0; i < n; i++)
        p[i] += (float)(0.25 * rng_normal());
}

static void test_finite_differences(void)
{
    struct xformer_dims d = {
        .vocab = 32, .max_seq = 8, .channels = 16, .heads = 2, .ffn = 64, .layers = 2};
    int B = 2, T = 8;
    size_t N = (size_t)B * T, NC = N * d.channels;
    int *tokens = xmalloc(N * sizeof(int)), *targets = xmalloc(N * sizeof(int));
    float *hidden = xmalloc(NC * sizeof(float)), *R = xmalloc(NC * sizeof(float));
    float *out = xmalloc(NC * sizeof(float));
    fill_tokens(tokens, N, d.vocab);
    fill_tokens(targets, N, d.vocab);
    fill_normal(R, NC, 1.0);

    /* (a) the whole model: every tensor kind, loss objective */
    struct xformer_stage *s = stage_new(&d, 0, 2);
    perturb_params(s);
    struct fd_case c = {s, &d, B, T, tokens, NULL, targets, NULL, out};
    fd_check_stage(&c, "whole");
    xformer_stage_free(s);

    /* (b) the last stage fed a hidden state: dinput through the head and a layer */
    s = stage_new(&d, 1, 1);
    perturb_params(s);
    fill_normal(hidden, NC, 1.0);
    c = (struct fd_case){s, &d, B, T, NULL, hidden, targets, NULL, out};
    fd_check_stage(&c, "last");
    xformer_stage_free(s);

    /* (c) a middle stage of a 3-layer model: dout in, dinput out */
    struct xformer_dims d3 = d;
    d3.layers = 3;
    s = stage_new(&d3, 1, 1);
    perturb_params(s);
    fill_normal(hidden, NC, 1.0);
    c = (struct fd_case){s, &d3, B, T, NULL, hidden, NULL, R, out};
    fd_check_stage(&c, "middle");
    xformer_stage_free(s);

    /* (d) the first stage of a 3-layer model: dout in, embedding gradients out */
    s = stage_new(&d3, 0, 1);
    perturb_params(s);
    c = (struct fd_case){s, &d3, B, T, tokens, NULL, NULL, R, out};
    fd_check_stage(&c, "first");
    xformer_stage_free(s);

    free(tokens);
    free(targets);
    free(hidden);
    free(R);
    free(out);
}

/* ------------------------------------------------------------------------------------ */
/* 2. a pipeline split equals the unsplit model; 3. CFW + RC equals FW                    */
/* ------------------------------------------------------------------------------------ */

/* Runs M micro-batches through the stages of one split in a 1F1B-like order (all forwards
 * of the first `inflight` micro-batches before the first backward), with the keep mode of
 * micro-batch mb given by keep[mb]; checkpointed ones are recomputed right before their
 * backward. Returns the sum of the losses. */
static double run_split(struct xformer_stage **st, int S, const struct xformer_dims *d, int M,
                        int B, int T, int *const *tokens, int *const *targets,
                        const enum xformer_keep *keep, int inflight)
{
    struct mt_err e = {0};
    size_t NC = (size_t)B * T * d->channels;
    /* hid[mb][s] is the input of stage s+1; grad buffers are reused */
    float *hid = xmalloc((size_t)M * S * NC * sizeof(float));
    float *g0 = xmalloc(NC * sizeof(float)), *g1 = xmalloc(NC * sizeof(float));
    struct xformer_act **acts = xcalloc((size_t)M * S, sizeof *acts);
    double loss_sum = 0.0;
    int fwd = 0, bwd = 0;
    while (bwd < M) {
        if (fwd < M && fwd - bwd < inflight) {
            int mb = fwd++;
            for (int s = 0; s < S; s++) {
                float loss = 0.0f;
                int last = s == S - 1;
                must(xformer_forward(st[s], s == 0 ? tokens[mb] : NULL,
                                     s == 0 ? NULL : hid + ((size_t)mb * S + s - 1) * NC,
                                     last ? targets[mb] : NULL, B, T, keep[mb], 0,
                                     last ? NULL : hid + ((size_t)mb * S + s) * NC,
                                     last ? &loss : NULL, &acts[mb * S + s], &e),
                     &e, "split forward");
                if (last)
                    loss_sum += loss;
            }
            continue;
        }
        int mb = bwd++;
        const float *dout = NULL;
        for (int s = S - 1; s >= 0; s--) {
            if (!xformer_act_is_full(acts[mb * S + s]))
                must(xformer_recompute(acts[mb * S + s], &e), &e, "split recompute");
            float *din = s == 0 ? NULL : (dout == g0 ? g1 : g0);
            must(xformer_backward(&acts[mb * S + s], dout, din, &e), &e, "split backward");
            dout = din;
        }
    }
    free(hid);
    free(g0);
    free(g1);
    free(acts);
    return loss_sum;
}

/* Compares every tensor's gradient (and parameters) of a split against the unsplit stage. */
static void compare_split(struct xformer_stage *whole, struct xformer_stage **st, int S,
                          const struct xformer_dims *d, double rtol, int *bit_exact,
                          const char *name)
{
    double worst = 0.0;
    int exact = 1;
    for (int t = 0; t < XFORMER_NTENSORS; t++) {
        enum xformer_tensor k = (enum xformer_tensor)t;
        for (int l = tensor_is_layer(k) ? 0 : -1; l < (tensor_is_layer(k) ? d->layers : 0); l++) {
            struct xformer_view w, v;
            CHECK(xformer_stage_tensor(whole, k, l, &w, NULL) == MT_OK);
            int found = 0;
            for (int s = 0; s < S; s++)
                if (xformer_stage_tensor(st[s], k, l, &v, NULL) == MT_OK) {
                    found++;
                    CHECK(memcmp(w.param, v.param, w.n * sizeof(float)) == 0);
                    double gmax = 0.0, dmax = 0.0;
                    for (size_t i = 0; i < w.n; i++) {
                        gmax = fmax(gmax, fabs(w.grad[i]));
                        dmax = fmax(dmax, fabs((double)w.grad[i] - v.grad[i]));
                    }
                    double r = gmax > 0 ? dmax / gmax : dmax;
                    if (r > rtol)
                        fprintf(stderr, "%s: %s[layer %d] grads differ: rel %.3g\n", name,
                                xformer_tensor_name(k), l, r);
                    CHECK(r <= rtol);
                    worst = fmax(worst, r);
                    exact &= memcmp(w.grad, v.grad, w.n * sizeof(float)) == 0;
                }
            CHECK_EQ_INT(found, 1);
        }
    }
    *bit_exact = exact;
    printf("%s: max relative gradient difference %.3g (%s)\n", name, worst,
           exact ? "bit-identical" : "not bit-identical");
}

static void test_split_and_checkpoint(void)
{
    struct xformer_dims d = {
        .vocab = 64, .max_seq = 16, .channels = 32, .heads = 4, .ffn = 128, .layers = 4};
    enum { M = 4 };
    int B = 2, T = 12;
    size_t N = (size_t)B * T;
    int *tok[M], *tgt[M];
    for (int mb = 0; mb < M; mb++) {
        tok[mb] = xmalloc(N * sizeof(int));
        tgt[mb] = xmalloc(N * sizeof(int));
        fill_tokens(tok[mb], N, d.vocab);
        fill_tokens(tgt[mb], N, d.vocab);
    }
    enum xformer_keep full[M], mixed[M], ckpt[M];
    for (int mb = 0; mb < M; mb++) {
        full[mb] = XFORMER_KEEP_FULL;
        ckpt[mb] = XFORMER_KEEP_CHECKPOINT;
        mixed[mb] = mb % 2 ? XFORMER_KEEP_CHECKPOINT : XFORMER_KEEP_FULL;
    }

    /* reference: the unsplit model, micro-batches one after the other */
    struct xformer_stage *whole = stage_new(&d, 0, 4);
    xformer_stage_set_loss_scale(whole, 1.0f / M);
    double ref = run_split(&whole, 1, &d, M, B, T, tok, tgt, full, 1);
    CHECK(isfinite(ref));

    /* three stages, 1F1B with up to 3 micro-batches in flight; mixed keep in the first */
    static const int splits[3][3][2] = {
        {{0, 1}, {1, 1}, {2, 2}},
        {{0, 2}, {2, 1}, {3, 1}},
        {{0, 1}, {1, 2}, {3, 1}},
    };
    for (int sp = 0; sp < 3; sp++) {
        struct xformer_stage *st[3];
        for (int s = 0; s < 3; s++) {
            st[s] = stage_new(&d, splits[sp][s][0], splits[sp][s][1]);
            xformer_stage_set_loss_scale(st[s], 1.0f / M);
        }
        double got = run_split(st, 3, &d, M, B, T, tok, tgt, sp == 0 ? mixed : full, 3);
        char name[64];
        snprintf(name, sizeof name, "split %d (3 stages)", sp);
        if (rel_diff(got, ref) > 1e-5)
            fprintf(stderr, "%s: loss %.9g vs %.9g\n", name, got, ref);
        CHECK(rel_diff(got, ref) <= 1e-5);
        int exact;
        compare_split(whole, st, 3, &d, 1e-5, &exact, name);
        for (int s = 0; s < 3; s++)
            xformer_stage_free(st[s]);
    }

    /* CFW + RC + BW against FW + BW on the unsplit model: bit-identical */
    struct xformer_stage *ck = stage_new(&d, 0, 4);
    xformer_stage_set_loss_scale(ck, 1.0f / M);
    double got = run_split(&ck, 1, &d, M, B, T, tok, tgt, ckpt, 2);
    CHECK(got == ref);
    CHECK(memcmp(xformer_stage_grads(ck), xformer_stage_grads(whole),
                 xformer_stage_nparams(ck) * sizeof(float)) == 0);
    xformer_stage_free(ck);

    /* and per stage kind (first / middle / last), including the forward outputs */
    static const int kinds[3][2] = {{0, 1}, {1, 2}, {3, 1}};
    size_t NC = N * d.channels;
    float *in = xmalloc(NC * sizeof(float)), *dout = xmalloc(NC * sizeof(float));
    float *o1 = xmalloc(NC * sizeof(float)), *o2 = xmalloc(NC * sizeof(float));
    float *d1 = xmalloc(NC * sizeof(float)), *d2 = xmalloc(NC * sizeof(float));
    fill_normal(in, NC, 1.0);
    fill_normal(dout, NC, 0.1);
    for (int k = 0; k < 3; k++) {
        struct xformer_stage *a = stage_new(&d, kinds[k][0], kinds[k][1]);
        struct xformer_stage *b = stage_new(&d, kinds[k][0], kinds[k][1]);
        int first = k == 0, last = k == 2;
        struct mt_err e = {0};
        struct xformer_act *ha, *hb;
        float la = 0, lb = 0;
        memset(o1, 0, NC * sizeof(float));
        memset(o2, 0, NC * sizeof(float));
        must(xformer_forward(a, first ? tok[0] : NULL, first ? NULL : in, last ? tgt[0] : NULL, B,
                             T, XFORMER_KEEP_FULL, 0, last ? NULL : o1, last ? &la : NULL, &ha, &e),
             &e, "fw");
        must(xformer_forward(b, first ? tok[0] : NULL, first ? NULL : in, last ? tgt[0] : NULL, B,
                             T, XFORMER_KEEP_CHECKPOINT, 0, last ? NULL : o2, last ? &lb : NULL, &hb,
                             &e),
             &e, "cfw");
        CHECK(xformer_act_is_full(ha) && !xformer_act_is_full(hb));
        CHECK(memcmp(o1, o2, NC * sizeof(float)) == 0);
        CHECK(la == lb);
        /* BW before RC is refused and leaves the handle usable */
        CHECK(xformer_backward(&hb, last ? NULL : dout, first ? NULL : d2, &e) == MT_EINVAL);
        CHECK(hb != NULL);
        must(xformer_recompute(hb, &e), &e, "rc");
        CHECK(xformer_recompute(hb, &e) == MT_EINVAL);
        CHECK(xformer_act_loss(hb) == la);
        must(xformer_backward(&ha, last ? NULL : dout, first ? NULL : d1, &e), &e, "bw");
        must(xformer_backward(&hb, last ? NULL : dout, first ? NULL : d2, &e), &e, "bw");
        CHECK(ha == NULL && hb == NULL);
        CHECK(memcmp(xformer_stage_grads(a), xformer_stage_grads(b),
                     xformer_stage_nparams(a) * sizeof(float)) == 0);
        if (!first)
            CHECK(memcmp(d1, d2, NC * sizeof(float)) == 0);
        xformer_stage_free(a);
        xformer_stage_free(b);
    }
    printf("checkpoint: CFW + RC + BW bit-identical to FW + BW (whole model and 3 stage kinds)\n");
    free(in);
    free(dout);
    free(o1);
    free(o2);
    free(d1);
    free(d2);
    xformer_stage_free(whole);
    for (int mb = 0; mb < M; mb++) {
        free(tok[mb]);
        free(tgt[mb]);
    }
}

/* ------------------------------------------------------------------------------------ */
/* 4. measured bytes = closed form                                                        */
/* ------------------------------------------------------------------------------------ */

/* Written out here from the tensor lists in xformer.h / xformer_cpu.c's header comment, not
 * taken from the library: floats (4 bytes) and int tokens / targets (4 bytes). */
struct hand_bytes {
    size_t params, full, ckpt, cfw_scratch, bw_scratch;
};

static struct hand_bytes hand_count(const struct xformer_dims *d, int first, int n, size_t B,
                                    size_t T)
{
    size_t C = d->channels, F = d->ffn, V = d->vocab, NH = d->heads, Tm = d->max_seq;
    size_t N = B * T;
    int is_first = first == 0, is_last = first + n == d->layers;
    struct hand_bytes h;
    /* per layer: ln1 2C, qkv 3C^2 + 3C, attproj C^2 + C, ln2 2C, fc FC + F, fcproj FC + C */
    size_t per_layer =
        2 * C + (3 * C * C + 3 * C) + (C * C + C) + 2 * C + (F * C + F) + (C * F + C);
    h.params = n * per_layer + (is_first ? V * C + Tm * C : 0) + (is_last ? 2 * C + V * C : 0);
    /* a layer's activations: ln1, atty, res2, ln2, res3 (N,C); qkv (N,3C); four (N) stats;
     * att (B,NH,T,T); fch, fch_gelu (N,F) */
    size_t layer = 5 * N * C + 3 * N * C + 4 * N + B * NH * T * T + 2 * N * F;
    size_t head = N * C + 2 * N + N * V + N; /* lnf, mean + rstd, probs, losses */
    size_t in = is_first ? N : N * C;        /* tokens or hidden state */
    size_t tg = is_last ? N : 0;             /* targets */
    h.ckpt = 4 * (in + tg);
    h.full = h.ckpt + 4 * ((is_first ? N * C : 0) + n * layer + (is_last ? head : 0));
    /* CFW: embedding output, one layer, a second residual stream when n >= 2, the head */
    h.cfw_scratch =
        4 * ((is_first ? N * C : 0) + layer + (n >= 2 ? N * C : 0) + (is_last ? head : 0));
    /* BW: dres, dbuf (N,C); dqkv (N,3C); one head's datt (T,T); dgelu (N,F) */
    h.bw_scratch = 4 * (2 * N * C + 3 * N * C + T * T + N * F);
    return h;
}

static size_t hook_calls, hook_last;

static void hook_record(size_t current_bytes, void *ctx)
{
    (void)ctx;
    hook_calls++;
    hook_last = current_bytes;
}

static void test_memcount(void)
{
    /* the allocator itself: exact counts, alignment, the hook */
    size_t c0 = memcount_current();
    memcount_set_hook(hook_record, NULL);
    void *p = memcount_alloc(1000), *q = memcount_calloc(24);
    CHECK_EQ_INT(memcount_current() - c0, 1024);
    CHECK_EQ_INT((uintptr_t)p % MEMCOUNT_ALIGN, 0);
    CHECK_EQ_INT(((unsigned char *)q)[23], 0);
    CHECK_EQ_INT(hook_calls, 2);
    CHECK_EQ_INT(hook_last, c0 + 1024);
    memcount_free(p);
    memcount_free(NULL);
    CHECK_EQ_INT(hook_last, c0 + 24);
    memcount_set_hook(NULL, NULL);
    memcount_reset_peak();
    memcount_free(q);
    CHECK_EQ_INT(memcount_peak(), c0 + 24);
    CHECK_EQ_INT(memcount_current(), c0);
    CHECK_EQ_INT(hook_calls, 3);

    struct xformer_dims d = {
        .vocab = 64, .max_seq = 16, .channels = 32, .heads = 4, .ffn = 128, .layers = 4};
    int B = 3, T = 10;
    size_t N = (size_t)B * T, NC = N * d.channels;
    static const int cases[][2] = {{0, 4}, {0, 1}, {1, 2}, {3, 1}, {2, 2}, {1, 1}};
    int *tok = xmalloc(N * sizeof(int)), *tgt = xmalloc(N * sizeof(int));
    float *in = xmalloc(NC * sizeof(float)), *out = xmalloc(NC * sizeof(float));
    float *din = xmalloc(NC * sizeof(float)), *dout = xmalloc(NC * sizeof(float));
    fill_tokens(tok, N, d.vocab);
    fill_tokens(tgt, N, d.vocab);
    fill_normal(in, NC, 1.0);
    fill_normal(dout, NC, 0.1);
    struct mt_err e = {0};
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        int first = cases[ci][0], n = cases[ci][1];
        struct hand_bytes h = hand_count(&d, first, n, (size_t)B, (size_t)T);
        struct xformer_act_size lib = xformer_act_bytes(&d, first, n, B, T);
        CHECK_EQ_INT(xformer_param_count(&d, first, n), h.params);
        CHECK_EQ_INT(lib.full_bytes, h.full);
        CHECK_EQ_INT(lib.ckpt_bytes, h.ckpt);
        CHECK_EQ_INT(lib.cfw_scratch_bytes, h.cfw_scratch);
        CHECK_EQ_INT(lib.bw_scratch_bytes, h.bw_scratch);

        size_t base = memcount_current();
        struct xformer_stage *s = stage_new(&d, first, n);
        size_t st = memcount_current();
        CHECK_EQ_INT(st - base, 16 * h.params); /* weights, grads, m, v */
        int is_first = first == 0, is_last = first + n == d.layers;
        const int *tk = is_first ? tok : NULL;
        const float *hi = is_first ? NULL : in;
        const int *tg = is_last ? tgt : NULL;
        float *o = is_last ? NULL : out, loss;
        float *lp = is_last ? &loss : NULL;
        float *dn = is_first ? NULL : din;
        const float *dd = is_last ? NULL : dout;

        /* FW: holds full, no transient above it */
        struct xformer_act *a1, *a2;
        memcount_reset_peak();
        must(xformer_forward(s, tk, hi, tg, B, T, XFORMER_KEEP_FULL, 0, o, lp, &a1, &e), &e, "fw");
        CHECK_EQ_INT(memcount_current() - st, h.full);
        CHECK_EQ_INT(memcount_peak() - st, h.full);
        /* CFW with the FW handle alive: holds ckpt, peaks at ckpt + scratch */
        size_t s1 = memcount_current();
        memcount_reset_peak();
        must(xformer_forward(s, tk, hi, tg, B, T, XFORMER_KEEP_CHECKPOINT, 0, o, lp, &a2, &e), &e,
             "cfw");
        CHECK_EQ_INT(memcount_current() - s1, h.ckpt);
        CHECK_EQ_INT(memcount_peak() - s1, h.ckpt + h.cfw_scratch);
        /* BW of the first: frees full, peaks at + scratch */
        size_t s2 = memcount_current();
        memcount_reset_peak();
        must(xformer_backward(&a1, dd, dn, &e), &e, "bw");
        CHECK_EQ_INT(memcount_peak() - s2, h.bw_scratch);
        CHECK_EQ_INT(s2 - memcount_current(), h.full);
        /* RC: back to full */
        size_t s3 = memcount_current();
        memcount_reset_peak();
        must(xformer_recompute(a2, &e), &e, "rc");
        CHECK_EQ_INT(memcount_current() - s3, h.full - h.ckpt);
        CHECK_EQ_INT(memcount_peak() - s3, h.full - h.ckpt);
        must(xformer_backward(&a2, dd, dn, &e), &e, "bw");
        CHECK_EQ_INT(memcount_current(), st);
        xformer_stage_free(s);
        CHECK_EQ_INT(memcount_current(), base);
        if (ci == 0)
            printf("memcount: whole 4-layer model, B=%d T=%d: static %zu B, FW keeps %zu B, "
                   "CFW keeps %zu B (+%zu B while running), BW scratch %zu B\n",
                   B, T, 16 * h.params, h.full, h.ckpt, h.cfw_scratch, h.bw_scratch);
    }
    free(tok);
    free(tgt);
    free(in);
    free(out);
    free(din);
    free(dout);
}

/* ------------------------------------------------------------------------------------ */
/* 5. dataset and training on the shipped corpus                                          */
/* ------------------------------------------------------------------------------------ */

static char *corpus_path(void)
{
    const char *top = getenv("top_srcdir");
    if (top == NULL || *top == '\0')
        top = ".";
    size_t n = strlen(top) + 32;
    char *p = xmalloc(n);
    snprintf(p, n, "%s/data/corpus.txt", top);
    return p;
}

static void test_dataset(void)
{
    struct mt_err e = {0};
    struct dataset *ds = NULL;
    CHECK(dataset_open("/nonexistent/corpus.txt", &ds, &e) == MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "/nonexistent/corpus.txt");
    CHECK(ds == NULL);

    char tmp[] = "/tmp/mt_test_xformer_XXXXXX";
    int fd = mkstemp(tmp);
    CHECK(fd >= 0);
    if (fd >= 0) {
        FILE *f = fdopen(fd, "w");
        fputs("abcdefgh", f); /* 8 tokens */
        fclose(f);
        CHECK(dataset_open(tmp, &ds, &e) == MT_OK);
        int in[16], tg[16];
        CHECK(dataset_batch(ds, 0, 2, 7, in, tg, &e) == MT_OK); /* T+1 = 8 fits */
        CHECK_EQ_INT(in[0], 'a');
        CHECK_EQ_INT(tg[6], 'h');
        e.msg[0] = '\0';
        CHECK(dataset_batch(ds, 0, 1, 8, in, tg, &e) == MT_EINVAL); /* T+1 = 9 does not */
        CHECK_STR_CONTAINS(e.msg, tmp);
        CHECK_STR_CONTAINS(e.msg, "shorter");
        dataset_close(ds);
        remove(tmp);
    }

    char *path = corpus_path();
    if (dataset_open(path, &ds, &e) != MT_OK) {
        fprintf(stderr, "%s\n", e.msg);
        CHECK(0);
        free(path);
        return;
    }
    size_t n = dataset_ntokens(ds);
    CHECK(n > 100000 && n < 1000000);
    /* the file's own bytes, read here without the dataset module */
    unsigned char *raw = xmalloc(n + 1);
    FILE *f = fopen(path, "rb");
    CHECK(f != NULL && fread(raw, 1, n + 1, f) == n);
    if (f != NULL)
        fclose(f);
    int B = 3, T = 16;
    int in[48], tg[48], in2[48];
    for (long k = 0; k < 5; k++) {
        CHECK(dataset_batch(ds, k, B, T, in, tg, &e) == MT_OK);
        CHECK(dataset_batch(ds, k, B, T, in2, NULL, &e) == MT_OK);
        CHECK(memcmp(in, in2, sizeof in) == 0);
        for (int b = 0; b < B; b++) {
            size_t pos = (size_t)((k * B + b) * T) % (n - T);
            CHECK(pos + T < n);
            for (int t = 0; t < T; t++) {
                CHECK_EQ_INT(in[b * T + t], raw[pos + t]);
                CHECK_EQ_INT(tg[b * T + t], raw[pos + t + 1]);
            }
        }
    }
    /* far batches wrap around and stay inside the file */
    CHECK(dataset_batch(ds, 1000000, B, T, in, tg, &e) == MT_OK);
    free(raw);
    dataset_close(ds);
    free(path);
}

static void test_training(void)
{
    struct mt_err e = {0};
    char *path = corpus_path();
    struct dataset *ds = NULL;
    if (dataset_open(path, &ds, &e) != MT_OK) {
        fprintf(stderr, "%s\n", e.msg);
        CHECK(0);
        free(path);
        return;
    }
    struct xformer_dims d = {
        .vocab = DATASET_VOCAB, .max_seq = 32, .channels = 32, .heads = 2, .ffn = 128, .layers = 2};
    int B = 4, T = 32, steps = 30;
    size_t N = (size_t)B * T;
    int *in = xmalloc(N * sizeof(int)), *tg = xmalloc(N * sizeof(int));
    must(dataset_batch(ds, 7, B, T, in, tg, &e), &e, "batch");
    struct xformer_stage *s = stage_new(&d, 0, d.layers);
    float first_loss = 0.0f, loss = 0.0f;
    for (int step = 1; step <= steps; step++) {
        struct xformer_act *a;
        xformer_stage_zero_grad(s);
        must(xformer_forward(s, in, NULL, tg, B, T, XFORMER_KEEP_FULL, 0, NULL, &loss, &a, &e), &e,
             "train fw");
        must(xformer_backward(&a, NULL, NULL, &e), &e, "train bw");
        must(xformer_stage_adamw_step(s, 1e-2f, 0.9f, 0.95f, 1e-8f, 0.1f, step, &e), &e, "adamw");
        if (step == 1)
            first_loss = loss;
    }
    printf("training: loss %.4f -> %.4f after %d AdamW steps on one corpus batch (ln 256 = %.4f)\n",
           first_loss, loss, steps, log(256.0));
    CHECK_NEAR(first_loss, log(256.0), 0.1);
    CHECK(loss < 0.8f * first_loss);
    CHECK(xformer_stage_adamw_step(s, 1e-2f, 0.9f, 0.95f, 1e-8f, 0.1f, 0, &e) == MT_EINVAL);
    xformer_stage_free(s);
    free(in);
    free(tg);
    dataset_close(ds);
    free(path);
}

/* ------------------------------------------------------------------------------------ */
/* errors, determinism, timing                                                            */
/* ------------------------------------------------------------------------------------ */

static void test_errors_and_init(void)
{
    struct mt_err e = {0};
    struct xformer_stage *s = NULL;
    struct xformer_dims bad = {
        .vocab = 32, .max_seq = 8, .channels = 15, .heads = 2, .ffn = 8, .layers = 2};
    CHECK(xformer_stage_create(&bad, 0, 2, SEED, &s, &e) == MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "heads");
    struct xformer_dims d = {
        .vocab = 32, .max_seq = 8, .channels = 16, .heads = 2, .ffn = 64, .layers = 2};
    CHECK(xformer_stage_create(&d, 1, 2, SEED, &s, &e) == MT_EINVAL);
    CHECK(xformer_stage_create(&d, 0, 0, SEED, &s, &e) == MT_EINVAL);
    s = stage_new(&d, 0, 2);
    int tok[16] = {0}, tgt[16] = {0};
    float loss;
    struct xformer_act *a = NULL;
    tok[3] = 32;
    CHECK(xformer_forward(s, tok, NULL, tgt, 2, 8, XFORMER_KEEP_FULL, 0, NULL, &loss, &a, &e) ==
          MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "tokens[3]");
    tok[3] = 0;
    CHECK(xformer_forward(s, tok, NULL, tgt, 1, 9, XFORMER_KEEP_FULL, 0, NULL, &loss, &a, &e) ==
          MT_EINVAL);
    CHECK(a == NULL);
    struct xformer_view v;
    CHECK(xformer_stage_tensor(s, XFORMER_LN1W, 2, &v, &e) == MT_EINVAL);
    CHECK(xformer_stage_tensor(s, XFORMER_HEADW, -1, &v, &e) == MT_OK);

    /* init statistics: matrices ~ N(0, 0.02), residual projections / sqrt(2L), LN gains 1 */
    struct xformer_dims big = {
        .vocab = 256, .max_seq = 64, .channels = 64, .heads = 4, .ffn = 256, .layers = 8};
    struct xformer_stage *w = stage_new(&big, 0, 8);
    double sum = 0, sq = 0;
    CHECK(xformer_stage_tensor(w, XFORMER_WTE, -1, &v, &e) == MT_OK);
    for (size_t i = 0; i < v.n; i++) {
        sum += v.param[i];
        sq += (double)v.param[i] * v.param[i];
    }
    CHECK_NEAR(sum / v.n, 0.0, 1e-3);
    CHECK_NEAR(sqrt(sq / v.n), 0.02, 0.001);
    sq = 0;
    CHECK(xformer_stage_tensor(w, XFORMER_FCPROJW, 5, &v, &e) == MT_OK);
    for (size_t i = 0; i < v.n; i++)
        sq += (double)v.param[i] * v.param[i];
    CHECK_NEAR(sqrt(sq / v.n), 0.02 / 4.0, 0.0003);
    CHECK(xformer_stage_tensor(w, XFORMER_LN2W, 7, &v, &e) == MT_OK);
    CHECK(v.param[0] == 1.0f && v.param[v.n - 1] == 1.0f);
    /* a stage of layers [5, 8) has the whole model's layer-5 weights */
    struct xformer_stage *part = stage_new(&big, 5, 3);
    struct xformer_view pv;
    CHECK(xformer_stage_tensor(w, XFORMER_QKVW, 5, &v, &e) == MT_OK);
    CHECK(xformer_stage_tensor(part, XFORMER_QKVW, 5, &pv, &e) == MT_OK);
    CHECK(memcmp(v.param, pv.param, v.n * sizeof(float)) == 0);
    xformer_stage_free(part);
    xformer_stage_free(w);
    xformer_stage_free(s);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Not a check (speed goals live in bench/): prints FW + BW time per micro-batch. */
static void report_timing(void)
{
    struct xformer_dims d = {
        .vocab = 256, .max_seq = 32, .channels = 32, .heads = 2, .ffn = 128, .layers = 2};
    int B = 4, T = 32, reps = 50;
    size_t N = (size_t)B * T;
    int *in = xmalloc(N * sizeof(int)), *tg = xmalloc(N * sizeof(int));
    fill_tokens(in, N, d.vocab);
    fill_tokens(tg, N, d.vocab);
    struct xformer_stage *s = stage_new(&d, 0, d.layers);
    struct mt_err e = {0};
    float loss;
    double t0 = 0;
    for (int r = -5; r < reps; r++) {
        if (r == 0)
            t0 = now_s();
        struct xformer_act *a;
        must(xformer_forward(s, in, NULL, tg, B, T, XFORMER_KEEP_FULL, 0, NULL, &loss, &a, &e), &e,
             "fw");
        must(xformer_backward(&a, NULL, NULL, &e), &e, "bw");
    }
    double dt = (now_s() - t0) / reps;
    printf("timing: tiny model (V=256 C=32 NH=2 F=128 L=2, B=%d T=%d) FW+BW %.1f us per "
           "micro-batch\n",
           B, T, dt * 1e6);
    xformer_stage_free(s);
    free(in);
    free(tg);
}

/* Selective checkpointing (issue 12): a CFW of the first k layers, RC, BW give the forward
 * output, loss, input gradient and parameter gradients of FW + BW bit for bit, and hold the
 * bytes xformer_sel_bytes gives, counted by hand here from the blocks: the input, the input
 * of layer k (B*T*C floats), layers k..n-1 and the head after CFW; the embedding output and
 * layers 0..k-1 but for layer k-1's output after RC; the CFW peaks at the larger of what it
 * keeps and the input, the input of layer k, the embedding output and one layer. */
static void test_selective(void)
{
    struct xformer_dims d = {
        .vocab = 64, .max_seq = 16, .channels = 32, .heads = 4, .ffn = 128, .layers = 4};
    int B = 2, T = 9;
    size_t N = (size_t)B * T, NC = N * d.channels;
    size_t L = 8 * NC + 4 * N + (size_t)B * d.heads * T * T + 2 * N * d.ffn; /* floats */
    size_t head = NC + 2 * N + N * d.vocab + N;
    static const int kinds[][2] = {{0, 4}, {0, 3}, {1, 2}, {1, 3}, {2, 2}};
    int *tok = xmalloc(N * sizeof(int)), *tgt = xmalloc(N * sizeof(int));
    float *in = xmalloc(NC * sizeof(float)), *dout = xmalloc(NC * sizeof(float));
    float *o1 = xmalloc(NC * sizeof(float)), *o2 = xmalloc(NC * sizeof(float));
    float *d1 = xmalloc(NC * sizeof(float)), *d2 = xmalloc(NC * sizeof(float));
    fill_tokens(tok, N, d.vocab);
    fill_tokens(tgt, N, d.vocab);
    fill_normal(in, NC, 1.0);
    fill_normal(dout, NC, 0.1);
    int cases = 0;
    for (size_t ki = 0; ki < sizeof kinds / sizeof kinds[0]; ki++) {
        int first = kinds[ki][0], n = kinds[ki][1];
        int is_first = first == 0, is_last = first + n == d.layers;
        size_t kept = 4 * ((is_first ? N : NC) + (is_last ? N : 0));
        size_t E = is_first ? NC : 0, H = is_last ? head : 0;
        for (int k = 1; k < n; k++) {
            struct mt_err e = {0};
            struct xformer_stage *a = stage_new(&d, first, n), *b = stage_new(&d, first, n);
            struct xformer_act *ha, *hb;
            float la = 0, lb = 0;
            memset(o1, 0, NC * sizeof(float));
            memset(o2, 0, NC * sizeof(float));
            must(xformer_forward(a, is_first ? tok : NULL, is_first ? NULL : in,
                                 is_last ? tgt : NULL, B, T, XFORMER_KEEP_FULL, 0,
                                 is_last ? NULL : o1, is_last ? &la : NULL, &ha, &e),
                 &e, "fw");
            size_t base = memcount_current();
            memcount_reset_peak();
            must(xformer_forward(b, is_first ? tok : NULL, is_first ? NULL : in,
                                 is_last ? tgt : NULL, B, T, XFORMER_KEEP_CHECKPOINT, k,
                                 is_last ? NULL : o2, is_last ? &lb : NULL, &hb, &e),
                 &e, "cfw(k)");
            size_t keep = kept + 4 * (NC + (size_t)(n - k) * L + H);
            size_t running = kept + 4 * (NC + E + L);
            CHECK_EQ_INT(memcount_current() - base, keep);
            CHECK_EQ_INT(memcount_peak() - base, keep > running ? keep : running);
            struct xformer_sel_size sel = xformer_sel_bytes(&d, first, n, k, B, T);
            CHECK_EQ_INT(sel.keep_bytes, keep);
            CHECK_EQ_INT(sel.cfw_scratch_bytes, 4 * (E + L));
            CHECK(!xformer_act_is_full(hb));
            CHECK(memcmp(o1, o2, NC * sizeof(float)) == 0);
            CHECK(la == lb);
            CHECK(xformer_backward(&hb, is_last ? NULL : dout, is_first ? NULL : d2, &e) ==
                  MT_EINVAL);
            memcount_reset_peak();
            size_t before_rc = memcount_current();
            must(xformer_recompute(hb, &e), &e, "rc(k)");
            size_t rc = 4 * (E + (size_t)k * L - NC);
            CHECK_EQ_INT(memcount_current() - before_rc, rc);
            CHECK_EQ_INT(memcount_peak() - before_rc, rc);
            CHECK_EQ_INT(sel.rc_bytes, rc);
            CHECK_EQ_INT(keep + rc, xformer_act_bytes(&d, first, n, B, T).full_bytes);
            CHECK(xformer_act_is_full(hb));
            CHECK(xformer_recompute(hb, &e) == MT_EINVAL);
            CHECK(xformer_act_loss(hb) == la);
            must(xformer_backward(&ha, is_last ? NULL : dout, is_first ? NULL : d1, &e), &e,
                 "bw");
            must(xformer_backward(&hb, is_last ? NULL : dout, is_first ? NULL : d2, &e), &e,
                 "bw(k)");
            CHECK_EQ_INT(memcount_current(), base - xformer_act_bytes(&d, first, n, B, T).full_bytes);
            CHECK(memcmp(xformer_stage_grads(a), xformer_stage_grads(b),
                         xformer_stage_nparams(a) * sizeof(float)) == 0);
            if (!is_first)
                CHECK(memcmp(d1, d2, NC * sizeof(float)) == 0);
            xformer_stage_free(a);
            xformer_stage_free(b);
            cases++;
        }
    }
    printf("selective: CFW(k) + RC + BW bit-identical to FW + BW and bytes as counted, %d cases\n",
           cases);
    free(tok);
    free(tgt);
    free(in);
    free(dout);
    free(o1);
    free(o2);
    free(d1);
    free(d2);
}

/* Split backward (zero-bubble plans): on a first, a middle and a last stage, B then W of every
 * micro-batch gives the same input gradients and the same parameter gradients as BW, bit for
 * bit; W runs after all the Bs in any order of micro-batches that is also BW's (ascending
 * here); the bytes a B keeps for its W are model/xformer_layout.h's xl_w_keep_floats, and
 * B frees the activations. */
static void test_split_backward(void)
{
    struct xformer_dims d = {
        .vocab = 64, .max_seq = 16, .channels = 32, .heads = 4, .ffn = 128, .layers = 6};
    enum { M = 3 };
    int B = 2, T = 12;
    size_t N = (size_t)B * T, NC = N * (size_t)d.channels;
    static const int first[3] = {0, 2, 4};
    for (int k = 0; k < 3; k++) {
        struct xformer_stage *fused = stage_new(&d, first[k], 2), *split = stage_new(&d, first[k], 2);
        struct xformer_act *af[M], *as[M];
        struct xformer_wgrad *wg[M];
        float *dout = xmalloc(NC * sizeof(float)), *dinf = xmalloc(NC * sizeof(float));
        float *dins = xmalloc(NC * sizeof(float)), *in = xmalloc(NC * sizeof(float));
        int *tok = xmalloc(N * sizeof(int)), *tgt = xmalloc(N * sizeof(int));
        bool is_first = k == 0, is_last = k == 2;
        struct mt_err e = {0};
        bool same_din = true;
        for (int mb = 0; mb < M; mb++) {
            fill_tokens(tok, N, d.vocab);
            fill_tokens(tgt, N, d.vocab);
            fill_normal(in, NC, 1.0);
            float *out = is_last ? NULL : xmalloc(NC * sizeof(float));
            float loss;
            must(xformer_forward(fused, is_first ? tok : NULL, is_first ? NULL : in,
                                 is_last ? tgt : NULL, B, T, XFORMER_KEEP_FULL, 0, out,
                                 is_last ? &loss : NULL, &af[mb], &e), &e, "forward");
            must(xformer_forward(split, is_first ? tok : NULL, is_first ? NULL : in,
                                 is_last ? tgt : NULL, B, T, XFORMER_KEEP_FULL, 0, out,
                                 is_last ? &loss : NULL, &as[mb], &e), &e, "forward");
            free(out);
        }
        for (int mb = 0; mb < M; mb++) {
            fill_normal(dout, NC, 0.1);
            must(xformer_backward(&af[mb], is_last ? NULL : dout, is_first ? NULL : dinf, &e), &e,
                 "backward");
            size_t before = memcount_current();
            must(xformer_backward_input(&as[mb], is_last ? NULL : dout, is_first ? NULL : dins,
                                        &wg[mb], &e), &e, "backward_input");
            CHECK(as[mb] == NULL && wg[mb] != NULL);
            size_t act = xformer_act_bytes(&d, first[k], 2, B, T).full_bytes;
            CHECK_EQ_INT((long)(memcount_current() + act - before),
                         (long)(xl_w_keep_floats(is_last, 2, (size_t)B, (size_t)T,
                                                 (size_t)d.channels, (size_t)d.ffn,
                                                 (size_t)d.vocab) * sizeof(float)));
            if (!is_first)
                same_din &= memcmp(dinf, dins, NC * sizeof(float)) == 0;
        }
        for (int mb = 0; mb < M; mb++) {
            must(xformer_backward_weight(&wg[mb], &e), &e, "backward_weight");
            CHECK(wg[mb] == NULL);
        }
        CHECK(same_din);
        size_t np = xformer_stage_nparams(fused);
        CHECK(memcmp(xformer_stage_grads(fused), xformer_stage_grads(split), np * sizeof(float)) ==
              0);
        xformer_stage_free(fused);
        xformer_stage_free(split);
        free(dout);
        free(dinf);
        free(dins);
        free(in);
        free(tok);
        free(tgt);
    }
}

int main(void)
{
    test_errors_and_init();
    test_finite_differences();
    test_split_and_checkpoint();
    test_memcount();
    test_selective();
    test_split_backward();
    test_dataset();
    test_training();
    report_timing();
    CHECK_EQ_INT(memcount_current(), 0);
    return check_report("test_xformer");
}
