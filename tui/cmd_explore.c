/* tui/cmd_explore.c: `mario-tui explore [CONFIG | PLAN] [plan flags]`, the ncurses
 * explorer; `mario-tui` with no arguments opens it on the built-in default. --dump-screen
 * draws one frame without a terminal (after --keys, typed as if at the keyboard) and prints
 * it, for golden tests and bug reports. */
#include <config.h>
#include "tui/cmd.h"

#include <langinfo.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/seqlen.h"
#include "render/paint_cairo.h"
#include "render/paint_cells.h"
#include "sim/plan/footprint.h"
#include "sim/plan/plan.h"
#include "tui/curses_compat.h"
#include "tui/explore.h"
#include "tui/screen.h"
#include "util/err.h"
#include "util/str.h"

static const char explore_usage[] =
    "Usage: mario-tui explore [CONFIG | PLAN] [plan flags] [--ascii]\n"
    "       mario-tui explore ... --dump-screen [--size WxH] [--keys KEYS]\n"
    "       mario-tui explore ... [--search] [--offload]\n"
    "The interactive explorer: the Gantt chart of every device, per-device memory, Mario's\n"
    "passes step by step (n/p), live edits, the tuner (t), exports (e). Press ? inside.\n\n";

struct explore_opts {
    bool ascii, dump, light, search, offload;
    int w, h, max_iter;
    const char *keys, *lengths, *trace, *png;
};

static int explore_size(void *opts, const struct cmd_option *o, const char *arg,
                        struct mt_err *e);

static const struct cmd_option explore_options[] = {
    {.name = "ascii", CMD_TO_BOOL(struct explore_opts, ascii),
     .help = "ASCII only (no Unicode block elements)"},
    {.name = "trace", .arg = "FILE", CMD_TO_STRING(struct explore_opts, trace),
     .help = "lay a measured trace beside the simulation (T inside)"},
    {.name = "search", CMD_TO_BOOL(struct explore_opts, search),
     .help = "open on the search step: the schedule search under the cap (n x 5)"},
    {.name = "offload", CMD_TO_BOOL(struct explore_opts, offload),
     .help = "the search step (and the tuner's S) may offload forwards to host memory\n"
             "(OF/RL) where faster, as optimize --search --offload (O inside)"},
    {.name = "lengths", .arg = "FILE", CMD_TO_STRING(struct explore_opts, lengths),
     .help = "per-batch sequence lengths for the input-aware buckets (a)"},
    {.name = "dump-screen", CMD_TO_BOOL(struct explore_opts, dump),
     .help = "print one frame as text instead of opening the terminal"},
    {.name = "size", .arg = "WxH", CMD_TO_CALL(explore_size, 0),
     .help = "the frame size for --dump-screen (default 120x40)"},
    {.name = "png", .arg = "FILE", CMD_TO_STRING(struct explore_opts, png),
     .help = "with --dump-screen: also a screenshot of the frame as a terminal shows it"},
    {.name = "light", CMD_TO_BOOL(struct explore_opts, light),
     .help = "the --png screenshot on a light terminal theme (default: dark)"},
    {.name = "keys", .arg = "KEYS", CMD_TO_STRING(struct explore_opts, keys),
     .help = "keys to press before the frame is drawn (\\n Enter, \\e Esc; the mouse: "
             "\\McCOL,ROW; click, \\MdC0,R0,C1,R1; drag, \\MuCOL,ROW; \\MwCOL,ROW; wheel)"},
    {.name = "max-iterations", .arg = "N",
     CMD_TO_INT(struct explore_opts, max_iter, 1, 1 << 30),
     .help = "quit after N idle ticks of 250 ms (headless test runs)"},
    {0},
};

static int explore_exec(int argc, char **argv);

const struct cmd_entry cmd_explore_entry = {
    .name = "explore",
    .summary = "the interactive explorer (the default command)",
    .usage = explore_usage,
    .plan_flags = true,
    .options = explore_options,
    .args_max = 1,
    .args = "CONFIG or PLAN",
    .exec = explore_exec,
};

/* --size WxH: the frame's width and height, each in [1, 1000]. */
static int explore_size(void *opts, const struct cmd_option *o, const char *arg,
                        struct mt_err *e)
{
    struct explore_opts *x = opts;
    const char *by = strchr(arg, 'x');
    char w[16];
    long v[2];
    size_t n = by ? (size_t)(by - arg) : sizeof w;
    if (n < sizeof w) {
        memcpy(w, arg, n);
        w[n] = '\0';
    }
    if (n >= sizeof w || cmd_options_int(w, 1, 1000, &v[0], NULL) != MT_OK ||
        cmd_options_int(by + 1, 1, 1000, &v[1], NULL) != MT_OK)
        return err_set(e, MT_EINVAL, "'%s' is not WxH (e.g. 120x40)", arg);
    x->w = (int)v[0];
    x->h = (int)v[1];
    return MT_OK;
}

/* A mouse event of --keys: \Mc COL,ROW; (click), \Md C0,R0,C1,R1; (drag), \Mu COL,ROW;
 * (wheel up), \Mw COL,ROW; (wheel down). Returns the characters read after "\M", 0 when it is
 * not one. */
