/* tui/screen.c: curses setup, the colour mapping and the main loop. The canvas is redrawn
 * whole on every reaction and copied cell by cell; curses sends only what changed. Which
 * cells take the terminal's own colours (use_default_colors) is render/paint_cells.h's
 * cells_term(): the page, idle time and empty cells its paper, text, axes and the cap its
 * ink, so a dark theme shows them as well as a light one. */
#include <config.h>
#include "tui/screen.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <wchar.h>

#include "render/paint_cells.h"
#include "render/palette.h"
#include "tui/curses_compat.h"
#include "tui/explore.h"
#include "util/err.h"
#include "util/str.h"

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

static void screen_blit_rows(const struct cells *g, int y0, int y1)
{
    for (int y = y0; y < y1; y++)
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

static void screen_blit(const struct cells *g)
{
    screen_blit_rows(g, 0, g->h);
}

/* Keys typed while a search, a wait or the tuner held the screen (issue 41 item 6: they were
 * dropped): kept in order and applied once it is done, as if typed then. The mouse is left
 * out (where it pointed has moved since), and so is a resize (the frame is drawn anew). */
#define SCREEN_QUEUE_MAX 64
static int screen_queue[SCREEN_QUEUE_MAX];
static int screen_queue_head, screen_queue_len;

static void screen_queue_key(int key)
{
    if (key == KEY_MOUSE || key == KEY_RESIZE || screen_queue_len == SCREEN_QUEUE_MAX)
        return;
    screen_queue[(screen_queue_head + screen_queue_len++) % SCREEN_QUEUE_MAX] = key;
}

/* The next key: a queued one first, else getch's (ERR after its timeout). */
static int screen_next_key(void)
{
    if (screen_queue_len == 0)
        return getch();
    int key = screen_queue[screen_queue_head];
    screen_queue_head = (screen_queue_head + 1) % SCREEN_QUEUE_MAX;
    screen_queue_len--;
    return key;
}

/* Esc or q pressed since the last look; other keys are queued for when the work is done. */
static bool screen_stop_asked(void)
{
    bool stop = false;
    timeout(0);
    for (int key; (key = getch()) != ERR;) {
        if (key == 27 || key == 'q')
            stop = true;
        else
            screen_queue_key(key);
    }
    timeout(250);
    return stop;
}

static double screen_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The tuner on a thread of its own, so that Esc is heard at once: a candidate can take
 * seconds (GPT3-13B, 1024 micro-batches: 3.8 s when the candidate in flight ran to its end).
 * The thread works on a copy of the config; it touches neither curses nor the explorer. Esc
 * asks it to stop (explore.h: the tuner keeps what ran): the candidates in flight give up at
 * their next pass, and what ran is shown within 0.3 s; when a pass takes longer, the screen
 * is given back then and the loop takes the result when the thread is done. */
struct screen_tuner {
    pthread_t tid;
    bool running;         /* started and not yet joined */
    bool search;
    bool offload;         /* its searches may offload (the explorer's O) */
    unsigned gen;         /* the explorer's cfg_gen it runs on */
    struct config cfg;
    atomic_int done, total;
    atomic_bool stop, finished;
    struct tune_result r;
    int rc;
    struct mt_err e;
    double t0_s; /* when it started: the bar's estimate of the time left */
};

static bool screen_tuner_progress(void *ctx, int done, int total)
{
    struct screen_tuner *t = ctx;
    atomic_store(&t->done, done);
    atomic_store(&t->total, total);
    return !atomic_load(&t->stop);
}

static void *screen_tuner_main(void *arg)
{
    struct screen_tuner *t = arg;
    explore_background_thread(); /* and the tuner's workers, which inherit it */
    t->rc = explore_tune_compute(&t->cfg, t->search, t->offload, screen_tuner_progress, t,
                                 &t->r, &t->e);
    atomic_store(&t->finished, true);
    return NULL;
}

/* The result into the explorer once the thread is done (open: the user waited for it). */
static void screen_tuner_collect(struct explore *x, struct screen_tuner *t, bool open)
{
    pthread_join(t->tid, NULL);
    t->running = false;
    if (t->rc != MT_OK) {
        snprintf(x->status, sizeof x->status, "%s", t->e.msg);
        x->status_err = true;
        return;
    }
    explore_tune_show(x, &t->r, t->search, t->gen, open);
}

/* The tuner's progress bar on the status line. */
static void screen_tuner_bar(const struct screen_tuner *t)
{
    const char *keys = "  Esc: stop (keeps what ran)";
    int done = atomic_load(&t->done), total = atomic_load(&t->total);
    int width = COLS - 64 > 10 ? COLS - 64 : 10;
    int fill = total > 0 ? done * width / total : 0;
    move(LINES - 1, 0);
    clrtoeol();
    printw("%s [", t->search ? "tuning, each candidate searched" : "tuning");
    for (int i = 0; i < width; i++)
        addch(i < fill ? '#' : '.');
    printw("] %d/%d", done, total);
    char left[48];
    str_format_time_left(screen_now_s() - t->t0_s, done, total, left, sizeof left);
    if (left[0] && getcurx(stdscr) + 2 + (int)strlen(left) < COLS)
        printw(", %s", left);
    if (getcurx(stdscr) + (int)strlen(keys) < COLS)
        addstr(keys);
    refresh();
}

/* Runs the tuner (t, or S in its view) and waits for it, drawing its bar; Esc or q stops
 * it and returns at once (the thread finishes what is in flight: screen_run collects it). */
static void screen_tuner_run(struct explore *x, struct screen_tuner *t, bool search)
{
    if (t->running) {
        snprintf(x->status, sizeof x->status,
                 "the stopped tuner is finishing its candidates in flight; t shows what ran");
        x->status_err = false;
        return;
    }
    t->search = search;
    t->offload = x->offload;
    t->gen = x->cfg_gen;
    t->cfg = x->cfg;
    t->rc = MT_OK;
    memset(&t->e, 0, sizeof t->e);
    atomic_store(&t->done, 0);
    atomic_store(&t->total, 0);
    atomic_store(&t->stop, false);
    atomic_store(&t->finished, false);
    t->t0_s = screen_now_s();
    if (pthread_create(&t->tid, NULL, screen_tuner_main, t) != 0) { /* then here, as headless */
        explore_run_tuner(x, search, NULL, NULL);
        return;
    }
    t->running = true;
    timeout(40);
    while (!atomic_load(&t->finished)) {
        screen_tuner_bar(t);
        int key = getch();
        if (key != ERR && key != 27 && key != 'q')
            screen_queue_key(key); /* for when the tuner is done */
        if (key == 27 || key == 'q') {
            atomic_store(&t->stop, true);
            timeout(250);
            /* the candidates in flight give up at their next pass (sim/tune/tune.h): what ran
             * is shown at once; a pass longer than that finishes in the background */
            for (int i = 0; i < 30 && !atomic_load(&t->finished); i++)
                napms(10);
            if (atomic_load(&t->finished)) {
                screen_tuner_collect(x, t, false);
                return;
            }
            snprintf(x->status, sizeof x->status,
                     "tuner stopped by Esc after %d of %d candidates: the ones in flight finish "
                     "in the background; t shows what ran", atomic_load(&t->done),
                     atomic_load(&t->total));
            x->status_err = false;
            return;
        }
    }
    timeout(250);
    screen_tuner_collect(x, t, true);
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

/* While the search runs or a wait lasts (explore.h tick): the frame again, its status line
 * the search's progress bar (a wait: that line alone); Esc or q asks to stop (other keys
 * pressed meanwhile are queued: screen_queue_key). */
static bool screen_tick(void *ctx)
{
    struct screen_tick_ctx *sc = ctx;
    if (sc->x->waiting != NULL && *sc->g != NULL && (*sc->g)->w == COLS &&
        (*sc->g)->h == LINES) { /* a wait: the status line only, over the frame shown */
        explore_draw_status(sc->x, *sc->g);
        screen_blit_rows(*sc->g, LINES - 1, LINES);
        refresh();
    } else if (*sc->g != NULL && (*sc->g)->w == COLS && (*sc->g)->h == LINES) {
        explore_draw(sc->x, *sc->g);
        erase();
        screen_blit(*sc->g);
        refresh();
    }
    return !screen_stop_asked();
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
    static struct screen_tuner tuner; /* static: big, and one explorer at a time */
    memset(&tuner, 0, sizeof tuner);
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
        /* an edit's passes behind its base plan: their steps as they come, their progress */
        timeout(explore_build_running(x) ? 100 : 250);
        int key = screen_next_key();
        int built = explore_build_poll(x);
        if (built & R_REDRAW) {
            redraw = true;
        } else if (built == R_STATUS && key == ERR && g != NULL && g->w == COLS &&
                   g->h == LINES) {
            explore_draw_status(x, g);
            screen_blit_rows(g, LINES - 1, LINES);
            refresh();
        }
        if (tuner.running && atomic_load(&tuner.finished)) { /* stopped earlier: now done */
            screen_tuner_collect(x, &tuner, false);
            redraw = true;
        }
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
        bool tune = key == 't' && (x->mode == MODE_GANTT ||
                                   (x->mode == MODE_TUNE && x->have_tune && x->tune.cancelled));
        bool tune_search = key == 'S' && x->mode == MODE_TUNE && !x->tune_search;
        if (tune && !explore_too_small(x) && explore_tune_reopen(x)) { /* ran whole already */
            redraw = true;
            continue;
        }
        if ((tune || tune_search) && !explore_too_small(x)) {
            screen_tuner_run(x, &tuner, tune_search);
            redraw = true;
            continue;
        }
        int r = explore_key(x, key);
        if (r & R_QUIT)
            break;
        if (r == R_STATUS && g != NULL && g->w == COLS && g->h == LINES) { /* a huge plan's
                                                                            * frame: not again */
            explore_draw_status(x, g);
            screen_blit_rows(g, LINES - 1, LINES);
            refresh();
            continue;
        }
        redraw = r != R_NONE;
    }
    if (tuner.running) { /* q while a stopped tuner finishes: wait for it, keep nothing */
        atomic_store(&tuner.stop, true);
        pthread_join(tuner.tid, NULL);
        if (tuner.rc == MT_OK)
            tune_result_fini(&tuner.r);
    }
    cells_free(g);
    x->busy = NULL;
    x->busy_ctx = NULL;
    x->tick = NULL;
    endwin();
    return MT_OK;
}
