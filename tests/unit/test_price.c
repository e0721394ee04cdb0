/* tests/unit/test_price.c: the device model (model/price.h), the framework profiles
 * (model/framework.h) and the device presets (model/presets.h) against figures worked out by
 * hand here: a ring all-reduce of 1 GB over 8 GPUs at the device's measured bus bandwidth, the
 * latency-bound limit of a 1 KB all-reduce (NCCL's latency model), the network all-reduce of
 * a DP group one rank a node, GEMM efficiency monotone in each dimension and at the device's
 * measured ceiling on a large square GEMM, a GEMV at the HBM roofline, and every preset's
 * figures against its datasheet, written out again below from the datasheets themselves. */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/config.h"
#include "model/framework.h"
#include "model/microcal.h"
#include "model/ops.h"
#include "model/presets.h"
#include "model/price.h"
#include "tests/check.h"
#include "util/err.h"

#define GIB (1024.0 * 1024 * 1024)

static void config_on(struct config *c, const char *device)
{
    config_default(c);
    struct device_spec d;
    CHECK(presets_device(device, &d, NULL) == MT_OK);
    config_set_device(c, &d);
}

/* ---- presets against their datasheets --------------------------------------------------- */

struct sheet {
    const char *name;
    double bf16_tflops, fp8_tflops, mem_bytes, hbm_tbps, link_gbps_each_way, net_gbit_s;
    int gpus_per_node;
};

/* NVIDIA A100 datasheet (SXM: 312 TFLOPS BF16 dense; 40 GB HBM2 1,555 GB/s; 80 GB HBM2e 2,039
 * GB/s; NVLink 600 GB/s total); DGX A100: 8 x 200 Gb/s HDR. H100 SXM datasheet: 989 TFLOPS
 * BF16 dense, 1,979 FP8 dense, 80 GB 3.35 TB/s, NVLink 900 GB/s total; DGX H100: 8 x 400 Gb/s
 * NDR. H200: 141 GB 4.8 TB/s. H800: NVLink 400 GB/s total. HGX B200: 2.25 PF BF16, 4.5 PF FP8
 * dense, 180 GB 8 TB/s, NVLink 5 1.8 TB/s total. GB200 NVL72 (a rack / 72): 360 PF BF16 sparse,
 * 720 PF FP8 sparse, 13.4 TB HBM3e, 576 TB/s, 130 TB/s NVLink. MI300X: 1,307.4 TFLOPS BF16
 * dense, 2,614.9 FP8 dense, 192 GB HBM3 5.3 TB/s, 7 x 128 GB/s Infinity Fabric (bidirectional).
 * torchtitan's Grand Teton H100 (benchmarks/llama3_h100_202412_torchtitan.md): 96 GB HBM2e 2.4
 * TB/s, peak between the SXM's 989 and the NVL's 1,671 / 2 BF16: their midpoint. */
static const struct sheet sheets[] = {
    {"A100-40G", 312, 0, 40 * GIB, 1.555, 600 / 2.0, 200, 8},
    {"A100-80G", 312, 0, 80 * GIB, 2.039, 600 / 2.0, 200, 8},
    {"H100-80G", 989, 1979, 80 * GIB, 3.35, 900 / 2.0, 400, 8},
    {"H100-96G-500W", (989 + 1671 / 2.0) / 2, 989 + 1671 / 2.0, 96e9, 2.4, 900 / 2.0, 400,
     8},
    {"H200", 989, 1979, 141e9, 4.8, 900 / 2.0, 400, 8},
    {"H800", 989, 1979, 80 * GIB, 3.35, 400 / 2.0, 400, 8},
    {"B200", 2250, 4500, 180e9, 8.0, 1800 / 2.0, 400, 8},
    {"GB200", 360e3 / 72 / 2, 720e3 / 72 / 2, 13.4e12 / 72, 576.0 / 72, 130e3 / 72 / 2, 400, 72},
    {"MI300X", 1307.4, 2614.9, 192e9, 5.3, 7 * 128 / 2.0, 400, 8},
};

