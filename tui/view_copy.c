/* tui/view_copy.c: the Gantt view's copy rows (issue 29): a plan that offloads (OF/RL) gets
 * one row under each device's lanes where its copies run beside its compute, as the exports
 * draw them (render/layout_copy.c makes the boxes: OF in the top half of the band, device to
 * host, RL in the bottom half, host to device). A terminal row holds both halves: a cell is ▀
 * where an offload runs, ▄ where a reload runs, █ where both do (the two copy engines work at
 * once, so one glyph per cell for one direction would hide the other), in the copies' colour;
 * without UTF-8 o, r and #. The shape says the direction, so it reads without colour too.
 * Beside the row, in the memory column, the device's host memory: the most its offloaded
 * activations hold at once (sim/core/simulate.h host_peak), against the host cap per device
 * when there is one. A plan without copies gets no row: its screen is as before.
 * A MoE plan whose simulation has expert all-to-alls (sim/core/overlap.h) and no copies gets
 * the same row for its all-to-all lane, as the exports draw it (render/layout_a2a.c): ━ where an
 * all-to-all is exposed (vermillion), ─ where one runs hidden under its F&B partner (grey);
 * without UTF-8 = and -. A plan with both keeps the copies on the row. */
#include <config.h>
#include "tui/explore.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "render/layout.h"
#include "render/layout_a2a.h"
#include "render/layout_copy.h"
#include "render/paint_cells.h"
#include "sim/core/simulate.h"
#include "sim/plan/plan.h"
#include "util/xalloc.h"

/* The shown step's copy boxes (render/layout_copy.h, at x = t), device by device: items
 * off[d] .. off[d + 1] of l are device d's; made once per (step, shown_gen). */
struct copy_cache {
    const struct pass_step *step;
    unsigned gen;
    bool a2a; /* the row is the all-to-all lane (no copies) */
    struct layout *l;
    int *off; /* [devices + 1] */
};

void view_copy_cache_free(struct explore *x)
{
    struct copy_cache *c = x->copy_cache;
    if (c == NULL)
        return;
    layout_free(c->l);
    free(c->off);
    free(c);
    x->copy_cache = NULL;
}

static const struct copy_cache *copy_cached(struct explore *x)
{
    const struct pass_step *st = explore_step(x);
    struct copy_cache *c = x->copy_cache;
    if (c != NULL && c->step == st && c->gen == x->shown_gen)
        return c;
    view_copy_cache_free(x);
    c = xcalloc(1, sizeof *c);
    c->step = st, c->gen = x->shown_gen;
    c->l = layout_new(1, 1);
    int devices = plan_devices(st->plan);
    c->off = xmalloc(((size_t)devices + 1) * sizeof *c->off);
    struct layout_panel panel = {NULL, st->plan, &st->sim, NULL};
    const bool *has = explore_shown_ops(x);
    c->a2a = !has[OP_OF] && !has[OP_RL];
    for (int d = 0; d < devices; d++) { /* the band [0, 2): OF at y 0, RL at y 1 */
        c->off[d] = layout_count(c->l);
        if (c->a2a)
            layout_a2a_boxes(c->l, &panel, 0, d, 0, 1, 0, 1);
        else
            layout_copy_boxes(c->l, &panel, 0, d, 0, 1, 0, 2);
    }
    c->off[devices] = layout_count(c->l);
    x->copy_cache = c;
    return c;
}

int view_copy_rows(struct explore *x)
{
    const bool *has = explore_shown_ops(x);
    const struct pass_step *st = explore_step(x);
    if (st == NULL)
        return 0;
    struct layout_panel panel = {NULL, st->plan, &st->sim, NULL};
    return has[OP_OF] || has[OP_RL] || layout_a2a_any(&panel, 1);
}

int explore_lane_y(const struct explore *x, int lane)
{
    int parts = x->copy_parts > 0 ? x->copy_parts : 1;
    return (lane - x->lane_top) * x->lane_h + x->copy_rows * (lane / parts - x->lane_top / parts);
}

