/* render/paint_cells.c: the cell canvas and the terminal painter of render/layout.h.
 *
 * Spans (bars) are drawn in eighths over what a cell holds: its glyph is read back as eight
 * slots (a left block of n eighths = n slots of its ink, the rest its background), the span
 * is laid over them and the cell is written back, so a cell two spans share keeps both
 * colours and never shows a colour neither had.
 *
 * The Gantt rows are painted from a layout's rows (render/layout_lanes.h: its instruction
 * boxes and bubbles, read from a layout or made as the layout would), not from the plan: every
 * cell weighs what covers it (time per colour over the cell's interval) and
 * takes one colour, the same with and without UTF-8, so a box narrower than a cell still
 * counts, a bubble is drawn only where idle time is most of a cell, and an empty cell is the
 * terminal's own background (PAL_DEFAULT), never the page's white. */
#include <config.h>
#include "render/paint_cells.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "render/layout.h"
#include "render/layout_lanes.h"
#include "util/xalloc.h"

/* ▏▎▍▌▋▊▉ for 1..7 eighths. */
static const uint32_t cells_left_block[8] = {' ', 0x258F, 0x258E, 0x258D,
                                             0x258C, 0x258B, 0x258A, 0x2589};

struct cells *cells_new(int w, int h, bool utf8)
{
    struct cells *g = xcalloc(1, sizeof *g);
    g->w = w > 0 ? w : 1;
    g->h = h > 0 ? h : 1;
    g->utf8 = utf8;
    g->c = xcalloc((size_t)g->w * g->h, sizeof *g->c);
    cells_clear(g, PAL_BG);
    return g;
}

void cells_free(struct cells *g)
{
    if (g == NULL)
        return;
    free(g->c);
    free(g);
}

void cells_clear(struct cells *g, enum pal bg)
{
    for (int i = 0; i < g->w * g->h; i++)
        g->c[i] = (struct cell){' ', PAL_TEXT, (unsigned char)bg, 0};
}

struct cell *cells_at(struct cells *g, int x, int y)
{
    if (x < 0 || y < 0 || x >= g->w || y >= g->h)
        return NULL;
    return &g->c[(size_t)y * g->w + x];
}

void cells_put(struct cells *g, int x, int y, uint32_t ch, enum pal fg, enum pal bg,
               unsigned attr)
{
    struct cell *c = cells_at(g, x, y);
    if (c == NULL)
        return;
    if (!g->utf8 && ch > 0x7e)
        ch = '?';
    *c = (struct cell){ch, (unsigned char)fg, (unsigned char)bg, (unsigned char)attr};
}

static uint32_t cells_decode(const char **s)
{
    const unsigned char *p = (const unsigned char *)*s;
    uint32_t cp;
    int n;
    if (p[0] < 0x80)
        cp = p[0], n = 1;
    else if ((p[0] & 0xE0) == 0xC0 && (p[1] & 0xC0) == 0x80)
        cp = ((uint32_t)(p[0] & 0x1F) << 6) | (p[1] & 0x3F), n = 2;
    else if ((p[0] & 0xF0) == 0xE0 && (p[1] & 0xC0) == 0x80 && (p[2] & 0xC0) == 0x80)
        cp = ((uint32_t)(p[0] & 0x0F) << 12) | ((uint32_t)(p[1] & 0x3F) << 6) | (p[2] & 0x3F),
        n = 3;
    else
        cp = '?', n = 1;
    *s += n;
    return cp;
}

int cells_text(struct cells *g, int x, int y, int max_w, const char *s, enum pal fg, enum pal bg,
               unsigned attr)
{
    int n = 0, lim = max_w > 0 ? max_w : g->w - x;
    while (*s && n < lim) {
        uint32_t cp = cells_decode(&s);
        if (!g->utf8 && cp == 0x03B8) /* θ */
            cp = 't';
        cells_put(g, x + n, y, cp, fg, bg, attr);
        n++;
    }
    return n;
}

int cells_printf(struct cells *g, int x, int y, int max_w, enum pal fg, enum pal bg,
                 unsigned attr, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return cells_text(g, x, y, max_w, buf, fg, bg, attr);
}

/* ---- spans: a cell as eight slots ----------------------------------------------------- */

/* The colours of a cell's eight eighths, read back from its glyph. */
static void cells_slots(const struct cell *c, unsigned char slot[8])
{
    int n = 0; /* eighths of fg from the left */
    bool right = false;
    if (c->ch >= 0x2589 && c->ch <= 0x258F)
        n = 0x258F - (int)c->ch + 1;
    else if (c->ch == 0x2588)
        n = 8;
    else if (c->ch == 0x2590) /* ▐ */
        n = 4, right = true;
    else if (c->ch == 0x2595) /* ▕ */
        n = 1, right = true;
    for (int i = 0; i < 8; i++)
        slot[i] = (right ? i >= 8 - n : i < n) ? c->fg : c->bg;
}

