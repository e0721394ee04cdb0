/* render/paint_cairo.c: a struct painter over a cairo_t. Boxes are filled rectangles (with a
 * thin white border between adjacent instructions), hatching is a set of diagonal lines
 * clipped to the box (vector in PDF, no raster pattern), texts use the toy font API with
 * DejaVu Sans (fontconfig falls back to any sans), and surfaces write into a memory buffer
 * through Cairo's stream callbacks, which str_write_file_atomic then puts on disk. */
#include <config.h>
#include "render/paint_cairo.h"

#include <cairo-pdf.h>
#include <cairo.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "render/layout.h"
#include "render/paint_cells.h"
#include "render/palette.h"
#include "util/err.h"
#include "util/str.h"
#include "util/xalloc.h"

#define PAINT_FONT "DejaVu Sans"

/* ---- the painter ------------------------------------------------------------------------- */

static void paint_cairo_color(cairo_t *cr, enum pal p, double alpha)
{
    struct rgb c = palette_rgb(p);
    cairo_set_source_rgba(cr, c.r / 255.0, c.g / 255.0, c.b / 255.0, alpha);
}

/* Diagonal lines over (x, y, w, h), clipped to it. */
static void paint_cairo_hatch(cairo_t *cr, const struct layout_item *it, bool bubble)
{
    if (it->w <= 0 || it->h <= 0)
        return;
    double step = bubble ? 5 * M_SQRT2 : 5 * M_SQRT2;
    cairo_save(cr);
    cairo_rectangle(cr, it->x, it->y, it->w, it->h);
    cairo_clip(cr);
    double start = it->x - it->h - fmod(it->x - it->h, step);
    for (double k = start; k < it->x + it->w; k += step) {
        cairo_move_to(cr, k, it->y + it->h);
        cairo_line_to(cr, k + it->h, it->y);
    }
    if (bubble)
        cairo_set_source_rgb(cr, 0xc0 / 255.0, 0xc0 / 255.0, 0xc0 / 255.0);
    else
        cairo_set_source_rgba(cr, 1, 1, 1, 0.6);
    cairo_set_line_width(cr, bubble ? 1.0 : 1.8);
    cairo_stroke(cr);
    cairo_restore(cr);
}

static void paint_cairo_box(void *ctx, const struct layout_item *it)
{
    cairo_t *cr = ctx;
    if (it->w <= 0 || it->h <= 0)
        return;
    cairo_rectangle(cr, it->x, it->y, it->w, it->h);
    paint_cairo_color(cr, it->color, it->style & LAYOUT_TRANSLUCENT ? 0.55 : 1.0);
    if (it->style & LAYOUT_BORDER) {
        cairo_fill_preserve(cr);
        paint_cairo_color(cr, PAL_BG, 1.0);
        cairo_set_line_width(cr, 0.6);
        cairo_stroke(cr);
    } else {
        cairo_fill(cr);
    }
    if (it->style & LAYOUT_HATCH)
        paint_cairo_hatch(cr, it, it->role == LAYOUT_ROLE_BUBBLE);
}

static void paint_cairo_text(void *ctx, const struct layout_item *it)
{
    cairo_t *cr = ctx;
    cairo_select_font_face(cr, PAINT_FONT, CAIRO_FONT_SLANT_NORMAL,
                           it->style & LAYOUT_BOLD ? CAIRO_FONT_WEIGHT_BOLD
                                                   : CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr, it->h);
    double x = it->x;
    if (it->anchor != LAYOUT_START) {
        cairo_text_extents_t ext;
        cairo_text_extents(cr, it->text, &ext);
        x -= it->anchor == LAYOUT_MIDDLE ? ext.x_advance / 2 : ext.x_advance;
    }
    paint_cairo_color(cr, it->color, 1.0);
    cairo_move_to(cr, x, it->y);
    cairo_show_text(cr, it->text);
    cairo_new_path(cr);
}

