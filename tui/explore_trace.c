/* tui/explore_trace.c: a measured run beside the simulation (issue: traces/): loading a trace
 * (ours or Kineto; on a thread of its own, tui/explore_wait.c, since a large one takes
 * seconds), aligning it to the shown step, and its replay (traces/replay.h: the shown plan
 * simulated with every measured duration, as `compare` replays it), which r shows in the row
 * under each lane. */
#include <config.h>
#include "tui/explore.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flow/compare.h"
#include "model/cost.h"
#include "sim/plan/plan.h"
#include "sim/schemes/scheme.h"
#include "traces/accuracy.h"
#include "traces/align.h"
#include "traces/formats.h"
#include "traces/trace.h"
#include "util/err.h"
#include "util/xalloc.h"

/* The replay of the aligned trace on the shown plan (traces/replay.h), as `compare` makes it:
 * the plan's own costs for what the trace did not measure. */
static void explore_replay(struct explore *x, const struct pass_step *st)
{
    x->have_rep = flow_replay(st->plan, &st->sim, x->trace, &x->meas, &x->rep, x->rep_why,
                              sizeof x->rep_why);
}

void explore_realign(struct explore *x)
{
    x->shown_gen++; /* the measured and replayed rows are made again */
    if (x->have_meas)
        align_result_fini(&x->meas);
    x->have_meas = false;
    replay_fini(&x->rep);
    x->have_rep = false;
    x->rep_why[0] = '\0';
    const struct pass_step *st = explore_step(x);
    if (x->trace == NULL || st == NULL)
        return;
    struct align_opts o = {.step = -1, .per_step = true}; /* the replay takes each step */
    struct mt_err e = {0};
    if (align_run(st->plan, x->trace, &o, &x->meas, &e) != MT_OK) {
        /* explicit widths: status holds both whole (-Werror=format-truncation) */
        snprintf(x->status, sizeof x->status, "trace %.255s: %.930s", x->trace_path, e.msg);
        x->status_err = true;
        return;
    }
    x->have_meas = true;
    explore_replay(x, st);
    double to_sim = st->sim.unit ? 1e-3 : 1.0; /* a unit-cost trace writes 1 t as 1000 us */
    char ms[32], ss[32], rs[32], rp[96] = "";
    explore_fmt_time(x, x->meas.step_time_us * to_sim, ms, sizeof ms);
    explore_fmt_time(x, st->sim.step_time, ss, sizeof ss);
    double sim = st->sim.step_time / to_sim;
    /* the simulated step against the measured one, with compare's sign and denominator */
    double off = accuracy_error_pct(sim, x->meas.step_time_us);
    if (x->have_rep) { /* the replayed step against the measured one, as compare says it */
        explore_fmt_time(x, x->rep.step_us * to_sim, rs, sizeof rs);
        snprintf(rp, sizeof rp, ", replayed %s (%+.1f%%)", rs, x->rep.err_pct);
    }
    if (x->meas.matched == x->meas.total && x->meas.extra > 0)
        snprintf(x->status, sizeof x->status,
                 "trace %s: %d of %d instructions matched, but %zu of its events match none: was "
                 "it made from another config? measured step %s, simulated %s (%+.1f%%)%s",
                 x->trace_path, x->meas.matched, x->meas.total, x->meas.extra, ms, ss, off, rp);
    else if (x->meas.matched < x->meas.total) /* made from another config: say so, loudly */
        snprintf(x->status, sizeof x->status,
                 "trace %s: only %d of %d instructions matched: was it made from another "
                 "config? measured step %s, simulated %s (%+.1f%%)%s; o: hide/show",
                 x->trace_path, x->meas.matched, x->meas.total, ms, ss, off, rp);
    else
        snprintf(x->status, sizeof x->status,
                 "trace %s: %d of %d instructions matched; measured step %s, simulated %s "
                 "(%+.1f%%)%s; 0: fit both; o: hide/show; r: %s row",
                 x->trace_path, x->meas.matched, x->meas.total, ms, ss, off, rp,
                 x->show_rep ? "measured" : "replayed");
    x->status_err = x->meas.matched < x->meas.total || x->meas.extra > 0;
    if (x->fitted) /* the measured step may be the longer: fit it too */
        explore_fit(x);
}

/* Loading a trace (explore_wait). */
struct explore_trace_job {
    char path[256];
    int rc;
    struct mt_err e;
    struct trace *trace;
};

static void explore_job_trace(void *arg)
{
    struct explore_trace_job *j = arg;
    struct trace_opts o = {.map = NULL, .replica = 0};
    const char *path = j->path;
    j->rc = format_load_trace(&path, 1, &o, &j->trace, &j->e);
}

static void explore_job_drop_trace(void *arg)
{
    struct explore_trace_job *j = arg;
    trace_free(j->trace);
    free(j);
}

int explore_load_trace(struct explore *x, const char *path, struct mt_err *e)
{
    struct explore_trace_job *j = xcalloc(1, sizeof *j);
    snprintf(j->path, sizeof j->path, "%s", path);
    if (!explore_wait(x, explore_job_trace, explore_job_drop_trace, j, "loading the trace"))
        return err_set(e, MT_EINVAL, "%s: loading stopped by Esc", path);
    struct trace *t = j->trace;
    int rc = j->rc;
    if (rc != MT_OK)
        *e = j->e;
    free(j);
    if (rc != MT_OK)
        return rc;
    trace_free(x->trace);
    x->trace = t;
    snprintf(x->trace_path, sizeof x->trace_path, "%s", path);
    x->show_meas = true;
    explore_realign(x);
    return MT_OK;
}

int explore_toggle_replay(struct explore *x)
{
    if (x->trace == NULL) {
        snprintf(x->status, sizeof x->status, "r: no trace loaded (T loads one)");
        x->status_err = true;
        return R_REDRAW;
    }
    if (!x->have_rep) {
        snprintf(x->status, sizeof x->status, "r: no replay of %.200s: %.900s", x->trace_path,
                 x->have_meas ? x->rep_why : "the trace does not match the shown plan");
        x->status_err = true;
        return R_REDRAW;
    }
    x->show_rep = !x->show_rep;
    x->show_meas = true;
    const struct pass_step *st = explore_step(x);
    double to_sim = st->sim.unit ? 1e-3 : 1.0;
    char rs[32], ms[32];
    explore_fmt_time(x, x->rep.step_us * to_sim, rs, sizeof rs);
    explore_fmt_time(x, x->meas.step_time_us * to_sim, ms, sizeof ms);
    if (x->show_rep)
        snprintf(x->status, sizeof x->status,
                 "replayed row (every measured duration simulated, as compare replays it): "
                 "step %s, measured %s (%+.2f%%); r: measured row", rs, ms, x->rep.err_pct);
    else
        snprintf(x->status, sizeof x->status,
                 "measured row: step %s (replayed %s, %+.2f%%); r: replayed row", ms, rs,
                 x->rep.err_pct);
    x->status_err = false;
    return R_REDRAW;
}
