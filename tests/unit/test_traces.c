/* tests/unit/test_traces.c: the trace readers, alignment, accuracy figures and calibration
 * (issue 8). Expected values are known by construction: a measured trace built by hand from
 * a simulation with every time stretched by 1.25 has a step-time error of exactly -20 %; a
 * calibration fitted to traces simulated with a known profile gives that profile back. Also:
 * our exporter -> importer round trip is exact, Kineto samples written by hand (object and
 * array form, string pids, gzip, one file per rank, NCCL kernels, [memory]) are read, a mapping
 * file maps foreign names, and truncated or malformed traces fail with the file named. */
#include <config.h>

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "model/config.h"
#include "model/cost.h"
#include "model/presets.h"
#include "model/profile.h"
#include "sim/plan/plan.h"
#include "sim/schemes/scheme.h"
#include "sim/core/simulate.h"
#include "tests/check.h"
#include "traces/accuracy.h"
#include "traces/align.h"
#include "traces/calibrate.h"
#include "traces/chrome.h"
#include "traces/mapping.h"
#include "traces/scan.h"
#include "traces/trace.h"
#include "util/err.h"
#include "util/str.h"
#include "util/xalloc.h"

static char tmpdir[256];

/* ---- a small text builder ---------------------------------------------------------------- */

struct buf {
    char *s;
    size_t n, cap;
};

static void bprintf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void bprintf(struct buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (b->n + (size_t)k + 1 > b->cap) {
        b->cap = 2 * (b->n + (size_t)k + 1);
        b->s = xreallocarray(b->s, b->cap, 1);
    }
    va_start(ap, fmt);
    vsnprintf(b->s + b->n, (size_t)k + 1, fmt, ap);
    va_end(ap);
    b->n += (size_t)k;
}

static const char *tmp_path(const char *name)
{
    static char path[8][512];
    static int k;
    k = (k + 1) % 8;
    snprintf(path[k], sizeof path[k], "%s/%s", tmpdir, name);
    return path[k];
}

static void write_file(const char *path, const char *text, size_t len, bool gz)
{
    if (gz) {
        gzFile f = gzopen(path, "wb");
        gzwrite(f, text, (unsigned)len);
        gzclose(f);
        return;
    }
    FILE *f = fopen(path, "wb");
    fwrite(text, 1, len, f);
    fclose(f);
}

static struct plan *unit_plan(enum scheme_id s, int D, int N)
{
    struct config c;
    config_default(&c);
    c.scheme = s;
    c.num_device = D;
    c.num_microbatches = N;
    c.unit.enabled = true;
    struct plan *p = NULL;
    struct mt_err e = {0};
    if (scheme_build(&c, &p, &e) != MT_OK)
        fprintf(stderr, "build: %s\n", e.msg);
    return p;
}

/* ---- scan ---------------------------------------------------------------------------------- */

static int scan_count(const char *text, const char *name, size_t *events, size_t *members,
                      struct mt_err *e)
{
    struct scan *s;
    *events = *members = 0;
    TRY(scan_open_mem(text, strlen(text), name, &s, e));
    int rc;
    for (;;) {
        struct scan_item it;
        rc = scan_next(s, &it, e);
        if (rc != MT_OK || it.kind == SCAN_END)
            break;
        if (it.kind == SCAN_EVENT)
            (*events)++;
        else
            (*members)++;
    }
    scan_close(s);
    return rc;
}

static void test_scan(void)
{
    size_t ev, mem;
    struct mt_err e = {0};
    CHECK_EQ_INT(scan_count("{\"a\": {\"x\": [1, \"]}\"]}, \"traceEvents\": [{\"ph\": \"X\"}, "
                            "{\"s\": \"\\\"}{\"}], \"b\": 2}",
                            "obj.json", &ev, &mem, &e),
                 MT_OK);
    CHECK_EQ_INT(ev, 2);
    CHECK_EQ_INT(mem, 2);
    /* the array form may end without ']' and after a trailing ',' */
    CHECK_EQ_INT(scan_count("[{\"ph\": \"X\"},\n{\"ph\": \"C\"},\n", "arr.json", &ev, &mem, &e),
                 MT_OK);
    CHECK_EQ_INT(ev, 2);
    CHECK_EQ_INT(scan_count("\xEF\xBB\xBF [ ]", "bom.json", &ev, &mem, &e), MT_OK);
    CHECK_EQ_INT(ev, 0);
    /* but the object form may not be cut */
    CHECK_EQ_INT(
        scan_count("{\"traceEvents\": [{\"ph\": \"X\"},\n  {\"ph\": ", "cut.json", &ev, &mem, &e),
        MT_EPARSE);
    CHECK_STR_CONTAINS(e.msg, "cut.json:2:");
    CHECK_STR_CONTAINS(e.msg, "truncated");
    CHECK_EQ_INT(scan_count("", "empty.json", &ev, &mem, &e), MT_EPARSE);
    CHECK_STR_CONTAINS(e.msg, "empty.json");
    CHECK_EQ_INT(scan_count("{\"traceEvents\": [{]}", "bad.json", &ev, &mem, &e), MT_EPARSE);
    CHECK_STR_CONTAINS(e.msg, "bad.json:1:");
    CHECK_EQ_INT(scan_count("[{}] x", "tail.json", &ev, &mem, &e), MT_EPARSE);
    CHECK_EQ_INT(scan_count("{\"traceEvents\": 3}", "type.json", &ev, &mem, &e), MT_EPARSE);
    CHECK_STR_CONTAINS(e.msg, "an array for \"traceEvents\"");
}

/* ---- our traces: the exporter -> importer round trip ------------------------------------ */

