/* model/launch.c: the launch readers' common part (model/launch.h): telling a launch file by
 * its content, the dispatch to the Megatron-LM and torchtitan readers, the notes that become
 * the one warning line, and the shape rules both frameworks share with the presets. */
#include <config.h>
#include "model/launch.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/launch_internal.h"
#include "model/presets.h"
#include "util/err.h"
#include "util/str.h"

static const char *const launch_names[LAUNCH__COUNT] = {"megatron", "torchtitan"};
static const char *const launch_titles[LAUNCH__COUNT] = {"Megatron-LM", "torchtitan"};

int launch_kind_parse(const char *s, enum launch_kind *out, struct mt_err *e)
{
    int i = str_index_of(s, launch_names, LAUNCH__COUNT);
    if (i >= 0) {
        *out = (enum launch_kind)i;
        return MT_OK;
    }
    return err_set(e, MT_EINVAL, "unknown launcher '%s' (expected megatron or torchtitan)", s);
}

const char *launch_kind_name(enum launch_kind k)
{
    return (unsigned)k < LAUNCH__COUNT ? launch_names[k] : "?";
}

const char *launch_kind_title(enum launch_kind k)
{
    return (unsigned)k < LAUNCH__COUNT ? launch_titles[k] : "?";
}

/* torchtitan's JobConfig tables (torchtitan/config/job_config.py): a TOML holding one of
 * them as a table header line is a job file. */
static const char *const launch_toml_tables[] = {
    "job",        "model",      "training",    "parallelism", "activation_checkpoint",
    "checkpoint", "optimizer",  "lr_scheduler", "metrics",    "profiling",
    "float8",     "comm",       "validation",  "experimental", "compile", NULL};

static bool launch_is_table_line(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    if (p == end || *p != '[')
        return false;
    p++;
    const char *a = p;
    while (p < end && (isalnum((unsigned char)*p) || *p == '_' || *p == '.'))
        p++;
    size_t len = (size_t)(p - a);
    if (len == 0 || p == end || *p != ']')
        return false;
    for (int i = 0; launch_toml_tables[i] != NULL; i++)
        if (strlen(launch_toml_tables[i]) == len && strncmp(a, launch_toml_tables[i], len) == 0)
            return true;
    return false;
}

/* Whether needle occurs in text[0..n) (text need not be NUL-terminated). */
static bool launch_has(const char *text, size_t n, const char *needle)
{
    size_t k = strlen(needle);
    for (size_t i = 0; i + k <= n; i++)
        if (memcmp(text + i, needle, k) == 0)
            return true;
    return false;
}

bool launch_detect(const char *text, size_t n, enum launch_kind *kind)
{
    size_t i = 0;
    if (n >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0)
        i = 3;
    while (i < n && isspace((unsigned char)text[i]))
        i++;
    if (i < n && text[i] == '{')
        return false; /* JSON: a config, a plan, a trace */
    for (size_t a = i; a < n;) {
        const char *nl = memchr(text + a, '\n', n - a);
        size_t b = nl ? (size_t)(nl - text) : n;
        if (launch_is_table_line(text + a, text + b)) {
            *kind = LAUNCH_TORCHTITAN;
            return true;
        }
        a = b + 1;
    }
    if (i < n && text[i] == '[')
        return false; /* a JSON array (a trace) */
    if (launch_has(text, n, "--num-layers") ||
        (launch_has(text, n, "pretrain_") && launch_has(text, n, ".py"))) {
        *kind = LAUNCH_MEGATRON;
        return true;
    }
    return false;
}

