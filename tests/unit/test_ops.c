/* tests/unit/test_ops.c: the op registry and the builders (model/ops.h, issue 37 item 1). Each
 * kind against figures worked by hand (shown beside them), the builders' lists against
 * published parameter counts (Hugging Face safetensors totals), and a stage's time as the sum
 * of its ops (model/cost.c). */
#include <config.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/config.h"
#include "model/cost.h"
#include "model/cost_ops.h"
#include "model/framework.h"
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

static int count_coll(const struct op_list *l, enum op_coll coll, enum op_pass p)
{
    int n = 0;
    for (size_t i = 0; i < l->n; i++)
        n += l->op[i].kind == OP_COLLECTIVE && l->op[i].coll == coll && l->op[i].pass == p &&
             !l->op[i].overlapped;
    return n;
}

/* A GEMM (3 x 7) . (7 x 5): 2mnk = 210 a pass; with neither side a weight, B computes both
 * inputs' gradients (420) and there is no W. Bytes, bf16: FW reads A 21 and B 35, writes C 15. */
static void test_gemm(void)
{
    struct op g = {.kind = OP_GEMM, .m = 3, .n = 5, .k = 7, .count = 1, .weight = true,
                   .dtype = OP_BF16};
    CHECK_NEAR(op_flops(&g, PASS_FW), 210, 0);
    CHECK_NEAR(op_flops(&g, PASS_B), 210, 0);
    CHECK_NEAR(op_flops(&g, PASS_W), 210, 0);
    CHECK_NEAR(op_hbm_bytes(&g, PASS_FW), 2 * (21 + 35 + 15), 0);
    g.weight = false;
    g.count = 4; /* a batched product: four of them */
    CHECK_NEAR(op_flops(&g, PASS_FW), 840, 0);
    CHECK_NEAR(op_flops(&g, PASS_B), 1680, 0);
    CHECK_NEAR(op_flops(&g, PASS_W), 0, 0);
    CHECK_NEAR(op_model_flops(&g, PASS_B), 1680, 0);
}

/* Attention on 4 queries over 4 keys, one head of dimension 1: the causal mask leaves
 * 4 + 3 + 2 + 1 = 10 pairs, each 2 (QK^T) + 2 (PV) FLOPs: 40; the full square 64. Flash's
 * backward 2.5 x 40 = 100; eager's 2 x 64 (an eager kernel masks the whole square). 2 queries
 * (the last two positions) over 4 keys: 3 + 4 = 7 pairs. */
static void test_attention(void)
{
    struct op a = {.kind = OP_ATTENTION, .batch = 1, .s_q = 4, .s_kv = 4, .heads = 1,
                   .kv_heads = 1, .head_dim = 1, .causal = true, .flash = true};
    CHECK_NEAR(op_flops(&a, PASS_FW), 40, 0);
    CHECK_NEAR(op_flops(&a, PASS_B), 100, 0);
    CHECK_NEAR(op_flops(&a, PASS_W), 0, 0);
    CHECK_NEAR(op_model_flops(&a, PASS_FW), 64, 0);
    CHECK_NEAR(op_model_flops(&a, PASS_B), 128, 0);
    a.flash = false;
    CHECK_NEAR(op_flops(&a, PASS_FW), 64, 0);
    CHECK_NEAR(op_flops(&a, PASS_B), 128, 0);
    a.flash = true;
    a.s_q = 2;
    CHECK_NEAR(op_flops(&a, PASS_FW), 7 * 4, 0);
    /* 2 x 8 heads, d 128: 2 x 2 x 8 x 10 x 256 = 81,920 */
    a.s_q = 4, a.batch = 2, a.heads = 8, a.head_dim = 128;
    CHECK_NEAR(op_flops(&a, PASS_FW), 81920, 0);
}

/* NCCL's bus factors (nccl-tests PERFORMANCE.md): ring all-reduce 2(n-1)/n, all-gather and
 * reduce-scatter (n-1)/n. */
static void test_collectives(void)
{
    CHECK_NEAR(op_coll_bus_factor(COLL_ALL_REDUCE, 8), 1.75, 0);
    CHECK_NEAR(op_coll_bus_factor(COLL_ALL_GATHER, 8), 0.875, 0);
    CHECK_NEAR(op_coll_bus_factor(COLL_REDUCE_SCATTER, 4), 0.75, 0);
    CHECK_NEAR(op_coll_bus_factor(COLL_ALL_REDUCE, 1), 0, 0);
    CHECK_NEAR(op_coll_bus_factor(COLL_SEND_RECV, 2), 1, 0);
}

