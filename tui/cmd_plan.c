/* tui/cmd_plan.c: the plan flags shared by every command that makes a plan. The CONFIG
 * argument may be a config, a Hugging Face config.json, or a saved plan; flags given on the
 * command line override the file, in the order given. */
#include <config.h>
#include "tui/cmd.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/config.h"
#include "model/fp8.h"
#include "model/framework.h"
#include "model/presets.h"
#include "model/profile.h"
#include "model/scheme_registry.h"
#include "model/stage_split.h"
#include "sim/plan/footprint.h"
#include "sim/plan/plan.h"
#include "sim/schemes/scheme.h"
#include "sim/tune/tune.h"
#include "sim/plan/validate.h"
#include "traces/formats.h"
#include "util/err.h"
#include "util/str.h"

/* --help: what CONFIG is, before the plan flags. */
static const char cmd_plan_config_help[] =
    "  CONFIG                   a config JSON, a Hugging Face config.json, a plan JSON,\n"
    "                           torch's schedule CSV (*.csv; its model and costs from the\n"
    "                           flags), or a launch: a Megatron-LM script or a torchtitan\n"
    "                           TOML (mario-tui import-args) (default: GPT3-1.6B on 8 x\n"
    "                           A100-40G, V, global batch 128)\n";

/* The plan flags' table: the parser (tui/cmd_options.c) records them in order, and
 * cmd_plan_apply applies them once the CONFIG file is read. */
