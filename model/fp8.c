/* model/fp8.c: the FP8 recipes of model/fp8.h, their checks and their rules.
 *
 * Sources, restated (Transformer Engine docs/features/low_precision_training/, read at
 * NVIDIA/TransformerEngine's main of 2026; Megatron-LM megatron/core/transformer/
 * transformer_config.py and megatron/training/arguments.py):
 *   - A linear layer runs three GEMMs: forward (input x weight^T), the input gradient
 *     (output_grad x weight) and the weight gradient (output_grad^T x input). The forward uses
 *     each tensor rowwise, the backward needs the input, the weight and the output gradient
 *     columnwise too (performance_considerations.rst, Table 2).
 *   - Hopper's FP8 GEMMs are TN only: a columnwise FP8 tensor is a physically transposed copy.
 *     Blackwell reads any layout, so a per-tensor-scaled tensor serves both usages from one
 *     copy (ibid., "Architecture differences"). MXFP8's rowwise (1x32) and columnwise (32x1)
 *     scales differ, so both copies are quantized from the high-precision data even on
 *     Blackwell (mxfp8.rst, "Handling transposes"); so are blockwise's 1x128 activation copies
 *     (fp8_blockwise_scaling.rst).
 *   - Scales: blockwise one fp32 per 128 values of an activation (1x128) and per 128x128 block
 *     of a weight; MXFP8 one E8M0 byte per 32 values (ibid.).
 *   - Current scaling (Float8CurrentScaling, Megatron's "tensorwise") computes the amax of the
 *     tensor it is about to cast; a tensor all-gathered under sequence parallelism has its
 *     amax all-reduced first so that every rank casts with one scale, and is gathered in FP8
 *     (fp8_current_scaling.rst, "Distributed training"). Delayed scaling takes the scale from
 *     the amax history and reduces the amaxes once a step (fp8_delayed_scaling.rst): the amax
 *     comes out of the cast kernel itself.
 *   - Memory: TE keeps the weights in high precision and quantizes them before the GEMM;
 *     "FP8 training does not always reduce memory" (performance_considerations.rst, "Memory
 *     usage"): the bf16 weight stays, its FP8 copies are added; the input saved for the weight
 *     gradient is the columnwise FP8 copy.
 *   - Megatron's --fp8-param-gather: "keep the compute param in fp8 (do not use any other
 *     intermediate dtype) and perform the param all-gather in fp8" (arguments.py); the bf16
 *     compute copy goes, the fp32 master in the optimizer stays.
 *   - GEMM rates: TE's speedups.rst measures, for a 5B model (h 4096, ffn 16384) on H200, the
 *     linear layers' GEMMs with their quantization at 1.69x bf16 for delayed scaling, 1.57x
 *     for current scaling and 1.41x for blockwise, and the pre-quantized FP8 GEMM at 1.92x.
 *     Blockwise GEMMs are emulated on Hopper (fp8_blockwise_scaling.rst): their kernel is
 *     taken at 1.41 / 1.57 = 0.90 of the tensorwise one's rate (the whole gap of the two
 *     autocast figures put on the GEMM: an upper bound on its slowdown, since blockwise's
 *     quantization moves a little more than current scaling's). The tensorwise ceiling itself
 *     is the device's measured FP8 MAMF (model/presets.c: gemm_eff_fp8, mamf-finder). */
#include <config.h>
#include "model/fp8.h"


#include "model/framework.h"
#include "util/err.h"
#include "util/str.h"

static const char *const recipe_names[FP8_RECIPE__COUNT] = {"none", "delayed", "tensorwise",
                                                            "blockwise", "mxfp8"};
static const char *const format_names[FP8_FORMAT__COUNT] = {"hybrid", "e4m3"};

int fp8_recipe_parse(const char *s, enum fp8_recipe *out, struct mt_err *e)
{
    int i = str_index_of(s, recipe_names, FP8_RECIPE__COUNT);
    if (i >= 0) {
        *out = (enum fp8_recipe)i;
        return MT_OK;
    }
    return err_set(e, MT_EINVAL, "unknown FP8 recipe '%s' (one of: %s)", s,
                   fp8_recipe_names_line());
}

const char *fp8_recipe_name(enum fp8_recipe r)
{
    return (unsigned)r < FP8_RECIPE__COUNT ? recipe_names[r] : "?";
}

const char *fp8_recipe_names_line(void)
{
    return "none delayed tensorwise blockwise mxfp8";
}

int fp8_format_parse(const char *s, enum fp8_format *out, struct mt_err *e)
{
    int i = str_index_of(s, format_names, FP8_FORMAT__COUNT);
    if (i >= 0) {
        *out = (enum fp8_format)i;
        return MT_OK;
    }
    return err_set(e, MT_EINVAL, "unknown FP8 format '%s' (one of: hybrid e4m3)", s);
}