/* Llama-3.1-8B (h 4096, 32 heads, 8 K/V heads of 128, f 14336, s 8192, b 1): the QKV GEMM is
 * 8192 x (4096 + 2 x 1024) x 4096; over tp 8, 512 + 2 x 128 = 768 columns a rank. */
static void test_gqa_shapes(void)
{
    struct config c;
    config_default(&c);
    CHECK_EQ_INT(presets_model("Llama-3.1-8B", &c.model, NULL), MT_OK);
    struct op_list l;
    op_list_init(&l);
    ops_build_layer(&c, 8192, &l);
    const struct op *qkv = find(&l, "qkv");
    CHECK(qkv != NULL);
    if (qkv) {
        CHECK_NEAR(qkv->m, 8192, 0);
        CHECK_NEAR(qkv->n, 6144, 0);
        CHECK_NEAR(qkv->k, 4096, 0);
        CHECK_NEAR(qkv->params, 4096.0 * 6144, 0);
    }
    const struct op *core = find(&l, "core_attn");
    CHECK(core != NULL && core->flash && core->causal && core->kv_heads == 8);
    /* the LLaMA block in order (llm.c-style listing) */
    static const char *const order[] = {"attn_norm", "qkv", "rotary", "core_attn", "proj",
                                        "attn_residual", "mlp_norm", "gate_up", "swiglu", "down",
                                        "mlp_residual"};
    CHECK_EQ_INT((long long)l.n, 11);
    for (size_t i = 0; i < l.n && i < 11; i++)
        CHECK(strcmp(l.op[i].name, order[i]) == 0);
    op_list_fini(&l);

    c.num_device = 64;
    c.cluster.tp = 8;
    op_list_init(&l);
    ops_build_layer(&c, 8192, &l);
    qkv = find(&l, "qkv");
    CHECK(qkv != NULL && qkv->n == 768 && qkv->params == 4096.0 * 768);
    const struct op *gate_up = find(&l, "gate_up");
    CHECK(gate_up != NULL && gate_up->n == 2 * 14336 / 8); /* gate and up, 3 matrices in all */
    /* Megatron's f/g: an all-reduce of 2sbh = 67,108,864 bytes after proj and after down in
     * the forward, and the mirrored two in the backward */
    CHECK_EQ_INT(count_coll(&l, COLL_ALL_REDUCE, PASS_FW), 2);
    CHECK_EQ_INT(count_coll(&l, COLL_ALL_REDUCE, PASS_B), 2);
    const struct op *ar = find(&l, "tp_reduce_mlp");
    CHECK(ar != NULL && ar->bytes == 2.0 * 8192 * 4096 && ar->group == 8 && ar->link == LINK_NVLINK);
    op_list_fini(&l);
    /* sequence parallelism: all-gather in, reduce-scatter out, the same ring bytes */
    c.sequence_parallel = true;
    op_list_init(&l);
    ops_build_layer(&c, 8192, &l);
    CHECK_EQ_INT(count_coll(&l, COLL_ALL_REDUCE, PASS_FW), 0);
    CHECK_EQ_INT(count_coll(&l, COLL_ALL_GATHER, PASS_FW), 2);
    CHECK_EQ_INT(count_coll(&l, COLL_REDUCE_SCATTER, PASS_FW), 2);
    CHECK_EQ_INT(count_coll(&l, COLL_ALL_GATHER, PASS_B), 2);
    CHECK_EQ_INT(count_coll(&l, COLL_REDUCE_SCATTER, PASS_B), 2);
    /* the norm's kept input is sequence-split: 2sbh / 8 */
    const struct op *norm = find(&l, "attn_norm");
    CHECK(norm != NULL && norm->keep_bytes == 2.0 * 8192 * 4096 / 8);
    op_list_fini(&l);
}

/* The GPT block with eager attention, as the paper's stack runs it: dropout after the
 * softmax and after each sublayer; kept bytes sum to Korthikanti et al. Table 2's
 * 34sbh + 5as^2b (GPT3-1.6B: h 1024, a 16, s 1024, b 1: 34 x 2^20 x 1024 + 5 x 16 x 2^20). */
