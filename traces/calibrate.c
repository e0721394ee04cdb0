/* traces/calibrate.c: observations from measured runs and the least-squares fits of
 * traces/calibrate.h. Each run is aligned with its plan (traces/align.h) for its steps (the
 * first, warming up, is left out), its memory and its messages; a time observation is the
 * mean duration of one op's events on one stage over those steps. */
#include <config.h>
#include "traces/calibrate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/config.h"
#include "model/cost.h"
#include "model/profile.h"
#include "sim/plan/plan.h"
#include "sim/core/vpipe.h"
#include "sim/schemes/scheme.h"
#include "traces/align.h"
#include "traces/replay.h"
#include "traces/trace.h"
#include "util/err.h"
#include "util/xalloc.h"

#define CALIBRATE_MAX_COLS 4

struct calibrate {
    struct calibrate_obs *obs;
    size_t n, cap;
    int runs;
};

static const char *const calibrate_names[CAL__COUNT] = {
    "fw_us",          "bw_us",         "rc_us",     "os_us",
    "ar_us",          "p2p_us",        "static_bytes", "peak_dynamic_bytes",
    "fw_work_bytes",  "cfw_peak_bytes", "bw_work_bytes", "msg_bytes",
    "b_us",           "w_us",          "w_keep_bytes", "p2p_shared_us",
    "recv_shared_us", "gap_shared_us"};

const char *calibrate_qty_name(enum calibrate_qty q)
{
    return q >= 0 && q < CAL__COUNT ? calibrate_names[q] : "?";
}

struct calibrate *calibrate_new(void)
{
    return xcalloc(1, sizeof(struct calibrate));
}

void calibrate_free(struct calibrate *c)
{
    if (c == NULL)
        return;
    free(c->obs);
    free(c);
}

const struct calibrate_obs *calibrate_observations(const struct calibrate *c, size_t *n)
{
    *n = c->n;
    return c->obs;
}

static void calibrate_add(struct calibrate *c, const struct calibrate_obs *o)
{
    if (c->n == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 64;
        c->obs = xreallocarray(c->obs, c->cap, sizeof *c->obs);
    }
    c->obs[c->n++] = *o;
}

static int calibrate_double_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of v[n] (n > 0; v is sorted in place). */
static double calibrate_median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, calibrate_double_cmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int calibrate_lsq(const double *x, const double *y, int rows, int cols, double *coef, double *r2,
                  struct mt_err *e)
{
    if (cols < 1 || cols > CALIBRATE_MAX_COLS || rows < cols)
        return err_set(e, MT_EINVAL, "least squares: %d observations for %d unknowns", rows, cols);
    double a[CALIBRATE_MAX_COLS][CALIBRATE_MAX_COLS + 1] = {{0}};
    for (int r = 0; r < rows; r++)
        for (int i = 0; i < cols; i++) {
            for (int j = 0; j < cols; j++)
                a[i][j] += x[r * cols + i] * x[r * cols + j];
            a[i][cols] += x[r * cols + i] * y[r];
        }
    double diag = 0;
    for (int i = 0; i < cols; i++)
        if (a[i][i] > diag)
            diag = a[i][i];
    for (int k = 0; k < cols; k++) {
        int piv = k;
        for (int i = k + 1; i < cols; i++)
            if (fabs(a[i][k]) > fabs(a[piv][k]))
                piv = i;
        if (!(fabs(a[piv][k]) > 1e-9 * diag))
            return err_set(e, MT_EINVAL,
                           "least squares: the observations cannot tell the "
                           "unknowns apart");
        if (piv != k)
            for (int j = 0; j <= cols; j++) {
                double t = a[k][j];
                a[k][j] = a[piv][j];
                a[piv][j] = t;
            }
        for (int i = 0; i < cols; i++) {
            if (i == k)
                continue;
            double f = a[i][k] / a[k][k];
            for (int j = k; j <= cols; j++)
                a[i][j] -= f * a[k][j];
        }
    }
    for (int i = 0; i < cols; i++)
        coef[i] = a[i][cols] / a[i][i];
    if (r2 != NULL) {
        double mean = 0, ss_tot = 0, ss_res = 0;
        for (int r = 0; r < rows; r++)
            mean += y[r] / rows;
        for (int r = 0; r < rows; r++) {
            double f = 0;
            for (int i = 0; i < cols; i++)
                f += x[r * cols + i] * coef[i];
            ss_res += (y[r] - f) * (y[r] - f);
            ss_tot += (y[r] - mean) * (y[r] - mean);
        }
        *r2 = ss_tot > 0 ? 1 - ss_res / ss_tot : (ss_res <= 1e-18 * (1 + mean * mean) ? 1 : 0);
    }
    return MT_OK;
}

