/* exec/interp_check.c: what is checked and derived before a plan runs (exec/interp.h): the
 * model's dims from a config, the plan's fitness for the executor and for NCCL's in-order
 * matching, the options, the fingerprint the ranks agree on, and the executor's exact costs.
 * None of it touches a running rank's state (exec/interp.c). */
#include <config.h>
#include "exec/interp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/backend.h"
#include "exec/dataset.h"
#include "exec/xformer.h"
#include "exec/xformer_moe.h"
#include "model/config.h"
#include "model/cost.h"
#include "model/scheme_registry.h"
#include "sim/core/memory.h"
#include "sim/schemes/scheme.h"
#include "sim/plan/validate.h"
#include "sim/core/recv_order.h"
#include "sim/core/vpipe.h"
#include "util/err.h"

#define INTERP_MAX_TAG 32767 /* the least MPI_TAG_UB the standard allows */

void interp_opts_default(struct interp_opts *o)
{
    memset(o, 0, sizeof *o);
    o->steps = 1;
    o->lr = 1e-3f;
    o->beta1 = 0.9f;
    o->beta2 = 0.95f;
    o->eps = 1e-8f;
    o->weight_decay = 0.1f;
    o->seed = 1337;
    o->timeout_s = 8.0;
    fault_from_env(&o->fault);
}

/* The executor's two blocks (exec/xformer.h), each exactly as a config's family parts say: GPT
 * (GELU, LayerNorm, biases on every linear layer, multi-head attention; the head untied, see
 * exec/xformer_cpu.c) and LLaMA (SwiGLU, RMSNorm, no biases, GQA, an untied head, RoPE). A
 * model that is neither names the part the executor lacks. model/cost.c's executor bytes take
 * the LLaMA layout for SwiGLU, which only the LLaMA block passes here. */
static int interp_block(const struct model_spec *m, enum xformer_block *out, struct mt_err *e)
{
    enum mlp_kind mlp = config_mlp(m);
    enum norm_kind norm = config_norm(m);
    enum bias_kind bias = config_bias(m);
    int kv = config_kv_heads(m);
    if (m->qk_norm)
        return err_set(e, MT_EUNSUPPORTED, "model %s: qk_norm: the executor's blocks have none",
                       m->name);
    if (m->num_attention_heads > 0 && config_head_dim(m) * m->num_attention_heads != m->hidden_size)
        return err_set(e, MT_EUNSUPPORTED,
                       "model %s: head_dim %d x %d heads != hidden_size %d: the executor's "
                       "heads split the hidden state",
                       m->name, config_head_dim(m), m->num_attention_heads, m->hidden_size);
    if (mlp == MLP_SWIGLU) {
        if (norm != NORM_RMSNORM || bias != BIAS_NONE || config_tied_embeddings(m))
            return err_set(e, MT_EUNSUPPORTED,
                           "model %s: the executor's SwiGLU block is LLaMA's (RMSNorm, no "
                           "biases, an untied head), not this model's %s%s%s",
                           m->name, norm != NORM_RMSNORM ? "LayerNorm " : "",
                           bias != BIAS_NONE ? "biases " : "",
                           config_tied_embeddings(m) ? "tied embeddings" : "");
        *out = XFORMER_BLOCK_LLAMA;
        return MT_OK;
    }
    if (mlp != MLP_GELU)
        return err_set(e, MT_EUNSUPPORTED,
                       "model %s: mlp %s: the executor implements GELU (GPT) and SwiGLU (LLaMA)",
                       m->name, mlp == MLP_GEGLU ? "GEGLU" : "?");
    if (norm != NORM_LAYERNORM || bias != BIAS_ALL || kv != m->num_attention_heads)
        return err_set(e, MT_EUNSUPPORTED,
                       "model %s: the executor's GELU block is GPT's (LayerNorm, biases on every "
                       "linear layer, multi-head attention), not this model's %s%s%s",
                       m->name, norm != NORM_LAYERNORM ? "RMSNorm " : "",
                       bias != BIAS_ALL ? "partial or no biases " : "",
                       kv != m->num_attention_heads ? "grouped-query attention" : "");
    *out = XFORMER_BLOCK_GPT;
    return MT_OK;
}

