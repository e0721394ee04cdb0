/* tui/cmd.h: the mario-tui command line: one file per command (tmux cmd-*.c), one table in
 * tui/main.c, and the plan flags every plan-making command shares (tui/cmd_plan.c). */
#ifndef MT_TUI_CMD_H
#define MT_TUI_CMD_H

#include <getopt.h>
#include <stdbool.h>

#include "model/config.h"

struct plan;
struct mt_err;

struct cmd_entry {
    const char *name;
    const char *summary;
    int (*exec)(int argc, char **argv); /* returns the exit status: 0 ok, 1 failure, 2 usage */
};

/* The plan flags, the same on every command that makes a plan. */
#define CMD_PLAN_FLAGS_HELP                                                                        \
    "  CONFIG                   a config JSON, a Hugging Face config.json or a plan JSON\n"      \
    "                           (default: GPT3-1.6B on 8 x A100-40G, V, global batch 128)\n"     \
    "  --model NAME             model preset: GPT3-1.6B GPT3-13B LLaMA2-3B LLaMA2-13B tiny\n"    \
    "  --scheme S               V (1F1B) | X (Chimera) | W (interleaved) | GPipe |\n"           \
    "                           Async (PipeMare) | PipeDream (no flush between iterations) |\n" \
    "                           split backward: ZB-H1 | ZB-H2 | ZB-V | ZB-W | DualPipeV\n"      \
    "  --devices D              devices (pp x dp)\n"                                             \
    "  --dp N                   data-parallel degree (default 1)\n"                              \
    "  --microbatches N         micro-batches per iteration (overrides the global batch)\n"      \
    "  --micro-batch-size B     samples per micro-batch\n"                                       \
    "  --global-batch G         samples per iteration\n"                                         \
    "  --chunks V               chunks per device for W (default 2)\n"                           \
    "  --memory SIZE            memory cap per device, e.g. 40G\n"                               \
    "  --device NAME            device preset: A100-40G A100-80G H100-80G H200\n"               \
    "  --unit-costs F,B,RC[,W]  unit costs: times in t, memory in units of M_theta; B is the\n"  \
    "                           whole backward, W its weight-gradient part (default B/2)\n"    \
    "  --blocking-send          rendezvous p2p: a send waits for its receive\n"                 \
    "  --iterations K           iterations one plan spans (Async, PipeDream; default 1)\n"      \
    "  --update-interval U      backwards per optimizer step of a stage (Async, PipeDream;\n"   \
    "                           default 1)\n"                                                    \
    "  --calibration FILE       measured costs from `mario-tui profile` in place of the\n"      \
    "                           analytic ones (a plan keeps its instructions)\n"

enum {
    CMD_OPT_MODEL = 1000,
    CMD_OPT_SCHEME,
    CMD_OPT_DEVICES,
    CMD_OPT_DP,
    CMD_OPT_MICROBATCHES,
    CMD_OPT_MBS,
    CMD_OPT_GLOBAL_BATCH,
    CMD_OPT_CHUNKS,
    CMD_OPT_MEMORY,
    CMD_OPT_DEVICE,
    CMD_OPT_UNIT_COSTS,
    CMD_OPT_BLOCKING,
    CMD_OPT_ITERATIONS,
    CMD_OPT_UPDATE_INTERVAL,
    CMD_OPT_CALIBRATION,
    CMD_OPT__PLAN_END,
};

#define CMD_PLAN_LONG_OPTIONS                                                                      \
    {"model", required_argument, NULL, CMD_OPT_MODEL},                                             \
        {"scheme", required_argument, NULL, CMD_OPT_SCHEME},                                       \
        {"devices", required_argument, NULL, CMD_OPT_DEVICES},                                     \
        {"dp", required_argument, NULL, CMD_OPT_DP},                                               \
        {"microbatches", required_argument, NULL, CMD_OPT_MICROBATCHES},                           \
        {"micro-batch-size", required_argument, NULL, CMD_OPT_MBS},                                \
        {"global-batch", required_argument, NULL, CMD_OPT_GLOBAL_BATCH},                           \
        {"chunks", required_argument, NULL, CMD_OPT_CHUNKS},                                       \
        {"memory", required_argument, NULL, CMD_OPT_MEMORY},                                       \
        {"device", required_argument, NULL, CMD_OPT_DEVICE},                                       \
        {"unit-costs", required_argument, NULL, CMD_OPT_UNIT_COSTS},                               \
        {"blocking-send", no_argument, NULL, CMD_OPT_BLOCKING},                                    \
        {"iterations", required_argument, NULL, CMD_OPT_ITERATIONS},                               \
        {"update-interval", required_argument, NULL, CMD_OPT_UPDATE_INTERVAL},                     \
        {"calibration", required_argument, NULL, CMD_OPT_CALIBRATION}

#define CMD_PLAN_MAX_OVERRIDES 32

/* Flags are recorded as given and applied after the CONFIG file is read. */
struct cmd_plan {
    const char *path; /* CONFIG or PLAN; NULL = built-in default */
    int n_over;
    struct {
        int opt;
        const char *arg;
    } over[CMD_PLAN_MAX_OVERRIDES];
};

/* Records a plan flag; returns false when opt is not one. */
bool cmd_plan_flag(struct cmd_plan *cp, int opt, const char *arg);
/* Reads the config (or plan file), applies the flags, validates. When the file is a plan
 * and no flag changes it, *plan_out (if non-NULL) receives the loaded plan. */
int cmd_plan_config(const struct cmd_plan *cp, struct config *out, struct plan **plan_out,
                    struct mt_err *e);
/* The config with the flags applied, checked only for what the tuner keeps (model, cluster,
 * batch, devices, cap): the scheme and its geometry are left to the tuner. */
int cmd_plan_config_raw(const struct cmd_plan *cp, struct config *out, struct mt_err *e);
/* cmd_plan_config + cmd_plan_finish. */
int cmd_plan_build(const struct cmd_plan *cp, struct plan **out, struct mt_err *e);
/* What follows cmd_plan_config: ("Auto": the tuner's best) + scheme_build, or the loaded plan
 * (owned from here on), + validate_plan. c may be changed (Auto resolved). */
int cmd_plan_finish(const struct cmd_plan *cp, struct config *c, struct plan *loaded,
                    struct plan **out, struct mt_err *e);
/* After getopt: the one optional CONFIG (what names it in the usage error) into cp->path.
 * Returns 0, or 2 after printing the usage error. */
int cmd_plan_positional(struct cmd_plan *cp, int argc, char **argv, const char *cmd,
                        const char *what);
/* Prints "mario-tui CMD: message" and returns the exit status for the error code. */
int cmd_fail(const char *cmd, const struct mt_err *e);
/* Prints a usage error and returns 2. */
int cmd_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

int cmd_simulate(int argc, char **argv);
int cmd_optimize(int argc, char **argv);
int cmd_tune(int argc, char **argv);
int cmd_explore(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_plan_inputs(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_profile(int argc, char **argv);
int cmd_chart(int argc, char **argv);

#endif