static void test_gpt_eager(void)
{
    struct config c;
    config_default(&c);
    CHECK(ops_legacy(&c));
    struct op_list l;
    op_list_init(&l);
    ops_build_layer(&c, 1024, &l);
    static const char *const order[] = {"attn_norm", "qkv", "core_attn", "attn_softmax",
                                        "attn_dropout", "proj", "attn_out_dropout",
                                        "attn_residual", "mlp_norm", "fc1", "gelu", "fc2",
                                        "mlp_out_dropout", "mlp_residual"};
    CHECK_EQ_INT((long long)l.n, 14);
    double keep = 0, params = 0;
    for (size_t i = 0; i < l.n; i++) {
        if (i < 14)
            CHECK(strcmp(l.op[i].name, order[i]) == 0);
        keep += l.op[i].keep_bytes;
        params += l.op[i].params;
    }
    double sbh = 1024.0 * 1024;
    CHECK_NEAR(keep, 34 * sbh + 5 * 16 * 1024.0 * 1024, 0);
    /* 4h^2 + 2hf + 9h + f at f = 4h: 12h^2 + 13h = 12,582,912 + 13,312 */
    CHECK_NEAR(params, 12596224, 0);
    op_list_fini(&l);
}

/* Whole-model parameter counts from the lists (a stage holding every layer and both ends, tp 1)
 * against the published totals: the vocabulary as published (make_vocab_size_divisible_by 1),
 * or padded as Megatron pads it (pad > 1, x tp). */
static double model_params_padded(struct model_spec *m, int pad, int tp)
{
    struct config c;
    config_default(&c);
    c.model = *m;
    c.attention = ATTN_DEFAULT;
    c.vocab_divisible_by = pad;
    c.num_device = 8 * tp;
    c.cluster.tp = tp;
    return cost_stage_params(&c, m->num_layers, true, true);
}

static double model_params(struct model_spec *m)
{
    return model_params_padded(m, 1, 1);
}

static void test_published_params(void)
{
    struct model_spec m;
    CHECK_EQ_INT(presets_model("Llama-3.1-8B", &m, NULL), MT_OK);
    CHECK_NEAR(model_params(&m), 8030261248.0, 0); /* meta-llama/Llama-3.1-8B */
    CHECK_EQ_INT(presets_model("LLaMA-2-7B", &m, NULL), MT_OK);
    CHECK_NEAR(model_params(&m), 6738415616.0, 0); /* meta-llama/Llama-2-7b-hf */
    /* GPT-2 small (openai-community/gpt2): h 768, 12 layers, 12 heads, 1024 positions, V 50257,
     * tied: 124,439,808 */
    struct model_spec g = {.name = "gpt2", .arch = ARCH_GPT3, .hidden_size = 768,
                           .num_layers = 12, .num_attention_heads = 12, .seq_length = 1024,
                           .vocab_size = 50257, .ffn_hidden_size = 3072};
    CHECK_NEAR(model_params(&g), 124439808.0, 0);
    /* Megatron pads 50257 to 50304 (a multiple of 128): 47 rows of 768 more, once (tied) */
    CHECK_NEAR(model_params_padded(&g, 128, 1), 124439808.0 + 47 * 768, 0);
    CHECK_NEAR(model_params_padded(&g, 0, 1), 124439808.0 + 47 * 768, 0); /* the default */
    /* Llama-3.1-8B's 128,256 is 1002 x 128, but over tp 8 pads to 126 x 1024 = 129,024: a rank
     * holds 16,128 rows of the embedding and of the head */
    CHECK_EQ_INT(presets_model("Llama-3.1-8B", &m, NULL), MT_OK);
    struct config c;
    config_default(&c);
    c.model = m;
    c.num_device = 64;
    c.cluster.tp = 8;
    struct ops_par par = ops_par_of(&c);
    CHECK_NEAR(ops_vocab_size(&c, &par), 129024, 0);
    c.model = g;
    c.model.paper_stack = true; /* the 2021 stack: V / t, unpadded */
    CHECK_NEAR(ops_vocab_size(&c, &par), 50257, 0);
    /* Qwen2.5-7B (Qwen/Qwen2.5-7B): h 3584, 28 layers, 28 heads, 4 K/V heads, f 18944,
     * V 152064, biases on q, k, v only, untied: 7,615,616,512 */
    struct model_spec q = {.name = "qwen2.5-7b", .arch = ARCH_LLAMA2, .hidden_size = 3584,
                           .num_layers = 28, .num_attention_heads = 28, .seq_length = 4096,
                           .vocab_size = 152064, .ffn_hidden_size = 18944,
                           .num_key_value_heads = 4, .bias = BIAS_QKV,
                           .tie_embeddings = TRI_NO};
    CHECK_NEAR(model_params(&q), 7615616512.0, 0);
    /* qk_norm adds a head_dim weight for q and one for k a layer: 28 x 256 */
    q.qk_norm = true;
    CHECK_NEAR(model_params(&q), 7615616512.0 + 28 * 256, 0);
}

