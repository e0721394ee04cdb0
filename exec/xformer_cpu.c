/* exec/xformer_cpu.c: the CPU reference of the executor's model, a GPT-2 style decoder in
 * fp32 with every matmul through OpenBLAS sgemm, cut into pipeline stages.
 *
 * What it models. A stage owns global layers [first, first+n): per block
 *     x -> ln1 -> qkv -> causal softmax attention -> attproj (+x) = res2
 *       -> ln2 -> fc -> GELU (tanh) -> fcproj (+res2) = res3 = next block's x,
 * with the token + learned position embedding in front on the first stage and the final
 * layernorm, LM head and softmax cross-entropy behind on the last. The LM head is its own
 * matrix (untied from WTE): with tying, the first and the last stage would share a tensor
 * and need an extra all-reduce between them (as Megatron does); untied, every stage owns
 * disjoint parameters and a pipeline moves only activations and their gradients.
 *
 * Layout (after llm.c's train_gpt2.c). Layer kernels take outputs first, inputs next,
 * sizes last. Parameters, gradients, AdamW m and v are four flat buffers ordered
 * [WTE WPE] [layer first .. first+n-1: LN1W .. FCPROJB] [LNFW LNFB HEADW]. The activations
 * of one micro-batch live in a handle: `kept` (the stage input, plus the targets on the last
 * stage: what CFW keeps) and one block per part, each a single allocation pointed into:
 *     enc (B,T,C)                                       first stage
 *     per layer: ln1 (B,T,C) ln1_mean (B,T) ln1_rstd (B,T) qkv (B,T,3C) att (B,NH,T,T)
 *                atty (B,T,C) res2 (B,T,C) ln2 (B,T,C) ln2_mean (B,T) ln2_rstd (B,T)
 *                fch (B,T,F) fch_gelu (B,T,F) res3 (B,T,C)
 *     head: lnf (B,T,C) lnf_mean (B,T) lnf_rstd (B,T) probs (B,T,V) losses (B,T)   last stage
 * Layer l reads the res3 of layer l-1 (layer 0: enc or the stage input). A checkpointed
 * forward of the whole stage (CFW) runs the same kernels through a scratch arena that holds
 * one layer (two residual buffers in turn) and frees it before returning, like a forward
 * under torch.no_grad; RC runs the FW path again from the kept input, so its activations are
 * bit-identical.
 *
 * Selective checkpointing (issue 12; sim/core/memory.h's mem_ckpt_keep): a CFW of k of the
 * stage's n layers checkpoints its FIRST k, as sim/inputs/ckpt_plan.c plans them. It runs layers
 * 0..k-1 through a scratch of the embedding output and one layer, writing the output of
 * layer k-1 (the input of layer k) into a kept block `bnd`, then allocates and keeps the
 * blocks of layers k..n-1 and the head. So it keeps the input, bnd, n - k layers and the
 * head; RC allocates enc and the blocks of layers 0..k-1 (the block of layer k-1 without its
 * res3: bnd is it) and runs only those layers. After RC the handle holds exactly what FW
 * holds, and FW + BW, CFW(k) + RC + BW give bit-identical gradients. In the simulator's
 * terms (model/cost.h cost_stage_bytes_exec) a CFW of k keeps act - k layer_act + sel_ckpt
 * with sel_ckpt = bnd - enc: one hidden state, none on the first stage.
 * A MoE stage (exec/xformer.h's experts > 0, LLaMA block): FCW holds the layer's MoE buffer
 * and act_run runs its MLP through exec/xformer_moe.c (tokens exchanged over the stage's ep
 * group) into res3, keeping one MoE handle a layer beside the layer's block; backward_run
 * runs the MoE backward into d(ln2) before the rest of the layer, also in a split backward's
 * B (W then adds the attention's GEMMs only). CFW is refused: RC would repeat the exchange.
 * Backward walks the layers down with one layer's worth of gradient scratch. Every block
 * comes from exec/memcount.c, so memory is measured; xformer_act_bytes and xformer_sel_bytes
 * give the same numbers in closed form. Blocks are allocated in order (kept, enc, layers, head)
 * so the online memory predictor reads each layer's bytes off the allocator (exec/interp.c). */
#include <config.h>
#include "exec/xformer.h"

#include <assert.h>
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "exec/memcount.h"
#include "exec/xformer_gpt.h"
#include "exec/xformer_llama.h"
#include "exec/xformer_moe.h"
#include "model/xformer_layout.h"
#include "util/err.h"
#include "util/xalloc.h"

#define INIT_STD 0.02

struct xformer_stage {
    struct xformer_dims d;
    int first, n; /* global layers [first, first+n) */
    int is_first, is_last;
    size_t nparams;
    float *params, *grads, *m, *v; /* memcount, nparams floats each */
    size_t layer_off;              /* offset of local layer 0 in the flat buffers */
    size_t layer_numel;            /* floats per layer */
    size_t final_off;              /* offset of LNFW */
    float loss_scale;
    int live; /* handles alive */
    struct moe_ep *ep, local_ep;   /* a MoE stage's ep group (local_ep unless set) */
};

struct xformer_act {
    struct xformer_stage *s;
    int B, T;
    int k;               /* layers its CFW checkpointed: 0 (FW), n (the whole stage) or 1..n-1 */
    int full;            /* holds every activation backward needs (FW, or CFW then RC) */
    unsigned char *kept; /* memcount: input (ints or floats) then targets (ints) */
    float *enc;          /* memcount: the embedding output (first stage), or NULL */
    float **layer;       /* [n] memcount blocks of each layer's activations, or NULL */
    float *head;         /* memcount: the head's activations (last stage), or NULL */
    float *bnd;          /* memcount: selective CFW only, the input of layer k */
    struct moe_act **moe; /* [n] a MoE stage's per-layer handles (exec/xformer_moe.h) */
    float loss;
};

/* Pointers of one layer's parameters (or gradients) inside a flat buffer. */
struct layer_params {
    float *ln1w, *ln1b, *qkvw, *qkvb, *attprojw, *attprojb;
    float *ln2w, *ln2b, *fcw, *fcb, *fcprojw, *fcprojb;
};

/* Pointers of one layer's activations. */
struct layer_acts {
    float *ln1, *ln1_mean, *ln1_rstd, *qkv, *att, *atty, *res2;
    float *ln2, *ln2_mean, *ln2_rstd, *fch, *fch_gelu, *res3;
};

/* Pointers of the last stage's activations. */
struct final_acts {
    float *lnf, *lnf_mean, *lnf_rstd, *probs, *losses;
};

/* ------------------------------------------------------------------------------------ */
/* Sizes                                                                                 */
/* ------------------------------------------------------------------------------------ */

static int is_llama(const struct xformer_dims *d)
{
    return d->block == XFORMER_BLOCK_LLAMA;
}

static int is_moe(const struct xformer_dims *d)
{
    return d->experts > 0;
}

static struct moe_dims moe_of(const struct xformer_dims *d)
{
    return (struct moe_dims){d->channels,   d->experts,   d->topk, d->moe_ffn,
                             d->shared_ffn, d->norm_topk, 0.0f};
}

static int ep_of(const struct xformer_dims *d)
{
    return d->ep > 0 ? d->ep : 1;
}

/* FCW's floats in a MoE block: the whole MoE buffer of this rank. */
static size_t moe_numel(const struct xformer_dims *d)
{
    struct moe_dims md = moe_of(d);
    return moe_param_count(&md, ep_of(d));
}

