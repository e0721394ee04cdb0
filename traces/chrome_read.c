/* traces/chrome_read.c: one Chrome Trace Event file into a struct trace, one event at a time
 * (traces/scan.h hands out each event's text; cJSON parses only that slice and lets it go), so
 * memory stays bounded by the events kept, not by the file.
 *
 * Events with our keys (args.op is an op name and args.mb a number) are plan instructions of
 * device args.device (else pid) and replica args.replica (else 0), at step args.step (else 0).
 * "C" counters named "memory" carry {bytes} or, in unit-cost simulations, {M_theta}. The rest
 * is the PyTorch profiler's (traces/kineto.h). Duration events given as a "B" (begin) and an
 * "E" (end) instead of one "X" are paired on a stack per (pid, tid), in file order as the
 * trace viewers read them (an E closes the latest open B of its thread; the E's args are
 * added to the B's), and then read as the "X" they stand for. An E with no B open on its
 * thread, or before its B, is an error; a B never closed (a run cut short) is left out.
 * Everything a file says about itself that is known only at its end (distributedInfo may
 * follow traceEvents; ProfilerStep spans; which device a rank of ours ran) is applied to that
 * file's events once it is read. */
#include <config.h>
#include "traces/chrome_read.h"

#include <cjson/cJSON.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/config.h"
#include "sim/plan/plan.h"
#include "traces/kineto.h"
#include "traces/mapping.h"
#include "traces/scan.h"
#include "traces/trace.h"
#include "util/err.h"
#include "util/xalloc.h"

#define CHROME_MAX_STAGES (1 << 20)
#define CHROME_MAX_STEPS (1 << 24)
/* Timestamps are us since some epoch (Kineto: the Unix epoch, ~1.7e15); beyond this a sum
 * or a clock shift could overflow. */
#define CHROME_MAX_US 1e18
/* "B" events open at once (nesting depth summed over threads); more is a broken file */
#define CHROME_MAX_OPEN (1 << 16)

struct chrome_span {
    double start, end;
    int n;
};

/* An open "B" event: its thread and the parsed event, kept until its "E". */
struct chrome_open {
    int pid;
    char tid[48]; /* the tid as written (number or string); "" when absent */
    double ts;
    cJSON *ev;
};

struct chrome_pp {
    size_t i; /* index in the trace's events */
    bool gpu; /* on the GPU timeline */
};

struct chrome_kmem {
    double t_us, bytes;
    int pid;
    bool gpu;
};

/* What one file's reading keeps beside the trace. */
struct chrome_state {
    const char *name;
    int file;
    const struct mapping *map;
    struct trace *t;
    struct chrome_file *cf;
    size_t first_ev, first_mem;
    /* string pids, by first appearance */
    char **pid_names;
    int n_pid_names;
    /* ranks of ours: pid -> (device, replica) from args.device / args.replica */
    int *rank_dev, *rank_rep;
    int n_rank;
    /* ProfilerStep spans */
    struct chrome_span *spans;
    size_t n_spans, cap_spans;
    /* Kineto [memory] samples, kept until the file says whether it has GPU ones */
    struct chrome_kmem *kmem;
    size_t n_kmem, cap_kmem;
    bool kmem_gpu;
    /* torch's pipelining actions, host or GPU copies */
    struct chrome_pp *pp;
    size_t n_pp, cap_pp;
    bool pp_gpu;
    /* open "B" events, innermost of each thread last */
    struct chrome_open *open;
    size_t n_open, cap_open;
};

