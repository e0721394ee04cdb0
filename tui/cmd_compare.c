/* tui/cmd_compare.c: `mario-tui compare SIM MEASURED...`: a simulation laid beside a measured
 * run (issue 8; the paper's §6.6). SIM is a plan or config (simulated here, with the plan
 * flags and --calibration) or a simulated Chrome trace; MEASURED is our executor's trace or a
 * PyTorch profiler trace (one file, or one per rank), matched instruction by instruction
 * (traces/align.h). Prints the step-time error, the MAPE of instruction times per op and per
 * device, peak memory per device, and the instructions furthest off; --svg draws both
 * timelines on one axis; --gate PCT fails (exit 1) above PCT % step-time error, for CI. */
#include <config.h>
#include "tui/cmd.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/interp.h"
#include "flow/compare.h"
#include "flow/run.h"
#include "render/layout.h"
#include "render/paint_svg.h"
#include "model/cost.h"
#include "sim/plan/plan.h"
#include "sim/schemes/scheme.h"
#include "sim/core/simulate.h"
#include "sim/core/vpipe.h"
#include "traces/accuracy.h"
#include "traces/align.h"
#include "traces/formats.h"
#include "traces/mapping.h"
#include "traces/replay.h"
#include "traces/trace.h"
#include "util/err.h"
#include "util/str.h"
#include "util/xalloc.h"

static const char compare_usage[] =
    "Usage: mario-tui compare SIM_PLAN_OR_TRACE MEASURED_TRACE... [plan flags] [--json]\n"
    "                         [--gate PCT] [--svg FILE] [--map FILE] [--step K] [--replica R]\n"
    "                         [--top N]\n"
    "Lay a simulation beside a measured run, instruction by instruction (same device, op,\n"
    "micro-batch, part and stage): step-time error, MAPE of instruction times per op and per\n"
    "device, peak memory per device, and the instructions furthest off.\n\n"
    "  SIM_PLAN_OR_TRACE        a plan or config JSON (simulated here with the plan flags, e.g.\n"
    "                           --calibration), or a trace from `mario-tui simulate --trace-out`\n"
    "  MEASURED_TRACE...        a trace from `mario-tui run --trace-out`, or a PyTorch profiler\n"
    "                           (Kineto) trace: one file, or one file per rank; .json or .gz\n"
    "Plan flags (when SIM is a config or plan):\n";

struct compare_opts {
    bool json;
    double gate;
    const char *svg, *map;
    int step, replica, top;
};

static const struct cmd_option compare_options[] = {
    {.name = "json", CMD_TO_BOOL(struct compare_opts, json), .heading = "Comparison:\n",
     .help = "print one JSON object (step_time_error_pct,\n"
             "peak_memory_error_pct, per_device, per_op, largest_errors)"},
    {.name = "gate", .arg = "PCT", CMD_TO_DOUBLE(struct compare_opts, gate, 0, INFINITY),
     .help = "exit 1 when |step-time error| is above PCT %"},
    {.name = "svg", .arg = "FILE", CMD_TO_STRING(struct compare_opts, svg),
     .help = "both timelines on one time axis (two rows per device)"},
    {.name = "map", .arg = "FILE", CMD_TO_STRING(struct compare_opts, map),
     .help = "mapping of foreign event names to plan keys (docs/traces.md)"},
    {.name = "step", .arg = "K", CMD_TO_INT(struct compare_opts, step, 0, 1 << 24),
     .help = "compare step K only (default: every step but the first, which\n"
             "warms up)"},
    {.name = "replica", .arg = "R",
     CMD_TO_INT(struct compare_opts, replica, 0, CONFIG_MAX_DEVICES),
     .help = "the data-parallel replica to compare (default 0)"},
    {.name = "top", .arg = "N", CMD_TO_INT(struct compare_opts, top, 0, ACCURACY_WORST),
     .help = "instructions listed with the largest errors (default 5, <= 10)"},
    {0},
};

static int compare_exec(int argc, char **argv);

const struct cmd_entry cmd_compare_entry = {
    .name = "compare",
    .summary = "lay a simulation beside a measured trace: step time, MAPE, memory",
    .usage = compare_usage,
    .plan_flags = true,
    .options = compare_options,
    .footer =
        "Exit status: 0 ok, 1 over the gate or a file could not be written, 2 bad usage or "
        "input.\n",
    .args_min = 2,
    .args_max = -1,
    .args = "SIM_PLAN_OR_TRACE and MEASURED_TRACE",
    .exec = compare_exec,
};

struct compare_side {
    struct plan *plan;
    struct sim_result sim;
    const char *name;
    bool from_trace;
};

