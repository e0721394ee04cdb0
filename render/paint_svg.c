/* render/paint_svg.c: a painter that writes SVG text into a growing buffer. Colours of the
 * instruction boxes come from one <style> block keyed by class (op-FW, bubble, ...), so a
 * box costs one short element; hatching is an overlay rect filled with a <pattern>. Numbers
 * are written with two decimals by a small formatter (64 devices x 512 micro-batches is
 * ~10^5 elements, and snprintf("%.2f") would dominate). */
#include <config.h>
#include "render/paint_svg.h"

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/layout.h"
#include "render/palette.h"
#include "sim/plan/plan.h"
#include "util/err.h"
#include "util/str.h"
#include "util/xalloc.h"

struct paint_svg_buf {
    char *s;
    size_t len, cap;
};

static void paint_svg_reserve(struct paint_svg_buf *b, size_t more)
{
    if (b->len + more + 1 <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 1 << 16;
    while (cap < b->len + more + 1)
        cap *= 2;
    b->s = xreallocarray(b->s, cap, 1);
    b->cap = cap;
}

static void paint_svg_put(struct paint_svg_buf *b, const char *s)
{
    size_t n = strlen(s);
    paint_svg_reserve(b, n);
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = '\0';
}

static void paint_svg_putf(struct paint_svg_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void paint_svg_putf(struct paint_svg_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n <= 0)
        return;
    paint_svg_reserve(b, (size_t)n);
    va_start(ap, fmt);
    vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

/* v with at most two decimals, trailing zeros dropped: 12.5, 3, -0.25. */
static void paint_svg_num(struct paint_svg_buf *b, double v)
{
    char tmp[40];
    if (!isfinite(v))
        v = 0;
    if (fabs(v) >= 1e15) {
        snprintf(tmp, sizeof tmp, "%.0f", v);
        paint_svg_put(b, tmp);
        return;
    }
    long long q = llround(v * 100);
    char *p = tmp + sizeof tmp;
    *--p = '\0';
    bool neg = q < 0;
    unsigned long long u = neg ? (unsigned long long)(-q) : (unsigned long long)q;
    unsigned frac = (unsigned)(u % 100);
    u /= 100;
    if (frac) {
        if (frac % 10) {
            *--p = (char)('0' + frac % 10);
            *--p = (char)('0' + frac / 10);
        } else {
            *--p = (char)('0' + frac / 10);
        }
        *--p = '.';
    }
    do {
        *--p = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (neg)
        *--p = '-';
    paint_svg_put(b, p);
}

static void paint_svg_attr_num(struct paint_svg_buf *b, const char *name, double v)
{
    paint_svg_put(b, name);
    paint_svg_put(b, "=\"");
    paint_svg_num(b, v);
    paint_svg_put(b, "\"");
}

static void paint_svg_attr_int(struct paint_svg_buf *b, const char *name, int v)
{
    char tmp[40];
    snprintf(tmp, sizeof tmp, " %s=\"%d\"", name, v);
    paint_svg_put(b, tmp);
}

/* The length of the UTF-8 sequence at s that XML takes as one character (1 to 4 bytes), or 0:
 * a C0 control other than tab, newline and carriage return, a byte that starts no sequence,
 * a sequence cut short, an overlong form, a surrogate, U+FFFE or U+FFFF. s is NUL-terminated,
 * so the checks of continuation bytes stop at its end. */
static int paint_svg_xml_char(const unsigned char *s)
{
    int n = s[0] < 0x80                    ? 1
            : s[0] >= 0xc2 && s[0] <= 0xdf ? 2
            : s[0] >= 0xe0 && s[0] <= 0xef ? 3
            : s[0] >= 0xf0 && s[0] <= 0xf4 ? 4
                                           : 0;
    if (n == 1 && s[0] < 0x20 && s[0] != '\t' && s[0] != '\n' && s[0] != '\r')
        return 0;
    for (int i = 1; i < n; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    if (n == 3 && ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] >= 0xa0) ||
                   (s[0] == 0xef && s[1] == 0xbf && s[2] >= 0xbe)))
        return 0;
    if (n == 4 && ((s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] >= 0x90)))
        return 0;
    return n;
}

