/* tests/unit/test_stack.c: the training stack in the cost model (issue 26): attention kind,
 * sequence parallelism, TP communication, static bytes per parameter and which of them a
 * preset fills in. Every expected number is worked by hand from the closed forms of
 * model/cost.h (shown beside it), not taken from the code. */
#include <config.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/config.h"
#include "model/cost.h"
#include "model/presets.h"
#include "tests/check.h"
#include "util/err.h"

static int load(const char *text, struct config *c)
{
    struct mt_err e;
    err_clear(&e);
    return config_load_string(text, strlen(text), "t.json", c, &e);
}

/* The paper's GPT3-13B shape: h 3000, a 40, s 1024, f 12000, b 1; sbh = 3,072,000. */
static void test_attention_bytes(void)
{
    struct config c;
    config_default(&c);
    CHECK_EQ_INT(presets_model("GPT3-13B", &c.model, NULL), MT_OK);
    CHECK_EQ_INT(config_attention(&c), ATTN_EAGER); /* a paper preset keeps its stack */
    /* eager: sbh(10 + 8 + 4 x 4) + 5as^2b = 3,072,000 x 34 + 5 x 40 x 1024^2
     *      = 104,448,000 + 209,715,200 */
    CHECK_NEAR(cost_layer_act_bytes(&c), 314163200.0, 0);
    c.attention = ATTN_FLASH;
    /* flash: 104,448,000 + 4asb = 104,448,000 + 163,840 */
    CHECK_NEAR(cost_layer_act_bytes(&c), 104611840.0, 0);
    /* t = 2: sbh(10 + 24/2) + 4asb/2 = 67,584,000 + 81,920 */
    c.num_device = 16;
    c.cluster.tp = 2;
    CHECK_NEAR(cost_layer_act_bytes(&c), 67665920.0, 0);
    /* with sequence parallelism every term / t: sbh(10/2 + 24/2) + 81,920 = 52,224,000 +
     * 81,920 (Korthikanti et al. Table 2: 34sbh/t) */
    c.sequence_parallel = true;
    CHECK_NEAR(cost_layer_act_bytes(&c), 52305920.0, 0);
    /* flash's backward recomputes QK^T: 2bs^2h/t = 2 x 1024^2 x 3000 / 2 */
    CHECK_NEAR(cost_layer_flash_bw_flops_at(&c, 1024), 3145728000.0, 0);
    c.attention = ATTN_EAGER;
    CHECK_NEAR(cost_layer_flash_bw_flops_at(&c, 1024), 0, 0);
}

/* Ring all-reduce: 2(t-1)/t x 2sbh bytes / bw, twice a forward. 2sbh = 6,144,000 bytes. */
static void test_tp_comm(void)
{
    struct config c;
    config_default(&c);
    CHECK_EQ_INT(presets_model("GPT3-13B", &c.model, NULL), MT_OK);
    CHECK_NEAR(cost_layer_tp_us(&c, 1024), 0, 0);
    c.num_device = 32;
    c.cluster.tp = 8; /* inside a node, NVLink 300 GB/s: 2 x 1.75 x 6.144e6 / 3e5 = 71.68 us */
    CHECK_NEAR(cost_layer_tp_us(&c, 1024), 71.68, 1e-9);
    c.cluster.tp = 16; /* two nodes: allreduce_gbps 25: 2 x 1.875 x 6.144e6 / 2.5e4 = 921.6 */
    CHECK_NEAR(cost_layer_tp_us(&c, 1024), 921.6, 1e-9);
}

