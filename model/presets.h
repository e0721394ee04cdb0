/* model/presets.h: the paper's Table 4 models, a tiny CPU-trainable model, and devices. */
#ifndef MT_MODEL_PRESETS_H
#define MT_MODEL_PRESETS_H

#include <stddef.h>

struct model_spec;
struct device_spec;
struct mt_err;

/* The paper's Table 4 shapes GPT3-1.6B, GPT3-13B, LLaMA2-3B, LLaMA2-13B; tiny; real models from
 * their published configs: GPT-3-13B, GPT-3-175B, LLaMA-2-7B/13B/70B, Llama-3.1-8B/70B/405B
 * (case-insensitive). */
int presets_model(const char *name, struct model_spec *out, struct mt_err *e);
/* Where a preset's shape comes from ("paper Table 4", a paper's table, a config.json); NULL
 * for a name that is not a preset (exact spelling). */
const char *presets_model_source(const char *name);
/* The name a model is shown by: the paper's Table 4 shapes read "GPT3-13B (paper Table 4)",
 * so that nobody takes them for the published models. Writes buf, returns it. */
const char *presets_model_display(const struct model_spec *m, char *buf, size_t n);
/* Names: A100-40G, A100-80G, H100-80G, H200, H800, B200, GB200, MI300X (case-insensitive). */
int presets_device(const char *name, struct device_spec *out, struct mt_err *e);
/* A model's parameter count as the cost model counts it (model/cost.h; tp = 1, the LM head
 * apart from the embedding). */
double presets_model_params(const struct model_spec *m);
/* The same for a config's model, with its positions (seqlen.max_positions): the whole model's
 * count, not a rank's (`model_parameters` in models, simulate and optimize --json). */
struct config;
double presets_config_params(const struct config *c);
/* {"models": [{name, display_name, shape, family parts, parameters (= model_parameters),
 * attention, source}, ...], "devices": [{name, bf16_peak_flops, fp8_peak_flops, memory_bytes,
 * hbm_gbps, nvlink_gbps, nvlink_busbw_gbps, network_gbps, gpus_per_node, host_gbps,
 * gemm_efficiency, gemm_efficiency_fp8, attention_efficiency_fw, attention_efficiency_bw}, ...]}
 * for every model and device preset, or for given's model alone (no devices) when given is not
 * NULL (its source: the file); caller free()s; NULL if out of memory (model/presets_json.c). */
char *presets_models_json(const struct config *given);
/* Those one token's forward reads: a MoE model's k routed experts of E (model/moe.h
 * moe_model_counts); = presets_model_params for a dense model. */
double presets_model_active_params(const struct model_spec *m);
/* NULL-terminated name lists, for --help and error messages. */
const char *const *presets_model_names(void);
const char *const *presets_device_names(void);

#endif
