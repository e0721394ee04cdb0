/* model/launch_shell_expand.c: the shell subset's variables (scalars and arrays) and the
 * expansion of a word (model/launch_shell.h): quotes, $VAR, ${VAR:-default} and its kin,
 * ${ARR[@]}, $((arithmetic)); what it cannot know ($(...), a script argument) becomes an
 * empty word saying why. */
#include <config.h>
#include "model/launch_shell.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/err.h"
#include "util/xalloc.h"

struct sh_var *sh_var(struct sh *s, const char *name, size_t len)
{
    for (int i = 0; i < s->nvars; i++)
        if (strlen(s->vars[i].name) == len && strncmp(s->vars[i].name, name, len) == 0)
            return &s->vars[i];
    return NULL;
}

void sh_fields_push(struct sh_fields *f, const char *text, size_t len, int line, int col,
                           const char *why)
{
    if (f->n == f->cap) {
        f->cap = f->cap ? 2 * f->cap : 16;
        f->v = xreallocarray(f->v, (size_t)f->cap, sizeof *f->v);
    }
    struct launch_field *x = &f->v[f->n++];
    x->text = xmalloc(len + 1);
    memcpy(x->text, text, len);
    x->text[len] = '\0';
    x->line = line;
    x->col = col;
    snprintf(x->why, sizeof x->why, "%s", why ? why : "");
}

void sh_fields_free(struct sh_fields *f)
{
    for (int i = 0; i < f->n; i++)
        free(f->v[i].text);
    free(f->v);
    f->v = NULL;
    f->n = f->cap = 0;
}

int sh_set(struct sh *s, const char *name, size_t len, struct sh_fields *val, bool append,
                  int line, int col)
{
    struct sh_var *v = sh_var(s, name, len);
    if (v == NULL) {
        if (s->nvars == SH_MAX_VARS || len >= sizeof v->name)
            return sh_fail(s, line, col, "more than %d variables, or a name over 63 bytes",
                           SH_MAX_VARS);
        if (s->nvars == s->capvars) {
            s->capvars = s->capvars ? 2 * s->capvars : 32;
            s->vars = xreallocarray(s->vars, (size_t)s->capvars, sizeof *s->vars);
        }
        v = &s->vars[s->nvars++];
        memset(v, 0, sizeof *v);
        memcpy(v->name, name, len);
    } else if (!append) {
        for (int i = 0; i < v->n; i++)
            free(v->v[i].text);
        v->n = 0;
    }
    if ((long)v->n + val->n > SH_MAX_FIELDS)
        return sh_fail(s, line, col, "%.*s: more than %d words", (int)len, name, SH_MAX_FIELDS);
    v->v = xreallocarray(v->v, (size_t)(v->n + val->n) + 1, sizeof *v->v);
    if (val->n > 0) /* A=(): nothing to copy, and val->v may be NULL */
        memcpy(v->v + v->n, val->v, (size_t)val->n * sizeof *val->v);
    v->n += val->n;
    free(val->v);
    val->v = NULL;
    val->n = val->cap = 0;
    return MT_OK;
}

/* The fields being built from one word: the current one grows until a blank of an unquoted
 * expansion ends it. */
struct sh_build {
    struct sh_fields out;
    char *cur;
    size_t len, cap;
    bool open; /* the current field exists (even empty: "") */
    bool quoted; /* some of it was quoted (a pattern test takes it literally) */
    int line, col;
    char why[112];
};

static int sh_put(struct sh *s, struct sh_build *b, const char *t, size_t k, int line, int col)
{
    if (b->len + k >= SH_MAX_TEXT)
        return sh_fail(s, line, col, "a word longer than %d bytes", SH_MAX_TEXT);
    if (b->len + k + 1 > b->cap) {
        b->cap = (b->len + k + 1) * 2;
        b->cur = xreallocarray(b->cur, b->cap, 1);
    }
    memcpy(b->cur + b->len, t, k);
    b->len += k;
    if (!b->open) {
        b->line = line;
        b->col = col;
    }
    b->open = true;
    return MT_OK;
}

