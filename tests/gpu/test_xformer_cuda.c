/* tests/gpu/test_xformer_cuda.c: the CUDA twin of the executor's model (exec/xformer_cuda.cu)
 * against the CPU reference (exec/xformer_cpu.c), after llm.c's test_gpt2.cu: for a first,
 * a middle, a last and a whole-model stage, the same inputs through FW, BW, CFW + RC + BW
 * and one AdamW step must give the CPU's outputs, input gradients, parameter gradients and
 * updated parameters within fp32 tolerance (relative to each tensor's largest value: 1e-4;
 * cuBLAS and atomicAdd sum in other orders). Also: the device bytes a FW keeps equal the CPU's
 * closed form; running out of device memory is an error naming the bytes, not an abort. Exits
 * 77 (Automake's SKIP) with "SKIP: ..." without CUDA or a device. */
#include <config.h>

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/xformer.h"
#include "model/xformer_layout.h"
#include "tests/check.h"
#include "util/err.h"
#include "util/xalloc.h"

#ifndef HAVE_CUDA
int main(void)
{
    printf("SKIP: built without CUDA (configure --with-cuda)\n");
    return 77;
}
#else

#define TOL 1e-4

static double worst_seen;

/* max |a - b| / max |b| */
static double rel(const float *a, const float *b, size_t n)
{
    double d = 0.0, m = 0.0;
    for (size_t i = 0; i < n; i++) {
        d = fmax(d, fabs((double)a[i] - b[i]));
        m = fmax(m, fabs((double)b[i]));
    }
    return m > 0 ? d / m : d;
}

static void check_close(const char *what, const float *gpu, const float *cpu, size_t n)
{
    double r = rel(gpu, cpu, n);
    worst_seen = fmax(worst_seen, r);
    if (r > TOL)
        fprintf(stderr, "%s: relative difference %.3g over %g\n", what, r, TOL);
    CHECK(r <= TOL);
}

static void must(int rc, const struct mt_err *e, const char *what)
{
    if (rc != MT_OK)
        fprintf(stderr, "%s: %s\n", what, e->msg);
    CHECK(rc == MT_OK);
}

static float *to_device(const float *host, size_t n)
{
    struct mt_err e = {0};
    float *d = xformer_cuda_alloc(n * sizeof(float));
    must(xformer_cuda_copy(d, host, n * sizeof(float), 1, &e), &e, "to device");
    return d;
}

static void from_device(float *host, const float *dev, size_t n)
{
    struct mt_err e = {0};
    must(xformer_cuda_copy(host, dev, n * sizeof(float), 0, &e), &e, "from device");
}

