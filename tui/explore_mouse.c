/* tui/explore_mouse.c: the explorer's mouse, as htop has it (issue 20): a click selects what
 * is under it (an instruction of the Gantt, a lane by its name, a pass step in the pass bar,
 * a row of the tuner or of the input-aware buckets; a click on the row already selected
 * loads it, as Enter does), the wheel zooms around the time under the pointer, a drag pans
 * the time axis. Positions are screen cells of the last draw: the views record where they
 * put things (explore.h: gantt_top, lane_h, pass_col, list_first). Like the keys, nothing
 * here draws; tui/screen.c turns curses mouse events into these calls and --keys can type
 * them (tui/cmd_explore.c), so the mouse is tested headless too. */
#include <config.h>
#include "tui/explore.h"

#include <math.h>
#include <stdio.h>

#include "sim/inputs/ckpt_plan.h"
#include "sim/plan/plan.h"
#include "tui/curses_compat.h"
#include "util/err.h"

/* The time at the middle of Gantt column col. */
static double mouse_time(const struct explore *x, int col)
{
    return x->t0 + (col - EXPLORE_GUTTER + 0.5) * x->tpc;
}

static bool mouse_in_gantt(const struct explore *x, int col, int row)
{
    int gw = explore_gantt_width(x, x->w);
    return x->mode == MODE_GANTT && x->lane_h > 0 && row >= x->gantt_top &&
           col >= EXPLORE_GUTTER && col < EXPLORE_GUTTER + gw;
}

/* The lane under screen row row, or -1 (the axis, a blank row between lanes). */
static int mouse_lane(const struct explore *x, int row)
{
    if (x->lane_h <= 0 || row < x->gantt_top)
        return -1;
    int k = (row - x->gantt_top) / x->lane_h;
    int lane = x->lane_top + k;
    int sub = (row - x->gantt_top) % x->lane_h;
    int rpl = x->show_meas && x->have_meas ? 1 : 0; /* the measured row belongs to its lane */
    if (sub >= x->lane_rows + rpl || lane >= explore_lanes(x))
        return -1;
    return lane;
}

/* Selects the box of lane under time t: the one covering it, else the nearest within a cell.
 * copy_dev >= 0: the copy (OF, RL) of that device's copy row, of any of its lanes. */
static int mouse_select(struct explore *x, int lane, int copy_dev, double t)
{
    const struct pass_step *st = explore_step(x);
    const struct plan_geom *g = plan_geom(st->plan);
    int dev = copy_dev >= 0 ? copy_dev : lane / g->parts, part = lane % g->parts, best = -1;
    double best_d = 0;
    for (int i = 0; i < plan_len(st->plan, dev); i++) {
        const struct instr *in = plan_at(st->plan, dev, i);
        if (copy_dev >= 0 ? !plan_op_is_copy(in->op)
                          : in->part != part || !(plan_op_is_compute(in->op) ||
                                                  in->op == OP_AR || in->op == OP_OS))
            continue;
        int id = plan_id(st->plan, dev, i);
        double s = st->sim.start[id], e = st->sim.end[id];
        double d = t < s ? s - t : t > e ? t - e : 0;
        if (best < 0 || d < best_d)
            best = i, best_d = d;
    }
    if (copy_dev >= 0 && best >= 0) /* the lane of the copy's forward */
        lane = dev * g->parts + plan_at(st->plan, dev, best)->part;
    else if (copy_dev >= 0)
        lane = dev * g->parts;
    x->sel_lane = lane;
    if (best < 0 || best_d > x->tpc) {
        snprintf(x->status, sizeof x->status, "lane %d: nothing there (idle)", lane);
        x->status_err = false;
        return R_REDRAW;
    }
    x->sel_idx = best;
    char label[32];
    plan_instr_label(st->plan, plan_at(st->plan, dev, best), label, sizeof label);
    snprintf(x->status, sizeof x->status, "%s on device %d", label, dev);
    x->status_err = false;
    return R_REDRAW;
}

