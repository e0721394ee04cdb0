/* model/config.c: the built-in default and the checks that every config passes before a
 * plan is made from it. Checks name the JSON path of the field at fault so that the
 * loader can put "file:line:col: " in front of them. */
#include <config.h>
#include "model/config.h"
#include "model/fp8.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "model/cost.h"
#include "model/presets.h"
#include "model/scheme_registry.h"
#include "model/moe.h"
#include "model/seqlen.h"
#include "model/stage_split.h"
#include "util/err.h"
#include "util/str.h"

void config_default(struct config *c)
{
    memset(c, 0, sizeof *c);
    snprintf(c->source, sizeof c->source, "(built-in default)");
    c->scheme = SCHEME_V;
    c->global_batch_size = 128;
    c->micro_batch_size = 1;
    c->num_device = 8;
    c->num_microbatches = 0;
    c->chunks = 2;
    c->iterations = 1;
    c->update_interval = 1;
    presets_model("GPT3-1.6B", &c->model, NULL);
    c->cluster.gpus_per_node = CONFIG_GPUS_PER_NODE;
    c->reserve = -1;
    struct device_spec dev;
    presets_device("A100-40G", &dev, NULL);
    config_set_device(c, &dev);
    c->cluster.p2p_gbps = 50;
    c->cluster.p2p_lat_us = 10;
    c->cluster.ar_gbps = 25;
    c->cluster.dp_efficiency = 0.95;
    c->cluster.eff_half_tokens = 512;
    c->cluster.dp = 1;
    c->cluster.tp = 1;
    c->cluster.cp = 1;
    c->unit.f = 1;
    c->unit.b = 2;
    c->unit.rc = 1;
    c->unit.o = 1;
}

int config_ffn_default(enum model_arch arch, int h, int *out)
{
    long long f;
    if (arch == ARCH_LLAMA2)
        f = 256 * ((8LL * h + 767) / 768); /* 256 * ceil((8h/3) / 256), SwiGLU */
    else
        f = 4LL * h;
    if (f > INT_MAX)
        return -1;
    *out = (int)f;
    return 0;
}

int config_kv_heads(const struct model_spec *m)
{
    return m->num_key_value_heads > 0 ? m->num_key_value_heads : m->num_attention_heads;
}

enum mlp_kind config_mlp(const struct model_spec *m)
{
    if (m->mlp != MLP_DEFAULT)
        return m->mlp;
    return m->arch == ARCH_LLAMA2 ? MLP_SWIGLU : MLP_GELU;
}

enum norm_kind config_norm(const struct model_spec *m)
{
    if (m->norm != NORM_DEFAULT)
        return m->norm;
    return m->arch == ARCH_LLAMA2 ? NORM_RMSNORM : NORM_LAYERNORM;
}

enum bias_kind config_bias(const struct model_spec *m)
{
    if (m->bias != BIAS_DEFAULT)
        return m->bias;
    return m->arch == ARCH_LLAMA2 ? BIAS_NONE : BIAS_ALL;
}

int config_head_dim(const struct model_spec *m)
{
    if (m->head_dim > 0)
        return m->head_dim;
    return m->num_attention_heads > 0 ? m->hidden_size / m->num_attention_heads : 0;
}

bool config_tied_embeddings(const struct model_spec *m)
{
    if (m->tie_embeddings != TRI_DEFAULT)
        return m->tie_embeddings == TRI_YES;
    return m->arch != ARCH_LLAMA2;
}

enum framework_id config_framework(const struct config *c)
{
    if (c->cluster.framework != FRAMEWORK_DEFAULT)
        return c->cluster.framework;
    return c->model.paper_stack ? FRAMEWORK_MEGATRON_DS_2021 : FRAMEWORK_MEGATRON_CORE;
}

bool config_ce_fusion(const struct config *c)
{
    if (c->ce_fusion != TRI_DEFAULT)
        return c->ce_fusion == TRI_YES;
    return config_framework(c) == FRAMEWORK_MEGATRON_CORE;
}

bool config_grad_reduce_fp32(const struct config *c)
{
    if (c->grad_reduce_fp32 != TRI_DEFAULT)
        return c->grad_reduce_fp32 == TRI_YES;
    return config_framework(c) != FRAMEWORK_MEGATRON_DS_2021;
}

