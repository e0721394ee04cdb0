/* tests/unit/test_explore.c: the explorer's screen as a pure function of (size, state): for
 * many terminal sizes and every scheme, the frame keeps its parts in place (title on the
 * first row, status on the last, one row per lane that fits, memory bars inside the width),
 * Gantt boxes sit where the simulated times put them, and below 80x24 only the "too small"
 * message is drawn. Keys are checked through their effect on the state; the search's progress
 * bar on the status line while it runs, and a stop from it. */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model/config.h"
#include "model/presets.h"
#include "model/scheme_registry.h"
#include "render/paint_cells.h"
#include "sim/plan/plan.h"
#include "sim/core/simulate.h"
#include "sim/schemes/scheme.h"
#include "tests/check.h"
#include "tui/explore.h"
#include "util/err.h"

static int row_text(const struct cells *g, int y, char *buf, int n)
{
    int k = 0;
    for (int x = 0; x < g->w && k + 1 < n; x++) {
        uint32_t ch = g->c[(size_t)y * g->w + x].ch;
        buf[k++] = ch < 128 ? (char)ch : '#';
    }
    buf[k] = '\0';
    return k;
}

/* Every scheme of the explorer's cycle (the registry's), at every size. */
static void test_sizes(void)
{
    for (int s = 0; s < SCHEME__COUNT; s++) {
        const struct scheme_record *rec = scheme_registry_get((enum scheme_id)s);
        if (!rec->in_cycle)
            continue;
        struct config c;
        config_default(&c);
        c.scheme = rec->id;
        c.num_device = 4;
        c.num_microbatches = 8;
        c.unit = (struct unit_costs){true, 1, 2, 1, 0, 1, 0};
        c.iterations = rec->async ? 3 : 1; /* iteration marks, staleness */
        struct explore x;
        struct mt_err e = {0};
        CHECK_EQ_INT(explore_init(&x, &c, NULL, s % 2 == 0, &e), MT_OK);
        if (e.code != MT_OK) {
            fprintf(stderr, "%s: %s\n", rec->name, e.msg);
            continue;
        }
        /* a lane per part: Chimera's two pipelines, or the stages a device holds */
        int lanes = explore_lanes(&x);
        CHECK_EQ_INT(lanes, 4 * (rec->replicas > 1 ? rec->replicas : config_stages_per_device(&c)));
        for (int w = 40; w <= 240; w += 13)
            for (int h = 10; h <= 70; h += 7) {
                struct cells *g = cells_new(w, h, s % 2 == 0);
                explore_draw(&x, g);
                char line[512];
                if (w < EXPLORE_MIN_W || h < EXPLORE_MIN_H) {
                    int found = 0;
                    for (int y = 0; y < h; y++) {
                        row_text(g, y, line, sizeof line);
                        found += strstr(line, "terminal too small") != NULL;
                    }
                    CHECK_EQ_INT(found, 1);
                } else {
                    row_text(g, 0, line, sizeof line);
                    CHECK(strstr(line, "step ") != NULL); /* the step time stays at every width */
                    row_text(g, 1, line, sizeof line);
                    CHECK(strstr(line, "base") != NULL && strstr(line, "prepose") != NULL);
                    /* Lane labels: one per lane that fits above the axis. */
                    int rows = h - 3 - EXPLORE_BOTTOM - 2, shown = 0;
                    for (int y = 3; y < 3 + rows; y++) {
                        row_text(g, y, line, sizeof line);
                        shown += line[0] == 'd';
                    }
                    CHECK_EQ_INT(shown, lanes < rows ? lanes : rows);
                    row_text(g, h - 1, line, sizeof line);
                    CHECK(strstr(line, "help") != NULL);
                }
                cells_free(g);
            }
        explore_fini(&x);
    }
}

