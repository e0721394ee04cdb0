/* tests/unit/test_moe.c: mixtures of experts and MLA (model/moe.h; issue 38 items 1-3, 6).
 * A small MoE block worked by hand (E = 4, top-2, ep = 2: FLOPs, bytes, the four all-to-alls,
 * parameters), the block pattern, the published parameter totals of the presets, Megatron-LM's
 * static-memory formula (compute_weight_and_optimizer_memory) reproduced by hand on two
 * configs, the experts' sharding over ep and their optimizer state over the expert dp, the
 * validation's messages, and DeepSeek-V3 / Qwen3-235B-A22B stages built. */
#include <config.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/config.h"
#include "model/cost.h"
#include "model/moe.h"
#include "model/ops.h"
#include "model/presets.h"
#include "tests/check.h"
#include "util/err.h"

static const struct op *find(const struct op_list *l, const char *name)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->op[i].name, name) == 0)
            return &l->op[i];
    return NULL;
}

static int count_a2a(const struct op_list *l, enum op_pass p)
{
    int n = 0;
    for (size_t i = 0; i < l->n; i++)
        n += l->op[i].kind == OP_COLLECTIVE && l->op[i].coll == COLL_ALL_TO_ALL &&
             l->op[i].group_kind == GROUP_EP && l->op[i].pass == p;
    return n;
}

/* h 8, 2 heads, SwiGLU, vocabulary 128 (a multiple of Megatron's 128: no padding), 2 layers:
 * layer 0 dense (first_k_dense 1, FFN 16), layer 1 MoE: E = 4 experts of width 6, top-2, a
 * shared expert of width 6. One micro-batch of 16 tokens; ep 2 over dp 2; skew 1. */
static void small_config(struct config *c)
{
    config_default(c);
    struct model_spec *m = &c->model;
    memset(m, 0, sizeof *m);
    snprintf(m->name, sizeof m->name, "small-moe");
    m->arch = ARCH_LLAMA2;
    m->hidden_size = 8;
    m->num_layers = 2;
    m->num_attention_heads = 2;
    m->seq_length = 16;
    m->vocab_size = 128;
    m->ffn_hidden_size = 16;
    m->moe = (struct moe_spec){.num_experts = 4, .router_topk = 2, .ffn_hidden_size = 6,
                               .shared_ffn = 6, .first_k_dense = 1, .routing_skew = 1};
    c->cluster.framework = FRAMEWORK_MEGATRON_CORE;
    c->num_device = 2;
    c->cluster.dp = 2;
    c->cluster.ep = 2;
    c->global_batch_size = 2;
}

/* Per rank, T = 16 tokens, k = 2: 32 routed rows, E/ep = 2 experts of 16 rows each.
 *   router (16 x 8) . (8 x 4): 2 x 16 x 4 x 8 = 1,024 FLOPs; 32 parameters
 *   experts_gate_up: 2 x (16 x 8) . (8 x 12): 2 x 2 x 16 x 12 x 8 = 6,144; 2 x 8 x 12 = 192 params
 *   experts_down: 2 x (16 x 6) . (6 x 8): 2 x 2 x 16 x 8 x 6 = 3,072; 2 x 6 x 8 = 96 params
 *   the all-to-all buffer: 32 rows x 8 x 2 bytes = 512 bytes, (ep-1)/ep = 256 leave the rank;
 *   FP8 dispatch: 32 x (8 + 4 x 8 / 128) = 264 bytes
 *   dispatch and combine forward, their mirrors in the backward: 2 + 2 */