static void test_presets_datasheets(void)
{
    const char *const *names = presets_device_names();
    int n = 0;
    while (names[n] != NULL)
        n++;
    CHECK_EQ_INT(n, (int)(sizeof sheets / sizeof sheets[0]));
    for (size_t i = 0; i < sizeof sheets / sizeof sheets[0]; i++) {
        const struct sheet *s = &sheets[i];
        struct device_spec d;
        CHECK(presets_device(s->name, &d, NULL) == MT_OK);
        CHECK(strcmp(d.name, s->name) == 0);
        CHECK_NEAR(d.peak_flops / 1e12, s->bf16_tflops, 0.5);
        CHECK_NEAR(d.fp8_peak_flops / 1e12, s->fp8_tflops, 0.5);
        /* GB200: 13.4 TB over 72 GPUs is 186.1 GB; the preset takes the printed 186 GB */
        CHECK_NEAR(d.mem_bytes, s->mem_bytes, 0.2e9);
        CHECK_NEAR(d.hbm_gbps, s->hbm_tbps * 1e3, 0.5);
        CHECK_NEAR(d.nvlink_gbps, s->link_gbps_each_way, 3); /* NVL72: 130 TB/s / 72 = 1.806 */
        CHECK_NEAR(d.net_gbps, s->net_gbit_s / 8, 1e-9);
        CHECK_EQ_INT(d.gpus_per_node, s->gpus_per_node);
        /* what every device carries for the paper's aggregate path */
        CHECK(d.op_overhead_us == 3360 && d.layer_overhead_us == 546);
        CHECK(d.gemm_eff > 0 && d.gemm_eff <= 1 && d.attn_eff_fw > 0 && d.hbm_eff > 0);
        CHECK(d.nvlink_busbw_gbps > 0 && d.nvlink_busbw_gbps < d.nvlink_gbps);
    }
    /* the paper's presets keep the fit of Table 5 */
    struct device_spec a;
    presets_device("A100-40G", &a, NULL);
    CHECK(a.efficiency == 0.551 && a.peak_flops == 312e12 && a.hbm_gbps == 1555);
    /* measured maximum achievable matmul FLOPS (mamf-finder.py): H100 SXM 794.5 of 989 */
    presets_device("H100-80G", &a, NULL);
    CHECK_NEAR(a.gemm_eff, 794.5 / 989, 1e-3);
    CHECK_NEAR(a.nvlink_busbw_gbps, 365, 5); /* nccl-tests all_reduce_perf, 8 x H100 */
    /* the NVLink domain follows the device unless the config gave one */
    struct config c;
    config_on(&c, "GB200");
    CHECK_EQ_INT(c.cluster.gpus_per_node, 72);
    config_on(&c, "H100-80G");
    CHECK_EQ_INT(c.cluster.gpus_per_node, 8);
    struct mt_err e;
    CHECK(presets_device("TPU", &a, &e) != MT_OK);
    CHECK_STR_CONTAINS(e.msg, "MI300X");
}

/* ---- collectives -------------------------------------------------------------------------- */

