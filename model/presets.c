/* model/presets.c: model presets from the paper's Table 4 (hidden size, layers, heads,
 * sequence length as printed there; vocabularies and FFN widths of the model families) and
 * device presets from the vendors' datasheets (dense bf16 peak, memory, HBM bandwidth). */
#include <config.h>
#include "model/presets.h"

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "model/config.h"
#include "util/err.h"

/* One record per preset: its shape and where the shape comes from. paper_stack (the spec's
 * last field): the paper measured eager attention and 16 bytes a parameter, so its shapes keep
 * them by default (its figures stay as printed); tiny is the executor's own model, eager with
 * 16 bytes (fp32 weights, gradients, m, v). */
struct model_preset {
    struct model_spec spec;
    const char *source;
};

#define PAPER_TABLE_4 "paper Table 4"
/* The shape fields in model_spec's order; the family's parts (mlp, norm, ...) stay the arch's. */
#define SHAPE(nm, ar, h, l, a, s, v, f, kv, paper)                                              \
    {.name = nm, .arch = ar, .hidden_size = h, .num_layers = l, .num_attention_heads = a,      \
     .seq_length = s, .vocab_size = v, .ffn_hidden_size = f, .num_key_value_heads = kv,         \
     .paper_stack = paper}
#define LLAMA31_S " (s = 8192, the pre-training context)"

static const struct model_preset model_table[] = {
    {SHAPE("GPT3-1.6B", ARCH_GPT3, 1024, 128, 16, 1024, 50257, 4096, 0, true), PAPER_TABLE_4},
    {SHAPE("GPT3-13B", ARCH_GPT3, 3000, 128, 40, 1024, 50257, 12000, 0, true), PAPER_TABLE_4},
    {SHAPE("LLaMA2-3B", ARCH_LLAMA2, 2048, 64, 16, 1024, 32000, 5504, 0, true), PAPER_TABLE_4},
    {SHAPE("LLaMA2-13B", ARCH_LLAMA2, 4096, 64, 32, 1024, 32000, 11008, 0, true), PAPER_TABLE_4},
    /* Small enough that the CPU executor trains it in seconds: byte-level vocabulary. */
    {SHAPE("tiny", ARCH_GPT3, 64, 8, 4, 64, 256, 256, 0, true),
     "mario-tui: the CPU executor's test model"},
    /* Real models, from their published configs; their training sequence length as s.
     * Llama's RoPE has no parameters, so it adds nothing. */
    {SHAPE("GPT-3-13B", ARCH_GPT3, 5120, 40, 40, 2048, 50257, 20480, 0, false),
     "Brown et al. 2020, Table 2.1 (d_model printed 5140; 40 heads x d_head 128 = 5120, "
     "Megatron-LM's GPT-3 13B)"},
    {SHAPE("GPT-3-175B", ARCH_GPT3, 12288, 96, 96, 2048, 50257, 49152, 0, false),
     "Brown et al. 2020, Table 2.1"},
    {SHAPE("LLaMA-2-7B", ARCH_LLAMA2, 4096, 32, 32, 4096, 32000, 11008, 32, false),
     "meta-llama/Llama-2-7b-hf config.json"},
    {SHAPE("LLaMA-2-13B", ARCH_LLAMA2, 5120, 40, 40, 4096, 32000, 13824, 40, false),
     "meta-llama/Llama-2-13b-hf config.json"},
    {SHAPE("LLaMA-2-70B", ARCH_LLAMA2, 8192, 80, 64, 4096, 32000, 28672, 8, false),
     "meta-llama/Llama-2-70b-hf config.json"},
    {SHAPE("Llama-3.1-8B", ARCH_LLAMA2, 4096, 32, 32, 8192, 128256, 14336, 8, false),
     "meta-llama/Llama-3.1-8B config.json" LLAMA31_S},
    {SHAPE("Llama-3.1-70B", ARCH_LLAMA2, 8192, 80, 64, 8192, 128256, 28672, 8, false),
     "meta-llama/Llama-3.1-70B config.json" LLAMA31_S},
    {SHAPE("Llama-3.1-405B", ARCH_LLAMA2, 16384, 126, 128, 8192, 128256, 53248, 8, false),
     "meta-llama/Llama-3.1-405B config.json" LLAMA31_S},
};

/* Efficiency and the two overheads (model/cost.h, "Overheads") of the A100s are fitted to the
 * paper's measured Table 5 rows of GPT3-13B (scripts/fit_overheads.py; docs/paper-comparison.md
 * checks them on LLaMA2-13B's); the H100s keep their efficiency guess and take the same
 * software stack's overheads, unmeasured there. */