static void paint_cairo_line(void *ctx, const struct layout_item *it)
{
    cairo_t *cr = ctx;
    static const double dash[] = {4, 3};
    cairo_move_to(cr, it->x, it->y);
    cairo_line_to(cr, it->x + it->w, it->y + it->h);
    paint_cairo_color(cr, it->color, 1.0);
    cairo_set_line_width(cr, it->lw > 0 ? it->lw : 1);
    if (it->style & LAYOUT_DASHED)
        cairo_set_dash(cr, dash, 2, 0);
    cairo_stroke(cr);
    if (it->style & LAYOUT_DASHED)
        cairo_set_dash(cr, NULL, 0, 0);
}

static void paint_cairo_path(void *ctx, const struct layout_item *it)
{
    cairo_t *cr = ctx;
    if (it->n < 2)
        return;
    cairo_move_to(cr, it->px[0], it->py[0]);
    for (int i = 1; i < it->n; i++)
        cairo_line_to(cr, it->px[i], it->py[i]);
    paint_cairo_color(cr, it->color, it->style & LAYOUT_TRANSLUCENT ? 0.55 : 1.0);
    if (it->lw > 0) {
        cairo_set_line_width(cr, it->lw);
        cairo_stroke(cr);
    } else {
        cairo_close_path(cr);
        cairo_fill(cr);
    }
}

static void paint_cairo_draw(cairo_t *cr, const struct layout *l)
{
    struct painter pt = {cr, paint_cairo_box, paint_cairo_text, paint_cairo_line, paint_cairo_path};
    cairo_set_line_cap(cr, CAIRO_LINE_CAP_BUTT);
    layout_paint(l, &pt);
}

/* ---- surfaces into memory ---------------------------------------------------------------- */

struct paint_cairo_buf {
    unsigned char *data;
    size_t len, cap;
};

static cairo_status_t paint_cairo_write(void *closure, const unsigned char *data,
                                        unsigned int length)
{
    struct paint_cairo_buf *b = closure;
    if (b->len + length > b->cap) {
        size_t cap = b->cap ? b->cap : 1 << 16;
        while (cap < b->len + length)
            cap *= 2;
        b->data = xreallocarray(b->data, cap, 1);
        b->cap = cap;
    }
    memcpy(b->data + b->len, data, length);
    b->len += length;
    return CAIRO_STATUS_SUCCESS;
}

static int paint_cairo_status(cairo_status_t st, const char *what, struct mt_err *e)
{
    if (st == CAIRO_STATUS_SUCCESS)
        return MT_OK;
    return err_set(e, st == CAIRO_STATUS_NO_MEMORY ? MT_ENOMEM : MT_EIO, "%s: %s", what,
                   cairo_status_to_string(st));
}

int paint_cairo_png_render(const struct layout *l, unsigned char **out, size_t *len,
                           struct mt_err *e)
{
    *out = NULL;
    *len = 0;
    double w = ceil(layout_width(l)), h = ceil(layout_height(l));
    if (w > PAINT_CAIRO_MAX_PX || h > PAINT_CAIRO_MAX_PX)
        return err_set(e, MT_EINVAL,
                       "PNG: the picture is %.0f x %.0f pixels, over Cairo's %d; use SVG or PDF, "
                       "or fewer devices",
                       w, h, PAINT_CAIRO_MAX_PX);
    cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, (int)w, (int)h);
    TRY(paint_cairo_status(cairo_surface_status(s), "PNG", e));
    cairo_t *cr = cairo_create(s);
    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_paint(cr);
    paint_cairo_draw(cr, l);
    int rc = paint_cairo_status(cairo_status(cr), "PNG", e);
    cairo_destroy(cr);
    struct paint_cairo_buf b = {0};
    if (rc == MT_OK)
        rc = paint_cairo_status(cairo_surface_write_to_png_stream(s, paint_cairo_write, &b), "PNG",
                                e);
    cairo_surface_destroy(s);
    if (rc != MT_OK) {
        free(b.data);
        return rc;
    }
    *out = b.data;
    *len = b.len;
    return MT_OK;
}

int paint_cairo_png(const struct layout *l, const char *path, struct mt_err *e)
{
    unsigned char *data;
    size_t len;
    TRY(paint_cairo_png_render(l, &data, &len, e));
    int rc = str_write_file_atomic(path, (const char *)data, len, e);
    free(data);
    return rc;
}

