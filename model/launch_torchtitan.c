/* model/launch_torchtitan.c: a torchtitan job TOML read as a config (model/launch.h), and
 * torchtitan's names (llama3 flavors, schedule classes) for the writer. The TOML subset job
 * files use is read by model/launch_toml.c, with line:column errors.
 * The keys are torchtitan's JobConfig (torchtitan/config/job_config.py): [model] name/flavor,
 * [training] local_batch_size/global_batch_size/seq_len, [parallelism] degrees and schedule,
 * [activation_checkpoint] mode; the rest is skipped on purpose or said (docs/launchers.md). */
#include <config.h>
#include "model/launch.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "model/fp8.h"
#include "model/launch_internal.h"
#include "model/launch_toml.h"
#include "model/moe.h"
#include "model/presets.h"
#include "util/err.h"
#include "util/xalloc.h"

/* ---- torchtitan's names -------------------------------------------------------------------- */

/* torch.distributed.pipelining's schedule classes (get_schedule_class) our schemes are. */
static const struct {
    enum scheme_id id;
    const char *name;
} tt_schedules[] = {
    {SCHEME_V, "1F1B"},
    {SCHEME_GPIPE, "GPipe"},
    {SCHEME_W, "Interleaved1F1B"},
    {SCHEME_ZBW, "InterleavedZeroBubble"},
    {SCHEME_ZBV_TORCH, "ZBVZeroBubble"},
    {SCHEME_DUALPIPEV, "DualPipeV"},
};
#define TT_NSCHED (int)(sizeof tt_schedules / sizeof tt_schedules[0])

const char *launch_torchtitan_schedule_name(enum scheme_id s)
{
    for (int i = 0; i < TT_NSCHED; i++)
        if (tt_schedules[i].id == s)
            return tt_schedules[i].name;
    return NULL;
}

bool launch_torchtitan_schedule_parse(const char *s, enum scheme_id *out)
{
    if (strncasecmp(s, "Schedule", 8) == 0)
        s += 8;
    for (int i = 0; i < TT_NSCHED; i++)
        if (strcasecmp(s, tt_schedules[i].name) == 0) {
            *out = tt_schedules[i].id;
            return true;
        }
    return false;
}

/* torchtitan/models/llama3/__init__.py llama3_configs: 8B, 70B, 405B are Llama 3.1's shapes
 * (the FFN widths of compute_ffn_hidden_dim: 14336, 28672, 53248, the presets'); debugmodel:
 * dim 256, 6 layers, 16 heads, vocabulary 2048, FFN 768 (multiple_of 256). */
static const struct {
    const char *flavor;
    const char *preset;
} tt_flavors[] = {{"8B", "Llama-3.1-8B"}, {"70B", "Llama-3.1-70B"}, {"405B", "Llama-3.1-405B"}};

bool launch_torchtitan_flavor(const char *flavor, struct model_spec *out)
{
    size_t len = strcspn(flavor, "_"); /* 8B_flex, 8B_varlen: the same shape */
    for (size_t i = 0; i < sizeof tt_flavors / sizeof tt_flavors[0]; i++)
        if (strlen(tt_flavors[i].flavor) == len && strncmp(flavor, tt_flavors[i].flavor, len) == 0)
            return presets_model(tt_flavors[i].preset, out, NULL) == MT_OK;
    if (strncmp(flavor, "debugmodel", 10) == 0 && (flavor[10] == '\0' || flavor[10] == '_')) {
        *out = (struct model_spec){.name = "llama3-debugmodel", .arch = ARCH_LLAMA2,
                                   .hidden_size = 256, .num_layers = 6, .num_attention_heads = 16,
                                   .seq_length = 2048, .vocab_size = 2048,
                                   .ffn_hidden_size = 768};
        return true;
    }
    return false;
}

const char *launch_torchtitan_flavor_of(const struct model_spec *m)
{
    static const char *const names[] = {"8B", "70B", "405B", "debugmodel"};
    for (int i = 0; i < 4; i++) {
        struct model_spec f;
        if (!launch_torchtitan_flavor(names[i], &f))
            continue;
        if (f.arch == m->arch && f.hidden_size == m->hidden_size &&
            f.num_layers == m->num_layers && f.num_attention_heads == m->num_attention_heads &&
            f.ffn_hidden_size == m->ffn_hidden_size && config_kv_heads(&f) == config_kv_heads(m) &&
            f.vocab_size == m->vocab_size && config_mlp(&f) == config_mlp(m) &&
            config_norm(&f) == config_norm(m) && config_bias(&f) == config_bias(m) &&
            config_head_dim(&f) == config_head_dim(m) &&
            config_tied_embeddings(&f) == config_tied_embeddings(m) && f.qk_norm == m->qk_norm)
            return names[i];
    }
    return NULL;
}

