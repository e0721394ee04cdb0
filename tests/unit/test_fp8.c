/* tests/unit/test_fp8.c: FP8 training (issue 39 item 4; model/fp8.h, docs/fp8.md) against
 * cases worked by hand on Llama-3.1-8B (h 4096, 32 heads, 8 K/V heads of 128, SwiGLU 14336),
 * one micro-batch of 4,096 tokens at tp 1 on an H100-80G (989 TFLOP/s bf16, 1979 fp8; MAMF
 * ceilings 0.803 and 0.709):
 *   QKV is (4096 x 4096) . (4096 x 6144): 2mnk = 206,158,430,208 FLOPs in either dtype; a
 *   GEMM this large sits at the same point of the shape curve in both, so its FP8 time over
 *   its bf16 time is (989 x 0.803) / (1979 x 0.709) = 0.56601 (blockwise: / (1.41 / 1.57));
 *   a quantize kernel reads the bf16 input (4096 x 4096 = 16,777,216 elements) and writes a
 *   rowwise and a transposed FP8 copy: 4 bytes an element, 67,108,864 B (current scaling reads
 *   it twice: 6 B, 100,663,296); QKV's input is the norm's output, which TE's LayerNormLinear
 *   writes in FP8 itself (all but current scaling): its cast only writes the copies (2 B an
 *   element) and the norm writes 2 B an element less; backward the same over the output
 *   gradient, 4096 x 6144 =
 *   25,165,824 elements; blockwise and MXFP8 write 1 + 4/128 and 1 + 1/32 bytes a copy:
 *   2 + 2 x 1.03125 = 4.0625 B an element; a per-tensor recipe on Blackwell one copy: 3 B;
 *   what QKV keeps falls from its bf16 input (33,554,432 B) to the FP8 copy (16,777,216 B);
 *   the layer's linear inputs (qkv, proj, gate_up 4096 x 4096 each, down 4096 x 14336:
 *   109,051,904 elements) each keep 1 byte instead of 2: the layer keeps 109,051,904 B less;
 *   the layer's FP8 weights: 4096 x 6144 + 4096 x 4096 + 4096 x 28672 + 14336 x 4096 =
 *   218,103,808, each with 2 cached FP8 bytes on Hopper (rowwise + transposed), 0 net with
 *   --fp8-param-gather (the bf16 copy goes), 1 for tensorwise on B200, 2.0625 for MXFP8;
 *   the distributed optimizer's all-gather with --fp8-param-gather: 2 (P - F) + F bytes. */
#include <config.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/config.h"
#include "model/cost.h"
#include "model/fp8.h"
#include "model/ops.h"
#include "model/presets.h"
#include "model/price.h"
#include "tests/check.h"
#include "util/err.h"

#define QKV_IN 16777216.0   /* 4096 x 4096 */
#define QKV_OUT 25165824.0  /* 4096 x 6144 */
#define LAYER_IN 109051904.0
#define LAYER_W 218103808.0

static const struct op *find(const struct op_list *l, const char *name)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->op[i].name, name) == 0)
            return &l->op[i];
    return NULL;
}

/* the op before the first one named `name` */
static const struct op *before(const struct op_list *l, const char *name)
{
    for (size_t i = 1; i < l->n; i++)
        if (strcmp(l->op[i].name, name) == 0)
            return &l->op[i - 1];
    return NULL;
}

static void llama8b(struct config *c, const char *device, enum fp8_recipe r)
{
    config_default(c);
    CHECK_EQ_INT(presets_model("Llama-3.1-8B", &c->model, NULL), MT_OK);
    c->model.seq_length = 4096;
    struct device_spec d;
    CHECK_EQ_INT(presets_device(device, &d, NULL), MT_OK);
    config_set_device(c, &d);
    c->num_device = 1;
    c->cluster.dp = 1;
    c->cluster.tp = 1;
    c->global_batch_size = 8;
    c->cluster.fp8_recipe = r;
    struct mt_err e;
    CHECK_EQ_INT(config_validate(c, &e), MT_OK);
}

static void layer(const struct config *c, struct op_list *l)
{
    op_list_init(l);
    ops_build_layer(c, c->model.seq_length, l);
}

