/* exec/copy_cuda.h: the CUDA backend's copy lanes for offload (exec/copy_cuda.cu): the copy_*
 * entries of backend_cuda_ops (exec/backend.h has their contract). Built with HAVE_CUDA. */
#ifndef MT_EXEC_COPY_CUDA_H
#define MT_EXEC_COPY_CUDA_H

#include <stdbool.h>
#include <stddef.h>

struct mt_err;

int copy_cuda_start(void *act, void **rec, struct mt_err *e);
int copy_cuda_test(void *rec, bool wait, bool *done, struct mt_err *e);
void copy_cuda_end(void *rec);
void copy_cuda_drop(void *rec);
void copy_cuda_close(void);
/* The most pinned host bytes the copies held at once since the start. */
size_t copy_cuda_host_peak(void);

#endif