#define FIT_EFFICIENCY 0.551  /* fitted: MFU of a block at large micro-batches */
#define FIT_OP_US 3360.0      /* fitted: framework cost of a forward or backward instruction */
#define FIT_LAYER_US 546.0    /* fitted: kernel launches of one block, one pass */
/* nvlink_gbps (the last field), the GPU's NVLink bandwidth per direction: A100 (SXM) NVLink 3, 12 links x 25
 * GB/s = 300 GB/s per direction (600 GB/s total, NVIDIA A100 datasheet); H100 SXM and H200
 * NVLink 4, 18 links x 25 GB/s = 450 GB/s per direction (900 GB/s total, NVIDIA H100 and H200
 * datasheets). The bus bandwidth NCCL reaches is a little lower (nccl-tests all_reduce_perf
 * busbw ~230-240 GB/s on A100 DGX, ~360-370 on H100 DGX); set cluster.tp_gbps to measure. */
/* host_gbps (after it), the GPU's link to host memory per direction, effective (model/cost.h
 * "Offload" says where the figures come from): PCIe Gen4 x16 for the A100s (~25 GB/s of the
 * 32 GB/s raw), PCIe Gen5 x16 for H100 SXM and H200 (~50 GB/s of 64). */
#define HOST_GBPS_PCIE4 25.0
#define HOST_GBPS_PCIE5 50.0
static const struct device_spec device_table[] = {
    {"A100-40G", 312e12, FIT_EFFICIENCY, 40.0 * (1 << 30), 1555, FIT_OP_US, FIT_LAYER_US, 300,
     HOST_GBPS_PCIE4},
    {"A100-80G", 312e12, FIT_EFFICIENCY, 80.0 * (1 << 30), 2039, FIT_OP_US, FIT_LAYER_US, 300,
     HOST_GBPS_PCIE4},
    {"H100-80G", 989e12, 0.45, 80.0 * (1 << 30), 3350, FIT_OP_US, FIT_LAYER_US, 450,
     HOST_GBPS_PCIE5},
    {"H200", 989e12, 0.45, 141e9, 4800, FIT_OP_US, FIT_LAYER_US, 450, HOST_GBPS_PCIE5},
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static const char *const device_names[] = {"A100-40G", "A100-80G", "H100-80G", "H200", NULL};

int presets_model(const char *name, struct model_spec *out, struct mt_err *e)
{
    for (size_t i = 0; i < COUNT(model_table); i++)
        if (strcasecmp(model_table[i].spec.name, name) == 0) {
            *out = model_table[i].spec;
            return MT_OK;
        }
    return err_set(e, MT_EINVAL, "unknown model '%s' (presets: see mario-tui models)", name);
}

const char *presets_model_source(const char *name)
{
    for (size_t i = 0; i < COUNT(model_table); i++)
        if (strcmp(model_table[i].spec.name, name) == 0)
            return model_table[i].source;
    return NULL;
}

const char *presets_model_display(const struct model_spec *m, char *buf, size_t n)
{
    const char *src = presets_model_source(m->name);
    struct model_spec p;
    bool paper = src != NULL && strcmp(src, PAPER_TABLE_4) == 0 &&
                 presets_model(m->name, &p, NULL) == MT_OK && p.hidden_size == m->hidden_size &&
                 p.num_layers == m->num_layers && p.num_attention_heads == m->num_attention_heads;
    snprintf(buf, n, "%s%s", m->name, paper ? " (paper Table 4)" : "");
    return buf;
}

int presets_device(const char *name, struct device_spec *out, struct mt_err *e)
{
    for (size_t i = 0; i < COUNT(device_table); i++)
        if (strcasecmp(device_table[i].name, name) == 0) {
            *out = device_table[i];
            return MT_OK;
        }
    /* "H100" for H100-80G: the one preset the name begins (a family with one memory size) */
    const char *hit = NULL;
    int hits = 0;
    size_t len = strlen(name);
    for (size_t i = 0; i < COUNT(device_table) && len > 0; i++)
        if (strncasecmp(device_table[i].name, name, len) == 0)
            hit = device_table[i].name, hits++;
    if (hits == 1)
        return err_set(e, MT_EINVAL, "unknown device '%s': did you mean %s? (presets: A100-40G, "
                       "A100-80G, H100-80G, H200)", name, hit);
    return err_set(e, MT_EINVAL, "unknown device '%s' (presets: A100-40G, A100-80G, H100-80G, H200%s)",
                   name, hits > 1 ? ": give the memory size too" : "");
}

/* The names, in model_table's order, taken from it once. */
static const char *model_names[COUNT(model_table) + 1];
static pthread_once_t model_names_once = PTHREAD_ONCE_INIT;

static void presets_names_fill(void)
{
    for (size_t i = 0; i < COUNT(model_table); i++)
        model_names[i] = model_table[i].spec.name;
}

const char *const *presets_model_names(void)
{
    pthread_once(&model_names_once, presets_names_fill);
    return model_names;
}

const char *const *presets_device_names(void)
{
    return device_names;
}
