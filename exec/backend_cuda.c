/* exec/backend_cuda.c: the CUDA backend (exec/backend.h) over the CUDA twin of the model
 * (exec/xformer_cuda.cu): one GPU per rank, chosen by the rank's place on its host.
 * Buffers between instructions are device memory; with `--backend cuda` they travel over
 * MPI staged through host copies (exec/interp.c), with `--backend nccl` directly by NCCL
 * (exec/comm_nccl.c). Several ranks may share one GPU under `--backend cuda` (each its own
 * context), which is how a plan runs where only one GPU exists; NCCL refuses that. */
#include <config.h>
#include "exec/backend.h"

#include "exec/copy_cuda.h"

#include "util/err.h"

static int cuda_open(int local_rank, struct mt_err *e)
{
    return xformer_cuda_init(local_rank, e);
}

static void cuda_close(void)
{
    xformer_cuda_fini();
}

static int cuda_stage_create(const struct xformer_dims *d, int first, int n, uint64_t seed,
                             void **out, struct mt_err *e)
{
    struct xformer_cuda_stage *s = NULL;
    TRY(xformer_cuda_stage_create(d, first, n, seed, &s, e));
    *out = s;
    return MT_OK;
}

static void cuda_stage_free(void *stage)
{
    xformer_cuda_stage_free(stage);
}

static size_t cuda_stage_nparams(void *stage)
{
    return xformer_cuda_stage_nparams(stage);
}

static float *cuda_stage_grads(void *stage)
{
    return xformer_cuda_stage_grads(stage);
}

static int cuda_stage_read(void *stage, bool grads, float *host, struct mt_err *e)
{
    return xformer_cuda_stage_read(stage, grads, host, e);
}

static void cuda_stage_zero_grad(void *stage)
{
    xformer_cuda_stage_zero_grad(stage);
}

static void cuda_stage_set_loss_scale(void *stage, float scale)
{
    xformer_cuda_stage_set_loss_scale(stage, scale);
}

static int cuda_stage_adamw(void *stage, float lr, float beta1, float beta2, float eps, float wd,
                            int t, struct mt_err *e)
{
    return xformer_cuda_stage_adamw_step(stage, lr, beta1, beta2, eps, wd, t, e);
}

static int cuda_forward(void *stage, const int *tokens, const float *in_hidden, const int *targets,
                        int B, int T, enum xformer_keep keep, int ckpt_layers, float *out_hidden,
                        float *out_loss, void **out_act, struct mt_err *e)
{
    struct xformer_cuda_act *a = NULL;
    TRY(xformer_cuda_forward(stage, tokens, in_hidden, targets, B, T, keep, ckpt_layers,
                             out_hidden, out_loss, &a, e));
    *out_act = a;
    return MT_OK;
}

static int cuda_recompute(void *act, struct mt_err *e)
{
    return xformer_cuda_recompute(act, e);
}

static int cuda_backward(void **act, const float *dout, float *din, struct mt_err *e)
{
    struct xformer_cuda_act *a = *act;
    int rc = xformer_cuda_backward(&a, dout, din, e);
    *act = a;
    return rc;
}

static int cuda_backward_input(void **act, const float *dout, float *din, void **out_w,
                              struct mt_err *e)
{
    struct xformer_cuda_act *a = *act;
    struct xformer_cuda_wgrad *w = NULL;
    int rc = xformer_cuda_backward_input(&a, dout, din, &w, e);
    *act = a;
    *out_w = w;
    return rc;
}

static int cuda_backward_weight(void **w, struct mt_err *e)
{
    struct xformer_cuda_wgrad *g = *w;
    int rc = xformer_cuda_backward_weight(&g, e);
    *w = g;
    return rc;
}

static void cuda_wgrad_free(void *w)
{
    xformer_cuda_wgrad_free(w);
}

static void cuda_act_free(void *act)
{
    xformer_cuda_act_free(act);
}

static float *cuda_buf_alloc(size_t floats)
{
    return xformer_cuda_alloc(floats * sizeof(float));
}

static void cuda_buf_free(float *buf)
{
    xformer_cuda_free(buf);
}

static int cuda_buf_to_host(float *host, const float *buf, size_t floats, struct mt_err *e)
{
    return xformer_cuda_copy(host, buf, floats * sizeof(float), 0, e);
}

static int cuda_buf_from_host(float *buf, const float *host, size_t floats, struct mt_err *e)
{
    return xformer_cuda_copy(buf, host, floats * sizeof(float), 1, e);
}

static float *cuda_stage_params(void *stage)
{
    return xformer_cuda_stage_params(stage);
}

static float *cuda_stage_swap_params(void *stage, float *params)
{
    return xformer_cuda_stage_swap_params(stage, params);
}

static int cuda_buf_copy(float *dst, const float *src, size_t floats, struct mt_err *e)
{
    return xformer_cuda_copy_device(dst, src, floats * sizeof(float), e);
}

static int cuda_buf_extrapolate(float *out, const float *w, const float *v, float c, size_t floats,
                                struct mt_err *e)
{
    return xformer_cuda_extrapolate(out, w, v, c, floats, e);
}

static int cuda_buf_ema_delta(float *v, const float *w, const float *w_old, float g, size_t floats,
                              struct mt_err *e)
{
    return xformer_cuda_ema_delta(v, w, w_old, g, floats, e);
}

const struct backend_ops backend_cuda_ops = {
    .name = "cuda",
    .device_memory = true,
    .open = cuda_open,
    .close = cuda_close,
    .stage_create = cuda_stage_create,
    .stage_free = cuda_stage_free,
    .stage_nparams = cuda_stage_nparams,
    .stage_grads = cuda_stage_grads,
    .stage_read = cuda_stage_read,
    .stage_zero_grad = cuda_stage_zero_grad,
    .stage_set_loss_scale = cuda_stage_set_loss_scale,
    .stage_adamw = cuda_stage_adamw,
    .forward = cuda_forward,
    .recompute = cuda_recompute,
    .backward = cuda_backward,
    .backward_input = cuda_backward_input,
    .backward_weight = cuda_backward_weight,
    .wgrad_free = cuda_wgrad_free,
    .act_free = cuda_act_free,
    .buf_alloc = cuda_buf_alloc,
    .buf_free = cuda_buf_free,
    .buf_to_host = cuda_buf_to_host,
    .buf_from_host = cuda_buf_from_host,
    .sync = xformer_cuda_sync,
    .mem_current = xformer_cuda_mem_current,
    .mem_peak = xformer_cuda_mem_peak,
    .mem_reset_peak = xformer_cuda_mem_reset_peak,
    .mem_watch = xformer_cuda_mem_set_hook,
    .copy_start = copy_cuda_start,
    .copy_test = copy_cuda_test,
    .copy_end = copy_cuda_end,
    .copy_drop = copy_cuda_drop,
    .copy_close = copy_cuda_close,
    .mem_host_peak = copy_cuda_host_peak,
    .stage_params = cuda_stage_params,
    .stage_swap_params = cuda_stage_swap_params,
    .buf_copy = cuda_buf_copy,
    .buf_extrapolate = cuda_buf_extrapolate,
    .buf_ema_delta = cuda_buf_ema_delta,
};
