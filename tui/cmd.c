/* tui/cmd.c: the command table (tmux's cmd.c): every command's entry, each declared in its
 * own tui/cmd_*.c, in the order `mario-tui --help` lists them. */
#include <config.h>
#include "tui/cmd.h"

#include <string.h>

const struct cmd_entry *const cmd_table[] = {
    &cmd_explore_entry,
    &cmd_simulate_entry,
    &cmd_optimize_entry,
    &cmd_tune_entry,
    &cmd_export_entry,
    &cmd_run_entry,
    &cmd_plan_inputs_entry,
    &cmd_compare_entry,
    &cmd_import_entry,
    &cmd_import_args_entry,
    &cmd_profile_entry,
    &cmd_chart_entry,
    &cmd_models_entry,
    NULL,
};

const struct cmd_entry *cmd_find(const char *name)
{
    for (int i = 0; cmd_table[i] != NULL; i++)
        if (strcmp(cmd_table[i]->name, name) == 0)
            return cmd_table[i];
    return NULL;
}