/* Text as XML character data. What XML 1.0 cannot hold at all (not even as &#N;) - C0
 * controls, bytes that are not UTF-8 - becomes U+FFFD, so a chart title holding "\u0004"
 * or a Latin-1 byte still gives a well-formed file. */
static void paint_svg_escape(struct paint_svg_buf *b, const char *s)
{
    while (*s) {
        int n = paint_svg_xml_char((const unsigned char *)s);
        switch (*s) {
        case '&': paint_svg_put(b, "&amp;"); break;
        case '<': paint_svg_put(b, "&lt;"); break;
        case '>': paint_svg_put(b, "&gt;"); break;
        case '"': paint_svg_put(b, "&quot;"); break;
        default: {
            char c[5] = {0};
            memcpy(c, s, n > 0 ? (size_t)n : 0);
            paint_svg_put(b, n > 0 ? c : "\xef\xbf\xbd");
        }
        }
        s += n > 0 ? n : 1;
    }
}

static const char *paint_svg_role_class(enum layout_role r)
{
    switch (r) {
    case LAYOUT_ROLE_DECOR: return "decor";
    case LAYOUT_ROLE_INSTR: return "instr";
    case LAYOUT_ROLE_LABEL: return "label";
    case LAYOUT_ROLE_BUBBLE: return "bubble";
    case LAYOUT_ROLE_COMM: return "comm";
    case LAYOUT_ROLE_GRID: return "grid";
    case LAYOUT_ROLE_AXIS: return "tick";
    case LAYOUT_ROLE_TICK_LABEL: return "tick-label";
    case LAYOUT_ROLE_ROW_LABEL: return "row-label";
    case LAYOUT_ROLE_MEM_STATIC: return "mem-static";
    case LAYOUT_ROLE_MEM_DYN: return "mem-dyn";
    case LAYOUT_ROLE_MEM_OVER: return "mem-over";
    case LAYOUT_ROLE_MEM_CAP: return "mem-cap";
    case LAYOUT_ROLE_MEM_CURVE: return "mem-curve";
    case LAYOUT_ROLE_LEGEND: return "legend";
    case LAYOUT_ROLE_TITLE: return "title";
    case LAYOUT_ROLE_HEADING: return "heading";
    case LAYOUT_ROLE_ITERATION: return "iteration";
    }
    return "x";
}

static void paint_svg_geom(struct paint_svg_buf *b, const struct layout_item *it)
{
    paint_svg_put(b, " ");
    paint_svg_attr_num(b, "x", it->x);
    paint_svg_put(b, " ");
    paint_svg_attr_num(b, "y", it->y);
    paint_svg_put(b, " ");
    paint_svg_attr_num(b, "width", it->w);
    paint_svg_put(b, " ");
    paint_svg_attr_num(b, "height", it->h);
}

static void paint_svg_box(void *ctx, const struct layout_item *it)
{
    struct paint_svg_buf *b = ctx;
    char hex[8];
    if (it->role == LAYOUT_ROLE_INSTR) {
        /* <rect class="op-FW b" data-id="7" data-dev="1" data-mb="3" data-part="0" .../> */
        paint_svg_put(b, "<rect class=\"op-");
        paint_svg_put(b, plan_op_name(it->op));
        if (it->style & LAYOUT_MEASURED)
            paint_svg_put(b, " measured");
        if (it->style & LAYOUT_BORDER)
            paint_svg_put(b, " b");
        paint_svg_put(b, "\"");
        paint_svg_attr_int(b, "data-id", it->id);
        paint_svg_attr_int(b, "data-dev", it->dev);
        paint_svg_attr_int(b, "data-mb", it->mb);
        paint_svg_attr_int(b, "data-part", it->part);
        paint_svg_geom(b, it);
        paint_svg_put(b, "/>\n");
    } else if (it->role == LAYOUT_ROLE_BUBBLE) {
        paint_svg_put(b, "<rect class=\"bubble");
        if (it->style & LAYOUT_MEASURED)
            paint_svg_put(b, " measured");
        paint_svg_put(b, "\"");
        paint_svg_attr_int(b, "data-dev", it->dev);
        paint_svg_geom(b, it);
        paint_svg_put(b, "/>\n");
        return; /* the pattern already is the hatching */
    } else {
        paint_svg_put(b, "<rect class=\"");
        paint_svg_put(b, paint_svg_role_class(it->role));
        paint_svg_put(b, "\"");
        paint_svg_geom(b, it);
        paint_svg_put(b, " fill=\"");
        paint_svg_put(b, palette_hex(it->color, hex));
        paint_svg_put(b, "\"");
        if (it->style & LAYOUT_BORDER)
            paint_svg_put(b, " stroke=\"#ffffff\" stroke-width=\"0.6\"");
        if (it->style & LAYOUT_TRANSLUCENT)
            paint_svg_put(b, " fill-opacity=\"0.55\"");
        paint_svg_put(b, "/>\n");
    }
    if (it->style & LAYOUT_HATCH) {
        paint_svg_put(b, "<rect class=\"hatch\"");
        paint_svg_geom(b, it);
        paint_svg_put(b, "/>\n");
    }
}

