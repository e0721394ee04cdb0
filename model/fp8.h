/* model/fp8.h: FP8 training of the linear layers (issue 39 item 4; docs/fp8.md): the recipes'
 * names and checks, and the few figures each recipe's rules come down to. The op builders
 * (model/ops_build.c ops_push_linear) list the GEMMs in FP8 and the quantize kernels each adds,
 * model/price.c prices them, model/cost.c adds the weights' FP8 copies to the static bytes.
 *
 * What runs in FP8, as Megatron-core with Transformer Engine does it: the GEMMs of the
 * TE linear layers (QKV, the attention projection, fc1/fc2 or gate_up/down, MLA's projections,
 * the experts' grouped GEMMs and the shared experts). The attention core stays bf16 (flash;
 * --fp8-dot-product-attention is off by default), as do the norms, the router (a plain torch
 * linear, TopKRouter) and the LM head: GPTModel's output_layer is a
 * tensor_parallel.ColumnParallelLinear, not a TE module, unless --fp8-output-proj with mxfp8
 * (megatron/core/models/gpt/gpt_model.py; transformer_config.py fp8_output_proj). */
#ifndef MT_MODEL_FP8_H
#define MT_MODEL_FP8_H

#include <stdbool.h>

#include "model/config.h"

struct mt_err;

/* "none" | "delayed" | "tensorwise" | "blockwise" | "mxfp8" (case-insensitive; Megatron's
 * --fp8-recipe names, "none" for bf16); MT_EINVAL listing them otherwise. */
int fp8_recipe_parse(const char *s, enum fp8_recipe *out, struct mt_err *e);
const char *fp8_recipe_name(enum fp8_recipe r);
/* "none delayed tensorwise blockwise mxfp8", for --help and messages */
const char *fp8_recipe_names_line(void);
/* "hybrid" (the default) | "e4m3"; MT_EINVAL otherwise. */
int fp8_format_parse(const char *s, enum fp8_format *out, struct mt_err *e);
const char *fp8_format_name(enum fp8_format f);

/* Whether c's linear layers run in FP8 */
bool fp8_on(const struct config *c);

/* The checks (config_validate calls it): FP8 on a device without FP8 tensor cores
 * (fp8_peak_flops 0: the A100s), MXFP8 off Blackwell, FP8 under the paper's 2021 stack (it
 * had none), --fp8-format or --fp8-param-gather without a recipe. MT_EINVAL naming the key. */
int config_validate_fp8(const struct config *c, struct mt_err *e);

/* What a recipe comes down to on c's device (each figure's source in model/fp8.c). */
struct fp8_rules {
    enum fp8_recipe recipe;
    double act_bytes;    /* HBM bytes of one quantized activation or gradient element, its
                          * scales included */
    double weight_bytes; /* the same for a weight element */
    int copies;          /* quantized copies a tensor needs for the forward and both backward
                          * GEMMs: 2 on Hopper (a rowwise and a transposed one: its FP8 GEMMs
                          * are TN only), 2 for MXFP8 (rowwise and columnwise scales differ),
                          * 1 for a per-tensor recipe on Blackwell (any layout) */
    bool amax_pass;      /* current scaling (tensorwise): the tensor is read once for its amax
                          * before the cast */
    bool amax_reduce;    /* a quantized all-gather (sequence parallelism) needs the amax
                          * all-reduced over the TP group first (current scaling) */
    double gemm_factor;  /* the fraction of the device's FP8 GEMM ceiling this recipe's
                          * kernels reach */
};
/* The rules of c's recipe (all zero with FP8 off). */
struct fp8_rules fp8_rules_of(const struct config *c);

/* Static bytes an FP8-run weight adds over config_bytes_per_param's (which counts a bf16
 * compute copy): its cached FP8 copies (TE keeps them across the micro-batches of an
 * iteration), less the bf16 copy with --fp8-param-gather (the weight then lives in FP8 only).
 * 0 with FP8 off. */
double fp8_weight_extra_bytes(const struct config *c);
/* HBM bytes one FP8-run weight's quantization moves once an iteration (the first
 * micro-batch's cast, cached for the others); 0 with FP8 off. */
double fp8_weight_cast_bytes(const struct config *c);

#endif
