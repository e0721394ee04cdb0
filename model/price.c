/* model/price.c: the device model of model/price.h. */
#include <config.h>
#include "model/price.h"

#include <math.h>

#include "model/config.h"
#include "model/fp8.h"
#include "model/framework.h"
#include "model/microcal.h"

/* A saturation that is 1/2 at d = half and 1 - 1.5 (half/d)^2 for d >> half: the loss of a
 * dimension quantized into tiles of ~2 x half is a fixed remainder, small once d spans many
 * tiles (NVIDIA, "Matrix Multiplication Background User's Guide": tile and wave quantization).
 * Smooth and increasing, so that the curve is monotone in every dimension. */
static double saturate(double d, double half)
{
    if (!(d > 0))
        return 0;
    double r = half / d;
    return 1 / sqrt(1 + 3 * r * r);
}

double price_peak_flops(const struct config *c, enum op_dtype dt)
{
    const struct device_spec *d = &c->cluster.device;
    switch (dt) {
    case OP_FP8: return d->fp8_peak_flops;
    case OP_FP32: return d->peak_flops / 2; /* TF32 tensor cores: half the bf16 rate */
    default: return d->peak_flops;
    }
}

/* The compute rate of a kernel in a training step: the peak of its dtype x the framework's
 * compute_factor (model/framework.h), what the isolated kernels' rates lose under a step's
 * sustained load. */
static double step_peak_flops(const struct config *c, enum op_dtype dt)
{
    return price_peak_flops(c, dt) * framework_compute_factor(c);
}

/* The k a split-K (or stream-K) decomposition gives one work unit: a GEMM with fewer output
 * tiles than SMs and a long k is split along k (CUTLASS's split-K and stream-K, Osama et al.
 * PPoPP'23), which is why the measured best shapes include 2048 x 2048 x 13312 on H100. */
#define GEMM_SPLIT_K 2048.0

double price_gemm_efficiency(const struct config *c, double m, double n, double k,
                             enum op_dtype dt)
{
    const struct device_spec *d = &c->cluster.device;
    double ceiling = dt == OP_FP8 ? d->gemm_eff_fp8 : d->gemm_eff, measured;
    if (!(m > 0 && n > 0 && k > 0))
        return 0;
    /* a calibration's GEMM sweep (model/microcal.h) where it measured near this shape */
    if (microcal_gemm_efficiency(c->profile.micro, m, n, k, dt, price_peak_flops(c, dt), &measured))
        return measured;
    if (!(ceiling > 0))
        return 0;
    if (dt == OP_FP8 && fp8_on(c)) /* the recipe's kernels against tensorwise ones (model/fp8.c) */
        ceiling *= fp8_rules_of(c).gemm_factor;
    double h = d->gemm_mn_half;
    double shape = saturate(m, h) * saturate(n, h) * saturate(k, d->gemm_k_half);
    /* Waves: output tiles of (2h)^2 (a partial tile is a tile), each k split into
     * GEMM_SPLIT_K units, against the SMs; half the SMs busy is half the rate. */
    double units = fmax(1, m / (2 * h)) * fmax(1, n / (2 * h)) * fmax(1, k / GEMM_SPLIT_K);
    double waves = saturate(units, 0.5 * d->sms);
    return ceiling * shape * waves;
}

/* The length at which a flash-attention kernel reaches half its long-sequence rate: FA2's
 * forward on A100 (Dao 2023, fig. 5, causal, head dim 128) runs at ~55 % of its 16k rate at
 * 512 and ~85 % at 2k, what s / (s + 384) gives. */
#define ATTN_SEQ_HALF 384.0

double price_attention_efficiency(const struct config *c, enum op_pass p, double s_kv)
{
    const struct device_spec *d = &c->cluster.device;
    double e = p == PASS_FW ? d->attn_eff_fw : p == PASS_B ? d->attn_eff_bw : 0;
    if (framework_of(c)->attention_fa2) { /* PyTorch SDPA's FA2 where the device has a rate */
        double fa2 = p == PASS_FW ? d->attn_fa2_eff_fw : p == PASS_B ? d->attn_fa2_eff_bw : 0;
        if (fa2 > 0)
            e = fa2;
    }
    return s_kv > 0 ? e * s_kv / (s_kv + ATTN_SEQ_HALF) : 0;
}

