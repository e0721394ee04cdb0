/* render/layout_internal.h: the item list's insides, shared by render/layout.c (the list, its
 * metrics) and render/layout_gantt.c (the Gantt figure). Not part of the interface. */
#ifndef MT_RENDER_LAYOUT_INTERNAL_H
#define MT_RENDER_LAYOUT_INTERNAL_H

#include "render/layout.h"

struct layout {
    double width, height;
    double x0, scale, t_max;
    int n, cap;
    struct layout_item *items;
    int nrows, rows_cap;
    struct layout_row *rows; /* every panel's Gantt rows, panel by panel */
};

/* Font sizes and spacing, in units. */
#define FS_TITLE 14.0
#define FS_SUB 10.5
#define FS_HEAD 11.5
#define FS_LEGEND 9.5
#define FS_ROW 10.0
#define FS_LANE 8.5
#define FS_TICK 9.0
#define FS_MEM 8.5
#define MARGIN 8.0

/* A new item of kind k at the end of the list (paint order), its keys unset (-1). */
struct layout_item *layout_add(struct layout *l, enum layout_kind k, enum layout_role r,
                               enum pal c);
/* layout_text_width for a style (bold text is wider). */
double layout_text_width_style(const char *s, double size, unsigned style);

#endif
