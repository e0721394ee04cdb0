/* model/profile_json.c: calibration files (format in model/profile.h). Written by
 * `mario-tui profile`, read by --calibration and by configs and plans that embed one. Every
 * key is checked and every number must be finite, so a hand-edited calibration cannot feed
 * the simulator a NaN; util/json.h reads the text, so every error names file:line:col and
 * the path ("fits.fw_us.b"), also for a calibration inside a config or a plan. */
#include <config.h>
#include "model/profile.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/config.h"
#include "model/microcal.h"
#include "util/err.h"
#include "util/json.h"
#include "util/str.h"
#include "util/xalloc.h"

#define PROFILE_FORMAT "mario-calibration"
#define PROFILE_VERSION 1
/* A fit's terms are within +-1e15 (us: 30 years; bytes: a petabyte), so that scaled to any
 * shape a config allows they stay finite in the simulator (a term of 1e306 overflowed). */
#define PROFILE_MAX_TERM 1e15

struct profile_fit_key {
    const char *key;
    size_t off;
};

static const struct profile_fit_key profile_fits[] = {
    {"fw_us", offsetof(struct profile, fw)},
    {"bw_us", offsetof(struct profile, bw)},
    {"rc_us", offsetof(struct profile, rc)},
    {"os_us", offsetof(struct profile, os)},
    {"ar_us", offsetof(struct profile, ar)},
    {"p2p_us", offsetof(struct profile, p2p)},
    {"act_bytes", offsetof(struct profile, act)},
    {"ckpt_bytes", offsetof(struct profile, ckpt)},
    {"static_bytes", offsetof(struct profile, static_bytes)},
    {"fw_work_bytes", offsetof(struct profile, fw_work_bytes)},
    {"cfw_peak_bytes", offsetof(struct profile, cfw_peak_bytes)},
    {"bw_work_bytes", offsetof(struct profile, bw_work_bytes)},
    {"msg_bytes", offsetof(struct profile, msg_bytes)},
    {"b_us", offsetof(struct profile, b)},
    {"w_us", offsetof(struct profile, w)},
    {"w_keep_bytes", offsetof(struct profile, w_keep_bytes)},
    {"p2p_shared_us", offsetof(struct profile, p2p_shared)},
    {"recv_shared_us", offsetof(struct profile, recv_shared)},
    {"gap_shared_us", offsetof(struct profile, gap_shared)},
};
#define PROFILE_NFITS (sizeof profile_fits / sizeof profile_fits[0])

static const char *const shape_keys[] = {"hidden_size", "num_attention_heads", "seq_length",
                                         "vocab_size",  "ffn_hidden_size",     "micro_batch_size",
                                         "tp"};

static int *profile_shape_field(struct profile_shape *s, int i)
{
    int *f[] = {&s->hidden_size,     &s->num_attention_heads, &s->seq_length, &s->vocab_size,
                &s->ffn_hidden_size, &s->micro_batch_size,    &s->tp};
    return f[i];
}

/* A term of a fit: a finite number within +-PROFILE_MAX_TERM (absent: 0). */
static int profile_term(struct json_doc *d, const struct json_value *v, double *out)
{
    if (v->item == NULL)
        return MT_OK;
    TRY(json_double(d, v, out));
    if (fabs(*out) > PROFILE_MAX_TERM)
        return json_fail(d, v, "%g is out of range (at most %g in magnitude)", *out,
                         PROFILE_MAX_TERM);
    return MT_OK;
}

static int profile_fit_read(struct json_doc *d, const struct json_value *fv, struct profile_fit *f)
{
    enum { F_A, F_B, F_EMBED, F_HEAD, F_R2, F_POINTS, F__COUNT };
    static const char *const keys[F__COUNT] = {"a", "b", "embed", "head", "r2", "points"};
    struct json_value k[F__COUNT];
    memset(f, 0, sizeof *f);
    TRY(json_fields(d, fv, keys, F__COUNT, k));
    double *v[] = {&f->a, &f->b, &f->embed, &f->head, &f->r2};
    for (int i = F_A; i <= F_R2; i++)
        TRY(profile_term(d, &k[i], v[i]));
    if (k[F_POINTS].item != NULL)
        TRY(json_int(d, &k[F_POINTS], 0, 1000000000, &f->points));
    return MT_OK;
}

