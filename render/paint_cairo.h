/* render/paint_cairo.h: the Cairo painters over a layout: PNG (one layout, one image whose
 * width in pixels is the layout's width) and PDF (one page per layout, 1 unit = 1 pt).
 * Files are rendered to memory and written atomically (temp file + rename). The only home
 * of cairo.h in the project (docs/design.md: one home for each third-party header). */
#ifndef MT_RENDER_PAINT_CAIRO_H
#define MT_RENDER_PAINT_CAIRO_H

#include <stdbool.h>
#include <stddef.h>

struct layout;
struct mt_err;

/* Cairo's image surfaces stop at 32767 pixels a side. */
#define PAINT_CAIRO_MAX_PX 32767

/* PNG bytes in memory; caller frees *out. MT_EINVAL when the picture is too large. */
int paint_cairo_png_render(const struct layout *l, unsigned char **out, size_t *len,
                           struct mt_err *e);
int paint_cairo_png(const struct layout *l, const char *path, struct mt_err *e);
/* A PDF with one page per layout, each page the size of its layout. */
int paint_cairo_pdf_render(const struct layout *const *pages, int n, unsigned char **out,
                           size_t *len, struct mt_err *e);
int paint_cairo_pdf(const struct layout *const *pages, int n, const char *path, struct mt_err *e);

struct cells;
/* A screenshot of a terminal cell grid (render/paint_cells.h) as a PNG: each cell as a
 * colour terminal shows it (cells_term: the terminal's own colours from a dark or a light
 * theme), 9 x 18 pixels, DejaVu Sans Mono; block elements and shades drawn as shapes, so the
 * picture is the same wherever it is made. */
#define PAINT_CAIRO_CELL_W 9
#define PAINT_CAIRO_CELL_H 18
int paint_cairo_cells_png(const struct cells *g, bool dark, const char *path, struct mt_err *e);

#endif