const struct cmd_option cmd_plan_options[] = {
    {.name = "model", .arg = "NAME", .type = CMD_PLAN, .value = CMD_PLAN_MODEL,
     .heading = cmd_plan_config_help,
     .help = "model preset: GPT3-1.6B GPT3-13B LLaMA2-3B LLaMA2-13B tiny tiny-llama tiny-moe "
             "GPT-3-13B GPT-3-175B NeMo-GPT3-5B NeMo-GPT3-20B "
             "LLaMA-2-7B LLaMA-2-13B LLaMA-2-70B Llama-3.1-8B Llama-3.1-70B "
             "Llama-3.1-405B DeepSeek-V3 DeepSeek-V2-Lite Qwen3-30B-A3B Qwen3-235B-A22B "
             "Mixtral-8x7B Mixtral-8x22B\n"
             "(the first four: the paper's Table 4 shapes; mario-tui models)"},
    {.name = "scheme", .arg = "S", .type = CMD_PLAN, .value = CMD_PLAN_SCHEME,
     .help_write = scheme_registry_help}, /* the scheme records' names, by family */
    {.name = "devices", .arg = "D", .type = CMD_PLAN, .value = CMD_PLAN_DEVICES,
     .help = "GPUs: tp x cp x pp x dp (Megatron's count)"},
    {.name = "pp", .arg = "P", .type = CMD_PLAN, .value = CMD_PLAN_PP,
     .help = "pipeline depth: the GPUs become P x tp x cp x dp (with\n"
             "--devices: they must agree)"},
    {.name = "dp", .arg = "N", .type = CMD_PLAN, .value = CMD_PLAN_DP,
     .help = "data-parallel degree (default 1)"},
    {.name = "tp", .arg = "T", .type = CMD_PLAN, .value = CMD_PLAN_TP,
     .help = "tensor-parallel degree: GPUs of one stage, dividing or a\n"
             "multiple of cluster.gpus_per_node (default 1)"},
    {.name = "cp", .arg = "N", .type = CMD_PLAN, .value = CMD_PLAN_CP,
     .help = "context-parallel degree: each sample's tokens split over N\n"
             "GPUs (Megatron's --context-parallel-size; default 1)"},
    {.name = "cp-comm-type", .arg = "MODE", .type = CMD_PLAN, .value = CMD_PLAN_CP_COMM,
     .help = "how CP ranks exchange K/V: p2p (a ring, overlapped; the\n"
             "default) | all_gather (Llama 3's) | a2a (Ulysses) | a2a+p2p"},
    {.name = "zero-stage", .arg = "N", .type = CMD_PLAN, .value = CMD_PLAN_ZERO_STAGE,
     .help = "what dp shards (ZeRO): 0 nothing (gradients all-reduced), 1\n"
             "optimizer state (= --distributed-optimizer), 2 + gradients,\n"
             "3 + parameters (FSDP); docs/fsdp.md"},
    {.name = "fsdp", .type = CMD_PLAN, .value = CMD_PLAN_FSDP,
     .help = "FSDP (= --zero-stage 3): parameters all-gathered per layer,\n"
             "gradients reduce-scattered (torchtitan's default)"},
    {.name = "dp-shard", .arg = "N", .type = CMD_PLAN, .value = CMD_PLAN_DP_SHARD,
     .help = "shard over groups of N of the dp replicas, replicated over\n"
             "dp / N (HSDP; torchtitan's data_parallel_shard_degree)"},
    {.name = "fsdp-reshard-after-forward", .arg = "P", .type = CMD_PLAN,
     .value = CMD_PLAN_FSDP_RESHARD,
     .help = "FSDP frees a layer's gathered parameters after its forward:\n"
             "default (yes unless pp > 1, torchtitan's) | always | never"},
    {.name = "recompute", .arg = "MODE", .type = CMD_PLAN, .value = CMD_PLAN_RECOMPUTE,
     .help = "activations recomputed inside each block: none (default) |\n"
             "selective (Megatron's: the core attention) | op (torchtitan's\n"
             "per-op selective AC) | full (each block's forward again)"},
    {.name = "microbatches", .arg = "N", .type = CMD_PLAN, .value = CMD_PLAN_MICROBATCHES,
     .help = "micro-batches per iteration (overrides the global batch)"},
    {.name = "micro-batch-size", .arg = "B", .type = CMD_PLAN, .value = CMD_PLAN_MBS,
     .help = "samples per micro-batch"},
    {.name = "global-batch", .arg = "G", .type = CMD_PLAN, .value = CMD_PLAN_GLOBAL_BATCH,
     .help = "samples per iteration"},
    {.name = "seq-length", .arg = "S", .type = CMD_PLAN, .value = CMD_PLAN_SEQ_LENGTH,
     .help = "tokens per sample (Megatron-LM's --seq-length); at most the\n"
             "model's max_position_embeddings (default: the config's; a\n"
             "Hugging Face config's training length, see docs/commands.md)"},
    {.name = "chunks", .arg = "V", .type = CMD_PLAN, .value = CMD_PLAN_CHUNKS,
     .help = "chunks per device for W and ZB-W (default 2)"},
    {.name = "memory", .arg = "SIZE", .type = CMD_PLAN, .value = CMD_PLAN_MEMORY,
     .help = "memory cap per GPU, e.g. 40G; 0 = no cap (in M_theta under\n"
             "--unit-costs: 1.05); wins over --device in either order"},
    {.name = "reserve", .arg = "SIZE", .type = CMD_PLAN, .value = CMD_PLAN_RESERVE,
     .help = "kept free on each GPU for the CUDA context and allocator,\n"
             "off the cap (default 1G; 0 for the paper's presets)"},
    {.name = "device", .arg = "NAME", .type = CMD_PLAN, .value = CMD_PLAN_DEVICE,
     .help = "device preset: A100-40G A100-80G H100-80G H100-96G-500W H200 H800 B200 GB200 MI300X\n"
             "(their figures and sources: mario-tui models)"},
    {.name = "framework", .arg = "NAME", .type = CMD_PLAN, .value = CMD_PLAN_FRAMEWORK,
     .help = "the training stack priced: megatron-deepspeed-2021 (the paper's\n"
             "presets' default) | megatron-core (Transformer Engine; the\n"
             "default otherwise) | torchtitan"},
    {.name = "tp-comm-overlap", .type = CMD_PLAN, .value = CMD_PLAN_TP_COMM_OVERLAP,
     .help = "TP collectives overlap their GEMMs (Megatron-LM's\n"
             "--tp-comm-overlap; off by default)"},
    {.name = "overlap-grad-reduce", .type = CMD_PLAN, .value = CMD_PLAN_OVERLAP_GRAD_REDUCE,
     .help = "the DP gradient reduce overlaps the last backwards\n"
             "(Megatron-LM's --overlap-grad-reduce; off by default)"},
    {.name = "overlap-param-gather", .type = CMD_PLAN, .value = CMD_PLAN_OVERLAP_PARAM_GATHER,
     .help = "the distributed optimizer's parameter all-gather overlaps the\n"
             "first forwards (Megatron-LM's --overlap-param-gather; off by\n"
             "default)"},
    {.name = "host-gbps", .arg = "GBPS", .type = CMD_PLAN, .value = CMD_PLAN_HOST_GBPS,
     .help = "a GPU's link to host memory, GB/s each way, for offload (OF/RL;\n"
             "default the device's: 25 A100 PCIe Gen4, 50 H100/H200 Gen5)"},
    {.name = "host-memory", .arg = "SIZE", .type = CMD_PLAN, .value = CMD_PLAN_HOST_MEMORY,
     .help = "host memory per node offloaded activations may take, shared\n"
             "by its GPUs (M_theta per device under --unit-costs); 0 = no cap"},
    {.name = "attention", .arg = "K", .type = CMD_PLAN, .value = CMD_PLAN_ATTENTION,
     .help = "flash (the default: no s x s scores kept) | eager (the\n"
             "paper's presets' default)"},
    {.name = "sequence-parallel", .type = CMD_PLAN, .value = CMD_PLAN_SEQ_PARALLEL,
     .help = "sequence parallelism: every activation split over tp"},
    {.name = "distributed-optimizer", .type = CMD_PLAN, .value = CMD_PLAN_DIST_OPT,
     .help = "fp32 master weights and Adam state sharded over dp\n"
             "(6 + 12/dp bytes a parameter)"},
    {.name = "fp8", .arg = "RECIPE", .type = CMD_PLAN, .value = CMD_PLAN_FP8,
     .help = "the linear layers' GEMMs in FP8 (Megatron's --fp8-recipe): delayed |\n"
             "tensorwise (current scaling) | blockwise (1x128 / 128x128) |\n"
             "mxfp8 (Blackwell only) | none (bf16, the default); docs/fp8.md"},
    {.name = "fp8-format", .arg = "F", .type = CMD_PLAN, .value = CMD_PLAN_FP8_FORMAT,
     .help = "hybrid (E4M3 forward, E5M2 gradients; the default) | e4m3:\n"
             "the same bytes and rate, carried for the launch scripts"},
    {.name = "fp8-param-gather", .type = CMD_PLAN, .value = CMD_PLAN_FP8_PARAM_GATHER,
     .help = "the FP8 weights kept in FP8 only (no bf16 copy) and\n"
             "all-gathered in FP8 by the distributed optimizer"},
    {.name = "cross-entropy-loss-fusion", .type = CMD_PLAN, .value = CMD_PLAN_CE_FUSION,
     .help = "the fused vocabulary-parallel cross-entropy: no fp32 logits\n"
             "kept (default for Megatron-core models)"},
    {.name = "no-cross-entropy-loss-fusion", .type = CMD_PLAN, .value = CMD_PLAN_NO_CE_FUSION,
     .help = "the unfused one: keeps the fp32 softmax, 4sbV/t bytes"},
    {.name = "accumulate-allreduce-grads-in-fp32", .type = CMD_PLAN,
     .value = CMD_PLAN_GRAD_FP32,
     .help = "reduce gradients over dp in fp32, 4 bytes a parameter (the\n"
             "default except for the paper's presets)"},
    {.name = "grad-reduce-in-bf16", .type = CMD_PLAN, .value = CMD_PLAN_GRAD_BF16,
     .help = "reduce gradients in 16 bits, 2 bytes a parameter"},
    {.name = "make-vocab-size-divisible-by", .arg = "N", .type = CMD_PLAN,
     .value = CMD_PLAN_VOCAB_DIV,
     .help = "pad the vocabulary to a multiple of N x tp (default 128; 1\n"
             "for the paper's presets: none)"},
    /* the stages' layers (model/stage_split.h): Megatron-LM's flags, torchtitan's weights */
    {.name = "pipeline-model-parallel-layout", .arg = "STR", .type = CMD_PLAN,
     .value = CMD_PLAN_PP_LAYOUT,
     .help = "Megatron's layout: each stage's layers, e.g. \"Et*3|(t*4|)*6,t*3L\"\n"
             "(E embedding, t layer, L loss, | between stages, *n repeats;\n"
             "pp x chunks stages in virtual-pipeline order)"},
    {.name = "decoder-first-pipeline-num-layers", .arg = "N", .type = CMD_PLAN,
     .value = CMD_PLAN_FIRST_LAYERS,
     .help = "layers of the first pipeline rank (Megatron's); the rest split\n"
             "evenly over the middle ranks"},
    {.name = "decoder-last-pipeline-num-layers", .arg = "N", .type = CMD_PLAN,
     .value = CMD_PLAN_LAST_LAYERS, .help = "layers of the last pipeline rank (Megatron's)"},
    {.name = "account-for-embedding-in-pipeline-split", .type = CMD_PLAN,
     .value = CMD_PLAN_ACCOUNT_EMB,
     .help = "the embedding counts as a layer: the first stage holds one\n"
             "layer less (Megatron's)"},
    {.name = "account-for-loss-in-pipeline-split", .type = CMD_PLAN,
     .value = CMD_PLAN_ACCOUNT_LOSS,
     .help = "the loss counts as a layer: the last stage holds one layer\n"
             "less (Megatron's)"},
    {.name = "pipeline-parallel-first-stage-less-layers", .arg = "N", .type = CMD_PLAN,
     .value = CMD_PLAN_FIRST_LESS,
     .help = "torchtitan's: the embedding weighs N layers in the split\n"
             "(given either, the other defaults to 1, as in torchtitan)"},
    {.name = "pipeline-parallel-last-stage-less-layers", .arg = "N", .type = CMD_PLAN,
     .value = CMD_PLAN_LAST_LESS, .help = "torchtitan's: the head weighs N layers in the split"},
    {.name = "ep", .arg = "E", .type = CMD_PLAN, .value = CMD_PLAN_EP,
     .help = "expert-parallel degree (Megatron's --expert-model-parallel-size):\n"
             "the routed experts split over E ranks; E divides the experts and\n"
             "E x etp the GPUs of a stage (tp x cp x dp); default 1 (tune:\n"
             "searched over the divisors of the experts, --max-ep caps it)"},
    {.name = "etp", .arg = "T", .type = CMD_PLAN, .value = CMD_PLAN_ETP,
     .help = "expert tensor-parallel degree (--expert-tensor-parallel-size):\n"
             "each expert's width split over T; default tp, as Megatron's\n"
             "(tune: searched over 1 and the divisors of tp)"},
    {.name = "moe-routing-skew", .arg = "X", .type = CMD_PLAN, .value = CMD_PLAN_MOE_SKEW,
     .help = "tokens of the busiest EP rank over the mean (>= 1; default 1.2)"},
    {.name = "overlap-moe-expert-parallel-comm", .type = CMD_PLAN, .value = CMD_PLAN_OVERLAP_A2A,
     .help = "Megatron's flag: interleaved 1F1B (W) runs each steady-state\n"
             "forward with the backward after it as one pair, each hiding the\n"
             "other's expert all-to-alls (needs ep > 1; DualPipe and DualPipeV\n"
             "always pair theirs)"},
    {.name = "unit-costs", .arg = "F,B,RC[,W[,O[,A]]]", .type = CMD_PLAN,
     .value = CMD_PLAN_UNIT_COSTS,
     .help = "unit costs: times in t, memory in units of M_theta; B is the\n"
             "whole backward, W its weight-gradient part (default B/2), O the\n"
             "time to move one M_theta to or from host memory (default 1), A\n"
             "the expert all-to-alls inside F and inside B - W (default 0)"},
    {.name = "blocking-send", .type = CMD_PLAN, .value = CMD_PLAN_BLOCKING,
     .help = "rendezvous p2p, Megatron's synchronous batches: a send waits\nfor its receive; the sends and receives between two computes\nare posted together (1F1B, Chimera, GPipe, ZB-H1)"},
    {.name = "iterations", .arg = "K", .type = CMD_PLAN, .value = CMD_PLAN_ITERATIONS,
     .help = "iterations one plan spans (Async, PipeDream; default 1)"},
    {.name = "update-interval", .arg = "U", .type = CMD_PLAN, .value = CMD_PLAN_UPDATE_INTERVAL,
     .help = "backwards per optimizer step of a stage (Async, PipeDream;\ndefault 1)"},
    {.name = "calibration", .arg = "FILE", .type = CMD_PLAN, .value = CMD_PLAN_CALIBRATION,
     .help = "measured costs from `mario-tui profile` in place of the\n"
             "analytic ones (a plan keeps its instructions)"},
    {.name = "cores", .arg = "N", .type = CMD_PLAN, .value = CMD_PLAN_CORES,
     .help = "cores the ranks share (more ranks than N share them; default:\n"
             "a CPU calibration's, else a core each)"},
    {0},
};

