/* tui/main.c: `mario-tui COMMAND [ARGS]`: the command's entry from cmd_table (tui/cmd.c) runs
 * it; the only place besides each command's entry that turns errors into exit statuses. */
#include <config.h>

#include <locale.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tui/cmd.h"
#include "util/xalloc.h"

static void main_usage(FILE *f)
{
    fprintf(f, "Usage: mario-tui COMMAND [ARGS]    (mario-tui COMMAND --help for more)\n"
               "Pipeline-parallel schedules with near zero-cost activation checkpointing\n"
               "(Mario, PPoPP'25): see, fix, tune and run them.\n\nCommands:\n");
    int w = (int)strlen("--version"); /* one column, as wide as the longest name */
    for (int i = 0; cmd_table[i] != NULL; i++)
        if ((int)strlen(cmd_table[i]->name) > w)
            w = (int)strlen(cmd_table[i]->name);
    for (int i = 0; cmd_table[i] != NULL; i++)
        fprintf(f, "  %-*s  %s\n", w, cmd_table[i]->name, cmd_table[i]->summary);
    fprintf(f, "\n  %-*s  print the version\n", w, "--version");
}

int main(int argc, char **argv)
{
    setlocale(LC_ALL, "");
    setlocale(LC_NUMERIC, "C"); /* "1.5G" and JSON numbers read the same in every locale */
    xalloc_keep_heap();
    if (argc < 2) {
        /* No arguments: the explorer on the built-in default (or the tables without a tty). */
        char *args[] = {argv[0], NULL};
        return cmd_find(isatty(STDIN_FILENO) && isatty(STDOUT_FILENO) ? "explore" : "simulate")
            ->exec(1, args);
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
    const struct cmd_entry *ce = cmd_find(argv[1]);
    if (ce != NULL)
        return ce->exec(argc - 1, argv + 1);
    fprintf(stderr, "mario-tui: unknown command '%s'\n", argv[1]);
    main_usage(stderr);
    return 2;
}
