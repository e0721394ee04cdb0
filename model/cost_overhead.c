/* model/cost_overhead.c: the time an analytic estimate leaves out, as named terms (model/cost.h,
 * "Overheads"): a forward or backward instruction pays the framework's fixed cost once (a
 * recompute runs inside its backward's call and does not), and every instruction pays its
 * blocks' kernel launches once per pass over them (a backward makes two). A calibration
 * (model/profile.h) measures these with the rest, so they are added before it applies. */
#include <config.h>
#include "model/cost.h"

#include "model/config.h"
#include "model/framework.h"

/* The framework's profile (model/framework.h) says how much: the 2021 fit for the paper's
 * stack (the device's op_overhead_us and layer_overhead_us, as before), a profile's own figures
 * otherwise. Its per-kernel term is added op by op (cost_op_us, model/cost.c). */
void cost_overhead_apply(const struct config *c, struct stage_cost *st)
{
    double op_us = framework_op_overhead_us(c);
    double launch_us = st->num_layers * framework_layer_overhead_us(c);
    st->fw += op_us + launch_us;
    st->bw += op_us + 2 * launch_us;
    st->rc += launch_us;
}