static int chrome_event_fail(struct chrome_state *st, const struct scan_item *it, struct mt_err *e,
                             const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int chrome_event_fail(struct chrome_state *st, const struct scan_item *it, struct mt_err *e,
                             const char *fmt, ...)
{
    char what[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return err_set(e, MT_EINVAL, "%s:%ld:%ld: event %zu: %s", st->name, it->line, it->col,
                   it->index, what);
}

/* An event's position in its file's event array, as trace_event.index keeps it. */
static int chrome_index(const struct scan_item *it)
{
    return it->index < (size_t)INT_MAX ? (int)it->index : INT_MAX;
}

/* A torch.distributed.pipelining action ("PP:1F0") about to be added: the trace's next
 * event. Kineto mirrors a host range on the GPU timeline ("gpu_user_annotation") where the
 * device's work runs: once a file has those, its host copies are left out (chrome_finish). */
static void chrome_note_pp(struct chrome_state *st, bool gpu)
{
    size_t n;
    trace_events(st->t, &n);
    if (st->n_pp == st->cap_pp) {
        st->cap_pp = st->cap_pp ? 2 * st->cap_pp : 64;
        st->pp = xreallocarray(st->pp, st->cap_pp, sizeof *st->pp);
    }
    st->pp[st->n_pp++] = (struct chrome_pp){n, gpu};
    st->pp_gpu |= gpu;
}

/* pid (or tid) as a number: numbers as they are, strings by their first run of digits
 * ("rank 3" -> 3), other strings 1000000 + the order in which they first appear. */
static int chrome_pid(struct chrome_state *st, const cJSON *j)
{
    if (cJSON_IsNumber(j)) {
        double v = j->valuedouble;
        return v >= 0 && v < 1e9 ? (int)v : 0;
    }
    if (!cJSON_IsString(j))
        return 0;
    const char *s = j->valuestring;
    const char *d = s + strcspn(s, "0123456789");
    if (*d != '\0') {
        long v = 0;
        for (int k = 0; d[k] >= '0' && d[k] <= '9' && k < 9; k++)
            v = v * 10 + (d[k] - '0');
        return (int)v;
    }
    for (int i = 0; i < st->n_pid_names; i++)
        if (strcmp(st->pid_names[i], s) == 0)
            return 1000000 + i;
    st->pid_names = xreallocarray(st->pid_names, (size_t)st->n_pid_names + 1, sizeof(char *));
    st->pid_names[st->n_pid_names] = xstrdup(s);
    return 1000000 + st->n_pid_names++;
}

/* An integer arg in [lo, hi]; def when absent. */
static int chrome_arg_int(struct chrome_state *st, const struct scan_item *it, const cJSON *args,
                          const char *key, long lo, long hi, int def, int *out, struct mt_err *e)
{
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(args, key);
    if (j == NULL) {
        *out = def;
        return MT_OK;
    }
    double v;
    if (!kineto_number(j, &v) || v != floor(v) || v < lo || v > hi)
        return chrome_event_fail(st, it, e, "args.%s: expected an integer in [%ld, %ld]", key, lo,
                                 hi);
    *out = (int)v;
    return MT_OK;
}

static void chrome_note_rank(struct chrome_state *st, int pid, int dev, int rep)
{
    if (pid < 0 || pid >= CONFIG_MAX_DEVICES * 64)
        return;
    if (pid >= st->n_rank) {
        int n = pid + 1;
        st->rank_dev = xreallocarray(st->rank_dev, (size_t)n, sizeof(int));
        st->rank_rep = xreallocarray(st->rank_rep, (size_t)n, sizeof(int));
        for (int i = st->n_rank; i < n; i++)
            st->rank_dev[i] = st->rank_rep[i] = -1;
        st->n_rank = n;
    }
    if (st->rank_dev[pid] < 0) {
        st->rank_dev[pid] = dev;
        st->rank_rep[pid] = rep;
    }
}

/* An "X" event with our keys. */
static int chrome_ours(struct chrome_state *st, const struct scan_item *it, const cJSON *args,
                       int op, double ts, double dur, int pid, struct mt_err *e)
{
    struct trace_event ev = {0};
    ev.start_us = ts;
    ev.end_us = ts + dur;
    ev.op = op;
    ev.pid = pid;
    ev.rank = pid;
    ev.file = st->file;
    ev.index = chrome_index(it);
    TRY(chrome_arg_int(st, it, args, "mb", -1, CONFIG_MAX_MICROBATCHES, -1, &ev.mb, e));
    TRY(chrome_arg_int(st, it, args, "part", 0, CONFIG_MAX_CHUNKS, 0, &ev.part, e));
    TRY(chrome_arg_int(st, it, args, "stage", -1, CHROME_MAX_STAGES, -1, &ev.stage, e));
    TRY(chrome_arg_int(st, it, args, "step", 0, CHROME_MAX_STEPS, 0, &ev.step, e));
    TRY(chrome_arg_int(st, it, args, "device", 0, CONFIG_MAX_DEVICES - 1,
                       pid < CONFIG_MAX_DEVICES ? pid : 0, &ev.dev, e));
    TRY(chrome_arg_int(st, it, args, "replica", 0, CONFIG_MAX_DEVICES - 1, 0, &ev.replica, e));
    chrome_note_rank(st, pid, ev.dev, ev.replica);
    st->cf->ours = true;
    return trace_add_event(st->t, &ev, e);
}

static int chrome_complete(struct chrome_state *st, const struct scan_item *it, const cJSON *ev,
                           const char *name, const char *cat, int pid, double ts, struct mt_err *e)
{
    double dur = 0;
    const cJSON *jd = cJSON_GetObjectItemCaseSensitive(ev, "dur");
    if (jd != NULL && !kineto_number(jd, &dur))
        return chrome_event_fail(st, it, e, "\"%.60s\": dur: expected a number", name);
    if (dur < 0)
        return chrome_event_fail(st, it, e, "\"%.60s\": negative duration %g us", name, dur);
    if (dur > CHROME_MAX_US)
        return chrome_event_fail(st, it, e, "\"%.60s\": dur: %g us is out of range", name, dur);
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(ev, "args");
    if (cJSON_IsObject(args)) {
        const cJSON *op = cJSON_GetObjectItemCaseSensitive(args, "op");
        const cJSON *mb = cJSON_GetObjectItemCaseSensitive(args, "mb");
        if (cJSON_IsString(op) && mb != NULL) {
            int o = plan_op_parse(op->valuestring);
            if (o < 0)
                return chrome_event_fail(st, it, e, "args.op: unknown op '%.40s'", op->valuestring);
            return chrome_ours(st, it, args, o, ts, dur, pid, e);
        }
    }
    if (cat != NULL && strcmp(cat, "ep_a2a") == 0) {
        /* our executor's MoE all-to-all (traces/chrome.c): kept apart from the instructions */
        struct trace_a2a a = {.start_us = ts, .end_us = ts + dur};
        const cJSON *jb = cJSON_IsObject(args) ? cJSON_GetObjectItemCaseSensitive(args, "bytes")
                                               : NULL;
        if (jb != NULL && (!kineto_number(jb, &a.bytes) || !(a.bytes >= 0)))
            return chrome_event_fail(st, it, e, "\"%.60s\": args.bytes: expected a number >= 0",
                                     name);
        TRY(chrome_arg_int(st, it, args, "device", 0, CONFIG_MAX_DEVICES - 1,
                           pid < CONFIG_MAX_DEVICES ? pid : 0, &a.dev, e));
        TRY(chrome_arg_int(st, it, args, "replica", 0, CONFIG_MAX_DEVICES - 1, 0, &a.replica, e));
        TRY(chrome_arg_int(st, it, args, "step", 0, CHROME_MAX_STEPS, 0, &a.step, e));
        trace_add_a2a(st->t, &a);
        return MT_OK;
    }
    if (st->map != NULL && mapping_is_align_event(st->map, name)) {
        struct trace_event a = {.start_us = ts,
                                .end_us = ts + dur,
                                .op = TRACE_OP_ALIGN,
                                .mb = -1,
                                .part = -1,
                                .stage = -1,
                                .dev = -1,
                                .rank = -1,
                                .step = -1,
                                .file = st->file,
                                .pid = pid,
                                .index = chrome_index(it)};
        TRY(trace_add_event(st->t, &a, e));
    }
    struct trace_event out;
    enum kineto_kind k = kineto_classify(name, cat, st->map, &out);
    if (k == KINETO_STEP) {
        st->cf->kineto = true;
        if (st->n_spans == st->cap_spans) {
            st->cap_spans = st->cap_spans ? 2 * st->cap_spans : 64;
            st->spans = xreallocarray(st->spans, st->cap_spans, sizeof *st->spans);
        }
        st->spans[st->n_spans++] = (struct chrome_span){ts, ts + dur, out.step};
        trace_info_edit(st->t)->events_ignored++;
        return MT_OK;
    }
    if (k == KINETO_IGNORE) {
        trace_info_edit(st->t)->events_ignored++;
        return MT_OK;
    }
    if (out.mb < -1 || out.mb > CONFIG_MAX_MICROBATCHES || out.stage > CHROME_MAX_STAGES ||
        out.part > CONFIG_MAX_CHUNKS || out.dev >= CONFIG_MAX_DEVICES ||
        out.step > CHROME_MAX_STEPS)
        return chrome_event_fail(st, it, e,
                                 "\"%.60s\": a key (stage, micro-batch, part, device, step) is "
                                 "out of range",
                                 name);
    out.start_us = ts;
    out.end_us = ts + dur;
    out.replica = 0;
    out.rank = -1;
    out.file = st->file;
    out.pid = pid;
    out.index = chrome_index(it);
    if (out.op >= 0 && strncmp(name, "PP:", 3) == 0) /* torch's: CPU or GPU annotation */
        chrome_note_pp(st, cat != NULL && strcmp(cat, "gpu_user_annotation") == 0);
    return trace_add_event(st->t, &out, e);
}

static int chrome_counter(struct chrome_state *st, const cJSON *ev, const char *name, int pid,
                          double ts)
{
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(ev, "args");
    double v;
    if (strcmp(name, "memory") != 0 || !cJSON_IsObject(args)) {
        trace_info_edit(st->t)->events_ignored++;
        return MT_OK;
    }
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(args, "bytes");
    const cJSON *u = cJSON_GetObjectItemCaseSensitive(args, "M_theta");
    if (!(kineto_number(b, &v) || kineto_number(u, &v)) || v < 0) {
        trace_info_edit(st->t)->events_ignored++;
        return MT_OK;
    }
    struct trace_mem m = {ts, v, -1, 0, pid, st->file, pid};
    trace_add_mem(st->t, &m);
    return MT_OK;
}

static void chrome_kineto_memory(struct chrome_state *st, double ts, double bytes, bool gpu,
                                 int dev_id, int pid)
{
    if (st->n_kmem == st->cap_kmem) {
        st->cap_kmem = st->cap_kmem ? 2 * st->cap_kmem : 256;
        st->kmem = xreallocarray(st->kmem, st->cap_kmem, sizeof *st->kmem);
    }
    st->kmem[st->n_kmem++] =
        (struct chrome_kmem){ts, bytes, gpu && dev_id >= 0 ? dev_id : pid, gpu};
    st->kmem_gpu |= gpu;
    st->cf->kineto = true;
}

/* The tid of an event as a key: a number's digits, a string as it is, "" when absent. */
static void chrome_tid(const cJSON *j, char *out, size_t n)
{
    if (cJSON_IsNumber(j))
        snprintf(out, n, "%.17g", j->valuedouble);
    else if (cJSON_IsString(j))
        snprintf(out, n, "s:%s", j->valuestring);
    else
        out[0] = '\0';
}

/* A "B" event: kept (with its parsed text, taken over) until its "E". */
static int chrome_begin(struct chrome_state *st, const struct scan_item *it, cJSON *ev,
                        const char *name, int pid, double ts, struct mt_err *e)
{
    if (st->n_open == CHROME_MAX_OPEN) {
        cJSON_Delete(ev);
        return chrome_event_fail(st, it, e, "\"%.60s\": more than %d B events open (no E)", name,
                                 CHROME_MAX_OPEN);
    }
    if (st->n_open == st->cap_open) {
        st->cap_open = st->cap_open ? 2 * st->cap_open : 16;
        st->open = xreallocarray(st->open, st->cap_open, sizeof *st->open);
    }
    struct chrome_open *o = &st->open[st->n_open++];
    o->pid = pid;
    chrome_tid(cJSON_GetObjectItemCaseSensitive(ev, "tid"), o->tid, sizeof o->tid);
    o->ts = ts;
    o->ev = ev;
    return MT_OK;
}

/* An "E" event: closes the latest open B of its thread, which is then read as an "X" of
 * duration ts - its start, with the E's args added to its own. */
static int chrome_end(struct chrome_state *st, const struct scan_item *it, const cJSON *ev, int pid,
                      double ts, struct mt_err *e)
{
    char tid[48];
    chrome_tid(cJSON_GetObjectItemCaseSensitive(ev, "tid"), tid, sizeof tid);
    size_t k = st->n_open;
    while (k > 0 && (st->open[k - 1].pid != pid || strcmp(st->open[k - 1].tid, tid) != 0))
        k--;
    if (k == 0)
        return chrome_event_fail(st, it, e, "an E event with no B open on pid %d, tid %s", pid,
                                 tid[0] ? tid + (tid[0] == 's' && tid[1] == ':' ? 2 : 0)
                                        : "(none)");
    struct chrome_open o = st->open[k - 1];
    memmove(&st->open[k - 1], &st->open[k], (st->n_open - k) * sizeof *st->open);
    st->n_open--;
    const cJSON *jname = cJSON_GetObjectItemCaseSensitive(o.ev, "name");
    const char *name = cJSON_IsString(jname) ? jname->valuestring : "";
    int rc = MT_OK;
    if (ts < o.ts) {
        rc = chrome_event_fail(st, it, e, "\"%.60s\": E at %.17g us is before its B at %.17g us",
                               name, ts, o.ts);
        goto done;
    }
    const cJSON *eargs = cJSON_GetObjectItemCaseSensitive(ev, "args");
    if (cJSON_IsObject(eargs) && eargs->child != NULL) {
        cJSON *bargs = cJSON_GetObjectItemCaseSensitive(o.ev, "args");
        if (!cJSON_IsObject(bargs)) {
            cJSON_DeleteItemFromObjectCaseSensitive(o.ev, "args");
            bargs = cJSON_AddObjectToObject(o.ev, "args");
        }
        for (const cJSON *a = eargs->child; a != NULL && bargs != NULL; a = a->next) {
            if (a->string == NULL)
                continue;
            cJSON_DeleteItemFromObjectCaseSensitive(bargs, a->string);
            cJSON_AddItemToObject(bargs, a->string, cJSON_Duplicate(a, true));
        }
    }
    cJSON_DeleteItemFromObjectCaseSensitive(o.ev, "dur");
    cJSON_AddNumberToObject(o.ev, "dur", ts - o.ts);
    const cJSON *jcat = cJSON_GetObjectItemCaseSensitive(o.ev, "cat");
    rc = chrome_complete(st, it, o.ev, name, cJSON_IsString(jcat) ? jcat->valuestring : NULL, o.pid,
                         o.ts, e);
done:
    cJSON_Delete(o.ev);
    return rc;
}

static int chrome_event(struct chrome_state *st, const struct scan_item *it, struct mt_err *e)
{
    const char *end = NULL;
    cJSON *ev = cJSON_ParseWithLengthOpts(it->text, it->len, &end, false);
    if (ev == NULL) {
        long line, col;
        scan_where(it, end && end >= it->text ? (size_t)(end - it->text) : 0, &line, &col);
        return err_set(e, MT_EPARSE, "%s:%ld:%ld: event %zu: malformed JSON", st->name, line, col,
                       it->index);
    }
    int rc = MT_OK;
    trace_info_edit(st->t)->events_read++;
    if (!cJSON_IsObject(ev)) {
        rc = chrome_event_fail(st, it, e, "expected an object");
        goto done;
    }
    const cJSON *jph = cJSON_GetObjectItemCaseSensitive(ev, "ph");
    const cJSON *jname = cJSON_GetObjectItemCaseSensitive(ev, "name");
    const cJSON *jcat = cJSON_GetObjectItemCaseSensitive(ev, "cat");
    const char *ph = cJSON_IsString(jph) ? jph->valuestring : "";
    const char *name = cJSON_IsString(jname) ? jname->valuestring : "";
    const char *cat = cJSON_IsString(jcat) ? jcat->valuestring : NULL;
    bool timed = strcmp(ph, "X") == 0 || strcmp(ph, "C") == 0 || strcmp(ph, "i") == 0 ||
                 strcmp(ph, "I") == 0 || strcmp(ph, "B") == 0 || strcmp(ph, "E") == 0;
    if (!timed) {
        trace_info_edit(st->t)->events_ignored++;
        goto done;
    }
    double ts = 0;
    const cJSON *jts = cJSON_GetObjectItemCaseSensitive(ev, "ts");
    if (!kineto_number(jts, &ts) || fabs(ts) > CHROME_MAX_US) {
        rc = chrome_event_fail(st, it, e, "\"%.60s\": ts: %s", name,
                               !jts                       ? "missing"
                               : fabs(ts) > CHROME_MAX_US ? "out of range"
                                                          : "expected a number (microseconds)");
        goto done;
    }
    int pid = chrome_pid(st, cJSON_GetObjectItemCaseSensitive(ev, "pid"));
    if (ph[0] == 'X') {
        rc = chrome_complete(st, it, ev, name, cat, pid, ts, e);
    } else if (ph[0] == 'B') {
        rc = chrome_begin(st, it, ev, name, pid, ts, e);
        ev = NULL; /* taken over */
    } else if (ph[0] == 'E') {
        rc = chrome_end(st, it, ev, pid, ts, e);
    } else if (ph[0] == 'C') {
        rc = chrome_counter(st, ev, name, pid, ts);
    } else {
        double bytes;
        bool gpu;
        int dev_id;
        if (kineto_memory(ev, &bytes, &gpu, &dev_id))
            chrome_kineto_memory(st, ts, bytes, gpu, dev_id, pid);
        else
            trace_info_edit(st->t)->events_ignored++;
    }
done:
    cJSON_Delete(ev);
    return rc;
}

static void chrome_copy(char *dst, size_t n, const cJSON *j)
{
    if (cJSON_IsString(j))
        snprintf(dst, n, "%s", j->valuestring);
}

static int chrome_member(struct chrome_state *st, const struct scan_item *it, struct mt_err *e)
{
    const char *key = it->key;
    bool want = strcmp(key, "otherData") == 0 || strcmp(key, "distributedInfo") == 0 ||
                strcmp(key, "deviceProperties") == 0;
    if (strcmp(key, "schemaVersion") == 0)
        st->cf->kineto = true;
    if (!want)
        return MT_OK;
    const char *end = NULL;
    cJSON *j = cJSON_ParseWithLengthOpts(it->text, it->len, &end, false);
    if (j == NULL) {
        long line, col;
        scan_where(it, end && end >= it->text ? (size_t)(end - it->text) : 0, &line, &col);
        return err_set(e, MT_EPARSE, "%s:%ld:%ld: %s: malformed JSON", st->name, line, col, key);
    }
    struct trace_info *in = trace_info_edit(st->t);
    if (strcmp(key, "otherData") == 0 && cJSON_IsObject(j)) {
        chrome_copy(in->source, sizeof in->source, cJSON_GetObjectItemCaseSensitive(j, "source"));
        chrome_copy(in->scheme, sizeof in->scheme, cJSON_GetObjectItemCaseSensitive(j, "scheme"));
        chrome_copy(in->model, sizeof in->model, cJSON_GetObjectItemCaseSensitive(j, "model"));
        chrome_copy(in->backend, sizeof in->backend,
                    cJSON_GetObjectItemCaseSensitive(j, "backend"));
        const cJSON *tu = cJSON_GetObjectItemCaseSensitive(j, "time_unit");
        if (cJSON_IsString(tu) && tu->valuestring[0] == 't')
            in->unit = true;
        double v;
        if (kineto_number(cJSON_GetObjectItemCaseSensitive(j, "step_time_us"), &v))
            in->step_time_us = v;
        const cJSON *cfg = cJSON_GetObjectItemCaseSensitive(j, "config");
        if (cJSON_IsObject(cfg)) {
            char *text = cJSON_PrintUnformatted(cfg);
            if (text != NULL)
                trace_set_config_text(st->t, text);
            cJSON_free(text);
        }
    } else if (strcmp(key, "distributedInfo") == 0 && cJSON_IsObject(j)) {
        double r;
        st->cf->kineto = true;
        if (kineto_number(cJSON_GetObjectItemCaseSensitive(j, "rank"), &r) && r >= 0 &&
            r < CONFIG_MAX_DEVICES && r == floor(r))
            st->cf->rank = (int)r;
    } else if (strcmp(key, "deviceProperties") == 0 && cJSON_IsArray(j)) {
        st->cf->kineto = true;
        const cJSON *d0 = cJSON_GetArrayItem(j, 0);
        if (cJSON_IsObject(d0))
            chrome_copy(in->device_name, sizeof in->device_name,
                        cJSON_GetObjectItemCaseSensitive(d0, "name"));
    }
    cJSON_Delete(j);
    return MT_OK;
}

static int chrome_span_cmp(const void *a, const void *b)
{
    const struct chrome_span *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* What is known at the end of the file: ProfilerStep spans give the steps of Kineto events,
 * our ranks' devices give the devices of their memory samples, [memory] samples of the device
 * (if any) are kept over the host's. */
static void chrome_finish(struct chrome_state *st)
{
    size_t n;
    struct trace_event *ev = trace_events_edit(st->t, &n);
    if (st->pp_gpu) { /* the GPU copies of torch's actions only */
        size_t k = st->first_ev, p = 0;
        for (size_t i = st->first_ev; i < n; i++) {
            while (p < st->n_pp && st->pp[p].i < i)
                p++;
            if (p < st->n_pp && st->pp[p].i == i && !st->pp[p].gpu) {
                trace_info_edit(st->t)->events_ignored++;
                continue;
            }
            ev[k++] = ev[i];
        }
        trace_events_truncate(st->t, k);
        n = k;
    }
    if (st->n_spans > 1) /* spans is NULL when there are none: qsort's pointer must not be */
        qsort(st->spans, st->n_spans, sizeof *st->spans, chrome_span_cmp);
    int min_step = 0;
    for (size_t k = 0; k < st->n_spans; k++)
        if (k == 0 || st->spans[k].n < min_step)
            min_step = st->spans[k].n;
    for (size_t i = st->first_ev; i < n; i++) {
        if (ev[i].step >= 0)
            continue;
        int step = 0;
        if (st->n_spans > 0) {
            /* the last span that started at or before the event */
            size_t lo = 0, hi = st->n_spans;
            while (hi - lo > 1) {
                size_t mid = (lo + hi) / 2;
                if (st->spans[mid].start <= ev[i].start_us)
                    lo = mid;
                else
                    hi = mid;
            }
            step = st->spans[lo].n - min_step;
        }
        ev[i].step = step;
    }
    for (size_t k = 0; k < st->n_kmem; k++) {
        const struct chrome_kmem *km = &st->kmem[k];
        if (km->gpu != st->kmem_gpu)
            continue;
        struct trace_mem m = {km->t_us, km->bytes, -1, 0, -1, st->file, km->pid};
        trace_add_mem(st->t, &m);
    }
    size_t nm;
    struct trace_mem *mem = trace_mems_edit(st->t, &nm);
    for (size_t i = st->first_mem; i < nm; i++) {
        if (mem[i].dev >= 0 || !st->cf->ours)
            continue;
        int pid = mem[i].pid;
        if (pid >= 0 && pid < st->n_rank && st->rank_dev[pid] >= 0) {
            mem[i].dev = st->rank_dev[pid];
            mem[i].replica = st->rank_rep[pid];
        } else {
            mem[i].dev = pid < CONFIG_MAX_DEVICES ? pid : 0;
        }
        mem[i].rank = pid;
    }
}

int chrome_read(struct scan *s, int file, const struct mapping *map, struct trace *t,
                struct chrome_file *out, struct mt_err *e)
{
    memset(out, 0, sizeof *out);
    out->rank = -1;
    struct chrome_state st = {0};
    st.name = scan_name(s);
    st.file = file;
    st.map = map;
    st.t = t;
    st.cf = out;
    trace_events(t, &st.first_ev);
    trace_mems(t, &st.first_mem);
    int rc;
    for (;;) {
        struct scan_item it;
        rc = scan_next(s, &it, e);
        if (rc != MT_OK || it.kind == SCAN_END)
            break;
        rc = it.kind == SCAN_EVENT ? chrome_event(&st, &it, e) : chrome_member(&st, &it, e);
        if (rc != MT_OK)
            break;
    }
    /* a B never closed (the run was cut short): left out */
    trace_info_edit(t)->events_ignored += st.n_open;
    for (size_t i = 0; i < st.n_open; i++)
        cJSON_Delete(st.open[i].ev);
    free(st.open);
    if (rc == MT_OK) {
        chrome_finish(&st);
        size_t n;
        trace_events(t, &n);
        out->events_kept = n - st.first_ev;
    }
    for (int i = 0; i < st.n_pid_names; i++)
        free(st.pid_names[i]);
    free(st.pid_names);
    free(st.rank_dev);
    free(st.rank_rep);
    free(st.spans);
    free(st.kmem);
    free(st.pp);
    return rc;
}