int cmd_plan_record(struct cmd_plan *cp, int opt, const char *arg, struct mt_err *e)
{
    if (cp->n_over == CMD_PLAN_MAX_OVERRIDES)
        return err_set(e, MT_EINVAL, "more than %d plan flags", CMD_PLAN_MAX_OVERRIDES);
    cp->over[cp->n_over].opt = opt;
    cp->over[cp->n_over].arg = arg;
    cp->n_over++;
    return MT_OK;
}

bool cmd_plan_given(const struct cmd_plan *cp, int opt)
{
    for (int i = 0; i < cp->n_over; i++)
        if (cp->over[i].opt == opt)
            return true;
    return false;
}

static int cmd_plan_int(const char *flag, const char *arg, long lo, long hi, int *out,
                        struct mt_err *e)
{
    long v;
    if (cmd_options_int(arg, lo, hi, &v, e) != MT_OK)
        return err_wrap(e, "--%s", flag);
    *out = (int)v;
    return MT_OK;
}

static int cmd_plan_apply(struct config *c, int opt, const char *arg, struct mt_err *e)
{
    switch (opt) {
    case CMD_PLAN_MODEL:
        if (presets_model(arg, &c->model, e) != MT_OK)
            return err_wrap(e, "--model");
        return MT_OK;
    case CMD_PLAN_SCHEME:
        if (config_scheme_parse(arg, &c->scheme, e) != MT_OK)
            return err_wrap(e, "--scheme");
        return MT_OK;
    case CMD_PLAN_DEVICES:
        return cmd_plan_int("devices", arg, 1, CONFIG_MAX_DEVICES, &c->num_device, e);
    case CMD_PLAN_DP:
        return cmd_plan_int("dp", arg, 1, CONFIG_MAX_DEVICES, &c->cluster.dp, e);
    case CMD_PLAN_TP:
        return cmd_plan_int("tp", arg, 1, CONFIG_MAX_DEVICES, &c->cluster.tp, e);
    case CMD_PLAN_CP:
        return cmd_plan_int("cp", arg, 1, CONFIG_MAX_DEVICES, &c->cluster.cp, e);
    case CMD_PLAN_CP_COMM:
        if (config_cp_comm_parse(arg, &c->cluster.cp_comm_type, e) != MT_OK)
            return err_wrap(e, "--cp-comm-type");
        return MT_OK;
    case CMD_PLAN_ZERO_STAGE:
        return cmd_plan_int("zero-stage", arg, 0, 3, &c->cluster.zero_stage, e);
    case CMD_PLAN_FSDP:
        c->cluster.zero_stage = 3;
        return MT_OK;
    case CMD_PLAN_DP_SHARD:
        return cmd_plan_int("dp-shard", arg, 1, CONFIG_MAX_DEVICES, &c->cluster.dp_shard, e);
    case CMD_PLAN_FSDP_RESHARD:
        if (config_fsdp_reshard_parse(arg, &c->cluster.reshard_after_forward, e) != MT_OK)
            return err_wrap(e, "--fsdp-reshard-after-forward");
        return MT_OK;
    case CMD_PLAN_RECOMPUTE:
        if (config_recompute_parse(arg, &c->recompute, e) != MT_OK)
            return err_wrap(e, "--recompute");
        return MT_OK;
    case CMD_PLAN_MICROBATCHES:
        return cmd_plan_int("microbatches", arg, 1, CONFIG_MAX_MICROBATCHES, &c->num_microbatches,
                            e);
    case CMD_PLAN_MBS:
        TRY(cmd_plan_int("micro-batch-size", arg, 1, 1 << 20, &c->micro_batch_size, e));
        return MT_OK;
    case CMD_PLAN_GLOBAL_BATCH:
        TRY(cmd_plan_int("global-batch", arg, 1, 1 << 30, &c->global_batch_size, e));
        c->num_microbatches = 0;
        return MT_OK;
    case CMD_PLAN_CHUNKS:
        return cmd_plan_int("chunks", arg, 1, CONFIG_MAX_CHUNKS, &c->chunks, e);
    case CMD_PLAN_MEMORY:
        if (str_parse_bytes(arg, &c->memory_per_device, e) != MT_OK)
            return err_wrap(e, "--memory");
        c->given |= CONFIG_GIVEN_MEMORY;
        return MT_OK;
    case CMD_PLAN_DEVICE: {
        struct device_spec dev;
        if (presets_device(arg, &dev, e) != MT_OK)
            return err_wrap(e, "--device");
        config_set_device(c, &dev);
        return MT_OK;
    }
    case CMD_PLAN_FRAMEWORK:
        if (framework_parse(arg, &c->cluster.framework, e) != MT_OK)
            return err_wrap(e, "--framework");
        return MT_OK;
    case CMD_PLAN_TP_COMM_OVERLAP:
        c->cluster.tp_comm_overlap = true;
        return MT_OK;
    case CMD_PLAN_OVERLAP_GRAD_REDUCE:
        c->cluster.overlap_grad_reduce = true;
        return MT_OK;
    case CMD_PLAN_OVERLAP_PARAM_GATHER:
        c->cluster.overlap_param_gather = true;
        return MT_OK;
    case CMD_PLAN_HOST_GBPS:
        if (str_parse_double(arg, &c->cluster.host_gbps, e) != MT_OK || !(c->cluster.host_gbps > 0))
            return err_set(e, MT_EINVAL, "--host-gbps: '%s' is not a bandwidth > 0 in GB/s", arg);
        c->given |= CONFIG_GIVEN_HOST_GBPS;
        return MT_OK;
    case CMD_PLAN_HOST_MEMORY:
        if (str_parse_bytes(arg, &c->cluster.host_mem_per_node, e) != MT_OK)
            return err_wrap(e, "--host-memory");
        return MT_OK;
    case CMD_PLAN_RESERVE:
        if (str_parse_bytes(arg, &c->reserve, e) != MT_OK)
            return err_wrap(e, "--reserve");
        return MT_OK;
    case CMD_PLAN_ATTENTION:
        if (config_attention_parse(arg, &c->attention, e) != MT_OK)
            return err_wrap(e, "--attention");
        return MT_OK;
    case CMD_PLAN_SEQ_PARALLEL:
        c->sequence_parallel = true;
        return MT_OK;
    case CMD_PLAN_DIST_OPT:
        c->distributed_optimizer = true;
        return MT_OK;
    case CMD_PLAN_FP8:
        if (fp8_recipe_parse(arg, &c->cluster.fp8_recipe, e) != MT_OK)
            return err_wrap(e, "--fp8");
        return MT_OK;
    case CMD_PLAN_FP8_FORMAT:
        if (fp8_format_parse(arg, &c->cluster.fp8_format, e) != MT_OK)
            return err_wrap(e, "--fp8-format");
        return MT_OK;
    case CMD_PLAN_FP8_PARAM_GATHER:
        c->cluster.fp8_param_gather = true;
        return MT_OK;
    case CMD_PLAN_CE_FUSION:
    case CMD_PLAN_NO_CE_FUSION:
        c->ce_fusion = opt == CMD_PLAN_CE_FUSION ? TRI_YES : TRI_NO;
        return MT_OK;
    case CMD_PLAN_GRAD_FP32:
    case CMD_PLAN_GRAD_BF16:
        c->grad_reduce_fp32 = opt == CMD_PLAN_GRAD_FP32 ? TRI_YES : TRI_NO;
        return MT_OK;
    case CMD_PLAN_VOCAB_DIV:
        return cmd_plan_int("make-vocab-size-divisible-by", arg, 1, 1 << 20,
                            &c->vocab_divisible_by, e);
    case CMD_PLAN_PP_LAYOUT: {
        struct pp_layout l;
        if (strlen(arg) >= sizeof c->pipeline_layout)
            return err_set(e, MT_EINVAL, "--pipeline-model-parallel-layout: over %zu characters",
                           sizeof c->pipeline_layout - 1);
        if (pp_layout_parse(arg, &l, e) != MT_OK)
            return err_wrap(e, "--pipeline-model-parallel-layout");
        pp_layout_fini(&l);
        snprintf(c->pipeline_layout, sizeof c->pipeline_layout, "%s", arg);
        return MT_OK;
    }
    case CMD_PLAN_FIRST_LAYERS: /* Megatron: "must be larger than 0" */
        return cmd_plan_int("decoder-first-pipeline-num-layers", arg, 1, CONFIG_MAX_LAYERS,
                            &c->decoder_first_pipeline_num_layers, e);
    case CMD_PLAN_LAST_LAYERS:
        return cmd_plan_int("decoder-last-pipeline-num-layers", arg, 1, CONFIG_MAX_LAYERS,
                            &c->decoder_last_pipeline_num_layers, e);
    case CMD_PLAN_ACCOUNT_EMB:
        c->account_for_embedding_in_pipeline_split = true;
        return MT_OK;
    case CMD_PLAN_ACCOUNT_LOSS:
        c->account_for_loss_in_pipeline_split = true;
        return MT_OK;
    case CMD_PLAN_FIRST_LESS:
    case CMD_PLAN_LAST_LESS: {
        bool first = opt == CMD_PLAN_FIRST_LESS;
        int n = 0;
        TRY(cmd_plan_int(first ? "pipeline-parallel-first-stage-less-layers"
                               : "pipeline-parallel-last-stage-less-layers",
                         arg, 0, CONFIG_MAX_LAYERS, &n, e));
        stage_split_less_layers_given(c);
        *(first ? &c->first_stage_less_layers : &c->last_stage_less_layers) = n;
        return MT_OK;
    }
    case CMD_PLAN_EP:
        return cmd_plan_int("ep", arg, 1, CONFIG_MAX_DEVICES, &c->cluster.ep, e);
    case CMD_PLAN_ETP:
        return cmd_plan_int("etp", arg, 1, CONFIG_MAX_DEVICES, &c->cluster.etp, e);
    case CMD_PLAN_MOE_SKEW:
        if (str_parse_double(arg, &c->model.moe.routing_skew, NULL) != MT_OK ||
            !(c->model.moe.routing_skew >= 1))
            return err_set(e, MT_EINVAL, "--moe-routing-skew: '%s' is not a number >= 1", arg);
        return MT_OK;
    case CMD_PLAN_UNIT_COSTS:
        if (config_unit_costs_parse(arg, &c->unit, e) != MT_OK)
            return err_wrap(e, "--unit-costs");
        return MT_OK;
    case CMD_PLAN_BLOCKING:
        c->blocking_send = true;
        return MT_OK;
    case CMD_PLAN_OVERLAP_A2A:
        c->overlap_moe_a2a = true;
        return MT_OK;
    case CMD_PLAN_ITERATIONS:
        return cmd_plan_int("iterations", arg, 1, CONFIG_MAX_ITERATIONS, &c->iterations, e);
    case CMD_PLAN_UPDATE_INTERVAL:
        return cmd_plan_int("update-interval", arg, 1, CONFIG_MAX_MICROBATCHES,
                            &c->update_interval, e);
    case CMD_PLAN_CALIBRATION:
        if (profile_load(arg, &c->profile, e) != MT_OK)
            return err_wrap(e, "--calibration");
        return MT_OK;
    case CMD_PLAN_CORES:
        return cmd_plan_int("cores", arg, 1, 1 << 20, &c->profile.cores, e);
    case CMD_PLAN_SEQ_LENGTH: {
        int s = 0, old = c->model.seq_length;
        TRY(cmd_plan_int("seq-length", arg, 1, INT_MAX, &s, e));
        /* a shorter length keeps the model's positions (GPT's learned table); a longer one is
         * checked against max_position_embeddings where the model has one (seqlen_validate) */
        if (c->seqlen.max_positions == 0 && s < old)
            c->seqlen.max_positions = old;
        c->seqlen.kind = SEQLEN_FIXED;
        c->seqlen.n = 0;
        c->model.seq_length = s;
        return MT_OK;
    }
    case CMD_PLAN_PP: {
        int pp = 0;
        TRY(cmd_plan_int("pp", arg, 1, CONFIG_MAX_DEVICES, &pp, e));
        long gpus = (long)pp * c->cluster.dp * c->cluster.tp;
        if (gpus > CONFIG_MAX_DEVICES)
            return err_set(e, MT_EINVAL, "--pp: %d x dp %d x tp %d = %ld GPUs, over the limit of %d",
                           pp, c->cluster.dp, c->cluster.tp, gpus, CONFIG_MAX_DEVICES);
        config_set_pp(c, pp);
        return MT_OK;
    }
    default:
        return err_set(e, MT_EINVAL, "unknown plan flag");
    }
}

