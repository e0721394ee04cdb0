/* model/cost_overhead.c: the time an analytic estimate leaves out, as named terms (model/cost.h,
 * "Overheads"): a forward or backward instruction pays the framework's fixed cost once (a
 * recompute runs inside its backward's call and does not), and every instruction pays its
 * blocks' kernel launches once per pass over them (a backward makes two). A calibration
 * (model/profile.h) measures these with the rest, so they are added before it applies. */
#include <config.h>
#include "model/cost.h"

#include "model/config.h"

void cost_overhead_apply(const struct config *c, struct stage_cost *st)
{
    const struct device_spec *d = &c->cluster.device;
    double launch_us = st->num_layers * d->layer_overhead_us;
    st->fw += d->op_overhead_us + launch_us;
    st->bw += d->op_overhead_us + 2 * launch_us;
    st->rc += launch_us;
}
