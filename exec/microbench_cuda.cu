/* exec/microbench_cuda.cu: the GPU micro-benchmarks of exec/microbench.h (built --with-cuda):
 * cuBLAS GEMMs over a grid of shapes in bf16 and fp32 and device-to-device copies, timed with
 * CUDA events over at least min_s seconds of back-to-back launches after one warm-up (the
 * way nccl-tests and cuBLAS's own samples time kernels). bf16 GEMMs accumulate in fp32
 * (CUBLAS_COMPUTE_32F), as Megatron-LM's and Transformer Engine's do; fp32 GEMMs run with
 * TF32 off (CUBLAS_COMPUTE_32F_PEDANTIC is not asked: CUBLAS_DEFAULT_MATH keeps fp32).
 * Status: compiled here; run where a GPU is lent. */
#include <config.h>

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <string.h>

extern "C" {
#include "exec/microbench.h"
#include "model/microcal.h"
#include "util/err.h"
}

#define MBC_CUDA(e, call)                                                                          \
    do {                                                                                           \
        cudaError_t r_ = (call);                                                                   \
        if (r_ != cudaSuccess)                                                                     \
            return err_set(e, MT_EDEVICE, "%s: %s", #call, cudaGetErrorString(r_));                \
    } while (0)

/* Seconds of `reps` launches of fn between two events. */
template <typename F> static int mbc_time(F fn, long reps, double *secs, struct mt_err *e)
{
    cudaEvent_t a, b;
    MBC_CUDA(e, cudaEventCreate(&a));
    MBC_CUDA(e, cudaEventCreate(&b));
    MBC_CUDA(e, cudaEventRecord(a));
    for (long i = 0; i < reps; i++)
        if (!fn())
            return err_set(e, MT_EDEVICE, "a launch failed");
    MBC_CUDA(e, cudaEventRecord(b));
    MBC_CUDA(e, cudaEventSynchronize(b));
    float ms = 0;
    MBC_CUDA(e, cudaEventElapsedTime(&ms, a, b));
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    *secs = ms * 1e-3;
    return MT_OK;
}

/* Repetitions for min_s from a first timed launch, then the rate's seconds per launch. */
template <typename F> static int mbc_measure(F fn, double min_s, double *per, struct mt_err *e)
{
    double one;
    if (!fn()) /* warm-up (cuBLAS picks its kernel) */
        return err_set(e, MT_EDEVICE, "a launch failed");
    TRY(mbc_time(fn, 1, &one, e));
    long reps = one > 0 ? (long)(min_s / one) + 1 : 1000;
    if (reps < 2)
        reps = 2;
    if (reps > 100000)
        reps = 100000;
    double all;
    TRY(mbc_time(fn, reps, &all, e));
    *per = all / (double)reps;
    return MT_OK;
}

static void mbc_progress(const struct microbench_progress *p, const char *what, int done,
                         int total)
{
    if (p != NULL && p->fn != NULL)
        p->fn(p->ctx, what, done, total);
}

static int mbc_gemms(cublasHandle_t h, const int *sizes, int nsizes, double min_s,
                     const struct microbench_progress *p, struct microcal_builder *b,
                     struct mt_err *e)
{
    int big = 0;
    for (int i = 0; i < nsizes; i++)
        big = sizes[i] > big ? sizes[i] : big;
    size_t cells = (size_t)big * (size_t)big;
    void *A, *B, *C;
    MBC_CUDA(e, cudaMalloc(&A, cells * sizeof(float)));
    MBC_CUDA(e, cudaMalloc(&B, cells * sizeof(float)));
    MBC_CUDA(e, cudaMalloc(&C, cells * sizeof(float)));
    MBC_CUDA(e, cudaMemset(A, 0x3c, cells * sizeof(float))); /* small finite values */
    MBC_CUDA(e, cudaMemset(B, 0x3c, cells * sizeof(float)));
    static const enum op_dtype dts[2] = {OP_BF16, OP_FP32};
    int total = 2 * nsizes * nsizes * nsizes, done = 0, rc = MT_OK;
    for (int d = 0; d < 2 && rc == MT_OK; d++) {
        cudaDataType_t t = dts[d] == OP_BF16 ? CUDA_R_16BF : CUDA_R_32F;
        for (int im = 0; im < nsizes && rc == MT_OK; im++)
            for (int in = 0; in < nsizes && rc == MT_OK; in++)
                for (int ik = 0; ik < nsizes && rc == MT_OK; ik++) {
                    int m = sizes[im], n = sizes[in], k = sizes[ik];
                    const float one = 1.0f, zero = 0.0f;
                    /* column-major C(m x n) = A(m x k) B(k x n) */
                    auto fn = [&]() {
                        return cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, A, t, m,
                                            B, t, k, &zero, C, t, m, CUBLAS_COMPUTE_32F,
                                            CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS;
                    };
                    double per;
                    rc = mbc_measure(fn, min_s, &per, e);
                    if (rc != MT_OK)
                        break;
                    struct microcal_gemm g = {dts[d], (double)m, (double)n, (double)k,
                                              2.0 * m * n * k / per * 1e-12};
                    microcal_add_gemm(b, &g);
                    char what[80];
                    snprintf(what, sizeof what, "cuBLAS %s %dx%dx%d", op_dtype_name(dts[d]), m, n,
                             k);
                    mbc_progress(p, what, ++done, total);
                }
    }
    cudaFree(A);
    cudaFree(B);
    cudaFree(C);
    return rc;
}

static int mbc_copies(double min_bytes, double max_bytes, double min_s,
                      const struct microbench_progress *p, struct microcal_builder *b,
                      struct mt_err *e)
{
    size_t cap = (size_t)max_bytes;
    void *src, *dst;
    MBC_CUDA(e, cudaMalloc(&src, cap));
    MBC_CUDA(e, cudaMalloc(&dst, cap));
    MBC_CUDA(e, cudaMemset(src, 1, cap));
    int rc = MT_OK, total = 0, done = 0;
    for (double s = min_bytes; s <= max_bytes; s *= 4)
        total++;
    for (double s = min_bytes; s <= max_bytes && rc == MT_OK; s *= 4) {
        size_t n = (size_t)s;
        auto fn = [&]() { return cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToDevice) == cudaSuccess; };
        double per;
        rc = mbc_measure(fn, min_s, &per, e);
        if (rc != MT_OK)
            break;
        struct microcal_hbm hb = {2.0 * (double)n, 2.0 * (double)n / per * 1e-9};
        microcal_add_hbm(b, &hb);
        char what[64];
        snprintf(what, sizeof what, "device copy %zu bytes", n);
        mbc_progress(p, what, ++done, total);
    }
    cudaFree(src);
    cudaFree(dst);
    return rc;
}

extern "C" int microbench_cuda(const int *sizes, int nsizes, double min_bytes, double max_bytes,
                               double min_s, const struct microbench_progress *p,
                               struct microcal_builder *b, char *device, int device_n,
                               struct mt_err *e)
{
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0)
        return err_set(e, MT_EDEVICE, "no CUDA device");
    MBC_CUDA(e, cudaSetDevice(0));
    cudaDeviceProp prop;
    MBC_CUDA(e, cudaGetDeviceProperties(&prop, 0));
    snprintf(device, (size_t)device_n, "%s", prop.name);
    cublasHandle_t h;
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS)
        return err_set(e, MT_EDEVICE, "cublasCreate failed");
    int rc = mbc_gemms(h, sizes, nsizes, min_s, p, b, e);
    cublasDestroy(h);
    if (rc == MT_OK)
        rc = mbc_copies(min_bytes, max_bytes, min_s, p, b, e);
    return rc;
}

extern "C" bool microbench_have_cuda(void)
{
    return true;
}
