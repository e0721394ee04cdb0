/* traces/import.c: traces/import.h. The step's events of each device are put in time order
 * (ties: file order) and cut where a key comes again (a second iteration the trace did not
 * mark with ProfilerStep); keys are looked up by (op, micro-batch, stage) in one sorted array
 * for the checks; a foreign trace's compute order is handed to the torch schedule CSV loader,
 * which owns the placements and the communication (sim/plan/plan_csv.c). */
#include <config.h>
#include "traces/import.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/config.h"
#include "model/presets.h"
#include "sim/plan/plan.h"
#include "sim/schemes/scheme.h"
#include "sim/plan/validate.h"
#include "sim/core/vpipe.h"
#include "traces/scan.h"
#include "traces/trace.h"
#include "util/err.h"
#include "util/xalloc.h"

/* Time order may say a consumer started a hair before its producer ended (clock rounding). */
#define IMPORT_TOL_US 1e-3
/* Real traces are imprecise: after the clocks are put together (traces/trace.c), a consumer
 * may still start before its producer ends, by a skew no single offset per rank removes
 * (clocks that drift, timestamps taken around the op rather than on it). Up to this fraction
 * of the shorter of the two ops the order is taken as the dependency says (and the largest
 * such inversion reported); past it no schedule explains the trace and it is refused. */
#define IMPORT_INVERSION_FRACTION 0.01

struct importer {
    const struct trace *t;
    const char *const *paths;
    int npaths;
    int step, devices;
    bool ours;
    const struct trace_event **ev; /* the kept events, device by device in time order */
    size_t n;
    int *off;                /* [devices + 1]: device d's events at [off[d], off[d+1]) */
    struct import_key *keys; /* sorted, for lookups */
};

struct import_key {
    int op, mb, stage;
    size_t i; /* into ev */
};