/* A box starts at the cell its simulated start maps to: FW0 of device 1 starts at 1 t. */
static void test_box_position(void)
{
    struct config c;
    config_default(&c);
    c.num_device = 4;
    c.num_microbatches = 4;
    c.unit = (struct unit_costs){true, 1, 2, 1, 0, 1, 0};
    struct explore x;
    struct mt_err e = {0};
    CHECK_EQ_INT(explore_init(&x, &c, NULL, true, &e), MT_OK);
    /* One scale for every pass step: the longest, ckpt's 28 t, over 84 cells = 3 cells per t. */
    int w = 84 + EXPLORE_GUTTER + EXPLORE_MEM_W + 1;
    struct cells *g = cells_new(w, 30, true);
    explore_draw(&x, g);
    CHECK_NEAR(x.tpc, 28.0 / 84, 1e-12);
    /* Device 1's lane (30 rows: 3 rows a lane and a blank one, from row 3 + 4 = 7): idle
     * for t < 1, FW0 from 1 t = cell 3 to 2 t = cell 6. */
    CHECK_EQ_INT(x.lane_h, 4);
    int y = 3 + x.lane_h;
    for (int cx = 0; cx < 3; cx++)
        CHECK(cells_at(g, EXPLORE_GUTTER + cx, y)->bg != PAL_FW);
    for (int cx = 3; cx < 6; cx++)
        CHECK_EQ_INT(cells_at(g, EXPLORE_GUTTER + cx, y)->bg, PAL_FW);
    /* FW1 follows at once (device 1 warms up with two forwards); each label is centred,
     * the micro-batch on the lane's second row. */
    CHECK_EQ_INT(cells_at(g, EXPLORE_GUTTER + 4, y + 1)->ch, '0');
    CHECK_EQ_INT(cells_at(g, EXPLORE_GUTTER + 7, y + 1)->ch, '1');
    cells_free(g);
    explore_fini(&x);
}

static void test_keys(void)
{
    struct config c;
    config_default(&c);
    c.num_device = 4;
    c.num_microbatches = 4;
    c.unit = (struct unit_costs){true, 1, 2, 1, 0, 1, 0};
    struct explore x;
    struct mt_err e = {0};
    CHECK_EQ_INT(explore_init(&x, &c, NULL, true, &e), MT_OK);
    x.w = 120, x.h = 40;
    CHECK_EQ_INT(x.row, 0);
    explore_key(&x, 'n');
    CHECK_EQ_INT(x.row, 1);
    CHECK_NEAR(explore_step(&x)->sim.step_time, 28, 1e-9);
    explore_key(&x, 'p');
    CHECK_NEAR(explore_step(&x)->sim.step_time, 21, 1e-9);
    double tpc = x.tpc;
    explore_key(&x, '+');
    CHECK_NEAR(x.tpc, tpc / 2, 1e-12);
    explore_key(&x, '0');
    CHECK_NEAR(x.tpc, tpc, 1e-12);
    explore_key(&x, 'j');
    CHECK_EQ_INT(x.sel_lane, 1);
    explore_key(&x, 'D');
    CHECK_EQ_INT(plan_geom(explore_step(&x)->plan)->devices, 5);
    CHECK_EQ_INT(explore_key(&x, 'q') & R_QUIT, R_QUIT);
    explore_fini(&x);
}

/* The config being edited is always the one drawn: a refused edit changes nothing (issue 20):
 * 4 devices, 4 micro-batches; m makes 3, which Chimera (X, an even N) refuses; s then steps
 * over X to W, which refuses 3 at pp 4 too, to GPipe. */
static void test_edits_all_or_nothing(void)
{
    struct config c = {0};
    config_default(&c);
    c.num_device = 4;
    c.num_microbatches = 4;
    c.unit = (struct unit_costs){true, 1, 2, 1, 0, 1, 0};
    struct explore x;
    struct mt_err e = {0};
    CHECK_EQ_INT(explore_init(&x, &c, NULL, true, &e), MT_OK);
    x.w = 120, x.h = 40;
    explore_key(&x, 'm');
    CHECK_EQ_INT(config_microbatches(&x.cfg), 3);
    explore_key(&x, 'B'); /* 3 samples cannot be cut in micro-batches of 2 */
    CHECK_EQ_INT(x.cfg.micro_batch_size, 1);
    CHECK(x.status_err);
    explore_key(&x, 's');
    CHECK_EQ_INT(x.cfg.scheme, SCHEME_GPIPE);
    const struct config *drawn = plan_config(explore_step(&x)->plan);
    CHECK_EQ_INT(drawn->scheme, x.cfg.scheme);
    CHECK_EQ_INT(drawn->micro_batch_size, x.cfg.micro_batch_size);
    CHECK_EQ_INT(drawn->num_device, x.cfg.num_device);
    CHECK_EQ_INT(config_microbatches(drawn), 3);
    explore_key(&x, 'd');
    CHECK_EQ_INT(plan_geom(explore_step(&x)->plan)->devices, 3);
    CHECK(!x.status_err);
    explore_fini(&x);
}

