/* model/seqlen_json.c: the forms of a config's model.seq_length beside one number (model/
 * seqlen.h, docs/design.md "Input-aware checkpointing"): a distribution {"values", "weights"} or
 * the path of a lengths file, and model.max_position_embeddings, the longest length allowed. */
#include <config.h>
#include "model/seqlen.h"

#include <cjson/cJSON.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/config.h"
#include "util/err.h"
#include "util/json.h"

/* {"values": [512, 1024], "weights": [3, 1]} (weights optional: equal). */
static int seqlen_json_dist(struct json_doc *d, const struct json_value *sm, int limit,
                            struct seqlen_spec *sp)
{
    static const char *const keys[2] = {"values", "weights"};
    struct json_value f[2], at;
    TRY(json_fields(d, sm, keys, 2, f));
    if (f[0].item == NULL)
        return json_fail(d, sm,
                         "a distribution needs \"values\" (lengths in tokens) and may have "
                         "\"weights\"");
    int count = cJSON_GetArraySize(f[0].item);
    if (!cJSON_IsArray(f[0].item) || count < 1 || count > SEQLEN_MAX_VALUES)
        return json_fail(d, &f[0], "expected an array of 1 to %d lengths", SEQLEN_MAX_VALUES);
    if (f[1].item != NULL &&
        (!cJSON_IsArray(f[1].item) || cJSON_GetArraySize(f[1].item) != count))
        return json_fail(d, &f[1], "expected an array of %d weights, one per value", count);
    double total = 0;
    for (int i = 0; i < count; i++) {
        double v, w = 1;
        const cJSON *vi = cJSON_GetArrayItem(f[0].item, i);
        at = f[0];
        snprintf(at.path, sizeof at.path, "%.*s[%d]", JSON_PATH_LEN - 16, f[0].path, i);
        if (!json_number(vi, &v) || !isfinite(v) || v != floor(v) || v < 1)
            return json_fail(d, &at, "expected a whole number of tokens >= 1");
        if (v > limit)
            return json_fail(d, &at,
                             "length %.15g is beyond the model's largest position (%d tokens: "
                             "the model's seq_length or max_position_embeddings)",
                             v, limit);
        if (f[1].item != NULL) {
            at = f[1];
            snprintf(at.path, sizeof at.path, "%.*s[%d]", JSON_PATH_LEN - 16, f[1].path, i);
            if (!json_number(cJSON_GetArrayItem(f[1].item, i), &w) || !(w >= 0) ||
                w > SEQLEN_MAX_WEIGHT)
                return json_fail(d, &at, "expected a weight from 0 to %g", SEQLEN_MAX_WEIGHT);
        }
        sp->values[i] = (int)v;
        sp->weights[i] = w;
        total += w;
    }
    if (!(total > 0 && isfinite(total)))
        return json_fail(d, &f[1], "the weights must not all be 0");
    sp->kind = SEQLEN_DIST;
    sp->n = count;
    sp->path[0] = '\0';
    return MT_OK;
}

/* "lengths.txt": a lengths file, relative to the config file's folder. */
static int seqlen_json_file(struct json_doc *d, const struct json_value *sm, int limit,
                            struct seqlen_spec *sp, int *max_len)
{
    const char *given = sm->item->valuestring, *name = json_doc_name(d);
    char joined[4096], clip[64];
    const char *slash = strrchr(name, '/');
    if (given[0] == '\0')
        return json_fail(d, sm,
                         "expected a number, a distribution {\"values\": [...]} or the path of "
                         "a lengths file");
    if (given[0] != '/' && slash != NULL)
        snprintf(joined, sizeof joined, "%.*s/%s", (int)(slash - name), name, given);
    else
        snprintf(joined, sizeof joined, "%s", given);
    char *resolved = realpath(joined, NULL);
    struct seqlen_sample smp;
    struct mt_err pe;
    int rc = seqlen_read_file(resolved != NULL ? resolved : joined, limit, &smp, &pe);
    if (rc != MT_OK) {
        free(resolved);
        /* a file the config names but that cannot be read is bad input too (exit 2) */
        return json_fail(d, sm, "lengths file '%s': %s", json_clip(given, clip, sizeof clip),
                         pe.msg);
    }
    *max_len = smp.max_len;
    seqlen_sample_fini(&smp);
    const char *keep = resolved != NULL ? resolved : joined;
    if (strlen(keep) >= sizeof sp->path) {
        rc = json_fail(d, sm, "path longer than %zu bytes", sizeof sp->path - 1);
    } else {
        sp->kind = SEQLEN_FILE;
        sp->n = 0;
        memcpy(sp->path, keep, strlen(keep) + 1); /* fits: checked above */
    }
    free(resolved);
    return rc;
}

int seqlen_from_json(struct json_doc *d, const struct json_value *model, struct config *c)
{
    if (!cJSON_IsObject(model->item) || config_hf_detect(model->item))
        return MT_OK;
    size_t n;
    struct json_value *m = json_members(d, model, &n);
    const struct json_value *seq = NULL, *maxpos = NULL;
    for (size_t k = 0; k < n; k++) {
        const char *key = m[k].item->string ? m[k].item->string : "";
        if (strcmp(key, "seq_length") == 0)
            seq = &m[k];
        else if (strcmp(key, "max_position_embeddings") == 0)
            maxpos = &m[k];
    }
    struct seqlen_spec sp = c->seqlen;
    int rc = MT_OK, max_len = 0;
    if (maxpos != NULL)
        rc = json_int(d, maxpos, 1, INT_MAX, &sp.max_positions);
    int limit = sp.max_positions > 0 ? sp.max_positions : c->model.seq_length;
    if (rc == MT_OK && seq != NULL && cJSON_IsObject(seq->item)) {
        rc = seqlen_json_dist(d, seq, limit, &sp);
        for (int i = 0; rc == MT_OK && i < sp.n; i++)
            if (sp.weights[i] > 0 && sp.values[i] > max_len)
                max_len = sp.values[i];
    } else if (rc == MT_OK && seq != NULL && cJSON_IsString(seq->item)) {
        rc = seqlen_json_file(d, seq, limit, &sp, &max_len);
    } else if (rc == MT_OK && seq != NULL) {
        sp.kind = SEQLEN_FIXED; /* a number, read with the model's other fields */
    }
    if (rc == MT_OK && sp.kind != SEQLEN_FIXED) {
        sp.max_positions = limit;
        c->model.seq_length = max_len;
    }
    if (rc == MT_OK)
        c->seqlen = sp;
    free(m);
    return rc;
}
