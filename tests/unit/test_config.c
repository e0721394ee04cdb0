/* tests/unit/test_config.c: the config loader (model/config_json.c). Expected values come
 * from docs/design.md (the built-in default), the paper's Table 4 and Table 5 (presets, the
 * 32-GPU runs), published Hugging Face configs (GPT-2 small, LLaMA-2), and positions counted
 * by hand in the inputs below - never from the loader's own output. */
#include <config.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/config.h"
#include "model/moe.h"
#include "model/presets.h"
#include "tests/check.h"
#include "util/err.h"

#define GiB (1024.0 * 1024 * 1024)

/* Fails unless s starts with prefix. */
#define CHECK_PREFIX(s, prefix)                                                                    \
    do {                                                                                           \
        const char *s_ = (s), *p_ = (prefix);                                                      \
        check_count++;                                                                             \
        if (strncmp(s_, p_, strlen(p_)) != 0) {                                                    \
            check_failures++;                                                                      \
            fprintf(stderr, "%s:%d: \"%s\" does not start with \"%s\"\n", __FILE__, __LINE__, s_,  \
                    p_);                                                                           \
        }                                                                                          \
    } while (0)

static const char *srcdir(void)
{
    const char *d = getenv("top_srcdir");
    return d != NULL && d[0] != '\0' ? d : ".";
}

static void src_path(char *buf, size_t n, const char *rel)
{
    snprintf(buf, n, "%s/%s", srcdir(), rel);
}

static int load_str(const char *text, struct config *c, struct mt_err *e)
{
    err_clear(e);
    return config_load_string(text, strlen(text), "bad.json", c, e);
}

/* Field-by-field equality (source excluded: it names where a config came from). */
static int config_same(const struct config *a, const struct config *b)
{
    const struct model_spec *ma = &a->model, *mb = &b->model;
    const struct cluster_spec *ka = &a->cluster, *kb = &b->cluster;
    return a->scheme == b->scheme && a->global_batch_size == b->global_batch_size &&
           a->micro_batch_size == b->micro_batch_size && a->num_device == b->num_device &&
           a->num_microbatches == b->num_microbatches && a->chunks == b->chunks &&
           a->memory_per_device == b->memory_per_device && a->blocking_send == b->blocking_send &&
           a->unit.enabled == b->unit.enabled && a->unit.f == b->unit.f && a->unit.b == b->unit.b &&
           a->unit.rc == b->unit.rc && strcmp(ma->name, mb->name) == 0 && ma->arch == mb->arch &&
           ma->hidden_size == mb->hidden_size && ma->num_layers == mb->num_layers &&
           ma->num_attention_heads == mb->num_attention_heads && ma->seq_length == mb->seq_length &&
           ma->vocab_size == mb->vocab_size && ma->ffn_hidden_size == mb->ffn_hidden_size &&
           strcmp(ka->device.name, kb->device.name) == 0 &&
           ka->device.peak_flops == kb->device.peak_flops &&
           ka->device.efficiency == kb->device.efficiency &&
           ka->device.mem_bytes == kb->device.mem_bytes &&
           ka->device.hbm_gbps == kb->device.hbm_gbps && ka->p2p_gbps == kb->p2p_gbps &&
           ka->p2p_lat_us == kb->p2p_lat_us && ka->ar_gbps == kb->ar_gbps &&
           ka->dp_efficiency == kb->dp_efficiency && ka->dp == kb->dp && ka->tp == kb->tp &&
           ka->device.op_overhead_us == kb->device.op_overhead_us &&
           ka->device.layer_overhead_us == kb->device.layer_overhead_us &&
           ka->gpus_per_node == kb->gpus_per_node && ka->tp_gbps == kb->tp_gbps &&
           config_mlp(ma) == config_mlp(mb) && config_norm(ma) == config_norm(mb) &&
           config_bias(ma) == config_bias(mb) && config_head_dim(ma) == config_head_dim(mb) &&
           config_tied_embeddings(ma) == config_tied_embeddings(mb) && ma->qk_norm == mb->qk_norm &&
           a->seqlen.max_positions == b->seqlen.max_positions;
}

/* docs/design.md: GPT3-1.6B (Table 4: h 1024, 128 layers, 16 heads, s 1024) on 8 x A100-40G,
 * V, global batch 128. */
static void check_is_default(const struct config *c)
{
    CHECK_EQ_INT(c->scheme, SCHEME_V);
    CHECK_EQ_INT(c->global_batch_size, 128);
    CHECK_EQ_INT(c->micro_batch_size, 1);
    CHECK_EQ_INT(c->num_device, 8);
    CHECK_EQ_INT(config_microbatches(c), 128);
    CHECK_EQ_INT(config_pp(c), 8);
    CHECK(strcmp(c->model.name, "GPT3-1.6B") == 0);
    CHECK_EQ_INT(c->model.arch, ARCH_GPT3);
    CHECK_EQ_INT(c->model.hidden_size, 1024);
    CHECK_EQ_INT(c->model.num_layers, 128);
    CHECK_EQ_INT(c->model.num_attention_heads, 16);
    CHECK_EQ_INT(c->model.seq_length, 1024);
    CHECK_EQ_INT(c->model.ffn_hidden_size, 4096);
    CHECK(strcmp(c->cluster.device.name, "A100-40G") == 0);
    CHECK_NEAR(c->cluster.device.mem_bytes, 40 * GiB, 0);
    CHECK_NEAR(c->memory_per_device, 40 * GiB, 0);
    CHECK_NEAR(c->cluster.device.peak_flops, 312e12, 0);
    CHECK_EQ_INT(c->cluster.dp, 1);
    CHECK_EQ_INT(c->cluster.tp, 1);
    CHECK(!c->unit.enabled);
    CHECK(!c->blocking_send);
}

static void test_defaults(void)
{
    struct config c, d;
    struct mt_err e;
    config_default(&c);
    check_is_default(&c);
    CHECK_EQ_INT(config_validate(&c, &e), MT_OK);
    /* An empty object is the default. */
    CHECK_EQ_INT(load_str("{}", &d, &e), MT_OK);
    check_is_default(&d);
    CHECK(config_same(&c, &d));
    CHECK(strcmp(d.source, "bad.json") == 0);
}

static int load_example(const char *rel, struct config *c)
{
    char path[1024];
    struct mt_err e;
    err_clear(&e);
    src_path(path, sizeof path, rel);
    int rc = config_load_file(path, c, &e);
    if (rc != MT_OK)
        fprintf(stderr, "%s: %s\n", rel, e.msg);
    return rc;
}

