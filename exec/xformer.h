/* exec/xformer.h: the executor's real model, a GPT-style or LLaMA-style decoder cut into
 * pipeline stages
 * (issue 7; docs/design.md "exec/"). The paper's FW / CFW / RC / BW / OS (Table 3) are
 * xformer_forward(FULL) / xformer_forward(CHECKPOINT) / xformer_recompute / xformer_backward
 * / xformer_stage_adamw_step. The CPU implementation is exec/xformer_cpu.c (fp32, OpenBLAS). */
#ifndef MT_EXEC_XFORMER_H
#define MT_EXEC_XFORMER_H

#include <stddef.h>
#include <stdint.h>

struct mt_err;
struct xformer_stage; /* parameters, gradients and AdamW state of a run of layers */
struct xformer_act;   /* the activations of one micro-batch on one stage */

/* The block: GPT-2's (LayerNorm, GELU MLP, biases, learned positions) or LLaMA's (RMSNorm,
 * SwiGLU, RoPE, grouped-query attention, no biases; exec/xformer_llama.h). */
enum xformer_block { XFORMER_BLOCK_GPT, XFORMER_BLOCK_LLAMA };

/* The whole model (every stage of a split is made from the same dims). */
struct xformer_dims {
    int vocab;    /* V: 256 for byte-level tokens */
    int max_seq;  /* rows of the position embedding; a micro-batch has T <= max_seq */
    int channels; /* C */
    int heads;    /* NH; C % NH == 0 */
    int ffn;      /* F: hidden width of the MLP, usually 4C */
    int layers;   /* L: transformer blocks of the whole model */
    enum xformer_block block; /* 0: GPT */
    int kv_heads; /* LLaMA's K/V heads, heads % kv_heads == 0; 0 = heads (GPT: always) */
    /* Mixture of experts (LLaMA block, CPU; exec/xformer_moe.h): experts > 0 makes every
     * block's MLP a MoE of `experts` SwiGLU experts of width moe_ffn, top-`topk` routing, a
     * shared expert of width shared_ffn (0: none). Its flat buffer (router, shared expert, this
     * rank's E / ep experts) takes FCW's place; FCPROJW then holds 0 floats. The rank is
     * ep_rank of an ep group of `ep` (0: 1) that xformer_stage_set_ep names. A checkpointed
     * forward of a MoE stage is refused (MT_EUNSUPPORTED). */
    int experts, topk, moe_ffn, shared_ffn, norm_topk;
    int ep, ep_rank;
};

enum xformer_keep {
    XFORMER_KEEP_FULL,       /* FW: keep every activation backward needs */
    XFORMER_KEEP_CHECKPOINT, /* CFW: keep a copy of the stage input (+ targets); with
                              * ckpt_layers = k < n also what layers k..n-1 need (selective) */
};

/* Parameter tensors, in their order inside a layer / the flat buffer. Shapes: (rows, cols).
 * The LLaMA block has no WPE, no biases (LN*B, *B: 0 floats, not held) and these shapes:
 * QKVW (C + 2 kvc, C) with kvc = kv_heads x C / heads, FCW (2F, C) gate rows then up rows. */
enum xformer_tensor {
    XFORMER_WTE,      /* (V, C)  token embedding; first stage */
    XFORMER_WPE,      /* (maxT, C) position embedding; first stage */
    XFORMER_LN1W,     /* (C)     per layer from here to FCPROJB */
    XFORMER_LN1B,     /* (C) */
    XFORMER_QKVW,     /* (3C, C) */
    XFORMER_QKVB,     /* (3C) */
    XFORMER_ATTPROJW, /* (C, C)  residual projection, init scaled by 1/sqrt(2L) */
    XFORMER_ATTPROJB, /* (C) */
    XFORMER_LN2W,     /* (C) */
    XFORMER_LN2B,     /* (C) */
    XFORMER_FCW,      /* (F, C) */
    XFORMER_FCB,      /* (F) */
    XFORMER_FCPROJW,  /* (C, F)  residual projection, init scaled by 1/sqrt(2L) */
    XFORMER_FCPROJB,  /* (C) */
    XFORMER_LNFW,     /* (C)     last stage from here on */
    XFORMER_LNFB,     /* (C) */
    XFORMER_HEADW,    /* (V, C)  LM head, not tied to WTE (see xformer_cpu.c) */
    XFORMER_NTENSORS
};

/* One tensor of a stage: its parameters and gradients (n floats each). */
struct xformer_view {
    float *param;
    float *grad;
    size_t n;
};

