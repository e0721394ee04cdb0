/* model/ops_recompute.c: activation recomputation inside a block (config.recompute, the
 * --recompute flag): which tensors of a block's forward are kept for its backward and which the
 * backward computes again, applied to the block's op list after it is built
 * (ops_build_block_par). Each op keeps its inputs (model/ops_build.c), so a policy that
 * recomputes the producer of an op's input drops that op's keep, and an op the policy reruns
 * costs its forward again in the backward (op.recompute, model/cost.c cost_op_in_list_us).
 * What a block computes again lives only while its backward runs: the stage's backward
 * workspace holds one block's worth (op.remat_bytes; model/cost.c).
 *
 *   selective (Megatron-LM's --recompute-granularity selective; Korthikanti et al. 2022,
 *     "selective activation recomputation"): the core attention runs again in the backward.
 *     Flash attention keeps q, k, v as the recomputation's inputs and drops only its fp32
 *     log-sum-exp (its output is the projection's input, kept there); eager attention drops the
 *     softmax and its dropout, the 5as^2b of Korthikanti's Table 2.
 *   op (torchtitan's selective AC with selective_ac_option "op", torchtitan/distributed/
 *     activation_checkpoint.py at 9dec370, _save_list and _custom_policy): the outputs of
 *     matmuls, of scaled-dot-product attention and of reduce-scatters are saved, but only every
 *     other matmul's ("only save every other mm": the 1st, 3rd, ... counted in a block);
 *     everything else is recomputed. In torchtitan's Llama block the matmuls run wq wk wv wo w1
 *     w3 w2 (Attention.forward, FeedForward.forward: w2(silu(w1 x) * w3 x)), so wq, wv, w1 and
 *     w2's outputs and the attention's output and log-sum-exp are kept beside the block's
 *     input, and wk, wo and w3 run again with every norm, rotary, activation and residual.
 *     Defined on that block only: a GELU MLP, MLA and a mixture of experts are refused.
 *   full (Megatron-LM's --recompute-granularity full --recompute-method uniform
 *     --recompute-num-layers 1; torchtitan's mode "full"): each block keeps its input alone and
 *     its whole forward runs again in its backward, TP collectives included. */
#include <config.h>
#include "model/ops_shape.h"

#include <math.h>
#include <string.h>

#include "model/moe.h"
#include "util/err.h"
#include "util/str.h"

static const char *const recompute_names[RECOMPUTE__COUNT] = {"none", "selective", "op", "full"};

int config_recompute_parse(const char *s, enum recompute_mode *out, struct mt_err *e)
{
    int i = str_index_of(s, recompute_names, RECOMPUTE__COUNT);
    if (i >= 0) {
        *out = (enum recompute_mode)i;
        return MT_OK;
    }
    return err_set(e, MT_EINVAL, "unknown recompute '%s' (one of: none selective op full)", s);
}

const char *config_recompute_name(enum recompute_mode r)
{
    return (unsigned)r < RECOMPUTE__COUNT ? recompute_names[r] : "none";
}

int config_validate_recompute(const struct config *c, struct mt_err *e)
{
    if (c->recompute == RECOMPUTE_NONE)
        return MT_OK;
    if (config_framework(c) == FRAMEWORK_MEGATRON_DS_2021)
        return err_set(e, MT_EINVAL,
                       "recompute: '%s' needs the op list, which the paper's 2021 estimate "
                       "(framework megatron-deepspeed-2021) does not price; checkpoint its "
                       "stages with Mario's passes (mario-tui optimize)",
                       config_recompute_name(c->recompute));
    if (c->recompute != RECOMPUTE_OP)
        return MT_OK;
    const struct model_spec *m = &c->model;
    const char *why = moe_enabled(m)                    ? "a mixture of experts"
                      : m->mla.kv_lora_rank > 0         ? "multi-head latent attention"
                      : config_mlp(m) != MLP_SWIGLU     ? "an MLP that is not SwiGLU"
                      : config_attention(c) != ATTN_FLASH ? "eager attention (no SDPA)"
                                                          : NULL;
    if (why != NULL)
        return err_set(e, MT_EINVAL,
                       "recompute: 'op' is torchtitan's per-op policy on its Llama block (wq wk "
                       "wv wo w1 w3 w2, every other matmul's output kept, SDPA's); this model has "
                       "%s (use selective or full)",
                       why);
    return MT_OK;
}