static void test_round_trip(void)
{
    enum scheme_id schemes[] = {SCHEME_V, SCHEME_X, SCHEME_W, SCHEME_GPIPE};
    for (int k = 0; k < 4; k++) {
        struct config c;
        config_default(&c);
        c.scheme = schemes[k];
        c.num_device = 4;
        c.num_microbatches = 8;
        struct plan *p = NULL;
        struct mt_err e = {0};
        CHECK_EQ_INT(scheme_build(&c, &p, &e), MT_OK);
        struct sim_result r;
        CHECK_EQ_INT(sim_run(p, &r, &e), MT_OK);
        char *text = chrome_from_sim(p, &r);
        struct trace *t = NULL;
        CHECK_EQ_INT(trace_load_mem(text, strlen(text), "sim.json", NULL, &t, &e), MT_OK);
        if (t == NULL) {
            fprintf(stderr, "%s\n", e.msg);
            free(text);
            sim_result_fini(&r);
            plan_free(p);
            continue;
        }
        CHECK(strcmp(trace_info(t)->source, "simulated") == 0);
        CHECK_NEAR(trace_info(t)->step_time_us, r.step_time, 1e-9 * r.step_time);
        struct align_result m;
        struct align_opts ao = {.step = -1};
        CHECK_EQ_INT(align_run(p, t, &ao, &m, &e), MT_OK);
        CHECK_EQ_INT(m.matched, plan_total(p));
        CHECK_EQ_INT(m.missing, 0);
        CHECK_EQ_INT((long)m.extra, 0);
        double worst = 0;
        for (int i = 0; i < plan_total(p); i++) {
            worst = fmax(worst, fabs(m.start[i] - r.start[i]));
            worst = fmax(worst, fabs(m.end[i] - r.end[i]));
        }
        CHECK(worst <= 1e-9 * r.step_time); /* identical timings */
        CHECK_NEAR(m.step_time_us, r.step_time, 1e-9 * r.step_time);
        for (int d = 0; d < plan_devices(p); d++)
            CHECK_NEAR(m.peak_bytes[d], r.dev[d].peak_mem, 1e-9 * r.dev[d].peak_mem);
        struct accuracy a;
        accuracy_compute(p, &r, &m, &a);
        CHECK_NEAR(a.step_err_pct, 0, 1e-9);
        CHECK_NEAR(a.time_mape_pct, 0, 1e-9);
        CHECK_NEAR(a.peak_mape_pct, 0, 1e-9);
        accuracy_fini(&a);
        /* and the trace stands for its plan */
        struct plan *q = NULL;
        struct sim_result rq;
        CHECK_EQ_INT(align_trace_plan(t, &q, &rq, &e), MT_OK);
        if (q != NULL) {
            CHECK_EQ_INT(plan_total(q), plan_total(p));
            CHECK_NEAR(rq.step_time, r.step_time, 1e-9 * r.step_time);
            int diff = 0;
            for (int d = 0; d < plan_devices(p); d++)
                for (int i = 0; i < plan_len(p, d) && i < plan_len(q, d); i++) {
                    const struct instr *x = plan_at(p, d, i), *y = plan_at(q, d, i);
                    diff += x->op != y->op || x->mb != y->mb || x->stage != y->stage ||
                            x->part != y->part;
                }
            CHECK_EQ_INT(diff, 0);
            sim_result_fini(&rq);
            plan_free(q);
        }
        align_result_fini(&m);
        trace_free(t);
        free(text);
        sim_result_fini(&r);
        plan_free(p);
    }
}

/* ---- a measured trace with known errors ------------------------------------------------- */

/* Our measured format: step 0 (warm-up) 2x slower, steps 1 and 2 1.25x; device 0's FW0 takes
 * twice its time in every step; memory samples 1.1x the simulated curve. With begin_end, every
 * instruction is a "B" and an "E" event instead of an "X" (the step in the E's args only), p2p
 * on a thread of its own, inside a step-long "B"/"E" pair on each thread that the reader
 * leaves out (no keys), the two closed in the order they were opened (not nested across
 * threads); a last "B" is never closed. */
static char *known_trace(const struct plan *p, const struct sim_result *r, bool begin_end)
{
    struct buf b = {0};
    bprintf(&b, "{\"traceEvents\": [\n");
    bool first = true;
    for (int step = 0; step < 3; step++) {
        double k = step == 0 ? 2.0 : 1.25, t0 = 1e6 * step + 500;
        for (int d = 0; d < plan_devices(p); d++) {
            if (begin_end)
                for (int tid = 0; tid < 2; tid++) {
                    bprintf(&b,
                            "%s{\"name\": \"step\", \"ph\": \"B\", \"ts\": %.17g, \"pid\": %d, "
                            "\"tid\": %d}\n",
                            first ? "" : ",", t0 - 100, d, tid);
                    first = false;
                }
            for (int i = 0; i < plan_len(p, d); i++) {
                const struct instr *in = plan_at(p, d, i);
                int id = plan_id(p, d, i);
                double s = r->start[id] * 1000 * k, dur = (r->end[id] - r->start[id]) * 1000 * k;
                if (d == 0 && in->op == OP_FW && in->mb == 0)
                    dur = (r->end[id] - r->start[id]) * 1000 * 2;
                if (begin_end) {
                    int tid =
                        in->op == OP_SA || in->op == OP_RA || in->op == OP_SG || in->op == OP_RG;
                    bprintf(&b,
                            ",{\"name\": \"x\", \"ph\": \"B\", \"ts\": %.17g, \"pid\": %d, "
                            "\"tid\": %d, \"args\": {\"op\": \"%s\", \"mb\": %d, \"part\": %d, "
                            "\"stage\": %d}}\n"
                            ",{\"ph\": \"E\", \"ts\": %.17g, \"pid\": %d, \"tid\": %d, "
                            "\"args\": {\"step\": %d}}\n",
                            t0 + s, d, tid, plan_op_name(in->op), in->mb, in->part, in->stage,
                            t0 + s + dur, d, tid, step);
                    continue;
                }
                bprintf(&b,
                        "%s{\"name\": \"x\", \"ph\": \"X\", \"ts\": %.17g, \"dur\": %.17g, "
                        "\"pid\": %d, \"tid\": 0, \"args\": {\"op\": \"%s\", \"mb\": %d, "
                        "\"part\": %d, \"stage\": %d, \"step\": %d}}\n",
                        first ? "" : ",", t0 + s, dur, d, plan_op_name(in->op), in->mb, in->part,
                        in->stage, step);
                first = false;
            }
            if (begin_end)
                for (int tid = 0; tid < 2; tid++)
                    bprintf(&b, ",{\"ph\": \"E\", \"ts\": %.17g, \"pid\": %d, \"tid\": %d}\n",
                            t0 + r->step_time * 1000 * k + 100, d, tid);
            const struct sim_device *dv = &r->dev[d];
            for (int j = 0; j < dv->curve_len; j++)
                bprintf(&b,
                        ",{\"name\": \"memory\", \"ph\": \"C\", \"ts\": %.17g, \"pid\": %d, "
                        "\"args\": {\"bytes\": %.17g}}\n",
                        t0 + dv->curve_t[j] * 1000 * k, d, dv->curve_mem[j] * 1.1);
        }
    }
    if (begin_end)
        bprintf(&b, ",{\"name\": \"cut short\", \"ph\": \"B\", \"ts\": 4e6, \"pid\": 0, "
                    "\"tid\": 0, \"args\": {\"op\": \"FW\", \"mb\": 0, \"stage\": 0}}\n");
    bprintf(&b, "], \"otherData\": {\"source\": \"measured\", \"backend\": \"cpu\"}}\n");
    return b.s;
}

