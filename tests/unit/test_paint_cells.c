/* tests/unit/test_paint_cells.c: the terminal painter (render/paint_cells.h) against plans
 * worked out by hand. With the paper's unit costs (F = 1, B = 2, free p2p) 1F1B and GPipe on
 * 4 devices x 4 micro-batches take 21 t, and every device's timeline is known (below, one
 * character per t: F forward, B backward, . idle). Painted over 21 columns each cell is 1 t;
 * over 10 and 7 columns a cell holds parts of several boxes and must take the colour of
 * the op that covers most of it, or the bubble's only where idle time is more than half of
 * it; the expected rows at those widths were worked out by hand from the timelines, cell by
 * cell (e.g. 1F1B dev 0, 10 columns, cell 7 = [14.7, 16.8) t: B 0.3 + idle 1 + B 0.8, idle
 * 1/2.1 < 1/2, so B). With --ascii every cell has the same colour. No cell is ever the
 * page's white (PAL_BG); past the end of the step a cell is PAL_DEFAULT. */
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
#include "sim/plan/plan.h"
#include "sim/schemes/scheme.h"
#include "sim/core/simulate.h"
#include "sim/plan/validate.h"
#include "tests/check.h"
#include "tests/unit_config.h"
#include "util/err.h"

struct fixture {
    struct plan *p;
    struct sim_result r;
    struct layout *l;
};

/* The plan, its simulation and (when with_layout) its layout as the explorer builds it. */
static int fixture_make(struct fixture *f, struct config c, bool with_layout)
{
    struct mt_err e = {0};
    memset(f, 0, sizeof *f);
    int rc = scheme_build(&c, &f->p, &e);
    if (rc == MT_OK)
        rc = validate_plan(f->p, &e);
    if (rc == MT_OK)
        rc = sim_run(f->p, &f->r, &e);
    if (rc == MT_OK && with_layout) {
        struct layout_panel panel = {NULL, f->p, &f->r, NULL};
        struct layout_opts o = {.no_labels = true, .no_legend = true};
        rc = layout_build(&panel, 1, &o, &f->l, &e);
    }
    if (rc != MT_OK)
        fprintf(stderr, "fixture %s: %s\n", config_scheme_name(c.scheme), e.msg);
    return rc;
}

static void fixture_fini(struct fixture *f)
{
    layout_free(f->l);
    sim_result_fini(&f->r);
    plan_free(f->p);
}

static char letter(unsigned char pal)
{
    switch (pal) {
    case PAL_FW: return 'F';
    case PAL_BW: return 'B';
    case PAL_BUBBLE: return '.';
    case PAL_DEFAULT: return ' ';
    case PAL_BG: return '#'; /* the page's white: must never appear */
    default: return '?';
    }
}

/* Paints rows [0, rows) of the layout into a w x rows grid over [0, w * tpc). */
static struct cells *paint(const struct layout *l, int panel, int rows, int w, double tpc,
                           bool utf8, int *owner)
{
    struct cells *g = cells_new(w, rows, utf8);
    int row_y[64];
    for (int r = 0; r < rows && r < 64; r++)
        row_y[r] = r;
    struct cells_gantt v = {0, w, 0.0, tpc, row_y, rows, owner};
    struct layout_lanes *ln = layout_lanes_of(l, panel); /* the panel's rows, from l's items */
    cells_paint_gantt_lanes(g, ln, &v);
    layout_lanes_free(ln);
    return g;
}

/* Each cell of row y against want[] (F, B, .), printing the whole row when one differs. */
static void check_row(const struct cells *g, int y, const char *want, const char *what)
{
    char got[256];
    int w = g->w < 255 ? g->w : 255;
    for (int x = 0; x < w; x++)
        got[x] = letter(g->c[(size_t)y * g->w + x].bg);
    got[w] = '\0';
    CHECK_EQ_INT((int)strlen(want), w);
    if (strcmp(got, want) != 0) {
        check_failures++;
        fprintf(stderr, "%s: %s row %d: want \"%s\" got \"%s\"\n", __FILE__, what, y, want, got);
    }
    check_count++;
}