/* Bytes of activations for one micro-batch of B x T on a stage, all counted by memcount. */
struct xformer_act_size {
    size_t full_bytes;        /* held by a handle after FW or RC, until BW */
    size_t ckpt_bytes;        /* held by a handle after CFW, until RC */
    size_t cfw_scratch_bytes; /* held in addition, only while CFW runs */
    size_t bw_scratch_bytes;  /* held in addition, only while BW runs */
};

/* Selective checkpointing: a CFW of the stage's first k of its n layers (exec/xformer_cpu.c's
 * header); 0 or k >= n: the whole stage, the figures of xformer_act_bytes. */
struct xformer_sel_size {
    size_t keep_bytes;        /* held after CFW until RC: the input (+ targets), the input of
                               * layer k, the activations of layers k..n-1 and of the head */
    size_t rc_bytes;          /* added by RC: the embedding output, layers 0..k-1 (less the
                               * output of layer k-1, already kept); then the handle holds
                               * full_bytes */
    size_t cfw_scratch_bytes; /* held in addition while CFW runs layers 0..k-1 (the embedding
                               * output and one layer), freed before the kept layers are
                               * allocated: the CFW peaks at max(keep, input + input of layer k
                               * + this) over what was held before it */
};

/* Checks dims: every field >= 1, C % heads == 0; LLaMA: heads % kv_heads == 0, an even head
 * size (RoPE rotates halves). */
int xformer_dims_check(const struct xformer_dims *d, struct mt_err *e);
/* Parameters (floats) of the stage holding layers [first, first+n). Its static memory is
 * 4 x 4 bytes per parameter (weights, gradients, AdamW m and v). */
size_t xformer_param_count(const struct xformer_dims *d, int first, int n);
/* Closed-form activation bytes of such a stage (the same numbers memcount measures). */
struct xformer_act_size xformer_act_bytes(const struct xformer_dims *d, int first, int n, int B,
                                          int T);
struct xformer_sel_size xformer_sel_bytes(const struct xformer_dims *d, int first, int n, int k,
                                          int B, int T);
const char *xformer_tensor_name(enum xformer_tensor t);

/* A stage holding global layers [first, first+n), 0 <= first, n >= 1, first+n <= L; plus the
 * embeddings if first == 0 and the final layernorm + head + loss if first+n == L. Weights are
 * a function of (seed, global layer, tensor, element) only, so any split of a model has the
 * weights of the unsplit model. Gradients start at zero. */
int xformer_stage_create(const struct xformer_dims *d, int first, int n, uint64_t seed,
                         struct xformer_stage **out, struct mt_err *e);
/* A MoE stage's ep group (exec/xformer_moe.h; it must outlive the stage); without one a MoE
 * stage runs as ep 1 on a local group. */
struct moe_ep;
void xformer_stage_set_ep(struct xformer_stage *s, struct moe_ep *g);
/* The parameter ranges of the stage replicated over its ep group (all but this rank's
 * experts: what an allreduce over ep sums), written to off[] / len[] (at most max); returns
 * how many (1: the whole buffer, for a dense stage). */
int xformer_stage_ep_ranges(const struct xformer_stage *s, size_t *off, size_t *len, int max);
/* Frees the stage; every handle of it must have been consumed or freed before. */
void xformer_stage_free(struct xformer_stage *s);
int xformer_stage_is_first(const struct xformer_stage *s);
int xformer_stage_is_last(const struct xformer_stage *s);
/* The flat buffers (xformer_stage_nparams floats each): what OS updates and AR reduces. */
size_t xformer_stage_nparams(const struct xformer_stage *s);
float *xformer_stage_params(struct xformer_stage *s);
float *xformer_stage_grads(struct xformer_stage *s);
/* Makes `params` (xformer_stage_nparams floats from memcount) the stage's parameter buffer and
 * returns the one it replaces, so that a forward, recompute or backward runs on another weight
 * version (asynchronous pipelines, exec/interp.c: PipeDream's stashed copy, PipeMare's
 * corrected weights). The caller swaps the original back before the stage's next optimizer
 * step and before xformer_stage_free, which frees whichever buffer the stage holds then. */
float *xformer_stage_swap_params(struct xformer_stage *s, float *params);
/* Elementwise vector helpers of the same asynchronous pipelines, n floats each:
 * out = w - c * v (weights extrapolated back along a velocity), and
 * v = g * v + (1 - g) * (w - w_old) (an exponential average of the last update). */
void xformer_extrapolate(float *out, const float *w, const float *v, float c, size_t n);
void xformer_ema_delta(float *v, const float *w, const float *w_old, float g, size_t n);
/* One tensor: layer is the GLOBAL layer index for LN1W..FCPROJB and -1 for the others.
 * MT_EINVAL if this stage does not hold it. */