static int compare_load_sim(const struct cmd_plan *cp, struct compare_side *s, struct mt_err *e)
{
    if (cp->path && format_of(cp->path)->kind == FILE_KIND_TRACE) {
        struct trace *t;
        struct trace_opts o = {NULL, 0};
        TRY(trace_load(&cp->path, 1, &o, &t, e));
        int rc = align_trace_plan(t, &s->plan, &s->sim, e);
        trace_free(t);
        if (rc != MT_OK)
            return err_wrap(e, "%s", cp->path);
        s->from_trace = true;
        return MT_OK;
    }
    TRY(cmd_plan_build(cp, &s->plan, e));
    int rc = sim_run(s->plan, &s->sim, e);
    if (rc != MT_OK) {
        plan_free(s->plan);
        s->plan = NULL;
    }
    return rc;
}

/* A trace of our own executor (`mario-tui run`: backend cpu, cuda or nccl) is compared with
 * what run itself printed as simulated: the same plan simulated with the executor's own byte
 * counts (flow_run_simulate; fp32, 16 bytes a parameter), not the training stack's analytic
 * ones, so that run and compare give one simulated peak for one plan (issue 41 item 5). The
 * times are the same either way. */
static void compare_sim_as_run(struct compare_side *s, const struct trace *t)
{
    const char *b = trace_info(t)->backend;
    if (s->from_trace || s->sim.unit ||
        !(strcmp(b, "cpu") == 0 || strcmp(b, "cuda") == 0 || strcmp(b, "nccl") == 0))
        return;
    struct sim_result *r = flow_run_simulate(s->plan);
    if (r == NULL) /* a plan the executor cannot run: its analytic figures stand */
        return;
    sim_result_fini(&s->sim);
    s->sim = *r;
    free(r);
}

static void compare_time(double us, bool unit, char *buf, size_t n)
{
    if (isnan(us))
        snprintf(buf, n, "-");
    else if (unit)
        snprintf(buf, n, "%.3f t", us / 1000);
    else if (fabs(us) >= 1e6)
        snprintf(buf, n, "%.3f s", us * 1e-6);
    else if (fabs(us) >= 1000)
        snprintf(buf, n, "%.3f ms", us * 1e-3);
    else
        snprintf(buf, n, "%.1f us", us);
}

static void compare_mem(double v, bool unit, char *buf, size_t n)
{
    if (isnan(v))
        snprintf(buf, n, "-");
    else if (unit)
        snprintf(buf, n, "%.3g M_θ", v);
    else
        str_format_bytes(v, buf, n);
}

static void compare_pct(double v, char *buf, size_t n)
{
    if (isnan(v))
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%+.1f %%", v);
}

static void compare_label(const struct plan *p, int id, char *buf, size_t n)
{
    int d, i;
    plan_locate_id(p, id, &d, &i);
    const struct instr *in = plan_at(p, d, i);
    char lab[32];
    plan_instr_label(p, in, lab, sizeof lab);
    snprintf(buf, n, "device %d %s (mb %d, part %d, stage %d)", d, lab, in->mb, in->part,
             in->stage);
}

/* A MoE plan's all-to-alls a step, simulated beside measured (flow/compare.h). */
static void compare_print_a2a(const struct accuracy_a2a *x)
{
    if (x->devices == 0)
        return;
    printf("\nall-to-all a step (MoE dispatch and combine, forward and backward):\n");
    printf("%6s %10s %12s %12s %8s %12s %12s\n", "device", "exchanges", "simulated", "measured",
           "error", "bytes sim", "bytes meas");
    for (int d = 0; d < x->devices; d++) {
        char b1[48], b2[48], b3[48], b4[48], b5[48];
        compare_time(x->sim_us[d], false, b1, sizeof b1);
        compare_time(x->meas_us[d], false, b2, sizeof b2);
        compare_pct(accuracy_error_pct(x->sim_us[d], x->meas_us[d]), b3, sizeof b3);
        str_format_bytes(x->sim_bytes[d], b4, sizeof b4);
        str_format_bytes(x->meas_bytes[d], b5, sizeof b5);
        printf("%6d %10d %12s %12s %8s %12s %12s\n", d, x->exchanges[d], b1, b2, b3, b4, b5);
    }
}