/* The layout's shape of the block (model/xformer_layout.h). */
static struct xl_block block_of(const struct xformer_dims *d)
{
    size_t C = (size_t)d->channels, H = (size_t)d->heads;
    size_t kv = is_llama(d) && d->kv_heads > 0 ? (size_t)d->kv_heads : H;
    struct xl_block b = {is_llama(d), C, H, kv * (C / H), (size_t)d->ffn, (size_t)d->vocab};
    return b;
}

/* The LLaMA block's tensors: no position table, no biases (0 floats), a (C + 2 kvc, C) qkv and
 * a gate | up (2F, C) fc. */
static size_t tensor_numel_llama(const struct xformer_dims *d, enum xformer_tensor t)
{
    struct xl_block b = block_of(d);
    switch (t) {
    case XFORMER_WTE:
    case XFORMER_HEADW: return b.V * b.C;
    case XFORMER_QKVW: return xl_qkv_width(&b) * b.C;
    case XFORMER_ATTPROJW: return b.C * b.C;
    case XFORMER_FCW: return is_moe(d) ? moe_numel(d) : 2 * b.F * b.C;
    case XFORMER_FCPROJW: return is_moe(d) ? 0 : b.C * b.F;
    case XFORMER_LN1W:
    case XFORMER_LN2W:
    case XFORMER_LNFW: return b.C;
    default: return 0;
    }
}

static size_t tensor_numel(const struct xformer_dims *d, enum xformer_tensor t)
{
    if (is_llama(d))
        return tensor_numel_llama(d, t);
    size_t C = (size_t)d->channels, F = (size_t)d->ffn, V = (size_t)d->vocab;
    switch (t) {
    case XFORMER_WTE: return V * C;
    case XFORMER_WPE: return (size_t)d->max_seq * C;
    case XFORMER_QKVW: return 3 * C * C;
    case XFORMER_QKVB: return 3 * C;
    case XFORMER_ATTPROJW: return C * C;
    case XFORMER_FCW: return F * C;
    case XFORMER_FCB: return F;
    case XFORMER_FCPROJW: return C * F;
    case XFORMER_HEADW: return V * C;
    case XFORMER_LN1W:
    case XFORMER_LN1B:
    case XFORMER_ATTPROJB:
    case XFORMER_LN2W:
    case XFORMER_LN2B:
    case XFORMER_FCPROJB:
    case XFORMER_LNFW:
    case XFORMER_LNFB: return C;
    case XFORMER_NTENSORS: break;
    }
    return 0;
}

static int tensor_is_layer(enum xformer_tensor t)
{
    return t >= XFORMER_LN1W && t <= XFORMER_FCPROJB;
}

static int tensor_is_matrix(enum xformer_tensor t)
{
    return t == XFORMER_WTE || t == XFORMER_WPE || t == XFORMER_QKVW || t == XFORMER_ATTPROJW ||
           t == XFORMER_FCW || t == XFORMER_FCPROJW || t == XFORMER_HEADW;
}

static size_t layer_numel(const struct xformer_dims *d)
{
    size_t n = 0;
    for (int t = XFORMER_LN1W; t <= XFORMER_FCPROJB; t++)
        n += tensor_numel(d, (enum xformer_tensor)t);
    return n;
}

static size_t embed_numel(const struct xformer_dims *d)
{
    return tensor_numel(d, XFORMER_WTE) + tensor_numel(d, XFORMER_WPE);
}

static size_t final_numel(const struct xformer_dims *d)
{
    return tensor_numel(d, XFORMER_LNFW) + tensor_numel(d, XFORMER_LNFB) +
           tensor_numel(d, XFORMER_HEADW);
}

size_t xformer_param_count(const struct xformer_dims *d, int first, int n)
{
    size_t p = (size_t)n * layer_numel(d);
    if (first == 0)
        p += embed_numel(d);
    if (first + n == d->layers)
        p += final_numel(d);
    return p;
}

/* The layout's sizes (model/xformer_layout.h) for these dims. */
static size_t layer_act_floats(const struct xformer_dims *d, size_t B, size_t T)
{
    struct xl_block b = block_of(d);
    return xl_block_layer_floats(&b, B, T);
}

static size_t final_act_floats(const struct xformer_dims *d, size_t B, size_t T)
{
    struct xl_block b = block_of(d);
    return xl_block_head_floats(&b, B, T);
}

static size_t cfw_scratch_floats(const struct xformer_dims *d, int is_first, int is_last, int n,
                                 size_t B, size_t T)
{
    struct xl_block b = block_of(d);
    return xl_block_cfw_scratch_floats(&b, is_first, is_last, (size_t)n, B, T);
}

/* BW walks the attention one head at a time. */
static size_t bw_scratch_floats(const struct xformer_dims *d, size_t B, size_t T)
{
    struct xl_block b = block_of(d);
    return xl_block_bw_scratch_floats(&b, B, T, 1);
}

struct xformer_sel_size xformer_sel_bytes(const struct xformer_dims *d, int first, int n, int k,
                                          int B, int T)
{
    struct xformer_act_size a = xformer_act_bytes(d, first, n, B, T);
    struct xformer_sel_size r;
    if (k <= 0 || k >= n) {
        r.keep_bytes = a.ckpt_bytes;
        r.rc_bytes = a.full_bytes - a.ckpt_bytes;
        r.cfw_scratch_bytes = a.cfw_scratch_bytes;
        return r;
    }
    size_t b = (size_t)B, t = (size_t)T, NC = b * t * (size_t)d->channels;
    size_t L = layer_act_floats(d, b, t), E = first == 0 ? NC : 0;
    r.keep_bytes = a.full_bytes - (E + (size_t)k * L - NC) * sizeof(float);
    r.rc_bytes = (E + (size_t)k * L - NC) * sizeof(float);
    r.cfw_scratch_bytes = (E + L) * sizeof(float);
    return r;
}

struct xformer_act_size xformer_act_bytes(const struct xformer_dims *d, int first, int n, int B,
                                          int T)
{
    int is_first = first == 0, is_last = first + n == d->layers;
    size_t b = (size_t)B, t = (size_t)T;
    size_t kept = xl_kept_bytes(is_first, is_last, b, t, (size_t)d->channels);
    struct xformer_act_size a;
    struct xl_block blk = block_of(d);
    a.full_bytes = kept + xl_block_full_floats(&blk, is_first, is_last, (size_t)n, b, t) *
                              sizeof(float);
    a.ckpt_bytes = kept;
    a.cfw_scratch_bytes = cfw_scratch_floats(d, is_first, is_last, n, b, t) * sizeof(float);
    a.bw_scratch_bytes = bw_scratch_floats(d, b, t) * sizeof(float);
    return a;
}

/* ------------------------------------------------------------------------------------ */
/* Pointing into flat buffers                                                            */
/* ------------------------------------------------------------------------------------ */

static float *take(float **p, size_t n)
{
    float *r = *p;
    *p += n;
    return r;
}

