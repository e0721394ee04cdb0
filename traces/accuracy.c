/* traces/accuracy.c: the figures of traces/accuracy.h. Simulated times are in the plan's unit
 * (us, or t under unit costs, written to traces as 1000 us per t), measured ones in us; every
 * comparison is made in us. */
#include <config.h>
#include "traces/accuracy.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/core/simulate.h"
#include "traces/align.h"
#include "util/xalloc.h"

bool accuracy_scored(enum op op)
{
    return plan_op_is_compute(op) || op == OP_AR || op == OP_OS;
}

double accuracy_mape(const double *pred, const double *actual, int n)
{
    double sum = 0;
    int k = 0;
    for (int i = 0; i < n; i++)
        if (actual[i] > 0 && isfinite(pred[i])) {
            sum += fabs(pred[i] - actual[i]) / actual[i];
            k++;
        }
    return k ? 100 * sum / k : NAN;
}

double accuracy_kendall_tau(const double *a, const double *b, int n)
{
    double conc = 0, disc = 0, ta = 0, tb = 0;
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) {
            double x = a[i] - a[j], y = b[i] - b[j];
            if (x == 0 && y == 0)
                continue;
            if (x == 0)
                ta++;
            else if (y == 0)
                tb++;
            else if ((x > 0) == (y > 0))
                conc++;
            else
                disc++;
        }
    double den = sqrt((conc + disc + ta) * (conc + disc + tb));
    return n >= 2 && den > 0 ? (conc - disc) / den : NAN;
}

void accuracy_fini(struct accuracy *a)
{
    if (a == NULL)
        return;
    free(a->dev);
    memset(a, 0, sizeof *a);
}

static void accuracy_worst_add(struct accuracy *a, const struct accuracy_worst *w)
{
    double size = fabs(w->sim_us - w->meas_us);
    int k = a->n_worst;
    while (k > 0 && fabs(a->worst[k - 1].sim_us - a->worst[k - 1].meas_us) < size)
        k--;
    if (k >= ACCURACY_WORST)
        return;
    int last = a->n_worst < ACCURACY_WORST ? a->n_worst : ACCURACY_WORST - 1;
    memmove(&a->worst[k + 1], &a->worst[k], (size_t)(last - k) * sizeof *w);
    a->worst[k] = *w;
    if (a->n_worst < ACCURACY_WORST)
        a->n_worst++;
}

void accuracy_compute(const struct plan *p, const struct sim_result *sim,
                      const struct align_result *m, struct accuracy *out)
{
    memset(out, 0, sizeof *out);
    double ts = sim->unit ? 1000.0 : 1.0;
    out->time_scale = ts;
    out->step_sim_us = sim->step_time * ts;
    out->step_meas_us = m->step_time_us;
    out->step_err_pct = accuracy_error_pct(out->step_sim_us, m->step_time_us);
    out->devices = plan_devices(p);
    out->dev = xcalloc((size_t)out->devices, sizeof *out->dev);
    double op_sum[OP__COUNT] = {0}, all_sum = 0;
    int all_n = 0;
    double *dev_sum = xcalloc((size_t)out->devices, sizeof(double));
    for (int d = 0; d < out->devices; d++)
        for (int i = 0; i < plan_len(p, d); i++) {
            int id = plan_id(p, d, i);
            const struct instr *in = plan_at(p, d, i);
            if (m->count[id] == 0)
                continue;
            double s = (sim->end[id] - sim->start[id]) * ts;
            double x = m->end[id] - m->start[id];
            struct accuracy_op *o = &out->op[in->op];
            o->n++;
            o->sim_us += s;
            o->meas_us += x;
            if (!accuracy_scored(in->op) || x <= 0)
                continue;
            double err = fabs(s - x) / x;
            op_sum[in->op] += err;
            all_sum += err;
            all_n++;
            struct accuracy_dev *dv = &out->dev[d];
            dv->n++;
            dev_sum[d] += err;
            dv->busy_sim_us += s;
            dv->busy_meas_us += x;
            accuracy_worst_add(out, &(struct accuracy_worst){id, s, x, 100 * (s - x) / x});
        }
    for (int op = 0; op < OP__COUNT; op++) {
        struct accuracy_op *o = &out->op[op];
        int scored = 0;
        if (accuracy_scored((enum op)op))
            scored = o->n;
        o->mape_pct = scored > 0 ? 100 * op_sum[op] / scored : NAN;
        if (o->n > 0) {
            o->sim_us /= o->n;
            o->meas_us /= o->n;
        }
    }
    out->time_mape_pct = all_n ? 100 * all_sum / all_n : NAN;
    double peak_sum = 0;
    int peak_n = 0;
    out->peak_max_err_pct = NAN;
    for (int d = 0; d < out->devices; d++) {
        struct accuracy_dev *dv = &out->dev[d];
        dv->mape_pct = dv->n ? 100 * dev_sum[d] / dv->n : NAN;
        dv->peak_sim = sim->dev[d].peak_mem;
        dv->peak_meas = m->peak_bytes[d];
        dv->peak_err_pct =
            dv->peak_meas > 0 ? 100 * (dv->peak_sim - dv->peak_meas) / dv->peak_meas : NAN;
        if (!isnan(dv->peak_err_pct)) {
            peak_sum += fabs(dv->peak_err_pct);
            peak_n++;
            if (isnan(out->peak_max_err_pct) || fabs(dv->peak_err_pct) > out->peak_max_err_pct)
                out->peak_max_err_pct = fabs(dv->peak_err_pct);
        }
    }
    out->peak_mape_pct = peak_n ? peak_sum / peak_n : NAN;
    free(dev_sum);
}
