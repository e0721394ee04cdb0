/* tests/unit/test_cmd_options.c: the one option parser of the command line (tui/cmd_options.c)
 * on a made-up command whose table has one option of every kind: where each value lands,
 * abbreviations and --opt=value, optional arguments, the plan flags and the positional
 * argument, the exact --help text the table makes, and each mistake's one message and exit
 * status 2. Expected values are written out by hand from the table below. */
#include <config.h>

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tests/check.h"
#include "tui/cmd.h"
#include "util/err.h"

struct demo {
    bool flag;
    int mode, count, kind, level;
    double ratio, floor;
    const char *name;
    int calls;
    char seen[32];
};

static int demo_call(void *opts, const struct cmd_option *o, const char *arg, struct mt_err *e)
{
    struct demo *d = opts;
    if (strcmp(arg, "bad") == 0)
        return err_set(e, MT_EINVAL, "'%s' is bad", arg);
    d->calls += o->value;
    snprintf(d->seen, sizeof d->seen, "%s", arg);
    return MT_OK;
}

static const char *const demo_kinds[] = {"a", "b", "c", NULL};

static const struct cmd_option demo_options[] = {
    {.name = "flag", CMD_TO_BOOL(struct demo, flag), .help = "a switch"},
    {.name = "mode", CMD_TO_SET(struct demo, mode, 7), .help = "sets 7"},
    {.name = "name", .letter = 'n', .arg = "NAME", CMD_TO_STRING(struct demo, name),
     .help = "a name"},
    {.name = "count", .arg = "N", CMD_TO_INT(struct demo, count, 1, 10),
     .help = "a count\nin [1, 10]"},
    {.name = "ratio", .arg = "R", CMD_TO_DOUBLE(struct demo, ratio, 0, 1), .open_min = true,
     .help = "a ratio in (0, 1]"},
    {.name = "floor", .arg = "F", CMD_TO_DOUBLE(struct demo, floor, 0, INFINITY),
     .help = "0 or more"},
    {.name = "kind", .arg = "K", CMD_TO_CHOICE(struct demo, kind, demo_kinds),
     .heading = "More:\n", .help = "a, b or c"},
    {.name = "level", .arg = "L", .optional = true, CMD_TO_INT(struct demo, level, 1, 9),
     .dflt = 5, .help = "a level, 5 when L is left out"},
    {.name = "a-very-long-option-name", .arg = "X", CMD_TO_CALL(demo_call, 3),
     .help = "a callback"},
    {0},
};

static const struct cmd_entry demo_entry = {
    .name = "demo",
    .usage = "Usage: mario-tui demo [CONFIG]\n\n",
    .options = demo_options,
    .footer = "Exit status: 0 ok.\n",
    .args_max = 1,
    .args = "CONFIG",
};

/* The same table with the plan flags. */
static const struct cmd_entry demo_plan_entry = {
    .name = "demo",
    .usage = "",
    .plan_flags = true,
    .options = demo_options,
    .args_max = 1,
    .args = "CONFIG",
};

static char out[16384]; /* what the parse printed, stdout and stderr */
static int first;

/* Parses args (after "demo") into *d and *cp, capturing what it prints. */
static int parse(const struct cmd_entry *ce, struct demo *d, struct cmd_plan *cp,
                 const char *const *args)
{
    char *argv[64] = {"demo"};
    int argc = 1;
    for (; args[argc - 1] != NULL; argc++)
        argv[argc] = (char *)args[argc - 1];
    memset(d, 0, sizeof *d);
    memset(cp, 0, sizeof *cp);
    fflush(stdout);
    fflush(stderr);
    FILE *t = tmpfile();
    int o1 = dup(1), o2 = dup(2);
    dup2(fileno(t), 1);
    dup2(fileno(t), 2);
    int st = cmd_options_parse(ce, argc, argv, d, cp, &first);
    fflush(stdout);
    fflush(stderr);
    dup2(o1, 1);
    dup2(o2, 2);
    close(o1);
    close(o2);
    rewind(t);
    size_t n = fread(out, 1, sizeof out - 1, t);
    out[n] = '\0';
    fclose(t);
    return st;
}

#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})

/* A usage error: exit 2, this message, and the way to the help. */
static void fails(const char *const *args, const char *msg)
{
    struct demo d;
    struct cmd_plan cp;
    char want[512];
    snprintf(want, sizeof want, "mario-tui demo: %s\nTry 'mario-tui demo --help'.\n", msg);
    CHECK_EQ_INT(parse(&demo_plan_entry, &d, &cp, args), 2);
    CHECK(strcmp(out, want) == 0);
    if (strcmp(out, want) != 0)
        fprintf(stderr, "  got:  %s  want: %s", out, want);
}