int explore_copy_y(const struct explore *x, int dev)
{
    int parts = x->copy_parts > 0 ? x->copy_parts : 1;
    int rpl = x->show_meas && x->have_meas ? 2 : 1;
    return explore_lane_y(x, dev * parts + parts - 1) + x->lane_rows + rpl - 1;
}

int explore_row_lane(const struct explore *x, int row, int *copy_dev)
{
    *copy_dev = -1;
    int off = row - x->gantt_top, parts = x->copy_parts > 0 ? x->copy_parts : 1;
    int rpl = x->show_meas && x->have_meas ? 1 : 0; /* the measured row belongs to its lane */
    if (x->lane_h <= 0 || off < 0)
        return -1;
    for (int lane = x->lane_top; lane < explore_lanes(x); lane++) {
        int y = explore_lane_y(x, lane);
        if (y > off)
            break;
        if (off < y + x->lane_rows + rpl)
            return lane;
        if (x->copy_rows && lane % parts == parts - 1 && off == explore_copy_y(x, lane / parts)) {
            *copy_dev = lane / parts;
            return -1;
        }
    }
    return -1;
}

int view_copy_fit(const struct explore *x, int lane_top, int lanes, int avail)
{
    int parts = x->copy_parts > 0 ? x->copy_parts : 1, shown = 0;
    for (int lane = lane_top; lane < lanes; lane++) {
        int copies = x->copy_rows * (lane / parts - lane_top / parts + (lane % parts == parts - 1));
        if ((lane - lane_top + 1) * x->lane_h + copies > avail)
            break;
        shown++;
    }
    return shown;
}

/* The copies of device d that cover cells of [t0, t0 + gw * tpc): in mark[c] bit 1 an OF,
 * bit 2 an RL, in id[2 * c + half] the plan id of the copy there. A copy marks the cells it
 * covers at least half of, or when it covers none so much, the cell of its middle. */
static void copy_cells(const struct explore *x, const struct copy_cache *c, int d, int gw,
                       unsigned char *mark, int *id)
{
    const struct layout_item *items = layout_items(c->l);
    for (int k = c->off[d]; k < c->off[d + 1]; k++) {
        const struct layout_item *it = &items[k];
        double s = (it->t0 - x->t0) / x->tpc, e = (it->t1 - x->t0) / x->tpc;
        if (e <= 0 || s >= gw)
            continue;
        /* render/layout_copy.c: RL in the bottom half; the all-to-all lane: hidden as half 1 */
        int half = c->a2a ? it->color != PAL_MEM_OVER : it->y > 0.5;
        bool any = false;
        for (int col = (int)floor(fmax(s, 0)); col < gw && col < e; col++)
            if (fmin(e, col + 1) - fmax(s, col) >= 0.5) {
                mark[col] |= (unsigned char)(1 << half);
                id[2 * col + half] = it->id;
                any = true;
            }
        int mid = (int)floor((s + e) / 2);
        if (!any && mid >= 0 && mid < gw) {
            mark[mid] |= (unsigned char)(1 << half);
            id[2 * mid + half] = it->id;
        }
    }
}

/* The glyph of a cell where only op (OF or RL) runs. */
static uint32_t copy_glyph(const struct explore *x, enum op op)
{
    return x->utf8 ? (op == OP_OF ? 0x2580 : 0x2584) : (op == OP_OF ? 'o' : 'r');
}

void view_copy_swatch(struct explore *x, struct cells *g, int col, int y, enum op op)
{
    cells_put(g, col, y, copy_glyph(x, op), PAL_COMM, PAL_DEFAULT, 0);
}

