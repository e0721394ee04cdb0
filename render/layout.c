/* render/layout.c: the item list every picture is made of (render/layout.h): boxes, lines,
 * texts and paths in abstract units, appended in paint order, their text metrics and the
 * painters' walk over them. The Gantt figure of annotated plans is render/layout_gantt.c;
 * other pictures (render/chart.c) add items one by one. Text widths are estimated from DejaVu
 * Sans advances, so the layout stays free of any font library. */
#include <config.h>
#include "render/layout_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/config.h"
#include "util/xalloc.h"

/* ---- text metrics ---------------------------------------------------------------------- */

double layout_text_width(const char *s, double size)
{
    double w = 0;
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if ((*c & 0xc0) == 0x80)
            continue; /* UTF-8 continuation byte */
        if (*c >= 0x80)
            w += 0.75;
        else if (*c >= '0' && *c <= '9')
            w += 0.64;
        else if (*c >= 'A' && *c <= 'Z')
            w += 0.70;
        else if (*c == 'm' || *c == 'w' || *c == 'M' || *c == 'W')
            w += 0.90;
        else if (*c >= 'a' && *c <= 'z')
            w += 0.58;
        else if (*c == ' ')
            w += 0.32;
        else
            w += 0.45;
    }
    return w * size;
}

double layout_text_width_style(const char *s, double size, unsigned style)
{
    return layout_text_width(s, size) * (style & LAYOUT_BOLD ? 1.1 : 1.0);
}

void layout_item_bounds(const struct layout_item *it, double *x0, double *y0, double *x1,
                        double *y1)
{
    switch (it->kind) {
    case LAYOUT_BOX: *x0 = it->x, *y0 = it->y, *x1 = it->x + it->w, *y1 = it->y + it->h; return;
    case LAYOUT_LINE:
        *x0 = fmin(it->x, it->x + it->w), *x1 = fmax(it->x, it->x + it->w);
        *y0 = fmin(it->y, it->y + it->h), *y1 = fmax(it->y, it->y + it->h);
        return;
    case LAYOUT_TEXT: {
        double w = layout_text_width_style(it->text, it->h, it->style);
        double left = it->anchor == LAYOUT_START    ? it->x
                      : it->anchor == LAYOUT_MIDDLE ? it->x - w / 2
                                                    : it->x - w;
        *x0 = left, *x1 = left + w;
        *y0 = it->y - it->h * 0.76, *y1 = it->y + it->h * 0.24;
        return;
    }
    case LAYOUT_PATH:
        *x0 = *y0 = INFINITY, *x1 = *y1 = -INFINITY;
        for (int i = 0; i < it->n; i++) {
            *x0 = fmin(*x0, it->px[i]), *x1 = fmax(*x1, it->px[i]);
            *y0 = fmin(*y0, it->py[i]), *y1 = fmax(*y1, it->py[i]);
        }
        if (it->n == 0)
            *x0 = *y0 = *x1 = *y1 = 0;
        return;
    }
}

/* ---- the item list --------------------------------------------------------------------- */

struct layout_item *layout_add(struct layout *l, enum layout_kind k, enum layout_role r,
                               enum pal c)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 256;
        l->items = xreallocarray(l->items, (size_t)l->cap, sizeof *l->items);
    }
    struct layout_item *it = &l->items[l->n++];
    memset(it, 0, sizeof *it);
    it->kind = k;
    it->role = r;
    it->color = c;
    it->panel = it->dev = it->row = it->id = it->mb = it->part = it->stage = -1;
    it->op = OP__COUNT;
    return it;
}

struct layout_item *layout_add_box(struct layout *l, enum layout_role r, enum pal c, double x,
                                   double y, double w, double h, unsigned style)
{
    struct layout_item *it = layout_add(l, LAYOUT_BOX, r, c);
    it->x = x, it->y = y, it->w = w, it->h = h;
    it->style = style;
    return it;
}

struct layout_item *layout_add_line(struct layout *l, enum layout_role r, enum pal c, double x0,
                                    double y0, double x1, double y1, double lw, unsigned style)
{
    struct layout_item *it = layout_add(l, LAYOUT_LINE, r, c);
    it->x = x0, it->y = y0, it->w = x1 - x0, it->h = y1 - y0;
    it->lw = lw;
    it->style = style;
    return it;
}

/* A text no wider than maxw: the font shrinks to 6 units, then the text is cut with "…".
 * Returns NULL (nothing added) when not even one character fits. */
struct layout_item *layout_add_text(struct layout *l, enum layout_role r, enum pal c, double x,
                                    double y, double size, enum layout_anchor anchor,
                                    unsigned style, double maxw, const char *s)
{
    double w = layout_text_width_style(s, size, style);
    if (w > maxw && size > 6)
        size = fmax(6, size * maxw / w);
    char *t = xstrdup(s);
    size_t len = strlen(t);
    while (len > 0 && layout_text_width_style(t, size, style) > maxw) {
        /* Cut back to a character boundary, leaving room for the ellipsis. */
        do
            len--;
        while (len > 0 && ((unsigned char)t[len] & 0xc0) == 0x80);
        if (len == 0)
            break;
        t = xreallocarray(t, len + 4, 1);
        memcpy(t + len, "\xe2\x80\xa6", 4);
    }
    if (len == 0) {
        free(t);
        return NULL;
    }
    struct layout_item *it = layout_add(l, LAYOUT_TEXT, r, c);
    it->x = x, it->y = y, it->h = size;
    it->anchor = anchor;
    it->style = style;
    it->text = t;
    return it;
}

/* ---- building item by item (pictures other than the Gantt chart: render/chart.c) ---------- */

struct layout *layout_new(double width, double height)
{
    struct layout *l = xcalloc(1, sizeof *l);
    l->width = width;
    l->height = height;
    return l;
}

void layout_set_size(struct layout *l, double width, double height)
{
    l->width = width;
    l->height = height;
}

void layout_free(struct layout *l)
{
    if (l == NULL)
        return;
    for (int i = 0; i < l->n; i++) {
        free((char *)l->items[i].text);
        free((double *)l->items[i].px);
        free((double *)l->items[i].py);
    }
    free(l->items);
    free(l->rows);
    free(l);
}

double layout_width(const struct layout *l)
{
    return l->width;
}

double layout_height(const struct layout *l)
{
    return l->height;
}

int layout_count(const struct layout *l)
{
    return l->n;
}

const struct layout_item *layout_items(const struct layout *l)
{
    return l->items;
}

void layout_time_axis(const struct layout *l, double *x0, double *scale)
{
    *x0 = l->x0;
    *scale = l->scale;
}

const struct layout_row *layout_rows(const struct layout *l, int panel, int *n)
{
    int first = 0;
    while (first < l->nrows && l->rows[first].panel != panel)
        first++;
    int last = first;
    while (last < l->nrows && l->rows[last].panel == panel)
        last++;
    *n = last - first;
    return last > first ? &l->rows[first] : NULL;
}

void layout_paint(const struct layout *l, const struct painter *pt)
{
    for (int i = 0; i < l->n; i++) {
        const struct layout_item *it = &l->items[i];
        switch (it->kind) {
        case LAYOUT_BOX:
            if (pt->box)
                pt->box(pt->ctx, it);
            break;
        case LAYOUT_TEXT:
            if (pt->text)
                pt->text(pt->ctx, it);
            break;
        case LAYOUT_LINE:
            if (pt->line)
                pt->line(pt->ctx, it);
            break;
        case LAYOUT_PATH:
            if (pt->path)
                pt->path(pt->ctx, it);
            break;
        }
    }
}

