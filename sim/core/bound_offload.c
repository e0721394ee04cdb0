/* sim/core/bound_offload.c: what the lower bound (sim/core/bound.h) knows of offload, apart from
 * its memory-time relaxation: that a schedule which may offload is not forced to recompute. */
#include <config.h>
#include "sim/core/bound.h"

#include "sim/plan/plan.h"

void bound_allow_offload(struct bound_result *b)
{
    if (b->cap_infeasible)
        return;
    b->memory = 0;
    b->memory_at = -1;
    b->forced_rc = 0;
}

bool bound_plan_offloads(const struct plan *p)
{
    for (int d = 0; d < plan_devices(p); d++)
        for (int i = 0; i < plan_len(p, d); i++)
            if (plan_op_is_copy(plan_at(p, d, i)->op))
                return true;
    return false;
}
