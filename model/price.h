/* model/price.h: the device model, what one op costs in time on one GPU (docs/design.md, "The
 * cost model as ops"; issue 37 item 2). One function prices every kind:
 *   GEMM, grouped GEMM, attention: FLOPs / (peak(dtype) x efficiency(shape)); the efficiency
 *     from a calibration's measured table where it has the shape, else the device's default
 *     curve (small and skinny GEMMs reach less of the peak);
 *   memory-bound: bytes / HBM bandwidth;
 *   collectives: alpha-beta per link, bytes x NCCL's bus factor / bus bandwidth + latency
 *     (ring all-reduce 2(n-1)/n, all-gather and reduce-scatter (n-1)/n, all-to-all (n-1)/n,
 *     send/recv 1), NVLink inside a node, the per-GPU network between nodes.
 * What a framework adds per op and per layer is model/framework.h's, not this file's. */
#ifndef MT_MODEL_PRICE_H
#define MT_MODEL_PRICE_H

#include "model/ops.h"

struct config;

/* Time of pass p of op o on one GPU of config c, us (0 for a pass the op does not run). */
double price_op_us(const struct config *c, const struct op *o, enum op_pass p);
/* The fraction of the dtype's dense peak a GEMM of this shape reaches on c's device. */
double price_gemm_efficiency(const struct config *c, double m, double n, double k,
                             enum op_dtype dt);
/* A collective of `bytes` (the buffer one rank holds) over `group` ranks on `link`, us. */
double price_collective_us(const struct config *c, enum op_coll coll, double bytes, int group,
                           enum op_link link);
/* The link a group of `group` ranks of kind g spans: NVLink when it fits in a node
 * (cluster.gpus_per_node), the network otherwise. */
enum op_link price_link_of(const struct config *c, enum op_group g, int group);

#endif