double price_hbm_gbps(const struct config *c)
{
    const struct device_spec *d = &c->cluster.device;
    return d->hbm_gbps * d->hbm_eff;
}

/* What a GPU's NIC carries of its line rate in NCCL's inter-node rings (nccl-tests busbw of
 * ~45 GB/s on a 400 Gb/s NDR port). */
#define NET_EFFICIENCY 0.9

double price_busbw_gbps(const struct config *c, enum op_coll coll, double bytes, int group,
                        int local, enum op_link link)
{
    (void)bytes, (void)group; /* a calibration's table is by size and ranks */
    const struct cluster_spec *k = &c->cluster;
    const struct device_spec *d = &k->device;
    double nvlink = (c->given & CONFIG_GIVEN_TP_GBPS) ? k->tp_gbps : d->nvlink_busbw_gbps;
    switch (link) {
    case LINK_NVLINK: return nvlink;
    case LINK_PCIE: return k->host_gbps;
    default: {
        double nic = d->net_gbps * NET_EFFICIENCY;
        if (coll == COLL_ALL_TO_ALL || coll == COLL_SEND_RECV || local < 1)
            return nic;
        return fmin(nvlink, local * nic);
    }
    }
}

/* NCCL's latency model (src/graph/tuning.cc): a base latency per call plus one per step, the
 * steps of a ring 2(n-1) for an all-reduce, n-1 for an all-gather or reduce-scatter, n for the
 * others; across nodes an all-reduce takes the tree, 2 (local - 1) NVLink steps and
 * 2 log2(nodes) network ones. Base: 6.6 us, the ring LL protocol's (small messages). */
#define NCCL_BASE_LAT_US 6.6

static double collective_latency_us(const struct device_spec *d, enum op_coll coll, int n,
                                    int local, enum op_link link)
{
    if (coll == COLL_SEND_RECV)
        return NCCL_BASE_LAT_US + (link == LINK_NVLINK ? d->nvlink_lat_us : d->net_lat_us);
    double steps = coll == COLL_ALL_REDUCE ? 2.0 * (n - 1) : coll == COLL_ALL_TO_ALL ? n : n - 1;
    if (link != LINK_NETWORK)
        return NCCL_BASE_LAT_US + steps * d->nvlink_lat_us;
    if (local < 1)
        local = 1;
    double nodes = (double)n / local;
    if (coll == COLL_ALL_REDUCE)
        return NCCL_BASE_LAT_US + 2 * (local - 1) * d->nvlink_lat_us +
               2 * ceil(log2(nodes)) * d->net_lat_us;
    double inter = coll == COLL_ALL_TO_ALL ? nodes : nodes - 1;
    return NCCL_BASE_LAT_US + (steps - inter) * d->nvlink_lat_us + inter * d->net_lat_us;
}

static double collective_us(const struct config *c, enum op_coll coll, double bytes, int group,
                            int local, enum op_link link)
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
    /* a calibration's measured bus bandwidth (nccl-tests, profile --micro): the latency of
     * small messages is inside it (nccl-tests' busbw = bytes / time x factor) */
    double measured;
    if (microcal_busbw(c->profile.micro, coll, bytes, group, link, &measured) && measured > 0)
        return factor * bytes / (measured * 1e3);
    double busbw = price_busbw_gbps(c, coll, bytes, group, local, link);
    return collective_latency_us(&c->cluster.device, coll, group, local, link) +
           factor * bytes / (busbw * 1e3);
}

double price_collective_us(const struct config *c, enum op_coll coll, double bytes, int group,
                           enum op_link link)
{
    return collective_us(c, coll, bytes, group, link == LINK_NETWORK ? 1 : group, link);
}

/* Ranks between neighbours of a group of kind g (Megatron-LM's order tp-cp-ep-dp-pp; cp and
 * ep are 1 until the config has them). */
