/* tests/unit/test_import.c: plans made from traces (traces/import.h, issue 19), against plans
 * known independently:
 *   - our trace of a run (chrome_from_measured, two steps, ranks' records in program order)
 *     gives back the plan that ran, instruction for instruction, and its config: 1F1B with
 *     every forward checkpointed, Chimera, interleaved, ZB-V, GPipe;
 *   - torch.distributed.pipelining traces ("PP:" ranges on the host and the GPU, one file per
 *     rank, distributedInfo.rank, ProfilerStep spans, the ranks' clocks 0.1 s apart) give the
 *     plan torch's schedule CSV of the same order gives (sim/plan/plan_csv.c), for 1F1B, looped
 *     (interleaved 1F1B), a V (ZB-V) and ZB-H1; the H100 of deviceProperties becomes the device;
 *   - a PiPPy-visualizer-style trace (array form, string pids, "F_0,1" names) with the mapping
 *     file of docs/traces.md gives the 1F1B plan; so does PiPPy's own form without one (B/E
 *     pairs, pids "RANK(host/pid)"), its ranks' clocks 372 us apart (put together, the shift
 *     reported), and with a drift no offset mends: inverted 50 us of 1 s ops, tolerated and
 *     reported; 15 ms, refused;
 *   - inconsistent traces are errors naming the device, the event and file:line:col: a forward
 *     with no backward, a dependency that runs backwards in time, a stage on two devices, a
 *     trace with no instruction events. */
#include <config.h>

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/config.h"
#include "model/presets.h"
#include "sim/passes/pass.h"
#include "sim/plan/plan.h"
#include "sim/schemes/scheme.h"
#include "sim/core/simulate.h"
#include "sim/core/vpipe.h"
#include "tests/check.h"
#include "traces/actions.h"
#include "traces/chrome.h"
#include "traces/import.h"
#include "traces/mapping.h"
#include "traces/trace.h"
#include "util/err.h"
#include "util/xalloc.h"

static char tmpdir[256];

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

static const char *write_tmp(const char *name, const char *text)
{
    static char path[8][512];
    static int k;
    k = (k + 1) % 8;
    snprintf(path[k], sizeof path[k], "%s/%s", tmpdir, name);
    FILE *f = fopen(path[k], "wb");
    fputs(text, f);
    fclose(f);
    return path[k];
}

static struct config tiny_config(enum scheme_id s, int D, int N, int chunks)
{
    struct config c;
    config_default(&c);
    struct mt_err e = {0};
    if (presets_model("tiny", &c.model, &e) != MT_OK)
        fprintf(stderr, "tiny: %s\n", e.msg);
    c.scheme = s;
    c.num_device = D;
    c.num_microbatches = N;
    c.chunks = chunks;
    return c;
}

static struct plan *build(const struct config *c, bool ckpt)
{
    struct plan *p = NULL;
    struct mt_err e = {0};
    if (scheme_build(c, &p, &e) != MT_OK) {
        fprintf(stderr, "build: %s\n", e.msg);
        return NULL;
    }
    if (ckpt) {
        struct plan *q = NULL;
        struct pass_changes ch;
        pass_changes_init(&ch);
        if (pass_run(PASS_CHECKPOINT, p, &q, &ch, &e) != MT_OK)
            fprintf(stderr, "ckpt: %s\n", e.msg);
        pass_changes_fini(&ch);
        plan_free(p);
        p = q;
    }
    return p;
}

/* Whether two plans hold the same instructions in the same order on every device. */
static bool same_order(const struct plan *a, const struct plan *b)
{
    if (a == NULL || b == NULL || plan_devices(a) != plan_devices(b))
        return false;
    for (int d = 0; d < plan_devices(a); d++) {
        if (plan_len(a, d) != plan_len(b, d)) {
            fprintf(stderr, "device %d: %d against %d instructions\n", d, plan_len(a, d),
                    plan_len(b, d));
            return false;
        }
        for (int i = 0; i < plan_len(a, d); i++) {
            const struct instr *x = plan_at(a, d, i), *y = plan_at(b, d, i);
            if (x->op != y->op || x->mb != y->mb || x->part != y->part || x->stage != y->stage ||
                x->peer != y->peer) {
                fprintf(stderr, "device %d, instruction %d: %s%d.%d/%d against %s%d.%d/%d\n", d, i,
                        plan_op_name(x->op), x->mb, x->part, x->stage, plan_op_name(y->op), y->mb,
                        y->part, y->stage);
                return false;
            }
        }
    }
    return true;
}

