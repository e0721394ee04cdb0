/* model/framework.h: the software stack as a profile (issue 37 item 3; docs/design.md, "The cost
 * model as ops"): what a framework adds to the device model's op times (model/price.h), per
 * pipeline instruction, per transformer block and pass, and per kernel, and what it hides
 * behind compute. One record per enum framework_id (model/config.h); cluster.framework or
 * --framework chooses, config_framework() resolves the default.
 *
 * How the cost model reads it (model/cost.c, model/cost_overhead.c):
 *   FRAMEWORK_MEGATRON_DS_2021 (the paper's presets): the aggregate path as before, with
 *     framework_op_overhead_us(c) and framework_layer_overhead_us(c) in place of the device's
 *     op_overhead_us and layer_overhead_us (the same numbers: the fit of Table 5);
 *     framework_kernel_overhead_us(c) is 0.
 *   every other framework: an instruction (FW, CFW, BW; a recompute runs inside its BW's call)
 *     costs framework_op_overhead_us(c) once; each op of the list costs
 *     price_op_us(c, o, p) + framework_kernel_overhead_us(c) for each pass p it runs; each block
 *     adds framework_layer_overhead_us(c) per pass over it; a collective op whose `overlapped`
 *     (set from framework_hides_tp_comm / framework_hides_grad_reduce) is true adds only what
 *     outlasts the compute it hides under. */
#ifndef MT_MODEL_FRAMEWORK_H
#define MT_MODEL_FRAMEWORK_H

#include <stdbool.h>

#include "model/config.h"

struct mt_err;

/* The fit of the paper's Table 5 (GPT3-13B, Megatron-DeepSpeed on 8 nodes of 4 A100-40G;
 * scripts/fit_overheads.py, model/cost.h "Overheads"): the 2021 profile's figures, and the
 * A100 presets' aggregate efficiency fitted with them. */
#define FRAMEWORK_DS2021_OP_US 3360.0
#define FRAMEWORK_DS2021_LAYER_US 546.0
#define FRAMEWORK_DS2021_EFFICIENCY 0.551

struct framework_profile {
    enum framework_id id;
    const char *key;           /* the cluster.framework / --framework spelling */
    const char *title;         /* what a listing shows */
    double op_overhead_us;     /* per FW, CFW or BW instruction of the pipeline schedule */
    double layer_overhead_us;  /* per transformer block and pass over it */
    double kernel_overhead_us; /* per op of the list and pass it runs */
    bool attention_fa2;        /* its attention is FlashAttention-2 (PyTorch SDPA's flash
                                * backend), not the device's best kernel (the device's
                                * attn_fa2_eff_* rates, model/price.c) */
    double compute_factor;     /* the fraction of the device model's GEMM and attention rates a
                                * training step under this stack sustains (1 = the isolated
                                * kernels' rates) */
    const char *source;        /* where the figures come from */
};

/* The record of a framework (FRAMEWORK_DEFAULT and out-of-range ids: NULL). */
const struct framework_profile *framework_profile(enum framework_id id);
/* The record c is priced with (config_framework(c)'s). */
const struct framework_profile *framework_of(const struct config *c);
/* The overheads c pays. Megatron-DeepSpeed 2021: the device's op_overhead_us and
 * layer_overhead_us (the fit, or the config's). Every other framework: its profile's, unless the
 * config gave cluster.op_overhead_us / layer_overhead_us (c->given), which win. */
double framework_op_overhead_us(const struct config *c);
double framework_layer_overhead_us(const struct config *c);
double framework_kernel_overhead_us(const struct config *c);
/* The profile's compute_factor, or cluster.compute_factor where the config gave it; 1 for the
 * 2021 profile (its aggregate efficiency is the fit). */
double framework_compute_factor(const struct config *c);
/* What hides behind compute under c (the builders set an op's `overlapped` from these): the TP
 * (and CP) collectives of a block when cluster.tp_comm_overlap (they overlap the GEMMs they
 * feed); the DP gradient reduce (all-reduce, or reduce-scatter with the distributed optimizer)
 * when cluster.overlap_grad_reduce (it overlaps the backwards of the last micro-batch: only the
 * part that outlasts them shows); the distributed optimizer's parameter all-gather when
 * cluster.overlap_param_gather (it overlaps the forwards of the next iteration's first
 * micro-batch, the same rule). Nothing else overlaps: EP all-to-all and PP p2p are exposed.
 * model/cost.c prices the rules: cost_tp_overlap_exposed_us, cost_dp_exposed_us. */
bool framework_hides_tp_comm(const struct config *c);
bool framework_hides_grad_reduce(const struct config *c);
bool framework_hides_param_gather(const struct config *c);
/* "megatron-deepspeed-2021" | "megatron-core" | "torchtitan" (case-insensitive); MT_EINVAL
 * listing them otherwise. */
int framework_parse(const char *s, enum framework_id *out, struct mt_err *e);
/* The key of a framework ("default" for FRAMEWORK_DEFAULT, "?" out of range). */
const char *framework_name(enum framework_id id);
/* "megatron-deepspeed-2021 megatron-core torchtitan", for --help and messages. */
const char *framework_names_line(void);

#endif
