/* exec/copy_cuda.cu: the CUDA backend's copy lanes for offload (OF/RL; exec/backend.h copy_*,
 * exec/copy_cuda.h): one copy stream per direction, so each direction runs its copies one at a
 * time in the order they were started while the model's stream computes. OF waits on the
 * model's stream for the forward (an event), then copies every block of the handle into pinned
 * host buffers (cudaHostAlloc, counted here, apart from the device's count) with
 * cudaMemcpyAsync; its event says when the device blocks may go. RL takes the device blocks at
 * its start and copies back; the model's stream waits for its event before anything queued
 * after it (the backward), and the rank waits for it before the backward as well
 * (exec/interp_offload.c). Device blocks are freed by the rank's thread only (xformer_cuda_free).
 * Status: compiled here; not run (no GPU was lent when it was written). */
#include <config.h>

#include <cuda_runtime.h>
#include <stdbool.h>
#include <stdlib.h>

extern "C" {
#include "exec/check.h"
#include "exec/copy_cuda.h"
#include "exec/xformer.h"
#include "util/err.h"
#include "util/xalloc.h"
}

struct cc_rec {
    void ***slots; /* [n] the handle's block slots */
    void **host;   /* [n] pinned copies, NULL where the slot is empty */
    size_t *bytes; /* [n] */
    int n;
    bool to_host;     /* the copy started last: OF (true) or RL */
    cudaEvent_t done; /* recorded after the copy on its lane */
};

static cudaStream_t cc_lane[2]; /* device-to-host, host-to-device */
static size_t cc_host_cur, cc_host_peak;

static int cc_lanes_open(struct mt_err *e)
{
    for (int i = 0; i < 2; i++)
        if (cc_lane[i] == NULL)
            CUDA_TRY(e, cudaStreamCreateWithFlags(&cc_lane[i], cudaStreamNonBlocking));
    return MT_OK;
}

static int cc_start_out(struct cc_rec *r, struct mt_err *e)
{
    cudaStream_t model = (cudaStream_t)xformer_cuda_stream();
    cudaEvent_t fw;
    CUDA_TRY(e, cudaEventCreateWithFlags(&fw, cudaEventDisableTiming));
    CUDA_TRY(e, cudaEventRecord(fw, model)); /* after the forward that made the blocks */
    CUDA_TRY(e, cudaStreamWaitEvent(cc_lane[0], fw, 0));
    CUDA_TRY(e, cudaEventDestroy(fw)); /* released once the wait is done */
    for (int i = 0; i < r->n; i++) {
        void *dev = *r->slots[i];
        if (dev == NULL)
            continue;
        r->bytes[i] = xformer_cuda_block_bytes(dev);
        CUDA_TRY(e, cudaHostAlloc(&r->host[i], r->bytes[i] ? r->bytes[i] : 1,
                                  cudaHostAllocDefault));
        cc_host_cur += r->bytes[i];
        if (cc_host_cur > cc_host_peak)
            cc_host_peak = cc_host_cur;
        CUDA_TRY(e, cudaMemcpyAsync(r->host[i], dev, r->bytes[i], cudaMemcpyDeviceToHost,
                                    cc_lane[0]));
    }
    CUDA_TRY(e, cudaEventRecord(r->done, cc_lane[0]));
    return MT_OK;
}

static int cc_start_in(struct cc_rec *r, struct mt_err *e)
{
    for (int i = 0; i < r->n; i++) {
        if (r->host[i] == NULL)
            continue;
        void *dev = xformer_cuda_alloc(r->bytes[i]);
        if (dev == NULL)
            return err_set(e, MT_EINFEASIBLE,
                           "out of device memory: cudaMalloc of %zu bytes refused (RL)",
                           r->bytes[i]);
        *r->slots[i] = dev;
        CUDA_TRY(e, cudaMemcpyAsync(dev, r->host[i], r->bytes[i], cudaMemcpyHostToDevice,
                                    cc_lane[1]));
    }
    CUDA_TRY(e, cudaEventRecord(r->done, cc_lane[1]));
    /* whatever the model queues next (the backward) runs after the copy */
    CUDA_TRY(e, cudaStreamWaitEvent((cudaStream_t)xformer_cuda_stream(), r->done, 0));
    return MT_OK;
}

extern "C" int copy_cuda_start(void *act, void **rec, struct mt_err *e)
{
    TRY(cc_lanes_open(e));
    struct cc_rec *r = (struct cc_rec *)*rec;
    if (r == NULL) {
        struct xformer_cuda_act *a = (struct xformer_cuda_act *)act;
        r = (struct cc_rec *)xcalloc(1, sizeof *r);
        r->n = xformer_cuda_act_nblocks(a);
        r->slots = (void ***)xcalloc((size_t)r->n, sizeof *r->slots);
        r->host = (void **)xcalloc((size_t)r->n, sizeof *r->host);
        r->bytes = (size_t *)xcalloc((size_t)r->n, sizeof *r->bytes);
        xformer_cuda_act_blocks(a, r->slots);
        *rec = r;
        CUDA_TRY(e, cudaEventCreateWithFlags(&r->done, cudaEventDisableTiming));
        r->to_host = true;
        return cc_start_out(r, e);
    }
    r->to_host = false;
    return cc_start_in(r, e);
}

extern "C" int copy_cuda_test(void *rec, bool wait, bool *done, struct mt_err *e)
{
    struct cc_rec *r = (struct cc_rec *)rec;
    if (wait)
        CUDA_TRY(e, cudaEventSynchronize(r->done));
    cudaError_t q = cudaEventQuery(r->done);
    if (q != cudaSuccess && q != cudaErrorNotReady)
        CUDA_TRY(e, q);
    *done = q == cudaSuccess;
    return MT_OK;
}

extern "C" void copy_cuda_drop(void *rec)
{
    struct cc_rec *r = (struct cc_rec *)rec;
    if (r == NULL)
        return;
    for (int i = 0; i < r->n; i++)
        if (r->host[i] != NULL) {
            cudaFreeHost(r->host[i]);
            cc_host_cur -= r->bytes[i];
        }
    if (r->done != NULL)
        cudaEventDestroy(r->done);
    free(r->bytes);
    free(r->host);
    free(r->slots);
    free(r);
}

extern "C" void copy_cuda_end(void *rec)
{
    struct cc_rec *r = (struct cc_rec *)rec;
    if (!r->to_host) {
        copy_cuda_drop(r);
        return;
    }
    for (int i = 0; i < r->n; i++)
        if (r->host[i] != NULL) {
            xformer_cuda_free(*r->slots[i]);
            *r->slots[i] = NULL;
        }
}

extern "C" void copy_cuda_close(void)
{
    for (int i = 0; i < 2; i++)
        if (cc_lane[i] != NULL) {
            cudaStreamDestroy(cc_lane[i]);
            cc_lane[i] = NULL;
        }
}

extern "C" size_t copy_cuda_host_peak(void)
{
    return cc_host_peak;
}