static int import_text(const char *text, const char *name, const struct config *base,
                       struct plan **out, struct import_info *info, struct mt_err *e)
{
    struct trace *t = NULL;
    struct trace_opts o = {NULL, 0};
    TRY(trace_load_mem(text, strlen(text), name, &o, &t, e));
    struct import_opts io = {-1, false, false};
    int rc = import_plan(t, NULL, 0, base, &io, out, info, e);
    trace_free(t);
    return rc;
}

static int import_files(const char *const *paths, int n, const struct mapping *map,
                        const struct config *base, struct plan **out, struct import_info *info,
                        struct mt_err *e)
{
    struct trace *t = NULL;
    struct trace_opts o = {map, 0};
    TRY(trace_load(paths, n, &o, &t, e));
    struct import_opts io = {-1, false, false};
    int rc = import_plan(t, paths, n, base, &io, out, info, e);
    trace_free(t);
    return rc;
}

/* ---- ours ------------------------------------------------------------------------------------ */

static void test_ours(enum scheme_id s, int D, int N, int chunks, bool ckpt)
{
    struct config c = tiny_config(s, D, N, chunks);
    struct plan *p = build(&c, ckpt);
    CHECK(p != NULL);
    if (p == NULL)
        return;
    struct sim_result r;
    struct mt_err e = {0};
    CHECK_EQ_INT(sim_run(p, &r, &e), MT_OK);
    /* two steps of the run, as the executor's ranks record them: program order */
    size_t n = 0;
    struct chrome_span *sp = xcalloc(2 * (size_t)plan_total(p) + 1, sizeof *sp);
    for (int step = 0; step < 2; step++)
        for (int d = 0; d < plan_devices(p); d++) {
            double last = 0; /* a send or receive at the end of what came before it */
            for (int i = 0; i < plan_len(p, d); i++) {
                const struct instr *in = plan_at(p, d, i);
                int id = plan_id(p, d, i);
                bool p2p = vpipe_is_p2p(in->op);
                /* a send is posted at once; a receive waits from there for its message */
                double t0 = p2p ? last : r.start[id];
                double dur = vpipe_is_send(in->op) ? 0 : r.end[id] - t0;
                if (!p2p)
                    last = r.end[id];
                sp[n++] = (struct chrome_span){
                    d,        d,         0,        in->op, in->mb,
                    in->part, in->stage, in->peer, step,   step * 2 * r.step_time + t0,
                    dur,      0};
            }
        }
    struct chrome_run run = {sp, n, plan_devices(p), "cpu", "complete"};
    char *text = chrome_from_measured(p, &run);
    struct plan *q = NULL;
    struct import_info info;
    CHECK_EQ_INT(import_text(text, "run.json", &c, &q, &info, &e), MT_OK);
    if (q == NULL) {
        fprintf(stderr, "%s: %s\n", config_scheme_name(s), e.msg);
    } else {
        CHECK(same_order(p, q));
        CHECK(info.ours);
        CHECK(info.config_from_trace);
        CHECK_EQ_INT(info.step, 1);
        CHECK_EQ_INT(plan_config(q)->scheme, s);
        CHECK_EQ_INT(plan_config(q)->model.hidden_size, c.model.hidden_size);
        CHECK_EQ_INT(plan_geom(q)->parts, plan_geom(p)->parts);
    }
    plan_free(q);
    free(text);
    free(sp);
    sim_result_fini(&r);
    plan_free(p);
}

/* ---- torch.distributed.pipelining ------------------------------------------------------------ */

static char torch_letter(enum op op)
{
    return op == OP_FW ? 'F' : op == OP_B ? 'I' : op == OP_W ? 'W' : op == OP_BW ? 'B' : 0;
}