/* 18 = 2 + 4 + 4 + 8 (Megatron), 6 + 12/dp distributed; the paper's presets 16 = 4 + 12. */
static void test_bytes_per_param(void)
{
    struct config c;
    CHECK_EQ_INT(load("{}", &c), MT_OK);
    CHECK_NEAR(config_bytes_per_param(&c), 16, 0);
    CHECK_EQ_INT(load("{\"num_device\": 8, \"cluster\": {\"dp\": 4}, \"distributed_optimizer\": "
                      "true}", &c),
                 MT_OK);
    CHECK_NEAR(config_bytes_per_param(&c), 4 + 12.0 / 4, 0);
    const char *own = "{\"model\": {\"type\": \"GPT3\", \"hidden_size\": 2048, \"num_layers\": 24,"
                      " \"num_attention_heads\": 16}";
    char buf[512];
    snprintf(buf, sizeof buf, "%s}", own);
    CHECK_EQ_INT(load(buf, &c), MT_OK);
    CHECK_NEAR(config_bytes_per_param(&c), 18, 0);
    CHECK_EQ_INT(config_attention(&c), ATTN_FLASH);
    snprintf(buf, sizeof buf, "%s, \"num_device\": 8, \"cluster\": {\"dp\": 4}, "
                              "\"distributed_optimizer\": true}", own);
    CHECK_EQ_INT(load(buf, &c), MT_OK);
    CHECK_NEAR(config_bytes_per_param(&c), 9, 0); /* 6 + 12/4 */
    snprintf(buf, sizeof buf, "%s, \"bytes_per_param\": 20}", own);
    CHECK_EQ_INT(load(buf, &c), MT_OK);
    CHECK_NEAR(config_bytes_per_param(&c), 20, 0);
    /* static bytes of a stage: its parameters x bytes a parameter */
    struct cost_model m;
    struct mt_err e;
    CHECK_EQ_INT(cost_model_build(&c, 8, 1, 1, &m, &e), MT_OK);
    CHECK_NEAR(m.stage[1].static_bytes, 20 * cost_stage_params(&c, 3, false, false), 0);
    cost_model_fini(&m);
}

/* An explicit key wins over the model's default, whatever the order in the file. */
static void test_explicit_wins(void)
{
    struct config c;
    CHECK_EQ_INT(load("{\"attention\": \"flash\", \"model\": \"GPT3-13B\"}", &c), MT_OK);
    CHECK_EQ_INT(config_attention(&c), ATTN_FLASH);
    CHECK_EQ_INT(load("{\"model\": \"GPT3-13B\", \"attention\": \"flash\"}", &c), MT_OK);
    CHECK_EQ_INT(config_attention(&c), ATTN_FLASH);
    CHECK_EQ_INT(load("{\"model\": \"GPT3-13B\"}", &c), MT_OK);
    CHECK_EQ_INT(config_attention(&c), ATTN_EAGER);
    CHECK_EQ_INT(load("{\"attention\": \"fast\"}", &c), MT_EINVAL);
    CHECK_EQ_INT(load("{\"bytes_per_param\": 0}", &c), MT_EINVAL);
    /* written and read back */
    CHECK_EQ_INT(load("{\"model\": \"GPT3-13B\", \"attention\": \"flash\", \"sequence_parallel\": "
                      "true, \"distributed_optimizer\": true, \"bytes_per_param\": 12.5}",
                      &c),
                 MT_OK);
    char *text = config_to_json(&c);
    struct config d;
    CHECK_EQ_INT(load(text, &d), MT_OK);
    free(text);
    CHECK_EQ_INT(d.attention, ATTN_FLASH);
    CHECK(d.sequence_parallel && d.distributed_optimizer);
    CHECK_NEAR(d.bytes_per_param, 12.5, 0);
}

/* The reserve comes off the cap: 1 GiB by default, none for the paper's presets (their caps
 * are the paper's) or under unit costs (M_θ). */
