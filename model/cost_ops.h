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

#endif