static void test_small_layer(void)
{
    struct config c;
    small_config(&c);
    struct mt_err e;
    CHECK_EQ_INT(config_validate(&c, &e), MT_OK);
    struct op_list l;
    op_list_init(&l);
    ops_build_block(&c, 16, BLOCK_MOE, &l);
    const struct op *r = find(&l, "router"), *gu = find(&l, "experts_gate_up"),
                    *dn = find(&l, "experts_down"), *d = find(&l, "ep_dispatch");
    CHECK(r != NULL && gu != NULL && dn != NULL && d != NULL);
    if (r == NULL || gu == NULL || dn == NULL || d == NULL)
        return;
    CHECK_NEAR(op_flops(r, PASS_FW), 1024, 0);
    CHECK_NEAR(r->params, 32, 0);
    CHECK_EQ_INT(gu->kind, OP_GROUPED_GEMM);
    CHECK_NEAR(gu->count, 2, 0);
    CHECK_NEAR(gu->m, 16, 0);
    CHECK_NEAR(op_flops(gu, PASS_FW), 6144, 0);
    CHECK_NEAR(op_flops(gu, PASS_B), 6144, 0);
    CHECK_NEAR(op_flops(gu, PASS_W), 6144, 0);
    CHECK_NEAR(gu->params, 192, 0);
    CHECK_NEAR(op_flops(dn, PASS_FW), 3072, 0);
    CHECK_NEAR(dn->params, 96, 0);
    CHECK_NEAR(d->bytes, 512, 0);
    CHECK_NEAR(op_coll_bus_factor(d->coll, d->group) * d->bytes, 256, 0);
    CHECK_EQ_INT(d->link, LINK_NVLINK); /* 2 ranks of one node */
    CHECK_EQ_INT(count_a2a(&l, PASS_FW), 2);
    CHECK_EQ_INT(count_a2a(&l, PASS_B), 2);
    /* the expanded tokens kept: the experts' inputs 32 x 8 x 2 = 512 B, the GLU's 3 x 32 x 6 x 2
     * = 1,152 B, fc2's input 32 x 6 x 2 = 384 B, unpermute's expert outputs 512 B */
    CHECK_NEAR(gu->keep_bytes, 512, 0);
    CHECK_NEAR(find(&l, "experts_swiglu")->keep_bytes, 1152, 0);
    CHECK_NEAR(dn->keep_bytes, 384, 0);
    CHECK_NEAR(find(&l, "unpermute")->keep_bytes, 512, 0);
    op_list_fini(&l);

    /* FP8 dispatch: the forward dispatch only */
    c.model.moe.fp8_dispatch = true;
    op_list_init(&l);
    ops_build_block(&c, 16, BLOCK_MOE, &l);
    CHECK_NEAR(find(&l, "ep_dispatch")->bytes, 264, 0);
    CHECK_NEAR(find(&l, "ep_combine")->bytes, 512, 0);
    CHECK_NEAR(find(&l, "ep_dispatch_dx")->bytes, 512, 0);
    op_list_fini(&l);
    c.model.moe.fp8_dispatch = false;

    /* the default skew 1.2: 38.4 rows on the busiest rank; a capacity factor 1.1 caps it */
    c.model.moe.routing_skew = 0;
    op_list_init(&l);
    ops_build_block(&c, 16, BLOCK_MOE, &l);
    CHECK_NEAR(op_flops(find(&l, "experts_gate_up"), PASS_FW), 6144 * 1.2, 1e-9);
    op_list_fini(&l);
    c.model.moe.capacity_factor = 1.1;
    op_list_init(&l);
    ops_build_block(&c, 16, BLOCK_MOE, &l);
    CHECK_NEAR(op_flops(find(&l, "experts_gate_up"), PASS_FW), 6144 * 1.1, 1e-9);
    op_list_fini(&l);

    /* ep = 1: no all-to-all, all four experts on the rank, 8 rows each */
    small_config(&c);
    c.cluster.ep = 1;
    op_list_init(&l);
    ops_build_block(&c, 16, BLOCK_MOE, &l);
    CHECK(find(&l, "ep_dispatch") == NULL);
    CHECK_NEAR(find(&l, "experts_gate_up")->count, 4, 0);
    CHECK_NEAR(find(&l, "experts_gate_up")->m, 8, 0);
    CHECK_NEAR(op_flops(find(&l, "experts_gate_up"), PASS_FW), 6144, 0);
    op_list_fini(&l);
}