static void test_collectives(void)
{
    struct config c;
    config_on(&c, "H100-80G");
    /* NCCL's model (src/graph/tuning.cc): 6.6 us base + a step of 0.6 us, 2(n-1) steps */
    double lat8 = 6.6 + 2 * 7 * 0.6;
    /* 1 GB ring all-reduce over 8 GPUs: 2(n-1)/n x 1 GB / 365 GB/s = 4794.5 us */
    double t = price_collective_us(&c, COLL_ALL_REDUCE, 1e9, 8, LINK_NVLINK);
    CHECK_NEAR(t, 1.75e9 / 365e9 * 1e6 + lat8, 1e-6);
    CHECK_NEAR(t, 4809.5, 0.1);
    /* all-gather and reduce-scatter carry half an all-reduce's bytes, n-1 steps */
    CHECK_NEAR(price_collective_us(&c, COLL_ALL_GATHER, 1e9, 8, LINK_NVLINK),
               0.875e9 / 365e9 * 1e6 + 6.6 + 7 * 0.6, 1e-6);
    CHECK_NEAR(price_collective_us(&c, COLL_REDUCE_SCATTER, 1e9, 8, LINK_NVLINK),
               price_collective_us(&c, COLL_ALL_GATHER, 1e9, 8, LINK_NVLINK), 1e-9);
    /* 1 KB all-reduce: latency-bound, the bandwidth term 1.75 x 1024 / 365 GB/s = 0.005 us */
    double small = price_collective_us(&c, COLL_ALL_REDUCE, 1024, 8, LINK_NVLINK);
    CHECK_NEAR(small, lat8, 0.01);
    CHECK(small - lat8 < 0.01 * lat8);
    /* the size at which the bandwidth term equals the latency: 15 us x 365 GB/s / 1.75 */
    double even = lat8 * 365e3 / 1.75;
    CHECK_NEAR(price_collective_us(&c, COLL_ALL_REDUCE, even, 8, LINK_NVLINK), 2 * lat8, 1e-6);
    /* one rank: nothing to reduce */
    CHECK(price_collective_us(&c, COLL_ALL_REDUCE, 1e9, 1, LINK_NVLINK) == 0);
    /* tp_gbps given wins over the measured busbw */
    c.cluster.tp_gbps = 200;
    c.given |= CONFIG_GIVEN_TP_GBPS;
    CHECK_NEAR(price_collective_us(&c, COLL_ALL_REDUCE, 1e9, 8, LINK_NVLINK),
               1.75e9 / 200e9 * 1e6 + lat8, 1e-6);

    /* A DP group of 128 ranks, one a node (tp 8): the NIC's 400 Gb/s at 90 % = 45 GB/s; NCCL's
     * tree across nodes: 6.6 + 2 log2(128) x 2.7 us */
    config_on(&c, "H100-80G");
    c.cluster.tp = 8;
    c.cluster.dp = 128;
    c.num_device = 8 * 128 * 16;
    CHECK_EQ_INT(price_local_ranks(&c, GROUP_DP, 128), 1);
    CHECK(price_link_of(&c, GROUP_DP, 128) == LINK_NETWORK);
    CHECK(price_link_of(&c, GROUP_TP, 8) == LINK_NVLINK);
    double net = price_collective_us(&c, COLL_ALL_REDUCE, 1e9, 128, LINK_NETWORK);
    CHECK_NEAR(net, 2 * 127.0 / 128 * 1e9 / 45e9 * 1e6 + 6.6 + 2 * 7 * 2.7, 1e-6);
    /* the same DP group as an op: its link and ranks a node from the config */
    struct op o = {.kind = OP_COLLECTIVE, .coll = COLL_ALL_REDUCE, .group_kind = GROUP_DP,
                   .bytes = 1e9, .group = 128, .link = LINK_NETWORK, .pass = PASS_B};
    CHECK_NEAR(price_op_us(&c, &o, PASS_B), net, 1e-9);
    CHECK(price_op_us(&c, &o, PASS_FW) == 0); /* a collective runs in its own pass */
    /* tp 1: 8 ranks of a DP group of 16 share a node, drive 8 NICs (360 GB/s, under NVLink's
     * 365), 2 x 7 NVLink steps and 2 log2(2) network ones */
    c.cluster.tp = 1;
    c.cluster.dp = 16;
    CHECK_EQ_INT(price_local_ranks(&c, GROUP_DP, 16), 8);
    o.group = 16;
    CHECK_NEAR(price_op_us(&c, &o, PASS_B),
               2 * 15.0 / 16 * 1e9 / 360e9 * 1e6 + 6.6 + 2 * 7 * 0.6 + 2 * 1 * 2.7, 1e-6);
    /* a DP group of 8 inside one node rides NVLink */
    CHECK(price_link_of(&c, GROUP_DP, 8) == LINK_NVLINK);
    /* GB200 NVL72: a TP group of 72 ... is one NVLink domain */
    config_on(&c, "GB200");
    CHECK(price_link_of(&c, GROUP_TP, 72) == LINK_NVLINK);
    CHECK(price_link_of(&c, GROUP_TP, 144) == LINK_NETWORK);
}

/* ---- GEMMs, attention, memory ------------------------------------------------------------- */