static void sh_end_field(struct sh_build *b)
{
    if (b->open)
        sh_fields_push(&b->out, b->cur ? b->cur : "", b->len, b->line, b->col, b->why);
    b->len = 0;
    b->open = false;
    b->why[0] = '\0';
}

static void sh_why(struct sh_build *b, const char *why)
{
    if (why && why[0] && b->why[0] == '\0')
        snprintf(b->why, sizeof b->why, "%s", why);
}

/* Text from an expansion: quoted it joins the field, unquoted it is split on blanks. */
static int sh_put_value(struct sh *s, struct sh_build *b, const char *t, size_t k, bool quoted,
                        int line, int col, const char *why)
{
    if (quoted) {
        TRY(sh_put(s, b, t, k, line, col));
        sh_why(b, why);
        return MT_OK;
    }
    if (k == 0 && why && why[0]) { /* unset: an empty word that says why */
        TRY(sh_put(s, b, "", 0, line, col));
        sh_why(b, why);
        return MT_OK;
    }
    for (size_t i = 0; i < k;) {
        if (isspace((unsigned char)t[i])) {
            sh_end_field(b);
            while (i < k && isspace((unsigned char)t[i]))
                i++;
            continue;
        }
        size_t j = i;
        while (j < k && !isspace((unsigned char)t[j]))
            j++;
        TRY(sh_put(s, b, t + i, j - i, line, col));
        sh_why(b, why);
        i = j;
    }
    return MT_OK;
}

/* A word expanded to one string (an assignment's value, a default, arithmetic). */
int sh_expand_string(struct sh *s, const char *t, size_t k, int line, int col,
                            char **str, char *why, size_t whyn)
{
    struct sh_fields f = {0};
    TRY(sh_expand(s, t, k, line, col, false, &f));
    size_t len = 0;
    for (int i = 0; i < f.n; i++)
        len += strlen(f.v[i].text) + 1;
    *str = xmalloc(len + 1);
    (*str)[0] = '\0';
    why[0] = '\0';
    for (int i = 0; i < f.n; i++) {
        if (i)
            strcat(*str, " ");
        strcat(*str, f.v[i].text);
        if (f.v[i].why[0] && why[0] == '\0')
            snprintf(why, whyn, "%s", f.v[i].why);
    }
    sh_fields_free(&f);
    return MT_OK;
}

/* $((...)): + - * / % and parentheses over integers and variables (unset = 0, as bash). */
struct sh_arith {
    struct sh *s;
    const char *p;
    bool bad;
};

static long sh_arith_sum(struct sh_arith *a);

static long sh_arith_atom(struct sh_arith *a)
{
    while (*a->p == ' ' || *a->p == '\t')
        a->p++;
    if (*a->p == '(') {
        a->p++;
        long v = sh_arith_sum(a);
        while (*a->p == ' ')
            a->p++;
        if (*a->p != ')')
            a->bad = true;
        else
            a->p++;
        return v;
    }
    if (*a->p == '-' || *a->p == '+') {
        bool neg = *a->p++ == '-';
        long v = sh_arith_atom(a);
        return neg ? -v : v;
    }
    if (isdigit((unsigned char)*a->p)) {
        long v = 0;
        for (; isdigit((unsigned char)*a->p); a->p++) {
            if (v > 100000000000L)
                a->bad = true; /* and no more digits taken: v stays in range */
            else
                v = v * 10 + (*a->p - '0');
        }
        return v;
    }
    if (*a->p == '$')
        a->p++;
    if (isalpha((unsigned char)*a->p) || *a->p == '_') {
        const char *n0 = a->p;
        while (isalnum((unsigned char)*a->p) || *a->p == '_')
            a->p++;
        struct sh_var *v = sh_var(a->s, n0, (size_t)(a->p - n0));
        if (v == NULL || v->n == 0)
            return 0;
        if (v->v[0].why[0]) {
            a->bad = true;
            return 0;
        }
        char *end;
        long x = strtol(v->v[0].text, &end, 10);
        if (end == v->v[0].text || *end != '\0')
            a->bad = true;
        return x;
    }
    a->bad = true;
    return 0;
}

