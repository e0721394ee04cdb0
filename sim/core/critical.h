/* sim/core/critical.h: the critical path of a simulated plan, the chain of instructions that
 * fixes the step time: shortening any of them shortens the step (unless another chain ties). */
#ifndef MT_SIM_CRITICAL_H
#define MT_SIM_CRITICAL_H

#include "sim/plan/plan.h"
#include "sim/core/simulate.h"

struct mt_err;

/* Marks on_path[id] = 1 for every instruction on the path and returns how many: from the
 * instruction that ends last, back through whichever predecessor ended exactly when it started
 * (a dependency first, else the device's previous instruction that holds the device: sends
 * are asynchronous and do not), until one started at 0 or waited on nothing. on_path has
 * plan_total(p) entries, cleared first. -1 (*e set) when the plan's dependencies cannot be
 * indexed. Uses the plan's resolution (vpipe_resolve), kept with the plan. */
int sim_critical_path(const struct plan *p, const struct sim_result *r, unsigned char *on_path,
                      struct mt_err *e);

#endif