int config_vocab_divisible_by(const struct config *c)
{
    if (c->vocab_divisible_by > 0)
        return c->vocab_divisible_by;
    return config_framework(c) == FRAMEWORK_MEGATRON_DS_2021 ? 1 : 128;
}

int config_pp(const struct config *c)
{
    long group = (long)c->cluster.dp * c->cluster.tp * config_cp(c);
    return group > 0 ? (int)(c->num_device / group) : 0;
}

void config_set_pp(struct config *c, int pp)
{
    int dp = c->cluster.dp > 0 ? c->cluster.dp : 1, tp = c->cluster.tp > 0 ? c->cluster.tp : 1;
    c->num_device = pp * dp * tp * config_cp(c);
}

enum attention_kind config_attention(const struct config *c)
{
    if (c->attention != ATTN_DEFAULT)
        return c->attention;
    return c->model.paper_stack ? ATTN_EAGER : ATTN_FLASH;
}

int config_attention_parse(const char *s, enum attention_kind *out, struct mt_err *e)
{
    if (strcasecmp(s, "flash") == 0)
        *out = ATTN_FLASH;
    else if (strcasecmp(s, "eager") == 0)
        *out = ATTN_EAGER;
    else
        return err_set(e, MT_EINVAL, "unknown attention '%s' (expected flash or eager)", s);
    return MT_OK;
}

const char *config_attention_name(enum attention_kind a)
{
    return a == ATTN_EAGER ? "eager" : a == ATTN_FLASH ? "flash" : "default";
}

double config_bytes_per_param(const struct config *c)
{
    /* Megatron shards the optimizer over the data-parallel group with its context-parallel
     * ranks (get_data_parallel_group(with_context_parallel=True)): the weights are the same
     * on every CP rank */
    return config_bytes_per_param_over(c, c->cluster.dp * config_cp(c));
}

double config_bytes_per_param_over(const struct config *c, int dp)
{
    if (c->bytes_per_param > 0)
        return c->bytes_per_param;
    /* ZeRO §5 (Rajbhandari et al. 2020), per parameter: w the 16-bit weight, g the gradient
     * (fp16 on the paper's stack, Megatron's fp32 main gradient otherwise), K = 12 the fp32
     * master weight and Adam's m and v; stage 0 keeps w + g + K, 1 w + g + K/N, 2 w + (g + K)/N,
     * 3 (w + g + K)/N over the shard group N (the paper's Figure 1: 2 + 2 + K). torchtitan's
     * FSDP2 keeps the sharded parameter in fp32, the master itself (w = 0; the bf16 copy is
     * the unsharded one model/ops_build_fsdp.c counts while it lives). */
    int z = config_zero_stage(c);
    double w = 2, g = c->model.paper_stack ? 2 : 4, K = 12;
    if (z == 3 && config_framework(c) == FRAMEWORK_TORCHTITAN)
        w = 0;
    /* the shard group: cluster.dp_shard of the dp (x cp) replicas, else all of them */
    double n = dp;
    if (c->cluster.dp_shard > 0 && c->cluster.dp > 0)
        n = (double)dp * c->cluster.dp_shard / c->cluster.dp;
    if (z == 0 || n <= 1)
        return 2 + g + K; /* nothing to shard over */
    switch (z) {
    case 1: return w + g + K / n;
    case 2: return w + (g + K) / n;
    default: return (w + g + K) / n;
    }
}

double config_reserve(const struct config *c)
{
    if (c->unit.enabled)
        return 0;
    if (c->reserve >= 0)
        return c->reserve;
    return c->model.paper_stack ? 0 : CONFIG_RESERVE_DEFAULT;
}

double config_mem_cap(const struct config *c)
{
    if (!(c->memory_per_device > 0))
        return 0;
    return c->memory_per_device - config_reserve(c);
}

/* The slip check of one figure that becomes a cap (a cap given, or a device's memory that the
 * cap defaults to). */
static int check_cap_bytes(const struct config *c, double cap, const char *what, struct mt_err *e)
{
    double layer = cost_layer_act_bytes(c);
    /* only what reads as a slip: under a MiB (no GPU has so little), a number meant in GiB */
    if (c->unit.enabled || !(cap > 0) || cap >= layer || cap >= 1048576.0)
        return MT_OK;
    char have[32], need[32];
    str_format_bytes(cap, have, sizeof have);
    str_format_bytes(layer, need, sizeof need);
    return err_set(e, MT_EINVAL,
                   "%s: %s is below one layer's activations (%s): did you mean %.15gG?", what, have,
                   need, cap);
}

