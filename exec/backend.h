/* exec/backend.h: the compute side of the executor, one implementation per device kind
 * (a vtable per backend; docs/design.md "exec/"): the model stages of exec/xformer.h (FW / CFW /
 * RC / BW / OS of the paper's Table 3), the buffers that carry activations and gradients
 * between instructions, and the memory they hold. CPU: exec/backend_cpu.c (OpenBLAS);
 * CUDA: exec/backend_cuda.c + exec/xformer_cuda.cu (cuBLAS), built when configure finds it. */
#ifndef MT_EXEC_BACKEND_H
#define MT_EXEC_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "exec/xformer.h"

struct mt_err;

/* Stages and activation handles are opaque to the interpreter: `void *` made by the backend
 * that owns them. Buffers are in the backend's memory (host for CPU, device for CUDA);
 * token and target arrays are always host ints. The signatures are those of exec/xformer.h. */
struct backend_ops {
    const char *name;   /* "cpu", "cuda" */
    bool device_memory; /* buffers live on a GPU: MPI needs them staged through the host */
    /* Picks the device for this process (local_rank: the rank among those on this host) and
     * sets the process up (CPU: one OpenBLAS thread). */
    int (*open)(int local_rank, struct mt_err *e);
    void (*close)(void);
    int (*stage_create)(const struct xformer_dims *d, int first, int n, uint64_t seed, void **out,
                        struct mt_err *e);
    void (*stage_free)(void *stage);
    size_t (*stage_nparams)(void *stage);
    float *(*stage_grads)(void *stage); /* backend memory: what AR reduces */
    /* Copies n floats of the gradients / parameters to host memory (dumps, checks). */
    int (*stage_read)(void *stage, bool grads, float *host, struct mt_err *e);
    void (*stage_zero_grad)(void *stage);
    void (*stage_set_loss_scale)(void *stage, float scale);
    int (*stage_adamw)(void *stage, float lr, float beta1, float beta2, float eps, float wd, int t,
                       struct mt_err *e);
    /* ckpt_layers: with XFORMER_KEEP_CHECKPOINT, the stage's first ckpt_layers layers are
     * checkpointed (0 or >= n: all of them; exec/xformer.h). */
    int (*forward)(void *stage, const int *tokens, const float *in_hidden, const int *targets,
                   int B, int T, enum xformer_keep keep, int ckpt_layers, float *out_hidden,
                   float *out_loss, void **out_act, struct mt_err *e);
    /* Allocates its blocks in order (the embedding output on the first stage, one block per
     * recomputed layer, the head on the last stage): the online memory predictor of
     * input-aware runs reads each layer's bytes off the allocator's count (exec/interp.c). */
    int (*recompute)(void *act, struct mt_err *e);
    int (*backward)(void **act, const float *dout, float *din, struct mt_err *e);
    /* Split backward (exec/xformer.h): B leaves *out_w, what its W needs; W consumes it. */
    int (*backward_input)(void **act, const float *dout, float *din, void **out_w,
                          struct mt_err *e);
    int (*backward_weight)(void **w, struct mt_err *e);
    void (*wgrad_free)(void *w);
    void (*act_free)(void *act);
    /* Activation / gradient buffers between instructions, counted in the memory figures. */
    float *(*buf_alloc)(size_t floats);
    void (*buf_free)(float *buf);
    /* Host <-> buffer copies, for MPI transfers of device buffers. */
    int (*buf_to_host)(float *host, const float *buf, size_t floats, struct mt_err *e);
    int (*buf_from_host)(float *buf, const float *host, size_t floats, struct mt_err *e);
    /* Waits for queued work (CUDA streams); instruction end times are taken after it. */
    int (*sync)(struct mt_err *e);
    /* Bytes held now and the peak since the start (measured: memcount or device allocator). */
    size_t (*mem_current)(void);
    size_t (*mem_peak)(void);
    /* Sets the peak to the bytes held now, to measure the peak of one instruction. */
    void (*mem_reset_peak)(void);
    /* Called with the bytes held after every change (a trace counter); NULL removes it. */
    void (*mem_watch)(void (*fn)(size_t bytes, void *ctx), void *ctx);
    /* Offload (OF/RL; exec/interp_offload.c) on the backend's copy lanes, one device-to-host
     * and one host-to-device, each running its copies one at a time in the order they were
     * started, beside compute. NULL: the backend does not run copies (interp_run refuses).
     * copy_start with *rec NULL (OF) queues a copy of the handle's blocks to host memory and
     * makes *rec, the device blocks staying; with the *rec of an ended OF (RL) it takes the
     * device blocks now and queues the copy back. copy_test says whether the record's copy is
     * done (wait: until it is, running it here if its lane has not started it). copy_end,
     * once done, frees the source: the device blocks after OF, the host copies and the record
     * after RL. copy_drop frees a record whose copy is done and leaves the handle alone (error
     * paths); copy_close stops the lanes (the end of a run). */
    int (*copy_start)(void *act, void **rec, struct mt_err *e);
    int (*copy_test)(void *rec, bool wait, bool *done, struct mt_err *e);
    /* Runs on the calling thread, in order, the copies of rec's lane up to rec that the lane
     * has not started while it is idle (a lane starved of cores by compute); may be NULL. */
    void (*copy_help)(void *rec);
    void (*copy_end)(void *rec);
    void (*copy_drop)(void *rec);
    void (*copy_close)(void);
    /* The most bytes the copies held in host memory at once since the start (the host's own
     * count, apart from mem_peak's). */
    size_t (*mem_host_peak)(void);
    /* Asynchronous pipelines only (exec/interp.c; synchronous plans never call these):
     * weight versions (PipeDream's stash) and PipeMare's discrepancy correction. */
    float *(*stage_params)(void *stage); /* backend memory, stage_nparams floats */
    /* Makes `params` (a buf_alloc'd buffer of stage_nparams floats) the stage's weights and
     * returns the buffer it replaces; swap the original back before OS and stage_free. */
    float *(*stage_swap_params)(void *stage, float *params);
    int (*buf_copy)(float *dst, const float *src, size_t floats, struct mt_err *e);
    /* out = w - c * v, elementwise */
    int (*buf_extrapolate)(float *out, const float *w, const float *v, float c, size_t floats,
                           struct mt_err *e);
    /* v = g * v + (1 - g) * (w - w_old), elementwise */
    int (*buf_ema_delta)(float *v, const float *w, const float *w_old, float g, size_t floats,
                         struct mt_err *e);
};

/* "cpu" or "cuda". MT_EUNSUPPORTED naming the configure flag when built without it,
 * MT_EINVAL for an unknown name. */
int backend_find(const char *name, const struct backend_ops **out, struct mt_err *e);

extern const struct backend_ops backend_cpu_ops;
extern const struct backend_ops backend_cuda_ops; /* exec/backend_cuda.c, with HAVE_CUDA */

#endif
