/* exec/backend_cpu.c: the CPU backend (exec/backend.h) and the backend table. The model is
 * exec/xformer_cpu.c (fp32, OpenBLAS sgemm); every buffer comes from the counting allocator
 * (exec/memcount.c), so the memory figures of a run are measured bytes. OpenBLAS is pinned
 * to one thread: each MPI rank is one pipeline device, and several ranks share a host's
 * cores (CI runs 4 ranks on 2 cores), where OpenBLAS's own threads would oversubscribe. */
#include <config.h>
#include "exec/backend.h"

#include <cblas.h>
#include <string.h>

#include "exec/copy_cpu.h"
#include "exec/memcount.h"
#include "util/err.h"

static int cpu_open(int local_rank, struct mt_err *e)
{
    openblas_set_num_threads(1);
    return MT_OK;
}

static void cpu_close(void)
{
}

static int cpu_stage_create(const struct xformer_dims *d, int first, int n, uint64_t seed,
                            void **out, struct mt_err *e)
{
    struct xformer_stage *s = NULL;
    TRY(xformer_stage_create(d, first, n, seed, &s, e));
    *out = s;
    return MT_OK;
}

static void cpu_stage_free(void *stage)
{
    xformer_stage_free(stage);
}

static size_t cpu_stage_nparams(void *stage)
{
    return xformer_stage_nparams(stage);
}

static float *cpu_stage_grads(void *stage)
{
    return xformer_stage_grads(stage);
}

static int cpu_stage_read(void *stage, bool grads, float *host, struct mt_err *e)
{
    const float *src = grads ? xformer_stage_grads(stage) : xformer_stage_params(stage);
    memcpy(host, src, xformer_stage_nparams(stage) * sizeof(float));
    return MT_OK;
}

static void cpu_stage_zero_grad(void *stage)
{
    xformer_stage_zero_grad(stage);
}

static void cpu_stage_set_loss_scale(void *stage, float scale)
{
    xformer_stage_set_loss_scale(stage, scale);
}

static int cpu_stage_adamw(void *stage, float lr, float beta1, float beta2, float eps, float wd,
                           int t, struct mt_err *e)
{
    return xformer_stage_adamw_step(stage, lr, beta1, beta2, eps, wd, t, e);
}

static int cpu_forward(void *stage, const int *tokens, const float *in_hidden, const int *targets,
                       int B, int T, enum xformer_keep keep, int ckpt_layers, float *out_hidden,
                       float *out_loss, void **out_act, struct mt_err *e)
{
    struct xformer_act *a = NULL;
    TRY(xformer_forward(stage, tokens, in_hidden, targets, B, T, keep, ckpt_layers, out_hidden,
                        out_loss, &a, e));
    *out_act = a;
    return MT_OK;
}

static int cpu_recompute(void *act, struct mt_err *e)
{
    return xformer_recompute(act, e);
}

static int cpu_backward(void **act, const float *dout, float *din, struct mt_err *e)
{
    struct xformer_act *a = *act;
    int rc = xformer_backward(&a, dout, din, e);
    *act = a;
    return rc;
}

static int cpu_backward_input(void **act, const float *dout, float *din, void **out_w,
                              struct mt_err *e)
{
    struct xformer_act *a = *act;
    struct xformer_wgrad *w = NULL;
    int rc = xformer_backward_input(&a, dout, din, &w, e);
    *act = a;
    *out_w = w;
    return rc;
}

static int cpu_backward_weight(void **w, struct mt_err *e)
{
    struct xformer_wgrad *g = *w;
    int rc = xformer_backward_weight(&g, e);
    *w = g;
    return rc;
}

static void cpu_wgrad_free(void *w)
{
    xformer_wgrad_free(w);
}

static void cpu_act_free(void *act)
{
    xformer_act_free(act);
}

static float *cpu_buf_alloc(size_t floats)
{
    return memcount_alloc(floats * sizeof(float));
}

static void cpu_buf_free(float *buf)
{
    memcount_free(buf);
}