/* A string field kept for the record (device, backend, created): absent leaves "". */
static int profile_text(struct json_doc *d, const struct json_value *v, char *dst, size_t n)
{
    const char *s;
    if (v->item == NULL)
        return MT_OK;
    TRY(json_string(d, v, &s));
    snprintf(dst, n, "%s", s);
    return MT_OK;
}

static int profile_shape_read(struct json_doc *d, const struct json_value *sv,
                              struct profile_shape *out)
{
    static const char *const skeys[8] = {
        "hidden_size", "num_attention_heads", "seq_length", "vocab_size",
        "ffn_hidden_size", "micro_batch_size", "tp", "type"};
    struct json_value k[8];
    TRY(json_fields(d, sv, skeys, 8, k));
    out->arch = ARCH_GPT3;
    if (k[7].item != NULL) {
        static const char *const arch[] = {"GPT3", "LLaMA2", "custom"};
        static const enum model_arch ids[] = {ARCH_GPT3, ARCH_LLAMA2, ARCH_CUSTOM};
        int a;
        TRY(json_enum(d, &k[7], arch, 3, "GPT3, LLaMA2 or custom", &a));
        out->arch = ids[a];
    }
    for (int i = 0; i < 7; i++) {
        if (k[i].item == NULL)
            return json_fail(d, &k[i], "missing (expected a positive integer)");
        TRY(json_int(d, &k[i], 1, 1000000000, profile_shape_field(out, i)));
    }
    return MT_OK;
}

int profile_from_json(struct json_doc *d, const struct json_value *obj, struct profile *out)
{
    enum { K_FORMAT, K_VERSION, K_DEVICE, K_BACKEND, K_CREATED, K_SHAPE, K_FITS, K_OBS, K_NOTE,
           K_CORES, K_MICRO, K__COUNT };
    static const char *const keys[K__COUNT] = {"format", "version", "device",       "backend",
                                               "created", "shape",  "fits", "observations",
                                               "note",    "cores",  "micro"};
    struct json_value k[K__COUNT];
    struct profile p;
    memset(&p, 0, sizeof p);
    if (!cJSON_IsObject(obj->item))
        return json_type_fail(d, obj, "a JSON object (a mario-calibration)");
    TRY(json_fields(d, obj, keys, K__COUNT, k));
    const cJSON *fmt = k[K_FORMAT].item;
    if (!cJSON_IsString(fmt) || strcmp(fmt->valuestring, PROFILE_FORMAT) != 0)
        return json_fail(d, &k[K_FORMAT], "expected \"%s\" (a file from `mario-tui profile`)",
                         PROFILE_FORMAT);
    double ver;
    if (!json_number(k[K_VERSION].item, &ver) || ver != PROFILE_VERSION)
        return json_fail(d, &k[K_VERSION], "this build reads version %d", PROFILE_VERSION);
    TRY(profile_text(d, &k[K_DEVICE], p.device, sizeof p.device));
    TRY(profile_text(d, &k[K_BACKEND], p.backend, sizeof p.backend));
    TRY(profile_text(d, &k[K_CREATED], p.created, sizeof p.created));
    if (k[K_CORES].item != NULL)
        TRY(json_int(d, &k[K_CORES], 0, 1 << 20, &p.cores));
    if (k[K_MICRO].item != NULL) {
        TRY(microcal_from_json(d, &k[K_MICRO], &p.micro));
        if (p.micro == NULL && k[K_SHAPE].item == NULL && k[K_FITS].item == NULL)
            return json_fail(d, &k[K_MICRO], "no rows (and no fits): nothing to calibrate with");
        if (k[K_SHAPE].item == NULL && k[K_FITS].item == NULL) { /* the tables alone */
            *out = p;
            return MT_OK;
        }
    }
    if (k[K_SHAPE].item == NULL)
        return json_fail(d, &k[K_SHAPE], "missing (expected an object)");
    TRY(profile_shape_read(d, &k[K_SHAPE], &p.shape));
    if (k[K_FITS].item == NULL)
        return json_fail(d, &k[K_FITS], "missing (expected an object)");
    const char *fkeys[PROFILE_NFITS];
    for (size_t i = 0; i < PROFILE_NFITS; i++)
        fkeys[i] = profile_fits[i].key;
    struct json_value fits[PROFILE_NFITS];
    TRY(json_fields(d, &k[K_FITS], fkeys, PROFILE_NFITS, fits));
    for (size_t i = 0; i < PROFILE_NFITS; i++) {
        if (fits[i].item == NULL)
            continue;
        struct profile_fit *f = (struct profile_fit *)((char *)&p + profile_fits[i].off);
        TRY(profile_fit_read(d, &fits[i], f));
    }
    p.enabled = true;
    *out = p;
    return MT_OK;
}

