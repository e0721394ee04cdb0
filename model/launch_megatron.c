/* model/launch_megatron.c: a Megatron-LM launch read as a config (model/launch.h). The shell
 * around it is run by model/launch_shell_*.c (model/launch_shell.h); here are the launcher's
 * GPU count (torchrun's --nproc-per-node x --nnodes, srun's or #SBATCH's --nodes x
 * --ntasks-per-node) and
 * pretrain_gpt.py's flags, each in one of four lists (megatron/training/arguments.py names
 * them; docs/launchers.md lists them): read into the config (the experts and MLA: mr_moe),
 * refused where a plan would be wrong (a --cp-comm-type a layer), not modelled (said in the
 * one warning line), or skipped on purpose (data, tokenizer files, optimizer, logging,
 * checkpointing, profiling). A flag in none of them is "not recognised", in the same line. */
#include <config.h>
#include "model/launch.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "model/fp8.h"
#include "model/launch_internal.h"
#include "model/launch_megatron_flags.h"
#include "model/moe.h"
#include "util/err.h"

struct mval {
    bool given;
    const struct launch_field *at; /* the flag */
    const char *s;                 /* its value (A_ONE), or NULL */
    const struct launch_field *val;
};

struct mread {
    const char *name;
    struct mval v[F__COUNT];
    struct launch_notes nt;
    struct mt_err *e;
};