int paint_cairo_pdf_render(const struct layout *const *pages, int n, unsigned char **out,
                           size_t *len, struct mt_err *e)
{
    *out = NULL;
    *len = 0;
    if (n < 1)
        return err_set(e, MT_EINVAL, "PDF: no page to draw");
    struct paint_cairo_buf b = {0};
    cairo_surface_t *s = cairo_pdf_surface_create_for_stream(
        paint_cairo_write, &b, layout_width(pages[0]), layout_height(pages[0]));
    int rc = paint_cairo_status(cairo_surface_status(s), "PDF", e);
    cairo_t *cr = rc == MT_OK ? cairo_create(s) : NULL;
    for (int i = 0; rc == MT_OK && i < n; i++) {
        cairo_pdf_surface_set_size(s, layout_width(pages[i]), layout_height(pages[i]));
        paint_cairo_draw(cr, pages[i]);
        cairo_show_page(cr);
        rc = paint_cairo_status(cairo_status(cr), "PDF", e);
    }
    if (cr)
        cairo_destroy(cr);
    cairo_surface_finish(s);
    if (rc == MT_OK)
        rc = paint_cairo_status(cairo_surface_status(s), "PDF", e);
    cairo_surface_destroy(s);
    if (rc != MT_OK) {
        free(b.data);
        return rc;
    }
    *out = b.data;
    *len = b.len;
    return MT_OK;
}

int paint_cairo_pdf(const struct layout *const *pages, int n, const char *path, struct mt_err *e)
{
    unsigned char *data;
    size_t len;
    TRY(paint_cairo_pdf_render(pages, n, &data, &len, e));
    int rc = str_write_file_atomic(path, (const char *)data, len, e);
    free(data);
    return rc;
}

/* ---- a terminal screenshot of a cell grid ---------------------------------------------- */

struct paint_cairo_theme {
    struct rgb fg, bg;
};

static void paint_cairo_rgb(cairo_t *cr, struct rgb c, double alpha)
{
    cairo_set_source_rgba(cr, c.r / 255.0, c.g / 255.0, c.b / 255.0, alpha);
}

/* A palette entry, or the theme's own colour (CELLS_TERM_OWN) for ink or paper. */
static struct rgb paint_cairo_term_rgb(const struct paint_cairo_theme *th, int p, bool ink)
{
    if (p == CELLS_TERM_OWN)
        return ink ? th->fg : th->bg;
    return palette_rgb((enum pal)p);
}

static struct rgb paint_cairo_mix(struct rgb a, struct rgb b, double t)
{
    return (struct rgb){(unsigned char)(a.r + (b.r - a.r) * t + 0.5),
                        (unsigned char)(a.g + (b.g - a.g) * t + 0.5),
                        (unsigned char)(a.b + (b.b - a.b) * t + 0.5)};
}

/* Block elements as shapes: true when ch is one (and it was drawn). */
static bool paint_cairo_block(cairo_t *cr, uint32_t ch, double x, double y, struct rgb ink,
                              struct rgb paper)
{
    const double w = PAINT_CAIRO_CELL_W, h = PAINT_CAIRO_CELL_H;
    double bx = x, bw = 0, by = y, bh = h, alpha = 1;
    if (ch >= 0x2589 && ch <= 0x258F) /* ▉..▏ left 7/8 .. 1/8 */
        bw = w * (0x258F - ch + 1) / 8.0;
    else if (ch == 0x2588)
        bw = w;
    else if (ch == 0x258C)
        bw = w / 2;
    else if (ch == 0x2590) /* ▐ */
        bx = x + w / 2, bw = w / 2;
    else if (ch == 0x2595) /* ▕ */
        bx = x + w * 7 / 8, bw = w / 8;
    else if (ch == 0x2580) /* ▀ upper half (the explorer's copy row: an offload) */
        bw = w, bh = h / 2;
    else if (ch >= 0x2581 && ch <= 0x2587) /* ▁..▇ lower eighths (▄: a reload) */
        bw = w, bh = h * (ch - 0x2580) / 8.0, by = y + h - bh;
    else if (ch == 0x2591 || ch == 0x2592) /* ░ ▒: the ink over a quarter, a half */
        bw = w, alpha = ch == 0x2591 ? 0.25 : 0.5;
    else
        return false;
    (void)paper;
    paint_cairo_rgb(cr, ink, alpha);
    cairo_rectangle(cr, bx, by, bw, bh);
    cairo_fill(cr);
    return true;
}