static void test_examples(void)
{
    struct config c, d;
    config_default(&d);

    CHECK_EQ_INT(load_example("examples/gpt3-1.6b-v.json", &c), MT_OK);
    check_is_default(&c);
    CHECK(config_same(&c, &d));

    /* Table 5: GPT3-13B, X, 32 A100-40G, global batch 128, micro-batch 2 -> 64 micro-batches. */
    CHECK_EQ_INT(load_example("examples/gpt3-13b-x32.json", &c), MT_OK);
    CHECK_EQ_INT(c.scheme, SCHEME_X);
    CHECK_EQ_INT(c.num_device, 32);
    CHECK_EQ_INT(config_microbatches(&c), 64);
    CHECK(strcmp(c.model.name, "GPT3-13B") == 0);
    CHECK_EQ_INT(c.model.hidden_size, 3000);
    CHECK_EQ_INT(c.model.num_layers, 128);
    CHECK_EQ_INT(c.model.num_attention_heads, 40);
    CHECK_NEAR(c.memory_per_device, 40 * GiB, 0);

    /* Table 5: LLaMA2-13B, W, 32 GPUs, global 128, mbs 1; Table 4 shape; FFN derived:
     * 256 * ceil((8 * 4096 / 3) / 256) = 256 * 43 = 11008. */
    CHECK_EQ_INT(load_example("examples/llama2-13b-w.json", &c), MT_OK);
    CHECK_EQ_INT(c.scheme, SCHEME_W);
    CHECK_EQ_INT(c.chunks, 2);
    CHECK_EQ_INT(c.num_device, 32);
    CHECK_EQ_INT(config_microbatches(&c), 128);
    CHECK_EQ_INT(c.model.arch, ARCH_LLAMA2);
    CHECK(strcmp(c.model.name, "LLaMA2-13B") == 0);
    CHECK_EQ_INT(c.model.hidden_size, 4096);
    CHECK_EQ_INT(c.model.num_layers, 64);
    CHECK_EQ_INT(c.model.num_attention_heads, 32);
    CHECK_EQ_INT(c.model.vocab_size, 32000);
    CHECK_EQ_INT(c.model.ffn_hidden_size, 11008);

    /* tiny on 4 CPU "devices", 8 micro-batches; the cap follows the cluster memory. */
    CHECK_EQ_INT(load_example("examples/tiny-cpu.json", &c), MT_OK);
    CHECK_EQ_INT(c.scheme, SCHEME_V);
    CHECK_EQ_INT(c.num_device, 4);
    CHECK_EQ_INT(config_microbatches(&c), 8);
    CHECK(strcmp(c.model.name, "tiny") == 0);
    CHECK(c.model.num_layers >= 4);
    CHECK(strcmp(c.cluster.device.name, "CPU") == 0);
    CHECK_NEAR(c.cluster.device.peak_flops, 50e9, 0);
    CHECK_NEAR(c.cluster.device.mem_bytes, 2 * GiB, 0);
    CHECK_NEAR(c.memory_per_device, 2 * GiB, 0);
    CHECK_NEAR(c.cluster.p2p_lat_us, 5, 0);

    /* GPT-2 small's config.json as the whole file: 768, 12 layers, 12 heads, n_inner null. */
    CHECK_EQ_INT(load_example("examples/hf-gpt2-config.json", &c), MT_OK);
    CHECK_EQ_INT(c.model.arch, ARCH_GPT3);
    CHECK(strcmp(c.model.name, "gpt2") == 0);
    CHECK_EQ_INT(c.model.hidden_size, 768);
    CHECK_EQ_INT(c.model.num_layers, 12);
    CHECK_EQ_INT(c.model.num_attention_heads, 12);
    CHECK_EQ_INT(c.model.seq_length, 1024);
    CHECK_EQ_INT(c.model.vocab_size, 50257);
    CHECK_EQ_INT(c.model.ffn_hidden_size, 3072);
    CHECK_EQ_INT(c.num_device, 8); /* the rest is the default */
}

static void test_keys(void)
{
    struct config c;
    struct mt_err e;

    /* A preset device sets the cap when memory_per_device is absent. */
    CHECK_EQ_INT(load_str("{\"cluster\": {\"device\": \"A100-80G\"}}", &c, &e), MT_OK);
    CHECK_NEAR(c.memory_per_device, 80 * GiB, 0);
    CHECK_EQ_INT(load_str("{\"memory_per_device\": 1073741824, \"cluster\": {\"device\": "
                          "\"H100-80G\", \"memory\": \"64GiB\"}}",
                          &c, &e),
                 MT_OK);
    CHECK_NEAR(c.memory_per_device, GiB, 0);
    CHECK_NEAR(c.cluster.device.mem_bytes, 64 * GiB, 0);
    CHECK_NEAR(c.cluster.device.peak_flops, 989e12, 0);

    /* FLOP/s as strings with decimal prefixes. */
    CHECK_EQ_INT(
        load_str("{\"cluster\": {\"peak_flops\": \"989 TFLOPS\", \"efficiency\": 0.4}}", &c, &e),
        MT_OK);
    CHECK_NEAR(c.cluster.device.peak_flops, 989e12, 0);
    CHECK_NEAR(c.cluster.device.efficiency, 0.4, 0);
    CHECK_EQ_INT(load_str("{\"cluster\": {\"peak_flops\": 1.5e14}}", &c, &e), MT_OK);
    CHECK_NEAR(c.cluster.device.peak_flops, 1.5e14, 0);

    /* Unit costs, both spellings, turn unit mode on. */
    CHECK_EQ_INT(load_str("{\"unit_costs\": {\"F\": 1, \"B\": 2, \"RC\": 0.5}}", &c, &e), MT_OK);
    CHECK(c.unit.enabled);
    CHECK_NEAR(c.unit.rc, 0.5, 0);
    CHECK_EQ_INT(load_str("{\"unit_costs\": \"2, 4, 1\", \"blocking_send\": true}", &c, &e), MT_OK);
    CHECK(c.unit.enabled && c.unit.f == 2 && c.unit.b == 4 && c.unit.rc == 1);
    CHECK(c.blocking_send);

    /* Scheme aliases; N without a global batch gives the global batch: 16 x 2 x dp 2 = 64. */
    CHECK_EQ_INT(load_str("{\"pipeline_scheme\": \"chimera\", \"num_microbatches\": 16, "
                          "\"micro_batch_size\": 2, \"cluster\": {\"dp\": 2}}",
                          &c, &e),
                 MT_OK);
    CHECK_EQ_INT(c.scheme, SCHEME_X);
    CHECK_EQ_INT(c.num_microbatches, 16);
    CHECK_EQ_INT(c.global_batch_size, 64);
    CHECK_EQ_INT(config_pp(&c), 4);

    /* Model: preset + override keeps the preset's FFN; a new h derives it. */
    CHECK_EQ_INT(load_str("{\"model\": {\"preset\": \"GPT3-13B\", \"seq_length\": 2048}}", &c, &e),
                 MT_OK);
    CHECK(strcmp(c.model.name, "GPT3-13B") == 0);
    CHECK_EQ_INT(c.model.seq_length, 2048);
    CHECK_EQ_INT(c.model.ffn_hidden_size, 12000);
    CHECK_EQ_INT(load_str("{\"model\": {\"type\": \"custom\", \"hidden_size\": 2048, "
                          "\"num_attention_heads\": 16, \"num_layers\": 24}}",
                          &c, &e),
                 MT_OK);
    CHECK(strcmp(c.model.name, "custom") == 0);
    CHECK_EQ_INT(c.model.arch, ARCH_CUSTOM);
    CHECK_EQ_INT(c.model.ffn_hidden_size, 8192);
    /* LLaMA-2-13B's real width: h 5120 -> 256 * ceil(13653.3 / 256) = 13824. */
    CHECK_EQ_INT(load_str("{\"model\": {\"type\": \"LLaMA2\", \"hidden_size\": 5120, "
                          "\"num_attention_heads\": 40, \"num_layers\": 40, \"name\": \"l13\"}}",
                          &c, &e),
                 MT_OK);
    CHECK_EQ_INT(c.model.ffn_hidden_size, 13824);
    CHECK(strcmp(c.model.name, "l13") == 0);
    CHECK_EQ_INT(load_str("{\"model\": \"llama2-3b\"}", &c, &e), MT_OK);
    CHECK(strcmp(c.model.name, "LLaMA2-3B") == 0);
    CHECK_EQ_INT(c.model.hidden_size, 2048);

    /* A UTF-8 byte order mark is skipped. */
    CHECK_EQ_INT(load_str("\xEF\xBB\xBF{\"num_device\": 4}", &c, &e), MT_OK);
    CHECK_EQ_INT(c.num_device, 4);
}

