/* tui/explore_build.c: an edit's build (issue 27 items 1 and 2: edits answer fast, nothing
 * freezes). On a thread of its own (tui/explore_wait.c): the config's plan, its validation
 * and simulation, the base step, which the edit waits for (the status line says so, Esc stops
 * it and the plan shown stays); then, the base shown, the same thread goes on behind it with
 * the lower bound of its work, Mario's passes and, when the search step was shown, the search.
 * The pass bar fills in as each step arrives (explore_build_poll: x->pl mirrors the steps the
 * thread has made, which it never changes or frees while they are shown); the status line says
 * which pass runs; Esc stops the passes and keeps the steps made; a new edit stops them and
 * starts over from its config. Headless (no tick) all of it runs before the edit returns. */
#include <config.h>
#include "tui/explore.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim/core/bound.h"
#include "sim/plan/plan.h"
#include "sim/plan/validate.h"
#include "sim/schemes/scheme.h"
#include "sim/search/search.h"
#include "util/err.h"
#include "util/xalloc.h"

struct explore_build {
    struct config cfg;
    const struct plan *loaded; /* built in place of the config's scheme when given */
    int rc;                    /* the build's: MT_EINVAL until it ran */
    struct mt_err e;
    struct pass_pipeline pl;    /* the thread's; x->pl mirrors its steps [0, published) */
    _Atomic(const char *) next; /* the pass about to run (NULL: the plan and its validation) */
    atomic_int round, steps;
    atomic_int published;    /* steps made that the keys' thread may show */
    atomic_bool stop;        /* Esc or a new edit: the passes stop at the next one */
    atomic_bool want_search; /* the search step after the passes (it was shown, or n to it) */
    bool offload;            /* its search may offload (x->offload when the edit was made) */
    atomic_bool bounding, searching;
    atomic_long search_done, search_budget;
    struct bound_result bound; /* have_bound written before bound_ready */
    bool have_bound;
    atomic_bool bound_ready;
    bool bound_tried;
    double search_ms;
    double cpu_base_ms, cpu_ms; /* the thread's CPU time: base made, and all of it */
    /* the keys' thread's */
    struct explore_job *job; /* the thread; NULL once joined */
    int keep;                /* Esc: the steps kept (those shown then); -1 all */
    double t0_ms;
    pthread_t keys;              /* the keys' thread, which made it */
};

static double build_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

static double build_thread_cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

/* The lower bound of the base's work, once (sim/core/bound.h: 0.25 s at 4,096 micro-batches). */
static void build_bound(struct explore_build *b)
{
    if (b->bound_tried || b->pl.n < 1 || atomic_load(&b->stop))
        return;
    b->bound_tried = true;
    atomic_store(&b->bounding, true);
    struct mt_err be = {0};
    b->have_bound = bound_plan(b->pl.step[0].plan, &b->bound, &be) == MT_OK;
    atomic_store(&b->bounding, false);
    atomic_store(&b->bound_ready, true);
}

/* Before each pass: the steps made so far are shown (published), then, after the base, its
 * bound; false (stop) after Esc or a new edit. */
static bool build_watch(void *ctx, const struct pass_pipeline *pl, const char *next, int round)
{
    struct explore_build *b = ctx;
    atomic_store(&b->round, round);
    atomic_store(&b->steps, pl->n);
    atomic_store(&b->next, next);
    if (pl->n == 1)
        b->cpu_base_ms = build_thread_cpu_ms();
    atomic_store_explicit(&b->published, pl->n, memory_order_release);
    if (pl->n == 1 && !pthread_equal(pthread_self(), b->keys)) /* the rest yields to the keys */
        explore_background_thread();
    build_bound(b);
    return !atomic_load(&b->stop);
}

static bool build_search_progress(void *ctx, long done, long budget)
{
    struct explore_build *b = ctx;
    atomic_store(&b->search_done, done);
    atomic_store(&b->search_budget, budget);
    return !atomic_load(&b->stop);
}

/* The search step after the passes, as `optimize --search` makes it (explore_search). */
static void build_search(struct explore_build *b)
{
    const struct plan *base = b->pl.step[0].plan;
    if (config_scheme_async(plan_geom(base)->scheme))
        return;
    struct search_opts so;
    search_opts_default(&so, plan_config(base));
    so.offload = b->offload; /* --offload, O: as explore_search */
    so.progress = build_search_progress;
    so.progress_ctx = b;
    atomic_store(&b->searching, true);
    double t0 = build_now_ms();
    struct mt_err se = {0};
    (void)pass_pipeline_search(&b->pl, &so, &se); /* on failure the row falls back */
    b->search_ms = build_now_ms() - t0;
    atomic_store(&b->searching, false);
}