static int mr_fail_at(struct mread *r, const struct launch_field *f, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int mr_fail_at(struct mread *r, const struct launch_field *f, const char *fmt, ...)
{
    char what[700];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return launch_fail(r->e, r->name, f ? f->line : 0, f ? f->col : 0, "%s", what);
}

/* The integer value of flag id in [lo, hi]; dflt when not given. */
static int mr_int(struct mread *r, int id, long lo, long hi, int dflt, int *out)
{
    const struct mval *m = &r->v[id];
    if (!m->given) {
        *out = dflt;
        return MT_OK;
    }
    const struct launch_field *f = m->val ? m->val : m->at;
    if (m->val && m->val->why[0])
        return mr_fail_at(r, f, "%s: its value is not known: %s", m->at->text, m->val->why);
    char *end;
    long v = m->s ? strtol(m->s, &end, 10) : 0;
    if (m->s == NULL || m->s[0] == '\0' || *end != '\0')
        return mr_fail_at(r, f, "%s: '%s' is not an integer", m->at->text, m->s ? m->s : "");
    if (v < lo || v > hi)
        return mr_fail_at(r, f, "%s: %ld is out of range [%ld, %ld]", m->at->text, v, lo, hi);
    *out = (int)v;
    return MT_OK;
}

static const char *mr_str(struct mread *r, int id)
{
    return r->v[id].given && r->v[id].s ? r->v[id].s : NULL;
}

/* The flags after the script: each into r->v, a note, or the skipped. */
static int mr_flags(struct mread *r, const struct launch_field *f, int n)
{
    for (int i = 0; i < n; i++) {
        const char *t = f[i].text;
        int at = i;
        if (strncmp(t, "--", 2) != 0 || t[2] == '\0') {
            if (t[0] != '\0')
                launch_note(r->nt.unknown, sizeof r->nt.unknown, "'%s' (a word that is no flag)",
                            t);
            continue;
        }
        const char *eq = strchr(t, '=');
        size_t len = eq ? (size_t)(eq - t) : strlen(t);
        const struct mflag *fl = mflag_find(t, len);
        enum mf_arg arg = fl ? fl->arg : A_MAYBE;
        const struct launch_field *val = NULL;
        const char *s = eq ? eq + 1 : NULL;
        bool next_is_value = i + 1 < n && strncmp(f[i + 1].text, "--", 2) != 0;
        if (eq == NULL && (arg == A_ONE || (arg == A_MAYBE && next_is_value))) {
            if (!next_is_value)
                return mr_fail_at(r, &f[i], "%.*s: a value is missing", (int)len, t);
            val = &f[++i];
            s = val->text;
        } else if (arg == A_LIST || arg == A_THREE) {
            int k = 0;
            while (i + 1 < n && strncmp(f[i + 1].text, "--", 2) != 0 &&
                   (arg == A_LIST || k < 3)) {
                i++;
                k++;
            }
        } else if (eq != NULL && arg == A_NONE) {
            return mr_fail_at(r, &f[i], "%.*s takes no value", (int)len, t);
        }
        if (fl == NULL) {
            launch_note(r->nt.unknown, sizeof r->nt.unknown, "%.*s", (int)len, t);
            continue;
        }
        if (fl->id == F_SKIP)
            continue;
        if (fl->id == F_WARN) {
            launch_note(r->nt.unmodelled, sizeof r->nt.unmodelled, "%.*s%s%s (%s)", (int)len, t,
                        s ? " " : "", s ? s : "", fl->why);
            continue;
        }
        r->v[fl->id] = (struct mval){true, &f[at], s, val};
    }
    return MT_OK;
}

/* The GPUs the launcher starts (0: it does not say), and how, for messages. */
struct mlaunch {
    int gpus;
    char how[160];
    const struct launch_field *unknown; /* a count whose value is not known */
    struct launch_field eqv[8];         /* --flag=value: the value with the flag's place */
};

static bool ml_is(const char *t, const char *a, const char *b)
{
    return strcmp(t, a) == 0 || (b && strcmp(t, b) == 0);
}

static const char *ml_base(const char *t)
{
    const char *s = strrchr(t, '/');
    return s ? s + 1 : t;
}

static int ml_count(struct mread *r, const struct launch_shell *sh, int script, struct mlaunch *out)
{
    memset(out, 0, sizeof *out);
    if (script < 0)
        return MT_OK; /* flags alone: nothing launched */
    bool torchrun = false, srun = false, mpi = false, ds = false;
    const struct launch_field *nproc = NULL, *nnodes = NULL, *nodes = NULL, *tpn = NULL,
                              *ntasks = NULL, *np = NULL, *dsg = NULL, *dsn = NULL;
    const struct launch_field *f = sh->f;
    for (int i = 0; i < script; i++) {
        const char *t = f[i].text, *b = ml_base(t);
        if (strcmp(b, "torchrun") == 0 ||
            (strcmp(t, "-m") == 0 && i + 1 < script &&
             (strcmp(f[i + 1].text, "torch.distributed.run") == 0 ||
              strcmp(f[i + 1].text, "torch.distributed.launch") == 0)))
            torchrun = true;
        srun = srun || strcmp(b, "srun") == 0;
        mpi = mpi || strcmp(b, "mpirun") == 0 || strcmp(b, "mpiexec") == 0;
        ds = ds || strcmp(b, "deepspeed") == 0;
        char name[64];
        const char *eq = strchr(t, '=');
        size_t len = eq ? (size_t)(eq - t) : strlen(t);
        if (t[0] != '-' || len >= sizeof name)
            continue;
        memcpy(name, t, len);
        name[len] = '\0';
        const struct launch_field **dst = NULL;
        if (ml_is(name, "--nproc-per-node", "--nproc_per_node"))
            dst = &nproc;
        else if (ml_is(name, "--nnodes", NULL))
            dst = &nnodes;
        else if (ml_is(name, "--nodes", "-N"))
            dst = &nodes;
        else if (ml_is(name, "--ntasks-per-node", NULL))
            dst = &tpn;
        else if (ml_is(name, "--ntasks", NULL) || (srun && !mpi && ml_is(name, "-n", NULL)))
            dst = &ntasks;
        else if (ml_is(name, "-np", NULL) || (mpi && ml_is(name, "-n", NULL)))
            dst = &np;
        else if (ml_is(name, "--num_gpus", "--num-gpus"))
            dst = &dsg;
        else if (ml_is(name, "--num_nodes", "--num-nodes"))
            dst = &dsn;
        if (dst == NULL)
            continue;
        if (eq != NULL) {
            int slot = (int)(dst == &nproc ? 0 : dst == &nnodes ? 1 : dst == &nodes ? 2
                             : dst == &tpn ? 3 : dst == &ntasks ? 4 : dst == &np ? 5
                             : dst == &dsg ? 6 : 7);
            out->eqv[slot] = f[i];
            out->eqv[slot].text = (char *)eq + 1;
            *dst = &out->eqv[slot];
        } else if (i + 1 < script) {
            *dst = &f[++i];
        }
    }
    int v[8] = {0};
    const struct launch_field *all[8] = {nproc, nnodes, nodes, tpn, ntasks, np, dsg, dsn};
    for (int k = 0; k < 8; k++) {
        if (all[k] == NULL)
            continue;
        char *end;
        long x = strtol(all[k]->text, &end, 10);
        if (all[k]->why[0] || end == all[k]->text || *end != '\0' || x < 1 ||
            x > CONFIG_MAX_DEVICES) {
            if (out->unknown == NULL)
                out->unknown = all[k];
            continue;
        }
        v[k] = (int)x;
    }
    long g = 0;
    if (torchrun) {
        g = (long)(v[0] ? v[0] : 1) * (v[1] ? v[1] : 1);
        snprintf(out->how, sizeof out->how, "torchrun --nproc-per-node %d x --nnodes %d",
                 v[0] ? v[0] : 1, v[1] ? v[1] : 1);
        if (all[0] && !v[0])
            g = 0;
        if (all[1] && !v[1])
            g = 0;
    } else if (srun) {
        int nodes_n = v[2] ? v[2] : sh->sbatch_nodes ? sh->sbatch_nodes : 1;
        int tasks = v[3] ? v[3] : sh->sbatch_tasks_per_node ? sh->sbatch_tasks_per_node : 1;
        g = v[4] ? v[4] : (long)nodes_n * tasks;
        if (v[4])
            snprintf(out->how, sizeof out->how, "srun --ntasks %d", v[4]);
        else
            snprintf(out->how, sizeof out->how, "srun: %d nodes x %d tasks a node%s", nodes_n,
                     tasks, !v[2] || !v[3] ? " (#SBATCH)" : "");
        if ((all[2] && !v[2]) || (all[3] && !v[3]) || (all[4] && !v[4]))
            g = 0;
    } else if (mpi) {
        g = v[5];
        snprintf(out->how, sizeof out->how, "mpirun -np %d", v[5]);
    } else if (ds) {
        g = (long)(v[6] ? v[6] : 1) * (v[7] ? v[7] : 1);
        snprintf(out->how, sizeof out->how, "deepspeed --num_gpus %d x --num_nodes %d",
                 v[6] ? v[6] : 1, v[7] ? v[7] : 1);
    } else {
        g = 1;
        snprintf(out->how, sizeof out->how, "one process (no torchrun, srun or mpirun)");
    }
    if (g > CONFIG_MAX_DEVICES)
        return mr_fail_at(r, &f[0], "the launch starts %ld GPUs (%s): more than %d", g, out->how,
                          CONFIG_MAX_DEVICES);
    out->gpus = (int)g;
    return MT_OK;
}

/* The model's family parts as Megatron's flags give them; each left *_DEFAULT where it is
 * the arch's, so that a config names only what differs. */
static void mr_family(struct mread *r, struct model_spec *m)
{
    bool swiglu = r->v[F_SWIGLU].given;
    m->arch = swiglu ? ARCH_LLAMA2 : ARCH_GPT3;
    m->mlp = swiglu ? MLP_SWIGLU : MLP_GELU;
    const char *norm = mr_str(r, F_NORM);
    m->norm = norm && strcasecmp(norm, "RMSNorm") == 0 ? NORM_RMSNORM : NORM_LAYERNORM;
    m->bias = !r->v[F_NOBIAS].given ? BIAS_ALL : r->v[F_QKVBIAS].given ? BIAS_QKV : BIAS_NONE;
    m->tie_embeddings = r->v[F_UNTIE].given ? TRI_NO : TRI_YES;
    m->qk_norm = r->v[F_QKNORM].given;
    struct model_spec d = *m;
    d.mlp = MLP_DEFAULT;
    d.norm = NORM_DEFAULT;
    d.bias = BIAS_DEFAULT;
    d.tie_embeddings = TRI_DEFAULT;
    if (config_mlp(&d) == m->mlp)
        m->mlp = MLP_DEFAULT;
    if (config_norm(&d) == m->norm)
        m->norm = NORM_DEFAULT;
    if (config_bias(&d) == m->bias)
        m->bias = BIAS_DEFAULT;
    if (config_tied_embeddings(&d) == (m->tie_embeddings == TRI_YES))
        m->tie_embeddings = TRI_DEFAULT;
    if (m->head_dim > 0 && m->head_dim * m->num_attention_heads == m->hidden_size)
        m->head_dim = 0;
}

static int mr_model(struct mread *r, int tp, struct config *c)
{
    struct model_spec *m = &c->model;
    const struct launch_field *at = r->v[F_LAYERS].at;
    memset(m, 0, sizeof *m);
    TRY(mr_int(r, F_LAYERS, 1, CONFIG_MAX_LAYERS, 0, &m->num_layers));
    if (!r->v[F_HIDDEN].given || !r->v[F_HEADS].given || !r->v[F_SEQ].given)
        return mr_fail_at(r, at, "the launch lacks %s (Megatron-LM requires it)",
                          !r->v[F_HIDDEN].given  ? "--hidden-size"
                          : !r->v[F_HEADS].given ? "--num-attention-heads"
                                                 : "--seq-length");
    TRY(mr_int(r, F_HIDDEN, 1, 1 << 20, 0, &m->hidden_size));
    TRY(mr_int(r, F_HEADS, 1, 1 << 16, 0, &m->num_attention_heads));
    TRY(mr_int(r, F_SEQ, 1, 1 << 24, 0, &m->seq_length));
    int ffn_default = launch_megatron_ffn_default(m->hidden_size, r->v[F_SWIGLU].given);
    TRY(mr_int(r, F_FFN, 1, 1 << 24, ffn_default, &m->ffn_hidden_size));
    if (m->ffn_hidden_size < 1)
        return mr_fail_at(r, r->v[F_HIDDEN].at, "--hidden-size: too large for Megatron's "
                                                "default --ffn-hidden-size");
    int groups = 0;
    TRY(mr_int(r, F_GROUPS, 1, 1 << 16, 0, &groups));
    if (r->v[F_GQA].given) {
        if (groups == 0)
            groups = 1; /* Megatron's default --num-query-groups is 1 */
        if (m->num_attention_heads % groups != 0)
            return mr_fail_at(r, r->v[F_GROUPS].at ? r->v[F_GROUPS].at : r->v[F_GQA].at,
                              "--num-query-groups %d does not divide --num-attention-heads %d",
                              groups, m->num_attention_heads);
        m->num_key_value_heads = groups == m->num_attention_heads ? 0 : groups;
    } else if (groups > 0) {
        launch_note(r->nt.unmodelled, sizeof r->nt.unmodelled,
                    "--num-query-groups %d without --group-query-attention (Megatron ignores it, "
                    "so does the plan)",
                    groups);
    }
    TRY(mr_int(r, F_KVCH, 1, 1 << 16, 0, &m->head_dim));
    int maxpos = 0, divby = 128, vocab = 0;
    TRY(mr_int(r, F_MAXPOS, 1, 1 << 24, 0, &maxpos));
    if (maxpos > m->seq_length)
        c->seqlen.max_positions = maxpos;
    TRY(mr_int(r, F_DIVBY, 1, 1 << 16, 128, &divby));
    TRY(mr_int(r, F_VOCAB, 1, 1 << 26, 0, &vocab));
    if (vocab == 0) {
        const char *tok = mr_str(r, F_TOKTYPE), *model = mr_str(r, F_TOKMODEL);
        if (tok && strcmp(tok, "GPT2BPETokenizer") == 0) {
            vocab = 50257;
            launch_note(r->nt.assumed, sizeof r->nt.assumed,
                        "vocabulary 50257 (GPT2BPETokenizer: GPT-2's vocab.json; give "
                        "--vocab-size if yours differs)");
        } else {
            const struct launch_field *f = r->v[F_TOKTYPE].at ? r->v[F_TOKTYPE].at : at;
            return mr_fail_at(r, f,
                              "no --vocab-size: the vocabulary is in the tokenizer%s%s%s, which "
                              "mario-tui does not read: add --vocab-size N (Llama 3: 128256, "
                              "Llama 2: 32000)",
                              tok ? " (" : "", tok ? tok : "", tok ? ")" : "");
            (void)model;
        }
    }
    m->vocab_size = launch_megatron_padded_vocab(vocab, divby, tp);
    mr_family(r, m);
    launch_name_model(m, divby * tp); /* a preset's vocabulary as Megatron pads it */
    if (m->vocab_size < 1)
        return mr_fail_at(r, r->v[F_VOCAB].at ? r->v[F_VOCAB].at : at, "--vocab-size: too large");
    if (m->vocab_size != vocab)
        launch_note(r->nt.assumed, sizeof r->nt.assumed,
                    "vocabulary %d padded to %d (a multiple of --make-vocab-size-divisible-by %d "
                    "x tp %d, as Megatron-LM pads it)",
                    vocab, m->vocab_size, divby, tp);
    const char *norm = mr_str(r, F_NORM);
    if (norm && strcasecmp(norm, "RMSNorm") != 0 && strcasecmp(norm, "LayerNorm") != 0)
        return mr_fail_at(r, r->v[F_NORM].val ? r->v[F_NORM].val : r->v[F_NORM].at,
                          "--normalization: '%s' (expected LayerNorm or RMSNorm)", norm);
    m->paper_stack = false;
    return MT_OK;
}

/* Megatron's FSDP (megatron/training/arguments.py): --use-torch-fsdp2 is ZeRO-3 and "not
 * supported with pipeline parallelism"; Megatron FSDP (--use-megatron-fsdp, earlier
 * --use-custom-fsdp) shards as --data-parallel-sharding-strategy says: no_shard, optim,
 * optim_grads, optim_grads_params (the default), ZeRO 0-3. */
static int mr_zero(struct mread *r, struct config *c, int pp)
{
    static const char *const strategies[] = {"no_shard", "optim", "optim_grads",
                                             "optim_grads_params"};
    const char *st = mr_str(r, F_DP_SHARDING);
    int zero = 3;
    if (st != NULL) {
        zero = -1;
        for (int i = 0; i < 4; i++)
            if (strcmp(st, strategies[i]) == 0)
                zero = i;
        if (zero < 0)
            return mr_fail_at(r, r->v[F_DP_SHARDING].val ? r->v[F_DP_SHARDING].val
                                                         : r->v[F_DP_SHARDING].at,
                              "--data-parallel-sharding-strategy: '%s' (expected no_shard, "
                              "optim, optim_grads or optim_grads_params)", st);
    }
    if (r->v[F_TORCH_FSDP2].given) {
        if (pp > 1)
            return mr_fail_at(r, r->v[F_TORCH_FSDP2].at,
                              "--use-torch-fsdp2 with pipeline parallelism %d: Megatron-LM "
                              "refuses it (arguments.py)", pp);
        c->cluster.zero_stage = 3;
    } else if (r->v[F_MEGATRON_FSDP].given) {
        c->cluster.zero_stage = zero;
    } else if (st != NULL) {
        launch_note(r->nt.unmodelled, sizeof r->nt.unmodelled,
                    "--data-parallel-sharding-strategy %s without --use-megatron-fsdp (ignored, "
                    "as Megatron-LM ignores it)", st);
    }
    return MT_OK;
}

/* Megatron's FP8 flags (megatron/core/transformer/transformer_config.py): --fp8-format
 * (e4m3 | hybrid) turns FP8 on, --fp8-recipe picks the recipe (default delayed),
 * --fp8-param-gather keeps the weights in FP8 (model/fp8.h). */
static int mr_fp8(struct mread *r, struct config *c)
{
    const char *fmt = mr_str(r, F_FP8_FORMAT), *rec = mr_str(r, F_FP8_RECIPE);
    struct mt_err pe;
    if (fmt == NULL) {
        if (rec || r->v[F_FP8_PARAM].given)
            launch_note(r->nt.unmodelled, sizeof r->nt.unmodelled,
                        "%s without --fp8-format (Megatron trains in bf16: so does the plan)",
                        rec ? "--fp8-recipe" : "--fp8-param-gather");
        return MT_OK;
    }
    const struct mval *f = &r->v[F_FP8_FORMAT], *g = &r->v[F_FP8_RECIPE];
    if (fp8_format_parse(fmt, &c->cluster.fp8_format, &pe) != MT_OK)
        return mr_fail_at(r, f->val ? f->val : f->at, "--fp8-format: %s", pe.msg);
    c->cluster.fp8_recipe = FP8_DELAYED; /* TransformerConfig.fp8_recipe's default */
    if (rec && (strcasecmp(rec, "none") == 0 ||
                fp8_recipe_parse(rec, &c->cluster.fp8_recipe, &pe) != MT_OK))
        return mr_fail_at(r, g->val ? g->val : g->at,
                          "--fp8-recipe: '%s' is not modelled (delayed, tensorwise, blockwise or "
                          "mxfp8; a custom quantizer is not)",
                          rec);
    c->cluster.fp8_param_gather = r->v[F_FP8_PARAM].given;
    launch_fp8_device(c, &r->nt);
    return MT_OK;
}

/* The words of a list flag (A_LIST) after r->v[id].at, or its "=value", joined by spaces into
 * buf; false when one is not known (then *bad is it). */
static bool mr_list(struct mread *r, int id, const struct launch_field *f, int n, char *buf,
                    size_t bn, const struct launch_field **bad)
{
    const struct mval *m = &r->v[id];
    int at = (int)(m->at - f);
    buf[0] = '\0';
    for (int i = m->s ? at : at + 1; i < n && (i == at || strncmp(f[i].text, "--", 2) != 0);
         i++) {
        if (f[i].why[0]) {
            *bad = &f[i];
            return false;
        }
        const char *w = i == at ? m->s : f[i].text;
        size_t k = strlen(buf);
        snprintf(buf + k, bn - k, "%s%s", k ? " " : "", w);
    }
    return true;
}

/* --recompute-granularity/-method/-num-layers/-modules into info->ac, checked as Megatron-core's
 * TransformerConfig.__post_init__ checks them (megatron/core/transformer/transformer_config.py):
 * full needs a method, uniform or block, and a layer count between 1 and the layers of a
 * pipeline rank; selective takes no layer count. --recompute-activations is the older
 * spelling of selective. The settings are kept whole for the writer (info->ac), and become the
 * config's recompute where a policy is them (launch_apply_recompute). */
static int mr_recompute(struct mread *r, const struct launch_field *f, int n, int pp,
                        struct config *c, struct launch_info *info)
{
    const char *g = mr_str(r, F_RC_GRAN), *meth = mr_str(r, F_RC_METHOD);
    struct launch_ac *ac = &info->ac;
    memset(ac, 0, sizeof *ac);
    if (g == NULL && !r->v[F_RC_ACT].given) {
        if (meth || r->v[F_RC_LAYERS].given || r->v[F_RC_MODULES].given)
            launch_note(r->nt.unmodelled, sizeof r->nt.unmodelled,
                        "%s without --recompute-granularity (Megatron-LM recomputes nothing)",
                        meth                        ? "--recompute-method"
                        : r->v[F_RC_LAYERS].given ? "--recompute-num-layers"
                                                    : "--recompute-modules");
        return MT_OK;
    }
    const struct launch_field *gat = r->v[F_RC_GRAN].val ? r->v[F_RC_GRAN].val : r->v[F_RC_GRAN].at;
    if (g && r->v[F_RC_GRAN].val && r->v[F_RC_GRAN].val->why[0])
        return mr_fail_at(r, gat, "--recompute-granularity: its value is not known: %s",
                          r->v[F_RC_GRAN].val->why);
    if (g && strcmp(g, "full") != 0 && strcmp(g, "selective") != 0)
        return mr_fail_at(r, gat, "--recompute-granularity: '%s' (expected full or selective)", g);
    bool full = g && strcmp(g, "full") == 0;
    ac->granularity = full ? LAUNCH_RECOMPUTE_FULL : LAUNCH_RECOMPUTE_SELECTIVE;
    info->recompute = ac->granularity;
    const struct launch_field *mat = r->v[F_RC_METHOD].val ? r->v[F_RC_METHOD].val
                                                           : r->v[F_RC_METHOD].at;
    if (meth && mat && mat->why[0])
        return mr_fail_at(r, mat, "--recompute-method: its value is not known: %s", mat->why);
    if (meth && strcmp(meth, "uniform") != 0 && strcmp(meth, "block") != 0)
        return mr_fail_at(r, mat, "--recompute-method: '%s' (expected uniform or block)", meth);
    if (full && meth == NULL)
        return mr_fail_at(r, gat, "--recompute-granularity full needs --recompute-method uniform "
                                  "or block (Megatron-LM refuses it without)");
    int per_rank = c->model.num_layers / (pp > 0 ? pp : 1);
    if (full && !r->v[F_RC_LAYERS].given)
        return mr_fail_at(r, gat, "--recompute-granularity full needs --recompute-num-layers "
                                  "between 1 and the %d layers of a pipeline rank (Megatron-LM "
                                  "refuses it without)", per_rank);
    if (!full && r->v[F_RC_LAYERS].given)
        return mr_fail_at(r, r->v[F_RC_LAYERS].at, "--recompute-num-layers with selective "
                                                   "recompute (Megatron-LM refuses it)");
    if (full) {
        TRY(mr_int(r, F_RC_LAYERS, 1, per_rank > 0 ? per_rank : 1, 0, &ac->num_layers));
        ac->method = strcmp(meth, "block") == 0 ? LAUNCH_RC_BLOCK : LAUNCH_RC_UNIFORM;
    }
    const struct launch_field *bad = NULL;
    if (!full && r->v[F_RC_MODULES].given &&
        !mr_list(r, F_RC_MODULES, f, n, ac->modules, sizeof ac->modules, &bad))
        return mr_fail_at(r, bad, "--recompute-modules: its value is not known: %s", bad->why);
    /* Megatron-core's choices (transformer_config.py recompute_modules, arguments.py) */
    static const char *const modules[] = {"core_attn", "moe_act", "layernorm", "mla_up_proj",
                                          "mlp", "moe", "shared_experts"};
    for (const char *w = ac->modules; *w != '\0';) {
        size_t k = strcspn(w, " ");
        bool known = false;
        for (size_t i = 0; i < sizeof modules / sizeof *modules; i++)
            known = known || (strlen(modules[i]) == k && strncmp(w, modules[i], k) == 0);
        if (!known)
            return mr_fail_at(r, r->v[F_RC_MODULES].at,
                              "--recompute-modules: '%.*s' (Megatron-LM takes core_attn, "
                              "moe_act, layernorm, mla_up_proj, mlp, moe, shared_experts)",
                              (int)(k < 40 ? k : 40), w);
        w += k + (w[k] == ' ');
    }
    if (full && r->v[F_RC_MODULES].given)
        launch_note(r->nt.unmodelled, sizeof r->nt.unmodelled,
                    "--recompute-modules with full recompute (Megatron-LM uses them with "
                    "selective only)");
    /* the config's policy where one is these settings (model/launch.c) */
    launch_apply_recompute(c, ac, per_rank, &r->nt);
    return MT_OK;
}

/* --cp-comm-type: one type for every layer (Megatron's nargs='+' list, arguments.py: "p2p,
 * a2a, allgather or a2a+p2p. If a single string is provided, all layers will share the same
 * communication type"); a list of several types (one a layer) is refused: the plan has one. */
static int mr_cp_comm(struct mread *r, const struct launch_field *f, int n, enum cp_comm_type *out)
{
    const struct mval *m = &r->v[F_CP_COMM];
    *out = CP_COMM_P2P; /* Megatron's default */
    if (!m->given)
        return MT_OK;
    int at = (int)(m->at - f), k = 0;
    /* --cp-comm-type=a2a, or the words after the flag */
    for (int i = m->s ? at : at + 1; i < n && (i == at || strncmp(f[i].text, "--", 2) != 0);
         i++, k++) {
        const struct launch_field *v = &f[i];
        const char *word = i == at ? m->s : v->text;
        enum cp_comm_type t;
        struct mt_err e2 = {0};
        if (v->why[0])
            return mr_fail_at(r, v, "--cp-comm-type: its value is not known: %s", v->why);
        /* Megatron spells all_gather "allgather" */
        const char *s = strcmp(word, "allgather") == 0 ? "all_gather" : word;
        if (config_cp_comm_parse(s, &t, &e2) != MT_OK)
            return mr_fail_at(r, v, "--cp-comm-type: '%s' (expected p2p, allgather, a2a or "
                                    "a2a+p2p)", word);
        if (k > 0 && t != *out)
            return mr_fail_at(r, v, "--cp-comm-type: '%s' after '%s': a type a layer is not "
                                    "modelled (the plan's layers share one); give one",
                              word, config_cp_comm_name(*out));
        *out = t;
    }
    if (k == 0)
        return mr_fail_at(r, m->at, "--cp-comm-type: a value is missing");
    return MT_OK;
}

/* The experts and latent attention (issue 38), as Megatron-LM's flags give them
 * (megatron/training/arguments.py: _add_moe_args, _add_mla_args and their defaults): into
 * model.moe, model.mla and cluster.ep / etp where the cost model has them; what it prices
 * otherwise is said. Flags of either without --num-experts / --multi-latent-attention are
 * ignored by Megatron, and said so. */
static int mr_moe(struct mread *r, int tp, struct config *c)
{
    static const int moe_ids[] = {F_TOPK, F_MOE_FFN, F_MOE_SHARED, F_MOE_FREQ, F_MOE_GG,
                                  F_MOE_DISPATCH, F_MOE_LB, F_MOE_CAP, F_MOE_BIAS,
                                  F_MOE_GROUPS, F_MOE_GTOPK};
    static const int mla_ids[] = {F_QLORA, F_KVLORA, F_QKHEAD, F_QKPOS, F_VHEAD};
    struct moe_spec *m = &c->model.moe;
    int experts = 0, ep = 1, etp = 0, divby = 128;
    TRY(mr_int(r, F_DIVBY, 1, 1 << 16, 128, &divby));
    TRY(mr_int(r, F_EXPERTS, 0, MOE_MAX_EXPERTS, 0, &experts));
    TRY(mr_int(r, F_EP, 1, CONFIG_MAX_DEVICES, 1, &ep));
    TRY(mr_int(r, F_ETP, 1, CONFIG_MAX_DEVICES, 0, &etp));
    if (experts == 0) {
        for (size_t i = 0; i < sizeof moe_ids / sizeof moe_ids[0]; i++)
            if (r->v[moe_ids[i]].given)
                launch_note(r->nt.unmodelled, sizeof r->nt.unmodelled,
                            "%s without --num-experts (Megatron ignores it)",
                            r->v[moe_ids[i]].at->text);
        /* an ep or etp without experts: the validation names them (an etp of 1 or tp
         * changes nothing on a dense model, as in Megatron) */
        c->cluster.ep = ep > 1 ? ep : 0;
        c->cluster.etp = etp > 1 && etp != tp ? etp : 0;
    } else {
        m->num_experts = experts;
        c->cluster.ep = ep > 1 ? ep : 0;
        c->cluster.etp = etp; /* 0: tp, Megatron's default */
        TRY(mr_int(r, F_TOPK, 1, MOE_MAX_EXPERTS, 2, &m->router_topk));
        TRY(mr_int(r, F_MOE_FFN, 1, 1 << 24, c->model.ffn_hidden_size, &m->ffn_hidden_size));
        TRY(mr_int(r, F_MOE_SHARED, 0, 1 << 24, 0, &m->shared_ffn));
        const char *freq = mr_str(r, F_MOE_FREQ);
        if (freq != NULL) {
            char why[200];
            if (launch_moe_layer_freq(freq, c->model.num_layers, &m->first_k_dense,
                                      &m->layer_freq, why, sizeof why) != 0)
                return mr_fail_at(r, r->v[F_MOE_FREQ].val ? r->v[F_MOE_FREQ].val
                                                          : r->v[F_MOE_FREQ].at,
                                  "--moe-layer-freq '%s': %s", freq, why);
            if (m->layer_freq == 1)
                m->layer_freq = 0;
        }
        const char *cap = mr_str(r, F_MOE_CAP);
        if (cap != NULL) {
            char *end;
            double f = strtod(cap, &end);
            if (*end != '\0' || !(f > 0))
                return mr_fail_at(r, r->v[F_MOE_CAP].at,
                                  "--moe-expert-capacity-factor: '%s' is not a factor > 0", cap);
            m->capacity_factor = f;
        }
        m->router_bias = r->v[F_MOE_BIAS].given;
        if (!r->v[F_MOE_GG].given)
            launch_note(r->nt.unmodelled, sizeof r->nt.unmodelled,
                        "no --moe-grouped-gemm (the experts run one after another, "
                        "SequentialMLP; planned as grouped GEMMs)");
        const char *d = mr_str(r, F_MOE_DISPATCH);
        if (d == NULL || strcmp(d, "alltoall") != 0)
            launch_note(r->nt.unmodelled, sizeof r->nt.unmodelled,
                        "--moe-token-dispatcher-type %s (planned as the alltoall dispatcher)",
                        d ? d : "allgather (Megatron's default)");
        const char *lb = mr_str(r, F_MOE_LB);
        if (lb != NULL && strcmp(lb, "sinkhorn") == 0)
            launch_note(r->nt.unmodelled, sizeof r->nt.unmodelled,
                        "--moe-router-load-balancing-type sinkhorn (its iterations are not "
                        "priced)");
        int groups = 1, keep = 1;
        TRY(mr_int(r, F_MOE_GROUPS, 1, MOE_MAX_EXPERTS, 1, &groups));
        TRY(mr_int(r, F_MOE_GTOPK, 1, MOE_MAX_EXPERTS, groups, &keep));
        if (groups > 1 && keep < groups)
            launch_note(r->nt.unmodelled, sizeof r->nt.unmodelled,
                        "--moe-router-num-groups %d --moe-router-group-topk %d (node-limited "
                        "routing: the all-to-all priced without the limit)",
                        groups, keep);
    }
    TRY(mr_int(r, F_MTP, 0, 16, 0, &m->mtp_layers));
    if (!r->v[F_MLA].given) {
        for (size_t i = 0; i < sizeof mla_ids / sizeof mla_ids[0]; i++)
            if (r->v[mla_ids[i]].given)
                launch_note(r->nt.unmodelled, sizeof r->nt.unmodelled,
                            "%s without --multi-latent-attention (Megatron ignores it)",
                            r->v[mla_ids[i]].at->text);
        if (experts > 0)
            launch_name_model(&c->model, divby * tp); /* a preset's, padded as Megatron does */
        return MT_OK;
    }
    /* MLA: Megatron's defaults where a flag is not given (q_lora_rank None: q projected
     * directly; kv_lora_rank 32, qk_head_dim 128, qk_pos_emb_head_dim 64, v_head_dim 128) */
    struct mla_spec *a = &c->model.mla;
    TRY(mr_int(r, F_QLORA, 1, 1 << 20, 0, &a->q_lora_rank));
    TRY(mr_int(r, F_KVLORA, 1, 1 << 20, 32, &a->kv_lora_rank));
    TRY(mr_int(r, F_QKHEAD, 1, 1 << 16, 128, &a->qk_nope_head_dim));
    TRY(mr_int(r, F_QKPOS, 1, 1 << 16, 64, &a->qk_rope_head_dim));
    TRY(mr_int(r, F_VHEAD, 1, 1 << 16, 128, &a->v_head_dim));
    if (!r->v[F_QKNORM].given)
        launch_note(r->nt.unmodelled, sizeof r->nt.unmodelled,
                    "--multi-latent-attention without --qk-layernorm (the latents' RMSNorms "
                    "are planned anyway)");
    /* with MLA, --qk-layernorm is the latents' norms (MLASelfAttention's q_layernorm and
     * kv_layernorm), which the MLA ops hold: not a norm over the heads */
    c->model.qk_norm = QK_NORM_NONE;
    c->model.num_key_value_heads = 0;
    c->model.head_dim = 0;
    launch_name_model(&c->model, divby * tp); /* a preset's, padded as Megatron does */
    return MT_OK;
}

int launch_read_megatron(const char *text, size_t n, const char *name,
                         const struct launch_read_opts *o, struct config *out,
                         struct launch_info *info, struct mt_err *e)
{
    struct launch_shell sh;
    TRY(launch_shell_run(text, n, name, &sh, e));
    struct mread *r = calloc(1, sizeof *r);
    if (r == NULL) {
        launch_shell_fini(&sh);
        return err_set(e, MT_ENOMEM, "%s: out of memory", name);
    }
    r->name = name;
    r->e = e;
    struct launch_info li = {.kind = LAUNCH_MEGATRON};
    struct config c;
    config_default(&c);
    int rc = MT_OK;
    /* the script: the first word that names a .py, or none (a pasted list of flags) */
    int script = -1;
    for (int i = 0; i < sh.n && script < 0; i++) {
        size_t k = strlen(sh.f[i].text);
        if (k > 3 && strcmp(sh.f[i].text + k - 3, ".py") == 0)
            script = i;
    }
    if (script < 0 && strncmp(sh.f[0].text, "--", 2) != 0)
        rc = mr_fail_at(r, &sh.f[0],
                        "the launch runs no .py script ('%s ...'): mario-tui reads "
                        "pretrain_gpt.py's flags, or a list of them alone",
                        sh.f[0].text);
    struct mlaunch ml;
    if (rc == MT_OK)
        rc = ml_count(r, &sh, script, &ml);
    if (rc == MT_OK)
        rc = mr_flags(r, sh.f + script + 1, sh.n - script - 1);
    int tp = 1, pp = 1, cp = 1, vl = 0, vs = 0, mbs = 1, gbs = 0;
    enum cp_comm_type cp_comm = CP_COMM_P2P;
    if (rc == MT_OK)
        rc = mr_int(r, F_TP, 1, CONFIG_MAX_DEVICES, 1, &tp);
    if (rc == MT_OK)
        rc = mr_int(r, F_CP, 1, CONFIG_MAX_DEVICES, 1, &cp);
    if (rc == MT_OK)
        rc = mr_cp_comm(r, sh.f + script + 1, sh.n - script - 1, &cp_comm);
    if (rc == MT_OK)
        rc = mr_int(r, F_PP, 1, CONFIG_MAX_DEVICES, 1, &pp);
    if (rc == MT_OK)
        rc = mr_int(r, F_VPP_LAYERS, 1, CONFIG_MAX_LAYERS, 0, &vl);
    if (rc == MT_OK)
        rc = mr_int(r, F_VPP_STAGES, 1, CONFIG_MAX_CHUNKS, 0, &vs);
    if (rc == MT_OK)
        rc = mr_int(r, F_MBS, 1, 1 << 20, 1, &mbs);
    if (rc == MT_OK)
        rc = mr_int(r, F_GBS, 1, 1 << 30, 0, &gbs);
    if (rc == MT_OK)
        rc = mr_model(r, tp, &c);
    if (rc == MT_OK)
        rc = mr_moe(r, tp, &c);
    /* the GPUs: --devices, else what the file launches */
    li.launched_gpus = rc == MT_OK ? ml.gpus : 0;
    int world = o->devices > 0 ? o->devices : ml.gpus;
    if (rc == MT_OK && world == 0)
        rc = ml.unknown
                 ? mr_fail_at(r, ml.unknown, "%s: the GPU count is not known%s%s: give --devices N",
                              ml.unknown->text, ml.unknown->why[0] ? ": " : "", ml.unknown->why)
                 : mr_fail_at(r, &sh.f[0],
                              "the file does not say how many GPUs it starts (no torchrun "
                              "--nproc-per-node/--nnodes, srun, or #SBATCH --nodes/"
                              "--ntasks-per-node): give --devices N");
    if (rc == MT_OK && o->devices > 0 && ml.gpus > 0 && ml.gpus != o->devices)
        launch_note(r->nt.assumed, sizeof r->nt.assumed,
                    "the file starts %d GPUs (%s); planned for --devices %d", ml.gpus, ml.how,
                    o->devices);
    /* Megatron's world is tp x cp x pp x dp (parallel_state.initialize_model_parallel) */
    long grid = (long)tp * cp * pp;
    char gridname[64];
    if (cp > 1)
        snprintf(gridname, sizeof gridname, "TP %d x CP %d x PP %d", tp, cp, pp);
    else
        snprintf(gridname, sizeof gridname, "TP %d x PP %d", tp, pp);
    if (rc == MT_OK && grid > world)
        rc = mr_fail_at(r, &sh.f[0],
                        "the launch starts %d GPUs (%s) for %s = %ld: give --devices "
                        "N (a multiple of %ld) to plan it",
                        world, o->devices > 0 ? "--devices" : ml.how, gridname, grid, grid);
    if (rc == MT_OK && world % grid != 0)
        rc = mr_fail_at(r, &sh.f[0],
                        "%d GPUs (%s) are not a multiple of %s = %ld (Megatron-LM "
                        "would refuse to start): give --devices N",
                        world, o->devices > 0 ? "--devices" : ml.how, gridname, grid);
    if (rc == MT_OK) {
        c.cluster.tp = tp;
        c.cluster.cp = cp;
        if (cp > 1) /* at cp 1 no K/V move: the config's default stays */
            c.cluster.cp_comm_type = cp_comm;
        c.cluster.dp = (int)(world / grid);
        config_set_pp(&c, pp);
        c.micro_batch_size = mbs;
        c.global_batch_size = gbs > 0 ? gbs : mbs * c.cluster.dp; /* Megatron's default */
        c.num_microbatches = 0;
        c.sequence_parallel = r->v[F_SP].given && tp > 1; /* off at tp 1, as Megatron turns it */
        c.distributed_optimizer = r->v[F_DISTOPT].given;
        /* config_validate refuses these without sequence parallelism and the distributed
         * optimizer, as Megatron-LM's validate_args does */
        c.cluster.tp_comm_overlap = r->v[F_TP_OVERLAP].given && tp > 1;
        c.cluster.overlap_grad_reduce = r->v[F_GRAD_OVERLAP].given;
        c.cluster.overlap_param_gather = r->v[F_PARAM_OVERLAP].given;
        if (rc == MT_OK)
            rc = mr_zero(r, &c, pp);
        c.scheme = SCHEME_V;
        c.chunks = 2;
        if (vl > 0 && vs > 0)
            rc = mr_fail_at(r, r->v[F_VPP_STAGES].at,
                            "--num-virtual-stages-per-pipeline-rank and "
                            "--num-layers-per-virtual-pipeline-stage: give one");
        int chunks = vs;
        if (rc == MT_OK && vl > 0) {
            if (c.model.num_layers % (pp * vl) != 0)
                rc = mr_fail_at(r, r->v[F_VPP_LAYERS].at,
                                "--num-layers-per-virtual-pipeline-stage %d: %d layers are not "
                                "PP %d x %d",
                                vl, c.model.num_layers, pp, vl);
            else
                chunks = c.model.num_layers / (pp * vl);
        }
        if (rc == MT_OK && chunks > 1) {
            if (pp == 1)
                rc = mr_fail_at(r, r->v[vl ? F_VPP_LAYERS : F_VPP_STAGES].at,
                                "virtual pipeline stages need --pipeline-model-parallel-size > "
                                "1");
            c.scheme = SCHEME_W; /* Megatron's interleaved 1F1B */
            c.chunks = chunks;
        }
        const char *ab = mr_str(r, F_ATTN);
        if (ab && (strcmp(ab, "unfused") == 0 || strcmp(ab, "local") == 0))
            c.attention = ATTN_EAGER; /* the s x s scores are kept */
        if (!r->v[F_BF16].given && !r->v[F_FP16].given)
            launch_note(r->nt.unmodelled, sizeof r->nt.unmodelled,
                        "fp32 training (no --bf16 or --fp16): planned as bf16 mixed precision");
        if (rc == MT_OK)
            rc = mr_recompute(r, sh.f + script + 1, sh.n - script - 1, pp, &c, &li);
        if (rc == MT_OK)
            rc = mr_fp8(r, &c);
        snprintf(c.source, sizeof c.source, "%s", name);
    }
    if (rc == MT_OK && config_validate(&c, e) != MT_OK)
        rc = err_wrap(e, "%s (read as Megatron-LM flags)", name);
    if (rc == MT_OK) {
        launch_notes_finish(&r->nt, &li);
        *out = c;
        *info = li;
    }
    free(r);
    launch_shell_fini(&sh);
    return rc;
}