/* Numbers in units that fit (tui/view_units.c), against values worked by hand. */
static void test_units(void)
{
    struct config c;
    config_default(&c);
    c.num_device = 2;
    c.num_microbatches = 2;
    struct explore x;
    struct mt_err e = {0};
    CHECK_EQ_INT(explore_init(&x, &c, NULL, true, &e), MT_OK);
    const double gib = 1024.0 * 1024 * 1024, mib = 1024.0 * 1024;
    char b[48];
    explore_fmt_peak(&x, 40.02 * gib, 40 * gib, b, sizeof b);
    CHECK(strcmp(b, "40.02G") == 0);
    explore_fmt_peak(&x, 40 * gib + 1.1 * mib, 40 * gib, b, sizeof b); /* 40.00107 */
    CHECK(strcmp(b, "40.001G") == 0);
    explore_fmt_peak(&x, 39.96 * gib, 40 * gib, b, sizeof b); /* below: 40.0 would read as 40 */
    CHECK(strcmp(b, "39.96G") == 0);
    explore_fmt_peak(&x, 231.8 * gib, 40 * gib, b, sizeof b);
    CHECK(strcmp(b, "231.8G") == 0);
    explore_fmt_cap(&x, 40 * gib, b, sizeof b);
    CHECK(strcmp(b, "40G") == 0);
    explore_fmt_cap(&x, 25.6 * gib, b, sizeof b);
    CHECK(strcmp(b, "25.6G") == 0);
    explore_fmt_bytes(&x, 2.78 * mib, b, sizeof b);
    CHECK(strcmp(b, "2.78M") == 0);
    explore_fmt_bytes(&x, 224 * 1024, b, sizeof b);
    CHECK(strcmp(b, "224.0K") == 0);
    explore_fmt_time(&x, 2578.4, b, sizeof b);
    CHECK(strcmp(b, "2.578ms") == 0);
    explore_fmt_time(&x, 2.268e6, b, sizeof b);
    CHECK(strcmp(b, "2.268s") == 0);
    explore_fmt_time(&x, 2.99e6, b, sizeof b);
    CHECK(strcmp(b, "2.990s") == 0);
    explore_fmt_time(&x, 81.25, b, sizeof b);
    CHECK(strcmp(b, "81.25µs") == 0);
    /* samples/s: two decimals whatever the value (issue 27: 56.43 beside 8.747) */
    explore_fmt_rate(&x, 49650, b, sizeof b);
    CHECK(strcmp(b, "49.65k") == 0);
    explore_fmt_rate(&x, 56.43, b, sizeof b);
    CHECK(strcmp(b, "56.43") == 0);
    explore_fmt_rate(&x, 8.747, b, sizeof b);
    CHECK(strcmp(b, "8.75") == 0);
    explore_fmt_rate(&x, 1234.5, b, sizeof b);
    CHECK(strcmp(b, "1234.50") == 0);
    explore_fmt_rate(&x, 3, b, sizeof b);
    CHECK(strcmp(b, "3.00") == 0);
    x.cfg.unit.enabled = true; /* samples/t: Figure 2's 4 samples in 21 t */
    explore_fmt_rate(&x, 4.0 / 21, b, sizeof b);
    CHECK(strcmp(b, "0.1905") == 0);
    x.cfg.unit.enabled = false;
    explore_fini(&x);
}

/* The bound and the search step (issue 18), on 1F1B with unit costs (F = 1, B = 2): the last
 * device's fill, work and drain, (N + D - 1)(F + B), is 21 t for 4 x 4 and 33 t for 4 x 8. */
static int busy_calls;
static void busy_count(void *ctx, const char *what)
{
    (void)ctx;
    busy_calls += strstr(what, "search") != NULL;
}

