/* model/config_hf_json.c: a Hugging Face config.json read as the model, whether it is a
 * config's `model` or the whole file (issue 41). Every key is one of four kinds:
 *   - read: the shape and the family's parts (hf_shape_keys, the family's own keys);
 *   - accepted: keys that change no cost mario-tui models (hf_free_keys: token ids, dtypes,
 *     dropout rates, initializers, RoPE's base, norms' epsilons, ...), on purpose;
 *   - refused: what changes the model and is not modelled (experts or latent attention in a
 *     family without them, sliding windows, weights quantized after training, multimodal
 *     towers), named with its value;
 *   - unknown: warned about by name on stderr, one line, never dropped silently.
 * The shape keys are read as strictly as ours and noted under our paths ("model.num_layers"
 * for "n_layer"), so config_validate's messages point at them.
 *
 * The families (model_type) and their parts, after transformers' modeling_*.py files:
 *   gpt2     learned positions, LayerNorm, a GELU MLP, biases on every linear layer, tied
 *   llama    RMSNorm, SwiGLU, no biases (attention_bias and mlp_bias both: all), untied
 *   mistral  llama's layer; a sliding window is refused unless it spans every position
 *   qwen2    llama's layer with biases on q, k and v (modeling_qwen2.py), untied unless
 *            tie_word_embeddings; use_sliding_window true is refused
 *   qwen3    llama's layer, head_dim given (128), q_norm and k_norm over one head
 *   gemma    GeGLU (gelu_pytorch_tanh gate), head_dim 256, RMSNorm, tied
 *   phi3     fused qkv_proj and gate_up_proj: the same matrices as llama's, so the same counts
 *   olmo2    llama's layer, norms after each sub-layer (still two), q_norm and k_norm over the
 *            whole projection
 *   mixtral, qwen2_moe, qwen3_moe, deepseek_v2, deepseek_v3: a mixture of experts on the
 *            layer of mistral, qwen2, qwen3 and llama (DeepSeek: multi-head latent attention);
 *            the experts, MLA and MTP are model/config_hf_moe_json.c's (issue 38)
 *   refused: gemma2 (sliding windows on every other layer, logit soft-capping), gpt_neox
 *   (rotary positions with GPT's LayerNorm and biases and a parallel residual: no family here),
 *   llama4 (chunked attention, interleaved MoE layers, no-RoPE layers).
 *
 * The sequence length is the training one, never max_position_embeddings blindly (a 131,072-
 * token Llama-3.1 step is not how it was pre-trained): rope_scaling.original_max_position_
 * embeddings (Llama 3.1: 8192; DeepSeek's YaRN), else the top-level original_max_position_
 * embeddings (Phi-3's LongRoPE), else min(max_position_embeddings, HF_SEQ_DEFAULT). 4,096 is the
 * main pre-training stage of Llama 2, Qwen2.5 and Qwen3 (their reports' first stages), OLMo 2
 * and Phi-3-4k; a longer context is a later phase one sets with --seq-length. The largest
 * length the model takes, max_position_embeddings, becomes seqlen.max_positions: GPT-2's
 * position table and the limit --seq-length is checked against. */
#include <config.h>
#include "model/config.h"

#include <cjson/cJSON.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "model/config_hf.h"
#include "util/err.h"
#include "util/json.h"

#define HF_SEQ_DEFAULT 4096

bool config_hf_detect(const cJSON *obj)
{
    return cJSON_GetObjectItemCaseSensitive(obj, "model_type") != NULL ||
           cJSON_GetObjectItemCaseSensitive(obj, "n_embd") != NULL ||
           (cJSON_GetObjectItemCaseSensitive(obj, "hidden_size") != NULL &&
            cJSON_GetObjectItemCaseSensitive(obj, "num_hidden_layers") != NULL);
}

/* One model_type: the parts of its layer and the defaults of its transformers config class. */
struct hf_family {
    const char *type;
    enum model_arch arch;
    bool gated;             /* the MLP gates (SwiGLU or GeGLU by its activation) */
    enum norm_kind norm;
    enum bias_kind bias;    /* its fixed biases */
    bool bias_keys;         /* reads attention_bias (and llama's mlp_bias) */
    bool tied;              /* tie_word_embeddings' default */
    enum qk_norm_kind qk;
    int head_dim;           /* head_dim's default; 0 = h / a */
    int positions;          /* max_position_embeddings' default */
    const char *refused;    /* why the family is not modelled; NULL: it is */
};