/* Fits q = a·n + b + embed·E + head·H over the points (n, E, H, y), leaving out what the points
 * cannot tell apart: the head term, the embedding's, both, then (a single layer count) the
 * intercept, so that one layer count is taken as proportional to n. */
static void calibrate_fit4(const int *n, const bool *emb, const bool *head, const double *y,
                           int rows, struct profile_fit *out)
{
    memset(out, 0, sizeof *out);
    if (rows == 0)
        return;
    /* bits: n, 1, E, H */
    static const unsigned sets[] = {0xF, 0x7, 0xB, 0x3, 0xD, 0x5, 0x9, 0x1};
    double *x = xmalloc((size_t)rows * CALIBRATE_MAX_COLS * sizeof(double));
    for (size_t s = 0; s < sizeof sets / sizeof sets[0]; s++) {
        unsigned set = sets[s];
        int cols = 0;
        for (int b = 0; b < 4; b++)
            cols += (set >> b) & 1;
        for (int r = 0; r < rows; r++) {
            int k = 0;
            double v[4] = {n[r], 1, emb[r], head[r]};
            for (int b = 0; b < 4; b++)
                if ((set >> b) & 1)
                    x[r * cols + k++] = v[b];
        }
        double coef[4], r2;
        if (calibrate_lsq(x, y, rows, cols, coef, &r2, NULL) != MT_OK)
            continue;
        double *dst[4] = {&out->a, &out->b, &out->embed, &out->head};
        int k = 0;
        for (int b = 0; b < 4; b++)
            if ((set >> b) & 1)
                *dst[b] = coef[k++];
        out->r2 = r2;
        out->points = rows;
        break;
    }
    free(x);
}

/* The fit of one quantity over its observations. */
static void calibrate_fit_q(const struct calibrate_obs *obs, size_t n, enum calibrate_qty q,
                            struct profile_fit *out)
{
    int *ns = xmalloc((n + 1) * sizeof(int));
    bool *em = xmalloc(n + 1), *hd = xmalloc(n + 1);
    double *y = xmalloc((n + 1) * sizeof(double));
    int rows = 0;
    for (size_t i = 0; i < n; i++)
        if (obs[i].q == q) {
            ns[rows] = obs[i].n;
            em[rows] = obs[i].embed;
            hd[rows] = obs[i].head;
            y[rows++] = obs[i].y;
        }
    calibrate_fit4(ns, em, hd, y, rows, out);
    free(ns);
    free(em);
    free(hd);
    free(y);
}

struct calibrate_sample {
    double t, bytes;
    size_t i;
};