void config_degrees_text(const struct config *c, int pp, char *buf, size_t n)
{
    int len = snprintf(buf, n, "pp %d x dp %d", pp, c->cluster.dp);
    if (c->cluster.tp > 1 && len >= 0 && (size_t)len < n)
        len += snprintf(buf + len, n - (size_t)len, " x tp %d", c->cluster.tp);
    if (config_cp(c) > 1 && len >= 0 && (size_t)len < n) /* with how its ranks pass K/V */
        len += snprintf(buf + len, n - (size_t)len, " x cp %d (%s)", config_cp(c),
                        config_cp_comm_name(c->cluster.cp_comm_type));
    if (c->cluster.ep > 1 && len >= 0 && (size_t)len < n) /* the experts' fold of the same GPUs */
        snprintf(buf + len, n - (size_t)len, " (ep %d)", c->cluster.ep);
}

void config_cap_text(const struct config *c, char *buf, size_t n)
{
    double cap = config_mem_cap(c), reserve = config_reserve(c);
    if (!(cap > 0)) {
        snprintf(buf, n, "none");
        return;
    }
    if (c->unit.enabled) {
        snprintf(buf, n, "%.4g M_\xce\xb8", cap);
        return;
    }
    char t[32], given[32], r[32];
    str_format_bytes(cap, t, sizeof t);
    if (!(reserve > 0)) {
        snprintf(buf, n, "%s", t);
        return;
    }
    str_format_bytes(c->memory_per_device, given, sizeof given);
    str_format_bytes(reserve, r, sizeof r);
    snprintf(buf, n, "%s (%s - %s reserve)", t, given, r);
}

int config_check_cap(const struct config *c, const char *what, struct mt_err *e)
{
    return check_cap_bytes(c, c->memory_per_device, what, e);
}

/* Every way a cap is given passes the same check, so that nothing loads that writes a config
 * the tool refuses (issue 41 item 9: "cluster": {"memory": 5} became a 5 B cap that loaded,
 * and the memory_per_device it wrote was refused): the cap itself, named by the key it came
 * from, and the device's memory it defaults to. */
static int check_caps(const struct config *c, struct mt_err *e)
{
    bool given = c->given & CONFIG_GIVEN_MEMORY;
    TRY(check_cap_bytes(c, c->memory_per_device, given ? "memory_per_device" : "cluster.memory",
                        e));
    if (c->cluster.device.mem_bytes != c->memory_per_device)
        TRY(check_cap_bytes(c, c->cluster.device.mem_bytes, "cluster.memory", e));
    return MT_OK;
}

void config_set_device(struct config *c, const struct device_spec *d)
{
    double op_us = c->cluster.device.op_overhead_us, layer_us = c->cluster.device.layer_overhead_us;
    c->cluster.device = *d;
    if (c->given & CONFIG_GIVEN_OP_OVERHEAD)
        c->cluster.device.op_overhead_us = op_us;
    if (c->given & CONFIG_GIVEN_LAYER_OVERHEAD)
        c->cluster.device.layer_overhead_us = layer_us;
    if (!(c->given & CONFIG_GIVEN_GPUS_PER_NODE))
        c->cluster.gpus_per_node = d->gpus_per_node;
    if (!(c->given & CONFIG_GIVEN_MEMORY))
        c->memory_per_device = d->mem_bytes;
    if (!(c->given & CONFIG_GIVEN_TP_GBPS))
        c->cluster.tp_gbps = d->nvlink_gbps;
    if (!(c->given & CONFIG_GIVEN_HOST_GBPS))
        c->cluster.host_gbps = d->host_gbps;
}

double config_host_cap(const struct config *c)
{
    double cap = c->cluster.host_mem_per_node;
    if (!(cap > 0))
        return 0;
    return c->unit.enabled ? cap : cap / c->cluster.gpus_per_node;
}

int config_microbatches(const struct config *c)
{
    if (c->num_microbatches > 0)
        return c->num_microbatches;
    long per = (long)c->micro_batch_size * c->cluster.dp;
    return per > 0 ? (int)(c->global_batch_size / per) : 0;
}

