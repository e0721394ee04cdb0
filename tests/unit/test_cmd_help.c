/* tests/unit/test_cmd_help.c: every command of cmd_table (tui/cmd.c) against its own option
 * table, through the command's real entry point: `CMD --help` prints the text made from the
 * table and names every option in it (the plan flags too where the command takes them); an
 * unknown option, a missing argument, an argument given to a switch and a number that is not
 * one (every whole-number and number option, "12x" and "") each exit 2 with the one message
 * naming the command and the option. The tables themselves are checked for what the parser
 * takes on trust (no name twice, an argument name exactly where the kind takes one). And the
 * plan flags' --help names exactly the model and device presets model/presets.c has, in its
 * order: a preset added there and not to the help, or the other way round, fails here
 * instead of misleading a user. */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/presets.h"
#include "model/scheme_registry.h"
#include "tests/check.h"
#include "tui/cmd.h"

static char out[65536], err[4096]; /* what the last command printed */

static void slurp(FILE *t, char *buf, size_t n)
{
    rewind(t);
    size_t k = fread(buf, 1, n - 1, t);
    buf[k] = '\0';
    fclose(t);
}

/* Runs ce's entry point on (ce->name, a1, a2), capturing stdout and stderr. */
static int run(const struct cmd_entry *ce, const char *a1, const char *a2)
{
    char *argv[] = {(char *)ce->name, (char *)a1, (char *)a2, NULL};
    int argc = a2 ? 3 : 2;
    fflush(stdout);
    fflush(stderr);
    FILE *t1 = tmpfile(), *t2 = tmpfile();
    int o1 = dup(1), o2 = dup(2);
    dup2(fileno(t1), 1);
    dup2(fileno(t2), 2);
    int st = ce->exec(argc, argv);
    fflush(stdout);
    fflush(stderr);
    dup2(o1, 1);
    dup2(o2, 2);
    close(o1);
    close(o2);
    slurp(t1, out, sizeof out);
    slurp(t2, err, sizeof err);
    return st;
}

/* A usage error of ce: exit 2, nothing on stdout, "mario-tui CMD: what" and the Try line. */
static void usage_error(const struct cmd_entry *ce, int st, const char *what)
{
    char want[512], try[128];
    snprintf(want, sizeof want, "mario-tui %s: %s", ce->name, what);
    snprintf(try, sizeof try, "\nTry 'mario-tui %s --help'.\n", ce->name);
    CHECK_EQ_INT(st, 2);
    CHECK(out[0] == '\0');
    CHECK(strncmp(err, want, strlen(want)) == 0);
    CHECK(strcmp(err + strlen(want), try) == 0);
    if (st != 2 || strncmp(err, want, strlen(want)) != 0)
        fprintf(stderr, "  %s: got exit %d, '%s', want '%s'\n", ce->name, st, err, want);
}

/* The option's line in a help text: "  --name" then its argument or the help column. */
static bool help_lists(const char *help, const struct cmd_option *o)
{
    char label[96];
    if (o->letter)
        snprintf(label, sizeof label, "\n  -%c, --%s", o->letter, o->name);
    else
        snprintf(label, sizeof label, "\n  --%s", o->name);
    for (const char *at = strstr(help, label); at; at = strstr(at + 1, label)) {
        char next = at[strlen(label)];
        if (next == ' ' || next == '[' || next == '\n')
            return true;
    }
    return false;
}

/* What the parser takes on trust from a table. */
static void table_sane(const struct cmd_entry *ce, const struct cmd_option *t, const char **seen,
                       int *n_seen)
{
    for (const struct cmd_option *o = t; o && o->name; o++) {
        for (int k = 0; k < *n_seen; k++)
            CHECK(strcmp(seen[k], o->name) != 0);
        seen[(*n_seen)++] = o->name;
        bool takes = o->type != CMD_BOOL && o->type != CMD_SET &&
                     !(o->type == CMD_PLAN &&
                       (o->value == CMD_PLAN_BLOCKING || o->value == CMD_PLAN_SEQ_PARALLEL ||
                        o->value == CMD_PLAN_DIST_OPT || o->value == CMD_PLAN_CE_FUSION ||
                        o->value == CMD_PLAN_NO_CE_FUSION || o->value == CMD_PLAN_GRAD_FP32 ||
                        o->value == CMD_PLAN_GRAD_BF16 || o->value == CMD_PLAN_TP_COMM_OVERLAP ||
                        o->value == CMD_PLAN_OVERLAP_GRAD_REDUCE || o->value == CMD_PLAN_ACCOUNT_EMB ||
                        o->value == CMD_PLAN_ACCOUNT_LOSS || o->value == CMD_PLAN_OVERLAP_A2A));
        CHECK((o->arg != NULL) == takes);
        CHECK(!o->optional || o->type == CMD_INT || o->type == CMD_DOUBLE);
        CHECK(o->letter != 'h');
        char written[1024];
        if (o->help_write != NULL)
            o->help_write(written, sizeof written);
        const char *help = o->help_write != NULL ? written : o->help;
        CHECK((o->help == NULL) != (o->help_write == NULL));
        CHECK(help != NULL && help[0] && help[strlen(help) - 1] != '\n');
        CHECK(o->min <= o->max);
        CHECK(o->type != CMD_CHOICE || (o->choices && o->choices[0]));
        CHECK(o->type != CMD_CALL || o->call != NULL);
        CHECK((o->type == CMD_PLAN) == (t == cmd_plan_options));
        if ((o->arg != NULL) != takes)
            fprintf(stderr, "  %s --%s: an argument name where it takes none, or none\n",
                    ce->name, o->name);
    }
}

