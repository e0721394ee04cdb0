/* model/launch_shell_cond.c: the tests of an if/elif (model/launch_shell.h): [[ ]], [ ],
 * test, true, false, joined by !, &&, ||, -a, -o and parentheses, decided where the script's
 * own values decide them (string and integer comparisons, -z, -n, patterns); a file test or
 * a command's status is RUN_UNKNOWN. */
#include <config.h>
#include "model/launch_shell.h"

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "util/err.h"
#include "util/xalloc.h"

/* Condition items: words expanded, operators kept. */
struct sh_cond {
    struct sh_fields w;
    bool *quoted;
    int n, i;
};

static bool sh_cond_is(const struct sh_cond *c, const char *op)
{
    return c->i < c->n && c->w.v[c->i].why[0] == '\0' && !c->quoted[c->i] &&
           strcmp(c->w.v[c->i].text, op) == 0;
}

static enum sh_run sh_and(enum sh_run a, enum sh_run b)
{
    return a == RUN_NO || b == RUN_NO ? RUN_NO : a == RUN_YES && b == RUN_YES ? RUN_YES
                                                                               : RUN_UNKNOWN;
}

static enum sh_run sh_or(enum sh_run a, enum sh_run b)
{
    return a == RUN_YES || b == RUN_YES ? RUN_YES : a == RUN_NO && b == RUN_NO ? RUN_NO
                                                                                : RUN_UNKNOWN;
}

static enum sh_run sh_not(enum sh_run a)
{
    return a == RUN_YES ? RUN_NO : a == RUN_NO ? RUN_YES : RUN_UNKNOWN;
}

static bool sh_cond_end(const struct sh_cond *c)
{
    return c->i >= c->n || sh_cond_is(c, "]]") || sh_cond_is(c, "]") || sh_cond_is(c, ")") ||
           sh_cond_is(c, "&&") || sh_cond_is(c, "||") || sh_cond_is(c, "-a") ||
           sh_cond_is(c, "-o");
}

static enum sh_run sh_test_or(struct sh_cond *c);

static enum sh_run sh_test_primary(struct sh_cond *c)
{
    if (sh_cond_is(c, "!")) {
        c->i++;
        return sh_not(sh_test_primary(c));
    }
    if (sh_cond_is(c, "(")) {
        c->i++;
        enum sh_run r = sh_test_or(c);
        if (sh_cond_is(c, ")"))
            c->i++;
        return r;
    }
    if (c->i >= c->n)
        return RUN_UNKNOWN;
    const struct launch_field *a = &c->w.v[c->i];
    if (!c->quoted[c->i] && a->why[0] == '\0' && a->text[0] == '-' && strlen(a->text) == 2 &&
        c->i + 1 < c->n) {
        char op = a->text[1];
        if (strchr("zn", op) != NULL) {
            const struct launch_field *x = &c->w.v[c->i + 1];
            c->i += 2;
            if (x->why[0])
                return RUN_UNKNOWN;
            return (x->text[0] == '\0') == (op == 'z') ? RUN_YES : RUN_NO;
        }
        if (strchr("fdesrwxLhpSbcgkuOGN", op) != NULL) { /* the file system: not known */
            c->i += 2;
            return RUN_UNKNOWN;
        }
    }
    c->i++;
    if (sh_cond_end(c)) /* [ WORD ]: true when not empty */
        return a->why[0] ? RUN_UNKNOWN : a->text[0] ? RUN_YES : RUN_NO;
    const struct launch_field *op = &c->w.v[c->i];
    if (c->i + 1 >= c->n)
        return RUN_UNKNOWN;
    const struct launch_field *bw = &c->w.v[c->i + 1];
    bool bquoted = c->quoted[c->i + 1];
    c->i += 2;
    if (a->why[0] || bw->why[0])
        return RUN_UNKNOWN;
    const char *o = op->text;
    if (strcmp(o, "==") == 0 || strcmp(o, "=") == 0 || strcmp(o, "!=") == 0) {
        bool eq = bquoted || strpbrk(bw->text, "*?[") == NULL
                      ? strcmp(a->text, bw->text) == 0
                      : fnmatch(bw->text, a->text, 0) == 0;
        return eq == (o[0] != '!') ? RUN_YES : RUN_NO;
    }
    static const char *const num[] = {"-eq", "-ne", "-lt", "-le", "-gt", "-ge"};
    for (int k = 0; k < 6; k++)
        if (strcmp(o, num[k]) == 0) {
            char *e1, *e2;
            long x = strtol(a->text, &e1, 10), y = strtol(bw->text, &e2, 10);
            if (*e1 || *e2 || e1 == a->text || e2 == bw->text)
                return RUN_UNKNOWN;
            bool r = k == 0 ? x == y : k == 1 ? x != y : k == 2 ? x < y : k == 3 ? x <= y
                     : k == 4                                     ? x > y
                                                                  : x >= y;
            return r ? RUN_YES : RUN_NO;
        }
    return RUN_UNKNOWN;
}

