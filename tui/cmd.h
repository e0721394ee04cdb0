/* tui/cmd.h: the mario-tui command line (tmux's cmd-*.c). One file per command, each declaring
 * its entry: a one-line summary, the help text around its options, and one table of those
 * options (name, short letter, argument, help line, and where the value goes). tui/cmd.c
 * lists the entries; tui/cmd_options.c is the one parser that reads argv by a table and makes
 * the --help text from it, so that what a command accepts and what its help lists cannot
 * drift; tui/cmd_plan.c holds the plan flags every plan-making command shares. */
#ifndef MT_TUI_CMD_H
#define MT_TUI_CMD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "model/config.h"

struct cmd_plan;
struct plan;
struct mt_err;

/* What an option's value is, and how it is stored in the command's options struct. */
enum cmd_type {
    CMD_BOOL,   /* a switch: true into a bool */
    CMD_SET,    /* a switch: .value into an int */
    CMD_STRING, /* the argument into a const char * (it points into argv) */
    CMD_INT,    /* a whole number in [min, max] into an int */
    CMD_DOUBLE, /* a finite number in [min, max] (an end left out with open_min / open_max) */
    CMD_CHOICE, /* one of .choices into an int: its index */
    CMD_CALL,   /* .call(opts, option, argument, e) does what the table cannot say */
    CMD_PLAN,   /* a plan flag (.value: enum cmd_plan_flag), recorded in struct cmd_plan */
};

struct cmd_option {
    const char *name; /* the long name without "--"; NULL ends a table */
    char letter;      /* the short option, or 0 */
    enum cmd_type type;
    const char *arg; /* the argument's name in the help (FILE, N); NULL: the option takes none */
    bool optional;   /* --name[=ARG]: the argument may be left out, which gives .dflt */
    size_t at;       /* where the value goes: an offset into the options struct (CMD_AT) */
    double min, max; /* CMD_INT, CMD_DOUBLE: the range */
    bool open_min, open_max;    /* CMD_DOUBLE: the range leaves out min / max */
    double dflt;                /* an optional argument left out */
    int value;                  /* CMD_SET: what is stored; CMD_PLAN: which flag; CMD_CALL: free */
    const char *const *choices; /* CMD_CHOICE: the names, NULL-terminated */
    int (*call)(void *opts, const struct cmd_option *o, const char *arg, struct mt_err *e);
    const char *heading; /* printed as it is before the option's help line */
    const char *help;    /* one line, or several separated by '\n' (no final '\n') */
    /* or the help written at run time from a registry (the --scheme names), the same shape */
    void (*help_write)(char *buf, size_t n);
};

/* The offset of member m of struct T, and a compile error unless m is of type C. */
#define CMD_AT(T, m, C) (offsetof(T, m) + 0 * sizeof((C *){0} = &((T *)0)->m))
/* The designators of each kind of option, for the tables. */
#define CMD_TO_BOOL(T, m) .type = CMD_BOOL, .at = CMD_AT(T, m, bool)
#define CMD_TO_SET(T, m, v) .type = CMD_SET, .at = CMD_AT(T, m, int), .value = (v)
#define CMD_TO_STRING(T, m) .type = CMD_STRING, .at = CMD_AT(T, m, const char *)
#define CMD_TO_INT(T, m, lo, hi) .type = CMD_INT, .at = CMD_AT(T, m, int), .min = (lo), .max = (hi)
#define CMD_TO_DOUBLE(T, m, lo, hi)                                                                \
    .type = CMD_DOUBLE, .at = CMD_AT(T, m, double), .min = (lo), .max = (hi)
#define CMD_TO_CHOICE(T, m, names) .type = CMD_CHOICE, .at = CMD_AT(T, m, int), .choices = (names)
#define CMD_TO_CALL(fn, v) .type = CMD_CALL, .call = (fn), .value = (v)

struct cmd_entry {
    const char *name;    /* mario-tui NAME */
    const char *summary; /* its line in `mario-tui --help` */
    const char *usage;   /* --help before the options: usage lines, what the command does */
    bool plan_flags;     /* takes the plan flags (listed before its own options) */
    const struct cmd_option *options;   /* its own options, in the order --help lists them */
    const char *footer;                 /* --help after the options (exit statuses), or NULL */
    int args_min, args_max;             /* positional arguments; args_max < 0: no limit */
    const char *args;                   /* what they are, in the usage errors ("CONFIG") */
    int (*exec)(int argc, char **argv); /* returns the exit status: 0 ok, 1 failure, 2 usage */
};