static void test_gemm_curve(const char *device)
{
    struct config c;
    config_on(&c, device);
    const struct device_spec *d = &c.cluster.device;
    double dims[64];
    int nd = 0;
    for (double x = 1; x <= 65536; x *= 1.5)
        dims[nd++] = floor(x);
    /* monotone in each dimension, the others held at a few values; never above the ceiling */
    const double others[] = {16, 128, 1024, 8192};
    for (int axis = 0; axis < 3; axis++)
        for (int a = 0; a < 4; a++)
            for (int b = 0; b < 4; b++) {
                double prev = 0;
                for (int i = 0; i < nd; i++) {
                    double s[3] = {others[a], others[b], others[b]};
                    s[axis] = dims[i];
                    double e = price_gemm_efficiency(&c, s[0], s[1], s[2], OP_BF16);
                    CHECK(e >= prev - 1e-15);
                    CHECK(e <= d->gemm_eff);
                    prev = e;
                }
            }
    /* a large square GEMM reaches the measured ceiling; a small one does not */
    CHECK_NEAR(price_gemm_efficiency(&c, 16384, 16384, 16384, OP_BF16), d->gemm_eff, 1e-3);
    CHECK(price_gemm_efficiency(&c, 512, 512, 512, OP_BF16) < 0.5 * d->gemm_eff);
    /* skinny: 16 rows against 8192 reach under a third of 8192's */
    CHECK(price_gemm_efficiency(&c, 16, 8192, 8192, OP_BF16) <
          price_gemm_efficiency(&c, 8192, 8192, 8192, OP_BF16) / 3);
}

static void test_gemm_time(void)
{
    struct config c;
    config_on(&c, "H100-80G");
    /* Llama-3.1-70B's QKV at tp 8, one 8192-token micro-batch: (8192 x 8192) . (8192 x 1280) */
    struct op o = {.kind = OP_GEMM, .dtype = OP_BF16, .m = 8192, .n = 1280, .k = 8192,
                   .count = 1, .weight = true};
    double f = 2.0 * 8192 * 1280 * 8192;
    CHECK_NEAR(price_op_us(&c, &o, PASS_FW),
               f / (989e12 * price_gemm_efficiency(&c, 8192, 1280, 8192, OP_BF16)) * 1e6, 1e-9);
    /* dX = dY W^T is 8192 x 8192 over 1280; dW = X^T dY is 8192 x 1280 over 8192 tokens */
    CHECK_NEAR(price_op_us(&c, &o, PASS_B),
               f / (989e12 * price_gemm_efficiency(&c, 8192, 8192, 1280, OP_BF16)) * 1e6, 1e-9);
    CHECK_NEAR(price_op_us(&c, &o, PASS_W),
               f / (989e12 * price_gemm_efficiency(&c, 8192, 1280, 8192, OP_BF16)) * 1e6, 1e-9);
    /* a GEMV (one token): memory-bound, the 8192 x 8192 bf16 weight read at 85 % of 3.35 TB/s:
     * 2 x (8192 + 8192^2 + 8192) B / 2847.5 GB/s = 47.15 us, where its FLOPs take 0.14 us */
    o.m = 1, o.n = 8192, o.k = 8192;
    CHECK_NEAR(price_op_us(&c, &o, PASS_FW), 2.0 * (8192 + 8192.0 * 8192 + 8192) / 2847.5e3,
               1e-6);
    /* FP8: the FP8 peak and ceiling; none on an A100 */
    o.m = 16384, o.n = 16384, o.k = 16384, o.dtype = OP_FP8;
    CHECK_NEAR(price_op_us(&c, &o, PASS_FW), 2.0 * 16384 * 16384 * 16384 / (1979e12 * 0.709) * 1e6,
               0.01 * price_op_us(&c, &o, PASS_FW));
    config_on(&c, "A100-80G");
    CHECK(isinf(price_op_us(&c, &o, PASS_FW)));
    CHECK(price_peak_flops(&c, OP_FP32) == 156e12); /* TF32: A100 datasheet 156 TFLOPS */
}