static const struct hf_family hf_families[] = {
    {"gpt2", ARCH_GPT3, false, NORM_LAYERNORM, BIAS_ALL, false, true, QK_NORM_NONE, 0, 1024, NULL},
    {"llama", ARCH_LLAMA2, true, NORM_RMSNORM, BIAS_NONE, true, false, QK_NORM_NONE, 0, 2048,
     NULL},
    {"mistral", ARCH_LLAMA2, true, NORM_RMSNORM, BIAS_NONE, false, false, QK_NORM_NONE, 0, 32768,
     NULL},
    {"qwen2", ARCH_LLAMA2, true, NORM_RMSNORM, BIAS_QKV, false, false, QK_NORM_NONE, 0, 32768,
     NULL},
    {"qwen3", ARCH_LLAMA2, true, NORM_RMSNORM, BIAS_NONE, true, false, QK_NORM_HEAD, 128, 32768,
     NULL},
    {"gemma", ARCH_LLAMA2, true, NORM_RMSNORM, BIAS_NONE, true, true, QK_NORM_NONE, 256, 8192,
     NULL},
    {"phi3", ARCH_LLAMA2, true, NORM_RMSNORM, BIAS_NONE, true, false, QK_NORM_NONE, 0, 4096, NULL},
    {"olmo2", ARCH_LLAMA2, true, NORM_RMSNORM, BIAS_NONE, true, false, QK_NORM_WHOLE, 0, 2048,
     NULL},
    /* mixtures of experts: their layer is the family's above, the experts (and DeepSeek's
     * latent attention) model/config_hf_moe_json.c's */
    {"mixtral", ARCH_LLAMA2, true, NORM_RMSNORM, BIAS_NONE, false, false, QK_NORM_NONE, 0,
     131072, NULL},
    {"qwen2_moe", ARCH_LLAMA2, true, NORM_RMSNORM, BIAS_QKV, false, false, QK_NORM_NONE, 0, 32768,
     NULL},
    {"qwen3_moe", ARCH_LLAMA2, true, NORM_RMSNORM, BIAS_NONE, true, false, QK_NORM_HEAD, 128,
     32768, NULL},
    {"deepseek_v2", ARCH_LLAMA2, true, NORM_RMSNORM, BIAS_NONE, false, false, QK_NORM_NONE, 0,
     2048, NULL},
    {"deepseek_v3", ARCH_LLAMA2, true, NORM_RMSNORM, BIAS_NONE, false, false, QK_NORM_NONE, 0,
     4096, NULL},
    {"gemma2", ARCH_LLAMA2, true, NORM_RMSNORM, BIAS_NONE, true, true, QK_NORM_NONE, 256, 8192,
     "sliding-window attention on every other layer and logit soft-capping"},
    {"llama4", ARCH_LLAMA2, true, NORM_RMSNORM, BIAS_NONE, false, false, QK_NORM_NONE, 0, 4096,
     "chunked local attention (attention_chunk_size), MoE layers interleaved with dense ones "
     "(interleave_moe_layer_step) and layers without RoPE (no_rope_layers)"},
    {"llama4_text", ARCH_LLAMA2, true, NORM_RMSNORM, BIAS_NONE, false, false, QK_NORM_NONE, 0,
     4096, "chunked local attention (attention_chunk_size), MoE layers interleaved with dense "
     "ones (interleave_moe_layer_step) and layers without RoPE (no_rope_layers)"},
    {"gpt_neox", ARCH_GPT3, false, NORM_LAYERNORM, BIAS_ALL, false, false, QK_NORM_NONE, 0, 2048,
     "rotary positions with LayerNorm, biases and a parallel residual (no family here)"},
};
#define HF_N_FAMILIES (sizeof hf_families / sizeof hf_families[0])

/* Keys read for the shape and the parts (aliases: GPT-2's names). */
static const char *const hf_shape_keys[] = {
    "model_type", "_name_or_path", "n_embd", "hidden_size", "n_layer", "num_hidden_layers",
    "n_head", "num_attention_heads", "n_positions", "n_ctx", "max_position_embeddings",
    "vocab_size", "n_inner", "intermediate_size", "num_key_value_heads", "head_dim",
    "tie_word_embeddings", "hidden_act", "hidden_activation", "activation_function",
    "attention_bias", "mlp_bias", "rope_scaling", "original_max_position_embeddings",
    "sliding_window", "use_sliding_window", "layer_types", "n_head_kv", "quantization_config",
    NULL};

