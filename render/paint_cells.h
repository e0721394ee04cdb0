/* render/paint_cells.h: the terminal painter: a grid of character cells, each a code point
 * with a foreground and background colour from render/palette.h and bold / reverse /
 * underline bits, and the painter of render/layout.h's Gantt rows into it (the same layout
 * the Cairo and SVG painters draw, or its rows alone: render/layout_lanes.h). Views of the explorer draw here; tui/screen.c copies the
 * grid to curses, and --dump-screen prints it, so golden tests need no terminal. */
#ifndef MT_RENDER_PAINT_CELLS_H
#define MT_RENDER_PAINT_CELLS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "render/palette.h"

#define CELL_BOLD 0x1
#define CELL_REVERSE 0x2
#define CELL_UNDERLINE 0x4

struct cell {
    uint32_t ch; /* Unicode code point */
    unsigned char fg, bg; /* enum pal */
    unsigned char attr;   /* CELL_* */
};

struct cells {
    int w, h;
    bool utf8;   /* may use block elements; else ASCII only */
    struct cell *c; /* [h * w] */
};

struct cells *cells_new(int w, int h, bool utf8);
void cells_free(struct cells *g);
void cells_clear(struct cells *g, enum pal bg);
/* Out-of-range positions are ignored (views may draw past the edge). */
void cells_put(struct cells *g, int x, int y, uint32_t ch, enum pal fg, enum pal bg,
               unsigned attr);
struct cell *cells_at(struct cells *g, int x, int y);
/* Writes UTF-8 text from (x, y), clipped to max_w cells (<= 0: to the edge). Returns the
 * cells written. */
int cells_text(struct cells *g, int x, int y, int max_w, const char *s, enum pal fg, enum pal bg,
               unsigned attr);
int cells_printf(struct cells *g, int x, int y, int max_w, enum pal fg, enum pal bg,
                 unsigned attr, const char *fmt, ...) __attribute__((format(printf, 8, 9)));
/* Fills [x0, x1) of row y, in eighths of a cell (x0_8 = 8 * x0), over what is there: a cell
 * the span shares with earlier spans or the row's background keeps both colours as a left
 * block ▏▎▍▌▋▊▉ of the left colour over the right one; a cell of more than two parts is
 * drawn as the block that gets the fewest eighths wrong, showing the span where that ties.
 * Without UTF-8 a cell takes the span's colour when the span covers at least half of it (a
 * span inside one cell: that cell). */
void cells_span(struct cells *g, int y, int x0_8, int x1_8, enum pal color);
/* A horizontal bar of value in [0, max] over width cells, in eighths. */
void cells_bar(struct cells *g, int x, int y, int width, double from, double to, double max,
               enum pal color);
struct layout;

/* Where a Gantt panel lands: columns [x, x + w) show its times [t0, t0 + w * tpc) (its time
 * unit: t or us); row r of the panel (layout_rows, layout_lanes' order) goes to grid row row_y[r], or
 * nowhere where that is -1 or r >= rows. */
struct cells_gantt {
    int x, w;
    double t0, tpc;
    const int *row_y; /* [rows] */
    int rows;
    int *owner; /* NULL, or [g->w * g->h]: for each painted cell the plan id of the instruction
                 * that gave it its colour (the one of that colour covering most of it), else
                 * -1; cells not painted are left alone */
};

/* Paints one panel's instruction boxes and bubbles, as render/layout_lanes.h keeps its rows
 * (each row's boxes and bubbles sorted by time, made once per plan shown: a frame walks only
 * the intervals its time window shows, so a viewer that keeps them, tui/view_gantt.c,
 * repaints a plan of a million boxes zoomed in at the cost of what is on screen), into their
 * rows: every cell of [x, x + w) of a shown row. A cell takes the colour of what covers it:
 * PAL_BUBBLE when idle time covers more than half of it, else the op colour covering the most
 * of it (ties: the one that starts first), else (no op, little idle: the lane of another
 * part, the time past the end of the step) PAL_DEFAULT, the terminal's own background, never
 * the page's. That colour is the cell's background, with UTF-8 and without; with UTF-8 a cell
 * of two parts also shows where the other part lies: a left block ▏..▉ in its colour when it
 * is on the left (in eighths), ▕ or ▐ when it is on the right; a cell of ops interleaved
 * finer than it shows the op covering the most of the rest as a shade over the dominant one
 * (░ from 1/8 of the cell, ▒ from 3/8). A bubble cell holds a dot · (. without UTF-8) in
 * PAL_AXIS. Labels and selection are the caller's, over this. */
struct layout_lanes;
void cells_paint_gantt_lanes(struct cells *g, const struct layout_lanes *ln,
                             const struct cells_gantt *v);
/* Over that and over the caller's labels: where an iteration starts on a device (async plans),
 * a heavy bar ┃ (| without UTF-8) in PAL_CAP, bold, in the cell of its time. */
void cells_paint_gantt_lanes_marks(struct cells *g, const struct layout_lanes *ln,
                                   const struct cells_gantt *v);

/* How a colour terminal shows a cell (one rule for tui/screen.c and the screenshot painter,
 * render/paint_cairo.h): foreground and background as palette entries or CELLS_TERM_OWN, the
 * terminal's own colour (curses -1: its default ink as a foreground, its default paper as a
 * background), the attributes to set and the character. The page, idle time and empty
 * Gantt cells are the terminal's own paper, never the page's white; ink that is the page's
 * text, axes and the cap is the terminal's own ink (dim for axes, bold for the cap), so it
 * reads on dark and light themes alike; the title bar (page ink on PAL_TEXT) is the
 * terminal's own colours reversed; a block whose ink is the page over a fill is the fill as
 * ink, the terminal's paper as paper, reversed. */
#define CELLS_TERM_OWN (-1)
#define CELLS_TERM_DIM 0x8
struct cells_term {
    int fg, bg;      /* enum pal or CELLS_TERM_OWN */
    unsigned attr;   /* CELL_* | CELLS_TERM_DIM */
    uint32_t ch;
};
void cells_term(const struct cell *c, struct cells_term *out);

/* The grid as text, one line per row, trailing blanks trimmed. */
void cells_dump(const struct cells *g, FILE *f);

#endif
