/* model/launch_shell.h: what the parts of the shell subset share (model/launch_shell_lex.c
 * the tokens, model/launch_shell_expand.c variables and $ expansions, model/launch_shell_cond.c
 * the tests of if/elif, model/launch_shell_run.c the statements and the launch found; the
 * entry point, launch_shell_run, is in model/launch_internal.h). The subset is the part of
 * bash a Megatron-LM launch script is written in, run far enough to find the launch and its
 * words. It follows what Megatron-LM's examples do (examples/llama/train_llama3_8b_h100_fp8.sh,
 * examples/gpt3/train_gpt3_175b_distributed.sh): variables, ${VAR:-default}, $((arithmetic)),
 * bash arrays built with ( ... ) and +=, expanded as "${ARR[@]}" or unquoted (then split on
 * blanks, so "--fp8-format hybrid" in an array gives two words), line continuations, if/elif/
 * else on tests it can decide, #SBATCH lines. It never runs a command: $(...) and `...` give
 * a value it does not know, which is an error only where a flag that matters takes it.
 * Invariant: anything that could change the launch's words and is not followed (an
 * assignment under an undecided condition or in a loop, the launch in a function) is an
 * error naming its line, never skipped. Only model/launch_shell_*.c include it. */
#ifndef MT_MODEL_LAUNCH_SHELL_H
#define MT_MODEL_LAUNCH_SHELL_H

#include <stdbool.h>
#include <stddef.h>

#include "model/launch_internal.h"

struct mt_err;

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


/* A place in the text while tokenizing (or skipping a nested part of a word). */
struct sh_pos {
    size_t p;
    int line;
    size_t line_start;
};

enum sh_run { RUN_NO, RUN_YES, RUN_UNKNOWN };

/* ---- model/launch_shell_lex.c ---- */
/* MT_EINVAL "name:line:col: what". */
int sh_fail(struct sh *s, int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Past a quoted or nested part starting at q->p (', ", `, $( ... ), ${ ... }); false when it
 * does not end. */
bool sh_skip_nested(const struct sh *s, struct sh_pos *q);
/* s->text into s->tok (words raw, separators, parentheses); #SBATCH lines into s->out. */
int sh_tokenize(struct sh *s);

/* ---- model/launch_shell_expand.c ---- */
/* The variable name[0..len), or NULL when it is not set. */
struct sh_var *sh_var(struct sh *s, const char *name, size_t len);
/* Appends a copy of text[0..len) as a field written at line:col (why: "" when known). */
void sh_fields_push(struct sh_fields *f, const char *text, size_t len, int line, int col,
                    const char *why);
void sh_fields_free(struct sh_fields *f);
/* name = val (append: +=); val's fields move into the variable. */
int sh_set(struct sh *s, const char *name, size_t len, struct sh_fields *val, bool append,
           int line, int col);
/* Expands the raw word t[0..k) into fields (split: unquoted expansions split on blanks;
 * else the word stays one field, as an assignment's value). */
int sh_expand(struct sh *s, const char *t, size_t k, int line, int col, bool split,
              struct sh_fields *out);
/* A word expanded to one string (an assignment's value, a default, arithmetic); *str is the
 * caller's to free, why says why some of it is not known ("" when all is). */
int sh_expand_string(struct sh *s, const char *t, size_t k, int line, int col, char **str,
                     char *why, size_t whyn);

/* ---- model/launch_shell_cond.c ---- */
/* The condition of an if/elif, tokens [a, b): decided, or RUN_UNKNOWN. */
int sh_condition(struct sh *s, int a, int b, enum sh_run *out);

#endif
