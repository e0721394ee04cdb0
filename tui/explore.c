/* tui/explore.c: the explorer's state: building the pipeline of the edited config (scheme ->
 * plan -> Mario's passes -> simulations; the search when the user steps to it), the lower
 * bound of its work, the viewport that follows it, the critical path, the tuner, a measured
 * trace and its replay. Edits never lose the last good state: a config that fails to build
 * leaves the previous plan on screen and says why in the status line. */
#include <config.h>
#include "tui/explore.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "render/layout.h"
#include "render/paint_cairo.h"
#include "render/paint_svg.h"
#include "sim/core/critical.h"
#include "sim/plan/plan.h"
#include "sim/schemes/scheme.h"
#include "sim/search/search.h"
#include "sim/core/simulate.h"
#include "sim/plan/validate.h"
#include "traces/align.h"
#include "traces/chrome.h"
#include "traces/trace.h"
#include "util/err.h"
#include "util/xalloc.h"

const struct pass_step *explore_step(const struct explore *x)
{
    if (!x->have_pl)
        return NULL;
    if (x->bucket_on) /* an input-aware bucket's plan (tui/view_buckets.c) */
        return &x->bucket_step;
    return pass_pipeline_row(&x->pl, (enum pass_row)x->row);
}

int explore_lanes(const struct explore *x)
{
    const struct pass_step *st = explore_step(x);
    if (st == NULL)
        return 0;
    const struct plan_geom *g = plan_geom(st->plan);
    return g->devices * g->parts;
}

/* Narrow terminals (80 columns) keep the Gantt wide and the memory column short. */
int explore_mem_width(const struct explore *x, int w)
{
    (void)x;
    return w >= 110 ? EXPLORE_MEM_W : 16;
}

int explore_gantt_width(const struct explore *x, int w)
{
    int gw = w - EXPLORE_GUTTER - explore_mem_width(x, w) - 1;
    return gw < 10 ? 10 : gw;
}

/* The critical path of the shown step (sim/core/critical.h). */
static void explore_critical_path(struct explore *x)
{
    free(x->on_path);
    x->on_path = NULL;
    const struct pass_step *st = explore_step(x);
    if (st == NULL)
        return;
    x->on_path = xcalloc((size_t)plan_total(st->plan) + 1, 1);
    sim_critical_path(st->plan, &st->sim, x->on_path, NULL);
}

/* One time scale for every pass step: the longest of them (and of a measured run laid beside
 * the shown one) fills the width. */
double explore_longest(const struct explore *x)
{
    double longest = 0;
    for (int i = 0; i < x->pl.n; i++)
        if (x->pl.step[i].sim.step_time > longest)
            longest = x->pl.step[i].sim.step_time;
    if (x->bucket_on && x->bucket_step.sim.step_time > longest)
        longest = x->bucket_step.sim.step_time;
    if (x->have_meas && x->show_meas && explore_step(x) != NULL) { /* us, or 1000 per t */
        double to_sim = explore_step(x)->sim.unit ? 1e-3 : 1.0;
        double meas = x->meas.step_time_us * to_sim;
        if (meas > longest)
            longest = meas;
        /* the replay too, so that r does not move the axis */
        if (x->have_rep && x->rep.step_us * to_sim > longest)
            longest = x->rep.step_us * to_sim;
    }
    return longest;
}

void explore_fit(struct explore *x)
{
    const struct pass_step *st = explore_step(x);
    if (st == NULL)
        return;
    double longest = explore_longest(x);
    int gw = explore_gantt_width(x, x->w > 0 ? x->w : 120);
    x->t0 = 0;
    x->tpc = longest > 0 ? longest / gw : 1;
    x->fitted = true;
}

