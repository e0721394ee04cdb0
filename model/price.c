/* model/price.c: the device model of model/price.h. */
#include <config.h>
#include "model/price.h"

#include <math.h>

#include "model/config.h"

double price_gemm_efficiency(const struct config *c, double m, double n, double k,
                             enum op_dtype dt)
{
    (void)m, (void)n, (void)k, (void)dt;
    return c->cluster.device.efficiency;
}

/* GB/s of a link and its latency per message, us */
static double link_gbps(const struct config *c, enum op_link l)
{
    const struct cluster_spec *k = &c->cluster;
    return l == LINK_NVLINK ? k->tp_gbps : l == LINK_PCIE ? k->host_gbps : k->ar_gbps;
}

double price_collective_us(const struct config *c, enum op_coll coll, double bytes, int group,
                           enum op_link link)
{
    if (group <= 1 && coll != COLL_SEND_RECV)
        return 0;
    double n = group, factor;
    switch (coll) {
    case COLL_ALL_REDUCE: factor = 2 * (n - 1) / n; break;
    case COLL_ALL_GATHER:
    case COLL_REDUCE_SCATTER:
    case COLL_ALL_TO_ALL: factor = (n - 1) / n; break;
    default: factor = 1; break;
    }
    return factor * bytes / (link_gbps(c, link) * 1e3) + c->cluster.p2p_lat_us;
}

enum op_link price_link_of(const struct config *c, enum op_group g, int group)
{
    (void)g;
    return group <= c->cluster.gpus_per_node ? LINK_NVLINK : LINK_NETWORK;
}

double price_op_us(const struct config *c, const struct op *o, enum op_pass p)
{
    const struct device_spec *d = &c->cluster.device;
    switch (o->kind) {
    case OP_GEMM:
    case OP_GROUPED_GEMM: {
        double f = op_flops(o, p);
        if (!(f > 0))
            return 0;
        return f / (d->peak_flops * price_gemm_efficiency(c, o->m, o->n, o->k, o->dtype) * 1e-6);
    }
    case OP_ATTENTION: {
        double f = op_flops(o, p);
        return f > 0 ? f / (d->peak_flops * d->efficiency * 1e-6) : 0;
    }
    case OP_MEMORY:
        return op_hbm_bytes(o, p) / (d->hbm_gbps * 1e3);
    case OP_COLLECTIVE:
        if (o->pass != p)
            return 0;
        return price_collective_us(c, o->coll, o->bytes, o->group, o->link);
    default:
        return 0;
    }
}