static void test_dtypes_and_flops(void)
{
    struct config c, b;
    struct op_list l, lb;
    llama8b(&c, "H100-80G", FP8_DELAYED);
    llama8b(&b, "H100-80G", FP8_NONE);
    layer(&c, &l);
    layer(&b, &lb);
    const char *fp8[] = {"qkv", "proj", "gate_up", "down"};
    for (int i = 0; i < 4; i++) {
        const struct op *o = find(&l, fp8[i]), *ob = find(&lb, fp8[i]);
        CHECK(o && ob && o->dtype == OP_FP8 && ob->dtype == OP_BF16);
        if (o && ob)
            for (int p = 0; p < PASS__COUNT; p++) /* FP8 moves no FLOP */
                CHECK_NEAR(op_flops(o, p), op_flops(ob, p), 0);
        const struct op *q = before(&l, fp8[i]);
        CHECK(q && strcmp(q->name, "fp8_quantize") == 0);
        CHECK(find(&lb, "fp8_quantize") == NULL);
    }
    const struct op *qkv = find(&l, "qkv");
    CHECK_NEAR(op_flops(qkv, PASS_FW), 206158430208.0, 0);
    /* attention (flash) and the norms stay bf16 */
    CHECK_EQ_INT(find(&l, "core_attn")->dtype, OP_BF16);
    CHECK_EQ_INT(find(&l, "attn_norm")->dtype, OP_BF16);
    /* the LM head: Megatron's output_layer is not a TE module */
    struct op_list h;
    op_list_init(&h);
    ops_build_head(&c, 4096, &h);
    CHECK_EQ_INT(find(&h, "lm_head")->dtype, OP_BF16);
    CHECK(find(&h, "fp8_quantize") == NULL);
    op_list_fini(&h);
    op_list_fini(&l);
    op_list_fini(&lb);
}

static void test_time_ratio(void)
{
    struct config c, b;
    struct op_list l, lb;
    llama8b(&b, "H100-80G", FP8_NONE);
    layer(&b, &lb);
    double bf = price_op_us(&b, find(&lb, "qkv"), PASS_FW);
    /* the peaks and ceilings the ratio rests on */
    CHECK_NEAR(price_peak_flops(&b, OP_FP8), 1979e12, 0);
    CHECK_NEAR(b.cluster.device.gemm_eff_fp8, 0.709, 0);
    CHECK_NEAR(b.cluster.device.gemm_eff, 0.803, 0);
    double ratio = (989 * 0.803) / (1979 * 0.709);
    enum fp8_recipe rs[] = {FP8_DELAYED, FP8_TENSORWISE, FP8_BLOCKWISE};
    double want[] = {ratio, ratio, ratio / (1.41 / 1.57)};
    for (int i = 0; i < 3; i++) {
        llama8b(&c, "H100-80G", rs[i]);
        layer(&c, &l);
        for (int p = 0; p < PASS__COUNT; p++) {
            double t8 = price_op_us(&c, find(&l, "qkv"), p), t16 = price_op_us(&b, find(&lb, "qkv"), p);
            CHECK_NEAR(t8 / t16, want[i], 1e-9);
        }
        op_list_fini(&l);
    }
    CHECK(bf > 0);
    op_list_fini(&lb);
}