int xformer_stage_tensor(struct xformer_stage *s, enum xformer_tensor t, int layer,
                         struct xformer_view *out, struct mt_err *e);
void xformer_stage_zero_grad(struct xformer_stage *s);
/* The last stage's backward takes the gradient of scale x (mean loss of the micro-batch);
 * 1/M averages the gradient over M micro-batches. Default 1. */
void xformer_stage_set_loss_scale(struct xformer_stage *s, float scale);
/* AdamW (Loshchilov & Hutter) with bias correction, step t >= 1. Weight decay applies to the
 * matrices (embeddings, projections, head), not to biases and layernorm gains. */
int xformer_stage_adamw_step(struct xformer_stage *s, float lr, float beta1, float beta2, float eps,
                             float weight_decay, int t, struct mt_err *e);

/* FW / CFW of one micro-batch of B x T. Input: tokens (B*T ints in [0, V)) on the first stage,
 * in_hidden (B*T*C floats) on the others (the other pointer NULL). targets (B*T ints) on the
 * last stage, else NULL. Output: out_hidden (B*T*C floats, caller's buffer) for the next stage,
 * or *out_loss (mean cross-entropy) on the last stage. *out_act receives the handle; several
 * handles of one stage may be alive at once. Inputs are copied: the caller may reuse them.
 * ckpt_layers (CFW only, the plan's instr.ckpt_layers): the stage's first ckpt_layers layers
 * are checkpointed, the others keep their activations; 0 or >= n: the whole stage. */
int xformer_forward(struct xformer_stage *s, const int *tokens, const float *in_hidden,
                    const int *targets, int B, int T, enum xformer_keep keep, int ckpt_layers,
                    float *out_hidden, float *out_loss, struct xformer_act **out_act,
                    struct mt_err *e);
/* RC: rebuilds the activations of the checkpointed layers (all of a whole-stage CFW, and the
 * head's) from the kept input; they are bit-identical to those of FW. MT_EINVAL if the handle
 * is already full. Blocks are allocated in order: the embedding output (first stage), each
 * recomputed layer, the head. */
int xformer_recompute(struct xformer_act *a, struct mt_err *e);
/* BW: needs full activations (FW, or CFW then RC). dout (B*T*C) is the gradient of the stage
 * output, NULL on the last stage; din (B*T*C, caller's buffer) receives the gradient of the
 * stage input, NULL on the first stage. Adds the parameter gradients into the stage's
 * gradient buffer. On success frees the handle and sets *act to NULL. */
int xformer_backward(struct xformer_act **act, const float *dout, float *din, struct mt_err *e);
/* Split backward (zero-bubble plans). B: the input gradient, as xformer_backward computes it,
 * and the layer norms' and embedding's parameter gradients; the weight GEMMs' inputs and
 * output gradients go into *out_w (xl_w_keep_floats, allocated first), the activations are
 * freed. W: adds the GEMMs' weight and bias gradients from *w, bit-identical to what
 * xformer_backward adds, and frees it. */
struct xformer_wgrad;
int xformer_backward_input(struct xformer_act **act, const float *dout, float *din,
                           struct xformer_wgrad **out_w, struct mt_err *e);
int xformer_backward_weight(struct xformer_wgrad **w, struct mt_err *e);
void xformer_wgrad_free(struct xformer_wgrad *w);
/* Drops a handle without backward (error paths). NULL is a no-op. */
void xformer_act_free(struct xformer_act *a);
int xformer_act_is_full(const struct xformer_act *a);
/* Offload (OF/RL, exec/copy_cpu.c): the slots of the handle's memory blocks (kept input,
 * embedding output, each layer's block, head, selective boundary), each a memcount block or
 * NULL, written to slots[0..n), n = xformer_act_nblocks(a). A copy moves a block by replacing
 * what a slot points to; the values, and so every later result, stay the same. */
int xformer_act_nblocks(const struct xformer_act *a);
void xformer_act_blocks(struct xformer_act *a, void ***slots);
/* The mean loss computed by the last stage's FW/CFW (and RC) of this handle; 0 elsewhere. */
float xformer_act_loss(const struct xformer_act *a);

/* ---- the CUDA twin (exec/xformer_cuda.cu, built with HAVE_CUDA) ---------------------------
 * The same functions on one GPU per process: stages, handles, hidden states and gradients in
 * device memory (from xformer_cuda_alloc, which counts bytes as memcount does on the host);
 * tokens, targets and the loss on the host. Weights start equal to the CPU stage's of the
 * same split. xformer_cuda_init picks the device (local_rank modulo the devices present) and
 * fails with MT_EDEVICE "no CUDA device" where there is none. */
