/* tests/unit/test_fsdp.c: ZeRO stages and FSDP under PP (issue 39 item 3; model/config_zero.c,
 * model/ops_build_fsdp.c, model/cost.c stage_fsdp) against cases worked by hand:
 *   ZeRO's per-parameter bytes (Rajbhandari et al. 2020, §5 and Figure 1: Psi = 7.5B, N = 64,
 *   K = 12, fp16 gradients: 120 GB baseline, 31.4 GB P_os, 16.6 GB P_os+g, 1.9 GB P_os+g+p);
 *   Megatron's distributed optimizer 6 + 12/N (docs distrib_optimizer.md: bf16 parameters,
 *   fp32 gradients: 18 bytes without, 6 + 12/d with) = ZeRO-1; torchtitan's FSDP2 16/N (fp32
 *   sharded parameter, gradient, Adam m and v);
 *   Llama-3.1-8B (h 4096, 32 heads, 8 K/V heads of 128, FFN 14336, vocabulary 128256):
 *   a block's parameters 2 x 4096^2 (q, o) + 2 x 4096 x 1024 (k, v) + 3 x 4096 x 14336 (gate,
 *   up, down) + 2 x 4096 (norms) = 218,112,000; the embedding 128256 x 4096 = 525,336,576;
 *   stage 0 of pp 2 (16 blocks + the embedding) 4,015,128,576;
 *   a block's all-gather at dp 8 on NVLink: 2 x 218,112,000 = 436,224,000 bytes, 7/8 of them on
 *   the bus, NCCL's latency 6.6 + 7 x 0.6 us; its reduce-scatter 4 x 218,112,000 (fp32);
 *   the exposed time of a prefetched chain: n like units, gather g, compute t:
 *   g + (n-1) max(0, g - t); reduce r after each: sum max(0, r - t) + r. */
#include <config.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/config.h"
#include "model/cost.h"
#include "model/ops.h"
#include "model/presets.h"
#include "model/price.h"
#include "tests/check.h"
#include "util/err.h"

#define LAYER_PARAMS 218112000.0
#define EMBED_PARAMS 525336576.0
#define STAGE0_PARAMS (16 * LAYER_PARAMS + EMBED_PARAMS)

static const struct op *find(const struct op_list *l, const char *name)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->op[i].name, name) == 0)
            return &l->op[i];
    return NULL;
}

static void llama8b(struct config *c, int dp, int pp, int zero)
{
    config_default(c);
    CHECK_EQ_INT(presets_model("Llama-3.1-8B", &c->model, NULL), MT_OK);
    struct device_spec d;
    CHECK_EQ_INT(presets_device("H100-80G", &d, NULL), MT_OK);
    config_set_device(c, &d);
    c->model.seq_length = 8192;
    c->cluster.framework = FRAMEWORK_TORCHTITAN;
    c->cluster.dp = dp;
    c->cluster.zero_stage = zero;
    c->num_device = dp * pp;
    c->global_batch_size = dp * 8;
}

