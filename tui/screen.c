/* tui/screen.c: curses setup, the colour mapping and the main loop. The canvas is redrawn
 * whole on every reaction and copied cell by cell; curses sends only what changed. The page,
 * idle time and empty cells are the terminal's default background (use_default_colors). */
#include <config.h>
#include "tui/screen.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "render/paint_cells.h"
#include "render/palette.h"
#include "tui/curses_compat.h"
#include "tui/explore.h"
#include "util/err.h"

struct screen_colors {
    int mode;                     /* 0 monochrome, 8, 16 or 256 */
    short color[PAL__COUNT];      /* curses colour of each palette entry */
    short pair[PAL__COUNT][PAL__COUNT];
    short pair_rev[PAL__COUNT];   /* page-inked blocks over a fill, drawn reversed */
    int next_pair;
};

static struct screen_colors screen_col;

static int screen_dist(struct rgb a, int r, int g, int b)
{
    return (a.r - r) * (a.r - r) + (a.g - g) * (a.g - g) + (a.b - b) * (a.b - b);
}

/* The nearest xterm-256 colour: the 6x6x6 cube or the grey ramp. */
static short screen_nearest_256(struct rgb c)
{
    static const int level[6] = {0, 95, 135, 175, 215, 255};
    int best = 16, best_d = 1 << 30;
    for (int i = 0; i < 216; i++) {
        int d = screen_dist(c, level[i / 36], level[(i / 6) % 6], level[i % 6]);
        if (d < best_d)
            best = 16 + i, best_d = d;
    }
    for (int i = 0; i < 24; i++) {
        int v = 8 + 10 * i, d = screen_dist(c, v, v, v);
        if (d < best_d)
            best = 232 + i, best_d = d;
    }
    return (short)best;
}

static short screen_nearest_8(struct rgb c, int n)
{
    static const int ansi[16][3] = {
        {0, 0, 0},       {205, 0, 0},   {0, 205, 0},   {205, 205, 0},   {0, 0, 238},
        {205, 0, 205},   {0, 205, 205}, {229, 229, 229}, {127, 127, 127}, {255, 0, 0},
        {0, 255, 0},     {255, 255, 0}, {92, 92, 255}, {255, 0, 255},   {0, 255, 255},
        {255, 255, 255},
    };
    int best = 0, best_d = 1 << 30;
    for (int i = 0; i < n; i++) {
        int d = screen_dist(c, ansi[i][0], ansi[i][1], ansi[i][2]);
        if (d < best_d)
            best = i, best_d = d;
    }
    return (short)best;
}

static void screen_colors_init(void)
{
    memset(&screen_col, 0, sizeof screen_col);
    if (!has_colors() || getenv("NO_COLOR") != NULL)
        return;
    start_color();
    use_default_colors();
    screen_col.mode = COLORS >= 256 ? 256 : COLORS >= 16 ? 16 : 8;
    for (int p = 0; p < PAL__COUNT; p++) {
        struct rgb c = palette_rgb((enum pal)p);
        screen_col.color[p] = screen_col.mode == 256 ? screen_nearest_256(c)
                                                     : screen_nearest_8(c, screen_col.mode);
    }
    screen_col.next_pair = 1;
}

/* Colours that mean "the terminal's own background": the page (PAL_BG, the alternate row
 * band), idle time and empty Gantt cells. Drawn as curses colour -1, so light and dark themes
 * both read; never as the page's white. */
static bool screen_is_page(unsigned char p)
{
    return p == PAL_BG || p == PAL_ROW || p == PAL_BUBBLE || p == PAL_DEFAULT;
}

/* Block elements (▀..▟): their ink is a share of the cell, not a letter. */
static bool screen_is_block(uint32_t ch)
{
    return ch >= 0x2580 && ch <= 0x259F;
}

/* The attributes and the character of a cell: its pair, or reverse video for fills on a
 * monochrome terminal. Text on the page keeps the terminal's own colours. A block whose ink
 * is the page (a sub-cell edge between a box and idle time) over a fill cannot be inked with
 * the default background, so it is drawn reversed: the fill as ink, the default as paper. */