static void test_reserve(void)
{
    const double GiB = 1024.0 * 1024 * 1024;
    struct config c;
    CHECK_EQ_INT(load("{}", &c), MT_OK); /* GPT3-1.6B, the paper's */
    CHECK_NEAR(config_mem_cap(&c), 40 * GiB, 0);
    const char *own = "{\"model\": {\"type\": \"GPT3\", \"hidden_size\": 2048, \"num_layers\": 24,"
                      " \"num_attention_heads\": 16}";
    char buf[512];
    snprintf(buf, sizeof buf, "%s}", own);
    CHECK_EQ_INT(load(buf, &c), MT_OK);
    CHECK_NEAR(config_mem_cap(&c), 39 * GiB, 0);
    snprintf(buf, sizeof buf, "%s, \"reserve\": \"2G\", \"memory_per_device\": \"30G\"}", own);
    CHECK_EQ_INT(load(buf, &c), MT_OK);
    CHECK_NEAR(config_mem_cap(&c), 28 * GiB, 0);
    CHECK_EQ_INT(load("{\"model\": \"GPT3-13B\", \"reserve\": 0}", &c), MT_OK);
    CHECK_NEAR(config_mem_cap(&c), 40 * GiB, 0);
    c.unit.enabled = true;
    c.memory_per_device = 1.5;
    c.reserve = GiB;
    CHECK_NEAR(config_mem_cap(&c), 1.5, 0);
    struct mt_err e;
    err_clear(&e);
    const char *big = "{\"reserve\": \"40G\"}";
    CHECK_EQ_INT(config_load_string(big, strlen(big), "t.json", &c, &e), MT_EINVAL);
    CHECK(strstr(e.msg, "reserve: 40 GiB is not below the GPU's 40 GiB") != NULL);
}

/* Real presets: the cost model's parameter count against the published ones (Hugging Face
 * safetensors totals), to the parameter: the op list counts RMSNorm's one weight vector (h) and
 * the untied head (model/ops_build.c). GQA: K, V are h x (kv h/a). */
static void test_presets_gqa(void)
{
    static const struct {
        const char *name;
        double published;
    } known[] = {
        {"LLaMA-2-7B", 6738415616.0},    /* meta-llama/Llama-2-7b-hf */
        {"LLaMA-2-13B", 13015864320.0},  /* meta-llama/Llama-2-13b-hf */
        {"LLaMA-2-70B", 68976648192.0},  /* meta-llama/Llama-2-70b-hf, 8 K/V heads */
        {"Llama-3.1-8B", 8030261248.0},  /* meta-llama/Llama-3.1-8B, 8 K/V heads */
        {"Llama-3.1-70B", 70553706496.0}, /* meta-llama/Llama-3.1-70B */
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        struct model_spec m;
        CHECK_EQ_INT(presets_model(known[i].name, &m, NULL), MT_OK);
        CHECK_NEAR(presets_model_params(&m), known[i].published, 0);
        CHECK(!m.paper_stack);
    }
    /* display names: the paper's shapes are marked, the published models are not */
    struct model_spec m;
    char buf[96];
    CHECK_EQ_INT(presets_model("GPT3-13B", &m, NULL), MT_OK);
    CHECK(strcmp(presets_model_display(&m, buf, sizeof buf), "GPT3-13B (paper Table 4)") == 0);
    CHECK_EQ_INT(presets_model("GPT-3-13B", &m, NULL), MT_OK);
    CHECK(strcmp(presets_model_display(&m, buf, sizeof buf), "GPT-3-13B") == 0);
    /* GQA activations, Llama-3.1-8B (h 4096, a 32, kv 8, f 14336, s 8192, b 1), flash, t 1,
     * Megatron-core (its fused SwiGLU keeps gate and up, not silu(gate): 6sbf with the
     * product, not 8sbf): sbh(8 + 4 + 4 x 8/32 + 6 x 14336/4096) + 4asb = sbh x 34 + 4 x 32 x
     * 8192 = 33,554,432 x 34 + 1,048,576 = 1,140,850,688 + 1,048,576 */
    struct config c;
    config_default(&c);
    CHECK_EQ_INT(presets_model("Llama-3.1-8B", &c.model, NULL), MT_OK);
    CHECK_NEAR(cost_layer_act_bytes(&c), 1141899264.0, 0);
    /* forward FLOPs: 4bsh^2 + 4bsh x 1024 + 4bs^2h + 6bshf, term by term:
     *   4 x 8192 x 4096^2 = 549,755,813,888; 4 x 8192 x 4096 x 1024 = 137,438,953,472;
     *   4 x 8192^2 x 4096 = 1,099,511,627,776; 6 x 8192 x 4096 x 14336 = 2,886,218,022,912 */
    CHECK_NEAR(cost_layer_fw_flops(&c), 4672924418048.0, 0);
    /* K/V heads must divide the heads: one message naming the key */
    struct mt_err e;
    err_clear(&e);
    const char *bad = "{\"model\": {\"preset\": \"Llama-3.1-8B\", \"num_key_value_heads\": 5}}";
    CHECK_EQ_INT(config_load_string(bad, strlen(bad), "t.json", &c, &e), MT_EINVAL);
    CHECK(strstr(e.msg, "model.num_key_value_heads: 5 does not divide num_attention_heads 32") !=
          NULL);
    /* from a Hugging Face config: its training length, rope_scaling's 8192 (issue 41) */
    const char *hf = "{\"model_type\": \"llama\", \"hidden_size\": 4096, \"num_hidden_layers\": 32,"
                     " \"num_attention_heads\": 32, \"num_key_value_heads\": 8, \"intermediate_size\":"
                     " 14336, \"vocab_size\": 128256, \"max_position_embeddings\": 131072,"
                     " \"rope_scaling\": {\"original_max_position_embeddings\": 8192}}";
    CHECK_EQ_INT(config_load_string(hf, strlen(hf), "hf.json", &c, &e), MT_OK);
    CHECK_EQ_INT(config_kv_heads(&c.model), 8);
    CHECK_NEAR(cost_layer_act_bytes(&c), 1141899264.0, 0);
}

