/* model/pp_layout.c: Megatron-LM's --pipeline-model-parallel-layout string, read and written.
 *
 * The grammar, restated from Megatron-LM's PipelineParallelLayerLayout.parse_str_to_list and
 * validate_layer_layout (megatron/core/transformer/pipeline_parallel_layer_layout.py) and
 * its user guide (docs/user-guide/features/pipeline_parallel_layout.md):
 *   layout  = item*            '|' between stages: "a|b|c" is three stages, "E||t|L" four
 *   item    = atom ['*' count] | '(' inner ')' '*' count
 *   inner   = (atom ['*' count])+      no parentheses inside (Megatron's regex takes one level)
 *   atom    = 'E' | 't' | 'm' | 'L' | '|'
 *   count   = digit+           0 allowed: "t*0" is nothing
 * Megatron first deletes every comma ("purely cosmetic"), then expands (…)*n, then x*n, then
 * maps each character to a layer type: so a comma may sit anywhere, even inside a count
 * ("t*1,2" is twelve t's), and anything else — a space, a ')' with no count after it, a count
 * after a count — survives to the last step and is refused there. We read the same strings
 * in one pass, with the column (1-based, of the given string) of what is wrong, and refuse on
 * purpose four kinds that Megatron's text substitution lets through with a meaning no one
 * writes (tests/unit/test_stage_split.c checks 200,000 random strings against a restatement
 * of Megatron's parser: where both read one, the stages agree; where only Megatron does, it
 * is one of these):
 *   - a count after a group's count: "(t|)*2*3" is "t|t|||" there (x*n repeats the last
 *     character of the expansion); "t*2*3" Megatron refuses too;
 *   - any character repeated 0 times vanishes there, one that is no symbol too ("E3*0L",
 *     "E(*0L" read as "EL"); we refuse what is no symbol wherever it stands;
 *   - a group whose text opens with '*' or a digit joins the character before each copy:
 *     "Et(*2t)*2L" is "Et*2t*2tL", "Et*2(0)*2L" is "Et*200L";
 *   - Megatron asks only that the first layer of the flattened layout be E and the last L
 *     (and each given once); but it builds the embedding on the first virtual stage and the
 *     loss on the last whatever the string says (pre_process and post_process are the first
 *     and last virtual stage, megatron/training/models/gpt.py), so "|Et|tL" or "Et|tL|"
 *     would describe a model Megatron does not build: we ask E to open the first stage and L
 *     to close the last.
 * MTP layers ('m') are refused naming issue 38 (the cost model has none).
 *
 * Expansion is in counts, not characters: a run of t's adds to its stage's count, a group
 * without '|', E or L multiplies its t's, and a group with '|' is replayed only while the
 * stages stay under PP_LAYOUT_MAX_STAGES; so no input, however its counts multiply, costs more
 * than its length times that limit. */
#include <config.h>
#include "model/stage_split.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/config.h"
#include "util/err.h"
#include "util/xalloc.h"

#define PP_LAYOUT_MAX_COUNT 1000000000L /* larger counts are refused before any arithmetic */

/* One parsed atom with its count, kept while a group is read. */
struct pp_atom {
    char sym;  /* E t L | */
    int col;   /* 1-based column of the symbol */
    long count;
};

struct pp_build {
    struct pp_layout *out;
    int cap;       /* stages allocated */
    bool started;  /* something (a layer, E, L or '|') has been placed */
    int embed_col; /* where E was, 0 = none yet */
    int loss_col;
    struct mt_err *e;
};

static int pp_add_stages(struct pp_build *b, long n, int col)
{
    struct pp_layout *l = b->out;
    if (n > PP_LAYOUT_MAX_STAGES - l->num_stages)
        return err_set(b->e, MT_EINVAL, "column %d: over %d stages", col, PP_LAYOUT_MAX_STAGES);
    int want = l->num_stages + (int)n;
    if (want > b->cap) {
        int cap = b->cap ? b->cap : 8;
        while (cap < want)
            cap = cap > PP_LAYOUT_MAX_STAGES / 2 ? PP_LAYOUT_MAX_STAGES : 2 * cap;
        l->layers = xreallocarray(l->layers, (size_t)cap, sizeof *l->layers);
        l->embed = xreallocarray(l->embed, (size_t)cap, sizeof *l->embed);
        l->loss = xreallocarray(l->loss, (size_t)cap, sizeof *l->loss);
        b->cap = cap;
    }
    for (int s = l->num_stages; s < want; s++) {
        l->layers[s] = 0;
        l->embed[s] = l->loss[s] = false;
    }
    l->num_stages = want;
    return MT_OK;
}

