/* exec/copy_cuda.cu: the CUDA backend's copy lanes for offload (OF/RL; exec/backend.h copy_*,
 * exec/copy_cuda.h): one copy stream per direction, so each direction runs its copies one at a
 * time in the order they were started while the model's stream computes. OF waits on the
 * model's stream for the forward (an event), then copies every block of the handle into pinned
 * host buffers with cudaMemcpyAsync; its event says when the device blocks may go. RL takes
 * the device blocks at its start and copies back after its OF (the lane waits for the OF's
 * event); the model's stream waits for the RL's event before anything queued after it (the
 * backward), and the rank waits for it before the backward as well (exec/interp_offload.c).
 * Device blocks are freed by the rank's thread only (xformer_cuda_free).
 *
 * Pinned buffers come from a pool kept for the run (freed by copy_cuda_close): a page-locked
 * allocation is costly and is one of the operations between which commands of different
 * streams cannot run concurrently (CUDA Programming Guide, "Implicit Synchronization"), so
 * after the first step an OF allocates nothing. The host count (copy_cuda_host_peak) is of the
 * bytes the copies hold, not of the pool. Every buffer is taken before the first copy is
 * queued, so an error leaves nothing half queued; a record dropped on an error path waits for
 * its lanes before its buffers go back. The lanes keep the default priority: a stream's
 * priority orders only the compute kernels queued on it, not copies.
 * Status: compiled here; run where a GPU is lent (tests/gpu/test_offload_gpu.sh). */
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
    cudaEvent_t done; /* recorded after the copy on its lane; NULL if it could not be made */
};

static cudaStream_t cc_lane[2]; /* device-to-host, host-to-device */
static size_t cc_host_cur, cc_host_peak;

/* The pinned pool: every buffer cudaHostAlloc gave (cap bytes), and the bytes a copy holds
 * in it (0: free). */
struct cc_pinned {
    void *p;
    size_t cap, held;
    bool used;
};
static struct cc_pinned *cc_pool;
static size_t cc_npool, cc_cappool;

/* A pinned buffer for a copy of `bytes`: the smallest free one that holds them (sizes repeat
 * from step to step, or shrink with the sequence), else a new one. */
static int cc_pinned_take(size_t bytes, void **out, struct mt_err *e)
{
    struct cc_pinned *b = NULL;
    for (size_t i = 0; i < cc_npool; i++)
        if (!cc_pool[i].used && cc_pool[i].cap >= bytes && (b == NULL || cc_pool[i].cap < b->cap))
            b = &cc_pool[i];
    if (b == NULL) {
        void *p = NULL;
        size_t cap = bytes ? bytes : 1;
        CUDA_TRY(e, cudaHostAlloc(&p, cap, cudaHostAllocDefault));
        if (cc_npool == cc_cappool) {
            cc_cappool = cc_cappool ? 2 * cc_cappool : 64;
            cc_pool = (struct cc_pinned *)xreallocarray(cc_pool, cc_cappool, sizeof *cc_pool);
        }
        b = &cc_pool[cc_npool++];
        *b = (struct cc_pinned){p, cap, 0, false};
    }
    b->used = true;
    b->held = bytes;
    cc_host_cur += bytes;
    if (cc_host_cur > cc_host_peak)
        cc_host_peak = cc_host_cur;
    *out = b->p;
    return MT_OK;
}

/* Back to the pool; the caller knows no copy uses it any more. */
static void cc_pinned_give(void *p)
{
    for (size_t i = 0; i < cc_npool; i++)
        if (cc_pool[i].p == p && cc_pool[i].used) {
            cc_pool[i].used = false;
            cc_host_cur -= cc_pool[i].held;
            return;
        }
}

static int cc_lanes_open(struct mt_err *e)
{
    for (int i = 0; i < 2; i++)
        if (cc_lane[i] == NULL)
            CUDA_TRY(e, cudaStreamCreateWithFlags(&cc_lane[i], cudaStreamNonBlocking));
    return MT_OK;
}

/* The device-to-host lane waits for what the model's stream has queued (the forward). */
static int cc_after_model(struct mt_err *e)
{
    cudaEvent_t fw;
    CUDA_TRY(e, cudaEventCreateWithFlags(&fw, cudaEventDisableTiming));
    cudaError_t rc = cudaEventRecord(fw, (cudaStream_t)xformer_cuda_stream());
    if (rc == cudaSuccess)
        rc = cudaStreamWaitEvent(cc_lane[0], fw, 0);
    cudaEventDestroy(fw); /* released once the wait is done */
    CUDA_TRY(e, rc);
    return MT_OK;
}