static long sh_arith_prod(struct sh_arith *a)
{
    long v = sh_arith_atom(a);
    for (;;) {
        while (*a->p == ' ' || *a->p == '\t')
            a->p++;
        char op = *a->p;
        if (op != '*' && op != '/' && op != '%')
            return v;
        a->p++;
        long w = sh_arith_atom(a);
        if (op != '*' && w == 0) {
            a->bad = true;
            return 0;
        }
        if (op == '*' && (labs(v) > 1000000000L || labs(w) > 1000000000L)) {
            a->bad = true; /* refused; v stays small so a longer chain cannot overflow */
            v = 0;
            continue;
        }
        v = op == '*' ? v * w : op == '/' ? v / w : v % w;
    }
}

static long sh_arith_sum(struct sh_arith *a)
{
    long v = sh_arith_prod(a);
    for (;;) {
        while (*a->p == ' ' || *a->p == '\t')
            a->p++;
        char op = *a->p;
        if (op != '+' && op != '-')
            return v;
        a->p++;
        long w = sh_arith_prod(a);
        if (labs(v) > 1000000000000L || labs(w) > 1000000000000L) {
            a->bad = true; /* as in sh_arith_prod */
            v = 0;
            continue;
        }
        v = op == '+' ? v + w : v - w;
    }
}

/* The value of a variable reference name[idx] (idx "" none, "@" or "*" all). */
static int sh_put_var(struct sh *s, struct sh_build *b, const char *name, size_t nlen,
                      const char *idx, bool quoted, int line, int col)
{
    char why[112];
    if (isdigit((unsigned char)name[0]) || name[0] == '@' || name[0] == '*') {
        snprintf(why, sizeof why, "$%.*s is an argument of the script", (int)nlen, name);
        return sh_put_value(s, b, "", 0, quoted, line, col, why);
    }
    struct sh_var *v = sh_var(s, name, nlen);
    if (v == NULL) {
        snprintf(why, sizeof why, "$%.*s is not set in the script", (int)nlen, name);
        return sh_put_value(s, b, "", 0, quoted, line, col, why);
    }
    if (idx[0] == '@' || idx[0] == '*') {
        for (int i = 0; i < v->n; i++) {
            const struct launch_field *x = &v->v[i];
            if (quoted && idx[0] == '@' && i > 0)
                sh_end_field(b);
            else if (i > 0)
                TRY(sh_put_value(s, b, " ", 1, quoted, line, col, NULL));
            /* an element keeps where the array wrote it */
            TRY(sh_put_value(s, b, x->text, strlen(x->text), quoted, x->line, x->col,
                             x->why));
        }
        return MT_OK;
    }
    long i = 0;
    if (idx[0] != '\0') {
        char *end;
        i = strtol(idx, &end, 10);
        if (*end != '\0' || i < 0) {
            snprintf(why, sizeof why, "${%.*s[%s]}: an index mario-tui does not evaluate",
                     (int)nlen, name, idx);
            return sh_put_value(s, b, "", 0, quoted, line, col, why);
        }
    }
    if (i >= v->n)
        return MT_OK; /* set but empty */
    return sh_put_value(s, b, v->v[i].text, strlen(v->v[i].text), quoted, line, col,
                        v->v[i].why);
}

