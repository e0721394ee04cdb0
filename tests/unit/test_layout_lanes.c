/* tests/unit/test_layout_lanes.c: the Gantt rows the explorer draws (render/layout_lanes.h).
 * Against a plan worked out by hand: 1F1B (V) on 4 devices x 4 micro-batches with the paper's
 * unit costs (F = 1, B = 2, free p2p) takes 21 t and every device's timeline is known (one
 * character per t: F forward, B backward, . idle; tests/unit/test_paint_cells.c paints them):
 * each row's intervals, read back one t at a time, spell that timeline, boxes and idle time
 * alike, sorted by time, with the latest end so far beside each. Against render/'s figure: for
 * every scheme's plan (two pipelines, chunks, split backward, async iterations, offload's
 * copies, a measured row with gaps and out of order), the rows made from the plan are those
 * read from layout_build's items, interval by interval, and paint the same cells. A row whose
 * boxes are out of time order keeps them in plan order; a panel of another plan's simulation
 * is refused as layout_build refuses it. */
#include <config.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/config.h"
#include "render/layout.h"
#include "render/layout_lanes.h"
#include "render/paint_cells.h"
#include "render/palette.h"
#include "sim/core/simulate.h"
#include "sim/plan/plan.h"
#include "sim/plan/validate.h"
#include "sim/schemes/scheme.h"
#include "tests/check.h"
#include "tests/unit_config.h"
#include "util/err.h"

struct fixture {
    struct plan *p;
    struct sim_result r;
};

static int fixture_make(struct fixture *f, struct config c)
{
    struct mt_err e = {0};
    memset(f, 0, sizeof *f);
    int rc = scheme_build(&c, &f->p, &e);
    if (rc == MT_OK)
        rc = validate_plan(f->p, &e);
    if (rc == MT_OK)
        rc = sim_run(f->p, &f->r, &e);
    if (rc != MT_OK)
        fprintf(stderr, "fixture %s: %s\n", config_scheme_name(c.scheme), e.msg);
    return rc;
}

static void fixture_fini(struct fixture *f)
{
    sim_result_fini(&f->r);
    plan_free(f->p);
}

/* 1F1B (V), 4 x 4, F = 1, B = 2, one character per t. */
static const char *const v_timeline[4] = {"FFFF......BB.BB.BB.BB", ".FFF....BBFBB.BB.BB..",
                                          "..FF..BBFBBFBB.BB....", "...FBBFBBFBBFBB......"};