static void explore_clamp_cursor(struct explore *x)
{
    const struct pass_step *st = explore_step(x);
    if (st == NULL)
        return;
    int lanes = explore_lanes(x);
    if (x->sel_lane >= lanes)
        x->sel_lane = lanes - 1;
    if (x->sel_lane < 0)
        x->sel_lane = 0;
    const struct plan_geom *g = plan_geom(st->plan);
    int dev = x->sel_lane / g->parts, part = x->sel_lane % g->parts;
    int len = plan_len(st->plan, dev);
    if (x->sel_idx >= len)
        x->sel_idx = len - 1;
    if (x->sel_idx < 0)
        x->sel_idx = 0;
    /* Land on a compute instruction of the lane. */
    for (int i = x->sel_idx; i < len; i++) {
        const struct instr *in = plan_at(st->plan, dev, i);
        if (in->part == part && (plan_op_is_compute(in->op) || in->op == OP_AR ||
                                 in->op == OP_OS)) {
            x->sel_idx = i;
            return;
        }
    }
    for (int i = x->sel_idx; i >= 0; i--) {
        const struct instr *in = plan_at(st->plan, dev, i);
        if (in->part == part && plan_op_is_compute(in->op)) {
            x->sel_idx = i;
            return;
        }
    }
}

/* With offload on (O, --offload) the search's schedules may offload: the bound drops its
 * memory part, as `optimize --search --offload` has it (sim/core/bound.h). */
void explore_bound_offload(struct explore *x)
{
    if (x->offload && x->have_bound)
        bound_allow_offload(&x->bound);
}

/* The lower bound of the shown plan's work: the pipeline's base (every pass step and the
 * search are plans of the same work, `optimize` bounds it once), or the bucket's plan; made
 * again only for another plan (bound_of is cleared when a plan is replaced). */
static void explore_bound_update(struct explore *x)
{
    const struct plan *p = x->bucket_on ? x->bucket_step.plan
                           : x->have_pl && x->pl.n > 0 ? x->pl.step[0].plan
                                                       : NULL;
    if (p != NULL && p == x->bound_of)
        return;
    x->have_bound = false;
    x->bound_of = p;
    struct mt_err e = {0};
    if (p != NULL && bound_plan(p, &x->bound, &e) == MT_OK)
        x->have_bound = true;
    explore_bound_offload(x);
}

bool explore_bound_shown(const struct explore *x, double *lb, double *gap_pct)
{
    const struct pass_step *st = explore_step(x);
    if (!x->have_bound || st == NULL)
        return false;
    *lb = bound_value(&x->bound, st->sim.oom_device < 0);
    *gap_pct = bound_gap_pct(st->sim.step_time, *lb);
    return *lb > 0 && *lb < 1e300;
}

bool explore_bound_optimal(const struct explore *x)
{
    const struct pass_step *st = explore_step(x);
    return x->have_bound && st != NULL &&
           bound_optimal(&x->bound, st->sim.step_time, st->sim.oom_device < 0);
}

static bool explore_async(const struct explore *x)
{
    return x->have_pl && x->pl.n > 0 && config_scheme_async(plan_geom(x->pl.step[0].plan)->scheme);
}

int explore_rows(const struct explore *x)
{
    if (x->have_pl && x->pl.as_given) /* a plan that offloads: shown as given, base alone */
        return 1;
    return PASS_ROW__COUNT + !explore_async(x);
}

static double explore_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

/* The search's progress (search_opts.progress): kept for the status line, redrawn by tick at
 * most every tick_every_ms; false (stop) when tick says so. */
static bool explore_search_progress(void *ctx, long done, long budget)
{
    struct explore *x = ctx;
    x->search_done = done;
    x->search_budget = budget;
    if (x->tick == NULL)
        return true;
    double now = explore_now_ms();
    if (now - x->tick_ms < x->tick_every_ms)
        return true;
    x->tick_ms = now;
    return x->tick(x->busy_ctx);
}