static int calibrate_sample_cmp(const void *a, const void *b)
{
    const struct calibrate_sample *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

/* The transients of device d's FW, CFW and BW from its memory samples, as the simulator
 * adds them (sim/core/memory.h): before = the level the instruction starts from, after = the
 * level it leaves once it has given back what it gives at its end (a forward: its received
 * input's buffer), top = the most in between; FW: top - after, CFW and BW: top - before.
 * And the size of a message buffer: what a receive (RA, RG) takes, the first rise of the
 * level during it. o carries the stage's keys.
 *
 * An executor's samples fall strictly inside the instructions that take and give (a send's
 * buffer is freed after the instruction that follows it). A simulated trace puts them on the
 * instants where instructions start and end, so samples at one instant are told apart by
 * their order (program order): at an instruction's start the earlier instructions' (a
 * previous one's frees, a zero-length receive's buffer) come first and its own rise is the
 * last; at its end its own free comes first, then a send's reaped buffer. */
static void calibrate_transients(struct calibrate *c, struct calibrate_obs *o,
                                 const struct trace_event *ev, size_t n, const struct trace *t,
                                 int d, int first_step)
{
    size_t nm, k = 0;
    const struct trace_mem *mem = trace_mems(t, &nm);
    struct calibrate_sample *s = xmalloc((nm + 1) * sizeof *s);
    for (size_t i = 0; i < nm; i++)
        if (mem[i].dev == d)
            s[k++] = (struct calibrate_sample){mem[i].t_us, mem[i].bytes, i};
    qsort(s, k, sizeof *s, calibrate_sample_cmp);
    double sum[5] = {0};
    int cnt[5] = {0};
    for (size_t i = 0; i < n && k > 0; i++) {
        const struct trace_event *x = &ev[i];
        int which = x->op == OP_FW                     ? 0
                    : x->op == OP_CFW                  ? 1
                    : x->op == OP_BW                   ? 2
                    : vpipe_is_recv((enum op)x->op)     ? 3
                    : x->op == OP_W                    ? 4
                                                       : -1;
        if (x->dev != d || which < 0 || x->step < first_step)
            continue;
        size_t lo = 0, hi = k; /* the first sample at or after the start */
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (s[mid].t < x->start_us)
                lo = mid + 1;
            else
                hi = mid;
        }
        size_t at = lo; /* [lo, at): the samples at the start instant */
        while (at < k && s[at].t == x->start_us)
            at++;
        if (which == 4) { /* what W frees: the level before it less the lowest during it */
            /* (samples at its start instant are earlier instructions' ends; at its end
             * instant its own free comes first, then what follows takes) */
            if (at == 0 || at >= k || s[at].t > x->end_us)
                continue;
            double low = s[at].bytes;
            for (size_t j = at; j < k && s[j].t <= x->end_us; j++)
                low = fmin(low, s[j].bytes);
            sum[4] += s[at - 1].bytes - low;
            cnt[4]++;
            continue;
        }
        if (which == 3) { /* the first rise during the receive: its buffer */
            for (size_t j = lo; j < k && s[j].t <= x->end_us; j++)
                if (j > 0 && s[j].bytes > s[j - 1].bytes) {
                    sum[3] += s[j].bytes - s[j - 1].bytes;
                    cnt[3]++;
                    break;
                }
            continue;
        }
        /* its own rise at the start instant: a forward always takes, a backward of a stage
         * past the first takes its input gradient's buffer */
        bool own = at > lo &&
                   (which < 2 || (x->stage > 0 && at - 1 > 0 && s[at - 1].bytes > s[at - 2].bytes));
        size_t first = own ? at - 1 : at;
        if (first == 0)
            continue; /* nothing known before it */
        double before = s[first - 1].bytes, top = before, after = before;
        size_t j = first;
        for (; j < k && (s[j].t < x->end_us || j < at); j++) {
            top = fmax(top, s[j].bytes);
            after = s[j].bytes;
        }
        /* its own free at the end instant, the first one there: a forward past the first
         * stage gives its received input back (what follows is a send's reaped buffer) */
        if (which == 0 && x->stage > 0 && j < k && s[j].t == x->end_us && s[j].bytes < after)
            after = s[j].bytes;
        sum[which] += which == 0 ? top - after : top - before;
        cnt[which]++;
    }
    static const enum calibrate_qty q[5] = {CAL_FW_WORK, CAL_CFW_PEAK, CAL_BW_WORK, CAL_MSG,
                                            CAL_W_KEEP};
    for (int w = 0; w < 5; w++)
        if (cnt[w] > 0) {
            o->q = q[w];
            o->y = sum[w] / cnt[w];
            calibrate_add(c, o);
        }
    free(s);
}