/* Keys that change nothing mario-tui prices: token ids, dtypes (the stack's bytes_per_param
 * decides), dropout rates (their masks are in the activation counts whatever the rate),
 * initializers, RoPE's base (rotary positions have no parameters), norm epsilons, caching and
 * output switches of inference, GPT-2's sequence-summary head (not a language-model part),
 * Qwen2's max_window_layers (only with use_sliding_window), pretraining_tp (Llama's emulation of
 * TP numerics, the same matrices). */
static const char *const hf_free_keys[] = {
    "architectures", "transformers_version", "torch_dtype", "dtype", "bos_token_id",
    "eos_token_id", "pad_token_id", "sep_token_id", "initializer_range", "use_cache",
    "rope_theta", "rms_norm_eps", "layer_norm_eps", "layer_norm_epsilon", "attention_dropout",
    "hidden_dropout", "attn_pdrop", "resid_pdrop", "embd_pdrop", "summary_type",
    "summary_use_proj", "summary_activation", "summary_proj_to_labels", "summary_first_dropout",
    "task_specific_params", "pretraining_tp", "max_window_layers", "scale_attn_weights",
    "scale_attn_by_inverse_layer_idx", "reorder_and_upcast_attn", "id2label", "label2id",
    "output_attentions", "output_hidden_states", "return_dict", "auto_map", "tokenizer_class",
    "use_mrope", NULL};

static bool hf_in(const char *const *list, const char *key)
{
    for (; *list != NULL; list++)
        if (strcmp(*list, key) == 0)
            return true;
    return false;
}

const struct json_value *hf_get(const struct json_value *m, size_t n, const char *name)
{
    for (size_t k = 0; k < n; k++)
        if (m[k].item->string != NULL && strcmp(m[k].item->string, name) == 0)
            return cJSON_IsNull(m[k].item) ? NULL : &m[k];
    return NULL;
}

/* The first of names[] present. */
static const struct json_value *hf_find(const struct json_value *m, size_t n,
                                        const char *const *names)
{
    for (const char *const *nm = names; *nm != NULL; nm++) {
        const struct json_value *v = hf_get(m, n, *nm);
        if (v != NULL)
            return v;
    }
    return NULL;
}

bool hf_set(const cJSON *j)
{
    if (j == NULL || cJSON_IsNull(j) || cJSON_IsFalse(j))
        return false;
    if (cJSON_IsNumber(j))
        return j->valuedouble != 0;
    if (cJSON_IsArray(j) || cJSON_IsObject(j))
        return j->child != NULL;
    return true;
}

void hf_show(const cJSON *j, char *buf, size_t n)
{
    if (cJSON_IsNumber(j))
        snprintf(buf, n, "%.15g", j->valuedouble);
    else if (cJSON_IsString(j))
        json_clip(j->valuestring, buf, n);
    else if (cJSON_IsBool(j))
        snprintf(buf, n, "%s", cJSON_IsTrue(j) ? "true" : "false");
    else
        snprintf(buf, n, "%s", json_type_name(j));
}

/* The quantization of the released weights: DeepSeek-V3's checkpoint stores FP8 (e4m3, a
 * scale a 128 x 128 block) of a model trained with BF16 master weights (its report §3.3), so an
 * fp8 quant_method is read as the trained model and said; any other (int4, GPTQ, AWQ, ...)
 * is a model quantized after training: refused. */
static int hf_quantization(struct json_doc *d, const struct json_value *x)
{
    const char *method = "";
    if (cJSON_IsObject(x->item)) {
        const cJSON *q = cJSON_GetObjectItemCaseSensitive(x->item, "quant_method");
        if (cJSON_IsString(q))
            method = q->valuestring;
    }
    if (strcmp(method, "fp8") != 0)
        return json_fail(d, x, "quantized weights (quantization_config) are not modelled: give the "
                               "bf16 model's config");
    fprintf(stderr, "warning: %s: %s: the checkpoint's FP8 storage (quant_method fp8) is read as "
                    "the model it stores; its weights are priced at the training stack's bytes "
                    "(bytes_per_param), not as FP8\n", json_doc_name(d), x->path);
    return MT_OK;
}