static void compare_print(const struct compare_side *s, const char *const *files, int nfiles,
                          const struct trace_info *ti, const struct align_result *m,
                          const struct accuracy *a, const struct replay_result *rp, int top)
{
    const struct plan *p = s->plan;
    const struct config *c = plan_config(p);
    const struct plan_geom *g = plan_geom(p);
    bool unit = s->sim.unit;
    char b1[48], b2[48], b3[48], b4[48], b5[48], degrees[64];
    config_degrees_text(c, g->devices, degrees, sizeof degrees);
    printf("simulated: %s, %s, %s, %d micro-batches of %d x %d tokens%s [%s]\n", c->model.name,
           config_scheme_name(c->scheme), degrees, g->mbs, c->micro_batch_size,
           c->model.seq_length,
           s->from_trace ? " (from its trace)" : "", s->name ? s->name : c->source);
    printf("measured:  %s%s (%s%s%s), ", files[0], nfiles > 1 ? " ..." : "", ti->source,
           ti->backend[0] ? ", " : "", ti->backend);
    if (m->steps_used == 1)
        printf("step %d of %d\n", m->first_step, m->steps_in_trace);
    else
        printf("%d of %d steps, from step %d (the first warms up)\n", m->steps_used,
               m->steps_in_trace, m->first_step);
    printf("matched %d of %d instructions", m->matched, m->total);
    if (m->missing)
        printf(", %d not measured", m->missing);
    if (m->extra)
        printf(", %zu measured events not in the plan", m->extra);
    if (m->unkeyed)
        printf(", %zu without keys", m->unkeyed);
    printf("\n");
    if (ti->clock_shift_us > 0)
        printf("note: the ranks' clocks are put together by their dependencies (docs/traces.md), "
               "shifting a rank by up to %.1f us\n",
               ti->clock_shift_us);
    if (s->sim.unit != ti->unit)
        printf("note: the simulation uses %s and the trace %s\n",
               s->sim.unit ? "unit costs (1 t = 1000 us)" : "real costs",
               ti->unit ? "unit costs" : "real time");
    compare_time(a->step_sim_us, unit, b1, sizeof b1);
    compare_time(a->step_meas_us, unit, b2, sizeof b2);
    compare_pct(a->step_err_pct, b3, sizeof b3);
    printf("\nstep time: simulated %s, measured %s, error %s\n", b1, b2, b3);
    if (rp != NULL) {
        compare_time(rp->step_us, unit, b1, sizeof b1);
        compare_pct(rp->err_pct, b3, sizeof b3);
        printf("replayed with the measured durations: %s, error %s\n", b1, b3);
        if (!isnan(rp->lat_us)) {
            compare_time(rp->one_lat_us, unit, b1, sizeof b1);
            compare_pct(rp->one_lat_err_pct, b3, sizeof b3);
            printf("  with one p2p latency for every message (%.1f us, from %d; a receive %.1f "
                   "us): %s, error %s\n",
                   rp->lat_us, rp->lat_samples, rp->recv_us, b1, b3);
        }
    }
    if (!isnan(a->time_mape_pct))
        printf("instruction time MAPE: %.1f %%\n", a->time_mape_pct);

    printf("\n%-4s %6s %12s %12s %8s\n", "op", "count", "simulated", "measured", "MAPE");
    for (int op = 0; op < OP__COUNT; op++) {
        const struct accuracy_op *o = &a->op[op];
        if (o->n == 0)
            continue;
        compare_time(o->sim_us, unit, b1, sizeof b1);
        compare_time(o->meas_us, unit, b2, sizeof b2);
        if (accuracy_scored((enum op)op))
            snprintf(b3, sizeof b3, "%.1f %%", o->mape_pct);
        else
            snprintf(b3, sizeof b3, "(%s)", vpipe_is_send(op) ? "post" : "wait");
        printf("%-4s %6d %12s %12s %8s\n", plan_op_name((enum op)op), o->n, b1, b2, b3);
    }
    printf("\n%6s %6s %8s %12s %12s %12s %12s %8s\n", "device", "instrs", "MAPE", "busy sim",
           "busy meas", "peak sim", "peak meas", "error");
    for (int d = 0; d < a->devices; d++) {
        const struct accuracy_dev *dv = &a->dev[d];
        compare_time(dv->busy_sim_us, unit, b1, sizeof b1);
        compare_time(dv->busy_meas_us, unit, b2, sizeof b2);
        compare_mem(dv->peak_sim, unit, b3, sizeof b3);
        compare_mem(dv->peak_meas, unit, b4, sizeof b4);
        compare_pct(dv->peak_err_pct, b5, sizeof b5);
        char mape[16];
        if (isnan(dv->mape_pct))
            snprintf(mape, sizeof mape, "-");
        else
            snprintf(mape, sizeof mape, "%.1f %%", dv->mape_pct);
        printf("%6d %6d %8s %12s %12s %12s %12s %8s\n", d, dv->n, mape, b1, b2, b3, b4, b5);
    }
    if (!isnan(a->peak_mape_pct))
        printf("peak memory MAPE %.2f %% (largest %.2f %%)\n", a->peak_mape_pct,
               a->peak_max_err_pct);
    else
        printf("peak memory: not measured\n");
    if (a->n_worst > 0 && top > 0) {
        printf("\nlargest errors (duration):\n");
        for (int k = 0; k < a->n_worst && k < top; k++) {
            const struct accuracy_worst *w = &a->worst[k];
            char lab[96];
            compare_label(p, w->id, lab, sizeof lab);
            compare_time(w->sim_us, unit, b1, sizeof b1);
            compare_time(w->meas_us, unit, b2, sizeof b2);
            compare_pct(w->err_pct, b3, sizeof b3);
            printf("  %-40s sim %10s  meas %10s  %8s\n", lab, b1, b2, b3);
        }
    }
}

