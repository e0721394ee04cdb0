/* model/launch_shell.c: the part of bash a Megatron-LM launch script is written in, run far
 * enough to find the launch and its words (model/launch_internal.h, launch_shell_run). It
 * follows what Megatron-LM's examples do (examples/llama/train_llama3_8b_h100_fp8.sh,
 * examples/gpt3/train_gpt3_175b_distributed.sh): variables, ${VAR:-default}, $((arithmetic)),
 * bash arrays built with ( ... ) and +=, expanded as "${ARR[@]}" or unquoted (then split on
 * blanks, so "--fp8-format hybrid" in an array gives two words), line continuations, if/elif/
 * else on tests it can decide, #SBATCH lines. It never runs a command: $(...) and `...` give
 * a value it does not know, which is an error only where a flag that matters takes it.
 * Invariant: anything that could change the launch's words and is not followed (an
 * assignment under an undecided condition or in a loop, the launch in a function) is an
 * error naming its line, never skipped. */
#include <config.h>
#include "model/launch_internal.h"

#include <ctype.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/err.h"
#include "util/xalloc.h"

#define SH_MAX_VARS 1024
#define SH_MAX_FIELDS 4096 /* words of one variable or command (a launch has hundreds) */
#define SH_MAX_DEPTH 64     /* nested if / loops / braces */
#define SH_MAX_TEXT 65536   /* one word's text */
#define SH_MAX_EXPAND 16    /* ${A:-${B:-...}} nesting */

enum sh_tok { TK_WORD, TK_NL, TK_AND, TK_OR, TK_PIPE, TK_AMP, TK_LPAREN, TK_RPAREN };

struct sh_token {
    enum sh_tok kind;
    size_t off, len; /* TK_WORD: the raw text */
    int line, col;
};

struct sh_var {
    char name[64];
    struct launch_field *v;
    int n;
};

struct sh_fields {
    struct launch_field *v;
    int n, cap;
};

struct sh {
    const char *text;
    size_t n;
    const char *name;
    struct mt_err *e;
    struct sh_token *tok;
    int ntok, captok;
    struct sh_var *vars;
    int nvars, capvars;
    struct launch_shell *out;
    int depth; /* of ${...} expansions */
};

/* ---- tokens ------------------------------------------------------------------------------ */

static void sh_push_tok(struct sh *s, enum sh_tok k, size_t off, size_t len, int line, int col)
{
    if (s->ntok == s->captok) {
        s->captok = s->captok ? 2 * s->captok : 256;
        s->tok = xreallocarray(s->tok, (size_t)s->captok, sizeof *s->tok);
    }
    s->tok[s->ntok++] = (struct sh_token){k, off, len, line, col};
}

struct sh_pos {
    size_t p;
    int line;
    size_t line_start;
};

static int sh_col(const struct sh_pos *q)
{
    return (int)(q->p - q->line_start) + 1;
}

static void sh_newline(struct sh_pos *q)
{
    q->line++;
    q->line_start = q->p;
}

/* Past a quoted or nested part starting at q->p (', ", `, $( ... ), ${ ... }); false when it
 * does not end. */
static bool sh_skip_nested(const struct sh *s, struct sh_pos *q)
{
    char c = s->text[q->p];
    if (c == '\'') {
        for (q->p++; q->p < s->n && s->text[q->p] != '\''; q->p++)
            if (s->text[q->p] == '\n') {
                q->p++;
                sh_newline(q);
                q->p--;
            }
        if (q->p >= s->n)
            return false;
        q->p++;
        return true;
    }
    if (c == '"' || c == '`') {
        for (q->p++; q->p < s->n && s->text[q->p] != c;) {
            if (s->text[q->p] == '\\' && q->p + 1 < s->n) {
                q->p++;
            } else if (c == '"' && s->text[q->p] == '$' && q->p + 1 < s->n &&
                       (s->text[q->p + 1] == '(' || s->text[q->p + 1] == '{')) {
                q->p++;
                if (!sh_skip_nested(s, q))
                    return false;
                continue;
            }
            if (s->text[q->p] == '\n') {
                q->p++;
                sh_newline(q);
                continue;
            }
            q->p++;
        }
        if (q->p >= s->n)
            return false;
        q->p++;
        return true;
    }
    /* at '(' or '{' after a '$' */
    char open = c, close = c == '(' ? ')' : '}';
    int depth = 0;
    while (q->p < s->n) {
        char d = s->text[q->p];
        if (d == '\\' && q->p + 1 < s->n) {
            q->p += 2;
            continue;
        }
        if (d == '\'' || d == '"' || d == '`') {
            if (!sh_skip_nested(s, q))
                return false;
            continue;
        }
        if (d == '\n') {
            q->p++;
            sh_newline(q);
            continue;
        }
        q->p++;
        if (d == open)
            depth++;
        else if (d == close && --depth == 0)
            return true;
    }
    return false;
}

