/* render/layout.h: the one layout step of render/ (docs/design.md "render/"): annotated plans in,
 * a flat list of primitives in abstract units out (boxes, texts, lines, paths), in paint
 * order. Painters (Cairo, SVG, terminal cells) only walk the list; nothing here draws. */
#ifndef MT_RENDER_LAYOUT_H
#define MT_RENDER_LAYOUT_H

#include <stdbool.h>

#include "render/palette.h"
#include "sim/plan/plan.h"

struct sim_result;
struct mt_err;

/* A second timeline over the same plan ids (a measured run, docs/design.md: traces line up one to
 * one with the simulation), in the simulation's time unit (us, or t under unit costs).
 * Times start at 0; an instruction with start < 0, end < start or a NaN was not measured
 * and is left out. */
struct layout_timeline {
    const char *name;          /* row label; NULL = "measured" */
    const double *start, *end; /* [plan_total(plan)] by plan_id */
};

/* One Gantt panel: a plan, its simulation and optionally a measured timeline. */
struct layout_panel {
    const char *name; /* "base", "ckpt", ...; NULL = no heading */
    const struct plan *plan;
    const struct sim_result *sim;
    const struct layout_timeline *measured; /* NULL = one row per device; else two */
};

/* Drawn as a box: compute, allreduce, optimizer step (the rest are send marks or nothing). */
bool layout_is_drawn_op(enum op op);

#define LAYOUT_MIN_WIDTH 320.0
#define LAYOUT_MAX_WIDTH 32768.0
#define LAYOUT_DEFAULT_WIDTH 1200.0

struct layout_opts {
    double width;       /* canvas width in units (PNG pixels, PDF points); 0 = 1200 */
    double lane_height; /* height of one lane; 0 = automatic (18, less for many devices) */
    bool memory;        /* peak-memory bars beside the rows and memory curves below */
    bool comm;          /* a thin mark per send -> receive */
    bool no_labels;     /* no micro-batch numbers in the boxes */
    bool no_legend;
    double t_max;      /* end of the time axis, at least the latest end over all panels (0 =
                        * that end). Set it to put separately built layouts (PDF pages) on
                        * one scale. */
    const char *title; /* NULL = made from the first panel's config */
};

enum layout_kind {
    LAYOUT_BOX,  /* x, y, w, h */
    LAYOUT_TEXT, /* anchor (x, y) on the baseline, font size h */
    LAYOUT_LINE, /* from (x, y) to (x + w, y + h), width lw */
    LAYOUT_PATH, /* polygon px/py[n], filled (closed) or stroked (lw > 0 and not filled) */
};

/* What a primitive means; painters may style by role, tests count by it. */
enum layout_role {
    LAYOUT_ROLE_DECOR,  /* backgrounds, bands */
    LAYOUT_ROLE_INSTR,  /* one instruction box (op, mb, part, id set) */
    LAYOUT_ROLE_LABEL,  /* the micro-batch number inside an instruction box */
    LAYOUT_ROLE_BUBBLE, /* an idle interval of a device */
    LAYOUT_ROLE_COMM,   /* a send -> receive mark */
    LAYOUT_ROLE_GRID,
    LAYOUT_ROLE_AXIS, /* axis line and ticks (value = tick time) */
    LAYOUT_ROLE_TICK_LABEL,
    LAYOUT_ROLE_ROW_LABEL,  /* device and lane names */
    LAYOUT_ROLE_MEM_STATIC, /* peak bar, static part */
    LAYOUT_ROLE_MEM_DYN,    /* peak bar, activations part */
    LAYOUT_ROLE_MEM_OVER,   /* part of a bar or curve above the cap */
    LAYOUT_ROLE_MEM_CAP,    /* the cap line */
    LAYOUT_ROLE_MEM_CURVE,  /* memory over time of one device */
    LAYOUT_ROLE_LEGEND,
    LAYOUT_ROLE_TITLE,
    LAYOUT_ROLE_HEADING, /* panel headings */
    LAYOUT_ROLE_ITERATION, /* async plans: where an iteration starts on a device (a line) */
};

/* Style bits. */
#define LAYOUT_HATCH 0x1        /* diagonal hatching over the fill (X's second pipeline, bubbles) */
#define LAYOUT_DASHED 0x2       /* dashed line */
#define LAYOUT_BOLD 0x4         /* bold text */
#define LAYOUT_BORDER 0x8       /* a thin PAL_BG border, to part adjacent boxes */
#define LAYOUT_MEASURED 0x10    /* belongs to a measured row */
#define LAYOUT_TRANSLUCENT 0x20 /* fill at reduced opacity */

