/* tests/fuzz/fuzz_trace.c: the checks shared by fuzz_chrome, fuzz_kineto and fuzz_gzip.
 * Invariants: a refusal is MT_EPARSE, MT_EINVAL, MT_ENOMEM or MT_EIO (a gzip stream) with a
 * message that names the file and leaves *out NULL; in an accepted trace every event has
 * finite times with start <= end, a device in [0, devices), a step in [0, steps), an op that
 * is a plan op or a trace pseudo-op, and every memory sample finite times on a known device;
 * matching it against a plan (align_run) succeeds or refuses with a message, and a match
 * accounts for every instruction (matched + missing = total) with finite or NaN times.
 * Built with -DFUZZ_PARSE_ONLY (fuzz_chrome_parse, fuzz_kineto_parse) the match is left out. */
#include <config.h>
#include "tests/fuzz/fuzz_trace.h"

#include <math.h>
#include <string.h>

#include "model/config.h"
#include "sim/plan/plan.h"
#include "sim/schemes/scheme.h"
#include "tests/fuzz/fuzz.h"
#include "traces/align.h"
#include "traces/trace.h"
#include "util/err.h"

#ifndef FUZZ_PARSE_ONLY
/* The plan of the seeds: V on 2 devices, 2 micro-batches, unit costs; built once. */
static struct plan *fuzz_trace_plan(void)
{
    static struct plan *p;
    if (p == NULL) {
        struct config c;
        struct mt_err e;
        config_default(&c);
        c.num_device = 2;
        c.num_microbatches = 2;
        c.global_batch_size = 2;
        c.unit.enabled = true;
        FUZZ_CHECK(scheme_build(&c, &p, &e) == MT_OK, "no plan: %s", e.msg);
    }
    return p;
}
#endif

static void fuzz_trace_check(const struct trace *t)
{
    const struct trace_info *in = trace_info(t);
    size_t n, nm;
    const struct trace_event *ev = trace_events(t, &n);
    const struct trace_mem *mem = trace_mems(t, &nm);
    FUZZ_CHECK(n > 0 && n <= TRACE_MAX_EVENTS, "%zu events", n);
    for (size_t i = 0; i < n; i++) {
        const struct trace_event *v = &ev[i];
        FUZZ_CHECK(isfinite(v->start_us) && isfinite(v->end_us) && v->start_us <= v->end_us,
                   "event %zu: %g .. %g us", i, v->start_us, v->end_us);
        FUZZ_CHECK(v->dev >= 0 && v->dev < in->devices, "event %zu: device %d of %d", i, v->dev,
                   in->devices);
        FUZZ_CHECK(v->step >= 0 && v->step < in->steps, "event %zu: step %d of %d", i, v->step,
                   in->steps);
        FUZZ_CHECK((v->op >= 0 && v->op < OP__COUNT) || v->op == TRACE_OP_COMPUTE ||
                       v->op == TRACE_OP_COMM,
                   "event %zu: op %d", i, v->op);
    }
    for (size_t i = 0; i < nm; i++)
        FUZZ_CHECK(isfinite(mem[i].t_us) && isfinite(mem[i].bytes) && mem[i].dev >= 0 &&
                       mem[i].dev < in->devices,
                   "memory sample %zu: %g us, %g bytes, device %d", i, mem[i].t_us, mem[i].bytes,
                   mem[i].dev);
}

#ifndef FUZZ_PARSE_ONLY
static void fuzz_trace_align(const struct trace *t)
{
    const struct plan *p = fuzz_trace_plan();
    struct align_opts o = {.step = -1};
    struct align_result r;
    struct mt_err e;
    err_clear(&e);
    int rc = align_run(p, t, &o, &r, &e);
    if (rc != MT_OK) {
        FUZZ_CHECK(e.msg[0] != '\0' && e.code == rc, "align refused (%d) without a message", rc);
        return;
    }
    FUZZ_CHECK(r.total == plan_total(p) && r.matched + r.missing == r.total,
               "%d matched + %d missing of %d", r.matched, r.missing, r.total);
    for (int i = 0; i < r.total; i++)
        FUZZ_CHECK((isnan(r.start[i]) && isnan(r.end[i])) ||
                       (isfinite(r.start[i]) && isfinite(r.end[i])),
                   "instruction %d: %g .. %g", i, r.start[i], r.end[i]);
    align_result_fini(&r);
}
#endif

void fuzz_trace_result(int rc, struct trace *t, const struct mt_err *e, const char *name)
{
    if (rc != MT_OK) {
        FUZZ_CHECK(rc == MT_EPARSE || rc == MT_EINVAL || rc == MT_ENOMEM || rc == MT_EIO,
                   "unexpected code %d: %s", rc, e->msg);
        FUZZ_CHECK(e->code == rc, "code %d but the message says %d", rc, e->code);
        FUZZ_CHECK(strstr(e->msg, name) != NULL, "message does not name the file: %s", e->msg);
        FUZZ_CHECK(t == NULL, "*out not NULL on failure");
        return;
    }
    fuzz_trace_check(t);
#ifndef FUZZ_PARSE_ONLY /* fuzz_chrome_parse, fuzz_kineto_parse: the readers alone */
    fuzz_trace_align(t);
#endif
}

void fuzz_trace_one(const char *data, size_t size, const char *name, const struct mapping *map)
{
    struct trace_opts o = {.map = map, .replica = 0};
    struct trace *t = (struct trace *)&o; /* must become NULL on failure */
    struct mt_err e;
    err_clear(&e);
    int rc = trace_load_mem(data, size, name, &o, &t, &e);
    fuzz_trace_result(rc, t, &e, name);
    if (rc == MT_OK)
        trace_free(t);
}