static void test_values(void)
{
    struct demo d;
    struct cmd_plan cp;
    CHECK_EQ_INT(parse(&demo_plan_entry, &d, &cp,
                       ARGS("--flag", "cfg.json", "--mode", "-n", "x", "--count", "3", "--ratio",
                            "0.25", "--kind", "c", "--level", "--devices", "4",
                            "--a-very-long-option-name", "v", "--blocking-send")),
                 CMD_OPTIONS_RUN);
    CHECK(out[0] == '\0');
    CHECK(d.flag);
    CHECK_EQ_INT(d.mode, 7);
    CHECK(d.name && strcmp(d.name, "x") == 0);
    CHECK_EQ_INT(d.count, 3);
    CHECK_NEAR(d.ratio, 0.25, 0);
    CHECK_EQ_INT(d.kind, 2);
    CHECK_EQ_INT(d.level, 5);
    CHECK_EQ_INT(d.calls, 3);
    CHECK(strcmp(d.seen, "v") == 0);
    /* plan flags in the order given, the positional argument moved behind the options */
    CHECK_EQ_INT(cp.n_over, 2);
    CHECK_EQ_INT(cp.over[0].opt, CMD_PLAN_DEVICES);
    CHECK(strcmp(cp.over[0].arg, "4") == 0);
    CHECK_EQ_INT(cp.over[1].opt, CMD_PLAN_BLOCKING);
    CHECK(cp.over[1].arg == NULL);
    CHECK(cmd_plan_given(&cp, CMD_PLAN_BLOCKING) && !cmd_plan_given(&cp, CMD_PLAN_MODEL));
    CHECK(cp.path && strcmp(cp.path, "cfg.json") == 0);
    CHECK_EQ_INT(first, 17);

    /* --opt=value, -nVALUE, an optional argument given, negative numbers */
    CHECK_EQ_INT(parse(&demo_plan_entry, &d, &cp,
                       ARGS("--count=10", "--ratio", "1", "-ny", "--level=9", "--flag", "--kind=a",
                            "--floor", "1e3")),
                 CMD_OPTIONS_RUN);
    CHECK_EQ_INT(d.count, 10);
    CHECK_NEAR(d.ratio, 1, 0);
    CHECK(d.name && strcmp(d.name, "y") == 0);
    CHECK_EQ_INT(d.level, 9);
    CHECK(d.flag);
    CHECK_EQ_INT(d.kind, 0);
    CHECK_NEAR(d.floor, 1000, 0);
    CHECK(cp.path == NULL);
    CHECK_EQ_INT(first, 10);
    /* "--" ends the options */
    CHECK_EQ_INT(parse(&demo_plan_entry, &d, &cp, ARGS("--", "--flag")), CMD_OPTIONS_RUN);
    CHECK(!d.flag && cp.path && strcmp(cp.path, "--flag") == 0);
}