static void test_zero_bytes(void)
{
    struct config c;
    config_default(&c); /* the paper's fp16 stack: g = 2 */
    c.cluster.dp = 64;
    c.num_device = 64;
    double psi = 7.5e9, want[4] = {120e9, 31.40625e9, 16.640625e9, 1.875e9};
    for (int z = 0; z < 4; z++) {
        c.cluster.zero_stage = z;
        CHECK_NEAR(psi * config_bytes_per_param(&c), want[z], 1);
    }
    /* Megatron-core's mixed precision: the distributed optimizer is ZeRO-1, one rule */
    llama8b(&c, 8, 1, 0);
    c.cluster.framework = FRAMEWORK_MEGATRON_CORE;
    CHECK_NEAR(config_bytes_per_param(&c), 18, 1e-12);
    c.distributed_optimizer = true;
    CHECK_EQ_INT(config_zero_stage(&c), 1);
    CHECK_NEAR(config_bytes_per_param(&c), 6 + 12.0 / 8, 1e-12);
    c.cluster.zero_stage = 1;
    CHECK_NEAR(config_bytes_per_param(&c), 6 + 12.0 / 8, 1e-12);
    c.cluster.zero_stage = 2;
    CHECK_NEAR(config_bytes_per_param(&c), 2 + 16.0 / 8, 1e-12);
    c.cluster.zero_stage = 3;
    CHECK_NEAR(config_bytes_per_param(&c), 18.0 / 8, 1e-12);
    c.cluster.framework = FRAMEWORK_TORCHTITAN; /* fp32 shard = the master: 4 + 4 + 8 */
    CHECK_NEAR(config_bytes_per_param(&c), 16.0 / 8, 1e-12);
    /* HSDP: sharded over 4 of the 8 replicas */
    c.cluster.dp_shard = 4;
    CHECK_EQ_INT(config_dp_shard(&c), 4);
    CHECK_EQ_INT(config_dp_replicate(&c), 2);
    CHECK_NEAR(config_bytes_per_param(&c), 16.0 / 4, 1e-12);
}

static void test_chain(void)
{
    double g[4] = {3, 3, 3, 3}, t[4] = {2, 2, 2, 2}, r[2] = {3, 3};
    CHECK_NEAR(fsdp_chain_exposed_us(g, t, NULL, 4), 3 + 3 * (3 - 2), 1e-12);
    double small[4] = {1, 1, 1, 1};
    CHECK_NEAR(fsdp_chain_exposed_us(small, t, NULL, 4), 1, 1e-12); /* the first gather only */
    /* compute 0-2, 2-4; reduces 2-5, 5-8: 8 - 4 */
    CHECK_NEAR(fsdp_chain_exposed_us(NULL, t, r, 2), (3 - 2) + 3, 1e-12);
    CHECK_NEAR(fsdp_chain_exposed_us(NULL, t, NULL, 4), 0, 1e-12);
}

static void test_layer_ops(void)
{
    struct config c;
    llama8b(&c, 8, 1, 3);
    struct op_list l;
    op_list_init(&l);
    ops_build_layer(&c, 8192, &l);
    const struct op *ag = find(&l, "fsdp_gather_fw"), *agb = find(&l, "fsdp_gather_bw"),
                    *rs = find(&l, "fsdp_reduce_scatter");
    CHECK(ag != NULL && agb != NULL && rs != NULL); /* pp 1: resharded after the forward */
    CHECK(find(&l, "fsdp_replica_all_reduce") == NULL); /* no replicas */
    if (ag && rs) {
        CHECK_NEAR(ag->bytes, 2 * LAYER_PARAMS, 0.5);
        CHECK_NEAR(rs->bytes, 4 * LAYER_PARAMS, 0.5);
        CHECK_EQ_INT(ag->group, 8);
        CHECK_EQ_INT(ag->link, LINK_NVLINK);
        CHECK(ag->overlapped && ag->pass == PASS_FW && rs->pass == PASS_B);
        double bw = price_busbw_gbps(&c, COLL_ALL_GATHER, ag->bytes, 8, 8, LINK_NVLINK);
        double want = 6.6 + 7 * 0.6 + 7.0 / 8 * 436224000.0 / (bw * 1e3);
        CHECK_NEAR(price_op_us(&c, ag, PASS_FW), want, 1e-6);
    }
    op_list_fini(&l);
    /* ZeRO-2: only the reduce-scatter a micro-batch; ZeRO-1: nothing in the block */
    llama8b(&c, 8, 1, 2);
    op_list_init(&l);
    ops_build_layer(&c, 8192, &l);
    CHECK(find(&l, "fsdp_gather_fw") == NULL && find(&l, "fsdp_reduce_scatter") != NULL);
    op_list_fini(&l);
    llama8b(&c, 8, 1, 1);
    op_list_init(&l);
    ops_build_layer(&c, 8192, &l);
    CHECK(find(&l, "fsdp_reduce_scatter") == NULL);
    op_list_fini(&l);
}