int calibrate_add_run(struct calibrate *c, const struct plan *p, const struct trace *t,
                      struct mt_err *e)
{
    const struct plan_geom *g = plan_geom(p);
    struct align_result m;
    struct align_opts ao = {.step = -1, .per_step = true};
    TRY(align_run(p, t, &ao, &m, e));
    struct cost_model cm;
    int rc = scheme_costs(plan_config(p), &cm, e);
    if (rc != MT_OK) {
        align_result_fini(&m);
        return rc;
    }
    int run = c->runs++;
    /* durations of every measured event of the steps used, by stage and op: the median of
     * each is the observation. The calibration describes the device: what the machine's other
     * work takes from it while it is measured is noise, not the device's (and another sample
     * of it than the runs predicted see). One preemption of a few milliseconds would move the
     * mean of a handful of sub-millisecond instructions by tens of percent; the median stays */
    size_t n;
    const struct trace_event *ev = trace_events(t, &n);
    double *dur = xmalloc((n + 1) * sizeof(double));
    for (int s = 0; s < cm.num_stages; s++) {
        const struct stage_cost *st = &cm.stage[s];
        struct calibrate_obs o = {0};
        o.run = run;
        o.n = st->num_layers;
        o.embed = st->has_embed;
        o.head = st->has_head;
        /* (an AR's duration here includes waiting for the other replicas: see
         * calibrate_add_allreduce) */
        static const struct {
            int op;
            enum calibrate_qty q;
        } ops[] = {{OP_FW, CAL_FW}, {OP_BW, CAL_BW}, {OP_RC, CAL_RC},
                   {OP_OS, CAL_OS}, {OP_B, CAL_B},   {OP_W, CAL_W}};
        double med[sizeof ops / sizeof ops[0]];
        for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
            size_t cnt = 0;
            for (size_t i = 0; i < n; i++) {
                int op = ev[i].op == OP_CFW ? OP_FW : ev[i].op;
                if (ev[i].stage == s && ev[i].dev >= 0 && ev[i].dev < g->devices &&
                    op == ops[k].op && ev[i].step >= m.first_step)
                    dur[cnt++] = ev[i].end_us - ev[i].start_us;
            }
            med[k] = cnt > 0 ? calibrate_median(dur, cnt) : NAN;
            if (cnt > 0) {
                o.q = ops[k].q;
                o.y = med[k];
                calibrate_add(c, &o);
            }
        }
        if (isnan(med[1]) && !isnan(med[4]) && !isnan(med[5])) { /* only split: BW = B + W */
            o.q = CAL_BW;
            o.y = med[4] + med[5];
            calibrate_add(c, &o);
        }
    }
    /* memory, per device: only when a device holds one stage (its bytes are that stage's) */
    for (int d = 0; d < g->devices && g->parts == 1; d++) {
        int stage = -1;
        bool ckpt = false;
        for (int i = 0; i < plan_len(p, d); i++) {
            stage = plan_at(p, d, i)->stage;
            ckpt |= plan_at(p, d, i)->op == OP_CFW;
        }
        if (stage < 0 || stage >= cm.num_stages)
            continue;
        const struct stage_cost *st = &cm.stage[stage];
        struct calibrate_obs o = {0};
        o.run = run;
        o.n = st->num_layers;
        o.embed = st->has_embed;
        o.head = st->has_head;
        double low = m.low_bytes[d], peak = m.peak_bytes[d];
        if (isfinite(low) && isfinite(peak)) {
            o.q = CAL_STATIC;
            o.y = low;
            calibrate_add(c, &o);
            o.q = CAL_PEAK;
            o.y = peak - low;
            o.ckpt = ckpt;
            o.mbs = g->mbs;
            calibrate_add(c, &o);
            o.ckpt = false;
            o.mbs = 0;
        }
        calibrate_transients(c, &o, ev, n, t, d, m.first_step);
    }
    /* messages: the one measure of p2p latency the replay takes too */
    size_t nl, nc;
    bool compute;
    double *lat = replay_latency_samples(p, &m, &nl, &compute, &nc);
    for (size_t i = 0; i < nl; i++)
        calibrate_add(c, &(struct calibrate_obs){.q = CAL_P2P, .run = run, .y = lat[i]});
    free(lat);
    free(dur);
    cost_model_fini(&cm);
    align_result_fini(&m);
    return MT_OK;
}

