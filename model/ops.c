/* model/ops.c: the op registry of model/ops.h: one formula per kind for FLOPs and HBM bytes,
 * and the list the builders append to. */
#include <config.h>
#include "model/ops.h"

#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

void op_list_init(struct op_list *l)
{
    memset(l, 0, sizeof *l);
}

void op_list_fini(struct op_list *l)
{
    free(l->op);
    memset(l, 0, sizeof *l);
}

struct op *op_list_push(struct op_list *l, const struct op *o)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 32;
        l->op = xreallocarray(l->op, l->cap, sizeof *l->op);
    }
    l->op[l->n] = *o;
    return &l->op[l->n++];
}

/* Query-key pairs the kernel computes: s_q x s_kv, or under a causal mask the lower triangle
 * with its diagonal (each query sees the keys up to its own position; with s_kv > s_q the
 * queries are the last s_q positions, as in a chunked or context-parallel block). */
static double attn_pairs(const struct op *o, bool causal_skip)
{
    double q = o->s_q, kv = o->s_kv;
    if (!(o->causal && causal_skip))
        return q * kv;
    if (kv >= q) /* every query sees kv - q earlier keys, then a triangle of q */
        return q * (kv - q) + q * (q + 1) / 2;
    return kv * (kv + 1) / 2;
}

/* Forward FLOPs of the attention core: Q K^T (2 d a pair) and P V (2 d_v a pair). */
static double attn_fw_flops(const struct op *o, bool causal_skip)
{
    double dv = o->head_dim_v > 0 ? o->head_dim_v : o->head_dim;
    return 2 * o->batch * o->heads * attn_pairs(o, causal_skip) * (o->head_dim + dv);
}

static double gemm_flops(const struct op *o, enum op_pass p)
{
    double one = 2 * o->m * o->n * o->k * o->count;
    switch (p) {
    case PASS_FW: return one;
    case PASS_B: return o->weight ? one : 2 * one; /* dX; without a weight, both inputs' grads */
    case PASS_W: return o->weight ? one : 0;       /* dW */
    default: return 0;
    }
}

/* FlashAttention-2's backward (Dao 2023, §3.2, Alg. 2): S = Q K^T again, dV = P^T dO,
 * dP = dO V^T, dS's dQ = dS K and dK = dS^T Q: 5 products to the forward's 2, 2.5x. The eager
 * backward keeps P and runs 4 products, 2x. */
static double attn_flops(const struct op *o, enum op_pass p, bool causal_skip)
{
    double fw = attn_fw_flops(o, causal_skip);
    if (p == PASS_FW)
        return fw;
    if (p == PASS_B)
        return o->flash ? 2.5 * fw : 2 * fw;
    return 0;
}

double op_flops(const struct op *o, enum op_pass p)
{
    switch (o->kind) {
    case OP_GEMM:
    case OP_GROUPED_GEMM: return gemm_flops(o, p);
    case OP_ATTENTION: return attn_flops(o, p, o->flash); /* eager masks the whole square */
    default: return 0;
    }
}

double op_model_flops(const struct op *o, enum op_pass p)
{
    switch (o->kind) {
    case OP_GEMM:
    case OP_GROUPED_GEMM: return gemm_flops(o, p);
    case OP_ATTENTION: return p == PASS_FW ? attn_fw_flops(o, false)
                              : p == PASS_B ? 2 * attn_fw_flops(o, false) : 0;
    default: return 0;
    }
}

double op_coll_bus_factor(enum op_coll c, int n)
{
    if (n <= 1 && c != COLL_SEND_RECV)
        return 0;
    switch (c) {
    case COLL_ALL_REDUCE: return 2 * (double)(n - 1) / n;
    case COLL_ALL_GATHER:
    case COLL_REDUCE_SCATTER:
    case COLL_ALL_TO_ALL: return (double)(n - 1) / n;
    default: return 1;
    }
}

double op_dtype_bytes(enum op_dtype d)
{
    switch (d) {
    case OP_FP32: return 4;
    case OP_FP8: return 1;
    default: return 2;
    }
}

double op_hbm_bytes(const struct op *o, enum op_pass p)
{
    double e = op_dtype_bytes(o->dtype);
    switch (o->kind) {
    case OP_MEMORY: return p == PASS_FW ? o->fw_bytes : p == PASS_B ? o->bw_bytes : 0;
    case OP_GEMM:
    case OP_GROUPED_GEMM: {
        if (gemm_flops(o, p) <= 0)
            return 0;
        /* each operand read once, the result written once (the pass's own product shapes) */
        double mk = o->m * o->k, kn = o->k * o->n, mn = o->m * o->n;
        double one = p == PASS_FW ? mk + kn + mn : p == PASS_B ? mn + kn + mk : mk + mn + kn;
        if (o->dtype == OP_FP8) {
            /* FP8 operands in, a bf16 result out (Transformer Engine's FP8 GEMMs write the
             * high-precision output): the pass's two inputs at 1 byte, its output at 2 */
            double out = p == PASS_FW ? mn : p == PASS_B ? mk : kn;
            one += out;
        }
        return e * one * o->count * (p == PASS_B && !o->weight ? 2 : 1);
    }
    case OP_ATTENTION: {
        /* flash: Q, K, V read, O written (forward); the backward reads them with dO, writes
         * dQ, dK, dV */
        double dv = o->head_dim_v > 0 ? o->head_dim_v : o->head_dim;
        double q = o->batch * o->s_q * o->heads * o->head_dim;
        double kv = o->batch * o->s_kv * o->kv_heads * (o->head_dim + dv);
        double out = o->batch * o->s_q * o->heads * dv;
        if (p == PASS_FW)
            return e * (q + kv + out);
        return p == PASS_B ? e * 2 * (q + kv + 2 * out) : 0;
    }
    default: return 0;
    }
}

const char *op_kind_name(enum op_kind k)
{
    static const char *const n[OP_KIND__COUNT] = {"gemm", "grouped_gemm", "attention", "memory",
                                                  "collective"};
    return (unsigned)k < OP_KIND__COUNT ? n[k] : "?";
}

const char *op_coll_name(enum op_coll c)
{
    static const char *const n[COLL__COUNT] = {"all_reduce", "all_gather", "reduce_scatter",
                                               "all_to_all", "send_recv"};
    return (unsigned)c < COLL__COUNT ? n[c] : "?";
}

const char *op_link_name(enum op_link l)
{
    static const char *const n[LINK__COUNT] = {"nvlink", "network", "pcie"};
    return (unsigned)l < LINK__COUNT ? n[l] : "?";
}

const char *op_pass_name(enum op_pass p)
{
    static const char *const n[PASS__COUNT] = {"fw", "b", "w"};
    return (unsigned)p < PASS__COUNT ? n[p] : "?";
}

const char *op_dtype_name(enum op_dtype d)
{
    static const char *const n[OP_DTYPE__COUNT] = {"bf16", "fp16", "fp32", "fp8"};
    return (unsigned)d < OP_DTYPE__COUNT ? n[d] : "?";
}