static void test_hand(void)
{
    struct fixture f;
    if (fixture_make(&f, test_unit_config(SCHEME_V, 4, 4, 1, 2, 1)) != MT_OK) {
        CHECK(false);
        return;
    }
    struct layout_panel panel = {NULL, f.p, &f.r, NULL};
    struct layout_lanes *ln = NULL;
    struct mt_err e = {0};
    CHECK_EQ_INT(layout_lanes_build(&panel, &ln, &e), MT_OK);
    CHECK_EQ_INT(ln->rows, 4);
    for (int r = 0; r < ln->rows; r++) {
        CHECK_EQ_INT(ln->lane[r].dev, r);
        CHECK_EQ_INT(ln->lane[r].sub, 0);
        CHECK_EQ_INT(ln->lane[r].lane, 0);
        CHECK(ln->lane[r].by_time);
        char got[32] = "";
        int boxes = 0, idle = 0, sorted = 1, ends = 1;
        double latest = -INFINITY;
        for (int i = ln->off[r]; i < ln->off[r + 1]; i++) {
            const struct layout_seg *s = &ln->seg[i];
            enum op op = OP__COUNT;
            if (s->id >= 0) { /* the box is its instruction's, on its device, in its colour */
                int d, k;
                plan_locate_id(f.p, s->id, &d, &k);
                op = plan_at(f.p, d, k)->op;
                CHECK(d == r && s->color == palette_of_op(op));
            } else {
                CHECK(s->color == PAL_BUBBLE);
            }
            char c = s->id < 0 ? '.' : op == OP_FW ? 'F' : op == OP_BW ? 'B' : '?';
            for (int t = (int)lround(s->t0); t < (int)lround(s->t1) && t < 21; t++)
                got[t] = c;
            boxes += s->id >= 0;
            idle += s->id < 0;
            sorted &= i == ln->off[r] || ln->seg[i - 1].t0 <= s->t0;
            latest = fmax(latest, s->t1);
        }
        /* layout_lanes_first against a plain scan, at every half t */
        for (double t = -0.5; t <= 21.5; t += 0.5) {
            int want = ln->off[r];
            while (want < ln->off[r + 1] && ln->seg[want].t1 <= t)
                want++;
            ends &= layout_lanes_first(ln, r, t) == want;
        }
        CHECK_NEAR(latest, 21, 1e-12);
        got[21] = '\0';
        if (strcmp(got, v_timeline[r]) != 0) {
            check_failures++;
            fprintf(stderr, "dev %d: want %s got %s\n", r, v_timeline[r], got);
        }
        check_count++;
        CHECK_EQ_INT(boxes, 8); /* 4 forwards and 4 backwards */
        CHECK(sorted && ends);
    }
    /* dev 0 idles over [4, 10), [12, 13), [15, 16), [18, 19); dev 3 over [0, 3), [15, 21) */
    int idle0 = 0, idle3 = 0;
    for (int i = ln->off[0]; i < ln->off[1]; i++)
        idle0 += ln->seg[i].id < 0;
    for (int i = ln->off[3]; i < ln->off[4]; i++)
        idle3 += ln->seg[i].id < 0;
    CHECK_EQ_INT(idle0, 4);
    CHECK_EQ_INT(idle3, 2);
    /* the first interval of dev 0 that ends after 11.5: the backward over [10, 12); after 4,
     * the idle time over [4, 10) */
    int k = layout_lanes_first(ln, 0, 11.5);
    CHECK_NEAR(ln->seg[k].t0, 10, 1e-12);
    CHECK_EQ_INT(ln->seg[k].color, palette_of_op(OP_BW));
    k = layout_lanes_first(ln, 0, 4);
    CHECK(ln->seg[k].id < 0 && ln->seg[k].t0 == 4 && ln->seg[k].t1 == 10);
    CHECK_EQ_INT(layout_lanes_first(ln, 0, 21), ln->off[1]);
    CHECK_EQ_INT(layout_lanes_first(ln, 0, -1), ln->off[0]);
    /* dev 0's boxes lasting 2 t or more: the backwards, the first at [10, 12) */
    k = layout_lanes_next(ln, 0, ln->off[0], 2, -1);
    CHECK_NEAR(ln->seg[k].t0, 10, 1e-12);
    CHECK_EQ_INT(layout_lanes_next(ln, 0, ln->off[0], 3, -1), ln->off[1]);
    /* or the box of a given id: dev 0's third forward, at [2, 3) */
    int third = -1;
    for (int i = 0, fw = 0; i < plan_len(f.p, 0) && third < 0; i++)
        if (plan_at(f.p, 0, i)->op == OP_FW && ++fw == 3)
            third = plan_id(f.p, 0, i);
    k = layout_lanes_next(ln, 0, ln->off[0], 3, third);
    CHECK(k < ln->off[1] && ln->seg[k].t0 == 2);
    CHECK_EQ_INT(ln->marks, 0);
    CHECK(ln->plan_order == NULL);
    layout_lanes_free(ln);
    fixture_fini(&f);
}

static int mark_cmp(const void *a, const void *b)
{
    const struct layout_mark *p = a, *q = b;
    if (p->row != q->row)
        return (p->row > q->row) - (p->row < q->row);
    return (p->t > q->t) - (p->t < q->t);
}

/* The rows made from the panel are those read from layout_build's figure of it, and paint
 * the same cells and owners. */