/* Hugging Face configs: LLaMA-2-7B's published config.json as the value of `model`. */
static void test_hf(void)
{
    struct config c;
    struct mt_err e;
    const char *llama = "{\"num_device\": 4, \"model\": {\n"
                        "  \"_name_or_path\": \"meta-llama/Llama-2-7b-hf\",\n"
                        "  \"architectures\": [\"LlamaForCausalLM\"],\n"
                        "  \"hidden_act\": \"silu\", \"hidden_size\": 4096,\n"
                        "  \"intermediate_size\": 11008, \"max_position_embeddings\": 4096,\n"
                        "  \"model_type\": \"llama\", \"num_attention_heads\": 32,\n"
                        "  \"num_hidden_layers\": 32, \"num_key_value_heads\": 32,\n"
                        "  \"rms_norm_eps\": 1e-05, \"rope_scaling\": null,\n"
                        "  \"tie_word_embeddings\": false, \"vocab_size\": 32000}}";
    CHECK_EQ_INT(load_str(llama, &c, &e), MT_OK);
    CHECK_EQ_INT(c.model.arch, ARCH_LLAMA2);
    CHECK(strcmp(c.model.name, "Llama-2-7b-hf") == 0);
    CHECK_EQ_INT(c.model.hidden_size, 4096);
    CHECK_EQ_INT(c.model.num_layers, 32);
    CHECK_EQ_INT(c.model.num_attention_heads, 32);
    CHECK_EQ_INT(c.model.seq_length, 4096);
    CHECK_EQ_INT(c.model.vocab_size, 32000);
    CHECK_EQ_INT(c.model.ffn_hidden_size, 11008);
    CHECK_EQ_INT(c.num_device, 4);

    /* Without intermediate_size: the SwiGLU width, 256 * ceil(8 * 4096 / 3 / 256) = 11008. */
    CHECK_EQ_INT(load_str("{\"model_type\": \"llama\", \"hidden_size\": 4096, "
                          "\"num_hidden_layers\": 32, \"num_attention_heads\": 32}",
                          &c, &e),
                 MT_OK);
    CHECK_EQ_INT(c.model.ffn_hidden_size, 11008);
    CHECK(strcmp(c.model.name, "llama") == 0);

    /* GPT-2 style inside `model`, with n_ctx only and n_inner given. */
    CHECK_EQ_INT(load_str("{\"model\": {\"n_embd\": 1600, \"n_layer\": 48, \"n_head\": 25, "
                          "\"n_ctx\": 2048, \"n_inner\": 6000, \"vocab_size\": 50257, "
                          "\"whatever\": [1, {\"x\": 2}]}}",
                          &c, &e),
                 MT_OK);
    CHECK_EQ_INT(c.model.arch, ARCH_GPT3);
    CHECK_EQ_INT(c.model.hidden_size, 1600);
    CHECK_EQ_INT(c.model.num_layers, 48);
    CHECK_EQ_INT(c.model.seq_length, 2048);
    CHECK_EQ_INT(c.model.ffn_hidden_size, 6000);
}

static void check_round_trip(const struct config *c)
{
    struct config d;
    struct mt_err e;
    err_clear(&e);
    char *json = config_to_json(c);
    CHECK(json != NULL);
    if (json == NULL)
        return;
    int rc = config_load_string(json, strlen(json), "rt.json", &d, &e);
    CHECK_EQ_INT(rc, MT_OK);
    if (rc != MT_OK)
        fprintf(stderr, "round trip: %s\n%s", e.msg, json);
    else
        CHECK(config_same(c, &d));
    free(json);
}

static void test_round_trip(void)
{
    struct config c;
    config_default(&c);
    check_round_trip(&c);
    static const char *const ex[] = {"examples/gpt3-1.6b-v.json", "examples/gpt3-13b-x32.json",
                                     "examples/llama2-13b-w.json", "examples/tiny-cpu.json",
                                     "examples/hf-gpt2-config.json"};
    for (size_t i = 0; i < sizeof ex / sizeof ex[0]; i++)
        if (load_example(ex[i], &c) == MT_OK)
            check_round_trip(&c);

    /* Odd values everywhere. */
    config_default(&c);
    c.scheme = SCHEME_W;
    c.chunks = 4;
    c.num_device = 12; /* pp 3 x dp 2 x tp 2 */
    c.global_batch_size = 36;
    c.micro_batch_size = 3;
    c.num_microbatches = 12;
    c.memory_per_device = 12345678901.0;
    c.blocking_send = true;
    c.unit.enabled = true;
    c.unit.f = 1.5;
    c.unit.b = 3.25;
    c.unit.rc = 0.75;
    snprintf(c.model.name, sizeof c.model.name, "my \"model\" \\ v2");
    c.model.arch = ARCH_CUSTOM;
    c.model.hidden_size = 960;
    c.model.num_layers = 48;
    c.model.num_attention_heads = 15;
    c.model.seq_length = 3000;
    c.model.vocab_size = 32001;
    c.model.ffn_hidden_size = 2500;
    snprintf(c.cluster.device.name, sizeof c.cluster.device.name, "lab-gpu");
    c.cluster.device.peak_flops = 123.456e12 / 7;
    c.cluster.device.efficiency = 1.0 / 3;
    c.cluster.device.mem_bytes = 24e9;
    c.cluster.device.hbm_gbps = 936.2;
    c.cluster.p2p_gbps = 12.5;
    c.cluster.p2p_lat_us = 0;
    c.cluster.ar_gbps = 7.75;
    c.cluster.dp_efficiency = 0.9;
    c.cluster.dp = 2;
    c.cluster.tp = 2;
    c.cluster.gpus_per_node = 4;
    c.cluster.tp_gbps = 123.25;
    struct mt_err e;
    CHECK_EQ_INT(config_validate(&c, &e), MT_OK);
    CHECK_EQ_INT(config_pp(&c), 3);
    check_round_trip(&c);
    /* Unit costs set but switched off survive too. */
    c.unit.enabled = false;
    check_round_trip(&c);
}

struct bad {
    const char *text;
    int code;
    const char *prefix; /* the exact start of the message */
};