/* Places n copies of sym (read at column col) at the end of the layout. */
static int pp_place(struct pp_build *b, char sym, int col, long n)
{
    struct pp_layout *l = b->out;
    if (n == 0)
        return MT_OK;
    if (b->loss_col > 0)
        return err_set(b->e, MT_EINVAL,
                       "column %d: '%c' after the loss 'L' (column %d): L closes the last stage",
                       col, sym, b->loss_col);
    switch (sym) {
    case 'E':
        if (b->embed_col == col || n > 1)
            return err_set(b->e, MT_EINVAL,
                           "column %d: 'E' repeated: the embedding is given once", col);
        if (b->embed_col > 0)
            return err_set(b->e, MT_EINVAL,
                           "column %d: a second 'E' (the first at column %d): the embedding is "
                           "given once", col, b->embed_col);
        if (b->started)
            return err_set(b->e, MT_EINVAL,
                           "column %d: 'E' after a layer or '|': the embedding opens the first "
                           "stage (Megatron builds it there, before every layer)", col);
        b->embed_col = col;
        l->embed[l->num_stages - 1] = true;
        break;
    case 'L':
        if (n > 1)
            return err_set(b->e, MT_EINVAL, "column %d: 'L' repeated: the loss is given once",
                           col);
        b->loss_col = col;
        l->loss[l->num_stages - 1] = true;
        break;
    case 't':
        if (n > CONFIG_MAX_LAYERS - l->num_layers)
            return err_set(b->e, MT_EINVAL, "column %d: over %d layers", col, CONFIG_MAX_LAYERS);
        l->layers[l->num_stages - 1] += (int)n;
        l->num_layers += (int)n;
        break;
    default: /* '|' */
        TRY(pp_add_stages(b, n, col));
        break;
    }
    b->started = true;
    return MT_OK;
}

static bool pp_is_atom(char ch)
{
    return ch == 'E' || ch == 't' || ch == 'L' || ch == '|';
}

/* The index of the next character that is not a comma, from i. */
static size_t pp_skip(const char *s, size_t i)
{
    while (s[i] == ',')
        i++;
    return i;
}

/* What a character that cannot stand at column col is. */
static int pp_bad_char(const char *s, size_t i, bool in_group, struct mt_err *e)
{
    int col = (int)i + 1;
    char ch = s[i];
    if (ch == 'm')
        return err_set(e, MT_EINVAL,
                       "column %d: 'm', a multi-token-prediction layer: MTP is not modelled yet "
                       "(issue 38)", col);
    if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r')
        return err_set(e, MT_EINVAL,
                       "column %d: whitespace: Megatron's parser takes none (commas are its "
                       "cosmetic separator)", col);
    if (ch >= '0' && ch <= '9')
        return err_set(e, MT_EINVAL, "column %d: '%c': a count follows '*' (t*3)", col, ch);
    if (ch == '*')
        return err_set(e, MT_EINVAL, "column %d: '*' repeats nothing", col);
    if (ch == '(' && in_group)
        return err_set(e, MT_EINVAL,
                       "column %d: '(' inside '(...)': Megatron expands one level of "
                       "parentheses", col);
    if (ch == ')')
        return err_set(e, MT_EINVAL, "column %d: ')' without '('", col);
    if (ch > ' ' && ch < 127)
        return err_set(e, MT_EINVAL,
                       "column %d: '%c' is not a layout symbol: E (embedding), t (transformer "
                       "layer), m (MTP), L (loss), '|' between stages, x*n, (...)*n, commas",
                       col, ch);
    return err_set(e, MT_EINVAL, "column %d: byte 0x%02x is not a layout symbol", col,
                   (unsigned char)ch);
}

/* A count after the '*' at s[*i] (what), leaving *i after it. what names the repeated item in
 * the message ("'t*' needs a count"). */