static void check_same(const struct layout_panel *panel, const char *what)
{
    struct mt_err e = {0};
    struct layout_lanes *a = NULL;
    struct layout *l = NULL;
    struct layout_opts o = {.no_labels = true, .no_legend = true};
    CHECK_EQ_INT(layout_lanes_build(panel, &a, &e), MT_OK);
    CHECK_EQ_INT(layout_build(panel, 1, &o, &l, &e), MT_OK);
    if (a == NULL || l == NULL) {
        fprintf(stderr, "%s: %s\n", what, e.msg);
        layout_lanes_free(a);
        layout_free(l);
        return;
    }
    struct layout_lanes *b = layout_lanes_of(l, 0);
    int nrows, bad = 0;
    const struct layout_row *rows = layout_rows(l, 0, &nrows);
    CHECK_EQ_INT(a->rows, nrows);
    CHECK_EQ_INT(b->rows, nrows);
    for (int r = 0; r < nrows && r < a->rows; r++) {
        bad += a->lane[r].dev != rows[r].dev || a->lane[r].sub != rows[r].sub ||
               a->lane[r].lane != rows[r].lane || a->lane[r].by_time != b->lane[r].by_time ||
               a->off[r + 1] != b->off[r + 1];
    }
    int n = a->off[a->rows];
    CHECK_EQ_INT(n, b->off[b->rows]);
    for (int i = 0; i < n && n == b->off[b->rows]; i++) {
        const struct layout_seg *s = &a->seg[i], *t = &b->seg[i];
        bad += s->t0 != t->t0 || s->t1 != t->t1 || s->id != t->id || s->color != t->color;
        if (a->plan_order != NULL || b->plan_order != NULL)
            bad += a->plan_order == NULL || b->plan_order == NULL ||
                   a->plan_order[i] != b->plan_order[i];
    }
    for (int r = 0; r <= a->rows && r <= b->rows; r++)
        bad += a->block_off[r] != b->block_off[r];
    for (int k = 0; k < a->block_off[a->rows] && a->block_off[a->rows] == b->block_off[b->rows];
         k++)
        bad += a->block[k].end != b->block[k].end || a->block[k].longest != b->block[k].longest ||
               a->block[k].id_lo != b->block[k].id_lo || a->block[k].id_hi != b->block[k].id_hi;
    CHECK_EQ_INT(a->marks, b->marks);
    if (a->marks == b->marks && a->marks > 0) {
        qsort(a->mark, (size_t)a->marks, sizeof *a->mark, mark_cmp);
        qsort(b->mark, (size_t)b->marks, sizeof *b->mark, mark_cmp);
        for (int k = 0; k < a->marks; k++)
            bad += a->mark[k].row != b->mark[k].row || a->mark[k].t != b->mark[k].t;
    }
    /* painted at three widths, the marks over them */
    int *row_y = malloc(((size_t)nrows + 1) * sizeof *row_y);
    for (int r = 0; r < nrows; r++)
        row_y[r] = r;
    double span = panel->sim->step_time > 0 ? panel->sim->step_time : 1;
    for (int w = 7; w <= 120; w = w * 4 + 1) {
        struct cells *ga = cells_new(w, nrows, true), *gb = cells_new(w, nrows, true);
        int *oa = malloc(sizeof(int) * (size_t)w * (size_t)nrows);
        int *ob = malloc(sizeof(int) * (size_t)w * (size_t)nrows);
        struct cells_gantt va = {0, w, 0.0, span / w, row_y, nrows, oa};
        struct cells_gantt vb = va;
        vb.owner = ob;
        cells_paint_gantt_lanes(ga, a, &va);
        cells_paint_gantt_lanes_marks(ga, a, &va);
        cells_paint_gantt_lanes(gb, b, &vb); /* the rows read from the figure */
        cells_paint_gantt_lanes_marks(gb, b, &vb);
        for (int i = 0; i < w * nrows; i++)
            bad += memcmp(&ga->c[i], &gb->c[i], sizeof ga->c[i]) != 0 || oa[i] != ob[i];
        free(oa);
        free(ob);
        cells_free(ga);
        cells_free(gb);
    }
    free(row_y);
    if (bad > 0)
        fprintf(stderr, "%s: %d differences\n", what, bad);
    CHECK_EQ_INT(bad, 0);
    layout_lanes_free(a);
    layout_lanes_free(b);
    layout_free(l);
}