/* ---- torchtitan's keys ---------------------------------------------------------------------- */

static struct tentry *tt_get(struct toml *m, const char *table, const char *key)
{
    for (int i = 0; i < m->nv; i++)
        if (strcmp(m->v[i].table, table) == 0 && strcmp(m->v[i].key, key) == 0) {
            m->v[i].used = true;
            return &m->v[i];
        }
    return NULL;
}

static int tt_fail(struct toml *m, const struct tentry *v, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int tt_fail(struct toml *m, const struct tentry *v, const char *fmt, ...)
{
    char what[700];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (v != NULL)
        return launch_fail(m->e, m->name, v->line, v->col, "%s.%s: %s", v->table, v->key, what);
    return launch_fail(m->e, m->name, 0, 0, "%s", what);
}

static int tt_int(struct toml *m, const char *table, const char *key, long lo, long hi, int dflt,
                  int *out, struct tentry **at)
{
    struct tentry *v = tt_get(m, table, key);
    if (at)
        *at = v;
    if (v == NULL) {
        *out = dflt;
        return MT_OK;
    }
    if (v->type != TV_INT)
        return tt_fail(m, v, "expected an integer");
    if (v->i < lo || v->i > hi)
        return tt_fail(m, v, "%ld is out of range [%ld, %ld]", v->i, lo, hi);
    *out = (int)v->i;
    return MT_OK;
}

static int tt_str(struct toml *m, const char *table, const char *key, const char **out,
                  struct tentry **at)
{
    struct tentry *v = tt_get(m, table, key);
    if (at)
        *at = v;
    *out = NULL;
    if (v == NULL)
        return MT_OK;
    if (v->type != TV_STRING)
        return tt_fail(m, v, "expected a string");
    *out = v->str;
    return MT_OK;
}

/* Keys that matter and are not modelled: said when set to other than their default. */
static void tt_warn_keys(struct toml *m, struct launch_notes *nt)
{
    static const struct {
        const char *table, *key, *why;
    } warn[] = {
        {"parallelism", "pipeline_parallel_split_points", "explicit stage splits: issue 39"},
        {"parallelism", "enable_async_tensor_parallel", "async TP"},
        {"training", "enable_cpu_offload", "FSDP CPU offload"},
        {"training", "mixed_precision_param", "parameter dtype (planned as bf16)"},
        {"parallelism", "pipeline_parallel_first_stage_less_layers", "uneven stages: issue 39"},
        {"parallelism", "pipeline_parallel_last_stage_less_layers", "uneven stages: issue 39"},
    };
    for (size_t i = 0; i < sizeof warn / sizeof warn[0]; i++) {
        struct tentry *v = tt_get(m, warn[i].table, warn[i].key);
        if (v == NULL)
            continue;
        bool dflt = (v->type == TV_BOOL && !v->b) || (v->type == TV_ARRAY && v->i == 0) ||
                    (v->type == TV_STRING &&
                     (strcmp(v->str, "default") == 0 || strcmp(v->str, "bfloat16") == 0));
        if (!dflt)
            launch_note(nt->unmodelled, sizeof nt->unmodelled, "%s.%s (%s)", warn[i].table,
                        warn[i].key, warn[i].why);
    }
}

/* Whether the comma-joined list has the item a or b */
static bool tt_list_has(const char *list, const char *a, const char *b)
{
    for (const char *p = list; p && *p;) {
        const char *end = strchr(p, ',');
        size_t k = end ? (size_t)(end - p) : strlen(p);
        if ((strlen(a) == k && strncmp(p, a, k) == 0) || (strlen(b) == k && strncmp(p, b, k) == 0))
            return true;
        p = end ? end + 1 : NULL;
    }
    return false;
}

/* torchtitan's FP8 (torchao's Float8Linear and MX): [model] converters names "float8" (to
 * 2025-08) or "quantize.linear.float8" (job_config.py QuantizedLinear), their table's
 * recipe_name (tensorwise when unset: torchtitan's Float8 converter; rowwise ones not modelled),
 * or "mx" / "quantize.linear.mx" (recipe_name mxfp8*). enable_fsdp_float8_all_gather gathers
 * the sharded weights in FP8: read as fp8_param_gather. torchtitan's examples filter the LM
 * head ("output") out, which the plan keeps in bf16 (model/fp8.h). */
static int tt_fp8(struct toml *m, struct config *c, struct launch_notes *nt)
{
    const char *conv = NULL;
    struct tentry *cv = tt_get(m, "model", "converters");
    if (cv != NULL && (cv->type == TV_STRING || cv->type == TV_ARRAY))
        conv = cv->str;
    bool f8 = tt_list_has(conv, "float8", "quantize.linear.float8");
    bool mx = tt_list_has(conv, "mx", "quantize.linear.mx");
    if (!f8 && !mx)
        return MT_OK;
    if (f8 && mx)
        return tt_fail(m, cv, "float8 and mx converters together: give one");
    const char *tb = f8 ? (tt_get(m, "quantize.linear.float8", "recipe_name") ||
                                   tt_get(m, "quantize.linear.float8", "filter_fqns")
                               ? "quantize.linear.float8"
                               : "float8")
                        : (tt_get(m, "quantize.linear.mx", "recipe_name") ||
                                   tt_get(m, "quantize.linear.mx", "filter_fqns")
                               ? "quantize.linear.mx"
                               : "mx");
    const char *rec = NULL;
    struct tentry *rv = NULL;
    TRY(tt_str(m, tb, "recipe_name", &rec, &rv));
    if (f8) {
        if (rec && strcmp(rec, "tensorwise") != 0)
            return tt_fail(m, rv,
                           "'%s': torchao's per-row float8 scaling is not modelled (tensorwise "
                           "is, and torchtitan's mx converter as mxfp8)",
                           rec);
        c->cluster.fp8_recipe = FP8_TENSORWISE;
    } else {
        if (rec && strncmp(rec, "mxfp8", 5) != 0)
            return tt_fail(m, rv, "'%s': only the mxfp8 MX recipes are modelled", rec);
        c->cluster.fp8_recipe = FP8_MXFP8;
    }
    struct tentry *ag = tt_get(m, tb, "enable_fsdp_float8_all_gather");
    if (ag != NULL && ag->type != TV_BOOL)
        return tt_fail(m, ag, "expected true or false");
    if (ag != NULL && ag->b) {
        if (config_zero_stage(c) >= 1) /* FSDP's shards (model/config_zero.c) */
            c->cluster.fp8_param_gather = true;
        else
            launch_note(nt->unmodelled, sizeof nt->unmodelled,
                        "%s.enable_fsdp_float8_all_gather without FSDP sharding", tb);
    }
    const char *fq = NULL;
    struct tentry *fv = tt_get(m, tb, "filter_fqns");
    if (fv != NULL && (fv->type == TV_STRING || fv->type == TV_ARRAY))
        fq = fv->str;
    if (f8 && !tt_list_has(fq, "output", "output"))
        launch_note(nt->unmodelled, sizeof nt->unmodelled,
                    "%s.filter_fqns without \"output\" (the LM head in float8: planned in bf16)",
                    tb);
    launch_fp8_device(c, nt);
    return MT_OK;
}

/* Tables skipped on purpose (torchtitan's JobConfig: the run, not the plan), and float8/mx
 * whose keys matter only with a converter (tt_fp8 reads those). */
static bool tt_skipped_table(const char *t)
{
    static const char *const skip[] = {
        "job",   "profiling", "metrics",    "optimizer",  "lr_scheduler",      "checkpoint",
        "comm",  "validation", "memory_estimation", "fault_tolerance", "experimental", "compile",
        "float8", "mx", "quantize", NULL};
    for (int i = 0; skip[i]; i++) {
        size_t k = strlen(skip[i]);
        if (strncmp(t, skip[i], k) == 0 && (t[k] == '\0' || t[k] == '.'))
            return true;
    }
    return false;
}

static const char *const tt_skipped_keys[] = {
    "model.tokenizer_path", "model.hf_assets_path", "model.print_after_conversion",
    "model.converters",
    "training.dataset", "training.dataset_path", "training.max_norm", "training.steps",
    "training.warmup_steps", "training.compile", "training.gc_freq", "training.gc_debug",
    "training.seed", "training.deterministic", "training.mixed_precision_reduce",
    "training.debug_moe_force_load_balance",
    "parallelism.disable_loss_parallel", "parallelism.enable_compiled_autograd",
    "activation_checkpoint.per_op_sac_force_recompute_mm_shapes_by_fqns",
    "activation_checkpoint.early_stop", "activation_checkpoint.memory_budget",
    "activation_checkpoint.visualize_memory_budget_pareto", NULL};

static void tt_unknown_keys(struct toml *m, struct launch_notes *nt)
{
    for (int i = 0; i < m->nv; i++) {
        const struct tentry *v = &m->v[i];
        if (v->used || v->key[0] == '\0' || tt_skipped_table(v->table))
            continue;
        char full[200];
        snprintf(full, sizeof full, "%s.%s", v->table, v->key);
        bool skipped = false;
        for (int k = 0; tt_skipped_keys[k] && !skipped; k++)
            skipped = strcmp(full, tt_skipped_keys[k]) == 0;
        if (!skipped)
            launch_note(nt->unknown, sizeof nt->unknown, "%s", full);
    }
}

static const struct {
    const char *name, *flavor, *preset;
} tt_moe_flavors[] = {{"deepseek_v3", "16B", "DeepSeek-V2-Lite"},
                      {"deepseek_v3", "671B", "DeepSeek-V3"},
                      {"qwen3", "30B-A3B", "Qwen3-30B-A3B"},
                      {"qwen3", "235B-A22B", "Qwen3-235B-A22B"}};

/* The same model as torchtitan builds it: the shape launch_torchtitan_flavor_of compares, the
 * experts and MLA (the MTP depth apart: torchtitan has none; the routing skew, capacity and
 * FP8 dispatch are the plan's, not the model's). */
static bool tt_same_moe(const struct model_spec *a, const struct model_spec *b)
{
    struct moe_spec x = a->moe, y = b->moe;
    x.mtp_layers = y.mtp_layers = 0;
    x.routing_skew = y.routing_skew = 0;
    x.capacity_factor = y.capacity_factor = 0;
    x.fp8_dispatch = y.fp8_dispatch = false;
    x.layer_freq = x.layer_freq > 1 ? x.layer_freq : 0;
    y.layer_freq = y.layer_freq > 1 ? y.layer_freq : 0;
    return a->arch == b->arch && a->hidden_size == b->hidden_size &&
           a->num_layers == b->num_layers && a->num_attention_heads == b->num_attention_heads &&
           a->ffn_hidden_size == b->ffn_hidden_size && config_kv_heads(a) == config_kv_heads(b) &&
           a->vocab_size == b->vocab_size && config_mlp(a) == config_mlp(b) &&
           config_norm(a) == config_norm(b) && config_bias(a) == config_bias(b) &&
           config_head_dim(a) == config_head_dim(b) &&
           config_tied_embeddings(a) == config_tied_embeddings(b) && a->qk_norm == b->qk_norm &&
           memcmp(&x, &y, sizeof x) == 0 && memcmp(&a->mla, &b->mla, sizeof a->mla) == 0;
}

const char *launch_torchtitan_model_of(const struct model_spec *m, const char **flavor)
{
    if ((*flavor = launch_torchtitan_flavor_of(m)) != NULL)
        return "llama3";
    for (size_t i = 0; i < sizeof tt_moe_flavors / sizeof tt_moe_flavors[0]; i++) {
        struct model_spec p;
        if (presets_model(tt_moe_flavors[i].preset, &p, NULL) == MT_OK && tt_same_moe(m, &p)) {
            *flavor = tt_moe_flavors[i].flavor;
            return tt_moe_flavors[i].name;
        }
    }
    return NULL;
}

/* torchtitan's mixtures of experts (issue 38) as the presets of the same shapes: deepseek_v3's
 * flavors 16B (DeepSeek-V2-Lite's shape) and 671B (DeepSeek-V3's, without the MTP module,
 * which torchtitan does not train: torchtitan/models/deepseek_v3/__init__.py), qwen3's 30B-A3B
 * and 235B-A22B (torchtitan/models/qwen3/__init__.py): *done when name/flavor is one of them
 * (c->model set); MT_EINVAL naming the key when it is a MoE model mario-tui cannot plan;
 * MT_OK without *done when name is no MoE model. */
static int tt_moe_model(struct toml *m, const char *name, const char *flavor, struct tentry *nv,
                        struct tentry *fv, struct config *c, bool *done)
{
    *done = false;
#define known tt_moe_flavors
    bool moe_name = false;
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        moe_name |= strcmp(name, known[i].name) == 0 && strcmp(name, "qwen3") != 0;
        if (strcmp(name, known[i].name) != 0 || strcmp(flavor, known[i].flavor) != 0)
            continue;
        TRY(presets_model(known[i].preset, &c->model, m->e));
        c->model.moe.mtp_layers = 0; /* torchtitan trains no MTP module */
        c->model.paper_stack = false;
        *done = true;
        return MT_OK;
    }
#undef known
    if (strcmp(name, "llama4") == 0)
        return tt_fail(m, nv, "'llama4': chunked local attention, MoE layers interleaved with "
                              "dense ones and layers without RoPE are not modelled");
    if (strcmp(name, "gpt_oss") == 0)
        return tt_fail(m, nv, "'gpt_oss': sliding-window attention on every other layer and "
                              "attention sinks are not modelled");
    if (moe_name)
        return tt_fail(m, fv, "'%s': not one of %s's flavors mario-tui has a preset for (16B, "
                              "671B; give the model's Hugging Face config.json for others)",
                       flavor, name);
    if (strcmp(name, "qwen3") == 0 && strstr(flavor, "moe") != NULL)
        return tt_fail(m, fv, "'%s': qwen3's MoE flavors mario-tui has presets for are 30B-A3B "
                              "and 235B-A22B", flavor);
    return MT_OK;
}