int explore_search(struct explore *x, struct mt_err *e)
{
    if (!x->have_pl || x->pl.n < 1)
        return err_set(e, MT_EINVAL, "no plan to search");
    if (x->pl.searched)
        return MT_OK;
    if (explore_async(x))
        return err_set(e, MT_EUNSUPPORTED, "%s is asynchronous: no flush to search within",
                       config_scheme_name(plan_geom(x->pl.step[0].plan)->scheme));
    const struct config *c = plan_config(x->pl.step[0].plan);
    struct search_opts so;
    search_opts_default(&so, c); /* as `optimize --search`: the config's cap, seed, budget */
    so.offload = x->offload;     /* --offload, O: checkpointed forwards may go to host memory */
    if (x->busy != NULL) {
        char cap[32], what[200];
        explore_fmt_cap(x, so.cap, cap, sizeof cap);
        snprintf(what, sizeof what,
                 "search: looking for a faster schedule %s%s%s%s (large plans take a second "
                 "or more; Esc stops it)...",
                 so.cap > 0 ? "under the " : "with no memory cap", so.cap > 0 ? cap : "",
                 so.cap > 0 ? (c->unit.enabled ? " M_θ cap" : " cap") : "",
                 so.offload ? ", offload allowed" : "");
        x->busy(x->busy_ctx, what);
    }
    so.progress = explore_search_progress;
    so.progress_ctx = x;
    x->searching = true;
    x->search_done = x->search_budget = 0;
    double t0 = explore_now_ms();
    x->tick_ms = t0;
    int rc = pass_pipeline_search(&x->pl, &so, e);
    x->search_ms = explore_now_ms() - t0;
    x->searching = false;
    return rc;
}

int explore_init(struct explore *x, const struct config *cfg, struct plan *loaded, bool utf8,
                 struct mt_err *e)
{
    memset(x, 0, sizeof *x);
    x->utf8 = utf8;
    x->loaded = loaded;
    x->tick_every_ms = EXPLORE_TICK_MS;
    x->row = PASS_ROW_BASE;
    x->row_wanted = -1;
    int rc = explore_build(x, loaded ? plan_config(loaded) : cfg, loaded, e);
    if (rc != MT_OK) {
        plan_free(x->loaded);
        x->loaded = NULL;
        return rc;
    }
    explore_status_shown(x);
    return MT_OK;
}

void explore_fini(struct explore *x)
{
    explore_build_fini(x); /* a build's passes stopped, joined, dropped; x->pl with them */
    explore_wait_reap(x);
    if (x->have_meas)
        align_result_fini(&x->meas);
    replay_fini(&x->rep);
    trace_free(x->trace);
    if (x->have_pl)
        pass_pipeline_fini(&x->pl);
    if (x->have_tune)
        tune_result_fini(&x->tune);
    plan_free(x->loaded);
    free(x->on_path);
    explore_buckets_fini(x);
    view_gantt_cache_free(x);
    view_copy_cache_free(x);
    memset(x, 0, sizeof *x);
}

int explore_apply(struct explore *x, const struct config *c, struct mt_err *e)
{
    struct config cand = *c; /* c may be x->cfg itself */
    TRY(explore_build(x, &cand, NULL, e));
    plan_free(x->loaded); /* edited: the loaded plan no longer describes the config */
    x->loaded = NULL;
    return MT_OK;
}

bool explore_too_small(const struct explore *x)
{
    return x->w > 0 && x->h > 0 && (x->w < EXPLORE_MIN_W || x->h < EXPLORE_MIN_H);
}

/* The shown step's boxes and op kinds, counted when the step or shown_gen changed. */
static void explore_summary(struct explore *x)
{
    const struct pass_step *st = explore_step(x);
    if (st == x->summary_of && x->summary_gen == x->shown_gen)
        return;
    x->summary_of = st;
    x->summary_gen = x->shown_gen;
    x->summary_boxes = 0;
    memset(x->summary_ops, 0, sizeof x->summary_ops);
    if (st == NULL)
        return;
    const struct plan *p = st->plan;
    long count[OP__COUNT] = {0};
    for (int d = 0; d < plan_devices(p); d++) {
        const struct instr *in = plan_instrs(p, d);
        for (int i = 0, n = plan_len(p, d); i < n; i++)
            count[in[i].op]++;
    }
    for (int op = 0; op < OP__COUNT; op++) {
        x->summary_ops[op] = count[op] > 0;
        if (layout_is_drawn_op((enum op)op))
            x->summary_boxes += (int)count[op];
    }
}