/* A stage's time is the sum of its ops (a priced framework): the forward of a middle stage of
 * 8 blocks is 8 x the block's ops' forward plus the framework overheads of model/cost.h. */
static void test_stage_is_sum(void)
{
    struct config c;
    config_default(&c);
    CHECK_EQ_INT(presets_model("Llama-3.1-8B", &c.model, NULL), MT_OK);
    c.num_device = 32;
    c.cluster.tp = 8;
    CHECK(!ops_legacy(&c));
    struct cost_model cm;
    struct mt_err e;
    CHECK_EQ_INT(cost_model_build(&c, 4, 1, 1, &cm, &e), MT_OK);
    struct op_list l;
    op_list_init(&l);
    ops_build_layer(&c, c.model.seq_length, &l);
    double fw = 0, bw = 0;
    for (size_t i = 0; i < l.n; i++) {
        fw += cost_op_us(&c, &l.op[i], PASS_FW);
        bw += cost_op_us(&c, &l.op[i], PASS_B) + cost_op_us(&c, &l.op[i], PASS_W);
    }
    op_list_fini(&l);
    const struct stage_cost *st = &cm.stage[1];
    /* the framework's profile (model/framework.h): per instruction and per block pass */
    double op_us = framework_op_overhead_us(&c), layer_us = framework_layer_overhead_us(&c);
    CHECK_NEAR(st->fw, 8 * fw + op_us + 8 * layer_us, 1e-6);
    CHECK_NEAR(st->bw, 8 * bw + op_us + 16 * layer_us, 1e-6);
    CHECK(st->w > 0 && st->b > 0);
    CHECK_NEAR(st->w + st->b, st->bw, 1e-6);
    cost_model_fini(&cm);
}

/* Item 4's Megatron details. Llama-3.1-8B, s 8192, b 1, tp 1 (V 128,256): the fused
 * cross-entropy keeps the bf16 logits its gradient is written over, 2 x 8192 x 128,256 =
 * 2,101,346,304 bytes; the unfused one the fp32 softmax, twice that. The step of a stage of
 * 10^9 parameters over 4 replicas: one all-reduce of 4 x 10^9 bytes (fp32 gradients, Megatron's
 * bf16 default), 2 x 10^9 with --grad-reduce-in-bf16; the distributed optimizer reduce-scatters
 * the 4 x 10^9 and all-gathers 2 x 10^9 bytes of bf16 parameters, its Adam step 32 / 4 bytes a
 * parameter. */
/* The SwiGLU's kept bytes by stack (Llama-3.1-8B, f 14,336, 8,192 tokens, bf16, tp 1):
 * Megatron-core's fused SwiGLUFunction saves [gate | up] only, 2 x 2sbf = 469,762,048 bytes;
 * torchtitan's eager silu(gate) x up keeps silu(gate) too, 3 x 2sbf = 704,643,072. */
static void test_swiglu_keep(void)
{
    struct config c;
    config_default(&c);
    CHECK_EQ_INT(presets_model("Llama-3.1-8B", &c.model, NULL), MT_OK);
    static const struct {
        enum framework_id fw;
        double keep;
    } want[] = {{FRAMEWORK_MEGATRON_CORE, 469762048.0}, {FRAMEWORK_TORCHTITAN, 704643072.0}};
    for (size_t k = 0; k < 2; k++) {
        c.cluster.framework = want[k].fw;
        struct op_list l;
        op_list_init(&l);
        ops_build_layer(&c, 8192, &l);
        const struct op *act = find(&l, "swiglu"), *down = find(&l, "down");
        CHECK(act != NULL && act->keep_bytes == want[k].keep);
        /* the product is the down projection's input, kept there once: 2sbf */
        CHECK(down != NULL && down->keep_bytes == 2.0 * 8192 * 14336);
        op_list_fini(&l);
    }
}

