/* sim/schemes/scheme_gpipe.c: GPipe: every device runs all N forwards, then all N backwards, so
 * each device holds N micro-batches of activations at its peak (paper Table 1: N M_θ). */
#include <config.h>
#include "sim/schemes/scheme.h"

#include "util/err.h"

int scheme_order_gpipe(struct plan *p, const struct cost_model *cost, struct mt_err *e)
{
    const struct plan_geom *g = plan_geom(p);
    for (int d = 0; d < g->devices; d++) {
        for (int i = 0; i < g->mbs; i++)
            plan_append(p, d, (struct instr){OP_FW, i, 0, d, -1, 0, 0, 0});
        for (int i = 0; i < g->mbs; i++)
            plan_append(p, d, (struct instr){OP_BW, i, 0, d, -1, 0, 0, 0});
    }
    return MT_OK;
}
