#include <config.h>

#include "flow/compare.h"

#include <stdio.h>
#include <string.h>

#include "model/config.h"
#include "model/cost.h"
#include "sim/plan/plan.h"
#include "sim/schemes/scheme.h"
#include "sim/core/simulate.h"
#include "traces/trace.h"
#include "util/err.h"

bool flow_replay(const struct plan *p, const struct sim_result *sim, const struct trace *t,
                 const struct align_result *m, struct replay_result *out, char *why, size_t why_n)
{
    struct cost_model cost;
    struct mt_err e = {0};
    bool done = false;
    if (scheme_costs(plan_config(p), &cost, &e) == MT_OK) {
        /* a simulated trace's times are the simulator's own: replayed as they are */
        bool simulated = strcmp(trace_info(t)->source, "simulated") == 0;
        done = replay_run(p, &cost, sim, m, simulated, out, &e) == MT_OK;
        cost_model_fini(&cost);
    }
    if (why_n > 0)
        snprintf(why, why_n, "%s", done ? "" : e.msg);
    return done;
}

int flow_compare_run(const struct plan *p, const struct sim_result *sim, const struct trace *t,
                     const struct align_opts *o, struct flow_compare *out, struct mt_err *e)
{
    memset(out, 0, sizeof *out);
    TRY(align_run(p, t, o, &out->m, e));
    accuracy_compute(p, sim, &out->m, &out->a);
    out->replayed = flow_replay(p, sim, t, &out->m, &out->rp, out->why, sizeof out->why);
    return MT_OK;
}

void flow_compare_fini(struct flow_compare *c)
{
    replay_fini(&c->rp);
    accuracy_fini(&c->a);
    align_result_fini(&c->m);
}

void flow_compare_a2a(const struct plan *p, const struct trace *t, const struct align_result *m,
                      int replica, struct accuracy_a2a *out)
{
    memset(out, 0, sizeof *out);
    if (plan_config(p)->model.moe.num_experts <= 0)
        return;
    int devices = plan_devices(p) < ACCURACY_A2A_MAX_DEVICES ? plan_devices(p) : ACCURACY_A2A_MAX_DEVICES;
    int steps = m->steps_used > 0 ? m->steps_used : 1;
    size_t n;
    const struct trace_a2a *a = trace_a2as(t, &n);
    for (size_t i = 0; i < n; i++) {
        if (a[i].replica != (replica < 0 ? 0 : replica) || a[i].dev >= devices ||
            a[i].step < m->first_step || a[i].step >= m->first_step + steps)
            continue;
        out->meas_us[a[i].dev] += (a[i].end_us - a[i].start_us) / steps;
        out->meas_bytes[a[i].dev] += a[i].bytes / steps;
        out->exchanges[a[i].dev]++;
    }
    for (int d = 0; d < devices; d++)
        out->exchanges[d] /= steps;
    out->devices = devices;
    out->steps = steps;
}
