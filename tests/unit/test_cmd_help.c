/* tests/unit/test_cmd_help.c: the plan flags' --help (tui/cmd.h CMD_PLAN_FLAGS_HELP, compiled
 * into every command's usage) names exactly the model and device presets model/presets.c
 * has, in its order: a preset added there and not to the help, or the other way round, fails
 * here instead of misleading a user. */
#include <config.h>

#include <stdio.h>
#include <string.h>

#include "model/presets.h"
#include "tests/check.h"
#include "tui/cmd.h"

/* The names the help lists after `label` on its line, space-separated, into out. */
static int help_names(const char *label, char out[][32], int max)
{
    const char *at = strstr(CMD_PLAN_FLAGS_HELP, label);
    if (at == NULL)
        return -1;
    at += strlen(label);
    const char *end = strchr(at, '\n');
    int n = 0;
    while (at < end && n < max) {
        while (at < end && *at == ' ')
            at++;
        int len = 0;
        while (at < end && *at != ' ' && len < 31)
            out[n][len++] = *at++;
        out[n][len] = '\0';
        if (len > 0)
            n++;
    }
    return n;
}

static void same(const char *label, const char *const *presets)
{
    char names[16][32];
    int n = help_names(label, names, 16), k = 0;
    for (; presets[k] != NULL; k++)
        CHECK(k < n && strcmp(names[k], presets[k]) == 0);
    CHECK_EQ_INT(n, k);
}

int main(void)
{
    same("model preset:", presets_model_names());
    same("device preset:", presets_device_names());
    return check_report("test_cmd_help");
}
