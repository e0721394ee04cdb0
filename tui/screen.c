/* tui/screen.c: curses setup, the colour mapping and the main loop. The canvas is redrawn
 * whole on every reaction and copied cell by cell; curses sends only what changed. Which
 * cells take the terminal's own colours (use_default_colors) is render/paint_cells.h's
 * cells_term(): the page, idle time and empty cells its paper, text, axes and the cap its
 * ink, so a dark theme shows them as well as a light one. */
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
    short pair[PAL__COUNT + 1][PAL__COUNT + 1]; /* [fg][bg]; PAL__COUNT: the terminal's own */
    int next_pair;
};

static struct screen_colors screen_col;

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
        screen_col.color[p] = (short)(screen_col.mode == 256
                                          ? palette_nearest_256(c)
                                          : palette_nearest_ansi(c, screen_col.mode));
    }
    screen_col.next_pair = 1;
}

/* The attributes and the character of a cell as render/paint_cells.h's cells_term() says a
 * terminal shows it: a pair of its colours (-1: the terminal's own), or, on a monochrome
 * terminal, reverse video for fills. */
static attr_t screen_attr(const struct cell *c, short *pair_out, wchar_t *ch_out)
{
    struct cells_term t;
    cells_term(c, &t);
    attr_t a = 0;
    if (t.attr & CELL_BOLD)
        a |= A_BOLD;
    if (t.attr & CELL_REVERSE)
        a |= A_REVERSE;
    if (t.attr & CELL_UNDERLINE)
        a |= A_UNDERLINE;
    if (t.attr & CELLS_TERM_DIM)
        a |= A_DIM;
    *pair_out = 0;
    *ch_out = (wchar_t)t.ch;
    if (screen_col.mode == 0) {
        if (t.bg != CELLS_TERM_OWN)
            a ^= A_REVERSE;
        return a;
    }
    if (t.fg == CELLS_TERM_OWN && t.bg == CELLS_TERM_OWN)
        return a;
    int fi = t.fg == CELLS_TERM_OWN ? PAL__COUNT : t.fg;
    int bi = t.bg == CELLS_TERM_OWN ? PAL__COUNT : t.bg;
    short *pp = &screen_col.pair[fi][bi];
    if (*pp == 0 && screen_col.next_pair < COLOR_PAIRS && screen_col.next_pair < 32767) {
        short fg = t.fg == CELLS_TERM_OWN ? -1 : screen_col.color[t.fg];
        short bg = t.bg == CELLS_TERM_OWN ? -1 : screen_col.color[t.bg];
        init_pair((short)screen_col.next_pair, fg, bg);
        *pp = (short)screen_col.next_pair++;
    }
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
    bool search;
};

/* The tuner's live progress bar on the status line. */
static bool screen_tune_progress(void *ctx, int done, int total)
{
    struct screen_progress *sp = ctx;
    int width = sp->w - 50 > 10 ? sp->w - 50 : 10;
    int fill = total > 0 ? done * width / total : width;
    move(sp->h - 1, 0);
    clrtoeol();
    printw("%s [", sp->search ? "tuning, each candidate searched" : "tuning");
    for (int i = 0; i < width; i++)
        addch(i < fill ? '#' : '.');
    printw("] %d/%d", done, total);
    refresh();
    return true;
}

/* What keeps keys waiting (the search), on the status line before it starts. */
static void screen_busy(void *ctx, const char *what)
{
    (void)ctx;
    move(LINES - 1, 0);
    clrtoeol();
    attron(A_BOLD);
    addnstr(what, COLS > 1 ? COLS - 1 : 1);
    attroff(A_BOLD);
    refresh();
}

/* What the search's tick redraws: the explorer and the loop's canvas. */
struct screen_tick_ctx {
    struct explore *x;
    struct cells **g;
};

/* While the search runs (explore.h tick): the frame again, its status line the search's
 * progress bar; Esc or q asks to stop it (other keys pressed meanwhile are dropped). */
static bool screen_tick(void *ctx)
{
    struct screen_tick_ctx *sc = ctx;
    if (*sc->g != NULL && (*sc->g)->w == COLS && (*sc->g)->h == LINES) {
        explore_draw(sc->x, *sc->g);
        erase();
        screen_blit(*sc->g);
        refresh();
    }
    bool stop = false;
    timeout(0);
    for (int key; (key = getch()) != ERR;)
        stop = stop || key == 27 || key == 'q';
    timeout(250);
    return !stop;
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
    /* the mouse (htop's): presses and releases apart, so a drag is a press, moves, a release;
     * the wheel is buttons 4 and 5 */
    mouseinterval(0);
    mousemask(BUTTON1_PRESSED | BUTTON1_RELEASED | BUTTON4_PRESSED | BUTTON5_PRESSED |
                  REPORT_MOUSE_POSITION,
              NULL);
    struct cells *g = NULL;
    struct screen_tick_ctx tick = {x, &g};
    x->busy = screen_busy;
    x->busy_ctx = &tick;
    x->tick = screen_tick;
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
        if (key == KEY_MOUSE) {
            MEVENT ev;
            if (getmouse(&ev) != OK)
                continue;
            int r = R_NONE; /* a motion report may carry the held button: motion first */
            if (ev.bstate & REPORT_MOUSE_POSITION)
                r = explore_mouse(x, MOUSE_MOVE, ev.x, ev.y);
            else if (ev.bstate & BUTTON4_PRESSED)
                r = explore_mouse(x, MOUSE_WHEEL_UP, ev.x, ev.y);
            else if (ev.bstate & BUTTON5_PRESSED)
                r = explore_mouse(x, MOUSE_WHEEL_DOWN, ev.x, ev.y);
            else if (ev.bstate & BUTTON1_PRESSED)
                r = explore_mouse(x, MOUSE_PRESS, ev.x, ev.y);
            else if (ev.bstate & BUTTON1_RELEASED)
                r = explore_mouse(x, MOUSE_RELEASE, ev.x, ev.y);
            if (r & R_QUIT)
                break;
            redraw = redraw || r != R_NONE;
            continue;
        }
        bool tune = key == 't' && x->mode == MODE_GANTT;
        bool tune_search = key == 'S' && x->mode == MODE_TUNE && !x->tune_search;
        if ((tune || tune_search) && !explore_too_small(x)) {
            struct screen_progress sp = {COLS, LINES, tune_search};
            explore_run_tuner(x, tune_search, screen_tune_progress, &sp);
            redraw = true;
            continue;
        }
        int r = explore_key(x, key);
        if (r & R_QUIT)
            break;
        redraw = r != R_NONE;
    }
    cells_free(g);
    x->busy = NULL;
    x->busy_ctx = NULL;
    x->tick = NULL;
    endwin();
    return MT_OK;
}