/* Every flag in order, --cores after them (it sets what a --calibration file would), --pp last
 * (the GPUs are pp x dp x tp of the final dp and tp); --pp and --devices must agree. */
static int cmd_plan_apply_all(const struct cmd_plan *cp, struct config *out, struct mt_err *e)
{
    for (int last = 0; last < 3; last++)
        for (int i = 0; i < cp->n_over; i++) {
            int opt = cp->over[i].opt;
            if ((opt == CMD_PLAN_CORES ? 1 : opt == CMD_PLAN_PP ? 2 : 0) == last)
                TRY(cmd_plan_apply(out, opt, cp->over[i].arg, e));
        }
    if (cmd_plan_given(cp, CMD_PLAN_PP) && cmd_plan_given(cp, CMD_PLAN_DEVICES)) {
        int devices = 0;
        for (int i = 0; i < cp->n_over; i++) /* the last --devices given */
            if (cp->over[i].opt == CMD_PLAN_DEVICES)
                devices = atoi(cp->over[i].arg);
        if (devices != out->num_device)
            return err_set(e, MT_EINVAL,
                           "--pp %d x dp %d x tp %d x cp %d = %d GPUs, but --devices %d: give one, "
                           "or make them agree", config_pp(out), out->cluster.dp, out->cluster.tp,
                           config_cp(out), out->num_device, devices);
    }
    return MT_OK;
}