/* A mixture of experts as the executor runs it (exec/xformer_moe.h): every block's MLP a MoE
 * (no dense layers between), dropless, softmax top-k routing, no load-balancing loss (the
 * config has no coefficient key), and the expert-parallel group folded into data
 * parallelism as Megatron folds it (ep x expert dp = dp at tp 1), with ep = dp here: the ranks
 * of one pipeline device across the dp replicas are its ep group, attention and router
 * replicated over it (their gradients all-reduced over it, AR), each expert on one of them
 * (no expert dp). Whatever else a config asks is refused with its name. */
static int interp_moe_dims(const struct config *c, struct xformer_dims *d, struct mt_err *e)
{
    const struct moe_spec *mo = &c->model.moe;
    const char *name = c->model.name;
    int ep = c->cluster.ep > 0 ? c->cluster.ep : 1;
    if (mo->num_experts <= 0) {
        if (ep > 1)
            return err_set(e, MT_EINVAL, "cluster.ep %d: model %s has no experts", ep, name);
        return MT_OK;
    }
    const char *missing = NULL;
    if (mo->layer_freq > 1 || mo->first_k_dense > 0)
        missing = "dense layers between MoE ones";
    else if (mo->mtp_layers > 0)
        missing = "multi-token prediction";
    else if (mo->capacity_factor > 0)
        missing = "an expert capacity (token dropping)";
    else if (mo->router_bias)
        missing = "the router's score-correction bias";
    else if (mo->fp8_dispatch)
        missing = "an FP8 dispatch";
    else if (c->model.mla.kv_lora_rank > 0)
        missing = "multi-head latent attention";
    else if (d->block != XFORMER_BLOCK_LLAMA)
        missing = "experts on the GPT block";
    if (missing)
        return err_set(e, MT_EUNSUPPORTED, "model %s: %s: the executor's MoE block has none", name,
                       missing);
    if (c->cluster.etp > 1)
        return err_set(e, MT_EUNSUPPORTED, "cluster.etp %d: the executor's experts are whole",
                       c->cluster.etp);
    if (ep != (c->cluster.dp > 0 ? c->cluster.dp : 1))
        return err_set(e, MT_EUNSUPPORTED,
                       "cluster.ep %d, cluster.dp %d: the executor folds ep into dp with no expert "
                       "data parallelism: set --ep equal to --dp",
                       ep, c->cluster.dp);
    d->experts = mo->num_experts;
    d->topk = mo->router_topk;
    d->moe_ffn = mo->ffn_hidden_size;
    d->shared_ffn = mo->shared_ffn;
    d->norm_topk = 1; /* Mixtral's and Qwen3-MoE's renormalised gates (model/moe.h has no key) */
    d->ep = ep;
    return MT_OK;
}

int interp_dims(const struct config *c, struct xformer_dims *d, int *B, int *T, struct mt_err *e)
{
    const struct model_spec *m = &c->model;
    enum xformer_block block = XFORMER_BLOCK_GPT;
    TRY(interp_block(m, &block, e));
    if (c->cluster.tp != 1)
        return err_set(e, MT_EUNSUPPORTED,
                       "cluster.tp %d: the executor runs pipeline and data parallelism only",
                       c->cluster.tp);
    if (m->vocab_size < DATASET_VOCAB)
        return err_set(e, MT_EINVAL,
                       "model.vocab_size %d: the executor trains on byte-level tokens and needs "
                       "at least %d",
                       m->vocab_size, DATASET_VOCAB);
    /* the position table (GPT): the largest length the config allows (model/seqlen.h); LLaMA's
     * RoPE has none, the same figure bounds its sequence */
    *d = (struct xformer_dims){.vocab = m->vocab_size,
                               .max_seq = c->seqlen.max_positions > 0 ? c->seqlen.max_positions
                                                                      : m->seq_length,
                               .channels = m->hidden_size,
                               .heads = m->num_attention_heads,
                               .ffn = m->ffn_hidden_size,
                               .layers = m->num_layers,
                               .block = block,
                               .kv_heads = block == XFORMER_BLOCK_LLAMA ? config_kv_heads(m) : 0};
    TRY(interp_moe_dims(c, d, e));
    *B = c->micro_batch_size;
    *T = m->seq_length;
    if (xformer_dims_check(d, e) != MT_OK)
        return err_wrap(e, "model %s", m->name);
    return MT_OK;
}

/* Whether a device's stage has more than one replica across the job. */
static bool interp_replicated(const struct plan *p)
{
    return scheme_registry_get(plan_geom(p)->scheme)->replicas > 1 ||
           plan_config(p)->cluster.dp > 1;
}

