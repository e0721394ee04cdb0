/* model/price.h: the device model, what one op costs in time on one GPU (docs/design.md, "The
 * cost model as ops"; issue 37 item 2). One function prices every kind:
 *   GEMM, grouped GEMM: FLOPs / (peak(dtype) x efficiency(m, n, k)), or the HBM time of its
 *     operands if that is longer (a skinny GEMM is memory-bound: the roofline);
 *   attention: FLOPs / (peak x the flash kernel's efficiency at that length), eager attention
 *     as its two batched GEMMs;
 *   memory-bound: bytes / the achievable HBM bandwidth;
 *   collectives: alpha-beta, NCCL's latency model (a base latency plus one per step) plus
 *     bytes x NCCL's bus factor / the bus bandwidth (ring all-reduce 2(n-1)/n, all-gather and
 *     reduce-scatter (n-1)/n, all-to-all (n-1)/n, send/recv 1), NVLink inside a node, the
 *     per-GPU network between nodes.
 * Each figure the time rests on is looked up in one function (price_gemm_efficiency,
 * price_attention_efficiency, price_hbm_gbps, price_busbw_gbps): a calibration's measured table
 * (issue 37 item 6) replaces the device's default there and nowhere else.
 * What a framework adds per op and per layer, and what overlaps, is model/framework.h's. */
#ifndef MT_MODEL_PRICE_H
#define MT_MODEL_PRICE_H

#include "model/ops.h"

struct config;

/* Time of pass p of op o on one GPU of config c, us (0 for a pass the op does not run;
 * INFINITY for a GEMM in a dtype the device has no units for: FP8 on an A100). A collective's
 * time is its own, `overlapped` or not (whether it hides is the cost model's sum). */
double price_op_us(const struct config *c, const struct op *o, enum op_pass p);

/* The dense peak of a dtype on c's device, FLOP/s: bf16/fp16 the datasheet's, fp32 GEMMs at
 * the TF32 tensor-core rate (half the bf16 peak on every preset), fp8 the datasheet's (0 where
 * the device has none). */
double price_peak_flops(const struct config *c, enum op_dtype dt);

/* The fraction of the dtype's dense peak a GEMM (m x k) . (k x n) reaches on c's device: the
 * device's measured ceiling (gemm_eff, gemm_eff_fp8) times a saturation in each of m, n and k
 * (tile quantization; the mainloop against a tile's prologue and epilogue) and in the work
 * that fills the SMs (wave quantization, split-K). Monotone in each dimension; the ceiling on
 * large GEMMs. */
double price_gemm_efficiency(const struct config *c, double m, double n, double k,
                             enum op_dtype dt);

/* The fraction of the bf16 peak a flash-attention pass (PASS_FW or PASS_B) reaches over s_kv
 * keys: the device's long-sequence figure times a saturation in the length. */
double price_attention_efficiency(const struct config *c, enum op_pass p, double s_kv);

/* The HBM bandwidth a memory-bound kernel reaches, GB/s. */
double price_hbm_gbps(const struct config *c);

/* The bus bandwidth a collective reaches, GB/s: NVLink's measured busbw inside a domain
 * (cluster.tp_gbps when the config gave it); across nodes the network, one NIC a GPU: a group
 * with `local` ranks in each node drives `local` NICs (NCCL runs a ring channel through each),
 * up to what NVLink carries; an all-to-all's cross-node traffic uses the rank's own NIC. */
double price_busbw_gbps(const struct config *c, enum op_coll coll, double bytes, int group,
                        int local, enum op_link link);

/* A collective of `bytes` (the buffer one rank holds) over `group` ranks on `link`, us; on
 * LINK_NETWORK one rank a node (the rail-aligned DP group of a TP-8 layout). */
double price_collective_us(const struct config *c, enum op_coll coll, double bytes, int group,
                           enum op_link link);

/* The link a group of `group` ranks of kind g spans, with Megatron-LM's rank order (tp
 * fastest, then cp, ep, dp, pp: parallel_state's "tp-cp-ep-dp-pp"): NVLink when the group's
 * ranks sit in one node (cluster.gpus_per_node), the network otherwise. */
enum op_link price_link_of(const struct config *c, enum op_group g, int group);

/* The ranks of such a group that share a node (1 .. group). */
int price_local_ranks(const struct config *c, enum op_group g, int group);

#endif