static void test_attention_memory(void)
{
    struct config c;
    config_on(&c, "A100-80G");
    /* FA2 forward at 16k keys: 0.65 x 16384 / (16384 + 384) of 312 TFLOPS = 198 TFLOPS, the
     * ~200 Dao 2023 reports causal at head dim 128 */
    double e = price_attention_efficiency(&c, PASS_FW, 16384);
    CHECK_NEAR(e * 312, 198.2, 0.1);
    CHECK(price_attention_efficiency(&c, PASS_FW, 512) < 0.6 * e);
    CHECK(price_attention_efficiency(&c, PASS_B, 16384) < e);
    struct op a = {.kind = OP_ATTENTION, .dtype = OP_BF16, .batch = 1, .s_q = 4096, .s_kv = 4096,
                   .heads = 32, .kv_heads = 8, .head_dim = 128, .causal = true, .flash = true};
    CHECK_NEAR(price_op_us(&c, &a, PASS_FW),
               op_flops(&a, PASS_FW) / (312e12 * price_attention_efficiency(&c, PASS_FW, 4096)) *
                   1e6,
               1e-9);
    CHECK(price_op_us(&c, &a, PASS_W) == 0);
    /* memory-bound: 1 GB read and written at 85 % of 2,039 GB/s = 577 us */
    struct op m = {.kind = OP_MEMORY, .fw_bytes = 1e9, .bw_bytes = 2e9};
    CHECK_NEAR(price_op_us(&c, &m, PASS_FW), 1e9 / (2039 * 0.85 * 1e3), 1e-9);
    CHECK_NEAR(price_op_us(&c, &m, PASS_B), 2e9 / (2039 * 0.85 * 1e3), 1e-9);
}

/* ---- frameworks --------------------------------------------------------------------------- */

static void test_frameworks(void)
{
    struct config c;
    config_on(&c, "H100-80G");
    /* the paper's shapes price as Megatron-DeepSpeed 2021, with the device's fitted figures */
    CHECK(config_framework(&c) == FRAMEWORK_MEGATRON_DS_2021);
    CHECK(framework_op_overhead_us(&c) == 3360 && framework_layer_overhead_us(&c) == 546);
    CHECK(framework_kernel_overhead_us(&c) == 0);
    /* a published model: Megatron-core's profile, not the 2021 fit */
    presets_model("Llama-3.1-70B", &c.model, NULL);
    CHECK(config_framework(&c) == FRAMEWORK_MEGATRON_CORE);
    const struct framework_profile *p = framework_of(&c);
    CHECK(p != NULL && framework_op_overhead_us(&c) == p->op_overhead_us);
    CHECK(framework_op_overhead_us(&c) < 3360 / 10.0);
    CHECK(framework_kernel_overhead_us(&c) > 0);
    /* an explicit cluster.op_overhead_us wins over any profile */
    c.cluster.device.op_overhead_us = 1234;
    c.given |= CONFIG_GIVEN_OP_OVERHEAD;
    CHECK(framework_op_overhead_us(&c) == 1234);
    /* and survives a --device applied after it */
    struct device_spec d;
    presets_device("B200", &d, NULL);
    config_set_device(&c, &d);
    CHECK(framework_op_overhead_us(&c) == 1234);
    enum framework_id id;
    struct mt_err e;
    CHECK(framework_parse("TorchTitan", &id, &e) == MT_OK && id == FRAMEWORK_TORCHTITAN);
    CHECK(framework_parse("megatron-deepspeed-2021", &id, &e) == MT_OK &&
          id == FRAMEWORK_MEGATRON_DS_2021);
    CHECK(framework_parse("nemo", &id, &e) != MT_OK);
    CHECK_STR_CONTAINS(e.msg, "megatron-core");
    CHECK(strcmp(framework_name(FRAMEWORK_MEGATRON_CORE), "megatron-core") == 0);
    CHECK(!framework_hides_tp_comm(&c) && !framework_hides_grad_reduce(&c));
    c.cluster.overlap_grad_reduce = true;
    CHECK(framework_hides_grad_reduce(&c) && !framework_hides_tp_comm(&c));
}