static int import_key_cmp(const void *a, const void *b)
{
    const struct import_key *x = a, *y = b;
    if (x->op != y->op)
        return x->op < y->op ? -1 : 1;
    if (x->mb != y->mb)
        return x->mb < y->mb ? -1 : 1;
    if (x->stage != y->stage)
        return x->stage < y->stage ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

static int import_time_cmp(const void *a, const void *b)
{
    const struct trace_event *x = *(const struct trace_event *const *)a;
    const struct trace_event *y = *(const struct trace_event *const *)b;
    if (x->dev != y->dev)
        return x->dev < y->dev ? -1 : 1;
    if (x->start_us != y->start_us)
        return x->start_us < y->start_us ? -1 : 1;
    if (x->file != y->file)
        return x->file < y->file ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

/* "event 57 (FW, micro-batch 3, stage 1) at rank1.json:1:8812" */
static void import_where(const struct importer *im, const struct trace_event *ev, char *buf,
                         size_t n)
{
    char what[80];
    if (ev->op == OP_AR || ev->op == OP_OS || ev->mb < 0)
        snprintf(what, sizeof what, "%s, stage %d", plan_op_name((enum op)ev->op), ev->stage);
    else
        snprintf(what, sizeof what, "%s, micro-batch %d, stage %d", plan_op_name((enum op)ev->op),
                 ev->mb, ev->stage);
    long line = 0, col = 0;
    const char *path =
        im->paths && ev->file >= 0 && ev->file < im->npaths ? im->paths[ev->file] : NULL;
    struct scan *s;
    if (path != NULL && scan_open(path, &s, NULL) == MT_OK) {
        struct scan_item it;
        while (scan_next(s, &it, NULL) == MT_OK && it.kind != SCAN_END)
            if (it.kind == SCAN_EVENT && it.index == (size_t)ev->index) {
                line = it.line;
                col = it.col;
                break;
            }
        scan_close(s);
    }
    if (line > 0)
        snprintf(buf, n, "event %d (%s) at %s:%ld:%ld", ev->index, what, path, line, col);
    else if (path != NULL)
        snprintf(buf, n, "event %d (%s) of %s", ev->index, what, path);
    else
        snprintf(buf, n, "event %d (%s)", ev->index, what);
}

static int import_fail(const struct importer *im, const struct trace_event *ev, struct mt_err *e,
                       const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int import_fail(const struct importer *im, const struct trace_event *ev, struct mt_err *e,
                       const char *fmt, ...)
{
    char where[600], why[400];
    import_where(im, ev, where, sizeof where);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    return err_set(e, MT_EINVAL, "device %d: %s: %s", ev->dev, where, why);
}

/* The first kept event with (op, mb, stage), or NULL. */
static const struct trace_event *import_find(const struct importer *im, int op, int mb, int stage)
{
    struct import_key probe = {op, mb, stage, 0};
    size_t lo = 0, hi = im->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (import_key_cmp(&im->keys[mid], &probe) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    const struct import_key *k = &im->keys[lo];
    return lo < im->n && k->op == op && k->mb == mb && k->stage == stage ? im->ev[k->i] : NULL;
}

/* Either op's event of (mb, stage) (FW or CFW; BW or B). */
static const struct trace_event *import_find2(const struct importer *im, int op1, int op2, int mb,
                                              int stage)
{
    const struct trace_event *x = import_find(im, op1, mb, stage);
    return x ? x : import_find(im, op2, mb, stage);
}

/* The step taken and each device's events of it in time order, cut at a repeated key. */
static int import_collect(struct importer *im, const struct import_opts *o, size_t *left_out,
                          struct mt_err *e)
{
    size_t n;
    const struct trace_event *ev = trace_events(im->t, &n);
    int lo = -1, second = -1;
    bool want_seen = false;
    for (size_t i = 0; i < n; i++) {
        if (ev[i].op < 0 || ev[i].op >= OP__COUNT || ev[i].dev < 0)
            continue;
        int s = ev[i].step;
        want_seen |= o && s == o->step;
        if (lo < 0 || s < lo) {
            if (lo >= 0)
                second = lo;
            lo = s;
        } else if (s > lo && (second < 0 || s < second)) {
            second = s;
        }
    }
    if (lo < 0)
        return err_set(e, MT_EINVAL,
                       "no event names a plan instruction (op, micro-batch, stage): not a trace "
                       "of ours nor of torch.distributed.pipelining (its \"PP:\" ranges); a "
                       "profiler trace needs a mapping file (--map)");
    if (o && o->step >= 0 && !want_seen)
        return err_set(e, MT_EINVAL, "step %d has no instruction in the trace", o->step);
    im->step = o && o->step >= 0 ? o->step : second >= 0 ? second : lo;
    im->ev = xmalloc((n + 1) * sizeof *im->ev);
    im->n = 0;
    size_t in_step = 0;
    for (size_t i = 0; i < n; i++) {
        const struct trace_event *x = &ev[i];
        if (x->op < 0 || x->op >= OP__COUNT || x->dev < 0 || x->step != im->step)
            continue;
        in_step++;
        if (!im->ours && !plan_op_is_compute((enum op)x->op))
            continue; /* made again with the plan */
        if (x->dev >= CONFIG_MAX_DEVICES)
            return err_set(e, MT_EINVAL, "device %d is out of range (at most %d devices)", x->dev,
                           CONFIG_MAX_DEVICES);
        im->ev[im->n++] = x;
    }
    qsort(im->ev, im->n, sizeof *im->ev, import_time_cmp);
    /* cut each device at the first key seen before on it: a second iteration */
    struct import_key *k = xmalloc((im->n + 1) * sizeof *k);
    size_t out = 0;
    for (size_t a = 0; a < im->n;) {
        size_t b = a;
        while (b < im->n && im->ev[b]->dev == im->ev[a]->dev)
            b++;
        for (size_t i = a; i < b; i++)
            k[i - a] = (struct import_key){im->ev[i]->op, im->ev[i]->mb,
                                           im->ev[i]->stage * (CONFIG_MAX_CHUNKS + 1) +
                                               (im->ev[i]->part > 0 ? im->ev[i]->part : 0),
                                           i};
        qsort(k, b - a, sizeof *k, import_key_cmp);
        size_t cut = b;
        for (size_t i = 1; i < b - a; i++)
            if (k[i].op == k[i - 1].op && k[i].mb == k[i - 1].mb && k[i].stage == k[i - 1].stage &&
                k[i].i < cut)
                cut = k[i].i;
        for (size_t i = a; i < cut; i++)
            im->ev[out++] = im->ev[i];
        a = b;
    }
    free(k);
    *left_out = in_step - out;
    im->n = out;
    im->devices = 0;
    for (size_t i = 0; i < im->n; i++)
        if (im->ev[i]->dev + 1 > im->devices)
            im->devices = im->ev[i]->dev + 1;
    im->off = xcalloc((size_t)im->devices + 2, sizeof(int));
    for (size_t i = 0; i < im->n; i++)
        im->off[im->ev[i]->dev + 1]++;
    for (int d = 0; d < im->devices; d++) {
        if (im->off[d + 1] == 0)
            return err_set(e, MT_EINVAL,
                           "device %d has no instruction in step %d (the trace has "
                           "devices up to %d)",
                           d, im->step, im->devices - 1);
        im->off[d + 1] += im->off[d];
    }
    im->keys = xmalloc((im->n + 1) * sizeof *im->keys);
    for (size_t i = 0; i < im->n; i++) {
        const struct trace_event *x = im->ev[i];
        if (x->stage < 0)
            return import_fail(im, x, e, "no stage: a mapping rule must give one (\"stage\")");
        if (x->mb < 0 && x->op != OP_AR && x->op != OP_OS)
            return import_fail(im, x, e, "no micro-batch: a mapping rule must give one (\"mb\")");
        im->keys[i] = (struct import_key){x->op, x->mb, x->stage, i};
    }
    qsort(im->keys, im->n, sizeof *im->keys, import_key_cmp);
    return MT_OK;
}

/* Same-device pairs: each forward's backward after it, B's W, RC's CFW (before the backward). */
static int import_check_pairs(const struct importer *im, struct mt_err *e)
{
    for (size_t i = 0; i < im->n; i++) {
        const struct trace_event *x = im->ev[i];
        const char *need = NULL;
        const struct trace_event *y = NULL;
        bool after = true; /* y must come after x */
        switch (x->op) {
        case OP_FW:
        case OP_CFW:
            y = import_find2(im, OP_BW, OP_B, x->mb, x->stage);
            need = "the forward has no backward (BW, or B and W)";
            break;
        case OP_BW:
        case OP_B:
            y = import_find2(im, OP_FW, OP_CFW, x->mb, x->stage);
            need = "the backward has no forward";
            after = false;
            break;
        case OP_W:
            y = import_find(im, OP_B, x->mb, x->stage);
            need = "a W has no B (its input-gradient half) before it";
            after = false;
            break;
        case OP_RC:
            y = import_find(im, OP_CFW, x->mb, x->stage);
            need = "a recompute has no checkpointed forward (CFW) before it";
            after = false;
            break;
        default: continue;
        }
        if (x->op == OP_B && y != NULL && import_find(im, OP_W, x->mb, x->stage) == NULL) {
            y = NULL;
            need = "a B has no W (its weight-gradient half)";
        }
        if (y == NULL)
            return import_fail(im, x, e, "%s in step %d", need, im->step);
        if (y->dev != x->dev)
            return import_fail(im, x, e, "its %s is on device %d", plan_op_name((enum op)y->op),
                               y->dev);
        const struct trace_event *first = after ? x : y, *second = after ? y : x;
        if (import_time_cmp(&first, &second) > 0)
            return import_fail(im, second, e, "runs before the %s it needs (%s of micro-batch %d)",
                               plan_op_name((enum op)first->op), plan_op_name((enum op)first->op),
                               first->mb);
    }
    return MT_OK;
}

/* Across devices: a forward after the forward of the stage before, a backward after the
 * backward of the stage after (as the sends between them say, sim/core/vpipe.h). */
static int import_check_time(const struct importer *im, double *inversion_us, struct mt_err *e)
{
    *inversion_us = 0;
    for (size_t i = 0; i < im->n; i++) {
        const struct trace_event *x = im->ev[i];
        bool fwd = plan_op_is_forward((enum op)x->op), bwd = plan_op_is_backward((enum op)x->op);
        enum op peer;
        int stage;
        if ((!fwd && !bwd) || !vpipe_peer(fwd ? OP_SA : OP_SG, x->stage, &peer, &stage))
            continue;
        const struct trace_event *y = fwd ? import_find2(im, OP_FW, OP_CFW, x->mb, stage)
                                          : import_find2(im, OP_BW, OP_B, x->mb, stage);
        if (y == NULL || y->dev == x->dev || y->start_us >= x->end_us - IMPORT_TOL_US)
            continue;
        double inversion = x->end_us - y->start_us;
        double bound = IMPORT_INVERSION_FRACTION *
                       fmin(x->end_us - x->start_us, y->end_us - y->start_us);
        if (inversion <= bound) {
            *inversion_us = fmax(*inversion_us, inversion);
            continue;
        }
        char where[600];
        import_where(im, x, where, sizeof where);
        return import_fail(im, y, e,
                           "starts at %.3f us, before the %s it needs ends at %.3f us (device "
                           "%d, %s): a dependency that runs backwards in time by %.3f us, "
                           "more than the %.3f us (1%% of the shorter op) a clock's skew "
                           "explains",
                           y->start_us, fwd ? "forward" : "backward", x->end_us, x->dev, where,
                           inversion, bound);
    }
    return MT_OK;
}

/* A stage runs on one device (a foreign trace; Chimera's two pipelines are ours only). */
static int import_check_stages(const struct importer *im, struct mt_err *e)
{
    for (size_t i = 1; i < im->n; i++) {
        const struct trace_event *a = im->ev[im->keys[i - 1].i];
        for (size_t j = i; j < im->n && im->keys[j].op == im->keys[i - 1].op &&
                           im->keys[j].stage == im->keys[i - 1].stage;
             j++) {
            const struct trace_event *b = im->ev[im->keys[j].i];
            if (b->dev != a->dev)
                return import_fail(im, b, e, "stage %d ran on device %d before (%s)", a->stage,
                                   a->dev, plan_op_name((enum op)a->op));
        }
    }
    return MT_OK;
}

/* The device preset a profiler's deviceProperties name stands for, or NULL. */
static const char *import_device_preset(const char *name)
{
    if (strstr(name, "H200"))
        return "H200";
    if (strstr(name, "H100"))
        return "H100-80G";
    if (strstr(name, "A100"))
        return strstr(name, "80") ? "A100-80G" : "A100-40G";
    return NULL;
}

static int import_ours(const struct importer *im, const struct config *base,
                       const struct import_opts *o, struct plan **out, bool *from_trace,
                       struct mt_err *e)
{
    const struct trace_info *ti = trace_info(im->t);
    const char *text = trace_config_text(im->t);
    struct config c = *base;
    int S = 0, N = 0, P = 0;
    for (size_t i = 0; i < im->n; i++) {
        const struct trace_event *x = im->ev[i];
        S = x->stage + 1 > S ? x->stage + 1 : S;
        N = x->mb + 1 > N ? x->mb + 1 : N;
        P = x->part + 1 > P ? x->part + 1 : P;
    }
    *from_trace = text != NULL && !(o && o->flags);
    if (*from_trace) {
        TRY(config_load_string(text, strlen(text), "the trace's otherData.config", &c, e));
    } else {
        if (ti->scheme[0] == '\0' || config_scheme_parse(ti->scheme, &c.scheme, NULL) != MT_OK)
            return err_set(e, MT_EINVAL, "the trace names no scheme of ours (otherData.scheme)");
        config_set_pp(&c, im->devices);
        c.num_microbatches = N;
        c.global_batch_size = N * c.micro_batch_size * c.cluster.dp;
        if (config_stages_per_device(&c) > 1 || config_scheme_uses_chunks(c.scheme))
            c.chunks = P > 1 ? P : c.chunks;
        c.iterations = 1;
        c.update_interval = 1;
        c.unit.enabled = ti->unit;
    }
    struct plan_geom g;
    TRY(scheme_geom(&c, &g, e));
    if (g.devices != im->devices || g.stages != S || g.mbs < N || g.parts < P)
        return err_set(e, MT_EINVAL,
                       "the trace's shape (%d devices, %d stages, %d micro-batches, %d parts) is "
                       "not a %s plan's of its config (%d, %d, %d, %d)",
                       im->devices, S, N, P, config_scheme_name(c.scheme), g.devices, g.stages,
                       g.mbs, g.parts);
    struct plan *p = plan_new(&c, &g);
    for (size_t i = 0; i < im->n; i++) {
        const struct trace_event *x = im->ev[i];
        struct instr in = {(enum op)x->op, x->mb, x->part > 0 ? x->part : 0, x->stage, -1, 0, 0, 0};
        int pd, pp;
        if (vpipe_is_p2p(in.op) && vpipe_peer_place(&g, &in, &pd, &pp))
            in.peer = pd;
        plan_append(p, x->dev, in);
    }
    *out = p;
    return MT_OK;
}

static int import_foreign(const struct importer *im, const struct config *base,
                          const struct import_opts *o, struct plan **out, struct mt_err *e)
{
    TRY(import_check_stages(im, e));
    struct config c = *base;
    const char *dev = import_device_preset(trace_info(im->t)->device_name);
    if (dev != NULL && !(o && o->device_given))
        TRY(presets_device(dev, &c.cluster.device, e));
    /* the order as torch's schedule CSV: its loader finds the placement */
    size_t cap = 64 + 24 * im->n, len = 0;
    char *csv = xmalloc(cap);
    bool ckpt = false;
    for (int d = 0; d < im->devices; d++) {
        int cells = 0;
        for (int i = im->off[d]; i < im->off[d + 1]; i++) {
            const struct trace_event *x = im->ev[i];
            ckpt |= x->op == OP_CFW || x->op == OP_RC;
            char letter = x->op == OP_FW || x->op == OP_CFW ? 'F'
                          : x->op == OP_B                   ? 'I'
                          : x->op == OP_W                   ? 'W'
                          : x->op == OP_BW                  ? 'B'
                                                            : 0;
            if (letter)
                len += (size_t)snprintf(csv + len, cap - len, "%s%d%c%d", cells++ ? "," : "",
                                        x->stage, letter, x->mb);
        }
        csv[len++] = '\n';
    }
    csv[len] = '\0';
    struct plan *p0 = NULL;
    int rc = plan_load_torch_csv(csv, len, "the trace's order", &c, &p0, e);
    free(csv);
    TRY(rc);
    if (!ckpt) {
        *out = p0;
        return MT_OK;
    }
    /* checkpointed forwards and recomputes (a mapping's): the measured ops in that placement */
    struct plan *p = plan_new(plan_config(p0), plan_geom(p0));
    for (size_t i = 0; i < im->n; i++) {
        const struct trace_event *x = im->ev[i];
        int d, part;
        vpipe_locate(plan_geom(p0), x->mb, x->stage, &d, &part);
        plan_append(p, d, (struct instr){(enum op)x->op, x->mb, part, x->stage, -1, 0, 0, 0});
    }
    plan_free(p0);
    scheme_add_comm(p);
    *out = p;
    return MT_OK;
}

int import_plan(const struct trace *t, const char *const *paths, int npaths,
                const struct config *base, const struct import_opts *o, struct plan **out,
                struct import_info *info, struct mt_err *e)
{
    *out = NULL;
    memset(info, 0, sizeof *info);
    const struct trace_info *ti = trace_info(t);
    struct importer im = {.t = t, .paths = paths, .npaths = npaths};
    im.ours = strcmp(ti->source, "measured") == 0 || strcmp(ti->source, "simulated") == 0;
    size_t left_out = 0;
    int rc = import_collect(&im, o, &left_out, e);
    if (rc == MT_OK)
        rc = import_check_pairs(&im, e);
    double inversion_us = 0;
    if (rc == MT_OK)
        rc = import_check_time(&im, &inversion_us, e);
    struct plan *p = NULL;
    bool from_trace = false;
    if (rc == MT_OK)
        rc = im.ours ? import_ours(&im, base, o, &p, &from_trace, e)
                     : import_foreign(&im, base, o, &p, e);
    if (rc == MT_OK) { /* the plan says where it came from */
        struct config c = *plan_config(p);
        snprintf(c.source, sizeof c.source, "imported from %s",
                 paths && npaths > 0 ? paths[0] : "a trace");
        struct plan *q = plan_with_config(p, &c);
        char origin[256];
        snprintf(origin, sizeof origin, "imported from %s%s, step %d",
                 paths && npaths > 0 ? paths[0] : "a trace", npaths > 1 ? " ..." : "", im.step);
        plan_set_origin(q, origin);
        plan_free(p);
        p = q;
        rc = validate_plan_input(p, e);
        if (rc != MT_OK)
            err_wrap(e, "the plan imported from step %d", im.step);
    }
    if (rc == MT_OK) {
        const struct plan_geom *g = plan_geom(p);
        *info = (struct import_info){im.step,   im.ours, from_trace, g->devices,
                                     g->stages, g->mbs,  im.n,       left_out,
                                     inversion_us};
        *out = p;
    } else {
        plan_free(p);
    }
    free(im.ev);
    free(im.off);
    free(im.keys);
    return rc;
}
