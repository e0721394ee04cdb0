/* model/cost_ops.h: the cost model seen op by op (model/cost.c): what one op of a stage's list
 * costs as c's framework prices it, for `simulate --costs` and docs/cost-model.md. Kept apart
 * from model/cost.h because sim/ includes that one and sim/'s `enum op` (an instruction) and
 * model/ops.h's `struct op` (a kernel) share C's tag namespace: no file includes both. */
#ifndef MT_MODEL_COST_OPS_H
#define MT_MODEL_COST_OPS_H

#include "model/ops.h"

struct config;

/* The time of pass p of op o as c's framework prices it, us: the device model's price_op_us
 * (model/price.h); for the 2021 estimate (ops_legacy) model FLOPs / (peak x cost_efficiency,
 * flash's backward + half its forward), the TP collectives by model/cost.h's ring formula and
 * memory-bound ops 0 (the fitted layer overhead holds them). A collective costs 0 outside its
 * own pass, and when it is overlapped (hidden behind compute). */
double cost_op_us(const struct config *c, const struct op *o, enum op_pass p);
/* The same for op i of the list l it sits in, where its neighbours matter: under
 * cluster.tp_comm_overlap with sequence parallelism a TP collective costs only what outlasts the
 * GEMM it is pipelined with (model/cost.c, tp_overlap_partner); every other op cost_op_us. */
double cost_op_in_list_us(const struct config *c, const struct op_list *l, size_t i,
                          enum op_pass p);
/* What of a data-parallel collective of the step (op o, us long) shows: under
 * cluster.overlap_grad_reduce the gradient reduction less bw_us (the last micro-batch's
 * backward it runs under), under cluster.overlap_param_gather the distributed optimizer's
 * parameter all-gather less fw_us (the first forward); never below 0; else us. */
double cost_dp_exposed_us(const struct config *c, const struct op *o, double us, double bw_us,
                          double fw_us);

#endif