static int mouse_click(struct explore *x, int col, int row)
{
    if (x->mode == MODE_TUNE || x->mode == MODE_BUCKETS) {
        int n = x->mode == MODE_TUNE ? view_tune_shown(x) : x->buckets != NULL ? x->buckets->n : 0;
        int i = x->list_first + row - (3 + 2); /* the view's top is row 3, 2 header rows */
        if (row < 5 || i < 0 || i >= n)
            return R_NONE;
        int *sel = x->mode == MODE_TUNE ? &x->tune_sel : &x->bucket_sel;
        if (*sel == i) /* the selected row again: load it */
            return explore_key(x, '\n');
        *sel = i;
        return R_REDRAW;
    }
    if (x->mode == MODE_HELP) {
        x->mode = MODE_GANTT;
        return R_REDRAW;
    }
    if (x->mode != MODE_GANTT)
        return R_NONE;
    if (row == 1) { /* the pass bar */
        for (int r = explore_rows(x) - 1; r >= 0; r--)
            if (r < 8 && col >= x->pass_col[r] && x->pass_col[r] > 0) {
                if (explore_set_row(x, r) == MT_OK) /* the search runs the first time */
                    explore_status_shown(x);
                return R_REDRAW;
            }
        return R_NONE;
    }
    int copy_dev = -1; /* copy rows (tui/view_copy.c) place lanes unevenly */
    int lane = x->copy_rows ? explore_row_lane(x, row, &copy_dev) : mouse_lane(x, row);
    if (copy_dev >= 0 && mouse_in_gantt(x, col, row)) /* a copy row: its copies */
        return mouse_select(x, -1, copy_dev, mouse_time(x, col));
    if (lane < 0)
        return R_NONE;
    if (col < EXPLORE_GUTTER) { /* a lane's name: the lane, at the time of the cursor */
        int dir = lane - x->sel_lane, r = R_NONE;
        for (int k = 0; k < (dir < 0 ? -dir : dir); k++)
            r |= explore_key(x, dir < 0 ? KEY_UP : KEY_DOWN);
        return r;
    }
    if (!mouse_in_gantt(x, col, row))
        return R_NONE;
    return mouse_select(x, lane, -1, mouse_time(x, col));
}

int explore_mouse(struct explore *x, enum explore_mouse ev, int col, int row)
{
    if (explore_step(x) == NULL || explore_too_small(x))
        return R_NONE;
    switch (ev) {
    case MOUSE_WHEEL_UP:
    case MOUSE_WHEEL_DOWN:
        if (x->mode == MODE_TUNE || x->mode == MODE_BUCKETS) /* the wheel scrolls a list */
            return explore_key(x, ev == MOUSE_WHEEL_UP ? KEY_UP : KEY_DOWN);
        if (!mouse_in_gantt(x, col, row))
            return R_NONE;
        return explore_zoom_at(x, ev == MOUSE_WHEEL_UP ? 0.5 : 2.0, mouse_time(x, col));
    case MOUSE_PRESS:
        x->drag = true;
        x->drag_moved = false;
        x->drag_col = col;
        x->drag_row = row;
        x->drag_t0 = x->t0;
        return R_NONE;
    case MOUSE_MOVE:
        if (!x->drag || x->mode != MODE_GANTT || !mouse_in_gantt(x, x->drag_col, x->drag_row))
            return R_NONE;
        if (col != x->drag_col)
            x->drag_moved = true;
        if (!x->drag_moved)
            return R_NONE;
        x->t0 = x->drag_t0 - (col - x->drag_col) * x->tpc; /* the axis follows the pointer */
        explore_clamp_t0(x);
        x->fitted = false;
        return R_REDRAW;
    case MOUSE_RELEASE: {
        if (!x->drag) /* a click whose press we did not see */
            return mouse_click(x, col, row);
        int r = explore_mouse(x, MOUSE_MOVE, col, row);
        x->drag = false;
        if (x->drag_moved)
            return r | R_REDRAW;
        return mouse_click(x, col, row);
    }
    }
    return R_NONE;
}
