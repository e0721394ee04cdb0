/* model/config_hf_json.c: a Hugging Face config.json (GPT-2 or LLaMA style) read as the
 * model, whether it is a config's `model` or the whole file. Its many other keys are
 * ignored; the shape keys are read as strictly as ours and noted under our paths
 * ("model.num_attention_heads" for "n_head"), so config_validate's messages point at them. */
#include <config.h>
#include "model/config.h"

#include <cjson/cJSON.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/err.h"
#include "util/json.h"

bool config_hf_detect(const cJSON *obj)
{
    return cJSON_GetObjectItemCaseSensitive(obj, "model_type") != NULL ||
           cJSON_GetObjectItemCaseSensitive(obj, "n_embd") != NULL ||
           (cJSON_GetObjectItemCaseSensitive(obj, "hidden_size") != NULL &&
            cJSON_GetObjectItemCaseSensitive(obj, "num_hidden_layers") != NULL);
}

/* The first member named one of names[] that is not null (HF writes "n_inner": null). */
static const struct json_value *hf_find(const struct json_value *m, size_t n,
                                        const char *const *names)
{
    for (const char *const *nm = names; *nm != NULL; nm++)
        for (size_t k = 0; k < n; k++)
            if (m[k].item->string != NULL && strcmp(m[k].item->string, *nm) == 0)
                return cJSON_IsNull(m[k].item) ? NULL : &m[k];
    return NULL;
}

int config_hf_read(struct json_doc *d, const struct json_value *obj, const char *model_path,
                   struct model_spec *out)
{
    static const char *const k_hidden[] = {"n_embd", "hidden_size", NULL};
    static const char *const k_layers[] = {"n_layer", "num_hidden_layers", NULL};
    static const char *const k_heads[] = {"n_head", "num_attention_heads", NULL};
    static const char *const k_seq[] = {"n_positions", "n_ctx", "max_position_embeddings", NULL};
    static const char *const k_vocab[] = {"vocab_size", NULL};
    static const char *const k_ffn[] = {"n_inner", "intermediate_size", NULL};
    static const char *const k_kv[] = {"num_key_value_heads", "n_head_kv", NULL};
    static const char *const k_type[] = {"model_type", NULL};
    static const char *const k_name[] = {"_name_or_path", NULL};
    static const char *const k_gpt2[] = {"n_embd", NULL};
    static const struct {
        const char *const *names;
        const char *field; /* ours, for config_validate's messages */
        long hi;
    } field[] = {
        {k_hidden, "hidden_size", INT_MAX},
        {k_layers, "num_layers", CONFIG_MAX_LAYERS},
        {k_heads, "num_attention_heads", INT_MAX},
        {k_seq, "seq_length", INT_MAX},
        {k_vocab, "vocab_size", INT_MAX},
        {k_ffn, "ffn_hidden_size", INT_MAX},
        {k_kv, "num_key_value_heads", INT_MAX},
    };
    size_t n;
    struct json_value *m = json_members(d, obj, &n);
    struct model_spec s = *out;
    int val[7] = {0};
    const struct json_value *fmv[7] = {NULL};
    int rc = MT_OK;

    if (strcmp(obj->path, model_path) != 0) /* the whole file is the model */
        json_note(d, model_path, obj->key_off != JSON_NOPOS ? obj->key_off : obj->val_off, NULL);
    for (size_t f = 0; f < 7 && rc == MT_OK; f++) {
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

    const struct json_value *tm = hf_find(m, n, k_type);
    const char *type = "";
    if (tm != NULL && (rc = json_string(d, tm, &type)) != MT_OK)
        goto out;
    if (strcasecmp(type, "llama") == 0 || strcasecmp(type, "mistral") == 0)
        s.arch = ARCH_LLAMA2;
    else if (strcasecmp(type, "gpt2") == 0 || hf_find(m, n, k_gpt2) != NULL)
        s.arch = ARCH_GPT3;
    else
        s.arch = ARCH_CUSTOM;

    s.hidden_size = val[0];
    s.num_layers = val[1];
    s.num_attention_heads = val[2];
    s.num_key_value_heads = val[6] == val[2] ? 0 : val[6]; /* absent or equal: multi-head */
    if (val[3])
        s.seq_length = val[3];
    if (val[4])
        s.vocab_size = val[4];
    if (val[5]) {
        s.ffn_hidden_size = val[5];
    } else if (config_ffn_default(s.arch, s.hidden_size, &s.ffn_hidden_size) != 0) {
        rc = json_fail(d, fmv[0],
                       "%d too large for a default FFN width (give n_inner or intermediate_size)",
                       s.hidden_size);
        goto out;
    }

    /* A label: the checkpoint's name, else its model_type. */
    const struct json_value *nm = hf_find(m, n, k_name);
    const char *label = type[0] ? type : "hf-model";
    if (nm != NULL && cJSON_IsString(nm->item) && nm->item->valuestring[0] != '\0')
        label = nm->item->valuestring;
    const char *slash = strrchr(label, '/');
    if (slash != NULL && slash[1] != '\0')
        label = slash + 1;
    s.paper_stack = false; /* a published model: today's stack unless the config says */
    memset(s.name, 0, sizeof s.name);
    json_clip(label, s.name, sizeof s.name);
    *out = s;
out:
    free(m);
    return rc;
}