/* Nothing in the painted rows uses the page's white, as fill or as ink. */
static void check_no_page(const struct cells *g)
{
    int bad = 0;
    for (int i = 0; i < g->w * g->h; i++)
        bad += g->c[i].bg == PAL_BG || g->c[i].bg == PAL_ROW || g->c[i].fg == PAL_BG ||
               g->c[i].fg == PAL_ROW;
    CHECK_EQ_INT(bad, 0);
}

static const struct instr *find_id(const struct plan *p, int id, int *dev)
{
    for (int d = 0; d < plan_devices(p); d++)
        for (int i = 0; i < plan_len(p, d); i++)
            if (plan_id(p, d, i) == id) {
                *dev = d;
                return plan_at(p, d, i);
            }
    return NULL;
}

/* The instruction that gave cell (x, y) its colour is (dev, op, mb). */
static void check_owner(const struct fixture *f, const int *owner, int w, int x, int y, int dev,
                        enum op op, int mb)
{
    int d = -1;
    const struct instr *in = owner[y * w + x] >= 0 ? find_id(f->p, owner[y * w + x], &d) : NULL;
    CHECK(in != NULL);
    if (in == NULL)
        return;
    CHECK_EQ_INT(d, dev);
    CHECK_EQ_INT(in->op, op);
    CHECK_EQ_INT(in->mb, mb);
}

struct hand {
    int w;
    const char *dev[4];
};

/* 1F1B (V), 4 x 4, F = 1, B = 2: dev d warms up with 3 - d forwards, then one forward, one
 * backward; the backward of mb k on dev d waits for dev d + 1's. Step 21 t. */
static const struct hand v_hand[] = {
    {21,
     {"FFFF......BB.BB.BB.BB", ".FFF....BBFBB.BB.BB..", "..FF..BBFBBFBB.BB....",
      "...FBBFBBFBBFBB......"}},
    {10, {"FF...BBBBB", "FF..BBBBB.", ".F.BBBBB..", ".FBBBBB..."}},
    {7, {"F..BBBB", "F..BBB.", "..BBBB.", ".BBBB.."}},
};

/* GPipe, 4 x 4: all forwards (dev d from d t), then all backwards (dev 3 from 7 t, each
 * device 2 t after the next one). Step 21 t. */
static const struct hand gpipe_hand[] = {
    {21,
     {"FFFF.........BBBBBBBB", ".FFFF......BBBBBBBB..", "..FFFF...BBBBBBBB....",
      "...FFFFBBBBBBBB......"}},
    {10, {"FF....BBBB", "FF...BBBB.", ".FF.BBBB..", ".FFBBBB..."}},
    {7, {"F...BBB", "FF..BB.", ".F.BBB.", ".FBBB.."}},
};

static void check_hand(enum scheme_id scheme, const struct hand *h, int n, const char *name)
{
    struct fixture f;
    if (fixture_make(&f, test_unit_config(scheme, 4, 4, 1, 2, 1), true) != MT_OK) {
        CHECK(false);
        return;
    }
    CHECK_NEAR(f.r.step_time, 21, 1e-9);
    int nrows;
    const struct layout_row *rows = layout_rows(f.l, 0, &nrows);
    CHECK_EQ_INT(nrows, 4);
    for (int r = 0; rows != NULL && r < nrows; r++) {
        CHECK_EQ_INT(rows[r].dev, r);
        CHECK_EQ_INT(rows[r].sub, 0);
        CHECK_EQ_INT(rows[r].lane, 0);
    }
    for (int k = 0; k < n; k++) {
        char what[64];
        struct cells *g[2];
        for (int utf8 = 0; utf8 < 2; utf8++) {
            g[utf8] = paint(f.l, 0, 4, h[k].w, 21.0 / h[k].w, utf8, NULL);
            snprintf(what, sizeof what, "%s %d columns%s", name, h[k].w, utf8 ? "" : " --ascii");
            for (int d = 0; d < 4; d++)
                check_row(g[utf8], d, h[k].dev[d], what);
            check_no_page(g[utf8]);
        }
        /* The same colour per cell without UTF-8, and no glyph there but the idle dot. */
        int differ = 0, glyphs = 0;
        for (int i = 0; i < h[k].w * 4; i++) {
            differ += g[0]->c[i].bg != g[1]->c[i].bg;
            glyphs += g[0]->c[i].ch != (g[0]->c[i].bg == PAL_BUBBLE ? '.' : ' ');
        }
        CHECK_EQ_INT(differ, 0);
        CHECK_EQ_INT(glyphs, 0);
        cells_free(g[0]);
        cells_free(g[1]);
    }
    fixture_fini(&f);
}