static void layer_params_point(struct layer_params *lp, float *base, const struct xformer_dims *d)
{
    float *p = base;
    lp->ln1w = take(&p, tensor_numel(d, XFORMER_LN1W));
    lp->ln1b = take(&p, tensor_numel(d, XFORMER_LN1B));
    lp->qkvw = take(&p, tensor_numel(d, XFORMER_QKVW));
    lp->qkvb = take(&p, tensor_numel(d, XFORMER_QKVB));
    lp->attprojw = take(&p, tensor_numel(d, XFORMER_ATTPROJW));
    lp->attprojb = take(&p, tensor_numel(d, XFORMER_ATTPROJB));
    lp->ln2w = take(&p, tensor_numel(d, XFORMER_LN2W));
    lp->ln2b = take(&p, tensor_numel(d, XFORMER_LN2B));
    lp->fcw = take(&p, tensor_numel(d, XFORMER_FCW));
    lp->fcb = take(&p, tensor_numel(d, XFORMER_FCB));
    lp->fcprojw = take(&p, tensor_numel(d, XFORMER_FCPROJW));
    lp->fcprojb = take(&p, tensor_numel(d, XFORMER_FCPROJB));
    if (is_llama(d))
        lp->ln1b = lp->qkvb = lp->attprojb = lp->ln2b = lp->fcb = lp->fcprojb = NULL;
}

/* Points la at the layer chunk starting at *p and advances *p past it; a chunk without res3
 * (the last checkpointed layer of a selective recompute) leaves la->res3 NULL. */
static void layer_acts_point(struct layer_acts *la, float **p, const struct xformer_dims *d,
                             size_t B, size_t T, int with_res3)
{
    size_t N = B * T, C = (size_t)d->channels, F = (size_t)d->ffn;
    struct xl_block b = block_of(d);
    int llama = is_llama(d); /* RMSNorm keeps no mean; SwiGLU's fch is gate | up */
    la->ln1 = take(p, N * C);
    la->ln1_mean = llama ? NULL : take(p, N);
    la->ln1_rstd = take(p, N);
    la->qkv = take(p, N * xl_qkv_width(&b));
    la->att = take(p, B * (size_t)d->heads * T * T);
    la->atty = take(p, N * C);
    la->res2 = take(p, N * C);
    la->ln2 = take(p, N * C);
    la->ln2_mean = llama ? NULL : take(p, N);
    la->ln2_rstd = take(p, N);
    la->fch = take(p, N * F * (llama ? 2 : 1));
    la->fch_gelu = take(p, N * F);
    la->res3 = with_res3 ? take(p, N * C) : NULL;
}

static void final_acts_point(struct final_acts *fa, float **p, const struct xformer_dims *d,
                             size_t B, size_t T)
{
    size_t N = B * T;
    fa->lnf = take(p, N * (size_t)d->channels);
    fa->lnf_mean = is_llama(d) ? NULL : take(p, N);
    fa->lnf_rstd = take(p, N);
    fa->probs = take(p, N * (size_t)d->vocab);
    fa->losses = take(p, N);
}

/* ------------------------------------------------------------------------------------ */
/* Initialisation: normal(0, 0.02) from a counter-based generator keyed by                */
/* (seed, global layer, tensor), so weights do not depend on how the model is split.      */
/* ------------------------------------------------------------------------------------ */

