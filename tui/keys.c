/* tui/keys.c: the explorer's key table (htop's Action bindings): one row per key, each an
 * action on the explorer's state that returns reaction flags and never draws. Keys follow
 * htop and less: q/F10 quit, ?/F1 help, arrows and hjkl, / search, Enter choose, Esc back. */
#include <config.h>
#include "tui/explore.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/plan/plan.h"
#include "tui/curses_compat.h"
#include "util/err.h"
#include "util/str.h"
#include "util/xalloc.h"

typedef int (*key_action)(struct explore *x);

static const struct pass_step *key_step(struct explore *x, int *dev, int *part)
{
    const struct pass_step *st = explore_step(x);
    if (st == NULL)
        return NULL;
    int parts = plan_geom(st->plan)->parts;
    *dev = x->sel_lane / parts;
    *part = x->sel_lane % parts;
    return st;
}

/* Keeps the selected instruction inside the Gantt window. */
static void key_follow(struct explore *x)
{
    int dev, part;
    const struct pass_step *st = key_step(x, &dev, &part);
    if (st == NULL || x->sel_idx >= plan_len(st->plan, dev))
        return;
    int id = plan_id(st->plan, dev, x->sel_idx);
    double s = st->sim.start[id], e = st->sim.end[id];
    double width = x->tpc * explore_gantt_width(x, x->w > 0 ? x->w : 120);
    if (s < x->t0)
        x->t0 = s - width * 0.1;
    else if (e > x->t0 + width)
        x->t0 = e - width * 0.9;
    if (x->t0 < 0)
        x->t0 = 0;
    int rows = x->lanes_shown > 0 ? x->lanes_shown /* as the last draw had room (copy rows) */
               : ((x->h > 0 ? x->h : 40) - 3 - EXPLORE_BOTTOM - 2) / (x->lane_h > 0 ? x->lane_h : 1);
    if (x->sel_lane < x->lane_top)
        x->lane_top = x->sel_lane;
    else if (rows > 0 && x->sel_lane >= x->lane_top + rows)
        x->lane_top = x->sel_lane - rows + 1;
}

/* What the cursor stops on in a lane: its boxes, and with copies (h/l, /) the offloads and
 * reloads of its forwards, drawn on the device's copy row (tui/view_copy.c). */
static bool key_is_box(const struct instr *in, int part, bool copies)
{
    return in->part == part && (plan_op_is_compute(in->op) || in->op == OP_AR ||
                                in->op == OP_OS || (copies && plan_op_is_copy(in->op)));
}

static int key_move_instr(struct explore *x, int dir)
{
    int dev, part;
    const struct pass_step *st = key_step(x, &dev, &part);
    if (st == NULL)
        return R_NONE;
    for (int i = x->sel_idx + dir; i >= 0 && i < plan_len(st->plan, dev); i += dir)
        if (key_is_box(plan_at(st->plan, dev, i), part, true)) {
            x->sel_idx = i;
            break;
        }
    key_follow(x);
    return R_REDRAW;
}

/* Moves to another lane, to the instruction nearest in time. */
static int key_move_lane(struct explore *x, int dir)
{
    int dev, part;
    const struct pass_step *st = key_step(x, &dev, &part);
    if (st == NULL)
        return R_NONE;
    int lane = x->sel_lane + dir;
    if (lane < 0 || lane >= explore_lanes(x))
        return R_NONE;
    double t = x->sel_idx < plan_len(st->plan, dev)
                   ? st->sim.start[plan_id(st->plan, dev, x->sel_idx)]
                   : 0;
    x->sel_lane = lane;
    key_step(x, &dev, &part);
    int best = -1;
    double best_d = 0;
    for (int i = 0; i < plan_len(st->plan, dev); i++) {
        if (!key_is_box(plan_at(st->plan, dev, i), part, false))
            continue;
        double d = st->sim.start[plan_id(st->plan, dev, i)] - t;
        d = d < 0 ? -d : d;
        if (best < 0 || d < best_d)
            best = i, best_d = d;
    }
    x->sel_idx = best < 0 ? 0 : best;
    key_follow(x);
    return R_REDRAW;
}