/* One file per rank of p's compute as torch's actions, timed by p's simulation, the host
 * range and its GPU copy, in two ProfilerSteps; rank r's clock is r * 0.1 s ahead. Optionally
 * one action of the second step is dropped (drop_dev, drop_i) or, with move_us, moved that
 * much earlier. */
static void torch_files(const struct plan *p, const char *tag, int drop_dev, int drop_i,
                        double move_us, const char **paths)
{
    struct sim_result r;
    struct mt_err e = {0};
    if (sim_run(p, &r, &e) != MT_OK)
        fprintf(stderr, "sim: %s\n", e.msg);
    if (r.unit) /* 1 t = 1000 us, as our traces write it (near 1.7e15 a double holds 0.25 us) */
        for (int id = 0; id < r.total; id++) {
            r.start[id] *= 1000;
            r.end[id] *= 1000;
        }
    if (r.unit)
        r.step_time *= 1000;
    for (int d = 0; d < plan_devices(p); d++) {
        struct buf b = {0};
        double off = 1.7e15 + d * 1e5;
        bprintf(&b,
                "{\"schemaVersion\": 1, \"deviceProperties\": [{\"id\": 0, \"name\": "
                "\"NVIDIA H100 80GB HBM3\"}], \"distributedInfo\": {\"backend\": \"nccl\", "
                "\"rank\": %d, \"world_size\": %d},\n \"traceEvents\": [\n",
                d, plan_devices(p));
        for (int step = 0; step < 2; step++) {
            double base = off + step * 2 * r.step_time;
            bprintf(&b,
                    "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": "
                    "\"ProfilerStep#%d\", \"pid\": 7, \"tid\": 7, \"ts\": %.3f, \"dur\": %.3f},\n",
                    step + 4, base - 10, 1.5 * r.step_time);
            for (int i = 0; i < plan_len(p, d); i++) {
                const struct instr *in = plan_at(p, d, i);
                char c = torch_letter(in->op);
                bool marked = d == drop_dev && i == drop_i && step == 1;
                if (c == 0 || (marked && move_us == 0))
                    continue;
                int id = plan_id(p, d, i);
                double t0 = base + r.start[id] - (marked ? move_us : 0);
                double dur = r.end[id] - r.start[id];
                bprintf(&b,
                        "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"PP:%d%c%d\", "
                        "\"pid\": 7, \"tid\": 7, \"ts\": %.3f, \"dur\": %.3f},\n",
                        in->stage, c, in->mb, t0 - 30, dur);
                bprintf(&b,
                        "{\"ph\": \"X\", \"cat\": \"gpu_user_annotation\", \"name\": "
                        "\"PP:%d%c%d\", \"pid\": 0, \"tid\": \"stream 7\", \"ts\": %.3f, "
                        "\"dur\": %.3f},\n",
                        in->stage, c, in->mb, t0, dur);
                bprintf(&b,
                        "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"sm90_gemm\", \"pid\": 0, "
                        "\"tid\": \"stream 7\", \"ts\": %.3f, \"dur\": %.3f},\n",
                        t0 + 0.1 * dur, 0.8 * dur);
            }
            bprintf(&b,
                    "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"PP:%dUNSHARD\", "
                    "\"pid\": 7, \"tid\": 7, \"ts\": %.3f, \"dur\": 1},\n",
                    d, base);
        }
        bprintf(&b, "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": 7, \"args\": "
                    "{\"name\": \"python\"}}]}\n");
        char name[64];
        snprintf(name, sizeof name, "%s-rank%d.json", tag, d);
        paths[d] = write_tmp(name, b.s);
        free(b.s);
    }
    sim_result_fini(&r);
}

