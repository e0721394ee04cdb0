/* traces/mapping.c: the rules of a mapping file, compiled once (POSIX <regex.h>, extended
 * syntax) and tried in order on each event name. A rule whose capture group holds something
 * that is not a number (or, for the op, not an op name) does not match, so the next rule gets
 * its chance. */
#include <config.h>
#include "traces/mapping.h"

#include <ctype.h>
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/plan/plan.h"
#include "util/err.h"
#include "util/xalloc.h"

#define MAPPING_GROUPS 10
#define MAPPING_MAX_DEPTH 64    /* nested groups in a pattern */
#define MAPPING_MAX_STATES 1000 /* regcomp states of a pattern (mapping_pattern_states) */

struct mapping_compiled {
    regex_t re;
    char *cat; /* NULL: any */
    int op_group, op;
    struct mapping_field f[5]; /* mb, part, stage, device, step */
};

struct mapping {
    struct mapping_opts opts;
    int n;
    struct mapping_compiled *rule; /* [MAPPING_MAX_RULES], the first n compiled */
    bool have_align_re;
    regex_t align_re;
};

struct mapping *mapping_new(void)
{
    struct mapping *m = xcalloc(1, sizeof *m);
    m->rule = xcalloc(MAPPING_MAX_RULES, sizeof *m->rule);
    return m;
}

void mapping_free(struct mapping *m)
{
    if (m == NULL)
        return;
    for (int i = 0; i < m->n; i++) {
        regfree(&m->rule[i].re);
        free(m->rule[i].cat);
    }
    if (m->have_align_re)
        regfree(&m->align_re);
    free(m->rule);
    free(m);
}

/* An upper estimate of the states glibc's regcomp builds for an extended pattern: it copies
 * a repeated item once per count of {n,m} and twice for '+', so nested or stacked
 * repetitions multiply ("a{1,32767}" took 18 s and 8 GB to compile, 26 '+' in a row ran out
 * of memory). An atom is 1; X* and X? add 1; X+ is 2X + 1; X{n,m} is (m or n + 1) copies of
 * X, plus one each. Brackets and escapes are atoms; what regcomp refuses is left to it. */
static double mapping_pattern_states(const char *p, bool *stacked)
{
    struct frame {
        double done, branch, last; /* finished branches, this branch, its last item */
    } st[MAPPING_MAX_DEPTH + 1] = {{0, 0, 0}};
    int depth = 0;
    bool after_repeat = false; /* the item before was a repetition */
    *stacked = false;
    for (size_t i = 0; p[i] != '\0'; i++) {
        struct frame *f = &st[depth];
        double item = 1, copies = 0;
        switch (p[i]) {
        case '\\':
            if (p[i + 1] != '\0')
                i++;
            break;
        case '[': /* to the closing ']', which may come first; [:class:] [.x.] [=x=] inside */
            i += p[i + 1] == '^';
            i += p[i + 1] == ']';
            while (p[i + 1] != '\0' && p[i + 1] != ']') {
                i++;
                if (p[i] == '[' && (p[i + 1] == ':' || p[i + 1] == '.' || p[i + 1] == '=')) {
                    char close = p[i + 1];
                    for (i += 2; p[i] != '\0' && !(p[i] == close && p[i + 1] == ']'); i++)
                        ;
                    if (p[i] == '\0')
                        goto done; /* regcomp refuses it, after building what came before */
                    i++;
                }
            }
            if (p[i + 1] == ']')
                i++;
            break;
        case '(':
            if (depth == MAPPING_MAX_DEPTH)
                return INFINITY;
            st[++depth] = (struct frame){0, 0, 0};
            after_repeat = false;
            continue;
        case ')':
            if (depth == 0)
                break;
            item = f->done + f->branch + 1;
            depth--;
            break;
        case '|':
            f->done += f->branch;
            f->branch = f->last = 0;
            after_repeat = false;
            continue;
        case '*':
        case '?': copies = 1; break;
        case '+': copies = 2; break;
        case '{': {
            if (!isdigit((unsigned char)p[i + 1]))
                break; /* not an interval: a literal '{' (or an error regcomp reports) */
            char *end;
            unsigned long n = strtoul(p + i + 1, &end, 10), m = n;
            if (end[0] == ',' && end[1] == '}')
                m = n + 1; /* {n,}: n copies and a star */
            else if (end[0] == ',' && isdigit((unsigned char)end[1]))
                m = strtoul(end + 1, NULL, 10);
            copies = (double)(m > n ? m : n) + 1;
            i = (size_t)(strchr(p + i, '}') ? strchr(p + i, '}') - p : (long)strlen(p) - 1);
            break;
        }
        default: break;
        }
        f = &st[depth];
        if (copies > 0 && after_repeat) {
            /* a repetition of a repetition ("b**", "a+*"): POSIX leaves it undefined and
             * glibc's matcher took 14 s on 100 stars in a row (fuzz_kineto_parse) */
            *stacked = true;
            return INFINITY;
        }
        after_repeat = copies > 0;
        if (copies > 0) { /* the last item, repeated */
            double grown = f->last * copies + copies;
            f->branch += grown - f->last;
            f->last = grown;
        } else {
            f->branch += item;
            f->last = item;
        }
    }
done:;
    double total = 0;
    for (int d = depth; d >= 0; d--)
        total += st[d].done + st[d].branch;
    return total;
}