static void test_every_scheme(void)
{
    enum scheme_id schemes[SCHEME__COUNT];
    int n = test_sync_schemes(schemes, false);
    for (int k = 0; k < n; k++) {
        int D = 4, N = 8;
        struct config c = test_unit_config(schemes[k], D, N, 1, 2, 1);
        test_fit_scheme(&c, &D, &N, 2);
        c.num_device = D, c.num_microbatches = N;
        struct fixture f;
        if (fixture_make(&f, c) != MT_OK) {
            CHECK(false);
            continue;
        }
        struct layout_panel panel = {NULL, f.p, &f.r, NULL};
        check_same(&panel, config_scheme_name(schemes[k]));
        fixture_fini(&f);
    }
    /* async over 3 iterations: a mark where each iteration starts on a device */
    struct config c = test_unit_config(SCHEME_ASYNC, 4, 4, 1, 2, 1);
    c.iterations = 3;
    struct fixture f;
    if (fixture_make(&f, c) == MT_OK) {
        struct layout_panel panel = {NULL, f.p, &f.r, NULL};
        struct layout_lanes *ln = NULL;
        struct mt_err e = {0};
        CHECK_EQ_INT(layout_lanes_build(&panel, &ln, &e), MT_OK);
        CHECK_EQ_INT(ln ? ln->marks : -1, 4 * 2); /* iterations 1 and 2 on each device */
        layout_lanes_free(ln);
        check_same(&panel, "Async x 3");
        fixture_fini(&f);
    } else {
        CHECK(false);
    }
}

/* Offload's copies (the fuzz corpus's offloading Figure 2): drawn in no row of the lanes. */
static void test_offload(void)
{
    const char *top = getenv("top_srcdir");
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/fuzz/corpus/plan/offload-v-4dev-4mb-unit.json",
             top ? top : ".");
    struct plan *p = NULL;
    struct sim_result r;
    struct mt_err e = {0};
    if (plan_load(path, &p, &e) != MT_OK || sim_run(p, &r, &e) != MT_OK) {
        fprintf(stderr, "%s\n", e.msg);
        CHECK(false);
        plan_free(p);
        return;
    }
    struct layout_panel panel = {NULL, p, &r, NULL};
    struct layout_lanes *ln = NULL;
    CHECK_EQ_INT(layout_lanes_build(&panel, &ln, &e), MT_OK);
    int copies = 0;
    for (int i = 0; ln != NULL && i < ln->off[ln->rows]; i++)
        if (ln->seg[i].id >= 0) {
            int d, k;
            plan_locate_id(p, ln->seg[i].id, &d, &k);
            copies += plan_op_is_copy(plan_at(p, d, k)->op);
        }
    CHECK_EQ_INT(copies, 0);
    layout_lanes_free(ln);
    check_same(&panel, "offload");
    sim_result_fini(&r);
    plan_free(p);
}

/* A measured row: at half speed, device 1's first two boxes swapped in time (out of plan
 * order), device 2's first box not measured (NaN); and the simulated row of device 0 out of
 * order too, its first two forwards swapped. */
