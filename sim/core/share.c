/* sim/core/share.c: sim/core/share.h. Each iteration simulates with the current durations, sweeps the
 * CPU work's starts and ends in time order into a step function of the ranks computing
 * (each simulated device stands for its dp replicas, which run the same timeline), integrates
 * the speed 1 / max(1, n / C) over it, and gives each computing instruction its cost over the
 * mean speed during its interval. The first iterations take the new durations as they are
 * (a pipeline whose overlaps do not move converges in one); after SHARE_UNDAMPED, half way,
 * so that an overlap that comes and goes settles. A calibration's p2p latency and receive time
 * measured with more ranks than cores (model/profile.h p2p_shared, recv_shared) replace the
 * messages' costs: a waiting rank naps and then waits for a core. */
#include <config.h>
#include "sim/core/share.h"
#include "sim/core/overlap.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/config.h"
#include "model/cost.h"
#include "sim/plan/plan.h"
#include "sim/core/simulate.h"
#include "sim/core/vpipe.h"
#include "util/err.h"
#include "util/xalloc.h"

#define SHARE_UNDAMPED 16
#define SHARE_TOL 1e-12

struct share_ev {
    double t;
    double dn; /* ranks starting (+) or ending (-) CPU work */
};

static int share_ev_cmp(const void *a, const void *b)
{
    const struct share_ev *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return (x->dn > y->dn) - (x->dn < y->dn); /* ends before starts at one instant */
}

static bool share_cpu(enum op op)
{
    return plan_op_is_compute(op) || op == OP_AR || op == OP_OS;
}

bool share_applies(const struct config *c)
{
    return c->profile.cores > 0 && c->num_device > c->profile.cores;
}

/* Speed integral at t over the sweep (ts[k], g[k] the speed from ts[k], G[k] its integral). */
static double share_integral(const double *ts, const double *g, const double *G, int n, double t)
{
    int lo = 0, hi = n; /* the last point at or before t */
    while (hi - lo > 1) {
        int mid = (lo + hi) / 2;
        if (ts[mid] <= t)
            lo = mid;
        else
            hi = mid;
    }
    return n == 0 ? t : G[lo] + (t - ts[lo]) * g[lo];
}

int share_run(const struct plan *p, const struct cost_model *cost, struct sim_result *out,
              struct mt_err *e)
{
    const struct config *c = plan_config(p);
    int total = plan_total(p);
    double cores = c->profile.cores, dp = c->cluster.dp > 0 ? c->cluster.dp : 1;
    double *base = xmalloc(((size_t)total + 1) * sizeof(double));
    double *dur = xmalloc(((size_t)total + 1) * sizeof(double));
    bool *cpu = xmalloc((size_t)total + 1);
    double *gap = xcalloc((size_t)total + 1, sizeof(double)); /* device time that is not CPU work */
    double *paired = overlap_durations(p, cost, NULL); /* F&B pairs hide all-to-alls */
    for (int d = 0; d < plan_devices(p); d++)
        for (int i = 0; i < plan_len(p, d); i++) {
            int id = plan_id(p, d, i);
            const struct instr *in = plan_at(p, d, i);
            base[id] = dur[id] = paired != NULL && isfinite(paired[id])
                                     ? paired[id]
                                     : sim_instr_latency(cost, in);
            cpu[id] = share_cpu(in->op) && base[id] > 0;
            /* messages as measured with more ranks than cores, where a calibration has them */
            const struct profile *pr = &c->profile;
            if (pr->p2p_shared.points > 0 && !cost->unit) {
                /* (a receive's time counts the time before it, which the gap below is) */
                double own = pr->recv_shared.points > 0 ? pr->recv_shared.b : 0;
                if (pr->gap_shared.points > 0)
                    own = fmax(own - pr->gap_shared.b, 0);
                if (own > pr->p2p_shared.b)
                    own = pr->p2p_shared.b;
                if (vpipe_is_send(in->op))
                    base[id] = dur[id] = pr->p2p_shared.b - own;
                else if (vpipe_is_recv(in->op))
                    base[id] = dur[id] = own;
            }
            /* and the time between instructions: the core given up at each one's end */
            if (pr->gap_shared.points > 0 && !cost->unit && !vpipe_is_send(in->op)) {
                gap[id] = pr->gap_shared.b;
                dur[id] += gap[id];
            }
        }
    struct share_ev *ev = xmalloc((2 * (size_t)total + 1) * sizeof *ev);
    double *ts = xmalloc((2 * (size_t)total + 1) * sizeof(double));
    double *g = xmalloc((2 * (size_t)total + 1) * sizeof(double));
    double *G = xmalloc((2 * (size_t)total + 1) * sizeof(double));
    struct sim_result r = {0};
    int rc = MT_OK;
    for (int it = 0; it < SHARE_MAX_ITER; it++) {
        sim_result_fini(&r);
        rc = sim_run_durations(p, cost, dur, &r, e);
        if (rc != MT_OK)
            break;
        int n = 0;
        for (int id = 0; id < total; id++)
            if (cpu[id] && r.end[id] - gap[id] > r.start[id]) {
                ev[n++] = (struct share_ev){r.start[id], dp};
                ev[n++] = (struct share_ev){r.end[id] - gap[id], -dp};
            }
        qsort(ev, (size_t)n, sizeof *ev, share_ev_cmp);
        int m = 0;
        double busy = 0;
        for (int k = 0; k < n; k++) {
            busy += ev[k].dn;
            if (m > 0 && ts[m - 1] == ev[k].t)
                m--; /* one point per instant: the count after every change at it */
            ts[m] = ev[k].t;
            g[m] = busy > cores ? cores / busy : 1.0;
            G[m] = m == 0 ? ts[0] : G[m - 1] + (ts[m] - ts[m - 1]) * g[m - 1];
            m++;
        }
        double moved = 0;
        for (int id = 0; id < total; id++) {
            double end = r.end[id] - gap[id];
            if (!cpu[id] || !(end > r.start[id]))
                continue;
            double speed =
                (share_integral(ts, g, G, m, end) - share_integral(ts, g, G, m, r.start[id])) /
                (end - r.start[id]);
            double want = speed > 0 ? base[id] / speed + gap[id] : dur[id];
            double next = it < SHARE_UNDAMPED ? want : (dur[id] + want) / 2;
            moved = fmax(moved, fabs(next - dur[id]) / dur[id]);
            dur[id] = next;
        }
        if (moved <= SHARE_TOL)
            break;
    }
    free(ev);
    free(ts);
    free(g);
    free(G);
    free(paired);
    free(base);
    free(dur);
    free(cpu);
    free(gap);
    if (rc != MT_OK) {
        sim_result_fini(&r);
        memset(out, 0, sizeof *out);
        return rc;
    }
    *out = r;
    return MT_OK;
}
