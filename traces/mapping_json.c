/* traces/mapping_json.c: reads mapping files (the format is in traces/mapping.h and
 * docs/traces.md). Every key is checked: an unknown one is an error that names it, so a typo
 * never silently maps nothing. util/json.h reads the text: errors name file:line:col and the
 * path ("rules[1].stage"). */
#include <config.h>
#include "traces/mapping.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/plan/plan.h"
#include "util/err.h"
#include "util/json.h"
#include "util/str.h"

#define MAPPING_FORMAT "mario-trace-map"

/* "$N" (N = 1..9): the capture group's number, else 0. */
static int mapping_json_group(const char *s)
{
    return s[0] == '$' && s[1] >= '1' && s[1] <= '9' && s[2] == '\0' ? s[1] - '0' : 0;
}

/* A field: an integer in [-1, 1000000] (-1 = none), or "$N" naming a capture group. */
static int mapping_json_field(struct json_doc *d, const struct json_value *v,
                              struct mapping_field *f)
{
    f->group = 0;
    f->value = -1;
    if (v->item == NULL)
        return MT_OK;
    if (cJSON_IsString(v->item)) {
        f->group = mapping_json_group(v->item->valuestring);
        if (f->group == 0)
            return json_fail(d, v, "expected an integer or \"$N\" (a capture group, 1-9)");
        return MT_OK;
    }
    return json_int(d, v, -1, 1000000, &f->value);
}

static int mapping_json_rule(struct json_doc *d, struct mapping *m, const struct json_value *r)
{
    enum { R_MATCH, R_CAT, R_OP, R_MB, R_PART, R_STAGE, R_DEVICE, R_STEP, R__COUNT };
    static const char *const keys[R__COUNT] = {"match", "cat",    "op",   "mb", "part",
                                               "stage", "device", "step"};
    struct json_value k[R__COUNT];
    TRY(json_fields(d, r, keys, R__COUNT, k));
    struct mapping_rule rule = {0};
    if (!cJSON_IsString(k[R_MATCH].item))
        return json_fail(d, &k[R_MATCH], "expected a regular expression (a string)");
    rule.match = k[R_MATCH].item->valuestring;
    if (k[R_CAT].item != NULL)
        TRY(json_string(d, &k[R_CAT], &rule.cat));
    const cJSON *op = k[R_OP].item;
    if (!cJSON_IsString(op))
        return json_fail(d, &k[R_OP],
                         "expected an op name (FW, CFW, RC, BW, B, W, SA, RA, SG, RG, AR, OS) "
                         "or \"$N\"");
    rule.op_group = mapping_json_group(op->valuestring);
    if (rule.op_group == 0) {
        char clip[40];
        rule.op = plan_op_parse(op->valuestring);
        if (rule.op < 0)
            return json_fail(d, &k[R_OP],
                             "unknown op '%s' (FW, CFW, RC, BW, B, W, SA, RA, SG, RG, AR, OS, "
                             "or \"$N\")",
                             json_clip(op->valuestring, clip, sizeof clip));
    }
    struct mapping_field *f[5] = {&rule.mb, &rule.part, &rule.stage, &rule.device, &rule.step};
    for (int i = 0; i < 5; i++)
        TRY(mapping_json_field(d, &k[R_MB + i], f[i]));
    struct mt_err ae;
    if (mapping_add(m, &rule, &ae) != MT_OK)
        return json_fail_from(d, r, &ae);
    return MT_OK;
}