static int cpu_buf_copy_to_host(float *host, const float *buf, size_t floats, struct mt_err *e)
{
    memcpy(host, buf, floats * sizeof(float));
    return MT_OK;
}

static int cpu_buf_copy_from_host(float *buf, const float *host, size_t floats, struct mt_err *e)
{
    memcpy(buf, host, floats * sizeof(float));
    return MT_OK;
}

static int cpu_sync(struct mt_err *e)
{
    return MT_OK;
}

static void cpu_mem_watch(void (*fn)(size_t bytes, void *ctx), void *ctx)
{
    memcount_set_hook(fn, ctx);
}

static float *cpu_stage_params(void *stage)
{
    return xformer_stage_params(stage);
}

static float *cpu_stage_swap_params(void *stage, float *params)
{
    return xformer_stage_swap_params(stage, params);
}

static int cpu_buf_copy(float *dst, const float *src, size_t floats, struct mt_err *e)
{
    memcpy(dst, src, floats * sizeof(float));
    return MT_OK;
}

static int cpu_buf_extrapolate(float *out, const float *w, const float *v, float c, size_t floats,
                               struct mt_err *e)
{
    xformer_extrapolate(out, w, v, c, floats);
    return MT_OK;
}

static int cpu_buf_ema_delta(float *v, const float *w, const float *w_old, float g, size_t floats,
                             struct mt_err *e)
{
    xformer_ema_delta(v, w, w_old, g, floats);
    return MT_OK;
}

const struct backend_ops backend_cpu_ops = {
    .name = "cpu",
    .device_memory = false,
    .open = cpu_open,
    .close = cpu_close,
    .stage_create = cpu_stage_create,
    .stage_free = cpu_stage_free,
    .stage_nparams = cpu_stage_nparams,
    .stage_grads = cpu_stage_grads,
    .stage_read = cpu_stage_read,
    .stage_zero_grad = cpu_stage_zero_grad,
    .stage_set_loss_scale = cpu_stage_set_loss_scale,
    .stage_adamw = cpu_stage_adamw,
    .forward = cpu_forward,
    .recompute = cpu_recompute,
    .backward = cpu_backward,
    .backward_input = cpu_backward_input,
    .backward_weight = cpu_backward_weight,
    .wgrad_free = cpu_wgrad_free,
    .act_free = cpu_act_free,
    .buf_alloc = cpu_buf_alloc,
    .buf_free = cpu_buf_free,
    .buf_to_host = cpu_buf_copy_to_host,
    .buf_from_host = cpu_buf_copy_from_host,
    .sync = cpu_sync,
    .mem_current = memcount_current,
    .mem_peak = memcount_peak,
    .mem_reset_peak = memcount_reset_peak,
    .mem_watch = cpu_mem_watch,
    .copy_start = copy_cpu_start,
    .copy_test = copy_cpu_test,
    .copy_help = copy_cpu_help,
    .copy_end = copy_cpu_end,
    .copy_drop = copy_cpu_drop,
    .copy_close = copy_cpu_close,
    .mem_host_peak = memcount_host_peak,
    .stage_params = cpu_stage_params,
    .stage_swap_params = cpu_stage_swap_params,
    .buf_copy = cpu_buf_copy,
    .buf_extrapolate = cpu_buf_extrapolate,
    .buf_ema_delta = cpu_buf_ema_delta,
};

int backend_find(const char *name, const struct backend_ops **out, struct mt_err *e)
{
    *out = NULL;
    if (strcmp(name, "cpu") == 0) {
        *out = &backend_cpu_ops;
        return MT_OK;
    }
    if (strcmp(name, "cuda") == 0 || strcmp(name, "nccl") == 0) {
#ifdef HAVE_CUDA
        *out = &backend_cuda_ops;
        return MT_OK;
#else
        return err_set(e, MT_EUNSUPPORTED,
                       "--backend %s: built without CUDA; reconfigure with "
                       "--with-cuda",
                       name);
#endif
    }
    return err_set(e, MT_EINVAL, "--backend %s: unknown (cpu, cuda, nccl)", name);
}