static int pp_count(const char *s, size_t *i, const char *what, long *out, struct mt_err *e)
{
    int star_col = (int)*i + 1;
    size_t j = pp_skip(s, *i + 1);
    if (s[j] < '0' || s[j] > '9')
        return err_set(e, MT_EINVAL, "column %d: '%s*' needs a count", star_col, what);
    long v = 0;
    while (s[j] >= '0' && s[j] <= '9') {
        v = 10 * v + (s[j] - '0');
        if (v > PP_LAYOUT_MAX_COUNT)
            return err_set(e, MT_EINVAL, "column %d: a count over %ld", star_col,
                           PP_LAYOUT_MAX_COUNT);
        j = pp_skip(s, j + 1);
    }
    if (s[j] == '*')
        return err_set(e, MT_EINVAL,
                       "column %d: '*' after a count: give one count (t*6, not t*2*3)",
                       (int)j + 1);
    *i = j;
    *out = v;
    return MT_OK;
}

/* An atom at s[*i] and its optional count. */
static int pp_atom_read(const char *s, size_t *i, struct pp_atom *a, struct mt_err *e)
{
    char what[2] = {s[*i], '\0'};
    a->sym = s[*i];
    a->col = (int)*i + 1;
    a->count = 1;
    size_t j = pp_skip(s, *i + 1);
    if (s[j] == '*') {
        TRY(pp_count(s, &j, what, &a->count, e));
    }
    *i = j;
    return MT_OK;
}

/* The group opening at s[*i] == '(': its atoms, its count, and its expansion placed. */
static int pp_group(const char *s, size_t *i, struct pp_build *b)
{
    size_t open = *i, j = pp_skip(s, *i + 1);
    size_t len = strlen(s), n = 0;
    struct pp_atom *atoms = xcalloc(len + 1, sizeof *atoms); /* at most one per character */
    int rc = MT_OK;
    while (rc == MT_OK && s[j] != ')') {
        if (s[j] == '\0')
            rc = err_set(b->e, MT_EINVAL, "column %d: '(' is not closed", (int)open + 1);
        else if (!pp_is_atom(s[j]))
            rc = pp_bad_char(s, j, true, b->e);
        else
            rc = pp_atom_read(s, &j, &atoms[n++], b->e);
    }
    long k = 0;
    if (rc == MT_OK && n == 0)
        rc = err_set(b->e, MT_EINVAL, "column %d: '()' holds nothing", (int)open + 1);
    if (rc == MT_OK) {
        size_t close = j;
        j = pp_skip(s, j + 1);
        if (s[j] != '*')
            rc = err_set(b->e, MT_EINVAL, "column %d: '(...)' needs a count: (...)*n",
                         (int)close + 1);
        else
            rc = pp_count(s, &j, "(...)", &k, b->e);
    }
    /* A group of t's alone is its t's times k; one with '|' adds stages each time, which
     * pp_place bounds; one with E or L fails on its second copy. */
    long ts = 0, bars = 0;
    bool ends = false;
    for (size_t a = 0; rc == MT_OK && a < n; a++) {
        if (atoms[a].sym == 't')
            ts += atoms[a].count;
        else if (atoms[a].sym == '|')
            bars += atoms[a].count;
        else
            ends = ends || atoms[a].count > 0;
        if (ts > CONFIG_MAX_LAYERS || bars > PP_LAYOUT_MAX_STAGES)
            rc = err_set(b->e, MT_EINVAL, "column %d: the group is over %d %s", (int)open + 1,
                         ts > CONFIG_MAX_LAYERS ? CONFIG_MAX_LAYERS : PP_LAYOUT_MAX_STAGES,
                         ts > CONFIG_MAX_LAYERS ? "layers" : "stages");
    }
    if (rc == MT_OK && bars == 0 && !ends) {
        if (ts > 0 && k > CONFIG_MAX_LAYERS / ts)
            rc = err_set(b->e, MT_EINVAL, "column %d: over %d layers", (int)open + 1,
                         CONFIG_MAX_LAYERS);
        else
            rc = pp_place(b, 't', atoms[0].col, ts * k);
    } else {
        if (rc == MT_OK && bars > 0 && k > PP_LAYOUT_MAX_STAGES / bars)
            rc = err_set(b->e, MT_EINVAL, "column %d: over %d stages", (int)open + 1,
                         PP_LAYOUT_MAX_STAGES);
        for (long r = 0; rc == MT_OK && r < k; r++)
            for (size_t a = 0; rc == MT_OK && a < n; a++)
                rc = pp_place(b, atoms[a].sym, atoms[a].col, atoms[a].count);
    }
    free(atoms);
    *i = j;
    return rc;
}

