/* model/launch_write.c: a config written as the launch of the framework that will run it
 * (model/launch.h): a Megatron-LM script in the shape of its examples (arrays of flags, then
 * torchrun ... pretrain_gpt.py "${ARGS[@]}") or a torchtitan job TOML ([model], [training],
 * [parallelism], [activation_checkpoint]). What the framework cannot run as planned (a scheme
 * it has no schedule for, a model it has no flavor for) is refused naming what is missing and
 * the nearest config it can run. Reading the text back (model/launch_megatron.c,
 * model/launch_torchtitan.c) gives the config's model, degrees, scheme and batch again. */
#include <config.h>
#include "model/launch.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/fp8.h"
#include "model/launch_internal.h"
#include "model/moe.h"
#include "model/presets.h"
#include "model/scheme_registry.h"
#include "util/err.h"
#include "util/xalloc.h"

struct lw_buf {
    char *s;
    size_t len, cap;
};

static void lw_printf(struct lw_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void lw_printf(struct lw_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (k < 0)
        return;
    if (b->len + (size_t)k + 1 > b->cap) {
        b->cap = (b->len + (size_t)k + 1) * 2;
        b->s = xreallocarray(b->s, b->cap, 1);
    }
    va_start(ap, fmt);
    vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    b->len += (size_t)k;
}

static int lw_refuse(struct mt_err *e, const struct config *c, struct config *nearest,
                     const struct config *n, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static int lw_refuse(struct mt_err *e, const struct config *c, struct config *nearest,
                     const struct config *n, const char *fmt, ...)
{
    char what[800];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (nearest != NULL)
        *nearest = n ? *n : *c;
    return err_set(e, MT_EUNSUPPORTED, "%s", what);
}

int launch_expressible(enum launch_kind k, const struct config *c, struct config *nearest,
                       struct mt_err *e)
{
    struct config n = *c;
    int pp = config_pp(c);
    const char *title = launch_kind_title(k);
    const char *sname = config_scheme_name(c->scheme);
    if (c->seqlen.kind != SEQLEN_FIXED) {
        n.seqlen.kind = SEQLEN_FIXED;
        return lw_refuse(e, c, nearest, &n,
                         "%s takes one sequence length, not a distribution: the nearest is the "
                         "longest, %d",
                         title, c->model.seq_length);
    }
    if (c->unit.enabled)
        return lw_refuse(e, c, nearest, NULL,
                         "a unit-cost config has no model for %s to train", title);
    if (k == LAUNCH_MEGATRON) {
        if (config_mlp(&c->model) == MLP_GEGLU)
            return lw_refuse(e, c, nearest, NULL,
                             "Megatron-LM's pretrain_gpt.py has no flag for a GEGLU MLP");
        if (c->cluster.dp_shard > 0) { /* HSDP: torchtitan's data_parallel_replicate_degree */
            n.cluster.dp_shard = 0;
            return lw_refuse(e, c, nearest, &n,
                             "the shard group of %d of dp %d (HSDP) has no flag written here; "
                             "the nearest shards over all of dp",
                             c->cluster.dp_shard, c->cluster.dp);
        }
        if (c->scheme == SCHEME_V || c->scheme == SCHEME_W)
            return MT_OK;
        /* Megatron-LM pipelines: 1F1B and interleaved 1F1B (schedules.py
         * forward_backward_pipelining_{without,with}_interleaving) */
        bool v_shaped = scheme_registry_get(c->scheme)->chunks != SCHEME_CHUNKS_ONE;
        n.scheme = v_shaped && pp > 1 ? SCHEME_W : SCHEME_V;
        if (n.scheme == SCHEME_W && !config_scheme_uses_chunks(c->scheme))
            n.chunks = 2;
        n.iterations = 1;
        n.update_interval = 1;
        return lw_refuse(e, c, nearest, &n,
                         "Megatron-LM has no flag for %s (%s): its pipelines are 1F1B (V) and "
                         "interleaved 1F1B (W, --num-virtual-stages-per-pipeline-rank); the "
                         "nearest it runs is %s",
                         sname, scheme_registry_get(c->scheme)->long_name,
                         n.scheme == SCHEME_W ? "W with the same stages a device" : "V");
    }
    /* torchtitan */
    if (c->pipeline_layout[0] != '\0') {
        n.pipeline_layout[0] = '\0';
        return lw_refuse(e, c, nearest, &n,
                         "torchtitan splits layers by its first/last stage weights, not a layout "
                         "string (%s): the nearest is the even split", c->pipeline_layout);
    }
    if (c->cluster.fp8_recipe == FP8_DELAYED || c->cluster.fp8_recipe == FP8_BLOCKWISE) {
        n.cluster.fp8_recipe = FP8_TENSORWISE;
        return lw_refuse(e, c, nearest, &n,
                         "torchtitan's float8 (torchao) has no %s recipe: the nearest it runs is "
                         "tensorwise (current scaling)",
                         fp8_recipe_name(c->cluster.fp8_recipe));
    }
    if (c->cluster.fp8_recipe == FP8_MXFP8 && c->cluster.fp8_param_gather) {
        n.cluster.fp8_param_gather = false;
        return lw_refuse(e, c, nearest, &n,
                         "torchtitan's mx converter has no FP8 all-gather of the weights: the "
                         "nearest is the same without fp8_param_gather");
    }
    const char *flavor;
    if (launch_torchtitan_model_of(&c->model, &flavor) == NULL)
        return lw_refuse(e, c, nearest, NULL,
                         "torchtitan names models by flavor, and %s is none of llama3's (8B 70B "
                         "405B debugmodel), deepseek_v3's (16B 671B) or qwen3's MoE ones "
                         "(30B-A3B 235B-A22B): write a model of its own in torchtitan first",
                         c->model.name);
    if (config_cp(c) > 1 && c->cluster.cp_comm_type != CP_COMM_P2P &&
        c->cluster.cp_comm_type != CP_COMM_ALL_GATHER) {
        /* torch's context parallelism is a ring whose K/V move by one all-gather
         * (rotate method "allgather") or by a permute a step ("alltoall"): Megatron's
         * all_gather and p2p (torch/distributed/tensor/experimental/_attention.py,
         * _AllGatherRotater, _AllToAllRotater); no heads scattered (a2a, Ulysses) */
        n.cluster.cp_comm_type = CP_COMM_P2P;
        return lw_refuse(e, c, nearest, &n,
                         "torchtitan's context parallelism has no %s (heads scattered, "
                         "Ulysses): its rings are allgather and alltoall; the nearest is p2p "
                         "(rotate method alltoall)",
                         config_cp_comm_name(c->cluster.cp_comm_type));
    }
    if (c->model.moe.mtp_layers > 0) {
        n.model.moe.mtp_layers = 0;
        return lw_refuse(e, c, nearest, &n,
                         "torchtitan trains no multi-token prediction module: the nearest is "
                         "the model without it");
    }
    if (c->cluster.tp > 1 && !c->sequence_parallel) {
        n.sequence_parallel = true;
        return lw_refuse(e, c, nearest, &n,
                         "torchtitan's tensor parallelism always shards the norms' sequence "
                         "(sequence parallelism), which this plan does not: the nearest is the "
                         "same with --sequence-parallel");
    }
    if (pp == 1)
        return MT_OK;
    if (launch_torchtitan_schedule_name(c->scheme) != NULL) {
        if (config_scheme_uses_chunks(c->scheme) && c->chunks != 2 &&
            c->model.num_layers % (pp * c->chunks) != 0) {
            n.chunks = 2;
            return lw_refuse(e, c, nearest, &n,
                             "torchtitan splits a looped schedule by layers per stage, and %d "
                             "layers are not pp %d x %d chunks: the nearest is 2 chunks (its "
                             "default)",
                             c->model.num_layers, pp, c->chunks);
        }
        return MT_OK;
    }
    const struct scheme_record *rec = scheme_registry_get(c->scheme);
    if (rec->torch_none == NULL && rec->place == SCHEME_PLACE_LINE)
        return MT_OK; /* PipelineScheduleSingle + the schedule CSV */
    n.scheme = rec->place == SCHEME_PLACE_V ? SCHEME_ZBV_TORCH : SCHEME_V;
    n.iterations = 1;
    n.update_interval = 1;
    return lw_refuse(e, c, nearest, &n, "torchtitan cannot run %s: %s; the nearest it runs is %s",
                     sname,
                     rec->torch_none ? rec->torch_none
                                     : "it places a CSV's stages in a loop (stage s on rank s "
                                       "mod pp), and a V needs ZBVZeroBubble's placement",
                     config_scheme_name(n.scheme));
}

bool launch_needs_csv(enum launch_kind k, const struct config *c)
{
    return k == LAUNCH_TORCHTITAN && config_pp(c) > 1 &&
           launch_torchtitan_schedule_name(c->scheme) == NULL;
}

/* Megatron-LM pads the vocabulary to a multiple of --make-vocab-size-divisible-by x tp: the
 * largest of 128, 64, ... 1 that keeps V as it is. */
static int lw_divisible_by(int vocab, int tp)
{
    for (int d = 128; d >= 1; d /= 2)
        if (launch_megatron_padded_vocab(vocab, d, tp) == vocab)
            return d;
    return 1;
}

static void lw_header(struct lw_buf *b, enum launch_kind k, const struct config *c,
                      const struct launch_write_opts *o)
{
    char model[96];
    presets_model_display(&c->model, model, sizeof model);
    lw_printf(b, "# Written by mario-tui (export --format %s)%s%s: %s on %d GPUs,\n",
              launch_kind_name(k), o && o->source ? " from " : "", o && o->source ? o->source : "",
              model, c->num_device);
    lw_printf(b, "# pp %d x dp %d x tp %d, %s, global batch %d, micro-batch %d.\n", config_pp(c),
              c->cluster.dp, c->cluster.tp, scheme_registry_get(c->scheme)->long_name,
              config_global_batch(c), c->micro_batch_size);
}

/* The experts' and MLA's flags (issue 38) as an array of their own, MOE_ARGS, the way
 * Megatron-LM's MoE examples write them; false (nothing written) for a dense model with
 * multi-head attention. The routing skew is the plan's assumption, not a flag. */
static bool lw_megatron_moe(struct lw_buf *b, const struct config *c)
{
    const struct model_spec *m = &c->model;
    const struct moe_spec *x = &m->moe;
    if (!moe_enabled(m) && !mla_enabled(m))
        return false;
    lw_printf(b, "MOE_ARGS=(\n");
    if (moe_enabled(m)) {
        char freq[1100];
        launch_moe_layer_freq_text(x->first_k_dense, x->layer_freq, m->num_layers, freq,
                                   sizeof freq);
        lw_printf(b, "    --num-experts %d\n    --moe-router-topk %d\n"
                     "    --moe-ffn-hidden-size %d\n",
                  x->num_experts, x->router_topk, x->ffn_hidden_size);
        if (x->shared_ffn > 0)
            lw_printf(b, "    --moe-shared-expert-intermediate-size %d\n", x->shared_ffn);
        if (strcmp(freq, "1") != 0)
            lw_printf(b, "    --moe-layer-freq \"%s\"\n", freq);
        lw_printf(b, "    --moe-grouped-gemm\n    --moe-token-dispatcher-type alltoall\n");
        if (x->capacity_factor > 0)
            lw_printf(b, "    --moe-expert-capacity-factor %.17g\n", x->capacity_factor);
        if (x->router_bias) /* DeepSeek-V3's: sigmoid scores with a per-expert bias */
            lw_printf(b, "    --moe-router-score-function sigmoid\n"
                         "    --moe-router-enable-expert-bias\n");
        lw_printf(b, "    --expert-model-parallel-size %d\n", config_ep(c));
        if (c->cluster.etp > 0) /* else Megatron's default, tp */
            lw_printf(b, "    --expert-tensor-parallel-size %d\n", c->cluster.etp);
    }
    if (x->mtp_layers > 0)
        lw_printf(b, "    --mtp-num-layers %d\n", x->mtp_layers);
    if (mla_enabled(m)) {
        const struct mla_spec *a = &m->mla;
        lw_printf(b, "    --multi-latent-attention\n    --qk-layernorm\n");
        if (a->q_lora_rank > 0)
            lw_printf(b, "    --q-lora-rank %d\n", a->q_lora_rank);
        lw_printf(b, "    --kv-lora-rank %d\n    --qk-head-dim %d\n"
                     "    --qk-pos-emb-head-dim %d\n    --v-head-dim %d\n",
                  a->kv_lora_rank, a->qk_nope_head_dim, a->qk_rope_head_dim, a->v_head_dim);
    }
    lw_printf(b, ")\n\n");
    return true;
}

static void lw_megatron(struct lw_buf *b, const struct config *c,
                        const struct launch_write_opts *o)
{
    const struct model_spec *m = &c->model;
    int pp = config_pp(c), tp = c->cluster.tp, n = c->num_device;
    int gpn = c->cluster.gpus_per_node > 0 ? c->cluster.gpus_per_node : CONFIG_GPUS_PER_NODE;
    int nodes = n >= gpn && n % gpn == 0 ? n / gpn : 1, per = n / nodes;
    lw_printf(b, "#!/bin/bash\n");
    lw_header(b, LAUNCH_MEGATRON, c, o);
    lw_printf(b, "# Add your data, tokenizer, optimizer, logging and checkpoint flags.\n\n");
    lw_printf(b, "GPUS_PER_NODE=%d\nNUM_NODES=%d\n\n", per, nodes);
    lw_printf(b, "MODEL_ARGS=(\n");
    lw_printf(b, "    --num-layers %d\n    --hidden-size %d\n    --ffn-hidden-size %d\n",
              m->num_layers, m->hidden_size, m->ffn_hidden_size);
    lw_printf(b, "    --num-attention-heads %d\n", m->num_attention_heads);
    if (config_kv_heads(m) != m->num_attention_heads)
        lw_printf(b, "    --group-query-attention\n    --num-query-groups %d\n",
                  config_kv_heads(m));
    if (config_head_dim(m) * m->num_attention_heads != m->hidden_size)
        lw_printf(b, "    --kv-channels %d\n", config_head_dim(m));
    lw_printf(b, "    --seq-length %d\n    --max-position-embeddings %d\n", m->seq_length,
              c->seqlen.max_positions > m->seq_length ? c->seqlen.max_positions : m->seq_length);
    int vocab = m->vocab_size, d = lw_divisible_by(vocab, tp);
    /* a preset's vocabulary padded by a multiple no power of two up to 128 gives (the launch
     * was read as the preset): its own size and the multiple that pads it to this one, so
     * that the script reads back as the same model */
    struct model_spec p;
    if (presets_model(m->name, &p, NULL) == MT_OK && p.vocab_size < vocab &&
        launch_megatron_padded_vocab(p.vocab_size, d, tp) != vocab)
        /* the smallest multiple of tp dividing V above V - P pads P to V */
        for (long k = vocab - p.vocab_size + 1; k <= vocab && k / tp <= 65536; k++)
            if (k % tp == 0 && vocab % k == 0) {
                d = (int)(k / tp);
                vocab = p.vocab_size;
                break;
            }
    lw_printf(b, "    --vocab-size %d\n", vocab);
    if (d != 128)
        lw_printf(b, "    --make-vocab-size-divisible-by %d\n", d);
    if (config_mlp(m) == MLP_SWIGLU)
        lw_printf(b, "    --swiglu\n");
    if (config_norm(m) == NORM_RMSNORM)
        lw_printf(b, "    --normalization RMSNorm\n");
    if (config_bias(m) != BIAS_ALL)
        lw_printf(b, "    --disable-bias-linear\n");
    if (config_bias(m) == BIAS_QKV)
        lw_printf(b, "    --add-qkv-bias\n");
    if (!config_tied_embeddings(m))
        lw_printf(b, "    --untie-embeddings-and-output-weights\n");
    if (m->qk_norm)
        lw_printf(b, "    --qk-layernorm\n");
    if (config_attention(c) == ATTN_EAGER)
        lw_printf(b, "    --attention-backend unfused\n");
    if (c->cluster.fp8_recipe != FP8_NONE) /* Megatron's FP8 flags (model/fp8.h) */
        lw_printf(b, "    --fp8-format %s\n    --fp8-recipe %s\n%s",
                  fp8_format_name(c->cluster.fp8_format), fp8_recipe_name(c->cluster.fp8_recipe),
                  c->cluster.fp8_param_gather ? "    --fp8-param-gather\n" : "");
    lw_printf(b, "    --bf16\n)\n\n");
    bool moe = lw_megatron_moe(b, c);
    lw_printf(b, "PARALLEL_ARGS=(\n    --tensor-model-parallel-size %d\n"
                 "    --pipeline-model-parallel-size %d\n",
              tp, pp);
    /* a layout names every stage, the virtual ones too (Megatron derives vpp = stages / pp
     * from it: pipeline_parallel_layer_layout.py), so it replaces the chunk count */
    if (c->pipeline_layout[0] != '\0')
        lw_printf(b, "    --pipeline-model-parallel-layout \"%s\"\n", c->pipeline_layout);
    else if (c->scheme == SCHEME_W && pp > 1)
        lw_printf(b, "    --num-virtual-stages-per-pipeline-rank %d\n", c->chunks);
    if (config_cp(c) > 1) /* Megatron spells all_gather "allgather" (arguments.py) */
        lw_printf(b, "    --context-parallel-size %d\n    --cp-comm-type %s\n", config_cp(c),
                  c->cluster.cp_comm_type == CP_COMM_ALL_GATHER
                      ? "allgather"
                      : config_cp_comm_name(c->cluster.cp_comm_type));
    if (c->sequence_parallel && tp > 1)
        lw_printf(b, "    --sequence-parallel\n");
    if (c->distributed_optimizer)
        lw_printf(b, "    --use-distributed-optimizer\n");
    if (c->cluster.tp_comm_overlap && c->sequence_parallel && tp > 1)
        lw_printf(b, "    --tp-comm-overlap\n");
    if (c->cluster.overlap_grad_reduce)
        lw_printf(b, "    --overlap-grad-reduce\n");
    if (c->cluster.overlap_param_gather && c->distributed_optimizer)
        lw_printf(b, "    --overlap-param-gather\n");
    /* a ZeRO stage given: Megatron FSDP, whose strategies are the stages (arguments.py) */
    static const char *const strategy[] = {"no_shard", "optim", "optim_grads",
                                           "optim_grads_params"};
    if (c->cluster.zero_stage >= 1 && c->cluster.zero_stage <= 3)
        lw_printf(b, "    --use-megatron-fsdp\n    --data-parallel-sharding-strategy %s\n",
                  strategy[c->cluster.zero_stage]);
    lw_printf(b, ")\n\nBATCH_ARGS=(\n    --micro-batch-size %d\n    --global-batch-size %d\n)\n\n",
              c->micro_batch_size, config_global_batch(c));
    lw_printf(b, "RECOMPUTE_ARGS=(");
    const struct launch_ac *ac = o ? o->ac : NULL;
    if (o && o->recompute == LAUNCH_RECOMPUTE_FULL && ac &&
        (ac->method == LAUNCH_RC_UNIFORM || ac->method == LAUNCH_RC_BLOCK) && ac->num_layers > 0) {
        lw_printf(b, "\n    --recompute-granularity full\n    --recompute-method %s\n"
                     "    --recompute-num-layers %d\n",
                  ac->method == LAUNCH_RC_BLOCK ? "block" : "uniform", ac->num_layers);
    } else if (o && o->recompute == LAUNCH_RECOMPUTE_FULL) {
        /* one checkpoint a stage (its input kept, the rest recomputed before the backward): a
         * CFW of the plan's stages, which hold L / (pp x stages a device) layers */
        int per_stage = m->num_layers / (pp * config_stages_per_device(c));
        lw_printf(b, "\n    --recompute-granularity full\n    --recompute-method uniform\n"
                     "    --recompute-num-layers %d\n",
                  per_stage > 0 ? per_stage : 1);
    } else if (o && o->recompute == LAUNCH_RECOMPUTE_SELECTIVE && ac &&
               ac->method == LAUNCH_RC_PER_OP) {
        lw_printf(b, "\n    # recompute op (torchtitan's per-op policy): no Megatron-LM flag\n");
    } else if (o && o->recompute == LAUNCH_RECOMPUTE_SELECTIVE) {
        lw_printf(b, "\n    --recompute-granularity selective\n");
        if (ac && ac->modules[0] != '\0')
            lw_printf(b, "    --recompute-modules %s\n", ac->modules);
    }
    lw_printf(b, ")\n\n");
    lw_printf(b, "torchrun --nproc-per-node $GPUS_PER_NODE --nnodes $NUM_NODES pretrain_gpt.py \\\n"
                 "    \"${MODEL_ARGS[@]}\" \\\n    \"${PARALLEL_ARGS[@]}\" \\\n"
                 "    \"${BATCH_ARGS[@]}\" \\\n    \"${RECOMPUTE_ARGS[@]}\"%s\n",
              moe ? " \\\n    \"${MOE_ARGS[@]}\"" : "");
}

static void lw_torchtitan(struct lw_buf *b, const struct config *c,
                          const struct launch_write_opts *o)
{
    int pp = config_pp(c), dp = c->cluster.dp, tp = c->cluster.tp;
    int gpn = c->cluster.gpus_per_node > 0 ? c->cluster.gpus_per_node : CONFIG_GPUS_PER_NODE;
    lw_header(b, LAUNCH_TORCHTITAN, c, o);
    lw_printf(b, "# Run it on %d GPUs (NGPU=%d, or torchrun --nproc-per-node %d --nnodes %d);\n"
                 "# add your [job], [optimizer], [checkpoint] and dataset settings.\n\n",
              c->num_device, c->num_device, c->num_device >= gpn ? gpn : c->num_device,
              c->num_device >= gpn && c->num_device % gpn == 0 ? c->num_device / gpn : 1);
    const char *flavor = NULL, *name = launch_torchtitan_model_of(&c->model, &flavor);
    lw_printf(b, "[model]\nname = \"%s\"\nflavor = \"%s\"\n", name ? name : "llama3",
              flavor ? flavor : "?");
    /* FP8: torchao's Float8Linear (tensorwise) or MX (mxfp8), the LM head left in bf16 as
     * the plan has it (model/fp8.h) */
    bool mx = c->cluster.fp8_recipe == FP8_MXFP8;
    if (c->cluster.fp8_recipe != FP8_NONE)
        lw_printf(b, "converters = [\"quantize.linear.%s\"]\n\n[quantize.linear.%s]\n"
                     "recipe_name = \"%s\"\nfilter_fqns = [\"output\"]\n%s",
                  mx ? "mx" : "float8", mx ? "mx" : "float8", mx ? "mxfp8_cublas" : "tensorwise",
                  c->cluster.fp8_param_gather && !mx ? "enable_fsdp_float8_all_gather = true\n"
                                                     : "");
    lw_printf(b, "\n");
    int global = config_global_batch(c);
    /* torchtitan's local batch is a dp rank's: with pp, its micro-batches run through one
     * pipeline step; without, it is the micro-batch and the rest is accumulated */
    int local = pp > 1 ? global / dp : c->micro_batch_size;
    lw_printf(b, "[training]\nlocal_batch_size = %d\nglobal_batch_size = %d\nseq_len = %d\n\n",
              local, global, c->model.seq_length);
    lw_printf(b, "[parallelism]\ndata_parallel_replicate_degree = %d\n"
                 "data_parallel_shard_degree = %d\ntensor_parallel_degree = %d\n"
                 "pipeline_parallel_degree = %d\ncontext_parallel_degree = %d\n",
              config_zero_stage(c) >= 1 ? config_dp_replicate(c) : dp,
              config_zero_stage(c) >= 1 ? config_dp_shard(c) : 1, tp, pp, config_cp(c));
    if (config_cp(c) > 1) /* launch_expressible: p2p or all_gather */
        lw_printf(b, "context_parallel_rotate_method = \"%s\"\n",
                  c->cluster.cp_comm_type == CP_COMM_ALL_GATHER ? "allgather" : "alltoall");
    if (c->cluster.reshard_after_forward != FSDP_RESHARD_DEFAULT)
        lw_printf(b, "fsdp_reshard_after_forward = \"%s\"\n",
                  config_fsdp_reshard_name(c->cluster.reshard_after_forward));
    if (moe_enabled(&c->model)) /* torchtitan's expert degrees (issue 38) */
        lw_printf(b, "expert_parallel_degree = %d\nexpert_tensor_parallel_degree = %d\n",
                  config_ep(c), config_etp(c));
    if (pp > 1) {
        const char *sched = launch_torchtitan_schedule_name(c->scheme);
        lw_printf(b, "pipeline_parallel_schedule = \"%s\"\n",
                  sched ? sched : "PipelineScheduleSingle");
        if (sched == NULL && o && o->csv_name)
            lw_printf(b, "pipeline_parallel_schedule_csv = \"%s\"\n", o->csv_name);
        lw_printf(b, "pipeline_parallel_microbatch_size = %d\n", c->micro_batch_size);
        if (config_scheme_uses_chunks(c->scheme) && c->chunks != 2)
            lw_printf(b, "pipeline_parallel_layers_per_stage = %d\n",
                      c->model.num_layers / (pp * c->chunks));
    }
    const struct launch_ac *ac = o ? o->ac : NULL;
    /* Megatron's selective (the core attention) is no torchtitan option: its selective without
     * one is every 2nd block */
    bool core_attn = o && o->recompute == LAUNCH_RECOMPUTE_SELECTIVE && ac &&
                     ac->method == LAUNCH_RC_METHOD_NONE && c->recompute == RECOMPUTE_SELECTIVE;
    if (core_attn)
        lw_printf(b, "\n# recompute selective (Megatron-LM's core attention): no torchtitan option");
    lw_printf(b, "\n[activation_checkpoint]\nmode = \"%s\"\n",
              o && o->recompute == LAUNCH_RECOMPUTE_FULL                     ? "full"
              : !core_attn && o && o->recompute == LAUNCH_RECOMPUTE_SELECTIVE ? "selective"
                                                                             : "none");
    if (o && o->recompute == LAUNCH_RECOMPUTE_SELECTIVE && ac && ac->method == LAUNCH_RC_PER_OP)
        lw_printf(b, "selective_ac_option = \"op\"\n");
    else if (o && o->recompute == LAUNCH_RECOMPUTE_SELECTIVE && ac &&
             ac->method == LAUNCH_RC_EVERY_NTH && ac->num_layers > 0)
        lw_printf(b, "selective_ac_option = \"%d\"\n", ac->num_layers);
}

int launch_write(enum launch_kind k, const struct config *c, const struct launch_write_opts *o,
                 char **out, struct mt_err *e)
{
    *out = NULL;
    TRY(launch_expressible(k, c, NULL, e));
    if (launch_needs_csv(k, c) && (o == NULL || o->csv_name == NULL))
        return err_set(e, MT_EINVAL,
                       "torchtitan takes %s only as a schedule CSV: the TOML needs one beside "
                       "it (give an output file)",
                       config_scheme_name(c->scheme));
    /* no recompute from the plan: the config's policy (model/ops_recompute.c), as the
     * launch's settings it reads back as (launch_apply_recompute) */
    struct launch_write_opts eff = o ? *o : (struct launch_write_opts){0};
    struct launch_ac cac = {0};
    if (eff.recompute == LAUNCH_RECOMPUTE_NONE && c->recompute != RECOMPUTE_NONE) {
        cac.granularity = c->recompute == RECOMPUTE_FULL ? LAUNCH_RECOMPUTE_FULL
                                                         : LAUNCH_RECOMPUTE_SELECTIVE;
        cac.method = c->recompute == RECOMPUTE_FULL ? LAUNCH_RC_UNIFORM
                     : c->recompute == RECOMPUTE_OP ? LAUNCH_RC_PER_OP
                                                    : LAUNCH_RC_METHOD_NONE;
        cac.num_layers = c->recompute == RECOMPUTE_FULL ? 1 : 0;
        eff.recompute = cac.granularity;
        eff.ac = &cac;
    }
    struct lw_buf b = {0};
    if (k == LAUNCH_MEGATRON)
        lw_megatron(&b, c, &eff);
    else
        lw_torchtitan(&b, c, &eff);
    *out = b.s;
    return MT_OK;
}