static void paint_svg_text(void *ctx, const struct layout_item *it)
{
    struct paint_svg_buf *b = ctx;
    char hex[8];
    paint_svg_put(b, "<text class=\"");
    paint_svg_put(b, paint_svg_role_class(it->role));
    paint_svg_put(b, "\" ");
    paint_svg_attr_num(b, "x", it->x);
    paint_svg_put(b, " ");
    paint_svg_attr_num(b, "y", it->y);
    paint_svg_put(b, " ");
    paint_svg_attr_num(b, "font-size", it->h);
    paint_svg_put(b, " fill=\"");
    paint_svg_put(b, palette_hex(it->color, hex));
    paint_svg_put(b, "\"");
    if (it->anchor == LAYOUT_MIDDLE)
        paint_svg_put(b, " text-anchor=\"middle\"");
    else if (it->anchor == LAYOUT_END)
        paint_svg_put(b, " text-anchor=\"end\"");
    if (it->style & LAYOUT_BOLD)
        paint_svg_put(b, " font-weight=\"bold\"");
    if (it->role == LAYOUT_ROLE_LABEL)
        paint_svg_attr_int(b, "data-id", it->id);
    paint_svg_put(b, ">");
    paint_svg_escape(b, it->text);
    paint_svg_put(b, "</text>\n");
}

static void paint_svg_line(void *ctx, const struct layout_item *it)
{
    struct paint_svg_buf *b = ctx;
    char hex[8];
    paint_svg_put(b, "<line class=\"");
    paint_svg_put(b, paint_svg_role_class(it->role));
    paint_svg_put(b, "\"");
    if (it->role == LAYOUT_ROLE_AXIS && it->w == 0)
        paint_svg_putf(b, " data-t=\"%.9g\"", it->t0);
    if (it->role == LAYOUT_ROLE_COMM)
        paint_svg_attr_int(b, "data-id", it->id);
    paint_svg_put(b, " ");
    paint_svg_attr_num(b, "x1", it->x);
    paint_svg_put(b, " ");
    paint_svg_attr_num(b, "y1", it->y);
    paint_svg_put(b, " ");
    paint_svg_attr_num(b, "x2", it->x + it->w);
    paint_svg_put(b, " ");
    paint_svg_attr_num(b, "y2", it->y + it->h);
    paint_svg_put(b, " stroke=\"");
    paint_svg_put(b, palette_hex(it->color, hex));
    paint_svg_put(b, "\" ");
    paint_svg_attr_num(b, "stroke-width", it->lw);
    if (it->style & LAYOUT_DASHED)
        paint_svg_put(b, " stroke-dasharray=\"4 3\"");
    paint_svg_put(b, "/>\n");
}