static void test_torch(enum scheme_id s, int D, int N, int chunks)
{
    struct config c = tiny_config(s, D, N, chunks);
    struct plan *p = build(&c, false);
    CHECK(p != NULL);
    if (p == NULL)
        return;
    const char *paths[8];
    torch_files(p, config_scheme_name(s), -1, -1, 0, paths);
    struct mt_err e = {0};
    /* what torch's schedule CSV of the same order gives */
    char *csv = plan_to_torch_csv(p, &e);
    struct plan *want = NULL;
    CHECK_EQ_INT(plan_load_torch_csv(csv, strlen(csv), "want.csv", &c, &want, &e), MT_OK);
    free(csv);
    struct plan *q = NULL;
    struct import_info info;
    CHECK_EQ_INT(import_files(paths, D, NULL, &c, &q, &info, &e), MT_OK);
    if (q == NULL) {
        fprintf(stderr, "%s: %s\n", config_scheme_name(s), e.msg);
    } else {
        CHECK(same_order(want, q));
        CHECK(same_order(p, q)); /* our schemes' CSV round trip is exact */
        CHECK(!info.ours);
        CHECK_EQ_INT(info.step, 1); /* ProfilerStep#5: steps count from the file's first */
        CHECK_EQ_INT(plan_config(q)->scheme, plan_config(want)->scheme);
        CHECK(strcmp(plan_config(q)->cluster.device.name, "H100-80G") == 0);
    }
    plan_free(q);
    plan_free(want);
    plan_free(p);
}

static void test_torch_errors(void)
{
    /* unit costs: F = 0.5, B = 1 per device, messages free (times written as us) */
    struct config c = tiny_config(SCHEME_V, 2, 3, 1);
    c.unit = (struct unit_costs){true, 1, 2, 1, 0, 1, 0};
    struct plan *p = build(&c, false);
    CHECK(p != NULL);
    if (p == NULL)
        return;
    const char *paths[2];
    struct mt_err e = {0};
    struct plan *q = NULL;
    struct import_info info;
    /* device 1's last action (its backward of micro-batch 2) missing in step 5 */
    int last = plan_len(p, 1) - 1;
    while (last >= 0 && plan_at(p, 1, last)->op != OP_BW)
        last--;
    torch_files(p, "nobw", 1, last, 0, paths);
    CHECK_EQ_INT(import_files(paths, 2, NULL, &c, &q, &info, &e), MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "device 1: event ");
    CHECK_STR_CONTAINS(e.msg, "(FW, micro-batch 2, stage 1) at ");
    CHECK_STR_CONTAINS(e.msg, "nobw-rank1.json:");
    CHECK_STR_CONTAINS(e.msg, "the forward has no backward");
    plan_free(q);
    q = NULL;
    /* device 1's first forward 300 us (0.3 t) early: before device 0's forward it needs has
     * ended, by more than any shift of its clock can mend (its backwards' messages take no
     * time) */
    int first = 0;
    while (plan_at(p, 1, first)->op != OP_FW)
        first++;
    torch_files(p, "early", 1, first, 300, paths);
    e = (struct mt_err){0};
    CHECK_EQ_INT(import_files(paths, 2, NULL, &c, &q, &info, &e), MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "device 1: event ");
    CHECK_STR_CONTAINS(e.msg, "early-rank1.json:");
    CHECK_STR_CONTAINS(e.msg, "a dependency that runs backwards in time");
    CHECK_STR_CONTAINS(e.msg, "early-rank0.json:");
    plan_free(q);
    q = NULL;
    /* a stage on two devices */
    const char two[] =
        "{\"traceEvents\": [\n"
        "{\"ph\": \"X\", \"name\": \"PP:0F0\", \"pid\": 0, \"tid\": 0, \"ts\": 0, \"dur\": 10},\n"
        "{\"ph\": \"X\", \"name\": \"PP:0B0\", \"pid\": 0, \"tid\": 0, \"ts\": 30, \"dur\": 10},\n"
        "{\"ph\": \"X\", \"name\": \"PP:0F1\", \"pid\": 1, \"tid\": 0, \"ts\": 0, \"dur\": 10},\n"
        "{\"ph\": \"X\", \"name\": \"PP:0B1\", \"pid\": 1, \"tid\": 0, \"ts\": 30, \"dur\": "
        "10}]}\n";
    const char *tp = write_tmp("two.json", two);
    e = (struct mt_err){0};
    CHECK_EQ_INT(import_files(&tp, 1, NULL, &c, &q, &info, &e), MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "device 1: event 2 (FW, micro-batch 1, stage 0) at ");
    CHECK_STR_CONTAINS(e.msg, "two.json:4:1: stage 0 ran on device 0 before");
    plan_free(q);
    q = NULL;
    /* a profiler trace with nothing to import */
    const char none[] = "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": "
                        "\"sgemm\", \"pid\": 0, \"tid\": 7, \"ts\": 0, \"dur\": 10}]}";
    e = (struct mt_err){0};
    CHECK_EQ_INT(import_text(none, "none.json", &c, &q, &info, &e), MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "--map");
    plan_free(q);
    plan_free(p);
}