int explore_shown_boxes(struct explore *x)
{
    explore_summary(x);
    return x->summary_boxes;
}

const bool *explore_shown_ops(struct explore *x)
{
    explore_summary(x);
    return x->summary_ops;
}

bool explore_marks_shown(struct explore *x)
{
    if (x->marks != 0)
        return x->marks > 0;
    const struct pass_step *st = explore_step(x);
    return st == NULL || x->bucket_on || 2 * st->changes.n <= explore_shown_boxes(x);
}

int explore_toggle_marks(struct explore *x)
{
    x->marks = explore_marks_shown(x) ? -1 : 1;
    const struct pass_step *st = explore_step(x);
    snprintf(x->status, sizeof x->status, "change marks (*) %s: %d instruction%s changed by %s",
             x->marks > 0 ? "shown" : "hidden", st ? st->changes.n : 0,
             st && st->changes.n == 1 ? "" : "s", st ? st->name : "the shown step");
    x->status_err = false;
    return R_REDRAW;
}

/* How the status line refers to the change marks of the shown step. */
static const char *explore_marks_note(struct explore *x)
{
    if (explore_marks_shown(x))
        return "marked *";
    return x->marks < 0 ? "marks off; *: show" : "marks off, most boxes changed; *: show";
}

void explore_status_shown(struct explore *x)
{
    const struct pass_step *st = explore_step(x);
    const struct pass_step *base = pass_pipeline_row(&x->pl, PASS_ROW_BASE);
    if (st == NULL)
        return;
    char t[32], what[400];
    explore_fmt_time(x, st->sim.step_time, t, sizeof t);
    if (!x->bucket_on && st->pass == PASS_SEARCH) { /* what the search did, and what it took */
        const struct search_stats *ss = &x->pl.search;
        char cap[48] = "no cap", c[32];
        if (x->pl.search_cap > 0) {
            explore_fmt_cap(x, x->pl.search_cap, c, sizeof c);
            snprintf(cap, sizeof cap, "the %s%s cap", c, x->cfg.unit.enabled ? " M_θ" : "");
        }
        char off[96] = "";
        if (x->offload) /* O, --offload: what offload did */
            snprintf(off, sizeof off, ", %d forward%s offloaded (OF/RL)", x->pl.offloaded,
                     x->pl.offloaded == 1 ? "" : "s");
        snprintf(what, sizeof what,
                 "search%s: step %s (%+.1f%% against base)%s, %ld schedules in %.0f ms under %s: "
                 "%s %s; %d changed (%s)",
                 ss->stopped ? " (stopped by a key: the best so far)" : "", t,
                 100 * (st->sim.step_time / base->sim.step_time - 1), off, ss->evals,
                 x->search_ms, cap,
                 !ss->fits ? "nothing fits; the lowest peak,"
                 : ss->improved ? "found from" : "no faster schedule than",
                 ss->seed_name, st->changes.n, explore_marks_note(x));
    } else if (x->pl.as_given && !x->bucket_on) /* a plan with copies: no passes ran on it */
        snprintf(what, sizeof what, "plan as given, step %s: it offloads (OF/RL), which Mario's "
                 "passes and the search refuse", t);
    else if (x->bucket_on || st == base || base->sim.step_time <= 0)
        snprintf(what, sizeof what, "%s: step %s", x->bucket_on ? "bucket" : st->name, t);
    else if (st->changes.kept_input)
        snprintf(what, sizeof what, "%s: step %s (%+.1f%% against base), nothing changed: %s",
                 st->name, t, 100 * (st->sim.step_time / base->sim.step_time - 1),
                 st->changes.note);
    else
        snprintf(what, sizeof what, "%s: step %s (%+.1f%% against base), %d instruction%s "
                 "changed (%s)", st->name, t,
                 100 * (st->sim.step_time / base->sim.step_time - 1), st->changes.n,
                 st->changes.n == 1 ? "" : "s", explore_marks_note(x));
    snprintf(x->status, sizeof x->status, "%s" EXPLORE_HINTS, what);
    x->status_err = false;
    explore_status_oom(x, true);
}

