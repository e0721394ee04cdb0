/* exec/microbench.c: the CPU micro-benchmarks and the MPI collectives (exec/microbench.h). */
#include <config.h>
#include "exec/microbench.h"

#include <cblas.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "exec/launch.h"
#include "model/microcal.h"
#include "model/profile.h"
#include "util/err.h"
#include "util/xalloc.h"

#ifdef HAVE_NCCL
int microbench_nccl_collectives(double min_bytes, double max_bytes, double min_s,
                                struct microcal_builder *b, struct mt_err *e);
#endif

static double mb_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void mb_progress(const struct microbench_progress *p, const char *what, int done,
                        int total)
{
    if (p != NULL && p->fn != NULL)
        p->fn(p->ctx, what, done, total);
}

int microbench_sgemm(const int *sizes, int nsizes, double min_s,
                     const struct microbench_progress *p, struct microcal_builder *b,
                     struct mt_err *e)
{
    int big = 0;
    for (int i = 0; i < nsizes; i++)
        big = sizes[i] > big ? sizes[i] : big;
    if (big <= 0)
        return err_set(e, MT_EINVAL, "no GEMM sizes");
    size_t cells = (size_t)big * (size_t)big;
    float *a = xmalloc(cells * sizeof *a), *bm = xmalloc(cells * sizeof *bm);
    float *c = xmalloc(cells * sizeof *c);
    for (size_t i = 0; i < cells; i++) {
        a[i] = (float)((i % 97) * 0.01);
        bm[i] = (float)((i % 89) * 0.01);
    }
    openblas_set_num_threads(1); /* a rank computes on one core (exec/backend_cpu.c) */
    int total = nsizes * nsizes * nsizes, done = 0;
    for (int im = 0; im < nsizes; im++)
        for (int in = 0; in < nsizes; in++)
            for (int ik = 0; ik < nsizes; ik++) {
                int m = sizes[im], n = sizes[in], k = sizes[ik];
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a, k, bm,
                            n, 0.0f, c, n); /* warm-up */
                long reps = 0;
                double t0 = mb_now(), dt;
                do {
                    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a, k,
                                bm, n, 0.0f, c, n);
                    reps++;
                    dt = mb_now() - t0;
                } while (dt < min_s || reps < 2);
                struct microcal_gemm g = {OP_FP32, m, n, k,
                                          2.0 * m * n * k * (double)reps / dt * 1e-12};
                microcal_add_gemm(b, &g);
                char what[64];
                snprintf(what, sizeof what, "sgemm %dx%dx%d", m, n, k);
                mb_progress(p, what, ++done, total);
            }
    free(a);
    free(bm);
    free(c);
    return MT_OK;
}

int microbench_copy(double min_bytes, double max_bytes, double min_s,
                    const struct microbench_progress *p, struct microcal_builder *b,
                    struct mt_err *e)
{
    if (!(min_bytes >= 1) || max_bytes < min_bytes)
        return err_set(e, MT_EINVAL, "copy sizes %g to %g", min_bytes, max_bytes);
    size_t cap = (size_t)max_bytes;
    char *src = xmalloc(cap), *dst = xmalloc(cap);
    memset(src, 1, cap);
    memset(dst, 2, cap); /* touched: no page faults in the timed copies */
    int total = 0, done = 0;
    for (double s = min_bytes; s <= max_bytes; s *= 4)
        total++;
    for (double s = min_bytes; s <= max_bytes; s *= 4) {
        size_t n = (size_t)s;
        memcpy(dst, src, n);
        long reps = 0;
        double t0 = mb_now(), dt;
        do {
            memcpy(dst, src, n);
            src[reps % n] ^= 1; /* the copies differ: none can be elided */
            reps++;
            dt = mb_now() - t0;
        } while (dt < min_s || reps < 2);
        struct microcal_hbm h = {2.0 * (double)n, 2.0 * (double)n * (double)reps / dt * 1e-9};
        microcal_add_hbm(b, &h);
        char what[64];
        snprintf(what, sizeof what, "copy %zu bytes", n);
        mb_progress(p, what, ++done, total);
    }
    free(src);
    free(dst);
    return MT_OK;
}