/* Writes the slots back as the blank cell or left block (a colour on [0, k), another on
 * [k, 8)) that gets the fewest slots wrong; of equals, one that shows the colour just laid
 * (keep), so a span narrower than a cell still shows. */
static void cells_from_slots(struct cell *c, const unsigned char slot[8], unsigned char keep)
{
    unsigned char col[8], best_a = slot[0], best_b = slot[0];
    int n = 0, best_k = 8, best_bad = 9;
    bool best_keeps = false;
    for (int i = 0; i < 8; i++) {
        int j = 0;
        while (j < n && col[j] != slot[i])
            j++;
        if (j == n)
            col[n++] = slot[i];
    }
    for (int k = 1; k <= 8; k++)
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) {
                unsigned char a = col[i], b = col[j];
                if ((k == 8) != (a == b))
                    continue; /* a blank cell (k = 8) has one colour, a block two */
                int bad = 0;
                for (int s = 0; s < 8; s++)
                    bad += slot[s] != (s < k ? a : b);
                bool keeps = a == keep || (k < 8 && b == keep);
                if (bad < best_bad || (bad == best_bad && keeps && !best_keeps))
                    best_a = a, best_b = b, best_k = k, best_bad = bad, best_keeps = keeps;
            }
    if (best_k == 8)
        *c = (struct cell){' ', PAL_TEXT, best_a, 0};
    else
        *c = (struct cell){cells_left_block[best_k], best_a, best_b, 0};
}

void cells_span(struct cells *g, int y, int x0_8, int x1_8, enum pal color)
{
    if (x1_8 <= x0_8 || y < 0 || y >= g->h)
        return;
    int cx0 = x0_8 >> 3, cx1 = (x1_8 - 1) >> 3;
    if (!g->utf8) { /* whole cells: those the span covers at least half of, at least one */
        int best = cx0, best_n = 0;
        bool any = false;
        for (int x = cx0; x <= cx1; x++) {
            int lo = x0_8 > x * 8 ? x0_8 - x * 8 : 0, hi = x1_8 < x * 8 + 8 ? x1_8 - x * 8 : 8;
            struct cell *c = cells_at(g, x, y);
            if (hi - lo > best_n)
                best = x, best_n = hi - lo;
            if (c != NULL && hi - lo >= 4) {
                *c = (struct cell){' ', PAL_TEXT, (unsigned char)color, 0};
                any = true;
            }
        }
        struct cell *c = cells_at(g, best, y);
        if (!any && c != NULL)
            *c = (struct cell){' ', PAL_TEXT, (unsigned char)color, 0};
        return;
    }
    for (int x = cx0; x <= cx1; x++) {
        struct cell *c = cells_at(g, x, y);
        if (c == NULL)
            continue;
        int lo = x0_8 > x * 8 ? x0_8 - x * 8 : 0, hi = x1_8 < x * 8 + 8 ? x1_8 - x * 8 : 8;
        unsigned char slot[8];
        cells_slots(c, slot);
        for (int i = lo; i < hi; i++)
            slot[i] = (unsigned char)color;
        cells_from_slots(c, slot, (unsigned char)color);
    }
}

void cells_bar(struct cells *g, int x, int y, int width, double from, double to, double max,
               enum pal color)
{
    if (max <= 0 || width <= 0)
        return;
    double f = from / max, t = to / max;
    f = f < 0 ? 0 : f > 1 ? 1 : f;
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    cells_span(g, y, x * 8 + (int)(f * width * 8 + 0.5), x * 8 + (int)(t * width * 8 + 0.5),
               color);
}

/* ---- the Gantt rows of a layout ------------------------------------------------------ */

/* What covers one cell: time per colour, where each colour starts, the instruction of each
 * colour covering the most, and the cell's first two runs (maximal same-colour stretches). */
struct cells_acc {
    double cov[PAL__COUNT], first[PAL__COUNT], best_len[PAL__COUNT];
    int best_id[PAL__COUNT];
    int runs;
    unsigned char run_color[2], last;
    double run_len[2];
};