int config_global_batch(const struct config *c)
{
    if (c->num_microbatches <= 0)
        return c->global_batch_size;
    long g = (long)c->num_microbatches * c->micro_batch_size * c->cluster.dp;
    return g > 0 && g <= 1L << 30 ? (int)g : c->global_batch_size;
}

/* The scheme functions read the scheme's record (model/scheme_registry.c). */
const char *config_scheme_name(enum scheme_id s)
{
    const struct scheme_record *r = scheme_registry_get(s);
    return r != NULL ? r->name : "?";
}

bool config_scheme_async(enum scheme_id s)
{
    const struct scheme_record *r = scheme_registry_get(s);
    return r != NULL && r->async;
}

bool config_scheme_split(enum scheme_id s)
{
    const struct scheme_record *r = scheme_registry_get(s);
    return r != NULL && r->split;
}

bool config_scheme_uses_chunks(enum scheme_id s)
{
    const struct scheme_record *r = scheme_registry_get(s);
    return r != NULL && r->chunks == SCHEME_CHUNKS_CONFIG;
}

int config_stages_per_device(const struct config *c)
{
    const struct scheme_record *r = scheme_registry_get(c->scheme);
    if (r == NULL)
        return 1;
    return r->chunks == SCHEME_CHUNKS_CONFIG ? c->chunks : r->chunks == SCHEME_CHUNKS_TWO ? 2 : 1;
}

int config_scheme_parse(const char *s, enum scheme_id *out, struct mt_err *e)
{
    return scheme_registry_parse(s, out, e);
}

const char *config_arch_name(enum model_arch a)
{
    switch (a) {
    case ARCH_GPT3: return "GPT3";
    case ARCH_LLAMA2: return "LLaMA2";
    default: return "custom";
    }
}

#define NEED(cond, ...)                                                                            \
    do {                                                                                           \
        if (!(cond))                                                                               \
            return err_set(e, MT_EINVAL, __VA_ARGS__);                                             \
    } while (0)

static int config_validate_model(const struct model_spec *m, struct mt_err *e)
{
    NEED(m->hidden_size > 0, "model.hidden_size: must be > 0 (got %d)", m->hidden_size);
    NEED(m->num_layers > 0 && m->num_layers <= CONFIG_MAX_LAYERS,
         "model.num_layers: must be in [1, %d] (got %d)", CONFIG_MAX_LAYERS, m->num_layers);
    NEED(m->num_attention_heads > 0, "model.num_attention_heads: must be > 0 (got %d)",
         m->num_attention_heads);
    NEED(m->hidden_size % m->num_attention_heads == 0,
         "model.num_attention_heads: %d does not divide hidden_size %d", m->num_attention_heads,
         m->hidden_size);
    NEED(m->num_key_value_heads >= 0 && m->num_key_value_heads <= m->num_attention_heads &&
             m->num_attention_heads % config_kv_heads(m) == 0,
         "model.num_key_value_heads: %d does not divide num_attention_heads %d",
         m->num_key_value_heads, m->num_attention_heads);
    NEED(m->seq_length > 0, "model.seq_length: must be > 0 (got %d)", m->seq_length);
    NEED(m->vocab_size > 0, "model.vocab_size: must be > 0 (got %d)", m->vocab_size);
    NEED(m->ffn_hidden_size > 0, "model.ffn_hidden_size: must be > 0 (got %d)", m->ffn_hidden_size);
    return MT_OK;
}