static uint64_t splitmix64(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

static void init_tensor(float *p, size_t n, enum xformer_tensor t, int layer, int L, uint64_t seed)
{
    if (!tensor_is_matrix(t)) {
        /* layernorm gains 1, biases 0 */
        float v = (t == XFORMER_LN1W || t == XFORMER_LN2W || t == XFORMER_LNFW) ? 1.0f : 0.0f;
        for (size_t i = 0; i < n; i++)
            p[i] = v;
        return;
    }
    double std = INIT_STD;
    if (t == XFORMER_ATTPROJW || t == XFORMER_FCPROJW)
        std /= sqrt(2.0 * L);
    uint64_t key = splitmix64(seed ^ splitmix64(((uint64_t)(layer + 1) << 8) | (uint64_t)t));
    for (size_t i = 0; i < n; i++) {
        uint64_t r1 = splitmix64(key + 2 * (uint64_t)i), r2 = splitmix64(key + 2 * (uint64_t)i + 1);
        double u1 = ((double)(r1 >> 11) + 1.0) * 0x1.0p-53; /* (0, 1] */
        double u2 = (double)(r2 >> 11) * 0x1.0p-53;         /* [0, 1) */
        double z = sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
        p[i] = (float)(std * z);
    }
}

/* ------------------------------------------------------------------------------------ */
/* Stage                                                                                  */
/* ------------------------------------------------------------------------------------ */

int xformer_dims_check(const struct xformer_dims *d, struct mt_err *e)
{
    if (d->vocab < 1 || d->max_seq < 1 || d->channels < 1 || d->heads < 1 || d->ffn < 1 ||
        d->layers < 1)
        return err_set(e, MT_EINVAL,
                       "model dims: every size must be >= 1 (V=%d maxT=%d C=%d NH=%d F=%d L=%d)",
                       d->vocab, d->max_seq, d->channels, d->heads, d->ffn, d->layers);
    if (d->channels % d->heads != 0)
        return err_set(e, MT_EINVAL, "model dims: channels %d not a multiple of heads %d",
                       d->channels, d->heads);
    if (d->block != XFORMER_BLOCK_GPT && d->block != XFORMER_BLOCK_LLAMA)
        return err_set(e, MT_EINVAL, "model dims: unknown block %d", (int)d->block);
    if (!is_llama(d) && d->kv_heads != 0 && d->kv_heads != d->heads)
        return err_set(e, MT_EUNSUPPORTED,
                       "model dims: %d K/V heads: the GPT block has multi-head attention only",
                       d->kv_heads);
    if (is_llama(d)) {
        if (d->kv_heads < 0 || (d->kv_heads > 0 && d->heads % d->kv_heads != 0))
            return err_set(e, MT_EINVAL, "model dims: heads %d not a multiple of K/V heads %d",
                           d->heads, d->kv_heads);
        if ((d->channels / d->heads) % 2 != 0)
            return err_set(e, MT_EINVAL, "model dims: head size %d is odd (RoPE rotates halves)",
                           d->channels / d->heads);
    }
    if (is_moe(d)) {
        struct moe_dims md = moe_of(d);
        if (!is_llama(d))
            return err_set(e, MT_EUNSUPPORTED, "model dims: experts on the GPT block (LLaMA only)");
        TRY(moe_dims_check(&md, ep_of(d), e));
        if (d->ep_rank < 0 || d->ep_rank >= ep_of(d))
            return err_set(e, MT_EINVAL, "model dims: ep rank %d of %d", d->ep_rank, ep_of(d));
    }
    return MT_OK;
}

const char *xformer_tensor_name(enum xformer_tensor t)
{
    static const char *const names[XFORMER_NTENSORS] = {
        "wte",  "wpe", "ln1w", "ln1b",    "qkvw",    "qkvb", "attprojw", "attprojb", "ln2w",
        "ln2b", "fcw", "fcb",  "fcprojw", "fcprojb", "lnfw", "lnfb",     "headw",
    };
    if ((int)t < 0 || t >= XFORMER_NTENSORS)
        return "?";
    return names[t];
}

/* Offset of tensor t (of global layer `layer` for layer tensors) in the flat buffers. */
static size_t stage_tensor_off(const struct xformer_stage *s, enum xformer_tensor t, int layer)
{
    const struct xformer_dims *d = &s->d;
    if (t == XFORMER_WTE)
        return 0;
    if (t == XFORMER_WPE)
        return tensor_numel(d, XFORMER_WTE);
    if (tensor_is_layer(t)) {
        size_t off = s->layer_off + (size_t)(layer - s->first) * s->layer_numel;
        for (int k = XFORMER_LN1W; k < (int)t; k++)
            off += tensor_numel(d, (enum xformer_tensor)k);
        return off;
    }
    size_t off = s->final_off;
    for (int k = XFORMER_LNFW; k < (int)t; k++)
        off += tensor_numel(d, (enum xformer_tensor)k);
    return off;
}

static int stage_holds(const struct xformer_stage *s, enum xformer_tensor t, int layer)
{
    if ((int)t >= 0 && t < XFORMER_NTENSORS && tensor_numel(&s->d, t) == 0)
        return 0; /* the LLaMA block's biases and position table */
    if (t == XFORMER_WTE || t == XFORMER_WPE)
        return s->is_first && layer == -1;
    if (tensor_is_layer(t))
        return layer >= s->first && layer < s->first + s->n;
    if (t >= XFORMER_LNFW && t <= XFORMER_HEADW)
        return s->is_last && layer == -1;
    return 0;
}

int xformer_stage_create(const struct xformer_dims *d, int first, int n, uint64_t seed,
                         struct xformer_stage **out, struct mt_err *e)
{
    *out = NULL;
    TRY(xformer_dims_check(d, e));
    if (first < 0 || n < 1 || first + n > d->layers)
        return err_set(e, MT_EINVAL,
                       "stage: layers [%d, %d) not a non-empty range of the model's %d layers",
                       first, first + n, d->layers);
    struct xformer_stage *s = xcalloc(1, sizeof *s);
    s->d = *d;
    s->first = first;
    s->n = n;
    s->is_first = first == 0;
    s->is_last = first + n == d->layers;
    s->layer_numel = layer_numel(d);
    s->layer_off = s->is_first ? embed_numel(d) : 0;
    s->final_off = s->layer_off + (size_t)n * s->layer_numel;
    s->nparams = xformer_param_count(d, first, n);
    s->loss_scale = 1.0f;
    size_t bytes = s->nparams * sizeof(float);
    s->params = memcount_alloc(bytes);
    s->grads = memcount_calloc(bytes);
    s->m = memcount_calloc(bytes);
    s->v = memcount_calloc(bytes);
    struct moe_dims md = moe_of(d);
    for (int t = 0; t < XFORMER_NTENSORS; t++) {
        enum xformer_tensor k = (enum xformer_tensor)t;
        int lo = tensor_is_layer(k) ? first : -1, hi = tensor_is_layer(k) ? first + n : 0;
        for (int l = lo; l < hi; l++)
            if (stage_holds(s, k, l) && is_moe(d) && k == XFORMER_FCW)
                moe_init_params(&md, ep_of(d), d->ep_rank, seed, l, d->layers,
                                s->params + stage_tensor_off(s, k, l));
            else if (stage_holds(s, k, l))
                init_tensor(s->params + stage_tensor_off(s, k, l), tensor_numel(d, k), k, l,
                            d->layers, seed);
    }
    moe_ep_local(&s->local_ep);
    s->ep = &s->local_ep;
    *out = s;
    return MT_OK;
}

void xformer_stage_set_ep(struct xformer_stage *s, struct moe_ep *g)
{
    s->ep = g;
}

int xformer_stage_ep_ranges(const struct xformer_stage *s, size_t *off, size_t *len, int max)
{
    int n = 0;
    size_t at = 0;
    struct moe_dims md = moe_of(&s->d);
    for (int l = 0; is_moe(&s->d) && l < s->n && n < max; l++) {
        size_t fc = stage_tensor_off(s, XFORMER_FCW, s->first + l);
        size_t experts = moe_expert_off(&md, 0);
        off[n] = at;
        len[n++] = fc + experts - at;
        at = fc + tensor_numel(&s->d, XFORMER_FCW);
    }
    if (n < max) {
        off[n] = at;
        len[n++] = s->nparams - at;
    }
    return n;
}

void xformer_stage_free(struct xformer_stage *s)
{
    if (s == NULL)
        return;
    assert(s->live == 0 && "xformer_stage_free with micro-batch handles alive");
    memcount_free(s->params);
    memcount_free(s->grads);
    memcount_free(s->m);
    memcount_free(s->v);
    free(s);
}

int xformer_stage_is_first(const struct xformer_stage *s)
{
    return s->is_first;
}

int xformer_stage_is_last(const struct xformer_stage *s)
{
    return s->is_last;
}

size_t xformer_stage_nparams(const struct xformer_stage *s)
{
    return s->nparams;
}

float *xformer_stage_params(struct xformer_stage *s)
{
    return s->params;
}

float *xformer_stage_grads(struct xformer_stage *s)
{
    return s->grads;
}

float *xformer_stage_swap_params(struct xformer_stage *s, float *params)
{
    float *old = s->params;
    s->params = params;
    return old;
}

void xformer_extrapolate(float *out, const float *w, const float *v, float c, size_t n)
{
    for (size_t i = 0; i < n; i++)
        out[i] = w[i] - c * v[i];
}

void xformer_ema_delta(float *v, const float *w, const float *w_old, float g, size_t n)
{
    for (size_t i = 0; i < n; i++)
        v[i] = g * v[i] + (1.0f - g) * (w[i] - w_old[i]);
}

int xformer_stage_tensor(struct xformer_stage *s, enum xformer_tensor t, int layer,
                         struct xformer_view *out, struct mt_err *e)
{
    if ((int)t < 0 || t >= XFORMER_NTENSORS || !stage_holds(s, t, layer))
        return err_set(e, MT_EINVAL, "stage [%d, %d): holds no tensor %s of layer %d", s->first,
                       s->first + s->n, xformer_tensor_name(t), layer);
    size_t off = stage_tensor_off(s, t, layer);
    out->param = s->params + off;
    out->grad = s->grads + off;
    out->n = tensor_numel(&s->d, t);
    return MT_OK;
}

void xformer_stage_zero_grad(struct xformer_stage *s)
{
    memset(s->grads, 0, s->nparams * sizeof(float));
}

void xformer_stage_set_loss_scale(struct xformer_stage *s, float scale)
{
    s->loss_scale = scale;
}

static void adamw_update(float *p, const float *g, float *m, float *v, size_t n, float lr,
                         float beta1, float beta2, float eps, float wd, float c1, float c2)
{
    for (size_t i = 0; i < n; i++) {
        float mi = beta1 * m[i] + (1.0f - beta1) * g[i];
        float vi = beta2 * v[i] + (1.0f - beta2) * g[i] * g[i];
        m[i] = mi;
        v[i] = vi;
        float mhat = mi / c1, vhat = vi / c2;
        p[i] -= lr * (mhat / (sqrtf(vhat) + eps) + wd * p[i]);
    }
}

int xformer_stage_adamw_step(struct xformer_stage *s, float lr, float beta1, float beta2, float eps,
                             float weight_decay, int t, struct mt_err *e)
{
    if (t < 1)
        return err_set(e, MT_EINVAL, "adamw: step %d, must be >= 1", t);
    float c1 = 1.0f - powf(beta1, (float)t), c2 = 1.0f - powf(beta2, (float)t);
    for (int k = 0; k < XFORMER_NTENSORS; k++) {
        enum xformer_tensor tk = (enum xformer_tensor)k;
        int lo = tensor_is_layer(tk) ? s->first : -1;
        int hi = tensor_is_layer(tk) ? s->first + s->n : 0;
        float wd = tensor_is_matrix(tk) ? weight_decay : 0.0f;
        for (int l = lo; l < hi; l++) {
            if (!stage_holds(s, tk, l))
                continue;
            size_t off = stage_tensor_off(s, tk, l);
            adamw_update(s->params + off, s->grads + off, s->m + off, s->v + off,
                         tensor_numel(&s->d, tk), lr, beta1, beta2, eps, wd, c1, c2);
        }
    }
    return MT_OK;
}

/* ------------------------------------------------------------------------------------ */
/* Forward, recompute, backward                                                          */
/* ------------------------------------------------------------------------------------ */

static const int *act_tokens(const struct xformer_act *a)
{
    return (const int *)(const void *)a->kept;
}

static const float *act_in_hidden(const struct xformer_act *a)
{
    return (const float *)(const void *)a->kept;
}

static const int *act_targets(const struct xformer_act *a)
{
    size_t N = (size_t)a->B * a->T;
    size_t in = a->s->is_first ? N * sizeof(int) : N * (size_t)a->s->d.channels * sizeof(float);
    return (const int *)(const void *)(a->kept + in);
}

/* The LLaMA block (exec/xformer_llama.h): x -> rmsnorm -> qkv -> RoPE on q and k (kept rotated,
 * in place) -> GQA attention -> attproj (+x) = res2 -> rmsnorm -> gate | up -> SwiGLU -> fcproj
 * (+res2) = res3. No biases. */
static void llama_layer_forward(struct layer_acts *la, const float *x,
                                const struct layer_params *lp, const struct xformer_dims *d, int B,
                                int T)
{
    size_t N = (size_t)B * T;
    struct xl_block b = block_of(d);
    int C = d->channels, F = d->ffn, W = (int)xl_qkv_width(&b), kvc = (int)b.kvc;
    int hs = C / d->heads;
    rmsnorm_forward(la->ln1, la->ln1_rstd, x, lp->ln1w, N, C);
    matmul_forward(la->qkv, la->ln1, lp->qkvw, NULL, N, C, W);
    rope_apply(la->qkv, B, T, (size_t)W, C, hs, 1);
    rope_apply(la->qkv + C, B, T, (size_t)W, kvc, hs, 1);
    gqa_attention_forward(la->atty, la->att, la->qkv, B, T, C, d->heads, kvc);
    matmul_forward(la->res2, la->atty, lp->attprojw, NULL, N, C, C);
    residual_forward(la->res2, x, N * C);
    rmsnorm_forward(la->ln2, la->ln2_rstd, la->res2, lp->ln2w, N, C);
    if (is_moe(d))
        return; /* the MLP is the caller's (act_run: it exchanges tokens) */
    matmul_forward(la->fch, la->ln2, lp->fcw, NULL, N, C, 2 * F);
    swiglu_forward(la->fch_gelu, la->fch, N, F);
    matmul_forward(la->res3, la->fch_gelu, lp->fcprojw, NULL, N, F, C);
    residual_forward(la->res3, la->res2, N * C);
}

/* Its backward, as layer_backward's (wk: split). dmlp is (N, 2F): d(SwiGLU output) is written
 * into the first half of each row (ldc 2F), then swiglu_backward turns the row into
 * d(gate | up). RoPE's transpose turns d(rotated q, k) into d(q, k) before the qkv GEMM. */
static void llama_layer_backward(float *dres, float *dbuf, float *dqkv, float *datt, float *dmlp,
                                 struct layer_params *gp, const struct layer_acts *la,
                                 const float *x, const struct layer_params *lp,
                                 const struct xformer_dims *d, int B, int T, float **wk)
{
    size_t N = (size_t)B * T;
    struct xl_block b = block_of(d);
    int C = d->channels, F = d->ffn, W = (int)xl_qkv_width(&b), kvc = (int)b.kvc;
    int hs = C / d->heads;
    if (is_moe(d)) /* backward_run left d(ln2) in dbuf */
        goto attention;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)N, F, C, 1.0f, dres, C,
                lp->fcprojw, F, 0.0f, dmlp, 2 * F);
    if (wk == NULL) {
        matmul_backward_weight(gp->fcprojw, NULL, dres, la->fch_gelu, N, F, C);
    } else {
        memcpy(*wk, la->fch_gelu, N * (size_t)F * sizeof(float));
        memcpy(*wk + N * (size_t)F, dres, N * (size_t)C * sizeof(float));
        *wk += N * (size_t)(F + C);
    }
    swiglu_backward(dmlp, la->fch, N, F);
    matmul_backward(dbuf, gp->fcw, NULL, dmlp, la->ln2, lp->fcw, N, C, 2 * F, wk);