/* Device d's host memory beside its copy row: [host peak   |cap] peak. */
static void copy_host_bar(struct explore *x, struct cells *g, int y, int col,
                          const struct sim_result *r, int d, double scale)
{
    int bw = explore_mem_width(x, g->w) - 8;
    if (bw < 1)
        bw = 1;
    double peak = r->dev[d].host_peak;
    bool over = r->host_cap > 0 && peak > r->host_cap;
    cells_put(g, col, y, x->utf8 ? 0x2595 : '[', PAL_AXIS, PAL_BG, 0);
    cells_bar(g, col + 1, y, bw, 0, over ? r->host_cap : peak, scale, PAL_COMM);
    if (over)
        cells_bar(g, col + 1, y, bw, r->host_cap, peak, scale, PAL_MEM_OVER);
    if (r->host_cap > 0) {
        int cx = col + 1 + (int)(r->host_cap / scale * bw + 0.5);
        struct cell *c = cells_at(g, cx > col + bw ? col + bw : cx, y);
        if (c != NULL) {
            c->ch = x->utf8 ? 0x2502 : '|';
            c->fg = PAL_CAP;
        }
    }
    char t[24];
    explore_fmt_peak(x, peak, r->host_cap, t, sizeof t);
    cells_printf(g, col + bw + 2, y, 7, over ? PAL_MEM_OVER : PAL_TEXT_DIM, PAL_BG,
                 over ? CELL_BOLD : 0, "%6s", t);
}

void view_copy_draw(struct explore *x, struct cells *g, int top, int bottom, int sel_id,
                    double mem_scale)
{
    const struct pass_step *st = explore_step(x);
    if (!x->copy_rows || st == NULL)
        return;
    const struct copy_cache *c = copy_cached(x);
    const struct sim_result *r = &st->sim;
    int gx = EXPLORE_GUTTER, gw = explore_gantt_width(x, g->w);
    double hscale = fmax(mem_scale, r->host_cap); /* the devices' scale, or the host cap's */
    for (int d = 0; d < r->devices; d++)
        hscale = fmax(hscale, r->dev[d].host_peak);
    unsigned char *mark = xcalloc((size_t)gw + 1, 1);
    int *id = xmalloc(2 * ((size_t)gw + 1) * sizeof *id);
    for (int d = 0; d < r->devices; d++) {
        int y = top + explore_copy_y(x, d);
        int last = d * x->copy_parts + x->copy_parts - 1;
        if (last < x->lane_top || y < top || y >= bottom)
            continue;
        memset(mark, 0, (size_t)gw + 1);
        copy_cells(x, c, d, gw, mark, id);
        if (c->a2a) { /* exposed wins a cell it shares with a hidden one */
            cells_text(g, 0, y, EXPLORE_GUTTER - 1, " a2a", PAL_TEXT_DIM, PAL_BG, 0);
            for (int col = 0; col < gw; col++)
                if (mark[col] != 0)
                    cells_put(g, gx + col, y,
                              mark[col] & 1 ? (x->utf8 ? 0x2501 : '=') : (x->utf8 ? 0x2500 : '-'),
                              mark[col] & 1 ? PAL_MEM_OVER : PAL_SYNC, PAL_DEFAULT, 0);
            continue;
        }
        cells_text(g, 0, y, EXPLORE_GUTTER - 1, " host", PAL_TEXT_DIM, PAL_BG, 0);
        for (int col = 0; col < gw; col++) {
            if (mark[col] == 0)
                continue;
            uint32_t glyph = mark[col] == 1   ? copy_glyph(x, OP_OF)
                             : mark[col] == 2 ? copy_glyph(x, OP_RL)
                             : x->utf8        ? 0x2588 /* █: both */
                                              : '#';
            bool sel = false, crit = false;
            for (int half = 0; half < 2; half++) {
                if (!(mark[col] & (1 << half)))
                    continue;
                int cid = id[2 * col + half];
                sel |= cid == sel_id;
                crit |= x->critical && x->on_path != NULL && x->on_path[cid];
            }
            cells_put(g, gx + col, y, glyph, crit ? PAL_CRIT : PAL_COMM,
                      PAL_DEFAULT, sel ? CELL_BOLD | CELL_UNDERLINE : 0);
            if (sel && x->sel_col < 0)
                x->sel_col = gx + col;
        }
        copy_host_bar(x, g, y, gx + gw + 1, r, d, hscale);
    }
    free(mark);
    free(id);
}
