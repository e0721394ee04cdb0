/* traces/chrome.c: writes simulated timelines and the executor's measured runs as Chrome
 * traces, both keyed by (device, op, mb, part, stage) so that the two line up one to one. */
#include <config.h>
#include "traces/chrome.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/config.h"
#include "sim/plan/plan.h"
#include "sim/core/simulate.h"
#include "sim/core/vpipe.h"
#include "util/err.h"
#include "util/str.h"
#include "util/xalloc.h"

static void chrome_meta(cJSON *events, const char *what, int pid, int tid, const char *name)
{
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "ph", "M");
    cJSON_AddStringToObject(m, "name", what);
    cJSON_AddNumberToObject(m, "pid", pid);
    cJSON_AddNumberToObject(m, "tid", tid);
    cJSON_AddStringToObject(cJSON_AddObjectToObject(m, "args"), "name", name);
    cJSON_AddItemToArray(events, m);
}

/* otherData's head, the same in a simulated and a measured trace: who wrote it, which, and the
 * plan's scheme and model. */
static cJSON *chrome_other_data(cJSON *root, const struct config *c, const char *source)
{
    cJSON *other = cJSON_AddObjectToObject(root, "otherData");
    cJSON_AddStringToObject(other, "generator", PACKAGE_STRING);
    cJSON_AddStringToObject(other, "source", source);
    cJSON_AddStringToObject(other, "scheme", config_scheme_name(c->scheme));
    cJSON_AddStringToObject(other, "model", c->model.name);
    return other;
}

/* The plan's config (otherData.config): `import` makes a measured trace's plan from it, and
 * `compare` a simulated trace's (traces/align.c), with its degrees, lengths and device. */
static void chrome_add_config(cJSON *other, const struct config *c)
{
    cJSON *cfg = config_to_cjson(c);
    if (cfg != NULL)
        cJSON_AddItemToObject(other, "config", cfg);
}

char *chrome_from_sim(const struct plan *p, const struct sim_result *r)
{
    const struct config *c = plan_config(p);
    double scale = r->unit ? 1000.0 : 1.0; /* to us */
    cJSON *root = cJSON_CreateObject();
    cJSON *events = cJSON_AddArrayToObject(root, "traceEvents");
    for (int d = 0; d < plan_devices(p); d++) {
        char name[32];
        snprintf(name, sizeof name, "device %d", d);
        chrome_meta(events, "process_name", d, 0, name);
        chrome_meta(events, "thread_name", d, 0, "compute");
        chrome_meta(events, "thread_name", d, 1, "p2p");
        for (int i = 0; i < plan_len(p, d); i++) {
            const struct instr *in = plan_at(p, d, i);
            int id = plan_id(p, d, i);
            char label[32];
            plan_instr_label(p, in, label, sizeof label);
            bool comm = vpipe_is_p2p(in->op);
            cJSON *ev = cJSON_CreateObject();
            cJSON_AddStringToObject(ev, "name", label);
            cJSON_AddStringToObject(ev, "cat", comm ? "p2p" : "compute");
            cJSON_AddStringToObject(ev, "ph", "X");
            cJSON_AddNumberToObject(ev, "ts", r->start[id] * scale);
            cJSON_AddNumberToObject(ev, "dur", (r->end[id] - r->start[id]) * scale);
            cJSON_AddNumberToObject(ev, "pid", d);
            cJSON_AddNumberToObject(ev, "tid", comm ? 1 : 0);
            cJSON *args = cJSON_AddObjectToObject(ev, "args");
            cJSON_AddStringToObject(args, "op", plan_op_name(in->op));
            cJSON_AddNumberToObject(args, "mb", in->mb);
            cJSON_AddNumberToObject(args, "part", in->part);
            cJSON_AddNumberToObject(args, "stage", in->stage);
            if (in->peer >= 0)
                cJSON_AddNumberToObject(args, "peer", in->peer);
            cJSON_AddItemToArray(events, ev);
        }
        const struct sim_device *dv = &r->dev[d];
        for (int k = 0; k < dv->curve_len; k++) {
            cJSON *ev = cJSON_CreateObject();
            cJSON_AddStringToObject(ev, "name", "memory");
            cJSON_AddStringToObject(ev, "ph", "C");
            cJSON_AddNumberToObject(ev, "ts", dv->curve_t[k] * scale);
            cJSON_AddNumberToObject(ev, "pid", d);
            cJSON_AddNumberToObject(cJSON_AddObjectToObject(ev, "args"),
                                    r->unit ? "M_theta" : "bytes", dv->curve_mem[k]);
            cJSON_AddItemToArray(events, ev);
        }
    }
    cJSON_AddStringToObject(root, "displayTimeUnit", "ms");
    cJSON *other = chrome_other_data(root, c, "simulated");
    cJSON_AddStringToObject(other, "time_unit", r->unit ? "t (1 t = 1000 us)" : "us");
    cJSON_AddNumberToObject(other, "step_time_us", r->step_time * scale);
    chrome_add_config(other, c);
    char *text = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    char *out = xstrdup(text);
    cJSON_free(text);
    return out;
}

int chrome_write_sim(const char *path, const struct plan *p, const struct sim_result *r,
                     struct mt_err *e)
{
    char *text = chrome_from_sim(p, r);
    int rc = str_write_file_atomic(path, text, strlen(text), e);
    free(text);
    return rc;
}

/* ---- measured runs ------------------------------------------------------------------------ */