/* split: the GPU side runs the split backward (B, then W) against the CPU's whole BW. */
static void run_kind_split(const struct xformer_dims *d, int first, int n, enum xformer_keep keep,
                           int ckpt_layers, bool split, const char *name)
{
    struct mt_err e = {0};
    int B = 2, T = 12;
    size_t N = (size_t)B * T, NC = N * d->channels;
    int is_first = first == 0, is_last = first + n == d->layers;
    int *tok = xmalloc(N * sizeof(int)), *tgt = xmalloc(N * sizeof(int));
    float *in = xmalloc(NC * sizeof(float)), *dout = xmalloc(NC * sizeof(float));
    for (size_t i = 0; i < N; i++) {
        tok[i] = (int)((i * 7 + 3) % (size_t)d->vocab);
        tgt[i] = (int)((i * 5 + 1) % (size_t)d->vocab);
    }
    for (size_t i = 0; i < NC; i++) {
        in[i] = (float)sin(0.37 * (double)i);
        dout[i] = 0.01f * (float)cos(0.11 * (double)i);
    }
    struct xformer_stage *c = NULL;
    struct xformer_cuda_stage *g = NULL;
    must(xformer_stage_create(d, first, n, 1337, &c, &e), &e, "cpu stage");
    must(xformer_cuda_stage_create(d, first, n, 1337, &g, &e), &e, "cuda stage");
    if (c == NULL || g == NULL)
        return;
    xformer_stage_set_loss_scale(c, 0.5f);
    xformer_cuda_stage_set_loss_scale(g, 0.5f);
    float *c_out = xcalloc(NC, sizeof(float)), *c_din = xcalloc(NC, sizeof(float));
    float *g_out = is_last ? NULL : xformer_cuda_alloc(NC * sizeof(float));
    float *g_din = is_first ? NULL : xformer_cuda_alloc(NC * sizeof(float));
    float *g_in = is_first ? NULL : to_device(in, NC);
    float *g_dout = is_last ? NULL : to_device(dout, NC);
    float c_loss = 0, g_loss = 0;
    struct xformer_act *ca = NULL;
    struct xformer_cuda_act *ga = NULL;
    size_t before = xformer_cuda_mem_current();
    must(xformer_forward(c, is_first ? tok : NULL, is_first ? NULL : in, is_last ? tgt : NULL, B, T,
                         XFORMER_KEEP_FULL, 0, is_last ? NULL : c_out, is_last ? &c_loss : NULL, &ca,
                         &e),
         &e, "cpu fw");
    must(xformer_cuda_forward(g, is_first ? tok : NULL, g_in, is_last ? tgt : NULL, B, T, keep,
                              ckpt_layers,
                              g_out, is_last ? &g_loss : NULL, &ga, &e),
         &e, "cuda fw");
    struct xformer_act_size sz = xformer_act_bytes(d, first, n, B, T);
    struct xformer_sel_size sel = xformer_sel_bytes(d, first, n, ckpt_layers, B, T);
    CHECK_EQ_INT(xformer_cuda_mem_current() - before,
                 keep == XFORMER_KEEP_FULL ? sz.full_bytes : sel.keep_bytes);
    if (keep == XFORMER_KEEP_CHECKPOINT) {
        CHECK(!xformer_cuda_act_is_full(ga));
        must(xformer_cuda_recompute(ga, &e), &e, "cuda rc");
        CHECK_EQ_INT(xformer_cuda_mem_current() - before, sz.full_bytes);
    }
    float *h =
        xmalloc((xformer_stage_nparams(c) > NC ? xformer_stage_nparams(c) : NC) * sizeof(float));
    char what[96];
    if (is_last) {
        CHECK_NEAR(g_loss, c_loss, TOL * fabs(c_loss));
    } else {
        from_device(h, g_out, NC);
        snprintf(what, sizeof what, "%s: forward output", name);
        check_close(what, h, c_out, NC);
    }
    must(xformer_backward(&ca, is_last ? NULL : dout, is_first ? NULL : c_din, &e), &e, "cpu bw");
    if (split) { /* B keeps exactly its W's buffer (model/xformer_layout.h), W frees it */
        struct xformer_cuda_wgrad *w = NULL;
        size_t held = xformer_cuda_mem_current();
        must(xformer_cuda_backward_input(&ga, g_dout, g_din, &w, &e), &e, "cuda b");
        CHECK_EQ_INT(xformer_cuda_mem_current() + sz.full_bytes - held,
                     xl_w_keep_floats(is_last, (size_t)n, (size_t)B, (size_t)T,
                                      (size_t)d->channels, (size_t)d->ffn, (size_t)d->vocab) *
                         sizeof(float));
        must(xformer_cuda_backward_weight(&w, &e), &e, "cuda w");
        CHECK(w == NULL && xformer_cuda_mem_current() + sz.full_bytes == held);
    } else {
        must(xformer_cuda_backward(&ga, g_dout, g_din, &e), &e, "cuda bw");
    }
    if (!is_first) {
        from_device(h, g_din, NC);
        snprintf(what, sizeof what, "%s: input gradient", name);
        check_close(what, h, c_din, NC);
    }
    size_t np = xformer_stage_nparams(c);
    CHECK_EQ_INT(xformer_cuda_stage_nparams(g), np);
    must(xformer_cuda_stage_read(g, 1, h, &e), &e, "read grads");
    for (int t = 0; t < XFORMER_NTENSORS; t++) {
        bool per_layer = t >= XFORMER_LN1W && t <= XFORMER_FCPROJB;
        for (int l = per_layer ? first : -1; l < (per_layer ? first + n : 0); l++) {
            struct xformer_view v;
            if (xformer_stage_tensor(c, (enum xformer_tensor)t, l, &v, NULL) != MT_OK)
                continue;
            size_t off = (size_t)(v.grad - xformer_stage_grads(c));
            snprintf(what, sizeof what, "%s: gradient of %s[%d]", name,
                     xformer_tensor_name((enum xformer_tensor)t), l);
            check_close(what, h + off, v.grad, v.n);
        }
    }
    must(xformer_stage_adamw_step(c, 1e-3f, 0.9f, 0.95f, 1e-8f, 0.1f, 1, &e), &e, "cpu adamw");
    must(xformer_cuda_stage_adamw_step(g, 1e-3f, 0.9f, 0.95f, 1e-8f, 0.1f, 1, &e), &e,
         "cuda adamw");
    must(xformer_cuda_stage_read(g, 0, h, &e), &e, "read params");
    snprintf(what, sizeof what, "%s: parameters after AdamW", name);
    check_close(what, h, xformer_stage_params(c), np);
    xformer_cuda_free(g_out);
    xformer_cuda_free(g_din);
    xformer_cuda_free(g_in);
    xformer_cuda_free(g_dout);
    xformer_cuda_stage_free(g);
    xformer_stage_free(c);
    free(h);
    free(tok);
    free(tgt);
    free(in);
    free(dout);
    free(c_out);
    free(c_din);
}