int interp_check(const struct plan *p, int ranks, struct mt_err *e)
{
    const struct config *c = plan_config(p);
    const struct plan_geom *g = plan_geom(p);
    struct plan_geom want;
    TRY(scheme_geom(c, &want, e));
    if (want.scheme != g->scheme || want.devices != g->devices || want.parts != g->parts ||
        want.stages != g->stages || want.mbs != g->mbs)
        return err_set(e, MT_EINVAL,
                       "the plan (%s, %d devices, %d parts, %d stages, %d micro-batches) does not "
                       "fit its config (%s, %d, %d, %d, %d)",
                       config_scheme_name(g->scheme), g->devices, g->parts, g->stages, g->mbs,
                       config_scheme_name(want.scheme), want.devices, want.parts, want.stages,
                       want.mbs);
    struct xformer_dims d;
    int B, T;
    TRY(interp_dims(c, &d, &B, &T, e));
    TRY(validate_plan(p, e));
    if (2L * g->stages * g->mbs > INTERP_MAX_TAG)
        return err_set(e, MT_EINVAL,
                       "%d stages x %d micro-batches: over the %d message tags MPI guarantees",
                       g->stages, g->mbs, INTERP_MAX_TAG);
    bool replicated = interp_replicated(p);
    if (d.experts > 0 &&
        (scheme_registry_get(g->scheme)->replicas > 1 || config_scheme_async(g->scheme)))
        return err_set(e, MT_EUNSUPPORTED,
                       "%s with experts: the executor's ep group is the dp replicas of one "
                       "device, which a scheme with its own replicas or without a flush breaks",
                       config_scheme_name(g->scheme));
    bool async = config_scheme_async(g->scheme);
    int K = interp_plan_iterations(p), Nit = g->mbs / K;
    int U = async && c->update_interval > 0 ? c->update_interval : 1;
    for (int dv = 0; dv < g->devices; dv++) {
        int os[CONFIG_MAX_CHUNKS] = {0}, ar[CONFIG_MAX_CHUNKS] = {0};
        int since[CONFIG_MAX_CHUNKS] = {0}; /* backwards since the part's last OS */
        for (int i = 0; i < plan_len(p, dv); i++) {
            const struct instr *in = plan_at(p, dv, i);
            char what[32];
            plan_instr_label(p, in, what, sizeof what);
            if ((in->op == OP_B || in->op == OP_W) && async)
                return err_set(e, MT_EUNSUPPORTED,
                               "device %d, instruction %d (%s): split backward (B/W) in an "
                               "asynchronous plan: the executor's weight versions follow whole "
                               "backwards",
                               dv, i, what);
            if (!async && in->step != 0)
                return err_set(e, MT_EUNSUPPORTED,
                               "device %d, instruction %d (%s): instructions of step %d in a "
                               "synchronous plan (%s flushes every iteration)",
                               dv, i, what, in->step, config_scheme_name(g->scheme));
            if (async && in->mb >= 0 && in->step != in->mb / Nit)
                return err_set(e, MT_EINVAL,
                               "device %d, instruction %d (%s): step %d, but micro-batch %d "
                               "belongs to iteration %d of %d micro-batches",
                               dv, i, what, in->step, in->mb, in->mb / Nit, Nit);
            if ((in->op == OP_CFW || in->op == OP_RC) && d.experts > 0)
                return err_set(e, MT_EUNSUPPORTED,
                               "device %d, instruction %d (%s): checkpointing a MoE stage is not "
                               "implemented in the executor (its recompute would repeat the "
                               "token all-to-all): run the plan without checkpointing",
                               dv, i, what);
            if (in->op == OP_BW)
                since[in->part]++;
            if (in->op == OP_OS) {
                /* an update's gradient is the mean of U backwards (the loss scale) */
                if (async && since[in->part] != U)
                    return err_set(e, MT_EINFEASIBLE,
                                   "device %d, instruction %d (%s): the update covers %d "
                                   "backwards; the executor needs exactly U = %d (its gradient "
                                   "is their mean): make the plan's %d micro-batches (iterations "
                                   "x micro-batches) a multiple of --update-interval",
                                   dv, i, what, since[in->part], U, g->mbs);
                since[in->part] = 0;
                os[in->part]++;
            }
            if (in->op == OP_AR)
                ar[in->part]++;
        }
        for (int part = 0; part < g->parts; part++) {
            if (async ? os[part] < 1 || since[part] != 0 : os[part] != 1)
                return err_set(e, MT_EINFEASIBLE,
                               "device %d part %d: %d optimizer steps (OS) in the plan%s, the "
                               "executor needs %s",
                               dv, part, os[part],
                               since[part] ? " and backwards after the last" : "",
                               async ? "one after every U backwards" : "exactly one");
            int want_ar = replicated ? (async ? os[part] : 1) : 0;
            if (ar[part] != want_ar)
                return err_set(e, MT_EINFEASIBLE,
                               "device %d part %d: %d allreduces (AR); the stage has %s replica, "
                               "so the executor needs %d",
                               dv, part, ar[part], replicated ? "more than one" : "one", want_ar);
        }
    }
    int need = g->devices * c->cluster.dp;
    if (ranks != need)
        return err_set(e, MT_EINVAL,
                       "the plan needs %d MPI ranks (pp %d x dp %d), the job has %d; run with "
                       "--np %d",
                       need, g->devices, c->cluster.dp, ranks, need);
    return MT_OK;
}

