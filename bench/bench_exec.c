/* bench/bench_exec.c: the executor's two speed goals (issue 7).
 *
 * 1. The CPU block: forward + backward of one transformer layer (exec/xformer_cpu.c, a middle
 *    stage: no embedding, no head) against the same sgemm calls alone, made here with the
 *    shapes xformer_cpu.c uses (4 linears forward, 2 sgemms each backward, 2 per head
 *    forward and 4 per head backward for attention). Goal: everything but the sgemms (layer
 *    norms, softmax, GELU, residuals, bias sums, allocation) costs <= 25 % of the total.
 * 2. The interpreter's own cost per instruction: a single-rank plan of 64 micro-batches run by
 *    exec/interp.c on a null backend (every model call returns at once, buffers are one
 *    static block), so the step time divided by the instruction count is what the executor
 *    adds around the model: dispatch, buffer tables, dataset reads, trace records (with and
 *    without capture), the end-of-step status allreduce. Goal: <= 5 us per instruction.
 * Runs as an MPI singleton (no mpirun needed); OpenBLAS uses one thread, as a rank does. */
#include <config.h>

#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/bench.h"
#include "exec/backend.h"
#include "exec/capture.h"
#include "exec/comm.h"
#include "exec/interp.h"
#include "exec/launch.h"
#include "exec/memcount.h"
#include "exec/xformer.h"
#include "model/config.h"
#include "model/presets.h"
#include "sim/plan/plan.h"
#include "sim/schemes/scheme.h"
#include "util/err.h"
#include "util/xalloc.h"

static void bench_fill(float *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        v[i] = (float)((i * 2654435761u) % 1000) * 1e-3f - 0.5f;
}

/* ---- 1. the block against its sgemms -------------------------------------------------- */

static void sgemm_nt(int M, int N, int K, const float *a, int lda, const float *b, int ldb,
                     float *c, int ldc, float beta)
{
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, M, N, K, 1.0f, a, lda, b, ldb, beta, c,
                ldc);
}

static void sgemm_nn(int M, int N, int K, const float *a, int lda, const float *b, int ldb,
                     float *c, int ldc, float beta)
{
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0f, a, lda, b, ldb, beta, c,
                ldc);
}

static void sgemm_tn(int M, int N, int K, const float *a, int lda, const float *b, int ldb,
                     float *c, int ldc, float beta)
{
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, M, N, K, 1.0f, a, lda, b, ldb, beta, c,
                ldc);
}

/* The sgemm calls of one layer's forward and backward, shapes as in xformer_cpu.c. */
static void bench_sgemms(const struct xformer_dims *d, int B, int T, float *x, float *w, float *y,
                         float *att)
{
    int N = B * T, C = d->channels, F = d->ffn, hs = C / d->heads, C3 = 3 * C;
    static const int lin[4][2] = {{0, 3}, {0, 1}, {0, 4}, {4, 1}}; /* in, out: 0=C 1=C 3=3C 4=F */
    for (int pass = 0; pass < 2; pass++)
        for (int l = 0; l < 4; l++) {
            int in = lin[l][0] == 4 ? F : C;
            int out = lin[l][1] == 3 ? C3 : lin[l][1] == 4 ? F : C;
            if (pass == 0) {
                sgemm_nt(N, out, in, x, in, w, in, y, out, 0.0f); /* forward */
            } else {
                sgemm_nn(N, in, out, y, out, w, in, x, in, 0.0f); /* dinp */
                sgemm_tn(out, in, N, y, out, x, in, w, in, 1.0f); /* dweight */
            }
        }
    for (int b = 0; b < B; b++)
        for (int h = 0; h < d->heads; h++) {
            const float *q = x + (size_t)b * T * C3 + (size_t)h * hs;
            sgemm_nt(T, T, hs, q, C3, q + C, C3, att, T, 0.0f);    /* fw scores */
            sgemm_nn(T, hs, T, att, T, q + 2 * C, C3, y, C, 0.0f); /* fw att @ v */
            sgemm_nt(T, T, hs, y, C, q + 2 * C, C3, att, T, 0.0f); /* bw datt */
            sgemm_tn(T, hs, T, att, T, y, C, x, C3, 0.0f);         /* bw dv */
            sgemm_nn(T, hs, T, att, T, q + C, C3, x, C3, 0.0f);    /* bw dq */
            sgemm_tn(T, hs, T, att, T, q, C3, x, C3, 0.0f);        /* bw dk */
        }
}