static void test_megatron_details(void)
{
    struct config c;
    config_default(&c);
    CHECK_EQ_INT(presets_model("Llama-3.1-8B", &c.model, NULL), MT_OK);
    CHECK(config_ce_fusion(&c) && config_grad_reduce_fp32(&c));
    struct op_list l;
    op_list_init(&l);
    ops_build_head(&c, 8192, &l);
    const struct op *ce = find(&l, "cross_entropy");
    CHECK(ce != NULL && ce->keep_bytes == 2101346304.0);
    op_list_fini(&l);
    c.ce_fusion = TRI_NO;
    op_list_init(&l);
    ops_build_head(&c, 8192, &l);
    ce = find(&l, "cross_entropy");
    CHECK(ce != NULL && ce->keep_bytes == 2 * 2101346304.0);
    op_list_fini(&l);

    c.num_device = 32;
    c.cluster.dp = 4;
    op_list_init(&l);
    ops_build_step(&c, 1e9, 4, &l);
    CHECK_EQ_INT((long long)l.n, 2);
    CHECK(l.op[0].coll == COLL_ALL_REDUCE && l.op[0].bytes == 4e9 && l.op[0].group == 4);
    CHECK(l.op[1].kind == OP_MEMORY && l.op[1].fw_bytes == 32e9);
    op_list_fini(&l);
    c.grad_reduce_fp32 = TRI_NO;
    op_list_init(&l);
    ops_build_step(&c, 1e9, 4, &l);
    CHECK(l.n == 2 && l.op[0].bytes == 2e9);
    op_list_fini(&l);
    c.grad_reduce_fp32 = TRI_DEFAULT;
    c.distributed_optimizer = true;
    op_list_init(&l);
    ops_build_step(&c, 1e9, 4, &l);
    CHECK_EQ_INT((long long)l.n, 3);
    CHECK(l.op[0].coll == COLL_REDUCE_SCATTER && l.op[0].bytes == 4e9);
    CHECK(l.op[1].coll == COLL_ALL_GATHER && l.op[1].bytes == 2e9);
    CHECK(l.op[2].kind == OP_MEMORY && l.op[2].fw_bytes == 8e9);
    op_list_fini(&l);
    /* the 2021 stack keeps 16-bit gradients and the unfused loss */
    config_default(&c);
    CHECK(!config_ce_fusion(&c) && !config_grad_reduce_fp32(&c));
    CHECK_EQ_INT(config_vocab_divisible_by(&c), 1);
    /* the keys read, written and read back; a bad one named */
    const char *text = "{\"model\": \"Llama-3.1-8B\", \"cross_entropy_loss_fusion\": false, "
                       "\"accumulate_allreduce_grads_in_fp32\": false, "
                       "\"make_vocab_size_divisible_by\": 64}";
    struct mt_err e;
    CHECK_EQ_INT(config_load_string(text, strlen(text), "t.json", &c, &e), MT_OK);
    CHECK(!config_ce_fusion(&c) && !config_grad_reduce_fp32(&c));
    CHECK_EQ_INT(config_vocab_divisible_by(&c), 64);
    char *out = config_to_json(&c);
    struct config d;
    CHECK_EQ_INT(config_load_string(out, strlen(out), "w.json", &d, &e), MT_OK);
    free(out);
    CHECK(d.ce_fusion == TRI_NO && d.grad_reduce_fp32 == TRI_NO && d.vocab_divisible_by == 64);
    const char *bad = "{\"make_vocab_size_divisible_by\": 0}";
    CHECK_EQ_INT(config_load_string(bad, strlen(bad), "b.json", &c, &e), MT_EINVAL);
    CHECK(strstr(e.msg, "make_vocab_size_divisible_by") != NULL);
}

/* A block's sums under a recompute policy: kept bytes, the extra B time over none, and what it
 * rematerializes. */
struct rc_sums {
    double keep, b_us, fw_us, remat;
};