/* ${...} at t[0..k) (the text between the braces). */
static int sh_put_brace(struct sh *s, struct sh_build *b, const char *t, size_t k, bool quoted,
                        int line, int col)
{
    size_t i = 0;
    char why[112];
    if (k > 0 && t[0] == '#') {
        snprintf(why, sizeof why, "${%.*s}: a length mario-tui does not evaluate", (int)k, t);
        return sh_put_value(s, b, "", 0, quoted, line, col, why);
    }
    while (i < k && (isalnum((unsigned char)t[i]) || t[i] == '_'))
        i++;
    if (i == 0 && k > 0 && strchr("@*", t[0]))
        i = 1;
    size_t nlen = i;
    char idx[32] = "";
    if (i < k && t[i] == '[') {
        const char *close = memchr(t + i, ']', k - i);
        if (close == NULL || (size_t)(close - t - i - 1) >= sizeof idx)
            goto unknown;
        memcpy(idx, t + i + 1, (size_t)(close - t - i - 1));
        idx[close - t - i - 1] = '\0';
        i = (size_t)(close - t) + 1;
    }
    if (nlen == 0)
        goto unknown;
    if (i == k)
        return sh_put_var(s, b, t, nlen, idx, quoted, line, col);
    bool colon = t[i] == ':';
    size_t o = i + colon;
    if (o >= k || strchr("-=+?", t[o]) == NULL)
        goto unknown;
    char op = t[o];
    const char *word = t + o + 1;
    size_t wlen = k - o - 1;
    struct sh_var *v = sh_var(s, t, nlen);
    bool positional = isdigit((unsigned char)t[0]) || t[0] == '@' || t[0] == '*';
    bool set = !positional && v != NULL, empty = !set || v->n == 0 || v->v[0].text[0] == '\0';
    bool use_word = op == '+' ? (colon ? !empty : set) : (colon ? empty : !set);
    if (op == '?' && use_word)
        goto unknown;
    if (!use_word)
        return op == '+' ? MT_OK : sh_put_var(s, b, t, nlen, idx, quoted, line, col);
    if (op == '+' && !use_word)
        return MT_OK;
    if (++s->depth > SH_MAX_EXPAND) {
        s->depth--;
        return sh_fail(s, line, col, "${...} nested more than %d deep", SH_MAX_EXPAND);
    }
    char *val = NULL;
    int rc = sh_expand_string(s, word, wlen, line, col, &val, why, sizeof why);
    s->depth--;
    TRY(rc);
    bool word_quoted = quoted || memchr(word, '"', wlen) || memchr(word, '\'', wlen);
    if (op == '=') {
        struct sh_fields one = {0};
        sh_fields_push(&one, val, strlen(val), line, col, why);
        rc = sh_set(s, t, nlen, &one, false, line, col);
        sh_fields_free(&one);
    }
    if (rc == MT_OK)
        rc = sh_put_value(s, b, val, strlen(val), word_quoted, line, col, why);
    free(val);
    return rc;
unknown:
    snprintf(why, sizeof why, "${%.*s}: an expansion mario-tui does not evaluate",
             (int)(k < 60 ? k : 60), t);
    return sh_put_value(s, b, "", 0, quoted, line, col, why);
}

/* One $ form at t[*i] (t[*i] == '$'); *i moves past it. */
static int sh_put_dollar(struct sh *s, struct sh_build *b, const char *t, size_t k, size_t *i,
                         bool quoted, int line, int col)
{
    size_t a = *i + 1;
    if (a >= k) {
        *i = a;
        return sh_put(s, b, "$", 1, line, col);
    }
    if (t[a] == '(' || t[a] == '{') {
        struct sh sub = *s;
        sub.text = t;
        sub.n = k;
        struct sh_pos q = {a, line, 0};
        if (!sh_skip_nested(&sub, &q))
            return sh_fail(s, line, col, "an unterminated $( or ${");
        *i = q.p;
        const char *in = t + a + 1;
        size_t inlen = q.p - a - 2;
        if (t[a] == '{')
            return sh_put_brace(s, b, in, inlen, quoted, line, col);
        if (inlen >= 2 && in[0] == '(' && in[inlen - 1] == ')') {
            char *expr = NULL, why[112];
            TRY(sh_expand_string(s, in + 1, inlen - 2, line, col, &expr, why, sizeof why));
            struct sh_arith ar = {s, expr, false};
            long v = sh_arith_sum(&ar);
            while (*ar.p == ' ')
                ar.p++;
            bool bad = ar.bad || *ar.p != '\0' || why[0];
            free(expr);
            if (bad) {
                snprintf(why, sizeof why, "$((%.*s)): arithmetic mario-tui cannot evaluate",
                         (int)(inlen - 2 < 60 ? inlen - 2 : 60), in + 1);
                return sh_put_value(s, b, "", 0, quoted, line, col, why);
            }
            char num[32];
            snprintf(num, sizeof num, "%ld", v);
            return sh_put_value(s, b, num, strlen(num), quoted, line, col, NULL);
        }
        char why[112];
        snprintf(why, sizeof why, "the output of $(%.*s) (mario-tui runs no command)",
                 (int)(inlen < 60 ? inlen : 60), in);
        return sh_put_value(s, b, "", 0, quoted, line, col, why);
    }
    if (isalpha((unsigned char)t[a]) || t[a] == '_') {
        size_t z = a;
        while (z < k && (isalnum((unsigned char)t[z]) || t[z] == '_'))
            z++;
        *i = z;
        return sh_put_var(s, b, t + a, z - a, "", quoted, line, col);
    }
    if (isdigit((unsigned char)t[a]) || t[a] == '@' || t[a] == '*') {
        *i = a + 1;
        return sh_put_var(s, b, t + a, 1, "", quoted, line, col);
    }
    if (t[a] == '#') {
        *i = a + 1;
        return sh_put_value(s, b, "0", 1, quoted, line, col, NULL);
    }
    if (strchr("?$!-", t[a]) != NULL) {
        *i = a + 1;
        char why[64];
        snprintf(why, sizeof why, "$%c is known only when the script runs", t[a]);
        return sh_put_value(s, b, "", 0, quoted, line, col, why);
    }
    *i = a;
    return sh_put(s, b, "$", 1, line, col);
}