attention:
    rmsnorm_backward(dres, gp->ln2w, dbuf, la->res2, lp->ln2w, la->ln2_rstd, N, C);
    matmul_backward(dbuf, gp->attprojw, NULL, dres, la->atty, lp->attprojw, N, C, C, wk);
    gqa_attention_backward(dqkv, datt, dbuf, la->qkv, la->att, B, T, C, d->heads, kvc);
    rope_apply(dqkv, B, T, (size_t)W, C, hs, -1);
    rope_apply(dqkv + C, B, T, (size_t)W, kvc, hs, -1);
    matmul_backward(dbuf, gp->qkvw, NULL, dqkv, la->ln1, lp->qkvw, N, C, W, wk);
    rmsnorm_backward(dres, gp->ln1w, dbuf, x, lp->ln1w, la->ln1_rstd, N, C);
}

static void layer_forward(struct layer_acts *la, const float *x, const struct layer_params *lp,
                          const struct xformer_dims *d, int B, int T)
{
    if (is_llama(d)) {
        llama_layer_forward(la, x, lp, d, B, T);
        return;
    }
    size_t N = (size_t)B * T;
    int C = d->channels, F = d->ffn;
    layernorm_forward(la->ln1, la->ln1_mean, la->ln1_rstd, x, lp->ln1w, lp->ln1b, N, C);
    matmul_forward(la->qkv, la->ln1, lp->qkvw, lp->qkvb, N, C, 3 * C);
    attention_forward(la->atty, la->att, la->qkv, B, T, C, d->heads);
    matmul_forward(la->res2, la->atty, lp->attprojw, lp->attprojb, N, C, C);
    residual_forward(la->res2, x, N * C);
    layernorm_forward(la->ln2, la->ln2_mean, la->ln2_rstd, la->res2, lp->ln2w, lp->ln2b, N, C);
    matmul_forward(la->fch, la->ln2, lp->fcw, lp->fcb, N, C, F);
    gelu_forward(la->fch_gelu, la->fch, N * F);
    matmul_forward(la->res3, la->fch_gelu, lp->fcprojw, lp->fcprojb, N, F, C);
    residual_forward(la->res3, la->res2, N * C);
}

/* dres holds d(res3) on entry and d(x) on return. */
/* One layer's backward. wk NULL: whole (BW). Else split (B): the layer norms' gradients here,
 * the four GEMMs' (input, output gradient) pairs saved at *wk in this order for W
 * (layer_backward_weight): fcproj, fc, attproj, qkv. */