int calibrate_add_shared_run(struct calibrate *c, const struct plan *p, const struct trace *t,
                             struct mt_err *e)
{
    struct align_result m;
    struct align_opts ao = {.step = -1, .per_step = true};
    TRY(align_run(p, t, &ao, &m, e));
    int run = c->runs++;
    size_t nl, nc;
    bool compute;
    double *v = replay_latency_samples(p, &m, &nl, &compute, &nc);
    for (size_t i = 0; i < nl + nc; i++)
        calibrate_add(c, &(struct calibrate_obs){.q = i < nl ? CAL_P2P_SHARED : CAL_RECV_SHARED,
                                                 .run = run,
                                                 .y = v[i]});
    free(v);
    /* the time between instructions, per instruction that is not a send, over the run: a rank
     * that gives its core up at an instruction's end (the MPI library yields when the ranks
     * outnumber the cores) gets it back when the rank it gave it to lets go */
    int total = plan_total(p);
    double gaps = 0;
    long counted = 0;
    for (int u = 0; u < m.steps_used; u++)
        for (int d = 0; d < plan_devices(p); d++) {
            double prev = NAN;
            for (int i = 0; i < plan_len(p, d); i++) {
                int id = plan_id(p, d, i);
                double st = m.step_start[(size_t)u * total + id];
                double en = m.step_end[(size_t)u * total + id];
                if (isnan(en))
                    continue;
                if (!isnan(prev) && st > prev)
                    gaps += st - prev;
                prev = en;
                counted += !vpipe_is_send(plan_at(p, d, i)->op);
            }
        }
    if (counted > 0)
        calibrate_add(c, &(struct calibrate_obs){.q = CAL_GAP_SHARED, .run = run,
                                                 .y = gaps / (double)counted});
    align_result_fini(&m);
    return MT_OK;
}

/* A time that goes with a stage's parameters (the optimizer step, the gradient allreduce):
 * y = k·params + c over the observations, params at the measured shape (model/cost.h
 * cost_stage_params, counted in blocks' worth), then as a fit of the usual form: a = k·(a
 * block's parameters), embed and head = k·(theirs), b = c. One stage size only: proportional
 * (c = 0). */
static void calibrate_fit_params(const struct calibrate *c, const struct config *measured,
                                 enum calibrate_qty q, struct profile_fit *out)
{
    memset(out, 0, sizeof *out);
    double *x = xmalloc((2 * c->n + 2) * sizeof(double)), *y = xmalloc((c->n + 1) * sizeof(double));
    double pl = cost_stage_params(measured, 1, false, false); /* in blocks, for the scale */
    int rows = 0;
    bool distinct = false;
    for (size_t i = 0; i < c->n; i++) {
        const struct calibrate_obs *o = &c->obs[i];
        if (o->q != q)
            continue;
        x[2 * rows] = cost_stage_params(measured, o->n, o->embed, o->head) / pl;
        x[2 * rows + 1] = 1;
        y[rows] = o->y;
        distinct |= rows > 0 && x[2 * rows] != x[0];
        rows++;
    }
    double coef[2] = {0, 0}, r2 = 1;
    if (rows > 0 && (!distinct || calibrate_lsq(x, y, rows, 2, coef, &r2, NULL) != MT_OK)) {
        double sx = 0, sy = 0; /* through the origin */
        for (int r = 0; r < rows; r++) {
            sx += x[2 * r] * x[2 * r];
            sy += x[2 * r] * y[r];
        }
        coef[0] = sx > 0 ? sy / sx : 0;
        coef[1] = 0;
        r2 = 0;
    }
    if (rows > 0) {
        out->a = coef[0];
        out->b = coef[1];
        out->embed = coef[0] * cost_stage_params(measured, 0, true, false) / pl;
        out->head = coef[0] * cost_stage_params(measured, 0, false, true) / pl;
        out->r2 = r2;
        out->points = rows;
    }
    free(x);
    free(y);
}