static int explore_feed_mouse(struct explore *x, const char *k)
{
    int v[4] = {0}, n = 0, used = 1;
    char kind = k[0];
    const char *p = k + 1;
    while (n < 4) {
        char *end;
        long a = strtol(p, &end, 10);
        if (end == p)
            break;
        v[n++] = (int)a;
        p = end;
        if (*p != ',')
            break;
        p++;
    }
    if (*p != ';' || n < 2 || (kind == 'd' && n < 4))
        return 0;
    used = (int)(p + 1 - k);
    switch (kind) {
    case 'c':
        explore_mouse(x, MOUSE_PRESS, v[0], v[1]);
        explore_mouse(x, MOUSE_RELEASE, v[0], v[1]);
        break;
    case 'd':
        explore_mouse(x, MOUSE_PRESS, v[0], v[1]);
        explore_mouse(x, MOUSE_MOVE, (v[0] + v[2]) / 2, (v[1] + v[3]) / 2);
        explore_mouse(x, MOUSE_RELEASE, v[2], v[3]);
        break;
    case 'u': explore_mouse(x, MOUSE_WHEEL_UP, v[0], v[1]); break;
    case 'w': explore_mouse(x, MOUSE_WHEEL_DOWN, v[0], v[1]); break;
    default: return 0;
    }
    return used;
}

/* Feeds --keys to the explorer: plain characters, \n, \e, \\ and mouse events \M... */
static void explore_feed(struct explore *x, const char *keys, struct cells *g)
{
    for (const char *k = keys; *k; k++) {
        int key = (unsigned char)*k;
        if (k[0] == '\\' && k[1] == 'M') {
            explore_draw(x, g); /* where things are, as a person would see them */
            int used = explore_feed_mouse(x, k + 2);
            if (used > 0) {
                k += 1 + used;
                continue;
            }
        }
        if (*k == '\\' && k[1]) {
            k++;
            key = *k == 'n' ? '\n' : *k == 'e' ? 27 : (unsigned char)*k;
        }
        if (key == 't' && x->mode == MODE_GANTT && !explore_too_small(x)) {
            explore_run_tuner(x, false, NULL, NULL);
            continue;
        }
        if (explore_key(x, key) & R_QUIT)
            break;
    }
}

static int explore_exec(int argc, char **argv)
{
    struct explore_opts o = {.w = 120, .h = 40, .keys = ""};
    struct cmd_plan cp = {0};
    struct mt_err e = {0};
    int first, st = cmd_options_parse(&cmd_explore_entry, argc, argv, &o, &cp, &first);
    if (st != CMD_OPTIONS_RUN)
        return st;

    struct config c;
    struct plan *loaded = NULL;
    if (cmd_plan_config(&cp, &c, &loaded, &e) != MT_OK) {
        if (e.code == MT_EIO) /* a CONFIG or PLAN that cannot be read is bad input (README) */
            e.code = MT_EINVAL;
        return cmd_fail("explore", &e);
    }
    if (o.lengths != NULL && seqlen_config_use_file(&c, o.lengths, NULL, &e) != MT_OK) {
        plan_free(loaded);
        return cmd_fail("explore", &e);
    }
    /* the explorer runs the passes (and --search) on its plan: refuse one this machine cannot
     * hold, with the figure, before its first build */
    enum footprint_use use = o.search ? FOOTPRINT_SEARCH : FOOTPRINT_PASSES;
    if ((loaded ? footprint_check(plan_geom(loaded), use, 1, &e)
                : footprint_check_config(&c, use, 1, &e)) != MT_OK) {
        plan_free(loaded);
        return cmd_fail("explore", &e);
    }
    bool utf8 = !o.ascii && strcmp(nl_langinfo(CODESET), "UTF-8") == 0;
    struct explore x;
    if (explore_init(&x, &c, loaded, utf8, &e) != MT_OK) {
        if (cp.path != NULL) /* a plan that cannot run: name the file (issue 9) */
            err_wrap(&e, "%s", cp.path);
        return cmd_fail("explore", &e);
    }
    if (o.trace && explore_load_trace(&x, o.trace, &e) != MT_OK) {
        explore_fini(&x);
        return cmd_fail("explore", &e);
    }
    if (explore_open_search(&x, o.search, o.offload, &e) != MT_OK) {
        explore_fini(&x);
        return cmd_usage_error("explore", "%s", e.msg);
    }
    int status = 0;
    /* stdout piped or redirected (explore > frame.txt, explore | less): there is no terminal to
     * draw on, so one frame is printed as --dump-screen would, and stderr says so */
    if (!o.dump && !isatty(STDOUT_FILENO)) {
        fprintf(stderr, "mario-tui explore: stdout is not a terminal: printing one %dx%d frame "
                        "as --dump-screen does (run it on a terminal to explore)\n",
                o.w, o.h);
        o.dump = true;
    }
    if (o.dump) {
        struct cells *g = cells_new(o.w, o.h, utf8);
        x.w = o.w, x.h = o.h;
        explore_draw(&x, g); /* lays out once so that keys see the real width */
        explore_feed(&x, o.keys, g);
        explore_draw(&x, g);
        cells_dump(g, stdout);
        if (o.png != NULL && paint_cairo_cells_png(g, !o.light, o.png, &e) != MT_OK)
            status = cmd_fail("explore", &e);
        cells_free(g);
    } else {
        if (!isatty(STDIN_FILENO)) { /* keys cannot be read: nothing to explore with */
            explore_fini(&x);
            fprintf(stderr, "mario-tui explore: stdin is not a terminal, so no keys can be read "
                            "(use --dump-screen --keys K to print a frame, or mario-tui "
                            "simulate)\n");
            return 2;
        }
        if (screen_run(&x, o.max_iter, &e) != MT_OK)
            status = cmd_fail("explore", &e);
    }
    explore_fini(&x);
    return status;
}
