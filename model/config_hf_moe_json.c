/* model/config_hf_moe_json.c: the experts, latent attention and multi-token prediction of a
 * Hugging Face MoE config.json (issue 38 item 6), after transformers' configuration_*.py and
 * modeling_*.py files (and DeepSeek's own modeling_deepseek.py in its Hub repositories):
 *
 *   mixtral      MixtralSparseMoeBlock: num_local_experts experts of intermediate_size, top
 *                num_experts_per_tok, every layer; no shared expert
 *   qwen3_moe    Qwen3MoeSparseMoeBlock: num_experts of moe_intermediate_size; layer i sparse
 *                when i is not in mlp_only_layers and (i + 1) % decoder_sparse_step == 0
 *                (dense layers take intermediate_size); no shared expert
 *   qwen2_moe    the same pattern, plus a shared expert of shared_expert_intermediate_size
 *                behind a sigmoid gate (shared_expert_gate, h -> 1): refused, the cost model's
 *                shared experts have no gate
 *   deepseek_v2  DeepseekV2MoE: n_routed_experts of moe_intermediate_size, n_shared_experts
 *   deepseek_v3  more of the same width, top num_experts_per_tok, the first
 *                first_k_dense_replace layers dense (intermediate_size), then every layer with
 *                layer_idx % moe_layer_freq == 0 (only 1 is the cost model's pattern);
 *                multi-head latent attention (q_lora_rank, null: q projected directly;
 *                kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim, v_head_dim);
 *                num_nextn_predict_layers MTP modules (V3); topk_method "noaux_tc" (V3) adds
 *                the per-expert e_score_correction_bias; "group_limited_greedy" and
 *                "noaux_tc" with n_group > topk_group limit each token to topk_group of the
 *                n_group expert groups (DeepSeek-V3 §2.1.2: 4 nodes): the experts' FLOPs and
 *                parameters are the same, the all-to-all that limit shrinks is priced without
 *                it (a warning says so).
 *
 * The keys that change no cost are accepted by name (router loss coefficients, jitter noise,
 * scaling factors, the score function, whether top-k weights are renormalised, HF's inference
 * ep_size); a key of these families not listed here stays an unknown one, warned about. The
 * expert count, top-k and the expert width must be given: a config class's default is not
 * assumed for what sets the model's size. */
#include <config.h>
#include "model/config_hf.h"

#include <cjson/cJSON.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/config.h"
#include "model/moe.h"
#include "util/err.h"

const char *const hf_moe_keys[] = {"num_experts", "num_local_experts", "n_routed_experts",
                                   "moe_num_experts", "num_experts_per_tok",
                                   "moe_intermediate_size", "n_shared_experts",
                                   "shared_expert_intermediate_size", "first_k_dense_replace",
                                   "num_nextn_predict_layers", NULL};
const char *const hf_mla_keys[] = {"kv_lora_rank", "q_lora_rank", NULL};

/* Read (or checked) by hf_moe_read. */
static const char *const moe_read_keys[] = {
    "num_local_experts", "num_experts", "n_routed_experts", "num_experts_per_tok",
    "moe_intermediate_size", "shared_expert_intermediate_size", "n_shared_experts",
    "decoder_sparse_step", "mlp_only_layers", "first_k_dense_replace", "moe_layer_freq",
    "num_nextn_predict_layers", "topk_method", "n_group", "topk_group", "scoring_func",
    "q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim", NULL};
/* Changing no cost: the router's loss and noise (a loss term, not a layer), the routed
 * weights' scale and renormalisation, HF's own inference-time expert parallelism. */
static const char *const moe_free_keys[] = {
    "router_aux_loss_coef", "output_router_logits", "router_jitter_noise", "norm_topk_prob",
    "aux_loss_alpha", "seq_aux", "routed_scaling_factor", "ep_size", NULL};

static bool in_list(const char *const *list, const char *key)
{
    for (; *list != NULL; list++)
        if (strcmp(*list, key) == 0)
            return true;
    return false;
}

bool hf_moe_known(const char *key)
{
    return in_list(moe_read_keys, key) || in_list(moe_free_keys, key);
}

bool hf_moe_family(const char *type)
{
    static const char *const t[] = {"mixtral", "qwen2_moe", "qwen3_moe", "deepseek_v2",
                                    "deepseek_v3", NULL};
    return in_list(t, type);
}

bool hf_mla_family(const char *type)
{
    return strcmp(type, "deepseek_v2") == 0 || strcmp(type, "deepseek_v3") == 0;
}

