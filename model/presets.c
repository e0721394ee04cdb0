/* model/presets.c: model presets from the paper's Table 4 (hidden size, layers, heads,
 * sequence length as printed there; vocabularies and FFN widths of the model families) and
 * device presets from the vendors' datasheets (dense bf16 peak, memory, HBM bandwidth). */
#include <config.h>
#include "model/presets.h"

#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <strings.h>

#include "model/config.h"
#include "util/err.h"

/* paper_stack (the last field): the paper measured eager attention and 16 bytes a parameter,
 * so its shapes keep them by default (its figures stay as printed); tiny is the executor's own
 * model, eager with 16 bytes (fp32 weights, gradients, m, v). */
static const struct model_spec model_table[] = {
    {"GPT3-1.6B", ARCH_GPT3, 1024, 128, 16, 1024, 50257, 4096, true},
    {"GPT3-13B", ARCH_GPT3, 3000, 128, 40, 1024, 50257, 12000, true},
    {"LLaMA2-3B", ARCH_LLAMA2, 2048, 64, 16, 1024, 32000, 5504, true},
    {"LLaMA2-13B", ARCH_LLAMA2, 4096, 64, 32, 1024, 32000, 11008, true},
    /* Small enough that the CPU executor trains it in seconds: byte-level vocabulary. */
    {"tiny", ARCH_GPT3, 64, 8, 4, 64, 256, 256, true},
};

/* nvlink_gbps, the GPU's NVLink bandwidth per direction: A100 (SXM) NVLink 3, 12 links x 25
 * GB/s = 300 GB/s per direction (600 GB/s total, NVIDIA A100 datasheet); H100 SXM and H200
 * NVLink 4, 18 links x 25 GB/s = 450 GB/s per direction (900 GB/s total, NVIDIA H100 and H200
 * datasheets). The bus bandwidth NCCL reaches is a little lower (nccl-tests all_reduce_perf
 * busbw ~230-240 GB/s on A100 DGX, ~360-370 on H100 DGX); set cluster.tp_gbps to measure. */
static const struct device_spec device_table[] = {
    {"A100-40G", 312e12, 0.50, 40.0 * (1 << 30), 1555, 300},
    {"A100-80G", 312e12, 0.50, 80.0 * (1 << 30), 2039, 300},
    {"H100-80G", 989e12, 0.45, 80.0 * (1 << 30), 3350, 450},
    {"H200", 989e12, 0.45, 141e9, 4800, 450},
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static const char *const model_names[] = {"GPT3-1.6B", "GPT3-13B", "LLaMA2-3B", "LLaMA2-13B",
                                          "tiny", NULL};
static const char *const device_names[] = {"A100-40G", "A100-80G", "H100-80G", "H200", NULL};

int presets_model(const char *name, struct model_spec *out, struct mt_err *e)
{
    for (size_t i = 0; i < COUNT(model_table); i++)
        if (strcasecmp(model_table[i].name, name) == 0) {
            *out = model_table[i];
            return MT_OK;
        }
    return err_set(e, MT_EINVAL,
                   "unknown model '%s' (presets: GPT3-1.6B, GPT3-13B, LLaMA2-3B, LLaMA2-13B, tiny)",
                   name);
}

int presets_device(const char *name, struct device_spec *out, struct mt_err *e)
{
    for (size_t i = 0; i < COUNT(device_table); i++)
        if (strcasecmp(device_table[i].name, name) == 0) {
            *out = device_table[i];
            return MT_OK;
        }
    return err_set(e, MT_EINVAL, "unknown device '%s' (presets: A100-40G, A100-80G, H100-80G, H200)",
                   name);
}

const char *const *presets_model_names(void)
{
    return model_names;
}

const char *const *presets_device_names(void)
{
    return device_names;
}