static void test_known_errors(bool begin_end)
{
    struct plan *p = unit_plan(SCHEME_V, 2, 2);
    CHECK(p != NULL);
    if (p == NULL)
        return;
    struct sim_result r;
    struct mt_err e = {0};
    CHECK_EQ_INT(sim_run(p, &r, &e), MT_OK);
    char *text = known_trace(p, &r, begin_end);
    const char *path = tmp_path("known.json");
    write_file(path, text, strlen(text), false);
    struct trace *t = NULL;
    CHECK_EQ_INT(trace_load(&path, 1, NULL, &t, &e), MT_OK);
    if (t == NULL) {
        fprintf(stderr, "%s\n", e.msg);
        return;
    }
    CHECK_EQ_INT(trace_info(t)->steps, 3);
    CHECK_EQ_INT(trace_info(t)->devices, 2);
    size_t n_ev;
    trace_events(t, &n_ev);
    CHECK_EQ_INT((long)n_ev, 3L * plan_total(p)); /* step spans and the unclosed B left out */
    if (begin_end)                                /* 2 x 2 step spans per step, the unclosed B */
        CHECK_EQ_INT((long)trace_info(t)->events_ignored, 3 * 4 + 1);
    struct align_result m;
    struct align_opts ao = {.step = -1};
    CHECK_EQ_INT(align_run(p, t, &ao, &m, &e), MT_OK);
    CHECK_EQ_INT(m.first_step, 1); /* the warm-up step is left out */
    CHECK_EQ_INT(m.steps_used, 2);
    CHECK_EQ_INT(m.matched, plan_total(p));
    struct accuracy a;
    accuracy_compute(p, &r, &m, &a);
    CHECK_NEAR(a.step_err_pct, -20.0, 1e-9);
    /* four FW, one of them 2x: (3 x 20 + 50) / 4 */
    CHECK_NEAR(a.op[OP_FW].mape_pct, 27.5, 1e-9);
    CHECK_NEAR(a.op[OP_BW].mape_pct, 20.0, 1e-9);
    CHECK_NEAR(a.dev[0].mape_pct, 27.5, 1e-9);
    CHECK_NEAR(a.dev[1].mape_pct, 20.0, 1e-9);
    CHECK(isnan(a.op[OP_RA].mape_pct)); /* waits are listed, not scored */
    CHECK_NEAR(a.peak_mape_pct, 100.0 * 0.1 / 1.1, 1e-9);
    CHECK_NEAR(a.dev[1].peak_err_pct, -100.0 * 0.1 / 1.1, 1e-9);
    CHECK(a.n_worst >= 1);
    if (a.n_worst >= 1) {
        int d, i;
        plan_locate_id(p, a.worst[0].id, &d, &i);
        CHECK_EQ_INT(d, 0);
        CHECK_EQ_INT(plan_at(p, d, i)->op, OP_FW);
        CHECK_EQ_INT(plan_at(p, d, i)->mb, 0);
        CHECK_NEAR(a.worst[0].err_pct, -50.0, 1e-9);
    }
    accuracy_fini(&a);
    align_result_fini(&m);
    /* step 0 alone: the warm-up, 2x slower: -50 % */
    ao.step = 0;
    CHECK_EQ_INT(align_run(p, t, &ao, &m, &e), MT_OK);
    accuracy_compute(p, &r, &m, &a);
    CHECK_NEAR(a.step_err_pct, -50.0, 1e-9);
    accuracy_fini(&a);
    align_result_fini(&m);
    ao.step = 7;
    CHECK_EQ_INT(align_run(p, t, &ao, &m, &e), MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "step 7");
    /* a plan with more devices than the trace: the rest is missing */
    struct plan *p4 = unit_plan(SCHEME_V, 4, 2);
    ao.step = -1;
    CHECK_EQ_INT(align_run(p4, t, &ao, &m, &e), MT_OK);
    CHECK(m.missing > 0);
    align_result_fini(&m);
    plan_free(p4);
    trace_free(t);
    free(text);
    sim_result_fini(&r);
    plan_free(p);
}

/* "B"/"E" pairs that do not pair. */
static void test_begin_end_errors(void)
{
    struct trace *t = NULL;
    struct mt_err e = {0};
    static const char lone[] =
        "[{\"ph\": \"B\", \"name\": \"a\", \"ts\": 1, \"pid\": 0, \"tid\": 0},\n"
        "{\"ph\": \"E\", \"ts\": 2, \"pid\": 0, \"tid\": 7}]";
    CHECK_EQ_INT(trace_load_mem(lone, strlen(lone), "lone.json", NULL, &t, &e), MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "lone.json:2:");
    CHECK_STR_CONTAINS(e.msg, "no B open on pid 0, tid 7");
    static const char back[] = "[{\"ph\": \"B\", \"name\": \"FW0\", \"ts\": 9, \"pid\": \"r\", "
                               "\"tid\": \"main\", \"args\": {\"op\": \"FW\", \"mb\": 0}},\n"
                               "{\"ph\": \"E\", \"ts\": 8, \"pid\": \"r\", \"tid\": \"main\"}]";
    CHECK_EQ_INT(trace_load_mem(back, strlen(back), "back.json", NULL, &t, &e), MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "\"FW0\": E at 8 us is before its B at 9 us");
    /* nested on one thread: the inner pair closes first; string tids */
    static const char nest[] =
        "[{\"ph\": \"B\", \"name\": \"FW0\", \"ts\": 10, \"pid\": 0, \"tid\": \"main\", "
        "\"args\": {\"op\": \"FW\", \"mb\": 0, \"stage\": 0}},\n"
        "{\"ph\": \"B\", \"name\": \"FW1\", \"ts\": 12, \"pid\": 0, \"tid\": \"main\", "
        "\"args\": {\"op\": \"FW\", \"mb\": 1, \"stage\": 0}},\n"
        "{\"ph\": \"B\", \"name\": \"BW0\", \"ts\": 13, \"pid\": 0, \"tid\": \"side\", "
        "\"args\": {\"op\": \"BW\", \"mb\": 0, \"stage\": 0}},\n"
        "{\"ph\": \"E\", \"ts\": 15, \"pid\": 0, \"tid\": \"main\"},\n"
        "{\"ph\": \"E\", \"ts\": 20, \"pid\": 0, \"tid\": \"main\", \"args\": {\"mb\": 5}},\n"
        "{\"ph\": \"E\", \"ts\": 30, \"pid\": 0, \"tid\": \"side\"}]";
    CHECK_EQ_INT(trace_load_mem(nest, strlen(nest), "nest.json", NULL, &t, &e), MT_OK);
    if (t != NULL) {
        size_t n;
        const struct trace_event *ev = trace_events(t, &n);
        CHECK_EQ_INT((long)n, 3);
        if (n == 3) {
            /* FW1 [12, 15]; FW0 [10, 20] with its mb replaced by the E's; BW0 [13, 30] */
            CHECK_EQ_INT(ev[0].mb, 1);
            CHECK_NEAR(ev[0].start_us, 12, 0);
            CHECK_NEAR(ev[0].end_us, 15, 0);
            CHECK_EQ_INT(ev[1].op, OP_FW);
            CHECK_EQ_INT(ev[1].mb, 5);
            CHECK_NEAR(ev[1].start_us, 10, 0);
            CHECK_NEAR(ev[1].end_us, 20, 0);
            CHECK_EQ_INT(ev[2].op, OP_BW);
            CHECK_NEAR(ev[2].end_us - ev[2].start_us, 17, 0);
        }
        trace_free(t);
        t = NULL;
    }
    /* every cut of a B/E trace is an error naming the file, but the last: the array form may
     * leave its "]" out (a run that crashed) */
    static const char pair[] =
        "[{\"ph\": \"B\", \"name\": \"x\", \"ts\": 1, \"pid\": 0, \"tid\": 0, "
        "\"args\": {\"op\": \"FW\", \"mb\": 0}}, {\"ph\": \"E\", \"ts\": 2, "
        "\"pid\": 0, \"tid\": 0}]";
    for (size_t cut = 0; cut < sizeof pair - 2; cut++) {
        int rc = trace_load_mem(pair, cut, "pair.json", NULL, &t, &e);
        CHECK(rc != MT_OK);
        if (rc != MT_OK)
            CHECK_STR_CONTAINS(e.msg, "pair.json");
        trace_free(t);
        t = NULL;
    }
    CHECK_EQ_INT(trace_load_mem(pair, sizeof pair - 2, "pair.json", NULL, &t, &e), MT_OK);
    if (t != NULL) {
        size_t n;
        trace_events(t, &n);
        CHECK_EQ_INT((long)n, 1);
        trace_free(t);
    }
}