int cmd_plan_apply_flags(const struct cmd_plan *cp, struct config *c, struct mt_err *e)
{
    return cmd_plan_apply_all(cp, c, e);
}

/* Under unit costs memory is in M_θ: --memory 2 is a cap of 2 M_θ per device. Without one
 * there is no cap (the device's bytes, the default, mean nothing in M_θ). */
static void cmd_plan_unit_cap(const struct cmd_plan *cp, struct config *c)
{
    if (c->unit.enabled && !cmd_plan_given(cp, CMD_PLAN_MEMORY) &&
        c->memory_per_device == c->cluster.device.mem_bytes)
        c->memory_per_device = 0;
}

/* Reads CONFIG and applies the flags; validation is left to the caller. */
static int cmd_plan_read(const struct cmd_plan *cp, struct config *out, struct plan **loaded,
                         struct mt_err *e)
{
    *loaded = NULL;
    const struct file_format *f = cp->path != NULL ? format_of(cp->path) : NULL;
    if (f != NULL && f->id == FORMAT_TORCH_CSV) {
        /* torch's schedule CSV holds only the order: the model, cluster and costs come from
         * the flags, the geometry from the file */
        config_default(out);
        TRY(cmd_plan_apply_all(cp, out, e));
        TRY(plan_load_torch_csv_file(cp->path, out, loaded, e));
        *out = *plan_config(*loaded);
        cmd_plan_unit_cap(cp, out);
        return MT_OK;
    }
    if (cp->path == NULL) {
        config_default(out);
    } else if (f->id == FORMAT_PLAN) {
        TRY(plan_load(cp->path, loaded, e));
        *out = *plan_config(*loaded);
    } else if (f->id == FORMAT_LAUNCH_MEGATRON || f->id == FORMAT_LAUNCH_TORCHTITAN) {
        TRY(cmd_launch_read(cp->path, cp, out, e));
    } else {
        TRY(config_load_file(cp->path, out, e));
    }
    int rc = cmd_plan_apply_all(cp, out, e);
    if (rc == MT_OK && cmd_plan_given(cp, CMD_PLAN_MEMORY)) /* name the flag, not the key */
        rc = config_check_cap(out, "--memory", e);
    if (rc != MT_OK) {
        plan_free(*loaded);
        *loaded = NULL;
        return rc;
    }
    cmd_plan_unit_cap(cp, out);
    if (cp->n_over > 0)
        snprintf(out->source + strnlen(out->source, sizeof out->source - 12),
                 sizeof out->source - strnlen(out->source, sizeof out->source - 12), " + flags");
    return MT_OK;
}