static attr_t screen_attr(const struct cell *c, short *pair_out, wchar_t *ch_out)
{
    attr_t a = 0;
    if (c->attr & CELL_BOLD)
        a |= A_BOLD;
    if (c->attr & CELL_REVERSE)
        a |= A_REVERSE;
    if (c->attr & CELL_UNDERLINE)
        a |= A_UNDERLINE;
    *pair_out = 0;
    *ch_out = (wchar_t)c->ch;
    bool page = screen_is_page(c->bg);
    bool page_ink = c->fg == PAL_DEFAULT || c->fg == PAL_BUBBLE ||
                    (screen_is_page(c->fg) && screen_is_block(c->ch));
    if (page && page_ink) /* page on page: nothing to see */
        *ch_out = ' ';
    if (screen_col.mode == 0) {
        if (!page)
            a ^= A_REVERSE;
        if (c->fg == PAL_TEXT_DIM)
            a |= A_DIM;
        return a;
    }
    if (page && (c->fg == PAL_TEXT || c->fg == PAL_TEXT_DIM || c->fg == PAL_BG || page_ink)) {
        if (c->fg == PAL_TEXT_DIM)
            a |= A_DIM;
        return a;
    }
    short *pp = page_ink ? &screen_col.pair_rev[c->bg] : &screen_col.pair[c->fg][c->bg];
    if (*pp == 0 && screen_col.next_pair < COLOR_PAIRS && screen_col.next_pair < 32767) {
        short fg = screen_col.color[c->fg], bg = page ? -1 : screen_col.color[c->bg];
        if (page && c->fg == PAL_BG)
            fg = -1;
        if (page_ink)
            fg = screen_col.color[c->bg], bg = -1;
        init_pair((short)screen_col.next_pair, fg, bg);
        *pp = (short)screen_col.next_pair++;
    }
    if (page_ink)
        a ^= A_REVERSE;
    *pair_out = *pp;
    return a;
}

static void screen_blit(const struct cells *g)
{
    for (int y = 0; y < g->h; y++)
        for (int x = 0; x < g->w; x++) {
            const struct cell *c = &g->c[(size_t)y * g->w + x];
            short pair;
            wchar_t wc[2] = {0, 0};
            attr_t a = screen_attr(c, &pair, &wc[0]);
            cchar_t cc;
            setcchar(&cc, wc, a, pair, NULL);
            mvadd_wch(y, x, &cc);
        }
}

struct screen_progress {
    int w, h;
};

/* The tuner's live progress bar on the status line. */
static void screen_tune_progress(void *ctx, int done, int total)
{
    struct screen_progress *sp = ctx;
    int width = sp->w - 30 > 10 ? sp->w - 30 : 10;
    int fill = total > 0 ? done * width / total : width;
    move(sp->h - 1, 0);
    clrtoeol();
    printw("tuning [");
    for (int i = 0; i < width; i++)
        addch(i < fill ? '#' : '.');
    printw("] %d/%d", done, total);
    refresh();
}

int screen_run(struct explore *x, int max_iterations, struct mt_err *e)
{
    if (initscr() == NULL)
        return err_set(e, MT_EIO, "cannot initialise the terminal (TERM=%s)",
                       getenv("TERM") ? getenv("TERM") : "unset");
    cbreak();
    noecho();
    keypad(stdscr, TRUE);
    curs_set(0);
    set_escdelay(25);
    timeout(250);
    screen_colors_init();
    struct cells *g = NULL;
    int ticks = 0;
    bool redraw = true;
    for (;;) {
        if (redraw) {
            if (g == NULL || g->w != COLS || g->h != LINES) {
                cells_free(g);
                g = cells_new(COLS, LINES, x->utf8);
            }
            explore_draw(x, g);
            erase();
            screen_blit(g);
            refresh();
            redraw = false;
        }
        int key = getch();
        if (key == ERR) {
            if (max_iterations > 0 && ++ticks >= max_iterations)
                break;
            continue;
        }
        if (key == KEY_RESIZE) {
            redraw = true;
            continue;
        }
        if (key == 't' && x->mode == MODE_GANTT) {
            struct screen_progress sp = {COLS, LINES};
            explore_run_tuner(x, screen_tune_progress, &sp);
            redraw = true;
            continue;
        }
        int r = explore_key(x, key);
        if (r & R_QUIT)
            break;
        redraw = r != R_NONE;
    }
    cells_free(g);
    endwin();
    return MT_OK;
}