/* 1F1B at 1 t per cell: which instruction each cell belongs to; at 10 columns the edges
 * between a box and idle time inside a cell; past the end of the step, PAL_DEFAULT. */
static void test_v_cells(void)
{
    struct fixture f;
    if (fixture_make(&f, test_unit_config(SCHEME_V, 4, 4, 1, 2, 1), true) != MT_OK) {
        CHECK(false);
        return;
    }
    int w = 25, owner[25 * 4];
    struct cells *g = paint(f.l, 0, 4, w, 1.0, true, owner);
    check_owner(&f, owner, w, 0, 0, 0, OP_FW, 0);
    check_owner(&f, owner, w, 3, 0, 0, OP_FW, 3);
    check_owner(&f, owner, w, 10, 0, 0, OP_BW, 0);
    check_owner(&f, owner, w, 11, 0, 0, OP_BW, 0);
    check_owner(&f, owner, w, 20, 0, 0, OP_BW, 3);
    check_owner(&f, owner, w, 10, 1, 1, OP_FW, 3);
    check_owner(&f, owner, w, 6, 3, 3, OP_FW, 1);
    CHECK_EQ_INT(owner[0 * w + 4], -1); /* idle */
    for (int d = 0; d < 4; d++)
        for (int x = 21; x < 25; x++) {
            CHECK_EQ_INT(cells_at(g, x, d)->bg, PAL_DEFAULT);
            CHECK_EQ_INT(owner[d * w + x], -1);
        }
    check_no_page(g);
    cells_free(g);

    g = paint(f.l, 0, 4, 10, 2.1, true, NULL);
    /* dev 0 cell 1 = [2.1, 4.2): F 1.9 then idle 0.2 (1 eighth, on the right): ▕ */
    CHECK_EQ_INT(cells_at(g, 1, 0)->bg, PAL_FW);
    CHECK_EQ_INT(cells_at(g, 1, 0)->ch, 0x2595);
    CHECK_EQ_INT(cells_at(g, 1, 0)->fg, PAL_BUBBLE);
    /* dev 0 cell 6 = [12.6, 14.7): idle 0.4 (2 eighths, on the left) then B 1.7: ▎ */
    CHECK_EQ_INT(cells_at(g, 6, 0)->bg, PAL_BW);
    CHECK_EQ_INT(cells_at(g, 6, 0)->ch, 0x258E);
    CHECK_EQ_INT(cells_at(g, 6, 0)->fg, PAL_BUBBLE);
    /* dev 0 cell 7 = [14.7, 16.8): B, idle, B: three parts, no edge to show */
    CHECK_EQ_INT(cells_at(g, 7, 0)->ch, ' ');
    cells_free(g);
    fixture_fini(&f);
}

/* GPipe with 16 micro-batches: dev 0 runs 16 forwards back to back over [0, 16) t. Wherever
 * the cells fall, two forwards sharing a cell are one colour: no seam, no white. */