static int tt_model(struct toml *m, struct config *c)
{
    const char *name, *flavor;
    struct tentry *nv, *fv;
    TRY(tt_str(m, "model", "name", &name, &nv));
    TRY(tt_str(m, "model", "flavor", &flavor, &fv));
    if (name == NULL)
        name = "llama3"; /* JobConfig's defaults */
    if (flavor == NULL)
        flavor = "debugmodel";
    bool moe = false;
    TRY(tt_moe_model(m, name, flavor, nv, fv, c, &moe));
    if (moe)
        return MT_OK;
    if (strcmp(name, "llama3") != 0)
        return tt_fail(m, nv,
                       "'%s': mario-tui knows torchtitan's llama3 flavors (8B 70B 405B "
                       "debugmodel); give a config JSON or a Hugging Face config.json for "
                       "other models",
                       name);
    for (const char *p = flavor; *p; p++) /* it names the model: no control characters */
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            return tt_fail(m, fv, "contains control characters");
    if (!launch_torchtitan_flavor(flavor, &c->model))
        return tt_fail(m, fv, "'%s': not one of llama3's flavors (8B 70B 405B debugmodel)",
                       flavor);
    c->model.paper_stack = false;
    return MT_OK;
}

int launch_read_torchtitan(const char *text, size_t n, const char *name,
                           const struct launch_read_opts *o, struct config *out,
                           struct launch_info *info, struct mt_err *e)
{
    struct toml m = {.t = text, .n = n, .line = 1, .name = name, .e = e};
    if (n >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0)
        m.p = m.line_start = 3;
    struct launch_notes *nt = calloc(1, sizeof *nt);
    if (nt == NULL)
        return err_set(e, MT_ENOMEM, "%s: out of memory", name);
    struct launch_info li = {.kind = LAUNCH_TORCHTITAN};
    struct config c;
    config_default(&c);
    int rc = tm_parse(&m);
    if (rc == MT_OK)
        rc = tt_model(&m, &c);
    int rep = 1, shard = -1, tp = 1, pp = 1, cp = 1, ep = 1, etp = 1, ppmbs = 1, lps = 0;
    int local = 8, global = -1, seq = 2048;
    struct tentry *shard_at = NULL, *cp_at = NULL, *ep_at = NULL, *etp_at = NULL, *lps_at = NULL,
                  *local_at = NULL, *global_at = NULL;
    const char *P = "parallelism", *T = "training";
#define TT_INT(tb, k, lo, hi, d, dst, a) \
    if (rc == MT_OK)                     \
    rc = tt_int(&m, tb, k, lo, hi, d, dst, a)
    TT_INT(P, "data_parallel_replicate_degree", 1, CONFIG_MAX_DEVICES, 1, &rep, NULL);
    TT_INT(P, "data_parallel_shard_degree", -1, CONFIG_MAX_DEVICES, -1, &shard, &shard_at);
    TT_INT(P, "tensor_parallel_degree", 1, CONFIG_MAX_DEVICES, 1, &tp, NULL);
    TT_INT(P, "pipeline_parallel_degree", 1, CONFIG_MAX_DEVICES, 1, &pp, NULL);
    TT_INT(P, "context_parallel_degree", 1, CONFIG_MAX_DEVICES, 1, &cp, &cp_at);
    TT_INT(P, "expert_parallel_degree", 1, CONFIG_MAX_DEVICES, 1, &ep, &ep_at);
    TT_INT(P, "expert_tensor_parallel_degree", 1, CONFIG_MAX_DEVICES, 1, &etp, &etp_at);
    TT_INT(P, "pipeline_parallel_microbatch_size", 1, 1 << 20, 1, &ppmbs, NULL);
    TT_INT(P, "pipeline_parallel_layers_per_stage", 1, CONFIG_MAX_LAYERS, 0, &lps, &lps_at);
    TT_INT(T, "local_batch_size", 1, 1 << 20, 8, &local, &local_at);
    if (rc == MT_OK && local_at == NULL) /* torchtitan's earlier name of it */
        TT_INT(T, "batch_size", 1, 1 << 20, 8, &local, &local_at);
    TT_INT(T, "global_batch_size", -1, 1 << 30, -1, &global, &global_at);
    TT_INT(T, "seq_len", 1, 1 << 24, 2048, &seq, NULL);
#undef TT_INT
    if (rc == MT_OK && shard == 0)
        rc = tt_fail(&m, shard_at, "0: -1 (the GPUs left) or a degree >= 1");
    /* torch's ring attention moves K/V by one all-gather ("allgather", torchtitan's default)
     * or a permute a step ("alltoall"): Megatron's all_gather and p2p
     * (torch/distributed/tensor/experimental/_attention.py, _AllGatherRotater and
     * _AllToAllRotater) */
    enum cp_comm_type cp_comm = CP_COMM_ALL_GATHER;
    const char *rot = NULL;
    struct tentry *rot_at = NULL;
    if (rc == MT_OK)
        rc = tt_str(&m, P, "context_parallel_rotate_method", &rot, &rot_at);
    if (rc == MT_OK && rot != NULL && strcmp(rot, "alltoall") == 0)
        cp_comm = CP_COMM_P2P;
    else if (rc == MT_OK && rot != NULL && strcmp(rot, "allgather") != 0)
        rc = tt_fail(&m, rot_at, "'%s' (expected allgather or alltoall)", rot);
    (void)cp_at;
    if (rc == MT_OK && (ep > 1 || etp > 1) && !moe_enabled(&c.model))
        rc = tt_fail(&m, ep > 1 ? ep_at : etp_at, "%d: the model has no experts", ep > 1 ? ep : etp);
    if (rc == MT_OK && moe_enabled(&c.model)) {
        /* torchtitan's expert degrees (ParallelismConfig: expert_tensor_parallel_degree
         * defaults to 1, the experts whole on their ranks) */
        c.cluster.ep = ep > 1 ? ep : 0;
        c.cluster.etp = etp;
    }
    /* the GPUs: --devices, else the degrees when none is -1 */
    long fixed = (long)rep * tp * pp * cp;
    char cpx[24] = "";
    if (cp > 1)
        snprintf(cpx, sizeof cpx, " x cp %d", cp);
    int devices = o->devices;
    if (rc == MT_OK && devices == 0 && shard < 0)
        rc = tt_fail(&m, shard_at,
                     "%s takes the GPUs torchrun starts, which a job TOML does not say: give "
                     "--devices N",
                     shard_at ? "-1" : "data_parallel_shard_degree (default -1)");
    if (rc == MT_OK && shard < 0) {
        if (devices % fixed != 0)
            rc = tt_fail(&m, shard_at,
                         "-1: --devices %d is not a multiple of the other degrees (replicate %d "
                         "x tp %d x pp %d%s = %ld)",
                         devices, rep, tp, pp, cpx, fixed);
        else
            shard = (int)(devices / fixed);
    }
    if (rc == MT_OK && fixed * shard > CONFIG_MAX_DEVICES)
        rc = tt_fail(&m, NULL, "the degrees multiply to more than %d GPUs", CONFIG_MAX_DEVICES);
    if (rc == MT_OK && devices > 0 && fixed * shard != devices)
        rc = tt_fail(&m, shard_at,
                     "the degrees (replicate %d x shard %d x tp %d x pp %d%s = %ld GPUs) "
                     "disagree with --devices %d (torchtitan would refuse the mesh)",
                     rep, shard, tp, pp, cpx, fixed * shard, devices);
    int dp = rep * shard;
    if (rc == MT_OK) {
        c.model.seq_length = seq;
        launch_name_model(&c.model, 1);
        if (strcmp(c.model.name, "custom") == 0) {
            const char *fl = NULL;
            tt_str(&m, "model", "flavor", &fl, NULL);
            snprintf(c.model.name, sizeof c.model.name, "llama3-%s", fl ? fl : "debugmodel");
        }
        c.cluster.tp = tp;
        c.cluster.cp = cp;
        if (cp > 1) /* at cp 1 no K/V move: the config's default stays */
            c.cluster.cp_comm_type = cp_comm;
        c.cluster.dp = dp;
        config_set_pp(&c, pp);
        c.sequence_parallel = tp > 1; /* torchtitan's TP plan shards the norms' sequence */
        /* FSDP2 over the shard degree, replicated over the rest (HSDP): ZeRO-3
         * (model/config_zero.c); replicate alone is DDP */
        c.cluster.zero_stage = shard > 1 ? 3 : 0;
        c.cluster.dp_shard = shard > 1 && rep > 1 ? shard : 0;
        const char *raf = NULL;
        struct tentry *raf_at = NULL;
        rc = tt_str(&m, P, "fsdp_reshard_after_forward", &raf, &raf_at);
        if (rc == MT_OK && raf != NULL) {
            struct mt_err pe;
            if (config_fsdp_reshard_parse(raf, &c.cluster.reshard_after_forward, &pe) != MT_OK)
                rc = tt_fail(&m, raf_at, "'%s' (expected default, always or never)", raf);
            else if (shard <= 1)
                c.cluster.reshard_after_forward = FSDP_RESHARD_DEFAULT; /* no FSDP: moot */
        }
        if (global > 0 && global % (local * dp) != 0)
            rc = tt_fail(&m, global_at, "%d is not a multiple of local_batch_size %d x dp %d",
                         global, local, dp);
    }
    if (rc == MT_OK) {
        if (pp > 1) {
            if (local % ppmbs != 0)
                rc = tt_fail(&m, local_at,
                             "%d is not a multiple of pipeline_parallel_microbatch_size %d",
                             local, ppmbs);
            c.micro_batch_size = ppmbs;
            c.global_batch_size = local * dp;
            if (global > local * dp)
                launch_note(nt->unmodelled, sizeof nt->unmodelled,
                            "training.global_batch_size %d (gradient accumulation: %d pipeline "
                            "steps, each flushed; planned as one)",
                            global, global / (local * dp));
        } else {
            c.micro_batch_size = local;
            c.global_batch_size = global > 0 ? global : local * dp;
        }
        c.num_microbatches = 0;
    }
    /* the schedule */
    const char *sched = NULL, *csv = NULL;
    struct tentry *sched_at = NULL, *csv_at = NULL;
    if (rc == MT_OK)
        rc = tt_str(&m, P, "pipeline_parallel_schedule", &sched, &sched_at);
    if (rc == MT_OK)
        rc = tt_str(&m, P, "pipeline_parallel_schedule_csv", &csv, &csv_at);
    if (rc == MT_OK) {
        c.scheme = SCHEME_V;
        c.chunks = 2;
        if (pp > 1 && csv && csv[0])
            rc = tt_fail(&m, csv_at,
                         "'%s': a schedule from a CSV: give the CSV itself (mario-tui simulate "
                         "%s --devices %d ...)",
                         csv, csv, pp);
        else if (pp > 1 && sched && !launch_torchtitan_schedule_parse(sched, &c.scheme))
            rc = tt_fail(&m, sched_at,
                         "'%s': no scheme of mario-tui's (1F1B, Interleaved1F1B, GPipe, "
                         "InterleavedZeroBubble, ZBVZeroBubble, DualPipeV; LoopedBFS is not "
                         "modelled)",
                         sched);
        if (rc == MT_OK && config_scheme_uses_chunks(c.scheme)) {
            /* torchtitan (pipeline_parallel.py, generate_llm_fqn_per_model_part): 2 stages a
             * rank for a multi-stage schedule unless layers_per_stage gives
             * ceil(L / layers_per_stage) stages; mario-tui takes only an exact split */
            if (lps > 0 && c.model.num_layers % (lps * pp) != 0)
                rc = tt_fail(&m, lps_at, "%d: %d layers are not pp %d x %d", lps,
                             c.model.num_layers, pp, lps);
            else if (lps > 0)
                c.chunks = c.model.num_layers / (lps * pp);
        } else if (rc == MT_OK && lps > 0 && pp > 1 &&
                   lps * pp * config_stages_per_device(&c) != c.model.num_layers) {
            rc = tt_fail(&m, lps_at, "%d: %s holds %d stages of %d layers, not %d", lps, sched,
                         pp * config_stages_per_device(&c), c.model.num_layers / (pp * config_stages_per_device(&c)), lps);
        }
    }
    /* activation checkpointing: torchtitan's default is selective */
    const char *mode = NULL;
    struct tentry *mode_at = NULL;
    if (rc == MT_OK)
        rc = tt_str(&m, "activation_checkpoint", "mode", &mode, &mode_at);
    if (rc == MT_OK) {
        const char *md = mode ? mode : "selective";
        if (strcmp(md, "none") == 0)
            li.recompute = LAUNCH_RECOMPUTE_NONE;
        else if (strcmp(md, "selective") == 0 || strcmp(md, "full") == 0) {
            li.recompute = md[0] == 'f' ? LAUNCH_RECOMPUTE_FULL : LAUNCH_RECOMPUTE_SELECTIVE;
            li.ac.granularity = li.recompute;
            /* selective_ac_option (torchtitan's job_config.ActivationCheckpoint, default "2"):
             * an integer N checkpoints every N-th block whole, "op" is the per-op policy */
            const char *opt = NULL;
            struct tentry *opt_at = NULL;
            rc = tt_str(&m, "activation_checkpoint", "selective_ac_option", &opt, &opt_at);
            if (rc == MT_OK && li.recompute == LAUNCH_RECOMPUTE_SELECTIVE) {
                char *end = NULL;
                long nth = opt ? strtol(opt, &end, 10) : 2;
                if (opt && strcmp(opt, "op") == 0)
                    li.ac.method = LAUNCH_RC_PER_OP;
                else if (opt && (end == opt || *end != '\0' || nth < 1 || nth > CONFIG_MAX_LAYERS))
                    rc = tt_fail(&m, opt_at, "'%s' (expected \"op\" or a positive integer)", opt);
                else {
                    li.ac.method = LAUNCH_RC_EVERY_NTH;
                    li.ac.num_layers = (int)nth;
                }
            }
            if (rc == MT_OK) /* the config's policy where one is them (model/launch.c) */
                launch_apply_recompute(&c, &li.ac, c.model.num_layers / (pp > 0 ? pp : 1), nt);
            if (!mode)
                launch_note(nt->assumed, sizeof nt->assumed,
                            "activation_checkpoint.mode selective (torchtitan's default)");
        } else
            rc = tt_fail(&m, mode_at, "'%s' (expected none, selective or full)", mode);
    }
    if (rc == MT_OK)
        rc = tt_fp8(&m, &c, nt);
    if (rc == MT_OK) {
        tt_warn_keys(&m, nt);
        tt_unknown_keys(&m, nt);
        snprintf(c.source, sizeof c.source, "%s", name);
        if (config_validate(&c, e) != MT_OK)
            rc = err_wrap(e, "%s (read as a torchtitan job)", name);
    }
    if (rc == MT_OK) {
        launch_notes_finish(nt, &li);
        *out = c;
        *info = li;
    }
    for (int i = 0; i < m.nv; i++)
        free(m.v[i].str);
    free(m.v);
    free(nt);
    return rc;
}