static void test_bound_search(void)
{
    struct config c;
    config_default(&c);
    c.num_device = 4;
    c.num_microbatches = 4;
    c.unit = (struct unit_costs){true, 1, 2, 1, 0, 1, 0};
    struct explore x;
    struct mt_err e = {0};
    CHECK_EQ_INT(explore_init(&x, &c, NULL, true, &e), MT_OK);
    x.w = 120, x.h = 40;
    double lb = 0, gap = 0;
    CHECK(explore_bound_shown(&x, &lb, &gap));
    CHECK_NEAR(lb, 21, 1e-9);
    CHECK_NEAR(gap, 0, 1e-9);
    explore_key(&x, 'n'); /* ckpt: 28 t, a third over */
    CHECK(explore_bound_shown(&x, &lb, &gap));
    CHECK_NEAR(explore_step(&x)->sim.step_time, 28, 1e-9);
    CHECK_NEAR(gap, 100.0 / 3, 1e-9);
    CHECK_EQ_INT(explore_rows(&x), PASS_ROW__COUNT + 1);
    explore_fini(&x);

    /* 4 x 8 under 1.05 M_θ: base is over the cap, so its bound is the time part (33 t); the
     * search is run once, when shown, says so first, and is under the cap */
    c.num_microbatches = 8;
    c.memory_per_device = 1.05;
    CHECK_EQ_INT(explore_init(&x, &c, NULL, true, &e), MT_OK);
    x.w = 120, x.h = 40;
    x.busy = busy_count;
    CHECK(explore_step(&x)->sim.oom_device >= 0);
    CHECK(explore_bound_shown(&x, &lb, &gap));
    CHECK_NEAR(lb, 33, 1e-9);
    CHECK(!x.pl.searched);
    for (int i = 0; i < 4; i++)
        explore_key(&x, 'n');
    CHECK(!x.pl.searched);
    CHECK_EQ_INT(busy_calls, 0);
    explore_key(&x, 'n');
    CHECK(x.pl.searched);
    CHECK_EQ_INT(busy_calls, 1);
    CHECK_EQ_INT(x.row, PASS_ROW_SEARCH);
    const struct pass_step *st = explore_step(&x);
    CHECK_EQ_INT(st->pass, PASS_SEARCH);
    CHECK(st->sim.oom_device < 0);
    CHECK(st->sim.step_time <= 38 + 1e-9); /* never slower than the passes (prepose: 38 t) */
    /* nor than the bound under the cap: 36 t, device 2 recomputing 6 of its 8 forwards
     * (tests/unit/test_bound.c, issue 28) */
    CHECK(st->sim.step_time >= 36 - 1e-9);
    CHECK(explore_bound_shown(&x, &lb, &gap));
    CHECK_NEAR(lb, 36, 1e-9);
    CHECK_NEAR(gap, 100 * (st->sim.step_time / 36 - 1), 1e-9);
    explore_key(&x, 'p');
    explore_key(&x, 'n'); /* shown again: not searched again */
    CHECK_EQ_INT(busy_calls, 1);
    explore_key(&x, ']'); /* an edit on the search step searches the new config: 1.3 M_θ */
    CHECK_EQ_INT(busy_calls, 2);
    CHECK_EQ_INT(x.row, PASS_ROW_SEARCH);
    CHECK_NEAR(x.cfg.memory_per_device, 1.3, 1e-12);
    CHECK_NEAR(x.pl.search_cap, 1.3, 1e-12);
    explore_key(&x, 's'); /* X: searched too */
    CHECK_EQ_INT(x.row, PASS_ROW_SEARCH);
    explore_fini(&x);

    /* Async: no search step; n stays on prepose */
    c.scheme = SCHEME_ASYNC;
    c.memory_per_device = 0;
    CHECK_EQ_INT(explore_init(&x, &c, NULL, true, &e), MT_OK);
    x.w = 120, x.h = 40;
    CHECK_EQ_INT(explore_rows(&x), PASS_ROW__COUNT);
    for (int i = 0; i < 6; i++)
        explore_key(&x, 'n');
    CHECK_EQ_INT(x.row, PASS_ROW_PREPOSE);
    CHECK(!x.pl.searched);
    CHECK(x.status_err);
    explore_fini(&x);
}

/* The search's progress in the explorer: while it runs the frame's status line is a bar with
 * the share done and how to stop it (what tui/screen.c redraws from tick); a tick that says stop
 * ends the search early with the best so far, under the cap and never slower than the passes,
 * and the status says it was stopped. DualPipeV 2 x 5 at 1.05 M_θ: a small case, so its
 * default budget is large (tenths of a second). */
struct tick_log {
    struct explore *x;
    struct cells *g;
    int calls, bars, stop_at;
    long last_done;
    bool backwards;
};