/* The fields of one raw word: quotes, escapes and $ forms in order. */
int sh_expand(struct sh *s, const char *t, size_t k, int line, int col, bool split,
                     struct sh_fields *out)
{
    struct sh_build b = {0};
    int rc = MT_OK;
    bool dq = false;
    for (size_t i = 0; rc == MT_OK && i < k;) {
        char c = t[i];
        if (c == '\\' && i + 1 < k) {
            if (t[i + 1] == '\n') {
                i += 2;
                continue;
            }
            if (!dq || strchr("$`\"\\", t[i + 1]) != NULL) {
                rc = sh_put(s, &b, t + i + 1, 1, line, col);
                b.quoted = true;
                i += 2;
                continue;
            }
            rc = sh_put(s, &b, t + i, 1, line, col);
            i++;
            continue;
        }
        if (c == '"') {
            dq = !dq;
            b.quoted = true;
            if (dq)
                rc = sh_put(s, &b, "", 0, line, col); /* "" is a word */
            i++;
            continue;
        }
        if (c == '\'' && !dq) {
            const char *close = memchr(t + i + 1, '\'', k - i - 1);
            size_t z = close ? (size_t)(close - t) : k;
            rc = sh_put(s, &b, t + i + 1, z - i - 1, line, col);
            b.quoted = true;
            i = z + 1;
            continue;
        }
        if (c == '`') {
            const char *close = memchr(t + i + 1, '`', k - i - 1);
            i = close ? (size_t)(close - t) + 1 : k;
            rc = sh_put_value(s, &b, "", 0, dq || !split, line, col,
                              "the output of `...` (mario-tui runs no command)");
            continue;
        }
        if (c == '$') {
            rc = sh_put_dollar(s, &b, t, k, &i, dq || !split, line, col);
            continue;
        }
        rc = sh_put(s, &b, t + i, 1, line, col);
        i++;
    }
    if (rc == MT_OK) {
        sh_end_field(&b);
        for (int i = 0; i < b.out.n; i++) {
            if (out->n == out->cap) {
                out->cap = out->cap ? 2 * out->cap : 16;
                out->v = xreallocarray(out->v, (size_t)out->cap, sizeof *out->v);
            }
            if (out->n >= SH_MAX_FIELDS) {
                rc = sh_fail(s, line, col, "more than %d words", SH_MAX_FIELDS);
                break;
            }
            out->v[out->n++] = b.out.v[i];
            b.out.v[i].text = NULL;
        }
    }
    for (int i = 0; i < b.out.n; i++)
        free(b.out.v[i].text);
    free(b.out.v);
    free(b.cur);
    return rc;
}