static struct rc_sums rc_sums_of(struct config *c, enum recompute_mode r)
{
    c->recompute = r;
    struct op_list l;
    op_list_init(&l);
    ops_build_layer(c, 8192, &l);
    struct rc_sums s = {0};
    for (size_t i = 0; i < l.n; i++) {
        s.keep += l.op[i].keep_bytes;
        s.remat += l.op[i].remat_bytes;
        s.b_us += cost_op_in_list_us(c, &l, i, PASS_B);
        s.fw_us += cost_op_in_list_us(c, &l, i, PASS_FW);
    }
    op_list_fini(&l);
    return s;
}

/* Llama-3.1-8B's block at b 1, s 8192, tp 1 (h 4096, q 4096, k v 1024 each, f 14336, 32
 * heads), worked by hand:
 *   full: the block's input alone, 2sh = 67,108,864 B; the backward reruns the whole forward.
 *   selective: all but the fp32 log-sum-exp, 4 x 32 x 8192 = 1,048,576 B; B pays the core
 *     attention's forward again.
 *   op (torchtitan): the input 2sh, wq's q 2sh, wv's v 2s x 1024, SDPA's output 2sh and lse,
 *     w1's gate 2sf: 2 x 8192 x (4096 + 4096 + 1024 + 4096 + 14336) + 1,048,576 = 454,033,408 B;
 *     B reruns every norm, rotary, SwiGLU and residual, wo whole, w3 (half of [w1 | w3]) and wk
 *     (1024 of [q | k | v]'s 6144): more than selective, less than full. */
static void test_recompute_policies(void)
{
    struct config c;
    config_default(&c);
    CHECK_EQ_INT(presets_model("Llama-3.1-8B", &c.model, NULL), MT_OK);
    c.cluster.framework = FRAMEWORK_TORCHTITAN;
    struct rc_sums none = rc_sums_of(&c, RECOMPUTE_NONE), full = rc_sums_of(&c, RECOMPUTE_FULL),
                   sel = rc_sums_of(&c, RECOMPUTE_SELECTIVE), op = rc_sums_of(&c, RECOMPUTE_OP);
    CHECK(none.remat == 0);
    CHECK(full.keep == 2.0 * 8192 * 4096);
    CHECK_NEAR(full.remat, none.keep - full.keep, 1e-3);
    CHECK_NEAR(full.b_us - none.b_us, none.fw_us, 1e-6 * none.fw_us);
    CHECK(full.fw_us == none.fw_us); /* the forward itself is not moved */
    CHECK(sel.keep == none.keep - 4.0 * 32 * 8192);
    struct op_list l;
    op_list_init(&l);
    c.recompute = RECOMPUTE_NONE;
    ops_build_layer(&c, 8192, &l);
    const struct op *core = find(&l, "core_attn");
    CHECK(core != NULL);
    double core_fw = 0;
    for (size_t i = 0; i < l.n; i++)
        if (&l.op[i] == core)
            core_fw = cost_op_in_list_us(&c, &l, i, PASS_FW);
    op_list_fini(&l);
    CHECK_NEAR(sel.b_us - none.b_us, core_fw, 1e-6 * core_fw);
    CHECK(op.keep == 2.0 * 8192 * (4096 + 4096 + 1024 + 4096 + 14336) + 4.0 * 32 * 8192);
    CHECK(op.b_us - none.b_us > sel.b_us - none.b_us && op.b_us < full.b_us);
    /* op on a GELU model is refused naming what it lacks */
    struct mt_err e;
    CHECK_EQ_INT(presets_model("GPT-3-13B", &c.model, NULL), MT_OK);
    c.recompute = RECOMPUTE_OP;
    CHECK(config_validate_recompute(&c, &e) != MT_OK);
    CHECK(strstr(e.msg, "not SwiGLU") != NULL);
    enum recompute_mode r;
    CHECK(config_recompute_parse("FULL", &r, &e) == MT_OK && r == RECOMPUTE_FULL);
    CHECK(config_recompute_parse("layer", &r, &e) != MT_OK && strstr(e.msg, "selective") != NULL);
    c.recompute = RECOMPUTE_NONE;
}

int main(void)
{
    test_gemm();
    test_attention();
    test_collectives();
    test_gqa_shapes();
    test_gpt_eager();
    test_published_params();
    test_stage_is_sum();
    test_megatron_details();
    test_swiglu_keep();
    test_recompute_policies();
    return check_report("test_ops");
}