static void layer_backward(float *dres, float *dbuf, float *dqkv, float *datt, float *dgelu,
                           struct layer_params *gp, const struct layer_acts *la, const float *x,
                           const struct layer_params *lp, const struct xformer_dims *d, int B,
                           int T, float **wk)
{
    if (is_llama(d)) {
        llama_layer_backward(dres, dbuf, dqkv, datt, dgelu, gp, la, x, lp, d, B, T, wk);
        return;
    }
    size_t N = (size_t)B * T;
    int C = d->channels, F = d->ffn;
    matmul_backward(dgelu, gp->fcprojw, gp->fcprojb, dres, la->fch_gelu, lp->fcprojw, N, F, C, wk);
    gelu_backward(dgelu, la->fch, dgelu, N * F);
    matmul_backward(dbuf, gp->fcw, gp->fcb, dgelu, la->ln2, lp->fcw, N, C, F, wk);
    layernorm_backward(dres, gp->ln2w, gp->ln2b, dbuf, la->res2, lp->ln2w, la->ln2_mean,
                       la->ln2_rstd, N, C);
    matmul_backward(dbuf, gp->attprojw, gp->attprojb, dres, la->atty, lp->attprojw, N, C, C, wk);
    attention_backward(dqkv, datt, dbuf, la->qkv, la->att, B, T, C, d->heads);
    matmul_backward(dbuf, gp->qkvw, gp->qkvb, dqkv, la->ln1, lp->qkvw, N, C, 3 * C, wk);
    layernorm_backward(dres, gp->ln1w, gp->ln1b, dbuf, x, lp->ln1w, la->ln1_mean, la->ln1_rstd, N,
                       C);
}

/* W of one layer from what its B saved at *wk (advanced past it). */
static void layer_backward_weight(struct layer_params *gp, const struct xformer_dims *d, size_t N,
                                  const float **wk)
{
    int C = d->channels, F = d->ffn;
    struct xl_block blk = block_of(d);
    int gated = is_llama(d) ? 2 : 1, W = (int)xl_qkv_width(&blk);
    struct {
        float *w, *b;
        int in, out;
    } g[4] = {{gp->fcprojw, gp->fcprojb, F, C},
              {gp->fcw, gp->fcb, C, gated * F},
              {gp->attprojw, gp->attprojb, C, C},
              {gp->qkvw, gp->qkvb, C, W}};
    for (int i = is_moe(d) ? 2 : 0; i < 4; i++) { /* a MoE's B added its MLP's */
        const float *inp = *wk, *dout = *wk + N * (size_t)g[i].in;
        matmul_backward_weight(g[i].w, g[i].b, dout, inp, N, g[i].in, g[i].out);
        *wk += N * (size_t)(g[i].in + g[i].out);
    }
}

/* ---- the blocks of a handle (header comment) ---- */

static void act_layer_params(const struct xformer_act *a, int l, struct layer_params *lp,
                             float *base)
{
    layer_params_point(lp, base + a->s->layer_off + (size_t)l * a->s->layer_numel, &a->s->d);
}

/* Layer l's activations in its block; a selective handle's layer k-1 writes its output into
 * the kept input of layer k (its block stops short of res3). */
static void act_layer(const struct xformer_act *a, int l, struct layer_acts *la)
{
    float *p = a->layer[l];
    int short_block = a->bnd != NULL && l == a->k - 1;
    layer_acts_point(la, &p, &a->s->d, (size_t)a->B, (size_t)a->T, !short_block);
    if (short_block)
        la->res3 = a->bnd;
}

/* The input of layer l: the embedding output or the stage input for layer 0, else the output
 * of layer l - 1. */
static const float *act_layer_input(const struct xformer_act *a, int l)
{
    if (l == 0)
        return a->s->is_first ? a->enc : act_in_hidden(a);
    if (a->bnd != NULL && l == a->k)
        return a->bnd;
    struct layer_acts prev;
    act_layer(a, l - 1, &prev);
    return prev.res3;
}

/* Allocates the blocks of layers [from, to), in order (the embedding output first when from is
 * 0 on the first stage, the head last when to is n on the last stage): the order the online
 * memory predictor reads their sizes in (exec/backend.h). A selective handle's layer k-1 block
 * leaves out res3. */
static void act_alloc_blocks(struct xformer_act *a, int from, int to)
{
    const struct xformer_stage *s = a->s;
    size_t B = (size_t)a->B, T = (size_t)a->T, NC = B * T * (size_t)s->d.channels;
    size_t lf = layer_act_floats(&s->d, B, T);
    if (from == 0 && s->is_first)
        a->enc = memcount_alloc(NC * sizeof(float));
    for (int l = from; l < to; l++)
        a->layer[l] = memcount_alloc(
            (lf - (a->bnd != NULL && l == a->k - 1 ? NC : 0)) * sizeof(float));
    if (to == s->n && s->is_last)
        a->head = memcount_alloc(final_act_floats(&s->d, B, T) * sizeof(float));
}

/* Where HEADW starts in the last stage's final block (after the final norm's gain and bias). */
static size_t head_matrix_off(const struct xformer_dims *d)
{
    return tensor_numel(d, XFORMER_LNFW) + tensor_numel(d, XFORMER_LNFB);
}

/* The position table on the first stage, NULL for LLaMA (RoPE). */
static float *stage_wpe(const struct xformer_stage *s, float *base)
{
    return is_llama(&s->d) ? NULL : base + tensor_numel(&s->d, XFORMER_WTE);
}

/* The head on the last layer's output x, its activations in `head`: sets a->loss. */
static void act_run_head(struct xformer_act *a, const float *x, float *head)
{
    struct xformer_stage *s = a->s;
    const struct xformer_dims *d = &s->d;
    int C = d->channels;
    size_t N = (size_t)a->B * a->T;
    struct final_acts fa;
    final_acts_point(&fa, &head, d, (size_t)a->B, (size_t)a->T);
    const float *fp = s->params + s->final_off;
    const float *lnfw = fp, *lnfb = fp + C, *headw = fp + head_matrix_off(d);
    if (is_llama(d))
        rmsnorm_forward(fa.lnf, fa.lnf_rstd, x, lnfw, N, C);
    else
        layernorm_forward(fa.lnf, fa.lnf_mean, fa.lnf_rstd, x, lnfw, lnfb, N, C);
    matmul_forward(fa.probs, fa.lnf, headw, NULL, N, C, d->vocab);
    crossentropy_forward(fa.probs, fa.losses, act_targets(a), N, d->vocab);
    double sum = 0.0;
    for (size_t r = 0; r < N; r++)
        sum += fa.losses[r];
    a->loss = (float)(sum / (double)N);
}

/* Runs layers [from, to) with the activations in their blocks, then the head when to is n:
 * writes out_hidden (if not NULL, non-last stage) or a->loss (last stage). */
static int act_run(struct xformer_act *a, int from, int to, float *out_hidden, struct mt_err *e)
{
    struct xformer_stage *s = a->s;
    const struct xformer_dims *d = &s->d;
    int B = a->B, T = a->T, C = d->channels;
    if (from == 0 && s->is_first)
        encoder_forward(a->enc, act_tokens(a), s->params, stage_wpe(s, s->params), B, T, C);
    for (int l = from; l < to; l++) {
        struct layer_params lp;
        struct layer_acts la;
        act_layer_params(a, l, &lp, s->params);
        act_layer(a, l, &la);
        layer_forward(&la, act_layer_input(a, l), &lp, d, B, T);
        float aux; /* the executor runs without the aux loss (moe_of: coefficient 0) */
        struct moe_dims md = moe_of(d);
        if (is_moe(d)) {
            TRY(moe_forward(&md, s->ep, lp.fcw, la.ln2, B * T, la.res3, &aux, &a->moe[l], e));
            residual_forward(la.res3, la.res2, (size_t)B * T * C);
        }
    }
    if (to < s->n)
        return MT_OK;
    const float *x = act_layer_input(a, s->n);
    if (s->is_last)
        act_run_head(a, x, a->head);
    else if (out_hidden != NULL)
        memcpy(out_hidden, x, (size_t)B * T * C * sizeof(float));
    return MT_OK;
}

