/* model/seqlen.c: variable sequence lengths (Mimose, arXiv:2209.02478 §2: "the input tensor
 * size per mini-batch is dynamic during the training process"). A config's model.seq_length
 * is one number, a distribution {"values": [...], "weights": [...]} or a file of per-batch
 * lengths (model/seqlen_json.c reads the forms into struct seqlen_spec); this file turns any
 * of them into a weighted sample, reads lengths files strictly (file:line:col for every bad
 * token), and defines the buckets plans are cached by.
 *
 * Invariants: every length of a sample is in [1, seqlen_limit] when it was read with that
 * limit; total_weight > 0; max_len is the longest length, which is what model.seq_length
 * holds for a distribution or a file (the conservative fixed length). */
#include <config.h>
#include "model/seqlen.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "model/config.h"
#include "util/err.h"
#include "util/str.h"
#include "util/xalloc.h"

int seqlen_limit(const struct config *c)
{
    return c->seqlen.max_positions > 0 ? c->seqlen.max_positions : c->model.seq_length;
}

void seqlen_sample_fini(struct seqlen_sample *s)
{
    if (s == NULL)
        return;
    free(s->len);
    free(s->weight);
    memset(s, 0, sizeof *s);
}

static void seqlen_sample_push(struct seqlen_sample *s, int *cap, int len, double w)
{
    if (s->n == *cap) {
        *cap = *cap ? 2 * *cap : 256;
        s->len = xreallocarray(s->len, (size_t)*cap, sizeof *s->len);
        s->weight = xreallocarray(s->weight, (size_t)*cap, sizeof *s->weight);
    }
    s->len[s->n] = len;
    s->weight[s->n] = w;
    s->n++;
    if (s->n == 1 || len < s->min_len)
        s->min_len = len;
    if (len > s->max_len)
        s->max_len = len;
    s->total_weight += w;
}

/* A token for a message: at most 24 bytes, control characters as '?'. */
static void seqlen_clip(const char *t, size_t n, char *buf, size_t size)
{
    size_t k = 0;
    for (; k < n && k + 1 < size && k < 24; k++)
        buf[k] = (unsigned char)t[k] < 32 || t[k] == 127 ? '?' : t[k];
    buf[k] = '\0';
    if (k < n && size > 4)
        memcpy(buf + (k > size - 4 ? size - 4 : k), "...", 4);
}

int seqlen_parse(const char *text, size_t len, const char *name, int limit,
                 struct seqlen_sample *out, struct mt_err *e)
{
    memset(out, 0, sizeof *out);
    struct seqlen_sample s = {0};
    int cap = 0;
    size_t line = 1, col = 1;
    size_t i = 0;
    while (i < len) {
        char ch = text[i];
        if (ch == '\n') {
            line++;
            col = 1;
            i++;
            continue;
        }
        if (isspace((unsigned char)ch) || ch == ',') {
            col++;
            i++;
            continue;
        }
        if (ch == '#') {
            while (i < len && text[i] != '\n')
                i++;
            continue;
        }
        size_t start = i;
        while (i < len && !isspace((unsigned char)text[i]) && text[i] != ',' && text[i] != '#')
            i++;
        size_t n = i - start;
        char tok[32];
        seqlen_clip(text + start, n, tok, sizeof tok);
        long v = 0;
        bool digits = n > 0;
        for (size_t k = 0; k < n && digits; k++) {
            if (!isdigit((unsigned char)text[start + k]))
                digits = false;
            else if (v <= INT_MAX)
                v = v * 10 + (text[start + k] - '0');
        }
        int rc = MT_OK;
        if (!digits)
            rc = err_set(e, MT_EINVAL,
                         "%s:%zu:%zu: '%s' is not a length (expected a whole number of tokens)",
                         name, line, col, tok);
        else if (v < 1)
            rc = err_set(e, MT_EINVAL, "%s:%zu:%zu: length 0: a batch has at least 1 token", name,
                         line, col);
        else if (v > INT_MAX || (limit > 0 && v > limit))
            rc = err_set(e, MT_EINVAL,
                         "%s:%zu:%zu: length %s is beyond the model's largest position (%d "
                         "tokens: model.seq_length or model.max_position_embeddings)",
                         name, line, col, tok, limit > 0 ? limit : INT_MAX);
        else if (s.n >= SEQLEN_MAX_BATCHES)
            rc = err_set(e, MT_EINVAL, "%s:%zu:%zu: more than %d lengths", name, line, col,
                         SEQLEN_MAX_BATCHES);
        if (rc != MT_OK) {
            seqlen_sample_fini(&s);
            return rc;
        }
        seqlen_sample_push(&s, &cap, (int)v, 1.0);
        col += n;
    }
    if (s.n == 0)
        return err_set(e, MT_EINVAL,
                       "%s: no lengths (the file is empty or holds only comments; expected one "
                       "whole number of tokens per batch)",
                       name);
    *out = s;
    return MT_OK;
}