/* The commands, in the order `mario-tui --help` lists them; NULL-terminated (tui/cmd.c). */
extern const struct cmd_entry *const cmd_table[];
const struct cmd_entry *cmd_find(const char *name);

/* cmd_options_parse's answer when the command goes on. */
#define CMD_OPTIONS_RUN (-1)

/* Reads argv (argv[0] is the command's name) by ce's table and the plan flags: each value
 * into opts (the struct the table's offsets are into) or to its callback, each plan flag into
 * cp (NULL when ce takes none; cp->path gets the first positional argument). Checks the
 * count of positional arguments; *first is the index of the first one (getopt_long moves
 * them behind the options). Returns CMD_OPTIONS_RUN, or the exit status after printing the
 * help (0) or a usage error (2): "mario-tui CMD: OPTION: what is wrong" and a "Try" line. */
int cmd_options_parse(const struct cmd_entry *ce, int argc, char **argv, void *opts,
                      struct cmd_plan *cp, int *first);
/* The --help text: ce->usage, the plan flags, the options, -h, ce->footer. */
void cmd_options_help(const struct cmd_entry *ce, FILE *f);
/* A whole number, strictly: digits with an optional sign, nothing around them. */
int cmd_options_int(const char *arg, long lo, long hi, long *out, struct mt_err *e);

/* The plan flags, the same on every command that makes a plan (tui/cmd_plan.c). */
enum cmd_plan_flag {
    CMD_PLAN_MODEL,
    CMD_PLAN_SCHEME,
    CMD_PLAN_DEVICES,
    CMD_PLAN_DP,
    CMD_PLAN_MICROBATCHES,
    CMD_PLAN_MBS,
    CMD_PLAN_GLOBAL_BATCH,
    CMD_PLAN_CHUNKS,
    CMD_PLAN_MEMORY,
    CMD_PLAN_DEVICE,
    CMD_PLAN_UNIT_COSTS,
    CMD_PLAN_BLOCKING,
    CMD_PLAN_OVERLAP_A2A,
    CMD_PLAN_ITERATIONS,
    CMD_PLAN_UPDATE_INTERVAL,
    CMD_PLAN_CALIBRATION,
    CMD_PLAN_CORES,
    CMD_PLAN_TP,
    CMD_PLAN_ATTENTION,
    CMD_PLAN_SEQ_PARALLEL,
    CMD_PLAN_DIST_OPT,
    CMD_PLAN_RESERVE,
    CMD_PLAN_HOST_GBPS,
    CMD_PLAN_HOST_MEMORY,
    CMD_PLAN_CE_FUSION,
    CMD_PLAN_NO_CE_FUSION,
    CMD_PLAN_GRAD_FP32,
    CMD_PLAN_GRAD_BF16,
    CMD_PLAN_VOCAB_DIV,
    CMD_PLAN_FRAMEWORK,
    CMD_PLAN_TP_COMM_OVERLAP,
    CMD_PLAN_OVERLAP_GRAD_REDUCE,
    CMD_PLAN_OVERLAP_PARAM_GATHER,
    /* the stages' layers (model/stage_split.h) */
    CMD_PLAN_PP_LAYOUT,
    CMD_PLAN_FIRST_LAYERS,
    CMD_PLAN_LAST_LAYERS,
    CMD_PLAN_ACCOUNT_EMB,
    CMD_PLAN_ACCOUNT_LOSS,
    CMD_PLAN_FIRST_LESS,
    CMD_PLAN_LAST_LESS,
    CMD_PLAN_SEQ_LENGTH,
    CMD_PLAN_PP,
    /* context parallelism (model/config_parallel.c) */
    CMD_PLAN_CP,
    CMD_PLAN_CP_COMM,
    CMD_PLAN_EP, /* model/moe.h */
    CMD_PLAN_ETP,
    CMD_PLAN_MOE_SKEW,
    CMD_PLAN_FP8, /* model/fp8.h */
    CMD_PLAN_FP8_FORMAT,
    CMD_PLAN_FP8_PARAM_GATHER,
    /* ZeRO / FSDP (model/config_zero.c) */
    CMD_PLAN_ZERO_STAGE,
    CMD_PLAN_FSDP,
    CMD_PLAN_DP_SHARD,
    CMD_PLAN_FSDP_RESHARD,
    CMD_PLAN_RECOMPUTE, /* model/ops_recompute.c */
};