static long group_stride(const struct config *c, enum op_group g)
{
    const struct cluster_spec *k = &c->cluster;
    switch (g) {
    case GROUP_TP: return 1;
    case GROUP_EP: return k->etp > 0 ? k->etp : k->tp; /* the experts' order etp-ep-dp-pp */
    case GROUP_CP:
    case GROUP_DP: return k->tp;
    default: return (long)k->tp * k->dp;
    }
}

int price_local_ranks(const struct config *c, enum op_group g, int group)
{
    long stride = group_stride(c, g), node = c->cluster.gpus_per_node;
    if (group < 1)
        return 1;
    if (stride >= node)
        return 1;
    long local = node / stride;
    return (int)(local < group ? local : group);
}

enum op_link price_link_of(const struct config *c, enum op_group g, int group)
{
    return price_local_ranks(c, g, group) >= group ? LINK_NVLINK : LINK_NETWORK;
}

/* The product a GEMM's pass runs, as (rows, cols, reduction): FW (m, n, k); the input
 * gradient dX = dY W^T is m x k over n; the weight gradient dW = X^T dY is k x n over m. */
static void gemm_pass_shape(const struct op *o, enum op_pass p, double s[3])
{
    s[0] = p == PASS_W ? o->k : o->m;
    s[1] = p == PASS_B ? o->k : o->n;
    s[2] = p == PASS_FW ? o->k : p == PASS_B ? o->n : o->m;
}

static double gemm_us(const struct config *c, const struct op *o, enum op_pass p)
{
    double f = op_flops(o, p);
    if (!(f > 0))
        return 0;
    double s[3];
    gemm_pass_shape(o, p, s);
    double rate = step_peak_flops(c, o->dtype) * price_gemm_efficiency(c, s[0], s[1], s[2], o->dtype);
    if (!(rate > 0))
        return INFINITY;
    double compute = f / (rate * 1e-6), memory = op_hbm_bytes(o, p) / (price_hbm_gbps(c) * 1e3);
    return fmax(compute, memory);
}

/* Eager attention: Q K^T (s_q x s_kv over d) and P V (s_q x d_v over s_kv), batch x heads
 * products each, at the GEMM curve; the backward runs twice the products. */
static double eager_attention_us(const struct config *c, const struct op *o, enum op_pass p)
{
    double f = op_flops(o, p);
    if (!(f > 0))
        return 0;
    double dv = o->head_dim_v > 0 ? o->head_dim_v : o->head_dim;
    double e = 0.5 * (price_gemm_efficiency(c, o->s_q, o->s_kv, o->head_dim, o->dtype) +
                      price_gemm_efficiency(c, o->s_q, dv, o->s_kv, o->dtype));
    double rate = step_peak_flops(c, o->dtype) * e;
    return rate > 0 ? f / (rate * 1e-6) : INFINITY;
}

double price_op_us(const struct config *c, const struct op *o, enum op_pass p)
{
    switch (o->kind) {
    case OP_GEMM:
    case OP_GROUPED_GEMM: return gemm_us(c, o, p);
    case OP_ATTENTION: {
        if (!o->flash)
            return eager_attention_us(c, o, p);
        double f = op_flops(o, p);
        if (!(f > 0))
            return 0;
        double rate;
        if (!microcal_attention_flops(c->profile.micro, o->batch, o->s_kv, o->heads, o->head_dim,
                                      o->causal, o->dtype, p, &rate) || !(rate > 0))
            rate = price_peak_flops(c, o->dtype) * price_attention_efficiency(c, p, o->s_kv);
        rate *= framework_compute_factor(c);
        return rate > 0 ? f / (rate * 1e-6) : INFINITY;
    }
    case OP_MEMORY: {
        double bytes = op_hbm_bytes(o, p), gbps;
        if (!microcal_hbm_gbps(c->profile.micro, bytes, &gbps) || !(gbps > 0))
            gbps = price_hbm_gbps(c);
        return bytes / (gbps * 1e3);
    }
    case OP_COLLECTIVE: {
        if (o->pass != p)
            return 0;
        int local = o->link == LINK_NETWORK ? price_local_ranks(c, o->group_kind, o->group)
                                            : o->group;
        return collective_us(c, o->coll, o->bytes, o->group, local, o->link);
    }
    default: return 0;
    }
}
