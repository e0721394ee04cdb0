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

int main(void)
{
    test_reserve();
    test_attention_bytes();
    test_tp_comm();
    test_bytes_per_param();
    test_explicit_wins();
    return check_report("test_stack");
}