/* Parameters of the small model: attention 4 x 64 = 256, two norms 16; dense MLP 3 x 8 x 16 =
 * 384 (block 656); MoE block 272 + router 32 + experts 4 x 3 x 8 x 6 = 576 + shared 3 x 8 x 6 =
 * 144 (1,024); embedding and head 2 x 128 x 8 = 2,048; final norm 8: 3,736. Active: 576 x 2/4
 * of the experts: 3,736 - 288 = 3,448. */
static void test_small_params(void)
{
    struct config c;
    small_config(&c);
    CHECK(!moe_layer_is_moe(&c.model, 0));
    CHECK(moe_layer_is_moe(&c.model, 1));
    struct moe_counts k;
    moe_model_counts(&c.model, &k);
    CHECK_NEAR(k.total, 3736, 0);
    CHECK_NEAR(k.active, 3448, 0);
    CHECK_NEAR(k.experts, 576, 0);
    /* one stage per rank: ep 2 holds half the experts (288 of 576) */
    CHECK_NEAR(cost_stage_params_at(&c, 0, 2, true, true), 3736 - 288, 0);
    /* the pattern: Qwen's decoder_sparse_step 2 makes layers 1, 3, 5 ... MoE */
    struct model_spec m = c.model;
    m.num_layers = 6;
    m.moe.first_k_dense = 0;
    m.moe.layer_freq = 2;
    CHECK_EQ_INT(moe_layers_in(&m, 0, 6), 3);
    CHECK(!moe_layer_is_moe(&m, 0) && moe_layer_is_moe(&m, 1) && moe_layer_is_moe(&m, 5));
}

/* The published totals (Hugging Face safetensors counts):
 *   Mixtral-8x7B 46,702,792,704; Qwen3-30B-A3B 30,532,122,624; Qwen3-235B-A22B 235,093,634,560;
 *   DeepSeek-V3 671B main model, computed from its config.json: attention (MLA) 187,107,328 +
 *   two norms 14,336; dense MLP 3 x 7168 x 18432 = 396,361,728; MoE 256 x 3 x 7168 x 2048 +
 *   shared 3 x 7168 x 2048 + router 256 x 7168 + its bias 256 = 11,320,164,608; 3 dense + 58
 *   MoE blocks, embedding and head 2 x 129280 x 7168, final norm 7168: 671,026,419,200. The MTP
 *   module: norms 3 x 7168, eh_proj 2 x 7168^2, a MoE block: 11,610,068,224. The HF count
 *   684,531,386,000 = 671,026,419,200 + 11,610,068,224 + the MTP's own copies of the embedding
 *   and head (1,853,358,080) + the FP8 weights' 128 x 128 block scales (41,540,496: 35,640 a
 *   dense block, 702,264 a MoE block, 3 + 59 of them).
 *   DeepSeek-V2-Lite 15,706,484,224 (its 15.7B; active 2.66B with the embedding, DeepSeek's
 *   2.4B without its 0.21B). Active: Mixtral-8x7B 12.9B, Qwen3-30B-A3B 3.3B, Qwen3-235B-A22B
 *   22B, DeepSeek-V3 37B (each as published, rounded). */
static void test_published(void)
{
    static const struct {
        const char *name;
        double total, active_lo, active_hi;
    } want[] = {
        {"Mixtral-8x7B", 46702792704.0, 12.85e9, 12.95e9},
        {"Qwen3-30B-A3B", 30532122624.0, 3.3e9, 3.4e9},
        {"Qwen3-235B-A22B", 235093634560.0, 22.0e9, 22.5e9},
        {"DeepSeek-V3", 671026419200.0, 36.5e9, 37.6e9},
        {"DeepSeek-V2-Lite", 15706484224.0, 2.4e9, 2.7e9},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        struct model_spec m;
        CHECK_EQ_INT(presets_model(want[i].name, &m, NULL), MT_OK);
        struct moe_counts k;
        moe_model_counts(&m, &k);
        CHECK_NEAR(k.total, want[i].total, 0);
        CHECK_NEAR(presets_model_params(&m), want[i].total, 0);
        CHECK(k.active >= want[i].active_lo && k.active <= want[i].active_hi);
    }
    struct model_spec v3;
    presets_model("DeepSeek-V3", &v3, NULL);
    struct moe_counts k;
    moe_model_counts(&v3, &k);
    CHECK_NEAR(k.mtp, 11610068224.0, 0);
    CHECK_NEAR(k.total + k.mtp + 2 * 129280.0 * 7168 + 41540496.0, 684531386000.0, 0);
}

