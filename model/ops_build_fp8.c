/* model/ops_build_fp8.c: the FP8 linear layer as the builders list it (model/ops_shape.h
 * ops_push_linear, ops_push_norm_linear, ops_push_fp8_gemm, ops_push_tp_entry_linear): the GEMM
 * in FP8, the quantize kernel Transformer Engine runs before it, what it keeps, and the FP8
 * all-gather of a sequence-parallel entry. The recipe's figures are model/fp8.c's; with FP8
 * off each helper is its bf16 counterpart of model/ops_build.c. */
#include <config.h>

#include "model/config.h"
#include "model/fp8.h"
#include "model/ops.h"
#include "model/ops_shape.h"

/* Transformer Engine's quantization around an FP8 linear layer (model/fp8.c): the forward
 * casts its bf16 input into the recipe's copies (a rowwise one for this GEMM, a columnwise one
 * saved for the weight gradient: on Hopper a transposed one), the backward its output gradient
 * likewise (rowwise for the input gradient, columnwise for the weight gradient); current
 * scaling reads each tensor once more for its amax. The weight's cast is once an iteration
 * (model/cost.c, ops_build_step_fp8). */
struct op *ops_push_fp8_gemm(struct op_list *l, const struct shape *sh, struct op *o,
                             double in_elems, double out_elems)
{
    const struct fp8_rules *r = &sh->fp8;
    double reads = r->amax_pass ? 2 : 1, written = r->copies * r->act_bytes;
    struct op cast = {.kind = OP_MEMORY, .name = "fp8_quantize", .site = o->site,
                      .dtype = OP_FP8,
                      .fw_bytes = (reads * sh->e + written) * in_elems,
                      .bw_bytes = (reads * sh->e + written) * out_elems,
                      .source = "FP8 quantize of the next GEMM's input (forward) and output "
                                "gradient (backward): reads bf16 (twice with current scaling's "
                                "amax), writes the recipe's copies (Transformer Engine "
                                "performance_considerations.rst); keeps nothing itself"};
    op_list_push(l, &cast);
    o->dtype = OP_FP8;
    /* the columnwise copy of the input is what the weight gradient reads (TE saves it, not the
     * bf16 input); the split backward leaves that and the output gradient's columnwise copy */
    o->keep_bytes = r->act_bytes * in_elems;
    o->w_keep_bytes *= r->act_bytes / sh->e;
    return op_list_push(l, o);
}

struct op *ops_push_linear(struct op_list *l, const struct shape *sh, enum op_site site,
                           const char *name, const char *source, double m, double n, double k,
                           double params, double keep)
{
    if (sh->fp8.recipe == FP8_NONE)
        return ops_push_gemm(l, sh, site, name, source, m, n, k, params, keep);
    struct op o = {.kind = OP_GEMM, .name = name, .source = source, .site = site,
                   .m = m, .n = n, .k = k, .count = 1, .weight = true, .params = params};
    o.w_keep_bytes = sh->e * m * k + sh->e * m * n;
    /* the input this rank quantizes: the one it keeps (a sequence-split shard is quantized
     * before its FP8 all-gather); an input another op keeps (MLA's shared one) is quantized by
     * this layer too, and its FP8 copy kept here */
    double in_elems = keep > 0 ? keep / sh->e : m * k;
    return ops_push_fp8_gemm(l, sh, &o, in_elems, m * n);
}

struct op *ops_push_norm_linear(struct op_list *l, const struct shape *sh, enum op_site site,
                                const char *name, const char *source, double m, double n,
                                double k, double params, double keep)
{
    if (sh->fp8.recipe == FP8_NONE || sh->fp8.amax_pass || !(keep > 0))
        return ops_push_linear(l, sh, site, name, source, m, n, k, params, keep);
    size_t at = l->n;
    while (at > 0 && l->op[at - 1].kind != OP_MEMORY)
        at--; /* past the entry's collectives */
    double in_elems = keep / sh->e;
    struct op *o = ops_push_linear(l, sh, site, name, source, m, n, k, params, keep);
    if (at == 0)
        return o;
    /* the norm writes no bf16 output; the quantize op only writes the FP8 copies */
    struct op *norm = &l->op[at - 1], *cast = &l->op[l->n - 2];
    norm->fw_bytes -= sh->e * in_elems;
    cast->fw_bytes -= sh->e * in_elems;
    cast->source = "FP8 quantize fused into the norm before it (TE LayerNormLinear): the FP8 "
                   "copies of the norm's output written in its kernel (forward); the output "
                   "gradient's cast (backward)";
    return &l->op[l->n - 1];
}

void ops_push_tp_entry_linear(struct op_list *l, const struct shape *sh, enum op_site site,
                              const char *fw_name, const char *bw_name,
                              const char *regather_name)
{
    if (sh->fp8.recipe == FP8_NONE || !sh->sp) {
        ops_push_tp_entry(l, sh, site, fw_name, bw_name, regather_name);
        return;
    }
    /* Transformer Engine gathers the quantized shard (fp8_current_scaling.rst, "Quantized
     * all-gather"), current scaling after an all-reduce of the shards' amax (one fp32) */
    double elems = sh->tokens * sh->h, q = sh->fp8.act_bytes;
    if (sh->fp8.amax_reduce) {
        ops_push_tp_coll(l, sh, site, "tp_amax_reduce", COLL_ALL_REDUCE, 4, PASS_FW, false);
        l->op[l->n - 1].dtype = OP_FP32;
    }
    ops_push_tp_coll(l, sh, site, fw_name, COLL_ALL_GATHER, q * elems, PASS_FW, false);
    l->op[l->n - 1].dtype = OP_FP8;
    ops_push_tp_coll(l, sh, site, bw_name, COLL_REDUCE_SCATTER, sh->e * elems, PASS_B, false);
    ops_push_tp_coll(l, sh, site, regather_name, COLL_ALL_GATHER, q * elems, PASS_B, true);
    l->op[l->n - 1].dtype = OP_FP8;
}