/* What is refused whatever the family: experts and latent attention in a family that has
 * none (type: its model_type), quantized weights, the towers of a multimodal config, an
 * encoder-decoder. */
static int hf_refuse_features(struct json_doc *d, const struct json_value *m, size_t n,
                              const char *type)
{
    char v[48];
    for (const char *const *k = hf_moe_keys; *k != NULL && !hf_moe_family(type); k++) {
        const struct json_value *x = hf_get(m, n, *k);
        if (x != NULL && hf_set(x->item)) {
            hf_show(x->item, v, sizeof v);
            return json_fail(d, x, "mixture of experts (%s = %s) is not modelled for model_type "
                                   "'%s' (experts are read for mixtral, qwen2_moe, qwen3_moe, "
                                   "deepseek_v2, deepseek_v3)", *k, v, type);
        }
    }
    for (const char *const *k = hf_mla_keys; *k != NULL && !hf_mla_family(type); k++) {
        const struct json_value *x = hf_get(m, n, *k);
        if (x != NULL && hf_set(x->item)) {
            hf_show(x->item, v, sizeof v);
            return json_fail(d, x, "multi-head latent attention (%s = %s) is not modelled for "
                                   "model_type '%s' (read for deepseek_v2, deepseek_v3)", *k, v,
                             type);
        }
    }
    const struct json_value *x = hf_get(m, n, "quantization_config");
    if (x != NULL)
        TRY(hf_quantization(d, x));
    static const char *const towers[] = {"text_config", "vision_config", "audio_config", NULL};
    for (const char *const *k = towers; *k != NULL; k++) {
        if ((x = hf_get(m, n, *k)) == NULL)
            continue;
        if (cJSON_IsObject(x->item)) { /* Llama 4's experts sit in its text_config */
            size_t tn;
            struct json_value *tm = json_members(d, x, &tn);
            int rc = hf_refuse_features(d, tm, tn, type);
            free(tm);
            if (rc != MT_OK)
                return rc;
        }
        return json_fail(d, x, "a multimodal config (%s) is not modelled: give the language "
                               "model's own config.json", *k);
    }
    if ((x = hf_get(m, n, "is_encoder_decoder")) != NULL && hf_set(x->item))
        return json_fail(d, x, "an encoder-decoder model is not modelled");
    return MT_OK;
}

/* Sliding windows: Qwen's use_sliding_window, a window narrower than the positions (Mistral
 * v0.1's 4096 of 32768; Phi-3-mini's 2047), layer_types naming sliding layers. A window at
 * least max_position_embeddings wide never binds: every token sees every earlier one. */
static int hf_refuse_window(struct json_doc *d, const struct json_value *m, size_t n,
                            int positions)
{
    const struct json_value *use = hf_get(m, n, "use_sliding_window");
    const struct json_value *win = hf_get(m, n, "sliding_window");
    const struct json_value *types = hf_get(m, n, "layer_types");
    char v[48] = "null";
    bool on;
    if (use != NULL) {
        if (!cJSON_IsBool(use->item))
            return json_type_fail(d, use, "true or false");
        on = cJSON_IsTrue(use->item);
    } else {
        on = win != NULL;
    }
    if (on && win != NULL) {
        if (!cJSON_IsNumber(win->item))
            return json_type_fail(d, win, "a number of tokens or null");
        if (use != NULL || win->item->valuedouble < positions) {
            hf_show(win->item, v, sizeof v);
            char why[64];
            if (use != NULL)
                snprintf(why, sizeof why, "use_sliding_window true");
            else
                snprintf(why, sizeof why, "below max_position_embeddings %d", positions);
            return json_fail(d, win, "sliding-window attention (sliding_window = %s, %s) is not "
                                     "modelled", v, why);
        }
    } else if (on) {
        return json_fail(d, use, "sliding-window attention (use_sliding_window true) is not "
                                 "modelled");
    }
    if (types != NULL && cJSON_IsArray(types->item)) {
        const cJSON *t;
        cJSON_ArrayForEach(t, types->item)
            if (!cJSON_IsString(t) || strcmp(t->valuestring, "full_attention") != 0) {
                hf_show(t, v, sizeof v);
                return json_fail(d, types, "layers of kind '%s' (sliding-window attention) are "
                                           "not modelled", v);
            }
    } else if (types != NULL) {
        return json_type_fail(d, types, "an array of layer kinds");
    }
    return MT_OK;
}