static int paint_cairo_utf8(uint32_t cp, char *buf)
{
    if (cp < 0x80) {
        buf[0] = (char)cp;
        buf[1] = 0;
        return 1;
    }
    if (cp < 0x800) {
        buf[0] = (char)(0xC0 | (cp >> 6));
        buf[1] = (char)(0x80 | (cp & 0x3F));
        buf[2] = 0;
        return 2;
    }
    buf[0] = (char)(0xE0 | (cp >> 12));
    buf[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
    buf[2] = (char)(0x80 | (cp & 0x3F));
    buf[3] = 0;
    return 3;
}

int paint_cairo_cells_png(const struct cells *g, bool dark, const char *path, struct mt_err *e)
{
    const struct paint_cairo_theme th =
        dark ? (struct paint_cairo_theme){{0xd0, 0xd0, 0xd0}, {0x1c, 0x1c, 0x1c}}
             : (struct paint_cairo_theme){{0x1a, 0x1a, 0x1a}, {0xff, 0xff, 0xff}};
    const int cw = PAINT_CAIRO_CELL_W, chh = PAINT_CAIRO_CELL_H;
    if ((long)g->w * cw > PAINT_CAIRO_MAX_PX || (long)g->h * chh > PAINT_CAIRO_MAX_PX)
        return err_set(e, MT_EINVAL, "PNG: %d x %d cells is too large", g->w, g->h);
    cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, g->w * cw, g->h * chh);
    TRY(paint_cairo_status(cairo_surface_status(s), "PNG", e));
    cairo_t *cr = cairo_create(s);
    paint_cairo_rgb(cr, th.bg, 1);
    cairo_paint(cr);
    cairo_set_font_size(cr, 14);
    for (int y = 0; y < g->h; y++)
        for (int x = 0; x < g->w; x++) {
            struct cells_term t;
            cells_term(&g->c[(size_t)y * g->w + x], &t);
            struct rgb ink = paint_cairo_term_rgb(&th, t.fg, true);
            struct rgb paper = paint_cairo_term_rgb(&th, t.bg, false);
            if (t.attr & CELL_REVERSE) {
                struct rgb k = ink;
                ink = paper, paper = k;
            }
            if (t.attr & CELLS_TERM_DIM)
                ink = paint_cairo_mix(ink, paper, 0.4);
            double px = x * cw, py = y * chh;
            paint_cairo_rgb(cr, paper, 1);
            cairo_rectangle(cr, px, py, cw, chh);
            cairo_fill(cr);
            if (t.ch != ' ' && !paint_cairo_block(cr, t.ch, px, py, ink, paper)) {
                char u[8];
                paint_cairo_utf8(t.ch, u);
                cairo_select_font_face(cr, "DejaVu Sans Mono", CAIRO_FONT_SLANT_NORMAL,
                                       (t.attr & CELL_BOLD) ? CAIRO_FONT_WEIGHT_BOLD
                                                            : CAIRO_FONT_WEIGHT_NORMAL);
                paint_cairo_rgb(cr, ink, 1);
                cairo_move_to(cr, px, py + 14);
                cairo_show_text(cr, u);
            }
            if (t.attr & CELL_UNDERLINE) {
                paint_cairo_rgb(cr, ink, 1);
                cairo_rectangle(cr, px, py + chh - 2, cw, 1.5);
                cairo_fill(cr);
            }
        }
    int rc = paint_cairo_status(cairo_status(cr), "PNG", e);
    cairo_destroy(cr);
    struct paint_cairo_buf b = {0};
    if (rc == MT_OK)
        rc = paint_cairo_status(cairo_surface_write_to_png_stream(s, paint_cairo_write, &b), "PNG",
                                e);
    cairo_surface_destroy(s);
    if (rc == MT_OK)
        rc = str_write_file_atomic(path, (const char *)b.data, b.len, e);
    free(b.data);
    return rc;
}