int explore_oom(const struct explore *x, int *worst_dev)
{
    const struct pass_step *st = explore_step(x);
    int n = 0, worst = -1;
    if (st == NULL || !(st->sim.cap > 0))
        return 0;
    for (int d = 0; d < st->sim.devices; d++)
        if (st->sim.dev[d].peak_mem > st->sim.cap) {
            n++;
            if (worst < 0 || st->sim.dev[d].peak_mem > st->sim.dev[worst].peak_mem)
                worst = d;
        }
    if (worst_dev != NULL)
        *worst_dev = worst;
    return n;
}

void explore_status_oom(struct explore *x, bool first)
{
    int d, n = explore_oom(x, &d);
    if (n == 0)
        return;
    const struct sim_result *r = &explore_step(x)->sim;
    char peak[32], cap[32], oom[160];
    explore_fmt_peak(x, r->dev[d].peak_mem, r->cap, peak, sizeof peak);
    explore_fmt_cap(x, r->cap, cap, sizeof cap);
    snprintf(oom, sizeof oom, "OOM: %d of %d device%s over the %s cap (dev %d at %s)", n,
             r->devices, r->devices == 1 ? "" : "s", cap, d, peak);
    char was[sizeof x->status];
    snprintf(was, sizeof was, "%s", x->status);
    if (was[0] == '\0')
        snprintf(x->status, sizeof x->status, "%s", oom);
    else if (first)
        snprintf(x->status, sizeof x->status, "%s; %.1000s", oom, was);
    else
        snprintf(x->status, sizeof x->status, "%.1000s; %s", was, oom);
    x->status_err = true;
}

static void explore_refresh_shown(struct explore *x, bool keep_layouts);

int explore_set_row(struct explore *x, int row)
{
    if (row < 0 || row >= explore_rows(x))
        return MT_EINVAL;
    x->row_wanted = -1; /* the user's choice from now on */
    if (x->build != NULL && (row == PASS_ROW_SEARCH || row == PASS_ROW_PREPOSE ||
                             pass_pipeline_row(&x->pl, (enum pass_row)row) == NULL)) {
        explore_build_wait_row(x, row); /* not made yet: says so, shows it when it is */
        return MT_EINVAL;
    }
    if (row != PASS_ROW_SEARCH && pass_pipeline_row(&x->pl, (enum pass_row)row) == NULL) {
        explore_build_wait_row(x, row); /* the passes were stopped */
        return MT_EINVAL;
    }
    if (row == PASS_ROW_SEARCH && !x->pl.searched) {
        struct mt_err e = {0};
        if (explore_search(x, &e) != MT_OK) {
            snprintf(x->status, sizeof x->status, "search: %s", e.msg);
            x->status_err = true;
            return e.code ? e.code : MT_EINVAL;
        }
    }
    x->row = row;
    x->bucket_on = false;
    explore_refresh_shown(x, true);
    return MT_OK;
}

/* explore_refresh; keep_layouts: only the step shown changed, the plans are those of before,
 * so the Gantt's layouts of the steps shown before stay (tui/view_gantt.c keeps a few). */