/* Megatron-LM's compute_weight_and_optimizer_memory (megatron/training/theoretical_memory_
 * usage.py), restated: a dense block 2h(f x 3/2 + n) + attention, a MoE block 2h(f_moe E 3/2
 * + f_shared 3/2 + n) + attention (n = 1 for RMSNorm: the two norms), MLA's attention
 * q_lora(h + a(d_nope + d_rope) + n) (or h a (d_nope + d_rope) without q_lora) + kv_lora(h +
 * a(d_nope + d_v) + n) + h d_rope + a d_v h; the block's sum + the final norm, + the embedding
 * and (untied, pp 1) the head, all / tp, at 18 bytes or 6 + 12/dp with the distributed
 * optimizer. It counts no router (E h a MoE block) and divides no expert by ep.
 *   Mixtral-8x7B, tp 1, pp 1, dp 8, distributed optimizer: attention 2h^2 (1 + 8/32) =
 *   41,943,040; MoE block 8192 (14336 x 8 x 1.5 + 1) + 41,943,040 = 1,451,237,376; x 32 +
 *   4096 + 2 x 131,072,000 = 46,701,744,128 parameters x 7.5 = 350,263,080,960 bytes. Ours
 *   counts the 32 routers too: + 32 x 32,768 x 7.5.
 *   DeepSeek-V2-Lite, same degrees: MLA 6,291,456 + 512 (2048 + 4096 + 1) + 131,072 +
 *   4,194,304 = 13,763,072; dense block 4096 (10944 x 1.5 + 1) + 13,763,072 = 81,007,104; MoE
 *   block 4096 (1408 x 64 x 1.5 + 2816 x 1.5 + 1) + 13,763,072 = 584,716,800; 81,007,104 + 26 x
 *   584,716,800 + 2048 + 2 x 209,715,200 = 15,703,076,352 x 7.5 = 117,773,072,640 bytes; ours +
 *   26 routers of 64 x 2048. */
static void test_megatron_static(void)
{
    static const struct {
        const char *name;
        double megatron_bytes, routers;
    } want[] = {
        {"Mixtral-8x7B", 350263080960.0, 32 * 32768.0},
        {"DeepSeek-V2-Lite", 117773072640.0, 26 * 131072.0},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        struct config c;
        config_default(&c);
        presets_model(want[i].name, &c.model, NULL);
        c.cluster.framework = FRAMEWORK_MEGATRON_CORE;
        c.num_device = 8;
        c.cluster.dp = 8;
        c.distributed_optimizer = true;
        c.global_batch_size = 8;
        struct mt_err e;
        CHECK_EQ_INT(config_validate(&c, &e), MT_OK);
        struct cost_model cm;
        CHECK_EQ_INT(cost_model_build(&c, 1, 1, 8, &cm, &e), MT_OK);
        CHECK_NEAR(cm.stage[0].static_bytes, want[i].megatron_bytes + 7.5 * want[i].routers, 0);
        cost_model_fini(&cm);
    }
    /* ep 8 (edp 1): Mixtral's experts 32 x 8 x 3 x 4096 x 14336 = 45,097,156,608, an eighth a
     * rank at 6 + 12 = 18 bytes (one replica: nothing to shard); the rest 1,605,636,096 at 7.5:
     * 12,042,270,720 + 101,468,602,368 = 113,510,873,088 bytes */
    struct config c;
    config_default(&c);
    presets_model("Mixtral-8x7B", &c.model, NULL);
    c.cluster.framework = FRAMEWORK_MEGATRON_CORE;
    c.num_device = 8;
    c.cluster.dp = 8;
    c.cluster.ep = 8;
    c.distributed_optimizer = true;
    c.global_batch_size = 8;
    struct mt_err e;
    CHECK_EQ_INT(config_validate(&c, &e), MT_OK);
    CHECK_EQ_INT(config_expert_dp(&c), 1);
    struct cost_model cm;
    CHECK_EQ_INT(cost_model_build(&c, 1, 1, 8, &cm, &e), MT_OK);
    CHECK_NEAR(cm.stage[0].static_bytes, 113510873088.0, 0);
    cost_model_fini(&cm);
}

