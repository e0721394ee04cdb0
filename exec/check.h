/* exec/check.h: checked MPI / CUDA / NCCL calls (docs/design.md "Conventions": checked calls, after nccl-tests' CUDACHECK): a
 * failing call fills `e` with MT_EDEVICE, the rank, the host, file:line, the call's text and
 * the library's own message, then returns the code from the enclosing function. Only exec/
 * includes this header (it names mpi.h / cuda types only inside the macros' expansions). */
#ifndef MT_EXEC_CHECK_H
#define MT_EXEC_CHECK_H

struct mt_err;

/* Formats the message of a failed call; `what` is the library's error text. Returns
 * MT_EDEVICE. */
int check_fail(struct mt_err *e, const char *lib, const char *call, const char *what,
               const char *file, int line);
/* The MPI error string of rc (MPI_Error_string), for MPI_TRY. */
const char *check_mpi_string(int rc, char *buf, int n);

#define MPI_TRY(e, call)                                                                           \
    do {                                                                                           \
        int mpi_rc_ = (call);                                                                      \
        if (mpi_rc_ != 0) {                                                                        \
            char mpi_buf_[256];                                                                    \
            return check_fail((e), "MPI", #call, check_mpi_string(mpi_rc_, mpi_buf_, 256),         \
                              __FILE__, __LINE__);                                                 \
        }                                                                                          \
    } while (0)

/* CUDA_TRY / NCCL_TRY need cuda_runtime.h / nccl.h, so only the files that include those
 * headers can use them (exec/backend_cuda.c, exec/xformer_cuda.cu, exec/comm_nccl.c). */
#define CUDA_TRY(e, call)                                                                          \
    do {                                                                                           \
        cudaError_t cuda_rc_ = (call);                                                             \
        if (cuda_rc_ != cudaSuccess)                                                               \
            return check_fail((e), "CUDA", #call, cudaGetErrorString(cuda_rc_), __FILE__,          \
                              __LINE__);                                                           \
    } while (0)

#define CUBLAS_TRY(e, call)                                                                        \
    do {                                                                                           \
        cublasStatus_t cublas_rc_ = (call);                                                        \
        if (cublas_rc_ != CUBLAS_STATUS_SUCCESS)                                                   \
            return check_fail((e), "cuBLAS", #call, cublasGetStatusString(cublas_rc_), __FILE__,   \
                              __LINE__);                                                           \
    } while (0)

#define NCCL_TRY(e, call)                                                                          \
    do {                                                                                           \
        ncclResult_t nccl_rc_ = (call);                                                            \
        if (nccl_rc_ != ncclSuccess && nccl_rc_ != ncclInProgress)                                 \
            return check_fail((e), "NCCL", #call, ncclGetErrorString(nccl_rc_), __FILE__,          \
                              __LINE__);                                                           \
    } while (0)

#endif
