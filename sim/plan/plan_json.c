/* sim/plan/plan_json.c: plan files. Versioned JSON: {"format": "mario-plan", "version": 1,
 * "config": {...the config, as model/config_write_json.c writes it...}, "geometry": {scheme,
 * devices, parts, stages, mbs}, "devices": [[{"op","mb","part","stage","peer"[,"step",
 * "ckpt_layers"]}, ...], ...]}. A loaded plan is checked against its geometry field by
 * field; validate_plan() then checks that it can run. Read with util/json.h: unknown keys are
 * errors, and every error names file:line:col and the path ("devices[0][3].mb"). */
#include <config.h>
#include "sim/plan/plan.h"

#include <cjson/cJSON.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/config.h"
#include "model/presets.h"
#include "sim/schemes/scheme.h"
#include "sim/core/vpipe.h"
#include "util/err.h"
#include "util/json.h"
#include "util/str.h"
#include "util/xalloc.h"

#define PLAN_FORMAT "mario-plan"
#define PLAN_VERSION 1
#define PLAN_MAX_FILE_BYTES (256u << 20)

char *plan_to_json(const struct plan *p)
{
    const struct plan_geom *g = plan_geom(p);
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "format", PLAN_FORMAT);
    cJSON_AddNumberToObject(root, "version", PLAN_VERSION);
    if (plan_origin(p)[0] != '\0')
        cJSON_AddStringToObject(root, "origin", plan_origin(p));
    cJSON_AddItemToObject(root, "config", config_to_cjson(plan_config(p)));
    cJSON *geo = cJSON_AddObjectToObject(root, "geometry");
    cJSON_AddStringToObject(geo, "scheme", config_scheme_name(g->scheme));
    cJSON_AddNumberToObject(geo, "devices", g->devices);
    cJSON_AddNumberToObject(geo, "parts", g->parts);
    cJSON_AddNumberToObject(geo, "stages", g->stages);
    cJSON_AddNumberToObject(geo, "mbs", g->mbs);
    cJSON *devs = cJSON_AddArrayToObject(root, "devices");
    for (int d = 0; d < g->devices; d++) {
        cJSON *list = cJSON_CreateArray();
        for (int i = 0; i < plan_len(p, d); i++) {
            const struct instr *in = plan_at(p, d, i);
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "op", plan_op_name(in->op));
            cJSON_AddNumberToObject(o, "mb", in->mb);
            cJSON_AddNumberToObject(o, "part", in->part);
            cJSON_AddNumberToObject(o, "stage", in->stage);
            if (in->peer >= 0)
                cJSON_AddNumberToObject(o, "peer", in->peer);
            if (in->step != 0)
                cJSON_AddNumberToObject(o, "step", in->step);
            if (in->ckpt_layers != 0)
                cJSON_AddNumberToObject(o, "ckpt_layers", in->ckpt_layers);
            /* only a forward or a backward pairs (the reader's rule): an instruction a pass
             * or the search made by copying a paired one (RC, OF, RL) carries no pair */
            if (in->paired != 0 && (plan_op_is_forward(in->op) || plan_op_is_backward(in->op)))
                cJSON_AddNumberToObject(o, "paired", in->paired);
            cJSON_AddItemToArray(list, o);
        }
        cJSON_AddItemToArray(devs, list);
    }
    char *text = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    char *out = xstrdup(text);
    cJSON_free(text);
    return out;
}

int plan_save(const struct plan *p, const char *path, struct mt_err *e)
{
    if (plan_path_is_csv(path)) {
        char *csv = plan_to_torch_csv(p, e);
        if (csv == NULL)
            return err_wrap(e, "%s", path);
        int rc = str_write_file_atomic(path, csv, strlen(csv), e);
        free(csv);
        return rc;
    }
    char *text = plan_to_json(p);
    size_t n = strlen(text);
    text = xreallocarray(text, n + 2, 1);
    text[n] = '\n';
    text[n + 1] = '\0';
    int rc = str_write_file_atomic(path, text, n + 1, e);
    free(text);
    return rc;
}