/* cluster.framework and the device keys read and write back */
static void test_config_keys(void)
{
    static const char text[] =
        "{\"model\": \"Llama-3.1-8B\", \"num_device\": 16384, \"cluster\": {\"device\": \"GB200\", "
        "\"framework\": \"torchtitan\", \"tp\": 8, \"dp\": 128, \"overlap_grad_reduce\": true, "
        "\"network_gbps\": 100}}";
    struct config c, again;
    struct mt_err e;
    int rc = config_load_string(text, sizeof text - 1, "t.json", &c, &e);
    CHECK(rc == MT_OK);
    if (rc != MT_OK) {
        fprintf(stderr, "%s\n", e.msg);
        return;
    }
    CHECK(c.cluster.framework == FRAMEWORK_TORCHTITAN && c.cluster.overlap_grad_reduce);
    CHECK_EQ_INT(c.cluster.gpus_per_node, 72);
    CHECK(c.cluster.device.net_gbps == 100);
    CHECK_EQ_INT(config_pp(&c), 16);
    char *json = config_to_json(&c);
    CHECK_STR_CONTAINS(json, "\"framework\": \"torchtitan\"");
    CHECK_STR_CONTAINS(json, "\"network_gbps\": 100");
    rc = config_load_string(json, strlen(json), "again.json", &again, &e);
    CHECK(rc == MT_OK);
    CHECK(again.cluster.framework == FRAMEWORK_TORCHTITAN && again.cluster.overlap_grad_reduce);
    CHECK(again.cluster.device.net_gbps == 100 && again.cluster.gpus_per_node == 72);
    /* a non-2021 config that did not give the overheads does not write them */
    CHECK(strstr(json, "op_overhead_us") == NULL);
    free(json);
    static const char bad[] = "{\"cluster\": {\"framework\": \"deepspeed\"}}";
    CHECK(config_load_string(bad, sizeof bad - 1, "bad.json", &c, &e) != MT_OK);
    CHECK_STR_CONTAINS(e.msg, "cluster.framework");
    CHECK_STR_CONTAINS(e.msg, "torchtitan");
    static const char many[] = "{\"num_device\": 262144}";
    CHECK(config_load_string(many, sizeof many - 1, "many.json", &c, &e) != MT_OK);
}

/* cluster.compute_factor and kernel_overhead_us win over the profile's: a GEMM's time is the
 * device model's divided by the factor (0.5: twice), a memory-bound op's is not moved; both
 * write back and read again; out of range is refused naming the key. */
static void test_profile_overrides(void)
{
    static const char text[] = "{\"model\": \"Llama-3.1-8B\", \"cluster\": {\"device\": "
                               "\"H100-80G\", \"compute_factor\": 0.5, \"kernel_overhead_us\": 7}}";
    struct config c, plain, again;
    struct mt_err e;
    CHECK(config_load_string(text, sizeof text - 1, "t.json", &c, &e) == MT_OK);
    config_on(&plain, "H100-80G");
    presets_model("Llama-3.1-8B", &plain.model, NULL);
    CHECK(framework_compute_factor(&c) == 0.5 && framework_kernel_overhead_us(&c) == 7);
    CHECK(framework_compute_factor(&plain) == framework_of(&plain)->compute_factor);
    struct op g = {.kind = OP_GEMM, .dtype = OP_BF16, .m = 8192, .n = 8192, .k = 8192,
                   .count = 1, .weight = true};
    CHECK_NEAR(price_op_us(&c, &g, PASS_FW) * 0.5,
               price_op_us(&plain, &g, PASS_FW) * framework_compute_factor(&plain), 1e-6);
    struct op m = {.kind = OP_MEMORY, .fw_bytes = 1e9, .bw_bytes = 2e9};
    CHECK(price_op_us(&c, &m, PASS_FW) == price_op_us(&plain, &m, PASS_FW));
    char *json = config_to_json(&c);
    CHECK_STR_CONTAINS(json, "\"compute_factor\": 0.5");
    CHECK_STR_CONTAINS(json, "\"kernel_overhead_us\": 7");
    CHECK(config_load_string(json, strlen(json), "again.json", &again, &e) == MT_OK);
    CHECK(framework_compute_factor(&again) == 0.5 && framework_kernel_overhead_us(&again) == 7);
    free(json);
    json = config_to_json(&plain); /* not given: not written (the profile's, whatever it is) */
    CHECK(strstr(json, "compute_factor") == NULL && strstr(json, "kernel_overhead_us") == NULL);
    free(json);
    static const char zero[] = "{\"cluster\": {\"compute_factor\": 0}}";
    CHECK(config_load_string(zero, sizeof zero - 1, "z.json", &c, &e) != MT_OK);
    CHECK_STR_CONTAINS(e.msg, "cluster.compute_factor");
    static const char neg[] = "{\"cluster\": {\"kernel_overhead_us\": -1}}";
    CHECK(config_load_string(neg, sizeof neg - 1, "n.json", &c, &e) != MT_OK);
    CHECK_STR_CONTAINS(e.msg, "cluster.kernel_overhead_us");
}