static const struct bad bad_inputs[] = {
    /* syntax */
    {"{\n  \"num_device\": 8\n  \"chunks\": 2\n}", MT_EPARSE, "bad.json:3:3: syntax error"},
    {"{\"num_device\": 8} {}", MT_EPARSE, "bad.json:1:19: syntax error: text after"},
    {"", MT_EPARSE, "bad.json:1:1: empty file"},
    {" \n\t\n", MT_EPARSE, "bad.json:3:1: empty file"},
    {"[1, 2]", MT_EINVAL, "bad.json:1:1: expected a JSON object at the top level, got array"},
    {"  \"V\"", MT_EINVAL, "bad.json:1:3: expected a JSON object at the top level, got string"},
    /* wrong types */
    {"{\"num_device\": \"8\"}", MT_EINVAL,
     "bad.json:1:2: num_device: expected an integer, got "
     "string \"8\""},
    {"{\"num_device\": 8, \"blocking_send\": \"yes\"}", MT_EINVAL,
     "bad.json:1:19: blocking_send: expected true or false"},
    {"{\"pipeline_scheme\": 1}", MT_EINVAL, "bad.json:1:2: pipeline_scheme: expected a string"},
    {"{\"cluster\": []}", MT_EINVAL, "bad.json:1:2: cluster: expected an object, got array"},
    {"{\"model\": 3}", MT_EINVAL, "bad.json:1:2: model: expected a preset name or an object"},
    {"{\"cluster\": {\"efficiency\": \"nan\"}}", MT_EINVAL,
     "bad.json:1:14: cluster.efficiency: expected a finite number, got string \"nan\""},
    {"{\"cluster\": {\"p2p_gbps\": null}}", MT_EINVAL,
     "bad.json:1:14: cluster.p2p_gbps: expected a finite number, got null"},
    /* negative, zero, huge, non-integer, NaN/inf */
    {"{\n    \"num_device\": -4\n}", MT_EINVAL, "bad.json:2:5: num_device: must be in [1, 131072]"},
    {"{\"micro_batch_size\": 0}", MT_EINVAL, "bad.json:1:2: micro_batch_size: must be >= 1"},
    {"{\"global_batch_size\": 3000000000}", MT_EINVAL,
     "bad.json:1:2: global_batch_size: must be in [1, 2147483647]"},
    {"{\"num_device\": 200000}", MT_EINVAL, "bad.json:1:2: num_device: must be in [1, 131072]"},
    {"{\"num_device\": 3.5}", MT_EINVAL, "bad.json:1:2: num_device: expected an integer, got 3.5"},
    {"{\"num_device\": 1e999}", MT_EINVAL,
     "bad.json:1:2: num_device: expected an integer, got inf"},
    {"{\"chunks\": 65}", MT_EINVAL, "bad.json:1:2: chunks: must be in [1, 64]"},
    {"{\"model\": {\"num_layers\": 100001}}", MT_EINVAL,
     "bad.json:1:12: model.num_layers: must be in [1, 100000]"},
    {"{\"memory_per_device\": \"nan\"}", MT_EINVAL,
     "bad.json:1:2: memory_per_device: 'nan' is not a size"},
    {"{\"memory_per_device\": \"-40G\"}", MT_EINVAL,
     "bad.json:1:2: memory_per_device: '-40G' is not a size"},
    {"{\"memory_per_device\": \"1e400G\"}", MT_EINVAL,
     "bad.json:1:2: memory_per_device: '1e400G' is not a size"},
    {"{\"memory_per_device\": 0}", MT_EINVAL,
     "bad.json:1:2: memory_per_device: must be a finite "
     "size > 0"},
    {"{\"cluster\": {\"peak_flops\": \"infT\"}}", MT_EINVAL,
     "bad.json:1:14: cluster.peak_flops: 'infT' is not a FLOP/s figure"},
    {"{\"cluster\": {\"peak_flops\": -1}}", MT_EINVAL,
     "bad.json:1:14: cluster.peak_flops: must be > 0"},
    {"{\"cluster\": {\"dp\": 0}}", MT_EINVAL, "bad.json:1:14: cluster.dp: must be in [1, 131072]"},
    /* N < 1 */
    {"{\"num_microbatches\": 0}", MT_EINVAL,
     "bad.json:1:2: num_microbatches: must be in [1, "
     "65536] (got 0)"},
    {"{\"num_microbatches\": -3}", MT_EINVAL,
     "bad.json:1:2: num_microbatches: must be in [1, "
     "65536]"},
    /* unknown and repeated keys, names */
    {"{\"num_devices\": 8}", MT_EINVAL,
     "bad.json:1:2: num_devices: unknown key (did you mean 'num_device'?)"},
    {"{\"model\": {\n  \"preset\": \"tiny\",\n  \"num_layer\": 8}}", MT_EINVAL,
     "bad.json:3:3: model.num_layer: unknown key (did you mean 'num_layers'?)"},
    {"{\"zzzzzz\": 1}", MT_EINVAL, "bad.json:1:2: zzzzzz: unknown key (expected one of:"},
    {"{\"chunks\": 2, \"chunks\": 3}", MT_EINVAL, "bad.json:1:15: chunks: duplicate key"},
    {"{\"pipeline_scheme\": \"Y\"}", MT_EINVAL,
     "bad.json:1:2: pipeline_scheme: unknown scheme 'Y'"},
    {"{\"model\": \"GPT5\"}", MT_EINVAL, "bad.json:1:2: model: unknown model 'GPT5'"},
    {"{\"model\": {\"type\": \"GPT4\"}}", MT_EINVAL, "bad.json:1:12: model.type: unknown type"},
    {"{\"cluster\": {\"device\": \"TPU\"}}", MT_EINVAL,
     "bad.json:1:14: cluster.device: unknown device 'TPU'"},
    {"{\"model\": {\"name\": \"\"}}", MT_EINVAL, "bad.json:1:12: model.name: must be 1 to 47"},
    {"{\"unit_costs\": \"1,2\"}", MT_EINVAL, "bad.json:1:2: unit_costs: '1,2' is not F,B,RC"},
    {"{\"unit_costs\": {\"F\": -1}}", MT_EINVAL, "bad.json:1:2: unit_costs: F and B must be > 0"},
    {"{\"unit_costs\": {\"f\": 1}}", MT_EINVAL, "bad.json:1:17: unit_costs.f: unknown key"},
    /* combinations (config_validate's messages, placed at the key) */
    {"{\n  \"pipeline_scheme\": \"X\",\n  \"num_device\": 5\n}", MT_EINVAL,
     "bad.json:3:3: num_device: Chimera (X) needs an even pipeline depth"},
    {"{\"model\": {\"preset\": \"tiny\"}, \"num_device\": 16}", MT_EINVAL,
     "bad.json:1:2: model.num_layers: 16 stages but only 8 layers"},
    {"{\"model\": {\"name\": \"\xC3\xA9\xC3\xA9\xC3\xA9\", \"num_layers\": 4}}", MT_EINVAL,
     "bad.json:1:27: model.num_layers: 8 stages but only 4 layers"},
    {"{\"pipeline_scheme\": \"W\", \"model\": \"tiny\", \"num_device\": 8}", MT_EINVAL,
     "bad.json:1:26: model.num_layers: 16 stages but only 8 layers"},
    {"{\"model\": {\"hidden_size\": 1000, \"num_attention_heads\": 16}}", MT_EINVAL,
     "bad.json:1:33: model.num_attention_heads: 16 does not divide hidden_size 1000"},
    {"{\"num_device\": 8,\n \"cluster\": {\"dp\": 3}}", MT_EINVAL,
     "bad.json:2:14: cluster.dp: 3 does not divide num_device 8"},
    /* tp: GPUs of a stage, dividing a replica's GPUs and a node (or whole nodes) */
    {"{\"num_device\": 8,\n \"cluster\": {\"tp\": 16}}", MT_EINVAL,
     "bad.json:2:14: cluster.tp: 16 does not divide num_device 8 / dp 1 = 8 GPUs per replica"},
    {"{\"num_device\": 24, \"cluster\": {\"tp\": 3}}", MT_EINVAL,
     "bad.json:1:32: cluster.tp: 3 neither divides nor is a multiple of gpus_per_node 8"},
    {"{\"num_device\": 24, \"cluster\": {\"tp\": 12}}", MT_EINVAL,
     "bad.json:1:32: cluster.tp: 12 neither divides nor is a multiple of gpus_per_node 8"},
    {"{\"cluster\": {\"gpus_per_node\": 0}}", MT_EINVAL,
     "bad.json:1:14: cluster.gpus_per_node: must be in [1, 131072]"},
    {"{\"cluster\": {\"tp_gbps\": 0}}", MT_EINVAL, "bad.json:1:14: cluster.tp_gbps: must be > 0"},
    {"{\"global_batch_size\": 100, \"micro_batch_size\": 8}", MT_EINVAL,
     "bad.json:1:2: global_batch_size: 100 is not a multiple of micro_batch_size 8"},
    {"{\"pipeline_scheme\": \"W\", \"global_batch_size\": 12}", MT_EINVAL,
     "bad.json:1:26: num_microbatches: interleaved 1F1B (W) needs a multiple of pp = 8"},
    {"\xEF\xBB\xBF{\"num_device\": -1}", MT_EINVAL, "bad.json:1:2: num_device: must be in"},
    /* Hugging Face configs: types are checked, a missing shape is named */
    {"{\"model_type\": \"gpt2\", \"n_embd\": 768, \"n_layer\": \"12\", \"n_head\": 12}", MT_EINVAL,
     "bad.json:1:39: n_layer: expected an integer, got string \"12\""},
    {"{\"model_type\": \"llama\", \"hidden_size\": 4096, \"num_hidden_layers\": 32}", MT_EINVAL,
     "bad.json:1:1: Hugging Face config without a head count"},
    {"{\"model\": {\"model_type\": \"gpt2\", \"n_embd\": 768, \"n_head\": 12}}", MT_EINVAL,
     "bad.json:1:2: model: Hugging Face config without a layer count"},
    {"{\"n_embd\": 768, \"n_layer\": 4, \"n_head\": 12}", MT_EINVAL,
     "bad.json:1:17: n_layer: model.num_layers: 8 stages but only 4 layers"},
    {"{\"n_embd\": 2147483647, \"n_layer\": 8, \"n_head\": 1}", MT_EINVAL,
     "bad.json:1:2: n_embd: 2147483647 too large for a default FFN width"},
    /* issue 9: a syntax error inside a value names the field; a derived N names its source */
    {"{\"num_device\": 4,\n \"cluster\": {\"dp\": NaN}}", MT_EPARSE,
     "bad.json:2:20: cluster.dp: syntax error near 'NaN}}'"},
    {"{\"model\": {\"name\": \"ab", MT_EPARSE, "bad.json:1:21: model.name: syntax error"},
    {"{\"a\": [1, {\"b\": [2, x]}]}", MT_EPARSE, "bad.json:1:21: a[1].b[1]: syntax error"},
    {"{\"global_batch_size\": 2147483647}", MT_EINVAL,
     "bad.json:1:2: global_batch_size: 2147483647 / (micro_batch_size 1 x dp 1) is 2147483647 "
     "micro-batches, over the limit of 65536"},
};