/* The zoom's limits: out to the whole step (the fit), in to EXPLORE_ZOOM_MAX times that. */
static double key_fit_tpc(const struct explore *x)
{
    double longest = explore_longest(x);
    return longest > 0 ? longest / explore_gantt_width(x, x->w > 0 ? x->w : 120) : 1;
}

/* t0 in [0, the end of the longest step less half a screen]: never a screen of nothing. */
void explore_clamp_t0(struct explore *x)
{
    double width = x->tpc * explore_gantt_width(x, x->w > 0 ? x->w : 120);
    double hi = explore_longest(x) - width / 2;
    if (x->t0 > hi)
        x->t0 = hi;
    if (x->t0 < 0)
        x->t0 = 0;
}

static int key_zoom(struct explore *x, double factor)
{
    int dev, part;
    const struct pass_step *st = key_step(x, &dev, &part);
    if (st == NULL)
        return R_NONE;
    double center = x->t0 + x->tpc * explore_gantt_width(x, x->w > 0 ? x->w : 120) / 2;
    if (x->sel_idx < plan_len(st->plan, dev))
        center = st->sim.start[plan_id(st->plan, dev, x->sel_idx)];
    return explore_zoom_at(x, factor, center);
}

int explore_zoom_at(struct explore *x, double factor, double center)
{
    if (explore_step(x) == NULL)
        return R_NONE;
    double fit = key_fit_tpc(x), tpc = x->tpc * factor;
    if (tpc >= fit * (1 - 1e-9)) { /* out past the whole step: the fit, and say so */
        explore_fit(x);
        snprintf(x->status, sizeof x->status, "zoom: the whole step is shown (0)");
        x->status_err = false;
        return R_REDRAW;
    }
    if (tpc < fit / EXPLORE_ZOOM_MAX) {
        snprintf(x->status, sizeof x->status, "zoom: at its limit, %d x the whole step",
                 EXPLORE_ZOOM_MAX);
        x->status_err = true;
        return R_REDRAW;
    }
    double left = (center - x->t0) / x->tpc;
    x->tpc = tpc;
    x->t0 = center - left * x->tpc;
    explore_clamp_t0(x);
    x->fitted = false;
    return R_REDRAW;
}

static int key_pan(struct explore *x, double screens)
{
    double t0 = x->t0;
    x->t0 += screens * x->tpc * explore_gantt_width(x, x->w > 0 ? x->w : 120);
    explore_clamp_t0(x);
    if (x->t0 == t0) {
        snprintf(x->status, sizeof x->status, "pan: at the %s of the step",
                 screens < 0 ? "start" : "end");
        x->status_err = false;
        return R_REDRAW;
    }
    x->fitted = false;
    return R_REDRAW;
}

static int a_quit(struct explore *x) { return R_QUIT; }
static int a_help(struct explore *x)
{
    x->mode = MODE_HELP;
    x->help_top = 0;
    return R_REDRAW;
}
static int a_left(struct explore *x) { return key_move_instr(x, -1); }
static int a_right(struct explore *x) { return key_move_instr(x, +1); }
static int a_up(struct explore *x) { return key_move_lane(x, -1); }
static int a_down(struct explore *x) { return key_move_lane(x, +1); }
static int a_zoom_in(struct explore *x) { return key_zoom(x, 0.5); }
static int a_zoom_out(struct explore *x) { return key_zoom(x, 2.0); }
static int a_pan_left(struct explore *x) { return key_pan(x, -0.5); }
static int a_pan_right(struct explore *x) { return key_pan(x, +0.5); }

static int a_fit(struct explore *x)
{
    explore_fit(x);
    x->lane_top = 0;
    return R_REDRAW;
}

/* n from the last step of an asynchronous plan: there is no search step to go to. */
static int key_no_search(struct explore *x)
{
    snprintf(x->status, sizeof x->status,
             "n: prepose is the last step: %s is asynchronous, no flush to search within",
             config_scheme_name(x->cfg.scheme));
    x->status_err = true;
    return R_REDRAW;
}

static int a_next_pass(struct explore *x)
{
    if (!x->bucket_on && x->row + 1 >= explore_rows(x) && x->row + 1 == PASS_ROW_SEARCH)
        return key_no_search(x);
    if (x->row + 1 < explore_rows(x) || x->bucket_on)
        if (explore_set_row(x, x->bucket_on ? x->row : x->row + 1) != MT_OK)
            return R_REDRAW; /* the status says why */
    explore_status_shown(x);
    return R_REDRAW;
}