void launch_note(char *buf, size_t n, const char *fmt, ...)
{
    char item[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(item, sizeof item, fmt, ap);
    va_end(ap);
    size_t len = strlen(buf), k = strlen(item);
    /* an item already listed is not repeated */
    for (const char *p = strstr(buf, item); p != NULL; p = strstr(p + 1, item))
        if ((p == buf || (p >= buf + 2 && p[-2] == ',' && p[-1] == ' ')) &&
            (p[k] == '\0' || p[k] == ','))
            return;
    if (len + (len ? 2 : 0) + k + 4 >= n) {
        if (len + 4 < n && (len < 3 || strcmp(buf + len - 3, "...") != 0))
            strcat(buf, len ? ", ..." : "...");
        return;
    }
    if (len)
        strcat(buf, ", ");
    strcat(buf, item);
}

void launch_notes_finish(const struct launch_notes *nt, struct launch_info *info)
{
    info->warning[0] = '\0';
    if (nt->unmodelled[0])
        snprintf(info->warning, sizeof info->warning, "not modelled: %s", nt->unmodelled);
    if (nt->unknown[0]) {
        size_t len = strlen(info->warning);
        snprintf(info->warning + len, sizeof info->warning - len, "%snot recognised: %s",
                 len ? "; " : "", nt->unknown);
    }
    snprintf(info->assumed, sizeof info->assumed, "%s", nt->assumed);
}

int launch_fail(struct mt_err *e, const char *name, int line, int col, const char *fmt, ...)
{
    char what[800];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (line > 0)
        return err_set(e, MT_EINVAL, "%s:%d:%d: %s", name, line, col, what);
    return err_set(e, MT_EINVAL, "%s: %s", name, what);
}

/* The family's parts resolved, so that a shape given part by part and a preset compare. */
/* The same experts and latent attention (a dense launch of Mixtral's shape is not Mixtral);
 * the MTP depth and the router's bias apart (a framework may train a preset without them). */
static bool launch_same_experts(const struct model_spec *a, const struct model_spec *b)
{
    const struct moe_spec *x = &a->moe, *y = &b->moe;
    int fx = x->layer_freq > 1 ? x->layer_freq : 1, fy = y->layer_freq > 1 ? y->layer_freq : 1;
    return x->num_experts == y->num_experts &&
           (x->num_experts == 0 ||
            (x->router_topk == y->router_topk && x->ffn_hidden_size == y->ffn_hidden_size &&
             x->shared_ffn == y->shared_ffn && x->first_k_dense == y->first_k_dense &&
             fx == fy)) &&
           memcmp(&a->mla, &b->mla, sizeof a->mla) == 0;
}

static bool launch_same_shape(const struct model_spec *a, const struct model_spec *b,
                              int vocab_multiple)
{
    int va = launch_megatron_padded_vocab(a->vocab_size, 1, vocab_multiple);
    int vb = launch_megatron_padded_vocab(b->vocab_size, 1, vocab_multiple);
    return a->arch == b->arch && a->hidden_size == b->hidden_size &&
           a->num_layers == b->num_layers && a->num_attention_heads == b->num_attention_heads &&
           a->ffn_hidden_size == b->ffn_hidden_size && config_kv_heads(a) == config_kv_heads(b) &&
           va == vb && config_mlp(a) == config_mlp(b) &&
           config_norm(a) == config_norm(b) && config_bias(a) == config_bias(b) &&
           config_head_dim(a) == config_head_dim(b) &&
           config_tied_embeddings(a) == config_tied_embeddings(b) && a->qk_norm == b->qk_norm &&
           launch_same_experts(a, b);
}

void launch_name_model(struct model_spec *m, int vocab_multiple)
{
    const char *const *names = presets_model_names();
    for (int i = 0; names[i] != NULL; i++) {
        struct model_spec p;
        if (presets_model(names[i], &p, NULL) != MT_OK || p.paper_stack)
            continue; /* the paper's shapes keep the paper's stack: not a launch's */
        if (launch_same_shape(m, &p, vocab_multiple)) {
            snprintf(m->name, sizeof m->name, "%s", p.name);
            return;
        }
    }
    snprintf(m->name, sizeof m->name, "custom");
}

int launch_megatron_padded_vocab(int vocab, int divisible_by, int tp)
{
    long multiple = (long)(divisible_by > 0 ? divisible_by : 1) * (tp > 0 ? tp : 1);
    long padded = (vocab + multiple - 1) / multiple * multiple;
    return padded > 0x7fffffff ? -1 : (int)padded;
}

int launch_megatron_ffn_default(int h, bool swiglu)
{
    long f = swiglu ? (long)(4.0 * h * 2 / 3 / 64) * 64 : 4L * h;
    return f > 0x7fffffff || f < 1 ? -1 : (int)f;
}

int launch_read(const char *text, size_t n, const char *name, const struct launch_read_opts *o,
                struct config *out, struct launch_info *info, struct mt_err *e)
{
    enum launch_kind k;
    if (n > LAUNCH_MAX_BYTES)
        return err_set(e, MT_EINVAL, "%s: larger than %d MiB", name, LAUNCH_MAX_BYTES >> 20);
    if (memchr(text, '\0', n) != NULL)
        return err_set(e, MT_EINVAL, "%s: a NUL byte: not a launch script or TOML", name);
    if (!launch_detect(text, n, &k))
        return err_set(e, MT_EINVAL,
                       "%s: not a launch file: no Megatron-LM launch (pretrain_gpt.py or its "
                       "--num-layers ...) and no torchtitan table ([parallelism], [training], "
                       "...)",
                       name);
    struct launch_read_opts dflt = {0};
    if (o == NULL)
        o = &dflt;
    if (k == LAUNCH_MEGATRON)
        return launch_read_megatron(text, n, name, o, out, info, e);
    return launch_read_torchtitan(text, n, name, o, out, info, e);
}

int launch_read_file(const char *path, const struct launch_read_opts *o, struct config *out,
                     struct launch_info *info, struct mt_err *e)
{
    char *text = NULL;
    size_t len = 0;
    int rc;
    if (strcmp(path, "-") == 0) {
        size_t cap = 65536;
        text = malloc(cap);
        for (size_t got; text != NULL && (got = fread(text + len, 1, cap - len, stdin)) > 0;) {
            len += got;
            if (len > LAUNCH_MAX_BYTES)
                break;
            if (len == cap) {
                char *t = realloc(text, cap *= 2);
                if (t == NULL)
                    break;
                text = t;
            }
        }
        if (text == NULL)
            return err_set(e, MT_ENOMEM, "stdin: out of memory");
        path = "(stdin)";
    } else {
        TRY(str_read_file(path, LAUNCH_MAX_BYTES + 1, &text, &len, e));
    }
    rc = launch_read(text, len, path, o, out, info, e);
    free(text);
    return rc;
}

void launch_fp8_device(struct config *c, struct launch_notes *nt)
{
    const struct device_spec *d = &c->cluster.device;
    bool mx = c->cluster.fp8_recipe == FP8_MXFP8;
    if (c->cluster.fp8_recipe == FP8_NONE || (d->fp8_peak_flops > 0 && (!mx || d->mxfp8)))
        return;
    const char *want = mx ? "B200" : "H100-80G";
    struct device_spec dev;
    if (presets_device(want, &dev, NULL) != MT_OK)
        return;
    launch_note(nt->assumed, sizeof nt->assumed,
                "device %s (the launch trains in FP8%s, which the %s lacks; --device changes it)",
                want, mx ? " with MXFP8" : "", d->name);
    config_set_device(c, &dev);
}

/* The config's recompute policy (model/ops_recompute.c) a launch's settings are, where there is
 * one: Megatron's selective on the core attention (its default module) and torchtitan's per-op
 * policy; full with every layer recomputed (Megatron's uniform, whose groups of N keep one input
 * each where the policy keeps every layer's, and its block at N = a rank's layers; torchtitan's
 * full). Recomputation of some blocks only (Megatron's block at N < a rank's layers,
 * torchtitan's every N-th block) and other modules are not modelled: noted, config left none. */
void launch_apply_recompute(struct config *c, const struct launch_ac *ac, int per_rank,
                            struct launch_notes *nt)
{
    enum recompute_mode r = RECOMPUTE_NONE;
    const char *partial = NULL;
    char what[200];
    if (ac->granularity == LAUNCH_RECOMPUTE_FULL) {
        if (ac->method == LAUNCH_RC_BLOCK && ac->num_layers < per_rank) {
            snprintf(what, sizeof what, "the first %d of a rank's %d layers", ac->num_layers,
                     per_rank);
            partial = what;
        } else {
            r = RECOMPUTE_FULL;
        }
    } else if (ac->granularity == LAUNCH_RECOMPUTE_SELECTIVE) {
        if (ac->method == LAUNCH_RC_EVERY_NTH) {
            snprintf(what, sizeof what, "every %d-th block whole", ac->num_layers);
            partial = what;
        } else if (ac->method == LAUNCH_RC_PER_OP) {
            r = RECOMPUTE_OP;
        } else if (ac->modules[0] != '\0' && strcmp(ac->modules, "core_attn") != 0) {
            snprintf(what, sizeof what, "--recompute-modules %s", ac->modules);
            partial = what;
        } else {
            r = RECOMPUTE_SELECTIVE;
        }
    }
    if (partial != NULL) {
        launch_note(nt->unmodelled, sizeof nt->unmodelled,
                    "recompute of %s (the config's recompute covers every block: left none)",
                    partial);
        return;
    }
    struct config t = *c;
    struct mt_err e;
    t.recompute = r;
    if (config_validate_recompute(&t, &e) != MT_OK) {
        launch_note(nt->unmodelled, sizeof nt->unmodelled, "%s", e.msg);
        return;
    }
    c->recompute = r;
}