extern const struct cmd_option cmd_plan_options[];

/* `simulate --costs` (tui/cmd_costs.c): stage `only` of m (or, when < 0, the first, a middle
 * and the last) as its ops in order with their FLOPs, bytes, time, kept bytes and share of the
 * stage's time, a table or (json) an array. 0 ok. */
struct cost_model;
int cmd_costs_print(const struct config *c, const struct cost_model *m, int only, bool json);

#define CMD_PLAN_MAX_OVERRIDES 32

/* Flags are recorded as given and applied after the CONFIG file is read. */
struct cmd_plan {
    const char *path; /* CONFIG or PLAN; NULL = built-in default */
    int n_over;
    struct {
        int opt; /* enum cmd_plan_flag */
        const char *arg;
    } over[CMD_PLAN_MAX_OVERRIDES];
    /* what the command does with the plan (enum footprint_use, sim/plan/footprint.h; 0 = a
     * simulation): cmd_plan_finish refuses a plan too big for this machine's memory */
    int use;
};

/* Records a plan flag; MT_EINVAL past CMD_PLAN_MAX_OVERRIDES. */
int cmd_plan_record(struct cmd_plan *cp, int opt, const char *arg, struct mt_err *e);
/* Whether the flag was given. */
bool cmd_plan_given(const struct cmd_plan *cp, int opt);
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
/* The plan flags applied to c, in the order given (what cmd_plan_config does after reading). */
int cmd_plan_apply_flags(const struct cmd_plan *cp, struct config *c, struct mt_err *e);
/* A launch file (model/launch.h: a Megatron-LM script, a torchtitan TOML) as a config, the
 * flags' --devices filling what it leaves open; its warning line and assumptions go to stderr
 * (tui/cmd_import_args.c). */
int cmd_launch_read(const char *path, const struct cmd_plan *cp, struct config *out,
                    struct mt_err *e);
/* Prints "mario-tui CMD: message" and returns the exit status for the error code. */
int cmd_fail(const char *cmd, const struct mt_err *e);
/* Prints a usage error and returns 2. */
int cmd_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A long command's progress on stderr (tui/cmd_progress.c): only on a terminal and not quiet,
 * after 0.2 s, at most ten times a second; cmd_progress_end clears the line. */
struct cmd_progress {
    bool on, shown;
    double t0_ms, last_ms;
    const char *cmd; /* "optimize": the line starts with it */
    long search_last; /* the search's last report; one that goes back starts the offload phase */
    bool search_done, offload_phase;
};
void cmd_progress_start(struct cmd_progress *pr, const char *cmd, bool quiet);
void cmd_progress_say(struct cmd_progress *pr, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void cmd_progress_end(struct cmd_progress *pr);
/* As a pass_watch's step (sim/passes/pass.h; ctx: the cmd_progress): the pass about to run. */
struct pass_pipeline;
bool cmd_progress_pass(void *ctx, const struct pass_pipeline *pl, const char *next, int round);
/* As a search_opts progress (sim/search/search.h; ctx: the cmd_progress): a bar of schedules;
 * after the schedule search has reported its end, the offload search's (--offload). */
bool cmd_progress_search(void *ctx, long done, long budget);

/* The executor's backends, as `run` and `profile` name them (NULL-terminated). */
extern const char *const cmd_run_backends[];

extern const struct cmd_entry cmd_explore_entry;
extern const struct cmd_entry cmd_simulate_entry;
extern const struct cmd_entry cmd_optimize_entry;
extern const struct cmd_entry cmd_tune_entry;
extern const struct cmd_entry cmd_export_entry;
extern const struct cmd_entry cmd_run_entry;
extern const struct cmd_entry cmd_plan_inputs_entry;
extern const struct cmd_entry cmd_compare_entry;
extern const struct cmd_entry cmd_import_entry;
extern const struct cmd_entry cmd_import_args_entry;
extern const struct cmd_entry cmd_profile_entry;
extern const struct cmd_entry cmd_chart_entry;
extern const struct cmd_entry cmd_models_entry;

#endif
