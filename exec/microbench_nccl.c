/* exec/microbench_nccl.c: NCCL collectives for `profile --micro --backend nccl` (built
 * --with-nccl; exec/microbench.h): one GPU a rank (the local rank's), NCCL bootstrapped over
 * MPI as nccl-tests does (rank 0's ncclUniqueId broadcast), each collective out of place on
 * its own stream, timed with CUDA events over the repetitions after a warm-up, the slowest
 * rank's time. Sizes and bus factors are nccl-tests'. Status: compiled here; run where GPUs
 * are lent. */
#include <config.h>

#include <cuda_runtime.h>
#include <math.h>
#include <mpi.h>
#include <nccl.h>
#include <stdio.h>

#include "exec/launch.h"
#include "model/microcal.h"
#include "util/err.h"

int microbench_nccl_collectives(double min_bytes, double max_bytes, double min_s,
                                struct microcal_builder *b, struct mt_err *e);

static ncclResult_t mbn_coll(enum op_coll coll, const void *send, void *recv, size_t count, int n,
                             ncclComm_t comm, cudaStream_t s)
{
    size_t per = count / (size_t)n;
    switch (coll) {
    case COLL_ALL_REDUCE: return ncclAllReduce(send, recv, count, ncclFloat, ncclSum, comm, s);
    case COLL_ALL_GATHER: return ncclAllGather(send, recv, per, ncclFloat, comm, s);
    case COLL_REDUCE_SCATTER: return ncclReduceScatter(send, recv, per, ncclFloat, ncclSum, comm, s);
    default: { /* all-to-all as nccl-tests' alltoall.cu: grouped sends and receives */
        ncclResult_t r = ncclGroupStart();
        for (int p = 0; p < n && r == ncclSuccess; p++) {
            r = ncclSend((const char *)send + p * per * sizeof(float), per, ncclFloat, p, comm, s);
            if (r == ncclSuccess)
                r = ncclRecv((char *)recv + p * per * sizeof(float), per, ncclFloat, p, comm, s);
        }
        ncclResult_t g = ncclGroupEnd();
        return r != ncclSuccess ? r : g;
    }
    }
}

/* Seconds of reps calls, the slowest rank's. */
static int mbn_time(enum op_coll coll, void *send, void *recv, size_t count, int n,
                    ncclComm_t comm, cudaStream_t s, int reps, double *secs, struct mt_err *e)
{
    cudaEvent_t a, z;
    if (cudaEventCreate(&a) != cudaSuccess || cudaEventCreate(&z) != cudaSuccess)
        return err_set(e, MT_EDEVICE, "cudaEventCreate failed");
    MPI_Barrier(MPI_COMM_WORLD);
    cudaEventRecord(a, s);
    for (int i = 0; i < reps; i++)
        if (mbn_coll(coll, send, recv, count, n, comm, s) != ncclSuccess)
            return err_set(e, MT_EDEVICE, "NCCL %s failed", op_coll_name(coll));
    cudaEventRecord(z, s);
    cudaEventSynchronize(z);
    float ms = 0;
    cudaEventElapsedTime(&ms, a, z);
    cudaEventDestroy(a);
    cudaEventDestroy(z);
    double t = ms * 1e-3;
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    *secs = t;
    return MT_OK;
}

int microbench_nccl_collectives(double min_bytes, double max_bytes, double min_s,
                                struct microcal_builder *b, struct mt_err *e)
{
    int rank, n, ndev = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0)
        return err_set(e, MT_EDEVICE, "rank %d: no CUDA device", rank);
    if (cudaSetDevice(launch_local_rank() % ndev) != cudaSuccess)
        return err_set(e, MT_EDEVICE, "rank %d: cudaSetDevice failed", rank);
    ncclUniqueId id;
    if (rank == 0 && ncclGetUniqueId(&id) != ncclSuccess)
        return err_set(e, MT_EDEVICE, "ncclGetUniqueId failed");
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    ncclComm_t comm;
    if (ncclCommInitRank(&comm, n, id, rank) != ncclSuccess)
        return err_set(e, MT_EDEVICE, "rank %d: ncclCommInitRank failed", rank);
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    size_t cap = (size_t)max_bytes + (size_t)n * sizeof(float);
    void *send = NULL, *recv = NULL;
    int rc = MT_OK;
    if (cudaMalloc(&send, cap) != cudaSuccess || cudaMalloc(&recv, cap) != cudaSuccess)
        rc = err_set(e, MT_EDEVICE, "rank %d: cudaMalloc of %zu bytes failed", rank, cap);
    static const enum op_coll colls[4] = {COLL_ALL_REDUCE, COLL_ALL_GATHER, COLL_REDUCE_SCATTER,
                                          COLL_ALL_TO_ALL};
    for (int ci = 0; ci < 4 && rc == MT_OK; ci++)
        for (double sz = min_bytes; sz <= max_bytes && rc == MT_OK; sz *= 4) {
            size_t count = (size_t)(sz / sizeof(float)) / (size_t)n * (size_t)n;
            if (count == 0)
                continue;
            double one, all;
            rc = mbn_time(colls[ci], send, recv, count, n, comm, s, 1, &one, e); /* warm-up */
            if (rc == MT_OK)
                rc = mbn_time(colls[ci], send, recv, count, n, comm, s, 1, &one, e);
            int reps = one > 0 ? (int)fmin(1000, fmax(2, ceil(min_s / one))) : 1000;
            if (rc == MT_OK)
                rc = mbn_time(colls[ci], send, recv, count, n, comm, s, reps, &all, e);
            if (rc != MT_OK)
                break;
            double size = (double)count * sizeof(float), per = all / reps;
            struct microcal_coll r = {colls[ci], LINK_NVLINK, n, size,
                                      size / per * 1e-9 * microcal_bus_factor(colls[ci], n)};
            microcal_add_coll(b, &r);
        }
    cudaFree(send);
    cudaFree(recv);
    cudaStreamDestroy(s);
    ncclCommDestroy(comm);
    return rc;
}