/* An integer key in [lo, hi] into *out, noted under our path (so config_validate's messages
 * point at it); absent or null: *out = dflt, or an error naming it when required. */
static int key_int(struct json_doc *d, const struct json_value *obj, const struct json_value *m,
                   size_t n, const char *name, const char *ours, long lo, long hi, bool required,
                   int dflt, int *out)
{
    const struct json_value *v = hf_get(m, n, name);
    if (v == NULL) {
        if (required)
            return json_fail(d, obj, "%s is missing: model_type's experts and latent attention "
                                     "are read from the file, not from its config class's "
                                     "defaults", name);
        *out = dflt;
        return MT_OK;
    }
    TRY(json_int(d, v, lo, hi, out));
    if (ours != NULL)
        json_note(d, ours, v->key_off, v->path);
    return MT_OK;
}

/* Qwen's mlp_only_layers: the dense layers. Only a prefix 0 .. k-1 is the cost model's
 * pattern (its first_k_dense); *k gets its length. */
static int mlp_only_prefix(struct json_doc *d, const struct json_value *m, size_t n, int *k)
{
    const struct json_value *v = hf_get(m, n, "mlp_only_layers");
    *k = 0;
    if (v == NULL)
        return MT_OK;
    if (!cJSON_IsArray(v->item))
        return json_type_fail(d, v, "an array of layer indices");
    const cJSON *x;
    int i = 0;
    cJSON_ArrayForEach(x, v->item) {
        if (!cJSON_IsNumber(x) || x->valuedouble != i)
            return json_fail(d, v, "dense layers other than the first ones (mlp_only_layers "
                                   "element %d is not %d) are not modelled: only the first k "
                                   "layers dense (first_k_dense)", i, i);
        i++;
    }
    *k = i;
    return MT_OK;
}

/* DeepSeek's router: the top-k method, its groups, its score function. */
static int deepseek_router(struct json_doc *d, const struct json_value *obj,
                           const struct json_value *m, size_t n, struct model_spec *s)
{
    const struct json_value *tm = hf_get(m, n, "topk_method");
    const struct json_value *sf = hf_get(m, n, "scoring_func");
    const char *method = "greedy", *score = "softmax";
    char clip[40];
    if (tm != NULL)
        TRY(json_string(d, tm, &method));
    if (sf != NULL)
        TRY(json_string(d, sf, &score));
    if (strcmp(score, "softmax") != 0 && strcmp(score, "sigmoid") != 0)
        return json_fail(d, sf, "a router scoring '%s' is not modelled (softmax or sigmoid)",
                         json_clip(score, clip, sizeof clip));
    bool grouped = strcmp(method, "group_limited_greedy") == 0 || strcmp(method, "noaux_tc") == 0;
    if (!grouped && strcmp(method, "greedy") != 0)
        return json_fail(d, tm, "a router top-k method '%s' is not modelled (greedy, "
                                "group_limited_greedy, noaux_tc)",
                         json_clip(method, clip, sizeof clip));
    /* noaux_tc: DeepSeek-V3's auxiliary-loss-free balancing, a bias per expert added to the
     * scores for the choice (e_score_correction_bias, E parameters a layer) */
    s->moe.router_bias = strcmp(method, "noaux_tc") == 0;
    int groups = 1, keep = 1;
    TRY(key_int(d, obj, m, n, "n_group", NULL, 1, INT_MAX, false, 1, &groups));
    TRY(key_int(d, obj, m, n, "topk_group", NULL, 1, INT_MAX, false, groups, &keep));
    if (grouped && groups > 1 && keep < groups)
        fprintf(stderr, "warning: %s: node-limited routing (topk_method %s, each token to "
                        "topk_group %d of n_group %d expert groups) is read as top-%d routing "
                        "over every expert: the experts' FLOPs and parameters are the same; "
                        "the expert all-to-all is priced without the limit (docs/moe.md)\n",
                json_doc_name(d), method, keep, groups, s->moe.router_topk);
    return MT_OK;
}