static void expect_error(struct config *c, const char *needle)
{
    struct mt_err e;
    CHECK_EQ_INT(config_validate(c, &e), MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, needle);
}

static void test_validate(void)
{
    struct config c;
    small_config(&c);
    c.cluster.ep = 3;
    expect_error(&c, "cluster.ep: 3 does not divide model.moe.num_experts 4");
    small_config(&c);
    c.cluster.ep = 4; /* 4 x etp 1 over 2 GPUs a stage */
    expect_error(&c, "does not divide the 2 GPUs of a pipeline stage");
    small_config(&c);
    c.model.moe.router_topk = 5;
    expect_error(&c, "model.moe.router_topk");
    small_config(&c);
    c.num_device = 4;
    c.cluster.tp = 2;
    expect_error(&c, "sequence_parallel");
    small_config(&c);
    c.model.moe.num_experts = 0;
    expect_error(&c, "cluster.ep: 2 but the model has no experts");
    small_config(&c);
    c.cluster.framework = FRAMEWORK_MEGATRON_DS_2021;
    expect_error(&c, "cluster.framework");
}

/* DeepSeek-V3 on 2,048 H800 as its report trains it (§3.2: PP 16, EP 64, ZeRO-1, no TP):
 * 61 blocks over 16 stages, the MTP module on the last; every stage's static bytes below the
 * 80 GiB and the routed experts' share E/ep = 4 a rank. Qwen3-235B-A22B on 256 H100, pp 8,
 * ep 8, tp 4 with SP. */
static void test_big(void)
{
    struct config c;
    config_default(&c);
    presets_model("DeepSeek-V3", &c.model, NULL);
    struct device_spec d;
    CHECK_EQ_INT(presets_device("H800", &d, NULL), MT_OK);
    config_set_device(&c, &d);
    c.num_device = 2048;
    c.cluster.dp = 128;
    c.cluster.ep = 64;
    c.distributed_optimizer = true;
    c.global_batch_size = 128 * 16; /* 16 micro-batches of one sequence a replica */
    struct mt_err e;
    int rc = config_validate(&c, &e);
    CHECK_EQ_INT(rc, MT_OK);
    if (rc != MT_OK)
        fprintf(stderr, "%s\n", e.msg);
    CHECK_EQ_INT(config_expert_dp(&c), 2);
    struct cost_model cm;
    CHECK_EQ_INT(cost_model_build(&c, 16, 1, 128, &cm, &e), MT_OK);
    double total = 0;
    for (int i = 0; i < cm.num_stages; i++) {
        total += cm.stage[i].num_layers;
        CHECK(cm.stage[i].static_bytes > 0 && cm.stage[i].static_bytes < 80.0 * (1 << 30));
        CHECK(cm.stage[i].fw > 0 && cm.stage[i].bw > cm.stage[i].fw);
    }
    CHECK_NEAR(total, 61, 0);
    /* the last stage holds the MTP module: more parameters than the middle one */
    CHECK(cm.stage[15].params > cm.stage[8].params);
    cost_model_fini(&cm);

    config_default(&c);
    presets_model("Qwen3-235B-A22B", &c.model, NULL);
    presets_device("H100-80G", &d, NULL);
    config_set_device(&c, &d);
    c.num_device = 256;
    c.cluster.tp = 4;
    c.cluster.dp = 8;
    c.cluster.ep = 8;
    c.cluster.etp = 1;
    c.sequence_parallel = true;
    c.distributed_optimizer = true;
    c.global_batch_size = 256;
    CHECK_EQ_INT(config_validate(&c, &e), MT_OK);
    CHECK_EQ_INT(config_expert_dp(&c), 4);
    CHECK_EQ_INT(cost_model_build(&c, 8, 1, 8, &cm, &e), MT_OK);
    CHECK(cm.stage[0].static_bytes < 80.0 * (1 << 30));
    cost_model_fini(&cm);
}