int interp_plan_iterations(const struct plan *p)
{
    const struct plan_geom *g = plan_geom(p);
    if (!config_scheme_async(g->scheme))
        return 1;
    int N = config_microbatches(plan_config(p));
    return N > 0 && g->mbs % N == 0 ? g->mbs / N : 1;
}

int interp_check_opts(const struct plan *p, const struct interp_opts *o, struct mt_err *e)
{
    const struct plan_geom *g = plan_geom(p);
    int K = interp_plan_iterations(p);
    const char *scheme = config_scheme_name(g->scheme);
    if (o->stream != NULL && plan_config(p)->model.moe.num_experts > 0)
        return err_set(e, MT_EUNSUPPORTED,
                       "--lengths with experts: the online memory predictor reads a layer's "
                       "bytes off the allocator, and a MoE layer's depend on its routing");
    if (o->steps < 1 || o->steps % K != 0)
        return err_set(e, MT_EINVAL,
                       "--steps %d: the %s plan spans %d iterations and runs whole; give a "
                       "multiple of %d",
                       o->steps, scheme, K, K);
    bool async = config_scheme_async(g->scheme);
    if (o->lr_warmup < 0 || (o->lr_warmup > 0 && !async))
        return err_set(e, MT_EINVAL,
                       "--lr-reschedule: PipeMare's learning-rate rescheduling is for "
                       "asynchronous schemes (Async, PipeDream); %s has no stale weights",
                       scheme);
    /* the correction is for stale weights: an async scheme that does not stash them */
    const struct scheme_record *rec = scheme_registry_get(g->scheme);
    if (o->correction_decay != 0 && !(rec->async && !rec->stash))
        return err_set(e, MT_EINVAL,
                       "--discrepancy-correction: PipeMare's discrepancy correction is for "
                       "Async; %s",
                       rec->stash ? "PipeDream's backward already reads the weights its forward read"
                                  : "a synchronous scheme has no stale weights");
    if (o->stream != NULL && async)
        return err_set(e, MT_EINVAL,
                       "variable-length batches (--lengths) run synchronous schemes; %s spans "
                       "iterations",
                       scheme);
    if (o->correction_decay < 0 || o->correction_decay >= 1)
        return err_set(e, MT_EINVAL, "--discrepancy-correction %g: the decay D is in (0, 1)",
                       o->correction_decay);
    return MT_OK;
}