const char *fp8_format_name(enum fp8_format f)
{
    return (unsigned)f < FP8_FORMAT__COUNT ? format_names[f] : "?";
}

bool fp8_on(const struct config *c)
{
    return c->cluster.fp8_recipe != FP8_NONE;
}

#define NEED(cond, ...)                                                                            \
    do {                                                                                           \
        if (!(cond))                                                                               \
            return err_set(e, MT_EINVAL, __VA_ARGS__);                                             \
    } while (0)

int config_validate_fp8(const struct config *c, struct mt_err *e)
{
    const struct cluster_spec *k = &c->cluster;
    NEED((unsigned)k->fp8_recipe < FP8_RECIPE__COUNT, "cluster.fp8_recipe: unknown recipe");
    NEED((unsigned)k->fp8_format < FP8_FORMAT__COUNT, "cluster.fp8_format: unknown format");
    if (!fp8_on(c)) {
        NEED(k->fp8_format == FP8_FORMAT_HYBRID,
             "cluster.fp8_format: %s given without cluster.fp8_recipe (the GEMMs are bf16)",
             fp8_format_name(k->fp8_format));
        NEED(!k->fp8_param_gather,
             "cluster.fp8_param_gather: needs cluster.fp8_recipe (FP8 weights to gather)");
        return MT_OK;
    }
    const char *r = fp8_recipe_name(k->fp8_recipe);
    NEED(k->device.fp8_peak_flops > 0,
         "cluster.fp8_recipe: %s needs FP8 tensor cores; the device %s has none "
         "(fp8_peak_flops 0)", r, k->device.name);
    NEED(k->fp8_recipe != FP8_MXFP8 || k->device.mxfp8,
         "cluster.fp8_recipe: mxfp8 needs Blackwell's block-scaled tensor cores (an E8M0 scale "
         "per 32 values in the MMA); the device %s has none (use delayed, tensorwise or "
         "blockwise)", k->device.name);
    NEED(config_framework(c) != FRAMEWORK_MEGATRON_DS_2021,
         "cluster.fp8_recipe: the 2021 Megatron-DeepSpeed stack has no FP8 (use framework "
         "megatron-core or torchtitan)");
    NEED(!c->unit.enabled,
         "cluster.fp8_recipe: unit costs give whole-share costs; FP8 needs the op model");
    NEED(!k->fp8_param_gather || config_zero_stage(c) >= 1,
         "cluster.fp8_param_gather: the FP8 all-gather of the parameters is the distributed "
         "optimizer's or FSDP's (set distributed_optimizer or zero_stage)");
    return MT_OK;
}

/* Blockwise GEMMs against the tensorwise ones (the header: TE speedups.rst on H200) */
#define FP8_BLOCKWISE_GEMM_FACTOR (1.41 / 1.57)

struct fp8_rules fp8_rules_of(const struct config *c)
{
    struct fp8_rules r = {.recipe = c->cluster.fp8_recipe};
    bool blackwell = c->cluster.device.mxfp8;
    switch (r.recipe) {
    case FP8_DELAYED:
    case FP8_TENSORWISE:
        r.act_bytes = r.weight_bytes = 1;
        r.copies = blackwell ? 1 : 2;
        r.amax_pass = r.amax_reduce = r.recipe == FP8_TENSORWISE;
        r.gemm_factor = 1;
        break;
    case FP8_BLOCKWISE:
        r.act_bytes = 1 + 4.0 / 128;             /* an fp32 scale a 1x128 block */
        r.weight_bytes = 1 + 4.0 / (128 * 128); /* one a 128x128 block */
        r.copies = 2;
        r.gemm_factor = FP8_BLOCKWISE_GEMM_FACTOR;
        break;
    case FP8_MXFP8:
        r.act_bytes = r.weight_bytes = 1 + 1.0 / 32; /* an E8M0 byte a 32 values */
        r.copies = 2;
        r.gemm_factor = 1;
        break;
    default: break;
    }
    return r;
}

double fp8_weight_extra_bytes(const struct config *c)
{
    if (!fp8_on(c))
        return 0;
    struct fp8_rules r = fp8_rules_of(c);
    double cached = r.copies * r.weight_bytes;
    return c->cluster.fp8_param_gather ? cached - 2 : cached;
}

double fp8_weight_cast_bytes(const struct config *c)
{
    if (!fp8_on(c))
        return 0;
    struct fp8_rules r = fp8_rules_of(c);
    /* with --fp8-param-gather the optimizer writes the FP8 weight itself (its step's traffic);
     * what remains is the second copy, made from the first (a transpose on Hopper: read and
     * write one byte); else the bf16 weight is read (twice under current scaling: its amax)
     * and every copy written */
    if (c->cluster.fp8_param_gather)
        return (r.copies - 1) * 2 * r.weight_bytes;
    return 2 * (r.amax_pass ? 2 : 1) + r.copies * r.weight_bytes;
}