static void explore_refresh_shown(struct explore *x, bool keep_layouts)
{
    x->shown_gen++; /* what frames kept of the shown step is of another plan now */
    if (keep_layouts)
        view_gantt_cache_forget_measured(x); /* aligned to the step shown before */
    else
        view_gantt_cache_free(x); /* at once, not beside the next one: ~100 MB at 4,096 x 32 */
    explore_bound_update(x);
    explore_clamp_cursor(x);
    if (x->critical)
        explore_critical_path(x);
    explore_realign(x);
}

void explore_refresh(struct explore *x)
{
    explore_refresh_shown(x, false);
}

void explore_toggle_critical(struct explore *x)
{
    x->critical = !x->critical;
    if (x->critical)
        explore_critical_path(x);
}

static void explore_tune_status(struct explore *x);

int explore_tune_compute(const struct config *cfg, bool search, bool offload,
                         tune_progress_fn progress, void *ctx, struct tune_result *r,
                         struct mt_err *e)
{
    struct tune_opts o;
    tune_opts_default(&o);
    if (search) /* as `tune --search [--offload]` */
        o.search = offload ? tune_optimize_search_offload : tune_optimize_search;
    o.offload = search && offload;
    o.progress = progress;
    o.progress_ctx = ctx;
    if (o.min_pp > cfg->num_device)
        o.min_pp = 1;
    int rc = tune_grid_search(cfg, &o, r, e);
    if (rc != MT_OK)
        err_wrap(e, "tune");
    return rc;
}

void explore_tune_show(struct explore *x, struct tune_result *r, bool search, unsigned gen,
                       bool open)
{
    if (x->have_tune)
        tune_result_fini(&x->tune);
    x->tune = *r;
    memset(r, 0, sizeof *r);
    x->have_tune = true;
    x->tune_gen = gen;
    x->tune_search = search && !x->tune.cancelled; /* a stopped S may run again */
    x->tune_offload = search && x->offload;
    x->tune_sel = 0;
    x->tune_scheme = 0; /* a new result shows every scheme (f filters) */
    x->status_err = false;
    if (open) {
        x->mode = MODE_TUNE;
        explore_tune_status(x);
    } else { /* stopped by Esc: it finished what was in flight while the user went on */
        snprintf(x->status, sizeof x->status,
                 "tuner stopped: %d of %d candidates ran and are kept; t shows them",
                 x->tune.done, x->tune.n);
    }
}

void explore_run_tuner(struct explore *x, bool search, tune_progress_fn progress, void *ctx)
{
    struct tune_result r;
    struct mt_err e = {0};
    if (explore_tune_compute(&x->cfg, search, x->offload, progress, ctx, &r, &e) != MT_OK) {
        snprintf(x->status, sizeof x->status, "%s", e.msg);
        x->status_err = true;
        return;
    }
    explore_tune_show(x, &r, search, x->cfg_gen, true);
}

/* The tuner view's status line: what ran (all, or what ran before Esc) and its keys. */
static void explore_tune_status(struct explore *x)
{
    const struct tune_result *r = &x->tune;
    char what[160];
    if (r->cancelled)
        snprintf(what, sizeof what,
                 "tuner stopped by Esc: %d of %d candidates ran and are ranked, the rest not run",
                 r->done, r->n);
    else
        snprintf(what, sizeof what, "tuner: %d candidates%s", r->n,
                 !x->tune_search ? ""
                 : x->tune_offload
                     ? " (checkpointing off, Mario's passes, the search with offload)"
                     : " (checkpointing off, Mario's passes, the search)");
    snprintf(x->status, sizeof x->status, "%s; up/down: select   Enter: load   %s%sEsc: back",
             what, r->cancelled ? "t: run again   " : "",
             x->tune_search ? ""
             : x->offload   ? "S: add the search with offload (seconds)   "
                            : "S: add the search (seconds)   ");
}

bool explore_tune_reopen(struct explore *x)
{
    if (!x->have_tune || x->tune_gen != x->cfg_gen || (x->tune.cancelled && x->mode == MODE_TUNE))
        return false;
    x->mode = MODE_TUNE;
    x->status_err = false;
    explore_tune_status(x);
    return true;
}