int seqlen_read_file(const char *path, int limit, struct seqlen_sample *out, struct mt_err *e)
{
    memset(out, 0, sizeof *out);
    struct stat st;
    if (stat(path, &st) != 0)
        return err_set(e, MT_EIO, "%s: %s", path, strerror(errno));
    if (!S_ISREG(st.st_mode)) /* a FIFO or a device could block or never end */
        return err_set(e, MT_EIO, "%s: not a regular file (expected a lengths file)", path);
    char *buf;
    size_t n;
    TRY(str_read_file(path, SEQLEN_FILE_MAX_BYTES, &buf, &n, e));
    int rc = seqlen_parse(buf, n, path, limit, out, e);
    free(buf);
    return rc;
}

int seqlen_sample_load(const struct config *c, struct seqlen_sample *out, struct mt_err *e)
{
    memset(out, 0, sizeof *out);
    const struct seqlen_spec *sp = &c->seqlen;
    struct seqlen_sample s = {0};
    int cap = 0;
    switch (sp->kind) {
    case SEQLEN_FILE: return seqlen_read_file(sp->path, seqlen_limit(c), out, e);
    case SEQLEN_DIST:
        TRY(seqlen_validate(c, e));
        for (int i = 0; i < sp->n; i++)
            if (sp->weights[i] > 0)
                seqlen_sample_push(&s, &cap, sp->values[i], sp->weights[i]);
        break;
    default:
        if (c->model.seq_length < 1)
            return err_set(e, MT_EINVAL, "model.seq_length: must be >= 1 (got %d)",
                           c->model.seq_length);
        seqlen_sample_push(&s, &cap, c->model.seq_length, 1.0);
        break;
    }
    *out = s;
    return MT_OK;
}

int seqlen_config_use_file(struct config *c, const char *path, struct seqlen_sample *sample,
                           struct mt_err *e)
{
    if (sample != NULL)
        memset(sample, 0, sizeof *sample);
    int limit = seqlen_limit(c);
    struct seqlen_sample s;
    TRY(seqlen_read_file(path, limit, &s, e));
    if (strlen(path) >= sizeof c->seqlen.path) {
        seqlen_sample_fini(&s);
        return err_set(e, MT_EINVAL, "%s: path longer than %zu bytes", path,
                       sizeof c->seqlen.path - 1);
    }
    c->seqlen.kind = SEQLEN_FILE;
    c->seqlen.n = 0;
    snprintf(c->seqlen.path, sizeof c->seqlen.path, "%s", path);
    c->seqlen.max_positions = limit;
    c->model.seq_length = s.max_len;
    if (sample != NULL)
        *sample = s;
    else
        seqlen_sample_fini(&s);
    return MT_OK;
}

int seqlen_validate(const struct config *c, struct mt_err *e)
{
    const struct seqlen_spec *sp = &c->seqlen;
    int limit = seqlen_limit(c);
    if (sp->max_positions < 0)
        return err_set(e, MT_EINVAL, "model.max_position_embeddings: must be >= 1 (got %d)",
                       sp->max_positions);
    if (sp->max_positions > 0 && c->model.seq_length > sp->max_positions)
        return err_set(e, MT_EINVAL,
                       "model.seq_length: %d is beyond the model's largest position "
                       "(max_position_embeddings %d)",
                       c->model.seq_length, sp->max_positions);
    if (sp->kind == SEQLEN_FILE && sp->path[0] == '\0')
        return err_set(e, MT_EINVAL, "model.seq_length: a lengths file without a path");
    if (sp->kind != SEQLEN_DIST)
        return MT_OK;
    if (sp->n < 1 || sp->n > SEQLEN_MAX_VALUES)
        return err_set(e, MT_EINVAL, "model.seq_length.values: 1 to %d values (got %d)",
                       SEQLEN_MAX_VALUES, sp->n);
    double total = 0;
    for (int i = 0; i < sp->n; i++) {
        if (sp->values[i] < 1 || sp->values[i] > limit)
            return err_set(e, MT_EINVAL,
                           "model.seq_length.values[%d]: length %d is beyond the model's largest "
                           "position (%d tokens)",
                           i, sp->values[i], limit);
        if (!(sp->weights[i] >= 0) || sp->weights[i] > SEQLEN_MAX_WEIGHT)
            return err_set(e, MT_EINVAL,
                           "model.seq_length.weights[%d]: must be from 0 to %g (got %g)", i,
                           SEQLEN_MAX_WEIGHT, sp->weights[i]);
        total += sp->weights[i];
    }
    if (!(total > 0) || !isfinite(total))
        return err_set(e, MT_EINVAL, "model.seq_length.weights: must not all be 0");
    return MT_OK;
}

int seqlen_bucket(int s, int width)
{
    if (width < 1)
        width = 1;
    return s < 1 ? 1 : (int)(((long)s + width - 1) / width);
}

int seqlen_bucket_len(int bucket, int width, int max_len)
{
    long hi = (long)bucket * (width < 1 ? 1 : width);
    if (max_len > 0 && hi > max_len)
        hi = max_len;
    return hi > INT_MAX ? INT_MAX : (int)hi;
}

double seqlen_sample_mean(const struct seqlen_sample *s)
{
    double sum = 0;
    for (int i = 0; i < s->n; i++)
        sum += s->len[i] * s->weight[i];
    return s->total_weight > 0 ? sum / s->total_weight : 0;
}