char *chrome_from_measured(const struct plan *p, const struct chrome_run *r)
{
    const struct config *c = plan_config(p);
    cJSON *root = cJSON_CreateObject();
    cJSON *events = cJSON_AddArrayToObject(root, "traceEvents");
    int pp = plan_devices(p);
    for (int rank = 0; rank < r->ranks; rank++) {
        char name[80];
        if (r->ranks > pp)
            snprintf(name, sizeof name, "device %d (replica %d, rank %d)", rank % pp, rank / pp,
                     rank);
        else
            snprintf(name, sizeof name, "device %d", rank);
        chrome_meta(events, "process_name", rank, 0, name);
        chrome_meta(events, "thread_name", rank, 0, "compute");
        chrome_meta(events, "thread_name", rank, 1, "p2p");
        chrome_meta(events, "thread_name", rank, 2, "all-to-all");
    }
    cJSON *losses = cJSON_CreateArray();
    for (size_t i = 0; i < r->n; i++) {
        const struct chrome_span *s = &r->spans[i];
        cJSON *ev = cJSON_CreateObject();
        if (s->op == -1) {
            cJSON_AddStringToObject(ev, "name", "memory");
            cJSON_AddStringToObject(ev, "ph", "C");
            cJSON_AddNumberToObject(ev, "ts", s->ts_us);
            cJSON_AddNumberToObject(ev, "pid", s->rank);
            cJSON_AddNumberToObject(cJSON_AddObjectToObject(ev, "args"), "bytes", s->value);
            cJSON_AddItemToArray(events, ev);
            continue;
        }
        if (s->op == -2) {
            if (s->rank != 0) {
                cJSON_Delete(ev);
                continue;
            }
            cJSON_AddStringToObject(ev, "name", "loss");
            cJSON_AddStringToObject(ev, "ph", "C");
            cJSON_AddNumberToObject(ev, "ts", s->ts_us + s->dur_us);
            cJSON_AddNumberToObject(ev, "pid", 0);
            cJSON_AddNumberToObject(cJSON_AddObjectToObject(ev, "args"), "loss", s->value);
            cJSON_AddItemToArray(events, ev);
            cJSON_AddItemToArray(losses, cJSON_CreateNumber(s->value));
            continue;
        }
        if (s->op == -3) {
            /* a MoE token exchange (exec/xformer_moe.h), on its own thread: category
             * "ep_a2a", args bytes (sent to other ranks), device, replica, step */
            cJSON_AddStringToObject(ev, "name", "a2a");
            cJSON_AddStringToObject(ev, "cat", "ep_a2a");
            cJSON_AddStringToObject(ev, "ph", "X");
            cJSON_AddNumberToObject(ev, "ts", s->ts_us);
            cJSON_AddNumberToObject(ev, "dur", s->dur_us);
            cJSON_AddNumberToObject(ev, "pid", s->rank);
            cJSON_AddNumberToObject(ev, "tid", 2);
            cJSON *args = cJSON_AddObjectToObject(ev, "args");
            cJSON_AddNumberToObject(args, "bytes", s->value);
            cJSON_AddNumberToObject(args, "device", s->dev);
            cJSON_AddNumberToObject(args, "replica", s->dp_rank);
            cJSON_AddNumberToObject(args, "step", s->step);
            cJSON_AddItemToArray(events, ev);
            continue;
        }
        if (s->op < 0 || s->op >= OP__COUNT) {
            cJSON_Delete(ev);
            continue;
        }
        struct instr in = {(enum op)s->op, s->mb, s->part, s->stage, s->peer, 0, 0, 0};
        char label[32];
        plan_instr_label(p, &in, label, sizeof label);
        bool comm = vpipe_is_p2p(in.op);
        cJSON_AddStringToObject(ev, "name", label);
        cJSON_AddStringToObject(ev, "cat", comm ? "p2p" : "compute");
        cJSON_AddStringToObject(ev, "ph", "X");
        cJSON_AddNumberToObject(ev, "ts", s->ts_us);
        cJSON_AddNumberToObject(ev, "dur", s->dur_us);
        cJSON_AddNumberToObject(ev, "pid", s->rank);
        cJSON_AddNumberToObject(ev, "tid", comm ? 1 : 0);
        cJSON *args = cJSON_AddObjectToObject(ev, "args");
        cJSON_AddStringToObject(args, "op", plan_op_name(in.op));
        cJSON_AddNumberToObject(args, "mb", in.mb);
        cJSON_AddNumberToObject(args, "part", in.part);
        cJSON_AddNumberToObject(args, "stage", in.stage);
        if (in.peer >= 0)
            cJSON_AddNumberToObject(args, "peer", in.peer);
        cJSON_AddNumberToObject(args, "step", s->step);
        if (r->ranks > pp) {
            cJSON_AddNumberToObject(args, "device", s->dev);
            cJSON_AddNumberToObject(args, "replica", s->dp_rank);
        }
        cJSON_AddItemToArray(events, ev);
    }
    cJSON_AddStringToObject(root, "displayTimeUnit", "ms");
    cJSON *other = chrome_other_data(root, c, "measured");
    cJSON_AddStringToObject(other, "backend", r->backend ? r->backend : "cpu");
    cJSON_AddStringToObject(other, "time_unit", "us");
    cJSON_AddNumberToObject(other, "ranks", r->ranks);
    cJSON_AddStringToObject(other, "status", r->status ? r->status : "complete");
    chrome_add_config(other, c);
    cJSON_AddItemToObject(other, "loss", losses);
    char *text = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    char *out = xstrdup(text);
    cJSON_free(text);
    return out;
}

int chrome_write_measured(const char *path, const struct plan *p, const struct chrome_run *r,
                          struct mt_err *e)
{
    char *text = chrome_from_measured(p, r);
    int rc = str_write_file_atomic(path, text, strlen(text), e);
    free(text);
    return rc;
}