static void build_run(void *arg)
{
    struct explore_build *b = arg;
    double cpu0 = build_thread_cpu_ms();
    struct plan *base = NULL;
    b->rc = MT_OK;
    if (b->loaded == NULL) /* the pipeline validates it as it simulates it */
        b->rc = scheme_build(&b->cfg, &base, &b->e);
    else if ((b->rc = validate_plan_input(b->loaded, &b->e)) == MT_OK) /* a saved plan: its words */
        base = plan_clone(b->loaded);
    struct pass_watch w = {build_watch, b};
    if (b->rc == MT_OK && bound_plan_offloads(base)) { /* the passes refuse copies: as given */
        b->rc = pass_pipeline_as_given(base, &b->pl, &b->e);
        plan_free(base);
    } else if (b->rc == MT_OK) { /* takes base; a failed pass leaves the steps shown before it */
        b->rc = pass_pipeline_run_shown(base, &w, &b->pl, &b->e);
    } else {
        plan_free(base);
    }
    build_bound(b); /* when no pass ran */
    if (b->rc == MT_OK && !b->pl.stopped && atomic_load(&b->want_search) && !atomic_load(&b->stop))
        build_search(b);
    if (b->cpu_base_ms == 0)
        b->cpu_base_ms = build_thread_cpu_ms();
    b->cpu_base_ms -= cpu0;
    b->cpu_ms = build_thread_cpu_ms() - cpu0;
}

static void build_stop(void *arg)
{
    atomic_store(&((struct explore_build *)arg)->stop, true);
}

static bool build_base_ready(void *arg)
{
    return atomic_load(&((struct explore_build *)arg)->published) > 0;
}

static void build_describe(void *arg, char *buf, size_t n)
{
    struct explore_build *b = arg;
    const char *next = atomic_load(&b->next);
    int round = atomic_load(&b->round), steps = atomic_load(&b->steps);
    if (next == NULL)
        snprintf(buf, n, "building: the scheme's plan, its validation and simulation");
    else if (round > 0)
        snprintf(buf, n, "building: Mario's passes: %s, round %d (%d steps done)", next, round,
                 steps);
    else
        snprintf(buf, n, "building: Mario's passes: %s (%d step%s done)", next, steps,
                 steps == 1 ? "" : "s");
}

/* Frees a build nobody took: stopped, replaced by a new edit, or never run. */
static void build_drop(void *arg)
{
    struct explore_build *b = arg;
    pass_pipeline_fini(&b->pl);
    free(b);
}

/* The steps [keep, n) of pl freed: made after Esc, never shown. */
static void build_truncate(struct pass_pipeline *pl, int keep)
{
    if (keep >= pl->n)
        return;
    struct pass_pipeline extra;
    memset(&extra, 0, sizeof extra);
    extra.n = pl->n - keep;
    memcpy(extra.step, pl->step + keep, (size_t)extra.n * sizeof extra.step[0]);
    pass_pipeline_fini(&extra);
    pl->n = keep;
    pl->stopped = true;
    pl->searched = false; /* the search is the last step: not kept */
}

/* What x->pl shows of a build that goes on: a stopped pipeline of the steps made so far
 * (pass_pipeline_row then finds only those). Not owned. */
static void build_mirror(struct explore *x, struct explore_build *b)
{
    int n = atomic_load_explicit(&b->published, memory_order_acquire);
    if (b->keep >= 0 && n > b->keep)
        n = b->keep;
    for (int i = x->pl.n; i < n; i++)
        x->pl.step[i] = b->pl.step[i];
    if (n > x->pl.n)
        x->pl.n = n;
    x->pl.stopped = true;
}

/* The rows shown only once the build has ended: prepose after its rounds, the search. */
static bool build_row_final(int row)
{
    return row == PASS_ROW_PREPOSE || row == PASS_ROW_SEARCH;
}

/* The row the user asked for before it was made, shown once it is. */
static void build_show_wanted(struct explore *x)
{
    int row = x->row_wanted;
    if (row < 0 || x->bucket_on || (x->build != NULL && build_row_final(row)))
        return;
    if (row >= explore_rows(x) || pass_pipeline_row(&x->pl, (enum pass_row)row) == NULL) {
        if (x->build == NULL)
            x->row_wanted = -1; /* it will not come */
        return;
    }
    x->row_wanted = -1;
    if (row != x->row && explore_set_row(x, row) == MT_OK && !x->status_err)
        explore_status_shown(x);
}