int cmd_plan_config_raw(const struct cmd_plan *cp, struct config *out, struct mt_err *e)
{
    struct plan *loaded = NULL;
    TRY(cmd_plan_read(cp, out, &loaded, e));
    plan_free(loaded);
    /* What the tuner keeps of the config: model, cluster, batch, devices, cap. The scheme
     * geometry is the tuner's to choose, so it is checked on a one-device pipeline. */
    struct config check = *out;
    check.scheme = SCHEME_V;
    check.num_device = config_cp(&check); /* one pipeline device: one CP group (tp 1) */
    check.cluster.dp = 1;
    check.cluster.tp = 1; /* the tuner chooses tp too; a one-device pipeline has one GPU */
    /* the expert groups fold tp x cp x dp, which the tuner chooses: each candidate checks them
     * (ep dividing the experts needs no geometry: kept, so it is said here) */
    if (out->model.moe.num_experts > 0 && out->cluster.ep > 0 &&
        out->model.moe.num_experts % out->cluster.ep == 0)
        check.cluster.ep = 0;
    check.cluster.etp = 0;
    check.micro_batch_size = 1;
    check.num_microbatches = 0;
    check.iterations = 1; /* the tuner names an async scheme or several iterations itself */
    check.update_interval = 1;
    /* the stages' split is checked here without a geometry, then with each candidate's */
    int rc = stage_split_check_spec(out, e);
    check.pipeline_layout[0] = '\0';
    check.decoder_first_pipeline_num_layers = check.decoder_last_pipeline_num_layers = 0;
    check.account_for_embedding_in_pipeline_split = false;
    check.account_for_loss_in_pipeline_split = check.stage_less_layers = false;
    if (rc == MT_OK)
        rc = config_validate(&check, e);
    if (rc == MT_OK && (out->num_device < 1 || out->num_device > CONFIG_MAX_DEVICES))
        rc = err_set(e, MT_EINVAL, "num_device: must be in [1, %d] (got %d)", CONFIG_MAX_DEVICES,
                     out->num_device);
    return rc != MT_OK && cp->path ? err_wrap(e, "%s", cp->path) : rc;
}