/* Stage 0 of pp 2 (16 blocks + embedding) at dp 4, each stage's bytes worked by hand */
static void build(struct config *c, struct cost_model *m)
{
    struct mt_err e;
    CHECK_EQ_INT(config_validate(c, &e), MT_OK);
    CHECK_EQ_INT(cost_model_build(c, 2, 1, c->cluster.dp, m, &e), MT_OK);
}

static void test_stage_memory(void)
{
    struct config c;
    struct cost_model m0, m;
    llama8b(&c, 4, 2, 0);
    build(&c, &m0);
    const struct stage_cost *s0 = &m0.stage[0];
    CHECK_NEAR(s0->params, STAGE0_PARAMS, 0.5);
    CHECK_NEAR(s0->static_bytes, 18 * STAGE0_PARAMS, 1);
    /* ZeRO-1: 6 + 12/4; ZeRO-2: 2 + 16/4 and one unit's fp32 gradient in a backward (the
     * embedding, the largest unit) */
    double want_static[3] = {9, 6};
    for (int z = 1; z <= 2; z++) {
        llama8b(&c, 4, 2, z);
        build(&c, &m);
        CHECK_NEAR(m.stage[0].static_bytes, want_static[z - 1] * STAGE0_PARAMS, 1);
        CHECK_NEAR(m.stage[0].bw_work_bytes - s0->bw_work_bytes,
                   z == 2 ? 4 * EMBED_PARAMS : 0, 1);
        cost_model_fini(&m);
    }
    /* FSDP under PP, torchtitan's default (not resharded): 16/4 sharded + the gathered bf16
     * copy 2 + the accumulated fp32 gradients 4 = 10 bytes a parameter; nothing per
     * micro-batch; the step gathers 2P and reduce-scatters 4P over the 4 on NVLink */
    llama8b(&c, 4, 2, 3);
    build(&c, &m);
    const struct stage_cost *s = &m.stage[0];
    CHECK_NEAR(s->static_bytes, 10 * STAGE0_PARAMS, 1);
    CHECK_NEAR(s->fsdp_fw_us + s->fsdp_bw_us, 0, 1e-12);
    CHECK_NEAR(s->fw, s0->fw, 1e-6);
    CHECK_NEAR(s->fw_work_bytes, s0->fw_work_bytes, 1e-6);
    double ar = price_collective_us(&c, COLL_ALL_GATHER, 2 * STAGE0_PARAMS, 4, LINK_NVLINK) +
                price_collective_us(&c, COLL_REDUCE_SCATTER, 4 * STAGE0_PARAMS, 4, LINK_NVLINK);
    CHECK_NEAR(s->ar, ar, 1e-6);
    cost_model_fini(&m);
    /* "always": 16/4 + 4 (gradients still accumulated over the step); two units' bf16
     * parameters (the embedding and the first block, the largest 2 x 525,336,576) live in a
     * forward and in a backward; each micro-batch gathers, so the forward shows more */
    c.cluster.reshard_after_forward = FSDP_RESHARD_ALWAYS;
    build(&c, &m);
    s = &m.stage[0];
    CHECK_NEAR(s->static_bytes, 8 * STAGE0_PARAMS, 1);
    CHECK_NEAR(s->fw_work_bytes - s0->fw_work_bytes, 4 * EMBED_PARAMS, 1);
    CHECK_NEAR(s->bw_work_bytes - s0->bw_work_bytes, 4 * EMBED_PARAMS, 1);
    CHECK(s->fsdp_fw_us > 0 && s->fw > s0->fw);
    cost_model_fini(&m);
    /* HSDP: dp 8 as 2 replicas of a shard group of 4: the shard's fp32 gradients (4P/4)
     * all-reduced over the 2 after the reduce-scatter */
    llama8b(&c, 8, 2, 3);
    c.cluster.dp_shard = 4;
    build(&c, &m);
    s = &m.stage[0];
    CHECK_NEAR(s->static_bytes, 10 * STAGE0_PARAMS, 1);
    ar += price_collective_us(&c, COLL_ALL_REDUCE, STAGE0_PARAMS, 2, LINK_NVLINK);
    CHECK_NEAR(s->ar, ar, 1e-6);
    cost_model_fini(&m);
    cost_model_fini(&m0);
}