static bool tick_draw(void *ctx)
{
    struct tick_log *t = ctx;
    char line[512];
    explore_draw(t->x, t->g);
    row_text(t->g, t->g->h - 1, line, sizeof line);
    t->bars += strncmp(line, "search [", 8) == 0 && strstr(line, "% ") != NULL &&
               strstr(line, " schedules   Esc: stop") != NULL;
    t->backwards = t->backwards || t->x->search_done < t->last_done;
    t->last_done = t->x->search_done;
    return ++t->calls != t->stop_at;
}

static void test_search_progress(void)
{
    struct config c;
    config_default(&c);
    c.scheme = SCHEME_DUALPIPEV;
    c.num_device = 2;
    c.num_microbatches = 5;
    c.memory_per_device = 1.05;
    c.unit = (struct unit_costs){true, 1, 2, 1, 0, 1, 0};
    for (int k = 0; k < 2; k++) {
        struct explore x;
        struct mt_err e = {0};
        CHECK_EQ_INT(explore_init(&x, &c, NULL, false, &e), MT_OK);
        struct tick_log t = {&x, cells_new(120, 40, false), 0, 0, k == 1 ? 3 : 0, 0, false};
        x.tick = tick_draw;
        x.busy_ctx = &t;
        x.tick_every_ms = 0;
        x.w = 120, x.h = 40;
        for (int i = 0; i < 5; i++)
            explore_key(&x, 'n');
        CHECK(x.pl.searched && !x.searching);
        CHECK(t.calls >= 3 && t.bars == t.calls && !t.backwards);
        const struct pass_step *st = explore_step(&x);
        CHECK_EQ_INT(st->pass, PASS_SEARCH);
        CHECK(st->sim.oom_device < 0);
        CHECK(st->sim.step_time <= pass_pipeline_row(&x.pl, PASS_ROW_PREPOSE)->sim.step_time);
        char line[512];
        explore_draw(&x, t.g);
        row_text(t.g, 39, line, sizeof line);
        if (k == 0) { /* ran to its budget */
            CHECK(!x.pl.search.stopped);
            CHECK(strncmp(line, "search: step ", 13) == 0);
        } else { /* stopped at the third tick */
            CHECK(x.pl.search.stopped && t.calls == 3);
            CHECK(strncmp(line, "search (stopped by a key: the best so far): step ", 49) == 0);
        }
        cells_free(t.g);
        explore_fini(&x);
    }
}

/* The help's scheme list is the `s` cycle, in the order s goes through it (both ask the
 * registry: this holds them to each other), and v/V's refusal names the schemes whose chunks
 * it changes, W and ZB-W. */
static void test_help_schemes(void)
{
    struct config c;
    config_default(&c);
    c.num_device = 4;
    c.num_microbatches = 8;
    c.unit = (struct unit_costs){true, 1, 2, 1, 0, 1, 0};
    struct explore x;
    struct mt_err e = {0};
    CHECK_EQ_INT(explore_init(&x, &c, NULL, true, &e), MT_OK);
    char cycle[512];
    int len = snprintf(cycle, sizeof cycle, "scheme: %s", config_scheme_name(x.cfg.scheme));
    for (int k = 0; k < SCHEME__COUNT; k++) {
        explore_key(&x, 's');
        if (x.cfg.scheme == c.scheme)
            break;
        len += snprintf(cycle + len, sizeof cycle - (size_t)len, " %s",
                        config_scheme_name(x.cfg.scheme));
    }
    CHECK_EQ_INT(x.cfg.scheme, c.scheme); /* round the cycle and back */
    CHECK(strstr(cycle, " X W GPipe ") != NULL); /* the first ones, as the registry lists them */
    struct cells *g = cells_new(240, 60, true);
    explore_key(&x, '?');
    explore_draw(&x, g);
    int found = 0;
    for (int y = 0; y < g->h; y++) {
        char line[512];
        row_text(g, y, line, sizeof line);
        found += strstr(line, cycle) != NULL;
    }
    CHECK_EQ_INT(found, 1);
    explore_key(&x, ' '); /* any key leaves the help */
    CHECK_EQ_INT(x.mode, MODE_GANTT);
    explore_key(&x, 'v');
    CHECK_STR_CONTAINS(x.status, "(W and ZB-W take 2 to");
    cells_free(g);
    explore_fini(&x);
}

