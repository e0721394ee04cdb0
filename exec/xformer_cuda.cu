/* exec/xformer_cuda.cu: the CUDA twin of exec/xformer_cpu.c (built when configure finds
 * CUDA): the same GPT-2 style stage, the same flat parameter layout (offsets are taken from
 * a CPU stage of the same split, whose initial weights are copied over, so both start
 * bit-identical), the same activation tensors, fp32 with every matmul through cuBLAS (TF32
 * tensor cores when MT_CUDA_TF32=1) and simple kernels for the rest, after llm.c's
 * train_gpt2.cu. Attention runs per batch row as strided-batched GEMMs over the heads.
 *
 * Numerics: within fp32 rounding of the CPU reference, not bit-identical: cuBLAS sums in
 * another order and parameter-gradient reductions of the layer norms and the embedding use
 * atomicAdd. Memory: every device buffer goes through xformer_cuda_alloc, which counts bytes
 * like exec/memcount.c does on the host (cudaMalloc's own rounding is not counted).
 * All work is queued on one stream per process; xformer_cuda_sync waits for it.
 *
 * Status (see the executor's issue note): compiled in CI; run only where a GPU is lent
 * (tests/gpu/test_xformer_cuda.c compares it with the CPU stage). */
#include <config.h>

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern "C" {
#include "exec/check.h"
#include "exec/xformer.h"
#include "model/xformer_layout.h"
#include "util/err.h"
#include "util/xalloc.h"
}

/* ---------------------------------------------------------------------------------------- */
/* process state: device, stream, cuBLAS, the counting allocator                              */
/* ---------------------------------------------------------------------------------------- */

static cudaStream_t xc_stream;
static cublasHandle_t xc_blas;
static bool xc_ready;
static size_t xc_cur, xc_peak;
static void (*xc_hook)(size_t, void *);
static void *xc_hook_ctx;

/* The first allocation that failed since the last xc_oom_check, 0 when none: running out of
 * device memory is an expected outcome in a tool about memory caps, so it becomes an error
 * of the call that allocated, not an abort. */
static size_t xc_failed_bytes;

/* MT_EINFEASIBLE naming the refused request when an allocation failed since the last check. */
static int xc_oom_check(struct mt_err *e)
{
    if (xc_failed_bytes == 0)
        return MT_OK;
    size_t asked = xc_failed_bytes;
    xc_failed_bytes = 0;
    return err_set(e, MT_EINFEASIBLE,
                   "out of device memory: cudaMalloc of %zu bytes refused with %zu bytes held by "
                   "this rank",
                   asked, xc_cur);
}

/* Live device blocks and their sizes, for the count (few: stages, activations, buffers). */
struct xc_block {
    void *p;
    size_t bytes;
};
static struct xc_block *xc_live;
static size_t xc_nlive, xc_caplive;

extern "C" int xformer_cuda_init(int local_rank, struct mt_err *e)
{
    if (xc_ready)
        return MT_OK;
    int n = 0;
    cudaError_t rc = cudaGetDeviceCount(&n);
    if (rc != cudaSuccess || n == 0)
        return err_set(e, MT_EDEVICE, "no CUDA device (%s)",
                       rc != cudaSuccess ? cudaGetErrorString(rc) : "count 0");
    CUDA_TRY(e, cudaSetDevice(local_rank % n));
    CUDA_TRY(e, cudaStreamCreateWithFlags(&xc_stream, cudaStreamNonBlocking));
    CUBLAS_TRY(e, cublasCreate(&xc_blas));
    CUBLAS_TRY(e, cublasSetStream(xc_blas, xc_stream));
    const char *tf32 = getenv("MT_CUDA_TF32");
    CUBLAS_TRY(e, cublasSetMathMode(xc_blas, tf32 && strcmp(tf32, "1") == 0
                                                 ? CUBLAS_TF32_TENSOR_OP_MATH
                                                 : CUBLAS_PEDANTIC_MATH));
    xc_ready = true;
    return MT_OK;
}

extern "C" void xformer_cuda_fini(void)
{
    if (!xc_ready)
        return;
    cublasDestroy(xc_blas);
    cudaStreamDestroy(xc_stream);
    xc_ready = false;
}

extern "C" int xformer_cuda_sync(struct mt_err *e)
{
    TRY(xc_oom_check(e)); /* a buffer handed out earlier may be missing */
    CUDA_TRY(e, cudaStreamSynchronize(xc_stream));
    CUDA_TRY(e, cudaGetLastError());
    return MT_OK;
}

extern "C" void *xformer_cuda_alloc(size_t bytes)
{
    void *p = NULL;
    if (cudaMalloc(&p, bytes ? bytes : 1) != cudaSuccess) {
        cudaGetLastError(); /* clear the sticky error: the device itself is fine */
        if (xc_failed_bytes == 0)
            xc_failed_bytes = bytes ? bytes : 1;
        return NULL;
    }
    if (xc_nlive == xc_caplive) {
        xc_caplive = xc_caplive ? 2 * xc_caplive : 64;
        /* host memory: exhaustion aborts with a message, as everywhere (util/xalloc.h) */
        xc_live = (struct xc_block *)xreallocarray(xc_live, xc_caplive, sizeof *xc_live);
    }
    xc_live[xc_nlive++] = (struct xc_block){p, bytes};
    xc_cur += bytes;
    if (xc_cur > xc_peak)
        xc_peak = xc_cur;
    if (xc_hook)
        xc_hook(xc_cur, xc_hook_ctx);
    return p;
}

extern "C" void xformer_cuda_free(void *p)
{
    if (p == NULL)
        return;
    size_t bytes = 0;
    for (size_t i = 0; i < xc_nlive; i++)
        if (xc_live[i].p == p) {
            bytes = xc_live[i].bytes;
            xc_live[i] = xc_live[--xc_nlive];
            break;
        }
    cudaFree(p); /* waits for queued work that may still use the block */
    xc_cur -= bytes;
    if (xc_hook)
        xc_hook(xc_cur, xc_hook_ctx);
}

extern "C" size_t xformer_cuda_mem_current(void)
{
    return xc_cur;
}

extern "C" size_t xformer_cuda_mem_peak(void)
{
    return xc_peak;
}

extern "C" void xformer_cuda_mem_reset_peak(void)
{
    xc_peak = xc_cur;
}

extern "C" void xformer_cuda_mem_set_hook(void (*fn)(size_t, void *), void *ctx)
{
    xc_hook = fn;
    xc_hook_ctx = ctx;
}

extern "C" int xformer_cuda_copy(void *dst, const void *src, size_t bytes, int to_device,
                                 struct mt_err *e)
{
    TRY(xc_oom_check(e)); /* a buffer handed out earlier may be missing */
    CUDA_TRY(e, cudaMemcpyAsync(dst, src, bytes,
                                to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost,
                                xc_stream));
    CUDA_TRY(e, cudaStreamSynchronize(xc_stream));
    return MT_OK;
}

extern "C" int xformer_cuda_copy_device(void *dst, const void *src, size_t bytes,
                                        struct mt_err *e)
{
    TRY(xc_oom_check(e)); /* a buffer handed out earlier may be missing */
    CUDA_TRY(e, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, xc_stream));
    return MT_OK;
}

/* ---------------------------------------------------------------------------------------- */
/* kernels (one thread per element, or one warp per row)                                      */
/* ---------------------------------------------------------------------------------------- */

#define LN_EPS 1e-5f
#define GELU_SCALE 0.7978845608028654f
#define GELU_CUBE 0.044715f