static void test_command(const struct cmd_entry *ce)
{
    const char *seen[256] = {"help"}; /* the plan flags and a command's own */
    int n_seen = 1;
    if (ce->plan_flags)
        table_sane(ce, cmd_plan_options, seen, &n_seen);
    table_sane(ce, ce->options, seen, &n_seen);

    /* --help: the text made from the table, naming every option */
    char *want = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&want, &len);
    cmd_options_help(ce, m);
    fclose(m);
    char usage[64];
    snprintf(usage, sizeof usage, "Usage: mario-tui %s ", ce->name);
    CHECK_EQ_INT(run(ce, "--help", NULL), 0);
    CHECK(strcmp(out, want) == 0 && err[0] == '\0');
    CHECK(strncmp(out, usage, strlen(usage)) == 0);
    CHECK(strstr(out, "\n  -h, --help               this help\n") != NULL);
    free(want);
    for (const struct cmd_option *o = cmd_plan_options; o->name; o++)
        CHECK(help_lists(out, o) == ce->plan_flags);
    for (const struct cmd_option *o = ce->options; o && o->name; o++) {
        CHECK(help_lists(out, o));
        if (!help_lists(out, o))
            fprintf(stderr, "  %s --help does not list --%s\n", ce->name, o->name);
    }
    CHECK_EQ_INT(run(ce, "-h", NULL), 0);
    CHECK(strncmp(out, usage, strlen(usage)) == 0);

    /* the mistakes, each its one message */
    usage_error(ce, run(ce, "--no-such-option", NULL), "--no-such-option: unknown option");
    usage_error(ce, run(ce, "-Z", NULL), "-Z: unknown option");
    usage_error(ce, run(ce, "--help=1", NULL), "--help: takes no argument");
    for (const struct cmd_option *o = ce->options; o && o->name; o++) {
        char flag[64], what[160];
        snprintf(flag, sizeof flag, "--%s", o->name);
        if (o->arg == NULL) {
            snprintf(flag, sizeof flag, "--%s=1", o->name);
            snprintf(what, sizeof what, "--%s: takes no argument", o->name);
            usage_error(ce, run(ce, flag, NULL), what);
            continue;
        }
        if (!o->optional) {
            snprintf(what, sizeof what, "--%s: needs an argument (%s)", o->name, o->arg);
            usage_error(ce, run(ce, flag, NULL), what);
        }
        if (o->type != CMD_INT && o->type != CMD_DOUBLE)
            continue;
        const char *kind = o->type == CMD_INT ? "an integer" : "a number";
        snprintf(flag, sizeof flag, "--%s=12x", o->name);
        snprintf(what, sizeof what, "--%s: '12x' is not %s", o->name, kind);
        usage_error(ce, run(ce, flag, NULL), what);
        snprintf(flag, sizeof flag, "--%s=", o->name);
        snprintf(what, sizeof what, "--%s: '' is not %s", o->name, kind);
        usage_error(ce, run(ce, flag, NULL), what);
    }
}

/* The names the help of plan flag `name` lists after `label`, space-separated, into out. */
static int help_names(const char *name, const char *label, char names[][32], int max)
{
    const char *help = NULL;
    for (const struct cmd_option *o = cmd_plan_options; o->name; o++)
        if (strcmp(o->name, name) == 0)
            help = o->help;
    if (help == NULL || strncmp(help, label, strlen(label)) != 0)
        return -1;
    const char *at = help + strlen(label), *end = at + strcspn(at, "\n");
    int n = 0;
    while (at < end && n < max) {
        while (at < end && *at == ' ')
            at++;
        int k = 0;
        while (at < end && *at != ' ' && k < 31)
            names[n][k++] = *at++;
        names[n][k] = '\0';
        if (k > 0)
            n++;
    }
    return n;
}

static void same(const char *name, const char *label, const char *const *presets)
{
    char names[32][32];
    int n = help_names(name, label, names, 32), k = 0;
    for (; presets[k] != NULL; k++)
        CHECK(k < n && strcmp(names[k], presets[k]) == 0);
    CHECK_EQ_INT(n, k);
}

/* --scheme's help names every scheme record once, each with its note, as `scheme --help`
 * shows it: a record added is in the help with no edit to the option table. */
static void scheme_help_names_every_record(void)
{
    const struct cmd_entry *ce = cmd_find("simulate");
    CHECK(ce != NULL && run(ce, "--help", NULL) == 0);
    const char *at = strstr(out, "--scheme S");
    const char *end = at ? strstr(at, "\n  --devices") : NULL;
    CHECK(at != NULL && end != NULL);
    if (at == NULL || end == NULL)
        return;
    for (int id = 0; id < SCHEME__COUNT; id++) {
        const struct scheme_record *r = scheme_registry_get((enum scheme_id)id);
        char want[96];
        snprintf(want, sizeof want, r->note ? " %s (%s)" : " %s", r->name, r->note);
        const char *hit = strstr(at, want);
        CHECK(hit != NULL && hit < end);
        if (hit == NULL || hit >= end)
            fprintf(stderr, "  --scheme help: no '%s'\n", want);
    }
    CHECK(strstr(at, " DualPipeV") < end && strstr(at, "split backward: ZB-H1") < end);
}

int main(void)
{
    scheme_help_names_every_record();
    same("model", "model preset:", presets_model_names());
    same("device", "device preset:", presets_device_names());
    int n = 0;
    for (; cmd_table[n] != NULL; n++) {
        test_command(cmd_table[n]);
        CHECK(cmd_find(cmd_table[n]->name) == cmd_table[n]);
    }
    CHECK_EQ_INT(n, 13); /* ... compare, import, import-args, profile, chart, models */
    CHECK(cmd_find("no-such-command") == NULL);
    return check_report("test_cmd_help");
}
