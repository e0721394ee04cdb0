/* exec/microbench.h: the micro-benchmarks of `mario-tui profile --micro` (issue 37 item 6):
 * measured rates of one device into the rows of a micro-benchmark table (model/microcal.h).
 *   CPU (exec/microbench.c): OpenBLAS sgemm over a grid of shapes, one BLAS thread (as the
 *     executor's ranks compute: exec/backend_cpu.c), a memcpy sweep (STREAM's copy kernel:
 *     bytes read + written over the time), MPI collectives (a rank of an mpirun job: the
 *     out-of-place all-reduce, all-gather, reduce-scatter and all-to-all of nccl-tests, its
 *     sizes and bus factors, timed as nccl-tests times them: the slowest rank's time per
 *     iteration);
 *   GPU (exec/microbench_cuda.cu, --with-cuda): cuBLAS GEMMs in bf16 and fp32 and a
 *     device-to-device copy; NCCL collectives (exec/microbench_nccl.c, --with-nccl).
 * Shapes and sizes are the caller's; every figure is a rate over at least min_s seconds of
 * repetitions after one warm-up. */
#ifndef MT_EXEC_MICROBENCH_H
#define MT_EXEC_MICROBENCH_H

#include <stdbool.h>

struct microcal_builder;
struct mt_err;

/* Called after each measurement (may be NULL): what was measured, done of total. */
struct microbench_progress {
    void (*fn)(void *ctx, const char *what, int done, int total);
    void *ctx;
};

/* sgemm (m x k) . (k x n) for every (m, n, k) of sizes[0..n)^3, as fp32 GEMM rows. */
int microbench_sgemm(const int *sizes, int nsizes, double min_s,
                     const struct microbench_progress *p, struct microcal_builder *b,
                     struct mt_err *e);
/* memcpy of min_bytes, 4 x min_bytes, ... up to max_bytes (each a copy of that many bytes,
 * a row of 2 x bytes moved), as HBM rows. */
int microbench_copy(double min_bytes, double max_bytes, double min_s,
                    const struct microbench_progress *p, struct microcal_builder *b,
                    struct mt_err *e);

/* A rank of `mpirun -np N`: MPI_Init, the four collectives at min_bytes, 4 x min_bytes, ...
 * up to max_bytes (nccl-tests' size: what one rank holds), rank 0 writing the rows as a
 * calibration file (model/profile.h, the tables alone) at out, with link nvlink (ranks of
 * one host: the intra-node link; model/price.h gives it to groups inside a node);
 * backend "mpi" (CPU memory) or, built --with-nccl, "nccl" (one GPU a rank). */
int microbench_mpi_rank(int *argc, char ***argv, const char *backend, double min_bytes,
                        double max_bytes, double min_s, const char *out, struct mt_err *e);

/* ---- exec/microbench_cuda.cu (built --with-cuda; else MT_EUNSUPPORTED) ------------------ */
/* cuBLAS GEMMs on GPU 0: every (m, n, k) of sizes^3 in bf16 (fp32 accumulate) and in fp32
 * (cublasGemmEx, CUBLAS_COMPUTE_32F; the fp32 rows with TF32 off), and cudaMemcpy
 * device-to-device copies from min_bytes to max_bytes; *device gets the GPU's name. */
int microbench_cuda(const int *sizes, int nsizes, double min_bytes, double max_bytes,
                    double min_s, const struct microbench_progress *p, struct microcal_builder *b,
                    char *device, int device_n, struct mt_err *e);
/* Whether this build has the CUDA micro-benchmarks. */
bool microbench_have_cuda(void);

#endif
