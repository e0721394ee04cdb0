/* traces/replay.c: the replay of traces/replay.h. Every step used is replayed on its own
 * (sim_run_durations with that step's durations) and the replayed step times averaged, as
 * the measured ones are: a mean over steps of each step's last end less its first start. */
#include <config.h>
#include "traces/replay.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/cost.h"
#include "sim/plan/plan.h"
#include "sim/core/simulate.h"
#include "sim/core/vpipe.h"
#include "traces/align.h"
#include "util/err.h"
#include "util/xalloc.h"

#define REPLAY_MAX_GROUP 64

void replay_fini(struct replay_result *r)
{
    if (r == NULL)
        return;
    free(r->step_each);
    free(r->dev);
    free(r->start_us);
    free(r->end_us);
    memset(r, 0, sizeof *r);
}

static int replay_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double replay_median(double *v, size_t n)
{
    if (n == 0)
        return NAN;
    qsort(v, n, sizeof *v, replay_cmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* What the walks share: the plan's shape, one step's times, and per instruction the start of
 * each send as the replay sees it and the end of the instruction before each one. */
struct replay {
    const struct plan *p;
    const struct vpipe_index *x;
    int total, devices;
    const double *st, *en; /* one step's times, us from its start; NAN: not measured */
    bool *full;            /* [devices]: every instruction measured in this step */
    double *ss;            /* [total]: a send's start in the replay: its device's release */
    double *prev_end;      /* [total]: the end of the instruction before (0 for the first) */
    double *rel;           /* [total]: the device's release before the instruction */
    int *partner;          /* [total]: a receive's send, -1 elsewhere */
};

/* Per device: whether it is wholly measured, and the releases (the end of the previous
 * instruction that is not a send; 0 at the step's start). */
static void replay_marks(struct replay *r)
{
    for (int d = 0; d < r->devices; d++) {
        bool full = true;
        double rel = 0, pe = 0;
        for (int i = 0; i < plan_len(r->p, d); i++) {
            int id = plan_id(r->p, d, i);
            enum op op = plan_at(r->p, d, i)->op;
            full &= !isnan(r->en[id]);
            r->rel[id] = rel;
            r->prev_end[id] = pe;
            r->ss[id] = vpipe_is_send(op) ? rel : NAN;
            if (!isnan(r->en[id])) {
                pe = r->en[id];
                if (!vpipe_is_send(op))
                    rel = r->en[id];
            }
        }
        r->full[d] = full;
    }
}

/* The samples of L (waited: the receiver's previous instruction had ended when the send
 * began) or, with lat given, of c (the message surely there: its send began L before the
 * receive). */
static void replay_sample(const struct replay *r, double lat, double *v, size_t *n)
{
    for (int id = 0; id < r->total; id++) {
        int sd = r->partner[id];
        if (sd < 0 || isnan(r->en[id]) || isnan(r->ss[sd]) || isnan(r->en[sd]))
            continue;
        if (isnan(lat)) {
            if (r->prev_end[id] <= r->ss[sd])
                v[(*n)++] = r->en[id] - r->ss[sd];
        } else if (r->st[id] >= r->ss[sd] + lat) {
            v[(*n)++] = r->en[id] - r->prev_end[id];
        }
    }
}

/* Without messages (a profiler trace of compute only): L from the forwards (backwards) whose
 * device was idle when the forward (backward) of the stage before (after) them ended: the gap
 * from that end to their start. */
static void replay_sample_compute(const struct replay *r, double *v, size_t *n)
{
    const struct plan_geom *g = plan_geom(r->p);
    for (int d = 0; d < r->devices; d++)
        for (int i = 0; i < plan_len(r->p, d); i++) {
            const struct instr *in = plan_at(r->p, d, i);
            int id = plan_id(r->p, d, i);
            bool fwd = plan_op_is_forward(in->op);
            enum op peer;
            int stage, d2, part;
            if (isnan(r->en[id]) || (!fwd && !plan_op_is_backward(in->op)) ||
                !vpipe_peer(fwd ? OP_SA : OP_SG, in->stage, &peer, &stage) || stage < 0 ||
                stage >= g->stages)
                continue;
            vpipe_locate(g, in->mb, stage, &d2, &part);
            if (d2 == d)
                continue;
            static const enum op fw_ops[] = {OP_FW, OP_CFW}, bw_ops[] = {OP_BW, OP_B};
            for (int k = 0; k < 2; k++) {
                int j = plan_find(r->p, d2, fwd ? fw_ops[k] : bw_ops[k], in->mb, stage);
                if (j < 0)
                    continue;
                int c = plan_id(r->p, d2, j);
                if (!isnan(r->st[c]) && r->prev_end[c] <= r->en[id] && r->st[c] >= r->en[id])
                    v[(*n)++] = r->st[c] - r->en[id];
                break;
            }
        }
}

/* One step's durations (us) into dur; per_message: a message that a receive waited for lasts
 * what it took (its send's start to the receive's end, less c: the run itself); else every
 * message L - c. */
static void replay_durations(const struct replay *r, bool simulated, double lat, double own,
                             bool per_message, const double *model, double *dur)
{
    for (int d = 0; d < r->devices; d++)
        for (int i = 0; i < plan_len(r->p, d); i++) {
            int id = plan_id(r->p, d, i);
            enum op op = plan_at(r->p, d, i)->op;
            double st = r->st[id], en = r->en[id];
            bool measured = !isnan(en);
            if (simulated || (!r->full[d] && !vpipe_is_p2p(op))) {
                /* an optimizer step or allreduce the trace did not measure is outside the
                 * span it measured (torch's optimizer runs after its schedule) */
                bool outside = !simulated && (op == OP_OS || op == OP_AR);
                dur[id] = measured ? en - st : outside ? 0 : model[id];
            } else if (vpipe_is_send(op)) {
                dur[id] = isnan(lat) ? model[id] : lat - own;
            } else if (vpipe_is_recv(op)) {
                dur[id] = isnan(lat) || !measured ? model[id] : own;
            } else if (op == OP_AR) { /* from the last arrival of its group in the plan */
                int group[REPLAY_MAX_GROUP];
                int k = vpipe_ar_group(r->p, r->x, id, group, REPLAY_MAX_GROUP);
                double from = r->rel[id];
                for (int j = 0; j < k; j++)
                    if (!isnan(r->rel[group[j]]) && r->rel[group[j]] > from)
                        from = r->rel[group[j]];
                dur[id] = en - from;
            } else {
                dur[id] = en - r->rel[id];
            }
        }
    if (simulated || isnan(lat))
        return;
    /* each receive of a wholly measured device whose send was measured too: waited or not */
    for (int d = 0; d < r->devices; d++) {
        if (!r->full[d])
            continue;
        for (int i = 0; i < plan_len(r->p, d); i++) {
            int id = plan_id(r->p, d, i), sd = r->partner[id];
            if (sd < 0 || isnan(r->ss[sd]))
                continue;
            double st = r->st[id], en = r->en[id], rel = r->rel[id];
            if (r->ss[sd] + (lat - own) > st) { /* waited: c after the message came */
                dur[id] = per_message ? fmax(fmin(own, en - r->ss[sd]), 0) : own;
                if (per_message)
                    dur[sd] = en - dur[id] - r->ss[sd];
            } else { /* there already: the receive's own time from when both were ready */
                dur[sd] = lat - own;
                dur[id] = en - fmax(rel, r->ss[sd] + dur[sd]);
            }
        }
    }
}

static void replay_setup(struct replay *r, const struct plan *p, const struct vpipe_index *x)
{
    int total = plan_total(p), D = plan_devices(p);
    *r = (struct replay){.p = p, .x = x, .total = total, .devices = D};
    r->full = xcalloc((size_t)D + 1, sizeof(bool));
    r->ss = xmalloc(((size_t)total + 1) * sizeof(double));
    r->prev_end = xmalloc(((size_t)total + 1) * sizeof(double));
    r->rel = xmalloc(((size_t)total + 1) * sizeof(double));
    r->partner = xmalloc(((size_t)total + 1) * sizeof(int));
    for (int id = 0; id < total; id++) {
        int d, i;
        plan_locate_id(p, id, &d, &i);
        r->partner[id] = vpipe_is_recv(plan_at(p, d, i)->op) ? vpipe_partner(p, x, id) : -1;
    }
}

static void replay_teardown(struct replay *r)
{
    free(r->full);
    free(r->ss);
    free(r->prev_end);
    free(r->rel);
    free(r->partner);
}

static void replay_step(struct replay *r, const struct align_result *m, int u)
{
    r->st = m->step_start + (size_t)u * r->total;
    r->en = m->step_end + (size_t)u * r->total;
    replay_marks(r);
}

/* L's samples (v holds 2 x steps_used x total) and c's after them (*nc), from r set up on
 * m. */
static void replay_latencies(struct replay *r, const struct align_result *m, double *v, size_t *n,
                             size_t *nc, bool *compute, double *lat, double *own)
{
    *nc = 0;
    int S = m->steps_used;
    *n = 0;
    *compute = false;
    for (int u = 0; u < S; u++) {
        replay_step(r, m, u);
        replay_sample(r, NAN, v, n);
    }
    if (*n == 0) { /* no message measured: the gaps between the stages' compute */
        *compute = true;
        for (int u = 0; u < S; u++) {
            replay_step(r, m, u);
            replay_sample_compute(r, v, n);
        }
    }
    double *tmp = xmalloc((*n + 1) * sizeof(double));
    memcpy(tmp, v, *n * sizeof(double));
    *lat = replay_median(tmp, *n);
    free(tmp);
    *own = 0;
    if (*compute || isnan(*lat))
        return;
    size_t k = 0; /* c's samples after L's */
    double *w = v + *n;
    for (int u = 0; u < S; u++) {
        replay_step(r, m, u);
        replay_sample(r, *lat, w, &k);
    }
    *own = k > 0 ? fmin(replay_median(w, k), *lat) : 0;
    *nc = k;
}

double *replay_latency_samples(const struct plan *p, const struct align_result *m, size_t *n,
                               bool *compute, size_t *nrecv)
{
    *n = 0;
    *nrecv = 0;
    *compute = false;
    struct vpipe_index *x = NULL;
    if (m->step_start == NULL || vpipe_index_build(p, &x, NULL) != MT_OK)
        return xcalloc(1, sizeof(double));
    struct replay r;
    replay_setup(&r, p, x);
    double *v = xmalloc((2 * (size_t)m->steps_used * (size_t)r.total + 1) * sizeof(double));
    double lat, own;
    replay_latencies(&r, m, v, n, nrecv, compute, &lat, &own);
    replay_teardown(&r);
    vpipe_index_free(x);
    return v;
}

int replay_run(const struct plan *p, const struct cost_model *cost, const struct sim_result *sim,
               const struct align_result *m, bool simulated_trace, struct replay_result *out,
               struct mt_err *e)
{
    memset(out, 0, sizeof *out);
    if (m->step_start == NULL || m->steps_used == 0)
        return err_set(e, MT_EINVAL, "replay: the alignment kept no step's own times");
    struct vpipe_index *x = NULL;
    TRY(vpipe_index_build(p, &x, e));
    int total = plan_total(p), D = plan_devices(p), S = m->steps_used;
    double scale = sim->unit ? 1000.0 : 1.0; /* us per simulated unit */
    struct replay r;
    replay_setup(&r, p, x);
    double *model = xmalloc(((size_t)total + 1) * sizeof(double));
    double *dur = xmalloc(((size_t)total + 1) * sizeof(double));
    for (int id = 0; id < total; id++)
        model[id] = (sim->end[id] - sim->start[id]) * scale;

    /* L and c over every step */
    double lat = NAN, own = 0;
    if (!simulated_trace) {
        size_t n;
        bool compute;
        double *v = xmalloc((2 * (size_t)S * (size_t)total + 1) * sizeof(double));
        size_t nc;
        replay_latencies(&r, m, v, &n, &nc, &compute, &lat, &own);
        out->lat_samples = (int)n;
        free(v);
    }
    out->lat_us = lat;
    out->recv_us = own;

    out->steps = S;
    out->devices = D;
    out->step_each = xcalloc((size_t)S, sizeof(double));
    out->dev = xcalloc((size_t)D + 1, sizeof *out->dev);
    out->total = total;
    out->start_us = xcalloc((size_t)total + 1, sizeof(double));
    out->end_us = xcalloc((size_t)total + 1, sizeof(double));
    int *meas_n = xcalloc((size_t)D + 1, sizeof(int));
    int rc = MT_OK;
    for (int u = 0; u < S && rc == MT_OK; u++) {
        replay_step(&r, m, u);
        struct sim_result res;
        /* every message L: what the waits that ended late cost is the difference */
        replay_durations(&r, simulated_trace, lat, own, false, model, dur);
        for (int id = 0; id < total; id++)
            dur[id] = fmax(dur[id], 0) / scale;
        rc = sim_run_durations(p, cost, dur, &res, e);
        if (rc != MT_OK)
            break;
        out->one_lat_us += res.step_time * scale / S;
        sim_result_fini(&res);
        /* every message as it came: the run again, unless the plan's dependencies differ */
        replay_durations(&r, simulated_trace, lat, own, true, model, dur);
        for (int id = 0; id < total; id++)
            dur[id] = fmax(dur[id], 0) / scale;
        rc = sim_run_durations(p, cost, dur, &res, e);
        if (rc != MT_OK)
            break;
        out->step_each[u] = res.step_time * scale;
        out->step_us += res.step_time * scale / S;
        for (int id = 0; id < total; id++) {
            out->start_us[id] += res.start[id] * scale / S;
            out->end_us[id] += res.end[id] * scale / S;
        }
        for (int d = 0; d < D; d++) {
            struct replay_dev *dv = &out->dev[d];
            dv->finish_us += res.dev[d].finish * scale / S;
            dv->busy_us += res.dev[d].busy * scale / S;
            double last = NAN;
            for (int i = 0; i < plan_len(p, d); i++) {
                double en = r.en[plan_id(p, d, i)];
                if (!isnan(en) && !(en <= last))
                    last = en;
            }
            if (!isnan(last)) {
                dv->meas_finish_us += last;
                meas_n[d]++;
            }
        }
        sim_result_fini(&res);
    }
    if (rc == MT_OK) {
        out->meas_us = m->step_time_us;
        out->err_pct = out->meas_us > 0 ? 100 * (out->step_us - out->meas_us) / out->meas_us : NAN;
        out->one_lat_err_pct =
            out->meas_us > 0 ? 100 * (out->one_lat_us - out->meas_us) / out->meas_us : NAN;
        for (int d = 0; d < D; d++) {
            struct replay_dev *dv = &out->dev[d];
            dv->meas_finish_us = meas_n[d] > 0 ? dv->meas_finish_us / meas_n[d] : NAN;
            dv->err_pct = dv->meas_finish_us > 0
                              ? 100 * (dv->finish_us - dv->meas_finish_us) / dv->meas_finish_us
                              : NAN;
        }
    } else {
        err_wrap(e, "replay");
        replay_fini(out);
    }
    free(meas_n);
    free(model);
    free(dur);
    replay_teardown(&r);
    vpipe_index_free(x);
    return rc;
}
