/* model/launch_moe.c: Megatron-LM's --moe-layer-freq both ways (model/launch_internal.h).
 *
 * Megatron (megatron/training/arguments.py, moe_freq_type): an integer N puts an expert layer
 * at every layer i with i % N == 0; else a Python expression of a list, one 0 (dense) or 1
 * (MoE) a layer, e.g. "([0]*3+[1]*58)" (DeepSeek-V3's three dense layers first), which
 * Megatron evaluates and checks against --num-layers. The cost model's pattern is
 * model/moe.h's: block i is MoE when i >= first_k_dense and (i + 1) % layer_freq == 0. A list
 * is read when some (first_k_dense, layer_freq) gives it; the integer form when N is 1. */
#include <config.h>
#include "model/launch_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/config.h"

struct freq_parse {
    const char *p;
    int *out, n, max;
    const char *why;
};

static void fp_space(struct freq_parse *f)
{
    while (isspace((unsigned char)*f->p))
        f->p++;
}

static bool fp_int(struct freq_parse *f, long *v)
{
    fp_space(f);
    char *end;
    if (!isdigit((unsigned char)*f->p))
        return false;
    *v = strtol(f->p, &end, 10);
    f->p = end;
    return *v >= 0 && *v <= CONFIG_MAX_LAYERS;
}

static bool fp_sum(struct freq_parse *f);

/* a term: "[a, b, ...]" or "(sum)", times an optional "*n" */
static bool fp_term(struct freq_parse *f)
{
    fp_space(f);
    int start = f->n;
    if (*f->p == '(') {
        f->p++;
        if (!fp_sum(f))
            return false;
        fp_space(f);
        if (*f->p++ != ')')
            return (f->why = "an unclosed '('"), false;
    } else if (*f->p == '[') {
        f->p++;
        for (;;) {
            long v;
            if (!fp_int(f, &v) || v > 1)
                return (f->why = "a list element that is not 0 or 1"), false;
            if (f->n >= f->max)
                return (f->why = "more layers than the model has"), false;
            f->out[f->n++] = (int)v;
            fp_space(f);
            if (*f->p == ',') {
                f->p++;
                continue;
            }
            if (*f->p++ != ']')
                return (f->why = "an unclosed '['"), false;
            break;
        }
    } else {
        return (f->why = "expected '[' or '('"), false;
    }
    fp_space(f);
    if (*f->p != '*')
        return true;
    f->p++;
    long times;
    if (!fp_int(f, &times))
        return (f->why = "'*' without a count"), false;
    int len = f->n - start;
    if (times == 0)
        f->n = start;
    for (long t = 1; t < times; t++) {
        if (f->n + len > f->max)
            return (f->why = "more layers than the model has"), false;
        memcpy(f->out + f->n, f->out + start, (size_t)len * sizeof *f->out);
        f->n += len;
    }
    return true;
}

static bool fp_sum(struct freq_parse *f)
{
    if (!fp_term(f))
        return false;
    for (;;) {
        fp_space(f);
        if (*f->p != '+')
            return true;
        f->p++;
        if (!fp_term(f))
            return false;
    }
}

static bool pattern_is(const int *moe, int layers, int first_k, int freq)
{
    for (int i = 0; i < layers; i++)
        if (moe[i] != (i >= first_k && (i + 1) % freq == 0))
            return false;
    return true;
}

int launch_moe_layer_freq(const char *s, int layers, int *first_k, int *freq, char *why,
                          size_t n)
{
    char *end;
    long v = strtol(s, &end, 10);
    while (isspace((unsigned char)*s))
        s++;
    if (isdigit((unsigned char)*s) && *end == '\0') {
        if (v != 1) {
            snprintf(why, n, "an expert layer every %ld-th from layer 0 (Megatron's i %% %ld == "
                             "0) is not the cost model's pattern: give it as a list", v, v);
            return -1;
        }
        *first_k = 0;
        *freq = 1;
        return 0;
    }
    if (layers < 1 || layers > CONFIG_MAX_LAYERS) {
        snprintf(why, n, "the layer count is not known");
        return -1;
    }
    int *moe = calloc((size_t)layers, sizeof *moe);
    if (moe == NULL) {
        snprintf(why, n, "out of memory");
        return -1;
    }
    struct freq_parse f = {.p = s, .out = moe, .max = layers};
    bool ok = fp_sum(&f);
    fp_space(&f);
    if (ok && *f.p != '\0')
        ok = false, f.why = "text after the list";
    int rc = -1;
    if (!ok) {
        snprintf(why, n, "not a list expression Megatron takes (%s)", f.why ? f.why : "?");
    } else if (f.n != layers) {
        snprintf(why, n, "%d entries for %d layers (Megatron requires one a layer)", f.n, layers);
    } else {
        for (int q = 1; q <= layers && rc != 0; q++)
            for (int k = 0; k < layers && rc != 0; k++)
                if (pattern_is(moe, layers, k, q)) {
                    *first_k = k;
                    *freq = q;
                    rc = 0;
                }
        if (rc != 0)
            snprintf(why, n, "a layer pattern other than the first k dense and then every N-th "
                             "MoE (model/moe.h) is not modelled");
    }
    free(moe);
    return rc;
}

void launch_moe_layer_freq_text(int first_k, int freq, int layers, char *buf, size_t n)
{
    if (freq <= 1) { /* "([0]*k+[1]*(L-k))", Megatron's examples' form */
        if (first_k == 0)
            snprintf(buf, n, "1");
        else
            snprintf(buf, n, "([0]*%d+[1]*%d)", first_k, layers - first_k);
        return;
    }
    /* every freq-th from first_k: the dense prefix, then repeats of [0]*(freq-1)+[1] where
     * they line up, the rest one by one */
    size_t at = (size_t)snprintf(buf, n, "[");
    for (int i = 0; i < layers && at + 4 < n; i++)
        at += (size_t)snprintf(buf + at, n - at, "%s%d", i ? "," : "",
                               i >= first_k && (i + 1) % freq == 0);
    if (at + 2 <= n)
        snprintf(buf + at, n - at, "]");
}