static bool named(const struct op *o, const char *name)
{
    return o->name != NULL && strcmp(o->name, name) == 0;
}

/* op.keep_bytes := keep, op.recompute := share; what it no longer keeps is rematerialized */
static void set(struct op *o, double keep, double share)
{
    if (keep < o->keep_bytes)
        o->remat_bytes += o->keep_bytes - keep;
    o->keep_bytes = keep;
    o->recompute = share;
}

static void apply_full(struct op_list *l, size_t from)
{
    for (size_t i = from; i < l->n; i++) /* the first op (the norm) keeps the block's input */
        set(&l->op[i], i == from ? l->op[i].keep_bytes : 0, 1);
}

static void apply_selective(const struct shape *sh, struct op_list *l, size_t from)
{
    double lse = 4 * sh->b * sh->heads * sh->s; /* the fp32 log-sum-exp of each row */
    for (size_t i = from; i < l->n; i++) {
        struct op *o = &l->op[i];
        if (o->kind == OP_ATTENTION) {
            set(o, fmax(0, o->keep_bytes - (o->flash ? lse : 0)), 1);
            lse = 0; /* a CP ring's pieces: the first keeps it (model/ops_build_cp.c) */
        } else if (named(o, "attn_softmax") || named(o, "attn_dropout")) {
            set(o, 0, 1);
        }
    }
}

/* torchtitan's policy on the fused records of its Llama block: [wq | wk | wv] is one GEMM
 * (wk's share runs again), [w1 | w3] another (w3's half). */
static void apply_op(const struct shape *sh, struct op_list *l, size_t from)
{
    double e = sh->e, T = sh->tokens;
    double lse = 4 * sh->b * sh->heads * sh->s;
    for (size_t i = from; i < l->n; i++) {
        struct op *o = &l->op[i];
        if (i == from) /* the norm: its input is the block's, kept; it runs again */
            set(o, o->keep_bytes, 1);
        else if (named(o, "qkv"))
            set(o, 0, sh->kv_w / (sh->q_w + 2 * sh->kv_w));
        else if (o->kind == OP_ATTENTION) /* SDPA saved; its q (wq's, unrotated) and v kept */
            set(o, e * T * (sh->q_w + sh->kv_w) + lse, 0), lse = 0;
        else if (named(o, "proj")) /* wo: its input (SDPA's output) kept, it runs again */
            set(o, o->keep_bytes, 1);
        else if (named(o, "gate_up"))
            set(o, 0, 0.5);
        else if (named(o, "swiglu")) /* w1's output kept; w3's and silu recomputed */
            set(o, e * T * sh->ffn, 1);
        else if (named(o, "down")) /* w2's output saved; its input (the product) recomputed */
            set(o, 0, 0);
        else if (o->kind == OP_COLLECTIVE) /* reduce-scatters saved, the others run again */
            set(o, o->keep_bytes, o->pass == PASS_FW && o->coll != COLL_REDUCE_SCATTER ? 1 : 0);
        else if (o->kind == OP_MEMORY) /* norms, rotary, residuals, casts */
            set(o, 0, 1);
    }
}

void ops_apply_recompute(const struct config *c, const struct shape *sh, struct op_list *l,
                         size_t from)
{
    switch (c->recompute) {
    case RECOMPUTE_FULL: apply_full(l, from); break;
    case RECOMPUTE_SELECTIVE: apply_selective(sh, l, from); break;
    case RECOMPUTE_OP: apply_op(sh, l, from); break;
    default: break;
    }
}