/* Candidates ranked as the CLI ranks them (sim/tune/tune.h tune_rank), the scheme filter (f)
 * applied: returns how many are shown. */
int explore_tune_rank(const struct explore *x, int *order)
{
    int n = tune_rank(&x->tune, order), shown = 0;
    for (int i = 0; i < n; i++)
        if (x->tune_scheme == 0 || (int)x->tune.cand[order[i]].scheme == x->tune_scheme - 1)
            order[shown++] = order[i];
    return shown;
}

void explore_tune_load(struct explore *x)
{
    if (!x->have_tune || x->tune.n == 0)
        return;
    int *order = xmalloc((size_t)x->tune.n * sizeof *order);
    if (explore_tune_rank(x, order) <= x->tune_sel) {
        free(order);
        return;
    }
    const struct tune_candidate *k = &x->tune.cand[order[x->tune_sel]];
    free(order);
    if (k->status != TUNE_OK) {
        snprintf(x->status, sizeof x->status, "that candidate does not fit: %s",
                 k->status == TUNE_OOM ? "out of memory" : k->why);
        x->status_err = true;
        return;
    }
    struct config c;
    tune_candidate_config(&x->cfg, k, &c);
    char label[48];
    tune_label(k, label, sizeof label);
    struct mt_err e = {0};
    x->mode = MODE_GANTT;
    /* the row the candidate was ranked by; set first, so that the build searches only for a
     * search candidate */
    int was = x->row, row = k->search ? PASS_ROW_SEARCH : k->ckpt ? PASS_ROW_PREPOSE
                                                                  : PASS_ROW_BASE;
    x->row = row;
    if (explore_apply(x, &c, &e) != MT_OK) {
        x->row = was;
        snprintf(x->status, sizeof x->status, "tuner row %s: %s", label, e.msg);
        x->status_err = true;
        return;
    }
    if (x->build == NULL && explore_set_row(x, row) != MT_OK)
        return;
    if (x->build != NULL && row != x->row)
        x->row_wanted = row; /* shown once its passes have made it */
    snprintf(x->status, sizeof x->status, "loaded %s (%s), shown at %s", label,
             k->search ? "the search's schedule"
             : k->ckpt ? "Mario's checkpointing"
                       : "no checkpointing",
             row == PASS_ROW_SEARCH ? "search" : pass_row_name((enum pass_row)x->row));
    x->status_err = false;
}

static bool explore_ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcasecmp(s + n - m, suffix) == 0;
}

int explore_export(struct explore *x, const char *path, struct mt_err *e)
{
    const struct pass_step *st = explore_step(x);
    if (st == NULL)
        return err_set(e, MT_EINVAL, "nothing to export");
    if (explore_ends_with(path, ".trace.json"))
        return chrome_write_sim(path, st->plan, &st->sim, e);
    if (explore_ends_with(path, ".json"))
        return plan_save(st->plan, path, e);
    bool svg = explore_ends_with(path, ".svg"), pdf = explore_ends_with(path, ".pdf");
    bool png = explore_ends_with(path, ".png");
    if (!svg && !pdf && !png)
        return err_set(e, MT_EINVAL,
                       "%s: unknown format (use .json, .trace.json, .svg, .pdf or .png)", path);
    struct layout_panel panel = {st->name, st->plan, &st->sim, NULL};
    struct layout_opts o = {.width = LAYOUT_DEFAULT_WIDTH, .memory = true};
    struct layout *l = NULL;
    TRY(layout_build(&panel, 1, &o, &l, e));
    int rc;
    if (svg)
        rc = paint_svg_file(l, path, e);
    else if (png)
        rc = paint_cairo_png(l, path, e);
    else {
        const struct layout *pages[1] = {l};
        rc = paint_cairo_pdf(pages, 1, path, e);
    }
    layout_free(l);
    return rc;
}