/* ---- a PiPPy-visualizer-style trace with the mapping of docs/traces.md ------------------------
 */

static void test_pippy(void)
{
    static const char map_text[] =
        "{\"format\": \"mario-trace-map\", \"version\": 1, \"device\": \"pid\",\n"
        " \"rules\": [{\"match\": \"^F_([0-9]+),([0-9]+)$\", \"op\": \"FW\", \"stage\": \"$1\", "
        "\"mb\": \"$2\"},\n"
        "           {\"match\": \"^B_([0-9]+),([0-9]+)$\", \"op\": \"BW\", \"stage\": \"$1\", "
        "\"mb\": \"$2\"}]}\n";
    struct mapping *map = NULL;
    struct mt_err e = {0};
    CHECK_EQ_INT(mapping_load_string(map_text, strlen(map_text), "pippy-map.json", &map, &e),
                 MT_OK);
    /* 1F1B on 2 ranks, 2 micro-batches, F = 10, B = 20, messages 2; the array form, string
     * pids and tids */
    static const char trace[] =
        "[\n"
        "{\"name\": \"F_0,0\", \"ph\": \"X\", \"pid\": \"rank 0\", \"tid\": \"compute\", "
        "\"ts\": 0, \"dur\": 10},\n"
        "{\"name\": \"F_0,1\", \"ph\": \"X\", \"pid\": \"rank 0\", \"tid\": \"compute\", "
        "\"ts\": 10, \"dur\": 10},\n"
        "{\"name\": \"F_1,0\", \"ph\": \"X\", \"pid\": \"rank 1\", \"tid\": \"compute\", "
        "\"ts\": 12, \"dur\": 10},\n"
        "{\"name\": \"B_1,0\", \"ph\": \"X\", \"pid\": \"rank 1\", \"tid\": \"compute\", "
        "\"ts\": 22, \"dur\": 20},\n"
        "{\"name\": \"F_1,1\", \"ph\": \"X\", \"pid\": \"rank 1\", \"tid\": \"compute\", "
        "\"ts\": 42, \"dur\": 10},\n"
        "{\"name\": \"B_0,0\", \"ph\": \"X\", \"pid\": \"rank 0\", \"tid\": \"compute\", "
        "\"ts\": 44, \"dur\": 20},\n"
        "{\"name\": \"B_1,1\", \"ph\": \"X\", \"pid\": \"rank 1\", \"tid\": \"compute\", "
        "\"ts\": 52, \"dur\": 20},\n"
        "{\"name\": \"B_0,1\", \"ph\": \"X\", \"pid\": \"rank 0\", \"tid\": \"compute\", "
        "\"ts\": 74, \"dur\": 20},\n";
    const char *path = write_tmp("pippy.json", trace);
    struct config c = tiny_config(SCHEME_V, 2, 2, 1);
    struct plan *p = build(&c, false), *q = NULL;
    struct import_info info;
    CHECK_EQ_INT(import_files(&path, 1, map, &c, &q, &info, &e), MT_OK);
    if (q == NULL)
        fprintf(stderr, "pippy: %s\n", e.msg);
    CHECK(same_order(p, q));
    plan_free(q);
    plan_free(p);
    mapping_free(map);
}

/* ---- PiPPy's own form, no mapping file (traces/actions.h), its ranks' clocks apart ---------- */