/* num_device counts GPUs, pp x dp x tp; tp_gbps follows the device preset's NVLink (A100 300,
 * H100 450 GB/s per direction) unless the file gives it, in whatever order. */
static void test_tp(void)
{
    struct config c;
    struct mt_err e;
    CHECK_EQ_INT(load_str("{\"num_device\": 32, \"cluster\": {\"dp\": 2, \"tp\": 4}}", &c, &e),
                 MT_OK);
    CHECK_EQ_INT(config_pp(&c), 4);
    CHECK_NEAR(c.cluster.tp_gbps, 300, 0);
    CHECK_EQ_INT(c.cluster.gpus_per_node, 8);
    /* a group of two whole nodes */
    CHECK_EQ_INT(load_str("{\"num_device\": 32, \"cluster\": {\"tp\": 16}}", &c, &e), MT_OK);
    CHECK_EQ_INT(config_pp(&c), 2);
    CHECK_EQ_INT(load_str("{\"cluster\": {\"device\": \"H100-80G\"}}", &c, &e), MT_OK);
    CHECK_NEAR(c.cluster.tp_gbps, 450, 0);
    CHECK_EQ_INT(
        load_str("{\"cluster\": {\"tp_gbps\": 200, \"device\": \"H100-80G\"}}", &c, &e), MT_OK);
    CHECK_NEAR(c.cluster.tp_gbps, 200, 0);
    /* config_set_device: the cap and tp_gbps follow unless given */
    struct device_spec h200;
    CHECK_EQ_INT(presets_device("H200", &h200, &e), MT_OK);
    config_default(&c);
    config_set_device(&c, &h200);
    CHECK_NEAR(c.memory_per_device, 141e9, 0);
    CHECK_NEAR(c.cluster.tp_gbps, 450, 0);
    config_default(&c);
    c.memory_per_device = 20.0 * GiB;
    c.cluster.tp_gbps = 100;
    c.given = CONFIG_GIVEN_MEMORY | CONFIG_GIVEN_TP_GBPS;
    config_set_device(&c, &h200);
    CHECK_NEAR(c.memory_per_device, 20.0 * GiB, 0);
    CHECK_NEAR(c.cluster.tp_gbps, 100, 0);
}

static void test_bad_inputs(void)
{
    for (size_t i = 0; i < sizeof bad_inputs / sizeof bad_inputs[0]; i++) {
        const struct bad *b = &bad_inputs[i];
        struct config c;
        struct mt_err e;
        config_default(&c);
        c.num_device = -77; /* must stay untouched on failure */
        int rc = load_str(b->text, &c, &e);
        CHECK_EQ_INT(rc, b->code);
        CHECK_PREFIX(e.msg, b->prefix);
        CHECK_EQ_INT(c.num_device, -77);
    }
}

/* Files: the message names the path as given. */
static void check_bad_file(const char *rel, int code, const char *suffix)
{
    char path[1024], want[1200];
    struct config c;
    struct mt_err e;
    err_clear(&e);
    src_path(path, sizeof path, rel);
    snprintf(want, sizeof want, "%s%s", path, suffix);
    CHECK_EQ_INT(config_load_file(path, &c, &e), code);
    CHECK_PREFIX(e.msg, want);
}

static void test_bad_files(void)
{
    /* The issue's own example. */
    check_bad_file("tests/data/bad/stages.json", MT_EINVAL,
                   ":14:5: model.num_layers: 12 stages but only 8 layers");
    check_bad_file("tests/data/bad/malformed.json", MT_EPARSE, ":4:3: syntax error");
    check_bad_file("tests/data/bad/unknown-key.json", MT_EINVAL,
                   ":5:5: cluster.p2p_gbs: unknown key (did you mean 'p2p_gbps'?)");
    check_bad_file("tests/data/bad/odd-x.json", MT_EINVAL,
                   ":3:3: num_device: Chimera (X) needs an even pipeline depth (pp = 5)");
    check_bad_file("tests/data/bad/top-array.json", MT_EINVAL,
                   ":1:1: expected a JSON object at the top level, got array");
    check_bad_file("tests/data/bad/empty.json", MT_EPARSE, ":1:1: empty file");
    check_bad_file("tests/data/bad/no-such-file.json", MT_EINVAL, ": ");

    /* Over 16 MiB: refused before parsing, from memory and from a file. */
    size_t big = (size_t)CONFIG_JSON_MAX_BYTES + 1;
    char *buf = malloc(big);
    CHECK(buf != NULL);
    if (buf == NULL)
        return;
    memset(buf, ' ', big);
    buf[0] = '{';
    buf[big - 1] = '}';
    struct config c;
    struct mt_err e;
    CHECK_EQ_INT(config_load_string(buf, big, "big.json", &c, &e), MT_EINVAL);
    CHECK_PREFIX(e.msg, "big.json: ");
    CHECK_EQ_INT(config_load_string(buf, 2048, "ok.json", &c, &e) != MT_OK, 1); /* '{' only */
    char tmp[] = "/tmp/mt-test-config-XXXXXX";
    int fd = mkstemp(tmp);
    CHECK(fd >= 0);
    if (fd >= 0) {
        FILE *f = fdopen(fd, "wb");
        CHECK(f != NULL && fwrite(buf, 1, big, f) == big);
        if (f != NULL)
            fclose(f);
        err_clear(&e);
        CHECK_EQ_INT(config_load_file(tmp, &c, &e), MT_EINVAL);
        CHECK_STR_CONTAINS(e.msg, "limit");
        unlink(tmp);
    }
    free(buf);
}

