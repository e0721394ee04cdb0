/* tests/unit/test_view_gantt.c: the explorer's Gantt (what `explore --dump-screen` draws and
 * the terminal shows), cell by cell against 1F1B and GPipe on 4 devices x 4 micro-batches
 * with the paper's unit costs (F = 1, B = 2: 21 t), worked out by hand as in
 * tests/unit/test_paint_cells.c: at 3 cells per t every cell lies inside one box or bubble;
 * at 2.1 t per cell each takes the colour of the op covering most of it (a bubble only where
 * idle time is more than half of it). Past the end of the step cells are the terminal's own
 * background (PAL_DEFAULT), never the page's white; --ascii gives the same colours; the
 * micro-batch numbers sit in their boxes and the cursor is on its box. */
#include <config.h>

#include <stdio.h>
#include <string.h>

#include "model/config.h"
#include "render/paint_cells.h"
#include "sim/plan/plan.h"
#include "tests/check.h"
#include "tests/unit_config.h"
#include "tui/explore.h"
#include "util/err.h"

#define TOP 3 /* the first lane's row */

static char letter(unsigned char pal)
{
    switch (pal) {
    case PAL_FW: return 'F';
    case PAL_BW: return 'B';
    case PAL_BUBBLE: return '.';
    case PAL_DEFAULT: return ' ';
    case PAL_BG: return '#';
    case PAL_ROW: return '%';
    default: return '?';
    }
}

/* Row y of the Gantt ([GUTTER, GUTTER + gw)) against want, whose character k holds for
 * cells [k * rep, (k + 1) * rep); cells past want are PAL_DEFAULT. */
static void check_lane(const struct cells *g, int gw, int y, const char *want, int rep,
                       const char *what)
{
    char got[512], exp[512];
    for (int i = 0; i < gw && i < 511; i++) {
        got[i] = letter(g->c[(size_t)y * g->w + EXPLORE_GUTTER + i].bg);
        int k = i / rep;
        exp[i] = k < (int)strlen(want) ? want[k] : ' ';
    }
    got[gw] = exp[gw] = '\0';
    check_count++;
    if (strcmp(got, exp) != 0) {
        check_failures++;
        fprintf(stderr, "%s: %s lane %d:\n  want \"%s\"\n  got  \"%s\"\n", __FILE__, what, y - TOP,
                exp, got);
    }
}

static const char *v21[4] = {"FFFF......BB.BB.BB.BB", ".FFF....BBFBB.BB.BB..",
                             "..FF..BBFBBFBB.BB....", "...FBBFBBFBBFBB......"};
static const char *v10[4] = {"FF...BBBBB", "FF..BBBBB.", ".F.BBBBB..", ".FBBBBB..."};
static const char *g21[4] = {"FFFF.........BBBBBBBB", ".FFFF......BBBBBBBB..",
                             "..FFFF...BBBBBBBB....", "...FFFFBBBBBBBB......"};
static const char *g10[4] = {"FF....BBBB", "FF...BBBB.", ".FF.BBBB..", ".FFBBBB..."};