/* The base's bound once the build has made it, unless another plan's is shown (a bucket's). */
static bool build_take_bound(struct explore *x, struct explore_build *b)
{
    if (x->have_bound || !atomic_load(&b->bound_ready) || !b->have_bound || /* base made */
        x->bound_of != b->pl.step[0].plan)
        return false;
    x->bound = b->bound;
    x->have_bound = true;
    explore_bound_offload(x);
    return true;
}

/* The build has ended: its pipeline is x->pl's, owned (what came after Esc dropped). */
static void build_adopt_end(struct explore *x, struct explore_build *b)
{
    build_truncate(&b->pl, b->keep >= 0 ? b->keep : b->pl.n);
    x->pl = b->pl;
    x->search_ms = b->search_ms;
    x->build_cpu_base_ms = b->cpu_base_ms;
    x->build_cpu_ms = b->cpu_ms;
    build_take_bound(x, b);
    if (b->rc != MT_OK && b->keep < 0) {
        snprintf(x->status, sizeof x->status,
                 "passes stopped: %.900s; the %d step%s made before are shown", b->e.msg, x->pl.n,
                 x->pl.n == 1 ? "" : "s");
        x->status_err = true;
    }
    x->build = NULL;
    free(b);
}

void explore_build_release(struct explore *x)
{
    struct explore_build *b = x->build;
    if (b == NULL) {
        if (x->have_pl)
            pass_pipeline_fini(&x->pl);
        x->have_pl = false;
        return;
    }
    atomic_store(&b->stop, true);
    explore_job_orphan(x, b->job); /* dropped, its steps with it, once it has ended */
    x->build = NULL;
    memset(&x->pl, 0, sizeof x->pl);
    x->have_pl = false;
}

void explore_build_fini(struct explore *x)
{
    explore_build_release(x);
    explore_wait_reap(x);
}

int explore_build(struct explore *x, const struct config *cfg, struct plan *loaded,
                  struct mt_err *e)
{
    explore_build_stop(x);    /* a new config: the passes of the last stop (it stays shown) */
    view_gantt_cache_free(x); /* the shown plan's layout is not kept through the build: memory */
    struct explore_build *b = xcalloc(1, sizeof *b);
    b->cfg = *cfg;
    b->loaded = loaded;
    b->rc = MT_EINVAL; /* until it ran */
    b->keep = -1;
    b->t0_ms = build_now_ms();
    b->keys = pthread_self();
    atomic_init(&b->next, NULL);
    atomic_init(&b->round, 0);
    atomic_init(&b->steps, 0);
    atomic_init(&b->published, 0);
    atomic_init(&b->stop, false);
    /* behind the base, the search too; headless, explore_search after the build (as before) */
    atomic_init(&b->want_search, x->row == PASS_ROW_SEARCH && x->tick != NULL);
    b->offload = x->offload;
    atomic_init(&b->bounding, false);
    atomic_init(&b->searching, false);
    atomic_init(&b->search_done, 0);
    atomic_init(&b->search_budget, 0);
    atomic_init(&b->bound_ready, false);
    x->wait_stopped = false;
    struct explore_job *job = NULL;
    if (!explore_wait_ready(x, build_run, build_drop, build_stop, build_describe, build_base_ready,
                            b, "building: the scheme's plan, its validation and simulation",
                            &job)) {
        x->wait_stopped = true;
        return err_set(e, MT_EINVAL, "stopped by Esc: the plan shown stays");
    }
    if (job != NULL && explore_job_ended(job)) {
        explore_job_join(job);
        job = NULL;
    }
    b->job = job;
    /* A failure before any step, or headless (as before: the edit is refused whole). */
    if (job == NULL && b->rc != MT_OK && (x->tick == NULL || b->pl.n == 0)) {
        int rc = b->rc;
        *e = b->e;
        build_drop(b);
        return rc;
    }
    int want = x->row;
    explore_build_release(x); /* the plan shown before (a build's: dropped once it ends) */
    x->have_pl = true;
    x->row_wanted = -1;
    if (job != NULL) { /* the base now, the passes behind it */
        build_mirror(x, b);
        x->build = b;
        x->row = PASS_ROW_BASE;
        if (want != PASS_ROW_BASE)
            x->row_wanted = want;
        x->have_bound = false;
        x->bound_of = x->pl.step[0].plan; /* the build makes it (explore_build_poll) */
    } else {
        bool bound = atomic_load(&b->bound_ready) && b->have_bound;
        x->bound = b->bound;
        x->have_bound = bound;
        x->bound_of = bound ? b->pl.step[0].plan : NULL;
        explore_bound_offload(x);
        build_adopt_end(x, b);
        struct mt_err se = {0};
        if (want == PASS_ROW_SEARCH && !x->pl.searched && explore_search(x, &se) != MT_OK)
            x->row = PASS_ROW_PREPOSE;
        if (x->row >= explore_rows(x) || pass_pipeline_row(&x->pl, (enum pass_row)x->row) == NULL)
            x->row = PASS_ROW_BASE;
    }
    explore_buckets_fini(x); /* made for the previous config */
    x->cfg = *cfg;
    x->cfg_gen++;
    explore_fit(x);
    explore_refresh(x);
    return MT_OK;
}

