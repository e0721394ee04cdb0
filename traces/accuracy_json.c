/* traces/accuracy_json.c: a comparison of a simulation with a measured run as JSON
 * (`mario-tui compare --json`). */
#include <config.h>
#include "traces/accuracy.h"

#include <cjson/cJSON.h>
#include <math.h>

#include "model/config.h"
#include "sim/plan/plan.h"
#include "traces/align.h"
#include "traces/replay.h"
#include "traces/trace.h"

static void report_num(cJSON *o, const char *key, double v)
{
    if (isfinite(v))
        cJSON_AddNumberToObject(o, key, v);
    else
        cJSON_AddNullToObject(o, key);
}

char *accuracy_report_json(const struct accuracy_report *r)
{
    const struct plan *p = r->plan;
    const struct config *c = plan_config(p);
    const struct trace_info *ti = r->info;
    const struct align_result *m = r->m;
    const struct accuracy *a = r->a;
    const char *const *files = r->files;
    int nfiles = r->nfiles, top = r->top;
    cJSON *o = cJSON_CreateObject();
    cJSON *sim = cJSON_AddObjectToObject(o, "simulated");
    cJSON_AddStringToObject(sim, "source", r->sim_name ? r->sim_name : c->source);
    cJSON_AddStringToObject(sim, "scheme", config_scheme_name(c->scheme));
    cJSON_AddStringToObject(sim, "model", c->model.name);
    cJSON_AddBoolToObject(sim, "from_trace", r->from_trace);
    cJSON_AddBoolToObject(sim, "unit_costs", r->unit);
    cJSON *meas = cJSON_AddObjectToObject(o, "measured");
    cJSON *fl = cJSON_AddArrayToObject(meas, "files");
    for (int i = 0; i < nfiles; i++)
        cJSON_AddItemToArray(fl, cJSON_CreateString(files[i]));
    cJSON_AddStringToObject(meas, "source", ti->source);
    cJSON_AddStringToObject(meas, "backend", ti->backend);
    if (ti->clock_shift_us > 0)
        cJSON_AddNumberToObject(meas, "clock_shift_us", ti->clock_shift_us);
    cJSON_AddNumberToObject(meas, "steps_in_trace", m->steps_in_trace);
    cJSON_AddNumberToObject(meas, "first_step", m->first_step);
    cJSON_AddNumberToObject(meas, "steps_used", m->steps_used);
    cJSON *st = cJSON_AddArrayToObject(meas, "step_times_us");
    for (int i = 0; i < m->steps_used; i++)
        cJSON_AddItemToArray(st, cJSON_CreateNumber(m->step_times_us[i]));
    cJSON_AddNumberToObject(o, "matched", m->matched);
    cJSON_AddNumberToObject(o, "missing", m->missing);
    cJSON_AddNumberToObject(o, "extra", (double)m->extra);
    cJSON_AddNumberToObject(o, "unkeyed", (double)m->unkeyed);
    report_num(o, "step_time_sim_us", a->step_sim_us);
    report_num(o, "step_time_measured_us", a->step_meas_us);
    report_num(o, "step_time_error_pct", a->step_err_pct);
    report_num(o, "time_mape_pct", a->time_mape_pct);
    report_num(o, "peak_memory_error_pct", a->peak_mape_pct);
    report_num(o, "peak_memory_max_error_pct", a->peak_max_err_pct);
    cJSON_AddStringToObject(o, "memory_unit", r->unit ? "M_theta" : "bytes");
    if (r->replay != NULL) {
        const struct replay_result *rp = r->replay;
        cJSON *j = cJSON_AddObjectToObject(o, "replay");
        report_num(j, "step_time", rp->step_us);
        report_num(j, "step_time_error_pct", rp->err_pct);
        cJSON_AddNumberToObject(j, "steps", rp->steps);
        cJSON *one = cJSON_AddObjectToObject(j, "one_latency");
        report_num(one, "step_time", rp->one_lat_us);
        report_num(one, "step_time_error_pct", rp->one_lat_err_pct);
        report_num(one, "p2p_latency_us", rp->lat_us);
        cJSON_AddNumberToObject(one, "p2p_latency_samples", rp->lat_samples);
        report_num(one, "receive_us", rp->recv_us);
        cJSON *devs = cJSON_AddArrayToObject(j, "per_device");
        for (int d = 0; d < rp->devices; d++) {
            const struct replay_dev *dv = &rp->dev[d];
            cJSON *x = cJSON_CreateObject();
            cJSON_AddNumberToObject(x, "device", d);
            report_num(x, "finish_us", dv->finish_us);
            report_num(x, "finish_measured_us", dv->meas_finish_us);
            report_num(x, "error_pct", dv->err_pct);
            report_num(x, "busy_us", dv->busy_us);
            cJSON_AddItemToArray(devs, x);
        }
    }
    cJSON *ops = cJSON_AddObjectToObject(o, "per_op");
    for (int op = 0; op < OP__COUNT; op++) {
        const struct accuracy_op *x = &a->op[op];
        if (x->n == 0)
            continue;
        cJSON *j = cJSON_AddObjectToObject(ops, plan_op_name((enum op)op));
        cJSON_AddNumberToObject(j, "n", x->n);
        report_num(j, "sim_us", x->sim_us);
        report_num(j, "measured_us", x->meas_us);
        cJSON_AddBoolToObject(j, "scored", accuracy_scored((enum op)op));
        report_num(j, "mape_pct", x->mape_pct);
    }
    cJSON *devs = cJSON_AddArrayToObject(o, "per_device");
    for (int d = 0; d < a->devices; d++) {
        const struct accuracy_dev *dv = &a->dev[d];
        cJSON *j = cJSON_CreateObject();
        cJSON_AddNumberToObject(j, "device", d);
        cJSON_AddNumberToObject(j, "n", dv->n);
        report_num(j, "mape_pct", dv->mape_pct);
        report_num(j, "busy_sim_us", dv->busy_sim_us);
        report_num(j, "busy_measured_us", dv->busy_meas_us);
        report_num(j, "peak_memory_sim", dv->peak_sim);
        report_num(j, "peak_memory_measured", dv->peak_meas);
        report_num(j, "peak_memory_error_pct", dv->peak_err_pct);
        cJSON_AddItemToArray(devs, j);
    }
    cJSON *worst = cJSON_AddArrayToObject(o, "largest_errors");
    for (int k = 0; k < a->n_worst && k < top; k++) {
        const struct accuracy_worst *w = &a->worst[k];
        int d, i;
        plan_locate_id(p, w->id, &d, &i);
        const struct instr *in = plan_at(p, d, i);
        cJSON *j = cJSON_CreateObject();
        cJSON_AddNumberToObject(j, "device", d);
        cJSON_AddStringToObject(j, "op", plan_op_name(in->op));
        cJSON_AddNumberToObject(j, "mb", in->mb);
        cJSON_AddNumberToObject(j, "part", in->part);
        cJSON_AddNumberToObject(j, "stage", in->stage);
        report_num(j, "sim_us", w->sim_us);
        report_num(j, "measured_us", w->meas_us);
        report_num(j, "error_pct", w->err_pct);
        cJSON_AddItemToArray(worst, j);
    }
    if (r->a2a != NULL && r->a2a->devices > 0) {
        cJSON *aa = cJSON_AddArrayToObject(o, "all_to_all");
        for (int d = 0; d < r->a2a->devices; d++) {
            const struct accuracy_a2a *x = r->a2a;
            cJSON *j = cJSON_CreateObject();
            cJSON_AddNumberToObject(j, "device", d);
            cJSON_AddNumberToObject(j, "exchanges", x->exchanges[d]);
            report_num(j, "sim_us", x->sim_us[d]);
            report_num(j, "measured_us", x->meas_us[d]);
            report_num(j, "error_pct", accuracy_error_pct(x->sim_us[d], x->meas_us[d]));
            report_num(j, "sim_bytes", x->sim_bytes[d]);
            report_num(j, "measured_bytes", x->meas_bytes[d]);
            cJSON_AddItemToArray(aa, j);
        }
    }
    if (r->gate >= 0) {
        cJSON_AddNumberToObject(o, "gate_pct", r->gate);
        cJSON_AddBoolToObject(o, "gate_passed", !r->gate_failed);
    }
    char *text = cJSON_Print(o);
    cJSON_Delete(o);
    return text;
}
