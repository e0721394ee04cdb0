/* model/config_hf.h: the Hugging Face config.json reader's parts shared by its two files
 * (model/config_hf_json.c: the families and the dense shape; model/config_hf_moe_json.c: the
 * experts and multi-head latent attention of the MoE families, issue 38). Not a public
 * header: config.h's config_hf_read is the reader. */
#ifndef MT_MODEL_CONFIG_HF_H
#define MT_MODEL_CONFIG_HF_H

#include <stdbool.h>
#include <stddef.h>

#include "util/json.h"

struct cJSON;
struct model_spec;

/* The member named name, NULL when absent or null (HF writes "n_inner": null). */
const struct json_value *hf_get(const struct json_value *m, size_t n, const char *name);
/* Whether a value turns a feature on: non-null, not false, not 0, not an empty container. */
bool hf_set(const struct cJSON *j);
/* "128", "true", "{...}": a value for a message. */
void hf_show(const struct cJSON *j, char *buf, size_t n);

/* The keys of a mixture of experts and of latent attention, the expert count first: refused
 * in a family that has none (config_hf_json.c), read in one that has (below). */
extern const char *const hf_moe_keys[];
extern const char *const hf_mla_keys[];

/* The experts (model.moe) and, for DeepSeek, the latent attention (model.mla) and the
 * multi-token prediction depth of a MoE family (model_type mixtral, qwen2_moe, qwen3_moe,
 * deepseek_v2, deepseek_v3) into s; what the cost model does not have (node-limited routing
 * that bounds the all-to-all, a shared expert's gate, a dense-layer list that is not a
 * prefix, DeepSeek's moe_layer_freq > 1) refused or warned by name. */
int hf_moe_read(struct json_doc *d, const struct json_value *obj, const struct json_value *m,
                size_t n, const char *type, struct model_spec *s);
/* Whether model_type reads experts / latent attention. */
bool hf_moe_family(const char *type);
bool hf_mla_family(const char *type);
/* Whether key is one hf_moe_read reads or accepts as changing no cost. */
bool hf_moe_known(const char *key);

#endif