static void cells_acc_add(struct cells_acc *a, unsigned char color, double pos, double len, int id)
{
    if (a->cov[color] == 0)
        a->first[color] = pos;
    a->cov[color] += len;
    if (id >= 0 && len > a->best_len[color])
        a->best_len[color] = len, a->best_id[color] = id;
    if (a->runs > 0 && a->last == color) {
        if (a->runs <= 2)
            a->run_len[a->runs - 1] += len;
        return;
    }
    if (a->runs < 2)
        a->run_color[a->runs] = color, a->run_len[a->runs] = len;
    a->runs++;
    a->last = color;
}

/* The colour of a cell of length tpc (module comment in render/paint_cells.h). */
static unsigned char cells_acc_color(const struct cells_acc *a, double tpc, double eps)
{
    if (a->cov[PAL_BUBBLE] > tpc / 2 + eps)
        return PAL_BUBBLE;
    int best = -1;
    for (int c = 0; c < PAL__COUNT; c++) {
        if (c == PAL_BUBBLE || c == PAL_DEFAULT || a->cov[c] <= eps)
            continue;
        if (best < 0 || a->cov[c] > a->cov[best] + eps ||
            (a->cov[c] >= a->cov[best] - eps && a->first[c] < a->first[best]))
            best = c;
    }
    return best >= 0 ? (unsigned char)best : PAL_DEFAULT;
}

/* Paints one row: segs sorted by start, columns [v->x, v->x + v->w) of grid row y. */
static void cells_gantt_row(struct cells *g, const struct cells_gantt *v, int y,
                            const struct layout_seg *segs, int n)
{
    const double tpc = v->tpc, eps = tpc * 1e-9;
    int lo = 0;
    for (int i = 0; i < v->w; i++) {
        struct cell *c = cells_at(g, v->x + i, y);
        if (c == NULL)
            continue;
        double c0 = v->t0 + i * tpc, c1 = c0 + tpc, pos = c0;
        struct cells_acc a;
        memset(&a, 0, sizeof a);
        while (lo < n && segs[lo].t1 <= c0)
            lo++;
        for (int j = lo; j < n && segs[j].t0 < c1; j++) {
            double s = segs[j].t0 > pos ? segs[j].t0 : pos, e = segs[j].t1 < c1 ? segs[j].t1 : c1;
            if (e - s <= eps)
                continue;
            if (s - pos > eps) /* nothing between: another lane's time, or past the end */
                cells_acc_add(&a, PAL_DEFAULT, pos, s - pos, -1);
            cells_acc_add(&a, segs[j].color, s, e - s, segs[j].id);
            pos = e;
        }
        if (c1 - pos > eps)
            cells_acc_add(&a, PAL_DEFAULT, pos, c1 - pos, -1);
        unsigned char bg = cells_acc_color(&a, tpc, eps);
        *c = (struct cell){' ', PAL_TEXT, bg, 0};
        if (g->utf8 && a.runs == 2) { /* where the other part lies */
            double f = a.run_len[0] / tpc;
            if (bg == a.run_color[1]) {
                long k = lround(8 * f);
                if (k >= 1)
                    c->ch = cells_left_block[k > 7 ? 7 : k], c->fg = a.run_color[0];
            } else if (bg == a.run_color[0]) {
                long k = lround(8 * (1 - f));
                if (k >= 1)
                    c->ch = k >= 3 ? 0x2590 : 0x2595, c->fg = a.run_color[1]; /* ▐ ▕ */
            }
        } else if (g->utf8 && a.runs > 2 && bg != PAL_BUBBLE && bg != PAL_DEFAULT) {
            /* ops interleaved finer than a cell (1F1B's steady state): the op that covers the
             * most of the rest shows as a shade over the dominant one, ░ from 1/8, ▒ from 3/8,
             * so the forwards between backwards do not vanish; idle time is never blended */
            int second = -1;
            for (int k = 0; k < PAL__COUNT; k++)
                if (k != bg && k != PAL_BUBBLE && k != PAL_DEFAULT && a.cov[k] > eps &&
                    (second < 0 || a.cov[k] > a.cov[second]))
                    second = k;
            double share = second >= 0 ? a.cov[second] / tpc : 0;
            if (share >= 0.125)
                c->ch = share >= 0.375 ? 0x2592 : 0x2591, c->fg = (unsigned char)second;
        } else if (bg == PAL_BUBBLE) { /* idle time: a dot, so it reads apart from "no lane" */
            c->ch = g->utf8 ? 0x00B7 : '.';
            c->fg = PAL_AXIS;
        }
        if (v->owner != NULL)
            v->owner[(size_t)y * g->w + v->x + i] =
                bg != PAL_BUBBLE && bg != PAL_DEFAULT && a.best_len[bg] > 0 ? a.best_id[bg] : -1;
    }
}