static unsigned xc_blocks(size_t n, unsigned threads)
{
    return (unsigned)((n + threads - 1) / threads);
}

__device__ static float xc_warp_sum(float v)
{
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, o);
    return __shfl_sync(0xffffffffu, v, 0);
}

__device__ static float xc_warp_max(float v)
{
    for (int o = 16; o > 0; o >>= 1)
        v = fmaxf(v, __shfl_down_sync(0xffffffffu, v, o));
    return __shfl_sync(0xffffffffu, v, 0);
}

__global__ static void k_encoder_fw(float *out, const int *tok, const float *wte, const float *wpe,
                                    int T, int C, size_t n)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    size_t bt = i / C;
    int c = (int)(i % C), t = (int)(bt % T);
    out[i] = wte[(size_t)tok[bt] * C + c] + wpe[(size_t)t * C + c];
}

__global__ static void k_encoder_bw(float *dwte, float *dwpe, const float *dout, const int *tok,
                                    int T, int C, size_t n)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    size_t bt = i / C;
    int c = (int)(i % C), t = (int)(bt % T);
    atomicAdd(&dwte[(size_t)tok[bt] * C + c], dout[i]);
    atomicAdd(&dwpe[(size_t)t * C + c], dout[i]);
}

/* one warp per row */
__global__ static void k_layernorm_fw(float *out, float *mean, float *rstd, const float *inp,
                                      const float *w, const float *b, int N, int C)
{
    int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x % 32;
    if (row >= N)
        return;
    const float *x = inp + (size_t)row * C;
    float s = 0.0f;
    for (int i = lane; i < C; i += 32)
        s += x[i];
    float m = xc_warp_sum(s) / C;
    float v = 0.0f;
    for (int i = lane; i < C; i += 32)
        v += (x[i] - m) * (x[i] - m);
    float r = rsqrtf(xc_warp_sum(v) / C + LN_EPS);
    float *o = out + (size_t)row * C;
    for (int i = lane; i < C; i += 32)
        o[i] = (r * (x[i] - m)) * w[i] + b[i];
    if (lane == 0) {
        mean[row] = m;
        rstd[row] = r;
    }
}

/* adds into dinp, dw, db (one warp per row; parameter gradients by atomicAdd) */
__global__ static void k_layernorm_bw(float *dinp, float *dw, float *db, const float *dout,
                                      const float *inp, const float *w, const float *mean,
                                      const float *rstd, int N, int C)
{
    int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x % 32;
    if (row >= N)
        return;
    const float *g = dout + (size_t)row * C, *x = inp + (size_t)row * C;
    float m = mean[row], s = rstd[row];
    float a = 0.0f, bsum = 0.0f;
    for (int i = lane; i < C; i += 32) {
        float norm = (x[i] - m) * s, dnorm = w[i] * g[i];
        a += dnorm;
        bsum += dnorm * norm;
    }
    a = xc_warp_sum(a) / C;
    bsum = xc_warp_sum(bsum) / C;
    float *dx = dinp + (size_t)row * C;
    for (int i = lane; i < C; i += 32) {
        float norm = (x[i] - m) * s, dnorm = w[i] * g[i];
        atomicAdd(&db[i], g[i]);
        atomicAdd(&dw[i], norm * g[i]);
        dx[i] += (dnorm - a - norm * bsum) * s;
    }
}

__global__ static void k_bias_add(float *out, const float *bias, size_t N, int OC)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N * OC)
        out[i] += bias[i % OC];
}

/* dbias[j] += sum over rows (one thread per column: deterministic) */
__global__ static void k_bias_bw(float *dbias, const float *dout, size_t N, int OC)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= OC)
        return;
    float s = 0.0f;
    for (size_t r = 0; r < N; r++)
        s += dout[r * OC + j];
    dbias[j] += s;
}

__global__ static void k_add(float *out, const float *inp, size_t n)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] += inp[i];
}

__global__ static void k_gelu_fw(float *out, const float *inp, size_t n)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float x = inp[i], a = GELU_SCALE * (x + GELU_CUBE * x * x * x);
    out[i] = x / (1.0f + expf(-2.0f * a));
}

__global__ static void k_gelu_bw(float *dinp, const float *inp, const float *dout, size_t n)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float x = inp[i], a = GELU_SCALE * (x + GELU_CUBE * x * x * x);
    float sg = 1.0f / (1.0f + expf(-2.0f * a));
    float da = GELU_SCALE * (1.0f + 3.0f * GELU_CUBE * x * x);
    dinp[i] = (sg + 2.0f * x * sg * (1.0f - sg) * da) * dout[i];
}

/* causal softmax in place over rows of (rows, T) score matrices; row r is query r % T */
__global__ static void k_softmax_causal(float *att, int T, size_t rows)
{
    size_t row = (size_t)blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    int lane = threadIdx.x % 32;
    if (row >= rows)
        return;
    int t = (int)(row % T);
    float *a = att + row * T;
    float mx = -INFINITY;
    for (int j = lane; j <= t; j += 32)
        mx = fmaxf(mx, a[j]);
    mx = xc_warp_max(mx);
    float s = 0.0f;
    for (int j = lane; j <= t; j += 32) {
        a[j] = expf(a[j] - mx);
        s += a[j];
    }
    float inv = 1.0f / xc_warp_sum(s);
    for (int j = lane; j < T; j += 32)
        a[j] = j <= t ? a[j] * inv : 0.0f;
}

/* datt = a * (datt - rowdot(a, datt)) * scale, causal */
__global__ static void k_softmax_bw(float *datt, const float *att, float scale, int T, size_t rows)
{
    size_t row = (size_t)blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    int lane = threadIdx.x % 32;
    if (row >= rows)
        return;
    int t = (int)(row % T);
    const float *a = att + row * T;
    float *d = datt + row * T;
    float dot = 0.0f;
    for (int j = lane; j <= t; j += 32)
        dot += a[j] * d[j];
    dot = xc_warp_sum(dot);
    for (int j = lane; j < T; j += 32)
        d[j] = j <= t ? a[j] * (d[j] - dot) * scale : 0.0f;
}

/* probs (N,V): logits in, softmax out; losses[r] = -log p[target] (one warp per row) */
__global__ static void k_crossentropy_fw(float *probs, float *losses, const int *tgt, int N, int V)
{
    int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x % 32;
    if (row >= N)
        return;
    float *p = probs + (size_t)row * V;
    float mx = -INFINITY;
    for (int j = lane; j < V; j += 32)
        mx = fmaxf(mx, p[j]);
    mx = xc_warp_max(mx);
    float s = 0.0f;
    for (int j = lane; j < V; j += 32) {
        p[j] = expf(p[j] - mx);
        s += p[j];
    }
    float inv = 1.0f / xc_warp_sum(s);
    for (int j = lane; j < V; j += 32)
        p[j] *= inv;
    __syncwarp();
    if (lane == 0)
        losses[row] = -logf(p[tgt[row]]);
}

__global__ static void k_crossentropy_bw(float *probs, const int *tgt, float dloss, int N, int V)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (size_t)N * V)
        return;
    int r = (int)(i / V), j = (int)(i % V);
    probs[i] = (probs[i] - (j == tgt[r] ? 1.0f : 0.0f)) * dloss;
}

__global__ static void k_adamw(float *p, const float *g, float *m, float *v, size_t n, float lr,
                               float b1, float b2, float eps, float wd, float c1, float c2)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float mi = b1 * m[i] + (1.0f - b1) * g[i];
    float vi = b2 * v[i] + (1.0f - b2) * g[i] * g[i];
    m[i] = mi;
    v[i] = vi;
    p[i] -= lr * ((mi / c1) / (sqrtf(vi / c2) + eps) + wd * p[i]);
}