static void test_errors(void)
{
    fails(ARGS("--count", "12x"), "--count: '12x' is not an integer");
    fails(ARGS("--count", ""), "--count: '' is not an integer");
    fails(ARGS("--count", " 3"), "--count: ' 3' is not an integer");
    fails(ARGS("--count", "+3"), "--count: '+3' is not an integer");
    fails(ARGS("--count", "11"), "--count: 11 is out of range [1, 10]");
    fails(ARGS("--count=0"), "--count: 0 is out of range [1, 10]");
    fails(ARGS("--level="), "--level: '' is not an integer");
    fails(ARGS("--ratio", "0"), "--ratio: 0 is out of range (0, 1]");
    fails(ARGS("--ratio", "1.5"), "--ratio: 1.5 is out of range (0, 1]");
    fails(ARGS("--ratio", "inf"), "--ratio: 'inf' is not a number");
    fails(ARGS("--ratio", "0x1"), "--ratio: '0x1' is not a number");
    fails(ARGS("--ratio", "0.5s"), "--ratio: '0.5s' is not a number");
    fails(ARGS("--floor", "-0.5"), "--floor: -0.5 is not >= 0");
    fails(ARGS("--kind", "d"), "--kind: 'd' is not one of a, b, c");
    fails(ARGS("--a-very-long-option-name", "bad"), "--a-very-long-option-name: 'bad' is bad");
    fails(ARGS("--nope"), "--nope: unknown option");
    fails(ARGS("--nope=3"), "--nope: unknown option");
    fails(ARGS("-z"), "-z: unknown option");
    fails(ARGS("-fz"), "-f: unknown option");
    fails(ARGS("--count"), "--count: needs an argument (N)");
    fails(ARGS("-n"), "-n: needs an argument (NAME)");
    fails(ARGS("--name"), "--name: needs an argument (NAME)");
    fails(ARGS("--flag=1"), "--flag: takes no argument");
    fails(ARGS("--help=1"), "--help: takes no argument");
    fails(ARGS("--mi", "3"), "--mi: unknown option (did you mean one of --microbatches, "
                             "--micro-batch-size? flags are not abbreviated)");
    /* flags are taken whole (getopt_long took "--plan" for --plan-out and wrote over the
     * file): a unique prefix is refused naming the flag, whether its value is joined or not */
    fails(ARGS("--rat", "1"), "--rat: unknown option (did you mean --ratio? flags are not "
                              "abbreviated, as in Megatron-LM)");
    fails(ARGS("--rat=1"), "--rat: unknown option (did you mean --ratio? flags are not "
                           "abbreviated, as in Megatron-LM)");
    fails(ARGS("cfg.json", "--fla"), "--fla: unknown option (did you mean --flag? flags are not "
                                     "abbreviated, as in Megatron-LM)");
    /* an argument that looks like a flag's prefix is the option's value, not a flag */
    {
        struct demo d;
        struct cmd_plan cp;
        CHECK_EQ_INT(parse(&demo_plan_entry, &d, &cp, ARGS("--name", "--na")), CMD_OPTIONS_RUN);
        CHECK(d.name && strcmp(d.name, "--na") == 0);
    }
    fails(ARGS("a.json", "b.json"), "one CONFIG at most (got 2)");
    /* a plan flag's value is checked once the config is read (tui/cmd_plan.c), its count here */
    const char *many[40];
    for (int i = 0; i < 33; i++)
        many[i] = "--blocking-send";
    many[33] = NULL;
    fails(many, "--blocking-send: more than 32 plan flags");
    /* the first mistake is the one reported; a parse after it starts afresh */
    fails(ARGS("--nope", "--help"), "--nope: unknown option");
    struct demo d;
    struct cmd_plan cp;
    CHECK_EQ_INT(parse(&demo_plan_entry, &d, &cp, ARGS("-n", "z")), CMD_OPTIONS_RUN);
    CHECK(d.name && strcmp(d.name, "z") == 0);
}

static void test_help(void)
{
    struct demo d;
    struct cmd_plan cp;
    CHECK_EQ_INT(parse(&demo_entry, &d, &cp, ARGS("--flag", "-h", "--nope")), 0);
    const char *want = "Usage: mario-tui demo [CONFIG]\n"
                       "\n"
                       "  --flag                   a switch\n"
                       "  --mode                   sets 7\n"
                       "  -n, --name NAME          a name\n"
                       "  --count N                a count\n"
                       "                           in [1, 10]\n"
                       "  --ratio R                a ratio in (0, 1]\n"
                       "  --floor F                0 or more\n"
                       "More:\n"
                       "  --kind K                 a, b or c\n"
                       "  --level[=L]              a level, 5 when L is left out\n"
                       "  --a-very-long-option-name X\n"
                       "                           a callback\n"
                       "  -h, --help               this help\n"
                       "Exit status: 0 ok.\n";
    CHECK(strcmp(out, want) == 0);
    if (strcmp(out, want) != 0)
        fprintf(stderr, "got:\n%s", out);
    /* the entry without plan flags does not take them */
    CHECK_EQ_INT(parse(&demo_entry, &d, &cp, ARGS("--devices", "4")), 2);
    CHECK_STR_CONTAINS(out, "mario-tui demo: --devices: unknown option\n");
    /* with them, they come first, after the CONFIG lines */
    CHECK_EQ_INT(parse(&demo_plan_entry, &d, &cp, ARGS("--help")), 0);
    CHECK(strncmp(out, "  CONFIG                   a config JSON", 40) == 0);
    const char *m = strstr(out, "  --model NAME             model preset: ");
    const char *c = strstr(out, "  --calibration FILE       measured costs");
    const char *f = strstr(out, "  --flag                   a switch\n");
    CHECK(m && c && f && m < c && c < f);
}

int main(void)
{
    test_values();
    test_errors();
    test_help();
    return check_report("test_cmd_options");
}
