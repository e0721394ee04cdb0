/* tui/main.c: `mario-tui COMMAND [ARGS]`. The command table (tmux main_table); the only
 * place besides each command's entry that turns errors into exit statuses. */
#include <config.h>

#include <locale.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tui/cmd.h"
#include "util/xalloc.h"

/* until every command has its entry (tui/cmd.h) */
struct main_cmd {
    const char *name, *summary;
    int (*exec)(int argc, char **argv);
};

static const struct main_cmd main_table[] = {
    {"explore", "the interactive explorer (the default command)", cmd_explore},
    {"simulate", "simulate a plan: per-device time, bubbles, memory", cmd_simulate},
    {"optimize", "Mario's four passes, step by step: time, throughput, memory", cmd_optimize},
    {"tune", "grid-search scheme, pp, dp, micro-batch size, checkpointing", cmd_tune},
    {"export", "draw a plan: Gantt chart and memory as SVG, PDF or PNG", cmd_export},
    {"run", "run a plan for real under MPI: loss, step time, measured memory", cmd_run},
    {"plan-inputs", "input-aware checkpointing: a plan per length bucket", cmd_plan_inputs},
    {"compare", "lay a simulation beside a measured trace: step time, MAPE, memory", cmd_compare},
    {"profile", "measure this machine on the executor: a calibration for --calibration", cmd_profile},
    {"chart", "draw a grouped bar chart from a JSON spec (the docs' figures)", cmd_chart},
};

#define CMD_COUNT (sizeof main_table / sizeof main_table[0])

static void main_usage(FILE *f)
{
    fprintf(f, "Usage: mario-tui COMMAND [ARGS]    (mario-tui COMMAND --help for more)\n"
               "Pipeline-parallel schedules with near zero-cost activation checkpointing\n"
               "(Mario, PPoPP'25): see, fix, tune and run them.\n\nCommands:\n");
    for (size_t i = 0; i < CMD_COUNT; i++)
        fprintf(f, "  %-10s %s\n", main_table[i].name, main_table[i].summary);
    fprintf(f, "\n  --version  print the version\n");
}

int main(int argc, char **argv)
{
    setlocale(LC_ALL, "");
    setlocale(LC_NUMERIC, "C"); /* "1.5G" and JSON numbers read the same in every locale */
    xalloc_keep_heap();
    if (argc < 2) {
        /* No arguments: the explorer on the built-in default (or the tables without a tty). */
        char *args[] = {argv[0], NULL};
        return isatty(STDIN_FILENO) && isatty(STDOUT_FILENO) ? cmd_explore(1, args)
                                                             : cmd_simulate(1, args);
    }
    if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 ||
        strcmp(argv[1], "help") == 0) {
        main_usage(stdout);
        return 0;
    }
    if (strcmp(argv[1], "--version") == 0) {
        puts(PACKAGE_STRING);
        return 0;
    }
    for (size_t i = 0; i < CMD_COUNT; i++)
        if (strcmp(argv[1], main_table[i].name) == 0)
            return main_table[i].exec(argc - 1, argv + 1);
    fprintf(stderr, "mario-tui: unknown command '%s'\n", argv[1]);
    main_usage(stderr);
    return 2;
}