/* Asynchronous pipelines (exec/interp.c): the twins of xformer_extrapolate and
 * xformer_ema_delta (exec/xformer_cpu.c), the same expressions element by element. */
__global__ static void k_extrapolate(float *out, const float *w, const float *v, float c, size_t n)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = w[i] - c * v[i];
}

__global__ static void k_ema_delta(float *v, const float *w, const float *w_old, float g, size_t n)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        v[i] = g * v[i] + (1.0f - g) * (w[i] - w_old[i]);
}

/* ---------------------------------------------------------------------------------------- */
/* cuBLAS helpers: row-major matrices seen column-major, as llm.c does                        */
/* ---------------------------------------------------------------------------------------- */

/* out (N,OC) = inp (N,C) @ w (OC,C)^T [+ bias] */
static int xc_matmul_fw(float *out, const float *inp, const float *w, const float *bias, int N,
                        int C, int OC, struct mt_err *e)
{
    const float one = 1.0f, zero = 0.0f;
    CUBLAS_TRY(e, cublasSgemm(xc_blas, CUBLAS_OP_T, CUBLAS_OP_N, OC, N, C, &one, w, C, inp, C,
                              &zero, out, OC));
    if (bias)
        k_bias_add<<<xc_blocks((size_t)N * OC, 256), 256, 0, xc_stream>>>(out, bias, (size_t)N, OC);
    return MT_OK;
}

/* dinp (N,C) = dout @ w (written); dw (OC,C) += dout^T @ inp; dbias += column sums */
/* The weight half of a matmul's backward (split backward's W): dw += dout^T inp, dbias. */
static int xc_matmul_bw_weight(float *dw, float *dbias, const float *dout, const float *inp,
                               int N, int C, int OC, struct mt_err *e)
{
    const float one = 1.0f;
    CUBLAS_TRY(e, cublasSgemm(xc_blas, CUBLAS_OP_N, CUBLAS_OP_T, C, OC, N, &one, inp, C, dout, OC,
                              &one, dw, C));
    if (dbias)
        k_bias_bw<<<xc_blocks((size_t)OC, 128), 128, 0, xc_stream>>>(dbias, dout, (size_t)N, OC);
    return MT_OK;
}

/* Whole (wk NULL): the input gradient, then the weight's. Split (B): the input gradient, and
 * the GEMM's input and output gradient copied to *wk (advanced) for W, as the CPU model. */
static int xc_matmul_bw(float *dinp, float *dw, float *dbias, const float *dout, const float *inp,
                        const float *w, int N, int C, int OC, float **wk, struct mt_err *e)
{
    const float one = 1.0f, zero = 0.0f;
    CUBLAS_TRY(e, cublasSgemm(xc_blas, CUBLAS_OP_N, CUBLAS_OP_N, C, N, OC, &one, w, C, dout, OC,
                              &zero, dinp, C));
    if (wk == NULL)
        return xc_matmul_bw_weight(dw, dbias, dout, inp, N, C, OC, e);
    cudaMemcpyAsync(*wk, inp, (size_t)N * C * sizeof(float), cudaMemcpyDeviceToDevice, xc_stream);
    cudaMemcpyAsync(*wk + (size_t)N * C, dout, (size_t)N * OC * sizeof(float),
                    cudaMemcpyDeviceToDevice, xc_stream);
    *wk += (size_t)N * (C + OC);
    return MT_OK;
}

/* out (B,T,C) = causal attention of qkv (B,T,3C); att (B,NH,T,T) keeps the softmax */
static int xc_attention_fw(float *out, float *att, const float *qkv, int B, int T, int C, int NH,
                           struct mt_err *e)
{
    int hs = C / NH, C3 = 3 * C;
    const float scale = 1.0f / sqrtf((float)hs), one = 1.0f, zero = 0.0f;
    for (int b = 0; b < B; b++) {
        const float *q = qkv + (size_t)b * T * C3, *k = q + C, *v = q + 2 * C;
        float *a = att + (size_t)b * NH * T * T;
        CUBLAS_TRY(e, cublasSgemmStridedBatched(xc_blas, CUBLAS_OP_T, CUBLAS_OP_N, T, T, hs,
                                                &scale, k, C3, hs, q, C3, hs, &zero, a, T,
                                                (long long)T * T, NH));
        size_t rows = (size_t)NH * T;
        k_softmax_causal<<<xc_blocks(rows * 32, 256), 256, 0, xc_stream>>>(a, T, rows);
        CUBLAS_TRY(e, cublasSgemmStridedBatched(xc_blas, CUBLAS_OP_N, CUBLAS_OP_N, hs, T, T, &one,
                                                v, C3, hs, a, T, (long long)T * T, &zero,
                                                out + (size_t)b * T * C, C, hs, NH));
    }
    return MT_OK;
}

/* dqkv (B,T,3C) written; datt: (NH,T,T) scratch */
static int xc_attention_bw(float *dqkv, float *datt, const float *dout, const float *qkv,
                           const float *att, int B, int T, int C, int NH, struct mt_err *e)
{
    int hs = C / NH, C3 = 3 * C;
    const float scale = 1.0f / sqrtf((float)hs), one = 1.0f, zero = 0.0f;
    long long sT = (long long)T * T;
    for (int b = 0; b < B; b++) {
        size_t off = (size_t)b * T * C3;
        const float *q = qkv + off, *k = q + C, *v = q + 2 * C;
        float *dq = dqkv + off, *dk = dq + C, *dv = dq + 2 * C;
        const float *a = att + (size_t)b * NH * T * T;
        const float *g = dout + (size_t)b * T * C;
        /* datt = g @ v^T ; dv = a^T @ g */
        CUBLAS_TRY(e, cublasSgemmStridedBatched(xc_blas, CUBLAS_OP_T, CUBLAS_OP_N, T, T, hs, &one,
                                                v, C3, hs, g, C, hs, &zero, datt, T, sT, NH));
        CUBLAS_TRY(e, cublasSgemmStridedBatched(xc_blas, CUBLAS_OP_N, CUBLAS_OP_T, hs, T, T, &one,
                                                g, C, hs, a, T, sT, &zero, dv, C3, hs, NH));
        size_t rows = (size_t)NH * T;
        k_softmax_bw<<<xc_blocks(rows * 32, 256), 256, 0, xc_stream>>>(datt, a, scale, T, rows);
        /* dq = datt @ k ; dk = datt^T @ q */
        CUBLAS_TRY(e, cublasSgemmStridedBatched(xc_blas, CUBLAS_OP_N, CUBLAS_OP_N, hs, T, T, &one,
                                                k, C3, hs, datt, T, sT, &zero, dq, C3, hs, NH));
        CUBLAS_TRY(e, cublasSgemmStridedBatched(xc_blas, CUBLAS_OP_N, CUBLAS_OP_T, hs, T, T, &one,
                                                q, C3, hs, datt, T, sT, &zero, dk, C3, hs, NH));
    }
    return MT_OK;
}

static void xc_layernorm_fw(float *out, float *mean, float *rstd, const float *inp, const float *w,
                            const float *b, int N, int C)
{
    k_layernorm_fw<<<xc_blocks((size_t)N * 32, 256), 256, 0, xc_stream>>>(out, mean, rstd, inp, w,
                                                                          b, N, C);
}