/* The MLP from the family and its activation key. */
static int hf_mlp(struct json_doc *d, const struct json_value *m, size_t n,
                  const struct hf_family *fam, enum mlp_kind *out)
{
    static const char *const act_keys[] = {"hidden_activation", "hidden_act",
                                           "activation_function", NULL};
    const struct json_value *a = hf_find(m, n, act_keys);
    const char *act;
    if (a == NULL) {
        *out = !fam->gated ? MLP_GELU : strcmp(fam->type, "gemma") == 0 ? MLP_GEGLU : MLP_SWIGLU;
        return MT_OK;
    }
    TRY(json_string(d, a, &act));
    bool gelu = strncasecmp(act, "gelu", 4) == 0, silu = strcasecmp(act, "silu") == 0 ||
                                                        strcasecmp(act, "swish") == 0;
    char clip[40];
    if (!fam->gated && gelu)
        *out = MLP_GELU;
    else if (fam->gated && silu)
        *out = MLP_SWIGLU;
    else if (fam->gated && gelu)
        *out = MLP_GEGLU;
    else
        return json_fail(d, a, "activation '%s' is not modelled for model_type %s (%s)",
                         json_clip(act, clip, sizeof clip), fam->type,
                         fam->gated ? "silu: SwiGLU, gelu*: GeGLU" : "gelu*");
    return MT_OK;
}

/* Biases: the family's, or llama's attention_bias and mlp_bias (both: every linear layer). */
static int hf_bias(struct json_doc *d, const struct json_value *m, size_t n,
                   const struct hf_family *fam, enum bias_kind *out)
{
    const struct json_value *ab = fam->bias_keys ? hf_get(m, n, "attention_bias") : NULL;
    const struct json_value *mb = fam->bias_keys ? hf_get(m, n, "mlp_bias") : NULL;
    bool att = false, mlp = false;
    if (ab != NULL)
        TRY(json_bool(d, ab, &att));
    if (mb != NULL)
        TRY(json_bool(d, mb, &mlp));
    *out = fam->bias;
    if (att && mlp)
        *out = BIAS_ALL;
    else if (att || mlp)
        return json_fail(d, att ? ab : mb,
                         "biases on the %s only are not modelled (none, q/k/v, or every linear "
                         "layer)", att ? "attention's q, k, v and o" : "MLP");
    return MT_OK;
}

/* The one line naming keys read as changing nothing that mario-tui does not know. */
static void hf_warn_unknown(struct json_doc *d, const struct json_value *obj,
                            const struct json_value *m, size_t n, bool moe)
{
    char line[1024];
    int at = 0, count = 0;
    for (size_t k = 0; k < n; k++) {
        const char *key = m[k].item->string != NULL ? m[k].item->string : "";
        if (hf_in(hf_shape_keys, key) || hf_in(hf_free_keys, key) || (moe && hf_moe_known(key)))
            continue;
        char clip[48];
        if (at < (int)sizeof line - 64)
            at += snprintf(line + at, sizeof line - (size_t)at, "%s%s", count ? ", " : "",
                           json_clip(key, clip, sizeof clip));
        count++;
    }
    if (count == 0)
        return;
    fprintf(stderr, "warning: %s: %s%sHugging Face key%s not known to mario-tui, read as changing "
                    "nothing: %s%s\n", json_doc_name(d), obj->path, obj->path[0] ? ": " : "",
            count > 1 ? "s" : "", line, at >= (int)sizeof line - 64 ? ", ..." : "");
}

static const struct hf_family *hf_family_of(const char *type)
{
    for (size_t i = 0; i < HF_N_FAMILIES; i++)
        if (strcasecmp(type, hf_families[i].type) == 0)
            return &hf_families[i];
    return NULL;
}

/* "gpt2, llama, ..." (the families modelled). */
static void hf_known(char *buf, size_t n)
{
    size_t at = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < HF_N_FAMILIES && at < n; i++)
        if (hf_families[i].refused == NULL)
            at += (size_t)snprintf(buf + at, n - at, "%s%s", at ? ", " : "", hf_families[i].type);
}

