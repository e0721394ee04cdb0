/* tui/cmd_options.c: the one option parser of the command line. A command hands it its entry
 * (tui/cmd.h): the table of its options, whether it takes the plan flags, how many positional
 * arguments. From those it builds getopt_long's arrays, answers -h/--help with the help text
 * made from the same table, stores each value where the table says (or calls the option's
 * callback), and turns every mistake - an unknown or ambiguous option, a missing or unwanted
 * argument, a number that is not one or out of range, too many or too few arguments - into
 * one message naming the command and the option, and exit status 2 (tmux's args_parse). */
#include <config.h>
#include "tui/cmd.h"

#include <ctype.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/err.h"
#include "util/str.h"
#include "util/xalloc.h"

/* The label column of the help: "  --plan-out FILE" padded to 27 characters. */
#define CMD_HELP_LABEL 24

/* getopt_long's val of the i-th option: its letter, or a value no letter has. */
#define CMD_VAL(o, i) ((o)->letter ? (int)(unsigned char)(o)->letter : 256 + (i))

/* The plan flags (when the command takes them) then the command's own options. */
struct cmd_optset {
    const struct cmd_option **opt;
    int n;
    struct option *lo; /* n + 2: --help and the terminator */
    char *shorts;      /* ":h" and each letter with its colons */
};

static void cmd_optset_add(struct cmd_optset *s, const struct cmd_option *t)
{
    for (; t != NULL && t->name != NULL; t++)
        s->opt[s->n++] = t;
}

static void cmd_optset_init(struct cmd_optset *s, const struct cmd_entry *ce)
{
    int n = 0;
    for (const struct cmd_option *t = cmd_plan_options; ce->plan_flags && t->name; t++)
        n++;
    for (const struct cmd_option *t = ce->options; t && t->name; t++)
        n++;
    s->opt = xcalloc((size_t)n + 1, sizeof *s->opt);
    s->lo = xcalloc((size_t)n + 2, sizeof *s->lo);
    s->shorts = xcalloc(3 * (size_t)n + 3, 1);
    s->n = 0;
    if (ce->plan_flags)
        cmd_optset_add(s, cmd_plan_options);
    cmd_optset_add(s, ce->options);
    char *sh = s->shorts;
    *sh++ = ':'; /* a missing argument returns ':', not '?' */
    *sh++ = 'h';
    for (int i = 0; i < s->n; i++) {
        const struct cmd_option *o = s->opt[i];
        int has = o->arg == NULL ? no_argument
                  : o->optional  ? optional_argument
                                 : required_argument;
        s->lo[i] = (struct option){o->name, has, NULL, CMD_VAL(o, i)};
        if (o->letter) {
            *sh++ = o->letter;
            for (int k = 0; k < has; k++)
                *sh++ = ':';
        }
    }
    s->lo[s->n] = (struct option){"help", no_argument, NULL, 'h'};
}

static void cmd_optset_fini(struct cmd_optset *s)
{
    free(s->opt);
    free(s->lo);
    free(s->shorts);
}

static const struct cmd_option *cmd_optset_find(const struct cmd_optset *s, int val)
{
    for (int i = 0; i < s->n; i++)
        if (CMD_VAL(s->opt[i], i) == val)
            return s->opt[i];
    return NULL;
}

int cmd_options_int(const char *arg, long lo, long hi, long *out, struct mt_err *e)
{
    /* strtol alone would take " 12" and "+12" */
    if (!isdigit((unsigned char)arg[arg[0] == '-']))
        return err_set(e, MT_EINVAL, "'%s' is not an integer", arg);
    return str_parse_int(arg, lo, hi, out, e);
}

/* Out of o's range: "is out of range (0, 1]", or "is not >= 0" where one end is infinite. */
static int cmd_options_range_error(const struct cmd_option *o, const char *arg, struct mt_err *e)
{
    if (isinf(o->max))
        return err_set(e, MT_EINVAL, "%s is not %s %g", arg, o->open_min ? ">" : ">=", o->min);
    if (isinf(o->min))
        return err_set(e, MT_EINVAL, "%s is not %s %g", arg, o->open_max ? "<" : "<=", o->max);
    return err_set(e, MT_EINVAL, "%s is out of range %c%g, %g%c", arg, o->open_min ? '(' : '[',
                   o->min, o->max, o->open_max ? ')' : ']');
}