int profile_load_string(const char *text, size_t len, const char *name, struct profile *out,
                        struct mt_err *e)
{
    struct json_doc *d;
    TRY(json_doc_parse(text, len, name, MT_EINVAL, &d, e));
    struct json_value root;
    json_doc_root(d, &root);
    int rc = profile_from_json(d, &root, out);
    json_doc_free(d);
    return rc;
}

int profile_load(const char *path, struct profile *out, struct mt_err *e)
{
    char *text;
    size_t len;
    TRY(str_read_file(path, PROFILE_MAX_BYTES, &text, &len, e));
    int rc = profile_load_string(text, len, path, out, e);
    free(text);
    return rc;
}

cJSON *profile_to_cjson(const struct profile *p)
{
    cJSON *o = cJSON_CreateObject();
    if (o == NULL)
        return NULL;
    cJSON_AddStringToObject(o, "format", PROFILE_FORMAT);
    cJSON_AddNumberToObject(o, "version", PROFILE_VERSION);
    cJSON_AddStringToObject(o, "device", p->device);
    cJSON_AddStringToObject(o, "backend", p->backend);
    cJSON_AddStringToObject(o, "created", p->created);
    if (p->cores > 0)
        cJSON_AddNumberToObject(o, "cores", p->cores);
    if (!p->enabled && p->micro != NULL) { /* the tables alone */
        cJSON_AddItemToObject(o, "micro", microcal_to_cjson(p->micro));
        return o;
    }
    cJSON *s = cJSON_AddObjectToObject(o, "shape");
    cJSON_AddStringToObject(s, "type", config_arch_name((enum model_arch)p->shape.arch));
    struct profile_shape shape = p->shape;
    for (int i = 0; i < 7; i++)
        cJSON_AddNumberToObject(s, shape_keys[i], *profile_shape_field(&shape, i));
    cJSON *fits = cJSON_AddObjectToObject(o, "fits");
    for (size_t i = 0; i < PROFILE_NFITS; i++) {
        const struct profile_fit *f =
            (const struct profile_fit *)((const char *)p + profile_fits[i].off);
        if (f->points == 0)
            continue;
        cJSON *j = cJSON_AddObjectToObject(fits, profile_fits[i].key);
        cJSON_AddNumberToObject(j, "a", f->a);
        cJSON_AddNumberToObject(j, "b", f->b);
        cJSON_AddNumberToObject(j, "embed", f->embed);
        cJSON_AddNumberToObject(j, "head", f->head);
        cJSON_AddNumberToObject(j, "r2", f->r2);
        cJSON_AddNumberToObject(j, "points", f->points);
    }
    if (p->micro != NULL)
        cJSON_AddItemToObject(o, "micro", microcal_to_cjson(p->micro));
    return o;
}

int profile_save(const char *path, const struct profile *p, cJSON *extra, struct mt_err *e)
{
    cJSON *o = profile_to_cjson(p);
    if (extra != NULL)
        cJSON_AddItemToObject(o, "observations", extra);
    char *text = cJSON_Print(o);
    cJSON_Delete(o);
    size_t n = strlen(text);
    char *buf = xmalloc(n + 2);
    memcpy(buf, text, n);
    buf[n] = '\n';
    buf[n + 1] = '\0';
    cJSON_free(text);
    int rc = str_write_file_atomic(path, buf, n + 1, e);
    free(buf);
    return rc;
}