/* What frames keep of the shown step (its layout, its boxes; the layouts of the steps shown
 * before it) is never stale: after every key of n p m M + 0 (m and M: a new pipeline in the
 * same step slots; n and p back and forth: a kept layout shown again), every row but the
 * status line is the frame of an explorer opened on that config and shown that step and
 * window. */
static void test_frames_kept(void)
{
    struct config c;
    config_default(&c);
    c.scheme = SCHEME_W;
    c.num_device = 4;
    c.num_microbatches = 8;
    c.unit = (struct unit_costs){true, 1, 2, 1, 0, 1, 0};
    struct explore a;
    struct mt_err e = {0};
    CHECK_EQ_INT(explore_init(&a, &c, NULL, true, &e), MT_OK);
    struct cells *ga = cells_new(120, 40, true), *gb = cells_new(120, 40, true);
    const char *keys = "npmM+0nmnnpnppnnnpppmnp";
    for (const char *k = keys; *k; k++) {
        explore_draw(&a, ga);
        explore_key(&a, *k);
        explore_draw(&a, ga);
        struct explore b;
        CHECK_EQ_INT(explore_init(&b, &a.cfg, NULL, true, &e), MT_OK);
        CHECK_EQ_INT(explore_set_row(&b, a.row), MT_OK);
        b.t0 = a.t0, b.tpc = a.tpc, b.fitted = a.fitted;
        explore_draw(&b, gb);
        int differ = 0;
        for (int y = 0; y < ga->h - 1; y++)
            for (int i = 0; i < ga->w; i++) {
                const struct cell *p = &ga->c[(size_t)y * ga->w + i],
                                  *q = &gb->c[(size_t)y * gb->w + i];
                differ += p->ch != q->ch || p->fg != q->fg || p->bg != q->bg || p->attr != q->attr;
            }
        CHECK_EQ_INT(differ, 0);
        explore_fini(&b);
    }
    cells_free(ga);
    cells_free(gb);
    explore_fini(&a);
}


/* Edits on a terminal (x->tick set): the base plan is shown when the edit returns, the passes
 * go on behind it (issue 27 item 1). Waited for, they make the steps a pipeline run on the new
 * config makes (what `optimize` prints: pass_pipeline_run), the pass bar filling in; a row
 * asked for before it is made says so and is shown once it is; Esc stops them and keeps the
 * steps made, the base shown and the frame whole; a second edit while they run starts over
 * from its config. GPT3-13B, V on 8 devices x 256 micro-batches (passes of some ms each). */
static bool tick_go_on(void *ctx)
{
    (void)ctx;
    return true;
}

static void wait_build(struct explore *x)
{
    for (int i = 0; i < 600000 && explore_build_running(x); i++) {
        explore_build_poll(x);
        struct timespec nap = {0, 1000 * 1000};
        nanosleep(&nap, NULL);
    }
    explore_build_poll(x);
}

/* The steps of x's pipeline against pass_pipeline_run on its config: names, times, plans. */
static void check_same_as_run(struct explore *x)
{
    struct plan *base = NULL;
    struct mt_err e = {0};
    CHECK_EQ_INT(scheme_build(&x->cfg, &base, &e), MT_OK);
    struct pass_pipeline want;
    CHECK_EQ_INT(pass_pipeline_run(base, &want, &e), MT_OK);
    CHECK_EQ_INT(x->pl.n, want.n);
    CHECK(!x->pl.stopped);
    for (int i = 0; i < want.n && i < x->pl.n; i++) {
        CHECK(strcmp(x->pl.step[i].name, want.step[i].name) == 0);
        CHECK(x->pl.step[i].sim.step_time == want.step[i].sim.step_time);
        CHECK(x->pl.step[i].sim.dev[0].peak_mem == want.step[i].sim.dev[0].peak_mem);
        CHECK_EQ_INT(x->pl.step[i].changes.n, want.step[i].changes.n);
        CHECK_EQ_INT(plan_total(x->pl.step[i].plan), plan_total(want.step[i].plan));
    }
    pass_pipeline_fini(&want);
    plan_free(base);
}