/* The training length (the header's rule) and the largest position. */
static int hf_seq(struct json_doc *d, const struct json_value *m, size_t n,
                  const struct hf_family *fam, int *seq, int *positions)
{
    static const char *const k_pos[] = {"n_positions", "max_position_embeddings", "n_ctx", NULL};
    const struct json_value *pm = hf_find(m, n, k_pos), *om = NULL;
    *positions = fam->positions;
    if (pm != NULL)
        TRY(json_int(d, pm, 1, INT_MAX, positions));
    const struct json_value *rs = hf_get(m, n, "rope_scaling");
    if (rs != NULL && !cJSON_IsObject(rs->item))
        return json_type_fail(d, rs, "an object or null");
    if (rs != NULL) {
        size_t rn;
        struct json_value *rm = json_members(d, rs, &rn);
        const struct json_value *o = hf_get(rm, rn, "original_max_position_embeddings");
        int rc = o != NULL ? json_int(d, o, 1, INT_MAX, seq) : MT_OK;
        free(rm);
        TRY(rc);
        if (o != NULL)
            return MT_OK;
    }
    if ((om = hf_get(m, n, "original_max_position_embeddings")) != NULL)
        return json_int(d, om, 1, INT_MAX, seq);
    *seq = *positions < HF_SEQ_DEFAULT ? *positions : HF_SEQ_DEFAULT;
    return MT_OK;
}

int config_hf_read(struct json_doc *d, const struct json_value *obj, const char *model_path,
                   struct config *c)
{
    static const char *const k_hidden[] = {"n_embd", "hidden_size", NULL};
    static const char *const k_layers[] = {"n_layer", "num_hidden_layers", NULL};
    static const char *const k_heads[] = {"n_head", "num_attention_heads", NULL};
    static const char *const k_pos[] = {"n_positions", "max_position_embeddings", "n_ctx", NULL};
    static const char *const k_vocab[] = {"vocab_size", NULL};
    static const char *const k_ffn[] = {"n_inner", "intermediate_size", NULL};
    static const char *const k_kv[] = {"num_key_value_heads", "n_head_kv", NULL};
    static const char *const k_hd[] = {"head_dim", NULL};
    enum { F_HIDDEN, F_LAYERS, F_HEADS, F_SEQ, F_VOCAB, F_FFN, F_KV, F_HD, F__COUNT };
    static const struct {
        const char *const *names;
        const char *field; /* ours, for config_validate's messages */
        long hi;
    } field[F__COUNT] = {
        {k_hidden, "hidden_size", INT_MAX},
        {k_layers, "num_layers", CONFIG_MAX_LAYERS},
        {k_heads, "num_attention_heads", INT_MAX},
        {k_pos, "seq_length", INT_MAX},
        {k_vocab, "vocab_size", INT_MAX},
        {k_ffn, "ffn_hidden_size", INT_MAX},
        {k_kv, "num_key_value_heads", INT_MAX},
        {k_hd, "head_dim", CONFIG_MAX_HEAD_DIM}, /* what model.head_dim reads back */
    };
    size_t n;
    struct json_value *m = json_members(d, obj, &n);
    struct model_spec s = c->model;
    int val[F__COUNT] = {0};
    const struct json_value *fmv[F__COUNT] = {NULL};
    int rc = MT_OK;
    char known[256];
    hf_known(known, sizeof known);