/* The quantize kernel's bytes and the kept bytes by recipe and device */
static void test_quantize_and_keep(void)
{
    /* per_elem: HBM bytes an element the cast moves (read + written); fused: the norm writes
     * the copies itself (all but current scaling), so QKV's forward cast only writes them and
     * the norm writes 2 bytes an element less; act: kept bytes an element */
    static const struct {
        const char *device;
        enum fp8_recipe r;
        double per_elem, act;
        bool fused;
    } cases[] = {
        {"H100-80G", FP8_DELAYED, 2 + 2, 1, true},
        {"H100-80G", FP8_TENSORWISE, 4 + 2, 1, false},
        {"H100-80G", FP8_BLOCKWISE, 2 + 2 * (1 + 4.0 / 128), 1 + 4.0 / 128, true},
        {"B200", FP8_MXFP8, 2 + 2 * (1 + 1.0 / 32), 1 + 1.0 / 32, true},
        {"B200", FP8_DELAYED, 2 + 1, 1, true},
        {"B200", FP8_TENSORWISE, 4 + 1, 1, false},
    };
    struct config b;
    llama8b(&b, "H100-80G", FP8_NONE);
    double act_bf16 = cost_layer_act_bytes(&b);
    struct op_list lb;
    layer(&b, &lb);
    double norm_bf16 = op_hbm_bytes(find(&lb, "attn_norm"), PASS_FW);
    op_list_fini(&lb);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct config c;
        struct op_list l;
        llama8b(&c, cases[i].device, cases[i].r);
        layer(&c, &l);
        const struct op *q = before(&l, "qkv"), *g = find(&l, "qkv");
        double fused = cases[i].fused ? 2 : 0;
        CHECK_NEAR(op_hbm_bytes(q, PASS_FW), (cases[i].per_elem - fused) * QKV_IN, 1e-3);
        CHECK_NEAR(op_hbm_bytes(find(&l, "attn_norm"), PASS_FW), norm_bf16 - fused * QKV_IN, 1e-3);
        CHECK_NEAR(op_hbm_bytes(q, PASS_B), cases[i].per_elem * QKV_OUT, 1e-3);
        /* proj's input (the attention's output) has no norm before it: its cast reads it */
        CHECK_NEAR(op_hbm_bytes(before(&l, "proj"), PASS_FW), cases[i].per_elem * QKV_IN, 1e-3);
        CHECK_NEAR(g->keep_bytes, cases[i].act * QKV_IN, 1e-3);
        CHECK_NEAR(g->w_keep_bytes, cases[i].act * (QKV_IN + QKV_OUT), 1e-3);
        /* the layer keeps (2 - act) bytes less a linear input element */
        CHECK_NEAR(act_bf16 - cost_layer_act_bytes(&c), (2 - cases[i].act) * LAYER_IN, 1e-3);
        op_list_fini(&l);
    }
    /* the delayed case worked out: proj's cast 67,108,864 B forward; QKV's 33,554,432 B (the
     * copies alone, written by the norm's kernel), 100,663,296 B backward */
    struct config c;
    struct op_list l;
    llama8b(&c, "H100-80G", FP8_DELAYED);
    layer(&c, &l);
    CHECK_NEAR(op_hbm_bytes(before(&l, "proj"), PASS_FW), 67108864.0, 0);
    CHECK_NEAR(op_hbm_bytes(before(&l, "qkv"), PASS_FW), 33554432.0, 0);
    CHECK_NEAR(op_hbm_bytes(before(&l, "qkv"), PASS_B), 100663296.0, 0);
    /* an FP8 GEMM reads 1-byte operands and writes a bf16 result: FW 1 x (mk + kn) + 2 mn */
    const struct op *g = find(&l, "qkv");
    CHECK_NEAR(op_hbm_bytes(g, PASS_FW), QKV_IN + 4096.0 * 6144 + 2 * QKV_OUT, 0);
    op_list_fini(&l);
}

static double stage_static(const struct config *c)
{
    struct cost_model m;
    struct mt_err e;
    CHECK_EQ_INT(cost_model_build(c, 1, 1, c->cluster.dp, &m, &e), MT_OK);
    double s = m.stage[0].static_bytes;
    cost_model_fini(&m);
    return s;
}