void pp_layout_fini(struct pp_layout *l)
{
    free(l->layers);
    free(l->embed);
    free(l->loss);
    memset(l, 0, sizeof *l);
}

int pp_layout_parse(const char *s, struct pp_layout *out, struct mt_err *e)
{
    memset(out, 0, sizeof *out);
    struct pp_build b = {.out = out, .e = e};
    int rc = pp_add_stages(&b, 1, 1); /* the first stage, open before any '|' */
    size_t i = 0;
    while (rc == MT_OK && s[i = pp_skip(s, i)] != '\0') {
        if (s[i] == '(') {
            rc = pp_group(s, &i, &b);
        } else if (pp_is_atom(s[i])) {
            struct pp_atom a;
            rc = pp_atom_read(s, &i, &a, e);
            if (rc == MT_OK)
                rc = pp_place(&b, a.sym, a.col, a.count);
        } else {
            rc = pp_bad_char(s, i, false, e);
        }
    }
    if (rc == MT_OK && b.embed_col == 0)
        rc = err_set(e, MT_EINVAL,
                     "column 1: no 'E': the embedding opens the first stage (Megatron: \"The "
                     "first layer must be embedding\")");
    if (rc == MT_OK && b.loss_col == 0)
        rc = err_set(e, MT_EINVAL,
                     "column %d: no 'L': the loss closes the last stage (Megatron: \"The last "
                     "layer must be loss\")", (int)strlen(s) + 1);
    if (rc != MT_OK)
        pp_layout_fini(out);
    return rc;
}

/* ---- writing ------------------------------------------------------------------------------ */

struct pp_out {
    char *buf;
    size_t n, len; /* len may pass n: the text that did not fit is counted, not written */
};

static void pp_puts(struct pp_out *o, const char *s)
{
    for (; *s; s++, o->len++)
        if (o->len + 1 < o->n)
            o->buf[o->len] = *s;
}

/* One stage's text: E?, t or t*k, L? */
static void pp_stage_text(int layers, bool embed, bool loss, char *t, size_t n)
{
    char ts[24] = "";
    if (layers == 1)
        snprintf(ts, sizeof ts, "t");
    else if (layers > 1)
        snprintf(ts, sizeof ts, "t*%d", layers);
    snprintf(t, n, "%s%s%s", embed ? "E" : "", ts, loss ? "L" : "");
}

static bool pp_same(int a, int b, const int *layers, const bool *embed, const bool *loss)
{
    return layers[a] == layers[b] && embed[a] == embed[b] && loss[a] == loss[b];
}

int pp_layout_write(int num_stages, const int *layers, const bool *embed, const bool *loss,
                    char *buf, size_t n, struct mt_err *e)
{
    struct pp_out o = {.buf = buf, .n = n};
    char text[40], rep[64];
    if (num_stages < 1)
        return err_set(e, MT_EINVAL, "layout: %d stages", num_stages);
    int s = 0;
    while (s < num_stages) {
        /* a run of equal stages before the last, written (S|)*k where that is shorter */
        int k = 1;
        while (s + k < num_stages - 1 && pp_same(s, s + k, layers, embed, loss))
            k++;
        if (s == num_stages - 1)
            k = 1;
        pp_stage_text(layers[s], embed[s], loss[s], text, sizeof text);
        size_t plain = (size_t)k * (strlen(text) + 1);
        snprintf(rep, sizeof rep, "(%s|)*%d", text, k);
        bool last = s + k == num_stages;
        if (k > 1 && strlen(rep) + 1 < plain) {
            pp_puts(&o, rep);
            pp_puts(&o, ","); /* Megatron's own habit: "(tt|)*29,m|L" */
        } else {
            for (int r = 0; r < k; r++) {
                pp_puts(&o, text);
                if (!(last && r == k - 1))
                    pp_puts(&o, "|");
            }
        }
        s += k;
    }
    if (o.len + 1 > n)
        return err_set(e, MT_EINVAL, "layout: %zu characters, over the %zu this takes", o.len,
                       n > 0 ? n - 1 : 0);
    buf[o.len] = '\0';
    return MT_OK;
}