static int a_prev_pass(struct explore *x)
{
    if (x->row > 0 || x->bucket_on)
        explore_set_row(x, x->bucket_on ? x->row : x->row - 1);
    explore_status_shown(x);
    return R_REDRAW;
}

static int a_critical(struct explore *x)
{
    explore_toggle_critical(x);
    snprintf(x->status, sizeof x->status, "critical path %s", x->critical ? "shown" : "hidden");
    x->status_err = false;
    return R_REDRAW;
}

static int a_search(struct explore *x)
{
    x->mode = MODE_PROMPT;
    x->prompt = PROMPT_SEARCH;
    x->input[0] = '\0';
    x->input_default = false;
    return R_REDRAW;
}

static int a_export(struct explore *x)
{
    x->mode = MODE_PROMPT;
    x->prompt = PROMPT_EXPORT;
    snprintf(x->input, sizeof x->input, "plan.json");
    x->input_default = true;
    return R_REDRAW;
}

static int a_trace(struct explore *x)
{
    x->mode = MODE_PROMPT;
    x->prompt = PROMPT_TRACE;
    snprintf(x->input, sizeof x->input, "%.127s", /* input is 128 bytes: -Wformat-truncation */
             x->trace_path[0] ? x->trace_path : "trace.json");
    x->input_default = true;
    return R_REDRAW;
}

static int a_overlay(struct explore *x)
{
    if (x->trace == NULL) {
        snprintf(x->status, sizeof x->status, "no trace loaded (T loads one)");
        x->status_err = true;
        return R_REDRAW;
    }
    x->show_meas = !x->show_meas;
    return R_REDRAW;
}

static int a_tune(struct explore *x)
{
    /* The loop in tui/screen.c runs the tuner with a live progress bar; headless runs it here.
     * A whole run on the shown config is shown again, not run again. */
    if (!explore_tune_reopen(x))
        explore_run_tuner(x, false, NULL, NULL);
    return R_REDRAW;
}

static int a_replay(struct explore *x) { return explore_toggle_replay(x); }

static int a_scheme(struct explore *x) { return explore_edit(x, EDIT_SCHEME, +1); }
static int a_iter_minus(struct explore *x) { return explore_edit(x, EDIT_ITERATIONS, -1); }
static int a_iter_plus(struct explore *x) { return explore_edit(x, EDIT_ITERATIONS, +1); }
static int a_update_minus(struct explore *x) { return explore_edit(x, EDIT_UPDATE, -1); }
static int a_update_plus(struct explore *x) { return explore_edit(x, EDIT_UPDATE, +1); }
static int a_dev_minus(struct explore *x) { return explore_edit(x, EDIT_DEVICES, -1); }
static int a_dev_plus(struct explore *x) { return explore_edit(x, EDIT_DEVICES, +1); }
static int a_mb_minus(struct explore *x) { return explore_edit(x, EDIT_MB_COUNT, -1); }
static int a_mb_plus(struct explore *x) { return explore_edit(x, EDIT_MB_COUNT, +1); }
static int a_mbs_minus(struct explore *x) { return explore_edit(x, EDIT_MB_SIZE, -1); }
static int a_mbs_plus(struct explore *x) { return explore_edit(x, EDIT_MB_SIZE, +1); }
static int a_chunks_minus(struct explore *x) { return explore_edit(x, EDIT_CHUNKS, -1); }
static int a_chunks_plus(struct explore *x) { return explore_edit(x, EDIT_CHUNKS, +1); }
static int a_cap_minus(struct explore *x) { return explore_edit(x, EDIT_CAP, -1); }
static int a_cap_plus(struct explore *x) { return explore_edit(x, EDIT_CAP, +1); }

static int a_buckets(struct explore *x) { return explore_buckets_open(x); }
/* Esc: an edit's passes that run behind its base plan stop, keeping the steps made. */
static int a_stop(struct explore *x) { return explore_build_stop(x); }
static int a_marks(struct explore *x) { return explore_toggle_marks(x); }
static int a_offload(struct explore *x) { return explore_toggle_offload(x); }

