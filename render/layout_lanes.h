/* render/layout_lanes.h: the Gantt rows of one panel as the terminal draws them (issue 27: the
 * explorer's first frame of a new plan): for each row of layout_rows' list its instruction
 * boxes and its device's idle time, flat and sorted by time, and the iteration marks of async
 * plans; no geometry in units, no labels, no item per box (24 bytes an interval where a
 * layout's item takes ~140). Made straight from a plan and its simulation by the rules the
 * figure draws by (render/layout_gantt.h: layout_box_of, layout_idle_of), or from a layout
 * made by layout_build, so the terminal painter (render/paint_cells.h) paints either the
 * same. */
#ifndef MT_RENDER_LAYOUT_LANES_H
#define MT_RENDER_LAYOUT_LANES_H

#include <stdbool.h>

#include "render/layout.h"

struct mt_err;

/* One interval of a row: an instruction box or idle time of its device. What the box is (op,
 * micro-batch, stage) its plan says (plan_locate_id). */
struct layout_seg {
    double t0, t1;
    int id;              /* plan id of an instruction box; -1 for idle time */
    unsigned char color; /* enum pal: the box's fill, PAL_BUBBLE for idle time */
};

/* One row, as struct layout_row names it (without its place in units). */
struct layout_lane {
    int dev, sub, lane;
    bool by_time; /* its boxes start in time order in the plan (a device runs in order) */
};

/* Where an iteration starts on a device (async plans): row and time. */
struct layout_mark {
    int row;
    double t;
};

/* LAYOUT_LANES_BLOCK intervals of a row (its last block may hold fewer): what a frame needs
 * to pass over them without reading them. */
#define LAYOUT_LANES_BLOCK 64
struct layout_lanes_block {
    double end;          /* the latest end of the row's intervals up to this block's last */
    double longest;      /* the longest box in the block (t1 - t0), -1 when none */
    int id_lo, id_hi;    /* its boxes' ids lie in [id_lo, id_hi] */
};

struct layout_lanes {
    int rows;
    struct layout_lane *lane; /* [rows], in layout_rows' order */
    int *off;                 /* [rows + 1]: row r's intervals are seg[off[r] .. off[r + 1]) */
    struct layout_seg *seg;   /* each row's boxes and idle time, sorted by (t0, id) */
    int *block_off;           /* [rows + 1]: row r's blocks are block[block_off[r] ..) */
    struct layout_lanes_block *block;
    /* The boxes of each row that is not by_time in plan order (the order the figure paints
     * them): indices into seg from plan_order[off[r]], -1 after the last; NULL when every
     * row is by_time (then the sorted order is the plan's). */
    int *plan_order;
    int marks;
    struct layout_mark *mark; /* [marks] */
};

/* The rows of panel p (its plan, simulation and measured timeline) as layout_build would lay
 * them out; MT_EINVAL as layout_build for a panel it cannot draw. *out owned by the caller. */
int layout_lanes_build(const struct layout_panel *p, struct layout_lanes **out,
                       struct mt_err *e);
/* The same read from the items of panel `panel` of a layout (its instruction boxes, bubbles
 * and iteration marks): any layout, made by layout_build or not. */
struct layout_lanes *layout_lanes_of(const struct layout *l, int panel);
void layout_lanes_free(struct layout_lanes *ln);
/* The index in seg of the first interval of row r that ends after t (off[r + 1] when none):
 * those before it end at or before t. */
int layout_lanes_first(const struct layout_lanes *ln, int r, double t);
/* The index of the first box of row r from index i on (in sorted order) that lasts at least
 * len or has plan id `id`; off[r + 1] when none. Skips a block's boxes at once. */
int layout_lanes_next(const struct layout_lanes *ln, int r, int i, double len, int id);

#endif