static void xc_layernorm_bw(float *dinp, float *dw, float *db, const float *dout, const float *inp,
                            const float *w, const float *mean, const float *rstd, int N, int C)
{
    k_layernorm_bw<<<xc_blocks((size_t)N * 32, 256), 256, 0, xc_stream>>>(dinp, dw, db, dout, inp,
                                                                          w, mean, rstd, N, C);
}

/* ---------------------------------------------------------------------------------------- */
/* the stage                                                                                  */
/* ---------------------------------------------------------------------------------------- */

/* Offsets (floats) of one layer's tensors from the layer's start, LN1W .. FCPROJB. */
enum { XL_LN1W, XL_LN1B, XL_QKVW, XL_QKVB, XL_PROJW, XL_PROJB, XL_LN2W, XL_LN2B, XL_FCW, XL_FCB,
       XL_FCPROJW, XL_FCPROJB, XL__N };

struct xformer_cuda_stage {
    struct xformer_dims d;
    int first, n, is_first, is_last;
    size_t nparams;
    float *params, *grads, *m, *v; /* device */
    size_t off[XFORMER_NTENSORS];  /* first-layer / non-layer offsets, from the CPU stage */
    size_t layer_numel;
    size_t loff[XL__N];
    bool matrix[XFORMER_NTENSORS];
    float loss_scale;
};

/* The blocks of exec/xformer_cpu.c's handle, on the device: kept, enc, one block per layer,
 * head, and bnd (the input of layer k) for a selective CFW of the first k layers. */
struct xformer_cuda_act {
    struct xformer_cuda_stage *s;
    int B, T;
    int k;       /* layers its CFW checkpointed: 0 (FW), n (the whole stage) or 1..n-1 */
    int full;    /* holds every activation backward needs */
    void *kept;  /* device: input (ints or floats), then targets (ints) */
    float *enc;  /* device: the embedding output (first stage) */
    float **layer; /* [n] host array of device blocks, NULL while not held */
    float *head; /* device: lnf, mean, rstd, probs, losses (last stage) */
    float *bnd;  /* device: selective CFW, the input of layer k */
    float loss;
};

struct xc_layer {
    float *ln1, *ln1_mean, *ln1_rstd, *qkv, *att, *atty, *res2, *ln2, *ln2_mean, *ln2_rstd, *fch,
        *fch_gelu, *res3;
};

/* The layout's sizes (model/xformer_layout.h), as the CPU model has them. */
static size_t xc_layer_floats(const struct xformer_dims *d, size_t B, size_t T)
{
    return xl_layer_floats(B, T, (size_t)d->channels, (size_t)d->heads, (size_t)d->ffn);
}

static size_t xc_head_floats(const struct xformer_dims *d, size_t B, size_t T)
{
    return xl_head_floats(B, T, (size_t)d->channels, (size_t)d->vocab);
}

static float *xc_take(float **p, size_t n)
{
    float *r = *p;
    *p += n;
    return r;
}

/* A block without res3 (the last layer of a selective recompute) leaves la->res3 NULL. */
static void xc_layer_point(struct xc_layer *la, float **p, const struct xformer_dims *d, int B,
                           int T, bool with_res3)
{
    size_t N = (size_t)B * T, C = (size_t)d->channels, F = (size_t)d->ffn;
    la->ln1 = xc_take(p, N * C);
    la->ln1_mean = xc_take(p, N);
    la->ln1_rstd = xc_take(p, N);
    la->qkv = xc_take(p, 3 * N * C);
    la->att = xc_take(p, (size_t)B * d->heads * T * T);
    la->atty = xc_take(p, N * C);
    la->res2 = xc_take(p, N * C);
    la->ln2 = xc_take(p, N * C);
    la->ln2_mean = xc_take(p, N);
    la->ln2_rstd = xc_take(p, N);
    la->fch = xc_take(p, N * F);
    la->fch_gelu = xc_take(p, N * F);
    la->res3 = with_res3 ? xc_take(p, N * C) : NULL;
}

extern "C" int xformer_cuda_stage_create(const struct xformer_dims *d, int first, int n,
                                         uint64_t seed, struct xformer_cuda_stage **out,
                                         struct mt_err *e)
{
    *out = NULL;
    /* the CUDA twin has the GPT block's kernels only; the LLaMA block runs on the CPU model */
    if (d->block != XFORMER_BLOCK_GPT)
        return err_set(e, MT_EUNSUPPORTED,
                       "CUDA stage: the CUDA backend implements the GPT block only; the LLaMA "
                       "block (RMSNorm, SwiGLU, RoPE, GQA) runs on the CPU backend");
    if (!xc_ready)
        return err_set(e, MT_EDEVICE, "CUDA stage: xformer_cuda_init was not called");
    struct xformer_stage *cpu = NULL;
    TRY(xformer_stage_create(d, first, n, seed, &cpu, e));
    struct xformer_cuda_stage *s = (struct xformer_cuda_stage *)calloc(1, sizeof *s);
    s->d = *d;
    s->first = first;
    s->n = n;
    s->is_first = xformer_stage_is_first(cpu);
    s->is_last = xformer_stage_is_last(cpu);
    s->nparams = xformer_stage_nparams(cpu);
    s->loss_scale = 1.0f;
    const float *base = xformer_stage_params(cpu);
    for (int t = 0; t < XFORMER_NTENSORS; t++) {
        bool layer = t >= XFORMER_LN1W && t <= XFORMER_FCPROJB;
        struct xformer_view v;
        if (xformer_stage_tensor(cpu, (enum xformer_tensor)t, layer ? first : -1, &v, NULL) ==
            MT_OK)
            s->off[t] = (size_t)(v.param - base);
        s->matrix[t] = t == XFORMER_WTE || t == XFORMER_WPE || t == XFORMER_QKVW ||
                       t == XFORMER_ATTPROJW || t == XFORMER_FCW || t == XFORMER_FCPROJW ||
                       t == XFORMER_HEADW;
    }
    for (int k = 0; k < XL__N; k++)
        s->loff[k] = s->off[XFORMER_LN1W + k] - s->off[XFORMER_LN1W];
    struct xformer_view v0, v1;
    if (n >= 2 && xformer_stage_tensor(cpu, XFORMER_LN1W, first, &v0, NULL) == MT_OK &&
        xformer_stage_tensor(cpu, XFORMER_LN1W, first + 1, &v1, NULL) == MT_OK)
        s->layer_numel = (size_t)(v1.param - v0.param);
    else
        s->layer_numel = s->loff[XL_FCPROJB] + (size_t)d->channels;
    size_t bytes = s->nparams * sizeof(float);
    s->params = (float *)xformer_cuda_alloc(bytes);
    s->grads = (float *)xformer_cuda_alloc(bytes);
    s->m = (float *)xformer_cuda_alloc(bytes);
    s->v = (float *)xformer_cuda_alloc(bytes);
    int rc = xc_oom_check(e);
    if (rc == MT_OK)
        rc = xformer_cuda_copy(s->params, base, bytes, 1, e);
    xformer_stage_free(cpu);
    if (rc == MT_OK) {
        cudaMemsetAsync(s->grads, 0, bytes, xc_stream);
        cudaMemsetAsync(s->m, 0, bytes, xc_stream);
        cudaMemsetAsync(s->v, 0, bytes, xc_stream);
        rc = xformer_cuda_sync(e);
    }
    if (rc != MT_OK) {
        xformer_cuda_stage_free(s);
        return rc;
    }
    *out = s;
    return MT_OK;
}