static int sh_fail(struct sh *s, int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int sh_fail(struct sh *s, int line, int col, const char *fmt, ...)
{
    char what[700];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return launch_fail(s->e, s->name, line, col, "%s", what);
}

static bool sh_is_word_end(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ';' || c == '&' || c == '|' ||
           c == '(' || c == ')' || c == '<' || c == '>';
}

/* #SBATCH --nodes=4 / -N 4 / --ntasks-per-node=8 / --gpus-per-node=8 / --gres=gpu:8 */
static void sh_sbatch(struct sh *s, const char *a, const char *end, int line)
{
    char buf[512];
    size_t len = (size_t)(end - a) < sizeof buf - 1 ? (size_t)(end - a) : sizeof buf - 1;
    memcpy(buf, a, len);
    buf[len] = '\0';
    char *save = NULL, *w[32];
    int nw = 0;
    for (char *t = strtok_r(buf, " \t\r=", &save); t && nw < 32; t = strtok_r(NULL, " \t\r=", &save))
        w[nw++] = t;
    for (int i = 0; i < nw; i++) {
        const char *opt = w[i], *val = i + 1 < nw ? w[i + 1] : "";
        int *dst = NULL;
        char shortv[16] = "";
        if (strncmp(opt, "-N", 2) == 0 && opt[2] != '\0') { /* -N4 */
            snprintf(shortv, sizeof shortv, "%s", opt + 2);
            val = shortv;
            dst = &s->out->sbatch_nodes;
        } else if (strcmp(opt, "--nodes") == 0 || strcmp(opt, "-N") == 0) {
            dst = &s->out->sbatch_nodes;
        } else if (strcmp(opt, "--ntasks-per-node") == 0) {
            dst = &s->out->sbatch_tasks_per_node;
        } else if (strcmp(opt, "--gpus-per-node") == 0) {
            dst = &s->out->sbatch_gpus_per_node;
        } else if (strcmp(opt, "--gres") == 0 && strncmp(val, "gpu:", 4) == 0) {
            const char *c = strrchr(val, ':');
            snprintf(shortv, sizeof shortv, "%s", c + 1);
            val = shortv;
            dst = &s->out->sbatch_gpus_per_node;
        }
        if (dst == NULL)
            continue;
        char *endp;
        long v = strtol(val, &endp, 10);
        if (endp != val && *endp == '\0' && v > 0 && v <= CONFIG_MAX_DEVICES) {
            *dst = (int)v;
            s->out->sbatch_line = line;
        }
    }
}

/* A redirection at q->p ([n]>, >>, >&n, <, <<EOF, &>): skipped with its target; a here
 * document's delimiter goes to *heredoc. */
static int sh_redirect(struct sh *s, struct sh_pos *q, char *heredoc, size_t hn, bool *strip)
{
    while (q->p < s->n && isdigit((unsigned char)s->text[q->p]))
        q->p++;
    bool here = false;
    if (s->text[q->p] == '&')
        q->p++;
    if (q->p + 1 < s->n && s->text[q->p] == '<' && s->text[q->p + 1] == '<') {
        q->p += 2;
        if (q->p < s->n && s->text[q->p] == '<') {
            q->p++; /* <<< word: a here string */
        } else {
            here = true;
            *strip = q->p < s->n && s->text[q->p] == '-';
            if (*strip)
                q->p++;
        }
    } else {
        q->p++;
        while (q->p < s->n && strchr(">&|", s->text[q->p]) != NULL) {
            char c = s->text[q->p++];
            if (c == '&' && q->p < s->n &&
                (isdigit((unsigned char)s->text[q->p]) || s->text[q->p] == '-')) {
                q->p++;
                return MT_OK; /* 2>&1 */
            }
        }
    }
    while (q->p < s->n && (s->text[q->p] == ' ' || s->text[q->p] == '\t'))
        q->p++;
    size_t a = q->p;
    while (q->p < s->n && !sh_is_word_end(s->text[q->p])) {
        char c = s->text[q->p];
        if (c == '\'' || c == '"' || c == '`' ||
            (c == '$' && q->p + 1 < s->n && strchr("({", s->text[q->p + 1]))) {
            if (c == '$')
                q->p++;
            if (!sh_skip_nested(s, q))
                return sh_fail(s, q->line, sh_col(q), "an unterminated quote or $( in a "
                                                       "redirection");
            continue;
        }
        q->p++;
    }
    if (here) {
        size_t k = 0;
        for (size_t i = a; i < q->p && k + 1 < hn; i++)
            if (s->text[i] != '\'' && s->text[i] != '"' && s->text[i] != '\\')
                heredoc[k++] = s->text[i];
        heredoc[k] = '\0';
    }
    return MT_OK;
}

/* After a newline: the lines of a pending here document, up to its delimiter. */
static void sh_skip_heredoc(struct sh *s, struct sh_pos *q, char *heredoc, bool strip)
{
    size_t k = strlen(heredoc);
    while (q->p < s->n) {
        size_t a = q->p;
        while (strip && a < s->n && s->text[a] == '\t')
            a++;
        const char *nl = memchr(s->text + q->p, '\n', s->n - q->p);
        size_t b = nl ? (size_t)(nl - s->text) : s->n;
        bool end = b - a == k && memcmp(s->text + a, heredoc, k) == 0;
        q->p = nl ? b + 1 : s->n;
        sh_newline(q);
        if (end)
            break;
    }
    heredoc[0] = '\0';
}

static int sh_tokenize(struct sh *s)
{
    struct sh_pos q = {0, 1, 0};
    char heredoc[64] = "";
    bool strip = false;
    if (s->n >= 3 && memcmp(s->text, "\xEF\xBB\xBF", 3) == 0)
        q.p = q.line_start = 3;
    while (q.p < s->n) {
        char c = s->text[q.p];
        int line = q.line, col = sh_col(&q);
        if (c == '\\' && q.p + 1 < s->n && s->text[q.p + 1] == '\n') {
            q.p += 2;
            sh_newline(&q);
        } else if (c == ' ' || c == '\t' || c == '\r') {
            q.p++;
        } else if (c == '\n') {
            sh_push_tok(s, TK_NL, q.p, 1, line, col);
            q.p++;
            sh_newline(&q);
            if (heredoc[0])
                sh_skip_heredoc(s, &q, heredoc, strip);
        } else if (c == '#') {
            const char *nl = memchr(s->text + q.p, '\n', s->n - q.p);
            size_t b = nl ? (size_t)(nl - s->text) : s->n;
            if (b - q.p > 7 && memcmp(s->text + q.p, "#SBATCH", 7) == 0)
                sh_sbatch(s, s->text + q.p + 7, s->text + b, line);
            q.p = b;
        } else if (c == ';') {
            sh_push_tok(s, TK_NL, q.p, 1, line, col);
            q.p += q.p + 1 < s->n && s->text[q.p + 1] == ';' ? 2 : 1;
        } else if (c == '&' && q.p + 1 < s->n && s->text[q.p + 1] == '&') {
            sh_push_tok(s, TK_AND, q.p, 2, line, col);
            q.p += 2;
        } else if (c == '|' && q.p + 1 < s->n && s->text[q.p + 1] == '|') {
            sh_push_tok(s, TK_OR, q.p, 2, line, col);
            q.p += 2;
        } else if (c == '|') {
            sh_push_tok(s, TK_PIPE, q.p, 1, line, col);
            q.p += q.p + 1 < s->n && s->text[q.p + 1] == '&' ? 2 : 1;
        } else if (c == '&' && !(q.p + 1 < s->n && s->text[q.p + 1] == '>')) {
            sh_push_tok(s, TK_AMP, q.p, 1, line, col);
            q.p++;
        } else if (c == '(' || c == ')') {
            sh_push_tok(s, c == '(' ? TK_LPAREN : TK_RPAREN, q.p, 1, line, col);
            q.p++;
        } else if (c == '<' || c == '>' || c == '&') {
            TRY(sh_redirect(s, &q, heredoc, sizeof heredoc, &strip));
        } else {
            size_t a = q.p;
            bool digits = true;
            while (q.p < s->n && !sh_is_word_end(s->text[q.p])) {
                char d = s->text[q.p];
                digits = digits && isdigit((unsigned char)d);
                if (d == '\\' && q.p + 1 < s->n) {
                    q.p += 2;
                    if (s->text[q.p - 1] == '\n')
                        sh_newline(&q);
                    continue;
                }
                if (d == '\'' || d == '"' || d == '`' ||
                    (d == '$' && q.p + 1 < s->n && strchr("({", s->text[q.p + 1]))) {
                    struct sh_pos at = q;
                    if (d == '$')
                        q.p++;
                    if (!sh_skip_nested(s, &q))
                        return sh_fail(s, at.line, sh_col(&at), "%s does not end",
                                       d == '\'' || d == '"' ? "this quote"
                                       : d == '`'            ? "this `"
                                                             : "this $( or ${");
                    continue;
                }
                q.p++;
            }
            if (digits && q.p < s->n && (s->text[q.p] == '<' || s->text[q.p] == '>')) {
                q.p = a; /* 2>file */
                TRY(sh_redirect(s, &q, heredoc, sizeof heredoc, &strip));
                continue;
            }
            sh_push_tok(s, TK_WORD, a, q.p - a, line, col);
        }
    }
    sh_push_tok(s, TK_NL, s->n, 0, q.line, sh_col(&q));
    return MT_OK;
}

/* ---- variables and fields ---------------------------------------------------------------- */

static struct sh_var *sh_var(struct sh *s, const char *name, size_t len)
{
    for (int i = 0; i < s->nvars; i++)
        if (strlen(s->vars[i].name) == len && strncmp(s->vars[i].name, name, len) == 0)
            return &s->vars[i];
    return NULL;
}

static void sh_fields_push(struct sh_fields *f, const char *text, size_t len, int line, int col,
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

static void sh_fields_free(struct sh_fields *f)
{
    for (int i = 0; i < f->n; i++)
        free(f->v[i].text);
    free(f->v);
    f->v = NULL;
    f->n = f->cap = 0;
}

static int sh_set(struct sh *s, const char *name, size_t len, struct sh_fields *val, bool append,
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

static int sh_expand(struct sh *s, const char *t, size_t k, int line, int col, bool split,
                     struct sh_fields *out);

/* A word expanded to one string (an assignment's value, a default, arithmetic). */
static int sh_expand_string(struct sh *s, const char *t, size_t k, int line, int col,
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
        if (op == '*' && (labs(v) > 1000000000L || labs(w) > 1000000000L))
            a->bad = true;
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
        if (labs(v) > 1000000000000L || labs(w) > 1000000000000L)
            a->bad = true;
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

/* Expands the raw word t[0..k) into fields (split: unquoted expansions split on blanks;
 * else the word stays one field, as an assignment's value). */
static int sh_expand(struct sh *s, const char *t, size_t k, int line, int col, bool split,
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

/* ---- statements -------------------------------------------------------------------------- */

static bool sh_tok_is(const struct sh *s, int i, const char *word)
{
    return i < s->ntok && s->tok[i].kind == TK_WORD && s->tok[i].len == strlen(word) &&
           memcmp(s->text + s->tok[i].off, word, s->tok[i].len) == 0;
}

static bool sh_is_sep(enum sh_tok k)
{
    return k == TK_NL || k == TK_AND || k == TK_OR || k == TK_PIPE || k == TK_AMP;
}

/* Whether raw word t[0..k) is an assignment NAME=... or NAME+=...: the length of NAME. */
static size_t sh_assignment(const char *t, size_t k, bool *append)
{
    size_t i = 0;
    if (k == 0 || !(isalpha((unsigned char)t[0]) || t[0] == '_'))
        return 0;
    while (i < k && (isalnum((unsigned char)t[i]) || t[i] == '_'))
        i++;
    *append = i + 1 < k && t[i] == '+' && t[i + 1] == '=';
    if (*append || (i < k && t[i] == '='))
        return i;
    return 0;
}

enum sh_run { RUN_NO, RUN_YES, RUN_UNKNOWN };

struct sh_frame {
    enum { FR_IF, FR_LOOP, FR_CASE, FR_FUNC, FR_GROUP } kind;
    enum sh_run run;
    bool taken, unknown_seen;
    int line;
    char why[160]; /* RUN_UNKNOWN: why the branch may or may not run */
};

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

/* The condition of an if/elif: tokens [a, b). */
static int sh_condition(struct sh *s, int a, int b, enum sh_run *out)
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

/* Whether fields hold the launch: Megatron's --num-layers. */
static bool sh_is_launch(const struct sh_fields *f)
{
    for (int i = 0; i < f->n; i++)
        if (strcmp(f->v[i].text, "--num-layers") == 0 ||
            strncmp(f->v[i].text, "--num-layers=", 13) == 0)
            return true;
    return false;
}

/* A statement [a, b) when it runs: assignments, arrays, builtins, the launch. */
static int sh_statement(struct sh *s, int a, int b, enum sh_run run, const struct sh_frame *why,
                        bool *stop)
{
    int i = a;
    /* export / declare / local / readonly / typeset: their options, then assignments */
    bool builtin = sh_tok_is(s, i, "export") || sh_tok_is(s, i, "declare") ||
                   sh_tok_is(s, i, "local") || sh_tok_is(s, i, "readonly") ||
                   sh_tok_is(s, i, "typeset");
    if (builtin) {
        i++;
        while (i < b && s->tok[i].kind == TK_WORD && s->text[s->tok[i].off] == '-')
            i++;
    }
    bool any_assign = false;
    while (i < b && s->tok[i].kind == TK_WORD) {
        const struct sh_token *t = &s->tok[i];
        const char *raw = s->text + t->off;
        bool append;
        size_t nlen = sh_assignment(raw, t->len, &append);
        if (nlen == 0) {
            if (builtin) { /* export NAME: nothing to set */
                i++;
                continue;
            }
            break;
        }
        any_assign = true;
        if (run == RUN_UNKNOWN)
            return sh_fail(s, t->line, t->col,
                           "%.*s is set inside %s (line %d), which mario-tui cannot decide: set "
                           "it before, or give the launch command itself",
                           (int)nlen, raw, why->why, why->line);
        size_t vstart = nlen + 1 + append;
        struct sh_fields val = {0};
        int rc;
        if (vstart == t->len && i + 1 < b && s->tok[i + 1].kind == TK_LPAREN) {
            /* NAME=( words ... ) */
            int j = i + 2;
            rc = MT_OK;
            for (; rc == MT_OK && j < b && s->tok[j].kind != TK_RPAREN; j++)
                if (s->tok[j].kind == TK_WORD)
                    rc = sh_expand(s, s->text + s->tok[j].off, s->tok[j].len, s->tok[j].line,
                                   s->tok[j].col, true, &val);
            if (rc == MT_OK && j >= b)
                rc = sh_fail(s, t->line, t->col, "%.*s=( has no closing )", (int)nlen, raw);
            if (rc == MT_OK)
                rc = sh_set(s, raw, nlen, &val, append, t->line, t->col);
            sh_fields_free(&val);
            TRY(rc);
            i = j + 1;
            continue;
        }
        char *str = NULL, w[112];
        rc = sh_expand_string(s, raw + vstart, t->len - vstart, t->line,
                              t->col + (int)vstart, &str, w, sizeof w);
        if (rc == MT_OK) {
            struct sh_var *old = sh_var(s, raw, nlen);
            if (append && old != NULL && old->n > 0) { /* NAME+=text: onto element 0 */
                size_t l0 = strlen(old->v[0].text), l1 = strlen(str);
                old->v[0].text = xreallocarray(old->v[0].text, l0 + l1 + 1, 1);
                memcpy(old->v[0].text + l0, str, l1 + 1);
                if (w[0] && old->v[0].why[0] == '\0')
                    snprintf(old->v[0].why, sizeof old->v[0].why, "%s", w);
            } else {
                sh_fields_push(&val, str, strlen(str), t->line, t->col + (int)vstart, w);
                rc = sh_set(s, raw, nlen, &val, false, t->line, t->col);
            }
        }
        free(str);
        sh_fields_free(&val);
        TRY(rc);
        i++;
    }
    if (i >= b || builtin)
        return MT_OK; /* assignments only: they stay set */
    (void)any_assign; /* NAME=x cmd: x is the command's alone */
    if (sh_tok_is(s, i, "unset")) {
        for (int j = i + 1; j < b && run == RUN_YES; j++) {
            struct sh_var *v = s->tok[j].kind == TK_WORD
                                   ? sh_var(s, s->text + s->tok[j].off, s->tok[j].len)
                                   : NULL;
            if (v != NULL) {
                for (int k = 0; k < v->n; k++)
                    free(v->v[k].text);
                free(v->v);
                *v = s->vars[--s->nvars];
            }
        }
        return MT_OK;
    }
    if (sh_tok_is(s, i, "exit")) {
        *stop = run == RUN_YES;
        return MT_OK;
    }
    struct sh_fields f = {0};
    int rc = MT_OK;
    for (int j = i; rc == MT_OK && j < b; j++)
        if (s->tok[j].kind == TK_WORD)
            rc = sh_expand(s, s->text + s->tok[j].off, s->tok[j].len, s->tok[j].line,
                           s->tok[j].col, true, &f);
    if (rc == MT_OK && sh_is_launch(&f)) {
        const struct sh_token *t = &s->tok[i];
        if (run == RUN_UNKNOWN)
            rc = sh_fail(s, t->line, t->col,
                         "the launch is inside %s (line %d), which mario-tui cannot decide: "
                         "give the launch command itself",
                         why->why, why->line);
        else if (s->out->n > 0)
            rc = sh_fail(s, t->line, t->col,
                         "a second launch with --num-layers (the first at line %d): keep one",
                         s->out->line);
        if (rc == MT_OK) {
            s->out->f = f.v;
            s->out->n = f.n;
            s->out->line = t->line;
            return MT_OK;
        }
    }
    sh_fields_free(&f);
    return rc;
}

static int sh_find_then(struct sh *s, int i, const char *word)
{
    for (int j = i; j < s->ntok; j++)
        if (sh_tok_is(s, j, word) && sh_is_sep(s->tok[j - 1].kind))
            return j;
    return -1;
}

/* The end of the statement starting at i: the next separator outside parentheses. */
static int sh_statement_end(const struct sh *s, int i)
{
    int depth = 0;
    for (; i < s->ntok; i++) {
        enum sh_tok k = s->tok[i].kind;
        if (k == TK_LPAREN)
            depth++;
        else if (k == TK_RPAREN && depth > 0)
            depth--;
        else if (depth == 0 && sh_is_sep(k))
            return i;
    }
    return s->ntok;
}

static int sh_run_script(struct sh *s)
{
    struct sh_frame fr[SH_MAX_DEPTH];
    int nf = 0;
    bool stop = false, func_next = false;
    for (int i = 0; i < s->ntok && !stop;) {
        const struct sh_token *t = &s->tok[i];
        if (t->kind != TK_WORD && t->kind != TK_LPAREN) {
            i++;
            continue;
        }
        enum sh_run run = RUN_YES;
        const struct sh_frame *why = NULL;
        for (int k = 0; k < nf; k++) {
            if (fr[k].run == RUN_NO) {
                run = RUN_NO;
                break;
            }
            if (fr[k].run == RUN_UNKNOWN && why == NULL) {
                run = RUN_UNKNOWN;
                why = &fr[k];
            }
        }
        bool opener = sh_tok_is(s, i, "if") || sh_tok_is(s, i, "for") ||
                      sh_tok_is(s, i, "while") || sh_tok_is(s, i, "until") ||
                      sh_tok_is(s, i, "select") || sh_tok_is(s, i, "case") ||
                      sh_tok_is(s, i, "{") || sh_tok_is(s, i, "function");
        if (opener && nf == SH_MAX_DEPTH)
            return sh_fail(s, t->line, t->col, "blocks nested more than %d deep", SH_MAX_DEPTH);
        if (sh_tok_is(s, i, "if") || sh_tok_is(s, i, "elif")) {
            bool elif = sh_tok_is(s, i, "elif");
            int j = sh_find_then(s, i + 1, "then");
            if (j < 0)
                return sh_fail(s, t->line, t->col, "this %s has no then", elif ? "elif" : "if");
            if (elif && (nf == 0 || fr[nf - 1].kind != FR_IF))
                return sh_fail(s, t->line, t->col, "elif without if");
            enum sh_run c = RUN_UNKNOWN;
            /* a branch that cannot run is not evaluated (its variables may be unset) */
            enum sh_run outer = RUN_YES;
            for (int k = 0; k < nf - elif; k++)
                if (fr[k].run == RUN_NO)
                    outer = RUN_NO;
            if (outer != RUN_NO)
                TRY(sh_condition(s, i + 1, j, &c));
            struct sh_frame *f = elif ? &fr[nf - 1] : &fr[nf++];
            if (!elif)
                *f = (struct sh_frame){.kind = FR_IF, .line = t->line};
            if (f->taken)
                f->run = RUN_NO;
            else if (f->unknown_seen)
                f->run = c == RUN_NO ? RUN_NO : RUN_UNKNOWN;
            else
                f->run = c;
            f->taken = f->taken || (c == RUN_YES && !f->unknown_seen);
            if (c == RUN_UNKNOWN && !f->taken) {
                f->unknown_seen = true;
                f->line = t->line;
                snprintf(f->why, sizeof f->why,
                         "an if whose test needs a file, a command or a value not in the "
                         "script");
            }
            i = j + 1;
            continue;
        }
        if (sh_tok_is(s, i, "else")) {
            if (nf == 0 || fr[nf - 1].kind != FR_IF)
                return sh_fail(s, t->line, t->col, "else without if");
            struct sh_frame *f = &fr[nf - 1];
            f->run = f->taken ? RUN_NO : f->unknown_seen ? RUN_UNKNOWN : RUN_YES;
            i++;
            continue;
        }
        if (sh_tok_is(s, i, "fi") || sh_tok_is(s, i, "done") || sh_tok_is(s, i, "esac") ||
            sh_tok_is(s, i, "}")) {
            if (nf == 0)
                return sh_fail(s, t->line, t->col, "%.*s without its opening", (int)t->len,
                               s->text + t->off);
            nf--;
            i++;
            continue;
        }
        if (sh_tok_is(s, i, "then") || sh_tok_is(s, i, "do") || sh_tok_is(s, i, "in")) {
            i++;
            continue;
        }
        if (sh_tok_is(s, i, "for") || sh_tok_is(s, i, "while") || sh_tok_is(s, i, "until") ||
            sh_tok_is(s, i, "select")) {
            fr[nf++] = (struct sh_frame){.kind = FR_LOOP, .run = RUN_UNKNOWN, .line = t->line};
            snprintf(fr[nf - 1].why, sizeof fr[nf - 1].why, "a %.*s loop (not run)",
                     (int)t->len, s->text + t->off);
            int j = sh_find_then(s, i + 1, "do");
            if (j < 0)
                return sh_fail(s, t->line, t->col, "this loop has no do");
            i = j + 1;
            continue;
        }
        if (sh_tok_is(s, i, "case")) {
            /* not run: an assignment or a launch between case and esac is an error */
            int depth = 0, j = i;
            for (; j < s->ntok; j++) {
                depth += sh_tok_is(s, j, "case") - sh_tok_is(s, j, "esac");
                if (depth == 0)
                    break;
                bool append;
                const struct sh_token *u = &s->tok[j];
                if (run != RUN_NO && u->kind == TK_WORD &&
                    (sh_assignment(s->text + u->off, u->len, &append) > 0 ||
                     (u->len >= 12 && memcmp(s->text + u->off, "--num-layers", 12) == 0)))
                    return sh_fail(s, u->line, u->col,
                                   "inside a case statement (line %d), which mario-tui does "
                                   "not run: set it before the case, or give the launch "
                                   "command itself",
                                   t->line);
            }
            i = j + 1;
            continue;
        }
        if (sh_tok_is(s, i, "function") ||
            (t->kind == TK_WORD && i + 2 < s->ntok && s->tok[i + 1].kind == TK_LPAREN &&
             s->tok[i + 2].kind == TK_RPAREN)) {
            func_next = true;
            i += sh_tok_is(s, i, "function") ? 2 : 3;
            continue;
        }
        if (sh_tok_is(s, i, "{")) {
            fr[nf++] = (struct sh_frame){.kind = func_next ? FR_FUNC : FR_GROUP,
                                         .run = func_next ? RUN_UNKNOWN : RUN_YES,
                                         .line = t->line};
            snprintf(fr[nf - 1].why, sizeof fr[nf - 1].why, "a function (mario-tui does not "
                                                            "follow calls)");
            func_next = false;
            i++;
            continue;
        }
        func_next = false;
        int b = sh_statement_end(s, i);
        if (t->kind == TK_LPAREN) { /* ( subshell ): its assignments do not stay */
            i = b;
            continue;
        }
        if (run != RUN_NO) {
            bool in_func = false;
            for (int k = 0; k < nf; k++)
                in_func = in_func || fr[k].kind == FR_FUNC;
            if (in_func) { /* a function's own variables are skipped; the launch is not */
                for (int j = i; j < b; j++)
                    if (s->tok[j].kind == TK_WORD &&
                        memmem(s->text + s->tok[j].off, s->tok[j].len, "--num-layers", 12))
                        return sh_fail(s, s->tok[j].line, s->tok[j].col,
                                       "the launch is inside a function (line %d): mario-tui "
                                       "does not follow calls; give the launch command itself",
                                       why ? why->line : t->line);
            } else {
                TRY(sh_statement(s, i, b, run, why, &stop));
            }
        }
        i = b;
    }
    return MT_OK;
}

int launch_shell_run(const char *text, size_t n, const char *name, struct launch_shell *out,
                     struct mt_err *e)
{
    struct sh s = {.text = text, .n = n, .name = name, .e = e, .out = out};
    memset(out, 0, sizeof *out);
    int rc = sh_tokenize(&s);
    /* Slurm's variables from #SBATCH, as srun and sbatch set them */
    static const char *const slurm[][2] = {{"SLURM_NNODES", "n"}, {"SLURM_JOB_NUM_NODES", "n"},
                                           {"SLURM_NTASKS_PER_NODE", "t"},
                                           {"SLURM_GPUS_PER_NODE", "g"}};
    for (int k = 0; rc == MT_OK && k < 4; k++) {
        int v = slurm[k][1][0] == 'n'   ? out->sbatch_nodes
                : slurm[k][1][0] == 't' ? out->sbatch_tasks_per_node
                                        : out->sbatch_gpus_per_node;
        if (v <= 0)
            continue;
        char num[16];
        snprintf(num, sizeof num, "%d", v);
        struct sh_fields f = {0};
        sh_fields_push(&f, num, strlen(num), out->sbatch_line, 1, NULL);
        rc = sh_set(&s, slurm[k][0], strlen(slurm[k][0]), &f, false, 0, 0);
        sh_fields_free(&f);
    }
    if (rc == MT_OK)
        rc = sh_run_script(&s);
    if (rc == MT_OK && out->n == 0)
        rc = launch_fail(e, name, 0, 0,
                         "no launch: no command with --num-layers (a pretrain_gpt.py line, or "
                         "the arrays it expands) runs in the script");
    for (int i = 0; i < s.nvars; i++) {
        for (int k = 0; k < s.vars[i].n; k++)
            free(s.vars[i].v[k].text);
        free(s.vars[i].v);
    }
    free(s.vars);
    free(s.tok);
    if (rc != MT_OK)
        launch_shell_fini(out);
    return rc;
}

void launch_shell_fini(struct launch_shell *s)
{
    for (int i = 0; i < s->n; i++)
        free(s->f[i].text);
    free(s->f);
    s->f = NULL;
    s->n = 0;
}