/* The forward of layers [0, to) through `scratch`, one layer's worth (after the embedding
 * output on the first stage): residual streams alternate between the scratch layer's res3 and
 * `spare` (when not NULL), so that layer to - 1 writes the spare. Returns the output of layer
 * to - 1. */
static const float *act_run_scratch(struct xformer_act *a, float *scratch, float *spare, int to)
{
    struct xformer_stage *s = a->s;
    const struct xformer_dims *d = &s->d;
    int B = a->B, T = a->T, C = d->channels;
    float *p = scratch;
    const float *x;
    if (s->is_first) {
        float *encoded = take(&p, (size_t)B * T * C);
        encoder_forward(encoded, act_tokens(a), s->params, stage_wpe(s, s->params), B, T, C);
        x = encoded;
    } else {
        x = act_in_hidden(a);
    }
    struct layer_acts la0;
    layer_acts_point(&la0, &p, d, (size_t)B, (size_t)T, 1);
    float *chunk_res3 = la0.res3;
    for (int l = 0; l < to; l++) {
        struct layer_params lp;
        act_layer_params(a, l, &lp, s->params);
        struct layer_acts la = la0;
        /* the spare takes the layers an even number before the last */
        la.res3 = spare != NULL && (to - 1 - l) % 2 == 0 ? spare : chunk_res3;
        layer_forward(&la, x, &lp, d, B, T);
        x = la.res3;
    }
    return x;
}

static int check_tokens(const int *v, size_t n, int V, const char *what, struct mt_err *e)
{
    for (size_t i = 0; i < n; i++)
        if (v[i] < 0 || v[i] >= V)
            return err_set(e, MT_EINVAL, "forward: %s[%zu] = %d outside the vocabulary [0, %d)",
                           what, i, v[i], V);
    return MT_OK;
}

int xformer_forward(struct xformer_stage *s, const int *tokens, const float *in_hidden,
                    const int *targets, int B, int T, enum xformer_keep keep, int ckpt_layers,
                    float *out_hidden, float *out_loss, struct xformer_act **out_act,
                    struct mt_err *e)
{
    const struct xformer_dims *d = &s->d;
    *out_act = NULL;
    if (B < 1 || T < 1 || T > d->max_seq)
        return err_set(e, MT_EINVAL, "forward: micro-batch %d x %d (need B >= 1, 1 <= T <= %d)", B,
                       T, d->max_seq);
    if (keep != XFORMER_KEEP_FULL && keep != XFORMER_KEEP_CHECKPOINT)
        return err_set(e, MT_EINVAL, "forward: unknown keep mode %d", (int)keep);
    if (ckpt_layers < 0)
        return err_set(e, MT_EINVAL, "forward: %d layers to checkpoint", ckpt_layers);
    if (keep != XFORMER_KEEP_FULL && is_moe(d))
        return err_set(e, MT_EUNSUPPORTED,
                       "forward: a checkpointed forward (CFW) of a MoE stage: not implemented "
                       "(its recompute would repeat the token all-to-all)");
    if (s->is_first ? tokens == NULL || in_hidden != NULL : tokens != NULL || in_hidden == NULL)
        return err_set(e, MT_EINVAL, "forward: stage [%d, %d) takes %s", s->first, s->first + s->n,
                       s->is_first ? "tokens" : "a hidden state");
    if (s->is_last ? (targets == NULL || out_loss == NULL) : out_hidden == NULL)
        return err_set(e, MT_EINVAL, "forward: stage [%d, %d) needs %s", s->first, s->first + s->n,
                       s->is_last ? "targets and a loss output" : "an output buffer");
    size_t N = (size_t)B * T, NC = N * (size_t)d->channels;
    if (s->is_first)
        TRY(check_tokens(tokens, N, d->vocab, "tokens", e));
    if (s->is_last)
        TRY(check_tokens(targets, N, d->vocab, "targets", e));

    struct xformer_act *a = xcalloc(1, sizeof *a);
    a->s = s;
    a->B = B;
    a->T = T;
    a->layer = xcalloc((size_t)s->n, sizeof *a->layer);
    a->k = keep == XFORMER_KEEP_FULL ? 0 : ckpt_layers > 0 && ckpt_layers < s->n ? ckpt_layers
                                                                              : s->n;
    a->kept = memcount_alloc(xl_kept_bytes(s->is_first, s->is_last, (size_t)B, (size_t)T,
                                           (size_t)d->channels));
    size_t in_bytes = s->is_first ? N * sizeof(int) : NC * sizeof(float);
    memcpy(a->kept, s->is_first ? (const void *)tokens : (const void *)in_hidden, in_bytes);
    if (s->is_last)
        memcpy(a->kept + in_bytes, targets, N * sizeof(int));
    if (a->k == 0) {
        act_alloc_blocks(a, 0, s->n);
        if (is_moe(d))
            a->moe = xcalloc((size_t)s->n, sizeof *a->moe);
        int rc = act_run(a, 0, s->n, out_hidden, e);
        if (rc != MT_OK) {
            s->live++; /* xformer_act_free counts it off */
            xformer_act_free(a);
            return rc;
        }
        a->full = 1;
    } else if (a->k == s->n) {
        float *scratch = memcount_alloc(
            cfw_scratch_floats(d, s->is_first, s->is_last, s->n, (size_t)B, (size_t)T) *
            sizeof(float));
        /* [enc] [one layer] [spare when n >= 2] [head]: cfw_scratch_floats */
        float *p = scratch + (s->is_first ? NC : 0) + layer_act_floats(d, (size_t)B, (size_t)T);
        const float *x = act_run_scratch(a, scratch, s->n >= 2 ? p : NULL, s->n);
        if (s->is_last)
            act_run_head(a, x, p + (s->n >= 2 ? NC : 0));
        else
            memcpy(out_hidden, x, NC * sizeof(float));
        memcount_free(scratch);
    } else {
        /* selective: layers [0, k) through scratch into the kept input of layer k, then
         * layers [k, n) and the head into their own blocks */
        a->bnd = memcount_alloc(NC * sizeof(float));
        float *scratch = memcount_alloc(((s->is_first ? NC : 0) +
                                         layer_act_floats(d, (size_t)B, (size_t)T)) *
                                        sizeof(float));
        act_run_scratch(a, scratch, a->bnd, a->k);
        memcount_free(scratch);
        act_alloc_blocks(a, a->k, s->n);
        act_run(a, a->k, s->n, out_hidden, e); /* dense: cannot fail */
    }
    if (s->is_last)
        *out_loss = a->loss;
    s->live++;
    *out_act = a;
    return MT_OK;
}

int xformer_recompute(struct xformer_act *a, struct mt_err *e)
{
    if (a->full)
        return err_set(e, MT_EINVAL, "recompute: micro-batch already holds full activations");
    /* every checkpointed layer (the head too when the whole stage was) */
    int to = a->k == a->s->n ? a->s->n : a->k;
    act_alloc_blocks(a, 0, to);
    TRY(act_run(a, 0, to, NULL, e)); /* a MoE stage is never checkpointed (xformer_forward) */
    a->full = 1;
    return MT_OK;
}

/* What a B keeps for its W: the stage, the micro-batch's shape, and the saved GEMM inputs and
 * output gradients (model/xformer_layout.h xl_w_keep_floats), layers last to first, then the
 * head's. */