/* One instruction {"op", "mb", "part", "stage"[, "peer", "step", "ckpt_layers", "paired"]}. */
static int plan_json_instr(struct json_doc *d, const struct json_value *o,
                           const struct plan_geom *g, struct instr *out)
{
    enum { I_OP, I_MB, I_PART, I_STAGE, I_PEER, I_STEP, I_CKPT, I_PAIRED, I__COUNT };
    static const char *const keys[I__COUNT] = {"op",   "mb",   "part",        "stage",
                                               "peer", "step", "ckpt_layers", "paired"};
    static const struct {
        int key;
        long lo;
        bool required;
    } ints[] = {{I_MB, -1, true},   {I_PART, 0, true}, {I_STAGE, 0, true},
                {I_PEER, -1, false}, {I_STEP, 0, false}, {I_CKPT, 0, false},
                {I_PAIRED, 0, false}};
    long hi[I__COUNT] = {0, g->mbs - 1, g->parts - 1, g->stages - 1, g->devices - 1, INT_MAX,
                         CONFIG_MAX_LAYERS, 1};
    struct json_value k[I__COUNT];
    TRY(json_fields(d, o, keys, I__COUNT, k));
    const cJSON *op = k[I_OP].item;
    int opv = cJSON_IsString(op) ? plan_op_parse(op->valuestring) : -1;
    if (opv < 0)
        return json_fail(d, &k[I_OP],
                         "expected one of FW CFW RC BW B W SA RA SG RG AR OS OF RL");
    struct instr in = {.op = (enum op)opv, .peer = -1};
    int *dst[I__COUNT] = {NULL,     &in.mb,   &in.part,        &in.stage,
                          &in.peer, &in.step, &in.ckpt_layers, &in.paired};
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
        const struct json_value *v = &k[ints[i].key];
        if (v->item == NULL && ints[i].required)
            return json_fail(d, v, "missing");
        if (v->item != NULL)
            TRY(json_int(d, v, ints[i].lo, hi[ints[i].key], dst[ints[i].key]));
    }
    bool comm = vpipe_is_p2p(in.op);
    /* AR/OS have no micro-batch, except in async plans: there they name the one whose
     * backward completes their update (sim/core/vpipe.h). */
    bool no_mb = (in.op == OP_AR || in.op == OP_OS) && !config_scheme_async(g->scheme);
    if (in.paired && !plan_op_is_forward(in.op) && !plan_op_is_backward(in.op))
        return json_fail(d, &k[I_PAIRED], "only a forward or a backward (FW CFW BW B) is paired");
    if (comm != (in.peer >= 0) || (in.mb < 0) != no_mb)
        return json_fail(d, o, "%s",
                         comm ? "send/receive without a peer" : "peer or mb does not fit the op");
    *out = in;
    return MT_OK;
}

/* "geometry": {scheme, devices, parts, stages, mbs}, which must be its config's. */
static int plan_json_geom(struct json_doc *d, const struct json_value *gv,
                          const struct plan_geom *want, struct plan_geom *out)
{
    static const char *const keys[5] = {"scheme", "devices", "parts", "stages", "mbs"};
    static const long hi[5] = {0, CONFIG_MAX_DEVICES, CONFIG_MAX_CHUNKS, CONFIG_MAX_LAYERS,
                               CONFIG_MAX_MICROBATCHES};
    struct json_value k[5];
    if (gv->item == NULL)
        return json_fail(d, gv, "missing (expected an object)");
    TRY(json_fields(d, gv, keys, 5, k));
    struct plan_geom g = *want;
    const char *scheme; /* written for readers; the config's scheme is the one used */
    if (k[0].item != NULL)
        TRY(json_string(d, &k[0], &scheme));
    int *dst[5] = {NULL, &g.devices, &g.parts, &g.stages, &g.mbs};
    for (int i = 1; i < 5; i++) {
        if (k[i].item == NULL)
            return json_fail(d, &k[i], "missing");
        TRY(json_int(d, &k[i], 1, hi[i], dst[i]));
    }
    if (g.devices != want->devices || g.parts != want->parts || g.stages != want->stages ||
        g.mbs != want->mbs)
        return json_fail(d, gv,
                         "%d devices, %d parts, %d stages, %d micro-batches disagree with its "
                         "config (%d, %d, %d, %d)",
                         g.devices, g.parts, g.stages, g.mbs, want->devices, want->parts,
                         want->stages, want->mbs);
    *out = g;
    return MT_OK;
}

/* "devices": one instruction list per device, appended to p. */
static int plan_json_devices(struct json_doc *d, const struct json_value *dv, struct plan *p,
                             const struct plan_geom *g)
{
    struct json_value *lists, *ins = NULL;
    size_t nd, ni;
    if (!cJSON_IsArray(dv->item) || cJSON_GetArraySize(dv->item) != g->devices)
        return json_fail(d, dv, "expected an array of %d instruction lists", g->devices);
    TRY(json_elements(d, dv, &lists, &nd));
    int rc = MT_OK;
    for (size_t dev = 0; dev < nd && rc == MT_OK; dev++) {
        rc = json_elements(d, &lists[dev], &ins, &ni);
        for (size_t i = 0; i < ni && rc == MT_OK; i++) {
            struct instr in;
            rc = plan_json_instr(d, &ins[i], g, &in);
            if (rc == MT_OK)
                plan_append(p, (int)dev, in);
        }
        free(ins);
        ins = NULL;
    }
    free(lists);
    return rc;
}