/* Multi-head latent attention's ranks and head dimensions (DeepSeek-V2 §2.1). */
static int deepseek_mla(struct json_doc *d, const struct json_value *obj,
                        const struct json_value *m, size_t n, struct model_spec *s)
{
    struct mla_spec *a = &s->mla;
    TRY(key_int(d, obj, m, n, "kv_lora_rank", "model.mla.kv_lora_rank", 1, INT_MAX, true, 0,
                &a->kv_lora_rank));
    /* null in DeepSeek-V2-Lite: q projected directly */
    TRY(key_int(d, obj, m, n, "q_lora_rank", "model.mla.q_lora_rank", 1, INT_MAX, false, 0,
                &a->q_lora_rank));
    TRY(key_int(d, obj, m, n, "qk_nope_head_dim", "model.mla.qk_nope_head_dim", 1, INT_MAX,
                true, 0, &a->qk_nope_head_dim));
    TRY(key_int(d, obj, m, n, "qk_rope_head_dim", "model.mla.qk_rope_head_dim", 1, INT_MAX,
                true, 0, &a->qk_rope_head_dim));
    TRY(key_int(d, obj, m, n, "v_head_dim", "model.mla.v_head_dim", 1, INT_MAX, true, 0,
                &a->v_head_dim));
    /* attention_bias would put biases on MLA's projections: not the cost model's */
    const struct json_value *ab = hf_get(m, n, "attention_bias");
    if (ab != NULL && hf_set(ab->item))
        return json_fail(d, ab, "biases on multi-head latent attention's projections are not "
                                "modelled");
    s->num_key_value_heads = 0; /* MLA: every head has its own K and V from the latent */
    s->head_dim = 0;
    return MT_OK;
}

int hf_moe_read(struct json_doc *d, const struct json_value *obj, const struct json_value *m,
                size_t n, const char *type, struct model_spec *s)
{
    struct moe_spec *e = &s->moe;
    bool mixtral = strcmp(type, "mixtral") == 0, qwen = strncmp(type, "qwen", 4) == 0;
    const char *count_key = mixtral ? "num_local_experts" : qwen ? "num_experts"
                                                                   : "n_routed_experts";
    TRY(key_int(d, obj, m, n, count_key, "model.moe.num_experts", 1, MOE_MAX_EXPERTS, true, 0,
                &e->num_experts));
    TRY(key_int(d, obj, m, n, "num_experts_per_tok", "model.moe.router_topk", 1,
                MOE_MAX_EXPERTS, true, 0, &e->router_topk));
    if (mixtral) { /* each expert is the dense MLP's width */
        e->ffn_hidden_size = s->ffn_hidden_size;
        return MT_OK;
    }
    TRY(key_int(d, obj, m, n, "moe_intermediate_size", "model.moe.ffn_hidden_size", 1, INT_MAX,
                true, 0, &e->ffn_hidden_size));
    if (qwen) {
        int shared = 0, prefix = 0;
        TRY(key_int(d, obj, m, n, "shared_expert_intermediate_size", NULL, 0, INT_MAX, false, 0,
                    &shared));
        if (shared > 0)
            return json_fail(d, hf_get(m, n, "shared_expert_intermediate_size"),
                             "a shared expert behind a sigmoid gate (%s's shared_expert_gate, "
                             "shared_expert_intermediate_size = %d) is not modelled: the cost "
                             "model's shared experts have no gate", type, shared);
        TRY(key_int(d, obj, m, n, "decoder_sparse_step", "model.moe.layer_freq", 1, INT_MAX,
                    false, 1, &e->layer_freq));
        TRY(mlp_only_prefix(d, m, n, &prefix));
        e->first_k_dense = prefix;
        return MT_OK;
    }
    /* DeepSeek */
    int shared = 0, freq = 1;
    TRY(key_int(d, obj, m, n, "n_shared_experts", NULL, 0, MOE_MAX_EXPERTS, false, 0, &shared));
    e->shared_ffn = shared * e->ffn_hidden_size;
    TRY(key_int(d, obj, m, n, "first_k_dense_replace", "model.moe.first_k_dense", 0, INT_MAX,
                false, 0, &e->first_k_dense));
    TRY(key_int(d, obj, m, n, "moe_layer_freq", NULL, 1, INT_MAX, false, 1, &freq));
    if (freq != 1)
        return json_fail(d, hf_get(m, n, "moe_layer_freq"),
                         "MoE layers every %d-th from first_k_dense_replace (DeepSeek's "
                         "layer_idx %% moe_layer_freq == 0) are not modelled: only 1", freq);
    TRY(key_int(d, obj, m, n, "num_nextn_predict_layers", "model.moe.mtp_num_layers", 0, 16,
                false, 0, &e->mtp_layers));
    TRY(deepseek_router(d, obj, m, n, s));
    return deepseek_mla(d, obj, m, n, s);
}