static void run_kind(const struct xformer_dims *d, int first, int n, enum xformer_keep keep,
                     int ckpt_layers, const char *name)
{
    run_kind_split(d, first, n, keep, ckpt_layers, false, name);
}

/* The asynchronous pipelines' vector helpers and parameter swap (exec/interp.c) against
 * their CPU twins: the same elementwise expressions, so within a rounding (nvcc may fuse
 * the multiply-add where the CPU build does not). */
static void run_async_helpers(void)
{
    enum { N = 1000 };
    struct mt_err e = {0};
    float w[N], v[N], old[N], out[N], gout[N], gv[N];
    for (int i = 0; i < N; i++) {
        w[i] = sinf(0.1f * i);
        v[i] = 0.01f * cosf(0.3f * i);
        old[i] = w[i] - 0.02f * sinf(0.7f * i);
    }
    float *dw = to_device(w, N), *dv = to_device(v, N), *dold = to_device(old, N);
    float *dout = to_device(w, N), *dcopy = to_device(v, N);
    must(xformer_cuda_extrapolate(dout, dw, dv, 3.0f, N, &e), &e, "extrapolate");
    must(xformer_cuda_ema_delta(dv, dw, dold, 0.46f, N, &e), &e, "ema_delta");
    must(xformer_cuda_copy_device(dcopy, dw, N * sizeof(float), &e), &e, "copy_device");
    must(xformer_cuda_sync(&e), &e, "sync");
    xformer_extrapolate(out, w, v, 3.0f, N);
    xformer_ema_delta(v, w, old, 0.46f, N);
    from_device(gout, dout, N);
    check_close("extrapolate", gout, out, N);
    from_device(gv, dv, N);
    check_close("ema_delta", gv, v, N);
    from_device(gout, dcopy, N);
    CHECK(memcmp(gout, w, sizeof w) == 0);
    /* swap: a stage's parameters replaced by a buffer and given back */
    struct xformer_dims d = {
        .vocab = 64, .max_seq = 16, .channels = 32, .heads = 4, .ffn = 128, .layers = 2};
    struct xformer_cuda_stage *st = NULL;
    must(xformer_cuda_stage_create(&d, 0, 1, 1337, &st, &e), &e, "stage");
    if (st != NULL) {
        size_t n = xformer_cuda_stage_nparams(st);
        float *buf = xformer_cuda_alloc(n * sizeof(float));
        float *own = xformer_cuda_stage_params(st);
        CHECK(xformer_cuda_stage_swap_params(st, buf) == own);
        CHECK(xformer_cuda_stage_params(st) == buf);
        CHECK(xformer_cuda_stage_swap_params(st, own) == buf);
        xformer_cuda_free(buf);
        xformer_cuda_stage_free(st);
    }
    xformer_cuda_free(dw);
    xformer_cuda_free(dv);
    xformer_cuda_free(dold);
    xformer_cuda_free(dout);
    xformer_cuda_free(dcopy);
}