extern "C" void xformer_cuda_stage_free(struct xformer_cuda_stage *s)
{
    if (s == NULL)
        return;
    xformer_cuda_free(s->params);
    xformer_cuda_free(s->grads);
    xformer_cuda_free(s->m);
    xformer_cuda_free(s->v);
    free(s);
}

extern "C" size_t xformer_cuda_stage_nparams(const struct xformer_cuda_stage *s)
{
    return s->nparams;
}

extern "C" float *xformer_cuda_stage_grads(struct xformer_cuda_stage *s)
{
    return s->grads;
}

extern "C" int xformer_cuda_stage_read(struct xformer_cuda_stage *s, int grads, float *host,
                                       struct mt_err *e)
{
    return xformer_cuda_copy(host, grads ? s->grads : s->params, s->nparams * sizeof(float), 0, e);
}

extern "C" float *xformer_cuda_stage_params(struct xformer_cuda_stage *s)
{
    return s->params;
}

extern "C" float *xformer_cuda_stage_swap_params(struct xformer_cuda_stage *s, float *params)
{
    float *old = s->params;
    s->params = params;
    return old;
}

extern "C" int xformer_cuda_extrapolate(float *out, const float *w, const float *v, float c,
                                        size_t n, struct mt_err *e)
{
    TRY(xc_oom_check(e)); /* a buffer handed out earlier may be missing */
    if (n == 0)
        return MT_OK;
    k_extrapolate<<<xc_blocks(n, 256), 256, 0, xc_stream>>>(out, w, v, c, n);
    CUDA_TRY(e, cudaGetLastError());
    return MT_OK;
}

extern "C" int xformer_cuda_ema_delta(float *v, const float *w, const float *w_old, float g,
                                      size_t n, struct mt_err *e)
{
    TRY(xc_oom_check(e)); /* a buffer handed out earlier may be missing */
    if (n == 0)
        return MT_OK;
    k_ema_delta<<<xc_blocks(n, 256), 256, 0, xc_stream>>>(v, w, w_old, g, n);
    CUDA_TRY(e, cudaGetLastError());
    return MT_OK;
}

extern "C" void xformer_cuda_stage_zero_grad(struct xformer_cuda_stage *s)
{
    cudaMemsetAsync(s->grads, 0, s->nparams * sizeof(float), xc_stream);
}

extern "C" void xformer_cuda_stage_set_loss_scale(struct xformer_cuda_stage *s, float scale)
{
    s->loss_scale = scale;
}

extern "C" int xformer_cuda_stage_adamw_step(struct xformer_cuda_stage *s, float lr, float beta1,
                                             float beta2, float eps, float wd, int t,
                                             struct mt_err *e)
{
    if (t < 1)
        return err_set(e, MT_EINVAL, "adamw: step %d, must be >= 1", t);
    float c1 = 1.0f - powf(beta1, (float)t), c2 = 1.0f - powf(beta2, (float)t);
    /* tensor by tensor, weight decay on the matrices only (as exec/xformer_cpu.c) */
    for (int k = 0; k < XFORMER_NTENSORS; k++) {
        bool layer = k >= XFORMER_LN1W && k <= XFORMER_FCPROJB;
        bool held = layer || (k <= XFORMER_WPE ? s->is_first : s->is_last);
        if (!held)
            continue;
        size_t numel;
        size_t C = (size_t)s->d.channels, F = (size_t)s->d.ffn, V = (size_t)s->d.vocab;
        switch (k) {
        case XFORMER_WTE: case XFORMER_HEADW: numel = V * C; break;
        case XFORMER_WPE: numel = (size_t)s->d.max_seq * C; break;
        case XFORMER_QKVW: numel = 3 * C * C; break;
        case XFORMER_QKVB: numel = 3 * C; break;
        case XFORMER_ATTPROJW: numel = C * C; break;
        case XFORMER_FCW: case XFORMER_FCPROJW: numel = F * C; break;
        case XFORMER_FCB: numel = F; break;
        default: numel = C; break;
        }
        for (int l = 0; l < (layer ? s->n : 1); l++) {
            size_t off = s->off[k] + (layer ? (size_t)l * s->layer_numel : 0);
            k_adamw<<<xc_blocks(numel, 256), 256, 0, xc_stream>>>(
                s->params + off, s->grads + off, s->m + off, s->v + off, numel, lr, beta1, beta2,
                eps, s->matrix[k] ? wd : 0.0f, c1, c2);
        }
    }
    CUDA_TRY(e, cudaGetLastError());
    return MT_OK;
}

static int xc_layer_fw(const struct xc_layer *la, const float *x, const float *lp,
                       const struct xformer_cuda_stage *s, int B, int T, struct mt_err *e)
{
    const struct xformer_dims *d = &s->d;
    int N = B * T, C = d->channels, F = d->ffn;
    const size_t *o = s->loff;
    xc_layernorm_fw(la->ln1, la->ln1_mean, la->ln1_rstd, x, lp + o[XL_LN1W], lp + o[XL_LN1B], N, C);
    TRY(xc_matmul_fw(la->qkv, la->ln1, lp + o[XL_QKVW], lp + o[XL_QKVB], N, C, 3 * C, e));
    TRY(xc_attention_fw(la->atty, la->att, la->qkv, B, T, C, d->heads, e));
    TRY(xc_matmul_fw(la->res2, la->atty, lp + o[XL_PROJW], lp + o[XL_PROJB], N, C, C, e));
    k_add<<<xc_blocks((size_t)N * C, 256), 256, 0, xc_stream>>>(la->res2, x, (size_t)N * C);
    xc_layernorm_fw(la->ln2, la->ln2_mean, la->ln2_rstd, la->res2, lp + o[XL_LN2W],
                    lp + o[XL_LN2B], N, C);
    TRY(xc_matmul_fw(la->fch, la->ln2, lp + o[XL_FCW], lp + o[XL_FCB], N, C, F, e));
    k_gelu_fw<<<xc_blocks((size_t)N * F, 256), 256, 0, xc_stream>>>(la->fch_gelu, la->fch,
                                                                    (size_t)N * F);
    TRY(xc_matmul_fw(la->res3, la->fch_gelu, lp + o[XL_FCPROJW], lp + o[XL_FCPROJB], N, F, C, e));
    k_add<<<xc_blocks((size_t)N * C, 256), 256, 0, xc_stream>>>(la->res3, la->res2, (size_t)N * C);
    return MT_OK;
}

static const float *xc_act_in(const struct xformer_cuda_act *a)
{
    return (const float *)a->kept;
}

static const int *xc_act_targets(const struct xformer_cuda_act *a)
{
    size_t N = (size_t)a->B * a->T;
    return (const int *)((const char *)a->kept +
                         (a->s->is_first ? N * sizeof(int) : N * (size_t)a->s->d.channels * 4));
}

static const float *xc_layer_params(const struct xformer_cuda_stage *s, const float *base, int l)
{
    return base + s->off[XFORMER_LN1W] + (size_t)l * s->layer_numel;
}

static void xc_act_layer(const struct xformer_cuda_act *a, int l, struct xc_layer *la)
{
    float *p = a->layer[l];
    bool short_block = a->bnd != NULL && l == a->k - 1;
    xc_layer_point(la, &p, &a->s->d, a->B, a->T, !short_block);
    if (short_block)
        la->res3 = a->bnd;
}

static const float *xc_act_layer_input(const struct xformer_cuda_act *a, int l)
{
    if (l == 0)
        return a->s->is_first ? a->enc : xc_act_in(a);
    if (a->bnd != NULL && l == a->k)
        return a->bnd;
    struct xc_layer prev;
    xc_act_layer(a, l - 1, &prev);
    return prev.res3;
}