static const struct {
    int key;
    key_action action;
} key_table[] = {
    {'q', a_quit}, {KEY_F(10), a_quit}, {'?', a_help}, {KEY_F(1), a_help},
    {KEY_LEFT, a_left}, {'h', a_left}, {KEY_RIGHT, a_right}, {'l', a_right},
    {KEY_UP, a_up}, {'k', a_up}, {KEY_DOWN, a_down}, {'j', a_down},
    {'+', a_zoom_in}, {'=', a_zoom_in}, {'-', a_zoom_out}, {'0', a_fit},
    {'H', a_pan_left}, {'L', a_pan_right}, {KEY_PPAGE, a_pan_left}, {KEY_NPAGE, a_pan_right},
    {'n', a_next_pass}, {'p', a_prev_pass}, {'c', a_critical}, {'/', a_search},
    {'e', a_export}, {'T', a_trace}, {'o', a_overlay}, {'t', a_tune}, {'s', a_scheme},
    {'d', a_dev_minus}, {'D', a_dev_plus}, {'m', a_mb_minus}, {'M', a_mb_plus},
    {'b', a_mbs_minus}, {'B', a_mbs_plus}, {'v', a_chunks_minus}, {'V', a_chunks_plus},
    {'[', a_cap_minus}, {']', a_cap_plus},
    {'i', a_iter_minus}, {'I', a_iter_plus}, {'u', a_update_minus}, {'U', a_update_plus},
    {'a', a_buckets}, {'r', a_replay}, {'*', a_marks}, {'O', a_offload}, {27, a_stop},
};

/* "/" search: "12" (micro-batch), "BW" (op), "BW12" (op and micro-batch); the next match
 * after the cursor in device order, wrapping around. */
static void key_search(struct explore *x, const char *q)
{
    const struct pass_step *st = explore_step(x);
    if (st == NULL || *q == '\0')
        return;
    char opname[8] = "";
    int k = 0;
    while (isalpha((unsigned char)q[k]) && k < 7) {
        opname[k] = q[k];
        k++;
    }
    opname[k] = '\0';
    int op = opname[0] ? plan_op_parse(opname) : -1;
    int mb = -1;
    if (q[k]) {
        long v;
        if (str_parse_int(q + k, 0, 1 << 30, &v, NULL) != MT_OK) {
            snprintf(x->status, sizeof x->status, "search: '%s' is not OP, MB or OPMB", q);
            x->status_err = true;
            return;
        }
        mb = (int)v;
    }
    if (opname[0] && op < 0) {
        snprintf(x->status, sizeof x->status, "search: unknown op '%s'", opname);
        x->status_err = true;
        return;
    }
    const struct plan *p = st->plan;
    int parts = plan_geom(p)->parts, lanes = explore_lanes(x);
    int dev0 = x->sel_lane / parts;
    for (int step = 1; step <= plan_total(p) + 1; step++) {
        /* Walk devices from the cursor, wrapping. */
        int dev = dev0, idx = x->sel_idx + step;
        while (idx >= plan_len(p, dev)) {
            idx -= plan_len(p, dev);
            dev = (dev + 1) % plan_devices(p);
        }
        const struct instr *in = plan_at(p, dev, idx);
        bool box = key_is_box(in, in->part, true);
        if (box && (op < 0 || (int)in->op == op) && (mb < 0 || in->mb == mb)) {
            x->sel_lane = dev * parts + in->part;
            if (x->sel_lane >= lanes)
                x->sel_lane = lanes - 1;
            x->sel_idx = idx;
            key_follow(x);
            snprintf(x->status, sizeof x->status, "found on device %d", dev);
            x->status_err = false;
            return;
        }
    }
    snprintf(x->status, sizeof x->status, "search: no %s", q);
    x->status_err = true;
}

