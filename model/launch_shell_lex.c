/* model/launch_shell_lex.c: the shell subset's tokens (model/launch_shell.h): words kept raw
 * with their quotes and $ forms for the expansion, separators, parentheses, redirections and
 * here documents skipped, comments dropped but #SBATCH's GPU counts kept. */
#include <config.h>
#include "model/launch_shell.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/err.h"
#include "util/xalloc.h"

static void sh_push_tok(struct sh *s, enum sh_tok k, size_t off, size_t len, int line, int col)
{
    if (s->ntok == s->captok) {
        s->captok = s->captok ? 2 * s->captok : 256;
        s->tok = xreallocarray(s->tok, (size_t)s->captok, sizeof *s->tok);
    }
    s->tok[s->ntok++] = (struct sh_token){k, off, len, line, col};
}

static int sh_col(const struct sh_pos *q)
{
    return (int)(q->p - q->line_start) + 1;
}

static void sh_newline(struct sh_pos *q)
{
    q->line++;
    q->line_start = q->p;
}

bool sh_skip_nested(const struct sh *s, struct sh_pos *q)
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

int sh_fail(struct sh *s, int line, int col, const char *fmt, ...)
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

int sh_tokenize(struct sh *s)
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