/* The keys: read, written back, read again to the same fields; a bad one named */
static void test_keys(void)
{
    static const char text[] =
        "{\"model\": {\"name\": \"m\", \"type\": \"LLaMA2\", \"hidden_size\": 1024, "
        "\"num_layers\": 4, \"num_attention_heads\": 8, \"seq_length\": 512, \"vocab_size\": "
        "1024, \"ffn_hidden_size\": 2048, \"moe\": {\"num_experts\": 8, \"router_topk\": 2, "
        "\"ffn_hidden_size\": 512, \"shared_expert_intermediate_size\": 512, \"first_k_dense\": "
        "1, \"routing_skew\": 1.5, \"capacity_factor\": 1.25, \"fp8_dispatch\": true}, "
        "\"mla\": {\"kv_lora_rank\": 64, \"q_lora_rank\": 96, \"qk_nope_head_dim\": 32, "
        "\"qk_rope_head_dim\": 16, \"v_head_dim\": 32}}, \"num_device\": 8, "
        "\"global_batch_size\": 8, \"cluster\": {\"device\": \"H100-80G\", \"dp\": 4, "
        "\"ep\": 4, \"etp\": 1}}";
    struct config a, b;
    struct mt_err e;
    int rc = config_load_string(text, sizeof text - 1, "moe.json", &a, &e);
    CHECK_EQ_INT(rc, MT_OK);
    if (rc != MT_OK) {
        fprintf(stderr, "%s\n", e.msg);
        return;
    }
    CHECK_EQ_INT(a.model.moe.num_experts, 8);
    CHECK_EQ_INT(a.model.moe.shared_ffn, 512);
    CHECK_EQ_INT(a.model.mla.q_lora_rank, 96);
    CHECK_EQ_INT(a.cluster.ep, 4);
    char *out = config_to_json(&a);
    CHECK(out != NULL);
    rc = config_load_string(out, strlen(out), "written.json", &b, &e);
    CHECK_EQ_INT(rc, MT_OK);
    CHECK(memcmp(&a.model.moe, &b.model.moe, sizeof a.model.moe) == 0);
    CHECK(memcmp(&a.model.mla, &b.model.mla, sizeof a.model.mla) == 0);
    CHECK_EQ_INT(b.cluster.ep, 4);
    CHECK_EQ_INT(b.cluster.etp, 1);
    free(out);
    static const char bad[] = "{\"model\": {\"preset\": \"Mixtral-8x7B\", \"moe\": "
                              "{\"num_expert\": 8}}}";
    CHECK_EQ_INT(config_load_string(bad, sizeof bad - 1, "bad.json", &a, &e), MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "num_expert");
    static const char bad_ep[] = "{\"model\": \"Mixtral-8x7B\", \"num_device\": 6, "
                                 "\"global_batch_size\": 6, \"cluster\": {\"dp\": 6, "
                                 "\"ep\": 3, \"framework\": \"megatron-core\"}}";
    CHECK_EQ_INT(config_load_string(bad_ep, sizeof bad_ep - 1, "bad.json", &a, &e), MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "cluster.ep: 3 does not divide model.moe.num_experts 8");
    CHECK_STR_CONTAINS(e.msg, "bad.json:1:");
}

int main(void)
{
    test_keys();
    test_small_layer();
    test_small_params();
    test_published();
    test_megatron_static();
    test_validate();
    test_big();
    return check_report("test_moe");
}