/* ---- malformed and truncated traces ------------------------------------------------------ */

static void test_bad_traces(void)
{
    struct plan *p = unit_plan(SCHEME_V, 2, 2);
    struct sim_result r;
    struct mt_err e = {0};
    CHECK_EQ_INT(sim_run(p, &r, &e), MT_OK);
    char *text = chrome_from_sim(p, &r);
    size_t len = strlen(text);
    /* every cut gives an error naming the file, never a crash */
    int cuts = 0, named = 0;
    for (size_t cut = 0; cut < len; cut += 7) {
        struct trace *t = NULL;
        int rc = trace_load_mem(text, cut, "cut.json", NULL, &t, &e);
        cuts++;
        named += rc != MT_OK && strstr(e.msg, "cut.json") != NULL;
        trace_free(t);
    }
    CHECK_EQ_INT(named, cuts);
    /* the same through files, plain and gzip */
    const char *plain = tmp_path("cut.json"), *gz = tmp_path("cut.json.gz");
    write_file(plain, text, len / 2, false);
    struct trace *t = NULL;
    CHECK_EQ_INT(trace_load(&plain, 1, NULL, &t, &e), MT_EPARSE);
    CHECK_STR_CONTAINS(e.msg, plain);
    CHECK_STR_CONTAINS(e.msg, "truncated");
    write_file(gz, text, len, true);
    CHECK_EQ_INT(trace_load(&gz, 1, NULL, &t, &e), MT_OK); /* whole gzip: fine */
    trace_free(t);
    t = NULL;
    {
        /* cut the compressed bytes in half */
        char *z;
        size_t zn;
        CHECK_EQ_INT(str_read_file(gz, 1 << 24, &z, &zn, &e), MT_OK);
        write_file(gz, z, zn / 2, false);
        free(z);
    }
    int rc = trace_load(&gz, 1, NULL, &t, &e);
    CHECK(rc == MT_EIO || rc == MT_EPARSE);
    CHECK_STR_CONTAINS(e.msg, gz);
    const char *missing = tmp_path("no-such.json");
    CHECK_EQ_INT(trace_load(&missing, 1, NULL, &t, &e), MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "no-such.json");
    /* malformed events say where */
    static const char bad[] = "{\"traceEvents\": [\n{\"ph\": \"X\", \"ts\": 1},\n"
                              "{\"ph\": \"X\", \"ts\": 1, \"dur\": 2,, \"pid\": 0}]}";
    CHECK_EQ_INT(trace_load_mem(bad, strlen(bad), "bad.json", NULL, &t, &e), MT_EPARSE);
    CHECK_STR_CONTAINS(e.msg, "bad.json:3:");
    CHECK_STR_CONTAINS(e.msg, "event 1");
    static const char neg[] = "[{\"ph\": \"X\", \"name\": \"FW0\", \"ts\": 5, \"dur\": -1, "
                              "\"pid\": 0, \"args\": {\"op\": \"FW\", \"mb\": 0, \"stage\": 0}}]";
    CHECK_EQ_INT(trace_load_mem(neg, strlen(neg), "neg.json", NULL, &t, &e), MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "negative duration");
    static const char op[] = "[{\"ph\": \"X\", \"ts\": 5, \"dur\": 1, \"pid\": 0, "
                             "\"args\": {\"op\": \"FWD\", \"mb\": 0, \"stage\": 0}}]";
    CHECK_EQ_INT(trace_load_mem(op, strlen(op), "op.json", NULL, &t, &e), MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "unknown op 'FWD'");
    static const char none[] = "{\"traceEvents\": [{\"ph\": \"M\", \"name\": \"process_name\"}]}";
    CHECK_EQ_INT(trace_load_mem(none, strlen(none), "none.json", NULL, &t, &e), MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "none.json");
    CHECK_STR_CONTAINS(e.msg, "mapping");
    free(text);
    sim_result_fini(&r);
    plan_free(p);
}

/* ---- Kineto samples ------------------------------------------------------------------------ */

/* Rank r's trace of a 2-device V plan with 2 micro-batches: annotations fwd/bwd per mb, GPU
 * kernels, NCCL kernels, ProfilerStep spans, [memory] (device and host). The clock of rank 1
 * runs 5000 us ahead. */