    if (strcmp(obj->path, model_path) != 0) /* the whole file is the model */
        json_note(d, model_path, obj->key_off != JSON_NOPOS ? obj->key_off : obj->val_off, NULL);
    /* The family: model_type; GPT-2's own key names without one */
    const struct json_value *tm = hf_get(m, n, "model_type");
    const char *type = "gpt2";
    if (tm != NULL && (rc = json_string(d, tm, &type)) != MT_OK)
        goto out;
    if ((rc = hf_refuse_features(d, m, n, type)) != MT_OK)
        goto out;
    if (tm == NULL && hf_get(m, n, "n_embd") == NULL) {
        rc = json_fail(d, obj, "Hugging Face config without a model_type: its family cannot be "
                               "told (known: %s)", known);
        goto out;
    }
    const struct hf_family *fam = hf_family_of(type);
    char clip[40];
    if (fam == NULL || fam->refused != NULL) {
        if (fam == NULL)
            rc = json_fail(d, tm, "model_type '%s' is not modelled (known: %s)",
                           json_clip(type, clip, sizeof clip), known);
        else
            rc = json_fail(d, tm, "model_type '%s' is not modelled: %s (known: %s)", fam->type,
                           fam->refused, known);
        goto out;
    }
    for (size_t f = 0; f < F__COUNT && rc == MT_OK; f++) {
        const struct json_value *fm = hf_find(m, n, field[f].names);
        if (fm == NULL)
            continue;
        char path[JSON_PATH_LEN];
        rc = json_int(d, fm, 1, field[f].hi, &val[f]);
        snprintf(path, sizeof path, "%.*s%s%s", JSON_PATH_LEN - 32, model_path,
                 model_path[0] ? "." : "", field[f].field);
        json_note(d, path, fm->key_off, fm->path);
        fmv[f] = fm;
    }
    if (rc != MT_OK)
        goto out;
    static const char *const what[3] = {"hidden size (n_embd or hidden_size)",
                                        "layer count (n_layer or num_hidden_layers)",
                                        "head count (n_head or num_attention_heads)"};
    for (int f = 0; f < 3; f++)
        if (val[f] == 0) {
            rc = json_fail(d, obj, "Hugging Face config without a %s", what[f]);
            goto out;
        }
    int seq = 0, positions = 0;
    if ((rc = hf_seq(d, m, n, fam, &seq, &positions)) != MT_OK ||
        (rc = hf_refuse_window(d, m, n, positions)) != MT_OK ||
        (rc = hf_mlp(d, m, n, fam, &s.mlp)) != MT_OK || (rc = hf_bias(d, m, n, fam, &s.bias)) != MT_OK)
        goto out;
    const struct json_value *tie = hf_get(m, n, "tie_word_embeddings");
    bool tied = fam->tied;
    if (tie != NULL && (rc = json_bool(d, tie, &tied)) != MT_OK)
        goto out;

    s.arch = fam->arch;
    s.norm = fam->norm;
    s.qk_norm = fam->qk;
    s.tie_embeddings = tied ? TRI_YES : TRI_NO;
    s.hidden_size = val[F_HIDDEN];
    s.num_layers = val[F_LAYERS];
    s.num_attention_heads = val[F_HEADS];
    s.num_key_value_heads = val[F_KV] == val[F_HEADS] ? 0 : val[F_KV]; /* absent: multi-head */
    s.head_dim = val[F_HD] > 0 ? val[F_HD] : fam->head_dim;
    if (s.head_dim == s.hidden_size / s.num_attention_heads)
        s.head_dim = 0; /* the usual h / a */
    s.seq_length = seq;
    if (val[F_VOCAB])
        s.vocab_size = val[F_VOCAB];
    if (val[F_FFN]) {
        s.ffn_hidden_size = val[F_FFN];
    } else if (config_ffn_default(s.arch, s.hidden_size, &s.ffn_hidden_size) != 0) {
        rc = json_fail(d, fmv[F_HIDDEN],
                       "%d too large for a default FFN width (give n_inner or intermediate_size)",
                       s.hidden_size);
        goto out;
    }

    /* A label: the checkpoint's name, else its model_type. */
    const struct json_value *nm = hf_get(m, n, "_name_or_path");
    const char *label = tm != NULL ? type : "hf-model";
    if (nm != NULL && cJSON_IsString(nm->item) && nm->item->valuestring[0] != '\0')
        label = nm->item->valuestring;
    const char *slash = strrchr(label, '/');
    if (slash != NULL && slash[1] != '\0')
        label = slash + 1;
    s.paper_stack = false; /* a published model: today's stack unless the config says */
    memset(s.name, 0, sizeof s.name);
    json_clip(label, s.name, sizeof s.name);
    bool moe = hf_moe_family(fam->type);
    if (moe && (rc = hf_moe_read(d, obj, m, n, fam->type, &s)) != MT_OK)
        goto out;
    hf_warn_unknown(d, obj, m, n, moe);
    c->model = s;
    c->seqlen.kind = SEQLEN_FIXED;
    c->seqlen.max_positions = positions;
out:
    free(m);
    return rc;
}