static void test_gpipe_forward_phase(void)
{
    struct fixture f;
    if (fixture_make(&f, test_unit_config(SCHEME_GPIPE, 4, 16, 1, 2, 1), true) != MT_OK) {
        CHECK(false);
        return;
    }
    CHECK_NEAR(f.r.step_time, (16 + 3) * 3, 1e-9);
    const double tpcs[] = {0.4, 0.7, 2.5};
    for (int k = 0; k < 3; k++)
        for (int utf8 = 0; utf8 < 2; utf8++) {
            int w = (int)ceil(57 / tpcs[k]);
            struct cells *g = paint(f.l, 0, 4, w, tpcs[k], utf8, NULL);
            int n = (int)floor(16 / tpcs[k]), bad = 0; /* cells inside [0, 16) */
            for (int x = 0; x < n; x++)
                bad += cells_at(g, x, 0)->bg != PAL_FW || cells_at(g, x, 0)->ch != ' ';
            CHECK_EQ_INT(bad, 0);
            /* then idle until dev 0's first backward at 57 - 16 * 2 = 25 t */
            int x0 = (int)ceil(17 / tpcs[k]), x1 = (int)floor(24 / tpcs[k]);
            for (int x = x0; x < x1; x++)
                CHECK_EQ_INT(cells_at(g, x, 0)->bg, PAL_BUBBLE);
            check_no_page(g);
            cells_free(g);
        }
    fixture_fini(&f);
}

/* Interleaved 1F1B (W, two chunks): a box lies in its device's lane of its part; at that time
 * the device's other lane is neither that box nor idle. */
static void test_lanes(void)
{
    struct fixture f;
    if (fixture_make(&f, test_unit_config(SCHEME_W, 4, 8, 1, 2, 1), true) != MT_OK) {
        CHECK(false);
        return;
    }
    int nrows;
    const struct layout_row *rows = layout_rows(f.l, 0, &nrows);
    CHECK_EQ_INT(nrows, 8);
    for (int r = 0; rows != NULL && r < nrows; r++) {
        CHECK_EQ_INT(rows[r].dev, r / 2);
        CHECK_EQ_INT(rows[r].lane, r % 2);
    }
    double tpc = 0.125;
    int w = (int)ceil(f.r.step_time / tpc);
    int *owner = malloc(sizeof(int) * (size_t)w * 8);
    struct cells *g = paint(f.l, 0, 8, w, tpc, true, owner);
    int boxes = 0, bad = 0;
    for (int d = 0; d < plan_devices(f.p); d++)
        for (int i = 0; i < plan_len(f.p, d); i++) {
            const struct instr *in = plan_at(f.p, d, i);
            if (!plan_op_is_compute(in->op))
                continue;
            int id = plan_id(f.p, d, i);
            int x = (int)floor((f.r.start[id] + f.r.end[id]) / 2 / tpc);
            int y = d * 2 + in->part, other = d * 2 + 1 - in->part;
            boxes++;
            bad += cells_at(g, x, y)->bg != palette_of_op(in->op) || owner[y * w + x] != id;
            bad += cells_at(g, x, other)->bg != PAL_DEFAULT || owner[other * w + x] != -1;
        }
    CHECK(boxes == plan_devices(f.p) * 8 * 2 * 2);
    CHECK_EQ_INT(bad, 0);
    check_no_page(g);
    cells_free(g);
    free(owner);
    fixture_fini(&f);
}

/* A measured timeline twice as slow as the simulation: its row under each device, painted at
 * 2 t per cell, is the simulated row at 1 t per cell. */