static char *kineto_rank(int r, bool array_form, bool string_pids)
{
    struct buf b = {0};
    double off = r == 1 ? 5000 : 0;
    char pid_cpu[32], pid_gpu[32];
    if (string_pids) {
        snprintf(pid_cpu, sizeof pid_cpu, "\"host %d\"", 4000 + r);
        snprintf(pid_gpu, sizeof pid_gpu, "\"GPU %d\"", r);
    } else {
        snprintf(pid_cpu, sizeof pid_cpu, "%d", 4000 + r);
        snprintf(pid_gpu, sizeof pid_gpu, "%d", r);
    }
    if (array_form)
        bprintf(&b, "[\n");
    else
        bprintf(&b,
                "{\"schemaVersion\": 1, \"deviceProperties\": [{\"id\": %d, \"name\": "
                "\"NVIDIA H100 80GB HBM3\"}],\n \"distributedInfo\": {\"backend\": \"nccl\", "
                "\"rank\": %d, \"world_size\": 2},\n \"traceEvents\": [\n",
                r, r);
    for (int step = 0; step < 2; step++) {
        double t0 = 100000 * step + off;
        bprintf(&b,
                "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#%d\", "
                "\"pid\": %s, \"tid\": 1, \"ts\": %.3f, \"dur\": 90000},\n",
                step + 7, pid_cpu, t0);
        /* device r: FW0 FW1 BW0 BW1 at r*1000 + 0/2000/20000/30000, fw 1000 us, bw 2000 us */
        const char *names[4] = {"fwd_mb0", "fwd_mb1", "bwd_mb0", "bwd_mb1"};
        double at[4] = {0, 2000, 20000, 30000}, dur[4] = {1000, 1000, 2000, 2000};
        for (int k = 0; k < 4; k++) {
            double s = t0 + 10 + r * 1000 + at[k];
            bprintf(&b,
                    "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"%s\", "
                    "\"pid\": %s, \"tid\": 1, \"ts\": %.3f, \"dur\": %.3f},\n",
                    names[k], pid_cpu, s, dur[k]);
            bprintf(&b,
                    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"ampere_sgemm_128x64_nn\", "
                    "\"pid\": %s, \"tid\": \"stream 7\", \"ts\": %.3f, \"dur\": %.3f, "
                    "\"args\": {\"device\": %d, \"stream\": 7}},\n",
                    pid_gpu, s + 5, dur[k] - 10, r);
        }
        bprintf(&b,
                "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"ncclDevKernel_SendRecv("
                "ncclDevComm*, unsigned long, ncclWork*)\", \"pid\": %s, \"tid\": \"stream "
                "20\", \"ts\": %.3f, \"dur\": 50},\n",
                pid_gpu, t0 + 1500 + r * 1000);
        bprintf(&b,
                "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"ncclKernel_AllReduce_RING_"
                "LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)\", \"pid\": %s, "
                "\"tid\": \"stream 20\", \"ts\": %.3f, \"dur\": 500},\n",
                pid_gpu, t0 + 40000);
        bprintf(&b,
                "{\"ph\": \"i\", \"s\": \"t\", \"name\": \"[memory]\", \"pid\": %s, \"tid\": 1, "
                "\"ts\": %.3f, \"args\": {\"Device Type\": 1, \"Device Id\": %d, \"Bytes\": "
                "4096, \"Total Allocated\": %d, \"Total Reserved\": 8388608}},\n",
                pid_cpu, t0 + 1200 + r * 1000, r, 1048576 * (3 + r));
        bprintf(&b,
                "{\"ph\": \"i\", \"s\": \"t\", \"name\": \"[memory]\", \"pid\": %s, \"tid\": 1, "
                "\"ts\": %.3f, \"args\": {\"Device Type\": 0, \"Device Id\": -1, "
                "\"Total Allocated\": 999999999}},\n",
                pid_cpu, t0 + 1300);
        bprintf(&b,
                "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"pid\": %s, "
                "\"tid\": 1, \"ts\": %.3f, \"dur\": 5},\n",
                pid_cpu, t0 + 11);
    }
    bprintf(&b,
            "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": %s, \"tid\": 0, \"args\": "
            "{\"name\": \"python\"}}\n",
            pid_cpu);
    bprintf(&b, array_form ? "]\n" : "], \"traceName\": \"rank%d.json\"}\n", r);
    return b.s;
}

static void test_kineto(void)
{
    struct mt_err e = {0};
    char *r0 = kineto_rank(0, false, false), *r1 = kineto_rank(1, false, true);
    const char *f0 = tmp_path("rank0.json"), *f1 = tmp_path("rank1.json.gz");
    write_file(f0, r0, strlen(r0), false);
    write_file(f1, r1, strlen(r1), true);
    const char *files[] = {f0, f1};
    /* without a mapping: device activity, NCCL (AllReduce -> AR), memory, steps */
    struct trace *t = NULL;
    CHECK_EQ_INT(trace_load(files, 2, NULL, &t, &e), MT_OK);
    if (t == NULL) {
        fprintf(stderr, "%s\n", e.msg);
    } else {
        const struct trace_info *in = trace_info(t);
        CHECK(strcmp(in->source, "kineto") == 0);
        CHECK(strcmp(in->device_name, "NVIDIA H100 80GB HBM3") == 0);
        CHECK_EQ_INT(in->devices, 2);
        CHECK_EQ_INT(in->steps, 2);
        CHECK_EQ_INT(in->align, MAPPING_ALIGN_FIRST);
        size_t n, nm;
        const struct trace_event *ev = trace_events(t, &n);
        CHECK_EQ_INT((long)n, 2 * 2 * 6); /* 4 kernels + 2 NCCL, 2 steps, 2 ranks */
        int ar = 0, comm = 0;
        double first[2] = {1e300, 1e300};
        for (size_t i = 0; i < n; i++) {
            ar += ev[i].op == OP_AR;
            comm += ev[i].op == TRACE_OP_COMM;
            if (ev[i].start_us < first[ev[i].dev])
                first[ev[i].dev] = ev[i].start_us;
        }
        CHECK_EQ_INT(ar, 4);
        CHECK_EQ_INT(comm, 4);
        CHECK_NEAR(first[0], first[1], 1e-9); /* clocks aligned by each rank's first event */
        const struct trace_mem *mem = trace_mems(t, &nm);
        CHECK_EQ_INT((long)nm, 4); /* the host's [memory] left out: the device's are there */
        double peak1 = 0;
        for (size_t i = 0; i < nm; i++)
            if (mem[i].dev == 1 && mem[i].bytes > peak1)
                peak1 = mem[i].bytes;
        CHECK_NEAR(peak1, 4 * 1048576.0, 0);
        trace_free(t);
    }
    /* with a mapping: the annotations become FW/BW of the plan, aligned by the AllReduce */
    static const char map_text[] =
        "{\"format\": \"mario-trace-map\", \"version\": 1, \"device\": \"rank\",\n"
        " \"align\": {\"event\": \"^ncclKernel_AllReduce\", \"edge\": \"end\"},\n"
        " \"rules\": [{\"match\": \"^fwd_mb([0-9]+)$\", \"cat\": \"user_annotation\", "
        "\"op\": \"FW\", \"mb\": \"$1\"},\n"
        "           {\"match\": \"^(bw)d_mb([0-9]+)$\", \"op\": \"$1\", \"mb\": \"$2\"}]}";
    struct mapping *map = NULL;
    CHECK_EQ_INT(mapping_load_string(map_text, strlen(map_text), "map.json", &map, &e), MT_OK);
    if (map == NULL) {
        fprintf(stderr, "%s\n", e.msg);
    } else {
        CHECK_EQ_INT(mapping_rules(map), 2);
        struct trace_opts o = {map, 0};
        CHECK_EQ_INT(trace_load(files, 2, &o, &t, &e), MT_OK);
        if (t != NULL) {
            struct plan *p = unit_plan(SCHEME_V, 2, 2);
            struct align_result m;
            struct align_opts ao = {.step = -1};
            CHECK_EQ_INT(align_run(p, t, &ao, &m, &e), MT_OK);
            CHECK_EQ_INT(m.matched, 8 + 0); /* 4 FW + 4 BW; no AR in a dp 1 plan */
            CHECK_EQ_INT(m.steps_used, 1);  /* steps 0 and 1: the first warms up */
            int fw0 = plan_find(p, 1, OP_FW, 0, 1), bw1 = plan_find(p, 1, OP_BW, 1, 1);
            CHECK(fw0 >= 0 && bw1 >= 0);
            if (fw0 >= 0 && bw1 >= 0) {
                int id = plan_id(p, 1, fw0), jd = plan_id(p, 1, bw1);
                CHECK_NEAR(m.end[id] - m.start[id], 1000, 1e-6);
                CHECK_NEAR(m.end[jd] - m.start[jd], 2000, 1e-6);
                /* rank 1's clock is back on rank 0's: its FW0 starts 1000 us after rank 0's */
                int id0 = plan_id(p, 0, plan_find(p, 0, OP_FW, 0, 0));
                CHECK_NEAR(m.start[id] - m.start[id0], 1000, 1e-6);
            }
            align_result_fini(&m);
            plan_free(p);
            trace_free(t);
        }
        mapping_free(map);
    }
    /* the bare-array form with string pids, one file holding one rank */
    char *a1 = kineto_rank(1, true, true);
    const char *fa = tmp_path("array.json");
    write_file(fa, a1, strlen(a1), false);
    CHECK_EQ_INT(trace_load(&fa, 1, NULL, &t, &e), MT_OK);
    if (t != NULL) {
        CHECK_EQ_INT(trace_info(t)->devices, 1); /* the GPU's pid, by itself */
        trace_free(t);
    }
    /* several ranks in one file: device activity by GPU pid */
    char *b0 = kineto_rank(0, true, false), *b1 = kineto_rank(1, true, false);
    struct buf both = {0};
    bprintf(&both, "%.*s,\n%s", (int)(strrchr(b0, ']') - b0), b0, b1 + 1);
    CHECK_EQ_INT(trace_load_mem(both.s, both.n, "both.json", NULL, &t, &e), MT_OK);
    if (t != NULL) {
        CHECK_EQ_INT(trace_info(t)->devices, 2);
        CHECK_EQ_INT(trace_info(t)->align, MAPPING_ALIGN_NONE); /* one file, one clock */
        trace_free(t);
    }
    free(both.s);
    free(b0);
    free(b1);
    free(a1);
    free(r0);
    free(r1);
}

static void test_mapping_errors(void)
{
    struct mapping *m = NULL;
    struct mt_err e = {0};
    static const char *const bad[][2] = {
        {"{\"rules\": [{\"match\": \"a(\", \"op\": \"FW\"}]}", "bad regular expression"},
        {"{\"rules\": [{\"match\": \"a\", \"op\": \"FWD\"}]}", "rules[0].op: unknown op 'FWD'"},
        {"{\"rules\": [{\"match\": \"a\", \"op\": \"FW\", \"mb\": \"$2\"}]}", "has 0 capture"},
        {"{\"rulez\": []}", "rulez: unknown key"},
        {"{\"rules\": [{\"match\": \"a\", \"op\": \"FW\", \"stage\": 1.5}]}", "rules[0].stage"},
        {"{\"align\": {\"event\": \"\"}}", "align.event"},
        {"{\"rules\": [", "map.json:1:"},
        /* stacked repetitions: 100 stars in a row took glibc's matcher 14 s (fuzz_kineto_parse) */
        {"{\"rules\": [{\"match\": \"^b*****wd$\", \"op\": \"FW\"}]}", "a repetition of a repetition"},
        {"{\"rules\": [{\"match\": \"a+*\", \"op\": \"FW\"}]}", "a repetition of a repetition"},
        {"{\"rules\": [{\"match\": \"(ab)*{2}\", \"op\": \"FW\"}]}", "a repetition of a repetition"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = mapping_load_string(bad[i][0], strlen(bad[i][0]), "map.json", &m, &e);
        CHECK(rc != MT_OK);
        CHECK_STR_CONTAINS(e.msg, bad[i][1]);
        CHECK_STR_CONTAINS(e.msg, "map.json");
        mapping_free(m);
    }
    /* a captured field that is not a number lets the next rule try */
    static const char ok[] = "{\"rules\": [{\"match\": \"^f_(.*)$\", \"op\": \"FW\", \"mb\": "
                             "\"$1\"}, {\"match\": \"^f_\", \"op\": \"RC\"}]}";
    CHECK_EQ_INT(mapping_load_string(ok, strlen(ok), "ok.json", &m, &e), MT_OK);
    struct mapping_hit h;
    CHECK(mapping_match(m, "f_12", NULL, &h) && h.op == OP_FW && h.mb == 12);
    CHECK(mapping_match(m, "f_x", NULL, &h) && h.op == OP_RC && h.mb == -1);
    CHECK(!mapping_match(m, "g", NULL, &h));
    mapping_free(m);
}

/* ---- least squares and calibration ------------------------------------------------------ */

static void test_lsq(void)
{
    /* y = 3 n + 2 + 5 E - 1 H, exactly */
    double x[6 * 4], y[6];
    int rows = 0;
    for (int n = 1; n <= 2; n++)
        for (int k = 0; k < 3; k++) {
            double E = k != 2, H = k != 1;
            double *r = &x[rows * 4];
            r[0] = n, r[1] = 1, r[2] = E, r[3] = H;
            y[rows++] = 3 * n + 2 + 5 * E - H;
        }
    double c[4], r2;
    CHECK_EQ_INT(calibrate_lsq(x, y, rows, 4, c, &r2, NULL), MT_OK);
    CHECK_NEAR(c[0], 3, 1e-9);
    CHECK_NEAR(c[1], 2, 1e-9);
    CHECK_NEAR(c[2], 5, 1e-9);
    CHECK_NEAR(c[3], -1, 1e-9);
    CHECK_NEAR(r2, 1, 1e-12);
    /* a noisy line: the textbook fit of (1,1) (2,3) (3,2): y = 0.5 n + 1, R^2 = 0.25 */
    double x2[] = {1, 1, 2, 1, 3, 1}, y2[] = {1, 3, 2};
    CHECK_EQ_INT(calibrate_lsq(x2, y2, 3, 2, c, &r2, NULL), MT_OK);
    CHECK_NEAR(c[0], 0.5, 1e-12);
    CHECK_NEAR(c[1], 1, 1e-12);
    CHECK_NEAR(r2, 0.25, 1e-12);
    double x3[] = {1, 2, 2, 4}, y3[] = {1, 2};
    struct mt_err e = {0};
    CHECK_EQ_INT(calibrate_lsq(x3, y3, 2, 2, c, &r2, &e), MT_EINVAL);
    CHECK_EQ_INT(calibrate_lsq(x3, y3, 1, 2, c, &r2, &e), MT_EINVAL);
    /* Kendall tau */
    double a[] = {1, 2, 3, 4}, b[] = {10, 20, 40, 30}, rev[] = {4, 3, 2, 1};
    CHECK_NEAR(accuracy_kendall_tau(a, a, 4), 1, 1e-12);
    CHECK_NEAR(accuracy_kendall_tau(a, rev, 4), -1, 1e-12);
    CHECK_NEAR(accuracy_kendall_tau(a, b, 4), 4.0 / 6.0, 1e-12);
    double pred[] = {110, 90}, act[] = {100, 100};
    CHECK_NEAR(accuracy_mape(pred, act, 2), 10, 1e-12);
}

static struct profile known_profile(const struct config *shape)
{
    struct profile p = {0};
    p.enabled = true;
    snprintf(p.device, sizeof p.device, "synthetic");
    snprintf(p.backend, sizeof p.backend, "cpu");
    profile_shape_of(shape, &p.shape);
    p.fw = (struct profile_fit){400, 30, 200, 350, 1, 1};
    p.bw = (struct profile_fit){800, 40, 100, 700, 1, 1};
    p.rc = (struct profile_fit){380, 25, 190, 330, 1, 1};
    /* the optimizer step goes with the parameters: 300 us per block's worth + 5 us */
    double pl = cost_stage_params(shape, 1, false, false);
    p.os = (struct profile_fit){300,
                                5,
                                300 * cost_stage_params(shape, 0, true, false) / pl,
                                300 * cost_stage_params(shape, 0, false, true) / pl,
                                1,
                                1};
    p.p2p = (struct profile_fit){0, 75, 0, 0, 1, 1};
    p.act = (struct profile_fit){330000, 16384, 256, 83000, 1, 1};
    p.ckpt = (struct profile_fit){0, 16384, 0, 0, 1, 1};
    p.static_bytes = (struct profile_fit){800000, 1000, 330000, 264000, 1, 1};
    p.msg_bytes = (struct profile_fit){0, 16384, 0, 0, 1, 1};
    /* the split backward: B and W apart from BW, and what B keeps for W */
    p.b = (struct profile_fit){300, 20, 30, 40, 1, 1};
    p.w = (struct profile_fit){150, 5, 10, 60, 1, 1};
    p.w_keep_bytes = (struct profile_fit){100000, 8192, 512, 30000, 1, 1};
    return p;
}

/* Traces simulated with a known profile, fitted back: the same profile. */
static void test_calibrate(void)
{
    struct config base;
    config_default(&base);
    struct mt_err e = {0};
    CHECK_EQ_INT(presets_model("tiny", &base.model, &e), MT_OK);
    struct profile truth = known_profile(&base);
    struct calibrate *cal = calibrate_new();
    int runs = 0;
    for (int n = 1; n <= 3; n++)
        for (int pp = 1; pp <= 2; pp++)
            for (int N = 2; N <= 4; N += 2)
                for (int ck = 0; ck < 2; ck++) {
                    struct config c = base;
                    c.scheme = SCHEME_GPIPE;
                    c.num_device = pp;
                    c.model.num_layers = n * pp;
                    c.num_microbatches = N;
                    c.global_batch_size = N;
                    c.profile = truth;
                    struct plan *p = NULL;
                    CHECK_EQ_INT(scheme_build(&c, &p, &e), MT_OK);
                    /* checkpointed runs: every forward a CFW, its RC right before its
                     * backward; every run: odd micro-batches' backwards split, B then W (as
                     * `mario-tui profile` runs them) */
                    struct plan *q = plan_new(&c, plan_geom(p));
                    for (int d = 0; d < plan_devices(p); d++)
                        for (int i = 0; i < plan_len(p, d); i++) {
                            struct instr in = *plan_at(p, d, i);
                            if (in.op == OP_FW && ck)
                                in.op = OP_CFW;
                            if (in.op == OP_BW && ck) {
                                struct instr rc = in;
                                rc.op = OP_RC;
                                plan_append(q, d, rc);
                            }
                            if (in.op == OP_BW && in.mb % 2 == 1) {
                                in.op = OP_B;
                                plan_append(q, d, in);
                                in.op = OP_W;
                            }
                            plan_append(q, d, in);
                        }
                    plan_free(p);
                    p = q;
                    struct sim_result r;
                    CHECK_EQ_INT(sim_run(p, &r, &e), MT_OK);
                    char *text = chrome_from_sim(p, &r);
                    struct trace *t = NULL;
                    CHECK_EQ_INT(trace_load_mem(text, strlen(text), "syn.json", NULL, &t, &e),
                                 MT_OK);
                    if (t != NULL) {
                        CHECK_EQ_INT(calibrate_add_run(cal, p, t, &e), MT_OK);
                        runs++;
                    }
                    trace_free(t);
                    free(text);
                    sim_result_fini(&r);
                    plan_free(p);
                }
    CHECK_EQ_INT(runs, 24);
    struct profile fit;
    CHECK_EQ_INT(calibrate_fit(cal, &base, &fit, &e), MT_OK);
    const struct profile_fit *got[] = {&fit.fw,           &fit.bw,  &fit.rc, &fit.os,
                                       &fit.act,          &fit.ckpt, &fit.b, &fit.w,
                                       &fit.static_bytes, &fit.w_keep_bytes};
    const struct profile_fit *want[] = {&truth.fw,           &truth.bw,   &truth.rc, &truth.os,
                                        &truth.act,          &truth.ckpt, &truth.b,  &truth.w,
                                        &truth.static_bytes, &truth.w_keep_bytes};
    for (size_t i = 0; i < sizeof got / sizeof got[0]; i++) {
        double tol = 1e-6 * (fabs(want[i]->a) + fabs(want[i]->b) + 1);
        CHECK_NEAR(got[i]->a, want[i]->a, tol);
        CHECK_NEAR(got[i]->b, want[i]->b, tol);
        CHECK_NEAR(got[i]->embed, want[i]->embed, tol);
        CHECK_NEAR(got[i]->head, want[i]->head, tol);
        CHECK(got[i]->points > 0);
    }
    /* a simulation has no transients beyond the buffers: past the first stage (b - embed:
     * none on stage 0) a FW held its received input until its end, a BW takes its input
     * gradient's buffer; a CFW holds its checkpoint and, before the last stage, its output's
     * buffer */
    double msg = truth.msg_bytes.b;
    CHECK_NEAR(fit.msg_bytes.b, msg, 1e-9);
    CHECK(fit.msg_bytes.points > 0);
    CHECK_NEAR(fit.fw_work_bytes.b, msg, 1e-3);
    CHECK_NEAR(fit.fw_work_bytes.embed, -msg, 1e-3);
    CHECK_NEAR(fit.fw_work_bytes.head, 0, 1e-3);
    CHECK_NEAR(fit.bw_work_bytes.b, msg, 1e-3);
    CHECK_NEAR(fit.bw_work_bytes.embed, -msg, 1e-3);
    CHECK_NEAR(fit.bw_work_bytes.head, 0, 1e-3);
    CHECK_NEAR(fit.cfw_peak_bytes.a, truth.ckpt.a, 1e-3);
    CHECK_NEAR(fit.cfw_peak_bytes.b, truth.ckpt.b + msg, 1e-3);
    CHECK_NEAR(fit.cfw_peak_bytes.head, -msg, 1e-3);
    CHECK_NEAR(fit.p2p.b, 75, 1e-9);
    CHECK_EQ_INT(fit.shape.hidden_size, base.model.hidden_size);
    calibrate_free(cal);

    /* the file round trip */
    snprintf(fit.device, sizeof fit.device, "cpu: synthetic");
    const char *path = tmp_path("cal.json");
    CHECK_EQ_INT(profile_save(path, &fit, NULL, &e), MT_OK);
    struct profile back;
    CHECK_EQ_INT(profile_load(path, &back, &e), MT_OK);
    CHECK(back.enabled);
    CHECK(memcmp(&back.fw, &fit.fw, sizeof fit.fw) == 0);
    CHECK(memcmp(&back.static_bytes, &fit.static_bytes, sizeof fit.fw) == 0);
    CHECK(memcmp(&back.shape, &fit.shape, sizeof fit.shape) == 0);
    CHECK(strcmp(back.device, "cpu: synthetic") == 0);
    static const char bad[] = "{\"format\": \"mario-calibration\", \"version\": 1, \"shape\": "
                              "{\"hidden_size\": 8}, \"fits\": {\"fw_us\": {\"a\": \"x\"}}}";
    CHECK(profile_load_string(bad, strlen(bad), "bad-cal.json", &back, &e) != MT_OK);
    CHECK_STR_CONTAINS(e.msg, "bad-cal.json");

    /* applied by cost_model_build: the fits as they are for the same shape, and scaled by
     * the FLOPs of a block for twice the micro-batch size */
    struct config c = base;
    c.scheme = SCHEME_V;
    c.num_device = 2;
    c.model.num_layers = 6;
    c.profile = truth;
    struct cost_model cm;
    CHECK_EQ_INT(cost_model_build(&c, 2, 1, 1, &cm, &e), MT_OK);
    CHECK_NEAR(cm.stage[0].fw, 400 * 3 + 30 + 200, 1e-9);
    CHECK_NEAR(cm.stage[1].bw, 800 * 3 + 40 + 700, 1e-9);
    CHECK_NEAR(cm.stage[1].static_bytes, 800000 * 3 + 1000 + 264000, 1e-6);
    CHECK_NEAR(cm.stage[0].p2p, 75, 1e-9);
    cost_model_fini(&cm);
    struct config c2 = c;
    c2.micro_batch_size = 2;
    CHECK_EQ_INT(cost_model_build(&c2, 2, 1, 1, &cm, &e), MT_OK);
    double k = cost_layer_fw_flops(&c2) / cost_layer_fw_flops(&c);
    CHECK_NEAR(k, 2, 1e-12);
    CHECK_NEAR(cm.stage[0].fw, 400 * 3 * k + 30 + 200 * 2, 1e-9);
    CHECK_NEAR(cm.stage[1].static_bytes, 800000 * 3 + 1000 + 264000, 1e-6); /* params stay */
    cost_model_fini(&cm);

    /* the split backward: measured B, W and W's bytes as they are; a calibration without them
     * (every file before them) splits its measured BW as the FLOPs say, b + w = bw */
    CHECK(memcmp(&back.b, &fit.b, sizeof fit.b) == 0);
    CHECK(memcmp(&back.w_keep_bytes, &fit.w_keep_bytes, sizeof fit.b) == 0);
    CHECK_EQ_INT(cost_model_build(&c, 2, 1, 1, &cm, &e), MT_OK);
    CHECK_NEAR(cm.stage[0].b, 300 * 3 + 20 + 30, 1e-9);
    CHECK_NEAR(cm.stage[1].w, 150 * 3 + 5 + 60, 1e-9);
    CHECK_NEAR(cm.stage[1].w_keep, 100000 * 3 + 8192 + 30000, 1e-6);
    cost_model_fini(&cm);
    static const char old[] =
        "{\"format\": \"mario-calibration\", \"version\": 1, \"shape\": {\"hidden_size\": 64, "
        "\"num_attention_heads\": 4, \"seq_length\": 64, \"vocab_size\": 256, "
        "\"ffn_hidden_size\": 256, \"micro_batch_size\": 1, \"tp\": 1}, \"fits\": {\"fw_us\": "
        "{\"a\": 400, \"points\": 4}, \"bw_us\": {\"a\": 800, \"points\": 4}}}";
    CHECK_EQ_INT(profile_load_string(old, strlen(old), "old-cal.json", &c.profile, &e), MT_OK);
    CHECK_EQ_INT(c.profile.b.points + c.profile.w.points + c.profile.w_keep_bytes.points, 0);
    CHECK_EQ_INT(cost_model_build(&c, 2, 1, 1, &cm, &e), MT_OK);
    CHECK_NEAR(cm.stage[0].bw, 2400, 1e-9);
    CHECK_NEAR(cm.stage[0].b + cm.stage[0].w, 2400, 1e-9);
    CHECK(cm.stage[0].w > 0 && cm.stage[0].b > 0);
    cost_model_fini(&cm);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "%s/test_traces.XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (mkdtemp(tmpdir) == NULL) {
        perror("mkdtemp");
        return 1;
    }
    test_scan();
    test_round_trip();
    test_known_errors(false);
    test_known_errors(true);
    test_begin_end_errors();
    test_bad_traces();
    test_kineto();
    test_mapping_errors();
    test_lsq();
    test_calibrate();
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmpdir);
    return check_report("test_traces");
}
