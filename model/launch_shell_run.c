/* model/launch_shell_run.c: the shell subset's statements (model/launch_shell.h): assignments
 * and arrays run, if/elif/else followed where the test is decided, loops, case and functions
 * not run (an assignment or the launch inside one is an error naming its line), and the one
 * command holding --num-layers taken as the launch (launch_shell_run, model/launch_internal.h). */
#include <config.h>
#include "model/launch_shell.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/err.h"
#include "util/xalloc.h"

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

struct sh_frame {
    enum { FR_IF, FR_LOOP, FR_CASE, FR_FUNC, FR_GROUP } kind;
    enum sh_run run;
    bool taken, unknown_seen;
    int line;
    char why[160]; /* RUN_UNKNOWN: why the branch may or may not run */
};


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
