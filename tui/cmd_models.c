/* tui/cmd_models.c: `mario-tui models [--json]`: every model preset with its shape, its
 * parameter count (computed by the cost model, model/cost.h) and where the shape comes from.
 * The paper's Table 4 shapes are marked, so that nobody takes them for the published models. */
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
     .help = "the list as JSON: shape, parameters, default attention, source"},
    {0},
};

static int models_exec(int argc, char **argv);

const struct cmd_entry cmd_models_entry = {
    .name = "models",
    .summary = "list the model presets: shape, parameter count, source",
    .usage = "Usage: mario-tui models [--json]\n"
             "Every model preset (--model NAME): its shape, its parameter count as the cost\n"
             "model counts it, its default attention, and the source of the shape.\n\n",
    .options = models_options,
    .footer = "Exit status: 0 ok, 2 bad usage.\n",
    .args_min = 0,
    .args_max = 0,
    .args = "",
    .exec = models_exec,
};

static int models_exec(int argc, char **argv)
{
    struct models_opts o = {0};
    int first, st = cmd_options_parse(&cmd_models_entry, argc, argv, &o, NULL, &first);
    if (st != CMD_OPTIONS_RUN)
        return st;
    if (o.json) {
        char *text = presets_models_json();
        if (text == NULL) {
            struct mt_err e;
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
    for (int i = 0; names[i] != NULL; i++) {
        struct model_spec m;
        if (presets_model(names[i], &m, NULL) != MT_OK)
            continue;
        char display[96];
        printf("%-32s %6s %6d %5d %4d %6d %6d %7d %8.2fB  %s\n",
               presets_model_display(&m, display, sizeof display), config_arch_name(m.arch),
               m.hidden_size, m.num_layers, m.num_attention_heads, config_kv_heads(&m),
               m.ffn_hidden_size, m.seq_length, presets_model_params(&m) / 1e9,
               presets_model_source(m.name));
    }
    return 0;
}