static void test_measured_rows(void)
{
    struct fixture f;
    if (fixture_make(&f, test_unit_config(SCHEME_V, 4, 4, 1, 2, 1), false) != MT_OK) {
        CHECK(false);
        return;
    }
    int total = plan_total(f.p);
    double *ms = malloc(sizeof(double) * (size_t)total * 2), *me = ms + total;
    for (int id = 0; id < total; id++)
        ms[id] = 2 * f.r.start[id], me[id] = 2 * f.r.end[id];
    struct layout_timeline tl = {"meas", ms, me};
    struct layout_panel panel = {NULL, f.p, &f.r, &tl};
    struct layout_opts o = {.no_labels = true, .no_legend = true};
    struct mt_err e = {0};
    CHECK_EQ_INT(layout_build(&panel, 1, &o, &f.l, &e), MT_OK);
    int nrows;
    const struct layout_row *rows = layout_rows(f.l, 0, &nrows);
    CHECK_EQ_INT(nrows, 8);
    for (int r = 0; rows != NULL && r < nrows; r++) {
        CHECK_EQ_INT(rows[r].dev, r / 2);
        CHECK_EQ_INT(rows[r].sub, r % 2);
    }
    struct cells *g1 = paint(f.l, 0, 8, 21, 1.0, true, NULL);
    struct cells *g2 = paint(f.l, 0, 8, 21, 2.0, true, NULL);
    check_row(g1, 0, v_hand[0].dev[0], "1F1B simulated, 21 columns");
    for (int d = 0; d < 4; d++)
        check_row(g2, 2 * d + 1, v_hand[0].dev[d], "1F1B measured at half speed, 21 columns");
    cells_free(g1);
    cells_free(g2);
    free(ms);
    fixture_fini(&f);
}

/* Async over 3 iterations: a heavy bar where each iteration starts on a device, in its row. */
static void test_iteration_marks(void)
{
    struct config c = test_unit_config(SCHEME_ASYNC, 4, 4, 1, 2, 1);
    c.iterations = 3;
    struct fixture f;
    if (fixture_make(&f, c, true) != MT_OK) {
        CHECK(false);
        return;
    }
    double tpc = 0.25;
    int w = (int)ceil(f.r.step_time / tpc) + 1;
    struct cells *g = paint(f.l, 0, 4, w, tpc, true, NULL);
    int row_y[4] = {0, 1, 2, 3};
    struct cells_gantt v = {0, w, 0.0, tpc, row_y, 4, NULL};
    struct layout_lanes *ln = layout_lanes_of(f.l, 0);
    cells_paint_gantt_lanes_marks(g, ln, &v);
    layout_lanes_free(ln);
    int marks = 0, bad = 0;
    const struct layout_item *it = layout_items(f.l);
    for (int k = 0; k < layout_count(f.l); k++) {
        if (it[k].role != LAYOUT_ROLE_ITERATION)
            continue;
        marks++;
        struct cell *cl = cells_at(g, (int)floor(it[k].t0 / tpc), it[k].dev);
        bad += cl == NULL || cl->ch != 0x2503 || cl->fg != PAL_CAP;
    }
    CHECK_EQ_INT(marks, 4 * 2); /* iterations 1 and 2 start on each of the 4 devices */
    CHECK_EQ_INT(bad, 0);
    cells_free(g);
    fixture_fini(&f);
}

/* Spans (the memory bars) laid side by side: a cell two spans share keeps both colours, and a
 * span inside one cell still shows. */
static void test_span(void)
{
    struct cells *g = cells_new(4, 2, true);
    cells_span(g, 0, 0, 12, PAL_MEM_STATIC);
    cells_span(g, 0, 12, 24, PAL_MEM_DYN);
    CHECK_EQ_INT(cells_at(g, 0, 0)->bg, PAL_MEM_STATIC);
    CHECK_EQ_INT(cells_at(g, 1, 0)->ch, 0x258C); /* ▌ static | dynamic */
    CHECK_EQ_INT(cells_at(g, 1, 0)->fg, PAL_MEM_STATIC);
    CHECK_EQ_INT(cells_at(g, 1, 0)->bg, PAL_MEM_DYN);
    CHECK_EQ_INT(cells_at(g, 2, 0)->bg, PAL_MEM_DYN);
    CHECK_EQ_INT(cells_at(g, 3, 0)->bg, PAL_BG); /* untouched */
    /* 3 eighths in the middle of cell 1: drawn as a block of 5 over the page, not dropped */
    cells_span(g, 1, 10, 13, PAL_MEM_OVER);
    CHECK_EQ_INT(cells_at(g, 1, 1)->ch, 0x258B);
    CHECK_EQ_INT(cells_at(g, 1, 1)->fg, PAL_MEM_OVER);
    /* a span that ends in a block cell and one that starts there keep their colours */
    cells_span(g, 1, 16, 21, PAL_MEM_STATIC);
    cells_span(g, 1, 21, 32, PAL_MEM_DYN);
    CHECK_EQ_INT(cells_at(g, 2, 1)->ch, 0x258B); /* ▋ 5 eighths static, 3 dynamic */
    CHECK_EQ_INT(cells_at(g, 2, 1)->fg, PAL_MEM_STATIC);
    CHECK_EQ_INT(cells_at(g, 2, 1)->bg, PAL_MEM_DYN);
    cells_free(g);
}