static int bench_block(int C, int B, int T)
{
    struct xformer_dims d = {
        .vocab = 256, .max_seq = T, .channels = C, .heads = 8, .ffn = 4 * C, .layers = 3};
    int reps = 7;
    size_t NC = (size_t)B * T * d.channels;
    struct mt_err e = {0};
    struct xformer_stage *s = NULL;
    if (xformer_stage_create(&d, 1, 1, 1337, &s, &e) != MT_OK) {
        fprintf(stderr, "bench_exec: %s\n", e.msg);
        return 1;
    }
    float *in = xmalloc(NC * sizeof(float)), *out = xmalloc(NC * sizeof(float));
    float *dout = xmalloc(NC * sizeof(float)), *din = xmalloc(NC * sizeof(float));
    bench_fill(in, NC);
    bench_fill(dout, NC);
    size_t big = (size_t)B * T * (d.ffn > 3 * d.channels ? d.ffn : 3 * d.channels);
    float *x = xmalloc(big * sizeof(float)), *w = xmalloc((size_t)d.ffn * d.channels * 4);
    float *y = xmalloc(big * sizeof(float)), *att = xmalloc((size_t)T * T * sizeof(float));
    bench_fill(x, big);
    bench_fill(w, (size_t)d.ffn * d.channels);
    double tb[16], ts[16];
    for (int r = 0; r < reps; r++) {
        struct xformer_act *a = NULL;
        double t0 = bench_now_ms();
        if (xformer_forward(s, NULL, in, NULL, B, T, XFORMER_KEEP_FULL, 0, out, NULL, &a, &e) !=
                MT_OK ||
            xformer_backward(&a, dout, din, &e) != MT_OK) {
            fprintf(stderr, "bench_exec: %s\n", e.msg);
            return 1;
        }
        tb[r] = bench_now_ms() - t0;
        t0 = bench_now_ms();
        bench_sgemms(&d, B, T, x, w, y, att);
        ts[r] = bench_now_ms() - t0;
    }
    double mb = bench_median(tb, reps), ms = bench_median(ts, reps);
    double rest = (mb - ms) / mb;
    printf("block C=%d heads=%d F=%d B=%d T=%d, forward + backward of one layer:\n"
           "  total %.2f ms, its sgemm calls alone %.2f ms: the rest is %.1f %% (goal <= 25 %%)"
           " %s\n",
           d.channels, d.heads, d.ffn, B, T, mb, ms, 100 * rest, rest <= 0.25 ? "ok" : "MISSED");
    xformer_stage_free(s);
    free(in);
    free(out);
    free(dout);
    free(din);
    free(x);
    free(w);
    free(y);
    free(att);
    return 0;
}

/* ---- 2. the interpreter's cost per instruction ----------------------------------------- */

static float bench_buf[1 << 16];
static float bench_grad[16];
static int bench_handle;

static int null_open(int local_rank, struct mt_err *e)
{
    return MT_OK;
}

static void null_close(void)
{
}

static int null_stage_create(const struct xformer_dims *d, int first, int n, uint64_t seed,
                             void **out, struct mt_err *e)
{
    *out = &bench_handle;
    return MT_OK;
}

static void null_stage_free(void *st)
{
}

static size_t null_nparams(void *st)
{
    return 16;
}

static float *null_grads(void *st)
{
    return bench_grad;
}

static int null_read(void *st, bool grads, float *host, struct mt_err *e)
{
    return MT_OK;
}

static void null_zero(void *st)
{
}

static void null_scale(void *st, float s)
{
}

static int null_adamw(void *st, float lr, float b1, float b2, float eps, float wd, int t,
                      struct mt_err *e)
{
    return MT_OK;
}

static int null_forward(void *st, const int *tokens, const float *in, const int *targets, int B,
                        int T, enum xformer_keep keep, int ckpt_layers, float *out, float *loss,
                        void **act, struct mt_err *e)
{
    if (loss)
        *loss = 1.0f;
    *act = &bench_handle;
    return MT_OK;
}

static int null_recompute(void *act, struct mt_err *e)
{
    return MT_OK;
}