static void test_static_bytes(void)
{
    struct config b, c;
    llama8b(&b, "H100-80G", FP8_NONE);
    double base = stage_static(&b);
    double L = b.model.num_layers;
    static const struct {
        const char *device;
        enum fp8_recipe r;
        bool gather;
        double extra; /* bytes an FP8 weight adds */
    } cases[] = {
        {"H100-80G", FP8_DELAYED, false, 2},
        {"H100-80G", FP8_TENSORWISE, false, 2},
        {"H100-80G", FP8_BLOCKWISE, false, 2 * (1 + 4.0 / 16384)},
        {"H100-80G", FP8_DELAYED, true, 0},
        {"B200", FP8_TENSORWISE, false, 1},
        {"B200", FP8_MXFP8, false, 2 * (1 + 1.0 / 32)},
        {"B200", FP8_TENSORWISE, true, -1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        llama8b(&c, cases[i].device, cases[i].r);
        c.distributed_optimizer = cases[i].gather;
        c.cluster.fp8_param_gather = cases[i].gather;
        struct config bd = b;
        struct device_spec d;
        presets_device(cases[i].device, &d, NULL);
        config_set_device(&bd, &d);
        bd.distributed_optimizer = cases[i].gather;
        CHECK_NEAR(fp8_weight_extra_bytes(&c), cases[i].extra, 1e-12);
        CHECK_NEAR(stage_static(&c) - stage_static(&bd), L * LAYER_W * cases[i].extra, 1);
    }
    CHECK(base > 0);
}

static void test_step(void)
{
    struct config c;
    llama8b(&c, "H100-80G", FP8_DELAYED);
    c.distributed_optimizer = true;
    c.cluster.fp8_param_gather = true;
    c.num_device = 8;
    c.cluster.dp = 8;
    struct op_list l;
    op_list_init(&l);
    ops_build_step_fp8(&c, 1e9, 6e8, 8, &l);
    const struct op *ag = find(&l, "dp_all_gather_params"), *cast = find(&l, "fp8_weight_cast");
    CHECK(ag && cast);
    CHECK_NEAR(ag->bytes, 2 * 4e8 + 6e8, 0);
    CHECK_NEAR(cast->fw_bytes, 2 * 6e8, 0); /* the transposed copy from the FP8 weight: 1 + 1 */
    op_list_fini(&l);
    c.cluster.fp8_param_gather = false;
    op_list_init(&l);
    ops_build_step_fp8(&c, 1e9, 6e8, 8, &l);
    CHECK_NEAR(find(&l, "dp_all_gather_params")->bytes, 2e9, 0);
    CHECK_NEAR(find(&l, "fp8_weight_cast")->fw_bytes, (2 + 2) * 6e8, 0);
    op_list_fini(&l);
    c.cluster.fp8_recipe = FP8_TENSORWISE; /* the weight's amax read first */
    op_list_init(&l);
    ops_build_step_fp8(&c, 1e9, 6e8, 8, &l);
    CHECK_NEAR(find(&l, "fp8_weight_cast")->fw_bytes, (4 + 2) * 6e8, 0);
    op_list_fini(&l);
    /* bf16: no cast, the all-gather as before */
    c.cluster.fp8_recipe = FP8_NONE;
    op_list_init(&l);
    ops_build_step(&c, 1e9, 8, &l);
    CHECK(find(&l, "fp8_weight_cast") == NULL);
    op_list_fini(&l);
}

/* Sequence parallelism: the entry gathered in FP8, current scaling's amax all-reduce first */
static void test_sp_gather(void)
{
    struct config c;
    llama8b(&c, "H100-80G", FP8_TENSORWISE);
    c.num_device = 2;
    c.cluster.tp = 2;
    c.sequence_parallel = true;
    struct op_list l;
    layer(&c, &l);
    const struct op *ag = find(&l, "tp_gather_attn"), *amax = find(&l, "tp_amax_reduce");
    CHECK(ag && amax);
    CHECK_NEAR(ag->bytes, 1.0 * 4096 * 4096, 0); /* the whole input at 1 byte */
    CHECK_NEAR(amax->bytes, 4, 0);
    CHECK_EQ_INT(amax->coll, COLL_ALL_REDUCE);
    CHECK_NEAR(find(&l, "tp_reduce_attn_dx")->bytes, 2.0 * 4096 * 4096, 0); /* bf16 gradients */
    /* the shard is what is quantized: 2048 x 4096 elements */
    CHECK_NEAR(op_hbm_bytes(before(&l, "qkv"), PASS_FW), 6.0 * 2048 * 4096, 0);
    op_list_fini(&l);
    c.cluster.fp8_recipe = FP8_DELAYED; /* the scale from the history: no all-reduce */
    layer(&c, &l);
    CHECK(find(&l, "tp_amax_reduce") == NULL);
    op_list_fini(&l);
}

static void test_moe(void)
{
    struct config c;
    config_default(&c);
    CHECK_EQ_INT(presets_model("DeepSeek-V2-Lite", &c.model, NULL), MT_OK);
    struct device_spec d;
    presets_device("H100-80G", &d, NULL);
    config_set_device(&c, &d);
    c.num_device = 1;
    c.global_batch_size = 8;
    c.cluster.fp8_recipe = FP8_DELAYED;
    struct mt_err e;
    CHECK_EQ_INT(config_validate(&c, &e), MT_OK);
    struct op_list l;
    op_list_init(&l);
    ops_build_block(&c, 4096, BLOCK_MOE, &l);
    CHECK_EQ_INT(find(&l, "experts_gate_up")->dtype, OP_FP8);
    CHECK_EQ_INT(find(&l, "experts_down")->dtype, OP_FP8);
    CHECK_EQ_INT(find(&l, "router")->dtype, OP_BF16); /* a plain linear in Megatron */
    CHECK_EQ_INT(find(&l, "kv_up")->dtype, OP_FP8);   /* MLA's projections are TE linears */
    CHECK_EQ_INT(find(&l, "shared_down")->dtype, OP_FP8);
    op_list_fini(&l);
}

static void test_refusals(void)
{
    struct config c;
    struct mt_err e;
    config_default(&c); /* A100-40G, the paper's GPT3-1.6B */
    CHECK_EQ_INT(presets_model("Llama-3.1-8B", &c.model, NULL), MT_OK);
    c.cluster.fp8_recipe = FP8_DELAYED;
    CHECK_EQ_INT(config_validate(&c, &e), MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "cluster.fp8_recipe: delayed needs FP8 tensor cores");
    CHECK_STR_CONTAINS(e.msg, "A100-40G has none");
    struct device_spec d;
    presets_device("H100-80G", &d, NULL);
    config_set_device(&c, &d);
    CHECK_EQ_INT(config_validate(&c, &e), MT_OK);
    c.cluster.fp8_recipe = FP8_MXFP8;
    CHECK_EQ_INT(config_validate(&c, &e), MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "mxfp8 needs Blackwell");
    CHECK_STR_CONTAINS(e.msg, "H100-80G");
    presets_device("B200", &d, NULL);
    config_set_device(&c, &d);
    CHECK_EQ_INT(config_validate(&c, &e), MT_OK);
    c.cluster.fp8_param_gather = true; /* without the distributed optimizer */
    CHECK_EQ_INT(config_validate(&c, &e), MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "cluster.fp8_param_gather");
    c.cluster.fp8_recipe = FP8_NONE;
    c.distributed_optimizer = true;
    CHECK_EQ_INT(config_validate(&c, &e), MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "needs cluster.fp8_recipe");
    c.cluster.fp8_param_gather = false;
    c.cluster.fp8_format = FP8_FORMAT_E4M3;
    CHECK_EQ_INT(config_validate(&c, &e), MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "cluster.fp8_format: e4m3 given without");
    /* the paper's 2021 stack had none */
    config_default(&c);
    config_set_device(&c, &d);
    c.cluster.fp8_recipe = FP8_DELAYED;
    CHECK_EQ_INT(config_validate(&c, &e), MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "2021 Megatron-DeepSpeed stack has no FP8");
    enum fp8_recipe r;
    CHECK_EQ_INT(fp8_recipe_parse("TensorWise", &r, &e), MT_OK);
    CHECK_EQ_INT(r, FP8_TENSORWISE);
    CHECK_EQ_INT(fp8_recipe_parse("rowwise", &r, &e), MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "none delayed tensorwise blockwise mxfp8");
}

static void test_json_round_trip(void)
{
    static const char text[] =
        "{\"model\": \"Llama-3.1-8B\", \"num_device\": 8, \"distributed_optimizer\": true,\n"
        " \"cluster\": {\"device\": \"H100-80G\", \"dp\": 8, \"fp8_recipe\": \"blockwise\",\n"
        "   \"fp8_format\": \"e4m3\", \"fp8_param_gather\": true}}\n";
    struct config c, d;
    struct mt_err e;
    CHECK_EQ_INT(config_load_string(text, strlen(text), "t.json", &c, &e), MT_OK);
    if (e.msg[0])
        fprintf(stderr, "%s\n", e.msg);
    CHECK_EQ_INT(c.cluster.fp8_recipe, FP8_BLOCKWISE);
    CHECK_EQ_INT(c.cluster.fp8_format, FP8_FORMAT_E4M3);
    CHECK(c.cluster.fp8_param_gather);
    char *j = config_to_json(&c);
    CHECK(j && strstr(j, "\"fp8_recipe\": \"blockwise\""));
    CHECK_EQ_INT(config_load_string(j, strlen(j), "back.json", &d, &e), MT_OK);
    CHECK_EQ_INT(d.cluster.fp8_recipe, FP8_BLOCKWISE);
    CHECK_EQ_INT(d.cluster.fp8_format, FP8_FORMAT_E4M3);
    CHECK(d.cluster.fp8_param_gather);
    free(j);
    static const char bad[] = "{\"cluster\": {\"device\": \"H100-80G\",\n \"fp8_recipe\": \"nvfp4\"}}";
    CHECK_EQ_INT(config_load_string(bad, strlen(bad), "bad.json", &c, &e), MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "bad.json:2:");
    CHECK_STR_CONTAINS(e.msg, "cluster.fp8_recipe");
    /* bf16 configs write no FP8 key */
    config_default(&c);
    j = config_to_json(&c);
    CHECK(j && strstr(j, "fp8_recipe") == NULL);
    free(j);
}

int main(void)
{
    test_dtypes_and_flops();
    test_time_ratio();
    test_quantize_and_keep();
    test_static_bytes();
    test_step();
    test_sp_gather();
    test_moe();
    test_refusals();
    test_json_round_trip();
    return check_report("test_fp8");
}