/* The grid row of panel row r, or -1. */
static int cells_gantt_y(const struct cells *g, const struct cells_gantt *v, int r)
{
    if (r < 0 || r >= v->rows || v->row_y[r] < 0 || v->row_y[r] >= g->h)
        return -1;
    return v->row_y[r];
}

void cells_paint_gantt_lanes(struct cells *g, const struct layout_lanes *ln,
                             const struct cells_gantt *v)
{
    if (v->w <= 0 || !(v->tpc > 0))
        return;
    for (int r = 0; r < ln->rows; r++) {
        int y = cells_gantt_y(g, v, r);
        if (y < 0)
            continue;
        /* From the first interval that ends after the window's start (the row's scan would
         * skip those before it). */
        int lo = layout_lanes_first(ln, r, v->t0);
        cells_gantt_row(g, v, y, ln->seg + lo, ln->off[r + 1] - lo);
    }
}

void cells_paint_gantt_lanes_marks(struct cells *g, const struct layout_lanes *ln,
                                   const struct cells_gantt *v)
{
    if (v->w <= 0 || !(v->tpc > 0))
        return;
    for (int k = 0; k < ln->marks; k++) {
        int y = cells_gantt_y(g, v, ln->mark[k].row);
        double s = (ln->mark[k].t - v->t0) / v->tpc;
        struct cell *c = cells_at(g, v->x + (int)floor(s), y);
        if (y < 0 || s < 0 || s >= v->w || c == NULL)
            continue;
        c->ch = g->utf8 ? 0x2503 : '|'; /* ┃ */
        c->fg = PAL_CAP;
        c->attr |= CELL_BOLD;
    }
}

/* ---- how a terminal shows a cell ------------------------------------------------------ */

/* Colours that are the terminal's own paper: the page, the row band, idle time, no lane. */
static bool cells_is_page(int p)
{
    return p == PAL_BG || p == PAL_ROW || p == PAL_BUBBLE || p == PAL_DEFAULT;
}

/* Ink that is the terminal's own: text, axes, the cap (and the page's colour on the page). */
static bool cells_is_own_ink(int p)
{
    return p == PAL_TEXT || p == PAL_TEXT_DIM || p == PAL_AXIS || p == PAL_CAP || p == PAL_BG;
}

void cells_term(const struct cell *c, struct cells_term *out)
{
    bool page = cells_is_page(c->bg);
    bool block = c->ch >= 0x2580 && c->ch <= 0x259F && c->ch != 0x2591 && c->ch != 0x2592;
    bool page_ink = c->fg == PAL_DEFAULT || c->fg == PAL_BUBBLE || (cells_is_page(c->fg) && block);
    *out = (struct cells_term){c->fg, page ? CELLS_TERM_OWN : c->bg, c->attr, c->ch};
    if (c->fg == PAL_TEXT_DIM || c->fg == PAL_AXIS)
        out->attr |= CELLS_TERM_DIM;
    if (c->fg == PAL_CAP)
        out->attr |= CELL_BOLD;
    if (page && page_ink) { /* page on page: nothing to see */
        out->ch = ' ';
        out->fg = CELLS_TERM_OWN;
    } else if (page_ink) { /* the fill as ink, the terminal's paper as paper, reversed */
        out->fg = c->bg;
        out->bg = CELLS_TERM_OWN;
        out->attr ^= CELL_REVERSE;
    } else if (c->bg == PAL_TEXT && c->fg == PAL_BG) { /* the title bar */
        out->fg = out->bg = CELLS_TERM_OWN;
        out->attr ^= CELL_REVERSE;
    } else if ((page && cells_is_own_ink(c->fg)) || c->fg == PAL_CAP) {
        out->fg = CELLS_TERM_OWN;
    }
}

static void cells_put_utf8(uint32_t cp, FILE *f)
{
    if (cp < 0x80) {
        fputc((int)cp, f);
    } else if (cp < 0x800) {
        fputc(0xC0 | (int)(cp >> 6), f);
        fputc(0x80 | (int)(cp & 0x3F), f);
    } else {
        fputc(0xE0 | (int)(cp >> 12), f);
        fputc(0x80 | (int)((cp >> 6) & 0x3F), f);
        fputc(0x80 | (int)(cp & 0x3F), f);
    }
}

void cells_dump(const struct cells *g, FILE *f)
{
    for (int y = 0; y < g->h; y++) {
        int last = g->w - 1;
        while (last >= 0 && g->c[(size_t)y * g->w + last].ch == ' ')
            last--;
        for (int x = 0; x <= last; x++)
            cells_put_utf8(g->c[(size_t)y * g->w + x].ch, f);
        fputc('\n', f);
    }
}