struct xformer_cuda_stage;
struct xformer_cuda_act;

#ifdef __cplusplus
extern "C" {
#endif
int xformer_cuda_init(int local_rank, struct mt_err *e);
void xformer_cuda_fini(void);
int xformer_cuda_sync(struct mt_err *e);
/* NULL when the device refuses (no abort: running out of memory is an expected outcome):
 * the next xformer_cuda_* call that returns an rc fails with MT_EINFEASIBLE "out of device
 * memory: cudaMalloc of N bytes refused ...", the functions that allocate included. */
void *xformer_cuda_alloc(size_t bytes);
void xformer_cuda_free(void *p);
size_t xformer_cuda_mem_current(void);
size_t xformer_cuda_mem_peak(void);
void xformer_cuda_mem_reset_peak(void);
void xformer_cuda_mem_set_hook(void (*fn)(size_t bytes, void *ctx), void *ctx);
/* Synchronous copy between host and device (to_device: host src, device dst). */
int xformer_cuda_copy(void *dst, const void *src, size_t bytes, int to_device, struct mt_err *e);
int xformer_cuda_stage_create(const struct xformer_dims *d, int first, int n, uint64_t seed,
                              struct xformer_cuda_stage **out, struct mt_err *e);
void xformer_cuda_stage_free(struct xformer_cuda_stage *s);
size_t xformer_cuda_stage_nparams(const struct xformer_cuda_stage *s);
float *xformer_cuda_stage_grads(struct xformer_cuda_stage *s);
/* Copies the gradients (grads != 0) or parameters to host memory. */
int xformer_cuda_stage_read(struct xformer_cuda_stage *s, int grads, float *host,
                            struct mt_err *e);
float *xformer_cuda_stage_params(struct xformer_cuda_stage *s);
float *xformer_cuda_stage_swap_params(struct xformer_cuda_stage *s, float *params);
/* Device-to-device copy, and the twins of xformer_extrapolate / xformer_ema_delta on device
 * vectors (queued on the model's stream, like every kernel here). */
int xformer_cuda_copy_device(void *dst, const void *src, size_t bytes, struct mt_err *e);
int xformer_cuda_extrapolate(float *out, const float *w, const float *v, float c, size_t n,
                             struct mt_err *e);
int xformer_cuda_ema_delta(float *v, const float *w, const float *w_old, float g, size_t n,
                           struct mt_err *e);
void xformer_cuda_stage_zero_grad(struct xformer_cuda_stage *s);
void xformer_cuda_stage_set_loss_scale(struct xformer_cuda_stage *s, float scale);
int xformer_cuda_stage_adamw_step(struct xformer_cuda_stage *s, float lr, float beta1,
                                  float beta2, float eps, float weight_decay, int t,
                                  struct mt_err *e);
int xformer_cuda_forward(struct xformer_cuda_stage *s, const int *tokens, const float *in_hidden,
                         const int *targets, int B, int T, enum xformer_keep keep, int ckpt_layers,
                         float *out_hidden, float *out_loss, struct xformer_cuda_act **out_act,
                         struct mt_err *e);
int xformer_cuda_recompute(struct xformer_cuda_act *a, struct mt_err *e);
int xformer_cuda_backward(struct xformer_cuda_act **act, const float *dout, float *din,
                          struct mt_err *e);
struct xformer_cuda_wgrad;
int xformer_cuda_backward_input(struct xformer_cuda_act **act, const float *dout, float *din,
                                struct xformer_cuda_wgrad **out_w, struct mt_err *e);
int xformer_cuda_backward_weight(struct xformer_cuda_wgrad **w, struct mt_err *e);
void xformer_cuda_wgrad_free(struct xformer_cuda_wgrad *w);
void xformer_cuda_act_free(struct xformer_cuda_act *a);
int xformer_cuda_act_is_full(const struct xformer_cuda_act *a);
/* Offload (exec/copy_cuda.cu): as xformer_act_nblocks / xformer_act_blocks; the bytes a live
 * block of xformer_cuda_alloc was asked for; the model's stream (a cudaStream_t). */
int xformer_cuda_act_nblocks(const struct xformer_cuda_act *a);
void xformer_cuda_act_blocks(struct xformer_cuda_act *a, void ***slots);
size_t xformer_cuda_block_bytes(const void *p);
void *xformer_cuda_stream(void);
#ifdef __cplusplus
}
#endif

#endif