static void test_config_keys(void)
{
    static const char text[] =
        "{\"model\": {\"preset\": \"Llama-3.1-8B\"}, \"num_device\": 16,"
        " \"cluster\": {\"device\": \"H100-80G\", \"framework\": \"torchtitan\", \"dp\": 8,"
        " \"zero_stage\": 3, \"dp_shard\": 4, \"fsdp_reshard_after_forward\": \"never\"}}";
    struct config c, d;
    struct mt_err e;
    CHECK_EQ_INT(config_load_string(text, sizeof text - 1, "t.json", &c, &e), MT_OK);
    CHECK_EQ_INT(c.cluster.zero_stage, 3);
    CHECK_EQ_INT(c.cluster.dp_shard, 4);
    CHECK_EQ_INT(c.cluster.reshard_after_forward, FSDP_RESHARD_NEVER);
    char *out = config_to_json(&c);
    CHECK(out != NULL);
    if (out) {
        CHECK_EQ_INT(config_load_string(out, strlen(out), "w.json", &d, &e), MT_OK);
        CHECK_EQ_INT(d.cluster.zero_stage, 3);
        CHECK_EQ_INT(d.cluster.dp_shard, 4);
        CHECK_EQ_INT(d.cluster.reshard_after_forward, FSDP_RESHARD_NEVER);
        free(out);
    }
    /* bad values name their field */
    static const char *const bad[][2] = {
        {"\"zero_stage\": 4", "zero_stage"},
        {"\"zero_stage\": 3, \"fsdp_reshard_after_forward\": \"sometimes\"",
         "fsdp_reshard_after_forward"},
        {"\"zero_stage\": 3, \"dp_shard\": 3", "cluster.dp_shard: 3 does not divide dp 8"},
        {"\"zero_stage\": 1, \"fsdp_reshard_after_forward\": \"always\"",
         "needs zero_stage 3"},
        {"\"dp_shard\": 4", "with zero_stage 0"},
        {"\"zero_stage\": 3, \"dp_shard\": 1", "1 shards nothing"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char buf[512];
        snprintf(buf, sizeof buf,
                 "{\"model\": {\"preset\": \"Llama-3.1-8B\"}, \"num_device\": 16, \"cluster\": "
                 "{\"device\": \"H100-80G\", \"framework\": \"torchtitan\", \"dp\": 8, %s}}",
                 bad[i][0]);
        err_clear(&e);
        CHECK_EQ_INT(config_load_string(buf, strlen(buf), "b.json", &c, &e), MT_EINVAL);
        CHECK_STR_CONTAINS(e.msg, bad[i][1]);
    }
    /* the routed experts' own FSDP mesh (ep > 1) is not modelled: refused, not mispriced */
    config_default(&c);
    CHECK_EQ_INT(presets_model("Mixtral-8x7B", &c.model, NULL), MT_OK);
    c.cluster.framework = FRAMEWORK_TORCHTITAN;
    c.num_device = 64;
    c.cluster.dp = 8;
    c.cluster.ep = 8;
    c.cluster.zero_stage = 3;
    CHECK_EQ_INT(config_validate(&c, &e), MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "expert data-parallel group");
    /* the 2021 estimate has no ZeRO-2/3 */
    config_default(&c);
    c.cluster.zero_stage = 2;
    CHECK_EQ_INT(config_validate(&c, &e), MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "2021 Megatron-DeepSpeed");
}

int main(void)
{
    test_zero_bytes();
    test_chain();
    test_layer_ops();
    test_stage_memory();
    test_config_keys();
    return check_report("test_fsdp");
}