/* Running out of device memory is an error of the next call that returns an rc, naming the
 * bytes asked for (exec/xformer.h), not an abort: the count is unchanged, and the device
 * works on after it. */
static void run_out_of_memory(void)
{
    struct mt_err e = {0};
    size_t held = xformer_cuda_mem_current();
    size_t huge = (size_t)1 << 50; /* 1 PiB: more than any device holds */
    CHECK(xformer_cuda_alloc(huge) == NULL);
    CHECK(xformer_cuda_mem_current() == held);
    CHECK_EQ_INT(xformer_cuda_sync(&e), MT_EINFEASIBLE);
    CHECK_STR_CONTAINS(e.msg, "out of device memory");
    CHECK_STR_CONTAINS(e.msg, "1125899906842624 bytes");
    CHECK_EQ_INT(xformer_cuda_sync(&e), MT_OK); /* reported once */
    float *small = xformer_cuda_alloc(16 * sizeof(float));
    CHECK(small != NULL);
    xformer_cuda_free(small);
    CHECK_EQ_INT(xformer_cuda_sync(&e), MT_OK);
}

int main(void)
{
    struct mt_err e = {0};
    if (xformer_cuda_init(0, &e) != MT_OK) {
        printf("SKIP: %s\n", e.msg);
        return 77;
    }
    struct xformer_dims d = {
        .vocab = 64, .max_seq = 16, .channels = 32, .heads = 4, .ffn = 128, .layers = 4};
    run_kind(&d, 0, 4, XFORMER_KEEP_FULL, 0, "whole");
    run_kind(&d, 0, 1, XFORMER_KEEP_FULL, 0, "first");
    run_kind(&d, 1, 2, XFORMER_KEEP_FULL, 0, "middle");
    run_kind(&d, 3, 1, XFORMER_KEEP_FULL, 0, "last");
    run_kind(&d, 1, 2, XFORMER_KEEP_CHECKPOINT, 0, "middle, CFW + RC");
    run_kind(&d, 0, 4, XFORMER_KEEP_CHECKPOINT, 0, "whole, CFW + RC");
    /* selective checkpointing: the first k layers */
    run_kind(&d, 0, 4, XFORMER_KEEP_CHECKPOINT, 1, "whole, CFW of 1 layer + RC");
    run_kind(&d, 0, 4, XFORMER_KEEP_CHECKPOINT, 3, "whole, CFW of 3 layers + RC");
    run_kind(&d, 1, 2, XFORMER_KEEP_CHECKPOINT, 1, "middle, CFW of 1 layer + RC");
    run_kind(&d, 0, 3, XFORMER_KEEP_CHECKPOINT, 2, "first, CFW of 2 layers + RC");
    run_kind(&d, 1, 3, XFORMER_KEEP_CHECKPOINT, 2, "last, CFW of 2 layers + RC");
    /* split backward (zero-bubble plans): B + W on the GPU against BW on the CPU */
    run_kind_split(&d, 0, 1, XFORMER_KEEP_FULL, 0, true, "first, split B + W");
    run_kind_split(&d, 1, 2, XFORMER_KEEP_FULL, 0, true, "middle, split B + W");
    run_kind_split(&d, 3, 1, XFORMER_KEEP_FULL, 0, true, "last, split B + W");
    run_kind_split(&d, 1, 2, XFORMER_KEEP_CHECKPOINT, 0, true, "middle, CFW + RC, split B + W");
    run_async_helpers();
    run_out_of_memory();
    printf("cuda vs cpu: worst relative difference %.3g (tolerance %g)\n", worst_seen, TOL);
    xformer_cuda_fini();
    return check_report("test_xformer_cuda");
}
#endif