/* Draws the explorer at 3 cells per t and at 2.1 t per cell, with and without UTF-8. */
static void check_scheme(enum scheme_id scheme, const char *const fine[4],
                         const char *const coarse[4], const char *name)
{
    struct cells *grid[2][2];
    for (int utf8 = 0; utf8 < 2; utf8++) {
        struct config c = test_unit_config(scheme, 4, 4, 1, 2, 1);
        struct explore x;
        struct mt_err e = {0};
        CHECK_EQ_INT(explore_init(&x, &c, NULL, utf8, &e), MT_OK);
        int w = 84 + EXPLORE_GUTTER + EXPLORE_MEM_W + 1, h = 30;
        int gw = explore_gantt_width(&x, w);
        CHECK_EQ_INT(gw, 84);
        x.w = w, x.h = h;
        CHECK_NEAR(explore_step(&x)->sim.step_time, 21, 1e-9);
        for (int k = 0; k < 2; k++) {
            x.fitted = false;
            x.t0 = 0;
            x.tpc = k == 0 ? 1.0 / 3 : 2.1;
            struct cells *g = cells_new(w, h, utf8);
            explore_draw(&x, g);
            char what[64];
            snprintf(what, sizeof what, "%s, %s per cell%s", name, k == 0 ? "1/3 t" : "2.1 t",
                     utf8 ? "" : ", --ascii");
            for (int d = 0; d < 4; d++)
                for (int r = 0; r < x.lane_rows; r++) /* each row of a lane alike */
                    check_lane(g, gw, TOP + d * x.lane_h + r, k == 0 ? fine[d] : coarse[d],
                               k == 0 ? 3 : 1, what);
            /* The page's white is no fill of a lane, and ink only of labels (white on dark
             * boxes). */
            int page = 0;
            for (int y = TOP; y < TOP + 4 * x.lane_h; y++)
                for (int i = EXPLORE_GUTTER; i < EXPLORE_GUTTER + gw; i++) {
                    if ((y - TOP) % x.lane_h >= x.lane_rows)
                        continue; /* the blank row between lanes */
                    const struct cell *cl = cells_at(g, i, y);
                    bool digit = (cl->ch >= '0' && cl->ch <= '9') || (cl->ch >= 'A' && cl->ch <= 'Z');
                    bool underline = cl->attr & CELL_UNDERLINE; /* the selection's ink */
                    page += cl->bg == PAL_BG || cl->bg == PAL_ROW ||
                            ((cl->fg == PAL_BG || cl->fg == PAL_ROW) && !digit && !underline);
                }
            CHECK_EQ_INT(page, 0);
            grid[utf8][k] = g;
        }
        /* Micro-batch numbers in the middle of their boxes (3 cells per t): dev 0's FW0 on
         * cells [0, 3), FW1 [3, 6), BW0 [30, 36) (1F1B: 10-12 t) or [39, 45) (GPipe: 13-15 t);
         * dev 3's FW1 [18, 21) (1F1B: 6-7 t) or [12, 15) (GPipe: 4-5 t). The cursor starts
         * on dev 0's FW0. */
        struct cells *g = grid[utf8][0];
        bool v = scheme == SCHEME_V;
        /* 30 rows leave 18 for 4 lanes: 3 rows each and a blank one; op names on the first,
         * micro-batches on the second ("FW" centred in 3 cells: cells 0-1) */
        CHECK_EQ_INT(x.lane_rows, 3);
        CHECK_EQ_INT(x.lane_h, 4);
        int mb = TOP + 1, lane3 = 3 * x.lane_h;
        CHECK_EQ_INT(cells_at(g, EXPLORE_GUTTER + 0, TOP)->ch, 'F');
        CHECK_EQ_INT(cells_at(g, EXPLORE_GUTTER + 1, TOP)->ch, 'W');
        CHECK_EQ_INT(cells_at(g, EXPLORE_GUTTER + 1, mb)->ch, '0');
        CHECK_EQ_INT(cells_at(g, EXPLORE_GUTTER + 4, mb)->ch, '1');
        CHECK_EQ_INT(cells_at(g, EXPLORE_GUTTER + (v ? 32 : 41), mb)->ch, '0');
        CHECK_EQ_INT(cells_at(g, EXPLORE_GUTTER + (v ? 19 : 13), mb + lane3)->ch, '1');
        /* the cursor: its box underlined in bold on every row of the lane, never reversed
         * (reverse video read as idle time on a dark terminal); a caret on the axis */
        for (int r = 0; r < 3; r++)
            for (int i = 0; i < 6; i++) {
                unsigned a = cells_at(g, EXPLORE_GUTTER + i, TOP + r)->attr;
                CHECK_EQ_INT(!!(a & CELL_UNDERLINE), i < 3);
                CHECK_EQ_INT(!!(a & CELL_REVERSE), 0);
            }
        int axis = TOP + 4 * x.lane_h - 1;
        CHECK_EQ_INT(cells_at(g, EXPLORE_GUTTER, axis)->ch, utf8 ? 0x25B2 : '^');
        /* Zoomed in and panned (the view keeps the layout and paints only its window,
         * tui/view_gantt.c): from 11 t, inside dev 0's BW0 of 1F1B (10-12 t) and GPipe's BW
         * phase, at 3 cells per t the lanes are the same strings from their 11th character: a
         * box that began before the window still fills its cells. Then from 5 2/3 t: the
         * first cell is the last third of t 5, the rest the strings from their 6th character.
         * Both after frames of other windows, so nothing of those stays. */
        for (int k = 0; k < 2; k++) {
            x.fitted = false;
            x.t0 = k == 0 ? 11 : 5 + 2.0 / 3;
            x.tpc = 1.0 / 3;
            struct cells *gz = cells_new(w, h, utf8);
            explore_draw(&x, gz);
            for (int d = 0; d < 4; d++) {
                char got[512], exp[512], what[64];
                for (int i = 0; i < gw && i < 511; i++) {
                    got[i] = letter(gz->c[(size_t)(TOP + d * x.lane_h) * gz->w + EXPLORE_GUTTER + i].bg);
                    int t = k == 0 ? 11 + i / 3 : i == 0 ? 5 : 6 + (i - 1) / 3; /* the cell's t */
                    exp[i] = t < (int)strlen(fine[d]) ? fine[d][t] : ' ';
                }
                got[gw] = exp[gw] = '\0';
                snprintf(what, sizeof what, "%s from %.4g t%s", name, x.t0,
                         utf8 ? "" : ", --ascii");
                check_count++;
                if (strcmp(got, exp) != 0) {
                    check_failures++;
                    fprintf(stderr, "%s: %s lane %d:\n  want \"%s\"\n  got  \"%s\"\n", __FILE__, what,
                            d, exp, got);
                }
            }
            cells_free(gz);
        }
        explore_fini(&x);
    }
    for (int k = 0; k < 2; k++) { /* --ascii: the same colour in every cell */
        int differ = 0;
        for (int i = 0; i < grid[0][k]->w * grid[0][k]->h; i++)
            differ += grid[0][k]->c[i].bg != grid[1][k]->c[i].bg;
        CHECK_EQ_INT(differ, 0);
        cells_free(grid[0][k]);
        cells_free(grid[1][k]);
    }
}

int main(void)
{
    check_scheme(SCHEME_V, v21, v10, "1F1B");
    check_scheme(SCHEME_GPIPE, g21, g10, "GPipe");
    return check_report("test_view_gantt");
}