static enum sh_run sh_test_and(struct sh_cond *c)
{
    enum sh_run r = sh_test_primary(c);
    while (sh_cond_is(c, "&&") || sh_cond_is(c, "-a")) {
        c->i++;
        r = sh_and(r, sh_test_primary(c));
    }
    return r;
}

static enum sh_run sh_test_or(struct sh_cond *c)
{
    enum sh_run r = sh_test_and(c);
    while (sh_cond_is(c, "||") || sh_cond_is(c, "-o")) {
        c->i++;
        r = sh_or(r, sh_test_and(c));
    }
    return r;
}

/* One command of a condition list: [[ ]], [ ], test, true, false; any other is unknown. */
static enum sh_run sh_cond_command(struct sh_cond *c)
{
    if (sh_cond_is(c, "!")) {
        c->i++;
        return sh_not(sh_cond_command(c));
    }
    bool dbl = sh_cond_is(c, "[["), sgl = sh_cond_is(c, "[") || sh_cond_is(c, "test");
    if (dbl || sgl) {
        c->i++;
        enum sh_run r = sh_test_or(c);
        if (sh_cond_is(c, dbl ? "]]" : "]"))
            c->i++;
        else if (!sgl || c->i < c->n)
            r = RUN_UNKNOWN;
        return r;
    }
    if (sh_cond_is(c, "true") || sh_cond_is(c, "false")) {
        bool t = sh_cond_is(c, "true");
        c->i++;
        return t ? RUN_YES : RUN_NO;
    }
    while (c->i < c->n && !sh_cond_is(c, "&&") && !sh_cond_is(c, "||"))
        c->i++;
    return RUN_UNKNOWN;
}

int sh_condition(struct sh *s, int a, int b, enum sh_run *out)
{
    struct sh_cond c = {0};
    int rc = MT_OK;
    for (int i = a; rc == MT_OK && i < b; i++) {
        const struct sh_token *t = &s->tok[i];
        int before = c.w.n;
        if (t->kind == TK_WORD) {
            rc = sh_expand(s, s->text + t->off, t->len, t->line, t->col, false, &c.w);
            if (rc == MT_OK && c.w.n == before) /* "$EMPTY" still a word */
                sh_fields_push(&c.w, "", 0, t->line, t->col, NULL);
        } else if (t->kind != TK_NL) {
            const char *op = t->kind == TK_AND      ? "&&"
                             : t->kind == TK_OR     ? "||"
                             : t->kind == TK_LPAREN ? "("
                             : t->kind == TK_RPAREN ? ")"
                                                    : "|";
            sh_fields_push(&c.w, op, strlen(op), t->line, t->col, NULL);
        }
        if (c.w.n > before) {
            c.quoted = xreallocarray(c.quoted, (size_t)c.w.n, sizeof *c.quoted);
            bool q = t->kind == TK_WORD && memchr(s->text + t->off, '"', t->len) != NULL;
            q = q || (t->kind == TK_WORD && memchr(s->text + t->off, '\'', t->len) != NULL);
            for (int k = before; k < c.w.n; k++)
                c.quoted[k] = q;
        }
    }
    c.n = c.w.n;
    enum sh_run r = RUN_UNKNOWN;
    if (rc == MT_OK && c.n > 0) {
        r = sh_cond_command(&c);
        while (c.i < c.n && (sh_cond_is(&c, "&&") || sh_cond_is(&c, "||"))) {
            bool andop = sh_cond_is(&c, "&&");
            c.i++;
            enum sh_run q = sh_cond_command(&c);
            r = andop ? sh_and(r, q) : sh_or(r, q);
        }
        if (c.i < c.n)
            r = RUN_UNKNOWN;
    }
    sh_fields_free(&c.w);
    free(c.quoted);
    *out = r;
    return rc;
}