/* "pipeline_scheme": "Auto": the tuner's best candidate becomes the config; *ckpt says
 * whether it runs with Mario's checkpointing. */
static int cmd_plan_resolve_auto(struct config *c, bool *ckpt, struct mt_err *e)
{
    struct tune_opts o;
    tune_opts_default(&o);
    struct tune_result r;
    TRY(tune_grid_search(c, &o, &r, e));
    if (r.best < 0) {
        tune_result_fini(&r);
        return err_set(e, MT_EINFEASIBLE,
                       "pipeline_scheme: Auto: no configuration fits the memory cap (see "
                       "mario-tui tune)");
    }
    struct tune_candidate best = r.cand[r.best];
    tune_result_fini(&r);
    tune_candidate_config(c, &best, c);
    *ckpt = best.ckpt;
    return MT_OK;
}

int cmd_plan_config(const struct cmd_plan *cp, struct config *out, struct plan **plan_out,
                    struct mt_err *e)
{
    struct plan *loaded = NULL;
    if (plan_out)
        *plan_out = NULL;
    TRY(cmd_plan_read(cp, out, &loaded, e));
    int rc = config_validate(out, e);
    if (rc != MT_OK) {
        plan_free(loaded);
        return cp->path ? err_wrap(e, "%s (with flags)", cp->path) : rc;
    }
    /* --calibration and --cores change the costs, not the instructions: a loaded plan is kept,
     * with the calibrated config (and under unit costs the cap of cmd_plan_unit_cap) */
    int changing = 0;
    bool csv = cp->path && format_of(cp->path)->id == FORMAT_TORCH_CSV;
    for (int i = 0; i < cp->n_over && !csv; i++)
        changing += cp->over[i].opt != CMD_PLAN_CALIBRATION && cp->over[i].opt != CMD_PLAN_CORES;
    if (plan_out && loaded && changing == 0 &&
        (cp->n_over > 0 || out->memory_per_device != plan_config(loaded)->memory_per_device)) {
        struct plan *q = plan_with_config(loaded, out);
        plan_free(loaded);
        loaded = q;
    }
    if (plan_out && changing == 0)
        *plan_out = loaded;
    else
        plan_free(loaded);
    return MT_OK;
}