/* Every example cut short must be an error, never a crash (and never half a config). */
static void test_truncation(void)
{
    static const char *const ex[] = {"examples/gpt3-1.6b-v.json", "examples/llama2-13b-w.json",
                                     "examples/tiny-cpu.json", "examples/hf-gpt2-config.json"};
    for (size_t i = 0; i < sizeof ex / sizeof ex[0]; i++) {
        char path[1024];
        src_path(path, sizeof path, ex[i]);
        FILE *f = fopen(path, "rb");
        CHECK(f != NULL);
        if (f == NULL)
            continue;
        char text[8192];
        size_t n = fread(text, 1, sizeof text, f);
        fclose(f);
        size_t last = n;
        while (last > 0 && text[last - 1] != '}')
            last--;
        int bad = 0;
        for (size_t k = 0; k + 1 < last; k++) {
            struct config c;
            struct mt_err e;
            int rc = config_load_string(text, k, "cut.json", &c, &e);
            if (rc != MT_EPARSE && rc != MT_EINVAL)
                bad++;
            else if (strncmp(e.msg, "cut.json:", 9) != 0)
                bad++;
        }
        CHECK_EQ_INT(bad, 0);
    }
}

/* Issue 41: each family's own layer, from its published config.json (tests/data/hf/README
 * names the sources): the parts transformers' modeling files give it, the training length. */
static void test_hf_families(void)
{
    static const struct {
        const char *file;
        enum model_arch arch;
        enum mlp_kind mlp;
        enum bias_kind bias;
        int head_dim, kv, ffn, seq, positions;
        bool tied;
        enum qk_norm_kind qk;
    } fam[] = {
        /* rope_scaling.original_max_position_embeddings: 8192, not 131,072 */
        {"Llama-3.1-8B", ARCH_LLAMA2, MLP_SWIGLU, BIAS_NONE, 128, 8, 14336, 8192, 131072, false,
         QK_NORM_NONE},
        /* biases on q, k, v; untied (tie_word_embeddings false); 4096 = min(131072, 4096) */
        {"Qwen2.5-7B", ARCH_LLAMA2, MLP_SWIGLU, BIAS_QKV, 128, 4, 18944, 4096, 131072, false,
         QK_NORM_NONE},
        {"Qwen2.5-32B", ARCH_LLAMA2, MLP_SWIGLU, BIAS_QKV, 128, 8, 27648, 4096, 131072, false,
         QK_NORM_NONE},
        /* head_dim given, q_norm and k_norm over one head */
        {"Qwen3-8B", ARCH_LLAMA2, MLP_SWIGLU, BIAS_NONE, 128, 8, 12288, 4096, 40960, false,
         QK_NORM_HEAD},
        /* GeGLU, head_dim 256 (16 x 256 = 4096 != h 3072), tied by GemmaConfig's default */
        {"gemma-7b", ARCH_LLAMA2, MLP_GEGLU, BIAS_NONE, 256, 16, 24576, 4096, 8192, true,
         QK_NORM_NONE},
        /* sliding_window null: none */
        {"Mistral-7B-v0.3", ARCH_LLAMA2, MLP_SWIGLU, BIAS_NONE, 128, 8, 14336, 4096, 32768, false,
         QK_NORM_NONE},
        /* Phi-3's fused projections: llama's matrices; original_max_position_embeddings */
        {"phi-4", ARCH_LLAMA2, MLP_SWIGLU, BIAS_NONE, 128, 10, 17920, 16384, 16384, false,
         QK_NORM_NONE},
        /* q_norm and k_norm over the whole projection */
        {"OLMo-2-1124-7B", ARCH_LLAMA2, MLP_SWIGLU, BIAS_NONE, 128, 32, 11008, 4096, 4096, false,
         QK_NORM_WHOLE},
    };
    for (size_t i = 0; i < sizeof fam / sizeof fam[0]; i++) {
        char rel[128];
        struct config c;
        int failed = check_failures;
        snprintf(rel, sizeof rel, "tests/data/hf/%s.json", fam[i].file);
        CHECK_EQ_INT(load_example(rel, &c), MT_OK);
        const struct model_spec *m = &c.model;
        CHECK_EQ_INT(m->arch, fam[i].arch);
        CHECK_EQ_INT(config_mlp(m), fam[i].mlp);
        CHECK_EQ_INT(config_norm(m), NORM_RMSNORM);
        CHECK_EQ_INT(config_bias(m), fam[i].bias);
        CHECK_EQ_INT(config_head_dim(m), fam[i].head_dim);
        CHECK_EQ_INT(config_kv_heads(m), fam[i].kv);
        CHECK_EQ_INT(m->ffn_hidden_size, fam[i].ffn);
        CHECK_EQ_INT(m->seq_length, fam[i].seq);
        CHECK_EQ_INT(c.seqlen.max_positions, fam[i].positions);
        CHECK_EQ_INT(config_tied_embeddings(m), fam[i].tied);
        CHECK_EQ_INT(m->qk_norm, fam[i].qk);
        if (check_failures != failed)
            fprintf(stderr, "  family %s\n", fam[i].file);
        check_round_trip(&c); /* the parts are written and read back */
    }
    /* GPT-2: LayerNorm, GELU, biases everywhere, tied; tie_word_embeddings false unties it */
    struct config c;
    struct mt_err e;
    CHECK_EQ_INT(load_example("examples/hf-gpt2-config.json", &c), MT_OK);
    CHECK(config_mlp(&c.model) == MLP_GELU && config_norm(&c.model) == NORM_LAYERNORM &&
          config_bias(&c.model) == BIAS_ALL && config_tied_embeddings(&c.model));
    CHECK_EQ_INT(c.seqlen.max_positions, 1024);
    CHECK_EQ_INT(load_str("{\"model_type\": \"gpt2\", \"n_embd\": 768, \"n_layer\": 12, "
                          "\"n_head\": 12, \"tie_word_embeddings\": false}", &c, &e), MT_OK);
    CHECK(!config_tied_embeddings(&c.model));
    /* Qwen2 ties only when told (Qwen2.5-0.5B: tie_word_embeddings true) */
    CHECK_EQ_INT(load_str("{\"model_type\": \"qwen2\", \"hidden_size\": 896, "
                          "\"num_hidden_layers\": 24, \"num_attention_heads\": 14, "
                          "\"num_key_value_heads\": 2, \"tie_word_embeddings\": true}", &c, &e),
                 MT_OK);
    CHECK(config_tied_embeddings(&c.model) && config_bias(&c.model) == BIAS_QKV);
    /* Llama with attention_bias and mlp_bias: every linear layer */
    CHECK_EQ_INT(load_str("{\"model_type\": \"llama\", \"hidden_size\": 512, "
                          "\"num_hidden_layers\": 8, \"num_attention_heads\": 8, "
                          "\"attention_bias\": true, \"mlp_bias\": true}", &c, &e), MT_OK);
    CHECK_EQ_INT(config_bias(&c.model), BIAS_ALL);
    /* our own keys for the parts */
    CHECK_EQ_INT(load_str("{\"model\": {\"preset\": \"LLaMA-2-7B\", \"mlp\": \"geglu\", "
                          "\"bias\": \"qkv\", \"head_dim\": 256, \"tie_embeddings\": true, "
                          "\"qk_norm\": \"head\", \"norm\": \"layernorm\"}}", &c, &e), MT_OK);
    CHECK(config_mlp(&c.model) == MLP_GEGLU && config_bias(&c.model) == BIAS_QKV &&
          config_head_dim(&c.model) == 256 && config_tied_embeddings(&c.model) &&
          c.model.qk_norm == QK_NORM_HEAD && config_norm(&c.model) == NORM_LAYERNORM);
    check_round_trip(&c);
}

/* Issue 41 item 1: what cannot be modelled is refused naming its key and value, never read as
 * something simpler (a mixture of experts simulated as a dense model). */