static int config_validate_cluster(const struct cluster_spec *k, unsigned given, struct mt_err *e)
{
    const struct device_spec *d = &k->device;
    NEED(isfinite(d->peak_flops) && d->peak_flops > 0,
         "cluster.peak_flops: must be > 0 (got %g)", d->peak_flops);
    NEED(isfinite(d->efficiency) && d->efficiency > 0 && d->efficiency <= 1,
         "cluster.efficiency: must be in (0, 1] (got %g)", d->efficiency);
    NEED(isfinite(d->mem_bytes) && d->mem_bytes > 0, "cluster.memory: must be > 0");
    NEED(isfinite(d->hbm_gbps) && d->hbm_gbps > 0, "cluster.hbm_gbps: must be > 0 (got %g)",
         d->hbm_gbps);
    NEED(isfinite(k->p2p_gbps) && k->p2p_gbps > 0, "cluster.p2p_gbps: must be > 0 (got %g)",
         k->p2p_gbps);
    NEED(isfinite(k->p2p_lat_us) && k->p2p_lat_us >= 0,
         "cluster.p2p_latency_us: must be >= 0 (got %g)", k->p2p_lat_us);
    NEED(isfinite(k->ar_gbps) && k->ar_gbps > 0, "cluster.allreduce_gbps: must be > 0 (got %g)",
         k->ar_gbps);
    NEED(isfinite(k->dp_efficiency) && k->dp_efficiency > 0 && k->dp_efficiency <= 1,
         "cluster.dp_efficiency: must be in (0, 1] (got %g)", k->dp_efficiency);
    NEED(isfinite(k->eff_half_tokens) && k->eff_half_tokens >= 0,
         "cluster.efficiency_half_tokens: must be >= 0 (got %g)", k->eff_half_tokens);
    NEED(isfinite(d->op_overhead_us) && d->op_overhead_us >= 0,
         "cluster.op_overhead_us: must be >= 0 (got %g)", d->op_overhead_us);
    NEED(isfinite(d->layer_overhead_us) && d->layer_overhead_us >= 0,
         "cluster.layer_overhead_us: must be >= 0 (got %g)", d->layer_overhead_us);
    NEED(!(given & CONFIG_GIVEN_COMPUTE_FACTOR) ||
             (isfinite(k->compute_factor) && k->compute_factor > 0 && k->compute_factor <= 1.5),
         "cluster.compute_factor: must be in (0, 1.5] (got %g)", k->compute_factor);
    NEED(!(given & CONFIG_GIVEN_KERNEL_OVERHEAD) ||
             (isfinite(k->kernel_overhead_us) && k->kernel_overhead_us >= 0 &&
              k->kernel_overhead_us <= 1e6),
         "cluster.kernel_overhead_us: must be in [0, 1e6] (got %g)", k->kernel_overhead_us);
    NEED(isfinite(d->fp8_peak_flops) && d->fp8_peak_flops >= 0,
         "cluster.fp8_peak_flops: must be >= 0 (got %g)", d->fp8_peak_flops);
    NEED(isfinite(d->net_gbps) && d->net_gbps > 0, "cluster.network_gbps: must be > 0 (got %g)",
         d->net_gbps);
    NEED(k->dp >= 1, "cluster.dp: must be >= 1 (got %d)", k->dp);
    NEED(k->tp >= 1, "cluster.tp: must be >= 1 (got %d)", k->tp);
    NEED(k->gpus_per_node >= 1, "cluster.gpus_per_node: must be >= 1 (got %d)",
         k->gpus_per_node);
    NEED(isfinite(k->tp_gbps) && k->tp_gbps > 0, "cluster.tp_gbps: must be > 0 (got %g)",
         k->tp_gbps);
    NEED(isfinite(k->host_gbps) && k->host_gbps > 0, "cluster.host_gbps: must be > 0 (got %g)",
         k->host_gbps);
    NEED(isfinite(k->host_mem_per_node) && k->host_mem_per_node >= 0,
         "cluster.host_memory_per_node: must be >= 0 (got %g)", k->host_mem_per_node);
    /* A TP group fills whole nodes or sits inside one: a group split unevenly over nodes would
     * put some of its ranks' traffic on the inter-node link and not the others'. */
    NEED(k->gpus_per_node % k->tp == 0 || k->tp % k->gpus_per_node == 0,
         "cluster.tp: %d neither divides nor is a multiple of gpus_per_node %d", k->tp,
         k->gpus_per_node);
    return MT_OK;
}