static void test_edit_behind(void)
{
    struct config c;
    config_default(&c);
    struct mt_err e = {0};
    CHECK_EQ_INT(presets_model("GPT3-13B", &c.model, &e), MT_OK);
    c.scheme = SCHEME_V;
    c.num_device = 8;
    c.num_microbatches = 256;
    c.global_batch_size = 256 * c.micro_batch_size;
    struct explore x;
    CHECK_EQ_INT(explore_init(&x, &c, NULL, true, &e), MT_OK);
    struct cells *g = cells_new(120, 40, true);
    x.w = 120, x.h = 40;
    x.tick = tick_go_on;
    explore_draw(&x, g);

    /* m, waited for: the steps of a pipeline run on 255 micro-batches, and the bound */
    explore_key(&x, 'm');
    CHECK_EQ_INT(x.cfg.num_microbatches, 255);
    CHECK(x.pl.n >= 1 && x.row == PASS_ROW_BASE);
    CHECK(strncmp(x.status, "micro-batches 256 -> 255", 24) == 0);
    char line[512];
    if (explore_build_running(&x)) { /* the status line says what runs and how to stop it */
        explore_draw(&x, g);
        row_text(g, 39, line, sizeof line);
        CHECK(strstr(line, "Esc: stop (keeps the steps made)") != NULL);
        CHECK(strncmp(line, "passes ", 7) == 0 || strncmp(line, "search", 6) == 0);
        /* n to a step not made yet: said, then shown when made */
        if (pass_pipeline_row(&x.pl, PASS_ROW_CKPT) == NULL) {
            explore_key(&x, 'n');
            CHECK_EQ_INT(x.row, PASS_ROW_BASE);
            CHECK_STR_CONTAINS(x.status, "ckpt is not built yet: shown when it is");
        }
    }
    wait_build(&x);
    CHECK(!explore_build_running(&x));
    check_same_as_run(&x);
    CHECK(x.have_bound);
    explore_draw(&x, g);

    /* Esc at once: the base (and what was made before the Esc) kept, said, usable */
    explore_set_row(&x, PASS_ROW_BASE);
    explore_key(&x, 'm');
    CHECK_EQ_INT(x.cfg.num_microbatches, 254);
    bool ran = explore_build_running(&x);
    CHECK(ran); /* 4 passes of some ms each: still running */
    if (ran) {
        int kept = x.pl.n;
        CHECK_EQ_INT(explore_key(&x, 27), R_REDRAW);
        CHECK(strncmp(x.status, "passes stopped by Esc: base", 27) == 0);
        wait_build(&x);
        CHECK_EQ_INT(x.pl.n, kept);
        CHECK(x.pl.stopped);
        CHECK_EQ_INT(x.row, PASS_ROW_BASE);
        CHECK(strncmp(x.status, "passes stopped by Esc: base", 27) == 0);
        explore_draw(&x, g);
        row_text(g, 39, line, sizeof line);
        CHECK(strncmp(line, "passes stopped by Esc: base", 27) == 0);
        row_text(g, 0, line, sizeof line);
        CHECK(strstr(line, "N 254 ") != NULL);
        CHECK(strstr(line, "GPT3-13B") != NULL);
        /* a step not made: says so, and keys go on */
        for (int i = 0; i < PASS_ROW__COUNT; i++)
            explore_key(&x, 'n');
        CHECK(x.pl.n == PASS_ROW__COUNT || strstr(x.status, "was not built: the passes were "
                                                            "stopped") != NULL);
        explore_key(&x, 'l');
        explore_draw(&x, g);
    }

    /* two edits in a row: the second starts over; waited for, the steps of 252 */
    explore_key(&x, 'm');
    explore_key(&x, 'm');
    CHECK_EQ_INT(x.cfg.num_microbatches, 252);
    wait_build(&x);
    check_same_as_run(&x);

    /* an edit from prepose shows base, then prepose once the passes are done */
    explore_set_row(&x, PASS_ROW_PREPOSE);
    explore_key(&x, 'M');
    if (explore_build_running(&x))
        CHECK_EQ_INT(x.row, PASS_ROW_BASE);
    wait_build(&x);
    CHECK_EQ_INT(x.row, PASS_ROW_PREPOSE);
    check_same_as_run(&x);
    explore_draw(&x, g);

    /* q while the passes run: explore_fini stops and drops them (no leak, no wait for all) */
    explore_key(&x, 'M');
    cells_free(g);
    explore_fini(&x);
}

int main(void)
{
    test_edit_behind();
    test_frames_kept();
    test_help_schemes();
    test_bound_search();
    test_search_progress();
    test_units();
    test_edits_all_or_nothing();
    test_sizes();
    test_box_position();
    test_keys();
    return check_report("test_explore");
}