/* Megatron-LM's estimator, per layer with SP (compute_activation_memory: sbh(18 + 4f/h) / t)
 * on GPT-3-13B (h 5120, a 40, s 2048, f 20480), t = 2: 2048 x 5120 x 34 / 2 = 178,257,920;
 * ours adds flash's lse 4asb/t = 163,840. Its bytes a parameter with the distributed optimizer
 * over dp 2: 6 + 12/2 = 12. (docs/cost-model.md has the whole table.) */
static void test_megatron(void)
{
    struct config c;
    config_default(&c);
    CHECK_EQ_INT(presets_model("GPT-3-13B", &c.model, NULL), MT_OK);
    c.num_device = 16;
    c.cluster.tp = 2;
    c.cluster.dp = 2;
    c.sequence_parallel = true;
    c.distributed_optimizer = true;
    CHECK_NEAR(cost_layer_act_bytes(&c), 178257920.0 + 163840.0, 0);
    CHECK_NEAR(config_bytes_per_param(&c), 12, 0);
}

/* One record per preset: every listed name loads, has its own source, and the display name
 * marks the paper's shapes; the sources of a few named by hand. */
static void test_preset_records(void)
{
    const char *const *names = presets_model_names();
    int n = 0;
    for (; names[n] != NULL; n++) {
        struct model_spec m;
        CHECK_EQ_INT(presets_model(names[n], &m, NULL), MT_OK);
        CHECK(strcmp(m.name, names[n]) == 0);
        const char *src = presets_model_source(names[n]);
        CHECK(src != NULL && src[0] != '\0');
        char buf[96];
        bool paper = src != NULL && strcmp(src, "paper Table 4") == 0;
        CHECK(strstr(presets_model_display(&m, buf, sizeof buf), " (paper Table 4)") ==
              (paper ? buf + strlen(names[n]) : NULL));
    }
    CHECK_EQ_INT(n, 23); /* 15 dense (NeMo's GPT3-5B and 20B among them), tiny-llama (the
                          * executor's LLaMA block), 6 MoE (model/moe.h), tiny-moe (the
                          * executor's MoE block) */
    CHECK(strcmp(presets_model_source("LLaMA2-13B"), "paper Table 4") == 0);
    CHECK(strcmp(presets_model_source("GPT-3-175B"), "Brown et al. 2020, Table 2.1") == 0);
    CHECK(strcmp(presets_model_source("Llama-3.1-70B"),
                 "meta-llama/Llama-3.1-70B config.json (s = 8192, the pre-training context)") == 0);
    CHECK(strstr(presets_model_source("tiny"), "CPU executor") != NULL);
    CHECK(presets_model_source("gpt3-13b") == NULL); /* exact spelling only */
    CHECK(presets_model_source("GPT-4") == NULL);
}

int main(void)
{
    test_preset_records();
    test_megatron();
    test_presets_gqa();
    test_reserve();
    test_attention_bytes();
    test_tp_comm();
    test_bytes_per_param();
    test_explicit_wins();
    return check_report("test_stack");
}