static void test_out_of_order(void)
{
    struct fixture f;
    if (fixture_make(&f, test_unit_config(SCHEME_V, 4, 4, 1, 2, 1)) != MT_OK) {
        CHECK(false);
        return;
    }
    int total = plan_total(f.p);
    double *ms = malloc(sizeof(double) * (size_t)total * 2), *me = ms + total;
    for (int id = 0; id < total; id++)
        ms[id] = 2 * f.r.start[id], me[id] = 2 * f.r.end[id];
    int a = -1, b = -1, first2 = -1;
    for (int i = 0; i < plan_len(f.p, 1); i++)
        if (plan_op_is_compute(plan_at(f.p, 1, i)->op)) {
            if (a < 0)
                a = plan_id(f.p, 1, i);
            else if (b < 0)
                b = plan_id(f.p, 1, i);
        }
    for (int i = 0; i < plan_len(f.p, 2) && first2 < 0; i++)
        if (plan_op_is_compute(plan_at(f.p, 2, i)->op))
            first2 = plan_id(f.p, 2, i);
    double t0 = ms[a], t1 = me[a];
    ms[a] = ms[b], me[a] = me[b];
    ms[b] = t0, me[b] = t1;
    ms[first2] = me[first2] = NAN;
    struct layout_timeline tl = {"meas", ms, me};
    struct layout_panel panel = {NULL, f.p, &f.r, &tl};
    check_same(&panel, "measured out of order");

    int f0 = -1, f1 = -1; /* device 0's first two forwards, swapped in the simulated row */
    for (int i = 0; i < plan_len(f.p, 0) && f1 < 0; i++)
        if (plan_at(f.p, 0, i)->op == OP_FW) {
            if (f0 < 0)
                f0 = plan_id(f.p, 0, i);
            else
                f1 = plan_id(f.p, 0, i);
        }
    t0 = f.r.start[f0], t1 = f.r.end[f0];
    f.r.start[f0] = f.r.start[f1], f.r.end[f0] = f.r.end[f1];
    f.r.start[f1] = t0, f.r.end[f1] = t1;
    struct layout_lanes *ln = NULL;
    struct mt_err e = {0};
    CHECK_EQ_INT(layout_lanes_build(&panel, &ln, &e), MT_OK);
    if (ln != NULL) {
        CHECK(!ln->lane[0].by_time); /* row 0: device 0 simulated */
        CHECK(!ln->lane[3].by_time); /* row 3: device 1 measured */
        CHECK(ln->lane[1].by_time && ln->lane[2].by_time);
        CHECK(ln->plan_order != NULL);
        int prev = -1, n = 0, ordered = 1;
        for (int i = ln->off[0]; ln->plan_order != NULL && i < ln->off[1]; i++) {
            int k = ln->plan_order[i];
            if (k < 0)
                break;
            ordered &= ln->seg[k].id > prev;
            prev = ln->seg[k].id;
            n++;
        }
        CHECK_EQ_INT(n, 8);
        CHECK(ordered);
        /* device 2's unmeasured box: in its simulated row, not its measured one */
        int in_sim = 0, in_meas = 0;
        for (int i = ln->off[4]; i < ln->off[5]; i++)
            in_sim += ln->seg[i].id == first2;
        for (int i = ln->off[5]; i < ln->off[6]; i++)
            in_meas += ln->seg[i].id == first2;
        CHECK_EQ_INT(in_sim, 1);
        CHECK_EQ_INT(in_meas, 0);
    }
    layout_lanes_free(ln);
    check_same(&panel, "simulated out of order");
    free(ms);
    fixture_fini(&f);
}

/* A panel whose simulation is of another plan is refused, as layout_build refuses it. */
static void test_refused(void)
{
    struct fixture f, g;
    if (fixture_make(&f, test_unit_config(SCHEME_V, 4, 4, 1, 2, 1)) != MT_OK ||
        fixture_make(&g, test_unit_config(SCHEME_V, 4, 8, 1, 2, 1)) != MT_OK) {
        CHECK(false);
        return;
    }
    struct layout_panel panel = {NULL, f.p, &g.r, NULL};
    struct layout_lanes *ln = NULL;
    struct mt_err e = {0};
    CHECK_EQ_INT(layout_lanes_build(&panel, &ln, &e), MT_EINVAL);
    CHECK(ln == NULL);
    CHECK_STR_CONTAINS(e.msg, "simulation is of another plan");
    fixture_fini(&f);
    fixture_fini(&g);
}

int main(void)
{
    test_hand();
    test_every_scheme();
    test_offload();
    test_out_of_order();
    test_refused();
    return check_report("test_layout_lanes");
}