int cmd_plan_finish(const struct cmd_plan *cp, struct config *c, struct plan *loaded,
                    struct plan **out, struct mt_err *e)
{
    struct plan *p = loaded;
    *out = NULL;
    bool ckpt = false;
    if (p == NULL && c->scheme == SCHEME_AUTO) {
        int rc = cmd_plan_resolve_auto(c, &ckpt, e);
        if (rc != MT_OK)
            return cp->path ? err_wrap(e, "%s", cp->path) : rc;
    }
    /* before anything is built: a plan this machine cannot hold is refused with the figure */
    int fit = p != NULL ? footprint_check(plan_geom(p), (enum footprint_use)cp->use, 1, e)
                        : footprint_check_config(c, (enum footprint_use)cp->use, 1, e);
    if (fit != MT_OK) {
        plan_free(p);
        return fit;
    }
    if (p == NULL) {
        TRY(scheme_build(c, &p, e));
        if (ckpt) { /* Auto chose Mario's checkpointing */
            struct plan *q = NULL;
            int rc = tune_optimize_mario(p, NULL, &q, e);
            plan_free(p);
            TRY(rc);
            p = q;
        }
    }
    /* a loaded plan that cannot run is bad input (exit 2); a built one, the tool's failure */
    int rc = loaded ? validate_plan_input(p, e) : validate_plan(p, e);
    if (rc != MT_OK) {
        plan_free(p);
        return cp->path ? err_wrap(e, "%s", cp->path) : rc;
    }
    *out = p;
    return MT_OK;
}

int cmd_plan_build(const struct cmd_plan *cp, struct plan **out, struct mt_err *e)
{
    struct config c;
    struct plan *loaded = NULL;
    *out = NULL;
    TRY(cmd_plan_config(cp, &c, &loaded, e));
    return cmd_plan_finish(cp, &c, loaded, out, e);
}

int cmd_fail(const char *cmd, const struct mt_err *e)
{
    fprintf(stderr, "mario-tui %s: %s\n", cmd, e->msg);
    return err_exit_status(e->code);
}

int cmd_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "mario-tui %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry 'mario-tui %s --help'.\n", cmd);
    return 2;
}