static int cmd_options_double(const struct cmd_option *o, const char *arg, double *out,
                              struct mt_err *e)
{
    double v;
    /* strtod alone would take " 1", "+1", "0x10" and "inf" */
    const char *p = arg + (arg[0] == '-');
    if (!(isdigit((unsigned char)*p) || *p == '.') || strpbrk(p, "xX") != NULL)
        return err_set(e, MT_EINVAL, "'%s' is not a number", arg);
    TRY(str_parse_double(arg, &v, e));
    if (v < o->min || v > o->max || (o->open_min && v == o->min) || (o->open_max && v == o->max))
        return cmd_options_range_error(o, arg, e);
    *out = v;
    return MT_OK;
}

/* The value of one option (arg NULL: none, or an optional one left out) to its place. */
static int cmd_options_take(const struct cmd_option *o, const char *arg, void *opts,
                            struct cmd_plan *cp, struct mt_err *e)
{
    char *at = (char *)opts + o->at;
    long v = 0;
    double d = 0;
    switch (o->type) {
    case CMD_BOOL: *(bool *)at = true; return MT_OK;
    case CMD_SET: *(int *)at = o->value; return MT_OK;
    case CMD_STRING: *(const char **)at = arg; return MT_OK;
    case CMD_INT:
        if (arg == NULL)
            v = (long)o->dflt;
        else
            TRY(cmd_options_int(arg, (long)o->min, (long)o->max, &v, e));
        *(int *)at = (int)v;
        return MT_OK;
    case CMD_DOUBLE:
        if (arg == NULL)
            d = o->dflt;
        else
            TRY(cmd_options_double(o, arg, &d, e));
        *(double *)at = d;
        return MT_OK;
    case CMD_CHOICE: {
        char names[256] = "";
        for (int i = 0; o->choices[i]; i++) {
            if (strcmp(arg, o->choices[i]) == 0) {
                *(int *)at = i;
                return MT_OK;
            }
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "",
                     o->choices[i]);
        }
        return err_set(e, MT_EINVAL, "'%s' is not one of %s", arg, names);
    }
    case CMD_CALL: return o->call(opts, o, arg, e);
    case CMD_PLAN: return cmd_plan_record(cp, o->value, arg, e);
    }
    return err_set(e, MT_EINVAL, "bad option table");
}

/* '?' from getopt_long: an unknown short or long option, an ambiguous abbreviation, or an
 * argument given to a switch. */
static int cmd_options_unknown(const struct cmd_entry *ce, const struct cmd_optset *s,
                               const char *word)
{
    const struct cmd_option *o = optopt ? cmd_optset_find(s, optopt) : NULL;
    if (optopt && strncmp(word, "--", 2) == 0 && (o != NULL || optopt == 'h'))
        return cmd_usage_error(ce->name, "--%s: takes no argument", o ? o->name : "help");
    if (optopt)
        return cmd_usage_error(ce->name, "-%c: unknown option", optopt);
    size_t len = strcspn(word + 2, "=");
    char could[512] = "";
    int n = 0;
    for (int i = 0; i <= s->n; i++) /* with --help */
        if (strncmp(s->lo[i].name, word + 2, len) == 0)
            snprintf(could + strlen(could), sizeof could - strlen(could), "%s--%s", n++ ? ", " : "",
                     s->lo[i].name);
    if (n > 1)
        return cmd_usage_error(ce->name,
                               "%.*s: unknown option (did you mean one of %s? flags are not "
                               "abbreviated)",
                               (int)len + 2, word, could);
    return cmd_usage_error(ce->name, "%.*s: unknown option", (int)len + 2, word);
}

/* The word getopt_long took for the long option NAME, when it is a shorter prefix of NAME:
 * getopt accepts "--plan" for --plan-out, which once wrote a plan over the file the user meant
 * to read. Flags are taken whole, as Megatron-LM's argparse takes them (allow_abbrev=False).
 * The word is argv[optind - 1], or the one before it when the option's argument was the next
 * word (optarg is then that word itself, not a part of "--name=value"). */
static const char *cmd_options_abbreviated(char **argv, int optind_now, const char *name)
{
    int at = optarg != NULL && optind_now >= 2 && optarg == argv[optind_now - 1] ? optind_now - 2
                                                                                : optind_now - 1;
    if (at < 1)
        return NULL;
    const char *w = argv[at];
    if (strncmp(w, "--", 2) != 0)
        return NULL;
    size_t len = strcspn(w + 2, "=");
    return len < strlen(name) ? w : NULL;
}