static int mapping_compile(regex_t *re, const char *pattern, struct mt_err *e)
{
    bool stacked;
    double states = mapping_pattern_states(pattern, &stacked);
    if (stacked)
        return err_set(e, MT_EINVAL,
                       "regular expression \"%.100s%s\": a repetition of a repetition (\"**\", "
                       "\"+*\", \"*{2}\"...) is undefined in POSIX and takes glibc's matcher "
                       "exponential time: write one",
                       pattern, strlen(pattern) > 100 ? "..." : "");
    if (states > MAPPING_MAX_STATES)
        return err_set(e, MT_EINVAL,
                       "regular expression \"%.100s%s\" is too complex (about %.3g states, at most "
                       "%d: fewer or smaller repetition counts, no repeated '+')",
                       pattern, strlen(pattern) > 100 ? "..." : "", states, MAPPING_MAX_STATES);
    int rc = regcomp(re, pattern, REG_EXTENDED);
    if (rc != 0) {
        char why[200];
        regerror(rc, re, why, sizeof why);
        return err_set(e, MT_EINVAL, "bad regular expression \"%s\": %s", pattern, why);
    }
    return MT_OK;
}

int mapping_add(struct mapping *m, const struct mapping_rule *r, struct mt_err *e)
{
    if (m->n >= MAPPING_MAX_RULES)
        return err_set(e, MT_EINVAL, "more than %d rules", MAPPING_MAX_RULES);
    if (r->match == NULL || r->match[0] == '\0')
        return err_set(e, MT_EINVAL, "match: an empty pattern");
    struct mapping_compiled *c = &m->rule[m->n];
    memset(c, 0, sizeof *c);
    TRY(mapping_compile(&c->re, r->match, e));
    const struct mapping_field *f[5] = {&r->mb, &r->part, &r->stage, &r->device, &r->step};
    size_t groups = c->re.re_nsub;
    int bad = 0;
    if (r->op_group > 0 && (size_t)r->op_group > groups)
        bad = r->op_group;
    for (int i = 0; i < 5 && bad == 0; i++) {
        c->f[i] = *f[i];
        if (f[i]->group > 0 && (size_t)f[i]->group > groups)
            bad = f[i]->group;
    }
    if (bad != 0) {
        regfree(&c->re);
        return err_set(e, MT_EINVAL, "\"$%d\" but the pattern \"%s\" has %zu capture group%s", bad,
                       r->match, groups, groups == 1 ? "" : "s");
    }
    if (r->op_group <= 0 && (r->op < 0 || r->op >= OP__COUNT)) {
        regfree(&c->re);
        return err_set(e, MT_EINVAL, "op: not given");
    }
    c->op_group = r->op_group;
    c->op = r->op;
    c->cat = r->cat ? xstrdup(r->cat) : NULL;
    m->n++;
    return MT_OK;
}

int mapping_set_align(struct mapping *m, enum mapping_align a, const char *pattern, bool end,
                      struct mt_err *e)
{
    if (m->have_align_re) {
        regfree(&m->align_re);
        m->have_align_re = false;
    }
    if (a == MAPPING_ALIGN_EVENT) {
        if (pattern == NULL || pattern[0] == '\0')
            return err_set(e, MT_EINVAL, "an empty pattern");
        TRY(mapping_compile(&m->align_re, pattern, e));
        m->have_align_re = true;
    }
    m->opts.align = a;
    m->opts.align_end = end;
    return MT_OK;
}

void mapping_set_device(struct mapping *m, enum mapping_device d)
{
    m->opts.device = d;
}

const struct mapping_opts *mapping_opts(const struct mapping *m)
{
    return &m->opts;
}

int mapping_rules(const struct mapping *m)
{
    return m->n;
}

/* The integer in capture group g of name; false when it is not one. */
static bool mapping_group_int(const char *name, const regmatch_t *mt, int g, int *out)
{
    if (mt[g].rm_so < 0)
        return false;
    int len = (int)(mt[g].rm_eo - mt[g].rm_so);
    if (len <= 0 || len > 9)
        return false;
    const char *s = name + mt[g].rm_so;
    int v = 0;
    for (int i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return true;
}

bool mapping_match(const struct mapping *m, const char *name, const char *cat,
                   struct mapping_hit *hit)
{
    regmatch_t mt[MAPPING_GROUPS];
    for (int i = 0; i < m->n; i++) {
        const struct mapping_compiled *c = &m->rule[i];
        if (c->cat != NULL && (cat == NULL || strcmp(c->cat, cat) != 0))
            continue;
        if (regexec(&c->re, name, MAPPING_GROUPS, mt, 0) != 0)
            continue;
        int op = c->op;
        if (c->op_group > 0) {
            const regmatch_t *g = &mt[c->op_group];
            int len = g->rm_so < 0 ? 0 : (int)(g->rm_eo - g->rm_so);
            char buf[16];
            if (len <= 0 || len >= (int)sizeof buf)
                continue;
            memcpy(buf, name + g->rm_so, (size_t)len);
            buf[len] = '\0';
            op = plan_op_parse(buf);
            if (op < 0)
                continue;
        }
        int v[5];
        bool ok = true;
        for (int k = 0; k < 5 && ok; k++) {
            v[k] = c->f[k].value;
            if (c->f[k].group > 0)
                ok = mapping_group_int(name, mt, c->f[k].group, &v[k]);
        }
        if (!ok)
            continue;
        *hit = (struct mapping_hit){op, v[0], v[1], v[2], v[3], v[4]};
        return true;
    }
    return false;
}

bool mapping_is_align_event(const struct mapping *m, const char *name)
{
    return m->have_align_re && regexec(&m->align_re, name, 0, NULL, 0) == 0;
}