static void paint_svg_path(void *ctx, const struct layout_item *it)
{
    struct paint_svg_buf *b = ctx;
    char hex[8];
    if (it->n < 2)
        return;
    paint_svg_put(b, "<path class=\"");
    paint_svg_put(b, paint_svg_role_class(it->role));
    paint_svg_put(b, "\"");
    if (it->dev >= 0)
        paint_svg_attr_int(b, "data-dev", it->dev);
    paint_svg_put(b, " d=\"");
    for (int i = 0; i < it->n; i++) {
        paint_svg_put(b, i == 0 ? "M" : " L");
        paint_svg_num(b, it->px[i]);
        paint_svg_put(b, " ");
        paint_svg_num(b, it->py[i]);
    }
    bool filled = !(it->lw > 0);
    paint_svg_put(b, filled ? " Z\" fill=\"" : "\" fill=\"none\" stroke=\"");
    paint_svg_put(b, palette_hex(it->color, hex));
    paint_svg_put(b, "\"");
    if (!filled) {
        paint_svg_put(b, " ");
        paint_svg_attr_num(b, "stroke-width", it->lw);
    }
    if (it->style & LAYOUT_TRANSLUCENT)
        paint_svg_put(b, " fill-opacity=\"0.55\"");
    paint_svg_put(b, "/>\n");
}

static void paint_svg_header(struct paint_svg_buf *b, const struct layout *l)
{
    char hex[8];
    paint_svg_put(b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                     "<svg xmlns=\"http://www.w3.org/2000/svg\" ");
    paint_svg_attr_num(b, "width", layout_width(l));
    paint_svg_put(b, " ");
    paint_svg_attr_num(b, "height", layout_height(l));
    paint_svg_put(b, " viewBox=\"0 0 ");
    paint_svg_num(b, layout_width(l));
    paint_svg_put(b, " ");
    paint_svg_num(b, layout_height(l));
    paint_svg_put(b, "\" font-family=\"DejaVu Sans, Verdana, Arial, sans-serif\">\n<defs>\n");
    paint_svg_putf(b,
                   "<pattern id=\"hatch\" width=\"5\" height=\"5\" patternUnits=\"userSpaceOnUse\" "
                   "patternTransform=\"rotate(45)\"><rect width=\"1.8\" height=\"5\" "
                   "fill=\"#ffffff\" fill-opacity=\"0.6\"/></pattern>\n");
    paint_svg_putf(b,
                   "<pattern id=\"idle\" width=\"5\" height=\"5\" patternUnits=\"userSpaceOnUse\" "
                   "patternTransform=\"rotate(45)\"><rect width=\"5\" height=\"5\" fill=\"%s\"/>",
                   palette_hex(PAL_BUBBLE, hex));
    paint_svg_put(
        b, "<rect width=\"1\" height=\"5\" fill=\"#c0c0c0\"/></pattern>\n</defs>\n<style>\n");
    /* the copies' classes only where a plan offloads (the others' pictures stay as they were) */
    bool copies = false;
    for (int i = 0; i < layout_count(l) && !copies; i++)
        copies = layout_items(l)[i].kind == LAYOUT_BOX && plan_op_is_copy(layout_items(l)[i].op);
    for (int op = 0; op < OP__COUNT; op++)
        if (!plan_op_is_copy((enum op)op) || copies)
            paint_svg_putf(b, ".op-%s{fill:%s}\n", plan_op_name((enum op)op),
                           palette_hex(palette_of_op((enum op)op), hex));
    paint_svg_put(b, ".b{stroke:#ffffff;stroke-width:0.6}\n"
                     ".hatch{fill:url(#hatch)}\n"
                     ".bubble{fill:url(#idle)}\n"
                     "</style>\n");
}

void paint_svg_render(const struct layout *l, char **out, size_t *len)
{
    struct paint_svg_buf b = {0};
    paint_svg_reserve(&b, (size_t)layout_count(l) * 96);
    paint_svg_header(&b, l);
    struct painter pt = {&b, paint_svg_box, paint_svg_text, paint_svg_line, paint_svg_path};
    layout_paint(l, &pt);
    paint_svg_put(&b, "</svg>\n");
    *out = b.s;
    *len = b.len;
}

int paint_svg_file(const struct layout *l, const char *path, struct mt_err *e)
{
    char *s;
    size_t len;
    paint_svg_render(l, &s, &len);
    int rc = str_write_file_atomic(path, s, len, e);
    free(s);
    return rc;
}