int explore_build_poll(struct explore *x)
{
    explore_wait_reap_ended(x);
    struct explore_build *b = x->build;
    if (b == NULL)
        return R_NONE;
    int r = R_NONE, n = x->pl.n;
    bool ended = explore_job_ended(b->job);
    build_mirror(x, b);
    r |= x->pl.n > n ? R_REDRAW : R_NONE;
    r |= build_take_bound(x, b) ? R_REDRAW : R_NONE;
    if (ended) {
        explore_job_join(b->job);
        b->job = NULL;
        build_adopt_end(x, b);
        r |= R_REDRAW;
    }
    build_show_wanted(x);
    if (r == R_NONE && x->build != NULL && x->build->keep < 0)
        r = R_STATUS; /* the status line's clock */
    return r;
}

int explore_build_stop(struct explore *x)
{
    struct explore_build *b = x->build;
    if (b == NULL || b->keep >= 0)
        return R_NONE;
    atomic_store(&b->stop, true);
    build_mirror(x, b);
    b->keep = x->pl.n;
    x->row_wanted = -1;
    char made[160] = "";
    size_t len = 0;
    for (int i = 0; i < x->pl.n && len < sizeof made; i++)
        len += (size_t)snprintf(made + len, sizeof made - len, "%s%s", i ? ", " : "",
                                x->pl.step[i].name);
    snprintf(x->status, sizeof x->status,
             "passes stopped by Esc: %s kept, the rest not built (an edit builds them again)",
             made);
    x->status_err = false;
    return R_REDRAW;
}

int explore_build_wait_row(struct explore *x, int row)
{
    struct explore_build *b = x->build;
    const char *name = row == PASS_ROW_SEARCH ? "search" : pass_row_name((enum pass_row)row);
    if (b == NULL || b->keep >= 0) {
        snprintf(x->status, sizeof x->status,
                 "%s was not built: the passes were stopped (an edit builds them again)", name);
        x->status_err = true;
        return R_REDRAW;
    }
    if (row == PASS_ROW_SEARCH)
        atomic_store(&b->want_search, true);
    x->row_wanted = row;
    char note[200];
    explore_build_note(x, note, sizeof note);
    snprintf(x->status, sizeof x->status, "%s is not built yet: shown when it is (%s)", name, note);
    x->status_err = false;
    return R_REDRAW;
}

bool explore_build_note(const struct explore *x, char *buf, size_t n)
{
    const struct explore_build *b = x->build;
    if (b == NULL || b->keep >= 0)
        return false;
    struct explore_build *m = (struct explore_build *)b; /* atomics: loads only */
    double s = (build_now_ms() - b->t0_ms) / 1e3;
    const char *next = atomic_load(&m->next);
    int round = atomic_load(&m->round), steps = atomic_load(&m->published);
    if (atomic_load(&m->searching)) {
        long done = atomic_load(&m->search_done), budget = atomic_load(&m->search_budget);
        snprintf(buf, n, "search: %ld of %ld schedules, %.1f s", done, budget, s);
        return true;
    }
    if (atomic_load(&m->bounding)) {
        snprintf(buf, n, "passes 0/%d: the lower bound first, %.1f s", PASS__COUNT, s);
        return true;
    }
    int k = 1;
    for (int id = 0; id < PASS__COUNT; id++)
        if (next != NULL && strcmp(pass_get((enum pass_id)id)->name, next) == 0)
            k = id + 1;
    char r[24] = "";
    if (round > 1)
        snprintf(r, sizeof r, ", round %d", round);
    snprintf(buf, n, "passes %d/%d: %s%s (%d step%s made), %.1f s", k, PASS__COUNT,
             next ? next : "ckpt", r, steps, steps == 1 ? "" : "s", s);
    return true;
}

bool explore_build_running(const struct explore *x)
{
    return x->build != NULL;
}