int calibrate_add_allreduce(struct calibrate *c, const struct plan *p, const struct trace *all,
                            struct mt_err *e)
{
    if (c->runs == 0)
        return err_set(e, MT_EINVAL, "an allreduce belongs to a run added first");
    struct cost_model cm;
    TRY(scheme_costs(plan_config(p), &cm, e));
    size_t n;
    const struct trace_event *ev = trace_events(all, &n);
    int steps = trace_info(all)->steps, S = cm.num_stages;
    /* [step * S + stage]: the shortest AR of the stage in the step, over the replicas */
    double *best = xmalloc(((size_t)steps * S + 1) * sizeof(double));
    for (size_t i = 0; i < (size_t)steps * S; i++)
        best[i] = INFINITY;
    for (size_t i = 0; i < n; i++)
        if (ev[i].op == OP_AR && ev[i].stage >= 0 && ev[i].stage < S && ev[i].step >= 1 &&
            ev[i].step < steps) {
            double *b = &best[(size_t)ev[i].step * S + ev[i].stage];
            *b = fmin(*b, ev[i].end_us - ev[i].start_us);
        }
    double *v = xmalloc(((size_t)steps + 1) * sizeof(double));
    for (int st = 0; st < S; st++) {
        size_t nv = 0;
        for (int k = 1; k < steps; k++)
            if (isfinite(best[(size_t)k * S + st]))
                v[nv++] = best[(size_t)k * S + st];
        if (nv == 0)
            continue;
        const struct stage_cost *sc = &cm.stage[st];
        struct calibrate_obs o = {0};
        o.q = CAL_AR;
        o.run = c->runs - 1;
        o.n = sc->num_layers;
        o.embed = sc->has_embed;
        o.head = sc->has_head;
        o.y = calibrate_median(v, nv);
        calibrate_add(c, &o);
    }
    free(v);
    free(best);
    cost_model_fini(&cm);
    return MT_OK;
}