static int cc_start_out(struct cc_rec *r, struct mt_err *e)
{
    for (int i = 0; i < r->n; i++) { /* every buffer first: nothing queued on an error */
        void *dev = *r->slots[i];
        if (dev == NULL)
            continue;
        r->bytes[i] = xformer_cuda_block_bytes(dev);
        TRY(cc_pinned_take(r->bytes[i], &r->host[i], e)); /* copy_drop gives them back */
    }
    TRY(cc_after_model(e));
    for (int i = 0; i < r->n; i++)
        if (r->host[i] != NULL)
            CUDA_TRY(e, cudaMemcpyAsync(r->host[i], *r->slots[i], r->bytes[i],
                                        cudaMemcpyDeviceToHost, cc_lane[0]));
    CUDA_TRY(e, cudaEventRecord(r->done, cc_lane[0]));
    return MT_OK;
}

static int cc_start_in(struct cc_rec *r, struct mt_err *e)
{
    for (int i = 0; i < r->n; i++) { /* every block first: an error gives them back */
        if (r->host[i] == NULL)
            continue;
        void *dev = xformer_cuda_alloc(r->bytes[i]);
        if (dev == NULL) {
            for (int j = 0; j < i; j++)
                if (r->host[j] != NULL) {
                    xformer_cuda_free(*r->slots[j]);
                    *r->slots[j] = NULL;
                }
            return err_set(e, MT_EINFEASIBLE,
                           "out of device memory: cudaMalloc of %zu bytes refused (RL)",
                           r->bytes[i]);
        }
        *r->slots[i] = dev;
    }
    /* after its OF on the device too, whatever the rank waited for */
    CUDA_TRY(e, cudaStreamWaitEvent(cc_lane[1], r->done, 0));
    for (int i = 0; i < r->n; i++)
        if (r->host[i] != NULL)
            CUDA_TRY(e, cudaMemcpyAsync(*r->slots[i], r->host[i], r->bytes[i],
                                        cudaMemcpyHostToDevice, cc_lane[1]));
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
        *rec = r; /* the caller's from here, even on an error (copy_drop frees it) */
        r->to_host = true;
        cudaEvent_t done = NULL;
        CUDA_TRY(e, cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
        r->done = done;
        return cc_start_out(r, e);
    }
    r->to_host = false;
    return cc_start_in(r, e);
}

extern "C" int copy_cuda_test(void *rec, bool wait, bool *done, struct mt_err *e)
{
    struct cc_rec *r = (struct cc_rec *)rec;
    *done = true;
    if (r->done == NULL) /* no event: nothing was queued */
        return MT_OK;
    if (wait)
        CUDA_TRY(e, cudaEventSynchronize(r->done));
    cudaError_t q = cudaEventQuery(r->done);
    if (q != cudaSuccess && q != cudaErrorNotReady)
        CUDA_TRY(e, q);
    *done = q == cudaSuccess;
    return MT_OK;
}

/* Frees r and gives its pinned buffers back; no copy of r may still be queued. */
static void cc_rec_free(struct cc_rec *r)
{
    for (int i = 0; i < r->n; i++)
        if (r->host[i] != NULL)
            cc_pinned_give(r->host[i]);
    if (r->done != NULL)
        cudaEventDestroy(r->done);
    free(r->bytes);
    free(r->host);
    free(r->slots);
    free(r);
}

extern "C" void copy_cuda_drop(void *rec)
{
    struct cc_rec *r = (struct cc_rec *)rec;
    if (r == NULL)
        return;
    /* an error path: a copy may have been queued after the last event it recorded */
    for (int i = 0; i < 2; i++)
        if (cc_lane[i] != NULL)
            cudaStreamSynchronize(cc_lane[i]);
    cc_rec_free(r);
}

extern "C" void copy_cuda_end(void *rec)
{
    struct cc_rec *r = (struct cc_rec *)rec;
    if (!r->to_host) {
        cc_rec_free(r); /* its event is done: nothing of it is queued */
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
            cudaStreamSynchronize(cc_lane[i]); /* the pool's buffers may still be read */
            cudaStreamDestroy(cc_lane[i]);
            cc_lane[i] = NULL;
        }
    for (size_t i = 0; i < cc_npool; i++)
        cudaFreeHost(cc_pool[i].p);
    free(cc_pool);
    cc_pool = NULL;
    cc_npool = cc_cappool = 0;
    cc_host_cur = 0;
}

extern "C" size_t copy_cuda_host_peak(void)
{
    return cc_host_peak;
}