/* The positional arguments: how many the command takes. */
static int cmd_options_args(const struct cmd_entry *ce, int n)
{
    bool over = ce->args_max >= 0 && n > ce->args_max;
    if (ce->args_max == 1 && (over || n < ce->args_min)) /* "one CONFIG at most (got 2)" */
        return cmd_usage_error(ce->name, "one %s%s (got %d)", ce->args,
                               ce->args_min ? "" : " at most", n);
    if (n < ce->args_min)
        return cmd_usage_error(ce->name, "need %s (got %d argument%s)", ce->args, n,
                               n == 1 ? "" : "s");
    if (over)
        return cmd_usage_error(ce->name, "at most %d arguments: %s (got %d)", ce->args_max,
                               ce->args, n);
    return CMD_OPTIONS_RUN;
}

int cmd_options_parse(const struct cmd_entry *ce, int argc, char **argv, void *opts,
                      struct cmd_plan *cp, int *first)
{
    struct cmd_optset s;
    cmd_optset_init(&s, ce);
    int status = CMD_OPTIONS_RUN;
    opterr = 0; /* the messages are ours */
    optind = 0; /* 0, not 1: glibc starts afresh, even after an error inside "-xyz" */
    while (status == CMD_OPTIONS_RUN) {
        int li = -1, c = getopt_long(argc, argv, s.shorts, s.lo, &li);
        if (c == -1)
            break;
        const struct cmd_option *o = cmd_optset_find(&s, c == ':' ? optopt : c);
        const char *abbrev = li >= 0 ? cmd_options_abbreviated(argv, optind, s.lo[li].name) : NULL;
        if (abbrev != NULL) {
            status = cmd_usage_error(ce->name,
                                     "%.*s: unknown option (did you mean --%s? flags are not "
                                     "abbreviated, as in Megatron-LM)",
                                     (int)strcspn(abbrev, "="), abbrev, s.lo[li].name);
        } else if (c == 'h') {
            cmd_options_help(ce, stdout);
            status = 0;
        } else if (c == '?') {
            status = cmd_options_unknown(ce, &s, argv[optind - 1]);
        } else if (o == NULL) {
            status = cmd_usage_error(ce->name, "-%c: unknown option", c);
        } else {
            char flag[80]; /* the option as it was given: -o or --output */
            if (li >= 0 || !o->letter || (c == ':' && strncmp(argv[optind - 1], "--", 2) == 0))
                snprintf(flag, sizeof flag, "--%s", o->name);
            else
                snprintf(flag, sizeof flag, "-%c", o->letter);
            struct mt_err e = {0};
            if (c == ':')
                status = cmd_usage_error(ce->name, "%s: needs an argument (%s)", flag, o->arg);
            else if (cmd_options_take(o, optarg, opts, cp, &e) != MT_OK)
                status = cmd_usage_error(ce->name, "%s: %s", flag, e.msg);
        }
    }
    cmd_optset_fini(&s);
    if (status == CMD_OPTIONS_RUN)
        status = cmd_options_args(ce, argc - optind);
    *first = optind;
    if (status == CMD_OPTIONS_RUN && cp != NULL)
        cp->path = optind < argc ? argv[optind] : NULL;
    return status;
}

/* "  -o, --output FILE        help", continuation lines under the help column. */
static void cmd_options_help_line(const struct cmd_option *o, FILE *f)
{
    char label[128];
    int n = o->letter ? snprintf(label, sizeof label, "-%c, --%s", o->letter, o->name)
                      : snprintf(label, sizeof label, "--%s", o->name);
    if (o->arg)
        snprintf(label + n, sizeof label - (size_t)n, o->optional ? "[=%s]" : " %s", o->arg);
    if (o->heading)
        fputs(o->heading, f);
    if (strlen(label) <= CMD_HELP_LABEL)
        fprintf(f, "  %-*s ", CMD_HELP_LABEL, label);
    else
        fprintf(f, "  %s\n%*s", label, CMD_HELP_LABEL + 3, "");
    char written[1024];
    if (o->help_write != NULL)
        o->help_write(written, sizeof written);
    for (const char *h = o->help_write != NULL ? written : o->help; *h;) {
        size_t len = strcspn(h, "\n");
        fwrite(h, 1, len, f);
        h += len;
        if (*h == '\n' && *++h)
            fprintf(f, "\n%*s", CMD_HELP_LABEL + 3, "");
    }
    fputc('\n', f);
}

void cmd_options_help(const struct cmd_entry *ce, FILE *f)
{
    fputs(ce->usage, f);
    for (const struct cmd_option *o = cmd_plan_options; ce->plan_flags && o->name; o++)
        cmd_options_help_line(o, f);
    for (const struct cmd_option *o = ce->options; o && o->name; o++)
        cmd_options_help_line(o, f);
    cmd_options_help_line(&(struct cmd_option){.name = "help", .letter = 'h', .help = "this help"},
                          f);
    if (ce->footer)
        fputs(ce->footer, f);
}