/* FNV-1a, 64 bits: a fingerprint, not a defence against forgery. */
static uint64_t interp_fnv(uint64_t h, const void *data, size_t n)
{
    const unsigned char *b = data;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

uint64_t interp_fingerprint(const struct plan *p, const struct interp_opts *o, const char *backend)
{
    char *json = plan_to_json(p);
    uint64_t h = interp_fnv(14695981039346656037ull, json, strlen(json));
    free(json);
    /* the options that change what is computed, each as text so padding plays no part */
    char opts[512];
    int n = snprintf(opts, sizeof opts, "%d %.9g %.9g %.9g %.9g %.9g %llu %d %.17g %s", o->steps,
                     (double)o->lr, (double)o->beta1, (double)o->beta2, (double)o->eps,
                     (double)o->weight_decay, (unsigned long long)o->seed, o->lr_warmup,
                     o->correction_decay, backend ? backend : "");
    return interp_fnv(h, opts, (size_t)n < sizeof opts ? (size_t)n : sizeof opts - 1);
}

bool interp_plan_has_copy(const struct plan *p)
{
    for (int dv = 0; dv < plan_devices(p); dv++)
        if (mem_list_has_copy(plan_instrs(p, dv), plan_len(p, dv)))
            return true;
    return false;
}

int interp_check_backend(const struct plan *p, const struct backend_ops *b, struct mt_err *e)
{
    if (plan_config(p)->model.moe.num_experts > 0 && b != &backend_cpu_ops)
        return err_set(e, MT_EUNSUPPORTED,
                       "model %s has experts: the executor's MoE block runs on the cpu backend "
                       "only (--backend cpu)",
                       plan_config(p)->model.name);
    if (b->copy_start == NULL && interp_plan_has_copy(p))
        return err_set(e, MT_EUNSUPPORTED,
                       "the plan offloads activations (OF/RL) and the %s backend does not run "
                       "copies yet; run it with --backend cpu, or a plan without offload",
                       b->name);
    return MT_OK;
}

int interp_check_nccl(const struct plan *p, struct mt_err *e)
{
    /* NCCL matches the messages between two ranks in issue order, without tags */
    int a, b, i, j;
    if (plan_receive_mismatch(p, &a, &b, &i, &j))
        return err_set(e, MT_EUNSUPPORTED,
                       "device %d sends to device %d in another order than it receives "
                       "(instruction %d there, %d here): NCCL matches messages in order; "
                       "use --backend cuda (MPI, tagged)",
                       a, b, i, j);
    return MT_OK;
}

int interp_costs(const struct plan *p, struct cost_model *out, struct mt_err *e)
{
    const struct config *c = plan_config(p);
    struct xformer_dims d;
    int B, T;
    TRY(interp_dims(c, &d, &B, &T, e));
    TRY(scheme_costs(c, out, e));
    out->unit = false;
    for (int s = 0; s < out->num_stages; s++) {
        struct stage_cost *st = &out->stage[s];
        cost_stage_bytes_exec(c, T, st);
        if (d.experts > 0) {
            /* the MoE block's own figures: its parameters (E / ep experts a rank) and what a
             * forward's MoE handle keeps per layer at balanced routing; the dense layout above
             * still counts the block's (unused) dense MLP buffers, which the executor holds */
            struct moe_dims md = {d.channels, d.experts, d.topk, d.moe_ffn, d.shared_ffn,
                                  d.norm_topk, 0.0f};
            double moe = (double)moe_act_bytes_balanced(&md, d.ep, B * T);
            st->static_bytes = 16.0 * (double)xformer_param_count(&d, st->first_layer,
                                                                  st->num_layers);
            st->act += st->num_layers * moe;
            st->layer_act += moe;
            /* transients at balanced routing (R = N k copies): a forward holds the received
             * rows and the outputs going home at once (one R x C over what it keeps); a
             * backward the gates' gradient, two R x C gradient buffers and R x 2F (the
             * expert GEMMs' scratch) besides backward_run's own */
            double R = (double)B * T * d.topk;
            st->fw_work_bytes += 4.0 * R * d.channels;
            st->bw_work_bytes += 4.0 * (R + 2 * R * d.channels + 2 * R * d.moe_ffn);
        }
    }
    return MT_OK;
}

int interp_a2a_simulated(const struct plan *p, int dev, double *us, double *bytes,
                         struct mt_err *e)
{
    const struct config *c = plan_config(p);
    const struct plan_geom *g = plan_geom(p);
    *us = *bytes = 0;
    if (c->model.moe.num_experts <= 0)
        return MT_OK;
    struct cost_model cost;
    TRY(interp_costs(p, &cost, e));
    int layers = 0;
    for (int part = 0; part < g->parts; part++)
        layers += cost.stage[vpipe_stage(g, dev, 0, part)].num_layers;
    cost_model_fini(&cost);
    double layer_bytes = 0, layer_us = moe_block_a2a_us(c, &layer_bytes);
    *us = layer_us * layers * g->mbs;
    *bytes = layer_bytes * layers * g->mbs;
    return MT_OK;
}

void interp_result_fini(struct interp_result *r)
{
    if (r == NULL)
        return;
    free(r->loss);
    free(r->step_s);
    free(r->dev);
    memset(r, 0, sizeof *r);
}

double interp_mean_step(const struct interp_result *r)
{
    int from = r->steps > 1 ? 1 : 0;
    double sum = 0.0;
    for (int k = from; k < r->steps; k++)
        sum += r->step_s[k];
    return r->steps > from ? sum / (r->steps - from) : 0.0;
}