/* A calibration's micro-benchmark tables replace the device's defaults where they measured:
 * a GEMM at its measured rate (400 TFLOP/s of H100's 989: 0.4044...), a collective at its
 * measured busbw with no latency added (nccl-tests' busbw already holds it), HBM at the copy's
 * rate; a shape the table has nothing near keeps the default curve. */
static void test_calibration_tables(void)
{
    struct config c;
    config_default(&c);
    struct device_spec d;
    CHECK_EQ_INT(presets_device("H100-80G", &d, NULL), MT_OK);
    config_set_device(&c, &d);
    double curve = price_gemm_efficiency(&c, 4096, 4096, 4096, OP_BF16);
    double far = price_gemm_efficiency(&c, 64, 64, 64, OP_BF16);
    double ar_default = price_collective_us(&c, COLL_ALL_REDUCE, 1 << 30, 8, LINK_NVLINK);
    struct microcal_builder *b = microcal_builder_new();
    microcal_add_gemm(b, &(struct microcal_gemm){.dtype = OP_BF16, .m = 4096, .n = 4096,
                                                 .k = 4096, .tflops = 400});
    microcal_add_coll(b, &(struct microcal_coll){.coll = COLL_ALL_REDUCE, .link = LINK_NVLINK,
                                                 .ranks = 8, .bytes = 1 << 30,
                                                 .busbw_gbps = 250});
    microcal_add_hbm(b, &(struct microcal_hbm){.bytes = 1 << 28, .gbps = 2000});
    const struct microcal *t = NULL;
    struct mt_err e = {0};
    CHECK_EQ_INT(microcal_build(b, &t, NULL, &e), MT_OK);
    microcal_builder_free(b);
    c.profile.micro = t;
    CHECK_NEAR(price_gemm_efficiency(&c, 4096, 4096, 4096, OP_BF16), 400e12 / 989e12, 1e-12);
    CHECK(fabs(curve - 400e12 / 989e12) > 0.1); /* the default curve differs: the table won */
    CHECK_NEAR(price_gemm_efficiency(&c, 64, 64, 64, OP_BF16), far, 1e-15); /* nothing near */
    /* 2 (n-1)/n x 1 GiB / 250 GB/s = 7516.19 us, no latency term */
    CHECK_NEAR(price_collective_us(&c, COLL_ALL_REDUCE, 1 << 30, 8, LINK_NVLINK),
               2.0 * 7 / 8 * (1 << 30) / 250e3, 1e-9);
    CHECK(ar_default < 2.0 * 7 / 8 * (1 << 30) / 250e3);
    struct op mem = {.kind = OP_MEMORY, .fw_bytes = 1 << 28};
    CHECK_NEAR(price_op_us(&c, &mem, PASS_FW), (double)(1 << 28) / 2000e3, 1e-9);
    microcal_pool_clear();
}

int main(void)
{
    test_calibration_tables();
    test_presets_datasheets();
    test_collectives();
    const char *const *names = presets_device_names();
    for (int i = 0; names[i] != NULL; i++)
        test_gemm_curve(names[i]);
    test_gemm_time();
    test_attention_memory();
    test_frameworks();
    test_config_keys();
    test_profile_overrides();
    return check_report("test_price");
}