/* How a terminal shows cells (cells_term): the terminal's own paper for the page, idle time
 * and empty cells; its own ink for text, axes (dim) and the cap (bold); the title bar
 * reversed; a page-inked block over a fill as the fill reversed; op colours as they are. */
static void test_term(void)
{
    struct cells_term t;
    struct cell c = {0x2502, PAL_CAP, PAL_BG, 0}; /* the cap marker on the page */
    cells_term(&c, &t);
    CHECK(t.fg == CELLS_TERM_OWN && t.bg == CELLS_TERM_OWN && (t.attr & CELL_BOLD));
    c = (struct cell){0x2502, PAL_CAP, PAL_MEM_DYN, 0}; /* ... inside a bar */
    cells_term(&c, &t);
    CHECK(t.fg == CELLS_TERM_OWN && t.bg == PAL_MEM_DYN);
    c = (struct cell){0x252C, PAL_AXIS, PAL_BG, 0};
    cells_term(&c, &t);
    CHECK(t.fg == CELLS_TERM_OWN && t.bg == CELLS_TERM_OWN && (t.attr & CELLS_TERM_DIM));
    c = (struct cell){0xB7, PAL_AXIS, PAL_BUBBLE, 0}; /* an idle dot */
    cells_term(&c, &t);
    CHECK(t.fg == CELLS_TERM_OWN && t.bg == CELLS_TERM_OWN && t.ch == 0xB7);
    c = (struct cell){' ', PAL_TEXT, PAL_DEFAULT, 0};
    cells_term(&c, &t);
    CHECK(t.bg == CELLS_TERM_OWN);
    c = (struct cell){'m', PAL_BG, PAL_TEXT, CELL_BOLD}; /* the title bar */
    cells_term(&c, &t);
    CHECK(t.fg == CELLS_TERM_OWN && t.bg == CELLS_TERM_OWN &&
          (t.attr & (CELL_REVERSE | CELL_BOLD)) == (CELL_REVERSE | CELL_BOLD));
    c = (struct cell){0x258C, PAL_DEFAULT, PAL_FW, 0}; /* ▌ empty on the left of a forward */
    cells_term(&c, &t);
    CHECK(t.fg == PAL_FW && t.bg == CELLS_TERM_OWN && (t.attr & CELL_REVERSE));
    c = (struct cell){0x2591, PAL_FW, PAL_BW, 0}; /* ░ forwards among backwards */
    cells_term(&c, &t);
    CHECK(t.fg == PAL_FW && t.bg == PAL_BW && t.attr == 0);
    c = (struct cell){0x2501, PAL_CRIT, PAL_BW, 0}; /* the critical thread */
    cells_term(&c, &t);
    CHECK(t.fg == PAL_CRIT && t.bg == PAL_BW);
}

int main(void)
{
    test_term();
    check_hand(SCHEME_V, v_hand, 3, "1F1B");
    check_hand(SCHEME_GPIPE, gpipe_hand, 3, "GPipe");
    test_v_cells();
    test_gpipe_forward_phase();
    test_lanes();
    test_measured_rows();
    test_iteration_marks();
    test_span();
    return check_report("test_paint_cells");
}