static int compare_svg(const struct compare_side *s, const struct align_result *m, const char *path,
                       struct mt_err *e)
{
    int total = plan_total(s->plan);
    double scale = s->sim.unit ? 1000.0 : 1.0;
    double *t0 = xmalloc(2 * ((size_t)total + 1) * sizeof(double)), *t1 = t0 + total + 1;
    for (int i = 0; i < total; i++) {
        t0[i] = m->start[i] / scale;
        t1[i] = m->end[i] / scale;
    }
    struct layout_timeline tl = {"measured", t0, t1};
    struct layout_panel panel = {NULL, s->plan, &s->sim, &tl};
    struct layout_opts lo = {0};
    lo.comm = false;
    struct layout *l = NULL;
    int rc = layout_build(&panel, 1, &lo, &l, e);
    if (rc == MT_OK)
        rc = paint_svg_file(l, path, e);
    layout_free(l);
    free(t0);
    return rc;
}

static int compare_exec(int argc, char **argv)
{
    struct compare_opts o = {.gate = -1, .step = -1, .top = 5};
    struct cmd_plan cp = {0};
    struct mt_err e = {0};
    int first, st = cmd_options_parse(&cmd_compare_entry, argc, argv, &o, &cp, &first);
    if (st != CMD_OPTIONS_RUN)
        return st;
    if (cp.n_over > 0 && format_of(cp.path)->kind == FILE_KIND_TRACE)
        return cmd_usage_error("compare", "plan flags (--calibration, --scheme, ...) need a plan "
                                          "or config as SIM, not a trace (%s)",
                               cp.path);
    const char *const *files = (const char *const *)&argv[first + 1];
    int nfiles = argc - first - 1;

    struct compare_side s = {0};
    s.name = cp.path;
    struct mapping *map = NULL;
    struct trace *t = NULL;
    struct flow_compare fc = {0};
    int status = 0;
    if (o.map && mapping_load(o.map, &map, &e) != MT_OK)
        return cmd_fail("compare", &e);
    if (compare_load_sim(&cp, &s, &e) != MT_OK) {
        status = cmd_fail("compare", &e);
        goto done;
    }
    struct trace_opts to = {map, o.replica};
    if (trace_load(files, nfiles, &to, &t, &e) != MT_OK) {
        status = cmd_fail("compare", &e);
        goto done;
    }
    compare_sim_as_run(&s, t);
    struct align_opts ao = {o.step, true};
    if (flow_compare_run(s.plan, &s.sim, t, &ao, &fc, &e) != MT_OK) {
        err_wrap(&e, "%s", files[0]);
        status = cmd_fail("compare", &e);
        goto done;
    }
    if (!fc.replayed)
        fprintf(stderr, "mario-tui compare: no replay: %s\n", fc.why);
    bool gate_failed = o.gate >= 0 && !(fabs(fc.a.step_err_pct) <= o.gate);
    struct accuracy_a2a x;
    flow_compare_a2a(s.plan, t, &fc.m, o.replica, &x);
    struct mt_err ae = {0}; /* a dense plan has none; a MoE one prices them */
    for (int d = 0; d < x.devices; d++)
        interp_a2a_simulated(s.plan, d, &x.sim_us[d], &x.sim_bytes[d], &ae);
    if (o.json) {
        char *text =
            accuracy_report_json(&(struct accuracy_report){
                .plan = s.plan, .sim_name = s.name, .from_trace = s.from_trace,
                .unit = s.sim.unit, .files = files, .nfiles = nfiles, .info = trace_info(t),
                .m = &fc.m, .a = &fc.a, .replay = fc.replayed ? &fc.rp : NULL, .top = o.top,
                .gate = o.gate, .gate_failed = gate_failed, .a2a = &x});
        puts(text);
        free(text);
    } else {
        compare_print(&s, files, nfiles, trace_info(t), &fc.m, &fc.a,
                      fc.replayed ? &fc.rp : NULL, o.top);
        compare_print_a2a(&x);
    }
    if (o.svg && compare_svg(&s, &fc.m, o.svg, &e) != MT_OK)
        status = cmd_fail("compare", &e);
    if (gate_failed) {
        fprintf(stderr, "mario-tui compare: step-time error %.2f %% is over the gate of %g %%\n",
                fc.a.step_err_pct, o.gate);
        status = 1;
    }
done:
    flow_compare_fini(&fc);
    trace_free(t);
    mapping_free(map);
    sim_result_fini(&s.sim);
    plan_free(s.plan);
    return status;
}