static void test_pippy_names(void)
{
    struct trace_event ev;
    CHECK_EQ_INT(action_pippy("F_12,3", &ev), 1);
    CHECK(ev.op == OP_FW && ev.stage == 12 && ev.mb == 3);
    CHECK_EQ_INT(action_pippy("B_0,1", &ev), 1);
    CHECK(ev.op == OP_BW && ev.stage == 0 && ev.mb == 1);
    CHECK_EQ_INT(action_pippy("IF_0,1", &ev), 0); /* the driver's invocation */
    CHECK_EQ_INT(action_pippy("RB_2,0", &ev), 0); /* a receipt */
    CHECK_EQ_INT(action_pippy("A_0,1", &ev), 0);  /* gradient accumulation */
    CHECK_EQ_INT(action_pippy("F_1", &ev), -1);
    CHECK_EQ_INT(action_pippy("F_1,2x", &ev), -1);
    CHECK_EQ_INT(action_pippy("PP:0F1", &ev), -1);
    CHECK_EQ_INT(action_parse("PP:0F1", &ev), 1); /* torch's, first in the table */
    CHECK(ev.op == OP_FW && ev.stage == 0 && ev.mb == 1);
    CHECK_EQ_INT(action_parse("F_0,1", &ev), 1);
    CHECK_EQ_INT(action_parse("aten::mm", &ev), -1);
}

/* 1F1B on 2 ranks, 2 micro-batches, forwards 1 s, backwards 2 s, 300 us messages, in PiPPy's
 * form (a bare array of B/E pairs, pids "RANK(host/pid)", its driver's and receipts' spans).
 * Rank 1's clock reads skew1 us off; rank 0's backwards are written back_early us early (a
 * clock that drifts: no one offset per rank puts both directions right). */
static const char *pippy_trace(const char *name, double skew1, double back_early)
{
    const double F = 1e6, B = 2e6, L = 300, T0 = 1.7e15;
    struct {
        int rank;
        char kind;
        int stage, mb;
        double start, dur;
    } spans[] = {
        {0, 'F', 0, 0, 0, F},
        {0, 'F', 0, 1, F, F},
        {1, 'F', 1, 0, F + L, F},
        {1, 'B', 1, 0, 2 * F + L, B},
        {1, 'F', 1, 1, 2 * F + L + B, F},
        {0, 'B', 0, 0, 2 * F + 2 * L + B, B},
        {1, 'B', 1, 1, 3 * F + L + B, B},
        {0, 'B', 0, 1, 3 * F + 2 * L + 2 * B, B},
    };
    struct buf b = {0};
    bprintf(&b, "[\n{\"pid\": \"0(trainhost/11)\", \"tid\": 1, \"name\": \"IF_0,0\", \"ph\": "
                "\"B\", \"ts\": %.1f},\n{\"pid\": \"0(trainhost/11)\", \"tid\": 1, \"name\": "
                "\"IF_0,0\", \"ph\": \"E\", \"ts\": %.1f}",
            T0 - 20, T0 - 10);
    for (size_t i = 0; i < sizeof spans / sizeof spans[0]; i++) {
        double t = T0 + spans[i].start + (spans[i].rank == 1 ? skew1 : 0) -
                   (spans[i].rank == 0 && spans[i].kind == 'B' ? back_early : 0);
        char n[32];
        snprintf(n, sizeof n, "%c_%d,%d", spans[i].kind, spans[i].stage, spans[i].mb);
        if (spans[i].rank == 1 && spans[i].kind == 'F')
            bprintf(&b, ",\n{\"pid\": \"1(trainhost/12)\", \"tid\": 0, \"name\": \"R%s\", "
                        "\"ph\": \"B\", \"ts\": %.1f},\n{\"pid\": \"1(trainhost/12)\", \"tid\": "
                        "0, \"name\": \"R%s\", \"ph\": \"E\", \"ts\": %.1f}",
                    n, t - L, n, t);
        for (int edge = 0; edge < 2; edge++)
            bprintf(&b, ",\n{\"pid\": \"%d(trainhost/%d)\", \"tid\": 0, \"name\": \"%s\", "
                        "\"id\": \"%s,0\", \"ph\": \"%c\", \"ts\": %.1f}",
                    spans[i].rank, 11 + spans[i].rank, n, n, edge ? 'E' : 'B',
                    t + (edge ? spans[i].dur : 0));
    }
    bprintf(&b, "\n]\n");
    const char *path = write_tmp(name, b.s);
    free(b.s);
    return path;
}