int config_validate(const struct config *c, struct mt_err *e)
{
    TRY(config_validate_model(&c->model, e));
    TRY(config_validate_cluster(&c->cluster, c->given, e));
    TRY(seqlen_validate(c, e)); /* model.seq_length's distribution (model/seqlen.h) */
    TRY(moe_validate(c, e));    /* experts, MLA and the expert groups (model/moe.h) */
    NEED(c->scheme < SCHEME__COUNT, "pipeline_scheme: unknown scheme");
    NEED(c->num_device >= 1 && c->num_device <= CONFIG_MAX_DEVICES,
         "num_device: must be in [1, %d] (got %d)", CONFIG_MAX_DEVICES, c->num_device);
    NEED(c->num_device % c->cluster.dp == 0, "cluster.dp: %d does not divide num_device %d",
         c->cluster.dp, c->num_device);
    NEED((c->num_device / c->cluster.dp) % c->cluster.tp == 0,
         "cluster.tp: %d does not divide num_device %d / dp %d = %d GPUs per replica",
         c->cluster.tp, c->num_device, c->cluster.dp, c->num_device / c->cluster.dp);
    TRY(config_validate_cp(c, e)); /* cp, cp_comm_type (model/config_parallel.c) */
    TRY(config_validate_fp8(c, e)); /* fp8_recipe and its device (model/fp8.c) */
    /* Megatron-LM refuses both pairs (megatron/training/arguments.py, validate_args): the
     * GEMM-pipelined TP collectives are sequence parallelism's all-gathers and reduce-scatters,
     * and the overlapped parameter all-gather is the distributed optimizer's */
    NEED(!c->cluster.tp_comm_overlap || c->sequence_parallel || c->cluster.tp == 1,
         "cluster.tp_comm_overlap: TP communication overlaps its GEMMs only with "
         "sequence_parallel (Megatron-LM's --tp-comm-overlap needs --sequence-parallel)");
    NEED(!c->cluster.overlap_param_gather || c->distributed_optimizer,
         "cluster.overlap_param_gather: the overlapped parameter all-gather is the distributed "
         "optimizer's (Megatron-LM's --overlap-param-gather needs --use-distributed-optimizer)");
    TRY(config_validate_zero(c, e)); /* zero_stage, dp_shard (model/config_zero.c) */
    TRY(config_validate_recompute(c, e)); /* model/ops_recompute.c */
    NEED(c->micro_batch_size >= 1, "micro_batch_size: must be >= 1 (got %d)",
         c->micro_batch_size);
    NEED(c->global_batch_size >= 1, "global_batch_size: must be >= 1 (got %d)",
         c->global_batch_size);
    NEED(c->num_microbatches >= 0 && c->num_microbatches <= CONFIG_MAX_MICROBATCHES,
         "num_microbatches: must be in [1, %d] (got %d)", CONFIG_MAX_MICROBATCHES,
         c->num_microbatches);
    if (c->num_microbatches == 0)
        NEED(c->global_batch_size % ((long)c->micro_batch_size * c->cluster.dp) == 0,
             "global_batch_size: %d is not a multiple of micro_batch_size %d x dp %d",
             c->global_batch_size, c->micro_batch_size, c->cluster.dp);
    int n = config_microbatches(c);
    if (c->num_microbatches == 0) /* derived: name the field it comes from */
        NEED(n >= 1 && n <= CONFIG_MAX_MICROBATCHES,
             "global_batch_size: %d / (micro_batch_size %d x dp %d) is %d micro-batches, over "
             "the limit of %d",
             c->global_batch_size, c->micro_batch_size, c->cluster.dp, n, CONFIG_MAX_MICROBATCHES);
    NEED(n >= 1 && n <= CONFIG_MAX_MICROBATCHES, "num_microbatches: must be in [1, %d] (got %d)",
         CONFIG_MAX_MICROBATCHES, n);
    NEED(c->attention <= ATTN_EAGER, "attention: unknown kind");
    NEED(isfinite(c->bytes_per_param) && c->bytes_per_param >= 0 && c->bytes_per_param <= 1024,
         "bytes_per_param: must be in (0, 1024] (got %g)", c->bytes_per_param);
    NEED(isfinite(c->memory_per_device) && c->memory_per_device >= 0,
         "memory_per_device: must be >= 0");
    TRY(check_caps(c, e));
    double gpu = c->memory_per_device > 0 ? c->memory_per_device : c->cluster.device.mem_bytes;
    NEED(isfinite(c->reserve) && (c->unit.enabled || config_reserve(c) < gpu),
         "reserve: %.4g GiB is not below the GPU's %.4g GiB (memory_per_device)",
         config_reserve(c) / 1073741824.0, gpu / 1073741824.0);
    if (c->unit.enabled)
        NEED(isfinite(c->unit.f) && isfinite(c->unit.b) && isfinite(c->unit.rc) &&
                 c->unit.f > 0 && c->unit.b > 0 && c->unit.rc >= 0,
             "unit_costs: F and B must be > 0 and RC >= 0 (got %g,%g,%g)", c->unit.f, c->unit.b,
             c->unit.rc);
    if (c->unit.enabled)
        NEED(isfinite(c->unit.w) && c->unit.w >= 0 && c->unit.w < c->unit.b,
             "unit_costs: W must be in [0, B) (B is the whole backward, B - W its input-gradient "
             "part; got W = %g, B = %g)", c->unit.w, c->unit.b);
    if (c->unit.enabled)
        NEED(isfinite(c->unit.o) && c->unit.o > 0,
             "unit_costs: O must be > 0, the time to move one M_theta over the host link (got %g)",
             c->unit.o);
    if (c->unit.enabled) /* the all-to-alls are inside F and inside B's input-gradient part */
        NEED(isfinite(c->unit.a) && c->unit.a >= 0 && c->unit.a < c->unit.f &&
                 c->unit.a <= c->unit.b - (c->unit.w > 0 ? c->unit.w : c->unit.b / 2),
             "unit_costs: A, the expert all-to-alls of a forward and of a backward, must be in "
             "[0, F) and at most B - W, the input-gradient part they sit in (got A = %g, F = %g, "
             "B = %g, W = %g)",
             c->unit.a, c->unit.f, c->unit.b, c->unit.w > 0 ? c->unit.w : c->unit.b / 2);
    /* Megatron-core asserts expert parallelism for it (arguments.py); the pairs are interleaved
     * 1F1B's (the tuner's Auto keeps the flag for the W candidates) */
    if (c->overlap_moe_a2a)
        NEED(c->scheme == SCHEME_W || c->scheme == SCHEME_AUTO,
             "overlap_moe_expert_parallel_comm: pairs interleaved 1F1B's (W) forwards and "
             "backwards; %s has no such pairs (DualPipe and DualPipeV always pair theirs)",
             config_scheme_name(c->scheme));
    if (c->overlap_moe_a2a)
        NEED(c->unit.enabled || c->cluster.ep > 1,
             "overlap_moe_expert_parallel_comm: hides the expert all-to-alls, and there are none "
             "at ep = %d (set cluster.ep > 1)",
             c->cluster.ep);

    NEED(c->iterations >= 1 && c->iterations <= CONFIG_MAX_ITERATIONS,
         "iterations: must be in [1, %d] (got %d)", CONFIG_MAX_ITERATIONS, c->iterations);
    NEED(c->update_interval >= 1 && c->update_interval <= CONFIG_MAX_MICROBATCHES,
         "update_interval: must be in [1, %d] (got %d)", CONFIG_MAX_MICROBATCHES,
         c->update_interval);
    if (!config_scheme_async(c->scheme)) {
        NEED(c->iterations == 1,
             "iterations: %s flushes the pipeline every iteration, so a plan holds one (got %d); "
             "several iterations need an asynchronous scheme (Async, PipeDream)",
             config_scheme_name(c->scheme), c->iterations);
        NEED(c->update_interval == 1,
             "update_interval: %s steps the optimizer once per iteration (got %d); an update "
             "every U micro-batches needs an asynchronous scheme (Async, PipeDream)",
             config_scheme_name(c->scheme), c->update_interval);
    } else {
        NEED((long)n * c->iterations <= CONFIG_MAX_MICROBATCHES,
             "iterations: %d iterations x %d micro-batches is over the limit of %d micro-batches "
             "in one plan", c->iterations, n, CONFIG_MAX_MICROBATCHES);
    }
    int pp = config_pp(c);
    TRY(scheme_registry_check(c, pp, n, e)); /* the scheme's own limits, chunks among them */
    int stages = pp * config_stages_per_device(c);
    if (stage_split_is_custom(c)) /* the layers' split (model/stage_split.h); Auto: the tuner's
                                   * candidates are checked with their own geometry */
        return c->scheme == SCHEME_AUTO ? stage_split_check_spec(c, e)
                                        : stage_split_check(c, stages, e);
    NEED(stages <= c->model.num_layers, "model.num_layers: %d stages but only %d layers", stages,
         c->model.num_layers);
    return MT_OK;
}