/* The blocks of layers [from, to), in order, as exec/xformer_cpu.c allocates them; an error
 * when the device refused one (the blocks it did give stay with a, freed with it). */
static int xc_act_alloc(struct xformer_cuda_act *a, int from, int to, struct mt_err *e)
{
    const struct xformer_cuda_stage *s = a->s;
    size_t NC = (size_t)a->B * a->T * s->d.channels;
    size_t lf = xc_layer_floats(&s->d, a->B, a->T);
    if (from == 0 && s->is_first)
        a->enc = (float *)xformer_cuda_alloc(NC * sizeof(float));
    for (int l = from; l < to; l++)
        a->layer[l] = (float *)xformer_cuda_alloc(
            (lf - (a->bnd != NULL && l == a->k - 1 ? NC : 0)) * sizeof(float));
    if (to == s->n && s->is_last)
        a->head = (float *)xformer_cuda_alloc(xc_head_floats(&s->d, a->B, a->T) * sizeof(float));
    return xc_oom_check(e);
}

static void xc_encode(const struct xformer_cuda_act *a, float *enc)
{
    const struct xformer_cuda_stage *s = a->s;
    size_t NC = (size_t)a->B * a->T * s->d.channels;
    k_encoder_fw<<<xc_blocks(NC, 256), 256, 0, xc_stream>>>(
        enc, (const int *)a->kept, s->params + s->off[XFORMER_WTE],
        s->params + s->off[XFORMER_WPE], a->T, s->d.channels, NC);
}

/* The head on the last layer's output x, its activations in `head`: sets a->loss. */
static int xc_run_head(struct xformer_cuda_act *a, const float *x, float *head, struct mt_err *e)
{
    struct xformer_cuda_stage *s = a->s;
    const struct xformer_dims *d = &s->d;
    int C = d->channels, N = a->B * a->T;
    float *p = head;
    float *lnf = xc_take(&p, (size_t)N * C), *mean = xc_take(&p, N), *rstd = xc_take(&p, N);
    float *probs = xc_take(&p, (size_t)N * d->vocab), *losses = xc_take(&p, N);
    xc_layernorm_fw(lnf, mean, rstd, x, s->params + s->off[XFORMER_LNFW],
                    s->params + s->off[XFORMER_LNFB], N, C);
    TRY(xc_matmul_fw(probs, lnf, s->params + s->off[XFORMER_HEADW], NULL, N, C, d->vocab, e));
    k_crossentropy_fw<<<xc_blocks((size_t)N * 32, 256), 256, 0, xc_stream>>>(
        probs, losses, xc_act_targets(a), N, d->vocab);
    float *host = (float *)malloc((size_t)N * sizeof(float));
    int rc = xformer_cuda_copy(host, losses, (size_t)N * sizeof(float), 0, e);
    double sum = 0.0;
    for (int r = 0; rc == MT_OK && r < N; r++)
        sum += host[r];
    free(host);
    a->loss = (float)(sum / N);
    return rc;
}

/* Layers [from, to) into their blocks, then the head (or out_hidden) when to is n. */
static int xc_act_run(struct xformer_cuda_act *a, int from, int to, float *out_hidden,
                      struct mt_err *e)
{
    struct xformer_cuda_stage *s = a->s;
    int B = a->B, T = a->T, C = s->d.channels;
    if (from == 0 && s->is_first)
        xc_encode(a, a->enc);
    for (int l = from; l < to; l++) {
        struct xc_layer la;
        xc_act_layer(a, l, &la);
        TRY(xc_layer_fw(&la, xc_act_layer_input(a, l), xc_layer_params(s, s->params, l), s, B, T,
                        e));
    }
    if (to < s->n)
        return xformer_cuda_sync(e);
    const float *x = xc_act_layer_input(a, s->n);
    if (s->is_last)
        return xc_run_head(a, x, a->head, e);
    if (out_hidden)
        CUDA_TRY(e, cudaMemcpyAsync(out_hidden, x, (size_t)B * T * C * sizeof(float),
                                    cudaMemcpyDeviceToDevice, xc_stream));
    return xformer_cuda_sync(e);
}

/* Layers [0, to) through `scratch` ([enc] and one layer); residual streams alternate between
 * the scratch layer's res3 and `spare` (if not NULL), layer to - 1 writing the spare. *out
 * receives the output of layer to - 1. */
static int xc_run_scratch(struct xformer_cuda_act *a, float *scratch, float *spare, int to,
                          const float **out, struct mt_err *e)
{
    struct xformer_cuda_stage *s = a->s;
    int B = a->B, T = a->T;
    float *p = scratch;
    const float *x = xc_act_in(a);
    if (s->is_first) {
        float *enc = xc_take(&p, (size_t)B * T * s->d.channels);
        xc_encode(a, enc);
        x = enc;
    }
    struct xc_layer la0;
    xc_layer_point(&la0, &p, &s->d, B, T, true);
    float *chunk_res3 = la0.res3;
    for (int l = 0; l < to; l++) {
        struct xc_layer la = la0;
        la.res3 = spare != NULL && (to - 1 - l) % 2 == 0 ? spare : chunk_res3;
        TRY(xc_layer_fw(&la, x, xc_layer_params(s, s->params, l), s, B, T, e));
        x = la.res3;
    }
    *out = x;
    return MT_OK;
}

extern "C" void xformer_cuda_act_free(struct xformer_cuda_act *a)
{
    if (a == NULL)
        return;
    xformer_cuda_free(a->head);
    for (int l = a->s->n - 1; l >= 0; l--)
        xformer_cuda_free(a->layer[l]);
    xformer_cuda_free(a->enc);
    xformer_cuda_free(a->bnd);
    xformer_cuda_free(a->kept);
    free(a->layer);
    free(a);
}

extern "C" int xformer_cuda_act_nblocks(const struct xformer_cuda_act *a)
{
    return a->s->n + 4;
}

extern "C" void xformer_cuda_act_blocks(struct xformer_cuda_act *a, void ***slots)
{
    int at = 0;
    slots[at++] = &a->kept;
    slots[at++] = (void **)&a->enc;
    for (int l = 0; l < a->s->n; l++)
        slots[at++] = (void **)&a->layer[l];
    slots[at++] = (void **)&a->head;
    slots[at++] = (void **)&a->bnd;
}

extern "C" size_t xformer_cuda_block_bytes(const void *p)
{
    for (size_t i = 0; i < xc_nlive; i++)
        if (xc_live[i].p == p)
            return xc_live[i].bytes;
    return 0;
}

extern "C" void *xformer_cuda_stream(void)
{
    return (void *)xc_stream;
}

extern "C" int xformer_cuda_act_is_full(const struct xformer_cuda_act *a)
{
    return a->full;
}

