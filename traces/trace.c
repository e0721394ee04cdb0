/* traces/trace.c: the in-memory trace and trace_load, which reads each file
 * (traces/chrome_read.c) and then settles what only all files together tell:
 *   devices   events without our keys or a rule's device get one from the file's
 *             distributedInfo.rank, the file's position, or their pid (mapping_opts.device);
 *   replicas  only one data-parallel replica is compared with the simulation (which
 *             simulates one), replica 0 unless asked otherwise;
 *   clocks    each rank's events are shifted so that the ranks share one time line: not at
 *             all for our traces (the executor takes one origin after a barrier) and single
 *             files, by each rank's first event for several Kineto files, or by a barrier /
 *             collective event named in the mapping file (its start or end, on every rank);
 *             then, for traces with our keys, by their messages where those show the clocks
 *             apart (a receive that ends before its send starts: a rank that left the start
 *             barrier late, as when ranks outnumber cores; trace_align_messages).
 * Events and samples live in two growing arrays (docs/design.md "Conventions": growing arrays): no per-event allocation. */
#include <config.h>
#include "traces/trace.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/plan/plan.h"
#include "sim/core/vpipe.h"
#include "traces/chrome_read.h"
#include "traces/mapping.h"
#include "traces/scan.h"
#include "util/err.h"
#include "util/xalloc.h"

struct trace {
    struct trace_event *ev;
    size_t n, cap;
    struct trace_mem *mem;
    size_t nm, capm;
    struct trace_info info;
    char *config_text;
    struct trace_a2a *a2a;
    size_t na, capa;
};

struct trace *trace_new(void)
{
    return xcalloc(1, sizeof(struct trace));
}

void trace_free(struct trace *t)
{
    if (t == NULL)
        return;
    free(t->ev);
    free(t->mem);
    free(t->a2a);
    free(t->config_text);
    free(t);
}

const struct trace_event *trace_events(const struct trace *t, size_t *n)
{
    *n = t->n;
    return t->ev;
}

const struct trace_mem *trace_mems(const struct trace *t, size_t *n)
{
    *n = t->nm;
    return t->mem;
}

const struct trace_info *trace_info(const struct trace *t)
{
    return &t->info;
}

const char *trace_config_text(const struct trace *t)
{
    return t->config_text;
}

void trace_set_config_text(struct trace *t, const char *text)
{
    if (t->config_text == NULL)
        t->config_text = xstrdup(text);
}

struct trace_info *trace_info_edit(struct trace *t)
{
    return &t->info;
}

struct trace_event *trace_events_edit(struct trace *t, size_t *n)
{
    *n = t->n;
    return t->ev;
}

struct trace_mem *trace_mems_edit(struct trace *t, size_t *n)
{
    *n = t->nm;
    return t->mem;
}

void trace_events_truncate(struct trace *t, size_t n)
{
    if (n < t->n)
        t->n = n;
}

int trace_add_event(struct trace *t, const struct trace_event *ev, struct mt_err *e)
{
    if (t->n == t->cap) {
        if (t->cap >= TRACE_MAX_EVENTS)
            return err_set(e, MT_ENOMEM, "more than %u events kept", TRACE_MAX_EVENTS);
        t->cap = t->cap ? 2 * t->cap : 1024;
        t->ev = xreallocarray(t->ev, t->cap, sizeof *t->ev);
    }
    t->ev[t->n++] = *ev;
    return MT_OK;
}

void trace_add_mem(struct trace *t, const struct trace_mem *m)
{
    if (t->nm == t->capm) {
        t->capm = t->capm ? 2 * t->capm : 1024;
        t->mem = xreallocarray(t->mem, t->capm, sizeof *t->mem);
    }
    t->mem[t->nm++] = *m;
}