static int plan_from_json(struct json_doc *d, const struct json_value *root, struct plan **out)
{
    enum { P_FORMAT, P_VERSION, P_ORIGIN, P_CONFIG, P_GEOMETRY, P_DEVICES, P__COUNT };
    static const char *const keys[P__COUNT] = {"format",   "version",  "origin",
                                               "config",   "geometry", "devices"};
    struct json_value k[P__COUNT];
    if (!cJSON_IsObject(root->item))
        return json_fail(d, root, "top level: expected an object");
    const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(root->item, "format");
    if (!cJSON_IsString(fmt) || strcmp(fmt->valuestring, PLAN_FORMAT) != 0) {
        TRY(json_fields(d, root, keys, P__COUNT, k)); /* place the message at "format" */
        return json_fail(d, &k[P_FORMAT], "expected \"%s\" (is this a plan file?)", PLAN_FORMAT);
    }
    TRY(json_fields(d, root, keys, P__COUNT, k));
    int version;
    if (k[P_VERSION].item == NULL)
        return json_fail(d, &k[P_VERSION], "missing");
    TRY(json_int(d, &k[P_VERSION], 1, INT_MAX, &version));
    if (version != PLAN_VERSION)
        return json_fail(d, &k[P_VERSION], "%d is not supported (this build reads %d)", version,
                         PLAN_VERSION);
    if (k[P_CONFIG].item == NULL)
        return json_fail(d, &k[P_CONFIG], "missing");
    struct config cfg;
    TRY(config_from_json(d, &k[P_CONFIG], &cfg));
    struct plan_geom want, g;
    struct mt_err ge;
    if (scheme_geom(&cfg, &want, &ge) != MT_OK)
        return json_fail_from(d, &k[P_CONFIG], &ge);
    TRY(plan_json_geom(d, &k[P_GEOMETRY], &want, &g));
    if (k[P_ORIGIN].item != NULL && !cJSON_IsString(k[P_ORIGIN].item))
        return json_fail(d, &k[P_ORIGIN], "expected a string");
    struct plan *p = plan_new(&cfg, &g);
    if (k[P_ORIGIN].item != NULL)
        plan_set_origin(p, k[P_ORIGIN].item->valuestring);
    int rc = plan_json_devices(d, &k[P_DEVICES], p, &g);
    if (rc != MT_OK) {
        plan_free(p);
        return rc;
    }
    *out = p;
    return MT_OK;
}

int plan_load_string(const char *text, size_t len, const char *name, struct plan **out,
                     struct mt_err *e)
{
    *out = NULL;
    struct json_doc *d;
    /* a plan is written by this tool: a value that does not fit means a corrupt file */
    TRY(json_doc_parse(text, len, name, MT_EPARSE, &d, e));
    struct json_value root;
    json_doc_root(d, &root);
    int rc = plan_from_json(d, &root, out);
    json_doc_free(d);
    return rc;
}

int plan_load(const char *path, struct plan **out, struct mt_err *e)
{
    char *text;
    size_t len;
    *out = NULL;
    TRY(str_read_file(path, PLAN_MAX_FILE_BYTES, &text, &len, e));
    int rc = plan_load_string(text, len, path, out, e);
    free(text);
    return rc;
}

void plan_json_add_shape(struct cJSON *o, const struct plan *p)
{
    const struct config *c = plan_config(p);
    const struct plan_geom *g = plan_geom(p);
    cJSON_AddStringToObject(o, "scheme", config_scheme_name(c->scheme));
    if (plan_origin(p)[0] != '\0') /* the scheme is then the placement the order fits */
        cJSON_AddStringToObject(o, "origin", plan_origin(p));
    cJSON_AddStringToObject(o, "model", c->model.name);
    cJSON_AddNumberToObject(o, "seq_length", c->model.seq_length);
    cJSON_AddNumberToObject(o, "model_parameters", presets_config_params(c));
    cJSON_AddNumberToObject(o, "pp", g->devices);
    cJSON_AddNumberToObject(o, "dp", c->cluster.dp);
    cJSON_AddNumberToObject(o, "microbatches", g->mbs);
    cJSON_AddNumberToObject(o, "micro_batch_size", c->micro_batch_size);
}
