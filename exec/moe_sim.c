/* exec/moe_sim.c: the cost model's price of a MoE block's all-to-alls (exec/xformer_moe.h). */
#include <config.h>
#include "exec/xformer_moe.h"

#include "model/config.h"
#include "model/ops.h"
#include "model/price.h"

double moe_block_a2a_us(const struct config *c, double *bytes)
{
    struct op_list l;
    op_list_init(&l);
    ops_build_block(c, c->model.seq_length, BLOCK_MOE, &l);
    double us = 0, out = 0;
    for (size_t i = 0; i < l.n; i++) {
        const struct op *o = &l.op[i];
        if (o->kind != OP_COLLECTIVE || o->group_kind != GROUP_EP)
            continue;
        us += price_op_us(c, o, o->pass);
        out += o->bytes * op_coll_bus_factor(o->coll, o->group);
    }
    op_list_fini(&l);
    *bytes = out;
    return us;
}