void trace_add_a2a(struct trace *t, const struct trace_a2a *a)
{
    if (t->na == t->capa) {
        t->capa = t->capa ? 2 * t->capa : 256;
        t->a2a = xreallocarray(t->a2a, t->capa, sizeof *t->a2a);
    }
    t->a2a[t->na++] = *a;
}

const struct trace_a2a *trace_a2as(const struct trace *t, size_t *n)
{
    *n = t->na;
    return t->a2a;
}

static int trace_int_cmp(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return x < y ? -1 : x > y;
}

/* Dense index of pid among the sorted distinct pids. */
static int trace_pid_index(const int *pids, int n, int pid)
{
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (pids[mid] < pid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Devices and clock domains (ranks) of everything the readers left open. */
static int trace_resolve(struct trace *t, const struct chrome_file *cf, int files,
                         enum mapping_device mode, struct mt_err *e)
{
    /* the pids of what needs them, sorted and unique */
    int *pids = xmalloc((t->n + t->nm + 1) * sizeof(int));
    int np = 0;
    for (size_t i = 0; i < t->n; i++)
        if (t->ev[i].dev < 0)
            pids[np++] = t->ev[i].pid;
    for (size_t i = 0; i < t->nm; i++)
        if (t->mem[i].dev < 0)
            pids[np++] = t->mem[i].pid;
    qsort(pids, (size_t)np, sizeof *pids, trace_int_cmp);
    int u = 0;
    for (int i = 0; i < np; i++)
        if (u == 0 || pids[u - 1] != pids[i])
            pids[u++] = pids[i];
    int rc = MT_OK;
    for (size_t k = 0; k < t->n + t->nm && rc == MT_OK; k++) {
        bool is_ev = k < t->n;
        int *dev = is_ev ? &t->ev[k].dev : &t->mem[k - t->n].dev;
        int *rank = is_ev ? &t->ev[k].rank : &t->mem[k - t->n].rank;
        int file = is_ev ? t->ev[k].file : t->mem[k - t->n].file;
        int pid = is_ev ? t->ev[k].pid : t->mem[k - t->n].pid;
        int frank = cf[file].rank;
        if (*dev < 0) {
            switch (mode) {
            case MAPPING_DEVICE_RANK:
                if (frank < 0)
                    rc = err_set(e, MT_EINVAL,
                                 "file %d has no distributedInfo.rank, and the mapping says "
                                 "\"device\": \"rank\"",
                                 file + 1);
                *dev = frank;
                break;
            case MAPPING_DEVICE_FILE: *dev = file; break;
            case MAPPING_DEVICE_PID: *dev = trace_pid_index(pids, u, pid); break;
            case MAPPING_DEVICE_AUTO:
            default:
                *dev = frank >= 0 ? frank : files > 1 ? file : trace_pid_index(pids, u, pid);
                break;
            }
        }
        if (*rank < 0)
            *rank = frank >= 0 ? frank : files > 1 ? file : *dev;
    }
    free(pids);
    return rc;
}

/* Shifts each rank's clock onto the first rank's (see the file comment). */
static int trace_align(struct trace *t, enum mapping_align mode, bool end, struct mt_err *e)
{
    int max_rank = -1;
    for (size_t i = 0; i < t->n; i++)
        if (t->ev[i].rank > max_rank)
            max_rank = t->ev[i].rank;
    if (mode == MAPPING_ALIGN_NONE || max_rank < 0)
        return MT_OK;
    if (max_rank >= (1 << 20))
        return err_set(e, MT_EINVAL, "cannot align clocks: rank %d is out of range", max_rank);
    double *ref = xmalloc(2 * ((size_t)max_rank + 1) * sizeof(double));
    double *first = ref + max_rank + 1; /* start of the event ref comes from */
    for (int r = 0; r <= max_rank; r++)
        ref[r] = first[r] = NAN;
    for (size_t i = 0; i < t->n; i++) {
        const struct trace_event *ev = &t->ev[i];
        bool is_align = ev->op == TRACE_OP_ALIGN;
        if ((mode == MAPPING_ALIGN_EVENT) != is_align || ev->rank < 0)
            continue;
        if (isnan(first[ev->rank]) || ev->start_us < first[ev->rank]) {
            first[ev->rank] = ev->start_us;
            ref[ev->rank] = mode == MAPPING_ALIGN_EVENT && end ? ev->end_us : ev->start_us;
        }
    }
    double target = NAN;
    for (int r = 0; r <= max_rank && isnan(target); r++)
        target = ref[r];
    int rc = MT_OK;
    for (size_t i = 0; i < t->n && rc == MT_OK; i++) {
        int r = t->ev[i].rank;
        if (r < 0 || isnan(ref[r])) {
            if (mode == MAPPING_ALIGN_EVENT)
                rc = err_set(e, MT_EINVAL,
                             "rank %d has no event matching the mapping's align.event, so its "
                             "clock cannot be aligned",
                             r);
            continue;
        }
        t->ev[i].start_us += target - ref[r];
        t->ev[i].end_us += target - ref[r];
    }
    for (size_t i = 0; i < t->nm && rc == MT_OK; i++) {
        int r = t->mem[i].rank;
        if (r >= 0 && r <= max_rank && !isnan(ref[r]))
            t->mem[i].t_us += target - ref[r];
    }
    free(ref);
    return rc;
}

/* ---- clocks from causality ----------------------------------------------------------------
 * A message's receive cannot end before its send starts; a forward of stage s+1 cannot start
 * before the forward of stage s of its micro-batch has ended, nor a backward before the
 * backward of the stage after it. For each pair of ranks a, b with such pairs both ways,
 * m_ab = the least (receive end - send start), or (consumer start - producer end), of a's to
 * b, in the recorded clocks: b's clock less a's (theta_b - theta_a, what is added to b's
 * times) lies in [-m_ab, m_ba]. Each rank is placed, from the lowest along the pairs, at the
 * middle of its range (NTP's estimate: the least latencies both ways taken equal), or with
 * pairs one way only at the least shift that makes them causal. Messages are used where the
 * trace has them, compute otherwise (a profiler trace of torch's actions). With `always`
 * false (one clock recorded: ours) the clocks stay unless some pair is not causal. */

struct trace_msg_key {
    int kind, mb, stage, step, replica; /* kind: a receive's op, or the compute kinds below */
    size_t i;
};

#define TRACE_KIND_FWD (OP__COUNT + 1) /* FW, CFW */
#define TRACE_KIND_BWD (OP__COUNT + 2) /* BW, B */

static int trace_msg_cmp(const void *a, const void *b)
{
    const struct trace_msg_key *x = a, *y = b;
    int kx[5] = {x->kind, x->mb, x->stage, x->step, x->replica};
    int ky[5] = {y->kind, y->mb, y->stage, y->step, y->replica};
    for (int k = 0; k < 5; k++)
        if (kx[k] != ky[k])
            return kx[k] < ky[k] ? -1 : 1;
    return 0;
}

struct trace_pair {
    int a, b;     /* producer's rank, consumer's rank */
    double least; /* m_ab */
};

static int trace_pair_cmp(const void *x, const void *y)
{
    const struct trace_pair *p = x, *q = y;
    if (p->a != q->a)
        return p->a < q->a ? -1 : 1;
    return (p->b > q->b) - (p->b < q->b);
}

static double trace_pair_least(const struct trace_pair *v, size_t n, int a, int b)
{
    size_t lo = 0, hi = n;
    struct trace_pair probe = {a, b, 0};
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (trace_pair_cmp(&v[mid], &probe) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && v[lo].a == a && v[lo].b == b ? v[lo].least : NAN;
}

/* The kind an event is found by as a consumer (-1: none), and the key of what it produces
 * for (false: nothing). */
static int trace_consumer_kind(const struct trace_event *ev, bool compute)
{
    if (ev->op < 0 || ev->op >= OP__COUNT || ev->stage < 0 || ev->mb < 0)
        return -1;
    enum op op = (enum op)ev->op;
    if (!compute)
        return vpipe_is_recv(op) ? (int)op : -1;
    return plan_op_is_forward(op) ? TRACE_KIND_FWD : plan_op_is_backward(op) ? TRACE_KIND_BWD : -1;
}

static bool trace_produces(const struct trace_event *ev, bool compute, struct trace_msg_key *k)
{
    if (ev->op < 0 || ev->op >= OP__COUNT || ev->stage < 0 || ev->mb < 0)
        return false;
    enum op op = (enum op)ev->op, peer;
    int stage;
    if (compute) { /* the stage its output goes to, as the send after it would say */
        bool fwd = plan_op_is_forward(op);
        if (!fwd && !plan_op_is_backward(op))
            return false;
        if (!vpipe_peer(fwd ? OP_SA : OP_SG, ev->stage, &peer, &stage))
            return false;
        k->kind = fwd ? TRACE_KIND_FWD : TRACE_KIND_BWD;
    } else {
        if (!vpipe_is_send(op) || !vpipe_peer(op, ev->stage, &peer, &stage))
            return false;
        k->kind = (int)peer;
    }
    k->mb = ev->mb;
    k->stage = stage;
    k->step = ev->step;
    k->replica = ev->replica;
    return true;
}

/* The least of each (producer rank, consumer rank) pair into pr (sorted, one per pair). */
static size_t trace_causal_pairs(const struct trace *t, bool compute, struct trace_pair *pr,
                                 struct trace_msg_key *keys)
{
    size_t nk = 0;
    for (size_t i = 0; i < t->n; i++) {
        const struct trace_event *ev = &t->ev[i];
        int kind = trace_consumer_kind(ev, compute);
        if (kind >= 0 && ev->rank >= 0)
            keys[nk++] = (struct trace_msg_key){kind, ev->mb, ev->stage, ev->step, ev->replica, i};
    }
    qsort(keys, nk, sizeof *keys, trace_msg_cmp);
    size_t np = 0;
    for (size_t i = 0; i < t->n && nk > 0; i++) {
        const struct trace_event *s = &t->ev[i];
        struct trace_msg_key want;
        if (s->rank < 0 || !trace_produces(s, compute, &want))
            continue;
        struct trace_msg_key *k = bsearch(&want, keys, nk, sizeof *keys, trace_msg_cmp);
        if (k == NULL || t->ev[k->i].rank == s->rank)
            continue;
        const struct trace_event *c = &t->ev[k->i];
        double least = compute ? c->start_us - s->end_us : c->end_us - s->start_us;
        pr[np++] = (struct trace_pair){s->rank, c->rank, least};
    }
    qsort(pr, np, sizeof *pr, trace_pair_cmp);
    size_t u = 0;
    for (size_t i = 0; i < np; i++) {
        if (u > 0 && pr[u - 1].a == pr[i].a && pr[u - 1].b == pr[i].b) {
            pr[u - 1].least = fmin(pr[u - 1].least, pr[i].least);
            continue;
        }
        pr[u++] = pr[i];
    }
    return u;
}

/* Whether the trace had pairs to align by (then it is aligned, or was already causal). */
static bool trace_align_causal(struct trace *t, bool always)
{
    int max_rank = -1;
    for (size_t i = 0; i < t->n; i++)
        if (t->ev[i].rank > max_rank)
            max_rank = t->ev[i].rank;
    if (max_rank < 1 || max_rank >= (1 << 20))
        return false;
    struct trace_msg_key *keys = xmalloc((t->n + 1) * sizeof *keys);
    struct trace_pair *pr = xmalloc((t->n + 1) * sizeof *pr);
    size_t u = trace_causal_pairs(t, false, pr, keys);
    if (u == 0)
        u = trace_causal_pairs(t, true, pr, keys);
    free(keys);
    bool apart = always;
    for (size_t i = 0; i < u; i++) {
        double back = trace_pair_least(pr, u, pr[i].b, pr[i].a);
        /* theta_b - theta_a in [-m_ab, m_ba]: 0 outside it means the clocks are apart */
        apart |= pr[i].least < 0 || (!isnan(back) && back < 0);
    }
    if (u > 0 && apart) {
        double *theta = xmalloc(((size_t)max_rank + 1) * sizeof(double));
        int *queue = xmalloc(((size_t)max_rank + 1) * sizeof(int));
        for (int r = 0; r <= max_rank; r++)
            theta[r] = NAN;
        for (int root = 0; root <= max_rank; root++) { /* each group of linked ranks */
            if (!isnan(theta[root]))
                continue;
            theta[root] = 0;
            int qh = 0, qt = 0;
            queue[qt++] = root;
            while (qh < qt) {
                int a = queue[qh++];
                for (size_t i = 0; i < u; i++) {
                    int b = pr[i].a == a ? pr[i].b : pr[i].b == a ? pr[i].a : -1;
                    if (b < 0 || !isnan(theta[b]))
                        continue;
                    double ab = trace_pair_least(pr, u, a, b), ba = trace_pair_least(pr, u, b, a);
                    double d = !isnan(ab) && !isnan(ba) ? (ba - ab) / 2
                               : !isnan(ab)             ? fmax(0, -ab)
                                                        : fmin(0, ba);
                    theta[b] = theta[a] + d;
                    queue[qt++] = b;
                }
            }
        }
        double most = 0;
        for (int r = 0; r <= max_rank; r++)
            most = fmax(most, fabs(theta[r]));
        t->info.clock_shift_us = most;
        for (size_t i = 0; i < t->n; i++)
            if (t->ev[i].rank >= 0) {
                t->ev[i].start_us += theta[t->ev[i].rank];
                t->ev[i].end_us += theta[t->ev[i].rank];
            }
        for (size_t i = 0; i < t->nm; i++)
            if (t->mem[i].rank >= 0 && t->mem[i].rank <= max_rank)
                t->mem[i].t_us += theta[t->mem[i].rank];
        free(theta);
        free(queue);
    }
    free(pr);
    return u > 0;
}

static int trace_finish(struct trace *t, const struct chrome_file *cf, int files,
                        const struct trace_opts *o, const char *name, struct mt_err *e)
{
    const struct mapping_opts *mo = o && o->map ? mapping_opts(o->map) : NULL;
    /* Their messages name a rank or a rule; the file goes in front (issue 9). */
    if (trace_resolve(t, cf, files, mo ? mo->device : MAPPING_DEVICE_AUTO, e) != MT_OK)
        return err_wrap(e, "%s", name);
    bool ours = false, kineto = false;
    for (int i = 0; i < files; i++) {
        ours |= cf[i].ours;
        kineto |= cf[i].kineto;
    }
    enum mapping_align asked = mo ? mo->align : MAPPING_ALIGN_AUTO, al = asked;
    if (al == MAPPING_ALIGN_AUTO)
        al = ours || files == 1 ? MAPPING_ALIGN_NONE : MAPPING_ALIGN_FIRST;
    if (trace_align(t, al == MAPPING_ALIGN_CAUSAL ? MAPPING_ALIGN_FIRST : al,
                    mo ? mo->align_end : false, e) != MT_OK)
        return err_wrap(e, "%s", name);
    /* then by causality: always when asked or for several profiler files (their first
     * events are not one instant: the first stage starts before the last); for ours (one
     * clock) and for one foreign file (its pids are processes with clocks of their own, as
     * PiPPy's RPC ranks) only where the messages or dependencies say the clocks are apart */
    if (al == MAPPING_ALIGN_CAUSAL || asked == MAPPING_ALIGN_AUTO) {
        bool always = (!ours && files > 1) || al == MAPPING_ALIGN_CAUSAL;
        if (trace_align_causal(t, always) && (always || t->info.clock_shift_us > 0))
            al = MAPPING_ALIGN_CAUSAL;
    }
    t->info.align = (int)al;

    /* one replica; the alignment events have done their work */
    int replica = o ? o->replica : 0;
    size_t k = 0;
    for (size_t i = 0; i < t->n; i++) {
        const struct trace_event *ev = &t->ev[i];
        if (ev->op == TRACE_OP_ALIGN || (replica >= 0 && ev->replica != replica))
            continue;
        t->ev[k++] = *ev;
    }
    t->n = k;
    k = 0;
    for (size_t i = 0; i < t->nm; i++)
        if (replica < 0 || t->mem[i].replica == replica)
            t->mem[k++] = t->mem[i];
    t->nm = k;

    struct trace_info *in = &t->info;
    in->files = files;
    for (size_t i = 0; i < t->n; i++) {
        const struct trace_event *ev = &t->ev[i];
        if (ev->dev + 1 > in->devices)
            in->devices = ev->dev + 1;
        if (ev->replica + 1 > in->replicas)
            in->replicas = ev->replica + 1;
        if (ev->step + 1 > in->steps)
            in->steps = ev->step + 1;
    }
    for (size_t i = 0; i < t->nm; i++)
        if (t->mem[i].dev + 1 > in->devices)
            in->devices = t->mem[i].dev + 1;
    if (in->source[0] == '\0')
        snprintf(in->source, sizeof in->source, "%s", kineto ? "kineto" : "chrome");
    if (t->n == 0)
        return err_set(e, MT_EINVAL,
                       "%s: no instruction or device events among the %zu read (%s): not a "
                       "trace of a run, or a profiler trace that needs a mapping file "
                       "(--map)",
                       name, in->events_read,
                       ours ? "all from another replica" : "none has our args {op, mb, stage}");
    return MT_OK;
}

int trace_load(const char *const *paths, int n, const struct trace_opts *o, struct trace **out,
               struct mt_err *e)
{
    *out = NULL;
    if (n < 1 || n > TRACE_MAX_FILES)
        return err_set(e, MT_EINVAL, "from 1 to %d trace files (got %d)", TRACE_MAX_FILES, n);
    struct trace *t = trace_new();
    struct chrome_file *cf = xcalloc((size_t)n, sizeof *cf);
    int rc = MT_OK;
    for (int i = 0; i < n && rc == MT_OK; i++) {
        struct scan *s;
        rc = scan_open(paths[i], &s, e);
        if (rc != MT_OK)
            break;
        rc = chrome_read(s, i, o ? o->map : NULL, t, &cf[i], e);
        if (rc != MT_OK && e && strstr(e->msg, paths[i]) == NULL)
            err_wrap(e, "%s", paths[i]);
        scan_close(s);
    }
    if (rc == MT_OK)
        rc = trace_finish(t, cf, n, o, n == 1 ? paths[0] : "the trace files", e);
    free(cf);
    if (rc != MT_OK) {
        trace_free(t);
        return rc;
    }
    *out = t;
    return MT_OK;
}

int trace_load_mem(const char *data, size_t len, const char *name, const struct trace_opts *o,
                   struct trace **out, struct mt_err *e)
{
    *out = NULL;
    struct trace *t = trace_new();
    struct chrome_file cf;
    struct scan *s;
    int rc = scan_open_mem(data, len, name, &s, e);
    if (rc == MT_OK) {
        rc = chrome_read(s, 0, o ? o->map : NULL, t, &cf, e);
        scan_close(s);
    }
    if (rc == MT_OK)
        rc = trace_finish(t, &cf, 1, o, name, e);
    if (rc != MT_OK) {
        trace_free(t);
        return rc;
    }
    *out = t;
    return MT_OK;
}