enum layout_anchor { LAYOUT_START, LAYOUT_MIDDLE, LAYOUT_END };

struct layout_item {
    enum layout_kind kind;
    enum layout_role role;
    enum pal color; /* fill of boxes and paths, ink of texts and lines */
    unsigned style; /* LAYOUT_* bits */
    double x, y, w, h;
    double lw; /* line width (lines, stroked paths) */
    enum layout_anchor anchor;
    const char *text; /* LAYOUT_TEXT */
    int n;            /* LAYOUT_PATH */
    const double *px, *py;
    /* Keys, for instruction boxes and their labels (else -1): */
    int panel, dev, row; /* row: lane index from the top of its panel */
    int id, mb, part, stage;
    enum op op;
    double t0, t1; /* instruction interval, axis ticks: t0 = tick time */
};

/* A painter draws a layout (docs/design.md "Conventions": vtables): Cairo and SVG here, terminal cells later. */
struct painter {
    void *ctx;
    void (*box)(void *ctx, const struct layout_item *it);
    void (*text)(void *ctx, const struct layout_item *it);
    void (*line)(void *ctx, const struct layout_item *it);
    void (*path)(void *ctx, const struct layout_item *it);
};

struct layout;

/* One Gantt row of a panel, top to bottom: lane `lane` (the instruction's part) of device `dev`,
 * sub 0 = the simulation, 1 = the measured timeline. An instruction box (and an iteration
 * mark) names its row by (panel, row), row indexing its panel's rows; a bubble, idle time of
 * the device, covers every lane of its (panel, dev, sub: LAYOUT_MEASURED). Painters that do not
 * place rows by y (the terminal's, render/paint_cells.h) place them by this list. */
struct layout_row {
    int panel, dev, sub, lane;
    double y, h; /* the lane's band, in units */
};

/* Lays out n panels stacked on one time axis. Every panel's sim must come from its plan;
 * measured timelines must cover plan_total ids. MT_EINVAL for a width outside
 * [LAYOUT_MIN_WIDTH, LAYOUT_MAX_WIDTH] or an empty panel list. *out is owned by the caller. */
int layout_build(const struct layout_panel *panels, int n, const struct layout_opts *o,
                 struct layout **out, struct mt_err *e);
void layout_free(struct layout *l);

/* Building a layout item by item, for pictures other than the Gantt chart (render/chart.h).
 * An empty layout of the given size (units); the size may be set again once known. */
struct layout *layout_new(double width, double height);
void layout_set_size(struct layout *l, double width, double height);
/* Append one primitive (paint order = call order) and return it for its keys to be set.
 * A text no wider than maxw: the font shrinks to 6 units, then the text is cut with an
 * ellipsis; NULL (nothing added) when not one character fits. The layout keeps a copy. */
struct layout_item *layout_add_box(struct layout *l, enum layout_role r, enum pal c, double x,
                                   double y, double w, double h, unsigned style);
struct layout_item *layout_add_line(struct layout *l, enum layout_role r, enum pal c, double x0,
                                    double y0, double x1, double y1, double lw, unsigned style);
struct layout_item *layout_add_text(struct layout *l, enum layout_role r, enum pal c, double x,
                                    double y, double size, enum layout_anchor anchor,
                                    unsigned style, double maxw, const char *s);

double layout_width(const struct layout *l);
double layout_height(const struct layout *l);
int layout_count(const struct layout *l);
/* Borrowed view of the items in paint order. */
const struct layout_item *layout_items(const struct layout *l);
/* The time axis shared by all panels: x = x0 + t * scale (t in the simulation's unit). */
void layout_time_axis(const struct layout *l, double *x0, double *scale);
/* Borrowed view of panel's Gantt rows (*n of them; none for a panel that does not exist or a
 * layout not made by layout_build). */
const struct layout_row *layout_rows(const struct layout *l, int panel, int *n);
/* Calls the painter for every item in order. */
void layout_paint(const struct layout *l, const struct painter *pt);
/* The extent of an item; for texts an estimate from the font size (LAYOUT_EM per char). */
void layout_item_bounds(const struct layout_item *it, double *x0, double *y0, double *x1,
                        double *y1);
/* Estimated advance of s at font size size (UTF-8 aware, digits and letters alike). */
double layout_text_width(const char *s, double size);

#endif