static int null_backward(void **act, const float *dout, float *din, struct mt_err *e)
{
    *act = NULL;
    return MT_OK;
}

static void null_act_free(void *act)
{
}

static float *null_buf_alloc(size_t floats)
{
    return bench_buf;
}

static void null_buf_free(float *b)
{
}

static int null_copy(float *dst, const float *src, size_t n, struct mt_err *e)
{
    return MT_OK;
}

static int null_sync(struct mt_err *e)
{
    return MT_OK;
}

static size_t null_mem(void)
{
    return 0;
}

static void null_watch(void (*fn)(size_t, void *), void *ctx)
{
}

static void null_reset_peak(void)
{
}

static const struct backend_ops null_ops = {
    .name = "null",
    .open = null_open,
    .close = null_close,
    .stage_create = null_stage_create,
    .stage_free = null_stage_free,
    .stage_nparams = null_nparams,
    .stage_grads = null_grads,
    .stage_read = null_read,
    .stage_zero_grad = null_zero,
    .stage_set_loss_scale = null_scale,
    .stage_adamw = null_adamw,
    .forward = null_forward,
    .recompute = null_recompute,
    .backward = null_backward,
    .act_free = null_act_free,
    .buf_alloc = null_buf_alloc,
    .buf_free = null_buf_free,
    .buf_to_host = null_copy,
    .buf_from_host = null_copy,
    .sync = null_sync,
    .mem_current = null_mem,
    .mem_peak = null_mem,
    .mem_reset_peak = null_reset_peak,
    .mem_watch = null_watch,
};

static int bench_interp(void)
{
    struct mt_err e = {0};
    int rank, size, argc = 0;
    char **argv = NULL;
    if (launch_mpi_init(&argc, &argv, &rank, &size, &e) != MT_OK) {
        fprintf(stderr, "bench_exec: %s\n", e.msg);
        return 1;
    }
    struct config c;
    config_default(&c);
    presets_model("tiny", &c.model, &e);
    c.num_device = 1;
    c.num_microbatches = 64;
    c.micro_batch_size = 1;
    struct plan *p = NULL;
    char *data = NULL;
    if (scheme_build(&c, &p, &e) != MT_OK || launch_data_path(NULL, &data, &e) != MT_OK) {
        fprintf(stderr, "bench_exec: %s\n", e.msg);
        return 1;
    }
    bool holds = true;
    struct comm_layout l = {1, 1, 1, &holds, NULL};
    struct comm *cm = NULL;
    if (comm_open(COMM_MPI, &l, 60, &cm, &e) != MT_OK) {
        fprintf(stderr, "bench_exec: %s\n", e.msg);
        return 1;
    }
    struct interp_opts o;
    interp_opts_default(&o);
    o.steps = 200;
    o.data_path = data;
    int n = plan_len(p, 0);
    for (int with = 0; with < 2; with++) {
        struct capture *cap = NULL;
        if (with &&
            capture_open(NULL, 0, 0, 0, (size_t)o.steps * (size_t)n + 64, &cap, &e) != MT_OK)
            return 1;
        struct interp_result r;
        double t0 = bench_now_ms();
        if (interp_run(p, &null_ops, cm, cap, &o, NULL, NULL, &r, &e) != MT_OK) {
            fprintf(stderr, "bench_exec: %s\n", e.msg);
            return 1;
        }
        double ms = bench_now_ms() - t0;
        double med = bench_median(r.step_s, r.steps) * 1e3; /* per step, ms */
        printf("interpreter, %d instructions a step (%s capture): %.2f us per instruction "
               "(median step %.3f ms, %d steps in %.0f ms; goal <= 5 us) %s\n",
               n, with ? "with" : "without", 1e3 * med / n, med, r.steps, ms,
               1e3 * med / n <= 5.0 ? "ok" : "MISSED");
        interp_result_fini(&r);
        capture_close(cap, true);
    }
    comm_close(cm);
    plan_free(p);
    free(data);
    launch_mpi_finalize();
    return 0;
}

int main(void)
{
    openblas_set_num_threads(1);
    /* the tiny model's width, a small and a GPT-2-small-like width */
    if (bench_block(64, 1, 64) != 0 || bench_block(256, 4, 128) != 0 ||
        bench_block(768, 2, 256) != 0)
        return 1;
    return bench_interp();
}