static void test_hf_refused(void)
{
    static const struct {
        const char *file, *msg;
    } bad[] = {
        {"Mistral-7B-v0.1", "sliding_window: sliding-window attention (sliding_window = 4096, "
                            "below max_position_embeddings 32768) is not modelled"},
        {"Phi-3-mini-4k-instruct", "sliding_window: sliding-window attention (sliding_window = "
                                   "2047, below max_position_embeddings 4096) is not modelled"},
        {"gemma-2-9b", "model_type: model_type 'gemma2' is not modelled: sliding-window attention "
                       "on every other layer"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char rel[128], path[1024];
        struct config c;
        struct mt_err e;
        err_clear(&e);
        snprintf(rel, sizeof rel, "tests/data/hf/%s.json", bad[i].file);
        src_path(path, sizeof path, rel);
        CHECK_EQ_INT(config_load_file(path, &c, &e), MT_EINVAL);
        CHECK(strstr(e.msg, bad[i].msg) != NULL);
        if (strstr(e.msg, bad[i].msg) == NULL)
            fprintf(stderr, "  %s: %s\n", bad[i].file, e.msg);
    }
    static const struct {
        const char *json, *msg;
    } str[] = {
        {"{\"model_type\": \"falcon\", \"hidden_size\": 4544, \"num_hidden_layers\": 32, "
         "\"num_attention_heads\": 71}",
         "bad.json:1:2: model_type: model_type 'falcon' is not modelled (known: gpt2, llama, "
         "mistral, qwen2, qwen3, gemma, phi3, olmo2, mixtral, qwen2_moe, qwen3_moe, deepseek_v2, "
         "deepseek_v3)"},
        {"{\"hidden_size\": 512, \"num_hidden_layers\": 8, \"num_attention_heads\": 8}",
         "Hugging Face config without a model_type"},
        {"{\"model_type\": \"qwen2\", \"hidden_size\": 512, \"num_hidden_layers\": 8, "
         "\"num_attention_heads\": 8, \"use_sliding_window\": true, \"sliding_window\": 4096}",
         "sliding_window: sliding-window attention (sliding_window = 4096, use_sliding_window "
         "true) is not modelled"},
        {"{\"model_type\": \"llama\", \"hidden_size\": 512, \"num_hidden_layers\": 8, "
         "\"num_attention_heads\": 8, \"attention_bias\": true}",
         "attention_bias: biases on the attention's q, k, v and o only are not modelled"},
        {"{\"model_type\": \"llama\", \"hidden_size\": 512, \"num_hidden_layers\": 8, "
         "\"num_attention_heads\": 8, \"hidden_act\": \"relu\"}",
         "hidden_act: activation 'relu' is not modelled for model_type llama"},
        {"{\"model_type\": \"llama4\", \"text_config\": {\"num_local_experts\": 16}}",
         "text_config.num_local_experts: mixture of experts (num_local_experts = 16)"},
        {"{\"model_type\": \"llama\", \"hidden_size\": 512, \"num_hidden_layers\": 8, "
         "\"num_attention_heads\": 8, \"kv_lora_rank\": 512}",
         "kv_lora_rank: multi-head latent attention (kv_lora_rank = 512) is not modelled for "
         "model_type 'llama'"},
        /* issue 38: experts in a family without them, never read as dense */
        {"{\"model_type\": \"llama\", \"hidden_size\": 512, \"num_hidden_layers\": 8, "
         "\"num_attention_heads\": 8, \"num_local_experts\": 8}",
         "num_local_experts: mixture of experts (num_local_experts = 8) is not modelled for "
         "model_type 'llama'"},
        /* what the MoE families have and the cost model does not */
        {"{\"model_type\": \"qwen2_moe\", \"hidden_size\": 512, \"num_hidden_layers\": 8, "
         "\"num_attention_heads\": 8, \"num_experts\": 60, \"num_experts_per_tok\": 4, "
         "\"moe_intermediate_size\": 128, \"shared_expert_intermediate_size\": 512}",
         "shared_expert_intermediate_size: a shared expert behind a sigmoid gate (qwen2_moe's "
         "shared_expert_gate"},
        {"{\"model_type\": \"qwen3_moe\", \"hidden_size\": 512, \"num_hidden_layers\": 8, "
         "\"num_attention_heads\": 8, \"num_experts\": 16, \"num_experts_per_tok\": 2, "
         "\"moe_intermediate_size\": 128, \"mlp_only_layers\": [0, 3]}",
         "mlp_only_layers: dense layers other than the first ones (mlp_only_layers element 1 is "
         "not 1)"},
        {"{\"model_type\": \"deepseek_v3\", \"hidden_size\": 512, \"num_hidden_layers\": 8, "
         "\"num_attention_heads\": 8, \"n_routed_experts\": 16, \"num_experts_per_tok\": 2, "
         "\"moe_intermediate_size\": 128, \"moe_layer_freq\": 2}",
         "moe_layer_freq: MoE layers every 2-th from first_k_dense_replace"},
        {"{\"model_type\": \"deepseek_v3\", \"hidden_size\": 512, \"num_hidden_layers\": 8, "
         "\"num_attention_heads\": 8, \"n_routed_experts\": 16, \"num_experts_per_tok\": 2, "
         "\"moe_intermediate_size\": 128, \"topk_method\": \"sinkhorn\"}",
         "topk_method: a router top-k method 'sinkhorn' is not modelled"},
        {"{\"model_type\": \"deepseek_v2\", \"hidden_size\": 512, \"num_hidden_layers\": 8, "
         "\"num_attention_heads\": 8, \"n_routed_experts\": 16, \"num_experts_per_tok\": 2, "
         "\"moe_intermediate_size\": 128, \"kv_lora_rank\": 64, \"qk_nope_head_dim\": 32, "
         "\"qk_rope_head_dim\": 16}",
         "v_head_dim is missing"},
        {"{\"model_type\": \"mixtral\", \"hidden_size\": 512, \"num_hidden_layers\": 8, "
         "\"num_attention_heads\": 8, \"num_local_experts\": 8}",
         "num_experts_per_tok is missing"},
        {"{\"model_type\": \"mixtral\", \"hidden_size\": 512, \"num_hidden_layers\": 8, "
         "\"num_attention_heads\": 8, \"num_local_experts\": 8, \"num_experts_per_tok\": 2, "
         "\"max_position_embeddings\": 32768, \"sliding_window\": 4096}",
         "sliding_window: sliding-window attention (sliding_window = 4096, below "
         "max_position_embeddings 32768) is not modelled"},
        {"{\"model_type\": \"llama4_text\", \"hidden_size\": 512, \"num_hidden_layers\": 8, "
         "\"num_attention_heads\": 8}",
         "model_type 'llama4_text' is not modelled: chunked local attention"},
        {"{\"model_type\": \"llama\", \"hidden_size\": 512, \"num_hidden_layers\": 8, "
         "\"num_attention_heads\": 8, \"quantization_config\": {\"quant_method\": \"gptq\"}}",
         "quantization_config: quantized weights (quantization_config) are not modelled"},
        {"{\"model_type\": \"qwen3\", \"hidden_size\": 512, \"num_hidden_layers\": 8, "
         "\"num_attention_heads\": 8, \"layer_types\": [\"full_attention\", "
         "\"sliding_attention\"]}",
         "layer_types: layers of kind 'sliding_attention'"},
        {"{\"model\": {\"preset\": \"tiny\", \"mlp\": \"relu\"}}",
         "model.mlp: expected gelu, swiglu or geglu"},
    };
    for (size_t i = 0; i < sizeof str / sizeof str[0]; i++) {
        struct config c;
        struct mt_err e;
        err_clear(&e);
        CHECK_EQ_INT(load_str(str[i].json, &c, &e), MT_EINVAL);
        CHECK(strstr(e.msg, str[i].msg) != NULL);
        if (strstr(e.msg, str[i].msg) == NULL)
            fprintf(stderr, "  %s\n  got %s\n", str[i].json, e.msg);
    }
}

/* Issue 38 item 6: the MoE families' published config.json read to the model the presets
 * hold (model/presets.c, from the same files): each key to its field. */
static void test_hf_moe(void)
{
    char path[1024];
    struct config c;
    struct mt_err e;
    err_clear(&e);
    src_path(path, sizeof path, "tests/data/hf/DeepSeek-V3.json");
    CHECK_EQ_INT(config_load_file(path, &c, &e), MT_OK);
    const struct moe_spec *m = &c.model.moe;
    const struct mla_spec *a = &c.model.mla;
    CHECK(m->num_experts == 256 && m->router_topk == 8 && m->ffn_hidden_size == 2048 &&
          m->shared_ffn == 2048 && m->first_k_dense == 3 && m->mtp_layers == 1 &&
          m->router_bias && c.model.ffn_hidden_size == 18432);
    CHECK(a->kv_lora_rank == 512 && a->q_lora_rank == 1536 && a->qk_nope_head_dim == 128 &&
          a->qk_rope_head_dim == 64 && a->v_head_dim == 128);
    CHECK_EQ_INT(c.model.seq_length, 4096); /* rope_scaling's original length (YaRN) */
    src_path(path, sizeof path, "tests/data/hf/DeepSeek-V2-Lite.json");
    CHECK_EQ_INT(config_load_file(path, &c, &e), MT_OK);
    CHECK(m->num_experts == 64 && m->router_topk == 6 && m->shared_ffn == 2 * 1408 &&
          m->first_k_dense == 1 && m->mtp_layers == 0 && !m->router_bias);
    CHECK(a->kv_lora_rank == 512 && a->q_lora_rank == 0); /* q_lora_rank null */
    src_path(path, sizeof path, "tests/data/hf/Qwen3-30B-A3B.json");
    CHECK_EQ_INT(config_load_file(path, &c, &e), MT_OK);
    CHECK(m->num_experts == 128 && m->router_topk == 8 && m->ffn_hidden_size == 768 &&
          m->shared_ffn == 0 && m->layer_freq == 1 && m->first_k_dense == 0 &&
          c.model.qk_norm == QK_NORM_HEAD && config_head_dim(&c.model) == 128 &&
          a->kv_lora_rank == 0);
    src_path(path, sizeof path, "tests/data/hf/Mixtral-8x7B-v0.1.json");
    CHECK_EQ_INT(config_load_file(path, &c, &e), MT_OK);
    CHECK(m->num_experts == 8 && m->router_topk == 2 && m->ffn_hidden_size == 14336);
    /* a prefix of dense layers is first_k_dense; decoder_sparse_step the frequency */
    CHECK_EQ_INT(load_str("{\"model_type\": \"qwen3_moe\", \"hidden_size\": 512, "
                          "\"num_hidden_layers\": 8, \"num_attention_heads\": 8, "
                          "\"num_experts\": 16, \"num_experts_per_tok\": 2, "
                          "\"moe_intermediate_size\": 128, \"decoder_sparse_step\": 2, "
                          "\"mlp_only_layers\": [0, 1]}", &c, &e), MT_OK);
    CHECK(m->first_k_dense == 2 && m->layer_freq == 2);
    /* blocks 3, 5, 7 (0-based) are MoE: i >= 2 and (i + 1) % 2 == 0, HF's rule */
    CHECK(!moe_layer_is_moe(&c.model, 1) && moe_layer_is_moe(&c.model, 3) &&
          !moe_layer_is_moe(&c.model, 4) && moe_layers_in(&c.model, 0, 8) == 3);
    /* ours at model.moe.*: validation names the key as the file spells it */
    CHECK_EQ_INT(load_str("{\"model_type\": \"mixtral\", \"hidden_size\": 512, "
                          "\"num_hidden_layers\": 8, \"num_attention_heads\": 8, "
                          "\"num_local_experts\": 4, \"num_experts_per_tok\": 6}", &c, &e),
                 MT_EINVAL);
    CHECK(strstr(e.msg, "router_topk") != NULL && strstr(e.msg, "num_experts_per_tok") != NULL);
    if (strstr(e.msg, "num_experts_per_tok") == NULL)
        fprintf(stderr, "  got %s\n", e.msg);
}

/* A Hugging Face config named after a preset but of another shape (a dense multi-head llama whose
 * _name_or_path is meta-llama/Mixtral-8x22B, a GQA MoE preset): written over the preset, it
 * must say every part the preset has otherwise (fuzz_config_parse found the K/V heads left out,
 * read back as the preset's 8). */
static void test_preset_named_round_trip(void)
{
    static const char text[] =
        "{\"num_device\": 4, \"model\": {\"_name_or_path\": \"meta-llama/Mixtral-8x22B\", "
        "\"architectures\": [\"LlamaForCausalLM\"], \"hidden_act\": \"silu\", "
        "\"hidden_size\": 4096, \"intermediate_size\": 11008, \"model_type\": \"llama\", "
        "\"num_attention_heads\": 32, \"num_hidden_layers\": 32, \"num_key_value_heads\": 32, "
        "\"rms_norm_eps\": 1e-05, \"tie_word_embeddings\": false, \"vocab_size\": 32000}}";
    struct config c, d;
    struct mt_err e;
    CHECK_EQ_INT(config_load_string(text, sizeof text - 1, "hf.json", &c, &e), MT_OK);
    char *json = config_to_json(&c);
    CHECK(json != NULL);
    if (json == NULL)
        return;
    CHECK_EQ_INT(config_load_string(json, strlen(json), "rt.json", &d, &e), MT_OK);
    char *again = config_to_json(&d);
    CHECK(again != NULL && strcmp(json, again) == 0);
    CHECK_EQ_INT(config_kv_heads(&d.model), 32);
    CHECK(!moe_enabled(&d.model) && d.model.qk_norm == c.model.qk_norm);
    free(again);
    free(json);
}

/* A Hugging Face head_dim past the bound model.head_dim reads back with is refused as ours is
 * (fuzz_config_parse: 1,240,968 was read, written and then refused on reading). */
static void test_hf_head_dim_bound(void)
{
    static const char text[] =
        "{\"model_type\": \"llama\", \"hidden_size\": 2048, \"num_attention_heads\": 32, "
        "\"num_hidden_layers\": 4, \"intermediate_size\": 6144, \"vocab_size\": 32000, "
        "\"head_dim\": 1240968}";
    struct config c;
    struct mt_err e;
    CHECK(config_load_string(text, sizeof text - 1, "hf.json", &c, &e) != MT_OK);
    CHECK(strstr(e.msg, "head_dim") != NULL && strstr(e.msg, "1048576") != NULL);
}

static void test_unit_parse(void)
{
    struct unit_costs u = {0};
    struct mt_err e;
    CHECK_EQ_INT(config_unit_costs_parse("1,2,1", &u, &e), MT_OK);
    CHECK(u.enabled && u.f == 1 && u.b == 2 && u.rc == 1);
    CHECK_EQ_INT(config_unit_costs_parse(" 1.5 , 3 , 0 ", &u, &e), MT_OK);
    CHECK(u.f == 1.5 && u.b == 3 && u.rc == 0);
    static const char *const bad[] = {"1,2",    "1,2,1,4", "a,2,1", "nan,2,1", "0,2,1",
                                      "1,2,-1", ",,",      "1,,1",  "",        "1e999,2,1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK_EQ_INT(config_unit_costs_parse(bad[i], &u, &e), MT_EINVAL);
}

int main(void)
{
    test_preset_named_round_trip();
    test_hf_head_dim_bound();
    test_defaults();
    test_examples();
    test_keys();
    test_hf();
    test_round_trip();
    test_tp();
    test_bad_inputs();
    test_bad_files();
    test_truncation();
    test_unit_parse();
    test_hf_families();
    test_hf_refused();
    test_hf_moe();
    return check_report("test_config");
}