/* "align": "auto" | "none" | "first" | "causal" | {"event": REGEX, "edge": "start" | "end"}. */
static int mapping_json_align(struct json_doc *d, struct mapping *m, const struct json_value *al)
{
    struct mt_err ae;
    if (cJSON_IsString(al->item)) {
        static const char *const an[] = {"auto", "none", "first", "causal"};
        static const enum mapping_align av[] = {MAPPING_ALIGN_AUTO, MAPPING_ALIGN_NONE,
                                                MAPPING_ALIGN_FIRST, MAPPING_ALIGN_CAUSAL};
        int k;
        TRY(json_enum(d, al, an, 4,
                      "\"auto\", \"none\", \"first\", \"causal\" or {\"event\": REGEX, "
                      "\"edge\": \"start\"|\"end\"}",
                      &k));
        if (mapping_set_align(m, av[k], NULL, false, &ae) != MT_OK)
            return json_fail_from(d, al, &ae);
        return MT_OK;
    }
    if (!cJSON_IsObject(al->item))
        return json_type_fail(d, al, "a string or an object");
    static const char *const keys[2] = {"event", "edge"};
    struct json_value k[2];
    TRY(json_fields(d, al, keys, 2, k));
    if (!cJSON_IsString(k[0].item))
        return json_fail(d, &k[0], "expected a regular expression");
    int edge = 0;
    if (k[1].item != NULL) {
        static const char *const en[] = {"start", "end"};
        TRY(json_enum(d, &k[1], en, 2, "\"start\" or \"end\"", &edge));
    }
    if (mapping_set_align(m, MAPPING_ALIGN_EVENT, k[0].item->valuestring, edge == 1, &ae) != MT_OK)
        return json_fail_from(d, &k[0], &ae);
    return MT_OK;
}

static int mapping_json_root(struct json_doc *d, struct mapping *m, const struct json_value *root)
{
    enum { K_FORMAT, K_VERSION, K_DEVICE, K_ALIGN, K_RULES, K__COUNT };
    static const char *const keys[K__COUNT] = {"format", "version", "device", "align", "rules"};
    struct json_value k[K__COUNT];
    if (!cJSON_IsObject(root->item))
        return json_fail(d, root, "expected a JSON object at the top level");
    TRY(json_fields(d, root, keys, K__COUNT, k));
    const cJSON *fmt = k[K_FORMAT].item;
    if (fmt != NULL && !(cJSON_IsString(fmt) && strcmp(fmt->valuestring, MAPPING_FORMAT) == 0))
        return json_fail(d, &k[K_FORMAT], "expected \"%s\"", MAPPING_FORMAT);
    double ver;
    if (k[K_VERSION].item != NULL && !(json_number(k[K_VERSION].item, &ver) && ver == 1))
        return json_fail(d, &k[K_VERSION], "this build reads version 1");
    if (k[K_DEVICE].item != NULL) {
        static const char *const dn[] = {"auto", "rank", "pid", "file"};
        int dev;
        TRY(json_enum(d, &k[K_DEVICE], dn, 4, "\"auto\", \"rank\", \"pid\" or \"file\"", &dev));
        mapping_set_device(m, (enum mapping_device)dev);
    }
    if (k[K_ALIGN].item != NULL)
        TRY(mapping_json_align(d, m, &k[K_ALIGN]));
    if (k[K_RULES].item == NULL)
        return MT_OK;
    struct json_value *rules;
    size_t n;
    TRY(json_elements(d, &k[K_RULES], &rules, &n));
    int rc = MT_OK;
    for (size_t i = 0; i < n && rc == MT_OK; i++)
        rc = mapping_json_rule(d, m, &rules[i]);
    free(rules);
    return rc;
}

int mapping_load_string(const char *text, size_t len, const char *name, struct mapping **out,
                        struct mt_err *e)
{
    *out = NULL;
    struct json_doc *d;
    TRY(json_doc_parse(text, len, name, MT_EINVAL, &d, e));
    struct json_value root;
    json_doc_root(d, &root);
    struct mapping *m = mapping_new();
    int rc = mapping_json_root(d, m, &root);
    json_doc_free(d);
    if (rc != MT_OK) {
        mapping_free(m);
        return rc;
    }
    *out = m;
    return MT_OK;
}

int mapping_load(const char *path, struct mapping **out, struct mt_err *e)
{
    char *text;
    size_t len;
    *out = NULL;
    TRY(str_read_file(path, MAPPING_MAX_BYTES, &text, &len, e));
    int rc = mapping_load_string(text, len, path, out, e);
    free(text);
    return rc;
}