static int key_prompt(struct explore *x, int key)
{
    size_t n = strlen(x->input);
    if (key == 27) { /* Esc */
        x->mode = MODE_GANTT;
        explore_status_shown(x);
        return R_REDRAW;
    }
    if (key == '\n' || key == '\r' || key == KEY_ENTER) {
        x->mode = MODE_GANTT;
        if (x->prompt == PROMPT_SEARCH) {
            key_search(x, x->input);
        } else if (x->prompt == PROMPT_TRACE) {
            struct mt_err e = {0};
            if (explore_load_trace(x, x->input, &e) != MT_OK) {
                snprintf(x->status, sizeof x->status, "trace: %s", e.msg);
                x->status_err = true;
            }
        } else {
            struct mt_err e = {0};
            if (explore_export(x, x->input, &e) != MT_OK) {
                snprintf(x->status, sizeof x->status, "export: %s", e.msg);
                x->status_err = true;
            } else {
                snprintf(x->status, sizeof x->status, "wrote %s", x->input);
                x->status_err = false;
            }
        }
        return R_REDRAW;
    }
    bool replace = x->input_default;
    x->input_default = false;
    if (replace && key >= 32 && key < 127) {
        x->input[0] = '\0';
        n = 0;
    }
    if ((key == KEY_BACKSPACE || key == 127 || key == 8) && n > 0) {
        x->input[n - 1] = '\0';
        return R_REDRAW;
    }
    if (key >= 32 && key < 127 && n + 1 < sizeof x->input) {
        x->input[n] = (char)key;
        x->input[n + 1] = '\0';
    }
    return R_REDRAW;
}

static int key_tune_view(struct explore *x, int key)
{
    switch (key) {
    case 27: case 'q': x->mode = MODE_GANTT; explore_status_shown(x); return R_REDRAW;
    case KEY_UP: case 'k': if (x->tune_sel > 0) x->tune_sel--; return R_REDRAW;
    case KEY_DOWN: case 'j':
        if (x->tune_sel + 1 < view_tune_shown(x))
            x->tune_sel++;
        return R_REDRAW;
    case KEY_PPAGE: x->tune_sel = x->tune_sel > 10 ? x->tune_sel - 10 : 0; return R_REDRAW;
    case KEY_NPAGE:
        x->tune_sel = x->tune_sel + 10 < view_tune_shown(x) ? x->tune_sel + 10
                                                            : view_tune_shown(x) - 1;
        return R_REDRAW;
    case 'f': return view_tune_filter_next(x);
    case 'O': /* offload for the search mode: S runs it again with the other setting */
        if (explore_toggle_offload(x) && x->status_err)
            return R_REDRAW; /* refused: the status says why */
        if (x->tune_search && x->tune_offload != x->offload)
            x->tune_search = false;
        snprintf(x->status, sizeof x->status, "offload %s: S runs the tuner's search %s",
                 x->offload ? "on" : "off", x->offload ? "with offload" : "without offload");
        x->status_err = false;
        return R_REDRAW;
    case '\n': case '\r': case KEY_ENTER: explore_tune_load(x); return R_REDRAW;
    case 'S': /* the search as a third checkpointing mode (tui/screen.c shows its progress) */
        if (x->tune_search) {
            snprintf(x->status, sizeof x->status, "S: the tuner has the search%s already",
                     x->tune_offload ? " with offload" : "");
            x->status_err = false;
            return R_REDRAW;
        }
        explore_run_tuner(x, true, NULL, NULL);
        return R_REDRAW;
    default: return R_NONE;
    }
}

int explore_key(struct explore *x, int key)
{
    if (explore_too_small(x)) /* nothing on screen shows what a key would do */
        return key == 'q' || key == KEY_F(10) ? R_QUIT : R_NONE;
    if (x->mode == MODE_PROMPT)
        return key_prompt(x, key);
    if (x->mode == MODE_TUNE)
        return key_tune_view(x, key);
    if (x->mode == MODE_BUCKETS)
        return explore_buckets_key(x, key);
    if (x->mode == MODE_HELP) { /* j/k scroll a help taller than the screen; any other key returns */
        if (key == 'j' || key == KEY_DOWN || key == KEY_NPAGE) {
            x->help_top += key == KEY_NPAGE ? 10 : 1;
            return R_REDRAW;
        }
        if (key == 'k' || key == KEY_UP || key == KEY_PPAGE) {
            x->help_top -= key == KEY_PPAGE ? 10 : 1;
            if (x->help_top < 0)
                x->help_top = 0;
            return R_REDRAW;
        }
        x->mode = MODE_GANTT;
        return R_REDRAW;
    }
    for (size_t i = 0; i < sizeof key_table / sizeof key_table[0]; i++)
        if (key_table[i].key == key) {
            return key_table[i].action(x);
        }
    return R_NONE;
}