extern "C" int xformer_cuda_forward(struct xformer_cuda_stage *s, const int *tokens,
                                    const float *in_hidden, const int *targets, int B, int T,
                                    enum xformer_keep keep, int ckpt_layers, float *out_hidden,
                                    float *out_loss, struct xformer_cuda_act **out_act,
                                    struct mt_err *e)
{
    TRY(xc_oom_check(e)); /* a buffer handed out earlier may be missing */
    *out_act = NULL;
    const struct xformer_dims *d = &s->d;
    if (B < 1 || T < 1 || T > d->max_seq)
        return err_set(e, MT_EINVAL, "forward: micro-batch %d x %d (need B >= 1, 1 <= T <= %d)", B,
                       T, d->max_seq);
    if (ckpt_layers < 0)
        return err_set(e, MT_EINVAL, "forward: %d layers to checkpoint", ckpt_layers);
    if (s->is_first ? tokens == NULL : in_hidden == NULL)
        return err_set(e, MT_EINVAL, "forward: stage [%d, %d) takes %s", s->first, s->first + s->n,
                       s->is_first ? "tokens" : "a hidden state");
    if (s->is_last ? (targets == NULL || out_loss == NULL) : out_hidden == NULL)
        return err_set(e, MT_EINVAL, "forward: stage [%d, %d) needs %s", s->first, s->first + s->n,
                       s->is_last ? "targets and a loss output" : "an output buffer");
    size_t N = (size_t)B * T, NC = N * (size_t)d->channels;
    for (size_t i = 0; i < N; i++)
        if ((s->is_first && (tokens[i] < 0 || tokens[i] >= d->vocab)) ||
            (s->is_last && (targets[i] < 0 || targets[i] >= d->vocab)))
            return err_set(e, MT_EINVAL, "forward: token %zu outside the vocabulary", i);
    struct xformer_cuda_act *a = (struct xformer_cuda_act *)calloc(1, sizeof *a);
    a->s = s;
    a->B = B;
    a->T = T;
    a->layer = (float **)calloc((size_t)s->n, sizeof *a->layer);
    a->k = keep == XFORMER_KEEP_FULL ? 0 : ckpt_layers > 0 && ckpt_layers < s->n ? ckpt_layers
                                                                              : s->n;
    size_t in_bytes = s->is_first ? N * sizeof(int) : NC * sizeof(float);
    a->kept = xformer_cuda_alloc(xl_kept_bytes(s->is_first, s->is_last, (size_t)B, (size_t)T,
                                               (size_t)d->channels));
    int rc = xc_oom_check(e);
    if (rc == MT_OK)
        rc = s->is_first
                 ? xformer_cuda_copy(a->kept, tokens, in_bytes, 1, e)
                 : (cudaMemcpyAsync(a->kept, in_hidden, in_bytes, cudaMemcpyDeviceToDevice,
                                    xc_stream) == cudaSuccess
                        ? MT_OK
                        : err_set(e, MT_EDEVICE, "forward: copy of the input failed"));
    if (rc == MT_OK && s->is_last)
        rc = xformer_cuda_copy((char *)a->kept + in_bytes, targets, N * sizeof(int), 1, e);
    size_t E = s->is_first ? NC : 0, L = xc_layer_floats(d, B, T);
    if (rc != MT_OK) {
    } else if (a->k == 0) {
        rc = xc_act_alloc(a, 0, s->n, e);
        if (rc == MT_OK)
            rc = xc_act_run(a, 0, s->n, out_hidden, e);
        a->full = 1;
    } else if (a->k == s->n) {
        /* [enc] [one layer] [spare when n >= 2] [head], as the CPU's CFW scratch */
        size_t spare = s->n >= 2 ? NC : 0;
        float *scratch = (float *)xformer_cuda_alloc(
            xl_cfw_scratch_floats(s->is_first, s->is_last, (size_t)s->n, (size_t)B, (size_t)T,
                                  (size_t)d->channels, (size_t)d->heads, (size_t)d->ffn,
                                  (size_t)d->vocab) *
            sizeof(float));
        const float *x = NULL;
        rc = xc_oom_check(e);
        if (rc == MT_OK)
            rc = xc_run_scratch(a, scratch, spare ? scratch + E + L : NULL, s->n, &x, e);
        if (rc == MT_OK && s->is_last)
            rc = xc_run_head(a, x, scratch + E + L + spare, e);
        else if (rc == MT_OK)
            rc = cudaMemcpyAsync(out_hidden, x, NC * sizeof(float), cudaMemcpyDeviceToDevice,
                                 xc_stream) == cudaSuccess
                     ? xformer_cuda_sync(e)
                     : err_set(e, MT_EDEVICE, "forward: copy of the output failed");
        xformer_cuda_free(scratch);
    } else {
        /* selective: layers [0, k) through scratch into bnd, then [k, n) and the head kept */
        a->bnd = (float *)xformer_cuda_alloc(NC * sizeof(float));
        float *scratch = (float *)xformer_cuda_alloc((E + L) * sizeof(float));
        const float *x = NULL;
        rc = xc_oom_check(e);
        if (rc == MT_OK)
            rc = xc_run_scratch(a, scratch, a->bnd, a->k, &x, e);
        if (rc == MT_OK)
            rc = xformer_cuda_sync(e);
        xformer_cuda_free(scratch);
        if (rc == MT_OK) {
            rc = xc_act_alloc(a, a->k, s->n, e);
            if (rc == MT_OK)
                rc = xc_act_run(a, a->k, s->n, out_hidden, e);
        }
    }
    if (rc != MT_OK) {
        xformer_cuda_act_free(a);
        return rc;
    }
    if (s->is_last)
        *out_loss = a->loss;
    *out_act = a;
    return MT_OK;
}

extern "C" int xformer_cuda_recompute(struct xformer_cuda_act *a, struct mt_err *e)
{
    TRY(xc_oom_check(e)); /* a buffer handed out earlier may be missing */
    if (a->full)
        return err_set(e, MT_EINVAL, "recompute: micro-batch already holds full activations");
    int to = a->k == a->s->n ? a->s->n : a->k;
    TRY(xc_act_alloc(a, 0, to, e));
    TRY(xc_act_run(a, 0, to, NULL, e));
    a->full = 1;
    return MT_OK;
}

static int xc_backward_run(struct xformer_cuda_act **act, const float *dout, float *din, float *wk,
                           struct mt_err *e);

extern "C" int xformer_cuda_backward(struct xformer_cuda_act **act, const float *dout, float *din,
                                     struct mt_err *e)
{
    return xc_backward_run(act, dout, din, NULL, e);
}

/* What a B keeps for its W (the CPU model's struct xformer_wgrad, in device memory). */
struct xformer_cuda_wgrad {
    struct xformer_cuda_stage *s;
    int B, T;
    float *buf;
};

extern "C" void xformer_cuda_wgrad_free(struct xformer_cuda_wgrad *w)
{
    if (w == NULL)
        return;
    xformer_cuda_free(w->buf);
    free(w);
}

extern "C" int xformer_cuda_backward_input(struct xformer_cuda_act **act, const float *dout,
                                           float *din, struct xformer_cuda_wgrad **out_w,
                                           struct mt_err *e)
{
    struct xformer_cuda_act *a = *act;
    const struct xformer_dims *d = &a->s->d;
    *out_w = NULL;
    struct xformer_cuda_wgrad *w = (struct xformer_cuda_wgrad *)calloc(1, sizeof *w);
    if (w == NULL)
        return err_set(e, MT_ENOMEM, "backward_input: out of host memory");
    w->s = a->s;
    w->B = a->B;
    w->T = a->T;
    w->buf = (float *)xformer_cuda_alloc(
        xl_w_keep_floats(a->s->is_last, (size_t)a->s->n, (size_t)a->B, (size_t)a->T,
                         (size_t)d->channels, (size_t)d->ffn, (size_t)d->vocab) *
        sizeof(float));
    int rc = xc_oom_check(e);
    if (rc == MT_OK)
        rc = xc_backward_run(act, dout, din, w->buf, e);
    if (rc != MT_OK) {
        xformer_cuda_wgrad_free(w);
        return rc;
    }
    *out_w = w;
    return MT_OK;
}