/* act and ckpt per (n, E, H) from the dynamic peaks over micro-batch counts. */
static void calibrate_fit_memory(const struct calibrate *c, struct profile *out)
{
    size_t n = c->n;
    int *gn = xmalloc((n + 1) * sizeof(int));
    bool *ge = xmalloc(n + 1), *gh = xmalloc(n + 1);
    double *act = xmalloc((n + 1) * sizeof(double));
    double *ck = xmalloc((n + 1) * sizeof(double));
    int *cn = xmalloc((n + 1) * sizeof(int));
    bool *ce = xmalloc(n + 1), *ch = xmalloc(n + 1);
    double *x = xmalloc((2 * n + 2) * sizeof(double)), *y = xmalloc((n + 1) * sizeof(double));
    bool *done = xcalloc(n + 1, 1);
    int na = 0, nc = 0;
    for (size_t i = 0; i < n; i++) {
        const struct calibrate_obs *a = &c->obs[i];
        if (a->q != CAL_PEAK || done[i])
            continue;
        int rows = 0, distinct = 0;
        double first_mbs = -1;
        for (size_t j = i; j < n; j++) {
            const struct calibrate_obs *b = &c->obs[j];
            if (b->q != CAL_PEAK || done[j] || b->n != a->n || b->embed != a->embed ||
                b->head != a->head || b->ckpt != a->ckpt)
                continue;
            done[j] = true;
            x[2 * rows] = b->mbs;
            x[2 * rows + 1] = 1;
            y[rows++] = b->y;
            if (first_mbs < 0)
                first_mbs = b->mbs;
            else if (b->mbs != first_mbs)
                distinct = 1;
        }
        double coef[2];
        if (!distinct || calibrate_lsq(x, y, rows, 2, coef, NULL, NULL) != MT_OK)
            continue;
        if (a->ckpt) {
            cn[nc] = a->n;
            ce[nc] = a->embed;
            ch[nc] = a->head;
            ck[nc++] = coef[0];
        } else {
            gn[na] = a->n;
            ge[na] = a->embed;
            gh[na] = a->head;
            act[na++] = coef[0];
        }
    }
    calibrate_fit4(gn, ge, gh, act, na, &out->act);
    calibrate_fit4(cn, ce, ch, ck, nc, &out->ckpt);
    free(gn);
    free(ge);
    free(gh);
    free(act);
    free(ck);
    free(cn);
    free(ce);
    free(ch);
    free(x);
    free(y);
    free(done);
}

int calibrate_fit(const struct calibrate *c, const struct config *measured, struct profile *out,
                  struct mt_err *e)
{
    memset(out, 0, sizeof *out);
    calibrate_fit_q(c->obs, c->n, CAL_FW, &out->fw);
    calibrate_fit_q(c->obs, c->n, CAL_BW, &out->bw);
    calibrate_fit_q(c->obs, c->n, CAL_RC, &out->rc);
    calibrate_fit_q(c->obs, c->n, CAL_B, &out->b);
    calibrate_fit_q(c->obs, c->n, CAL_W, &out->w);
    calibrate_fit_q(c->obs, c->n, CAL_W_KEEP, &out->w_keep_bytes);
    calibrate_fit_params(c, measured, CAL_OS, &out->os);
    calibrate_fit_params(c, measured, CAL_AR, &out->ar);
    calibrate_fit_q(c->obs, c->n, CAL_STATIC, &out->static_bytes);
    calibrate_fit_q(c->obs, c->n, CAL_FW_WORK, &out->fw_work_bytes);
    calibrate_fit_q(c->obs, c->n, CAL_CFW_PEAK, &out->cfw_peak_bytes);
    calibrate_fit_q(c->obs, c->n, CAL_BW_WORK, &out->bw_work_bytes);
    calibrate_fit_memory(c, out);
    /* the p2p latency and a message's buffer: one figure each, the median */
    static const enum calibrate_qty one[] = {CAL_P2P, CAL_MSG, CAL_P2P_SHARED, CAL_RECV_SHARED,
                                             CAL_GAP_SHARED};
    struct profile_fit *one_fit[] = {&out->p2p, &out->msg_bytes, &out->p2p_shared,
                                     &out->recv_shared, &out->gap_shared};
    double *v = xmalloc((c->n + 1) * sizeof(double));
    for (int m = 0; m < 5; m++) {
        size_t nv = 0;
        for (size_t i = 0; i < c->n; i++)
            if (c->obs[i].q == one[m])
                v[nv++] = c->obs[i].y;
        if (nv > 0) {
            one_fit[m]->b = calibrate_median(v, nv);
            one_fit[m]->points = (int)nv;
        }
    }
    free(v);
    if (out->fw.points == 0 || out->bw.points == 0)
        return err_set(e, MT_EINVAL, "the runs measured no %s time: nothing to calibrate",
                       out->fw.points == 0 ? "forward" : "backward");
    profile_shape_of(measured, &out->shape);
    out->enabled = true;
    return MT_OK;
}