struct xformer_wgrad {
    struct xformer_stage *s;
    int B, T;
    float *buf; /* memcount */
};

static int backward_run(struct xformer_act **act, const float *dout, float *din, float *wk,
                        struct mt_err *e);

int xformer_backward(struct xformer_act **act, const float *dout, float *din, struct mt_err *e)
{
    return backward_run(act, dout, din, NULL, e);
}

int xformer_backward_input(struct xformer_act **act, const float *dout, float *din,
                           struct xformer_wgrad **out_w, struct mt_err *e)
{
    struct xformer_act *a = *act;
    const struct xformer_dims *d = &a->s->d;
    *out_w = NULL;
    struct xformer_wgrad *w = xcalloc(1, sizeof *w);
    w->s = a->s;
    w->B = a->B;
    w->T = a->T;
    struct xl_block blk = block_of(d);
    w->buf = memcount_alloc(
        xl_block_w_keep_floats(&blk, a->s->is_last, (size_t)a->s->n, (size_t)a->B, (size_t)a->T) *
        sizeof(float));
    int rc = backward_run(act, dout, din, w->buf, e);
    if (rc != MT_OK) {
        xformer_wgrad_free(w);
        return rc;
    }
    *out_w = w;
    return MT_OK;
}

int xformer_backward_weight(struct xformer_wgrad **wg, struct mt_err *e)
{
    (void)e;
    struct xformer_wgrad *w = *wg;
    struct xformer_stage *s = w->s;
    const struct xformer_dims *d = &s->d;
    size_t N = (size_t)w->B * w->T;
    const float *wk = w->buf;
    if (s->is_last) { /* the head first, as B saved it */
        float *fg = s->grads + s->final_off;
        matmul_backward_weight(fg + head_matrix_off(d), NULL, wk + N * (size_t)d->channels, wk, N,
                               d->channels, d->vocab);
        wk += N * (size_t)(d->channels + d->vocab);
    }
    for (int l = s->n - 1; l >= 0; l--) {
        struct layer_params gp;
        layer_params_point(&gp, s->grads + s->layer_off + (size_t)l * s->layer_numel, d);
        layer_backward_weight(&gp, d, N, &wk);
    }
    xformer_wgrad_free(w);
    *wg = NULL;
    return MT_OK;
}

void xformer_wgrad_free(struct xformer_wgrad *w)
{
    if (w == NULL)
        return;
    memcount_free(w->buf);
    free(w);
}

static int backward_run(struct xformer_act **act, const float *dout, float *din, float *wk,
                        struct mt_err *e)
{
    struct xformer_act *a = *act;
    struct xformer_stage *s = a->s;
    const struct xformer_dims *d = &s->d;
    if (!a->full)
        return err_set(e, MT_EINVAL, "backward: micro-batch was checkpointed and not recomputed");
    if (s->is_last ? dout != NULL : dout == NULL)
        return err_set(e, MT_EINVAL, "backward: stage [%d, %d) %s an output gradient", s->first,
                       s->first + s->n, s->is_last ? "takes no" : "needs");
    if (!s->is_first && din == NULL)
        return err_set(e, MT_EINVAL, "backward: stage [%d, %d) needs an input-gradient buffer",
                       s->first, s->first + s->n);
    int B = a->B, T = a->T, C = d->channels;
    size_t N = (size_t)B * T, NC = N * C;

    float *scratch = memcount_alloc(bw_scratch_floats(d, (size_t)B, (size_t)T) * sizeof(float));
    float *q = scratch;
    float *dres = take(&q, NC), *dbuf = take(&q, NC);
    struct xl_block blk = block_of(d);
    float *dqkv = take(&q, N * xl_qkv_width(&blk)), *datt = take(&q, (size_t)T * T);
    float *dgelu = take(&q, N * (size_t)d->ffn * (is_llama(d) ? 2 : 1));

    if (s->is_last) {
        float *hp = a->head;
        struct final_acts fa;
        final_acts_point(&fa, &hp, d, (size_t)B, (size_t)T);
        /* the input of the final layernorm: the last layer's output */
        const float *xlast = act_layer_input(a, s->n);
        float *fg = s->grads + s->final_off;
        const float *fp = s->params + s->final_off;
        memset(dres, 0, NC * sizeof(float));
        crossentropy_backward(fa.probs, act_targets(a), s->loss_scale / (float)N, N, d->vocab);
        size_t ho = head_matrix_off(d);
        matmul_backward(dbuf, fg + ho, NULL, fa.probs, fa.lnf, fp + ho, N, C, d->vocab,
                        wk ? &wk : NULL);
        if (is_llama(d))
            rmsnorm_backward(dres, fg, dbuf, xlast, fp, fa.lnf_rstd, N, C);
        else
            layernorm_backward(dres, fg, fg + C, dbuf, xlast, fp, fa.lnf_mean, fa.lnf_rstd, N, C);
    } else {
        memcpy(dres, dout, NC * sizeof(float));
    }
    for (int l = s->n - 1; l >= 0; l--) {
        struct layer_params lp, gp;
        act_layer_params(a, l, &lp, s->params);
        act_layer_params(a, l, &gp, s->grads);
        struct layer_acts la;
        act_layer(a, l, &la);
        struct moe_dims md = moe_of(d);
        /* a MoE MLP: the exchanges' transposes and every MoE gradient now, even in a split
         * backward's B (its W then adds the attention's GEMMs only); d(ln2) into dbuf */
        if (is_moe(d) &&
            moe_backward(&md, s->ep, lp.fcw, gp.fcw, &a->moe[l], dres, 1.0f, dbuf, e) != MT_OK) {
            memcount_free(scratch);
            return err_wrap(e, "backward of layer %d", s->first + l);
        }
        layer_backward(dres, dbuf, dqkv, datt, dgelu, &gp, &la, act_layer_input(a, l), &lp, d, B,
                       T, wk ? &wk : NULL);
    }
    if (s->is_first)
        encoder_backward(s->grads, stage_wpe(s, s->grads), dres, act_tokens(a), B, T, C);
    else
        memcpy(din, dres, NC * sizeof(float));
    memcount_free(scratch);
    xformer_act_free(a);
    *act = NULL;
    return MT_OK;
}

void xformer_act_free(struct xformer_act *a)
{
    if (a == NULL)
        return;
    memcount_free(a->head);
    for (int l = a->s->n - 1; l >= 0; l--)
        memcount_free(a->layer[l]);
    memcount_free(a->enc);
    memcount_free(a->bnd);
    memcount_free(a->kept);
    free(a->layer);
    for (int l = 0; a->moe && l < a->s->n; l++)
        moe_act_free(a->moe[l]);
    free(a->moe);
    a->s->live--;
    free(a);
}

int xformer_act_nblocks(const struct xformer_act *a)
{
    return a->s->n + 4;
}

void xformer_act_blocks(struct xformer_act *a, void ***slots)
{
    int at = 0;
    slots[at++] = (void **)&a->kept;
    slots[at++] = (void **)&a->enc;
    for (int l = 0; l < a->s->n; l++)
        slots[at++] = (void **)&a->layer[l];
    slots[at++] = (void **)&a->head;
    slots[at++] = (void **)&a->bnd;
}

int xformer_act_is_full(const struct xformer_act *a)
{
    return a->full;
}

float xformer_act_loss(const struct xformer_act *a)
{
    return a->loss;
}