/* ---- MPI collectives -------------------------------------------------------------------- */
/* One collective of `size` bytes (nccl-tests' size) over n ranks; count: floats one rank holds. */
static int mb_mpi_coll(enum op_coll coll, float *send, float *recv, size_t count, int n)
{
    int per = (int)(count / (size_t)n);
    switch (coll) {
    case COLL_ALL_REDUCE:
        return MPI_Allreduce(send, recv, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    case COLL_ALL_GATHER: /* size = the gathered output */
        return MPI_Allgather(send, per, MPI_FLOAT, recv, per, MPI_FLOAT, MPI_COMM_WORLD);
    case COLL_REDUCE_SCATTER: /* size = the input */
        return MPI_Reduce_scatter_block(send, recv, per, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    default: /* all-to-all: size = each side */
        return MPI_Alltoall(send, per, MPI_FLOAT, recv, per, MPI_FLOAT, MPI_COMM_WORLD);
    }
}

/* Every collective at every size into b (identical on every rank: rank 0's clock decides
 * the repetitions and broadcasts them, so every rank runs as many). */
static int mb_mpi_sweep(double min_bytes, double max_bytes, double min_s, int rank, int n,
                        struct microcal_builder *b, struct mt_err *e)
{
    static const enum op_coll colls[4] = {COLL_ALL_REDUCE, COLL_ALL_GATHER, COLL_REDUCE_SCATTER,
                                          COLL_ALL_TO_ALL};
    size_t cap = (size_t)(max_bytes / sizeof(float)) + (size_t)n;
    float *send = xmalloc(cap * sizeof *send), *recv = xmalloc(cap * sizeof *recv);
    for (size_t i = 0; i < cap; i++)
        send[i] = recv[i] = (float)(rank + 1);
    int rc = MT_OK;
    for (int ci = 0; ci < 4 && rc == MT_OK; ci++)
        for (double s = min_bytes; s <= max_bytes && rc == MT_OK; s *= 4) {
            size_t count = (size_t)(s / sizeof(float)) / (size_t)n * (size_t)n;
            if (count == 0)
                continue;
            double size = (double)count * sizeof(float);
            if (mb_mpi_coll(colls[ci], send, recv, count, n) != MPI_SUCCESS) { /* warm-up */
                rc = err_set(e, MT_EDEVICE, "MPI %s of %.0f bytes failed",
                             op_coll_name(colls[ci]), size);
                break;
            }
            /* repetitions for min_s, from one timed call on rank 0 */
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            mb_mpi_coll(colls[ci], send, recv, count, n);
            double one = MPI_Wtime() - t0;
            MPI_Allreduce(MPI_IN_PLACE, &one, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            int iters = one > 0 ? (int)fmin(1000, fmax(2, ceil(min_s / one))) : 1000;
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = MPI_Wtime();
            for (int it = 0; it < iters; it++)
                mb_mpi_coll(colls[ci], send, recv, count, n);
            double dt = MPI_Wtime() - t0;
            MPI_Allreduce(MPI_IN_PLACE, &dt, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            double time_s = dt / iters;
            struct microcal_coll r = {colls[ci], LINK_NVLINK, n, size,
                                      size / time_s * 1e-9 * microcal_bus_factor(colls[ci], n)};
            microcal_add_coll(b, &r);
        }
    free(send);
    free(recv);
    return rc;
}

int microbench_mpi_rank(int *argc, char ***argv, const char *backend, double min_bytes,
                        double max_bytes, double min_s, const char *out, struct mt_err *e)
{
    int rank, size;
    TRY(launch_mpi_init(argc, argv, &rank, &size, e));
    struct microcal_builder *b = microcal_builder_new();
    int rc;
    if (size < 2)
        rc = err_set(e, MT_EINVAL, "the collectives need 2 ranks or more (mpirun -np %d)", size);
    else if (strcmp(backend, "nccl") == 0)
#ifdef HAVE_NCCL
        rc = microbench_nccl_collectives(min_bytes, max_bytes, min_s, b, e);
#else
        rc = err_set(e, MT_EUNSUPPORTED, "built without NCCL (./configure --with-cuda --with-nccl)");
#endif
    else
        rc = mb_mpi_sweep(min_bytes, max_bytes, min_s, rank, size, b, e);
    if (rc == MT_OK && rank == 0) {
        struct profile prof;
        memset(&prof, 0, sizeof prof);
        snprintf(prof.backend, sizeof prof.backend, "%s", backend);
        snprintf(prof.device, sizeof prof.device, "%d MPI ranks", size);
        rc = microcal_build(b, &prof.micro, NULL, e);
        if (rc == MT_OK)
            rc = profile_save(out, &prof, NULL, e);
    }
    microcal_builder_free(b);
    launch_mpi_finalize();
    return rc;
}

#ifndef HAVE_CUDA
int microbench_cuda(const int *sizes, int nsizes, double min_bytes, double max_bytes,
                    double min_s, const struct microbench_progress *p, struct microcal_builder *b,
                    char *device, int device_n, struct mt_err *e)
{
    (void)sizes, (void)nsizes, (void)min_bytes, (void)max_bytes, (void)min_s, (void)p, (void)b;
    (void)device, (void)device_n;
    return err_set(e, MT_EUNSUPPORTED, "built without CUDA (./configure --with-cuda)");
}

bool microbench_have_cuda(void)
{
    return false;
}
#endif