extern "C" int xformer_cuda_backward_weight(struct xformer_cuda_wgrad **wg, struct mt_err *e)
{
    struct xformer_cuda_wgrad *w = *wg;
    struct xformer_cuda_stage *s = w->s;
    const struct xformer_dims *d = &s->d;
    int N = w->B * w->T, C = d->channels, F = d->ffn;
    const float *wk = w->buf;
    int rc = MT_OK;
    if (s->is_last) {
        rc = xc_matmul_bw_weight(s->grads + s->off[XFORMER_HEADW], NULL, wk + (size_t)N * C, wk, N,
                                 C, d->vocab, e);
        wk += (size_t)N * (C + d->vocab);
    }
    const size_t *o = s->loff;
    for (int l = s->n - 1; rc == MT_OK && l >= 0; l--) {
        float *gp = s->grads + s->off[XFORMER_LN1W] + (size_t)l * s->layer_numel;
        const struct {
            size_t w, b;
            int in, out;
        } g[4] = {{o[XL_FCPROJW], o[XL_FCPROJB], F, C},
                  {o[XL_FCW], o[XL_FCB], C, F},
                  {o[XL_PROJW], o[XL_PROJB], C, C},
                  {o[XL_QKVW], o[XL_QKVB], C, 3 * C}};
        for (int i = 0; rc == MT_OK && i < 4; i++) {
            rc = xc_matmul_bw_weight(gp + g[i].w, gp + g[i].b, wk + (size_t)N * g[i].in, wk, N,
                                     g[i].in, g[i].out, e);
            wk += (size_t)N * (g[i].in + g[i].out);
        }
    }
    if (rc == MT_OK)
        rc = xformer_cuda_sync(e);
    if (rc != MT_OK)
        return rc;
    xformer_cuda_wgrad_free(w);
    *wg = NULL;
    return MT_OK;
}

static int xc_backward_run(struct xformer_cuda_act **act, const float *dout, float *din, float *wk,
                           struct mt_err *e)
{
    TRY(xc_oom_check(e)); /* a buffer handed out earlier may be missing */
    struct xformer_cuda_act *a = *act;
    struct xformer_cuda_stage *s = a->s;
    const struct xformer_dims *d = &s->d;
    if (!a->full)
        return err_set(e, MT_EINVAL, "backward: micro-batch was checkpointed and not recomputed");
    if (s->is_last ? dout != NULL : dout == NULL)
        return err_set(e, MT_EINVAL, "backward: stage [%d, %d) %s an output gradient", s->first,
                       s->first + s->n, s->is_last ? "takes no" : "needs");
    if (!s->is_first && din == NULL)
        return err_set(e, MT_EINVAL, "backward: stage needs an input-gradient buffer");
    int B = a->B, T = a->T, C = d->channels, F = d->ffn, N = B * T;
    size_t NC = (size_t)N * C;
    /* the attention gradient of every head at once (the CPU model: one at a time) */
    size_t scratch_floats = xl_bw_scratch_floats((size_t)B, (size_t)T, (size_t)C, (size_t)F,
                                                 (size_t)d->heads);
    float *scratch = (float *)xformer_cuda_alloc(scratch_floats * sizeof(float));
    TRY(xc_oom_check(e));
    float *q = scratch;
    float *dres = xc_take(&q, NC), *dbuf = xc_take(&q, NC), *dqkv = xc_take(&q, 3 * NC);
    float *datt = xc_take(&q, (size_t)d->heads * T * T), *dgelu = xc_take(&q, (size_t)N * F);
    int rc = MT_OK;
    if (s->is_last) {
        float *p = a->head;
        float *lnf = xc_take(&p, NC), *mean = xc_take(&p, N), *rstd = xc_take(&p, N);
        float *probs = xc_take(&p, (size_t)N * d->vocab);
        cudaMemsetAsync(dres, 0, NC * sizeof(float), xc_stream);
        k_crossentropy_bw<<<xc_blocks((size_t)N * d->vocab, 256), 256, 0, xc_stream>>>(
            probs, xc_act_targets(a), s->loss_scale / (float)N, N, d->vocab);
        rc = xc_matmul_bw(dbuf, s->grads + s->off[XFORMER_HEADW], NULL, probs, lnf,
                          s->params + s->off[XFORMER_HEADW], N, C, d->vocab, wk ? &wk : NULL, e);
        xc_layernorm_bw(dres, s->grads + s->off[XFORMER_LNFW], s->grads + s->off[XFORMER_LNFB],
                        dbuf, xc_act_layer_input(a, s->n), s->params + s->off[XFORMER_LNFW], mean,
                        rstd, N, C);
    } else {
        cudaMemcpyAsync(dres, dout, NC * sizeof(float), cudaMemcpyDeviceToDevice, xc_stream);
    }
    const size_t *o = s->loff;
    for (int l = s->n - 1; rc == MT_OK && l >= 0; l--) {
        size_t lo = s->off[XFORMER_LN1W] + (size_t)l * s->layer_numel;
        const float *lp = s->params + lo;
        float *gp = s->grads + lo;
        struct xc_layer la;
        xc_act_layer(a, l, &la);
        const float *x = xc_act_layer_input(a, l);
        float **w = wk ? &wk : NULL;
        if ((rc = xc_matmul_bw(dgelu, gp + o[XL_FCPROJW], gp + o[XL_FCPROJB], dres, la.fch_gelu,
                               lp + o[XL_FCPROJW], N, F, C, w, e)) != MT_OK)
            break;
        k_gelu_bw<<<xc_blocks((size_t)N * F, 256), 256, 0, xc_stream>>>(dgelu, la.fch, dgelu,
                                                                        (size_t)N * F);
        if ((rc = xc_matmul_bw(dbuf, gp + o[XL_FCW], gp + o[XL_FCB], dgelu, la.ln2, lp + o[XL_FCW],
                               N, C, F, w, e)) != MT_OK)
            break;
        xc_layernorm_bw(dres, gp + o[XL_LN2W], gp + o[XL_LN2B], dbuf, la.res2, lp + o[XL_LN2W],
                        la.ln2_mean, la.ln2_rstd, N, C);
        if ((rc = xc_matmul_bw(dbuf, gp + o[XL_PROJW], gp + o[XL_PROJB], dres, la.atty,
                               lp + o[XL_PROJW], N, C, C, w, e)) != MT_OK)
            break;
        if ((rc = xc_attention_bw(dqkv, datt, dbuf, la.qkv, la.att, B, T, C, d->heads, e)) != MT_OK)
            break;
        if ((rc = xc_matmul_bw(dbuf, gp + o[XL_QKVW], gp + o[XL_QKVB], dqkv, la.ln1,
                               lp + o[XL_QKVW], N, C, 3 * C, w, e)) != MT_OK)
            break;
        xc_layernorm_bw(dres, gp + o[XL_LN1W], gp + o[XL_LN1B], dbuf, x, lp + o[XL_LN1W],
                        la.ln1_mean, la.ln1_rstd, N, C);
    }
    if (rc == MT_OK) {
        if (s->is_first)
            k_encoder_bw<<<xc_blocks(NC, 256), 256, 0, xc_stream>>>(
                s->grads + s->off[XFORMER_WTE], s->grads + s->off[XFORMER_WPE], dres,
                (const int *)a->kept, T, C, NC);
        else
            cudaMemcpyAsync(din, dres, NC * sizeof(float), cudaMemcpyDeviceToDevice, xc_stream);
        rc = xformer_cuda_sync(e);
    }
    xformer_cuda_free(scratch);
    if (rc != MT_OK)
        return rc;
    xformer_cuda_act_free(a);
    *act = NULL;
    return MT_OK;
}