static void test_pippy_skewed(void)
{
    struct config c = tiny_config(SCHEME_V, 2, 2, 1);
    struct plan *p = build(&c, false), *q = NULL;
    struct import_info info;
    struct mt_err e = {0};
    struct trace *t = NULL;
    struct trace_opts o = {NULL, 0};
    /* rank 1's forward starts 72 us before rank 0's ends: its clock is 372 us behind, which
     * the backwards (672 us apart on these clocks) show; put at the middle, nothing inverts */
    const char *path = pippy_trace("pippy-skew.json", -372, 0);
    CHECK_EQ_INT(trace_load(&path, 1, &o, &t, &e), MT_OK);
    if (t != NULL) {
        CHECK_NEAR(trace_info(t)->clock_shift_us, 372, 1e-6);
        CHECK_EQ_INT(trace_info(t)->devices, 2);
        struct import_opts io = {-1, false, false};
        CHECK_EQ_INT(import_plan(t, &path, 1, &c, &io, &q, &info, &e), MT_OK);
        if (q == NULL)
            fprintf(stderr, "pippy-skew: %s\n", e.msg);
        CHECK(same_order(p, q));
        CHECK_NEAR(info.inversion_us, 0, 1e-9);
        CHECK_EQ_INT((int)info.instructions, 8);
    }
    trace_free(t);
    plan_free(q);
    q = NULL;
    /* and rank 0's backwards 700 us early: forwards say rank 1 is at least 72 us behind,
     * backwards at most -28 us: the middle (22 us) leaves 50 us inverted both ways, within 1%
     * of a 1 s op: imported, the skew reported */
    path = pippy_trace("pippy-drift.json", -372, 700);
    e = (struct mt_err){0};
    CHECK_EQ_INT(import_files(&path, 1, NULL, &c, &q, &info, &e), MT_OK);
    if (q == NULL)
        fprintf(stderr, "pippy-drift: %s\n", e.msg);
    CHECK(same_order(p, q));
    CHECK_NEAR(info.inversion_us, 50, 1e-3);
    plan_free(q);
    q = NULL;
    /* 30 ms early: 15 036 us inverted both ways, more than 1% of a 1 s op (10 000 us) */
    path = pippy_trace("pippy-far.json", -372, 30672);
    e = (struct mt_err){0};
    CHECK_EQ_INT(import_files(&path, 1, NULL, &c, &q, &info, &e), MT_EINVAL);
    CHECK_STR_CONTAINS(e.msg, "device 1: event ");
    CHECK_STR_CONTAINS(e.msg, "pippy-far.json:");
    CHECK_STR_CONTAINS(e.msg, "runs backwards in time by 15036.000 us, more than the 10000.000 us");
    plan_free(q);
    plan_free(p);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "%s/mt-import-XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (mkdtemp(tmpdir) == NULL) {
        perror("mkdtemp");
        return 1;
    }
    test_ours(SCHEME_V, 2, 4, 1, true);
    test_ours(SCHEME_X, 4, 4, 1, false);
    test_ours(SCHEME_W, 2, 4, 2, false);
    test_ours(SCHEME_ZBV, 2, 4, 2, false);
    test_ours(SCHEME_GPIPE, 4, 3, 1, true);
    test_torch(SCHEME_V, 2, 3, 1);
    test_torch(SCHEME_W, 2, 4, 2);
    test_torch(SCHEME_ZBV, 2, 4, 2);
    test_torch(SCHEME_ZBH1, 4, 6, 1);
    test_torch_errors();
    test_pippy();
    test_pippy_names();
    test_pippy_skewed();
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (getenv("KEEP") == NULL && system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmpdir);
    return check_report("test_import");
}
