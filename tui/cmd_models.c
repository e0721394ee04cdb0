/* tui/cmd_models.c: `mario-tui models [CONFIG] [--json]`: every model preset with its shape,
 * its parameter count (computed by the cost model, model/cost.h) and where the shape comes
 * from, then every device preset with its figures (model/presets.c names their datasheets); or
 * the model of CONFIG (ours or a Hugging Face config.json), so that its count can be checked
 * against the model card. The paper's Table 4 shapes are marked, so that nobody takes them for
 * the published models. */
#include <config.h>
#include "tui/cmd.h"

#include <stdio.h>
#include <stdlib.h>

#include "model/config.h"
#include "model/presets.h"
#include "util/err.h"

struct models_opts {
    bool json;
};

static const struct cmd_option models_options[] = {
    {.name = "json", CMD_TO_BOOL(struct models_opts, json),
     .help = "the lists as JSON: shape, parameters, default attention, source;\n"
             "each device's figures"},
    {0},
};

static int models_exec(int argc, char **argv);

const struct cmd_entry cmd_models_entry = {
    .name = "models",
    .summary = "list the model presets (shape, parameters, source) and the device presets",
    .usage = "Usage: mario-tui models [CONFIG] [--json]\n"
             "Every model preset (--model NAME): its shape, its parameter count as the cost\n"
             "model counts it (the whole model, model_parameters), its default attention, and\n"
             "the source of the shape; then every device preset (--device NAME): dense BF16\n"
             "and FP8 peak, HBM size and bandwidth, NVLink per direction and NCCL's bus\n"
             "bandwidth inside the node, network per GPU, GPUs an NVLink domain joins, the\n"
             "measured GEMM ceiling. With CONFIG (a config or a Hugging Face config.json),\n"
             "that config's model alone, as it is read: family parts, seq_length, parameters.\n\n",
    .options = models_options,
    .footer = "Exit status: 0 ok, 2 bad usage or input.\n",
    .args_min = 0,
    .args_max = 1,
    .args = "CONFIG",
    .exec = models_exec,
};

static void models_devices(void)
{
    printf("%-9s %8s %8s %8s %8s %8s %6s %5s %5s %5s\n", "device", "bf16 TF", "fp8 TF", "HBM",
           "HBM GB/s", "NVL GB/s", "busbw", "net", "node", "GEMM");
    const char *const *names = presets_device_names();
    for (int i = 0; names[i] != NULL; i++) {
        struct device_spec d;
        if (presets_device(names[i], &d, NULL) != MT_OK)
            continue;
        char fp8[16];
        if (d.fp8_peak_flops > 0)
            snprintf(fp8, sizeof fp8, "%.0f", d.fp8_peak_flops / 1e12);
        else
            snprintf(fp8, sizeof fp8, "-");
        /* the memory as its datasheet counts it: whole GiB (A100, H100) or decimal GB */
        char mem[24];
        double gib = d.mem_bytes / (1024.0 * 1024 * 1024);
        if (gib == (double)(long)gib)
            snprintf(mem, sizeof mem, "%.0f GiB", gib);
        else
            snprintf(mem, sizeof mem, "%.0f GB", d.mem_bytes / 1e9);
        printf("%-9s %8.0f %8s %8s %8.0f %8.0f %6.0f %5.0f %5d %5.3f\n", d.name,
               d.peak_flops / 1e12, fp8, mem, d.hbm_gbps, d.nvlink_gbps, d.nvlink_busbw_gbps,
               d.net_gbps, d.gpus_per_node, d.gemm_eff);
    }
    printf("TF: dense TFLOP/s; NVL: NVLink (Infinity Fabric) per direction; busbw: NCCL all-reduce\n"
           "bus bandwidth inside the node; net: the network per GPU, GB/s; node: GPUs an NVLink\n"
           "domain joins; GEMM: the measured ceiling of a GEMM's share of the bf16 peak.\n"
           "Sources: model/presets.c.\n");
}

static int models_exec(int argc, char **argv)
{
    struct models_opts o = {0};
    int first, st = cmd_options_parse(&cmd_models_entry, argc, argv, &o, NULL, &first);
    if (st != CMD_OPTIONS_RUN)
        return st;
    struct config given;
    struct mt_err e;
    err_clear(&e);
    if (first < argc && config_load_file(argv[first], &given, &e) != MT_OK)
        return cmd_fail("models", &e);
    const struct config *one = first < argc ? &given : NULL;
    if (o.json) {
        char *text = presets_models_json(one);
        if (text == NULL) {
            err_set(&e, MT_ENOMEM, "out of memory");
            return cmd_fail("models", &e);
        }
        printf("%s\n", text);
        free(text);
        return 0;
    }
    printf("%-32s %6s %6s %5s %4s %6s %6s %7s %9s  %s\n", "model", "type", "h", "L", "a", "kv",
           "ffn", "s", "params", "source");
    const char *const *names = presets_model_names();
    for (int i = 0; one != NULL ? i == 0 : names[i] != NULL; i++) {
        struct config c;
        if (one != NULL) {
            c = *one;
        } else {
            config_default(&c);
            if (presets_model(names[i], &c.model, NULL) != MT_OK)
                continue;
        }
        const struct model_spec *m = &c.model;
        char display[96];
        printf("%-32s %6s %6d %5d %4d %6d %6d %7d %8.2fB  %s\n",
               presets_model_display(m, display, sizeof display), config_arch_name(m->arch),
               m->hidden_size, m->num_layers, m->num_attention_heads, config_kv_heads(m),
               m->ffn_hidden_size, m->seq_length, presets_config_params(&c) / 1e9,
               one != NULL ? one->source : presets_model_source(m->name));
    }
    if (one == NULL) {
        printf("\n");
        models_devices();
    }
    return 0;
}
